/* SHA-256 of what an open descriptor reads from its position to its end (util/hash.c, the loop
 * golden_sha256_file uses), for a caller that opened the file itself (openat, O_NOFOLLOW). */
#ifndef LG_UTIL_SHA256_FD_H
#define LG_UTIL_SHA256_FD_H

#include "golden/error.h"

/* hex: the digest; *bytes: how many bytes were hashed. path only names the file in errors. */
int lg_sha256_fd(int fd, const char *path, char hex[65], long long *bytes, golden_error *err);

#endif
