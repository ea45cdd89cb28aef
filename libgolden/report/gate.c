/* exp-gate decide's HTML report: the decision and the rule that fired, per-case latency boxes
 * (bootstrap CI of the median), drift against run order and CDF per side, section 7 stage
 * breakdown, cycles per chip, unsteady apart. */
#include "golden/html.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report/html_int.h"

static void decision_head(golden_html *h, const json_t *d)
{
    golden_html_raw(h, "<p class=\"verdict\" data-decision=\"");
    golden_html_text(h, html_str(d, "decision"));
    golden_html_raw(h, "\">decision: <span class=\"");
    golden_html_raw(h, strcmp(html_str(d, "decision"), "soak_24h") == 0 ||
                               strcmp(html_str(d, "decision"), "merge") == 0 ? "pass" : "fail");
    golden_html_raw(h, "\">");
    golden_html_text(h, html_str(d, "decision"));
    golden_html_raw(h, "</span>, rule <b>");
    golden_html_text(h, html_str(d, "rule"));
    golden_html_raw(h, "</b> (experiment ");
    golden_html_text(h, html_str(d, "experiment_id"));
    golden_html_raw(h, ")</p>\n<table class=\"sortable\" id=\"rules\"><thead><tr><th>rule</th>"
                       "<th>holds</th><th>fired</th><th>label</th><th>reason</th></tr></thead><tbody>");
    size_t i;
    json_t *r;
    json_array_foreach(json_object_get(d, "rules"), i, r) {
        bool fired = json_is_true(json_object_get(r, "fired"));
        golden_html_raw(h, fired ? "<tr class=\"hl fired\"><td>" : "<tr><td>");
        golden_html_text(h, html_str(r, "rule"));
        golden_html_printf(h, "</td><td>%s</td><td>%s</td><td>",
                           json_is_true(json_object_get(r, "holds")) ? "yes" : "no", fired ? "yes" : "no");
        golden_html_text(h, html_str(r, "label"));
        golden_html_raw(h, "</td><td>");
        golden_html_text(h, html_str(r, "reason"));
        golden_html_raw(h, "</td></tr>");
    }
    golden_html_raw(h, "</tbody></table>\n");
    size_t nu = json_array_size(json_object_get(d, "uncertain"));
    if (nu) {
        golden_html_raw(h, "<p>Uncertain:</p><ul>");
        json_array_foreach(json_object_get(d, "uncertain"), i, r) {
            golden_html_raw(h, "<li>");
            golden_html_text(h, json_string_value(r));
            golden_html_raw(h, "</li>");
        }
        golden_html_raw(h, "</ul>\n");
    }
}

/* A case entry's concurrency level (absent: 1) and its name: "CASE", or "CASE @N" at a level
 * other than 1 (issue 33). */
static long long level_of(const json_t *c)
{
    json_t *v = json_object_get(c, "concurrency");
    return json_is_integer(v) ? json_integer_value(v) : 1;
}

static void case_label(char *buf, size_t n, const json_t *c)
{
    if (level_of(c) == 1)
        snprintf(buf, n, "%.60s", html_str(c, "case_id"));
    else
        snprintf(buf, n, "%.60s @%lld", html_str(c, "case_id"), level_of(c));
}

