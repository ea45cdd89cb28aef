/* The one-pass metrics engine of golden-diff: every metric of calculet-diff-report/v1 for one
 * reference/candidate pair, accumulated block by block and mergeable across threads. */
#ifndef GOLDEN_COMPARE_H
#define GOLDEN_COMPARE_H
#include "golden/api.h"
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "golden/dtype.h"
#include "golden/error.h"

/* The handbook's (section 6) comparison tiers. */
typedef enum {
    GOLDEN_TIER_KERNEL,
    GOLDEN_TIER_LAYER,
    GOLDEN_TIER_LOGITS,
    GOLDEN_TIER_TOKENS,
    GOLDEN_TIER_ROUTER,      /* MoE router taps: top-k ids exact per row, weights as layer */
    GOLDEN_TIER_COUNT
} golden_tier;

/* "kernel", "layer", "logits", "tokens", "router". */
GOLDEN_API const char *golden_tier_name(golden_tier t);
/* 0, or -1 when the name is unknown. */
GOLDEN_API int golden_tier_parse(const char *name, golden_tier *out);

/* Elements converted and reduced at a time inside one add call (fits in L1/L2). */
#define GOLDEN_CMP_BLOCK 4096
/* Top-k of the logits tier. */
#define GOLDEN_CMP_TOPK 5
/* Flip examples (top-1 changes of the logits tier) kept per pair, the first by row. */
#define GOLDEN_CMP_EXAMPLES 16

/* The |c - r| histogram (golden_cmp_setup.histogram): integer counts, so they merge by adding
 * and do not depend on threads, chunking or the AVX2/portable choice. Bin GOLDEN_CMP_HIST_ZERO:
 * |c - r| = 0 exactly; bin 1 + e - GOLDEN_CMP_HIST_EMIN: floor(log2 |c - r|) = e, taken from
 * the f64 exponent of |c - r| and clamped to [EMIN, EMAX] (so bin 1 also holds everything
 * below 2^EMIN, f64 subnormals included, and the last exponent bin everything from 2^EMAX up,
 * a difference that overflows to Inf included); bin GOLDEN_CMP_HIST_NONFINITE: pairs where
 * either side is NaN or Inf. The bins sum to the pair count. */
#define GOLDEN_CMP_HIST_EMIN (-60)
#define GOLDEN_CMP_HIST_EMAX 30
#define GOLDEN_CMP_HIST_ZERO 0
#define GOLDEN_CMP_HIST_NONFINITE (GOLDEN_CMP_HIST_EMAX - GOLDEN_CMP_HIST_EMIN + 2)
#define GOLDEN_CMP_HIST_BINS (GOLDEN_CMP_HIST_NONFINITE + 1)

/* What to compute for one pair; fixed for the whole pass. Versioned: start from
 * GOLDEN_CMP_SETUP_INIT; golden_cmp_setup_check refuses an unknown version (the add and
 * finish calls below return nothing, so check a setup once before the pass). */
#define GOLDEN_CMP_SETUP_VERSION 1u
typedef struct {
    unsigned version;        /* GOLDEN_CMP_SETUP_VERSION */
    golden_tier tier;
    golden_dtype dtype_ref, dtype_cand;
    double atol, rtol;       /* mismatch: |c - r| > atol + rtol * |r| */
    double eps;              /* max_rel denominator floor */
    double near_tie_margin;  /* logits: reference top1 - top2 < margin is a near tie; NaN =
                              * one step of the pair's coarser float format at |top1| */
    uint64_t row_len;        /* logits/tokens/layer: elements per row (the last axis); layer
                              * rows (per-row cosine) only when row_len > 0 */
    /* Per-row records, one slot per row (rows are disjoint between chunks, so threads may
     * share them); NULL = not recorded. tokens: first differing step (-1 when none);
     * layer: row cosine (NaN for a zero reference row within atol); logits: KL divergence;
     * logits: row_flags = flipped | (top-5 common share in 60ths) << 1. */
    int64_t *first_divergence;
    double *row_value;
    uint8_t *row_flags;
    /* the portable loop only, not the AVX2 one (both give the same bits; for tests) */
    bool scalar_only;
    /* count |c - r| into the histogram above (off by default: a zeroed setup keeps the old
     * behaviour and cost) */
    bool histogram;
} golden_cmp_setup;
#define GOLDEN_CMP_SETUP_INIT {.version = GOLDEN_CMP_SETUP_VERSION}
/* 0, or GOLDEN_ERR (GOLDEN_EINVAL) when s is NULL or of a version this libgolden does not
 * know, or its tier is not one of golden_tier. */
