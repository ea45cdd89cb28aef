/* npu-replay score (handbook section 6, task-level metric): per case, the teacher-forced
 * negative log-likelihood of the given tokens (the case's token file: past + prompt ids, every
 * one after the first predicted from the ones before it) and its perplexity; per dataset the
 * token-weighted aggregate. A mixed average over datasets is never formed. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "golden/hash.h"
#include "golden/replay_run.h"
#include "golden/report.h"
#include "golden/score.h"
#include "replay/run_priv.h"

int golden_score_nll(const float *row, int vocab, int32_t target, double *nll, char *why,
                     size_t why_len)
{
    if (vocab < 1 || target < 0 || target >= vocab) {
        snprintf(why, why_len, "token %ld is outside the vocabulary of %d", (long)target, vocab);
        return -1;
    }
    double m = -INFINITY;
    for (int i = 0; i < vocab; i++) {
        double x = row[i];
        if (isnan(x) || x == INFINITY) {
            snprintf(why, why_len, "logit %d is %s", i, isnan(x) ? "NaN" : "+Inf");
            return 1;
        }
        if (x > m)
            m = x;
    }
    if (m == -INFINITY) {
        snprintf(why, why_len, "every logit is -inf");
        return 1;
    }
    if ((double)row[target] == -INFINITY) {
        snprintf(why, why_len, "the given token %ld has logit -inf (probability 0)", (long)target);
        return 1;
    }
    double s = 0;
    for (int i = 0; i < vocab; i++)
        s += exp((double)row[i] - m); /* exp(-inf) = 0: a masked entry adds nothing */
    *nll = m + log(s) - (double)row[target]; /* finite: f32 logits are at most 2^129 apart */
    return 0;
}

typedef struct {
    const golden_score_opts *o;
    const golden_backend_info *info;
    float *row;
    uint16_t *half;
    int64_t *keep;
} scorer;

/* The logits of position pos (v2: kept by the last prefill_keep; v1: pos < 0, the last one)
 * as f32 in s->row. */
static int row_at(scorer *s, int64_t pos, golden_error *err)
{
    int v = s->info->vocab_size;
    void *dst = s->info->logits_dtype == GOLDEN_BK_BF16 ? (void *)s->half : (void *)s->row;
    int rc = pos >= 0 ? golden_backend_logits_at(s->o->backend, 0, pos, 0, v, dst, err)
                      : golden_backend_logits(s->o->backend, 0, 0, v, dst, err);
    if (rc == 0 && dst == (void *)s->half)
        golden_logits_bf16_to_f32(s->half, 0, (size_t)v, s->row);
    return rc;
}

/* One position's NLL into *sum; a finding goes to why (and stops the case). */
static int add_nll(scorer *s, const golden_replay_case *k, size_t p, double *sum, char *why,
                   size_t why_len, golden_error *err)
{
    double nll;
    char w[160];
    int r = golden_score_nll(s->row, s->info->vocab_size, k->ids[p + 1], &nll, w, sizeof w);
    if (r < 0)
        return golden_fail_what(err, GOLDEN_EINVAL, k->case_id, "position %zu: %s", p + 1, w);
    if (r > 0) {
        snprintf(why, why_len, "position %zu (predicting token %zu): %s", p, p + 1, w);
        return 0;
    }
    *sum += nll;
    return 0;
}

