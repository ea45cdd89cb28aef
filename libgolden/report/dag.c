/* dag-check's HTML report: swimlanes per queue with each racing pair drawn between its two ops
 * (buffer and byte range on the arrow, the missing sync the hint proposes dashed), from the
 * calculet-dag-report/v1 tree alone; large reports draw the first pairs and table the rest. */
#include "golden/html.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report/html_int.h"

#define DRAWN_MAX 60 /* racing pairs drawn; every pair is in the table */

/* Index of s in list (added when new). */
static size_t slot(const char **list, size_t *n, const char *s)
{
    for (size_t i = 0; i < *n; i++)
        if (strcmp(list[i], s) == 0)
            return i;
    list[*n] = s;
    return (*n)++;
}

typedef struct {
    const char **queues, **ops;
    size_t *op_lane;
    size_t nq, nops;
} lanes_t;

/* The lanes and op columns of the first `drawn` races: ops in the order the report names them
 * (a race's a comes first in the graph file), each on its queue's lane. */
static int build(const json_t *races, size_t drawn, lanes_t *L)
{
    L->queues = calloc(2 * drawn + 1, sizeof *L->queues);
    L->ops = calloc(2 * drawn + 1, sizeof *L->ops);
    L->op_lane = calloc(2 * drawn + 1, sizeof *L->op_lane);
    if (!L->queues || !L->ops || !L->op_lane)
        return -1;
    for (size_t i = 0; i < drawn; i++) {
        const json_t *r = json_array_get(races, i);
        static const char *const ends[2][2] = {{"a", "queue_a"}, {"b", "queue_b"}};
        for (int e = 0; e < 2; e++) {
            size_t before = L->nops, o = slot(L->ops, &L->nops, html_str(r, ends[e][0]));
            size_t q = slot(L->queues, &L->nq, html_str(r, ends[e][1]));
            if (o == before)
                L->op_lane[o] = q;
        }
    }
    return 0;
}

static size_t find(const char **list, size_t n, const char *s)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(list[i], s) == 0)
            return i;
    return 0;
}

