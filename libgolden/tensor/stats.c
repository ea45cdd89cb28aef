/* Statistics of a tensor accumulated in one pass: each block of values is reduced two-pass
 * while it is in cache (sum, then squared deviations), and blocks merge exactly (Chan et al.). */
#include "golden/stats.h"

#include <math.h>

#define STATS_BLOCK 4096

void golden_stats_init(golden_stats *s)
{
    *s = (golden_stats){0};
    s->min = INFINITY;
    s->max = -INFINITY;
}

/* Merge a block's (finite count, mean, m2) into the running values. */
static void merge_moments(golden_stats *s, uint64_t nb, double mean_b, double m2_b)
{
    if (nb == 0)
        return;
    if (s->finite == 0) {
        s->finite = nb;
        s->mean = mean_b;
        s->m2 = m2_b;
        return;
    }
    double na = (double)s->finite, n = na + (double)nb;
    double delta = mean_b - s->mean;
    s->mean += delta * ((double)nb / n);
    s->m2 += m2_b + delta * delta * (na * (double)nb / n);
    s->finite += nb;
}

/* Fast path for a block with no NaN/Inf (the usual case): four independent lanes so the
 * compiler can keep several additions in flight. Returns 0 when a non-finite value is seen. */
static int add_block_finite(golden_stats *s, const double *x, size_t n)
{
    /* all lanes are doubles (zeros counted as 1.0) so the loop stays in vector registers */
    double sum[4] = {0, 0, 0, 0}, lo[4], hi[4], bad[4] = {0, 0, 0, 0}, zeros[4] = {0, 0, 0, 0};
    for (int k = 0; k < 4; k++)
        lo[k] = s->min, hi[k] = s->max;
    size_t i = 0;
    for (; i + 4 <= n; i += 4)
        for (int k = 0; k < 4; k++) {
            double v = x[i + k];
            bad[k] += v - v; /* NaN for NaN or Inf, 0 otherwise */
            sum[k] += v;
            lo[k] = v < lo[k] ? v : lo[k];
            hi[k] = v > hi[k] ? v : hi[k];
            zeros[k] += v == 0 ? 1.0 : 0.0;
        }
    for (; i < n; i++) {
        double v = x[i];
        bad[0] += v - v;
        sum[0] += v;
        lo[0] = v < lo[0] ? v : lo[0];
        hi[0] = v > hi[0] ? v : hi[0];
        zeros[0] += v == 0 ? 1.0 : 0.0;
    }
    if (bad[0] + bad[1] + bad[2] + bad[3] != 0)
        return 0;
    double mean = ((sum[0] + sum[1]) + (sum[2] + sum[3])) / (double)n;
    double m2[4] = {0, 0, 0, 0}, corr[4] = {0, 0, 0, 0};
    for (i = 0; i + 4 <= n; i += 4)
        for (int k = 0; k < 4; k++) {
            double d = x[i + k] - mean;
            m2[k] += d * d;
            corr[k] += d;
        }
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
    for (int k = 0; k < 4; k++) {
        if (lo[k] < s->min)
            s->min = lo[k];
        if (hi[k] > s->max)
            s->max = hi[k];
        s->zero_count += (uint64_t)zeros[k];
    }
    s->count += n;
    merge_moments(s, n, mean, m < 0 ? 0 : m);
    return 1;
}

static void add_block(golden_stats *s, const double *x, size_t n)
{
    if (add_block_finite(s, x, n))
        return;
    uint64_t finite = 0;
    double sum = 0, lo = s->min, hi = s->max;
    for (size_t i = 0; i < n; i++) {
        double v = x[i];
        if (isfinite(v)) {
            finite++;
            sum += v;
            if (v < lo)
                lo = v;
            if (v > hi)
                hi = v;
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
    s->min = lo;
    s->max = hi;
    if (finite == 0)
        return;
    double mean = sum / (double)finite, m2 = 0, corr = 0;
    for (size_t i = 0; i < n; i++) {
        double v = x[i];
        if (isfinite(v)) {
            double d = v - mean;
            m2 += d * d;
            corr += d;
        }
    }
    /* corrected two-pass: removes the rounding error left in `mean` */
    m2 -= corr * corr / (double)finite;
    mean += corr / (double)finite;
    merge_moments(s, finite, mean, m2 < 0 ? 0 : m2);
}

void golden_stats_add(golden_stats *s, const double *x, size_t n)
{
    while (n > 0) {
        size_t b = n < STATS_BLOCK ? n : STATS_BLOCK;
        add_block(s, x, b);
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
    merge_moments(into, other->finite, other->mean, other->m2);
}

double golden_stats_min(const golden_stats *s) { return s->finite ? s->min : NAN; }
double golden_stats_max(const golden_stats *s) { return s->finite ? s->max : NAN; }
double golden_stats_mean(const golden_stats *s) { return s->finite ? s->mean : NAN; }

double golden_stats_std(const golden_stats *s)
{
    return s->finite ? sqrt(s->m2 / (double)s->finite) : NAN;
}
