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

/* A linear or log10 axis mapping [lo, hi] to pixels [p0, p1]. A linear axis carries its tick
 * step (1, 2, 2.5 or 5 times a power of ten; whole for an integer axis) and round ends. */
typedef struct {
    double lo, hi, p0, p1;
    bool log;
    bool integer; /* ticks at whole numbers only (layer indices, runs) */
    double step;
} axis;

static double ax_map(const axis *a, double v)
{
    double t = a->log ? log10(v) : v, lo = a->log ? log10(a->lo) : a->lo,
           hi = a->log ? log10(a->hi) : a->hi;
    if (hi <= lo)
        return (a->p0 + a->p1) / 2;
    return a->p0 + (t - lo) / (hi - lo) * (a->p1 - a->p0);
}

/* The round step that splits range into about `target` parts (Heckbert's nice numbers). */
static double nice_step(double range, int target, bool integer)
{
    double raw = range / target;
    if (!(raw > 0) || !isfinite(raw))
        return 1;
    double mag = pow(10, floor(log10(raw))), f = raw / mag;
    double nf = f <= 1 ? 1 : f <= 2 ? 2 : (f <= 2.5 && !(integer && mag < 10)) ? 2.5 : f <= 5 ? 5 : 10;
    double step = nf * mag;
    return integer && step < 1 ? 1 : step;
}

/* Widen a data range to round ends: decades on a log axis, multiples of the tick step on a
 * linear one, so that both ends carry a labelled tick. */
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
        return;
    }
    if (a->hi == a->lo) {
        double d = a->integer ? 1 : (a->lo != 0 ? fabs(a->lo) * 0.1 : 0.5);
        a->lo -= d;
        a->hi += d;
    }
    a->step = nice_step(a->hi - a->lo, 5, a->integer);
    a->lo = floor(a->lo / a->step + 1e-9) * a->step;
    a->hi = ceil(a->hi / a->step - 1e-9) * a->step;
}

/* Tick k of a fitted axis (k from 0), false past its end. Linear ticks are whole multiples of
 * the step (no accumulated rounding: 0.1 * 3 prints 0.3); log ticks are the decades. */
static bool ax_tick(const axis *a, int k, double *v)
{
    if (a->log) {
        int decades = (int)lround(log10(a->hi) - log10(a->lo));
        if (k > decades)
            return false;
        *v = a->lo * pow(10, k);
        return true;
    }
    double k0 = round(a->lo / a->step), t = (k0 + k) * a->step;
    if (t > a->hi + a->step * 1e-6)
        return false;
    *v = fabs(t) < a->step * 1e-9 ? 0 : t;
    return true;
}

/* On a log axis over many decades every decade keeps its gridline, one in `every` its label. */
static int ax_label_every(const axis *a)
{
    int n = a->log ? (int)lround(log10(a->hi) - log10(a->lo)) : 0;
    return n > 8 ? (n + 7) / 8 : 1;
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
        snprintf(buf, n, "%.6g", v);
}

