/* manifest-verify's hashing over the ranks of a job (docs/scale.md): the files split by bytes,
 * each rank hashes its share in a worker, rank 0 puts the digests back in the check's order.
 * One process (no launcher, one rank): golden_sha256_files. */
#ifndef GOLDEN_TOOLS_HASH_RANKS_H
#define GOLDEN_TOOLS_HASH_RANKS_H
#include <stdbool.h>
#include <stddef.h>

#include "golden/error.h"

/* What a check's hashing hook needs to know (golden_experiment_opts.hash_files). */
typedef struct {
    bool root;   /* set by hash_ranks_files: false on every rank but 0 after the hashes */
    bool called; /* set by hash_ranks_files: the check reached its hashes */
} hash_ranks_ctx;

/* golden_experiment_opts.hash_files (ctx a hash_ranks_ctx). On rank 0 (or alone): every
 * path's digest, as golden_sha256_files. On the other ranks: -1 once their share went to
 * rank 0 (ctx->root false; the check stops there, rank 0 reports; print nothing). */
int hash_ranks_files(void *ctx, const char *const *paths, size_t n, char (*hexes)[65],
                     int threads, golden_error *err);

#endif
