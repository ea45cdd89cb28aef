/* npu-replay profile --placement: where experts and tokens live (calculet-expert-placement/v1),
 * checked against a golden, and each layer's dispatch, all-to-all, padding and chip load. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "golden/doc.h"
#include "golden/profile.h"
#include "golden/schema.h"
#include "golden/store.h"
#include "golden/parse.h"
#include "replay/profile_priv.h"

struct golden_placement {
    golden_doc *doc;
    char *path;
    const json_t *experts, *layers; /* borrowed from doc; layers may be NULL */
    golden_profile_setup setup;
};

static uint64_t dtype_bytes(const char *dt)
{
    if (strcmp(dt, "f32") == 0)
        return 4;
    if (strcmp(dt, "bf16") == 0 || strcmp(dt, "f16") == 0)
        return 2;
    return 1; /* fp8_e4m3fn, fp8_e5m2, int8: the schema allows nothing else */
}

/* The schema said the shape; read the values (the tokens chip is checked against chips). */
static int setup_from(golden_placement *pl, golden_error *err)
{
    const json_t *root = golden_doc_root(pl->doc), *tok = json_object_get(root, "tokens"),
                 *pad = json_object_get(root, "padding"),
                 *cdt = json_object_get(root, "combine_dtype");
    golden_profile_setup *s = &pl->setup;
    *s = (golden_profile_setup)GOLDEN_PROFILE_SETUP_INIT;
    s->chips = (int)json_integer_value(json_object_get(root, "chips"));
    uint64_t hidden = (uint64_t)json_integer_value(json_object_get(root, "hidden_size"));
    const char *dt = json_string_value(json_object_get(root, "dtype"));
    s->bytes_per_token = hidden * dtype_bytes(dt);
    s->combine_bytes_per_token = hidden * dtype_bytes(cdt ? json_string_value(cdt) : dt);
    s->token_chip = -1;
    if (json_is_object(tok)) {
        json_int_t c = json_integer_value(json_object_get(tok, "chip"));
        if (c >= s->chips) {
            char where[1200];
            golden_doc_child_where(pl->doc, tok, "chip", 0, where, sizeof where);
            return golden_fail_what(err, GOLDEN_EINVAL, where, "tokens on chip %lld: no such chip "
                                    "(chips is %d: 0 to %d)", (long long)c, s->chips, s->chips - 1);
        }
        s->token_chip = (int)c;
    }
    s->multiple = pad ? json_integer_value(json_object_get(pad, "multiple")) : 0;
    s->capacity = pad ? json_integer_value(json_object_get(pad, "capacity")) : 0;
    pl->experts = json_object_get(root, "experts");
    pl->layers = json_object_get(root, "layers");
    return 0;
}

int golden_placement_load(const char *path, golden_placement **out, golden_error *err)
{
    *out = NULL;
    golden_placement *pl = calloc(1, sizeof *pl);
    golden_schema *schema = NULL;
    if (!pl || !(pl->path = strdup(path))) {
        free(pl);
        return golden_fail_what(err, GOLDEN_ENOMEM, path, "out of memory");
    }
    int rc = golden_doc_load_file(path, &pl->doc, err);
    if (rc == 0)
        rc = golden_schema_load("calculet-expert-placement/v1", &schema, err);
    if (rc == 0)
        rc = golden_schema_check(schema, pl->doc, err);
    golden_schema_free(schema);
    if (rc == 0)
        rc = setup_from(pl, err);
    if (rc) {
        golden_placement_free(pl);
        return GOLDEN_ERR;
    }
    *out = pl;
    return 0;
}

void golden_placement_free(golden_placement *pl)
{
    if (!pl)
        return;
    golden_doc_free(pl->doc);
    free(pl->path);
    free(pl);
}

/* The placement node of layer l: its override under `layers`, else `experts`. */
static const json_t *node_of(const golden_placement *pl, int l)
{
    char key[16];
    snprintf(key, sizeof key, "%d", l);
    const json_t *n = pl->layers ? json_object_get(pl->layers, key) : NULL;
    return n ? n : pl->experts;
}

/* owner[e] = the chip holding expert e (E of them) from a chip-list node; every placement error
 * is named with the file and line:col. Returns 0 or GOLDEN_ERR. */
