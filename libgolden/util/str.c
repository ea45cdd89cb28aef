/* Small string helpers shared by every module (util/str.h): suffixes and path joins, so no
 * module writes its own copy. */
#include "util/str.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

bool lg_has_suffix(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && memcmp(s + n - m, suffix, m) == 0;
}

bool lg_path_has_suffix(const char *path, const char *suffix)
{
    size_t n = strlen(path), m = strlen(suffix);
    return lg_has_suffix(path, suffix) && (n == m || path[n - m - 1] == '/');
}

char *lg_path_join(const char *dir, const char *name)
{
    size_t a = strlen(dir), b = strlen(name);
    char *p = malloc(a + b + 2);
    if (!p)
        return NULL;
    memcpy(p, dir, a);
    p[a] = '/';
    memcpy(p + a + 1, name, b + 1);
    return p;
}

int lg_path_join_buf(char *buf, size_t n, const char *dir, const char *name)
{
    int k = snprintf(buf, n, "%s/%s", dir, name);
    return k < 0 || (size_t)k >= n ? -1 : 0;
}
