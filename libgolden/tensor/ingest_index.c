/* Raw dumps with a calculet-dump-index/v1 index: entries checked key by key, files confined to
 * the index's folder, byte ranges checked against the files and each other. */
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
        !lg_ingest_json_shape(json_object_get(t, "shape"), &rank, shape))
        return golden_fail_what(err, GOLDEN_EINVAL, where, "tensor entry needs file, dtype and shape");
    json_t *joff = json_object_get(t, "offset");
    if (joff && !lg_ingest_json_uint(joff, &offset))
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
    golden_input *in = lg_ingest_list_push(l, err);
    if (!in || lg_ingest_input_set(in, name, file, ipath, dt, rank, shape, err) != GOLDEN_OK) {
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
    if (jnb && (!lg_ingest_json_uint(jnb, &nb) || nb != in->nbytes)) {
        lg_ingest_input_free(in);
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
            lg_ingest_input_free(in);
            return golden_fail_what(err, GOLDEN_EINVAL, where, "%s must be an integer", ints[i]);
        }
        *has[i] = true;
        *val[i] = json_integer_value(v);
    }
    json_t *jop = json_object_get(t, "op_family");
    if (jop) {
        if (!json_is_string(jop) || !(in->info.op_family = strdup(json_string_value(jop)))) {
            lg_ingest_input_free(in);
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
            lg_ingest_fail_tensor(err, path, in->info.name,
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
            lg_ingest_fail_tensor(err, path, claims[i].name,
                        "bytes overlap those of '%s' in %s",
                        claims[i - 1].name, claims[i].path);
            goto done;
        }
        if (!same_prev && !same_next && claims[i].fsize - claims[i].off != claims[i].len) {
            lg_ingest_fail_tensor(err, path, claims[i].name,
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
            lg_ingest_input_free(&l->items[i]);
        l->count = first;
    }
    free(claims);
    free(dir);
    golden_doc_free(doc);
    return rc;
}