static void swimlanes(golden_html *h, const json_t *races, size_t drawn, const lanes_t *L)
{
    double lane_h = 56, col_w = 70, left = 90, top = 30;
    double width = left + col_w * (double)L->nops + 40, height = top + lane_h * (double)L->nq + 20;
    golden_html_printf(h, "<figure><svg class=\"chart\" data-chart=\"swimlanes\" viewBox=\"0 0 %.0f %.0f\" "
                          "width=\"%.0f\" height=\"%.0f\" role=\"img\"><title>racing pairs on their "
                          "queues</title>\n<defs><marker id=\"arr\" viewBox=\"0 0 10 10\" refX=\"9\" "
                          "refY=\"5\" markerWidth=\"7\" markerHeight=\"7\" orient=\"auto\"><path "
                          "d=\"M0,0L10,5L0,10z\" class=\"s1\"/></marker></defs>\n",
                       width, height, width, height);
    for (size_t q = 0; q < L->nq; q++) {
        double y = top + lane_h * (double)q;
        golden_html_printf(h, "<g class=\"lane-g\"><rect class=\"lane\" x=\"2\" y=\"%.0f\" width=\"%.0f\" "
                              "height=\"%.0f\"/><text x=\"6\" y=\"%.0f\" font-weight=\"600\">queue ",
                           y, width - 4, lane_h - 4, y + lane_h / 2);
        golden_html_text(h, L->queues[q]);
        golden_html_raw(h, "</text></g>\n");
    }
    for (size_t o = 0; o < L->nops; o++) {
        double x = left + col_w * (double)o, y = top + lane_h * (double)L->op_lane[o] + 12;
        golden_html_printf(h, "<g><rect class=\"op racing\" data-op=\"");
        golden_html_text(h, L->ops[o]);
        golden_html_printf(h, "\" x=\"%.0f\" y=\"%.0f\" width=\"%.0f\" height=\"24\" rx=\"4\"/>"
                              "<text x=\"%.0f\" y=\"%.0f\" text-anchor=\"middle\">", x, y, col_w - 14,
                           x + (col_w - 14) / 2, y + 16);
        golden_html_text(h, L->ops[o]);
        golden_html_raw(h, "</text></g>\n");
    }
    for (size_t i = 0; i < drawn; i++) {
        const json_t *r = json_array_get(races, i);
        size_t a = find(L->ops, L->nops, html_str(r, "a")), b = find(L->ops, L->nops, html_str(r, "b"));
        double xa = left + col_w * (double)a + (col_w - 14) / 2, xb = left + col_w * (double)b + (col_w - 14) / 2;
        double ya = top + lane_h * (double)L->op_lane[a] + 36, yb = top + lane_h * (double)L->op_lane[b] + 12;
        if (L->op_lane[a] > L->op_lane[b])
            ya -= 24, yb += 24;
        const json_t *rg = json_object_get(r, "range");
        golden_html_printf(h, "<path class=\"race\" data-race=\"%zu\" marker-end=\"url(#arr)\" "
                              "d=\"M%.1f,%.1f C%.1f,%.1f %.1f,%.1f %.1f,%.1f\"><title>", i, xa, ya,
                           xa, (ya + yb) / 2, xb, (ya + yb) / 2, xb, yb);
        golden_html_text(h, html_str(r, "kind"));
        golden_html_raw(h, " on ");
        golden_html_text(h, html_str(r, "buffer"));
        golden_html_printf(h, " [%lld, %lld): ", (long long)json_integer_value(json_array_get(rg, 0)),
                           (long long)json_integer_value(json_array_get(rg, 1)));
        golden_html_text(h, html_str(r, "hint"));
        golden_html_printf(h, "</title></path><text class=\"race-label\" x=\"%.1f\" y=\"%.1f\">",
                           (xa + xb) / 2 + 4, (ya + yb) / 2);
        golden_html_text(h, html_str(r, "kind"));
        golden_html_raw(h, " ");
        golden_html_text(h, html_str(r, "buffer"));
        golden_html_printf(h, "[%lld,%lld)</text>\n", (long long)json_integer_value(json_array_get(rg, 0)),
                           (long long)json_integer_value(json_array_get(rg, 1)));
    }
    golden_html_raw(h, "</svg></figure>\n");
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
    golden_html_json_table(h, "aliases", "aliases", acols, 5, false);
    static const char *const scols[] = {"sync|sync", "kind|kind", "reason|why idle"};
    golden_html_raw(h, "<h2>Idle syncs</h2>\n");
    golden_html_json_table(h, "redundant", "redundant_syncs", scols, 3, false);
}

static int body(golden_html *h, const json_t *rep)
{
    const json_t *races = json_object_get(rep, "races");
    size_t n = json_array_size(races), drawn = n < DRAWN_MAX ? n : DRAWN_MAX;
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
    golden_html_raw(h, "<h2>Racing pairs on their queues</h2>\n");
    if (n) {
        golden_html_printf(h, "<p class=\"note\">Only the ops of racing pairs are drawn (the "
                              "neighbourhood of each finding), in the order the graph file gives "
                              "them; an arrow goes from the op that runs first in the file to the op "
                              "it races with, labelled with the buffer and byte range. %s</p>\n",
                           n > drawn ? "The first pairs are drawn; the table lists every one." : "");
        lanes_t L = {0};
        if (build(races, drawn, &L) != 0) {
            free(L.queues), free(L.ops), free(L.op_lane);
            return -1;
        }
        swimlanes(h, races, drawn, &L);
        free(L.queues), free(L.ops), free(L.op_lane);
    } else {
        golden_html_raw(h, "<p class=\"pass\">No racing pair.</p>\n");
    }
    static const char *const cols[] = {"kind|kind", "a|op a", "queue_a|queue a", "b|op b",
                                       "queue_b|queue b", "buffer|buffer", "range|bytes",
                                       "hint|fix"};
    golden_html_json_table(h, "races", "races", cols, sizeof cols / sizeof *cols, false);
    lists(h, rep);
    return 0;
}

int golden_html_dag_report(const json_t *report, const char *path, bool force,
                           golden_error *err)
{
    golden_html *h = golden_html_new("dag-check report");
    if (!h || body(h, report) != 0) {
        golden_html_free(h);
        return golden_fail_what(err, GOLDEN_ENOMEM, path, "out of memory building the HTML report");
    }
    golden_html_json(h, report);
    int rc = golden_html_write(h, path, force, err);
    golden_html_free(h);
    return rc;
}
