/* The one-pass metrics engine of golden-diff: every metric of calculet-diff-report/v1 for one
 * reference/candidate pair, accumulated block by block and mergeable across threads. */
#ifndef GOLDEN_COMPARE_H
#define GOLDEN_COMPARE_H
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
    GOLDEN_TIER_COUNT
} golden_tier;

/* "kernel", "layer", "logits", "tokens". */
const char *golden_tier_name(golden_tier t);
/* 0, or -1 when the name is unknown. */
int golden_tier_parse(const char *name, golden_tier *out);

/* Elements converted and reduced at a time inside one add call (fits in L1/L2). */
#define GOLDEN_CMP_BLOCK 4096
/* Top-k of the logits tier. */
#define GOLDEN_CMP_TOPK 5
/* Flip examples (top-1 changes of the logits tier) kept per pair, the first by row. */
#define GOLDEN_CMP_EXAMPLES 16

/* What to compute for one pair; fixed for the whole pass. */
typedef struct {
    golden_tier tier;
    golden_dtype dtype_ref, dtype_cand;
    double atol, rtol;       /* mismatch: |c - r| > atol + rtol * |r| */
    double eps;              /* max_rel denominator floor */
    double near_tie_margin;  /* logits: reference top1 - top2 < margin is a near tie */
    uint64_t row_len;        /* logits/tokens: elements per row (the last axis) */
    /* tokens: one slot per row, filled with the first differing step (-1 when none).
     * Rows are disjoint between chunks, so threads may share it. NULL = not recorded. */
    int64_t *first_divergence;
} golden_cmp_setup;

/* Whether the pair has a ULP distance and in which float format it is measured: the
 * coarser (fewer mantissa bits) of two float dtypes; false when either side is integer. */
bool golden_cmp_ulp_dtype(golden_dtype a, golden_dtype b, golden_dtype *out);

/* Ordered index of x rounded (to nearest, ties to even) into float format t: adjacent
 * representable values differ by 1, +0 and -0 are both 0, negatives are negative, values
 * beyond the largest finite saturate at the infinity (or largest) code. x must be finite. */
int64_t golden_cmp_ulp_index(golden_dtype t, double x);

typedef struct {
    uint64_t row;
    int64_t ref_top1, cand_top1;
    double margin;           /* reference top1 - top2 (NaN when the row has < 2 values) */
    bool near_tie;
} golden_cmp_flip;

typedef struct {
    int64_t idx[GOLDEN_CMP_TOPK];
    double val[GOLDEN_CMP_TOPK];
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
    double dot, dot_c, norm_r, norm_r_c, norm_c, norm_c_c;
    uint64_t mismatches;
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
} golden_cmp_acc;

/* Start an empty accumulator for elements beginning at `first`. */
void golden_cmp_acc_init(golden_cmp_acc *a, uint64_t first);

/* Add n pairs of values already in f64 (ref[i], cand[i] are elements first+i where
 * first = a->first + a->n). */
void golden_cmp_add_f64(const golden_cmp_setup *s, golden_cmp_acc *a, const double *ref,
                        const double *cand, size_t n);

/* Add n pairs of canonical bytes (dtype_ref / dtype_cand), converting exactly in blocks. */
void golden_cmp_add_raw(const golden_cmp_setup *s, golden_cmp_acc *a, const void *ref,
                        const void *cand, size_t n);

/* Fold `later` (the range right after into's) into `into`. Order-stable: merging the same
 * chunks in the same order gives the same bits whatever thread computed them. */
void golden_cmp_merge(golden_cmp_acc *into, const golden_cmp_acc *later);

/* Final values. Fields that need at least one finite pair are NaN without one
 * (has_finite false); top1/top5 are NaN when there are no rows. */
typedef struct {
    uint64_t count, finite_pairs;
    bool has_finite;
    double max_abs;
    uint64_t max_abs_index;
    double mean_abs, rmse, max_rel, cosine;
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
} golden_cmp_metrics;

/* Finish an accumulator that covers the whole tensor (a row still in progress is closed). */
void golden_cmp_finish(const golden_cmp_setup *s, golden_cmp_acc *a, golden_cmp_metrics *m);

/* Linear C-order index to coordinates (rank 0: nothing written). */
void golden_cmp_unravel(uint64_t index, int rank, const uint64_t *shape, uint64_t *coords);

#endif
