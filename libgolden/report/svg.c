/* Inline SVG charts for the HTML reports: line charts (linear or log axes), box rows, stacked
 * and plain bars, histograms and heatmaps, each one <svg class="chart"> with classes tests count. */
#include "golden/html.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report/html_int.h"

#define W 760.0
#define H 300.0
#define ML 70.0  /* left margin: y tick labels */
#define MR 210.0 /* right margin: legend */
#define MT 28.0
#define MB 42.0

double html_num(const json_t *obj, const char *key)
{
    const json_t *v = json_object_get(obj, key);
    return json_is_number(v) ? json_number_value(v) : NAN;
}

const char *html_str(const json_t *obj, const char *key)
{
    const char *s = json_string_value(json_object_get(obj, key));
    return s ? s : "";
}

/* A linear or log10 axis mapping [lo, hi] to pixels [p0, p1]. */
typedef struct {
    double lo, hi, p0, p1;
    bool log;
} axis;

static double ax_map(const axis *a, double v)
{
    double t = a->log ? log10(v) : v, lo = a->log ? log10(a->lo) : a->lo,
           hi = a->log ? log10(a->hi) : a->hi;
    if (hi <= lo)
        return (a->p0 + a->p1) / 2;
    return a->p0 + (t - lo) / (hi - lo) * (a->p1 - a->p0);
}

/* Widen a data range to round ends (decades on a log axis). */
static void ax_fit(axis *a)
{
    if (!(a->lo <= a->hi)) {
        a->lo = a->log ? 1e-3 : 0;
        a->hi = a->log ? 1 : 1;
    }
    if (a->log) {
        a->lo = pow(10, floor(log10(a->lo)));
        a->hi = pow(10, ceil(log10(a->hi)));
        if (a->hi <= a->lo)
            a->hi = a->lo * 10;
    } else if (a->hi == a->lo) {
        a->lo -= 0.5;
        a->hi += 0.5;
    }
}

static void chart_open(golden_html *h, const char *id, const char *title, double height)
{
    golden_html_raw(h, "<figure><svg class=\"chart\" data-chart=\"");
    golden_html_text(h, id);
    golden_html_printf(h, "\" viewBox=\"0 0 %.0f %.0f\" width=\"%.0f\" height=\"%.0f\" role=\"img\">",
                       W, height, W, height);
    golden_html_raw(h, "<title>");
    golden_html_text(h, title);
    golden_html_raw(h, "</title>\n<text x=\"4\" y=\"16\" font-weight=\"600\">");
    golden_html_text(h, title);
    golden_html_raw(h, "</text>\n");
}

static void chart_close(golden_html *h)
{
    golden_html_raw(h, "</svg></figure>\n");
}

static void fmt_tick(char *buf, size_t n, double v, bool log)
{
    if (log)
        snprintf(buf, n, "1e%d", (int)lround(log10(v)));
    else
        snprintf(buf, n, "%.4g", v);
}

/* Gridlines and labels of a y axis (and the x label). */
static void y_axis(golden_html *h, const axis *y, const char *label, double height)
{
    char t[32];
    int steps = y->log ? (int)lround(log10(y->hi) - log10(y->lo)) : 5;
    int every = steps > 8 ? (steps + 7) / 8 : 1;
    for (int i = 0; i <= steps; i += every) {
        double v = y->log ? y->lo * pow(10, i) : y->lo + (y->hi - y->lo) * i / steps;
        double py = ax_map(y, v);
        fmt_tick(t, sizeof t, v, y->log);
        golden_html_printf(h, "<line class=\"grid\" x1=\"%.0f\" x2=\"%.0f\" y1=\"%.1f\" y2=\"%.1f\"/>"
                              "<text x=\"%.0f\" y=\"%.1f\" text-anchor=\"end\">%s</text>\n",
                           ML, W - MR, py, py, ML - 4, py + 4, t);
    }
    golden_html_printf(h, "<line class=\"axis\" x1=\"%.0f\" x2=\"%.0f\" y1=\"%.0f\" y2=\"%.0f\"/>",
                       ML, ML, MT, height - MB);
    if (label) {
        golden_html_printf(h, "<text x=\"12\" y=\"%.0f\" transform=\"rotate(-90 12 %.0f)\" "
                              "text-anchor=\"middle\">", (height - MB + MT) / 2, (height - MB + MT) / 2);
        golden_html_text(h, label);
        golden_html_raw(h, "</text>\n");
    }
}

