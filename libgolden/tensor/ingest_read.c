/* Streaming an input's canonical bytes (byte order swapped, Fortran order transposed tile by
 * tile, read ahead on a helper thread) and writing it as a tensor of a golden file. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "golden/doc.h"
#include "golden/hash.h"
#include "golden/ingest.h"
#include "golden/report.h"
#include "golden/schema.h"
#include "tensor/ingest_private.h"
#include "tensor/zip_private.h"
#include "util/pool.h"

/* ---------------------------------------------------------------- streaming */

static void swap_bytes(unsigned char *p, size_t n, size_t w)
{
    if (w == 2) {
        for (size_t i = 0; i + 1 < n; i += 2) {
            uint16_t v;
            memcpy(&v, p + i, 2);
            v = __builtin_bswap16(v);
            memcpy(p + i, &v, 2);
        }
    } else if (w == 4) {
        for (size_t i = 0; i + 3 < n; i += 4) {
            uint32_t v;
            memcpy(&v, p + i, 4);
            v = __builtin_bswap32(v);
            memcpy(p + i, &v, 4);
        }
    } else if (w == 8) {
        for (size_t i = 0; i + 7 < n; i += 8) {
            uint64_t v;
            memcpy(&v, p + i, 8);
            v = __builtin_bswap64(v);
            memcpy(p + i, &v, 8);
        }
    }
}

#define WINDOW (256u << 10)

/* One element copy with a constant size per case, so the compiler emits a plain move
 * instead of a memcpy call per element in the transposition's inner loops. */
static inline void copy_elem(unsigned char *dst, const unsigned char *src, size_t w)
{
    switch (w) {
    case 1: *dst = *src; break;
    case 2: memcpy(dst, src, 2); break;
    case 4: memcpy(dst, src, 4); break;
    default: memcpy(dst, src, 8); break;
    }
}

/* State of a Fortran-order transposition (see docs/formats.md, "Fortran order"). */
typedef struct {
    const golden_input *in;
    int fd;
    size_t w;
    int rank;
    uint64_t dims[GOLDEN_MAX_RANK]; /* shape without its 1s */
    size_t tile_cap;                /* bytes */
    unsigned char *tile, *scratch, *win;
    uint64_t win_off;               /* file offset of win[0] */
    size_t win_len;
    golden_chunk_fn fn;
    void *ctx;
    golden_error *err;
} ftx;

/* Gather n elements at source element indices e0, e0+stride, ... into ft->scratch. Runs of
 * adjacent elements that are long or far apart are read directly; short, dense ones through
 * a read-ahead window so that tiny strided reads do not each cost a system call. */
static int fetch(ftx *ft, uint64_t e0, uint64_t stride, size_t n, bool dense)
{
    size_t w = ft->w;
    if (stride == 1 && !dense)
        return lg_ingest_pread_full(ft->fd, ft->scratch, n * w, ft->in->offset + e0 * w, ft->in->path,
                          ft->err);
    uint64_t end = ft->in->offset + ft->in->nbytes;
    if (stride * w >= WINDOW / 2) { /* too sparse for a window: one read per element */
        for (size_t b = 0; b < n; b++)
            if (lg_ingest_pread_full(ft->fd, ft->scratch + b * w, w, ft->in->offset + (e0 + stride * b) * w,
                           ft->in->path, ft->err) != GOLDEN_OK)
                return GOLDEN_ERR;
        return GOLDEN_OK;
    }
    for (size_t b = 0; b < n; b++) {
        uint64_t off = ft->in->offset + (e0 + stride * b) * w;
        if (off < ft->win_off || off + w > ft->win_off + ft->win_len) {
            size_t len = (size_t)(end - off < WINDOW ? end - off : WINDOW);
            if (lg_ingest_pread_full(ft->fd, ft->win, len, off, ft->in->path, ft->err) != GOLDEN_OK)
                return GOLDEN_ERR;
            ft->win_off = off;
            ft->win_len = len;
        }
        copy_elem(ft->scratch + b * w, ft->win + (off - ft->win_off), w);
    }
    return GOLDEN_OK;
}

static int emit_out(ftx *ft, unsigned char *p, size_t nbytes)
{
    if (ft->in->big_endian)
        swap_bytes(p, nbytes, ft->w);
    return ft->fn(ft->ctx, p, nbytes, ft->err);
}

