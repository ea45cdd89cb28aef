/* Private to npu-replay runs: one request's stage readings and the raw-line writer. */
#ifndef GOLDEN_REPLAY_RUN_PRIV_H
#define GOLDEN_REPLAY_RUN_PRIV_H
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include "golden/error.h"
#include "golden/replay_run.h"

enum {
    REPLAY_CLIENT_QUEUE, REPLAY_SERVICE_QUEUE, REPLAY_INPUT_PREPARE, REPLAY_H2D,
    REPLAY_NPU_WAIT, REPLAY_D2H, REPLAY_LOGITS_CONVERSION, REPLAY_SAMPLING,
    REPLAY_STREAM_FLUSH, REPLAY_STAGES
};

typedef struct {
    const char *side, *case_id;
    int run;
    int concurrency;   /* requests of its case in flight with it (0 = 1) */
    bool warmup;
    int64_t output_tokens;
    bool has_ttft, has_tpot;
    double ttft_ms, tpot_ms;
    uint64_t stage[REPLAY_STAGES][2]; /* start_ns, end_ns */
} replay_request;

int replay_raw_write(FILE *f, const replay_request *r, golden_error *err);
uint64_t replay_now_ns(void);
/* Whether a case id matches one of the --cases globs (fnmatch; none = every case): run, score
 * and soak select through this one helper. */
bool replay_case_selected(size_t n_globs, const char *const *globs, const char *id);
/* The open loop's schedule of a case: n arrival offsets in ns from the case's start (arrivals.c). */
void replay_arrivals(uint64_t seed, const char *case_id, double qps, size_t n, uint64_t *off_ns);
/* golden_replay_manifest_load, and every token id checked below vocab (< 0: unchecked; manifest.c). */
int replay_manifest_load_vocab(const char *path, int vocab, golden_replay_case **cases, size_t *n,
                               golden_error *err);
#endif
