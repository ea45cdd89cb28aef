/* npu-replay profile's HTML report from calculet-routing-profile/v1: expert hit heatmaps, the
 * candidate's change in expert shares, section 12's buckets per layer and summed (a selector). */
#include "golden/html.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report/html_int.h"

#define NB 7
static const char *const bucket_names[NB] = {"0", "1", "2-4", "5-8", "9-16", "17-32", ">32"};

/* Labels "layer L" per row and "expert E" per column, in one allocation. */
typedef struct {
    char (*text)[40];
    const char **rows, **cols;
} labels_t;

static int labels_make(labels_t *l, const json_t *layers, size_t experts)
{
    size_t nr = json_array_size(layers);
    l->text = calloc(nr + experts + 1, sizeof *l->text);
    l->rows = calloc(nr + 1, sizeof *l->rows);
    l->cols = calloc(experts + 1, sizeof *l->cols);
    if (!l->text || !l->rows || !l->cols)
        return -1;
    for (size_t r = 0; r < nr; r++) {
        snprintf(l->text[r], sizeof l->text[r], "layer %lld",
                 (long long)json_integer_value(json_object_get(json_array_get(layers, r), "layer")));
        l->rows[r] = l->text[r];
    }
    for (size_t c = 0; c < experts; c++) {
        snprintf(l->text[nr + c], sizeof l->text[0], "expert %zu", c);
        l->cols[c] = l->text[nr + c];
    }
    return 0;
}

static void labels_free(labels_t *l)
{
    free(l->text), free(l->rows), free(l->cols);
}

static size_t max_experts(const json_t *layers)
{
    size_t i, e = 0;
    json_t *L;
    json_array_foreach(layers, i, L)
        if (json_array_size(json_object_get(L, "expert_hits")) > e)
            e = json_array_size(json_object_get(L, "expert_hits"));
    return e;
}

/* The layer of `other` with the same layer number as L, or NULL. */
static const json_t *same_layer(const json_t *other, const json_t *L)
{
    size_t i;
    json_t *M;
    json_int_t want = json_integer_value(json_object_get(L, "layer"));
    json_array_foreach(other, i, M)
        if (json_integer_value(json_object_get(M, "layer")) == want)
            return M;
    return NULL;
}

static double hits_total(const json_t *L)
{
    double t = 0;
    size_t e;
    json_t *x;
    json_array_foreach(json_object_get(L, "expert_hits"), e, x)
        t += (double)json_integer_value(x);
    return t;
}

/* Hits per (layer, expert); NAN where a layer has fewer experts. With `against`, the candidate
 * minus baseline share of the layer's hits in percentage points, over layers both have. */
static int heat(golden_html *h, const char *id, const char *title, const json_t *layers,
                const json_t *against)
{
    size_t E = max_experts(layers), nr = 0;
    if (against && max_experts(against) > E)
        E = max_experts(against);
    json_t *rows = json_array();
    size_t i;
    json_t *L;
    json_array_foreach(layers, i, L)
        if (!against || same_layer(against, L))
            json_array_append(rows, L);
    nr = json_array_size(rows);
    double *v = malloc(sizeof *v * (nr * E + 1));
    labels_t lb = {0};
    if (!rows || !v || labels_make(&lb, rows, E) != 0) {
        json_decref(rows), free(v), labels_free(&lb);
        return -1;
    }
    json_array_foreach(rows, i, L) {
        const json_t *hb = json_object_get(L, "expert_hits"), *B = against ? same_layer(against, L) : NULL;
        const json_t *ha = json_object_get(B, "expert_hits");
        double tb = hits_total(L), ta = B ? hits_total(B) : 0;
        for (size_t e = 0; e < E; e++) {
            double cb = e < json_array_size(hb) ? (double)json_integer_value(json_array_get(hb, e)) : NAN;
            if (!against) {
                v[i * E + e] = cb;
                continue;
            }
            /* an expert a side lacks has no hits there (as the profile's deltas count it) */
            double ca = e < json_array_size(ha) ? (double)json_integer_value(json_array_get(ha, e)) : 0;
            cb = isfinite(cb) ? cb : 0;
            v[i * E + e] = ta > 0 && tb > 0 ? 100 * (cb / tb - ca / ta) : NAN;
        }
    }
    if (against)
        golden_html_diff_heatmap(h, id, title, lb.rows, nr, lb.cols, E, v);
    else
        golden_html_heatmap(h, id, title, lb.rows, nr, lb.cols, E, v);
    json_decref(rows), free(v), labels_free(&lb);
    return 0;
}

static double bucket(const json_t *L, size_t b)
{
    return html_num(json_object_get(L, "buckets"), bucket_names[b]);
}

/* Section 12's buckets: one stacked bar per layer, then one histogram per layer and one summed,
 * of which the selector shows one (all of them hidden but the summed one on paper). */
