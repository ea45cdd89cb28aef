/* Backend ABI version 2: decode at the harness's count, kept prefill logits (against a prefill
 * that ends there), the top-k output mode (against a second, plain selection), error codes, in
 * this process and through the backend host; a version 1 plug-in still loads and works; the
 * top-k coverage rule on rows worked out by hand. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cunit_main.h"
#include "golden/replay.h"

static char model_dir[256], exe_dir[4096];

static void setup(void)
{
    if (model_dir[0])
        return;
    char parent[128];
    snprintf(parent, sizeof parent, "/tmp/test-abi2-%ld", (long)getpid());
    mkdir(parent, 0777);
    snprintf(model_dir, sizeof model_dir, "%s/m", parent);
    golden_make_model_opts o = {1, "tiny", 0, 5, "bf16", 0, model_dir, false, 0, NULL};
    golden_error err;
    CU_ASSERT_EQUAL(golden_make_model(&o, &err), 0);
    ssize_t n = readlink("/proc/self/exe", exe_dir, sizeof exe_dir - 1);
    CU_ASSERT_FATAL(n > 0);
    exe_dir[n] = 0;
    char *slash = strrchr(exe_dir, '/'); /* BUILD/tests */
    CU_ASSERT_PTR_NOT_NULL_FATAL(slash);
    *slash = 0;
}

static golden_backend_isolation iso_of(char *host, size_t n)
{
    snprintf(host, n, "%s/../bin/npu-replay", exe_dir);
    golden_backend_isolation iso = {host, 30, 0, NULL, NULL};
    return iso;
}

/* The cpu backend, in this process (isolated = 0) or in a backend host. */
static golden_backend *open_cpu(int isolated, const char *opt)
{
    setup();
    static char host[4200];
    static golden_backend_isolation iso;
    iso = iso_of(host, sizeof host);
    const char *opts[1] = {opt};
    golden_backend_load_opts lo = {2, "cpu", model_dir, opt ? 1 : 0, opts, 1,
                                   isolated ? &iso : NULL};
    golden_backend *b = NULL;
    golden_error err;
    int rc = golden_backend_load(&lo, &b, &err);
    CU_ASSERT_EQUAL(rc, 0);
    if (rc)
        fprintf(stderr, "load: %s: %s\n", err.where, err.what);
    return b;
}

