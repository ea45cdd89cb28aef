/* golden-diff's outputs: the calculet-diff-report/v1 document, the JUnit file and the
 * human table, all built from a finished run. */
#include "tensor/diff_internal.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* What summary.trends lists (docs/golden-diff.md "Trend report"). */
#define TREND_RULE "a series of layer-tier tensors named alike but for the layer index (the " \
    "first all-digit name component), at least 4 layers, every one passed, whose rel_err or " \
    "1 - cosine has Kendall tau-b >= 0.8 against the layer index and ends at least 2x where " \
    "it starts; information, not a gate (the exit status does not change)"


/* Non-finite numbers have no JSON form: they are null. */
static json_t *juint(uint64_t v)
{
    return json_integer(v > INT64_MAX ? INT64_MAX : (json_int_t)v);
}

static json_t *jstrs(char **list, size_t n)
{
    json_t *a = json_array();
    for (size_t i = 0; a && i < n; i++)
        if (json_array_append_new(a, json_string(list[i]))) {
            json_decref(a);
            return NULL;
        }
    return a;
}

static json_t *jshape(int rank, const uint64_t *shape)
{
    json_t *a = json_array();
    for (int d = 0; a && d < rank; d++)
        if (json_array_append_new(a, juint(shape[d]))) {
            json_decref(a);
            return NULL;
        }
    return a;
}

typedef struct {
    json_t *o;
    int bad;
} jb;

static void put(jb *b, const char *key, json_t *v)
{
    if (!v || json_object_set_new(b->o, key, v))
        b->bad = 1;
}

static void put_metrics(jb *b, const golden_diff_tensor *t, const golden_cmp_metrics *m,
                        bool ok)
{
    bool f = ok && m->has_finite;
    put(b, "max_abs", f ? golden_json_real(m->max_abs) : json_null());
    if (f) {
        uint64_t co[GOLDEN_MAX_RANK];
        golden_cmp_unravel(m->max_abs_index, t->rank, t->shape, co);
        put(b, "max_abs_index", jshape(t->rank, co));
    } else {
        put(b, "max_abs_index", json_null());
    }
    put(b, "mean_abs", f ? golden_json_real(m->mean_abs) : json_null());
    put(b, "rmse", f ? golden_json_real(m->rmse) : json_null());
    put(b, "max_rel", f ? golden_json_real(m->max_rel) : json_null());
    put(b, "cosine", ok ? golden_json_real(m->cosine) : json_null());
    put(b, "mismatches", ok ? juint(m->mismatches) : json_null());
    uint64_t judged;
    /* the tensor's own (the baseline's metrics, m != &t->m, carry no verdict of their own) */
    if (m == &t->m)
        put(b, "mismatches_judged", ok && lg_diff_mismatches_judged(t, &judged) ? juint(judged)
                                                                                 : json_null());
    put(b, "max_ulp", ok && m->has_ulp ? juint(m->max_ulp) : json_null());
    put(b, "tolerance_used", f ? golden_json_real(m->max_tol) : json_null());
    put(b, "rel_err", ok ? golden_json_real(m->rel_err) : json_null());
    put(b, "norm_ratio", ok ? golden_json_real(m->norm_ratio) : json_null());
    put(b, "nonfinite_class_mismatches", ok ? juint(m->class_diff) : json_null());
    if (ok && m->ints)
        put(b, "integer_mismatches", juint(m->int_diff));
    if (ok && lg_diff_engine_tier(t) == GOLDEN_TIER_LAYER) {
        put(b, "min_row_cosine", golden_json_real(m->min_row_cosine));
        put(b, "min_row_cosine_row", m->row_cos_rows ? juint(m->min_row_cosine_row) : json_null());
    }
    if (ok && t->judge.tier == GOLDEN_TIER_LOGITS) {
        put(b, "kl_max", golden_json_real(m->kl_max));
        put(b, "kl_max_row", m->rows ? juint(m->kl_max_row) : json_null());
        put(b, "kl_mean", golden_json_real(m->kl_mean));
        put(b, "logsoftmax_max_abs", golden_json_real(m->logsoftmax_max_abs));
    }
    put(b, "new_nan", ok ? juint(m->new_nan) : json_null());
    put(b, "new_inf", ok ? juint(m->new_inf) : json_null());
    if (ok && m->first_new_nonfinite >= 0) {
        uint64_t co[GOLDEN_MAX_RANK];
        golden_cmp_unravel((uint64_t)m->first_new_nonfinite, t->rank, t->shape, co);
        put(b, "first_new_nonfinite_index", jshape(t->rank, co));
    } else {
        put(b, "first_new_nonfinite_index", json_null());
    }
}

