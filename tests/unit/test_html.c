/* Unit tests of the HTML writer (libgolden/report/): escaping, the embedded JSON in both
 * encodings (decoded here by a separate base64 decoder and zlib), and chart point counts. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <zlib.h>

#include "cunit_main.h"
#include "golden/html.h"
#include "report/html_int.h"

static void test_escape(void)
{
    golden_html *h = golden_html_new("a<b>&\"c'");
    CU_ASSERT_PTR_NOT_NULL_FATAL(h);
    size_t at = h->len;
    golden_html_text(h, "x</script><b>&amp;\"'y");
    CU_ASSERT_STRING_EQUAL(h->buf + at, "x&lt;/script&gt;&lt;b&gt;&amp;amp;&quot;&#39;y");
    CU_ASSERT_PTR_NOT_NULL(strstr(h->buf, "<title>a&lt;b&gt;&amp;&quot;c&#39;</title>"));
    golden_html_free(h);
}

static void test_json_plain(void)
{
    golden_html *h = golden_html_new("t");
    json_t *doc = json_pack("{s:s, s:f}", "name", "</script><script>alert(1)</script>", "v", 0.5);
    size_t at = h->len;
    golden_html_json(h, doc);
    const char *open = strstr(h->buf + at, "id=\"report-json\">");
    CU_ASSERT_PTR_NOT_NULL_FATAL(open);
    open += strlen("id=\"report-json\">");
    const char *close = strstr(open, "</script>");
    CU_ASSERT_PTR_NOT_NULL_FATAL(close);
    CU_ASSERT_PTR_NULL(memchr(open, '<', (size_t)(close - open)));
    json_t *back = json_loadb(open, (size_t)(close - open), 0, NULL);
    CU_ASSERT_TRUE(json_equal(back, doc));
    json_decref(back);
    json_decref(doc);
    golden_html_free(h);
}

static int b64val(char c)
{
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    return c == '+' ? 62 : c == '/' ? 63 : -1;
}

static void test_json_deflated(void)
{
    golden_html *h = golden_html_new("t");
    json_t *arr = json_array();
    for (int i = 0; i < 40000; i++)
        json_array_append_new(arr, json_pack("{s:i, s:s}", "i", i, "s", "<&>"));
    json_t *doc = json_pack("{s:o}", "rows", arr);
    size_t at = h->len;
    golden_html_json(h, doc);
    CU_ASSERT_PTR_NOT_NULL_FATAL(strstr(h->buf + at, "data-encoding=\"deflate-base64\">"));
    const char *p = strstr(h->buf + at, "data-encoding=\"deflate-base64\">") + 31;
    const char *end = strstr(p, "</script>");
    size_t n = (size_t)(end - p), o = 0;
    unsigned char *z = malloc(n);
    unsigned acc = 0;
    int bits = 0;
    for (size_t i = 0; i < n && p[i] != '='; i++) {
        int v = b64val(p[i]);
        CU_ASSERT_TRUE_FATAL(v >= 0);
        acc = acc << 6 | (unsigned)v, bits += 6;
        if (bits >= 8)
            z[o++] = (unsigned char)(acc >> (bits -= 8));
    }
    char *dump = json_dumps(doc, JSON_COMPACT);
    uLongf len = strlen(dump) + 16;
    char *raw = malloc(len);
    CU_ASSERT_EQUAL_FATAL(uncompress((Bytef *)raw, &len, z, o), Z_OK);
    json_t *back = json_loadb(raw, len, 0, NULL);
    CU_ASSERT_TRUE(json_equal(back, doc));
    CU_ASSERT_TRUE(n < strlen(dump) / 4); /* repetitive rows compress well */
    json_decref(back);
    free(raw), free(dump), free(z);
    json_decref(doc);
    golden_html_free(h);
}

static size_t count(const char *s, const char *needle)
{
    size_t n = 0;
    for (const char *p = s; (p = strstr(p, needle)) != NULL; p++)
        n++;
    return n;
}

