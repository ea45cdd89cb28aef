/* The row machines of the metrics engine: logits (top-k, near ties, online softmax for KL
 * and log-softmax), tokens (first divergence) and layer rows (per-row cosine). */
#include "golden/compare.h"
#include "tensor/compare_internal.h"

#include <float.h>
#include <math.h>
#include <string.h>

#if GOLDEN_HAVE_AVX2
#include <immintrin.h>
#endif

static void close_softmax_row(const golden_cmp_setup *s, golden_cmp_acc *a, uint64_t row);

void lg_cmp_topk_push(golden_cmp_topk *t, double v, double other, int64_t idx)
{
    if (v != v)
        return; /* NaN never ranks */
    if (t->n == GOLDEN_CMP_TOPK && !(v > t->val[GOLDEN_CMP_TOPK - 1]))
        return; /* an equal later index loses: top-1 is the first maximal index */
    int p = t->n < GOLDEN_CMP_TOPK ? t->n : GOLDEN_CMP_TOPK - 1;
    while (p > 0 && t->val[p - 1] < v) {
        t->val[p] = t->val[p - 1];
        t->idx[p] = t->idx[p - 1];
        t->other[p] = t->other[p - 1];
        p--;
    }
    t->val[p] = v;
    t->idx[p] = idx;
    t->other[p] = other;
    if (t->n < GOLDEN_CMP_TOPK)
        t->n++;
}

/* Entries of the candidate's top set that are in *a* top set of the reference: the
 * reference's top set is its entries above its k-th value b plus any of those bit-equal to
 * b, so a candidate entry whose reference value is above b is common, and those whose
 * reference value equals b are common up to the number of places the reference gives b.
 * Bit-equal ties anywhere in the row count, not only among the five kept. */
static int topk_common(const golden_cmp_topk *r, const golden_cmp_topk *c)
{
    if (!r->n)
        return 0;
    double b = r->val[r->n - 1];
    int above = 0, cap = 0, at = 0, common = 0;
    for (int i = 0; i < r->n; i++)
        above += r->val[i] > b;
    cap = r->n - above;
    for (int j = 0; j < c->n; j++) {
        if (c->other[j] > b)
            common++;
        else if (c->other[j] == b)
            at++;
    }
    return common + (at < cap ? at : cap);
}

void lg_cmp_close_row(const golden_cmp_setup *s, golden_cmp_acc *a)
{
    uint64_t row = s->row_len ? a->first / s->row_len + a->rows : a->rows;
    a->rows++;
    if (s->tier == GOLDEN_TIER_LOGITS) {
        const golden_cmp_topk *r = &a->cur_ref, *c = &a->cur_cand;
        int64_t r0 = r->n ? r->idx[0] : -1, c0 = c->n ? c->idx[0] : -1;
        /* bit-equal top logits of the reference are a tie: the candidate choosing another
         * of them has not flipped top-1 (as at the router tier), wherever the tied entry
         * is in the row (the reference's value at the candidate's top-1 is kept). */
        bool match = r0 == c0 || (r->n && c->n && c->other[0] == r->val[0]);
        if (match)
            a->top1_match++;
        else
            a->flips++;
        /* A row's top-k set is its k largest non-NaN entries, k = min(5, such entries), so
         * identical rows overlap fully even with NaN or fewer than five entries; entries
         * bit-equal to the reference's k-th are interchangeable (topk_common). The share
         * common/k is kept exact as an integer in 60ths (60 is divisible by 1..5). */
        int common = topk_common(r, c), k = r->n > c->n ? r->n : c->n;
        unsigned share = k ? (unsigned)(common * (60 / k)) : 60;
        a->top5_common += share;
        if (s->row_flags)
            s->row_flags[row] = (uint8_t)((match ? 0 : 1) | (share << 1));
        close_softmax_row(s, a, row);
        double margin = r->n >= 2 ? r->val[0] - r->val[1] : NAN;
        double limit = s->near_tie_margin;
        if (limit != limit) {
            golden_dtype ut;
            limit = r->n && golden_cmp_ulp_dtype(s->dtype_ref, s->dtype_cand, &ut)
                        ? golden_cmp_step(ut, r->val[0]) : 0.0;
        }
        bool near = margin < limit;
        if (near) {
            a->near_tie_rows++;
            if (!match)
                a->near_tie_flips++;
        }
        if (!match && a->n_examples < GOLDEN_CMP_EXAMPLES) {
            golden_cmp_flip *f = &a->examples[a->n_examples++];
            f->row = row;
            f->ref_top1 = r0;
            f->cand_top1 = c0;
            f->margin = margin;
            f->near_tie = near;
        }
        a->cur_ref.n = 0;
        a->cur_cand.n = 0;
    } else if (s->tier == GOLDEN_TIER_TOKENS) {
        a->sequences++;
        if (a->cur_div < 0) {
            a->sequences_exact++;
        } else if (a->earliest_divergence < 0 || a->cur_div < a->earliest_divergence) {
            a->earliest_divergence = a->cur_div;
            a->earliest_divergence_row = row;
        }
        if (s->first_divergence)
            s->first_divergence[row] = a->cur_div;
        a->cur_div = -1;
    }
    a->row_pos = 0;
}

