/* Two calculet-score/v1 documents compared per dataset, every number recomputed from the
 * cases' nll_sum and scored_tokens (what exp-gate decide and `npu-replay score --baseline`
 * read; docs/exp-gate.md "Perplexity"). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "golden/report.h"
#include "golden/schema.h"
#include "golden/score.h"
#include "util/strmap.h"

int golden_score_load(const char *path, golden_doc **doc, golden_error *err)
{
    golden_schema *s = NULL;
    *doc = NULL;
    int rc = golden_schema_load("calculet-score-v1.schema.json", &s, err);
    if (rc == 0)
        rc = golden_doc_load_file(path, doc, err);
    if (rc == 0)
        rc = golden_schema_check(s, *doc, err);
    golden_schema_free(s);
    if (rc) {
        golden_doc_free(*doc);
        *doc = NULL;
    }
    return rc ? GOLDEN_ERR : 0;
}

typedef struct {
    const char *name;
    size_t cases, findings[2];
    int64_t tokens, tokens_other;
    double nll[2];
} ds_sum;

static const char *sget(const json_t *o, const char *k)
{
    return json_string_value(json_object_get(o, k));
}

/* The dataset of name in d[0..*n), added when new. */
static ds_sum *ds_of(ds_sum *d, size_t *n, const char *name)
{
    for (size_t i = 0; i < *n; i++)
        if (strcmp(d[i].name, name) == 0)
            return &d[i];
    d[*n] = (ds_sum){.name = name};
    return &d[(*n)++];
}

/* A file's own dataset aggregates against its cases (side 0 baseline, 1 candidate). */
static int aggregates_agree(const json_t *doc, const ds_sum *d, size_t nd, int side,
                            golden_error *err)
{
    const char *who = side ? "candidate" : "baseline";
    size_t i;
    json_t *o;
    json_array_foreach(json_object_get(doc, "datasets"), i, o) {
        const char *name = sget(o, "dataset");
        const ds_sum *s = NULL;
        for (size_t j = 0; j < nd; j++)
            if (strcmp(d[j].name, name) == 0)
                s = &d[j];
        if (!s)
            return golden_fail_where(err, GOLDEN_EINVAL, "a dataset none of the file's cases "
                                     "belongs to", "%s score#/datasets/%zu", who, i);
        double ppl = exp(s->nll[side] / (double)s->tokens);
        json_t *st = json_object_get(o, "perplexity");
        json_int_t tok = json_integer_value(json_object_get(o, "scored_tokens"));
        json_int_t fnd = json_integer_value(json_object_get(o, "findings"));
        if (tok != s->tokens || (size_t)fnd != s->findings[side] ||
            (s->findings[side] == 0 &&
             !(json_is_number(st) && fabs(json_number_value(st) - ppl) <= 1e-9 * ppl)))
            return golden_fail_what(err, GOLDEN_EINVAL, who,
                                    "score file: dataset %s says %lld scored tokens, %lld "
                                    "findings, perplexity %.10g; its cases give %lld, %zu, %.10g",
                                    name, (long long)tok, (long long)fnd,
                                    json_is_number(st) ? json_number_value(st) : NAN,
                                    (long long)s->tokens, s->findings[side], ppl);
    }
    if (i != nd)
        return golden_fail_what(err, GOLDEN_EINVAL, who, "score file lists %zu datasets, its "
                                "cases name %zu", i, nd);
    return 0;
}

