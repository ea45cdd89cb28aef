/* Builds calculet-perf-summary/v1 from the raw requests and the device trace: per case, side
 * and metric the section 8 statistics, then the trace's per-chip, per-family figures. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "gate/gate_int.h"
#include "golden/doc.h"
#include "golden/hash.h"
#include "golden/report.h"
#include "util/str.h"

static const char *const side_names[3] = {"baseline", "candidate", "unsided"};

void golden_gate_opts_init(golden_gate_opts *o)
{
    memset(o, 0, sizeof *o);
    o->version = GOLDEN_GATE_OPTS_VERSION;
    o->seed = GOLDEN_GATE_DEFAULT_SEED;
    o->bootstrap = GOLDEN_GATE_DEFAULT_BOOTSTRAP;
    o->generator = GOLDEN_BOOT_ORDER_STAT;
    o->clock_band_pct = 2.0;
    o->temp_band_c = 5.0;
    o->power_band_pct = 5.0;
}

double gate_round(double v)
{
    if (!isfinite(v) || v == 0)
        return v;
    if (fabs(v) >= 1)
        return round(v * 1e6) / 1e6;
    double scale = pow(10, 5 - floor(log10(fabs(v))));
    return round(v * scale) / scale;
}

int gate_set_real(json_t *obj, const char *key, double v)
{
    return json_object_set_new(obj, key, golden_json_real(gate_round(v)));
}

int gate_set_int(json_t *obj, const char *key, long long v)
{
    return json_object_set_new(obj, key, json_integer(v));
}

int gate_set_str(json_t *obj, const char *key, const char *s)
{
    return json_object_set_new(obj, key, json_string(s));
}

char *gate_path(const char *dir, const char *rel)
{
    return lg_path_join(dir, rel);
}

/* {path, sha256, bytes} of dir/rel. */
static json_t *file_ref(const char *dir, const char *rel, golden_error *err)
{
    char *full = gate_path(dir, rel);
    if (!full) {
        gate_oom(err);
        return NULL;
    }
    struct stat st;
    char hex[65];
    json_t *o = NULL;
    if (stat(full, &st) != 0)
        golden_fail_where(err, golden_code_from_errno(errno), strerror(errno), "%s", full);
    else if (golden_sha256_file(full, hex, err) == 0) {
        o = json_object();
        if (!o || gate_set_str(o, "path", rel) || gate_set_str(o, "sha256", hex) ||
            gate_set_int(o, "bytes", (long long)st.st_size)) {
            json_decref(o);
            o = NULL;
            gate_oom(err);
        }
    }
    free(full);
    return o;
}

static json_t *side_stats(const gate_group *g, int m)
{
    const golden_gate_describe_t *d = &g->d[m];
    json_t *o = json_object();
    if (!o)
        return NULL;
    json_t *ci = json_array();
    int bad = gate_set_int(o, "n", (long long)d->n) || gate_set_real(o, "median", d->median) ||
              gate_set_real(o, "p90", d->p90) || gate_set_real(o, "p99", d->p99) ||
              gate_set_real(o, "mad", d->mad) || gate_set_real(o, "std", d->std) || !ci ||
              json_array_append_new(ci, golden_json_real(gate_round(g->ci[m][0]))) ||
              json_array_append_new(ci, golden_json_real(gate_round(g->ci[m][1]))) ||
              json_object_set_new(o, "ci95", ci) ||
              gate_set_int(o, "warmups", (long long)g->warmups) ||
              gate_set_int(o, "unsteady", (long long)(g->flagged_unsteady + g->band_unsteady)) ||
              gate_set_int(o, "failed", (long long)g->failed) ||
              (isfinite(g->clock_ref) && gate_set_real(o, "clock_ref_mhz", g->clock_ref)) ||
              (isfinite(g->temp_ref) && gate_set_real(o, "temperature_ref_c", g->temp_ref)) ||
              (isfinite(g->power_ref) && (gate_set_real(o, "power_w", g->power_ref) ||
                                          gate_set_real(o, "power_drift_w", g->power_drift)));
    if (bad) {
        json_decref(o);
        return NULL;
    }
    return o;
}

