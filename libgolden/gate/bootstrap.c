/* The seeded percentile bootstrap of the median (contracts.md section 8): one splitmix64 stream
 * per resample, so the interval is the same whatever the number of threads. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "gate/gate_int.h"
#include "util/pool.h"

#define GOLDEN_GOLDEN_GAMMA 0x9E3779B97F4A7C15ull
/* Resamples handed to a worker at a time: large enough that the pool's hand-out is cheap. */
#define BOOT_BLOCK 64

uint64_t golden_gate_mix64(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

typedef struct {
    const double *x;
    size_t n;
    unsigned long B;
    uint64_t seed;
    uint32_t *counts; /* one row of n counters per worker */
    double *medians;
} boot_ctx;

/* The median of resample b: draws are tallied per index of the sorted sample, so the order
 * statistics are found by one walk over the tallies, without sorting the resample. */
static double resample_median(const boot_ctx *c, unsigned long b, uint32_t *cnt)
{
    size_t n = c->n;
    memset(cnt, 0, n * sizeof *cnt);
    uint64_t state = c->seed ^ golden_gate_mix64((uint64_t)b + 1);
    for (size_t i = 0; i < n; i++) {
        state += GOLDEN_GOLDEN_GAMMA;
        uint64_t z = golden_gate_mix64(state);
        cnt[(size_t)(((unsigned __int128)z * n) >> 64)]++;
    }
    double h = (double)(n - 1) * 0.5, fl = floor(h);
    size_t k = (size_t)fl, seen = 0, ia = n, ib = n;
    for (size_t j = 0; j < n && ib == n; j++) {
        seen += cnt[j];
        if (ia == n && seen > k)
            ia = j;
        if (seen > k + 1)
            ib = j;
    }
    if (k + 1 >= n)
        return c->x[ia];
    return gate_lerp(c->x[ia], c->x[ib], h - fl);
}

static int boot_block(void *ctx, size_t item, int worker, golden_error *err)
{
    (void)err;
    boot_ctx *c = ctx;
    uint32_t *cnt = c->counts + (size_t)worker * c->n;
    unsigned long lo = (unsigned long)item * BOOT_BLOCK;
    unsigned long hi = lo + BOOT_BLOCK < c->B ? lo + BOOT_BLOCK : c->B;
    for (unsigned long b = lo; b < hi; b++)
        c->medians[b] = resample_median(c, b, cnt);
    return 0;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int gate_bootstrap_medians(const double *sorted, size_t n, unsigned long B, uint64_t seed,
                           int threads, double *medians, golden_error *err)
{
    if (n > UINT32_MAX)
        return golden_fail_what(err, GOLDEN_EUNSUPPORTED, NULL,
                                "bootstrap of %zu values: at most 2^32 - 1 per sample", n);
    size_t blocks = (B + BOOT_BLOCK - 1) / BOOT_BLOCK;
    if (threads <= 0)
        threads = lg_cpu_count();
    if ((size_t)threads > blocks)
        threads = (int)blocks;
    boot_ctx c = {sorted, n, B, seed, NULL, medians};
    c.counts = malloc((size_t)threads * n * sizeof *c.counts);
    if (!c.counts)
        return golden_fail_what(err, GOLDEN_ENOMEM, NULL, "out of memory for the bootstrap");
    int rc = lg_parallel_for(blocks, threads, boot_block, &c, err);
    free(c.counts);
    return rc;
}

int golden_gate_bootstrap_median(const double *sorted, size_t n, unsigned long B, uint64_t seed,
                                 int threads, double ci[2], golden_error *err)
{
    ci[0] = ci[1] = NAN;
    if (B == 0 || n == 0)
        return 0;
    double *medians = malloc(B * sizeof *medians);
    if (!medians)
        return golden_fail_what(err, GOLDEN_ENOMEM, NULL, "out of memory for the bootstrap");
    int rc = gate_bootstrap_medians(sorted, n, B, seed, threads, medians, err);
    if (rc == 0) {
        qsort(medians, B, sizeof *medians, cmp_double);
        ci[0] = golden_gate_percentile(medians, B, 0.025);
        ci[1] = golden_gate_percentile(medians, B, 0.975);
    }
    free(medians);
    return rc;
}

void gate_diff_ci(const double *base, const double *cand, unsigned long B, double *scratch,
                  double ci[2])
{
    for (unsigned long b = 0; b < B; b++) {
        double d = cand[b] - base[b];
        scratch[b] = isnan(d) ? INFINITY : d; /* +inf - +inf: no improvement shown */
    }
    qsort(scratch, B, sizeof *scratch, cmp_double);
    ci[0] = golden_gate_percentile(scratch, B, 0.025);
    ci[1] = golden_gate_percentile(scratch, B, 0.975);
}
