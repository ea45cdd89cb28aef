/* golden-diff's verdict on one tensor: every check of its tier (and the checks of every
 * tier), their reasons in words, and in three-way mode the excuses and the regression. */
#include "tensor/diff_internal.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* How a failed check of the candidate may be excused by a baseline that shares it. */
typedef enum {
    EX_NEVER,    /* structural: never */
    EX_ELEM,     /* every wrong element is wrong in the baseline too, no less */
    EX_ELEM_NF,  /* the same, counting integer and non-finite differences only */
    EX_METRIC,   /* the baseline fails it too, and the error is within the ratio */
    EX_ROWS      /* every failing row fails in the baseline too, no less */
} excuse_kind;

typedef struct {
    bool failed;
    excuse_kind how;
    double error;     /* the quantity compared with the baseline's (EX_METRIC) */
    char *text;
} check;

enum {
    CK_HASH, CK_CLASS, CK_TOKENS_TYPE, CK_NOREF, CK_INT, CK_NONFINITE, CK_CLASSDIFF, CK_KERNEL, CK_ZERO,
    CK_COSINE, CK_RELERR, CK_NORM, CK_ROWCOS, CK_COLCOS, CK_COLREL, CK_TOP1, CK_TOP5, CK_KL, CK_LSM,
    CK_TOKENS, CK_PROB, CK_ATOL, CK_N
};

static bool is_float(golden_dtype t)
{
    return golden_dtype_is_float(t);
}

/* A failed comparison "NAME VALUE OP LIMIT", or "NAME is NaN" when the value is NaN. */
static char *cmp_text(const char *name, double v, const char *op, double limit, const char *tail)
{
    char a[64], b[64];
    lg_diff_num_pair(limit, limit, a, b, sizeof a);
    if (isnan(v))
        return lg_diff_fmt("%s is NaN: no limit is met (fails when %s %s)%s", name, op, b,
                               tail ? tail : "");
    lg_diff_num_pair(v, limit, a, b, sizeof a);
    return lg_diff_fmt("%s %s %s %s%s", name, a, op, b, tail ? tail : "");
}

static void fail(check *c, excuse_kind how, double error, bool want_text, char *text)
{
    c->failed = true;
    c->how = how;
    c->error = error;
    if (want_text)
        c->text = text;
    else
        free(text);
}

static void structural_checks(const golden_diff_tensor *t, const golden_cmp_metrics *m,
                              golden_dtype dc, check *ck, bool wt)
{
    static const char *const side[3] = {"reference", "candidate", "baseline"};
    for (int i = 0; i < 3 && !ck[CK_HASH].failed; i++)
        if (t->hash_bad[i])
            fail(&ck[CK_HASH], EX_NEVER, 0, wt,
                 lg_diff_fmt("the %s's data does not match its stored sha256 (stored %.16s..., "
                                 "data %.16s...): the file changed after it was written",
                                 side[i], t->hash_stored[i], t->hash_data[i]));
    if (is_float(t->dtype_ref) != is_float(dc))
        fail(&ck[CK_CLASS], EX_NEVER, 0, wt,
             lg_diff_fmt("dtype class differs: reference %s is %s, candidate %s is %s",
                             golden_dtype_name(t->dtype_ref),
                             is_float(t->dtype_ref) ? "float" : "integer", golden_dtype_name(dc),
                             is_float(dc) ? "float" : "integer"));
    if (t->judge.tier == GOLDEN_TIER_TOKENS && (is_float(t->dtype_ref) || is_float(dc)))
        fail(&ck[CK_TOKENS_TYPE], EX_NEVER, 0, wt,
             lg_diff_fmt("tokens tier needs integer token ids, got reference %s and "
                             "candidate %s", golden_dtype_name(t->dtype_ref), golden_dtype_name(dc)));
    if (m->count > 0 && m->ref_finite == 0)
        fail(&ck[CK_NOREF], EX_NEVER, 0, wt,
             lg_diff_fmt("the reference has no finite element (%" PRIu64 " NaN, %" PRIu64
                             " Inf): it cannot vouch for any candidate", m->nan_ref, m->inf_ref));
}

