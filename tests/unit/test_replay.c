/* npu-replay's library: the logits conversion against the scalar one and the exact bf16 value
 * for every bit pattern, bf16 rounding by hand, backend loading errors, and the CPU backend's
 * lanes, truncation and context limit on a tiny model (values checked against each other). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cunit_main.h"
#include "golden/dtype.h"
#include "golden/replay.h"

static void test_logits_every_pattern(void)
{
    uint16_t *src = malloc(65536 * 2);
    float *a = malloc(65536 * 4), *b = malloc(65536 * 4);
    CU_ASSERT_PTR_NOT_NULL_FATAL(src);
    for (unsigned i = 0; i < 65536; i++)
        src[i] = (uint16_t)i;
    golden_logits_bf16_to_f32(src, 0, 65536, a);
    golden_logits_bf16_to_f32_scalar(src, 0, 65536, b);
    CU_ASSERT_EQUAL(memcmp(a, b, 65536 * 4), 0);
    int wrong = 0;
    for (unsigned i = 0; i < 65536; i++) {
        double want = golden_bf16_to_f64((uint16_t)i);
        if (isnan(want) ? !isnan(a[i]) : (double)a[i] != want || !signbit(a[i]) != !signbit(want))
            wrong++;
    }
    CU_ASSERT_EQUAL(wrong, 0);
    free(src);
    free(a);
    free(b);
}

/* Only [first, first+count) is read and only dst[0..count) written, for every tail length. */
static void test_logits_range(void)
{
    uint16_t row[300];
    float dst[64];
    for (int i = 0; i < 300; i++)
        row[i] = (uint16_t)(0x3f80 + i);
    for (size_t first = 0; first < 20; first += 7)
        for (size_t count = 0; count <= 40; count++) {
            for (int i = 0; i < 64; i++)
                dst[i] = -7.0f;
            golden_logits_bf16_to_f32(row, first, count, dst);
            int bad = 0;
            for (size_t i = 0; i < count; i++)
                bad += dst[i] != (float)golden_bf16_to_f64(row[first + i]);
            for (size_t i = count; i < 64; i++)
                bad += dst[i] != -7.0f;
            CU_ASSERT_EQUAL(bad, 0);
        }
}

static float f(uint32_t u)
{
    float x;
    memcpy(&x, &u, 4);
    return x;
}

static void test_bf16_rounding(void)
{
    CU_ASSERT_EQUAL(golden_f32_to_bf16(1.0f), 0x3f80);
    CU_ASSERT_EQUAL(golden_f32_to_bf16(f(0x3f808000)), 0x3f80); /* tie, even stays */
    CU_ASSERT_EQUAL(golden_f32_to_bf16(f(0x3f818000)), 0x3f82); /* tie, odd goes up */
    CU_ASSERT_EQUAL(golden_f32_to_bf16(f(0x3f808001)), 0x3f81); /* just above the tie */
    CU_ASSERT_EQUAL(golden_f32_to_bf16(-2.0f), 0xc000);
    CU_ASSERT_EQUAL(golden_f32_to_bf16(f(0x7f7fffff)), 0x7f80); /* max float rounds to inf */
    CU_ASSERT_EQUAL(golden_f32_to_bf16(INFINITY), 0x7f80);
    uint16_t n = golden_f32_to_bf16(f(0x7f800001)); /* signalling NaN stays NaN */
    CU_ASSERT((n & 0x7f80) == 0x7f80 && (n & 0x7f) != 0);
}

static char model_dir[256];

static void make_tiny(void)
{
    if (model_dir[0])
        return;
    snprintf(model_dir, sizeof model_dir, "/tmp/test-replay-%ld/m", (long)getpid());
    char parent[256];
    snprintf(parent, sizeof parent, "/tmp/test-replay-%ld", (long)getpid());
    mkdir(parent, 0777);
    golden_make_model_opts o = {1, "tiny", 0, 5, "bf16", 0, model_dir, false, 0, NULL};
    golden_error err;
    CU_ASSERT_EQUAL(golden_make_model(&o, &err), 0);
}

static golden_backend *open_cpu(int threads, const char *opt)
{
    make_tiny();
    const char *opts[1] = {opt};
    golden_backend_load_opts lo = {1, "cpu", model_dir, opt ? 1 : 0, opts, threads, NULL};
    golden_backend *b = NULL;
    golden_error err;
    CU_ASSERT_EQUAL(golden_backend_load(&lo, &b, &err), 0);
    return b;
}

