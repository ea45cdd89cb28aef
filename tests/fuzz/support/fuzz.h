/* Shared helpers of the libFuzzer harnesses: each input is written to a file with the extension
 * the parser expects (most entry points take paths), in a folder private to the process. */
#ifndef GOLDEN_FUZZ_H
#define GOLDEN_FUZZ_H
#include <stddef.h>
#include <stdint.h>

#include "golden/error.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Write data to DIR/input.EXT (DIR made once per process) and return the path (static buffer),
 * or NULL when the file cannot be written. */
const char *fuzz_write_file(const uint8_t *data, size_t size, const char *ext);

/* The private folder of this process (made on first use). */
const char *fuzz_dir(void);

/* Unpack a folder from the input and return its path (static buffer), or NULL when nothing
 * could be written. The input is a text container (tests/fuzz/support/pack-folder):
 *     @@ relative/path\n<bytes of the file up to the next "\n@@ " line>
 * A path is at most 4 components of [A-Za-z0-9._-] (never "." or ".."), so a mutated input can
 * never write outside the folder; a bad path skips its file. The folder is emptied first. */
const char *fuzz_unpack_folder(const uint8_t *data, size_t size);

/* A golden_chunk_fn that touches every 97th byte of each chunk into the unsigned at ctx (so
 * the read is not optimized away and a sanitizer sees every chunk); always 0. */
int fuzz_sink(void *ctx, const void *data, size_t n, golden_error *err);

#endif
