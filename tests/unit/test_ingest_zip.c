/* Unit tests of the zip container (.npz, .pt), the deflated streams and the restricted
 * unpickler, on archives and pickles the tests assemble byte by byte; expected values are
 * worked out by hand (offsets, element values), never taken from the readers. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "cunit_main.h"
#include "golden/ingest.h"
#include "tensor/unpickle_private.h"
#include "tensor/zip_private.h"

static char dir[256];

static char *pathf(const char *name)
{
    static char buf[4][512];
    static int k;
    if (!dir[0]) {
        const char *tmp = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
        snprintf(dir, sizeof dir, "%s/golden-zip.XXXXXX", tmp);
        CU_ASSERT_FATAL(mkdtemp(dir) != NULL);
    }
    k = (k + 1) % 4;
    snprintf(buf[k], sizeof buf[k], "%s/%s", dir, name);
    return buf[k];
}

/* ---------------------------------------------------------------- a small zip writer */

typedef struct {
    unsigned char b[1 << 20];
    size_t n;
} zbuf;

static void put(zbuf *z, const void *p, size_t n)
{
    CU_ASSERT_FATAL(z->n + n <= sizeof z->b);
    memcpy(z->b + z->n, p, n);
    z->n += n;
}
static void put16(zbuf *z, unsigned v)
{
    unsigned char b[2] = {(unsigned char)v, (unsigned char)(v >> 8)};
    put(z, b, 2);
}
static void put32(zbuf *z, uint32_t v)
{
    unsigned char b[4] = {(unsigned char)v, (unsigned char)(v >> 8), (unsigned char)(v >> 16),
                          (unsigned char)(v >> 24)};
    put(z, b, 4);
}
static void put64(zbuf *z, uint64_t v)
{
    put32(z, (uint32_t)v);
    put32(z, (uint32_t)(v >> 32));
}

typedef struct {
    const char *name;
    const void *body; /* uncompressed */
    size_t len;
    int method;       /* 0 stored, 8 deflated */
} member;

/* Raw deflate of body into out; returns the compressed size. */
static size_t deflate_raw(const void *body, size_t len, unsigned char *out, size_t cap)
{
    z_stream zs;
    memset(&zs, 0, sizeof zs);
    CU_ASSERT_FATAL(deflateInit2(&zs, 6, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY) == Z_OK);
    zs.next_in = (unsigned char *)body;
    zs.avail_in = (uInt)len;
    zs.next_out = out;
    zs.avail_out = (uInt)cap;
    CU_ASSERT_FATAL(deflate(&zs, Z_FINISH) == Z_STREAM_END);
    size_t n = zs.total_out;
    deflateEnd(&zs);
    return n;
}

/* A zip of the members; zip64 writes the sizes and offsets through ZIP64 fields. Returns the
 * data offset of each member in data_off (may be NULL). */
