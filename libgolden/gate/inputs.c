/* What the decision reads besides the summary: hypothesis.yaml's acceptance, the accuracy result
 * (and the golden-diff reports it names), stability/faults.jsonl, and the calbin manifests. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gate/decide_int.h"
#include "golden/doc.h"

static int load(const char *dir, const char *rel, golden_doc **doc, golden_error *err)
{
    char *p = gate_path(dir, rel);
    if (!p)
        return gate_oom(err);
    int rc = golden_doc_load_file(p, doc, err);
    free(p);
    return rc;
}

static int need_number(const golden_doc *h, const json_t *acc, const char *key, double *v,
                       golden_error *err)
{
    json_t *n = json_object_get(acc, key);
    if (!json_is_number(n))
        return golden_fail_where(err, GOLDEN_EINVAL, "a number is required here",
                                 "%s#/acceptance/%s", golden_doc_name(h), key);
    *v = json_number_value(n);
    return 0;
}

static double acc_bound(const json_t *acc, const char *key);

/* The acceptance numbers of the hypothesis in in->hypothesis. */
static int acceptance_of(gate_inputs *in, golden_error *err)
{
    json_t *root = golden_doc_root(in->hypothesis);
    json_t *acc = json_object_get(root, "acceptance");
    in->experiment_id = json_string_value(json_object_get(root, "experiment_id"));
    in->family = json_string_value(json_object_get(root, "operator_family"));
    in->rollback = json_string_value(json_object_get(root, "rollback"));
    if (!in->experiment_id)
        return golden_fail_where(err, GOLDEN_EINVAL, "experiment_id is required", "%s",
                                 golden_doc_name(in->hypothesis));
    if (need_number(in->hypothesis, acc, "p99_regression_max_pct", &in->p99_max, err) != 0 ||
        need_number(in->hypothesis, acc, "target_metric_improvement_min_pct", &in->target_min,
                    err) != 0)
        return -1;
    json_t *g = json_object_get(acc, "graph_improvement_min_pct");
    in->graph_min = json_is_number(g) ? json_number_value(g) : in->target_min;
    json_t *ph = json_object_get(acc, "phase_improvement_min_pct");
    in->phase_min = json_is_number(ph) ? json_number_value(ph) : GATE_PHASE_MIN_PCT;
    in->p99_ttft_max = acc_bound(acc, "p99_ttft_ms_max");
    in->p99_tpot_max = acc_bound(acc, "p99_tpot_ms_max");
    json_t *keep = json_object_get(acc, "keep_experiment_on_p99_regression");
    in->keep_experiment = json_is_number(keep) && json_number_value(keep) != 0;
    return 0;
}

static int read_acceptance(const char *dir, gate_inputs *in, golden_error *err)
{
    if (load(dir, "hypothesis.yaml", &in->hypothesis, err) != 0)
        return -1;
    return acceptance_of(in, err);
}

int golden_gate_hypothesis_check(const char *path, golden_error *err)
{
    gate_inputs in;
    memset(&in, 0, sizeof in);
    int rc = golden_doc_load_file(path, &in.hypothesis, err);
    if (rc == 0)
        rc = acceptance_of(&in, err);
    golden_doc_free(in.hypothesis);
    return rc;
}

/* One accuracy number against its bound: a miss (or a number that is not there) counts. */
static void bound(gate_inputs *in, const char *what, const json_t *v, double lim, bool at_least)
{
    if (isnan(lim))
        return;
    double x = json_is_number(v) ? json_number_value(v) : NAN;
    if (at_least ? x >= lim : x <= lim)
        return;
    if (in->accuracy_contradictions++ == 0) {
        if (isnan(x))
            snprintf(in->accuracy_first, sizeof in->accuracy_first, "%s is not given (bound %s "
                     "%.6g)", what, at_least ? ">=" : "<=", lim);
        else
            snprintf(in->accuracy_first, sizeof in->accuracy_first, "%s is %.6g, bound %s %.6g",
                     what, x, at_least ? ">=" : "<=", lim);
    }
}

static double acc_bound(const json_t *acc, const char *key)
{
    json_t *v = json_object_get(acc, key);
    return json_is_number(v) ? json_number_value(v) : NAN;
}

/* The numbers of accuracy/result.json, read for what they say rather than its verdict:
 * top-1 and top-5 against the hypothesis' acceptance, greedy tokens all exact, no new NaN or
 * Inf or shape mismatch, the layer cosine at least its threshold (and acceptance's
 * layer_cosine_min / cosine_min when given). */
