/* SHA-256 through OpenSSL EVP, streamed, with lowercase-hex digests. */
#ifndef GOLDEN_HASH_H
#define GOLDEN_HASH_H
#include "golden/api.h"
#include <stddef.h>
#include "golden/error.h"

typedef struct golden_sha256 golden_sha256;

/* A new streaming context; NULL with err filled on failure. */
GOLDEN_API golden_sha256 *golden_sha256_new(golden_error *err);
GOLDEN_API int golden_sha256_update(golden_sha256 *h, const void *data, size_t n, golden_error *err);
/* Finish into hex[65] (64 lowercase hex + NUL); the context may then be reset and reused. */
GOLDEN_API int golden_sha256_final(golden_sha256 *h, char hex[65], golden_error *err);
GOLDEN_API int golden_sha256_reset(golden_sha256 *h, golden_error *err);
GOLDEN_API void golden_sha256_free(golden_sha256 *h);

/* One-shot digest of a buffer. */
GOLDEN_API int golden_sha256_buffer(const void *data, size_t n, char hex[65], golden_error *err);
/* Digest of a whole file, streamed in 1 MiB reads. */
GOLDEN_API int golden_sha256_file(const char *path, char hex[65], golden_error *err);
/* Digests of many files, spread over `threads` workers (0 = number of online cores).
 * hexes[i] receives file i's digest; after a failure no new file starts, and the failure of
 * the lowest-numbered file among those that failed is returned in err (GOLDEN_ERR). */
GOLDEN_API int golden_sha256_files(const char *const *paths, size_t n, char (*hexes)[65], int threads,
                        golden_error *err);
/* True when s is 64 lowercase hex digits. */
GOLDEN_API int golden_is_sha256_hex(const char *s);

#endif