static void make_zip(zbuf *z, const member *m, int n, bool zip64, uint64_t *data_off)
{
    static unsigned char comp[1 << 19];
    uint32_t crc[16];
    uint64_t off[16], csz[16];
    z->n = 0;
    for (int i = 0; i < n; i++) {
        const unsigned char *data = m[i].body;
        size_t dn = m[i].len;
        crc[i] = (uint32_t)crc32(0, m[i].body, (uInt)m[i].len);
        if (m[i].method == 8) {
            dn = deflate_raw(m[i].body, m[i].len, comp, sizeof comp);
            data = comp;
        }
        csz[i] = dn;
        off[i] = z->n;
        put32(z, 0x04034b50);
        put16(z, 45);
        put16(z, 0);
        put16(z, (unsigned)m[i].method);
        put32(z, 0);
        put32(z, crc[i]);
        put32(z, zip64 ? 0xFFFFFFFFu : (uint32_t)dn);
        put32(z, zip64 ? 0xFFFFFFFFu : (uint32_t)m[i].len);
        put16(z, (unsigned)strlen(m[i].name));
        put16(z, zip64 ? 20 : 0);
        put(z, m[i].name, strlen(m[i].name));
        if (zip64) {
            put16(z, 1);
            put16(z, 16);
            put64(z, m[i].len);
            put64(z, dn);
        }
        if (data_off)
            data_off[i] = z->n;
        put(z, data, dn);
    }
    uint64_t cd = z->n;
    for (int i = 0; i < n; i++) {
        put32(z, 0x02014b50);
        put16(z, 45);
        put16(z, 45);
        put16(z, 0);
        put16(z, (unsigned)m[i].method);
        put32(z, 0);
        put32(z, crc[i]);
        put32(z, zip64 ? 0xFFFFFFFFu : (uint32_t)csz[i]);
        put32(z, zip64 ? 0xFFFFFFFFu : (uint32_t)m[i].len);
        put16(z, (unsigned)strlen(m[i].name));
        put16(z, zip64 ? 28 : 0);
        put16(z, 0);
        put16(z, 0);
        put16(z, 0);
        put32(z, 0);
        put32(z, zip64 ? 0xFFFFFFFFu : (uint32_t)off[i]);
        put(z, m[i].name, strlen(m[i].name));
        if (zip64) {
            put16(z, 1);
            put16(z, 24);
            put64(z, m[i].len);
            put64(z, csz[i]);
            put64(z, off[i]);
        }
    }
    uint64_t cdn = z->n - cd;
    if (zip64) {
        uint64_t r64 = z->n;
        put32(z, 0x06064b50);
        put64(z, 44);
        put16(z, 45);
        put16(z, 45);
        put32(z, 0);
        put32(z, 0);
        put64(z, (uint64_t)n);
        put64(z, (uint64_t)n);
        put64(z, cdn);
        put64(z, cd);
        put32(z, 0x07064b50);
        put32(z, 0);
        put64(z, r64);
        put32(z, 1);
    }
    put32(z, 0x06054b50);
    put16(z, 0);
    put16(z, 0);
    put16(z, zip64 ? 0xFFFF : (unsigned)n);
    put16(z, zip64 ? 0xFFFF : (unsigned)n);
    put32(z, zip64 ? 0xFFFFFFFFu : (uint32_t)cdn);
    put32(z, zip64 ? 0xFFFFFFFFu : (uint32_t)cd);
    put16(z, 0);
}

static void write_buf(const char *path, const void *p, size_t n)
{
    FILE *f = fopen(path, "wb");
    CU_ASSERT_FATAL(f != NULL);
    CU_ASSERT_FATAL(fwrite(p, 1, n, f) == n);
    fclose(f);
}

/* A v1 .npy of 128 header bytes followed by data. */
static size_t npy(unsigned char *out, const char *descr, const char *shape, const void *data, size_t n)
{
    char dict[128];
    snprintf(dict, sizeof dict, "{'descr': '%s', 'fortran_order': False, 'shape': %s, }", descr, shape);
    memcpy(out, "\x93NUMPY\x01\x00\x76\x00", 10);
    memset(out + 10, ' ', 118);
    memcpy(out + 10, dict, strlen(dict));
    out[127] = '\n';
    memcpy(out + 128, data, n);
    return 128 + n;
}

typedef struct {
    unsigned char *b;
    size_t n, cap;
} collect_t;

static int collect_fn(void *ctx, const void *data, size_t n, golden_error *err)
{
    (void)err;
    collect_t *c = ctx;
    if (c->n + n > c->cap)
        return -1;
    memcpy(c->b + c->n, data, n);
    c->n += n;
    return 0;
}

/* ---------------------------------------------------------------- .npz */

