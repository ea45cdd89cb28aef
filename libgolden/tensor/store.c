/* The calculet-golden/v1 HDF5 file: a streaming writer that hashes (on a helper thread) and
 * measures each tensor while writing it, and a reader serving any linear element range. */
#include "golden/store.h"

#include <errno.h>
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

#include "util/guard.h"
#include "golden/hash.h"
#include "golden/report.h"

/* ------------------------------------------------------------------ common */

static pthread_mutex_t hdf5_mutex = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t hdf5_once = PTHREAD_ONCE_INIT;

static void hdf5_init(void)
{
    /* Errors come back as values; HDF5's own stack printing would break the one-line rule. */
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
}

void golden_hdf5_lock(void)
{
    pthread_once(&hdf5_once, hdf5_init);
    pthread_mutex_lock(&hdf5_mutex);
    golden_guard_enter_hdf5(NULL);
}

void golden_hdf5_unlock(void)
{
    golden_guard_leave_hdf5();
    pthread_mutex_unlock(&hdf5_mutex);
}

/* Lock, naming the file HDF5 is about to work on (for the crash guard's message). */
static void lock_file(const char *path)
{
    golden_hdf5_lock();
    golden_guard_enter_hdf5(path);
}

static herr_t last_error_cb(unsigned n, const H5E_error2_t *e, void *data)
{
    (void)n;
    char *out = data;
    if (e->desc && e->desc[0])
        snprintf(out, 256, "%s", e->desc);
    return 0;
}

/* Fail with HDF5's innermost description appended ("what (HDF5: ...)"). Lock held. */
static int hdf5_fail(golden_error *err, const char *where, const char *what)
{
    char detail[256] = "";
    H5Ewalk2(H5E_DEFAULT, H5E_WALK_UPWARD, last_error_cb, detail);
    H5Eclear2(H5E_DEFAULT);
    if (detail[0])
        return golden_fail_what(err, GOLDEN_EIO, where, "%s (HDF5: %s)", what, detail);
    return golden_fail_what(err, GOLDEN_EINVAL, where, "%s", what);
}

int golden_tensor_name_check(const char *name, golden_error *err)
{
    if (!name || !*name)
        return golden_fail_what(err, GOLDEN_EINVAL, NULL, "tensor name is empty");
    const char *p = name;
    while (*p) {
        const char *slash = strchr(p, '/');
        size_t len = slash ? (size_t)(slash - p) : strlen(p);
        if (len == 0 || (len == 1 && p[0] == '.') || (len == 2 && p[0] == '.' && p[1] == '.'))
            return golden_fail_what(err, GOLDEN_EINVAL, name, "tensor name has an empty, '.' or '..' component");
        p += len;
        if (*p == '/')
            p++;
        if (slash && !*p)
            return golden_fail_what(err, GOLDEN_EINVAL, name, "tensor name ends with '/'");
    }
    /* UTF-8 well-formedness (no overlongs, no surrogates, max U+10FFFF) */
    const unsigned char *u = (const unsigned char *)name;
    while (*u) {
        unsigned c = *u, need;
        unsigned cp;
        if (c < 0x80) {
            u++;
            continue;
        } else if (c >= 0xc2 && c <= 0xdf) {
            need = 1, cp = c & 0x1f;
        } else if (c >= 0xe0 && c <= 0xef) {
            need = 2, cp = c & 0x0f;
        } else if (c >= 0xf0 && c <= 0xf4) {
            need = 3, cp = c & 0x07;
        } else {
            return golden_fail_what(err, GOLDEN_EINVAL, NULL, "tensor name is not valid UTF-8");
        }
        u++;
        for (unsigned k = 0; k < need; k++, u++) {
            if ((*u & 0xc0) != 0x80)
                return golden_fail_what(err, GOLDEN_EINVAL, NULL, "tensor name is not valid UTF-8");
            cp = (cp << 6) | (*u & 0x3f);
        }
        if ((need == 2 && (cp < 0x800 || (cp >= 0xd800 && cp <= 0xdfff))) ||
            (need == 3 && (cp < 0x10000 || cp > 0x10ffff)))
            return golden_fail_what(err, GOLDEN_EINVAL, NULL, "tensor name is not valid UTF-8");
    }
    return GOLDEN_OK;
}

int golden_shape_count(int rank, const uint64_t *shape, golden_dtype dt, uint64_t *count,
                       golden_error *err)
{
    if (rank < 0 || rank > GOLDEN_MAX_RANK)
        return golden_fail_what(err, GOLDEN_EINVAL, NULL, "rank %d is outside 0..%d", rank, GOLDEN_MAX_RANK);
    uint64_t c = 1;
    for (int i = 0; i < rank; i++) {
        if (shape[i] && c > UINT64_MAX / shape[i])
            return golden_fail_what(err, GOLDEN_EINVAL, NULL, "shape's element count overflows 64 bits");
        c *= shape[i];
    }
    size_t w = golden_dtype_size(dt);
    if (w == 0)
        return golden_fail_what(err, GOLDEN_EINVAL, NULL, "unknown element type");
    if (c > (uint64_t)INT64_MAX / w)
        return golden_fail_what(err, GOLDEN_EINVAL, NULL, "shape's byte size overflows 63 bits");
    *count = c;
    return GOLDEN_OK;
}