/* Gridlines and labels of a y axis (and the axis label). */
static void y_axis(golden_html *h, const axis *y, const char *label, double height)
{
    char t[32];
    int every = ax_label_every(y);
    double v;
    for (int k = 0; ax_tick(y, k, &v); k++) {
        double py = ax_map(y, v);
        golden_html_printf(h, "<line class=\"grid\" x1=\"%.0f\" x2=\"%.0f\" y1=\"%.1f\" y2=\"%.1f\"/>",
                           ML, W - MR, py, py);
        if (k % every == 0) {
            fmt_tick(t, sizeof t, v, y->log);
            golden_html_printf(h, "<text x=\"%.0f\" y=\"%.1f\" text-anchor=\"end\">%s</text>", ML - 4,
                               py + 4, t);
        }
        golden_html_raw(h, "\n");
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

/* The x axis line, a tick mark and label at every round value, and the axis label. */
static void x_axis(golden_html *h, const axis *x, const char *label, double height)
{
    char t[32];
    golden_html_printf(h, "<line class=\"axis\" x1=\"%.0f\" x2=\"%.0f\" y1=\"%.0f\" y2=\"%.0f\"/>",
                       x->p0, x->p1, height - MB, height - MB);
    int every = ax_label_every(x);
    double v;
    for (int k = 0; ax_tick(x, k, &v); k++) {
        double px = ax_map(x, v);
        golden_html_printf(h, "<line class=\"axis xtick\" x1=\"%.1f\" x2=\"%.1f\" y1=\"%.0f\" "
                              "y2=\"%.0f\"/>", px, px, height - MB, height - MB + 4);
        if (k % every == 0) {
            fmt_tick(t, sizeof t, v, x->log);
            golden_html_printf(h, "<text x=\"%.1f\" y=\"%.0f\" text-anchor=\"middle\">%s</text>", px,
                               height - MB + 16, t);
        }
    }
    if (label) {
        golden_html_printf(h, "<text x=\"%.0f\" y=\"%.0f\" text-anchor=\"middle\">",
                           (x->p0 + x->p1) / 2, height - 6);
        golden_html_text(h, label);
        golden_html_raw(h, "</text>\n");
    }
}

/* A vertical mark's caption: right of the line, or left of it when it would run into the
 * legend column (about 6 px a character at the charts' font size). */
static void mark_caption(golden_html *h, double px, const char *label)
{
    size_t n = label ? strlen(label) : 0;
    bool left = px + 3 + 6.0 * (double)n > W - MR;
    golden_html_printf(h, "<text x=\"%.1f\" y=\"%.0f\"%s>", left ? px - 3 : px + 3, MT + 10,
                       left ? " text-anchor=\"end\"" : "");
    golden_html_text(h, label ? label : "");
    golden_html_raw(h, "</text>\n");
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
    axis x = {INFINITY, -INFINITY, ML, W - MR, c->log_x, true, 1},
         y = {INFINITY, -INFINITY, H - MB, MT, c->log_y, false, 1};
    for (size_t s = 0; s < c->n_series; s++)
        for (size_t i = 0; i < c->series[s].n; i++) {
            double yv = c->series[s].y[i], xv = c->series[s].x ? c->series[s].x[i] : (double)i;
            if (!drawn_x(c, yv, xv))
                continue;
            if (xv != floor(xv))
                x.integer = false; /* ticks at whole numbers only when every x is one */
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
    x_axis(h, &x, c->x_label, H);
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
                              "y2=\"%.0f\"/>", c->mark_x, px, px, MT, H - MB);
        mark_caption(h, px, c->mark_label);
    }
    chart_close(h);
}

void golden_html_box_chart(golden_html *h, const char *id, const char *title,
                           const char *x_label, const golden_html_box *rows, size_t n)
{
    double rowh = 22, height = MT + MB + rowh * (double)(n ? n : 1);
    axis x = {INFINITY, -INFINITY, ML + 120, W - 40, false, false, 1};
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
    x_axis(h, &x, x_label, height);
    chart_close(h);
}

void golden_html_stacked_bars(golden_html *h, const char *id, const char *title,
                              const char *x_label, const char *const *bars, size_t n_bars,
                              const char *const *parts, size_t n_parts, const double *values)
{
    double rowh = 22, height = MT + MB + rowh * (double)(n_bars ? n_bars : 1);
    height = fmax(height, MT + MB + 18.0 * (double)n_parts);
    axis x = {0, 0, ML + 120, W - MR, false, false, 1};
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
    x_axis(h, &x, x_label, height);
    chart_close(h);
}

void golden_html_histogram(golden_html *h, const char *id, const char *title,
                           const char *x_label, const double *values, size_t n, size_t n_bins,
                           bool log_x)
{
    axis x = {INFINITY, -INFINITY, ML, W - MR, log_x, false, 1};
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
    axis y = {0, (double)top, H - MB, MT, false, true, 1};
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
    x_axis(h, &x, x_label, H);
    chart_close(h);
}

void golden_html_bin_chart(golden_html *h, const golden_html_bins *c)
{
    unsigned long long top = 1;
    for (size_t i = 0; i < c->n; i++)
        top = c->counts[i] > top ? c->counts[i] : top;
    axis y = {c->log_y ? 0.5 : 0, (double)top, H - MB, MT, c->log_y, true, 1};
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
                              "y2=\"%.0f\"/>", mx, mx, MT, H - MB);
        mark_caption(h, mx, c->mark_label);
    }
    if (c->x_label) {
        golden_html_printf(h, "<text x=\"%.0f\" y=\"%.0f\" text-anchor=\"middle\">",
                           (ML + W - MR) / 2, H - 6);
        golden_html_text(h, c->x_label);
        golden_html_raw(h, "</text>\n");
    }
    chart_close(h);
}