static void element_checks(const golden_diff_tensor *t, const golden_cmp_metrics *m, check *ck,
                           bool wt)
{
    char idx[400] = "?";
    /* router ids: the router's row comparison (with ties) replaces element equality */
    if (m->int_diff > 0 && !(t->router_checked && t->router_ids)) {
        if (wt && m->first_int_diff >= 0)
            lg_diff_index_str(t, (uint64_t)m->first_int_diff, idx, sizeof idx);
        bool tol = lg_diff_engine_tier(t) == GOLDEN_TIER_KERNEL &&
                   (t->judge.atol > 0 || t->judge.rtol > 0);
        char how[160] = "compared exactly";
        if (tol)
            snprintf(how, sizeof how, "by more than the declared atol %g + rtol %g * |reference|",
                     t->judge.atol, t->judge.rtol);
        fail(&ck[CK_INT], EX_ELEM_NF, (double)m->int_diff, wt,
             lg_diff_fmt("%" PRIu64 " of %" PRIu64 " integer elements differ (%s; first at "
                             "%s: reference %s, candidate %s)", m->int_diff, m->count, how, idx,
                             m->first_int_ref, m->first_int_cand));
    }
    if (m->new_nan + m->new_inf > 0) {
        if (wt && m->first_new_nonfinite >= 0)
            lg_diff_index_str(t, (uint64_t)m->first_new_nonfinite, idx, sizeof idx);
        /* never excused: production having the same NaN/Inf is a production bug to report */
        fail(&ck[CK_NONFINITE], EX_NEVER, (double)(m->new_nan + m->new_inf), wt,
             lg_diff_fmt("%" PRIu64 " new NaN and %" PRIu64 " new Inf in the candidate where "
                             "the reference is finite (first at %s)", m->new_nan, m->new_inf, idx));
    }
    if (m->class_diff > 0) {
        if (wt && m->first_class_diff >= 0)
            lg_diff_index_str(t, (uint64_t)m->first_class_diff, idx, sizeof idx);
        fail(&ck[CK_CLASSDIFF], EX_NEVER, (double)m->class_diff, wt,
             lg_diff_fmt("%" PRIu64 " of the reference's %" PRIu64 " NaN/Inf elements are "
                             "another class in the candidate (NaN, +Inf, -Inf compare by class; "
                             "first at %s)", m->class_diff, m->nan_ref + m->inf_ref, idx));
    }
    if (lg_diff_engine_tier(t) == GOLDEN_TIER_KERNEL && !m->ints && m->mismatches > 0) {
        char where[512] = "";
        /* name the element that uses the most of its tolerance (outside it when > 1), never
         * the max_abs element, which may be inside a larger rtol * |r| */
        if (wt && m->has_finite && m->max_tol > 1) {
            lg_diff_index_str(t, m->max_tol_index, idx, sizeof idx);
            snprintf(where, sizeof where, " (worst at %s: %.4gx its tolerance; max_abs %.6g)", idx,
                     m->max_tol, m->max_abs);
        } else if (wt && m->first_class_diff >= 0) {
            lg_diff_index_str(t, (uint64_t)m->first_class_diff, idx, sizeof idx);
            snprintf(where, sizeof where, " (first at %s: a non-finite class differs)", idx);
        }
        fail(&ck[CK_KERNEL], EX_ELEM, m->max_tol, wt,
             lg_diff_fmt("%" PRIu64 " of %" PRIu64 " elements differ by more than atol %g + "
                             "rtol %g * |reference| (%s tolerance)%s", m->mismatches, m->count,
                             t->judge.atol, t->judge.rtol, golden_dtype_name(t->judge.tol_dtype),
                             where));
    }
}

