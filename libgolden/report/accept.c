/* golden-accept --html: one self-contained page. It opens on the verdict and the first failing
 * step (a link to it), then a table of the steps, then every step in order with its findings,
 * its notes and its picture from the other reports' writers: the tensor error along the layers
 * (accuracy, report/diff.c), the racing pairs on their queues (graph, report/dag.c), the
 * latency boxes (performance, report/gate.c). The accept report's JSON is embedded. */
#include "report/html_int.h"

#include <string.h>

#include "golden/accept.h"

static const char *verdict_word(golden_step_verdict v)
{
    return golden_step_verdict_name(v);
}

static void step_head(golden_html *h, int i, const golden_accept_step *s)
{
    const char *v = verdict_word(s->verdict);
    golden_html_printf(h, "<section class=\"step\" id=\"step-%d\" data-step=\"%s\" "
                          "data-verdict=\"%s\">\n<h2>%d ", i + 1, s->name, v, i + 1);
    golden_html_text(h, s->name);
    golden_html_printf(h, ": <span class=\"%s\">%s</span></h2>\n",
                       s->verdict == GOLDEN_STEP_PASS ? "pass" : "fail", v);
    if (s->why[0]) {
        golden_html_raw(h, "<p class=\"why\">");
        golden_html_text(h, s->why);
        golden_html_raw(h, "</p>\n");
    }
    if (s->findings.count) {
        golden_html_raw(h, "<ul class=\"findings\">\n");
        for (size_t k = 0; k < s->findings.count; k++) {
            const golden_finding *f = &s->findings.items[k];
            char where[1600];
            golden_finding_where(f, where, sizeof where);
            golden_html_raw(h, "<li class=\"finding\" data-rule=\"");
            golden_html_text(h, f->rule);
            golden_html_raw(h, "\"><code>");
            golden_html_text(h, where);
            golden_html_raw(h, "</code>: ");
            golden_html_text(h, f->message);
            golden_html_raw(h, "</li>\n");
        }
        golden_html_raw(h, "</ul>\n");
    }
    size_t i_, nn = json_array_size(s->notes);
    json_t *n;
    if (nn) {
        golden_html_raw(h, "<ul class=\"notes\">\n");
        json_array_foreach(s->notes, i_, n) {
            golden_html_raw(h, "<li>");
            golden_html_text(h, json_string_value(n));
            golden_html_raw(h, "</li>\n");
        }
        golden_html_raw(h, "</ul>\n");
    }
}

/* The step's picture, when its report has one. */
static int step_picture(golden_html *h, const golden_accept_result *r, int i)
{
    const golden_accept_step *s = &r->steps[i];
    if (strcmp(s->name, "accuracy") == 0 && s->report) {
        golden_html_raw(h, "<h3>The tensor error along the layers</h3>\n");
        return html_diff_layers(h, s->report);
    }
    if (strcmp(s->name, "graph") == 0 && s->report) {
        const json_t *rep = json_object_get(s->report, "dag_report");
        if (json_array_size(json_object_get(rep, "races"))) {
            golden_html_raw(h, "<h3>The racing pairs on their queues</h3>\n");
            html_dag_races(h, rep, r->race_view);
        }
        return 0;
    }
    if (strcmp(s->name, "performance") == 0 && r->summary) {
        golden_html_raw(h, "<h3>Latency per case, baseline against candidate (from the "
                           "delivered raw data)</h3>\n");
        return html_gate_latency(h, r->summary);
    }
    return 0;
}

static int body(golden_html *h, const golden_accept_result *r)
{
    golden_html_printf(h, "<p class=\"verdict\" data-verdict=\"%s\">verdict: <span class=\"%s\">",
                       r->verdict, r->accepted ? "pass" : "fail");
    golden_html_text(h, r->verdict);
    golden_html_raw(h, "</span> &mdash; ");
    golden_html_text(h, r->reason);
    golden_html_raw(h, "</p>\n");
    int first = -1;
    for (int i = 0; i < r->nsteps && first < 0; i++)
        if (r->steps[i].verdict != GOLDEN_STEP_PASS)
            first = i;
    if (first >= 0) {
        golden_html_printf(h, "<p class=\"first-fail\" data-step=\"%d\">first step not passed: "
                              "<a href=\"#step-%d\">%d ", first + 1, first + 1, first + 1);
        golden_html_text(h, r->steps[first].name);
        golden_html_raw(h, "</a>: ");
        golden_html_text(h, r->steps[first].why);
        golden_html_raw(h, "</p>\n");
    } else {
        golden_html_raw(h, "<p class=\"first-fail\" data-step=\"0\">every step passed</p>\n");
    }
    if (r->decision_label[0]) {
        golden_html_raw(h, "<p class=\"decision\">section 17 decision: ");
        golden_html_text(h, r->decision_label);
        golden_html_raw(h, "</p>\n");
    }
    golden_html_raw(h, "<table class=\"steps\"><thead><tr><th>step</th><th>name</th>"
                       "<th>verdict</th><th>findings</th></tr></thead><tbody>\n");
    for (int i = 0; i < r->nsteps; i++) {
        const golden_accept_step *s = &r->steps[i];
        golden_html_printf(h, "<tr class=\"row\" data-verdict=\"%s\"><td><a href=\"#step-%d\">"
                              "%d</a></td><td>", verdict_word(s->verdict), i + 1, i + 1);
        golden_html_text(h, s->name);
        golden_html_printf(h, "</td><td>%s</td><td>%zu</td></tr>\n", verdict_word(s->verdict),
                           s->findings.errors);
    }
    golden_html_raw(h, "</tbody></table>\n");
    for (int i = 0; i < r->nsteps; i++) {
        step_head(h, i, &r->steps[i]);
        if (step_picture(h, r, i) != 0)
            return -1;
        golden_html_raw(h, "</section>\n");
    }
    return 0;
}

int golden_accept_html(const golden_accept_result *r, const char *path, bool force,
                       golden_error *err)
{
    json_t *doc = golden_accept_to_json(r);
    golden_html *h = doc ? golden_html_new("golden-accept report") : NULL;
    int rc = h ? body(h, r) : -1;
    rc = html_finish(h, rc, doc, path, force, err);
    json_decref(doc);
    return rc;
}