/* One box chart per latency metric: a baseline and a candidate row per sufficient case. */
static int latency_boxes(golden_html *h, const json_t *cases, const char *metric)
{
    size_t n = json_array_size(cases), i, k = 0;
    golden_html_box *rows = calloc(2 * n + 1, sizeof *rows);
    char (*labels)[96] = calloc(2 * n + 1, sizeof *labels);
    if (!rows || !labels) {
        free(rows), free(labels);
        return -1;
    }
    json_t *c;
    json_array_foreach(cases, i, c) {
        if (strcmp(html_str(c, "metric"), metric) != 0 || json_is_true(json_object_get(c, "insufficient")))
            continue;
        static const char *const sides[2] = {"baseline", "candidate"};
        for (int s = 0; s < 2; s++) {
            const json_t *st = json_object_get(c, sides[s]);
            const json_t *ci = json_object_get(st, "ci95");
            char name[80];
            case_label(name, sizeof name, c);
            snprintf(labels[k], sizeof labels[k], "%.75s %s", name, s ? "cand" : "base");
            rows[k] = (golden_html_box){labels[k], s ? "cand" : "base",
                                        json_number_value(json_array_get(ci, 0)),
                                        json_number_value(json_array_get(ci, 1)),
                                        html_num(st, "median"), html_num(st, "p90"), html_num(st, "p99")};
            if (json_array_size(ci) != 2)
                rows[k].lo = rows[k].hi = NAN;
            k++;
        }
    }
    if (k) {
        char id[64], title[160];
        snprintf(id, sizeof id, "latency-%s", metric);
        snprintf(title, sizeof title, "%s per case: box = bootstrap CI95 of the median, tick = median, "
                 "whiskers to p90 and p99", metric);
        golden_html_box_chart(h, id, title, metric, rows, k);
    }
    free(rows), free(labels);
    return 0;
}

/* The latency boxes of a section 7 summary (golden-accept's performance step). */
int html_gate_latency(golden_html *h, const json_t *summary)
{
    const json_t *cases = json_object_get(summary, "cases");
    return latency_boxes(h, cases, "ttft_ms") != 0 || latency_boxes(h, cases, "tpot_ms") != 0
               ? -1 : 0;
}

static bool is_stage(const char *m)
{
    size_t n = strlen(m);
    return n > 3 && strcmp(m + n - 3, "_ms") == 0 && strcmp(m, "ttft_ms") != 0 && strcmp(m, "tpot_ms") != 0;
}

/* Find s in list[0..n), adding it when absent; its index, or -1 when the list is full. */
static long intern(const char **list, size_t *n, size_t cap, const char *s)
{
    for (size_t i = 0; i < *n; i++)
        if (strcmp(list[i], s) == 0)
            return (long)i;
    if (*n >= cap)
        return -1;
    list[*n] = s;
    return (long)(*n)++;
}

/* Section 7 stages: one bar per case and side, one segment per stage (its median). */
static int stage_bars(golden_html *h, const json_t *cases)
{
    size_t n = json_array_size(cases), i, nb = 0, np = 0;
    const char **bars = calloc(n + 1, sizeof *bars), **parts = calloc(n + 1, sizeof *parts);
    char (*labels)[96] = calloc(2 * n + 1, sizeof *labels);
    char (*names)[80] = calloc(n + 1, sizeof *names); /* per entry: the case and its level */
    double *v = malloc(sizeof *v * (2 * n + 1) * (n + 1));
    if (!bars || !parts || !labels || !names || !v) {
        free(bars), free(parts), free(labels), free(names), free(v);
        return -1;
    }
    json_t *c;
    json_array_foreach(cases, i, c)
        if (is_stage(html_str(c, "metric")) && !json_is_true(json_object_get(c, "insufficient"))) {
            case_label(names[i], sizeof names[i], c);
            intern(bars, &nb, n, names[i]);
            intern(parts, &np, n, html_str(c, "metric"));
        }
    for (size_t k = 0; k < 2 * nb * np; k++)
        v[k] = NAN;
    const char **rows = calloc(2 * nb + 1, sizeof *rows);
    if (!rows) {
        free(bars), free(parts), free(labels), free(names), free(v);
        return -1;
    }
    for (size_t b = 0; b < nb; b++)
        for (int s = 0; s < 2; s++) {
            snprintf(labels[2 * b + (size_t)s], sizeof labels[0], "%.60s %s", bars[b], s ? "cand" : "base");
            rows[2 * b + (size_t)s] = labels[2 * b + (size_t)s];
        }
    json_array_foreach(cases, i, c) {
        if (!is_stage(html_str(c, "metric")) || json_is_true(json_object_get(c, "insufficient")))
            continue;
        long b = intern(bars, &nb, nb, names[i]), p = intern(parts, &np, np, html_str(c, "metric"));
        for (int s = 0; s < 2; s++)
            v[(2 * (size_t)b + (size_t)s) * np + (size_t)p] =
                html_num(json_object_get(c, s ? "candidate" : "baseline"), "median");
    }
    if (nb)
        golden_html_stacked_bars(h, "stages", "section 7 stages per case (median ms of each stage)", "ms",
                                 rows, 2 * nb, parts, np, v);
    else
        golden_html_raw(h, "<p class=\"note\">No stage timings in the summary.</p>\n");
    free(bars), free(parts), free(labels), free(names), free(v), free(rows);
    return 0;
}

