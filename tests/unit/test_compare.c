/* CUnit tests of the metrics engine on hand-worked vectors, plus a naive second
 * implementation that chunked and merged passes must agree with. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cunit_main.h"
#include "golden/compare.h"

static golden_cmp_setup setup(golden_tier tier, golden_dtype t, double atol, double rtol)
{
    golden_cmp_setup s = GOLDEN_CMP_SETUP_INIT;
    s.tier = tier;
    s.dtype_ref = t;
    s.dtype_cand = t;
    s.atol = atol;
    s.rtol = rtol;
    s.eps = 1e-6;
    s.near_tie_margin = 0.5;
    return s;
}

static void run(const golden_cmp_setup *s, const double *r, const double *c, size_t n,
                golden_cmp_metrics *m)
{
    golden_cmp_acc a;
    golden_cmp_acc_init(&a, 0);
    golden_cmp_add_f64(s, &a, r, c, n);
    golden_cmp_finish(s, &a, m);
}

/* golden_cmp_setup is versioned: the INIT passes, a zeroed or newer one does not. */
static void test_setup_check(void)
{
    golden_error err;
    golden_cmp_setup s = setup(GOLDEN_TIER_LOGITS, GOLDEN_F32, 0, 0);
    CU_ASSERT_EQUAL(s.version, 1u);
    CU_ASSERT_EQUAL(golden_cmp_setup_check(&s, &err), 0);
    golden_cmp_setup z;
    memset(&z, 0, sizeof z);
    CU_ASSERT_EQUAL(golden_cmp_setup_check(&z, &err), GOLDEN_ERR);
    CU_ASSERT_EQUAL(err.code, GOLDEN_EINVAL);
    CU_ASSERT_STRING_EQUAL(err.what, "comparison setup of version 0 (this libgolden knows 1)");
    s.version = 2;
    CU_ASSERT_EQUAL(golden_cmp_setup_check(&s, &err), GOLDEN_ERR);
    s.version = GOLDEN_CMP_SETUP_VERSION;
    s.tier = GOLDEN_TIER_COUNT;
    CU_ASSERT_EQUAL(golden_cmp_setup_check(&s, &err), GOLDEN_ERR);
    CU_ASSERT_STRING_EQUAL(err.what, "comparison setup of tier 5");
    CU_ASSERT_EQUAL(golden_cmp_setup_check(NULL, &err), GOLDEN_ERR);
}

static void test_basic_metrics(void)
{
    const double r[] = {1, 2, 3, 4}, c[] = {1, 2.5, 2, 4};
    golden_cmp_setup s = setup(GOLDEN_TIER_KERNEL, GOLDEN_F64, 0.1, 0.1);
    golden_cmp_metrics m;
    run(&s, r, c, 4, &m);
    CU_ASSERT_EQUAL(m.count, 4);
    CU_ASSERT_EQUAL(m.finite_pairs, 4);
    CU_ASSERT_DOUBLE_EQUAL(m.max_abs, 1.0, 0);
    CU_ASSERT_EQUAL(m.max_abs_index, 2);
    CU_ASSERT_DOUBLE_EQUAL(m.mean_abs, 0.375, 1e-15);
    CU_ASSERT_DOUBLE_EQUAL(m.rmse, sqrt(0.3125), 1e-15);
    CU_ASSERT_DOUBLE_EQUAL(m.max_rel, 1.0 / 3.0, 1e-15);
    /* dot 28, |r|^2 30, |c|^2 27.25 */
    CU_ASSERT_DOUBLE_EQUAL(m.cosine, 28.0 / sqrt(30.0 * 27.25), 1e-15);
    /* tolerances .2 .3 .4 .5 against differences 0 .5 1 0 */
    CU_ASSERT_EQUAL(m.mismatches, 2);
    CU_ASSERT_TRUE(m.has_ulp);
    /* f64 spacing in [2,4) is 2^-51: 2 -> 3 is 2^51 steps */
    CU_ASSERT_EQUAL(m.max_ulp, UINT64_C(1) << 51);
    s.dtype_ref = s.dtype_cand = GOLDEN_F32;
    run(&s, r, c, 4, &m);
    CU_ASSERT_EQUAL(m.max_ulp, UINT64_C(1) << 22);
    s.dtype_ref = s.dtype_cand = GOLDEN_I32;
    run(&s, r, c, 4, &m);
    CU_ASSERT_FALSE(m.has_ulp);
    CU_ASSERT_EQUAL(m.max_ulp, 0);
}

static void test_nonfinite(void)
{
    const double inf = INFINITY, nan = NAN;
    const double r[] = {nan, 1, inf, inf, nan, 1, -inf};
    const double c[] = {nan, nan, inf, -inf, inf, inf, 5};
    golden_cmp_setup s = setup(GOLDEN_TIER_KERNEL, GOLDEN_F32, 1e-5, 1e-3);
    golden_cmp_metrics m;
    run(&s, r, c, 7, &m);
    CU_ASSERT_EQUAL(m.finite_pairs, 0);
    CU_ASSERT_FALSE(m.has_finite);
    CU_ASSERT_TRUE(isnan(m.max_abs));
    CU_ASSERT_TRUE(isnan(m.mean_abs));
    CU_ASSERT_TRUE(isnan(m.rmse));
    CU_ASSERT_TRUE(isnan(m.max_rel));
    CU_ASSERT_DOUBLE_EQUAL(m.cosine, 1.0, 0); /* both norms are 0 */
    /* NaN/NaN and Inf/Inf agree; the other five pairs differ */
    CU_ASSERT_EQUAL(m.mismatches, 5);
    CU_ASSERT_EQUAL(m.nan_ref, 2);
    CU_ASSERT_EQUAL(m.nan_cand, 2);
    CU_ASSERT_EQUAL(m.inf_ref, 3);
    CU_ASSERT_EQUAL(m.inf_cand, 4);
    CU_ASSERT_EQUAL(m.new_nan, 1);
    CU_ASSERT_EQUAL(m.new_inf, 1);
}

static void test_nan_among_finite(void)
{
    /* one NaN must not poison the finite metrics */
    const double r[] = {1, 2, 3}, c[] = {1, NAN, 3.5};
    golden_cmp_setup s = setup(GOLDEN_TIER_LAYER, GOLDEN_F32, 0, 0);
    golden_cmp_metrics m;
    run(&s, r, c, 3, &m);
    CU_ASSERT_EQUAL(m.finite_pairs, 2);
    CU_ASSERT_DOUBLE_EQUAL(m.max_abs, 0.5, 0);
    CU_ASSERT_EQUAL(m.max_abs_index, 2);
    CU_ASSERT_DOUBLE_EQUAL(m.mean_abs, 0.25, 1e-15);
    CU_ASSERT_DOUBLE_EQUAL(m.cosine, (1 + 10.5) / (sqrt(10.0) * sqrt(13.25)), 1e-15);
    CU_ASSERT_EQUAL(m.new_nan, 1);
    CU_ASSERT_EQUAL(m.mismatches, 2);
}

