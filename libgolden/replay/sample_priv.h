/* Private to npu-replay: llama.cpp's sampler chain (handbook section 15) as one internal function
 * shared by the host side (conform's sampling-topk and sampling-stats) and the cpu backend's
 * `sample` call, the backend's seeded draw, and the chi-square p-value sampling-stats judges
 * with. */
#ifndef GOLDEN_REPLAY_SAMPLE_PRIV_H
#define GOLDEN_REPLAY_SAMPLE_PRIV_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "golden/backend.h"
#include "golden/error.h"
#include "golden/replay.h"

typedef struct {
    int32_t id;
    float logit, p;
} lg_cand;

/* The chain's settings, in the float the chain computes in. Off: top_k <= 0, top_p >= 1,
 * min_p <= 0, repeat_penalty == 1 (or repeat_last_n <= 0); temp <= 0 is greedy. */
typedef struct {
    float temp;
    int top_k;
    float top_p, min_p, repeat_penalty;
    int repeat_last_n;
    int topp_extra; /* planted fault sample_topp_off_by_one only: classes kept past top-p; 0 */
    int temp_first; /* planted fault sample_temp_first only: temperature before the cuts; 0 */
} lg_sample_params;

/* From the ABI's settings (history aside). */
lg_sample_params lg_sample_params_of(const golden_backend_sampling *s);

/* Penalties (the last repeat_last_n of the n_hist tokens of hist, each seen token once: a logit
 * > 0 divided by the penalty, one <= 0 multiplied), sort (largest logit first, the lower id
 * first among equals), top-k, softmax, top-p (the shortest prefix whose mass reaches p), min-p
 * (logits below the largest + ln(min_p) dropped), temperature, softmax: on the n candidates in
 * c, in place; returns the candidates left, c[i].p their probabilities. Greedy (temp <= 0): one
 * candidate, the largest penalised logit, p = 1. */
size_t lg_sample_chain(const lg_sample_params *s, lg_cand *c, size_t n, const int32_t *hist,
                       size_t n_hist);

/* splitmix64 step of *state. */
uint64_t lg_splitmix64(uint64_t *state);
/* The index in d[0..n) of one draw with the uniform u in [0, 1): the first candidate whose
 * cumulative probability exceeds u (the last one of nonzero probability when rounding leaves
 * u above the sum). */
size_t lg_sample_pick(const lg_cand *d, size_t n, double u);
/* A uniform in [0, 1) from 53 bits of x. */
double lg_unit53(uint64_t x);

/* ---- the chi-square p-value (chisq.c) ---- */
/* The regularized upper incomplete gamma Q(a, x) = Gamma(a, x) / Gamma(a), a > 0, x >= 0
 * (series below a + 1, continued fraction above; relative error ~1e-13). NaN for bad input. */
double lg_gamma_q(double a, double x);
/* P(X >= chi2) for X chi-square with dof degrees of freedom (dof >= 1): Q(dof/2, chi2/2). */
double lg_chisq_sf(double chi2, double dof);

/* ---- the harness's side (abi.c) ---- */
/* Whether the loaded backend offers sample (GOLDEN_BACKEND_V2_HAS; through the backend host,
 * whether the plug-in inside it does). */
bool replay_backend_has_sample(const golden_backend *b);
/* sample (s->n_draws tokens into token[], or one) with every token checked against the
 * vocabulary (a violation otherwise). */
int replay_backend_sample(golden_backend *b, int lane, const golden_backend_sampling *s,
                          int32_t *token, golden_error *err);

/* ---- the cpu backend's sample call (cpu_sample.c) ---- */
/* Whether name is one of the sample faults; when it is, its bit is set in *bits. */
bool lg_cpu_sample_fault(const char *name, unsigned *bits);
int lg_cpu_sample(void *self, int lane, const golden_backend_sampling *s, int32_t *token,
                  char *msg, size_t msg_len);
#endif
