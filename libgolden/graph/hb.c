/* Vector clocks for happens-before: every node gets, per queue, the last position on that queue
 * ordered before it, so "a before b" is one comparison (the way race detectors do it). */
#include "golden/hb.h"

#include <stdlib.h>
#include <string.h>

typedef struct {
    uint32_t src, dst, ref;
    uint8_t kind;
} raw_edge;

static int csr(uint32_t n, const raw_edge *e, size_t ne, bool forward, uint32_t **first,
               golden_hb_edge **out)
{
    uint32_t *f = calloc((size_t)n + 1, sizeof *f);
    golden_hb_edge *o = malloc((ne ? ne : 1) * sizeof *o);
    if (!f || !o) {
        free(f);
        free(o);
        return -1;
    }
    for (size_t i = 0; i < ne; i++)
        f[(forward ? e[i].src : e[i].dst) + 1]++;
    for (uint32_t i = 0; i < n; i++)
        f[i + 1] += f[i];
    uint32_t *fill = malloc(((size_t)n + 1) * sizeof *fill);
    if (!fill) {
        free(f);
        free(o);
        return -1;
    }
    memcpy(fill, f, ((size_t)n + 1) * sizeof *fill);
    for (size_t i = 0; i < ne; i++) {
        uint32_t at = forward ? e[i].src : e[i].dst;
        golden_hb_edge *x = &o[fill[at]++];
        x->node = forward ? e[i].dst : e[i].src;
        x->kind = e[i].kind;
        x->ref = e[i].ref;
    }
    free(fill);
    *first = f;
    *out = o;
    return 0;
}

/* Walk back along unprocessed predecessors until a node repeats: that loop is a cycle. */
static int find_cycle(golden_hb *h)
{
    uint32_t n = h->nnodes, start = GOLDEN_NONE;
    for (uint32_t i = 0; i < n && start == GOLDEN_NONE; i++)
        if (h->topo_index[i] == GOLDEN_NONE)
            start = i;
    if (start == GOLDEN_NONE)
        return 0;
    uint32_t *seen = calloc(n, sizeof *seen);
    uint32_t *path = malloc((size_t)n * sizeof *path);
    if (!seen || !path) {
        free(seen);
        free(path);
        return -1;
    }
    uint32_t len = 0, cur = start;
    while (!seen[cur]) {
        seen[cur] = len + 1;
        path[len++] = cur;
        uint32_t next = GOLDEN_NONE;
        for (uint32_t k = h->pred_first[cur]; k < h->pred_first[cur + 1]; k++)
            if (h->topo_index[h->pred[k].node] == GOLDEN_NONE) {
                next = h->pred[k].node;
                break;
            }
        if (next == GOLDEN_NONE) /* cannot happen: a leftover node keeps a leftover pred */
            break;
        cur = next;
    }
    uint32_t from = seen[cur] ? seen[cur] - 1 : 0;
    uint32_t m = len - from;
    h->cycle = malloc((size_t)m * sizeof *h->cycle);
    if (!h->cycle) {
        free(seen);
        free(path);
        return -1;
    }
    /* path runs backwards along edges; reverse it, then start at the lowest op index */
    uint32_t low = 0;
    for (uint32_t i = 0; i < m; i++) {
        h->cycle[i] = path[len - 1 - i];
        if (h->cycle[i] < h->cycle[low])
            low = i;
    }
    uint32_t *rot = malloc((size_t)m * sizeof *rot);
    if (!rot) {
        free(seen);
        free(path);
        return -1;
    }
    for (uint32_t i = 0; i < m; i++)
        rot[i] = h->cycle[(low + i) % m];
    free(h->cycle);
    h->cycle = rot;
    h->ncycle = m;
    free(seen);
    free(path);
    return 0;
}

