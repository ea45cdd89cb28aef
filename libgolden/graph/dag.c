/* dag-check's engine over a graph and its happens-before clocks: races, cycles, memory-plan
 * aliases, idle syncs, removal verification, baseline comparison, statistics and the report. */
#include "golden/dag.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "graph/hb.h"
#include "graph/imap.h"
#include "util/pool.h"
#include "util/strmap.h"
#include "golden/report.h"

/* ---- small helpers ---- */
typedef struct {
    uint64_t *keys;
    size_t cap, n;
} u64set;

static uint64_t mix64(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ULL;
    return x ^ (x >> 33);
}

/* Insert key (never UINT64_MAX); 1 = was new, 0 = present, -1 = no memory. */
static int u64set_add(u64set *s, uint64_t key)
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

/* Orderings a check relied on ("a before b", or "a before or equal b"): the sweeps visit the
 * same pairs whatever the clocks say, so a graph without one sync is race- and alias-free
 * exactly when each recorded ordering survives there (see golden_dag_redundant). */
typedef struct {
    u64set seen;
    uint32_t *a, *b;
    uint8_t *le;
    size_t n, cap;
    int oom;
} witness_set;

static void wit_add(witness_set *w, uint32_t a, uint32_t b, bool le)
{
    if (a == b)
        return;
    int r = u64set_add(&w->seen, (((uint64_t)a << 32) | b) ^ (le ? 0x8000000000000000ULL : 0));
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

static void wit_free(witness_set *w)
{
    free(w->seen.keys);
    free(w->a);
    free(w->b);
    free(w->le);
}

/* ---- races ---- */
typedef struct {
    const golden_graph *g;
    const golden_hb *h;
    golden_race *v;
    size_t n, cap;
    u64set seen;
    uint32_t cur;
    int oom;
    witness_set *wit;
} race_acc;

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
    int r = u64set_add(&ra->seen, ((uint64_t)p << 32) | q);
    if (r <= 0) {
        if (r < 0)
            ra->oom = 1;
        return;
    }
    if (ra->n == ra->cap) {
        size_t nc = ra->cap ? ra->cap * 2 : 16;
        golden_race *nv = realloc(ra->v, nc * sizeof *nv);
        if (!nv) {
            ra->oom = 1;
            return;
        }
        ra->v = nv;
        ra->cap = nc;
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
    if (pa != pb && !golden_hb_before(ra->h, pa, pb))
        add_race(ra, prev, ra->cur);
    else if (ra->wit && ra->g->ops[pa].queue != ra->g->ops[pb].queue)
        wit_add(ra->wit, pa, pb, false);
}

static void on_segment(void *ctx, const golden_imap_seg *seg, uint64_t lo, uint64_t hi)
{
    (void)lo;
    (void)hi;
    race_acc *ra = ctx;
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
            if (!maps[d] && !(maps[d] = golden_imap_new())) {
                rc = -1;
                break;
            }
            ra->cur = ai;
            if (golden_imap_access(maps[d], a->lo, a->hi, a->write, ai, op->queue, on_segment,
                                   ra) != 0 || ra->oom)
                rc = -1;
        }
    }
    for (uint32_t d = 0; d < g->ndomains; d++)
        golden_imap_free(maps[d]);
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
static int sweep_races(race_acc *ra)
{
    const golden_graph *g = ra->g;
    uint32_t nd = g->ndomains;
    int T = golden_cpu_count();
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
        golden_parallel_for((size_t)T, T, sweep_part_fn, parts, &perr);
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
static int sweep_all_pairs(race_acc *ra)
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

static int cmp_race(const void *x, const void *y, void *gp)
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

/* ---- memory plan ---- */

static int add_alias(golden_dag_result *r, size_t *cap, uint32_t a, uint32_t b, bool inplace,
                     const char *reason)
{
    const golden_graph *g = r->g;
    if (a > b) {
        uint32_t t = a;
        a = b;
        b = t;
    }
    if (r->naliases == *cap) {
        size_t nc = *cap ? *cap * 2 : 8;
        golden_alias *nv = realloc(r->aliases, nc * sizeof *nv);
        if (!nv)
            return -1;
        r->aliases = nv;
        *cap = nc;
    }
    const golden_buffer *A = &g->buffers[a], *B = &g->buffers[b];
    golden_alias *x = &r->aliases[r->naliases++];
    memset(x, 0, sizeof *x);
    x->a = a;
    x->b = b;
    x->lo = A->address > B->address ? A->address : B->address;
    x->hi = A->address + A->size < B->address + B->size ? A->address + A->size
                                                          : B->address + B->size;
    x->inplace = inplace;
    x->reason = reason;
    return 0;
}

static int cmp_alias(const void *x, const void *y)
{
    const golden_alias *a = x, *b = y;
    if (a->a != b->a)
        return a->a < b->a ? -1 : 1;
    return a->b < b->b ? -1 : a->b > b->b;
}

/* A live range is the union of what its two endpoints bound: when `first` and `last` sit on
 * unordered queues the buffer is live from the earlier to the later of each. So X's range ends
 * before Y's begins when each endpoint of X is ordered before each endpoint of Y (strictly, or
 * "before or equal" for a declared in-place pair, whose handover op may be shared). For an
 * ordinary range (first <= last) this is just X.last before Y.first. */
static bool live_before(const golden_graph *g, const golden_hb *h, uint32_t xi, uint32_t yi,
                        bool le)
{
    const golden_buffer *X = &g->buffers[xi], *Y = &g->buffers[yi];
    uint32_t xs[2] = {X->live_first, X->live_last}, ys[2] = {Y->live_first, Y->live_last};
    for (int a = 0; a < 2; a++)
        for (int b = 0; b < 2; b++)
            if (!(le ? golden_hb_le(h, xs[a], ys[b]) : golden_hb_before(h, xs[a], ys[b])))
                return false;
    return true;
}

/* The orderings live_before relied on, as witnesses for the idle-sync check. */
static void live_witness(witness_set *w, const golden_graph *g, uint32_t xi, uint32_t yi, bool le)
{
    const golden_buffer *X = &g->buffers[xi], *Y = &g->buffers[yi];
    uint32_t xs[2] = {X->live_first, X->live_last}, ys[2] = {Y->live_first, Y->live_last};
    for (int a = 0; a < 2; a++)
        for (int b = 0; b < 2; b++)
            wit_add(w, xs[a], ys[b], le);
}

static bool inplace_pair(const golden_graph *g, uint32_t xi, uint32_t yi)
{
    return g->buffers[xi].inplace_of == yi || g->buffers[yi].inplace_of == xi;
}

/* Why two overlapping buffers alias, or NULL when their live ranges are ordered. */
static const char *alias_reason(const golden_graph *g, const golden_hb *h, uint32_t yi,
                                uint32_t xi)
{
    const golden_buffer *X = &g->buffers[xi], *Y = &g->buffers[yi];
    if (X->live_first == GOLDEN_NONE || Y->live_first == GOLDEN_NONE)
        return "overlapping buffers and one has no live range (live for the whole graph)";
    if (inplace_pair(g, xi, yi)) {
        if (!live_before(g, h, yi, xi, true) && !live_before(g, h, xi, yi, true))
            return "declared in place, but neither live range ends before the other begins in "
                   "happens-before";
        return NULL;
    }
    if (!live_before(g, h, yi, xi, false) && !live_before(g, h, xi, yi, false))
        return "live ranges overlap: neither buffer's last use happens before the other's "
               "first use";
    return NULL;
}

/* Record the orderings that keep an ordered overlapping pair apart. */
static void pair_witness(witness_set *w, const golden_graph *g, const golden_hb *h, uint32_t yi,
                         uint32_t xi)
{
    bool le = inplace_pair(g, xi, yi);
    if (live_before(g, h, yi, xi, le))
        live_witness(w, g, yi, xi, le);
    else
        live_witness(w, g, xi, yi, le);
}

typedef struct {
    golden_dag_result *r;
    size_t cap;
    uint32_t cur;
    u64set seen;
    int rc;
    witness_set *wit;
} alias_ctx;

static void on_alias_seg(void *ctx, const golden_imap_seg *seg, uint64_t lo, uint64_t hi)
{
    (void)lo;
    (void)hi;
    alias_ctx *ac = ctx;
    uint32_t y = seg->write, x = ac->cur;
    if (y == UINT32_MAX || y == x || ac->rc)
        return;
    const golden_graph *g = ac->r->g;
    const char *why = alias_reason(g, ac->r->hb, y, x);
    if (!why && ac->wit)
        pair_witness(ac->wit, g, ac->r->hb, y, x);
    if (!why)
        return;
    uint32_t a = y < x ? y : x, b = y < x ? x : y;
    int n = u64set_add(&ac->seen, ((uint64_t)a << 32) | b);
    if (n < 0 || (n > 0 && add_alias(ac->r, &ac->cap, a, b, inplace_pair(g, x, y), why) != 0))
        ac->rc = -1;
}

/* Every overlapping pair of buffers (same chip and space), by address: the exact answer the
 * sweep below approximates. Used for --all, for comparisons (a new alias must not hide behind
 * an old one) and when in-place declarations exist (an in-place chain A -> B -> C would let
 * the sweep compare C with B only). Aliases go to r (when add), witnesses to wit. */
static int cmp_address(const void *x, const void *y, void *gp)
{
    const golden_graph *g = gp;
    const golden_buffer *a = &g->buffers[*(const uint32_t *)x], *b = &g->buffers[*(const uint32_t *)y];
    if (a->domain != b->domain)
        return a->domain < b->domain ? -1 : 1;
    if (a->address != b->address)
        return a->address < b->address ? -1 : 1;
    return *(const uint32_t *)x < *(const uint32_t *)y ? -1 : 1;
}

static int aliases_all_pairs(golden_dag_result *r, bool add, witness_set *wit)
{
    const golden_graph *g = r->g;
    uint32_t n = 0, *idx = malloc(((size_t)g->nbuffers + 1) * sizeof *idx);
    if (!idx)
        return -1;
    for (uint32_t i = 0; i < g->nbuffers; i++)
        if (g->buffers[i].size)
            idx[n++] = i;
    qsort_r(idx, n, sizeof *idx, cmp_address, (void *)g);
    size_t cap = r->naliases;
    int rc = 0;
    for (uint32_t i = 0; i < n && !rc; i++) {
        const golden_buffer *A = &g->buffers[idx[i]];
        for (uint32_t j = i + 1; j < n && !rc; j++) {
            const golden_buffer *B = &g->buffers[idx[j]];
            if (B->domain != A->domain || B->address >= A->address + A->size)
                break;
            const char *why = alias_reason(g, r->hb, idx[i], idx[j]);
            if (!why && wit)
                pair_witness(wit, g, r->hb, idx[i], idx[j]);
            if (why && add && add_alias(r, &cap, idx[i], idx[j], inplace_pair(g, idx[i], idx[j]),
                                        why) != 0)
                rc = -1;
        }
    }
    free(idx);
    if (!rc && add && r->naliases > 1)
        qsort(r->aliases, r->naliases, sizeof *r->aliases, cmp_alias);
    return rc;
}

/* A live range whose end happens strictly before its start is a broken plan, not a range. */
static int check_live_ranges(const golden_graph *g, const golden_hb *h, golden_error *err)
{
    for (uint32_t i = 0; i < g->nbuffers; i++) {
        const golden_buffer *b = &g->buffers[i];
        if (b->live_first != GOLDEN_NONE && golden_hb_before(h, b->live_last, b->live_first))
            return golden_fail_what(err, GOLDEN_EINVAL, g->name,
                                    "buffer \"%s\": live range [\"%s\", \"%s\"] ends before it "
                                    "starts (its last use happens before its first)", b->id,
                                    g->ops[b->live_first].id, g->ops[b->live_last].id);
    }
    return GOLDEN_OK;
}

static bool has_inplace(const golden_graph *g)
{
    for (uint32_t i = 0; i < g->nbuffers; i++)
        if (g->buffers[i].inplace_of != GOLDEN_NONE)
            return true;
    return false;
}

typedef struct {
    const golden_graph *g;
    const golden_hb *h;
} live_sort;

/* The earliest endpoint in topological order: a range entirely before another sorts first. */
static uint32_t live_start(const live_sort *c, uint32_t i)
{
    uint32_t f = c->h->topo_index[c->g->buffers[i].live_first];
    uint32_t l = c->h->topo_index[c->g->buffers[i].live_last];
    return f < l ? f : l;
}

static int cmp_live_first(const void *x, const void *y, void *cp)
{
    uint32_t a = *(const uint32_t *)x, b = *(const uint32_t *)y;
    uint32_t ta = live_start(cp, a), tb = live_start(cp, b);
    if (ta != tb)
        return ta < tb ? -1 : 1;
    return a < b ? -1 : a > b;
}

/* Like the race sweep, per byte: buffers without a live range stay in one map (every overlap
 * with them aliases); buffers with one enter a second map in the topological order of their
 * first use and are checked against the last buffer that held each byte. Ordered pairs chain,
 * so a plan with any aliasing pair reports at least one pair for every aliased range. */
static int check_aliases(golden_dag_result *r, witness_set *wit)
{
    const golden_graph *g = r->g;
    uint32_t n = g->nbuffers, nd = g->ndomains;
    uint32_t *idx = malloc(((size_t)n + 1) * sizeof *idx);
    golden_imap **fixed = calloc((size_t)nd + 1, sizeof *fixed);
    golden_imap **live = calloc((size_t)nd + 1, sizeof *live);
    alias_ctx ac = {.r = r, .wit = wit};
    uint32_t m = 0;
    if (!idx || !fixed || !live)
        ac.rc = -1;
    for (uint32_t i = 0; i < n && !ac.rc; i++) {
        const golden_buffer *b = &g->buffers[i];
        if (!b->size)
            continue;
        if (b->live_first != GOLDEN_NONE) {
            idx[m++] = i;
            continue;
        }
        if (!fixed[b->domain] && !(fixed[b->domain] = golden_imap_new())) {
            ac.rc = -1;
            break;
        }
        ac.cur = i;
        if (golden_imap_access(fixed[b->domain], b->address, b->address + b->size, true, i, 0,
                               on_alias_seg, &ac) != 0)
            ac.rc = -1;
    }
    if (!ac.rc) {
        live_sort ls = {g, r->hb};
        qsort_r(idx, m, sizeof *idx, cmp_live_first, &ls);
    }
    for (uint32_t k = 0; k < m && !ac.rc; k++) {
        const golden_buffer *b = &g->buffers[idx[k]];
        ac.cur = idx[k];
        if (fixed[b->domain])
            golden_imap_query(fixed[b->domain], b->address, b->address + b->size, on_alias_seg,
                              &ac);
        if (!live[b->domain] && !(live[b->domain] = golden_imap_new())) {
            ac.rc = -1;
            break;
        }
        if (golden_imap_access(live[b->domain], b->address, b->address + b->size, true,
                               idx[k], 0, on_alias_seg, &ac) != 0)
            ac.rc = -1;
    }
    for (uint32_t d = 0; d < nd && fixed && live; d++) {
        golden_imap_free(fixed[d]);
        golden_imap_free(live[d]);
    }
    free(fixed);
    free(live);
    free(idx);
    free(ac.seen.keys);
    if (ac.rc == 0 && r->naliases > 1)
        qsort(r->aliases, r->naliases, sizeof *r->aliases, cmp_alias);
    return ac.rc;
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
    if (golden_hb_build(g, drop, r->hb, err) != 0) {
        free(r->hb);
        r->hb = NULL;
        return GOLDEN_ERR;
    }
    r->cyclic = r->hb->norder < g->nops;
    if (r->cyclic)
        return GOLDEN_OK; /* clocks are incomplete: a deadlock is the finding */
    race_acc ra = {.g = g, .h = r->hb};
    int rc = all ? sweep_all_pairs(&ra) : sweep_races(&ra);
    free(ra.seen.keys);
    if (rc != 0) {
        free(ra.v);
        golden_dag_result_free(r);
        return golden_fail_what(err, GOLDEN_ENOMEM, g->name, "out of memory in the race sweep");
    }
    if (ra.n > 1)
        qsort_r(ra.v, ra.n, sizeof *ra.v, cmp_race, (void *)g);
    r->races = ra.v;
    r->nraces = ra.n;
    if (check_live_ranges(g, r->hb, err) != 0) {
        golden_dag_result_free(r);
        return GOLDEN_ERR;
    }
    if ((all || has_inplace(g) ? aliases_all_pairs(r, true, NULL) : check_aliases(r, NULL)) != 0) {
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
        golden_hb_free(r->hb);
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

static uint32_t queue_index_of(const golden_graph *g, uint32_t q, uint32_t op);

uint32_t golden_dag_fix_signal(const golden_dag_result *r, uint32_t a, uint32_t b)
{
    const golden_graph *g = r->g;
    uint32_t q = g->ops[a].queue;
    if (q == GOLDEN_NONE || r->cyclic)
        return GOLDEN_NONE;
    /* from the op after a on its queue (qops holds barriers too) */
    for (uint32_t p = queue_index_of(g, q, a) + 1; p < g->qops_count[q]; p++) {
        uint32_t s = g->qops[g->qops_first[q] + p];
        if (g->ops[s].kind != GOLDEN_OP_SIGNAL)
            continue;
        /* a later signal comes after this one, so only the first can qualify */
        return golden_hb_le(r->hb, b, s) ? GOLDEN_NONE : s;
    }
    return GOLDEN_NONE;
}

/* ---- syncs ---- */
static int list_syncs(const golden_graph *g, golden_sync **out, size_t *n)
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

static int set_exposed(golden_race *rc, const golden_graph *g, const golden_hb *h,
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
    return r->all || r->naliases == 0 || has_inplace(r->g);
}

/* Mark cand's aliases that base does not have. Newness is decided over every aliasing pair of
 * both sides (as for races): with only the sweep's representatives, a new pair A/C could
 * hide behind old pairs A/B and B/C. */
static int mark_new_aliases(const golden_dag_result *base, golden_dag_result *cand)
{
    if (!aliases_complete(cand) || (base->naliases && !cand->all)) {
        free(cand->aliases);
        cand->aliases = NULL;
        cand->naliases = 0;
        if (aliases_all_pairs(cand, true, NULL) != 0)
            return -1;
    }
    golden_dag_result full = *base;
    bool own = !aliases_complete(base);
    if (own) {
        full.aliases = NULL;
        full.naliases = 0;
        if (aliases_all_pairs(&full, true, NULL) != 0)
            return -1;
    }
    golden_strmap seen = {0};
    char **keys = calloc(full.naliases + 1, sizeof *keys);
    int rc = keys ? 0 : -1;
    for (size_t i = 0; i < full.naliases && !rc; i++) {
        size_t len;
        if (!(keys[i] = pair_key(base->g, &full.aliases[i], &len)) ||
            golden_strmap_put(&seen, keys[i], len, 1, NULL) < 0)
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
        cand->aliases[i].is_new = !golden_strmap_get(&seen, k, len, NULL);
        cand->new_aliases += cand->aliases[i].is_new;
        free(k);
    }
    golden_strmap_free(&seen);
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
        if (set_exposed(x, g, base->hb, set, n, ab ? a : b, ab ? b : a) != 0) {
            golden_dag_result_free(cand);
            return golden_fail_what(err, GOLDEN_ENOMEM, g->name, "out of memory");
        }
    }
    if (mark_new_aliases(base, cand) != 0) {
        golden_dag_result_free(cand);
        return golden_fail_what(err, GOLDEN_ENOMEM, g->name, "out of memory");
    }
    return GOLDEN_OK;
}

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
    bool use_all;
    bool fast;                  /* base race-free: witnesses decide waits and after edges */
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

/* One candidate sync: idle when removing it alone adds no race, alias or cycle. */
static int idle_item(void *ctx, size_t i, int worker, golden_error *err)
{
    idle_job *job = ctx;
    const golden_graph *g = job->base->g;
    const golden_hb *h = job->base->hb;
    idle_scratch *sc = &job->scratch[worker];
    if (!sc->ready && scratch_init(job, sc) != 0)
        return golden_fail_what(err, GOLDEN_ENOMEM, g->name, "out of memory");
    if (job->progress && worker == 0)
        golden_progress_update(job->progress, i);
    const golden_sync *s = &job->cands[i];
    /* a sync that joins two queues' lanes changes the clock layout itself: re-check */
    bool link = s->kind == GOLDEN_SYNC_AFTER ? h->link_after[s->after]
                : s->kind == GOLDEN_SYNC_WAIT ? h->link_op[s->op] : false;
    if (job->fast && !link) {
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
    race_acc ra = {.g = g, .h = r->hb, .wit = &w};
    int rc = sweep_races(&ra);
    free(ra.seen.keys);
    free(ra.v);
    golden_dag_result scratch = *r;
    scratch.aliases = NULL;
    scratch.naliases = 0;
    if (rc == 0)
        rc = r->naliases || has_inplace(g) ? aliases_all_pairs(&scratch, false, &w)
                                           : check_aliases(&scratch, &w);
    free(scratch.aliases);
    uint32_t n = g->nops;
    *first = calloc((size_t)n + 2, sizeof **first);
    *wa = malloc((w.n + 1) * sizeof **wa);
    *wle = malloc(w.n + 1);
    if (rc != 0 || w.oom || !*first || !*wa || !*wle) {
        wit_free(&w);
        return -1;
    }
    for (size_t i = 0; i < w.n; i++)
        (*first)[w.b[i] + 1]++;
    for (uint32_t i = 0; i < n; i++)
        (*first)[i + 1] += (*first)[i];
    uint32_t *fill = malloc(((size_t)n + 1) * sizeof *fill);
    if (!fill) {
        wit_free(&w);
        return -1;
    }
    memcpy(fill, *first, ((size_t)n + 1) * sizeof *fill);
    for (size_t i = 0; i < w.n; i++) {
        uint32_t at = fill[w.b[i]]++;
        (*wa)[at] = w.a[i];
        (*wle)[at] = w.le[i];
    }
    free(fill);
    wit_free(&w);
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
    if (list_syncs(g, &all, &n) != 0)
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
    if (r->nraces == 0) {
        if (collect_witnesses(r, &wfirst, &wa, &wle) != 0) {
            rc = golden_fail_what(err, GOLDEN_ENOMEM, g->name, "out of memory");
            goto done;
        }
        job.fast = true;
        job.wfirst = wfirst;
        job.wa = wa;
        job.wle = wle;
    }
    job.use_all = r->nraces > 0;
    job.base_all_races = r->nraces;
    job.base_all_aliases = r->naliases;
    /* re-checks count every pair; the base's counts must be every pair's too */
    bool rechecks = job.use_all;
    for (size_t i = 0; i < nrest && !rechecks; i++)
        rechecks = rest[i].kind == GOLDEN_SYNC_AFTER ? h->link_after[rest[i].after]
                   : rest[i].kind == GOLDEN_SYNC_WAIT ? h->link_op[rest[i].op] : false;
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
    rc = golden_parallel_for(nrest, threads, idle_item, &job, err);
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

/* ---- baseline comparison ---- */
static uint32_t queue_index_of(const golden_graph *g, uint32_t q, uint32_t op)
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
    uint32_t at = queue_index_of(g, q, op);
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
    if (list_syncs(b, &bs, &nb) != 0 || list_syncs(c, &cs, &nc) != 0) {
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
            if (set_exposed(x, b, base->hb, gone, ngone, ab ? ia : ib, ab ? ib : ia) != 0) {
                rc = golden_fail_what(err, GOLDEN_ENOMEM, c->name, "out of memory");
                goto done;
            }
        }
    }
    if (mark_new_aliases(base, cand) != 0)
        rc = golden_fail_what(err, GOLDEN_ENOMEM, c->name, "out of memory");
done:
    free(bs);
    free(cs);
    free(gone);
    return rc;
}

/* ---- report ---- */
static json_t *sync_json_name(const golden_graph *g, const golden_sync *s)
{
    char name[1024];
    golden_sync_name(g, s, name, sizeof name);
    return json_string(name);
}

/* jansson's *_new functions steal references and tolerate NULL by failing; collect failures. */
static void put(json_t *o, const char *k, json_t *v, int *bad)
{
    if (!v || json_object_set_new(o, k, v) != 0)
        *bad = 1;
}

static void push(json_t *a, json_t *v, int *bad)
{
    if (!v || json_array_append_new(a, v) != 0)
        *bad = 1;
}

static json_t *range_json(uint64_t lo, uint64_t hi)
{
    return json_pack("[II]", (json_int_t)lo, (json_int_t)hi);
}

static json_t *race_json(const golden_dag_result *r, const golden_race *x,
                         const golden_graph *sync_graph, int *bad)
{
    const golden_graph *g = r->g;
    const golden_access *A = &g->accesses[x->a], *B = &g->accesses[x->b];
    const golden_buffer *BA = &g->buffers[A->buffer], *BB = &g->buffers[B->buffer];
    json_t *o = json_object();
    if (!o) {
        *bad = 1;
        return NULL;
    }
    put(o, "a", json_string(g->ops[A->op].id), bad);
    put(o, "b", json_string(g->ops[B->op].id), bad);
    put(o, "kind", json_string(golden_race_kind_name(x->kind)), bad);
    put(o, "buffer", json_string(BA->id), bad);
    if (A->buffer != B->buffer)
        put(o, "buffer_b", json_string(BB->id), bad);
    put(o, "range", range_json(x->lo - BA->address, x->hi - BA->address), bad);
    put(o, "address", range_json(x->lo, x->hi), bad);
    put(o, "queue_a", json_string(g->queues[g->ops[A->op].queue].id), bad);
    put(o, "queue_b", json_string(g->queues[g->ops[B->op].queue].id), bad);
    put(o, "access_a", json_pack("{s:s,s:I}", "list", A->write ? "writes" : "reads", "index",
                                 (json_int_t)A->index), bad);
    put(o, "access_b", json_pack("{s:s,s:I}", "list", B->write ? "writes" : "reads", "index",
                                 (json_int_t)B->index), bad);
    char hint[1024];
    uint32_t s = golden_dag_fix_signal(r, A->op, B->op);
    if (s != GOLDEN_NONE)
        snprintf(hint, sizeof hint, "make %s wait for event \"%s\" (signal %s on %s) before %s",
                 g->queues[g->ops[B->op].queue].id, g->events[g->ops[s].event].id, g->ops[s].id,
                 g->queues[g->ops[A->op].queue].id, g->ops[B->op].id);
    else
        snprintf(hint, sizeof hint, "add a signal after %s on %s and a wait for it before %s on %s",
                 g->ops[A->op].id, g->queues[g->ops[A->op].queue].id, g->ops[B->op].id,
                 g->queues[g->ops[B->op].queue].id);
    put(o, "hint", json_string(hint), bad);
    if (r->compared) {
        put(o, "new", json_boolean(x->is_new), bad);
        json_t *ex = json_array();
        for (uint32_t i = 0; ex && i < x->nexposed; i++)
            push(ex, sync_json_name(sync_graph, &x->exposed_by[i]), bad);
        put(o, "exposed_by", ex, bad);
    }
    return o;
}

json_t *golden_dag_report_json(const golden_dag_result *r, const char *graph,
                               const char *baseline, const char *mode)
{
    const golden_graph *g = r->g;
    int bad = 0;
    json_t *doc = json_object();
    if (!doc)
        return NULL;
    put(doc, "schema", json_string("calculet-dag-report/v1"), &bad);
    put(doc, "graph", json_string(graph), &bad);
    put(doc, "mode", json_string(mode), &bad);
    put(doc, "verdict", json_string(golden_dag_passed(r) ? "pass" : "fail"), &bad);
    put(doc, "ops", json_integer(g->nops), &bad);
    put(doc, "queues", json_integer(g->nqueues), &bad);
    put(doc, "accesses", json_integer(g->naccesses), &bad);
    put(doc, "all_pairs", json_boolean(r->all), &bad);
    /* removed syncs are named in the graph they came from: the baseline's for a comparison */
    const golden_graph *sg = r->base_g ? r->base_g : g;
    json_t *races = json_array();
    for (size_t i = 0; races && i < r->nraces; i++)
        push(races, race_json(r, &r->races[i], sg, &bad), &bad);
    put(doc, "races", races, &bad);
    json_t *cycles = json_array();
    if (cycles && r->cyclic) {
        json_t *c = json_array();
        for (uint32_t i = 0; c && i < r->hb->ncycle; i++)
            push(c, json_string(g->ops[r->hb->cycle[i]].id), &bad);
        push(cycles, c, &bad);
    }
    put(doc, "cycles", cycles, &bad);
    json_t *aliases = json_array();
    for (size_t i = 0; aliases && i < r->naliases; i++) {
        const golden_alias *x = &r->aliases[i];
        const golden_buffer *A = &g->buffers[x->a], *B = &g->buffers[x->b];
        json_t *o = json_object();
        if (!o) {
            bad = 1;
            break;
        }
        put(o, "a", json_string(A->id), &bad);
        put(o, "b", json_string(B->id), &bad);
        put(o, "address", range_json(x->lo, x->hi), &bad);
        put(o, "bytes", json_integer((json_int_t)(x->hi - x->lo)), &bad);
        if (A->live_first != GOLDEN_NONE)
            put(o, "a_live", json_pack("[ss]", g->ops[A->live_first].id, g->ops[A->live_last].id), &bad);
        if (B->live_first != GOLDEN_NONE)
            put(o, "b_live", json_pack("[ss]", g->ops[B->live_first].id, g->ops[B->live_last].id), &bad);
        put(o, "inplace", json_boolean(x->inplace), &bad);
        put(o, "reason", json_string(x->reason), &bad);
        if (r->compared)
            put(o, "new", json_boolean(x->is_new), &bad);
        push(aliases, o, &bad);
    }
    put(doc, "aliases", aliases, &bad);
    json_t *idle = json_array();
    for (size_t i = 0; idle && i < r->nidle; i++) {
        const golden_idle_sync *s = &r->idle[i];
        push(idle, json_pack("{s:o,s:s,s:s}", "sync", sync_json_name(g, &s->sync), "kind",
                             golden_sync_kind_name(s->sync.kind), "reason",
                             s->why == GOLDEN_IDLE_IMPLIED ? "implied" : "orders-no-conflict"),
             &bad);
    }
    put(doc, "redundant_syncs", idle, &bad);
    if (r->redundant_done)
        put(doc, "redundant_note",
            json_string("each listed sync is safe to remove on its own; they are not safe to "
                        "remove all at once: verify a set with --remove ID,..."), &bad);
    if (r->compared) {
        if (baseline)
            put(doc, "baseline", json_string(baseline), &bad);
        put(doc, "baseline_races", json_integer((json_int_t)r->base_races), &bad);
        put(doc, "new_races", json_integer((json_int_t)r->new_races), &bad);
        put(doc, "new_aliases", json_integer((json_int_t)r->new_aliases), &bad);
        /* with --baseline the removed syncs are the baseline's; with --remove, this graph's */
        json_t *rm = json_array(), *mv = json_array(), *ad = json_array();
        for (size_t i = 0; rm && i < r->nremoved; i++)
            push(rm, sync_json_name(sg, &r->removed[i]), &bad);
        for (size_t i = 0; mv && i < r->nmoved; i++)
            push(mv, sync_json_name(sg, &r->moved[i]), &bad);
        for (size_t i = 0; ad && i < r->nadded; i++)
            push(ad, json_string(r->added[i]), &bad);
        put(doc, "removed_syncs", rm, &bad);
        put(doc, "moved_syncs", mv, &bad);
        put(doc, "added_syncs", ad, &bad);
    }
    if (bad) {
        json_decref(doc);
        return NULL;
    }
    return doc;
}

/* ---- statistics and diff ---- */
typedef struct {
    int64_t chip;
    uint64_t pos;
    int64_t delta;
} live_event;

static int cmp_live_event(const void *x, const void *y)
{
    const live_event *a = x, *b = y;
    if (a->chip != b->chip)
        return a->chip < b->chip ? -1 : 1;
    if (a->pos != b->pos)
        return a->pos < b->pos ? -1 : 1;
    return (a->delta > b->delta) - (a->delta < b->delta); /* frees before allocations */
}

static const char *d2d_bucket(uint64_t bytes)
{
    static const char *names[] = {"<=1KiB", "<=4KiB", "<=16KiB", "<=64KiB", "<=256KiB", "<=1MiB"};
    uint64_t lim = 1024;
    for (int i = 0; i < 6; i++, lim *= 4)
        if (bytes <= lim)
            return names[i];
    return ">1MiB";
}

static json_t *stats_with(const golden_graph *g, const golden_hb *hb);

json_t *golden_dag_stats(const golden_graph *g)
{
    golden_hb h;
    golden_error err;
    if (golden_hb_build(g, NULL, &h, &err) != 0)
        return NULL;
    json_t *o = stats_with(g, &h);
    golden_hb_free(&h);
    return o;
}

static json_t *stats_with(const golden_graph *g, const golden_hb *hb)
{
    int bad = 0;
    json_t *o = json_object();
    if (!o)
        return NULL;
    uint32_t nf = g->nfamilies + 1, K = g->nqueues;
    uint64_t *cnt = calloc((size_t)nf * (K ? K : 1), sizeof *cnt);
    uint64_t *fam = calloc(nf, sizeof *fam);
    live_event *ev = malloc(((size_t)g->nbuffers * 2 + 1) * sizeof *ev);
    if (!cnt || !fam || !ev) {
        free(cnt);
        free(fam);
        free(ev);
        json_decref(o);
        return NULL;
    }
    uint64_t sig = 0, wait = 0, bar = 0, d2d = 0, d2d_bytes = 0, dsum = 0, dcount = 0;
    json_t *hist = json_object();
    for (uint32_t i = 0; i < g->nops; i++) {
        const golden_op *op = &g->ops[i];
        if (op->data_size >= 0) {
            dsum += (uint64_t)op->data_size;
            dcount++;
        }
        if (op->kind == GOLDEN_OP_SIGNAL)
            sig++;
        else if (op->kind == GOLDEN_OP_WAIT)
            wait++;
        else if (op->kind == GOLDEN_OP_BARRIER)
            bar++;
        if (op->kind != GOLDEN_OP_COMPUTE)
            continue;
        uint32_t f = op->family == GOLDEN_NONE ? g->nfamilies : op->family;
        cnt[(size_t)f * K + op->queue]++;
        fam[f]++;
        if (op->family != GOLDEN_NONE && strstr(g->families[op->family], "d2d")) {
            uint64_t bytes = 0;
            if (op->data_size >= 0)
                bytes = (uint64_t)op->data_size;
            else
                for (uint32_t k = 0; k < op->acc_count; k++)
                    if (g->accesses[op->acc_first + k].write)
                        bytes += g->accesses[op->acc_first + k].hi - g->accesses[op->acc_first + k].lo;
            d2d++;
            d2d_bytes += bytes;
            const char *bk = d2d_bucket(bytes);
            json_t *cur = hist ? json_object_get(hist, bk) : NULL;
            if (hist)
                put(hist, bk, json_integer(cur ? json_integer_value(cur) + 1 : 1), &bad);
        }
    }
    json_t *by = json_array(), *fams = json_object();
    for (uint32_t f = 0; f < nf; f++) {
        const char *name = f < g->nfamilies ? g->families[f] : "(none)";
        if (fam[f] && fams)
            put(fams, name, json_integer((json_int_t)fam[f]), &bad);
        for (uint32_t q = 0; q < K; q++)
            if (cnt[(size_t)f * K + q] && by)
                push(by, json_pack("{s:s,s:I,s:s,s:I}", "family", name, "chip",
                                   (json_int_t)g->queues[q].chip, "queue", g->queues[q].id,
                                   "count", (json_int_t)cnt[(size_t)f * K + q]), &bad);
    }
    size_t ne = 0;
    bool topo = hb && hb->norder == g->nops && g->nops;
    for (uint32_t i = 0; i < g->nbuffers; i++) {
        const golden_buffer *b = &g->buffers[i];
        uint64_t s = 0, e = g->nops;
        if (b->live_first != GOLDEN_NONE) {
            uint64_t p1 = topo ? hb->topo_index[b->live_first] : b->live_first;
            uint64_t p2 = topo ? hb->topo_index[b->live_last] : b->live_last;
            s = p1 < p2 ? p1 : p2;
            e = (p1 < p2 ? p2 : p1) + 1;
        }
        ev[ne++] = (live_event){b->chip, s, (int64_t)b->size};
        ev[ne++] = (live_event){b->chip, e, -(int64_t)b->size};
    }
    qsort(ev, ne, sizeof *ev, cmp_live_event);
    json_t *peak = json_array();
    for (size_t i = 0; i < ne && peak;) {
        int64_t chip = ev[i].chip, cur = 0, best = 0;
        for (; i < ne && ev[i].chip == chip; i++) {
            cur += ev[i].delta;
            if (cur > best)
                best = cur;
        }
        push(peak, json_pack("{s:I,s:I}", "chip", (json_int_t)chip, "bytes", (json_int_t)best), &bad);
    }
    put(o, "ops", json_integer(g->nops), &bad);
    put(o, "queues", json_integer(g->nqueues), &bad);
    put(o, "buffers", json_integer(g->nbuffers), &bad);
    put(o, "accesses", json_integer(g->naccesses), &bad);
    put(o, "families", fams, &bad);
    put(o, "by_family_queue", by, &bad);
    put(o, "syncs", json_pack("{s:I,s:I,s:I,s:I}", "signal", (json_int_t)sig, "wait",
                              (json_int_t)wait, "barrier", (json_int_t)bar, "after",
                              (json_int_t)g->nafter), &bad);
    put(o, "d2d", json_pack("{s:I,s:I,s:o}", "commands", (json_int_t)d2d, "bytes_static",
                            (json_int_t)d2d_bytes, "size_histogram", hist ? hist : json_null()),
        &bad);
    put(o, "data_size_sum_structural", json_integer((json_int_t)dsum), &bad);
    put(o, "data_size_ops", json_integer((json_int_t)dcount), &bad);
    put(o, "peak_live_bytes", peak, &bad);
    put(o, "peak_live_order", json_string(topo ? "topological" : "file"), &bad);
    free(cnt);
    free(fam);
    free(ev);
    if (bad) {
        json_decref(o);
        return NULL;
    }
    return o;
}

static json_int_t int_at(json_t *o, const char *k1, const char *k2)
{
    json_t *v = json_object_get(o, k1);
    if (k2)
        v = json_object_get(v, k2);
    return json_is_integer(v) ? json_integer_value(v) : 0;
}

json_t *golden_dag_diff_json(const char *base_path, json_t *base_stats, const char *cand_path,
                             json_t *cand_stats)
{
    int bad = 0;
    json_t *doc = json_object();
    if (!doc)
        return NULL;
    put(doc, "schema", json_string("calculet-dag-report/v1"), &bad);
    put(doc, "graph", json_string(cand_path), &bad);
    put(doc, "baseline", json_string(base_path), &bad);
    put(doc, "mode", json_string("diff"), &bad);
    put(doc, "verdict", json_string("pass"), &bad);
    put(doc, "ops", json_integer(int_at(cand_stats, "ops", NULL)), &bad);
    put(doc, "queues", json_integer(int_at(cand_stats, "queues", NULL)), &bad);
    put(doc, "races", json_array(), &bad);
    put(doc, "cycles", json_array(), &bad);
    put(doc, "aliases", json_array(), &bad);
    put(doc, "redundant_syncs", json_array(), &bad);
    json_t *d = json_object(), *fam = json_array();
    json_t *bf = json_object_get(base_stats, "families"), *cf = json_object_get(cand_stats, "families");
    const char *k;
    json_t *v;
    json_object_foreach(bf, k, v) {
        json_int_t c = int_at(cand_stats, "families", k), b = json_integer_value(v);
        push(fam, json_pack("{s:s,s:I,s:I,s:I}", "family", k, "baseline", b, "candidate", c,
                            "delta", c - b), &bad);
    }
    json_object_foreach(cf, k, v) {
        if (json_object_get(bf, k))
            continue;
        push(fam, json_pack("{s:s,s:I,s:I,s:I}", "family", k, "baseline", (json_int_t)0,
                            "candidate", json_integer_value(v), "delta", json_integer_value(v)),
             &bad);
    }
    put(d, "ops_delta", json_integer(int_at(cand_stats, "ops", NULL) - int_at(base_stats, "ops", NULL)), &bad);
    put(d, "families", fam, &bad);
    json_t *sy = json_object();
    static const char *sk[] = {"signal", "wait", "barrier", "after"};
    for (int i = 0; i < 4; i++)
        put(sy, sk[i], json_integer(int_at(cand_stats, "syncs", sk[i]) - int_at(base_stats, "syncs", sk[i])), &bad);
    put(d, "syncs", sy, &bad);
    put(d, "d2d_commands", json_integer(int_at(cand_stats, "d2d", "commands") - int_at(base_stats, "d2d", "commands")), &bad);
    put(d, "data_size_sum_structural", json_integer(int_at(cand_stats, "data_size_sum_structural", NULL) - int_at(base_stats, "data_size_sum_structural", NULL)), &bad);
    put(doc, "diff", json_pack("{s:O,s:O,s:o,s:s}", "baseline", base_stats, "candidate", cand_stats,
                               "delta", d ? d : json_null(), "note",
                               "data_size sums are static structural figures for comparing "
                               "candidates, never measured traffic (handbook 13.3)"), &bad);
    if (bad) {
        json_decref(doc);
        return NULL;
    }
    return doc;
}
