/* A golden-diff run: pair the tensors of a reference and a candidate golden file (and
 * optionally a baseline), stream every pair through the metrics engine on all cores, judge
 * each under the policy, and build the calculet-diff-report/v1 document. */
#ifndef GOLDEN_DIFF_H
#define GOLDEN_DIFF_H
#include "golden/api.h"
#include <stdbool.h>
#include <stdint.h>
#include <jansson.h>
#include "golden/compare.h"
#include "golden/error.h"
#include "golden/namemap.h"
#include "golden/policy.h"
#include "golden/report.h"
#include "golden/store.h"

#define GOLDEN_SCHEMA_DIFF_REPORT "calculet-diff-report/v1"
/* The JSON report carries the |c - r| histogram ("abs_error_histogram") of every tensor when
 * at most this many have one, else of this many: failing tensors first, then by
 * tolerance_used (max |c - r| / (atol + rtol |r|)), largest first. */
#define GOLDEN_DIFF_HIST_MAX 256
/* Elements per work item by default (a row-tier chunk holds whole rows). */
#define GOLDEN_DIFF_CHUNK (UINT64_C(1) << 20)
/* Longest logits/tokens row that fits one work item. */
#define GOLDEN_DIFF_MAX_ROW (UINT64_C(1) << 24)

/* What golden_diff_run compares and how. Versioned: start from GOLDEN_DIFF_OPTS_INIT (an
 * unknown version is refused with GOLDEN_EINVAL). */
#define GOLDEN_DIFF_OPTS_VERSION 1u
typedef struct {
    unsigned version;               /* GOLDEN_DIFF_OPTS_VERSION */
    const char *reference, *candidate;
    const char *baseline;           /* three-way mode when non-NULL */
    const golden_policy *policy;
    const golden_namemap *map;      /* renames candidate and baseline names; may be NULL */
    const char *const *only;        /* globs on reference names; none = all */
    size_t n_only;
    bool allow_missing;
    int threads;                    /* 0 = lg_cpu_count() (the tool passes GOLDEN_THREADS) */
    uint64_t chunk_elems;           /* 0 = GOLDEN_DIFF_CHUNK */
    golden_progress *progress;      /* may be NULL */
    bool allow_empty;               /* zero tensors compared is not a failure */
    bool trust_hashes;              /* do not check the data against the stored sha256 */
    /* count the |c - r| histogram of every compared pair (golden_cmp_setup.histogram; the
     * candidate side only). Off (a zeroed or older caller's struct): not counted. */
    bool histogram;
    /* reference tensors that may be missing from the candidate: globs on reference names
     * (--allow-missing-in-candidate). A tensor at the logits or tokens tier is allowed only
     * by a glob that is its exact name. allow_missing (above, for older library callers)
     * allows every other missing tensor. Tensors only in the candidate never fail the run:
     * they are listed as not judged. */
    const char *const *allow_missing_in_candidate;
    size_t n_allow_missing_in_candidate;
    /* also read foreign inputs (GOLDEN_READ_FOREIGN: .npy, .safetensors, plain HDF5, dump
     * indexes, folders; golden-diff sets it). Their tensors have no stored sha256 or
     * statistics: those checks are not run for them, and the report says so. A single-tensor
     * file on each side whose names differ pairs by position. */
    bool foreign;
    /* Sharding (one rank's share of a run over several processes, docs/scale.md): when set,
     * only the (common) names for which shard(name, shard_ctx) is true are paired, counted as
     * missing or listed as not judged, and the check across tensors (a baseline holding the
     * candidate's data) is left to golden_diff_merge. NULL (a zeroed or older caller's
     * struct): every name. */
    bool (*shard)(const char *name, void *shard_ctx);
    void *shard_ctx;
} golden_diff_opts;
#define GOLDEN_DIFF_OPTS_INIT {.version = GOLDEN_DIFF_OPTS_VERSION}

