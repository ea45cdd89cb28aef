/* golden-diff's router tier: MoE router top-k ids compared row by row (ties among equal
 * reference logits excused), and the candidate's ids and weights checked on their own. */
#include "tensor/diff_internal.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* Router taps are small ([positions, k]); refuse anything that would not fit in memory. */
#define ROUTER_MAX_ELEMS (UINT64_C(1) << 28)
/* A normalised row sums to 1 within this (plus the rounding of its storage dtype). */
#define ROUTER_SUM_TOL 1e-5

/* The whole of tensor i as canonical bytes; NULL with err set. */
static void *read_all(golden_reader *r, size_t i, uint64_t *count, golden_error *err)
{
    const golden_tensor_info *ti = golden_reader_tensor(r, i);
    uint64_t n = 1;
    for (int d = 0; d < ti->rank; d++)
        n *= ti->shape[d];
    if (n > ROUTER_MAX_ELEMS) {
        golden_fail_what(err, GOLDEN_EUNSUPPORTED, ti->name,
                         "router tier: %" PRIu64 " elements is more than it reads at once", n);
        return NULL;
    }
    void *buf = malloc(n ? n * golden_dtype_size(ti->dtype) : 1);
    if (!buf) {
        golden_fail_what(err, GOLDEN_ENOMEM, NULL, "out of memory");
        return NULL;
    }
    if (n && golden_reader_read(r, i, 0, n, buf, err) != 0) {
        free(buf);
        return NULL;
    }
    *count = n;
    return buf;
}

static double *read_f64(golden_reader *r, size_t i, uint64_t *count, golden_error *err)
{
    void *raw = read_all(r, i, count, err);
    if (!raw)
        return NULL;
    double *v = malloc(*count ? *count * sizeof *v : 1);
    if (v)
        golden_convert_to_f64(golden_reader_tensor(r, i)->dtype, raw, *count, v);
    else
        golden_fail_what(err, GOLDEN_ENOMEM, NULL, "out of memory");
    free(raw);
    return v;
}

static int64_t *read_i64(golden_reader *r, size_t i, uint64_t *count, golden_error *err)
{
    void *raw = read_all(r, i, count, err);
    if (!raw)
        return NULL;
    int64_t *v = malloc(*count ? *count * sizeof *v : 1);
    if (v)
        golden_convert_to_i64(golden_reader_tensor(r, i)->dtype, raw, *count, v);
    else
        golden_fail_what(err, GOLDEN_ENOMEM, NULL, "out of memory");
    free(raw);
    return v;
}

/* The reference's sibling "<dir>/logits" of tensor i: float, one row per position. */
static bool find_logits(golden_reader *r, size_t i, uint64_t rows, size_t *out, uint64_t *experts)
{
    const char *name = golden_reader_tensor(r, i)->name;
    const char *slash = strrchr(name, '/');
    size_t dir = slash ? (size_t)(slash - name) + 1 : 0;
    for (size_t k = 0; k < golden_reader_count(r); k++) {
        const golden_tensor_info *ti = golden_reader_tensor(r, k);
        if (strncmp(ti->name, name, dir) != 0 || strcmp(ti->name + dir, "logits") != 0)
            continue;
        if (!golden_dtype_is_float(ti->dtype) || ti->rank < 1)
            return false;
        uint64_t n = 1;
        for (int d = 0; d < ti->rank; d++)
            n *= ti->shape[d];
        uint64_t e = ti->shape[ti->rank - 1];
        if (e == 0 || n / e != rows)
            return false;
        *out = k;
        *experts = e;
        return true;
    }
    return false;
}

/* "[a, b, c]" of a row of k ids. */
static void ids_str(const int64_t *v, uint64_t k, char *buf, size_t n)
{
    size_t at = 0;
    at += (size_t)snprintf(buf, n, "[");
    for (uint64_t j = 0; j < k && at < n; j++)
        at += (size_t)snprintf(buf + at, n - at, "%s%" PRId64, j ? ", " : "", v[j]);
    if (at < n)
        snprintf(buf + at, n - at, "]");
}

