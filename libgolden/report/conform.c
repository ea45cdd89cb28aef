/* npu-replay conform's HTML report from its calculet-conform/v1 tree: every check's verdict and
 * findings at the top, then the kv-growth curve (TPOT, KV bytes per token, against context). */
#include "golden/html.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report/html_int.h"

/* One row a check: status, time, comparisons, findings (the kept ones listed). */
static void checks_table(golden_html *h, const json_t *checks)
{
    golden_html_raw(h, "<table class=\"sortable\" id=\"checks\"><thead><tr><th>check</th><th>status"
                       "</th><th>seconds</th><th>compared</th><th>findings</th><th>first findings / "
                       "error</th></tr></thead><tbody>\n");
    size_t i;
    json_t *k;
    json_array_foreach(checks, i, k) {
        const char *st = html_str(k, "status");
        golden_html_raw(h, strcmp(st, "pass") == 0 ? "<tr class=\"check\" data-status=\""
                                                    : "<tr class=\"check hl\" data-status=\"");
        golden_html_text(h, st);
        golden_html_raw(h, "\"><td>");
        golden_html_text(h, html_str(k, "check"));
        golden_html_raw(h, "</td><td class=\"verdict-");
        golden_html_text(h, st);
        golden_html_raw(h, "\">");
        golden_html_text(h, st);
        golden_html_printf(h, "</td><td data-v=\"%.6g\">%.3f</td><td data-v=\"%lld\">%lld</td>"
                              "<td data-v=\"%lld\">%lld</td><td>",
                           html_num(k, "seconds"), html_num(k, "seconds"),
                           (long long)json_integer_value(json_object_get(k, "comparisons")),
                           (long long)json_integer_value(json_object_get(k, "comparisons")),
                           (long long)json_integer_value(json_object_get(k, "findings_total")),
                           (long long)json_integer_value(json_object_get(k, "findings_total")));
        size_t f;
        json_t *fd;
        const json_t *fs = json_object_get(k, "findings");
        if (json_array_size(fs)) {
            golden_html_raw(h, "<ul class=\"findings\">");
            json_array_foreach(fs, f, fd) {
                /* the first three open, the rest one click away (all of them in the DOM) */
                if (f == 3)
                    golden_html_printf(h, "</ul><details><summary>%zu more kept (of %lld)</summary>"
                                          "<ul class=\"findings\">", json_array_size(fs) - 3,
                                       (long long)json_integer_value(json_object_get(k, "findings_total")));
                golden_html_raw(h, "<li class=\"finding\"><b>");
                golden_html_text(h, html_str(fd, "case"));
                golden_html_raw(h, "</b>: ");
                golden_html_text(h, html_str(fd, "what"));
                golden_html_raw(h, "</li>");
            }
            golden_html_raw(h, json_array_size(fs) > 3 ? "</ul></details>" : "</ul>");
        }
        if (json_object_get(k, "error")) {
            golden_html_raw(h, "<span class=\"fail error\">");
            golden_html_text(h, html_str(k, "error"));
            golden_html_raw(h, "</span>");
        }
        if (json_object_get(k, "k_required"))
            golden_html_printf(h, "<span class=\"note\">the sampling settings need k &ge; %lld; the "
                                  "backend gives %lld</span>",
                               (long long)json_integer_value(json_object_get(k, "k_required")),
                               (long long)json_integer_value(json_object_get(k, "k_backend")));
        golden_html_raw(h, "</td></tr>\n");
    }
    golden_html_raw(h, "</tbody></table>\n");
}

/* kv-growth: two panels sharing the context axis (log 2 spacing: contexts double). */
static int growth(golden_html *h, const json_t *curve)
{
    size_t n = json_array_size(curve);
    double *v = calloc(4 * n + 1, sizeof *v);
    if (!v)
        return -1;
    double *ctx = v, *tpot = v + n, *wr = v + 2 * n, *rd = v + 3 * n;
    for (size_t i = 0; i < n; i++) {
        const json_t *p = json_array_get(curve, i);
        ctx[i] = html_num(p, "context");
        tpot[i] = html_num(p, "tpot_s") * 1e3;
        wr[i] = html_num(p, "kv_write_bytes_per_token");
        rd[i] = html_num(p, "kv_read_bytes_per_token");
    }
    golden_html_series ts[1] = {{"TPOT (median decode step)", ctx, tpot, n, false}};
    golden_html_lines tc = {"kv-tpot", "TPOT against context", "context (tokens)", "ms", false, 0,
                            ts, 1, NAN, NULL, true};
    golden_html_line_chart(h, &tc);
    golden_html_series bs[2] = {{"KV bytes written / token", ctx, wr, n, false},
                                {"KV bytes read / token", ctx, rd, n, true}};
    golden_html_lines bc = {"kv-bytes", "KV cache bytes per generated token against context",
                            "context (tokens)", "bytes", true, 1, bs, 2, NAN, NULL, true};
    golden_html_line_chart(h, &bc);
    free(v);
    return 0;
}

static int body(golden_html *h, const json_t *rep)
{
    const char *v = html_str(rep, "verdict");
    bool pass = strcmp(v, "pass") == 0;
    golden_html_raw(h, "<p class=\"verdict\" data-verdict=\"");
    golden_html_text(h, v);
    golden_html_printf(h, "\">verdict: <span class=\"%s\">", pass ? "pass" : "fail");
    golden_html_text(h, v);
    golden_html_raw(h, "</span> &mdash; backend ");
    golden_html_text(h, html_str(rep, "backend"));
    const json_t *checks = json_object_get(rep, "checks");
    size_t i, bad = 0;
    json_t *k;
    json_array_foreach(checks, i, k)
        bad += strcmp(html_str(k, "status"), "pass") != 0;
    golden_html_printf(h, ": %zu check(s), %zu not passed</p>\n", json_array_size(checks), bad);
    checks_table(h, checks);
    bool drawn = false;
    json_array_foreach(checks, i, k) {
        const json_t *curve = json_object_get(k, "curve");
        if (!json_array_size(curve))
            continue;
        golden_html_raw(h, "<h2>KV growth (section 10)</h2>\n<p class=\"note\">Measured per "
                           "context: the median decode step, and the KV cache bytes one generated "
                           "token writes and reads (from config.json, bf16 assumed: the ABI does not "
                           "say the cache dtype). A measurement, not a verdict.</p>\n");
        if (growth(h, curve) != 0)
            return -1;
        drawn = true;
    }
    if (!drawn)
        golden_html_raw(h, "<p class=\"note\">No kv-growth curve: the check was not selected or "
                           "could not run.</p>\n");
    return 0;
}

int golden_html_conform_report(const json_t *report, const char *path, bool force,
                               golden_error *err)
{
    golden_html *h = golden_html_new("npu-replay conformance");
    return html_finish(h, h ? body(h, report) : -1, report, path, force, err);
}
