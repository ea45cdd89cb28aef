/* golden-diff's one pass: every chunk of every pair is an item of lg_parallel_for;
 * finished items are merged strictly in item order, so every bit of the report is the same
 * whatever the number of threads or their timing. */
#include "tensor/diff_internal.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/pool.h"

/* A finished item that waits for the items before it to be merged. */
typedef struct {
    golden_cmp_acc acc, bacc;
    double secs;
    bool base_differs;
    long double *cols;              /* this chunk's channel sums, or NULL */
} done_item;

typedef struct {
    golden_reader *ref, *cand, *base;
    golden_diff_job *jobs;
    size_t n_jobs, n_items;
    size_t buf_bytes;
    unsigned char **bufs;           /* 3 per worker */
    double **scratch;               /* 1 per worker: golden_stats_add_raw's block */
    golden_stats **blocks;          /* 3 per worker: a chunk's statistics, block by block */
    size_t max_blocks;              /* room of each */
    done_item **pending;            /* one slot per item, NULL until done */
    size_t frontier;                /* next item to merge */
    pthread_mutex_t lock;
    pthread_cond_t hashed;          /* a chunk was hashed: the next one of its stream may go */
    bool failed;                    /* an item failed: waiting items give up */
    golden_progress *progress;
    unsigned long long done;
} pass_ctx;

static size_t job_of_item(const pass_ctx *p, size_t item)
{
    size_t lo = 0, hi = p->n_jobs;
    while (hi - lo > 1) {
        size_t mid = (lo + hi) / 2;
        if (p->jobs[mid].first_item <= item)
            lo = mid;
        else
            hi = mid;
    }
    return lo;
}

/* Under the lock: fold every finished item at the frontier into its pair. */
static void merge_ready(pass_ctx *p)
{
    while (p->frontier < p->n_items && p->pending[p->frontier]) {
        done_item *d = p->pending[p->frontier];
        golden_diff_job *j = &p->jobs[job_of_item(p, p->frontier)];
        golden_cmp_merge(&j->all, &d->acc);
        if (j->with_base) {
            golden_cmp_merge(&j->ball, &d->bacc);
            j->base_differs |= d->base_differs;
        }
        j->t->seconds += d->secs;
        if (d->cols)
            diff_cols_merge(j, d->cols);
        free(d->cols);
        free(d);
        p->pending[p->frontier] = NULL;
        p->frontier++;
    }
}

/* The stored sha256 of side `side` of the job's tensor. */
static const char *stored_hash(const pass_ctx *p, const golden_diff_job *j, int side)
{
    golden_reader *r = side == 0 ? p->ref : side == 1 ? p->cand : p->base;
    size_t i = side == 0 ? j->ri : side == 1 ? j->ci : j->bi;
    return golden_reader_tensor(r, i)->sha256;
}

/* The statistics of a chunk, one golden_stats per GOLDEN_STATS_BLOCK elements from the
 * chunk's start: computed by any worker, out of order. Folded block by block into the
 * tensor's (golden_stats_merge, in order) they give the bits golden_stats_add_raw over the
 * chunk gives, since each block is reduced on its own and merged into the running values. */
static size_t chunk_block_stats(golden_dtype dt, const void *buf, size_t n, double *scratch,
                                golden_stats *out)
{
    const unsigned char *p = buf;
    size_t w = golden_dtype_size(dt), nb = 0;
    for (size_t off = 0; off < n; off += GOLDEN_STATS_BLOCK, nb++) {
        size_t b = n - off < GOLDEN_STATS_BLOCK ? n - off : GOLDEN_STATS_BLOCK;
        golden_stats_init(&out[nb]);
        golden_stats_add_raw(&out[nb], dt, p + off * w, b, scratch);
    }
    return nb;
}

/* Feed chunk k of one side into its tensor's digest, in chunk order: wait for chunk k - 1
 * of the same stream (items are handed out in order, so it is in a worker's hands), hash
 * outside the lock, and close the digest after the last chunk. Two streams (reference and
 * candidate, or two tensors) hash at once, so hashing runs beside the metrics of the next
 * chunk on the other core. Only the digest and the merge of the chunk's block statistics
 * (nb of them, computed before, outside this order) wait for the stream. */
