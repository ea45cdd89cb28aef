/* The runtime plug-in ABI of npu-replay: what a vendor's inference runtime implements in a
 * shared library (or the built-in `cpu` backend) so the harness can drive it and capture it.
 * Plain C, no libgolden types: a backend compiles against this header alone.
 *
 * A version 1 backend exports one symbol, GOLDEN_BACKEND_ENTRY, of type golden_backend_entry_fn,
 * that returns a pointer to a static golden_backend_vtable (abi_version 1). A version 2 backend
 * exports GOLDEN_BACKEND_ENTRY_V2 (golden_backend_entry_v2_fn) returning a static
 * golden_backend_vtable_v2 whose base.abi_version is 2; the harness looks for that symbol first.
 * A table reached through the version 1 symbol is read as a version 1 table (its abi_version
 * must be 1, or 2 for a version 1 source rebuilt against this header). The harness checks the
 * version before calling anything else. Every call returns 0 on success or nonzero with a
 * one-sentence message written into msg (never longer than msg_len - 1 bytes, always
 * NUL-terminated); a backend never aborts and never prints. A version 2 backend's nonzero
 * return is one of the GOLDEN_BK_E_* codes below (any other is a protocol violation), so the
 * harness never reads the message to know what went wrong. */
#ifndef GOLDEN_BACKEND_H
#define GOLDEN_BACKEND_H
#include "golden/api.h"
#include <stddef.h>
#include <stdint.h>

#define GOLDEN_BACKEND_ABI_VERSION 2u
#define GOLDEN_BACKEND_ABI_V1 1u
#define GOLDEN_BACKEND_ENTRY "golden_backend_entry"
#define GOLDEN_BACKEND_ENTRY_V2 "golden_backend_entry_v2"

/* Error codes of a version 2 backend (the nonzero return of every call). */
enum {
    GOLDEN_BK_E_OTHER = 1,         /* a failure none of the others names (device error) */
    GOLDEN_BK_E_CONTEXT_LIMIT = 2, /* positions beyond context_limit: refused, lane unchanged */
    GOLDEN_BK_E_NOMEM = 3,         /* out of host or device memory */
    GOLDEN_BK_E_DEVICE_LOST = 4,   /* the device is gone: no later call will work */
    GOLDEN_BK_E_TIMEOUT = 5,       /* the device did not complete in time */
    GOLDEN_BK_E_INVALID = 6,       /* invalid argument (lane, position, range, k) */
    GOLDEN_BK_E_CANCELLED = 7,     /* the lane's call ended early by cancel(): lane as after reset */
    GOLDEN_BK_E_COUNT = 8
};

/* golden_backend_vtable_v2.flags */
enum {
    /* calls on different lanes may run at the same time from different threads (calls on one
     * lane never overlap) */
    GOLDEN_BK_LANES_CONCURRENT = 1u << 0
};

/* Most positions one prefill_keep call may keep the logits of. */
#define GOLDEN_BK_MAX_KEEP 256
/* Largest k of a topk call. */
#define GOLDEN_BK_MAX_TOPK 4096

/* Element types that cross the ABI (taps and logits). */
enum {
    GOLDEN_BK_F32 = 1,  /* IEEE binary32, little-endian */
    GOLDEN_BK_BF16 = 2, /* bfloat16 bits in a uint16_t */
    GOLDEN_BK_I32 = 3
};

/* The stages a backend marks from where it does the work (handbook section 7). */
enum {
    GOLDEN_BK_STAGE_H2D = 0,      /* inputs copied to the device */
    GOLDEN_BK_STAGE_NPU_WAIT = 1, /* compute submitted and waited for */
    GOLDEN_BK_STAGE_D2H = 2,      /* outputs copied back (logits) */
    GOLDEN_BK_STAGE_COUNT = 3
};

/* What the harness needs to know about the loaded model. */
typedef struct {
    unsigned version;        /* the ABI version of the table */
    int hidden_size;
    int num_layers;
    int num_experts;         /* 0 for a dense model */
    int experts_per_tok;
    int vocab_size;
    int64_t context_limit;   /* positions a lane can hold (max_position_embeddings) */
    int num_lanes;           /* independent KV caches */
    int logits_dtype;        /* GOLDEN_BK_F32 or GOLDEN_BK_BF16: what logits() returns */
} golden_backend_info;