/* The case's graph-level metric: TPOT when the case generated more than one token and measured
 * it, else TTFT (docs/exp-gate.md). */
static int graph_metric(const gate_group *b, const gate_group *c)
{
    if ((b->max_output_tokens > 1 || c->max_output_tokens > 1) &&
        (b->measured_metrics & c->measured_metrics & 2u))
        return 1;
    return 0;
}

/* A pair's metrics in the summary: each one both sides' measured lines carry, steady or not (a
 * side whose runs are all unsteady has n 0: insufficient, reported). A pair with none in
 * common (a side of warm-ups only) keeps its graph-level latency: no case is ever dropped. */
static unsigned pair_metrics(const gate_group *b, const gate_group *c)
{
    unsigned both = b->measured_metrics & c->measured_metrics;
    if (both)
        return both;
    unsigned any = b->measured_metrics | c->measured_metrics;
    return (any & 2u) && !(any & 1u) ? 2u : 1u;
}

static json_t *case_entry(const gate_group *b, const gate_group *c, int m, unsigned long B)
{
    json_t *o = json_object();
    if (!o)
        return NULL;
    double da = b->d[m].median, dc = c->d[m].median;
    double delta = gate_round(dc) - gate_round(da);
    double pct = gate_round(da) != 0 ? 100.0 * delta / gate_round(da) : NAN;
    double p99 = gate_round(b->d[m].p99) != 0
                     ? 100.0 * (gate_round(c->d[m].p99) - gate_round(b->d[m].p99)) /
                           gate_round(b->d[m].p99)
                     : NAN;
    int insufficient = 0;
    const gate_group *s[2] = {b, c};
    for (int i = 0; i < 2; i++)
        insufficient |= s[i]->d[m].n < GOLDEN_GATE_MIN_MEASURED ||
                        s[i]->warmups < GOLDEN_GATE_MIN_WARMUPS;
    int bad = gate_set_str(o, "case_id", b->case_id) ||
              gate_set_int(o, "concurrency", b->concurrency) ||
              gate_set_str(o, "metric", lg_gate_metric_names[m]) ||
              gate_set_str(o, "unit", "ms") ||
              json_object_set_new(o, "baseline", side_stats(b, m)) ||
              json_object_set_new(o, "candidate", side_stats(c, m)) ||
              gate_set_real(o, "delta_abs", delta) || gate_set_real(o, "delta_pct", pct) ||
              gate_set_real(o, "p99_regression_pct", p99) ||
              json_object_set_new(o, "insufficient", json_boolean(insufficient)) ||
              json_object_set_new(o, "graph_level", json_boolean(graph_metric(b, c) == m));
    if (!bad && m < 2 && b->boot[m] && c->boot[m]) {
        double ci[2], *scratch = malloc(B * sizeof *scratch);
        json_t *arr = json_array();
        bad = !scratch || !arr;
        if (!bad) {
            gate_diff_ci(b->boot[m], c->boot[m], B, scratch, ci);
            bad = json_array_append_new(arr, golden_json_real(gate_round(ci[0]))) ||
                  json_array_append_new(arr, golden_json_real(gate_round(ci[1]))) ||
                  json_object_set_new(o, "delta_ci95", arr);
            arr = NULL;
        }
        json_decref(arr);
        free(scratch);
    }
    if (bad) {
        json_decref(o);
        return NULL;
    }
    return o;
}

/* Throughput of one case, side and level over its wall window (docs/exp-gate.md, issue 33):
 * rates null when the window is empty or some measured line is untimed, tokens null when some
 * ok line lacks output_tokens (never taken as 0). */
