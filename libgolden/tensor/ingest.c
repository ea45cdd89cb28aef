/* golden-dump's inputs as a list: what every reader shares (the list, file access, errors),
 * folders walked in sorted order, and the names checked and prefixed at the end. */
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
#include "util/vec.h"

int lg_ingest_fail_tensor(golden_error *err, const char *file, const char *tensor,
                              const char *fmt, ...)
{
    if (!err)
        return GOLDEN_ERR;
    err->code = GOLDEN_EINVAL;
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
    l->skipped = l->skipped_why = NULL;
    l->n_skipped = 0;
}

int lg_ingest_skip(golden_input_list *l, const char *path, const char *name, const char *why,
                   golden_error *err)
{
    /* capacity: the power of two at or above the count, grown here only (a long list of
     * skipped values costs O(n), not O(n^2) copies) */
    size_t n = l->n_skipped, cap = n == 0 ? 1 : (n & (n - 1)) == 0 ? 2 * n : 0;
    char **p = cap ? realloc(l->skipped, cap * sizeof *p) : l->skipped;
    if (p)
        l->skipped = p;
    char **w = !p ? NULL : cap ? realloc(l->skipped_why, cap * sizeof *w) : l->skipped_why;
    if (w)
        l->skipped_why = w;
    char *a = NULL, *b = w ? strdup(why) : NULL;
    if (b && asprintf(&a, "%s:%s", path, name) < 0)
        a = NULL;
    if (!a) {
        free(b);
        return golden_fail_what(err, GOLDEN_ENOMEM, path, "out of memory");
    }
    l->skipped[l->n_skipped] = a;
    l->skipped_why[l->n_skipped++] = b;
    return GOLDEN_OK;
}

void lg_ingest_input_free(golden_input *in)
{
    golden_tensor_info_clear(&in->info);
    free(in->path);
    lg_ingest_deflated_free(in);
}

void golden_input_list_free(golden_input_list *l)
{
    for (size_t i = 0; i < l->count; i++)
        lg_ingest_input_free(&l->items[i]);
    free(l->items);
    for (size_t i = 0; i < l->n_skipped; i++) {
        free(l->skipped[i]);
        free(l->skipped_why[i]);
    }
    free(l->skipped);
    free(l->skipped_why);
    golden_input_list_init(l);
}

/* A zeroed slot at the end of the list, or NULL when memory runs out. */
golden_input *lg_ingest_list_push(golden_input_list *l, golden_error *err)
{
    if (VEC_GROW(l->items, l->count, l->cap, 16) != 0) {
        golden_fail_what(err, GOLDEN_ENOMEM, NULL, "out of memory");
        return NULL;
    }
    golden_input *in = &l->items[l->count];
    memset(in, 0, sizeof *in);
    return in;
}

/* Fill the common fields of a new input; on failure the slot is not kept. */
int lg_ingest_input_set(golden_input *in, const char *name, const char *path, const char *where,
                     golden_dtype dt, int rank, const uint64_t *shape, golden_error *err)
{
    in->info.name = strdup(name);
    in->path = strdup(path);
    in->info.source = strdup(path);
    if (!in->info.name || !in->path || !in->info.source) {
        lg_ingest_input_free(in);
        return golden_fail_what(err, GOLDEN_ENOMEM, path, "out of memory");
    }
    in->info.dtype = dt;
    in->info.rank = rank;
    for (int i = 0; i < rank; i++)
        in->info.shape[i] = shape[i];
    if (golden_shape_count(rank, shape, dt, &in->info.count, err) != GOLDEN_OK) {
        char what[sizeof err->what];
        snprintf(what, sizeof what, "%s", err->what);
        lg_ingest_input_free(in);
        return golden_fail_where(err, GOLDEN_EINVAL, what, "%s:%s", where, name);
    }
    in->nbytes = in->info.count * golden_dtype_size(dt);
    return GOLDEN_OK;
}

/* ---------------------------------------------------------------- files */