/* Teacher-forced NLL of the case's ids[1..n) into *sum, or a finding into why. */
static int score_case(scorer *s, const golden_replay_case *k, double *sum, char *why,
                      size_t why_len, golden_error *err)
{
    golden_backend *b = s->o->backend;
    size_t n = k->n_ids;
    *sum = 0;
    why[0] = 0;
    /* every id is below the vocabulary: checked when the manifest was loaded */
    if (golden_backend_reset(b, 0, err))
        return GOLDEN_ERR;
    if (golden_backend_abi(b) < 2) { /* version 1: one position at a time, decode by decode */
        if (golden_backend_prefill(b, 0, 0, k->ids, 1, err))
            return GOLDEN_ERR;
        for (size_t p = 0; p + 1 < n && !why[0]; p++) {
            if ((p > 0 && golden_backend_decode(b, 0, k->ids[p], err)) || row_at(s, -1, err) ||
                add_nll(s, k, p, sum, why, why_len, err))
                return GOLDEN_ERR;
        }
        return 0;
    }
    for (size_t c = 0; c + 1 < n && !why[0]; c += GOLDEN_BK_MAX_KEEP) {
        size_t len = n - c < GOLDEN_BK_MAX_KEEP ? n - c : GOLDEN_BK_MAX_KEEP;
        size_t nk = 0; /* positions with a next token: all but the sequence's last */
        for (size_t p = c; p < c + len && p + 1 < n; p++)
            s->keep[nk++] = (int64_t)p;
        if (golden_backend_prefill_keep(b, 0, (int64_t)c, k->ids + c, len, s->keep, nk, err))
            return GOLDEN_ERR;
        for (size_t i = 0; i < nk && !why[0]; i++)
            if (row_at(s, s->keep[i], err) || add_nll(s, k, (size_t)s->keep[i], sum, why, why_len,
                                                      err))
                return GOLDEN_ERR;
    }
    return 0;
}

typedef struct {
    const char *name;
    size_t cases, findings;
    int64_t tokens;
    double nll;
} dataset_acc;

static json_t *case_json(const golden_replay_case *k, double sum, const char *why)
{
    int64_t scored = (int64_t)k->n_ids - 1;
    json_t *c = json_pack("{s:s,s:s,s:I,s:I}", "case_id", k->case_id, "dataset", k->dataset,
                          "tokens", (json_int_t)k->n_ids, "scored_tokens", (json_int_t)scored);
    if (!c)
        return NULL;
    int bad = why[0] ? json_object_set_new(c, "finding", json_string(why))
                     : json_object_set_new(c, "nll_sum", json_real(sum)) ||
                           json_object_set_new(c, "nll_mean", json_real(sum / (double)scored)) ||
                           json_object_set_new(c, "perplexity",
                                               golden_json_real(exp(sum / (double)scored)));
    if (bad) {
        json_decref(c);
        return NULL;
    }
    return c;
}

static json_t *datasets_json(const dataset_acc *d, size_t nd)
{
    json_t *arr = json_array();
    for (size_t i = 0; arr && i < nd; i++) {
        json_t *o = json_pack("{s:s,s:I,s:I,s:I}", "dataset", d[i].name, "cases",
                              (json_int_t)d[i].cases, "scored_tokens", (json_int_t)d[i].tokens,
                              "findings", (json_int_t)d[i].findings);
        /* a dataset with a finding has no number: a partial average would drop its cases */
        if (o && !d[i].findings &&
            (json_object_set_new(o, "nll_sum", json_real(d[i].nll)) ||
             json_object_set_new(o, "nll_mean", json_real(d[i].nll / (double)d[i].tokens)) ||
             json_object_set_new(o, "perplexity",
                                 golden_json_real(exp(d[i].nll / (double)d[i].tokens))))) {
            json_decref(o);
            o = NULL;
        }
        if (!o || json_array_append_new(arr, o)) {
            json_decref(arr);
            return NULL;
        }
    }
    return arr;
}

static bool selected(const golden_score_opts *o, const char *id)
{
    return replay_case_selected(o->n_globs, o->globs, id);
}

static int head_json(const golden_score_opts *o, json_t **doc, golden_error *err)
{
    char sha[65];
    if (golden_sha256_file(o->manifest, sha, err))
        return GOLDEN_ERR;
    const golden_backend_info *in = golden_backend_get_info(o->backend);
    *doc = json_pack("{s:s,s:s,s:s,s:i,s:s,s:s,s:s,s:s}", "schema", GOLDEN_SCHEMA_SCORE, "side",
                     o->side, "backend", golden_backend_name(o->backend), "abi_version",
                     (int)golden_backend_abi(o->backend), "logits_dtype",
                     in->logits_dtype == GOLDEN_BK_BF16 ? "bf16" : "f32", "manifest", o->manifest,
                     "manifest_sha256", sha, "scored",
                     "each case's token file (past + prompt ids), every token after the first, "
                     "teacher-forced");
    return *doc ? 0 : golden_fail_what(err, GOLDEN_ENOMEM, o->manifest, "out of memory");
}

