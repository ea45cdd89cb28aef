/* The tensors of inputs that are not goldens, served through the golden reader's API
 * (golden_reader_open_flags with GOLDEN_READ_FOREIGN): one .npy, .safetensors or dump index,
 * a .npz or torch.save file (whatever golden_ingest_path reads), or a folder of these and of
 * HDF5 files (goldens or plain), walked in sorted order. Each kind is told by its first bytes
 * (reader_sniff.c); a file a folder holds that is none of these is listed as skipped, never
 * passed over silently. No stored sha256 or statistics: golden_reader_stored says false.
 * Reads: C-order .npy, .safetensors and raw dumps by pread at the element's offset (byte order
 * swapped when stored big-endian); anything else golden_input_read serves (Fortran order, and
 * kinds a later golden_ingest_path learns) through a one-tensor cache of its C-order bytes
 * when it is at most FOREIGN_CACHE_MAX bytes, else by streaming from its start up to the range
 * asked for (correct, slow: docs/formats.md). */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "golden/infile.h"
#include "golden/ingest.h"
#include "golden/report.h"
#include "tensor/reader_private.h"
#include "tensor/zip_private.h"
#include "tensor/ingest_private.h"
#include "util/str.h"
#include "util/vec.h"

#define FOREIGN_CACHE_MAX (UINT64_C(256) << 20)

typedef struct {
    const golden_tensor_info *info;
    size_t input;          /* index in f->inputs, or */
    golden_reader *sub;    /* an HDF5 file of a folder (NULL for inputs) */
    size_t sub_index;
    int fd;                /* for pread (shared by the inputs of one file), -1 none */
} foreign_entry;

struct lg_foreign {
    char *path;
    bool folder;
    golden_input_list inputs;
    golden_reader **subs;
    size_t n_subs;
    foreign_entry *e;
    size_t n;
    int *fds;
    size_t n_fds;
    lg_skiplist skipped;
    pthread_mutex_t cache_lock;
    size_t cache_entry;    /* SIZE_MAX: empty */
    unsigned char *cache;
};

static int oom(golden_error *err, const char *where)
{
    return golden_fail_what(err, GOLDEN_ENOMEM, where, "out of memory");
}

static bool zip_suffix(const char *p)
{
    return lg_has_suffix(p, ".npz") || lg_has_suffix(p, ".pt") || lg_has_suffix(p, ".pth");
}

/* A JSON file is a dump index when its start names the schema family (a broken index is
 * then reported by the index reader, never skipped). */
static bool names_dump_index(const char *path)
{
    char head[4097];
    FILE *fp = fopen(path, "rb");
    size_t n = fp ? fread(head, 1, sizeof head - 1, fp) : 0;
    if (fp)
        fclose(fp);
    head[n] = '\0';
    return memmem(head, n, "calculet-dump-index/", 20) != NULL;
}

/* Why a file of this kind is not read (NULL: it is read); `top` when it was named itself. */
static const char *refusal(lg_kind k, const char *path, bool top)
{
    switch (k) {
    case LG_KIND_NPY: case LG_KIND_SAFETENSORS: case LG_KIND_HDF5: return NULL;
    case LG_KIND_ZIP: /* named itself: told by content as golden-dump does (a torch.save zip
                       * when it holds NAME/data.pkl, else an .npz); in a folder by suffix */
        return top || zip_suffix(path) ? NULL : "a zip archive not named .npz, .pt or .pth (zip "
                                                "archives in folders are read by those suffixes)";
    case LG_KIND_JSON:
        return top || names_dump_index(path) ? NULL : "JSON that is not a calculet-dump-index";
    case LG_KIND_PICKLE:
        return "a legacy (non-zip) PyTorch pickle: re-save it with torch.save() of PyTorch >= 1.6";
    case LG_KIND_BINARY:
        return "unrecognised binary data (raw dumps are read through a dump index)";
    default: return NULL;
    }
}

