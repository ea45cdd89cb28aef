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

static void add_block(golden_stats *s, const double *x, size_t n)
{
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
