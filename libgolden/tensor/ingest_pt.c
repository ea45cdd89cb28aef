/* PyTorch .pt/.pth inputs: the zip format of torch.save (torch >= 1.6), NAME/data.pkl read by
 * the restricted unpickler (unpickle.c), each tensor served from its storage member
 * NAME/data/KEY: C order by offset, the reversed-stride (transposed) layout as Fortran order,
 * anything else refused. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "golden/ingest.h"
#include "tensor/ingest_private.h"
#include "tensor/unpickle_private.h"
#include "tensor/zip_private.h"

#define PT_MAX_PICKLE (64u << 20)
#define PT_MAX_DEPTH 64
/* Visits and entries (tensors plus skipped values) of one file. A pickle is a graph: DUP and
 * memo references let 133 bytes name one list from millions of paths (found by fuzz_unpickle,
 * 2.3 GB of skipped-value records). The largest state_dicts known here (Qwen3-30B-A3B: about
 * 19,000 tensors) stay far below both. */
#define PT_MAX_VISITS (1u << 20)
#define PT_MAX_ENTRIES (1u << 17)
#define PT_MAX_NAME 4096

typedef struct {
    golden_input_list *l;
    int fd;
    const char *path;
    const lg_zip *z;
    const char *prefix; /* "NAME/" of the archive's members */
    bool big_endian;
    size_t visits;
    size_t entries; /* tensors and skipped values of this file */
    char name[PT_MAX_NAME];
    golden_error *err;
} pt_ctx;

/* The C-order (or, with fortran, the reversed) strides of shape; size-1 axes match any. */
static bool strides_match(const lg_pk_tensor *t, bool fortran)
{
    uint64_t expect = 1;
    for (int k = 0; k < t->rank; k++) {
        int i = fortran ? k : t->rank - 1 - k;
        if (t->shape[i] != 1 && (t->stride[i] < 0 || (uint64_t)t->stride[i] != expect))
            return false;
        expect *= t->shape[i];
    }
    return true;
}

static int add_tensor(pt_ctx *c, const lg_pk_val *v)
{
    const lg_pk_tensor *t = v->t;
    const lg_pk_val *s = t->storage;
    char member[PT_MAX_NAME + 64];
    snprintf(member, sizeof member, "%sdata/%.*s", c->prefix, (int)(s->slen > 1024 ? 1024 : s->slen), s->s);
    const lg_zip_entry *e = lg_zip_find(c->z, member);
    if (!e || memchr(s->s, '\0', s->slen))
        return lg_ingest_fail_tensor(c->err, c->path, c->name, "storage member '%s' is missing", member);
    golden_input *in = lg_ingest_list_push(c->l, c->err);
    if (!in || lg_ingest_input_set(in, c->name, c->path, c->path, s->dtype, t->rank, t->shape, c->err) != GOLDEN_OK)
        return GOLDEN_ERR;
    size_t w = golden_dtype_size(s->dtype);
    uint64_t numel = (uint64_t)s->i;
    int rc = GOLDEN_ERR;
    bool c_order = in->info.count == 0 || strides_match(t, false);
    bool f_order = !c_order && strides_match(t, true);
    in->format = GOLDEN_INPUT_NPY; /* a plain little-endian array at an offset */
    in->big_endian = c->big_endian && w > 1;
    in->fortran_order = f_order;
    if (!c_order && !f_order)
        lg_ingest_fail_tensor(c->err, c->path, c->name,
                              "non-contiguous tensor (a strided view): save .contiguous()");
    else if (numel > UINT64_MAX / w || e->usize != numel * w)
        lg_ingest_fail_tensor(c->err, c->path, c->name,
                              "storage member '%s' holds %llu bytes, not %llu elements of %zu bytes",
                              member, (unsigned long long)e->usize, (unsigned long long)numel, w);
    else if (t->offset > numel || in->info.count > numel - t->offset)
        lg_ingest_fail_tensor(c->err, c->path, c->name,
                              "tensor (offset %llu, %llu elements) runs past its storage of %llu elements",
                              (unsigned long long)t->offset, (unsigned long long)in->info.count,
                              (unsigned long long)numel);
    else
        rc = lg_zip_input(in, e, t->offset * w, c->err);
    if (rc != GOLDEN_OK) {
        lg_ingest_input_free(in);
        return rc;
    }
    c->l->count++;
    return GOLDEN_OK;
}

