/* dag-check's HTML report: per-chip swimlanes of the ops around each racing pair (dagview.c),
 * happens-before columns, syncs and races as arrows; cycles, aliases, idle syncs, every pair. */
#include "golden/html.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report/html_int.h"

/* Geometry of the swimlanes (SVG user units). */
#define LEFT 120.0
#define TOP 30.0
#define LANE_H 50.0
#define COL_W 80.0
#define BOX_W 66.0
#define BOX_H 22.0

typedef struct {
    const json_t *ops, *lanes;
    size_t nops;
} view_ref;

static size_t op_index(const view_ref *v, const char *id)
{
    for (size_t i = 0; i < v->nops; i++)
        if (strcmp(html_str(json_array_get(v->ops, i), "id"), id) == 0)
            return i;
    return SIZE_MAX;
}

static double op_x(const json_t *op)
{
    return LEFT + COL_W * (double)json_integer_value(json_object_get(op, "col"));
}

/* The first lane an op sits on (a barrier: its top lane). */
static double op_y(const json_t *op)
{
    json_int_t l = json_integer_value(json_array_get(json_object_get(op, "lanes"), 0));
    size_t i;
    json_t *x;
    json_array_foreach(json_object_get(op, "lanes"), i, x)
        if (json_integer_value(x) < l)
            l = json_integer_value(x);
    return TOP + LANE_H * (double)l + 14;
}

/* An op's id, cut at a character boundary to fit its box (the whole id is in its tooltip). */
static void short_id(golden_html *h, const char *id)
{
    size_t n = strlen(id), cut = n > 9 ? 8 : n;
    while (cut < n && cut > 0 && ((unsigned char)id[cut] & 0xC0) == 0x80)
        cut--;
    char buf[16];
    snprintf(buf, sizeof buf, "%.*s", (int)cut, id);
    golden_html_text(h, buf);
    if (cut < n)
        golden_html_raw(h, "&hellip;");
}

static void lanes_draw(golden_html *h, const json_t *lanes, double width)
{
    size_t i, n = json_array_size(lanes);
    for (i = 0; i < n; i++) {
        const json_t *L = json_array_get(lanes, i);
        double y = TOP + LANE_H * (double)i;
        golden_html_raw(h, "<g class=\"lane-g\"><rect class=\"lane\" data-queue=\"");
        golden_html_text(h, html_str(L, "queue"));
        golden_html_printf(h, "\" data-chip=\"%lld\" x=\"22\" y=\"%.0f\" width=\"%.0f\" height=\"%.0f\"/>"
                              "<text x=\"28\" y=\"%.0f\">", (long long)json_integer_value(json_object_get(L, "chip")),
                           y + 2, width - 24, LANE_H - 4, y + LANE_H / 2 + 4);
        golden_html_text(h, html_str(L, "queue"));
        golden_html_raw(h, "</text></g>\n");
    }
    /* one band a chip: consecutive lanes (sorted by chip) */
    for (i = 0; i < n;) {
        json_int_t chip = json_integer_value(json_object_get(json_array_get(lanes, i), "chip"));
        size_t j = i;
        while (j < n && json_integer_value(json_object_get(json_array_get(lanes, j), "chip")) == chip)
            j++;
        double y0 = TOP + LANE_H * (double)i, y1 = TOP + LANE_H * (double)j;
        golden_html_printf(h, "<rect class=\"chip-band\" data-chip=\"%lld\" x=\"2\" y=\"%.0f\" width=\"%.0f\" "
                              "height=\"%.0f\"/><text x=\"14\" y=\"%.0f\" transform=\"rotate(-90 14 %.0f)\" "
                              "text-anchor=\"middle\" font-weight=\"600\">chip %lld</text>\n",
                           (long long)chip, y0, width - 4, y1 - y0 - 2, (y0 + y1) / 2, (y0 + y1) / 2,
                           (long long)chip);
        i = j;
    }
}

