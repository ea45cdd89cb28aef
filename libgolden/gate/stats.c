/* Section 8's descriptive statistics of one sample: numpy's linear percentile, MAD and the
 * sample standard deviation, on a sorted copy the caller owns. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

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

/* The order of doubles (no NaN, no -0) as unsigned integers: sign bit flipped for positives,
 * every bit for negatives. */
static uint64_t order_key(double v)
{
    uint64_t b;
    memcpy(&b, &v, sizeof b);
    return b >> 63 ? ~b : b | ((uint64_t)1 << 63);
}

static double key_value(uint64_t k)
{
    uint64_t b = k >> 63 ? k & ~((uint64_t)1 << 63) : ~k;
    double v;
    memcpy(&v, &b, sizeof v);
    return v;
}

/* Sort x ascending: an LSD radix sort of the order keys, 11 bits a pass, skipping passes whose
 * digit all keys share; equal keys are equal bits, so the result is bit for bit qsort's with
 * cmp_double. Samples with a NaN (whose order that comparison leaves undefined) or a -0 (equal
 * to +0 there, so placed by qsort's own rule), small ones, or no memory: qsort. */
static void sort_doubles(double *x, size_t n)
{
    int odd = 0;
    for (size_t i = 0; i < n; i++)
        odd |= isnan(x[i]) || (x[i] == 0 && signbit(x[i]));
    uint64_t *a = odd || n < 64 ? NULL : malloc(2 * n * sizeof *a);
    if (!a) {
        qsort(x, n, sizeof *x, cmp_double);
        return;
    }
    uint64_t *src = a, *dst = a + n;
    for (size_t i = 0; i < n; i++)
        src[i] = order_key(x[i]);
    for (int shift = 0; shift < 64; shift += 11) {
        size_t count[2048] = {0};
        for (size_t i = 0; i < n; i++)
            count[(src[i] >> shift) & 2047]++;
        if (count[(src[0] >> shift) & 2047] == n)
            continue;
        size_t sum = 0;
        for (size_t i = 0; i < 2048; i++) {
            size_t c = count[i];
            count[i] = sum;
            sum += c;
        }
        for (size_t i = 0; i < n; i++)
            dst[count[(src[i] >> shift) & 2047]++] = src[i];
        uint64_t *t = src;
        src = dst;
        dst = t;
    }
    for (size_t i = 0; i < n; i++)
        x[i] = key_value(src[i]);
    free(a);
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
    sort_doubles(x, n);
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
    out->mad = gate_percentile_select(scratch, n, 0.5); /* the sorted one's, by selection */
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