typedef struct {
    char *name;                     /* the reference's name (after mapping, the common one) */
    char *candidate_name;           /* the candidate's own name */
    char *baseline_name;            /* NULL when there is no baseline tensor */
    golden_judge judge;
    golden_dtype dtype_ref, dtype_cand, dtype_base;
    int rank, rank_cand;
    uint64_t shape[GOLDEN_MAX_RANK], shape_cand[GOLDEN_MAX_RANK];
    bool compared;                  /* metrics computed (shapes equal) */
    bool passed;
    char **reasons;                 /* failed checks, in plain words */
    size_t n_reasons;
    char **notes;                   /* excused checks in three-way mode */
    size_t n_notes;
    golden_cmp_metrics m;
    golden_cmp_flip flips[GOLDEN_CMP_EXAMPLES];
    int n_flips;
    int64_t *first_divergence;      /* tokens tier: one per row */
    uint64_t n_rows;
    bool has_baseline;
    golden_cmp_metrics bm;
    bool baseline_passed;
    bool baseline_same_data;        /* the baseline's bytes are the candidate's */
    /* three-way per-row records (see golden_cmp_setup): candidate and baseline */
    int64_t *bfirst_divergence;
    double *row_value, *brow_value;
    uint8_t *row_flags, *brow_flags;
    const char *error_metric;       /* the tier's headline error, e.g. "rel_err" */
    double error_candidate, error_baseline, ratio; /* ratio NaN when undefined */
    bool regression;                /* three-way: failed on the ratio to the baseline */
    /* the data read does not match the stored sha256: reference, candidate, baseline */
    bool hash_bad[3];
    char hash_stored[3][65], hash_data[3][65];
    double seconds;
    /* router tier (whole tensors, after the pass; see docs/golden-diff.md "Router tier") */
    bool router_checked;            /* the router checks ran */
    bool router_ids;                /* top-k ids (integer); else top-k weights */
    uint64_t router_rows, router_rows_exact, router_tie_rows, router_duplicates;
    int64_t router_first_divergence; /* first row differing beyond a tie, -1 none */
    uint64_t router_out_of_range, router_nonfinite, router_bad_sum_rows;
    int64_t router_experts;         /* from the reference's router/logits, -1 unknown */
    char **router_reasons, **router_notes;
    size_t n_router_reasons, n_router_notes;
    /* router logits (names ending in /router/logits): top-k selections per row, k experts per token
     * (router_top_k; -1 unknown); router_rows_exact, router_tie_rows and
     * router_first_divergence count them as for ids */
    bool router_logits;
    int64_t router_top_k;
    /* layer tier, [rows, channels] with at least 64 rows: every column's cosine and
     * judged rel_err ||c_j - r_j|| / max(||r_j||, 1/8 median column norm) (NaN: an all-zero
     * reference column, candidate within atol), candidate and (three-way) baseline; n_cols 0
     * when not computed */
    double *col_cos, *col_rel, *bcol_cos, *bcol_rel;
    uint64_t n_cols, col_rows, cols_judged;
    /* max_col_rel_err: the plain max over judged columns of ||c_j - r_j|| / ||r_j||;
     * max_col_judged_rel_err: the max of col_rel, the judged value (||r_j|| floored at 1/8
     * of the median column norm), which the verdict compares; max_col_rel_err_col its column */
    double min_col_cosine, max_col_rel_err, max_col_judged_rel_err;
    uint64_t min_col_cosine_col, max_col_rel_err_col;
    /* a probability tensor (every reference row >= 0 and summing to 1): candidate rows that
     * do not sum to 1 within prob_sum_tol */
    bool probability;
    double prob_sum_tol, prob_first_bad_sum;
    uint64_t prob_bad_rows, prob_first_bad_row;
    /* max |r| from the reference's stored statistics (checked in the pass); 0 unknown
     * (--trust-hashes) */
    double ref_max_abs;
    /* the side (reference, candidate, baseline) has no stored sha256 and statistics (a
     * foreign input): neither was checked, and the report says "no stored hash" */
    bool unstored[3];
    bool paired_by_position;        /* one tensor on each side, names differ */
    /* why the tier was chosen ("a policy rule", "--tier", "the default tier", "default for
     * tensors of files that are not goldens" (kernel), ...): a static string */
    const char *tier_why;
} golden_diff_tensor;

