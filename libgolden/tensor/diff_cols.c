/* golden-diff's channel-axis check (issue 25): for layer-tier tensors [rows, channels], the
 * cosine and relative error of every column (one hidden channel across all positions), summed
 * in the one pass chunk by chunk (chunks hold whole rows) and merged in chunk order. A dead
 * channel (cosine 0) or one channel with a wrong scale (rel_err 1 for 2x) is named, though it
 * moves the tensor's cosine and every row's by only 1/4096. */
#include "tensor/diff_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include "util/cpu.h"

/* Per column and side: dot, |r|^2, |c|^2, |c - r|^2, max |c| (long double: squares of f64
 * values up to 1e308 stay finite on x86-64 and aarch64). */
#define COL_SUMS 5

/* The channel axis is the last unless the policy declares another (channel_axis: the axis
 * must exist; diff_pair.c refuses one beyond the rank before this is asked). */
bool diff_cols_wanted(golden_diff_job *j)
{
    const golden_diff_tensor *t = j->t;
    int ax = t->judge.channel_axis >= 0 ? t->judge.channel_axis : t->rank - 1;
    j->col_n = 0;
    j->col_inner = 1;
    if (lg_diff_engine_tier(t) != GOLDEN_TIER_LAYER || j->setup.row_len < 2 || ax < 0 ||
        ax >= t->rank)
        return false;
    for (int k = ax + 1; k < t->rank; k++)
        j->col_inner *= t->shape[k];
    j->col_n = t->shape[ax];
    return j->col_n >= 2 && j->col_n <= DIFF_COL_MAX && j->count / j->col_n >= DIFF_COL_MIN_ROWS;
}

size_t diff_cols_size(const golden_diff_job *j)
{
    return (j->with_base ? 2 : 1) * (size_t)j->col_n * COL_SUMS;
}

/* rs: per-row sums of the reference and candidate and the reference's row minimum (3 per
 * row; chunks hold whole rows, so each row is summed by one worker, in order), or NULL.
 * The plain order: element by element (every column's and every row's sums in element
 * order); the general case (a channel axis other than the last, a chunk not of whole rows). */
static void add_plain(long double *s, golden_dtype rt, golden_dtype xt, const unsigned char *r,
                      const unsigned char *x, uint64_t first, uint64_t n, uint64_t cols,
                      uint64_t ncol, uint64_t inner, long double *rs)
{
    double rv[1024], xv[1024];
    size_t wr = golden_dtype_size(rt), wx = golden_dtype_size(xt);
    for (uint64_t off = 0; off < n; off += 1024) {
        size_t m = n - off < 1024 ? (size_t)(n - off) : 1024;
        golden_convert_to_f64(rt, r + off * wr, m, rv);
        golden_convert_to_f64(xt, x + off * wx, m, xv);
        /* the column of element e is (e / inner) % ncol; in stays e % inner */
        uint64_t col = ((first + off) / inner) % ncol, in = (first + off) % inner;
        /* the row of element e is e / cols; at stays e % cols */
        uint64_t row_i = (first + off) / cols, at = (first + off) % cols;
        for (size_t i = 0; i < m; i++) {
            double a = rv[i], b = xv[i];
            if (rs) {
                long double *row = rs + 3 * row_i;
                row[0] += a;
                row[1] += b;
                if (a < row[2] || at == 0)
                    row[2] = a;
            }
            if (++at == cols) {
                at = 0;
                row_i++;
            }
            if (isfinite(a) && isfinite(b)) { /* non-finite pairs: the element checks */
                long double *c = s + col * COL_SUMS, la = a, lb = b;
                c[0] += la * lb;
                c[1] += la * la;
                c[2] += lb * lb;
                c[3] += (lb - la) * (lb - la);
                if (fabsl(lb) > c[4])
                    c[4] = fabsl(lb);
            }
            if (++in == inner) {
                in = 0;
                if (++col == ncol)
                    col = 0;
            }
        }
    }
}

