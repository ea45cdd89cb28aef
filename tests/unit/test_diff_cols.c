/* CUnit tests of golden-diff's channel-axis sums (libgolden/tensor/diff_cols.c,
 * diff_cols_add): the tiled path (channel axis last, whole rows) and the plain path (any other
 * layout) must give the same bits as a plain element-by-element reference written here, the
 * loop as it was before the tiling: every column's five sums and every row's three in element
 * order, the element's column and row found by division. Dtypes f32, f64, f16, bf16 and i32,
 * with NaN, infinities and subnormals among the values; column counts around the tile width
 * (2, 63, 64, 65, 130, 1000); row counts around the tile height; chunks that start at a later
 * row and row sums carried in from an earlier chunk. (Row sums that are NaN: any payload of the
 * same sign, see same_rows.) */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cunit_main.h"
#include "golden/dtype.h"
#include "tensor/diff_internal.h"

#define SUMS 5

static void reference(long double *s, golden_dtype rt, golden_dtype xt, const unsigned char *r,
                      const unsigned char *x, uint64_t first, uint64_t n, uint64_t cols,
                      uint64_t ncol, uint64_t inner, long double *rs)
{
    size_t wr = golden_dtype_size(rt), wx = golden_dtype_size(xt);
    for (uint64_t i = 0; i < n; i++) {
        double a, b;
        golden_convert_to_f64(rt, r + i * wr, 1, &a);
        golden_convert_to_f64(xt, x + i * wx, 1, &b);
        uint64_t e = first + i;
        if (rs) {
            long double *row = rs + 3 * (e / cols);
            row[0] += a;
            row[1] += b;
            if (a < row[2] || e % cols == 0)
                row[2] = a;
        }
        if (isfinite(a) && isfinite(b)) {
            long double *c = s + ((e / inner) % ncol) * SUMS, la = a, lb = b;
            c[0] += la * lb;
            c[1] += la * la;
            c[2] += lb * lb;
            c[3] += (lb - la) * (lb - la);
            if (fabsl(lb) > c[4])
                c[4] = fabsl(lb);
        }
    }
}

static uint64_t rng = 0x9E3779B97F4A7C15u;
static uint64_t next(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

/* n elements of dtype dt: mostly values in [-2, 2] (some tiny, some huge), a few specials. */
static void fill(golden_dtype dt, unsigned char *p, uint64_t n)
{
    for (uint64_t i = 0; i < n; i++) {
        uint64_t u = next();
        double v = ((double)(u >> 11) / 9007199254740992.0) * 4 - 2;
        int k = (int)(u & 63);
        if (k == 0)
            v = NAN;
        else if (k == 1)
            v = INFINITY;
        else if (k == 2)
            v = -INFINITY;
        else if (k == 3)
            v *= 1e-40;
        else if (k == 4)
            v *= 1e30;
        else if (k == 5)
            v = 0;
        switch (dt) {
        case GOLDEN_F64: memcpy(p + 8 * i, &v, 8); break;
        case GOLDEN_F32: {
            float f = (float)v;
            memcpy(p + 4 * i, &f, 4);
            break;
        }
        case GOLDEN_I32: {
            int32_t q = (int32_t)(u >> 40) - (1 << 23);
            memcpy(p + 4 * i, &q, 4);
            break;
        }
        default: { /* f16, bf16: random bit patterns, every class among them; a NaN is
                    * the canonical quiet one of either sign (see same_rows) */
            uint16_t h = (uint16_t)(u >> 23);
            int nan = dt == GOLDEN_F16 ? (h & 0x7C00) == 0x7C00 && (h & 0x03FF)
                                       : (h & 0x7F80) == 0x7F80 && (h & 0x007F);
            if (nan)
                h = (uint16_t)((h & 0x8000) | (dt == GOLDEN_F16 ? 0x7E00 : 0x7FC0));
            memcpy(p + 2 * i, &h, 2);
            break;
        }
        }
    }
}

/* the 10 bytes of an x87 long double that hold its value (the rest is padding) */
static size_t ld_bytes(void) { return LDBL_MANT_DIG == 64 ? 10 : sizeof(long double); }

static int same(const long double *a, const long double *b, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (memcmp(&a[i], &b[i], ld_bytes()) != 0)
            return 0;
    return 1;
}

/* Row sums: the same bits, except that two NaNs of the same sign are the same. A NaN's payload
 * is never shown (a row sum is only compared, or printed with %g), and golden_convert_to_f64
 * keeps an f16 NaN's payload in its vector path and not in its scalar one, so it depends on
 * where a block of conversion ends (as it did before the tiling, between chunk sizes). With
 * NaNs that carry payloads (no arithmetic makes them) even the sign of a row's NaN sum depends
 * on it (x87 keeps the NaN of larger payload), so the data here has canonical NaNs only. */
static int same_rows(const long double *a, const long double *b, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (isnan(a[i]) && isnan(b[i]) && !signbit(a[i]) == !signbit(b[i]))
            continue;
        if (memcmp(&a[i], &b[i], ld_bytes()) != 0)
            return 0;
    }
    return 1;
}

