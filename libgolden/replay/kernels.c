/* The CPU backend's kernels: exact weight conversion (bf16, f16, f32 -> f32), the
 * cache-blocked parallel matmul over memory-mapped weights, RMSNorm and bf16 rounding. */
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "golden/replay.h"
#if defined(__x86_64__)
#include <immintrin.h>
#endif
#include "replay/cpu.h"
#include "util/pool.h"

float cpu_f16_table[65536];
static pthread_once_t f16_once = PTHREAD_ONCE_INIT;
static bool use_avx2; /* AVX2 + FMA found at run time: the x86-64 baseline is only SSE2 */
static bool use_avx512; /* and AVX-512F/VL: 32 ymm registers for the 4 x 6 matmul block */
static bool use_zmm;    /* and the zmm kernels: matmul 8 x 6, scores, P x V, softmax */

#if defined(__x86_64__)
static bool have_avx512(void)
{
    return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl");
}
#endif

static void f16_fill(void)
{
    for (unsigned i = 0; i < 65536; i++)
        cpu_f16_table[i] = (float)golden_f16_to_f64((uint16_t)i); /* exact: f16 fits in f32 */
#if defined(__x86_64__)
    __builtin_cpu_init();
    use_avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    use_avx512 = use_avx2 && have_avx512();
    use_zmm = use_avx512;
#endif
}

void cpu_kernels_init(void) { pthread_once(&f16_once, f16_fill); }

bool cpu_kernels_use_avx2(int on)
{
    cpu_kernels_init();
    bool was = use_avx2;
#if defined(__x86_64__)
    if (on == 0)
        use_avx2 = use_avx512 = use_zmm = false;
    else if (on > 0) {
        use_avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
        use_zmm = use_avx512 = use_avx2 && have_avx512();
    }
#endif
    return was;
}

bool cpu_kernels_use_avx512(int on)
{
    cpu_kernels_init();
    bool was = use_avx512;
#if defined(__x86_64__)
    if (on == 0)
        use_avx512 = use_zmm = false;
    else if (on > 0)
        use_zmm = use_avx512 = use_avx2 && have_avx512();
#endif
    return was;
}

bool cpu_kernels_use_zmm(int on)
{
    cpu_kernels_init();
    bool was = use_zmm;
#if defined(__x86_64__)
    if (on == 0)
        use_zmm = false;
    else if (on > 0)
        use_zmm = use_avx512;
#endif
    return was;
}

static inline float bf16f(uint16_t b)
{
    uint32_t u = (uint32_t)b << 16;
    float f;
    memcpy(&f, &u, 4);
    return f;
}

#if defined(__x86_64__)
/* bf16 -> f32 of n entries, eight at a time (exact: a shift). */
__attribute__((target("avx2"))) static void widen_bf16_avx2(const uint16_t *s, int64_t n,
                                                            float *dst)
{
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        __m256i b = _mm256_cvtepu16_epi32(_mm_loadu_si128((const __m128i *)(s + i)));
        _mm256_storeu_si256((__m256i *)(dst + i), _mm256_slli_epi32(b, 16));
    }
    for (; i < n; i++) {
        uint32_t u = (uint32_t)s[i] << 16;
        memcpy(dst + i, &u, 4);
    }
}
#endif

void cpu_weight_row(const cpu_weight *w, int64_t r, float *dst)
{
    int64_t n = w->cols;
    if (w->dt == GOLDEN_F32) {
        memcpy(dst, (const float *)w->data + r * n, (size_t)n * 4);
    } else if (w->dt == GOLDEN_BF16) {
        const uint16_t *s = (const uint16_t *)w->data + r * n;
#if defined(__x86_64__)
        if (use_avx2) {
            widen_bf16_avx2(s, n, dst);
            return;
        }
#endif
        for (int64_t i = 0; i < n; i++)
            dst[i] = bf16f(s[i]);
    } else {
        const uint16_t *s = (const uint16_t *)w->data + r * n;
        for (int64_t i = 0; i < n; i++)
            dst[i] = cpu_f16_table[s[i]];
    }
}

typedef float v8f __attribute__((vector_size(32)));

/* f32 dot product with eight lanes of partial sums (vectorizes without -ffast-math). */
static float dot(const float *a, const float *b, int64_t n)
{
    v8f acc0 = {0}, acc1 = {0};
    int64_t i = 0;
    for (; i + 16 <= n; i += 16) {
        v8f a0, b0, a1, b1;
        memcpy(&a0, a + i, 32);
        memcpy(&b0, b + i, 32);
        memcpy(&a1, a + i + 8, 32);
        memcpy(&b1, b + i + 8, 32);
        acc0 += a0 * b0;
        acc1 += a1 * b1;
    }
    acc0 += acc1;
    float s = 0;
    for (int k = 0; k < 8; k++)
        s += acc0[k];
    for (; i < n; i++)
        s += a[i] * b[i];
    return s;
}

/* bf16 row times f32 vector without a converted copy: the decode path, memory-bound. */
static float dot_bf16(const uint16_t *w, const float *x, int64_t n)
{
    v8f acc0 = {0}, acc1 = {0};
    int64_t i = 0;
    for (; i + 16 <= n; i += 16) {
        v8f w0, w1, x0, x1;
        for (int k = 0; k < 8; k++) {
            w0[k] = bf16f(w[i + k]);
            w1[k] = bf16f(w[i + 8 + k]);
        }
        memcpy(&x0, x + i, 32);
        memcpy(&x1, x + i + 8, 32);
        acc0 += w0 * x0;
        acc1 += w1 * x1;
    }
    acc0 += acc1;
    float s = 0;
    for (int k = 0; k < 8; k++)
        s += acc0[k];
    for (; i < n; i++)
        s += bf16f(w[i]) * x[i];
    return s;
}


#if defined(__x86_64__)
__attribute__((target("avx2,fma"))) static inline float hsum256(__m256 v)
{
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_shuffle_ps(s, s, 1));
    return _mm_cvtss_f32(s);
}

/* Every AVX2 kernel sums one (row, token) pair the same way: one 8-lane FMA chain over
 * chunks of 8, a fixed horizontal sum, then the tail in order. So a token's result does not
 * depend on the batch it came in (decode = prefill, bit for bit) nor on the thread split. */

/* Up to four bf16 rows against one token, widened by a shift (exact): the decode path. */
__attribute__((target("avx2,fma"))) static void rows_bf16_avx2(const uint16_t *w, int64_t K,
                                                                int nrows, const float *x,
                                                                float *out)
{
    __m256 c[4] = {_mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps(),
                   _mm256_setzero_ps()};
    int64_t i = 0;
    for (; i + 8 <= K; i += 8) {
        __m256 u = _mm256_loadu_ps(x + i);
        for (int r = 0; r < nrows; r++) {
            __m256i b = _mm256_cvtepu16_epi32(_mm_loadu_si128((const __m128i *)(w + r * K + i)));
            c[r] = _mm256_fmadd_ps(_mm256_castsi256_ps(_mm256_slli_epi32(b, 16)), u, c[r]);
        }
    }
    for (int r = 0; r < nrows; r++) {
        float s = hsum256(c[r]);
        for (int64_t k = i; k < K; k++)
            s += bf16f(w[r * K + k]) * x[k];
        out[r] = s;
    }
}

/* Up to four converted rows against one or two tokens (x1 NULL = one): the prefill path. */
__attribute__((target("avx2,fma"))) static void rows_f32_avx2(const float *w, int64_t K,
                                                               int nrows, const float *x0,
                                                               const float *x1, float *out0,
                                                               float *out1)
{
    __m256 c[8];
    for (int k = 0; k < 8; k++)
        c[k] = _mm256_setzero_ps();
    int64_t i = 0;
    if (nrows == 4 && x1) {
        for (; i + 8 <= K; i += 8) {
            __m256 u = _mm256_loadu_ps(x0 + i), v = _mm256_loadu_ps(x1 + i);
            __m256 r0 = _mm256_loadu_ps(w + i), r1 = _mm256_loadu_ps(w + K + i);
            __m256 r2 = _mm256_loadu_ps(w + 2 * K + i), r3 = _mm256_loadu_ps(w + 3 * K + i);
            c[0] = _mm256_fmadd_ps(r0, u, c[0]);
            c[1] = _mm256_fmadd_ps(r1, u, c[1]);
            c[2] = _mm256_fmadd_ps(r2, u, c[2]);
            c[3] = _mm256_fmadd_ps(r3, u, c[3]);
            c[4] = _mm256_fmadd_ps(r0, v, c[4]);
            c[5] = _mm256_fmadd_ps(r1, v, c[5]);
            c[6] = _mm256_fmadd_ps(r2, v, c[6]);
            c[7] = _mm256_fmadd_ps(r3, v, c[7]);
        }
    } else {
        for (; i + 8 <= K; i += 8) {
            __m256 u = _mm256_loadu_ps(x0 + i);
            __m256 v = x1 ? _mm256_loadu_ps(x1 + i) : u;
            for (int r = 0; r < nrows; r++) {
                __m256 wr = _mm256_loadu_ps(w + r * K + i);
                c[r] = _mm256_fmadd_ps(wr, u, c[r]);
                c[4 + r] = _mm256_fmadd_ps(wr, v, c[4 + r]);
            }
        }
    }
    for (int r = 0; r < nrows; r++) {
        float s = hsum256(c[r]);
        for (int64_t k = i; k < K; k++)
            s += w[r * K + k] * x0[k];
        out0[r] = s;
        if (x1) {
            float t = hsum256(c[4 + r]);
            for (int64_t k = i; k < K; k++)
                t += w[r * K + k] * x1[k];
            out1[r] = t;
        }
    }
}
/* Four converted rows against three tokens over the 8-chunks [k0, k1) of K: 12 accumulators,
 * 7 loads per 12 FMAs. The 12 chains are continued from p (pair (a, b) at p + (a * pld + b) * 8;
 * zero when first) and stored back, so slicing K leaves each (row, token) the one chain and
 * order of rows_f32_avx2 while a slice of the tile stays in L1 for every token of a pass. */