static void layer_checks(const golden_diff_tensor *t, const golden_cmp_metrics *m, check *ck,
                         bool wt)
{
    const golden_tier_limits *l = &t->judge.limits;
    if (!m->has_finite)
        return; /* nothing finite to measure: the element checks have said why */
    if (m->zero_ref) {
        /* an all-zero reference (an idle expert) has no direction: absolute error decides */
        if (!(m->max_abs <= t->judge.atol))
            fail(&ck[CK_ZERO], EX_METRIC, m->max_abs, wt,
                 cmp_text("reference is all zero and max_abs", m->max_abs, ">", t->judge.atol,
                          " (atol)"));
        return;
    }
    if (!(m->cosine >= l->cosine_min))
        fail(&ck[CK_COSINE], EX_METRIC, 1.0 - m->cosine, wt,
             cmp_text("cosine", m->cosine, "<", l->cosine_min, NULL));
    if (!(m->rel_err <= l->rel_err_max))
        fail(&ck[CK_RELERR], EX_METRIC, m->rel_err, wt,
             cmp_text("rel_err ||c - r|| / ||r||", m->rel_err, ">", l->rel_err_max, NULL));
    double dn = fabs(m->norm_ratio - 1.0);
    if (!(dn <= l->norm_ratio_tol)) {
        char tail[128];
        snprintf(tail, sizeof tail, " (norm_ratio ||c|| / ||r|| = %.6g)", m->norm_ratio);
        fail(&ck[CK_NORM], EX_METRIC, dn, wt,
             cmp_text("|norm_ratio - 1|", dn, ">", l->norm_ratio_tol, tail));
    }
    if (m->row_cos_rows && !(m->min_row_cosine >= l->row_cosine_min)) {
        char tail[128];
        snprintf(tail, sizeof tail, " (row %" PRIu64 " of %" PRIu64 " along the last axis)",
                 m->min_row_cosine_row, m->rows);
        fail(&ck[CK_ROWCOS], EX_ROWS, 1.0 - m->min_row_cosine, wt,
             cmp_text("min row cosine", m->min_row_cosine, "<", l->row_cosine_min, tail));
    }
}

/* Channel axis: every column's cosine and rel_err (diff_cols.c), the first failing column
 * named. On the candidate's metrics only (the baseline's columns excuse, see cols_unshared). */
static void column_checks(const golden_diff_tensor *t, const golden_cmp_metrics *m, check *ck,
                          bool wt)
{
    const golden_tier_limits *l = &t->judge.limits;
    if (m != &t->m || !t->n_cols || !t->cols_judged || m->zero_ref)
        return;
    /* A column's metrics rest on col_rows samples, the tensor's on all of them: the layer
     * limits widen by the sampling noise of a column, 4 sqrt(2 / rows) (16 rows: 2.4x, 128:
     * 1.5x, 2048: 1.125x), so the worst of thousands of correct bf16 columns does not fail
     * while a dead or rescaled channel still does. */
    double widen = 1.0 + 4.0 * sqrt(2.0 / (double)(t->col_rows ? t->col_rows : 1));
    double cos_min = 1.0 - (1.0 - l->row_cosine_min) * widen, rel_max = l->rel_err_max * widen;
    uint64_t bad_cos = 0, bad_rel = 0, first_cos = 0, first_rel = 0;
    for (uint64_t k = 0; k < t->n_cols; k++) {
        if (!isnan(t->col_cos[k]) && !(t->col_cos[k] >= cos_min) && bad_cos++ == 0)
            first_cos = k;
        if (!isnan(t->col_rel[k]) && !(t->col_rel[k] <= rel_max) && bad_rel++ == 0)
            first_rel = k;
    }
    char tail[260], axis[64];
    if (t->judge.channel_axis >= 0)
        snprintf(axis, sizeof axis, "axis %d (policy channel_axis)", t->judge.channel_axis);
    else
        snprintf(axis, sizeof axis, "the last axis");
    if (bad_cos) {
        snprintf(tail, sizeof tail, " (%" PRIu64 " of %" PRIu64 " columns, channels of %s "
                 "over %" PRIu64 " rows; first column %" PRIu64 ", worst %" PRIu64 ")",
                 bad_cos, t->n_cols, axis, t->col_rows, first_cos, t->min_col_cosine_col);
        fail(&ck[CK_COLCOS], EX_ROWS, 1.0 - t->min_col_cosine, wt,
             cmp_text("min column cosine", t->min_col_cosine, "<", cos_min, tail));
    }
    if (bad_rel) {
        snprintf(tail, sizeof tail, " (%" PRIu64 " of %" PRIu64 " columns%s%s over %" PRIu64
                 " rows; first column %" PRIu64 ", worst %" PRIu64 ")", bad_rel, t->n_cols,
                 t->judge.channel_axis >= 0 ? ", channels of " : "",
                 t->judge.channel_axis >= 0 ? axis : "", t->col_rows, first_rel,
                 t->max_col_rel_err_col);
        fail(&ck[CK_COLREL], EX_ROWS, t->max_col_judged_rel_err, wt,
             cmp_text("max column rel_err ||c_j - r_j|| / ||r_j||", t->max_col_judged_rel_err, ">",
                      rel_max, tail));
    }
}

