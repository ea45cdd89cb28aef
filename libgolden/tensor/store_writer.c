/* The calculet-golden/v1 writer: streams each tensor into HDF5 while one helper thread hashes
 * and another measures it, then writes its attributes; the file appears only on commit. */
#include <errno.h>
#include <fcntl.h>
#include <fcntl.h>
#include <hdf5.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "golden/hash.h"
#include "golden/report.h"
#include "golden/store.h"
#include "tensor/store_private.h"
#include "util/guard.h"
#include "util/pool.h"
#include "util/strmap.h"
#include "util/vec.h"

/* ------------------------------------------------------------------ writer */

/* 1 MiB: a buffer stays in the helper threads' caches between read, hash, statistics and write;
 * with 4 MiB buffers a dump took 1.6x the wall time and twice the system time (docs/performance.md) */
#define WRITE_BUF (1u << 20)
/* elements per statistics sub-block: the statistics' own block, so that merging sub-blocks in
 * order gives the same bits as the reader's recompute (golden/stats.h) */
#define STATS_SUB GOLDEN_STATS_BLOCK

/* Names already used in the file (the strmap borrows keys: the set owns them). */
typedef struct {
    golden_strmap map;
    char **owned;
    size_t n, cap;
} name_set;

static int name_set_has(const name_set *s, const char *name, size_t n)
{
    return lg_strmap_get(&s->map, name, n, NULL);
}

static int name_set_add(name_set *s, const char *name, size_t n)
{
    if (name_set_has(s, name, n))
        return 0;
    if (VEC_GROW(s->owned, s->n, s->cap, 64) != 0)
        return -1;
    char *k = strndup(name, n);
    if (!k)
        return -1;
    if (lg_strmap_put(&s->map, k, n, 0, NULL) < 0) {
        free(k);
        return -1;
    }
    s->owned[s->n++] = k;
    return 0;
}

static void name_set_free(name_set *s)
{
    lg_strmap_free(&s->map);
    for (size_t i = 0; i < s->n; i++)
        free(s->owned[i]);
    free(s->owned);
    *s = (name_set){0};
}

struct golden_writer;

/* One stage of the writer's pipeline on its own thread (hashing, statistics): it is handed
 * each full buffer and the caller waits for it before the buffer is reused. Without a thread
 * (GOLDEN_THREADS=1) the stage runs inline. */
typedef struct {
    pthread_t tid;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    const unsigned char *data;
    size_t len;
    int pending, quit, failed, started;
    int (*run)(struct golden_writer *w, const unsigned char *data, size_t len);
    struct golden_writer *w;
} stage;

struct golden_writer {
    char *path, *tmp;
    bool force;
    int gzip;
    hid_t file;
    hid_t bf16_type;      /* the committed /bfloat16 type, -1 until the first bf16 tensor */
    int threads;
    name_set names, groups;
    /* the tensor being written */
    bool in_tensor;
    golden_tensor_info cur;
    hid_t dset, ftype;
    uint64_t bytes_expected, bytes_done, elems_written;
    unsigned char *buf;
    size_t fill;
    double *f64[3];       /* conversion scratch: statistics stage, hash stage, caller */
    golden_stats stats;
    /* statistics of the buffer being flushed, in sub-blocks that any of the three threads
     * may take; merged in sub-block order, so the result does not depend on who took what */
    golden_stats sub[WRITE_BUF / STATS_SUB];
    size_t nsub, sub_elems;
    const unsigned char *sub_data;
    _Atomic size_t next_sub;
    golden_sha256 *sha;
    stage hash_stage, stats_stage;
    int kick_fd;          /* the temporary file, to start its write-back early; -1 if none */
    uint64_t unkicked;    /* bytes handed to HDF5 since write-back was last started */
};