__attribute__((target("avx2,fma"))) static void blk4x3_avx2(const float *w, int64_t K,
                                                             const float *x, int64_t k0,
                                                             int64_t k1, float *p, int64_t pld,
                                                             bool first)
{
    __m256 c00, c01, c02, c10, c11, c12, c20, c21, c22, c30, c31, c32;
    float *p0 = p, *p1 = p + pld * 8, *p2 = p + 2 * pld * 8, *p3 = p + 3 * pld * 8;
    if (first) {
        c00 = _mm256_setzero_ps();
        c01 = c02 = c10 = c11 = c12 = c20 = c21 = c22 = c30 = c31 = c32 = c00;
    } else {
        c00 = _mm256_loadu_ps(p0), c01 = _mm256_loadu_ps(p0 + 8), c02 = _mm256_loadu_ps(p0 + 16);
        c10 = _mm256_loadu_ps(p1), c11 = _mm256_loadu_ps(p1 + 8), c12 = _mm256_loadu_ps(p1 + 16);
        c20 = _mm256_loadu_ps(p2), c21 = _mm256_loadu_ps(p2 + 8), c22 = _mm256_loadu_ps(p2 + 16);
        c30 = _mm256_loadu_ps(p3), c31 = _mm256_loadu_ps(p3 + 8), c32 = _mm256_loadu_ps(p3 + 16);
    }
    const float *x0 = x, *x1 = x + K, *x2 = x + 2 * K;
    const float *w0 = w, *w1 = w + K, *w2 = w + 2 * K, *w3 = w + 3 * K;
    for (int64_t i = k0; i < k1; i += 8) {
        __m256 u0 = _mm256_loadu_ps(x0 + i), u1 = _mm256_loadu_ps(x1 + i),
               u2 = _mm256_loadu_ps(x2 + i);
        __m256 r = _mm256_loadu_ps(w0 + i);
        c00 = _mm256_fmadd_ps(r, u0, c00);
        c01 = _mm256_fmadd_ps(r, u1, c01);
        c02 = _mm256_fmadd_ps(r, u2, c02);
        r = _mm256_loadu_ps(w1 + i);
        c10 = _mm256_fmadd_ps(r, u0, c10);
        c11 = _mm256_fmadd_ps(r, u1, c11);
        c12 = _mm256_fmadd_ps(r, u2, c12);
        r = _mm256_loadu_ps(w2 + i);
        c20 = _mm256_fmadd_ps(r, u0, c20);
        c21 = _mm256_fmadd_ps(r, u1, c21);
        c22 = _mm256_fmadd_ps(r, u2, c22);
        r = _mm256_loadu_ps(w3 + i);
        c30 = _mm256_fmadd_ps(r, u0, c30);
        c31 = _mm256_fmadd_ps(r, u1, c31);
        c32 = _mm256_fmadd_ps(r, u2, c32);
    }
    _mm256_storeu_ps(p0, c00), _mm256_storeu_ps(p0 + 8, c01), _mm256_storeu_ps(p0 + 16, c02);
    _mm256_storeu_ps(p1, c10), _mm256_storeu_ps(p1 + 8, c11), _mm256_storeu_ps(p1 + 16, c12);
    _mm256_storeu_ps(p2, c20), _mm256_storeu_ps(p2 + 8, c21), _mm256_storeu_ps(p2 + 16, c22);
    _mm256_storeu_ps(p3, c30), _mm256_storeu_ps(p3 + 8, c31), _mm256_storeu_ps(p3 + 16, c32);
}

/* Four rows against six tokens, the same continued chains as blk4x3_avx2 (ymm FMAs, one
 * 8-lane chain per (row, token)): AVX-512VL's 32 ymm registers hold 24 accumulators, 6 tokens
 * and a row, 10 loads per 24 FMAs. */
#define BLK6_ROW(wr, ca, cb, cc, cd, ce, cf)                                                     \
    do {                                                                                         \
        __m256 r_ = _mm256_loadu_ps((wr) + i);                                                   \
        ca = _mm256_fmadd_ps(r_, u0, ca);                                                        \
        cb = _mm256_fmadd_ps(r_, u1, cb);                                                        \
        cc = _mm256_fmadd_ps(r_, u2, cc);                                                        \
        cd = _mm256_fmadd_ps(r_, u3, cd);                                                        \
        ce = _mm256_fmadd_ps(r_, u4, ce);                                                        \
        cf = _mm256_fmadd_ps(r_, u5, cf);                                                        \
    } while (0)
#define BLK6_LOAD(pp, ca, cb, cc, cd, ce, cf)                                                    \
    ca = _mm256_loadu_ps(pp), cb = _mm256_loadu_ps((pp) + 8), cc = _mm256_loadu_ps((pp) + 16),   \
    cd = _mm256_loadu_ps((pp) + 24), ce = _mm256_loadu_ps((pp) + 32),                            \
    cf = _mm256_loadu_ps((pp) + 40)
#define BLK6_STORE(pp, ca, cb, cc, cd, ce, cf)                                                   \
    _mm256_storeu_ps(pp, ca), _mm256_storeu_ps((pp) + 8, cb), _mm256_storeu_ps((pp) + 16, cc),   \
        _mm256_storeu_ps((pp) + 24, cd), _mm256_storeu_ps((pp) + 32, ce),                        \
        _mm256_storeu_ps((pp) + 40, cf)

__attribute__((target("avx2,fma,avx512f,avx512vl"))) static void
blk4x6_avx512(const float *w, int64_t K, const float *x, int64_t k0, int64_t k1, float *p,
              int64_t pld, bool first)
{
    __m256 c00, c01, c02, c03, c04, c05, c10, c11, c12, c13, c14, c15;
    __m256 c20, c21, c22, c23, c24, c25, c30, c31, c32, c33, c34, c35;
    float *p0 = p, *p1 = p + pld * 8, *p2 = p + 2 * pld * 8, *p3 = p + 3 * pld * 8;
    if (first) {
        c00 = _mm256_setzero_ps();
        c01 = c02 = c03 = c04 = c05 = c10 = c11 = c12 = c13 = c14 = c15 = c00;
        c20 = c21 = c22 = c23 = c24 = c25 = c30 = c31 = c32 = c33 = c34 = c35 = c00;
    } else {
        BLK6_LOAD(p0, c00, c01, c02, c03, c04, c05);
        BLK6_LOAD(p1, c10, c11, c12, c13, c14, c15);
        BLK6_LOAD(p2, c20, c21, c22, c23, c24, c25);
        BLK6_LOAD(p3, c30, c31, c32, c33, c34, c35);
    }
    const float *w0 = w, *w1 = w + K, *w2 = w + 2 * K, *w3 = w + 3 * K;
    for (int64_t i = k0; i < k1; i += 8) {
        __m256 u0 = _mm256_loadu_ps(x + i), u1 = _mm256_loadu_ps(x + K + i),
               u2 = _mm256_loadu_ps(x + 2 * K + i), u3 = _mm256_loadu_ps(x + 3 * K + i),
               u4 = _mm256_loadu_ps(x + 4 * K + i), u5 = _mm256_loadu_ps(x + 5 * K + i);
        BLK6_ROW(w0, c00, c01, c02, c03, c04, c05);
        BLK6_ROW(w1, c10, c11, c12, c13, c14, c15);
        BLK6_ROW(w2, c20, c21, c22, c23, c24, c25);
        BLK6_ROW(w3, c30, c31, c32, c33, c34, c35);
    }
    BLK6_STORE(p0, c00, c01, c02, c03, c04, c05);
    BLK6_STORE(p1, c10, c11, c12, c13, c14, c15);
    BLK6_STORE(p2, c20, c21, c22, c23, c24, c25);
    BLK6_STORE(p3, c30, c31, c32, c33, c34, c35);
}

#define MM_KC 256 /* K per slice: 16 rows of it (16 KiB) stay in L1 for a whole pass */
#define MM_TB 48  /* tokens per pass: x of a pass (48 x K) stays in L2, the chains (24 KiB) too */

/* Rows [0, nr) of a converted tile against every token of job c, AVX2. pf/pf_lines: the next
 * tile's weights, prefetched into L2 a few lines per block while this one computes. */