static void ops_draw(golden_html *h, const view_ref *v, const json_t *races, size_t drawn)
{
    for (size_t i = 0; i < v->nops; i++) {
        const json_t *op = json_array_get(v->ops, i);
        const char *id = html_str(op, "id"), *kind = html_str(op, "kind");
        bool racing = false;
        for (size_t r = 0; r < drawn && !racing; r++)
            racing = strcmp(html_str(json_array_get(races, r), "a"), id) == 0 ||
                     strcmp(html_str(json_array_get(races, r), "b"), id) == 0;
        double x = op_x(op), y = op_y(op);
        golden_html_printf(h, "<g><rect class=\"op %s%s\" data-op=\"", kind, racing ? " racing" : "");
        golden_html_text(h, id);
        golden_html_printf(h, "\" data-col=\"%lld\" data-kind=\"%s\" ",
                           (long long)json_integer_value(json_object_get(op, "col")), kind);
        if (strcmp(kind, "barrier") == 0) {
            /* a barrier spans the lanes of the queues it lists */
            double y1 = y;
            size_t k;
            json_t *l;
            json_array_foreach(json_object_get(op, "lanes"), k, l)
                y1 = fmax(y1, TOP + LANE_H * (double)json_integer_value(l) + 14);
            golden_html_printf(h, "x=\"%.0f\" y=\"%.0f\" width=\"12\" height=\"%.0f\" rx=\"3\"><title>barrier ",
                               x + BOX_W / 2 - 6, y - 6, y1 - y + BOX_H + 12);
            golden_html_text(h, id);
            golden_html_raw(h, "</title></rect></g>\n");
            continue;
        }
        golden_html_printf(h, "x=\"%.0f\" y=\"%.0f\" width=\"%.0f\" height=\"%.0f\" rx=\"4\"><title>%s ",
                           x, y, BOX_W, BOX_H, kind);
        golden_html_text(h, id);
        golden_html_printf(h, "%s</title></rect><text class=\"opl\" x=\"%.0f\" y=\"%.0f\" text-anchor=\"middle\">",
                           json_is_true(json_object_get(op, "wait_removed")) ? " (removed: it orders nothing here)" : "",
                           x + BOX_W / 2, y + 15);
        short_id(h, id);
        golden_html_raw(h, "</text></g>\n");
    }
}

static void syncs_draw(golden_html *h, const view_ref *v, const json_t *syncs)
{
    size_t i;
    json_t *s;
    json_array_foreach(syncs, i, s) {
        size_t a = op_index(v, html_str(s, "from")), b = op_index(v, html_str(s, "to"));
        if (a == SIZE_MAX || b == SIZE_MAX)
            continue;
        const json_t *A = json_array_get(v->ops, a), *B = json_array_get(v->ops, b);
        double xa = op_x(A) + BOX_W, ya = op_y(A) + BOX_H / 2, xb = op_x(B), yb = op_y(B) + BOX_H / 2;
        /* a barrier is a 12-unit bar in the middle of its column */
        if (strcmp(html_str(A, "kind"), "barrier") == 0)
            xa -= BOX_W / 2 - 6;
        if (strcmp(html_str(B, "kind"), "barrier") == 0)
            xb += BOX_W / 2 - 6;
        golden_html_raw(h, "<path class=\"sync\" marker-end=\"url(#sarr)\" data-from=\"");
        golden_html_text(h, html_str(s, "from"));
        golden_html_raw(h, "\" data-to=\"");
        golden_html_text(h, html_str(s, "to"));
        golden_html_printf(h, "\" data-kind=\"%s\" d=\"M%.1f,%.1f C%.1f,%.1f %.1f,%.1f %.1f,%.1f\"><title>",
                           html_str(s, "kind"), xa, ya, (xa + xb) / 2, ya, (xa + xb) / 2, yb, xb, yb);
        golden_html_text(h, html_str(s, "from"));
        golden_html_raw(h, " &rarr; ");
        golden_html_text(h, html_str(s, "to"));
        golden_html_raw(h, strcmp(html_str(s, "kind"), "signal") == 0 ? " (event " : " (after");
        golden_html_text(h, html_str(s, "event"));
        golden_html_raw(h, ")</title></path>\n");
    }
}