static json_t *throughput_row(const gate_group *g)
{
    double win_ns = g->tp_any ? (double)g->tp_end - (double)g->tp_start : 0;
    bool timed = g->tp_any && win_ns > 0 && g->tp_untimed == 0;
    bool tokens = g->tp_tokens_missing == 0;
    double win_s = win_ns / 1e9;
    json_t *e = json_pack("{s:s,s:I,s:s,s:I,s:I}", "case_id", g->case_id, "concurrency",
                          (json_int_t)g->concurrency, "side", side_names[g->side], "requests",
                          (json_int_t)g->tp_ok, "failed", (json_int_t)g->failed);
    if (!e || (tokens ? gate_set_int(e, "output_tokens", g->tp_tokens)
                      : json_object_set_new(e, "output_tokens", json_null())) ||
        gate_set_real(e, "window_ms", g->tp_any ? win_ns / 1e6 : NAN) ||
        gate_set_real(e, "requests_per_s", timed ? (double)g->tp_ok / win_s : NAN) ||
        gate_set_real(e, "output_tokens_per_s",
                      timed && tokens ? (double)g->tp_tokens / win_s : NAN) ||
        gate_set_int(e, "output_tokens_missing", (long long)g->tp_tokens_missing) ||
        gate_set_int(e, "untimed", (long long)g->tp_untimed)) {
        json_decref(e);
        return NULL;
    }
    return e;
}

/* Cases in order of first appearance, each metric that both sides measured. Cases seen on one
 * side only are listed in "one_sided". */
static int add_cases(json_t *doc, const gate_raw *raw, unsigned long B, size_t *unsteady,
                     golden_error *err)
{
    json_t *cases = json_array(), *lone = json_array(), *tp = json_array();
    if (!cases || !lone || !tp || json_object_set_new(doc, "cases", cases) ||
        json_object_set_new(doc, "one_sided", lone) || json_object_set_new(doc, "throughput", tp)) {
        return gate_oom(err);
    }
    *unsteady = 0;
    for (size_t i = 0; i < raw->ng; i++) {
        const gate_group *g = &raw->g[i];
        *unsteady += g->flagged_unsteady + g->band_unsteady;
        json_t *row = throughput_row(g);
        if (!row || json_array_append_new(tp, row))
            return gate_oom(err);
        size_t clen = strlen(g->case_id);
        char *key = malloc(clen + 24); /* any length: a case is never skipped */
        if (!key)
            return gate_oom(err);
        /* the other side of the same case at the same level (issue 33) */
        size_t klen = gate_group_key(key, g->case_id, clen, !g->side, g->concurrency);
        uint64_t other;
        bool paired = lg_strmap_get(&raw->map, key, klen, &other);
        free(key);
        if (!paired) {
            json_t *e = json_pack("{s:s,s:I,s:s}", "case_id", g->case_id, "concurrency",
                                  (json_int_t)g->concurrency, "side", side_names[g->side]);
            if (!e || json_array_append_new(lone, e))
                return gate_oom(err);
            continue;
        }
        if (g->side != 0)
            continue; /* each pair once, in the baseline's order */
        const gate_group *c = &raw->g[other];
        unsigned metrics = pair_metrics(g, c);
        for (int m = 0; m < GOLDEN_GATE_METRICS; m++) {
            if (!(metrics & (1u << m)))
                continue;
            json_t *e = case_entry(g, c, m, B);
            if (!e || json_array_append_new(cases, e))
                return gate_oom(err);
        }
    }
    if (json_array_size(lone) == 0)
        json_object_del(doc, "one_sided");
    return 0;
}

/* Whether some case has steady runs on both sides (else there is nothing to compare). */
static bool any_compared(const json_t *cases)
{
    size_t i;
    json_t *c;
    json_array_foreach((json_t *)cases, i, c)
        if (json_integer_value(json_object_get(json_object_get(c, "baseline"), "n")) > 0 &&
            json_integer_value(json_object_get(json_object_get(c, "candidate"), "n")) > 0)
            return true;
    return false;
}