static void test_npz_stored(void)
{
    static zbuf z;
    unsigned char a[256], b[256];
    const float av[2] = {1.0f, 2.0f};
    const unsigned char bv[6] = {0x00, 0x01, 0xff, 0xfe, 0x01, 0x02}; /* >i2: 1, -2, 258 */
    member m[2] = {{"a.npy", a, npy(a, "<f4", "(2,)", av, 8), 0},
                   {"b.npy", b, npy(b, ">i2", "(3,)", bv, 6), 0}};
    uint64_t doff[2];
    make_zip(&z, m, 2, false, doff);
    /* by hand: member 0's data starts after its 30-byte local header and 5-byte name */
    CU_ASSERT_EQUAL(doff[0], 35);
    write_buf(pathf("s.npz"), z.b, z.n);
    golden_input_list l;
    golden_input_list_init(&l);
    golden_error err = {0};
    CU_ASSERT_FATAL(golden_ingest_npz(&l, pathf("s.npz"), &err) == GOLDEN_OK);
    CU_ASSERT_FATAL(l.count == 2);
    CU_ASSERT_STRING_EQUAL(l.items[0].info.name, "a");
    CU_ASSERT_EQUAL(l.items[0].info.dtype, GOLDEN_F32);
    CU_ASSERT_EQUAL(l.items[0].offset, 35 + 128);
    CU_ASSERT_EQUAL(l.items[0].format, GOLDEN_INPUT_NPY);
    CU_ASSERT_STRING_EQUAL(l.items[1].info.name, "b");
    CU_ASSERT_EQUAL(l.items[1].offset, doff[1] + 128);
    CU_ASSERT(l.items[1].big_endian);
    unsigned char got[16];
    collect_t c = {got, 0, sizeof got};
    CU_ASSERT(golden_input_read(&l.items[1], 0, collect_fn, &c, &err) == GOLDEN_OK);
    const unsigned char want[6] = {0x01, 0x00, 0xfe, 0xff, 0x02, 0x01};
    CU_ASSERT(c.n == 6 && memcmp(got, want, 6) == 0);
    golden_input_list_free(&l);
}

static void test_npz_deflated_and_zip64(void)
{
    enum { N = 20000 };
    static float v[N];
    static unsigned char body[128 + sizeof v];
    static zbuf z;
    for (int i = 0; i < N; i++)
        v[i] = (float)i * 0.5f;
    member m[1] = {{"big.npy", body, npy(body, "<f4", "(20000,)", v, sizeof v), 8}};
    for (int pass = 0; pass < 2; pass++) {
        make_zip(&z, m, 1, pass == 1, NULL);
        write_buf(pathf("d.npz"), z.b, z.n);
        golden_input_list l;
        golden_input_list_init(&l);
        golden_error err = {0};
        CU_ASSERT_FATAL(golden_ingest_npz(&l, pathf("d.npz"), &err) == GOLDEN_OK);
        CU_ASSERT_FATAL(l.count == 1);
        golden_input *in = &l.items[0];
        CU_ASSERT_EQUAL(in->format, GOLDEN_INPUT_DEFLATED);
        CU_ASSERT_EQUAL(in->zip_skip, 128);
        CU_ASSERT_EQUAL(in->zip_usize, 128 + sizeof v);
        static unsigned char got[sizeof v];
        collect_t c = {got, 0, sizeof got};
        CU_ASSERT(golden_input_read(in, 4000, collect_fn, &c, &err) == GOLDEN_OK);
        CU_ASSERT(c.n == sizeof v && memcmp(got, v, sizeof v) == 0);
        /* random access: forward, backward (a restart), the last bytes (CRC checked) */
        float x[4];
        CU_ASSERT(lg_ingest_deflated_pread(in, 4 * 1000, 16, x, &err) == GOLDEN_OK);
        CU_ASSERT(x[0] == 500.0f && x[3] == 501.5f);
        CU_ASSERT(lg_ingest_deflated_pread(in, 4 * 19000, 4, x, &err) == GOLDEN_OK);
        CU_ASSERT(x[0] == 9500.0f);
        CU_ASSERT(lg_ingest_deflated_pread(in, 4 * 10, 8, x, &err) == GOLDEN_OK);
        CU_ASSERT(x[0] == 5.0f && x[1] == 5.5f);
        CU_ASSERT(lg_ingest_deflated_pread(in, 4 * (N - 2), 8, x, &err) == GOLDEN_OK);
        CU_ASSERT(x[1] == (float)(N - 1) * 0.5f);
        CU_ASSERT(lg_ingest_deflated_pread(in, 4 * (N - 1), 8, x, &err) != GOLDEN_OK);
        golden_input_list_free(&l);
    }
    /* a damaged CRC fails the streamed read at its end, and the pread of the last bytes */
    make_zip(&z, m, 1, false, NULL);
    size_t cd = z.n - 22 - (46 + 7);
    z.b[cd + 16] ^= 1;
    z.b[14] ^= 1; /* the local header's copy too */
    write_buf(pathf("crc.npz"), z.b, z.n);
    golden_input_list l;
    golden_input_list_init(&l);
    golden_error err = {0};
    CU_ASSERT_FATAL(golden_ingest_npz(&l, pathf("crc.npz"), &err) == GOLDEN_OK);
    static unsigned char got2[sizeof v];
    collect_t c = {got2, 0, sizeof got2};
    CU_ASSERT(golden_input_read(&l.items[0], 0, collect_fn, &c, &err) != GOLDEN_OK);
    CU_ASSERT(strstr(err.what, "CRC-32") != NULL);
    float x;
    CU_ASSERT(lg_ingest_deflated_pread(&l.items[0], 0, 4, &x, &err) == GOLDEN_OK);
    CU_ASSERT(lg_ingest_deflated_pread(&l.items[0], 4 * (N - 1), 4, &x, &err) != GOLDEN_OK);
    golden_input_list_free(&l);
}

