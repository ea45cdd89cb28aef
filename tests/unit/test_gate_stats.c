/* exp-gate's statistics on hand-worked samples, its bootstrap against a plain reference (same
 * documented generator, each resample sorted), and the printed-rounding rule of --check. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cunit_main.h"
#include "golden/gate_stats.h"
#include "golden/gate.h"
#include "gate/gate_int.h" /* the generators' medians, before the interval */

static void describe(const double *in, size_t n, golden_gate_describe_t *d)
{
    double *x = malloc(n * sizeof *x), *s = malloc(n * sizeof *s);
    memcpy(x, in, n * sizeof *x);
    golden_gate_describe(x, n, s, d);
    free(x);
    free(s);
}

static void test_percentile_by_hand(void)
{
    const double x[] = {1, 2, 3, 4, 10};
    /* h = 4 q: P50 -> x[2]; P90 -> h 3.6 -> 4 + 0.6 * 6 = 7.6; P99 -> h 3.96 -> 4 + 0.96 * 6 */
    CU_ASSERT_DOUBLE_EQUAL(golden_gate_percentile(x, 5, 0.5), 3, 0);
    CU_ASSERT_DOUBLE_EQUAL(golden_gate_percentile(x, 5, 0.9), 7.6, 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(golden_gate_percentile(x, 5, 0.99), 9.76, 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(golden_gate_percentile(x, 5, 1.0), 10, 0);
    CU_ASSERT_DOUBLE_EQUAL(golden_gate_percentile(x, 5, 0.0), 1, 0);
}

static void test_describe_small(void)
{
    golden_gate_describe_t d;
    const double one[] = {4.25};
    describe(one, 1, &d);
    CU_ASSERT_EQUAL(d.n, 1);
    CU_ASSERT_EQUAL(d.median, 4.25);
    CU_ASSERT_EQUAL(d.p99, 4.25);
    CU_ASSERT_EQUAL(d.mad, 0);
    CU_ASSERT_EQUAL(d.std, 0); /* contract: 0 when n = 1 */
    const double two[] = {7, 3};
    describe(two, 2, &d);
    CU_ASSERT_DOUBLE_EQUAL(d.median, 5, 0);
    CU_ASSERT_DOUBLE_EQUAL(d.p90, 6.6, 1e-12);  /* 3 + 0.9 * 4 */
    CU_ASSERT_DOUBLE_EQUAL(d.mad, 2, 0);
    CU_ASSERT_DOUBLE_EQUAL(d.std, sqrt(8), 1e-12); /* ((2^2 + 2^2) / 1) */
}

static void test_describe_ties_and_equal(void)
{
    golden_gate_describe_t d;
    const double eq[] = {5, 5, 5, 5, 5, 5};
    describe(eq, 6, &d);
    CU_ASSERT_EQUAL(d.median, 5);
    CU_ASSERT_EQUAL(d.p99, 5);
    CU_ASSERT_EQUAL(d.mad, 0);
    CU_ASSERT_EQUAL(d.std, 0);
    /* 1 1 2 2 2 3 3 3 3 9: median 2.5; |x - 2.5| = 1.5 1.5 .5 .5 .5 .5 .5 .5 .5 6.5 -> MAD .5 */
    const double ties[] = {3, 1, 2, 9, 3, 2, 1, 3, 2, 3};
    describe(ties, 10, &d);
    CU_ASSERT_DOUBLE_EQUAL(d.median, 2.5, 0);
    CU_ASSERT_DOUBLE_EQUAL(d.mad, 0.5, 0);
    CU_ASSERT_DOUBLE_EQUAL(d.p90, 3.6, 1e-12); /* h 8.1: 3 + 0.1 * 6 */
}

static void test_describe_extremes(void)
{
    golden_gate_describe_t d;
    const double huge[] = {1e300, 3e300};
    describe(huge, 2, &d);
    CU_ASSERT(isfinite(d.std));
    CU_ASSERT_DOUBLE_EQUAL(d.std / 1e300, sqrt(2.0), 1e-12);
    const double tiny[] = {1e-310, 3e-310}; /* subnormal */
    describe(tiny, 2, &d);
    CU_ASSERT_DOUBLE_EQUAL(d.median / 1e-310, 2, 1e-9);
    CU_ASSERT_DOUBLE_EQUAL(d.std / 1e-310, sqrt(2.0), 1e-9);
    /* offsets that a one-pass mean would lose */
    const double off[] = {1e15 + 0.25, 1e15 + 0.5, 1e15 + 0.75, 1e15 + 1.0};
    describe(off, 4, &d);
    CU_ASSERT_DOUBLE_EQUAL(d.std, sqrt(0.3125 / 3), 1e-12);
}

/* ---- the bootstrap against a plain reference ---- */

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void reference_ci(const double *sorted, size_t n, unsigned long B, uint64_t seed,
                         double ci[2])
{
    double *meds = malloc(B * sizeof *meds), *draw = malloc(n * sizeof *draw);
    for (unsigned long b = 0; b < B; b++) {
        uint64_t st = seed ^ golden_gate_mix64(b + 1);
        for (size_t i = 0; i < n; i++) {
            st += 0x9E3779B97F4A7C15ull;
            draw[i] = sorted[(size_t)(((unsigned __int128)golden_gate_mix64(st) * n) >> 64)];
        }
        qsort(draw, n, sizeof *draw, cmp);
        meds[b] = golden_gate_percentile(draw, n, 0.5);
    }
    qsort(meds, B, sizeof *meds, cmp);
    ci[0] = golden_gate_percentile(meds, B, 0.025);
    ci[1] = golden_gate_percentile(meds, B, 0.975);
    free(meds);
    free(draw);
}

static void test_mix64_known(void)
{
    /* splitmix64's published first output for state 0: mix(0x9E3779B97F4A7C15) */
    CU_ASSERT_EQUAL(golden_gate_mix64(0x9E3779B97F4A7C15ull), 0xE220A8397B1DCDAFull);
}

static void test_bootstrap_reference(void)
{
    size_t ns[] = {1, 2, 3, 30, 31, 200};
    for (size_t k = 0; k < sizeof ns / sizeof *ns; k++) {
        size_t n = ns[k];
        double *x = malloc(n * sizeof *x);
        for (size_t i = 0; i < n; i++)
            x[i] = (double)((i * 7919) % 97) + (i % 3 ? 0.5 : 0); /* ties included */
        qsort(x, n, sizeof *x, cmp);
        for (uint64_t seed = 1; seed < 4; seed++) {
            double want[2], got[2], again[2];
            golden_error err;
            reference_ci(x, n, 1001, seed * 0x1234567ull, want);
            CU_ASSERT_EQUAL(golden_gate_bootstrap_median(x, n, 1001, seed * 0x1234567ull, 1, got,
                                                         &err), 0);
            CU_ASSERT_EQUAL(golden_gate_bootstrap_median(x, n, 1001, seed * 0x1234567ull, 2,
                                                         again, &err), 0);
            CU_ASSERT_EQUAL(got[0], want[0]);
            CU_ASSERT_EQUAL(got[1], want[1]);
            CU_ASSERT_EQUAL(again[0], got[0]);
            CU_ASSERT_EQUAL(again[1], got[1]);
            CU_ASSERT(got[0] <= got[1]);
        }
        free(x);
    }
}

/* ---- the order-statistic generator against the exact distribution and the resampling one ---- */

/* Medians of B resamples of x[i] = i (n values) by generator gen. */
static double *os_medians(golden_gate_boot_gen gen, size_t n, unsigned long B, uint64_t seed,
                          int threads)
{
    double *x = malloc(n * sizeof *x), *m = malloc(B * sizeof *m);
    for (size_t i = 0; i < n; i++)
        x[i] = (double)i;
    gate_boot_cache c;
    gate_boot_cache_init(&c, gen, threads);
    golden_error err;
    CU_ASSERT_EQUAL(gate_boot_medians(&c, x, n, B, seed, m, &err), 0);
    gate_boot_cache_free(&c);
    free(x);
    return m;
}

/* P(Binomial(n, p) >= k), summed in long double. */
static long double binom_sf(size_t n, long double p, size_t k)
{
    if (p >= 1)
        return 1;
    long double s = 0;
    for (size_t i = k; i <= n; i++) {
        long double lg = lgammal((long double)n + 1) - lgammal((long double)i + 1) -
                         lgammal((long double)(n - i) + 1);
        s += expl(lg + (long double)i * logl(p) +
                  (long double)(n - i) * log1pl(-p));
    }
    return s;
}

static void test_order_statistic_exact_cdf(void)
{
    /* n odd, distinct values: the resampled median is the ((n+1)/2)-th smallest draw, and
     * P(median <= x_j) = P(at least (n+1)/2 of n draws fall in 0..j) = P(Bin(n, (j+1)/n) >=
     * (n+1)/2), worked out independently of both generators. Kolmogorov-Smirnov bound at
     * alpha = 0.001: 1.95 / sqrt(B). */
    const size_t ns[] = {1, 3, 15, 101};
    const unsigned long B = 40000;
    for (size_t t = 0; t < sizeof ns / sizeof *ns; t++) {
        size_t n = ns[t];
        for (int g = 0; g < 2; g++) {
            golden_gate_boot_gen gen = g ? GOLDEN_BOOT_ORDER_STAT : GOLDEN_BOOT_RESAMPLE;
            double *m = os_medians(gen, n, B, 20260802u + t, 2);
            double worst = 0;
            for (size_t j = 0; j < n; j++) {
                size_t below = 0;
                for (unsigned long b = 0; b < B; b++)
                    below += m[b] <= (double)j;
                double exact = (double)binom_sf(n, (long double)(j + 1) / (long double)n,
                                                (n + 1) / 2);
                double d = fabs((double)below / (double)B - exact);
                worst = d > worst ? d : worst;
            }
            CU_ASSERT(worst < 1.95 / sqrt((double)B));
            free(m);
        }
    }
}

static void test_order_statistic_matches_resampling(void)
{
    /* n even: the median interpolates two order statistics; the two generators' medians must
     * come from one distribution (two-sample KS at alpha = 0.001: 1.95 sqrt(2 / B)); and the
     * order-statistic one gives the same bits for any thread count. */
    const size_t ns[] = {2, 4, 30, 100, 2500};
    const unsigned long B = 40000;
    for (size_t t = 0; t < sizeof ns / sizeof *ns; t++) {
        size_t n = ns[t];
        double *a = os_medians(GOLDEN_BOOT_RESAMPLE, n, B, 7 + t, 2);
        double *b = os_medians(GOLDEN_BOOT_ORDER_STAT, n, B, 7 + t, 2);
        double *b1 = os_medians(GOLDEN_BOOT_ORDER_STAT, n, B, 7 + t, 1);
        CU_ASSERT(memcmp(b, b1, B * sizeof *b) == 0);
        qsort(a, B, sizeof *a, cmp);
        qsort(b, B, sizeof *b, cmp);
        double worst = 0;
        size_t i = 0, j = 0;
        while (i < B && j < B) {
            double v = a[i] < b[j] ? a[i] : b[j];
            while (i < B && a[i] <= v)
                i++;
            while (j < B && b[j] <= v)
                j++;
            double d = fabs((double)i / (double)B - (double)j / (double)B);
            worst = d > worst ? d : worst;
        }
        CU_ASSERT(worst < 1.95 * sqrt(2.0 / (double)B));
        free(a);
        free(b);
        free(b1);
    }
}

static void test_generator_names(void)
{
    golden_gate_boot_gen g;
    CU_ASSERT_EQUAL(golden_gate_boot_gen_parse("splitmix64-order-statistic/v1", &g), 0);
    CU_ASSERT_EQUAL(g, GOLDEN_BOOT_ORDER_STAT);
    CU_ASSERT_EQUAL(golden_gate_boot_gen_parse("splitmix64-per-resample/v1", &g), 0);
    CU_ASSERT_EQUAL(g, GOLDEN_BOOT_RESAMPLE);
    CU_ASSERT_EQUAL(golden_gate_boot_gen_parse("mt19937", &g), -1);
    CU_ASSERT_EQUAL(golden_gate_boot_gen_parse(NULL, &g), -1);
    double x[] = {1, 2, 3}, ci[2];
    golden_error err;
    CU_ASSERT_EQUAL(golden_gate_bootstrap_median_gen((golden_gate_boot_gen)9, x, 3, 10, 1, 1, ci,
                                                     &err), -1);
}

static void test_bootstrap_zero(void)
{
    const double x[] = {1, 2};
    double ci[2];
    golden_error err;
    CU_ASSERT_EQUAL(golden_gate_bootstrap_median(x, 2, 0, 1, 1, ci, &err), 0);
    CU_ASSERT(isnan(ci[0]) && isnan(ci[1]));
}

static void test_number_follows(void)
{
    CU_ASSERT(golden_gate_number_follows(10.564137, 10.564137));
    CU_ASSERT(golden_gate_number_follows(9.852745, 9.852746));  /* a rounding of 9.8527455 */
    CU_ASSERT(golden_gate_number_follows(-6.734, -6.733920));   /* printed with 3 decimals */
    CU_ASSERT(!golden_gate_number_follows(10.6, 10.564137));    /* too coarse to stand for it */
    CU_ASSERT(!golden_gate_number_follows(10.564237, 10.564137));
    CU_ASSERT(!golden_gate_number_follows(0.24299, 0.247145));
    CU_ASSERT(golden_gate_number_follows(1.23457e-05, 1.234567e-05));
    CU_ASSERT(!golden_gate_number_follows(1.3e-05, 1.234567e-05));
    CU_ASSERT(!golden_gate_number_follows(NAN, 1));
}

/* A failed request is +inf: by hand, {1, 2, +inf}: h = 2 q. q = 0.5 lands on 2 exactly (never
 * 0 x inf = NaN), q = 0.75 between 2 and +inf is +inf, q = 0.25 is 1.5. */
static void test_percentile_infinity(void)
{
    double x[3] = {1, 2, INFINITY};
    CU_ASSERT_DOUBLE_EQUAL(golden_gate_percentile(x, 3, 0.5), 2.0, 0);
    CU_ASSERT_DOUBLE_EQUAL(golden_gate_percentile(x, 3, 0.25), 1.5, 1e-15);
    CU_ASSERT(isinf(golden_gate_percentile(x, 3, 0.75)));
    CU_ASSERT(isinf(golden_gate_percentile(x, 3, 1.0)));
    double y[4] = {INFINITY, 1, INFINITY, 3}, scratch[4];
    golden_gate_describe_t d;
    golden_gate_describe(y, 4, scratch, &d); /* sorted 1, 3, inf, inf: median between 3 and inf */
    CU_ASSERT(isinf(d.median) && isinf(d.p99) && isinf(d.std));
    CU_ASSERT(!isnan(d.mad));
}

static int cmp_ref(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Samples of 64 values and more take the radix sort: the sorted copy describe leaves must be the
 * plain qsort's, bit for bit, over negatives, +inf and exponents far apart. */
static void test_describe_large_sorted(void)
{
    enum { N = 1001 };
    double x[N], s[N], ref[N];
    for (size_t i = 0; i < N; i++) /* 337 is prime to 1001 = 7 * 11 * 13: a permutation */
        x[i] = ((double)((i * 337) % N) - 500) * 0.25;
    golden_gate_describe_t d;
    golden_gate_describe(x, N, s, &d);
    int ascending = 1;
    for (size_t i = 0; i < N; i++)
        ascending &= x[i] == ((double)i - 500) * 0.25;
    CU_ASSERT(ascending);
    /* -125 .. 125 by 0.25: median x[500] = 0, P90 x[900] = 100, P99 x[990] = 122.5; the
     * deviations 0, 0.25 twice, 0.5 twice ... put 250 * 0.25 at rank 500 */
    CU_ASSERT_EQUAL(d.median, 0);
    CU_ASSERT_EQUAL(d.p90, 100);
    CU_ASSERT_EQUAL(d.p99, 122.5);
    CU_ASSERT_EQUAL(d.mad, 62.5);
    CU_ASSERT_EQUAL(d.min, -125);
    CU_ASSERT_EQUAL(d.max, 125);
    size_t n = 0;
    for (int k = -300; k <= 300; k += 3) {
        x[n++] = ldexp(1.0, k);
        x[n++] = -ldexp(1.5, k);
    }
    x[n++] = INFINITY;
    x[n++] = 0;
    x[n++] = 7;
    x[n++] = 7;
    for (size_t i = n - 1; i > 0; i--) { /* a fixed shuffle */
        size_t j = (i * 2654435761u) % (i + 1);
        double t = x[i];
        x[i] = x[j];
        x[j] = t;
    }
    memcpy(ref, x, n * sizeof *x);
    qsort(ref, n, sizeof *ref, cmp_ref);
    golden_gate_describe(x, n, s, &d);
    CU_ASSERT(memcmp(x, ref, n * sizeof *x) == 0);
    CU_ASSERT(isinf(d.max) && d.min == -ldexp(1.5, 300));
}

int main(void)
{
    static const golden_test tests[] = {
        {"percentile by hand", test_percentile_by_hand},
        {"percentile and describe with +inf (failed requests)", test_percentile_infinity},
        {"describe n = 1, 2", test_describe_small},
        {"describe ties and all equal", test_describe_ties_and_equal},
        {"describe huge, tiny, offset", test_describe_extremes},
        {"describe of 64 values and more: sorted as qsort sorts", test_describe_large_sorted},
        {"splitmix64 known value", test_mix64_known},
        {"bootstrap = plain reference, any thread count", test_bootstrap_reference},
        {"bootstrap B = 0", test_bootstrap_zero},
        {"order-statistic generator = exact median CDF (odd n)", test_order_statistic_exact_cdf},
        {"order-statistic generator = resampling distribution (even n)",
         test_order_statistic_matches_resampling},
        {"generator names", test_generator_names},
        {"printed rounding rule", test_number_follows},
        {NULL, NULL}};
    return golden_test_run("gate statistics", tests);
}
