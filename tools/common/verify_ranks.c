/* golden-dump --verify on ranks: plan, share, merge (docs/scale.md, "golden-dump --verify"). */
#include "verify_ranks.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ranks.h"
#include "shard.h"

typedef struct {
    const char *path;
    const golden_verify_opts *vo;
    const char **names;   /* reader order (sorted) */
    int *owner;
    size_t n;
    int me;
} plan;

static int cmp_name(const void *key, const void *elem)
{
    return strcmp(key, *(const char *const *)elem);
}

static bool mine(const char *name, void *ctx)
{
    const plan *p = ctx;
    const char **hit = bsearch(name, p->names, p->n, sizeof *p->names, cmp_name);
    return hit && p->owner[hit - p->names] == p->me;
}

/* A rank's share in its worker: its own reader on the file, its tensors' verdicts in file
 * order, each as a flag byte then (a problem) its length and text. */
static int share(void *ctx, void **buf, size_t *len, golden_error *err)
{
    plan *p = ctx;
    golden_reader *r = NULL;
    if (golden_reader_open(p->path, &r, err) != GOLDEN_OK)
        return -1;
    golden_verify_opts vo = *p->vo;
    vo.version = GOLDEN_VERIFY_OPTS_VERSION;
    vo.shard = mine;
    vo.shard_ctx = p;
    if (p->me != 0)
        vo.progress = NULL; /* one progress line: rank 0's share */
    char **problems = NULL;
    size_t n = golden_reader_count(r);
    int rc = -1;
    if (n != p->n) {
        golden_fail_what(err, GOLDEN_EINVAL, p->path, "the file changed while it was verified");
        goto out;
    }
    if (golden_verify_run(r, &vo, &problems, err) != GOLDEN_OK)
        goto out;
    size_t total = 1;
    for (size_t i = 0; i < n; i++)
        if (p->owner[i] == p->me)
            total += 1 + (problems[i] ? sizeof(uint64_t) + strlen(problems[i]) : 0);
    unsigned char *b = malloc(total), *w = b;
    if (!b) {
        golden_fail_what(err, GOLDEN_ENOMEM, NULL, "out of memory");
        goto out;
    }
    for (size_t i = 0; i < n; i++) {
        if (p->owner[i] != p->me)
            continue;
        *w++ = problems[i] != NULL;
        if (problems[i]) {
            uint64_t k = strlen(problems[i]);
            memcpy(w, &k, sizeof k);
            memcpy(w + sizeof k, problems[i], (size_t)k);
            w += sizeof k + k;
        }
    }
    *w++ = 'E'; /* the end: a cut-short share is refused */
    *buf = b;
    *len = (size_t)(w - b);
    rc = 0;
out:
    golden_verify_free(problems, n);
    golden_reader_close(r);
    return rc;
}

/* Rank 0: every rank's verdicts back in file order. */
static int merge(const plan *p, void **bufs, size_t *lens, int ranks, char ***out,
                 golden_error *err)
{
    char **problems = calloc(p->n ? p->n : 1, sizeof *problems);
    size_t *at = calloc((size_t)ranks, sizeof *at);
    int rc = 0;
    if (!problems || !at)
        rc = golden_fail_what(err, GOLDEN_ENOMEM, NULL, "out of memory merging the ranks");
    for (size_t i = 0; rc == 0 && i < p->n; i++) {
        int k = p->owner[i];
        const unsigned char *b = bufs[k];
        size_t n = lens[k];
        uint64_t len = 0;
        if (at[k] >= n || b[at[k]] > 1)
            goto bad;
        if (b[at[k]++] == 0)
            continue;
        if (n - at[k] < sizeof len)
            goto bad;
        memcpy(&len, b + at[k], sizeof len);
        at[k] += sizeof len;
        if (len > n - at[k])
            goto bad;
        if (!(problems[i] = strndup((const char *)b + at[k], (size_t)len))) {
            rc = golden_fail_what(err, GOLDEN_ENOMEM, NULL, "out of memory merging the ranks");
            break;
        }
        at[k] += (size_t)len;
        continue;
bad:
        rc = golden_fail_what(err, GOLDEN_EINTERNAL, NULL, "rank %d's verdicts are cut short", k);
    }
    for (int k = 0; rc == 0 && k < ranks; k++)
        if (at[k] + 1 != lens[k] || ((unsigned char *)bufs[k])[at[k]] != 'E')
            rc = golden_fail_what(err, GOLDEN_EINTERNAL, NULL, "rank %d sent more than its "
                                  "verdicts", k);
    free(at);
    if (rc != 0) {
        golden_verify_free(problems, problems ? p->n : 0);
        return -1;
    }
    *out = problems;
    return 0;
}

/* A rank whose plan failed still reports to rank 0 (which waits for every rank). */
static int planning_failed(void *ctx, void **buf, size_t *len, golden_error *err)
{
    (void)buf;
    (void)len;
    *err = *(const golden_error *)ctx;
    return -1;
}

int verify_ranks_run(const char *path, golden_reader *r, const golden_verify_opts *vo,
                     char ***problems, bool *root, golden_error *err)
{
    *root = true;
    *problems = NULL;
    if (ranks_start(err) != 0)
        return -1;
    int ranks = ranks_size();
    if (ranks == 1)
        return golden_verify_run(r, vo, problems, err);
    *root = ranks_rank() == 0;
    size_t n = golden_reader_count(r);
    plan p = {.path = path, .vo = vo, .n = n, .me = ranks_rank()};
    p.names = calloc(n ? n : 1, sizeof *p.names);
    p.owner = calloc(n ? n : 1, sizeof *p.owner);
    uint64_t *bytes = calloc(n ? n : 1, sizeof *bytes), *load = calloc((size_t)ranks, sizeof *load);
    size_t *count = calloc((size_t)ranks, sizeof *count);
    char **doing = calloc((size_t)ranks, sizeof *doing);
    golden_error plan_err;
    golden_error_clear(&plan_err);
    int planned = p.names && p.owner && bytes && load && count && doing;
    for (size_t i = 0; planned && i < n; i++) {
        const golden_tensor_info *t = golden_reader_tensor(r, i);
        p.names[i] = t->name;
        bytes[i] = t->count * golden_dtype_size(t->dtype);
    }
    planned = planned && shard_plan(bytes, p.names, n, ranks, p.owner, load) == 0;
    for (size_t i = 0; planned && i < n; i++)
        count[p.owner[i]]++;
    for (int k = 0; planned && k < ranks; k++)
        if (asprintf(&doing[k], "verifying %zu of its tensors, %" PRIu64 " bytes", count[k],
                     load[k]) < 0) {
            doing[k] = NULL;
            planned = 0;
        }
    if (!planned)
        golden_fail_what(&plan_err, GOLDEN_ENOMEM, NULL, "out of memory planning the ranks' shares");
    void **bufs = NULL;
    size_t *lens = NULL;
    int rc = planned ? ranks_gather(share, &p, doing, &bufs, &lens, err)
                     : ranks_gather(planning_failed, &plan_err, NULL, &bufs, &lens, err);
    if (rc == 0 && *root)
        rc = merge(&p, bufs, lens, ranks, problems, err);
    for (int k = 0; bufs && k < ranks; k++)
        free(bufs[k]);
    free(bufs);
    free(lens);
    for (int k = 0; doing && k < ranks; k++)
        free(doing[k]);
    free(doing);
    free(p.names);
    free(p.owner);
    free(bytes);
    free(load);
    free(count);
    return rc;
}
