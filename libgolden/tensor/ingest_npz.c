/* numpy .npz inputs (np.savez: stored members, np.savez_compressed: deflated): a zip archive
 * whose every member X.npy is the tensor X. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "golden/ingest.h"
#include "tensor/ingest_private.h"
#include "tensor/zip_private.h"

/* Add the .npy member e of the archive at path as the tensor named after it. */
static int npz_member(golden_input_list *l, int fd, const char *path, const lg_zip_entry *e,
                      golden_error *err)
{
    char where[1024];
    snprintf(where, sizeof where, "%.500s:%.400s", path, e->name);
    unsigned char pre[12];
    size_t np = (size_t)(e->usize < 12 ? e->usize : 12);
    uint64_t data_off;
    if (lg_zip_read(fd, e, path, pre, np, err) != GOLDEN_OK ||
        lg_npy_prefix(pre, e->usize, where, &data_off, err) != GOLDEN_OK)
        return GOLDEN_ERR;
    unsigned char *head = malloc(data_off);
    if (!head)
        return golden_fail_what(err, GOLDEN_ENOMEM, path, "out of memory");
    lg_npy_header h;
    int rc = lg_zip_read(fd, e, path, head, (size_t)data_off, err);
    if (rc == GOLDEN_OK)
        rc = lg_npy_header_parse(head, data_off, where, &h, err);
    free(head);
    if (rc != GOLDEN_OK)
        return rc;
    char *name = strndup(e->name, strlen(e->name) - 4);
    if (!name)
        return golden_fail_what(err, GOLDEN_ENOMEM, path, "out of memory");
    golden_input *in = lg_ingest_list_push(l, err);
    rc = in ? lg_ingest_input_set(in, name, path, path, h.dt, h.rank, h.shape, err) : GOLDEN_ERR;
    free(name);
    if (rc != GOLDEN_OK)
        return rc;
    in->format = GOLDEN_INPUT_NPY;
    in->big_endian = h.big;
    in->fortran_order = h.fortran && h.rank > 1;
    if (e->usize - data_off != in->nbytes) {
        lg_ingest_fail_tensor(err, path, in->info.name,
                              "data size %llu bytes does not match shape and dtype (%llu bytes)",
                              (unsigned long long)(e->usize - data_off), (unsigned long long)in->nbytes);
        lg_ingest_input_free(in);
        return GOLDEN_ERR;
    }
    if (lg_zip_input(in, e, data_off, err) != GOLDEN_OK) {
        lg_ingest_input_free(in);
        return GOLDEN_ERR;
    }
    l->count++;
    return GOLDEN_OK;
}

int golden_ingest_npz(golden_input_list *l, const char *path, golden_error *err)
{
    int fd;
    uint64_t fsize;
    if (lg_ingest_open_regular(path, &fd, &fsize, err) != GOLDEN_OK)
        return GOLDEN_ERR;
    lg_zip z;
    size_t first = l->count;
    int rc = lg_zip_open(fd, fsize, path, &z, err);
    if (rc != GOLDEN_OK) {
        close(fd);
        return rc;
    }
    for (size_t i = 0; i < z.n && rc == GOLDEN_OK; i++) {
        const lg_zip_entry *e = &z.e[i];
        if (!lg_ingest_has_suffix(e->name, ".npy") || strlen(e->name) == 4)
            rc = golden_fail_what(err, GOLDEN_EINVAL, path,
                                  ".npz member '%s' is not a .npy array (an .npz holds only X.npy members)",
                                  e->name);
        else
            rc = npz_member(l, fd, path, e, err);
    }
    if (rc == GOLDEN_OK && l->count == first)
        rc = golden_fail_what(err, GOLDEN_EINVAL, path, ".npz archive holds no arrays");
    if (rc != GOLDEN_OK) {
        for (size_t i = first; i < l->count; i++)
            lg_ingest_input_free(&l->items[i]);
        l->count = first;
    }
    lg_zip_free(&z);
    close(fd);
    return rc;
}
