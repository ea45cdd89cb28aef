/* Races between queues: an interval-map sweep in topological order (one pair per racing byte
 * range, domains on separate cores), or every overlapping pair. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph/dag_internal.h"
#include "util/pool.h"
#include "util/vec.h"

/* ---- races ---- */

static void add_race(race_acc *ra, uint32_t p, uint32_t q)
{
    const golden_access *A = &ra->g->accesses[p], *B = &ra->g->accesses[q];
    if (A->op > B->op || (A->op == B->op && p > q)) {
        const golden_access *t = A;
        A = B;
        B = t;
        uint32_t ti = p;
        p = q;
        q = ti;
    }
    int r = dag_set_add(&ra->seen, ((uint64_t)p << 32) | q);
    if (r <= 0) {
        if (r < 0)
            ra->oom = 1;
        return;
    }
    if (VEC_GROW(ra->v, ra->n, ra->cap, 16) != 0) {
        ra->oom = 1;
        return;
    }
    golden_race *x = &ra->v[ra->n++];
    memset(x, 0, sizeof *x);
    x->a = p;
    x->b = q;
    x->kind = A->write && B->write ? GOLDEN_RACE_WAW : A->write ? GOLDEN_RACE_RAW : GOLDEN_RACE_WAR;
    x->lo = A->lo > B->lo ? A->lo : B->lo;
    x->hi = A->hi < B->hi ? A->hi : B->hi;
}

/* Earlier access `prev` (in topological order) against the current one. */
static void check_prior(race_acc *ra, uint32_t prev)
{
    uint32_t pa = ra->g->accesses[prev].op, pb = ra->g->accesses[ra->cur].op;
    if (pa != pb && !golden_hb_before(ra->h, pa, pb)) {
        add_race(ra, prev, ra->cur);
        if (ra->racy && ra->wit) {
            if (VEC_GROW(ra->rr, ra->nracy, ra->capracy, 64)) {
                ra->oom = 1;
                return;
            }
            ra->rr[ra->nracy++] = (racy_range){
                ra->g->buffers[ra->g->accesses[ra->cur].buffer].domain, ra->seg_lo, ra->seg_hi};
        }
    } else if (ra->wit && ra->g->ops[pa].queue != ra->g->ops[pb].queue)
        dag_wit_add(ra->wit, pa, pb, false);
}

static void on_segment(void *ctx, const golden_imap_seg *seg, uint64_t lo, uint64_t hi)
{
    race_acc *ra = ctx;
    ra->seg_lo = lo;
    ra->seg_hi = hi;
    if (seg->write != UINT32_MAX)
        check_prior(ra, seg->write);
    if (ra->g->accesses[ra->cur].write)
        for (uint32_t i = 0; i < seg->nreads; i++)
            check_prior(ra, seg->reads[i].acc);
}

/* The FastTrack-style sweep: accesses in topological order against per-domain shadow maps. */
static int sweep_domains(race_acc *ra, const uint8_t *mine)
{
    const golden_graph *g = ra->g;
    const golden_hb *h = ra->h;
    golden_imap **maps = calloc(g->ndomains ? g->ndomains : 1, sizeof *maps);
    if (!maps)
        return -1;
    int rc = 0;
    for (uint32_t t = 0; t < h->norder && rc == 0; t++) {
        const golden_op *op = &g->ops[h->order[t]];
        for (uint32_t k = 0; k < op->acc_count && rc == 0; k++) {
            uint32_t ai = op->acc_first + k;
            const golden_access *a = &g->accesses[ai];
            uint32_t d = g->buffers[a->buffer].domain;
            if (mine && !mine[d])
                continue;
            if (!maps[d] && !(maps[d] = lg_imap_new())) {
                rc = -1;
                break;
            }
            ra->cur = ai;
            if (lg_imap_access(maps[d], a->lo, a->hi, a->write, ai, op->queue, on_segment,
                                   ra) != 0 || ra->oom)
                rc = -1;
        }
    }
    for (uint32_t d = 0; d < g->ndomains; d++)
        lg_imap_free(maps[d]);
    free(maps);
    return rc;
}

