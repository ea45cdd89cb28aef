/* A rank's scratch folders (npu-replay run on ranks, docs/scale.md "Per-rank files"): made
 * exclusively beside an output, removed with everything in them when the rank ends, when it is
 * told to stop (SIGTERM, SIGINT, SIGHUP: mpirun's SIGTERM to the survivors of a dead rank; the
 * tools' handler in cli.c calls scratch_on_signal), and by golden-mpirun after mpirun when the
 * rank itself was killed. Nothing else is ever removed. */
#ifndef GOLDEN_TOOLS_SCRATCH_H
#define GOLDEN_TOOLS_SCRATCH_H
#include <sys/types.h>

#include "golden/error.h"

/* A new folder PREFIX.XXXXXX (mkdtemp: never an existing name, never through a symbolic link),
 * registered for removal; its path in *dir (malloc'ed). With GOLDEN_MPIRUN_SCRATCH set (by
 * golden-mpirun) its absolute path is appended to that file as one line. 0, or -1 with err. */
int scratch_make(const char *prefix, char **dir, golden_error *err);
/* The worker process whose files are in the folders: killed and reaped before they are removed
 * on a signal (0: none). */
void scratch_set_worker(pid_t pid);
/* Remove every registered folder with the files in it (one level). */
void scratch_clean(void);
/* From a signal handler (system calls only): kill and reap the worker, then as scratch_clean. */
void scratch_on_signal(void);
/* In a rank's worker process: the folders are its rank's to remove, never the worker's. */
void scratch_disown(void);

#endif
