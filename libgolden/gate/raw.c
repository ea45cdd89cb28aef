/* Streams performance/raw-requests.jsonl once: warm-ups and unsteady-flagged runs are counted,
 * measured steady-flagged samples go to an anonymous spill file, so memory stays bounded. */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "gate/gate_int.h"
#include <unistd.h>

#include "golden/doc.h"
#include "exp/check_internal.h"
#include "util/pool.h"

const char *const lg_gate_metric_names[GOLDEN_GATE_METRICS] = {
    "ttft_ms", "tpot_ms", "client_queue_ms", "service_queue_ms", "input_prepare_ms", "h2d_ms",
    "npu_wait_ms", "d2h_ms", "logits_conversion_ms", "sampling_ms", "stream_flush_ms"};
static const char *const stage_names[GOLDEN_GATE_METRICS - 2] = {
    "client_queue", "service_queue", "input_prepare", "h2d", "npu_wait", "d2h",
    "logits_conversion", "sampling", "stream_flush"};

/* One spilled sample: its group, the span of its clock and temperature readings (NaN when it
 * has none) and the eleven metrics (NaN when absent). */
typedef struct {
    uint64_t group;
    double clock[2], temp[2];
    double power, run; /* power_w (NaN when absent) and the run number */
    double m[GOLDEN_GATE_METRICS];
} spill_rec;

int gate_oom(golden_error *err)
{
    return golden_fail_what(err, GOLDEN_ENOMEM, NULL, "out of memory");
}

void gate_raw_free(gate_raw *raw)
{
    for (size_t i = 0; i < raw->ng; i++) {
        free(raw->keys[i]);
        free(raw->g[i].boot[0]);
        free(raw->g[i].boot[1]);
    }
    free(raw->keys);
    free(raw->g);
    lg_strmap_free(&raw->map);
    for (size_t i = 0; i < raw->nids; i++)
        free(raw->ids[i]);
    free(raw->ids);
    lg_strmap_free(&raw->id_map);
    for (size_t i = 0; i < raw->nphases; i++)
        free(raw->phase_keys[i]);
    free(raw->phase_keys);
    lg_strmap_free(&raw->phase_map);
    if (raw->spill)
        fclose(raw->spill);
    memset(raw, 0, sizeof *raw);
}

size_t gate_group_key(char *buf, const char *case_id, size_t clen, int side, long long level)
{
    memcpy(buf, case_id, clen);
    buf[clen] = 0;
    buf[clen + 1] = (char)('0' + side);
    return clen + 2 + (size_t)snprintf(buf + clen + 2, 22, "%lld", level);
}

void gate_case_label(char *buf, size_t n, const char *case_id, long long level)
{
    if (level == 1)
        snprintf(buf, n, "%s", case_id ? case_id : "?");
    else
        snprintf(buf, n, "%s at concurrency %lld", case_id ? case_id : "?", level);
}

/* The group of (case, side, level): the same case at two concurrency levels is two groups. */
static long find_group(gate_raw *raw, const char *case_id, size_t clen, int side, long long level)
{
    char stack[512], *key = clen + 24 <= sizeof stack ? stack : malloc(clen + 24);
    if (!key)
        return -1;
    size_t klen = gate_group_key(key, case_id, clen, side, level);
    uint64_t v;
    if (lg_strmap_get(&raw->map, key, klen, &v)) {
        if (key != stack)
            free(key);
        return (long)v;
    }
    if (raw->ng == raw->cap) {
        size_t nc = raw->cap ? 2 * raw->cap : 16;
        gate_group *ng = realloc(raw->g, nc * sizeof *ng);
        char **nk = ng ? realloc(raw->keys, nc * sizeof *nk) : NULL;
        if (ng)
            raw->g = ng;
        if (!nk) {
            if (key != stack)
                free(key);
            return -1;
        }
        raw->keys = nk;
        raw->cap = nc;
    }
    char *own = malloc(klen + 1);
    if (!own) {
        if (key != stack)
            free(key);
        return -1;
    }
    memcpy(own, key, klen);
    own[klen] = 0;
    if (key != stack)
        free(key);
    if (lg_strmap_put(&raw->map, own, klen, raw->ng, NULL) < 0) {
        free(own);
        return -1;
    }
    gate_group *g = &raw->g[raw->ng];
    memset(g, 0, sizeof *g);
    g->case_id = own;
    g->side = side;
    g->concurrency = level;
    raw->keys[raw->ng] = own;
    return (long)raw->ng++;
}