static void races_draw(golden_html *h, const view_ref *v, const json_t *races, size_t drawn)
{
    for (size_t i = 0; i < drawn; i++) {
        const json_t *r = json_array_get(races, i);
        size_t a = op_index(v, html_str(r, "a")), b = op_index(v, html_str(r, "b")), same = 0;
        if (a == SIZE_MAX || b == SIZE_MAX)
            continue;
        for (size_t k = 0; k < i; k++) /* pairs of the same two ops: labels stacked, not overlaid */
            same += strcmp(html_str(json_array_get(races, k), "a"), html_str(r, "a")) == 0 &&
                    strcmp(html_str(json_array_get(races, k), "b"), html_str(r, "b")) == 0;
        const json_t *A = json_array_get(v->ops, a), *B = json_array_get(v->ops, b);
        double xa = op_x(A) + BOX_W / 2, xb = op_x(B) + BOX_W / 2, ya = op_y(A), yb = op_y(B);
        if (ya < yb)
            ya += BOX_H;
        else
            yb += BOX_H;
        const json_t *rg = json_object_get(r, "range");
        long long lo = (long long)json_integer_value(json_array_get(rg, 0)),
                  hi = (long long)json_integer_value(json_array_get(rg, 1));
        golden_html_printf(h, "<path class=\"race\" data-race=\"%zu\" data-a=\"", i);
        golden_html_text(h, html_str(r, "a"));
        golden_html_raw(h, "\" data-b=\"");
        golden_html_text(h, html_str(r, "b"));
        golden_html_printf(h, "\" data-range=\"%lld,%lld\" marker-end=\"url(#arr)\" d=\"M%.1f,%.1f "
                              "C%.1f,%.1f %.1f,%.1f %.1f,%.1f\"><title>", lo, hi, xa, ya, xa - 30,
                           (ya + yb) / 2, xb - 30, (ya + yb) / 2, xb, yb);
        golden_html_text(h, html_str(r, "kind"));
        golden_html_raw(h, " on ");
        golden_html_text(h, html_str(r, "buffer"));
        golden_html_printf(h, " [%lld, %lld): ", lo, hi);
        golden_html_text(h, html_str(r, "hint"));
        golden_html_printf(h, "</title></path><text class=\"race-label\" x=\"%.1f\" y=\"%.1f\">",
                           (xa + xb) / 2 - 18, (ya + yb) / 2 + 4 + 12 * (double)same);
        golden_html_text(h, html_str(r, "kind"));
        golden_html_raw(h, " ");
        golden_html_text(h, html_str(r, "buffer"));
        golden_html_printf(h, "[%lld,%lld)</text>\n", lo, hi);
    }
}

/* Lanes per chip and queue, ops in happens-before columns, syncs as grey arrows, each drawn
 * racing pair as a red arrow labelled with its buffer and byte range. */
static void swimlanes(golden_html *h, const json_t *view, const json_t *races)
{
    view_ref v = {json_object_get(view, "ops"), json_object_get(view, "lanes"), 0};
    v.nops = json_array_size(v.ops);
    size_t drawn = (size_t)json_integer_value(json_object_get(view, "pairs_drawn"));
    json_int_t cols = 0;
    for (size_t i = 0; i < v.nops; i++)
        if (json_integer_value(json_object_get(json_array_get(v.ops, i), "col")) + 1 > cols)
            cols = json_integer_value(json_object_get(json_array_get(v.ops, i), "col")) + 1;
    /* at least as wide as the caption above the lanes (about 300 units) */
    double width = fmax(LEFT + COL_W * (double)cols + 30, LEFT + 310), height = TOP + LANE_H * (double)json_array_size(v.lanes) + 10;
    golden_html_printf(h, "<div class=\"scroll\"><svg class=\"chart wide\" data-chart=\"swimlanes\" viewBox=\"0 0 "
                          "%.0f %.0f\" width=\"%.0f\" height=\"%.0f\" role=\"img\"><title>ops around each "
                          "racing pair, per chip and queue, in happens-before order</title>\n<defs><marker "
                          "id=\"arr\" viewBox=\"0 0 10 10\" refX=\"9\" refY=\"5\" markerWidth=\"7\" "
                          "markerHeight=\"7\" orient=\"auto\"><path d=\"M0,0L10,5L0,10z\" class=\"s1\"/>"
                          "</marker><marker id=\"sarr\" viewBox=\"0 0 10 10\" refX=\"9\" refY=\"5\" "
                          "markerWidth=\"6\" markerHeight=\"6\" orient=\"auto\"><path d=\"M0,0L10,5L0,10z\" "
                          "class=\"sync-head\"/></marker></defs>\n<text x=\"%.0f\" y=\"16\" "
                          "class=\"note\">happens-before &rarr; (ops in one column are unordered)</text>\n",
                       width, height, width, height, LEFT);
    lanes_draw(h, v.lanes, width);
    syncs_draw(h, &v, json_object_get(view, "syncs"));
    ops_draw(h, &v, races, drawn);
    races_draw(h, &v, races, drawn);
    golden_html_raw(h, "</svg></div>\n");
}