/* A 2-byte IEEE-style float: sign bit 15, exponent above the mantissa. Lock held. */
static hid_t make_half_type(int exp_bits, int mant_bits, int ebias)
{
    hid_t t = H5Tcopy(H5T_IEEE_F32LE);
    if (t < 0)
        return -1;
    if (H5Tset_fields(t, 15, (size_t)mant_bits, (size_t)exp_bits, 0, (size_t)mant_bits) < 0 ||
        H5Tset_precision(t, 16) < 0 || H5Tset_size(t, 2) < 0 ||
        H5Tset_ebias(t, (size_t)ebias) < 0) {
        H5Tclose(t);
        return -1;
    }
    return t;
}

/* The HDF5 type canonical bytes of dt are stored as (a new id to close). Lock held. */
static hid_t canonical_type(golden_dtype dt)
{
    switch (dt) {
    case GOLDEN_F64: return H5Tcopy(H5T_IEEE_F64LE);
    case GOLDEN_F32: return H5Tcopy(H5T_IEEE_F32LE);
    case GOLDEN_F16: return make_half_type(5, 10, 15);
    case GOLDEN_BF16: return make_half_type(8, 7, 127);
    case GOLDEN_I8: return H5Tcopy(H5T_STD_I8LE);
    case GOLDEN_U8:
    case GOLDEN_BOOL:
    case GOLDEN_FP8_E4M3FN:
    case GOLDEN_FP8_E5M2: return H5Tcopy(H5T_STD_U8LE);
    case GOLDEN_I16: return H5Tcopy(H5T_STD_I16LE);
    case GOLDEN_U16: return H5Tcopy(H5T_STD_U16LE);
    case GOLDEN_I32: return H5Tcopy(H5T_STD_I32LE);
    case GOLDEN_U32: return H5Tcopy(H5T_STD_U32LE);
    case GOLDEN_I64: return H5Tcopy(H5T_STD_I64LE);
    case GOLDEN_U64: return H5Tcopy(H5T_STD_U64LE);
    default: return -1;
    }
}

/* Select elements [first, first+n) of a C-order dataspace as a union of at most 2*rank
 * hyperslab blocks. Lock held. */
static int select_linear(hid_t space, int rank, const uint64_t *dims, uint64_t first, uint64_t n)
{
    if (rank == 0)
        return H5Sselect_all(space) < 0 ? -1 : 0;
    if (H5Sselect_none(space) < 0)
        return -1;
    uint64_t stride[GOLDEN_MAX_RANK];
    stride[rank - 1] = 1;
    for (int k = rank - 2; k >= 0; k--)
        stride[k] = stride[k + 1] * dims[k + 1];
    while (n > 0) {
        hsize_t start[GOLDEN_MAX_RANK], count[GOLDEN_MAX_RANK];
        uint64_t rem = first;
        for (int k = 0; k < rank; k++) {
            start[k] = rem / stride[k];
            rem %= stride[k];
        }
        /* outermost axis at which `first` is aligned and at least one step fits */
        int j = 0;
        while (j < rank - 1 && (first % stride[j] != 0 || n < stride[j]))
            j++;
        uint64_t steps = n / stride[j];
        if (steps > dims[j] - start[j])
            steps = dims[j] - start[j];
        for (int k = 0; k < rank; k++)
            count[k] = k < j ? 1 : k == j ? steps : dims[k];
        if (H5Sselect_hyperslab(space, H5S_SELECT_OR, start, NULL, count, NULL) < 0)
            return -1;
        first += steps * stride[j];
        n -= steps * stride[j];
    }
    return 0;
}

/* ------------------------------------------------------------------ attributes (lock held) */

static int attr_write(hid_t loc, const char *name, hid_t type, const void *value)
{
    hid_t space = H5Screate(H5S_SCALAR);
    if (space < 0)
        return -1;
    if (H5Aexists(loc, name) > 0)
        H5Adelete(loc, name);
    hid_t a = H5Acreate2(loc, name, type, space, H5P_DEFAULT, H5P_DEFAULT);
    int rc = a < 0 || H5Awrite(a, type, value) < 0 ? -1 : 0;
    if (a >= 0)
        H5Aclose(a);
    H5Sclose(space);
    return rc;
}

static int attr_write_str(hid_t loc, const char *name, const char *value)
{
    hid_t t = H5Tcopy(H5T_C_S1);
    if (t < 0)
        return -1;
    int rc = -1;
    if (H5Tset_size(t, H5T_VARIABLE) >= 0 && H5Tset_cset(t, H5T_CSET_UTF8) >= 0)
        rc = attr_write(loc, name, t, &value);
    H5Tclose(t);
    return rc;
}

static int attr_write_u64(hid_t loc, const char *name, uint64_t v)
{
    return attr_write(loc, name, H5T_STD_U64LE, &v);
}

static int attr_write_i64(hid_t loc, const char *name, int64_t v)
{
    return attr_write(loc, name, H5T_STD_I64LE, &v);
}

static int attr_write_f64(hid_t loc, const char *name, double v)
{
    return attr_write(loc, name, H5T_IEEE_F64LE, &v);
}

/* The value of an open scalar string attribute (fixed or variable length) as a new string;
 * NULL when it is not a scalar string. */
static char *attr_str_of(hid_t a)
{
    char *out = NULL;
    hid_t ft = H5Aget_type(a);
    hid_t sp = H5Aget_space(a);
    if (ft >= 0 && sp >= 0 && H5Tget_class(ft) == H5T_STRING && H5Sget_simple_extent_npoints(sp) == 1) {
        if (H5Tis_variable_str(ft) > 0) {
            hid_t mt = H5Tcopy(H5T_C_S1);
            H5Tset_size(mt, H5T_VARIABLE);
            H5Tset_cset(mt, H5Tget_cset(ft));
            char *v = NULL;
            if (H5Aread(a, mt, &v) >= 0 && v) {
                out = strdup(v);
                H5free_memory(v);
            }
            H5Tclose(mt);
        } else {
            size_t sz = H5Tget_size(ft);
            char *v = calloc(1, sz + 1);
            hid_t mt = H5Tcopy(H5T_C_S1);
            H5Tset_size(mt, sz + 1);
            H5Tset_strpad(mt, H5T_STR_NULLTERM);
            if (v && H5Aread(a, mt, v) >= 0)
                out = v;
            else
                free(v);
            H5Tclose(mt);
        }
    }
    if (sp >= 0)
        H5Sclose(sp);
    if (ft >= 0)
        H5Tclose(ft);
    return out;
}