static int say(char ***list, size_t *n, char *s)
{
    return lg_diff_push(list, n, s);
}

/* Whether row `row` differs only where the swapped experts have equal reference logits. */
static bool tied_row(const int64_t *r, const int64_t *c, uint64_t k, const double *lg,
                     uint64_t experts)
{
    if (!lg)
        return false;
    for (uint64_t j = 0; j < k; j++) {
        if (r[j] == c[j])
            continue;
        if (r[j] < 0 || c[j] < 0 || (uint64_t)r[j] >= experts || (uint64_t)c[j] >= experts)
            return false;
        double a = lg[r[j]], b = lg[c[j]];
        if (!isfinite(a) || a != b)
            return false;
    }
    return true;
}

static bool has_duplicate(const int64_t *c, uint64_t k)
{
    for (uint64_t a = 0; a < k; a++)
        for (uint64_t b = a + 1; b < k; b++)
            if (c[a] == c[b])
                return true;
    return false;
}

static int ids_checks(golden_diff_tensor *t, const int64_t *rv, const int64_t *cv, uint64_t k,
                      const double *lg, uint64_t experts)
{
    int rc = 0;
    char a[256], b[256];
    int64_t first_tie = -1, first_dup = -1, first_range = -1, bad_id = 0;
    uint64_t differ = 0;
    for (uint64_t row = 0; row < t->router_rows; row++) {
        const int64_t *r = rv + row * k, *c = cv + row * k;
        const double *lr = lg ? lg + row * experts : NULL;
        if (memcmp(r, c, k * sizeof *r) == 0) {
            t->router_rows_exact++;
        } else if (tied_row(r, c, k, lr, experts)) {
            if (t->router_tie_rows++ == 0)
                first_tie = (int64_t)row;
        } else if (differ++ == 0) {
            t->router_first_divergence = (int64_t)row;
        }
        if (has_duplicate(c, k) && t->router_duplicates++ == 0)
            first_dup = (int64_t)row;
        for (uint64_t j = 0; j < k; j++)
            if (c[j] < 0 || (lg && (uint64_t)c[j] >= experts)) {
                if (t->router_out_of_range++ == 0) {
                    first_range = (int64_t)row;
                    bad_id = c[j];
                }
            }
    }
    if (differ) {
        uint64_t row = (uint64_t)t->router_first_divergence;
        ids_str(rv + row * k, k, a, sizeof a);
        ids_str(cv + row * k, k, b, sizeof b);
        rc |= say(&t->router_reasons, &t->n_router_reasons,
                  lg_diff_fmt("%" PRIu64 " of %" PRIu64 " router rows select other experts or "
                                  "another order; first at row %" PRIu64 ": reference %s, "
                                  "candidate %s%s", differ, t->router_rows, row, a, b,
                                  lg ? "" : " (no reference router/logits, so no tie is "
                                            "recognised)"));
    }
    if (first_tie >= 0) {
        uint64_t row = (uint64_t)first_tie;
        ids_str(rv + row * k, k, a, sizeof a);
        ids_str(cv + row * k, k, b, sizeof b);
        rc |= say(&t->router_notes, &t->n_router_notes,
                  lg_diff_fmt("%" PRIu64 " router rows differ only among experts whose "
                                  "reference logits are equal (a tie, not a failure); first at "
                                  "row %" PRIu64 ": reference %s, candidate %s",
                                  t->router_tie_rows, row, a, b));
    }
    if (first_dup >= 0) {
        ids_str(cv + (uint64_t)first_dup * k, k, b, sizeof b);
        rc |= say(&t->router_reasons, &t->n_router_reasons,
                  lg_diff_fmt("%" PRIu64 " candidate router rows select an expert twice; "
                                  "first at row %" PRId64 ": %s", t->router_duplicates, first_dup, b));
    }
    if (first_range >= 0)
        rc |= say(&t->router_reasons, &t->n_router_reasons,
                  lg ? lg_diff_fmt("%" PRIu64 " candidate expert ids lie outside [0, %" PRIu64
                                       "); first at row %" PRId64 ": %" PRId64,
                                       t->router_out_of_range, experts, first_range, bad_id)
                     : lg_diff_fmt("%" PRIu64 " candidate expert ids are negative; first at "
                                       "row %" PRId64 ": %" PRId64, t->router_out_of_range,
                                       first_range, bad_id));
    return rc;
}