/* Layer rows: per-row dot and norms (scaled like the block), closed into the row cosine. */
void lg_cmp_close_layer_row(const golden_cmp_setup *s, golden_cmp_acc *a)
{
    uint64_t row = a->first / s->row_len + a->rows;
    a->rows++;
    double cosv;
    if (a->cr_r == 0 && a->cr_maxc <= s->atol) {
        cosv = NAN; /* a zero reference row: judged by absolute error, not by angle */
    } else {
        if (a->cr_r == 0 || a->cr_c == 0)
            cosv = 0.0;
        else
            cosv = ldexp(a->cr_d / (sqrt(a->cr_r) * sqrt(a->cr_c)),
                         a->cr_e[0] - a->cr_e[1] / 2 - a->cr_e[2] / 2);
        a->row_cos_rows++;
        if (cosv < a->min_row_cos) {
            a->min_row_cos = cosv;
            a->min_row_cos_row = row;
        }
    }
    if (s->row_value)
        s->row_value[row] = cosv;
    a->cr_d = a->cr_r = a->cr_c = a->cr_maxc = 0;
    a->cr_e[0] = a->cr_e[1] = a->cr_e[2] = 0;
    a->row_pos = 0;
}

static void row3_add(golden_cmp_acc *a, double d, double r, double c, const block_scales *k)
{
    double dc = 0;
    lg_cmp_sadd(&a->cr_d, &dc, &a->cr_e[0], d, 0, k->r + k->c);
    a->cr_d += dc;
    dc = 0;
    lg_cmp_sadd(&a->cr_r, &dc, &a->cr_e[1], r, 0, 2 * k->r);
    a->cr_r += dc;
    dc = 0;
    lg_cmp_sadd(&a->cr_c, &dc, &a->cr_e[2], c, 0, 2 * k->c);
    a->cr_c += dc;
}

/* One row segment's dot and squared norms (finite pairs, values scaled by sr and sc) in four
 * lanes combined as (0 + 1) + (2 + 3), and the largest |c| where r is 0. The portable and the
 * AVX2 versions add in the same order (a skipped pair adds +0, which changes no sum that
 * starts at +0), so they give the same bits. */
typedef struct {
    double d, r, c, maxc;
} row_part;

static row_part row_segment_scalar(const double *ref, const double *cand, size_t n, double sr,
                                   double sc, size_t from, const double lanes_in[3][4],
                                   double maxc)
{
    double d[4], r2[4], c2[4];
    for (int l = 0; l < 4; l++) {
        d[l] = lanes_in ? lanes_in[0][l] : 0;
        r2[l] = lanes_in ? lanes_in[1][l] : 0;
        c2[l] = lanes_in ? lanes_in[2][l] : 0;
    }
    size_t i = from;
    for (; !lanes_in && i + 4 <= n; i += 4)
        for (int l = 0; l < 4; l++) {
            double r = ref[i + l], c = cand[i + l];
            if (isfinite(r) && isfinite(c)) {
                double rs = r * sr, cs = c * sc;
                d[l] += rs * cs;
                r2[l] += rs * rs;
                c2[l] += cs * cs;
                if (r == 0 && fabs(c) > maxc)
                    maxc = fabs(c);
            }
        }
    for (; i < n; i++) {
        double r = ref[i], c = cand[i];
        if (isfinite(r) && isfinite(c)) {
            double rs = r * sr, cs = c * sc;
            d[0] += rs * cs;
            r2[0] += rs * rs;
            c2[0] += cs * cs;
            if (r == 0 && fabs(c) > maxc)
                maxc = fabs(c);
        }
    }
    row_part p = {(d[0] + d[1]) + (d[2] + d[3]), (r2[0] + r2[1]) + (r2[2] + r2[3]),
                  (c2[0] + c2[1]) + (c2[2] + c2[3]), maxc};
    return p;
}

#if GOLDEN_HAVE_AVX2
__attribute__((target("avx2"))) static row_part
row_segment_avx2(const double *ref, const double *cand, size_t n, double sr, double sc)
{
    const __m256d vsr = _mm256_set1_pd(sr), vsc = _mm256_set1_pd(sc), sign = _mm256_set1_pd(-0.0),
                  big = _mm256_set1_pd(DBL_MAX);
    __m256d d = _mm256_setzero_pd(), r2 = d, c2 = d, mc = d, zero = d;
    size_t i = 0;
    for (; i + 4 <= n; i += 4) {
        __m256d r = _mm256_loadu_pd(ref + i), c = _mm256_loadu_pd(cand + i);
        __m256d fin = _mm256_and_pd(_mm256_cmp_pd(_mm256_andnot_pd(sign, r), big, _CMP_LE_OQ),
                                    _mm256_cmp_pd(_mm256_andnot_pd(sign, c), big, _CMP_LE_OQ));
        __m256d rs = _mm256_mul_pd(r, vsr), cs = _mm256_mul_pd(c, vsc);
        d = _mm256_add_pd(d, _mm256_and_pd(_mm256_mul_pd(rs, cs), fin));
        r2 = _mm256_add_pd(r2, _mm256_and_pd(_mm256_mul_pd(rs, rs), fin));
        c2 = _mm256_add_pd(c2, _mm256_and_pd(_mm256_mul_pd(cs, cs), fin));
        __m256d at0 = _mm256_and_pd(fin, _mm256_cmp_pd(r, zero, _CMP_EQ_OQ));
        mc = _mm256_max_pd(_mm256_and_pd(_mm256_andnot_pd(sign, c), at0), mc);
    }
    double part[3][4], m4[4];
    _mm256_storeu_pd(m4, mc);
    double maxc = m4[0] > m4[1] ? m4[0] : m4[1];
    maxc = maxc > m4[2] ? maxc : m4[2];
    maxc = maxc > m4[3] ? maxc : m4[3];
    _mm256_storeu_pd(part[0], d);
    _mm256_storeu_pd(part[1], r2);
    _mm256_storeu_pd(part[2], c2);
    return row_segment_scalar(ref, cand, n, sr, sc, i, (const double(*)[4])part, maxc);
}
#endif

