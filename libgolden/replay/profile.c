/* npu-replay profile: reads every router tap of a golden and builds the per-layer routing
 * profile (expert load, top-k mass and margin, section 12's buckets), and its JSON with deltas. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "golden/profile.h"
#include "golden/report.h"
#include "golden/store.h"
#include "replay/profile_priv.h"
#include "util/numtext.h"

int golden_profile_bucket(uint64_t n)
{
    static const uint64_t hi[] = {0, 1, 4, 8, 16, 32};
    for (int b = 0; b < 6; b++)
        if (n <= hi[b])
            return b;
    return 6;
}

static golden_profile_layer *layer_of(golden_profile *p, int l, int E, int K, golden_error *err)
{
    for (size_t i = 0; i < p->n; i++)
        if (p->layers[i].layer == l) {
            if (p->layers[i].experts < E)
                p->layers[i].experts = E;
            return &p->layers[i];
        }
    golden_profile_layer *n = realloc(p->layers, (p->n + 1) * sizeof *n);
    if (!n)
        return golden_fail_what(err, GOLDEN_ENOMEM, "profile", "out of memory"), NULL;
    p->layers = n;
    size_t at = p->n;
    while (at > 0 && p->layers[at - 1].layer > l) /* keep them sorted by layer */
        at--;
    memmove(p->layers + at + 1, p->layers + at, (p->n - at) * sizeof *n);
    p->n++;
    golden_profile_layer *L = &p->layers[at];
    memset(L, 0, sizeof *L);
    L->layer = l, L->experts = E, L->k = K;
    L->mass_min = L->margin_min = INFINITY;
    L->hits = calloc(4096, sizeof *L->hits); /* experts are bounded below by this (checked) */
    if (!L->hits)
        return golden_fail_what(err, GOLDEN_ENOMEM, "profile", "out of memory"), NULL;
    return L;
}

/* Mass and margin of one token from its router logits. */
static void mass_margin(golden_profile_layer *L, const float *lg, int E, const int32_t *ids, int K,
                        double *p)
{
    double mx = -INFINITY, sum = 0, mass = 0, kth = INFINITY, next = 0;
    for (int e = 0; e < E; e++)
        mx = lg[e] > mx ? lg[e] : mx;
    for (int e = 0; e < E; e++)
        sum += (p[e] = exp((double)lg[e] - mx));
    for (int k = 0; k < K; k++) {
        double q = p[ids[k]] / sum;
        mass += q;
        kth = q < kth ? q : kth;
    }
    for (int e = 0; e < E; e++) {
        bool in = false;
        for (int k = 0; k < K; k++)
            in |= ids[k] == e;
        if (!in && p[e] / sum > next)
            next = p[e] / sum;
    }
    L->mass_n++;
    L->mass_mean += mass;
    L->margin_mean += kth - next;
    L->mass_min = mass < L->mass_min ? mass : L->mass_min;
    L->margin_min = kth - next < L->margin_min ? kth - next : L->margin_min;
}

/* One case's topk_ids tensor (index i) of layer l, with its logits when lg_i >= 0. */
bool lg_router_layer(const char *lay, int64_t *layer)
{
    if (strncmp(lay, "layers/", 7) != 0)
        return false;
    size_t nd = lg_digits_len(lay + 7);
    return lg_parse_int_n(lay + 7, nd, 0, INT32_MAX, layer) == GOLDEN_PARSE_OK &&
           strncmp(lay + 7 + nd, "/router/", 8) == 0;
}