static void x_axis(golden_html *h, const axis *x, const char *label, double height, bool integer)
{
    char t[32];
    golden_html_printf(h, "<line class=\"axis\" x1=\"%.0f\" x2=\"%.0f\" y1=\"%.0f\" y2=\"%.0f\"/>",
                       x->p0, x->p1, height - MB, height - MB);
    int steps = x->log ? (int)lround(log10(x->hi) - log10(x->lo)) : 6;
    if (integer && !x->log && x->hi - x->lo < 6)
        steps = (int)(x->hi - x->lo);
    for (int i = 0; i <= steps && steps > 0; i++) {
        double v = x->log ? x->lo * pow(10, i) : x->lo + (x->hi - x->lo) * i / steps;
        if (integer && !x->log)
            v = round(v);
        fmt_tick(t, sizeof t, v, x->log);
        golden_html_printf(h, "<text x=\"%.1f\" y=\"%.0f\" text-anchor=\"middle\">%s</text>",
                           ax_map(x, v), height - MB + 14, t);
    }
    if (label) {
        golden_html_printf(h, "<text x=\"%.0f\" y=\"%.0f\" text-anchor=\"middle\">",
                           (x->p0 + x->p1) / 2, height - 6);
        golden_html_text(h, label);
        golden_html_raw(h, "</text>\n");
    }
}

static void legend(golden_html *h, size_t i, const char *name, bool dashed)
{
    double y = MT + 14 + 18.0 * (double)i;
    golden_html_printf(h, "<line class=\"series s%zu%s\" x1=\"%.0f\" x2=\"%.0f\" y1=\"%.0f\" "
                          "y2=\"%.0f\"/><text x=\"%.0f\" y=\"%.0f\">", i % 10,
                       dashed ? " dashed" : "", W - MR + 10, W - MR + 34, y, y, W - MR + 40, y + 4);
    golden_html_text(h, name);
    golden_html_raw(h, "</text>\n");
}

static double clampv(const golden_html_lines *c, double v)
{
    double fl = c->floor > 0 ? c->floor : 1e-12;
    return c->log_y && v < fl ? fl : v;
}

/* A point is drawn when both coordinates are finite (and x > 0 on a log x axis). */
static bool drawn_x(const golden_html_lines *c, double y, double x)
{
    return isfinite(y) && isfinite(x) && (!c->log_x || x > 0);
}

void golden_html_line_chart(golden_html *h, const golden_html_lines *c)
{
    axis x = {INFINITY, -INFINITY, ML, W - MR, c->log_x}, y = {INFINITY, -INFINITY, H - MB, MT, c->log_y};
    for (size_t s = 0; s < c->n_series; s++)
        for (size_t i = 0; i < c->series[s].n; i++) {
            double yv = c->series[s].y[i], xv = c->series[s].x ? c->series[s].x[i] : (double)i;
            if (!drawn_x(c, yv, xv))
                continue;
            yv = clampv(c, yv);
            x.lo = fmin(x.lo, xv), x.hi = fmax(x.hi, xv);
            y.lo = fmin(y.lo, yv), y.hi = fmax(y.hi, yv);
        }
    if (isfinite(c->mark_x))
        x.lo = fmin(x.lo, c->mark_x), x.hi = fmax(x.hi, c->mark_x);
    ax_fit(&x);
    ax_fit(&y);
    chart_open(h, c->id, c->title, H);
    y_axis(h, &y, c->y_label, H);
    x_axis(h, &x, c->x_label, H, true);
    for (size_t s = 0; s < c->n_series; s++) {
        const golden_html_series *se = &c->series[s];
        size_t npts = 0;
        for (size_t i = 0; i < se->n; i++)
            npts += drawn_x(c, se->y[i], se->x ? se->x[i] : (double)i);
        legend(h, s, se->name, se->dashed);
        if (!npts)
            continue;
        golden_html_printf(h, "<polyline class=\"series s%zu%s\" data-series=\"", s % 10,
                           se->dashed ? " dashed" : "");
        golden_html_text(h, se->name);
        golden_html_printf(h, "\" data-points=\"%zu\" points=\"", npts);
        for (size_t i = 0; i < se->n; i++) {
            double xv = se->x ? se->x[i] : (double)i;
            if (drawn_x(c, se->y[i], xv))
                golden_html_printf(h, "%.1f,%.1f ", ax_map(&x, xv), ax_map(&y, clampv(c, se->y[i])));
        }
        golden_html_raw(h, "\"/>\n");
        for (size_t i = 0; i < se->n; i++) {
            double xv = se->x ? se->x[i] : (double)i;
            if (drawn_x(c, se->y[i], xv))
                golden_html_printf(h, "<circle class=\"pt s%zu\" data-x=\"%.9g\" data-y=\"%.9g\" "
                                      "cx=\"%.1f\" cy=\"%.1f\" r=\"2.5\"><title>%g: %.6g</title></circle>",
                                   s % 10, xv, se->y[i], ax_map(&x, xv), ax_map(&y, clampv(c, se->y[i])),
                                   xv, se->y[i]);
        }
        golden_html_raw(h, "\n");
    }
    if (isfinite(c->mark_x)) {
        double px = ax_map(&x, c->mark_x);
        golden_html_printf(h, "<line class=\"mark\" data-x=\"%g\" x1=\"%.1f\" x2=\"%.1f\" y1=\"%.0f\" "
                              "y2=\"%.0f\"/><text x=\"%.1f\" y=\"%.0f\">", c->mark_x, px, px, MT,
                           H - MB, px + 3, MT + 10);
        golden_html_text(h, c->mark_label ? c->mark_label : "");
        golden_html_raw(h, "</text>\n");
    }
    chart_close(h);
}