/* The reference's sibling "<dir>/topk_ids" of tensor i: its last axis is the number of
 * experts each position selects. */
static bool find_topk_width(golden_reader *r, size_t i, uint64_t rows, uint64_t *k)
{
    const char *name = golden_reader_tensor(r, i)->name;
    const char *slash = strrchr(name, '/');
    size_t dir = slash ? (size_t)(slash - name) + 1 : 0;
    for (size_t j = 0; j < golden_reader_count(r); j++) {
        const golden_tensor_info *ti = golden_reader_tensor(r, j);
        if (strncmp(ti->name, name, dir) != 0 || strcmp(ti->name + dir, "topk_ids") != 0)
            continue;
        if (ti->rank < 1 || ti->shape[ti->rank - 1] == 0 || ti->count / ti->shape[ti->rank - 1] != rows)
            return false;
        *k = ti->shape[ti->rank - 1];
        return true;
    }
    return false;
}

/* The k largest non-NaN entries of a row of e (earlier index first among equals) into idx;
 * fewer (the rest -1) when the row has fewer such entries. */
static void row_topk(const double *v, uint64_t e, uint64_t k, int64_t *idx)
{
    uint64_t n = 0;
    for (uint64_t j = 0; j < e; j++) {
        if (isnan(v[j]))
            continue;
        if (n == k && !(v[j] > v[idx[k - 1]]))
            continue;
        uint64_t p = n < k ? n++ : k - 1;
        while (p > 0 && v[idx[p - 1]] < v[j]) {
            idx[p] = idx[p - 1];
            p--;
        }
        idx[p] = (int64_t)j;
    }
    for (uint64_t j = n; j < k; j++)
        idx[j] = -1;
}

static bool in_set(const int64_t *s, uint64_t k, int64_t x)
{
    for (uint64_t j = 0; j < k; j++)
        if (s[j] == x)
            return true;
    return false;
}

/* Router logits: each position's top-k selection (k = experts per token) must be the
 * reference's, as a set; experts swapped at the k-th place whose reference logits are
 * bit-equal are a tie. */
