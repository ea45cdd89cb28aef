/* CUnit tests of a whole golden-diff run (golden/diff.h) on small files written here:
 * three-way excuses at their hand-worked boundaries, pairing, mapping, determinism. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cunit_main.h"
#include "golden/diff.h"

static char dir[1024];

static void path_of(char *buf, size_t n, const char *name)
{
    snprintf(buf, n, "%s/%s", dir, name);
}

/* Write a file of 1-D f64 tensors: names[i] gets vals[i][0..len). */
static void write_file(const char *name, int count, const char *const *names,
                       const double (*vals)[4], size_t len)
{
    char path[1100];
    path_of(path, sizeof path, name);
    golden_writer_opts o = {.version = GOLDEN_WRITER_OPTS_VERSION, .force = true,
                            .producer = "test_compare_diff"};
    golden_writer *w = NULL;
    golden_error err;
    CU_ASSERT_FATAL(golden_writer_open(path, &o, &w, &err) == 0);
    for (int i = 0; i < count; i++) {
        golden_tensor_info info;
        memset(&info, 0, sizeof info);
        info.name = (char *)names[i];
        info.dtype = GOLDEN_F64;
        info.rank = 1;
        info.shape[0] = len;
        CU_ASSERT_FATAL(golden_writer_begin(w, &info, &err) == 0);
        CU_ASSERT_FATAL(golden_writer_write(w, vals[i], len * sizeof(double), &err) == 0);
        CU_ASSERT_FATAL(golden_writer_end(w, NULL, &err) == 0);
    }
    CU_ASSERT_FATAL(golden_writer_commit(w, &err) == 0);
}

static const golden_diff_tensor *find(const golden_diff_result *r, const char *name)
{
    for (size_t i = 0; i < r->n; i++)
        if (strcmp(r->tensors[i].name, name) == 0)
            return &r->tensors[i];
    return NULL;
}

static void test_three_way(void)
{
    static const char *const names[] = {"t1", "t2", "t3", "t4"};
    static const double zero[4][4] = {{0}};
    /* baseline max_abs 0.1 (fails kernel), candidates 0.125 (1.25x), 0.13 (1.3x);
     * t3: the baseline is exact and the candidate is not; t4: both exact */
    static const double base[4][4] = {{0, 0, 0.1, 0}, {-0.1, 0, 0, 0}, {0}, {0}};
    static const double cand[4][4] = {{0, 0, 0.125, 0}, {0.13, 0, 0, 0}, {0, 0, 0, 0.01}, {0}};
    write_file("ref.h5", 4, names, zero, 4);
    write_file("base.h5", 4, names, base, 4);
    write_file("cand.h5", 4, names, cand, 4);
    char ref[1100], bp[1100], cp[1100];
    path_of(ref, sizeof ref, "ref.h5");
    path_of(bp, sizeof bp, "base.h5");
    path_of(cp, sizeof cp, "cand.h5");
    golden_policy *pol = golden_policy_new();
    golden_policy_force_tier(pol, GOLDEN_TIER_KERNEL);
    golden_diff_opts o = {.version = GOLDEN_DIFF_OPTS_VERSION,
                          .reference = ref, .candidate = cp, .baseline = bp, .policy = pol,
                          .threads = 2};
    golden_diff_result *r = NULL;
    golden_error err;
    CU_ASSERT_FATAL(golden_diff_run(&o, &r, &err) == 0);
    const golden_diff_tensor *t1 = find(r, "t1"), *t2 = find(r, "t2"), *t3 = find(r, "t3"),
                             *t4 = find(r, "t4");
    CU_ASSERT_FATAL(t1 && t2 && t3 && t4);
    CU_ASSERT_TRUE(t1->passed);
    CU_ASSERT_EQUAL(t1->n_reasons, 0);
    CU_ASSERT_EQUAL_FATAL(t1->n_notes, 1);
    CU_ASSERT_PTR_NOT_NULL(strstr(t1->notes[0], "excused: the baseline is as wrong at every such element"));
    /* tolerance used: 0.125 / 1e-7 against 0.1 / 1e-7 (zero reference, f64 atol 1e-7) */
    CU_ASSERT_DOUBLE_EQUAL(t1->error_candidate, 0.125 / 1e-7, 1e-3);
    CU_ASSERT_DOUBLE_EQUAL(t1->error_baseline, 0.1 / 1e-7, 1e-3);
    CU_ASSERT_STRING_EQUAL(t1->error_metric, "tolerance_used");
    CU_ASSERT_FALSE(t1->regression);
    CU_ASSERT_FALSE(t1->baseline_passed);
    CU_ASSERT_FALSE(t2->passed);
    CU_ASSERT_EQUAL_FATAL(t2->n_reasons, 2); /* the element, and the regression 1.3x */
    CU_ASSERT_PTR_NOT_NULL(strstr(t2->reasons[0], "not excused: 1 elements where the baseline is right or more than 1.25x less wrong (first at [0])"));
    CU_ASSERT_PTR_NOT_NULL(strstr(t2->reasons[1], "regression: tolerance_used"));
    CU_ASSERT_TRUE(t2->regression);
    CU_ASSERT_PTR_NOT_NULL(strstr(t2->reasons[0], "1 of 4 elements differ by more than"));
    /* the reason names the element outside its tolerance (issue 25): 0.13 / 1e-7 */
    CU_ASSERT_PTR_NOT_NULL(strstr(t2->reasons[0], "(worst at [0]: 1.3e+06x its tolerance; max_abs 0.13)"));
    CU_ASSERT_FALSE(t3->passed);
    CU_ASSERT_PTR_NOT_NULL(strstr(t3->reasons[0], "not excused: 1 elements where the baseline is right"));
    CU_ASSERT_TRUE(t3->baseline_passed);
    CU_ASSERT_TRUE(isnan(t3->ratio));
    CU_ASSERT_TRUE(t4->passed);
    CU_ASSERT_DOUBLE_EQUAL(t4->ratio, 1.0, 0); /* 0 against 0 */
    CU_ASSERT_EQUAL(r->passed, 2);
    CU_ASSERT_EQUAL(r->failed, 2);
    CU_ASSERT_FALSE(r->pass);
    golden_diff_free(r);
    golden_policy_free(pol);
}

