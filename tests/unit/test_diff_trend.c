/* Unit tests of golden-diff's trend report (tensor/diff_trend.c): Kendall's tau-b against the
 * layer index (values worked out by hand by counting pairs), and which series are listed. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cunit_main.h"
#include "tensor/diff_internal.h"

static void test_kendall_by_hand(void)
{
    const double up[] = {1, 2, 3, 4};
    CU_ASSERT_DOUBLE_EQUAL(lg_diff_kendall_tau(up, 4), 1.0, 1e-15);
    /* one adjacent swap among 5: 9 pairs in order, 1 out, (9 - 1) / 10 */
    const double swap5[] = {1, 3, 2, 4, 5};
    CU_ASSERT_DOUBLE_EQUAL(lg_diff_kendall_tau(swap5, 5), 0.8, 1e-15);
    /* one among 4: (5 - 1) / 6 */
    const double swap4[] = {1, 3, 2, 4};
    CU_ASSERT_DOUBLE_EQUAL(lg_diff_kendall_tau(swap4, 4), 4.0 / 6.0, 1e-15);
    /* a tie: 5 in order, 0 out, 1 tied: 5 / sqrt(6 * 5) */
    const double tie[] = {1, 1, 2, 3};
    CU_ASSERT_DOUBLE_EQUAL(lg_diff_kendall_tau(tie, 4), 5.0 / sqrt(30.0), 1e-15);
    const double flat[] = {2, 2, 2, 2};
    CU_ASSERT_TRUE(isnan(lg_diff_kendall_tau(flat, 4)));
    const double down[] = {4, 3, 2, 1};
    CU_ASSERT_DOUBLE_EQUAL(lg_diff_kendall_tau(down, 4), -1.0, 1e-15);
}

static golden_diff_tensor tensor(const char *name, double rel, bool passed)
{
    golden_diff_tensor t;
    memset(&t, 0, sizeof t);
    t.name = (char *)name;
    t.compared = true;
    t.passed = passed;
    t.judge.tier = GOLDEN_TIER_LAYER;
    t.m.rel_err = rel;
    t.m.cosine = 1.0; /* 1 - cosine all 0: tied, never a trend */
    return t;
}

static void test_series(void)
{
    /* layers out of name order (10 sorts before 2 as text), a second series of three
     * layers, a tensor with no layer index, and one at another tier */
    golden_diff_tensor ts[] = {
        tensor("layers/10/mlp/out", 0.010, true), tensor("layers/2/mlp/out", 0.002, true),
        tensor("layers/3/mlp/out", 0.003, true),  tensor("layers/1/mlp/out", 0.001, true),
        tensor("model.layers.0.attn", 0.001, true), tensor("model.layers.1.attn", 0.002, true),
        tensor("model.layers.2.attn", 0.003, true), tensor("embed", 0.5, true),
        tensor("layers/4/mlp/out", 0.004, true)};
    ts[8].judge.tier = GOLDEN_TIER_KERNEL; /* not a layer metric: left out */
    golden_diff_result r;
    memset(&r, 0, sizeof r);
    r.tensors = ts;
    r.n = sizeof ts / sizeof *ts;
    lg_diff_trend *tr;
    size_t n;
    CU_ASSERT_EQUAL_FATAL(lg_diff_trends(&r, &tr, &n), 0);
    CU_ASSERT_EQUAL_FATAL(n, 1);
    CU_ASSERT_STRING_EQUAL(tr[0].series, "layers/*/mlp/out");
    CU_ASSERT_STRING_EQUAL(tr[0].metric, "rel_err");
    CU_ASSERT_EQUAL(tr[0].n, 4);
    CU_ASSERT_EQUAL(tr[0].layers[0], 1);
    CU_ASSERT_EQUAL(tr[0].layers[3], 10);
    CU_ASSERT_DOUBLE_EQUAL(tr[0].values[3], 0.010, 0);
    CU_ASSERT_DOUBLE_EQUAL(tr[0].tau, 1.0, 1e-15);
    lg_diff_trends_free(tr, n);
    /* one failing layer: no trend */
    ts[2].passed = false;
    CU_ASSERT_EQUAL_FATAL(lg_diff_trends(&r, &tr, &n), 0);
    CU_ASSERT_EQUAL(n, 0);
    lg_diff_trends_free(tr, n);
    /* the fourth model.layers tensor makes that series long enough */
    ts[2].passed = true;
    ts[7].name = (char *)"model.layers.3.attn";
    ts[7].m.rel_err = 0.004;
    CU_ASSERT_EQUAL_FATAL(lg_diff_trends(&r, &tr, &n), 0);
    CU_ASSERT_EQUAL_FATAL(n, 2);
    CU_ASSERT_STRING_EQUAL(tr[0].series, "layers/*/mlp/out");
    CU_ASSERT_STRING_EQUAL(tr[1].series, "model.layers.*.attn");
    lg_diff_trends_free(tr, n);
    /* an all-zero reference's rel_err (NaN) at one layer: the metric is skipped */
    ts[1].m.rel_err = NAN;
    CU_ASSERT_EQUAL_FATAL(lg_diff_trends(&r, &tr, &n), 0);
    CU_ASSERT_EQUAL_FATAL(n, 1);
    CU_ASSERT_STRING_EQUAL(tr[0].series, "model.layers.*.attn");
    lg_diff_trends_free(tr, n);
}

int main(void)
{
    static const golden_test tests[] = {
        {"Kendall tau-b by hand", test_kendall_by_hand},
        {"series, layers and which are listed", test_series},
        {0, 0}};
    return golden_test_run("diff_trend", tests);
}
