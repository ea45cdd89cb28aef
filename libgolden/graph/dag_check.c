/* dag-check's engine, its entry point: the check (happens-before, races, memory plan), the
 * result and its queries, names, and the small sets the other parts share. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph/dag_internal.h"

/* ---- small helpers ---- */

static uint64_t mix64(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ULL;
    return x ^ (x >> 33);
}

/* Insert key (never UINT64_MAX); 1 = was new, 0 = present, -1 = no memory. */
int dag_set_add(u64set *s, uint64_t key)
{
    if ((s->n + 1) * 2 > s->cap) {
        size_t nc = s->cap ? s->cap * 2 : 256;
        uint64_t *nk = malloc(nc * sizeof *nk);
        if (!nk)
            return -1;
        memset(nk, 0xff, nc * sizeof *nk);
        for (size_t i = 0; i < s->cap; i++)
            if (s->keys[i] != UINT64_MAX) {
                size_t j = mix64(s->keys[i]) & (nc - 1);
                while (nk[j] != UINT64_MAX)
                    j = (j + 1) & (nc - 1);
                nk[j] = s->keys[i];
            }
        free(s->keys);
        s->keys = nk;
        s->cap = nc;
    }
    size_t j = mix64(key) & (s->cap - 1);
    while (s->keys[j] != UINT64_MAX) {
        if (s->keys[j] == key)
            return 0;
        j = (j + 1) & (s->cap - 1);
    }
    s->keys[j] = key;
    s->n++;
    return 1;
}

const char *golden_race_kind_name(golden_race_kind k)
{
    return k == GOLDEN_RACE_RAW ? "RAW" : k == GOLDEN_RACE_WAR ? "WAR" : "WAW";
}

const char *golden_sync_kind_name(golden_sync_kind k)
{
    return k == GOLDEN_SYNC_WAIT ? "wait" : k == GOLDEN_SYNC_BARRIER ? "barrier" : "after";
}

void golden_sync_name(const golden_graph *g, const golden_sync *s, char *buf, size_t n)
{
    if (s->kind == GOLDEN_SYNC_AFTER)
        snprintf(buf, n, "%s:after:%s", g->ops[s->op].id, g->ops[g->after[s->after]].id);
    else
        snprintf(buf, n, "%s", g->ops[s->op].id);
}


void dag_wit_add(witness_set *w, uint32_t a, uint32_t b, bool le)
{
    if (a == b)
        return;
    int r = dag_set_add(&w->seen, (((uint64_t)a << 32) | b) ^ (le ? 0x8000000000000000ULL : 0));
    if (r <= 0) {
        w->oom |= r < 0;
        return;
    }
    if (w->n == w->cap) {
        size_t nc = w->cap ? w->cap * 2 : 1024;
        uint32_t *na = realloc(w->a, nc * sizeof *na);
        if (na)
            w->a = na;
        uint32_t *nb = realloc(w->b, nc * sizeof *nb);
        if (nb)
            w->b = nb;
        uint8_t *nl = realloc(w->le, nc);
        if (nl)
            w->le = nl;
        if (!na || !nb || !nl) {
            w->oom = 1;
            return;
        }
        w->cap = nc;
    }
    w->a[w->n] = a;
    w->b[w->n] = b;
    w->le[w->n++] = le;
}

void dag_wit_free(witness_set *w)
{
    free(w->seen.keys);
    free(w->a);
    free(w->b);
    free(w->le);
}

/* ---- the check ---- */
int golden_dag_check(const golden_graph *g, const golden_hb_drop *drop, bool all,
                     golden_dag_result *r, golden_error *err)
{
    memset(r, 0, sizeof *r);
    r->g = g;
    r->all = all;
    if (!(r->hb = calloc(1, sizeof *r->hb)))
        return golden_fail_what(err, GOLDEN_ENOMEM, g->name, "out of memory");
    if (lg_hb_build(g, drop, r->hb, err) != 0) {
        free(r->hb);
        r->hb = NULL;
        return GOLDEN_ERR;
    }
    r->cyclic = r->hb->norder < g->nops;
    if (r->cyclic)
        return GOLDEN_OK; /* clocks are incomplete: a deadlock is the finding */
    race_acc ra = {.g = g, .h = r->hb};
    int rc = all ? dag_sweep_all_pairs(&ra) : dag_sweep_races(&ra);
    free(ra.seen.keys);
    if (rc != 0) {
        free(ra.v);
        golden_dag_result_free(r);
        return golden_fail_what(err, GOLDEN_ENOMEM, g->name, "out of memory in the race sweep");
    }
    if (ra.n > 1)
        qsort_r(ra.v, ra.n, sizeof *ra.v, dag_cmp_race, (void *)g);
    r->races = ra.v;
    r->nraces = ra.n;
    if (dag_check_live_ranges(g, r->hb, err) != 0) {
        golden_dag_result_free(r);
        return GOLDEN_ERR;
    }
    if ((all || dag_has_inplace(g) ? dag_aliases_all_pairs(r, true, NULL) : dag_check_aliases(r, NULL)) != 0) {
        golden_dag_result_free(r);
        return golden_fail_what(err, GOLDEN_ENOMEM, g->name, "out of memory in the memory-plan check");
    }
    return GOLDEN_OK;
}

void golden_dag_result_free(golden_dag_result *r)
{
    if (!r)
        return;
    if (r->hb)
        lg_hb_free(r->hb);
    free(r->hb);
    for (size_t i = 0; i < r->nraces; i++)
        free(r->races[i].exposed_by);
    free(r->races);
    free(r->aliases);
    free(r->idle);
    free(r->removed);
    free(r->moved);
    for (size_t i = 0; i < r->nadded; i++)
        free(r->added[i]);
    free(r->added);
    memset(r, 0, sizeof *r);
}

bool golden_dag_before(const golden_dag_result *r, uint32_t a, uint32_t b)
{
    return r->hb && r->hb->clock && a < r->hb->nnodes && b < r->hb->nnodes &&
           golden_hb_before(r->hb, a, b);
}

const uint32_t *golden_dag_cycle(const golden_dag_result *r, size_t *n)
{
    size_t k = r->hb && r->cyclic ? r->hb->ncycle : 0;
    if (n)
        *n = k;
    return k ? r->hb->cycle : NULL;
}

bool golden_dag_passed(const golden_dag_result *r)
{
    if (r->cyclic)
        return false;
    if (r->compared)
        return r->new_races == 0 && r->new_aliases == 0;
    return r->nraces == 0 && r->naliases == 0;
}

uint32_t dag_queue_index_of(const golden_graph *g, uint32_t q, uint32_t op);

uint32_t golden_dag_fix_signal(const golden_dag_result *r, uint32_t a, uint32_t b)
{
    const golden_graph *g = r->g;
    uint32_t q = g->ops[a].queue;
    if (q == GOLDEN_NONE || r->cyclic)
        return GOLDEN_NONE;
    /* from the op after a on its queue (qops holds barriers too) */
    for (uint32_t p = dag_queue_index_of(g, q, a) + 1; p < g->qops_count[q]; p++) {
        uint32_t s = g->qops[g->qops_first[q] + p];
        if (g->ops[s].kind != GOLDEN_OP_SIGNAL)
            continue;
        /* a later signal comes after this one, so only the first can qualify */
        return golden_hb_le(r->hb, b, s) ? GOLDEN_NONE : s;
    }
    return GOLDEN_NONE;
}

