/* npu-replay's input matrix (handbook section 5) and runs (sections 6, 7): manifests of cases,
 * their token files, and a run that writes the goldens of contracts section 7 and raw timings. */
#ifndef GOLDEN_REPLAY_RUN_H
#define GOLDEN_REPLAY_RUN_H
#include "golden/api.h"
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "golden/error.h"
#include "golden/replay.h"

#define GOLDEN_SCHEMA_INPUT_MANIFEST "calculet-input-manifest/v1"
#define GOLDEN_SCHEMA_RAW_REQUEST "calculet-raw-request/v1"

/* One line of an input manifest with its token ids loaded (and their hash checked). */
typedef struct {
    char *case_id;
    bool decode;            /* phase: decode (past prefilled untimed) or prefill */
    int64_t prompt, past, output;
    char *dataset;
    bool rejection;
    char *expected_error;   /* NULL unless a rejection case */
    int32_t *ids;           /* past + prompt ids (NULL for a rejection case) */
    size_t n_ids;
    int concurrency;        /* requests of the case in flight at once (the manifest's column;
                             * 1 when absent, -1 when beyond the lane budget) */
} golden_replay_case;

/* Load a calculet-input-manifest/v1 JSON Lines file: every line validated against the schema,
 * token files (paths relative to the manifest) read and their sha256 checked. */
GOLDEN_API int golden_replay_manifest_load(const char *path, golden_replay_case **cases, size_t *n,
                                golden_error *err);
GOLDEN_API void golden_replay_cases_free(golden_replay_case *cases, size_t n);

/* ---- the matrix ---- */
typedef struct {
    unsigned version;          /* 1, or 2: random/repeated_per_len 0 means none, < 0 the default;
                                * 3: texts and tokenizer */
    golden_backend *backend;   /* runs the reference for expert coverage and near-ties */
    const char *hypothesis;    /* NULL = section 5.1's lengths */
    const char *prompts;       /* NULL or a file of token-id lists (one JSON array a line) */
    const char *out;           /* the manifest path; token files go to inputs/ beside it */
    uint64_t seed;
    int max_len;               /* 0 = no cap; otherwise lengths above it are left out */
    int random_per_len;        /* version 1: 0 = 20 (section 5.2); version 2: < 0 = 20, 0 none */
    int repeated_per_len;      /* version 1: 0 = 10; version 2: < 0 = 10, 0 = none */
    int decode_steps;          /* output tokens of decode cases (0 = 8) */
    double near_tie_margin;    /* top-2 margin below which a step is a near tie (0 = 1e-3) */
    int near_tie_steps;        /* 0 = no near-tie search */
    bool force;
    /* version 3 on (read only when version >= 3): labelled texts, JSON Lines of
     * {"domain": "fixed_prompt"|"multilingual"|"code"|"numeric", "text": "..."}, encoded with
     * the tokenizer file (both or neither); each text becomes one case per output length whose
     * dataset is its domain (docs/npu-replay.md). */
    const char *texts;
    const char *tokenizer;
} golden_replay_matrix_opts;

typedef struct {
    size_t cases, rejections, coverage_cases, near_ties;
    bool experts_covered;      /* every expert of every layer hit by the coverage set */
    size_t texts;              /* labelled texts read: written only for an options version >= 3
                                * (an older caller's smaller struct is never written past) */
} golden_replay_matrix_result;

GOLDEN_API int golden_replay_matrix(const golden_replay_matrix_opts *o, golden_replay_matrix_result *res,
                         golden_error *err);

/* ---- runs ---- */
typedef void (*golden_replay_progress_fn)(void *ctx, size_t done, size_t total,
                                          const char *case_id);

