/* Replays saved fuzz inputs through a harness without libFuzzer (gcc and sanitizer builds of
 * make check): every file named, or every file of every folder named, once; prints a count. */
#include "fuzz.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static int replay_file(const char *path, unsigned long *n)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "replay: %s: cannot open\n", path);
        return -1;
    }
    size_t cap = 1 << 16, len = 0;
    uint8_t *buf = malloc(cap);
    size_t r;
    while (buf && (r = fread(buf + len, 1, cap - len, f)) > 0) {
        len += r;
        if (len == cap) {
            uint8_t *nb = realloc(buf, cap * 2);
            if (!nb) {
                free(buf);
                buf = NULL;
                break;
            }
            buf = nb;
            cap *= 2;
        }
    }
    fclose(f);
    if (!buf) {
        fprintf(stderr, "replay: %s: out of memory\n", path);
        return -1;
    }
    /* a copy of exactly len bytes, so an over-read past the input is caught by ASan */
    uint8_t *exact = malloc(len ? len : 1);
    if (!exact) {
        free(buf);
        return -1;
    }
    memcpy(exact, buf, len);
    free(buf);
    LLVMFuzzerTestOneInput(exact, len);
    free(exact);
    (*n)++;
    return 0;
}

static int cmp_names(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static int replay_path(const char *path, unsigned long *n)
{
    struct stat st;
    if (stat(path, &st) != 0) {
        fprintf(stderr, "replay: %s: no such file or folder\n", path);
        return -1;
    }
    if (!S_ISDIR(st.st_mode))
        return replay_file(path, n);
    DIR *d = opendir(path);
    if (!d)
        return -1;
    char **names = NULL;
    size_t count = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.')
            continue;
        char **nn = realloc(names, (count + 1) * sizeof *nn);
        if (!nn)
            break;
        names = nn;
        size_t len = strlen(path) + strlen(e->d_name) + 2;
        names[count] = malloc(len);
        if (!names[count])
            break;
        snprintf(names[count], len, "%s/%s", path, e->d_name);
        count++;
    }
    closedir(d);
    qsort(names, count, sizeof *names, cmp_names);
    int rc = 0;
    for (size_t i = 0; i < count; i++) {
        if (replay_file(names[i], n) != 0)
            rc = -1;
        free(names[i]);
    }
    free(names);
    return rc;
}

int main(int argc, char **argv)
{
    unsigned long n = 0;
    int rc = 0;
    for (int i = 1; i < argc; i++)
        if (replay_path(argv[i], &n) != 0)
            rc = 1;
    printf("replayed %lu inputs\n", n);
    return rc;
}
