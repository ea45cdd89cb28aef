/* npu-replay's library side: loading a runtime backend (built-in `cpu` or a dlopen'd plug-in),
 * writing deterministic Qwen3-MoE model folders, and the logits conversion of handbook §15. */
#ifndef GOLDEN_REPLAY_H
#define GOLDEN_REPLAY_H
#include "golden/api.h"
#include "golden/term.h"
#include <stdbool.h>
#include <stddef.h>
#include <signal.h>
#include <stdint.h>
#include "golden/backend.h"
#include "golden/error.h"


/* ---- backends ---- */

/* A backend loaded and opened: its vtable, its instance and (for a plug-in) its library. */
typedef struct golden_backend golden_backend;

/* How a backend runs in its own process (docs/npu-replay.md, "Isolation"): the host binary
 * re-executed with a hidden command, its limits and its call deadlines. */
typedef struct {
    const char *host_exe;    /* the binary whose `__backend-host` command is the host */
    double call_timeout;     /* seconds a one-token call may take (0 = 60); a prefill of n
                              * tokens gets call_timeout * (1 + n / 64), open 10 times it */
    uint64_t mem_limit;      /* RLIMIT_AS of the host in bytes (0 = none) */
    const char *log;         /* the host's stdout and stderr (appended; NULL = a file
                              * npu-replay-backend.PID.log in $TMPDIR, removed when empty) */
    volatile sig_atomic_t *stop; /* set by a signal handler: the host is killed at once. A
                              * handler that knows the sender (SA_SIGINFO si_pid) stores its
                              * pid: a stop sent by the host (or its session) is no interrupt
                              * but the backend's fault, and the flag is cleared again */
} golden_backend_isolation;

typedef struct {
    unsigned version;        /* 1, or 2 with iso */
    const char *spec;        /* "cpu" (NULL too) or a path to a shared library */
    const char *model_dir;
    size_t n_opts;
    const char *const *opts; /* "KEY=VALUE" strings */
    int threads;             /* 0 = every core */
    const golden_backend_isolation *iso; /* version 2: NULL = in this process */
} golden_backend_load_opts;

/* Load (dlopen for a path), check the ABI version (a mismatch names both versions), open the
 * backend on the model and read its info. */
GOLDEN_API int golden_backend_load(const golden_backend_load_opts *opts, golden_backend **out,
                        golden_error *err);
GOLDEN_API void golden_backend_close(golden_backend *b);
/* The backend host's main (`TOOL __backend-host ...`, started by golden_backend_load with iso):
 * argv from the hidden command on. Returns the exit status. */
GOLDEN_API int golden_backend_host_main(int argc, char **argv);
/* Where the host's stdout and stderr go (NULL for a backend in this process). */
GOLDEN_API const char *golden_backend_log(const golden_backend *b);
GOLDEN_API const golden_backend_info *golden_backend_get_info(const golden_backend *b);
GOLDEN_API const char *golden_backend_name(const golden_backend *b);
/* The calls of the vtable, with the backend's message turned into err (where = backend name). */
GOLDEN_API int golden_backend_set_hooks(golden_backend *b, const golden_backend_hooks *h, golden_error *err);
GOLDEN_API int golden_backend_prefill(golden_backend *b, int lane, int64_t pos, const int32_t *tokens,
                           size_t n, golden_error *err);
GOLDEN_API int golden_backend_decode(golden_backend *b, int lane, int32_t token, golden_error *err);
GOLDEN_API int golden_backend_logits(golden_backend *b, int lane, int first, int count, void *dst,
                          golden_error *err);
GOLDEN_API int golden_backend_truncate(golden_backend *b, int lane, int64_t length, golden_error *err);
GOLDEN_API int golden_backend_reset(golden_backend *b, int lane, golden_error *err);
GOLDEN_API int64_t golden_backend_length(golden_backend *b, int lane);

/* ABI version 2 (golden/backend.h). The backend's own version (1 or 2, whether in a host or
 * not) and its table's flags (GOLDEN_BK_LANES_CONCURRENT; 0 for version 1). */
GOLDEN_API unsigned golden_backend_abi(const golden_backend *b);
GOLDEN_API unsigned golden_backend_flags(const golden_backend *b);
/* GOLDEN_BK_E_* of the last call that failed (0 after a success). A version 1 backend has
 * only GOLDEN_BK_E_OTHER, or GOLDEN_BK_E_CONTEXT_LIMIT for its "context_limit_exceeded" message. */
GOLDEN_API int golden_backend_last_code(const golden_backend *b);
/* A decode step at the harness's own count pos; the position the backend says it wrote must be
 * pos (GOLDEN_ECORRUPT otherwise). A version 1 backend gets a plain decode (it carries no
 * position). */
GOLDEN_API int golden_backend_decode_at(golden_backend *b, int lane, int64_t pos, int32_t token,
                                        golden_error *err);
/* Version 2 only (GOLDEN_EUNSUPPORTED for version 1): prefill keeping the logits of chosen
 * positions, the logits of one of them, and the top-k output mode with what comes back
 * checked (indices in the vocabulary and distinct, no NaN/+Inf, largest first, lower index first
 * among equals; GOLDEN_ECORRUPT otherwise). */
