/* Interval map as a treap of disjoint segments keyed by their start: an access splits at most
 * two segments, visits the ones it covers and replaces or annotates them in O(log n + k).
 * An access to exactly one existing segment (the common case: the same tile of a buffer
 * touched again) is one descent and an update in place. Nodes come from blocks of the map
 * (a free list, no malloc per segment) and hold up to two reads in place. */
#include "graph/imap.h"
#include "util/vec.h"

#include <stdlib.h>
#include <string.h>

#define INLINE_READS 2
#define BLOCK_NODES 1024

typedef struct node {
    golden_imap_seg seg;
    uint32_t rcap;
    uint32_t prio;
    struct node *l, *r;   /* l: the next free node while on the free list */
    golden_imap_read inl[INLINE_READS];
} node;

typedef struct node_block {
    struct node_block *next;
    node nodes[BLOCK_NODES];
} node_block;

typedef struct {
    node **v;
    size_t n, cap;
} node_vec;

struct golden_imap {
    node *root;
    size_t count;
    uint64_t rng;
    int oom;
    node *free_nodes;
    node_block *blocks;
    size_t block_used;    /* nodes handed out of the newest block */
    node_vec tmp;         /* the segments one read covers (kept between calls) */
};

static uint32_t next_prio(golden_imap *m)
{
    m->rng ^= m->rng << 13;
    m->rng ^= m->rng >> 7;
    m->rng ^= m->rng << 17;
    return (uint32_t)(m->rng >> 16);
}

static node *new_node(golden_imap *m, uint64_t lo, uint64_t hi, uint32_t write)
{
    node *n = m->free_nodes;
    if (n) {
        m->free_nodes = n->l;
    } else {
        if (!m->blocks || m->block_used == BLOCK_NODES) {
            node_block *b = malloc(sizeof *b);
            if (!b) {
                m->oom = 1;
                return NULL;
            }
            b->next = m->blocks;
            m->blocks = b;
            m->block_used = 0;
        }
        n = &m->blocks->nodes[m->block_used++];
    }
    memset(n, 0, sizeof *n);
    n->seg.reads = n->inl;
    n->rcap = INLINE_READS;
    n->seg.lo = lo;
    n->seg.hi = hi;
    n->seg.write = write;
    n->prio = next_prio(m);
    m->count++;
    return n;
}

static void free_node(golden_imap *m, node *n)
{
    if (n->seg.reads != n->inl)
        free(n->seg.reads);
    n->l = m->free_nodes;
    m->free_nodes = n;
    m->count--;
}

static void free_tree(golden_imap *m, node *t)
{
    if (!t)
        return;
    free_tree(m, t->l);
    free_tree(m, t->r);
    free_node(m, t);
}

golden_imap *lg_imap_new(void)
{
    golden_imap *m = calloc(1, sizeof *m);
    if (m)
        m->rng = 0x9E3779B97F4A7C15ULL;
    return m;
}

void lg_imap_free(golden_imap *m)
{
    if (!m)
        return;
    free_tree(m, m->root);
    for (node_block *b = m->blocks, *next; b; b = next) {
        next = b->next;
        free(b);
    }
    free(m->tmp.v);
    free(m);
}

/* Split t into keys < key and keys >= key. */
static void split(node *t, uint64_t key, node **a, node **b)
{
    if (!t) {
        *a = *b = NULL;
        return;
    }
    if (t->seg.lo < key) {
        split(t->r, key, &t->r, b);
        *a = t;
    } else {
        split(t->l, key, a, &t->l);
        *b = t;
    }
}

static node *merge(node *a, node *b)
{
    if (!a)
        return b;
    if (!b)
        return a;
    if (a->prio > b->prio) {
        a->r = merge(a->r, b);
        return a;
    }
    b->l = merge(a, b->l);
    return b;
}

static int set_read(golden_imap *m, node *n, uint32_t slot, uint32_t acc)
{
    for (uint32_t i = 0; i < n->seg.nreads; i++)
        if (n->seg.reads[i].slot == slot) {
            n->seg.reads[i].acc = acc;
            return 0;
        }
    if (n->seg.nreads == n->rcap) {
        uint32_t nc = n->rcap * 2;
        bool inl = n->seg.reads == n->inl;
        golden_imap_read *r = realloc(inl ? NULL : n->seg.reads, nc * sizeof *r);
        if (!r) {
            m->oom = 1;
            return -1;
        }
        if (inl)
            memcpy(r, n->inl, sizeof n->inl);
        n->seg.reads = r;
        n->rcap = nc;
    }
    n->seg.reads[n->seg.nreads++] = (golden_imap_read){slot, acc};
    return 0;
}

