/* Idle syncs (--redundant): implied by others, or ordering no conflicting pair, decided on
 * incrementally patched clocks against the orderings the check relied on. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph/dag_internal.h"
#include "util/pool.h"

/* ---- idle syncs ---- */
static bool after_implied(const golden_hb *h, const golden_graph *g, const golden_sync *s)
{
    uint32_t v = s->op, u = g->after[s->after];
    for (uint32_t k = h->pred_first[v]; k < h->pred_first[v + 1]; k++) {
        const golden_hb_edge *e = &h->pred[k];
        if (e->kind == GOLDEN_EDGE_AFTER && e->ref == s->after)
            continue;
        if (e->node == u) {
            /* a parallel edge implies this one when it stays: program order always does, a
             * wait outranks an after entry, and of two equal after entries the first stays */
            if (e->kind != GOLDEN_EDGE_AFTER || e->ref < s->after)
                return true;
        } else if (golden_hb_before(h, u, e->node)) {
            return true;
        }
    }
    return false;
}

static bool wait_implied(const golden_hb *h, const golden_graph *g, const golden_sync *s)
{
    uint32_t w = s->op, sig = g->events[g->ops[w].event].signal;
    for (uint32_t k = h->pred_first[w]; k < h->pred_first[w + 1]; k++) {
        const golden_hb_edge *e = &h->pred[k];
        if (e->kind == GOLDEN_EDGE_SIGNAL)
            continue;
        if (e->node == sig) {
            if (e->kind == GOLDEN_EDGE_PROGRAM)
                return true;
        } else if (golden_hb_before(h, sig, e->node)) {
            return true;
        }
    }
    return false;
}

static uint32_t program_pred(const golden_hb *h, uint32_t n, uint32_t q)
{
    for (uint32_t k = h->pred_first[n]; k < h->pred_first[n + 1]; k++)
        if (h->pred[k].kind == GOLDEN_EDGE_PROGRAM && h->pred[k].ref == q)
            return h->pred[k].node;
    return GOLDEN_NONE;
}

/* Conservative. Removing a barrier removes the op, as --remove does (one removal model):
 * its program-order edges and its `after` edges, both ways, go; each of its queues runs
 * straight through. Every (pred, succ) pair joined through the barrier must stay ordered by a
 * path that cannot pass through it (its last node is not after the barrier). */
static bool barrier_implied(const golden_hb *h, const golden_sync *s)
{
    uint32_t B = s->op;
    for (uint32_t i = h->pred_first[B]; i < h->pred_first[B + 1]; i++) {
        const golden_hb_edge *e1 = &h->pred[i];
        uint32_t p = e1->node;
        for (uint32_t j = h->succ_first[B]; j < h->succ_first[B + 1]; j++) {
            const golden_hb_edge *e2 = &h->succ[j];
            uint32_t n = e2->node;
            bool ok = false;
            if (e2->kind == GOLDEN_EDGE_PROGRAM) {
                /* n's queue predecessor becomes the barrier's own predecessor there */
                uint32_t pq = program_pred(h, B, e2->ref);
                ok = pq != GOLDEN_NONE && golden_hb_le(h, p, pq);
            }
            for (uint32_t k = h->pred_first[n]; k < h->pred_first[n + 1] && !ok; k++) {
                const golden_hb_edge *e3 = &h->pred[k];
                if (golden_hb_le(h, B, e3->node))
                    continue;
                ok = golden_hb_le(h, p, e3->node);
            }
            if (!ok)
                return false;
        }
    }
    return true;
}

typedef struct {
    uint32_t *clock;   /* the base clocks, patched for one removal then restored */
    uint32_t *tmp;
    uint8_t *changed;
    uint32_t *list;
    size_t nlist;
} fast_state;

/* One worker's scratch: drop masks for re-checks, patched clocks for the fast path. */
typedef struct {
    fast_state fs;
    uint8_t *dop, *daf;
    bool ready;
} idle_scratch;

typedef struct {
    const golden_dag_result *base;
    const golden_sync *cands;
    size_t ncand;
    uint8_t *idle;
    size_t base_all_races, base_all_aliases;
    bool fast;                  /* witnesses decide waits, after edges and barriers */
    bool racy;                  /* the base races: a barrier with accesses is re-checked */
    golden_progress *progress;  /* updated by the calling thread (worker 0) only */
    const uint32_t *wfirst;     /* witnesses grouped by their later op b */
    const uint32_t *wa;
    const uint8_t *wle;
    idle_scratch *scratch;      /* per worker */
} idle_job;

/* Remove one wait or after edge: recompute clocks in the base topological order (still valid
 * without an edge), only where something changed, then re-test the witnesses of changed ops. */
