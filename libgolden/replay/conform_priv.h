/* Private to npu-replay conform: one check's context (a fresh backend, captured taps, findings)
 * and the helpers every check family (conform_kv.c, conform_router.c) is written with. */
#ifndef GOLDEN_REPLAY_CONFORM_PRIV_H
#define GOLDEN_REPLAY_CONFORM_PRIV_H
#include "golden/conform.h"
#include "golden/replay.h"
#include "replay/sample_priv.h"

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
    uint64_t path_rng;   /* cf_decode_logits: decode or decode_at (version 2), by lane, */
    uint8_t path_n[64];  /* alternating from a seeded phase */
    golden_error err;
    bool tap_discard; /* taps are asked for (the tapped path runs) but not kept */
    bool taps_on;     /* the backend is asked for taps now (cf_set_taps) */
    double deadline;  /* cf_budget_start: when the random positions must stop */
    bool cross_open;  /* the check compares with another open (cf_open_ref): cf_same allows
                       * opts.nondet_tol as well as opts.atol */
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
/* The lane's length through the host (1 with the check's error when the host died). */
int cf_length(cf_ctx *c, int lane, int64_t *len);
/* length() of the lane against the harness's own count of what it sent (a finding when they
 * differ, naming the call it followed); 1 only when the call failed. */
int cf_expect_length(cf_ctx *c, int lane, int64_t want, const char *kase, const char *after);
/* n deterministic tokens in [0, vocab). */
void cf_tokens(cf_ctx *c, int32_t *t, size_t n);
/* Logits of the lane's last position as f32 (vocab entries) into dst. */
int cf_logits(cf_ctx *c, int lane, float *dst);
int cf_prefill_logits(cf_ctx *c, int lane, int64_t pos, const int32_t *t, size_t n, float *dst);
int cf_decode_logits(cf_ctx *c, int lane, int32_t tok, float *dst);
/* Compare two rows under opts.atol (bitwise when 0); on a difference, the first index and the
 * largest |a-b| go to *at and *maxd. Returns true when equal. */
bool cf_same(const cf_ctx *c, const float *a, const float *b, size_t n, size_t *at, double *maxd);
/* cf_same on the vocabulary, counted, with a finding "WHAT: logits differ ..." on a difference. */
void cf_cmp_logits(cf_ctx *c, const char *kase, const char *what, const float *a, const float *ref);
/* Taps captured now against base (nb taps): rows before j must be equal; returns whether some
 * row j changed. */
bool cf_cmp_taps(cf_ctx *c, const cf_tap *base, size_t nb, int64_t j, const char *kase);

/* ---- coverage (issue 28) ---- */
/* Ask the backend for taps (on) or run its production path (off); taps_on follows. */
int cf_set_taps(cf_ctx *c, bool on);
/* A second instance of the same backend and options (every lane fresh), sharing c's check:
 * its errors and findings are c's. Close with cf_close. */
int cf_open_ref(cf_ctx *c, cf_ctx *ref);
/* Section 5.1's boundary set below lim: 1, 2, then P-1, P, P+1 for every power of two P from 16
 * (16, 32, 64, 128, 256, 512, ...), and lim-1 (the last position); sorted, distinct; returns how
 * many. */
size_t cf_boundaries(int64_t lim, int64_t *out, size_t cap);
/* Start the random-position budget (opts.budget seconds from now; none when < 0). */
void cf_budget_start(cf_ctx *c);
/* Whether time is left for one more random position (at most CF_MAX_RANDOM a check). */
bool cf_budget_left(const cf_ctx *c, size_t done);
#define CF_MAX_RANDOM 64
/* A seeded position in [lo, hi) not among the n of set (-1 when the range has none left). */
int64_t cf_random_position(cf_ctx *c, int64_t lo, int64_t hi, const int64_t *set, size_t n);
/* Append v to the coverage array `key` (created on first use). */
void cf_cover(cf_ctx *c, const char *key, int64_t v);
/* Set the coverage entry `key` to the string v. */
void cf_cover_str(cf_ctx *c, const char *key, const char *v);
/* The lanes a lane check uses: every lane when there are at most 8, else a seeded 8 with the
 * first and the last; sorted; returns how many (into out[8]). */
int cf_lanes(cf_ctx *c, int *out);
double cf_now(void);

int cf_check_causal_mask(cf_ctx *c);
int cf_check_kv_positions(cf_ctx *c);
int cf_check_kv_lanes(cf_ctx *c);
int cf_check_kv_tail(cf_ctx *c);
int cf_check_kv_reset(cf_ctx *c);
int cf_check_rejection(cf_ctx *c);
int cf_check_router(cf_ctx *c);
int cf_check_kv_growth(cf_ctx *c);
int cf_check_sampling_topk(cf_ctx *c);
int cf_check_sampling_stats(cf_ctx *c); /* conform_stats.c */
int cf_check_taps(cf_ctx *c);
int cf_check_determinism(cf_ctx *c);
int cf_check_golden(cf_ctx *c);
/* part of kv-lanes (conform_v2.c): logits_at() and topk() against logits(), every lane */
int cf_check_v2_outputs(cf_ctx *c);
/* the pre-issue-28 fixed points (conform_fixed.c), run when opts.fixed_points */
int cf_fixed_causal_mask(cf_ctx *c);
int cf_fixed_kv_positions(cf_ctx *c);
int cf_fixed_kv_lanes(cf_ctx *c);
int cf_fixed_kv_tail(cf_ctx *c);
int cf_fixed_kv_reset(cf_ctx *c);
int cf_fixed_rejection(cf_ctx *c);

/* ---- the llama.cpp sampler chain of sampling-topk (conform_sample.c) ---- */
typedef lg_cand cf_cand; /* replay/sample_priv.h: the chain is shared with the cpu backend */
/* lg_sample_chain (replay/sample_priv.h) with sampling-topk's settings. */
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
