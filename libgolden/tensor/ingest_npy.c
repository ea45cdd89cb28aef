/* numpy .npy inputs (format 1.0, 2.0, 3.0): the header's Python-literal dict parsed strictly,
 * the dtype and byte order mapped, the data size checked against the shape. */
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
#include "util/pool.h"

/* ---------------------------------------------------------------- .npy */

int golden_npy_descr(const char *descr, golden_dtype *dt, bool *big_endian)
{
    static const struct {
        const char *code;
        golden_dtype dt;
    } map[] = {
        {"f8", GOLDEN_F64}, {"f4", GOLDEN_F32}, {"f2", GOLDEN_F16}, {"i1", GOLDEN_I8},
        {"u1", GOLDEN_U8},  {"i2", GOLDEN_I16}, {"u2", GOLDEN_U16}, {"i4", GOLDEN_I32},
        {"u4", GOLDEN_U32}, {"i8", GOLDEN_I64}, {"u8", GOLDEN_U64}, {"b1", GOLDEN_BOOL},
    };
    if (strlen(descr) != 3)
        return -1;
    char order = descr[0];
    if (order != '<' && order != '>' && order != '|')
        return -1;
    for (size_t i = 0; i < sizeof map / sizeof map[0]; i++) {
        if (strcmp(descr + 1, map[i].code) != 0)
            continue;
        /* '|' (not applicable) only makes sense for one-byte types */
        if (order == '|' && golden_dtype_size(map[i].dt) != 1)
            return -1;
        *dt = map[i].dt;
        *big_endian = order == '>' && golden_dtype_size(map[i].dt) > 1;
        return 0;
    }
    return -1;
}

typedef struct {
    const char *p, *end;
} cursor;

static void skip_ws(cursor *c)
{
    while (c->p < c->end && (*c->p == ' ' || *c->p == '\t' || *c->p == '\n' || *c->p == '\r'))
        c->p++;
}

static bool take(cursor *c, char ch)
{
    skip_ws(c);
    if (c->p < c->end && *c->p == ch) {
        c->p++;
        return true;
    }
    return false;
}

/* A quoted Python string without escapes into buf. */
static bool parse_pystr(cursor *c, char *buf, size_t n)
{
    skip_ws(c);
    if (c->p >= c->end || (*c->p != '\'' && *c->p != '"'))
        return false;
    char q = *c->p++;
    size_t len = 0;
    while (c->p < c->end && *c->p != q) {
        if (*c->p == '\\' || len + 1 >= n)
            return false;
        buf[len++] = *c->p++;
    }
    if (c->p >= c->end)
        return false;
    c->p++;
    buf[len] = '\0';
    return true;
}

static bool parse_pyuint(cursor *c, uint64_t *v)
{
    skip_ws(c);
    if (c->p >= c->end || *c->p < '0' || *c->p > '9')
        return false;
    uint64_t x = 0;
    while (c->p < c->end && *c->p >= '0' && *c->p <= '9') {
        unsigned d = (unsigned)(*c->p - '0');
        if (x > (UINT64_MAX - d) / 10)
            return false;
        x = x * 10 + d;
        c->p++;
    }
    if (c->p < c->end && *c->p == 'L') /* written by Python 2 */
        c->p++;
    *v = x;
    return true;
}

