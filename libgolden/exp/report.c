/* What a check leaves for machines: the calculet-verify-report/v1 document and JUnit XML (one
 * case per rule, per hand-off item, or one for schema mode). */
#include "exp/internal.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "golden/report.h"

/* A JSON string even for bytes that are not UTF-8 (file names can be anything): those bytes
 * become '?', so the report stays valid JSON. */
static json_t *jstr(const char *s)
{
    json_t *v = json_string(s);
    if (v)
        return v;
    char *copy = strdup(s);
    if (!copy)
        return NULL;
    for (unsigned char *p = (unsigned char *)copy; *p; p++)
        if (*p >= 0x80 || *p < 0x20)
            *p = '?';
    v = json_string(copy);
    free(copy);
    return v;
}

json_t *golden_findings_report(const char *mode, const char *target, const golden_findings *f,
                             const golden_handoff_item *items, golden_error *err)
{
    json_t *doc = json_object(), *list = json_array(), *sum = json_object();
    if (!doc || !list || !sum)
        goto oom;
    char producer[64];
    snprintf(producer, sizeof producer, "manifest-verify %s", GOLDEN_VERSION);
    bool failed = f->errors > 0;
    if (items)
        for (int i = 0; i < GOLDEN_HANDOFF_ITEMS; i++)
            failed = failed || items[i].status != GOLDEN_ITEM_PRESENT;
    if (json_object_set_new(doc, "schema", json_string("calculet-verify-report/v1")) ||
        json_object_set_new(doc, "producer", json_string(producer)) ||
        json_object_set_new(doc, "mode", json_string(mode)) ||
        json_object_set_new(doc, "target", jstr(target)) ||
        json_object_set_new(doc, "verdict", json_string(failed ? "fail" : "pass")) ||
        json_object_set_new(doc, "sealed", json_boolean(f->sealed)) ||
        json_object_set_new(sum, "documents", json_integer((json_int_t)f->documents)) ||
        json_object_set_new(sum, "files_hashed", json_integer((json_int_t)f->files_hashed)) ||
        json_object_set_new(sum, "errors", json_integer((json_int_t)f->errors)) ||
        json_object_set_new(sum, "todos", json_integer((json_int_t)f->todos)))
        goto oom;
    if (json_object_set_new(doc, "summary", sum)) {
        sum = NULL;
        goto oom;
    }
    sum = NULL;
    for (size_t i = 0; i < f->count; i++) {
        const golden_finding *g = &f->items[i];
        json_t *o = json_object();
        if (!o || json_array_append_new(list, o))
            goto oom;
        if (json_object_set_new(o, "severity",
                                json_string(g->severity == GOLDEN_SEV_ERROR ? "error"
                                            : g->severity == GOLDEN_SEV_TODO ? "todo" : "note")) ||
            json_object_set_new(o, "rule", json_string(g->rule)) ||
            json_object_set_new(o, "file", jstr(g->file)) ||
            (g->line > 0 && (json_object_set_new(o, "line", json_integer(g->line)) ||
                             json_object_set_new(o, "col", json_integer(g->col > 0 ? g->col : 1)))) ||
            (g->pointer[0] &&
             json_object_set_new(o, "pointer", jstr(g->pointer))) ||
            json_object_set_new(o, "message", jstr(g->message)))
            goto oom;
    }
    if (json_object_set_new(doc, "findings", list)) {
        list = NULL;
        goto oom;
    }
    list = NULL;
    if (items) {
        json_t *arr = json_array();
        if (!arr || json_object_set_new(doc, "items", arr))
            goto oom;
        for (int i = 0; i < GOLDEN_HANDOFF_ITEMS; i++) {
            json_t *o = json_object();
            if (!o || json_array_append_new(arr, o) ||
                json_object_set_new(o, "number", json_integer(items[i].number)) ||
                json_object_set_new(o, "key", json_string(items[i].key)) ||
                json_object_set_new(o, "title", json_string(items[i].title)) ||
                json_object_set_new(o, "status", json_string(golden_item_status_name(items[i].status))) ||
                (items[i].detail[0] &&
                 json_object_set_new(o, "detail", jstr(items[i].detail))))
                goto oom;
        }
    }
    return doc;
oom:
    json_decref(doc);
    json_decref(list);
    json_decref(sum);
    golden_fail_what(err, GOLDEN_ENOMEM, NULL, "out of memory building the report");
    return NULL;
}

