/* Test and benchmark helper: writes a sample run of raw little-endian dumps (.bin) plus its
 * calculet-dump-index/v1 index.json, alternating bf16 and f32 tensors of pseudo-random values. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static uint64_t rng = 0x9e3779b97f4a7c15ull;

static uint64_t next(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

/* A value with 0.5 <= |v| < 8: random sign and mantissa, small exponent. */
static float value(void)
{
    uint64_t r = next();
    uint32_t bits = (uint32_t)(r & 0x807fffffu) | (uint32_t)(126 + (r >> 32) % 4) << 23;
    float f;
    memcpy(&f, &bits, 4);
    return f;
}

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: dump-gen DIR LAYERS BYTES_PER_TENSOR\n"
                        "  writes DIR/index.json and two tensors per layer (bf16 attn, f32 mlp)\n");
        return 2;
    }
    const char *dir = argv[1];
    long layers = atol(argv[2]);
    long long bytes = atoll(argv[3]);
    if (layers <= 0 || bytes < 4 || (mkdir(dir, 0755) != 0 && errno != EEXIST)) {
        fprintf(stderr, "dump-gen: bad arguments or cannot create %s\n", dir);
        return 2;
    }
    char path[4096];
    snprintf(path, sizeof path, "%s/index.json", dir);
    FILE *idx = fopen(path, "w");
    if (!idx) {
        perror(path);
        return 2;
    }
    fprintf(idx, "{\"schema\": \"calculet-dump-index/v1\", \"tensors\": [\n");
    enum { BUF = 1 << 16 };
    static unsigned char buf[BUF * 4];
    for (long i = 0; i < 2 * layers; i++) {
        int bf16 = i % 2 == 0;
        int w = bf16 ? 2 : 4;
        long long n = bytes / w;
        long long cols = n % 1024 == 0 ? 1024 : 1;
        snprintf(path, sizeof path, "%s/%04ld.bin", dir, i);
        FILE *f = fopen(path, "wb");
        if (!f) {
            perror(path);
            return 2;
        }
        for (long long done = 0; done < n;) {
            long long k = n - done < BUF ? n - done : BUF;
            for (long long j = 0; j < k; j++) {
                float v = value();
                uint32_t b;
                memcpy(&b, &v, 4);
                if (bf16) {
                    uint16_t h = (uint16_t)(b >> 16);
                    memcpy(buf + j * 2, &h, 2); /* x86: little-endian already */
                } else {
                    memcpy(buf + j * 4, &b, 4);
                }
            }
            if (fwrite(buf, (size_t)w, (size_t)k, f) != (size_t)k) {
                perror(path);
                return 2;
            }
            done += k;
        }
        if (fclose(f) != 0) {
            perror(path);
            return 2;
        }
        fprintf(idx,
                "%s  {\"name\": \"layers/%ld/%s/out\", \"file\": \"%04ld.bin\", \"offset\": 0,"
                " \"dtype\": \"%s\", \"shape\": [%lld, %lld], \"layer\": %ld, \"chip\": %ld,"
                " \"op_family\": \"%s\"}",
                i ? ",\n" : "", i / 2, bf16 ? "attn" : "mlp", i, bf16 ? "bf16" : "f32", n / cols,
                cols, i / 2, i % 2, bf16 ? "flash_attention" : "moe_expert");
    }
    fprintf(idx, "\n]}\n");
    if (fclose(idx) != 0) {
        perror("index.json");
        return 2;
    }
    return 0;
}