static void test_zero_norms(void)
{
    const double z[] = {0, 0}, one[] = {1, 0}, negz[] = {-0.0, 0};
    golden_cmp_setup s = setup(GOLDEN_TIER_LAYER, GOLDEN_F32, 0, 0);
    golden_cmp_metrics m;
    run(&s, z, negz, 2, &m);
    CU_ASSERT_DOUBLE_EQUAL(m.cosine, 1.0, 0);
    CU_ASSERT_DOUBLE_EQUAL(m.max_abs, 0.0, 0);
    CU_ASSERT_EQUAL(m.max_abs_index, 0);
    CU_ASSERT_DOUBLE_EQUAL(m.max_rel, 0.0, 0);
    CU_ASSERT_EQUAL(m.mismatches, 0);
    CU_ASSERT_EQUAL(m.max_ulp, 0); /* -0 and +0 are the same step */
    run(&s, z, one, 2, &m);
    CU_ASSERT_DOUBLE_EQUAL(m.cosine, 0.0, 0);
    CU_ASSERT_DOUBLE_EQUAL(m.max_rel, 1e6, 1e-6); /* 1 / eps */
    run(&s, one, z, 2, &m);
    CU_ASSERT_DOUBLE_EQUAL(m.cosine, 0.0, 0);
}

static void test_single_and_empty(void)
{
    const double r[] = {-2}, c[] = {2};
    golden_cmp_setup s = setup(GOLDEN_TIER_LAYER, GOLDEN_F64, 0, 0);
    golden_cmp_metrics m;
    run(&s, r, c, 1, &m);
    CU_ASSERT_DOUBLE_EQUAL(m.cosine, -1.0, 1e-15);
    CU_ASSERT_DOUBLE_EQUAL(m.max_abs, 4.0, 0);
    CU_ASSERT_DOUBLE_EQUAL(m.max_rel, 2.0, 0);
    CU_ASSERT_DOUBLE_EQUAL(m.rmse, 4.0, 0);
    run(&s, r, c, 0, &m);
    CU_ASSERT_EQUAL(m.count, 0);
    CU_ASSERT_FALSE(m.has_finite);
    CU_ASSERT_DOUBLE_EQUAL(m.cosine, 1.0, 0);
    CU_ASSERT_EQUAL(m.mismatches, 0);
}

static void test_max_abs_first_index(void)
{
    const double r[] = {0, 0, 0, 0}, c[] = {0.5, 1, -1, 1};
    golden_cmp_setup s = setup(GOLDEN_TIER_KERNEL, GOLDEN_F32, 0, 0);
    golden_cmp_metrics m;
    run(&s, r, c, 4, &m);
    CU_ASSERT_EQUAL(m.max_abs_index, 1);
    /* the same with the maxima split over two merged chunks */
    golden_cmp_acc a, b;
    golden_cmp_acc_init(&a, 0);
    golden_cmp_add_f64(&s, &a, r, c, 2);
    golden_cmp_acc_init(&b, 2);
    golden_cmp_add_f64(&s, &b, r + 2, c + 2, 2);
    golden_cmp_merge(&a, &b);
    golden_cmp_finish(&s, &a, &m);
    CU_ASSERT_EQUAL(m.max_abs_index, 1);
    uint64_t shape[3] = {2, 3, 4}, co[3];
    golden_cmp_unravel(23, 3, shape, co);
    CU_ASSERT(co[0] == 1 && co[1] == 2 && co[2] == 3);
    golden_cmp_unravel(6, 3, shape, co);
    CU_ASSERT(co[0] == 0 && co[1] == 1 && co[2] == 2);
}

static void test_ulp_index(void)
{
    CU_ASSERT_EQUAL(golden_cmp_ulp_index(GOLDEN_F32, 1.0), 0x3F800000);
    CU_ASSERT_EQUAL(golden_cmp_ulp_index(GOLDEN_F32, -1.0), -0x3F800000);
    CU_ASSERT_EQUAL(golden_cmp_ulp_index(GOLDEN_F32, -0.0), 0);
    CU_ASSERT_EQUAL(golden_cmp_ulp_index(GOLDEN_F32, ldexp(1, -149)), 1); /* denormal */
    CU_ASSERT_EQUAL(golden_cmp_ulp_index(GOLDEN_F32, ldexp(1, -148)), 2);
    CU_ASSERT_EQUAL(golden_cmp_ulp_index(GOLDEN_F32, ldexp(1, -126)), 0x00800000);
    CU_ASSERT_EQUAL(golden_cmp_ulp_index(GOLDEN_F32, 3.4028234663852886e38), 0x7F7FFFFF);
    CU_ASSERT_EQUAL(golden_cmp_ulp_index(GOLDEN_F32, 1e39), 0x7F800000);
    CU_ASSERT_EQUAL(golden_cmp_ulp_index(GOLDEN_BF16, 1.0), 0x3F80);
    /* ties go to even: 1 + 2^-8 -> 1.0, 1 + 3 * 2^-8 -> 1 + 2^-6 */
    CU_ASSERT_EQUAL(golden_cmp_ulp_index(GOLDEN_BF16, 1.0 + ldexp(1, -8)), 0x3F80);
    CU_ASSERT_EQUAL(golden_cmp_ulp_index(GOLDEN_BF16, 1.0 + 3 * ldexp(1, -8)), 0x3F82);
    CU_ASSERT_EQUAL(golden_cmp_ulp_index(GOLDEN_BF16, 1.0 + 1.1 * ldexp(1, -8)), 0x3F81);
    CU_ASSERT_EQUAL(golden_cmp_ulp_index(GOLDEN_F16, 1.0), 0x3C00);
    CU_ASSERT_EQUAL(golden_cmp_ulp_index(GOLDEN_F16, 65504.0), 0x7BFF);
    CU_ASSERT_EQUAL(golden_cmp_ulp_index(GOLDEN_F16, 65520.0), 0x7C00);
    CU_ASSERT_EQUAL(golden_cmp_ulp_index(GOLDEN_F16, ldexp(1, -24)), 1);
    CU_ASSERT_EQUAL(golden_cmp_ulp_index(GOLDEN_F16, ldexp(1, -25)), 0);
    CU_ASSERT_EQUAL(golden_cmp_ulp_index(GOLDEN_F16, 1.5 * ldexp(1, -25)), 1);
    CU_ASSERT_EQUAL(golden_cmp_ulp_index(GOLDEN_F16, ldexp(1, -14)), 0x0400);
    CU_ASSERT_EQUAL(golden_cmp_ulp_index(GOLDEN_FP8_E4M3FN, 448.0), 0x7E);
    CU_ASSERT_EQUAL(golden_cmp_ulp_index(GOLDEN_FP8_E4M3FN, 1000.0), 0x7E);
    CU_ASSERT_EQUAL(golden_cmp_ulp_index(GOLDEN_FP8_E4M3FN, 1.0), 0x38);
    CU_ASSERT_EQUAL(golden_cmp_ulp_index(GOLDEN_FP8_E5M2, 1.0), 0x3C);
    CU_ASSERT_EQUAL(golden_cmp_ulp_index(GOLDEN_F64, 1.0), INT64_C(0x3FF0000000000000));
    CU_ASSERT_EQUAL(golden_cmp_ulp_index(GOLDEN_F64, 4.9406564584124654e-324), 1);
    golden_dtype t;
    CU_ASSERT_TRUE(golden_cmp_ulp_dtype(GOLDEN_F32, GOLDEN_BF16, &t));
    CU_ASSERT_EQUAL(t, GOLDEN_BF16);
    CU_ASSERT_TRUE(golden_cmp_ulp_dtype(GOLDEN_F16, GOLDEN_BF16, &t));
    CU_ASSERT_EQUAL(t, GOLDEN_BF16);
    CU_ASSERT_FALSE(golden_cmp_ulp_dtype(GOLDEN_F32, GOLDEN_I32, &t));
}

