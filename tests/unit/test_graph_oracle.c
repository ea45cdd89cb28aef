/* The oracle: thousands of random small graphs checked by the library and by a brute-force
 * reachability + all-pairs implementation written here independently; they must agree. */
#include <stdlib.h>
#include <string.h>

#include "../tools/gengraph.h"
#include "cunit_main.h"
#include "golden/dag.h"
#include "graph/hb.h"

#define MAXN 1024
#define MAXA 4096

/* ---- the brute force, straight from the contract's words ---- */
typedef struct {
    int op, write, index, chip, space;
    long lo, hi;
} bf_access;

typedef struct {
    int n;
    char ids[MAXN][16];
    unsigned char *adj;   /* n x n: direct edge */
    unsigned char *reach; /* n x n: path of length >= 1 */
    bf_access acc[MAXA];
    int nacc;
    int cyclic;
} brute;

static int find_id(json_t *arr, const char *id)
{
    for (size_t i = 0; i < json_array_size(arr); i++)
        if (strcmp(json_string_value(json_object_get(json_array_get(arr, i), "id")), id) == 0)
            return (int)i;
    return -1;
}

/* drop_op: a wait (its signal edge) or a barrier to leave out; drop_after_op/k: the k-th
 * entry of that op's `after` list to leave out (-1: none) */
static void bf_edges(brute *b, json_t *root, const char *drop_op, int drop_after_op,
                     int drop_after_k)
{
    json_t *ops = json_object_get(root, "ops"), *queues = json_object_get(root, "queues");
    int n = b->n;
    memset(b->adj, 0, (size_t)n * n);
    /* program order per queue, barriers included on each queue they list */
    for (size_t q = 0; q < json_array_size(queues); q++) {
        const char *qid = json_string_value(json_object_get(json_array_get(queues, q), "id"));
        int last = -1;
        for (int i = 0; i < n; i++) {
            json_t *op = json_array_get(ops, (size_t)i);
            json_t *qq = json_object_get(op, "queue"), *ql = json_object_get(op, "queues");
            int on = 0;
            if (qq)
                on = strcmp(json_string_value(qq), qid) == 0;
            for (size_t k = 0; ql && k < json_array_size(ql); k++)
                on |= strcmp(json_string_value(json_array_get(ql, k)), qid) == 0;
            if (ql && drop_op && strcmp(b->ids[i], drop_op) == 0)
                on = 0; /* a removed barrier sits on no queue */
            if (!on)
                continue;
            if (last >= 0)
                b->adj[(size_t)last * n + i] = 1;
            last = i;
        }
    }
    for (int i = 0; i < n; i++) {
        json_t *op = json_array_get(ops, (size_t)i);
        json_t *af = json_object_get(op, "after");
        for (size_t k = 0; af && k < json_array_size(af); k++) {
            const char *p = json_string_value(json_array_get(af, k));
            if (i == drop_after_op && (int)k == drop_after_k)
                continue;
            /* a removed barrier is gone with its `after` edges, both ways */
            if (drop_op && json_object_get(json_array_get(ops, (size_t)find_id(ops, drop_op)), "queues") &&
                (strcmp(b->ids[i], drop_op) == 0 || strcmp(p, drop_op) == 0))
                continue;
            b->adj[(size_t)find_id(ops, p) * n + i] = 1;
        }
        json_t *kind = json_object_get(op, "kind");
        if (kind && strcmp(json_string_value(kind), "wait") == 0 &&
            !(drop_op && strcmp(b->ids[i], drop_op) == 0)) {
            const char *ev = json_string_value(json_object_get(op, "event"));
            for (int s = 0; s < n; s++) {
                json_t *so = json_array_get(ops, (size_t)s);
                json_t *sk = json_object_get(so, "kind");
                if (sk && strcmp(json_string_value(sk), "signal") == 0 &&
                    strcmp(json_string_value(json_object_get(so, "event")), ev) == 0)
                    b->adj[(size_t)s * n + i] = 1;
            }
        }
    }
}

