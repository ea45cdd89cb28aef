/* The golden file writer and reader: round trips of every element type and shape kind,
 * linear-range reads across row boundaries (direct and through HDF5), attributes against
 * hand-worked values, name conflicts, and no output left after a failure. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <hdf5.h>
#include <signal.h>

#include "cunit_main.h"
#include "golden/hash.h"
#include "golden/store.h"
#include "tensor/store_private.h"

static char path[256];

static void fresh_path(const char *tag)
{
    snprintf(path, sizeof path, "store-%s-%d.h5", tag, (int)getpid());
    unlink(path);
}

static golden_tensor_info info_of(const char *name, golden_dtype dt, int rank,
                                  const uint64_t *shape)
{
    golden_tensor_info t = {0};
    t.name = (char *)name;
    t.dtype = dt;
    t.rank = rank;
    for (int i = 0; i < rank; i++)
        t.shape[i] = shape[i];
    return t;
}

/* write `bytes` in pieces of odd sizes to exercise element-straddling appends */
static int write_pieces(golden_writer *w, const void *data, size_t n)
{
    const unsigned char *p = data;
    size_t step = 7;
    while (n) {
        size_t k = n < step ? n : step;
        if (golden_writer_write(w, p, k, NULL) != GOLDEN_OK)
            return -1;
        p += k;
        n -= k;
        step = step * 3 + 1;
    }
    return 0;
}