/* A Chrome trace's row figures: time, bytes by kind, stall classes (-1 out of memory). */
static int chrome_row(json_t *e, const gate_trace *t, const gate_trace_row *r)
{
    if (!t->chrome)
        return 0;
    if (gate_set_real(e, "time_us", r->time_us))
        return -1;
    for (int k = 0; k < GATE_BYTE_KINDS; k++) {
        char key[16];
        snprintf(key, sizeof key, "bytes_%s", gate_byte_kinds[k]);
        if ((r->kinds_present & (1u << k)) && gate_set_int(e, key, (long long)r->kind_bytes[k]))
            return -1;
    }
    if (!r->stalls_present)
        return 0;
    json_t *st = json_object();
    if (!st || json_object_set_new(e, "stall_cycles", st))
        return -1;
    for (size_t k = 0; k < t->nstalls; k++)
        if ((r->stalls_present & (1u << k)) &&
            gate_set_int(st, t->stall_names[k], (long long)r->stall[k]))
            return -1;
    return 0;
}

/* A Chrome trace's power windows per side and chip and its count of events without figures. */
static int chrome_trace(json_t *tr, const gate_trace *t)
{
    if (gate_set_str(tr, "format", "chrome-trace-event") ||
        gate_set_int(tr, "ignored_events", (long long)t->ignored))
        return -1;
    if (!t->npower)
        return 0;
    json_t *pw = json_array();
    if (!pw || json_object_set_new(tr, "power_w", pw))
        return -1;
    for (size_t i = 0; i < t->npower; i++) {
        const gate_trace_power *p = &t->power[i];
        double mean = p->span_us > 0 ? p->weighted / p->span_us : p->first;
        json_t *e = json_pack("{s:s,s:I,s:I}", "side", side_names[p->side], "chip",
                              (json_int_t)p->chip, "samples", (json_int_t)p->samples);
        if (!e || json_array_append_new(pw, e) || gate_set_real(e, "min", p->min) ||
            gate_set_real(e, "mean", mean) || gate_set_real(e, "max", p->max) ||
            gate_set_real(e, "span_us", p->span_us))
            return -1;
    }
    return 0;
}

/* The trace's figures: per side, chip and family; MoE buckets; the target family's share. */
static int add_trace(json_t *doc, const gate_trace *t, const char *target, golden_error *err)
{
    json_t *tr = json_object(), *rows = json_array(), *share = json_array();
    if (!tr || !rows || !share || json_object_set_new(doc, "trace", tr) ||
        json_object_set_new(tr, "per_chip", rows) || json_object_set_new(tr, "target_share", share) ||
        gate_set_int(tr, "rows", (long long)t->lines) ||
        json_object_set_new(tr, "sided", json_boolean(t->sided)))
        return gate_oom(err);
    unsigned long long total[3] = {0}, tgt[3] = {0};
    int present[3] = {0};
    for (size_t i = 0; i < t->n; i++) {
        const gate_trace_row *r = &t->rows[i];
        json_t *e = json_pack("{s:s,s:I,s:s,s:I,s:I}", "side", side_names[r->side], "chip",
                              (json_int_t)r->chip, "family", r->family, "ops", (json_int_t)r->ops,
                              "cycles", (json_int_t)r->cycles);
        if (!e || (r->has_bytes && gate_set_int(e, "bytes", (long long)r->bytes)) ||
            chrome_row(e, t, r) || json_array_append_new(rows, e))
            return gate_oom(err);
        total[r->side] += r->cycles;
        present[r->side] = 1;
        if (target && !strcmp(r->family, target))
            tgt[r->side] += r->cycles;
    }
    for (int s = 0; s < 3; s++) {
        if (!present[s])
            continue;
        json_t *e = json_pack("{s:s,s:s,s:I,s:I}", "side", side_names[s], "family",
                              target ? target : "", "cycles", (json_int_t)tgt[s], "graph_cycles",
                              (json_int_t)total[s]);
        if (!e || gate_set_real(e, "share", total[s] ? (double)tgt[s] / (double)total[s] : NAN) ||
            json_array_append_new(share, e))
            return gate_oom(err);
    }
    if (t->chrome && chrome_trace(tr, t))
        return gate_oom(err);
    if (!t->has_tokens)
        return 0;
    json_t *bk = json_array();
    if (!bk || json_object_set_new(tr, "moe_buckets", bk))
        return gate_oom(err);
    for (int s = 0; s < 3; s++)
        for (int b = 0; b < GATE_BUCKETS; b++) {
            if (!t->bucket_launches[s][b])
                continue;
            json_t *e = json_pack("{s:s,s:s,s:I,s:I,s:I}", "side", side_names[s], "bucket",
                                  gate_bucket_names[b], "launches",
                                  (json_int_t)t->bucket_launches[s][b], "tokens",
                                  (json_int_t)t->bucket_tokens[s][b], "cycles",
                                  (json_int_t)t->bucket_cycles[s][b]);
            double cpt = t->bucket_tokens[s][b]
                             ? (double)t->bucket_cycles[s][b] / (double)t->bucket_tokens[s][b]
                             : NAN;
            if (!e || gate_set_real(e, "cycles_per_token", cpt) || json_array_append_new(bk, e))
                return gate_oom(err);
        }
    return 0;
}

