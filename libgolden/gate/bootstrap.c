/* The seeded percentile bootstrap of the median (contracts.md section 8): one splitmix64 stream
 * per resample, so the interval is the same whatever the number of threads. Two generators
 * (docs/exp-gate.md): "splitmix64-per-resample/v1" draws n indices per resample (work B n);
 * "splitmix64-order-statistic/v1" draws the two order statistics the median needs straight from
 * their exact distributions (work B, the same distribution of resampled medians). */
#include <math.h>
#include <stddef.h>
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

/* ---- the order-statistic generator ----
 * In a resample of n draws floor(U_i n) with U_i uniform on [0, 1), the j-th smallest index
 * (1-based) is floor(U_(j) n), and U_(j) ~ Beta(j, n - j + 1); given U_(j) = u, the next one is
 * u + (1 - u) (1 - W^(1 / (n - j))), W uniform (the least of n - j uniforms above u). So the
 * median's two order statistics are drawn exactly, with a handful of draws per resample, from
 * the resample's own splitmix64 stream (seeded as in the per-resample generator). */
static inline uint64_t sm_next(uint64_t *st)
{
    *st += GOLDEN_GOLDEN_GAMMA;
    return golden_gate_mix64(*st);
}

/* Uniform on (0, 1): the top 53 bits, centred, never 0 or 1. */
static inline double sm_open01(uint64_t *st)
{
    return ((double)(sm_next(st) >> 11) + 0.5) * 0x1p-53;
}

static double sm_normal(uint64_t *st)
{
    double u1 = sm_open01(st), u2 = sm_open01(st);
    return sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
}

/* Gamma(a, 1) for a >= 1: Marsaglia and Tsang's squeeze-and-reject method (exact). */
static double sm_gamma(uint64_t *st, double a)
{
    double d = a - 1.0 / 3.0, c = 1.0 / sqrt(9.0 * d);
    for (;;) {
        double x, v;
        do {
            x = sm_normal(st);
            v = 1.0 + c * x;
        } while (v <= 0);
        v = v * v * v;
        double u = sm_open01(st), x2 = x * x;
        if (u < 1.0 - 0.0331 * x2 * x2 || log(u) < 0.5 * x2 + d * (1.0 - v + log(v)))
            return d * v;
    }
}

static size_t unit_index(double u, size_t n)
{
    double f = floor(u * (double)n);
    return f <= 0 ? 0 : f >= (double)(n - 1) ? n - 1 : (size_t)f;
}

/* Indices (0-based, into the sorted sample) of the order statistics the median of resample b
 * interpolates between: k = floor((n - 1) / 2) and k + 1 (the same when n is odd). */
static void os_pair(size_t n, uint64_t seed, unsigned long b, uint32_t *ia, uint32_t *ib)
{
    uint64_t st = seed ^ golden_gate_mix64((uint64_t)b + 1);
    size_t k = (n - 1) / 2, j = k + 1; /* j: 1-based rank of the lower one */
    double ga = sm_gamma(&st, (double)j), gb = sm_gamma(&st, (double)(n - j + 1));
    double u = ga / (ga + gb);
    *ia = (uint32_t)unit_index(u, n);
    if (n % 2 == 1 || j >= n) {
        *ib = *ia;
        return;
    }
    double w = sm_open01(&st);
    double u2 = u + (1.0 - u) * -expm1(log(w) / (double)(n - j));
    size_t i2 = unit_index(u2, n);
    *ib = (uint32_t)(i2 < *ia ? *ia : i2);
}

typedef struct {
    gate_boot_plan *p;
} plan_ctx;

static int plan_block(void *ctx, size_t item, int worker, golden_error *err)
{
    (void)worker;
    (void)err;
    gate_boot_plan *p = ((plan_ctx *)ctx)->p;
    unsigned long lo = (unsigned long)item * BOOT_BLOCK;
    unsigned long hi = lo + BOOT_BLOCK < p->B ? lo + BOOT_BLOCK : p->B;
    for (unsigned long b = lo; b < hi; b++)
        os_pair(p->n, p->seed, b, &p->idx[2 * b], &p->idx[2 * b + 1]);
    return 0;
}

static int plan_make(gate_boot_plan *p, size_t n, unsigned long B, uint64_t seed, int threads,
                     golden_error *err)
{
    free(p->idx);
    *p = (gate_boot_plan){0};
    if (!(p->idx = malloc((size_t)B * 2 * sizeof *p->idx)))
        return golden_fail_what(err, GOLDEN_ENOMEM, NULL, "out of memory for the bootstrap");
    p->n = n;
    p->B = B;
    p->seed = seed;
    size_t blocks = (B + BOOT_BLOCK - 1) / BOOT_BLOCK;
    if (threads <= 0)
        threads = lg_cpu_count();
    if ((size_t)threads > blocks)
        threads = (int)blocks;
    plan_ctx c = {p};
    if (lg_parallel_for(blocks, threads, plan_block, &c, err) != 0) {
        free(p->idx);
        *p = (gate_boot_plan){0};
        return -1;
    }
    p->valid = true;
    return 0;
}

void gate_boot_cache_init(gate_boot_cache *c, golden_gate_boot_gen gen, int threads)
{
    *c = (gate_boot_cache){.gen = gen, .threads = threads};
}

void gate_boot_cache_free(gate_boot_cache *c)
{
    for (size_t i = 0; i < GATE_BOOT_PLANS; i++)
        free(c->plan[i].idx);
    *c = (gate_boot_cache){0};
}