/* Parse the header dict literal {'descr': ..., 'fortran_order': ..., 'shape': (...), }. */
static int parse_npy_dict(const char *text, size_t len, const char *path, char *descr,
                          size_t descr_n, bool *fortran, int *rank, uint64_t *shape,
                          golden_error *err)
{
    cursor c = {text, text + len};
    bool seen_descr = false, seen_fortran = false, seen_shape = false;
    if (!take(&c, '{'))
        return golden_fail_what(err, GOLDEN_ECORRUPT, path, "corrupt .npy header: not a dict literal");
    for (;;) {
        if (take(&c, '}'))
            break;
        char key[32];
        if (!parse_pystr(&c, key, sizeof key) || !take(&c, ':'))
            return golden_fail_what(err, GOLDEN_ECORRUPT, path, "corrupt .npy header: expected 'key':");
        if (strcmp(key, "descr") == 0 && !seen_descr) {
            seen_descr = true;
            skip_ws(&c);
            if (c.p < c.end && *c.p == '[')
                return golden_fail_what(err, GOLDEN_EINVAL, path,
                                   "unsupported dtype: structured arrays are not tensors");
            if (!parse_pystr(&c, descr, descr_n))
                return golden_fail_what(err, GOLDEN_ECORRUPT, path, "corrupt .npy header: bad descr");
        } else if (strcmp(key, "fortran_order") == 0 && !seen_fortran) {
            seen_fortran = true;
            skip_ws(&c);
            if ((size_t)(c.end - c.p) >= 4 && memcmp(c.p, "True", 4) == 0) {
                *fortran = true;
                c.p += 4;
            } else if ((size_t)(c.end - c.p) >= 5 && memcmp(c.p, "False", 5) == 0) {
                *fortran = false;
                c.p += 5;
            } else {
                return golden_fail_what(err, GOLDEN_ECORRUPT, path, "corrupt .npy header: bad fortran_order");
            }
        } else if (strcmp(key, "shape") == 0 && !seen_shape) {
            seen_shape = true;
            if (!take(&c, '('))
                return golden_fail_what(err, GOLDEN_ECORRUPT, path, "corrupt .npy header: bad shape");
            *rank = 0;
            bool need_comma = false;
            for (;;) {
                if (take(&c, ')'))
                    break;
                if (need_comma)
                    return golden_fail_what(err, GOLDEN_ECORRUPT, path, "corrupt .npy header: bad shape");
                if (*rank >= GOLDEN_MAX_RANK)
                    return golden_fail_what(err, GOLDEN_EINVAL, path, "shape has more than %d dimensions",
                                       GOLDEN_MAX_RANK);
                if (!parse_pyuint(&c, &shape[*rank]))
                    return golden_fail_what(err, GOLDEN_ECORRUPT, path, "corrupt .npy header: bad shape");
                (*rank)++;
                need_comma = !take(&c, ',');
            }
            /* (3) is not a tuple: Python needs (3,) for rank 1 */
            if (*rank == 1 && need_comma)
                return golden_fail_what(err, GOLDEN_ECORRUPT, path, "corrupt .npy header: bad shape");
        } else {
            return golden_fail_what(err, GOLDEN_ECORRUPT, path, "corrupt .npy header: unexpected or repeated key '%s'",
                               key);
        }
        if (take(&c, '}'))
            break;
        if (!take(&c, ','))
            return golden_fail_what(err, GOLDEN_ECORRUPT, path, "corrupt .npy header: expected ',' or '}'");
    }
    skip_ws(&c);
    if (c.p != c.end)
        return golden_fail_what(err, GOLDEN_ECORRUPT, path, "corrupt .npy header: text after the dict");
    if (!seen_descr || !seen_fortran || !seen_shape)
        return golden_fail_what(err, GOLDEN_ECORRUPT, path, "corrupt .npy header: missing %s",
                           !seen_descr ? "descr" : !seen_fortran ? "fortran_order" : "shape");
    return GOLDEN_OK;
}

/* The base name of path without its extension (".npy"). */
static char *stem_of(const char *path, const char *ext)
{
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    size_t n = strlen(base);
    if (lg_ingest_has_suffix(base, ext))
        n -= strlen(ext);
    return strndup(base, n);
}

int lg_npy_prefix(const unsigned char *pre, uint64_t total, const char *path, uint64_t *data_off,
                  golden_error *err)
{
    if (total < 10)
        return golden_fail_what(err, GOLDEN_ECORRUPT, path, "corrupt .npy header: file too short (%llu bytes)",
                                (unsigned long long)total);
    if (memcmp(pre, "\x93NUMPY", 6) != 0)
        return golden_fail_what(err, GOLDEN_ECORRUPT, path, "corrupt .npy header: bad magic");
    unsigned major = pre[6], minor = pre[7];
    uint64_t hlen, hstart;
    if (major == 1) {
        hlen = (uint64_t)pre[8] | (uint64_t)pre[9] << 8;
        hstart = 10;
    } else if (major == 2 || major == 3) {
        if (total < 12)
            return golden_fail_what(err, GOLDEN_ECORRUPT, path, "corrupt .npy header: file too short");
        hlen = (uint64_t)pre[8] | (uint64_t)pre[9] << 8 | (uint64_t)pre[10] << 16 |
               (uint64_t)pre[11] << 24;
        hstart = 12;
    } else {
        return golden_fail_what(err, GOLDEN_EINVAL, path, "unsupported .npy format version %u.%u", major, minor);
    }
    if (minor != 0)
        return golden_fail_what(err, GOLDEN_EINVAL, path, "unsupported .npy format version %u.%u", major, minor);
    if (hlen > NPY_MAX_HEADER || hstart + hlen > total)
        return golden_fail_what(err, GOLDEN_ECORRUPT, path, "corrupt .npy header: header length %llu exceeds the file",
                                (unsigned long long)hlen);
    *data_off = hstart + hlen;
    return GOLDEN_OK;
}

