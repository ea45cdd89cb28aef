/* The HTML's drift and CDF pictures: per graph-level case of a summary and side, the latency of
 * every measured request (warm-ups left out) in run order, read again from
 * performance/raw-requests.jsonl through the strict JSON Lines reader. Drift is thinned to at
 * most max_points bins of consecutive runs (each bin: its first run and its median latency);
 * the CDF is 101 quantiles (0, 1, ..., 100 %, numpy's default interpolation) of all samples, a
 * failed request (timeout, error) counting as +inf, so the curve stops short of 1 by their
 * share. Memory: two doubles per measured sample of the graph-level metrics. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "gate/gate_int.h"
#include "golden/doc.h"
#include "golden/gate_stats.h"

typedef struct {
    char *case_id;
    char *key;         /* gate_group_key(case_id, 0, level): one series per case and level */
    long long level;   /* the concurrency level (issue 33) */
    const char *metric;
    double *run[2], *v[2];
    size_t n[2], cap[2], failed[2];
} series_group;

typedef struct {
    series_group *g;
    size_t ng;
    golden_strmap map; /* gate_group_key(case_id, 0, level) -> group */
} series_ctx;

static int push(series_group *g, int s, double run, double v)
{
    if (g->n[s] == g->cap[s]) {
        size_t nc = g->cap[s] ? 2 * g->cap[s] : 64;
        double *nr = realloc(g->run[s], nc * sizeof *nr);
        if (nr)
            g->run[s] = nr;
        double *nv = nr ? realloc(g->v[s], nc * sizeof *nv) : NULL;
        if (!nv)
            return -1;
        g->v[s] = nv;
        g->cap[s] = nc;
    }
    g->run[s][g->n[s]] = run;
    g->v[s][g->n[s]++] = v;
    return 0;
}

static int series_line(void *ctx, golden_doc *d, size_t line_no, golden_error *err)
{
    (void)line_no;
    series_ctx *c = ctx;
    json_t *o = golden_doc_root(d);
    const char *cid = json_string_value(json_object_get(o, "case_id"));
    const char *side = json_string_value(json_object_get(o, "side"));
    uint64_t gi;
    json_t *lv = json_object_get(o, "concurrency");
    if (!cid || !side || json_is_true(json_object_get(o, "warmup")) || (lv && !json_is_integer(lv)))
        return 0;
    size_t clen = strlen(cid);
    char stack[512], *key = clen + 24 <= sizeof stack ? stack : malloc(clen + 24);
    if (!key)
        return gate_oom(err);
    size_t klen = gate_group_key(key, cid, clen, 0, lv ? json_integer_value(lv) : 1);
    bool found = lg_strmap_get(&c->map, key, klen, &gi);
    if (key != stack)
        free(key);
    if (!found)
        return 0;
    int s = !strcmp(side, "baseline") ? 0 : !strcmp(side, "candidate") ? 1 : -1;
    if (s < 0)
        return 0;
    series_group *g = &c->g[gi];
    const char *oc = json_string_value(json_object_get(o, "outcome"));
    json_t *v = json_object_get(o, g->metric);
    double x;
    if (oc && strcmp(oc, "ok") != 0) {
        x = INFINITY;
        g->failed[s]++;
    } else if (json_is_number(v)) {
        x = json_number_value(v);
    } else {
        return 0;
    }
    double run = json_number_value(json_object_get(o, "run"));
    return push(g, s, run, x) ? gate_oom(err) : 0;
}

typedef struct {
    double run, v;
} pair;

static int by_run(const void *a, const void *b)
{
    const pair *x = a, *y = b;
    return (x->run > y->run) - (x->run < y->run);
}

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static json_t *real_or_null(double v)
{
    return isfinite(v) ? json_real(gate_round(v)) : json_null();
}