static void decode_at_case(int isolated)
{
    golden_backend *b = open_cpu(isolated, NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(b);
    CU_ASSERT_EQUAL(golden_backend_abi(b), 2);
    CU_ASSERT_EQUAL(golden_backend_flags(b), 0);
    int32_t toks[5] = {3, 100, 7, 7, 200};
    golden_error err;
    float x[512], y[512];
    CU_ASSERT_EQUAL(golden_backend_prefill(b, 0, 0, toks, 4, &err), 0);
    CU_ASSERT_EQUAL(golden_backend_decode_at(b, 0, 3, toks[4], &err), GOLDEN_ERR); /* not 4 */
    CU_ASSERT_EQUAL(golden_backend_last_code(b), GOLDEN_BK_E_INVALID);
    CU_ASSERT_EQUAL(golden_backend_length(b, 0), 4); /* refused: the lane as it was */
    CU_ASSERT_EQUAL(golden_backend_decode_at(b, 0, 4, toks[4], &err), 0);
    CU_ASSERT_EQUAL(golden_backend_last_code(b), 0);
    CU_ASSERT_EQUAL(golden_backend_logits(b, 0, 0, 512, x, &err), 0);
    CU_ASSERT_EQUAL(golden_backend_prefill(b, 1, 0, toks, 5, &err), 0); /* the same, one call */
    CU_ASSERT_EQUAL(golden_backend_logits(b, 1, 0, 512, y, &err), 0);
    CU_ASSERT_EQUAL(memcmp(x, y, sizeof x), 0);
    CU_ASSERT_EQUAL(golden_backend_decode_at(b, 9, 0, 1, &err), GOLDEN_ERR); /* no lane 9 */
    CU_ASSERT_EQUAL(golden_backend_last_code(b), GOLDEN_BK_E_INVALID);
    golden_backend_close(b);
}

static void test_decode_at(void) { decode_at_case(0); }
static void test_decode_at_host(void) { decode_at_case(1); }

/* Codes, not words: the limit, a planted device loss and timeout. A decode the backend says
 * succeeded but that wrote nothing (fault decode_past_limit_dropped) is caught by the count. */
static void codes_case(int isolated)
{
    golden_backend *b = open_cpu(isolated, "lanes=1");
    CU_ASSERT_PTR_NOT_NULL_FATAL(b);
    size_t n = (size_t)golden_backend_get_info(b)->context_limit;
    int32_t *t = calloc(n + 1, sizeof *t);
    golden_error err;
    CU_ASSERT_EQUAL(golden_backend_prefill(b, 0, 0, t, n + 1, &err), GOLDEN_ERR);
    CU_ASSERT_EQUAL(golden_backend_last_code(b), GOLDEN_BK_E_CONTEXT_LIMIT);
    CU_ASSERT_EQUAL(err.code, GOLDEN_EUNSUPPORTED);
    CU_ASSERT_EQUAL(golden_backend_prefill(b, 0, 0, t, n, &err), 0);
    CU_ASSERT_EQUAL(golden_backend_decode_at(b, 0, (int64_t)n, 1, &err), GOLDEN_ERR);
    CU_ASSERT_EQUAL(golden_backend_last_code(b), GOLDEN_BK_E_CONTEXT_LIMIT);
    golden_backend_close(b);
    b = open_cpu(isolated, "inject=decode_past_limit_dropped");
    CU_ASSERT_PTR_NOT_NULL_FATAL(b);
    CU_ASSERT_EQUAL(golden_backend_prefill(b, 0, 0, t, n, &err), 0);
    CU_ASSERT_EQUAL(golden_backend_decode_at(b, 0, (int64_t)n, 1, &err), GOLDEN_ERR);
    CU_ASSERT_EQUAL(err.code, GOLDEN_ECORRUPT);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.what, "decode wrote position"));
    golden_backend_close(b);
    b = open_cpu(isolated, "inject=device_lost@2");
    CU_ASSERT_PTR_NOT_NULL_FATAL(b);
    CU_ASSERT_EQUAL(golden_backend_prefill(b, 0, 0, t, 3, &err), 0);
    CU_ASSERT_EQUAL(golden_backend_decode_at(b, 0, 3, 1, &err), GOLDEN_ERR);
    CU_ASSERT_EQUAL(golden_backend_last_code(b), GOLDEN_BK_E_DEVICE_LOST);
    golden_backend_close(b);
    b = open_cpu(isolated, "inject=timeout@1");
    CU_ASSERT_PTR_NOT_NULL_FATAL(b);
    CU_ASSERT_EQUAL(golden_backend_prefill(b, 0, 0, t, 3, &err), GOLDEN_ERR);
    CU_ASSERT_EQUAL(golden_backend_last_code(b), GOLDEN_BK_E_TIMEOUT);
    golden_backend_close(b);
    free(t);
}

static void test_codes(void) { codes_case(0); }
static void test_codes_host(void) { codes_case(1); }