/* Axes end on round values and tick at 1, 2, 2.5 or 5 times a power of ten (worked by hand). */
static void test_axis_ticks(void)
{
    golden_html *h = golden_html_new("t");
    /* runs 10..39 against latencies 9.34..11.05 ms (the drift chart): y step 0.5 from 9 to 11.5,
     * x (whole runs) step 10 from 10 to 40 */
    double x[3] = {10, 25, 39}, y[3] = {9.34, 10.2, 11.05};
    golden_html_series s[1] = {{"base", x, y, 3, false}};
    golden_html_lines c = {"c", "t", "run", "ms", false, 0, s, 1, NAN, NULL, false};
    size_t at = h->len;
    golden_html_line_chart(h, &c);
    const char *out = h->buf + at;
    const char *want[] = {">9</text>", ">9.5</text>", ">10</text>", ">10.5</text>", ">11</text>",
                          ">11.5</text>", ">20</text>", ">30</text>", ">40</text>"};
    for (size_t i = 0; i < sizeof want / sizeof *want; i++)
        CU_ASSERT_PTR_NOT_NULL(strstr(out, want[i]));
    CU_ASSERT_PTR_NULL(strstr(out, ">9.34</text>"));
    CU_ASSERT_PTR_NULL(strstr(out, ">15</text>"));
    CU_ASSERT_EQUAL(count(out, "class=\"grid\""), 6);  /* 9 .. 11.5 */
    CU_ASSERT_EQUAL(count(out, "class=\"axis xtick\""), 4); /* 10 .. 40 */
    /* a CDF: x is latency (not whole), fraction 0..1 on y: x ticks 9, 9.5, .. 11.5 (not only
     * the rounded 9 and 11), y 0, 0.2, .. 1 */
    double cx[3] = {9.34, 10.1, 11.05}, cy[3] = {0.1, 0.5, 1};
    golden_html_series cs[1] = {{"cdf", cx, cy, 3, false}};
    golden_html_lines cc = {"d", "t", "ms", "fraction", false, 0, cs, 1, NAN, NULL, false};
    at = h->len;
    golden_html_line_chart(h, &cc);
    out = h->buf + at;
    CU_ASSERT_EQUAL(count(out, "class=\"axis xtick\""), 6);
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "middle\">10.5</text>"));
    CU_ASSERT_PTR_NOT_NULL(strstr(out, ">0.6</text>"));
    CU_ASSERT_PTR_NOT_NULL(strstr(out, ">0</text>"));
    /* bar heights 0..129: 129 / 5 = 25.8 rounds up to the step 50, so 0, 50, 100, 150 and the
     * tallest bar stays under the top line */
    double bars[2] = {129, 60};
    const char *bl[2] = {"a", "b"};
    at = h->len;
    golden_html_bar_chart(h, "b", "t", "x", "y", bl, 2, bars);
    out = h->buf + at;
    CU_ASSERT_PTR_NOT_NULL(strstr(out, ">150</text>"));
    CU_ASSERT_PTR_NOT_NULL(strstr(out, ">50</text>"));
    CU_ASSERT_EQUAL(count(out, "class=\"grid\""), 4);
    CU_ASSERT_PTR_NULL(strstr(out, ">129</text>"));
    golden_html_free(h);
}

static void test_line_chart(void)
{
    golden_html *h = golden_html_new("t");
    double a[5] = {1e-3, NAN, 0, 1e-1, 2}, b[5] = {NAN, NAN, NAN, NAN, NAN};
    golden_html_series s[2] = {{"a", NULL, a, 5, false}, {"b", NULL, b, 5, true}};
    golden_html_lines c = {"c", "t", "x", "y", true, 1e-6, s, 2, 3, "m", false};
    size_t at = h->len;
    golden_html_line_chart(h, &c);
    const char *out = h->buf + at;
    CU_ASSERT_EQUAL(count(out, "<polyline"), 1);           /* b has no point: no line */
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "data-series=\"a\" data-points=\"4\""));
    CU_ASSERT_EQUAL(count(out, "<circle class=\"pt"), 4); /* NAN skipped, 0 at the floor */
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "class=\"mark\" data-x=\"3\""));
    CU_ASSERT_PTR_NOT_NULL(strstr(out, ">1e-6</text>")); /* the floor decade is an axis tick */
    golden_html_free(h);
}

static void test_histogram(void)
{
    golden_html *h = golden_html_new("t");
    double v[6] = {1, 10, 100, 0, NAN, 1000};
    size_t at = h->len;
    golden_html_histogram(h, "h", "t", "x", v, 6, 3, true);
    const char *out = h->buf + at;
    size_t total = 0;
    for (const char *p = out; (p = strstr(p, "data-count=\"")) != NULL; p++)
        total += strtoul(p + 12, NULL, 10);
    CU_ASSERT_EQUAL(total, 4); /* 0 and NaN are not on a log axis */
    golden_html_free(h);
}

