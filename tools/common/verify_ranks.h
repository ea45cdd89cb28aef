/* golden-dump --verify over the ranks of a job (docs/scale.md): the tensors split by bytes,
 * each rank re-reads its share in a worker, rank 0 puts the verdicts back in file order.
 * One process (no launcher, one rank): golden_verify_run. */
#ifndef GOLDEN_TOOLS_VERIFY_RANKS_H
#define GOLDEN_TOOLS_VERIFY_RANKS_H
#include <stdbool.h>

#include "golden/verify.h"

/* As golden_verify_run on r (opened from path). On rank 0 (*root true): the whole file's
 * *problems. On the other ranks (*root false): 0 with *problems NULL, or -1 (rank 0
 * reports; print nothing). */
int verify_ranks_run(const char *path, golden_reader *r, const golden_verify_opts *vo,
                     char ***problems, bool *root, golden_error *err);

#endif