static void logits_checks(const golden_diff_tensor *t, const golden_cmp_metrics *m, check *ck,
                          bool wt)
{
    const golden_tier_limits *l = &t->judge.limits;
    if (!m->rows)
        return;
    if (!(m->top1_match >= l->top1_min)) {
        char tail[300];
        char margin[80];
        golden_dtype ud;
        if (!isnan(l->near_tie_margin))
            snprintf(margin, sizeof margin, "%g", l->near_tie_margin);
        else if (golden_cmp_ulp_dtype(t->dtype_ref, t->dtype_cand, &ud))
            snprintf(margin, sizeof margin, "one %s step at |top1|", golden_dtype_name(ud));
        else
            snprintf(margin, sizeof margin, "0");
        snprintf(tail, sizeof tail, " (%" PRIu64 " of %" PRIu64 " rows flipped: %" PRIu64
                 " outside near ties, %" PRIu64 " in near-tie rows with margin < %s)", m->flips,
                 m->rows, m->flips - m->near_tie_flips, m->near_tie_flips, margin);
        fail(&ck[CK_TOP1], EX_ROWS, 1.0 - m->top1_match, wt,
             cmp_text("top1_match", m->top1_match, "<", l->top1_min, tail));
    }
    if (!(m->top5_overlap >= l->top5_min))
        fail(&ck[CK_TOP5], EX_ROWS, 1.0 - m->top5_overlap, wt,
             cmp_text("top5_overlap", m->top5_overlap, "<", l->top5_min, NULL));
    if (!(m->kl_max <= l->kl_max)) {
        char tail[128];
        snprintf(tail, sizeof tail, " (row %" PRIu64 "; mean over rows %.6g)", m->kl_max_row,
                 m->kl_mean);
        fail(&ck[CK_KL], EX_ROWS, m->kl_max, wt,
             cmp_text("KL(softmax(reference) || softmax(candidate))", m->kl_max, ">", l->kl_max,
                      tail));
    }
    if (!(m->logsoftmax_max_abs <= l->logsoftmax_max_abs))
        fail(&ck[CK_LSM], EX_METRIC, m->logsoftmax_max_abs, wt,
             cmp_text("log-softmax max_abs", m->logsoftmax_max_abs, ">", l->logsoftmax_max_abs,
                      NULL));
}