void golden_html_box_chart(golden_html *h, const char *id, const char *title,
                           const char *x_label, const golden_html_box *rows, size_t n)
{
    double rowh = 22, height = MT + MB + rowh * (double)(n ? n : 1);
    axis x = {INFINITY, -INFINITY, ML + 120, W - 40, false};
    for (size_t i = 0; i < n; i++) {
        double v[5] = {rows[i].lo, rows[i].hi, rows[i].median, rows[i].w1, rows[i].w2};
        for (int k = 0; k < 5; k++)
            if (isfinite(v[k]))
                x.lo = fmin(x.lo, v[k]), x.hi = fmax(x.hi, v[k]);
    }
    if (x.lo <= x.hi) {
        double pad = (x.hi - x.lo) * 0.05 + 1e-12;
        x.lo -= pad, x.hi += pad;
    }
    ax_fit(&x);
    chart_open(h, id, title, height);
    for (size_t i = 0; i < n; i++) {
        const golden_html_box *b = &rows[i];
        double y = MT + rowh * (double)i, cy = y + rowh / 2;
        golden_html_printf(h, "<g class=\"boxrow\"><text x=\"4\" y=\"%.1f\">", cy + 4);
        golden_html_text(h, b->label);
        golden_html_raw(h, "</text>");
        if (isfinite(b->lo) && isfinite(b->hi)) {
            golden_html_printf(h, "<rect class=\"box %s\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" "
                                  "height=\"%.1f\"><title>CI95 of the median: %.6g .. %.6g</title></rect>",
                               b->cls ? b->cls : "", ax_map(&x, b->lo), y + 4,
                               fmax(1, ax_map(&x, b->hi) - ax_map(&x, b->lo)), rowh - 8, b->lo, b->hi);
        }
        double w[2] = {b->w1, b->w2};
        for (int k = 0; k < 2; k++)
            if (isfinite(w[k]) && isfinite(b->median))
                golden_html_printf(h, "<line class=\"whisk\" x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" "
                                      "y2=\"%.1f\"/><line class=\"whisk\" x1=\"%.1f\" x2=\"%.1f\" "
                                      "y1=\"%.1f\" y2=\"%.1f\"><title>%s %.6g</title></line>",
                                   ax_map(&x, b->median), ax_map(&x, w[k]), cy, cy, ax_map(&x, w[k]),
                                   ax_map(&x, w[k]), cy - 5, cy + 5, k ? "p99" : "p90", w[k]);
        if (isfinite(b->median))
            golden_html_printf(h, "<line class=\"tick median\" data-v=\"%.9g\" x1=\"%.1f\" x2=\"%.1f\" "
                                  "y1=\"%.1f\" y2=\"%.1f\"><title>median %.6g</title></line>",
                               b->median, ax_map(&x, b->median), ax_map(&x, b->median), y + 2,
                               y + rowh - 2, b->median);
        golden_html_raw(h, "</g>\n");
    }
    x_axis(h, &x, x_label, height, false);
    chart_close(h);
}

