/* golden-diff's HTML report: error along the layers per tensor kind (log scale, first layer over
 * the gate marked), three-way lines, failing first, |c - r| histogram per tensor, logits flips. */
#include "golden/html.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "golden/compare.h"
#include "report/html_int.h"
#include "util/numtext.h"

enum { K_ATTN, K_MOE, K_RESID, N_KINDS };
static const char *const kind_names[N_KINDS] = {"attention output", "MoE output", "residual stream"};

/* The layer and kind of a tap name such as layers/12/attn_out, model.layers.3.mlp_out,
 * blocks.11.attn.out or transformer.h.5.mlp: the number after a "layers", "layer", "blocks",
 * "block" or "h" segment, then attn -> attention, mlp/moe/expert -> MoE, hidden/resid ->
 * residual. -1 when the name is not a per-layer tap. */
static const char *const LAYER_WORDS[] = {"layers", "layer", "blocks", "block", "h", NULL};

static bool is_sep(char c) { return c == '/' || c == '.' || c == '_'; }

static int layer_kind(const char *name, long *layer)
{
    for (const char *p = name; *p; p++) {
        if (p != name && !is_sep(p[-1]))
            continue;
        for (int w = 0; LAYER_WORDS[w]; w++) {
            size_t wl = strlen(LAYER_WORDS[w]);
            const char *q = p + wl;
            if (strncmp(p, LAYER_WORDS[w], wl) != 0 || !is_sep(*q) || q[1] < '0' || q[1] > '9')
                continue;
            size_t nd = lg_digits_len(q + 1);
            int64_t v;
            if (lg_parse_int_n(q + 1, nd, 0, INT32_MAX, &v) != GOLDEN_PARSE_OK)
                return -1; /* a layer number past any model's */
            const char *rest = q + 1 + nd;
            if (*rest && !is_sep(*rest))
                continue; /* "h.5x" is not a layer index */
            *layer = (long)v;
            if (strstr(rest, "attn") || strstr(rest, "attention"))
                return K_ATTN;
            if (strstr(rest, "mlp") || strstr(rest, "moe") || strstr(rest, "expert") ||
                strstr(rest, "ffn"))
                return K_MOE;
            if (strstr(rest, "hidden") || strstr(rest, "resid") || !*rest || strcmp(rest, ".out") == 0 ||
                strcmp(rest, "/out") == 0 || strstr(rest, "output"))
                return K_RESID;
            return -1;
        }
    }
    return -1;
}

/* The larger of two values where NAN means "none". */
static double worst(double have, double v)
{
    if (!isfinite(v))
        return have;
    return isfinite(have) ? fmax(have, v) : v;
}

typedef struct {
    long n_layers;
    double *v; /* [metric][kind][layer], metric: 0 1-cos, 1 max_rel, 2 three-way candidate, 3 baseline */
    long first_fail;
    const char *metric;
} layers_t;

#define AT(L, m, k, l) ((L)->v[(((size_t)(m) * N_KINDS + (size_t)(k)) * (size_t)(L)->n_layers) + (size_t)(l)])

static int collect_layers(const json_t *tensors, layers_t *L)
{
    size_t i;
    json_t *t;
    long layer;
    L->n_layers = 0;
    L->first_fail = -1;
    L->metric = NULL;
    json_array_foreach(tensors, i, t)
        if (layer_kind(html_str(t, "name"), &layer) >= 0 && layer >= 0 && layer < 100000)
            L->n_layers = layer + 1 > L->n_layers ? layer + 1 : L->n_layers;
    if (!L->n_layers)
        return 0;
    L->v = malloc(sizeof *L->v * 4 * N_KINDS * (size_t)L->n_layers);
    if (!L->v)
        return -1;
    for (size_t k = 0; k < 4 * N_KINDS * (size_t)L->n_layers; k++)
        L->v[k] = NAN;
    json_array_foreach(tensors, i, t) {
        int k = layer_kind(html_str(t, "name"), &layer);
        if (k < 0 || layer < 0 || layer >= L->n_layers)
            continue;
        double cos = html_num(t, "cosine");
        AT(L, 0, k, layer) = worst(AT(L, 0, k, layer), 1 - cos);
        AT(L, 1, k, layer) = worst(AT(L, 1, k, layer), html_num(t, "max_rel"));
        const json_t *b = json_object_get(t, "baseline");
        if (b && json_is_true(json_object_get(b, "compared"))) {
            AT(L, 2, k, layer) = worst(AT(L, 2, k, layer), html_num(b, "error_candidate"));
            AT(L, 3, k, layer) = worst(AT(L, 3, k, layer), html_num(b, "error_baseline"));
            if (!L->metric && json_string_value(json_object_get(b, "error_metric")))
                L->metric = html_str(b, "error_metric");
        }
        if (strcmp(html_str(t, "verdict"), "fail") == 0 && (L->first_fail < 0 || layer < L->first_fail))
            L->first_fail = layer;
    }
    return 0;
}