int golden_hb_build(const golden_graph *g, const golden_hb_drop *drop, golden_hb *h,
                    golden_error *err)
{
    memset(h, 0, sizeof *h);
    uint32_t n = g->nops, K = g->nqueues;
    h->nnodes = n;
    h->K = K;
    size_t cap = (size_t)n + g->nbarrier_queues + g->nafter + n;
    raw_edge *e = malloc((cap ? cap : 1) * sizeof *e);
    uint32_t *last = malloc(((size_t)K + 1) * sizeof *last);
    uint32_t *cnt = calloc((size_t)K + 1, sizeof *cnt);
    uint32_t *bpos = malloc(((size_t)g->nbarrier_queues + 1) * sizeof *bpos);
    uint32_t *indeg = NULL;
    h->home_queue = malloc(((size_t)n + 1) * sizeof *h->home_queue);
    h->home_pos = malloc(((size_t)n + 1) * sizeof *h->home_pos);
    h->order = malloc(((size_t)n + 1) * sizeof *h->order);
    h->topo_index = malloc(((size_t)n + 1) * sizeof *h->topo_index);
    if (!e || !last || !cnt || !bpos || !h->home_queue || !h->home_pos || !h->order ||
        !h->topo_index)
        goto nomem;
    for (uint32_t q = 0; q < K; q++)
        last[q] = GOLDEN_NONE;
    size_t ne = 0;
    for (uint32_t i = 0; i < n; i++) {
        const golden_op *op = &g->ops[i];
        h->home_queue[i] = GOLDEN_NONE;
        h->home_pos[i] = 0;
        h->topo_index[i] = GOLDEN_NONE;
        bool dropped = drop && drop->drop_op && drop->drop_op[i];
        if (op->kind == GOLDEN_OP_BARRIER) {
            if (dropped)
                continue;
            for (uint32_t m = 0; m < op->bq_count; m++) {
                uint32_t q = g->barrier_queues[op->bq_first + m];
                bpos[op->bq_first + m] = ++cnt[q];
                if (last[q] != GOLDEN_NONE)
                    e[ne++] = (raw_edge){last[q], i, q, GOLDEN_EDGE_PROGRAM};
                last[q] = i;
            }
            h->home_queue[i] = g->barrier_queues[op->bq_first];
            h->home_pos[i] = bpos[op->bq_first];
        } else {
            uint32_t q = op->queue;
            h->home_queue[i] = q;
            h->home_pos[i] = ++cnt[q];
            if (last[q] != GOLDEN_NONE)
                e[ne++] = (raw_edge){last[q], i, q, GOLDEN_EDGE_PROGRAM};
            last[q] = i;
            if (op->kind == GOLDEN_OP_WAIT && !dropped)
                e[ne++] = (raw_edge){g->events[op->event].signal, i, op->event, GOLDEN_EDGE_SIGNAL};
        }
        for (uint32_t k = 0; k < op->after_count; k++) {
            uint32_t idx = op->after_first + k;
            if (drop && drop->drop_after && drop->drop_after[idx])
                continue;
            e[ne++] = (raw_edge){g->after[idx], i, idx, GOLDEN_EDGE_AFTER};
        }
    }
    if (csr(n, e, ne, true, &h->succ_first, &h->succ) != 0 ||
        csr(n, e, ne, false, &h->pred_first, &h->pred) != 0)
        goto nomem;
    free(e);
    e = NULL;

    size_t cells = (size_t)n * K;
    if (K && cells / K != n)
        goto nomem;
    h->clock = calloc(cells ? cells : 1, sizeof *h->clock);
    indeg = malloc(((size_t)n + 1) * sizeof *indeg);
    if (!h->clock || !indeg)
        goto nomem;
    uint32_t tail = 0;
    for (uint32_t i = 0; i < n; i++) {
        indeg[i] = h->pred_first[i + 1] - h->pred_first[i];
        if (!indeg[i])
            h->order[tail++] = i;
    }
    for (uint32_t head = 0; head < tail; head++) {
        uint32_t u = h->order[head];
        h->topo_index[u] = head;
        uint32_t *cu = &h->clock[(size_t)u * K];
        const golden_op *op = &g->ops[u];
        if (op->kind == GOLDEN_OP_BARRIER) {
            if (h->home_queue[u] != GOLDEN_NONE)
                for (uint32_t m = 0; m < op->bq_count; m++)
                    cu[g->barrier_queues[op->bq_first + m]] = bpos[op->bq_first + m];
        } else {
            cu[h->home_queue[u]] = h->home_pos[u];
        }
        for (uint32_t k = h->succ_first[u]; k < h->succ_first[u + 1]; k++) {
            uint32_t v = h->succ[k].node;
            uint32_t *cv = &h->clock[(size_t)v * K];
            for (uint32_t j = 0; j < K; j++)
                if (cu[j] > cv[j])
                    cv[j] = cu[j];
            if (--indeg[v] == 0)
                h->order[tail++] = v;
        }
    }
    h->norder = tail;
    free(indeg);
    free(last);
    free(cnt);
    free(bpos);
    if (h->norder < n && find_cycle(h) != 0) {
        golden_hb_free(h);
        return golden_fail_what(err, GOLDEN_ENOMEM, g->name, "out of memory");
    }
    return GOLDEN_OK;
nomem:
    free(e);
    free(last);
    free(cnt);
    free(bpos);
    free(indeg);
    golden_hb_free(h);
    return golden_fail_what(err, GOLDEN_ENOMEM, g->name, "out of memory for %u ops x %u queues of clocks", n, K);
}

void golden_hb_free(golden_hb *h)
{
    if (!h)
        return;
    free(h->clock);
    free(h->home_queue);
    free(h->home_pos);
    free(h->order);
    free(h->topo_index);
    free(h->cycle);
    free(h->succ_first);
    free(h->succ);
    free(h->pred_first);
    free(h->pred);
    memset(h, 0, sizeof *h);
}