static int logits_checks(golden_diff_tensor *t, const double *rv, const double *cv, uint64_t e,
                         uint64_t k)
{
    int64_t *ri = malloc(2 * k * sizeof *ri);
    if (!ri)
        return -1;
    int64_t *ci = ri + k, first_tie = -1;
    uint64_t differ = 0;
    char a[256], b[256], fa[256] = "", fb[256] = "", ta[256] = "", tb[256] = "";
    for (uint64_t row = 0; row < t->router_rows; row++) {
        const double *r = rv + row * e;
        row_topk(r, e, k, ri);
        row_topk(cv + row * e, e, k, ci);
        bool same = true, tie = ri[k - 1] >= 0;
        double kth = tie ? r[ri[k - 1]] : NAN;
        for (uint64_t j = 0; j < k; j++) {
            if (!in_set(ci, k, ri[j])) {
                same = false;
                tie = tie && ri[j] >= 0 && r[ri[j]] == kth;
            }
            if (!in_set(ri, k, ci[j])) {
                same = false;
                tie = tie && ci[j] >= 0 && r[ci[j]] == kth;
            }
        }
        if (same) {
            t->router_rows_exact++;
            continue;
        }
        ids_str(ri, k, a, sizeof a);
        ids_str(ci, k, b, sizeof b);
        if (tie) {
            if (t->router_tie_rows++ == 0) {
                first_tie = (int64_t)row;
                snprintf(ta, sizeof ta, "%s", a);
                snprintf(tb, sizeof tb, "%s", b);
            }
        } else if (differ++ == 0) {
            t->router_first_divergence = (int64_t)row;
            snprintf(fa, sizeof fa, "%s", a);
            snprintf(fb, sizeof fb, "%s", b);
        }
    }
    free(ri);
    int rc = 0;
    if (differ)
        rc |= say(&t->router_reasons, &t->n_router_reasons,
                  lg_diff_fmt("%" PRIu64 " of %" PRIu64 " router logits rows select another "
                                  "top-%" PRIu64 " set of experts; first at row %" PRId64
                                  ": reference %s, candidate %s", differ, t->router_rows, k,
                                  t->router_first_divergence, fa, fb));
    if (first_tie >= 0)
        rc |= say(&t->router_notes, &t->n_router_notes,
                  lg_diff_fmt("%" PRIu64 " router logits rows select another top-%" PRIu64
                                  " set only among experts whose reference logits are equal (a "
                                  "tie); first at row %" PRId64 ": reference %s, candidate %s",
                                  t->router_tie_rows, k, first_tie, ta, tb));
    return rc;
}

/* Router logits [positions, experts]: k from the reference's sibling topk_ids, else the
 * policy's router_top_k; unknown k is a failure, never a silent pass. */
static int router_logits(golden_reader *ref, golden_reader *cand, size_t ri, size_t ci,
                         const golden_policy *p, golden_diff_tensor *t, uint64_t e,
                         golden_error *err)
{
    uint64_t k = 0, n = 0, nc = 0;
    t->router_logits = true;
    t->router_experts = (int64_t)e;
    if (!find_topk_width(ref, ri, t->router_rows, &k))
        k = golden_policy_router_top_k(p);
    t->router_top_k = (int64_t)k;
    if (k == 0 || k > e)
        return say(&t->router_reasons, &t->n_router_reasons,
                   k ? lg_diff_fmt("router logits: top-%" PRIu64 " of %" PRIu64 " experts "
                                       "cannot be selected", k, e)
                     : lg_diff_fmt("router logits: the number of experts per token is "
                                       "unknown (no sibling topk_ids in the reference, no "
                                       "router_top_k in the policy), so the selection is not "
                                       "checked")) ? golden_fail_what(err, GOLDEN_ENOMEM, NULL, "out of memory") : 0;
    double *rv = read_f64(ref, ri, &n, err), *cv = rv ? read_f64(cand, ci, &nc, err) : NULL;
    int rc = -1;
    if (cv && logits_checks(t, rv, cv, e, k) == 0)
        rc = 0;
    else if (cv)
        golden_fail_what(err, GOLDEN_ENOMEM, NULL, "out of memory");
    free(rv);
    free(cv);
    return rc;
}

/* Every row of v sums to 1 within tol (rows with a non-finite value excepted). */
static bool rows_normalised(const double *v, uint64_t rows, uint64_t k, double tol)
{
    for (uint64_t row = 0; row < rows; row++) {
        double s = 0;
        for (uint64_t j = 0; j < k; j++)
            s += v[row * k + j];
        if (isfinite(s) && !(fabs(s - 1) <= tol))
            return false;
    }
    return true;
}

static double sum_tol(golden_dtype t)
{
    /* each weight rounds by at most half a step relative; the weights sum to 1 */
    return ROUTER_SUM_TOL + golden_cmp_step(t, 1.0) / 2;
}

/* The candidate's rows: its storage rounding, or the declared compute dtype's when coarser
 * (a bf16 device normalises in bf16 and stores f32). */
static double cand_sum_tol(const golden_diff_tensor *t)
{
    double a = sum_tol(t->dtype_cand), b = sum_tol(t->judge.tol_dtype);
    return a > b ? a : b;
}