/* A scalar string attribute by name; NULL if absent or not a string. */
static char *attr_read_str(hid_t loc, const char *name)
{
    if (H5Aexists(loc, name) <= 0)
        return NULL;
    hid_t a = H5Aopen(loc, name, H5P_DEFAULT);
    if (a < 0)
        return NULL;
    char *out = attr_str_of(a);
    H5Aclose(a);
    return out;
}

/* An open attribute holding one number, converted to memtype: 1 = read, -1 = not a scalar
 * number. `data_size` (from H5A_info_t) spares a dataspace query. */
static int attr_num_of(hid_t a, hsize_t data_size, hid_t memtype, void *out)
{
    int rc = -1;
    hid_t ft = H5Aget_type(a);
    H5T_class_t cls = ft >= 0 ? H5Tget_class(ft) : H5T_NO_CLASS;
    if ((cls == H5T_INTEGER || cls == H5T_FLOAT) && data_size == H5Tget_size(ft) &&
        H5Aread(a, memtype, out) >= 0)
        rc = 1;
    if (ft >= 0)
        H5Tclose(ft);
    return rc;
}

/* ------------------------------------------------------------------ name set */

typedef struct {
    char **slots;
    size_t cap, used;
} name_set;

static uint64_t hash_str(const char *s, size_t n)
{
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < n; i++)
        h = (h ^ (unsigned char)s[i]) * 1099511628211ull;
    return h;
}

static int name_set_has(const name_set *s, const char *name, size_t n)
{
    if (!s->cap)
        return 0;
    for (size_t i = hash_str(name, n) & (s->cap - 1);; i = (i + 1) & (s->cap - 1)) {
        if (!s->slots[i])
            return 0;
        if (strlen(s->slots[i]) == n && memcmp(s->slots[i], name, n) == 0)
            return 1;
    }
}

static int name_set_add(name_set *s, const char *name, size_t n)
{
    if (name_set_has(s, name, n))
        return 0;
    if ((s->used + 1) * 2 > s->cap) {
        size_t cap = s->cap ? s->cap * 2 : 64;
        char **slots = calloc(cap, sizeof *slots);
        if (!slots)
            return -1;
        for (size_t i = 0; i < s->cap; i++) {
            if (!s->slots[i])
                continue;
            size_t j = hash_str(s->slots[i], strlen(s->slots[i])) & (cap - 1);
            while (slots[j])
                j = (j + 1) & (cap - 1);
            slots[j] = s->slots[i];
        }
        free(s->slots);
        s->slots = slots;
        s->cap = cap;
    }
    size_t i = hash_str(name, n) & (s->cap - 1);
    while (s->slots[i])
        i = (i + 1) & (s->cap - 1);
    if (!(s->slots[i] = strndup(name, n)))
        return -1;
    s->used++;
    return 0;
}

static void name_set_free(name_set *s)
{
    for (size_t i = 0; i < s->cap; i++)
        free(s->slots[i]);
    free(s->slots);
    *s = (name_set){0};
}

/* ------------------------------------------------------------------ writer */

#define WRITE_BUF (4u << 20)
#define STATS_SUB (1u << 14) /* elements per statistics sub-block */

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
        golden_convert_to_f64(w->cur.dtype, w->sub_data + first * width, n, scratch);
        golden_stats_init(&w->sub[i]);
        golden_stats_add(&w->sub[i], scratch, n);
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
    bool force = opts && opts->force;
    /* a golden is a regular file: never "-", never a device or FIFO replaced by a rename */
    if (golden_outfile_check_regular(path, force, err) != GOLDEN_OK)
        return GOLDEN_ERR;
    golden_writer *w = calloc(1, sizeof *w);
    if (!w)
        return golden_fail_what(err, GOLDEN_ENOMEM, path, "out of memory");
    w->file = w->dset = w->ftype = -1;
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
    close(fd);
    bool threaded = golden_threads() > 1;
    stage_init(&w->hash_stage, w, run_hash, threaded);
    stage_init(&w->stats_stage, w, run_stats, threaded);

    lock_file(path);
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
    int rc = w->file < 0 ? hdf5_fail(err, path, "cannot create HDF5 file") : GOLDEN_OK;
    if (rc == GOLDEN_OK &&
        (attr_write_str(w->file, "schema", GOLDEN_SCHEMA_GOLDEN) < 0 ||
         attr_write_str(w->file, "producer", producer) < 0 ||
         attr_write_str(w->file, "created", iso_now(created, sizeof created)) < 0))
        rc = hdf5_fail(err, path, "cannot write root attributes");
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
    if (strcmp(key, "schema") == 0 || strcmp(key, "producer") == 0 || strcmp(key, "created") == 0)
        return golden_fail_what(err, GOLDEN_EINVAL, NULL, "--meta key '%s' is reserved by the format", key);
    lock_file(w->path);
    int rc = attr_write_str(w->file, key, value) < 0
                 ? hdf5_fail(err, w->path, "cannot write root attribute") : GOLDEN_OK;
    golden_hdf5_unlock();
    return rc;
}