/* The thresholds the tensor was judged by, as the policy names them. */
static json_t *limits_json(const golden_diff_tensor *t)
{
    const golden_tier_limits *l = &t->judge.limits;
    json_t *o = json_object();
    struct { const char *k; double v; } f[] = {
        {"cosine_min", l->cosine_min}, {"rel_err_max", l->rel_err_max},
        {"norm_ratio_tol", l->norm_ratio_tol}, {"row_cosine_min", l->row_cosine_min},
        {"top1_min", l->top1_min}, {"top5_min", l->top5_min}, {"kl_max", l->kl_max},
        {"logsoftmax_max_abs", l->logsoftmax_max_abs}, {"baseline_ratio", l->baseline_ratio},
        {"noise_floor", l->noise_floor}};
    for (size_t i = 0; o && i < sizeof f / sizeof f[0]; i++)
        if (json_object_set_new(o, f[i].k, golden_json_real(f[i].v))) {
            json_decref(o);
            return NULL;
        }
    return o;
}

/* {"emin", "emax", "zero", "nonfinite", "log2": [[e, count], ...]} with only the non-empty
 * exponent bins, in increasing e (see GOLDEN_CMP_HIST_*). */
static json_t *hist_json(const golden_cmp_metrics *m)
{
    jb b = {json_object(), 0};
    if (!b.o)
        return NULL;
    put(&b, "emin", json_integer(GOLDEN_CMP_HIST_EMIN));
    put(&b, "emax", json_integer(GOLDEN_CMP_HIST_EMAX));
    put(&b, "zero", juint(m->hist[GOLDEN_CMP_HIST_ZERO]));
    put(&b, "nonfinite", juint(m->hist[GOLDEN_CMP_HIST_NONFINITE]));
    json_t *bins = json_array();
    for (int e = GOLDEN_CMP_HIST_EMIN; bins && e <= GOLDEN_CMP_HIST_EMAX; e++) {
        uint64_t c = m->hist[1 + e - GOLDEN_CMP_HIST_EMIN];
        if (c && json_array_append_new(bins, json_pack("[Io]", (json_int_t)e, juint(c))))
            b.bad = 1;
    }
    put(&b, "log2", bins);
    if (b.bad) {
        json_decref(b.o);
        return NULL;
    }
    return b.o;
}

/* Which sides' data disagree with their stored sha256, which have none stored, why the tier
 * was chosen and how the pair was made. */
static void put_provenance(jb *b, const golden_diff_tensor *t)
{
    static const char *const sides[3] = {"reference", "candidate", "baseline"};
    json_t *hb = json_array();
    for (int i = 0; hb && i < 3; i++)
        if (t->hash_bad[i] && json_array_append_new(hb, json_string(sides[i])))
            b->bad = 1;
    put(b, "sha256_mismatch", hb);
    json_t *nh = json_array(); /* sides with no stored sha256/statistics: not checked */
    for (int i = 0; nh && i < 3; i++)
        if (t->unstored[i] && (i < 2 || t->has_baseline) &&
            json_array_append_new(nh, json_string(sides[i])))
            b->bad = 1;
    put(b, "no_stored_hash", nh);
    if (t->tier_why)
        put(b, "tier_reason", json_string(t->tier_why));
    if (t->paired_by_position)
        put(b, "paired_by", json_string("position"));
}

