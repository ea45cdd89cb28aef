/* The chi-square p-value of conform's sampling-stats (replay/chisq.c) against values worked out
 * apart from it: closed forms (even dof: Q(k, x) = e^-x sum_{i<k} x^i / i!; dof 1: erfc of
 * sqrt(x/2); dof 3: erfc(sqrt(x/2)) + sqrt(2x/pi) e^(-x/2)), the 0.05 and 0.01 quantiles of the
 * published chi-square table, and a plain midpoint integral of the gamma density. Also the shared
 * sampler chain's settings that are off and greedy, by hand, and the cpu backend's sample call. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cunit_main.h"
#include "golden/replay.h"
#include "replay/sample_priv.h"

static bool close_rel(double a, double b, double rel)
{
    return fabs(a - b) <= rel * fabs(b) + 1e-300;
}

/* Q(k, x) for integer k: the Poisson sum. */
static double q_int(int k, double x)
{
    double term = exp(-x), sum = 0;
    for (int i = 0; i < k; i++) {
        sum += term;
        term *= x / (i + 1);
    }
    return sum;
}

static void test_closed_forms(void)
{
    const double xs[] = {0.01, 0.5, 1, 2.5, 7, 15, 40, 90, 300};
    for (size_t i = 0; i < sizeof xs / sizeof *xs; i++) {
        double x = xs[i];
        /* dof 2k: Q(k, x/2) */
        for (int k = 1; k <= 60; k += 7)
            CU_ASSERT(close_rel(lg_chisq_sf(x, 2 * k), q_int(k, x / 2), 1e-10));
        CU_ASSERT(close_rel(lg_chisq_sf(x, 1), erfc(sqrt(x / 2)), 1e-10));
        CU_ASSERT(close_rel(lg_chisq_sf(x, 3),
                            erfc(sqrt(x / 2)) + sqrt(2 * x / M_PI) * exp(-x / 2), 1e-10));
    }
    /* dof 2: p = exp(-chi2/2) exactly, also far in the tail */
    CU_ASSERT(close_rel(lg_chisq_sf(100, 2), exp(-50), 1e-12));
    CU_ASSERT(close_rel(lg_chisq_sf(1000, 2), exp(-500), 1e-10));
    CU_ASSERT(lg_chisq_sf(0, 5) == 1);
    CU_ASSERT(lg_gamma_q(2.5, INFINITY) == 0);
    CU_ASSERT(isnan(lg_chisq_sf(-1, 3)) && isnan(lg_chisq_sf(1, 0)) && isnan(lg_gamma_q(0, 1)));
    CU_ASSERT(isnan(lg_chisq_sf(NAN, 3)));
}

/* Upper quantiles of the chi-square table (e.g. NIST/SEMATECH e-Handbook 1.3.6.7.4). */
static void test_table(void)
{
    static const struct { double dof, x05, x01; } t[] = {
        {1, 3.841, 6.635}, {2, 5.991, 9.210}, {5, 11.070, 15.086}, {10, 18.307, 23.209},
        {20, 31.410, 37.566}, {30, 43.773, 50.892}, {50, 67.505, 76.154},
        {100, 124.342, 135.807}};
    for (size_t i = 0; i < sizeof t / sizeof *t; i++) {
        /* the table's 3 decimals: p within 0.1% of 0.05 and 0.01 */
        CU_ASSERT(close_rel(lg_chisq_sf(t[i].x05, t[i].dof), 0.05, 2e-3));
        CU_ASSERT(close_rel(lg_chisq_sf(t[i].x01, t[i].dof), 0.01, 2e-3));
    }
}

/* Q(a, x) = 1 - integral_0^x t^(a-1) e^-t dt / Gamma(a), by the midpoint rule (half-integer a,
 * where neither closed form above applies). */
