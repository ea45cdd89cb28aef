/* Unit tests of the input readers: .npy, .safetensors, dump index and folders, on files the
 * tests write byte by byte, with expected values worked out independently of the readers. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cunit_main.h"
#include "golden/hash.h"
#include "golden/ingest.h"

static char dir[256];

static void make_dir(void)
{
    if (dir[0])
        return;
    const char *tmp = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
    snprintf(dir, sizeof dir, "%s/golden-ingest.XXXXXX", tmp);
    CU_ASSERT_FATAL(mkdtemp(dir) != NULL);
}

static char *pathf(const char *name)
{
    static char buf[4][512];
    static int k;
    make_dir();
    k = (k + 1) % 4;
    snprintf(buf[k], sizeof buf[k], "%s/%s", dir, name);
    return buf[k];
}

static void write_file(const char *name, const void *data, size_t n)
{
    FILE *f = fopen(pathf(name), "wb");
    CU_ASSERT_FATAL(f != NULL);
    CU_ASSERT_FATAL(fwrite(data, 1, n, f) == n);
    fclose(f);
}

/* An .npy file: magic, version, header padded like numpy does (to 64 bytes), data. */
static void write_npy(const char *name, int major, const char *dict, const void *data,
                      size_t n)
{
    size_t pre = major == 1 ? 10 : 12;
    size_t hl = strlen(dict) + 1;
    size_t total = (pre + hl + 63) / 64 * 64;
    unsigned char *buf = malloc(total + n + 1);
    CU_ASSERT_FATAL(buf != NULL);
    size_t hlen = total - pre;
    memcpy(buf, "\x93NUMPY", 6);
    buf[6] = (unsigned char)major;
    buf[7] = 0;
    buf[8] = (unsigned char)(hlen & 0xff);
    buf[9] = (unsigned char)(hlen >> 8);
    if (major != 1)
        buf[10] = buf[11] = 0;
    memcpy(buf + pre, dict, strlen(dict));
    memset(buf + pre + strlen(dict), ' ', hlen - strlen(dict));
    buf[total - 1] = '\n';
    memcpy(buf + total, data, n);
    write_file(name, buf, total + n);
    free(buf);
}

typedef struct {
    unsigned char *data;
    size_t n, cap, calls;
} sink;

static int collect(void *ctx, const void *data, size_t n, golden_error *err)
{
    (void)err;
    sink *s = ctx;
    if (s->n + n > s->cap) {
        s->cap = (s->n + n) * 2;
        s->data = realloc(s->data, s->cap);
        if (!s->data)
            return -1;
    }
    memcpy(s->data + s->n, data, n);
    s->n += n;
    s->calls++;
    return 0;
}

static sink read_all(const golden_input *in, size_t chunk)
{
    sink s = {0};
    golden_error err;
    int rc = golden_input_read(in, chunk, collect, &s, &err);
    CU_ASSERT(rc == GOLDEN_OK);
    if (rc != GOLDEN_OK)
        fprintf(stderr, "read: %s: %s\n", err.where, err.what);
    return s;
}

static void test_descr_map(void)
{
    golden_dtype dt;
    bool big;
    CU_ASSERT(golden_npy_descr("<f4", &dt, &big) == 0 && dt == GOLDEN_F32 && !big);
    CU_ASSERT(golden_npy_descr(">f8", &dt, &big) == 0 && dt == GOLDEN_F64 && big);
    CU_ASSERT(golden_npy_descr("<f2", &dt, &big) == 0 && dt == GOLDEN_F16);
    CU_ASSERT(golden_npy_descr("|b1", &dt, &big) == 0 && dt == GOLDEN_BOOL && !big);
    CU_ASSERT(golden_npy_descr("|u1", &dt, &big) == 0 && dt == GOLDEN_U8);
    CU_ASSERT(golden_npy_descr(">i1", &dt, &big) == 0 && dt == GOLDEN_I8 && !big);
    CU_ASSERT(golden_npy_descr(">u8", &dt, &big) == 0 && dt == GOLDEN_U64 && big);
    CU_ASSERT(golden_npy_descr("|i4", &dt, &big) == -1);
    CU_ASSERT(golden_npy_descr("<c8", &dt, &big) == -1);
    CU_ASSERT(golden_npy_descr("|V2", &dt, &big) == -1);
    CU_ASSERT(golden_npy_descr("<f4 ", &dt, &big) == -1);
    CU_ASSERT(golden_safetensors_dtype("BF16", &dt) == 0 && dt == GOLDEN_BF16);
    CU_ASSERT(golden_safetensors_dtype("F8_E4M3", &dt) == 0 && dt == GOLDEN_FP8_E4M3FN);
    CU_ASSERT(golden_safetensors_dtype("F8_E5M2", &dt) == 0 && dt == GOLDEN_FP8_E5M2);
    CU_ASSERT(golden_safetensors_dtype("BOOL", &dt) == 0 && dt == GOLDEN_BOOL);
    CU_ASSERT(golden_safetensors_dtype("C64", &dt) == -1);
}