/* The racing pairs on their queues (golden-accept's graph step); nothing without a race. */
void html_dag_races(golden_html *h, const json_t *report, const json_t *view)
{
    const json_t *races = json_object_get(report, "races");
    if (json_array_size(races) && view)
        swimlanes(h, view, races);
}

static void lists(golden_html *h, const json_t *rep)
{
    size_t i;
    json_t *c;
    if (json_array_size(json_object_get(rep, "cycles"))) {
        golden_html_raw(h, "<h2>Cycles (no happens-before order exists)</h2><ul>");
        json_array_foreach(json_object_get(rep, "cycles"), i, c) {
            golden_html_raw(h, "<li class=\"cycle\">");
            size_t k;
            json_t *op;
            json_array_foreach(c, k, op) {
                golden_html_raw(h, k ? " &rarr; " : "");
                golden_html_text(h, json_string_value(op));
            }
            golden_html_raw(h, "</li>");
        }
        golden_html_raw(h, "</ul>\n");
    }
    static const char *const acols[] = {"a|buffer a", "b|buffer b", "address|address", "bytes|bytes",
                                        "reason|reason"};
    golden_html_raw(h, "<h2>Aliases</h2>\n");
    if (json_array_size(json_object_get(rep, "aliases")))
        golden_html_json_table(h, "aliases", "aliases", acols, 5, false);
    else
        golden_html_raw(h, "<p class=\"pass\">No live alias in the memory plan.</p>\n");
    static const char *const scols[] = {"sync|sync", "kind|kind", "reason|why idle"};
    golden_html_raw(h, "<h2>Idle syncs</h2>\n");
    if (json_array_size(json_object_get(rep, "redundant_syncs")))
        golden_html_json_table(h, "redundant", "redundant_syncs", scols, 3, false);
    else
        golden_html_raw(h, "<p class=\"note\">No idle sync found (or none looked for: "
                           "<code>--redundant</code>).</p>\n");
}

/* A list of sync ids as text ("none" when empty). */
static void id_list(golden_html *h, const json_t *a)
{
    size_t i;
    json_t *x;
    if (!json_array_size(a))
        golden_html_raw(h, "none");
    json_array_foreach(a, i, x) {
        golden_html_raw(h, i ? ", <code>" : "<code>");
        golden_html_text(h, json_is_string(x) ? json_string_value(x) : "?");
        golden_html_raw(h, "</code>");
    }
}

/* dag-check --baseline: the file compared against, the syncs the candidate removed, moved and
 * added, and how many races are new (section 13.2: each removal proven race-free). */
static void baseline_section(golden_html *h, const json_t *rep)
{
    if (strcmp(html_str(rep, "mode"), "baseline") != 0)
        return;
    golden_html_raw(h, "<h2>Barrier removal against the baseline</h2>\n<table class=\"kv\"><tr><th>"
                       "baseline</th><td><code>");
    golden_html_text(h, html_str(rep, "baseline"));
    golden_html_printf(h, "</code> (%lld race(s) of its own)</td></tr>\n<tr><th>candidate</th><td><code>",
                       (long long)json_integer_value(json_object_get(rep, "baseline_races")));
    golden_html_text(h, html_str(rep, "graph"));
    golden_html_printf(h, "</code></td></tr>\n<tr><th>removed syncs (%zu)</th><td class=\"removed\">",
                       json_array_size(json_object_get(rep, "removed_syncs")));
    id_list(h, json_object_get(rep, "removed_syncs"));
    golden_html_printf(h, "</td></tr>\n<tr><th>moved syncs (%zu)</th><td>",
                       json_array_size(json_object_get(rep, "moved_syncs")));
    id_list(h, json_object_get(rep, "moved_syncs"));
    golden_html_printf(h, "</td></tr>\n<tr><th>added syncs (%zu)</th><td>",
                       json_array_size(json_object_get(rep, "added_syncs")));
    id_list(h, json_object_get(rep, "added_syncs"));
    long long nr = (long long)json_integer_value(json_object_get(rep, "new_races")),
              na = (long long)json_integer_value(json_object_get(rep, "new_aliases"));
    golden_html_printf(h, "</td></tr>\n<tr><th>new</th><td><span class=\"%s\">%lld race(s), %lld "
                          "alias(es)</span> the baseline does not have</td></tr></table>\n",
                       nr || na ? "fail" : "pass", nr, na);
}