static bool fast_idle(const idle_job *job, fast_state *fs, const golden_sync *s)
{
    const golden_hb *h = job->base->hb;
    const golden_graph *g = job->base->g;
    uint32_t K = h->K, v = s->op;
    uint32_t horizon = h->topo_index[v];
    bool idle = true, barrier = s->kind == GOLDEN_SYNC_BARRIER;
    for (uint32_t t = h->topo_index[v]; t < h->norder && t <= horizon; t++) {
        uint32_t u = h->order[t];
        bool redo = u == v;
        for (uint32_t k = h->pred_first[u]; k < h->pred_first[u + 1] && !redo; k++)
            redo = fs->changed[h->pred[k].node] || (barrier && h->pred[k].node == v);
        if (!redo)
            continue;
        memset(fs->tmp, 0, K * sizeof *fs->tmp);
        for (uint32_t k = h->pred_first[u]; k < h->pred_first[u + 1]; k++) {
            const golden_hb_edge *e = &h->pred[k];
            uint32_t from = e->node;
            if (u == v && (barrier || (s->kind == GOLDEN_SYNC_WAIT && e->kind == GOLDEN_EDGE_SIGNAL) ||
                           (s->kind == GOLDEN_SYNC_AFTER && e->kind == GOLDEN_EDGE_AFTER &&
                            e->ref == s->after)))
                continue; /* a removed barrier keeps no edge at all */
            /* without the barrier each of its queues runs straight through: the op after it
             * on a queue follows the op before it there (same reachability as dropping it);
             * an `after` naming the removed barrier goes with it */
            if (barrier && from == v) {
                if (e->kind != GOLDEN_EDGE_PROGRAM)
                    continue;
                from = program_pred(h, v, e->ref);
                if (from == GOLDEN_NONE)
                    continue;
            }
            const uint32_t *c = &fs->clock[(size_t)from * K];
            for (uint32_t j = 0; j < K; j++)
                if (c[j] > fs->tmp[j])
                    fs->tmp[j] = c[j];
        }
        /* own positions never move when an edge goes; a removed barrier has none that it
         * could pass on (it no longer follows anything on its queues) */
        const golden_op *op = &g->ops[u];
        const uint32_t *base = &h->clock[(size_t)u * K];
        if (barrier && u == v) {
        } else if (op->kind == GOLDEN_OP_BARRIER) {
            for (uint32_t m = 0; m < op->bq_count; m++) {
                uint32_t l = h->queue_lane[g->barrier_queues[op->bq_first + m]];
                fs->tmp[l] = base[l];
            }
        } else {
            uint32_t l = h->queue_lane[op->queue];
            fs->tmp[l] = base[l];
        }
        uint32_t *cu = &fs->clock[(size_t)u * K];
        if (memcmp(cu, fs->tmp, K * sizeof *cu) == 0)
            continue;
        memcpy(cu, fs->tmp, K * sizeof *cu);
        fs->changed[u] = 1;
        fs->list[fs->nlist++] = u;
        for (uint32_t k = h->succ_first[u]; k < h->succ_first[u + 1]; k++)
            if (h->topo_index[h->succ[k].node] > horizon)
                horizon = h->topo_index[h->succ[k].node];
    }
    for (size_t i = 0; i < fs->nlist && idle; i++) {
        uint32_t b = fs->list[i];
        for (uint32_t k = job->wfirst[b]; k < job->wfirst[b + 1] && idle; k++) {
            uint32_t a = job->wa[k];
            if (barrier && (a == v || b == v)) {
                idle = false; /* an ordering that starts or ends at the barrier itself */
                break;
            }
            uint32_t q = h->home_queue[a];
            bool before = q != GOLDEN_NONE && fs->clock[(size_t)b * K + q] >= h->home_pos[a];
            idle = before || (job->wle[k] && a == b);
        }
    }
    for (size_t i = 0; i < fs->nlist; i++) {
        uint32_t u = fs->list[i];
        memcpy(&fs->clock[(size_t)u * K], &h->clock[(size_t)u * K], K * sizeof(uint32_t));
        fs->changed[u] = 0;
    }
    fs->nlist = 0;
    return idle;
}

static int scratch_init(const idle_job *job, idle_scratch *sc)
{
    const golden_graph *g = job->base->g;
    const golden_hb *h = job->base->hb;
    sc->dop = calloc((size_t)g->nops + 1, 1);
    sc->daf = calloc((size_t)g->nafter + 1, 1);
    if (!sc->dop || !sc->daf)
        return -1;
    if (job->fast) {
        size_t cells = (size_t)h->nnodes * h->K;
        sc->fs.clock = malloc((cells ? cells : 1) * sizeof *sc->fs.clock);
        sc->fs.tmp = malloc(((size_t)h->K + 1) * sizeof *sc->fs.tmp);
        sc->fs.changed = calloc((size_t)h->nnodes + 1, 1);
        sc->fs.list = malloc(((size_t)h->nnodes + 1) * sizeof *sc->fs.list);
        if (!sc->fs.clock || !sc->fs.tmp || !sc->fs.changed || !sc->fs.list)
            return -1;
        memcpy(sc->fs.clock, h->clock, cells * sizeof *sc->fs.clock);
    }
    sc->ready = true;
    return 0;
}

