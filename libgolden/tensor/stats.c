/* Statistics of a tensor accumulated in one pass: each block of values is reduced two-pass
 * while it is in cache, and blocks merge left to right (Chan et al.), scaled when huge. */
#include "golden/stats.h"
#include "util/cpu.h"

#include <math.h>
#if defined(__x86_64__)
#include <immintrin.h>
#endif
#include <stdbool.h>
#include <string.h>

/* Blocks whose largest magnitude reaches 2^450 are reduced in values scaled by a power of two
 * (exact), so sums of 4096 values and squares of differences (< 2^902, times n < 2^64) stay
 * finite: finite data always gives finite statistics. */
#define SCALE_AT 0x1p450
#define SCALE_BITS 450

void golden_stats_init(golden_stats *s)
{
    *s = (golden_stats){0};
    s->min = INFINITY;
    s->max = -INFINITY;
}

/* Merge a block's (finite count nb, mean, m2 divided by 4^eb) into the running values. With no
 * scale anywhere (eb = s->m2_exp = 0) this is the plain Chan et al. update. */
static void merge_moments(golden_stats *s, uint64_t nb, double mean_b, double m2_b, int eb)
{
    if (nb == 0)
        return;
    if (s->finite == 0) {
        s->finite = nb;
        s->mean = mean_b;
        s->m2 = m2_b;
        s->m2_exp = eb;
        return;
    }
    int e = s->m2_exp > eb ? s->m2_exp : eb;
    double na = (double)s->finite, n = na + (double)nb;
    double m2a = ldexp(s->m2, 2 * (s->m2_exp - e)), m2bs = ldexp(m2_b, 2 * (eb - e));
    if (e == 0) {
        double delta = mean_b - s->mean;
        s->mean += delta * ((double)nb / n);
        s->m2 = m2a + (m2bs + delta * delta * (na * (double)nb / n));
    } else {
        double ma = ldexp(s->mean, -e), delta = ldexp(mean_b, -e) - ma;
        s->mean = ldexp(ma + delta * ((double)nb / n), e);
        s->m2 = m2a + (m2bs + delta * delta * (na * (double)nb / n));
    }
    s->m2_exp = e;
    s->finite += nb;
}

/* Four lanes, element i always in lane i % 4, so every build and every SIMD path adds the same
 * values in the same order. The portable loops hold them as two 128-bit halves (lanes 0-1 and
 * 2-3: one SSE2 or NEON register each); as one 256-bit vector, GCC split the comparisons of a
 * target without AVX into scalar branches (10 ns an element instead of about 1.5). */
typedef double lanes2 __attribute__((vector_size(16)));
typedef long long mask2 __attribute__((vector_size(16)));

/* a where m, else b (m from a comparison: all ones or all zeros per lane) */
#define PICK(m, a, b) ((lanes2)(((mask2)(a) & (m)) | ((mask2)(b) & ~(m))))

/* The element types the fused path reads straight from canonical bytes; their widening to
 * f64 is exact, so reading them here equals golden_convert_to_f64 first. */
enum raw { RAW_F64, RAW_F32, RAW_BF16 };

static inline __attribute__((always_inline)) double load1(enum raw k, const unsigned char *p, size_t i)
{
    if (k == RAW_F64) {
        double d;
        memcpy(&d, p + 8 * i, sizeof d);
        return d;
    }
    float f;
    if (k == RAW_F32) {
        memcpy(&f, p + 4 * i, sizeof f);
    } else {
        uint16_t h;
        memcpy(&h, p + 2 * i, sizeof h);
        uint32_t w = (uint32_t)h << 16;
        memcpy(&f, &w, sizeof f);
    }
    return f;
}

/* What the vector loops of a block leave: per lane, element i in lane i % 4. */
typedef struct {
    double sum[4], lo[4], hi[4], bad, zeros;
} pass1_out;
typedef struct {
    double m2[4], corr[4];
} pass2_out;

/* The two vector loops over the first n - n % 4 elements (the caller adds the rest to lane 0),
 * in the portable form: GCC and Clang vector extensions, two SSE2/NEON registers. */
