/* Unit tests for the graph model, vector clocks, the interval map, races, aliases and idle
 * syncs, on small graphs whose answers were worked out by hand. */
#include <dirent.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../tools/gengraph.h"
#include "cunit_main.h"
#include "golden/dag.h"
#include "golden/graph.h"
#include "graph/hb.h"
#include "graph/imap.h"

static golden_graph *load(const char *text, golden_error *err)
{
    json_error_t je;
    json_t *root = json_loads(text, 0, &je);
    CU_ASSERT_PTR_NOT_NULL_FATAL(root);
    golden_graph *g = NULL;
    if (golden_graph_from_json(root, "t.json", NULL, &g, err) != GOLDEN_OK)
        g = NULL;
    json_decref(root);
    return g;
}

/* ---- interval map ---- */
typedef struct {
    char log[1024];
} seglog;

static void log_seg(void *ctx, const golden_imap_seg *s, uint64_t lo, uint64_t hi)
{
    seglog *l = ctx;
    char one[128];
    int n = snprintf(one, sizeof one, "[%llu,%llu)w%d", (unsigned long long)lo,
                     (unsigned long long)hi, s->write == UINT32_MAX ? -1 : (int)s->write);
    for (uint32_t i = 0; i < s->nreads; i++)
        n += snprintf(one + n, sizeof one - (size_t)n, "r%u:%u", s->reads[i].slot, s->reads[i].acc);
    snprintf(one + n, sizeof one - (size_t)n, " ");
    strncat(l->log, one, sizeof l->log - strlen(l->log) - 1);
}

static void dump(golden_imap *m, seglog *l)
{
    l->log[0] = '\0';
    lg_imap_each(m, log_seg, l);
}

static void test_imap_hand(void)
{
    golden_imap *m = lg_imap_new();
    CU_ASSERT_PTR_NOT_NULL_FATAL(m);
    seglog seen = {{0}}, all;
    CU_ASSERT_EQUAL(lg_imap_access(m, 0, 10, true, 0, 0, log_seg, &seen), 0);
    CU_ASSERT_STRING_EQUAL(seen.log, ""); /* nothing there before */
    CU_ASSERT_EQUAL(lg_imap_access(m, 5, 15, false, 1, 1, log_seg, &seen), 0);
    CU_ASSERT_STRING_EQUAL(seen.log, "[5,10)w0 ");
    dump(m, &all);
    CU_ASSERT_STRING_EQUAL(all.log, "[0,5)w0 [5,10)w0r1:1 [10,15)w-1r1:1 ");
    seen.log[0] = '\0';
    CU_ASSERT_EQUAL(lg_imap_access(m, 3, 12, true, 2, 2, log_seg, &seen), 0);
    CU_ASSERT_STRING_EQUAL(seen.log, "[3,5)w0 [5,10)w0r1:1 [10,12)w-1r1:1 ");
    dump(m, &all);
    CU_ASSERT_STRING_EQUAL(all.log, "[0,3)w0 [3,12)w2 [12,15)w-1r1:1 ");
    /* a later read on the same queue (slot) replaces the earlier one */
    CU_ASSERT_EQUAL(lg_imap_access(m, 12, 15, false, 4, 1, NULL, NULL), 0);
    dump(m, &all);
    CU_ASSERT_STRING_EQUAL(all.log, "[0,3)w0 [3,12)w2 [12,15)w-1r1:4 ");
    /* gaps are filled, and equal neighbours merge */
    CU_ASSERT_EQUAL(lg_imap_access(m, 20, 30, true, 5, 0, NULL, NULL), 0);
    CU_ASSERT_EQUAL(lg_imap_access(m, 20, 25, false, 6, 3, NULL, NULL), 0);
    CU_ASSERT_EQUAL(lg_imap_access(m, 25, 30, false, 6, 3, NULL, NULL), 0);
    CU_ASSERT_EQUAL(lg_imap_access(m, 16, 18, false, 7, 3, NULL, NULL), 0);
    dump(m, &all);
    CU_ASSERT_STRING_EQUAL(all.log,
                           "[0,3)w0 [3,12)w2 [12,15)w-1r1:4 [16,18)w-1r3:7 [20,30)w5r3:6 ");
    CU_ASSERT_EQUAL(lg_imap_count(m), 5);
    seen.log[0] = '\0';
    lg_imap_query(m, 11, 21, log_seg, &seen);
    CU_ASSERT_STRING_EQUAL(seen.log, "[11,12)w2 [12,15)w-1r1:4 [16,18)w-1r3:7 [20,21)w5r3:6 ");
    /* one write over everything collapses the map */
    CU_ASSERT_EQUAL(lg_imap_access(m, 0, 40, true, 9, 0, NULL, NULL), 0);
    dump(m, &all);
    CU_ASSERT_STRING_EQUAL(all.log, "[0,40)w9 ");
    CU_ASSERT_EQUAL(lg_imap_count(m), 1);
    lg_imap_free(m);
}

/* Against a byte array: many random accesses, the map must equal a per-byte model. */
static void test_imap_bytes(void)
{
    enum { N = 200 };
    uint32_t w[N], r[N][4];
    memset(w, 0xff, sizeof w);
    memset(r, 0xff, sizeof r);
    golden_imap *m = lg_imap_new();
    CU_ASSERT_PTR_NOT_NULL_FATAL(m);
    uint64_t s = 12345;
    for (uint32_t acc = 0; acc < 3000; acc++) {
        s = s * 6364136223846793005ULL + 1442695040888963407ULL;
        uint32_t lo = (uint32_t)(s >> 33) % N, len = 1 + (uint32_t)(s >> 20) % 40;
        uint32_t hi = lo + len > N ? N : lo + len, slot = (uint32_t)(s >> 12) % 4;
        bool write = (s >> 8) % 3 == 0;
        CU_ASSERT_EQUAL_FATAL(lg_imap_access(m, lo, hi, write, acc, slot, NULL, NULL), 0);
        for (uint32_t b = lo; b < hi; b++) {
            if (write) {
                w[b] = acc;
                memset(r[b], 0xff, sizeof r[b]);
            } else {
                r[b][slot] = acc;
            }
        }
    }
    /* compare every byte through point queries */
    for (uint32_t b = 0; b < N; b++) {
        seglog one = {{0}};
        lg_imap_query(m, b, b + 1, log_seg, &one);
        char want[128];
        int n = 0;
        bool any = w[b] != UINT32_MAX;
        for (int k = 0; k < 4; k++)
            any |= r[b][k] != UINT32_MAX;
        if (!any) {
            CU_ASSERT_STRING_EQUAL(one.log, "");
            continue;
        }
        n = snprintf(want, sizeof want, "[%u,%u)w%d", b, b + 1, w[b] == UINT32_MAX ? -1 : (int)w[b]);
        CU_ASSERT_TRUE(strncmp(one.log, want, (size_t)n) == 0);
        for (int k = 0; k < 4; k++) {
            char part[32];
            snprintf(part, sizeof part, "r%d:%u", k, r[b][k]);
            CU_ASSERT_EQUAL(strstr(one.log, part) != NULL, r[b][k] != UINT32_MAX);
        }
    }
    lg_imap_free(m);
}

/* ---- clocks and ordering ---- */
static const char *ORDER_GRAPH =
    "{\"schema\":\"calculet-graph/v1\","
    "\"queues\":[{\"id\":\"A\",\"chip\":0},{\"id\":\"B\",\"chip\":0},{\"id\":\"C\",\"chip\":1}],"
    "\"ops\":["
    "{\"id\":\"a1\",\"queue\":\"A\"},"
    "{\"id\":\"s\",\"queue\":\"A\",\"kind\":\"signal\",\"event\":\"e\"},"
    "{\"id\":\"a2\",\"queue\":\"A\"},"
    "{\"id\":\"b1\",\"queue\":\"B\"},"
    "{\"id\":\"w\",\"queue\":\"B\",\"kind\":\"wait\",\"event\":\"e\"},"
    "{\"id\":\"b2\",\"queue\":\"B\"},"
    "{\"id\":\"bar\",\"kind\":\"barrier\",\"queues\":[\"B\",\"C\"]},"
    "{\"id\":\"c1\",\"queue\":\"C\"},"
    "{\"id\":\"c2\",\"queue\":\"C\",\"after\":[\"a2\"]}]}";