static void test_denormal_metrics(void)
{
    /* two f32 denormals one step apart; relative error uses eps because |r| < eps */
    const double r[] = {ldexp(1, -149)}, c[] = {ldexp(1, -148)};
    golden_cmp_setup s = setup(GOLDEN_TIER_KERNEL, GOLDEN_F32, 0, 0);
    golden_cmp_metrics m;
    run(&s, r, c, 1, &m);
    CU_ASSERT_EQUAL(m.max_ulp, 1);
    CU_ASSERT_DOUBLE_EQUAL(m.max_abs, ldexp(1, -149), 0);
    CU_ASSERT_DOUBLE_EQUAL(m.max_rel, ldexp(1, -149) / 1e-6, 1e-300);
    CU_ASSERT_EQUAL(m.mismatches, 1); /* atol 0 rtol 0: any difference */
    CU_ASSERT_DOUBLE_EQUAL(m.cosine, 1.0, 1e-15);
}

/* f32 reference, bf16 candidate = the reference rounded: 0 bf16 steps apart */
static void test_raw_mixed_dtypes(void)
{
    const float rf[2] = {1.0f, 0.1f};
    const uint16_t cb[2] = {0x3F80, 0x3DCD};
    golden_cmp_setup s = setup(GOLDEN_TIER_LAYER, GOLDEN_F32, 1e-5, 1.6e-2);
    s.dtype_cand = GOLDEN_BF16;
    golden_cmp_acc a;
    golden_cmp_acc_init(&a, 0);
    golden_cmp_add_raw(&s, &a, rf, cb, 2);
    golden_cmp_metrics m;
    golden_cmp_finish(&s, &a, &m);
    CU_ASSERT_EQUAL(m.max_ulp, 0);
    CU_ASSERT_DOUBLE_EQUAL(m.max_abs, 0.10009765625 - 0.100000001490116119384765625, 0);
    CU_ASSERT_EQUAL(m.max_abs_index, 1);
    CU_ASSERT_EQUAL(m.mismatches, 0);
}

static void test_logits(void)
{
    const double r[] = {
        1, 5, 3, 2,     /* decisive flip: 5 vs 3 */
        2, 2, 1, 0,     /* tie at the top: first index wins on both sides */
        3, 2.9, 0, 0,   /* near tie, flipped */
        7, 7, 7, 7,     /* a row of equal logits */
    };
    const double c[] = {
        1, 4, 4.5, 2,
        2, 2, 0, 1,
        2.8, 3, 0, 0,
        7, 7, 7, 7,
    };
    golden_cmp_setup s = setup(GOLDEN_TIER_LOGITS, GOLDEN_F32, 0, 0);
    s.row_len = 4;
    golden_cmp_metrics m;
    golden_cmp_acc a;
    golden_cmp_acc_init(&a, 0);
    golden_cmp_add_f64(&s, &a, r, c, 16);
    golden_cmp_finish(&s, &a, &m);
    CU_ASSERT_EQUAL(m.rows, 4);
    CU_ASSERT_DOUBLE_EQUAL(m.top1_match, 0.5, 0);
    CU_ASSERT_EQUAL(m.flips, 2);
    CU_ASSERT_EQUAL(m.near_tie_rows, 3);
    CU_ASSERT_EQUAL(m.near_tie_flips, 1);
    CU_ASSERT_DOUBLE_EQUAL(m.top5_overlap, 1.0, 0); /* k = 4 = the whole row */
    CU_ASSERT_EQUAL(a.n_examples, 2);
    CU_ASSERT_EQUAL(a.examples[0].row, 0);
    CU_ASSERT_EQUAL(a.examples[0].ref_top1, 1);
    CU_ASSERT_EQUAL(a.examples[0].cand_top1, 2);
    CU_ASSERT_DOUBLE_EQUAL(a.examples[0].margin, 2.0, 0);
    CU_ASSERT_FALSE(a.examples[0].near_tie);
    CU_ASSERT_EQUAL(a.examples[1].row, 2);
    CU_ASSERT_TRUE(a.examples[1].near_tie);
    CU_ASSERT_DOUBLE_EQUAL(a.examples[1].margin, 0.1, 1e-15);
}

static void test_top5_overlap(void)
{
    const double r[] = {0, 1, 2, 3, 4, 5, 6, /* */ 1, 1, 1, 1, 1, 1, 1};
    const double c[] = {6, 5, 4, 3, 0, 1, 2, /* */ 1, 1, 1, 1, 1, 1, 2};
    golden_cmp_setup s = setup(GOLDEN_TIER_LOGITS, GOLDEN_F32, 0, 0);
    s.row_len = 7;
    golden_cmp_metrics m;
    run(&s, r, c, 14, &m);
    /* row 0: {6,5,4,3,2} vs {0,1,2,3,6}: 3 common; row 1: every reference entry is a
     * bit-equal 1, so {6,0,1,2,3} is one of its top fives (5 common) and index 6 ties its
     * top-1 (issue 25: exact ties anywhere in the row; before, 4 common and a flip) */
    CU_ASSERT_DOUBLE_EQUAL(m.top5_overlap, 8.0 / 10.0, 1e-15);
    CU_ASSERT_DOUBLE_EQUAL(m.top1_match, 0.5, 0);
    CU_ASSERT_EQUAL(m.near_tie_rows, 1); /* row 1 has margin 0 */
}