static json_t *tensor_json(const golden_diff_tensor *t, bool with_hist)
{
    jb b = {json_object(), 0};
    if (!b.o)
        return NULL;
    const golden_cmp_metrics *m = &t->m;
    bool ok = t->compared;
    put(&b, "name", json_string(t->name));
    if (strcmp(t->name, t->candidate_name) != 0)
        put(&b, "candidate_name", json_string(t->candidate_name));
    put(&b, "tier", json_string(golden_tier_name(t->judge.tier)));
    put(&b, "verdict", json_string(t->passed ? "pass" : "fail"));
    put(&b, "reasons", jstrs(t->reasons, t->n_reasons));
    if (t->n_notes)
        put(&b, "notes", jstrs(t->notes, t->n_notes));
    put(&b, "dtype_reference", json_string(golden_dtype_name(t->dtype_ref)));
    put(&b, "dtype_candidate", json_string(golden_dtype_name(t->dtype_cand)));
    put(&b, "shape", jshape(t->rank, t->shape));
    if (!ok)
        put(&b, "shape_candidate", jshape(t->rank_cand, t->shape_cand));
    uint64_t count = 1;
    for (int d = 0; d < t->rank; d++)
        count *= t->shape[d];
    put(&b, "count", juint(count));
    put_metrics(&b, t, m, ok);
    put(&b, "eps", golden_json_real(t->judge.eps));
    put(&b, "tolerance_dtype", json_string(golden_dtype_name(t->judge.tol_dtype)));
    put(&b, "limits", limits_json(t));
    put(&b, "atol", golden_json_real(t->judge.atol));
    put(&b, "rtol", golden_json_real(t->judge.rtol));
    golden_dtype ud;
    if (golden_cmp_ulp_dtype(t->dtype_ref, t->dtype_cand, &ud))
        put(&b, "ulp_dtype", json_string(golden_dtype_name(ud)));
    put(&b, "nan_reference", ok ? juint(m->nan_ref) : json_null());
    put(&b, "nan_candidate", ok ? juint(m->nan_cand) : json_null());
    put(&b, "inf_reference", ok ? juint(m->inf_ref) : json_null());
    put(&b, "inf_candidate", ok ? juint(m->inf_cand) : json_null());
    if (lg_diff_engine_tier(t) == GOLDEN_TIER_LAYER)
        put(&b, "cosine_min", golden_json_real(t->judge.limits.cosine_min));
    if (t->judge.tier == GOLDEN_TIER_LOGITS) {
        put(&b, "rows", ok ? juint(m->rows) : json_null());
        put(&b, "top1_match", ok ? golden_json_real(m->top1_match) : json_null());
        put(&b, "top5_overlap", ok ? golden_json_real(m->top5_overlap) : json_null());
        put(&b, "near_tie_rows", ok ? juint(m->near_tie_rows) : json_null());
        put(&b, "near_tie_flips", ok ? juint(m->near_tie_flips) : json_null());
        put(&b, "near_tie_margin", golden_json_real(t->judge.limits.near_tie_margin));
        put(&b, "top1_min", golden_json_real(t->judge.limits.top1_min));
        put(&b, "top5_min", golden_json_real(t->judge.limits.top5_min));
        json_t *fl = json_array();
        for (int i = 0; fl && i < t->n_flips; i++) {
            const golden_cmp_flip *f = &t->flips[i];
            json_t *e = json_pack("{s:I,s:I,s:I,s:o,s:b}", "row", (json_int_t)f->row,
                                  "reference_top1", (json_int_t)f->ref_top1, "candidate_top1",
                                  (json_int_t)f->cand_top1, "margin", golden_json_real(f->margin),
                                  "near_tie", f->near_tie);
            if (!e || json_array_append_new(fl, e))
                b.bad = 1;
        }
        put(&b, "flips", fl);
    }
    if (t->probability) {
        put(&b, "probability", json_true());
        put(&b, "probability_sum_tol", golden_json_real(t->prob_sum_tol));
        put(&b, "probability_bad_rows", juint(t->prob_bad_rows));
    }
    if (t->n_cols) { /* the channel axis (issue 25) */
        put(&b, "columns", juint(t->n_cols));
        put(&b, "columns_judged", juint(t->cols_judged));
        put(&b, "min_column_cosine", golden_json_real(t->min_col_cosine));
        put(&b, "min_column_cosine_column", t->cols_judged ? juint(t->min_col_cosine_col) : json_null());
        put(&b, "max_column_rel_err", golden_json_real(t->max_col_rel_err));
        put(&b, "max_column_judged_rel_err", golden_json_real(t->max_col_judged_rel_err));
        put(&b, "max_column_rel_err_column", t->cols_judged ? juint(t->max_col_rel_err_col) : json_null());
        put(&b, "channel_axis", json_integer(t->judge.channel_axis >= 0 ? t->judge.channel_axis
                                                                         : t->rank - 1));
    }
    if (t->router_checked) {
        put(&b, "router_rows", juint(t->router_rows));
        if (t->router_logits) {
            put(&b, "router_rows_exact", juint(t->router_rows_exact));
            put(&b, "router_tie_rows", juint(t->router_tie_rows));
            put(&b, "router_first_divergence", json_integer(t->router_first_divergence));
            put(&b, "router_experts", json_integer(t->router_experts));
            put(&b, "router_top_k", t->router_top_k > 0 ? json_integer(t->router_top_k) : json_null());
        } else if (t->router_ids) {
            put(&b, "router_rows_exact", juint(t->router_rows_exact));
            put(&b, "router_tie_rows", juint(t->router_tie_rows));
            put(&b, "router_duplicates", juint(t->router_duplicates));
            put(&b, "router_first_divergence", json_integer(t->router_first_divergence));
            put(&b, "router_out_of_range", juint(t->router_out_of_range));
            put(&b, "router_experts",
                t->router_experts >= 0 ? json_integer(t->router_experts) : json_null());
        } else {
            put(&b, "router_nonfinite", juint(t->router_nonfinite));
            put(&b, "router_bad_sum_rows", juint(t->router_bad_sum_rows));
        }
    }
    if (t->judge.tier == GOLDEN_TIER_TOKENS) {
        put(&b, "sequences", ok ? juint(m->sequences) : json_null());
        put(&b, "sequences_exact", ok ? juint(m->sequences_exact) : json_null());
        json_t *fd = json_array();
        for (uint64_t i = 0; fd && ok && t->first_divergence && i < t->n_rows; i++)
            if (json_array_append_new(fd, json_integer(t->first_divergence[i])))
                b.bad = 1;
        put(&b, "first_divergence", fd);
    }
    if (t->baseline_name) {
        jb bb = {json_object(), 0};
        if (!bb.o) {
            b.bad = 1;
        } else {
            put(&bb, "name", json_string(t->baseline_name));
            put(&bb, "dtype", json_string(golden_dtype_name(t->dtype_base)));
            put(&bb, "compared", json_boolean(t->has_baseline));
            if (t->has_baseline) {
                put(&bb, "verdict", json_string(t->baseline_passed ? "pass" : "fail"));
                put_metrics(&bb, t, &t->bm, true);
                if (t->judge.tier == GOLDEN_TIER_LOGITS) {
                    put(&bb, "top1_match", golden_json_real(t->bm.top1_match));
                    put(&bb, "top5_overlap", golden_json_real(t->bm.top5_overlap));
                }
                if (t->judge.tier == GOLDEN_TIER_TOKENS)
                    put(&bb, "sequences_exact", juint(t->bm.sequences_exact));
                put(&bb, "error_metric", json_string(t->error_metric));
                put(&bb, "error_candidate", golden_json_real(t->error_candidate));
                put(&bb, "error_baseline", golden_json_real(t->error_baseline));
                put(&bb, "ratio", golden_json_real(t->ratio));
                put(&bb, "ratio_limit", golden_json_real(t->judge.limits.baseline_ratio));
                put(&bb, "noise_floor", golden_json_real(t->judge.limits.noise_floor));
                put(&bb, "regression", json_boolean(t->regression));
                put(&bb, "unshared_elements", juint(t->m.unshared));
            }
            b.bad |= bb.bad;
            put(&b, "baseline", bb.o);
        }
    }
    put_provenance(&b, t);
    put(&b, "seconds", golden_json_real(t->seconds));
    if (with_hist)
        put(&b, "abs_error_histogram", hist_json(m));
    if (b.bad) {
        json_decref(b.o);
        return NULL;
    }
    return b.o;
}