GOLDEN_API int golden_cmp_setup_check(const golden_cmp_setup *s, golden_error *err);

/* Whether the pair has a ULP distance and in which float format it is measured: the
 * coarser (fewer mantissa bits) of two float dtypes; false when either side is integer. */
GOLDEN_API bool golden_cmp_ulp_dtype(golden_dtype a, golden_dtype b, golden_dtype *out);

/* Ordered index of x rounded (to nearest, ties to even) into float format t: adjacent
 * representable values differ by 1, +0 and -0 are both 0, negatives are negative, values
 * beyond the largest finite saturate at the infinity (or largest) code. x must be finite. */
GOLDEN_API int64_t golden_cmp_ulp_index(golden_dtype t, double x);

typedef struct {
    uint64_t row;
    int64_t ref_top1, cand_top1;
    double margin;           /* reference top1 - top2 (NaN when the row has < 2 values) */
    bool near_tie;
} golden_cmp_flip;

typedef struct {
    int64_t idx[GOLDEN_CMP_TOPK];
    double val[GOLDEN_CMP_TOPK];
    double other[GOLDEN_CMP_TOPK]; /* the other side's value at idx (the reference's value
                                    * at the candidate's top entries: exact ties) */
    int n;
} golden_cmp_topk;

/* Accumulators for a contiguous range of elements. Consecutive add calls on one acc must
 * cover consecutive ranges; accs of ranges that start on row boundaries merge in order. */
typedef struct {
    uint64_t first, n;               /* element range covered */
    uint64_t pairs, finite_pairs;
    double max_abs;
    uint64_t max_abs_index;          /* linear, first of the maxima */
    double max_rel;
    double sum_abs, sum_abs_c;       /* Neumaier sums of block partial sums */
    double sum_sq, sum_sq_c;
    /* dot, |r|^2, |c|^2 and |c-r|^2 (sum_sq) each carry a power-of-two scale (value *
     * 2^sexp[i]), so finite data never overflows or underflows them */
    double dot, dot_c, norm_r, norm_r_c, norm_c, norm_c_c;
    int sexp[4];
    double max_tol;                  /* max |c - r| / (atol + rtol |r|) over finite pairs */
    uint64_t max_tol_index;          /* linear, first element that uses max_tol */
    uint64_t mismatches;
    uint64_t class_diff;             /* reference non-finite, candidate of another class */
    int64_t first_class_diff;
    bool ints;                       /* both sides integer: compared exactly as integers */
    uint64_t int_diff;
    int64_t first_int_diff;
    uint64_t first_int_ref, first_int_cand; /* their bits (see golden_cmp_int_str) */
    bool first_int_ref_neg, first_int_cand_neg;
    uint64_t int_max_abs, int_max_abs_index; /* exact max |c - r| of integers (first maximum) */
    /* three-way (candidate side only): elements the candidate gets wrong that the baseline
     * does not get wrong in the same place, at least as badly */
    uint64_t unshared;
    int64_t first_unshared;
    uint64_t unshared_nf;            /* of those, integer or non-finite-class differences */
    /* layer rows */
    uint64_t row_cos_rows;
    double min_row_cos;
    uint64_t min_row_cos_row;
    double cr_d, cr_r, cr_c, cr_maxc;
    int cr_e[3];
    /* logits rows: KL(softmax(ref) || softmax(cand)) and log-softmax distance */
    double kl_max, kl_sum;
    uint64_t kl_max_row;
    double lsm_max;
    double sm_mr, sm_sr, sm_t, sm_mc, sm_sc, sm_dmin, sm_dmax;
    bool sm_inf;
    bool has_ulp;
    uint64_t max_ulp;
    uint64_t nan_ref, nan_cand, inf_ref, inf_cand, new_nan, new_inf;
    int64_t first_new_nonfinite;     /* linear index of the first new NaN/Inf, -1 none */
    /* logits */
    uint64_t rows, top1_match, near_tie_rows, near_tie_flips, flips;
    uint64_t top5_common; /* sum over rows of 60 * common / k (exact; see compare.c) */
    golden_cmp_flip examples[GOLDEN_CMP_EXAMPLES];
    int n_examples;
    /* tokens */
    uint64_t sequences, sequences_exact;
    int64_t earliest_divergence;     /* smallest first-divergence step over rows, -1 none */
    uint64_t earliest_divergence_row;
    /* the row in progress (logits/tokens) */
    uint64_t row_pos;
    golden_cmp_topk cur_ref, cur_cand;
    int64_t cur_div;
    uint64_t hist[GOLDEN_CMP_HIST_BINS]; /* when setup.histogram (see GOLDEN_CMP_HIST_*) */
} golden_cmp_acc;

