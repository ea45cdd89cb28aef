/* Per-tensor statistics of calculet-golden/v1 (counts, min/max/mean/std over finite
 * elements), accumulated chunk by chunk in f64 and mergeable across threads. */
#ifndef GOLDEN_STATS_H
#define GOLDEN_STATS_H
#include <stddef.h>
#include <stdint.h>

typedef struct {
    uint64_t count;        /* all elements */
    uint64_t nan_count;
    uint64_t posinf_count;
    uint64_t neginf_count;
    uint64_t zero_count;   /* +0 and -0 */
    uint64_t finite;       /* elements that enter min/max/mean/std */
    double min, max;       /* over finite elements */
    double mean;           /* running mean of finite elements */
    double m2;             /* sum of squared deviations from mean (Chan et al. merge) */
} golden_stats;

void golden_stats_init(golden_stats *s);
/* Add n values; each chunk is reduced two-pass in cache, then merged exactly. */
void golden_stats_add(golden_stats *s, const double *x, size_t n);
/* Fold `other` into `into` (order-independent up to rounding). */
void golden_stats_merge(golden_stats *into, const golden_stats *other);
/* Final values per the contract: NaN when there is no finite element. */
double golden_stats_min(const golden_stats *s);
double golden_stats_max(const golden_stats *s);
double golden_stats_mean(const golden_stats *s);
double golden_stats_std(const golden_stats *s); /* population std */

#endif
