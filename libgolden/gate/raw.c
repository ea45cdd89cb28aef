/* Streams performance/raw-requests.jsonl once: warm-ups and unsteady-flagged runs are counted,
 * measured steady-flagged samples go to an anonymous spill file, so memory stays bounded. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "gate/gate_int.h"
#include "gate/rawscan.h"

const char *const golden_gate_metric_names[GOLDEN_GATE_METRICS] = {
    "ttft_ms", "tpot_ms", "client_queue_ms", "service_queue_ms", "input_prepare_ms", "h2d_ms",
    "npu_wait_ms", "d2h_ms", "logits_conversion_ms", "sampling_ms", "stream_flush_ms"};
static const char *const stage_names[GOLDEN_GATE_METRICS - 2] = {
    "client_queue", "service_queue", "input_prepare", "h2d", "npu_wait", "d2h",
    "logits_conversion", "sampling", "stream_flush"};

/* A line longer than this is refused (a raw request is about 1 KiB). */
#define RAW_MAX_LINE (16u << 20)

/* One spilled sample: its group, the span of its clock and temperature readings (NaN when it
 * has none) and the eleven metrics (NaN when absent). */
typedef struct {
    uint64_t group;
    double clock[2], temp[2];
    double m[GOLDEN_GATE_METRICS];
} spill_rec;

int gate_oom(golden_error *err)
{
    return golden_fail_what(err, GOLDEN_ENOMEM, NULL, "out of memory");
}

void gate_raw_free(gate_raw *raw)
{
    for (size_t i = 0; i < raw->ng; i++)
        free(raw->keys[i]);
    free(raw->keys);
    free(raw->g);
    golden_strmap_free(&raw->map);
    if (raw->spill)
        fclose(raw->spill);
    memset(raw, 0, sizeof *raw);
}