static int npz_error(const member *m, int n, const char *name, const char *want)
{
    static zbuf z;
    make_zip(&z, m, n, false, NULL);
    write_buf(pathf(name), z.b, z.n);
    golden_input_list l;
    golden_input_list_init(&l);
    golden_error err = {0};
    int rc = golden_ingest_npz(&l, pathf(name), &err);
    CU_ASSERT(l.count == 0);
    golden_input_list_free(&l);
    if (rc == GOLDEN_OK || !strstr(err.what, want)) {
        fprintf(stderr, "%s: rc %d, '%s'\n", name, rc, err.what);
        return -1;
    }
    return 0;
}

static void test_zip_names_and_structure(void)
{
    unsigned char a[256];
    size_t an = npy(a, "<f4", "(2,)", "\0\0\0\0\0\0\0\0", 8);
    member dotdot[1] = {{"../a.npy", a, an, 0}}, abs_[1] = {{"/a.npy", a, an, 0}};
    member back[1] = {{"x\\a.npy", a, an, 0}}, dup[2] = {{"a.npy", a, an, 0}, {"a.npy", a, an, 0}};
    member txt[1] = {{"a.txt", a, an, 0}};
    CU_ASSERT(npz_error(dotdot, 1, "dd.npz", "not a plain relative path") == 0);
    CU_ASSERT(npz_error(abs_, 1, "abs.npz", "not a plain relative path") == 0);
    CU_ASSERT(npz_error(back, 1, "back.npz", "not a plain relative path") == 0);
    CU_ASSERT(npz_error(dup, 2, "dup.npz", "appears twice") == 0);
    CU_ASSERT(npz_error(txt, 1, "txt.npz", "is not a .npy array") == 0);

    /* truncation anywhere, a comment length that misses the end, overlaps, a bomb ratio */
    static zbuf z;
    member two[2] = {{"a.npy", a, an, 0}, {"b.npy", a, an, 0}};
    make_zip(&z, two, 2, false, NULL);
    golden_error err = {0};
    golden_input_list l;
    golden_input_list_init(&l);
    for (size_t cut = 0; cut < z.n; cut += 7) {
        write_buf(pathf("cut.npz"), z.b, cut);
        CU_ASSERT(golden_ingest_npz(&l, pathf("cut.npz"), &err) != GOLDEN_OK);
    }
    z.b[z.n - 2] = 5; /* comment of 5 bytes that are not there */
    write_buf(pathf("cm.npz"), z.b, z.n);
    CU_ASSERT(golden_ingest_npz(&l, pathf("cm.npz"), &err) != GOLDEN_OK);
    make_zip(&z, two, 2, false, NULL);
    size_t cd0 = z.n - 22 - 2 * (46 + 5);
    uint32_t big = (uint32_t)(an + 40); /* member a's sizes grown over b's local header */
    memcpy(z.b + cd0 + 20, &big, 4);
    memcpy(z.b + cd0 + 24, &big, 4);
    write_buf(pathf("ovl.npz"), z.b, z.n);
    CU_ASSERT(golden_ingest_npz(&l, pathf("ovl.npz"), &err) != GOLDEN_OK);
    CU_ASSERT(strstr(err.what, "overlap") != NULL);
    member d1[1] = {{"a.npy", a, an, 8}};
    make_zip(&z, d1, 1, false, NULL);
    size_t cd1 = z.n - 22 - (46 + 5);
    uint32_t cs;
    memcpy(&cs, z.b + cd1 + 20, 4);
    uint32_t claim = cs * 2000;
    memcpy(z.b + cd1 + 24, &claim, 4);
    write_buf(pathf("bomb.npz"), z.b, z.n);
    CU_ASSERT(golden_ingest_npz(&l, pathf("bomb.npz"), &err) != GOLDEN_OK);
    CU_ASSERT(strstr(err.what, "zip bomb") != NULL);
    CU_ASSERT(l.count == 0);
    golden_input_list_free(&l);
}

