/* --check: a stored performance/summary.json against the one recomputed from the raw data;
 * every number that does not follow beyond its printed rounding is a finding naming its place. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gate/gate_int.h"
#include "golden/doc.h"
#include "golden/report.h"
#include "golden/schema.h"
#include "golden/parse.h"
#include "util/numtext.h"

/* Rounding is honoured down to 5 significant digits' worth; a coarser printed number must be
 * closer than that (so "10.6" cannot stand for 10.564). */
#define FOLLOW_REL_CAP 5e-5

bool golden_gate_number_follows(double stored, double computed)
{
    if (isnan(stored) || isnan(computed))
        return isnan(stored) && isnan(computed);
    if (stored == computed)
        return true;
    if (!isfinite(stored) || !isfinite(computed))
        return false;
    /* The shortest form that reads back as stored: its last digit is the printed rounding. */
    int exp10;
    int p = lg_num_digits(stored, &exp10);
    double half = 0.5 * pow(10, exp10 - (p - 1));
    double cap = FOLLOW_REL_CAP * fabs(computed);
    /* computed is itself printed by gate_round (6 decimals, or 6 significant digits below 1),
     * and a delta carries the rounding of both its terms: two of our units on top. */
    double unit = fabs(computed) >= 1 || computed == 0
                      ? 1e-6 : pow(10, floor(log10(fabs(computed))) - 5);
    double tol = (half < cap ? half : cap) + unit + 1e-12 * fabs(computed);
    return fabs(stored - computed) <= tol;
}

typedef struct {
    const char *file;
    golden_findings *out;
    golden_error *err;
    int failed;
} cmp_ctx;

static void finding(cmp_ctx *c, const char *pointer, const char *fmt, const char *case_label,
                    const char *field, const char *detail)
{
    if (golden_findings_add(c->out, GOLDEN_SEV_ERROR, "summary-follows", c->file, 0, 0, pointer,
                            c->err, fmt, case_label, field, detail) != 0)
        c->failed = 1;
}

static void compare_node(cmp_ctx *c, const json_t *s, const json_t *k, const char *ptr,
                         const char *label, const char *field);

static void compare_object(cmp_ctx *c, const json_t *s, const json_t *k, const char *ptr,
                           const char *label)
{
    const char *key;
    json_t *v;
    json_object_foreach((json_t *)s, key, v) {
        char p[1024];
        snprintf(p, sizeof p, "%s/%s", ptr, key);
        json_t *kv = json_object_get(k, key);
        if (!kv) {
            finding(c, p, "%s: field %s: %s", label, p, "not computed from the raw data");
            continue;
        }
        compare_node(c, v, kv, p, label, key);
    }
}

/* A case entry's concurrency level: absent is 1 (a summary from before issue 33); a value
 * that is no integer >= 1 is 0, which matches nothing. */
static long long case_level(const json_t *c)
{
    json_t *v = json_object_get(c, "concurrency");
    if (!v)
        return 1;
    return json_is_integer(v) && json_integer_value(v) >= 1 ? json_integer_value(v) : 0;
}

/* Cases are matched by (case_id, concurrency, metric), whatever their order. */
static void compare_cases(cmp_ctx *c, const json_t *s, const json_t *k, const char *ptr)
{
    size_t i, j;
    json_t *sc, *kc;
    json_array_foreach((json_t *)s, i, sc) {
        const char *id = json_string_value(json_object_get(sc, "case_id"));
        const char *m = json_string_value(json_object_get(sc, "metric"));
        char label[600], p[1024], name[400];
        gate_case_label(name, sizeof name, id, case_level(sc));
        snprintf(label, sizeof label, "case %s metric %s", name, m ? m : "?");
        snprintf(p, sizeof p, "%s/%zu", ptr, i);
        const json_t *match = NULL;
        json_array_foreach((json_t *)k, j, kc) {
            const char *kid = json_string_value(json_object_get(kc, "case_id"));
            const char *km = json_string_value(json_object_get(kc, "metric"));
            if (id && m && kid && km && !strcmp(id, kid) && !strcmp(m, km) &&
                case_level(sc) == case_level(kc))
                match = kc;
        }
        if (!match)
            finding(c, p, "%s: %s%s", label, "no such case and metric in the raw data", "");
        else
            compare_object(c, sc, match, p, label);
    }
    /* A case of the raw data that the summary leaves out could hide a regression. */
    json_array_foreach((json_t *)k, j, kc) {
        const char *kid = json_string_value(json_object_get(kc, "case_id"));
        int seen = 0;
        json_array_foreach((json_t *)s, i, sc) {
            const char *id = json_string_value(json_object_get(sc, "case_id"));
            seen |= id && kid && !strcmp(id, kid) && case_level(sc) == case_level(kc);
        }
        if (!seen) {
            char label[600];
            gate_case_label(label, sizeof label, kid, case_level(kc));
            finding(c, ptr, "case %s: %s%s", label, "measured in the raw data but missing from the summary", "");
            while (j + 1 < json_array_size(k) &&
                   json_equal(json_object_get(json_array_get(k, j + 1), "case_id"),
                              json_object_get(kc, "case_id")) &&
                   case_level(json_array_get(k, j + 1)) == case_level(kc))
                j++;
        }
    }
}