/* Evaluate every check on metrics m (texts allocated only when wt). 0, or -1 on ENOMEM. */
static int run_checks(const golden_diff_tensor *t, const golden_cmp_metrics *m, golden_dtype dc,
                      check ck[CK_N], bool wt)
{
    memset(ck, 0, CK_N * sizeof *ck);
    structural_checks(t, m, dc, ck, wt);
    element_checks(t, m, ck, wt);
    if (lg_diff_engine_tier(t) == GOLDEN_TIER_LAYER) {
        layer_checks(t, m, ck, wt);
        if (m->has_finite)
            column_checks(t, m, ck, wt);
    }
    if (t->judge.tier == GOLDEN_TIER_LOGITS)
        logits_checks(t, m, ck, wt);
    if (m == &t->m && t->probability && t->prob_bad_rows)
        fail(&ck[CK_PROB], EX_NEVER, 0, wt,
             lg_diff_fmt("%" PRIu64 " of %" PRIu64 " candidate rows do not sum to 1 within "
                             "%.3g (a probability tensor: every reference row is >= 0 and sums "
                             "to 1); first row %" PRIu64 ", which sums to %.9g", t->prob_bad_rows,
                             m->count / (t->n_cols ? t->n_cols : 1), t->prob_sum_tol,
                             t->prob_first_bad_row, t->prob_first_bad_sum));
    /* an absolute tolerance above every value it judges passes anything of that size */
    if (m == &t->m && lg_diff_engine_tier(t) == GOLDEN_TIER_KERNEL && !m->ints &&
        is_float(t->dtype_ref) && t->ref_max_abs > 0 && t->judge.atol >= t->ref_max_abs &&
        m->has_finite && m->max_abs > 0) /* an identical candidate needs no tolerance */
        fail(&ck[CK_ATOL], EX_NEVER, 0, wt,
             lg_diff_fmt("atol %g is not below the largest reference value (max |r| %.6g): "
                             "an absolute tolerance larger than the values it judges passes any "
                             "candidate of their size; set a smaller atol or judge relatively",
                             t->judge.atol, t->ref_max_abs));
    if (t->judge.tier == GOLDEN_TIER_TOKENS && m->sequences_exact < m->sequences) {
        uint64_t bad = m->sequences - m->sequences_exact;
        fail(&ck[CK_TOKENS], EX_ROWS, (double)bad, wt,
             lg_diff_fmt("%" PRIu64 " of %" PRIu64 " token sequences diverge; earliest at "
                             "step %" PRId64 " (row %" PRIu64 ")", bad, m->sequences,
                             m->earliest_divergence, m->earliest_divergence_row));
    }
    for (int i = 0; wt && i < CK_N; i++)
        if (ck[i].failed && !ck[i].text)
            return -1;
    return 0;
}

/* Rows where the candidate fails check i and the baseline does not share it: like for like,
 * a row is shared only when the baseline fails the same row, and the candidate's row is no
 * worse than ratio times the baseline's error in that same row (never another row's worst)
 * or its typical row error widened by a row's sampling noise (row_noise_floor), and the
 * baseline's row metric is finite (a broken production row excuses nothing). Tokens:
 * the baseline's row diverges at the same step or earlier; top-1: the baseline flips the
 * row too; top-5: its overlap in the row is no better; for both, the baseline's KL in the
 * row is finite. */
static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The baseline's typical row error (the median over its rows with a finite metric: 1 -
 * row cosine, or the row KL), widened by four standard deviations of one row's sampling
 * noise, 4 sqrt(2 / row length): two equally good runs differ row by row by that much, a
 * ruined row (far above the median) does not. 0 when the baseline has no such row. */
static int row_noise_floor(const golden_diff_tensor *t, bool cosine, double *floor)
{
    *floor = 0;
    double *v = malloc((t->n_rows ? t->n_rows : 1) * sizeof *v);
    if (!v)
        return -1;
    size_t n = 0;
    for (uint64_t r = 0; r < t->n_rows; r++)
        if (isfinite(t->brow_value[r]))
            v[n++] = cosine ? 1.0 - t->brow_value[r] : t->brow_value[r];
    if (n) {
        qsort(v, n, sizeof *v, cmp_double);
        double med = n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
        uint64_t len = t->rank ? t->shape[t->rank - 1] : 1;
        *floor = med * (1.0 + 4.0 * sqrt(2.0 / (double)(len ? len : 1)));
    }
    free(v);
    return 0;
}

