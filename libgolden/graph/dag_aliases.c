/* The memory plan: buffers whose byte ranges overlap must have live ranges ordered by
 * happens-before (or be declared in place); a sweep for the verdict, every pair where needed. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph/dag_internal.h"
#include "util/vec.h"

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
    if (VEC_GROW(r->aliases, r->naliases, *cap, 8) != 0)
        return -1;
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
            dag_wit_add(w, xs[a], ys[b], le);
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
    int n = dag_set_add(&ac->seen, ((uint64_t)a << 32) | b);
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

int dag_aliases_all_pairs(golden_dag_result *r, bool add, witness_set *wit)
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
int dag_check_live_ranges(const golden_graph *g, const golden_hb *h, golden_error *err)
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

bool dag_has_inplace(const golden_graph *g)
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
int dag_check_aliases(golden_dag_result *r, witness_set *wit)
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
        if (!fixed[b->domain] && !(fixed[b->domain] = lg_imap_new())) {
            ac.rc = -1;
            break;
        }
        ac.cur = i;
        if (lg_imap_access(fixed[b->domain], b->address, b->address + b->size, true, i, 0,
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
            lg_imap_query(fixed[b->domain], b->address, b->address + b->size, on_alias_seg,
                              &ac);
        if (!live[b->domain] && !(live[b->domain] = lg_imap_new())) {
            ac.rc = -1;
            break;
        }
        if (lg_imap_access(live[b->domain], b->address, b->address + b->size, true,
                               idx[k], 0, on_alias_seg, &ac) != 0)
            ac.rc = -1;
    }
    for (uint32_t d = 0; d < nd && fixed && live; d++) {
        lg_imap_free(fixed[d]);
        lg_imap_free(live[d]);
    }
    free(fixed);
    free(live);
    free(idx);
    free(ac.seen.keys);
    if (ac.rc == 0 && r->naliases > 1)
        qsort(r->aliases, r->naliases, sizeof *r->aliases, cmp_alias);
    return ac.rc;
}

