/* exp-gate pareto --html: the section 16.2 picture (quality against capacity cost, frontier
 * points filled, joined and named; dominated points hollow) and the points table. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "golden/html.h"
#include "golden/pareto.h"

static double num(const json_t *o, const char *k)
{
    json_t *v = json_object_get(o, k);
    return json_is_number(v) ? json_number_value(v) : NAN;
}

#define W 640.0
#define H 360.0
#define L 70.0
#define R 20.0
#define T 20.0
#define B 50.0

static void bounds(const json_t *pts, const char *k, double *lo, double *hi)
{
    *lo = INFINITY;
    *hi = -INFINITY;
    size_t i;
    json_t *p;
    json_array_foreach(pts, i, p) {
        double v = num(p, k);
        if (isfinite(v)) {
            *lo = fmin(*lo, v);
            *hi = fmax(*hi, v);
        }
    }
    if (!isfinite(*lo))
        *lo = *hi = 0;
    if (*hi - *lo <= 0) {
        *lo -= 0.5;
        *hi += 0.5;
    }
}

/* <svg class="chart" data-chart="pareto">: x capacity cost (MiB), y the quality axis;
 * <circle class="pt frontier|dominated" data-id=ID data-x=X data-y=Y>, the frontier's points
 * joined in capacity order by <polyline class="frontier">. */
static void picture(golden_html *h, const json_t *doc)
{
    const json_t *pts = json_object_get(doc, "points");
    double x0, x1, y0, y1;
    bounds(pts, "capacity_cost_bytes", &x0, &x1);
    bounds(pts, "quality", &y0, &y1);
    const char *axis = json_string_value(json_object_get(doc, "quality_axis")) ?: "?";
    golden_html_printf(h, "<svg class=\"chart\" data-chart=\"pareto\" viewBox=\"0 0 %.0f %.0f\" "
                       "width=\"%.0f\" height=\"%.0f\" role=\"img\">\n", W, H, W, H);
    golden_html_printf(h, "<line x1=\"%.0f\" y1=\"%.0f\" x2=\"%.0f\" y2=\"%.0f\" stroke=\"currentColor\"/>"
                       "<line x1=\"%.0f\" y1=\"%.0f\" x2=\"%.0f\" y2=\"%.0f\" stroke=\"currentColor\"/>\n",
                       L, H - B, W - R, H - B, L, T, L, H - B);
    golden_html_printf(h, "<text x=\"%.0f\" y=\"%.0f\" text-anchor=\"middle\">capacity cost (MiB); "
                       "%.4g .. %.4g</text>\n", (L + W - R) / 2, H - 12, x0 / 1048576, x1 / 1048576);
    golden_html_printf(h, "<text x=\"14\" y=\"%.0f\" transform=\"rotate(-90 14 %.0f)\" "
                       "text-anchor=\"middle\">quality (%s", (T + H - B) / 2, (T + H - B) / 2, axis);
    golden_html_printf(h, "%s); %.4g .. %.4g</text>\n",
                       !strcmp(axis, "kl") ? ": -kl_mean" : !strcmp(axis, "task") ? " recovered" : "",
                       y0, y1);
    /* frontier line: frontier points in capacity order */
    double fx[256], fy[256];
    size_t nf = 0, i;
    json_t *p;
    json_array_foreach(pts, i, p) {
        if (!json_is_true(json_object_get(p, "frontier")) || nf >= 256)
            continue;
        double x = num(p, "capacity_cost_bytes"), y = num(p, "quality");
        size_t k = nf++;
        while (k > 0 && fx[k - 1] > x) {
            fx[k] = fx[k - 1];
            fy[k] = fy[k - 1];
            k--;
        }
        fx[k] = x;
        fy[k] = y;
    }
#define PX(v) (L + ((v) - x0) / (x1 - x0) * (W - L - R))
#define PY(v) (H - B - ((v) - y0) / (y1 - y0) * (H - T - B))
    golden_html_raw(h, "<polyline class=\"frontier\" fill=\"none\" stroke=\"#d62728\" points=\"");
    for (size_t k = 0; k < nf; k++)
        golden_html_printf(h, "%s%.1f,%.1f", k ? " " : "", PX(fx[k]), PY(fy[k]));
    golden_html_raw(h, "\"/>\n");
    json_array_foreach(pts, i, p) {
        bool fr = json_is_true(json_object_get(p, "frontier"));
        double x = num(p, "capacity_cost_bytes"), y = num(p, "quality");
        golden_html_printf(h, "<circle class=\"pt %s\" r=\"5\" cx=\"%.1f\" cy=\"%.1f\" "
                           "fill=\"%s\" stroke=\"#1f77b4\" data-x=\"%.17g\" data-y=\"%.17g\" data-id=\"",
                           fr ? "frontier" : "dominated", PX(x), PY(y), fr ? "#1f77b4" : "none", x, y);
        golden_html_text(h, json_string_value(json_object_get(p, "experiment_id")));
        golden_html_raw(h, "\"><title>");
        golden_html_text(h, json_string_value(json_object_get(p, "experiment_id")));
        golden_html_printf(h, ": latency +%.4g %%</title></circle>\n", num(p, "latency_cost_pct"));
        if (fr) {
            golden_html_printf(h, "<text class=\"label\" x=\"%.1f\" y=\"%.1f\" font-size=\"11\">",
                               PX(x) + 7, PY(y) - 7);
            golden_html_text(h, json_string_value(json_object_get(p, "experiment_id")));
            golden_html_raw(h, "</text>\n");
        }
    }
#undef PX
#undef PY
    golden_html_raw(h, "</svg>\n");
}

int golden_html_pareto_report(const json_t *pareto, const char *path, bool force,
                              golden_error *err)
{
    golden_html *h = golden_html_new("exp-gate pareto: layer sensitivity (section 16.2)");
    if (!h)
        return golden_fail_what(err, GOLDEN_ENOMEM, NULL, "out of memory");
    golden_html_raw(h, "<p>Single-group fallback experiments: quality recovered against capacity "
                       "cost (latency cost in each point's tooltip and the table). Filled points "
                       "are on the Pareto frontier (no other point is at least as good on quality, "
                       "capacity and latency and better on one).</p>\n<p>Recommended:");
    size_t i;
    json_t *r;
    json_array_foreach(json_object_get(pareto, "recommended"), i, r) {
        golden_html_raw(h, i ? ", " : " ");
        golden_html_text(h, json_string_value(r));
    }
    if (!json_array_size(json_object_get(pareto, "recommended")))
        golden_html_raw(h, " none");
    golden_html_raw(h, "</p>\n");
    picture(h, pareto);
    static const char *const cols[] = {
        "experiment_id|Experiment", "changed|Changed", "frontier|Frontier",
        "recommended|Recommended", "quality|Quality", "task_recovered|Task recovered",
        "top1_match|Top-1", "kl_mean|KL mean", "capacity_cost_bytes|Capacity (bytes)",
        "latency_cost_pct|Latency (%)", "latency_case|Worst case", "decision|Decision"};
    golden_html_json_table(h, "points", "points", cols, sizeof cols / sizeof *cols, false);
    golden_html_json(h, pareto);
    int rc = golden_html_write(h, path, force, err);
    golden_html_free(h);
    return rc;
}
