/* Readers of golden-dump's inputs (.npy, .safetensors, raw dumps + index, folders): each
 * tensor is found, checked against its file, and later streamed as canonical bytes in chunks. */
#include "golden/ingest.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <limits.h>
#include <stdarg.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "golden/doc.h"
#include "golden/hash.h"
#include "golden/report.h"
#include "golden/schema.h"
#include "util/pool.h"

#define NPY_MAX_HEADER (1u << 20)
#define ST_MAX_HEADER (100u << 20) /* the safetensors format's own limit */
#define DEFAULT_CHUNK (4u << 20)

/* Fail with where = "file:tensor" (or "file") and a formatted what. */
static int fail_tensor(golden_error *err, const char *file, const char *tensor, const char *fmt,
                       ...) __attribute__((format(printf, 4, 5)));
static int fail_tensor(golden_error *err, const char *file, const char *tensor, const char *fmt,
                       ...)
{
    if (!err)
        return GOLDEN_ERR;
    if (tensor)
        snprintf(err->where, sizeof err->where, "%s:%s", file, tensor);
    else
        snprintf(err->where, sizeof err->where, "%s", file);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->what, sizeof err->what, fmt, ap);
    va_end(ap);
    return GOLDEN_ERR;
}

/* ---------------------------------------------------------------- list */

void golden_input_list_init(golden_input_list *l)
{
    l->items = NULL;
    l->count = l->cap = 0;
}

static void input_free(golden_input *in)
{
    golden_tensor_info_clear(&in->info);
    free(in->path);
}

void golden_input_list_free(golden_input_list *l)
{
    for (size_t i = 0; i < l->count; i++)
        input_free(&l->items[i]);
    free(l->items);
    golden_input_list_init(l);
}

/* A zeroed slot at the end of the list, or NULL when memory runs out. */
static golden_input *list_push(golden_input_list *l, golden_error *err)
{
    if (l->count == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 16;
        golden_input *p = realloc(l->items, cap * sizeof *p);
        if (!p) {
            golden_fail_what(err, GOLDEN_ENOMEM, NULL, "out of memory");
            return NULL;
        }
        l->items = p;
        l->cap = cap;
    }
    golden_input *in = &l->items[l->count];
    memset(in, 0, sizeof *in);
    return in;
}

/* Fill the common fields of a new input; on failure the slot is not kept. */
static int input_set(golden_input *in, const char *name, const char *path, const char *where,
                     golden_dtype dt, int rank, const uint64_t *shape, golden_error *err)
{
    in->info.name = strdup(name);
    in->path = strdup(path);
    in->info.source = strdup(path);
    if (!in->info.name || !in->path || !in->info.source) {
        input_free(in);
        return golden_fail_what(err, GOLDEN_ENOMEM, path, "out of memory");
    }
    in->info.dtype = dt;
    in->info.rank = rank;
    for (int i = 0; i < rank; i++)
        in->info.shape[i] = shape[i];
    if (golden_shape_count(rank, shape, dt, &in->info.count, err) != GOLDEN_OK) {
        char what[sizeof err->what];
        snprintf(what, sizeof what, "%s", err->what);
        input_free(in);
        return golden_fail_where(err, GOLDEN_EINVAL, what, "%s:%s", where, name);
    }
    in->nbytes = in->info.count * golden_dtype_size(dt);
    return GOLDEN_OK;
}

/* ---------------------------------------------------------------- files */

static int open_regular(const char *path, int *fd_out, uint64_t *size, golden_error *err)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return golden_fail_what(err, golden_code_from_errno(errno), path, "cannot open: %s", strerror(errno));
    struct stat st;
    if (fstat(fd, &st) != 0) {
        int e = errno;
        close(fd);
        return golden_fail_what(err, golden_code_from_errno(e), path, "cannot stat: %s", strerror(e));
    }
    if (!S_ISREG(st.st_mode)) {
        close(fd);
        return golden_fail_what(err, GOLDEN_EINVAL, path, "not a regular file");
    }
    *fd_out = fd;
    *size = (uint64_t)st.st_size;
    return GOLDEN_OK;
}

/* pread exactly n bytes at off; a short file is an error. */
static int pread_full(int fd, void *buf, size_t n, uint64_t off, const char *path,
                      golden_error *err)
{
    unsigned char *p = buf;
    while (n > 0) {
        ssize_t r = pread(fd, p, n, (off_t)off);
        if (r < 0) {
            if (errno == EINTR)
                continue;
            return golden_fail_what(err, golden_code_from_errno(errno), path, "read error: %s", strerror(errno));
        }
        if (r == 0)
            return golden_fail_what(err, GOLDEN_ECORRUPT, path, "file ended early (truncated?)");
        p += r;
        n -= (size_t)r;
        off += (uint64_t)r;
    }
    return GOLDEN_OK;
}

static bool has_suffix(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && strcmp(s + n - m, suffix) == 0;
}

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
    if (has_suffix(base, ext))
        n -= strlen(ext);
    return strndup(base, n);
}