static int add_case(golden_reader *r, size_t i, long lg_i, int l, golden_profile *p,
                    golden_error *err)
{
    const golden_tensor_info *t = golden_reader_tensor(r, i);
    if (t->dtype != GOLDEN_I32 || t->rank != 2 || t->shape[1] == 0 || t->shape[1] > 4096)
        return golden_fail_what(err, GOLDEN_EINVAL, t->name, "router ids must be i32 [tokens, k]");
    uint64_t T = t->shape[0];
    int K = (int)t->shape[1], E = 0;
    const golden_tensor_info *tl = lg_i >= 0 ? golden_reader_tensor(r, (size_t)lg_i) : NULL;
    if (tl && (tl->dtype != GOLDEN_F32 || tl->rank != 2 || tl->shape[0] != T || tl->shape[1] > 4096))
        tl = NULL; /* logits of another shape: mass and margin left out for this case */
    int32_t *ids = malloc((size_t)(T * (uint64_t)K) * 4 + 4);
    float *lg = tl ? malloc((size_t)(T * tl->shape[1]) * 4 + 4) : NULL;
    double *pr = tl ? malloc((size_t)tl->shape[1] * sizeof *pr + 8) : NULL;
    uint64_t *per = calloc(4096, sizeof *per);
    int rc = GOLDEN_ERR;
    if (!ids || !per || (tl && (!lg || !pr))) {
        golden_fail_what(err, GOLDEN_ENOMEM, "profile", "out of memory");
        goto out;
    }
    if (golden_reader_read(r, i, 0, T * (uint64_t)K, ids, err) ||
        (tl && golden_reader_read(r, (size_t)lg_i, 0, T * tl->shape[1], lg, err)))
        goto out;
    for (uint64_t x = 0; x < T * (uint64_t)K; x++) {
        if (ids[x] < 0 || ids[x] >= 4096) {
            golden_fail_what(err, GOLDEN_EINVAL, t->name, "expert id %d at element %llu", ids[x],
                             (unsigned long long)x);
            goto out;
        }
        E = ids[x] + 1 > E ? ids[x] + 1 : E;
    }
    if (tl && (int)tl->shape[1] > E)
        E = (int)tl->shape[1];
    golden_profile_layer *L = layer_of(p, l, E, K, err);
    if (!L)
        goto out;
    L->cases++;
    L->tokens += T;
    for (uint64_t x = 0; x < T * (uint64_t)K; x++)
        L->hits[ids[x]]++, per[ids[x]]++;
    for (uint64_t tk = 0; tl && tk < T; tk++)
        mass_margin(L, lg + tk * tl->shape[1], (int)tl->shape[1], ids + tk * (uint64_t)K, K, pr);
    for (int e = 0; e < E; e++)
        L->bucket[golden_profile_bucket(per[e])]++;
    rc = 0;
out:
    free(ids), free(lg), free(pr), free(per);
    return rc;
}

/* Totals that need every case first. Experts named by no case but below the largest id (or the
 * logits' width) count as empty; a case's missing experts were counted in bucket 0 only from
 * that case's own width, so later cases' wider widths are added here. */
static void finish(golden_profile_layer *L)
{
    uint64_t total = 0, mx = 0, hit = 0;
    for (int e = 0; e < L->experts; e++) {
        total += L->hits[e];
        mx = L->hits[e] > mx ? L->hits[e] : mx;
        hit += L->hits[e] > 0;
    }
    double mean = L->experts ? (double)total / L->experts : 0;
    for (int e = 0; e < L->experts; e++) {
        L->empty += L->hits[e] == 0;
        L->small += L->hits[e] > 0 && (double)L->hits[e] < mean / 4;
    }
    L->max_mean = mean > 0 ? (double)mx / mean : 0;
    L->tokens_per_selected = hit ? (double)total / (double)hit : 0;
    uint64_t pairs = 0;
    for (int b = 0; b < GOLDEN_PROFILE_BUCKETS; b++)
        pairs += L->bucket[b];
    if (pairs < L->cases * (uint64_t)L->experts)
        L->bucket[0] += L->cases * (uint64_t)L->experts - pairs;
    if (L->mass_n) {
        L->mass_mean /= (double)L->mass_n;
        L->margin_mean /= (double)L->mass_n;
    } else {
        L->mass_min = L->margin_min = NAN;
    }
}

int golden_profile_build(const char *golden, golden_profile *p, golden_error *err)
{
    memset(p, 0, sizeof *p);
    p->placement = (golden_profile_setup)GOLDEN_PROFILE_SETUP_INIT;
    golden_reader *r = NULL;
    if (golden_reader_open_flags(golden, GOLDEN_READ_DATA_ONLY, &r, err))
        return GOLDEN_ERR;
    p->path = strdup(golden);
    int rc = p->path ? 0 : golden_fail_what(err, GOLDEN_ENOMEM, "profile", "out of memory");
    for (size_t i = 0; rc == 0 && i < golden_reader_count(r); i++) {
        const char *name = golden_reader_tensor(r, i)->name;
        size_t n = strlen(name);
        const char *lay = strstr(name, "layers/");
        int64_t l;
        if (n < 16 || strcmp(name + n - 16, "/router/topk_ids") != 0 || !lay ||
            !lg_router_layer(lay, &l))
            continue;
        char lg[4096];
        snprintf(lg, sizeof lg, "%.*s/router/logits", (int)(n - 16), name);
        rc = add_case(r, i, golden_reader_find(r, lg), (int)l, p, err);
    }
    golden_reader_close(r);
    if (rc == 0 && p->n == 0)
        rc = golden_fail_what(err, GOLDEN_EINVAL, golden, "no router taps (*/layers/L/router/topk_ids)");
    for (size_t i = 0; rc == 0 && i < p->n; i++)
        finish(&p->layers[i]);
    if (rc)
        golden_profile_free(p);
    return rc;
}

