/* fuzz_write_file: one private folder per process under TMPDIR (or /tmp), removed at exit, so
 * harnesses running in parallel never share an input file. */
#include "fuzz.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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