static void bf_reach(brute *b)
{
    int n = b->n;
    int *stack = malloc(sizeof(int) * (size_t)n * n + sizeof(int));
    memset(b->reach, 0, (size_t)n * n);
    b->cyclic = 0;
    for (int s = 0; s < n; s++) {
        int top = 0;
        for (int v = 0; v < n; v++)
            if (b->adj[(size_t)s * n + v] && !b->reach[(size_t)s * n + v]) {
                b->reach[(size_t)s * n + v] = 1;
                stack[top++] = v;
            }
        while (top) {
            int u = stack[--top];
            for (int v = 0; v < n; v++)
                if (b->adj[(size_t)u * n + v] && !b->reach[(size_t)s * n + v]) {
                    b->reach[(size_t)s * n + v] = 1;
                    stack[top++] = v;
                }
        }
        if (b->reach[(size_t)s * n + s])
            b->cyclic = 1;
    }
    free(stack);
}

static void bf_load(brute *b, json_t *root)
{
    json_t *ops = json_object_get(root, "ops"), *bufs = json_object_get(root, "buffers");
    b->n = (int)json_array_size(ops);
    b->nacc = 0;
    for (int i = 0; i < b->n; i++) {
        json_t *op = json_array_get(ops, (size_t)i);
        snprintf(b->ids[i], sizeof b->ids[i], "%s", json_string_value(json_object_get(op, "id")));
        for (int w = 0; w < 2; w++) {
            json_t *list = json_object_get(op, w ? "writes" : "reads");
            for (size_t k = 0; list && k < json_array_size(list); k++) {
                json_t *a = json_array_get(list, k);
                json_t *buf = json_array_get(bufs, (size_t)find_id(bufs, json_string_value(
                                                                 json_object_get(a, "buffer"))));
                bf_access *x = &b->acc[b->nacc++];
                x->op = i;
                x->write = w;
                x->index = (int)k;
                x->chip = (int)json_integer_value(json_object_get(buf, "chip"));
                x->space = strcmp(json_string_value(json_object_get(buf, "space")), "ddr") == 0;
                x->lo = (long)json_integer_value(json_object_get(buf, "address")) +
                        (long)json_integer_value(json_object_get(a, "offset"));
                x->hi = x->lo + (long)json_integer_value(json_object_get(a, "size"));
            }
        }
    }
}

static int hb(const brute *b, int x, int y)
{
    return b->reach[(size_t)x * b->n + y];
}

/* every racing pair as sorted keys; returns the count */
static size_t bf_races(const brute *b, uint64_t *keys)
{
    size_t k = 0;
    for (int i = 0; i < b->nacc; i++)
        for (int j = i + 1; j < b->nacc; j++) {
            const bf_access *x = &b->acc[i], *y = &b->acc[j];
            if (x->op == y->op || x->chip != y->chip || x->space != y->space)
                continue;
            if (!(x->write || y->write) || x->hi <= y->lo || y->hi <= x->lo)
                continue;
            if (hb(b, x->op, y->op) || hb(b, y->op, x->op))
                continue;
            const bf_access *a = x->op < y->op ? x : y, *c = x->op < y->op ? y : x;
            keys[k++] = ((uint64_t)a->op << 48) | ((uint64_t)a->write << 47) |
                        ((uint64_t)a->index << 32) | ((uint64_t)c->op << 16) |
                        ((uint64_t)c->write << 15) | (uint64_t)c->index;
        }
    return k;
}

static int cmp_u64(const void *x, const void *y)
{
    uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;
    return a < b ? -1 : a > b;
}

static uint64_t lib_key(const golden_graph *g, uint32_t ai, uint32_t bi)
{
    const golden_access *a = &g->accesses[ai], *c = &g->accesses[bi];
    return ((uint64_t)a->op << 48) | ((uint64_t)a->write << 47) | ((uint64_t)a->index << 32) |
           ((uint64_t)c->op << 16) | ((uint64_t)c->write << 15) | (uint64_t)c->index;
}

/* aliases by the contract: overlapping buffers must have ordered live ranges */
/* Is some live range's last op strictly before its first in happens-before? */
static int bf_reversed_live(const brute *b, json_t *root)
{
    json_t *bufs = json_object_get(root, "buffers"), *ops = json_object_get(root, "ops");
    for (size_t i = 0; i < json_array_size(bufs); i++) {
        json_t *l = json_object_get(json_array_get(bufs, i), "live");
        if (l && hb(b, find_id(ops, json_string_value(json_array_get(l, 1))),
                    find_id(ops, json_string_value(json_array_get(l, 0)))))
            return 1;
    }
    return 0;
}

