/* The zip container of .npz and PyTorch .pt/.pth inputs: our own central-directory parser
 * (every offset checked, ZIP64, names checked, local headers matched, no overlaps), stored
 * entries served by file offset, deflated entries inflated by zlib in bounded chunks with the
 * CRC-32 checked at the end (docs/formats.md, "zip containers"). */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "golden/ingest.h"
#include "tensor/ingest_private.h"
#include "tensor/zip_private.h"

#define SIG_LOCAL 0x04034b50u
#define SIG_CDIR 0x02014b50u
#define SIG_EOCD 0x06054b50u
#define SIG_EOCD64 0x06064b50u
#define SIG_LOC64 0x07064b50u
#define EOCD_LEN 22u
#define EOCD_SCAN (EOCD_LEN + 65535u)
#define INBUF (64u << 10)

static uint16_t le16(const unsigned char *p) { return (uint16_t)(p[0] | p[1] << 8); }
static uint32_t le32(const unsigned char *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
static uint64_t le64(const unsigned char *p) { return (uint64_t)le32(p) | (uint64_t)le32(p + 4) << 32; }

static int bad(golden_error *err, const char *path, const char *what)
{
    return golden_fail_what(err, GOLDEN_ECORRUPT, path, "corrupt zip: %s", what);
}

bool lg_zip_magic(const unsigned char *head, size_t n)
{
    return n >= 4 && head[0] == 'P' && head[1] == 'K' &&
           ((head[2] == 3 && head[3] == 4) || (head[2] == 5 && head[3] == 6));
}

void lg_zip_free(lg_zip *z)
{
    for (size_t i = 0; i < z->n; i++)
        free(z->e[i].name);
    free(z->e);
    z->e = NULL;
    z->n = 0;
}

const lg_zip_entry *lg_zip_find(const lg_zip *z, const char *name)
{
    for (size_t i = 0; i < z->n; i++)
        if (strcmp(z->e[i].name, name) == 0)
            return &z->e[i];
    return NULL;
}

/* A member name is a relative path of plain components: no absolute path, drive, backslash,
 * NUL, empty or "." / ".." component. Folder entries (trailing '/') are allowed. */
static bool name_ok(const char *s, size_t n)
{
    if (n == 0 || s[0] == '/' || (n >= 2 && s[1] == ':'))
        return false;
    size_t start = 0;
    for (size_t i = 0; i <= n; i++) {
        if (i < n && (s[i] == '\0' || s[i] == '\\'))
            return false;
        if (i == n || s[i] == '/') {
            size_t len = i - start;
            if (len == 0 && !(i == n && s[n - 1] == '/'))
                return false;
            if ((len == 1 && s[start] == '.') || (len == 2 && s[start] == '.' && s[start + 1] == '.'))
                return false;
            start = i + 1;
        }
    }
    return true;
}

/* Find the end-of-central-directory record: the last one whose comment ends exactly at the
 * end of the file. Fills the central directory's place and entry count (ZIP64 where needed). */
static int find_cdir(int fd, uint64_t fsize, const char *path, uint64_t *cd_off, uint64_t *cd_size,
                     uint64_t *count, uint64_t *cd_end_limit, golden_error *err)
{
    if (fsize < EOCD_LEN)
        return bad(err, path, "file too short for an end-of-central-directory record");
    size_t scan = (size_t)(fsize < EOCD_SCAN ? fsize : EOCD_SCAN);
    unsigned char *buf = malloc(scan);
    if (!buf)
        return golden_fail_what(err, GOLDEN_ENOMEM, path, "out of memory");
    uint64_t base = fsize - scan;
    if (lg_ingest_pread_full(fd, buf, scan, base, path, err) != GOLDEN_OK) {
        free(buf);
        return GOLDEN_ERR;
    }
    size_t at = SIZE_MAX;
    for (size_t i = scan - EOCD_LEN + 1; i-- > 0;)
        if (le32(buf + i) == SIG_EOCD && i + EOCD_LEN + le16(buf + i + 20) == scan) {
            at = i;
            break;
        }
    if (at == SIZE_MAX) {
        free(buf);
        return bad(err, path, "no end-of-central-directory record (truncated, or not a zip file)");
    }
    const unsigned char *r = buf + at;
    uint64_t eocd = base + at;
    uint16_t disk = le16(r + 4), cd_disk = le16(r + 6), n_disk = le16(r + 8), n = le16(r + 10);
    uint32_t sz = le32(r + 12), off = le32(r + 16);
    free(buf);
    *count = n;
    *cd_size = sz;
    *cd_off = off;
    *cd_end_limit = eocd;
    bool z64 = n == 0xFFFF || n_disk == 0xFFFF || sz == 0xFFFFFFFFu || off == 0xFFFFFFFFu;
    if (z64) {
        unsigned char loc[20], rec[56];
        if (eocd < 20 || lg_ingest_pread_full(fd, loc, 20, eocd - 20, path, err) != GOLDEN_OK ||
            le32(loc) != SIG_LOC64)
            return bad(err, path, "ZIP64 sizes without a ZIP64 end-of-central-directory locator");
        uint64_t r64 = le64(loc + 8);
        if (le32(loc + 4) != 0 || le32(loc + 16) > 1 || r64 > eocd - 20 || eocd - 20 - r64 < 56 ||
            lg_ingest_pread_full(fd, rec, 56, r64, path, err) != GOLDEN_OK || le32(rec) != SIG_EOCD64)
            return bad(err, path, "bad ZIP64 end-of-central-directory record");
        if (le32(rec + 16) != 0 || le32(rec + 20) != 0 || le64(rec + 24) != le64(rec + 32))
            return golden_fail_what(err, GOLDEN_EUNSUPPORTED, path, "multi-disk zip archives are not read");
        *count = le64(rec + 32);
        *cd_size = le64(rec + 40);
        *cd_off = le64(rec + 48);
        *cd_end_limit = r64;
    } else if (disk != 0 || cd_disk != 0 || n_disk != n) {
        return golden_fail_what(err, GOLDEN_EUNSUPPORTED, path, "multi-disk zip archives are not read");
    }
    if (*cd_off > *cd_end_limit || *cd_size > *cd_end_limit - *cd_off)
        return bad(err, path, "central directory lies outside the file");
    if (*count > LG_ZIP_MAX_ENTRIES || *cd_size > LG_ZIP_MAX_CDIR)
        return golden_fail_what(err, GOLDEN_EUNSUPPORTED, path,
                                "zip archive too large (%llu entries, %llu directory bytes; at most %u, %u)",
                                (unsigned long long)*count, (unsigned long long)*cd_size,
                                LG_ZIP_MAX_ENTRIES, LG_ZIP_MAX_CDIR);
    if (*count * 46 > *cd_size)
        return bad(err, path, "central directory shorter than its entry count");
    return GOLDEN_OK;
}

/* Apply a ZIP64 extended-information extra field to the fields that were saturated. */
static int zip64_extra(const unsigned char *x, size_t xn, uint64_t *usize, uint64_t *csize,
                       uint64_t *lho, bool need_u, bool need_c, bool need_l)
{
    size_t i = 0;
    while (i + 4 <= xn) {
        uint16_t id = le16(x + i), len = le16(x + i + 2);
        if (len > xn - i - 4)
            return -1;
        if (id == 0x0001) {
            const unsigned char *p = x + i + 4;
            size_t left = len;
            uint64_t *dst[3] = {need_u ? usize : NULL, need_c ? csize : NULL, need_l ? lho : NULL};
            for (int k = 0; k < 3; k++) {
                if (!dst[k])
                    continue;
                if (left < 8)
                    return -1;
                *dst[k] = le64(p);
                p += 8;
                left -= 8;
            }
            return 0;
        }
        i += 4 + (size_t)len;
    }
    return need_u || need_c || need_l ? -1 : 0;
}

static int cmp_header(const void *a, const void *b)
{
    const lg_zip_entry *x = *(lg_zip_entry *const *)a, *y = *(lg_zip_entry *const *)b;
    return x->header_off < y->header_off ? -1 : x->header_off > y->header_off;
}

static int cmp_name(const void *a, const void *b)
{
    return strcmp((*(lg_zip_entry *const *)a)->name, (*(lg_zip_entry *const *)b)->name);
}

/* One central-directory record at cd[*pos]: fill e, advance *pos. */
static int parse_cdir_entry(const unsigned char *cd, size_t cd_size, size_t *pos, const char *path,
                            lg_zip_entry *e, golden_error *err)
{
    size_t p = *pos;
    if (cd_size - p < 46 || le32(cd + p) != SIG_CDIR)
        return bad(err, path, "bad central-directory record");
    const unsigned char *r = cd + p;
    uint16_t flags = le16(r + 8), method = le16(r + 10);
    size_t nl = le16(r + 28), xl = le16(r + 30), cl = le16(r + 32);
    if (cd_size - p - 46 < nl + xl + cl)
        return bad(err, path, "central-directory record runs past the directory");
    const char *nm = (const char *)r + 46;
    if (!name_ok(nm, nl))
        return golden_fail_what(err, GOLDEN_EINVAL, path,
                                "zip member name '%.*s' is not a plain relative path", (int)(nl > 200 ? 200 : nl), nm);
    if (!(e->name = strndup(nm, nl)))
        return golden_fail_what(err, GOLDEN_ENOMEM, path, "out of memory");
    if (flags & 0x41)
        return golden_fail_what(err, GOLDEN_EUNSUPPORTED, path, "zip member '%s' is encrypted", e->name);
    if (method != LG_ZIP_STORED && method != LG_ZIP_DEFLATED)
        return golden_fail_what(err, GOLDEN_EUNSUPPORTED, path,
                                "zip member '%s' uses compression method %u (only stored and deflated are read)",
                                e->name, method);
    e->method = method;
    e->crc = le32(r + 16);
    e->csize = le32(r + 20);
    e->usize = le32(r + 24);
    e->header_off = le32(r + 42);
    if (le16(r + 34) != 0 && le16(r + 34) != 0xFFFF)
        return golden_fail_what(err, GOLDEN_EUNSUPPORTED, path, "multi-disk zip archives are not read");
    if (zip64_extra(r + 46 + nl, xl, &e->usize, &e->csize, &e->header_off, e->usize == 0xFFFFFFFFu,
                    e->csize == 0xFFFFFFFFu, e->header_off == 0xFFFFFFFFu) != 0)
        return bad(err, path, "bad ZIP64 extra field");
    *pos = p + 46 + nl + xl + cl;
    return GOLDEN_OK;
}

/* Match the local header, find the data, check sizes against the directory's place. */
static int check_local(int fd, const char *path, lg_zip_entry *e, uint64_t cd_off, golden_error *err)
{
    unsigned char h[30];
    size_t nl = strlen(e->name);
    if (e->header_off > cd_off || cd_off - e->header_off < 30 ||
        lg_ingest_pread_full(fd, h, 30, e->header_off, path, err) != GOLDEN_OK || le32(h) != SIG_LOCAL)
        return golden_fail_what(err, GOLDEN_ECORRUPT, path, "corrupt zip: member '%s' has no local header", e->name);
    if (le16(h + 26) != nl || le16(h + 8) != e->method)
        return golden_fail_what(err, GOLDEN_ECORRUPT, path,
                                "corrupt zip: member '%s': local header disagrees with the directory", e->name);
    char *ln = malloc(nl + 1);
    if (!ln)
        return golden_fail_what(err, GOLDEN_ENOMEM, path, "out of memory");
    int rc = lg_ingest_pread_full(fd, ln, nl, e->header_off + 30, path, err);
    bool same = rc == GOLDEN_OK && memcmp(ln, e->name, nl) == 0;
    free(ln);
    if (rc != GOLDEN_OK)
        return rc;
    if (!same)
        return golden_fail_what(err, GOLDEN_ECORRUPT, path,
                                "corrupt zip: member '%s': local header names another file", e->name);
    e->data_off = e->header_off + 30 + nl + le16(h + 28);
    if (e->data_off > cd_off || e->csize > cd_off - e->data_off)
        return golden_fail_what(err, GOLDEN_ECORRUPT, path,
                                "corrupt zip: member '%s': data runs past the central directory (truncated?)", e->name);
    if (e->method == LG_ZIP_STORED && e->csize != e->usize)
        return golden_fail_what(err, GOLDEN_ECORRUPT, path,
                                "corrupt zip: stored member '%s' has different sizes", e->name);
    if (e->method == LG_ZIP_DEFLATED && e->usize > 0 &&
        (e->csize == 0 || e->usize / LG_ZIP_MAX_RATIO > e->csize))
        return golden_fail_what(err, GOLDEN_ECORRUPT, path,
                                "zip member '%s' claims %llu bytes from %llu compressed (more than deflate can expand: a zip bomb?)",
                                e->name, (unsigned long long)e->usize, (unsigned long long)e->csize);
    return GOLDEN_OK;
}

/* No two members' byte ranges (local header to data end) overlap; names are unique. */
static int check_layout(lg_zip *z, const char *path, golden_error *err)
{
    if (z->n < 2)
        return GOLDEN_OK;
    lg_zip_entry **v = malloc(z->n * sizeof *v);
    if (!v)
        return golden_fail_what(err, GOLDEN_ENOMEM, path, "out of memory");
    for (size_t i = 0; i < z->n; i++)
        v[i] = &z->e[i];
    int rc = GOLDEN_OK;
    qsort(v, z->n, sizeof *v, cmp_header);
    for (size_t i = 1; i < z->n && rc == GOLDEN_OK; i++)
        if (v[i]->header_off < v[i - 1]->data_off + v[i - 1]->csize)
            rc = golden_fail_what(err, GOLDEN_ECORRUPT, path, "corrupt zip: members '%s' and '%s' overlap",
                                  v[i - 1]->name, v[i]->name);
    if (rc == GOLDEN_OK) {
        qsort(v, z->n, sizeof *v, cmp_name);
        for (size_t i = 1; i < z->n && rc == GOLDEN_OK; i++)
            if (strcmp(v[i]->name, v[i - 1]->name) == 0)
                rc = golden_fail_what(err, GOLDEN_EINVAL, path, "zip member '%s' appears twice", v[i]->name);
    }
    free(v);
    return rc;
}

int lg_zip_open(int fd, uint64_t fsize, const char *path, lg_zip *z, golden_error *err)
{
    z->e = NULL;
    z->n = 0;
    uint64_t cd_off = 0, cd_size = 0, count = 0, limit = 0;
    if (find_cdir(fd, fsize, path, &cd_off, &cd_size, &count, &limit, err) != GOLDEN_OK)
        return GOLDEN_ERR;
    unsigned char *cd = malloc(cd_size ? cd_size : 1);
    z->e = calloc(count ? count : 1, sizeof *z->e);
    if (!cd || !z->e) {
        free(cd);
        free(z->e);
        z->e = NULL;
        return golden_fail_what(err, GOLDEN_ENOMEM, path, "out of memory");
    }
    int rc = lg_ingest_pread_full(fd, cd, cd_size, cd_off, path, err);
    size_t pos = 0;
    for (uint64_t i = 0; i < count && rc == GOLDEN_OK; i++) {
        rc = parse_cdir_entry(cd, cd_size, &pos, path, &z->e[i], err);
        z->n = i + 1;
        if (rc == GOLDEN_OK)
            rc = check_local(fd, path, &z->e[i], cd_off, err);
    }
    if (rc == GOLDEN_OK && pos != cd_size)
        rc = bad(err, path, "central directory size disagrees with its records");
    if (rc == GOLDEN_OK)
        rc = check_layout(z, path, err);
    free(cd);
    if (rc != GOLDEN_OK)
        lg_zip_free(z);
    return rc;
}

/* ---------------------------------------------------------------- inflating */

/* An inflate stream over one entry, from its first byte. */
typedef struct {
    int fd;
    const char *path, *name;
    uint64_t off, csize, usize, crc_want;
    uint64_t cin, uout; /* compressed bytes fed, uncompressed bytes produced */
    uint32_t crc;
    bool ended;
    z_stream zs;
    unsigned char in[INBUF];
} inflater;

static int infl_init(inflater *f, int fd, const char *path, const char *name, uint64_t off,
                     uint64_t csize, uint64_t usize, uint32_t crc, golden_error *err)
{
    memset(&f->zs, 0, sizeof f->zs);
    f->fd = fd;
    f->path = path;
    f->name = name;
    f->off = off;
    f->csize = csize;
    f->usize = usize;
    f->crc_want = crc;
    f->cin = f->uout = 0;
    f->crc = (uint32_t)crc32(0L, Z_NULL, 0);
    f->ended = false;
    if (inflateInit2(&f->zs, -MAX_WBITS) != Z_OK)
        return golden_fail_what(err, GOLDEN_ENOMEM, path, "cannot start zlib's inflate");
    return GOLDEN_OK;
}

static int infl_fail(inflater *f, golden_error *err, const char *what)
{
    return golden_fail_where(err, GOLDEN_ECORRUPT, what, "%.500s:%.400s", f->path, f->name);
}

/* Produce exactly n more uncompressed bytes into out (NULL: discard into a scratch buffer).
 * Past the last byte the stream must end, with the declared size and CRC-32. */
static int infl_get(inflater *f, unsigned char *out, size_t n, golden_error *err)
{
    unsigned char scratch[16384];
    while (n > 0) {
        if (f->uout >= f->usize)
            return infl_fail(f, err, "deflated data longer than the directory says");
        size_t want = n;
        unsigned char *dst = out;
        if (!out) {
            want = n < sizeof scratch ? n : sizeof scratch;
            dst = scratch;
        }
        if (want > f->usize - f->uout)
            want = (size_t)(f->usize - f->uout);
        f->zs.next_out = dst;
        f->zs.avail_out = (uInt)(want > (1u << 30) ? (1u << 30) : want);
        size_t asked = f->zs.avail_out;
        while (f->zs.avail_out > 0) {
            if (f->zs.avail_in == 0) {
                uint64_t left = f->csize - f->cin;
                size_t k = (size_t)(left < INBUF ? left : INBUF);
                if (k == 0)
                    return infl_fail(f, err, "deflated data ends early (truncated?)");
                if (lg_ingest_pread_full(f->fd, f->in, k, f->off + f->cin, f->path, err) != GOLDEN_OK)
                    return GOLDEN_ERR;
                f->cin += k;
                f->zs.next_in = f->in;
                f->zs.avail_in = (uInt)k;
            }
            int zr = inflate(&f->zs, Z_NO_FLUSH);
            if (zr == Z_STREAM_END) {
                f->ended = true;
                break;
            }
            if (zr != Z_OK)
                return infl_fail(f, err, "corrupt deflated data");
        }
        size_t got = asked - f->zs.avail_out;
        f->crc = (uint32_t)crc32(f->crc, dst, (uInt)got);
        f->uout += got;
        if (got < asked)
            return infl_fail(f, err, "deflated data shorter than the directory says");
        n -= got;
        if (out)
            out += got;
    }
    return GOLDEN_OK;
}

/* At the end of the entry: check the stream ended there and the CRC-32. */
static int infl_finish(inflater *f, golden_error *err)
{
    if (f->uout != f->usize)
        return infl_get(f, NULL, (size_t)(f->usize - f->uout), err) != GOLDEN_OK ? GOLDEN_ERR
                                                                                : infl_finish(f, err);
    if (!f->ended) {
        unsigned char one;
        f->zs.next_out = &one;
        f->zs.avail_out = 1;
        for (;;) {
            if (f->zs.avail_in == 0) {
                uint64_t left = f->csize - f->cin;
                size_t k = (size_t)(left < INBUF ? left : INBUF);
                if (k == 0)
                    return infl_fail(f, err, "deflated data ends early (truncated?)");
                if (lg_ingest_pread_full(f->fd, f->in, k, f->off + f->cin, f->path, err) != GOLDEN_OK)
                    return GOLDEN_ERR;
                f->cin += k;
                f->zs.next_in = f->in;
                f->zs.avail_in = (uInt)k;
            }
            int zr = inflate(&f->zs, Z_NO_FLUSH);
            if (f->zs.avail_out == 0)
                return infl_fail(f, err, "deflated data longer than the directory says");
            if (zr == Z_STREAM_END)
                break;
            if (zr != Z_OK)
                return infl_fail(f, err, "corrupt deflated data");
        }
        f->ended = true;
    }
    if (f->crc != f->crc_want)
        return infl_fail(f, err, "CRC-32 mismatch (damaged archive)");
    return GOLDEN_OK;
}

static void infl_end(inflater *f) { inflateEnd(&f->zs); }

int lg_zip_read(int fd, const lg_zip_entry *e, const char *path, void *buf, size_t n,
                golden_error *err)
{
    if (n > e->usize)
        return golden_fail_where(err, GOLDEN_ECORRUPT, "member shorter than needed", "%.500s:%.400s",
                                 path, e->name);
    if (e->method == LG_ZIP_STORED)
        return lg_ingest_pread_full(fd, buf, n, e->data_off, path, err);
    inflater *f = malloc(sizeof *f);
    if (!f)
        return golden_fail_what(err, GOLDEN_ENOMEM, path, "out of memory");
    int rc = infl_init(f, fd, path, e->name, e->data_off, e->csize, e->usize, e->crc, err);
    if (rc == GOLDEN_OK) {
        rc = infl_get(f, buf, n, err);
        if (rc == GOLDEN_OK && n == e->usize)
            rc = infl_finish(f, err);
        infl_end(f);
    }
    free(f);
    return rc;
}

int lg_zip_slurp(int fd, const lg_zip_entry *e, const char *path, uint64_t max,
                 unsigned char **out, golden_error *err)
{
    *out = NULL;
    if (e->usize > max)
        return golden_fail_where(err, GOLDEN_EUNSUPPORTED, "member larger than this reader allows",
                                 "%.500s:%.400s", path, e->name);
    unsigned char *b = malloc((size_t)e->usize + 1);
    if (!b)
        return golden_fail_what(err, GOLDEN_ENOMEM, path, "out of memory");
    if (lg_zip_read(fd, e, path, b, (size_t)e->usize, err) != GOLDEN_OK) {
        free(b);
        return GOLDEN_ERR;
    }
    if (e->method == LG_ZIP_STORED) { /* stored entries have a CRC too: check it */
        if ((uint32_t)crc32(crc32(0L, Z_NULL, 0), b, (uInt)e->usize) != e->crc) {
            free(b);
            return golden_fail_where(err, GOLDEN_ECORRUPT, "CRC-32 mismatch (damaged archive)",
                                     "%.500s:%.400s", path, e->name);
        }
    }
    b[e->usize] = 0;
    *out = b;
    return GOLDEN_OK;
}

int lg_zip_input(golden_input *in, const lg_zip_entry *e, uint64_t skip, golden_error *err)
{
    if (skip > e->usize || in->nbytes > e->usize - skip)
        return lg_ingest_fail_tensor(err, in->info.source, in->info.name,
                                     "tensor of %llu bytes at %llu does not fit in zip member '%s' (%llu bytes)",
                                     (unsigned long long)in->nbytes, (unsigned long long)skip,
                                     e->name, (unsigned long long)e->usize);
    if (e->method == LG_ZIP_STORED) {
        in->offset = e->data_off + skip;
        return GOLDEN_OK;
    }
    if (in->fortran_order)
        return lg_ingest_fail_tensor(err, in->info.source, in->info.name,
                                     "Fortran-order data in a deflated zip member is not read "
                                     "(transposing needs random access): store it uncompressed "
                                     "(np.savez) or in C order");
    in->format = GOLDEN_INPUT_DEFLATED;
    in->offset = e->data_off;
    in->zip_csize = e->csize;
    in->zip_usize = e->usize;
    in->zip_skip = skip;
    in->zip_crc = e->crc;
    return GOLDEN_OK;
}

/* ---------------------------------------------------------------- deflated inputs */

static void swap_inplace(unsigned char *p, size_t n, size_t w)
{
    for (size_t i = 0; i + w <= n; i += w)
        for (size_t a = 0, b = w - 1; a < b; a++, b--) {
            unsigned char t = p[i + a];
            p[i + a] = p[i + b];
            p[i + b] = t;
        }
}

int lg_ingest_deflated_read(const golden_input *in, size_t chunk, golden_chunk_fn fn, void *ctx,
                            golden_error *err)
{
    size_t w = golden_dtype_size(in->info.dtype);
    int fd;
    if (lg_ingest_open_input(in, in->zip_csize, &chunk, &fd, err) != GOLDEN_OK)
        return GOLDEN_ERR;
    inflater *f = malloc(sizeof *f);
    unsigned char *buf = malloc(chunk);
    int rc = GOLDEN_ERR;
    if (!f || !buf) {
        golden_fail_what(err, GOLDEN_ENOMEM, in->path, "out of memory");
        goto out;
    }
    if (infl_init(f, fd, in->path, in->info.name, in->offset, in->zip_csize, in->zip_usize,
                  in->zip_crc, err) != GOLDEN_OK)
        goto out;
    rc = infl_get(f, NULL, (size_t)in->zip_skip, err);
    for (uint64_t done = 0; done < in->nbytes && rc == GOLDEN_OK;) {
        size_t n = (size_t)(in->nbytes - done < chunk ? in->nbytes - done : chunk);
        rc = infl_get(f, buf, n, err);
        if (rc == GOLDEN_OK) {
            if (in->big_endian)
                swap_inplace(buf, n, w);
            rc = fn(ctx, buf, n, err);
        }
        done += n;
    }
    if (rc == GOLDEN_OK)
        rc = infl_finish(f, err);
    infl_end(f);
out:
    free(f);
    free(buf);
    close(fd);
    return rc;
}

struct lg_inflate_state {
    pthread_mutex_t mu;
    bool open, checked;
    inflater f;
};

static pthread_mutex_t create_mu = PTHREAD_MUTEX_INITIALIZER;

void lg_ingest_deflated_free(golden_input *in)
{
    struct lg_inflate_state *s = in->inflate;
    if (!s)
        return;
    if (s->open) {
        infl_end(&s->f);
        close(s->f.fd);
    }
    pthread_mutex_destroy(&s->mu);
    free(s);
    in->inflate = NULL;
}

static int cursor_open(const golden_input *in, struct lg_inflate_state *s, golden_error *err)
{
    int fd;
    uint64_t fsize;
    if (lg_ingest_open_regular(in->path, &fd, &fsize, err) != GOLDEN_OK)
        return GOLDEN_ERR;
    if (in->offset > fsize || in->zip_csize > fsize - in->offset) {
        close(fd);
        return golden_fail_where(err, GOLDEN_EINVAL, "file is shorter than the tensor (changed while reading?)",
                                 "%s:%s", in->path, in->info.name);
    }
    if (infl_init(&s->f, fd, in->path, in->info.name, in->offset, in->zip_csize, in->zip_usize,
                  in->zip_crc, err) != GOLDEN_OK) {
        close(fd);
        return GOLDEN_ERR;
    }
    s->open = true;
    return GOLDEN_OK;
}

int lg_ingest_deflated_pread(const golden_input *in, uint64_t byte_off, size_t n, void *buf,
                             golden_error *err)
{
    if (in->format != GOLDEN_INPUT_DEFLATED)
        return golden_fail_what(err, GOLDEN_EINTERNAL, in->path, "not a deflated input");
    if (byte_off > in->nbytes || n > in->nbytes - byte_off)
        return golden_fail_where(err, GOLDEN_EINVAL, "read past the tensor's end", "%s:%s", in->path,
                                 in->info.name);
    /* the input is const to its readers; its cursor is created once, under a lock */
    golden_input *mut = (golden_input *)in;
    pthread_mutex_lock(&create_mu);
    if (!mut->inflate) {
        mut->inflate = calloc(1, sizeof *mut->inflate);
        if (mut->inflate)
            pthread_mutex_init(&mut->inflate->mu, NULL);
    }
    struct lg_inflate_state *s = mut->inflate;
    pthread_mutex_unlock(&create_mu);
    if (!s)
        return golden_fail_what(err, GOLDEN_ENOMEM, in->path, "out of memory");
    pthread_mutex_lock(&s->mu);
    int rc = GOLDEN_OK;
    uint64_t want = in->zip_skip + byte_off;
    if (s->open && s->f.uout > want) { /* behind the cursor: start again */
        infl_end(&s->f);
        close(s->f.fd);
        s->open = false;
    }
    if (!s->open)
        rc = cursor_open(in, s, err);
    if (rc == GOLDEN_OK)
        rc = infl_get(&s->f, NULL, (size_t)(want - s->f.uout), err);
    if (rc == GOLDEN_OK)
        rc = infl_get(&s->f, buf, n, err);
    if (rc == GOLDEN_OK && byte_off + n == in->nbytes && !s->checked) {
        rc = infl_finish(&s->f, err);
        s->checked = rc == GOLDEN_OK;
    }
    if (rc != GOLDEN_OK && s->open) { /* never continue from a failed position */
        infl_end(&s->f);
        close(s->f.fd);
        s->open = false;
    }
    pthread_mutex_unlock(&s->mu);
    return rc;
}