/* Start an empty accumulator for elements beginning at `first`. */
GOLDEN_API void golden_cmp_acc_init(golden_cmp_acc *a, uint64_t first);

/* Add n pairs of values already in f64 (ref[i], cand[i] are elements first+i where
 * first = a->first + a->n). */
GOLDEN_API void golden_cmp_add_f64(const golden_cmp_setup *s, golden_cmp_acc *a, const double *ref,
                        const double *cand, size_t n);

/* Add n pairs of canonical bytes (dtype_ref / dtype_cand), converting exactly in blocks. */
GOLDEN_API void golden_cmp_add_raw(const golden_cmp_setup *s, golden_cmp_acc *a, const void *ref,
                        const void *cand, size_t n);

/* Three-way: add n elements of reference, candidate and baseline (canonical bytes) to the
 * candidate's accumulator a and the baseline's ba at once, counting in a->unshared the
 * candidate's wrong elements (a mismatch or a non-finite class difference) where the
 * baseline is right, or wrong by less than |c - r| / ratio. */
GOLDEN_API void golden_cmp_add_raw3(const golden_cmp_setup *s, const golden_cmp_setup *bs,
                         golden_cmp_acc *a, golden_cmp_acc *ba, double ratio, const void *ref,
                         const void *cand, const void *base, size_t n);

/* Fold `later` (the range right after into's) into `into`. Order-stable: merging the same
 * chunks in the same order gives the same bits whatever thread computed them. */
GOLDEN_API void golden_cmp_merge(golden_cmp_acc *into, const golden_cmp_acc *later);

/* Final values. Fields that need at least one finite pair are NaN without one
 * (has_finite false); top1/top5 are NaN when there are no rows. */
typedef struct {
    uint64_t count, finite_pairs;
    bool has_finite;
    double max_abs;
    uint64_t max_abs_index;
    double mean_abs, rmse, max_rel, cosine;
    double rel_err;                  /* ||c - r|| / ||r|| (NaN when ||r|| = 0) */
    double norm_ratio;               /* ||c|| / ||r|| (NaN when ||r|| = 0) */
    bool zero_ref;                   /* ||r|| = 0: judged by absolute error */
    double max_tol;
    uint64_t max_tol_index;          /* the element that uses max_tol (the reason names it) */
    uint64_t ref_finite;             /* finite reference elements */
    uint64_t class_diff;
    int64_t first_class_diff;
    bool ints;
    uint64_t int_diff;
    int64_t first_int_diff;
    char first_int_ref[24], first_int_cand[24];
    uint64_t unshared, unshared_nf;
    int64_t first_unshared;
    uint64_t row_cos_rows;           /* layer rows judged by cosine (0: none) */
    double min_row_cosine;           /* NaN when no row */
    uint64_t min_row_cosine_row;
    double kl_max, kl_mean, logsoftmax_max_abs; /* logits; NaN without rows */
    uint64_t kl_max_row;
    uint64_t mismatches;
    bool has_ulp;
    uint64_t max_ulp;
    uint64_t nan_ref, nan_cand, inf_ref, inf_cand, new_nan, new_inf;
    int64_t first_new_nonfinite;     /* linear index of the first new NaN/Inf, -1 none */
    uint64_t rows, near_tie_rows, near_tie_flips, flips;
    double top1_match, top5_overlap;
    uint64_t sequences, sequences_exact;
    int64_t earliest_divergence;
    uint64_t earliest_divergence_row;
    bool has_hist;                   /* setup.histogram was on: hist holds the counts */
    uint64_t hist[GOLDEN_CMP_HIST_BINS];
} golden_cmp_metrics;

/* Finish an accumulator that covers the whole tensor (a row still in progress is closed). */
GOLDEN_API void golden_cmp_finish(const golden_cmp_setup *s, golden_cmp_acc *a, golden_cmp_metrics *m);

/* One step of float format t at magnitude |x| (the spacing of the binade of x). */
GOLDEN_API double golden_cmp_step(golden_dtype t, double x);

/* Linear C-order index to coordinates (rank 0: nothing written). */
GOLDEN_API void golden_cmp_unravel(uint64_t index, int rank, const uint64_t *shape, uint64_t *coords);

#endif