void golden_html_stacked_bars(golden_html *h, const char *id, const char *title,
                              const char *x_label, const char *const *bars, size_t n_bars,
                              const char *const *parts, size_t n_parts, const double *values)
{
    double rowh = 22, height = MT + MB + rowh * (double)(n_bars ? n_bars : 1);
    height = fmax(height, MT + MB + 18.0 * (double)n_parts);
    axis x = {0, 0, ML + 120, W - MR, false};
    for (size_t i = 0; i < n_bars; i++) {
        double sum = 0;
        for (size_t k = 0; k < n_parts; k++)
            if (isfinite(values[i * n_parts + k]) && values[i * n_parts + k] > 0)
                sum += values[i * n_parts + k];
        x.hi = fmax(x.hi, sum);
    }
    ax_fit(&x);
    chart_open(h, id, title, height);
    for (size_t k = 0; k < n_parts; k++) {
        double ly = MT + 14 + 18.0 * (double)k;
        golden_html_printf(h, "<rect class=\"s%zu\" x=\"%.0f\" y=\"%.0f\" width=\"12\" height=\"10\"/>"
                              "<text x=\"%.0f\" y=\"%.0f\">", k % 10, W - MR + 10, ly - 8, W - MR + 28, ly + 2);
        golden_html_text(h, parts[k]);
        golden_html_raw(h, "</text>\n");
    }
    for (size_t i = 0; i < n_bars; i++) {
        double y = MT + rowh * (double)i, at = 0;
        golden_html_printf(h, "<g class=\"bar\"><text x=\"4\" y=\"%.1f\">", y + rowh / 2 + 4);
        golden_html_text(h, bars[i]);
        golden_html_raw(h, "</text>");
        for (size_t k = 0; k < n_parts; k++) {
            double v = values[i * n_parts + k];
            if (!isfinite(v) || v <= 0)
                continue;
            golden_html_printf(h, "<rect class=\"seg s%zu\" data-part=\"", k % 10);
            golden_html_text(h, parts[k]);
            golden_html_printf(h, "\" data-v=\"%.9g\" x=\"%.2f\" y=\"%.1f\" width=\"%.2f\" height=\"%.1f\">"
                                  "<title>", v, ax_map(&x, at), y + 3, ax_map(&x, at + v) - ax_map(&x, at),
                               rowh - 6);
            golden_html_text(h, parts[k]);
            golden_html_printf(h, ": %.6g</title></rect>", v);
            at += v;
        }
        golden_html_raw(h, "</g>\n");
    }
    x_axis(h, &x, x_label, height, false);
    chart_close(h);
}

void golden_html_histogram(golden_html *h, const char *id, const char *title,
                           const char *x_label, const double *values, size_t n, size_t n_bins,
                           bool log_x)
{
    axis x = {INFINITY, -INFINITY, ML, W - MR, log_x};
    for (size_t i = 0; i < n; i++)
        if (isfinite(values[i]) && (!log_x || values[i] > 0))
            x.lo = fmin(x.lo, values[i]), x.hi = fmax(x.hi, values[i]);
    ax_fit(&x);
    if (n_bins == 0 || n_bins > 1000)
        n_bins = 40;
    size_t counts[1000] = {0}, top = 1;
    double lo = log_x ? log10(x.lo) : x.lo, hi = log_x ? log10(x.hi) : x.hi;
    for (size_t i = 0; i < n; i++) {
        if (!isfinite(values[i]) || (log_x && values[i] <= 0))
            continue;
        double t = ((log_x ? log10(values[i]) : values[i]) - lo) / (hi - lo);
        size_t b = t >= 1 ? n_bins - 1 : (size_t)(t * (double)n_bins);
        counts[b]++;
    }
    for (size_t b = 0; b < n_bins; b++)
        top = counts[b] > top ? counts[b] : top;
    axis y = {0, (double)top, H - MB, MT, false};
    ax_fit(&y);
    chart_open(h, id, title, H);
    y_axis(h, &y, "count", H);
    double bw = (W - MR - ML) / (double)n_bins;
    for (size_t b = 0; b < n_bins; b++) {
        if (!counts[b])
            continue;
        double py = ax_map(&y, (double)counts[b]);
        double b0 = lo + (hi - lo) * (double)b / (double)n_bins, b1 = b0 + (hi - lo) / (double)n_bins;
        golden_html_printf(h, "<rect class=\"bin\" data-count=\"%zu\" x=\"%.2f\" y=\"%.1f\" "
                              "width=\"%.2f\" height=\"%.1f\"><title>%.4g .. %.4g: %zu</title></rect>\n",
                           counts[b], ML + bw * (double)b + 0.5, py, bw - 1, H - MB - py,
                           log_x ? pow(10, b0) : b0, log_x ? pow(10, b1) : b1, counts[b]);
    }
    x_axis(h, &x, x_label, H, false);
    chart_close(h);
}