static void test_npy_v1_c_order(void)
{
    float v[6] = {1.5f, -2.0f, 0.0f, 3.25f, 1e30f, -0.5f};
    write_npy("a.npy", 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }", v,
              sizeof v);
    golden_input_list l;
    golden_input_list_init(&l);
    golden_error err;
    CU_ASSERT_FATAL(golden_ingest_npy(&l, pathf("a.npy"), NULL, &err) == GOLDEN_OK);
    CU_ASSERT_FATAL(l.count == 1);
    golden_input *in = &l.items[0];
    CU_ASSERT_STRING_EQUAL(in->info.name, "a");
    CU_ASSERT(in->info.dtype == GOLDEN_F32);
    CU_ASSERT(in->info.rank == 2 && in->info.shape[0] == 2 && in->info.shape[1] == 3);
    CU_ASSERT(in->info.count == 6 && in->nbytes == 24 && in->offset == 128);
    CU_ASSERT(!in->fortran_order && !in->big_endian);
    sink s = read_all(in, 8);
    CU_ASSERT(s.n == 24 && memcmp(s.data, v, 24) == 0);
    CU_ASSERT(s.calls == 3);
    free(s.data);
    golden_input_list_free(&l);
}

static void test_npy_v2_v3_big_endian(void)
{
    /* >i2 values 1, -2, 258 as big-endian bytes; canonical = little-endian */
    unsigned char be[6] = {0x00, 0x01, 0xff, 0xfe, 0x01, 0x02};
    unsigned char le[6] = {0x01, 0x00, 0xfe, 0xff, 0x02, 0x01};
    write_npy("b.npy", 2, "{'descr': '>i2', 'fortran_order': False, 'shape': (3,), }", be, 6);
    write_npy("c.npy", 3, "{\"descr\": \">i2\", \"shape\": (3,), \"fortran_order\": False}", be,
              6);
    golden_input_list l;
    golden_input_list_init(&l);
    golden_error err;
    CU_ASSERT_FATAL(golden_ingest_npy(&l, pathf("b.npy"), "renamed/b", &err) == GOLDEN_OK);
    CU_ASSERT_FATAL(golden_ingest_npy(&l, pathf("c.npy"), NULL, &err) == GOLDEN_OK);
    CU_ASSERT_STRING_EQUAL(l.items[0].info.name, "renamed/b");
    for (int i = 0; i < 2; i++) {
        CU_ASSERT(l.items[i].big_endian && l.items[i].info.dtype == GOLDEN_I16);
        CU_ASSERT(l.items[i].info.rank == 1 && l.items[i].info.shape[0] == 3);
        sink s = read_all(&l.items[i], 0);
        CU_ASSERT(s.n == 6 && memcmp(s.data, le, 6) == 0);
        free(s.data);
    }
    golden_input_list_free(&l);
}

static void test_npy_scalar_and_empty(void)
{
    double x = 2.5;
    write_npy("s.npy", 1, "{'descr': '<f8', 'fortran_order': False, 'shape': (), }", &x, 8);
    write_npy("e.npy", 1, "{'descr': '|b1', 'fortran_order': True, 'shape': (0, 3), }", "", 0);
    golden_input_list l;
    golden_input_list_init(&l);
    golden_error err;
    CU_ASSERT_FATAL(golden_ingest_npy(&l, pathf("s.npy"), NULL, &err) == GOLDEN_OK);
    CU_ASSERT_FATAL(golden_ingest_npy(&l, pathf("e.npy"), NULL, &err) == GOLDEN_OK);
    CU_ASSERT(l.items[0].info.rank == 0 && l.items[0].info.count == 1);
    CU_ASSERT(l.items[1].info.rank == 2 && l.items[1].info.count == 0);
    sink s = read_all(&l.items[0], 0);
    CU_ASSERT(s.n == 8 && memcmp(s.data, &x, 8) == 0);
    free(s.data);
    s = read_all(&l.items[1], 0);
    CU_ASSERT(s.n == 0);
    free(s.data);
    golden_input_list_free(&l);
}