static int body(golden_html *h, const json_t *rep, const json_t *view)
{
    const json_t *races = json_object_get(rep, "races");
    size_t n = json_array_size(races);
    const char *v = html_str(rep, "verdict");
    bool pass = strcmp(v, "pass") == 0;
    golden_html_printf(h, "<p class=\"verdict\" data-verdict=\"%s\">verdict: <span class=\"%s\">%s</span>"
                          " &mdash; ", pass ? "pass" : "fail", pass ? "pass" : "fail", pass ? "pass" : "fail");
    golden_html_text(h, html_str(rep, "graph"));
    golden_html_printf(h, ": %lld ops on %lld queues, %zu racing pair(s), %zu alias(es), %zu cycle(s)</p>\n",
                       (long long)json_integer_value(json_object_get(rep, "ops")),
                       (long long)json_integer_value(json_object_get(rep, "queues")), n,
                       json_array_size(json_object_get(rep, "aliases")),
                       json_array_size(json_object_get(rep, "cycles")));
    baseline_section(h, rep);
    golden_html_raw(h, "<h2>Racing pairs on their queues</h2>\n");
    if (n && view) {
        size_t drawn = (size_t)json_integer_value(json_object_get(view, "pairs_drawn"));
        golden_html_printf(h, "<p class=\"note\">The neighbourhood of each racing pair, not the whole "
                              "graph: %zu op(s) of %lld, the %d ops before and after each racing op on "
                              "its queue and one step out to their sync partners. Columns follow "
                              "happens-before (an op never sits left of one it waits for); grey arrows "
                              "are syncs (signal &rarr; wait, after), red arrows the racing pairs with "
                              "buffer and byte range; hover for the fix. %zu of %zu pair(s) drawn%s.</p>\n",
                           json_array_size(json_object_get(view, "ops")),
                           (long long)json_integer_value(json_object_get(rep, "ops")), HTML_DAG_WINDOW,
                           drawn, n, n > drawn ? ", every pair is in the table" : "");
        swimlanes(h, view, races);
    } else if (n) {
        golden_html_raw(h, "<p class=\"note\">No picture: the checked graph was not given to the writer.</p>\n");
    } else {
        golden_html_raw(h, "<p class=\"pass\">No racing pair.</p>\n");
    }
    static const char *const cols[] = {"kind|kind", "a|op a", "queue_a|queue a", "b|op b",
                                       "queue_b|queue b", "buffer|buffer", "range|bytes",
                                       "hint|fix"};
    /* against a baseline: whether each race is new and which removed syncs expose it */
    static const char *const bcols[] = {"kind|kind", "a|op a", "queue_a|queue a", "b|op b",
                                        "queue_b|queue b", "buffer|buffer", "range|bytes",
                                        "new|new", "exposed_by|exposed by", "hint|fix"};
    if (strcmp(html_str(rep, "mode"), "baseline") == 0)
        golden_html_json_table(h, "races", "races", bcols, sizeof bcols / sizeof *bcols, false);
    else
        golden_html_json_table(h, "races", "races", cols, sizeof cols / sizeof *cols, false);
    lists(h, rep);
    return 0;
}

int golden_html_dag_report(const json_t *report, const golden_dag_result *r, const char *path,
                           bool force, golden_error *err)
{
    golden_html *h = golden_html_new("dag-check report");
    json_t *view = r && json_array_size(json_object_get(report, "races")) ? html_dag_view(r) : NULL;
    /* the page embeds the report plus the neighbourhood it draws, so both can be had from it */
    json_t *doc = json_deep_copy(report);
    bool oom = !h || !doc || (r && json_array_size(json_object_get(report, "races")) && !view);
    if (!oom && view)
        oom = json_object_set(doc, "neighbourhood", view) != 0;
    int rc = html_finish(h, !oom ? body(h, report, view) : -1, doc, path, force, err);
    json_decref(view), json_decref(doc);
    return rc;
}