/* Span [min, max] of an array of readings; NaN when absent or empty. */
static int reading_span(json_t *arr, double span[2])
{
    span[0] = span[1] = NAN;
    if (!arr)
        return 0;
    if (!json_is_array(arr))
        return -1;
    size_t i;
    json_t *v;
    json_array_foreach(arr, i, v) {
        if (!json_is_number(v))
            return -1;
        double x = json_number_value(v);
        if (isnan(span[0]) || x < span[0])
            span[0] = x;
        if (isnan(span[1]) || x > span[1])
            span[1] = x;
    }
    return 0;
}

static int line_fail(golden_error *err, const golden_doc *d, const json_t *parent,
                     const char *key, const char *what)
{
    char where[1200];
    if (parent && key)
        golden_doc_child_where(d, parent, key, 0, where, sizeof where);
    else
        golden_doc_where(d, golden_doc_root(d), where, sizeof where);
    return golden_fail_where(err, GOLDEN_EINVAL, what, "%s", where);
}

/* The metrics of one request; -1 with err on a malformed value. */
static int line_metrics(const golden_doc *d, json_t *o, spill_rec *r, golden_error *err)
{
    for (int m = 0; m < GOLDEN_GATE_METRICS; m++)
        r->m[m] = NAN;
    const char *top[2] = {"ttft_ms", "tpot_ms"};
    for (int m = 0; m < 2; m++) {
        json_t *v = json_object_get(o, top[m]);
        if (!v)
            continue;
        if (!json_is_number(v) || !(json_number_value(v) >= 0))
            return line_fail(err, d, o, top[m], "ttft_ms and tpot_ms must be numbers >= 0");
        r->m[m] = json_number_value(v);
    }
    json_t *stages = json_object_get(o, "stages");
    if (!json_is_object(stages))
        return line_fail(err, d, o, stages ? "stages" : NULL,
                         "stages (an object of the section 7 stages) is required");
    for (int s = 0; s < GOLDEN_GATE_METRICS - 2; s++) {
        json_t *st = json_object_get(stages, stage_names[s]);
        if (!st)
            continue;
        json_t *a = json_object_get(st, "start_ns"), *b = json_object_get(st, "end_ns");
        if (!json_is_integer(a) || !json_is_integer(b) ||
            json_integer_value(b) < json_integer_value(a)) {
            char what[160];
            snprintf(what, sizeof what, "stage %s needs integer start_ns <= end_ns",
                     stage_names[s]);
            return line_fail(err, d, stages, stage_names[s], what);
        }
        r->m[2 + s] = (double)(json_integer_value(b) - json_integer_value(a)) / 1e6;
    }
    return 0;
}

/* Count or spill one sample of group gi. */
static int take_sample(gate_raw *raw, long gi, int warmup, int steady, const spill_rec *r,
                       golden_error *err)
{
    gate_group *g = &raw->g[gi];
    if (!warmup)
        for (int m = 0; m < GOLDEN_GATE_METRICS; m++)
            g->measured_metrics |= !isnan(r->m[m]) ? 1u << m : 0u;
    if (warmup)
        g->warmups++;
    else if (!steady)
        g->flagged_unsteady++;
    else {
        if (fwrite(r, sizeof *r, 1, raw->spill) != 1)
            return golden_fail_what(err, golden_code_from_errno(errno), NULL,
                                    "cannot write the spill file: %s", strerror(errno));
        g->spilled++;
    }
    return 0;
}

/* A measured line into its group's throughput window (issue 33): the earliest
 * client_queue.start_ns and the latest stream_flush.end_ns (line_metrics checks their
 * types first; a line without them is untimed, counted). */