static void roundtrip(int gzip)
{
    fresh_path(gzip ? "gz" : "plain");
    golden_writer_opts o = {.version = GOLDEN_WRITER_OPTS_VERSION, .gzip = gzip, .producer = "test_store"};
    golden_writer *w;
    golden_error err;
    CU_ASSERT_EQUAL_FATAL(golden_writer_open(path, &o, &w, &err), GOLDEN_OK);
    CU_ASSERT_EQUAL(golden_writer_meta(w, "model", "qwen3-30b-a3b", &err), GOLDEN_OK);

    /* f32 [3][5][7] counting 0..104 */
    uint64_t s3[] = {3, 5, 7};
    float f[105];
    for (int i = 0; i < 105; i++)
        f[i] = (float)i;
    golden_tensor_info t = info_of("layers/0/attn/out", GOLDEN_F32, 3, s3);
    t.has_layer = true;
    t.layer = 0;
    t.op_family = "flash_attention";
    CU_ASSERT_EQUAL_FATAL(golden_writer_begin(w, &t, &err), GOLDEN_OK);
    CU_ASSERT_EQUAL(write_pieces(w, f, sizeof f), 0);
    golden_tensor_info done = {0};
    CU_ASSERT_EQUAL_FATAL(golden_writer_end(w, &done, &err), GOLDEN_OK);
    char want[65];
    golden_sha256_buffer(f, sizeof f, want, NULL);
    CU_ASSERT_STRING_EQUAL(done.sha256, want);
    CU_ASSERT_DOUBLE_EQUAL(done.mean, 52.0, 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(done.std, sqrt((105.0 * 105.0 - 1) / 12.0), 1e-9);
    CU_ASSERT_EQUAL(done.zero_count, 1);
    golden_tensor_info_clear(&done);
    CU_ASSERT_PTR_NULL(done.name);

    /* bf16 with NaN and Infs: 1.0, NaN, +Inf, -Inf, -2.0, 0 */
    uint64_t s1[] = {6};
    uint16_t b[] = {0x3f80, 0x7fc0, 0x7f80, 0xff80, 0xc000, 0x0000};
    t = info_of("layers/0/mlp/out", GOLDEN_BF16, 1, s1);
    CU_ASSERT_EQUAL(golden_writer_begin(w, &t, &err), GOLDEN_OK);
    CU_ASSERT_EQUAL(golden_writer_write(w, b, sizeof b, &err), GOLDEN_OK);
    CU_ASSERT_EQUAL(golden_writer_end(w, NULL, &err), GOLDEN_OK);

    /* scalar i64, zero-length f16, u8 bool */
    int64_t sc = -42;
    t = info_of("step", GOLDEN_I64, 0, NULL);
    CU_ASSERT_EQUAL(golden_writer_begin(w, &t, &err), GOLDEN_OK);
    CU_ASSERT_EQUAL(golden_writer_write(w, &sc, 8, &err), GOLDEN_OK);
    CU_ASSERT_EQUAL(golden_writer_end(w, NULL, &err), GOLDEN_OK);
    uint64_t s0[] = {4, 0};
    t = info_of("empty", GOLDEN_F16, 2, s0);
    CU_ASSERT_EQUAL(golden_writer_begin(w, &t, &err), GOLDEN_OK);
    CU_ASSERT_EQUAL(golden_writer_end(w, NULL, &err), GOLDEN_OK);
    CU_ASSERT_EQUAL(golden_writer_commit(w, &err), GOLDEN_OK);

    golden_reader *r;
    CU_ASSERT_EQUAL_FATAL(golden_reader_open(path, &r, &err), GOLDEN_OK);
    CU_ASSERT_EQUAL(golden_reader_count(r), 4);
    CU_ASSERT_STRING_EQUAL(golden_reader_meta(r, "model"), "qwen3-30b-a3b");
    CU_ASSERT_STRING_EQUAL(golden_reader_meta(r, "schema"), "calculet-golden/v1");
    CU_ASSERT_STRING_EQUAL(golden_reader_meta(r, "producer"), "test_store");
    /* sorted by name */
    CU_ASSERT_STRING_EQUAL(golden_reader_tensor(r, 0)->name, "empty");
    CU_ASSERT_STRING_EQUAL(golden_reader_tensor(r, 1)->name, "layers/0/attn/out");
    long i = golden_reader_find(r, "layers/0/attn/out");
    CU_ASSERT_EQUAL_FATAL(i, 1);
    const golden_tensor_info *ri = golden_reader_tensor(r, (size_t)i);
    CU_ASSERT_EQUAL(ri->rank, 3);
    CU_ASSERT_EQUAL(ri->shape[2], 7);
    CU_ASSERT_EQUAL(ri->count, 105);
    CU_ASSERT_EQUAL(ri->count_attr, 105);
    CU_ASSERT_STRING_EQUAL(ri->sha256, want);
    CU_ASSERT(ri->has_layer && ri->layer == 0 && !ri->has_chip);
    CU_ASSERT_STRING_EQUAL(ri->op_family, "flash_attention");
    CU_ASSERT_PTR_NULL(ri->source);
    /* every linear range, across rows and planes */
    int bad = 0;
    float got[105];
    for (uint64_t a = 0; a < 105; a += 4)
        for (uint64_t n = 0; a + n <= 105; n += 5) {
            memset(got, 0xff, sizeof got);
            if (golden_reader_read(r, (size_t)i, a, n, got, &err) != GOLDEN_OK) {
                bad++;
                continue;
            }
            for (uint64_t k = 0; k < n; k++)
                bad += got[k] != (float)(a + k);
        }
    CU_ASSERT_EQUAL(bad, 0);
    CU_ASSERT_EQUAL(golden_reader_read(r, (size_t)i, 100, 6, got, &err), GOLDEN_ERR);

    const golden_tensor_info *bi = golden_reader_tensor(r, (size_t)golden_reader_find(r, "layers/0/mlp/out"));
    CU_ASSERT_EQUAL(bi->dtype, GOLDEN_BF16);
    CU_ASSERT_EQUAL(bi->nan_count, 1);
    CU_ASSERT_EQUAL(bi->posinf_count, 1);
    CU_ASSERT_EQUAL(bi->neginf_count, 1);
    CU_ASSERT_EQUAL(bi->zero_count, 1);
    CU_ASSERT_EQUAL(bi->min, -2.0);
    CU_ASSERT_EQUAL(bi->max, 1.0);
    CU_ASSERT_DOUBLE_EQUAL(bi->mean, -1.0 / 3.0, 1e-15);
    uint16_t bb[6];
    CU_ASSERT_EQUAL(golden_reader_read(r, (size_t)golden_reader_find(r, "layers/0/mlp/out"), 0, 6, bb, &err), GOLDEN_OK);
    CU_ASSERT_EQUAL(memcmp(bb, b, sizeof b), 0);

    const golden_tensor_info *si = golden_reader_tensor(r, (size_t)golden_reader_find(r, "step"));
    CU_ASSERT_EQUAL(si->rank, 0);
    CU_ASSERT_EQUAL(si->count, 1);
    CU_ASSERT_EQUAL(si->mean, -42.0);
    int64_t sv = 0;
    CU_ASSERT_EQUAL(golden_reader_read(r, (size_t)golden_reader_find(r, "step"), 0, 1, &sv, &err), GOLDEN_OK);
    CU_ASSERT_EQUAL(sv, -42);

    const golden_tensor_info *ei = golden_reader_tensor(r, 0);
    CU_ASSERT_EQUAL(ei->count, 0);
    CU_ASSERT(isnan(ei->mean) && isnan(ei->std) && isnan(ei->min));
    CU_ASSERT_STRING_EQUAL(ei->sha256, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");

    char sha[65];
    golden_stats st;
    CU_ASSERT_EQUAL(golden_reader_recompute(r, (size_t)i, sha, &st, &err), GOLDEN_OK);
    CU_ASSERT_STRING_EQUAL(sha, want);
    CU_ASSERT_EQUAL(st.count, 105);
    golden_reader_close(r);
    unlink(path);
}

static void test_roundtrip_contiguous(void) { roundtrip(0); }
static void test_roundtrip_gzip(void) { roundtrip(6); }

static void test_large_multi_buffer(void)
{
    /* more than one 4 MiB write buffer, odd row length: 3 x 699051 f32 */
    fresh_path("large");
    uint64_t shape[] = {3, 699051};
    size_t n = 3 * 699051;
    float *x = malloc(n * sizeof *x);
    CU_ASSERT_PTR_NOT_NULL_FATAL(x);
    double sum = 0;
    for (size_t k = 0; k < n; k++) {
        x[k] = (float)((k * 2654435761u) % 1000) - 500.0f;
        sum += x[k];
    }
    golden_writer *w;
    golden_error err;
    golden_writer_opts o = GOLDEN_WRITER_OPTS_INIT;
    CU_ASSERT_EQUAL_FATAL(golden_writer_open(path, &o, &w, &err), GOLDEN_OK);
    golden_tensor_info t = info_of("big", GOLDEN_F32, 2, shape);
    CU_ASSERT_EQUAL(golden_writer_begin(w, &t, &err), GOLDEN_OK);
    CU_ASSERT_EQUAL(write_pieces(w, x, n * sizeof *x), 0);
    CU_ASSERT_EQUAL(golden_writer_end(w, NULL, &err), GOLDEN_OK);
    CU_ASSERT_EQUAL(golden_writer_commit(w, &err), GOLDEN_OK);
    char want[65];
    golden_sha256_buffer(x, n * sizeof *x, want, NULL);
    golden_reader *r;
    CU_ASSERT_EQUAL_FATAL(golden_reader_open(path, &r, &err), GOLDEN_OK);
    const golden_tensor_info *ri = golden_reader_tensor(r, 0);
    CU_ASSERT_STRING_EQUAL(ri->sha256, want);
    CU_ASSERT_DOUBLE_EQUAL(ri->mean, sum / (double)n, 1e-9);
    float *y = malloc(n * sizeof *y);
    CU_ASSERT_EQUAL(golden_reader_read(r, 0, 0, n, y, &err), GOLDEN_OK);
    CU_ASSERT_EQUAL(memcmp(x, y, n * sizeof *x), 0);
    golden_reader_close(r);
    free(x);
    free(y);
    unlink(path);
}

static void test_conflicts_and_abort(void)
{
    fresh_path("conflict");
    golden_writer *w;
    golden_error err;
    golden_writer_opts o = GOLDEN_WRITER_OPTS_INIT;
    CU_ASSERT_EQUAL_FATAL(golden_writer_open(path, &o, &w, &err), GOLDEN_OK);
    uint64_t s[] = {1};
    uint8_t v = 1;
    golden_tensor_info t = info_of("a/b", GOLDEN_U8, 1, s);
    CU_ASSERT_EQUAL(golden_writer_begin(w, &t, &err), GOLDEN_OK);
    CU_ASSERT_EQUAL(golden_writer_write(w, &v, 1, &err), GOLDEN_OK);
    CU_ASSERT_EQUAL(golden_writer_end(w, NULL, &err), GOLDEN_OK);
    CU_ASSERT_EQUAL(golden_writer_begin(w, &t, &err), GOLDEN_ERR);
    CU_ASSERT_STRING_EQUAL(err.what, "duplicate tensor name");
    t.name = "a";
    CU_ASSERT_EQUAL(golden_writer_begin(w, &t, &err), GOLDEN_ERR);
    t.name = "a/b/c";
    CU_ASSERT_EQUAL(golden_writer_begin(w, &t, &err), GOLDEN_ERR);
    t.name = "a/../x";
    CU_ASSERT_EQUAL(golden_writer_begin(w, &t, &err), GOLDEN_ERR);
    t.name = "a//x";
    CU_ASSERT_EQUAL(golden_writer_begin(w, &t, &err), GOLDEN_ERR);
    t.name = "\xc3\x28";
    CU_ASSERT_EQUAL(golden_writer_begin(w, &t, &err), GOLDEN_ERR);
    /* too few bytes */
    t.name = "short";
    uint64_t s4[] = {4};
    t.shape[0] = s4[0];
    CU_ASSERT_EQUAL(golden_writer_begin(w, &t, &err), GOLDEN_OK);
    CU_ASSERT_EQUAL(golden_writer_write(w, &v, 1, &err), GOLDEN_OK);
    CU_ASSERT_EQUAL(golden_writer_end(w, NULL, &err), GOLDEN_ERR);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.what, "the shape needs 4"));
    golden_writer_abort(w);
    CU_ASSERT_EQUAL(access(path, F_OK), -1);
    /* overflowing shape */
    CU_ASSERT_EQUAL_FATAL(golden_writer_open(path, &o, &w, &err), GOLDEN_OK);
    uint64_t huge[] = {1ull << 40, 1ull << 40};
    t = info_of("huge", GOLDEN_F32, 2, huge);
    CU_ASSERT_EQUAL(golden_writer_begin(w, &t, &err), GOLDEN_ERR);
    golden_writer_abort(w);
    CU_ASSERT_EQUAL(access(path, F_OK), -1);
}

