/* Statistics of a tensor accumulated in one pass: each block of values is reduced two-pass
 * while it is in cache, and blocks merge left to right (Chan et al.), scaled when huge. */
#include "golden/stats.h"
#include "util/cpu.h"

#include <math.h>
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

/* Four lanes of doubles (GCC and Clang vector extension: two SSE2/NEON registers, or one AVX2
 * register where the caller is compiled for it), so element i always goes to lane i % 4 and
 * every build and every SIMD path adds the same values in the same order. */
typedef double lanes4 __attribute__((vector_size(32)));
typedef long long mask4 __attribute__((vector_size(32)));
typedef float f32x4 __attribute__((vector_size(16)));
typedef unsigned int u32x4 __attribute__((vector_size(16)));
typedef unsigned short u16x4 __attribute__((vector_size(8)));

/* Macros rather than functions: a function taking or returning a 256-bit vector changes the
 * ABI between the portable and the AVX2 compilations (GCC's -Wpsabi). */
#define PICK(m, a, b) ((lanes4)(((mask4)(a) & (m)) | ((mask4)(b) & ~(m))))

/* The element types the fused path reads straight from canonical bytes; their widening to
 * f64 is exact, so reading them here equals golden_convert_to_f64 first. */
enum raw { RAW_F64, RAW_F32, RAW_BF16 };

/* v = elements i..i+3 of x, widened to f64. */
#define LOAD4(v, k, x, i)                                                                     \
    do {                                                                                      \
        if ((k) == RAW_F64) {                                                                 \
            memcpy(&(v), (x) + 8 * (i), sizeof(v));                                           \
        } else if ((k) == RAW_F32) {                                                          \
            f32x4 f_;                                                                         \
            memcpy(&f_, (x) + 4 * (i), sizeof f_);                                            \
            (v) = __builtin_convertvector(f_, lanes4);                                        \
        } else {                                                                              \
            u16x4 h_;                                                                         \
            memcpy(&h_, (x) + 2 * (i), sizeof h_);                                            \
            u32x4 w_ = __builtin_convertvector(h_, u32x4) << 16;                              \
            (v) = __builtin_convertvector((f32x4)w_, lanes4);                                 \
        }                                                                                     \
    } while (0)

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

/* Fast path for a block with no NaN/Inf and no value beyond 2^450 (the usual case): four
 * independent lanes so several additions are in flight. Returns 0, having changed nothing,
 * when the block needs the general path. Always inlined into the dispatch functions below,
 * which compile it once portably and once for AVX2. */
static inline __attribute__((always_inline)) int plain_block(golden_stats *s, enum raw k,
                                                             const unsigned char *x, size_t n)
{
    const lanes4 zero = {0, 0, 0, 0}, one = {1, 1, 1, 1};
    lanes4 sum4 = zero, bad4 = zero, zero4 = zero;
    lanes4 lo4 = {INFINITY, INFINITY, INFINITY, INFINITY}, hi4 = -lo4;
    size_t i = 0;
    for (; i + 4 <= n; i += 4) {
        lanes4 v;
        LOAD4(v, k, x, i);
        bad4 += v - v; /* NaN for NaN or Inf, 0 otherwise */
        sum4 += v;
        lo4 = PICK(v < lo4, v, lo4);
        hi4 = PICK(v > hi4, v, hi4);
        zero4 += PICK(v == zero, one, zero);
    }
    double sum[4] = {sum4[0], sum4[1], sum4[2], sum4[3]}, lo[4] = {lo4[0], lo4[1], lo4[2], lo4[3]};
    double hi[4] = {hi4[0], hi4[1], hi4[2], hi4[3]}, bad = (bad4[0] + bad4[1]) + (bad4[2] + bad4[3]);
    double zeros = (zero4[0] + zero4[1]) + (zero4[2] + zero4[3]);
    for (; i < n; i++) {
        double v = load1(k, x, i);
        bad += v - v;
        sum[0] += v;
        lo[0] = v < lo[0] ? v : lo[0];
        hi[0] = v > hi[0] ? v : hi[0];
        zeros += v == 0 ? 1.0 : 0.0;
    }
    if (bad != 0)
        return 0;
    double blo = fmin(fmin(lo[0], lo[1]), fmin(lo[2], lo[3]));
    double bhi = fmax(fmax(hi[0], hi[1]), fmax(hi[2], hi[3]));
    if (fmax(-blo, bhi) >= SCALE_AT)
        return 0;
    double mean = ((sum[0] + sum[1]) + (sum[2] + sum[3])) / (double)n;
    const lanes4 mv = {mean, mean, mean, mean};
    lanes4 m24 = zero, corr4 = zero;
    for (i = 0; i + 4 <= n; i += 4) {
        lanes4 d;
        LOAD4(d, k, x, i);
        d -= mv;
        m24 += d * d;
        corr4 += d;
    }
    double m2[4] = {m24[0], m24[1], m24[2], m24[3]}, corr[4] = {corr4[0], corr4[1], corr4[2], corr4[3]};
    for (; i < n; i++) {
        double d = load1(k, x, i) - mean;
        m2[0] += d * d;
        corr[0] += d;
    }
    double c = (corr[0] + corr[1]) + (corr[2] + corr[3]);
    double m = (m2[0] + m2[1]) + (m2[2] + m2[3]);
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

static int plain_f64(golden_stats *s, const unsigned char *x, size_t n) { return plain_block(s, RAW_F64, x, n); }
static int plain_f32(golden_stats *s, const unsigned char *x, size_t n) { return plain_block(s, RAW_F32, x, n); }
static int plain_bf16(golden_stats *s, const unsigned char *x, size_t n) { return plain_block(s, RAW_BF16, x, n); }
#if defined(__x86_64__)
/* The same arithmetic in 256-bit registers: AVX2 without FMA, so no multiply-add is fused and
 * the bits are those of the portable twin (tests/unit/test_stats.c forces both). */
__attribute__((target("avx2"))) static int plain_f64_avx2(golden_stats *s, const unsigned char *x, size_t n)
{
    return plain_block(s, RAW_F64, x, n);
}
__attribute__((target("avx2"))) static int plain_f32_avx2(golden_stats *s, const unsigned char *x, size_t n)
{
    return plain_block(s, RAW_F32, x, n);
}
__attribute__((target("avx2"))) static int plain_bf16_avx2(golden_stats *s, const unsigned char *x, size_t n)
{
    return plain_block(s, RAW_BF16, x, n);
}
#endif

typedef int (*plain_fn)(golden_stats *, const unsigned char *, size_t);

/* The fused kernel for dtype t on this CPU, or NULL when t is read through the f64 scratch. */
static plain_fn plain_for(golden_dtype t)
{
#if defined(__x86_64__)
    bool avx2 = golden_cpu_avx2();
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
