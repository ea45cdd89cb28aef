/* npu-replay profile: the routing profile of a golden's router taps (handbook sections 11-12):
 * per layer expert load, top-k mass and margin, section 12's bucket histogram; deltas of two. */
#ifndef GOLDEN_PROFILE_H
#define GOLDEN_PROFILE_H
#include <jansson.h>
#include <stdint.h>
#include "golden/error.h"

/* Section 12's buckets of tokens per expert within one case: 0, 1, 2-4, 5-8, 9-16, 17-32, >32. */
#define GOLDEN_PROFILE_BUCKETS 7

typedef struct {
    int layer, experts, k;
    uint64_t tokens;           /* routed tokens (rows of topk_ids) over every case */
    uint64_t cases;            /* cases (groups) holding this layer's router taps */
    uint64_t *hits;            /* [experts]: (token, rank) pairs naming the expert */
    uint64_t empty, small;     /* experts never hit; hit less than a quarter of the mean */
    double max_mean;           /* max(hits) / mean(hits) */
    double tokens_per_selected;/* mean hits over experts hit at least once */
    uint64_t mass_n;           /* tokens with router logits (mass and margin need them) */
    double mass_mean, mass_min;     /* softmax probability the top-k holds */
    double margin_mean, margin_min; /* p(rank k) - p(rank k+1) */
    uint64_t bucket[GOLDEN_PROFILE_BUCKETS]; /* (case, expert) pairs by tokens routed */
} golden_profile_layer;

typedef struct {
    char *path;
    size_t n;
    golden_profile_layer *layers; /* ascending layer */
} golden_profile;

/* Profile every `PREFIX/layers/L/router/topk_ids` (i32 [tokens, k]) of the golden, with the
 * sibling `router/logits` when present. A golden without router taps is an error. */
int golden_profile_build(const char *golden, golden_profile *out, golden_error *err);
void golden_profile_free(golden_profile *p);
/* calculet-routing-profile/v1: the layers of a, and with b (may be NULL) b's layers and the
 * per-layer deltas b - a (loads compared as shares of all hits). */
json_t *golden_profile_json(const golden_profile *a, const golden_profile *b);
#endif
