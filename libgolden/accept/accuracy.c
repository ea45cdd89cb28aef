/* Step 3: the delivered candidate goldens against the team's reference under the team's
 * policy (three-way against the production golden when given), and the vendor's delivered
 * tolerances compared with the team's, threshold by threshold, tensor by tensor: a looser
 * vendor tolerance is a finding and is never applied. */
#include "accept/accept_int.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "golden/hash.h"
#include "golden/policy.h"
#include "golden/store.h"

/* The fields of golden_tier_limits in order; +1 = a larger value is looser (a maximum), -1 = a
 * smaller value is looser (a minimum). */
static const struct {
    const char *name;
    int looser;
} limit_fields[GOLDEN_LIMITS_N] = {
    {"cosine_min", -1}, {"top1_min", -1}, {"top5_min", -1}, {"near_tie_margin", +1},
    {"baseline_ratio", +1}, {"rel_err_max", +1}, {"norm_ratio_tol", +1},
    {"row_cosine_min", -1}, {"kl_max", +1}, {"logsoftmax_max_abs", +1}, {"noise_floor", +1}};

/* Whether vendor value v is looser than team value t (NaN = the check is off). */
static bool looser(double v, double t, int dir, int field)
{
    if (isnan(t))
        return false;
    /* near_tie_margin NaN is not "off" but one step of the dtype: below any set margin */
    if (field == 3 && isnan(v))
        return false;
    if (isnan(v))
        return true;
    return dir > 0 ? v > t : v < t;
}

static int tolerances(acc_ctx *c, golden_accept_step *s, const golden_policy *team)
{
    char tp[PATH_MAX];
    const char *t = acc_role_path(c, "goldens", "tolerances", NULL, tp, sizeof tp);
    if (!t)
        return acc_fail(s, c->err, "handoff-missing", "handoff.json",
                        "item goldens lists no usable file with role tolerances");
    golden_policy *v = golden_policy_new();
    if (!v)
        return golden_fail_what(c->err, GOLDEN_ENOMEM, NULL, "out of memory");
    golden_error e;
    golden_error_clear(&e);
    int rc = 0;
    if (golden_policy_load(v, t, &e) != 0) {
        rc = acc_fail(s, c->err, "tolerances", t, "the vendor's tolerances cannot be read "
                      "as calculet-diff-policy/v1: %s", e.what);
        golden_policy_free(v);
        return rc;
    }
    size_t compared = 0, reported = 0;
    for (size_t i = 0; i < c->diff->n && rc == 0; i++) {
        const golden_diff_tensor *d = &c->diff->tensors[i];
        golden_judge vj, tj;
        golden_policy_resolve(team, d->name, d->dtype_ref, d->dtype_cand, &tj);
        golden_policy_resolve(v, d->name, d->dtype_ref, d->dtype_cand, &vj);
        if (vj.tier != tj.tier) {
            if (reported++ < 8)
                rc = acc_fail(s, c->err, "tolerances", t,
                              "%s: the vendor judges it at the %s tier, the team at the %s tier",
                              d->name, golden_tier_name(vj.tier), golden_tier_name(tj.tier));
            continue;
        }
        const double *vl = &vj.limits.cosine_min, *tl = &tj.limits.cosine_min;
        for (int k = 0; k < GOLDEN_LIMITS_N && rc == 0; k++) {
            if (isnan(tl[k]))
                continue;
            compared++;
            if (looser(vl[k], tl[k], limit_fields[k].looser, k) && reported++ < 8)
                rc = acc_fail(s, c->err, "looser-tolerance", t,
                              "%s: the vendor's %s %g is looser than the team's %g (not applied)",
                              d->name, limit_fields[k].name, vl[k], tl[k]);
        }
        double va[2] = {vj.atol, vj.rtol}, ta[2] = {tj.atol, tj.rtol};
        static const char *const an[2] = {"atol", "rtol"};
        for (int k = 0; k < 2 && rc == 0; k++) {
            compared++;
            if (looser(va[k], ta[k], +1, -1) && reported++ < 8)
                rc = acc_fail(s, c->err, "looser-tolerance", t,
                              "%s: the vendor's %s %g is looser than the team's %g (not applied)",
                              d->name, an[k], va[k], ta[k]);
        }
    }
    golden_policy_free(v);
    if (rc)
        return rc;
    if (reported > 8 &&
        acc_fail(s, c->err, "looser-tolerance", t, "... and %zu more", reported - 8))
        return -1;
    if (compared == 0)
        return acc_fail(s, c->err, "tolerances", t, "no threshold of the vendor's tolerances "
                        "could be compared with the team's");
    acc_note(s, "%zu vendor threshold(s) compared with the team's over %zu tensor(s)%s",
             compared, c->diff->n, reported ? "" : ": none looser");
    return 0;
}