/* trace.per_chip: one bar per side and chip, one segment per op family (cycles). */
static int chip_bars(golden_html *h, const json_t *per_chip)
{
    size_t n = json_array_size(per_chip), i, nb = 0, np = 0;
    if (!n) {
        golden_html_raw(h, "<p class=\"note\">No device trace in the summary.</p>\n");
        return 0;
    }
    const char **bars = calloc(n, sizeof *bars), **parts = calloc(n, sizeof *parts);
    char (*labels)[48] = calloc(n, sizeof *labels);
    double *v = malloc(sizeof *v * n * n);
    if (!bars || !parts || !labels || !v) {
        free(bars), free(parts), free(labels), free(v);
        return -1;
    }
    json_t *r;
    json_array_foreach(per_chip, i, r) {
        snprintf(labels[i], sizeof labels[i], "%.16s chip %lld", html_str(r, "side"),
                 (long long)json_integer_value(json_object_get(r, "chip")));
        intern(bars, &nb, n, labels[i]);
        intern(parts, &np, n, html_str(r, "family"));
    }
    for (size_t k = 0; k < n * n; k++)
        v[k] = NAN;
    json_array_foreach(per_chip, i, r) {
        long b = intern(bars, &nb, nb, labels[i]), p = intern(parts, &np, np, html_str(r, "family"));
        double c = html_num(r, "cycles");
        size_t at = (size_t)b * np + (size_t)p;
        v[at] = isfinite(v[at]) ? v[at] + c : c;
    }
    golden_html_stacked_bars(h, "chip-cycles", "cycles per chip and op family (device trace)", "cycles",
                             bars, nb, parts, np, v);
    free(bars), free(parts), free(labels), free(v);
    return 0;
}

/* Per graph-level case (golden_gate_series): latency against run order per side (drift), and
 * the CDF per side. */
/* Throughput beside latency per case and level (issue 33): the graph-level metric's P50 and
 * P99 and the requests/s and output tokens/s of both sides, from the summary's throughput. */
static const json_t *tp_row(const json_t *summary, const json_t *c, const char *side)
{
    size_t i;
    json_t *r;
    json_array_foreach(json_object_get(summary, "throughput"), i, r)
        if (!strcmp(html_str(r, "case_id"), html_str(c, "case_id")) &&
            !strcmp(html_str(r, "side"), side) && level_of(r) == level_of(c))
            return r;
    return NULL;
}

static void cell(golden_html *h, double v)
{
    if (isfinite(v))
        golden_html_printf(h, "<td data-v=\"%.17g\">%.3f</td>", v, v);
    else
        golden_html_raw(h, "<td data-v=\"\">n/a</td>");
}

static void throughput_table(golden_html *h, const json_t *summary)
{
    golden_html_raw(h, "<h2>Throughput and latency per concurrency level</h2>\n<table "
                       "class=\"sortable\" id=\"throughput\"><thead><tr><th>case</th>"
                       "<th>concurrency</th><th>metric</th><th>P50 base</th><th>P50 cand</th>"
                       "<th>P99 base</th><th>P99 cand</th><th>requests/s base</th>"
                       "<th>requests/s cand</th><th>output tokens/s base</th>"
                       "<th>output tokens/s cand</th></tr></thead><tbody>");
    size_t i;
    json_t *c;
    json_array_foreach(json_object_get(summary, "cases"), i, c) {
        if (!json_is_true(json_object_get(c, "graph_level")))
            continue;
        const json_t *b = json_object_get(c, "baseline"), *k = json_object_get(c, "candidate");
        const json_t *tb = tp_row(summary, c, "baseline"), *tc = tp_row(summary, c, "candidate");
        golden_html_raw(h, "<tr><td>");
        golden_html_text(h, html_str(c, "case_id"));
        golden_html_printf(h, "</td><td data-v=\"%lld\">%lld</td><td>", level_of(c), level_of(c));
        golden_html_text(h, html_str(c, "metric"));
        golden_html_raw(h, "</td>");
        cell(h, html_num(b, "median"));
        cell(h, html_num(k, "median"));
        cell(h, html_num(b, "p99"));
        cell(h, html_num(k, "p99"));
        cell(h, html_num(tb, "requests_per_s"));
        cell(h, html_num(tc, "requests_per_s"));
        cell(h, html_num(tb, "output_tokens_per_s"));
        cell(h, html_num(tc, "output_tokens_per_s"));
        golden_html_raw(h, "</tr>");
    }
    golden_html_raw(h, "</tbody></table>\n");
}