/* The channel axis is the last and the chunk is whole rows of ncol elements: the same sums in
 * tiles of up to TILE_COLS columns by TILE_ELEMS / width rows, each tile converted once into
 * L1. A column's five sums then stay in registers down the tile's rows and a row's three
 * along its columns, instead of a load and a store of every long double for every element
 * (and one 64-bit division per element for the row). Every sum still takes its terms in the
 * plain order: a column's in row order (tiles of rows are taken in order), a row's in column
 * order (the tiles of one band of rows are taken left to right), so the bits are the same.
 * Pairs of f32 values form their products in AVX2 (cols_exact, cols8_f32: exact, the same
 * terms), and an f32 pair is read where it lies, in tiles of TILE_COLS x PIECE_F32 rows, with
 * no tile to convert. */
/* A NaN with its quiet bit set. A signaling NaN (f16's widening keeps one) is quieted when x87
 * loads it, and the plain loop loads every term before adding it; here the compiler may add
 * it from memory instead, where x87 keeps the sum's own NaN rather than the term's: quieting
 * the term first gives the plain loop's NaN either way (test_diff_cols). */
static inline double quiet(double v)
{
    if (v == v)
        return v;
    uint64_t u;
    memcpy(&u, &v, sizeof u);
    u |= UINT64_C(1) << 51;
    memcpy(&v, &u, sizeof v);
    return v;
}

#define TILE_COLS 64
#define TILE_ELEMS 2048

/* One column of a tile summed the x87 way, element by element down its nr rows (stride nc
 * elements; values T, double or float: a float widens exactly). Non-finite pairs are left to
 * the element checks: here they become the pair (0, 0), which adds +0 to each sum and leaves
 * it as it was (a sum that starts at +0 is never -0: +0 + -0 is +0, and an exact cancellation
 * gives +0), and is no larger |c| than any. */
#define COL_X87(name, T)                                                                      \
    static void name(long double *c, const T *rv, const T *xv, size_t nr, size_t nc)          \
    {                                                                                         \
        long double c0 = c[0], c1 = c[1], c2 = c[2], c3 = c[3];                               \
        /* the largest |c| in double: every value it is ever set to is a double's (a          \
         * chunk's sums start at 0), so the comparisons and the result are exact */           \
        double c4 = (double)c[4];                                                             \
        for (size_t i = 0; i < nr; i++) {                                                     \
            double a = rv[i * nc], b = xv[i * nc];                                            \
            if (!isfinite(a) || !isfinite(b))                                                 \
                a = b = 0;                                                                    \
            long double la = a, lb = b;                                                       \
            c0 += la * lb;                                                                    \
            c1 += la * la;                                                                    \
            c2 += lb * lb;                                                                    \
            c3 += (lb - la) * (lb - la);                                                      \
            if (fabs(b) > c4)                                                                 \
                c4 = fabs(b);                                                                 \
        }                                                                                     \
        c[0] = c0;                                                                            \
        c[1] = c1;                                                                            \
        c[2] = c2;                                                                            \
        c[3] = c3;                                                                            \
        c[4] = c4;                                                                            \
    }
COL_X87(col_x87, double)
#if defined(__x86_64__)
COL_X87(col_x87_f32, float)
#endif

static void cols_x87(long double *s, const double *rv, const double *xv, size_t nr, size_t nc)
{
    for (size_t k = 0; k < nc; k++)
        col_x87(s + k * COL_SUMS, rv + k, xv + k, nr, nc);
}

/* Whether every value of dtype t is an f32's (24 significant bits at most, in f32's range):
 * then the products a*b, a*a and b*b of two of them are exact in double (48 bits), and so
 * are the long double products the x87 loop forms. */
static bool f32_values(golden_dtype t)
{
    return t == GOLDEN_F32 || t == GOLDEN_F16 || t == GOLDEN_BF16 || t == GOLDEN_FP8_E4M3FN ||
           t == GOLDEN_FP8_E5M2 || t == GOLDEN_I8 || t == GOLDEN_U8 || t == GOLDEN_I16 ||
           t == GOLDEN_U16 || t == GOLDEN_BOOL;
}

#if defined(__x86_64__)
/* col_x87's sums with every product formed in AVX2, 4 columns at a time, so that x87 only
 * adds (one fadd per sum and element instead of loads, a multiply and an add): the pair
 * (a, b) of f32 values gives a*b, a*a and b*b exactly in double, and (b - a)^2 too when
 * b - a is exact in double (its TwoSum error is 0) and has at most 24 significant bits (it
 * survives a round trip through float), so each term the x87 loop adds is the same value,
 * added in the same order: the same bits. A column where some (b - a)^2 is not exact in
 * double (b and a far apart in magnitude with tiny low bits: rare) or some value is not
 * finite is summed by col_x87, over the piece of rows where it happens. */