static int owners(const golden_placement *pl, const json_t *node, int layer, int E, int *owner,
                  const char *golden, golden_error *err)
{
    char where[1200];
    int C = pl->setup.chips;
    if ((int)json_array_size(node) != C) {
        golden_doc_where(pl->doc, node, where, sizeof where);
        return golden_fail_what(err, GOLDEN_EINVAL, where, "%zu expert lists, chips is %d (one "
                                "list a chip)", json_array_size(node), C);
    }
    for (int e = 0; e < E; e++)
        owner[e] = -1;
    for (int c = 0; c < C; c++) {
        const json_t *list = json_array_get(node, (size_t)c);
        for (size_t i = 0; i < json_array_size(list); i++) {
            json_int_t e = json_integer_value(json_array_get(list, i));
            golden_doc_child_where(pl->doc, list, NULL, i, where, sizeof where);
            if (e >= E)
                return golden_fail_what(err, GOLDEN_EINVAL, where,
                                        "expert %lld is out of range: layer %d of %s has %d "
                                        "experts", (long long)e, layer, golden, E);
            if (owner[e] >= 0)
                return golden_fail_what(err, GOLDEN_EINVAL, where,
                                        "expert %lld is on chip %d and chip %d (only "
                                        "'replicated' puts an expert on several chips)",
                                        (long long)e, owner[e], c);
            owner[e] = c;
        }
    }
    for (int e = 0; e < E; e++)
        if (owner[e] < 0) {
            golden_doc_where(pl->doc, node, where, sizeof where);
            return golden_fail_what(err, GOLDEN_EINVAL, where,
                                    "expert %d of layer %d (%s has %d) is on no chip", e, layer,
                                    golden, E);
        }
    return 0;
}

/* Every `layers` key must be a layer of the golden. */
static int layers_known(const golden_placement *pl, const golden_profile *p, const char *golden,
                        golden_error *err)
{
    const char *key;
    json_t *v;
    json_object_foreach((json_t *)pl->layers, key, v) {
        int64_t l = -1;
        if (golden_parse_int(key, 0, INT32_MAX, &l) != GOLDEN_PARSE_OK) {
            char where[1200];
            golden_doc_where(pl->doc, v, where, sizeof where);
            return golden_fail_what(err, GOLDEN_EINVAL, where,
                                    "layer key \"%.40s\" is not a layer number", key);
        }
        bool found = false;
        for (size_t i = 0; i < p->n; i++)
            found |= p->layers[i].layer == l;
        if (!found) {
            char where[1200];
            golden_doc_where(pl->doc, v, where, sizeof where);
            return golden_fail_what(err, GOLDEN_EINVAL, where,
                                    "layer %lld has no router taps in %s", (long long)l,
                                    golden);
        }
    }
    return 0;
}

/* One layer's working state while its cases are read. */
typedef struct {
    golden_profile_placed *pl;
    const golden_profile_setup *s;
    int E, *owner;       /* owner NULL: replicated */
    uint64_t *count;     /* [chips x E] replicated, [E] otherwise: pairs of the current case */
    uint64_t *stamp;     /* [chips]: the token that last counted a chip for the fault domain */
    uint64_t token_seq;  /* tokens seen so far (the stamps' clock) */
} placer;

/* The launches of one case: keep at most capacity, pad up to the multiple; then clear. */
static void close_case(placer *z)
{
    size_t n = (size_t)z->E * (z->owner ? 1 : (size_t)z->s->chips);
    uint64_t cap = (uint64_t)z->s->capacity, m = (uint64_t)z->s->multiple;
    for (size_t i = 0; i < n; i++) {
        if (!z->count[i])
            continue;
        uint64_t kept = cap && z->count[i] > cap ? cap : z->count[i];
        uint64_t slots = m ? (kept + m - 1) / m * m : kept;
        int b = golden_profile_bucket(kept);
        z->pl->launches++;
        z->pl->slots += slots;
        z->pl->padding += slots - kept;
        z->pl->bucket_launches[b]++;
        z->pl->bucket_padding[b] += slots - kept;
        z->count[i] = 0;
    }
}

/* One case's ids [T, K], in token order (the order capacity keeps them in). */
static void place_case(placer *z, const int32_t *ids, uint64_t T, int K)
{
    const golden_profile_setup *s = z->s;
    golden_profile_placed *pl = z->pl;
    uint64_t C = (uint64_t)s->chips, block = T ? (T + C - 1) / C : 1;
    for (uint64_t t = 0; t < T; t++) {
        uint64_t me = ++z->token_seq;
        int home = s->token_chip >= 0 ? s->token_chip : (int)(t / block);
        for (int r = 0; r < K; r++) {
            int e = ids[t * (uint64_t)K + (uint64_t)r];
            int serve = z->owner ? z->owner[e] : home;
            uint64_t *n = &z->count[z->owner ? (size_t)e : (size_t)serve * (size_t)z->E + (size_t)e];
            bool kept = !s->capacity || *n < (uint64_t)s->capacity;
            ++*n;
            pl->pairs++;
            pl->chip_load[serve]++;
            if (z->stamp[serve] != me) {
                z->stamp[serve] = me;
                pl->chip_tokens[serve]++;
            }
            if (!kept) {
                pl->dropped++;
                continue;
            }
            pl->kept++;
            pl->dispatch_bytes += s->bytes_per_token;
            pl->combine_bytes += s->combine_bytes_per_token;
            if (serve != home) {
                pl->cross_dispatch_bytes += s->bytes_per_token;
                pl->cross_combine_bytes += s->combine_bytes_per_token;
            }
        }
    }
    close_case(z);
}

