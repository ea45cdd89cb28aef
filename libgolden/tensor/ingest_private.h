/* What golden-dump's input readers (.npy, .safetensors, dump index, folders, streaming) share
 * inside libgolden (not installed): the input list, file access, errors, JSON numbers. */
#ifndef GOLDEN_TENSOR_INGEST_PRIVATE_H
#define GOLDEN_TENSOR_INGEST_PRIVATE_H
#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>
#include "golden/ingest.h"
#include "util/str.h"

#define NPY_MAX_HEADER (1u << 20)
#define ST_MAX_HEADER (100u << 20) /* the safetensors format's own limit */
#define DEFAULT_CHUNK (1u << 20) /* the writer's buffer size (store_writer.c says why) */

/* Fail with where = "file:tensor" (or "file", tensor NULL) and a formatted what. */
int lg_ingest_fail_tensor(golden_error *err, const char *file, const char *tensor,
                              const char *fmt, ...) __attribute__((format(printf, 4, 5)));
/* Free what an input owns (not the input itself). */
void lg_ingest_input_free(golden_input *in);
/* A zeroed slot at the end of l (not counted until the caller increments l->count). */
golden_input *lg_ingest_list_push(golden_input_list *l, golden_error *err);
/* Note that value NAME of PATH was passed over and why (l->skipped); 0 or ENOMEM. */
int lg_ingest_skip(golden_input_list *l, const char *path, const char *name, const char *why,
                   golden_error *err);
/* Fill the common fields of a new input; on failure the slot is not kept. */
int lg_ingest_input_set(golden_input *in, const char *name, const char *path,
                            const char *where, golden_dtype dt, int rank, const uint64_t *shape,
                            golden_error *err);
/* Open a regular file (a FIFO or device is refused without blocking) and give its size. */
int lg_ingest_open_regular(const char *path, int *fd_out, uint64_t *size, golden_error *err);
/* The start of every chunked read of an input: chunk (0: DEFAULT_CHUNK) rounded down to whole
 * elements (at least one), the file opened as lg_ingest_open_regular does and checked to
 * hold `stored` bytes at in->offset (nbytes raw, zip_csize deflated). */
int lg_ingest_open_input(const golden_input *in, uint64_t stored, size_t *chunk, int *fd_out,
                         golden_error *err);
/* Read exactly n bytes at off; a short file is an error naming path. */
int lg_ingest_pread_full(int fd, void *buf, size_t n, uint64_t off, const char *path,
                             golden_error *err);
/* A parsed .npy header. */
typedef struct {
    golden_dtype dt;
    bool big, fortran;
    int rank;
    uint64_t shape[GOLDEN_MAX_RANK];
    uint64_t data_off; /* header length: the data's first byte */
} lg_npy_header;
/* From the first min(total, 12) bytes of a .npy of total bytes: the header's full length. */
int lg_npy_prefix(const unsigned char *pre, uint64_t total, const char *path, uint64_t *data_off,
                  golden_error *err);
/* Parse the whole header buf[0, data_off) (data_off from lg_npy_prefix). */
int lg_npy_header_parse(const unsigned char *buf, uint64_t data_off, const char *path,
                        lg_npy_header *h, golden_error *err);
/* golden_ingest_pt with the name of a bare tensor given (NULL: the file's base name). */
int lg_ingest_pt_named(golden_input_list *l, const char *path, const char *bare_name,
                       golden_error *err);
/* A zip archive of unknown suffix: a .pt when it holds a NAME/data.pkl, else an .npz. */
int lg_ingest_zip_any(golden_input_list *l, const char *path, golden_error *err);
/* the one suffix test (util/str.h), under the name this module's files call */
#define lg_ingest_has_suffix lg_has_suffix
/* A JSON non-negative integer / a JSON shape (list of at most GOLDEN_MAX_RANK of them). */
bool lg_ingest_json_uint(const json_t *v, uint64_t *out);
bool lg_ingest_json_shape(const json_t *v, int *rank, uint64_t *shape);

#endif