/* Failing first, then the larger tolerance_used (NaN last). */
static int worse_first(const void *pa, const void *pb)
{
    const golden_diff_tensor *a = *(const golden_diff_tensor *const *)pa,
                             *b = *(const golden_diff_tensor *const *)pb;
    if (a->passed != b->passed)
        return a->passed ? 1 : -1;
    double x = a->m.has_finite ? a->m.max_tol : -1, y = b->m.has_finite ? b->m.max_tol : -1;
    x = x == x ? x : -1;
    y = y == y ? y : -1;
    return x > y ? -1 : x < y ? 1 : 0;
}

/* Which tensors carry their histogram (GOLDEN_DIFF_HIST_MAX). NULL on ENOMEM. */
static bool *hist_carriers(const golden_diff_result *r)
{
    bool *carry = calloc(r->n ? r->n : 1, sizeof *carry);
    const golden_diff_tensor **with = calloc(r->n ? r->n : 1, sizeof *with);
    if (!carry || !with) {
        free(carry);
        free(with);
        return NULL;
    }
    size_t k = 0;
    for (size_t i = 0; i < r->n; i++)
        if (r->tensors[i].compared && r->tensors[i].m.has_hist)
            with[k++] = &r->tensors[i];
    if (k > GOLDEN_DIFF_HIST_MAX) {
        qsort(with, k, sizeof *with, worse_first);
        k = GOLDEN_DIFF_HIST_MAX;
    }
    for (size_t i = 0; i < k; i++)
        carry[with[i] - r->tensors] = true;
    free(with);
    return carry;
}

/* summary.trends (information, never a gate; see diff_trend.c). */
static json_t *trends_json(const golden_diff_result *r)
{
    lg_diff_trend *tr;
    size_t n;
    if (lg_diff_trends(r, &tr, &n) != 0)
        return NULL;
    json_t *list = json_array();
    for (size_t i = 0; list && i < n; i++) {
        jb o = {json_object(), 0};
        json_t *lv = json_array();
        for (size_t k = 0; lv && k < tr[i].n; k++) {
            json_t *pair = json_pack("[Io]", (json_int_t)tr[i].layers[k], json_real(tr[i].values[k]));
            if (!pair || json_array_append_new(lv, pair))
                o.bad = 1;
        }
        put(&o, "series", json_string(tr[i].series));
        put(&o, "metric", json_string(tr[i].metric));
        put(&o, "layers", juint(tr[i].n));
        put(&o, "kendall_tau", json_real(tr[i].tau));
        put(&o, "first_layer", juint(tr[i].layers[0]));
        put(&o, "last_layer", juint(tr[i].layers[tr[i].n - 1]));
        put(&o, "first_value", json_real(tr[i].values[0]));
        put(&o, "last_value", json_real(tr[i].values[tr[i].n - 1]));
        put(&o, "values", lv);
        if (o.bad || !o.o || json_array_append_new(list, o.o)) {
            json_decref(list);
            list = NULL;
        }
    }
    lg_diff_trends_free(tr, n);
    return list;
}