/* Add the tensors of v under c->name (its length is len). */
static int walk(pt_ctx *c, const lg_pk_val *v, size_t len, int depth)
{
    if (depth > PT_MAX_DEPTH)
        return lg_ingest_fail_tensor(c->err, c->path, NULL, "values nested deeper than %d levels (or a cycle)",
                                     PT_MAX_DEPTH);
    if (++c->visits > PT_MAX_VISITS)
        return lg_ingest_fail_tensor(c->err, c->path, NULL, "more than %u values to visit", PT_MAX_VISITS);
    if ((v->kind == LG_PK_TENSOR || (len && v->kind <= LG_PK_BYTES)) && ++c->entries > PT_MAX_ENTRIES)
        return lg_ingest_fail_tensor(c->err, c->path, NULL,
                                     "more than %u tensors and skipped values (shared references "
                                     "reach them by more paths than a state_dict has)", PT_MAX_ENTRIES);
    if (v->kind == LG_PK_TENSOR)
        return add_tensor(c, v);
    if (len && v->kind <= LG_PK_BYTES) { /* a scalar beside tensors (epoch: 3): listed */
        char why[96];
        snprintf(why, sizeof why, "a %s, not a tensor (only tensors are compared)",
                 lg_pk_kind_name(v->kind));
        return lg_ingest_skip(c->l, c->path, c->name, why, c->err);
    }
    if (v->kind != LG_PK_DICT && v->kind != LG_PK_LIST && v->kind != LG_PK_TUPLE)
        return lg_ingest_fail_tensor(c->err, c->path, len ? c->name : NULL,
                                     "a %s, not a tensor: only tensors and state_dicts (dicts, lists, tuples of tensors) are read",
                                     lg_pk_kind_name(v->kind));
    bool dict = v->kind == LG_PK_DICT;
    size_t step = dict ? 2 : 1;
    for (size_t i = 0; i + step - 1 < v->n; i += step) {
        const lg_pk_val *k = dict ? v->items[i] : NULL, *x = v->items[i + step - 1];
        char key[64];
        const char *ks = key;
        size_t kl;
        if (!dict) {
            kl = (size_t)snprintf(key, sizeof key, "%zu", i);
        } else if (k->kind == LG_PK_STR) {
            ks = k->s;
            kl = k->slen;
            if (memchr(ks, '\0', kl))
                return lg_ingest_fail_tensor(c->err, c->path, NULL, "a key holds a NUL byte");
        } else if (k->kind == LG_PK_INT) {
            kl = (size_t)snprintf(key, sizeof key, "%lld", (long long)k->i);
        } else {
            return lg_ingest_fail_tensor(c->err, c->path, len ? c->name : NULL,
                                         "a dict key that is a %s (str or int keys are read)",
                                         lg_pk_kind_name(k->kind));
        }
        size_t nl = len + (len ? 1 : 0) + kl;
        if (nl >= sizeof c->name)
            return lg_ingest_fail_tensor(c->err, c->path, NULL, "a tensor name longer than %d bytes", PT_MAX_NAME - 1);
        if (len)
            c->name[len] = '.';
        memcpy(c->name + len + (len ? 1 : 0), ks, kl);
        c->name[nl] = '\0';
        if (walk(c, x, nl, depth + 1) != GOLDEN_OK)
            return GOLDEN_ERR;
        c->name[len] = '\0';
    }
    return GOLDEN_OK;
}

/* The archive's NAME/ prefix: the one member NAME/data.pkl. TorchScript archives are told. */
static int find_prefix(const lg_zip *z, const char *path, char *prefix, size_t cap, golden_error *err)
{
    const char *found = NULL;
    for (size_t i = 0; i < z->n; i++) {
        const char *nm = z->e[i].name, *sl = strchr(nm, '/');
        if (!sl)
            continue;
        if (strcmp(sl, "/constants.pkl") == 0 || strncmp(sl, "/code/", 6) == 0)
            return golden_fail_what(err, GOLDEN_EUNSUPPORTED, path,
                                    "a TorchScript archive (torch.jit.save): only torch.save files of "
                                    "tensors and state_dicts are read");
        if (strcmp(sl, "/data.pkl") == 0) {
            if (found)
                return golden_fail_what(err, GOLDEN_EINVAL, path, "two data.pkl members ('%s', '%s')", found, nm);
            found = nm;
        }
    }
    if (!found)
        return golden_fail_what(err, GOLDEN_EINVAL, path,
                                "a zip archive without NAME/data.pkl: not a torch.save file");
    size_t n = (size_t)(strchr(found, '/') - found) + 1;
    if (n >= cap)
        return golden_fail_what(err, GOLDEN_EINVAL, path, "archive name too long");
    memcpy(prefix, found, n);
    prefix[n] = '\0';
    return GOLDEN_OK;
}

static int read_byteorder(int fd, const lg_zip *z, const char *path, const char *prefix, bool *big,
                          golden_error *err)
{
    char member[600];
    snprintf(member, sizeof member, "%sbyteorder", prefix);
    const lg_zip_entry *e = lg_zip_find(z, member);
    *big = false;
    if (!e)
        return GOLDEN_OK; /* torch < 2.1 writes none: little-endian */
    unsigned char *b;
    if (lg_zip_slurp(fd, e, path, 16, &b, err) != GOLDEN_OK)
        return GOLDEN_ERR;
    int rc = GOLDEN_OK;
    if (strcmp((char *)b, "big") == 0)
        *big = true;
    else if (strcmp((char *)b, "little") != 0)
        rc = golden_fail_what(err, GOLDEN_ECORRUPT, path, "byteorder member says '%.16s' (little or big)", (char *)b);
    free(b);
    return rc;
}