/* Emit, in C order, the sub-array of axes k.. whose element (i_k, i_k+1, ...) sits at source
 * element base + stride * (i_k + d_k * (i_k+1 + d_k+1 * (...))) (Fortran layout). */
static int emit(ftx *ft, int k, uint64_t base, uint64_t stride)
{
    size_t w = ft->w;
    uint64_t dk = ft->dims[k];
    uint64_t rest = 1;
    for (int m = k + 1; m < ft->rank; m++)
        rest *= ft->dims[m];
    if (k == ft->rank - 1) {
        size_t per = ft->tile_cap / w;
        for (uint64_t a = 0; a < dk; a += per) {
            size_t bb = (size_t)(dk - a < per ? dk - a : per);
            if (fetch(ft, base + stride * a, stride, bb, false) != GOLDEN_OK ||
                emit_out(ft, ft->scratch, bb * w) != GOLDEN_OK)
                return GOLDEN_ERR;
        }
        return GOLDEN_OK;
    }
    if (rest * w > ft->tile_cap) {
        for (uint64_t i = 0; i < dk; i++)
            if (emit(ft, k + 1, base + stride * i, stride * dk) != GOLDEN_OK)
                return GOLDEN_ERR;
        return GOLDEN_OK;
    }
    /* A tile holds B consecutive values of axis k times the whole rest, in C order. */
    uint64_t B = ft->tile_cap / (rest * w);
    if (B > dk)
        B = dk;
    uint64_t cstride[GOLDEN_MAX_RANK]; /* C-order strides of the rest inside the tile */
    uint64_t acc = 1;
    for (int m = ft->rank - 1; m > k; m--) {
        cstride[m] = acc;
        acc *= ft->dims[m];
    }
    for (uint64_t a = 0; a < dk; a += B) {
        size_t bb = (size_t)(dk - a < B ? dk - a : B);
        /* through the window when runs are strided, or short and close together (the
         * window then reads at most a few times the bytes used, in few system calls) */
        bool dense = stride != 1 ||
                     (dk * w <= WINDOW / 4 && (bb * w < 256 || dk <= 4 * (uint64_t)bb));
        uint64_t idx[GOLDEN_MAX_RANK] = {0};
        uint64_t ci = 0;
        for (uint64_t j = 0; j < rest; j++) {
            if (fetch(ft, base + stride * (a + dk * j), stride, bb, dense) != GOLDEN_OK)
                return GOLDEN_ERR;
            unsigned char *dst = ft->tile + ci * w;
            size_t step = (size_t)rest * w;
            for (size_t b = 0; b < bb; b++)
                copy_elem(dst + b * step, ft->scratch + b * w, w);
            /* next j in Fortran order: axis k+1 fastest */
            for (int m = k + 1; m < ft->rank; m++) {
                ci += cstride[m];
                if (++idx[m] < ft->dims[m])
                    break;
                ci -= cstride[m] * ft->dims[m];
                idx[m] = 0;
            }
        }
        if (emit_out(ft, ft->tile, bb * rest * w) != GOLDEN_OK)
            return GOLDEN_ERR;
    }
    return GOLDEN_OK;
}

/* Contiguous data, one chunk at a time on the calling thread. */
static int read_serial(int fd, const golden_input *in, size_t chunk, golden_chunk_fn fn,
                       void *ctx, golden_error *err)
{
    size_t w = golden_dtype_size(in->info.dtype);
    unsigned char *buf = malloc(in->nbytes < chunk ? (in->nbytes ? in->nbytes : 1) : chunk);
    if (!buf)
        return golden_fail_what(err, GOLDEN_ENOMEM, in->path, "out of memory");
    int rc = GOLDEN_OK;
    for (uint64_t done = 0; done < in->nbytes && rc == GOLDEN_OK;) {
        size_t n = (size_t)(in->nbytes - done < chunk ? in->nbytes - done : chunk);
        rc = lg_ingest_pread_full(fd, buf, n, in->offset + done, in->path, err);
        if (rc == GOLDEN_OK) {
            if (in->big_endian)
                swap_bytes(buf, n, w);
            rc = fn(ctx, buf, n, err);
        }
        done += n;
    }
    free(buf);
    return rc;
}