static void test_load_errors(void)
{
    golden_error err;
    golden_backend *b = NULL;
    golden_backend_load_opts lo = {1, "/nonexistent/backend.so", NULL, 0, NULL, 1, NULL};
    CU_ASSERT_EQUAL(golden_backend_load(&lo, &b, &err), GOLDEN_ERR);
    CU_ASSERT_EQUAL(err.code, GOLDEN_ENOTFOUND);
    CU_ASSERT_PTR_NULL(b);
    make_tiny();
    const char *bad[1] = {"dtype"};
    golden_backend_load_opts lo2 = {1, "cpu", model_dir, 1, bad, 1, NULL};
    CU_ASSERT_EQUAL(golden_backend_load(&lo2, &b, &err), GOLDEN_ERR);
    CU_ASSERT_EQUAL(err.code, GOLDEN_EINVAL);
    golden_backend_load_opts lo3 = {1, "cpu", NULL, 0, NULL, 1, NULL};
    CU_ASSERT_EQUAL(golden_backend_load(&lo3, &b, &err), GOLDEN_ERR);
}

/* Truncating a lane and re-feeding the same tokens gives the same logits; lanes are
 * independent; one worker and two give the same bits. */
static void test_lanes_truncate_threads(void)
{
    golden_backend *b = open_cpu(2, NULL), *b1 = open_cpu(1, NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(b);
    CU_ASSERT_PTR_NOT_NULL_FATAL(b1);
    const golden_backend_info *in = golden_backend_get_info(b);
    CU_ASSERT_EQUAL(in->vocab_size, 512);
    CU_ASSERT_EQUAL(in->logits_dtype, GOLDEN_BK_F32);
    int V = in->vocab_size;
    float *x = malloc((size_t)V * 4), *y = malloc((size_t)V * 4), *z = malloc((size_t)V * 4);
    int32_t toks[6] = {3, 100, 7, 7, 200, 511}, other[3] = {1, 2, 3};
    golden_error err;
    CU_ASSERT_EQUAL(golden_backend_prefill(b, 0, 0, toks, 6, &err), 0);
    CU_ASSERT_EQUAL(golden_backend_logits(b, 0, 0, V, x, &err), 0);
    CU_ASSERT_EQUAL(golden_backend_length(b, 0), 6);
    CU_ASSERT_EQUAL(golden_backend_prefill(b, 1, 0, other, 3, &err), 0); /* another lane */
    CU_ASSERT_EQUAL(golden_backend_truncate(b, 0, 3, &err), 0);
    CU_ASSERT_EQUAL(golden_backend_logits(b, 0, 0, V, y, &err), GOLDEN_ERR); /* none now */
    CU_ASSERT_EQUAL(golden_backend_prefill(b, 0, 3, toks + 3, 2, &err), 0);
    CU_ASSERT_EQUAL(golden_backend_decode(b, 0, toks[5], &err), 0);
    CU_ASSERT_EQUAL(golden_backend_logits(b, 0, 0, V, y, &err), 0);
    CU_ASSERT_EQUAL(memcmp(x, y, (size_t)V * 4), 0);
    CU_ASSERT_EQUAL(golden_backend_prefill(b1, 0, 0, toks, 6, &err), 0);
    CU_ASSERT_EQUAL(golden_backend_logits(b1, 0, 0, V, z, &err), 0);
    CU_ASSERT_EQUAL(memcmp(x, z, (size_t)V * 4), 0);
    /* a sub-range is the same entries */
    CU_ASSERT_EQUAL(golden_backend_logits(b1, 0, 100, 50, z, &err), 0);
    CU_ASSERT_EQUAL(memcmp(x + 100, z, 50 * 4), 0);
    CU_ASSERT_EQUAL(golden_backend_logits(b1, 0, 500, 50, z, &err), GOLDEN_ERR);
    CU_ASSERT_EQUAL(golden_backend_prefill(b, 0, 9, toks, 1, &err), GOLDEN_ERR); /* gap */
    CU_ASSERT_EQUAL(golden_backend_prefill(b, 7, 0, toks, 1, &err), GOLDEN_ERR); /* no lane */
    int32_t bad = 512;
    CU_ASSERT_EQUAL(golden_backend_prefill(b, 0, 0, &bad, 1, &err), GOLDEN_ERR);
    CU_ASSERT_EQUAL(golden_backend_reset(b, -1, &err), 0);
    CU_ASSERT_EQUAL(golden_backend_length(b, 1), 0);
    free(x);
    free(y);
    free(z);
    golden_backend_close(b);
    golden_backend_close(b1);
}

static void test_context_limit(void)
{
    golden_backend *b = open_cpu(1, "lanes=1");
    CU_ASSERT_PTR_NOT_NULL_FATAL(b);
    const golden_backend_info *in = golden_backend_get_info(b);
    CU_ASSERT_EQUAL(in->num_lanes, 1);
    size_t n = (size_t)in->context_limit + 1;
    int32_t *t = calloc(n, sizeof *t);
    golden_error err;
    CU_ASSERT_EQUAL(golden_backend_prefill(b, 0, 0, t, n, &err), GOLDEN_ERR);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.what, "context_limit_exceeded"));
    CU_ASSERT_EQUAL(golden_backend_prefill(b, 0, 0, t, n - 1, &err), 0); /* exactly full */
    CU_ASSERT_EQUAL(golden_backend_decode(b, 0, 1, &err), GOLDEN_ERR);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.what, "context_limit_exceeded"));
    free(t);
    golden_backend_close(b);
}