static int copy_state(golden_imap *m, node *dst, const node *src)
{
    dst->seg.write = src->seg.write;
    for (uint32_t i = 0; i < src->seg.nreads; i++)
        if (set_read(m, dst, src->seg.reads[i].slot, src->seg.reads[i].acc) != 0)
            return -1;
    return 0;
}

/* Make `at` a segment boundary: cut the segment that strictly contains it. */
static int cut_at(golden_imap *m, uint64_t at)
{
    node *t = m->root, *hit = NULL;
    while (t) {
        if (t->seg.lo <= at) {
            hit = t;
            t = t->r;
        } else {
            t = t->l;
        }
    }
    if (!hit || hit->seg.lo == at || hit->seg.hi <= at)
        return 0;
    node *tail = new_node(m, at, hit->seg.hi, UINT32_MAX);
    if (!tail || copy_state(m, tail, hit) != 0) {
        if (tail)
            free_node(m, tail);
        return -1;
    }
    hit->seg.hi = at;
    node *a, *b;
    split(m->root, at, &a, &b);
    m->root = merge(merge(a, tail), b);
    return 0;
}

static void visit(node *t, golden_imap_fn fn, void *ctx)
{
    if (!t)
        return;
    visit(t->l, fn, ctx);
    fn(ctx, &t->seg, t->seg.lo, t->seg.hi);
    visit(t->r, fn, ctx);
}

static int collect(node *t, node_vec *out)
{
    if (!t)
        return 0;
    if (collect(t->l, out) != 0)
        return -1;
    if (VEC_GROW(out->v, out->n, out->cap, 16) != 0)
        return -1;
    out->v[out->n++] = t;
    node *r = t->r;
    t->l = t->r = NULL;
    return collect(r, out);
}

static node *min_node(node *t)
{
    while (t && t->l)
        t = t->l;
    return t;
}

static node *max_node(node *t)
{
    while (t && t->r)
        t = t->r;
    return t;
}

static bool same_state(const node *a, const node *b)
{
    if (a->seg.write != b->seg.write || a->seg.nreads != b->seg.nreads)
        return false;
    for (uint32_t i = 0; i < a->seg.nreads; i++) {
        bool found = false;
        for (uint32_t j = 0; j < b->seg.nreads && !found; j++)
            found = a->seg.reads[i].slot == b->seg.reads[j].slot &&
                    a->seg.reads[i].acc == b->seg.reads[j].acc;
        if (!found)
            return false;
    }
    return true;
}

/* Append n to the sequence ending in *last, merging it into *last when contiguous and equal. */
static node *append(golden_imap *m, node *seq, node **last, node *n)
{
    if (*last && (*last)->seg.hi == n->seg.lo && same_state(*last, n)) {
        (*last)->seg.hi = n->seg.hi;
        free_node(m, n);
        return seq;
    }
    *last = n;
    return merge(seq, n);
}

/* n touches `at` and holds the read (slot, acc). */
static bool holds_read(const node *n, uint64_t at, uint32_t slot, uint32_t acc)
{
    if (!n || (n->seg.hi != at && n->seg.lo != at))
        return false;
    for (uint32_t i = 0; i < n->seg.nreads; i++)
        if (n->seg.reads[i].slot == slot && n->seg.reads[i].acc == acc)
            return true;
    return false;
}