static int throughput_line(gate_group *g, json_t *o, json_t *ot, bool ok)
{
    json_t *st = json_object_get(o, "stages");
    json_t *a = json_object_get(json_object_get(st, "client_queue"), "start_ns");
    json_t *b = json_object_get(json_object_get(st, "stream_flush"), "end_ns");
    if (json_is_integer(a) && json_is_integer(b)) {
        long long s = json_integer_value(a), e = json_integer_value(b);
        if (!g->tp_any || s < g->tp_start)
            g->tp_start = s;
        if (!g->tp_any || e > g->tp_end)
            g->tp_end = e;
        g->tp_any = true;
    } else {
        g->tp_untimed++;
    }
    if (!ok)
        return 0;
    g->tp_ok++;
    if (!ot) {
        g->tp_tokens_missing++;
        return 0;
    }
    if (json_integer_value(ot) > LLONG_MAX - g->tp_tokens)
        return -1;
    g->tp_tokens += json_integer_value(ot);
    return 0;
}

/* A request_id seen before: 1 (the line is not another run), 0 new, -1 out of memory. */
static int repeated_id(gate_raw *raw, const char *id, size_t len, size_t line_no)
{
    if (raw->nids == raw->capids) {
        size_t nc = raw->capids ? 2 * raw->capids : 256;
        char **n = realloc(raw->ids, nc * sizeof *n);
        if (!n)
            return -1;
        raw->ids = n;
        raw->capids = nc;
    }
    char *copy = malloc(len + 1);
    if (!copy)
        return -1;
    memcpy(copy, id, len + 1);
    uint64_t first;
    int put = lg_strmap_put(&raw->id_map, copy, len, line_no, &first);
    if (put != 0) {
        free(copy);
        if (put < 0)
            return -1;
        if (raw->repeated++ == 0) {
            raw->first_repeat_line = line_no;
            raw->first_repeat_of = (size_t)first;
        }
        return 1;
    }
    raw->ids[raw->nids++] = copy;
    return 0;
}

/* The latency a request of this case must carry: ttft_ms for a prefill case, tpot_ms for a
 * decode case (golden/input-manifest.jsonl's phase); either when the case's phase is unknown. */
static int phase_of(const gate_raw *raw, const char *case_id, size_t len)
{
    uint64_t ph;
    return lg_strmap_get(&raw->phase_map, case_id, len, &ph) ? (int)ph : -1;
}

/* What a parse worker works out of a line beforehand (gate_raw_prep): its metrics, when
 * line_metrics takes them without an error. */
typedef struct {
    bool metrics_ok;
    double m[GOLDEN_GATE_METRICS];
} line_pre;
_Static_assert(sizeof(line_pre) <= LG_EXP_HOOK_SLOT, "the hook's slot holds a line_pre");

void gate_raw_prep(const void *raw, const golden_doc *d, void *slot)
{
    (void)raw;
    line_pre *p = slot;
    spill_rec r;
    golden_error e;
    json_t *o = golden_doc_root(d);
    p->metrics_ok = json_is_object(o) && line_metrics(d, o, &r, &e) == 0;
    if (p->metrics_ok)
        memcpy(p->m, r.m, sizeof p->m);
}

/* One line of raw-requests.jsonl, parsed by the document layer's strict reader (pre: what
 * gate_raw_prep found, or NULL). */