int golden_ingest_npy(golden_input_list *l, const char *path, const char *name,
                      golden_error *err)
{
    int fd;
    uint64_t fsize;
    if (open_regular(path, &fd, &fsize, err) != GOLDEN_OK)
        return GOLDEN_ERR;
    int rc = GOLDEN_ERR;
    char *text = NULL, *stem = NULL;
    unsigned char pre[12];
    if (fsize < 10) {
        golden_fail_what(err, GOLDEN_ECORRUPT, path, "corrupt .npy header: file too short (%llu bytes)",
                    (unsigned long long)fsize);
        goto done;
    }
    if (pread_full(fd, pre, fsize < 12 ? 10 : 12, 0, path, err) != GOLDEN_OK)
        goto done;
    if (memcmp(pre, "\x93NUMPY", 6) != 0) {
        golden_fail_what(err, GOLDEN_ECORRUPT, path, "corrupt .npy header: bad magic");
        goto done;
    }
    unsigned major = pre[6], minor = pre[7];
    uint64_t hlen, hstart;
    if (major == 1) {
        hlen = (uint64_t)pre[8] | (uint64_t)pre[9] << 8;
        hstart = 10;
    } else if (major == 2 || major == 3) {
        if (fsize < 12) {
            golden_fail_what(err, GOLDEN_ECORRUPT, path, "corrupt .npy header: file too short");
            goto done;
        }
        hlen = (uint64_t)pre[8] | (uint64_t)pre[9] << 8 | (uint64_t)pre[10] << 16 |
               (uint64_t)pre[11] << 24;
        hstart = 12;
    } else {
        golden_fail_what(err, GOLDEN_EINVAL, path, "unsupported .npy format version %u.%u", major, minor);
        goto done;
    }
    if (minor != 0) {
        golden_fail_what(err, GOLDEN_EINVAL, path, "unsupported .npy format version %u.%u", major, minor);
        goto done;
    }
    if (hlen > NPY_MAX_HEADER || hstart + hlen > fsize) {
        golden_fail_what(err, GOLDEN_ECORRUPT, path, "corrupt .npy header: header length %llu exceeds the file",
                    (unsigned long long)hlen);
        goto done;
    }
    text = malloc(hlen + 1);
    if (!text) {
        golden_fail_what(err, GOLDEN_ENOMEM, path, "out of memory");
        goto done;
    }
    if (pread_full(fd, text, hlen, hstart, path, err) != GOLDEN_OK)
        goto done;
    text[hlen] = '\0';
    for (uint64_t i = 0; i < hlen; i++) {
        unsigned char ch = (unsigned char)text[i];
        /* v1/v2 headers are latin-1 but only ASCII is meaningful; v3 allows UTF-8 in
         * structured field names, which we reject anyway */
        if (ch == 0 || ch >= 0x80) {
            golden_fail_what(err, GOLDEN_ECORRUPT, path, "corrupt .npy header: non-ASCII byte at %llu",
                        (unsigned long long)(hstart + i));
            goto done;
        }
    }
    char descr[32];
    bool fortran = false;
    int rank = 0;
    uint64_t shape[GOLDEN_MAX_RANK];
    if (parse_npy_dict(text, hlen, path, descr, sizeof descr, &fortran, &rank, shape, err) !=
        GOLDEN_OK)
        goto done;
    golden_dtype dt;
    bool big;
    if (golden_npy_descr(descr, &dt, &big) != 0) {
        golden_fail_what(err, GOLDEN_EINVAL, path, "unknown or unsupported dtype '%s'", descr);
        goto done;
    }
    stem = name ? strdup(name) : stem_of(path, ".npy");
    if (!stem) {
        golden_fail_what(err, GOLDEN_ENOMEM, path, "out of memory");
        goto done;
    }
    golden_input *in = list_push(l, err);
    if (!in || input_set(in, stem, path, path, dt, rank, shape, err) != GOLDEN_OK)
        goto done;
    in->format = GOLDEN_INPUT_NPY;
    in->offset = hstart + hlen;
    in->big_endian = big;
    in->fortran_order = fortran && rank > 1;
    if (fsize - in->offset != in->nbytes) {
        fail_tensor(err, path, NULL,
                    "data size %llu bytes does not match shape and dtype (%llu bytes)",
                    (unsigned long long)(fsize - in->offset), (unsigned long long)in->nbytes);
        input_free(in);
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

/* ---------------------------------------------------------------- .safetensors */

int golden_safetensors_dtype(const char *name, golden_dtype *dt)
{
    static const struct {
        const char *name;
        golden_dtype dt;
    } map[] = {
        {"F64", GOLDEN_F64},          {"F32", GOLDEN_F32},         {"F16", GOLDEN_F16},
        {"BF16", GOLDEN_BF16},        {"F8_E4M3", GOLDEN_FP8_E4M3FN},
        {"F8_E5M2", GOLDEN_FP8_E5M2}, {"I8", GOLDEN_I8},           {"U8", GOLDEN_U8},
        {"I16", GOLDEN_I16},          {"U16", GOLDEN_U16},         {"I32", GOLDEN_I32},
        {"U32", GOLDEN_U32},          {"I64", GOLDEN_I64},         {"U64", GOLDEN_U64},
        {"BOOL", GOLDEN_BOOL},
    };
    for (size_t i = 0; i < sizeof map / sizeof map[0]; i++)
        if (strcmp(name, map[i].name) == 0) {
            *dt = map[i].dt;
            return 0;
        }
    return -1;
}

/* A non-negative JSON integer. */
static bool json_uint(const json_t *v, uint64_t *out)
{
    if (!json_is_integer(v) || json_integer_value(v) < 0)
        return false;
    *out = (uint64_t)json_integer_value(v);
    return true;
}

/* A JSON array of non-negative integers as a shape. */
static bool json_shape(const json_t *v, int *rank, uint64_t *shape)
{
    if (!json_is_array(v) || json_array_size(v) > GOLDEN_MAX_RANK)
        return false;
    *rank = (int)json_array_size(v);
    for (int i = 0; i < *rank; i++)
        if (!json_uint(json_array_get(v, (size_t)i), &shape[i]))
            return false;
    return true;
}

static int cmp_by_offset(const void *a, const void *b)
{
    const golden_input *x = a, *y = b;
    if (x->offset != y->offset)
        return x->offset < y->offset ? -1 : 1;
    if (x->nbytes != y->nbytes)
        return x->nbytes < y->nbytes ? -1 : 1;
    return strcmp(x->info.name, y->info.name);
}

int golden_ingest_safetensors(golden_input_list *l, const char *path, golden_error *err)
{
    int fd;
    uint64_t fsize;
    if (open_regular(path, &fd, &fsize, err) != GOLDEN_OK)
        return GOLDEN_ERR;
    int rc = GOLDEN_ERR;
    char *text = NULL;
    json_t *root = NULL;
    size_t first = l->count;
    unsigned char lenb[8];
    if (fsize < 8) {
        golden_fail_what(err, GOLDEN_ECORRUPT, path, "corrupt .safetensors: file too short");
        goto done;
    }
    if (pread_full(fd, lenb, 8, 0, path, err) != GOLDEN_OK)
        goto done;
    uint64_t hlen = 0;
    for (int i = 7; i >= 0; i--)
        hlen = hlen << 8 | lenb[i];
    if (hlen > ST_MAX_HEADER || hlen > fsize - 8) {
        golden_fail_what(err, GOLDEN_ECORRUPT, path, "corrupt .safetensors: header length %llu exceeds the file",
                    (unsigned long long)hlen);
        goto done;
    }
    text = malloc(hlen + 1);
    if (!text) {
        golden_fail_what(err, GOLDEN_ENOMEM, path, "out of memory");
        goto done;
    }
    if (pread_full(fd, text, hlen, 8, path, err) != GOLDEN_OK)
        goto done;
    json_error_t je;
    root = json_loadb(text, hlen, JSON_REJECT_DUPLICATES, &je);
    if (!root) {
        fail_tensor(err, path, NULL,
                    "corrupt .safetensors header: %s (column %d)",
                    je.text, je.column);
        goto done;
    }
    if (!json_is_object(root)) {
        golden_fail_what(err, GOLDEN_ECORRUPT, path, "corrupt .safetensors header: not a JSON object");
        goto done;
    }
    uint64_t data_start = 8 + hlen, data_len = fsize - data_start;
    const char *key;
    json_t *val;
    json_object_foreach(root, key, val)
    {
        if (strcmp(key, "__metadata__") == 0) {
            if (!json_is_object(val)) {
                golden_fail_what(err, GOLDEN_ECORRUPT, path,
                            "corrupt .safetensors header: __metadata__ is not an object");
                goto done;
            }
            continue;
        }
        json_t *jdt = json_object_get(val, "dtype");
        json_t *joff = json_object_get(val, "data_offsets");
        int rank;
        uint64_t shape[GOLDEN_MAX_RANK], begin, end;
        if (!json_is_object(val) || !json_is_string(jdt) ||
            !json_shape(json_object_get(val, "shape"), &rank, shape) ||
            !json_is_array(joff) || json_array_size(joff) != 2 ||
            !json_uint(json_array_get(joff, 0), &begin) ||
            !json_uint(json_array_get(joff, 1), &end)) {
            golden_fail_where(err, GOLDEN_ECORRUPT, "corrupt .safetensors header: needs dtype, shape and data_offsets",
                         "%s:%s", path, key);
            goto done;
        }
        golden_dtype dt;
        if (golden_safetensors_dtype(json_string_value(jdt), &dt) != 0) {
            fail_tensor(err, path, key,
                        "unknown or unsupported dtype '%s'",
                        json_string_value(jdt));
            goto done;
        }
        golden_input *in = list_push(l, err);
        if (!in || input_set(in, key, path, path, dt, rank, shape, err) != GOLDEN_OK)
            goto done;
        in->format = GOLDEN_INPUT_SAFETENSORS;
        if (begin > end || end > data_len) {
            input_free(in);
            fail_tensor(err, path, key,
                        "data_offsets [%llu, %llu] out of range (data is %llu bytes)",
                        (unsigned long long)begin, (unsigned long long)end,
                        (unsigned long long)data_len);
            goto done;
        }
        if (end - begin != in->nbytes) {
            input_free(in);
            fail_tensor(err, path, key,
                        "data size %llu bytes does not match shape and dtype (%llu bytes)",
                        (unsigned long long)(end - begin), (unsigned long long)in->nbytes);
            goto done;
        }
        in->offset = data_start + begin;
        l->count++;
    }
    if (l->count > first)
        qsort(l->items + first, l->count - first, sizeof *l->items, cmp_by_offset);
    for (size_t i = first + 1; i < l->count; i++) {
        const golden_input *a = &l->items[i - 1], *b = &l->items[i];
        if (b->offset < a->offset + a->nbytes) {
            fail_tensor(err, path, b->info.name,
                        "data_offsets overlap those of '%s'",
                        a->info.name);
            goto done;
        }
    }
    /* The format's byte buffer is "entirely indexed and cannot contain holes": a gap or
     * bytes after the last tensor are an error, as padding is for .npy and raw dumps. */
    uint64_t covered = data_start;
    for (size_t i = first; i < l->count; i++) {
        const golden_input *t = &l->items[i];
        if (t->offset > covered) {
            fail_tensor(err, path, t->info.name,
                        "%llu bytes before this tensor belong to no tensor (the format has no gaps)",
                        (unsigned long long)(t->offset - covered));
            goto done;
        }
        if (t->offset + t->nbytes > covered)
            covered = t->offset + t->nbytes;
    }
    if (covered != fsize) {
        fail_tensor(err, path, NULL, "%llu bytes after the last tensor belong to no tensor",
                    (unsigned long long)(fsize - covered));
        goto done;
    }
    rc = GOLDEN_OK;
done:
    if (rc != GOLDEN_OK) {
        for (size_t i = first; i < l->count; i++)
            input_free(&l->items[i]);
        l->count = first;
    }
    json_decref(root);
    free(text);
    close(fd);
    return rc;
}

/* ---------------------------------------------------------------- dump index */

/* Resolve `file` (relative to dir) and make sure it stays inside dir, also through symlinks. */
static char *resolve_inside(const char *dir, const char *file, const char *where,
                            golden_error *err)
{
    if (file[0] == '\0' || file[0] == '/') {
        golden_fail_what(err, GOLDEN_EINVAL, where, "file '%s' must be a relative path inside the index folder",
                    file);
        return NULL;
    }
    for (const char *p = file; *p;) {
        const char *slash = strchr(p, '/');
        size_t n = slash ? (size_t)(slash - p) : strlen(p);
        if (n == 2 && p[0] == '.' && p[1] == '.') {
            golden_fail_what(err, GOLDEN_EINVAL, where, "file '%s' leaves the index folder (..)", file);
            return NULL;
        }
        p += n;
        while (*p == '/')
            p++;
    }
    size_t n = strlen(dir) + strlen(file) + 2;
    char *joined = malloc(n);
    if (!joined) {
        golden_fail_what(err, GOLDEN_ENOMEM, where, "out of memory");
        return NULL;
    }
    snprintf(joined, n, "%s/%s", dir, file);
    char *rdir = realpath(dir, NULL);
    char *rfile = realpath(joined, NULL);
    if (!rdir || !rfile) {
        golden_fail_what(err, golden_code_from_errno(errno), where, "cannot open '%s': %s", joined, strerror(errno));
        goto fail;
    }
    size_t dn = strlen(rdir);
    bool inside = strncmp(rfile, rdir, dn) == 0 && (rfile[dn] == '/' || dn == 1);
    if (!inside) {
        golden_fail_what(err, GOLDEN_EINVAL, where, "file '%s' leaves the index folder (resolves to %s)", file,
                    rfile);
        goto fail;
    }
    free(rdir);
    free(rfile);
    return joined;
fail:
    free(rdir);
    free(rfile);
    free(joined);
    return NULL;
}

static char *dir_of(const char *path)
{
    const char *slash = strrchr(path, '/');
    if (!slash)
        return strdup(".");
    if (slash == path)
        return strdup("/");
    return strndup(path, (size_t)(slash - path));
}

/* Byte ranges that index entries claim in their files, to find overlaps and leftovers. */
typedef struct {
    const char *path;
    const char *name;
    uint64_t off, len, fsize;
    dev_t dev; /* files are told apart by device and inode, however they are spelled */
    ino_t ino;
} claim;

static bool same_file(const claim *x, const claim *y)
{
    return x->dev == y->dev && x->ino == y->ino;
}

static int cmp_claim(const void *a, const void *b)
{
    const claim *x = a, *y = b;
    if (x->dev != y->dev)
        return x->dev < y->dev ? -1 : 1;
    if (x->ino != y->ino)
        return x->ino < y->ino ? -1 : 1;
    if (x->off != y->off)
        return x->off < y->off ? -1 : 1;
    return x->len < y->len ? -1 : x->len > y->len;
}

/* A string of a dump index that names something (a tensor, a file, an op family): a NUL
 * inside it would cut the name where C sees it ("x\u0000y" stored as "x", a file
 * "a.bin\u0000/../../etc/passwd" read as "a.bin"), so it is an error. */
static bool has_nul(const json_t *v)
{
    return json_is_string(v) && strlen(json_string_value(v)) != json_string_length(v);
}

/* Keys of an index entry (contracts section 3); anything else, such as a misspelt "sha_256"
 * that would silently drop the expected-hash check, is an error. */
static const char *const entry_keys[] = {"name", "file", "offset", "nbytes", "dtype", "shape",
                                         "sha256", "layer", "chip", "step", "op_family"};

static int check_entry_keys(const json_t *t, const char *ipath, size_t k, golden_error *err)
{
    const char *key;
    json_t *v;
    json_object_foreach((json_t *)t, key, v)
    {
        size_t i = 0;
        while (i < sizeof entry_keys / sizeof entry_keys[0] && strcmp(key, entry_keys[i]) != 0)
            i++;
        if (i == sizeof entry_keys / sizeof entry_keys[0])
            return golden_fail_where(err, GOLDEN_EINVAL, "unknown key in a tensor entry (see contracts section 3)",
                                     "%s:/tensors/%zu/%s", ipath, k, key);
        if (has_nul(v))
            return golden_fail_where(err, GOLDEN_EINVAL, "string holds a NUL byte",
                                     "%s:/tensors/%zu/%s", ipath, k, key);
    }
    return GOLDEN_OK;
}

static int index_entry(golden_input_list *l, const char *ipath, const char *dir,
                       const json_t *t, size_t k, golden_error *err)
{
    if (check_entry_keys(t, ipath, k, err) != GOLDEN_OK)
        return GOLDEN_ERR;
    json_t *jname = json_object_get(t, "name");
    if (!json_is_string(jname))
        return golden_fail_where(err, GOLDEN_EINVAL, "tensor entry needs a string name", "%s:/tensors/%zu", ipath, k);
    const char *name = json_string_value(jname);
    char where[1024];
    snprintf(where, sizeof where, "%s:%s", ipath, name);
    json_t *jfile = json_object_get(t, "file"), *jdt = json_object_get(t, "dtype");
    int rank;
    uint64_t shape[GOLDEN_MAX_RANK], offset = 0;
    if (!json_is_string(jfile) || !json_is_string(jdt) ||
        !json_shape(json_object_get(t, "shape"), &rank, shape))
        return golden_fail_what(err, GOLDEN_EINVAL, where, "tensor entry needs file, dtype and shape");
    json_t *joff = json_object_get(t, "offset");
    if (joff && !json_uint(joff, &offset))
        return golden_fail_what(err, GOLDEN_EINVAL, where, "offset must be a non-negative integer");
    golden_dtype dt;
    if (golden_dtype_parse(json_string_value(jdt), &dt) != 0)
        return golden_fail_what(err, GOLDEN_EINVAL, where, "unknown dtype '%s'", json_string_value(jdt));
    json_t *jsha = json_object_get(t, "sha256");
    if (jsha && (!json_is_string(jsha) || !golden_is_sha256_hex(json_string_value(jsha))))
        return golden_fail_what(err, GOLDEN_EINVAL, where, "sha256 must be 64 lowercase hex digits");
    char *file = resolve_inside(dir, json_string_value(jfile), where, err);
    if (!file)
        return GOLDEN_ERR;
    golden_input *in = list_push(l, err);
    if (!in || input_set(in, name, file, ipath, dt, rank, shape, err) != GOLDEN_OK) {
        free(file);
        return GOLDEN_ERR;
    }
    free(file);
    in->format = GOLDEN_INPUT_RAW;
    in->offset = offset;
    if (jsha) {
        in->has_expected = true;
        snprintf(in->expected_sha256, sizeof in->expected_sha256, "%s",
                 json_string_value(jsha));
    }
    uint64_t nb;
    json_t *jnb = json_object_get(t, "nbytes");
    if (jnb && (!json_uint(jnb, &nb) || nb != in->nbytes)) {
        input_free(in);
        return golden_fail_what(err, GOLDEN_EINVAL, where, "nbytes does not match shape and dtype (%llu bytes)",
                           (unsigned long long)in->nbytes);
    }
    static const char *const ints[] = {"layer", "chip", "step"};
    bool *has[] = {&in->info.has_layer, &in->info.has_chip, &in->info.has_step};
    int64_t *val[] = {&in->info.layer, &in->info.chip, &in->info.step};
    for (int i = 0; i < 3; i++) {
        json_t *v = json_object_get(t, ints[i]);
        if (!v)
            continue;
        if (!json_is_integer(v)) {
            input_free(in);
            return golden_fail_what(err, GOLDEN_EINVAL, where, "%s must be an integer", ints[i]);
        }
        *has[i] = true;
        *val[i] = json_integer_value(v);
    }
    json_t *jop = json_object_get(t, "op_family");
    if (jop) {
        if (!json_is_string(jop) || !(in->info.op_family = strdup(json_string_value(jop)))) {
            input_free(in);
            return golden_fail_what(err, GOLDEN_EINVAL, where, "op_family must be a string");
        }
    }
    l->count++;
    return GOLDEN_OK;
}

int golden_ingest_index(golden_input_list *l, const char *path, golden_error *err)
{
    /* the doc layer gives file:line:col positions, rejects duplicate keys and bad UTF-8;
     * the schema catches structural mistakes before the rules below run */
    golden_doc *doc = NULL;
    golden_schema *schema_v = NULL;
    if (golden_doc_load_file(path, &doc, err) != GOLDEN_OK)
        return GOLDEN_ERR;
    if (golden_schema_load(GOLDEN_SCHEMA_DUMP_INDEX, &schema_v, err) != GOLDEN_OK ||
        golden_schema_check(schema_v, doc, err) != GOLDEN_OK) {
        golden_schema_free(schema_v);
        golden_doc_free(doc);
        return GOLDEN_ERR;
    }
    golden_schema_free(schema_v);
    json_t *root = golden_doc_root(doc);
    int rc = GOLDEN_ERR;
    size_t first = l->count;
    claim *claims = NULL;
    char *dir = dir_of(path);
    if (!dir) {
        golden_fail_what(err, GOLDEN_ENOMEM, path, "out of memory");
        goto done;
    }
    json_t *schema = json_object_get(root, "schema");
    json_t *tensors = json_object_get(root, "tensors");
    if (!json_is_string(schema) || strcmp(json_string_value(schema), GOLDEN_SCHEMA_DUMP_INDEX)) {
        golden_fail_what(err, GOLDEN_EINVAL, path, "schema must be \"%s\"", GOLDEN_SCHEMA_DUMP_INDEX);
        goto done;
    }
    if (!json_is_array(tensors)) {
        golden_fail_what(err, GOLDEN_EINVAL, path, "tensors must be a list");
        goto done;
    }
    const char *key;
    json_t *v;
    json_object_foreach(root, key, v)
    {
        if (strcmp(key, "schema") != 0 && strcmp(key, "tensors") != 0) {
            golden_fail_where(err, GOLDEN_EINVAL, "unknown top-level key of a dump index (see contracts section 3)",
                              "%s:/%s", path, key);
            goto done;
        }
    }
    size_t k;
    json_t *t;
    json_array_foreach(tensors, k, t)
    {
        if (!json_is_object(t)) {
            golden_fail_where(err, GOLDEN_EINVAL, "tensor entry must be an object", "%s:/tensors/%zu", path, k);
            goto done;
        }
        if (index_entry(l, path, dir, t, k, err) != GOLDEN_OK)
            goto done;
    }
    /* Each entry's bytes must lie inside its file; entries sharing a file must not
     * overlap; a file used by one entry must hold exactly that entry's bytes. */
    size_t n = l->count - first;
    claims = calloc(n ? n : 1, sizeof *claims);
    if (!claims) {
        golden_fail_what(err, GOLDEN_ENOMEM, path, "out of memory");
        goto done;
    }
    for (size_t i = 0; i < n; i++) {
        const golden_input *in = &l->items[first + i];
        struct stat st;
        if (stat(in->path, &st) != 0 || !S_ISREG(st.st_mode)) {
            golden_fail_where(err, GOLDEN_EINVAL, "data file is not a readable regular file", "%s:%s", path,
                         in->info.name);
            goto done;
        }
        claims[i] = (claim){in->path, in->info.name, in->offset, in->nbytes,
                            (uint64_t)st.st_size, st.st_dev, st.st_ino};
        if (in->offset > claims[i].fsize || in->nbytes > claims[i].fsize - in->offset) {
            fail_tensor(err, path, in->info.name,
                        "byte size %llu at offset %llu does not fit in %s (%llu bytes)",
                        (unsigned long long)in->nbytes, (unsigned long long)in->offset, in->path,
                        (unsigned long long)claims[i].fsize);
            goto done;
        }
    }
    qsort(claims, n, sizeof *claims, cmp_claim);
    for (size_t i = 0; i < n; i++) {
        bool same_prev = i > 0 && same_file(&claims[i - 1], &claims[i]);
        bool same_next = i + 1 < n && same_file(&claims[i + 1], &claims[i]);
        if (same_prev && claims[i].off < claims[i - 1].off + claims[i - 1].len) {
            fail_tensor(err, path, claims[i].name,
                        "bytes overlap those of '%s' in %s",
                        claims[i - 1].name, claims[i].path);
            goto done;
        }
        if (!same_prev && !same_next && claims[i].fsize - claims[i].off != claims[i].len) {
            fail_tensor(err, path, claims[i].name,
                        "byte size of %s from offset %llu is %llu, shape and dtype need %llu",
                        claims[i].path, (unsigned long long)claims[i].off,
                        (unsigned long long)(claims[i].fsize - claims[i].off),
                        (unsigned long long)claims[i].len);
            goto done;
        }
    }
    rc = GOLDEN_OK;
done:
    if (rc != GOLDEN_OK) {
        for (size_t i = first; i < l->count; i++)
            input_free(&l->items[i]);
        l->count = first;
    }
    free(claims);
    free(dir);
    golden_doc_free(doc);
    return rc;
}

/* ---------------------------------------------------------------- folders */

#define DUMP_INDEX_FAMILY "calculet-dump-index/"

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* True when a .json file declares the dump-index schema at its top level; a file that does
 * not parse counts when its start names the schema, so a broken index is reported, not
 * silently skipped. */
static bool is_dump_index(const char *path)
{
    json_t *root = json_load_file(path, 0, NULL);
    if (!root) {
        char head[4097];
        FILE *f = fopen(path, "rb");
        size_t n = f ? fread(head, 1, sizeof head - 1, f) : 0;
        if (f)
            fclose(f);
        head[n] = '\0';
        return memmem(head, n, DUMP_INDEX_FAMILY, strlen(DUMP_INDEX_FAMILY)) != NULL;
    }
    json_t *s = json_object_get(root, "schema");
    /* any version: an index this build cannot read is an error, never skipped */
    bool yes = json_is_string(s) && strncmp(json_string_value(s), DUMP_INDEX_FAMILY,
                                            strlen(DUMP_INDEX_FAMILY)) == 0;
    json_decref(root);
    return yes;
}

static int walk(golden_input_list *l, const char *root_real, const char *dir, const char *rel,
                int depth, golden_error *err)
{
    if (depth > 64)
        return golden_fail_what(err, GOLDEN_EINVAL, dir, "folder nesting deeper than 64 levels");
    DIR *d = opendir(dir);
    if (!d)
        return golden_fail_what(err, golden_code_from_errno(errno), dir, "cannot open folder: %s", strerror(errno));
    char **names = NULL;
    size_t n = 0, cap = 0;
    int rc = GOLDEN_OK;
    struct dirent *e;
    errno = 0;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.') /* also skips dotfiles such as editor and temp files */
            continue;
        if (n == cap) {
            cap = cap ? cap * 2 : 32;
            char **p = realloc(names, cap * sizeof *p);
            if (!p) {
                rc = golden_fail_what(err, GOLDEN_ENOMEM, dir, "out of memory");
                goto done;
            }
            names = p;
        }
        if (!(names[n] = strdup(e->d_name))) {
            rc = golden_fail_what(err, GOLDEN_ENOMEM, dir, "out of memory");
            goto done;
        }
        n++;
    }
    if (n)
        qsort(names, n, sizeof *names, cmp_str);
    for (size_t i = 0; i < n && rc == GOLDEN_OK; i++) {
        size_t pl = strlen(dir) + strlen(names[i]) + 2;
        size_t rl = strlen(rel) + strlen(names[i]) + 2;
        char *p = malloc(pl), *r = malloc(rl);
        if (!p || !r) {
            free(p);
            free(r);
            rc = golden_fail_what(err, GOLDEN_ENOMEM, dir, "out of memory");
            break;
        }
        snprintf(p, pl, "%s/%s", dir, names[i]);
        snprintf(r, rl, "%s%s%s", rel, rel[0] ? "/" : "", names[i]);
        struct stat lst, st;
        if (lstat(p, &lst) != 0 || stat(p, &st) != 0) {
            rc = golden_fail_what(err, golden_code_from_errno(errno), p, "cannot stat: %s", strerror(errno));
        } else if (S_ISLNK(lst.st_mode) && S_ISDIR(st.st_mode)) {
            /* symlinked folders are not followed: no loops, no escapes */
        } else if (S_ISDIR(st.st_mode)) {
            rc = walk(l, root_real, p, r, depth + 1, err);
        } else if (S_ISREG(st.st_mode)) {
            bool npy = has_suffix(names[i], ".npy"), st_ = has_suffix(names[i], ".safetensors");
            bool js = has_suffix(names[i], ".json");
            if (has_suffix(names[i], ".npz")) {
                rc = golden_fail_what(err, GOLDEN_EUNSUPPORTED, p,
                                      ".npz archives are not read: save each array as .npy "
                                      "(numpy.save) or use .safetensors");
                free(p);
                free(r);
                break;
            }
            if (S_ISLNK(lst.st_mode) && (npy || st_ || js)) {
                char *real = realpath(p, NULL);
                size_t rn = strlen(root_real);
                if (!real || strncmp(real, root_real, rn) != 0 || real[rn] != '/')
                    rc = golden_fail_what(err, GOLDEN_EINVAL, p, "symlink leaves the input folder");
                free(real);
            }
            if (rc != GOLDEN_OK) {
            } else if (npy) {
                char *nm = strndup(r, strlen(r) - 4);
                rc = nm ? golden_ingest_npy(l, p, nm, err) : golden_fail_what(err, GOLDEN_ENOMEM, p, "out of memory");
                free(nm);
            } else if (st_) {
                rc = golden_ingest_safetensors(l, p, err);
            } else if (js && is_dump_index(p)) {
                rc = golden_ingest_index(l, p, err);
            }
        }
        free(p);
        free(r);
    }
done:
    for (size_t i = 0; i < n; i++)
        free(names[i]);
    free(names);
    closedir(d);
    return rc;
}

int golden_ingest_folder(golden_input_list *l, const char *path, golden_error *err)
{
    char *real = realpath(path, NULL);
    if (!real)
        return golden_fail_what(err, golden_code_from_errno(errno), path, "cannot open folder: %s", strerror(errno));
    int rc = walk(l, real, path, "", 0, err);
    free(real);
    return rc;
}

int golden_ingest_path(golden_input_list *l, const char *path, golden_error *err)
{
    struct stat st;
    if (stat(path, &st) != 0)
        return golden_fail_what(err, golden_code_from_errno(errno), path, "cannot open: %s", strerror(errno));
    if (S_ISDIR(st.st_mode))
        return golden_ingest_folder(l, path, err);
    if (has_suffix(path, ".npy"))
        return golden_ingest_npy(l, path, NULL, err);
    if (has_suffix(path, ".safetensors"))
        return golden_ingest_safetensors(l, path, err);
    return golden_ingest_index(l, path, err);
}

/* ---------------------------------------------------------------- names */

static int cmp_name_idx(const void *a, const void *b, void *ctx)
{
    const golden_input *items = ctx;
    return strcmp(items[*(const size_t *)a].info.name, items[*(const size_t *)b].info.name);
}

int golden_input_list_retype(golden_input_list *l, const char *name, golden_dtype to,
                             golden_error *err)
{
    golden_input *in = NULL;
    for (size_t i = 0; i < l->count; i++)
        if (strcmp(l->items[i].info.name, name) == 0) {
            in = &l->items[i];
            break;
        }
    if (!in)
        return golden_fail_what(err, GOLDEN_EINVAL, name, "--dtype names no tensor of the inputs");
    golden_dtype from = in->info.dtype;
    size_t w = golden_dtype_size(to);
    bool carrier = (from == GOLDEN_U16 && w == 2 && golden_dtype_is_float(to)) ||
                   (from == GOLDEN_U8 && w == 1 && to != GOLDEN_I8 && to != GOLDEN_U8);
    if (!carrier)
        return golden_fail_where(err, GOLDEN_EINVAL, "--dtype reinterprets only u16 as bf16/f16 and u8 as fp8_e4m3fn/fp8_e5m2/bool",
                                 "%.500s:%.500s", in->info.source ? in->info.source : in->path, name);
    in->info.dtype = to;
    return GOLDEN_OK;
}

int golden_input_list_finish(golden_input_list *l, const char *prefix, golden_error *err)
{
    if (prefix && prefix[0]) {
        size_t pn = strlen(prefix);
        while (pn > 0 && prefix[pn - 1] == '/')
            pn--;
        for (size_t i = 0; i < l->count; i++) {
            size_t n = pn + 1 + strlen(l->items[i].info.name) + 1;
            char *s = malloc(n);
            if (!s)
                return golden_fail_what(err, GOLDEN_ENOMEM, NULL, "out of memory");
            snprintf(s, n, "%.*s/%s", (int)pn, prefix, l->items[i].info.name);
            free(l->items[i].info.name);
            l->items[i].info.name = s;
        }
    }
    for (size_t i = 0; i < l->count; i++) {
        if (golden_tensor_name_check(l->items[i].info.name, err) != GOLDEN_OK) {
            char what[sizeof err->what];
            snprintf(what, sizeof what, "%s", err->what);
            return golden_fail_where(err, GOLDEN_EINVAL, what, "%s:%s", l->items[i].info.source,
                                l->items[i].info.name);
        }
    }
    size_t *idx = malloc((l->count ? l->count : 1) * sizeof *idx);
    if (!idx)
        return golden_fail_what(err, GOLDEN_ENOMEM, NULL, "out of memory");
    for (size_t i = 0; i < l->count; i++)
        idx[i] = i;
    qsort_r(idx, l->count, sizeof *idx, cmp_name_idx, l->items);
    int rc = GOLDEN_OK;
    for (size_t i = 1; i < l->count; i++) {
        const golden_input *a = &l->items[idx[i - 1]], *b = &l->items[idx[i]];
        if (strcmp(a->info.name, b->info.name) == 0) {
            const golden_input *later = idx[i] > idx[i - 1] ? b : a;
            const golden_input *earlier = later == b ? a : b;
            fail_tensor(err, later->info.source, later->info.name,
                        "duplicate tensor name (also in %s)",
                        earlier->info.source);
            rc = GOLDEN_ERR;
            break;
        }
    }
    free(idx);
    return rc;
}

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
        return pread_full(ft->fd, ft->scratch, n * w, ft->in->offset + e0 * w, ft->in->path,
                          ft->err);
    uint64_t end = ft->in->offset + ft->in->nbytes;
    if (stride * w >= WINDOW / 2) { /* too sparse for a window: one read per element */
        for (size_t b = 0; b < n; b++)
            if (pread_full(ft->fd, ft->scratch + b * w, w, ft->in->offset + (e0 + stride * b) * w,
                           ft->in->path, ft->err) != GOLDEN_OK)
                return GOLDEN_ERR;
        return GOLDEN_OK;
    }
    for (size_t b = 0; b < n; b++) {
        uint64_t off = ft->in->offset + (e0 + stride * b) * w;
        if (off < ft->win_off || off + w > ft->win_off + ft->win_len) {
            size_t len = (size_t)(end - off < WINDOW ? end - off : WINDOW);
            if (pread_full(ft->fd, ft->win, len, off, ft->in->path, ft->err) != GOLDEN_OK)
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
        rc = pread_full(fd, buf, n, in->offset + done, in->path, err);
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
        int rc = pread_full(ra->fd, ra->buf[slot], n, ra->in->offset + done, ra->in->path,
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
    size_t w = golden_dtype_size(in->info.dtype);
    if (chunk == 0)
        chunk = DEFAULT_CHUNK;
    chunk -= chunk % w;
    if (chunk == 0)
        chunk = w;
    int fd;
    uint64_t fsize;
    if (open_regular(in->path, &fd, &fsize, err) != GOLDEN_OK)
        return GOLDEN_ERR;
    if (in->offset > fsize || in->nbytes > fsize - in->offset) {
        close(fd);
        return golden_fail_where(err, GOLDEN_EINVAL, "file is shorter than the tensor (changed while reading?)",
                            "%s:%s", in->path, in->info.name);
    }
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
    return input_read(in, chunk, golden_cpu_count(), fn, ctx, err);
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
