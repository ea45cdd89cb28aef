/* Private to the CPU reference backend: the Qwen3-MoE model as loaded (weights memory-mapped
 * in their file dtype), the per-lane KV caches, and the kernels the forward pass is built from. */
#ifndef GOLDEN_REPLAY_CPU_H
#define GOLDEN_REPLAY_CPU_H
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "golden/backend.h"
#include "golden/dtype.h"
#include "golden/error.h"

/* A weight matrix [rows, cols] (a vector has rows = 1) in its stored dtype, inside a mapping. */
typedef struct {
    const void *data;
    golden_dtype dt; /* GOLDEN_F32, GOLDEN_BF16 or GOLDEN_F16 */
    int64_t rows, cols;
} cpu_weight;

typedef struct {
    int hidden, layers, heads, kv_heads, head_dim, experts, topk, moe_inter, inter, vocab;
    int64_t max_pos;
    bool norm_topk, tie;
    double eps, theta;
    int sparse_step;
    bool *mlp_only; /* [layers] */
} cpu_config;

typedef struct {
    cpu_weight q, k, v, o, q_norm, k_norm, in_norm, post_norm;
    bool sparse;
    cpu_weight router;                 /* sparse: [experts, hidden] */
    cpu_weight *gate, *up, *down;      /* sparse: [experts]; dense: one each */
} cpu_layer;

typedef struct {
    cpu_config c;
    cpu_layer *layer;
    cpu_weight embed, norm, lm_head;
    size_t n_maps;
    void **maps;
    size_t *map_len;
} cpu_model;

/* Load and validate a Hugging Face Qwen3-MoE folder; errors name the file and key/tensor. */
int cpu_model_load(const char *dir, cpu_model *m, golden_error *err);
void cpu_model_free(cpu_model *m);

/* Parse config.json only (also used by make-model's self-check and the matrix). */
int cpu_config_load(const char *path, cpu_config *c, golden_error *err);
/* The keys of config.json at path that the cpu reference knows nothing about (neither reads,
 * nor refuses away from their neutral value, nor knows to leave the math alone), sorted and
 * comma-separated into *out (malloc'd; "" = none). */
int cpu_config_unknown(const char *path, char **out, golden_error *err);

/* ---- kernels (kernels.c) ---- */
extern float cpu_f16_table[65536];
void cpu_kernels_init(void);
/* Whether the AVX2 + FMA kernels run; on = 0 turns them off, 1 back on (when the CPU has them),
 * -1 only asks. Returns the previous state. For tests: the two attention paths must agree. */
bool cpu_kernels_use_avx2(int on);
/* The same for AVX-512 (F + VL): the 4 x 6 ymm matmul block and the zmm kernels (matmul 8 x 6,
 * attention scores, P x V, softmax); off = the AVX2 4 x 3 path. Same bits: tests check each. */
bool cpu_kernels_use_avx512(int on);
/* Only the 8 x 6 zmm block (on = 0: the 4 x 6 ymm block runs instead; use_avx512(0) turns
 * both off). Same bits as the others: tests check each. */
bool cpu_kernels_use_zmm(int on);
/* y[i] = expf(x[i]) as the zmm softmax computes it (8 at a time, expf's own bits); false when
 * that path is off and plain expf ran. For tests. */
bool cpu_expf_vec(const float *x, float *y, int64_t n);
/* Row r of w, elements [0, cols), converted to f32 exactly. */
void cpu_weight_row(const cpu_weight *w, int64_t r, float *dst);
/* y[t][o] = sum_i w[o][i] * x[t][i] for t < n tokens; x is [n, w.cols], y [n, w.rows] with row
 * stride ldy; parallel over blocks of output rows on `threads` workers. */
int cpu_matmul(const cpu_weight *w, const float *x, int64_t n, float *y, int64_t ldy,
               int threads, golden_error *err);
/* Several independent products in one parallel pass (q/k/v, every active expert): one pool
 * start instead of one per product, and the workers balance across all of them. */
typedef struct {
    const cpu_weight *w;
    const float *x;
    int64_t n;
    float *y;
    int64_t ldy;
} cpu_matmul_job;
int cpu_matmul_batch(const cpu_matmul_job *jobs, size_t n_jobs, int threads, golden_error *err);
void cpu_rmsnorm(const float *x, const cpu_weight *w, int64_t n, double eps, float *y);
/* Causal attention of G query heads sharing one KV head over keys [0, n): q and o hold the G
 * heads of hd floats back to back, K and V point at key 0 of that KV head (row stride kd),
 * s is scratch of G * n floats. Every score is summed as one head alone would be (lane m sums
 * dims = m mod 8 by mul then add, then ((l0+l4)+(l1+l5))+((l2+l6)+(l3+l7)), then the tail
 * dims), times scale; softmax in key order; each output element sums p_j * v_j over keys in
 * order. The AVX2 path (keys 8 at a time, all heads of the group per K/V load) and the
 * portable one give the same bits. */
