/* The one-pass metrics engine: every calculet-diff-report/v1 metric of a tensor pair from a
 * single streamed pass, with accumulators that merge in chunk order so threads stay exact. */
#include "golden/compare.h"
#include "tensor/compare_internal.h"

#include <float.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const tier_names[GOLDEN_TIER_COUNT] = {"kernel", "layer", "logits", "tokens",
                                                                "router"};

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

int golden_cmp_setup_check(const golden_cmp_setup *s, golden_error *err)
{
    if (!s)
        return golden_fail_what(err, GOLDEN_EINVAL, NULL, "no comparison setup");
    if (s->version != GOLDEN_CMP_SETUP_VERSION)
        return golden_fail_what(err, GOLDEN_EINVAL, NULL,
                                "comparison setup of version %u (this libgolden knows %u)",
                                s->version, GOLDEN_CMP_SETUP_VERSION);
    if ((unsigned)s->tier >= GOLDEN_TIER_COUNT)
        return golden_fail_what(err, GOLDEN_EINVAL, NULL, "comparison setup of tier %d",
                                (int)s->tier);
    return 0;
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
    a->first_class_diff = -1;
    a->first_int_diff = -1;
    a->first_unshared = -1;
    a->min_row_cos = INFINITY;
    a->kl_max = -1.0;
    a->lsm_max = -1.0;
    a->sm_mr = a->sm_mc = -INFINITY;
    a->sm_dmin = INFINITY;
    a->sm_dmax = -INFINITY;
}

/* ---- scaled sums ---- */

/* Blocks whose values reach past 2^400 or stay below 2^-400 are summed scaled by a power of
 * two, so squares neither overflow (1e200^2) nor vanish (1e-200^2). */
#define SCALE_HI 0x1p400
#define SCALE_LO 0x1p-400

static int block_scale(double m)
{
    if (!(m > SCALE_HI) && !(m < SCALE_LO && m > 0))
        return 0;
    int k;
    frexp(m, &k);
    return k;
}

/* Add v (and its compensation vc) worth v * 2^e into a sum kept as (sum + comp) * 2^*exp:
 * an empty sum takes the new scale, a larger scale rescales the sum (its tiny part is
 * below the new one's rounding anyway). */
void lg_cmp_sadd(double *sum, double *comp, int *exp, double v, double vc, int e)
{
    if (v == 0 && vc == 0)
        return;
    if (*sum == 0 && *comp == 0) {
        *exp = e;
    } else if (e > *exp) {
        double f = ldexp(1.0, *exp - e);
        *sum *= f;
        *comp *= f;
        *exp = e;
    }
    double f = ldexp(1.0, e - *exp);
    neu_add(sum, comp, v * f);
    *comp += vc * f;
}