static int hash_chunk(pass_ctx *p, golden_diff_job *j, int side, size_t k, const void *buf,
                      size_t n, golden_dtype dt, const golden_stats *blocks, size_t nb,
                      golden_error *err)
{
    pthread_mutex_lock(&p->lock);
    while (!p->failed && j->next_hash[side] != k)
        pthread_cond_wait(&p->hashed, &p->lock);
    bool failed = p->failed;
    pthread_mutex_unlock(&p->lock);
    if (failed)
        return golden_fail_what(err, GOLDEN_EINTERNAL, NULL, "stopped after an earlier failure");
    int rc = GOLDEN_OK;
    if (k == 0) {
        golden_stats_init(&j->stats[side]);
        if (!(j->sha[side] = golden_sha256_new(err)))
            rc = GOLDEN_ERR;
    }
    if (rc == GOLDEN_OK)
        rc = golden_sha256_update(j->sha[side], buf, n * golden_dtype_size(dt), err);
    for (size_t b = 0; rc == GOLDEN_OK && b < nb; b++) /* checked against the stored ones after the pass */
        golden_stats_merge(&j->stats[side], &blocks[b]);
    if (rc == GOLDEN_OK && k + 1 == j->n_chunks) {
        golden_diff_tensor *t = j->t;
        rc = golden_sha256_final(j->sha[side], t->hash_data[side], err);
        golden_sha256_free(j->sha[side]);
        j->sha[side] = NULL;
        snprintf(t->hash_stored[side], sizeof t->hash_stored[side], "%s", stored_hash(p, j, side));
        /* a foreign input stores no hash: nothing to check, and never a pass of the check */
        t->hash_bad[side] = rc == GOLDEN_OK && !t->unstored[side] &&
                            strcmp(t->hash_data[side], t->hash_stored[side]) != 0;
    }
    pthread_mutex_lock(&p->lock);
    j->next_hash[side]++;
    pthread_cond_broadcast(&p->hashed);
    pthread_mutex_unlock(&p->lock);
    return rc;
}

static void fail_all(pass_ctx *p)
{
    pthread_mutex_lock(&p->lock);
    p->failed = true;
    pthread_cond_broadcast(&p->hashed);
    pthread_mutex_unlock(&p->lock);
}

static int run_item(void *arg, size_t item, int worker, golden_error *err)
{
    pass_ctx *p = arg;
    unsigned char *rb = p->bufs[3 * worker], *cb = p->bufs[3 * worker + 1],
                  *bb = p->bufs[3 * worker + 2];
    golden_diff_job *j = &p->jobs[job_of_item(p, item)];
    size_t k = item - j->first_item;
    uint64_t first = (uint64_t)k * j->chunk;
    uint64_t n = j->count - first < j->chunk ? j->count - first : j->chunk;
    done_item *d = malloc(sizeof *d);
    if (!d)
        return golden_fail_what(err, GOLDEN_ENOMEM, NULL, "out of memory");
    double t0 = golden_seconds();
    if (golden_reader_read(p->ref, j->ri, first, n, rb, err) != 0 ||
        golden_reader_read(p->cand, j->ci, first, n, cb, err) != 0 ||
        (j->with_base && golden_reader_read(p->base, j->bi, first, n, bb, err) != 0)) {
        free(d);
        fail_all(p);
        return GOLDEN_ERR;
    }
    golden_cmp_acc_init(&d->acc, first);
    d->base_differs = false;
    d->cols = NULL;
    if (j->cols) {
        if (!(d->cols = malloc(diff_cols_size(j) * sizeof *d->cols))) {
            free(d);
            fail_all(p);
            return golden_fail_what(err, GOLDEN_ENOMEM, NULL, "out of memory");
        }
        diff_cols_chunk(j, rb, cb, bb, first, n, d->cols);
    }
    if (j->with_base) {
        golden_cmp_acc_init(&d->bacc, first);
        golden_cmp_add_raw3(&j->setup, &j->bsetup, &d->acc, &d->bacc,
                            j->t->judge.limits.baseline_ratio, rb, cb, bb, (size_t)n);
        size_t wc = golden_dtype_size(j->setup.dtype_cand);
        d->base_differs = j->setup.dtype_cand != j->bsetup.dtype_cand ||
                          memcmp(cb, bb, (size_t)n * wc) != 0;
    } else {
        golden_cmp_add_raw(&j->setup, &d->acc, rb, cb, (size_t)n);
    }
    if (j->hash) {
        const void *bufs[3] = {rb, cb, bb};
        golden_dtype dts[3] = {j->setup.dtype_ref, j->setup.dtype_cand, j->bsetup.dtype_cand};
        size_t nb[3] = {0, 0, 0};
        for (int side = 0; side < (j->with_base ? 3 : 2); side++)
            nb[side] = chunk_block_stats(dts[side], bufs[side], (size_t)n, p->scratch[worker],
                                         p->blocks[3 * worker + side]);
        for (int side = 0; side < (j->with_base ? 3 : 2); side++)
            if (hash_chunk(p, j, side, k, bufs[side], (size_t)n, dts[side],
                           p->blocks[3 * worker + side], nb[side], err) != GOLDEN_OK) {
                free(d->cols);
                free(d);
                fail_all(p);
                return GOLDEN_ERR;
            }
    }
    d->secs = golden_seconds() - t0;
    pthread_mutex_lock(&p->lock);
    p->pending[item] = d;
    merge_ready(p);
    if (p->progress && p->progress->enabled) {
        p->done += n;
        golden_progress_update(p->progress, p->done);
    }
    pthread_mutex_unlock(&p->lock);
    return GOLDEN_OK;
}