static int request_line_pre(gate_raw *raw, golden_doc *d, size_t line_no, const line_pre *pre,
                            golden_error *err)
{
    json_t *o = golden_doc_root(d);
    raw->lines = line_no;
    if (!json_is_object(o))
        return line_fail(err, d, NULL, NULL, "a raw request must be a JSON object");
    json_t *cid = json_object_get(o, "case_id"), *side = json_object_get(o, "side");
    json_t *wu = json_object_get(o, "warmup"), *st = json_object_get(o, "steady");
    json_t *rid = json_object_get(o, "request_id"), *run = json_object_get(o, "run");
    const char *sd = json_string_value(side);
    if (!json_is_string(rid) || json_string_length(rid) == 0 || !json_is_integer(run) ||
        json_integer_value(run) < 0 || !json_is_string(cid) || json_string_length(cid) == 0 ||
        !sd || (strcmp(sd, "baseline") && strcmp(sd, "candidate")) || !json_is_boolean(wu) ||
        !json_is_boolean(st))
        return line_fail(err, d, NULL, NULL,
                         "needs request_id, run (integer >= 0), case_id, side (baseline or "
                         "candidate), warmup and steady (booleans)");
    json_t *oc = json_object_get(o, "outcome");
    const char *outcome = oc ? json_string_value(oc) : "ok";
    if (!outcome || (strcmp(outcome, "ok") && strcmp(outcome, "timeout") &&
                     strcmp(outcome, "error")))
        return line_fail(err, d, o, "outcome", "outcome must be ok, timeout or error");
    int rep = repeated_id(raw, json_string_value(rid), json_string_length(rid), line_no);
    if (rep < 0)
        return gate_oom(err);
    if (rep > 0)
        return 0; /* counted once: the copy is not another run */
    /* the concurrency level (issue 33): absent is 1, as the raw schema's meaning */
    json_t *cc = json_object_get(o, "concurrency");
    if (cc && (!json_is_integer(cc) || json_integer_value(cc) < 1))
        return line_fail(err, d, o, "concurrency",
                         "concurrency must be an integer >= 1 (the number of requests in flight)");
    long gi = find_group(raw, json_string_value(cid), json_string_length(cid),
                         strcmp(sd, "candidate") == 0, cc ? json_integer_value(cc) : 1);
    if (gi < 0)
        return gate_oom(err);
    gate_group *g = &raw->g[gi];
    json_t *ot = json_object_get(o, "output_tokens");
    if (ot && (!json_is_integer(ot) || json_integer_value(ot) < 0))
        return line_fail(err, d, o, "output_tokens", "output_tokens must be an integer >= 0");
    long long tokens = ot ? json_integer_value(ot) : 0;
    if (tokens > g->max_output_tokens)
        g->max_output_tokens = tokens;
    spill_rec r;
    memset(&r, 0, sizeof r);
    r.group = (uint64_t)gi;
    if (pre && pre->metrics_ok)
        memcpy(r.m, pre->m, sizeof r.m); /* line_metrics on the worker, without an error */
    else if (line_metrics(d, o, &r, err) != 0)
        return -1;
    if (!json_is_true(wu) && throughput_line(g, o, ot, strcmp(outcome, "ok") == 0) != 0)
        return line_fail(err, d, o, "output_tokens",
                         "the output_tokens of the case's requests overflow a 64-bit sum");
    if (reading_span(json_object_get(o, "clock_mhz"), r.clock) != 0 ||
        reading_span(json_object_get(o, "chip_temperature_c"), r.temp) != 0)
        return line_fail(err, d, NULL, NULL,
                         "clock_mhz and chip_temperature_c must be arrays of numbers");
    json_t *pw = json_object_get(o, "power_w");
    if (pw && (!json_is_number(pw) || !(json_number_value(pw) >= 0)))
        return line_fail(err, d, o, "power_w", "power_w must be a number >= 0 (watts)");
    r.power = pw ? json_number_value(pw) : NAN;
    r.run = (double)json_integer_value(run);
    raw->power_lines += pw != NULL;
    int phase = phase_of(raw, json_string_value(cid), json_string_length(cid));
    if (strcmp(outcome, "ok") != 0) {
        /* A request that never delivered its latency is the worst latency, not a gap: +inf
         * in the percentiles of its case (a timeout dropped would flatter the P99). */
        if (isnan(r.m[0]))
            r.m[0] = INFINITY;
        if (isnan(r.m[1]) && (tokens > 1 || phase == 1))
            r.m[1] = INFINITY;
        if (!json_is_true(wu))
            g->failed++;
    } else if (phase == 0 ? isnan(r.m[0]) : phase == 1 ? isnan(r.m[1])
                                                       : isnan(r.m[0]) && isnan(r.m[1])) {
        return line_fail(err, d, NULL, NULL,
                         phase == 1 ? "a decode request needs tpot_ms (one that failed says "
                                      "outcome: timeout or error)"
                                    : "a prefill request needs ttft_ms (one that failed says "
                                      "outcome: timeout or error)");
    }
    return take_sample(raw, gi, json_is_true(wu), json_is_true(st), &r, err);
}