static uint64_t rows_unshared(const golden_diff_tensor *t, int i, int64_t *first)
{
    const golden_tier_limits *l = &t->judge.limits;
    double ratio = l->baseline_ratio;
    uint64_t bad = 0;
    *first = -1;
    bool have = i == CK_TOKENS ? t->first_divergence && t->bfirst_divergence
                : (i == CK_TOP1 || i == CK_TOP5) ? t->row_flags && t->brow_flags
                                                 : t->row_value && t->brow_value;
    if (!have)
        return 1; /* no per-row record: nothing can be shown to be shared */
    double floor = 0;
    if ((i == CK_ROWCOS || i == CK_KL) && row_noise_floor(t, i == CK_ROWCOS, &floor) != 0)
        return 1; /* out of memory: nothing shown to be shared */
    for (uint64_t r = 0; r < t->n_rows; r++) {
        bool cf = false, shared = false;
        /* logits rows: the baseline's row KL; layer rows: its row cosine */
        bool bfinite = !t->brow_value || isfinite(t->brow_value[r]);
        switch (i) {
        case CK_ROWCOS: {
            double c = t->row_value[r], b = t->brow_value[r];
            cf = c < l->row_cosine_min;
            shared = bfinite && b < l->row_cosine_min && 1.0 - c <= ratio * fmax(1.0 - b, floor);
            break;
        }
        case CK_KL: {
            double c = t->row_value[r], b = t->brow_value[r];
            cf = c > l->kl_max;
            shared = bfinite && b > l->kl_max && c <= ratio * fmax(b, floor);
            break;
        }
        case CK_TOP1:
            cf = t->row_flags[r] & 1;
            shared = bfinite && (t->brow_flags[r] & 1);
            break;
        case CK_TOP5:
            cf = (t->row_flags[r] >> 1) < 60;
            shared = bfinite && (t->brow_flags[r] >> 1) <= (t->row_flags[r] >> 1);
            break;
        case CK_TOKENS: {
            int64_t c = t->first_divergence[r], b = t->bfirst_divergence[r];
            cf = c >= 0;
            shared = b >= 0 && b <= c;
            break;
        }
        default:
            break;
        }
        if (cf && !shared) {
            if (*first < 0)
                *first = (int64_t)r;
            bad++;
        }
    }
    return bad;
}

/* Columns where the candidate fails check i (CK_COLCOS or CK_COLREL) and the baseline does
 * not share it, like for like as rows_unshared: the same column fails in the baseline, with
 * a finite error, and the candidate's error is within ratio of the larger of the baseline's
 * error in that column and its median column error widened by 4 sqrt(2 / rows). */
static uint64_t cols_unshared(const golden_diff_tensor *t, int i, int64_t *first)
{
    const golden_tier_limits *l = &t->judge.limits;
    *first = -1;
    if (!t->bcol_cos)
        return 1;
    bool cosine = i == CK_COLCOS;
    const double *cv = cosine ? t->col_cos : t->col_rel, *bv = cosine ? t->bcol_cos : t->bcol_rel;
    double *v = malloc((t->n_cols ? t->n_cols : 1) * sizeof *v);
    if (!v)
        return 1;
    size_t n = 0;
    for (uint64_t k = 0; k < t->n_cols; k++)
        if (isfinite(bv[k]))
            v[n++] = cosine ? 1.0 - bv[k] : bv[k];
    double floor = 0;
    if (n) {
        qsort(v, n, sizeof *v, cmp_double);
        double med = n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
        floor = med * (1.0 + 4.0 * sqrt(2.0 / (double)(t->col_rows ? t->col_rows : 1)));
    }
    free(v);
    uint64_t bad = 0;
    for (uint64_t k = 0; k < t->n_cols; k++) {
        double c = cosine ? 1.0 - cv[k] : cv[k], b = cosine ? 1.0 - bv[k] : bv[k];
        double lim = cosine ? 1.0 - l->row_cosine_min : l->rel_err_max;
        if (isnan(cv[k]) || !(c > lim))
            continue;
        bool shared = isfinite(b) && b > lim && c <= l->baseline_ratio * fmax(b, floor);
        if (!shared && bad++ == 0)
            *first = (int64_t)k;
    }
    return bad;
}