json_t *golden_diff_to_json(const golden_diff_result *r)
{
    jb b = {json_object(), 0};
    if (!b.o)
        return NULL;
    put(&b, "schema", json_string(GOLDEN_SCHEMA_DIFF_REPORT));
    put(&b, "producer", json_string("golden-diff " GOLDEN_VERSION));
    put(&b, "reference", json_string(r->reference));
    put(&b, "candidate", json_string(r->candidate));
    if (r->baseline)
        put(&b, "baseline", json_string(r->baseline));
    put(&b, "verdict", json_string(r->pass ? "pass" : "fail"));
    jb s = {json_object(), 0};
    if (s.o) {
        put(&s, "tensors", juint(r->n));
        put(&s, "passed", juint(r->passed));
        put(&s, "failed", juint(r->failed));
        put(&s, "missing_in_candidate", jstrs(r->missing_in_candidate, r->n_missing_cand));
        put(&s, "missing_in_reference", jstrs(r->missing_in_reference, r->n_missing_ref));
        if (r->baseline)
            put(&s, "missing_in_baseline", jstrs(r->missing_in_baseline, r->n_missing_base));
        put(&s, "allow_missing", json_boolean(r->allow_missing));
        json_t *al = json_array();
        for (size_t i = 0; al && i < r->n_missing_cand; i++)
            if (r->missing_cand_allowed && r->missing_cand_allowed[i])
                json_array_append_new(al, json_string(r->missing_in_candidate[i]));
        put(&s, "missing_in_candidate_allowed", al);
        put(&s, "allow_empty", json_boolean(r->allow_empty));
        put(&s, "hashes", json_string(r->trust_hashes
                                          ? "trusted: stored sha256 not checked (--trust-hashes)"
                                          : "checked: every tensor read matches its stored sha256 "
                                            "unless its reasons say otherwise"));
        put(&s, "statistics", json_string(r->trust_hashes
                                              ? "not checked (--trust-hashes)"
                                              : "checked: the stored statistics of every tensor "
                                                "read match its data"));
        if (r->n_unstored)
            put(&s, "no_stored_hash", json_string(
                        "some inputs are not goldens (no_stored_hash of each tensor): their "
                        "sha256 and statistics are not stored, so neither was checked"));
        put(&s, "skipped", jstrs(r->skipped, r->n_skipped));
        put(&s, "trends", trends_json(r));
        put(&s, "trend_rule", json_string(TREND_RULE));
        if (r->empty)
            put(&s, "reason", json_string(r->allow_empty
                                              ? "no tensor was compared (allowed by --allow-empty)"
                                              : "no tensor was compared: nothing was checked"));
        b.bad |= s.bad;
    }
    put(&b, "summary", s.o);
    bool *carry = hist_carriers(r);
    json_t *list = carry ? json_array() : NULL;
    for (size_t i = 0; list && i < r->n; i++)
        if (json_array_append_new(list, tensor_json(&r->tensors[i], carry[i])))
            b.bad = 1;
    free(carry);
    put(&b, "tensors", list);
    put(&b, "policy", json_incref(r->policy));
    put(&b, "overrides", json_incref(r->overrides));
    if (b.bad) {
        json_decref(b.o);
        return NULL;
    }
    return b.o;
}

