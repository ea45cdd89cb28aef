/* The CPU backend's blocked kernels against plain scalar references written here, summing in
 * the documented order (so equal order => equal bits): attention of G query heads sharing one
 * KV head (cpu_attend, cpu_attend_block: AVX2 and portable), and the matmul's register blocks
 * and K slices (cpu_matmul). */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cunit_main.h"
#include "golden/dtype.h"
#include "replay/cpu.h"

static uint64_t rng = 88172645463325252ull;
static float frand(void) /* uniform in [-1, 1), a few bits below f32's precision */
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (float)((double)(rng >> 11) / 9007199254740992.0 * 2.0 - 1.0);
}

/* One head's score: lane m sums dims i = m mod 8 below hd & ~7 (mul then add), then
 * ((l0+l4)+(l1+l5))+((l2+l6)+(l3+l7)), then the tail dims in order. */
static float ref_dot(const float *a, const float *b, int n)
{
    float l[8] = {0};
    int n8 = n & ~7;
    for (int i = 0; i < n8; i++) {
        float p = a[i] * b[i];
        l[i % 8] = l[i % 8] + p;
    }
    float d = ((l[0] + l[4]) + (l[1] + l[5])) + ((l[2] + l[6]) + (l[3] + l[7]));
    for (int i = n8; i < n; i++) {
        float p = a[i] * b[i];
        d = d + p;
    }
    return d;
}

static void ref_attend(const float *q, int G, int hd, const float *K, const float *V, int64_t kd,
                       int64_t n, float scale, float *o)
{
    float *s = malloc((size_t)n * 4);
    for (int g = 0; g < G; g++) {
        const float *qg = q + (size_t)g * hd;
        float mx = -INFINITY;
        for (int64_t j = 0; j < n; j++) {
            s[j] = ref_dot(qg, K + j * kd, hd) * scale;
            if (s[j] > mx)
                mx = s[j];
        }
        float sum = 0;
        for (int64_t j = 0; j < n; j++) {
            s[j] = expf(s[j] - mx);
            sum = sum + s[j];
        }
        for (int i = 0; i < hd; i++) {
            float acc = 0;
            for (int64_t j = 0; j < n; j++) {
                float p = s[j] / sum;
                float t = p * V[j * kd + i];
                acc = acc + t;
            }
            o[(size_t)g * hd + i] = acc;
        }
    }
    free(s);
}

/* avx2: 0 the portable path, 1 AVX2 with the zmm kernels where there is AVX-512, 2 AVX2 with
 * the zmm kernels off */
static const char *const att_name[3] = {"portable", "avx2+zmm", "avx2"};

static void att_mode(int avx2)
{
    cpu_kernels_use_avx2(avx2 ? 1 : 0);
    if (avx2 == 2)
        cpu_kernels_use_zmm(0);
}

static void check_attend(int avx2)
{
    /* head dims: 16-wide zmm chunks only (128, 16), then an 8-wide one (24), with a tail
     * (29, 13, 5) */
    static const int groups[] = {1, 2, 4, 8}, dims[] = {128, 16, 24, 29, 13, 5};
    static const int64_t keys[] = {1, 7, 8, 9, 63, 64, 65, 130};
    cpu_kernels_init();
    bool was = cpu_kernels_use_avx2(-1);
    att_mode(avx2);
    int cases = 0, equal = 0;
    for (size_t gi = 0; gi < 4; gi++)
        for (size_t di = 0; di < 6; di++)
            for (size_t ki = 0; ki < 8; ki++) {
                int G = groups[gi], hd = dims[di];
                int64_t n = keys[ki], kd = 3 * (int64_t)hd + 1; /* other KV heads between rows */
                float *q = malloc((size_t)G * hd * 4), *K = malloc((size_t)(n * kd) * 4),
                      *V = malloc((size_t)(n * kd) * 4), *o = malloc((size_t)G * hd * 4),
                      *r = malloc((size_t)G * hd * 4), *s = malloc((size_t)G * (size_t)n * 4);
                for (int i = 0; i < G * hd; i++)
                    q[i] = 3 * frand();
                for (int64_t i = 0; i < n * kd; i++) {
                    K[i] = 3 * frand();
                    V[i] = frand();
                }
                float scale = 1.0f / sqrtf((float)hd);
                ref_attend(q, G, hd, K + 1, V + 1, kd, n, scale, r);
                memset(o, 0xff, (size_t)G * hd * 4); /* NaN: every output must be written */
                cpu_attend(q, G, hd, K + 1, V + 1, kd, n, scale, o, s);
                cases++;
                if (memcmp(o, r, (size_t)G * hd * 4) == 0)
                    equal++;
                else
                    fprintf(stderr, "attend %s G=%d hd=%d n=%lld: bits differ\n",
                            att_name[avx2], G, hd, (long long)n);
                free(q); free(K); free(V); free(o); free(r); free(s);
            }
    cpu_kernels_use_avx2(was ? 1 : 0);
    CU_ASSERT_EQUAL(cases, 4 * 6 * 8);
    CU_ASSERT_EQUAL(equal, cases);
}