static int bf_aliases(const brute *b, json_t *root, int *pairs)
{
    json_t *bufs = json_object_get(root, "buffers"), *ops = json_object_get(root, "ops");
    int nb = (int)json_array_size(bufs), k = 0;
    for (int i = 0; i < nb; i++)
        for (int j = i + 1; j < nb; j++) {
            json_t *x = json_array_get(bufs, (size_t)i), *y = json_array_get(bufs, (size_t)j);
            long xa = (long)json_integer_value(json_object_get(x, "address"));
            long ya = (long)json_integer_value(json_object_get(y, "address"));
            long xe = xa + (long)json_integer_value(json_object_get(x, "size"));
            long ye = ya + (long)json_integer_value(json_object_get(y, "size"));
            if (json_integer_value(json_object_get(x, "chip")) !=
                    json_integer_value(json_object_get(y, "chip")) ||
                strcmp(json_string_value(json_object_get(x, "space")),
                       json_string_value(json_object_get(y, "space"))) ||
                xe <= ya || ye <= xa)
                continue;
            json_t *xl = json_object_get(x, "live"), *yl = json_object_get(y, "live");
            int alias;
            if (!xl || !yl) {
                alias = 1;
            } else {
                int xf = find_id(ops, json_string_value(json_array_get(xl, 0)));
                int xt = find_id(ops, json_string_value(json_array_get(xl, 1)));
                int yf = find_id(ops, json_string_value(json_array_get(yl, 0)));
                int yt = find_id(ops, json_string_value(json_array_get(yl, 1)));
                json_t *xi = json_object_get(x, "inplace_of"), *yi = json_object_get(y, "inplace_of");
                int inplace = (xi && strcmp(json_string_value(xi), json_string_value(json_object_get(y, "id"))) == 0) ||
                              (yi && strcmp(json_string_value(yi), json_string_value(json_object_get(x, "id"))) == 0);
                /* a range is the union of what its endpoints bound (they may be unordered):
                 * X is before Y when every endpoint of X is before every endpoint of Y */
                int xs[2] = {xf, xt}, ys[2] = {yf, yt}, xy = 1, yx = 1;
                for (int p = 0; p < 2; p++)
                    for (int q = 0; q < 2; q++) {
                        xy &= hb(b, xs[p], ys[q]) || (inplace && xs[p] == ys[q]);
                        yx &= hb(b, ys[q], xs[p]) || (inplace && xs[p] == ys[q]);
                    }
                alias = !xy && !yx;
            }
            if (alias)
                pairs[k++] = i * 64 + j;
        }
    return k;
}

/* bytes covered by races, per (chip, space) domain, as bit sets over 0..127 */
static void cover(uint64_t bits[2][2][2], int chip, int space, long lo, long hi)
{
    for (long x = lo; x < hi; x++)
        bits[chip][space][x / 64] |= 1ULL << (x % 64);
}

static int seeds_run, graphs_cyclic, graphs_racy, graphs_alias, idle_checked, graphs_reversed,
    removals_checked, hb_checked, graphs_joined;

static void check_idle_exact(const golden_graph *g, const golden_dag_result *all,
                             const golden_dag_result *one, unsigned long long seed);