static void compare_node(cmp_ctx *c, const json_t *s, const json_t *k, const char *ptr,
                         const char *label, const char *field)
{
    char detail[400];
    (void)field;
    if (!strcmp(ptr, "/cases") && json_is_array(s) && json_is_array(k)) {
        compare_cases(c, s, k, ptr);
        return;
    }
    if (json_is_object(s) && json_is_object(k)) {
        compare_object(c, s, k, ptr, label);
        return;
    }
    if (json_is_array(s) && json_is_array(k)) {
        if (json_array_size(s) != json_array_size(k)) {
            snprintf(detail, sizeof detail, "%zu items, the raw data gives %zu",
                     json_array_size(s), json_array_size(k));
            finding(c, ptr, "%s: field %s: %s", label, ptr, detail);
            return;
        }
        for (size_t i = 0; i < json_array_size(s); i++) {
            char p[1024];
            snprintf(p, sizeof p, "%s/%zu", ptr, i);
            compare_node(c, json_array_get(s, i), json_array_get(k, i), p, label, field);
        }
        return;
    }
    if (json_is_integer(s) && json_is_integer(k)) {
        if (json_integer_value(s) != json_integer_value(k)) {
            snprintf(detail, sizeof detail, "%lld, the raw data gives %lld",
                     (long long)json_integer_value(s), (long long)json_integer_value(k));
            finding(c, ptr, "%s: field %s: %s", label, ptr, detail);
        }
        return;
    }
    if (json_is_number(s) && json_is_number(k)) {
        if (!golden_gate_number_follows(json_number_value(s), json_number_value(k))) {
            snprintf(detail, sizeof detail, "%.12g, the raw data gives %.12g",
                     json_number_value(s), json_number_value(k));
            finding(c, ptr, "%s: field %s: %s", label, ptr, detail);
        }
        return;
    }
    if (!json_equal((json_t *)s, (json_t *)k)) {
        char *a = json_dumps(s, JSON_ENCODE_ANY | JSON_COMPACT);
        char *b = json_dumps(k, JSON_ENCODE_ANY | JSON_COMPACT);
        snprintf(detail, sizeof detail, "%.150s, the raw data gives %.150s", a ? a : "?",
                 b ? b : "?");
        free(a);
        free(b);
        finding(c, ptr, "%s: field %s: %s", label, ptr, detail);
    }
}

int golden_gate_compare(const json_t *stored, const json_t *computed, const char *file,
                        golden_findings *out, golden_error *err)
{
    cmp_ctx c = {file, out, err, 0};
    compare_node(&c, stored, computed, "", "summary", "");
    return c.failed ? -1 : 0;
}

int gate_stored_bootstrap(const golden_doc *doc, golden_gate_opts *o, golden_error *err)
{
    json_t *b = json_object_get(golden_doc_root(doc), "bootstrap");
    json_t *js = json_object_get(b, "seed");
    const char *seed = json_string_value(js);
    uint64_t v;
    golden_parse_status st;
    if (!o->seed_set && seed) {
        if ((st = golden_parse_uint(seed, 0, UINT64_MAX, &v)) != GOLDEN_PARSE_OK) {
            char where[1200];
            golden_doc_child_where(doc, b, "seed", 0, where, sizeof where);
            return golden_fail_what(err, GOLDEN_EINVAL, where,
                                    "bootstrap.seed \"%.40s\" is not a 64-bit seed (%s)", seed,
                                    golden_parse_reason(st));
        }
        o->seed = v;
    }
    golden_gate_boot_gen gen;
    if (golden_gate_boot_gen_parse(json_string_value(json_object_get(b, "generator")), &gen) == 0)
        o->generator = gen; /* an unknown name stays the default: "summary-follows" names it */
    json_t *r = json_object_get(b, "resamples");
    if (!o->bootstrap_set && json_is_integer(r) && json_integer_value(r) > 0)
        o->bootstrap = (unsigned long)json_integer_value(r);
    return 0;
}

/* Seed, resamples and bands from the stored summary, unless the caller set them. */
static int stored_settings(const golden_doc *doc, golden_gate_opts *o, golden_error *err)
{
    const json_t *s = golden_doc_root(doc);
    if (gate_stored_bootstrap(doc, o, err) != 0)
        return -1;
    json_t *band = json_object_get(s, "steady_band");
    if (json_is_number(json_object_get(band, "clock_pct")))
        o->clock_band_pct = json_number_value(json_object_get(band, "clock_pct"));
    if (json_is_number(json_object_get(band, "temperature_c")))
        o->temp_band_c = json_number_value(json_object_get(band, "temperature_c"));
    if (json_is_number(json_object_get(band, "power_pct")) && o->version >= 3)
        o->power_band_pct = json_number_value(json_object_get(band, "power_pct"));
    return 0;
}