/* Read every case's router ids of layer L again and place them. */
static int place_layer(golden_reader *r, golden_profile_layer *L, placer *z, golden_error *err)
{
    for (size_t i = 0; i < golden_reader_count(r); i++) {
        const golden_tensor_info *t = golden_reader_tensor(r, i);
        size_t n = strlen(t->name);
        const char *lay = strstr(t->name, "layers/");
        int64_t l;
        if (n < 16 || strcmp(t->name + n - 16, "/router/topk_ids") != 0 || !lay ||
            !lg_router_layer(lay, &l) || l != L->layer)
            continue;
        uint64_t T = t->shape[0];
        int K = (int)t->shape[1];
        int32_t *ids = malloc((size_t)(T * (uint64_t)K) * 4 + 4);
        if (!ids)
            return golden_fail_what(err, GOLDEN_ENOMEM, "profile", "out of memory");
        int rc = golden_reader_read(r, i, 0, T * (uint64_t)K, ids, err);
        if (rc == 0)
            place_case(z, ids, T, K); /* ids were range-checked by the first pass */
        free(ids);
        if (rc)
            return GOLDEN_ERR;
    }
    return 0;
}

static void finish_layer(golden_profile_placed *pl, int C)
{
    uint64_t mx = 0;
    for (int c = 0; c < C; c++)
        mx = pl->chip_load[c] > mx ? pl->chip_load[c] : mx;
    pl->chip_imbalance = pl->pairs ? (double)mx * C / (double)pl->pairs : 0;
}

/* Check the layer's placement node and compute its figures. */
static int one_layer(golden_reader *r, const golden_placement *pl, golden_profile_layer *L,
                     const char *golden, golden_error *err)
{
    int C = pl->setup.chips, E = L->experts;
    const json_t *node = node_of(pl, L->layer);
    bool repl = json_is_string(node);
    golden_profile_placed *P = calloc(1, sizeof *P);
    placer z = {P, &pl->setup, E, NULL, NULL, NULL, 0};
    if (P) {
        P->chip_load = calloc((size_t)C, sizeof *P->chip_load);
        P->chip_experts = calloc((size_t)C, sizeof *P->chip_experts);
        P->chip_tokens = calloc((size_t)C, sizeof *P->chip_tokens);
    }
    z.owner = repl ? NULL : malloc((size_t)E * sizeof *z.owner + 1);
    z.count = calloc((size_t)E * (repl ? (size_t)C : 1), sizeof *z.count);
    z.stamp = calloc((size_t)C, sizeof *z.stamp);
    L->placed = P;
    int rc = 0;
    if (!P || !P->chip_load || !P->chip_experts || !P->chip_tokens || (!repl && !z.owner) ||
        !z.count || !z.stamp)
        rc = golden_fail_what(err, GOLDEN_ENOMEM, "profile", "out of memory");
    if (rc == 0 && !repl)
        rc = owners(pl, node, L->layer, E, z.owner, golden, err);
    for (int c = 0; rc == 0 && c < C; c++)
        P->chip_experts[c] = repl ? (uint64_t)E : 0;
    for (int e = 0; rc == 0 && !repl && e < E; e++)
        P->chip_experts[z.owner[e]]++;
    if (rc == 0)
        rc = place_layer(r, L, &z, err);
    if (rc == 0)
        finish_layer(P, C);
    free(z.owner), free(z.count), free(z.stamp);
    return rc;
}

int golden_profile_place(const char *golden, const golden_placement *pl, golden_profile *p,
                         golden_error *err)
{
    if (pl->layers && layers_known(pl, p, golden, err))
        return GOLDEN_ERR;
    golden_reader *r = NULL;
    if (golden_reader_open_flags(golden, GOLDEN_READ_DATA_ONLY, &r, err))
        return GOLDEN_ERR;
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < p->n; i++)
        rc = one_layer(r, pl, &p->layers[i], golden, err);
    golden_reader_close(r);
    if (rc == 0) {
        p->placement = pl->setup;
        p->placement.file = strdup(pl->path);
        if (!p->placement.file)
            rc = golden_fail_what(err, GOLDEN_ENOMEM, "profile", "out of memory");
    }
    return rc;
}
