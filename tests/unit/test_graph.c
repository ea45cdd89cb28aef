/* Unit tests for the graph model, vector clocks, the interval map, races, aliases and idle
 * syncs, on small graphs whose answers were worked out by hand. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../tools/gengraph.h"
#include "cunit_main.h"
#include "golden/dag.h"
#include "golden/graph.h"
#include "golden/hb.h"
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
    golden_imap_each(m, log_seg, l);
}

static void test_imap_hand(void)
{
    golden_imap *m = golden_imap_new();
    CU_ASSERT_PTR_NOT_NULL_FATAL(m);
    seglog seen = {{0}}, all;
    CU_ASSERT_EQUAL(golden_imap_access(m, 0, 10, true, 0, 0, log_seg, &seen), 0);
    CU_ASSERT_STRING_EQUAL(seen.log, ""); /* nothing there before */
    CU_ASSERT_EQUAL(golden_imap_access(m, 5, 15, false, 1, 1, log_seg, &seen), 0);
    CU_ASSERT_STRING_EQUAL(seen.log, "[5,10)w0 ");
    dump(m, &all);
    CU_ASSERT_STRING_EQUAL(all.log, "[0,5)w0 [5,10)w0r1:1 [10,15)w-1r1:1 ");
    seen.log[0] = '\0';
    CU_ASSERT_EQUAL(golden_imap_access(m, 3, 12, true, 2, 2, log_seg, &seen), 0);
    CU_ASSERT_STRING_EQUAL(seen.log, "[3,5)w0 [5,10)w0r1:1 [10,12)w-1r1:1 ");
    dump(m, &all);
    CU_ASSERT_STRING_EQUAL(all.log, "[0,3)w0 [3,12)w2 [12,15)w-1r1:1 ");
    /* a later read on the same queue (slot) replaces the earlier one */
    CU_ASSERT_EQUAL(golden_imap_access(m, 12, 15, false, 4, 1, NULL, NULL), 0);
    dump(m, &all);
    CU_ASSERT_STRING_EQUAL(all.log, "[0,3)w0 [3,12)w2 [12,15)w-1r1:4 ");
    /* gaps are filled, and equal neighbours merge */
    CU_ASSERT_EQUAL(golden_imap_access(m, 20, 30, true, 5, 0, NULL, NULL), 0);
    CU_ASSERT_EQUAL(golden_imap_access(m, 20, 25, false, 6, 3, NULL, NULL), 0);
    CU_ASSERT_EQUAL(golden_imap_access(m, 25, 30, false, 6, 3, NULL, NULL), 0);
    CU_ASSERT_EQUAL(golden_imap_access(m, 16, 18, false, 7, 3, NULL, NULL), 0);
    dump(m, &all);
    CU_ASSERT_STRING_EQUAL(all.log,
                           "[0,3)w0 [3,12)w2 [12,15)w-1r1:4 [16,18)w-1r3:7 [20,30)w5r3:6 ");
    CU_ASSERT_EQUAL(golden_imap_count(m), 5);
    seen.log[0] = '\0';
    golden_imap_query(m, 11, 21, log_seg, &seen);
    CU_ASSERT_STRING_EQUAL(seen.log, "[11,12)w2 [12,15)w-1r1:4 [16,18)w-1r3:7 [20,21)w5r3:6 ");
    /* one write over everything collapses the map */
    CU_ASSERT_EQUAL(golden_imap_access(m, 0, 40, true, 9, 0, NULL, NULL), 0);
    dump(m, &all);
    CU_ASSERT_STRING_EQUAL(all.log, "[0,40)w9 ");
    CU_ASSERT_EQUAL(golden_imap_count(m), 1);
    golden_imap_free(m);
}

/* Against a byte array: many random accesses, the map must equal a per-byte model. */
static void test_imap_bytes(void)
{
    enum { N = 200 };
    uint32_t w[N], r[N][4];
    memset(w, 0xff, sizeof w);
    memset(r, 0xff, sizeof r);
    golden_imap *m = golden_imap_new();
    CU_ASSERT_PTR_NOT_NULL_FATAL(m);
    uint64_t s = 12345;
    for (uint32_t acc = 0; acc < 3000; acc++) {
        s = s * 6364136223846793005ULL + 1442695040888963407ULL;
        uint32_t lo = (uint32_t)(s >> 33) % N, len = 1 + (uint32_t)(s >> 20) % 40;
        uint32_t hi = lo + len > N ? N : lo + len, slot = (uint32_t)(s >> 12) % 4;
        bool write = (s >> 8) % 3 == 0;
        CU_ASSERT_EQUAL_FATAL(golden_imap_access(m, lo, hi, write, acc, slot, NULL, NULL), 0);
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
        golden_imap_query(m, b, b + 1, log_seg, &one);
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
    golden_imap_free(m);
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
    CU_ASSERT_EQUAL_FATAL(golden_hb_build(g, NULL, &h, &err), GOLDEN_OK);
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
    golden_hb_free(&h);

    /* dropping the wait's signal edge cuts a1 -> b2, dropping the barrier cuts b1 -> c1 */
    uint8_t dop[9] = {0}, daf[1] = {0};
    dop[w] = 1;
    golden_hb_drop drop = {dop, daf};
    CU_ASSERT_EQUAL_FATAL(golden_hb_build(g, &drop, &h, &err), GOLDEN_OK);
    CU_ASSERT_FALSE(golden_hb_ordered(&h, a1, b2));
    CU_ASSERT_TRUE(golden_hb_before(&h, b1, c1));
    golden_hb_free(&h);
    dop[w] = 0;
    dop[bar] = 1;
    CU_ASSERT_EQUAL_FATAL(golden_hb_build(g, &drop, &h, &err), GOLDEN_OK);
    CU_ASSERT_FALSE(golden_hb_ordered(&h, b1, c1));
    CU_ASSERT_TRUE(golden_hb_before(&h, a1, b2));
    CU_ASSERT_FALSE(golden_hb_ordered(&h, bar, c1)); /* a dropped barrier orders nothing */
    golden_hb_free(&h);
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
    CU_ASSERT_EQUAL_FATAL(r.hb.ncycle, 4);
    const char *want[] = {"wa", "sa", "wb", "sb"};
    for (int i = 0; i < 4; i++)
        CU_ASSERT_STRING_EQUAL(g->ops[r.hb.cycle[i]].id, want[i]);
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
        {0, 0}};
    return golden_test_run("graph", tests);
}