/* Callbacks the harness gives the backend. Both may be NULL (a backend then skips them). */
typedef struct {
    void *ctx;
    /* A named per-layer tensor of the positions just processed, row-major [rows, cols]:
     * name is relative to the case ("layers/3/attn_out", "layers/3/router/topk_ids"),
     * dtype GOLDEN_BK_F32 or GOLDEN_BK_I32. The data is only valid during the call.
     * Return nonzero to make the backend stop and fail the call. */
    int (*tap)(void *ctx, const char *name, int layer, int dtype, int64_t rows, int64_t cols,
               const void *data);
    /* A monotonic (CLOCK_MONOTONIC) nanosecond reading at the start (is_end = 0) or the end
     * (is_end = 1) of a stage, taken where the work happens. */
    void (*mark)(void *ctx, int stage, int is_end, uint64_t ns);
    /* Whether the harness wants taps at all (0 lets the backend skip tap work). */
    int want_taps;
} golden_backend_hooks;

/* Options: `--backend-opt KEY=VALUE` pairs, in the order given. An unknown key is an error. */
typedef struct {
    unsigned version;        /* the abi_version of the backend's table (1 or 2) */
    const char *model_dir;   /* the model folder (may be NULL for a backend that has its own) */
    size_t n_opts;
    const char *const *keys;
    const char *const *values;
    int threads;             /* worker threads the harness allows (>= 1) */
} golden_backend_open_args;

typedef struct golden_backend_vtable {
    unsigned abi_version;    /* 1, or 2 in the base of a golden_backend_vtable_v2 */
    const char *name;        /* short, e.g. "cpu" */
    int (*open)(const golden_backend_open_args *args, void **self, char *msg, size_t msg_len);
    void (*close)(void *self);
    int (*info)(void *self, golden_backend_info *out, char *msg, size_t msg_len);
    int (*set_hooks)(void *self, const golden_backend_hooks *hooks, char *msg, size_t msg_len);
    /* Process n tokens into lane at positions pos .. pos+n-1. pos may be below the lane's
     * length (the tail from pos on is dropped first), never above it. A backend refuses
     * positions beyond context_limit (version 2: GOLDEN_BK_E_CONTEXT_LIMIT; version 1: nonzero
     * with the message "context_limit_exceeded: ..."). */
    int (*prefill)(void *self, int lane, int64_t pos, const int32_t *tokens, size_t n,
                   char *msg, size_t msg_len);
    /* One decode step: the token goes in at the lane's current length. */
    int (*decode)(void *self, int lane, int32_t token, char *msg, size_t msg_len);
    /* Logits of the lane's last processed position, entries [first, first+count) of the
     * vocabulary, in info.logits_dtype (4 or 2 bytes each) into dst. */
    int (*logits)(void *self, int lane, int first, int count, void *dst, char *msg,
                  size_t msg_len);
    /* Drop the lane's positions from length on (length <= current length). */
    int (*truncate)(void *self, int lane, int64_t length, char *msg, size_t msg_len);
    /* Empty one lane, or every lane when lane < 0. */
    int (*reset)(void *self, int lane, char *msg, size_t msg_len);
    /* Positions the lane holds now. */
    int64_t (*length)(void *self, int lane);
} golden_backend_vtable;

typedef const golden_backend_vtable *(*golden_backend_entry_fn)(void);

/* One lane's share of a step_batch call. */
enum { GOLDEN_BK_STEP_PREFILL = 1, GOLDEN_BK_STEP_DECODE = 2 };
typedef struct {
    int lane;
    int kind;               /* GOLDEN_BK_STEP_PREFILL or GOLDEN_BK_STEP_DECODE */
    int64_t pos;            /* as prefill's and decode_at's pos */
    const int32_t *tokens;  /* prefill: n tokens; decode: tokens[0], n = 1 */
    size_t n;
    int status;             /* out: 0 or this lane's GOLDEN_BK_E_* code (lane then unchanged) */
    int64_t written;        /* out: decode: the position written (as decode_at's *written) */
} golden_backend_step;

/* The sampler settings of a sample call (handbook section 15, llama.cpp's chain in this order:
 * repetition penalty over the last repeat_last_n of history, top-k, top-p, min-p, temperature,
 * softmax, one draw). A setting that is off: top_k <= 0, top_p >= 1, min_p <= 0,
 * repeat_penalty == 1, temp <= 0 (greedy: the largest logit, lower index among equals). */
typedef struct {
    float temp;
    int top_k;
    float top_p;
    float min_p;
    float repeat_penalty;
    int repeat_last_n;
    const int32_t *history; /* the lane's tokens so far, oldest first (the penalty's window) */
    size_t n_history;
    uint64_t seed;          /* the draw's seed: the same seed, logits and settings, the same
                             * token, on every lane */
    /* Several draws from the same logits and settings in one call (parallel or best-of-n
     * sampling; and what lets a statistical test make thousands of draws without a call each):
     * n_draws > 1 fills token[0..n_draws), draw i exactly as one call with seed seeds[i] would
     * (seed is then unused); 0 or 1 is one draw with seed. At most GOLDEN_BK_MAX_DRAWS. */
    size_t n_draws;
    const uint64_t *seeds;
} golden_backend_sampling;
/* Most draws one sample call makes. */
#define GOLDEN_BK_MAX_DRAWS 4096

