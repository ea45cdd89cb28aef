/* Private to golden-diff's run (diff_pair.c, diff_pass.c, diff_verdict.c, diff_report.c):
 * the work list of one run and the small string helpers they share. */
#ifndef GOLDEN_TENSOR_DIFF_INTERNAL_H
#define GOLDEN_TENSOR_DIFF_INTERNAL_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "golden/diff.h"
#include "golden/hash.h"
#include "golden/stats.h"

/* One compared pair (and its baseline): what the pass streams and accumulates. */
typedef struct {
    golden_diff_tensor *t;
    size_t ri, ci, bi;              /* reader indices */
    bool with_base;
    golden_cmp_setup setup, bsetup;
    uint64_t count, chunk;          /* elements, elements per item */
    size_t n_chunks, first_item;
    golden_cmp_acc all, ball;       /* the chunks merged so far, in order */
    bool base_differs;              /* some baseline byte differs from the candidate's */
    /* sha256 of the data read, per side (reference, candidate, baseline), fed chunk by
     * chunk in order; NULL when not hashed (--trust-hashes) or done */
    bool hash;
    struct golden_sha256 *sha[3];
    size_t next_hash[3];
    /* statistics of the data read, per side, accumulated with the digest in chunk order
     * (checked against the stored attributes after the pass; not with --trust-hashes) */
    golden_stats stats[3];
    /* channel-axis sums (diff_cols.c), merged in chunk order; NULL when not computed */
    long double *cols;
    uint64_t col_n, col_inner;      /* columns (the channel axis's length) and the elements
                                     * after that axis (1 for the last axis) */
    long double *row_sums;          /* per row: sum r, sum c, min r (probability check) */
    int rows_moot;                  /* some reference row's minimum is below 0 (or NaN): not a
                                     * probability tensor, whatever the other rows hold, so
                                     * the chunks after it sum no rows (atomic) */
} golden_diff_job;

/* The pass: every chunk of every job, on `threads` workers through util/pool.h, merged in
 * chunk order (so the report does not depend on the thread count). */
int lg_diff_pass(golden_reader *ref, golden_reader *cand, golden_reader *base,
                     golden_diff_job *jobs, size_t n_jobs, size_t n_items, size_t buf_bytes,
                     int threads, golden_progress *progress, unsigned long long total,
                     golden_error *err);

/* The tier the metrics engine runs for t: the router tier's ids are compared as kernel
 * (exact integers), its weights as layer; every other tier is itself. */
golden_tier lg_diff_engine_tier(const golden_diff_tensor *t);

/* mismatches_judged (issue 29): true with *n = the mismatches count when t's verdict counts
 * elements (kernel tier on floats: |c - r| > atol + rtol |r|; integer tensors at any tier but
 * the router's ids, which are judged by rows), false when it is judged on whole-tensor metrics
 * (layer, logits, router weights, ...) or was not compared. The table, the JSON and the HTML
 * show this, never a count the verdict did not use. */
bool lg_diff_mismatches_judged(const golden_diff_tensor *t, uint64_t *n);

/* Router tier: the row checks of t (reference tensor ri, candidate ci) on the whole tensors,
 * with the reference's sibling router/logits for ties. 0, or -1 with err set. */
int lg_diff_router(golden_reader *ref, golden_reader *cand, size_t ri, size_t ci,
                       const golden_policy *p, golden_diff_tensor *t, golden_error *err);

/* Judge one tensor from its metrics: reasons, notes, verdict. -1 on ENOMEM. */
int lg_diff_judge(golden_diff_tensor *t);

/* Channel axis (diff_cols.c): columns are judged when a layer-tier tensor has rows of 2 to
 * DIFF_COL_MAX channels and at least DIFF_COL_MIN_ROWS rows (fewer: a column's error is a
 * handful of elements, already judged by the element and row checks). */
#define DIFF_COL_MIN_ROWS 64
#define DIFF_COL_MAX (UINT64_C(1) << 20)
/* Rows of the probability check (row sums kept per row) at most. */
#define DIFF_PROB_MAX_ROWS (UINT64_C(1) << 24)
bool diff_cols_wanted(golden_diff_job *j); /* also sets col_n, col_inner */
size_t diff_cols_size(const golden_diff_job *j); /* long doubles of one chunk's sums */
void diff_cols_chunk(golden_diff_job *j, const void *rb, const void *cb, const void *bb,
                     uint64_t first, uint64_t n, long double *part);
void diff_cols_merge(golden_diff_job *j, const long double *part);
/* One side's sums of elements first .. first + n - 1 into s (COL_SUMS per column) and, when
 * rs is not NULL, the per-row sums (rows of `cols` elements); ncol columns, inner elements
 * after the channel axis. Tiled when the channel axis is the last and the range is whole
 * rows; the same bits either way (tests/unit/test_diff_cols.c). */
void diff_cols_add(long double *s, golden_dtype rt, golden_dtype xt, const void *r, const void *x,
                   uint64_t first, uint64_t n, uint64_t cols, uint64_t ncol, uint64_t inner,
                   long double *rs);
int diff_cols_finish(golden_diff_job *j); /* -1 on ENOMEM */

/* Trend report (diff_trend.c; information, never a gate): a series of layer-tier tensors
 * named alike but for a layer index, every one passed, whose error (rel_err or 1 - cosine)
 * grows steadily: Kendall tau-b over layer index >= LG_TREND_TAU_MIN, at least
 * LG_TREND_MIN_LAYERS layers, the last layer's error >= LG_TREND_GROWTH x the first's. */
#define LG_TREND_MIN_LAYERS 4
#define LG_TREND_TAU_MIN 0.8
#define LG_TREND_GROWTH 2.0
typedef struct {
    char *series;          /* the name with its layer index as a star */
    const char *metric;    /* "rel_err" or "1 - cosine" (static) */
    size_t n;              /* layers */
    uint64_t *layers;      /* increasing */
    double *values;        /* the metric per layer */
    double tau;
} lg_diff_trend;
int lg_diff_trends(const golden_diff_result *r, lg_diff_trend **out, size_t *n); /* -1 ENOMEM */
void lg_diff_trends_free(lg_diff_trend *t, size_t n);
double lg_diff_kendall_tau(const double *v, size_t n);

/* Helpers. */
char *lg_diff_fmt(const char *f, ...) __attribute__((format(printf, 1, 2)));
int lg_diff_push(char ***list, size_t *n, char *s);
void lg_diff_free_strs(char **list, size_t n);
/* Print a value and the limit it was compared with so that the two never look equal:
 * the limit with the fewest digits that read back exactly, the value with as many as
 * keep it on its side of the limit and different from the printed limit. */
void lg_diff_num_pair(double v, double limit, char *vbuf, char *lbuf, size_t n);
/* The coordinates of a linear index as "[i, j]". */
void lg_diff_index_str(const golden_diff_tensor *t, uint64_t index, char *buf, size_t n);

#endif