/* Fortran-order file of the given shape whose element at C index c holds the value c. */
static void fortran_case(const char *name, int rank, const uint64_t *shape, bool big)
{
    uint64_t count = 1;
    for (int i = 0; i < rank; i++)
        count *= shape[i];
    uint32_t *data = malloc(count * 4);
    CU_ASSERT_FATAL(data != NULL);
    for (uint64_t f = 0; f < count; f++) {
        /* Fortran: first index fastest */
        uint64_t rem = f, idx[8];
        for (int i = 0; i < rank; i++) {
            idx[i] = rem % shape[i];
            rem /= shape[i];
        }
        uint64_t c = 0;
        for (int i = 0; i < rank; i++)
            c = c * shape[i] + idx[i];
        uint32_t v = (uint32_t)c;
        data[f] = big ? __builtin_bswap32(v) : v;
    }
    char dict[256], shp[128] = "";
    for (int i = 0; i < rank; i++)
        snprintf(shp + strlen(shp), sizeof shp - strlen(shp), "%llu, ",
                 (unsigned long long)shape[i]);
    snprintf(dict, sizeof dict, "{'descr': '%s', 'fortran_order': True, 'shape': (%s), }",
             big ? ">u4" : "<u4", shp);
    write_npy(name, 1, dict, data, count * 4);
    free(data);
    golden_input_list l;
    golden_input_list_init(&l);
    golden_error err;
    CU_ASSERT_FATAL(golden_ingest_npy(&l, pathf(name), NULL, &err) == GOLDEN_OK);
    /* chunk sizes that exercise whole tiles, partial tiles and the recursive fallback */
    size_t chunks[] = {4, 12, 64, 100, 4096, 16000, 0};
    for (size_t k = 0; k < sizeof chunks / sizeof chunks[0]; k++) {
        sink s = read_all(&l.items[0], chunks[k]);
        CU_ASSERT_FATAL(s.n == count * 4);
        uint32_t *out = (uint32_t *)s.data;
        uint64_t bad = 0;
        for (uint64_t c = 0; c < count; c++)
            bad += out[c] != (uint32_t)c;
        CU_ASSERT(bad == 0);
        if (bad)
            fprintf(stderr, "%s chunk %zu: %llu wrong\n", name, chunks[k],
                    (unsigned long long)bad);
        free(s.data);
    }
    golden_input_list_free(&l);
}

static void test_npy_fortran(void)
{
    uint64_t s2[] = {5, 7}, s3[] = {2, 3, 4}, s4[] = {3, 1, 4, 5}, s5[] = {1, 6, 1};
    uint64_t s6[] = {300, 4}, s7[] = {2, 3, 50};
    fortran_case("f2.npy", 2, s2, false);
    fortran_case("f3.npy", 3, s3, true);
    fortran_case("f4.npy", 4, s4, false);
    fortran_case("f5.npy", 3, s5, false);
    fortran_case("f6.npy", 2, s6, true);
    fortran_case("f7.npy", 3, s7, false);
    /* long runs far apart: direct reads (no window) at chunk 4096 and 16000 */
    uint64_t s8[] = {1000, 10}, s9[] = {600, 3, 4};
    fortran_case("f8.npy", 2, s8, false);
    fortran_case("f9.npy", 3, s9, true);
    /* pseudo-random shapes up to rank 5 */
    uint64_t r = 12345;
    for (int k = 0; k < 12; k++) {
        uint64_t sh[5];
        int rank = 2 + (int)(r % 4);
        for (int i = 0; i < rank; i++) {
            r = r * 6364136223846793005ull + 1442695040888963407ull;
            sh[i] = 1 + (r >> 33) % 9;
        }
        fortran_case("fr.npy", rank, sh, k % 2 == 1);
    }
}

/* A file that shrinks while it is read: the error surfaces, no stale buffer is handed out. */
typedef struct {
    sink s;
    const char *path;
} shrink_ctx;

static int shrink_after_first(void *ctx, const void *data, size_t n, golden_error *err)
{
    shrink_ctx *c = ctx;
    if (c->s.calls == 0 && truncate(c->path, 0) != 0)
        return -1;
    return collect(&c->s, data, n, err);
}

static void test_shrinking_file(void)
{
    unsigned char data[80];
    for (int i = 0; i < 80; i++)
        data[i] = (unsigned char)i;
    write_npy("shrink.npy", 1, "{'descr': '|u1', 'fortran_order': False, 'shape': (80,), }", data,
              80);
    golden_input_list l;
    golden_input_list_init(&l);
    golden_error err;
    CU_ASSERT_FATAL(golden_ingest_npy(&l, pathf("shrink.npy"), NULL, &err) == GOLDEN_OK);
    shrink_ctx c = {.path = pathf("shrink.npy")};
    CU_ASSERT(golden_input_read(&l.items[0], 8, shrink_after_first, &c, &err) == GOLDEN_ERR);
    CU_ASSERT(strstr(err.what, "ended early") != NULL);
    /* whatever was delivered is the file's true prefix */
    CU_ASSERT(c.s.n < 80 && memcmp(c.s.data, data, c.s.n) == 0);
    free(c.s.data);
    golden_input_list_free(&l);
}

