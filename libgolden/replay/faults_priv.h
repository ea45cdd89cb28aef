/* Private to npu-replay: stability/faults.jsonl (calculet-fault/v1), the one writer run and
 * conform share, how a backend message maps to a fault kind, and the retest after reset. */
#ifndef GOLDEN_REPLAY_FAULTS_PRIV_H
#define GOLDEN_REPLAY_FAULTS_PRIV_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "golden/error.h"
#include "golden/replay.h"
#include <jansson.h>

/* What a retest after reset gave. */
enum { REPLAY_RETEST_NOT_RUN = 0, REPLAY_RETEST_PASSED = 1, REPLAY_RETEST_FAILED = 2 };

/* One fault: a line of stability/faults.jsonl. Empty strings are left out of the line. */
typedef struct {
    char time[32];         /* RFC 3339 UTC, when it happened (replay_fault_begin) */
    char case_id[256];
    char request_id[256];
    const char *kind;      /* calculet-fault/v1's enum: "timeout", "device_error", ... */
    char message[1024];
    int retest;            /* REPLAY_RETEST_*: recovered = passed; severity fatal when failed */
} replay_fault;

/* Clear f and stamp the time: call when the fault is seen, not when the file is written. */
void replay_fault_begin(replay_fault *f);

/* The kind of a failed backend call from its message: a backend host that died or missed its
 * deadline -> crash, exit or hang (the proxy's messages); context_limit_exceeded ->
 * rejected_input, timeout / timed out -> timeout, out of memory -> oom, the word nan or inf ->
 * nan_output, anything else device_error. */
const char *replay_fault_kind(const char *msg);

/* Index of the first entry of a logits row that makes it unusable (NaN or +Inf), or n when
 * every entry is -inf (nothing can be chosen); -1 when the row is usable. -inf alone is a
 * masked entry (a backend that returns only its top-k), not a fault. */
long replay_logits_bad(const float *row, int n);

/* The generic retest after reset: reset(-1), prefill `tokens` in lane 0, read the logits and
 * require a usable row. REPLAY_RETEST_PASSED or REPLAY_RETEST_FAILED. */
int replay_fault_retest(golden_backend *b, const int32_t *tokens, size_t n);

/* One fault as its calculet-fault/v1 object (NULL when out of memory). */
json_t *replay_fault_json(const replay_fault *f, const char *side);

/* Write the n faults as calculet-fault/v1 lines of `side` (an empty file when n is 0), the
 * output atomic as every output ("-" is stdout). */
int replay_faults_write(const replay_fault *f, size_t n, const char *side, const char *path,
                        bool force, golden_error *err);
#endif