/* Cells coloured on one perceptual scale: sequential viridis (dark purple low, yellow high) over
 * [lo, hi], or diverging (blue below 0, near-white at 0, red above; ColorBrewer's RdBu ends) over
 * [-m, m] with m the largest magnitude. Both are read in lightness order by every viewer,
 * colour-blind ones included, unlike a hue rainbow. */
static const unsigned char VIRIDIS[9][3] = {
    {68, 1, 84}, {72, 40, 120}, {62, 74, 137}, {49, 104, 142}, {38, 130, 142},
    {31, 158, 137}, {53, 183, 121}, {110, 206, 88}, {253, 231, 37}};
static const unsigned char RDBU[3][3] = {{33, 102, 172}, {247, 247, 247}, {178, 24, 43}};

/* t in [0, 1] along a table of n anchor colours, linear between anchors. */
static void ramp(const unsigned char (*tab)[3], int n, double t, int rgb[3])
{
    t = t < 0 ? 0 : t > 1 ? 1 : t;
    double at = t * (n - 1);
    int i = (int)floor(at);
    if (i >= n - 1)
        i = n - 2;
    double f = at - i;
    for (int k = 0; k < 3; k++)
        rgb[k] = (int)lround(tab[i][k] + (tab[i + 1][k] - tab[i][k]) * f);
}

static void cell_colour(double v, double lo, double hi, double mag, bool diverging, int rgb[3])
{
    if (diverging)
        ramp(RDBU, 3, mag > 0 ? 0.5 + 0.5 * v / mag : 0.5, rgb);
    else
        ramp(VIRIDIS, 9, hi > lo ? (v - lo) / (hi - lo) : 0.5, rgb);
}

/* The colour bar under a heatmap: 24 steps from one end of the scale to the other, the end
 * values (and 0 of a diverging scale) written beside it. */