typedef struct {
    char *reference, *candidate, *baseline;
    golden_diff_tensor *tensors;    /* reference name order */
    size_t n;
    char **missing_in_candidate, **missing_in_reference, **missing_in_baseline;
    size_t n_missing_cand, n_missing_ref, n_missing_base;
    bool allow_missing;
    bool allow_empty;
    bool trust_hashes;              /* stored sha256 not checked */
    size_t passed, failed;
    bool empty;                     /* no tensor was compared */
    bool pass;                      /* the run's verdict */
    json_t *policy;                 /* the policy in effect */
    json_t *overrides;              /* the command line's tier/atol/rtol/eps */
    bool *missing_cand_allowed;     /* per missing_in_candidate: allowed to be missing */
    size_t n_missing_cand_allowed;
    /* files and datasets the inputs' readers passed over: "reference: PATH: WHY" */
    char **skipped;
    size_t n_skipped;
    size_t n_unstored;              /* compared tensors with some side without stored hash */
} golden_diff_result;

/* Compare. Returns 0 with *out set (whatever the verdict), or -1 when the files cannot be
 * compared (unreadable, duplicate mapped names, a row too long, an I/O error). */
GOLDEN_API int golden_diff_run(const golden_diff_opts *opts, golden_diff_result **out, golden_error *err);
GOLDEN_API void golden_diff_free(golden_diff_result *r);

/* The calculet-diff-report/v1 document; NULL on ENOMEM. */
GOLDEN_API json_t *golden_diff_to_json(const golden_diff_result *r);

/* One JUnit testcase per tensor (missing tensors included). */
GOLDEN_API int golden_diff_junit(const golden_diff_result *r, const char *path, bool force,
                      golden_error *err);

/* The human table (failing tensors first, reasons in words, the summary line), as one
 * allocated string; colour escapes only when `color`. NULL on ENOMEM. */
GOLDEN_API char *golden_diff_table(const golden_diff_result *r, bool color);

/* How golden_diff_table_opts_run prints (versioned: start from GOLDEN_DIFF_TABLE_OPTS_INIT). */
#define GOLDEN_DIFF_TABLE_VERSION 1
typedef struct {
    unsigned version;   /* GOLDEN_DIFF_TABLE_VERSION */
    bool color;         /* colour escapes */
    bool failed_only;   /* rows of failing tensors only (missing ones are always listed) */
    size_t limit;       /* at most this many tensor rows (0 = all); one line counts the rest */
    int width;          /* terminal columns: names shortened in the middle so the columns
                           before REASON fit (0 = never shortened; JSON keeps full names) */
} golden_diff_table_opts;
#define GOLDEN_DIFF_TABLE_OPTS_INIT {GOLDEN_DIFF_TABLE_VERSION, false, false, 0, 0}
/* The table as golden_diff_table prints it, under o; also a "by tier:" line of passed and
 * failed counts before the closing line. NULL on ENOMEM. */
GOLDEN_API char *golden_diff_table_opts_run(const golden_diff_result *r,
                                            const golden_diff_table_opts *o);
/* Shards of one run (golden_diff_opts.shard), carried between processes as bytes: the whole
 * result, every tensor with its reasons, notes and per-row and per-column records, in this
 * build's native layout (the same executable packs and unpacks). 0, or -1 with err set. */
GOLDEN_API int golden_diff_pack(const golden_diff_result *r, void **buf, size_t *len,
                                golden_error *err);
GOLDEN_API int golden_diff_unpack(const void *buf, size_t len, golden_diff_result **out,
                                  golden_error *err);

/* One result from the shards of a run (every name in exactly one of them): the tensors and
 * missing names in the single run's order, the verdict counted again, and the check across
 * tensors done. The parts are emptied (free them still). 0 with *out set, or -1 with err set
 * (the error a single run reports for the same inputs). */
GOLDEN_API int golden_diff_merge(golden_diff_result *const *parts, size_t n,
                                 golden_diff_result **out, golden_error *err);

/* "[2, 3]" into buf. */
GOLDEN_API void golden_diff_shape_str(int rank, const uint64_t *shape, char *buf, size_t n);

#endif