static void accuracy_numbers(gate_inputs *in)
{
    json_t *root = golden_doc_root(in->accuracy);
    json_t *acc = json_object_get(golden_doc_root(in->hypothesis), "acceptance");
    json_t *lg = json_object_get(root, "logits"), *k = json_object_get(root, "kernel");
    json_t *ly = json_object_get(root, "layer"), *g = json_object_get(root, "greedy_tokens");
    bound(in, "logits.top1_match", json_object_get(lg, "top1_match"),
          acc_bound(acc, "top1_match_min"), true);
    bound(in, "logits.top5_overlap", json_object_get(lg, "top5_overlap"),
          acc_bound(acc, "top5_overlap_min"), true);
    bound(in, "kernel.new_nan", json_object_get(k, "new_nan"), 0, false);
    bound(in, "kernel.new_inf", json_object_get(k, "new_inf"), 0, false);
    bound(in, "kernel.shape_mismatches", json_object_get(k, "shape_mismatches"), 0, false);
    json_t *prompts = json_object_get(g, "prompts");
    bound(in, "greedy_tokens.exact (of greedy_tokens.prompts)", json_object_get(g, "exact"),
          json_is_number(prompts) ? json_number_value(prompts) : INFINITY, true);
    json_t *cos = json_object_get(ly, "min_cosine");
    bound(in, "layer.min_cosine", cos, acc_bound(ly, "threshold"), true);
    bound(in, "layer.min_cosine", cos, acc_bound(acc, "layer_cosine_min"), true);
    bound(in, "layer.min_cosine", cos, acc_bound(acc, "cosine_min"), true);
}

/* accuracy/result.json's verdict and those of the golden-diff reports it names. */
static int read_accuracy(const char *dir, gate_inputs *in, golden_error *err)
{
    if (load(dir, "accuracy/result.json", &in->accuracy, err) != 0)
        return -1;
    json_t *root = golden_doc_root(in->accuracy);
    const char *v = json_string_value(json_object_get(root, "verdict"));
    if (!v)
        return golden_fail_where(err, GOLDEN_EINVAL, "verdict is required", "%s",
                                 golden_doc_name(in->accuracy));
    in->accuracy_pass = !strcmp(v, "pass");
    accuracy_numbers(in);
    if (gate_perplexity(dir, in, err) != 0)
        return -1;
    json_t *logits = json_object_get(root, "logits");
    json_t *flips = json_object_get(logits, "near_tie_flips");
    in->near_tie_flips = json_is_integer(flips) ? json_integer_value(flips) : 0;
    size_t i;
    json_t *r;
    json_array_foreach(json_object_get(root, "reports"), i, r) {
        const char *path = json_string_value(json_object_get(r, "path"));
        golden_doc *rd = NULL;
        if (!path)
            return golden_fail_where(err, GOLDEN_EINVAL, "a report needs a path",
                                     "%s#/reports/%zu", golden_doc_name(in->accuracy), i);
        if (load(dir, path, &rd, err) != 0)
            return -1;
        const char *rv = json_string_value(json_object_get(golden_doc_root(rd), "verdict"));
        in->reports++;
        if (!rv || strcmp(rv, "pass")) {
            in->reports_failed++;
            if (!in->first_failed_report[0])
                snprintf(in->first_failed_report, sizeof in->first_failed_report, "%s", path);
        }
        golden_doc_free(rd);
    }
    return 0;
}

typedef struct {
    gate_inputs *in;
    bool soak; /* stability/soak-faults.jsonl: every line counts, whatever it says */
} fault_ctx;

static int fault_line(void *ctx, golden_doc *doc, size_t line_no, golden_error *err)
{
    (void)line_no;
    (void)err;
    gate_inputs *in = ((fault_ctx *)ctx)->in;
    json_t *o = golden_doc_root(doc);
    const char *side = json_string_value(json_object_get(o, "side"));
    const char *kind = json_string_value(json_object_get(o, "kind"));
    const char *sev = json_string_value(json_object_get(o, "severity"));
    json_t *rec = json_object_get(o, "recovered");
    const char *retest = json_string_value(json_object_get(o, "retest_after_reset"));
    bool wrong = kind && (!strcmp(kind, "nan_output") || !strcmp(kind, "crc_mismatch"));
    if (((fault_ctx *)ctx)->soak) {
        in->soak_faults++;
        in->soak_faults_correctness += wrong;
        return 0;
    }
    in->faults++;
    /* a fatal fault on either side whose retest after reset did not pass: the measurement of
     * that side is not known to be sound, so no soak rests on it */
    if (sev && !strcmp(sev, "fatal") && (!retest || strcmp(retest, "passed")))
        in->fatal_unretested++;
    if (!side || strcmp(side, "candidate"))
        return 0;
    in->candidate_faults++;
    /* a wrong answer, not a slow one: correctness, whatever recovery followed */
    if (wrong)
        in->candidate_faults_correctness++;
    if (json_is_false(rec) || (retest && !strcmp(retest, "failed")))
        in->candidate_faults_failed++;
    else if (!retest || strcmp(retest, "passed"))
        in->candidate_faults_unretested++;
    return 0;
}