/* ---------------------------------------------------------------- the unpickler */

/* torch.save's pickle of {'w': tensor of shape (2, 3) stride (S0, S1) over FloatStorage '0' of 6}. */
static size_t sd_pickle(unsigned char *out, int s0, int s1, int d0, int d1)
{
    static const char head[] =
        "\x80\x02}q\x00(X\x01\x00\x00\x00wq\x01" "ctorch._utils\n_rebuild_tensor_v2\nq\x02"
        "((X\x07\x00\x00\x00storageq\x03" "ctorch\nFloatStorage\nq\x04" "X\x01\x00\x00\x00" "0q\x05"
        "X\x03\x00\x00\x00" "cpuq\x06K\x06tq\x07QK\x00";
    size_t n = sizeof head - 1;
    memcpy(out, head, n);
    unsigned char mid[] = {'K', (unsigned char)d0, 'K', (unsigned char)d1, 0x86, 'K', (unsigned char)s0,
                           'K', (unsigned char)s1, 0x86, 0x89};
    memcpy(out + n, mid, sizeof mid);
    n += sizeof mid;
    static const char tail[] = "ccollections\nOrderedDict\nq\x08)Rq\x09tq\x0aRq\x0bu.";
    memcpy(out + n, tail, sizeof tail - 1);
    return n + sizeof tail - 1;
}

