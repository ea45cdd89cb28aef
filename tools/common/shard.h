/* Work split over the ranks of a job (docs/scale.md): items balanced by bytes, the same
 * assignment for the same inputs whatever the machine. No MPI here: tools/common/ranks.h
 * carries the work between processes. */
#ifndef GOLDEN_TOOLS_SHARD_H
#define GOLDEN_TOOLS_SHARD_H
#include <stddef.h>
#include <stdint.h>

/* owner[i] (0..ranks-1) for each of n items of bytes[i], named names[i] (unique): largest
 * first (ties by name), each to the rank with the fewest bytes so far (ties: the lowest
 * rank). load (may be NULL) gets each rank's bytes. 0, or -1 out of memory. */
int shard_plan(const uint64_t *bytes, const char *const *names, size_t n, int ranks, int *owner,
               uint64_t *load);

#endif