GOLDEN_API int golden_backend_prefill_keep(golden_backend *b, int lane, int64_t pos,
                                           const int32_t *tokens, size_t n, const int64_t *keep,
                                           size_t n_keep, golden_error *err);
GOLDEN_API int golden_backend_logits_at(golden_backend *b, int lane, int64_t pos, int first,
                                        int count, void *dst, golden_error *err);
GOLDEN_API int golden_backend_topk(golden_backend *b, int lane, int k, float *values,
                                   int32_t *indices, golden_error *err);
/* Issue 33, the optional calls (docs/npu-replay.md, "Optional calls"): whether the backend has
 * them (0 for version 1, a table too small or a NULL pointer; through the backend host, what the
 * backend in the host has). */
GOLDEN_API int golden_backend_has_step_batch(const golden_backend *b);
GOLDEN_API int golden_backend_has_cancel(const golden_backend *b);
/* Several lanes advanced in one call. Refused before sending (GOLDEN_EINVAL) when a lane is out
 * of range or twice, n_steps is 0, a step has no tokens or a decode more than one; without
 * step_batch GOLDEN_EUNSUPPORTED. What comes back is checked (GOLDEN_ECORRUPT): every status a
 * GOLDEN_BK_E_* code or 0, a decode's written == pos, every lane's length before and after (a
 * step that succeeded leaves pos + n, a failed one the length it had, a cancelled one 0, a lane
 * not given its length). A step that failed: GOLDEN_ERR naming the first failed lane, its code
 * in golden_backend_last_code; every status stays in steps. */
GOLDEN_API int golden_backend_step_batch(golden_backend *b, golden_backend_step *steps,
                                         size_t n_steps, golden_error *err);
/* cancel(lane): safe from another thread while a call on the lane is under way (that call then
 * fails with GOLDEN_BK_E_CANCELLED); on an idle lane a reset. GOLDEN_EUNSUPPORTED without it. */
GOLDEN_API int golden_backend_cancel(golden_backend *b, int lane, golden_error *err);

/* ---- top-k coverage (handbook section 15, step 3) ---- */

/* The sampling settings a top-k output must cover. */
typedef struct {
    unsigned version;          /* = 1 (GOLDEN_SAMPLING_INIT) */
    double temperature;        /* 0 = greedy */
    int top_k;                 /* 0 = off */
    double top_p;              /* 1 = off */
    double min_p;              /* 0 = off */
    int logprobs;              /* top logprobs asked for (0 = none) */
    double repetition_penalty; /* 1 = off */
    double presence_penalty, frequency_penalty; /* 0 = off */
    size_t n_penalised;        /* the tokens the penalties apply to (distinct), and how often
                                * each occurred (frequency_penalty) */
    const int32_t *penalised;
    const int32_t *counts;
} golden_sampling;
#define GOLDEN_SAMPLING_INIT {1, 0.0, 0, 1.0, 0.0, 0, 1.0, 0.0, 0.0, 0, NULL, NULL}

/* Whether the k values/indices of a top-k output (largest first) of a vocab-sized row are
 * enough to sample under s exactly as from the whole row: every token the sampler may choose
 * is provably inside k and ranked above every token outside it (the top-p mass is bounded
 * below with every outside token at the k-th value), every penalised token a penalty could
 * raise is inside k, and k >= logprobs. 1 = covered, 0 = not (why says which setting and by
 * how much), -1 = settings out of range (why says which). */
GOLDEN_API int golden_topk_covers(const golden_sampling *s, int vocab, const float *values,
                                  const int32_t *indices, int k, char *why, size_t why_len);

/* The built-in Qwen3-MoE CPU reference backend (options: dtype=f32|bf16, lanes=N). */
GOLDEN_API const golden_backend_vtable *golden_cpu_backend(void);

/* ---- model folders ---- */

typedef struct {
    unsigned version;        /* 1, or 2 with progress */
    const char *preset;      /* "tiny" or "qwen3-30b-a3b" */
    int layers;              /* 0 = the preset's */
    uint64_t seed;
    const char *dtype;       /* "bf16" (default) or "f32" or "f16" */
    int shards;              /* 0/1 = model.safetensors; N = N shards with an index */
    const char *out_dir;     /* created; must not exist unless force */
    bool force;
    uint64_t dense_mask;     /* layers (bit L) with a dense MLP (mlp_only_layers), first 64 */
    /* version 2: tensor bytes written, started with the total (may be NULL; draws on a TTY) */
    golden_progress *progress;
} golden_make_model_opts;

/* Write a deterministic random Qwen3-MoE model folder (config.json + safetensors). */
GOLDEN_API int golden_make_model(const golden_make_model_opts *opts, golden_error *err);

/* ---- logits conversion (handbook §15, C2) ---- */

/* bf16 entries [first, first+count) of row straight into dst[0..count) as f32: the SIMD path
 * where the CPU has one. Exact (bf16 -> f32 is a shift). */
GOLDEN_API void golden_logits_bf16_to_f32(const uint16_t *row, size_t first, size_t count, float *dst);
/* The plain scalar loop, for tests and benchmarks. */
GOLDEN_API void golden_logits_bf16_to_f32_scalar(const uint16_t *row, size_t first, size_t count,
                                      float *dst);
/* Round f32 to bf16, nearest-even (NaN stays a quiet NaN). */
GOLDEN_API uint16_t golden_f32_to_bf16(float f);

#endif
