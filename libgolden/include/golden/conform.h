/* npu-replay conform: the handbook's conformance checks (sections 9-12) run against any backend,
 * each comparing the backend with itself under a transformation; results as a report and JSON. */
#ifndef GOLDEN_CONFORM_H
#define GOLDEN_CONFORM_H
#include "golden/api.h"
#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "golden/error.h"
#include "golden/replay.h"

/* The sampling settings sampling-topk holds a backend to (0 = the default in brackets). */
typedef struct {
    double temp;          /* [0.8] */
    int top_k;            /* [40] */
    double top_p;         /* [0.95] */
    double min_p;         /* [0.05] */
    double repeat_penalty;/* [1.1] */
    int repeat_last_n;    /* [64] */
    int n_probs;          /* [0 = none] logprobs of the top n tokens (full-vocab softmax) */
    int steps;            /* [8] decode steps */
} golden_conform_sampling;

#define GOLDEN_CONFORM_OPTS_VERSION 4u /* 1 to 3 are still accepted: the later fields 0 */
typedef struct {
    unsigned version;         /* GOLDEN_CONFORM_OPTS_VERSION */
    const char *backend;      /* "cpu" (or NULL) or a plug-in path */
    const char *model_dir;
    size_t n_opts;
    const char *const *opts;  /* backend "KEY=VALUE" options */
    int threads;              /* 0 = every core */
    const char *checks;       /* comma-separated names, NULL = all */
    int64_t max_context;      /* 0 = the backend's context limit */
    double atol;              /* logits/tap tolerance; 0 = bitwise (a deterministic backend) */
    double router_tol;        /* router weight tolerance; 0 = 1e-5 (2^-7 for bf16 logits) */
    const char *scratch_dir;  /* where the router check writes its derived model ("/tmp") */
    uint64_t seed;            /* token generator seed */
    golden_conform_sampling sampling;
    int kv_elem_bytes;        /* kv-growth: bytes of one cached K or V element [2, bf16] */
    /* version 2: the backend under test runs in a backend host (NULL = in this process; the
     * cpu reference the sampling and router checks compare with always runs in this process) */
    const golden_backend_isolation *iso;
    /* version 2: coverage (issue 28) */
    double budget;            /* seconds each position check may spend on seeded random positions
                               * past the boundary set [2]; < 0: none */
    double nondet_tol;        /* determinism: |a-b| allowed between two opens; 0 = bitwise */
    bool fixed_points;        /* the pre-issue-28 coverage (a few fixed points, lanes 0-1, taps
                               * on, prefill only): kept so tests show what it missed */
    /* version 3: the golden check (issue 28) */
    const char *golden;       /* a `run` golden of the reference backend: its requests replayed,
                               * the backend's logits judged under the logits tier (NULL: the
                               * check does not run unless named, then it cannot) */
    double golden_kl_max;     /* per-row KL(softmax(ref) || softmax(backend)) allowed [1e-6] */
    double golden_lsm_max;    /* max |log_softmax(backend) - log_softmax(ref)| allowed [1e-3] */
    /* version 4: sampling-stats (issue 28, handbook section 15; 0 = the default in brackets) */
    int sampling_draws;       /* draws a position of a setting [4096] */
    int sampling_positions;   /* positions a setting [4] */
    double sampling_alpha;    /* false-alarm rate of the whole check [1e-6]; each chi-square
                               * test runs at alpha / (its number of tests) */
} golden_conform_opts;

/* SKIPPED: the backend offers nothing the check could look at (sampling-stats without a sample
 * call, in a run of all checks); never a pass, error says why; the exit status ignores it
 * unless every check was skipped. */
enum { GOLDEN_CONFORM_PASS = 0, GOLDEN_CONFORM_FAIL = 1, GOLDEN_CONFORM_ERROR = 2,
       GOLDEN_CONFORM_SKIPPED = 3 };

typedef struct {
    char kase[64];    /* the case, e.g. "j=16" or "layer 1 token 5" */
    char what[400];   /* position or lane and the numbers */
} golden_conform_finding;

typedef struct {
    const char *name;          /* "causal-mask", ... */
    int status;                /* GOLDEN_CONFORM_PASS / FAIL / ERROR / SKIPPED */
    double seconds;
    size_t comparisons;        /* values or decisions compared */
    size_t n_findings;         /* all of them; at most GOLDEN_CONFORM_KEEP are kept */
    golden_conform_finding *findings;
    char error[600];           /* status ERROR: why it could not run (SKIPPED: why not) */
    /* kv-growth: one point a context length */
    size_t n_points;
    struct golden_conform_point {
        int64_t context;
        double kv_write_bytes, kv_read_bytes; /* per generated token */
        double tpot_s;                        /* median decode step */
    } *points;
    int64_t k_required, k_backend; /* sampling-topk: the largest need, the smallest k given */
    /* a backend call failed (status ERROR): a calculet-fault/v1 line */
    bool fault;
    const char *fault_kind;    /* "timeout", "device_error", "nan_output", "oom", "rejected_input" */
    int retest;                /* 0 not run, 1 passed, 2 failed: reset(-1), prefill, finite logits */
    char fault_time[32];       /* RFC 3339 UTC: when the check ended on the fault */
    json_t *coverage;          /* what the check looked at: positions, lanes, taps, cuts... (or NULL) */
} golden_conform_check;

#define GOLDEN_CONFORM_KEEP 16

typedef struct {
    size_t n;
    golden_conform_check *checks;
    char backend[256];
    char backend_log[4096];   /* the backend host's stdout and stderr ("" = in process) */
    char *config_unknown_keys; /* the model's config.json keys the cpu reference does not know,
                                * sorted, comma-separated ("" none; NULL: no config.json) */
} golden_conform_report;

/* The names of every check, in run order, NULL-terminated. */
GOLDEN_API const char *const *golden_conform_check_names(void);

/* Run the selected checks; each opens the backend afresh so no check sees another's state.
 * Returns 0 with rep filled (verdicts inside), or GOLDEN_ERR when nothing could run
 * (bad options, unknown check name). */
GOLDEN_API int golden_conform_run(const golden_conform_opts *opts, golden_conform_report *rep,
                       golden_error *err);
/* 0 every check passed (skipped ones aside), 1 some check failed, 2 none failed but some could
 * not run, or every check was skipped. */
GOLDEN_API int golden_conform_exit(const golden_conform_report *rep);
/* The report as calculet-conform/v1 JSON (schema: the check list with findings). */
GOLDEN_API json_t *golden_conform_json(const golden_conform_report *rep);
/* stability/faults.jsonl: one calculet-fault/v1 line a check whose backend call failed (an
 * empty file when none); side "baseline" or "candidate". Atomic: no partial file on error. */
GOLDEN_API int golden_conform_faults_write(const golden_conform_report *rep, const char *side,
                                const char *path, bool force, golden_error *err);
GOLDEN_API void golden_conform_report_free(golden_conform_report *rep);
#endif