static void test_top5_with_nan(void)
{
    /* NaN never ranks, so a row's top set holds its non-NaN entries (at most five) */
    const double r[] = {1, 2, NAN, -INFINITY, /* */ 1, 2, NAN, -INFINITY, /* */ NAN, NAN, NAN, NAN};
    const double c[] = {1, 2, NAN, -INFINITY, /* */ 1, NAN, NAN, -INFINITY, /* */ NAN, NAN, NAN, NAN};
    golden_cmp_setup s = setup(GOLDEN_TIER_LOGITS, GOLDEN_F32, 0, 0);
    s.row_len = 4;
    golden_cmp_metrics m;
    run(&s, r, c, 4, &m);
    CU_ASSERT_DOUBLE_EQUAL(m.top5_overlap, 1.0, 0); /* identical rows overlap fully */
    run(&s, r, c, 12, &m);
    /* row 0: 3 of 3; row 1: {1,0,3} vs {0,3}: 2 of 3; row 2: both empty, counts as equal */
    CU_ASSERT_DOUBLE_EQUAL(m.top5_overlap, (1.0 + 2.0 / 3.0 + 1.0) / 3.0, 1e-15);
    CU_ASSERT_EQUAL(m.rows, 3);
}

static void test_first_new_nonfinite(void)
{
    /* element 1 is NaN on both sides (not new), element 4 is the first new one, 6 the next */
    const double r[] = {1, NAN, 3, 4, 5, 6, 7, 8};
    const double c[] = {1, NAN, 3, 4, INFINITY, 6, NAN, 8};
    golden_cmp_setup s = setup(GOLDEN_TIER_LAYER, GOLDEN_F32, 0, 0);
    golden_cmp_metrics m;
    run(&s, r, c, 8, &m);
    CU_ASSERT_EQUAL(m.first_new_nonfinite, 4);
    CU_ASSERT_EQUAL(m.new_nan, 1);
    CU_ASSERT_EQUAL(m.new_inf, 1);
    /* split in two chunks: the earlier chunk's index wins, whichever chunk has one */
    golden_cmp_acc a, b;
    golden_cmp_acc_init(&a, 0);
    golden_cmp_add_f64(&s, &a, r, c, 5);
    golden_cmp_acc_init(&b, 5);
    golden_cmp_add_f64(&s, &b, r + 5, c + 5, 3);
    golden_cmp_merge(&a, &b);
    golden_cmp_finish(&s, &a, &m);
    CU_ASSERT_EQUAL(m.first_new_nonfinite, 4);
    golden_cmp_acc_init(&a, 0);
    golden_cmp_add_f64(&s, &a, r, r, 5); /* no new non-finite in the first chunk */
    golden_cmp_acc_init(&b, 5);
    golden_cmp_add_f64(&s, &b, r + 5, c + 5, 3);
    golden_cmp_merge(&a, &b);
    golden_cmp_finish(&s, &a, &m);
    CU_ASSERT_EQUAL(m.first_new_nonfinite, 6);
    run(&s, r, r, 8, &m);
    CU_ASSERT_EQUAL(m.first_new_nonfinite, -1);
}

static void test_tokens(void)
{
    const int32_t r[] = {1, 2, 3, 4, 5, 1, 2, 3, 4, 5, 9, 9, 9, 9, 9};
    const int32_t c[] = {1, 2, 3, 4, 5, 1, 2, 7, 4, 5, 9, 9, 9, 9, 8};
    int64_t div[3] = {99, 99, 99};
    golden_cmp_setup s = setup(GOLDEN_TIER_TOKENS, GOLDEN_I32, 0, 0);
    s.row_len = 5;
    s.first_divergence = div;
    golden_cmp_acc a, b;
    golden_cmp_acc_init(&a, 0);
    golden_cmp_add_raw(&s, &a, r, c, 7); /* a chunk ending mid-row is fine within one acc */
    golden_cmp_add_raw(&s, &a, r + 7, c + 7, 3);
    golden_cmp_acc_init(&b, 10);
    golden_cmp_add_raw(&s, &b, r + 10, c + 10, 5);
    golden_cmp_merge(&a, &b);
    golden_cmp_metrics m;
    golden_cmp_finish(&s, &a, &m);
    CU_ASSERT_EQUAL(m.sequences, 3);
    CU_ASSERT_EQUAL(m.sequences_exact, 1);
    CU_ASSERT_EQUAL(div[0], -1);
    CU_ASSERT_EQUAL(div[1], 2);
    CU_ASSERT_EQUAL(div[2], 4);
    CU_ASSERT_EQUAL(m.earliest_divergence, 2);
    CU_ASSERT_EQUAL(m.earliest_divergence_row, 1);
    CU_ASSERT_FALSE(m.has_ulp);

    /* ids equal in f64 but not as integers: the exact path must see the difference */
    const int64_t br[2] = {INT64_C(9007199254740992), 1};
    const int64_t bc[2] = {INT64_C(9007199254740993), 1};
    int64_t div2[1] = {99};
    s.dtype_ref = s.dtype_cand = GOLDEN_I64;
    s.row_len = 2;
    s.first_divergence = div2;
    golden_cmp_acc_init(&a, 0);
    golden_cmp_add_raw(&s, &a, br, bc, 2);
    golden_cmp_finish(&s, &a, &m);
    CU_ASSERT_EQUAL(div2[0], 0);
    CU_ASSERT_EQUAL(m.sequences_exact, 0);
}

/* ---- a naive second implementation on pseudo-random data ---- */

static uint64_t rng_state = 88172645463325252ULL;
static double rnd(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return (double)(rng_state >> 11) / 9007199254740992.0;
}