/* Kept positions of a chunked prefill give the bits a prefill ending there gives. */
static void keep_case(int isolated)
{
    golden_backend *b = open_cpu(isolated, "chunk=7");
    CU_ASSERT_PTR_NOT_NULL_FATAL(b);
    int32_t toks[40];
    for (int i = 0; i < 40; i++)
        toks[i] = (i * 37 + 11) % 512;
    int64_t keep[4] = {17, 0, 39, 5};
    golden_error err;
    float x[512], y[512];
    CU_ASSERT_EQUAL(golden_backend_prefill_keep(b, 0, 0, toks, 40, keep, 4, &err), 0);
    for (int j = 0; j < 4; j++) {
        CU_ASSERT_EQUAL(golden_backend_logits_at(b, 0, keep[j], 0, 512, x, &err), 0);
        CU_ASSERT_EQUAL(golden_backend_prefill(b, 1, 0, toks, (size_t)keep[j] + 1, &err), 0);
        CU_ASSERT_EQUAL(golden_backend_logits(b, 1, 0, 512, y, &err), 0);
        CU_ASSERT_EQUAL(memcmp(x, y, sizeof x), 0);
    }
    CU_ASSERT_EQUAL(golden_backend_logits_at(b, 0, 6, 0, 512, x, &err), GOLDEN_ERR); /* not kept */
    CU_ASSERT_EQUAL(golden_backend_last_code(b), GOLDEN_BK_E_INVALID);
    int64_t outside = 40;
    CU_ASSERT_EQUAL(golden_backend_prefill_keep(b, 0, 0, toks, 40, &outside, 1, &err), GOLDEN_ERR);
    CU_ASSERT_EQUAL(golden_backend_decode_at(b, 0, 40, 5, &err), 0);
    CU_ASSERT_EQUAL(golden_backend_logits_at(b, 0, 5, 0, 512, x, &err), GOLDEN_ERR); /* gone */
    golden_backend_close(b);
}

static void test_keep(void) { keep_case(0); }
static void test_keep_host(void) { keep_case(1); }

/* The k largest by a second, plain selection: repeatedly the largest not yet taken, the lower
 * index among equals. */
static void select_topk(const float *row, int V, int k, float *v, int32_t *ix)
{
    char *taken = calloc((size_t)V, 1);
    for (int j = 0; j < k; j++) {
        int best = -1;
        for (int i = 0; i < V; i++)
            if (!taken[i] && (best < 0 || row[i] > row[best]))
                best = i;
        taken[best] = 1;
        v[j] = row[best];
        ix[j] = best;
    }
    free(taken);
}

static void topk_case(int isolated, const char *opt)
{
    golden_backend *b = open_cpu(isolated, opt);
    CU_ASSERT_PTR_NOT_NULL_FATAL(b);
    bool bf16 = golden_backend_get_info(b)->logits_dtype == GOLDEN_BK_BF16;
    int32_t toks[6] = {9, 8, 7, 6, 5, 4};
    golden_error err;
    float row[512], v[64], w[64];
    uint16_t raw[512];
    int32_t ix[64], jx[64];
    CU_ASSERT_EQUAL(golden_backend_prefill(b, 2, 0, toks, 6, &err), 0);
    CU_ASSERT_EQUAL(golden_backend_logits(b, 2, 0, 512, bf16 ? (void *)raw : (void *)row, &err), 0);
    if (bf16)
        golden_logits_bf16_to_f32(raw, 0, 512, row);
    const int ks[3] = {1, 10, 64};
    for (int t = 0; t < 3; t++) {
        int k = ks[t];
        CU_ASSERT_EQUAL(golden_backend_topk(b, 2, k, v, ix, &err), 0);
        select_topk(row, 512, k, w, jx);
        CU_ASSERT_EQUAL(memcmp(v, w, (size_t)k * 4), 0);
        CU_ASSERT_EQUAL(memcmp(ix, jx, (size_t)k * 4), 0);
    }
    CU_ASSERT_EQUAL(golden_backend_topk(b, 2, 0, v, ix, &err), GOLDEN_ERR);
    CU_ASSERT_EQUAL(golden_backend_topk(b, 2, 513, v, ix, &err), GOLDEN_ERR);
    CU_ASSERT_EQUAL(golden_backend_topk(b, 3, 4, v, ix, &err), GOLDEN_ERR); /* no logits */
    CU_ASSERT_EQUAL(golden_backend_last_code(b), GOLDEN_BK_E_INVALID);
    golden_backend_close(b);
}

static void test_topk(void)
{
    topk_case(0, NULL);
    topk_case(0, "dtype=bf16");
}
static void test_topk_host(void) { topk_case(1, "dtype=bf16"); }

