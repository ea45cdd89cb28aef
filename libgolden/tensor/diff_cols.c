/* golden-diff's channel-axis check (issue 25): for layer-tier tensors [rows, channels], the
 * cosine and relative error of every column (one hidden channel across all positions), summed
 * in the one pass chunk by chunk (chunks hold whole rows) and merged in chunk order. A dead
 * channel (cosine 0) or one channel with a wrong scale (rel_err 1 for 2x) is named, though it
 * moves the tensor's cosine and every row's by only 1/4096. */
#include "tensor/diff_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

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
 * order (the tiles of one band of rows are taken left to right), so the bits are the same. */
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
static void add_tiled(long double *s, golden_dtype rt, golden_dtype xt, const unsigned char *r,
                      const unsigned char *x, uint64_t first, uint64_t n, uint64_t ncol,
                      long double *rs)
{
    double rv[TILE_ELEMS], xv[TILE_ELEMS];
    size_t wr = golden_dtype_size(rt), wx = golden_dtype_size(xt);
    uint64_t rows = n / ncol, row0 = first / ncol;
    size_t tc = ncol < TILE_COLS ? (size_t)ncol : TILE_COLS, tr = TILE_ELEMS / tc;
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
            /* non-finite pairs are left to the element checks: here they become the pair
             * (0, 0), which adds +0 to each sum and leaves it as it was (a sum that starts at
             * +0 is never -0: +0 + -0 is +0, and an exact cancellation gives +0), and is no
             * larger |c| than any; so no branch in the column loop */
            for (size_t q = 0; q < nr * nc; q++)
                if (!isfinite(rv[q]) || !isfinite(xv[q]))
                    rv[q] = xv[q] = 0;
            for (size_t k = 0; k < nc; k++) {
                long double *c = s + (cb + k) * COL_SUMS;
                long double c0 = c[0], c1 = c[1], c2 = c[2], c3 = c[3];
                /* the largest |c| in double: every value it is ever set to is a double's
                 * (a chunk's sums start at 0), so the comparisons and the result are exact */
                double c4 = (double)c[4];
                for (size_t i = 0; i < nr; i++) {
                    double b = xv[i * nc + k];
                    long double la = rv[i * nc + k], lb = b;
                    c0 += la * lb;
                    c1 += la * la;
                    c2 += lb * lb;
                    c3 += (lb - la) * (lb - la);
                    if (fabs(b) > c4)
                        c4 = fabs(b);
                }
                c[0] = c0;
                c[1] = c1;
                c[2] = c2;
                c[3] = c3;
                c[4] = c4;
            }
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
    add_side(part, j, j->setup.dtype_ref, j->setup.dtype_cand, rb, cb, first, n, j->row_sums);
    if (j->with_base)
        add_side(part + j->col_n * COL_SUMS, j, j->setup.dtype_ref, j->bsetup.dtype_cand, rb, bb,
                 first, n, NULL);
}

void diff_cols_merge(golden_diff_job *j, const long double *part)
{
    size_t n = diff_cols_size(j);
    for (size_t i = 0; i < n; i++) {
        if (i % COL_SUMS == 4)
            j->cols[i] = part[i] > j->cols[i] ? part[i] : j->cols[i];
        else
            j->cols[i] += part[i];
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
