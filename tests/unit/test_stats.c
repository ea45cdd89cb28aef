/* Statistics on hand-worked cases: non-finite values, zeros, denormals, empty, scalar,
 * large offsets (cancellation) and merges across blocks. */
#include <math.h>

#include "cunit_main.h"
#include "golden/stats.h"

static void test_simple(void)
{
    const double x[] = {1, 2, 3, 4};
    golden_stats s;
    golden_stats_init(&s);
    golden_stats_add(&s, x, 4);
    CU_ASSERT_EQUAL(s.count, 4);
    CU_ASSERT_DOUBLE_EQUAL(golden_stats_mean(&s), 2.5, 1e-15);
    CU_ASSERT_DOUBLE_EQUAL(golden_stats_std(&s), sqrt(1.25), 1e-15);
    CU_ASSERT_EQUAL(golden_stats_min(&s), 1);
    CU_ASSERT_EQUAL(golden_stats_max(&s), 4);
    CU_ASSERT_EQUAL(s.zero_count, 0);
}

static void test_nonfinite(void)
{
    const double x[] = {NAN, INFINITY, -INFINITY, 0.0, -0.0, 3.0, -INFINITY, NAN};
    golden_stats s;
    golden_stats_init(&s);
    golden_stats_add(&s, x, 8);
    CU_ASSERT_EQUAL(s.count, 8);
    CU_ASSERT_EQUAL(s.nan_count, 2);
    CU_ASSERT_EQUAL(s.posinf_count, 1);
    CU_ASSERT_EQUAL(s.neginf_count, 2);
    CU_ASSERT_EQUAL(s.zero_count, 2);
    /* finite: 0, -0, 3 -> mean 1, population variance ((1+1+4)/3) = 2 */
    CU_ASSERT_DOUBLE_EQUAL(golden_stats_mean(&s), 1.0, 1e-15);
    CU_ASSERT_DOUBLE_EQUAL(golden_stats_std(&s), sqrt(2.0), 1e-15);
    CU_ASSERT_EQUAL(golden_stats_min(&s), 0.0);
    CU_ASSERT_EQUAL(golden_stats_max(&s), 3.0);
}

static void test_empty_and_all_nan(void)
{
    golden_stats s;
    golden_stats_init(&s);
    CU_ASSERT(isnan(golden_stats_mean(&s)));
    CU_ASSERT(isnan(golden_stats_std(&s)));
    CU_ASSERT(isnan(golden_stats_min(&s)));
    const double x[] = {NAN, INFINITY};
    golden_stats_add(&s, x, 2);
    CU_ASSERT(isnan(golden_stats_max(&s)));
    CU_ASSERT_EQUAL(s.count, 2);
}

static void test_scalar_and_denormal(void)
{
    golden_stats s;
    golden_stats_init(&s);
    const double one = -7.5;
    golden_stats_add(&s, &one, 1);
    CU_ASSERT_EQUAL(golden_stats_mean(&s), -7.5);
    CU_ASSERT_EQUAL(golden_stats_std(&s), 0.0);
    golden_stats_init(&s);
    const double d[] = {5e-324, 5e-324, 1e-310};
    golden_stats_add(&s, d, 3);
    CU_ASSERT_EQUAL(golden_stats_min(&s), 5e-324);
    CU_ASSERT_EQUAL(golden_stats_max(&s), 1e-310);
    CU_ASSERT_EQUAL(s.zero_count, 0);
    CU_ASSERT(golden_stats_mean(&s) > 0);
}

static void test_cancellation(void)
{
    /* 1e9 + {1,2,3,4}: naive sum-of-squares loses everything; the answer is sqrt(1.25) */
    const double x[] = {1e9 + 1, 1e9 + 2, 1e9 + 3, 1e9 + 4};
    golden_stats s;
    golden_stats_init(&s);
    golden_stats_add(&s, x, 4);
    CU_ASSERT_DOUBLE_EQUAL(golden_stats_std(&s), sqrt(1.25), 1e-6);
    CU_ASSERT_DOUBLE_EQUAL(golden_stats_mean(&s), 1e9 + 2.5, 1e-6);
}

static void test_blocks_and_merge(void)
{
    /* 0..n-1: mean (n-1)/2, population variance (n^2-1)/12, over several internal blocks */
    enum { N = 10007 };
    static double x[N];
    for (int i = 0; i < N; i++)
        x[i] = i;
    golden_stats whole, a, b;
    golden_stats_init(&whole);
    golden_stats_add(&whole, x, N);
    CU_ASSERT_DOUBLE_EQUAL(golden_stats_mean(&whole), (N - 1) / 2.0, 1e-9);
    CU_ASSERT_DOUBLE_EQUAL(golden_stats_std(&whole), sqrt(((double)N * N - 1) / 12.0), 1e-9);
    golden_stats_init(&a);
    golden_stats_init(&b);
    golden_stats_add(&a, x, 3001);
    golden_stats_add(&b, x + 3001, N - 3001);
    golden_stats_merge(&a, &b);
    CU_ASSERT_EQUAL(a.count, (uint64_t)N);
    CU_ASSERT_DOUBLE_EQUAL(golden_stats_mean(&a), (N - 1) / 2.0, 1e-9);
    CU_ASSERT_DOUBLE_EQUAL(golden_stats_std(&a), sqrt(((double)N * N - 1) / 12.0), 1e-9);
    CU_ASSERT_EQUAL(golden_stats_max(&a), N - 1);
    CU_ASSERT_EQUAL(a.zero_count, 1);
}

int main(void)
{
    static const golden_test tests[] = {
        {"simple mean and std", test_simple},
        {"NaN, Inf and zeros", test_nonfinite},
        {"empty and no finite element", test_empty_and_all_nan},
        {"scalar and denormals", test_scalar_and_denormal},
        {"large offset cancellation", test_cancellation},
        {"blocks and merge", test_blocks_and_merge},
        {0, 0}};
    return golden_test_run("stats", tests);
}