/* The two per-layer charts, and the three-way one when the report has a baseline. */
static void layer_charts(golden_html *h, const layers_t *L)
{
    char mark[64];
    snprintf(mark, sizeof mark, "first layer over the gate: %ld", L->first_fail);
    golden_html_series s[2 * N_KINDS];
    size_t n = (size_t)L->n_layers;
    static const char *const ids[2] = {"layers-cosine", "layers-maxrel"};
    static const char *const titles[2] = {"1 - cosine per layer (worst tensor of each kind)",
                                          "max_rel per layer (worst tensor of each kind)"};
    for (int m = 0; m < 2; m++) {
        for (int k = 0; k < N_KINDS; k++)
            s[k] = (golden_html_series){kind_names[k], NULL, &AT(L, m, k, 0), n, false};
        golden_html_lines c = {ids[m], titles[m], "layer", m ? "max_rel" : "1 - cosine", true, 1e-12,
                               s, N_KINDS, L->first_fail >= 0 ? (double)L->first_fail : NAN, mark, false};
        golden_html_line_chart(h, &c);
    }
    if (!L->metric)
        return;
    char names[2 * N_KINDS][64], title[160];
    for (int k = 0; k < N_KINDS; k++) {
        snprintf(names[2 * k], sizeof names[0], "%s: candidate", kind_names[k]);
        snprintf(names[2 * k + 1], sizeof names[0], "%s: baseline", kind_names[k]);
        s[2 * k] = (golden_html_series){names[2 * k], NULL, &AT(L, 2, k, 0), n, false};
        s[2 * k + 1] = (golden_html_series){names[2 * k + 1], NULL, &AT(L, 3, k, 0), n, true};
    }
    snprintf(title, sizeof title, "three-way: %s per layer, candidate vs baseline", L->metric);
    golden_html_lines c = {"layers-threeway", title, "layer", L->metric, true, 1e-12, s,
                           2 * N_KINDS, L->first_fail >= 0 ? (double)L->first_fail : NAN, mark, false};
    golden_html_line_chart(h, &c);
}

/* The per-layer charts of a calculet-diff-report/v1 tree (golden-accept's accuracy step). */
int html_diff_layers(golden_html *h, const json_t *report)
{
    layers_t L = {0};
    if (collect_layers(json_object_get(report, "tensors"), &L) != 0)
        return -1;
    if (L.n_layers)
        layer_charts(h, &L);
    free(L.v);
    return 0;
}

/* Per logits tensor with flips: each flip's margin against its row, near ties apart. */
static int logits_charts(golden_html *h, const json_t *tensors)
{
    size_t i, shown = 0;
    json_t *t;
    json_array_foreach(tensors, i, t) {
        const json_t *flips = json_object_get(t, "flips");
        size_t n = json_array_size(flips);
        if (strcmp(html_str(t, "tier"), "logits") != 0 || n == 0 || shown >= 8)
            continue;
        if (!shown++)
            golden_html_raw(h, "<h2>Logits: near-tie margins against flips</h2>\n");
        double *xs = malloc(sizeof *xs * n), *ys = malloc(sizeof *ys * n);
        bool *near = malloc(sizeof *near * n);
        if (!xs || !ys || !near) {
            free(xs), free(ys), free(near);
            return -1;
        }
        for (size_t k = 0; k < n; k++) {
            const json_t *f = json_array_get(flips, k);
            xs[k] = html_num(f, "margin");
            ys[k] = html_num(f, "row");
            near[k] = json_is_true(json_object_get(f, "near_tie"));
        }
        char id[32], title[256];
        snprintf(id, sizeof id, "flips-%zu", i);
        snprintf(title, sizeof title, "%.120s: %zu top-1 flip(s), %lld near-tie row(s), %lld near-tie flip(s)",
                 html_str(t, "name"), n, (long long)json_integer_value(json_object_get(t, "near_tie_rows")),
                 (long long)json_integer_value(json_object_get(t, "near_tie_flips")));
        golden_html_scatter(h, id, title, "reference top-1 margin (log)", "row", xs, ys, near, n, true,
                            html_num(t, "near_tie_margin"));
        free(xs), free(ys), free(near);
    }
    return 0;
}

