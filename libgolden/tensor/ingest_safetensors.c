/* .safetensors inputs: the length-prefixed JSON header, dtypes mapped, data offsets checked
 * against the file and each other (no overlap, no gap, no trailing bytes). */
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
bool lg_ingest_json_uint(const json_t *v, uint64_t *out)
{
    if (!json_is_integer(v) || json_integer_value(v) < 0)
        return false;
    *out = (uint64_t)json_integer_value(v);
    return true;
}

/* A JSON array of non-negative integers as a shape. */
bool lg_ingest_json_shape(const json_t *v, int *rank, uint64_t *shape)
{
    if (!json_is_array(v) || json_array_size(v) > GOLDEN_MAX_RANK)
        return false;
    *rank = (int)json_array_size(v);
    for (int i = 0; i < *rank; i++)
        if (!lg_ingest_json_uint(json_array_get(v, (size_t)i), &shape[i]))
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
    if (lg_ingest_open_regular(path, &fd, &fsize, err) != GOLDEN_OK)
        return GOLDEN_ERR;
    int rc = GOLDEN_ERR;
    char *text = NULL;
    json_t *root = NULL;
    golden_doc *hdoc = NULL;
    size_t first = l->count;
    unsigned char lenb[8];
    if (fsize < 8) {
        golden_fail_what(err, GOLDEN_ECORRUPT, path, "corrupt .safetensors: file too short");
        goto done;
    }
    if (lg_ingest_pread_full(fd, lenb, 8, 0, path, err) != GOLDEN_OK)
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
    if (lg_ingest_pread_full(fd, text, hlen, 8, path, err) != GOLDEN_OK)
        goto done;
    /* the header through the document layer's one strict JSON reader */
    golden_error derr;
    if (golden_doc_load_json(path, text, (size_t)hlen, 1, &hdoc, &derr) != GOLDEN_OK) {
        lg_ingest_fail_tensor(err, path, NULL, "corrupt .safetensors header: %s (at %s)",
                              derr.what, derr.where);
        goto done;
    }
    root = golden_doc_root(hdoc);
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
            !lg_ingest_json_shape(json_object_get(val, "shape"), &rank, shape) ||
            !json_is_array(joff) || json_array_size(joff) != 2 ||
            !lg_ingest_json_uint(json_array_get(joff, 0), &begin) ||
            !lg_ingest_json_uint(json_array_get(joff, 1), &end)) {
            golden_fail_where(err, GOLDEN_ECORRUPT, "corrupt .safetensors header: needs dtype, shape and data_offsets",
                         "%s:%s", path, key);
            goto done;
        }
        golden_dtype dt;
        if (golden_safetensors_dtype(json_string_value(jdt), &dt) != 0) {
            lg_ingest_fail_tensor(err, path, key,
                        "unknown or unsupported dtype '%s'",
                        json_string_value(jdt));
            goto done;
        }
        golden_input *in = lg_ingest_list_push(l, err);
        if (!in || lg_ingest_input_set(in, key, path, path, dt, rank, shape, err) != GOLDEN_OK)
            goto done;
        in->format = GOLDEN_INPUT_SAFETENSORS;
        if (begin > end || end > data_len) {
            lg_ingest_input_free(in);
            lg_ingest_fail_tensor(err, path, key,
                        "data_offsets [%llu, %llu] out of range (data is %llu bytes)",
                        (unsigned long long)begin, (unsigned long long)end,
                        (unsigned long long)data_len);
            goto done;
        }
        if (end - begin != in->nbytes) {
            lg_ingest_input_free(in);
            lg_ingest_fail_tensor(err, path, key,
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
            lg_ingest_fail_tensor(err, path, b->info.name,
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
            lg_ingest_fail_tensor(err, path, t->info.name,
                        "%llu bytes before this tensor belong to no tensor (the format has no gaps)",
                        (unsigned long long)(t->offset - covered));
            goto done;
        }
        if (t->offset + t->nbytes > covered)
            covered = t->offset + t->nbytes;
    }
    if (covered != fsize) {
        lg_ingest_fail_tensor(err, path, NULL, "%llu bytes after the last tensor belong to no tensor",
                    (unsigned long long)(fsize - covered));
        goto done;
    }
    rc = GOLDEN_OK;
done:
    if (rc != GOLDEN_OK) {
        for (size_t i = first; i < l->count; i++)
            lg_ingest_input_free(&l->items[i]);
        l->count = first;
    }
    golden_doc_free(hdoc);
    free(text);
    close(fd);
    return rc;
}
