/* golden-accept as a library: a vendor hand-off (handbook section 18) accepted or rejected on
 * its delivered evidence, by composing the other checks in order: the hand-off check of
 * manifest-verify, the compile manifests against the team's hypothesis, golden-diff's engine,
 * dag-check, the trace, the limits, the fault log and exp-gate's section 17 decision.
 * See docs/golden-accept.md for every choice made here. */
#ifndef GOLDEN_ACCEPT_H
#define GOLDEN_ACCEPT_H
#include "golden/api.h"
#include <stdbool.h>
#include <stddef.h>
#include <jansson.h>
#include "golden/error.h"
#include "golden/experiment.h"
#include "golden/replay.h"

#define GOLDEN_SCHEMA_ACCEPT_REPORT "calculet-accept-report/v1"
#define GOLDEN_ACCEPT_STEPS 9 /* the ninth (runtime) only with a backend: see nsteps */

#define GOLDEN_ACCEPT_OPTS_VERSION 2 /* 1: no step 9 (the fields after threads unread) */
typedef struct {
    unsigned version;           /* GOLDEN_ACCEPT_OPTS_VERSION */
    const char *handoff;        /* the delivered folder (handoff.json) */
    const char *golden;         /* the team's reference golden (required) */
    const char *baseline;       /* the team's production golden: three-way accuracy; may be NULL */
    const char *policy;         /* the team's golden-diff policy; NULL = the built-in one */
    const char *hypothesis;     /* the team's calculet-op-experiment/v1 document (required) */
    const char *experiment_out; /* assemble the section 3 experiment folder here; may be NULL */
    bool force;                 /* experiment_out may replace an existing folder's files */
    int threads;                /* 0 = every core */
    /* version 2: step 9, the delivered runtime run by the team (NULL backend: no step 9) */
    const char *backend;        /* "cpu" or a plug-in path (the vendor's runtime) */
    const char *model_dir;      /* the model it runs (required with backend) */
    size_t n_backend_opts;
    const char *const *backend_opts; /* "KEY=VALUE" */
    const char *conform_checks; /* comma-separated golden_conform check names; NULL = all */
    int replay_warmup, replay_runs; /* the replay's warm-ups and measured runs; < 0 = the
                                     * defaults of golden_replay_run */
    /* the runtime runs in a backend host (docs/npu-replay.md, "Isolation"): its exit, crash,
     * hang or output is a step 9 finding, never this process's. Required for a plug-in; NULL
     * runs the built-in cpu backend in this process. Its log NULL: with experiment_out,
     * EXPERIMENT_DIR/team-replay/backend-host.log, else the library's default file */
    const golden_backend_isolation *iso;
} golden_accept_opts;

typedef enum { GOLDEN_STEP_PASS, GOLDEN_STEP_FAIL, GOLDEN_STEP_SKIPPED } golden_step_verdict;
GOLDEN_API const char *golden_step_verdict_name(golden_step_verdict v);

typedef struct {
    const char *name;           /* "integrity", "compile", "accuracy", ... */
    golden_step_verdict verdict;
    char why[1024];             /* the first failure, or why the step was skipped; "" = pass */
    golden_findings findings;   /* what the step found (errors fail it) */
    json_t *notes;              /* array of strings: what passed and how much was checked */
    json_t *reports;            /* array of strings: paths of the step's own reports (-o) */
    json_t *report;             /* the step's own report document, or NULL */
    double seconds;             /* wall time of the step */
} golden_accept_step;

typedef struct {
    char verdict[32];           /* accepted, incomplete, reject, experiment_only, investigate,
                                   no_merge */
    char reason[1200];
    bool accepted;
    char decision_label[32];    /* section 17 label, "" when no decision was made */
    golden_accept_step steps[GOLDEN_ACCEPT_STEPS];
    json_t *decision;           /* the calculet-decision/v1 document, or NULL */
    char *handoff, *golden, *baseline, *policy, *hypothesis, *experiment;
    char experiment_state[64];  /* -o: "sealed", or why not; "" without -o */
    int nsteps;                 /* steps run and reported: 8, or 9 with a backend */
    json_t *summary;            /* step 8's section 7 summary of the delivered raw data, or NULL */
    json_t *race_view;          /* step 4's racing pairs with their neighbourhood (the --html
                                 * picture), NULL without a race */
} golden_accept_result;

/* Run every step on the delivery. 0 with *out set whatever the verdict (a missing or malformed
 * delivery is a verdict: incomplete); -1 when the team's own inputs (golden, baseline, policy,
 * hypothesis) cannot be read, or on an I/O or memory error. */
GOLDEN_API int golden_accept_run(const golden_accept_opts *opts, golden_accept_result **out,
                                 golden_error *err);
GOLDEN_API void golden_accept_free(golden_accept_result *r);

/* The calculet-accept-report/v1 document; NULL on ENOMEM. */
GOLDEN_API json_t *golden_accept_to_json(const golden_accept_result *r);
/* JUnit: one test suite per step: a failing step one failed case per finding, a passing step
 * one passing case, a skipped step one skipped case. */
GOLDEN_API int golden_accept_junit(const golden_accept_result *r, const char *path, bool force,
                                   golden_error *err);

/* --html: one self-contained page that opens on the verdict and the first failing step, then
 * every step with its findings and its picture (the tensor error along the layers, the racing
 * pairs on their queues, the latency boxes); the report's JSON embedded. */
GOLDEN_API int golden_accept_html(const golden_accept_result *r, const char *path, bool force,
                                  golden_error *err);

#endif