static void test_clocks_hand(void)
{
    golden_error err;
    golden_graph *g = load(ORDER_GRAPH, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(g);
    golden_hb h;
    CU_ASSERT_EQUAL_FATAL(lg_hb_build(g, NULL, &h, &err), GOLDEN_OK);
    CU_ASSERT_EQUAL(h.norder, 9);
    uint32_t a1 = golden_graph_find_op(g, "a1"), a2 = golden_graph_find_op(g, "a2"),
             b1 = golden_graph_find_op(g, "b1"), b2 = golden_graph_find_op(g, "b2"),
             c1 = golden_graph_find_op(g, "c1"), c2 = golden_graph_find_op(g, "c2"),
             w = golden_graph_find_op(g, "w"), bar = golden_graph_find_op(g, "bar");
    /* positions: A: a1=1 s=2 a2=3; B: b1=1 w=2 b2=3 bar=4; C: bar=1 c1=2 c2=3 */
    const uint32_t *k = &h.clock[(size_t)c1 * 3];
    CU_ASSERT_EQUAL(k[0], 2); /* through s -> w -> b2 -> bar: s is A's 2nd */
    CU_ASSERT_EQUAL(k[1], 4);
    CU_ASSERT_EQUAL(k[2], 2);
    k = &h.clock[(size_t)c2 * 3];
    CU_ASSERT_EQUAL(k[0], 3); /* after a2 */
    CU_ASSERT_EQUAL(k[1], 4);
    CU_ASSERT_EQUAL(k[2], 3);
    k = &h.clock[(size_t)w * 3];
    CU_ASSERT_EQUAL(k[0], 2);
    CU_ASSERT_EQUAL(k[1], 2);
    CU_ASSERT_EQUAL(k[2], 0);
    CU_ASSERT_TRUE(golden_hb_before(&h, a1, b2));
    CU_ASSERT_FALSE(golden_hb_before(&h, a2, b2));
    CU_ASSERT_FALSE(golden_hb_ordered(&h, a1, b1));
    CU_ASSERT_TRUE(golden_hb_before(&h, b1, c1));
    CU_ASSERT_TRUE(golden_hb_before(&h, a1, c1));
    CU_ASSERT_FALSE(golden_hb_ordered(&h, a2, c1));
    CU_ASSERT_TRUE(golden_hb_before(&h, a2, c2));
    CU_ASSERT_TRUE(golden_hb_before(&h, bar, c1));
    CU_ASSERT_TRUE(golden_hb_before(&h, b2, bar));
    CU_ASSERT_FALSE(golden_hb_before(&h, c1, c1));
    CU_ASSERT_TRUE(golden_hb_le(&h, c1, c1));
    lg_hb_free(&h);

    /* dropping the wait's signal edge cuts a1 -> b2, dropping the barrier cuts b1 -> c1 */
    uint8_t dop[9] = {0}, daf[1] = {0};
    dop[w] = 1;
    golden_hb_drop drop = {dop, daf};
    CU_ASSERT_EQUAL_FATAL(lg_hb_build(g, &drop, &h, &err), GOLDEN_OK);
    CU_ASSERT_FALSE(golden_hb_ordered(&h, a1, b2));
    CU_ASSERT_TRUE(golden_hb_before(&h, b1, c1));
    lg_hb_free(&h);
    dop[w] = 0;
    dop[bar] = 1;
    CU_ASSERT_EQUAL_FATAL(lg_hb_build(g, &drop, &h, &err), GOLDEN_OK);
    CU_ASSERT_FALSE(golden_hb_ordered(&h, b1, c1));
    CU_ASSERT_TRUE(golden_hb_before(&h, a1, b2));
    CU_ASSERT_FALSE(golden_hb_ordered(&h, bar, c1)); /* a dropped barrier orders nothing */
    lg_hb_free(&h);
    golden_graph_free(g);
}

static void test_cycle_two_waits(void)
{
    golden_error err;
    golden_graph *g = load(
        "{\"schema\":\"calculet-graph/v1\",\"queues\":[{\"id\":\"A\",\"chip\":0},"
        "{\"id\":\"B\",\"chip\":1}],\"ops\":["
        "{\"id\":\"x\",\"queue\":\"A\"},"
        "{\"id\":\"wa\",\"queue\":\"A\",\"kind\":\"wait\",\"event\":\"eb\"},"
        "{\"id\":\"sa\",\"queue\":\"A\",\"kind\":\"signal\",\"event\":\"ea\"},"
        "{\"id\":\"wb\",\"queue\":\"B\",\"kind\":\"wait\",\"event\":\"ea\"},"
        "{\"id\":\"sb\",\"queue\":\"B\",\"kind\":\"signal\",\"event\":\"eb\"}]}",
        &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(g);
    golden_dag_result r;
    CU_ASSERT_EQUAL_FATAL(golden_dag_check(g, NULL, false, &r, &err), GOLDEN_OK);
    CU_ASSERT_TRUE(r.cyclic);
    CU_ASSERT_FALSE(golden_dag_passed(&r));
    CU_ASSERT_EQUAL_FATAL(r.hb->ncycle, 4);
    const char *want[] = {"wa", "sa", "wb", "sb"};
    for (int i = 0; i < 4; i++)
        CU_ASSERT_STRING_EQUAL(g->ops[r.hb->cycle[i]].id, want[i]);
    golden_dag_result_free(&r);
    golden_graph_free(g);
}

/* ---- structure errors ---- */
static void expect_error(const char *ops, const char *where, const char *what)
{
    char text[2048];
    snprintf(text, sizeof text,
             "{\"schema\":\"calculet-graph/v1\",\"queues\":[{\"id\":\"A\",\"chip\":0}],"
             "\"buffers\":[{\"id\":\"b\",\"chip\":0,\"space\":\"ddr\",\"address\":0,\"size\":16}],"
             "\"ops\":[%s]}", ops);
    golden_error err;
    golden_error_clear(&err);
    golden_graph *g = load(text, &err);
    CU_ASSERT_PTR_NULL(g);
    golden_graph_free(g);
    CU_ASSERT_STRING_EQUAL(err.where, where);
    if (!strstr(err.what, what))
        fprintf(stderr, "\nwanted \"%s\" in \"%s\"\n", what, err.what);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.what, what));
}

static void test_structure_errors(void)
{
    expect_error("{\"id\":\"x\",\"queue\":\"A\"},{\"id\":\"x\",\"queue\":\"A\"}", "t.json#/ops/1",
                 "duplicate op id \"x\"");
    expect_error("{\"id\":\"x\",\"queue\":\"Z\"}", "t.json#/ops/0/queue", "unknown queue \"Z\"");
    expect_error("{\"id\":\"x\",\"queue\":\"A\",\"reads\":[{\"buffer\":\"c\",\"offset\":0,\"size\":1}]}",
                 "t.json#/ops/0/reads/0", "unknown buffer \"c\"");
    expect_error("{\"id\":\"x\",\"queue\":\"A\",\"writes\":[{\"buffer\":\"b\",\"offset\":8,\"size\":9}]}",
                 "t.json#/ops/0/writes/0", "range [8, 17) is outside buffer \"b\" of 16 bytes");
    expect_error("{\"id\":\"w\",\"queue\":\"A\",\"kind\":\"wait\",\"event\":\"e\"}",
                 "t.json#/ops/0/event", "event \"e\" is never signalled");
    expect_error("{\"id\":\"s1\",\"queue\":\"A\",\"kind\":\"signal\",\"event\":\"e\"},"
                 "{\"id\":\"s2\",\"queue\":\"A\",\"kind\":\"signal\",\"event\":\"e\"}",
                 "t.json#/ops/1/event", "event \"e\" is signalled twice");
    expect_error("{\"id\":\"bar\",\"kind\":\"barrier\",\"queues\":[\"A\",\"Q\"]}",
                 "t.json#/ops/0/queues/1", "barrier \"bar\" names unknown queue \"Q\"");
    expect_error("{\"id\":\"x\",\"queue\":\"A\",\"after\":[\"nope\"]}", "t.json#/ops/0/after/0",
                 "after names unknown op \"nope\"");
    expect_error("{\"id\":\"x\",\"queue\":\"A\",\"kind\":\"fence\"}", "t.json#/ops/0/kind",
                 "unknown kind \"fence\"");
}

/* ---- races, aliases, idle syncs on hand-drawn graphs ---- */
static const char *RACE_GRAPH =
    "{\"schema\":\"calculet-graph/v1\","
    "\"queues\":[{\"id\":\"c0\",\"chip\":0},{\"id\":\"c1\",\"chip\":0}],"
    "\"buffers\":[{\"id\":\"y\",\"chip\":0,\"space\":\"ddr\",\"address\":100,\"size\":64},"
    "{\"id\":\"z\",\"chip\":0,\"space\":\"ddr\",\"address\":132,\"size\":64}],"
    "\"ops\":["
    "{\"id\":\"w0\",\"queue\":\"c0\",\"writes\":[{\"buffer\":\"y\",\"offset\":0,\"size\":48}]},"
    "{\"id\":\"sig\",\"queue\":\"c0\",\"kind\":\"signal\",\"event\":\"e\"},"
    "{\"id\":\"r1\",\"queue\":\"c1\",\"reads\":[{\"buffer\":\"y\",\"offset\":16,\"size\":16}]},"
    "{\"id\":\"wt\",\"queue\":\"c1\",\"kind\":\"wait\",\"event\":\"e\"},"
    "{\"id\":\"r2\",\"queue\":\"c1\",\"reads\":[{\"buffer\":\"y\",\"offset\":0,\"size\":8}]},"
    "{\"id\":\"w3\",\"queue\":\"c0\",\"writes\":[{\"buffer\":\"z\",\"offset\":0,\"size\":4}]}]}";