/* golden/input-manifest.jsonl's phase per case (absent file: no phases known). */
static int phase_line(void *ctx, golden_doc *d, size_t line_no, golden_error *err)
{
    (void)line_no;
    gate_raw *raw = ctx;
    json_t *o = golden_doc_root(d);
    const char *id = json_string_value(json_object_get(o, "case_id"));
    const char *ph = json_string_value(json_object_get(o, "phase"));
    if (!id || !ph)
        return 0; /* manifest-verify's schema rule judges the manifest itself */
    size_t len = strlen(id);
    if (raw->nphases == raw->capphases) {
        size_t nc = raw->capphases ? 2 * raw->capphases : 64;
        char **n = realloc(raw->phase_keys, nc * sizeof *n);
        if (!n)
            return gate_oom(err);
        raw->phase_keys = n;
        raw->capphases = nc;
    }
    char *copy = strdup(id);
    if (!copy)
        return gate_oom(err);
    int put = lg_strmap_put(&raw->phase_map, copy, len, strcmp(ph, "decode") == 0, NULL);
    if (put != 0)
        free(copy);
    else
        raw->phase_keys[raw->nphases++] = copy;
    return put < 0 ? gate_oom(err) : 0;
}

int gate_raw_open(const char *dir, gate_raw *raw, golden_error *err)
{
    memset(raw, 0, sizeof *raw);
    char *inputs = gate_path(dir, "golden/input-manifest.jsonl");
    if (!inputs)
        return gate_oom(err);
    int rc = access(inputs, F_OK) == 0 ? golden_doc_each_jsonl(inputs, phase_line, raw, err) : 0;
    free(inputs);
    if (rc != 0) {
        gate_raw_free(raw);
        return -1;
    }
    raw->spill = tmpfile();
    if (!raw->spill) {
        int e = errno;
        gate_raw_free(raw);
        return golden_fail_what(err, golden_code_from_errno(e), NULL,
                                "cannot create a spill file: %s", strerror(e));
    }
    return 0;
}

static int request_line(void *ctx, golden_doc *d, size_t line_no, golden_error *err)
{
    return request_line_pre(ctx, d, line_no, NULL, err);
}

int gate_raw_line(void *raw, golden_doc *d, size_t line_no, golden_error *err)
{
    return request_line(raw, d, line_no, err);
}

int gate_raw_line_pre(void *raw, golden_doc *d, size_t line_no, const void *slot,
                      golden_error *err)
{
    return request_line_pre(raw, d, line_no, slot, err);
}

int gate_raw_close(gate_raw *raw, golden_error *err)
{
    if (fflush(raw->spill) != 0) {
        gate_raw_free(raw);
        return golden_fail_what(err, GOLDEN_EIO, NULL, "cannot write the spill file");
    }
    return 0;
}

int gate_raw_read(const char *dir, const char *path, gate_raw *raw, golden_error *err)
{
    if (gate_raw_open(dir, raw, err) != 0)
        return -1;
    /* One strict reader for every JSON Lines file (docs/documents.md): the one manifest-verify
     * uses, so both read the same file the same way; bounded lines, never blocks on a FIFO. */
    if (golden_doc_each_jsonl(path, request_line, raw, err) != 0) {
        gate_raw_free(raw);
        return -1;
    }
    return gate_raw_close(raw, err);
}

/* ---- statistics, batch by batch ---- */

typedef struct {
    size_t group;
    double *vals[GOLDEN_GATE_METRICS];
    double *clock, *temp; /* per sample: centre of its span; spans kept for the band test */
    double *clock_lo, *clock_hi, *temp_lo, *temp_hi;
    double *power, *run;
    size_t n;
} batch_slot;

static void slot_free(batch_slot *s)
{
    for (int m = 0; m < GOLDEN_GATE_METRICS; m++)
        free(s->vals[m]);
    free(s->clock);
    free(s->temp);
    free(s->clock_lo);
    free(s->clock_hi);
    free(s->temp_lo);
    free(s->temp_hi);
    free(s->power);
    free(s->run);
}

static int slot_alloc(batch_slot *s, size_t group, size_t n)
{
    memset(s, 0, sizeof *s);
    s->group = group;
    size_t k = n ? n : 1;
    int bad = 0;
    for (int m = 0; m < GOLDEN_GATE_METRICS; m++)
        bad |= !(s->vals[m] = malloc(k * sizeof(double)));
    bad |= !(s->clock = malloc(k * sizeof(double)));
    bad |= !(s->temp = malloc(k * sizeof(double)));
    bad |= !(s->clock_lo = malloc(k * sizeof(double)));
    bad |= !(s->clock_hi = malloc(k * sizeof(double)));
    bad |= !(s->temp_lo = malloc(k * sizeof(double)));
    bad |= !(s->temp_hi = malloc(k * sizeof(double)));
    bad |= !(s->power = malloc(k * sizeof(double)));
    bad |= !(s->run = malloc(k * sizeof(double)));
    return bad ? -1 : 0;
}

