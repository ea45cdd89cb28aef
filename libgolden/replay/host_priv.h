/* Private to npu-replay: the backend host, a separate process that loads the backend (built-in
 * cpu or a plug-in .so) and answers the harness's calls, and the proxy vtable the harness uses
 * to talk to it. Calls cross a socketpair (SOCK_SEQPACKET, one replay_host_msg a packet); their
 * arguments and data cross a shared memfd mapping (replay_host_shm, then the data region).
 * Everything the host writes into the mapping is copied out and checked by the harness before
 * it is used: the host is not trusted. */
#ifndef GOLDEN_REPLAY_HOST_PRIV_H
#define GOLDEN_REPLAY_HOST_PRIV_H
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "golden/error.h"
#include "golden/replay.h"

#define REPLAY_HOST_CMD "__backend-host"  /* argv[1] of the re-executed tool */
#define REPLAY_HOST_SOCK_FD 3
#define REPLAY_HOST_SHM_FD 4
#define REPLAY_HOST_MSG 1024              /* bytes of a backend message buffer (msg_len) */
#define REPLAY_HOST_DATA_OFF 65536u       /* the data region starts here in the mapping */
#define REPLAY_HOST_DATA (128u << 20)     /* bytes of the data region (a sparse memfd) */
#define REPLAY_HOST_LOG_MAX (64u << 20)   /* RLIMIT_FSIZE of the host: its log's size */

/* Budgets every backend's info() is checked against, in process or not, before anything of
 * that size is allocated. */
#define REPLAY_MAX_VOCAB (1 << 24)
#define REPLAY_MAX_HIDDEN (1 << 20)
#define REPLAY_MAX_LAYERS (1 << 16)
#define REPLAY_MAX_EXPERTS (1 << 16)
#define REPLAY_MAX_LANES (1 << 16)
#define REPLAY_MAX_CONTEXT ((int64_t)1 << 31)
#define REPLAY_MAX_LOGITS_BYTES ((uint64_t)4 << 30) /* one case's logits kept for its golden */

enum {
    REPLAY_OP_OPEN = 1, REPLAY_OP_INFO, REPLAY_OP_HOOKS, REPLAY_OP_PREFILL, REPLAY_OP_DECODE,
    REPLAY_OP_LOGITS, REPLAY_OP_TRUNCATE, REPLAY_OP_RESET, REPLAY_OP_LENGTH, REPLAY_OP_CLOSE,
    /* ABI version 2 */
    REPLAY_OP_DECODE_AT, REPLAY_OP_PREFILL_KEEP, REPLAY_OP_LOGITS_AT, REPLAY_OP_TOPK,
    REPLAY_OP_SAMPLE, /* optional: replay_host_sample_args then the history in the data region */
    REPLAY_OP_STEP_BATCH, /* issue 33: the steps, their tokens, lengths around it (below) */
    REPLAY_OP_COUNT
};
/* What the proxy returns for a call that lost the host (crash, exit, hang, broken protocol,
 * interrupt): never a backend's code, so the message is known to be the proxy's own. */
#define REPLAY_HOST_LOST 0x7fff0001
/* The host's exit status when its channel broke under it (the backend closed or replaced fd 3
 * or 4): the harness reports a crash "broke the channel", never an exit of the backend. */
#define REPLAY_HOST_BROKEN 86
enum {
    REPLAY_MSG_CALL = 1, /* harness -> host: do shm->op */
    REPLAY_MSG_DONE,     /* host -> harness: the answer is in shm */
    REPLAY_MSG_TAP,      /* host -> harness: a tap (chunk) in shm and the data region */
    REPLAY_MSG_TAP_ACK,  /* harness -> host: a = the hook's return */
    REPLAY_MSG_MARK      /* host -> harness: a = stage, b = is_end, ns */
};

typedef struct {
    uint32_t type, op;
    int32_t a, b;
    uint64_t ns;
} replay_host_msg;

