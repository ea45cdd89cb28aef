/* npu-replay score's log-softmax: -log softmax(row)[target] in f64 with the maximum subtracted,
 * against values numpy (and torch.log_softmax in float64) gave for the same rows, and the rows
 * that give no number (a finding, never a number). Expected values from:
 *   i = np.arange(512); A = (8*np.sin(0.37*i+0.1)+0.01*i).astype(np.float32)
 *   B = (3000.0+(i%7)-0.5*i).astype(np.float32)
 *   nll = lambda r, t: (m := r.astype(np.float64).max()) + np.log(np.exp(r - m).sum()) - r[t] */
#include <math.h>
#include <string.h>

#include "cunit_main.h"
#include "golden/score.h"

static float A[512], B[512];

static void rows(void)
{
    for (int i = 0; i < 512; i++) {
        A[i] = (float)(8.0 * sin(0.37 * i + 0.1) + 0.01 * i);
        B[i] = (float)(3000.0 + (i % 7) - 0.5 * i);
    }
}

static void near(double got, double want)
{
    CU_ASSERT(fabs(got - want) <= 1e-12 * fabs(want));
    if (!(fabs(got - want) <= 1e-12 * fabs(want)))
        fprintf(stderr, "got %.17g, want %.17g\n", got, want);
}

static void test_numpy(void)
{
    rows();
    char why[160];
    double x = -1;
    CU_ASSERT_EQUAL(golden_score_nll(A, 512, 0, &x, why, sizeof why), 0);
    near(x, 14.910602434411397);
    CU_ASSERT_EQUAL(golden_score_nll(A, 512, 17, &x, why, sizeof why), 0);
    near(x, 14.686376198068013);
    CU_ASSERT_EQUAL(golden_score_nll(A, 512, 511, &x, why, sizeof why), 0);
    near(x, 5.603584512009968);
    /* logits near 3000: exp() of them overflows without the maximum subtracted */
    CU_ASSERT_EQUAL(golden_score_nll(B, 512, 3, &x, why, sizeof why), 0);
    near(x, 2.432752129567234);
    CU_ASSERT_EQUAL(golden_score_nll(B, 512, 200, &x, why, sizeof why), 0);
    near(x, 99.93275212956723);
}

static void test_by_hand(void)
{
    char why[160];
    double x = -1;
    float two[2] = {0, 0};
    CU_ASSERT_EQUAL(golden_score_nll(two, 2, 1, &x, why, sizeof why), 0);
    near(x, log(2.0));
    /* masked entries (-inf) add nothing: log(e^2 + e^1) - 1 = log(e + 1) */
    float masked[4] = {2, -INFINITY, 1, -INFINITY};
    CU_ASSERT_EQUAL(golden_score_nll(masked, 4, 2, &x, why, sizeof why), 0);
    near(x, 1.3132616875182228);
    float one[1] = {-7};
    CU_ASSERT_EQUAL(golden_score_nll(one, 1, 0, &x, why, sizeof why), 0);
    CU_ASSERT_EQUAL(x, 0);
}

static void test_findings(void)
{
    char why[160];
    double x = 42;
    float nan_row[3] = {0, NAN, 1};
    CU_ASSERT_EQUAL(golden_score_nll(nan_row, 3, 0, &x, why, sizeof why), 1);
    CU_ASSERT_STRING_EQUAL(why, "logit 1 is NaN");
    float inf_row[3] = {0, 1, INFINITY};
    CU_ASSERT_EQUAL(golden_score_nll(inf_row, 3, 0, &x, why, sizeof why), 1);
    CU_ASSERT_STRING_EQUAL(why, "logit 2 is +Inf");
    float all_masked[2] = {-INFINITY, -INFINITY};
    CU_ASSERT_EQUAL(golden_score_nll(all_masked, 2, 0, &x, why, sizeof why), 1);
    CU_ASSERT_STRING_EQUAL(why, "every logit is -inf");
    float target_masked[2] = {3, -INFINITY};
    CU_ASSERT_EQUAL(golden_score_nll(target_masked, 2, 1, &x, why, sizeof why), 1);
    CU_ASSERT_PTR_NOT_NULL(strstr(why, "probability 0"));
    CU_ASSERT_EQUAL(x, 42); /* never a number */
    CU_ASSERT_EQUAL(golden_score_nll(target_masked, 2, 2, &x, why, sizeof why), -1);
    CU_ASSERT_EQUAL(golden_score_nll(target_masked, 2, -1, &x, why, sizeof why), -1);
}

int main(void)
{
    static const golden_test tests[] = {
        {"NLL against numpy", test_numpy},
        {"NLL by hand", test_by_hand},
        {"rows that give no number", test_findings},
        {0, 0}};
    return golden_test_run("score", tests);
}
