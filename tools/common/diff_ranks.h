/* golden-diff over the ranks of a job (docs/scale.md): the reference's tensors split by
 * bytes, each rank's share compared by the library in a worker, the results merged on rank
 * 0 into the single-process result. One process (no launcher, one rank): golden_diff_run. */
#ifndef GOLDEN_TOOLS_DIFF_RANKS_H
#define GOLDEN_TOOLS_DIFF_RANKS_H
#include <stdbool.h>

#include "golden/diff.h"

/* On rank 0 (*root true): 0 with *out the whole run's result, or -1 with err (naming the rank
 * that failed and what it was doing). On the other ranks (*root false): 0 with *out NULL, or
 * -1 (rank 0 reports; print nothing). */
int diff_ranks_run(const golden_diff_opts *o, golden_diff_result **out, bool *root,
                   golden_error *err);

#endif