void golden_html_bin_chart(golden_html *h, const golden_html_bins *c)
{
    unsigned long long top = 1;
    for (size_t i = 0; i < c->n; i++)
        top = c->counts[i] > top ? c->counts[i] : top;
    axis y = {c->log_y ? 0.5 : 0, (double)top, H - MB, MT, c->log_y};
    ax_fit(&y);
    chart_open(h, c->id, c->title, H);
    y_axis(h, &y, c->log_y ? "count (log)" : "count", H);
    double n = c->n ? (double)c->n : 1, bw = (W - MR - ML) / n;
    for (size_t i = 0; i < c->n; i++) {
        double px = ML + bw * (double)i;
        if (c->labels && c->labels[i]) {
            golden_html_printf(h, "<text x=\"%.1f\" y=\"%.0f\" text-anchor=\"middle\">",
                               px + bw / 2, H - MB + 14);
            golden_html_text(h, c->labels[i]);
            golden_html_raw(h, "</text>");
        }
        if (!c->counts[i])
            continue;
        double py = ax_map(&y, (double)c->counts[i]);
        golden_html_raw(h, "<rect class=\"bin\" data-bin=\"");
        golden_html_text(h, c->keys[i]);
        golden_html_printf(h, "\" data-count=\"%llu\" x=\"%.2f\" y=\"%.1f\" width=\"%.2f\" "
                              "height=\"%.1f\"><title>", c->counts[i], px + 0.5, py,
                           bw > 1.5 ? bw - 1 : bw, H - MB - py);
        golden_html_text(h, c->keys[i]);
        golden_html_printf(h, ": %llu</title></rect>\n", c->counts[i]);
    }
    golden_html_printf(h, "<line class=\"axis\" x1=\"%.0f\" x2=\"%.0f\" y1=\"%.0f\" y2=\"%.0f\"/>",
                       ML, W - MR, H - MB, H - MB);
    if (isfinite(c->mark_at)) {
        double mx = ML + bw * c->mark_at;
        golden_html_printf(h, "<line class=\"mark\" x1=\"%.1f\" x2=\"%.1f\" y1=\"%.0f\" "
                              "y2=\"%.0f\"/><text x=\"%.1f\" y=\"%.0f\">", mx, mx, MT, H - MB,
                           mx + 3, MT + 10);
        golden_html_text(h, c->mark_label ? c->mark_label : "");
        golden_html_raw(h, "</text>\n");
    }
    if (c->x_label) {
        golden_html_printf(h, "<text x=\"%.0f\" y=\"%.0f\" text-anchor=\"middle\">",
                           (ML + W - MR) / 2, H - 6);
        golden_html_text(h, c->x_label);
        golden_html_raw(h, "</text>\n");
    }
    chart_close(h);
}

/* Cells coloured on one scale: sequential (low blue to high red) over [lo, hi], or diverging
 * (blue below 0, red above, pale at 0) over [-m, m] with m the largest magnitude. */
/* Over this many cells a heatmap carries no <title> a cell (two DOM nodes each): one hover line
 * under the map names the cell instead (the page's script reads data-rows / data-cols). */
#define HEAT_TITLES_MAX 1024

