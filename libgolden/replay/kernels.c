/* The CPU backend's kernels: exact weight conversion (bf16, f16, f32 -> f32), the
 * cache-blocked parallel matmul over memory-mapped weights, RMSNorm and bf16 rounding. */
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "golden/replay.h"
#include "replay/cpu.h"
#include "util/pool.h"

float cpu_f16_table[65536];
static pthread_once_t f16_once = PTHREAD_ONCE_INIT;

static void f16_fill(void)
{
    for (unsigned i = 0; i < 65536; i++)
        cpu_f16_table[i] = (float)golden_f16_to_f64((uint16_t)i); /* exact: f16 fits in f32 */
}

void cpu_kernels_init(void) { pthread_once(&f16_once, f16_fill); }

static inline float bf16f(uint16_t b)
{
    uint32_t u = (uint32_t)b << 16;
    float f;
    memcpy(&f, &u, 4);
    return f;
}

void cpu_weight_row(const cpu_weight *w, int64_t r, float *dst)
{
    int64_t n = w->cols;
    if (w->dt == GOLDEN_F32) {
        memcpy(dst, (const float *)w->data + r * n, (size_t)n * 4);
    } else if (w->dt == GOLDEN_BF16) {
        const uint16_t *s = (const uint16_t *)w->data + r * n;
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

#define MM_ROWS 16     /* output rows per work item: one tile of converted weights */
#define MM_TOKENS 64   /* tokens per pass over a tile, so x stays in cache too */

typedef struct {
    const cpu_weight *w;
    const float *x;
    int64_t n;
    float *y;
    int64_t ldy;
    float *scratch; /* [threads][MM_ROWS * cols] */
} mm_ctx;

static int mm_item(void *vctx, size_t item, int worker, golden_error *err)
{
    (void)err;
    mm_ctx *c = vctx;
    const cpu_weight *w = c->w;
    int64_t K = w->cols, r0 = (int64_t)item * MM_ROWS;
    int64_t nr = w->rows - r0 < MM_ROWS ? w->rows - r0 : MM_ROWS;
    if (c->n == 1 && w->dt == GOLDEN_BF16) {
        for (int64_t r = 0; r < nr; r++)
            c->y[r0 + r] = dot_bf16((const uint16_t *)w->data + (r0 + r) * K, c->x, K);
        return 0;
    }
    float *tile = c->scratch + (size_t)worker * MM_ROWS * (size_t)K;
    for (int64_t r = 0; r < nr; r++)
        cpu_weight_row(w, r0 + r, tile + r * K);
    for (int64_t t0 = 0; t0 < c->n; t0 += MM_TOKENS) {
        int64_t t1 = t0 + MM_TOKENS < c->n ? t0 + MM_TOKENS : c->n;
        for (int64_t t = t0; t < t1; t++) {
            const float *xt = c->x + t * K;
            float *yt = c->y + t * c->ldy + r0;
            for (int64_t r = 0; r < nr; r++)
                yt[r] = dot(tile + r * K, xt, K);
        }
    }
    return 0;
}

int cpu_matmul(const cpu_weight *w, const float *x, int64_t n, float *y, int64_t ldy,
               int threads, golden_error *err)
{
    size_t items = (size_t)((w->rows + MM_ROWS - 1) / MM_ROWS);
    if (threads < 1)
        threads = 1;
    if ((int64_t)items < threads)
        threads = (int)items;
    /* Small products are not worth waking a second worker for. */
    if ((double)w->rows * (double)w->cols * (double)n < 65536.0)
        threads = 1;
    mm_ctx c = {w, x, n, y, ldy, NULL};
    c.scratch = malloc((size_t)threads * MM_ROWS * (size_t)w->cols * sizeof(float));
    if (!c.scratch)
        return golden_fail_what(err, GOLDEN_ENOMEM, "cpu backend", "out of memory");
    int rc = golden_parallel_for(items, threads, mm_item, &c, err);
    free(c.scratch);
    return rc;
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