static int ingest_pt_fd(golden_input_list *l, int fd, uint64_t fsize, const char *path,
                        const char *bare_name, golden_error *err)
{
    lg_zip z;
    if (lg_zip_open(fd, fsize, path, &z, err) != GOLDEN_OK)
        return GOLDEN_ERR;
    char prefix[520];
    unsigned char *pkl = NULL;
    lg_pickle pk = {0};
    char *stem = NULL;
    size_t first = l->count;
    bool big = false;
    const lg_zip_entry *pe = NULL;
    int rc = find_prefix(&z, path, prefix, sizeof prefix, err);
    if (rc == GOLDEN_OK)
        rc = read_byteorder(fd, &z, path, prefix, &big, err);
    if (rc == GOLDEN_OK) {
        char member[600];
        snprintf(member, sizeof member, "%sdata.pkl", prefix);
        pe = lg_zip_find(&z, member);
        rc = lg_zip_slurp(fd, pe, path, PT_MAX_PICKLE, &pkl, err);
    }
    if (rc == GOLDEN_OK)
        rc = lg_unpickle(pkl, (size_t)pe->usize, path, &pk, err);
    if (rc == GOLDEN_OK) {
        pt_ctx c = {.l = l, .fd = fd, .path = path, .z = &z, .prefix = prefix, .big_endian = big, .err = err};
        if (pk.root->kind == LG_PK_TENSOR) {
            const char *base = strrchr(path, '/');
            base = base ? base + 1 : path;
            size_t n = strlen(base);
            if (lg_ingest_has_suffix(base, ".pth"))
                n -= 4;
            else if (lg_ingest_has_suffix(base, ".pt"))
                n -= 3;
            stem = bare_name ? strdup(bare_name) : strndup(base, n);
            if (!stem)
                rc = golden_fail_what(err, GOLDEN_ENOMEM, path, "out of memory");
            else
                snprintf(c.name, sizeof c.name, "%s", stem);
            if (rc == GOLDEN_OK)
                rc = add_tensor(&c, pk.root);
        } else {
            c.name[0] = '\0';
            rc = walk(&c, pk.root, 0, 0);
        }
    }
    if (rc == GOLDEN_OK && l->count == first)
        rc = golden_fail_what(err, GOLDEN_EINVAL, path, "the PyTorch file holds no tensors");
    if (rc != GOLDEN_OK) {
        for (size_t i = first; i < l->count; i++)
            lg_ingest_input_free(&l->items[i]);
        l->count = first;
    }
    free(stem);
    lg_pickle_free(&pk);
    free(pkl);
    lg_zip_free(&z);
    return rc;
}

int lg_ingest_pt_named(golden_input_list *l, const char *path, const char *bare_name,
                       golden_error *err)
{
    int fd;
    uint64_t fsize;
    if (lg_ingest_open_regular(path, &fd, &fsize, err) != GOLDEN_OK)
        return GOLDEN_ERR;
    unsigned char head[4] = {0};
    int rc = fsize >= 4 ? lg_ingest_pread_full(fd, head, 4, 0, path, err) : GOLDEN_OK;
    if (rc == GOLDEN_OK && !lg_zip_magic(head, fsize >= 4 ? 4 : 0)) {
        if (head[0] == 0x80 || (head[0] == 0x8a && head[1] == 0x0a))
            rc = golden_fail_what(err, GOLDEN_EUNSUPPORTED, path,
                                  "the legacy (non-zip) torch.save format of torch < 1.6 is not read: "
                                  "load and save it again with torch >= 1.6");
        else
            rc = golden_fail_what(err, GOLDEN_EINVAL, path, "not a PyTorch file (no zip archive)");
    }
    if (rc == GOLDEN_OK)
        rc = ingest_pt_fd(l, fd, fsize, path, bare_name, err);
    close(fd);
    return rc;
}

int golden_ingest_pt(golden_input_list *l, const char *path, golden_error *err)
{
    return lg_ingest_pt_named(l, path, NULL, err);
}

int lg_ingest_zip_any(golden_input_list *l, const char *path, golden_error *err)
{
    int fd;
    uint64_t fsize;
    if (lg_ingest_open_regular(path, &fd, &fsize, err) != GOLDEN_OK)
        return GOLDEN_ERR;
    lg_zip z;
    int rc = lg_zip_open(fd, fsize, path, &z, err);
    bool pt = false;
    for (size_t i = 0; rc == GOLDEN_OK && i < z.n && !pt; i++) {
        const char *sl = strchr(z.e[i].name, '/');
        pt = sl && (strcmp(sl, "/data.pkl") == 0 || strcmp(sl, "/constants.pkl") == 0);
    }
    if (rc == GOLDEN_OK)
        lg_zip_free(&z);
    close(fd);
    if (rc != GOLDEN_OK)
        return rc;
    return pt ? golden_ingest_pt(l, path, err) : golden_ingest_npz(l, path, err);
}