void cpu_attend(const float *q, int G, int hd, const float *K, const float *V, int64_t kd,
                int64_t n, float scale, float *o, float *s);
/* P positions of one KV head at once (cpu_attend each, the same bits): position i's query
 * heads at q + i * qs, its output at o + i * os, n[i] its keys; s is scratch of P * G rows of
 * ld >= max n[i] floats. */
void cpu_attend_block(const float *q, int P, int64_t qs, int G, int hd, const float *K,
                      const float *V, int64_t kd, const int64_t *n, float scale, float *o,
                      int64_t os, float *s, int64_t ld);
/* Round every element to bf16 and back (dtype=bf16 mode). */
void cpu_round_bf16(float *x, size_t n);

/* ---- the backend instance (forward.c) ---- */
typedef struct {
    float **k, **v; /* per layer: [cap, kv_heads*head_dim] */
    int64_t len, cap;
    float *last_logits; /* [vocab] of the last processed position */
    bool has_logits;
    int64_t stale; /* faults kv_stale_after_reset, kv_lane3_stale, reset_all_lane0_only only:
                    * old positions attention still reads */
    int32_t *hist; /* fault taps_decode_recompute only: the lane's tokens [cap] */
    /* ABI version 2, prefill_keep: the positions whose logits the last prefill kept */
    int64_t keep_pos[GOLDEN_BK_MAX_KEEP];
    size_t n_keep;
    float *kept;   /* [n_keep, vocab] */
    size_t kept_cap; /* floats */
    /* issue 33, cancel (cpu_batch.c): every lane call holds lock; cancel() sets the flag, which
     * a running forward looks at between layers, and the call that sees it resets the lane */
    pthread_mutex_t lock;
    atomic_int cancel;
} cpu_lane;

/* Faults `--backend-opt inject=NAME` plants on purpose, so the conformance checks can be
 * shown to bite (docs/conformance.md). Set once at open; the clean path tests one flag word. */
enum {
    CPU_FAULT_CAUSAL_LEAK = 1u << 0,
    CPU_FAULT_KV_OFF_BY_ONE_AT_16 = 1u << 1,
    CPU_FAULT_KV_LANE_CROSS = 1u << 2,
    CPU_FAULT_KV_TAIL_STALE = 1u << 3,
    CPU_FAULT_KV_STALE_AFTER_RESET = 1u << 4,
    CPU_FAULT_ROUTER_DUPLICATE = 1u << 5,
    CPU_FAULT_ROUTER_UNNORMALIZED = 1u << 6,
    CPU_FAULT_ROUTER_TIE_HIGH_INDEX = 1u << 7,
    CPU_FAULT_ROUTER_NAN_SILENT = 1u << 8,
    CPU_FAULT_TOPK_TOO_SMALL = 1u << 9,
    /* issue 28: faults the pre-issue-28 fixed points did not see (docs/conformance.md) */
    CPU_FAULT_MASK_LEAK_AT_129 = 1u << 10,        /* prefill row 129 also attends row 130 */
    CPU_FAULT_DECODE_LEAK_AT_33 = 1u << 11,       /* decode at 33 also reads cache slot 34 */
    CPU_FAULT_KV_PREFILL_OFF_BY_ONE_AT_31 = 1u << 12, /* a prefill continuing at 31: slot 30 too */
    CPU_FAULT_NOTAP_DECODE_KV = 1u << 13,         /* taps off: decode's KV also lands in p-1 */
    CPU_FAULT_KV_LANE3_STALE = 1u << 14,          /* lane 3: a new sequence still sees the old */
    CPU_FAULT_KV_LANE2_ZERO = 1u << 15,           /* lane 2 never writes its cache (zeros) */
    CPU_FAULT_TAPS_DECODE_RECOMPUTE = 1u << 16,   /* decode reruns the whole context */
    CPU_FAULT_TAPS_ROUTER_LAST_MISSING = 1u << 17, /* no router taps for the last sparse layer */
    CPU_FAULT_KV_TAIL_OFF_BY_ONE = 1u << 18,      /* a cut not on 16 keeps one position more */
    CPU_FAULT_RESET_ALL_LANE0_ONLY = 1u << 19,    /* reset(-1) clears lane 0 only */
    CPU_FAULT_DECODE_PAST_LIMIT_DROPPED = 1u << 20, /* decode at the limit: success, nothing done */
    CPU_FAULT_REFUSED_DECODE_DROPS_LAST = 1u << 21, /* a refused decode drops the lane's last position */
    CPU_FAULT_ROUTER_DECODE_RANK_SWAP = 1u << 22, /* decode: ranks 0 and 1 swapped */
    CPU_FAULT_NONDETERMINISTIC = 1u << 23,        /* logit 0 moved by an amount drawn at open */
    /* issue 28, round 3: faults only a golden or the router's decode steps see */
    CPU_FAULT_LOGIT_SHIFT_TOKEN = 1u << 24,       /* logits(): +1/16 on every id = 3 mod 8 */
    CPU_FAULT_LOGITS_BF16_TRUNCATE = 1u << 25,    /* logits(): f32 cut to bf16 (round to zero) */
    CPU_FAULT_ROUTER_NAN_SILENT_DECODE = 1u << 26, /* decode only: NaN router logits routed */
    /* round 4: the router's lanes and positions, logits_at and topk (docs/conformance.md) */
    CPU_FAULT_ROUTER_LANE1_DECODE_SWAP = 1u << 27, /* lane 1's decode: ranks 0 and 1 swapped */
    CPU_FAULT_ROUTER_PREFILL_SWAP_PAST_100 = 1u << 28, /* prefill rows at 100+: ranks swapped */
    CPU_FAULT_LOGITS_AT_BF16 = 1u << 29, /* logits_at of a kept row: f32 cut to bf16 */
    CPU_FAULT_TOPK_VALUE_SHIFT = 1u << 30 /* topk(): values[0] + 1/16 */
};