static void check_seed(uint64_t seed, uint32_t max_ops, brute *b, uint64_t *tk, uint64_t *lk)
{
    json_t *root = gg_random(seed, max_ops);
    CU_ASSERT_PTR_NOT_NULL_FATAL(root);
    golden_graph *g = NULL;
    golden_error err;
    if (golden_graph_from_json(root, "rand", NULL, &g, &err) != GOLDEN_OK) {
        CU_FAIL("random graph rejected");
        fprintf(stderr, "\nseed %llu: %s: %s\n", (unsigned long long)seed, err.where, err.what);
        json_decref(root);
        return;
    }
    bf_load(b, root);
    bf_edges(b, root, NULL, -1, -1);
    bf_reach(b);
    seeds_run++;
    golden_dag_result all, one;
    memset(&all, 0, sizeof all);
    memset(&one, 0, sizeof one);
    if (!b->cyclic && bf_reversed_live(b, root)) {
        /* a live range that ends before it starts is an error, not a plan */
        CU_ASSERT_EQUAL(golden_dag_check(g, NULL, false, &one, &err), GOLDEN_ERR);
        CU_ASSERT_PTR_NOT_NULL(strstr(err.what, "ends before it starts"));
        graphs_reversed++;
        goto done;
    }
    CU_ASSERT_EQUAL_FATAL(golden_dag_check(g, NULL, true, &all, &err), GOLDEN_OK);
    CU_ASSERT_EQUAL_FATAL(golden_dag_check(g, NULL, false, &one, &err), GOLDEN_OK);
    CU_ASSERT_EQUAL(all.cyclic, b->cyclic);
    CU_ASSERT_EQUAL(one.cyclic, b->cyclic);
    if (b->cyclic) {
        graphs_cyclic++;
        /* the reported cycle must be real: an edge between each op and the next */
        for (uint32_t i = 0; i < one.hb->ncycle; i++) {
            uint32_t x = one.hb->cycle[i], y = one.hb->cycle[(i + 1) % one.hb->ncycle];
            CU_ASSERT_TRUE(b->adj[(size_t)x * b->n + y]);
        }
        CU_ASSERT_TRUE(one.hb->ncycle >= 2);
        goto done;
    }
    /* every ordering query against reachability (lanes join queues; clocks must not lie) */
    if (b->n <= 80) {
        int agree = 1;
        for (int x = 0; x < b->n; x++)
            for (int y = 0; y < b->n; y++)
                agree &= golden_hb_before(one.hb, (uint32_t)x, (uint32_t)y) ==
                         (x != y && b->reach[(size_t)x * b->n + y]);
        CU_ASSERT_TRUE(agree);
        hb_checked++;
    }
    if (one.hb->K < g->nqueues)
        graphs_joined++;
    size_t nt = bf_races(b, tk);
    qsort(tk, nt, sizeof *tk, cmp_u64);
    for (size_t i = 0; i < all.nraces; i++)
        lk[i] = lib_key(g, all.races[i].a, all.races[i].b);
    qsort(lk, all.nraces, sizeof *lk, cmp_u64);
    CU_ASSERT_EQUAL(all.nraces, nt);
    if (all.nraces == nt)
        CU_ASSERT_EQUAL(memcmp(lk, tk, nt * sizeof *tk), 0);
    if (nt)
        graphs_racy++;
    /* default mode: a subset that covers every racing byte */
    uint64_t want[2][2][2] = {{{0}}}, got[2][2][2] = {{{0}}};
    for (size_t i = 0; i < all.nraces; i++) {
        const golden_access *a = &g->accesses[all.races[i].a];
        const golden_buffer *bb = &g->buffers[a->buffer];
        cover(want, (int)bb->chip, strcmp(g->spaces[bb->space], "ddr") == 0, (long)all.races[i].lo,
              (long)all.races[i].hi);
    }
    for (size_t i = 0; i < one.nraces; i++) {
        uint64_t key = lib_key(g, one.races[i].a, one.races[i].b);
        CU_ASSERT_PTR_NOT_NULL(bsearch(&key, tk, nt, sizeof *tk, cmp_u64));
        const golden_access *a = &g->accesses[one.races[i].a];
        const golden_buffer *bb = &g->buffers[a->buffer];
        cover(got, (int)bb->chip, strcmp(g->spaces[bb->space], "ddr") == 0, (long)one.races[i].lo,
              (long)one.races[i].hi);
    }
    CU_ASSERT_EQUAL(memcmp(want, got, sizeof want), 0);
    /* aliases: every reported pair is real, and a plan with any alias reports one */
    int pairs[64 * 64];
    int na = bf_aliases(b, root, pairs);
    if (na)
        graphs_alias++;
    CU_ASSERT_EQUAL(na > 0, one.naliases > 0);
    /* --all lists every aliasing pair, exactly the brute force's */
    CU_ASSERT_EQUAL(all.naliases, (size_t)na);
    for (size_t i = 0; i < all.naliases; i++) {
        int key = (int)all.aliases[i].a * 64 + (int)all.aliases[i].b, found = 0;
        for (int k = 0; k < na; k++)
            found |= pairs[k] == key;
        CU_ASSERT_TRUE(found);
    }
    for (size_t i = 0; i < one.naliases; i++) {
        int key = (int)one.aliases[i].a * 64 + (int)one.aliases[i].b, found = 0;
        for (int k = 0; k < na; k++)
            found |= pairs[k] == key;
        CU_ASSERT_TRUE(found);
    }
    CU_ASSERT_EQUAL(golden_dag_passed(&one), nt == 0 && na == 0);
    /* idle syncs, on the smaller graphs: each one, removed alone, changes nothing that matters */
    if (b->n <= 80) {
        CU_ASSERT_EQUAL_FATAL(golden_dag_redundant(&one, 1, NULL, &err), GOLDEN_OK);
        unsigned char *reach0 = malloc((size_t)b->n * b->n);
        memcpy(reach0, b->reach, (size_t)b->n * b->n);
        for (size_t i = 0; i < one.nidle; i++) {
            const golden_sync *s = &one.idle[i].sync;
            const char *dop = s->kind == GOLDEN_SYNC_AFTER ? NULL : g->ops[s->op].id;
            bf_edges(b, root, dop, s->kind == GOLDEN_SYNC_AFTER ? (int)s->op : -1,
                     s->kind == GOLDEN_SYNC_AFTER ? (int)(s->after - g->ops[s->op].after_first)
                                                  : -1);
            bf_reach(b);
            idle_checked++;
            /* one removal model: what --redundant offers, --remove accepts on its own */
            golden_dag_result cand;
            memset(&cand, 0, sizeof cand);
            CU_ASSERT_EQUAL_FATAL(golden_dag_verify_removal(&one, s, 1, &cand, &err), GOLDEN_OK);
            CU_ASSERT_FALSE(cand.cyclic);
            CU_ASSERT_EQUAL(cand.new_races, 0);
            CU_ASSERT_EQUAL(cand.new_aliases, 0);
            if (cand.new_races || cand.new_aliases) {
                char nm[128];
                golden_sync_name(g, s, nm, sizeof nm);
                fprintf(stderr, "\nseed %llu: %s (%s, %s) offered as idle, but --remove adds "
                                "%zu races, %zu aliases\n", (unsigned long long)seed, nm,
                        golden_sync_kind_name(s->kind),
                        one.idle[i].why == GOLDEN_IDLE_IMPLIED ? "implied" : "no conflict",
                        cand.new_races, cand.new_aliases);
            }
            removals_checked++;
            golden_dag_result_free(&cand);
            if (one.idle[i].why == GOLDEN_IDLE_IMPLIED) {
                /* same reachability among every op but a removed barrier */
                int same = 1;
                for (int x = 0; x < b->n; x++)
                    for (int y = 0; y < b->n; y++) {
                        if (dop && s->kind == GOLDEN_SYNC_BARRIER &&
                            (strcmp(b->ids[x], dop) == 0 || strcmp(b->ids[y], dop) == 0))
                            continue;
                        same &= reach0[(size_t)x * b->n + y] == b->reach[(size_t)x * b->n + y];
                    }
                CU_ASSERT_TRUE(same);
                if (!same) {
                    char nm[128];
                    golden_sync_name(g, s, nm, sizeof nm);
                    fprintf(stderr, "\nseed %llu: %s (%s) is not implied\n",
                            (unsigned long long)seed, nm, golden_sync_kind_name(s->kind));
                }
            } else {
                CU_ASSERT_EQUAL(bf_races(b, tk), nt);
                CU_ASSERT_EQUAL(bf_aliases(b, root, pairs), na);
            }
        }
        memcpy(b->reach, reach0, (size_t)b->n * b->n);
        free(reach0);
        check_idle_exact(g, &all, &one, seed);
    }
done:
    golden_dag_result_free(&all);
    golden_dag_result_free(&one);
    golden_graph_free(g);
    json_decref(root);
}

