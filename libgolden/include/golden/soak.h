/* npu-replay soak (handbook section 13.2): the selected cases looped under concurrency with
 * seeded random delays between calls; every request's tokens and logits hashed against the
 * first clean (solo, lane 0, no delay) run of the same request. */
#ifndef GOLDEN_SOAK_H
#define GOLDEN_SOAK_H
#include "golden/api.h"
#include <jansson.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "golden/error.h"
#include "golden/replay.h"

#define GOLDEN_SCHEMA_SOAK_RESULT "calculet-soak-result/v1"
#define GOLDEN_SOAK_MAX_FAULT_LINES 1000 /* kept for the faults file; the rest counted */

typedef struct {
    unsigned version;            /* 1, 2 with graph and experiment_id, 3 with checkpoint, 4
                                  * with the backend's options, 5: the result has
                                  * requests_cancelled and stop_call, 6:
                                  * and stop_violation */
    golden_backend *backend;
    const char *manifest;
    const char *side;            /* "baseline" or "candidate" */
    size_t n_globs;
    const char *const *globs;    /* case ids (fnmatch); none = all */
    double duration;             /* seconds (> 0): no new round starts after it, and the
                                  * round under way when it passes is cut as by a stop and
                                  * dropped (the soak is done, not interrupted) */
    int concurrency;             /* requests in flight, one a lane (>= 1) */
    uint64_t seed;               /* the delay and order generator */
    double jitter_max_us;        /* each call waits a uniform [0, jitter_max_us] first */
    volatile sig_atomic_t *stop; /* set by a signal handler: the soak ends; a round it cut
                                  * short (the call under way cancelled on a v2 backend with
                                  * cancel, its backend host killed otherwise) is dropped whole,
                                  * counts and generator as before it, and is run again by a
                                  * resume; never a fault. Before the first round:
                                  * GOLDEN_ERR "interrupted" */
    /* version 2 */
    const char *graph;           /* the compiled graph soaked (a file: its SHA-256 is the
                                  * result's graph_sha256), or NULL */
    const char *experiment_id;   /* written as the result's experiment_id, or NULL */
    /* version 3: resumable, bounded by rounds, progress */
    const char *checkpoint;      /* NULL, or where the soak keeps where it is and what it saw
                                  * (the clean-run hashes, the counts, the generator state, the
                                  * kept fault lines): one file, replaced atomically after a
                                  * round at most every checkpoint_every seconds and at the end */
    double checkpoint_every;     /* seconds between checkpoints (0 = after every round) */
    bool resume;                 /* continue from checkpoint, which must exist and match these
                                  * options (manifest, side, backend, seed, concurrency, jitter,
                                  * cases); without resume an existing one needs force */
    bool force;
    int64_t max_rounds;          /* 0 = none; otherwise no round starts after this many */
    void (*progress)(void *ctx, double elapsed_s, double duration_s, int64_t rounds,
                     size_t requests, size_t mismatches, size_t faults);
    void *progress_ctx;          /* progress is called after each round (NULL: never) */
    /* version 4 */
    size_t n_backend_opts;       /* the KEY=VALUE options the backend was loaded with: kept in */
    const char *const *backend_opts; /* the checkpoint, a resume needs the same (any order) */
} golden_soak_opts;

typedef struct {
    double duration_s;
    size_t cases, requests, mismatches, faults, retests, retests_passed, fault_lines;
    bool interrupted;
    json_t *faults_jsonl;        /* an array of calculet-fault/v1 objects (fault_lines of them) */
    char manifest_sha256[65];    /* SHA-256 of the manifest file as it was read */
    char graph_sha256[65];       /* SHA-256 of opts.graph, "" without */
    json_t *hashes;              /* {case_id, host, chip, sha256}: each case's clean-run hash */
    int64_t rounds;              /* rounds done (options version 3 on) */
    bool resumed;                /* continued from a checkpoint */
    /* options version 5 on: the stop (SIGINT/SIGTERM) or --duration end that cut a round */
    size_t requests_cancelled;   /* requests of the dropped round whose call was cancelled */
    int stop_call;               /* GOLDEN_SOAK_STOP_CALL_*: how the call under way ended */
    /* options version 6 on: the protocol rule a cancel at the stop broke (the host was killed
     * for it; counted as a fault), "" when none */
    char stop_violation[640];
} golden_soak_result;

/* golden_soak_result.stop_call, the result's "stop_call" */
enum { GOLDEN_SOAK_STOP_CALL_NONE = 0,  /* no call was cut: no stop, a stop between calls, or
                                         * in process (the call ended on its own) */
       GOLDEN_SOAK_STOP_CALL_CANCELLED, /* cancelled (ABI v2 cancel), lanes empty, host closed */
       GOLDEN_SOAK_STOP_CALL_KILLED };  /* the backend host was killed */

/* Soak; 0 (see res: mismatches or faults make it a failure) or GOLDEN_ERR (could not soak: no
 * case, a reference run that fails, more lanes than the backend has). */
GOLDEN_API int golden_soak_run(const golden_soak_opts *o, golden_soak_result *res,
                               golden_error *err);
/* The calculet-soak-result/v1 document of a soak. */
GOLDEN_API json_t *golden_soak_json(const golden_soak_opts *o, const golden_soak_result *res);
GOLDEN_API void golden_soak_result_free(golden_soak_result *res);
/* The kept fault lines as calculet-fault/v1 JSON Lines (an empty file when none), atomically. */
GOLDEN_API int golden_soak_faults_write(const golden_soak_result *res, const char *path,
                                        bool force, golden_error *err);
#endif