/* ---- the |c - r| histogram of a chosen tensor ---- */

/* Tensors drawn at most (the JSON may carry up to GOLDEN_DIFF_HIST_MAX): bounds the page. */
#define HIST_CHARTS 32

typedef struct {
    const json_t *t;
    size_t index;
    bool fail;
    double used;
} hist_pick;

/* Failing first, then the larger tolerance_used: the worst failing tensor is shown first. */
static int pick_order(const void *pa, const void *pb)
{
    const hist_pick *a = pa, *b = pb;
    if (a->fail != b->fail)
        return a->fail ? -1 : 1;
    if (a->used != b->used)
        return a->used > b->used ? -1 : 1;
    return a->index < b->index ? -1 : a->index > b->index;
}

enum { HB_MAX = GOLDEN_CMP_HIST_EMAX - GOLDEN_CMP_HIST_EMIN + 3 };

/* One tensor's chart: the zero bin, every exponent bin from the lowest to the highest non-empty
 * one (and atol's), the NaN/Inf bin when it has pairs; atol as the mark. */
static void hist_chart(golden_html *h, const json_t *t, size_t k)
{
    const json_t *hj = json_object_get(t, "abs_error_histogram");
    unsigned long long by_e[HB_MAX] = {0}, counts[HB_MAX];
    char keys[HB_MAX][16], labels[HB_MAX][16];
    const char *kp[HB_MAX], *lp[HB_MAX];
    int lo = GOLDEN_CMP_HIST_EMAX + 1, hi = GOLDEN_CMP_HIST_EMIN - 1;
    size_t i;
    const json_t *b;
    json_array_foreach(json_object_get(hj, "log2"), i, b) {
        json_int_t e = json_integer_value(json_array_get(b, 0));
        if (e < GOLDEN_CMP_HIST_EMIN || e > GOLDEN_CMP_HIST_EMAX)
            continue;
        by_e[e - GOLDEN_CMP_HIST_EMIN] = (unsigned long long)json_integer_value(json_array_get(b, 1));
        lo = (int)e < lo ? (int)e : lo;
        hi = (int)e > hi ? (int)e : hi;
    }
    double atol = html_num(t, "atol"), la = atol > 0 && isfinite(atol) ? log2(atol) : NAN;
    int ea = isfinite(la) ? (int)floor(la) : 0;
    if (isfinite(la)) {
        ea = ea < GOLDEN_CMP_HIST_EMIN ? GOLDEN_CMP_HIST_EMIN : ea > GOLDEN_CMP_HIST_EMAX ? GOLDEN_CMP_HIST_EMAX : ea;
        lo = ea < lo ? ea : lo;
        hi = ea > hi ? ea : hi;
    }
    size_t n = 0;
    counts[n] = (unsigned long long)json_integer_value(json_object_get(hj, "zero"));
    kp[n] = "zero";
    lp[n++] = "0";
    int step = hi >= lo ? (hi - lo + 12) / 12 : 1;
    for (int e = lo; e <= hi; e++) {
        snprintf(keys[n], sizeof keys[n], "%d", e);
        snprintf(labels[n], sizeof labels[n], "%s2^%d", e == GOLDEN_CMP_HIST_EMIN ? "\u2264"
                 : e == GOLDEN_CMP_HIST_EMAX ? "\u2265" : "", e);
        counts[n] = by_e[e - GOLDEN_CMP_HIST_EMIN];
        kp[n] = keys[n];
        lp[n] = (e - lo) % step == 0 || e == hi ? labels[n] : NULL;
        n++;
    }
    unsigned long long nf = (unsigned long long)json_integer_value(json_object_get(hj, "nonfinite"));
    if (nf) {
        counts[n] = nf;
        kp[n] = "nonfinite";
        lp[n++] = "NaN/Inf";
    }
    char id[32], title[256], mark[64];
    snprintf(id, sizeof id, "abs-hist-%zu", k);
    snprintf(title, sizeof title, "%.150s: |c - r| by binary exponent (%s, %s)", html_str(t, "name"),
             html_str(t, "tier"), html_str(t, "verdict"));
    snprintf(mark, sizeof mark, "atol = %.3g", atol);
    double at = isfinite(la) ? 1 + (ea - lo) + (la - floor(la)) : NAN;
    golden_html_bins c = {id, title, "|c - r|: bin 2^e holds [2^e, 2^(e+1)); 0 exact; NaN/Inf pairs apart",
                          kp, lp, counts, n, true, at, mark};
    golden_html_bin_chart(h, &c);
}