static int buckets(golden_html *h, const char *side, const json_t *layers)
{
    size_t n = json_array_size(layers), i;
    double *v = calloc(NB * (n + 1), sizeof *v);
    labels_t lb = {0};
    if (!v || labels_make(&lb, layers, 0) != 0) {
        free(v), labels_free(&lb);
        return -1;
    }
    double *sum = v + NB * n;
    json_t *L;
    json_array_foreach(layers, i, L)
        for (size_t b = 0; b < NB; b++) {
            v[i * NB + b] = bucket(L, b);
            sum[b] += isfinite(v[i * NB + b]) ? v[i * NB + b] : 0;
        }
    char id[64], title[200];
    snprintf(id, sizeof id, "%sbuckets-per-layer", side);
    snprintf(title, sizeof title, "%s(case, expert) pairs by tokens routed, per layer",
             *side ? "candidate: " : "");
    golden_html_stacked_bars(h, id, title, "(case, expert) pairs", lb.rows, n, bucket_names, NB, v);
    for (size_t k = 0; k <= n; k++) {
        long long layer = k < n ? (long long)json_integer_value(json_object_get(json_array_get(layers, k), "layer")) : -1;
        if (k < n)
            golden_html_printf(h, "<div class=\"pick\" data-pick=\"%lld\">", layer);
        else
            golden_html_raw(h, "<div class=\"pick\" data-pick=\"all\">");
        snprintf(id, sizeof id, k < n ? "%sbuckets-%lld" : "%sbuckets-all", side, layer);
        snprintf(title, sizeof title, k < n ? "%stokens per expert within a case, layer %lld"
                                            : "%stokens per expert within a case, all layers summed",
                 *side ? "candidate: " : "", layer);
        golden_html_bar_chart(h, id, title, "tokens routed to an expert in one case", "(case, expert) pairs",
                              bucket_names, NB, k < n ? v + k * NB : sum);
        golden_html_raw(h, "</div>\n");
    }
    free(v), labels_free(&lb);
    return 0;
}

static void selector(golden_html *h, const json_t *layers)
{
    golden_html_raw(h, "<p class=\"noprint\"><label>Layer: <select id=\"bucket-layer\"><option "
                       "value=\"all\">all layers summed</option>");
    size_t i;
    json_t *L;
    json_array_foreach(layers, i, L) {
        long long l = (long long)json_integer_value(json_object_get(L, "layer"));
        golden_html_printf(h, "<option value=\"%lld\">layer %lld</option>", l, l);
    }
    golden_html_raw(h, "</select></label></p>\n");
}

/* After the histograms: show the one picked; #bucket-layer=L in the address picks layer L. */
static void selector_script(golden_html *h)
{
    golden_html_raw(h, "<script>(function(){var s=document.getElementById("
                       "'bucket-layer');function show(){document.querySelectorAll('[data-pick]')."
                       "forEach(function(d){d.hidden=d.getAttribute('data-pick')!==s.value;});}\n"
                       "var m=/bucket-layer=([^&]+)/.exec(location.hash);if(m)s.value="
                       "decodeURIComponent(m[1]);if(!s.value)s.value='all';s.onchange=show;show();})();"
                       "</script>\n");
}

static void placed_cell(golden_html *h, const json_t *o, const char *key)
{
    const json_t *v = json_object_get(o, key);
    if (json_is_integer(v))
        golden_html_printf(h, "<td>%lld</td>", (long long)json_integer_value(v));
    else if (json_is_number(v))
        golden_html_printf(h, "<td>%.4g</td>", json_number_value(v));
    else
        golden_html_raw(h, "<td>&ndash;</td>");
}

/* profile --placement: the placement it was given, and per layer the bytes it moves, the
 * all-to-all share, launches and padding, and each chip's share of the tokens. */