static void test_existing_and_bad_files(void)
{
    fresh_path("exists");
    FILE *f = fopen(path, "w");
    fputs("not hdf5\n", f);
    fclose(f);
    golden_writer *w;
    golden_error err;
    golden_writer_opts o = GOLDEN_WRITER_OPTS_INIT;
    CU_ASSERT_EQUAL(golden_writer_open(path, &o, &w, &err), GOLDEN_ERR);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.what, "--force"));
    /* options of a version this libgolden does not know (0: a zeroed struct) are refused
     * before anything is touched, even with force */
    golden_writer_opts bad = {.version = 0, .force = true};
    CU_ASSERT_EQUAL(golden_writer_open(path, &bad, &w, &err), GOLDEN_ERR);
    CU_ASSERT_EQUAL(err.code, GOLDEN_EINVAL);
    CU_ASSERT_STRING_EQUAL(err.what, "writer options of version 0 (this libgolden knows 1)");
    bad.version = GOLDEN_WRITER_OPTS_VERSION + 1;
    CU_ASSERT_EQUAL(golden_writer_open(path, &bad, &w, &err), GOLDEN_ERR);
    CU_ASSERT_PTR_NULL(w);
    golden_reader *r;
    CU_ASSERT_EQUAL(golden_reader_open(path, &r, &err), GOLDEN_ERR);
    CU_ASSERT_STRING_EQUAL(err.what, "not an HDF5 file");
    CU_ASSERT_EQUAL(golden_reader_open("no-such.h5", &r, &err), GOLDEN_ERR);
    o.force = true;
    mode_t old_mask = umask(022);
    CU_ASSERT_EQUAL_FATAL(golden_writer_open(path, &o, &w, &err), GOLDEN_OK);
    CU_ASSERT_EQUAL(golden_writer_commit(w, &err), GOLDEN_OK);
    umask(old_mask);
    struct stat st;
    CU_ASSERT_EQUAL(stat(path, &st), 0);
    CU_ASSERT_EQUAL(st.st_mode & 0777, 0644); /* an ordinary file under the umask, not 0600 */
    CU_ASSERT_EQUAL_FATAL(golden_reader_open(path, &r, &err), GOLDEN_OK);
    CU_ASSERT_EQUAL(golden_reader_count(r), 0);
    golden_reader_close(r);
    unlink(path);
}

