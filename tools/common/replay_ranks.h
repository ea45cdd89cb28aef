/* npu-replay run over the ranks of a job (docs/scale.md, "npu-replay run"): the manifest's
 * cases split by tokens, each rank loads its own backend in a worker and runs its share into
 * its own golden and raw file; rank 0 merges them into the single run's golden and raw file.
 * Used only when ranks_size() > 1 (alone, the tool calls golden_replay_run itself). */
#ifndef GOLDEN_TOOLS_REPLAY_RANKS_H
#define GOLDEN_TOOLS_REPLAY_RANKS_H
#include <stdbool.h>

#include "golden/replay.h"
#include "golden/replay_run.h"

/* As golden_backend_load(lo) then golden_replay_run(ro) (ro->backend unused; ro->faults and
 * ro->check_rejection are refused). On rank 0 (*root true): 0 with res, or -1 with err. On the
 * other ranks (*root false): 0 or -1 (rank 0 reports; print nothing). */
int replay_ranks_run(const golden_backend_load_opts *lo, const golden_replay_run_opts *ro,
                     golden_replay_run_result *res, bool *root, golden_error *err);

#endif