/* Add one file of a known kind: npy named `name` (NULL: its base name). */
static int add_file(lg_foreign *f, const char *p, lg_kind k, const char *name, unsigned flags,
                    golden_error *err)
{
    switch (k) {
    case LG_KIND_NPY: return golden_ingest_npy(&f->inputs, p, name, err);
    case LG_KIND_SAFETENSORS: return golden_ingest_safetensors(&f->inputs, p, err);
    case LG_KIND_JSON: return golden_ingest_index(&f->inputs, p, err);
    case LG_KIND_ZIP: /* .npz, .pt/.pth; a bare tensor of a .pt in a folder named by its path */
        if (name && (lg_has_suffix(p, ".pt") || lg_has_suffix(p, ".pth")))
            return lg_ingest_pt_named(&f->inputs, p, name, err);
        return golden_ingest_path(&f->inputs, p, err);
    case LG_KIND_HDF5: {
        golden_reader **s = realloc(f->subs, (f->n_subs + 1) * sizeof *s);
        if (!s)
            return oom(err, p);
        f->subs = s;
        if (golden_reader_open_flags(p, flags, &f->subs[f->n_subs], err) != 0)
            return GOLDEN_ERR;
        golden_reader *sub = f->subs[f->n_subs++];
        for (size_t i = 0; i < golden_reader_skipped_count(sub); i++) { /* its datasets */
            const char *sp, *sw;
            golden_reader_skipped_at(sub, i, &sp, &sw);
            if (lg_skip_add(&f->skipped, sp, sw))
                return oom(err, p);
        }
        return GOLDEN_OK;
    }
    default: return golden_fail_what(err, GOLDEN_EINTERNAL, p, "no reader for %s", lg_kind_text(k));
    }
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static int walk(lg_foreign *f, const char *root_real, const char *dir, const char *rel, int depth,
                unsigned flags, golden_error *err);

/* One entry of a folder: p its path, r its path in the folder. */
static int walk_entry(lg_foreign *f, const char *root_real, const char *p, const char *r,
                      const char *base, int depth, unsigned flags, golden_error *err)
{
    struct stat lst, st;
    if (lstat(p, &lst) != 0 || stat(p, &st) != 0)
        return golden_fail_what(err, golden_code_from_errno(errno), p, "cannot stat: %s",
                                strerror(errno));
    const char *why = NULL;
    if (base[0] == '.')
        why = "hidden file";
    else if (S_ISLNK(lst.st_mode) && S_ISDIR(st.st_mode))
        why = "symlinked folder (not followed: no loops, no escapes)";
    else if (S_ISDIR(st.st_mode))
        return walk(f, root_real, p, r, depth + 1, flags, err);
    else if (!S_ISREG(st.st_mode))
        why = S_ISFIFO(st.st_mode) ? "a FIFO, not a regular file" : "not a regular file";
    if (why)
        return lg_skip_add(&f->skipped, p, why) ? oom(err, p) : GOLDEN_OK;
    if (S_ISLNK(lst.st_mode)) {
        char *real = realpath(p, NULL);
        size_t rn = strlen(root_real);
        bool inside = real && strncmp(real, root_real, rn) == 0 && real[rn] == '/';
        free(real);
        if (!inside)
            return golden_fail_what(err, GOLDEN_EINVAL, p, "symlink leaves the input folder");
    }
    lg_kind k;
    if (lg_sniff(p, &k, err) != 0)
        return GOLDEN_ERR;
    if (k == LG_KIND_TEXT || k == LG_KIND_EMPTY) {
        char w[64];
        snprintf(w, sizeof w, "not a tensor file (%s)", lg_kind_text(k));
        return lg_skip_add(&f->skipped, p, w) ? oom(err, p) : GOLDEN_OK;
    }
    if ((why = refusal(k, p, false)))
        return lg_skip_add(&f->skipped, p, why) ? oom(err, p) : GOLDEN_OK;
    char *nm = NULL;
    if (k == LG_KIND_NPY) /* named by its path in the folder, as golden-dump names it */
        if (!(nm = lg_has_suffix(r, ".npy") ? strndup(r, strlen(r) - 4) : strdup(r)))
            return oom(err, p);
    if (k == LG_KIND_ZIP && (lg_has_suffix(r, ".pt") || lg_has_suffix(r, ".pth"))) /* the same rule */
        if (!(nm = strndup(r, strlen(r) - (lg_has_suffix(r, ".pt") ? 3 : 4))))
            return oom(err, p);
    int rc = add_file(f, p, k, nm, flags, err);
    free(nm);
    return rc;
}

static int walk(lg_foreign *f, const char *root_real, const char *dir, const char *rel, int depth,
                unsigned flags, golden_error *err)
{
    if (depth > 64)
        return golden_fail_what(err, GOLDEN_EINVAL, dir, "folder nesting deeper than 64 levels");
    DIR *d = opendir(dir);
    if (!d)
        return golden_fail_what(err, golden_code_from_errno(errno), dir,
                                "cannot open folder: %s", strerror(errno));
    char **names = NULL;
    size_t n = 0, cap = 0;
    int rc = GOLDEN_OK;
    struct dirent *de;
    while (rc == GOLDEN_OK && (de = readdir(d))) {
        if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
            continue;
        if (VEC_GROW(names, n, cap, 32) != 0) {
            rc = oom(err, dir);
            break;
        }
        if (!(names[n] = strdup(de->d_name)))
            rc = oom(err, dir);
        else
            n++;
    }
    closedir(d);
    if (n)
        qsort(names, n, sizeof *names, cmp_str);
    for (size_t i = 0; i < n && rc == GOLDEN_OK; i++) {
        size_t pl = strlen(dir) + strlen(names[i]) + 2, rl = strlen(rel) + strlen(names[i]) + 2;
        char *p = malloc(pl), *r = malloc(rl);
        if (!p || !r)
            rc = oom(err, dir);
        else {
            snprintf(p, pl, "%s/%s", dir, names[i]);
            snprintf(r, rl, "%s%s%s", rel, rel[0] ? "/" : "", names[i]);
            rc = walk_entry(f, root_real, p, r, names[i], depth, flags, err);
        }
        free(p);
        free(r);
    }
    for (size_t i = 0; i < n; i++)
        free(names[i]);
    free(names);
    return rc;
}

/* Raw files of a folder that a dump index reads are not skipped. */
static void unskip_indexed(lg_foreign *f)
{
    size_t k = 0;
    for (size_t i = 0; i < f->skipped.n; i++) {
        char *real = realpath(f->skipped.path[i], NULL);
        bool used = false;
        for (size_t j = 0; real && !used && j < f->inputs.count; j++) {
            char *r2 = realpath(f->inputs.items[j].path, NULL);
            used = r2 && strcmp(r2, real) == 0;
            free(r2);
        }
        free(real);
        if (used) {
            free(f->skipped.path[i]);
            free(f->skipped.why[i]);
        } else {
            f->skipped.path[k] = f->skipped.path[i];
            f->skipped.why[k++] = f->skipped.why[i];
        }
    }
    f->skipped.n = k;
}

static int cmp_entry(const void *a, const void *b)
{
    return strcmp(((const foreign_entry *)a)->info->name, ((const foreign_entry *)b)->info->name);
}

/* Entries for every tensor, sorted by name, names unique; fds for the pread path. */
static int build_entries(lg_foreign *f, golden_error *err)
{
    size_t n = f->inputs.count;
    for (size_t s = 0; s < f->n_subs; s++)
        n += golden_reader_count(f->subs[s]);
    f->e = calloc(n ? n : 1, sizeof *f->e);
    f->fds = calloc(f->inputs.count ? f->inputs.count : 1, sizeof *f->fds);
    if (!f->e || !f->fds)
        return oom(err, f->path);
    for (size_t i = 0; i < f->inputs.count; i++) {
        golden_input *in = &f->inputs.items[i];
        /* nothing is stored beside the data: no value may pass for a stored statistic */
        in->info.min = in->info.max = in->info.mean = in->info.std = NAN;
        in->info.sha256[0] = '\0';
        int fd = -1;
        if (i > 0 && strcmp(in->path, f->inputs.items[i - 1].path) == 0)
            fd = f->e[f->n - 1].fd;
        else if ((fd = golden_infile_open(in->path, 0, err)) < 0)
            return GOLDEN_ERR;
        else
            f->fds[f->n_fds++] = fd;
        f->e[f->n++] = (foreign_entry){.info = &in->info, .input = i, .fd = fd};
    }
    for (size_t s = 0; s < f->n_subs; s++)
        for (size_t k = 0; k < golden_reader_count(f->subs[s]); k++)
            f->e[f->n++] = (foreign_entry){.info = golden_reader_tensor(f->subs[s], k),
                                           .sub = f->subs[s], .sub_index = k, .fd = -1};
    if (f->n > 1)
        qsort(f->e, f->n, sizeof *f->e, cmp_entry);
    for (size_t i = 1; i < f->n; i++)
        if (strcmp(f->e[i - 1].info->name, f->e[i].info->name) == 0) {
            const char *a = f->e[i - 1].info->source, *b = f->e[i].info->source;
            char where[1024];
            snprintf(where, sizeof where, "%.500s:%.400s", f->path, f->e[i].info->name);
            return golden_fail_what(err, GOLDEN_EINVAL, where,
                                    "duplicate tensor name (in %s and %s)",
                                    a ? a : "an HDF5 file", b ? b : "an HDF5 file");
        }
    return GOLDEN_OK;
}

int lg_foreign_open(const char *path, unsigned flags, lg_foreign **out, golden_error *err)
{
    *out = NULL;
    lg_foreign *f = calloc(1, sizeof *f);
    if (!f)
        return oom(err, path);
    golden_input_list_init(&f->inputs);
    pthread_mutex_init(&f->cache_lock, NULL);
    f->cache_entry = SIZE_MAX;
    int rc = GOLDEN_OK;
    struct stat st;
    if (!(f->path = strdup(path)))
        rc = oom(err, path);
    else if (stat(path, &st) != 0)
        rc = golden_fail_what(err, golden_code_from_errno(errno), path, "cannot open: %s",
                              strerror(errno));
    else if (S_ISDIR(st.st_mode)) {
        f->folder = true;
        char *real = realpath(path, NULL);
        rc = real ? walk(f, real, path, "", 0, flags, err)
                  : golden_fail_what(err, golden_code_from_errno(errno), path,
                                     "cannot open folder: %s", strerror(errno));
        free(real);
        if (rc == GOLDEN_OK)
            unskip_indexed(f);
    } else {
        lg_kind k;
        const char *why;
        if (lg_sniff(path, &k, err) != 0)
            rc = GOLDEN_ERR;
        else if (k == LG_KIND_TEXT || k == LG_KIND_EMPTY || k == LG_KIND_BINARY ||
                 (why = refusal(k, path, true)))
            rc = golden_fail_what(err, GOLDEN_EUNSUPPORTED, path,
                                  "not a tensor file (%s): the readers take " LG_READ_SUPPORTED,
                                  k == LG_KIND_TEXT || k == LG_KIND_EMPTY || k == LG_KIND_BINARY
                                      ? lg_kind_text(k) : why);
        else
            rc = add_file(f, path, k, NULL, flags, err);
    }
    for (size_t i = 0; rc == GOLDEN_OK && i < f->inputs.n_skipped; i++) /* .pt scalars */
        if (lg_skip_add(&f->skipped, f->inputs.skipped[i], f->inputs.skipped_why[i]))
            rc = oom(err, path);
    if (rc == GOLDEN_OK)
        rc = golden_input_list_finish(&f->inputs, NULL, err);
    if (rc == GOLDEN_OK)
        rc = build_entries(f, err);
    if (rc != GOLDEN_OK) {
        lg_foreign_close(f);
        return GOLDEN_ERR;
    }
    *out = f;
    return GOLDEN_OK;
}

void lg_foreign_close(lg_foreign *f)
{
    if (!f)
        return;
    for (size_t i = 0; i < f->n_fds; i++)
        close(f->fds[i]);
    for (size_t s = 0; s < f->n_subs; s++)
        golden_reader_close(f->subs[s]);
    golden_input_list_free(&f->inputs);
    lg_skip_free(&f->skipped);
    pthread_mutex_destroy(&f->cache_lock);
    free(f->cache);
    free(f->subs);
    free(f->fds);
    free(f->e);
    free(f->path);
    free(f);
}

size_t lg_foreign_count(const lg_foreign *f) { return f->n; }
bool lg_foreign_is_folder(const lg_foreign *f) { return f->folder; }

const golden_tensor_info *lg_foreign_tensor(const lg_foreign *f, size_t i)
{
    return i < f->n ? f->e[i].info : NULL;
}

bool lg_foreign_stored(const lg_foreign *f, size_t i)
{
    return i < f->n && f->e[i].sub && golden_reader_stored(f->e[i].sub, f->e[i].sub_index);
}

const char *lg_foreign_format(const lg_foreign *f, size_t i)
{
    if (i >= f->n)
        return "";
    if (f->e[i].sub)
        return golden_reader_format(f->e[i].sub, f->e[i].sub_index);
    switch (f->inputs.items[f->e[i].input].format) {
    case GOLDEN_INPUT_NPY: return "npy";
    case GOLDEN_INPUT_SAFETENSORS: return "safetensors";
    case GOLDEN_INPUT_RAW: return "raw";
    default: return "archive"; /* kinds golden_ingest_path learned later (.npz, .pt) */
    }
}

const lg_skiplist *lg_foreign_skipped(const lg_foreign *f) { return &f->skipped; }

/* ---------------------------------------------------------------- reading */

static void swap_bytes(unsigned char *p, uint64_t n, size_t w)
{
    for (uint64_t i = 0; i < n; i++, p += w)
        for (size_t a = 0, b = w - 1; a < b; a++, b--) {
            unsigned char t = p[a];
            p[a] = p[b];
            p[b] = t;
        }
}

/* golden_input_read's pieces, bytes [lo, hi) of them copied out; stops after hi. */
typedef struct {
    uint64_t at, lo, hi;
    unsigned char *out;
    bool done;
} range_ctx;

static int range_piece(void *ctx, const void *data, size_t n, golden_error *err)
{
    (void)err;
    range_ctx *c = ctx;
    uint64_t a = c->at, b = c->at + n;
    uint64_t s = a > c->lo ? a : c->lo, e = b < c->hi ? b : c->hi;
    if (s < e)
        memcpy(c->out + (s - c->lo), (const unsigned char *)data + (s - a), (size_t)(e - s));
    c->at = b;
    if (b >= c->hi) {
        c->done = true;
        return GOLDEN_ERR; /* stop: not an error (done says so) */
    }
    return GOLDEN_OK;
}

static int stream_range(const golden_input *in, uint64_t lo, uint64_t hi, void *buf,
                        golden_error *err)
{
    range_ctx c = {.lo = lo, .hi = hi, .out = buf};
    golden_error e2;
    golden_error_clear(&e2);
    if (golden_input_read(in, 0, range_piece, &c, &e2) != GOLDEN_OK && !c.done) {
        if (err)
            *err = e2;
        return GOLDEN_ERR;
    }
    if (c.at < hi)
        return golden_fail_where(err, GOLDEN_ECORRUPT, "the data ended before the tensor did",
                                 "%s:%s", in->path, in->info.name);
    return GOLDEN_OK;
}

/* Inputs served by golden_input_read (Fortran order, other formats): from the cache. */
static int cached_read(lg_foreign *f, size_t i, uint64_t lo, uint64_t hi, void *buf,
                       golden_error *err)
{
    const golden_input *in = &f->inputs.items[f->e[i].input];
    if (in->nbytes > FOREIGN_CACHE_MAX && in->format == GOLDEN_INPUT_DEFLATED &&
        !in->fortran_order) {
        /* a big deflated member: its own cursor continues in-order reads (one pass in all,
         * zip_private.h), where streaming would restart from the entry's start each time */
        if (lg_ingest_deflated_pread(in, lo, (size_t)(hi - lo), buf, err) != GOLDEN_OK)
            return GOLDEN_ERR;
        size_t w = golden_dtype_size(in->info.dtype);
        if (in->big_endian && w > 1)
            swap_bytes(buf, (hi - lo) / w, w);
        return GOLDEN_OK;
    }
    if (in->nbytes > FOREIGN_CACHE_MAX)
        return stream_range(in, lo, hi, buf, err);
    pthread_mutex_lock(&f->cache_lock);
    int rc = GOLDEN_OK;
    if (f->cache_entry != i) {
        free(f->cache);
        f->cache_entry = SIZE_MAX;
        if (!(f->cache = malloc(in->nbytes ? in->nbytes : 1)))
            rc = oom(err, in->path);
        else if ((rc = stream_range(in, 0, in->nbytes, f->cache, err)) == GOLDEN_OK)
            f->cache_entry = i;
    }
    if (rc == GOLDEN_OK)
        memcpy(buf, f->cache + lo, (size_t)(hi - lo));
    pthread_mutex_unlock(&f->cache_lock);
    return rc;
}

int lg_foreign_read(lg_foreign *f, size_t i, uint64_t first, uint64_t n, void *buf,
                    golden_error *err)
{
    if (i >= f->n)
        return golden_fail_what(err, GOLDEN_EINVAL, f->path, "no tensor %zu", i);
    foreign_entry *e = &f->e[i];
    if (e->sub)
        return golden_reader_read(e->sub, e->sub_index, first, n, buf, err);
    const golden_input *in = &f->inputs.items[e->input];
    if (first > in->info.count || n > in->info.count - first)
        return golden_fail_where(err, GOLDEN_EINVAL, "element range is outside the tensor",
                                 "%s:%s", in->path, in->info.name);
    if (n == 0)
        return GOLDEN_OK;
    size_t w = golden_dtype_size(in->info.dtype);
    bool direct = !in->fortran_order && (in->format == GOLDEN_INPUT_NPY ||
                                         in->format == GOLDEN_INPUT_SAFETENSORS ||
                                         in->format == GOLDEN_INPUT_RAW);
    if (!direct)
        return cached_read(f, i, first * w, (first + n) * w, buf, err);
    unsigned char *p = buf;
    uint64_t left = n * w, at = in->offset + first * w;
    while (left > 0) {
        ssize_t got = pread(e->fd, p, left > (1u << 30) ? (1u << 30) : left, (off_t)at);
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0)
            return golden_fail_where(err, got < 0 ? golden_code_from_errno(errno) : GOLDEN_ECORRUPT,
                                     got < 0 ? strerror(errno) : "file is truncated",
                                     "%s:%s", in->path, in->info.name);
        p += got;
        at += (uint64_t)got;
        left -= (uint64_t)got;
    }
    if (in->big_endian && w > 1)
        swap_bytes(buf, n, w);
    return GOLDEN_OK;
}
