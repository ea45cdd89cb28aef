/* One process: the ranks layer of the normal build (no MPI; tools/mpi/ranks_mpi.c replaces
 * this file in make MPI=1). */
#include "ranks.h"
#include "scratch.h"

#include <stdlib.h>

int ranks_start(golden_error *err)
{
    (void)err;
    return 0;
}

bool ranks_launched(void)
{
    return false;
}

int ranks_size(void)
{
    return 1;
}

int ranks_rank(void)
{
    return 0;
}

int ranks_gather(ranks_work work, void *ctx, char *const *doing, void ***bufs, size_t **lens,
                 golden_error *err)
{
    (void)doing;
    *bufs = calloc(1, sizeof **bufs);
    *lens = calloc(1, sizeof **lens);
    if (!*bufs || !*lens || work(ctx, &(*bufs)[0], &(*lens)[0], err) != 0) {
        if (!*bufs || !*lens)
            golden_fail_what(err, GOLDEN_ENOMEM, NULL, "out of memory");
        free(*bufs);
        free(*lens);
        *bufs = NULL;
        *lens = NULL;
        return -1;
    }
    return 0;
}

int ranks_finish(int status)
{
    scratch_clean();
    return status;
}