int lg_ingest_open_regular(const char *path, int *fd_out, uint64_t *size, golden_error *err)
{
    int fd = golden_infile_open(path, 0, err); /* a FIFO is refused, never waited on */
    if (fd < 0)
        return GOLDEN_ERR;
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

int lg_ingest_open_input(const golden_input *in, uint64_t stored, size_t *chunk, int *fd_out,
                         golden_error *err)
{
    size_t w = golden_dtype_size(in->info.dtype);
    if (*chunk == 0)
        *chunk = DEFAULT_CHUNK;
    *chunk -= *chunk % w;
    if (*chunk == 0)
        *chunk = w;
    int fd;
    uint64_t fsize;
    if (lg_ingest_open_regular(in->path, &fd, &fsize, err) != GOLDEN_OK)
        return GOLDEN_ERR;
    if (in->offset > fsize || stored > fsize - in->offset) {
        close(fd);
        return golden_fail_where(err, GOLDEN_EINVAL, "file is shorter than the tensor (changed while reading?)",
                                 "%s:%s", in->path, in->info.name);
    }
    *fd_out = fd;
    return GOLDEN_OK;
}

/* pread exactly n bytes at off; a short file is an error. */
int lg_ingest_pread_full(int fd, void *buf, size_t n, uint64_t off, const char *path,
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
    golden_doc *doc = NULL; /* the one strict reader, as the index reader itself */
    golden_error derr;
    json_t *root = golden_doc_load_file(path, &doc, &derr) == GOLDEN_OK ? golden_doc_root(doc)
                                                                        : NULL;
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
    golden_doc_free(doc);
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
        if (VEC_GROW(names, n, cap, 32) != 0) {
            rc = golden_fail_what(err, GOLDEN_ENOMEM, dir, "out of memory");
            goto done;
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
            bool npy = lg_ingest_has_suffix(names[i], ".npy"), st_ = lg_ingest_has_suffix(names[i], ".safetensors");
            bool js = lg_ingest_has_suffix(names[i], ".json");
            bool npz = lg_ingest_has_suffix(names[i], ".npz");
            bool pt = lg_ingest_has_suffix(names[i], ".pt") || lg_ingest_has_suffix(names[i], ".pth");
            if (S_ISLNK(lst.st_mode) && (npy || st_ || js || npz || pt)) {
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
            } else if (npz) {
                rc = golden_ingest_npz(l, p, err);
            } else if (pt) {
                char *nm = strndup(r, strlen(r) - (lg_ingest_has_suffix(r, ".pt") ? 3 : 4));
                rc = nm ? lg_ingest_pt_named(l, p, nm, err) : golden_fail_what(err, GOLDEN_ENOMEM, p, "out of memory");
                free(nm);
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
    if (!S_ISREG(st.st_mode)) /* a raw input's size is read up front: no pipes */
        return golden_fail_what(err, GOLDEN_EINVAL, path,
                                "is not a regular file (golden-dump reads raw inputs by size)");
    if (lg_ingest_has_suffix(path, ".npy"))
        return golden_ingest_npy(l, path, NULL, err);
    if (lg_ingest_has_suffix(path, ".safetensors"))
        return golden_ingest_safetensors(l, path, err);
    if (lg_ingest_has_suffix(path, ".npz"))
        return golden_ingest_npz(l, path, err);
    if (lg_ingest_has_suffix(path, ".pt") || lg_ingest_has_suffix(path, ".pth"))
        return golden_ingest_pt(l, path, err);
    /* by content: a zip archive is never a JSON index */
    unsigned char head[4];
    FILE *f = fopen(path, "rb");
    size_t hn = f ? fread(head, 1, sizeof head, f) : 0;
    if (f)
        fclose(f);
    if (lg_zip_magic(head, hn))
        return lg_ingest_zip_any(l, path, err);
    if (hn >= 2 && head[0] == 0x80 && head[1] >= 2 && head[1] <= 5)
        return golden_fail_what(err, GOLDEN_EUNSUPPORTED, path,
                                "a bare Python pickle (the legacy torch.save format of torch < 1.6?): "
                                "only the zip format of torch >= 1.6 is read (torch.save with the default "
                                "_use_new_zipfile_serialization=True)");
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
            lg_ingest_fail_tensor(err, later->info.source, later->info.name,
                        "duplicate tensor name (also in %s)",
                        earlier->info.source);
            rc = GOLDEN_ERR;
            break;
        }
    }
    free(idx);
    return rc;
}