typedef struct {
    unsigned version;          /* 5 (4: no `batch_off`, 3: no `qps`, 2: no `concurrency`, 1: no
                                * `faults` either) */
    golden_backend *backend;
    const char *manifest;
    const char *side;          /* "baseline" or "candidate" */
    const char *golden;        /* OUT.h5 */
    const char *raw;           /* RAW.jsonl */
    int warmup;                /* < 0 = 10 */
    int runs;                  /* < 0 = 30, or 100 for short cases (<= 128 tokens in all) */
    size_t n_globs;
    const char *const *globs;  /* case ids to run (fnmatch); none = all */
    const char *taps;          /* "all", "none" or comma-separated fnmatch patterns of tap names */
    bool force;
    bool check_rejection;
    const char *producer;      /* e.g. "npu-replay 0.1.0" */
    volatile sig_atomic_t *stop; /* set (by a signal handler) to stop between requests */
    golden_replay_progress_fn progress;
    void *progress_ctx;
    /* version 2: calculet-fault/v1 lines (stability/faults.jsonl) or NULL: written when the run
     * completes (empty: no fault) or when a backend fault ends it (its line, with the retest
     * after reset); any other failure leaves no faults file, as no golden. */
    const char *faults;
    /* version 3: requests in flight at once, each on its own lane (closed loop: a request
     * starts when one ends); 0 = each case's manifest `concurrency` */
    int concurrency;
    /* version 4: the open loop (MLPerf LoadGen's server scenario). qps > 0 issues each case's
     * requests (warm-ups too) on a seeded arrival schedule onto `concurrency` lanes (0: the
     * manifest's column); a request waits in the client queue from its scheduled arrival until
     * a lane takes it. 0 = the closed loop. arrivals: "poisson" (NULL too), the only schedule:
     * exponential inter-arrival times of mean 1/qps from seed (docs/npu-replay.md). */
    double qps;
    const char *arrivals;
    uint64_t seed;
    /* version 4: the top-k output mode (handbook section 15, step 3): topk > 0 asks the backend
     * (ABI version 2) for the k largest logits at every step besides the full row, and checks
     * with golden_topk_covers that k covers `sampling` (NULL: greedy), the penalised tokens
     * being the distinct ids among the last repeat_last_n of the request's context (0 = all):
     * a step k does not cover, or whose top-k disagrees with the full row's largest entry, is
     * a finding (res.topk_findings), never a silent change. Settings out of range: an error. */
    int topk;
    const golden_sampling *sampling;
    int repeat_last_n;
    /* version 5 (issue 33): with several requests in flight, each round advances them with one
     * golden_backend_step_batch when the backend has it, unless batch_off; a round whose golden
     * run wants taps goes per lane (a tap carries no lane). Version 4 and older: per lane. */
    int batch_off;
} golden_replay_run_opts;

typedef struct {
    size_t cases, skipped_rejections, requests;
    bool rejection_checked;    /* --check-rejection found a rejection case to submit */
    bool rejection_refused;    /* ... and the backend refused it */
    char rejection_case[256];
    char rejection_other[1024]; /* refused with another error than context_limit_exceeded: its
                                  message ("" when accepted or refused as it should be) */
    /* options version 4, topk > 0: steps checked, steps not covered, the first one's words */
    size_t topk_steps, topk_findings;
    char topk_first[640];
} golden_replay_run_result;

/* Run the manifest's cases. Output files appear whole or not at all. A backend error (a failed
 * call, or logits with NaN or +Inf) ends the run naming the case and request, after a retest of
 * that request on the reset backend and the fault's line (opts.faults). Returns 0 (then see
 * res), or -1 with err. */
GOLDEN_API int golden_replay_run(const golden_replay_run_opts *o, golden_replay_run_result *res,
                      golden_error *err);

/* A backend host that died or hung while the backend was loaded (open, info) is a fault of the
 * backend too: when load_err says so (kind crash, exit or hang), write its calculet-fault/v1
 * line to path, with the retest: loading the backend once more in a fresh host (closed again).
 * Any other load error is no fault and writes nothing. 0, or GOLDEN_ERR (the faults file). */
GOLDEN_API int golden_replay_load_fault(const golden_backend_load_opts *lo, const char *side,
                                        const char *path, bool force,
                                        const golden_error *load_err, golden_error *err);

#endif
