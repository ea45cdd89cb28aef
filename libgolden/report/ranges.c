/* golden-dump --ranges --html: per tap and domain heatmaps of the activation ranges (handbook
 * section 16.1; never a mixed average) and the table. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "golden/html.h"
#include "golden/ranges.h"

/* One heatmap of key: rows the taps, columns the domains (NAN where a tap has no data). */
static int heat(golden_html *h, const json_t *doc, const char *id, const char *title,
                const char *key, double scale)
{
    const json_t *doms = json_object_get(doc, "domains"), *rows = json_object_get(doc, "taps");
    size_t nd = json_array_size(doms), nr = json_array_size(rows), nt = 0;
    const char **taps = calloc(nr ? nr : 1, sizeof *taps);
    const char **dl = calloc(nd ? nd : 1, sizeof *dl);
    double *v = malloc((nr ? nr : 1) * (nd ? nd : 1) * sizeof *v);
    if (!taps || !dl || !v) {
        free(taps);
        free(dl);
        free(v);
        return -1;
    }
    for (size_t d = 0; d < nd; d++)
        dl[d] = json_string_value(json_array_get(doms, d));
    for (size_t i = 0; i < nr * nd; i++)
        v[i] = NAN;
    size_t i;
    json_t *r;
    json_array_foreach(rows, i, r) {
        const char *tap = json_string_value(json_object_get(r, "tap"));
        const char *dom = json_string_value(json_object_get(r, "domain"));
        size_t t = nt;
        if (nt == 0 || strcmp(taps[nt - 1], tap)) /* rows are sorted by tap */
            taps[nt++] = tap;
        else
            t = nt - 1;
        json_t *x = json_object_get(r, key);
        for (size_t d = 0; d < nd; d++)
            if (!strcmp(dl[d], dom) && json_is_number(x))
                v[t * nd + d] = json_number_value(x) * scale;
    }
    golden_html_heatmap(h, id, title, taps, nt, dl, nd, v);
    /* an infinity has no colour on the scale: said under the map, never left out silently */
    json_array_foreach(rows, i, r) {
        const char *s = json_string_value(json_object_get(r, key));
        if (!s)
            continue;
        golden_html_raw(h, "<p class=\"infinite\">");
        golden_html_text(h, json_string_value(json_object_get(r, "tap")));
        golden_html_raw(h, " in ");
        golden_html_text(h, json_string_value(json_object_get(r, "domain")));
        golden_html_raw(h, ": ");
        golden_html_text(h, s);
        golden_html_raw(h, " (empty cell above)</p>\n");
    }
    free(taps);
    free(dl);
    free(v);
    return 0;
}

int golden_html_ranges_report(const json_t *ranges, const char *path, bool force,
                              golden_error *err)
{
    golden_html *h = golden_html_new("Activation ranges per domain (section 16.1)");
    if (!h)
        return golden_fail_what(err, GOLDEN_ENOMEM, NULL, "out of memory");
    golden_html_printf(h, "<p>Per layer tap and calibration domain; percentiles are exact "
                       "nearest-rank order statistics of |x|; outliers are |x| &gt; %g.</p>\n",
                       json_number_value(json_object_get(ranges, "outlier_threshold")));
    int bad = heat(h, ranges, "max-abs-p9999", "|x| p99.99 per tap and domain", "abs_p99_99", 1) ||
              heat(h, ranges, "max", "max per tap and domain", "max", 1) ||
              heat(h, ranges, "outlier-share", "outlier share (%) per tap and domain",
                   "outlier_share", 100);
    static const char *const cols[] = {
        "tap|Tap", "domain|Domain", "elements|Elements", "nan|NaN", "min|Min", "max|Max",
        "abs_p99|abs p99", "abs_p99_9|abs p99.9", "abs_p99_99|abs p99.99",
        "outliers|Outliers", "outlier_share|Outlier share"};
    golden_html_json_table(h, "taps", "taps", cols, sizeof cols / sizeof *cols, false);
    golden_html_json(h, ranges);
    if (bad) {
        golden_html_free(h);
        return golden_fail_what(err, GOLDEN_ENOMEM, NULL, "out of memory");
    }
    int rc = golden_html_write(h, path, force, err);
    golden_html_free(h);
    return rc;
}
