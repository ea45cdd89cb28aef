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
#endif

#define MM_ROWS 16     /* output rows per work item: one tile of converted weights */
#define MM_TOKENS 16   /* tokens per pass over a tile, so x stays in cache too */

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