int golden_diff_junit(const golden_diff_result *r, const char *path, bool force,
                      golden_error *err)
{
    size_t n = r->n + r->n_missing_cand + r->n_missing_ref;
    golden_junit_case *cases = calloc(n ? n : 1, sizeof *cases);
    char **classes = calloc(n ? n : 1, sizeof *classes), **details = calloc(n ? n : 1, sizeof *details);
    int rc = -1;
    if (!cases || !classes || !details) {
        golden_fail_what(err, GOLDEN_ENOMEM, path, "out of memory");
        goto out;
    }
    size_t k = 0;
    for (size_t i = 0; i < r->n; i++, k++) {
        const golden_diff_tensor *t = &r->tensors[i];
        classes[k] = lg_diff_fmt("golden-diff.%s", golden_tier_name(t->judge.tier));
        size_t len = 1;
        for (size_t j = 0; j < t->n_reasons; j++)
            len += strlen(t->reasons[j]) + 1;
        details[k] = malloc(len);
        if (!classes[k] || !details[k]) {
            golden_fail_what(err, GOLDEN_ENOMEM, path, "out of memory");
            goto out;
        }
        details[k][0] = '\0';
        for (size_t j = 0; j < t->n_reasons; j++) {
            strcat(details[k], t->reasons[j]);
            strcat(details[k], "\n");
        }
        cases[k] = (golden_junit_case){classes[k], t->name, !t->passed, false,
                                       t->n_reasons ? t->reasons[0] : NULL,
                                       t->n_reasons ? details[k] : NULL, t->seconds};
    }
    for (size_t i = 0; i < r->n_missing_cand; i++, k++) {
        bool ok = r->missing_cand_allowed && r->missing_cand_allowed[i];
        cases[k] = (golden_junit_case){"golden-diff.missing", r->missing_in_candidate[i], !ok, ok,
                                       ok ? "missing in the candidate (allowed)"
                                          : "missing in the candidate", NULL, 0};
    }
    for (size_t i = 0; i < r->n_missing_ref; i++, k++)
        cases[k] = (golden_junit_case){"golden-diff.missing", r->missing_in_reference[i], false,
                                       true, "only in the candidate: not judged", NULL, 0};
    rc = golden_junit_write(path, force, "golden-diff", cases, n, err);
out:
    for (size_t i = 0; classes && details && i < r->n; i++) {
        free(classes[i]);
        free(details[i]);
    }
    free(classes);
    free(details);
    free(cases);
    return rc;
}

/* ---- the table ---- */

static const char *fmt_num(char *buf, size_t n, bool ok, double v)
{
    if (!ok)
        snprintf(buf, n, "-");
    else if (isnan(v))
        snprintf(buf, n, "nan");
    else
        snprintf(buf, n, "%.6g", v);
    return buf;
}

typedef struct {
    const char *verdict, *tier, *name, *dtype, *max_abs, *metric, *mism, *reason;
} row_cells;

/* name into buf, shortened in the middle to at most w characters ("ref/lay...mlp/out"). */
static const char *short_name(const char *name, int w, char *buf, size_t n)
{
    int len = (int)strlen(name);
    if (w <= 0 || len <= w || w < 8 || (size_t)w >= n)
        return name;
    int head = (w - 3) / 2, tail = w - 3 - head;
    snprintf(buf, n, "%.*s...%s", head, name, name + len - tail);
    return buf;
}

/* The per-tier line: "kernel 3 passed 1 failed; layer 5 passed". */
/* At most this many trend lines in the table (the JSON has every one). */
#define TREND_LINES 10

static void print_trends(const golden_diff_result *r, FILE *f)
{
    lg_diff_trend *tr;
    size_t n;
    if (lg_diff_trends(r, &tr, &n) != 0) {
        fprintf(f, "trend: (out of memory for the trend report)\n");
        return;
    }
    for (size_t i = 0; i < n && i < TREND_LINES; i++) {
        const lg_diff_trend *t = &tr[i];
        fprintf(f, "trend: %s: %s worsens steadily along %zu layers (%" PRIu64 " to %" PRIu64
                   "): %.3g to %.3g, Kendall tau %.2f (>= %.1f); every layer passes "
                   "(information, not a gate)\n", t->series, t->metric, t->n, t->layers[0],
                t->layers[t->n - 1], t->values[0], t->values[t->n - 1], t->tau, LG_TREND_TAU_MIN);
    }
    if (n > TREND_LINES)
        fprintf(f, "... %zu more trends in the JSON report (summary.trends)\n", n - TREND_LINES);
    lg_diff_trends_free(tr, n);
}

static void print_tiers(const golden_diff_result *r, FILE *f)
{
    size_t pass[GOLDEN_TIER_ROUTER + 1] = {0}, fail[GOLDEN_TIER_ROUTER + 1] = {0};
    for (size_t i = 0; i < r->n; i++) {
        int t = (int)r->tensors[i].judge.tier;
        if (t < 0 || t > GOLDEN_TIER_ROUTER)
            continue;
        if (r->tensors[i].passed)
            pass[t]++;
        else
            fail[t]++;
    }
    const char *sep = "by tier: ";
    for (int t = 0; t <= GOLDEN_TIER_ROUTER; t++)
        if (pass[t] + fail[t]) {
            fprintf(f, "%s%s %zu passed, %zu failed", sep, golden_tier_name((golden_tier)t),
                    pass[t], fail[t]);
            sep = "; ";
        }
    if (r->n)
        fputc('\n', f);
}

