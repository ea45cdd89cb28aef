/* The one worker pool of libgolden: a parallel for over n items, the caller being one of the
 * workers. Every multi-threaded module goes through it (or says in its header why not). */
#ifndef GOLDEN_UTIL_POOL_H
#define GOLDEN_UTIL_POOL_H
#include <stddef.h>
#include "golden/error.h"

/* One item: return 0, or GOLDEN_ERR with err filled (err is the worker's own record).
 * worker is 0 .. threads-1 (0 is the calling thread), for per-worker scratch. */
typedef int (*golden_task_fn)(void *ctx, size_t item, int worker, golden_error *err);

/* Run fn(ctx, i, worker, err) for every i in [0, n) on up to `threads` workers (items handed
 * out one at a time, in increasing order). After the first failure no new item starts; that
 * failure (the one of the lowest item among those that failed) is copied into err and
 * GOLDEN_ERR returned. If a thread cannot be started, the remaining workers do the work.
 * threads < 1 counts as 1; it is capped at GOLDEN_POOL_MAX. */
int lg_parallel_for(size_t n, int threads, golden_task_fn fn, void *ctx, golden_error *err);

#define GOLDEN_POOL_MAX 256

/* Each started worker's stack (bytes of address space): 16 MiB, so that recursive work such
 * as schema validation reaches as deep as on a main thread. */
#define GOLDEN_POOL_STACK ((size_t)16 << 20)

/* Online processors (1 .. GOLDEN_POOL_MAX): the default worker count when a caller says 0.
 * Reads no environment variable: tools pass the user's choice (-j, GOLDEN_THREADS) down. */
int lg_cpu_count(void);

#endif