/* Exactness: every sync that is not implied (and is not a barrier a live range names) is idle
 * exactly when the graph without it, checked in full over every pair, has the same races and
 * aliases as the graph over every pair (`all`) and no cycle: the definition --redundant had
 * when a racy graph re-ran the check per sync, which the incremental decision must keep. */
static int exact_checked, exact_racy;

static void check_idle_exact(const golden_graph *g, const golden_dag_result *all,
                             const golden_dag_result *one, unsigned long long seed)
{
    uint8_t *dop = calloc((size_t)g->nops + 1, 1), *daf = calloc((size_t)g->nafter + 1, 1);
    uint8_t *endpoint = calloc((size_t)g->nops + 1, 1);
    CU_ASSERT_FATAL(dop && daf && endpoint);
    for (uint32_t i = 0; i < g->nbuffers; i++)
        if (g->buffers[i].live_first != GOLDEN_NONE)
            endpoint[g->buffers[i].live_first] = endpoint[g->buffers[i].live_last] = 1;
    exact_racy += all->nraces > 0;
    for (uint32_t o = 0; o < g->nops; o++) {
        const golden_op *op = &g->ops[o];
        for (int m = -1; m < (int)op->after_count; m++) {
            golden_sync s;
            if (m < 0 && op->kind == GOLDEN_OP_WAIT)
                s = (golden_sync){GOLDEN_SYNC_WAIT, o, GOLDEN_NONE};
            else if (m < 0 && op->kind == GOLDEN_OP_BARRIER && !endpoint[o])
                s = (golden_sync){GOLDEN_SYNC_BARRIER, o, GOLDEN_NONE};
            else if (m < 0)
                continue;
            else
                s = (golden_sync){GOLDEN_SYNC_AFTER, o, op->after_first + (uint32_t)m};
            int offered = -1;
            for (size_t i = 0; i < one->nidle; i++) {
                const golden_sync *x = &one->idle[i].sync;
                if (x->kind == s.kind && x->op == s.op && x->after == s.after)
                    offered = (int)one->idle[i].why;
            }
            if (offered == GOLDEN_IDLE_IMPLIED)
                continue;
            uint8_t *slot = s.kind == GOLDEN_SYNC_AFTER ? &daf[s.after] : &dop[s.op];
            *slot = 1;
            golden_hb_drop drop = {dop, daf};
            golden_dag_result t;
            golden_error err;
            CU_ASSERT_EQUAL_FATAL(golden_dag_check(g, &drop, true, &t, &err), GOLDEN_OK);
            *slot = 0;
            bool want = !t.cyclic && t.nraces == all->nraces && t.naliases == all->naliases;
            golden_dag_result_free(&t);
            CU_ASSERT_EQUAL(want, offered >= 0);
            if (want != (offered >= 0)) {
                char nm[128];
                golden_sync_name(g, &s, nm, sizeof nm);
                fprintf(stderr, "\nseed %llu (%s): %s (%s) is %sidle by a full re-check, "
                                "--redundant says %s\n", seed, all->nraces ? "racy" : "race-free",
                        nm, golden_sync_kind_name(s.kind), want ? "" : "not ",
                        offered >= 0 ? "idle" : "needed");
            }
            exact_checked++;
        }
    }
    free(dop);
    free(daf);
    free(endpoint);
}

