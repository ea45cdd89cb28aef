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
                              g->severity == GOLDEN_SEV_ERROR ? "error" : "todo", "rule", g->rule,
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
    for (int i = 0; steps && i < GOLDEN_ACCEPT_STEPS; i++) {
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

int golden_accept_junit(const golden_accept_result *r, const char *path, bool force,
                        golden_error *err)
{
    golden_junit_case cases[GOLDEN_ACCEPT_STEPS];
    char *details[GOLDEN_ACCEPT_STEPS] = {NULL};
    for (int i = 0; i < GOLDEN_ACCEPT_STEPS; i++) {
        const golden_accept_step *s = &r->steps[i];
        size_t len = 1;
        for (size_t k = 0; k < s->findings.count; k++)
            len += strlen(s->findings.items[k].message) + strlen(s->findings.items[k].file) + 4;
        details[i] = malloc(len);
        if (!details[i]) {
            for (int k = 0; k < i; k++)
                free(details[k]);
            return golden_fail_what(err, GOLDEN_ENOMEM, NULL, "out of memory");
        }
        details[i][0] = '\0';
        for (size_t k = 0; k < s->findings.count; k++) {
            strcat(details[i], s->findings.items[k].file);
            strcat(details[i], ": ");
            strcat(details[i], s->findings.items[k].message);
            strcat(details[i], "\n");
        }
        cases[i] = (golden_junit_case){"golden-accept", s->name,
                                       s->verdict == GOLDEN_STEP_FAIL,
                                       s->verdict == GOLDEN_STEP_SKIPPED,
                                       s->why[0] ? s->why : NULL, details[i], 0};
    }
    int rc = golden_junit_write(path, force, "golden-accept", cases, GOLDEN_ACCEPT_STEPS, err);
    for (int i = 0; i < GOLDEN_ACCEPT_STEPS; i++)
        free(details[i]);
    return rc;
}
