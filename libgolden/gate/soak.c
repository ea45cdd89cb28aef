/* The 24 h soak closes the loop (handbook section 13.2, issue 26): decide reads the soak result
 * (stability/soak.json in the folder, or a file given by the caller), checks that it is a soak
 * of this very candidate and that its numbers hold together, and judges it from the numbers
 * (never from a verdict: the format carries none). See docs/exp-gate.md, "The soak result". */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gate/decide_int.h"
#include "golden/doc.h"
#include "golden/hash.h"
#include "golden/schema.h"
#include "golden/soak.h"

#define SOAK_REQUIRED_S 86400.0 /* section 13.2: 24 h */

static size_t cnt(const json_t *o, const char *k)
{
    json_t *v = json_object_get(o, k);
    return json_is_integer(v) && json_integer_value(v) > 0 ? (size_t)json_integer_value(v) : 0;
}

static int bad(golden_error *err, const char *name, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int bad(golden_error *err, const char *name, const char *fmt, ...)
{
    char buf[900];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    return golden_fail_where(err, GOLDEN_EINVAL, buf, "%s", name);
}

/* The counts must hold together as npu-replay soak writes them: one retest per failed request,
 * a fault line per mismatch or fault up to the cap, no more failures than requests. */
static int soak_counts_agree(const json_t *r, const char *name, golden_error *err)
{
    size_t req = cnt(r, "requests"), mis = cnt(r, "mismatches"), flt = cnt(r, "faults");
    size_t ret = cnt(r, "retests"), pass = cnt(r, "retests_passed");
    size_t lines = cnt(r, "fault_lines"), cases = cnt(r, "cases");
    size_t want_lines = mis + flt < GOLDEN_SOAK_MAX_FAULT_LINES ? mis + flt
                                                                : GOLDEN_SOAK_MAX_FAULT_LINES;
    double dur = json_number_value(json_object_get(r, "duration_s"));
    double asked = json_number_value(json_object_get(r, "duration_s_requested"));
    if (cases == 0 || req == 0)
        return bad(err, name, "soak result: %zu case(s), %zu request(s): nothing was soaked",
                   cases, req);
    if (mis + flt > req)
        return bad(err, name, "soak result: %zu mismatches and %zu faults in %zu requests do not "
                   "add up", mis, flt, req);
    if (ret != flt)
        return bad(err, name, "soak result: %zu retests for %zu faults (every failed request "
                   "is retested once)", ret, flt);
    if (pass > ret)
        return bad(err, name, "soak result: %zu retests passed of %zu", pass, ret);
    if (lines != want_lines)
        return bad(err, name, "soak result: %zu fault lines for %zu mismatches and %zu faults "
                   "(expected %zu)", lines, mis, flt, want_lines);
    if (!json_is_true(json_object_get(r, "interrupted")) && dur < asked)
        return bad(err, name, "soak result: ran %.3f s of %.3f s asked without being "
                   "interrupted", dur, asked);
    return 0;
}

/* The candidate the folder holds: SHA-256 of golden/input-manifest.jsonl and the candidate
 * calbin's sha256 (candidate/manifest.json#/calbin/sha256). */
static int soak_identity(const char *dir, const json_t *r, const char *name, const char *exp_id,
                         golden_error *err)
{
    const char *id = json_string_value(json_object_get(r, "experiment_id"));
    if (id && exp_id && strcmp(id, exp_id))
        return bad(err, name, "soak result of experiment '%s', not '%s' (foreign)", id, exp_id);
    const char *man = json_string_value(json_object_get(r, "manifest_sha256"));
    const char *graph = json_string_value(json_object_get(r, "graph_sha256"));
    if (!man || !graph)
        return bad(err, name, "soak result without %s: it cannot show that it soaked this "
                   "folder's candidate", !man ? "manifest_sha256" : "graph_sha256");
    char hex[65];
    char *ip = gate_path(dir, "golden/input-manifest.jsonl");
    char *cp = gate_path(dir, "candidate/manifest.json");
    golden_doc *cm = NULL;
    int rc = -1;
    if (!ip || !cp)
        gate_oom(err);
    else if (golden_sha256_file(ip, hex, err) == 0 &&
             golden_doc_load_file(cp, &cm, err) == 0) {
        const char *cal = json_string_value(
            json_object_get(json_object_get(golden_doc_root(cm), "calbin"), "sha256"));
        if (strcmp(man, hex))
            bad(err, name, "soak result of input manifest %.64s, the folder's "
                "golden/input-manifest.jsonl is %s (mismatched)", man, hex);
        else if (!cal || strcmp(graph, cal))
            bad(err, name, "soak result of graph %.64s, the folder's candidate calbin is %.64s "
                "(mismatched)", graph, cal ? cal : "not named");
        else
            rc = 0;
    }
    golden_doc_free(cm);
    free(ip);
    free(cp);
    return rc;
}

static int cmp_hash_row(const void *a, const void *b)
{
    const json_t *x = *(const json_t *const *)a, *y = *(const json_t *const *)b;
    int c = strcmp(json_string_value(json_object_get(x, "case_id")),
                   json_string_value(json_object_get(y, "case_id")));
    if (!c)
        c = strcmp(json_string_value(json_object_get(x, "host")),
                   json_string_value(json_object_get(y, "host")));
    json_int_t i = json_integer_value(json_object_get(x, "chip"));
    json_int_t j = json_integer_value(json_object_get(y, "chip"));
    return c ? c : (i > j) - (i < j);
}

/* Per-request (per case) hashes across chips and hosts: every row of a case must agree. The
 * first disagreement goes into why; -1 (err) when the rows do not cover exactly the soak's
 * cases. */
static int soak_hashes(const json_t *r, const char *name, size_t *groups, char *why, size_t wn,
                       golden_error *err)
{
    const json_t *h = json_object_get(r, "hashes");
    size_t n = json_array_size(h);
    *groups = 0;
    if (!n)
        return 0;
    const json_t **v = malloc(n * sizeof *v);
    if (!v)
        return gate_oom(err);
    for (size_t i = 0; i < n; i++)
        v[i] = json_array_get(h, i);
    qsort(v, n, sizeof *v, cmp_hash_row);
    for (size_t i = 0; i < n; i++) {
        const char *c = json_string_value(json_object_get(v[i], "case_id"));
        bool first = i == 0 || strcmp(c, json_string_value(json_object_get(v[i - 1], "case_id")));
        if (first) {
            ++*groups;
            continue;
        }
        const json_t *a = v[i - 1], *b = v[i];
        const char *ha = json_string_value(json_object_get(a, "sha256"));
        const char *hb = json_string_value(json_object_get(b, "sha256"));
        if (strcmp(ha, hb) && !why[0])
            snprintf(why, wn, "case %.200s: host %.100s chip %lld gives %.64s, host %.100s chip "
                     "%lld gives %.64s", c,
                     json_string_value(json_object_get(a, "host")),
                     (long long)json_integer_value(json_object_get(a, "chip")), ha,
                     json_string_value(json_object_get(b, "host")),
                     (long long)json_integer_value(json_object_get(b, "chip")), hb);
    }
    free(v);
    if (*groups != cnt(r, "cases"))
        return bad(err, name, "soak result: hashes cover %zu case(s), the soak ran %zu",
                   *groups, cnt(r, "cases"));
    return 0;
}

/* The hypothesis' waiver of the 24 h (soak_waiver: duration_h, reason). */
static double required_seconds(const gate_inputs *in, const char **reason)
{
    const json_t *w = json_object_get(golden_doc_root(in->hypothesis), "soak_waiver");
    json_t *h = json_object_get(w, "duration_h");
    *reason = json_string_value(json_object_get(w, "reason"));
    return json_is_number(h) && *reason ? 3600.0 * json_number_value(h) : SOAK_REQUIRED_S;
}

/* Judge the soak from its numbers: in->soak gets the figures, in->soak_pass and soak_why. */
static int soak_judge(const char *dir, const char *name, const json_t *r, gate_inputs *in,
                      golden_error *err)
{
    if (soak_counts_agree(r, name, err) || soak_identity(dir, r, name, in->experiment_id, err))
        return -1;
    size_t groups;
    char hwhy[700] = "";
    if (soak_hashes(r, name, &groups, hwhy, sizeof hwhy, err))
        return -1;
    const char *waiver;
    double need = required_seconds(in, &waiver);
    double dur = json_number_value(json_object_get(r, "duration_s"));
    size_t mis = cnt(r, "mismatches"), flt = cnt(r, "faults"), pass = cnt(r, "retests_passed");
    char *w = in->soak_why;
    size_t wn = sizeof in->soak_why;
    if (dur < need)
        snprintf(w, wn, "the soak ran %.1f s (%.2f h), %s %.1f s", dur, dur / 3600,
                 waiver ? "the hypothesis' waiver asks" : "section 13.2 asks 24 h =", need);
    else if (mis)
        snprintf(w, wn, "%zu of %zu soak requests differ from their clean run (crc_mismatch)",
                 mis, cnt(r, "requests"));
    else if (pass < flt)
        snprintf(w, wn, "%zu of %zu soak faults did not pass their retest after reset",
                 flt - pass, flt);
    else if (hwhy[0])
        snprintf(w, wn, "per-request hashes disagree across chips/hosts: %s", hwhy);
    in->soak_pass = !w[0];
    in->soak = json_pack("{s:s,s:f,s:f,s:I,s:I,s:I,s:I,s:I,s:I,s:b,s:O,s:O,s:b}", "path", name,
                         "duration_s", dur, "required_s", need, "cases",
                         (json_int_t)cnt(r, "cases"), "requests", (json_int_t)cnt(r, "requests"),
                         "mismatches", (json_int_t)mis, "faults", (json_int_t)flt,
                         "retests_passed", (json_int_t)pass, "hash_cases", (json_int_t)groups,
                         "interrupted", json_is_true(json_object_get(r, "interrupted")),
                         "manifest_sha256", json_object_get(r, "manifest_sha256"),
                         "graph_sha256", json_object_get(r, "graph_sha256"), "passes",
                         in->soak_pass);
    if (!in->soak || json_object_set_new(in->soak, "waiver", waiver ? json_string(waiver)
                                                                    : json_null()) ||
        json_object_set_new(in->soak, "reason", json_string(w[0] ? w : "passes")))
        return gate_oom(err);
    return 0;
}

int gate_soak_read(const char *dir, const char *given, gate_inputs *in, golden_error *err)
{
    char *own = given ? NULL : gate_path(dir, "stability/soak.json");
    const char *p = given ? given : own;
    if (!p)
        return gate_oom(err);
    if (!given && access(p, F_OK) != 0) {
        free(own);
        return 0;
    }
    golden_doc *d = NULL;
    golden_schema *s = NULL;
    int rc = golden_doc_load_file(p, &d, err);
    if (rc == 0 &&
        strcmp(json_string_value(json_object_get(golden_doc_root(d), "schema")) ?: "",
               GOLDEN_SCHEMA_SOAK_RESULT))
        rc = bad(err, p, "not a %s document (foreign)", GOLDEN_SCHEMA_SOAK_RESULT);
    if (rc == 0)
        rc = golden_schema_load(GOLDEN_SCHEMA_SOAK_RESULT, &s, err) ||
             golden_schema_check(s, d, err) ? -1 : 0;
    const json_t *r = d ? golden_doc_root(d) : NULL;
    if (rc == 0 && strcmp(json_string_value(json_object_get(r, "side")), "candidate"))
        rc = bad(err, p, "a soak of the %s side: the decision needs the candidate's (foreign)",
                 json_string_value(json_object_get(r, "side")));
    if (rc == 0) {
        in->soak_present = true;
        rc = soak_judge(dir, p, r, in, err);
    }
    golden_schema_free(s);
    golden_doc_free(d);
    free(own);
    return rc;
}
