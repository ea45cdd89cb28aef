/* Barrier removal across two compiled graphs (--baseline): removed, moved and added syncs, and
 * the races and aliases the candidate has that the baseline did not. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph/dag_internal.h"
#include "util/strmap.h"

/* ---- baseline comparison ---- */
uint32_t dag_queue_index_of(const golden_graph *g, uint32_t q, uint32_t op)
{
    const uint32_t *v = g->qops + g->qops_first[q];
    uint32_t lo = 0, hi = g->qops_count[q];
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (v[mid] < op)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* The nearest compute op before (dir < 0) or after the op on queue q, or GOLDEN_NONE. */
static const char *neighbour(const golden_graph *g, uint32_t q, uint32_t op, int dir)
{
    uint32_t at = dag_queue_index_of(g, q, op);
    const uint32_t *v = g->qops + g->qops_first[q];
    for (int64_t p = (int64_t)at + dir; p >= 0 && p < (int64_t)g->qops_count[q]; p += dir)
        if (g->ops[v[p]].kind == GOLDEN_OP_COMPUTE)
            return g->ops[v[p]].id;
    return "";
}

static bool same_place(const golden_graph *b, uint32_t bq, uint32_t bop, const golden_graph *c,
                       uint32_t cq, uint32_t cop)
{
    return strcmp(b->queues[bq].id, c->queues[cq].id) == 0 &&
           strcmp(neighbour(b, bq, bop, -1), neighbour(c, cq, cop, -1)) == 0 &&
           strcmp(neighbour(b, bq, bop, 1), neighbour(c, cq, cop, 1)) == 0;
}

/* 0 = same, 1 = moved, 2 = removed (absent from the candidate). */
static int sync_fate(const golden_graph *b, const golden_sync *s, const golden_graph *c)
{
    const golden_op *bo = &b->ops[s->op];
    uint32_t co = golden_graph_find_op(c, bo->id);
    if (co == GOLDEN_NONE)
        return 2;
    const golden_op *cop = &c->ops[co];
    if (s->kind == GOLDEN_SYNC_AFTER) {
        const char *pred = b->ops[b->after[s->after]].id;
        for (uint32_t m = 0; m < cop->after_count; m++)
            if (strcmp(c->ops[c->after[cop->after_first + m]].id, pred) == 0)
                return 0;
        return 2;
    }
    if (cop->kind != bo->kind)
        return 2;
    if (s->kind == GOLDEN_SYNC_WAIT) {
        if (strcmp(b->ops[b->events[bo->event].signal].id, c->ops[c->events[cop->event].signal].id))
            return 1;
        return same_place(b, bo->queue, s->op, c, cop->queue, co) ? 0 : 1;
    }
    if (bo->bq_count != cop->bq_count)
        return 1;
    for (uint32_t i = 0; i < bo->bq_count; i++) {
        uint32_t bq = b->barrier_queues[bo->bq_first + i];
        uint32_t cq = golden_graph_find_queue(c, b->queues[bq].id);
        bool listed = false;
        for (uint32_t j = 0; j < cop->bq_count && !listed; j++)
            listed = c->barrier_queues[cop->bq_first + j] == cq;
        if (!listed || !same_place(b, bq, s->op, c, cq, co))
            return 1;
    }
    return 0;
}

static bool conflict_in(const golden_graph *g, uint32_t x, uint32_t y)
{
    const golden_op *X = &g->ops[x], *Y = &g->ops[y];
    for (uint32_t i = 0; i < X->acc_count; i++)
        for (uint32_t j = 0; j < Y->acc_count; j++) {
            const golden_access *a = &g->accesses[X->acc_first + i];
            const golden_access *b = &g->accesses[Y->acc_first + j];
            if ((a->write || b->write) &&
                g->buffers[a->buffer].domain == g->buffers[b->buffer].domain && a->lo < b->hi &&
                b->lo < a->hi)
                return true;
        }
    return false;
}

int golden_dag_compare(const golden_dag_result *base, golden_dag_result *cand, golden_error *err)
{
    const golden_graph *b = base->g, *c = cand->g;
    if (base->cyclic)
        return golden_fail_what(err, GOLDEN_EINVAL, b->name, "the baseline has a cycle; it cannot be compared");
    golden_sync *bs = NULL, *cs = NULL;
    size_t nb = 0, nc = 0;
    if (dag_list_syncs(b, &bs, &nb) != 0 || dag_list_syncs(c, &cs, &nc) != 0) {
        free(bs);
        return golden_fail_what(err, GOLDEN_ENOMEM, c->name, "out of memory");
    }
    cand->compared = true;
    cand->base_g = b;
    cand->base_races = base->nraces;
    cand->removed = malloc((nb ? nb : 1) * sizeof *cand->removed);
    cand->moved = malloc((nb ? nb : 1) * sizeof *cand->moved);
    cand->added = calloc(nc ? nc : 1, sizeof *cand->added);
    golden_sync *gone = malloc((nb ? nb : 1) * sizeof *gone);
    int rc = GOLDEN_OK;
    size_t ngone = 0;
    if (!cand->removed || !cand->moved || !cand->added || !gone) {
        rc = golden_fail_what(err, GOLDEN_ENOMEM, c->name, "out of memory");
        goto done;
    }
    for (size_t i = 0; i < nb; i++) {
        int f = sync_fate(b, &bs[i], c);
        if (f == 2)
            cand->removed[cand->nremoved++] = bs[i];
        else if (f == 1)
            cand->moved[cand->nmoved++] = bs[i];
        if (f)
            gone[ngone++] = bs[i];
    }
    for (size_t i = 0; i < nc; i++) {
        /* a candidate sync is new when the baseline has nothing to match it */
        const golden_op *co = &c->ops[cs[i].op];
        uint32_t bo = golden_graph_find_op(b, co->id);
        bool found = false;
        if (bo != GOLDEN_NONE && cs[i].kind != GOLDEN_SYNC_AFTER)
            found = b->ops[bo].kind == co->kind;
        else if (bo != GOLDEN_NONE) {
            const char *pred = c->ops[c->after[cs[i].after]].id;
            for (uint32_t m = 0; m < b->ops[bo].after_count && !found; m++)
                found = strcmp(b->ops[b->after[b->ops[bo].after_first + m]].id, pred) == 0;
        }
        if (found)
            continue;
        char name[1024];
        golden_sync_name(c, &cs[i], name, sizeof name);
        if (!(cand->added[cand->nadded] = strdup(name))) {
            rc = golden_fail_what(err, GOLDEN_ENOMEM, c->name, "out of memory");
            goto done;
        }
        cand->nadded++;
    }
    for (size_t i = 0; i < cand->nraces; i++) {
        golden_race *x = &cand->races[i];
        uint32_t ia = golden_graph_find_op(b, c->ops[c->accesses[x->a].op].id);
        uint32_t ib = golden_graph_find_op(b, c->ops[c->accesses[x->b].op].id);
        bool old = ia != GOLDEN_NONE && ib != GOLDEN_NONE &&
                   !golden_hb_ordered(base->hb, ia, ib) && conflict_in(b, ia, ib);
        if (old)
            continue;
        x->is_new = true;
        cand->new_races++;
        if (ia != GOLDEN_NONE && ib != GOLDEN_NONE && golden_hb_ordered(base->hb, ia, ib)) {
            bool ab = golden_hb_before(base->hb, ia, ib);
            if (dag_set_exposed(x, b, base->hb, gone, ngone, ab ? ia : ib, ab ? ib : ia) != 0) {
                rc = golden_fail_what(err, GOLDEN_ENOMEM, c->name, "out of memory");
                goto done;
            }
        }
    }
    if (dag_mark_new_aliases(base, cand) != 0)
        rc = golden_fail_what(err, GOLDEN_ENOMEM, c->name, "out of memory");
done:
    free(bs);
    free(cs);
    free(gone);
    return rc;
}