static void test_races_hand(void)
{
    golden_error err;
    golden_graph *g = load(RACE_GRAPH, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(g);
    for (int all = 0; all < 2; all++) {
        golden_dag_result r;
        CU_ASSERT_EQUAL_FATAL(golden_dag_check(g, NULL, all, &r, &err), GOLDEN_OK);
        /* w0 -> r1: RAW on y[16,32) (r1 runs before the wait). w3 writes z = y+32.. [132,136):
         * r1 read y[16,32) = [116,132): no overlap; r2 read [100,108): ordered. */
        CU_ASSERT_EQUAL_FATAL(r.nraces, 1);
        const golden_race *x = &r.races[0];
        CU_ASSERT_STRING_EQUAL(g->ops[g->accesses[x->a].op].id, "w0");
        CU_ASSERT_STRING_EQUAL(g->ops[g->accesses[x->b].op].id, "r1");
        CU_ASSERT_EQUAL(x->kind, GOLDEN_RACE_RAW);
        CU_ASSERT_EQUAL(x->lo, 116);
        CU_ASSERT_EQUAL(x->hi, 132);
        /* the fix: the signal after w0 on c0, which r1 does not precede */
        uint32_t s = golden_dag_fix_signal(&r, g->accesses[x->a].op, g->accesses[x->b].op);
        CU_ASSERT_EQUAL(s, golden_graph_find_op(g, "sig"));
        /* y and z overlap in [132,164) with no live ranges: one alias */
        CU_ASSERT_EQUAL(r.naliases, 1);
        CU_ASSERT_EQUAL(r.aliases[0].lo, 132);
        CU_ASSERT_EQUAL(r.aliases[0].hi, 164);
        golden_dag_result_free(&r);
    }
    golden_graph_free(g);
}

static void test_idle_and_removal(void)
{
    /* p writes on A, then signals e1 and e2; B waits for both, then c reads. */
    golden_error err;
    golden_graph *g = load(
        "{\"schema\":\"calculet-graph/v1\",\"queues\":[{\"id\":\"A\",\"chip\":0},"
        "{\"id\":\"B\",\"chip\":0}],"
        "\"buffers\":[{\"id\":\"b\",\"chip\":0,\"space\":\"ddr\",\"address\":0,\"size\":8}],"
        "\"ops\":["
        "{\"id\":\"p\",\"queue\":\"A\",\"writes\":[{\"buffer\":\"b\",\"offset\":0,\"size\":8}]},"
        "{\"id\":\"s1\",\"queue\":\"A\",\"kind\":\"signal\",\"event\":\"e1\"},"
        "{\"id\":\"s2\",\"queue\":\"A\",\"kind\":\"signal\",\"event\":\"e2\"},"
        "{\"id\":\"w1\",\"queue\":\"B\",\"kind\":\"wait\",\"event\":\"e1\"},"
        "{\"id\":\"w2\",\"queue\":\"B\",\"kind\":\"wait\",\"event\":\"e2\"},"
        "{\"id\":\"c\",\"queue\":\"B\",\"reads\":[{\"buffer\":\"b\",\"offset\":0,\"size\":8}],"
        "\"after\":[\"w2\"]}]}",
        &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(g);
    golden_dag_result r;
    CU_ASSERT_EQUAL_FATAL(golden_dag_check(g, NULL, false, &r, &err), GOLDEN_OK);
    CU_ASSERT_TRUE(golden_dag_passed(&r));
    CU_ASSERT_EQUAL_FATAL(golden_dag_redundant(&r, 2, NULL, &err), GOLDEN_OK);
    /* c:after:w2 duplicates program order: implied. w1 and w2 each order p before c, but
     * either alone is enough (p -> s1 -> w1 -> w2 -> c, p -> s1 -> s2 -> w2 -> c): each is
     * idle on its own, and removing both exposes the RAW p -> c. */
    CU_ASSERT_EQUAL_FATAL(r.nidle, 3);
    char name[64];
    const char *want[] = {"c:after:w2", "w1", "w2"};
    const golden_idle_kind why[] = {GOLDEN_IDLE_IMPLIED, GOLDEN_IDLE_NO_CONFLICT,
                                    GOLDEN_IDLE_NO_CONFLICT};
    for (int i = 0; i < 3; i++) {
        golden_sync_name(g, &r.idle[i].sync, name, sizeof name);
        CU_ASSERT_STRING_EQUAL(name, want[i]);
        CU_ASSERT_EQUAL(r.idle[i].why, why[i]);
    }
    golden_sync *set;
    size_t n;
    golden_dag_result c;
    CU_ASSERT_EQUAL_FATAL(golden_dag_parse_syncs(g, "w1,w2", &set, &n, &err), GOLDEN_OK);
    CU_ASSERT_EQUAL_FATAL(golden_dag_verify_removal(&r, set, n, &c, &err), GOLDEN_OK);
    CU_ASSERT_FALSE(golden_dag_passed(&c));
    CU_ASSERT_EQUAL_FATAL(c.nraces, 1);
    CU_ASSERT_TRUE(c.races[0].is_new);
    CU_ASSERT_EQUAL(c.races[0].kind, GOLDEN_RACE_RAW);
    CU_ASSERT_EQUAL_FATAL(c.races[0].nexposed, 2);
    CU_ASSERT_EQUAL(c.races[0].exposed_by[0].op, golden_graph_find_op(g, "w1"));
    CU_ASSERT_EQUAL(c.races[0].exposed_by[1].op, golden_graph_find_op(g, "w2"));
    golden_dag_result_free(&c);
    free(set);
    CU_ASSERT_EQUAL_FATAL(golden_dag_parse_syncs(g, "w1,c:after:w2", &set, &n, &err), GOLDEN_OK);
    CU_ASSERT_EQUAL(n, 2);
    CU_ASSERT_EQUAL_FATAL(golden_dag_verify_removal(&r, set, n, &c, &err), GOLDEN_OK);
    CU_ASSERT_TRUE(golden_dag_passed(&c));
    CU_ASSERT_EQUAL(c.nraces, 0);
    golden_dag_result_free(&c);
    free(set);
    CU_ASSERT_EQUAL(golden_dag_parse_syncs(g, "p", &set, &n, &err), GOLDEN_ERR);
    CU_ASSERT_EQUAL(golden_dag_parse_syncs(g, "c:after:p", &set, &n, &err), GOLDEN_ERR);
    golden_dag_result_free(&r);
    golden_graph_free(g);
}

static void test_inplace(void)
{
    /* a written by f1, read by g1 (queue B, after a wait); out is in place of a, written by
     * g1 itself: safe. bad is in place of a2, written on A by f2, which is not ordered after
     * g1, a2's last reader: unsafe. */
    golden_error err;
    golden_graph *g = load(
        "{\"schema\":\"calculet-graph/v1\",\"queues\":[{\"id\":\"A\",\"chip\":0},"
        "{\"id\":\"B\",\"chip\":0}],"
        "\"buffers\":["
        "{\"id\":\"a\",\"chip\":0,\"space\":\"sram\",\"address\":0,\"size\":16,\"live\":[\"f1\",\"g1\"]},"
        "{\"id\":\"out\",\"chip\":0,\"space\":\"sram\",\"address\":0,\"size\":16,\"live\":[\"g1\",\"g2\"],\"inplace_of\":\"a\"},"
        "{\"id\":\"bad\",\"chip\":0,\"space\":\"sram\",\"address\":32,\"size\":8,\"live\":[\"f2\",\"f2\"],\"inplace_of\":\"a2\"},"
        "{\"id\":\"a2\",\"chip\":0,\"space\":\"sram\",\"address\":32,\"size\":16,\"live\":[\"f1\",\"g1\"]}],"
        "\"ops\":["
        "{\"id\":\"f1\",\"queue\":\"A\",\"writes\":[{\"buffer\":\"a\"},{\"buffer\":\"a2\"}]},"
        "{\"id\":\"s\",\"queue\":\"A\",\"kind\":\"signal\",\"event\":\"e\"},"
        "{\"id\":\"f2\",\"queue\":\"A\",\"writes\":[{\"buffer\":\"bad\"}]},"
        "{\"id\":\"w\",\"queue\":\"B\",\"kind\":\"wait\",\"event\":\"e\"},"
        "{\"id\":\"g1\",\"queue\":\"B\",\"reads\":[{\"buffer\":\"a\"},{\"buffer\":\"a2\"}],"
        "\"writes\":[{\"buffer\":\"out\"}]},"
        "{\"id\":\"g2\",\"queue\":\"B\",\"reads\":[{\"buffer\":\"out\"}]}]}",
        &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(g);
    golden_dag_result r;
    CU_ASSERT_EQUAL_FATAL(golden_dag_check(g, NULL, false, &r, &err), GOLDEN_OK);
    CU_ASSERT_EQUAL_FATAL(r.naliases, 1);
    CU_ASSERT_STRING_EQUAL(g->buffers[r.aliases[0].a].id, "bad");
    CU_ASSERT_STRING_EQUAL(g->buffers[r.aliases[0].b].id, "a2");
    CU_ASSERT_EQUAL(r.aliases[0].lo, 32);
    CU_ASSERT_EQUAL(r.aliases[0].hi, 40);
    CU_ASSERT_TRUE(r.aliases[0].inplace);
    /* and the byte-level race it causes: f2 writes [32,40) while g1 reads it */
    CU_ASSERT_EQUAL(r.nraces, 1);
    golden_dag_result_free(&r);
    golden_graph_free(g);
}

/* The streaming loader must build exactly the model the tree loader builds. */
static bool same_model(const golden_graph *a, const golden_graph *b)
{
    if (a->nops != b->nops || a->nqueues != b->nqueues || a->nbuffers != b->nbuffers ||
        a->naccesses != b->naccesses || a->nafter != b->nafter ||
        a->nbarrier_queues != b->nbarrier_queues || a->nevents != b->nevents)
        return false;
    for (uint32_t i = 0; i < a->nops; i++) {
        const golden_op *x = &a->ops[i], *y = &b->ops[i];
        if (strcmp(x->id, y->id) || x->kind != y->kind || x->queue != y->queue ||
            x->event != y->event || x->acc_first != y->acc_first ||
            x->acc_count != y->acc_count || x->after_first != y->after_first ||
            x->after_count != y->after_count || x->bq_first != y->bq_first ||
            x->bq_count != y->bq_count || x->data_size != y->data_size ||
            (x->family == GOLDEN_NONE) != (y->family == GOLDEN_NONE) ||
            (x->family != GOLDEN_NONE && strcmp(a->families[x->family], b->families[y->family])))
            return false;
    }
    for (uint32_t i = 0; i < a->naccesses; i++) {
        const golden_access *x = &a->accesses[i], *y = &b->accesses[i];
        if (x->op != y->op || x->buffer != y->buffer || x->index != y->index ||
            x->write != y->write || x->lo != y->lo || x->hi != y->hi)
            return false;
    }
    for (uint32_t i = 0; i < a->nbuffers; i++) {
        const golden_buffer *x = &a->buffers[i], *y = &b->buffers[i];
        if (strcmp(x->id, y->id) || x->domain != y->domain || x->live_first != y->live_first ||
            x->live_last != y->live_last || x->inplace_of != y->inplace_of)
            return false;
    }
    /* memcmp with NULL is undefined even for 0 bytes */
    return (!a->nafter || memcmp(a->after, b->after, a->nafter * sizeof *a->after) == 0) &&
           (!a->nbarrier_queues || memcmp(a->barrier_queues, b->barrier_queues,
                                          a->nbarrier_queues * sizeof *a->barrier_queues) == 0);
}

static void test_stream_equals_tree(void)
{
    char path[] = "/tmp/golden-graph-XXXXXX";
    int fd = mkstemp(path);
    CU_ASSERT_FATAL(fd >= 0);
    close(fd);
    setenv("GOLDEN_GRAPH_STREAM_BYTES", "0", 1);
    int same = 0, runs = 0;
    for (uint64_t seed = 1; seed <= 300; seed++) {
        json_t *root = gg_random(seed, 80);
        CU_ASSERT_PTR_NOT_NULL_FATAL(root);
        CU_ASSERT_EQUAL_FATAL(json_dump_file(root, path, seed % 2 ? JSON_INDENT(2) : JSON_COMPACT), 0);
        golden_graph *a = NULL, *b = NULL;
        golden_error err;
        CU_ASSERT_EQUAL(golden_graph_from_json(root, path, NULL, &a, &err), GOLDEN_OK);
        CU_ASSERT_EQUAL(golden_graph_load_file(path, &b, &err), GOLDEN_OK);
        if (a && b) {
            runs++;
            same += same_model(a, b);
        }
        golden_graph_free(a);
        golden_graph_free(b);
        json_decref(root);
    }
    CU_ASSERT_EQUAL(runs, 300);
    CU_ASSERT_EQUAL(same, runs);
    /* and the realistic graph */
    FILE *f = fopen(path, "w");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    gg_params p = {.layers = 4, .steps = 2, .tiles = 8, .split = 4, .seed = 3};
    CU_ASSERT_EQUAL(gg_realistic(f, &p), 0);
    CU_ASSERT_EQUAL(fclose(f), 0);
    golden_graph *b = NULL, *a = NULL;
    golden_error err;
    CU_ASSERT_EQUAL(golden_graph_load_file(path, &b, &err), GOLDEN_OK);
    json_error_t je;
    json_t *root = json_load_file(path, 0, &je);
    CU_ASSERT_PTR_NOT_NULL(root);
    CU_ASSERT_EQUAL(golden_graph_from_json(root, path, NULL, &a, &err), GOLDEN_OK);
    CU_ASSERT_TRUE(a && b && same_model(a, b));
    CU_ASSERT_EQUAL(b ? b->nops : 0, p.ops);
    CU_ASSERT_EQUAL(b ? b->naccesses : 0, p.accesses);
    golden_graph_free(a);
    golden_graph_free(b);
    json_decref(root);
    unsetenv("GOLDEN_GRAPH_STREAM_BYTES");
    unlink(path);
}

/* ---- one grammar and one set of rules, whichever loader reads the file ---- */
static const golden_graph_load_options TREE = {GOLDEN_GRAPH_LOAD_OPTIONS_VERSION, -1, false, NULL};
static const golden_graph_load_options STREAM = {GOLDEN_GRAPH_LOAD_OPTIONS_VERSION, 0, false, NULL};
static const golden_graph_load_options STREAM_SLOW = {GOLDEN_GRAPH_LOAD_OPTIONS_VERSION, 0, true,
                                                      NULL};

static void write_bytes(const char *path, const char *text, size_t len)
{
    FILE *f = fopen(path, "wb");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    CU_ASSERT_EQUAL(fwrite(text, 1, len, f), len);
    CU_ASSERT_EQUAL(fclose(f), 0);
}

/* Every key of the schema, each occurrence marked <key>: a graph that uses them all. */
static const char *ALL_KEYS =
    "{\"schema\":\"calculet-graph/v1\",\n"
    "\"queues\":[{\"<id>\":\"A\",\"<chip>\":0},{\"<id>\":\"B\",\"<chip>\":0}],\n"
    "\"buffers\":[{\"<id>\":\"x\",\"<chip>\":0,\"<space>\":\"ddr\",\"<address>\":0,\"<size>\":64,"
    "\"<live>\":[\"w\",\"r\"]},\n"
    "{\"<id>\":\"y\",\"<chip>\":0,\"<space>\":\"ddr\",\"<address>\":64,\"<size>\":64,"
    "\"<live>\":[\"r\",\"r\"],\"<inplace_of>\":\"x\"}],\n"
    "\"ops\":[{\"<id>\":\"w\",\"<queue>\":\"A\",\"<family>\":\"mm\",\"<data_size>\":64,"
    "\"<writes>\":[{\"<buffer>\":\"x\",\"<offset>\":0,\"<size>\":64}]},\n"
    "{\"<id>\":\"s\",\"<queue>\":\"A\",\"<kind>\":\"signal\",\"<event>\":\"e\"},\n"
    "{\"<id>\":\"t\",\"<queue>\":\"B\",\"<kind>\":\"wait\",\"<event>\":\"e\"},\n"
    "{\"<id>\":\"bar\",\"<kind>\":\"barrier\",\"<queues>\":[\"A\",\"B\"],\"<after>\":[\"w\"]},\n"
    "{\"<id>\":\"r\",\"<queue>\":\"B\",\"<after>\":[\"t\"],"
    "\"<reads>\":[{\"<buffer>\":\"x\",\"<offset>\":0,\"<size>\":64}]}]}\n";

/* ALL_KEYS with marker k misspelt (its first two letters swapped: "raeds", "afer"-like) and
 * the others plain; k < 0 misspells none. Returns the misspelt key in bad (or ""). */
static char *spell(int k, char *bad, size_t nbad)
{
    size_t n = strlen(ALL_KEYS);
    char *out = malloc(n + 1), *o = out;
    int at = 0;
    bad[0] = '\0';
    for (const char *p = ALL_KEYS; *p; p++) {
        if (*p != '<') {
            *o++ = *p;
            continue;
        }
        const char *end = strchr(p, '>');
        size_t len = (size_t)(end - p - 1);
        memcpy(o, p + 1, len);
        if (at++ == k) {
            char t = o[0];
            o[0] = o[1];
            o[1] = t;
            snprintf(bad, nbad, "%.*s", (int)len, o);
        }
        o += len;
        p = end;
    }
    *o = '\0';
    return out;
}

static int load_with(const char *path, const golden_graph_load_options *o, golden_error *err)
{
    golden_graph *g = NULL;
    golden_error_clear(err);
    int rc = golden_graph_load_file_opts(path, o, &g, err);
    golden_graph_free(g);
    return rc;
}

/* "file:LINE:COL" */
static bool has_position(const golden_error *err)
{
    const char *c = strstr(err->where, ".json:");
    return c && c[6] >= '1' && c[6] <= '9';
}

static void test_misspelt_keys(void)
{
    char path[] = "/tmp/golden-keys-XXXXXX";
    int fd = mkstemp(path);
    CU_ASSERT_FATAL(fd >= 0);
    close(fd);
    char json[64];
    snprintf(json, sizeof json, "%s.json", path);
    char bad[64];
    char *text = spell(-1, bad, sizeof bad);
    write_bytes(json, text, strlen(text));
    golden_error err;
    CU_ASSERT_EQUAL(load_with(json, &TREE, &err), GOLDEN_OK);
    CU_ASSERT_EQUAL(load_with(json, &STREAM, &err), GOLDEN_OK);
    CU_ASSERT_EQUAL(load_with(json, &STREAM_SLOW, &err), GOLDEN_OK);
    free(text);
    int keys = 0;
    for (int k = 0;; k++) {
        text = spell(k, bad, sizeof bad);
        if (!bad[0]) {
            free(text);
            break;
        }
        keys++;
        write_bytes(json, text, strlen(text));
        char want[96];
        snprintf(want, sizeof want, "unknown key \"%s\"", bad);
        const golden_graph_load_options *modes[] = {&STREAM, &STREAM_SLOW, &TREE};
        for (int m = 0; m < 3; m++) {
            CU_ASSERT_EQUAL(load_with(json, modes[m], &err), GOLDEN_ERR);
            CU_ASSERT_TRUE(has_position(&err));
            /* the tree path's schema speaks first: "not allowed", or a required key missing */
            bool named = m < 2 ? strstr(err.what, want) != NULL
                               : strstr(err.what, bad) != NULL || strstr(err.what, "required");
            CU_ASSERT_TRUE(named);
            if (!named || !has_position(&err))
                fprintf(stderr, "\n  key %s, mode %d: %s: %s\n", bad, m, err.where, err.what);
        }
        free(text);
    }
    CU_ASSERT_EQUAL(keys, 44);
    unlink(json);
    unlink(path);
}

/* A misspelt or unknown top-level key ("opps") is an error with its place on every loader,
 * JSON and YAML alike: the ops it holds would otherwise be dropped and the graph pass. */
static void test_unknown_top_level_key(void)
{
    static const char *json = "{\"schema\":\"calculet-graph/v1\",\n"
                              "\"queues\":[{\"id\":\"A\",\"chip\":0}],\n"
                              "\"ops\":[],\n"
                              "\"opps\":[{\"id\":\"x\",\"queue\":\"A\"}]}\n";
    char path[] = "/tmp/golden-top-XXXXXX.json";
    int fd = mkstemps(path, 5);
    CU_ASSERT_FATAL(fd >= 0);
    close(fd);
    write_bytes(path, json, strlen(json));
    const golden_graph_load_options *modes[] = {&TREE, &STREAM, &STREAM_SLOW};
    for (int m = 0; m < 3; m++) {
        golden_error err;
        CU_ASSERT_EQUAL(load_with(path, modes[m], &err), GOLDEN_ERR);
        CU_ASSERT_PTR_NOT_NULL(strstr(err.what, "opps"));
        /* line 4 is where "opps" is (the tree path points at its value, same line) */
        CU_ASSERT_PTR_NOT_NULL(strstr(err.where, ".json:4:"));
        if (m > 0)
            CU_ASSERT_PTR_NOT_NULL(strstr(err.what, "unknown key \"opps\""));
    }
    /* the library's own entry point (no schema in front of it) refuses it too */
    golden_doc *d = NULL;
    golden_error err;
    CU_ASSERT_EQUAL_FATAL(golden_doc_load_file(path, &d, &err), GOLDEN_OK);
    golden_graph *g = NULL;
    CU_ASSERT_EQUAL(golden_graph_from_json(golden_doc_root(d), path, d, &g, &err), GOLDEN_ERR);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.what, "the graph: unknown key \"opps\""));
    golden_graph_free(g);
    golden_doc_free(d);
    unlink(path);
    /* YAML: the tree path */
    static const char *yaml = "schema: calculet-graph/v1\nqueues:\n  - {id: A, chip: 0}\n"
                              "ops: []\nopps:\n  - {id: x, queue: A}\n";
    char ypath[] = "/tmp/golden-top-XXXXXX.yaml";
    fd = mkstemps(ypath, 5);
    CU_ASSERT_FATAL(fd >= 0);
    close(fd);
    write_bytes(ypath, yaml, strlen(yaml));
    CU_ASSERT_EQUAL(load_with(ypath, NULL, &err), GOLDEN_ERR);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.what, "opps"));
    CU_ASSERT_PTR_NOT_NULL(strstr(err.where, ".yaml:"));
    unlink(ypath);
}

