/* npu-replay score (handbook section 6, task-level metric): the teacher-forced negative
 * log-likelihood of each case's given tokens through a backend, and its perplexity, per case
 * and per dataset (calculet-score/v1, docs/npu-replay.md "score"). */
#ifndef GOLDEN_SCORE_H
#define GOLDEN_SCORE_H
#include "golden/api.h"
#include <jansson.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include "golden/doc.h"
#include "golden/error.h"
#include "golden/replay.h"

#define GOLDEN_SCHEMA_SCORE "calculet-score/v1"

typedef struct {
    unsigned version;            /* = 1 (GOLDEN_SCORE_OPTS_INIT) */
    golden_backend *backend;
    const char *manifest;        /* calculet-input-manifest/v1 */
    const char *side;            /* "baseline" or "candidate" */
    size_t n_globs;
    const char *const *globs;    /* case ids (fnmatch); none = all */
    volatile sig_atomic_t *stop; /* set by a signal handler: scoring stops between cases */
} golden_score_opts;
#define GOLDEN_SCORE_OPTS_INIT {1, NULL, NULL, NULL, 0, NULL, NULL}

/* -log softmax(row)[target] over row[0..vocab), in f64 with the maximum subtracted first.
 * 0 with *nll set; 1 when the row gives no number (a NaN or +Inf entry, every entry -inf, or
 * the target at -inf: probability 0), why saying which; -1 for a target outside the row. */
GOLDEN_API int golden_score_nll(const float *row, int vocab, int32_t target, double *nll,
                                char *why, size_t why_len);

/* Score every selected case of the manifest. 0 with *doc the calculet-score/v1 document and
 * *findings the cases whose logits gave no number (then the document carries no perplexity for
 * their dataset); GOLDEN_ERR when it could not score (a backend error, a token outside the
 * vocabulary, no case to score, interrupted). */
GOLDEN_API int golden_score_run(const golden_score_opts *o, json_t **doc, size_t *findings,
                                golden_error *err);

/* Load a calculet-score/v1 file, checked against its schema. */
GOLDEN_API int golden_score_load(const char *path, golden_doc **doc, golden_error *err);

/* A baseline's and a candidate's score documents, per dataset, recomputed from their cases'
 * nll_sum and scored_tokens (never from the stated aggregates, which must agree with them):
 * *out is an array of {dataset, cases, scored_tokens, baseline, candidate, regression_pct
 * (100 (candidate - baseline) / baseline), baseline_findings, candidate_findings}; the three
 * numbers are null for a dataset with a finding on either side. GOLDEN_ERR (err naming the
 * place) when the two cannot be compared: other manifests, other cases or token counts, or a
 * file whose own aggregates its cases contradict. */
GOLDEN_API int golden_score_compare(const json_t *baseline, const json_t *candidate, json_t **out,
                                    golden_error *err);
#endif