int lg_npy_header_parse(const unsigned char *buf, uint64_t data_off, const char *path,
                        lg_npy_header *h, golden_error *err)
{
    uint64_t hstart = buf[6] == 1 ? 10 : 12, hlen = data_off - hstart;
    const char *text = (const char *)buf + hstart;
    for (uint64_t i = 0; i < hlen; i++) {
        unsigned char ch = (unsigned char)text[i];
        /* v1/v2 headers are latin-1 but only ASCII is meaningful; v3 allows UTF-8 in
         * structured field names, which we reject anyway */
        if (ch == 0 || ch >= 0x80)
            return golden_fail_what(err, GOLDEN_ECORRUPT, path, "corrupt .npy header: non-ASCII byte at %llu",
                                    (unsigned long long)(hstart + i));
    }
    char descr[32];
    h->fortran = false;
    h->rank = 0;
    h->data_off = data_off;
    if (parse_npy_dict(text, hlen, path, descr, sizeof descr, &h->fortran, &h->rank, h->shape, err) !=
        GOLDEN_OK)
        return GOLDEN_ERR;
    if (golden_npy_descr(descr, &h->dt, &h->big) != 0) {
        if (descr[0] && descr[1] == 'O')
            return golden_fail_what(err, GOLDEN_EINVAL, path,
                                    "object arrays (dtype '%s') hold Python objects, not numbers: not read", descr);
        return golden_fail_what(err, GOLDEN_EINVAL, path, "unknown or unsupported dtype '%s'", descr);
    }
    return GOLDEN_OK;
}

int golden_ingest_npy(golden_input_list *l, const char *path, const char *name,
                      golden_error *err)
{
    int fd;
    uint64_t fsize;
    if (lg_ingest_open_regular(path, &fd, &fsize, err) != GOLDEN_OK)
        return GOLDEN_ERR;
    int rc = GOLDEN_ERR;
    unsigned char *text = NULL;
    char *stem = NULL;
    unsigned char pre[12];
    uint64_t data_off;
    lg_npy_header h;
    if (fsize >= 10 && lg_ingest_pread_full(fd, pre, fsize < 12 ? 10 : 12, 0, path, err) != GOLDEN_OK)
        goto done;
    if (lg_npy_prefix(pre, fsize, path, &data_off, err) != GOLDEN_OK)
        goto done;
    text = malloc(data_off);
    if (!text) {
        golden_fail_what(err, GOLDEN_ENOMEM, path, "out of memory");
        goto done;
    }
    if (lg_ingest_pread_full(fd, text, data_off, 0, path, err) != GOLDEN_OK ||
        lg_npy_header_parse(text, data_off, path, &h, err) != GOLDEN_OK)
        goto done;
    stem = name ? strdup(name) : stem_of(path, ".npy");
    if (!stem) {
        golden_fail_what(err, GOLDEN_ENOMEM, path, "out of memory");
        goto done;
    }
    golden_input *in = lg_ingest_list_push(l, err);
    if (!in || lg_ingest_input_set(in, stem, path, path, h.dt, h.rank, h.shape, err) != GOLDEN_OK)
        goto done;
    in->format = GOLDEN_INPUT_NPY;
    in->offset = data_off;
    in->big_endian = h.big;
    in->fortran_order = h.fortran && h.rank > 1;
    if (fsize - in->offset != in->nbytes) {
        lg_ingest_fail_tensor(err, path, NULL,
                    "data size %llu bytes does not match shape and dtype (%llu bytes)",
                    (unsigned long long)(fsize - in->offset), (unsigned long long)in->nbytes);
        lg_ingest_input_free(in);
        goto done;
    }
    l->count++;
    rc = GOLDEN_OK;
done:
    free(text);
    free(stem);
    close(fd);
    return rc;
}
