/* npu-replay profile: the routing profile of a golden's router taps (handbook sections 11-12):
 * per layer expert load, top-k mass and margin, section 12's bucket histogram; deltas of two. */
#ifndef GOLDEN_PROFILE_H
#define GOLDEN_PROFILE_H
#include "golden/api.h"
#include <jansson.h>
#include <stdint.h>
#include "golden/error.h"

/* Section 12's buckets of tokens per expert within one case: 0, 1, 2-4, 5-8, 9-16, 17-32, >32. */
#define GOLDEN_PROFILE_BUCKETS 7
/* The bucket of n tokens (0 .. GOLDEN_PROFILE_BUCKETS-1). */
GOLDEN_API int golden_profile_bucket(uint64_t n);

/* One layer's traffic under a placement (calculet-expert-placement/v1; docs/npu-replay.md). A
 * (token, rank) pair is served on the chip holding its expert (replicated: the token's own
 * chip); the grouped launch of one (case, serving chip, expert) keeps at most `capacity` pairs
 * (lower token first) and pads them up to a multiple of `multiple`. */
typedef struct {
    uint64_t pairs;                /* (token, rank) pairs routed */
    uint64_t kept, dropped;        /* pairs within / beyond the capacity */
    uint64_t dispatch_bytes;       /* kept pairs x bytes of one activation row */
    uint64_t combine_bytes;        /* kept pairs x bytes of one expert output row */
    uint64_t cross_dispatch_bytes; /* the part whose serving chip is not the token's own */
    uint64_t cross_combine_bytes;
    uint64_t launches;             /* (case, chip, expert) launches with a pair */
    uint64_t slots, padding;       /* launch slots after padding; slots - kept */
    /* launches and their padding slots by section 12's bucket of the pairs a launch keeps */
    uint64_t bucket_launches[GOLDEN_PROFILE_BUCKETS], bucket_padding[GOLDEN_PROFILE_BUCKETS];
    uint64_t *chip_load;           /* [chips] pairs served on each chip */
    uint64_t *chip_experts;        /* [chips] experts the chip holds */
    uint64_t *chip_tokens;         /* [chips] tokens with a pair served there (fault domain) */
    double chip_imbalance;         /* max / mean of chip_load */
} golden_profile_placed;

/* The placement a profile was computed under (file NULL: none). Filled by the library, which
 * sets version to GOLDEN_PROFILE_SETUP_VERSION; a caller building one starts from
 * GOLDEN_PROFILE_SETUP_INIT. */
#define GOLDEN_PROFILE_SETUP_VERSION 1u
typedef struct {
    unsigned version;              /* GOLDEN_PROFILE_SETUP_VERSION */
    char *file;
    int chips;
    int token_chip;                /* -1: each case's tokens split in contiguous blocks */
    uint64_t bytes_per_token, combine_bytes_per_token;
    int64_t multiple, capacity;    /* 0: none */
} golden_profile_setup;
#define GOLDEN_PROFILE_SETUP_INIT {.version = GOLDEN_PROFILE_SETUP_VERSION, .token_chip = -1}

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
    golden_profile_placed *placed; /* NULL without a placement */
} golden_profile_layer;

typedef struct {
    char *path;
    size_t n;
    golden_profile_layer *layers; /* ascending layer */
    golden_profile_setup placement;
} golden_profile;

/* Profile every `PREFIX/layers/L/router/topk_ids` (i32 [tokens, k]) of the golden, with the
 * sibling `router/logits` when present. A golden without router taps is an error. */
GOLDEN_API int golden_profile_build(const char *golden, golden_profile *out, golden_error *err);
GOLDEN_API void golden_profile_free(golden_profile *p);

/* A calculet-expert-placement/v1 document (YAML or JSON), checked against its schema. */
typedef struct golden_placement golden_placement;
GOLDEN_API int golden_placement_load(const char *path, golden_placement **out, golden_error *err);
GOLDEN_API void golden_placement_free(golden_placement *pl);
/* Check pl against the built profile p of `golden` (every expert of each layer on exactly one
 * chip unless replicated, no expert id beyond the layer's, no layer the golden lacks; errors
 * name the placement file and line:col) and fill every layer's `placed` from its router ids. */
GOLDEN_API int golden_profile_place(const char *golden, const golden_placement *pl, golden_profile *p,
                         golden_error *err);
/* calculet-routing-profile/v1: the layers of a, and with b (may be NULL) b's layers and the
 * per-layer deltas b - a (loads compared as shares of all hits); the placement figures only
 * when the profiles were placed. */
GOLDEN_API json_t *golden_profile_json(const golden_profile *a, const golden_profile *b);
#endif
