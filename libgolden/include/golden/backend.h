/* The runtime plug-in ABI of npu-replay: what a vendor's inference runtime implements in a
 * shared library (or the built-in `cpu` backend) so the harness can drive it and capture it.
 * Plain C, no libgolden types: a backend compiles against this header alone.
 *
 * A backend exports one symbol, GOLDEN_BACKEND_ENTRY, of type golden_backend_entry_fn, that
 * returns a pointer to a static golden_backend_vtable. The harness checks abi_version against
 * GOLDEN_BACKEND_ABI_VERSION before calling anything else. Every call returns 0 on success or
 * nonzero with a one-sentence message written into msg (never longer than msg_len - 1 bytes,
 * always NUL-terminated); a backend never aborts and never prints. */
#ifndef GOLDEN_BACKEND_H
#define GOLDEN_BACKEND_H
#include "golden/api.h"
#include <stddef.h>
#include <stdint.h>

#define GOLDEN_BACKEND_ABI_VERSION 1u
#define GOLDEN_BACKEND_ENTRY "golden_backend_entry"

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
    unsigned version;        /* = GOLDEN_BACKEND_ABI_VERSION */
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
    unsigned version;        /* = GOLDEN_BACKEND_ABI_VERSION */
    const char *model_dir;   /* the model folder (may be NULL for a backend that has its own) */
    size_t n_opts;
    const char *const *keys;
    const char *const *values;
    int threads;             /* worker threads the harness allows (>= 1) */
} golden_backend_open_args;

typedef struct golden_backend_vtable {
    unsigned abi_version;    /* = GOLDEN_BACKEND_ABI_VERSION of the header it was built with */
    const char *name;        /* short, e.g. "cpu" */
    int (*open)(const golden_backend_open_args *args, void **self, char *msg, size_t msg_len);
    void (*close)(void *self);
    int (*info)(void *self, golden_backend_info *out, char *msg, size_t msg_len);
    int (*set_hooks)(void *self, const golden_backend_hooks *hooks, char *msg, size_t msg_len);
    /* Process n tokens into lane at positions pos .. pos+n-1. pos may be below the lane's
     * length (the tail from pos on is dropped first), never above it. A backend refuses
     * (nonzero, message "context_limit_exceeded: ...") positions beyond context_limit. */
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

#endif