int lg_imap_access(golden_imap *m, uint64_t lo, uint64_t hi, bool write, uint32_t acc,
                       uint32_t slot, golden_imap_fn fn, void *ctx)
{
    if (m->oom || lo >= hi)
        return m->oom ? -1 : 0;
    /* exactly one existing segment: visit it and update it in place. The general path below
     * would do the same: a write replaces the segment by {acc, no reads} and merges nothing; a
     * read adds (slot, acc) and merges with a touching neighbour only when that one holds the
     * same read (slot, acc) too (never in the race sweep, whose access numbers are unique):
     * then the general path runs. */
    node *t = m->root, *hit = NULL, *before = NULL, *after = NULL;
    while (t) {
        if (t->seg.lo <= lo) {
            before = hit;
            hit = t;
            t = t->r;
        } else {
            after = t;
            t = t->l;
        }
    }
    if (hit && hit->l)
        before = max_node(hit->l);
    if (hit && hit->seg.lo == lo && hit->seg.hi == hi &&
        (write || (!holds_read(before, lo, slot, acc) && !holds_read(after, hi, slot, acc)))) {
        if (fn)
            fn(ctx, &hit->seg, lo, hi);
        if (write) {
            hit->seg.write = acc;
            hit->seg.nreads = 0;
            return 0;
        }
        return set_read(m, hit, slot, acc);
    }
    if (cut_at(m, lo) != 0 || cut_at(m, hi) != 0)
        return -1;
    node *left, *mid, *right;
    split(m->root, lo, &left, &mid);
    split(mid, hi, &mid, &right);
    if (fn)
        visit(mid, fn, ctx);
    if (write) {
        free_tree(m, mid);
        node *n = new_node(m, lo, hi, acc);
        if (!n) {
            m->root = merge(left, right);
            return -1;
        }
        m->root = merge(merge(left, n), right);
        return 0;
    }
    node_vec segs = m->tmp;
    segs.n = 0;
    if (collect(mid, &segs) != 0) {
        m->tmp = segs;
        m->oom = 1;
        return -1;
    }
    node *seq = NULL, *last = NULL;
    uint64_t at = lo;
    int rc = 0;
    for (size_t i = 0; i <= segs.n; i++) {
        uint64_t next = i < segs.n ? segs.v[i]->seg.lo : hi;
        if (rc == 0 && at < next) {
            node *gap = new_node(m, at, next, UINT32_MAX);
            if (!gap || set_read(m, gap, slot, acc) != 0) {
                if (gap)
                    free_node(m, gap);
                rc = -1;
            } else {
                seq = append(m, seq, &last, gap);
            }
        }
        if (i == segs.n)
            break;
        node *s = segs.v[i];
        if (rc == 0 && set_read(m, s, slot, acc) != 0)
            rc = -1;
        at = s->seg.hi;
        seq = append(m, seq, &last, s);
    }
    m->tmp = segs;
    /* merge with the untouched neighbours too, so repeated reads keep the map small */
    node *lm = max_node(left), *sf = min_node(seq);
    if (rc == 0 && lm && sf && lm->seg.hi == sf->seg.lo && same_state(lm, sf)) {
        node *a, *b;
        lm->seg.hi = sf->seg.hi;
        split(seq, sf->seg.lo + 1, &a, &b);
        free_node(m, a);
        seq = b;
    }
    node *sl = seq ? max_node(seq) : lm, *rf = min_node(right);
    if (rc == 0 && sl && rf && sl->seg.hi == rf->seg.lo && same_state(sl, rf)) {
        node *a, *b;
        sl->seg.hi = rf->seg.hi;
        split(right, rf->seg.lo + 1, &a, &b);
        free_node(m, a);
        right = b;
    }
    m->root = merge(merge(left, seq), right);
    return rc;
}

static void query(const node *t, uint64_t lo, uint64_t hi, golden_imap_fn fn, void *ctx)
{
    if (!t)
        return;
    if (t->seg.lo > lo)
        query(t->l, lo, hi, fn, ctx);
    if (t->seg.lo < hi && t->seg.hi > lo) {
        uint64_t a = t->seg.lo > lo ? t->seg.lo : lo, b = t->seg.hi < hi ? t->seg.hi : hi;
        fn(ctx, &t->seg, a, b);
    }
    if (t->seg.lo < hi)
        query(t->r, lo, hi, fn, ctx);
}

void lg_imap_query(const golden_imap *m, uint64_t lo, uint64_t hi, golden_imap_fn fn,
                       void *ctx)
{
    if (lo < hi)
        query(m->root, lo, hi, fn, ctx);
}

void lg_imap_each(const golden_imap *m, golden_imap_fn fn, void *ctx)
{
    visit(m->root, fn, ctx);
}

size_t lg_imap_count(const golden_imap *m)
{
    return m->count;
}
