/* golden-accept's reports: calculet-accept-report/v1 and JUnit (one suite, a case per step). */
#include "accept/accept_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "golden/junit.h"

static json_t *str_or_null(const char *s)
{
    return s ? json_string(s) : json_null();
}

static json_t *findings_json(const golden_findings *f)
{
    json_t *a = json_array();
    for (size_t i = 0; a && i < f->count; i++) {
        const golden_finding *g = &f->items[i];
        char where[1600];
        golden_finding_where(g, where, sizeof where);
        json_t *o = json_pack("{s:s,s:s,s:s,s:s}", "severity",
                              g->severity == GOLDEN_SEV_ERROR  ? "error"
                              : g->severity == GOLDEN_SEV_TODO ? "todo" : "note", "rule", g->rule,
                              "where", where, "message", g->message);
        if (!o || json_array_append_new(a, o) != 0) {
            json_decref(a);
            return NULL;
        }
    }
    return a;
}

json_t *golden_accept_to_json(const golden_accept_result *r)
{
    json_t *steps = json_array();
    for (int i = 0; steps && i < r->nsteps; i++) {
        const golden_accept_step *s = &r->steps[i];
        json_t *f = findings_json(&s->findings);
        json_t *o = f ? json_pack("{s:i,s:s,s:s,s:s,s:o,s:O,s:O}", "number", i + 1, "name",
                                  s->name, "verdict", golden_step_verdict_name(s->verdict), "why",
                                  s->why, "findings", f, "notes", s->notes, "reports",
                                  s->reports)
                      : NULL;
        if (o && s->report)
            json_object_set(o, "report", s->report);
        if (!o || json_array_append_new(steps, o) != 0) {
            json_decref(steps);
            return NULL;
        }
    }
    if (!steps)
        return NULL;
    return json_pack("{s:s,s:s,s:s,s:b,s:s*,s:s*,s:{s:o,s:o,s:o,s:o,s:o,s:o},s:o,s:O*}", "schema",
                     GOLDEN_SCHEMA_ACCEPT_REPORT, "verdict", r->verdict, "reason", r->reason,
                     "accepted", r->accepted, "decision_label",
                     r->decision_label[0] ? r->decision_label : NULL, "experiment_state",
                     r->experiment_state[0] ? r->experiment_state : NULL, "inputs", "handoff",
                     str_or_null(r->handoff), "golden", str_or_null(r->golden), "baseline",
                     str_or_null(r->baseline), "policy", str_or_null(r->policy), "hypothesis",
                     str_or_null(r->hypothesis), "experiment", str_or_null(r->experiment),
                     "steps", steps, "decision", r->decision);
}

/* One suite per step: a failing step has one failed case per finding (named by its rule and
 * where), a passing step one passing case (its note), a skipped step one skipped case. */
int golden_accept_junit(const golden_accept_result *r, const char *path, bool force,
                        golden_error *err)
{
    golden_junit_suites_part parts[GOLDEN_ACCEPT_STEPS];
    golden_junit_case *cases[GOLDEN_ACCEPT_STEPS] = {NULL};
    char (*names[GOLDEN_ACCEPT_STEPS])[1700] = {NULL};
    char suite[GOLDEN_ACCEPT_STEPS][64];
    int rc = -1;
    for (int i = 0; i < r->nsteps; i++) {
        const golden_accept_step *s = &r->steps[i];
        size_t n = s->verdict == GOLDEN_STEP_FAIL && s->findings.count ? s->findings.count : 1;
        cases[i] = calloc(n, sizeof *cases[i]);
        names[i] = calloc(n, sizeof *names[i]);
        if (!cases[i] || !names[i]) {
            golden_fail_what(err, GOLDEN_ENOMEM, NULL, "out of memory");
            goto done;
        }
        snprintf(suite[i], sizeof suite[i], "golden-accept %d %s", i + 1, s->name);
        size_t nn = json_array_size(s->notes);
        if (n == 1 && !(s->verdict == GOLDEN_STEP_FAIL && s->findings.count)) {
            snprintf(names[i][0], sizeof names[i][0], "%s", s->name);
            cases[i][0] = (golden_junit_case){
                s->name, names[i][0], s->verdict == GOLDEN_STEP_FAIL,
                s->verdict == GOLDEN_STEP_SKIPPED,
                s->why[0] ? s->why : nn ? json_string_value(json_array_get(s->notes, nn - 1))
                                        : NULL,
                NULL, 0};
        } else {
            for (size_t k = 0; k < n; k++) {
                const golden_finding *g = &s->findings.items[k];
                char where[1600];
                golden_finding_where(g, where, sizeof where);
                snprintf(names[i][k], sizeof names[i][k], "%s %s", g->rule, where);
                cases[i][k] = (golden_junit_case){s->name, names[i][k],
                                                  g->severity == GOLDEN_SEV_ERROR, false,
                                                  g->message, NULL, 0};
            }
        }
        parts[i] = (golden_junit_suites_part){suite[i], cases[i], n, s->seconds};
    }
    rc = golden_junit_write_suites(path, force, "golden-accept", parts, (size_t)r->nsteps, err);
done:
    for (int i = 0; i < GOLDEN_ACCEPT_STEPS; i++) {
        free(cases[i]);
        free(names[i]);
    }
    return rc;
}