void golden_profile_free(golden_profile *p)
{
    for (size_t i = 0; i < p->n; i++) {
        golden_profile_placed *P = p->layers[i].placed;
        if (P)
            free(P->chip_load), free(P->chip_experts), free(P->chip_tokens);
        free(P);
        free(p->layers[i].hits);
    }
    free(p->layers);
    free(p->path);
    free(p->placement.file);
    memset(p, 0, sizeof *p);
}

static const char *const bn[GOLDEN_PROFILE_BUCKETS] = {"0", "1", "2-4", "5-8", "9-16", "17-32",
                                                       ">32"};

static json_t *by_bucket(const uint64_t *v)
{
    json_t *o = json_object();
    for (int i = 0; o && i < GOLDEN_PROFILE_BUCKETS; i++)
        json_object_set_new(o, bn[i], json_integer((json_int_t)v[i]));
    return o ? o : json_object();
}

/* A layer's figures under the placement (absent without one: not zero, unknown). */
static json_t *placed_json(const golden_profile_setup *s, const golden_profile_placed *P,
                           uint64_t tokens)
{
    json_t *load = json_array(), *fd = json_array();
    for (int c = 0; load && fd && c < s->chips; c++) {
        json_array_append_new(load, json_integer((json_int_t)P->chip_load[c]));
        json_array_append_new(fd, json_pack("{s:i, s:I, s:I, s:o}", "chip", c, "experts",
                                            (json_int_t)P->chip_experts[c], "tokens",
                                            (json_int_t)P->chip_tokens[c], "token_share",
                                            golden_json_real(tokens ? (double)P->chip_tokens[c] /
                                                                  (double)tokens : 0)));
    }
    json_t *o = json_pack("{s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:o, s:o, s:o}",
                          "pairs", (json_int_t)P->pairs, "dispatch_bytes",
                          (json_int_t)P->dispatch_bytes, "combine_bytes",
                          (json_int_t)P->combine_bytes, "cross_chip_dispatch_bytes",
                          (json_int_t)P->cross_dispatch_bytes, "cross_chip_combine_bytes",
                          (json_int_t)P->cross_combine_bytes, "all_to_all_bytes",
                          (json_int_t)(P->cross_dispatch_bytes + P->cross_combine_bytes),
                          "launches", (json_int_t)P->launches, "slots", (json_int_t)P->slots,
                          "padding_slots", (json_int_t)P->padding, "kept_pairs",
                          (json_int_t)P->kept, "chip_load", load ? load : json_array(),
                          "chip_imbalance", golden_json_real(P->chip_imbalance), "fault_domain",
                          fd ? fd : json_array());
    if (o) {
        json_object_set_new(o, "launches_by_bucket", by_bucket(P->bucket_launches));
        json_object_set_new(o, "padding_by_bucket", by_bucket(P->bucket_padding));
    }
    if (o && s->capacity)
        json_object_set_new(o, "dropped_pairs", json_integer((json_int_t)P->dropped));
    return o;
}

static json_t *layer_json(const golden_profile *p, const golden_profile_layer *L)
{
    json_t *hits = json_array(), *b = json_object();
    for (int e = 0; hits && e < L->experts; e++)
        json_array_append_new(hits, json_integer((json_int_t)L->hits[e]));
    for (int i = 0; b && i < GOLDEN_PROFILE_BUCKETS; i++)
        json_object_set_new(b, bn[i], json_integer((json_int_t)L->bucket[i]));
    json_t *o = json_pack("{s:i, s:i, s:i, s:I, s:I, s:o, s:I, s:I, s:o, s:o, s:o, s:o, s:o, s:o, s:o}",
                     "layer", L->layer, "experts", L->experts, "k", L->k, "tokens",
                     (json_int_t)L->tokens, "cases", (json_int_t)L->cases, "expert_hits",
                     hits ? hits : json_array(), "empty_experts", (json_int_t)L->empty,
                     "small_experts", (json_int_t)L->small, "max_mean_load",
                     golden_json_real(L->max_mean), "tokens_per_selected_expert",
                     golden_json_real(L->tokens_per_selected), "topk_mass_mean",
                     golden_json_real(L->mass_mean), "topk_mass_min", golden_json_real(L->mass_min),
                     "margin_mean", golden_json_real(L->margin_mean), "margin_min",
                     golden_json_real(L->margin_min), "buckets", b ? b : json_object());
    if (o && L->placed)
        json_object_set_new(o, "placement", placed_json(&p->placement, L->placed, L->tokens));
    return o;
}

static json_t *layers_json(const golden_profile *p)
{
    json_t *a = json_array();
    for (size_t i = 0; a && i < p->n; i++)
        json_array_append_new(a, layer_json(p, &p->layers[i]));
    return a ? a : json_array();
}