/* P positions at once (cpu_attend_block, what the forward pass calls): each position's output
 * is ref_attend of that position alone, whatever the others' key counts. */
static void check_attend_block(int avx2)
{
    static const int groups[] = {1, 4, 8}, dims[] = {128, 13, 24, 29};
    static const int64_t lens[][4] = {{1, 2, 3, 4}, {64, 65, 66, 67}, {130, 9, 1, 71},
                                      {8, 8, 8, 8}, {200, 199, 198, 197}};
    cpu_kernels_init();
    bool was = cpu_kernels_use_avx2(-1);
    att_mode(avx2);
    int cases = 0, equal = 0;
    for (int P = 1; P <= 4; P++)
        for (size_t gi = 0; gi < 3; gi++)
            for (size_t di = 0; di < 4; di++)
                for (size_t li = 0; li < 5; li++) {
                    int G = groups[gi], hd = dims[di];
                    const int64_t *n = lens[li];
                    int64_t kd = 3 * (int64_t)hd + 1, nmax = 0, qs = 2 * (int64_t)G * hd + 3;
                    for (int i = 0; i < P; i++)
                        nmax = n[i] > nmax ? n[i] : nmax;
                    int64_t ld = nmax + 5;
                    size_t qn = (size_t)(P * qs);
                    float *q = malloc(qn * 4), *K = malloc((size_t)(nmax * kd) * 4),
                          *V = malloc((size_t)(nmax * kd) * 4), *o = malloc(qn * 4),
                          *r = malloc((size_t)G * hd * 4),
                          *s = malloc((size_t)P * (size_t)G * (size_t)ld * 4);
                    for (size_t i = 0; i < qn; i++)
                        q[i] = 3 * frand();
                    for (int64_t i = 0; i < nmax * kd; i++) {
                        K[i] = 3 * frand();
                        V[i] = frand();
                    }
                    float scale = 1.0f / sqrtf((float)hd);
                    memset(o, 0xff, qn * 4);
                    cpu_attend_block(q, P, qs, G, hd, K + 1, V + 1, kd, n, scale, o, qs, s, ld);
                    for (int i = 0; i < P; i++) {
                        ref_attend(q + i * qs, G, hd, K + 1, V + 1, kd, n[i], scale, r);
                        cases++;
                        if (memcmp(o + i * qs, r, (size_t)G * hd * 4) == 0)
                            equal++;
                        else
                            fprintf(stderr, "attend block %s P=%d G=%d hd=%d n=%lld: bits differ\n",
                                    att_name[avx2], P, G, hd, (long long)n[i]);
                    }
                    free(q); free(K); free(V); free(o); free(r); free(s);
                }
    cpu_kernels_use_avx2(was ? 1 : 0);
    CU_ASSERT_EQUAL(cases, 10 * 3 * 4 * 5);
    CU_ASSERT_EQUAL(equal, cases);
}

static void test_attend_block_avx2(void)
{
    if (!cpu_kernels_use_avx2(-1)) {
        fprintf(stderr, "no AVX2 + FMA here: only the portable path is checked\n");
        return;
    }
    check_attend_block(1);
    check_attend_block(2);
}

static void test_attend_block_portable(void) { check_attend_block(0); }

static void test_attend_avx2(void)
{
    if (!cpu_kernels_use_avx2(-1)) {
        fprintf(stderr, "no AVX2 + FMA here: only the portable path is checked\n");
        return;
    }
    check_attend(1);
    check_attend(2);
}

static void test_attend_portable(void) { check_attend(0); }

/* One (row, token) of the AVX2 matmul: lane m an FMA chain over dims m mod 8 below K & ~7,
 * the horizontal sum ((l0+l4)+(l2+l6))+((l1+l5)+(l3+l7)), then the tail dims (mul, add). */