static void test_chunked_against_naive(void)
{
    enum { N = 50000, ROW = 100 };
    double *r = malloc(N * sizeof *r), *c = malloc(N * sizeof *c);
    CU_ASSERT_FATAL(r && c);
    for (int i = 0; i < N; i++) {
        r[i] = (rnd() - 0.5) * 8;
        c[i] = r[i] + (rnd() - 0.5) * 0.01;
        if (i % 997 == 5)
            c[i] = NAN;
        if (i % 1301 == 7)
            r[i] = INFINITY;
    }
    double max_abs = -1, max_rel = -1, sa = 0, ss = 0, dot = 0, nr = 0, nc = 0;
    uint64_t idx = 0, fin = 0, mism = 0, top1 = 0;
    for (int i = 0; i < N; i++) {
        if (!isfinite(r[i]) || !isfinite(c[i])) {
            mism++;
            continue;
        }
        double d = fabs(c[i] - r[i]);
        fin++;
        if (d > max_abs) {
            max_abs = d;
            idx = (uint64_t)i;
        }
        double rel = d / fmax(fabs(r[i]), 1e-6);
        if (rel > max_rel)
            max_rel = rel;
        sa += d;
        ss += d * d;
        dot += r[i] * c[i];
        nr += r[i] * r[i];
        nc += c[i] * c[i];
        if (d > 1e-3 + 1e-3 * fabs(r[i]))
            mism++;
    }
    for (int row = 0; row < N / ROW; row++) {
        int br = -1, bc = -1;
        for (int j = 0; j < ROW; j++) {
            double x = r[row * ROW + j], y = c[row * ROW + j];
            if (x == x && (br < 0 || x > r[row * ROW + br]))
                br = j;
            if (y == y && (bc < 0 || y > c[row * ROW + bc]))
                bc = j;
        }
        top1 += br == bc;
    }
    golden_cmp_setup s = setup(GOLDEN_TIER_LOGITS, GOLDEN_F64, 1e-3, 1e-3);
    s.row_len = ROW;
    const size_t splits[] = {N, 100, 1700, 12300}; /* row-aligned, as merge needs */
    for (size_t k = 0; k < sizeof splits / sizeof *splits; k++) {
        golden_cmp_acc all, part;
        golden_cmp_acc_init(&all, 0);
        for (size_t off = 0; off < N; off += splits[k]) {
            size_t n = N - off < splits[k] ? N - off : splits[k];
            golden_cmp_acc_init(&part, off);
            golden_cmp_add_f64(&s, &part, r + off, c + off, n);
            if (off == 0)
                all = part;
            else
                golden_cmp_merge(&all, &part);
        }
        golden_cmp_metrics m;
        golden_cmp_finish(&s, &all, &m);
        CU_ASSERT_EQUAL(m.finite_pairs, fin);
        CU_ASSERT_EQUAL(m.mismatches, mism);
        CU_ASSERT_DOUBLE_EQUAL(m.max_abs, max_abs, 0);
        CU_ASSERT_EQUAL(m.max_abs_index, idx);
        CU_ASSERT_DOUBLE_EQUAL(m.max_rel, max_rel, 0);
        CU_ASSERT_DOUBLE_EQUAL(m.mean_abs, sa / (double)fin, 1e-12 * sa / (double)fin);
        CU_ASSERT_DOUBLE_EQUAL(m.rmse, sqrt(ss / (double)fin), 1e-12);
        CU_ASSERT_DOUBLE_EQUAL(m.cosine, dot / (sqrt(nr) * sqrt(nc)), 1e-12);
        CU_ASSERT_EQUAL(m.rows, N / ROW);
        CU_ASSERT_DOUBLE_EQUAL(m.top1_match, (double)top1 / (N / ROW), 1e-15);
    }
    free(r);
    free(c);
}

static void test_tier_names(void)
{
    golden_tier t;
    CU_ASSERT_EQUAL(golden_tier_parse("logits", &t), 0);
    CU_ASSERT_EQUAL(t, GOLDEN_TIER_LOGITS);
    CU_ASSERT_STRING_EQUAL(golden_tier_name(GOLDEN_TIER_TOKENS), "tokens");
    CU_ASSERT_EQUAL(golden_tier_parse("final", &t), -1);
}

/* Magnitudes that overflow or underflow plain sums: each sum keeps its own scale. */
static void test_scaled_sums(void)
{
    /* r = (1, 1, 1, 1), c = (1, 1, 1, 1e200): dot 3 + 1e200, |r| 2, |c| ~1e200 */
    const double r[] = {1, 1, 1, 1}, c[] = {1, 1, 1, 1e200};
    golden_cmp_setup s = setup(GOLDEN_TIER_LAYER, GOLDEN_F64, 1e-7, 1e-7);
    golden_cmp_metrics m;
    run(&s, r, c, 4, &m);
    CU_ASSERT_DOUBLE_EQUAL(m.cosine, 0.5, 1e-15);      /* 1e200 / (2 * 1e200) */
    CU_ASSERT_DOUBLE_EQUAL(m.rel_err, 0.5e200, 1e185);  /* ||c - r|| = 1e200 - 1 */
    CU_ASSERT_DOUBLE_EQUAL(m.norm_ratio, 0.5e200, 1e185);
    CU_ASSERT_FALSE(m.zero_ref);
    /* tiny values whose squares underflow: cosine of (1e-200, 0) and (1e-200, 1e-200) */
    const double r2[] = {1e-200, 0}, c2[] = {1e-200, 1e-200};
    run(&s, r2, c2, 2, &m);
    CU_ASSERT_DOUBLE_EQUAL(m.cosine, 1.0 / sqrt(2.0), 1e-15);
    CU_ASSERT_DOUBLE_EQUAL(m.rel_err, 1.0, 1e-15);
    CU_ASSERT_FALSE(m.zero_ref);
    /* an all-zero reference is flagged (judged by absolute error) */
    const double z[] = {0, 0}, c3[] = {0, 1e-30};
    run(&s, z, c3, 2, &m);
    CU_ASSERT_TRUE(m.zero_ref);
    CU_ASSERT_TRUE(isnan(m.rel_err));
}

/* Non-finite classes and a reference without finite elements. */
static void test_nonfinite_classes(void)
{
    const double r[] = {INFINITY, -INFINITY, NAN, NAN, 1}, c[] = {-INFINITY, -INFINITY, NAN, INFINITY, 1};
    golden_cmp_setup s = setup(GOLDEN_TIER_LAYER, GOLDEN_F64, 1e-7, 1e-7);
    golden_cmp_metrics m;
    run(&s, r, c, 5, &m);
    CU_ASSERT_EQUAL(m.class_diff, 2);        /* +Inf -> -Inf, NaN -> +Inf */
    CU_ASSERT_EQUAL(m.first_class_diff, 0);
    CU_ASSERT_EQUAL(m.ref_finite, 1);
    const double nan4[] = {NAN, NAN}, any[] = {1, 2};
    run(&s, nan4, any, 2, &m);
    CU_ASSERT_EQUAL(m.ref_finite, 0);
}