/* {drift: [[run, median], ...], cdf: [[ms|null, p], ...], samples, failed} of one side. */
static json_t *side_json(series_group *g, int s, size_t max_points)
{
    size_t n = g->n[s];
    pair *p = malloc((n ? n : 1) * sizeof *p);
    double *scratch = malloc((n ? n : 1) * sizeof *scratch);
    json_t *o = json_pack("{s:[],s:[],s:I,s:I}", "drift", "cdf", "samples", (json_int_t)n,
                          "failed", (json_int_t)g->failed[s]);
    if (!p || !scratch || !o) {
        free(p), free(scratch), json_decref(o);
        return NULL;
    }
    for (size_t i = 0; i < n; i++)
        p[i] = (pair){g->run[s][i], g->v[s][i]};
    qsort(p, n, sizeof *p, by_run);
    size_t per = max_points && n > max_points ? (n + max_points - 1) / max_points : 1;
    json_t *drift = json_object_get(o, "drift"), *cdf = json_object_get(o, "cdf");
    int bad = 0;
    for (size_t i = 0; i < n && !bad; i += per) {
        size_t m = n - i < per ? n - i : per;
        for (size_t k = 0; k < m; k++)
            scratch[k] = p[i + k].v;
        double med = gate_percentile_select(scratch, m, 0.5);
        bad = json_array_append_new(drift, json_pack("[f,o]", p[i].run, real_or_null(med)));
    }
    for (size_t i = 0; i < n; i++)
        scratch[i] = g->v[s][i];
    qsort(scratch, n, sizeof *scratch, by_value);
    for (int q = 0; q <= 100 && n && !bad; q++) {
        double x = golden_gate_percentile(scratch, n, q / 100.0);
        bad = json_array_append_new(cdf, json_pack("[o,f]", real_or_null(x), q / 100.0));
    }
    free(p), free(scratch);
    if (bad) {
        json_decref(o);
        return NULL;
    }
    return o;
}

int golden_gate_series(const char *dir, const json_t *summary, size_t max_points, json_t **out,
                       golden_error *err)
{
    *out = NULL;
    series_ctx c;
    memset(&c, 0, sizeof c);
    size_t i, n = json_array_size(json_object_get(summary, "cases"));
    json_t *e, *res = NULL;
    char *raw = gate_path(dir, "performance/raw-requests.jsonl");
    int rc = -1;
    if (!raw || !(c.g = calloc(n + 1, sizeof *c.g))) {
        gate_oom(err);
        goto out;
    }
    json_array_foreach(json_object_get(summary, "cases"), i, e) {
        const char *cid = json_string_value(json_object_get(e, "case_id"));
        const char *m = json_string_value(json_object_get(e, "metric"));
        json_t *lv = json_object_get(e, "concurrency");
        long long level = json_is_integer(lv) ? json_integer_value(lv) : 1;
        if (!cid || !m || !json_is_true(json_object_get(e, "graph_level")))
            continue;
        series_group *g = &c.g[c.ng];
        size_t clen = strlen(cid), klen;
        if (!(g->key = malloc(clen + 24))) {
            gate_oom(err);
            goto out;
        }
        klen = gate_group_key(g->key, cid, clen, 0, level);
        if (lg_strmap_get(&c.map, g->key, klen, NULL)) {
            free(g->key);
            g->key = NULL;
            continue;
        }
        g->metric = m;
        g->level = level;
        if (!(g->case_id = strdup(cid)) || lg_strmap_put(&c.map, g->key, klen, c.ng, NULL) < 0) {
            free(g->case_id);
            free(g->key);
            g->case_id = g->key = NULL;
            gate_oom(err);
            goto out;
        }
        c.ng++;
    }
    if (golden_doc_each_jsonl(raw, series_line, &c, err) != 0)
        goto out;
    if (!(res = json_array())) {
        gate_oom(err);
        goto out;
    }
    for (size_t k = 0; k < c.ng; k++) {
        series_group *g = &c.g[k];
        json_t *b = side_json(g, 0, max_points), *cd = b ? side_json(g, 1, max_points) : NULL;
        json_t *row = cd ? json_pack("{s:s,s:I,s:s,s:o,s:o}", "case_id", g->case_id,
                                     "concurrency", (json_int_t)g->level, "metric", g->metric,
                                     "baseline", b, "candidate", cd)
                         : NULL;
        if (!row || json_array_append_new(res, row)) {
            if (!cd)
                json_decref(b);
            gate_oom(err);
            goto out;
        }
    }
    *out = res;
    res = NULL;
    rc = 0;
out:
    json_decref(res);
    for (size_t k = 0; k < c.ng; k++) {
        free(c.g[k].case_id);
        free(c.g[k].key);
        for (int s = 0; s < 2; s++)
            free(c.g[k].run[s]), free(c.g[k].v[s]);
    }
    free(c.g);
    lg_strmap_free(&c.map);
    free(raw);
    return rc;
}