static void test_unpickle_state_dict(void)
{
    unsigned char p[512];
    size_t n = sd_pickle(p, 3, 1, 2, 3);
    lg_pickle pk;
    golden_error err = {0};
    CU_ASSERT_FATAL(lg_unpickle(p, n, "t", &pk, &err) == GOLDEN_OK);
    CU_ASSERT_FATAL(pk.root->kind == LG_PK_DICT && pk.root->n == 2);
    const lg_pk_val *k = pk.root->items[0], *v = pk.root->items[1];
    CU_ASSERT(k->kind == LG_PK_STR && k->slen == 1 && k->s[0] == 'w');
    CU_ASSERT_FATAL(v->kind == LG_PK_TENSOR);
    CU_ASSERT(v->t->rank == 2 && v->t->shape[0] == 2 && v->t->shape[1] == 3);
    CU_ASSERT(v->t->stride[0] == 3 && v->t->stride[1] == 1 && v->t->offset == 0);
    CU_ASSERT(v->t->storage->dtype == GOLDEN_F32 && v->t->storage->i == 6);
    CU_ASSERT(v->t->storage->slen == 1 && v->t->storage->s[0] == '0');
    lg_pickle_free(&pk);

    /* protocol 4: FRAME, SHORT_BINUNICODE, MEMOIZE, STACK_GLOBAL, BINGET of a memoized value */
    static const unsigned char p4[] = "\x80\x04\x95\x1f\x00\x00\x00\x00\x00\x00\x00"
                                      "\x8c\x0b" "collections\x94\x8c\x0bOrderedDict\x94\x93\x94"
                                      ")R\x94h\x02)R\x86.";
    CU_ASSERT_FATAL(lg_unpickle(p4, sizeof p4 - 1, "t", &pk, &err) == GOLDEN_OK);
    CU_ASSERT(pk.root->kind == LG_PK_TUPLE && pk.root->n == 2 && pk.root->items[1]->kind == LG_PK_DICT);
    lg_pickle_free(&pk);

    /* scalars: LONG1 -256 and -1, BININT -1, BININT2 513, BINFLOAT 1.5 */
    static const unsigned char sc[] = "\x80\x02(\x8a\x02\x00\xff\x8a\x01\xffJ\xff\xff\xff\xffM\x01\x02"
                                      "G\x3f\xf8\x00\x00\x00\x00\x00\x00t.";
    CU_ASSERT_FATAL(lg_unpickle(sc, sizeof sc - 1, "t", &pk, &err) == GOLDEN_OK);
    CU_ASSERT_FATAL(pk.root->kind == LG_PK_TUPLE && pk.root->n == 5);
    CU_ASSERT(pk.root->items[0]->i == -256 && pk.root->items[1]->i == -1 && pk.root->items[2]->i == -1);
    CU_ASSERT(pk.root->items[3]->i == 513 && pk.root->items[4]->f == 1.5);
    lg_pickle_free(&pk);
}

static int pk_error(const void *p, size_t n, const char *want);
#define PKE(lit, want) pk_error(lit, sizeof lit - 1, want)

/* bytes as pickle protocol 2 writes them (torch.save's default): pickle.dumps((b'ab\xff', b''), 2)
 * is _codecs.encode('ab\u00ff', 'latin1') (the text in UTF-8: c3 bf) and __builtin__.bytes(). */
static void test_unpickle_protocol2_bytes(void)
{
    static const unsigned char p[] = "\x80\x02" "c_codecs\nencode\nq\x00X\x04\x00\x00\x00" "ab\xc3\xbfq\x01"
                                     "X\x06\x00\x00\x00" "latin1q\x02\x86q\x03Rq\x04"
                                     "c__builtin__\nbytes\nq\x05)Rq\x06\x86q\x07.";
    lg_pickle pk;
    golden_error err = {0};
    CU_ASSERT_FATAL(lg_unpickle(p, sizeof p - 1, "t", &pk, &err) == GOLDEN_OK);
    CU_ASSERT_FATAL(pk.root->kind == LG_PK_TUPLE && pk.root->n == 2);
    const lg_pk_val *a = pk.root->items[0], *b = pk.root->items[1];
    CU_ASSERT(a->kind == LG_PK_BYTES && a->slen == 3 && memcmp(a->s, "ab\xff", 3) == 0);
    CU_ASSERT(b->kind == LG_PK_BYTES && b->slen == 0);
    lg_pickle_free(&pk);
    /* only (str, 'latin1'): never a general call of _codecs.encode, nor any other _codecs name */
    CU_ASSERT(PKE("\x80\x02" "c_codecs\nencode\nX\x01\x00\x00\x00" "aX\x05\x00\x00\x00" "utf-8\x86R.",
                  "other than (str, 'latin1')") == 0);
    CU_ASSERT(PKE("\x80\x02" "c_codecs\nencode\nX\x01\x00\x00\x00" "a\x85R.", "other than (str, 'latin1')") == 0);
    CU_ASSERT(PKE("\x80\x02" "c_codecs\ndecode\nX\x01\x00\x00\x00" "aX\x06\x00\x00\x00" "latin1\x86R.",
                  "a Python object (_codecs decode)") == 0);
    /* U+0100 (c4 80) has no latin-1 byte: Python's encode would raise */
    CU_ASSERT(PKE("\x80\x02" "c_codecs\nencode\nX\x02\x00\x00\x00\xc4\x80X\x06\x00\x00\x00" "latin1\x86R.",
                  "not latin-1") == 0);
    CU_ASSERT(PKE("\x80\x02" "c__builtin__\nbytes\nK\x03\x85R.", "bytes() with arguments") == 0);
}