/* b - a of one layer; expert loads as shares of the layer's hits (the goldens may differ in
 * size): the largest share change and the expert it belongs to. */
#define DIFF(f) ((json_int_t)b->f - (json_int_t)a->f)
/* Candidate minus baseline of the placed figures (the same placement on both). */
static json_t *placed_delta_json(const golden_profile_placed *a, const golden_profile_placed *b,
                                 bool capacity)
{
    json_t *o = json_pack("{s:I, s:I, s:I, s:I, s:I, s:I, s:o}", "dispatch_bytes",
                          DIFF(dispatch_bytes), "combine_bytes", DIFF(combine_bytes),
                          "cross_chip_dispatch_bytes", DIFF(cross_dispatch_bytes),
                          "cross_chip_combine_bytes", DIFF(cross_combine_bytes),
                          "all_to_all_bytes",
                          DIFF(cross_dispatch_bytes) + DIFF(cross_combine_bytes),
                          "padding_slots", DIFF(padding), "chip_imbalance",
                          golden_json_real(b->chip_imbalance - a->chip_imbalance));
    if (o && capacity)
        json_object_set_new(o, "dropped_pairs", json_integer(DIFF(dropped)));
    return o;
}
#undef DIFF

static json_t *delta_json(const golden_profile_layer *a, const golden_profile_layer *b,
                          bool capacity)
{
    uint64_t ta = 0, tb = 0;
    int E = a->experts > b->experts ? a->experts : b->experts, worst = 0;
    for (int e = 0; e < E; e++)
        ta += e < a->experts ? a->hits[e] : 0, tb += e < b->experts ? b->hits[e] : 0;
    double ds = 0;
    for (int e = 0; e < E && ta && tb; e++) {
        double d = (e < b->experts ? (double)b->hits[e] / (double)tb : 0) -
                   (e < a->experts ? (double)a->hits[e] / (double)ta : 0);
        if (fabs(d) > fabs(ds))
            ds = d, worst = e;
    }
    json_t *o = json_pack("{s:i, s:o, s:I, s:o, s:o, s:o, s:i}", "layer", a->layer, "max_mean_load",
                     golden_json_real(b->max_mean - a->max_mean), "empty_experts",
                     (json_int_t)b->empty - (json_int_t)a->empty, "topk_mass_mean",
                     golden_json_real(b->mass_mean - a->mass_mean), "margin_mean",
                     golden_json_real(b->margin_mean - a->margin_mean), "max_share_change",
                     golden_json_real(ds), "max_share_change_expert", worst);
    if (o && a->placed && b->placed)
        json_object_set_new(o, "placement", placed_delta_json(a->placed, b->placed, capacity));
    return o;
}

static json_t *setup_json(const golden_profile_setup *s)
{
    json_t *tok = s->token_chip < 0 ? json_string("split") : json_pack("{s:i}", "chip", s->token_chip);
    json_t *o = json_pack("{s:s, s:i, s:o, s:I, s:I}", "file", s->file, "chips", s->chips, "tokens",
                          tok ? tok : json_null(), "bytes_per_token", (json_int_t)s->bytes_per_token,
                          "combine_bytes_per_token", (json_int_t)s->combine_bytes_per_token);
    if (o && (s->multiple || s->capacity)) {
        json_t *pad = json_object();
        if (pad && s->multiple)
            json_object_set_new(pad, "multiple", json_integer((json_int_t)s->multiple));
        if (pad && s->capacity)
            json_object_set_new(pad, "capacity", json_integer((json_int_t)s->capacity));
        json_object_set_new(o, "padding", pad ? pad : json_object());
    }
    return o;
}

json_t *golden_profile_json(const golden_profile *a, const golden_profile *b)
{
    json_t *o = json_pack("{s:s, s:s}", "schema", "calculet-routing-profile/v1", "golden",
                          a->path);
    if (o && a->placement.file)
        json_object_set_new(o, "placement", setup_json(&a->placement));
    if (o)
        json_object_set_new(o, "layers", layers_json(a));
    if (!o || !b)
        return o;
    json_t *d = json_array();
    for (size_t i = 0; d && i < a->n; i++)
        for (size_t j = 0; j < b->n; j++)
            if (b->layers[j].layer == a->layers[i].layer)
                json_array_append_new(d, delta_json(&a->layers[i], &b->layers[j],
                                                    a->placement.capacity > 0));
    json_object_set_new(o, "candidate", json_string(b->path));
    json_object_set_new(o, "candidate_layers", layers_json(b));
    json_object_set_new(o, "deltas", d ? d : json_array());
    return o;
}