static int weights_checks(golden_diff_tensor *t, const double *rv, const double *cv, uint64_t k,
                          const golden_policy *p)
{
    int rc = 0;
    int64_t first_nf = -1, first_sum = -1;
    double bad_sum = 0;
    bool norm = golden_policy_norm_topk_prob(p) ||
                rows_normalised(rv, t->router_rows, k, sum_tol(t->dtype_ref));
    double tol = cand_sum_tol(t);
    for (uint64_t row = 0; row < t->router_rows; row++) {
        double s = 0;
        bool finite = true;
        for (uint64_t j = 0; j < k; j++) {
            double x = cv[row * k + j];
            if (!isfinite(x)) {
                finite = false;
                if (t->router_nonfinite++ == 0)
                    first_nf = (int64_t)row;
            }
            s += x;
        }
        if (norm && finite && !(fabs(s - 1) <= tol) && t->router_bad_sum_rows++ == 0) {
            first_sum = (int64_t)row;
            bad_sum = s;
        }
    }
    if (first_nf >= 0)
        rc |= say(&t->router_reasons, &t->n_router_reasons,
                  lg_diff_fmt("%" PRIu64 " candidate router weights are NaN or Inf; first "
                                  "at row %" PRId64, t->router_nonfinite, first_nf));
    if (first_sum >= 0)
        rc |= say(&t->router_reasons, &t->n_router_reasons,
                  lg_diff_fmt("%" PRIu64 " of %" PRIu64 " candidate router weight rows do "
                                  "not sum to 1 within %.3g; first at row %" PRId64 ", which "
                                  "sums to %.9g", t->router_bad_sum_rows, t->router_rows, tol,
                                  first_sum, bad_sum));
    return rc;
}

int lg_diff_router(golden_reader *ref, golden_reader *cand, size_t ri, size_t ci,
                       const golden_policy *p, golden_diff_tensor *t, golden_error *err)
{
    t->router_first_divergence = -1;
    t->router_experts = -1;
    bool fr = golden_dtype_is_float(t->dtype_ref), fc = golden_dtype_is_float(t->dtype_cand);
    if (fr != fc || !t->compared)
        return 0; /* the dtype-class or shape check fails the tensor already */
    uint64_t k = t->rank ? t->shape[t->rank - 1] : 1, n = 0, nc = 0;
    t->router_checked = true;
    t->router_ids = !fr;
    t->router_rows = k ? t->m.count / k : 0;
    if (!k)
        return 0;
    int rc = -1;
    const char *base = strrchr(t->name, '/');
    if (fr && base && strcasecmp(base, "/logits") == 0)
        return router_logits(ref, cand, ri, ci, p, t, k, err);
    if (fr) {
        double *rv = read_f64(ref, ri, &n, err), *cv = rv ? read_f64(cand, ci, &nc, err) : NULL;
        if (cv && weights_checks(t, rv, cv, k, p) == 0)
            rc = 0;
        else if (cv)
            golden_fail_what(err, GOLDEN_ENOMEM, NULL, "out of memory");
        free(rv);
        free(cv);
        return rc;
    }
    int64_t *rv = read_i64(ref, ri, &n, err), *cv = rv ? read_i64(cand, ci, &nc, err) : NULL;
    double *lg = NULL;
    size_t li;
    uint64_t experts = 0, nl = 0;
    if (cv && find_logits(ref, ri, t->router_rows, &li, &experts)) {
        t->router_experts = (int64_t)experts;
        lg = read_f64(ref, li, &nl, err);
        if (!lg)
            goto out;
    }
    if (cv) {
        if (ids_checks(t, rv, cv, k, lg, experts) == 0)
            rc = 0;
        else
            golden_fail_what(err, GOLDEN_ENOMEM, NULL, "out of memory");
    }
out:
    free(rv);
    free(cv);
    free(lg);
    return rc;
}
