/* What the golden store's writer, reader and attribute code share inside libgolden (not
 * installed): the HDF5 lock naming a file, error capture, stored types, selections, attributes. */
#ifndef GOLDEN_TENSOR_STORE_PRIVATE_H
#define GOLDEN_TENSOR_STORE_PRIVATE_H
#include <hdf5.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "golden/dtype.h"
#include "golden/error.h"

/* Take the HDF5 lock, naming the file HDF5 is about to work on (for the crash guard). */
void lg_store_lock_file(const char *path);
/* Fail with HDF5's outermost description appended ("what (HDF5: ...)"). Lock held. */
int lg_store_hdf5_fail(golden_error *err, const char *where, const char *what);
/* The HDF5 type canonical bytes of dt are stored as (a new id to close). Lock held. */
hid_t lg_store_type(golden_dtype dt);
/* Select elements [first, first+n) of a C-order dataspace. Lock held. */
int lg_store_select(hid_t space, int rank, const uint64_t *dims, uint64_t first, uint64_t n);
/* 1 when s is well-formed UTF-8 (no overlongs, surrogates or code points past U+10FFFF). */
int lg_store_utf8_valid(const char *s);
/* Name of the committed bf16 datatype the writer stores (h5dump/HDFView show it by name). */
#define GOLDEN_BF16_TYPE_NAME "bfloat16"
/* Attribute storage of tensors written now (H5Pset_attr_phase_change): compact, in the
 * object header, up to this many attributes; dense (heap and B-tree) past it. */
#define LG_ATTR_MAX_COMPACT 64
#define LG_ATTR_MIN_DENSE 48

/* Run fn(ctx, err) (HDF5 work, which it does without taking the lock) once in a child process
 * with GOLDEN_PRECHECK_CPU_SECONDS of CPU, 4 GiB more address space and
 * GOLDEN_PRECHECK_WALL_SECONDS of time: GOLDEN_OK when it succeeded there, else the error it
 * returned, or a corrupt-file error naming path when it crashed, spun or was killed.
 * Call without the lock. */
int lg_store_isolated(const char *path, int (*fn)(void *ctx, golden_error *err), void *ctx,
                          golden_error *err);

/* What a child hands back: bytes appended by lg_blob_put (oom set when one failed). */
typedef struct {
    unsigned char *p;
    size_t n, cap;
    bool oom;
} lg_blob;
void lg_blob_put(lg_blob *b, const void *data, size_t n);
void lg_blob_free(lg_blob *b);
/* The most a child may hand back (a larger answer is a corrupt file's). */
#define LG_ISOLATED_MAX_BYTES (1ull << 30)
/* lg_store_isolated, and the child's answer: fn appends to its blob, which the parent gets
 * in *out (emptied first; the caller frees it) when fn succeeded there. The parent must check
 * every byte of it: it comes from a process that parsed a file that may be hostile. */
int lg_store_isolated_blob(const char *path, int (*fn)(void *ctx, lg_blob *out, golden_error *err),
                           void *ctx, lg_blob *out, golden_error *err);

/* Attributes (lock held): write scalar attributes (strings fixed-length, replacing any of
 * the same name); 0 or -1. */
int lg_attr_write_str(hid_t loc, const char *name, const char *value);
int lg_attr_write_u64(hid_t loc, const char *name, uint64_t v);
int lg_attr_write_i64(hid_t loc, const char *name, int64_t v);
int lg_attr_write_f64(hid_t loc, const char *name, double v);
/* The value of an open scalar string attribute (fixed or variable length) as a new string;
 * NULL when it is not a scalar string, cannot be read, or holds a NUL byte. */
char *lg_attr_str_of(hid_t a);
/* A scalar string attribute by name; NULL if absent or not a string. */
char *lg_attr_read_str(hid_t loc, const char *name);
/* An open attribute holding one number, converted to memtype: 1 = read, -1 = not a scalar
 * number. */
int lg_attr_num_of(hid_t a, hsize_t data_size, hid_t memtype, void *out);

#endif