static int pk_error(const void *p, size_t n, const char *want)
{
    lg_pickle pk;
    golden_error err = {0};
    int rc = lg_unpickle(p, n, "t", &pk, &err);
    if (rc == GOLDEN_OK) {
        lg_pickle_free(&pk);
        return -1;
    }
    if (!strstr(err.what, want)) {
        fprintf(stderr, "want '%s', got '%s'\n", want, err.what);
        return -1;
    }
    return 0;
}


static void test_unpickle_refusals(void)
{
    CU_ASSERT(PKE("\x80\x02" "cos\nsystem\n(X\x02\x00\x00\x00lstR.", "(os system)") == 0);
    CU_ASSERT(PKE("\x80\x02" "ctorch.nn.modules.linear\nLinear\n)\x81.",
                  "a PyTorch pickle of a module object (torch.nn.modules.linear Linear): only tensors and state_dicts are read") == 0);
    CU_ASSERT(PKE("\x80\x04\x8c\x08" "builtins\x8c\x04" "eval\x93.", "(builtins eval)") == 0);
    CU_ASSERT(PKE("\x80\x02}r\x00\x00\x10\x00.", "memo index 1048576 too large") == 0);
    CU_ASSERT(PKE("\x80\x02h\x03.", "memo slot 3 is empty") == 0);
    CU_ASSERT(PKE("\x80\x02\xfe.", "opcode 0xfe") == 0);
    CU_ASSERT(PKE("\x80\x01N.", "protocol 1") == 0);
    CU_ASSERT(PKE("\x80\x02N.N", "bytes after STOP") == 0);
    CU_ASSERT(PKE("\x80\x02NN.", "STOP with other than one value") == 0);
    CU_ASSERT(PKE("\x80\x02t.", "no MARK") == 0);
    CU_ASSERT(PKE("\x80\x02}Ns.", "stack underflow") == 0);
    CU_ASSERT(PKE("\x80\x02N(\x85.", "stack underflow") == 0); /* TUPLE1 may not reach below a MARK */
    CU_ASSERT(PKE("\x80\x02X\xff\xff\xff\x00", "string of 16777215 bytes") == 0);
    CU_ASSERT(PKE("\x80\x02X\x10\x00\x00\x00" "ab", "truncated") == 0);
    CU_ASSERT(PKE("\x80\x02N", "without STOP") == 0);
    CU_ASSERT(PKE("\x80\x02\x8a\x09\x00\x00\x00\x00\x00\x00\x00\x00\x00.", "integer of 9 bytes") == 0);
    CU_ASSERT(PKE("\x80\x02" "ctorch\nFloatStorage\n)R.", "calls a storage type") == 0);
    CU_ASSERT(PKE("\x80\x02" "ccollections\nOrderedDict\n)RNb.", "") != 0); /* BUILD None on a dict: fine */
    unsigned char marks[300];
    memcpy(marks, "\x80\x02", 2);
    memset(marks + 2, '(', sizeof marks - 2);
    CU_ASSERT(pk_error(marks, sizeof marks, "more than 256 MARKs") == 0);
}

/* ---------------------------------------------------------------- .pt */