/* Median of the finite values among x[0..n) (x is reordered); NaN when none. */
static double finite_median(double *x, size_t n, double *scratch)
{
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (isfinite(x[i]))
            x[k++] = x[i];
    if (k == 0)
        return NAN;
    golden_gate_describe_t d;
    golden_gate_describe(x, k, scratch, &d);
    return d.median;
}

/* Power (docs/exp-gate.md): the reference is the median power_w of the case and side; a sample
 * more than power_band_pct % from it is unsteady, and so is every sample with a reading when
 * the least-squares line of the in-band readings over the run order changes by more than that
 * much across their runs (a ramp inside the band is not steady). */
static void power_band(const batch_slot *s, gate_group *g, const golden_gate_opts *o,
                       unsigned char *keep, double *scratch)
{
    size_t k = 0;
    double rs, ps, rmin, rmax;
    for (size_t i = 0; i < s->n; i++)
        if (isfinite(s->power[i]))
            scratch[k++] = s->power[i];
    g->power_ref = g->power_drift = NAN;
    if (!k)
        return;
    double *x = scratch + s->n; /* the second half of scratch (slot_stats gives 2n) */
    golden_gate_describe_t d;
    golden_gate_describe(scratch, k, x, &d);
    g->power_ref = d.median;
    /* the line is fitted to the in-band readings: one spike is a spike, not a ramp */
    double tol = fabs(g->power_ref) * gate_power_band(o) / 100.0;
    size_t m = 0;
    rs = ps = 0;
    rmin = INFINITY;
    rmax = -INFINITY;
    for (size_t i = 0; i < s->n; i++)
        if (isfinite(s->power[i]) && fabs(s->power[i] - g->power_ref) <= tol) {
            m++;
            rs += s->run[i];
            ps += s->power[i];
            rmin = fmin(rmin, s->run[i]);
            rmax = fmax(rmax, s->run[i]);
        }
    double rm = m ? rs / (double)m : 0, pm = m ? ps / (double)m : 0, sxy = 0, sxx = 0;
    for (size_t i = 0; i < s->n; i++)
        if (isfinite(s->power[i]) && fabs(s->power[i] - g->power_ref) <= tol) {
            sxy += (s->run[i] - rm) * (s->power[i] - pm);
            sxx += (s->run[i] - rm) * (s->run[i] - rm);
        }
    g->power_drift = sxx > 0 ? sxy / sxx * (rmax - rmin) : 0;
    bool ramp = fabs(g->power_drift) > tol;
    for (size_t i = 0; i < s->n; i++)
        if (isfinite(s->power[i]) && (ramp || fabs(s->power[i] - g->power_ref) > tol))
            keep[i] = 0;
}

/* A ramp of clock or temperature over the run order (issue 26, as power_band's): the
 * least-squares line of the in-band samples' reading centres ((lo + hi) / 2), over their runs,
 * changing by more than tol across those runs marks every sample with a reading unsteady (a
 * steady band is not a ramp). */
static void reading_trend(const batch_slot *s, const double *lo, const double *hi, double tol,
                          unsigned char *keep, const unsigned char *seen)
{
    size_t m = 0;
    double rs = 0, vs = 0, rmin = INFINITY, rmax = -INFINITY;
    for (size_t i = 0; i < s->n; i++)
        if (isfinite(lo[i]) && !seen[i]) {
            m++;
            rs += s->run[i];
            vs += (lo[i] + hi[i]) / 2;
            rmin = fmin(rmin, s->run[i]);
            rmax = fmax(rmax, s->run[i]);
        }
    if (m < 2)
        return;
    double rm = rs / (double)m, vm = vs / (double)m, sxy = 0, sxx = 0;
    for (size_t i = 0; i < s->n; i++)
        if (isfinite(lo[i]) && !seen[i]) {
            sxy += (s->run[i] - rm) * ((lo[i] + hi[i]) / 2 - vm);
            sxx += (s->run[i] - rm) * (s->run[i] - rm);
        }
    double drift = sxx > 0 ? sxy / sxx * (rmax - rmin) : 0;
    if (!(fabs(drift) > tol))
        return;
    for (size_t i = 0; i < s->n; i++)
        if (isfinite(lo[i]))
            keep[i] = 0;
}

