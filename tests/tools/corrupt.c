/* Test helper: a deterministic corruption of a file, for hostile-input tests.
 * corrupt IN OUT SEED: one time in five truncate at a random length, otherwise overwrite one
 * to eight random bytes with random values. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

static uint64_t state;

static uint64_t next(void)
{
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    return state;
}

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: corrupt IN OUT SEED\n");
        return 2;
    }
    FILE *in = fopen(argv[1], "rb");
    if (!in) {
        perror(argv[1]);
        return 2;
    }
    fseek(in, 0, SEEK_END);
    long n = ftell(in);
    rewind(in);
    unsigned char *b = malloc(n > 0 ? (size_t)n : 1);
    if (!b || n <= 0 || fread(b, 1, (size_t)n, in) != (size_t)n) {
        fprintf(stderr, "corrupt: cannot read %s\n", argv[1]);
        return 2;
    }
    fclose(in);
    state = 0x9e3779b97f4a7c15ull ^ (uint64_t)strtoull(argv[3], NULL, 10) * 2654435761ull;
    for (int i = 0; i < 8; i++)
        next();
    long len = n;
    if (next() % 5 == 0) {
        len = (long)(next() % (uint64_t)n);
    } else {
        int k = 1 + (int)(next() % 8);
        for (int i = 0; i < k; i++)
            b[next() % (uint64_t)n] = (unsigned char)next();
    }
    FILE *out = fopen(argv[2], "wb");
    if (!out || fwrite(b, 1, (size_t)len, out) != (size_t)len || fclose(out) != 0) {
        fprintf(stderr, "corrupt: cannot write %s\n", argv[2]);
        return 2;
    }
    free(b);
    return 0;
}