/* The same, in a real file of 32 MiB and more (padded with white space before the closing
 * brace: an unknown top-level key is an error too), read with the default options: the
 * streaming path by size. */
static void test_misspelt_keys_big(void)
{
    char path[] = "/tmp/golden-big-XXXXXX.json";
    int fd = mkstemps(path, 5);
    CU_ASSERT_FATAL(fd >= 0);
    char bad[64];
    char *head = spell(-1, bad, sizeof bad);
    size_t nh = strlen(head) - 2; /* without the closing "}\n" */
    size_t pad = ((size_t)32 << 20) + 1;
    char *big = malloc(nh + pad + 32);
    CU_ASSERT_PTR_NOT_NULL_FATAL(big);
    memcpy(big, head, nh);
    size_t n = nh;
    big[n++] = '\n';
    memset(big + n, ' ', pad);
    n += pad;
    n += (size_t)sprintf(big + n, "}\n");
    CU_ASSERT_EQUAL_FATAL(write(fd, big, n), (ssize_t)n);
    golden_error err;
    CU_ASSERT_EQUAL(load_with(path, NULL, &err), GOLDEN_OK);
    int keys = 0;
    for (int k = 0;; k++) {
        char *text = spell(k, bad, sizeof bad);
        if (!bad[0]) {
            free(text);
            break;
        }
        keys++;
        /* a swap keeps the length: rewrite the head in place */
        CU_ASSERT_EQUAL(pwrite(fd, text, nh, 0), (ssize_t)nh);
        char want[96];
        snprintf(want, sizeof want, "unknown key \"%s\"", bad);
        CU_ASSERT_EQUAL(load_with(path, NULL, &err), GOLDEN_ERR);
        CU_ASSERT_PTR_NOT_NULL(strstr(err.what, want));
        CU_ASSERT_TRUE(has_position(&err));
        free(text);
    }
    CU_ASSERT_EQUAL(keys, 44);
    close(fd);
    free(head);
    free(big);
    unlink(path);
}