/* Sums of both sides' cases into d (the baseline's order); the case sets must be equal. */
static int sum_cases(const json_t *b, const json_t *c, ds_sum *d, size_t *nd, golden_error *err)
{
    json_t *bc = json_object_get(b, "cases"), *cc = json_object_get(c, "cases");
    golden_strmap m = {0};
    size_t i;
    json_t *o;
    int rc = lg_strmap_reserve(&m, json_array_size(bc)) ? GOLDEN_ERR : 0;
    if (rc)
        return golden_fail_what(err, GOLDEN_ENOMEM, NULL, "out of memory");
    json_array_foreach(bc, i, o) {
        const char *id = sget(o, "case_id");
        ds_sum *s = ds_of(d, nd, sget(o, "dataset"));
        s->cases++;
        s->tokens += json_integer_value(json_object_get(o, "scored_tokens"));
        s->findings[0] += json_object_get(o, "finding") != NULL;
        s->nll[0] += json_number_value(json_object_get(o, "nll_sum"));
        if (lg_strmap_put(&m, id, strlen(id), i, NULL) != 0) {
            lg_strmap_free(&m);
            return golden_fail_what(err, GOLDEN_EINVAL, "baseline", "score file: case %s appears "
                                    "twice (or out of memory)", id);
        }
    }
    json_array_foreach(cc, i, o) {
        const char *id = sget(o, "case_id");
        uint64_t at;
        json_t *bo = lg_strmap_get(&m, id, strlen(id), &at) ? json_array_get(bc, at) : NULL;
        if (!bo || strcmp(sget(bo, "dataset"), sget(o, "dataset")) != 0 ||
            json_integer_value(json_object_get(bo, "scored_tokens")) !=
                json_integer_value(json_object_get(o, "scored_tokens"))) {
            lg_strmap_free(&m);
            return golden_fail_what(err, GOLDEN_EINVAL, "candidate", "score file: case %s is %s "
                                    "the baseline's", id, bo ? "another case (dataset or scored "
                                    "tokens) than" : "not among");
        }
        ds_sum *s = ds_of(d, nd, sget(o, "dataset"));
        s->tokens_other += json_integer_value(json_object_get(o, "scored_tokens"));
        s->findings[1] += json_object_get(o, "finding") != NULL;
        s->nll[1] += json_number_value(json_object_get(o, "nll_sum"));
    }
    lg_strmap_free(&m);
    if (json_array_size(cc) != json_array_size(bc))
        return golden_fail_what(err, GOLDEN_EINVAL, "candidate", "score file: %zu cases, the "
                                "baseline's %zu", json_array_size(cc), json_array_size(bc));
    return 0;
}

static json_t *compared(const ds_sum *s)
{
    bool num = s->findings[0] == 0 && s->findings[1] == 0;
    double b = exp(s->nll[0] / (double)s->tokens), c = exp(s->nll[1] / (double)s->tokens);
    return json_pack("{s:s,s:I,s:I,s:o,s:o,s:o,s:I,s:I}", "dataset", s->name, "cases",
                     (json_int_t)s->cases, "scored_tokens", (json_int_t)s->tokens, "baseline",
                     num ? golden_json_real(b) : json_null(), "candidate",
                     num ? golden_json_real(c) : json_null(), "regression_pct",
                     num ? golden_json_real(100.0 * (c - b) / b) : json_null(), "baseline_findings",
                     (json_int_t)s->findings[0], "candidate_findings",
                     (json_int_t)s->findings[1]);
}

int golden_score_compare(const json_t *baseline, const json_t *candidate, json_t **out,
                         golden_error *err)
{
    *out = NULL;
    const char *mb = sget(baseline, "manifest_sha256"), *mc = sget(candidate, "manifest_sha256");
    if (!mb || !mc || strcmp(mb, mc) != 0)
        return golden_fail_what(err, GOLDEN_EINVAL, "candidate", "score file scored another "
                                "manifest (sha256 %.12s..., the baseline's %.12s...)",
                                mc ? mc : "?", mb ? mb : "?");
    size_t n = json_array_size(json_object_get(baseline, "cases")), nd = 0;
    ds_sum *d = calloc(n ? n : 1, sizeof *d);
    if (!d)
        return golden_fail_what(err, GOLDEN_ENOMEM, NULL, "out of memory");
    int rc = sum_cases(baseline, candidate, d, &nd, err);
    if (rc == 0)
        rc = aggregates_agree(baseline, d, nd, 0, err);
    if (rc == 0)
        rc = aggregates_agree(candidate, d, nd, 1, err);
    json_t *arr = rc == 0 ? json_array() : NULL;
    for (size_t i = 0; rc == 0 && i < nd; i++)
        if (!arr || json_array_append_new(arr, compared(&d[i])))
            rc = golden_fail_what(err, GOLDEN_ENOMEM, NULL, "out of memory");
    free(d);
    if (rc) {
        json_decref(arr);
        return GOLDEN_ERR;
    }
    *out = arr;
    return 0;
}
