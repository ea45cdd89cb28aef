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

/* n values, bf16 (the top half of each f32) or f32, little-endian. */
static int write_values(FILE *f, int bf16, long long n)
{
    enum { BUF = 1 << 16 };
    static unsigned char buf[BUF * 4];
    int w = bf16 ? 2 : 4;
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
        if (fwrite(buf, (size_t)w, (size_t)k, f) != (size_t)k)
            return -1;
        done += k;
    }
    return 0;
}

/* A .npy file (format 1.0): bf16 tensors are stored as '<u2', the way PyTorch users save them
 * (golden-dump reads them with --dtype NAME=bf16). */
static int write_npy(const char *path, int bf16, long long rows, long long cols)
{
    FILE *f = fopen(path, "wb");
    if (!f)
        return -1;
    char dict[128];
    int len = snprintf(dict, sizeof dict, "{'descr': '%s', 'fortran_order': False, 'shape': (%lld, %lld), }",
                       bf16 ? "<u2" : "<f4", rows, cols);
    int pad = 64 - (10 + len + 1) % 64;
    unsigned short hlen = (unsigned short)(len + pad + 1);
    fwrite("\x93NUMPY\x01\x00", 1, 8, f);
    fwrite(&hlen, 2, 1, f);
    fprintf(f, "%s%*s\n", dict, pad, "");
    int rc = write_values(f, bf16, rows * cols);
    return fclose(f) != 0 || rc != 0 ? -1 : 0;
}

/* One .safetensors file holding every tensor (BF16 and F32), offsets in header order. */
static int write_safetensors(const char *dir, long layers, long long bytes)
{
    char path[4096], header[65536];
    size_t hl = (size_t)snprintf(header, sizeof header, "{");
    long long off = 0;
    for (long i = 0; i < 2 * layers; i++) {
        int bf16 = i % 2 == 0;
        long long n = bytes / (bf16 ? 2 : 4);
        hl += (size_t)snprintf(header + hl, sizeof header - hl,
                               "%s\"layers/%ld/%s/out\":{\"dtype\":\"%s\",\"shape\":[%lld],\"data_offsets\":[%lld,%lld]}",
                               i ? "," : "", i / 2, bf16 ? "attn" : "mlp", bf16 ? "BF16" : "F32", n, off,
                               off + n * (bf16 ? 2 : 4));
        off += n * (bf16 ? 2 : 4);
    }
    hl += (size_t)snprintf(header + hl, sizeof header - hl, "}");
    while (hl % 8)
        header[hl++] = ' ';
    snprintf(path, sizeof path, "%s/model.safetensors", dir);
    FILE *f = fopen(path, "wb");
    if (!f)
        return -1;
    uint64_t n8 = hl;
    int rc = fwrite(&n8, 8, 1, f) == 1 && fwrite(header, 1, hl, f) == hl ? 0 : -1;
    for (long i = 0; i < 2 * layers && rc == 0; i++)
        rc = write_values(f, i % 2 == 0, bytes / (i % 2 == 0 ? 2 : 4));
    return fclose(f) != 0 || rc != 0 ? -1 : 0;
}

int main(int argc, char **argv)
{
    if (argc != 4 && argc != 5) {
        fprintf(stderr, "usage: dump-gen DIR LAYERS BYTES_PER_TENSOR [raw|npy|safetensors]\n"
                        "  writes two tensors per layer (bf16 attn, f32 mlp): raw dumps with\n"
                        "  DIR/index.json (default), DIR/layers/L/{attn,mlp}/out.npy (bf16 as <u2),\n"
                        "  or DIR/model.safetensors\n");
        return 2;
    }
    const char *dir = argv[1];
    long layers = atol(argv[2]);
    long long bytes = atoll(argv[3]);
    const char *format = argc == 5 ? argv[4] : "raw";
    if (layers <= 0 || bytes < 4 || (mkdir(dir, 0755) != 0 && errno != EEXIST)) {
        fprintf(stderr, "dump-gen: bad arguments or cannot create %s\n", dir);
        return 2;
    }
    char path[4096];
    if (strcmp(format, "safetensors") == 0) {
        if (write_safetensors(dir, layers, bytes) != 0) {
            perror(dir);
            return 2;
        }
        return 0;
    }
    if (strcmp(format, "npy") == 0) {
        for (long i = 0; i < 2 * layers; i++) {
            int bf16 = i % 2 == 0;
            long long n = bytes / (bf16 ? 2 : 4), cols = n % 1024 == 0 ? 1024 : 1;
            const char *parts[] = {"layers", NULL, bf16 ? "attn" : "mlp"};
            char num[32];
            snprintf(num, sizeof num, "%ld", i / 2);
            parts[1] = num;
            snprintf(path, sizeof path, "%s", dir);
            for (int k = 0; k < 3; k++) {
                strncat(path, "/", sizeof path - strlen(path) - 1);
                strncat(path, parts[k], sizeof path - strlen(path) - 1);
                (void)mkdir(path, 0755);
            }
            strncat(path, "/out.npy", sizeof path - strlen(path) - 1);
            if (write_npy(path, bf16, n / cols, cols) != 0) {
                perror(path);
                return 2;
            }
        }
        return 0;
    }
    if (strcmp(format, "raw") != 0) {
        fprintf(stderr, "dump-gen: unknown format %s (raw, npy, safetensors)\n", format);
        return 2;
    }
    snprintf(path, sizeof path, "%s/index.json", dir);
    FILE *idx = fopen(path, "w");
    if (!idx) {
        perror(path);
        return 2;
    }
    fprintf(idx, "{\"schema\": \"calculet-dump-index/v1\", \"tensors\": [\n");
    for (long i = 0; i < 2 * layers; i++) {
        int bf16 = i % 2 == 0;
        int w = bf16 ? 2 : 4;
        long long n = bytes / w;
        long long cols = n % 1024 == 0 ? 1024 : 1;
        snprintf(path, sizeof path, "%s/%04ld.bin", dir, i);
        FILE *f = fopen(path, "wb");
        if (!f || write_values(f, bf16, n) != 0 || fclose(f) != 0) {
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