int golden_gate_check(const char *dir, const golden_gate_opts *o, golden_findings *out,
                      bool *checked, golden_error *err)
{
    return gate_check_keep(dir, o, out, checked, NULL, err);
}

int gate_check_keep(const char *dir, const golden_gate_opts *o, golden_findings *out,
                    bool *checked, json_t **kept, golden_error *err)
{
    return gate_check_keep_raw(dir, o, NULL, out, checked, kept, err);
}

int gate_check_keep_raw(const char *dir, const golden_gate_opts *o, gate_raw *pre,
                        golden_findings *out, bool *checked, json_t **kept, golden_error *err)
{
    *checked = false;
    if (kept)
        *kept = NULL;
    char *raw = gate_path(dir, "performance/raw-requests.jsonl");
    char *sum = gate_path(dir, "performance/summary.json");
    golden_doc *doc = NULL;
    json_t *computed = NULL;
    int rc = -1;
    if (!raw || !sum) {
        gate_oom(err);
        goto out;
    }
    if (access(raw, F_OK) != 0) {
        rc = 0; /* no raw data: nothing to check against */
        goto out;
    }
    if (golden_doc_load_file(sum, &doc, err) != 0)
        goto out;
    golden_gate_opts eff = *o;
    if (stored_settings(doc, &eff, err) != 0 || gate_summarize_raw(dir, &eff, pre, &computed, err) != 0)
        goto out;
    *checked = true;
    rc = golden_gate_compare(golden_doc_root(doc), computed, sum, out, err);
    json_t *rep = json_object_get(computed, "repeated_request_ids");
    if (rc == 0 && json_integer_value(rep) > 0 &&
        golden_findings_add(out, GOLDEN_SEV_ERROR, "request-unique", raw, 0, 0, "", err,
                            "%lld line(s) repeat an earlier request_id: each counted once",
                            (long long)json_integer_value(rep)) != 0)
        rc = -1;
    if (rc == 0 && kept) {
        *kept = computed;
        computed = NULL;
    }
out:
    if (pre)
        gate_raw_free(pre); /* not taken over (an earlier failure): freed all the same */
    json_decref(computed);
    golden_doc_free(doc);
    free(raw);
    free(sum);
    return rc;
}

int golden_gate_summary_write(const char *dir, const json_t *summary, bool force,
                              golden_error *err)
{
    char *path = gate_path(dir, "performance/summary.json");
    char *text = gate_dumps(summary);
    int rc = -1;
    if (!path || !text) {
        gate_oom(err);
        goto out;
    }
    /* What we write must meet the contract we check others against. */
    if (gate_validate("calculet-perf-summary/v1", path, text, err) != 0)
        goto out;
    rc = gate_write_text(path, text, force, err);
out:
    free(text);
    free(path);
    return rc;
}

FILE *gate_memstream_open(char **buf, size_t *len, golden_error *err)
{
    *buf = NULL;
    *len = 0;
    FILE *f = open_memstream(buf, len);
    if (!f)
        gate_oom(err);
    return f;
}

char *gate_memstream_close(FILE *f, char **buf, golden_error *err)
{
    /* fclose sets *buf (the stream's final buffer) */
    if (fclose(f) != 0) {
        free(*buf);
        *buf = NULL;
        gate_oom(err);
        return NULL;
    }
    return *buf;
}

char *gate_dumps(const json_t *doc)
{
    /* 15 significant digits: every written number is rounded to 6 decimals first, so this is
     * exact for it and spares readers 10.564137000000001. */
    char *t = json_dumps(doc, JSON_INDENT(2) | JSON_REAL_PRECISION(15)), *nl;
    if (!t || asprintf(&nl, "%s\n", t) < 0)
        nl = NULL;
    free(t);
    return nl;
}

int gate_write_text(const char *path, const char *text, bool force, golden_error *err)
{
    golden_outfile *f;
    if (golden_outfile_open(path, force, &f, err) != 0)
        return -1;
    FILE *s = golden_outfile_stream(f);
    if (fputs(text, s) < 0) {
        golden_outfile_abort(f);
        return golden_fail_where(err, GOLDEN_EIO, "write failed", "%s", path);
    }
    return golden_outfile_commit(f, err);
}

int gate_validate(const char *format, const char *name, const char *text, golden_error *err)
{
    golden_schema *schema = NULL;
    golden_doc *doc = NULL;
    int rc = -1;
    if (golden_schema_load(format, &schema, err) == 0 &&
        golden_doc_load_buffer(name, text, strlen(text), &doc, err) == 0) {
        rc = golden_schema_check(schema, doc, err);
        if (rc != 0)
            err->code = GOLDEN_EINTERNAL; /* our own output: a bug, not the user's input */
    }
    golden_doc_free(doc);
    golden_schema_free(schema);
    return rc;
}

bool golden_gate_summary_present(const char *dir)
{
    char *raw = gate_path(dir, "performance/raw-requests.jsonl");
    char *sum = gate_path(dir, "performance/summary.json");
    bool yes = raw && sum && access(raw, F_OK) == 0 && access(sum, F_OK) == 0;
    free(raw);
    free(sum);
    return yes;
}