__attribute__((target("avx2,fma"))) static void tile_avx2(const cpu_matmul_job *c,
                                                           const float *tile, int64_t K,
                                                           int64_t r0, int64_t nr, float *part,
                                                           const char *pf, int64_t pf_lines)
{
    int64_t K8 = K & ~(int64_t)7, nq = nr & ~(int64_t)3, n = c->n;
    int64_t slices = K8 > 0 ? (K8 + MM_KC - 1) / MM_KC : 1;
    int64_t per = pf_lines > 0 ? pf_lines / (slices * ((n + 2) / 3)) + 1 : 0;
    if (use_avx512)
        per *= 2; /* one block call covers six tokens */
    for (int64_t t0 = 0; t0 < n; t0 += MM_TB) {
        int64_t t1 = t0 + MM_TB < n ? t0 + MM_TB : n, t3 = t0 + (t1 - t0) / 3 * 3;
        if (t3 > t0 && nq > 0) {
            for (int64_t k0 = 0;; k0 += MM_KC) {
                int64_t k1 = k0 + MM_KC < K8 ? k0 + MM_KC : K8;
                for (int64_t t = t0, step; t < t3; t += step) {
                    step = use_avx512 && t + 6 <= t3 ? 6 : 3;
                    for (int64_t r = 0; r < nq; r += 4)
                        (step == 6 ? blk4x6_avx512 : blk4x3_avx2)(
                            tile + r * K, K, c->x + t * K, k0, k1,
                            part + (r * MM_TB + (t - t0)) * 8, MM_TB, k0 == 0);
                    for (int64_t q = 0; q < per && pf_lines > 0; q++, pf_lines--, pf += 64)
                        _mm_prefetch(pf, _MM_HINT_T1);
                }
                if (k1 >= K8)
                    break;
            }
            for (int64_t t = t0; t < t3; t++) {
                const float *xt = c->x + t * K;
                float *yt = c->y + t * c->ldy + r0;
                for (int64_t r = 0; r < nq; r++) {
                    float s = hsum256(_mm256_loadu_ps(part + (r * MM_TB + (t - t0)) * 8));
                    for (int64_t k = K8; k < K; k++)
                        s += tile[r * K + k] * xt[k];
                    yt[r] = s;
                }
            }
            if (nq < nr) /* the last rows (fewer than 4) of these tokens */
                for (int64_t t = t0; t < t3; t += 2) {
                    bool two = t + 1 < t3;
                    float *y0 = c->y + t * c->ldy + r0;
                    rows_f32_avx2(tile + nq * K, K, (int)(nr - nq), c->x + t * K,
                                  two ? c->x + (t + 1) * K : NULL, y0 + nq,
                                  two ? y0 + c->ldy + nq : NULL);
                }
        }
        for (int64_t t = t3 > t0 && nq > 0 ? t3 : t0; t < t1; t += 2) { /* tokens left over */
            bool two = t + 1 < t1;
            float *y0 = c->y + t * c->ldy + r0, *y1 = two ? y0 + c->ldy : NULL;
            for (int64_t r = 0; r < nr; r += 4)
                rows_f32_avx2(tile + r * K, K, nr - r < 4 ? (int)(nr - r) : 4, c->x + t * K,
                              two ? c->x + (t + 1) * K : NULL, y0 + r, two ? y1 + r : NULL);
        }
    }
}

/* The zmm path. A packed tile holds the rows in pairs: pair q, 8-chunk i at tp + q * ps + 2 * i
 * (ps = 2 * K8) is [row 2q dims i..i+7 | row 2q+1 dims i..i+7], so one zmm FMA against a token's
 * 8 dims broadcast to both halves (a 256-bit broadcast load, no shuffle) is, half by half,
 * exactly the ymm FMA of each row's chain: every (row, token) keeps its one 8-lane chain, in K
 * order, continued across slices (chain of pair q, token t at p + (q * MM_TB + t) * 16), then
 * the same horizontal sum and tail. Eight rows (4 pairs) x T tokens: 4T accumulators, 4 + T
 * loads per 4T FMAs of 16 lanes. */
__attribute__((target("avx2,fma,avx512f,avx512vl"), always_inline)) static inline void
blk8_zmm(const float *wp, int64_t ps, const float *x, int64_t K, int64_t k0, int64_t k1,
         float *p, bool first, const int T)
{
    __m512 c[4][6];
#pragma GCC unroll 4
    for (int q = 0; q < 4; q++)
#pragma GCC unroll 6
        for (int t = 0; t < T; t++)
            c[q][t] = first ? _mm512_setzero_ps() : _mm512_loadu_ps(p + (q * MM_TB + t) * 16);
    for (int64_t i = k0; i < k1; i += 8) {
        __m512 b[6];
#pragma GCC unroll 6
        for (int t = 0; t < T; t++)
            b[t] = _mm512_castpd_ps(
                _mm512_broadcast_f64x4(_mm256_loadu_pd((const double *)(x + t * K + i))));
#pragma GCC unroll 4
        for (int q = 0; q < 4; q++) {
            __m512 r = _mm512_loadu_ps(wp + q * ps + 2 * i);
#pragma GCC unroll 6
            for (int t = 0; t < T; t++)
                c[q][t] = _mm512_fmadd_ps(r, b[t], c[q][t]);
        }
    }
#pragma GCC unroll 4
    for (int q = 0; q < 4; q++)
#pragma GCC unroll 6
        for (int t = 0; t < T; t++)
            _mm512_storeu_ps(p + (q * MM_TB + t) * 16, c[q][t]);
}

#define BLK8_ZMM(T)                                                                              \
    __attribute__((target("avx2,fma,avx512f,avx512vl"))) static void blk8x##T##_zmm(           \
        const float *wp, int64_t ps, const float *x, int64_t K, int64_t k0, int64_t k1,          \
        float *p, bool first)                                                                    \
    {                                                                                            \
        blk8_zmm(wp, ps, x, K, k0, k1, p, first, T);                                             \
    }
BLK8_ZMM(1)
BLK8_ZMM(2)
BLK8_ZMM(3)
BLK8_ZMM(4)
BLK8_ZMM(5)
BLK8_ZMM(6)
typedef void blk8_fn(const float *, int64_t, const float *, int64_t, int64_t, int64_t, float *,
                     bool);
static blk8_fn *const blk8_zmm_fn[7] = {NULL,        blk8x1_zmm, blk8x2_zmm, blk8x3_zmm,
                                        blk8x4_zmm,  blk8x5_zmm, blk8x6_zmm};

/* hsum256 of the eight chains of four row pairs (each zmm [row 2q | row 2q+1]) at once, the
 * same additions with the same operands: lanes j + (j + 4), then (0 + 2) and (1 + 3), then
 * those two; lane r of the result is row r's sum. */
__attribute__((target("avx2,fma,avx512f,avx512vl"))) static inline __m256
hsum8_pairs(const float *p0, const float *p1, const float *p2, const float *p3)
{
    __m512 a = _mm512_loadu_ps(p0), b = _mm512_loadu_ps(p1), c = _mm512_loadu_ps(p2),
           d = _mm512_loadu_ps(p3);
    a = _mm512_add_ps(a, _mm512_shuffle_f32x4(a, a, _MM_SHUFFLE(2, 3, 0, 1)));
    b = _mm512_add_ps(b, _mm512_shuffle_f32x4(b, b, _MM_SHUFFLE(2, 3, 0, 1)));
    c = _mm512_add_ps(c, _mm512_shuffle_f32x4(c, c, _MM_SHUFFLE(2, 3, 0, 1)));
    d = _mm512_add_ps(d, _mm512_shuffle_f32x4(d, d, _MM_SHUFFLE(2, 3, 0, 1)));
    __m512 ab = _mm512_shuffle_f32x4(a, b, _MM_SHUFFLE(2, 0, 2, 0)); /* rows 0-3, 4 lanes each */
    __m512 cd = _mm512_shuffle_f32x4(c, d, _MM_SHUFFLE(2, 0, 2, 0)); /* rows 4-7 */
    ab = _mm512_add_ps(ab, _mm512_permute_ps(ab, _MM_SHUFFLE(1, 0, 3, 2)));
    cd = _mm512_add_ps(cd, _mm512_permute_ps(cd, _MM_SHUFFLE(1, 0, 3, 2)));
    ab = _mm512_add_ps(ab, _mm512_permute_ps(ab, _MM_SHUFFLE(2, 3, 0, 1)));
    cd = _mm512_add_ps(cd, _mm512_permute_ps(cd, _MM_SHUFFLE(2, 3, 0, 1)));
    const __m512i lanes = _mm512_setr_epi32(0, 4, 8, 12, 16, 20, 24, 28, 0, 0, 0, 0, 0, 0, 0, 0);
    return _mm512_castps512_ps256(_mm512_permutex2var_ps(ab, lanes, cd));
}

/* Rows [0, nr) of tile against every token of job c with the zmm blocks; tp is the tile
 * packed in row pairs, (nr + 7) / 8 * 4 pairs (a missing row zero: its half is thrown away). */
