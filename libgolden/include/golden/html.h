/* Self-contained HTML reports: a page writer (escaping, one page shell with inline CSS and JS,
 * the report's JSON embedded) and inline SVG charts, plus the reports of the tools built on it. */
#ifndef GOLDEN_HTML_H
#define GOLDEN_HTML_H
#include "golden/api.h"
#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#include "golden/dag.h"
#include "golden/error.h"

/* A page being built in memory. Every call appends; an allocation failure is sticky and
 * reported once, by golden_html_write. No call reads a file or the network. */
typedef struct golden_html golden_html;

/* Start a page: doctype, <head> with the one stylesheet (light, dark via prefers-color-scheme,
 * print) and the error hook (window.onerror writes each error into <body data-js-errors>),
 * <body>, and an <h1> with title. NULL when out of memory. */
GOLDEN_API golden_html *golden_html_new(const char *title);
GOLDEN_API void golden_html_free(golden_html *h);

/* Append markup as is (the caller's own tags). */
GOLDEN_API void golden_html_raw(golden_html *h, const char *markup);
/* Append printf output as is: only for numbers and the caller's own tags. */
GOLDEN_API void golden_html_printf(golden_html *h, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Append text escaped for element content and attribute values (& < > " '). */
GOLDEN_API void golden_html_text(golden_html *h, const char *text);

/* Embed doc as <script id="report-json">: compact JSON (type application/json, every '<'
 * written as \u003c so no string can close the block), or, when the compact text is over
 * GOLDEN_HTML_DEFLATE_OVER bytes, zlib-deflated and base64-encoded (type
 * application/octet-stream, data-encoding="deflate-base64"), which the page's script inflates
 * with the browser's DecompressionStream. Also a link to download the JSON. */
#define GOLDEN_HTML_DEFLATE_OVER (256u * 1024u)
GOLDEN_API void golden_html_json(golden_html *h, const json_t *doc);

/* Finish the page (the sort/table script, which sets <body data-ready="1"> when it ran
 * without throwing) and write it to path under the atomic output rules (golden/report.h). */
GOLDEN_API int golden_html_write(golden_html *h, const char *path, bool force, golden_error *err);

/* ---- charts (report/svg.c); every chart is one <svg class="chart" data-chart=ID> ---- */

/* One line of a line chart: y[i] at x[i] (x NULL: x = i); NAN = no point there. */
typedef struct {
    const char *name;
    const double *x, *y;
    size_t n;
    bool dashed;
} golden_html_series;

typedef struct {
    const char *id, *title, *x_label, *y_label;
    bool log_y;            /* log10 axis; a value <= floor is drawn at the floor */
    double floor;          /* log axis floor (0: 1e-12) */
    const golden_html_series *series;
    size_t n_series;
    double mark_x;         /* a vertical mark (NAN: none), e.g. the first layer over the gate */
    const char *mark_label;
    bool log_x;            /* log10 x axis; points with x <= 0 are not drawn */
} golden_html_lines;

/* A line chart: one <polyline class="series" data-series=NAME data-points=N> per series with
 * a point, one <circle class="pt" data-x=X data-y=Y> per point, and <line class="mark"> for
 * mark_x. */
GOLDEN_API void golden_html_line_chart(golden_html *h, const golden_html_lines *c);

/* One row of a box chart: a box over [lo, hi] (e.g. the bootstrap CI of the median), a median
 * tick, whisker ticks at w1 and w2 (e.g. p90, p99; NAN = none). */
typedef struct {
    const char *label, *cls; /* cls: "base" or "cand" (colour), or NULL */
    double lo, hi, median, w1, w2;
} golden_html_box;
GOLDEN_API void golden_html_box_chart(golden_html *h, const char *id, const char *title,
                           const char *x_label, const golden_html_box *rows, size_t n);

/* Stacked horizontal bars: bar i has n_parts segments values[i * n_parts + k] (NAN/<=0 skipped),
 * <rect class="seg" data-part=PART> each. */
GOLDEN_API void golden_html_stacked_bars(golden_html *h, const char *id, const char *title,
                              const char *x_label, const char *const *bars, size_t n_bars,
                              const char *const *parts, size_t n_parts, const double *values);

/* Histogram of values (non-finite skipped) in n_bins bins, log10 bins when log_x (values <= 0
 * skipped then): one <rect class="bin" data-count=C> per bin. */
GOLDEN_API void golden_html_histogram(golden_html *h, const char *id, const char *title,
                           const char *x_label, const double *values, size_t n, size_t n_bins,
                           bool log_x);

/* A histogram of bins counted elsewhere (e.g. golden-diff's |c - r| log2 bins), equal widths in
 * order: one <rect class="bin" data-bin=KEY data-count=C> per non-empty bin, counts on a log10
 * y axis when log_y, a tick label under bin i when labels[i], and <line class="mark"> at the
 * fractional bin position mark_at (bin i spans [i, i + 1); NAN: none). */
typedef struct {
    const char *id, *title, *x_label;
    const char *const *keys;   /* data-bin of each bin */
    const char *const *labels; /* tick under each bin, NULL entries (or NULL) for none */
    const unsigned long long *counts;
    size_t n;
    bool log_y;
    double mark_at;
    const char *mark_label;
} golden_html_bins;
GOLDEN_API void golden_html_bin_chart(golden_html *h, const golden_html_bins *c);

/* Heatmap: rows x cols cells of values[r * cols + c] (NAN = empty), <rect class="cell"
 * data-r=R data-c=C data-v=V>, coloured from the lowest value (blue) to the highest (red). */
GOLDEN_API void golden_html_heatmap(golden_html *h, const char *id, const char *title,
                         const char *const *row_labels, size_t rows,
                         const char *const *col_labels, size_t cols, const double *values);
/* The same for differences: a diverging scale centred on 0 (blue below, red above). */
GOLDEN_API void golden_html_diff_heatmap(golden_html *h, const char *id, const char *title,
                              const char *const *row_labels, size_t rows,
                              const char *const *col_labels, size_t cols, const double *values);

/* Vertical bars, one per label: <rect class="col" data-label=L data-v=V> (NAN/<0 drawn as 0). */
GOLDEN_API void golden_html_bar_chart(golden_html *h, const char *id, const char *title, const char *x_label,
                           const char *y_label, const char *const *labels, size_t n,
                           const double *values);

/* A scatter plot: (xs[i], ys[i]) as <circle class="flip"> (class "flip near" when alt[i]);
 * a vertical mark at mark_x (NAN: none). */
GOLDEN_API void golden_html_scatter(golden_html *h, const char *id, const char *title, const char *x_label,
                         const char *y_label, const double *xs, const double *ys,
                         const bool *alt, size_t n, bool log_x, double mark_x);

/* A sortable table whose rows the page's script builds from the embedded JSON: `path` is a
 * key of the report holding an array of objects; cols are "key|Heading" strings. With
 * fail_first, rows whose "verdict" is "fail" come first. Rows: <tr class="row">. */
GOLDEN_API void golden_html_json_table(golden_html *h, const char *id, const char *path,
                            const char *const *cols, size_t n_cols, bool fail_first);

/* ---- the reports (report/diff.c, report/gate.c, report/dag.c) ---- */

/* golden-diff --html: from the calculet-diff-report/v1 tree golden_diff_to_json builds. */
GOLDEN_API int golden_html_diff_report(const json_t *report, const char *path, bool force,
                            golden_error *err);
/* exp-gate decide --html: from decision.json's tree and performance/summary.json's tree. */
GOLDEN_API int golden_html_gate_report(const json_t *decision, const json_t *summary, const char *path,
                            bool force, golden_error *err);
/* The same with series (golden_gate_series: per graph-level case and side, latency against
 * run order and the CDF) drawn beside the boxes; series NULL: the boxes alone. */
GOLDEN_API int golden_html_gate_report_series(const json_t *decision, const json_t *summary,
                                              const json_t *series, const char *path, bool force,
                                              golden_error *err);
/* dag-check --html: from the calculet-dag-report/v1 tree and, for the swimlanes, the result it
 * was built from (r may be NULL: racing ops only, no order or syncs; see report/dagview.c). */
GOLDEN_API int golden_html_dag_report(const json_t *report, const golden_dag_result *r,
                           const char *path, bool force, golden_error *err);

/* npu-replay conform --html: from the calculet-conform/v1 tree golden_conform_json builds (the
 * checks' verdicts and findings, the kv-growth curve). */
GOLDEN_API int golden_html_conform_report(const json_t *report, const char *path, bool force,
                               golden_error *err);
/* npu-replay profile --html: from the calculet-routing-profile/v1 tree golden_profile_json
 * builds (expert hit heatmap, candidate-minus-baseline shares, section 12's buckets). */
GOLDEN_API int golden_html_profile_report(const json_t *profile, const char *path, bool force,
                               golden_error *err);

#endif