static int drift_cdf(golden_html *h, const json_t *series)
{
    size_t i;
    json_t *row;
    golden_html_raw(h, "<h2>Drift and distribution per case</h2>\n<p class=\"note\">Left: the "
                       "graph-level latency of every measured request against its run (the median "
                       "of each bin of consecutive runs when there are many); right: its CDF per "
                       "side (failed requests count as +inf, so a curve stops short of 1 by their "
                       "share).</p>\n");
    json_array_foreach(series, i, row) {
        static const char *const sides[2] = {"baseline", "candidate"};
        double *buf[2][2] = {{NULL, NULL}, {NULL, NULL}}, *cb[2][2] = {{NULL, NULL}, {NULL, NULL}};
        golden_html_series dr[2], cd[2];
        int bad = 0;
        for (int s = 0; s < 2; s++) {
            const json_t *sd = json_object_get(row, sides[s]);
            const json_t *d = json_object_get(sd, "drift"), *c = json_object_get(sd, "cdf");
            size_t nd = json_array_size(d), nc = json_array_size(c);
            buf[s][0] = malloc((nd + 1) * sizeof(double));
            buf[s][1] = malloc((nd + 1) * sizeof(double));
            cb[s][0] = malloc((nc + 1) * sizeof(double));
            cb[s][1] = malloc((nc + 1) * sizeof(double));
            if (!buf[s][0] || !buf[s][1] || !cb[s][0] || !cb[s][1]) {
                bad = 1;
                continue;
            }
            for (size_t k = 0; k < nd; k++) {
                const json_t *pt = json_array_get(d, k);
                buf[s][0][k] = json_number_value(json_array_get(pt, 0));
                const json_t *y = json_array_get(pt, 1);
                buf[s][1][k] = json_is_number(y) ? json_number_value(y) : NAN;
            }
            for (size_t k = 0; k < nc; k++) {
                const json_t *pt = json_array_get(c, k), *x = json_array_get(pt, 0);
                cb[s][0][k] = json_is_number(x) ? json_number_value(x) : NAN;
                cb[s][1][k] = json_is_number(x) ? json_number_value(json_array_get(pt, 1)) : NAN;
            }
            dr[s] = (golden_html_series){s ? "candidate" : "baseline", buf[s][0], buf[s][1], nd, s == 1};
            cd[s] = (golden_html_series){s ? "candidate" : "baseline", cb[s][0], cb[s][1], nc, s == 1};
        }
        if (!bad) {
            char id[160], title[200];
            const char *m = html_str(row, "metric");
            char cid[80], sfx[32] = "";
            case_label(cid, sizeof cid, row);
            if (level_of(row) != 1) /* ids stay those of before issue 33 at level 1 */
                snprintf(sfx, sizeof sfx, "-c%lld", level_of(row));
            snprintf(id, sizeof id, "drift-%.100s%s", html_str(row, "case_id"), sfx);
            snprintf(title, sizeof title, "%.100s: %.20s against run order", cid, m);
            golden_html_lines dl = {id, title, "run", m, false, 0, dr, 2, NAN, NULL, false};
            golden_html_raw(h, "<div class=\"pair\">");
            golden_html_line_chart(h, &dl);
            snprintf(id, sizeof id, "cdf-%.100s%s", html_str(row, "case_id"), sfx);
            snprintf(title, sizeof title, "%.100s: CDF of %.20s", cid, m);
            golden_html_lines cl = {id, title, m, "fraction of requests", false, 0, cd, 2, NAN, NULL,
                                    false};
            golden_html_line_chart(h, &cl);
            golden_html_raw(h, "</div>\n");
        }
        for (int s = 0; s < 2; s++)
            for (int k = 0; k < 2; k++)
                free(buf[s][k]), free(cb[s][k]);
        if (bad)
            return -1;
    }
    return 0;
}