/* experiment_id and operator_family of hypothesis.yaml (both NULL-able; caller frees). */
static int read_hypothesis(const char *dir, char **id, char **family, golden_error *err)
{
    *id = *family = NULL;
    char *p = gate_path(dir, "hypothesis.yaml");
    golden_doc *doc = NULL;
    if (!p)
        return gate_oom(err);
    int rc = golden_doc_load_file(p, &doc, err);
    free(p);
    if (rc != 0)
        return -1;
    json_t *root = golden_doc_root(doc);
    const char *i = json_string_value(json_object_get(root, "experiment_id"));
    const char *f = json_string_value(json_object_get(root, "operator_family"));
    if (!i) {
        golden_fail_where(err, GOLDEN_EINVAL, "experiment_id missing", "%s",
                          golden_doc_name(doc));
        golden_doc_free(doc);
        return -1;
    }
    *id = strdup(i);
    *family = f ? strdup(f) : NULL;
    golden_doc_free(doc);
    if (!*id || (f && !*family)) {
        free(*id);
        free(*family);
        return gate_oom(err);
    }
    return 0;
}

/* The raw file's {path, sha256, bytes}: the hash taken beside decide's pass, else hashed now. */
static json_t *raw_file_ref(const char *dir, const gate_raw *raw, golden_error *err)
{
    const char *rel = "performance/raw-requests.jsonl";
    if (!raw->raw_hashed)
        return file_ref(dir, rel, err);
    json_t *o = json_object();
    if (!o || gate_set_str(o, "path", rel) || gate_set_str(o, "sha256", raw->raw_sha256) ||
        gate_set_int(o, "bytes", raw->raw_bytes)) {
        json_decref(o);
        gate_oom(err);
        return NULL;
    }
    return o;
}