static float ref_row(const float *w, const float *x, int64_t K)
{
    float l[8] = {0};
    int64_t K8 = K & ~(int64_t)7;
    for (int64_t i = 0; i < K8; i++)
        l[i % 8] = fmaf(w[i], x[i], l[i % 8]);
    float s = ((l[0] + l[4]) + (l[2] + l[6])) + ((l[1] + l[5]) + (l[3] + l[7]));
    for (int64_t i = K8; i < K; i++) {
        float p = w[i] * x[i];
        s = s + p;
    }
    return s;
}

/* The matmul paths a test can choose: every one must give the bits of ref_row. */
enum { MM_DEFAULT, MM_NO_ZMM, MM_NO_AVX512, MM_MODES };
static const char *const mm_mode_name[MM_MODES] = {"default (8 x 6 zmm with AVX-512)",
                                                    "4 x 6 ymm (zmm off)", "4 x 3 (AVX-512 off)"};

static void mm_mode(int mode)
{
    cpu_kernels_use_avx512(1);
    if (mode == MM_NO_ZMM)
        cpu_kernels_use_zmm(0);
    else if (mode == MM_NO_AVX512)
        cpu_kernels_use_avx512(0);
}

/* Every (rows, K, tokens) case against ref_row, in f32 and bf16 weights, on every path in
 * modes[]; returns how many (case, dtype, mode) runs differed. */
static int check_matmul(const int *modes, int n_modes, const int64_t *ns, size_t n_ns)
{
    static const int64_t rows[] = {1, 2, 3, 4, 5, 7, 8, 9, 12, 15, 16, 17, 24, 28, 35},
                         cols[] = {7, 8, 13, 64, 203, 519, 1031};
    int runs = 0, equal = 0;
    for (size_t ri = 0; ri < sizeof rows / sizeof *rows; ri++)
        for (size_t ci = 0; ci < sizeof cols / sizeof *cols; ci++)
            for (size_t ni = 0; ni < n_ns; ni++) {
                int64_t R = rows[ri], K = cols[ci], n = ns[ni], ldy = R + 2;
                float *wf = malloc((size_t)(R * K) * 4), *x = malloc((size_t)(n * K) * 4);
                uint16_t *wb = malloc((size_t)(R * K) * 2);
                float *y = malloc((size_t)(n * ldy) * 4), *r = malloc((size_t)(n * ldy) * 4);
                for (int64_t i = 0; i < R * K; i++) {
                    float f = frand();
                    uint32_t u;
                    memcpy(&u, &f, 4);
                    wb[i] = (uint16_t)(u >> 16); /* truncated: any bf16 value will do */
                    u = (uint32_t)wb[i] << 16;
                    memcpy(&wf[i], &u, 4); /* the bf16 value exactly, for both dtypes */
                }
                for (int64_t i = 0; i < n * K; i++)
                    x[i] = frand();
                memset(r, 0, (size_t)(n * ldy) * 4);
                for (int64_t t = 0; t < n; t++)
                    for (int64_t o = 0; o < R; o++)
                        r[t * ldy + o] = ref_row(wf + o * K, x + t * K, K);
                for (int d = 0; d < 2; d++)
                    for (int mi = 0; mi < n_modes; mi++) {
                        golden_dtype dt = d ? GOLDEN_BF16 : GOLDEN_F32;
                        cpu_weight w = {d ? (const void *)wb : (const void *)wf, dt, R, K};
                        golden_error err;
                        mm_mode(modes[mi]);
                        memset(y, 0, (size_t)(n * ldy) * 4);
                        CU_ASSERT_EQUAL(cpu_matmul(&w, x, n, y, ldy, 1 + (int)(ni % 2), &err),
                                        0);
                        runs++;
                        if (memcmp(y, r, (size_t)(n * ldy) * 4) == 0)
                            equal++;
                        else
                            fprintf(stderr, "matmul %s, %s: R=%lld K=%lld n=%lld: bits differ\n",
                                    mm_mode_name[modes[mi]], d ? "bf16" : "f32", (long long)R,
                                    (long long)K, (long long)n);
                    }
                free(wf); free(x); free(wb); free(y); free(r);
            }
    mm_mode(MM_DEFAULT);
    CU_ASSERT_EQUAL(runs, (int)(15 * 7 * n_ns) * 2 * n_modes);
    CU_ASSERT_EQUAL(equal, runs);
    return runs - equal;
}

/* tokens: decode (1, 2), every block width and remainder up to 50 (the zmm blocks take 1-6
 * tokens, the 4 x 3 / 4 x 6 ones 3 or 6 and leave 1-2), more than one pass of MM_TB (48)
 * tokens; K 7 to 1031: no 8-chunk at all, one, several MM_KC (256) slices, with a tail; rows:
 * below, at and above the 8 rows of a zmm block and the 16 of a tile */
