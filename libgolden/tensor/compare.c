/* The one-pass metrics engine: every calculet-diff-report/v1 metric of a tensor pair from a
 * single streamed pass, with accumulators that merge in chunk order so threads stay exact. */
#include "golden/compare.h"

#include <math.h>
#include <string.h>

static const char *const tier_names[GOLDEN_TIER_COUNT] = {"kernel", "layer", "logits", "tokens"};

const char *golden_tier_name(golden_tier t)
{
    return (unsigned)t < GOLDEN_TIER_COUNT ? tier_names[t] : "?";
}

int golden_tier_parse(const char *name, golden_tier *out)
{
    for (int i = 0; i < GOLDEN_TIER_COUNT; i++)
        if (strcmp(name, tier_names[i]) == 0) {
            *out = (golden_tier)i;
            return 0;
        }
    return -1;
}

/* ---- ULP distance ---- */

typedef struct {
    int fast;       /* 0 generic, 1 f64 bits, 2 f32 bits, 3 bf16 rounded from f32 bits */
    bool is_f64;
    int mant;       /* explicit mantissa bits */
    int emin;       /* exponent of the smallest normal */
    int64_t maxidx; /* index of +Inf (or of the largest finite when there is no Inf) */
} ulp_format;

static int mant_bits(golden_dtype t)
{
    switch (t) {
    case GOLDEN_F64: return 52;
    case GOLDEN_F32: return 23;
    case GOLDEN_F16: return 10;
    case GOLDEN_BF16: return 7;
    case GOLDEN_FP8_E4M3FN: return 3;
    case GOLDEN_FP8_E5M2: return 2;
    default: return -1;
    }
}

static ulp_format ulp_format_of(golden_dtype t)
{
    ulp_format f = {0, false, 0, 0, 0};
    switch (t) {
    case GOLDEN_F64: f.is_f64 = true; f.mant = 52; f.emin = -1022; f.maxidx = INT64_C(0x7FF0000000000000); break;
    case GOLDEN_F32: f.mant = 23; f.emin = -126; f.maxidx = 0x7F800000; break;
    case GOLDEN_BF16: f.mant = 7; f.emin = -126; f.maxidx = 0x7F80; break;
    case GOLDEN_F16: f.mant = 10; f.emin = -14; f.maxidx = 0x7C00; break;
    case GOLDEN_FP8_E5M2: f.mant = 2; f.emin = -14; f.maxidx = 0x7C; break;
    case GOLDEN_FP8_E4M3FN: f.mant = 3; f.emin = -6; f.maxidx = 0x7E; break; /* 448, no Inf */
    default: break;
    }
    return f;
}

bool golden_cmp_ulp_dtype(golden_dtype a, golden_dtype b, golden_dtype *out)
{
    int ma = mant_bits(a), mb = mant_bits(b);
    if (ma < 0 || mb < 0)
        return false;
    /* Between equal mantissa widths (none today) prefer a; a coarser grid is the one that
     * says how many representable steps apart the two results are. */
    *out = mb < ma ? b : a;
    return true;
}

/* The index is computed on the f64 bits with integer arithmetic: one rounding, exact. */
static inline int64_t ulp_index(const ulp_format *f, double x)
{
    uint64_t b;
    memcpy(&b, &x, sizeof b);
    bool neg = (b >> 63) != 0;
    b &= ~(UINT64_C(1) << 63);
    int64_t idx;
    if (f->is_f64) {
        idx = (int64_t)b;
    } else {
        int be = (int)(b >> 52);
        if (be == 0) {
            idx = 0; /* zero or an f64 subnormal: far below any narrower format's grid */
        } else {
            int e = be - 1023;
            uint64_t sig = (b & ((UINT64_C(1) << 52) - 1)) | (UINT64_C(1) << 52);
            int qexp = (e >= f->emin ? e : f->emin) - f->mant;
            int shift = qexp - (e - 52);
            uint64_t units;
            if (shift >= 54) {
                units = 0; /* below half the smallest step */
            } else {
                units = sig >> shift;
                uint64_t rem = sig & ((UINT64_C(1) << shift) - 1);
                uint64_t half = UINT64_C(1) << (shift - 1);
                if (rem > half || (rem == half && (units & 1)))
                    units++;
            }
            idx = (e >= f->emin ? ((int64_t)(e - f->emin) << f->mant) : 0) + (int64_t)units;
            if (idx > f->maxidx)
                idx = f->maxidx;
        }
    }
    return neg ? -idx : idx;
}

