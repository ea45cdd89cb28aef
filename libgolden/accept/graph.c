/* Step 4: the delivered baseline and candidate graphs (calculet-graph/v1) through dag-check's
 * engine: every removed sync proven race-free, no new live alias, no cycle; the op-count
 * difference is the step's report. A removal without both graphs is not proven (13.2). */
#include "accept/accept_int.h"
#include "report/html_int.h"

#include <stdio.h>
#include <string.h>

#include "golden/dag.h"
#include "golden/graph.h"

static const char *queue_of(const golden_graph *g, uint32_t op)
{
    uint32_t q = g->ops[op].queue;
    return q == GOLDEN_NONE ? "barrier" : g->queues[q].id;
}

static int report_races(acc_ctx *c, golden_accept_step *s, const golden_dag_result *cr,
                        const char *file)
{
    const golden_graph *g = cr->g;
    size_t shown = 0;
    for (size_t i = 0; i < cr->nraces; i++) {
        const golden_race *x = &cr->races[i];
        if (!x->is_new)
            continue;
        const golden_access *a = &g->accesses[x->a], *b = &g->accesses[x->b];
        char exposed[512] = "";
        size_t at = 0;
        for (uint32_t k = 0; k < x->nexposed && at + 64 < sizeof exposed; k++) {
            char nm[128];
            golden_sync_name(cr->base_g, &x->exposed_by[k], nm, sizeof nm);
            at += (size_t)snprintf(exposed + at, sizeof exposed - at, "%s%s", k ? ", " : "", nm);
        }
        if (shown++ < 8 &&
            acc_fail(s, c->err, "race", file,
                     "new %s race between %s (queue %s) and %s (queue %s) on buffer %s bytes "
                     "[%llu, %llu)%s%s", golden_race_kind_name(x->kind), g->ops[a->op].id,
                     queue_of(g, a->op), g->ops[b->op].id, queue_of(g, b->op),
                     g->buffers[a->buffer].id, (unsigned long long)x->lo,
                     (unsigned long long)x->hi, exposed[0] ? ": exposed by removing " : "",
                     exposed))
            return -1;
    }
    for (size_t i = 0; i < cr->naliases; i++) {
        const golden_alias *al = &cr->aliases[i];
        if (al->is_new && shown++ < 8 &&
            acc_fail(s, c->err, "alias", file, "new live alias of buffers %s and %s (%s)",
                     g->buffers[al->a].id, g->buffers[al->b].id,
                     al->reason ? al->reason : "overlap"))
            return -1;
    }
    if (shown > 8 && acc_fail(s, c->err, "race", file, "... and %zu more", shown - 8))
        return -1;
    return 0;
}

int acc_step_graph(acc_ctx *c, golden_accept_step *s)
{
    char bp[PATH_MAX], cp[PATH_MAX];
    const char *base = acc_role_path(c, "graph", "baseline_graph", "calculet-graph/v1", bp,
                                     sizeof bp);
    const char *cand = acc_role_path(c, "graph", "candidate_graph", "calculet-graph/v1", cp,
                                     sizeof cp);
    if (!base || !cand)
        return acc_fail(s, c->err, "graph-proof", "handoff.json",
                        "item graph lists no calculet-graph/v1 %s graph: a removed sync cannot "
                        "be proven race-free without both graphs (section 13.2)",
                        !base ? "baseline_graph" : "candidate_graph");
    golden_graph *g[2] = {NULL, NULL};
    golden_dag_result br, cr;
    memset(&br, 0, sizeof br);
    memset(&cr, 0, sizeof cr);
    int rc = 0;
    const char *paths[2] = {base, cand};
    for (int i = 0; i < 2 && rc == 0; i++) {
        golden_error e;
        golden_error_clear(&e);
        if (golden_graph_load_file(paths[i], &g[i], &e) != 0)
            rc = e.code == GOLDEN_ENOMEM ? (*c->err = e, -1)
                                         : acc_fail(s, c->err, "graph", paths[i], "%s", e.what);
    }
    if (rc || s->findings.errors)
        goto done;
    if (golden_dag_check(g[0], NULL, true, &br, c->err) != 0 ||
        golden_dag_check(g[1], NULL, true, &cr, c->err) != 0) {
        rc = -1;
        goto done;
    }
    if (br.cyclic || cr.cyclic) {
        rc = acc_fail(s, c->err, "cycle", br.cyclic ? base : cand, "the graph has a cycle");
        goto done;
    }
    if (golden_dag_compare(&br, &cr, c->err) != 0) {
        rc = -1;
        goto done;
    }
    if (report_races(c, s, &cr, cand) != 0) {
        rc = -1;
        goto done;
    }
    if (cr.nmoved)
        acc_note(s, "%zu sync(s) moved", cr.nmoved);
    char names[512] = "";
    size_t at = 0;
    for (size_t i = 0; i < cr.nremoved && at + 64 < sizeof names; i++) {
        char nm[128];
        golden_sync_name(br.g, &cr.removed[i], nm, sizeof nm);
        at += (size_t)snprintf(names + at, sizeof names - at, "%s%s", i ? ", " : "", nm);
    }
    if (golden_dag_passed(&cr))
        acc_note(s, "%zu sync(s) removed (%s), each proven race-free; no new race, no new "
                 "alias, no cycle", cr.nremoved, cr.nremoved ? names : "none");
    json_t *st[2] = {golden_dag_stats(g[0]), golden_dag_stats(g[1])};
    json_t *rep = st[0] && st[1] ? golden_dag_report_json(&cr, cand, base, "baseline") : NULL;
    json_t *diff = st[0] && st[1] ? golden_dag_diff_json(base, st[0], cand, st[1]) : NULL;
    if (!rep || !diff) {
        json_decref(rep);
        json_decref(diff);
        json_decref(st[0]);
        json_decref(st[1]);
        rc = golden_fail_what(c->err, GOLDEN_ENOMEM, NULL, "out of memory");
        goto done;
    }
    json_decref(st[0]);
    json_decref(st[1]);
    if (json_array_size(json_object_get(rep, "races")))
        c->r->race_view = html_dag_view(&cr); /* the --html page's picture (NULL: none) */
    s->report = json_pack("{s:o,s:o}", "dag_report", rep, "op_count_diff", diff);
done:
    golden_dag_result_free(&cr);
    golden_dag_result_free(&br);
    golden_graph_free(g[0]);
    golden_graph_free(g[1]);
    return rc;
}