/* The tier's headline error and its name (for the regression check and the report). */
static double headline(const golden_diff_tensor *t, const golden_cmp_metrics *m, const char **name)
{
    if (t->router_checked && t->router_ids) {
        *name = "router rows differing";
        return (double)(t->router_rows - t->router_rows_exact - t->router_tie_rows);
    }
    switch (lg_diff_engine_tier(t)) {
    case GOLDEN_TIER_KERNEL: *name = "tolerance_used"; return m->ints ? (double)m->int_diff : m->max_tol;
    case GOLDEN_TIER_LAYER: *name = "rel_err"; return m->zero_ref ? m->max_abs : m->rel_err;
    case GOLDEN_TIER_LOGITS: *name = "kl_max"; return m->rows ? m->kl_max : 0;
    default: *name = "diverged sequences"; return (double)(m->sequences - m->sequences_exact);
    }
}

/* Three-way: excuse check i, or say why not (text is replaced). True when excused. */
static bool excuse(golden_diff_tensor *t, int i, check *c, const check *b, char **text)
{
    double lim = t->judge.limits.baseline_ratio;
    char *s = NULL;
    bool ok = false;
    switch (c->how) {
    case EX_NEVER:
        return false;
    case EX_ELEM:
    case EX_ELEM_NF: {
        uint64_t n = c->how == EX_ELEM ? t->m.unshared : t->m.unshared_nf;
        ok = n == 0;
        char idx[400] = "?";
        if (!ok && t->m.first_unshared >= 0)
            lg_diff_index_str(t, (uint64_t)t->m.first_unshared, idx, sizeof idx);
        s = ok ? lg_diff_fmt("%s; excused: the baseline is as wrong at every such element "
                                 "(within %gx)", *text, lim)
               : lg_diff_fmt("%s; not excused: %" PRIu64 " elements where the baseline is "
                                 "right or more than %gx less wrong (first at %s)", *text, n, lim,
                                 idx);
        break;
    }
    case EX_METRIC: {
        /* a metric is excused only by a finite baseline metric, and only a finite one */
        bool finite = isfinite(c->error) && isfinite(b->error);
        double r = b->failed && finite && b->error > 0 ? c->error / b->error : NAN;
        ok = b->failed && finite && c->error <= lim * b->error;
        if (ok)
            s = isfinite(r) ? lg_diff_fmt("%s; excused: %.3gx the baseline's error (limit %gx)",
                                              *text, r, lim)
                            : lg_diff_fmt("%s; excused: the baseline's error is as large "
                                              "(limit %gx)", *text, lim);
        else if (!b->failed)
            s = lg_diff_fmt("%s; the baseline passes this check", *text);
        else if (!isfinite(b->error))
            s = lg_diff_fmt("%s; not excused: the baseline's error is %s, and a broken "
                                "baseline excuses nothing", *text,
                                isnan(b->error) ? "NaN" : "infinite");
        else if (!isfinite(c->error))
            s = lg_diff_fmt("%s; not excused: the candidate's error is %s", *text,
                                isnan(c->error) ? "NaN" : "infinite");
        else if (isfinite(r))
            s = lg_diff_fmt("%s and %.3gx the baseline's error (limit %gx)", *text, r, lim);
        else
            s = lg_diff_fmt("%s; not excused: the baseline's error is 0", *text);
        break;
    }
    case EX_ROWS: {
        int64_t first;
        bool cols = i == CK_COLCOS || i == CK_COLREL;
        uint64_t n = cols ? cols_unshared(t, i, &first) : rows_unshared(t, i, &first);
        ok = n == 0;
        s = ok ? lg_diff_fmt("%s; excused: the baseline fails every such %s too, as badly "
                                 "(within %gx)", *text, cols ? "column" : "row", lim)
               : lg_diff_fmt("%s; not excused: %" PRIu64 " %s where the baseline does not "
                                 "fail as badly (first %s %" PRId64 ")", *text, n,
                                 cols ? "columns" : "rows", cols ? "column" : "row", first);
        break;
    }
    }
    free(*text);
    *text = s;
    return ok;
}