/* Take statistics sub-blocks of the buffer being flushed until none is left. */
static void stats_pull(struct golden_writer *w, double *scratch)
{
    size_t width = golden_dtype_size(w->cur.dtype);
    for (;;) {
        size_t i = atomic_fetch_add(&w->next_sub, 1);
        if (i >= w->nsub)
            return;
        size_t first = i * STATS_SUB;
        size_t n = w->sub_elems - first < STATS_SUB ? w->sub_elems - first : STATS_SUB;
        golden_stats_init(&w->sub[i]);
        golden_stats_add_raw(&w->sub[i], w->cur.dtype, w->sub_data + first * width, n, scratch);
    }
}

static int run_hash(struct golden_writer *w, const unsigned char *data, size_t len)
{
    int rc = golden_sha256_update(w->sha, data, len, NULL);
    stats_pull(w, w->f64[1]); /* then help with the statistics */
    return rc;
}

static int run_stats(struct golden_writer *w, const unsigned char *data, size_t len)
{
    (void)data;
    (void)len;
    stats_pull(w, w->f64[0]);
    return GOLDEN_OK;
}

static void *stage_main(void *arg)
{
    stage *st = arg;
    pthread_mutex_lock(&st->mu);
    for (;;) {
        while (!st->pending && !st->quit)
            pthread_cond_wait(&st->cv, &st->mu);
        if (st->quit)
            break;
        const unsigned char *data = st->data;
        size_t len = st->len;
        pthread_mutex_unlock(&st->mu);
        int bad = st->run(st->w, data, len) != GOLDEN_OK;
        pthread_mutex_lock(&st->mu);
        st->failed |= bad;
        st->pending = 0;
        pthread_cond_broadcast(&st->cv);
    }
    pthread_mutex_unlock(&st->mu);
    return NULL;
}

static void stage_init(stage *st, struct golden_writer *w,
                       int (*run)(struct golden_writer *, const unsigned char *, size_t),
                       bool threaded)
{
    st->w = w;
    st->run = run;
    pthread_mutex_init(&st->mu, NULL);
    pthread_cond_init(&st->cv, NULL);
    if (threaded && pthread_create(&st->tid, NULL, stage_main, st) == 0)
        st->started = 1;
}

static void stage_post(stage *st, const unsigned char *data, size_t len)
{
    if (!st->started) {
        st->failed |= st->run(st->w, data, len) != GOLDEN_OK;
        return;
    }
    pthread_mutex_lock(&st->mu);
    st->data = data;
    st->len = len;
    st->pending = 1;
    pthread_cond_broadcast(&st->cv);
    pthread_mutex_unlock(&st->mu);
}

static void stage_wait(stage *st)
{
    if (!st->started)
        return;
    pthread_mutex_lock(&st->mu);
    while (st->pending)
        pthread_cond_wait(&st->cv, &st->mu);
    pthread_mutex_unlock(&st->mu);
}

static void stage_stop(stage *st)
{
    if (!st->run)
        return; /* never initialised */
    if (st->started) {
        pthread_mutex_lock(&st->mu);
        st->quit = 1;
        pthread_cond_broadcast(&st->cv);
        pthread_mutex_unlock(&st->mu);
        pthread_join(st->tid, NULL);
    }
    pthread_mutex_destroy(&st->mu);
    pthread_cond_destroy(&st->cv);
}

void golden_tensor_info_clear(golden_tensor_info *t)
{
    free(t->name);
    free(t->op_family);
    free(t->source);
    t->name = t->op_family = t->source = NULL;
}

static char *iso_now(char *buf, size_t n)
{
    time_t t = time(NULL);
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(buf, n, "%Y-%m-%dT%H:%M:%SZ", &tm);
    return buf;
}

