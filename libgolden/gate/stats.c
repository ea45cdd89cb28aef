/* Section 8's descriptive statistics of one sample: numpy's linear percentile, MAD and the
 * sample standard deviation, on a sorted copy the caller owns. */
#include <math.h>
#include <stdlib.h>

#include "gate/gate_int.h"

double gate_lerp(double a, double b, double t)
{
    /* a failed request is +inf: the rank that lands on a finite value keeps it, one between a
     * finite value and +inf is +inf (never 0 * inf = NaN) */
    if (t == 0 || a == b)
        return a;
    return a + t * (b - a);
}

double golden_gate_percentile(const double *sorted, size_t n, double q)
{
    if (n == 0)
        return NAN;
    double h = (double)(n - 1) * q;
    double fl = floor(h);
    size_t f = (size_t)fl;
    if (f >= n - 1)
        return sorted[n - 1];
    return gate_lerp(sorted[f], sorted[f + 1], h - fl);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Neumaier's compensated sum: the mean of 1e15 + small values keeps the small ones. */
static double sum_compensated(const double *x, size_t n, double shift)
{
    double s = 0, c = 0;
    for (size_t i = 0; i < n; i++) {
        double v = x[i] - shift, t = s + v;
        if (fabs(s) >= fabs(v))
            c += (s - t) + v;
        else
            c += (v - t) + s;
        s = t;
    }
    return s + c;
}

void golden_gate_describe(double *x, size_t n, double *scratch, golden_gate_describe_t *out)
{
    out->n = n;
    if (n == 0) {
        out->median = out->p90 = out->p99 = out->mad = out->std = NAN;
        out->mean = out->min = out->max = NAN;
        return;
    }
    qsort(x, n, sizeof *x, cmp_double);
    out->min = x[0];
    out->max = x[n - 1];
    out->median = golden_gate_percentile(x, n, 0.5);
    out->p90 = golden_gate_percentile(x, n, 0.9);
    out->p99 = golden_gate_percentile(x, n, 0.99);
    for (size_t i = 0; i < n; i++) {
        scratch[i] = fabs(x[i] - out->median);
        if (isnan(scratch[i])) /* +inf at a +inf median: no deviation */
            scratch[i] = 0;
    }
    qsort(scratch, n, sizeof *scratch, cmp_double);
    out->mad = golden_gate_percentile(scratch, n, 0.5);
    /* Two passes (mean, then squared deviations from it: no catastrophic cancellation), on
     * values scaled by a power of two (exact) so that squares of 1e300 do not overflow. */
    if (isinf(x[n - 1])) { /* failed requests: the mean and the spread are unbounded */
        out->mean = out->std = INFINITY;
        return;
    }
    int e2;
    frexp(fmax(fabs(x[0]), fabs(x[n - 1])), &e2);
    double scale = ldexp(1.0, e2);
    if (scale == 0 || !isfinite(scale))
        scale = 1;
    for (size_t i = 0; i < n; i++)
        scratch[i] = x[i] / scale;
    double mean = sum_compensated(scratch, n, 0) / (double)n;
    out->mean = mean * scale;
    if (n == 1) {
        out->std = 0;
        return;
    }
    for (size_t i = 0; i < n; i++) {
        double d = scratch[i] - mean;
        scratch[i] = d * d;
    }
    out->std = sqrt(sum_compensated(scratch, n, 0) / (double)(n - 1)) * scale;
}
