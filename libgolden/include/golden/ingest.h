/* Input readers of golden-dump: numpy .npy, .safetensors, raw dumps with a
 * calculet-dump-index/v1 index, and folders of those, each tensor served as canonical bytes. */
#ifndef GOLDEN_INGEST_H
#define GOLDEN_INGEST_H
#include "golden/api.h"
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "golden/dtype.h"
#include "golden/error.h"
#include "golden/report.h"
#include "golden/store.h"

#define GOLDEN_SCHEMA_DUMP_INDEX "calculet-dump-index/v1"

typedef enum {
    GOLDEN_INPUT_NPY,
    GOLDEN_INPUT_SAFETENSORS,
    GOLDEN_INPUT_RAW,
    GOLDEN_INPUT_DEFLATED /* a deflated zip entry (.npz, .pt): offset = its first compressed byte */
} golden_input_format;

struct lg_inflate_state; /* private to libgolden */

/* One tensor found in the inputs: where its bytes are and how they are laid out there. */
typedef struct {
    golden_tensor_info info;  /* name, dtype, rank, shape, count, optional attributes;
                                 info.source = the file the bytes come from */
    char *path;               /* file holding the data (as given, or joined to its folder) */
    golden_input_format format;
    uint64_t offset;          /* first data byte in path */
    uint64_t nbytes;          /* info.count * element width */
    bool big_endian;          /* stored big-endian: swapped to little-endian when read */
    bool fortran_order;       /* stored in Fortran order: transposed to C order when read */
    bool has_expected;        /* index entries may carry the expected canonical sha256 */
    char expected_sha256[65];
    /* GOLDEN_INPUT_DEFLATED only: the entry's compressed and uncompressed sizes and CRC-32,
     * and where the tensor's bytes start in the uncompressed data */
    uint64_t zip_csize, zip_usize, zip_skip;
    uint32_t zip_crc;
    struct lg_inflate_state *inflate; /* owned; moved with the input, never copied */
} golden_input;

/* The inputs of one run, in the order they were found. */
typedef struct {
    golden_input *items;
    size_t count, cap;
    /* values passed over (a .pt state_dict's int `epoch` beside its tensors): "FILE:NAME"
     * and why, for the tools to list (never silent) */
    char **skipped, **skipped_why;
    size_t n_skipped;
} golden_input_list;

GOLDEN_API void golden_input_list_init(golden_input_list *l);
GOLDEN_API void golden_input_list_free(golden_input_list *l);

/* Map a numpy descr ('<f4', '>i8', '|b1', ...) to our dtype and byte order; -1 if unknown. */
GOLDEN_API int golden_npy_descr(const char *descr, golden_dtype *dt, bool *big_endian);
/* Map a safetensors dtype name ("BF16", "F8_E4M3", ...) to ours; -1 if unknown. */
GOLDEN_API int golden_safetensors_dtype(const char *name, golden_dtype *dt);

/* Add the tensor of one .npy file (format 1.0, 2.0 or 3.0). `name` NULL = the file's base
 * name without ".npy". The header is checked strictly, and the data size against the shape. */
GOLDEN_API int golden_ingest_npy(golden_input_list *l, const char *path, const char *name,
                      golden_error *err);
/* Add every tensor of a .safetensors file (names kept; __metadata__ ignored). Offsets are
 * checked against the file and against each other (no overlap). */
GOLDEN_API int golden_ingest_safetensors(golden_input_list *l, const char *path, golden_error *err);
/* Add every tensor of a calculet-dump-index/v1 JSON index. Each `file` must stay inside the
 * index's folder (also through symlinks) and hold the tensor's bytes at `offset`. */
GOLDEN_API int golden_ingest_index(golden_input_list *l, const char *path, golden_error *err);
/* Walk a folder recursively in sorted order and add every .npy (named by its path in the
 * folder without ".npy"), .safetensors and .npz and .pt/.pth (their tensors keep their own names,
 * as for .safetensors; a .pt holding one bare tensor is named by its path in the folder
 * without the suffix, as a .npy is) and index (.json whose schema is
 * the dump index). */
GOLDEN_API int golden_ingest_folder(golden_input_list *l, const char *path, golden_error *err);
/* Add every array of a numpy .npz archive (np.savez: stored, np.savez_compressed: deflated):
 * member X.npy is the tensor X. A member that is not .npy, an object array or an empty archive
 * is an error. The zip structure is checked strictly (docs/formats.md). */
GOLDEN_API int golden_ingest_npz(golden_input_list *l, const char *path, golden_error *err);
/* Add the tensors of a PyTorch .pt/.pth file (torch.save's zip format, torch >= 1.6) read
 * through a restricted unpickler that builds only tensors, storages, dicts, lists, tuples,
 * strings and scalars: any other global (a module object, os.system, ...) is refused, never
 * executed. A state_dict gives one tensor per key (nested keys joined with '.', list items as
 * .0, .1, ...); a bare tensor is named by the file's base name. */
GOLDEN_API int golden_ingest_pt(golden_input_list *l, const char *path, golden_error *err);
/* Add one input of any kind, chosen by what it is: folder, .npy, .safetensors, .npz, .pt/.pth
 * (a zip archive by its content, named by its suffix), else index. */
GOLDEN_API int golden_ingest_path(golden_input_list *l, const char *path, golden_error *err);

/* Re-read the tensor named `name` (as found, before golden_input_list_finish) as dtype `to`:
 * for .npy files that carry bf16 or f16 as a uint16 view, or fp8 as a uint8 view, the way
 * PyTorch users save them. The stored bytes must be an unsigned integer of to's width
 * (u16 -> bf16/f16, u8 -> fp8_e4m3fn/fp8_e5m2/bool); the canonical bytes, and so sha256,
 * stay the same. A name that matches no tensor, or another stored type, is an error. */
GOLDEN_API int golden_input_list_retype(golden_input_list *l, const char *name, golden_dtype to,
                             golden_error *err);

/* Put every name under `prefix` (e.g. "run1/"), then check every name against the contract
 * and reject duplicates (naming both sources). prefix may be NULL. */
GOLDEN_API int golden_input_list_finish(golden_input_list *l, const char *prefix, golden_error *err);

/* Called with consecutive pieces of a tensor's canonical bytes (whole elements each); the data
 * is only valid during the call. Return 0 to go on, -1 (err filled) to stop. */
typedef int (*golden_chunk_fn)(void *ctx, const void *data, size_t n, golden_error *err);

/* Stream one input's canonical bytes (little-endian, C order) through fn in pieces of at most
 * `chunk` bytes (0 = 4 MiB). Memory stays bounded by a few chunks whatever the tensor's size:
 * byte order is swapped in place, Fortran order is transposed tile by tile (docs/formats.md). */
GOLDEN_API int golden_input_read(const golden_input *in, size_t chunk, golden_chunk_fn fn, void *ctx,
                      golden_error *err);

/* Write one input as a tensor of w: begin, stream its bytes, end, then check the index's
 * expected sha256 (if any) against the hash the writer computed. Errors name the source and
 * the tensor. `done` (may be NULL) is advanced by the bytes written and reported to `prog`
 * (may be NULL). */
GOLDEN_API int golden_input_write(const golden_input *in, golden_writer *w, golden_progress *prog,
                       unsigned long long *done, golden_error *err);

#endif