/* labels as a JSON array in an attribute value (escaped) */
static void labels_attr(golden_html *h, const char *name, const char *const *labels, size_t n)
{
    json_t *a = json_array();
    for (size_t i = 0; a && i < n; i++)
        if (json_array_append_new(a, json_string(labels[i])) != 0)
            h->oom = true;
    char *text = a ? json_dumps(a, JSON_COMPACT) : NULL;
    if (!text)
        h->oom = true;
    golden_html_printf(h, " %s=\"", name);
    golden_html_text(h, text ? text : "[]");
    golden_html_raw(h, "\"");
    free(text);
    json_decref(a);
}

static void heatmap(golden_html *h, const char *id, const char *title, const char *const *row_labels,
                    size_t rows, const char *const *col_labels, size_t cols, const double *values,
                    bool diverging)
{
    double lo = INFINITY, hi = -INFINITY;
    for (size_t i = 0; i < rows * cols; i++)
        if (isfinite(values[i]))
            lo = fmin(lo, values[i]), hi = fmax(hi, values[i]);
    double mag = fmax(fabs(lo), fabs(hi));
    double cw = cols ? (W - ML - 20) / (double)cols : 1, ch = 16;
    double height = MT + MB + ch * (double)rows;
    bool titles = rows * cols <= HEAT_TITLES_MAX;
    chart_open(h, id, title, height);
    if (!titles) {
        golden_html_raw(h, "<g class=\"heat\"");
        labels_attr(h, "data-rows", row_labels, rows);
        labels_attr(h, "data-cols", col_labels, cols);
        golden_html_raw(h, ">\n");
    }
    for (size_t r = 0; r < rows; r++) {
        golden_html_printf(h, "<text x=\"4\" y=\"%.1f\">", MT + ch * (double)r + 12);
        golden_html_text(h, row_labels[r]);
        golden_html_raw(h, "</text>");
        for (size_t c = 0; c < cols; c++) {
            double v = values[r * cols + c], hue, light;
            if (!isfinite(v))
                continue;
            if (diverging) {
                double t = mag > 0 ? v / mag : 0;
                hue = t < 0 ? 220 : 5;
                light = 96 - 50 * fabs(t);
            } else {
                double t = hi > lo ? (v - lo) / (hi - lo) : 0.5;
                hue = 220 - 220 * t;
                light = 35 + 30 * (1 - t);
            }
            golden_html_printf(h, "<rect class=\"cell\" data-r=\"%zu\" data-c=\"%zu\" data-v=\"%.9g\" "
                                  "x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" "
                                  "fill=\"hsl(%.0f,70%%,%.0f%%)\"%s",
                               r, c, v, ML + cw * (double)c, MT + ch * (double)r, fmax(cw - 1, 0.5),
                               ch - 1, hue, light, titles ? "><title>" : "/>");
            if (!titles)
                continue;
            golden_html_text(h, row_labels[r]);
            golden_html_raw(h, " / ");
            golden_html_text(h, col_labels[c]);
            golden_html_printf(h, ": %.6g</title></rect>", v);
        }
        golden_html_raw(h, "\n");
    }
    if (!titles)
        golden_html_printf(h, "</g><text class=\"hover noprint\" x=\"%.0f\" y=\"%.0f\" "
                              "text-anchor=\"end\">point at a cell for its value</text>\n",
                           W - 20, height - MB + 16);
    if (lo <= hi)
        golden_html_printf(h, "<text class=\"scale\" x=\"%.0f\" y=\"%.0f\">colour: %s %.4g, %s %.4g%s</text>\n",
                           ML, height - MB + 16, diverging ? "blue" : "blue (low)", diverging ? -mag : lo,
                           diverging ? "red" : "red (high)", diverging ? mag : hi,
                           diverging ? ", pale = 0" : "");
    chart_close(h);
}

void golden_html_heatmap(golden_html *h, const char *id, const char *title,
                         const char *const *row_labels, size_t rows,
                         const char *const *col_labels, size_t cols, const double *values)
{
    heatmap(h, id, title, row_labels, rows, col_labels, cols, values, false);
}

void golden_html_diff_heatmap(golden_html *h, const char *id, const char *title,
                              const char *const *row_labels, size_t rows,
                              const char *const *col_labels, size_t cols, const double *values)
{
    heatmap(h, id, title, row_labels, rows, col_labels, cols, values, true);
}

