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

static void f16_fill(void)
{
    for (unsigned i = 0; i < 65536; i++)
        cpu_f16_table[i] = (float)golden_f16_to_f64((uint16_t)i); /* exact: f16 fits in f32 */
#if defined(__x86_64__)
    __builtin_cpu_init();
    use_avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
#endif
}

void cpu_kernels_init(void) { pthread_once(&f16_once, f16_fill); }

bool cpu_kernels_use_avx2(int on)
{
    cpu_kernels_init();
    bool was = use_avx2;
#if defined(__x86_64__)
    if (on == 0)
        use_avx2 = false;
    else if (on > 0)
        use_avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
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
/* Four converted rows against three tokens: 12 accumulators, 7 loads per 12 FMAs (the 4 x 2
 * block issues 6 per 8). Each (row, token) keeps the one chain and order of rows_f32_avx2. */
__attribute__((target("avx2,fma"))) static void rows_f32_avx2_4x3(const float *w, int64_t K,
                                                                   const float *const x[3],
                                                                   float *const out[3])
{
    __m256 c00 = _mm256_setzero_ps(), c01 = c00, c02 = c00, c10 = c00, c11 = c00, c12 = c00;
    __m256 c20 = c00, c21 = c00, c22 = c00, c30 = c00, c31 = c00, c32 = c00;
    const float *x0 = x[0], *x1 = x[1], *x2 = x[2];
    const float *w0 = w, *w1 = w + K, *w2 = w + 2 * K, *w3 = w + 3 * K;
    int64_t i = 0;
    for (; i + 8 <= K; i += 8) {
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
    __m256 c[4][3] = {{c00, c01, c02}, {c10, c11, c12}, {c20, c21, c22}, {c30, c31, c32}};
    for (int r = 0; r < 4; r++)
        for (int t = 0; t < 3; t++) {
            float s = hsum256(c[r][t]);
            for (int64_t k = i; k < K; k++)
                s += w[r * K + k] * x[t][k];
            out[t][r] = s;
        }
}

#endif

#define MM_ROWS 16     /* output rows per work item: one tile of converted weights */
#define MM_TOKENS 18   /* tokens per pass over a tile (six 4 x 3 blocks), so x stays in cache too */

typedef struct {
    const cpu_matmul_job *jobs;
    size_t n_jobs;
    size_t *first_item; /* [n_jobs + 1]: item ranges of each job */
    int64_t max_cols;
    float *scratch;     /* [threads][MM_ROWS * max_cols] */
} mm_ctx;

static int mm_item(void *vctx, size_t item, int worker, golden_error *err)
{
    (void)err;
    mm_ctx *m = vctx;
    size_t lo = 0, hi = m->n_jobs - 1; /* the job whose item range holds `item` */
    while (lo < hi) {
        size_t mid = (lo + hi + 1) / 2;
        if (m->first_item[mid] <= item)
            lo = mid;
        else
            hi = mid - 1;
    }
    const cpu_matmul_job *c = &m->jobs[lo];
    const cpu_weight *w = c->w;
    int64_t K = w->cols, r0 = (int64_t)(item - m->first_item[lo]) * MM_ROWS;
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
    float *tile = m->scratch + (size_t)worker * MM_ROWS * (size_t)m->max_cols;
    for (int64_t r = 0; r < nr; r++)
        cpu_weight_row(w, r0 + r, tile + r * K);
    for (int64_t t0 = 0; t0 < c->n; t0 += MM_TOKENS) {
        int64_t t1 = t0 + MM_TOKENS < c->n ? t0 + MM_TOKENS : c->n;
        int64_t t = t0;
#if defined(__x86_64__)
        if (use_avx2) {
            for (; t + 3 <= t1; t += 3) {
                float *y0 = c->y + t * c->ldy + r0;
                const float *const xs[3] = {c->x + t * K, c->x + (t + 1) * K, c->x + (t + 2) * K};
                for (int64_t r = 0; r < nr; r += 4) {
                    if (nr - r >= 4) {
                        float *const ys[3] = {y0 + r, y0 + c->ldy + r, y0 + 2 * c->ldy + r};
                        rows_f32_avx2_4x3(tile + r * K, K, xs, ys);
                    } else {
                        rows_f32_avx2(tile + r * K, K, (int)(nr - r), xs[0], xs[1], y0 + r,
                                      y0 + c->ldy + r);
                        rows_f32_avx2(tile + r * K, K, (int)(nr - r), xs[2], NULL,
                                      y0 + 2 * c->ldy + r, NULL);
                    }
                }
            }
            for (; t < t1; t += 2) {
                bool two = t + 1 < t1;
                float *y0 = c->y + t * c->ldy + r0, *y1 = two ? y0 + c->ldy : NULL;
                for (int64_t r = 0; r < nr; r += 4)
                    rows_f32_avx2(tile + r * K, K, nr - r < 4 ? (int)(nr - r) : 4, c->x + t * K,
                                  two ? c->x + (t + 1) * K : NULL, y0 + r, two ? y1 + r : NULL);
            }
            continue;
        }
#endif
        for (; t < t1; t++) {
            const float *xt = c->x + t * K;
            float *yt = c->y + t * c->ldy + r0;
            for (int64_t r = 0; r < nr; r++)
                yt[r] = dot(tile + r * K, xt, K);
        }
    }
    return 0;
}

int cpu_matmul_batch(const cpu_matmul_job *jobs, size_t n_jobs, int threads, golden_error *err)
{
    if (n_jobs == 0)
        return 0;
    mm_ctx m = {jobs, n_jobs, malloc((n_jobs + 1) * sizeof(size_t)), 0, NULL};
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
    m.scratch = malloc((size_t)threads * MM_ROWS * (size_t)m.max_cols * sizeof(float));
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
        for (int kk = 0; kk < 8; kk++) {
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
            __m256 t0 = _mm256_unpacklo_ps(r[0], r[1]), t1 = _mm256_unpackhi_ps(r[0], r[1]);
            __m256 t2 = _mm256_unpacklo_ps(r[2], r[3]), t3 = _mm256_unpackhi_ps(r[2], r[3]);
            __m256 t4 = _mm256_unpacklo_ps(r[4], r[5]), t5 = _mm256_unpackhi_ps(r[4], r[5]);
            __m256 t6 = _mm256_unpacklo_ps(r[6], r[7]), t7 = _mm256_unpackhi_ps(r[6], r[7]);
            __m256 u0 = _mm256_shuffle_ps(t0, t2, 0x44), u1 = _mm256_shuffle_ps(t0, t2, 0xEE);
            __m256 u2 = _mm256_shuffle_ps(t1, t3, 0x44), u3 = _mm256_shuffle_ps(t1, t3, 0xEE);
            __m256 u4 = _mm256_shuffle_ps(t4, t6, 0x44), u5 = _mm256_shuffle_ps(t4, t6, 0xEE);
            __m256 u6 = _mm256_shuffle_ps(t5, t7, 0x44), u7 = _mm256_shuffle_ps(t5, t7, 0xEE);
            /* lane m of column k: key k's lane sum m */
            __m256 l0 = _mm256_permute2f128_ps(u0, u4, 0x20), l4 = _mm256_permute2f128_ps(u0, u4, 0x31);
            __m256 l1 = _mm256_permute2f128_ps(u1, u5, 0x20), l5 = _mm256_permute2f128_ps(u1, u5, 0x31);
            __m256 l2 = _mm256_permute2f128_ps(u2, u6, 0x20), l6 = _mm256_permute2f128_ps(u2, u6, 0x31);
            __m256 l3 = _mm256_permute2f128_ps(u3, u7, 0x20), l7 = _mm256_permute2f128_ps(u3, u7, 0x31);
            __m256 d = _mm256_add_ps(_mm256_add_ps(_mm256_add_ps(l0, l4), _mm256_add_ps(l1, l5)),
                                     _mm256_add_ps(_mm256_add_ps(l2, l6), _mm256_add_ps(l3, l7)));
            const float *qh = qg + (size_t)h * hd;
            for (int i = hd8; i < hd; i++) { /* tail dims in order, one key a lane */
                float kc[8] = {0};
                for (int kk = 0; kk < nk; kk++)
                    kc[kk] = K[kk * kd + i];
                d = _mm256_add_ps(d, _mm256_mul_ps(_mm256_set1_ps(qh[i]), _mm256_loadu_ps(kc)));
            }
            d = _mm256_mul_ps(d, _mm256_set1_ps(scale));
            float out[8];
            _mm256_storeu_ps(out, d);
            memcpy(s + (size_t)(g + h) * (size_t)ld, out, (size_t)nk * 4);
        }
    }
}

/* o_g += p_g[j] * v_j for keys [j0, j1), every head of the group against each V chunk loaded
 * once; per element the sum still runs over keys in order, mul then add. */
__attribute__((target("avx2,fma"))) static void pv_tile_avx2(const float *p, int64_t ld, int G,
                                                             int hd, const float *V, int64_t kd,
                                                             int64_t j0, int64_t j1, float *o)
{
    int hd8 = hd & ~7;
    for (int i = 0; i < hd8; i += 8) {
        for (int g = 0; g < G; g += 8) {
            int gn = G - g < 8 ? G - g : 8;
            __m256 a[8];
            for (int h = 0; h < gn; h++)
                a[h] = _mm256_loadu_ps(o + (size_t)(g + h) * hd + i);
            const float *pg = p + (size_t)g * (size_t)ld;
            if (gn == 8) {
                for (int64_t j = j0; j < j1; j++) {
                    __m256 v = _mm256_loadu_ps(V + j * kd + i);
                    for (int h = 0; h < 8; h++)
                        a[h] = _mm256_add_ps(a[h],
                                             _mm256_mul_ps(_mm256_broadcast_ss(pg + h * ld + j), v));
                }
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

__attribute__((target("avx2,fma"))) static void attend_avx2(const float *q, int G, int hd,
                                                            const float *K, const float *V,
                                                            int64_t kd, int64_t n, float scale,
                                                            float *o, float *s)
{
    for (int64_t j = 0; j < n; j += 8)
        scores8_avx2(q, G, hd, K + j * kd, kd, n - j < 8 ? (int)(n - j) : 8, scale, s + j, n);
    for (int g = 0; g < G; g++)
        softmax_row(s + (size_t)g * (size_t)n, n);
    memset(o, 0, (size_t)G * (size_t)hd * 4);
    for (int64_t j = 0; j < n; j += ATT_VTILE)
        pv_tile_avx2(s, n, G, hd, V, kd, j, n - j < ATT_VTILE ? n : j + ATT_VTILE, o);
}
#endif

void cpu_attend(const float *q, int G, int hd, const float *K, const float *V, int64_t kd,
                int64_t n, float scale, float *o, float *s)
{
#if defined(__x86_64__)
    if (use_avx2) {
        attend_avx2(q, G, hd, K, V, kd, n, scale, o, s);
        return;
    }
#endif
    attend_portable(q, G, hd, K, V, kd, n, scale, o, s);
}
