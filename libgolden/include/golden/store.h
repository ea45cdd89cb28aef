/* The calculet-golden/v1 HDF5 file: a streaming writer that hashes and measures each tensor
 * as it is written, and a reader that serves any linear element range of a tensor.
 * The serial HDF5 library is not thread-safe: every HDF5 call in libgolden goes through
 * golden_hdf5_lock(); contiguous datasets are read with pread() outside the lock. */
#ifndef GOLDEN_STORE_H
#define GOLDEN_STORE_H
#include "golden/api.h"
#include <stdbool.h>
#include <stdint.h>
#include "golden/dtype.h"
#include "golden/error.h"
#include "golden/stats.h"

#define GOLDEN_SCHEMA_GOLDEN "calculet-golden/v1"
#define GOLDEN_MAX_RANK 32

/* What the contract's dataset attributes say about one tensor. */
typedef struct {
    char *name;                       /* without the leading '/' */
    golden_dtype dtype;
    int rank;                         /* 0 = scalar */
    uint64_t shape[GOLDEN_MAX_RANK];
    uint64_t count;                   /* product of shape (1 for a scalar) */
    uint64_t count_attr;              /* the `count` attribute as stored (reader only) */
    char sha256[65];
    char tensor_digest[65];           /* "" when the golden has none (written before it existed) */
    uint64_t nan_count, posinf_count, neginf_count, zero_count;
    double min, max, mean, std;
    bool has_layer, has_chip, has_step;
    int64_t layer, chip, step;
    char *op_family;                  /* NULL when absent */
    char *source;                     /* NULL when absent */
} golden_tensor_info;

/* Free the strings a golden_tensor_info owns (name, op_family, source) and set them to NULL:
 * for infos filled by golden_writer_end or built by readers; never for reader-owned infos. */
GOLDEN_API void golden_tensor_info_clear(golden_tensor_info *t);

/* Validate a tensor name per the contract (UTF-8, non-empty, no empty/./.. component, and no
 * control character, which would let a name print a fake line in a tool's output);
 * returns 0 or -1 with err saying why. */
GOLDEN_API int golden_tensor_name_check(const char *name, golden_error *err);
/* Product of shape into *count; -1 (err filled) when it overflows uint64 or count*width
 * overflows size limits. */
GOLDEN_API int golden_shape_count(int rank, const uint64_t *shape, golden_dtype dt, uint64_t *count,
                       golden_error *err);

/* The tensor_digest attribute: SHA-256 of "calculet-tensor/v1\n" DTYPE "\n" SHAPE "\n" SHA256
 * "\n", SHAPE the dimensions in decimal joined by "," (empty for a scalar), SHA256 the data's
 * hash: unlike sha256, which binds the bytes only, it changes when the dtype or the shape is
 * relabelled. Needs t->dtype, rank, shape and sha256. */
GOLDEN_API int golden_tensor_digest(const golden_tensor_info *t, char hex[65], golden_error *err);

/* Serialize HDF5 use across threads. */
GOLDEN_API void golden_hdf5_lock(void);
GOLDEN_API void golden_hdf5_unlock(void);

/* ---- writer ---- */
typedef struct golden_writer golden_writer;

/* How golden_writer_open writes. Versioned: start from GOLDEN_WRITER_OPTS_INIT (an unknown
 * version is refused with GOLDEN_EINVAL; a NULL pointer means the defaults). */
#define GOLDEN_WRITER_OPTS_VERSION 1u
typedef struct {
    unsigned version; /* GOLDEN_WRITER_OPTS_VERSION */
    bool force;       /* replace an existing file */
    int gzip;         /* 0 = contiguous, 1..9 = chunked + deflate */
    const char *producer; /* e.g. "golden-dump 0.1.0" */
    int threads;      /* hashing and statistics beside the writing thread: 1 = all on the
                         caller's thread, 0 = lg_cpu_count(); the file is the same either way */
} golden_writer_opts;
#define GOLDEN_WRITER_OPTS_INIT {.version = GOLDEN_WRITER_OPTS_VERSION}

/* Create a temporary file beside `path`; nothing appears at `path` until commit. */
GOLDEN_API int golden_writer_open(const char *path, const golden_writer_opts *opts, golden_writer **out,
                       golden_error *err);
/* A root string attribute (--meta KEY=VALUE). */
GOLDEN_API int golden_writer_meta(golden_writer *w, const char *key, const char *value, golden_error *err);
/* Start a tensor: name, dtype, rank, shape and the optional attributes are taken from info
 * (sha256/statistics fields are ignored and computed). Fails on a duplicate name. */
GOLDEN_API int golden_writer_begin(golden_writer *w, const golden_tensor_info *info, golden_error *err);
/* Append the next bytes of the tensor, canonical layout (little-endian, C order); any size,
 * not necessarily a whole number of elements. */
GOLDEN_API int golden_writer_write(golden_writer *w, const void *data, size_t nbytes, golden_error *err);
/* Finish the tensor: checks the byte count, writes sha256 and statistics attributes.
 * If `out` is non-NULL it receives the computed sha256 and statistics, with its own copies
 * of the strings: release them with golden_tensor_info_clear. */