/* The version 1 test plug-in: loads as version 1, works, its refusal read from its message,
 * the version 2 calls refused as such (never made), in this process and in a host. */
static void v1_case(int isolated)
{
    setup();
    char so[4200], host[4200];
    snprintf(so, sizeof so, "%s/lib/test-backend.so", exe_dir);
    golden_backend_isolation iso = iso_of(host, sizeof host);
    golden_backend_load_opts lo = {2, so, NULL, 0, NULL, 1, isolated ? &iso : NULL};
    golden_backend *b = NULL;
    golden_error err;
    CU_ASSERT_EQUAL_FATAL(golden_backend_load(&lo, &b, &err), 0);
    CU_ASSERT_EQUAL(golden_backend_abi(b), 1);
    CU_ASSERT_EQUAL(golden_backend_flags(b), 0);
    int32_t toks[3] = {1, 2, 3};
    float row[64], v[4];
    int32_t ix[4];
    int64_t keep = 0;
    CU_ASSERT_EQUAL(golden_backend_prefill(b, 0, 0, toks, 3, &err), 0);
    CU_ASSERT_EQUAL(golden_backend_decode_at(b, 0, 3, 9, &err), 0);
    CU_ASSERT_EQUAL(golden_backend_logits(b, 0, 0, 64, row, &err), 0);
    /* the counting model: the greedy token after token 9 at position 3 is 7*9+3+3 = 69 mod 64 */
    int best = 0;
    for (int i = 1; i < 64; i++)
        best = row[i] > row[best] ? i : best;
    CU_ASSERT_EQUAL(best, 5);
    CU_ASSERT_EQUAL(golden_backend_topk(b, 0, 4, v, ix, &err), GOLDEN_ERR);
    CU_ASSERT_EQUAL(err.code, GOLDEN_EUNSUPPORTED);
    CU_ASSERT_EQUAL(golden_backend_prefill_keep(b, 0, 0, toks, 1, &keep, 1, &err), GOLDEN_ERR);
    CU_ASSERT_EQUAL(err.code, GOLDEN_EUNSUPPORTED);
    int32_t many[49] = {0};
    CU_ASSERT_EQUAL(golden_backend_prefill(b, 1, 0, many, 49, &err), GOLDEN_ERR);
    CU_ASSERT_EQUAL(golden_backend_last_code(b), GOLDEN_BK_E_CONTEXT_LIMIT);
    golden_backend_close(b);
}

static void test_v1_plugin(void) { v1_case(0); }
static void test_v1_plugin_host(void) { v1_case(1); }

/* ---- coverage, by hand ---- */

static int covers(const golden_sampling *s, int vocab, const float *v, const int32_t *ix, int k,
                  const char *want)
{
    char why[300];
    int rc = golden_topk_covers(s, vocab, v, ix, k, why, sizeof why);
    if (want && !strstr(why, want)) {
        fprintf(stderr, "coverage: wanted '%s' in '%s'\n", want, why);
        return 99;
    }
    return rc;
}