void golden_html_bar_chart(golden_html *h, const char *id, const char *title, const char *x_label,
                           const char *y_label, const char *const *labels, size_t n,
                           const double *values)
{
    axis y = {0, 0, H - MB, MT, false};
    for (size_t i = 0; i < n; i++)
        if (isfinite(values[i]))
            y.hi = fmax(y.hi, values[i]);
    if (!(y.hi > 0))
        y.hi = 1;
    ax_fit(&y);
    chart_open(h, id, title, H);
    y_axis(h, &y, y_label, H);
    double bw = n ? (W - MR - ML) / (double)n : 1;
    for (size_t i = 0; i < n; i++) {
        double v = isfinite(values[i]) && values[i] > 0 ? values[i] : 0, py = ax_map(&y, v);
        golden_html_raw(h, "<rect class=\"col\" data-label=\"");
        golden_html_text(h, labels[i]);
        golden_html_printf(h, "\" data-v=\"%.9g\" x=\"%.2f\" y=\"%.1f\" width=\"%.2f\" height=\"%.1f\">"
                              "<title>", v, ML + bw * (double)i + 2, py, fmax(bw - 4, 1), H - MB - py);
        golden_html_text(h, labels[i]);
        golden_html_printf(h, ": %.6g</title></rect><text x=\"%.1f\" y=\"%.0f\" text-anchor=\"middle\">",
                           v, ML + bw * ((double)i + 0.5), H - MB + 14);
        golden_html_text(h, labels[i]);
        golden_html_raw(h, "</text>\n");
    }
    golden_html_printf(h, "<line class=\"axis\" x1=\"%.0f\" x2=\"%.0f\" y1=\"%.0f\" y2=\"%.0f\"/>",
                       ML, W - MR, H - MB, H - MB);
    if (x_label) {
        golden_html_printf(h, "<text x=\"%.0f\" y=\"%.0f\" text-anchor=\"middle\">", (ML + W - MR) / 2, H - 6);
        golden_html_text(h, x_label);
        golden_html_raw(h, "</text>\n");
    }
    chart_close(h);
}

void golden_html_scatter(golden_html *h, const char *id, const char *title, const char *x_label,
                         const char *y_label, const double *xs, const double *ys,
                         const bool *alt, size_t n, bool log_x, double mark_x)
{
    axis x = {INFINITY, -INFINITY, ML, W - MR, log_x}, y = {INFINITY, -INFINITY, H - MB, MT, false};
    for (size_t i = 0; i < n; i++)
        if (isfinite(xs[i]) && isfinite(ys[i]) && (!log_x || xs[i] > 0)) {
            x.lo = fmin(x.lo, xs[i]), x.hi = fmax(x.hi, xs[i]);
            y.lo = fmin(y.lo, ys[i]), y.hi = fmax(y.hi, ys[i]);
        }
    if (isfinite(mark_x) && (!log_x || mark_x > 0))
        x.lo = fmin(x.lo, mark_x), x.hi = fmax(x.hi, mark_x);
    ax_fit(&x);
    ax_fit(&y);
    chart_open(h, id, title, H);
    y_axis(h, &y, y_label, H);
    x_axis(h, &x, x_label, H, false);
    for (size_t i = 0; i < n; i++)
        if (isfinite(xs[i]) && isfinite(ys[i]) && (!log_x || xs[i] > 0))
            golden_html_printf(h, "<circle class=\"flip%s\" cx=\"%.1f\" cy=\"%.1f\" r=\"3.5\">"
                                  "<title>row %g: margin %.6g%s</title></circle>\n",
                               alt[i] ? " near" : "", ax_map(&x, xs[i]), ax_map(&y, ys[i]), ys[i],
                               xs[i], alt[i] ? " (near tie)" : "");
    if (isfinite(mark_x) && (!log_x || mark_x > 0)) {
        double px = ax_map(&x, mark_x);
        golden_html_printf(h, "<line class=\"mark\" data-x=\"%g\" x1=\"%.1f\" x2=\"%.1f\" y1=\"%.0f\" "
                              "y2=\"%.0f\"/><text x=\"%.1f\" y=\"%.0f\">near-tie margin</text>\n",
                           mark_x, px, px, MT, H - MB, px + 3, MT + 10);
    }
    chart_close(h);
}