static int read_faults(const char *dir, gate_inputs *in, golden_error *err)
{
    char *p = gate_path(dir, "stability/faults.jsonl");
    if (!p)
        return gate_oom(err);
    in->faults_present = access(p, F_OK) == 0;
    fault_ctx c = {in, false};
    int rc = in->faults_present ? golden_doc_each_jsonl(p, fault_line, &c, err) : 0;
    free(p);
    /* the 24 h soak's fault log, when the soak wrote one (issue 26) */
    char *sp = rc == 0 ? gate_path(dir, "stability/soak-faults.jsonl") : NULL;
    if (rc == 0 && !sp)
        return gate_oom(err);
    fault_ctx sc = {in, true};
    if (sp && access(sp, F_OK) == 0)
        rc = golden_doc_each_jsonl(sp, fault_line, &sc, err);
    free(sp);
    return rc;
}

/* Section 10's real KV saving, recomputed from both sides' kv_cache.bytes; a saving_bytes the
 * candidate states must be that number (else the input is wrong: -1). */
static int kv_saving(gate_inputs *in, golden_error *err)
{
    json_t *kb = json_object_get(json_object_get(in->deployment, "baseline"), "kv_cache");
    json_t *kc = json_object_get(json_object_get(in->deployment, "candidate"), "kv_cache");
    json_t *b = json_object_get(kb, "bytes"), *c = json_object_get(kc, "bytes");
    json_t *stated = json_object_get(kc, "saving_bytes");
    if (!json_is_integer(b) || !json_is_integer(c)) {
        if (json_is_integer(stated))
            return golden_fail_where(err, GOLDEN_EINVAL, "kv_cache.saving_bytes is stated but "
                                     "cannot be checked: both manifests need kv_cache.bytes",
                                     "candidate/manifest.json#/kv_cache/saving_bytes");
        return 0;
    }
    long long bb = json_integer_value(b), cb = json_integer_value(c), sv = bb - cb;
    if (json_is_integer(stated) && json_integer_value(stated) != sv) {
        char msg[300];
        snprintf(msg, sizeof msg, "kv_cache.saving_bytes is %lld, the manifests' kv_cache.bytes "
                 "give %lld - %lld = %lld", (long long)json_integer_value(stated), bb, cb, sv);
        return golden_fail_where(err, GOLDEN_EINVAL, msg,
                                 "candidate/manifest.json#/kv_cache/saving_bytes");
    }
    json_t *o = json_pack("{s:I,s:I,s:I,s:O}", "baseline_bytes", (json_int_t)bb,
                          "candidate_bytes", (json_int_t)cb, "saving_bytes", (json_int_t)sv,
                          "stated_saving_bytes", stated ? stated : json_null());
    if (!o || gate_set_real(o, "saving_pct", bb ? 100.0 * (double)sv / (double)bb : NAN) ||
        json_object_set_new(in->deployment, "kv_saving", o))
        return gate_oom(err);
    return 0;
}

/* Section 8.4's deployment figures, where a manifest carries them (top level or in calbin). */
static int read_deployment(const char *dir, gate_inputs *in, golden_error *err)
{
    static const char *const keys[3] = {"weight_package_bytes", "load_time_ms",
                                        "dram_reservation_bytes"};
    const char *const sides[2] = {"baseline/manifest.json", "candidate/manifest.json"};
    if (!(in->deployment = json_object()))
        return gate_oom(err);
    for (int s = 0; s < 2; s++) {
        char *p = gate_path(dir, sides[s]);
        golden_doc *d = NULL;
        if (!p)
            return gate_oom(err);
        int present = access(p, F_OK) == 0;
        int rc = present ? golden_doc_load_file(p, &d, err) : 0;
        free(p);
        if (rc != 0)
            return -1;
        if (!d)
            continue;
        json_t *root = golden_doc_root(d), *side = json_object();
        for (int k = 0; side && k < 3; k++) {
            json_t *v = json_object_get(root, keys[k]);
            if (!v)
                v = json_object_get(json_object_get(root, "calbin"), keys[k]);
            if (json_is_number(v))
                json_object_set(side, keys[k], v);
        }
        /* section 10: a KV-cache candidate's figures, reported as the manifest gives them */
        json_t *kv = json_object_get(root, "kv_cache");
        if (side && json_is_object(kv))
            json_object_set(side, "kv_cache", kv);
        if (!side || json_object_set_new(in->deployment, s ? "candidate" : "baseline", side)) {
            golden_doc_free(d);
            return gate_oom(err);
        }
        golden_doc_free(d);
    }
    return kv_saving(in, err);
}

int gate_inputs_read(const char *dir, gate_inputs *in, golden_error *err)
{
    memset(in, 0, sizeof *in);
    if (read_acceptance(dir, in, err) != 0 || read_accuracy(dir, in, err) != 0 ||
        read_faults(dir, in, err) != 0 || read_deployment(dir, in, err) != 0) {
        gate_inputs_free(in);
        return -1;
    }
    return 0;
}

void gate_inputs_free(gate_inputs *in)
{
    golden_doc_free(in->hypothesis);
    golden_doc_free(in->accuracy);
    json_decref(in->perplexity);
    json_decref(in->deployment);
    json_decref(in->soak);
    memset(in, 0, sizeof *in);
}