int gate_boot_medians(gate_boot_cache *c, const double *sorted, size_t n, unsigned long B,
                      uint64_t seed, double *medians, golden_error *err)
{
    if (c->gen == GOLDEN_BOOT_RESAMPLE)
        return gate_bootstrap_medians(sorted, n, B, seed, c->threads, medians, err);
    if (n > UINT32_MAX)
        return golden_fail_what(err, GOLDEN_EUNSUPPORTED, NULL,
                                "bootstrap of %zu values: at most 2^32 - 1 per sample", n);
    gate_boot_plan *p = NULL;
    for (size_t i = 0; i < GATE_BOOT_PLANS && !p; i++)
        if (c->plan[i].valid && c->plan[i].n == n && c->plan[i].B == B && c->plan[i].seed == seed)
            p = &c->plan[i];
    if (!p) {
        p = &c->plan[c->next];
        c->next = (c->next + 1) % GATE_BOOT_PLANS;
        if (plan_make(p, n, B, seed, c->threads, err) != 0)
            return -1;
    }
    double t = (double)(n - 1) * 0.5 - floor((double)(n - 1) * 0.5);
    for (unsigned long b = 0; b < B; b++) {
        uint32_t ia = p->idx[2 * b], ib = p->idx[2 * b + 1];
        medians[b] = ia == ib ? sorted[ia] : gate_lerp(sorted[ia], sorted[ib], t);
    }
    return 0;
}

/* ---- percentiles of the B medians by selection (the same values a sort would give) ---- */
static void swap_d(double *a, double *b)
{
    double t = *a;
    *a = *b;
    *b = t;
}

/* Put the k-th smallest of v[0..n) at v[k], none larger before it and none smaller after it
 * (Wirth's selection, pivot v[k]; no NaN in v). */
static void select_kth(double *v, size_t n, size_t k)
{
    ptrdiff_t l = 0, r = (ptrdiff_t)n - 1, kk = (ptrdiff_t)k;
    while (l < r) {
        double x = v[kk];
        ptrdiff_t i = l, j = r;
        do {
            while (v[i] < x)
                i++;
            while (x < v[j])
                j--;
            if (i <= j) {
                swap_d(&v[i], &v[j]);
                i++;
                j--;
            }
        } while (i <= j);
        if (j < kk)
            l = i;
        if (kk < i)
            r = j;
    }
}

/* golden_gate_percentile(sort(v), n, q) without sorting v (v is reordered). */
double gate_percentile_select(double *v, size_t n, double q)
{
    if (n == 0)
        return NAN;
    double h = (double)(n - 1) * q, fl = floor(h);
    size_t f = (size_t)fl;
    if (f >= n - 1) {
        select_kth(v, n, n - 1);
        return v[n - 1];
    }
    select_kth(v, n, f);
    double next = v[f + 1];
    for (size_t i = f + 2; i < n; i++)
        if (v[i] < next)
            next = v[i];
    return gate_lerp(v[f], next, h - fl);
}

static void ci95_of(double *v, unsigned long B, double ci[2])
{
    ci[0] = gate_percentile_select(v, B, 0.025);
    ci[1] = gate_percentile_select(v, B, 0.975);
}

int gate_boot_ci(gate_boot_cache *c, const double *sorted, size_t n, unsigned long B,
                 uint64_t seed, double ci[2], golden_error *err)
{
    ci[0] = ci[1] = NAN;
    if (B == 0 || n == 0)
        return 0;
    double *medians = malloc(B * sizeof *medians);
    if (!medians)
        return golden_fail_what(err, GOLDEN_ENOMEM, NULL, "out of memory for the bootstrap");
    int rc = gate_boot_medians(c, sorted, n, B, seed, medians, err);
    if (rc == 0)
        ci95_of(medians, B, ci);
    free(medians);
    return rc;
}

int golden_gate_bootstrap_median_gen(golden_gate_boot_gen gen, const double *sorted, size_t n,
                                     unsigned long B, uint64_t seed, int threads, double ci[2],
                                     golden_error *err)
{
    if (gen != GOLDEN_BOOT_RESAMPLE && gen != GOLDEN_BOOT_ORDER_STAT)
        return golden_fail_what(err, GOLDEN_EINVAL, NULL, "unknown bootstrap generator %d",
                                (int)gen);
    gate_boot_cache c;
    gate_boot_cache_init(&c, gen, threads);
    int rc = gate_boot_ci(&c, sorted, n, B, seed, ci, err);
    gate_boot_cache_free(&c);
    return rc;
}

int golden_gate_bootstrap_median(const double *sorted, size_t n, unsigned long B, uint64_t seed,
                                 int threads, double ci[2], golden_error *err)
{
    return golden_gate_bootstrap_median_gen(GOLDEN_BOOT_RESAMPLE, sorted, n, B, seed, threads,
                                            ci, err);
}

const char *golden_gate_boot_gen_name(golden_gate_boot_gen gen)
{
    switch (gen) {
    case GOLDEN_BOOT_RESAMPLE:
        return "splitmix64-per-resample/v1";
    case GOLDEN_BOOT_ORDER_STAT:
        return "splitmix64-order-statistic/v1";
    }
    return NULL;
}

int golden_gate_boot_gen_parse(const char *name, golden_gate_boot_gen *gen)
{
    static const golden_gate_boot_gen all[] = {GOLDEN_BOOT_RESAMPLE, GOLDEN_BOOT_ORDER_STAT};
    for (size_t i = 0; name && i < sizeof all / sizeof all[0]; i++)
        if (strcmp(name, golden_gate_boot_gen_name(all[i])) == 0) {
            *gen = all[i];
            return 0;
        }
    return -1;
}

void gate_diff_ci(const double *base, const double *cand, unsigned long B, double *scratch,
                  double ci[2])
{
    for (unsigned long b = 0; b < B; b++) {
        double d = cand[b] - base[b];
        scratch[b] = isnan(d) ? INFINITY : d; /* +inf - +inf: no improvement shown */
    }
    ci95_of(scratch, B, ci);
}
