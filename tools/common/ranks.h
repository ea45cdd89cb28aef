/* The ranks of a job: in the MPI build (make MPI=1, tools/mpi/ranks_mpi.c) the processes
 * mpirun or srun started, else (tools/common/ranks.c) one process. docs/scale.md. */
#ifndef GOLDEN_TOOLS_RANKS_H
#define GOLDEN_TOOLS_RANKS_H
#include <stdbool.h>
#include <stddef.h>

#include "golden/error.h"

/* Join the job (MPI_Init when a launcher started this process; nothing otherwise). Safe to
 * call more than once. 0, or -1 with err set. */
int ranks_start(golden_error *err);
/* A launcher (mpirun, srun) started this process (the MPI build only). Open MPI hands its
 * ranks a pseudo-terminal whatever mpirun's own output is: tools do not colour then. */
bool ranks_launched(void);
int ranks_size(void);   /* 1 before ranks_start or without a launcher */
int ranks_rank(void);   /* 0 likewise */

/* One rank's share, run in a worker process (a crash there is reported by its rank): the
 * result as bytes, malloc'ed. 0, or -1 with err set. */
typedef int (*ranks_work)(void *ctx, void **buf, size_t *len, golden_error *err);

/* Every rank runs work(ctx). On rank 0: 0 with bufs[k], lens[k] for every rank k (free each
 * and the arrays), or -1 with err naming the lowest rank that failed and doing[k] (what it was
 * doing, one phrase per rank; rank 0's only) after every rank reported. On the other ranks: 0
 * once their share went to rank 0 (*bufs NULL), whatever happened to it. */
int ranks_gather(ranks_work work, void *ctx, char *const *doing, void ***bufs, size_t **lens,
                 golden_error *err);

/* The end of a run: every rank returns rank 0's status (the others' are ignored) and leaves
 * the job. */
int ranks_finish(int status);

#endif