typedef struct {
    /* the call (written by the harness) */
    int32_t op, lane, first, count, token, want_taps;
    int64_t pos, length;
    uint64_t n; /* prefill: tokens in the data region */
    uint64_t n_keep; /* prefill_keep: positions (int64) in the data region after the tokens */
    /* the answer (written by the host) */
    int32_t rc, code;
    int64_t value;
    uint32_t abi, flags; /* open: the backend's ABI version and its version 2 flags */
    uint32_t opt;        /* open: REPLAY_HOST_HAS_* (the optional calls the backend has) */
    char name[64];
    char where[256];
    char msg[REPLAY_HOST_MSG];
    golden_backend_info info;
    /* a tap (written by the host) */
    char tap_name[96];
    int32_t tap_layer, tap_dtype;
    int64_t tap_rows, tap_cols;
} replay_host_shm;

/* replay_host_shm.opt: the optional version 2 calls (GOLDEN_BACKEND_V2_HAS) of the backend in
 * the host; the proxy's table (replay_host_table) offers exactly these. */
enum { REPLAY_HOST_HAS_STEP_BATCH = 1u << 0, REPLAY_HOST_HAS_CANCEL = 1u << 1,
       REPLAY_HOST_HAS_SAMPLE = 1u << 2 };
/* A step_batch in the data region: n (shm->n) of these, then the tokens (each step's at tok_off
 * bytes into the region); the host writes status and written back into them, and the lengths
 * of the count (shm->count) lanes before and after the call at shm->length bytes. */
typedef struct {
    int32_t lane, kind;
    int64_t pos;
    uint64_t n, tok_off;
    int32_t status, pad;
    int64_t written;
} replay_host_step;
/* The cancel channel: a second SOCK_SEQPACKET socketpair (the host's fd 5), served in the host
 * by a thread of its own, so a cancel reaches the backend while a call is under way on fd 3. */
#define REPLAY_HOST_CANCEL_FD 5
enum { REPLAY_CANCEL_CALL = 1, REPLAY_CANCEL_DONE = 2 };
typedef struct {
    uint32_t type;
    int32_t lane, rc;
    char msg[256];
} replay_host_cancel_msg;
/* A sample call's settings at the start of the data region; n_history int32 tokens follow, then
 * n_draws uint64 seeds (n_draws > 1). The answer: the tokens (int32) from the region's start. */
typedef struct {
    float temp, top_p, min_p, repeat_penalty;
    int32_t top_k, repeat_last_n;
    uint64_t seed, n_history, n_draws;
} replay_host_sample_args;

/* The host's main: argv = {REPLAY_HOST_CMD, SPEC, MODEL_DIR ("" = none), THREADS, KEY=VALUE...}
 * with the channel on fds 3 (socket) and 4 (memfd). Returns the process's exit status. */
int replay_host_main(int argc, char **argv);

/* Find a backend's table: built-in `cpu` or a plug-in's entry symbol (dl set to its handle),
 * its ABI version and functions checked. */
int replay_find_vtable(const char *spec, const golden_backend_vtable **vt,
                       const golden_backend_vtable_v2 **vt2, void **dl, golden_error *err);

/* Whether info is within the budgets above (a message naming what is not, into err). */
int replay_check_info(const golden_backend_info *in, const char *where, golden_error *err);

/* Copy at most n - 1 bytes of src (up to its first NUL) into dst as printable UTF-8: control
 * characters and invalid or overlong sequences become '?'. dst is always NUL-terminated. */
void replay_clean_text(char *dst, size_t n, const char *src, size_t src_len);

/* Install the host's system-call filter (replay/host_filter.c) in the calling process, whose
 * pid is self: a signal to any process but self or its own group, ptrace and the like, and
 * pointing SIGIO at another process kill it with SIGSYS. Async-signal-safe (between fork and
 * exec). 0, or -1 when the kernel refuses it (the host then runs without it). */
int replay_host_filter(pid_t self);
/* The environment variable that turns the filter off (value "off"): docs/npu-replay.md. */
#define REPLAY_HOST_FILTER_ENV "GOLDEN_BACKEND_FILTER"