static void test_coverage(void)
{
    golden_sampling g = GOLDEN_SAMPLING_INIT;
    const float v1[1] = {5};
    const int32_t i1[1] = {3};
    CU_ASSERT_EQUAL(covers(&g, 10, v1, i1, 1, NULL), 1); /* greedy: the first is the argmax */
    g.logprobs = 5;
    CU_ASSERT_EQUAL(covers(&g, 10, v1, i1, 1, "5 logprobs"), 0);
    /* T = 1, top_p 0.9, k = 2 of 4: {10, 0}; the outside two at most e^-10 each: mass of the
     * first >= 1 / (1 + 3 e^-10) = 0.99986 */
    golden_sampling s = GOLDEN_SAMPLING_INIT;
    s.temperature = 1;
    s.top_p = 0.9;
    const float v2[2] = {10, 0};
    const int32_t i2[2] = {0, 1};
    CU_ASSERT_EQUAL(covers(&s, 4, v2, i2, 2, NULL), 1);
    /* {1, 0} of 1000: 998 outside tokens may each be at 0: the first two hold >= 0.0037 of the
     * mass, far from 0.9 */
    const float v3[2] = {1, 0};
    CU_ASSERT_EQUAL(covers(&s, 1000, v3, i2, 2, "top_p"), 0);
    s.top_k = 2; /* the sampler never goes past 2: covered */
    CU_ASSERT_EQUAL(covers(&s, 1000, v3, i2, 2, NULL), 1);
    s.top_k = 3;
    s.top_p = 1;
    CU_ASSERT_EQUAL(covers(&s, 1000, v3, i2, 2, "top_k"), 0);
    /* repetition 1.5 on the top token 7: 3 / 1.5 = 2 ties token 4 at 2; token 4 has the lower
     * index, so greedy still knows its choice (4), and no outside token (<= 2, index > 4) beats
     * it */
    golden_sampling r = GOLDEN_SAMPLING_INIT;
    const float v4[2] = {3, 2};
    const int32_t i4[2] = {7, 4}, pen[1] = {7};
    r.repetition_penalty = 1.5;
    r.n_penalised = 1;
    r.penalised = pen;
    CU_ASSERT_EQUAL(covers(&r, 10, v4, i4, 2, NULL), 1);
    /* T = 1, top_p 0.5: 8 outside tokens may sit at 2: mass of token 4 >= 1 / 9.37 = 0.107 */
    r.repetition_penalty = 3;
    r.temperature = 1;
    r.top_p = 0.5;
    CU_ASSERT_EQUAL(covers(&r, 10, v4, i4, 2, "top_p"), 0);
    /* a penalty that raises: the penalised token 9 is outside the k */
    golden_sampling p = GOLDEN_SAMPLING_INIT;
    const int32_t pen9[1] = {9};
    p.presence_penalty = -1;
    p.n_penalised = 1;
    p.penalised = pen9;
    CU_ASSERT_EQUAL(covers(&p, 10, v4, i4, 2, "penalised token 9"), 0);
    /* min_p 0.5 at T = 1 keeps values >= 5 + ln 0.5 = 4.307: {5, 4.9} of {5, 4.9, 1}, and no
     * outside token (<= 1) */
    golden_sampling m = GOLDEN_SAMPLING_INIT;
    m.temperature = 1;
    m.min_p = 0.5;
    const float v5[3] = {5, 4.9f, 1}, v6[3] = {5, 4.9f, 4.5f};
    const int32_t i5[3] = {0, 1, 2};
    CU_ASSERT_EQUAL(covers(&m, 100, v5, i5, 3, NULL), 1);
    CU_ASSERT_EQUAL(covers(&m, 100, v6, i5, 3, "k 3 does not cover the settings"), 0); /* 4.5 >= 4.307 */
    m.top_p = 0; /* out of range */
    CU_ASSERT_EQUAL(covers(&m, 100, v5, i5, 3, "top_p in (0, 1]"), -1);
}

static void test_cleanup(void)
{
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf /tmp/test-abi2-%ld", (long)getpid());
    CU_ASSERT_EQUAL(system(cmd), 0);
}

int main(void)
{
    static const golden_test tests[] = {
        {"decode at the harness's count", test_decode_at},
        {"decode at the harness's count, in a host", test_decode_at_host},
        {"error codes", test_codes},
        {"error codes, in a host", test_codes_host},
        {"kept prefill logits", test_keep},
        {"kept prefill logits, in a host", test_keep_host},
        {"top-k output", test_topk},
        {"top-k output, in a host", test_topk_host},
        {"a version 1 plug-in", test_v1_plugin},
        {"a version 1 plug-in, in a host", test_v1_plugin_host},
        {"top-k coverage by hand", test_coverage},
        {"cleanup", test_cleanup},
        {0, 0}};
    return golden_test_run("replay_abi2", tests);
}