/* Run-time faults `inject=NAME@N`: what the N-th prefill or decode call since open (1-based,
 * refused calls included) does wrong, so run's and conform's fault lines can be shown. */
enum {
    CPU_AT_TIMEOUT,      /* that call fails with "timeout: ..." */
    CPU_AT_DEVICE_ERROR, /* that call fails with a device error; later calls work */
    CPU_AT_DEVICE_LOST,  /* that call and every later one fails: nothing recovers */
    CPU_AT_NAN,          /* that call succeeds, its logits are all NaN */
    CPU_AT_INF,          /* that call succeeds, logit 0 is +Inf */
    CPU_AT_REJECT,       /* that call is refused with context_limit_exceeded */
    CPU_AT_COUNT
};

typedef struct {
    cpu_model m;
    bool bf16;
    int threads;
    int n_lanes;
    int chunk;      /* positions per forward call of a long prefill */
    cpu_lane *lanes;
    golden_backend_hooks hooks;
    unsigned fault; /* CPU_FAULT_* bits; 0 for every real use */
    int64_t at[CPU_AT_COUNT]; /* call number of each run-time fault; 0 = none */
    bool any_at;
    int64_t calls;  /* prefill and decode calls so far */
    int64_t call_pos; /* the position the current public prefill call starts at */
    bool in_decode;   /* the current call is a decode */
    int cur_lane;     /* the lane and first position of the current forward (planted faults) */
    int64_t cur_pos;
    float jitter;     /* fault nondeterministic: what this open adds to logit 0 */
    int64_t delay_us; /* delay_us=N: device-side delay, uniform [0, N] us inside npu_wait */
    uint64_t delay_rng; /* its splitmix64 state (delay_seed=S, default 0) */
    unsigned sample_fault; /* inject=sample_*: the sample call's planted faults (cpu_sample.c) */
    uint64_t sample_calls; /* fault sample_seed_ignored: sample calls so far */
    bool locks;         /* the lanes' locks are initialised (cpu_batch.c) */
} cpu_backend;

/* The built-in backend's version 2 table (golden_cpu_backend() is its base). */
const golden_backend_vtable_v2 *lg_cpu_backend_v2(void);

/* ---- step_batch and cancel (cpu_batch.c) ---- */
int lg_cpu_lanes_init(cpu_backend *b);   /* the lanes' locks (recursive) */
void lg_cpu_lanes_fini(cpu_backend *b);
void lg_cpu_lock(cpu_backend *b, int lane);   /* lane < 0: every lane, in order */
void lg_cpu_unlock(cpu_backend *b, int lane);
/* The end of a lane call, its lock held: a cancel that came meanwhile resets the lane (reset_fn)
 * and turns rc into GOLDEN_BK_E_CANCELLED. */
int lg_cpu_lane_end(cpu_backend *b, int lane, int rc, char *msg, size_t n);
bool lg_cpu_cancelled(const cpu_backend *b, int lane);
int lg_cpu_step_batch(void *self, golden_backend_step *steps, size_t n_steps, char *msg, size_t n);
int lg_cpu_cancel(void *self, int lane, char *msg, size_t n);

/* Run positions [pos, pos+n) of lane through the model; leaves the last position's logits, and
 * those of the lane's kept positions (keep_pos) inside [pos, pos+n) in kept. */
int cpu_forward(cpu_backend *b, int lane, int64_t pos, const int32_t *tokens, int64_t n,
                golden_error *err);
#endif
