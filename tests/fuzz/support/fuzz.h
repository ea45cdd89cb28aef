/* Shared helpers of the libFuzzer harnesses: each input is written to a file with the extension
 * the parser expects (most entry points take paths), in a folder private to the process. */
#ifndef GOLDEN_FUZZ_H
#define GOLDEN_FUZZ_H
#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Write data to DIR/input.EXT (DIR made once per process) and return the path (static buffer),
 * or NULL when the file cannot be written. */
const char *fuzz_write_file(const uint8_t *data, size_t size, const char *ext);

/* The private folder of this process (made on first use). */
const char *fuzz_dir(void);

#endif
