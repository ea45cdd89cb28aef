/* Largest-first greedy split by bytes (docs/scale.md, "What is sharded"). */
#include "shard.h"

#include <stdlib.h>
#include <string.h>

typedef struct {
    uint64_t bytes;
    const char *name;
    size_t index;
} item;

static int larger_first(const void *pa, const void *pb)
{
    const item *a = pa, *b = pb;
    if (a->bytes != b->bytes)
        return a->bytes > b->bytes ? -1 : 1;
    return strcmp(a->name, b->name);
}

int shard_plan(const uint64_t *bytes, const char *const *names, size_t n, int ranks, int *owner,
               uint64_t *load)
{
    if (ranks < 1)
        ranks = 1;
    item *v = calloc(n ? n : 1, sizeof *v);
    uint64_t *sum = calloc((size_t)ranks, sizeof *sum);
    if (!v || !sum) {
        free(v);
        free(sum);
        return -1;
    }
    for (size_t i = 0; i < n; i++)
        v[i] = (item){bytes[i], names[i], i};
    qsort(v, n, sizeof *v, larger_first);
    for (size_t i = 0; i < n; i++) {
        int best = 0;
        for (int k = 1; k < ranks; k++)
            if (sum[k] < sum[best])
                best = k;
        owner[v[i].index] = best;
        sum[best] += v[i].bytes;
    }
    if (load)
        memcpy(load, sum, (size_t)ranks * sizeof *sum);
    free(v);
    free(sum);
    return 0;
}