static void test_integral(void)
{
    const double as[] = {1.5, 4.5, 12.5}, xs[] = {0.7, 3, 9, 20};
    for (size_t i = 0; i < 3; i++)
        for (size_t j = 0; j < 4; j++) {
            double a = as[i], x = xs[j], sum = 0;
            int n = 200000;
            double h = x / n;
            for (int k = 0; k < n; k++) {
                double t = (k + 0.5) * h;
                sum += exp((a - 1) * log(t) - t);
            }
            double q = 1 - sum * h / tgamma(a);
            CU_ASSERT(fabs(lg_gamma_q(a, x) - q) < 1e-7);
        }
}

/* The shared chain: what is off, and greedy, by hand. */
static void test_chain(void)
{
    lg_cand c[4];
    const float l[4] = {1, 3, 2, 0};
    lg_sample_params p = {1, 0, 1, 0, 1, 64, 0, 0}; /* everything off at temp 1 */
    for (int i = 0; i < 4; i++)
        c[i] = (lg_cand){i, l[i], 0};
    CU_ASSERT_EQUAL(lg_sample_chain(&p, c, 4, NULL, 0), 4);
    double z = exp(0) + exp(-1) + exp(-2) + exp(-3); /* sorted 3, 2, 1, 0 */
    CU_ASSERT(c[0].id == 1 && c[1].id == 2 && c[2].id == 0 && c[3].id == 3);
    CU_ASSERT(fabs(c[0].p - 1 / z) < 1e-6 && fabs(c[3].p - exp(-3) / z) < 1e-6);
    /* greedy after the penalty: token 1 (3 -> 1.5 at penalty 2) falls below token 2 */
    p.temp = 0, p.repeat_penalty = 2;
    int32_t hist[2] = {1, 1};
    for (int i = 0; i < 4; i++)
        c[i] = (lg_cand){i, l[i], 0};
    CU_ASSERT_EQUAL(lg_sample_chain(&p, c, 4, hist, 2), 1);
    CU_ASSERT(c[0].id == 2 && c[0].p == 1);
    /* top-p 0.6 at temp 1: p(3) = 0.644 reaches it alone; min-p 0.5 keeps logits >= 3 + ln 0.5 */
    lg_sample_params q = {1, 0, 0.6f, 0, 1, 64, 0, 0};
    for (int i = 0; i < 4; i++)
        c[i] = (lg_cand){i, l[i], 0};
    CU_ASSERT_EQUAL(lg_sample_chain(&q, c, 4, NULL, 0), 1);
    q.top_p = 1, q.min_p = 0.3f; /* 3 + ln 0.3 = 1.80: keeps 3 and 2 */
    for (int i = 0; i < 4; i++)
        c[i] = (lg_cand){i, l[i], 0};
    CU_ASSERT_EQUAL(lg_sample_chain(&q, c, 4, NULL, 0), 2);
    CU_ASSERT(fabs(c[0].p - 1 / (1 + exp(-1))) < 1e-6);
    /* the planted top-p fault keeps one class more */
    lg_sample_params r = {1, 0, 0.6f, 0, 1, 64, 1, 0};
    for (int i = 0; i < 4; i++)
        c[i] = (lg_cand){i, l[i], 0};
    CU_ASSERT_EQUAL(lg_sample_chain(&r, c, 4, NULL, 0), 2);
    /* a pick never lands on a class of probability 0, also when u is above the rounded sum */
    lg_cand d[3] = {{5, 0, 0.5f}, {6, 0, 0.49999f}, {7, 0, 0}};
    CU_ASSERT_EQUAL(lg_sample_pick(d, 3, 0.9999999), 1);
    CU_ASSERT_EQUAL(lg_sample_pick(d, 3, 0.2), 0);
}

int main(void)
{
    static const golden_test tests[] = {{"chi-square p against closed forms", test_closed_forms},
                                        {"chi-square p against the table", test_table},
                                        {"incomplete gamma against an integral", test_integral},
                                        {"sampler chain: off, greedy, cuts by hand", test_chain},
                                        {0, 0}};
    return golden_test_run("chisq", tests);
}