/* Name conflicts: a duplicate, a tensor where a group must be, or a group where a tensor is. */
static int check_name_free(golden_writer *w, const char *name, golden_error *err)
{
    size_t len = strlen(name);
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

    lock_file(w->path);
    int rc = GOLDEN_OK;
    hid_t space = -1, dcpl = -1, lcpl = -1;
    w->ftype = canonical_type(info->dtype);
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
    if (w->ftype < 0 || space < 0 || dcpl < 0 || lcpl < 0 ||
        H5Pset_create_intermediate_group(lcpl, 1) < 0)
        rc = hdf5_fail(err, info->name, "cannot prepare dataset");
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
            rc = hdf5_fail(err, info->name, "cannot set up compression");
    }
    if (rc == GOLDEN_OK) {
        w->dset = H5Dcreate2(w->file, info->name, w->ftype, space, lcpl, dcpl, H5P_DEFAULT);
        if (w->dset < 0)
            rc = hdf5_fail(err, info->name, "cannot create dataset");
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

/* Write the whole elements in the buffer: one thread hashes, one measures, this one hands
 * the bytes to HDF5; whoever is done first helps with the statistics sub-blocks. */
static int flush_elements(golden_writer *w, golden_error *err)
{
    size_t width = golden_dtype_size(w->cur.dtype);
    size_t elems = w->fill / width, bytes = elems * width;
    if (elems == 0)
        return GOLDEN_OK;
    w->sub_data = w->buf;
    w->sub_elems = elems;
    w->nsub = (elems + STATS_SUB - 1) / STATS_SUB;
    atomic_store(&w->next_sub, 0);
    stage_post(&w->stats_stage, w->buf, bytes);
    stage_post(&w->hash_stage, w->buf, bytes);
    lock_file(w->path);
    int rc = GOLDEN_OK;
    hid_t fspace = H5Dget_space(w->dset);
    hsize_t mdim = elems;
    hid_t mspace = H5Screate_simple(1, &mdim, NULL);
    if (fspace < 0 || mspace < 0 ||
        select_linear(fspace, w->cur.rank, w->cur.shape, w->elems_written, elems) < 0 ||
        H5Dwrite(w->dset, w->ftype, w->cur.rank == 0 ? H5S_ALL : mspace,
                 w->cur.rank == 0 ? H5S_ALL : fspace, H5P_DEFAULT, w->buf) < 0)
        rc = hdf5_fail(err, w->cur.name, "cannot write tensor data");
    if (fspace >= 0)
        H5Sclose(fspace);
    if (mspace >= 0)
        H5Sclose(mspace);
    golden_hdf5_unlock();
    stats_pull(w, w->f64[2]);
    stage_wait(&w->hash_stage);
    stage_wait(&w->stats_stage);
    for (size_t i = 0; i < w->nsub; i++)
        golden_stats_merge(&w->stats, &w->sub[i]);
    if (w->hash_stage.failed && rc == GOLDEN_OK)
        rc = golden_fail_what(err, GOLDEN_EINVAL, w->cur.name, "SHA-256 computation failed");
    w->elems_written += elems;
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
    w->bytes_done += nbytes;
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
    t->nan_count = w->stats.nan_count;
    t->posinf_count = w->stats.posinf_count;
    t->neginf_count = w->stats.neginf_count;
    t->zero_count = w->stats.zero_count;
    t->min = golden_stats_min(&w->stats);
    t->max = golden_stats_max(&w->stats);
    t->mean = golden_stats_mean(&w->stats);
    t->std = golden_stats_std(&w->stats);
    t->count_attr = t->count;

    lock_file(w->path);
    hid_t d = w->dset;
    int bad = attr_write_str(d, "dtype", golden_dtype_name(t->dtype)) < 0 ||
              attr_write_str(d, "sha256", t->sha256) < 0 ||
              attr_write_u64(d, "count", t->count) < 0 ||
              attr_write_u64(d, "nan_count", t->nan_count) < 0 ||
              attr_write_u64(d, "posinf_count", t->posinf_count) < 0 ||
              attr_write_u64(d, "neginf_count", t->neginf_count) < 0 ||
              attr_write_u64(d, "zero_count", t->zero_count) < 0 ||
              attr_write_f64(d, "min", t->min) < 0 || attr_write_f64(d, "max", t->max) < 0 ||
              attr_write_f64(d, "mean", t->mean) < 0 || attr_write_f64(d, "std", t->std) < 0 ||
              (t->has_layer && attr_write_i64(d, "layer", t->layer) < 0) ||
              (t->has_chip && attr_write_i64(d, "chip", t->chip) < 0) ||
              (t->has_step && attr_write_i64(d, "step", t->step) < 0) ||
              (t->op_family && attr_write_str(d, "op_family", t->op_family) < 0) ||
              (t->source && attr_write_str(d, "source", t->source) < 0);
    int rc = bad ? hdf5_fail(err, t->name, "cannot write tensor attributes") : GOLDEN_OK;
    if (H5Dclose(d) < 0 && rc == GOLDEN_OK)
        rc = hdf5_fail(err, t->name, "cannot close dataset");
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
    lock_file(w->path);
    int rc = H5Fclose(w->file) < 0 ? hdf5_fail(err, w->path, "cannot finish HDF5 file") : GOLDEN_OK;
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
    lock_file(w->path);
    if (w->dset >= 0)
        H5Dclose(w->dset);
    if (w->ftype >= 0)
        H5Tclose(w->ftype);
    if (w->file >= 0)
        H5Fclose(w->file);
    H5Eclear2(H5E_DEFAULT);
    golden_hdf5_unlock();
    if (w->tmp) {
        golden_guard_remove_temp(w->tmp);
        unlink(w->tmp);
    }
    writer_free(w);
}

/* ------------------------------------------------------------------ reader */

typedef struct {
    golden_tensor_info info;
    hid_t dset;       /* opened lazily under the lock, -1 until then */
    int64_t offset;   /* file offset for direct reads, -1 when HDF5 must read */
} reader_tensor;

struct golden_reader {
    char *path;
    hid_t file;
    int fd;
    reader_tensor *t;
    size_t n, cap;
    char **meta_keys, **meta_vals;
    size_t meta_n;
    golden_error err; /* first error met while visiting */
    int failed;
    unsigned flags;   /* GOLDEN_READ_* */
};

/* The dataset attributes of the contract, read in one pass over a dataset's attributes. */
enum { ATTR_STRING, ATTR_U64, ATTR_I64, ATTR_F64 };
enum {
    A_DTYPE, A_SHA, A_COUNT, A_NAN, A_POSINF, A_NEGINF, A_ZERO, A_MIN, A_MAX, A_MEAN, A_STD,
    A_LAYER, A_CHIP, A_STEP, A_OPFAM, A_SOURCE, ATTR_COUNT
};
static const struct {
    const char *name;
    int kind;
    bool required;
} attr_table[ATTR_COUNT] = {
    [A_DTYPE] = {"dtype", ATTR_STRING, false}, /* absence reported with its own message */
    [A_SHA] = {"sha256", ATTR_STRING, false},
    [A_COUNT] = {"count", ATTR_U64, true},
    [A_NAN] = {"nan_count", ATTR_U64, true},
    [A_POSINF] = {"posinf_count", ATTR_U64, true},
    [A_NEGINF] = {"neginf_count", ATTR_U64, true},
    [A_ZERO] = {"zero_count", ATTR_U64, true},
    [A_MIN] = {"min", ATTR_F64, true},
    [A_MAX] = {"max", ATTR_F64, true},
    [A_MEAN] = {"mean", ATTR_F64, true},
    [A_STD] = {"std", ATTR_F64, true},
    [A_LAYER] = {"layer", ATTR_I64, false},
    [A_CHIP] = {"chip", ATTR_I64, false},
    [A_STEP] = {"step", ATTR_I64, false},
    [A_OPFAM] = {"op_family", ATTR_STRING, false},
    [A_SOURCE] = {"source", ATTR_STRING, false},
};

typedef struct {
    golden_tensor_info *t;
    bool values_unread; /* GOLDEN_READ_DATA_ONLY: hash and statistics need only be present */
    unsigned seen, bad;
    char *dtype, *sha, *op_family, *source;
} tensor_attrs;

static void *attr_slot(tensor_attrs *ta, int k)
{
    golden_tensor_info *t = ta->t;
    switch (k) {
    case A_DTYPE: return &ta->dtype;
    case A_SHA: return &ta->sha;
    case A_OPFAM: return &ta->op_family;
    case A_SOURCE: return &ta->source;
    case A_COUNT: return &t->count_attr;
    case A_NAN: return &t->nan_count;
    case A_POSINF: return &t->posinf_count;
    case A_NEGINF: return &t->neginf_count;
    case A_ZERO: return &t->zero_count;
    case A_MIN: return &t->min;
    case A_MAX: return &t->max;
    case A_MEAN: return &t->mean;
    case A_STD: return &t->std;
    case A_LAYER: return &t->layer;
    case A_CHIP: return &t->chip;
    default: return &t->step;
    }
}

static herr_t tensor_attr_cb(hid_t loc, const char *name, const H5A_info_t *ai, void *data)
{
    tensor_attrs *ta = data;
    int k = 0;
    while (k < ATTR_COUNT && strcmp(attr_table[k].name, name) != 0)
        k++;
    if (k == ATTR_COUNT)
        return 0; /* other attributes are the user's business */
    if (ta->values_unread && k >= A_SHA && k <= A_STD) {
        ta->seen |= 1u << k;
        return 0;
    }
    hid_t a = H5Aopen(loc, name, H5P_DEFAULT);
    int ok = 0;
    if (a >= 0) {
        void *slot = attr_slot(ta, k);
        switch (attr_table[k].kind) {
        case ATTR_STRING: {
            char *v = attr_str_of(a);
            if (v) {
                free(*(char **)slot);
                *(char **)slot = v;
                ok = 1;
            }
            break;
        }
        case ATTR_U64: ok = attr_num_of(a, ai->data_size, H5T_NATIVE_UINT64, slot) == 1; break;
        case ATTR_I64: ok = attr_num_of(a, ai->data_size, H5T_NATIVE_INT64, slot) == 1; break;
        default: ok = attr_num_of(a, ai->data_size, H5T_NATIVE_DOUBLE, slot) == 1; break;
        }
        H5Aclose(a);
    }
    if (ok)
        ta->seen |= 1u << k;
    else
        ta->bad |= 1u << k;
    return 0;
}

static int load_tensor(golden_reader *r, const char *name)
{
    golden_error *err = &r->err;
    reader_tensor rt = {.dset = -1, .offset = -1};
    golden_tensor_info *t = &rt.info;
    if (!(t->name = strdup(name)))
        return golden_fail_what(err, GOLDEN_ENOMEM, r->path, "out of memory");
    char where[1024];
    snprintf(where, sizeof where, "%.600s:%.400s", r->path, name);
    hid_t d = H5Dopen2(r->file, name, H5P_DEFAULT);
    if (d < 0) {
        free(t->name);
        return hdf5_fail(err, where, "cannot open dataset");
    }
    int rc = GOLDEN_OK;
    tensor_attrs ta = {.t = t, .values_unread = (r->flags & GOLDEN_READ_DATA_ONLY) != 0};
    H5Aiterate2(d, H5_INDEX_NAME, H5_ITER_NATIVE, NULL, tensor_attr_cb, &ta);
    H5Eclear2(H5E_DEFAULT);
    char *dtype = ta.dtype, *sha = ta.sha;
    hid_t ft = H5Dget_type(d), sp = H5Dget_space(d), dcpl = H5Dget_create_plist(d);
    if (!dtype)
        rc = golden_fail_what(err, GOLDEN_EINVAL, where, "missing string attribute 'dtype'");
    else if (golden_dtype_parse(dtype, &t->dtype) != 0)
        rc = golden_fail_what(err, GOLDEN_EINVAL, where, "unknown dtype '%s'", dtype);
    else if (ta.values_unread && !(ta.seen & (1u << A_SHA)))
        rc = golden_fail_what(err, GOLDEN_EINVAL, where, "missing attribute 'sha256'");
    else if (!ta.values_unread && (!sha || !golden_is_sha256_hex(sha)))
        rc = golden_fail_what(err, GOLDEN_EINVAL, where, "attribute 'sha256' is missing or not 64 lowercase hex digits");
    if (rc == GOLDEN_OK) {
        snprintf(t->sha256, sizeof t->sha256, "%s", sha ? sha : "");
        if (ta.values_unread)
            t->min = t->max = t->mean = t->std = NAN;
        int rank = sp >= 0 ? H5Sget_simple_extent_ndims(sp) : -1;
        hsize_t dims[GOLDEN_MAX_RANK];
        if (rank < 0 || rank > GOLDEN_MAX_RANK)
            rc = golden_fail_what(err, GOLDEN_EINVAL, where, "unsupported dataspace");
        else {
            H5Sget_simple_extent_dims(sp, dims, NULL);
            t->rank = rank;
            for (int k = 0; k < rank; k++)
                t->shape[k] = dims[k];
            rc = golden_shape_count(rank, t->shape, t->dtype, &t->count, err);
            if (rc != GOLDEN_OK)
                snprintf(err->where, sizeof err->where, "%s", where);
        }
    }
    if (rc == GOLDEN_OK) {
        /* the stored type must be of the class and width the dtype attribute names */
        H5T_class_t cls = ft >= 0 ? H5Tget_class(ft) : H5T_NO_CLASS;
        bool is_float_storage = golden_dtype_is_float(t->dtype) &&
                                t->dtype != GOLDEN_FP8_E4M3FN && t->dtype != GOLDEN_FP8_E5M2;
        if ((is_float_storage ? cls != H5T_FLOAT : cls != H5T_INTEGER) ||
            H5Tget_size(ft) != golden_dtype_size(t->dtype))
            rc = golden_fail_what(err, GOLDEN_EINVAL, where, "stored element type does not match dtype '%s'", dtype);
    }
    for (int k = 0; rc == GOLDEN_OK && k < ATTR_COUNT; k++) {
        if (ta.bad & (1u << k))
            rc = golden_fail_what(err, GOLDEN_EINVAL, where, "attribute '%s' is not a %s", attr_table[k].name,
                             attr_table[k].kind == ATTR_STRING ? "string" : "number");
        else if (attr_table[k].required && !(ta.seen & (1u << k)))
            rc = golden_fail_what(err, GOLDEN_EINVAL, where, "missing %s attribute '%s'",
                             attr_table[k].kind == ATTR_F64 ? "number" : "integer",
                             attr_table[k].name);
    }
    t->has_layer = (ta.seen >> A_LAYER) & 1;
    t->has_chip = (ta.seen >> A_CHIP) & 1;
    t->has_step = (ta.seen >> A_STEP) & 1;
    if (rc != GOLDEN_OK) {
        free(ta.op_family);
        free(ta.source);
    } else {
        t->op_family = ta.op_family;
        t->source = ta.source;
        /* direct reads: contiguous, unfiltered, allocated, stored exactly as canonical bytes */
        hid_t canon = canonical_type(t->dtype);
        haddr_t off = H5Dget_offset(d);
        if (canon >= 0 && dcpl >= 0 && H5Pget_layout(dcpl) == H5D_CONTIGUOUS &&
            H5Pget_nfilters(dcpl) == 0 && H5Pget_external_count(dcpl) == 0 &&
            off != HADDR_UNDEF && H5Tequal(ft, canon) > 0 &&
            H5Dget_storage_size(d) == t->count * golden_dtype_size(t->dtype))
            rt.offset = (int64_t)off;
        if (canon >= 0)
            H5Tclose(canon);
        H5Eclear2(H5E_DEFAULT);
    }
    free(dtype);
    free(sha);
    if (ft >= 0)
        H5Tclose(ft);
    if (sp >= 0)
        H5Sclose(sp);
    if (dcpl >= 0)
        H5Pclose(dcpl);
    H5Dclose(d);
    if (rc == GOLDEN_OK && r->n == r->cap) {
        size_t cap = r->cap ? r->cap * 2 : 16;
        reader_tensor *nt = realloc(r->t, cap * sizeof *nt);
        if (!nt)
            rc = golden_fail_what(err, GOLDEN_ENOMEM, where, "out of memory");
        else
            r->t = nt, r->cap = cap;
    }
    if (rc != GOLDEN_OK) {
        golden_tensor_info_clear(t);
        return GOLDEN_ERR;
    }
    r->t[r->n++] = rt;
    return GOLDEN_OK;
}

static herr_t visit_cb(hid_t obj, const char *name, const H5O_info_t *info, void *data)
{
    (void)obj;
    golden_reader *r = data;
    if (info->type != H5O_TYPE_DATASET)
        return 0;
    if (load_tensor(r, name) != GOLDEN_OK) {
        r->failed = 1;
        return 1; /* stop */
    }
    return 0;
}

static herr_t meta_cb(hid_t loc, const char *name, const H5A_info_t *ainfo, void *data)
{
    (void)ainfo;
    golden_reader *r = data;
    char *v = attr_read_str(loc, name);
    if (!v)
        return 0; /* non-string root attributes are not metadata */
    char **k2 = realloc(r->meta_keys, (r->meta_n + 1) * sizeof *k2);
    if (k2)
        r->meta_keys = k2;
    char **v2 = realloc(r->meta_vals, (r->meta_n + 1) * sizeof *v2);
    if (v2)
        r->meta_vals = v2;
    char *k = strdup(name);
    if (!k2 || !v2 || !k) {
        free(v);
        free(k);
        r->failed = 1;
        golden_fail_what(&r->err, GOLDEN_ENOMEM, r->path, "out of memory");
        return 1;
    }
    r->meta_keys[r->meta_n] = k;
    r->meta_vals[r->meta_n++] = v;
    return 0;
}

static int cmp_tensor(const void *a, const void *b)
{
    return strcmp(((const reader_tensor *)a)->info.name, ((const reader_tensor *)b)->info.name);
}

int golden_reader_open(const char *path, golden_reader **out, golden_error *err)
{
    return golden_reader_open_flags(path, 0, out, err);
}

int golden_reader_open_flags(const char *path, unsigned flags, golden_reader **out,
                             golden_error *err)
{
    *out = NULL;
    golden_reader *r = calloc(1, sizeof *r);
    if (!r)
        return golden_fail_what(err, GOLDEN_ENOMEM, path, "out of memory");
    r->file = -1;
    r->fd = -1;
    r->flags = flags;
    if (!(r->path = strdup(path))) {
        free(r);
        return golden_fail_what(err, GOLDEN_ENOMEM, path, "out of memory");
    }
    struct stat st;
    if (stat(path, &st) != 0) {
        golden_fail_what(err, golden_code_from_errno(errno), path, "cannot open: %s", strerror(errno));
        golden_reader_close(r);
        return GOLDEN_ERR;
    }
    if (!S_ISREG(st.st_mode)) {
        golden_fail_what(err, GOLDEN_EINVAL, path, "not a regular file");
        golden_reader_close(r);
        return GOLDEN_ERR;
    }
    r->fd = open(path, O_RDONLY | O_CLOEXEC);
    if (r->fd < 0) {
        golden_fail_what(err, golden_code_from_errno(errno), path, "cannot open: %s", strerror(errno));
        golden_reader_close(r);
        return GOLDEN_ERR;
    }
    lock_file(path);
    int rc = GOLDEN_OK;
    if (H5Fis_hdf5(path) <= 0) {
        H5Eclear2(H5E_DEFAULT);
        rc = golden_fail_what(err, GOLDEN_ECORRUPT, path, "not an HDF5 file");
    }
    if (rc == GOLDEN_OK) {
        hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
        H5Pset_fclose_degree(fapl, H5F_CLOSE_STRONG);
        r->file = H5Fopen(path, H5F_ACC_RDONLY, fapl);
        H5Pclose(fapl);
        if (r->file < 0)
            rc = hdf5_fail(err, path, "cannot open HDF5 file");
    }
    if (rc == GOLDEN_OK) {
        char *schema = attr_read_str(r->file, "schema");
        if (!schema || strcmp(schema, GOLDEN_SCHEMA_GOLDEN) != 0)
            rc = golden_fail_what(err, GOLDEN_EINVAL, path, "not a %s file (root attribute schema is %s%s%s)",
                             GOLDEN_SCHEMA_GOLDEN, schema ? "'" : "missing",
                             schema ? schema : "", schema ? "'" : "");
        free(schema);
    }
    if (rc == GOLDEN_OK) {
        hsize_t idx = 0;
        H5Aiterate2(r->file, H5_INDEX_NAME, H5_ITER_INC, &idx, meta_cb, r);
        if (!r->failed)
            H5Ovisit2(r->file, H5_INDEX_NAME, H5_ITER_INC, visit_cb, r, H5O_INFO_BASIC);
        if (r->failed) {
            if (err)
                *err = r->err;
            rc = GOLDEN_ERR;
        }
        H5Eclear2(H5E_DEFAULT);
    }
    golden_hdf5_unlock();
    if (rc != GOLDEN_OK) {
        golden_reader_close(r);
        return rc;
    }
    if (r->n > 1)
        qsort(r->t, r->n, sizeof *r->t, cmp_tensor);
    *out = r;
    return GOLDEN_OK;
}

void golden_reader_close(golden_reader *r)
{
    if (!r)
        return;
    lock_file(r->path);
    for (size_t i = 0; i < r->n; i++)
        if (r->t[i].dset >= 0)
            H5Dclose(r->t[i].dset);
    if (r->file >= 0)
        H5Fclose(r->file);
    golden_hdf5_unlock();
    for (size_t i = 0; i < r->n; i++)
        golden_tensor_info_clear(&r->t[i].info);
    for (size_t i = 0; i < r->meta_n; i++) {
        free(r->meta_keys[i]);
        free(r->meta_vals[i]);
    }
    free(r->meta_keys);
    free(r->meta_vals);
    if (r->fd >= 0)
        close(r->fd);
    free(r->t);
    free(r->path);
    free(r);
}

const char *golden_reader_path(const golden_reader *r) { return r->path; }
size_t golden_reader_count(const golden_reader *r) { return r->n; }

const golden_tensor_info *golden_reader_tensor(const golden_reader *r, size_t i)
{
    return i < r->n ? &r->t[i].info : NULL;
}

long golden_reader_find(const golden_reader *r, const char *name)
{
    size_t lo = 0, hi = r->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = strcmp(r->t[mid].info.name, name);
        if (c == 0)
            return (long)mid;
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return -1;
}

const char *golden_reader_meta(const golden_reader *r, const char *key)
{
    for (size_t i = 0; i < r->meta_n; i++)
        if (strcmp(r->meta_keys[i], key) == 0)
            return r->meta_vals[i];
    return NULL;
}

size_t golden_reader_meta_count(const golden_reader *r) { return r->meta_n; }

void golden_reader_meta_at(const golden_reader *r, size_t i, const char **key, const char **value)
{
    *key = i < r->meta_n ? r->meta_keys[i] : NULL;
    *value = i < r->meta_n ? r->meta_vals[i] : NULL;
}

int golden_reader_read(golden_reader *r, size_t i, uint64_t first, uint64_t n, void *buf,
                       golden_error *err)
{
    if (i >= r->n)
        return golden_fail_what(err, GOLDEN_EINVAL, r->path, "no tensor %zu", i);
    reader_tensor *rt = &r->t[i];
    const golden_tensor_info *t = &rt->info;
    if (first > t->count || n > t->count - first)
        return golden_fail_where(err, GOLDEN_EINVAL, "element range is outside the tensor", "%s:%s", r->path, t->name);
    if (n == 0)
        return GOLDEN_OK;
    size_t w = golden_dtype_size(t->dtype);
    if (rt->offset >= 0) {
        unsigned char *p = buf;
        uint64_t left = n * w;
        off_t at = (off_t)(rt->offset + (int64_t)(first * w));
        while (left > 0) {
            ssize_t got = pread(r->fd, p, left > (1u << 30) ? (1u << 30) : left, at);
            if (got < 0 && errno == EINTR)
                continue;
            if (got <= 0)
                return golden_fail_where(err, golden_code_from_errno(errno), got < 0 ? strerror(errno) : "file is truncated",
                                    "%s:%s", r->path, t->name);
            p += got;
            at += got;
            left -= (uint64_t)got;
        }
        return GOLDEN_OK;
    }
    char where[1024];
    snprintf(where, sizeof where, "%.600s:%.400s", r->path, t->name);
    lock_file(r->path);
    int rc = GOLDEN_OK;
    if (rt->dset < 0)
        rt->dset = H5Dopen2(r->file, t->name, H5P_DEFAULT);
    hid_t mt = canonical_type(t->dtype), fspace = -1, mspace = -1;
    if (rt->dset < 0 || mt < 0) {
        rc = hdf5_fail(err, where, "cannot open dataset");
    } else if (t->rank == 0) {
        if (H5Dread(rt->dset, mt, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf) < 0)
            rc = hdf5_fail(err, where, "cannot read tensor data");
    } else {
        hsize_t mdim = n;
        fspace = H5Dget_space(rt->dset);
        mspace = H5Screate_simple(1, &mdim, NULL);
        if (fspace < 0 || mspace < 0 || select_linear(fspace, t->rank, t->shape, first, n) < 0 ||
            H5Dread(rt->dset, mt, mspace, fspace, H5P_DEFAULT, buf) < 0)
            rc = hdf5_fail(err, where, "cannot read tensor data");
    }
    if (fspace >= 0)
        H5Sclose(fspace);
    if (mspace >= 0)
        H5Sclose(mspace);
    if (mt >= 0)
        H5Tclose(mt);
    golden_hdf5_unlock();
    return rc;
}

#define RECOMPUTE_ELEMS (1u << 18)

int golden_reader_recompute(golden_reader *r, size_t i, char sha256[65], golden_stats *stats,
                            golden_error *err)
{
    if (i >= r->n)
        return golden_fail_what(err, GOLDEN_EINVAL, r->path, "no tensor %zu", i);
    const golden_tensor_info *t = &r->t[i].info;
    size_t w = golden_dtype_size(t->dtype);
    unsigned char *buf = malloc(RECOMPUTE_ELEMS * w);
    double *f = malloc(RECOMPUTE_ELEMS * sizeof *f);
    golden_sha256 *h = buf && f ? golden_sha256_new(err) : NULL;
    int rc = h ? GOLDEN_OK : GOLDEN_ERR;
    if (!buf || !f)
        golden_fail_what(err, GOLDEN_ENOMEM, r->path, "out of memory");
    golden_stats_init(stats);
    for (uint64_t at = 0; rc == GOLDEN_OK && at < t->count;) {
        uint64_t n = t->count - at < RECOMPUTE_ELEMS ? t->count - at : RECOMPUTE_ELEMS;
        rc = golden_reader_read(r, i, at, n, buf, err);
        if (rc == GOLDEN_OK)
            rc = golden_sha256_update(h, buf, n * w, err);
        if (rc == GOLDEN_OK) {
            golden_convert_to_f64(t->dtype, buf, n, f);
            golden_stats_add(stats, f, n);
        }
        at += n;
    }
    if (rc == GOLDEN_OK)
        rc = golden_sha256_final(h, sha256, err);
    golden_sha256_free(h);
    free(buf);
    free(f);
    return rc;
}