/* Every header byte of a valid .npy and .safetensors replaced by a few values: the readers
 * must answer OK or a filled error, never crash or read out of bounds (ASan watches). */
static void test_mutated_headers(void)
{
    float v[6] = {1, 2, 3, 4, 5, 6};
    write_npy("m.npy", 1, "{'descr': '<f4', 'fortran_order': True, 'shape': (2, 3), }", v,
              sizeof v);
    unsigned char st[256];
    const char *hdr = "{\"a\":{\"dtype\":\"F32\",\"shape\":[2,3],\"data_offsets\":[0,24]}}";
    size_t hl = strlen(hdr);
    for (int i = 0; i < 8; i++)
        st[i] = (unsigned char)(hl >> (8 * i));
    memcpy(st + 8, hdr, hl);
    memcpy(st + 8 + hl, v, sizeof v);
    size_t st_len = 8 + hl + sizeof v;
    FILE *f = fopen(pathf("m.npy"), "rb");
    CU_ASSERT_FATAL(f != NULL);
    unsigned char npy[512];
    size_t npy_len = fread(npy, 1, sizeof npy, f);
    fclose(f);
    static const unsigned char vals[] = {0x00, 0x20, 0x22, 0x27, 0x28, 0x2c, 0x31, 0x39, 0x3a,
                                         0x5b, 0x7b, 0x7d, 0x80, 0xff};
    size_t ok = 0, failed = 0, bad_err = 0;
    for (int kind = 0; kind < 2; kind++) {
        unsigned char *base = kind ? st : npy;
        size_t len = kind ? st_len : npy_len, hend = kind ? 8 + hl : 128;
        for (size_t pos = 0; pos < hend; pos++)
            for (size_t k = 0; k < sizeof vals; k++) {
                unsigned char buf[512];
                memcpy(buf, base, len);
                if (buf[pos] == vals[k])
                    continue;
                buf[pos] = vals[k];
                write_file(kind ? "mut.safetensors" : "mut.npy", buf, len);
                golden_input_list l;
                golden_input_list_init(&l);
                golden_error err;
                golden_error_clear(&err);
                int rc = kind ? golden_ingest_safetensors(&l, pathf("mut.safetensors"), &err)
                              : golden_ingest_npy(&l, pathf("mut.npy"), NULL, &err);
                if (rc == GOLDEN_OK) {
                    ok++;
                    for (size_t i = 0; i < l.count; i++) {
                        sink s = read_all(&l.items[i], 8);
                        CU_ASSERT(s.n == l.items[i].nbytes);
                        free(s.data);
                    }
                } else {
                    failed++;
                    bad_err += err.what[0] == '\0' || err.where[0] == '\0';
                }
                golden_input_list_free(&l);
            }
    }
    CU_ASSERT(bad_err == 0);
    CU_ASSERT(failed > 0 && ok > 0); /* e.g. padding spaces may change harmlessly */
}

static void expect_npy_error(const char *file, const char *needle)
{
    golden_input_list l;
    golden_input_list_init(&l);
    golden_error err;
    golden_error_clear(&err);
    CU_ASSERT(golden_ingest_npy(&l, pathf(file), NULL, &err) == GOLDEN_ERR);
    CU_ASSERT(l.count == 0);
    CU_ASSERT(strstr(err.where, file) != NULL);
    CU_ASSERT(strstr(err.what, needle) != NULL);
    if (!strstr(err.what, needle))
        fprintf(stderr, "%s: got '%s', wanted '%s'\n", file, err.what, needle);
    golden_input_list_free(&l);
}