__attribute__((target("avx2,fma,avx512f,avx512vl"))) static void
tile_zmm(const cpu_matmul_job *c, const float *tile, const float *tp, int64_t K, int64_t r0,
         int64_t nr, float *part, const char *pf, int64_t pf_lines)
{
    int64_t K8 = K & ~(int64_t)7, n = c->n, ps = 2 * K8;
    int64_t slices = K8 > 0 ? (K8 + MM_KC - 1) / MM_KC : 1;
    int64_t per = pf_lines > 0 ? pf_lines / (slices * ((n + 5) / 6)) + 1 : 0;
    for (int64_t t0 = 0; t0 < n; t0 += MM_TB) {
        int64_t t1 = t0 + MM_TB < n ? t0 + MM_TB : n;
        for (int64_t k0 = 0;; k0 += MM_KC) {
            int64_t k1 = k0 + MM_KC < K8 ? k0 + MM_KC : K8;
            for (int64_t t = t0, step; t < t1; t += step) {
                step = t1 - t < 6 ? t1 - t : 6;
                for (int64_t r = 0; r < nr; r += 8)
                    blk8_zmm_fn[step](tp + r / 2 * ps, ps, c->x + t * K, K, k0, k1,
                                      part + (r / 2 * MM_TB + (t - t0)) * 16, k0 == 0);
                for (int64_t q = 0; q < per && pf_lines > 0; q++, pf_lines--, pf += 64)
                    _mm_prefetch(pf, _MM_HINT_T1);
            }
            if (k1 >= K8)
                break;
        }
        for (int64_t t = t0; t < t1; t++) {
            const float *xt = c->x + t * K;
            float *yt = c->y + t * c->ldy + r0;
            for (int64_t g = 0; g < nr; g += 8) {
                const float *pg = part + (g / 2 * MM_TB + (t - t0)) * 16;
                __m256 s8 = hsum8_pairs(pg, pg + MM_TB * 16, pg + 2 * MM_TB * 16,
                                        pg + 3 * MM_TB * 16);
                if (nr - g >= 8)
                    _mm256_storeu_ps(yt + g, s8);
                else
                    _mm256_mask_storeu_ps(yt + g, (__mmask8)((1u << (nr - g)) - 1), s8);
            }
            if (K8 < K)
                for (int64_t r = 0; r < nr; r++) {
                    float s = yt[r];
                    for (int64_t k = K8; k < K; k++)
                        s += tile[r * K + k] * xt[k];
                    yt[r] = s;
                }
        }
    }
}

/* Rows [r0, r0 + nr) of a bf16 weight widened (exact: a shift) straight into row pairs for
 * tile_zmm, as pack_pairs lays them out; only the tails (dims K & ~7 on) go to tile. */
__attribute__((target("avx2,fma,avx512f,avx512vl"))) static void
widen_pairs_bf16(const cpu_weight *w, int64_t r0, int64_t nr, float *tile, float *tp)
{
    int64_t K = w->cols, K8 = K & ~(int64_t)7, np = (nr + 7) / 8 * 4;
    const uint16_t *s = (const uint16_t *)w->data + r0 * K;
    for (int64_t q = 0; q < np; q++) {
        float *d = tp + q * 2 * K8;
        const uint16_t *a = s + 2 * q * K, *b = a + K;
        if (2 * q + 1 < nr)
            for (int64_t i = 0; i < K8; i += 8) {
                __m256i ab = _mm256_inserti128_si256(
                    _mm256_castsi128_si256(_mm_loadu_si128((const __m128i *)(a + i))),
                    _mm_loadu_si128((const __m128i *)(b + i)), 1);
                _mm512_storeu_si512(d + 2 * i,
                                    _mm512_slli_epi32(_mm512_cvtepu16_epi32(ab), 16));
            }
        else if (2 * q < nr) /* the last row alone: a zero row beside it */
            for (int64_t i = 0; i < K8; i += 8) {
                __m256i ab = _mm256_castsi128_si256(_mm_loadu_si128((const __m128i *)(a + i)));
                ab = _mm256_inserti128_si256(ab, _mm_setzero_si128(), 1);
                _mm512_storeu_si512(d + 2 * i,
                                    _mm512_slli_epi32(_mm512_cvtepu16_epi32(ab), 16));
            }
        else
            for (int64_t i = 0; i < K8; i += 8)
                _mm512_storeu_ps(d + 2 * i, _mm512_setzero_ps());
    }
    for (int64_t r = 0; r < nr; r++)
        for (int64_t k = K8; k < K; k++)
            tile[r * K + k] = bf16f(s[r * K + k]);
}

/* The tile's rows [0, nr) into row pairs for tile_zmm, padded with zero rows to a multiple
 * of 8. */
__attribute__((target("avx2,fma,avx512f,avx512vl"))) static void
pack_pairs(const float *tile, int64_t K, int64_t nr, float *tp)
{
    int64_t K8 = K & ~(int64_t)7, np = (nr + 7) / 8 * 4;
    for (int64_t q = 0; q < np; q++)
        for (int h = 0; h < 2; h++) {
            int64_t r = 2 * q + h;
            float *d = tp + q * 2 * K8 + h * 8;
            if (r < nr) {
                const float *s = tile + r * K;
                for (int64_t i = 0; i < K8; i += 8)
                    _mm256_storeu_ps(d + 2 * i, _mm256_loadu_ps(s + i));
            } else
                for (int64_t i = 0; i < K8; i += 8)
                    _mm256_storeu_ps(d + 2 * i, _mm256_setzero_ps());
        }
}

#endif

#define MM_ROWS 16     /* output rows per work item: one tile of converted weights */
#define MM_PART (MM_ROWS * MM_TB * 8) /* floats of a worker's partial chains */
/* a worker's floats: the tile, the chains, the tile packed in row pairs (zmm path) */
#define MM_SCRATCH(cols) (2 * MM_ROWS * (size_t)(cols) + MM_PART)

typedef struct {
    const cpu_matmul_job *jobs;
    size_t n_jobs;
    size_t *first_item; /* [n_jobs + 1]: item ranges of each job */
    int64_t max_cols;
    float *scratch;     /* [threads][MM_SCRATCH(max_cols)] */
    int threads;
} mm_ctx;

/* The job whose item range holds `item`, and the tile's first row. */
static size_t mm_job(const mm_ctx *m, size_t item, int64_t *r0)
{
    size_t lo = 0, hi = m->n_jobs - 1;
    while (lo < hi) {
        size_t mid = (lo + hi + 1) / 2;
        if (m->first_item[mid] <= item)
            lo = mid;
        else
            hi = mid - 1;
    }
    *r0 = (int64_t)(item - m->first_item[lo]) * MM_ROWS;
    return lo;
}

static int mm_item(void *vctx, size_t item, int worker, golden_error *err)
{
    (void)err;
    mm_ctx *m = vctx;
    int64_t r0;
    const cpu_matmul_job *c = &m->jobs[mm_job(m, item, &r0)];
    const cpu_weight *w = c->w;
    int64_t K = w->cols;
    int64_t nr = w->rows - r0 < MM_ROWS ? w->rows - r0 : MM_ROWS;
    if (c->n <= 2 && w->dt == GOLDEN_BF16) { /* stream the weights once, no converted copy */
        for (int64_t t = 0; t < c->n; t++)
            for (int64_t r = 0; r < nr; r += 4) {
                const uint16_t *wr = (const uint16_t *)w->data + (r0 + r) * K;
                int q = nr - r < 4 ? (int)(nr - r) : 4;
#if defined(__x86_64__)
                if (use_avx2) {
                    rows_bf16_avx2(wr, K, q, c->x + t * K, c->y + t * c->ldy + r0 + r);
                    continue;
                }
#endif
                for (int k = 0; k < q; k++)
                    c->y[t * c->ldy + r0 + r + k] = dot_bf16(wr + k * K, c->x + t * K, K);
            }
        return 0;
    }
    float *tile = m->scratch + (size_t)worker * MM_SCRATCH(m->max_cols);
    float *part = tile + MM_ROWS * m->max_cols, *tp = part + MM_PART;
#if defined(__x86_64__)
    if (use_zmm && w->dt == GOLDEN_BF16) /* widened straight into row pairs */
        widen_pairs_bf16(w, r0, nr, tile, tp);
    else
#endif
        for (int64_t r = 0; r < nr; r++)
            cpu_weight_row(w, r0 + r, tile + r * K);
#if defined(__x86_64__)
    if (use_avx2) {
        /* the tile this worker will most likely take next: the next `threads` items are shared
         * out in order */
        const char *pf = NULL;
        int64_t pf_lines = 0;
        size_t next = item + (size_t)m->threads;
        if (next < m->first_item[m->n_jobs]) {
            int64_t nr0;
            const cpu_weight *nw = m->jobs[mm_job(m, next, &nr0)].w;
            int64_t nn = nw->rows - nr0 < MM_ROWS ? nw->rows - nr0 : MM_ROWS;
            size_t es = nw->dt == GOLDEN_F32 ? 4 : 2;
            pf = (const char *)nw->data + (size_t)(nr0 * nw->cols) * es;
            pf_lines = (int64_t)(((size_t)(nn * nw->cols) * es + 63) / 64);
        }
        if (use_zmm) {
            if (w->dt != GOLDEN_BF16)
                pack_pairs(tile, K, nr, tp);
            tile_zmm(c, tile, tp, K, r0, nr, part, pf, pf_lines);
        } else
            tile_avx2(c, tile, K, r0, nr, part, pf, pf_lines);
        return 0;
    }
#endif
    for (int64_t t = 0; t < c->n; t++) {
        const float *xt = c->x + t * K;
        float *yt = c->y + t * c->ldy + r0;
        for (int64_t r = 0; r < nr; r++)
            yt[r] = dot(tile + r * K, xt, K);
    }
    return 0;
}