/* Issue 8: libgolden switches HDF5's error printing off only while it is inside HDF5; a
 * program's own choice (here a counting handler) is back in place after every call. */
static int printed;
static herr_t count_print(hid_t stack, void *data)
{
    (void)stack;
    (void)data;
    printed++;
    return 0;
}

static void test_error_printing_scoped(void)
{
    H5E_auto2_t before_func;
    void *before_data;
    H5Eget_auto2(H5E_DEFAULT, &before_func, &before_data);
    CU_ASSERT_EQUAL_FATAL(H5Eset_auto2(H5E_DEFAULT, count_print, &printed), 0);
    fresh_path("scope");
    FILE *f = fopen(path, "wb");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    fputs("not an HDF5 file at all", f);
    fclose(f);
    golden_reader *r;
    golden_error err;
    CU_ASSERT_EQUAL(golden_reader_open_flags(path, GOLDEN_READ_TRUSTED, &r, &err), GOLDEN_ERR);
    CU_ASSERT_EQUAL(printed, 0); /* nothing printed from inside libgolden */
    H5E_auto2_t func;
    void *data;
    CU_ASSERT_EQUAL(H5Eget_auto2(H5E_DEFAULT, &func, &data), 0);
    CU_ASSERT(func == count_print && data == &printed);
    /* the caller's own failing HDF5 call still reaches its handler */
    hid_t bad = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    CU_ASSERT(bad < 0);
    CU_ASSERT_EQUAL(printed, 1);
    H5Eset_auto2(H5E_DEFAULT, before_func, before_data);
    unlink(path);
}