int lg_diff_pass(golden_reader *ref, golden_reader *cand, golden_reader *base,
                     golden_diff_job *jobs, size_t n_jobs, size_t n_items, size_t buf_bytes,
                     int threads, golden_progress *progress, unsigned long long total,
                     golden_error *err)
{
    pass_ctx p;
    memset(&p, 0, sizeof p);
    p.ref = ref;
    p.cand = cand;
    p.base = base;
    p.jobs = jobs;
    p.n_jobs = n_jobs;
    p.n_items = n_items;
    p.buf_bytes = buf_bytes;
    p.progress = progress;
    int nt = threads > 0 ? threads : lg_cpu_count();
    if ((size_t)nt > n_items)
        nt = n_items ? (int)n_items : 1;
    if (nt > GOLDEN_POOL_MAX)
        nt = GOLDEN_POOL_MAX;
    int rc = GOLDEN_ERR;
    p.bufs = calloc(3 * (size_t)nt, sizeof *p.bufs);
    p.pending = calloc(n_items ? n_items : 1, sizeof *p.pending);
    p.scratch = calloc((size_t)nt, sizeof *p.scratch);
    p.blocks = calloc(3 * (size_t)nt, sizeof *p.blocks);
    /* a chunk holds at most buf_bytes elements (one byte each at least) */
    p.max_blocks = buf_bytes / GOLDEN_STATS_BLOCK + 1;
    if (!p.bufs || !p.pending || !p.scratch || !p.blocks)
        goto oom;
    for (int w = 0; w < nt; w++) {
        if (!(p.scratch[w] = malloc(GOLDEN_STATS_BLOCK * sizeof(double))))
            goto oom;
        for (int side = 0; side < 3; side++)
            if ((side < 2 || base) &&
                !(p.blocks[3 * w + side] = malloc(p.max_blocks * sizeof(golden_stats))))
                goto oom;
        p.bufs[3 * w] = malloc(buf_bytes);
        p.bufs[3 * w + 1] = malloc(buf_bytes);
        p.bufs[3 * w + 2] = base ? malloc(buf_bytes) : NULL;
        if (!p.bufs[3 * w] || !p.bufs[3 * w + 1] || (base && !p.bufs[3 * w + 2]))
            goto oom;
    }
    if (pthread_mutex_init(&p.lock, NULL) != 0) {
        golden_fail_what(err, GOLDEN_EIO, NULL, "cannot create a mutex");
        goto out;
    }
    if (pthread_cond_init(&p.hashed, NULL) != 0) {
        pthread_mutex_destroy(&p.lock);
        golden_fail_what(err, GOLDEN_EIO, NULL, "cannot create a condition variable");
        goto out;
    }
    if (progress) {
        golden_progress_start(progress, "golden-diff", total);
        progress->unit = "elements";
    }
    rc = lg_parallel_for(n_items, nt, run_item, &p, err);
    if (progress)
        golden_progress_end(progress);
    pthread_cond_destroy(&p.hashed);
    pthread_mutex_destroy(&p.lock);
    for (size_t k = 0; k < n_jobs; k++)
        for (int side = 0; side < 3; side++) {
            golden_sha256_free(jobs[k].sha[side]); /* left open only after a failure */
            jobs[k].sha[side] = NULL;
        }
    goto out;
oom:
    golden_fail_what(err, GOLDEN_ENOMEM, NULL, "out of memory for chunk buffers");
out:
    for (size_t i = 0; p.pending && i < n_items; i++) {
        if (p.pending[i])
            free(p.pending[i]->cols);
        free(p.pending[i]);
    }
    free(p.pending);
    for (int w = 0; p.bufs && w < 3 * nt; w++)
        free(p.bufs[w]);
    free(p.bufs);
    for (int w = 0; p.scratch && w < nt; w++)
        free(p.scratch[w]);
    free(p.scratch);
    for (int w = 0; p.blocks && w < 3 * nt; w++)
        free(p.blocks[w]);
    free(p.blocks);
    return rc;
}