/* Integers are compared as integers, beyond 2^53 and across signedness. */
static void test_integer_exact(void)
{
    int64_t ri[] = {INT64_C(9007199254740992), -1, 5};
    int64_t ci[] = {INT64_C(9007199254740993), -1, 5};
    golden_cmp_setup s = setup(GOLDEN_TIER_KERNEL, GOLDEN_I64, 0, 0);
    golden_cmp_acc a;
    golden_cmp_metrics m;
    golden_cmp_acc_init(&a, 0);
    golden_cmp_add_raw(&s, &a, ri, ci, 3);
    golden_cmp_finish(&s, &a, &m);
    CU_ASSERT_TRUE(m.ints);
    CU_ASSERT_EQUAL(m.int_diff, 1);
    CU_ASSERT_EQUAL(m.mismatches, 1);
    CU_ASSERT_EQUAL(m.first_int_diff, 0);
    CU_ASSERT_STRING_EQUAL(m.first_int_ref, "9007199254740992");
    CU_ASSERT_STRING_EQUAL(m.first_int_cand, "9007199254740993");
    /* f64 sees two equal values; max_abs is the exact integer difference (issue 29) */
    CU_ASSERT_DOUBLE_EQUAL(m.max_abs, 1, 0);
    CU_ASSERT_EQUAL(m.max_abs_index, 0);
    /* u64 at 2^63 and above; i64 -1 against u64 2^64 - 1 (same bits, other integer) */
    uint64_t ru[] = {UINT64_C(9223372036854775808), UINT64_MAX};
    uint64_t cu[] = {UINT64_C(9223372036854775809), UINT64_MAX};
    s.dtype_ref = s.dtype_cand = GOLDEN_U64;
    golden_cmp_acc_init(&a, 0);
    golden_cmp_add_raw(&s, &a, ru, cu, 2);
    golden_cmp_finish(&s, &a, &m);
    CU_ASSERT_EQUAL(m.int_diff, 1);
    CU_ASSERT_STRING_EQUAL(m.first_int_cand, "9223372036854775809");
    CU_ASSERT_DOUBLE_EQUAL(m.max_abs, 1, 0);
    int64_t rs[] = {-1};
    uint64_t cs[] = {UINT64_MAX};
    s.dtype_ref = GOLDEN_I64;
    golden_cmp_acc_init(&a, 0);
    golden_cmp_add_raw(&s, &a, rs, cs, 1);
    golden_cmp_finish(&s, &a, &m);
    CU_ASSERT_EQUAL(m.int_diff, 1);
    /* |2^64 - 1 - (-1)| = 2^64, saturated at 2^64 - 1, which f64 rounds to 2^64 */
    CU_ASSERT_DOUBLE_EQUAL(m.max_abs, 18446744073709551616.0, 0);
}

/* Layer rows: the minimum row cosine and its row, by hand. */
static void test_layer_rows(void)
{
    /* rows (1, 0), (0, 1), (1, 1) against (1, 0), (0, -1), (1, 0) */
    const double r[] = {1, 0, 0, 1, 1, 1}, c[] = {1, 0, 0, -1, 1, 0};
    golden_cmp_setup s = setup(GOLDEN_TIER_LAYER, GOLDEN_F64, 1e-7, 1e-7);
    s.row_len = 2;
    double rows[3];
    s.row_value = rows;
    golden_cmp_metrics m;
    run(&s, r, c, 6, &m);
    CU_ASSERT_EQUAL(m.row_cos_rows, 3);
    CU_ASSERT_DOUBLE_EQUAL(m.min_row_cosine, -1.0, 1e-15);
    CU_ASSERT_EQUAL(m.min_row_cosine_row, 1);
    CU_ASSERT_DOUBLE_EQUAL(rows[0], 1.0, 1e-15);
    CU_ASSERT_DOUBLE_EQUAL(rows[2], 1.0 / sqrt(2.0), 1e-15);
}

/* Logits rows: KL and log-softmax distance of two-entry rows, by hand. */
static void test_logits_kl(void)
{
    /* row (0, 0) against (0, log 3): p = (1/2, 1/2), q = (1/4, 3/4):
     * KL = 1/2 log 2 + 1/2 log(2/3); log-softmax r = (-log 2, -log 2), c = (-log 4, log 3/4) */
    const double r[] = {0, 0}, c[] = {0, log(3.0)};
    golden_cmp_setup s = setup(GOLDEN_TIER_LOGITS, GOLDEN_F64, 1e-7, 1e-7);
    s.row_len = 2;
    golden_cmp_metrics m;
    run(&s, r, c, 2, &m);
    CU_ASSERT_DOUBLE_EQUAL(m.kl_max, 0.5 * log(2.0) + 0.5 * log(2.0 / 3.0), 1e-14);
    CU_ASSERT_DOUBLE_EQUAL(m.logsoftmax_max_abs, log(2.0), 1e-14); /* -log 4 vs -log 2 */
    /* a -Inf mask on both sides carries no mass; against a finite candidate value it does */
    const double r2[] = {1, -INFINITY}, c2[] = {1, -INFINITY};
    run(&s, r2, c2, 2, &m);
    CU_ASSERT_DOUBLE_EQUAL(m.kl_max, 0, 1e-15);
    const double r3[] = {1, 0}, c3[] = {1, -INFINITY};
    run(&s, r3, c3, 2, &m);
    CU_ASSERT_TRUE(isinf(m.kl_max));
}

/* One step of a float format at a magnitude (the near-tie margin by default). */
static void test_step(void)
{
    CU_ASSERT_DOUBLE_EQUAL(golden_cmp_step(GOLDEN_BF16, 20.0), 0.125, 0);
    CU_ASSERT_DOUBLE_EQUAL(golden_cmp_step(GOLDEN_BF16, 16.0), 0.125, 0);
    CU_ASSERT_DOUBLE_EQUAL(golden_cmp_step(GOLDEN_BF16, 15.9), 0.0625, 0);
    CU_ASSERT_DOUBLE_EQUAL(golden_cmp_step(GOLDEN_F32, 20.0), ldexp(1.0, 4 - 23), 0);
    CU_ASSERT_DOUBLE_EQUAL(golden_cmp_step(GOLDEN_F16, 0.0), ldexp(1.0, -24), 0);
    CU_ASSERT_DOUBLE_EQUAL(golden_cmp_step(GOLDEN_I32, 3.0), 0, 0);
}