/* calculet-accuracy-result/v1 from the diff result (for the experiment folder). */
static json_t *accuracy_doc(const acc_ctx *c, const char *exp_id, const char *report_sha)
{
    const golden_diff_result *r = c->diff;
    size_t compared = 0, mism = 0, layers = 0, prompts = 0, exact = 0;
    uint64_t new_nan = 0, new_inf = 0, rows = 0, ntr = 0, ntf = 0;
    double min_cos = 1, thr = NAN, top1 = 0, top5 = 0, max_abs = 0, max_rel = 0;
    for (size_t i = 0; i < r->n; i++) {
        const golden_diff_tensor *t = &r->tensors[i];
        if (!t->compared) {
            mism++;
            continue;
        }
        compared++;
        new_nan += t->m.new_nan;
        new_inf += t->m.new_inf;
        if (t->judge.tier == GOLDEN_TIER_LAYER) {
            layers++;
            if (isfinite(t->m.cosine) && t->m.cosine < min_cos)
                min_cos = t->m.cosine;
            if (isnan(thr))
                thr = t->judge.limits.cosine_min;
        } else if (t->judge.tier == GOLDEN_TIER_LOGITS && t->m.rows) {
            rows += t->m.rows;
            top1 += t->m.top1_match * (double)t->m.rows;
            top5 += t->m.top5_overlap * (double)t->m.rows;
            ntr += t->m.near_tie_rows;
            ntf += t->m.near_tie_flips;
            if (isfinite(t->m.max_abs) && t->m.max_abs > max_abs)
                max_abs = t->m.max_abs;
            if (isfinite(t->m.max_rel) && t->m.max_rel > max_rel)
                max_rel = t->m.max_rel;
        } else if (t->judge.tier == GOLDEN_TIER_TOKENS) {
            size_t L = strlen(t->name);
            if (L >= 7 && strcmp(t->name + L - 7, "/tokens") == 0) {
                prompts++;
                exact += t->passed;
            }
        }
    }
    json_t *layer = json_pack("{s:I,s:f}", "layers", (json_int_t)layers, "min_cosine",
                              min_cos < -1 ? -1 : min_cos);
    if (layer && isfinite(thr))
        json_object_set_new(layer, "threshold", json_real(thr));
    return json_pack("{s:s,s:s,s:s,s:{s:I,s:I,s:I,s:I},s:o,s:{s:I,s:f,s:f,s:f,s:f,s:I,s:I},"
                     "s:{s:I,s:I},s:[{s:s,s:s}]}",
                     "schema", "calculet-accuracy-result/v1", "experiment_id", exp_id,
                     "verdict", c->accuracy_pass ? "pass" : "fail", "kernel", "tensors",
                     (json_int_t)compared, "shape_mismatches", (json_int_t)mism, "new_nan",
                     (json_int_t)new_nan, "new_inf", (json_int_t)new_inf, "layer", layer,
                     "logits", "rows", (json_int_t)rows, "top1_match",
                     rows ? top1 / (double)rows : 1.0, "top5_overlap",
                     rows ? top5 / (double)rows : 1.0, "max_abs", max_abs, "max_rel", max_rel,
                     "near_tie_rows", (json_int_t)ntr, "near_tie_flips", (json_int_t)ntf,
                     "greedy_tokens", "prompts", (json_int_t)prompts, "exact",
                     (json_int_t)exact, "reports", "path", "accuracy/diff-report.json",
                     "sha256", report_sha);
}

int acc_diff_findings(acc_ctx *c, golden_accept_step *s, const golden_diff_result *r,
                      const char *cand)
{
    size_t shown = 0;
    for (size_t i = 0; i < r->n; i++) {
        const golden_diff_tensor *t = &r->tensors[i];
        if (t->passed)
            continue;
        if (shown++ < 8 &&
            acc_fail(s, c->err, "accuracy", cand, "%s (%s tier): %s", t->name,
                     golden_tier_name(t->judge.tier),
                     t->n_reasons ? t->reasons[0] : "failed"))
            return -1;
    }
    for (size_t i = 0; i < r->n_missing_cand; i++)
        if (shown++ < 8 && acc_fail(s, c->err, "accuracy", cand,
                                    "%s: in the team's golden, not delivered",
                                    r->missing_in_candidate[i]))
            return -1;
    if (shown > 8 && acc_fail(s, c->err, "accuracy", cand, "... and %zu more", shown - 8))
        return -1;
    if (!r->pass && shown == 0 &&
        acc_fail(s, c->err, "accuracy", cand, "%s", r->empty ? "no tensor was compared"
                                                               : "golden-diff failed"))
        return -1;
    return 0;
}