static void test_npy_errors(void)
{
    float v[4] = {0};
    write_npy("bad_magic.npy", 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (4,), }",
              v, 16);
    FILE *f = fopen(pathf("bad_magic.npy"), "r+b");
    CU_ASSERT_FATAL(f != NULL);
    fputc('X', f);
    fclose(f);
    expect_npy_error("bad_magic.npy", "bad magic");
    write_file("short.npy", "\x93NUMPY\x01\x00", 8);
    expect_npy_error("short.npy", "too short");
    /* header length 0x7fff past the end of a small file: truncated header */
    write_file("trunc.npy", "\x93NUMPY\x01\x00\xff\x7f{'descr'", 18);
    expect_npy_error("trunc.npy", "exceeds the file");
    write_file("ver.npy", "\x93NUMPY\x04\x00\x00\x00\x00\x00", 12);
    expect_npy_error("ver.npy", "version");
    write_npy("unk.npy", 1, "{'descr': '<c8', 'fortran_order': False, 'shape': (2,), }", v, 16);
    expect_npy_error("unk.npy", "unknown or unsupported dtype '<c8'");
    write_npy("bf.npy", 1, "{'descr': '|V2', 'fortran_order': False, 'shape': (2,), }", v, 4);
    expect_npy_error("bf.npy", "'|V2'");
    write_npy("struct.npy", 1, "{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (2,), }",
              v, 8);
    expect_npy_error("struct.npy", "structured");
    write_npy("more.npy", 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }", v, 16);
    expect_npy_error("more.npy", "does not match");
    write_npy("less.npy", 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (5,), }", v, 16);
    expect_npy_error("less.npy", "does not match");
    write_npy("missing.npy", 1, "{'descr': '<f4', 'shape': (4,), }", v, 16);
    expect_npy_error("missing.npy", "missing fortran_order");
    write_npy("dup.npy", 1,
              "{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': (4,)}", v, 16);
    expect_npy_error("dup.npy", "repeated key");
    write_npy("extra.npy", 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (4,), 'x': 1}",
              v, 16);
    expect_npy_error("extra.npy", "unexpected or repeated key 'x'");
    write_npy("tuple.npy", 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (4), }", v, 16);
    expect_npy_error("tuple.npy", "bad shape");
    write_npy("fo.npy", 1, "{'descr': '<f4', 'fortran_order': 0, 'shape': (4,), }", v, 16);
    expect_npy_error("fo.npy", "fortran_order");
    write_npy("tail.npy", 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (4,), } x", v, 16);
    expect_npy_error("tail.npy", "after the dict");
    write_npy("ovf.npy", 1,
              "{'descr': '<f4', 'fortran_order': False, 'shape': (4294967296, 4294967296, 2), }",
              v, 16);
    expect_npy_error("ovf.npy", "overflow");
    write_npy("big.npy", 1,
              "{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999,), }", v,
              16);
    expect_npy_error("big.npy", "bad shape");
    golden_input_list l;
    golden_input_list_init(&l);
    golden_error err;
    CU_ASSERT(golden_ingest_npy(&l, pathf("does-not-exist.npy"), NULL, &err) == GOLDEN_ERR);
    CU_ASSERT(strstr(err.what, "cannot open") != NULL);
}

/* A .safetensors file from a header text and a data blob. */
static void write_st(const char *name, const char *header, const void *data, size_t n)
{
    size_t hl = strlen(header);
    unsigned char *buf = malloc(8 + hl + n + 1);
    CU_ASSERT_FATAL(buf != NULL);
    for (int i = 0; i < 8; i++)
        buf[i] = (unsigned char)((uint64_t)hl >> (8 * i));
    memcpy(buf + 8, header, hl);
    memcpy(buf + 8 + hl, data, n);
    write_file(name, buf, 8 + hl + n);
    free(buf);
}