/* One xorshift step of *x and two values in [-0.5, 0.5) from it (the SIMD tests' data). */
static void two_units(uint64_t *x, double *u, double *v)
{
    *x ^= *x << 13;
    *x ^= *x >> 7;
    *x ^= *x << 17;
    *u = (double)(*x >> 11) / 9007199254740992.0 - 0.5;
    *v = (double)((*x * 2654435761u) >> 11) / 9007199254740992.0 - 0.5;
}

/* The AVX2 loop and the portable loop give the same bits, on random and adversarial data
 * (NaN/Inf, denormals, signed zeros, huge and tiny magnitudes), for f64, f32 and bf16. */
static void test_simd_bit_identical(void)
{
    enum { N = 3 * GOLDEN_CMP_BLOCK + 37 };
    double *r = malloc(N * sizeof *r), *c = malloc(N * sizeof *c);
    float *rf = malloc(N * sizeof *rf), *cf = malloc(N * sizeof *cf);
    uint16_t *rb = malloc(N * sizeof *rb), *cb = malloc(N * sizeof *cb);
    CU_ASSERT_FATAL(r && c && rf && cf && rb && cb);
    uint64_t x = 88172645463325252ull;
    for (int kind = 0; kind < 6; kind++) {
        for (size_t i = 0; i < N; i++) {
            double u, v;
            two_units(&x, &u, &v);
            switch (kind) {
            case 0: r[i] = u; c[i] = u + v * 1e-3; break;            /* plain */
            case 1: r[i] = u * 1e-310; c[i] = v * 1e-310; break;     /* denormals */
            case 2: r[i] = (i & 1) ? 0.0 : -0.0; c[i] = (i & 2) ? -0.0 : 0.0; break;
            case 3: r[i] = u * 1e300; c[i] = v * 1e300; break;       /* huge: scaled */
            case 4: r[i] = u; c[i] = i % 997 == 5 ? NAN : i % 991 == 7 ? -INFINITY : u; break;
            default: r[i] = u * 1e-3; c[i] = u * 1e-3 + (i % 4096 == 100 ? 1.0 : 0.0); break;
            }
            rf[i] = (float)r[i];
            cf[i] = (float)c[i];
            uint32_t br, bc;
            memcpy(&br, &rf[i], 4);
            memcpy(&bc, &cf[i], 4);
            rb[i] = (uint16_t)(br >> 16);
            cb[i] = (uint16_t)(bc >> 16);
        }
        static const golden_dtype types[] = {GOLDEN_F64, GOLDEN_F32, GOLDEN_BF16};
        const void *rs[] = {r, rf, rb}, *cs[] = {c, cf, cb};
        for (int t = 0; t < 3; t++)
            for (int tier = 0; tier < 2; tier++) {
                golden_cmp_setup s = setup(tier ? GOLDEN_TIER_LAYER : GOLDEN_TIER_KERNEL, types[t],
                                           1e-5, 1e-3);
                s.row_len = tier ? (t == 1 ? 100 : 64) : 0; /* 100: rows across blocks */
                golden_cmp_metrics m[2];
                for (int scalar = 0; scalar < 2; scalar++) {
                    s.scalar_only = scalar;
                    golden_cmp_acc a;
                    golden_cmp_acc_init(&a, 0);
                    golden_cmp_add_raw(&s, &a, rs[t], cs[t], N);
                    golden_cmp_finish(&s, &a, &m[scalar]);
                }
                CU_ASSERT_EQUAL(memcmp(&m[0], &m[1], sizeof m[0]), 0);
            }
    }
    free(r);
    free(c);
    free(rf);
    free(cf);
    free(rb);
    free(cb);
}

/* A second, plain implementation of the histogram bin: frexp on |c - r|. */
static int naive_bin(double r, double c)
{
    if (!isfinite(r) || !isfinite(c))
        return GOLDEN_CMP_HIST_NONFINITE;
    double ad = fabs(c - r);
    if (ad == 0)
        return GOLDEN_CMP_HIST_ZERO;
    int e = GOLDEN_CMP_HIST_EMAX;
    if (isfinite(ad)) {
        frexp(ad, &e); /* ad in [2^(e-1), 2^e) */
        e -= 1;
    }
    if (e < GOLDEN_CMP_HIST_EMIN)
        e = GOLDEN_CMP_HIST_EMIN;
    if (e > GOLDEN_CMP_HIST_EMAX)
        e = GOLDEN_CMP_HIST_EMAX;
    return 1 + e - GOLDEN_CMP_HIST_EMIN;
}

/* Worked by hand: which bin each pair lands in, and nothing counted when it is off. */
static void test_histogram_by_hand(void)
{
    double r[] = {0.0, 1.0, 1.0, -0.0, 1e-300, NAN, 1.0, 0x1p40, 5e-324, 2.0, -1e308};
    double c[] = {0.0, 1.5, 3.0, 0.0, 2e-300, NAN, INFINITY, 0.0, 0.0, 2.0 + 0x1p-59, 1e308};
    size_t n = sizeof r / sizeof *r;
    golden_cmp_setup s = setup(GOLDEN_TIER_KERNEL, GOLDEN_F64, 0, 0);
    golden_cmp_metrics m;
    run(&s, r, c, n, &m);
    CU_ASSERT_FALSE(m.has_hist);
    for (int b = 0; b < GOLDEN_CMP_HIST_BINS; b++)
        CU_ASSERT_EQUAL(m.hist[b], 0);
    s.histogram = true;
    run(&s, r, c, n, &m);
    CU_ASSERT_TRUE(m.has_hist);
    /* 0 - 0, 0 - -0 and (2 + 2^-59) - 2 (2 + 2^-59 rounds to 2 in f64) are exact zeros */
    uint64_t exact[GOLDEN_CMP_HIST_BINS] = {0};
    exact[GOLDEN_CMP_HIST_ZERO] = 3;
    exact[1 + (-1) - GOLDEN_CMP_HIST_EMIN] = 1;
    exact[1 + 1 - GOLDEN_CMP_HIST_EMIN] = 1;
    exact[1] = 2;                                       /* 1e-300 and 5e-324: below 2^-60 */
    exact[GOLDEN_CMP_HIST_NONFINITE - 1] = 2;    /* 2^40 clamped, 2e308 overflowing to Inf */
    exact[GOLDEN_CMP_HIST_NONFINITE] = 2;        /* NaN vs NaN, 1 vs Inf */
    for (int b = 0; b < GOLDEN_CMP_HIST_BINS; b++)
        CU_ASSERT_EQUAL(m.hist[b], exact[b]);
    s.scalar_only = true;
    golden_cmp_metrics m2;
    run(&s, r, c, n, &m2);
    CU_ASSERT_EQUAL(memcmp(m.hist, m2.hist, sizeof m.hist), 0);
}

