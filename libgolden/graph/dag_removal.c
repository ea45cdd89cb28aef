/* Syncs (waits, barriers, `after` entries): listing, parsing, and verifying that removing a set
 * adds no race and no alias (new pairs named with the syncs that used to order them). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph/dag_internal.h"
#include "util/strmap.h"

/* ---- syncs ---- */
int dag_list_syncs(const golden_graph *g, golden_sync **out, size_t *n)
{
    size_t cnt = g->nafter;
    for (uint32_t i = 0; i < g->nops; i++)
        if (g->ops[i].kind == GOLDEN_OP_WAIT || g->ops[i].kind == GOLDEN_OP_BARRIER)
            cnt++;
    golden_sync *v = malloc((cnt ? cnt : 1) * sizeof *v);
    if (!v)
        return -1;
    size_t k = 0;
    for (uint32_t i = 0; i < g->nops; i++) {
        const golden_op *op = &g->ops[i];
        if (op->kind == GOLDEN_OP_WAIT)
            v[k++] = (golden_sync){GOLDEN_SYNC_WAIT, i, GOLDEN_NONE};
        else if (op->kind == GOLDEN_OP_BARRIER)
            v[k++] = (golden_sync){GOLDEN_SYNC_BARRIER, i, GOLDEN_NONE};
        for (uint32_t m = 0; m < op->after_count; m++)
            v[k++] = (golden_sync){GOLDEN_SYNC_AFTER, i, op->after_first + m};
    }
    *out = v;
    *n = k;
    return 0;
}

int golden_dag_parse_syncs(const golden_graph *g, const char *list, golden_sync **out,
                           size_t *n, golden_error *err)
{
    *out = NULL;
    *n = 0;
    char *copy = strdup(list);
    if (!copy)
        return golden_fail_what(err, GOLDEN_ENOMEM, "--remove", "out of memory");
    size_t cap = 1;
    for (const char *p = list; *p; p++)
        cap += *p == ',';
    golden_sync *v = malloc(cap * sizeof *v);
    if (!v) {
        free(copy);
        return golden_fail_what(err, GOLDEN_ENOMEM, "--remove", "out of memory");
    }
    size_t k = 0;
    char *save = NULL;
    for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        char *sep = strstr(tok, ":after:");
        golden_sync s = {GOLDEN_SYNC_WAIT, GOLDEN_NONE, GOLDEN_NONE};
        if (sep) {
            *sep = '\0';
            uint32_t op = golden_graph_find_op(g, tok), pred = golden_graph_find_op(g, sep + 7);
            if (op != GOLDEN_NONE && pred != GOLDEN_NONE)
                for (uint32_t m = 0; m < g->ops[op].after_count; m++)
                    if (g->after[g->ops[op].after_first + m] == pred) {
                        s = (golden_sync){GOLDEN_SYNC_AFTER, op, g->ops[op].after_first + m};
                        break;
                    }
            if (s.op == GOLDEN_NONE) {
                golden_fail_where(err, GOLDEN_EINVAL, "no such after edge in the graph", "--remove %s:after:%s", tok,
                             sep + 7);
                free(copy);
                free(v);
                return GOLDEN_ERR;
            }
        } else {
            uint32_t op = golden_graph_find_op(g, tok);
            if (op == GOLDEN_NONE || (g->ops[op].kind != GOLDEN_OP_WAIT &&
                                      g->ops[op].kind != GOLDEN_OP_BARRIER)) {
                golden_fail_where(err, GOLDEN_EINVAL, op == GOLDEN_NONE ? "no such op in the graph"
                                                    : "not a wait or a barrier (name an after "
                                                      "edge as OP:after:PRED)",
                             "--remove %s", tok);
                free(copy);
                free(v);
                return GOLDEN_ERR;
            }
            s.op = op;
            s.kind = g->ops[op].kind == GOLDEN_OP_WAIT ? GOLDEN_SYNC_WAIT : GOLDEN_SYNC_BARRIER;
        }
        v[k++] = s;
    }
    free(copy);
    if (!k) {
        free(v);
        return golden_fail_what(err, GOLDEN_EINVAL, "--remove", "no sync named");
    }
    *out = v;
    *n = k;
    return GOLDEN_OK;
}

/* Is the sync on a path x -> ... -> y in h? */
static bool on_path(const golden_graph *g, const golden_hb *h, const golden_sync *s, uint32_t x,
                    uint32_t y)
{
    switch (s->kind) {
    case GOLDEN_SYNC_WAIT:
        return golden_hb_le(h, x, g->events[g->ops[s->op].event].signal) &&
               golden_hb_le(h, s->op, y);
    case GOLDEN_SYNC_BARRIER:
        return golden_hb_le(h, x, s->op) && golden_hb_le(h, s->op, y);
    default:
        return golden_hb_le(h, x, g->after[s->after]) && golden_hb_le(h, s->op, y);
    }
}

int dag_set_exposed(golden_race *rc, const golden_graph *g, const golden_hb *h,
                       const golden_sync *set, size_t n, uint32_t x, uint32_t y)
{
    for (size_t i = 0; i < n; i++) {
        if (!on_path(g, h, &set[i], x, y))
            continue;
        golden_sync *nv = realloc(rc->exposed_by, (rc->nexposed + 1) * sizeof *nv);
        if (!nv)
            return -1;
        rc->exposed_by = nv;
        nv[rc->nexposed++] = set[i];
    }
    return 0;
}