static void scratch_free(idle_scratch *sc)
{
    free(sc->fs.clock);
    free(sc->fs.tmp);
    free(sc->fs.changed);
    free(sc->fs.list);
    free(sc->dop);
    free(sc->daf);
}

/* A sync that joins two queues' lanes changes the clock layout itself: re-check it in full.
 * So is a barrier with accesses of its own on a graph that already races (removing it drops
 * its accesses from the order, which the witnesses do not model). */
static bool needs_recheck(const idle_job *job, const golden_sync *s)
{
    const golden_hb *h = job->base->hb;
    if (s->kind == GOLDEN_SYNC_AFTER)
        return h->link_after[s->after];
    if (s->kind == GOLDEN_SYNC_WAIT)
        return h->link_op[s->op];
    return job->racy && job->base->g->ops[s->op].acc_count > 0;
}

/* One candidate sync: idle when removing it alone adds no race, alias or cycle. */
static int idle_item(void *ctx, size_t i, int worker, golden_error *err)
{
    idle_job *job = ctx;
    const golden_graph *g = job->base->g;
    idle_scratch *sc = &job->scratch[worker];
    if (!sc->ready && scratch_init(job, sc) != 0)
        return golden_fail_what(err, GOLDEN_ENOMEM, g->name, "out of memory");
    if (job->progress && worker == 0)
        golden_progress_update(job->progress, i);
    const golden_sync *s = &job->cands[i];
    if (job->fast && !needs_recheck(job, s)) {
        job->idle[i] = fast_idle(job, &sc->fs, s);
        return GOLDEN_OK;
    }
    uint8_t *slot = s->kind == GOLDEN_SYNC_AFTER ? &sc->daf[s->after] : &sc->dop[s->op];
    *slot = 1;
    golden_hb_drop drop = {sc->dop, sc->daf};
    golden_dag_result t;
    int rc = golden_dag_check(g, &drop, true, &t, err);
    *slot = 0;
    if (rc != 0)
        return rc;
    /* removing a sync only removes orderings, so equal counts mean equal sets */
    job->idle[i] = !t.cyclic && t.nraces == job->base_all_races &&
                   t.naliases == job->base_all_aliases;
    golden_dag_result_free(&t);
    return GOLDEN_OK;
}

/* The orderings the base check relied on, grouped by the later op. */
static int collect_witnesses(golden_dag_result *r, uint32_t **first, uint32_t **wa, uint8_t **wle)
{
    const golden_graph *g = r->g;
    witness_set w = {0};
    race_acc ra = {.g = g, .h = r->hb, .wit = &w, .racy = r->nraces > 0};
    int rc = dag_sweep_races(&ra);
    if (rc == 0 && ra.racy)
        rc = dag_racy_pair_witnesses(&ra);
    free(ra.rr);
    free(ra.seen.keys);
    free(ra.v);
    golden_dag_result scratch = *r;
    scratch.aliases = NULL;
    scratch.naliases = 0;
    if (rc == 0)
        rc = r->naliases || dag_has_inplace(g) ? dag_aliases_all_pairs(&scratch, false, &w)
                                           : dag_check_aliases(&scratch, &w);
    free(scratch.aliases);
    uint32_t n = g->nops;
    *first = calloc((size_t)n + 2, sizeof **first);
    *wa = malloc((w.n + 1) * sizeof **wa);
    *wle = malloc(w.n + 1);
    if (rc != 0 || w.oom || !*first || !*wa || !*wle) {
        dag_wit_free(&w);
        return -1;
    }
    for (size_t i = 0; i < w.n; i++)
        (*first)[w.b[i] + 1]++;
    for (uint32_t i = 0; i < n; i++)
        (*first)[i + 1] += (*first)[i];
    uint32_t *fill = malloc(((size_t)n + 1) * sizeof *fill);
    if (!fill) {
        dag_wit_free(&w);
        return -1;
    }
    memcpy(fill, *first, ((size_t)n + 1) * sizeof *fill);
    for (size_t i = 0; i < w.n; i++) {
        uint32_t at = fill[w.b[i]]++;
        (*wa)[at] = w.a[i];
        (*wle)[at] = w.le[i];
    }
    free(fill);
    dag_wit_free(&w);
    return 0;
}