int acc_step_accuracy(acc_ctx *c, golden_accept_step *s)
{
    golden_policy *team = golden_policy_new();
    if (!team)
        return golden_fail_what(c->err, GOLDEN_ENOMEM, NULL, "out of memory");
    int rc = -1;
    if (c->o->policy && golden_policy_load(team, c->o->policy, c->err) != 0)
        goto done; /* the team's policy: could not check */
    char cp[PATH_MAX];
    const char *cand = acc_role_path(c, "goldens", "golden", NULL, cp, sizeof cp);
    if (!cand) {
        rc = acc_fail(s, c->err, "handoff-missing", "handoff.json",
                      "item goldens lists no usable file with role golden");
        goto done;
    }
    /* the team's goldens must open: else could not check */
    const char *own[2] = {c->o->golden, c->o->baseline};
    for (int i = 0; i < 2; i++) {
        golden_reader *rd = NULL;
        if (own[i] && golden_reader_open(own[i], &rd, c->err) != 0)
            goto done;
        golden_reader_close(rd);
    }
    golden_diff_opts d = GOLDEN_DIFF_OPTS_INIT;
    d.reference = c->o->golden;
    d.candidate = cand;
    d.baseline = c->o->baseline;
    d.policy = team;
    d.threads = c->o->threads;
    golden_error e;
    golden_error_clear(&e);
    if (golden_diff_run(&d, &c->diff, &e) != 0) {
        /* out of memory, or the team's policy (a rule matching none of the team's tensors):
         * could not check; anything else is the delivered golden's doing */
        size_t pl = c->o->policy ? strlen(c->o->policy) : 0;
        if (e.code == GOLDEN_ENOMEM || (pl && strncmp(e.where, c->o->policy, pl) == 0)) {
            *c->err = e;
            goto done;
        }
        rc = acc_fail(s, c->err, "accuracy", e.where[0] ? e.where : cand,
                      "the delivered golden cannot be compared: %s", e.what);
        goto done;
    }
    c->accuracy_pass = c->diff->pass;
    if (acc_diff_findings(c, s, c->diff, cand) != 0 || tolerances(c, s, team) != 0)
        goto done;
    acc_note(s, "%zu tensor(s) compared with %s%s%s: %zu passed, %zu failed", c->diff->n,
             c->o->golden, c->o->baseline ? ", three-way against " : "",
             c->o->baseline ? c->o->baseline : "", c->diff->passed, c->diff->failed);
    s->report = golden_diff_to_json(c->diff);
    if (!s->report) {
        golden_fail_what(c->err, GOLDEN_ENOMEM, NULL, "out of memory");
        goto done;
    }
    /* the experiment folder's accuracy/: the diff report and the result that cites it */
    char dir[PATH_MAX + 32], rp[PATH_MAX + 64], ap[PATH_MAX + 64], sha[65];
    snprintf(dir, sizeof dir, "%s/accuracy", c->work);
    snprintf(rp, sizeof rp, "%s/diff-report.json", dir);
    snprintf(ap, sizeof ap, "%s/result.json", dir);
    const char *id = json_string_value(json_object_get(golden_doc_root(c->idx), "experiment_id"));
    if (acc_mkdirs(dir, c->err) != 0 || acc_write_json(rp, s->report, c->err) != 0 ||
        golden_sha256_file(rp, sha, c->err) != 0)
        goto done;
    json_t *acc = accuracy_doc(c, id ? id : "OP-UNKNOWN-0000", sha);
    if (!acc) {
        golden_fail_what(c->err, GOLDEN_ENOMEM, NULL, "out of memory");
        goto done;
    }
    rc = acc_write_json(ap, acc, c->err);
    json_decref(acc);
    json_array_append_new(s->reports, json_string("accuracy/diff-report.json"));
    json_array_append_new(s->reports, json_string("accuracy/result.json"));
done:
    golden_policy_free(team);
    return rc;
}
