/* The calculet-dag-report/v1 document, graph statistics (op counts, syncs, D2D, static sizes,
 * peak live memory) and the diff of two graphs' statistics. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph/dag_internal.h"

/* ---- report ---- */
static json_t *sync_json_name(const golden_graph *g, const golden_sync *s)
{
    char name[1024];
    golden_sync_name(g, s, name, sizeof name);
    return json_string(name);
}

/* jansson's *_new functions steal references and tolerate NULL by failing; collect failures. */
static void dag_put(json_t *o, const char *k, json_t *v, int *bad)
{
    if (!v || json_object_set_new(o, k, v) != 0)
        *bad = 1;
}

static void dag_push(json_t *a, json_t *v, int *bad)
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
    dag_put(o, "a", json_string(g->ops[A->op].id), bad);
    dag_put(o, "b", json_string(g->ops[B->op].id), bad);
    dag_put(o, "kind", json_string(golden_race_kind_name(x->kind)), bad);
    dag_put(o, "buffer", json_string(BA->id), bad);
    if (A->buffer != B->buffer)
        dag_put(o, "buffer_b", json_string(BB->id), bad);
    dag_put(o, "range", range_json(x->lo - BA->address, x->hi - BA->address), bad);
    dag_put(o, "address", range_json(x->lo, x->hi), bad);
    dag_put(o, "queue_a", json_string(g->queues[g->ops[A->op].queue].id), bad);
    dag_put(o, "queue_b", json_string(g->queues[g->ops[B->op].queue].id), bad);
    dag_put(o, "access_a", json_pack("{s:s,s:I}", "list", A->write ? "writes" : "reads", "index",
                                 (json_int_t)A->index), bad);
    dag_put(o, "access_b", json_pack("{s:s,s:I}", "list", B->write ? "writes" : "reads", "index",
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
    dag_put(o, "hint", json_string(hint), bad);
    if (r->compared) {
        dag_put(o, "new", json_boolean(x->is_new), bad);
        json_t *ex = json_array();
        for (uint32_t i = 0; ex && i < x->nexposed; i++)
            dag_push(ex, sync_json_name(sync_graph, &x->exposed_by[i]), bad);
        dag_put(o, "exposed_by", ex, bad);
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
    dag_put(doc, "schema", json_string("calculet-dag-report/v1"), &bad);
    dag_put(doc, "graph", json_string(graph), &bad);
    dag_put(doc, "mode", json_string(mode), &bad);
    dag_put(doc, "verdict", json_string(golden_dag_passed(r) ? "pass" : "fail"), &bad);
    dag_put(doc, "ops", json_integer(g->nops), &bad);
    dag_put(doc, "queues", json_integer(g->nqueues), &bad);
    dag_put(doc, "accesses", json_integer(g->naccesses), &bad);
    dag_put(doc, "all_pairs", json_boolean(r->all), &bad);
    /* removed syncs are named in the graph they came from: the baseline's for a comparison */
    const golden_graph *sg = r->base_g ? r->base_g : g;
    json_t *races = json_array();
    for (size_t i = 0; races && i < r->nraces; i++)
        dag_push(races, race_json(r, &r->races[i], sg, &bad), &bad);
    dag_put(doc, "races", races, &bad);
    json_t *cycles = json_array();
    if (cycles && r->cyclic) {
        json_t *c = json_array();
        for (uint32_t i = 0; c && i < r->hb->ncycle; i++)
            dag_push(c, json_string(g->ops[r->hb->cycle[i]].id), &bad);
        dag_push(cycles, c, &bad);
    }
    dag_put(doc, "cycles", cycles, &bad);
    json_t *aliases = json_array();
    for (size_t i = 0; aliases && i < r->naliases; i++) {
        const golden_alias *x = &r->aliases[i];
        const golden_buffer *A = &g->buffers[x->a], *B = &g->buffers[x->b];
        json_t *o = json_object();
        if (!o) {
            bad = 1;
            break;
        }
        dag_put(o, "a", json_string(A->id), &bad);
        dag_put(o, "b", json_string(B->id), &bad);
        dag_put(o, "address", range_json(x->lo, x->hi), &bad);
        dag_put(o, "bytes", json_integer((json_int_t)(x->hi - x->lo)), &bad);
        if (A->live_first != GOLDEN_NONE)
            dag_put(o, "a_live", json_pack("[ss]", g->ops[A->live_first].id, g->ops[A->live_last].id), &bad);
        if (B->live_first != GOLDEN_NONE)
            dag_put(o, "b_live", json_pack("[ss]", g->ops[B->live_first].id, g->ops[B->live_last].id), &bad);
        dag_put(o, "inplace", json_boolean(x->inplace), &bad);
        dag_put(o, "reason", json_string(x->reason), &bad);
        if (r->compared)
            dag_put(o, "new", json_boolean(x->is_new), &bad);
        dag_push(aliases, o, &bad);
    }
    dag_put(doc, "aliases", aliases, &bad);
    json_t *idle = json_array();
    for (size_t i = 0; idle && i < r->nidle; i++) {
        const golden_idle_sync *s = &r->idle[i];
        dag_push(idle, json_pack("{s:o,s:s,s:s}", "sync", sync_json_name(g, &s->sync), "kind",
                             golden_sync_kind_name(s->sync.kind), "reason",
                             s->why == GOLDEN_IDLE_IMPLIED ? "implied" : "orders-no-conflict"),
             &bad);
    }
    dag_put(doc, "redundant_syncs", idle, &bad);
    if (r->redundant_done)
        dag_put(doc, "redundant_note",
            json_string("each listed sync is safe to remove on its own; they are not safe to "
                        "remove all at once: verify a set with --remove ID,..."), &bad);
    if (r->compared) {
        if (baseline)
            dag_put(doc, "baseline", json_string(baseline), &bad);
        dag_put(doc, "baseline_races", json_integer((json_int_t)r->base_races), &bad);
        dag_put(doc, "new_races", json_integer((json_int_t)r->new_races), &bad);
        dag_put(doc, "new_aliases", json_integer((json_int_t)r->new_aliases), &bad);
        /* with --baseline the removed syncs are the baseline's; with --remove, this graph's */
        json_t *rm = json_array(), *mv = json_array(), *ad = json_array();
        for (size_t i = 0; rm && i < r->nremoved; i++)
            dag_push(rm, sync_json_name(sg, &r->removed[i]), &bad);
        for (size_t i = 0; mv && i < r->nmoved; i++)
            dag_push(mv, sync_json_name(sg, &r->moved[i]), &bad);
        for (size_t i = 0; ad && i < r->nadded; i++)
            dag_push(ad, json_string(r->added[i]), &bad);
        dag_put(doc, "removed_syncs", rm, &bad);
        dag_put(doc, "moved_syncs", mv, &bad);
        dag_put(doc, "added_syncs", ad, &bad);
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
    if (lg_hb_build(g, NULL, &h, &err) != 0)
        return NULL;
    json_t *o = stats_with(g, &h);
    lg_hb_free(&h);
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
                dag_put(hist, bk, json_integer(cur ? json_integer_value(cur) + 1 : 1), &bad);
        }
    }
    json_t *by = json_array(), *fams = json_object();
    for (uint32_t f = 0; f < nf; f++) {
        const char *name = f < g->nfamilies ? g->families[f] : "(none)";
        if (fam[f] && fams)
            dag_put(fams, name, json_integer((json_int_t)fam[f]), &bad);
        for (uint32_t q = 0; q < K; q++)
            if (cnt[(size_t)f * K + q] && by)
                dag_push(by, json_pack("{s:s,s:I,s:s,s:I}", "family", name, "chip",
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
        dag_push(peak, json_pack("{s:I,s:I}", "chip", (json_int_t)chip, "bytes", (json_int_t)best), &bad);
    }
    dag_put(o, "ops", json_integer(g->nops), &bad);
    dag_put(o, "queues", json_integer(g->nqueues), &bad);
    dag_put(o, "buffers", json_integer(g->nbuffers), &bad);
    dag_put(o, "accesses", json_integer(g->naccesses), &bad);
    dag_put(o, "families", fams, &bad);
    dag_put(o, "by_family_queue", by, &bad);
    dag_put(o, "syncs", json_pack("{s:I,s:I,s:I,s:I}", "signal", (json_int_t)sig, "wait",
                              (json_int_t)wait, "barrier", (json_int_t)bar, "after",
                              (json_int_t)g->nafter), &bad);
    dag_put(o, "d2d", json_pack("{s:I,s:I,s:o}", "commands", (json_int_t)d2d, "bytes_static",
                            (json_int_t)d2d_bytes, "size_histogram", hist ? hist : json_null()),
        &bad);
    dag_put(o, "data_size_sum_structural", json_integer((json_int_t)dsum), &bad);
    dag_put(o, "data_size_ops", json_integer((json_int_t)dcount), &bad);
    dag_put(o, "peak_live_bytes", peak, &bad);
    dag_put(o, "peak_live_order", json_string(topo ? "topological" : "file"), &bad);
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
    dag_put(doc, "schema", json_string("calculet-dag-report/v1"), &bad);
    dag_put(doc, "graph", json_string(cand_path), &bad);
    dag_put(doc, "baseline", json_string(base_path), &bad);
    dag_put(doc, "mode", json_string("diff"), &bad);
    dag_put(doc, "verdict", json_string("pass"), &bad);
    dag_put(doc, "ops", json_integer(int_at(cand_stats, "ops", NULL)), &bad);
    dag_put(doc, "queues", json_integer(int_at(cand_stats, "queues", NULL)), &bad);
    dag_put(doc, "races", json_array(), &bad);
    dag_put(doc, "cycles", json_array(), &bad);
    dag_put(doc, "aliases", json_array(), &bad);
    dag_put(doc, "redundant_syncs", json_array(), &bad);
    json_t *d = json_object(), *fam = json_array();
    json_t *bf = json_object_get(base_stats, "families"), *cf = json_object_get(cand_stats, "families");
    const char *k;
    json_t *v;
    json_object_foreach(bf, k, v) {
        json_int_t c = int_at(cand_stats, "families", k), b = json_integer_value(v);
        dag_push(fam, json_pack("{s:s,s:I,s:I,s:I}", "family", k, "baseline", b, "candidate", c,
                            "delta", c - b), &bad);
    }
    json_object_foreach(cf, k, v) {
        if (json_object_get(bf, k))
            continue;
        dag_push(fam, json_pack("{s:s,s:I,s:I,s:I}", "family", k, "baseline", (json_int_t)0,
                            "candidate", json_integer_value(v), "delta", json_integer_value(v)),
             &bad);
    }
    dag_put(d, "ops_delta", json_integer(int_at(cand_stats, "ops", NULL) - int_at(base_stats, "ops", NULL)), &bad);
    dag_put(d, "families", fam, &bad);
    json_t *sy = json_object();
    static const char *sk[] = {"signal", "wait", "barrier", "after"};
    for (int i = 0; i < 4; i++)
        dag_put(sy, sk[i], json_integer(int_at(cand_stats, "syncs", sk[i]) - int_at(base_stats, "syncs", sk[i])), &bad);
    dag_put(d, "syncs", sy, &bad);
    dag_put(d, "d2d_commands", json_integer(int_at(cand_stats, "d2d", "commands") - int_at(base_stats, "d2d", "commands")), &bad);
    dag_put(d, "data_size_sum_structural", json_integer(int_at(cand_stats, "data_size_sum_structural", NULL) - int_at(base_stats, "data_size_sum_structural", NULL)), &bad);
    dag_put(doc, "diff", json_pack("{s:O,s:O,s:o,s:s}", "baseline", base_stats, "candidate", cand_stats,
                               "delta", d ? d : json_null(), "note",
                               "data_size sums are static structural figures for comparing "
                               "candidates, never measured traffic (handbook 13.3)"), &bad);
    if (bad) {
        json_decref(doc);
        return NULL;
    }
    return doc;
}