static void print_summary(const golden_diff_result *r, FILE *f, bool color, const int *w,
                          const golden_diff_table_opts *o);

static void print_table(const golden_diff_result *r, FILE *f, const golden_diff_table_opts *o)
{
    bool color = o->color;
    size_t n = r->n;
    /* failing tensors first; within each group, name order (the report order) */
    size_t *order = malloc((n ? n : 1) * sizeof *order);
    char (*cells)[4][64] = malloc((n ? n : 1) * sizeof *cells);
    if (!order || !cells) {
        free(order);
        free(cells);
        fprintf(f, "(out of memory for the table)\n");
        return;
    }
    size_t k = 0;
    for (int pass = 0; pass < 2; pass++)
        for (size_t i = 0; i < n; i++)
            if (r->tensors[i].passed == (pass == 1))
                order[k++] = i;
    int w[7] = {7, 6, 6, 5, 7, 6, 10};
    for (size_t i = 0; i < n; i++) {
        const golden_diff_tensor *t = &r->tensors[i];
        const golden_cmp_metrics *m = &t->m;
        snprintf(cells[i][0], 64, "%s/%s", golden_dtype_name(t->dtype_ref),
                 golden_dtype_name(t->dtype_cand));
        fmt_num(cells[i][1], 64, t->compared && m->has_finite, m->max_abs);
        switch (t->judge.tier) {
        case GOLDEN_TIER_LOGITS:
            fmt_num(cells[i][2], 64, t->compared && m->rows, m->top1_match);
            break;
        case GOLDEN_TIER_ROUTER:
            if (t->router_checked && (t->router_ids || t->router_logits))
                snprintf(cells[i][2], 64, "%" PRIu64 "/%" PRIu64 " rows%s", t->router_rows_exact +
                         t->router_tie_rows, t->router_rows, t->router_tie_rows ? " (ties)" : "");
            else
                fmt_num(cells[i][2], 64, t->compared, m->cosine);
            break;
        case GOLDEN_TIER_TOKENS:
            if (t->compared)
                snprintf(cells[i][2], 64, "%" PRIu64 "/%" PRIu64, m->sequences_exact, m->sequences);
            else
                snprintf(cells[i][2], 64, "-");
            break;
        default:
            fmt_num(cells[i][2], 64, t->compared, m->cosine);
        }
        uint64_t judged; /* mismatches_judged: "-" where the verdict counts no elements */
        if (lg_diff_mismatches_judged(t, &judged))
            snprintf(cells[i][3], 64, "%" PRIu64, judged);
        else
            snprintf(cells[i][3], 64, "-");
        int lens[7] = {4, (int)strlen(golden_tier_name(t->judge.tier)), (int)strlen(t->name),
                       (int)strlen(cells[i][0]), (int)strlen(cells[i][1]),
                       (int)strlen(cells[i][2]), (int)strlen(cells[i][3])};
        for (int c = 1; c < 7; c++)
            if (lens[c] > w[c])
                w[c] = lens[c];
    }
    for (size_t i = 0; i < r->n_missing_cand; i++)
        if ((int)strlen(r->missing_in_candidate[i]) > w[2])
            w[2] = (int)strlen(r->missing_in_candidate[i]);
    for (size_t i = 0; i < r->n_missing_ref; i++)
        if ((int)strlen(r->missing_in_reference[i]) > w[2])
            w[2] = (int)strlen(r->missing_in_reference[i]);
    /* a terminal: names shortened in the middle so that the columns before REASON fit */
    int fixed = w[0] + w[1] + w[3] + w[4] + w[5] + w[6] + 14 + 8;
    if (o->width > 0 && fixed + w[2] > o->width)
        w[2] = o->width - fixed > 16 ? o->width - fixed : 16;
    const char *bold = golden_color(color, "bold"), *reset = golden_color(color, "reset");
    fprintf(f, "%s%-*s  %-*s  %-*s  %-*s  %*s  %*s  %*s  %s%s\n", bold, w[0], "VERDICT", w[1],
            "TIER", w[2], "TENSOR", w[3], "DTYPE", w[4], "MAX_ABS", w[5], "COSINE/TOP1",
            w[6], "MISMATCHES", "REASON", reset);
    int indent = w[0] + w[1] + w[2] + w[3] + w[4] + w[5] + w[6] + 14;
    size_t shown = 0, hidden = 0;
    char nb[512];
    for (size_t k2 = 0; k2 < n; k2++) {
        size_t i = order[k2];
        const golden_diff_tensor *t = &r->tensors[i];
        if (o->failed_only && t->passed)
            continue;
        if (o->limit && shown >= o->limit) {
            hidden++;
            continue;
        }
        shown++;
        const char *c = golden_color(color, t->passed ? "green" : "red");
        const char *first = t->n_reasons ? t->reasons[0] : (t->n_notes ? t->notes[0] : NULL);
        fprintf(f, "%s%-*s%s  %-*s  %-*s  %-*s  %*s  %*s  %*s%s%s\n", c, w[0],
                t->passed ? "pass" : "FAIL", reset, w[1], golden_tier_name(t->judge.tier), w[2],
                short_name(t->name, o->width > 0 ? w[2] : 0, nb, sizeof nb), w[3], cells[i][0],
                w[4], cells[i][1], w[5], cells[i][2], w[6],
                cells[i][3], first ? "  " : "", first ? first : "");
        for (size_t j = 1; j < t->n_reasons; j++)
            fprintf(f, "%*s%s\n", indent, "", t->reasons[j]);
        for (size_t j = t->n_reasons ? 0 : 1; j < t->n_notes; j++)
            fprintf(f, "%*s%s\n", indent, "", t->notes[j]);
    }
    if (hidden)
        fprintf(f, "... %zu more tensor%s not shown (--limit %zu; all are in the JSON report)\n",
                hidden, hidden == 1 ? "" : "s", o->limit);
    print_summary(r, f, color, w, o);
    free(order);
    free(cells);
}