/* One column's four product sums continued over nr rows of a products table (row: the table's
 * values per row, lane: between a column's a*b, a*a, b*b and (b - a)^2), in row order as
 * col_x87 adds them, then its largest |c| (finite here, -0 as +0). */
static inline void add_products(long double *c, const double *q, size_t nr, size_t row,
                                size_t lane, double mx)
{
    long double c0 = c[0], c1 = c[1], c2 = c[2], c3 = c[3];
    for (size_t i = 0; i < nr; i++, q += row) {
        c0 += q[0];
        c1 += q[lane];
        c2 += q[2 * lane];
        c3 += q[3 * lane];
    }
    c[0] = c0;
    c[1] = c1;
    c[2] = c2;
    c[3] = c3;
    if (mx > (double)c[4])
        c[4] = mx;
}

#define PIECE_ROWS 64
/* Columns kb .. kb + w - 1 (w <= 4) over rows 0 .. nr - 1 (nr <= PIECE_ROWS), stride nc;
 * the values double, or float when f32 (a constant where this is inlined). */
static inline __attribute__((always_inline, target("avx2"))) void
cols_exact4(long double *s, const void *rp, const void *xp, size_t nr, size_t nc, size_t kb,
            size_t w, bool f32)
{
    /* per row: a*b, a*a, b*b, (b - a)^2, each of 4 columns */
    double t[PIECE_ROWS * 16];
    const __m256d sign = _mm256_set1_pd(-0.0);
    __m256i mask = _mm256_cmpgt_epi64(_mm256_set1_epi64x((long long)w),
                                      _mm256_setr_epi64x(0, 1, 2, 3));
    __m128i mask32 = _mm_cmpgt_epi32(_mm_set1_epi32((int)w), _mm_setr_epi32(0, 1, 2, 3));
    __m256d bad = _mm256_setzero_pd(), cmax = _mm256_setzero_pd();
    for (size_t i = 0; i < nr; i++) {
        __m256d a, b;
        if (f32) {
            a = _mm256_cvtps_pd(_mm_maskload_ps((const float *)rp + i * nc + kb, mask32));
            b = _mm256_cvtps_pd(_mm_maskload_ps((const float *)xp + i * nc + kb, mask32));
        } else {
            a = _mm256_maskload_pd((const double *)rp + i * nc + kb, mask);
            b = _mm256_maskload_pd((const double *)xp + i * nc + kb, mask);
        }
        __m256d d = _mm256_sub_pd(b, a);
        /* TwoSum of b + (-a): the rounding error of d, exactly */
        __m256d bv = _mm256_sub_pd(d, b);
        __m256d av = _mm256_sub_pd(d, bv);
        __m256d e = _mm256_sub_pd(_mm256_sub_pd(b, av), _mm256_add_pd(a, bv));
        __m256d df = _mm256_cvtps_pd(_mm256_cvtpd_ps(d));
        /* a non-finite a or b makes e NaN: that column's piece goes to col_x87 too */
        bad = _mm256_or_pd(bad, _mm256_or_pd(_mm256_cmp_pd(e, _mm256_setzero_pd(), _CMP_NEQ_UQ),
                                             _mm256_cmp_pd(df, d, _CMP_NEQ_UQ)));
        cmax = _mm256_max_pd(cmax, _mm256_andnot_pd(sign, b));
        double *o = t + i * 16;
        _mm256_storeu_pd(o, _mm256_mul_pd(a, b));
        _mm256_storeu_pd(o + 4, _mm256_mul_pd(a, a));
        _mm256_storeu_pd(o + 8, _mm256_mul_pd(b, b));
        _mm256_storeu_pd(o + 12, _mm256_mul_pd(d, d));
    }
    double mx[4];
    _mm256_storeu_pd(mx, cmax);
    int badm = _mm256_movemask_pd(bad);
    for (size_t l = 0; l < w; l++) {
        long double *c = s + (kb + l) * COL_SUMS;
        if (badm >> l & 1) {
            if (f32)
                col_x87_f32(c, (const float *)rp + kb + l, (const float *)xp + kb + l, nr, nc);
            else
                col_x87(c, (const double *)rp + kb + l, (const double *)xp + kb + l, nr, nc);
            continue;
        }
        add_products(c, t + l, nr, 16, 4, mx[l]);
    }
}

