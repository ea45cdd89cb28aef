/* The task-level metric of accuracy/result.json (handbook section 6): its perplexity block
 * recomputed from the two calculet-score/v1 files it names, per dataset, and held to the
 * hypothesis' acceptance.perplexity_regression_max_pct. What it states is never trusted: a
 * stated number the files contradict, a dataset left out, a bound with nothing to bound, or a
 * regression above the bound is a failing accuracy number (correctness: reject). */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gate/decide_int.h"
#include "golden/hash.h"
#include "golden/score.h"

static void miss(gate_inputs *in, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void miss(gate_inputs *in, const char *fmt, ...)
{
    if (in->accuracy_contradictions++ == 0) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(in->accuracy_first, sizeof in->accuracy_first, fmt, ap);
        va_end(ap);
    }
}

/* One side's score file: loaded, schema-checked, its sha256 the one result.json names, its
 * side the expected one. NULL (with a miss counted, or err set for a file that cannot be read). */
static golden_doc *side_doc(const char *dir, gate_inputs *in, const json_t *ref,
                            const char *side, golden_error *err)
{
    const char *rel = json_string_value(json_object_get(ref, "path"));
    const char *want = json_string_value(json_object_get(ref, "sha256"));
    if (!rel) {
        miss(in, "perplexity.%s names no score file", side);
        return NULL;
    }
    char *p = gate_path(dir, rel);
    golden_doc *d = NULL;
    char got[65];
    if (!p) {
        gate_oom(err);
        return NULL;
    }
    int rc = golden_sha256_file(p, got, err);
    if (rc == 0 && (!want || strcmp(got, want) != 0)) {
        miss(in, "perplexity.%s: %s has sha256 %.16s..., accuracy/result.json says %.16s...",
             side, rel, got, want ? want : "nothing");
        free(p);
        return NULL;
    }
    if (rc == 0)
        rc = golden_score_load(p, &d, err);
    free(p);
    if (rc)
        return NULL;
    const char *s = json_string_value(json_object_get(golden_doc_root(d), "side"));
    if (!s || strcmp(s, side) != 0) {
        miss(in, "perplexity.%s: %s is a score of the %s side", side, rel, s ? s : "?");
        golden_doc_free(d);
        return NULL;
    }
    return d;
}

/* Whether a stated number agrees with the recomputed one: within 0.01 % (perplexity) or
 * 0.01 percentage points (regression_pct). */
static bool agrees(const json_t *stated, double x, bool pct)
{
    if (!json_is_number(stated))
        return false;
    double s = json_number_value(stated);
    return fabs(s - x) <= (pct ? 0.01 : 1e-4 * fabs(x));
}

static const json_t *stated_of(const json_t *stated, const char *name)
{
    size_t i;
    json_t *o;
    json_array_foreach(stated, i, o) {
        const char *n = json_string_value(json_object_get(o, "dataset"));
        if (n && strcmp(n, name) == 0)
            return o;
    }
    return NULL;
}

/* Each recomputed dataset against what result.json states and against the bound. */
static void judge(gate_inputs *in, const json_t *cmp, const json_t *stated, double bound)
{
    static const char *const keys[3] = {"baseline", "candidate", "regression_pct"};
    size_t i;
    json_t *c;
    json_array_foreach(cmp, i, c) {
        const char *name = json_string_value(json_object_get(c, "dataset"));
        json_int_t fb = json_integer_value(json_object_get(c, "baseline_findings"));
        json_int_t fc = json_integer_value(json_object_get(c, "candidate_findings"));
        const json_t *st = stated_of(stated, name);
        if (fb || fc) {
            miss(in, "perplexity of dataset %s: %lld baseline and %lld candidate case(s) whose "
                 "logits gave no number", name, (long long)fb, (long long)fc);
            continue;
        }
        double x[3];
        for (int k = 0; k < 3; k++)
            x[k] = json_is_number(json_object_get(c, keys[k]))
                       ? json_number_value(json_object_get(c, keys[k]))
                       : NAN; /* exp() beyond the doubles: no number to compare */
        if (isnan(x[0]) || isnan(x[1]) || isnan(x[2])) {
            miss(in, "perplexity of dataset %s is beyond the range of a double", name);
            continue;
        }
        if (!st)
            miss(in, "perplexity of dataset %s is not reported in accuracy/result.json (the "
                 "score files give %.6g -> %.6g)", name, x[0], x[1]);
        for (int k = 0; st && k < 3; k++)
            if (!agrees(json_object_get(st, keys[k]), x[k], k == 2)) {
                json_t *v = json_object_get(st, keys[k]);
                miss(in, "perplexity of dataset %s: accuracy/result.json says %s %.6g, the "
                     "score files give %.6g", name, keys[k],
                     json_is_number(v) ? json_number_value(v) : NAN, x[k]);
                break;
            }
        if (!isnan(bound) && !(x[2] <= bound))
            miss(in, "perplexity of dataset %s rose %.4g %% (%.6g -> %.6g), above "
                 "perplexity_regression_max_pct %.6g", name, x[2], x[0], x[1], bound);
    }
    json_array_foreach(stated, i, c) {
        const char *n = json_string_value(json_object_get(c, "dataset"));
        size_t j;
        json_t *e;
        bool found = false;
        json_array_foreach(cmp, j, e)
            found |= n && strcmp(json_string_value(json_object_get(e, "dataset")), n) == 0;
        if (!found)
            miss(in, "perplexity: accuracy/result.json reports dataset %s, which the score "
                 "files do not hold", n ? n : "?");
    }
}

int gate_perplexity(const char *dir, gate_inputs *in, golden_error *err)
{
    golden_error_clear(err);
    json_t *acc = json_object_get(golden_doc_root(in->hypothesis), "acceptance");
    json_t *bv = json_object_get(acc, "perplexity_regression_max_pct");
    double bound = json_is_number(bv) ? json_number_value(bv) : NAN;
    json_t *p = json_object_get(golden_doc_root(in->accuracy), "perplexity");
    if (!p) {
        if (!isnan(bound))
            miss(in, "acceptance.perplexity_regression_max_pct is %.6g but accuracy/result.json "
                 "reports no perplexity", bound);
        return 0;
    }
    golden_doc *b = side_doc(dir, in, json_object_get(p, "baseline"), "baseline", err);
    golden_doc *c = b ? side_doc(dir, in, json_object_get(p, "candidate"), "candidate", err)
                      : NULL;
    int rc = 0;
    if (!b || !c) {
        rc = err->code != GOLDEN_ENONE ? -1 : 0;
    } else if (golden_score_compare(golden_doc_root(b), golden_doc_root(c), &in->perplexity,
                                    err)) {
        if (err->code == GOLDEN_ENOMEM)
            rc = -1;
        else
            miss(in, "perplexity: the score files cannot be compared: %s: %s", err->where,
                 err->what);
    } else {
        judge(in, in->perplexity, json_object_get(p, "datasets"), bound);
    }
    if (rc == 0)
        golden_error_clear(err);
    golden_doc_free(b);
    golden_doc_free(c);
    return rc;
}