/* Start a backend host for o under iso and open the backend in it: the proxy's table and its
 * instance (the host). Errors of the load (not found, ABI version, open) as values. */
int replay_host_start(const golden_backend_load_opts *o, const golden_backend_isolation *iso,
                      void **self, golden_error *err);
const golden_backend_vtable_v2 *replay_host_vtable(void);
/* The ABI version of the backend the host opened (1 or 2), and its flags into *flags. */
unsigned replay_host_abi(const void *self, unsigned *flags);
/* length() through the host, with the host's death as an error (the table's length has none). */
int replay_host_length(void *self, int lane, int64_t *len, char *msg, size_t n);
/* golden_backend_length with errors: a backend host that died or hung is one (a backend in this
 * process gives its answer as it is). */
int replay_backend_length(golden_backend *b, int lane, int64_t *len, golden_error *err);
/* The model folder's config.json keys the cpu reference knows nothing about, sorted and
 * comma-separated ("" = none), or NULL when the backend was loaded without a model folder with
 * a config.json: the run's golden metadata and conform's report carry it (config_unknown_keys). */
const char *replay_backend_config_unknown(const golden_backend *b);
/* The same for a model folder (NULL: none), into *out (malloc'd; NULL when it has no config). */
int replay_config_unknown(const char *model_dir, char **out, golden_error *err);
/* The log file of hosts started under iso: iso->log, or $TMPDIR/npu-replay-backend.PID.log. */
void replay_host_log_path(const golden_backend_isolation *iso, char *buf, size_t n);
/* The proxy table of this host (a copy of replay_host_vtable() whose step_batch, cancel and
 * sample are NULL when the backend in the host has none). */
const golden_backend_vtable_v2 *replay_host_table(const void *self);
/* The lengths of every lane the host read before and after the last step_batch ([num_lanes]
 * each; NULL when that call did not get so far). */
void replay_host_batch_lengths(const void *self, const int64_t **before, const int64_t **after);
/* A stop during a call (issue 33): how the call under way ended. NONE: no call was under way,
 * or it ended on its own (a backend in this process; with cancel, a call of no lane, such as
 * open or length, is waited for within REPLAY_STOP_GRACE_S); CANCELLED: cancelled (a version 2 backend
 * with cancel), it answered within REPLAY_STOP_GRACE_S and every cancelled lane was empty, so
 * the host was closed the normal way; KILLED: the host was killed (no cancel, no answer in
 * time, or a lane that still held positions). */
enum { REPLAY_STOP_CALL_NONE = 0, REPLAY_STOP_CALL_CANCELLED, REPLAY_STOP_CALL_KILLED };
#define REPLAY_STOP_GRACE_S 2.0
/* A soak's --duration end as a stop of the call under way at that CLOCK_MONOTONIC time (0 =
 * none), and how the call under way at a stop ended (lanes: the lanes cancelled). */
void replay_host_set_cut(void *self, uint64_t at_ns);
int replay_host_stop_call(const void *self, size_t *lanes);
/* the protocol rule a cancel at a stop broke (the host was killed for it), NULL when none */
const char *replay_host_stop_why(const void *self);
/* The same for any backend (one in this process: no cut, REPLAY_STOP_CALL_NONE). */
void replay_backend_set_cut(golden_backend *b, uint64_t at_ns);
int replay_backend_stop_call(const golden_backend *b, size_t *lanes);
const char *replay_backend_stop_why(const golden_backend *b);
/* The backend's own name (cleaned) and the host's log file. */
const char *replay_host_name(const void *self);
const char *replay_host_log(const void *self);

/* The fault kind of a failed backend call: from the code of a version 2 backend, from the
 * message of a version 1 one or of a host the proxy lost (replay_fault_kind). */
const char *replay_backend_fault_kind(const golden_backend *b, const golden_error *err);
/* Whether a failed call was the contract's refusal of positions past the context limit. */
bool replay_refused_for_limit(const golden_backend *b, const golden_error *err);
int replay_cmp_i32(const void *a, const void *b);
#endif