static int placement(golden_html *h, const json_t *p, const json_t *layers)
{
    const json_t *setup = json_object_get(p, "placement");
    if (!setup)
        return 0;
    long long chips = (long long)json_integer_value(json_object_get(setup, "chips"));
    golden_html_raw(h, "<h2>Expert placement</h2>\n<p class=\"facts\" id=\"placement\">placement <b>");
    golden_html_text(h, html_str(setup, "file"));
    golden_html_printf(h, "</b>: %lld chip(s), %lld dispatch and %lld combine byte(s) a token</p>\n",
                       chips, (long long)json_integer_value(json_object_get(setup, "bytes_per_token")),
                       (long long)json_integer_value(json_object_get(setup, "combine_bytes_per_token")));
    static const char *const keys[] = {"dispatch_bytes", "combine_bytes", "all_to_all_bytes",
                                       "launches", "slots", "padding_slots", "chip_imbalance",
                                       "dropped_pairs"};
    golden_html_raw(h, "<table class=\"placed\"><thead><tr><th>layer</th><th>dispatch bytes</th>"
                       "<th>combine bytes</th><th>cross-chip (all-to-all) bytes</th><th>launches</th>"
                       "<th>slots</th><th>padding slots</th><th>chip imbalance (max/mean)</th>"
                       "<th>dropped pairs</th></tr></thead><tbody>\n");
    size_t i, rows = 0;
    const json_t *L;
    json_array_foreach(layers, i, L) {
        const json_t *o = json_object_get(L, "placement");
        if (!o)
            continue;
        golden_html_printf(h, "<tr class=\"placed-row\"><td>%lld</td>",
                           (long long)json_integer_value(json_object_get(L, "layer")));
        for (size_t k = 0; k < sizeof keys / sizeof *keys; k++)
            placed_cell(h, o, keys[k]);
        golden_html_raw(h, "</tr>\n");
        rows++;
    }
    golden_html_raw(h, "</tbody></table>\n");
    if (!rows || chips <= 0 || chips > 4096)
        return 0;
    /* tokens per chip, one bar a layer */
    char **names = calloc(rows, sizeof *names), **parts = calloc((size_t)chips, sizeof *parts);
    double *v = calloc(rows * (size_t)chips, sizeof *v);
    int rc = names && parts && v ? 0 : -1;
    size_t r = 0;
    for (long long c = 0; rc == 0 && c < chips; c++)
        if (asprintf(&parts[c], "chip %lld", c) < 0)
            parts[c] = NULL, rc = -1;
    json_array_foreach(layers, i, L) {
        const json_t *fd = json_object_get(json_object_get(L, "placement"), "fault_domain");
        if (rc != 0 || !json_object_get(L, "placement"))
            continue;
        if (asprintf(&names[r], "layer %lld", (long long)json_integer_value(json_object_get(L, "layer"))) < 0) {
            names[r] = NULL;
            rc = -1;
            break;
        }
        size_t k;
        const json_t *d;
        json_array_foreach(fd, k, d)
            if (k < (size_t)chips)
                v[r * (size_t)chips + k] = (double)json_integer_value(json_object_get(d, "tokens"));
        r++;
    }
    if (rc == 0)
        golden_html_stacked_bars(h, "placement-tokens", "tokens routed to each chip's experts, per layer",
                                 "tokens", (const char *const *)names, rows,
                                 (const char *const *)parts, (size_t)chips, v);
    for (size_t k = 0; names && k < rows; k++)
        free(names[k]);
    for (long long c = 0; parts && c < chips; c++)
        free(parts[c]);
    free(names), free(parts), free(v);
    return rc;
}

static int body(golden_html *h, const json_t *p)
{
    const json_t *a = json_object_get(p, "layers"), *b = json_object_get(p, "candidate_layers");
    golden_html_raw(h, "<p class=\"facts\">golden <b>");
    golden_html_text(h, html_str(p, "golden"));
    golden_html_raw(h, "</b>");
    if (b) {
        golden_html_raw(h, ", candidate <b>");
        golden_html_text(h, html_str(p, "candidate"));
        golden_html_raw(h, "</b>");
    }
    golden_html_printf(h, ": %zu layer(s) with router taps, up to %zu experts</p>\n",
                       json_array_size(a), max_experts(a));
    golden_html_raw(h, "<h2>Expert hits (layer &times; expert)</h2>\n<p class=\"note\">A hit is one "
                       "(token, rank) pair of the router's top-k naming the expert, over every case. "
                       "A cold expert is a dark column (viridis scale: dark purple low, yellow high).</p>\n");
    if (heat(h, "expert-hits", b ? "baseline: expert hits" : "expert hits", a, NULL) != 0)
        return -1;
    if (b) {
        if (heat(h, "expert-hits-candidate", "candidate: expert hits", b, NULL) != 0 ||
            heat(h, "expert-share-diff", "candidate minus baseline: share of the layer's hits "
                 "(percentage points)", b, a) != 0)
            return -1;
    }
    static const char *const cols[] = {"layer|layer", "tokens|tokens", "cases|cases",
                                       "empty_experts|empty", "small_experts|small",
                                       "max_mean_load|max/mean", "topk_mass_mean|top-k mass",
                                       "margin_min|min margin"};
    golden_html_raw(h, "<h2>Per layer</h2>\n");
    golden_html_json_table(h, "layers", "layers", cols, sizeof cols / sizeof *cols, false);
    if (b) {
        static const char *const dcols[] = {"layer|layer", "max_share_change|largest share change (fraction)",
                                            "max_share_change_expert|expert", "max_mean_load|max/mean change",
                                            "empty_experts|empty change", "topk_mass_mean|mass change",
                                            "margin_mean|margin change"};
        golden_html_raw(h, "<h3>Candidate minus baseline</h3>\n");
        golden_html_json_table(h, "deltas", "deltas", dcols, sizeof dcols / sizeof *dcols, false);
    }
    if (placement(h, p, a) != 0)
        return -1;
    golden_html_raw(h, "<h2>Tokens per expert (section 12 buckets)</h2>\n<p class=\"note\">Per case "
                       "and expert, the tokens the router sent to the expert, counted in buckets 0, "
                       "1, 2-4, 5-8, 9-16, 17-32, &gt;32: many small buckets mean small, inefficient "
                       "expert matmuls.</p>\n");
    selector(h, a);
    if (buckets(h, "", a) != 0 || (b && buckets(h, "cand-", b) != 0))
        return -1;
    selector_script(h);
    return 0;
}

int golden_html_profile_report(const json_t *profile, const char *path, bool force,
                               golden_error *err)
{
    golden_html *h = golden_html_new("npu-replay routing profile");
    return html_finish(h, h ? body(h, profile) : -1, profile, path, force, err);
}