/* Files every loader must refuse: the grammar (RFC 8259 as the document loader reads it) and
 * the rules are one, whatever the size. */
static void test_both_paths_refuse(void)
{
    static const char *HEAD = "{\"schema\":\"calculet-graph/v1\",\"queues\":[{\"id\":\"A\",\"chip\":0}],"
                              "\"buffers\":[{\"id\":\"b\",\"chip\":0,\"space\":\"ddr\",\"address\":0,\"size\":8}],";
    struct {
        const char *name, *tail;
        size_t len; /* 0: strlen */
    } bad[] = {
        {"trailing comma at the top", "\"ops\":[{\"id\":\"x\",\"queue\":\"A\"}],}", 0},
        {"trailing comma in ops", "\"ops\":[{\"id\":\"x\",\"queue\":\"A\"},]}", 0},
        {"trailing comma in an op", "\"ops\":[{\"id\":\"x\",\"queue\":\"A\",}]}", 0},
        {"trailing comma in an access",
         "\"ops\":[{\"id\":\"x\",\"queue\":\"A\",\"reads\":[{\"buffer\":\"b\",}]}]}", 0},
        {"trailing comma in accesses",
         "\"ops\":[{\"id\":\"x\",\"queue\":\"A\",\"reads\":[{\"buffer\":\"b\"},]}]}", 0},
        {"trailing comma in after", "\"ops\":[{\"id\":\"x\",\"queue\":\"A\",\"after\":[\"x\",]}]}", 0},
        {"invalid UTF-8 in an unknown key's value",
         "\"ops\":[{\"id\":\"x\",\"queue\":\"A\"}],\"note\":\"\xff\xfe\"}", 0},
        {"invalid UTF-8 in an unknown key", "\"ops\":[{\"id\":\"x\",\"queue\":\"A\"}],\"\xc3\":1}", 0},
        {"raw NUL in an unknown key's value",
         "\"ops\":[{\"id\":\"x\",\"queue\":\"A\"}],\"note\":\"a\0b\"}", 44},
        {"raw NUL in an id", "\"ops\":[{\"id\":\"x\0y\",\"queue\":\"A\"}]}", 33},
        {"leading zero in an unknown key's value", "\"ops\":[{\"id\":\"x\",\"queue\":\"A\"}],\"n\":01}", 0},
        {"leading zero in data_size", "\"ops\":[{\"id\":\"x\",\"queue\":\"A\",\"data_size\":07}]}", 0},
        {"escaped NUL in an op id", "\"ops\":[{\"id\":\"x\\u0000y\",\"queue\":\"A\"}]}", 0},
        {"escaped NUL in a queue reference",
         "\"ops\":[{\"id\":\"x\",\"queue\":\"A\\u0000c\"}]}", 0},
        {"duplicate unknown top-level key", "\"ops\":[],\"n\":1,\"n\":2}", 0},
        {"duplicate key in an op", "\"ops\":[{\"id\":\"x\",\"queue\":\"A\",\"queue\":\"A\"}]}", 0},
        {"misspelt reads", "\"ops\":[{\"id\":\"x\",\"queue\":\"A\",\"raeds\":[]}]}", 0},
        {"misspelt ops beside ops", "\"ops\":[],\"opps\":[{\"id\":\"x\",\"queue\":\"A\"}]}", 0},
        {"an unknown top-level key", "\"ops\":[],\"note\":\"fine\"}", 0},
        {"trailing data", "\"ops\":[]} x", 0},
        /* what the schema says, the rules say too (the streaming path runs no schema) */
        {"negative data_size", "\"ops\":[{\"id\":\"x\",\"queue\":\"A\",\"data_size\":-1}]}", 0},
        {"string offset", "\"ops\":[{\"id\":\"x\",\"queue\":\"A\",\"reads\":[{\"buffer\":\"b\",\"offset\":\"0\"}]}]}", 0},
        {"real size", "\"ops\":[{\"id\":\"x\",\"queue\":\"A\",\"reads\":[{\"buffer\":\"b\",\"size\":1.5}]}]}", 0},
        {"missing op id", "\"ops\":[{\"queue\":\"A\"}]}", 0},
        {"empty op id", "\"ops\":[{\"id\":\"\",\"queue\":\"A\"}]}", 0},
        {"unknown kind", "\"ops\":[{\"id\":\"x\",\"queue\":\"A\",\"kind\":\"fence\"}]}", 0},
        {"barrier with a queue", "\"ops\":[{\"id\":\"x\",\"kind\":\"barrier\",\"queue\":\"A\",\"queues\":[\"A\"]}]}", 0},
        {"barrier without queues", "\"ops\":[{\"id\":\"x\",\"kind\":\"barrier\",\"queues\":[]}]}", 0},
        {"signal without event", "\"ops\":[{\"id\":\"x\",\"queue\":\"A\",\"kind\":\"signal\"}]}", 0},
        {"compute with event", "\"ops\":[{\"id\":\"x\",\"queue\":\"A\",\"event\":\"e\"}]}", 0},
        {"wait that reads", "\"ops\":[{\"id\":\"s\",\"queue\":\"A\",\"kind\":\"signal\",\"event\":\"e\"},"
         "{\"id\":\"x\",\"queue\":\"A\",\"kind\":\"wait\",\"event\":\"e\",\"reads\":[{\"buffer\":\"b\"}]}]}", 0},
        {"after not a list", "\"ops\":[{\"id\":\"x\",\"queue\":\"A\",\"after\":\"x\"}]}", 0},
        {"after of numbers", "\"ops\":[{\"id\":\"x\",\"queue\":\"A\",\"after\":[1]}]}", 0},
        {"access without buffer", "\"ops\":[{\"id\":\"x\",\"queue\":\"A\",\"reads\":[{\"offset\":0}]}]}", 0},
    };
    char path[] = "/tmp/golden-bad-XXXXXX.json";
    int fd = mkstemps(path, 5);
    CU_ASSERT_FATAL(fd >= 0);
    close(fd);
    size_t nhead = strlen(HEAD);
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        size_t nt = bad[i].len ? bad[i].len : strlen(bad[i].tail);
        char *text = malloc(nhead + nt);
        memcpy(text, HEAD, nhead);
        memcpy(text + nhead, bad[i].tail, nt);
        write_bytes(path, text, nhead + nt);
        free(text);
        const golden_graph_load_options *modes[] = {&TREE, &STREAM, &STREAM_SLOW};
        for (int m = 0; m < 3; m++) {
            golden_error err;
            int rc = load_with(path, modes[m], &err);
            CU_ASSERT_EQUAL(rc, GOLDEN_ERR);
            if (rc != GOLDEN_ERR)
                fprintf(stderr, "\n  %s: accepted by mode %d\n", bad[i].name, m);
        }
    }
    /* 10^6-deep nesting in an unknown key: refused, without a deep recursion anywhere */
    size_t depth = 1000000;
    char *deep = malloc(nhead + 2 * depth + 64);
    size_t n = (size_t)sprintf(deep, "%s\"ops\":[],\"n\":", HEAD);
    memset(deep + n, '[', depth);
    memset(deep + n + depth, ']', depth);
    n += 2 * depth;
    deep[n++] = '}';
    write_bytes(path, deep, n);
    free(deep);
    golden_error err;
    CU_ASSERT_EQUAL(load_with(path, &TREE, &err), GOLDEN_ERR);
    CU_ASSERT_EQUAL(load_with(path, &STREAM, &err), GOLDEN_ERR);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.what, "nesting deeper"));
    /* nesting right at the limit counts from the file's top on both paths: the root object
     * and the array each count, so 510 more levels are the most a value may hold. The
     * grammar judges an unknown key's value before the key is refused: within the limit the
     * refusal names the key, beyond it the nesting, on both paths alike. */
    for (size_t d = 509; d <= 511; d++) {
        deep = malloc(nhead + 2 * d + 64);
        n = (size_t)sprintf(deep, "%s\"ops\":[],\"n\":", HEAD);
        memset(deep + n, '[', d);
        memset(deep + n + d, ']', d);
        n += 2 * d;
        deep[n++] = '}';
        write_bytes(path, deep, n);
        free(deep);
        int t = load_with(path, &TREE, &err);
        bool t_nest = strstr(err.what, "nesting deeper") != NULL;
        bool t_key = strstr(err.what, "\"n\"") != NULL;
        int st = load_with(path, &STREAM, &err);
        bool st_nest = strstr(err.what, "nesting deeper") != NULL;
        bool st_key = strstr(err.what, "unknown key \"n\"") != NULL;
        CU_ASSERT_EQUAL(t, GOLDEN_ERR);
        CU_ASSERT_EQUAL(st, GOLDEN_ERR);
        bool within = d + 1 <= GOLDEN_DOC_MAX_DEPTH;
        CU_ASSERT_EQUAL(t_nest, !within);
        CU_ASSERT_EQUAL(st_nest, !within);
        CU_ASSERT_EQUAL(t_key, within);
        CU_ASSERT_EQUAL(st_key, within);
    }
    /* ids that differ after a NUL must never meet: refused, not cut to "a" */
    const char *nul = "{\"schema\":\"calculet-graph/v1\",\"queues\":[{\"id\":\"a\\u0000b\","
                      "\"chip\":0}],\"ops\":[{\"id\":\"x\",\"queue\":\"a\\u0000c\"}]}";
    write_bytes(path, nul, strlen(nul));
    CU_ASSERT_EQUAL(load_with(path, &TREE, &err), GOLDEN_ERR);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.what, "NUL"));
    CU_ASSERT_EQUAL(load_with(path, &STREAM, &err), GOLDEN_ERR);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.what, "NUL"));
    unlink(path);
}

