/* The statistics of contracts.md section 8 as plain functions over arrays: percentiles (numpy's
 * default linear rule), MAD, sample std, and the seeded percentile bootstrap of the median. */
#ifndef GOLDEN_GATE_STATS_H
#define GOLDEN_GATE_STATS_H
#include "golden/api.h"
#include <stddef.h>
#include <stdint.h>
#include "golden/error.h"

/* Percentile q in [0, 1] of n >= 1 sorted values: with h = (n - 1) q and f = floor h,
 * x[f] + (h - f) (x[f + 1] - x[f]) (x[f] alone when f is the last index or h = f; +inf, a
 * failed request, stays +inf). */
GOLDEN_API double golden_gate_percentile(const double *sorted, size_t n, double q);

/* One sample described as section 8 asks. */
typedef struct {
    size_t n;
    double median, p90, p99;
    double mad;     /* median of |x - median|, unscaled */
    double std;     /* sample standard deviation (n - 1), 0 when n = 1 */
    double mean;
    double min, max;
} golden_gate_describe_t;

/* Describe x[0..n) (n >= 1). x is sorted in place; scratch (n doubles) holds the deviations.
 * The mean and std use a two-pass compensated sum, so huge offsets do not cancel. */
GOLDEN_API void golden_gate_describe(double *x, size_t n, double *scratch, golden_gate_describe_t *out);

/* The generator of the bootstrap, exactly (so that any other implementation can repeat it):
 * resample b (0-based) owns a splitmix64 stream whose state starts at
 * seed XOR golden_gate_mix64(b + 1); each draw advances the state by 0x9E3779B97F4A7C15 and
 * returns golden_gate_mix64(state); draw z picks index floor(z * n / 2^64) (the high 64 bits of
 * the 128-bit product). */
GOLDEN_API uint64_t golden_gate_mix64(uint64_t z);

/* Percentile bootstrap of the median of sorted[0..n): B resamples of n draws with replacement
 * by the generator above, the median of each by golden_gate_percentile's rule, then the 2.5th
 * and 97.5th percentiles of the B medians. Work B*n, spread over `threads` workers (0 = all
 * cores); the result does not depend on the thread count. B = 0 gives NaN bounds. */
GOLDEN_API int golden_gate_bootstrap_median(const double *sorted, size_t n, unsigned long B, uint64_t seed,
                                 int threads, double ci[2], golden_error *err);

/* The two generators of the bootstrap (named in a summary's bootstrap.generator):
 * GOLDEN_BOOT_RESAMPLE "splitmix64-per-resample/v1", the one described above (work B n);
 * GOLDEN_BOOT_ORDER_STAT "splitmix64-order-statistic/v1", exp-gate's default: resample b's stream
 * (seeded as above; uniform u = ((z >> 11) + 0.5) 2^-53; normal by Box-Muller from two
 * uniforms) draws Ga ~ Gamma(j) and Gb ~ Gamma(n - j + 1), j = floor((n - 1) / 2) + 1, by
 * Marsaglia and Tsang's method; U = Ga / (Ga + Gb) is the j-th smallest of the resample's n
 * uniforms, so floor(U n) is its j-th smallest index; for even n one more uniform w gives the
 * next, U + (1 - U)(1 - w^(1 / (n - j))). The medians have exactly the resampling
 * distribution, at work B instead of B n; the bits depend on libm's log, cos, expm1. */
typedef enum { GOLDEN_BOOT_RESAMPLE = 1, GOLDEN_BOOT_ORDER_STAT = 2 } golden_gate_boot_gen;
GOLDEN_API const char *golden_gate_boot_gen_name(golden_gate_boot_gen gen);
/* 0 and *gen set when name is one of the names above, else -1. */
GOLDEN_API int golden_gate_boot_gen_parse(const char *name, golden_gate_boot_gen *gen);
/* golden_gate_bootstrap_median with either generator. */
GOLDEN_API int golden_gate_bootstrap_median_gen(golden_gate_boot_gen gen, const double *sorted,
                                                size_t n, unsigned long B, uint64_t seed,
                                                int threads, double ci[2], golden_error *err);

#endif