static inline __attribute__((always_inline)) void pass1_vec(enum raw k, const unsigned char *x,
                                                            size_t n, pass1_out *o)
{
    const lanes2 zero = {0, 0}, one = {1, 1}, inf = {INFINITY, INFINITY};
    lanes2 sum[2] = {zero, zero}, bad[2] = {zero, zero}, zer[2] = {zero, zero};
    lanes2 lo[2] = {inf, inf}, hi[2] = {-inf, -inf};
    for (size_t i = 0; i + 4 <= n; i += 4)
        for (int h = 0; h < 2; h++) {
            lanes2 v = {load1(k, x, i + 2 * h), load1(k, x, i + 2 * h + 1)};
            bad[h] += v - v; /* NaN for NaN or Inf, 0 otherwise */
            sum[h] += v;
            lo[h] = PICK(v < lo[h], v, lo[h]);
            hi[h] = PICK(v > hi[h], v, hi[h]);
            zer[h] += PICK(v == zero, one, zero);
        }
    for (int l = 0; l < 4; l++) {
        o->sum[l] = sum[l / 2][l % 2];
        o->lo[l] = lo[l / 2][l % 2];
        o->hi[l] = hi[l / 2][l % 2];
    }
    o->bad = (bad[0][0] + bad[0][1]) + (bad[1][0] + bad[1][1]);
    o->zeros = (zer[0][0] + zer[0][1]) + (zer[1][0] + zer[1][1]);
}

static inline __attribute__((always_inline)) void pass2_vec(enum raw k, const unsigned char *x,
                                                            size_t n, double mean, pass2_out *o)
{
    const lanes2 zero = {0, 0}, mv = {mean, mean};
    lanes2 m2[2] = {zero, zero}, corr[2] = {zero, zero};
    for (size_t i = 0; i + 4 <= n; i += 4)
        for (int h = 0; h < 2; h++) {
            lanes2 d = {load1(k, x, i + 2 * h), load1(k, x, i + 2 * h + 1)};
            d -= mv;
            m2[h] += d * d;
            corr[h] += d;
        }
    for (int l = 0; l < 4; l++) {
        o->m2[l] = m2[l / 2][l % 2];
        o->corr[l] = corr[l / 2][l % 2];
    }
}

typedef void (*pass1_fn)(const unsigned char *, size_t, pass1_out *);
typedef void (*pass2_fn)(const unsigned char *, size_t, double, pass2_out *);

/* Fast path for a block with no NaN/Inf and no value beyond 2^450 (the usual case): four
 * independent lanes so several additions are in flight. Returns 0, having changed nothing,
 * when the block needs the general path. p1 and p2 are the vector loops, portable or AVX2:
 * the same operations in the same order, so the same bits. */
static inline __attribute__((always_inline)) int plain_block(golden_stats *s, enum raw k,
                                                             const unsigned char *x, size_t n,
                                                             pass1_fn p1, pass2_fn p2)
{
    pass1_out a;
    p1(x, n, &a);
    double bad = a.bad, zeros = a.zeros;
    for (size_t i = n - n % 4; i < n; i++) {
        double v = load1(k, x, i);
        bad += v - v;
        a.sum[0] += v;
        a.lo[0] = v < a.lo[0] ? v : a.lo[0];
        a.hi[0] = v > a.hi[0] ? v : a.hi[0];
        zeros += v == 0 ? 1.0 : 0.0;
    }
    if (bad != 0)
        return 0;
    /* lanes in order with strict comparisons, not fmin/fmax, whose choice between -0 and +0
     * the compiler may make differently in each place it is inlined */
    double blo = a.lo[0], bhi = a.hi[0];
    for (int l = 1; l < 4; l++) {
        blo = a.lo[l] < blo ? a.lo[l] : blo;
        bhi = a.hi[l] > bhi ? a.hi[l] : bhi;
    }
    if (fmax(-blo, bhi) >= SCALE_AT)
        return 0;
    double mean = ((a.sum[0] + a.sum[1]) + (a.sum[2] + a.sum[3])) / (double)n;
    pass2_out b;
    p2(x, n, mean, &b);
    for (size_t i = n - n % 4; i < n; i++) {
        double d = load1(k, x, i) - mean;
        b.m2[0] += d * d;
        b.corr[0] += d;
    }
    double c = (b.corr[0] + b.corr[1]) + (b.corr[2] + b.corr[3]);
    double m = (b.m2[0] + b.m2[1]) + (b.m2[2] + b.m2[3]);
    /* corrected two-pass: removes the rounding error left in `mean` */
    m -= c * c / (double)n;
    mean += c / (double)n;
    if (blo < s->min)
        s->min = blo;
    if (bhi > s->max)
        s->max = bhi;
    s->zero_count += (uint64_t)zeros;
    s->count += n;
    merge_moments(s, n, mean, m < 0 ? 0 : m, 0);
    return 1;
}

/* The three functions of one element type and one form of the loops: the loops (ATTR says
 * where they may use AVX2), and the block function that runs them. */