static int regression(golden_diff_tensor *t)
{
    const golden_tier_limits *l = &t->judge.limits;
    double ec = t->error_candidate, eb = t->error_baseline;
    if (isnan(ec) || !(ec > l->noise_floor) || ec <= l->baseline_ratio * eb)
        return 0;
    if (lg_diff_engine_tier(t) == GOLDEN_TIER_KERNEL && t->m.ints)
        return 0; /* integers are exact: the integer check has judged them */
    char a[64], b[64], f[64], x[64];
    lg_diff_num_pair(ec, l->noise_floor, a, f, sizeof a);
    lg_diff_num_pair(eb, ec, b, x, sizeof b);
    t->regression = true;
    t->passed = false;
    char *s = t->error_baseline > 0
                  ? lg_diff_fmt("regression: %s %s is %.4gx the baseline's %s (limit %gx; "
                                    "errors at or below the noise floor %s are not compared)",
                                    t->error_metric, a, ec / eb, b, l->baseline_ratio, f)
                  : lg_diff_fmt("regression: %s %s where the baseline's is 0 (errors at or "
                                    "below the noise floor %s are not compared)",
                                    t->error_metric, a, f);
    return lg_diff_push(&t->reasons, &t->n_reasons, s);
}

int lg_diff_judge(golden_diff_tensor *t)
{
    if (!t->compared) {
        char a[400], b[400];
        golden_diff_shape_str(t->rank, t->shape, a, sizeof a);
        golden_diff_shape_str(t->rank_cand, t->shape_cand, b, sizeof b);
        t->passed = false;
        return lg_diff_push(&t->reasons, &t->n_reasons,
                                lg_diff_fmt("shape differs: reference %s, candidate %s", a, b));
    }
    check ck[CK_N], bk[CK_N];
    if (run_checks(t, &t->m, t->dtype_cand, ck, true) != 0)
        goto oom;
    if (t->has_baseline) {
        run_checks(t, &t->bm, t->dtype_base, bk, false);
        t->baseline_passed = true;
        for (int i = 0; i < CK_N; i++)
            if (bk[i].failed)
                t->baseline_passed = false;
        const char *nm;
        t->error_candidate = headline(t, &t->m, &nm);
        t->error_baseline = headline(t, &t->bm, &nm);
        t->error_metric = nm;
        t->ratio = t->error_baseline > 0 ? t->error_candidate / t->error_baseline
                   : (t->error_candidate == 0 ? 1.0 : NAN);
    }
    t->passed = true;
    int rc = 0;
    for (int i = 0; i < CK_N; i++) {
        if (!ck[i].failed)
            continue;
        char *text = ck[i].text;
        ck[i].text = NULL;
        if (t->has_baseline && excuse(t, i, &ck[i], &bk[i], &text)) {
            rc |= lg_diff_push(&t->notes, &t->n_notes, text);
            continue;
        }
        t->passed = false;
        rc |= lg_diff_push(&t->reasons, &t->n_reasons, text);
    }
    /* router checks of the candidate alone (and its rows): never excused by a baseline */
    for (size_t i = 0; i < t->n_router_reasons; i++) {
        t->passed = false;
        rc |= lg_diff_push(&t->reasons, &t->n_reasons, lg_diff_fmt("%s", t->router_reasons[i]));
    }
    for (size_t i = 0; i < t->n_router_notes; i++)
        rc |= lg_diff_push(&t->notes, &t->n_notes, lg_diff_fmt("%s", t->router_notes[i]));
    if (t->has_baseline)
        rc |= regression(t);
    return rc;
oom:
    for (int i = 0; i < CK_N; i++)
        free(ck[i].text);
    return -1;
}