static void test_pairing_and_map(void)
{
    static const char *const rn[] = {"a/x", "a/y", "b"};
    static const char *const cn[] = {"A.x", "A.y", "c"};
    static const double v[3][4] = {{1, 2, 3, 4}, {1, 2, 3, 4}, {5, 6, 7, 8}};
    write_file("pr.h5", 3, rn, v, 4);
    write_file("pc.h5", 3, cn, v, 4);
    char rp[1100], cp[1100];
    path_of(rp, sizeof rp, "pr.h5");
    path_of(cp, sizeof cp, "pc.h5");
    golden_policy *pol = golden_policy_new();
    golden_namemap *map = golden_namemap_new();
    golden_error err;
    CU_ASSERT_FATAL(golden_namemap_add(map, "A.*", "a/*", false, &err) == 0);
    golden_diff_opts o = {.version = GOLDEN_DIFF_OPTS_VERSION,
                          .reference = rp, .candidate = cp, .policy = pol, .map = map};
    golden_diff_result *r = NULL;
    CU_ASSERT_FATAL(golden_diff_run(&o, &r, &err) == 0);
    CU_ASSERT_EQUAL(r->n, 2);
    CU_ASSERT_EQUAL(r->passed, 2);
    CU_ASSERT_EQUAL_FATAL(r->n_missing_cand, 1);
    CU_ASSERT_STRING_EQUAL(r->missing_in_candidate[0], "b");
    CU_ASSERT_EQUAL_FATAL(r->n_missing_ref, 1);
    CU_ASSERT_STRING_EQUAL(r->missing_in_reference[0], "c");
    CU_ASSERT_FALSE(r->pass);
    CU_ASSERT_STRING_EQUAL(r->tensors[0].candidate_name, "A.x");
    golden_diff_free(r);

    const char *only[] = {"a/*"};
    o.only = only;
    o.n_only = 1;
    CU_ASSERT_FATAL(golden_diff_run(&o, &r, &err) == 0);
    CU_ASSERT_TRUE(r->pass); /* b and c are outside the selection */
    golden_diff_free(r);

    /* two candidate tensors that map to one name are an input error */
    CU_ASSERT_FATAL(golden_namemap_add(map, "c", "a/x", false, &err) == 0);
    o.only = NULL;
    o.n_only = 0;
    CU_ASSERT_EQUAL(golden_diff_run(&o, &r, &err), -1);
    CU_ASSERT_PTR_NULL(r);
    CU_ASSERT_STRING_EQUAL(err.where, cp);
    CU_ASSERT_STRING_EQUAL(err.what, "tensors A.x and c both map to a/x");

    /* options of an unknown version (0: a zeroed struct) are refused with an error value */
    for (unsigned ver = 0; ver <= GOLDEN_DIFF_OPTS_VERSION + 1; ver += GOLDEN_DIFF_OPTS_VERSION + 1) {
        golden_diff_opts bad = o;
        bad.version = ver;
        r = (golden_diff_result *)&bad; /* set to NULL by the call */
        CU_ASSERT_EQUAL(golden_diff_run(&bad, &r, &err), -1);
        CU_ASSERT_PTR_NULL(r);
        CU_ASSERT_EQUAL(err.code, GOLDEN_EINVAL);
        CU_ASSERT_PTR_NOT_NULL(strstr(err.what, "diff options of version"));
    }
    golden_namemap_free(map);
    golden_policy_free(pol);
}