typedef struct {
    race_acc ra;
    uint8_t *mine;
    int rc;
} sweep_part;

static int sweep_part_fn(void *ctx, size_t item, int worker, golden_error *err)
{
    (void)worker;
    (void)err;
    sweep_part *p = &((sweep_part *)ctx)[item];
    p->rc = sweep_domains(&p->ra, p->mine);
    return GOLDEN_OK; /* out of memory is p->rc: every part finishes and frees its maps */
}

/* Domains (chip, space) never conflict with each other, so they sweep on separate cores:
 * each worker takes whole domains, balanced by access count. */
int dag_sweep_races(race_acc *ra)
{
    const golden_graph *g = ra->g;
    uint32_t nd = g->ndomains;
    int T = lg_cpu_count();
    if (ra->wit || T < 2 || nd < 2)
        return sweep_domains(ra, NULL);
    if ((uint32_t)T > nd)
        T = (int)nd;
    if (T > 8)
        T = 8;
    uint64_t *count = calloc(nd, sizeof *count), load[8] = {0};
    sweep_part *parts = calloc((size_t)T, sizeof *parts);
    int rc = count && parts ? 0 : -1;
    for (int t = 0; t < T && rc == 0; t++) {
        parts[t].ra = (race_acc){.g = g, .h = ra->h};
        if (!(parts[t].mine = calloc(nd, 1)))
            rc = -1;
    }
    if (rc == 0) {
        for (uint32_t i = 0; i < g->naccesses; i++)
            count[g->buffers[g->accesses[i].buffer].domain]++;
        /* biggest domain first, each to the least loaded worker */
        for (uint32_t k = 0; k < nd; k++) {
            uint32_t best = 0;
            for (uint32_t d = 0; d < nd; d++)
                if (count[d] != UINT64_MAX && (count[best] == UINT64_MAX || count[d] > count[best]))
                    best = d;
            int w = 0;
            for (int t = 1; t < T; t++)
                if (load[t] < load[w])
                    w = t;
            parts[w].mine[best] = 1;
            load[w] += count[best];
            count[best] = UINT64_MAX;
        }
        golden_error perr;
        lg_parallel_for((size_t)T, T, sweep_part_fn, parts, &perr);
        size_t total = 0;
        for (int t = 0; t < T; t++) {
            rc |= parts[t].rc;
            total += parts[t].ra.n;
        }
        if (rc == 0 && total && !(ra->v = malloc(total * sizeof *ra->v)))
            rc = -1;
        for (int t = 0; t < T && rc == 0; t++) {
            if (parts[t].ra.n)
                memcpy(ra->v + ra->n, parts[t].ra.v, parts[t].ra.n * sizeof *ra->v);
            ra->n += parts[t].ra.n;
        }
        ra->cap = ra->n;
    }
    for (int t = 0; parts && t < T; t++) {
        free(parts[t].ra.v);
        free(parts[t].ra.seen.keys);
        free(parts[t].mine);
    }
    free(parts);
    free(count);
    return rc;
}

static int cmp_access_lo(const void *x, const void *y, void *gp)
{
    const golden_graph *g = gp;
    const golden_access *a = &g->accesses[*(const uint32_t *)x];
    const golden_access *b = &g->accesses[*(const uint32_t *)y];
    if (a->lo != b->lo)
        return a->lo < b->lo ? -1 : 1;
    return *(const uint32_t *)x < *(const uint32_t *)y ? -1 : 1;
}