/* Read-ahead: a helper thread reads (and byte-swaps) chunk k+1 while the caller's fn works
 * on chunk k, so the system-call and copy time of reading leaves the consumer's core. */
enum { RA_SLOTS = 3 };
typedef struct {
    int fd;
    const golden_input *in;
    size_t chunk;
    unsigned char *buf[RA_SLOTS];
    size_t len[RA_SLOTS];
    bool full[RA_SLOTS];
    bool stop;    /* consumer gave up */
    int rc;       /* reader's status */
    golden_error err;
    pthread_mutex_t mu;
    pthread_cond_t cv;
} read_ahead_state;

static void *read_ahead_main(void *arg)
{
    read_ahead_state *ra = arg;
    size_t w = golden_dtype_size(ra->in->info.dtype);
    uint64_t done = 0;
    for (size_t k = 0; done < ra->in->nbytes; k++) {
        size_t slot = k % RA_SLOTS;
        pthread_mutex_lock(&ra->mu);
        while (ra->full[slot] && !ra->stop)
            pthread_cond_wait(&ra->cv, &ra->mu);
        bool stop = ra->stop;
        pthread_mutex_unlock(&ra->mu);
        if (stop)
            return NULL;
        size_t n = (size_t)(ra->in->nbytes - done < ra->chunk ? ra->in->nbytes - done : ra->chunk);
        int rc = lg_ingest_pread_full(ra->fd, ra->buf[slot], n, ra->in->offset + done, ra->in->path,
                            &ra->err);
        if (rc == GOLDEN_OK && ra->in->big_endian)
            swap_bytes(ra->buf[slot], n, w);
        pthread_mutex_lock(&ra->mu);
        ra->len[slot] = n;
        ra->full[slot] = rc == GOLDEN_OK; /* a failed slot is never handed out */
        ra->rc = rc;
        pthread_cond_broadcast(&ra->cv);
        pthread_mutex_unlock(&ra->mu);
        if (rc != GOLDEN_OK)
            return NULL;
        done += n;
    }
    return NULL;
}

static int read_ahead(int fd, const golden_input *in, size_t chunk, golden_chunk_fn fn,
                      void *ctx, golden_error *err)
{
    read_ahead_state ra = {.fd = fd, .in = in, .chunk = chunk, .rc = GOLDEN_OK};
    for (int i = 0; i < RA_SLOTS; i++)
        if (!(ra.buf[i] = malloc(chunk))) {
            for (int j = 0; j < i; j++)
                free(ra.buf[j]);
            return golden_fail_what(err, GOLDEN_ENOMEM, in->path, "out of memory");
        }
    pthread_mutex_init(&ra.mu, NULL);
    pthread_cond_init(&ra.cv, NULL);
    pthread_t tid;
    int rc;
    if (pthread_create(&tid, NULL, read_ahead_main, &ra) != 0) {
        rc = read_serial(fd, in, chunk, fn, ctx, err);
    } else {
        rc = GOLDEN_OK;
        uint64_t done = 0;
        for (size_t k = 0; done < in->nbytes && rc == GOLDEN_OK; k++) {
            size_t slot = k % RA_SLOTS;
            pthread_mutex_lock(&ra.mu);
            while (!ra.full[slot] && ra.rc == GOLDEN_OK)
                pthread_cond_wait(&ra.cv, &ra.mu);
            bool have = ra.full[slot];
            if (!have) {
                rc = GOLDEN_ERR;
                *err = ra.err;
            }
            pthread_mutex_unlock(&ra.mu);
            if (!have)
                break;
            rc = fn(ctx, ra.buf[slot], ra.len[slot], err);
            done += ra.len[slot];
            pthread_mutex_lock(&ra.mu);
            ra.full[slot] = false;
            pthread_cond_broadcast(&ra.cv);
            pthread_mutex_unlock(&ra.mu);
        }
        pthread_mutex_lock(&ra.mu);
        ra.stop = true;
        pthread_cond_broadcast(&ra.cv);
        pthread_mutex_unlock(&ra.mu);
        pthread_join(tid, NULL);
    }
    pthread_cond_destroy(&ra.cv);
    pthread_mutex_destroy(&ra.mu);
    for (int i = 0; i < RA_SLOTS; i++)
        free(ra.buf[i]);
    return rc;
}