int golden_dag_redundant(golden_dag_result *r, int threads, golden_progress *progress,
                         golden_error *err)
{
    const golden_graph *g = r->g;
    const golden_hb *h = r->hb;
    if (r->cyclic)
        return golden_fail_what(err, GOLDEN_EINVAL, g->name, "the graph has a cycle; idle syncs are undefined");
    golden_sync *all = NULL;
    size_t n = 0;
    if (dag_list_syncs(g, &all, &n) != 0)
        return golden_fail_what(err, GOLDEN_ENOMEM, g->name, "out of memory");
    golden_idle_sync *out = malloc((n ? n : 1) * sizeof *out);
    golden_sync *rest = malloc((n ? n : 1) * sizeof *rest);
    uint8_t *idle = calloc(n ? n : 1, 1);
    if (!out || !rest || !idle) {
        free(all);
        free(out);
        free(rest);
        free(idle);
        return golden_fail_what(err, GOLDEN_ENOMEM, g->name, "out of memory");
    }
    /* a barrier that a live range names is part of the memory plan: removing it takes an
     * endpoint away (--remove then finds the range unordered), so it is never idle */
    uint8_t *endpoint = calloc((size_t)g->nops + 1, 1);
    if (!endpoint) {
        free(all);
        free(out);
        free(rest);
        free(idle);
        return golden_fail_what(err, GOLDEN_ENOMEM, g->name, "out of memory");
    }
    for (uint32_t i = 0; i < g->nbuffers; i++)
        if (g->buffers[i].live_first != GOLDEN_NONE)
            endpoint[g->buffers[i].live_first] = endpoint[g->buffers[i].live_last] = 1;
    size_t nout = 0, nrest = 0;
    for (size_t i = 0; i < n; i++) {
        const golden_sync *s = &all[i];
        if (s->kind == GOLDEN_SYNC_BARRIER && endpoint[s->op])
            continue;
        bool implied = s->kind == GOLDEN_SYNC_AFTER ? after_implied(h, g, s)
                       : s->kind == GOLDEN_SYNC_WAIT ? wait_implied(h, g, s)
                                                     : barrier_implied(h, s);
        if (implied)
            out[nout++] = (golden_idle_sync){*s, GOLDEN_IDLE_IMPLIED};
        else
            rest[nrest++] = *s;
    }
    free(endpoint);
    idle_job job = {.base = r, .cands = rest, .ncand = nrest, .idle = idle,
                    .progress = progress};
    if (progress)
        progress->total = nrest;
    int rc = GOLDEN_OK;
    uint32_t *wfirst = NULL, *wa = NULL;
    uint8_t *wle = NULL;
    if (nrest) {
        if (collect_witnesses(r, &wfirst, &wa, &wle) != 0) {
            rc = golden_fail_what(err, GOLDEN_ENOMEM, g->name, "out of memory");
            goto done;
        }
        job.fast = true;
        job.racy = r->nraces > 0;
        job.wfirst = wfirst;
        job.wa = wa;
        job.wle = wle;
    }
    job.base_all_races = r->nraces;
    job.base_all_aliases = r->naliases;
    /* re-checks count every pair; the base's counts must be every pair's too */
    bool rechecks = false;
    for (size_t i = 0; i < nrest && !rechecks; i++)
        rechecks = needs_recheck(&job, &rest[i]);
    if (rechecks && !r->all) {
        golden_dag_result t;
        if (golden_dag_check(g, NULL, true, &t, err) != 0) {
            rc = GOLDEN_ERR;
            goto done;
        }
        job.base_all_races = t.nraces;
        job.base_all_aliases = t.naliases;
        golden_dag_result_free(&t);
    }
    if (threads < 1)
        threads = 1;
    if ((size_t)threads > nrest)
        threads = nrest ? (int)nrest : 1;
    if (threads > GOLDEN_POOL_MAX)
        threads = GOLDEN_POOL_MAX;
    job.scratch = calloc((size_t)threads, sizeof *job.scratch);
    if (!job.scratch) {
        rc = golden_fail_what(err, GOLDEN_ENOMEM, g->name, "out of memory");
        goto done;
    }
    rc = lg_parallel_for(nrest, threads, idle_item, &job, err);
    for (int t = 0; t < threads; t++)
        scratch_free(&job.scratch[t]);
    free(job.scratch);
    if (rc != GOLDEN_OK)
        goto done;
    for (size_t i = 0; i < nrest; i++)
        if (idle[i])
            out[nout++] = (golden_idle_sync){rest[i], GOLDEN_IDLE_NO_CONFLICT};
done:
    free(wfirst);
    free(wa);
    free(wle);
    free(all);
    free(rest);
    free(idle);
    if (rc != GOLDEN_OK) {
        free(out);
        return rc;
    }
    free(r->idle);
    r->idle = out;
    r->nidle = nout;
    r->redundant_done = true;
    return GOLDEN_OK;
}