static void test_oracle(void)
{
    brute *b = calloc(1, sizeof *b);
    CU_ASSERT_PTR_NOT_NULL_FATAL(b);
    b->adj = malloc((size_t)MAXN * MAXN);
    b->reach = malloc((size_t)MAXN * MAXN);
    uint64_t *tk = malloc(sizeof(uint64_t) * MAXA * MAXA / 8);
    uint64_t *lk = malloc(sizeof(uint64_t) * MAXA * MAXA / 8);
    CU_ASSERT_FATAL(b->adj && b->reach && tk && lk);
    /* most graphs small (fast, and every corner is likelier), every 25th up to 300 ops */
    for (uint64_t seed = 1; seed <= 3000; seed++)
        check_seed(seed, seed % 25 == 0 ? 300 : 40, b, tk, lk);
    fprintf(stderr, "\n  oracle: %d graphs, %d cyclic, %d with races, %d with aliases, "
                    "%d idle syncs re-checked\n",
            seeds_run, graphs_cyclic, graphs_racy, graphs_alias, idle_checked);
    fprintf(stderr, "  %d with a reversed live range, %d offered idle syncs removed with "
                    "--remove, %d checked pair by pair, %d with queues joined in lanes\n",
            graphs_reversed, removals_checked, hb_checked, graphs_joined);
    fprintf(stderr, "  %d syncs judged against a full re-check (%d graphs with races)\n",
            exact_checked, exact_racy);
    CU_ASSERT_TRUE(exact_racy > 100);
    CU_ASSERT_TRUE(graphs_joined > 100);
    /* the generator must exercise every verdict, or the agreement means little */
    CU_ASSERT_TRUE(graphs_cyclic > 50);
    CU_ASSERT_TRUE(graphs_racy > 300);
    CU_ASSERT_TRUE(graphs_alias > 300);
    CU_ASSERT_TRUE(seeds_run - graphs_cyclic - graphs_racy > 100);
    free(b->adj);
    free(b->reach);
    free(b);
    free(tk);
    free(lk);
}

int main(void)
{
    static const golden_test tests[] = {
        {"library agrees with brute force on 3000 random graphs", test_oracle}, {0, 0}};
    return golden_test_run("graph_oracle", tests);
}