#define KERNELS(name, K, ATTR, P1, P2)                                                        \
    ATTR static void name##_p1(const unsigned char *x, size_t n, pass1_out *o)                \
    {                                                                                          \
        P1(K, x, n, o);                                                                        \
    }                                                                                          \
    ATTR static void name##_p2(const unsigned char *x, size_t n, double m, pass2_out *o)      \
    {                                                                                          \
        P2(K, x, n, m, o);                                                                     \
    }                                                                                          \
    static int name(golden_stats *s, const unsigned char *x, size_t n)                        \
    {                                                                                          \
        return plain_block(s, K, x, n, name##_p1, name##_p2);                                  \
    }
#define PORTABLE(name, K) KERNELS(name, K, , pass1_vec, pass2_vec)
PORTABLE(plain_f64, RAW_F64)
PORTABLE(plain_f32, RAW_F32)
PORTABLE(plain_bf16, RAW_BF16)

#if defined(__x86_64__)
/* The same loops in AVX2 intrinsics: 1.8x the portable form's speed on bf16, whose widening
 * GCC 12 compiled from the vector extension into eleven instructions. No FMA: every multiply
 * and add rounds as in the portable twin; vminpd(v, lo) is v < lo ? v : lo and vmaxpd(v, hi)
 * is v > hi ? v : hi, exactly PICK's choice (tests/unit/test_stats.c forces both paths). */
__attribute__((target("avx2"))) static inline __m256d load4_avx2(enum raw k, const unsigned char *p)
{
    if (k == RAW_F64)
        return _mm256_loadu_pd((const double *)(const void *)p);
    if (k == RAW_F32)
        return _mm256_cvtps_pd(_mm_loadu_ps((const float *)(const void *)p));
    __m128i h = _mm_loadl_epi64((const __m128i *)(const void *)p); /* 4 bf16 -> their f32 bits */
    return _mm256_cvtps_pd(_mm_castsi128_ps(_mm_unpacklo_epi16(_mm_setzero_si128(), h)));
}

__attribute__((target("avx2"))) static inline void pass1_avx2(enum raw k, const unsigned char *x,
                                                               size_t n, pass1_out *o)
{
    const __m256d zero = _mm256_setzero_pd(), one = _mm256_set1_pd(1);
    __m256d sum4 = zero, bad4 = zero, zero4 = zero;
    __m256d lo4 = _mm256_set1_pd(INFINITY), hi4 = _mm256_set1_pd(-INFINITY);
    size_t w = k == RAW_F64 ? 8 : k == RAW_F32 ? 4 : 2;
    for (size_t i = 0; i + 4 <= n; i += 4) {
        __m256d v = load4_avx2(k, x + w * i);
        bad4 = _mm256_add_pd(bad4, _mm256_sub_pd(v, v));
        sum4 = _mm256_add_pd(sum4, v);
        lo4 = _mm256_min_pd(v, lo4);
        hi4 = _mm256_max_pd(v, hi4);
        zero4 = _mm256_add_pd(zero4, _mm256_and_pd(_mm256_cmp_pd(v, zero, _CMP_EQ_OQ), one));
    }
    double bad[4], zeros[4];
    _mm256_storeu_pd(o->sum, sum4);
    _mm256_storeu_pd(o->lo, lo4);
    _mm256_storeu_pd(o->hi, hi4);
    _mm256_storeu_pd(bad, bad4);
    _mm256_storeu_pd(zeros, zero4);
    o->bad = (bad[0] + bad[1]) + (bad[2] + bad[3]);
    o->zeros = (zeros[0] + zeros[1]) + (zeros[2] + zeros[3]);
}

__attribute__((target("avx2"))) static inline void pass2_avx2(enum raw k, const unsigned char *x,
                                                               size_t n, double mean, pass2_out *o)
{
    const __m256d mv = _mm256_set1_pd(mean);
    __m256d m24 = _mm256_setzero_pd(), corr4 = _mm256_setzero_pd();
    size_t w = k == RAW_F64 ? 8 : k == RAW_F32 ? 4 : 2;
    for (size_t i = 0; i + 4 <= n; i += 4) {
        __m256d d = _mm256_sub_pd(load4_avx2(k, x + w * i), mv);
        m24 = _mm256_add_pd(m24, _mm256_mul_pd(d, d));
        corr4 = _mm256_add_pd(corr4, d);
    }
    _mm256_storeu_pd(o->m2, m24);
    _mm256_storeu_pd(o->corr, corr4);
}

#define AVX2(name, K) KERNELS(name, K, __attribute__((target("avx2"))), pass1_avx2, pass2_avx2)
AVX2(plain_f64_avx2, RAW_F64)
AVX2(plain_f32_avx2, RAW_F32)
AVX2(plain_bf16_avx2, RAW_BF16)
#endif

typedef int (*plain_fn)(golden_stats *, const unsigned char *, size_t);

/* The fused kernel for dtype t on this CPU, or NULL when t is read through the f64 scratch. */
static plain_fn plain_for(golden_dtype t)
{
#if defined(__x86_64__)
    bool avx2 = lg_cpu_avx2();
#else
    bool avx2 = false;
#endif
    switch (t) {
#if defined(__x86_64__)
    case GOLDEN_F64: return avx2 ? plain_f64_avx2 : plain_f64;
    case GOLDEN_F32: return avx2 ? plain_f32_avx2 : plain_f32;
    case GOLDEN_BF16: return avx2 ? plain_bf16_avx2 : plain_bf16;
#else
    case GOLDEN_F64: return plain_f64;
    case GOLDEN_F32: return plain_f32;
    case GOLDEN_BF16: return plain_bf16;
#endif
    default: (void)avx2; return NULL;
    }
}

/* Any block: non-finite values counted apart, finite ones scaled by 2^-e when huge. */
static void add_block_general(golden_stats *s, const double *x, size_t n)
{
    uint64_t finite = 0;
    double lo = INFINITY, hi = -INFINITY;
    for (size_t i = 0; i < n; i++) {
        double v = x[i];
        if (isfinite(v)) {
            finite++;
            lo = v < lo ? v : lo;
            hi = v > hi ? v : hi;
            if (v == 0)
                s->zero_count++;
        } else if (isnan(v)) {
            s->nan_count++;
        } else if (v > 0) {
            s->posinf_count++;
        } else {
            s->neginf_count++;
        }
    }
    s->count += n;
    if (finite == 0)
        return;
    if (lo < s->min)
        s->min = lo;
    if (hi > s->max)
        s->max = hi;
    int e = 0;
    double amax = fmax(-lo, hi);
    if (amax >= SCALE_AT) {
        frexp(amax, &e);
        e -= SCALE_BITS; /* scaled values below 2^450 */
    }
    double sc = ldexp(1.0, -e), sum = 0;
    for (size_t i = 0; i < n; i++)
        if (isfinite(x[i]))
            sum += x[i] * sc;
    double mean = sum / (double)finite, m2 = 0, corr = 0;
    for (size_t i = 0; i < n; i++) {
        double v = x[i];
        if (isfinite(v)) {
            double d = v * sc - mean;
            m2 += d * d;
            corr += d;
        }
    }
    /* corrected two-pass: removes the rounding error left in `mean` */
    m2 -= corr * corr / (double)finite;
    mean += corr / (double)finite;
    merge_moments(s, finite, ldexp(mean, e), m2 < 0 ? 0 : m2, e);
}

void golden_stats_add(golden_stats *s, const double *x, size_t n)
{
    plain_fn plain = plain_for(GOLDEN_F64);
    while (n > 0) {
        size_t b = n < GOLDEN_STATS_BLOCK ? n : GOLDEN_STATS_BLOCK;
        if (!plain(s, (const unsigned char *)x, b))
            add_block_general(s, x, b);
        x += b;
        n -= b;
    }
}

void golden_stats_add_raw(golden_stats *s, golden_dtype t, const void *data, size_t n, double *scratch)
{
    plain_fn plain = plain_for(t);
    size_t width = golden_dtype_size(t);
    const unsigned char *p = data;
    while (n > 0) {
        size_t b = n < GOLDEN_STATS_BLOCK ? n : GOLDEN_STATS_BLOCK;
        if (!plain || !plain(s, p, b)) {
            golden_convert_to_f64(t, p, b, scratch);
            if (plain)
                add_block_general(s, scratch, b); /* the fused path already said: not plain */
            else
                golden_stats_add(s, scratch, b);
        }
        p += b * width;
        n -= b;
    }
}

void golden_stats_merge(golden_stats *into, const golden_stats *other)
{
    into->count += other->count;
    into->nan_count += other->nan_count;
    into->posinf_count += other->posinf_count;
    into->neginf_count += other->neginf_count;
    into->zero_count += other->zero_count;
    if (other->min < into->min)
        into->min = other->min;
    if (other->max > into->max)
        into->max = other->max;
    merge_moments(into, other->finite, other->mean, other->m2, other->m2_exp);
}

double golden_stats_min(const golden_stats *s) { return s->finite ? s->min : NAN; }
double golden_stats_max(const golden_stats *s) { return s->finite ? s->max : NAN; }
double golden_stats_mean(const golden_stats *s) { return s->finite ? s->mean : NAN; }

double golden_stats_std(const golden_stats *s)
{
    return s->finite ? ldexp(sqrt(s->m2 / (double)s->finite), s->m2_exp) : NAN;
}