/* golden_input_read with a read-ahead thread when threads > 1. The read-ahead is a pipeline
 * stage (it runs ahead of its consumer, chunk k+1 while chunk k is used), not a parallel for
 * over independent items, so it does not go through util/pool.h. */
static int input_read(const golden_input *in, size_t chunk, int threads, golden_chunk_fn fn,
                      void *ctx, golden_error *err)
{
    if (in->format == GOLDEN_INPUT_DEFLATED)
        return lg_ingest_deflated_read(in, chunk, fn, ctx, err);
    size_t w = golden_dtype_size(in->info.dtype);
    int fd;
    if (lg_ingest_open_input(in, in->nbytes, &chunk, &fd, err) != GOLDEN_OK)
        return GOLDEN_ERR;
    ftx ft = {.in = in, .fd = fd, .w = w, .tile_cap = chunk, .fn = fn, .ctx = ctx, .err = err};
    for (int i = 0; i < in->info.rank; i++)
        if (in->info.shape[i] != 1)
            ft.dims[ft.rank++] = in->info.shape[i];
    int rc = GOLDEN_OK;
    if (!in->fortran_order || ft.rank <= 1 || in->info.count == 0) {
        /* contiguous: one sequential pass */
        posix_fadvise(fd, (off_t)in->offset, (off_t)in->nbytes, POSIX_FADV_SEQUENTIAL);
        if (in->nbytes > chunk && threads > 1)
            rc = read_ahead(fd, in, chunk, fn, ctx, err);
        else
            rc = read_serial(fd, in, chunk, fn, ctx, err);
        close(fd);
        return rc;
    }
    ft.tile = malloc(chunk);
    ft.scratch = malloc(chunk);
    ft.win = malloc(WINDOW);
    if (!ft.tile || !ft.scratch || !ft.win)
        rc = golden_fail_what(err, GOLDEN_ENOMEM, in->path, "out of memory");
    else
        rc = emit(&ft, 0, 0, 1);
    free(ft.tile);
    free(ft.scratch);
    free(ft.win);
    close(fd);
    return rc;
}

int golden_input_read(const golden_input *in, size_t chunk, golden_chunk_fn fn, void *ctx,
                      golden_error *err)
{
    return input_read(in, chunk, lg_cpu_count(), fn, ctx, err);
}

/* ---------------------------------------------------------------- into a golden file */

typedef struct {
    golden_writer *w;
    golden_progress *prog;
    unsigned long long *done;
} write_ctx;

static int write_piece(void *ctx, const void *data, size_t n, golden_error *err)
{
    write_ctx *c = ctx;
    if (golden_writer_write(c->w, data, n, err) != GOLDEN_OK)
        return GOLDEN_ERR;
    if (c->done) {
        *c->done += n;
        if (c->prog)
            golden_progress_update(c->prog, *c->done);
    }
    return GOLDEN_OK;
}

int golden_input_write(const golden_input *in, golden_writer *w, golden_progress *prog,
                       unsigned long long *done, golden_error *err)
{
    golden_tensor_info out;
    memset(&out, 0, sizeof out);
    write_ctx c = {.w = w, .prog = prog, .done = done};
    int rc = GOLDEN_OK;
    if (golden_writer_begin(w, &in->info, err) != GOLDEN_OK ||
        input_read(in, 0, golden_writer_threads(w), write_piece, &c, err) != GOLDEN_OK ||
        golden_writer_end(w, &out, err) != GOLDEN_OK) {
        /* name the file and the tensor whenever the error does not already */
        if (err && (!strstr(err->where, in->info.name) || !strstr(err->where, in->info.source))) {
            char what[sizeof err->what];
            snprintf(what, sizeof what, "%s", err->what);
            golden_fail_where(err, GOLDEN_EINVAL, what, "%.500s:%.500s", in->info.source, in->info.name);
        }
        rc = GOLDEN_ERR;
    } else if (in->has_expected && strcmp(out.sha256, in->expected_sha256) != 0) {
        char where[1024];
        snprintf(where, sizeof where, "%.500s:%.500s", in->info.source, in->info.name);
        rc = golden_fail_what(err, GOLDEN_EINVAL, where, "expected sha256 %s, data hashes to %s",
                         in->expected_sha256, out.sha256);
    }
    golden_tensor_info_clear(&out);
    return rc;
}
