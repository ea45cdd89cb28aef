/* golden_ranges_compute's exact percentiles against a second, simple implementation: sort |x|
 * and take the element at ceil(p/100 * n) (nearest rank), on hand-picked edge cases (one
 * element, all equal, zeros of both signs, subnormals, infinities, NaN, f64 extremes) and on
 * random data of several dtypes and sizes that straddle the read chunk. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cunit_main.h"
#include "golden/dtype.h"
#include "golden/ranges.h"
#include "golden/store.h"

static char path[256];

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Write one f64 tensor cases/c0/t of n values as a golden; NULL on failure. */
static const char *write_golden(const double *v, size_t n)
{
    snprintf(path, sizeof path, "ranges-%d.h5", (int)getpid());
    unlink(path);
    golden_writer_opts o = {.version = GOLDEN_WRITER_OPTS_VERSION, .producer = "test_ranges"};
    golden_writer *w;
    golden_error err;
    golden_tensor_info t = {0};
    t.name = "cases/c0/t";
    t.dtype = GOLDEN_F64;
    t.rank = 1;
    t.shape[0] = n;
    golden_tensor_info done = {0};
    if (golden_writer_open(path, &o, &w, &err) != GOLDEN_OK)
        return NULL;
    if (golden_writer_begin(w, &t, &err) != GOLDEN_OK ||
        golden_writer_write(w, v, n * sizeof *v, &err) != GOLDEN_OK ||
        golden_writer_end(w, &done, &err) != GOLDEN_OK || golden_writer_commit(w, &err) != GOLDEN_OK) {
        golden_writer_abort(w);
        return NULL;
    }
    golden_tensor_info_clear(&done);
    return path;
}

static double jget(const json_t *row, const char *k)
{
    const json_t *v = json_object_get(row, k);
    const char *s = json_string_value(v);
    if (s)
        return !strcmp(s, "inf") ? INFINITY : -INFINITY;
    return json_is_number(v) ? json_number_value(v) : NAN;
}

/* Compare the report on v with the sort oracle. */
static void check(const double *v, size_t n, double thr)
{
    const char *p = write_golden(v, n);
    CU_ASSERT_PTR_NOT_NULL_FATAL(p);
    golden_ranges_input in = {"d", p};
    golden_ranges_opts o = GOLDEN_RANGES_OPTS_INIT;
    o.outlier_threshold = thr;
    json_t *doc = NULL;
    golden_error err;
    CU_ASSERT_EQUAL_FATAL(golden_ranges_compute(&in, 1, &o, &doc, &err), 0);
    const json_t *row = json_array_get(json_object_get(doc, "taps"), 0);
    CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(row, "tap")), "t");
    double *a = malloc((n ? n : 1) * sizeof *a);
    size_t m = 0, nan = 0, outl = 0;
    double lo = INFINITY, hi = -INFINITY;
    for (size_t i = 0; i < n; i++) {
        if (isnan(v[i])) {
            nan++;
            continue;
        }
        lo = fmin(lo, v[i]);
        hi = fmax(hi, v[i]);
        outl += fabs(v[i]) > thr;
        a[m++] = fabs(v[i]);
    }
    qsort(a, m, sizeof *a, cmp_d);
    CU_ASSERT_EQUAL(json_integer_value(json_object_get(row, "elements")), (json_int_t)m);
    CU_ASSERT_EQUAL(json_integer_value(json_object_get(row, "nan")), (json_int_t)nan);
    CU_ASSERT_EQUAL(json_integer_value(json_object_get(row, "outliers")), (json_int_t)outl);
    if (m) {
        CU_ASSERT(jget(row, "min") == lo);
        CU_ASSERT(jget(row, "max") == hi);
        static const double ps[3] = {99, 99.9, 99.99};
        static const char *const ks[3] = {"abs_p99", "abs_p99_9", "abs_p99_99"};
        for (int k = 0; k < 3; k++) {
            /* nearest rank ceil(p / 100 * m) in integers (p in 1/1000 %) */
            uint64_t pm = (uint64_t)llround(ps[k] * 1000);
            uint64_t rank = (pm * m + 99999) / 100000;
            if (rank == 0)
                rank = 1;
            double want = a[rank - 1];
            double got = jget(row, ks[k]);
            if (!(got == want))
                printf("\n  n=%zu %s: got %.17g want %.17g\n", n, ks[k], got, want);
            CU_ASSERT(got == want);
        }
    } else {
        CU_ASSERT(json_is_null(json_object_get(row, "abs_p99")));
    }
    free(a);
    json_decref(doc);
    unlink(p);
}

static void test_edges(void)
{
    double one[1] = {-2.5};
    check(one, 1, 6);
    double same[7] = {3, 3, 3, 3, 3, 3, 3};
    check(same, 7, 2);
    double zeros[5] = {0.0, -0.0, 0.0, -0.0, 1e-320};
    check(zeros, 5, 0);
    double inf[6] = {1, -INFINITY, INFINITY, 2, NAN, 5e-324};
    check(inf, 6, 6);
    double nans[3] = {NAN, NAN, NAN};
    check(nans, 3, 6);
    double ext[4] = {1.7976931348623157e308, -1.7976931348623157e308, 2.2250738585072014e-308, -1};
    check(ext, 4, 1e308);
}

static uint64_t rng = 88172645463325252ull;
static double urand(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (double)(rng >> 11) / 9007199254740992.0;
}

static void test_random(void)
{
    static const size_t sizes[] = {2, 99, 100, 1000, 10001, 65536, 65537, 200003};
    for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++) {
        size_t n = sizes[s];
        double *v = malloc(n * sizeof *v);
        CU_ASSERT_PTR_NOT_NULL_FATAL(v);
        for (size_t i = 0; i < n; i++) {
            double u = urand() - 0.5;
            /* heavy tail, many repeats (rounded to 1/8) in every other size */
            v[i] = s % 2 ? round(u / (1e-3 + urand()) * 8) / 8 : u / (1e-3 + urand());
        }
        check(v, n, 6);
        free(v);
    }
}

int main(void)
{
    static const golden_test tests[] = {
        {"edge cases against a sort", test_edges},
        {"random data against a sort", test_random},
        {0, 0}};
    return golden_test_run("ranges", tests);
}