static void colour_bar(golden_html *h, double y, double lo, double hi, double mag, bool diverging)
{
    double x0 = ML, bw = 240, a = diverging ? -mag : lo, b = diverging ? mag : hi;
    golden_html_printf(h, "<g class=\"scale\" data-lo=\"%.9g\" data-hi=\"%.9g\">", a, b);
    for (int i = 0; i < 24; i++) {
        int rgb[3];
        cell_colour(a + (b - a) * (i + 0.5) / 24, lo, hi, mag, diverging, rgb);
        golden_html_printf(h, "<rect x=\"%.1f\" y=\"%.0f\" width=\"%.1f\" height=\"10\" "
                              "fill=\"rgb(%d,%d,%d)\"/>", x0 + bw * i / 24, y, bw / 24 + 0.3, rgb[0], rgb[1],
                           rgb[2]);
    }
    golden_html_printf(h, "<text x=\"%.0f\" y=\"%.0f\" text-anchor=\"end\">%.4g</text>"
                          "<text x=\"%.0f\" y=\"%.0f\">%.4g%s</text>", x0 - 4, y + 9, a, x0 + bw + 4,
                       y + 9, b, diverging ? " (0 in the middle, near-white)" : "");
    golden_html_raw(h, "</g>\n");
}

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
    /* column labels (expert numbers) under the cells: a prefix all share up to a space ("expert
     * 0", "expert 1", ...) is said once, left of them; one label in `every` where they would
     * touch (about 6 px a character) */
    size_t cut = 0, longest = 1;
    if (cols > 1) {
        const char *sp = strrchr(col_labels[0], ' ');
        cut = sp ? (size_t)(sp - col_labels[0]) + 1 : 0;
        for (size_t c = 1; c < cols && cut; c++)
            if (strncmp(col_labels[c], col_labels[0], cut) != 0 || !col_labels[c][cut])
                cut = 0;
    }
    for (size_t c = 0; c < cols; c++)
        longest = strlen(col_labels[c]) - cut > longest ? strlen(col_labels[c]) - cut : longest;
    size_t every = (size_t)ceil((6.0 * (double)longest + 4) / cw);
    every = every ? every : 1;
    double grid_bottom = MT + ch * (double)rows, height = grid_bottom + 14 + MB;
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
            double v = values[r * cols + c];
            if (!isfinite(v))
                continue;
            int rgb[3];
            cell_colour(v, lo, hi, mag, diverging, rgb);
            golden_html_printf(h, "<rect class=\"cell\" data-r=\"%zu\" data-c=\"%zu\" data-v=\"%.9g\" "
                                  "x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" "
                                  "fill=\"rgb(%d,%d,%d)\"%s",
                               r, c, v, ML + cw * (double)c, MT + ch * (double)r, fmax(cw - 1, 0.5),
                               ch - 1, rgb[0], rgb[1], rgb[2], titles ? "><title>" : "/>");
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
        golden_html_raw(h, "</g>");
    for (size_t c = 0; c < cols; c += every) {
        golden_html_printf(h, "<text class=\"collabel\" x=\"%.1f\" y=\"%.0f\" text-anchor=\"middle\">",
                           ML + cw * ((double)c + 0.5), grid_bottom + 11);
        golden_html_text(h, col_labels[c] + cut);
        golden_html_raw(h, "</text>");
    }
    if (cut) {
        char prefix[64];
        snprintf(prefix, sizeof prefix, "%.*s", (int)(cut - 1 < 63 ? cut - 1 : 63), col_labels[0]);
        golden_html_printf(h, "<text x=\"4\" y=\"%.0f\">", grid_bottom + 11);
        golden_html_text(h, prefix);
        golden_html_raw(h, "</text>");
    }
    golden_html_raw(h, "\n");
    if (!titles)
        golden_html_printf(h, "<text class=\"hover noprint\" x=\"%.0f\" y=\"%.0f\" "
                              "text-anchor=\"end\">point at a cell for its value</text>\n",
                           W - 20, grid_bottom + 34);
    if (lo <= hi)
        colour_bar(h, grid_bottom + 24, lo, hi, mag, diverging);
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
    axis y = {0, 0, H - MB, MT, false, false, 1};
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
    axis x = {INFINITY, -INFINITY, ML, W - MR, log_x, false, 1},
         y = {INFINITY, -INFINITY, H - MB, MT, false, false, 1};
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
    x_axis(h, &x, x_label, H);
    for (size_t i = 0; i < n; i++)
        if (isfinite(xs[i]) && isfinite(ys[i]) && (!log_x || xs[i] > 0))
            golden_html_printf(h, "<circle class=\"flip%s\" cx=\"%.1f\" cy=\"%.1f\" r=\"3.5\">"
                                  "<title>row %g: margin %.6g%s</title></circle>\n",
                               alt[i] ? " near" : "", ax_map(&x, xs[i]), ax_map(&y, ys[i]), ys[i],
                               xs[i], alt[i] ? " (near tie)" : "");
    if (isfinite(mark_x) && (!log_x || mark_x > 0)) {
        double px = ax_map(&x, mark_x);
        golden_html_printf(h, "<line class=\"mark\" data-x=\"%g\" x1=\"%.1f\" x2=\"%.1f\" y1=\"%.0f\" "
                              "y2=\"%.0f\"/>", mark_x, px, px, MT, H - MB);
        mark_caption(h, px, "near-tie margin");
    }
    chart_close(h);
}