/* The verdict of a file through one loader: load status, then the check's counts. */
static void verdict(const char *path, const golden_graph_load_options *o, char *out, size_t n)
{
    golden_graph *g = NULL;
    golden_error err;
    if (golden_graph_load_file_opts(path, o, &g, &err) != GOLDEN_OK) {
        snprintf(out, n, "refused");
        return;
    }
    golden_dag_result r;
    if (golden_dag_check(g, NULL, true, &r, &err) != GOLDEN_OK) {
        snprintf(out, n, "check error: %.200s", err.what);
    } else {
        snprintf(out, n, "cyclic %d races %zu aliases %zu pass %d", r.cyclic, r.nraces,
                 r.naliases, golden_dag_passed(&r));
        golden_dag_result_free(&r);
    }
    golden_graph_free(g);
}

static const char *graphs_dir(void)
{
    static char out[PATH_MAX + 64];
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0)
        return "tests/data/graphs";
    exe[n] = '\0';
    for (int up = 0; up < 3; up++) {
        char *s = strrchr(exe, '/');
        if (s)
            *s = '\0';
    }
    snprintf(out, sizeof out, "%s/tests/data/graphs", exe);
    return out;
}

static void test_same_verdict_both_paths(void)
{
    char a[256], b[256], c[256];
    int files = 0;
    DIR *d = opendir(graphs_dir());
    CU_ASSERT_PTR_NOT_NULL_FATAL(d);
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        size_t len = strlen(e->d_name);
        if (len < 5 || strcmp(e->d_name + len - 5, ".json") != 0)
            continue;
        char path[PATH_MAX + 300];
        snprintf(path, sizeof path, "%s/%s", graphs_dir(), e->d_name);
        verdict(path, &TREE, a, sizeof a);
        verdict(path, &STREAM, b, sizeof b);
        verdict(path, &STREAM_SLOW, c, sizeof c);
        CU_ASSERT_STRING_EQUAL(a, b);
        CU_ASSERT_STRING_EQUAL(a, c);
        files++;
    }
    closedir(d);
    CU_ASSERT_TRUE(files >= 10);
    /* and the oracle's random graphs (cycles, races, aliases, after edges on barriers) */
    char path[] = "/tmp/golden-rand-XXXXXX.json";
    int fd = mkstemps(path, 5);
    CU_ASSERT_FATAL(fd >= 0);
    close(fd);
    for (uint64_t seed = 1; seed <= 400; seed++) {
        json_t *root = gg_random(seed, seed % 25 == 0 ? 300 : 40);
        CU_ASSERT_PTR_NOT_NULL_FATAL(root);
        CU_ASSERT_EQUAL_FATAL(json_dump_file(root, path, seed % 2 ? JSON_INDENT(2) : JSON_COMPACT), 0);
        json_decref(root);
        verdict(path, &TREE, a, sizeof a);
        verdict(path, &STREAM, b, sizeof b);
        verdict(path, &STREAM_SLOW, c, sizeof c);
        CU_ASSERT_STRING_EQUAL(a, b);
        CU_ASSERT_STRING_EQUAL(a, c);
    }
    unlink(path);
}

/* ---- memory-plan holes (issue 18: 8, 9, 10 and the in-place chain) ---- */
#define Q3 "\"queues\":[{\"id\":\"q0\",\"chip\":0},{\"id\":\"q1\",\"chip\":0},{\"id\":\"q2\",\"chip\":0}],"
#define BUF(id, addr, size, first, last) \
    "{\"id\":\"" id "\",\"chip\":0,\"space\":\"ddr\",\"address\":" #addr ",\"size\":" #size \
    ",\"live\":[\"" first "\",\"" last "\"]}"

static bool has_alias(const golden_dag_result *r, const char *x, const char *y, bool *is_new)
{
    const golden_graph *g = r->g;
    for (size_t i = 0; i < r->naliases; i++) {
        const char *a = g->buffers[r->aliases[i].a].id, *b = g->buffers[r->aliases[i].b].id;
        if ((!strcmp(a, x) && !strcmp(b, y)) || (!strcmp(a, y) && !strcmp(b, x))) {
            if (is_new)
                *is_new = r->aliases[i].is_new;
            return true;
        }
    }
    return false;
}

/* Three buffers live on three unordered queues. Baseline: A [0,32), B [0,64), C [32,64): A/B and
 * B/C alias. The candidate grows C to [0,64): A/C is a new alias, hidden before behind the old
 * pairs (the sweep compared C with B only). */