int64_t golden_cmp_ulp_index(golden_dtype t, double x)
{
    ulp_format f = ulp_format_of(t);
    return ulp_index(&f, x);
}

static inline uint64_t ulp_distance(int64_t a, int64_t b)
{
    if ((a < 0) == (b < 0))
        return a > b ? (uint64_t)(a - b) : (uint64_t)(b - a);
    uint64_t ua = a < 0 ? (uint64_t)0 - (uint64_t)a : (uint64_t)a;
    uint64_t ub = b < 0 ? (uint64_t)0 - (uint64_t)b : (uint64_t)b;
    return ua + ub;
}

/* The index through the cheapest exact route: when neither side is f64, every value is
 * exactly an f32, so its f32 bits (or their bf16 rounding) are the index. */
static inline int64_t ulp_of(const ulp_format *f, double x)
{
    if (f->fast == 2 || f->fast == 3) {
        float v = (float)x;
        uint32_t b;
        memcpy(&b, &v, sizeof b);
        uint32_t mag = b & 0x7FFFFFFFu;
        if (f->fast == 3)
            mag = (mag + 0x7FFFu + ((mag >> 16) & 1u)) >> 16;
        return (b >> 31) ? -(int64_t)mag : (int64_t)mag;
    }
    if (f->fast == 1) {
        uint64_t b;
        memcpy(&b, &x, sizeof b);
        int64_t mag = (int64_t)(b & ~(UINT64_C(1) << 63));
        return (b >> 63) ? -mag : mag;
    }
    return ulp_index(f, x);
}

/* ---- accumulators ---- */

/* Neumaier: a sum and its running compensation. */
static inline void neu_add(double *sum, double *comp, double x)
{
    double t = *sum + x;
    if (fabs(*sum) >= fabs(x))
        *comp += (*sum - t) + x;
    else
        *comp += (x - t) + *sum;
    *sum = t;
}

void golden_cmp_acc_init(golden_cmp_acc *a, uint64_t first)
{
    memset(a, 0, sizeof *a);
    a->first = first;
    a->max_abs = -1.0;
    a->max_rel = -1.0;
    a->earliest_divergence = -1;
    a->cur_div = -1;
    a->first_new_nonfinite = -1;
}

static void topk_push(golden_cmp_topk *t, double v, int64_t idx)
{
    if (v != v)
        return; /* NaN never ranks */
    if (t->n == GOLDEN_CMP_TOPK && !(v > t->val[GOLDEN_CMP_TOPK - 1]))
        return; /* an equal later index loses: top-1 is the first maximal index */
    int p = t->n < GOLDEN_CMP_TOPK ? t->n : GOLDEN_CMP_TOPK - 1;
    while (p > 0 && t->val[p - 1] < v) {
        t->val[p] = t->val[p - 1];
        t->idx[p] = t->idx[p - 1];
        p--;
    }
    t->val[p] = v;
    t->idx[p] = idx;
    if (t->n < GOLDEN_CMP_TOPK)
        t->n++;
}

