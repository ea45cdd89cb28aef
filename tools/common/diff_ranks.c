/* golden-diff on ranks: plan, share, merge (docs/scale.md, "golden-diff"). */
#include "diff_ranks.h"

#include <fnmatch.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ranks.h"
#include "shard.h"

/* Every reference name (reader order: sorted) and the rank that compares it. */
typedef struct {
    const golden_diff_opts *o;
    char **names;
    int *owner;
    size_t n;
    int me;
} plan;

static int cmp_name(const void *key, const void *elem)
{
    return strcmp(key, *(char *const *)elem);
}

/* golden_diff_opts.shard: names the reference does not hold (only in the candidate) are
 * rank 0's. */
static bool mine(const char *name, void *ctx)
{
    const plan *p = ctx;
    char **hit = bsearch(name, p->names, p->n, sizeof *p->names, cmp_name);
    int owner = hit ? p->owner[hit - p->names] : 0;
    return owner == p->me;
}

static bool wanted(const golden_diff_opts *o, const char *name)
{
    for (size_t i = 0; i < o->n_only; i++)
        if (fnmatch(o->only[i], name, 0) == 0)
            return true;
    return o->n_only == 0;
}

static void plan_free(plan *p, char **doing, int ranks)
{
    for (size_t i = 0; p->names && i < p->n; i++)
        free(p->names[i]);
    free(p->names);
    free(p->owner);
    for (int k = 0; doing && k < ranks; k++)
        free(doing[k]);
    free(doing);
}

/* The split: every wanted reference tensor's bytes (its elements times the dtype's size,
 * times the files read) to the ranks, largest first; and each rank's share in words. */
static int make_plan(const golden_diff_opts *o, int ranks, plan *p, char ***doing,
                     golden_error *err)
{
    golden_reader *r = NULL;
    unsigned flags = o->trust_hashes ? GOLDEN_READ_DATA_ONLY : 0;
    if (golden_reader_open_flags(o->reference, flags, &r, err) != 0)
        return -1;
    size_t n = golden_reader_count(r);
    uint64_t *bytes = calloc(n ? n : 1, sizeof *bytes), *load = calloc((size_t)ranks, sizeof *load);
    size_t *count = calloc((size_t)ranks, sizeof *count);
    p->names = calloc(n ? n : 1, sizeof *p->names);
    p->owner = calloc(n ? n : 1, sizeof *p->owner);
    *doing = calloc((size_t)ranks, sizeof **doing);
    int rc = -1;
    if (!bytes || !load || !count || !p->names || !p->owner || !*doing)
        goto oom;
    for (size_t i = 0; i < n; i++) {
        const golden_tensor_info *t = golden_reader_tensor(r, i);
        if (!(p->names[i] = strdup(t->name)))
            goto oom;
        p->n = i + 1;
        bytes[i] = wanted(o, t->name) ? t->count * golden_dtype_size(t->dtype) *
                                            (o->baseline ? 3u : 2u) : 0;
    }
    if (shard_plan(bytes, (const char *const *)p->names, n, ranks, p->owner, load) != 0)
        goto oom;
    for (size_t i = 0; i < n; i++)
        count[p->owner[i]] += wanted(o, p->names[i]);
    for (int k = 0; k < ranks; k++)
        if (asprintf(&(*doing)[k], "comparing %zu of its tensors, %" PRIu64 " bytes", count[k],
                     load[k]) < 0) {
            (*doing)[k] = NULL;
            goto oom;
        }
    rc = 0;
    goto out;
oom:
    golden_fail_what(err, GOLDEN_ENOMEM, NULL, "out of memory planning the ranks' shares");
out:
    golden_reader_close(r);
    free(bytes);
    free(load);
    free(count);
    return rc;
}

/* A rank's share (in its worker process): the library's run on its names, as bytes. */
static int share(void *ctx, void **buf, size_t *len, golden_error *err)
{
    plan *p = ctx;
    golden_diff_opts o = *p->o;
    o.shard = mine;
    o.shard_ctx = p;
    if (p->me != 0)
        o.progress = NULL; /* one progress line: rank 0's share */
    golden_diff_result *res = NULL;
    if (golden_diff_run(&o, &res, err) != 0)
        return -1;
    int rc = golden_diff_pack(res, buf, len, err);
    golden_diff_free(res);
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

/* Rank 0: every rank's bytes into results, merged. */
static int merge(void **bufs, size_t *lens, int ranks, golden_diff_result **out,
                 golden_error *err)
{
    golden_diff_result **parts = calloc((size_t)ranks, sizeof *parts);
    if (!parts)
        return golden_fail_what(err, GOLDEN_ENOMEM, NULL, "out of memory merging the ranks");
    int rc = 0;
    for (int k = 0; k < ranks && rc == 0; k++)
        rc = golden_diff_unpack(bufs[k], lens[k], &parts[k], err);
    if (rc == 0)
        rc = golden_diff_merge(parts, (size_t)ranks, out, err);
    for (int k = 0; k < ranks; k++)
        golden_diff_free(parts[k]);
    free(parts);
    return rc;
}

int diff_ranks_run(const golden_diff_opts *o, golden_diff_result **out, bool *root,
                   golden_error *err)
{
    *root = true;
    *out = NULL;
    if (ranks_start(err) != 0)
        return -1;
    int ranks = ranks_size();
    if (ranks == 1)
        return golden_diff_run(o, out, err);
    *root = ranks_rank() == 0;
    plan p = {.o = o, .me = ranks_rank()};
    char **doing = NULL;
    void **bufs = NULL;
    size_t *lens = NULL;
    golden_error plan_err;
    golden_error_clear(&plan_err);
    int rc = make_plan(o, ranks, &p, &doing, &plan_err) == 0
                 ? ranks_gather(share, &p, doing, &bufs, &lens, err)
                 : ranks_gather(planning_failed, &plan_err, NULL, &bufs, &lens, err);
    if (rc == 0 && *root)
        rc = merge(bufs, lens, ranks, out, err);
    for (int k = 0; bufs && k < ranks; k++)
        free(bufs[k]);
    free(bufs);
    free(lens);
    plan_free(&p, doing, ranks);
    return rc;
}