/* The section: a <select> of the tensors that carry a histogram (worst failing first), one
 * figure each, all but the chosen one hidden; the page's hash #hist=K chooses K on load. */
static int hist_section(golden_html *h, const json_t *tensors)
{
    size_t n = json_array_size(tensors), k = 0, i;
    const json_t *t;
    hist_pick *p = malloc(sizeof *p * (n ? n : 1));
    if (!p)
        return -1;
    json_array_foreach(tensors, i, t)
        if (json_is_object(json_object_get(t, "abs_error_histogram"))) {
            /* null: no finite pair or an Inf ratio, the worst there is when the tensor failed */
            double u = html_num(t, "tolerance_used");
            bool fail = strcmp(html_str(t, "verdict"), "fail") == 0;
            p[k++] = (hist_pick){t, i, fail, isnan(u) ? (fail ? INFINITY : -1) : u};
        }
    golden_html_raw(h, "<h2>|c - r| of one tensor</h2>\n");
    if (!k) {
        golden_html_raw(h, "<p class=\"note\">No tensor carries an |c - r| histogram.</p>\n");
        free(p);
        return 0;
    }
    qsort(p, k, sizeof *p, pick_order);
    size_t shown = k < HIST_CHARTS ? k : HIST_CHARTS;
    golden_html_printf(h, "<p class=\"note\">Every element pair counted by the binary exponent of "
                          "|c - r|; %zu tensor(s) carry a histogram in the JSON report, the %zu "
                          "worst (failing first, then by tolerance_used) are drawn here.</p>\n"
                          "<p><label>tensor <select id=\"hist-select\">", k, shown);
    for (size_t j = 0; j < shown; j++) {
        golden_html_printf(h, "<option value=\"%zu\">", j);
        golden_html_text(h, html_str(p[j].t, "name"));
        golden_html_printf(h, " (%s)</option>", p[j].fail ? "fail" : "pass");
    }
    golden_html_raw(h, "</select></label></p>\n");
    for (size_t j = 0; j < shown; j++) {
        golden_html_printf(h, "<div class=\"hist-fig\" data-index=\"%zu\" data-tensor=\"", j);
        golden_html_text(h, html_str(p[j].t, "name"));
        golden_html_printf(h, "\"%s>", j ? " hidden" : "");
        hist_chart(h, p[j].t, j);
        golden_html_raw(h, "</div>\n");
    }
    golden_html_raw(h, "<script>(function(){var s=document.getElementById('hist-select');"
                       "function show(){var f=document.querySelectorAll('.hist-fig');"
                       "for(var i=0;i<f.length;i++)f[i].hidden=f[i].getAttribute('data-index')!==s.value;"
                       "s.setAttribute('data-shown',s.value);}"
                       "s.addEventListener('change',show);"
                       "var m=/^#hist=(\\d+)$/.exec(location.hash);"
                       "if(m&&+m[1]<s.options.length){s.value=m[1];s.dispatchEvent(new Event('change'));}"
                       "else show();})();</script>\n");
    free(p);
    return 0;
}

static void header(golden_html *h, const json_t *r)
{
    const json_t *s = json_object_get(r, "summary");
    const char *v = html_str(r, "verdict");
    golden_html_printf(h, "<p class=\"verdict\" data-verdict=\"%s\">verdict: <span class=\"%s\">%s"
                          "</span></p>\n<table class=\"facts\">", strcmp(v, "pass") == 0 ? "pass" : "fail",
                       strcmp(v, "pass") == 0 ? "pass" : "fail", strcmp(v, "pass") == 0 ? "pass" : "fail");
    static const char *const files[] = {"reference", "candidate", "baseline"};
    for (int i = 0; i < 3; i++)
        if (json_object_get(r, files[i])) {
            golden_html_printf(h, "<tr><th>%s</th><td>", files[i]);
            golden_html_text(h, html_str(r, files[i]));
            golden_html_raw(h, "</td></tr>");
        }
    golden_html_printf(h, "<tr><th>tensors</th><td>%lld compared, %lld passed, <span class=\"fail\">"
                          "%lld failed</span>, %zu missing in the candidate, %zu missing in the "
                          "reference</td></tr></table>\n",
                       (long long)json_integer_value(json_object_get(s, "tensors")),
                       (long long)json_integer_value(json_object_get(s, "passed")),
                       (long long)json_integer_value(json_object_get(s, "failed")),
                       json_array_size(json_object_get(s, "missing_in_candidate")),
                       json_array_size(json_object_get(s, "missing_in_reference")));
    if (json_object_get(s, "reason")) {
        golden_html_raw(h, "<p class=\"fail\">");
        golden_html_text(h, html_str(s, "reason"));
        golden_html_raw(h, "</p>\n");
    }
}

