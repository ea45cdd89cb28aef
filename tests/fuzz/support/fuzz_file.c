/* fuzz_write_file: one private folder per process under TMPDIR (or /tmp), removed at exit, so
 * harnesses running in parallel never share an input file. */
#include "fuzz.h"

#include <ctype.h>
#include <errno.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char dir[256];

static void remove_dir(void)
{
    if (!dir[0])
        return;
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        dir[0] = '\0';
}

const char *fuzz_dir(void)
{
    if (!dir[0]) {
        const char *tmp = getenv("TMPDIR");
        snprintf(dir, sizeof dir, "%s/golden-fuzz.XXXXXX", tmp && *tmp ? tmp : "/tmp");
        if (!mkdtemp(dir)) {
            dir[0] = '\0';
            return NULL;
        }
        atexit(remove_dir);
    }
    return dir;
}

const char *fuzz_write_file(const uint8_t *data, size_t size, const char *ext)
{
    static char path[320];
    const char *d = fuzz_dir();
    if (!d)
        return NULL;
    snprintf(path, sizeof path, "%s/input.%s", d, ext);
    FILE *f = fopen(path, "wb");
    if (!f)
        return NULL;
    size_t w = size ? fwrite(data, 1, size, f) : 0;
    if (fclose(f) != 0 || w != size)
        return NULL;
    return path;
}

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    (void)flag;
    if (ftw->level > 0)
        (void)remove(path);
    return 0;
}

/* A container path is safe when every component is made of [A-Za-z0-9._-], is not "." or "..",
 * and there are at most 4 of them. */
static int safe_path(const char *p, size_t len)
{
    if (len == 0 || len > 200)
        return 0;
    size_t parts = 0, start = 0;
    for (size_t i = 0; i <= len; i++) {
        if (i == len || p[i] == '/') {
            size_t n = i - start;
            if (n == 0 || (n == 1 && p[start] == '.') || (n == 2 && p[start] == '.' && p[start + 1] == '.'))
                return 0;
            if (++parts > 4)
                return 0;
            start = i + 1;
            continue;
        }
        unsigned char c = (unsigned char)p[i];
        if (!isalnum(c) && c != '.' && c != '_' && c != '-')
            return 0;
    }
    return 1;
}

static void write_member(const char *root, const char *name, size_t nlen, const uint8_t *data, size_t size)
{
    char path[512];
    int n = snprintf(path, sizeof path, "%s/%.*s", root, (int)nlen, name);
    if (n < 0 || (size_t)n >= sizeof path)
        return;
    for (char *s = path + strlen(root) + 1; (s = strchr(s, '/')); s++) {
        *s = '\0';
        (void)mkdir(path, 0700);
        *s = '/';
    }
    FILE *f = fopen(path, "wb");
    if (!f)
        return;
    if (size)
        (void)fwrite(data, 1, size, f);
    fclose(f);
}

const char *fuzz_unpack_folder(const uint8_t *data, size_t size)
{
    static char root[320];
    const char *d = fuzz_dir();
    if (!d)
        return NULL;
    snprintf(root, sizeof root, "%s/folder", d);
    (void)nftw(root, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
    if (mkdir(root, 0700) != 0 && errno != EEXIST)
        return NULL;
    size_t pos = 0, files = 0;
    while (pos + 3 <= size && memcmp(data + pos, "@@ ", 3) == 0 && files < 64) {
        const uint8_t *name = data + pos + 3;
        const uint8_t *eol = memchr(name, '\n', size - (pos + 3));
        if (!eol)
            break;
        size_t nlen = (size_t)(eol - name);
        size_t body = (size_t)(eol - data) + 1, end = body;
        while (end < size && !(data[end] == '\n' && end + 4 <= size && memcmp(data + end + 1, "@@ ", 3) == 0))
            end++;
        if (safe_path((const char *)name, nlen))
            write_member(root, (const char *)name, nlen, data + body, end - body);
        files++;
        pos = end < size ? end + 1 : size;
    }
    return root;
}

int fuzz_sink(void *ctx, const void *data, size_t n, golden_error *err)
{
    (void)err;
    const unsigned char *p = data;
    unsigned *acc = ctx;
    for (size_t i = 0; i < n; i += 97)
        *acc += p[i];
    return 0;
}