/* Every racing pair: all overlapping pairs per domain by a sweep over start addresses. */
int dag_sweep_all_pairs(race_acc *ra)
{
    const golden_graph *g = ra->g;
    uint32_t nd = g->ndomains, na = g->naccesses;
    uint32_t *first = calloc((size_t)nd + 2, sizeof *first);
    uint32_t *idx = malloc(((size_t)na + 1) * sizeof *idx);
    uint32_t *active = malloc(((size_t)na + 1) * sizeof *active);
    if (!first || !idx || !active) {
        free(first);
        free(idx);
        free(active);
        return -1;
    }
    for (uint32_t i = 0; i < na; i++)
        first[g->buffers[g->accesses[i].buffer].domain + 1]++;
    for (uint32_t d = 0; d < nd; d++)
        first[d + 1] += first[d];
    uint32_t *fill = malloc(((size_t)nd + 1) * sizeof *fill);
    if (!fill) {
        free(first);
        free(idx);
        free(active);
        return -1;
    }
    memcpy(fill, first, ((size_t)nd + 1) * sizeof *fill);
    for (uint32_t i = 0; i < na; i++)
        idx[fill[g->buffers[g->accesses[i].buffer].domain]++] = i;
    free(fill);
    for (uint32_t d = 0; d < nd; d++)
        qsort_r(idx + first[d], first[d + 1] - first[d], sizeof *idx, cmp_access_lo, (void *)g);
    for (uint32_t d = 0; d < nd && !ra->oom; d++) {
        uint32_t nact = 0;
        for (uint32_t k = first[d]; k < first[d + 1] && !ra->oom; k++) {
            uint32_t x = idx[k];
            const golden_access *X = &g->accesses[x];
            uint32_t keep = 0;
            for (uint32_t m = 0; m < nact; m++) {
                uint32_t y = active[m];
                const golden_access *Y = &g->accesses[y];
                if (Y->hi <= X->lo)
                    continue;
                active[keep++] = y;
                if ((X->write || Y->write) && X->op != Y->op &&
                    !golden_hb_ordered(ra->h, X->op, Y->op))
                    add_race(ra, y, x);
            }
            nact = keep;
            active[nact++] = x;
        }
    }
    free(first);
    free(idx);
    free(active);
    return ra->oom ? -1 : 0;
}

static int cmp_racy(const void *x, const void *y)
{
    const racy_range *a = x, *b = y;
    if (a->dom != b->dom)
        return a->dom < b->dom ? -1 : 1;
    if (a->lo != b->lo)
        return a->lo < b->lo ? -1 : 1;
    return 0;
}

static int cmp_access_dom_lo(const void *x, const void *y, void *gp)
{
    const golden_graph *g = gp;
    const golden_access *a = &g->accesses[*(const uint32_t *)x];
    const golden_access *b = &g->accesses[*(const uint32_t *)y];
    uint32_t da = g->buffers[a->buffer].domain, db = g->buffers[b->buffer].domain;
    if (da != db)
        return da < db ? -1 : 1;
    return cmp_access_lo(x, y, gp);
}

/* Bytes that race in the base: the sweep lemma (every visited pair ordered => every
 * conflicting pair ordered) holds byte by byte, so outside these bytes the visited pairs are
 * enough witnesses; on them every overlapping pair of the accesses that touch them is taken
 * (a superset of the pairs sharing a racy byte: any ordered conflicting pair is a witness that
 * must survive, so extra ones never change the answer), kept as the latest such op per lane. */