void lg_cmp_layer_rows(const golden_cmp_setup *s, golden_cmp_acc *a, const double *ref,
                       const double *cand, size_t n, const block_scales *k)
{
    const double sr = ldexp(1.0, -k->r), sc = ldexp(1.0, -k->c);
    size_t i = 0;
    while (i < n) {
        size_t seg = (size_t)(s->row_len - a->row_pos);
        if (seg > n - i)
            seg = n - i;
        row_part p;
#if GOLDEN_HAVE_AVX2
        if (!s->scalar_only && lg_cmp_have_avx2())
            p = row_segment_avx2(ref + i, cand + i, seg, sr, sc);
        else
#endif
            p = row_segment_scalar(ref + i, cand + i, seg, sr, sc, 0, NULL, 0.0);
        row3_add(a, p.d, p.r, p.c, k);
        if (p.maxc > a->cr_maxc)
            a->cr_maxc = p.maxc;
        a->row_pos += seg;
        i += seg;
        if (a->row_pos == s->row_len)
            lg_cmp_close_layer_row(s, a);
    }
}

/* Logits rows: online softmax of both sides (running max, rescaled sums), the KL sum
 * T = sum e^(r - max)(r - c) and the range of r - c, closed into KL and log-softmax. */
void lg_cmp_softmax_step(golden_cmp_acc *a, double r, double c)
{
    bool fr = isfinite(r), fc = isfinite(c);
    if (fc) {
        if (c > a->sm_mc) {
            a->sm_sc = a->sm_sc * exp(a->sm_mc - c) + 1.0;
            a->sm_mc = c;
        } else {
            a->sm_sc += exp(c - a->sm_mc);
        }
    }
    if (fr) {
        if (!fc) {
            a->sm_inf = true; /* mass where the candidate has none (or NaN) */
            if (r > a->sm_mr) {
                double f = exp(a->sm_mr - r);
                a->sm_sr = a->sm_sr * f + 1.0;
                a->sm_t *= f;
                a->sm_mr = r;
            } else {
                a->sm_sr += exp(r - a->sm_mr);
            }
            return;
        }
        double dd = r - c;
        if (r > a->sm_mr) {
            double f = exp(a->sm_mr - r);
            a->sm_sr = a->sm_sr * f + 1.0;
            a->sm_t = a->sm_t * f + dd;
            a->sm_mr = r;
        } else {
            double w = exp(r - a->sm_mr);
            a->sm_sr += w;
            a->sm_t += w * dd;
        }
        if (dd < a->sm_dmin)
            a->sm_dmin = dd;
        if (dd > a->sm_dmax)
            a->sm_dmax = dd;
    }
}

static void close_softmax_row(const golden_cmp_setup *s, golden_cmp_acc *a, uint64_t row)
{
    double kl = 0, lsm = 0;
    if (a->sm_sr > 0) {
        if (a->sm_inf || !(a->sm_sc > 0)) {
            kl = INFINITY;
            lsm = INFINITY;
        } else {
            double lr = a->sm_mr + log(a->sm_sr), lc = a->sm_mc + log(a->sm_sc);
            double shift = lr - lc;
            kl = a->sm_t / a->sm_sr - shift;
            if (kl < 0)
                kl = 0; /* rounding of a near-zero divergence */
            if (a->sm_dmax >= a->sm_dmin) {
                double u = a->sm_dmax - shift, v = shift - a->sm_dmin;
                lsm = u > v ? u : v;
            }
        }
    }
    if (kl > a->kl_max) {
        a->kl_max = kl;
        a->kl_max_row = row;
    }
    a->kl_sum += kl;
    if (lsm > a->lsm_max)
        a->lsm_max = lsm;
    if (s->row_value)
        s->row_value[row] = kl;
    a->sm_mr = a->sm_mc = -INFINITY;
    a->sm_sr = a->sm_sc = a->sm_t = 0;
    a->sm_dmin = INFINITY;
    a->sm_dmax = -INFINITY;
    a->sm_inf = false;
}