static long find_group(gate_raw *raw, const char *case_id, size_t clen, int side)
{
    char stack[512], *key = clen + 2 <= sizeof stack ? stack : malloc(clen + 2);
    if (!key)
        return -1;
    memcpy(key, case_id, clen);
    key[clen] = 0;
    key[clen + 1] = (char)('0' + side);
    uint64_t v;
    if (golden_strmap_get(&raw->map, key, clen + 2, &v)) {
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
    char *own = malloc(clen + 2);
    if (!own) {
        if (key != stack)
            free(key);
        return -1;
    }
    memcpy(own, key, clen + 2);
    if (key != stack)
        free(key);
    if (golden_strmap_put(&raw->map, own, clen + 2, raw->ng, NULL) < 0) {
        free(own);
        return -1;
    }
    gate_group *g = &raw->g[raw->ng];
    memset(g, 0, sizeof *g);
    g->case_id = own;
    g->side = side;
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

static int line_fail(golden_error *err, const char *path, size_t line, const char *what)
{
    return golden_fail_where(err, GOLDEN_EINVAL, what, "%s:%zu", path, line);
}

/* The metrics of one request; -1 with err on a malformed value. */
static int line_metrics(json_t *o, spill_rec *r, const char *path, size_t line, golden_error *err)
{
    for (int m = 0; m < GOLDEN_GATE_METRICS; m++)
        r->m[m] = NAN;
    const char *top[2] = {"ttft_ms", "tpot_ms"};
    for (int m = 0; m < 2; m++) {
        json_t *v = json_object_get(o, top[m]);
        if (!v)
            continue;
        if (!json_is_number(v) || json_number_value(v) < 0)
            return line_fail(err, path, line, "ttft_ms and tpot_ms must be numbers >= 0");
        r->m[m] = json_number_value(v);
    }
    json_t *stages = json_object_get(o, "stages");
    if (stages && !json_is_object(stages))
        return line_fail(err, path, line, "stages must be an object");
    for (int s = 0; stages && s < GOLDEN_GATE_METRICS - 2; s++) {
        json_t *st = json_object_get(stages, stage_names[s]);
        if (!st)
            continue;
        json_t *a = json_object_get(st, "start_ns"), *b = json_object_get(st, "end_ns");
        if (!json_is_integer(a) || !json_is_integer(b) ||
            json_integer_value(b) < json_integer_value(a)) {
            char what[160];
            snprintf(what, sizeof what, "stage %s needs integer start_ns <= end_ns",
                     stage_names[s]);
            return line_fail(err, path, line, what);
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

/* The fast path: 1 taken, 0 declined (parse with jansson), -1 error. */
static int scan_line(gate_raw *raw, const char *buf, size_t len, golden_error *err)
{
    gate_scan s;
    if (!gate_scan_line(buf, len, &s))
        return 0;
    long gi = find_group(raw, s.case_id, s.case_len, s.side);
    if (gi < 0)
        return gate_oom(err);
    if ((s.have & 4) && s.output_tokens > raw->g[gi].max_output_tokens)
        raw->g[gi].max_output_tokens = s.output_tokens;
    spill_rec r;
    memset(&r, 0, sizeof r);
    r.group = (uint64_t)gi;
    memcpy(r.m, s.m, sizeof r.m);
    memcpy(r.clock, s.clock, sizeof r.clock);
    memcpy(r.temp, s.temp, sizeof r.temp);
    return take_sample(raw, gi, s.warmup, s.steady, &r, err) == 0 ? 1 : -1;
}

static int take_line(gate_raw *raw, const char *buf, size_t len, const char *path, size_t line,
                     golden_error *err)
{
    int fast = scan_line(raw, buf, len, err);
    if (fast != 0)
        return fast > 0 ? 0 : -1;
    json_error_t je;
    json_t *o = json_loadb(buf, len, 0, &je);
    if (!o || !json_is_object(o)) {
        json_decref(o);
        char what[300];
        snprintf(what, sizeof what, "not a JSON object: %s", o ? "another value" : je.text);
        return line_fail(err, path, line, what);
    }
    int rc = -1;
    json_t *cid = json_object_get(o, "case_id"), *side = json_object_get(o, "side");
    json_t *wu = json_object_get(o, "warmup"), *st = json_object_get(o, "steady");
    const char *sd = json_string_value(side);
    if (!json_is_string(cid) || json_string_length(cid) == 0 || !sd ||
        (strcmp(sd, "baseline") && strcmp(sd, "candidate")) || !json_is_boolean(wu) ||
        !json_is_boolean(st)) {
        line_fail(err, path, line,
                  "needs case_id, side (baseline or candidate), warmup and steady (booleans)");
        goto out;
    }
    long gi = find_group(raw, json_string_value(cid), json_string_length(cid),
                         strcmp(sd, "candidate") == 0);
    if (gi < 0) {
        gate_oom(err);
        goto out;
    }
    gate_group *g = &raw->g[gi];
    json_t *ot = json_object_get(o, "output_tokens");
    if (json_is_integer(ot) && json_integer_value(ot) > g->max_output_tokens)
        g->max_output_tokens = json_integer_value(ot);
    spill_rec r;
    memset(&r, 0, sizeof r);
    r.group = (uint64_t)gi;
    if (line_metrics(o, &r, path, line, err) != 0)
        goto out;
    if (reading_span(json_object_get(o, "clock_mhz"), r.clock) != 0 ||
        reading_span(json_object_get(o, "chip_temperature_c"), r.temp) != 0) {
        line_fail(err, path, line, "clock_mhz and chip_temperature_c must be arrays of numbers");
        goto out;
    }
    if (take_sample(raw, gi, json_is_true(wu), json_is_true(st), &r, err) != 0)
        goto out;
    rc = 0;
out:
    json_decref(o);
    return rc;
}

int gate_raw_read(const char *path, gate_raw *raw, golden_error *err)
{
    memset(raw, 0, sizeof *raw);
    FILE *f = fopen(path, "rb");
    if (!f)
        return golden_fail_where(err, golden_code_from_errno(errno), strerror(errno), "%s",
                                 path);
    raw->spill = tmpfile();
    if (!raw->spill) {
        int e = errno;
        fclose(f);
        return golden_fail_what(err, golden_code_from_errno(e), NULL,
                                "cannot create a spill file: %s", strerror(e));
    }
    char *buf = NULL;
    size_t cap = 0, line = 0;
    ssize_t len;
    int rc = 0;
    while ((len = getline(&buf, &cap, f)) >= 0) {
        line++;
        if ((size_t)len > RAW_MAX_LINE) {
            rc = line_fail(err, path, line, "line longer than 16 MiB");
            break;
        }
        while (len > 0 && (buf[len - 1] == '\n' || buf[len - 1] == '\r'))
            len--;
        size_t i = 0;
        while (i < (size_t)len && (buf[i] == ' ' || buf[i] == '\t'))
            i++;
        if (i == (size_t)len)
            continue; /* blank lines carry nothing */
        if ((rc = take_line(raw, buf, (size_t)len, path, line, err)) != 0)
            break;
    }
    if (rc == 0 && ferror(f))
        rc = golden_fail_where(err, GOLDEN_EIO, "read error", "%s", path);
    if (rc == 0 && fflush(raw->spill) != 0)
        rc = golden_fail_what(err, GOLDEN_EIO, NULL, "cannot write the spill file");
    free(buf);
    fclose(f);
    raw->lines = line;
    if (rc != 0)
        gate_raw_free(raw);
    return rc;
}

/* ---- statistics, batch by batch ---- */

typedef struct {
    size_t group;
    double *vals[GOLDEN_GATE_METRICS];
    double *clock, *temp; /* per sample: centre of its span; spans kept for the band test */
    double *clock_lo, *clock_hi, *temp_lo, *temp_hi;
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
        out += !ok;
    }
    g->band_unsteady = out;
    return 0;
}

static int slot_stats(batch_slot *s, gate_group *g, const golden_gate_opts *o, golden_error *err)
{
    size_t k = s->n ? s->n : 1;
    double *scratch = malloc(k * sizeof *scratch);
    double *vals = malloc(k * sizeof *vals);
    unsigned char *keep = malloc(k);
    int rc = -1;
    if (!scratch || !vals || !keep) {
        gate_oom(err);
        goto out;
    }
    slot_band(s, g, o, keep, scratch);
    for (int m = 0; m < GOLDEN_GATE_METRICS; m++) {
        size_t n = 0;
        for (size_t i = 0; i < s->n; i++)
            if (keep[i] && !isnan(s->vals[m][i]))
                vals[n++] = s->vals[m][i];
        golden_gate_describe(vals, n, scratch, &g->d[m]);
        if (golden_gate_bootstrap_median(vals, n, o->bootstrap, o->seed, o->threads, g->ci[m],
                                         err) != 0)
            goto out;
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
            s->n++;
        }
    if (ferror(raw->spill))
        return golden_fail_what(err, GOLDEN_EIO, NULL, "cannot read the spill file");
    return 0;
}

int gate_raw_stats(gate_raw *raw, const golden_gate_opts *o, golden_error *err)
{
    /* Bytes a sample costs while its group is loaded: metrics, readings, and the scratch. */
    const size_t per_sample = (GOLDEN_GATE_METRICS + 6 + 3) * sizeof(double);
    size_t budget = o->memory_budget ? o->memory_budget : (size_t)256 << 20;
    size_t *slot_of = calloc(raw->ng ? raw->ng : 1, sizeof *slot_of);
    batch_slot *slots = calloc(raw->ng ? raw->ng : 1, sizeof *slots);
    if (!slot_of || !slots) {
        free(slot_of);
        free(slots);
        return gate_oom(err);
    }
    int rc = 0;
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
        for (size_t s = 0; s < ns; s++) {
            if (rc == 0)
                rc = slot_stats(&slots[s], &raw->g[slots[s].group], o, err);
            slot_free(&slots[s]);
            slot_of[slots[s].group] = 0;
        }
        first = last;
    }
    free(slot_of);
    free(slots);
    return rc;
}