/* tensor_digest: hashes worked out with Python's hashlib over the documented text
 * ("calculet-tensor/v1\nbf16\n2,3\n" + 64 'a' + "\n", and a scalar f32 of 64 '0'). */
static void test_tensor_digest(void)
{
    golden_tensor_info t = {.dtype = GOLDEN_BF16, .rank = 2, .shape = {2, 3}};
    memset(t.sha256, 'a', 64);
    char hex[65];
    CU_ASSERT_EQUAL(golden_tensor_digest(&t, hex, NULL), GOLDEN_OK);
    CU_ASSERT_STRING_EQUAL(hex, "3f35d375122b96e78d6c80a9501220d320741b2fd1e87f6b5f82739c40e24e1c");
    golden_tensor_info s = {.dtype = GOLDEN_F32, .rank = 0};
    memset(s.sha256, '0', 64);
    CU_ASSERT_EQUAL(golden_tensor_digest(&s, hex, NULL), GOLDEN_OK);
    CU_ASSERT_STRING_EQUAL(hex, "c8455aaef8b033b2021c97f700ad42d05bf700d32ae93d927d9505bb8e3e38e7");
}

/* Issue 11: the isolated first walk. What the child does is the test's choice here: a crash
 * (as libhdf5 1.10 crashes on hostile metadata) becomes a corrupt-file error naming the file
 * given, an error found by the walk comes back with its own message, success is success. */
static int child_crashes(void *ctx, golden_error *err)
{
    (void)ctx;
    (void)err;
    raise(SIGSEGV);
    return GOLDEN_OK;
}

static int child_fails(void *ctx, golden_error *err)
{
    return golden_fail_what(err, GOLDEN_ECORRUPT, (const char *)ctx, "found by the walk");
}

static int child_passes(void *ctx, golden_error *err)
{
    (void)ctx;
    (void)err;
    return GOLDEN_OK;
}

static void test_isolated_walk(void)
{
    golden_error err;
    CU_ASSERT_EQUAL(lg_store_isolated("candidate.h5", child_crashes, NULL, &err), GOLDEN_ERR);
    CU_ASSERT_EQUAL(err.code, GOLDEN_ECORRUPT);
    CU_ASSERT_STRING_EQUAL(err.where, "candidate.h5");
    CU_ASSERT_PTR_NOT_NULL(strstr(err.what, "crashed"));
    CU_ASSERT_EQUAL(lg_store_isolated("x.h5", child_fails, "x.h5:t", &err), GOLDEN_ERR);
    CU_ASSERT_STRING_EQUAL(err.where, "x.h5:t");
    CU_ASSERT_STRING_EQUAL(err.what, "found by the walk");
    CU_ASSERT_EQUAL(lg_store_isolated("y.h5", child_passes, NULL, &err), GOLDEN_OK);
}

int main(void)
{
    static const golden_test tests[] = {
        {"round trip, contiguous", test_roundtrip_contiguous},
        {"round trip, gzip chunks", test_roundtrip_gzip},
        {"several write buffers", test_large_multi_buffer},
        {"name conflicts and abort", test_conflicts_and_abort},
        {"existing output and bad files", test_existing_and_bad_files},
        {"HDF5 error printing scoped to libgolden's calls", test_error_printing_scoped},
        {"tensor_digest binds dtype and shape", test_tensor_digest},
        {"isolated first walk: crash, error, success", test_isolated_walk},
        {0, 0}};
    return golden_test_run("store", tests);
}