static void test_bars_and_heatmap(void)
{
    golden_html *h = golden_html_new("t");
    const char *bars[2] = {"b0", "b1"}, *parts[3] = {"p<0>", "p1", "p2"};
    double v[6] = {1, NAN, 2, 0, -1, 3}; /* NAN, 0 and negative segments are not drawn */
    size_t at = h->len;
    golden_html_stacked_bars(h, "s", "t", "x", bars, 2, parts, 3, v);
    CU_ASSERT_EQUAL(count(h->buf + at, "<rect class=\"seg"), 3);
    CU_ASSERT_PTR_NOT_NULL(strstr(h->buf + at, "data-part=\"p&lt;0&gt;\""));
    const char *rl[2] = {"L0", "L1"}, *cl[3] = {"e0", "e1", "e2"};
    double m[6] = {0, 1, NAN, 2, 3, 4};
    at = h->len;
    golden_html_heatmap(h, "m", "t", rl, 2, cl, 3, m);
    CU_ASSERT_EQUAL(count(h->buf + at, "<rect class=\"cell\""), 5);
    golden_html_box box = {"case", "base", 1, 2, 1.5, 2.5, 3};
    at = h->len;
    golden_html_box_chart(h, "b", "t", "ms", &box, 1);
    CU_ASSERT_PTR_NOT_NULL(strstr(h->buf + at, "class=\"tick median\" data-v=\"1.5\""));
    CU_ASSERT_EQUAL(count(h->buf + at, "<rect class=\"box base\""), 1);
    golden_html_free(h);
}

