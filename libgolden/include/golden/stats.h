/* Per-tensor statistics of calculet-golden/v1 (counts, min/max/mean/std over finite
 * elements), accumulated chunk by chunk in f64 in one fixed order, and scaled so finite data
 * always gives finite statistics. */
#ifndef GOLDEN_STATS_H
#define GOLDEN_STATS_H
#include "golden/api.h"
#include <stddef.h>
#include <stdint.h>
#include "golden/dtype.h"

/* The fixed order that makes statistics reproducible: elements are reduced in blocks of
 * GOLDEN_STATS_BLOCK aligned to element 0 (each block two-pass, in cache), and the blocks are
 * merged left to right. golden_stats_add gives the same bits however the data is chunked as
 * long as every chunk but the last holds a multiple of GOLDEN_STATS_BLOCK elements; threads
 * reduce blocks into separate golden_stats and merge them in block order (docs/formats.md). */
#define GOLDEN_STATS_BLOCK 4096

typedef struct {
    uint64_t count;        /* all elements */
    uint64_t nan_count;
    uint64_t posinf_count;
    uint64_t neginf_count;
    uint64_t zero_count;   /* +0 and -0 */
    uint64_t finite;       /* elements that enter min/max/mean/std */
    double min, max;       /* over finite elements */
    double mean;           /* running mean of finite elements */
    double m2;             /* sum of squared deviations from mean (Chan et al. merge),
                              divided by 4^m2_exp */
    int m2_exp;            /* scale of m2: 0 unless values beyond 2^450 were seen */
} golden_stats;

GOLDEN_API void golden_stats_init(golden_stats *s);
/* Add n values in blocks of GOLDEN_STATS_BLOCK (see above). */
GOLDEN_API void golden_stats_add(golden_stats *s, const double *x, size_t n);
/* The same as converting n elements of type t (canonical little-endian bytes) to f64 and
 * calling golden_stats_add, to the bit, without the f64 copy for f32, bf16 and f64 (AVX2 where
 * the CPU has it). scratch holds GOLDEN_STATS_BLOCK doubles (blocks with NaN, Inf or huge
 * values, and the other types, go through it). */
GOLDEN_API void golden_stats_add_raw(golden_stats *s, golden_dtype t, const void *data, size_t n, double *scratch);
/* Fold `other` into `into`: what golden_stats_add would have given had other's values
 * followed into's, when other was filled starting from a block boundary. */
GOLDEN_API void golden_stats_merge(golden_stats *into, const golden_stats *other);
/* Final values per the contract: NaN when there is no finite element. */
GOLDEN_API double golden_stats_min(const golden_stats *s);
GOLDEN_API double golden_stats_max(const golden_stats *s);
GOLDEN_API double golden_stats_mean(const golden_stats *s);
GOLDEN_API double golden_stats_std(const golden_stats *s); /* population std */

#endif
