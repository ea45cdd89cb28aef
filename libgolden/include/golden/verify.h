/* Checks of a golden file against itself (every tensor re-read, hashed and measured again and
 * compared with its attributes) and the file's description as JSON (calculet-golden/v1 listing). */
#ifndef GOLDEN_VERIFY_H
#define GOLDEN_VERIFY_H
#include "golden/api.h"
#include <jansson.h>
#include "golden/error.h"
#include "golden/report.h"
#include "golden/store.h"

/* Options of golden_verify_run (versioned: set version to GOLDEN_VERIFY_OPTS_VERSION). */
#define GOLDEN_VERIFY_OPTS_VERSION 2
typedef struct {
    unsigned version;
    int threads;                /* tensors verified at once; 0 = lg_cpu_count() */
    golden_progress *progress;  /* may be NULL: advanced by bytes verified */
    /* version 2: one process's share of a verification split over several (docs/scale.md):
     * only the tensors for which shard(name, shard_ctx) is true are re-read; the others'
     * *problems entries are NULL and say nothing (the caller knows its split). NULL (or
     * version 1): every tensor. */
    bool (*shard)(const char *name, void *shard_ctx);
    void *shard_ctx;
} golden_verify_opts;

/* Recompute every tensor of r (sha256 and statistics from its data, in one pass each) on
 * opts->threads workers. On success *problems is an array of golden_reader_count(r) entries:
 * NULL when the tensor's attributes agree with its data, else a "; "-joined list of
 * disagreements. Mean and std may differ from the data's by the rounding bound of a blocked
 * summation (goldens summed in another order); everything else must be equal. Returns -1
 * (err set) when data cannot be read. */
GOLDEN_API int golden_verify_run(golden_reader *r, const golden_verify_opts *opts, char ***problems,
                      golden_error *err);
/* golden_verify_run on lg_cpu_count() workers. On success *problems is an array
 * of golden_reader_count(r) entries: NULL when the tensor's attributes agree with its data,
 * else a "; "-joined list of disagreements. Returns -1 (err set) when data cannot be read.
 * `prog` (may be NULL) is advanced by bytes verified. */
GOLDEN_API int golden_verify_tensors(golden_reader *r, char ***problems, golden_progress *prog,
                          golden_error *err);
GOLDEN_API void golden_verify_free(char **problems, size_t n);

/* One tensor's attributes as an object of the calculet-golden/v1 listing (new reference). */
GOLDEN_API json_t *golden_tensor_json(const golden_tensor_info *t);
/* The listing's root (schema, file, attributes) with an empty "tensors" array returned in
 * *tensors (borrowed) for the caller to fill; NULL when out of memory. */
GOLDEN_API json_t *golden_file_json(golden_reader *r, json_t **tensors);

#endif