int cpu_matmul_batch(const cpu_matmul_job *jobs, size_t n_jobs, int threads, golden_error *err)
{
    if (n_jobs == 0)
        return 0;
    mm_ctx m = {jobs, n_jobs, malloc((n_jobs + 1) * sizeof(size_t)), 0, NULL, 1};
    if (!m.first_item)
        return golden_fail_what(err, GOLDEN_ENOMEM, "cpu backend", "out of memory");
    double work = 0;
    m.first_item[0] = 0;
    for (size_t j = 0; j < n_jobs; j++) {
        const cpu_weight *w = jobs[j].w;
        m.first_item[j + 1] = m.first_item[j] + (size_t)((w->rows + MM_ROWS - 1) / MM_ROWS);
        if (w->cols > m.max_cols)
            m.max_cols = w->cols;
        work += (double)w->rows * (double)w->cols * (double)jobs[j].n;
    }
    size_t items = m.first_item[n_jobs];
    if (threads < 1)
        threads = 1;
    if ((int64_t)items < threads)
        threads = (int)items;
    /* Small products are not worth waking a second worker for. */
    if (work < 65536.0)
        threads = 1;
    m.threads = threads;
    /* 64-byte aligned tiles and chains (max_cols rounded up to 16 floats) */
    m.max_cols = (m.max_cols + 15) / 16 * 16;
    m.scratch = aligned_alloc(64, (size_t)threads * MM_SCRATCH(m.max_cols) * sizeof(float));
    int rc = m.scratch ? lg_parallel_for(items, threads, mm_item, &m, err)
                       : golden_fail_what(err, GOLDEN_ENOMEM, "cpu backend", "out of memory");
    free(m.scratch);
    free(m.first_item);
    return rc;
}

int cpu_matmul(const cpu_weight *w, const float *x, int64_t n, float *y, int64_t ldy,
               int threads, golden_error *err)
{
    cpu_matmul_job j = {w, x, n, y, ldy};
    return cpu_matmul_batch(&j, 1, threads, err);
}

void cpu_rmsnorm(const float *x, const cpu_weight *w, int64_t n, double eps, float *y)
{
    float sum = 0;
    for (int64_t i = 0; i < n; i++)
        sum += x[i] * x[i];
    float r = 1.0f / sqrtf(sum / (float)n + (float)eps);
    for (int64_t i = 0; i < n; i++) {
        float wi = w->dt == GOLDEN_F32    ? ((const float *)w->data)[i]
                   : w->dt == GOLDEN_BF16 ? bf16f(((const uint16_t *)w->data)[i])
                                          : cpu_f16_table[((const uint16_t *)w->data)[i]];
        y[i] = x[i] * r * wi;
    }
}

void cpu_round_bf16(float *x, size_t n)
{
    for (size_t i = 0; i < n; i++)
        x[i] = bf16f(golden_f32_to_bf16(x[i]));
}

/* ---- attention: one (position, KV head) with every query head of its group ---- */

/* q . k over one head with eight partial sums; the order every score is summed in, whichever
 * path computes it: lane m sums dims m, m+8, ... (mul then add), then
 * ((l0+l4)+(l1+l5))+((l2+l6)+(l3+l7)), then the tail dims in order. */
static float head_dot(const float *a, const float *b, int n)
{
    v8f acc = {0};
    int i = 0;
    for (; i + 8 <= n; i += 8) {
        v8f x, y;
        memcpy(&x, a + i, 32);
        memcpy(&y, b + i, 32);
        acc += x * y;
    }
    float d = ((acc[0] + acc[4]) + (acc[1] + acc[5])) + ((acc[2] + acc[6]) + (acc[3] + acc[7]));
    for (; i < n; i++)
        d += a[i] * b[i];
    return d;
}

/* o += p * v over one head (each element's own sum over keys, in key order). */
static void head_axpy(float *o, float p, const float *v, int n)
{
    int i = 0;
    v8f pv = {p, p, p, p, p, p, p, p};
    for (; i + 8 <= n; i += 8) {
        v8f a, b;
        memcpy(&a, o + i, 32);
        memcpy(&b, v + i, 32);
        a += pv * b;
        memcpy(o + i, &a, 32);
    }
    for (; i < n; i++)
        o[i] += p * v[i];
}

/* Softmax of one head's scores in place: the max, exp(s - max) summed in key order, then
 * the probabilities s / sum. */
static void softmax_row(float *s, int64_t n)
{
    float mx = -INFINITY;
    for (int64_t j = 0; j < n; j++)
        if (s[j] > mx)
            mx = s[j];
    float sum = 0;
    for (int64_t j = 0; j < n; j++) {
        s[j] = expf(s[j] - mx);
        sum += s[j];
    }
    for (int64_t j = 0; j < n; j++)
        s[j] = s[j] / sum;
}

static void attend_portable(const float *q, int G, int hd, const float *K, const float *V,
                            int64_t kd, int64_t n, float scale, float *o, float *s)
{
    for (int g = 0; g < G; g++) {
        float *sg = s + (size_t)g * (size_t)n;
        for (int64_t j = 0; j < n; j++)
            sg[j] = head_dot(q + (size_t)g * hd, K + j * kd, hd) * scale;
        softmax_row(sg, n);
        float *og = o + (size_t)g * hd;
        memset(og, 0, (size_t)hd * 4);
        for (int64_t j = 0; j < n; j++)
            head_axpy(og, sg[j], V + j * kd, hd);
    }
}

#if defined(__x86_64__)
#define ATT_VTILE 64 /* keys per pass of the V accumulation: a 64-key tile of V stays in L1/L2 */

/* The scores of one head against up to 8 keys, from r[key] (lane m: the key's sum over dims m,
 * m+8, ... of the 8-chunks below hd8): transposed and added in the fixed order (lane k of the
 * result: key k), the tail dims hd8..hd added in order, scaled, the first nk stored at row. The
 * end of scores8_avx2 and of scores8_zmm, whose lane sums are the same bits. */
__attribute__((target("avx2,fma"), always_inline)) static inline void
score_row8(const __m256 *r, const float *qh, const float *K, int64_t kd, int nk, int hd8, int hd,
           float scale, float *row)
{
    __m256 t0 = _mm256_unpacklo_ps(r[0], r[1]), t1 = _mm256_unpackhi_ps(r[0], r[1]);
    __m256 t2 = _mm256_unpacklo_ps(r[2], r[3]), t3 = _mm256_unpackhi_ps(r[2], r[3]);
    __m256 t4 = _mm256_unpacklo_ps(r[4], r[5]), t5 = _mm256_unpackhi_ps(r[4], r[5]);
    __m256 t6 = _mm256_unpacklo_ps(r[6], r[7]), t7 = _mm256_unpackhi_ps(r[6], r[7]);
    __m256 u0 = _mm256_shuffle_ps(t0, t2, 0x44), u1 = _mm256_shuffle_ps(t0, t2, 0xEE);
    __m256 u2 = _mm256_shuffle_ps(t1, t3, 0x44), u3 = _mm256_shuffle_ps(t1, t3, 0xEE);
    __m256 u4 = _mm256_shuffle_ps(t4, t6, 0x44), u5 = _mm256_shuffle_ps(t4, t6, 0xEE);
    __m256 u6 = _mm256_shuffle_ps(t5, t7, 0x44), u7 = _mm256_shuffle_ps(t5, t7, 0xEE);
    __m256 l0 = _mm256_permute2f128_ps(u0, u4, 0x20), l4 = _mm256_permute2f128_ps(u0, u4, 0x31);
    __m256 l1 = _mm256_permute2f128_ps(u1, u5, 0x20), l5 = _mm256_permute2f128_ps(u1, u5, 0x31);
    __m256 l2 = _mm256_permute2f128_ps(u2, u6, 0x20), l6 = _mm256_permute2f128_ps(u2, u6, 0x31);
    __m256 l3 = _mm256_permute2f128_ps(u3, u7, 0x20), l7 = _mm256_permute2f128_ps(u3, u7, 0x31);
    __m256 d = _mm256_add_ps(_mm256_add_ps(_mm256_add_ps(l0, l4), _mm256_add_ps(l1, l5)),
                             _mm256_add_ps(_mm256_add_ps(l2, l6), _mm256_add_ps(l3, l7)));
    for (int i = hd8; i < hd; i++) { /* tail dims in order, one key a lane */
        float kc[8] = {0};
        for (int kt = 0; kt < nk; kt++)
            kc[kt] = K[kt * kd + i];
        d = _mm256_add_ps(d, _mm256_mul_ps(_mm256_set1_ps(qh[i]), _mm256_loadu_ps(kc)));
    }
    d = _mm256_mul_ps(d, _mm256_set1_ps(scale));
    float out[8];
    _mm256_storeu_ps(out, d);
    memcpy(row, out, (size_t)nk * 4);
}

