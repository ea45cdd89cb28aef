/* Vector clocks for happens-before: every node gets, per queue, the last position on that queue
 * ordered before it, so "a before b" is one comparison (the way race detectors do it). */
#include "graph/hb.h"

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

/* Program order per queue (barriers on each queue they list), `after` edges, signal -> wait;
 * own positions on each queue: qpos per node, bpos per barrier-queue entry. */
static int build_edges(const golden_graph *g, const golden_hb_drop *drop, golden_hb *h,
                       uint32_t *qpos, uint32_t *bpos, uint32_t *cnt, uint32_t *qfirst,
                       uint32_t *qlast)
{
    uint32_t n = g->nops, K = g->nqueues;
    size_t cap = (size_t)n + g->nbarrier_queues + g->nafter + n;
    raw_edge *e = malloc((cap ? cap : 1) * sizeof *e);
    if (!e)
        return -1;
    for (uint32_t q = 0; q < K; q++)
        qfirst[q] = qlast[q] = GOLDEN_NONE;
    size_t ne = 0;
    for (uint32_t i = 0; i < n; i++) {
        const golden_op *op = &g->ops[i];
        qpos[i] = 0;
        bool dropped = drop && drop->drop_op && drop->drop_op[i];
        if (op->kind == GOLDEN_OP_BARRIER) {
            if (dropped)
                continue; /* gone with its `after` edges: each of its queues runs straight on */
            for (uint32_t m = 0; m < op->bq_count; m++) {
                uint32_t q = g->barrier_queues[op->bq_first + m];
                bpos[op->bq_first + m] = ++cnt[q];
                if (qlast[q] != GOLDEN_NONE)
                    e[ne++] = (raw_edge){qlast[q], i, q, GOLDEN_EDGE_PROGRAM};
                else
                    qfirst[q] = i;
                qlast[q] = i;
            }
        } else {
            uint32_t q = op->queue;
            qpos[i] = ++cnt[q];
            if (qlast[q] != GOLDEN_NONE)
                e[ne++] = (raw_edge){qlast[q], i, q, GOLDEN_EDGE_PROGRAM};
            else
                qfirst[q] = i;
            qlast[q] = i;
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
    /* an `after` naming a dropped barrier goes with it */
    size_t keep = 0;
    for (size_t k = 0; k < ne; k++) {
        uint32_t s = e[k].src;
        if (drop && drop->drop_op && drop->drop_op[s] && g->ops[s].kind == GOLDEN_OP_BARRIER)
            continue;
        e[keep++] = e[k];
    }
    int rc = csr(n, e, keep, true, &h->succ_first, &h->succ) != 0 ||
                     csr(n, e, keep, false, &h->pred_first, &h->pred) != 0
                 ? -1
                 : 0;
    free(e);
    return rc;
}

/* Kahn's order, without clocks: a cycle is found (and reported) before any clock exists. */
static int topo_order(golden_hb *h)
{
    uint32_t n = h->nnodes;
    uint32_t *indeg = malloc(((size_t)n + 1) * sizeof *indeg);
    if (!indeg)
        return -1;
    uint32_t tail = 0;
    for (uint32_t i = 0; i < n; i++) {
        h->topo_index[i] = GOLDEN_NONE;
        indeg[i] = h->pred_first[i + 1] - h->pred_first[i];
        if (!indeg[i])
            h->order[tail++] = i;
    }
    for (uint32_t head = 0; head < tail; head++) {
        uint32_t u = h->order[head];
        h->topo_index[u] = head;
        for (uint32_t k = h->succ_first[u]; k < h->succ_first[u + 1]; k++)
            if (--indeg[h->succ[k].node] == 0)
                h->order[tail++] = h->succ[k].node;
    }
    h->norder = tail;
    free(indeg);
    return 0;
}


/* Lanes: queues that run one after another share one clock column. A queue joins the lane of
 * q' when its first op follows the last op of q' (the lane's tail) through one direct wait or
 * `after` edge: then every op of q' is before every op of the queue, so one position counter
 * along the lane keeps "a before b" one comparison. Clock memory is ops x lanes, so a graph of
 * 10^5 queues that hand work on one to the next needs one column, not 10^5. Returns the lane
 * count; -1 out of memory. */
typedef struct {
    const uint32_t *first, *topo;
} lane_sort;

static int cmp_first_topo(const void *x, const void *y, void *cp)
{
    const lane_sort *c = cp;
    uint32_t a = c->topo[c->first[*(const uint32_t *)x]];
    uint32_t b = c->topo[c->first[*(const uint32_t *)y]];
    return a < b ? -1 : a > b;
}

static int64_t build_lanes(const golden_graph *g, golden_hb *h, const uint32_t *cnt,
                           const uint32_t *qfirst, const uint32_t *qlast, uint32_t *lane_off)
{
    uint32_t K = g->nqueues, nq = 0, L = 0;
    uint32_t *qs = malloc(((size_t)K + 1) * sizeof *qs);
    uint32_t *tail = malloc(((size_t)K + 1) * sizeof *tail);
    uint32_t *len = malloc(((size_t)K + 1) * sizeof *len);
    if (!qs || !tail || !len) {
        free(qs);
        free(tail);
        free(len);
        return -1;
    }
    for (uint32_t q = 0; q < K; q++) {
        h->queue_lane[q] = GOLDEN_NONE;
        lane_off[q] = 0;
        if (qfirst[q] != GOLDEN_NONE)
            qs[nq++] = q;
    }
    lane_sort ls = {qfirst, h->topo_index};
    qsort_r(qs, nq, sizeof *qs, cmp_first_topo, &ls);
    for (uint32_t k = 0; k < nq; k++) {
        uint32_t q = qs[k], f = qfirst[q], lane = GOLDEN_NONE;
        for (uint32_t e = h->pred_first[f]; e < h->pred_first[f + 1] && lane == GOLDEN_NONE &&
                                            g->ops[f].kind != GOLDEN_OP_BARRIER; e++) {
            const golden_hb_edge *x = &h->pred[e];
            uint32_t p = x->node;
            if (x->kind == GOLDEN_EDGE_PROGRAM || g->ops[p].kind == GOLDEN_OP_BARRIER)
                continue;
            uint32_t pq = g->ops[p].queue, pl = h->queue_lane[pq];
            if (qlast[pq] != p || pl == GOLDEN_NONE || tail[pl] != pq)
                continue;
            lane = pl;
            if (x->kind == GOLDEN_EDGE_SIGNAL)
                h->link_op[f] = 1;
            else
                h->link_after[x->ref] = 1;
        }
        if (lane == GOLDEN_NONE) {
            lane = L++;
            len[lane] = 0;
        }
        h->queue_lane[q] = lane;
        lane_off[q] = len[lane];
        len[lane] += cnt[q];
        tail[lane] = q;
    }
    free(qs);
    free(tail);
    free(len);
    return L;
}

/* Clocks in topological order: clock[n*K + lane] = the last position on that lane <= n. */
static int build_clocks(const golden_graph *g, golden_hb *h, const uint32_t *bpos,
                        const uint32_t *lane_off)
{
    uint32_t n = h->nnodes, K = h->K;
    size_t cells = (size_t)n * K;
    if (K && cells / K != n)
        return -1;
    h->clock = calloc(cells ? cells : 1, sizeof *h->clock);
    if (!h->clock)
        return -1;
    for (uint32_t t = 0; t < h->norder; t++) {
        uint32_t u = h->order[t];
        uint32_t *cu = &h->clock[(size_t)u * K];
        const golden_op *op = &g->ops[u];
        if (op->kind == GOLDEN_OP_BARRIER) {
            if (h->home_queue[u] != GOLDEN_NONE)
                for (uint32_t m = 0; m < op->bq_count; m++) {
                    uint32_t q = g->barrier_queues[op->bq_first + m];
                    cu[h->queue_lane[q]] = lane_off[q] + bpos[op->bq_first + m];
                }
        } else {
            cu[h->home_queue[u]] = h->home_pos[u];
        }
        for (uint32_t k = h->succ_first[u]; k < h->succ_first[u + 1]; k++) {
            uint32_t *cv = &h->clock[(size_t)h->succ[k].node * K];
            for (uint32_t j = 0; j < K; j++)
                if (cu[j] > cv[j])
                    cv[j] = cu[j];
        }
    }
    return 0;
}

int lg_hb_build(const golden_graph *g, const golden_hb_drop *drop, golden_hb *h,
                    golden_error *err)
{
    memset(h, 0, sizeof *h);
    uint32_t n = g->nops, K = g->nqueues;
    h->nnodes = n;
    uint32_t *cnt = calloc((size_t)K + 1, sizeof *cnt);
    uint32_t *qfirst = malloc(((size_t)K + 1) * sizeof *qfirst);
    uint32_t *qlast = malloc(((size_t)K + 1) * sizeof *qlast);
    uint32_t *lane_off = malloc(((size_t)K + 1) * sizeof *lane_off);
    uint32_t *bpos = malloc(((size_t)g->nbarrier_queues + 1) * sizeof *bpos);
    uint32_t *qpos = malloc(((size_t)n + 1) * sizeof *qpos);
    h->home_queue = malloc(((size_t)n + 1) * sizeof *h->home_queue);
    h->home_pos = malloc(((size_t)n + 1) * sizeof *h->home_pos);
    h->order = malloc(((size_t)n + 1) * sizeof *h->order);
    h->topo_index = malloc(((size_t)n + 1) * sizeof *h->topo_index);
    h->queue_lane = malloc(((size_t)K + 1) * sizeof *h->queue_lane);
    h->link_op = calloc((size_t)n + 1, 1);
    h->link_after = calloc((size_t)g->nafter + 1, 1);
    int rc = GOLDEN_OK;
    if (!cnt || !qfirst || !qlast || !lane_off || !bpos || !qpos || !h->home_queue ||
        !h->home_pos || !h->order || !h->topo_index || !h->queue_lane || !h->link_op ||
        !h->link_after || build_edges(g, drop, h, qpos, bpos, cnt, qfirst, qlast) != 0 ||
        topo_order(h) != 0) {
        rc = golden_fail_what(err, GOLDEN_ENOMEM, g->name, "out of memory");
        goto done;
    }
    if (h->norder < n) {
        /* a deadlock: the finding, before any clock is allocated */
        if (find_cycle(h) != 0)
            rc = golden_fail_what(err, GOLDEN_ENOMEM, g->name, "out of memory");
        for (uint32_t i = 0; i < n; i++)
            h->home_queue[i] = GOLDEN_NONE;
        goto done;
    }
    int64_t L = build_lanes(g, h, cnt, qfirst, qlast, lane_off);
    if (L < 0) {
        rc = golden_fail_what(err, GOLDEN_ENOMEM, g->name, "out of memory");
        goto done;
    }
    h->K = (uint32_t)L;
    for (uint32_t i = 0; i < n; i++) {
        const golden_op *op = &g->ops[i];
        h->home_queue[i] = GOLDEN_NONE;
        h->home_pos[i] = 0;
        if (op->kind == GOLDEN_OP_BARRIER) {
            if (drop && drop->drop_op && drop->drop_op[i])
                continue;
            uint32_t q = g->barrier_queues[op->bq_first];
            h->home_queue[i] = h->queue_lane[q];
            h->home_pos[i] = lane_off[q] + bpos[op->bq_first];
        } else {
            h->home_queue[i] = h->queue_lane[op->queue];
            h->home_pos[i] = lane_off[op->queue] + qpos[i];
        }
    }
    if (build_clocks(g, h, bpos, lane_off) != 0)
        rc = golden_fail_what(err, GOLDEN_ENOMEM, g->name,
                              "out of memory for clocks of %u ops x %u lanes (%u queues; "
                              "docs/dag-check.md, \"Vector clocks over lanes\")", n, h->K, K);
done:
    free(cnt);
    free(qfirst);
    free(qlast);
    free(lane_off);
    free(bpos);
    free(qpos);
    if (rc != GOLDEN_OK)
        lg_hb_free(h);
    return rc;
}

void lg_hb_free(golden_hb *h)
{
    if (!h)
        return;
    free(h->clock);
    free(h->queue_lane);
    free(h->link_op);
    free(h->link_after);
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