/* dtype=bf16: logits come as bf16 bits whose f32 values are the f32 backend's to a few bf16 ULP. */
static void test_bf16_mode(void)
{
    golden_backend *a = open_cpu(1, NULL), *b = open_cpu(1, "dtype=bf16");
    CU_ASSERT_PTR_NOT_NULL_FATAL(b);
    CU_ASSERT_EQUAL(golden_backend_get_info(b)->logits_dtype, GOLDEN_BK_BF16);
    int32_t toks[4] = {9, 8, 7, 6};
    golden_error err;
    float x[512], y[512];
    uint16_t r[512];
    CU_ASSERT_EQUAL(golden_backend_prefill(a, 0, 0, toks, 4, &err), 0);
    CU_ASSERT_EQUAL(golden_backend_prefill(b, 0, 0, toks, 4, &err), 0);
    CU_ASSERT_EQUAL(golden_backend_logits(a, 0, 0, 512, x, &err), 0);
    CU_ASSERT_EQUAL(golden_backend_logits(b, 0, 0, 512, r, &err), 0);
    golden_logits_bf16_to_f32(r, 0, 512, y);
    double mx = 0, d = 0;
    for (int i = 0; i < 512; i++) {
        mx = fmax(mx, fabs(x[i]));
        d = fmax(d, fabs(x[i] - y[i]));
    }
    CU_ASSERT(d > 0);
    CU_ASSERT(d < 0.1 * mx);
    golden_backend_close(a);
    golden_backend_close(b);
}

/* A prompt in chunks of 7 positions gives the bits of one 40-position batch. */
static void test_chunked_prefill(void)
{
    golden_backend *a = open_cpu(2, NULL), *b = open_cpu(2, "chunk=7");
    CU_ASSERT_PTR_NOT_NULL_FATAL(b);
    int32_t toks[40];
    for (int i = 0; i < 40; i++)
        toks[i] = (i * 37 + 11) % 512;
    golden_error err;
    float x[512], y[512];
    CU_ASSERT_EQUAL(golden_backend_prefill(a, 0, 0, toks, 40, &err), 0);
    CU_ASSERT_EQUAL(golden_backend_prefill(b, 0, 0, toks, 40, &err), 0);
    CU_ASSERT_EQUAL(golden_backend_length(b, 0), 40);
    CU_ASSERT_EQUAL(golden_backend_logits(a, 0, 0, 512, x, &err), 0);
    CU_ASSERT_EQUAL(golden_backend_logits(b, 0, 0, 512, y, &err), 0);
    CU_ASSERT_EQUAL(memcmp(x, y, sizeof x), 0);
    golden_backend_close(a);
    golden_backend_close(b);
}

static void test_cleanup(void)
{
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf /tmp/test-replay-%ld", (long)getpid());
    CU_ASSERT_EQUAL(system(cmd), 0);
}

int main(void)
{
    static const golden_test tests[] = {
        {"logits conversion: every bf16 pattern", test_logits_every_pattern},
        {"logits conversion: ranges and tails", test_logits_range},
        {"f32 to bf16 rounding", test_bf16_rounding},
        {"backend load errors", test_load_errors},
        {"lanes, truncate, threads", test_lanes_truncate_threads},
        {"context limit", test_context_limit},
        {"dtype=bf16", test_bf16_mode},
        {"chunked prefill", test_chunked_prefill},
        {"cleanup", test_cleanup},
        {0, 0}};
    return golden_test_run("replay", tests);
}