/* The steady band of one case and side (docs/exp-gate.md): the reference clock is the median of
 * the samples' clock centres, the reference temperature likewise; a sample with any clock
 * reading more than clock_band_pct % from the reference, or any temperature reading more than
 * temp_band_c from it, is unsteady. Returns a mask (1 = in band) in keep. */
static int slot_band(batch_slot *s, gate_group *g, const golden_gate_opts *o, unsigned char *keep,
                     double *scratch)
{
    g->clock_ref = finite_median(s->clock, s->n, scratch);
    g->temp_ref = finite_median(s->temp, s->n, scratch);
    size_t out = 0;
    unsigned char *seen = calloc(s->n ? s->n : 1, 1); /* out of the clock/temperature band */
    if (!seen)
        return -1;
    for (size_t i = 0; i < s->n; i++) {
        int ok = 1;
        if (isfinite(g->clock_ref) && isfinite(s->clock_lo[i])) {
            double tol = fabs(g->clock_ref) * o->clock_band_pct / 100.0;
            ok &= s->clock_lo[i] >= g->clock_ref - tol && s->clock_hi[i] <= g->clock_ref + tol;
        }
        if (isfinite(g->temp_ref) && isfinite(s->temp_lo[i]))
            ok &= s->temp_lo[i] >= g->temp_ref - o->temp_band_c &&
                  s->temp_hi[i] <= g->temp_ref + o->temp_band_c;
        keep[i] = (unsigned char)ok;
        seen[i] = (unsigned char)!ok;
        out += !ok;
    }
    if (isfinite(g->clock_ref))
        reading_trend(s, s->clock_lo, s->clock_hi, fabs(g->clock_ref) * o->clock_band_pct / 100.0,
                      keep, seen);
    if (isfinite(g->temp_ref))
        reading_trend(s, s->temp_lo, s->temp_hi, o->temp_band_c, keep, seen);
    power_band(s, g, o, keep, scratch);
    for (size_t i = 0; i < s->n; i++)
        out += !keep[i] && !seen[i];
    g->band_unsteady = out;
    free(seen);
    return 0;
}

static int slot_stats(batch_slot *s, gate_group *g, const golden_gate_opts *o,
                      gate_boot_cache *boot, golden_error *err)
{
    size_t k = s->n ? s->n : 1;
    double *scratch = malloc(2 * k * sizeof *scratch);
    double *vals = malloc(k * sizeof *vals);
    unsigned char *keep = malloc(k);
    int rc = -1;
    if (!scratch || !vals || !keep) {
        gate_oom(err);
        goto out;
    }
    if (slot_band(s, g, o, keep, scratch) != 0) {
        gate_oom(err);
        goto out;
    }
    for (int m = 0; m < GOLDEN_GATE_METRICS; m++) {
        size_t n = 0;
        for (size_t i = 0; i < s->n; i++)
            if (keep[i] && !isnan(s->vals[m][i]))
                vals[n++] = s->vals[m][i];
        golden_gate_describe(vals, n, scratch, &g->d[m]);
        if (gate_boot_ci(boot, vals, n, o->bootstrap, o->seed, g->ci[m], err) != 0)
            goto out;
        if (m < 2 && n > 0 && o->bootstrap > 0) {
            if (!(g->boot[m] = malloc(o->bootstrap * sizeof(double)))) {
                gate_oom(err);
                goto out;
            }
            if (gate_boot_medians(boot, vals, n, o->bootstrap, GATE_DIFF_SEED(o->seed, g->side),
                                  g->boot[m], err) != 0)
                goto out;
        }
    }
    rc = 0;
out:
    free(scratch);
    free(vals);
    free(keep);
    return rc;
}