static void test_safetensors(void)
{
    /* data: bf16 [2] = 1.0, -2.0 (0x3f80, 0xc000) then i32 [1] = 7 */
    unsigned char data[8] = {0x80, 0x3f, 0x00, 0xc0, 7, 0, 0, 0};
    write_st("m.safetensors",
             "{\"__metadata__\":{\"format\":\"pt\"},"
             "\"z.count\":{\"dtype\":\"I32\",\"shape\":[1],\"data_offsets\":[4,8]},"
             "\"a.weight\":{\"dtype\":\"BF16\",\"shape\":[2],\"data_offsets\":[0,4]}}",
             data, 8);
    golden_input_list l;
    golden_input_list_init(&l);
    golden_error err;
    CU_ASSERT_FATAL(golden_ingest_safetensors(&l, pathf("m.safetensors"), &err) == GOLDEN_OK);
    CU_ASSERT_FATAL(l.count == 2);
    /* file order (by data offset) */
    CU_ASSERT_STRING_EQUAL(l.items[0].info.name, "a.weight");
    CU_ASSERT(l.items[0].info.dtype == GOLDEN_BF16 && l.items[0].info.count == 2);
    CU_ASSERT_STRING_EQUAL(l.items[1].info.name, "z.count");
    CU_ASSERT(l.items[1].info.dtype == GOLDEN_I32);
    sink s = read_all(&l.items[0], 0);
    CU_ASSERT(s.n == 4 && memcmp(s.data, data, 4) == 0);
    free(s.data);
    s = read_all(&l.items[1], 0);
    CU_ASSERT(s.n == 4 && memcmp(s.data, data + 4, 4) == 0);
    free(s.data);
    golden_input_list_free(&l);

    struct {
        const char *header;
        const char *needle;
    } bad[] = {
        {"{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]},"
         "\"b\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[2,6]}}",
         "overlap"},
        {"{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[4,12]}}", "out of range"},
        {"{\"a\":{\"dtype\":\"F32\",\"shape\":[3],\"data_offsets\":[0,8]}}", "does not match"},
        {"{\"a\":{\"dtype\":\"C64\",\"shape\":[1],\"data_offsets\":[0,8]}}", "'C64'"},
        {"{\"a\":{\"dtype\":\"F32\",\"shape\":[-1],\"data_offsets\":[0,8]}}", "needs dtype"},
        {"{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[8,0]}}", "out of range"},
        {"{\"a\":1, \"a\":2}", "corrupt .safetensors header"},
        {"[1]", "not a JSON object"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        write_st("bad.safetensors", bad[i].header, data, 8);
        golden_input_list_init(&l);
        CU_ASSERT(golden_ingest_safetensors(&l, pathf("bad.safetensors"), &err) == GOLDEN_ERR);
        CU_ASSERT(l.count == 0);
        CU_ASSERT(strstr(err.what, bad[i].needle) != NULL);
        if (!strstr(err.what, bad[i].needle))
            fprintf(stderr, "case %zu: '%s'\n", i, err.what);
        golden_input_list_free(&l);
    }
    /* only metadata: a valid file with no tensors */
    write_st("meta.safetensors", "{\"__metadata__\":{}}", "", 0);
    golden_input_list_init(&l);
    CU_ASSERT(golden_ingest_safetensors(&l, pathf("meta.safetensors"), &err) == GOLDEN_OK);
    CU_ASSERT(l.count == 0);
    golden_input_list_free(&l);
    /* header length larger than the file */
    write_file("len.safetensors", "\xff\x00\x00\x00\x00\x00\x00\x00{}", 10);
    golden_input_list_init(&l);
    CU_ASSERT(golden_ingest_safetensors(&l, pathf("len.safetensors"), &err) == GOLDEN_ERR);
    CU_ASSERT(strstr(err.what, "exceeds the file") != NULL);
}

static int index_error(const char *json, const char *needle)
{
    write_file("idx/bad.json", json, strlen(json));
    golden_input_list l;
    golden_input_list_init(&l);
    golden_error err;
    golden_error_clear(&err);
    int rc = golden_ingest_index(&l, pathf("idx/bad.json"), &err);
    CU_ASSERT(rc == GOLDEN_ERR && l.count == 0);
    bool found = strstr(err.what, needle) || strstr(err.where, needle);
    CU_ASSERT(found);
    if (!found)
        fprintf(stderr, "index error: '%s: %s', wanted '%s'\n", err.where, err.what, needle);
    golden_input_list_free(&l);
    return rc;
}

static void test_index(void)
{
    make_dir();
    CU_ASSERT_FATAL(mkdir(pathf("idx"), 0755) == 0 && mkdir(pathf("idx/sub"), 0755) == 0);
    unsigned char a[8] = {1, 2, 3, 4, 5, 6, 7, 8};
    write_file("idx/sub/0001.bin", a, 8);
    write_file("idx/pack.bin", a, 8);
    write_file("outside.bin", a, 8);
    char expect[65];
    golden_error err;
    CU_ASSERT_FATAL(golden_sha256_buffer(a, 8, expect, &err) == GOLDEN_OK);
    char json[2048];
    snprintf(json, sizeof json,
             "{\"schema\": \"calculet-dump-index/v1\", \"tensors\": ["
             "{\"name\": \"layers/0/x\", \"file\": \"sub/0001.bin\", \"offset\": 0,"
             " \"dtype\": \"bf16\", \"shape\": [2, 2], \"layer\": 0, \"chip\": 1, \"step\": 3,"
             " \"op_family\": \"matmul\", \"sha256\": \"%s\"},"
             "{\"name\": \"p/lo\", \"file\": \"pack.bin\", \"offset\": 0, \"dtype\": \"u8\","
             " \"shape\": [3]},"
             "{\"name\": \"p/hi\", \"file\": \"pack.bin\", \"offset\": 4, \"dtype\": \"i32\","
             " \"shape\": []}]}",
             expect);
    write_file("idx/index.json", json, strlen(json));
    golden_input_list l;
    golden_input_list_init(&l);
    CU_ASSERT_FATAL(golden_ingest_index(&l, pathf("idx/index.json"), &err) == GOLDEN_OK);
    CU_ASSERT_FATAL(l.count == 3);
    golden_input *x = &l.items[0];
    CU_ASSERT_STRING_EQUAL(x->info.name, "layers/0/x");
    CU_ASSERT(x->info.dtype == GOLDEN_BF16 && x->info.count == 4 && x->nbytes == 8);
    CU_ASSERT(x->info.has_layer && x->info.layer == 0 && x->info.has_chip && x->info.chip == 1);
    CU_ASSERT(x->info.has_step && x->info.step == 3);
    CU_ASSERT_STRING_EQUAL(x->info.op_family, "matmul");
    CU_ASSERT(x->has_expected && strcmp(x->expected_sha256, expect) == 0);
    CU_ASSERT(strstr(x->path, "idx/sub/0001.bin") != NULL);
    CU_ASSERT(l.items[2].offset == 4 && l.items[2].info.rank == 0 && l.items[2].nbytes == 4);
    sink s = read_all(&l.items[2], 0);
    CU_ASSERT(s.n == 4 && memcmp(s.data, a + 4, 4) == 0);
    free(s.data);
    golden_input_list_free(&l);

    CU_ASSERT_FATAL(symlink("../outside.bin", pathf("idx/link.bin")) == 0);
    const char *head = "{\"schema\": \"calculet-dump-index/v1\", \"tensors\": [";
    char buf[1024];
#define BAD(entry, needle)                                                                   \
    do {                                                                                     \
        snprintf(buf, sizeof buf, "%s%s]}", head, entry);                                    \
        index_error(buf, needle);                                                            \
    } while (0)
    BAD("{\"name\": \"t\", \"file\": \"../outside.bin\", \"dtype\": \"u8\", \"shape\": [8]}",
        "leaves the index folder");
    BAD("{\"name\": \"t\", \"file\": \"sub/../../outside.bin\", \"dtype\": \"u8\", \"shape\": [8]}",
        "leaves the index folder");
    BAD("{\"name\": \"t\", \"file\": \"/etc/passwd\", \"dtype\": \"u8\", \"shape\": [8]}",
        "relative path");
    BAD("{\"name\": \"t\", \"file\": \"link.bin\", \"dtype\": \"u8\", \"shape\": [8]}",
        "leaves the index folder");
    BAD("{\"name\": \"t\", \"file\": \"sub/0001.bin\", \"dtype\": \"f32\", \"shape\": [3]}",
        "byte size 12 at offset 0 does not fit");
    BAD("{\"name\": \"t\", \"file\": \"sub/0001.bin\", \"dtype\": \"f32\", \"shape\": [1]}",
        "is 8, shape and dtype need 4");
    BAD("{\"name\": \"t\", \"file\": \"sub/0001.bin\", \"offset\": 4, \"dtype\": \"f32\","
        " \"shape\": [2]}",
        "does not fit");
    BAD("{\"name\": \"t\", \"file\": \"sub/0001.bin\", \"dtype\": \"q4\", \"shape\": [8]}",
        "\"q4\" is not one of");
    BAD("{\"name\": \"t\", \"file\": \"nope.bin\", \"dtype\": \"u8\", \"shape\": [8]}",
        "cannot open");
    BAD("{\"name\": \"t\", \"file\": \"sub/0001.bin\", \"dtype\": \"u8\", \"shape\": [8],"
        " \"sha256\": \"ABC\"}",
        "does not match pattern");
    BAD("{\"name\": \"t\", \"file\": \"pack.bin\", \"dtype\": \"u8\", \"shape\": [4]},"
        "{\"name\": \"u\", \"file\": \"pack.bin\", \"offset\": 2, \"dtype\": \"u8\","
        " \"shape\": [4]}",
        "overlap");
    BAD("{\"name\": \"t\", \"file\": \"pack.bin\", \"dtype\": \"u8\", \"shape\": [4]},"
        "{\"name\": \"u\", \"file\": \"./sub/../pack.bin\", \"offset\": 2, \"dtype\": \"u8\","
        " \"shape\": [4]}",
        "leaves the index folder");
    BAD("{\"name\": \"t\", \"file\": \"pack.bin\", \"dtype\": \"u8\", \"shape\": [4]},"
        "{\"name\": \"u\", \"file\": \"./pack.bin\", \"offset\": 2, \"dtype\": \"u8\","
        " \"shape\": [4]}",
        "overlap");
    BAD("{\"name\": \"t\", \"file\": \"sub/0001.bin\", \"dtype\": \"u8\","
        " \"shape\": [4294967296, 4294967296, 2]}",
        "overflow");
    BAD("{\"name\": \"named\", \"file\": \"sub/0001.bin\", \"dtype\": \"f32\", \"shape\": [3]}",
        "named");
#undef BAD
    index_error("{\"schema\": \"calculet-dump-index/v2\", \"tensors\": []}", "schema");
    /* schema violations carry the line and column of the offending node */
    index_error("{\"schema\": \"calculet-dump-index/v1\",\n \"tensors\": [\n"
                "  {\"name\": \"t\", \"file\": \"x.bin\", \"dtype\": \"u8\"}]}",
                "bad.json:3:");
    index_error("{\"schema\": \"calculet-dump-index/v1\",\n \"tensors\": [\n"
                "  {\"name\": \"t\", \"file\": \"x.bin\", \"dtype\": \"u8\", \"shape\": [-1]}]}",
                "bad.json:3:");
    index_error("{\"schema\": \"calculet-dump-index/v1\", \"tensors\": [] ", "bad.json");
}

static void test_folder_and_names(void)
{
    make_dir();
    CU_ASSERT_FATAL(mkdir(pathf("tree"), 0755) == 0 && mkdir(pathf("tree/b"), 0755) == 0);
    CU_ASSERT_FATAL(mkdir(pathf("tree/a"), 0755) == 0);
    unsigned char one = 1;
    const char *d = "{'descr': '|u1', 'fortran_order': False, 'shape': (1,), }";
    write_npy("tree/b/z.npy", 1, d, &one, 1);
    write_npy("tree/a/y.npy", 1, d, &one, 1);
    write_npy("tree/c.npy", 1, d, &one, 1);
    write_npy("tree/.hidden.npy", 1, d, &one, 1);
    write_file("tree/notes.txt", "hello", 5);
    write_file("tree/other.json", "{\"schema\": \"something/v1\"}", 27);
    write_file("tree/a/d.bin", &one, 1);
    const char *ij = "{\"schema\": \"calculet-dump-index/v1\", \"tensors\": [{\"name\": \"raw/d\","
                     " \"file\": \"d.bin\", \"dtype\": \"i8\", \"shape\": [1]}]}";
    write_file("tree/a/index.json", ij, strlen(ij));
    golden_input_list l;
    golden_input_list_init(&l);
    golden_error err;
    CU_ASSERT_FATAL(golden_ingest_path(&l, pathf("tree"), &err) == GOLDEN_OK);
    CU_ASSERT_FATAL(l.count == 4);
    CU_ASSERT_STRING_EQUAL(l.items[0].info.name, "raw/d");
    CU_ASSERT_STRING_EQUAL(l.items[1].info.name, "a/y");
    CU_ASSERT_STRING_EQUAL(l.items[2].info.name, "b/z");
    CU_ASSERT_STRING_EQUAL(l.items[3].info.name, "c");
    CU_ASSERT(golden_input_list_finish(&l, "run1/", &err) == GOLDEN_OK);
    CU_ASSERT_STRING_EQUAL(l.items[3].info.name, "run1/c");
    golden_input_list_free(&l);
    /* the same folder twice: every name is a duplicate */
    golden_input_list_init(&l);
    CU_ASSERT_FATAL(golden_ingest_path(&l, pathf("tree"), &err) == GOLDEN_OK);
    CU_ASSERT_FATAL(golden_ingest_path(&l, pathf("tree"), &err) == GOLDEN_OK);
    CU_ASSERT(golden_input_list_finish(&l, "run1", &err) == GOLDEN_ERR);
    CU_ASSERT(strstr(err.what, "duplicate tensor name") != NULL);
    golden_input_list_free(&l);

    /* an empty folder adds nothing */
    CU_ASSERT_FATAL(mkdir(pathf("empty"), 0755) == 0);
    golden_input_list_init(&l);
    CU_ASSERT(golden_ingest_path(&l, pathf("empty"), &err) == GOLDEN_OK && l.count == 0);
    golden_input_list_free(&l);

    golden_input_list_init(&l);
    CU_ASSERT_FATAL(golden_ingest_npy(&l, pathf("tree/c.npy"), "a/../b", &err) == GOLDEN_OK);
    CU_ASSERT(golden_input_list_finish(&l, NULL, &err) == GOLDEN_ERR);
    CU_ASSERT(strstr(err.where, "c.npy") != NULL);
    golden_input_list_free(&l);
}

static void cleanup(void)
{
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (dir[0] && system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", dir);
}

static void test_zz_cleanup(void)
{
    cleanup();
    CU_PASS("cleaned");
}

int main(void)
{
    static const golden_test tests[] = {
        {"descr_map", test_descr_map},
        {"npy_v1_c_order", test_npy_v1_c_order},
        {"npy_v2_v3_big_endian", test_npy_v2_v3_big_endian},
        {"npy_scalar_and_empty", test_npy_scalar_and_empty},
        {"npy_fortran", test_npy_fortran},
        {"npy_errors", test_npy_errors},
        {"mutated_headers", test_mutated_headers},
        {"shrinking_file", test_shrinking_file},
        {"safetensors", test_safetensors},
        {"index", test_index},
        {"folder_and_names", test_folder_and_names},
        {"zz_cleanup", test_zz_cleanup},
        {0, 0},
    };
    return golden_test_run("ingest", tests);
}