/* The histogram is the same counts on the AVX2 and portable paths, split into chunks and
 * merged or not, and equal to the plain frexp implementation, on random and adversarial
 * data (NaN/Inf, denormals, signed zeros, huge values, exact matches), f64/f32/bf16. */
static void test_histogram_paths(void)
{
    enum { N = 3 * GOLDEN_CMP_BLOCK + 37 };
    double *r = malloc(N * sizeof *r), *c = malloc(N * sizeof *c);
    float *rf = malloc(N * sizeof *rf), *cf = malloc(N * sizeof *cf);
    uint16_t *rb = malloc(N * sizeof *rb), *cb = malloc(N * sizeof *cb);
    CU_ASSERT_FATAL(r && c && rf && cf && rb && cb);
    uint64_t x = 0x9E3779B97F4A7C15ull;
    for (int kind = 0; kind < 8; kind++) {
        for (size_t i = 0; i < N; i++) {
            double u, v;
            two_units(&x, &u, &v);
            switch (kind) {
            case 0: r[i] = u; c[i] = u + v * ldexp(1.0, -(int)(x % 80)); break; /* many binades */
            case 1: r[i] = u * 1e-310; c[i] = v * 1e-310; break;
            case 2: r[i] = (i & 1) ? 0.0 : -0.0; c[i] = (i & 2) ? -0.0 : 0.0; break;
            case 3: r[i] = u * 1e308; c[i] = -v * 1e308; break; /* differences overflow */
            case 4: r[i] = u; c[i] = i % 97 == 5 ? NAN : i % 91 == 7 ? -INFINITY : u; break;
            case 5: r[i] = i % 13 == 0 ? INFINITY : u; c[i] = i % 17 == 0 ? NAN : u * (1 + v); break;
            case 6: r[i] = u * 1e12; c[i] = v * 1e12; break;
            default: r[i] = u; c[i] = (i % 3) ? u : u + ldexp(v, -(int)(i % 70)); break;
            }
            rf[i] = (float)r[i];
            cf[i] = (float)c[i];
            uint32_t br, bc;
            memcpy(&br, &rf[i], 4);
            memcpy(&bc, &cf[i], 4);
            rb[i] = (uint16_t)(br >> 16);
            cb[i] = (uint16_t)(bc >> 16);
        }
        static const golden_dtype types[] = {GOLDEN_F64, GOLDEN_F32, GOLDEN_BF16};
        const void *rs[] = {r, rf, rb}, *cs[] = {c, cf, cb};
        for (int t = 0; t < 3; t++) {
            golden_cmp_setup s = setup(GOLDEN_TIER_KERNEL, types[t], 1e-5, 1e-3);
            s.histogram = true;
            uint64_t want[GOLDEN_CMP_HIST_BINS] = {0};
            for (size_t i = 0; i < N; i++) {
                double vr, vc;
                if (t == 0) {
                    vr = r[i], vc = c[i];
                } else {
                    uint32_t br = t == 1 ? 0 : (uint32_t)rb[i] << 16, bc = t == 1 ? 0 : (uint32_t)cb[i] << 16;
                    float fr = rf[i], fc = cf[i];
                    if (t == 2) {
                        memcpy(&fr, &br, 4);
                        memcpy(&fc, &bc, 4);
                    }
                    vr = fr, vc = fc;
                }
                want[naive_bin(vr, vc)]++;
            }
            golden_cmp_metrics m[3];
            for (int way = 0; way < 3; way++) {
                s.scalar_only = way == 1;
                golden_cmp_acc a;
                golden_cmp_acc_init(&a, 0);
                if (way < 2) {
                    golden_cmp_add_raw(&s, &a, rs[t], cs[t], N);
                } else { /* uneven chunks merged in order */
                    size_t w = golden_dtype_size(types[t]);
                    for (size_t off = 0; off < N;) {
                        size_t k = N - off < 1001 ? N - off : 1001;
                        golden_cmp_acc b;
                        golden_cmp_acc_init(&b, off);
                        golden_cmp_add_raw(&s, &b, (const char *)rs[t] + off * w,
                                           (const char *)cs[t] + off * w, k);
                        golden_cmp_merge(&a, &b);
                        off += k;
                    }
                }
                golden_cmp_finish(&s, &a, &m[way]);
            }
            uint64_t sum = 0;
            for (int b = 0; b < GOLDEN_CMP_HIST_BINS; b++) {
                CU_ASSERT_EQUAL(m[0].hist[b], want[b]);
                CU_ASSERT_EQUAL(m[1].hist[b], want[b]);
                CU_ASSERT_EQUAL(m[2].hist[b], want[b]);
                sum += m[0].hist[b];
            }
            CU_ASSERT_EQUAL(sum, N);
        }
    }
    free(r);
    free(c);
    free(rf);
    free(cf);
    free(rb);
    free(cb);
}

int main(void)
{
    static const golden_test tests[] = {
        {"basic metrics", test_basic_metrics},
        {"non-finite pairs", test_nonfinite},
        {"NaN among finite values", test_nan_among_finite},
        {"cosine with zero norms", test_zero_norms},
        {"single element and empty", test_single_and_empty},
        {"max_abs first index", test_max_abs_first_index},
        {"ULP index", test_ulp_index},
        {"denormals", test_denormal_metrics},
        {"raw mixed dtypes", test_raw_mixed_dtypes},
        {"logits tier", test_logits},
        {"first new NaN/Inf located", test_first_new_nonfinite},
        {"top-5 overlap with NaN and short rows", test_top5_with_nan},
        {"top5 overlap and ties", test_top5_overlap},
        {"tokens tier", test_tokens},
        {"chunked against naive", test_chunked_against_naive},
        {"tier names", test_tier_names},
        {"scaled sums", test_scaled_sums},
        {"non-finite classes", test_nonfinite_classes},
        {"integers exactly", test_integer_exact},
        {"layer rows", test_layer_rows},
        {"logits KL", test_logits_kl},
        {"step of a format", test_step},
        {"AVX2 and portable loops give the same bits", test_simd_bit_identical},
        {"|c - r| histogram by hand", test_histogram_by_hand},
        {"a setup of an unknown version or tier is refused", test_setup_check},
        {"|c - r| histogram: paths, chunks, naive", test_histogram_paths},
        {0, 0},
    };
    return golden_test_run("compare", tests);
}