/* Every rule one mode can report, so that JUnit lists the passing ones too. */
static const char *const experiment_rules[] = {
    "layout", "folder-name", "exp-id", "family", "schema", "required-filled", "one-main-factor",
    "controlled-equal", "manifest-agrees", "artifact-exists", "artifact-hash", "path-escape",
    "context-limit", "input-matrix", "input-minimums", "unknown-case", "rejection-submitted", "stage-order",
    "request-unique", "perf-runs", "summary-follows", "compile-command", "accuracy-agrees",
    "calibration-unique", "calibration-hash", "calibration-tokenizer", "calibration-pii", "tokenizer-hash", "seal",
    NULL};

int golden_findings_junit(const char *path, bool force, const char *mode, const char *target,
                        const golden_findings *f, const golden_handoff_item *items,
                        golden_error *err)
{
    const char *schema_rules[] = {"schema", NULL};
    const char *const *rules = strcmp(mode, "experiment") == 0 ? experiment_rules : schema_rules;
    size_t nrules = 0, ncases;
    while (rules[nrules])
        nrules++;
    ncases = items ? GOLDEN_HANDOFF_ITEMS + 1 : nrules;
    golden_junit_case *cases = calloc(ncases, sizeof *cases);
    char **details = calloc(ncases, sizeof *details);
    int rc = GOLDEN_ERR;
    if (!cases || !details) {
        golden_fail_what(err, GOLDEN_ENOMEM, NULL, "out of memory");
        goto done;
    }
    for (size_t i = 0; i < ncases; i++) {
        bool item_case = items && i < GOLDEN_HANDOFF_ITEMS;
        const char *rule = items ? (item_case ? NULL : "findings") : rules[i];
        cases[i].classname = mode;
        cases[i].name = item_case ? items[i].key : rule;
        if (item_case) {
            cases[i].failed = items[i].status != GOLDEN_ITEM_PRESENT;
            cases[i].message = cases[i].failed ? items[i].detail : NULL;
            continue;
        }
        /* all findings of this rule (or all, for the hand-off's catch-all case) as the body */
        size_t len = 0;
        FILE *mem = open_memstream(&details[i], &len);
        if (!mem) {
            golden_fail_what(err, GOLDEN_ENOMEM, NULL, "out of memory");
            goto done;
        }
        for (size_t k = 0; k < f->count; k++) {
            const golden_finding *g = &f->items[k];
            if (g->severity != GOLDEN_SEV_ERROR || (!items && strcmp(g->rule, rule) != 0))
                continue;
            char where[1200];
            golden_finding_where(g, where, sizeof where);
            fprintf(mem, "%s: %s: %s\n", where, g->rule, g->message);
            if (!cases[i].failed) {
                cases[i].failed = true;
                cases[i].message = g->message;
            }
        }
        if (fclose(mem) != 0 || !details[i]) {
            golden_fail_what(err, GOLDEN_ENOMEM, NULL, "out of memory");
            goto done;
        }
        cases[i].details = details[i][0] ? details[i] : NULL;
    }
    char suite[1200];
    snprintf(suite, sizeof suite, "manifest-verify %s", target);
    rc = golden_junit_write(path, force, suite, cases, ncases, err);
done:
    if (details)
        for (size_t i = 0; i < ncases; i++)
            free(details[i]);
    free(details);
    free(cases);
    return rc;
}