static void test_new_charts(void)
{
    golden_html *h = golden_html_new("t");
    /* log x: x <= 0 and NaN points are not drawn; the others carry their numbers */
    double x[4] = {0, 16, 32, NAN}, y[4] = {1, 2, 3, 4};
    golden_html_series s[1] = {{"kv", x, y, 4, false}};
    golden_html_lines c = {"c", "t", "ctx", "y", false, 0, s, 1, NAN, NULL, true};
    size_t at = h->len;
    golden_html_line_chart(h, &c);
    CU_ASSERT_EQUAL(count(h->buf + at, "<circle class=\"pt"), 2);
    CU_ASSERT_PTR_NOT_NULL(strstr(h->buf + at, "data-points=\"2\""));
    CU_ASSERT_PTR_NOT_NULL(strstr(h->buf + at, "data-x=\"32\" data-y=\"3\""));
    /* a difference map keeps signs and names each cell's row, column and value */
    const char *rl[1] = {"L0"}, *cl[3] = {"e0", "e1", "e2"};
    double d[3] = {-0.5, 0, 0.25};
    at = h->len;
    golden_html_diff_heatmap(h, "d", "t", rl, 1, cl, 3, d);
    CU_ASSERT_EQUAL(count(h->buf + at, "<rect class=\"cell\""), 3);
    CU_ASSERT_PTR_NOT_NULL(strstr(h->buf + at, "data-r=\"0\" data-c=\"0\" data-v=\"-0.5\""));
    /* RdBu ends: -0.5 of 0.5 is the blue end #2166ac, 0 the middle #f7f7f7, +0.25 half way
     * from the middle to the red end #b2182b: (247+178)/2, (247+24)/2, (247+43)/2 rounded */
    CU_ASSERT_PTR_NOT_NULL(strstr(h->buf + at, "data-v=\"-0.5\" x="));
    CU_ASSERT_PTR_NOT_NULL(strstr(h->buf + at, "fill=\"rgb(33,102,172)\""));
    CU_ASSERT_PTR_NOT_NULL(strstr(h->buf + at, "fill=\"rgb(247,247,247)\""));
    CU_ASSERT_PTR_NOT_NULL(strstr(h->buf + at, "fill=\"rgb(213,136,145)\""));
    /* every expert's column is labelled, and the colour bar spans -0.5 .. 0.5 */
    CU_ASSERT_EQUAL(count(h->buf + at, "class=\"collabel\""), 3);
    CU_ASSERT_PTR_NOT_NULL(strstr(h->buf + at, ">e2</text>")); /* no shared prefix up to a space */
    CU_ASSERT_PTR_NOT_NULL(strstr(h->buf + at, "class=\"scale\" data-lo=\"-0.5\" data-hi=\"0.5\""));
    /* a sequential map: viridis ends, #440154 at the low value and #fde725 at the high one */
    double sq[3] = {1, 2, 3};
    at = h->len;
    golden_html_heatmap(h, "q", "t", rl, 1, cl, 3, sq);
    CU_ASSERT_PTR_NOT_NULL(strstr(h->buf + at, "data-v=\"1\" x="));
    CU_ASSERT_PTR_NOT_NULL(strstr(h->buf + at, "fill=\"rgb(68,1,84)\""));
    CU_ASSERT_PTR_NOT_NULL(strstr(h->buf + at, "fill=\"rgb(253,231,37)\""));
    CU_ASSERT_PTR_NOT_NULL(strstr(h->buf + at, "fill=\"rgb(38,130,142)\"")); /* the middle anchor */
    /* "expert 0" .. "expert 2": the numbers under the columns, "expert" once beside them */
    const char *ex[3] = {"expert 0", "expert 1", "expert 2"};
    at = h->len;
    golden_html_heatmap(h, "x", "t", rl, 1, ex, 3, sq);
    CU_ASSERT_PTR_NOT_NULL(strstr(h->buf + at, "middle\">2</text>"));
    CU_ASSERT_EQUAL(count(h->buf + at, ">expert</text>"), 1);
    /* over 1024 cells: no title a cell, the labels once (JSON, escaped) for the hover line */
    static const char *rows40[40], *cols30[30];
    static double big[40 * 30];
    for (size_t i = 0; i < 40; i++)
        rows40[i] = i ? "r" : "r\"0";
    for (size_t i = 0; i < 30; i++)
        cols30[i] = "c";
    for (size_t i = 0; i < 40 * 30; i++)
        big[i] = (double)i;
    at = h->len;
    golden_html_heatmap(h, "big", "t", rows40, 40, cols30, 30, big);
    CU_ASSERT_EQUAL(count(h->buf + at, "<rect class=\"cell\""), 1200);
    CU_ASSERT_EQUAL(count(h->buf + at, "<title>"), 1); /* the chart's own */
    CU_ASSERT_PTR_NOT_NULL(strstr(h->buf + at, "data-rows=\"[&quot;r\\&quot;0&quot;,&quot;r&quot;"));
    CU_ASSERT_PTR_NOT_NULL(strstr(h->buf + at, "data-r=\"39\" data-c=\"29\" data-v=\"1199\""));
    /* bars: one a label, negative and NaN drawn as 0 */
    const char *bl[3] = {"0", "1", ">32"};
    double bv[3] = {5, NAN, -1};
    at = h->len;
    golden_html_bar_chart(h, "b", "t", "x", "y", bl, 3, bv);
    CU_ASSERT_EQUAL(count(h->buf + at, "<rect class=\"col\""), 3);
    CU_ASSERT_PTR_NOT_NULL(strstr(h->buf + at, "data-label=\"&gt;32\" data-v=\"0\""));
    CU_ASSERT_PTR_NOT_NULL(strstr(h->buf + at, "data-label=\"0\" data-v=\"5\""));
    golden_html_free(h);
}

/* The dag picture's neighbourhood on the e2e test's graph, worked out by hand: windows of 3 ops
 * around r, p2 (race 1) and r, q (race 2); s is w's signal, bd is q's `after` predecessor and
 * gets queue D a lane although no other op of D is shown; d0 stays out. Happens-before: p s p2
 * on A, s -> w, w r on B, bd -> q. */