GOLDEN_API int golden_writer_end(golden_writer *w, golden_tensor_info *out, golden_error *err);
/* The worker count the writer was opened with (1 = no helper threads). */
GOLDEN_API int golden_writer_threads(const golden_writer *w);
/* Close the file and rename it into place. */
GOLDEN_API int golden_writer_commit(golden_writer *w, golden_error *err);
/* Drop everything written (also safe after a failure); frees w. */
GOLDEN_API void golden_writer_abort(golden_writer *w);

/* ---- reader ---- */
typedef struct golden_reader golden_reader;

/* Open a golden file, check its schema attribute, and load every tensor's attributes
 * (tensors sorted by name). Missing or malformed attributes are an error naming the tensor;
 * a dataset whose stored type is not the one its dtype names, that has a NULL dataspace or
 * unwritten storage, a soft/external link, an object with two names, or a walk that does not
 * account for every object, is an error (docs/hdf5-trust.md). The metadata is walked first in
 * a child process with CPU and memory limits, unless GOLDEN_READ_TRUSTED. */
GOLDEN_API int golden_reader_open(const char *path, golden_reader **out, golden_error *err);
/* Flags of golden_reader_open_flags. */
#define GOLDEN_READ_DATA_ONLY 1u /* check that sha256 and the statistics attributes are present
                                    but do not read them (sha256 is "", min/max/mean/std NaN,
                                    counts 0): for tools that judge the data itself, such as
                                    golden-diff; 30% fewer instructions to open
                                    many small tensors */
#define GOLDEN_READ_TRUSTED 2u  /* skip the isolated first walk (below): only for files this
                                    process wrote itself */
#define GOLDEN_READ_FOREIGN 4u /* also read what engineers have: a plain HDF5 file (any tree
                                    of numeric datasets, attributes not needed), .npy,
                                    .safetensors, a dump index, whatever golden_ingest_path
                                    reads (.npz, .pt), and folders of these and of goldens;
                                    the kind is told by content (magic bytes). Such tensors
                                    have no stored sha256 or statistics (golden_reader_stored
                                    false: sha256 "", min/max/mean/std NaN); files and datasets
                                    passed over are listed (golden_reader_skipped_at) */
/* Limits of the first walk over a file's metadata, which runs in a child process (a crash, a
 * spin or a huge allocation inside libhdf5 ends there and is reported as a corrupt file). */
#define GOLDEN_PRECHECK_CPU_SECONDS 10
#define GOLDEN_PRECHECK_WALL_SECONDS 30
GOLDEN_API int golden_reader_open_flags(const char *path, unsigned flags, golden_reader **out,
                             golden_error *err);
GOLDEN_API void golden_reader_close(golden_reader *r);
GOLDEN_API const char *golden_reader_path(const golden_reader *r);
GOLDEN_API size_t golden_reader_count(const golden_reader *r);
GOLDEN_API const golden_tensor_info *golden_reader_tensor(const golden_reader *r, size_t i);
/* Whether tensor i carries a stored sha256 and statistics (a golden's); false for the
 * tensors of foreign inputs (GOLDEN_READ_FOREIGN), which have none to check. */
GOLDEN_API bool golden_reader_stored(const golden_reader *r, size_t i);
/* What tensor i was read from: "golden", "hdf5" (plain), "npy", "safetensors", "raw" (a dump
 * index), "archive" (what golden_ingest_path reads beyond those: .npz, .pt). */
GOLDEN_API const char *golden_reader_format(const golden_reader *r, size_t i);
/* True when the input is a folder (GOLDEN_READ_FOREIGN). */
GOLDEN_API bool golden_reader_is_folder(const golden_reader *r);
/* Files of a folder and datasets of a plain HDF5 file that were passed over, each with why
 * (hidden, text, not a numeric tensor, ...): path and why valid until golden_reader_close. */
GOLDEN_API size_t golden_reader_skipped_count(const golden_reader *r);
GOLDEN_API void golden_reader_skipped_at(const golden_reader *r, size_t i, const char **path,
                                         const char **why);
/* Index of a tensor by name, or -1. */
GOLDEN_API long golden_reader_find(const golden_reader *r, const char *name);
/* Root attribute value (string attributes only), or NULL. */
GOLDEN_API const char *golden_reader_meta(const golden_reader *r, const char *key);
GOLDEN_API size_t golden_reader_meta_count(const golden_reader *r);
GOLDEN_API void golden_reader_meta_at(const golden_reader *r, size_t i, const char **key, const char **value);

/* Read elements [first, first + n) of tensor i in C order into buf as canonical bytes.
 * Safe to call from several threads at once. */
GOLDEN_API int golden_reader_read(golden_reader *r, size_t i, uint64_t first, uint64_t n, void *buf,
                       golden_error *err);

/* Recompute sha256 and statistics of tensor i from its data in one streamed pass. */
GOLDEN_API int golden_reader_recompute(golden_reader *r, size_t i, char sha256[65], golden_stats *stats,
                            golden_error *err);

#endif