/* summary.trends: layer metrics worsening steadily while every layer passes (information). */
static void trends_section(golden_html *h, const json_t *report)
{
    const json_t *tr = json_object_get(json_object_get(report, "summary"), "trends");
    golden_html_raw(h, "<h2>Trends along the layers</h2>\n");
    if (!json_array_size(tr)) {
        golden_html_raw(h, "<p class=\"note\" id=\"trends\" data-trends=\"0\">No layer metric "
                           "worsens steadily along the layers.</p>\n");
        return;
    }
    golden_html_raw(h, "<p class=\"note\">Rule: ");
    golden_html_text(h, html_str(json_object_get(report, "summary"), "trend_rule"));
    golden_html_printf(h, ".</p>\n<ul id=\"trends\" data-trends=\"%zu\">\n", json_array_size(tr));
    size_t i;
    const json_t *t;
    json_array_foreach(tr, i, t) {
        golden_html_raw(h, "<li class=\"trend\" data-series=\"");
        golden_html_text(h, html_str(t, "series"));
        golden_html_raw(h, "\">");
        golden_html_text(h, html_str(t, "series"));
        golden_html_raw(h, ": ");
        golden_html_text(h, html_str(t, "metric"));
        golden_html_printf(h, " worsens steadily along %lld layers (%lld to %lld): %.3g to %.3g, "
                              "Kendall tau %.2f</li>\n",
                           (long long)json_integer_value(json_object_get(t, "layers")),
                           (long long)json_integer_value(json_object_get(t, "first_layer")),
                           (long long)json_integer_value(json_object_get(t, "last_layer")),
                           html_num(t, "first_value"), html_num(t, "last_value"),
                           html_num(t, "kendall_tau"));
    }
    golden_html_raw(h, "</ul>\n");
}

static int body(golden_html *h, const json_t *report)
{
    const json_t *tensors = json_object_get(report, "tensors");
    header(h, report);
    layers_t L = {0, NULL, -1, NULL};
    if (collect_layers(tensors, &L) != 0)
        return -1;
    golden_html_raw(h, "<h2>Error along the layers</h2>\n");
    if (L.n_layers)
        layer_charts(h, &L);
    else
        golden_html_raw(h, "<p class=\"note\">No per-layer taps (layers/L/attn_out, mlp_out, hidden) "
                           "in this report.</p>\n");
    free(L.v);
    trends_section(h, report);
    golden_html_raw(h, "<h2>Tensors (failing first; click a heading to sort)</h2>\n");
    static const char *const cols[] = {"name|tensor", "tier|tier", "verdict|verdict",
                                       "max_abs|max_abs", "max_rel|max_rel", "cosine|cosine",
                                       "mismatches_judged|mismatches", "tolerance_used|\xc3\x97 tolerance",
                                       "reasons|reasons"};
    golden_html_json_table(h, "tensors", "tensors", cols, sizeof cols / sizeof *cols, true);
    size_t n = json_array_size(tensors), i;
    json_t *t;
    double *v = malloc(sizeof *v * (n ? n : 1));
    if (!v)
        return -1;
    json_array_foreach(tensors, i, t)
        v[i] = html_num(t, "max_abs");
    golden_html_raw(h, "<h2>Spread of max |c - r| over tensors</h2>\n<p class=\"note\">Every "
                       "tensor's max_abs (log bins; zero and null left out): where the whole run "
                       "stands, including the tensors without an |c - r| histogram below.</p>\n");
    golden_html_histogram(h, "maxabs-hist", "per-tensor max |c - r|", "max_abs", v, n, 40, true);
    free(v);
    if (hist_section(h, tensors) != 0)
        return -1;
    return logits_charts(h, tensors);
}

int golden_html_diff_report(const json_t *report, const char *path, bool force,
                            golden_error *err)
{
    golden_html *h = golden_html_new("golden-diff report");
    return html_finish(h, h ? body(h, report) : -1, report, path, force, err);
}