static const int64_t mm_ns[] = {1,  2,  3,  4,  5,  6,  7,  8,  9,  10, 11, 12, 13, 14,
                                15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28,
                                29, 30, 31, 32, 33, 34, 35, 36, 37, 38, 39, 40, 41, 42,
                                43, 44, 45, 46, 47, 48, 49, 50, 97, 100};

static void test_matmul(void)
{
    cpu_kernels_init();
    if (!cpu_kernels_use_avx2(-1)) {
        fprintf(stderr, "no AVX2 + FMA here: the portable matmul sums in another order\n");
        return;
    }
    static const int modes[] = {MM_DEFAULT, MM_NO_ZMM, MM_NO_AVX512};
    if (!cpu_kernels_use_avx512(-1))
        fprintf(stderr, "no AVX-512VL here: the 4 x 3 blocks only\n");
    check_matmul(modes, 3, mm_ns, sizeof mm_ns / sizeof *mm_ns);
}

/* The zmm softmax's 8-wide expf against expf itself: every 61st float bit pattern (all
 * exponents, both signs, NaNs, infinities), every 3rd one in [-88, -0.5] (where softmax's
 * s - max mostly lies and the reduction has the most bits to lose), 90 M values, and the
 * edges of expf's special path. (Checked once on all 2^32 patterns against glibc 2.36: none
 * differs.) */
static void test_expf_vec(void)
{
    enum { N = 1 << 20 };
#if defined(__SANITIZE_ADDRESS__) /* a tenth under the sanitizers (about 80 s there otherwise) */
    enum { S = 10 };
#else
    enum { S = 1 };
#endif
    static const uint64_t ranges[][3] = {{0, 1ull << 32, 61 * S + (S > 1)},
                                         {0xBF000000u, 0xC2B00000u, 3 * S + (S > 1)}};
    float *x = malloc((size_t)N * 4), *y = malloc((size_t)N * 4);
    static const float edge[] = {0.0f,  -0.0f,       INFINITY, -INFINITY, NAN,     88.0f,
                                 -88.0f, 88.72283f, 88.72284f, -103.97f, -103.98f, -87.33655f,
                                 1e-40f, -1e-40f,    0.5f,     -0.5f,     -1e-8f,  -20.0f};
    int64_t n = 0, total = 0, bad = 0;
    bool vec = true;
    for (size_t i = 0; i < sizeof edge / sizeof *edge; i++)
        x[n++] = edge[i];
    for (size_t ri = 0; ri < 2; ri++)
        for (uint64_t u = ranges[ri][0];; u += ranges[ri][2]) {
            bool end = u >= ranges[ri][1];
            if (!end) {
                uint32_t b = (uint32_t)u;
                memcpy(&x[n++], &b, 4);
            }
            if (n == N || (end && n > 0)) {
                vec = cpu_expf_vec(x, y, n) && vec;
                for (int64_t i = 0; i < n; i++) {
                    float e = expf(x[i]);
                    if (memcmp(&e, &y[i], 4) != 0 && bad++ < 5) {
                        uint32_t b;
                        memcpy(&b, &x[i], 4);
                        fprintf(stderr, "expf of %08x: %a, 8-wide %a\n", (unsigned)b, e, y[i]);
                    }
                }
                total += n;
                n = 0;
            }
            if (end)
                break;
        }
    if (!vec)
        fprintf(stderr, "no AVX-512 here: plain expf only\n");
    CU_ASSERT(total > 90000000 / S);
    CU_ASSERT_EQUAL(bad, 0);
    free(x);
    free(y);
}

int main(void)
{
    static const golden_test tests[] = {
        {"cpu_attend (AVX2): bits of the scalar reference, G 1-8, 1-130 keys", test_attend_avx2},
        {"cpu_attend (portable): the same bits", test_attend_portable},
        {"cpu_attend_block (AVX2): each of 1-4 positions has the bits of attending it alone",
         test_attend_block_avx2},
        {"cpu_attend_block (portable): the same bits", test_attend_block_portable},
        {"cpu_matmul: every register block (4 x 3, 4 x 6, 8 x 1-6 zmm) has the bits of one (row, "
         "token) chain",
         test_matmul},
        {"cpu_expf_vec: the softmax's 8-wide expf has expf's bits", test_expf_vec},
        {0, 0}};
    return golden_test_run("replay_kernels", tests);
}