static void test_threads_same_bits(void)
{
    enum { N = 3001 };
    char rp[1100], cp[1100];
    path_of(rp, sizeof rp, "big_r.h5");
    path_of(cp, sizeof cp, "big_c.h5");
    golden_writer_opts wo = {.version = GOLDEN_WRITER_OPTS_VERSION, .force = true,
                             .producer = "test_compare_diff"};
    const char *paths[2] = {rp, cp};
    double *v = malloc(N * sizeof *v);
    CU_ASSERT_FATAL(v != NULL);
    for (int f = 0; f < 2; f++) {
        golden_writer *w = NULL;
        golden_error err;
        CU_ASSERT_FATAL(golden_writer_open(paths[f], &wo, &w, &err) == 0);
        for (int i = 0; i < N; i++)
            v[i] = sin(i * 0.37) * 3 + (f ? cos(i * 1.3) * 1e-3 : 0);
        golden_tensor_info info;
        memset(&info, 0, sizeof info);
        info.name = "x";
        info.dtype = GOLDEN_F64;
        info.rank = 1;
        info.shape[0] = N;
        CU_ASSERT_FATAL(golden_writer_begin(w, &info, &err) == 0);
        CU_ASSERT_FATAL(golden_writer_write(w, v, N * sizeof *v, &err) == 0);
        CU_ASSERT_FATAL(golden_writer_end(w, NULL, &err) == 0);
        CU_ASSERT_FATAL(golden_writer_commit(w, &err) == 0);
    }
    free(v);
    golden_policy *pol = golden_policy_new();
    golden_diff_result *r1 = NULL, *r2 = NULL;
    golden_error err;
    golden_diff_opts o = {.version = GOLDEN_DIFF_OPTS_VERSION,
                          .reference = rp, .candidate = cp, .policy = pol, .threads = 1,
                          .chunk_elems = 7};
    CU_ASSERT_FATAL(golden_diff_run(&o, &r1, &err) == 0);
    o.threads = 2;
    CU_ASSERT_FATAL(golden_diff_run(&o, &r2, &err) == 0);
    const golden_cmp_metrics *a = &r1->tensors[0].m, *b = &r2->tensors[0].m;
    CU_ASSERT_EQUAL(memcmp(&a->max_abs, &b->max_abs, sizeof a->max_abs), 0);
    CU_ASSERT_EQUAL(memcmp(&a->mean_abs, &b->mean_abs, sizeof a->mean_abs), 0);
    CU_ASSERT_EQUAL(memcmp(&a->rmse, &b->rmse, sizeof a->rmse), 0);
    CU_ASSERT_EQUAL(memcmp(&a->cosine, &b->cosine, sizeof a->cosine), 0);
    CU_ASSERT_EQUAL(a->max_abs_index, b->max_abs_index);
    CU_ASSERT_EQUAL(a->count, N);
    golden_diff_free(r1);
    golden_diff_free(r2);
    golden_policy_free(pol);
}

static void cleanup(void)
{
    static const char *const files[] = {"ref.h5", "base.h5", "cand.h5", "pr.h5", "pc.h5",
                                        "big_r.h5", "big_c.h5"};
    for (size_t i = 0; i < sizeof files / sizeof *files; i++) {
        char p[1100];
        path_of(p, sizeof p, files[i]);
        unlink(p);
    }
    rmdir(dir);
}

int main(void)
{
    const char *tmp = getenv("TMPDIR");
    snprintf(dir, sizeof dir, "%s/golden-diff-test.XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(dir))
        return 2;
    static const golden_test tests[] = {
        {"three-way excuses at the ratio boundary", test_three_way},
        {"pairing, mapping, missing, --only", test_pairing_and_map},
        {"threads give the same bits", test_threads_same_bits},
        {0, 0},
    };
    int rc = golden_test_run("diff", tests);
    cleanup();
    return rc;
}