static int summary_head(json_t *doc, const char *dir, const char *id, const gate_trace *t,
                        const gate_raw *raw, const golden_gate_opts *o, golden_error *err)
{
    bool power = raw->power_lines > 0;
    json_t *raw_ref = raw_file_ref(dir, raw, err);
    if (!raw_ref)
        return -1;
    json_t *tr_ref = NULL;
    if (t->path && !(tr_ref = file_ref(dir, t->path, err))) {
        json_decref(raw_ref);
        return -1;
    }
    char seed[32];
    snprintf(seed, sizeof seed, "%llu", (unsigned long long)o->seed);
    int bad = gate_set_str(doc, "schema", "calculet-perf-summary/v1") ||
              gate_set_str(doc, "experiment_id", id) ||
              gate_set_int(doc, "warmup_runs", GOLDEN_GATE_MIN_WARMUPS) ||
              gate_set_int(doc, "measured_runs_min", GOLDEN_GATE_MIN_MEASURED) ||
              gate_set_int(doc, "unsteady_samples", 0) ||
              json_object_set_new(doc, "raw_requests", raw_ref) ||
              (tr_ref && json_object_set_new(doc, "device_trace", tr_ref)) ||
              gate_set_str(doc, "attribution", t->lines ? "per_op" : "whole_graph_only") ||
              json_object_set_new(doc, "bootstrap",
                                  json_pack("{s:s,s:s,s:I}", "generator",
                                            golden_gate_boot_gen_name(gate_generator(o)),
                                            "seed", seed, "resamples", (json_int_t)o->bootstrap)) ||
              json_object_set_new(doc, "steady_band",
                                  json_pack("{s:f,s:f}", "clock_pct", o->clock_band_pct,
                                            "temperature_c", o->temp_band_c));
    /* the power band only when some request carries power_w (else today's summary) */
    if (!bad && power)
        bad = gate_set_real(json_object_get(doc, "steady_band"), "power_pct", gate_power_band(o));
    return bad ? gate_oom(err) : 0;
}

int golden_gate_summarize(const char *dir, const golden_gate_opts *o, json_t **out,
                          golden_error *err)
{
    return gate_summarize_raw(dir, o, NULL, out, err);
}

int gate_summarize_raw(const char *dir, const golden_gate_opts *o, gate_raw *pre, json_t **out,
                       golden_error *err)
{
    *out = NULL;
    gate_raw raw;
    memset(&raw, 0, sizeof raw);
    if (pre) {
        raw = *pre; /* taken over: freed here */
        memset(pre, 0, sizeof *pre);
    }
    if (!o || o->version < 2 || o->version > GOLDEN_GATE_OPTS_VERSION || o->bootstrap == 0) {
        gate_raw_free(&raw);
        return golden_fail_what(err, GOLDEN_EINVAL, NULL,
                                o && o->bootstrap == 0 && o->version >= 2 &&
                                        o->version <= GOLDEN_GATE_OPTS_VERSION
                                    ? "--bootstrap must be at least 1"
                                    : "golden_gate_opts: unknown version");
    }
    char *id = NULL, *family = NULL, *rawp = gate_path(dir, "performance/raw-requests.jsonl");
    gate_trace t;
    memset(&t, 0, sizeof t);
    json_t *doc = NULL;
    int rc = -1;
    if (!rawp) {
        gate_oom(err);
        goto out;
    }
    if (read_hypothesis(dir, &id, &family, err) != 0 || gate_trace_read(dir, &t, err) != 0 ||
        (!raw.spill && gate_raw_read(dir, rawp, &raw, err) != 0) ||
        gate_raw_stats(&raw, o, err) != 0)
        goto out;
    if (raw.ng == 0) {
        golden_fail_where(err, GOLDEN_EINVAL, "no requests", "%s", rawp);
        goto out;
    }
    size_t unsteady = 0;
    if (!(doc = json_object())) {
        gate_oom(err);
        goto out;
    }
    if (summary_head(doc, dir, id, &t, &raw, o, err) != 0 || add_cases(doc, &raw, o->bootstrap, &unsteady, err) != 0 ||
        (t.path && add_trace(doc, &t, family, err) != 0))
        goto out;
    if (gate_set_int(doc, "unsteady_samples", (long long)unsteady) ||
        (raw.repeated && gate_set_int(doc, "repeated_request_ids", (long long)raw.repeated))) {
        gate_oom(err);
        goto out;
    }
    if (!any_compared(json_object_get(doc, "cases"))) {
        golden_fail_where(err, GOLDEN_EINVAL, "no case was measured on both sides (steady runs "
                          "on each): nothing to compare", "%s", rawp);
        goto out;
    }
    *out = doc;
    doc = NULL;
    rc = 0;
out:
    json_decref(doc);
    gate_raw_free(&raw);
    gate_trace_free(&t);
    free(id);
    free(family);
    free(rawp);
    return rc;
}
