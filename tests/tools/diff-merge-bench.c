/* Bench helper (bench/mpi-golden-diff.sh): the merge cost of a sharded golden-diff without
 * MPI. Runs REF against CAND as SHARDS shards (names split by a hash), then times packing
 * every shard's result, unpacking it and merging them, and prints one line:
 * "tensors T shards S packed_bytes B run_s R pack_s P unpack_s U merge_s M".
 * diff-merge-bench REF.h5 CAND.h5 SHARDS */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "golden/diff.h"
#include "golden/settings.h"

typedef struct {
    unsigned k, n;
} split;

static bool in_split(const char *name, void *ctx)
{
    const split *s = ctx;
    unsigned h = 5381;
    for (const char *p = name; *p; p++)
        h = h * 33 + (unsigned char)*p;
    return h % s->n == s->k;
}

static int die(const golden_error *e)
{
    fprintf(stderr, "diff-merge-bench: %s: %s\n", e->where, e->what);
    return 2;
}

int main(int argc, char **argv)
{
    if (argc != 4 || atoi(argv[3]) < 1 || atoi(argv[3]) > 1024) {
        fputs("usage: diff-merge-bench REF.h5 CAND.h5 SHARDS\n", stderr);
        return 2;
    }
    unsigned n = (unsigned)atoi(argv[3]);
    golden_error e;
    golden_error_clear(&e);
    golden_policy *pol = golden_policy_new();
    golden_diff_result **parts = calloc(n, sizeof *parts), *m = NULL;
    void **bufs = calloc(n, sizeof *bufs);
    size_t *lens = calloc(n, sizeof *lens), packed = 0;
    if (!pol || !parts || !bufs || !lens)
        return 2;
    double run = 0, pack = 0, unpack = 0, t;
    for (unsigned k = 0; k < n; k++) {
        split s = {k, n};
        golden_diff_opts o = {.version = GOLDEN_DIFF_OPTS_VERSION,
                              .reference = argv[1], .candidate = argv[2], .policy = pol,
                              .shard = in_split, .shard_ctx = &s};
        golden_diff_result *r = NULL;
        t = golden_seconds();
        if (golden_diff_run(&o, &r, &e) != 0)
            return die(&e);
        run += golden_seconds() - t;
        t = golden_seconds();
        if (golden_diff_pack(r, &bufs[k], &lens[k], &e) != 0)
            return die(&e);
        pack += golden_seconds() - t;
        packed += lens[k];
        golden_diff_free(r);
    }
    t = golden_seconds();
    for (unsigned k = 0; k < n; k++)
        if (golden_diff_unpack(bufs[k], lens[k], &parts[k], &e) != 0)
            return die(&e);
    unpack = golden_seconds() - t;
    t = golden_seconds();
    if (golden_diff_merge(parts, n, &m, &e) != 0)
        return die(&e);
    double merge = golden_seconds() - t;
    printf("tensors %zu shards %u packed_bytes %zu run_s %.6f pack_s %.6f unpack_s %.6f "
           "merge_s %.6f\n", m->n, n, packed, run, pack, unpack, merge);
    for (unsigned k = 0; k < n; k++) {
        golden_diff_free(parts[k]);
        free(bufs[k]);
    }
    golden_diff_free(m);
    free(parts);
    free(bufs);
    free(lens);
    golden_policy_free(pol);
    return 0;
}
