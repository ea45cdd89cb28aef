/* The zip container under .npz and PyTorch .pt/.pth inputs (inside libgolden, not installed):
 * our own central-directory parser (docs/formats.md says why not libzip), stored entries served
 * by file offset, deflated ones inflated through zlib in bounded chunks. */
#ifndef GOLDEN_TENSOR_ZIP_PRIVATE_H
#define GOLDEN_TENSOR_ZIP_PRIVATE_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "golden/ingest.h"

#define LG_ZIP_MAX_ENTRIES (1u << 20)
#define LG_ZIP_MAX_CDIR (256u << 20)     /* central directory bytes */
#define LG_ZIP_MAX_RATIO 1100u          /* deflate cannot do better than 1032:1 */
#define LG_ZIP_STORED 0
#define LG_ZIP_DEFLATED 8

typedef struct {
    char *name;
    int method;          /* LG_ZIP_STORED or LG_ZIP_DEFLATED */
    uint64_t header_off; /* local file header */
    uint64_t data_off;   /* first (compressed) data byte */
    uint64_t csize, usize;
    uint32_t crc;
} lg_zip_entry;

typedef struct {
    lg_zip_entry *e; /* in central-directory order */
    size_t n;
} lg_zip;

/* True when the file starts with a zip local header ("PK\3\4") or is an empty archive. */
bool lg_zip_magic(const unsigned char *head, size_t n);
/* Parse the central directory of the open file fd (size fsize): every offset and size checked
 * against the file and against each other (no overlap), ZIP64 fields where present, names
 * checked (no absolute path, no "..", no duplicates), local headers matched. */
int lg_zip_open(int fd, uint64_t fsize, const char *path, lg_zip *z, golden_error *err);
void lg_zip_free(lg_zip *z);
const lg_zip_entry *lg_zip_find(const lg_zip *z, const char *name);
/* The first n uncompressed bytes of an entry into buf (n <= e->usize). A whole deflated entry
 * read this way also has its CRC-32 checked. */
int lg_zip_read(int fd, const lg_zip_entry *e, const char *path, void *buf, size_t n,
                golden_error *err);
/* A whole entry into a new buffer (NUL added after it), refused above max bytes. */
int lg_zip_slurp(int fd, const lg_zip_entry *e, const char *path, uint64_t max,
                 unsigned char **out, golden_error *err);
/* Turn a filled-in input into one served from entry e, its data starting skip bytes into the
 * entry: stored entries become a plain offset in the file (format unchanged), deflated ones
 * GOLDEN_INPUT_DEFLATED. Fails when the tensor does not fit in the entry. */
int lg_zip_input(golden_input *in, const lg_zip_entry *e, uint64_t skip, golden_error *err);

/* Stream a GOLDEN_INPUT_DEFLATED input's canonical bytes (golden_input_read's contract). */
int lg_ingest_deflated_read(const golden_input *in, size_t chunk, golden_chunk_fn fn, void *ctx,
                            golden_error *err);
/* Free a deflated input's cursor (lg_ingest_input_free calls it). */
void lg_ingest_deflated_free(golden_input *in);
/* n stored bytes (as pread at in->offset + byte_off would give for a stored input: byte order
 * not swapped) of a GOLDEN_INPUT_DEFLATED input, byte_off counted from the tensor's first byte.
 *
 * Cost: deflate has no random access. Each input keeps one cursor (an inflate stream, guarded
 * by a mutex so callers may share the input between threads); a read at or after the cursor
 * continues from it (inflating and discarding the gap), a read before it restarts from the
 * entry's first byte. Reads in increasing order therefore cost one pass over the entry in all;
 * reads in any other order cost up to one pass each. Parallel readers of one input serialize
 * on the mutex. When a read reaches the tensor's last byte the rest of the entry is inflated
 * and its CRC-32 checked, so a damaged entry fails on the last read at the latest. */
int lg_ingest_deflated_pread(const golden_input *in, uint64_t byte_off, size_t n, void *buf,
                             golden_error *err);

#endif