/* Cases with unsteady or insufficient samples, listed apart from the plotted ones. */
static void apart(golden_html *h, const json_t *summary)
{
    golden_html_printf(h, "<h2>Kept apart</h2>\n<p>%lld unsteady sample(s) in the run (not in any "
                          "statistic above).</p>\n<table class=\"sortable\" id=\"apart\"><thead><tr>"
                          "<th>case</th><th>metric</th><th>unsteady base</th><th>unsteady cand</th>"
                          "<th>insufficient</th></tr></thead><tbody>",
                       (long long)json_integer_value(json_object_get(summary, "unsteady_samples")));
    size_t i;
    json_t *c;
    json_array_foreach(json_object_get(summary, "cases"), i, c) {
        double ub = html_num(json_object_get(c, "baseline"), "unsteady");
        double uc = html_num(json_object_get(c, "candidate"), "unsteady");
        bool ins = json_is_true(json_object_get(c, "insufficient"));
        if (!ins && !(ub > 0) && !(uc > 0))
            continue;
        golden_html_raw(h, "<tr class=\"apart\"><td>");
        golden_html_text(h, html_str(c, "case_id"));
        golden_html_raw(h, "</td><td>");
        golden_html_text(h, html_str(c, "metric"));
        golden_html_printf(h, "</td><td data-v=\"%g\">%g</td><td data-v=\"%g\">%g</td><td>%s</td></tr>",
                           isfinite(ub) ? ub : 0, isfinite(ub) ? ub : 0, isfinite(uc) ? uc : 0,
                           isfinite(uc) ? uc : 0, ins ? "yes" : "no");
    }
    golden_html_raw(h, "</tbody></table>\n");
}

static int body(golden_html *h, const json_t *d, const json_t *summary, const json_t *series)
{
    decision_head(h, d);
    const json_t *cases = json_object_get(summary, "cases");
    golden_html_raw(h, "<h2>Latency per case, baseline against candidate</h2>\n");
    if (latency_boxes(h, cases, "ttft_ms") != 0 || latency_boxes(h, cases, "tpot_ms") != 0)
        return -1;
    throughput_table(h, summary);
    if (series && drift_cdf(h, series) != 0)
        return -1;
    golden_html_raw(h, "<h2>Stage breakdown</h2>\n");
    if (stage_bars(h, cases) != 0)
        return -1;
    golden_html_raw(h, "<h2>Op-family cycles per chip</h2>\n");
    if (chip_bars(h, json_object_get(json_object_get(summary, "trace"), "per_chip")) != 0)
        return -1;
    apart(h, summary);
    return 0;
}

int golden_html_gate_report(const json_t *decision, const json_t *summary, const char *path,
                            bool force, golden_error *err)
{
    return golden_html_gate_report_series(decision, summary, NULL, path, force, err);
}

int golden_html_gate_report_series(const json_t *decision, const json_t *summary,
                                   const json_t *series, const char *path, bool force,
                                   golden_error *err)
{
    golden_html *h = golden_html_new("exp-gate decision");
    json_t *both = json_pack("{sOsO}", "decision", decision, "summary", summary ? summary : json_null());
    if (both && series && json_object_set(both, "series", (json_t *)series) != 0) {
        json_decref(both);
        both = NULL;
    }
    int rc = html_finish(h, h && both ? body(h, decision, summary, series) : -1, both, path, force, err);
    json_decref(both);
    return rc;
}