/* "idA\0idB" with the smaller id first: the pair's name in either graph. */
static char *pair_key(const golden_graph *g, const golden_alias *x, size_t *len)
{
    const char *a = g->buffers[x->a].id, *b = g->buffers[x->b].id;
    if (strcmp(a, b) > 0) {
        const char *t = a;
        a = b;
        b = t;
    }
    size_t na = strlen(a), nb = strlen(b);
    char *k = malloc(na + nb + 2);
    if (k) {
        memcpy(k, a, na + 1);
        memcpy(k + na + 1, b, nb + 1);
    }
    *len = na + 1 + nb;
    return k;
}

static bool aliases_complete(const golden_dag_result *r)
{
    return r->all || r->naliases == 0 || dag_has_inplace(r->g);
}

/* Mark cand's aliases that base does not have. Newness is decided over every aliasing pair of
 * both sides (as for races): with only the sweep's representatives, a new pair A/C could
 * hide behind old pairs A/B and B/C. */
int dag_mark_new_aliases(const golden_dag_result *base, golden_dag_result *cand)
{
    if (!aliases_complete(cand) || (base->naliases && !cand->all)) {
        free(cand->aliases);
        cand->aliases = NULL;
        cand->naliases = 0;
        if (dag_aliases_all_pairs(cand, true, NULL) != 0)
            return -1;
    }
    golden_dag_result full = *base;
    bool own = !aliases_complete(base);
    if (own) {
        full.aliases = NULL;
        full.naliases = 0;
        if (dag_aliases_all_pairs(&full, true, NULL) != 0)
            return -1;
    }
    golden_strmap seen = {0};
    char **keys = calloc(full.naliases + 1, sizeof *keys);
    int rc = keys ? 0 : -1;
    for (size_t i = 0; i < full.naliases && !rc; i++) {
        size_t len;
        if (!(keys[i] = pair_key(base->g, &full.aliases[i], &len)) ||
            lg_strmap_put(&seen, keys[i], len, 1, NULL) < 0)
            rc = -1;
    }
    cand->new_aliases = 0;
    for (size_t i = 0; i < cand->naliases && !rc; i++) {
        size_t len;
        char *k = pair_key(cand->g, &cand->aliases[i], &len);
        if (!k) {
            rc = -1;
            break;
        }
        cand->aliases[i].is_new = !lg_strmap_get(&seen, k, len, NULL);
        cand->new_aliases += cand->aliases[i].is_new;
        free(k);
    }
    lg_strmap_free(&seen);
    for (size_t i = 0; keys && i < full.naliases; i++)
        free(keys[i]);
    free(keys);
    if (own)
        free(full.aliases);
    return rc;
}

int golden_dag_verify_removal(golden_dag_result *base, const golden_sync *set, size_t n,
                              golden_dag_result *cand, golden_error *err)
{
    const golden_graph *g = base->g;
    if (base->cyclic)
        return golden_fail_what(err, GOLDEN_EINVAL, g->name, "the graph has a cycle; fix it before removing syncs");
    uint8_t *dop = calloc((size_t)g->nops + 1, 1), *daf = calloc((size_t)g->nafter + 1, 1);
    if (!dop || !daf) {
        free(dop);
        free(daf);
        return golden_fail_what(err, GOLDEN_ENOMEM, g->name, "out of memory");
    }
    for (size_t i = 0; i < n; i++) {
        if (set[i].kind == GOLDEN_SYNC_AFTER)
            daf[set[i].after] = 1;
        else
            dop[set[i].op] = 1;
    }
    golden_hb_drop drop = {dop, daf};
    /* a base with races needs every pair, or a new pair could hide behind an old one */
    int rc = golden_dag_check(g, &drop, base->all || base->nraces > 0 || base->naliases > 0,
                              cand, err);
    free(dop);
    free(daf);
    if (rc != 0)
        return rc;
    cand->compared = true;
    cand->base_g = g;
    cand->base_races = base->nraces;
    if (!(cand->removed = malloc(n * sizeof *cand->removed))) {
        golden_dag_result_free(cand);
        return golden_fail_what(err, GOLDEN_ENOMEM, g->name, "out of memory");
    }
    memcpy(cand->removed, set, n * sizeof *set);
    cand->nremoved = n;
    for (size_t i = 0; i < cand->nraces; i++) {
        golden_race *x = &cand->races[i];
        uint32_t a = g->accesses[x->a].op, b = g->accesses[x->b].op;
        if (!golden_hb_ordered(base->hb, a, b))
            continue;
        x->is_new = true;
        cand->new_races++;
        bool ab = golden_hb_before(base->hb, a, b);
        if (dag_set_exposed(x, g, base->hb, set, n, ab ? a : b, ab ? b : a) != 0) {
            golden_dag_result_free(cand);
            return golden_fail_what(err, GOLDEN_ENOMEM, g->name, "out of memory");
        }
    }
    if (dag_mark_new_aliases(base, cand) != 0) {
        golden_dag_result_free(cand);
        return golden_fail_what(err, GOLDEN_ENOMEM, g->name, "out of memory");
    }
    return GOLDEN_OK;
}