/* The four scaled sums of a block or of another accumulator. */
static void scaled_add(golden_cmp_acc *a, const double v[4], const double *comp, const int e[4])
{
    double *sum[4] = {&a->dot, &a->norm_r, &a->norm_c, &a->sum_sq};
    double *cmp[4] = {&a->dot_c, &a->norm_r_c, &a->norm_c_c, &a->sum_sq_c};
    for (int i = 0; i < 4; i++)
        lg_cmp_sadd(sum[i], cmp[i], &a->sexp[i], v[i], comp ? comp[i] : 0.0, e[i]);
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
        double tol_ = atol + rtol * ar_;                                                   \
        mism += ad_ > tol_;                                                                \
        double ut_ = ad_ / tol_;                                                           \
        ut_ = ut_ == ut_ ? ut_ : 0.0; /* 0 / 0: an exact pair at zero tolerance */         \
        mt[l] = ut_ > mt[l] ? ut_ : mt[l];                                                 \
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

/* Partial results of a finite block in four lanes: element i goes to lane i % 4 (the tail
 * past the last multiple of four to lane 0), and lanes are combined as (0 + 1) + (2 + 3).
 * The portable loop and the AVX2 loop follow exactly this order, so their results are the
 * same bits. */
typedef struct {
    double sa[4], sq[4], dt[4], nr[4], nc[4], mx[4], mr[4], pr[4], mt[4];
    uint64_t mism;
    int64_t mu;
} lanes;

static void lanes_init(lanes *L, int64_t mu)
{
    for (int l = 0; l < 4; l++) {
        L->sa[l] = L->sq[l] = L->dt[l] = L->nr[l] = L->nc[l] = L->pr[l] = L->mt[l] = 0;
        L->mx[l] = L->mr[l] = -1;
    }
    L->mism = 0;
    L->mu = mu;
}

/* Lane steps for elements [from, n): lane 0 for a tail, lanes 0-3 for whole quads. */
#define LANE_LOOP(route)                                                                   \
    do {                                                                                   \
        double *sa = L->sa, *sq = L->sq, *dt = L->dt, *nr = L->nr, *nc = L->nc;            \
        double *mx = L->mx, *mr = L->mr, *pr = L->pr, *mt = L->mt;                         \
        uint64_t mism = L->mism;                                                           \
        int64_t mu = L->mu;                                                                \
        size_t i = from;                                                                   \
        for (; quads && i + 4 <= n; i += 4) {                                              \
            FINITE_STEP(0, ref[i], cand[i], route);                                        \
            FINITE_STEP(1, ref[i + 1], cand[i + 1], route);                                \
            FINITE_STEP(2, ref[i + 2], cand[i + 2], route);                                \
            FINITE_STEP(3, ref[i + 3], cand[i + 3], route);                                \
        }                                                                                  \
        for (; i < n; i++)                                                                 \
            FINITE_STEP(0, ref[i], cand[i], route);                                        \
        L->mism = mism;                                                                    \
        L->mu = mu;                                                                        \
    } while (0)

static inline __attribute__((always_inline)) void
lanes_scalar(const golden_cmp_setup *s, lanes *L, const double *ref, const double *cand,
             size_t from, size_t n, bool quads, int route)
{
    const double atol = s->atol, rtol = s->rtol, eps = s->eps;
    LANE_LOOP(route);
}

#if GOLDEN_HAVE_AVX2
#include <immintrin.h>

/* The same lane steps, four lanes at once (no FMA: each product and sum rounds as in the
 * portable loop). Returns how many elements it did (whole quads). */
__attribute__((target("avx2"))) static size_t
lanes_avx2(const golden_cmp_setup *s, lanes *L, const double *ref, const double *cand, size_t n)
{
    const __m256d zero = _mm256_setzero_pd(), sign = _mm256_set1_pd(-0.0);
    const __m256d atol = _mm256_set1_pd(s->atol), rtol = _mm256_set1_pd(s->rtol),
                  eps = _mm256_set1_pd(s->eps);
    __m256d sa = _mm256_loadu_pd(L->sa), sq = _mm256_loadu_pd(L->sq), dt = _mm256_loadu_pd(L->dt),
            nr = _mm256_loadu_pd(L->nr), nc = _mm256_loadu_pd(L->nc), mx = _mm256_loadu_pd(L->mx),
            mr = _mm256_loadu_pd(L->mr), pr = _mm256_loadu_pd(L->pr), mt = _mm256_loadu_pd(L->mt);
    uint64_t mism = 0;
    size_t i = 0;
    for (; i + 4 <= n; i += 4) {
        __m256d r = _mm256_loadu_pd(ref + i), c = _mm256_loadu_pd(cand + i);
        __m256d d = _mm256_sub_pd(c, r), ad = _mm256_andnot_pd(sign, d),
                ar = _mm256_andnot_pd(sign, r);
        pr = _mm256_add_pd(pr, _mm256_add_pd(_mm256_mul_pd(r, zero), _mm256_mul_pd(c, zero)));
        sa = _mm256_add_pd(sa, ad);
        sq = _mm256_add_pd(sq, _mm256_mul_pd(d, d));
        dt = _mm256_add_pd(dt, _mm256_mul_pd(c, r));
        nr = _mm256_add_pd(nr, _mm256_mul_pd(r, r));
        nc = _mm256_add_pd(nc, _mm256_mul_pd(c, c));
        mx = _mm256_max_pd(ad, mx);       /* ad > mx ? ad : mx */
        __m256d den = _mm256_max_pd(ar, eps);
        mr = _mm256_max_pd(_mm256_div_pd(ad, den), mr);
        __m256d tol = _mm256_add_pd(atol, _mm256_mul_pd(rtol, ar));
        mism += (uint64_t)__builtin_popcount((unsigned)_mm256_movemask_pd(
            _mm256_cmp_pd(ad, tol, _CMP_GT_OQ)));
        __m256d ut = _mm256_div_pd(ad, tol);
        ut = _mm256_and_pd(ut, _mm256_cmp_pd(ut, ut, _CMP_ORD_Q)); /* 0 / 0 -> 0 */
        mt = _mm256_max_pd(ut, mt);
    }
    _mm256_storeu_pd(L->sa, sa);
    _mm256_storeu_pd(L->sq, sq);
    _mm256_storeu_pd(L->dt, dt);
    _mm256_storeu_pd(L->nr, nr);
    _mm256_storeu_pd(L->nc, nc);
    _mm256_storeu_pd(L->mx, mx);
    _mm256_storeu_pd(L->mr, mr);
    _mm256_storeu_pd(L->pr, pr);
    _mm256_storeu_pd(L->mt, mt);
    L->mism += mism;
    return i;
}

/* Largest ULP distance of a finite block through f32 bits (route 2) or their bf16
 * rounding (route 3), four pairs at a time; a maximum, so any order gives the same. */
__attribute__((target("avx2"))) static uint64_t
ulp32_avx2(const double *ref, const double *cand, size_t n, bool to_bf16, uint64_t mu)
{
    const __m128i absm = _mm_set1_epi32(0x7FFFFFFF), half = _mm_set1_epi32(0x7FFF),
                  one = _mm_set1_epi32(1);
    __m256i best = _mm256_set1_epi64x((long long)mu);
    size_t i = 0;
    for (; i + 4 <= n; i += 4) {
        __m128i br = _mm_castps_si128(_mm256_cvtpd_ps(_mm256_loadu_pd(ref + i)));
        __m128i bc = _mm_castps_si128(_mm256_cvtpd_ps(_mm256_loadu_pd(cand + i)));
        __m128i mr = _mm_and_si128(br, absm), mc = _mm_and_si128(bc, absm);
        if (to_bf16) {
            mr = _mm_srli_epi32(_mm_add_epi32(_mm_add_epi32(mr, half),
                                              _mm_and_si128(_mm_srli_epi32(mr, 16), one)), 16);
            mc = _mm_srli_epi32(_mm_add_epi32(_mm_add_epi32(mc, half),
                                              _mm_and_si128(_mm_srli_epi32(mc, 16), one)), 16);
        }
        __m128i sr = _mm_srai_epi32(br, 31), scg = _mm_srai_epi32(bc, 31);
        __m256i orr = _mm256_cvtepi32_epi64(_mm_sub_epi32(_mm_xor_si128(mr, sr), sr));
        __m256i orc = _mm256_cvtepi32_epi64(_mm_sub_epi32(_mm_xor_si128(mc, scg), scg));
        __m256i d = _mm256_sub_epi64(orr, orc);
        __m256i nd = _mm256_sub_epi64(_mm256_setzero_si256(), d);
        d = _mm256_blendv_epi8(d, nd, _mm256_cmpgt_epi64(nd, d));
        best = _mm256_blendv_epi8(best, d, _mm256_cmpgt_epi64(d, best));
    }
    int64_t b4[4];
    _mm256_storeu_si256((__m256i *)b4, best);
    uint64_t m = mu;
    for (int l = 0; l < 4; l++)
        if ((uint64_t)b4[l] > m)
            m = (uint64_t)b4[l];
    ulp_format f = {to_bf16 ? 3 : 2, false, 0, 0, 0};
    return block_max_ulp(&f, ref + i, cand + i, n - i, m);
}

bool lg_cmp_have_avx2(void)
{
    return __builtin_cpu_supports("avx2");
}
#endif

static inline double lane_sum(const double v[4])
{
    return (v[0] + v[1]) + (v[2] + v[3]);
}

static inline double lane_max(const double v[4])
{
    double a = v[0] > v[1] ? v[0] : v[1], b = v[2] > v[3] ? v[2] : v[3];
    return a > b ? a : b;
}

/* The path of blocks without NaN/Inf: no per-element class tests, four lanes per sum, the
 * index of a new maximum found by a second look only when the block raises it. Computes
 * into locals and returns false (leaving a untouched) when a value turns out not finite. */
static bool finite_block(const golden_cmp_setup *s, golden_cmp_acc *a, const ulp_format *uf,
                         const double *ref, const double *cand, size_t n)
{
    lanes L0, *L = &L0;
    lanes_init(L, (int64_t)a->max_ulp);
    int route = uf && (uf->fast == 2 || uf->fast == 3) ? uf->fast : 0;
    bool ulp_apart = uf != NULL; /* ULPs in their own loop (max: any order gives the same) */
#if GOLDEN_HAVE_AVX2
    if (!s->scalar_only && lg_cmp_have_avx2()) {
        size_t done = lanes_avx2(s, L, ref, cand, n);
        lanes_scalar(s, L, ref, cand, done, n, false, 0);
    } else
#endif
    {
        ulp_apart = uf && route == 0;
        if (route == 2)
            lanes_scalar(s, L, ref, cand, 0, n, true, 2);
        else if (route == 3)
            lanes_scalar(s, L, ref, cand, 0, n, true, 3);
        else
            lanes_scalar(s, L, ref, cand, 0, n, true, 0);
    }
    if (lane_sum(L->pr) != 0)
        return false;
    /* sums that overflow, or squares that may have underflowed, go the scaled way */
    double bd = lane_sum(L->dt), bnr = lane_sum(L->nr), bnc = lane_sum(L->nc), bsq = lane_sum(L->sq);
    if (!isfinite(bd + bnr + bnc + bsq) || bnr + bnc < 0x1p-900)
        return false;
    double bmax = lane_max(L->mx);
    if (bmax > a->max_abs) {
        for (size_t k = 0; k < n; k++)
            if (fabs(cand[k] - ref[k]) == bmax) {
                a->max_abs = bmax;
                a->max_abs_index = a->first + a->n + k;
                break;
            }
    }
    double brel = lane_max(L->mr);
    if (brel > a->max_rel)
        a->max_rel = brel;
    uint64_t mu = (uint64_t)L->mu;
#if GOLDEN_HAVE_AVX2
    if (ulp_apart && route && !s->scalar_only && lg_cmp_have_avx2())
        mu = ulp32_avx2(ref, cand, n, route == 3, mu);
    else
#endif
    if (ulp_apart)
        mu = block_max_ulp(uf, ref, cand, n, mu);
    a->max_ulp = mu;
    a->pairs += n;
    a->finite_pairs += n;
    a->mismatches += L->mism;
    neu_add(&a->sum_abs, &a->sum_abs_c, lane_sum(L->sa));
    double v[4] = {bd, bnr, bnc, bsq};
    static const int zero[4] = {0, 0, 0, 0};
    scaled_add(a, v, NULL, zero);
    double bt = lane_max(L->mt);
    if (bt > a->max_tol) {
        a->max_tol = bt;
        a->max_tol_index = a->first + a->n;
        for (size_t k = 0; k < n; k++) /* the same formula as the lanes, no FMA */
            if (fabs(cand[k] - ref[k]) / (s->atol + s->rtol * fabs(ref[k])) >= bt) {
                a->max_tol_index = a->first + a->n + k;
                break;
            }
    }
    return true;
}

static bool add_finite_block(const golden_cmp_setup *s, golden_cmp_acc *a, const ulp_format *uf,
                             const double *ref, const double *cand, size_t n)
{
    if (!finite_block(s, a, uf, ref, cand, n))
        return false;
    if (s->histogram)
        lg_cmp_hist_finite(s, a->hist, ref, cand, n);
    return true;
}

/* Non-finite class: 0 finite, 1 NaN, 2 +Inf, 3 -Inf. */
static inline int nf_class(double x)
{
    return isfinite(x) ? 0 : isnan(x) ? 1 : x > 0 ? 2 : 3;
}

/* Scales of a block (for block_scale): the largest finite |r|, |c| and |c - r| over the
 * pairs that are both finite (the difference halved first, so it cannot overflow). */

static block_scales block_mags(const double *ref, const double *cand, size_t n)
{
    double mr = 0, mc = 0, md = 0;
    for (size_t i = 0; i < n; i++) {
        double r = ref[i], c = cand[i];
        if (!(fabs(r) <= DBL_MAX) || !(fabs(c) <= DBL_MAX))
            continue;
        double d = fabs(c * 0.5 - r * 0.5);
        mr = fabs(r) > mr ? fabs(r) : mr;
        mc = fabs(c) > mc ? fabs(c) : mc;
        md = d > md ? d : md;
    }
    block_scales k = {block_scale(mr), block_scale(mc), block_scale(2 * md)};
    return k;
}

/* A block with NaN/Inf somewhere, or with magnitudes that need scaling: every pair is
 * classified. Returns the block's scale exponent k (values were summed times 2^-k). */
static block_scales add_any_block(const golden_cmp_setup *s, golden_cmp_acc *a,
                                  const ulp_format *uf, const double *ref, const double *cand,
                                  size_t n)
{
    double bs_abs = 0, bs_sq = 0, bdot = 0, bnr = 0, bnc = 0;
    double max_abs = a->max_abs, max_rel = a->max_rel, max_tol = a->max_tol;
    uint64_t max_idx = a->max_abs_index, fin = 0, mism = 0, max_ulp = a->max_ulp;
    uint64_t tol_idx = a->max_tol_index;
    const double atol = s->atol, rtol = s->rtol, eps = s->eps;
    const uint64_t base = a->first + a->n;
    block_scales k = block_mags(ref, cand, n);
    const double sr = ldexp(1.0, -k.r), sc = ldexp(1.0, -k.c), sd = ldexp(1.0, -k.d);

    for (size_t i = 0; i < n; i++) {
        double r = ref[i], c = cand[i];
        bool fr = isfinite(r), fc = isfinite(c);
        if (fr && fc) {
            double d = c - r, ad = fabs(d), ar = fabs(r);
            double rs = r * sr, cs = c * sc, ds = c * sd - r * sd;
            fin++;
            bs_abs += ad;
            bs_sq += ds * ds;
            bdot += cs * rs;
            bnr += rs * rs;
            bnc += cs * cs;
            if (ad > max_abs) {
                max_abs = ad;
                max_idx = base + i;
            }
            double rel = ad / (ar > eps ? ar : eps);
            if (rel > max_rel)
                max_rel = rel;
            double tol = atol + rtol * ar, ut = ad / tol;
            if (ut == ut && ut > max_tol) {
                max_tol = ut;
                tol_idx = base + i;
            }
            if (ad > tol)
                mism++;
            if (uf) {
                uint64_t u = ulp_distance(ulp_of(uf, r), ulp_of(uf, c));
                if (u > max_ulp)
                    max_ulp = u;
            }
            if (s->histogram)
                a->hist[golden_cmp_hist_bin(ad)]++;
        } else {
            if (s->histogram)
                a->hist[GOLDEN_CMP_HIST_NONFINITE]++;
            if (!fr) {
                if (isnan(r))
                    a->nan_ref++;
                else
                    a->inf_ref++;
                if (nf_class(r) != nf_class(c)) {
                    a->class_diff++;
                    if (a->first_class_diff < 0)
                        a->first_class_diff = (int64_t)(base + i);
                }
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
            if (nf_class(r) != nf_class(c))
                mism++;
        }
    }
    a->pairs += n;
    a->finite_pairs += fin;
    a->mismatches += mism;
    a->max_abs = max_abs;
    a->max_abs_index = max_idx;
    a->max_rel = max_rel;
    a->max_tol = max_tol;
    a->max_tol_index = tol_idx;
    a->max_ulp = max_ulp;
    neu_add(&a->sum_abs, &a->sum_abs_c, bs_abs);
    double v[4] = {bdot, bnr, bnc, bs_sq};
    int e[4] = {k.r + k.c, 2 * k.r, 2 * k.c, 2 * k.d};
    scaled_add(a, v, NULL, e);
    return k;
}

/* Integers as (bits, negative): a signed value keeps its two's-complement bits and a flag,
 * an unsigned one its bits, so equal keys mean equal integers across any two types. */
typedef struct {
    uint64_t bits[GOLDEN_CMP_BLOCK];
    uint8_t neg[GOLDEN_CMP_BLOCK];
} int_keys;

/* The work of one block: elementwise metrics and, for logits/tokens, the row machine.
 * ri/ci (exact integers) decide token equality when given. */
static void add_block(const golden_cmp_setup *s, golden_cmp_acc *a, const ulp_format *uf,
                      const double *ref, const double *cand, size_t n, const int_keys *ri,
                      const int_keys *ci)
{
    /* x * 0 is NaN exactly when x is not finite: the fast path finds out by itself */
    block_scales k = {0, 0, 0};
    if (!add_finite_block(s, a, uf, ref, cand, n))
        k = add_any_block(s, a, uf, ref, cand, n);
    if (s->tier == GOLDEN_TIER_LAYER && s->row_len) {
        lg_cmp_layer_rows(s, a, ref, cand, n, &k);
        a->n += n;
        return;
    }

    if ((s->tier == GOLDEN_TIER_LOGITS || s->tier == GOLDEN_TIER_TOKENS) && s->row_len) {
        uint64_t pos = a->row_pos;
        for (size_t i = 0; i < n; i++) {
            if (s->tier == GOLDEN_TIER_LOGITS) {
                lg_cmp_topk_push(&a->cur_ref, ref[i], cand[i], (int64_t)pos);
                lg_cmp_topk_push(&a->cur_cand, cand[i], ref[i], (int64_t)pos);
                lg_cmp_softmax_step(a, ref[i], cand[i]);
            } else if (a->cur_div < 0) {
                bool eq = ri ? ri->bits[i] == ci->bits[i] && ri->neg[i] == ci->neg[i]
                             : ref[i] == cand[i];
                if (!eq)
                    a->cur_div = (int64_t)pos;
            }
            if (++pos == s->row_len) {
                a->row_pos = pos;
                lg_cmp_close_row(s, a);
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

static void load_keys(golden_dtype t, const unsigned char *p, size_t n, int_keys *k)
{
    switch (t) {
#define KEYS(ctype, sgn)                                                                      \
    for (size_t i = 0; i < n; i++) {                                                          \
        ctype v;                                                                              \
        memcpy(&v, p + i * sizeof v, sizeof v);                                               \
        k->bits[i] = (uint64_t)(sgn ? (uint64_t)(int64_t)v : (uint64_t)v);                   \
        k->neg[i] = (uint8_t)(sgn ? k->bits[i] >> 63 : 0);                                    \
    }                                                                                         \
    break;
    case GOLDEN_I8: KEYS(int8_t, 1)
    case GOLDEN_U8:
    case GOLDEN_BOOL: KEYS(uint8_t, 0)
    case GOLDEN_I16: KEYS(int16_t, 1)
    case GOLDEN_U16: KEYS(uint16_t, 0)
    case GOLDEN_I32: KEYS(int32_t, 1)
    case GOLDEN_U32: KEYS(uint32_t, 0)
    case GOLDEN_I64: KEYS(int64_t, 1)
    case GOLDEN_U64: KEYS(uint64_t, 0)
#undef KEYS
    default:
        memset(k->bits, 0, n * sizeof k->bits[0]);
        memset(k->neg, 0, n);
    }
}

/* |x - r| of two integer keys, exactly (saturated at 2^64 - 1), and |r|. */
static uint64_t int_absdiff(uint64_t rb, bool rn, uint64_t xb, bool xn)
{
    if (rn == xn) /* same sign: the two's-complement difference fits */
        return rb >= xb ? rb - xb : xb - rb;
    uint64_t mr = rn ? (uint64_t)0 - rb : rb, mx = xn ? (uint64_t)0 - xb : xb;
    return mr > UINT64_MAX - mx ? UINT64_MAX : mr + mx;
}

/* Whether element i differs: exactly, unless the kernel tier declares an integer tolerance
 * (atol or rtol > 0: a dtypes entry, a rule or --atol/--rtol), then by more than
 * atol + rtol |r|, with |x - r| exact. */
static inline bool int_wrong(const golden_cmp_setup *s, const int_keys *rk, const int_keys *xk,
                             size_t i)
{
    if (rk->bits[i] == xk->bits[i] && rk->neg[i] == xk->neg[i])
        return false;
    if (s->tier != GOLDEN_TIER_KERNEL || !(s->atol > 0 || s->rtol > 0))
        return true;
    uint64_t d = int_absdiff(rk->bits[i], rk->neg[i], xk->bits[i], xk->neg[i]);
    double mag = rk->neg[i] ? (double)((uint64_t)0 - rk->bits[i]) : (double)rk->bits[i];
    return (double)d > s->atol + s->rtol * mag;
}

static void int_compare(const golden_cmp_setup *s, golden_cmp_acc *a, const int_keys *rk,
                        const int_keys *ck, size_t n)
{
    uint64_t diff = 0;
    for (size_t i = 0; i < n; i++) {
        diff += int_wrong(s, rk, ck, i);
        if (rk->bits[i] == ck->bits[i] && rk->neg[i] == ck->neg[i])
            continue;
        /* exact: beyond 2^53 the f64 values may be equal while the integers differ */
        uint64_t d = int_absdiff(rk->bits[i], rk->neg[i], ck->bits[i], ck->neg[i]);
        if (d > a->int_max_abs) {
            a->int_max_abs = d;
            a->int_max_abs_index = a->first + a->n + i;
        }
    }
    if (diff && a->first_int_diff < 0)
        for (size_t i = 0; i < n; i++)
            if (int_wrong(s, rk, ck, i)) {
                a->first_int_diff = (int64_t)(a->first + a->n + i);
                a->first_int_ref = rk->bits[i];
                a->first_int_ref_neg = rk->neg[i];
                a->first_int_cand = ck->bits[i];
                a->first_int_cand_neg = ck->neg[i];
                break;
            }
    a->int_diff += diff;
}

/* Scratch of one add call: converted values and integer keys of up to three sides. */
typedef struct {
    double v[3][GOLDEN_CMP_BLOCK];
    int_keys k[3];
} raw_scratch;

/* ~200 KiB per thread: too big for a worker's stack frame, and no allocation to fail */
static _Thread_local raw_scratch scratch;

static void convert_side(golden_dtype t, const void *src, size_t off, size_t m, bool ints,
                         double *v, int_keys *k)
{
    const unsigned char *p = (const unsigned char *)src + off * golden_dtype_size(t);
    golden_convert_to_f64(t, p, m, v);
    if (ints)
        load_keys(t, p, m, k);
}

static void add_converted(const golden_cmp_setup *s, golden_cmp_acc *a, const ulp_format *uf,
                          const double *r, const double *c, size_t m, bool ints,
                          const int_keys *rk, const int_keys *ck)
{
    a->ints = ints;
    if (ints)
        int_compare(s, a, rk, ck, m);
    add_block(s, a, uf, r, c, m, ints ? rk : NULL, ints ? ck : NULL);
}

static bool both_int(golden_dtype a, golden_dtype b)
{
    return golden_dtype_is_integer(a) && golden_dtype_is_integer(b);
}

void golden_cmp_add_raw(const golden_cmp_setup *s, golden_cmp_acc *a, const void *ref,
                        const void *cand, size_t n)
{
    raw_scratch *w = &scratch;
    bool ints = both_int(s->dtype_ref, s->dtype_cand);
    ulp_format uf;
    bool has_ulp = setup_ulp(s, &uf);
    a->has_ulp = has_ulp;
    for (size_t off = 0; off < n; off += GOLDEN_CMP_BLOCK) {
        size_t m = n - off < GOLDEN_CMP_BLOCK ? n - off : GOLDEN_CMP_BLOCK;
        convert_side(s->dtype_ref, ref, off, m, ints, w->v[0], &w->k[0]);
        convert_side(s->dtype_cand, cand, off, m, ints, w->v[1], &w->k[1]);
        add_converted(s, a, has_ulp ? &uf : NULL, w->v[0], w->v[1], m, ints, &w->k[0], &w->k[1]);
    }
}

/* Is element i of side (v, k) wrong against the reference, and by how much. */
static inline bool side_wrong(const golden_cmp_setup *s, double r, double x, bool ints,
                              const int_keys *rk, const int_keys *xk, size_t i, double *err)
{
    if (ints) { /* exactly: the difference of two doubles near 2^62 is 0 */
        *err = (double)int_absdiff(rk->bits[i], rk->neg[i], xk->bits[i], xk->neg[i]);
        return int_wrong(s, rk, xk, i);
    }
    *err = fabs(x - r);
    if (nf_class(r) != nf_class(x))
        return true;
    if (!isfinite(r))
        return false;
    return *err > s->atol + s->rtol * fabs(r);
}

static void count_unshared(const golden_cmp_setup *s, const golden_cmp_setup *bs,
                           golden_cmp_acc *a, double ratio, const raw_scratch *w, size_t m,
                           bool ints, bool bints)
{
    uint64_t base = a->first + a->n;
    for (size_t i = 0; i < m; i++) {
        double r = w->v[0][i], c = w->v[1][i], b = w->v[2][i], ec, eb;
        if (!side_wrong(s, r, c, ints, &w->k[0], &w->k[1], i, &ec))
            continue;
        bool shared = side_wrong(bs, r, b, bints, &w->k[0], &w->k[2], i, &eb);
        /* like for like, and never through a non-finite value: a NaN or Inf of the
         * candidate is its own bug even where production has it too, and a baseline error
         * that is not finite (Inf - r, or an overflowed difference) excuses nothing */
        if (shared)
            shared = nf_class(c) == 0 && nf_class(b) == 0 && isfinite(eb) && ec <= ratio * eb;
        if (!shared) {
            a->unshared++;
            a->unshared_nf += ints || nf_class(r) != nf_class(c);
            if (a->first_unshared < 0)
                a->first_unshared = (int64_t)(base + i);
        }
    }
}

void golden_cmp_add_raw3(const golden_cmp_setup *s, const golden_cmp_setup *bs,
                         golden_cmp_acc *a, golden_cmp_acc *ba, double ratio, const void *ref,
                         const void *cand, const void *base, size_t n)
{
    raw_scratch *w = &scratch;
    bool ints = both_int(s->dtype_ref, s->dtype_cand);
    bool bints = both_int(bs->dtype_ref, bs->dtype_cand);
    ulp_format uf, buf;
    bool has_ulp = setup_ulp(s, &uf), bhas = setup_ulp(bs, &buf);
    a->has_ulp = has_ulp;
    ba->has_ulp = bhas;
    for (size_t off = 0; off < n; off += GOLDEN_CMP_BLOCK) {
        size_t m = n - off < GOLDEN_CMP_BLOCK ? n - off : GOLDEN_CMP_BLOCK;
        convert_side(s->dtype_ref, ref, off, m, ints || bints, w->v[0], &w->k[0]);
        convert_side(s->dtype_cand, cand, off, m, ints, w->v[1], &w->k[1]);
        convert_side(bs->dtype_cand, base, off, m, bints, w->v[2], &w->k[2]);
        count_unshared(s, bs, a, ratio, w, m, ints, bints);
        add_converted(s, a, has_ulp ? &uf : NULL, w->v[0], w->v[1], m, ints, &w->k[0], &w->k[1]);
        add_converted(bs, ba, bhas ? &buf : NULL, w->v[0], w->v[2], m, bints, &w->k[0], &w->k[2]);
    }
}

double golden_cmp_step(golden_dtype t, double x)
{
    int mant = mant_bits(t);
    ulp_format f = ulp_format_of(t);
    if (mant < 0 || !isfinite(x))
        return 0.0;
    int e;
    double ax = fabs(x);
    if (ax == 0)
        return ldexp(1.0, f.emin - mant);
    frexp(ax, &e); /* ax in [2^(e-1), 2^e) */
    e -= 1;
    if (e < f.emin)
        e = f.emin;
    return ldexp(1.0, e - mant);
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
    double v[4] = {b->dot, b->norm_r, b->norm_c, b->sum_sq};
    double c[4] = {b->dot_c, b->norm_r_c, b->norm_c_c, b->sum_sq_c};
    scaled_add(into, v, c, b->sexp);
    if (b->max_tol > into->max_tol) {
        into->max_tol = b->max_tol;
        into->max_tol_index = b->max_tol_index;
    }
    into->class_diff += b->class_diff;
    if (into->first_class_diff < 0)
        into->first_class_diff = b->first_class_diff;
    into->ints = into->ints || b->ints;
    if (into->first_int_diff < 0 && b->first_int_diff >= 0) {
        into->first_int_diff = b->first_int_diff;
        into->first_int_ref = b->first_int_ref;
        into->first_int_ref_neg = b->first_int_ref_neg;
        into->first_int_cand = b->first_int_cand;
        into->first_int_cand_neg = b->first_int_cand_neg;
    }
    into->int_diff += b->int_diff;
    if (b->int_max_abs > into->int_max_abs ||
        (b->int_max_abs && b->int_max_abs == into->int_max_abs &&
         b->int_max_abs_index < into->int_max_abs_index)) {
        into->int_max_abs = b->int_max_abs;
        into->int_max_abs_index = b->int_max_abs_index;
    }
    into->unshared += b->unshared;
    into->unshared_nf += b->unshared_nf;
    if (into->first_unshared < 0)
        into->first_unshared = b->first_unshared;
    into->row_cos_rows += b->row_cos_rows;
    if (b->min_row_cos < into->min_row_cos) {
        into->min_row_cos = b->min_row_cos;
        into->min_row_cos_row = b->min_row_cos_row;
    }
    if (b->kl_max > into->kl_max) {
        into->kl_max = b->kl_max;
        into->kl_max_row = b->kl_max_row;
    }
    into->kl_sum += b->kl_sum;
    if (b->lsm_max > into->lsm_max)
        into->lsm_max = b->lsm_max;
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
    for (int i = 0; i < GOLDEN_CMP_HIST_BINS; i++)
        into->hist[i] += b->hist[i];
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
    into->cr_d = b->cr_d;
    into->cr_r = b->cr_r;
    into->cr_c = b->cr_c;
    memcpy(into->cr_e, b->cr_e, sizeof into->cr_e);
    into->cr_maxc = b->cr_maxc;
    into->sm_mr = b->sm_mr;
    into->sm_sr = b->sm_sr;
    into->sm_t = b->sm_t;
    into->sm_mc = b->sm_mc;
    into->sm_sc = b->sm_sc;
    into->sm_dmin = b->sm_dmin;
    into->sm_dmax = b->sm_dmax;
    into->sm_inf = b->sm_inf;
}

static void int_str(char *buf, size_t n, uint64_t bits, bool neg)
{
    if (neg)
        snprintf(buf, n, "%" PRId64, (int64_t)bits);
    else
        snprintf(buf, n, "%" PRIu64, bits);
}

void golden_cmp_finish(const golden_cmp_setup *s, golden_cmp_acc *a, golden_cmp_metrics *m)
{
    if (a->row_pos > 0) {
        if (s->tier == GOLDEN_TIER_LAYER && s->row_len)
            lg_cmp_close_layer_row(s, a);
        else
            lg_cmp_close_row(s, a);
    }
    memset(m, 0, sizeof *m);
    m->count = a->pairs;
    m->finite_pairs = a->finite_pairs;
    m->has_finite = a->finite_pairs > 0;
    double nf = (double)a->finite_pairs;
    m->max_abs = m->has_finite ? a->max_abs : NAN;
    m->max_abs_index = a->max_abs_index;
    m->max_tol_index = a->max_tol_index;
    m->mean_abs = m->has_finite ? (a->sum_abs + a->sum_abs_c) / nf : NAN;
    /* the scaled sums: value * 2^sexp[i]; the squares' exponents are even */
    const int *e = a->sexp;
    double sq = a->sum_sq + a->sum_sq_c;
    m->rmse = m->has_finite ? ldexp(sqrt(sq / nf), e[3] / 2) : NAN;
    m->max_rel = m->has_finite ? a->max_rel : NAN;
    m->max_tol = m->has_finite ? a->max_tol : 0.0;
    double nr = a->norm_r + a->norm_r_c, nc = a->norm_c + a->norm_c_c;
    if (nr == 0 && nc == 0)
        m->cosine = 1.0;
    else if (nr == 0 || nc == 0)
        m->cosine = 0.0;
    else
        m->cosine = ldexp((a->dot + a->dot_c) / (sqrt(nr) * sqrt(nc)), e[0] - e[1] / 2 - e[2] / 2);
    m->zero_ref = nr == 0;
    m->rel_err = nr > 0 ? ldexp(sqrt(sq) / sqrt(nr), (e[3] - e[1]) / 2) : NAN;
    m->norm_ratio = nr > 0 ? ldexp(sqrt(nc) / sqrt(nr), (e[2] - e[1]) / 2) : NAN;
    m->ref_finite = a->pairs - a->nan_ref - a->inf_ref;
    m->class_diff = a->class_diff;
    m->first_class_diff = a->first_class_diff;
    m->ints = a->ints;
    m->int_diff = a->int_diff;
    m->first_int_diff = a->first_int_diff;
    if (a->ints && a->int_max_abs > 0) { /* the exact integer difference, never a rounded 0 */
        m->max_abs = (double)a->int_max_abs;
        m->max_abs_index = a->int_max_abs_index;
    }
    if (a->first_int_diff >= 0) {
        int_str(m->first_int_ref, sizeof m->first_int_ref, a->first_int_ref, a->first_int_ref_neg);
        int_str(m->first_int_cand, sizeof m->first_int_cand, a->first_int_cand,
                a->first_int_cand_neg);
    }
    m->unshared = a->unshared;
    m->unshared_nf = a->unshared_nf;
    m->first_unshared = a->first_unshared;
    m->row_cos_rows = a->row_cos_rows;
    m->min_row_cosine = a->row_cos_rows ? a->min_row_cos : NAN;
    m->min_row_cosine_row = a->min_row_cos_row;
    m->mismatches = a->ints ? a->int_diff : a->mismatches;
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
        m->kl_max = a->kl_max;
        m->kl_max_row = a->kl_max_row;
        m->kl_mean = a->kl_sum / (double)a->rows;
        m->logsoftmax_max_abs = a->lsm_max;
    } else {
        m->top1_match = NAN;
        m->top5_overlap = NAN;
        m->kl_max = m->kl_mean = m->logsoftmax_max_abs = NAN;
    }
    m->sequences = a->sequences;
    m->sequences_exact = a->sequences_exact;
    m->earliest_divergence = a->earliest_divergence;
    m->earliest_divergence_row = a->earliest_divergence_row;
    m->has_hist = s->histogram;
    if (s->histogram)
        memcpy(m->hist, a->hist, sizeof m->hist);
}

void golden_cmp_unravel(uint64_t index, int rank, const uint64_t *shape, uint64_t *coords)
{
    for (int d = rank - 1; d >= 0; d--) {
        uint64_t n = shape[d] ? shape[d] : 1;
        coords[d] = index % n;
        index /= n;
    }
}