/* Scores of up to 8 keys (nk) for every head of the group: each key's row chunk is loaded
 * once for all G heads; the 8 lane sums of each (head, key) are the ones head_dot builds (mul
 * then add, no FMA), and an 8 x 8 transpose turns its fixed horizontal sum into vertical adds
 * over 8 keys at once. */
__attribute__((target("avx2,fma"))) static void scores8_avx2(const float *q, int G, int hd,
                                                             const float *K, int64_t kd, int nk,
                                                             float scale, float *s, int64_t ld)
{
    int hd8 = hd & ~7;
    for (int g = 0; g < G; g += 4) {
        int gn = G - g < 4 ? G - g : 4;
        const float *qg = q + (size_t)g * hd;
        __m256 acc[4][8];
        int kk = 0;
        if (gn == 4) /* two keys at a time: 8 independent add chains hide the add latency */
            for (; kk + 2 <= nk; kk += 2) {
                const float *kr = K + kk * kd, *ks = kr + kd;
                __m256 a0 = _mm256_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
                __m256 b0 = a0, b1 = a0, b2 = a0, b3 = a0;
                for (int i = 0; i < hd8; i += 8) {
                    __m256 kv = _mm256_loadu_ps(kr + i), kw = _mm256_loadu_ps(ks + i);
                    __m256 q0 = _mm256_loadu_ps(qg + i), q1 = _mm256_loadu_ps(qg + hd + i);
                    a0 = _mm256_add_ps(a0, _mm256_mul_ps(q0, kv));
                    b0 = _mm256_add_ps(b0, _mm256_mul_ps(q0, kw));
                    a1 = _mm256_add_ps(a1, _mm256_mul_ps(q1, kv));
                    b1 = _mm256_add_ps(b1, _mm256_mul_ps(q1, kw));
                    __m256 q2 = _mm256_loadu_ps(qg + 2 * hd + i),
                           q3 = _mm256_loadu_ps(qg + 3 * hd + i);
                    a2 = _mm256_add_ps(a2, _mm256_mul_ps(q2, kv));
                    b2 = _mm256_add_ps(b2, _mm256_mul_ps(q2, kw));
                    a3 = _mm256_add_ps(a3, _mm256_mul_ps(q3, kv));
                    b3 = _mm256_add_ps(b3, _mm256_mul_ps(q3, kw));
                }
                acc[0][kk] = a0, acc[1][kk] = a1, acc[2][kk] = a2, acc[3][kk] = a3;
                acc[0][kk + 1] = b0, acc[1][kk + 1] = b1, acc[2][kk + 1] = b2;
                acc[3][kk + 1] = b3;
            }
        for (; kk < 8; kk++) {
            __m256 a0 = _mm256_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
            if (kk < nk) {
                const float *kr = K + kk * kd;
                for (int i = 0; i < hd8; i += 8) {
                    __m256 kv = _mm256_loadu_ps(kr + i);
                    a0 = _mm256_add_ps(a0, _mm256_mul_ps(_mm256_loadu_ps(qg + i), kv));
                    if (gn > 1)
                        a1 = _mm256_add_ps(a1, _mm256_mul_ps(_mm256_loadu_ps(qg + hd + i), kv));
                    if (gn > 2)
                        a2 = _mm256_add_ps(a2,
                                           _mm256_mul_ps(_mm256_loadu_ps(qg + 2 * hd + i), kv));
                    if (gn > 3)
                        a3 = _mm256_add_ps(a3,
                                           _mm256_mul_ps(_mm256_loadu_ps(qg + 3 * hd + i), kv));
                }
            }
            acc[0][kk] = a0;
            acc[1][kk] = a1;
            acc[2][kk] = a2;
            acc[3][kk] = a3;
        }
        for (int h = 0; h < gn; h++) {
            __m256 *r = acc[h]; /* r[key]: lane m = dims m, m+8, ... of that key */
            score_row8(r, qg + (size_t)h * hd, K, kd, nk, hd8, hd, scale,
                       s + (size_t)(g + h) * (size_t)ld);
        }
    }
}

/* scores8_avx2 for G a multiple of 8 with the query heads packed in pairs (pair h, 8-chunk i
 * at qp + h * 2 * hd8 + 2 * i: [head 2h dims i..i+7 | head 2h+1 dims i..i+7]): a key's chunk
 * broadcast to both halves (a load, no shuffle), so each half of a zmm sum is exactly the ymm
 * lane sums of that (head, key), mul then add; then the same transpose, tail and scale. */
#define SC_ACC(a, qv, kv) a = _mm512_add_ps(a, _mm512_mul_ps(qv, kv))
__attribute__((target("avx2,fma,avx512f,avx512vl"))) static void
scores8_zmm(const float *qp, const float *q, int G, int hd, const float *K, int64_t kd, int nk,
            float scale, float *s, int64_t ld)
{
    int hd8 = hd & ~7;
    float buf[4 * 8 * 16] __attribute__((aligned(64))); /* [pair][key][16] */
    for (int g = 0; g < G; g += 8) {
        const float *qg = qp + (size_t)g * hd8;
        for (int kk = 0; kk < 8; kk += 2) {
            __m512 a0 = _mm512_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
            __m512 b0 = a0, b1 = a0, b2 = a0, b3 = a0;
            if (kk + 1 < nk) {
                const float *kr = K + kk * kd, *ks = kr + kd;
                for (int i = 0; i < hd8; i += 8) {
                    __m512 kv = _mm512_castpd_ps(
                        _mm512_broadcast_f64x4(_mm256_loadu_pd((const double *)(kr + i))));
                    __m512 kw = _mm512_castpd_ps(
                        _mm512_broadcast_f64x4(_mm256_loadu_pd((const double *)(ks + i))));
                    __m512 q0 = _mm512_loadu_ps(qg + 2 * i),
                           q1 = _mm512_loadu_ps(qg + 2 * hd8 + 2 * i);
                    SC_ACC(a0, q0, kv);
                    SC_ACC(b0, q0, kw);
                    SC_ACC(a1, q1, kv);
                    SC_ACC(b1, q1, kw);
                    __m512 q2 = _mm512_loadu_ps(qg + 4 * hd8 + 2 * i),
                           q3 = _mm512_loadu_ps(qg + 6 * hd8 + 2 * i);
                    SC_ACC(a2, q2, kv);
                    SC_ACC(b2, q2, kw);
                    SC_ACC(a3, q3, kv);
                    SC_ACC(b3, q3, kw);
                }
            } else if (kk < nk) {
                const float *kr = K + kk * kd;
                for (int i = 0; i < hd8; i += 8) {
                    __m512 kv = _mm512_castpd_ps(
                        _mm512_broadcast_f64x4(_mm256_loadu_pd((const double *)(kr + i))));
                    SC_ACC(a0, _mm512_loadu_ps(qg + 2 * i), kv);
                    SC_ACC(a1, _mm512_loadu_ps(qg + 2 * hd8 + 2 * i), kv);
                    SC_ACC(a2, _mm512_loadu_ps(qg + 4 * hd8 + 2 * i), kv);
                    SC_ACC(a3, _mm512_loadu_ps(qg + 6 * hd8 + 2 * i), kv);
                }
            }
            _mm512_store_ps(buf + (0 * 8 + kk) * 16, a0);
            _mm512_store_ps(buf + (1 * 8 + kk) * 16, a1);
            _mm512_store_ps(buf + (2 * 8 + kk) * 16, a2);
            _mm512_store_ps(buf + (3 * 8 + kk) * 16, a3);
            _mm512_store_ps(buf + (0 * 8 + kk + 1) * 16, b0);
            _mm512_store_ps(buf + (1 * 8 + kk + 1) * 16, b1);
            _mm512_store_ps(buf + (2 * 8 + kk + 1) * 16, b2);
            _mm512_store_ps(buf + (3 * 8 + kk + 1) * 16, b3);
        }
        for (int h = 0; h < 8; h++) {
            __m256 r[8]; /* r[key]: lane m = dims m, m+8, ... of that key */
            for (int k = 0; k < 8; k++)
                r[k] = _mm256_load_ps(buf + ((h / 2) * 8 + k) * 16 + (h & 1) * 8);
            score_row8(r, q + (size_t)(g + h) * hd, K, kd, nk, hd8, hd, scale,
                       s + (size_t)(g + h) * (size_t)ld);
        }
    }
}

/* A position's G query heads (hd dims each) packed in pairs for scores8_zmm. */
__attribute__((target("avx2,fma"))) static void pack_heads(const float *q, int G, int hd,
                                                           float *qp)
{
    int hd8 = hd & ~7;
    for (int h = 0; h < G; h++)
        for (int i = 0; i < hd8; i += 8)
            _mm256_storeu_ps(qp + (size_t)(h / 2) * 2 * hd8 + 2 * i + (h & 1) * 8,
                             _mm256_loadu_ps(q + (size_t)h * hd + i));
}

/* o_g += p_g[j] * v_j for keys [j0, j1), every head of the group against each V chunk loaded
 * once; per element the sum still runs over keys in order, mul then add. */