static void test_new_alias_behind_old(void)
{
#define ALIAS_GRAPH(caddr, csize) \
    "{\"schema\":\"calculet-graph/v1\"," Q3 "\"buffers\":[" BUF("A", 0, 32, "a1", "a2") "," \
    BUF("B", 0, 64, "b1", "b2") "," BUF("C", caddr, csize, "c1", "c2") "],\"ops\":[" \
    "{\"id\":\"a1\",\"queue\":\"q0\"},{\"id\":\"a2\",\"queue\":\"q0\"}," \
    "{\"id\":\"b1\",\"queue\":\"q1\"},{\"id\":\"b2\",\"queue\":\"q1\"}," \
    "{\"id\":\"c1\",\"queue\":\"q2\"},{\"id\":\"c2\",\"queue\":\"q2\"}]}"
    golden_error err;
    golden_graph *base = load(ALIAS_GRAPH(32, 32), &err), *cand = load(ALIAS_GRAPH(0, 64), &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(base);
    CU_ASSERT_PTR_NOT_NULL_FATAL(cand);
    golden_dag_result br, cr, all;
    CU_ASSERT_EQUAL_FATAL(golden_dag_check(base, NULL, false, &br, &err), GOLDEN_OK);
    CU_ASSERT_EQUAL_FATAL(golden_dag_check(cand, NULL, false, &cr, &err), GOLDEN_OK);
    CU_ASSERT_EQUAL_FATAL(golden_dag_compare(&br, &cr, &err), GOLDEN_OK);
    bool is_new = false;
    CU_ASSERT_TRUE(has_alias(&cr, "A", "C", &is_new));
    CU_ASSERT_TRUE(is_new);
    CU_ASSERT_EQUAL(cr.new_aliases, 1);
    CU_ASSERT_FALSE(golden_dag_passed(&cr));
    /* --all lists every pair: A/B, A/C, B/C */
    CU_ASSERT_EQUAL_FATAL(golden_dag_check(cand, NULL, true, &all, &err), GOLDEN_OK);
    CU_ASSERT_EQUAL(all.naliases, 3);
    CU_ASSERT_TRUE(has_alias(&all, "A", "C", NULL));
    golden_dag_result_free(&all);
    golden_dag_result_free(&br);
    golden_dag_result_free(&cr);
    golden_graph_free(base);
    golden_graph_free(cand);
}

/* A and B alias (unordered); C follows A through the wait w only. Removing w makes A and C
 * live together: --remove must say so (not hide A/C behind A/B), and --redundant must not
 * offer w as ordering nothing. */
static void test_removal_alias_behind_old(void)
{
    golden_error err;
    golden_graph *g = load(
        "{\"schema\":\"calculet-graph/v1\"," Q3 "\"buffers\":[" BUF("A", 0, 64, "a1", "a1") ","
        BUF("B", 0, 64, "b1", "b1") "," BUF("C", 0, 64, "c1", "c1") "],\"ops\":["
        "{\"id\":\"a1\",\"queue\":\"q0\"},{\"id\":\"s\",\"queue\":\"q0\",\"kind\":\"signal\",\"event\":\"e\"},"
        "{\"id\":\"b1\",\"queue\":\"q1\"},"
        "{\"id\":\"w\",\"queue\":\"q2\",\"kind\":\"wait\",\"event\":\"e\"},{\"id\":\"c1\",\"queue\":\"q2\"}]}",
        &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(g);
    golden_dag_result r, c;
    CU_ASSERT_EQUAL_FATAL(golden_dag_check(g, NULL, false, &r, &err), GOLDEN_OK);
    CU_ASSERT_TRUE(r.naliases >= 1);
    golden_sync *set;
    size_t n;
    CU_ASSERT_EQUAL_FATAL(golden_dag_parse_syncs(g, "w", &set, &n, &err), GOLDEN_OK);
    CU_ASSERT_EQUAL_FATAL(golden_dag_verify_removal(&r, set, n, &c, &err), GOLDEN_OK);
    bool is_new = false;
    CU_ASSERT_TRUE(has_alias(&c, "A", "C", &is_new));
    CU_ASSERT_TRUE(is_new);
    CU_ASSERT_EQUAL(c.new_aliases, 1);
    CU_ASSERT_FALSE(golden_dag_passed(&c));
    golden_dag_result_free(&c);
    free(set);
    CU_ASSERT_EQUAL_FATAL(golden_dag_redundant(&r, 1, NULL, &err), GOLDEN_OK);
    for (size_t i = 0; i < r.nidle; i++)
        CU_ASSERT_NOT_EQUAL(r.idle[i].sync.op, golden_graph_find_op(g, "w"));
    golden_dag_result_free(&r);
    golden_graph_free(g);
}

/* live: ["late", "early"] is an error, not an empty range that hides a clobber. */
static void test_reversed_live(void)
{
    golden_error err;
    golden_graph *g = load(
        "{\"schema\":\"calculet-graph/v1\"," Q3 "\"buffers\":[" BUF("A", 0, 64, "late", "early") ","
        BUF("B", 0, 64, "b1", "b1") "],\"ops\":["
        "{\"id\":\"early\",\"queue\":\"q0\"},{\"id\":\"late\",\"queue\":\"q0\"},{\"id\":\"b1\",\"queue\":\"q1\"}]}",
        &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(g);
    golden_dag_result r;
    CU_ASSERT_EQUAL(golden_dag_check(g, NULL, false, &r, &err), GOLDEN_ERR);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.what, "buffer \"A\""));
    CU_ASSERT_PTR_NOT_NULL(strstr(err.what, "ends before it starts"));
    golden_graph_free(g);
}

/* B's first and last use sit on unordered queues (q1, q2). A ends before B's first use (wait)
 * but not before its last; C starts after B's last use on q2 and is unordered with A. As a
 * union of its endpoints, B overlaps A in time; and A/C, which the chain A -> B -> C hid, is
 * an alias too. */
static void test_unordered_live_endpoints(void)
{
    golden_error err;
    golden_graph *g = load(
        "{\"schema\":\"calculet-graph/v1\"," Q3 "\"buffers\":[" BUF("A", 0, 64, "a1", "a1") ","
        BUF("B", 0, 64, "b1", "b2") "," BUF("C", 0, 64, "c1", "c1") "],\"ops\":["
        "{\"id\":\"a1\",\"queue\":\"q0\"},{\"id\":\"s\",\"queue\":\"q0\",\"kind\":\"signal\",\"event\":\"e\"},"
        "{\"id\":\"w\",\"queue\":\"q1\",\"kind\":\"wait\",\"event\":\"e\"},{\"id\":\"b1\",\"queue\":\"q1\"},"
        "{\"id\":\"b2\",\"queue\":\"q2\"},{\"id\":\"c1\",\"queue\":\"q2\"}]}",
        &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(g);
    for (int all = 0; all < 2; all++) {
        golden_dag_result r;
        CU_ASSERT_EQUAL_FATAL(golden_dag_check(g, NULL, all, &r, &err), GOLDEN_OK);
        CU_ASSERT_FALSE(golden_dag_passed(&r));
        if (all) {
            /* A/B (b2 unordered with a1), A/C; B/C ordered (b1? no: b1 on q1 is unordered
             * with c1 on q2), so B/C too */
            CU_ASSERT_EQUAL(r.naliases, 3);
            CU_ASSERT_TRUE(has_alias(&r, "A", "C", NULL));
            CU_ASSERT_TRUE(has_alias(&r, "A", "B", NULL));
        }
        golden_dag_result_free(&r);
    }
    golden_graph_free(g);
}

/* An in-place chain through one op f: B in place of A, C in place of B. A and C overlap and
 * are not declared in place of each other, and A's last use is C's first: an alias that the
 * chain used to hide. */
static void test_inplace_chain(void)
{
    golden_error err;
    golden_graph *g = load(
        "{\"schema\":\"calculet-graph/v1\"," Q3 "\"buffers\":[" BUF("A", 0, 64, "p", "f") ","
        "{\"id\":\"B\",\"chip\":0,\"space\":\"ddr\",\"address\":0,\"size\":64,\"live\":[\"f\",\"f\"],"
        "\"inplace_of\":\"A\"},"
        "{\"id\":\"C\",\"chip\":0,\"space\":\"ddr\",\"address\":0,\"size\":64,\"live\":[\"f\",\"q\"],"
        "\"inplace_of\":\"B\"}],\"ops\":["
        "{\"id\":\"p\",\"queue\":\"q0\"},{\"id\":\"f\",\"queue\":\"q0\"},{\"id\":\"q\",\"queue\":\"q0\"}]}",
        &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(g);
    golden_dag_result r;
    CU_ASSERT_EQUAL_FATAL(golden_dag_check(g, NULL, false, &r, &err), GOLDEN_OK);
    CU_ASSERT_EQUAL(r.naliases, 1);
    CU_ASSERT_TRUE(has_alias(&r, "A", "C", NULL));
    CU_ASSERT_FALSE(golden_dag_passed(&r));
    golden_dag_result_free(&r);
    golden_graph_free(g);
}

/* A barrier whose `after` edge carries an ordering: w (q0) -> bar (after: [w]) -> r (after:
 * [bar]). Removing bar takes both edges with it (as --remove does), so it is not implied. */
static void test_barrier_after_removal(void)
{
    golden_error err;
    golden_graph *g = load(
        "{\"schema\":\"calculet-graph/v1\"," Q3
        "\"buffers\":[{\"id\":\"x\",\"chip\":0,\"space\":\"ddr\",\"address\":0,\"size\":8}],\"ops\":["
        "{\"id\":\"w\",\"queue\":\"q0\",\"writes\":[{\"buffer\":\"x\"}]},"
        "{\"id\":\"bar\",\"kind\":\"barrier\",\"queues\":[\"q2\"],\"after\":[\"w\"]},"
        "{\"id\":\"r\",\"queue\":\"q1\",\"after\":[\"bar\"],\"reads\":[{\"buffer\":\"x\"}]}]}",
        &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(g);
    golden_dag_result r, c;
    CU_ASSERT_EQUAL_FATAL(golden_dag_check(g, NULL, false, &r, &err), GOLDEN_OK);
    CU_ASSERT_TRUE(golden_dag_passed(&r));
    CU_ASSERT_EQUAL_FATAL(golden_dag_redundant(&r, 1, NULL, &err), GOLDEN_OK);
    for (size_t i = 0; i < r.nidle; i++)
        CU_ASSERT_NOT_EQUAL(r.idle[i].sync.op, golden_graph_find_op(g, "bar"));
    golden_sync *set;
    size_t n;
    CU_ASSERT_EQUAL_FATAL(golden_dag_parse_syncs(g, "bar", &set, &n, &err), GOLDEN_OK);
    CU_ASSERT_EQUAL_FATAL(golden_dag_verify_removal(&r, set, n, &c, &err), GOLDEN_OK);
    CU_ASSERT_EQUAL(c.new_races, 1);
    golden_dag_result_free(&c);
    free(set);
    golden_dag_result_free(&r);
    golden_graph_free(g);
}

/* ---- clocks follow the graph's width, not its queue count ---- */
/* N queues, each "wait for the previous queue's event, then signal its own": a hand-off
 * through every queue (cyclic: queue 0 also waits for the last one). */
static char *handoff_graph(uint32_t N, bool cyclic)
{
    size_t cap = (size_t)N * 200 + 256, n = 0;
    char *t = malloc(cap);
    n += (size_t)sprintf(t + n, "{\"schema\":\"calculet-graph/v1\",\"queues\":[");
    for (uint32_t i = 0; i < N; i++)
        n += (size_t)sprintf(t + n, "%s{\"id\":\"q%u\",\"chip\":0}", i ? "," : "", i);
    n += (size_t)sprintf(t + n, "],\"ops\":[");
    for (uint32_t i = 0; i < N; i++) {
        if (i || cyclic)
            n += (size_t)sprintf(t + n, "{\"id\":\"w%u\",\"queue\":\"q%u\",\"kind\":\"wait\","
                                        "\"event\":\"e%u\"},", i, i, (i + N - 1) % N);
        n += (size_t)sprintf(t + n, "{\"id\":\"s%u\",\"queue\":\"q%u\",\"kind\":\"signal\","
                                    "\"event\":\"e%u\"}%s", i, i, i, i + 1 < N ? "," : "");
    }
    sprintf(t + n, "]}");
    return t;
}

static void test_wide_queues(void)
{
    const uint32_t N = 100000;
    golden_error err;
    /* the cycle is found before any clock exists (10^5 x 2*10^5 clocks would be 80 GB) */
    char *text = handoff_graph(N, true);
    golden_graph *g = load(text, &err);
    free(text);
    CU_ASSERT_PTR_NOT_NULL_FATAL(g);
    golden_dag_result r;
    CU_ASSERT_EQUAL_FATAL(golden_dag_check(g, NULL, false, &r, &err), GOLDEN_OK);
    CU_ASSERT_TRUE(r.cyclic);
    CU_ASSERT_EQUAL(r.hb->ncycle, 2 * N);
    CU_ASSERT_PTR_NULL(r.hb->clock);
    golden_dag_result_free(&r);
    golden_graph_free(g);
    /* acyclic: every queue hands over to the next, so all share one lane */
    text = handoff_graph(N, false);
    g = load(text, &err);
    free(text);
    CU_ASSERT_PTR_NOT_NULL_FATAL(g);
    CU_ASSERT_EQUAL_FATAL(golden_dag_check(g, NULL, false, &r, &err), GOLDEN_OK);
    CU_ASSERT_FALSE(r.cyclic);
    CU_ASSERT_EQUAL(r.hb->K, 1);
    CU_ASSERT_TRUE(golden_dag_passed(&r));
    uint32_t s0 = golden_graph_find_op(g, "s0"), last = golden_graph_find_op(g, "s99999");
    uint32_t mid = golden_graph_find_op(g, "w50000");
    CU_ASSERT_TRUE(golden_hb_before(r.hb, s0, last));
    CU_ASSERT_TRUE(golden_hb_before(r.hb, mid, last));
    CU_ASSERT_FALSE(golden_hb_before(r.hb, last, s0));
    golden_dag_result_free(&r);
    golden_graph_free(g);
}


/* ---- hostile ids: many ids with one plain FNV-1a slot ---- */
static uint64_t fnv1a(const char *s, size_t n)
{
    uint64_t h = 1469598103934665603ULL;
    for (size_t i = 0; i < n; i++)
        h = (h ^ (unsigned char)s[i]) * 1099511628211ULL;
    return h;
}

#define COLLIDE_BITS 24
#define COLLIDE_MASK ((1ULL << COLLIDE_BITS) - 1)
#define COLLIDE_BLOCKS 18
#define COLLIDE_LEN 4

/* FNV-1a's low bits after a byte depend on the low bits before it only, so strings whose
 * states agree in the low 24 bits keep agreeing after any common suffix. Per block, two
 * different 4-character blocks that take the (common) low state to one value are found by
 * search (3-character blocks never collide: too little mixing); 18 blocks, each chosen from
 * its pair, give 2^18 ids whose plain FNV-1a agrees in the low 24 bits: one home slot in any
 * table of up to 2^24 slots indexed that way, so such a map probes quadratically. */
static void collide_blocks(char pairs[COLLIDE_BLOCKS][2][COLLIDE_LEN + 1], uint64_t *state)
{
    static const char al[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-";
    uint64_t st = *state;
    uint32_t *seen = calloc((size_t)COLLIDE_MASK + 1, sizeof *seen); /* low state: candidate + 1 */
    uint32_t *touched = malloc(((size_t)1 << 24) * sizeof *touched);
    CU_ASSERT_PTR_NOT_NULL_FATAL(seen);
    CU_ASSERT_PTR_NOT_NULL_FATAL(touched);
    for (int b = 0; b < COLLIDE_BLOCKS; b++) {
        bool found = false;
        size_t nt = 0;
        for (uint32_t c = 0; c < (1u << 24) && !found; c++) {
            char blk[COLLIDE_LEN];
            uint64_t h = st;
            for (int k = 0; k < COLLIDE_LEN; k++) {
                blk[k] = al[(c >> (6 * k)) & 63];
                h = (h ^ (unsigned char)blk[k]) * 1099511628211ULL;
            }
            uint32_t low = (uint32_t)(h & COLLIDE_MASK);
            if (seen[low]) {
                uint32_t o = seen[low] - 1;
                for (int k = 0; k < COLLIDE_LEN; k++)
                    pairs[b][0][k] = al[(o >> (6 * k)) & 63];
                memcpy(pairs[b][1], blk, COLLIDE_LEN);
                pairs[b][0][COLLIDE_LEN] = pairs[b][1][COLLIDE_LEN] = '\0';
                st = low;
                found = true;
            } else {
                seen[low] = c + 1;
                touched[nt++] = low;
            }
        }
        CU_ASSERT_TRUE_FATAL(found);
        for (size_t k = 0; k < nt; k++)
            seen[touched[k]] = 0;
    }
    free(seen);
    free(touched);
    *state = st;
}

static void test_colliding_ids(void)
{
    char pairs[COLLIDE_BLOCKS][2][COLLIDE_LEN + 1];
    uint64_t low = fnv1a("o", 1) & COLLIDE_MASK;
    collide_blocks(pairs, &low);
    const uint32_t N = 1u << COLLIDE_BLOCKS;
    size_t idlen = 1 + COLLIDE_LEN * COLLIDE_BLOCKS;
    char *text = malloc((size_t)N * (2 * idlen + 48) + 256);
    CU_ASSERT_PTR_NOT_NULL_FATAL(text);
    size_t n = (size_t)sprintf(text, "{\"schema\":\"calculet-graph/v1\",\"queues\":[{\"id\":\"q\","
                                     "\"chip\":0}],\n\"ops\":[\n");
    char id[96], prev[96] = "";
    uint64_t first = 0;
    int agree = 1;
    for (uint32_t i = 0; i < N; i++) {
        id[0] = 'o';
        for (int b = 0; b < COLLIDE_BLOCKS; b++)
            memcpy(id + 1 + COLLIDE_LEN * b, pairs[b][(i >> b) & 1], COLLIDE_LEN);
        id[idlen] = '\0';
        /* the generator's claim, checked with FNV-1a itself */
        uint64_t h = fnv1a(id, idlen) & COLLIDE_MASK;
        if (i == 0)
            first = h;
        agree &= h == first;
        if (i)
            n += (size_t)sprintf(text + n, ",\n{\"id\":\"%s\",\"queue\":\"q\",\"after\":[\"%s\"]}", id,
                                 prev);
        else
            n += (size_t)sprintf(text + n, "{\"id\":\"%s\",\"queue\":\"q\"}", id);
        memcpy(prev, id, idlen + 1);
    }
    n += (size_t)sprintf(text + n, "\n]}\n");
    CU_ASSERT_TRUE(agree);
    char path[] = "/tmp/golden-collide-XXXXXX.json";
    int fd = mkstemps(path, 5);
    CU_ASSERT_FATAL(fd >= 0);
    CU_ASSERT_EQUAL_FATAL(write(fd, text, n), (ssize_t)n);
    close(fd);
    free(text);
    /* streamed, and through the tree path: the same maps; a map probing from FNV-1a's low bits
     * takes about N^2/2 = 3.4e10 probes here (minutes), the keyed one well under a second */
    golden_graph_load_options tree = {GOLDEN_GRAPH_LOAD_OPTIONS_VERSION, INT64_MAX, false, NULL};
    for (int path_kind = 0; path_kind < 2; path_kind++) {
        golden_error err;
        golden_graph *g = NULL;
        clock_t t0 = clock();
        int rc = golden_graph_load_file_opts(path, path_kind ? &tree : NULL, &g, &err);
        double secs = (double)(clock() - t0) / CLOCKS_PER_SEC;
        CU_ASSERT_EQUAL(rc, GOLDEN_OK);
        if (rc != GOLDEN_OK) {
            printf("\n  %s: %s\n", err.where, err.what);
            continue;
        }
        CU_ASSERT_EQUAL(g->nops, N);
        /* the tree path adds jansson's own tree (and is slower under a sanitizer) */
        CU_ASSERT(secs < (path_kind ? 30.0 : 5.0));
        printf("\n  %u colliding ids: %.2f s of CPU to load (%s)\n", N, secs,
               path_kind ? "tree" : "streamed");
        /* every id found again, as itself */
        for (uint32_t i = 0; i < N; i += 997)
            CU_ASSERT_EQUAL(golden_graph_find_op(g, g->ops[i].id), i);
        CU_ASSERT_EQUAL(golden_graph_find_op(g, "o"), GOLDEN_NONE);
        /* a chain: each op after the one before */
        CU_ASSERT_EQUAL(g->nafter, N - 1);
        CU_ASSERT_EQUAL(g->after[N - 2], N - 2);
        golden_graph_free(g);
    }
    unlink(path);
}

int main(void)
{
    static const golden_test tests[] = {
        {"interval map, hand-worked sequence", test_imap_hand},
        {"interval map against a per-byte model", test_imap_bytes},
        {"vector clocks and ordering, hand-worked", test_clocks_hand},
        {"cycle through two waits", test_cycle_two_waits},
        {"structure errors with positions", test_structure_errors},
        {"races with ranges and fix hint", test_races_hand},
        {"idle syncs and removal verification", test_idle_and_removal},
        {"in-place fusion: safe and unsafe", test_inplace},
        {"streaming loader builds the same model as the tree", test_stream_equals_tree},
        {"every key of the schema misspelt in turn, every loader", test_misspelt_keys},
        {"every key misspelt in a 32 MiB file (streaming by size)", test_misspelt_keys_big},
        {"an unknown top-level key, every loader, JSON and YAML", test_unknown_top_level_key},
        {"hostile files refused by every loader", test_both_paths_refuse},
        {"hand-drawn and random graphs: one verdict on every path", test_same_verdict_both_paths},
        {"a new alias does not hide behind old ones (baseline, --all)", test_new_alias_behind_old},
        {"--remove and --redundant see an alias behind an old one", test_removal_alias_behind_old},
        {"a reversed live range is an error", test_reversed_live},
        {"live ranges with unordered endpoints are their union", test_unordered_live_endpoints},
        {"an in-place chain does not hide an undeclared overlap", test_inplace_chain},
        {"a barrier's after edges go with it: not idle", test_barrier_after_removal},
        {"10^5 queues: cycle before clocks, hand-offs in one lane", test_wide_queues},
        {"2^18 ids with one plain FNV-1a slot load in linear time", test_colliding_ids},
        {0, 0}};
    return golden_test_run("graph", tests);
}