static void test_pt_tensors(void)
{
    static zbuf z;
    float st[6] = {0, 1, 2, 3, 4, 5};
    unsigned char p[512];
    for (int layout = 0; layout < 3; layout++) {
        /* C order (2,3) stride (3,1); transposed (3,2) stride (1,3); strided (2,2) stride (3,2) */
        size_t n = layout == 0 ? sd_pickle(p, 3, 1, 2, 3) : layout == 1 ? sd_pickle(p, 1, 3, 3, 2)
                                                                         : sd_pickle(p, 3, 2, 2, 2);
        member m[3] = {{"ck/data.pkl", p, n, 0}, {"ck/data/0", st, sizeof st, 0}, {"ck/version", "3\n", 2, 0}};
        uint64_t doff[3];
        make_zip(&z, m, 3, false, doff);
        write_buf(pathf("ck.pt"), z.b, z.n);
        golden_input_list l;
        golden_input_list_init(&l);
        golden_error err = {0};
        int rc = golden_ingest_pt(&l, pathf("ck.pt"), &err);
        if (layout == 2) {
            CU_ASSERT(rc != GOLDEN_OK && strstr(err.what, "non-contiguous") && strstr(err.where, ":w"));
            golden_input_list_free(&l);
            continue;
        }
        CU_ASSERT_FATAL(rc == GOLDEN_OK && l.count == 1);
        golden_input *in = &l.items[0];
        CU_ASSERT_STRING_EQUAL(in->info.name, "w");
        CU_ASSERT_EQUAL(in->offset, doff[1]);
        CU_ASSERT_EQUAL(in->fortran_order, layout == 1);
        float got[6];
        collect_t c = {(unsigned char *)got, 0, sizeof got};
        CU_ASSERT(golden_input_read(in, 0, collect_fn, &c, &err) == GOLDEN_OK);
        /* transposed: element [i][j] of the (3,2) view is storage[i + 3j] */
        const float want_c[6] = {0, 1, 2, 3, 4, 5}, want_t[6] = {0, 3, 1, 4, 2, 5};
        CU_ASSERT(c.n == sizeof got && memcmp(got, layout == 1 ? want_t : want_c, sizeof got) == 0);
        golden_input_list_free(&l);
    }
    /* a storage member of the wrong size, and a missing one */
    size_t n = sd_pickle(p, 3, 1, 2, 3);
    member bad[2] = {{"ck/data.pkl", p, n, 0}, {"ck/data/0", st, 20, 0}};
    make_zip(&z, bad, 2, false, NULL);
    write_buf(pathf("bad.pt"), z.b, z.n);
    golden_input_list l;
    golden_input_list_init(&l);
    golden_error err = {0};
    CU_ASSERT(golden_ingest_pt(&l, pathf("bad.pt"), &err) != GOLDEN_OK);
    CU_ASSERT(strstr(err.what, "holds 20 bytes, not 6 elements") != NULL);
    make_zip(&z, bad, 1, false, NULL);
    write_buf(pathf("bad.pt"), z.b, z.n);
    CU_ASSERT(golden_ingest_pt(&l, pathf("bad.pt"), &err) != GOLDEN_OK);
    CU_ASSERT(strstr(err.what, "storage member 'ck/data/0' is missing") != NULL);
    /* the legacy format */
    write_buf(pathf("old.pt"), "\x80\x02\x8a\x0a\x6c\xfc\x9c\x46\xf9\x20\x6a\xa8\x50\x19.", 15);
    CU_ASSERT(golden_ingest_pt(&l, pathf("old.pt"), &err) != GOLDEN_OK);
    CU_ASSERT(strstr(err.what, "legacy") != NULL);
    CU_ASSERT(l.count == 0);
    golden_input_list_free(&l);
}

static void test_zz_cleanup(void)
{
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (dir[0] && system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", dir);
    CU_PASS("cleaned");
}

int main(void)
{
    static const golden_test tests[] = {
        {"npz_stored", test_npz_stored},
        {"npz_deflated_and_zip64", test_npz_deflated_and_zip64},
        {"zip_names_and_structure", test_zip_names_and_structure},
        {"unpickle_state_dict", test_unpickle_state_dict},
        {"unpickle_refusals", test_unpickle_refusals},
        {"unpickle_protocol2_bytes", test_unpickle_protocol2_bytes},
        {"pt_tensors", test_pt_tensors},
        {"zz_cleanup", test_zz_cleanup},
        {0, 0},
    };
    return golden_test_run("ingest_zip", tests);
}