/* A tile's columns (s: the tile's first column's sums), nr rows of nc values, stride ld. */
__attribute__((target("avx2"))) static void cols_exact(long double *s, const double *rv,
                                                        const double *xv, size_t nr, size_t nc)
{
    for (size_t kb = 0; kb < nc; kb += 4)
        for (size_t i = 0; i < nr; i += PIECE_ROWS)
            cols_exact4(s, rv + i * nc, xv + i * nc, nr - i < PIECE_ROWS ? nr - i : PIECE_ROWS,
                        nc, kb, nc - kb < 4 ? nc - kb : 4, false);
}

/* The same straight from f32 data (no tile to convert), 8 columns kb .. kb + w - 1 (w <= 8)
 * at a time, ld values between rows. b - a is checked in float: its TwoSum error there is 0
 * exactly when b - a is a float's value (at most 24 significant bits, no overflow), and then
 * (double)(b - a) is b - a and its square is exact in double; a NaN or infinity makes the error
 * NaN. The largest |b| is taken in float (exact). */
#define PIECE_F32 128
static inline __attribute__((always_inline, target("avx2"))) void
cols8_f32(long double *s, const float *rp, const float *xp, size_t nr, size_t ld, size_t kb,
          size_t w)
{
    /* per row: a*b, a*a, b*b, (b - a)^2, each of 8 columns (4 + 4) */
    static _Thread_local double t[PIECE_F32 * 32];
    const __m256 sign = _mm256_set1_ps(-0.0f);
    __m256i mask = _mm256_cmpgt_epi32(_mm256_set1_epi32((int)w),
                                      _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
    __m256 bad = _mm256_setzero_ps(), cmax = _mm256_setzero_ps();
    for (size_t i = 0; i < nr; i++) {
        __m256 a = _mm256_maskload_ps(rp + i * ld + kb, mask);
        __m256 b = _mm256_maskload_ps(xp + i * ld + kb, mask);
        __m256 d = _mm256_sub_ps(b, a);
        __m256 bv = _mm256_sub_ps(d, b);
        __m256 av = _mm256_sub_ps(d, bv);
        __m256 e = _mm256_sub_ps(_mm256_sub_ps(b, av), _mm256_add_ps(a, bv));
        bad = _mm256_or_ps(bad, _mm256_cmp_ps(e, _mm256_setzero_ps(), _CMP_NEQ_UQ));
        cmax = _mm256_max_ps(cmax, _mm256_andnot_ps(sign, b));
        double *o = t + i * 32;
        for (int h = 0; h < 2; h++) {
            __m128 a4 = h ? _mm256_extractf128_ps(a, 1) : _mm256_castps256_ps128(a);
            __m128 b4 = h ? _mm256_extractf128_ps(b, 1) : _mm256_castps256_ps128(b);
            __m128 d4 = h ? _mm256_extractf128_ps(d, 1) : _mm256_castps256_ps128(d);
            __m256d ad = _mm256_cvtps_pd(a4), bd = _mm256_cvtps_pd(b4), dd = _mm256_cvtps_pd(d4);
            _mm256_storeu_pd(o + 4 * h, _mm256_mul_pd(ad, bd));
            _mm256_storeu_pd(o + 8 + 4 * h, _mm256_mul_pd(ad, ad));
            _mm256_storeu_pd(o + 16 + 4 * h, _mm256_mul_pd(bd, bd));
            _mm256_storeu_pd(o + 24 + 4 * h, _mm256_mul_pd(dd, dd));
        }
    }
    float mx[8];
    _mm256_storeu_ps(mx, cmax);
    int badm = _mm256_movemask_ps(bad);
    for (size_t l = 0; l < w; l++) {
        long double *c = s + (kb + l) * COL_SUMS;
        if (badm >> l & 1) {
            col_x87_f32(c, rp + kb + l, xp + kb + l, nr, ld);
            continue;
        }
        add_products(c, t + l, nr, 32, 8, (double)mx[l]);
    }
}

__attribute__((target("avx2"))) static void cols_exact_f32(long double *s, const float *rv,
                                                            const float *xv, size_t nr,
                                                            size_t nc, size_t ld)
{
    for (size_t kb = 0; kb < nc; kb += 8)
        for (size_t i = 0; i < nr; i += PIECE_F32)
            cols8_f32(s, rv + i * ld, xv + i * ld, nr - i < PIECE_F32 ? nr - i : PIECE_F32, ld,
                      kb, nc - kb < 8 ? nc - kb : 8);
}

/* Row sums straight from f32 data, in column order. quiet() and the widening to double make
 * x87 see the operands the tile loop gives it (a signaling NaN quieted); first: the rows start
 * here (their minimum is set by their first value). */
static void row_f32_plain(long double *p, const float *r0, const float *x0, size_t nc, bool first)
{
    long double s0 = p[0], s1 = p[1], mn = p[2];
    for (size_t k = 0; k < nc; k++) {
        double a = quiet(r0[k]);
        s0 += a;
        s1 += quiet(x0[k]);
        if (a < mn || (first && k == 0))
            mn = a;
    }
    p[0] = s0;
    p[1] = s1;
    p[2] = mn;
}

/* Whether p[0 .. n - 1] holds a NaN, and its minimum (of the values, when none is NaN). */
__attribute__((target("avx2"))) static bool seg_nan_min(const float *p, size_t n, float *min)
{
    __m256 nan = _mm256_setzero_ps(), m = _mm256_set1_ps(INFINITY);
    size_t k = 0;
    for (; k + 8 <= n; k += 8) {
        __m256 v = _mm256_loadu_ps(p + k);
        nan = _mm256_or_ps(nan, _mm256_cmp_ps(v, v, _CMP_UNORD_Q));
        m = _mm256_min_ps(m, v);
    }
    float l[8], mm = INFINITY;
    _mm256_storeu_ps(l, m);
    bool any = _mm256_movemask_ps(nan) != 0;
    for (int q = 0; q < 8; q++)
        mm = l[q] < mm ? l[q] : mm;
    for (; k < n; k++) {
        any |= p[k] != p[k];
        mm = p[k] < mm ? p[k] : mm;
    }
    *min = mm;
    return any;
}

/* The rows of a tile: two at a time where their pieces hold no NaN and do not start the rows
 * (four x87 chains, each adding its f32 from memory: the value the widening gives), the
 * minimum by a vector pass first (the element scan runs only where it finds a new minimum,
 * so every comparison that changes the minimum is the scan's). */
static void rows_f32(long double *rs, const float *ra, const float *xa, size_t nr, size_t nc,
                     size_t ld, bool first)
{
    for (size_t i = 0; i < nr; i += 2) {
        size_t two = nr - i >= 2 ? 2 : 1;
        const float *r0 = ra + i * ld, *x0 = xa + i * ld, *r1 = r0 + ld, *x1 = x0 + ld;
        float m0, m1 = 0, mx;
        bool slow = first || two == 1 || seg_nan_min(r0, nc, &m0) || seg_nan_min(x0, nc, &mx) ||
                    seg_nan_min(r1, nc, &m1) || seg_nan_min(x1, nc, &mx);
        if (slow) {
            for (size_t q = 0; q < two; q++)
                row_f32_plain(rs + 3 * (i + q), ra + (i + q) * ld, xa + (i + q) * ld, nc, first);
            continue;
        }
        long double *p = rs + 3 * i, *q = p + 3;
        long double s0 = p[0], s1 = p[1], u0 = q[0], u1 = q[1];
        for (size_t k = 0; k < nc; k++) {
            s0 += r0[k];
            s1 += x0[k];
            u0 += r1[k];
            u1 += x1[k];
        }
        p[0] = s0;
        p[1] = s1;
        q[0] = u0;
        q[1] = u1;
        /* the scan's minimum, where some value is below the minimum so far (no NaN here) */
        if (m0 < p[2]) {
            long double mn = p[2];
            for (size_t k = 0; k < nc; k++)
                if (r0[k] < mn)
                    mn = r0[k];
            p[2] = mn;
        }
        if (m1 < q[2]) {
            long double mn = q[2];
            for (size_t k = 0; k < nc; k++)
                if (r1[k] < mn)
                    mn = r1[k];
            q[2] = mn;
        }
    }
}
#endif

static void add_tiled(long double *s, golden_dtype rt, golden_dtype xt, const unsigned char *r,
                      const unsigned char *x, uint64_t first, uint64_t n, uint64_t ncol,
                      long double *rs)
{
    double rv[TILE_ELEMS], xv[TILE_ELEMS];
    size_t wr = golden_dtype_size(rt), wx = golden_dtype_size(xt);
    uint64_t rows = n / ncol, row0 = first / ncol;
    size_t tc = ncol < TILE_COLS ? (size_t)ncol : TILE_COLS, tr = TILE_ELEMS / tc;
    bool exact = false;
#if defined(__x86_64__)
    exact = f32_values(rt) && f32_values(xt) && lg_cpu_avx2();
    if (exact && rt == GOLDEN_F32 && xt == GOLDEN_F32) {
        /* no tile to convert: the rows and the columns read the f32 data */
        const float *rf = (const void *)r, *xf = (const void *)x;
        tr = PIECE_F32 * TILE_COLS / tc; /* no tile buffer: as tall as a piece */
        for (uint64_t rb = 0; rb < rows; rb += tr) {
            size_t nr = rows - rb < tr ? (size_t)(rows - rb) : tr;
            for (uint64_t cb = 0; cb < ncol; cb += tc) {
                size_t nc = ncol - cb < tc ? (size_t)(ncol - cb) : tc;
                const float *ra = rf + rb * ncol + cb, *xa = xf + rb * ncol + cb;
                /* the next tile's rows, one short stream each (too many for the hardware
                 * prefetcher to follow): asked for now, used after this tile */
                if (cb + nc < ncol)
                    for (size_t i = 0; i < nr; i++)
                        for (size_t o = 0; o < TILE_COLS; o += 16) {
                            __builtin_prefetch(ra + i * ncol + nc + o);
                            __builtin_prefetch(xa + i * ncol + nc + o);
                        }
                if (rs)
                    rows_f32(rs + 3 * (row0 + rb), ra, xa, nr, nc, (size_t)ncol, cb == 0);
                cols_exact_f32(s + cb * COL_SUMS, ra, xa, nr, nc, (size_t)ncol);
            }
        }
        return;
    }
#endif
    for (uint64_t rb = 0; rb < rows; rb += tr) {
        size_t nr = rows - rb < tr ? (size_t)(rows - rb) : tr;
        for (uint64_t cb = 0; cb < ncol; cb += tc) {
            size_t nc = ncol - cb < tc ? (size_t)(ncol - cb) : tc;
            /* the tile, row by row: element (i, k) at rv[i * nc + k] */
            if (nc == ncol) {
                golden_convert_to_f64(rt, r + rb * ncol * wr, nr * nc, rv);
                golden_convert_to_f64(xt, x + rb * ncol * wx, nr * nc, xv);
            } else {
                for (size_t i = 0; i < nr; i++) {
                    uint64_t e = (rb + i) * ncol + cb;
                    golden_convert_to_f64(rt, r + e * wr, nc, rv + i * nc);
                    golden_convert_to_f64(xt, x + e * wx, nc, xv + i * nc);
                }
            }
            if (rs) {
                for (size_t i = 0; i < nr; i++) {
                    long double *row = rs + 3 * (row0 + rb + i);
                    long double s0 = row[0], s1 = row[1], mn = row[2];
                    const double *ra = rv + i * nc, *xa = xv + i * nc;
                    for (size_t k = 0; k < nc; k++) {
                        double a = quiet(ra[k]);
                        s0 += a;
                        s1 += quiet(xa[k]);
                        if (a < mn || (cb == 0 && k == 0))
                            mn = a;
                    }
                    row[0] = s0;
                    row[1] = s1;
                    row[2] = mn;
                }
            }
#if defined(__x86_64__)
            if (exact)
                cols_exact(s + cb * COL_SUMS, rv, xv, nr, nc);
            else
#endif
                cols_x87(s + cb * COL_SUMS, rv, xv, nr, nc);
        }
    }
}

void diff_cols_add(long double *s, golden_dtype rt, golden_dtype xt, const void *r, const void *x,
                   uint64_t first, uint64_t n, uint64_t cols, uint64_t ncol, uint64_t inner,
                   long double *rs)
{
    if (inner == 1 && ncol == cols && first % ncol == 0 && n % ncol == 0)
        add_tiled(s, rt, xt, r, x, first, n, ncol, rs);
    else
        add_plain(s, rt, xt, r, x, first, n, cols, ncol, inner, rs);
}

static void add_side(long double *s, const golden_diff_job *j, golden_dtype rt, golden_dtype xt,
                     const unsigned char *r, const unsigned char *x, uint64_t first, uint64_t n,
                     long double *rs)
{
    diff_cols_add(s, rt, xt, r, x, first, n, j->setup.row_len, j->col_n, j->col_inner, rs);
}

void diff_cols_chunk(golden_diff_job *j, const void *rb, const void *cb, const void *bb,
                     uint64_t first, uint64_t n, long double *part)
{
    memset(part, 0, diff_cols_size(j) * sizeof *part);
    /* the row sums serve finish_probability only, which gives up at the first row whose
     * minimum is not >= 0 (or whose sum is not 1) and then uses no row: once a chunk has
     * such a row, no other chunk needs its rows summed (the report is the same) */
    long double *rs = j->row_sums;
    if (rs && (!golden_dtype_is_float(j->t->dtype_ref) || !golden_dtype_is_float(j->t->dtype_cand) ||
               __atomic_load_n(&j->rows_moot, __ATOMIC_RELAXED)))
        rs = NULL;
    add_side(part, j, j->setup.dtype_ref, j->setup.dtype_cand, rb, cb, first, n, rs);
    if (rs) {
        /* the rows wholly in this chunk: this worker's alone */
        uint64_t len = j->setup.row_len, k0 = (first + len - 1) / len, k1 = (first + n) / len;
        for (uint64_t k = k0; k < k1; k++)
            if (!(rs[3 * k + 2] >= 0)) {
                __atomic_store_n(&j->rows_moot, 1, __ATOMIC_RELAXED);
                break;
            }
    }
    if (j->with_base)
        add_side(part + j->col_n * COL_SUMS, j, j->setup.dtype_ref, j->bsetup.dtype_cand, rb, bb,
                 first, n, NULL);
}

void diff_cols_merge(golden_diff_job *j, const long double *part)
{
    size_t n = diff_cols_size(j);
    for (size_t i = 0; i < n; i += COL_SUMS) { /* four sums, then the largest |c| */
        long double *c = j->cols + i;
        const long double *q = part + i;
        c[0] += q[0];
        c[1] += q[1];
        c[2] += q[2];
        c[3] += q[3];
        c[4] = q[4] > c[4] ? q[4] : c[4];
    }
}

static int cmp_ld(const void *a, const void *b)
{
    long double x = *(const long double *)a, y = *(const long double *)b;
    return x < y ? -1 : x > y;
}

/* 1/64 of the median column energy (1/8 of the median column norm): the floor under a
 * column's reference norm when it is judged. A channel that carries almost nothing gets
 * compute noise of the size the whole layer's inputs give, so its own norm would turn a
 * correct bf16 candidate's noise into a large "relative" error; measured against the floor it
 * is still judged. A channel of 1/8 the median norm or more is judged by its own norm, so a
 * weak channel (1/4 the norm) at a 5 % wrong scale fails (it passed under the earlier floor of
 * half the median norm). 0 when the median cannot be taken. */
static long double energy_floor(const long double *s, uint64_t cols)
{
    long double *e = malloc((cols ? cols : 1) * sizeof *e);
    if (!e)
        return 0;
    uint64_t n = 0;
    for (uint64_t k = 0; k < cols; k++)
        if (s[k * COL_SUMS + 1] > 0)
            e[n++] = s[k * COL_SUMS + 1];
    long double f = 0;
    if (n) {
        qsort(e, n, sizeof *e, cmp_ld);
        f = (n % 2 ? e[n / 2] : (e[n / 2 - 1] + e[n / 2]) / 2) / 64;
    }
    free(e);
    return f;
}

/* One side's per-column cosine and rel_err (NaN: a zero reference column whose candidate is
 * within atol, left out as rows are; a column under the energy floor is judged by its error
 * against the floor, and its cosine, all noise, is left out); the worst of each into the
 * tensor. */
static void finish_side(const long double *s, uint64_t cols, double atol, double *cos,
                        double *rel)
{
    long double floor = energy_floor(s, cols);
    for (uint64_t k = 0; k < cols; k++) {
        const long double *c = s + k * COL_SUMS;
        if (c[1] == 0 && !(floor > 0 && c[4] > atol)) {
            bool idle = c[4] <= atol;
            cos[k] = idle ? NAN : 0.0;
            rel[k] = idle ? NAN : INFINITY;
            continue;
        }
        bool small = c[1] < floor;
        cos[k] = small ? NAN : c[2] == 0 ? 0.0 : (double)(c[0] / (sqrtl(c[1]) * sqrtl(c[2])));
        rel[k] = (double)sqrtl(c[3] / (small ? floor : c[1]));
    }
}

/* Half a step at 1 of a float dtype, plus 1e-5: the rounding of weights that sum to 1. */
static double sum_tol(golden_dtype t)
{
    return 1e-5 + golden_cmp_step(t, 1.0) / 2;
}

/* A probability tensor: every reference row is non-negative and sums to 1 within the
 * reference dtype's bound; then every candidate row must sum to 1 within its storage's or
 * compute dtype's bound (the coarser). */
static void finish_probability(golden_diff_job *j)
{
    if (j->rows_moot) /* a row's minimum is below 0 or NaN: the loop below would stop there */
        return;
    golden_diff_tensor *t = j->t;
    uint64_t rows = j->count / j->setup.row_len;
    double rt = sum_tol(t->dtype_ref), ct = fmax(sum_tol(t->dtype_cand), sum_tol(t->judge.tol_dtype));
    for (uint64_t k = 0; k < rows; k++) {
        const long double *row = j->row_sums + 3 * k;
        if (!(row[2] >= 0) || !(fabsl(row[0] - 1) <= rt))
            return;
    }
    t->probability = true;
    t->prob_sum_tol = ct;
    for (uint64_t k = 0; k < rows; k++) {
        const long double *row = j->row_sums + 3 * k;
        if (!(fabsl(row[1] - 1) <= ct) && t->prob_bad_rows++ == 0) {
            t->prob_first_bad_row = k;
            t->prob_first_bad_sum = (double)row[1];
        }
    }
}

int diff_cols_finish(golden_diff_job *j)
{
    if (j->row_sums && golden_dtype_is_float(j->t->dtype_ref) &&
        golden_dtype_is_float(j->t->dtype_cand))
        finish_probability(j);
    golden_diff_tensor *t = j->t;
    uint64_t cols = j->col_n;
    int sides = j->with_base ? 2 : 1;
    t->col_cos = malloc(cols * sizeof(double) * 2 * (size_t)sides);
    if (!t->col_cos)
        return -1;
    t->col_rel = t->col_cos + cols;
    finish_side(j->cols, cols, t->judge.atol, t->col_cos, t->col_rel);
    if (sides == 2) {
        t->bcol_cos = t->col_rel + cols;
        t->bcol_rel = t->bcol_cos + cols;
        finish_side(j->cols + cols * COL_SUMS, cols, t->judge.atol, t->bcol_cos, t->bcol_rel);
    }
    t->n_cols = cols;
    t->col_rows = j->count / cols;
    t->min_col_cosine = NAN;
    t->max_col_rel_err = NAN;
    t->max_col_judged_rel_err = NAN;
    t->cols_judged = 0;
    for (uint64_t k = 0; k < cols; k++) {
        /* a column under the energy floor has a rel_err but no cosine */
        if (isnan(t->col_rel[k]))
            continue;
        t->cols_judged++;
        if (!isnan(t->col_cos[k]) &&
            (isnan(t->min_col_cosine) || t->col_cos[k] < t->min_col_cosine)) {
            t->min_col_cosine = t->col_cos[k];
            t->min_col_cosine_col = k;
        }
        if (isnan(t->max_col_judged_rel_err) || t->col_rel[k] > t->max_col_judged_rel_err) {
            t->max_col_judged_rel_err = t->col_rel[k];
            t->max_col_rel_err_col = k;
        }
        /* the plain ||c_j - r_j|| / ||r_j|| the docs define, unfloored (infinite for an
         * all-zero reference column whose candidate is not) */
        const long double *c = j->cols + k * COL_SUMS;
        double plain = c[1] > 0 ? (double)sqrtl(c[3] / c[1]) : INFINITY;
        if (isnan(t->max_col_rel_err) || plain > t->max_col_rel_err)
            t->max_col_rel_err = plain;
    }
    return 0;
}
