/* What a file is, told by its first bytes: the readers pick their parser by content, so a
 * .npy named .bin is read as one and a text file is called text, never fed to the wrong
 * parser. Also the list of what an input's walk passed over. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "golden/infile.h"
#include "golden/report.h"
#include "tensor/reader_private.h"

#define HEAD 512

static int read_at(int fd, unsigned char *buf, size_t n, off_t at, size_t *got)
{
    size_t have = 0;
    while (have < n) {
        ssize_t r = pread(fd, buf + have, n - have, at + (off_t)have);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            return -1;
        if (r == 0)
            break;
        have += (size_t)r;
    }
    *got = have;
    return 0;
}

static bool looks_text(const unsigned char *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (p[i] == 0 || (p[i] < 0x20 && p[i] != '\t' && p[i] != '\n' && p[i] != '\r' &&
                          p[i] != '\f'))
            return false;
    return true;
}

static const unsigned char hdf5_sig[8] = {0x89, 'H', 'D', 'F', '\r', '\n', 0x1a, '\n'};

/* The HDF5 superblock may start at 0, 512, 1024, 2048, ... (a user block before it). */
static int is_hdf5(int fd, uint64_t size, const unsigned char *head, size_t n, bool *yes)
{
    *yes = n >= 8 && memcmp(head, hdf5_sig, 8) == 0;
    for (uint64_t at = 512; !*yes && at + 8 <= size && at <= (UINT64_C(1) << 40); at *= 2) {
        unsigned char sig[8];
        size_t got;
        if (read_at(fd, sig, 8, (off_t)at, &got) != 0)
            return -1;
        *yes = got == 8 && memcmp(sig, hdf5_sig, 8) == 0;
    }
    return 0;
}

int lg_sniff(const char *path, lg_kind *kind, golden_error *err)
{
    int fd = golden_infile_open(path, 0, err); /* a FIFO is refused, never waited on */
    if (fd < 0)
        return -1;
    struct stat st;
    unsigned char h[HEAD];
    size_t n = 0;
    if (fstat(fd, &st) != 0 || read_at(fd, h, sizeof h, 0, &n) != 0) {
        int e = errno;
        close(fd);
        return golden_fail_what(err, golden_code_from_errno(e), path, "cannot read: %s",
                                strerror(e));
    }
    uint64_t size = (uint64_t)st.st_size;
    bool hdf5 = false;
    if (is_hdf5(fd, size, h, n, &hdf5) != 0) {
        int e = errno;
        close(fd);
        return golden_fail_what(err, golden_code_from_errno(e), path, "cannot read: %s",
                                strerror(e));
    }
    close(fd);
    uint64_t hlen = 0;
    for (int i = 7; n >= 8 && i >= 0; i--)
        hlen = hlen << 8 | h[i];
    size_t b = 0;
    while (b < n && (h[b] == ' ' || h[b] == '\t' || h[b] == '\n' || h[b] == '\r'))
        b++;
    if (n == 0)
        *kind = LG_KIND_EMPTY;
    else if (hdf5)
        *kind = LG_KIND_HDF5;
    else if (n >= 6 && memcmp(h, "\x93NUMPY", 6) == 0)
        *kind = LG_KIND_NPY;
    else if (n >= 4 && h[0] == 'P' && h[1] == 'K' &&
             ((h[2] == 3 && h[3] == 4) || (h[2] == 5 && h[3] == 6)))
        *kind = LG_KIND_ZIP;
    else if (n >= 9 && hlen >= 2 && hlen <= size - 8 && h[8] == '{')
        *kind = LG_KIND_SAFETENSORS;
    else if (n >= 2 && h[0] == 0x80 && h[1] >= 2 && h[1] <= 5)
        *kind = LG_KIND_PICKLE;
    else if (b < n && (h[b] == '{' || h[b] == '[') && looks_text(h, n))
        *kind = LG_KIND_JSON;
    else if (looks_text(h, n))
        *kind = LG_KIND_TEXT;
    else
        *kind = LG_KIND_BINARY;
    return 0;
}

const char *lg_kind_text(lg_kind k)
{
    switch (k) {
    case LG_KIND_HDF5: return "an HDF5 file";
    case LG_KIND_NPY: return "a .npy array";
    case LG_KIND_SAFETENSORS: return "a .safetensors file";
    case LG_KIND_ZIP: return "a zip archive";
    case LG_KIND_PICKLE: return "a legacy (non-zip) PyTorch pickle";
    case LG_KIND_JSON: return "JSON";
    case LG_KIND_TEXT: return "text";
    case LG_KIND_EMPTY: return "an empty file";
    default: return "unrecognised binary data";
    }
}

int lg_skip_add(lg_skiplist *s, const char *path, const char *why)
{
    if (s->n == s->cap) {
        size_t cap = s->cap ? 2 * s->cap : 8;
        char **p = realloc(s->path, cap * sizeof *p);
        if (!p)
            return -1;
        s->path = p;
        char **w = realloc(s->why, cap * sizeof *w);
        if (!w)
            return -1;
        s->why = w;
        s->cap = cap;
    }
    char *a = strdup(path), *b = strdup(why);
    if (!a || !b) {
        free(a);
        free(b);
        return -1;
    }
    s->path[s->n] = a;
    s->why[s->n++] = b;
    return 0;
}

void lg_skip_free(lg_skiplist *s)
{
    for (size_t i = 0; i < s->n; i++) {
        free(s->path[i]);
        free(s->why[i]);
    }
    free(s->path);
    free(s->why);
    memset(s, 0, sizeof *s);
}