static int fails;

/* How x is made: fill()'s independent values, or near r (near = 1): the candidate of a real
 * comparison, r with its low bits changed in most elements (so c - r is exact and short, the
 * products' fast path of the x87 sums), r itself in some, an independent value in a few (a far
 * pair: that column's slow path). */
static int near;

static void fill_near(golden_dtype dt, const unsigned char *r, unsigned char *x, uint64_t n)
{
    size_t w = golden_dtype_size(dt);
    fill(dt, x, n);
    if (dt == GOLDEN_F64 || dt == GOLDEN_I32)
        return;
    for (uint64_t i = 0; i < n; i++) {
        uint64_t u = next();
        if ((u & 255) == 0)
            continue; /* independent */
        memcpy(x + i * w, r + i * w, w);
        if ((u >> 8 & 7) == 0)
            continue; /* equal */
        if (dt == GOLDEN_F32) {
            uint32_t v;
            memcpy(&v, x + 4 * i, 4);
            v ^= (uint32_t)(u >> 16) & 0xFFF;
            if ((v & 0x7F800000) == 0x7F800000 && (v & 0x007FFFFF)) /* canonical NaNs */
                v = (v & 0x80000000) | 0x7FC00000;
            memcpy(x + 4 * i, &v, 4);
        } else {
            uint16_t v;
            memcpy(&v, x + 2 * i, 2);
            v ^= (uint16_t)((u >> 16) & 3);
            /* keep a NaN canonical (see same_rows) */
            int nan = dt == GOLDEN_F16 ? (v & 0x7C00) == 0x7C00 && (v & 0x03FF)
                                       : (v & 0x7F80) == 0x7F80 && (v & 0x007F);
            if (nan)
                v = (uint16_t)((v & 0x8000) | (dt == GOLDEN_F16 ? 0x7E00 : 0x7FC0));
            memcpy(x + 2 * i, &v, 2);
        }
    }
}

/* rows x ncol elements (x inner) split into chunks of `per` rows; both implementations see
 * the same chunks; each chunk's column sums start at zero (as diff_cols_chunk's part), the
 * row sums carry over as in the pass. */
static void one(golden_dtype rt, golden_dtype xt, uint64_t rows, uint64_t ncol, uint64_t inner,
                uint64_t per, int with_rows)
{
    uint64_t cols = ncol * inner, n = rows * cols;
    unsigned char *r = malloc(n * golden_dtype_size(rt) + 1), *x = malloc(n * golden_dtype_size(xt) + 1);
    size_t ns = (size_t)ncol * SUMS, nr = 3 * (size_t)rows;
    long double *s1 = calloc(ns, sizeof *s1), *s2 = calloc(ns, sizeof *s2);
    long double *r1 = calloc(nr + 1, sizeof *r1), *r2 = calloc(nr + 1, sizeof *r2);
    CU_ASSERT_FATAL(r && x && s1 && s2 && r1 && r2);
    memset(s1, 0, ns * sizeof *s1);
    memset(s2, 0, ns * sizeof *s2);
    memset(r1, 0, (nr + 1) * sizeof *r1);
    memset(r2, 0, (nr + 1) * sizeof *r2);
    fill(rt, r, n);
    if (near && rt == xt)
        fill_near(xt, r, x, n);
    else
        fill(xt, x, n);
    int ok = 1;
    for (uint64_t row = 0; row < rows; row += per) {
        uint64_t m = (rows - row < per ? rows - row : per) * cols, first = row * cols;
        memset(s1, 0, ns * sizeof *s1);
        memset(s2, 0, ns * sizeof *s2);
        reference(s1, rt, xt, r + first * golden_dtype_size(rt), x + first * golden_dtype_size(xt),
                  first, m, cols, ncol, inner, with_rows ? r1 : NULL);
        diff_cols_add(s2, rt, xt, r + first * golden_dtype_size(rt), x + first * golden_dtype_size(xt),
                      first, m, cols, ncol, inner, with_rows ? r2 : NULL);
        if (!same(s1, s2, ns))
            ok = 0;
    }
    if (!same_rows(r1, r2, nr))
        ok = 0;
    if (!ok && fails++ < 10)
        fprintf(stderr, "diff_cols_add differs: %s/%s rows %llu ncol %llu inner %llu per %llu rows %d\n",
                golden_dtype_name(rt), golden_dtype_name(xt), (unsigned long long)rows,
                (unsigned long long)ncol, (unsigned long long)inner, (unsigned long long)per,
                with_rows);
    CU_ASSERT(ok);
    free(r);
    free(x);
    free(s1);
    free(s2);
    free(r1);
    free(r2);
}