/* Missing tensors, the per-tier line and the closing verdict line. */
static void print_summary(const golden_diff_result *r, FILE *f, bool color, const int *w,
                          const golden_diff_table_opts *o)
{
    (void)o;
    const char *bold = golden_color(color, "bold"), *reset = golden_color(color, "reset");
    for (size_t i = 0; i < r->n_missing_cand; i++) {
        bool ok = r->missing_cand_allowed && r->missing_cand_allowed[i];
        fprintf(f, "%s%-*s%s  %-*s  %-*s  missing in the candidate%s\n",
                golden_color(color, ok ? "yellow" : "red"), w[0], ok ? "missing" : "FAIL", reset,
                w[1], "-", w[2], r->missing_in_candidate[i], ok ? " (allowed)" : "");
    }
    for (size_t i = 0; i < r->n_missing_ref; i++)
        fprintf(f, "%s%-*s%s  %-*s  %-*s  only in the candidate: not judged\n",
                golden_color(color, "yellow"), w[0], "-", reset, w[1], "-", w[2],
                r->missing_in_reference[i]);
    size_t by_default = 0;
    for (size_t i = 0; i < r->n; i++)
        by_default += r->tensors[i].tier_why && strstr(r->tensors[i].tier_why, "not goldens");
    if (by_default)
        fprintf(f, "tier: kernel (elementwise atol/rtol of the dtype) for %zu tensor%s of files "
                   "that are not goldens and whose names give no tier; --tier or a policy "
                   "rule says otherwise (JSON: tier_reason)\n", by_default,
                by_default == 1 ? "" : "s");
    print_trends(r, f);
    print_tiers(r, f);
    fprintf(f, "%s%s%s: %zu tensors compared, %zu passed, %zu failed", bold,
            r->pass ? "PASS" : "FAIL", reset, r->n, r->passed, r->failed);
    if (r->trust_hashes)
        fprintf(f, "; sha256 not checked (--trust-hashes), stored statistics not checked");
    else if (r->n_unstored)
        fprintf(f, "; %zu with no stored hash (not goldens: sha256 and statistics not checked)",
                r->n_unstored);
    if (r->n_skipped)
        fprintf(f, ", %zu skipped (files or datasets that are not tensors: see the notes)", r->n_skipped);
    if (r->empty)
        fprintf(f, r->allow_empty ? " (nothing compared; allowed by --allow-empty)"
                                  : " (nothing compared is not a pass; --allow-empty accepts it)");
    if (r->n_missing_cand)
        fprintf(f, ", %zu missing in the candidate (%zu allowed)", r->n_missing_cand,
                r->n_missing_cand_allowed);
    if (r->n_missing_ref)
        fprintf(f, ", %zu only in the candidate (not judged)", r->n_missing_ref);
    if (r->baseline && r->n_missing_base)
        fprintf(f, ", %zu missing in the baseline", r->n_missing_base);
    fputc('\n', f);
}

char *golden_diff_table(const golden_diff_result *r, bool color)
{
    golden_diff_table_opts o = GOLDEN_DIFF_TABLE_OPTS_INIT;
    o.color = color;
    return golden_diff_table_opts_run(r, &o);
}

char *golden_diff_table_opts_run(const golden_diff_result *r, const golden_diff_table_opts *o)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f)
        return NULL;
    print_table(r, f, o);
    if (fclose(f) != 0) {
        free(buf);
        return NULL;
    }
    return buf;
}
