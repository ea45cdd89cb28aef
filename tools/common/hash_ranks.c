/* manifest-verify --seal and artifact hashing on ranks: plan, share, merge (docs/scale.md). */
#include "hash_ranks.h"

#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "golden/hash.h"
#include "ranks.h"
#include "shard.h"

typedef struct {
    const char *const *paths;
    size_t n;
    const int *owner;
    int me, threads;
} plan;

/* A rank's share in its worker: its files' digests, in the check's order, then an end mark. */
static int share(void *ctx, void **buf, size_t *len, golden_error *err)
{
    const plan *p = ctx;
    size_t k = 0;
    for (size_t i = 0; i < p->n; i++)
        k += p->owner[i] == p->me;
    const char **mine = calloc(k ? k : 1, sizeof *mine);
    char (*hex)[65] = calloc(k ? k : 1, sizeof *hex);
    unsigned char *b = malloc(k * 64 + 1);
    if (!mine || !hex || !b) {
        free(mine);
        free(hex);
        free(b);
        return golden_fail_what(err, GOLDEN_ENOMEM, NULL, "out of memory");
    }
    for (size_t i = 0, j = 0; i < p->n; i++)
        if (p->owner[i] == p->me)
            mine[j++] = p->paths[i];
    int rc = golden_sha256_files(mine, k, hex, p->threads, err);
    for (size_t j = 0; rc == 0 && j < k; j++)
        memcpy(b + 64 * j, hex[j], 64);
    free(mine);
    free(hex);
    if (rc != 0) {
        free(b);
        return -1;
    }
    b[64 * k] = 'E';
    *buf = b;
    *len = 64 * k + 1;
    return 0;
}

/* Rank 0: every rank's digests back in the check's order; each must be whole. */
static int merge(const plan *p, void **bufs, size_t *lens, int ranks, char (*hexes)[65],
                 golden_error *err)
{
    size_t *at = calloc((size_t)ranks, sizeof *at);
    if (!at)
        return golden_fail_what(err, GOLDEN_ENOMEM, NULL, "out of memory merging the ranks");
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < p->n; i++) {
        int k = p->owner[i];
        if (lens[k] < at[k] + 64 + 1) {
            rc = golden_fail_what(err, GOLDEN_EINTERNAL, NULL, "rank %d's digests are cut short",
                                  k);
            break;
        }
        memcpy(hexes[i], (const char *)bufs[k] + at[k], 64);
        hexes[i][64] = '\0';
        at[k] += 64;
        if (!golden_is_sha256_hex(hexes[i]))
            rc = golden_fail_what(err, GOLDEN_EINTERNAL, NULL, "rank %d sent a damaged digest", k);
    }
    for (int k = 0; rc == 0 && k < ranks; k++)
        if (at[k] + 1 != lens[k] || ((const unsigned char *)bufs[k])[at[k]] != 'E')
            rc = golden_fail_what(err, GOLDEN_EINTERNAL, NULL, "rank %d sent more than its "
                                  "digests", k);
    free(at);
    return rc;
}

/* A rank whose plan failed still reports to rank 0 (which waits for every rank). */
static int planning_failed(void *ctx, void **buf, size_t *len, golden_error *err)
{
    (void)buf;
    (void)len;
    *err = *(const golden_error *)ctx;
    return -1;
}

int hash_ranks_files(void *ctx, const char *const *paths, size_t n, char (*hexes)[65],
                     int threads, golden_error *err)
{
    hash_ranks_ctx *hc = ctx;
    hc->root = true;
    hc->called = true;
    if (ranks_start(err) != 0)
        return -1;
    int ranks = ranks_size();
    if (ranks == 1)
        return n ? golden_sha256_files(paths, n, hexes, threads, err) : 0;
    int me = ranks_rank();
    int *owner = calloc(n ? n : 1, sizeof *owner);
    uint64_t *bytes = calloc(n ? n : 1, sizeof *bytes), *load = calloc((size_t)ranks, sizeof *load);
    size_t *count = calloc((size_t)ranks, sizeof *count);
    char **doing = calloc((size_t)ranks, sizeof *doing);
    golden_error plan_err;
    golden_error_clear(&plan_err);
    int planned = owner && bytes && load && count && doing;
    for (size_t i = 0; planned && i < n; i++) {
        struct stat st; /* an unreadable file weighs nothing here; its rank reports it */
        bytes[i] = stat(paths[i], &st) == 0 && st.st_size > 0 ? (uint64_t)st.st_size : 0;
    }
    planned = planned && shard_plan(bytes, (const char *const *)paths, n, ranks, owner, load) == 0;
    for (size_t i = 0; planned && i < n; i++)
        count[owner[i]]++;
    for (int k = 0; planned && k < ranks; k++)
        if (asprintf(&doing[k], "hashing %zu of its files, %" PRIu64 " bytes", count[k],
                     load[k]) < 0) {
            doing[k] = NULL;
            planned = 0;
        }
    if (!planned)
        golden_fail_what(&plan_err, GOLDEN_ENOMEM, NULL, "out of memory planning the ranks' shares");
    plan p = {.paths = paths, .n = n, .owner = owner, .me = me, .threads = threads};
    void **bufs = NULL;
    size_t *lens = NULL;
    int rc = planned ? ranks_gather(share, &p, doing, &bufs, &lens, err)
                     : ranks_gather(planning_failed, &plan_err, NULL, &bufs, &lens, err);
    if (rc == 0 && me == 0)
        rc = merge(&p, bufs, lens, ranks, hexes, err);
    if (me != 0) { /* the check stops here on this rank: rank 0 carries it on */
        hc->root = false;
        rc = golden_fail_what(err, GOLDEN_EINTERNAL, NULL, "rank %d: rank 0 carries the check on",
                              me);
    }
    for (int k = 0; bufs && k < ranks; k++)
        free(bufs[k]);
    free(bufs);
    free(lens);
    for (int k = 0; doing && k < ranks; k++)
        free(doing[k]);
    free(doing);
    free(owner);
    free(bytes);
    free(load);
    free(count);
    return rc;
}
