/* Private to report/: the page buffer behind golden_html and the small helpers the charts and
 * the reports share. */
#ifndef GOLDEN_REPORT_HTML_INT_H
#define GOLDEN_REPORT_HTML_INT_H
#include <stdbool.h>
#include <stddef.h>

#include "golden/html.h"

struct golden_html {
    char *buf;
    size_t len, cap;
    bool oom; /* sticky: golden_html_write reports it */
};

void html_put_n(golden_html *h, const char *s, size_t n);

/* A number from a JSON member: NAN when absent, null or not a number. */
double html_num(const json_t *obj, const char *key);
/* A string member, or "" . */
const char *html_str(const json_t *obj, const char *key);

/* How every report ends: a body that could not be built (body_rc != 0, or h NULL) is out of
 * memory, reported naming path; else `doc` is embedded and the page written. Frees h. */
int html_finish(golden_html *h, int body_rc, const json_t *doc, const char *path, bool force,
                golden_error *err);

/* dag-check's picture (report/dagview.c): at most HTML_DAG_PAIRS racing pairs, each with the
 * HTML_DAG_WINDOW ops before and after both of its ops on their queues, plus one step out to
 * sync partners (a wait's signal, a signal's first HTML_DAG_PARTNERS waits, an op's first
 * HTML_DAG_PARTNERS `after` predecessors). The neighbourhood as a JSON object (lanes, ops with
 * happens-before columns, syncs between shown ops); NULL when out of memory. */
#define HTML_DAG_PAIRS 60
#define HTML_DAG_WINDOW 3
#define HTML_DAG_PARTNERS 4
json_t *html_dag_view(const golden_dag_result *r);

/* Pictures of the reports, for a page that holds several (golden-accept --html): the per-layer
 * error charts of a diff report, the latency boxes of a section 7 summary, the racing pairs of
 * a dag report with its view (html_dag_view). -1 only when out of memory. */
int html_diff_layers(golden_html *h, const json_t *report);
int html_gate_latency(golden_html *h, const json_t *summary);
void html_dag_races(golden_html *h, const json_t *report, const json_t *view);

#endif