/* Version 2: the version 1 table first (base.abi_version = 2; its calls return GOLDEN_BK_E_*
 * codes), then the calls below. decode_at, prefill_keep, logits_at and topk are required; the
 * calls after them (step_batch, cancel, sample) are optional: present when size covers the
 * field and the pointer is not NULL (a table built with an older version 2 header has a smaller
 * size and is read without them; GOLDEN_BACKEND_V2_MIN_SIZE is the smallest size accepted). */
typedef struct golden_backend_vtable_v2 {
    golden_backend_vtable base;
    size_t size;             /* sizeof(golden_backend_vtable_v2) of the header it was built with */
    unsigned flags;          /* GOLDEN_BK_LANES_CONCURRENT or 0 */
    /* One decode step with the position the harness counts: the token goes in at pos, which
     * must be the lane's length (GOLDEN_BK_E_INVALID otherwise, the lane unchanged; past
     * context_limit GOLDEN_BK_E_CONTEXT_LIMIT). *written = the position the backend wrote. */
    int (*decode_at)(void *self, int lane, int64_t pos, int32_t token, int64_t *written,
                     char *msg, size_t msg_len);
    /* prefill, also keeping the logits of the n_keep (<= GOLDEN_BK_MAX_KEEP) positions keep[]
     * (each in [pos, pos+n), any order) for logits_at, until the lane's next call that changes
     * it (prefill, decode, truncate, reset). n_keep = 0 is a plain prefill. */
    int (*prefill_keep)(void *self, int lane, int64_t pos, const int32_t *tokens, size_t n,
                        const int64_t *keep, size_t n_keep, char *msg, size_t msg_len);
    /* Logits of position pos of the lane: a position kept by the last prefill_keep, or the
     * last processed one; entries [first, first+count) in info.logits_dtype into dst. */
    int (*logits_at)(void *self, int lane, int64_t pos, int first, int count, void *dst,
                     char *msg, size_t msg_len);
    /* Top-k output mode: the k (1 <= k <= min(GOLDEN_BK_MAX_TOPK, vocab)) largest logits of
     * the lane's last processed position, largest first (among equal values the lower index
     * first): values as f32 (exact conversions of info.logits_dtype) and their indices. */
    int (*topk)(void *self, int lane, int k, float *values, int32_t *indices, char *msg,
                size_t msg_len);
    /* Optional. Several lanes advanced in one call, each as its own prefill (GOLDEN_BK_STEP_PREFILL)
     * or decode_at (GOLDEN_BK_STEP_DECODE), so that a device can run them together; each lane at
     * most once; the results as if the steps ran one after another in any order. Returns 0 when
     * the call itself was well formed (each step's outcome is in its status) or a code for the
     * whole call (GOLDEN_BK_E_INVALID: a lane twice, n_steps 0; no lane changed). */
    int (*step_batch)(void *self, golden_backend_step *steps, size_t n_steps, char *msg,
                      size_t msg_len);
    /* Optional. May be called from another thread while a call on the lane runs (even without
     * GOLDEN_BK_LANES_CONCURRENT): that call returns GOLDEN_BK_E_CANCELLED soon, and the lane is
     * left as after reset. On an idle lane it is a reset. */
    int (*cancel)(void *self, int lane, char *msg, size_t msg_len);
    /* Optional. One token drawn on the device from the lane's last processed position's logits
     * with the settings s (see golden_backend_sampling), or s->n_draws tokens into token[]. */
    int (*sample)(void *self, int lane, const golden_backend_sampling *s, int32_t *token,
                  char *msg, size_t msg_len);
} golden_backend_vtable_v2;

/* The size of a version 2 table built before the optional calls (through topk). */
#define GOLDEN_BACKEND_V2_MIN_SIZE (offsetof(golden_backend_vtable_v2, topk) + sizeof(void (*)(void)))
/* Whether table t (a golden_backend_vtable_v2 *) has the optional call FIELD. */
#define GOLDEN_BACKEND_V2_HAS(t, field)                                                     \
    ((t)->size >= offsetof(golden_backend_vtable_v2, field) + sizeof((t)->field) && (t)->field)

typedef const golden_backend_vtable_v2 *(*golden_backend_entry_v2_fn)(void);

#endif