/* the tiled path: channel axis last, chunks of whole rows */
static void test_tiled_same_bits(void)
{
    static const uint64_t ncols[] = {2, 63, 64, 65, 130, 1000};
    static const uint64_t nrows[] = {1, 31, 32, 33, 100};
    static const golden_dtype types[][2] = {{GOLDEN_F32, GOLDEN_F32}, {GOLDEN_F64, GOLDEN_F64},
                                            {GOLDEN_F16, GOLDEN_F16}, {GOLDEN_BF16, GOLDEN_BF16},
                                            {GOLDEN_I32, GOLDEN_I32}, {GOLDEN_F32, GOLDEN_BF16}};
    for (size_t t = 0; t < sizeof types / sizeof types[0]; t++)
        for (size_t c = 0; c < sizeof ncols / sizeof ncols[0]; c++)
            for (size_t k = 0; k < sizeof nrows / sizeof nrows[0]; k++) {
                uint64_t rows = nrows[k] * (ncols[c] == 2 ? 40 : 1); /* 2 columns: many rows */
                one(types[t][0], types[t][1], rows, ncols[c], 1, rows, 1);
                one(types[t][0], types[t][1], rows, ncols[c], 1, rows, 0);
                one(types[t][0], types[t][1], rows, ncols[c], 1, 7, 1); /* chunks of 7 rows */
            }
}

/* the same with candidates near the reference (the exact-product path of the tiles) */
static void test_tiled_near_same_bits(void)
{
    near = 1;
    test_tiled_same_bits();
    static const golden_dtype types[] = {GOLDEN_F32, GOLDEN_BF16, GOLDEN_F16};
    for (size_t t = 0; t < 3; t++) {
        one(types[t], types[t], 300, 8192, 1, 128, 1); /* the benchmark's shape, 2 tile bands */
        one(types[t], types[t], 2000, 3, 1, 333, 1);   /* 3 columns: tiles of 682 rows */
    }
    near = 0;
}

/* the plain path: a channel axis before the last (inner > 1), rows of ncol x inner */
static void test_plain_same_bits(void)
{
    one(GOLDEN_F32, GOLDEN_F32, 70, 65, 3, 70, 1);
    one(GOLDEN_F32, GOLDEN_F32, 70, 65, 3, 9, 1);
    one(GOLDEN_BF16, GOLDEN_F32, 100, 4, 17, 100, 0);
    one(GOLDEN_F64, GOLDEN_F64, 64, 33, 2, 5, 1);
}

/* a case worked by hand: 2 rows x 2 columns, r = [[1, 2], [3, 4]], c = [[1, 3], [3, 8]] */
static void test_by_hand(void)
{
    float r[4] = {1, 2, 3, 4}, c[4] = {1, 3, 3, 8};
    long double s[2 * SUMS] = {0}, rs[6] = {0};
    diff_cols_add(s, GOLDEN_F32, GOLDEN_F32, r, c, 0, 4, 2, 2, 1, rs);
    /* column 0: dot 1 + 9 = 10, |r|^2 10, |c|^2 10, |c - r|^2 0, max |c| 3 */
    CU_ASSERT(s[0] == 10 && s[1] == 10 && s[2] == 10 && s[3] == 0 && s[4] == 3);
    /* column 1: dot 6 + 32 = 38, |r|^2 4 + 16 = 20, |c|^2 9 + 64 = 73, 1 + 16 = 17, 8 */
    CU_ASSERT(s[5] == 38 && s[6] == 20 && s[7] == 73 && s[8] == 17 && s[9] == 8);
    /* rows: sums of r 3 and 7, of c 4 and 11, minimum of r 1 and 3 */
    CU_ASSERT(rs[0] == 3 && rs[1] == 4 && rs[2] == 1 && rs[3] == 7 && rs[4] == 11 && rs[5] == 3);
}

int main(void)
{
    static const golden_test tests[] = {
        {"a hand-worked 2x2 case", test_by_hand},
        {"tiled column and row sums: the plain order's bits", test_tiled_same_bits},
        {"tiled sums, candidates near the reference: the plain order's bits",
         test_tiled_near_same_bits},
        {"channel axis before the last: the plain order's bits", test_plain_same_bits},
        {0, 0}};
    return golden_test_run("diff_cols", tests);
}
