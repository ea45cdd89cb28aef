/* Private to npu-replay conform: one check's context (a fresh backend, captured taps, findings)
 * and the helpers every check family (conform_kv.c, conform_router.c) is written with. */
#ifndef GOLDEN_REPLAY_CONFORM_PRIV_H
#define GOLDEN_REPLAY_CONFORM_PRIV_H
#include "golden/conform.h"
#include "golden/replay.h"

typedef struct {
    char name[96];
    int layer, dtype;
    int64_t rows, cols;
    void *data; /* rows * cols of 4 bytes */
} cf_tap;

typedef struct {
    const golden_conform_opts *o;
    golden_backend *b;
    const golden_backend_info *info;
    golden_conform_check *chk;
    const char *tap_filter; /* substring a kept tap name holds; NULL = every tap */
    cf_tap *taps;
    size_t n_taps, cap_taps;
    bool tap_oom;
    int64_t limit; /* the context the checks use: min(limit, max_context) */
    uint64_t rng;
    golden_error err;
} cf_ctx;

/* Open a fresh backend (model_dir overrides the options' folder when not NULL). */
int cf_open(cf_ctx *c, const char *model_dir);
void cf_close(cf_ctx *c);
void cf_taps_clear(cf_ctx *c);
const cf_tap *cf_tap_find(const cf_ctx *c, const char *name);
/* Record a finding (kept up to GOLDEN_CONFORM_KEEP) and mark the check failed. */
void cf_find(cf_ctx *c, const char *kase, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* The check could not run: the backend's error (c->err) or a message. Returns 1. */
int cf_error(cf_ctx *c, const char *what);
/* n deterministic tokens in [0, vocab). */
void cf_tokens(cf_ctx *c, int32_t *t, size_t n);
/* Logits of the lane's last position as f32 (vocab entries) into dst. */
int cf_logits(cf_ctx *c, int lane, float *dst);
int cf_prefill_logits(cf_ctx *c, int lane, int64_t pos, const int32_t *t, size_t n, float *dst);
int cf_decode_logits(cf_ctx *c, int lane, int32_t tok, float *dst);
/* Compare two rows under opts.atol (bitwise when 0); on a difference, the first index and the
 * largest |a-b| go to *at and *maxd. Returns true when equal. */
bool cf_same(const cf_ctx *c, const float *a, const float *b, size_t n, size_t *at, double *maxd);

int cf_check_causal_mask(cf_ctx *c);
int cf_check_kv_positions(cf_ctx *c);
int cf_check_kv_lanes(cf_ctx *c);
int cf_check_kv_tail(cf_ctx *c);
int cf_check_kv_reset(cf_ctx *c);
int cf_check_rejection(cf_ctx *c);
int cf_check_router(cf_ctx *c);
int cf_check_kv_growth(cf_ctx *c);
int cf_check_sampling_topk(cf_ctx *c);

/* ---- the llama.cpp sampler chain of sampling-topk (conform_sample.c) ---- */
typedef struct {
    int32_t id;
    float logit, p;
} cf_cand;
/* penalties (history of n_hist tokens), top-k, top-p, min-p, temperature, softmax: on the n
 * candidates in c (sorted descending by raw logit, lower id first among equal), in place;
 * returns the candidates left. */
size_t cf_sample_chain(const golden_conform_sampling *s, cf_cand *c, size_t n,
                       const int32_t *hist, size_t n_hist);
/* The smallest k for which the chain on the top k of the sorted full list gives bitwise the
 * result of the chain on all n (binary search; the chain is monotone in k past the top-k set). */
size_t cf_sample_min_k(const golden_conform_sampling *s, const cf_cand *sorted, size_t n,
                       const int32_t *hist, size_t n_hist, cf_cand *scratch, cf_cand *full);
/* The smallest k whose f32 softmax normaliser (summed largest first) equals the full one. */
size_t cf_logprob_min_k(const cf_cand *sorted, size_t n);
void cf_sampling_defaults(golden_conform_sampling *s);
#endif