static void close_row(const golden_cmp_setup *s, golden_cmp_acc *a)
{
    uint64_t row = s->row_len ? a->first / s->row_len + a->rows : a->rows;
    a->rows++;
    if (s->tier == GOLDEN_TIER_LOGITS) {
        const golden_cmp_topk *r = &a->cur_ref, *c = &a->cur_cand;
        int64_t r0 = r->n ? r->idx[0] : -1, c0 = c->n ? c->idx[0] : -1;
        bool match = r0 == c0;
        if (match)
            a->top1_match++;
        else
            a->flips++;
        /* A row's top-k set is its k largest non-NaN entries, k = min(5, such entries), so
         * identical rows overlap fully even with NaN or fewer than five entries. The share
         * common/k is kept exact as an integer in 60ths (60 is divisible by 1..5). */
        int common = 0, k = r->n > c->n ? r->n : c->n;
        for (int i = 0; i < r->n; i++)
            for (int j = 0; j < c->n; j++)
                if (r->idx[i] == c->idx[j]) {
                    common++;
                    break;
                }
        a->top5_common += k ? (uint64_t)(common * (60 / k)) : 60;
        double margin = r->n >= 2 ? r->val[0] - r->val[1] : NAN;
        bool near = margin < s->near_tie_margin;
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

/* Sign-magnitude bits to an ordered index without a branch. */
static inline int64_t ordered32(uint32_t mag, uint32_t bits)
{
    int64_t sgn = -(int64_t)(bits >> 31);
    return ((int64_t)mag ^ sgn) - sgn;
}

/* Largest ULP distance of a finite block, one loop per index route. */
static uint64_t block_max_ulp(const ulp_format *uf, const double *ref, const double *cand,
                              size_t n, uint64_t mu)
{
    if (uf->fast == 2 || uf->fast == 3) {
        bool to_bf16 = uf->fast == 3;
        int64_t best = (int64_t)mu;
        for (size_t k = 0; k < n; k++) {
            float fr = (float)ref[k], fc = (float)cand[k];
            uint32_t br, bc;
            memcpy(&br, &fr, sizeof br);
            memcpy(&bc, &fc, sizeof bc);
            uint32_t mr = br & 0x7FFFFFFFu, mc = bc & 0x7FFFFFFFu;
            if (to_bf16) {
                mr = (mr + 0x7FFFu + ((mr >> 16) & 1u)) >> 16;
                mc = (mc + 0x7FFFu + ((mc >> 16) & 1u)) >> 16;
            }
            int64_t d = ordered32(mr, br) - ordered32(mc, bc);
            d = d < 0 ? -d : d;
            best = d > best ? d : best;
        }
        return (uint64_t)best;
    }
    for (size_t k = 0; k < n; k++) {
        uint64_t u = ulp_distance(ulp_of(uf, ref[k]), ulp_of(uf, cand[k]));
        mu = u > mu ? u : mu;
    }
    return mu;
}

/* One element of the finite path, lane l. ULP route: 0 none (or a separate loop), 2 f32
 * bits, 3 bf16 rounding of f32 bits. */
#define FINITE_STEP(l, r, c, route)                                                        \
    do {                                                                                   \
        double d_ = (c) - (r), ad_ = fabs(d_), ar_ = fabs(r);                              \
        pr[l] += (r) * 0.0 + (c) * 0.0;                                                    \
        sa[l] += ad_;                                                                      \
        sq[l] += d_ * d_;                                                                  \
        dt[l] += (c) * (r);                                                                \
        nr[l] += (r) * (r);                                                                \
        nc[l] += (c) * (c);                                                                \
        mx[l] = ad_ > mx[l] ? ad_ : mx[l];                                                 \
        double rel_ = ad_ / (ar_ > eps ? ar_ : eps);                                       \
        mr[l] = rel_ > mr[l] ? rel_ : mr[l];                                               \
        mism += ad_ > atol + rtol * ar_;                                                   \
        if ((route) >= 2) {                                                                \
            float fr_ = (float)(r), fc_ = (float)(c);                                      \
            uint32_t br_, bc_;                                                             \
            memcpy(&br_, &fr_, sizeof br_);                                                \
            memcpy(&bc_, &fc_, sizeof bc_);                                                \
            uint32_t m1_ = br_ & 0x7FFFFFFFu, m2_ = bc_ & 0x7FFFFFFFu;                     \
            if ((route) == 3) {                                                            \
                m1_ = (m1_ + 0x7FFFu + ((m1_ >> 16) & 1u)) >> 16;                          \
                m2_ = (m2_ + 0x7FFFu + ((m2_ >> 16) & 1u)) >> 16;                          \
            }                                                                              \
            int64_t u_ = ordered32(m1_, br_) - ordered32(m2_, bc_);                        \
            u_ = u_ < 0 ? -u_ : u_;                                                        \
            mu = u_ > mu ? u_ : mu;                                                        \
        }                                                                                  \
    } while (0)

/* The path of blocks without NaN/Inf: no per-element class tests, two lanes per sum, the
 * index of a new maximum found by a second look only when the block raises it. Computes
 * into locals and returns false (leaving a untouched) when a value turns out not finite. */
static inline __attribute__((always_inline)) bool
finite_block(const golden_cmp_setup *s, golden_cmp_acc *a, const double *ref,
             const double *cand, size_t n, int route)
{
    double sa[2] = {0, 0}, sq[2] = {0, 0}, dt[2] = {0, 0}, nr[2] = {0, 0}, nc[2] = {0, 0};
    double mx[2] = {-1, -1}, mr[2] = {-1, -1}, pr[2] = {0, 0};
    uint64_t mism = 0;
    int64_t mu = (int64_t)a->max_ulp;
    const double atol = s->atol, rtol = s->rtol, eps = s->eps;
    size_t i = 0;
    for (; i + 2 <= n; i += 2) {
        FINITE_STEP(0, ref[i], cand[i], route);
        FINITE_STEP(1, ref[i + 1], cand[i + 1], route);
    }
    if (i < n)
        FINITE_STEP(0, ref[i], cand[i], route);
    if (pr[0] + pr[1] != 0)
        return false;
    double bmax = mx[0] > mx[1] ? mx[0] : mx[1];
    if (bmax > a->max_abs) {
        for (size_t k = 0; k < n; k++)
            if (fabs(cand[k] - ref[k]) == bmax) {
                a->max_abs = bmax;
                a->max_abs_index = a->first + a->n + k;
                break;
            }
    }
    double brel = mr[0] > mr[1] ? mr[0] : mr[1];
    if (brel > a->max_rel)
        a->max_rel = brel;
    a->max_ulp = (uint64_t)mu;
    a->pairs += n;
    a->finite_pairs += n;
    a->mismatches += mism;
    neu_add(&a->sum_abs, &a->sum_abs_c, sa[0] + sa[1]);
    neu_add(&a->sum_sq, &a->sum_sq_c, sq[0] + sq[1]);
    neu_add(&a->dot, &a->dot_c, dt[0] + dt[1]);
    neu_add(&a->norm_r, &a->norm_r_c, nr[0] + nr[1]);
    neu_add(&a->norm_c, &a->norm_c_c, nc[0] + nc[1]);
    return true;
}

static bool add_finite_block(const golden_cmp_setup *s, golden_cmp_acc *a, const ulp_format *uf,
                             const double *ref, const double *cand, size_t n)
{
    if (uf && uf->fast == 2)
        return finite_block(s, a, ref, cand, n, 2);
    if (uf && uf->fast == 3)
        return finite_block(s, a, ref, cand, n, 3);
    if (!finite_block(s, a, ref, cand, n, 0))
        return false;
    if (uf)
        a->max_ulp = block_max_ulp(uf, ref, cand, n, a->max_ulp);
    return true;
}

/* A block with NaN/Inf somewhere: every pair is classified. */
static void add_any_block(const golden_cmp_setup *s, golden_cmp_acc *a, const ulp_format *uf,
                          const double *ref, const double *cand, size_t n)
{
    double bs_abs = 0, bs_sq = 0, bdot = 0, bnr = 0, bnc = 0;
    double max_abs = a->max_abs, max_rel = a->max_rel;
    uint64_t max_idx = a->max_abs_index, fin = 0, mism = 0, max_ulp = a->max_ulp;
    const double atol = s->atol, rtol = s->rtol, eps = s->eps;
    const uint64_t base = a->first + a->n;

    for (size_t i = 0; i < n; i++) {
        double r = ref[i], c = cand[i];
        bool fr = isfinite(r), fc = isfinite(c);
        if (fr && fc) {
            double d = c - r, ad = fabs(d), ar = fabs(r);
            fin++;
            bs_abs += ad;
            bs_sq += d * d;
            bdot += c * r;
            bnr += r * r;
            bnc += c * c;
            if (ad > max_abs) {
                max_abs = ad;
                max_idx = base + i;
            }
            double rel = ad / (ar > eps ? ar : eps);
            if (rel > max_rel)
                max_rel = rel;
            if (ad > atol + rtol * ar)
                mism++;
            if (uf) {
                uint64_t u = ulp_distance(ulp_of(uf, r), ulp_of(uf, c));
                if (u > max_ulp)
                    max_ulp = u;
            }
        } else {
            if (!fr) {
                if (isnan(r))
                    a->nan_ref++;
                else
                    a->inf_ref++;
            }
            if (!fc && fr && a->first_new_nonfinite < 0)
                a->first_new_nonfinite = (int64_t)(base + i);
            if (!fc) {
                if (isnan(c)) {
                    a->nan_cand++;
                    if (fr)
                        a->new_nan++;
                } else {
                    a->inf_cand++;
                    if (fr)
                        a->new_inf++;
                }
            }
            if (fr != fc)
                mism++;
            else if (isnan(r) != isnan(c) || (!isnan(r) && r != c))
                mism++;
        }
    }
    a->pairs += n;
    a->finite_pairs += fin;
    a->mismatches += mism;
    a->max_abs = max_abs;
    a->max_abs_index = max_idx;
    a->max_rel = max_rel;
    a->max_ulp = max_ulp;
    neu_add(&a->sum_abs, &a->sum_abs_c, bs_abs);
    neu_add(&a->sum_sq, &a->sum_sq_c, bs_sq);
    neu_add(&a->dot, &a->dot_c, bdot);
    neu_add(&a->norm_r, &a->norm_r_c, bnr);
    neu_add(&a->norm_c, &a->norm_c_c, bnc);
}

/* The work of one block: elementwise metrics and, for logits/tokens, the row machine.
 * ri/ci (exact integers) decide token equality when given. */
static void add_block(const golden_cmp_setup *s, golden_cmp_acc *a, const ulp_format *uf,
                      const double *ref, const double *cand, size_t n, const int64_t *ri,
                      const int64_t *ci)
{
    /* x * 0 is NaN exactly when x is not finite: the fast path finds out by itself */
    if (!add_finite_block(s, a, uf, ref, cand, n))
        add_any_block(s, a, uf, ref, cand, n);

    if ((s->tier == GOLDEN_TIER_LOGITS || s->tier == GOLDEN_TIER_TOKENS) && s->row_len) {
        uint64_t pos = a->row_pos;
        for (size_t i = 0; i < n; i++) {
            if (s->tier == GOLDEN_TIER_LOGITS) {
                topk_push(&a->cur_ref, ref[i], (int64_t)pos);
                topk_push(&a->cur_cand, cand[i], (int64_t)pos);
            } else if (a->cur_div < 0) {
                bool eq = ri ? ri[i] == ci[i] : ref[i] == cand[i];
                if (!eq)
                    a->cur_div = (int64_t)pos;
            }
            if (++pos == s->row_len) {
                a->row_pos = pos;
                close_row(s, a);
                pos = 0;
            }
        }
        a->row_pos = pos;
    }
    a->n += n;
}

static bool setup_ulp(const golden_cmp_setup *s, ulp_format *uf)
{
    golden_dtype t;
    if (!golden_cmp_ulp_dtype(s->dtype_ref, s->dtype_cand, &t))
        return false;
    *uf = ulp_format_of(t);
    bool wide = s->dtype_ref == GOLDEN_F64 || s->dtype_cand == GOLDEN_F64;
    if (t == GOLDEN_F64)
        uf->fast = 1;
    else if (t == GOLDEN_F32 && !wide)
        uf->fast = 2;
    else if (t == GOLDEN_BF16 && !wide)
        uf->fast = 3;
    return true;
}

void golden_cmp_add_f64(const golden_cmp_setup *s, golden_cmp_acc *a, const double *ref,
                        const double *cand, size_t n)
{
    ulp_format uf;
    bool has_ulp = setup_ulp(s, &uf);
    a->has_ulp = has_ulp;
    for (size_t off = 0; off < n; off += GOLDEN_CMP_BLOCK) {
        size_t m = n - off < GOLDEN_CMP_BLOCK ? n - off : GOLDEN_CMP_BLOCK;
        add_block(s, a, has_ulp ? &uf : NULL, ref + off, cand + off, m, NULL, NULL);
    }
}

void golden_cmp_add_raw(const golden_cmp_setup *s, golden_cmp_acc *a, const void *ref,
                        const void *cand, size_t n)
{
    double rb[GOLDEN_CMP_BLOCK], cb[GOLDEN_CMP_BLOCK];
    int64_t ri[GOLDEN_CMP_BLOCK], ci[GOLDEN_CMP_BLOCK];
    size_t wr = golden_dtype_size(s->dtype_ref), wc = golden_dtype_size(s->dtype_cand);
    bool exact_tokens = s->tier == GOLDEN_TIER_TOKENS && golden_dtype_is_integer(s->dtype_ref) &&
                        golden_dtype_is_integer(s->dtype_cand);
    ulp_format uf;
    bool has_ulp = setup_ulp(s, &uf);
    a->has_ulp = has_ulp;
    for (size_t off = 0; off < n; off += GOLDEN_CMP_BLOCK) {
        size_t m = n - off < GOLDEN_CMP_BLOCK ? n - off : GOLDEN_CMP_BLOCK;
        const unsigned char *rp = (const unsigned char *)ref + off * wr;
        const unsigned char *cp = (const unsigned char *)cand + off * wc;
        golden_convert_to_f64(s->dtype_ref, rp, m, rb);
        golden_convert_to_f64(s->dtype_cand, cp, m, cb);
        if (exact_tokens) {
            golden_convert_to_i64(s->dtype_ref, rp, m, ri);
            golden_convert_to_i64(s->dtype_cand, cp, m, ci);
        }
        add_block(s, a, has_ulp ? &uf : NULL, rb, cb, m, exact_tokens ? ri : NULL,
                  exact_tokens ? ci : NULL);
    }
}

static void neu_merge(double *sum, double *comp, double osum, double ocomp)
{
    neu_add(sum, comp, osum);
    *comp += ocomp;
}

void golden_cmp_merge(golden_cmp_acc *into, const golden_cmp_acc *b)
{
    if (b->max_abs > into->max_abs) {
        into->max_abs = b->max_abs;
        into->max_abs_index = b->max_abs_index;
    }
    if (b->max_rel > into->max_rel)
        into->max_rel = b->max_rel;
    into->n += b->n;
    into->pairs += b->pairs;
    into->finite_pairs += b->finite_pairs;
    neu_merge(&into->sum_abs, &into->sum_abs_c, b->sum_abs, b->sum_abs_c);
    neu_merge(&into->sum_sq, &into->sum_sq_c, b->sum_sq, b->sum_sq_c);
    neu_merge(&into->dot, &into->dot_c, b->dot, b->dot_c);
    neu_merge(&into->norm_r, &into->norm_r_c, b->norm_r, b->norm_r_c);
    neu_merge(&into->norm_c, &into->norm_c_c, b->norm_c, b->norm_c_c);
    into->mismatches += b->mismatches;
    into->has_ulp = into->has_ulp || b->has_ulp;
    if (b->max_ulp > into->max_ulp)
        into->max_ulp = b->max_ulp;
    into->nan_ref += b->nan_ref;
    into->nan_cand += b->nan_cand;
    into->inf_ref += b->inf_ref;
    into->inf_cand += b->inf_cand;
    into->new_nan += b->new_nan;
    if (into->first_new_nonfinite < 0)
        into->first_new_nonfinite = b->first_new_nonfinite; /* b covers later elements */
    into->new_inf += b->new_inf;
    into->rows += b->rows;
    into->top1_match += b->top1_match;
    into->top5_common += b->top5_common;
    into->near_tie_rows += b->near_tie_rows;
    into->near_tie_flips += b->near_tie_flips;
    into->flips += b->flips;
    for (int i = 0; i < b->n_examples && into->n_examples < GOLDEN_CMP_EXAMPLES; i++)
        into->examples[into->n_examples++] = b->examples[i];
    into->sequences += b->sequences;
    into->sequences_exact += b->sequences_exact;
    if (b->earliest_divergence >= 0 &&
        (into->earliest_divergence < 0 || b->earliest_divergence < into->earliest_divergence)) {
        into->earliest_divergence = b->earliest_divergence;
        into->earliest_divergence_row = b->earliest_divergence_row;
    }
    /* b starts on a row boundary, so a row in progress can only be b's. */
    into->row_pos = b->row_pos;
    into->cur_ref = b->cur_ref;
    into->cur_cand = b->cur_cand;
    into->cur_div = b->cur_div;
}

void golden_cmp_finish(const golden_cmp_setup *s, golden_cmp_acc *a, golden_cmp_metrics *m)
{
    if (a->row_pos > 0)
        close_row(s, a);
    memset(m, 0, sizeof *m);
    m->count = a->pairs;
    m->finite_pairs = a->finite_pairs;
    m->has_finite = a->finite_pairs > 0;
    double nf = (double)a->finite_pairs;
    m->max_abs = m->has_finite ? a->max_abs : NAN;
    m->max_abs_index = a->max_abs_index;
    m->mean_abs = m->has_finite ? (a->sum_abs + a->sum_abs_c) / nf : NAN;
    m->rmse = m->has_finite ? sqrt((a->sum_sq + a->sum_sq_c) / nf) : NAN;
    m->max_rel = m->has_finite ? a->max_rel : NAN;
    double nr = a->norm_r + a->norm_r_c, nc = a->norm_c + a->norm_c_c;
    if (nr == 0 && nc == 0)
        m->cosine = 1.0;
    else if (nr == 0 || nc == 0)
        m->cosine = 0.0;
    else
        m->cosine = (a->dot + a->dot_c) / (sqrt(nr) * sqrt(nc));
    m->mismatches = a->mismatches;
    ulp_format uf;
    m->has_ulp = setup_ulp(s, &uf);
    m->max_ulp = a->max_ulp;
    m->nan_ref = a->nan_ref;
    m->nan_cand = a->nan_cand;
    m->inf_ref = a->inf_ref;
    m->inf_cand = a->inf_cand;
    m->new_nan = a->new_nan;
    m->first_new_nonfinite = a->first_new_nonfinite;
    m->new_inf = a->new_inf;
    m->rows = a->rows;
    m->near_tie_rows = a->near_tie_rows;
    m->near_tie_flips = a->near_tie_flips;
    m->flips = a->flips;
    if (a->rows && s->tier == GOLDEN_TIER_LOGITS) {
        m->top1_match = (double)a->top1_match / (double)a->rows;
        m->top5_overlap = (double)a->top5_common / (60.0 * (double)a->rows);
    } else {
        m->top1_match = NAN;
        m->top5_overlap = NAN;
    }
    m->sequences = a->sequences;
    m->sequences_exact = a->sequences_exact;
    m->earliest_divergence = a->earliest_divergence;
    m->earliest_divergence_row = a->earliest_divergence_row;
}

void golden_cmp_unravel(uint64_t index, int rank, const uint64_t *shape, uint64_t *coords)
{
    for (int d = rank - 1; d >= 0; d--) {
        uint64_t n = shape[d] ? shape[d] : 1;
        coords[d] = index % n;
        index /= n;
    }
}