__attribute__((target("avx2,fma"))) static void pv_tile_avx2(const float *p, int64_t ld, int G,
                                                             int hd, const float *V, int64_t kd,
                                                             int64_t j0, int64_t j1, float *o,
                                                             int i0)
{
    int hd8 = hd & ~7;
    for (int i = i0; i < hd8; i += 8) {
        for (int g = 0; g < G; g += 8) {
            int gn = G - g < 8 ? G - g : 8;
            __m256 a[8];
            for (int h = 0; h < gn; h++)
                a[h] = _mm256_loadu_ps(o + (size_t)(g + h) * hd + i);
            const float *pg = p + (size_t)g * (size_t)ld;
            if (gn == 8) { /* spelled out: eight accumulators in registers, not in memory */
                __m256 a0 = a[0], a1 = a[1], a2 = a[2], a3 = a[3], a4 = a[4], a5 = a[5],
                       a6 = a[6], a7 = a[7];
                const float *p0 = pg, *p1 = pg + ld, *p2 = pg + 2 * ld, *p3 = pg + 3 * ld,
                            *p4 = pg + 4 * ld, *p5 = pg + 5 * ld, *p6 = pg + 6 * ld,
                            *p7 = pg + 7 * ld;
                for (int64_t j = j0; j < j1; j++) {
                    __m256 v = _mm256_loadu_ps(V + j * kd + i);
                    a0 = _mm256_add_ps(a0, _mm256_mul_ps(_mm256_broadcast_ss(p0 + j), v));
                    a1 = _mm256_add_ps(a1, _mm256_mul_ps(_mm256_broadcast_ss(p1 + j), v));
                    a2 = _mm256_add_ps(a2, _mm256_mul_ps(_mm256_broadcast_ss(p2 + j), v));
                    a3 = _mm256_add_ps(a3, _mm256_mul_ps(_mm256_broadcast_ss(p3 + j), v));
                    a4 = _mm256_add_ps(a4, _mm256_mul_ps(_mm256_broadcast_ss(p4 + j), v));
                    a5 = _mm256_add_ps(a5, _mm256_mul_ps(_mm256_broadcast_ss(p5 + j), v));
                    a6 = _mm256_add_ps(a6, _mm256_mul_ps(_mm256_broadcast_ss(p6 + j), v));
                    a7 = _mm256_add_ps(a7, _mm256_mul_ps(_mm256_broadcast_ss(p7 + j), v));
                }
                a[0] = a0, a[1] = a1, a[2] = a2, a[3] = a3, a[4] = a4, a[5] = a5, a[6] = a6;
                a[7] = a7;
            } else {
                for (int64_t j = j0; j < j1; j++) {
                    __m256 v = _mm256_loadu_ps(V + j * kd + i);
                    for (int h = 0; h < gn; h++)
                        a[h] = _mm256_add_ps(a[h],
                                             _mm256_mul_ps(_mm256_broadcast_ss(pg + h * ld + j), v));
                }
            }
            for (int h = 0; h < gn; h++)
                _mm256_storeu_ps(o + (size_t)(g + h) * hd + i, a[h]);
        }
    }
    for (int g = 0; g < G; g++)
        for (int i = hd8; i < hd; i++) {
            float acc = o[(size_t)g * hd + i];
            for (int64_t j = j0; j < j1; j++)
                acc += p[(size_t)g * (size_t)ld + j] * V[j * kd + i];
            o[(size_t)g * hd + i] = acc;
        }
}

/* pv_tile_avx2's sums 16 dims at a time (each element its own mul-then-add sum over keys in
 * order: the lanes are independent, so the width does not change a bit), dims from
 * hd & ~15 on by pv_tile_avx2. */
#define PV16_ACC(h) a##h = _mm512_add_ps(a##h, _mm512_mul_ps(_mm512_set1_ps(p##h[j]), v))
__attribute__((target("avx2,fma,avx512f,avx512vl"))) static void
pv_tile_zmm(const float *p, int64_t ld, int G, int hd, const float *V, int64_t kd, int64_t j0,
            int64_t j1, float *o)
{
    int hd16 = hd & ~15;
    for (int i = 0; i < hd16; i += 16) {
        for (int g = 0; g < G; g += 8) {
            int gn = G - g < 8 ? G - g : 8;
            const float *pg = p + (size_t)g * (size_t)ld;
            float *og = o + (size_t)g * hd + i;
            if (gn == 8) {
                __m512 a0 = _mm512_loadu_ps(og), a1 = _mm512_loadu_ps(og + hd),
                       a2 = _mm512_loadu_ps(og + 2 * hd), a3 = _mm512_loadu_ps(og + 3 * hd),
                       a4 = _mm512_loadu_ps(og + 4 * hd), a5 = _mm512_loadu_ps(og + 5 * hd),
                       a6 = _mm512_loadu_ps(og + 6 * hd), a7 = _mm512_loadu_ps(og + 7 * hd);
                const float *p0 = pg, *p1 = pg + ld, *p2 = pg + 2 * ld, *p3 = pg + 3 * ld,
                            *p4 = pg + 4 * ld, *p5 = pg + 5 * ld, *p6 = pg + 6 * ld,
                            *p7 = pg + 7 * ld;
                for (int64_t j = j0; j < j1; j++) {
                    __m512 v = _mm512_loadu_ps(V + j * kd + i);
                    PV16_ACC(0);
                    PV16_ACC(1);
                    PV16_ACC(2);
                    PV16_ACC(3);
                    PV16_ACC(4);
                    PV16_ACC(5);
                    PV16_ACC(6);
                    PV16_ACC(7);
                }
                _mm512_storeu_ps(og, a0), _mm512_storeu_ps(og + hd, a1);
                _mm512_storeu_ps(og + 2 * hd, a2), _mm512_storeu_ps(og + 3 * hd, a3);
                _mm512_storeu_ps(og + 4 * hd, a4), _mm512_storeu_ps(og + 5 * hd, a5);
                _mm512_storeu_ps(og + 6 * hd, a6), _mm512_storeu_ps(og + 7 * hd, a7);
            } else
                for (int h = 0; h < gn; h++) {
                    __m512 a = _mm512_loadu_ps(og + (size_t)h * hd);
                    for (int64_t j = j0; j < j1; j++)
                        a = _mm512_add_ps(a, _mm512_mul_ps(_mm512_set1_ps(pg[h * ld + j]),
                                                           _mm512_loadu_ps(V + j * kd + i)));
                    _mm512_storeu_ps(og + (size_t)h * hd, a);
                }
        }
    }
    pv_tile_avx2(p, ld, G, hd, V, kd, j0, j1, o, hd16);
}

__attribute__((target("avx2,fma"))) static void pv_tile_avx2_0(const float *p, int64_t ld,
                                                               int G, int hd, const float *V,
                                                               int64_t kd, int64_t j0,
                                                               int64_t j1, float *o)
{
    pv_tile_avx2(p, ld, G, hd, V, kd, j0, j1, o, 0);
}

/* The two ends the softmax rows share: the largest of s[0..n) (8 at a time, NaNs skipped as
 * `s[j] > mx` skips them), and every s[j] divided by sum (elementwise: the scalar bits). */
__attribute__((target("avx2,fma"), always_inline)) static inline float
row_max_avx2(const float *s, int64_t n)
{
    __m256 m8 = _mm256_set1_ps(-INFINITY);
    int64_t j = 0;
    for (; j + 8 <= n; j += 8)
        m8 = _mm256_max_ps(_mm256_loadu_ps(s + j), m8);
    float mv[8], mx = -INFINITY;
    _mm256_storeu_ps(mv, m8);
    for (int k = 0; k < 8; k++)
        if (mv[k] > mx)
            mx = mv[k];
    for (; j < n; j++)
        if (s[j] > mx)
            mx = s[j];
    return mx;
}

__attribute__((target("avx2,fma"), always_inline)) static inline void
row_div_avx2(float *s, int64_t n, float sum)
{
    __m256 d8 = _mm256_set1_ps(sum);
    int64_t j = 0;
    for (; j + 8 <= n; j += 8)
        _mm256_storeu_ps(s + j, _mm256_div_ps(_mm256_loadu_ps(s + j), d8));
    for (; j < n; j++)
        s[j] = s[j] / sum;
}

/* softmax_row with the max and the division 8 keys at a time. The division is elementwise;
 * the max skips NaNs as `s[j] > mx` does (max_ps(x, m) is m unless x > m) and can differ
 * from the scalar one only in the sign of a zero, which no s[j] - max changes (x - 0 = x for
 * x != 0, and expf(+-0) = 1). The exps and their sum stay scalar, in key order. */
__attribute__((target("avx2,fma"))) static void softmax_row_avx2(float *s, int64_t n)
{
    float mx = row_max_avx2(s, n), sum = 0;
    int64_t j;
    for (j = 0; j < n; j++) {
        s[j] = expf(s[j] - mx);
        sum += s[j];
    }
    row_div_avx2(s, n, sum);
}

/* expf of 8 floats at once, glibc's expf (2.36, its FMA build __expf_fma) step for step in
 * double lanes: the same table (2^(i/32) less i << 47), constants, FMAs and roundings, so the
 * same bits. Lanes glibc sends down its special path (|x| >= 88 by the top bits, NaN, inf)
 * are flagged in *special and left to expf itself. tests/unit/test_replay_kernels.c checks
 * this against expf over a spread of every float pattern. */
