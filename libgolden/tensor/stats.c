/* Statistics of a tensor accumulated in one pass: each block of values is reduced two-pass
 * while it is in cache, and blocks merge left to right (Chan et al.), scaled when huge. */
#include "golden/stats.h"

#include <math.h>
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

/* Two lanes of doubles in one SSE2/NEON register (GCC and Clang vector extension); the four
 * lanes are two of these, so element i always goes to lane i % 4, on any compiler. */
typedef double lanes2 __attribute__((vector_size(16)));
typedef long long mask2 __attribute__((vector_size(16)));

static inline lanes2 pick(mask2 m, lanes2 a, lanes2 b)
{
    return (lanes2)(((mask2)a & m) | ((mask2)b & ~m));
}

/* Fast path for a block with no NaN/Inf and no value beyond 2^450 (the usual case): four
 * independent lanes (element i in lane i % 4) so several additions are in flight. Returns 0,
 * having changed nothing, when the block needs the general path. */
static int add_block_plain(golden_stats *s, const double *x, size_t n)
{
    const lanes2 zero = {0, 0}, one = {1, 1};
    lanes2 sa = zero, sb = zero, ba = zero, bb = zero, za = zero, zb = zero;
    lanes2 la = {INFINITY, INFINITY}, lb = la, ha = -la, hb = -la;
    size_t i = 0;
    for (; i + 4 <= n; i += 4) {
        lanes2 va, vb;
        memcpy(&va, x + i, sizeof va);
        memcpy(&vb, x + i + 2, sizeof vb);
        ba += va - va; /* NaN for NaN or Inf, 0 otherwise */
        bb += vb - vb;
        sa += va;
        sb += vb;
        la = pick(va < la, va, la);
        lb = pick(vb < lb, vb, lb);
        ha = pick(va > ha, va, ha);
        hb = pick(vb > hb, vb, hb);
        za += pick(va == zero, one, zero);
        zb += pick(vb == zero, one, zero);
    }
    double sum[4] = {sa[0], sa[1], sb[0], sb[1]}, lo[4] = {la[0], la[1], lb[0], lb[1]};
    double hi[4] = {ha[0], ha[1], hb[0], hb[1]}, bad = (ba[0] + ba[1]) + (bb[0] + bb[1]);
    double zeros = (za[0] + za[1]) + (zb[0] + zb[1]);
    for (; i < n; i++) {
        double v = x[i];
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
    const lanes2 mv = {mean, mean};
    lanes2 ma = zero, mb = zero, ca = zero, cb = zero;
    for (i = 0; i + 4 <= n; i += 4) {
        lanes2 va, vb;
        memcpy(&va, x + i, sizeof va);
        memcpy(&vb, x + i + 2, sizeof vb);
        lanes2 da = va - mv, db = vb - mv;
        ma += da * da;
        mb += db * db;
        ca += da;
        cb += db;
    }
    double m2[4] = {ma[0], ma[1], mb[0], mb[1]}, corr[4] = {ca[0], ca[1], cb[0], cb[1]};
    for (; i < n; i++) {
        double d = x[i] - mean;
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
    while (n > 0) {
        size_t b = n < GOLDEN_STATS_BLOCK ? n : GOLDEN_STATS_BLOCK;
        if (!add_block_plain(s, x, b))
            add_block_general(s, x, b);
        x += b;
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
