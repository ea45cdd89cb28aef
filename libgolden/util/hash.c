/* SHA-256 through OpenSSL EVP: streamed contexts, files in 1 MiB reads, and many files
 * hashed on the library's pool (lg_parallel_for, one file per item). */
#include "golden/hash.h"
#include "golden/report.h"

#include <errno.h>
#include <fcntl.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/pool.h"
#include "util/sha256_fd.h"

struct golden_sha256 {
    EVP_MD_CTX *ctx;
};

/* OpenSSL failed. Its built-in SHA-256 has no other way to fail than an allocation, and
 * OpenSSL 3 reports one as a malloc failure, an "initialization error" of the digest's
 * context, or nothing at all: those are GOLDEN_ENOMEM; anything else is GOLDEN_EINTERNAL (a
 * library below us misbehaved). The error queue is emptied either way. */
static int ssl_fail(golden_error *err, const char *what)
{
    unsigned long e = ERR_peek_last_error();
    ERR_clear_error();
    int reason = ERR_GET_REASON(e);
    if (e == 0 || reason == ERR_R_MALLOC_FAILURE ||
        (ERR_GET_LIB(e) == ERR_LIB_EVP && reason == EVP_R_INITIALIZATION_ERROR))
        return golden_fail_what(err, GOLDEN_ENOMEM, NULL, "out of memory (%s)", what);
    return golden_fail_what(err, GOLDEN_EINTERNAL, NULL, "%s", what);
}

golden_sha256 *golden_sha256_new(golden_error *err)
{
    golden_sha256 *h = calloc(1, sizeof *h);
    if (!h) {
        golden_fail_what(err, GOLDEN_ENOMEM, NULL, "out of memory");
        return NULL;
    }
    h->ctx = EVP_MD_CTX_new();
    if (!h->ctx) {
        golden_sha256_free(h);
        golden_fail_what(err, GOLDEN_ENOMEM, NULL, "out of memory");
        return NULL;
    }
    if (EVP_DigestInit_ex(h->ctx, EVP_sha256(), NULL) != 1) {
        golden_sha256_free(h);
        ssl_fail(err, "OpenSSL could not start a SHA-256 digest");
        return NULL;
    }
    return h;
}

int golden_sha256_update(golden_sha256 *h, const void *data, size_t n, golden_error *err)
{
    if (n && EVP_DigestUpdate(h->ctx, data, n) != 1)
        return ssl_fail(err, "OpenSSL SHA-256 update failed");
    return GOLDEN_OK;
}

int golden_sha256_final(golden_sha256 *h, char hex[65], golden_error *err)
{
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned len = 0;
    if (EVP_DigestFinal_ex(h->ctx, md, &len) != 1 || len != 32)
        return ssl_fail(err, "OpenSSL SHA-256 final failed");
    static const char digits[] = "0123456789abcdef";
    for (unsigned i = 0; i < 32; i++) {
        hex[2 * i] = digits[md[i] >> 4];
        hex[2 * i + 1] = digits[md[i] & 15];
    }
    hex[64] = '\0';
    return GOLDEN_OK;
}

int golden_sha256_reset(golden_sha256 *h, golden_error *err)
{
    if (EVP_DigestInit_ex(h->ctx, EVP_sha256(), NULL) != 1)
        return ssl_fail(err, "OpenSSL could not restart a SHA-256 digest");
    return GOLDEN_OK;
}

void golden_sha256_free(golden_sha256 *h)
{
    if (!h)
        return;
    EVP_MD_CTX_free(h->ctx);
    free(h);
}

int golden_sha256_buffer(const void *data, size_t n, char hex[65], golden_error *err)
{
    golden_sha256 *h = golden_sha256_new(err);
    if (!h)
        return GOLDEN_ERR;
    int rc = golden_sha256_update(h, data, n, err);
    if (rc == GOLDEN_OK)
        rc = golden_sha256_final(h, hex, err);
    golden_sha256_free(h);
    return rc;
}

static int hash_fd(int fd, const char *path, golden_sha256 *h, unsigned char *buf, size_t cap,
                   char hex[65], long long *bytes, golden_error *err)
{
    if (bytes)
        *bytes = 0;
    for (;;) {
        ssize_t got = read(fd, buf, cap);
        if (got < 0) {
            if (errno == EINTR)
                continue;
            return golden_fail_what(err, golden_code_from_errno(errno), path, "cannot read: %s", strerror(errno));
        }
        if (got == 0)
            break;
        if (bytes)
            *bytes += got;
        if (golden_sha256_update(h, buf, (size_t)got, err) != GOLDEN_OK)
            return GOLDEN_ERR;
    }
    return golden_sha256_final(h, hex, err);
}

#define FILE_BUF (1u << 20)

int golden_sha256_file(const char *path, char hex[65], golden_error *err)
{
    int fd = golden_infile_open(path, 0, err); /* a FIFO is refused, never waited on */
    if (fd < 0)
        return GOLDEN_ERR;
    unsigned char *buf = malloc(FILE_BUF);
    golden_sha256 *h = buf ? golden_sha256_new(err) : NULL;
    int rc = GOLDEN_ERR;
    if (!buf)
        golden_fail_what(err, GOLDEN_ENOMEM, path, "out of memory");
    else if (h)
        rc = hash_fd(fd, path, h, buf, FILE_BUF, hex, NULL, err);
    close(fd);
    golden_sha256_free(h);
    free(buf);
    return rc;
}

int lg_sha256_fd(int fd, const char *path, char hex[65], long long *bytes, golden_error *err)
{
    unsigned char *buf = malloc(FILE_BUF);
    golden_sha256 *h = buf ? golden_sha256_new(err) : NULL;
    int rc = GOLDEN_ERR;
    if (!buf)
        golden_fail_what(err, GOLDEN_ENOMEM, path, "out of memory");
    else if (h)
        rc = hash_fd(fd, path, h, buf, FILE_BUF, hex, bytes, err);
    golden_sha256_free(h);
    free(buf);
    return rc;
}

typedef struct {
    const char *const *paths;
    char (*hexes)[65];
} files_job;

static int hash_one_file(void *ctx, size_t i, int worker, golden_error *err)
{
    (void)worker;
    files_job *job = ctx;
    return golden_sha256_file(job->paths[i], job->hexes[i], err);
}

int golden_sha256_files(const char *const *paths, size_t n, char (*hexes)[65], int threads,
                        golden_error *err)
{
    files_job job = {paths, hexes};
    return lg_parallel_for(n, threads > 0 ? threads : lg_cpu_count(), hash_one_file,
                               &job, err);
}

int golden_is_sha256_hex(const char *s)
{
    size_t i = 0;
    for (; s[i]; i++)
        if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
            return 0;
    return i == 64;
}