/* One pass over the spill for the groups of one batch (slot_of[group] = slot + 1, or 0). */
static int batch_pass(gate_raw *raw, const size_t *slot_of, batch_slot *slots, golden_error *err)
{
    if (fseek(raw->spill, 0, SEEK_SET) != 0)
        return golden_fail_what(err, GOLDEN_EIO, NULL, "cannot rewind the spill file");
    spill_rec r[256];
    size_t got;
    while ((got = fread(r, sizeof r[0], 256, raw->spill)) > 0)
        for (size_t i = 0; i < got; i++) {
            size_t sl = slot_of[r[i].group];
            if (!sl)
                continue;
            batch_slot *s = &slots[sl - 1];
            for (int m = 0; m < GOLDEN_GATE_METRICS; m++)
                s->vals[m][s->n] = r[i].m[m];
            s->clock_lo[s->n] = r[i].clock[0];
            s->clock_hi[s->n] = r[i].clock[1];
            s->clock[s->n] = (r[i].clock[0] + r[i].clock[1]) / 2;
            s->temp_lo[s->n] = r[i].temp[0];
            s->temp_hi[s->n] = r[i].temp[1];
            s->temp[s->n] = (r[i].temp[0] + r[i].temp[1]) / 2;
            s->power[s->n] = r[i].power;
            s->run[s->n] = r[i].run;
            s->n++;
        }
    if (ferror(raw->spill))
        return golden_fail_what(err, GOLDEN_EIO, NULL, "cannot read the spill file");
    return 0;
}

/* One batch's groups over the workers: each group's statistics depend on its own samples and
 * the seeds only (every bootstrap stream is seeded by the resample's index, not by a group's
 * turn), so which worker takes a group changes no bit. Each worker has its own bootstrap cache
 * (plans of the same n, B and seed are the same draws on every worker). */
typedef struct {
    gate_raw *raw;
    batch_slot *slots;
    const golden_gate_opts *o;
    gate_boot_cache *boot; /* one per worker */
} stats_job;

static int stats_task(void *ctx, size_t item, int worker, golden_error *err)
{
    stats_job *j = ctx;
    batch_slot *s = &j->slots[item];
    return slot_stats(s, &j->raw->g[s->group], j->o, &j->boot[worker], err);
}

int gate_raw_stats(gate_raw *raw, const golden_gate_opts *o, golden_error *err)
{
    /* Bytes a sample costs while its group is loaded: metrics, readings, and the scratch. */
    const size_t per_sample = (GOLDEN_GATE_METRICS + 8 + 4) * sizeof(double);
    size_t budget = o->memory_budget ? o->memory_budget : (size_t)256 << 20;
    int threads = o->threads > 0 ? o->threads : lg_cpu_count();
    if (threads > GOLDEN_POOL_MAX)
        threads = GOLDEN_POOL_MAX;
    size_t *slot_of = calloc(raw->ng ? raw->ng : 1, sizeof *slot_of);
    batch_slot *slots = calloc(raw->ng ? raw->ng : 1, sizeof *slots);
    gate_boot_cache *boot = calloc((size_t)threads, sizeof *boot);
    if (!slot_of || !slots || !boot) {
        free(slot_of);
        free(slots);
        free(boot);
        return gate_oom(err);
    }
    int rc = 0;
    for (int w = 0; w < threads; w++)
        gate_boot_cache_init(&boot[w], gate_generator(o), o->threads);
    for (size_t first = 0; first < raw->ng && rc == 0;) {
        size_t used = 0, ns = 0, last = first;
        while (last < raw->ng && (ns == 0 || used + raw->g[last].spilled * per_sample <= budget)) {
            used += raw->g[last].spilled * per_sample;
            if (slot_alloc(&slots[ns], last, raw->g[last].spilled) != 0) {
                rc = gate_oom(err);
                ns++;
                break;
            }
            slot_of[last] = ++ns;
            last++;
        }
        if (rc == 0)
            rc = batch_pass(raw, slot_of, slots, err);
        if (rc == 0) {
            /* several groups: one a worker, each bootstrap on its worker alone; one group: its
             * bootstrap's plans over the workers */
            int outer = ns < (size_t)threads ? (int)ns : threads;
            for (int w = 0; w < threads; w++)
                boot[w].threads = outer > 1 ? 1 : o->threads;
            stats_job job = {raw, slots, o, boot};
            rc = lg_parallel_for(ns, outer, stats_task, &job, err);
        }
        for (size_t s = 0; s < ns; s++) {
            slot_free(&slots[s]);
            slot_of[slots[s].group] = 0;
        }
        first = last;
    }
    for (int w = 0; w < threads; w++)
        gate_boot_cache_free(&boot[w]);
    free(boot);
    free(slot_of);
    free(slots);
    return rc;
}