static const char race_graph[] =
    "{\"schema\": \"calculet-graph/v1\","
    " \"queues\": [{\"id\": \"A\", \"chip\": 0}, {\"id\": \"B\", \"chip\": 0},"
    "  {\"id\": \"C\", \"chip\": 1}, {\"id\": \"D\", \"chip\": 1}],"
    " \"buffers\": [{\"id\": \"t\", \"chip\": 0, \"space\": \"sram\", \"address\": 0, \"size\": 256},"
    "  {\"id\": \"u\", \"chip\": 0, \"space\": \"sram\", \"address\": 1024, \"size\": 64}],"
    " \"ops\": ["
    "  {\"id\": \"p\", \"queue\": \"A\", \"writes\": [{\"buffer\": \"t\", \"offset\": 0, \"size\": 256}]},"
    "  {\"id\": \"s\", \"queue\": \"A\", \"kind\": \"signal\", \"event\": \"e\"},"
    "  {\"id\": \"w\", \"queue\": \"B\", \"kind\": \"wait\", \"event\": \"e\"},"
    "  {\"id\": \"r\", \"queue\": \"B\", \"reads\": [{\"buffer\": \"t\", \"offset\": 0, \"size\": 256}],"
    "   \"writes\": [{\"buffer\": \"u\", \"offset\": 0, \"size\": 64}]},"
    "  {\"id\": \"p2\", \"queue\": \"A\", \"writes\": [{\"buffer\": \"t\", \"offset\": 128, \"size\": 128}]},"
    "  {\"id\": \"d0\", \"queue\": \"D\"},"
    "  {\"id\": \"bd\", \"kind\": \"barrier\", \"queues\": [\"D\"]},"
    "  {\"id\": \"q\", \"queue\": \"C\", \"reads\": [{\"buffer\": \"u\", \"offset\": 0, \"size\": 32}],"
    "   \"after\": [\"bd\"]}]}";

static long view_col(const json_t *view, const char *id)
{
    size_t i;
    json_t *op;
    json_array_foreach(json_object_get(view, "ops"), i, op)
        if (strcmp(json_string_value(json_object_get(op, "id")), id) == 0)
            return (long)json_integer_value(json_object_get(op, "col"));
    return -1;
}

static void test_dag_view(void)
{
    json_t *root = json_loads(race_graph, 0, NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(root);
    golden_graph *g = NULL;
    golden_error err;
    golden_error_clear(&err);
    CU_ASSERT_EQUAL_FATAL(golden_graph_from_json(root, "race", NULL, &g, &err), 0);
    golden_dag_result r;
    memset(&r, 0, sizeof r);
    CU_ASSERT_EQUAL_FATAL(golden_dag_check(g, NULL, false, &r, &err), 0);
    CU_ASSERT_EQUAL(r.nraces, 2);
    json_t *v = html_dag_view(&r);
    CU_ASSERT_PTR_NOT_NULL_FATAL(v);
    CU_ASSERT_EQUAL(json_array_size(json_object_get(v, "ops")), 7);
    static const char *const ids[] = {"p", "s", "w", "r", "p2", "bd", "q", "d0"};
    static const long cols[] = {0, 1, 2, 3, 2, 0, 1, -1};
    for (size_t i = 0; i < 8; i++)
        CU_ASSERT_EQUAL(view_col(v, ids[i]), cols[i]);
    const json_t *lanes = json_object_get(v, "lanes");
    static const char *const qs[] = {"A", "B", "C", "D"};
    CU_ASSERT_EQUAL_FATAL(json_array_size(lanes), 4);
    for (size_t i = 0; i < 4; i++)
        CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(json_array_get(lanes, i), "queue")), qs[i]);
    const json_t *syncs = json_object_get(v, "syncs");
    CU_ASSERT_EQUAL_FATAL(json_array_size(syncs), 2);
    CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(json_array_get(syncs, 0), "from")), "s");
    CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(json_array_get(syncs, 0), "to")), "w");
    CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(json_array_get(syncs, 1), "from")), "bd");
    CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(json_array_get(syncs, 1), "kind")), "after");
    json_decref(v);
    golden_dag_result_free(&r);
    golden_graph_free(g);
    json_decref(root);
}

int main(void)
{
    static const golden_test tests[] = {
        {"text and titles escaped", test_escape},
        {"embedded JSON cannot close its block", test_json_plain},
        {"large JSON deflated and base64", test_json_deflated},
        {"line chart points, floor and mark", test_line_chart},
        {"axis ticks at round values", test_axis_ticks},
        {"histogram counts finite positive values", test_histogram},
        {"stacked bars, heatmap and box rows", test_bars_and_heatmap},
        {"log x lines, difference heatmap, bars", test_new_charts},
        {"dag picture: neighbourhood, hb columns, lanes, syncs", test_dag_view},
        {0, 0}};
    return golden_test_run("html", tests);
}