int dag_racy_pair_witnesses(race_acc *ra)
{
    const golden_graph *g = ra->g;
    size_t nr = ra->nracy;
    racy_range *rr = ra->rr; /* ours now: merged in place, freed below */
    uint32_t *idx = malloc(((size_t)g->naccesses + 1) * sizeof *idx);
    uint32_t *active = malloc(((size_t)g->naccesses + 1) * sizeof *active);
    int rc = idx && active ? 0 : -1;
    size_t m = 0;
    ra->rr = NULL;
    ra->nracy = ra->capracy = 0;
    if (rc == 0 && nr) {
        qsort(rr, nr, sizeof *rr, cmp_racy);
        for (size_t i = 0; i < nr; i++) {
            if (m && rr[m - 1].dom == rr[i].dom && rr[i].lo <= rr[m - 1].hi) {
                if (rr[i].hi > rr[m - 1].hi)
                    rr[m - 1].hi = rr[i].hi;
            } else {
                rr[m++] = rr[i];
            }
        }
    }
    uint32_t n = 0;
    for (uint32_t i = 0; i < g->naccesses && rc == 0 && m; i++) {
        const golden_access *a = &g->accesses[i];
        racy_range key = {g->buffers[a->buffer].domain, 0, 0};
        /* the first merged range of the domain that ends after a->lo */
        size_t lo = 0, hi = m;
        while (lo < hi) {
            size_t mid = lo + (hi - lo) / 2;
            if (rr[mid].dom < key.dom || (rr[mid].dom == key.dom && rr[mid].hi <= a->lo))
                lo = mid + 1;
            else
                hi = mid;
        }
        if (lo < m && rr[lo].dom == key.dom && rr[lo].lo < a->hi)
            idx[n++] = i;
    }
    if (rc == 0 && n > 1)
        qsort_r(idx, n, sizeof *idx, cmp_access_dom_lo, (void *)g);
    /* per later op b and lane: only the latest conflicting op a before b there. The ops of a
     * lane before b are a prefix of it, so if that a stays before b, every earlier one does */
    uint32_t K = ra->h->K;
    size_t cells = n ? (size_t)ra->h->nnodes * K : 0;
    uint32_t *best = NULL;
    if (rc == 0 && cells) {
        if (!(best = malloc(cells * sizeof *best)))
            rc = -1;
        else
            memset(best, 0xff, cells * sizeof *best);
    }
    uint32_t nact = 0, dom = UINT32_MAX;
    for (uint32_t k = 0; k < n && rc == 0 && !ra->wit->oom; k++) {
        uint32_t x = idx[k];
        const golden_access *X = &g->accesses[x];
        if (g->buffers[X->buffer].domain != dom) {
            dom = g->buffers[X->buffer].domain;
            nact = 0;
        }
        uint32_t keep = 0;
        for (uint32_t j = 0; j < nact; j++) {
            uint32_t y = active[j];
            const golden_access *Y = &g->accesses[y];
            if (Y->hi <= X->lo)
                continue;
            active[keep++] = y;
            if (!(X->write || Y->write) || X->op == Y->op ||
                g->ops[X->op].queue == g->ops[Y->op].queue)
                continue;
            uint32_t a = Y->op, b = X->op;
            if (!golden_hb_before(ra->h, a, b)) {
                a = X->op;
                b = Y->op;
                if (!golden_hb_before(ra->h, a, b))
                    continue;
            }
            uint32_t *slot = &best[(size_t)b * K + ra->h->home_queue[a]];
            if (*slot == GOLDEN_NONE || ra->h->home_pos[*slot] < ra->h->home_pos[a])
                *slot = a;
        }
        nact = keep;
        active[nact++] = x;
    }
    for (size_t c = 0; best && c < cells && rc == 0; c++)
        if (best[c] != GOLDEN_NONE)
            dag_wit_add(ra->wit, best[c], (uint32_t)(c / K), false);
    free(best);
    free(rr);
    free(idx);
    free(active);
    return rc != 0 || ra->wit->oom ? -1 : 0;
}

int dag_cmp_race(const void *x, const void *y, void *gp)
{
    const golden_graph *g = gp;
    const golden_race *a = x, *b = y;
    uint32_t a1 = g->accesses[a->a].op, b1 = g->accesses[b->a].op;
    if (a1 != b1)
        return a1 < b1 ? -1 : 1;
    uint32_t a2 = g->accesses[a->b].op, b2 = g->accesses[b->b].op;
    if (a2 != b2)
        return a2 < b2 ? -1 : 1;
    if (a->a != b->a)
        return a->a < b->a ? -1 : 1;
    return a->b < b->b ? -1 : a->b > b->b;
}