int golden_writer_open(const char *path, const golden_writer_opts *opts, golden_writer **out,
                       golden_error *err)
{
    *out = NULL;
    if (opts && opts->version != GOLDEN_WRITER_OPTS_VERSION)
        return golden_fail_what(err, GOLDEN_EINVAL, path,
                                "writer options of version %u (this libgolden knows %u)",
                                opts->version, GOLDEN_WRITER_OPTS_VERSION);
    bool force = opts && opts->force;
    /* a golden is a regular file: never "-", never a device or FIFO replaced by a rename */
    if (golden_outfile_check_regular(path, force, err) != GOLDEN_OK)
        return GOLDEN_ERR;
    golden_writer *w = calloc(1, sizeof *w);
    if (!w)
        return golden_fail_what(err, GOLDEN_ENOMEM, path, "out of memory");
    w->file = w->dset = w->ftype = w->bf16_type = -1;
    w->kick_fd = -1;
    w->threads = opts && opts->threads > 0 ? opts->threads : lg_cpu_count();
    w->force = force;
    w->gzip = opts ? opts->gzip : 0;
    if (w->gzip < 0 || w->gzip > 9) {
        free(w);
        return golden_fail_what(err, GOLDEN_EINVAL, NULL, "--gzip level must be 0..9");
    }
    w->path = strdup(path);
    w->buf = malloc(WRITE_BUF);
    for (int k = 0; k < 3; k++)
        w->f64[k] = malloc(sizeof(double) * STATS_SUB);
    w->sha = golden_sha256_new(err);
    if (!w->path || !w->buf || !w->f64[0] || !w->f64[1] || !w->f64[2] || !w->sha) {
        golden_writer_abort(w);
        return golden_fail_what(err, GOLDEN_ENOMEM, path, "out of memory");
    }
    int fd = golden_tmpfile_beside(path, &w->tmp, err);
    if (fd < 0) {
        golden_writer_abort(w);
        return GOLDEN_ERR;
    }
    w->kick_fd = fd;
    bool threaded = w->threads > 1;
    stage_init(&w->hash_stage, w, run_hash, threaded);
    stage_init(&w->stats_stage, w, run_stats, w->threads > 2);

    lg_store_lock_file(path);
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
    /* The 1.8 file format checksums every metadata block, so a corrupted golden file is
     * refused by HDF5 instead of being parsed; h5py and h5dump 1.8+ read it. */
    if (fapl >= 0) {
        H5Pset_fclose_degree(fapl, H5F_CLOSE_STRONG);
        H5Pset_libver_bounds(fapl, H5F_LIBVER_V18, H5F_LIBVER_V18);
    }
    w->file = H5Fcreate(w->tmp, H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
    if (fapl >= 0)
        H5Pclose(fapl);
    char created[32], producer[128];
    snprintf(producer, sizeof producer, "%s",
             opts && opts->producer ? opts->producer : "libgolden " GOLDEN_VERSION);
    int rc = w->file < 0 ? lg_store_hdf5_fail(err, path, "cannot create HDF5 file") : GOLDEN_OK;
    if (rc == GOLDEN_OK &&
        (lg_attr_write_str(w->file, "schema", GOLDEN_SCHEMA_GOLDEN) < 0 ||
         lg_attr_write_str(w->file, "producer", producer) < 0 ||
         lg_attr_write_str(w->file, "created", iso_now(created, sizeof created)) < 0))
        rc = lg_store_hdf5_fail(err, path, "cannot write root attributes");
    golden_hdf5_unlock();
    if (rc != GOLDEN_OK) {
        golden_writer_abort(w);
        return rc;
    }
    *out = w;
    return GOLDEN_OK;
}

int golden_writer_meta(golden_writer *w, const char *key, const char *value, golden_error *err)
{
    if (!key || !*key || strchr(key, '/'))
        return golden_fail_what(err, GOLDEN_EINVAL, NULL, "--meta key '%s' must be non-empty without '/'", key ? key : "");
    if (!lg_store_utf8_valid(key) || !lg_store_utf8_valid(value))
        return golden_fail_what(err, GOLDEN_EINVAL, NULL, "--meta %s '%s' is not valid UTF-8",
                                lg_store_utf8_valid(key) ? "value of key" : "key", key);
    if (strcmp(key, "schema") == 0 || strcmp(key, "producer") == 0 || strcmp(key, "created") == 0)
        return golden_fail_what(err, GOLDEN_EINVAL, NULL, "--meta key '%s' is reserved by the format", key);
    lg_store_lock_file(w->path);
    htri_t exists = H5Aexists(w->file, key);
    if (exists != 0) {
        int rc = exists > 0 ? golden_fail_what(err, GOLDEN_EINVAL, NULL, "--meta key '%s' is given twice", key)
                            : lg_store_hdf5_fail(err, w->path, "cannot write root attribute");
        golden_hdf5_unlock();
        return rc;
    }
    int rc = lg_attr_write_str(w->file, key, value) < 0
                 ? lg_store_hdf5_fail(err, w->path, "cannot write root attribute") : GOLDEN_OK;
    golden_hdf5_unlock();
    return rc;
}

/* Name conflicts: a duplicate, a tensor where a group must be, or a group where a tensor is. */
static int check_name_free(golden_writer *w, const char *name, golden_error *err)
{
    size_t len = strlen(name);
    if (w->bf16_type >= 0 && strcmp(name, GOLDEN_BF16_TYPE_NAME) == 0)
        return golden_fail_what(err, GOLDEN_EINVAL, name,
                                "the name is taken by this file's committed bf16 datatype");
    if (name_set_has(&w->names, name, len))
        return golden_fail_what(err, GOLDEN_EINVAL, name, "duplicate tensor name");
    if (name_set_has(&w->groups, name, len))
        return golden_fail_what(err, GOLDEN_EINVAL, name, "tensor name is also a group of other tensors");
    for (const char *p = strchr(name, '/'); p; p = strchr(p + 1, '/'))
        if (name_set_has(&w->names, name, (size_t)(p - name)))
            return golden_fail_what(err, GOLDEN_EINVAL, name, "a parent of this tensor name is itself a tensor");
    return GOLDEN_OK;
}

static int remember_name(golden_writer *w, const char *name, golden_error *err)
{
    if (name_set_add(&w->names, name, strlen(name)) < 0)
        return golden_fail_what(err, GOLDEN_ENOMEM, name, "out of memory");
    for (const char *p = strchr(name, '/'); p; p = strchr(p + 1, '/'))
        if (name_set_add(&w->groups, name, (size_t)(p - name)) < 0)
            return golden_fail_what(err, GOLDEN_ENOMEM, name, "out of memory");
    return GOLDEN_OK;
}

/* Commit the bf16 type once as /bfloat16, so h5dump and HDFView name it instead of showing
 * "16-bit little-endian floating-point" as for f16. When that name is already a tensor or a
 * group, the type stays anonymous (readers accept both). Lock held; -1 = use the plain type. */
static int commit_bf16(golden_writer *w)
{
    if (w->bf16_type >= 0)
        return 0;
    size_t len = strlen(GOLDEN_BF16_TYPE_NAME);
    if (name_set_has(&w->names, GOLDEN_BF16_TYPE_NAME, len) ||
        name_set_has(&w->groups, GOLDEN_BF16_TYPE_NAME, len))
        return -1;
    hid_t t = lg_store_type(GOLDEN_BF16);
    if (t < 0)
        return -1;
    if (H5Tcommit2(w->file, GOLDEN_BF16_TYPE_NAME, t, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT) < 0) {
        H5Tclose(t);
        H5Eclear2(H5E_DEFAULT);
        return -1;
    }
    w->bf16_type = t;
    return 0;
}

int golden_writer_begin(golden_writer *w, const golden_tensor_info *info, golden_error *err)
{
    if (w->in_tensor)
        return golden_fail_what(err, GOLDEN_EINVAL, info->name, "previous tensor was not ended");
    if (golden_tensor_name_check(info->name, err) != GOLDEN_OK)
        return GOLDEN_ERR;
    uint64_t count;
    if (golden_shape_count(info->rank, info->shape, info->dtype, &count, err) != GOLDEN_OK) {
        snprintf(err->where, sizeof err->where, "%s", info->name);
        return GOLDEN_ERR;
    }
    for (int k = 0; k < info->rank; k++)
        if (info->shape[k] == UINT64_MAX)
            return golden_fail_what(err, GOLDEN_EINVAL, info->name,
                                    "dimension %d is 2^64-1, HDF5's reserved 'unlimited' value, "
                                    "not a size", k);
    if (check_name_free(w, info->name, err) != GOLDEN_OK)
        return GOLDEN_ERR;
    golden_tensor_info_clear(&w->cur);
    w->cur = *info;
    w->cur.name = strdup(info->name);
    w->cur.op_family = info->op_family ? strdup(info->op_family) : NULL;
    w->cur.source = info->source ? strdup(info->source) : NULL;
    w->cur.count = count;
    if (!w->cur.name || (info->op_family && !w->cur.op_family) || (info->source && !w->cur.source))
        return golden_fail_what(err, GOLDEN_ENOMEM, info->name, "out of memory");
    w->bytes_expected = count * golden_dtype_size(info->dtype);
    w->bytes_done = w->elems_written = 0;
    w->fill = 0;
    golden_stats_init(&w->stats);
    if (golden_sha256_reset(w->sha, err) != GOLDEN_OK)
        return GOLDEN_ERR;
    w->hash_stage.failed = 0;

    lg_store_lock_file(w->path);
    int rc = GOLDEN_OK;
    hid_t space = -1, dcpl = -1, lcpl = -1;
    w->ftype = lg_store_type(info->dtype);
    if (info->rank == 0) {
        space = H5Screate(H5S_SCALAR);
    } else {
        hsize_t dims[GOLDEN_MAX_RANK];
        for (int k = 0; k < info->rank; k++)
            dims[k] = info->shape[k];
        space = H5Screate_simple(info->rank, dims, NULL);
    }
    dcpl = H5Pcreate(H5P_DATASET_CREATE);
    lcpl = H5Pcreate(H5P_LINK_CREATE);
    /* the ~17 attributes of a tensor stay in its object header (compact storage), not in a
     * fractal heap and B-tree (dense, HDF5's choice past 8): a reader meets them in the header
     * it has already read, which is most of opening a file of many small tensors (issue 35) */
    if (w->ftype < 0 || space < 0 || dcpl < 0 || lcpl < 0 ||
        H5Pset_create_intermediate_group(lcpl, 1) < 0 ||
        H5Pset_attr_phase_change(dcpl, LG_ATTR_MAX_COMPACT, LG_ATTR_MIN_DENSE) < 0)
        rc = lg_store_hdf5_fail(err, info->name, "cannot prepare dataset");
    if (rc == GOLDEN_OK && w->gzip > 0 && info->rank > 0 && count > 0) {
        /* chunks of about 1 MiB: whole trailing rows, as many leading ones as fit */
        hsize_t chunk[GOLDEN_MAX_RANK];
        uint64_t budget = (1u << 20) / golden_dtype_size(info->dtype);
        for (int k = info->rank - 1; k >= 0; k--) {
            uint64_t c = info->shape[k] < budget ? info->shape[k] : budget;
            chunk[k] = c ? c : 1;
            budget = budget / chunk[k] ? budget / chunk[k] : 1;
        }
        if (H5Pset_chunk(dcpl, info->rank, chunk) < 0 || H5Pset_shuffle(dcpl) < 0 ||
            H5Pset_deflate(dcpl, (unsigned)w->gzip) < 0)
            rc = lg_store_hdf5_fail(err, info->name, "cannot set up compression");
    }
    hid_t stored = w->ftype;
    if (rc == GOLDEN_OK && info->dtype == GOLDEN_BF16 && commit_bf16(w) >= 0)
        stored = w->bf16_type;
    if (rc == GOLDEN_OK) {
        w->dset = H5Dcreate2(w->file, info->name, stored, space, lcpl, dcpl, H5P_DEFAULT);
        if (w->dset < 0)
            rc = lg_store_hdf5_fail(err, info->name, "cannot create dataset");
    }
    if (space >= 0)
        H5Sclose(space);
    if (dcpl >= 0)
        H5Pclose(dcpl);
    if (lcpl >= 0)
        H5Pclose(lcpl);
    golden_hdf5_unlock();
    if (rc != GOLDEN_OK)
        return rc;
    if (remember_name(w, info->name, err) != GOLDEN_OK)
        return GOLDEN_ERR;
    w->in_tensor = true;
    return GOLDEN_OK;
}

/* Start writing the file's dirty pages to disk every KICK_BYTES, without waiting for them, so
 * the disk works while the threads hash and measure and the commit's fsync finds most of the
 * golden already written. Left to itself the kernel starts write-back only past
 * dirty_background_ratio (2.4 GB on a 24 GB machine) or after 30 s, so the whole file waited for
 * the fsync at the end: 0.66x the wall time with this (docs/performance.md). */
#define KICK_BYTES (16u << 20)
static void kick_writeback(golden_writer *w, size_t bytes)
{
    w->unkicked += bytes;
    if (w->kick_fd < 0 || w->unkicked < KICK_BYTES)
        return;
    w->unkicked = 0;
    (void)sync_file_range(w->kick_fd, 0, 0, SYNC_FILE_RANGE_WRITE); /* a hint: errors show at fsync */
}

/* Write `elems` whole elements from data: one thread hashes, one measures, this one hands the
 * bytes to HDF5; whoever is done first helps with the statistics sub-blocks. */
static int flush_span(golden_writer *w, const unsigned char *data, size_t elems, golden_error *err)
{
    size_t bytes = elems * golden_dtype_size(w->cur.dtype);
    if (elems == 0)
        return GOLDEN_OK;
    w->sub_data = data;
    w->sub_elems = elems;
    w->nsub = (elems + STATS_SUB - 1) / STATS_SUB;
    atomic_store(&w->next_sub, 0);
    stage_post(&w->hash_stage, data, bytes); /* first: the hash is the longest stage */
    if (w->stats_stage.started) /* else this thread takes the statistics after the write */
        stage_post(&w->stats_stage, data, bytes);
    lg_store_lock_file(w->path);
    int rc = GOLDEN_OK;
    hid_t fspace = H5Dget_space(w->dset);
    hsize_t mdim = elems;
    hid_t mspace = H5Screate_simple(1, &mdim, NULL);
    if (fspace < 0 || mspace < 0 ||
        lg_store_select(fspace, w->cur.rank, w->cur.shape, w->elems_written, elems) < 0 ||
        H5Dwrite(w->dset, w->ftype, w->cur.rank == 0 ? H5S_ALL : mspace,
                 w->cur.rank == 0 ? H5S_ALL : fspace, H5P_DEFAULT, data) < 0)
        rc = lg_store_hdf5_fail(err, w->cur.name, "cannot write tensor data");
    if (fspace >= 0)
        H5Sclose(fspace);
    if (mspace >= 0)
        H5Sclose(mspace);
    golden_hdf5_unlock();
    kick_writeback(w, bytes);
    stats_pull(w, w->f64[2]);
    stage_wait(&w->hash_stage);
    stage_wait(&w->stats_stage);
    for (size_t i = 0; i < w->nsub; i++)
        golden_stats_merge(&w->stats, &w->sub[i]);
    if (w->hash_stage.failed && rc == GOLDEN_OK)
        rc = golden_fail_what(err, GOLDEN_EINVAL, w->cur.name, "SHA-256 computation failed");
    w->elems_written += elems;
    return rc;
}

/* Write the whole elements in the buffer (see flush_span); keep the partial one. */
static int flush_elements(golden_writer *w, golden_error *err)
{
    size_t width = golden_dtype_size(w->cur.dtype);
    size_t elems = w->fill / width, bytes = elems * width;
    int rc = flush_span(w, w->buf, elems, err);
    memmove(w->buf, w->buf + bytes, w->fill - bytes);
    w->fill -= bytes;
    return rc;
}

int golden_writer_write(golden_writer *w, const void *data, size_t nbytes, golden_error *err)
{
    if (!w->in_tensor)
        return golden_fail_what(err, GOLDEN_EINVAL, NULL, "no tensor started");
    if (nbytes > w->bytes_expected - w->bytes_done)
        return golden_fail_what(err, GOLDEN_EINVAL, w->cur.name,
                           "more data than the shape holds (%llu bytes expected)",
                           (unsigned long long)w->bytes_expected);
    const unsigned char *p = data;
    if (w->cur.dtype == GOLDEN_BOOL)
        for (size_t i = 0; i < nbytes; i++)
            if (p[i] > 1)
                return golden_fail_what(err, GOLDEN_EINVAL, w->cur.name,
                                        "bool element %llu is the byte %u, not 0 or 1",
                                        (unsigned long long)(w->bytes_done + i), p[i]);
    w->bytes_done += nbytes;
    /* Whole buffers straight from the caller's memory (no copy): WRITE_BUF bytes hold a whole
     * number of statistics blocks, so the blocks stay aligned to element 0 either way. */
    size_t width = golden_dtype_size(w->cur.dtype);
    while (w->fill == 0 && nbytes >= WRITE_BUF) {
        if (flush_span(w, p, WRITE_BUF / width, err) != GOLDEN_OK)
            return GOLDEN_ERR;
        p += WRITE_BUF;
        nbytes -= WRITE_BUF;
    }
    while (nbytes > 0) {
        size_t room = WRITE_BUF - w->fill, take = nbytes < room ? nbytes : room;
        memcpy(w->buf + w->fill, p, take);
        w->fill += take;
        p += take;
        nbytes -= take;
        if (w->fill == WRITE_BUF && flush_elements(w, err) != GOLDEN_OK)
            return GOLDEN_ERR;
    }
    return GOLDEN_OK;
}

int golden_writer_end(golden_writer *w, golden_tensor_info *out, golden_error *err)
{
    if (!w->in_tensor)
        return golden_fail_what(err, GOLDEN_EINVAL, NULL, "no tensor started");
    w->in_tensor = false;
    if (w->bytes_done != w->bytes_expected)
        return golden_fail_what(err, GOLDEN_EINVAL, w->cur.name, "got %llu bytes of data, the shape needs %llu",
                           (unsigned long long)w->bytes_done,
                           (unsigned long long)w->bytes_expected);
    if (flush_elements(w, err) != GOLDEN_OK)
        return GOLDEN_ERR;
    golden_tensor_info *t = &w->cur;
    if (golden_sha256_final(w->sha, t->sha256, err) != GOLDEN_OK)
        return GOLDEN_ERR;
    if (golden_tensor_digest(t, t->tensor_digest, err) != GOLDEN_OK)
        return GOLDEN_ERR;
    t->nan_count = w->stats.nan_count;
    t->posinf_count = w->stats.posinf_count;
    t->neginf_count = w->stats.neginf_count;
    t->zero_count = w->stats.zero_count;
    t->min = golden_stats_min(&w->stats);
    t->max = golden_stats_max(&w->stats);
    t->mean = golden_stats_mean(&w->stats);
    t->std = golden_stats_std(&w->stats);
    t->count_attr = t->count;

    lg_store_lock_file(w->path);
    hid_t d = w->dset;
    int bad = lg_attr_write_str(d, "dtype", golden_dtype_name(t->dtype)) < 0 ||
              lg_attr_write_str(d, "sha256", t->sha256) < 0 ||
              lg_attr_write_str(d, "tensor_digest", t->tensor_digest) < 0 ||
              lg_attr_write_u64(d, "count", t->count) < 0 ||
              lg_attr_write_u64(d, "nan_count", t->nan_count) < 0 ||
              lg_attr_write_u64(d, "posinf_count", t->posinf_count) < 0 ||
              lg_attr_write_u64(d, "neginf_count", t->neginf_count) < 0 ||
              lg_attr_write_u64(d, "zero_count", t->zero_count) < 0 ||
              lg_attr_write_f64(d, "min", t->min) < 0 || lg_attr_write_f64(d, "max", t->max) < 0 ||
              lg_attr_write_f64(d, "mean", t->mean) < 0 || lg_attr_write_f64(d, "std", t->std) < 0 ||
              (t->has_layer && lg_attr_write_i64(d, "layer", t->layer) < 0) ||
              (t->has_chip && lg_attr_write_i64(d, "chip", t->chip) < 0) ||
              (t->has_step && lg_attr_write_i64(d, "step", t->step) < 0) ||
              (t->op_family && lg_attr_write_str(d, "op_family", t->op_family) < 0) ||
              (t->source && lg_attr_write_str(d, "source", t->source) < 0);
    int rc = bad ? lg_store_hdf5_fail(err, t->name, "cannot write tensor attributes") : GOLDEN_OK;
    if (H5Dclose(d) < 0 && rc == GOLDEN_OK)
        rc = lg_store_hdf5_fail(err, t->name, "cannot close dataset");
    w->dset = -1;
    H5Tclose(w->ftype);
    w->ftype = -1;
    golden_hdf5_unlock();
    if (rc == GOLDEN_OK && out) {
        golden_tensor_info_clear(out);
        *out = *t;
        out->name = strdup(t->name);
        out->op_family = t->op_family ? strdup(t->op_family) : NULL;
        out->source = t->source ? strdup(t->source) : NULL;
        if (!out->name)
            rc = golden_fail_what(err, GOLDEN_ENOMEM, t->name, "out of memory");
    }
    return rc;
}

int golden_writer_threads(const golden_writer *w)
{
    return w->threads;
}

static void writer_free(golden_writer *w)
{
    stage_stop(&w->hash_stage);
    stage_stop(&w->stats_stage);
    golden_sha256_free(w->sha);
    golden_tensor_info_clear(&w->cur);
    name_set_free(&w->names);
    name_set_free(&w->groups);
    free(w->buf);
    for (int k = 0; k < 3; k++)
        free(w->f64[k]);
    if (w->kick_fd >= 0)
        close(w->kick_fd);
    free(w->tmp);
    free(w->path);
    free(w);
}

int golden_writer_commit(golden_writer *w, golden_error *err)
{
    if (w->in_tensor) {
        golden_fail_what(err, GOLDEN_EINVAL, w->cur.name, "tensor was not ended");
        golden_writer_abort(w);
        return GOLDEN_ERR;
    }
    lg_store_lock_file(w->path);
    if (w->bf16_type >= 0)
        H5Tclose(w->bf16_type);
    w->bf16_type = -1;
    int rc = H5Fclose(w->file) < 0 ? lg_store_hdf5_fail(err, w->path, "cannot finish HDF5 file") : GOLDEN_OK;
    golden_hdf5_unlock();
    w->file = -1;
    /* fsync, rename, fsync the folder: a golden is evidence, and a crash just after the
     * rename must not leave an empty file */
    if (rc == GOLDEN_OK && golden_tmpfile_install(w->tmp, w->path, w->force, err) == GOLDEN_OK) {
        free(w->tmp);
        w->tmp = NULL; /* installed: nothing to remove */
    } else
        rc = GOLDEN_ERR;
    if (rc != GOLDEN_OK) {
        golden_writer_abort(w);
        return rc;
    }
    writer_free(w);
    return GOLDEN_OK;
}

void golden_writer_abort(golden_writer *w)
{
    if (!w)
        return;
    lg_store_lock_file(w->path);
    if (w->dset >= 0)
        H5Dclose(w->dset);
    if (w->ftype >= 0)
        H5Tclose(w->ftype);
    if (w->bf16_type >= 0)
        H5Tclose(w->bf16_type);
    if (w->file >= 0)
        H5Fclose(w->file);
    H5Eclear2(H5E_DEFAULT);
    golden_hdf5_unlock();
    if (w->tmp) {
        lg_guard_remove_temp(w->tmp);
        unlink(w->tmp);
    }
    writer_free(w);
}