static const uint64_t expf_tab[32] = {
    0x3ff0000000000000, 0x3fefd9b0d3158574, 0x3fefb5586cf9890f, 0x3fef9301d0125b51,
    0x3fef72b83c7d517b, 0x3fef54873168b9aa, 0x3fef387a6e756238, 0x3fef1e9df51fdee1,
    0x3fef06fe0a31b715, 0x3feef1a7373aa9cb, 0x3feedea64c123422, 0x3feece086061892d,
    0x3feebfdad5362a27, 0x3feeb42b569d4f82, 0x3feeab07dd485429, 0x3feea47eb03a5585,
    0x3feea09e667f3bcd, 0x3fee9f75e8ec5f74, 0x3feea11473eb0187, 0x3feea589994cce13,
    0x3feeace5422aa0db, 0x3feeb737b0cdc5e5, 0x3feec49182a3f090, 0x3feed503b23e255d,
    0x3feee89f995ad3ad, 0x3feeff76f2fb5e47, 0x3fef199bdd85529c, 0x3fef3720dcef9069,
    0x3fef5818dcfba487, 0x3fef7c97337b9b5f, 0x3fefa4afa2a490da, 0x3fefd0765b6e4540};

__attribute__((target("avx2,fma,avx512f,avx512vl"))) static inline __m256
expf8_zmm(__m256 x, __mmask8 *special)
{
    __m256i top = _mm256_and_si256(_mm256_srli_epi32(_mm256_castps_si256(x), 20),
                                   _mm256_set1_epi32(0x7ff));
    *special = _mm256_cmpgt_epi32_mask(top, _mm256_set1_epi32(0x42a));
    const __m512d inv_ln2n = _mm512_castsi512_pd(_mm512_set1_epi64(0x40471547652b82fe)),
                  shift = _mm512_castsi512_pd(_mm512_set1_epi64(0x4338000000000000)),
                  c0 = _mm512_castsi512_pd(_mm512_set1_epi64(0x3ebc6af84b912394)),
                  c1 = _mm512_castsi512_pd(_mm512_set1_epi64(0x3f2ebfce50fac4f3)),
                  c2 = _mm512_castsi512_pd(_mm512_set1_epi64(0x3f962e42ff0c52d6));
    __m512d xd = _mm512_cvtps_pd(x);
    __m512d kd = _mm512_fmadd_pd(inv_ln2n, xd, shift); /* z + SHIFT, z = InvLn2N * x fused */
    __m512i ki = _mm512_castpd_si512(kd);
    kd = _mm512_sub_pd(kd, shift);
    __m512d r = _mm512_fmsub_pd(inv_ln2n, xd, kd); /* z - kd, z fused again */
    __m512i lo = _mm512_permutex2var_epi64(_mm512_loadu_si512(expf_tab), ki,
                                           _mm512_loadu_si512(expf_tab + 8));
    __m512i hi = _mm512_permutex2var_epi64(_mm512_loadu_si512(expf_tab + 16), ki,
                                           _mm512_loadu_si512(expf_tab + 24));
    __m512i t = _mm512_mask_blend_epi64(_mm512_test_epi64_mask(ki, _mm512_set1_epi64(16)), lo,
                                        hi); /* T[ki % 32] */
    t = _mm512_add_epi64(t, _mm512_slli_epi64(ki, 47));
    __m512d z = _mm512_fmadd_pd(r, c0, c1);
    __m512d r2 = _mm512_mul_pd(r, r);
    __m512d y = _mm512_fmadd_pd(r, c2, _mm512_set1_pd(1.0));
    y = _mm512_fmadd_pd(z, r2, y);
    y = _mm512_mul_pd(y, _mm512_castsi512_pd(t));
    return _mm512_cvtpd_ps(y);
}

/* y[i] = expf(x[i]) through expf8_zmm (the special lanes by expf): for the unit test. */
__attribute__((target("avx2,fma,avx512f,avx512vl"))) static void expf_zmm(const float *x,
                                                                          float *y, int64_t n)
{
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        __mmask8 sp;
        _mm256_storeu_ps(y + i, expf8_zmm(_mm256_loadu_ps(x + i), &sp));
        for (int k = 0; sp; k++, sp >>= 1)
            if (sp & 1)
                y[i + k] = expf(x[i + k]);
    }
    for (; i < n; i++)
        y[i] = expf(x[i]);
}

/* softmax_row_avx2 with the exps 8 at a time (expf8_zmm: expf's bits); the sum still adds
 * them one by one in key order. */
__attribute__((target("avx2,fma,avx512f,avx512vl"))) static void softmax_row_zmm(float *s,
                                                                                 int64_t n)
{
    float mx = row_max_avx2(s, n), sum = 0;
    int64_t j;
    __m256 mx8 = _mm256_set1_ps(mx);
    for (j = 0; j + 8 <= n; j += 8) {
        __m256 xv = _mm256_sub_ps(_mm256_loadu_ps(s + j), mx8);
        __mmask8 sp;
        _mm256_storeu_ps(s + j, expf8_zmm(xv, &sp));
        if (sp) {
            float xs[8];
            _mm256_storeu_ps(xs, xv);
            for (int k = 0; k < 8; k++)
                if (sp >> k & 1)
                    s[j + k] = expf(xs[k]);
        }
        for (int k = 0; k < 8; k++)
            sum += s[j + k];
    }
    for (; j < n; j++) {
        s[j] = expf(s[j] - mx);
        sum += s[j];
    }
    row_div_avx2(s, n, sum);
}

/* P positions of one KV head: keys 8 at a time for every position that reaches them (an
 * 8-key block of K loaded once from L2 serves all P x G query heads from L1), then V in
 * 64-key tiles the same way. Each position's scores, softmax and sums are those of attending
 * it alone: the blocking only changes which data is in cache. */
__attribute__((target("avx2,fma"))) static void attend_block_avx2(
    const float *q, int P, int64_t qs, int G, int hd, const float *K, const float *V, int64_t kd,
    const int64_t *n, float scale, float *o, int64_t os, float *s, int64_t ld)
{
    int64_t nmax = 0;
    for (int i = 0; i < P; i++)
        nmax = n[i] > nmax ? n[i] : nmax;
    /* the zmm scores: groups of 8 heads, every position's heads packed (at most 32 KiB) */
    float qp[8192] __attribute__((aligned(64)));
    int hd8 = hd & ~7;
    bool zs = use_zmm && G % 8 == 0 && hd8 > 0 && (int64_t)P * G * hd8 <= 8192;
    if (zs)
        for (int i = 0; i < P; i++)
            pack_heads(q + i * qs, G, hd, qp + (size_t)i * G * hd8);
    for (int64_t j = 0; j < nmax; j += 8)
        for (int i = 0; i < P; i++)
            if (j < n[i] && zs)
                scores8_zmm(qp + (size_t)i * G * hd8, q + i * qs, G, hd, K + j * kd, kd,
                            n[i] - j < 8 ? (int)(n[i] - j) : 8, scale,
                            s + (size_t)i * (size_t)G * (size_t)ld + j, ld);
            else if (j < n[i])
                scores8_avx2(q + i * qs, G, hd, K + j * kd, kd, n[i] - j < 8 ? (int)(n[i] - j) : 8,
                             scale, s + (size_t)i * (size_t)G * (size_t)ld + j, ld);
    for (int i = 0; i < P; i++) {
        for (int g = 0; g < G; g++)
            (use_zmm ? softmax_row_zmm : softmax_row_avx2)(
                s + ((size_t)i * (size_t)G + (size_t)g) * (size_t)ld, n[i]);
        memset(o + i * os, 0, (size_t)G * (size_t)hd * 4);
    }
    for (int64_t j = 0; j < nmax; j += ATT_VTILE)
        for (int i = 0; i < P; i++)
            if (j < n[i])
                (use_zmm ? pv_tile_zmm : pv_tile_avx2_0)(
                    s + (size_t)i * (size_t)G * (size_t)ld, ld, G, hd, V, kd, j,
                    n[i] - j < ATT_VTILE ? n[i] : j + ATT_VTILE, o + i * os);
}
#endif

bool cpu_expf_vec(const float *x, float *y, int64_t n)
{
    cpu_kernels_init();
#if defined(__x86_64__)
    if (use_zmm) {
        expf_zmm(x, y, n);
        return true;
    }
#endif
    for (int64_t i = 0; i < n; i++)
        y[i] = expf(x[i]);
    return false;
}

void cpu_attend_block(const float *q, int P, int64_t qs, int G, int hd, const float *K,
                      const float *V, int64_t kd, const int64_t *n, float scale, float *o,
                      int64_t os, float *s, int64_t ld)
{
#if defined(__x86_64__)
    if (use_avx2) {
        attend_block_avx2(q, P, qs, G, hd, K, V, kd, n, scale, o, os, s, ld);
        return;
    }
#endif
    for (int i = 0; i < P; i++)
        attend_portable(q + i * qs, G, hd, K, V, kd, n[i], scale, o + i * os, s);
}

void cpu_attend(const float *q, int G, int hd, const float *K, const float *V, int64_t kd,
                int64_t n, float scale, float *o, float *s)
{
    cpu_attend_block(q, 1, 0, G, hd, K, V, kd, &n, scale, o, 0, s, n);
}