/* Score the cases into doc's "cases" and the accumulators. */
static int score_all(scorer *s, golden_replay_case *ks, size_t nk, json_t *cases,
                     dataset_acc *d, size_t *nd, size_t skipped[2], size_t *findings,
                     golden_error *err)
{
    for (size_t i = 0; i < nk; i++) {
        golden_replay_case *k = &ks[i];
        if (!selected(s->o, k->case_id))
            continue;
        if (k->rejection || k->n_ids < 2) {
            skipped[k->rejection ? 0 : 1]++;
            continue;
        }
        if (s->o->stop && *s->o->stop)
            return golden_fail_what(err, GOLDEN_EIO, k->case_id, "interrupted");
        double sum;
        char why[400];
        if (score_case(s, k, &sum, why, sizeof why, err))
            return s->o->stop && *s->o->stop /* the host was killed for it: not its fault */
                       ? golden_fail_what(err, GOLDEN_EIO, k->case_id, "interrupted")
                       : GOLDEN_ERR;
        size_t j = 0;
        while (j < *nd && strcmp(d[j].name, k->dataset) != 0)
            j++;
        if (j == *nd)
            d[(*nd)++] = (dataset_acc){k->dataset, 0, 0, 0, 0};
        d[j].cases++;
        d[j].tokens += (int64_t)k->n_ids - 1;
        d[j].nll += why[0] ? 0 : sum;
        d[j].findings += why[0] != 0;
        *findings += why[0] != 0;
        if (json_array_append_new(cases, case_json(k, sum, why)))
            return golden_fail_what(err, GOLDEN_ENOMEM, k->case_id, "out of memory");
    }
    return 0;
}

int golden_score_run(const golden_score_opts *o, json_t **doc, size_t *findings,
                     golden_error *err)
{
    *doc = NULL;
    *findings = 0;
    if (!o || o->version != 1 || !o->backend || !o->manifest || !o->side)
        return golden_fail_what(err, GOLDEN_EINVAL, NULL, "golden_score_run: bad options");
    golden_replay_case *ks = NULL;
    size_t nk = 0;
    if (replay_manifest_load_vocab(o->manifest, golden_backend_get_info(o->backend)->vocab_size,
                                   &ks, &nk, err))
        return GOLDEN_ERR;
    const golden_backend_info *info = golden_backend_get_info(o->backend);
    size_t v = (size_t)info->vocab_size;
    scorer s = {o, info, malloc(v * sizeof(float)), malloc(v * sizeof(uint16_t)),
                malloc(GOLDEN_BK_MAX_KEEP * sizeof(int64_t))};
    dataset_acc *d = calloc(nk ? nk : 1, sizeof *d);
    json_t *cases = json_array();
    size_t nd = 0, skipped[2] = {0, 0};
    int rc = !s.row || !s.half || !s.keep || !d || !cases
                 ? golden_fail_what(err, GOLDEN_ENOMEM, o->manifest, "out of memory")
                 : score_all(&s, ks, nk, cases, d, &nd, skipped, findings, err);
    if (rc == 0 && nd == 0)
        rc = golden_fail_what(err, GOLDEN_EINVAL, o->manifest,
                              "no case to score (%zu rejection, %zu with fewer than 2 tokens%s)",
                              skipped[0], skipped[1], o->n_globs ? ", or none selected" : "");
    if (rc == 0)
        rc = head_json(o, doc, err);
    json_t *ds = rc == 0 ? datasets_json(d, nd) : NULL;
    if (rc == 0 && (!ds || json_object_set_new(*doc, "datasets", ds) ||
                    json_object_set(*doc, "cases", cases) ||
                    json_object_set_new(*doc, "skipped",
                                        json_pack("{s:I,s:I}", "rejection",
                                                  (json_int_t)skipped[0], "too_short",
                                                  (json_int_t)skipped[1])) ||
                    json_object_set_new(*doc, "findings", json_integer((json_int_t)*findings))))
        rc = golden_fail_what(err, GOLDEN_ENOMEM, o->manifest, "out of memory");
    if (rc) {
        json_decref(*doc);
        *doc = NULL;
    }
    json_decref(cases);
    free(d);
    free(s.row);
    free(s.half);
    free(s.keep);
    golden_replay_cases_free(ks, nk);
    return rc;
}
