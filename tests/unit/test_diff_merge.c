/* CUnit tests of a sharded golden-diff run (golden_diff_opts.shard, golden_diff_pack,
 * golden_diff_unpack, golden_diff_merge): the shards of a run, carried as bytes and merged,
 * give the single run's report, table and JUnit for any split; damaged bytes are refused; the
 * check across tensors happens after the merge; and the byte-balanced plan of
 * tools/common/shard.c, worked by hand. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cunit_main.h"
#include "golden/diff.h"
#include "../../tools/common/shard.c"

static char dir[1024];

static void path_of(char *buf, size_t n, const char *name)
{
    snprintf(buf, n, "%s/%s", dir, name);
}

typedef struct {
    const char *name;
    golden_dtype dtype;   /* GOLDEN_F64 or GOLDEN_I64 */
    uint64_t rows, cols;
} spec;

/* Enough kinds to reach every packed record: layer rows and columns (64 x 8), logits rows,
 * token rows, a kernel vector. */
static const spec specs[] = {
    {"ref/a/out", GOLDEN_F64, 64, 8}, {"ref/b/out", GOLDEN_F64, 80, 6},
    {"ref/c/out", GOLDEN_F64, 70, 4}, {"ref/kernel", GOLDEN_F64, 1, 50},
    {"ref/logits", GOLDEN_F64, 6, 40}, {"ref/tokens", GOLDEN_I64, 3, 16},
    {"ref/gone", GOLDEN_F64, 2, 5},
};
#define N_SPECS (sizeof specs / sizeof specs[0])

/* side 0 reference, 1 candidate, 2 baseline; the candidate leaves ref/gone out and adds
 * cand/extra; its ref/b is 1.1x off (a failure), ref/c has a NaN, ref/tokens diverge */
static void write_side(const char *file, int side, bool copy_of_candidate)
{
    char path[1100];
    path_of(path, sizeof path, file);
    golden_writer_opts o = {.version = GOLDEN_WRITER_OPTS_VERSION, .force = true, .producer = "test_diff_merge"};
    golden_writer *w = NULL;
    golden_error err;
    CU_ASSERT_FATAL(golden_writer_open(path, &o, &w, &err) == 0);
    int as = copy_of_candidate ? 1 : side;
    for (size_t s = 0; s <= N_SPECS; s++) {
        spec sp = s < N_SPECS ? specs[s] : (spec){"cand/extra", GOLDEN_F64, 1, 3};
        if ((as >= 1 && strcmp(sp.name, "ref/gone") == 0) || (as == 0 && s == N_SPECS))
            continue;
        uint64_t n = sp.rows * sp.cols;
        golden_tensor_info info;
        memset(&info, 0, sizeof info);
        info.name = (char *)sp.name;
        info.dtype = sp.dtype;
        info.rank = sp.rows > 1 ? 2 : 1;
        info.shape[0] = sp.rows > 1 ? sp.rows : sp.cols;
        info.shape[1] = sp.cols;
        void *buf = malloc(n * 8);
        CU_ASSERT_FATAL(buf != NULL);
        for (uint64_t i = 0; i < n; i++) {
            double x = sin(0.37 * (double)i + (double)s) * 3;
            if (as >= 1)
                x += (as == 1 ? 1e-7 : -1e-7) * cos((double)i);
            if (as == 1 && strcmp(sp.name, "ref/b/out") == 0)
                x *= 1.1;
            if (as == 2 && strcmp(sp.name, "ref/b/out") == 0)
                x *= 1.09;
            if (as == 1 && strcmp(sp.name, "ref/c/out") == 0 && i == 17)
                x = NAN;
            if (sp.dtype == GOLDEN_I64) {
                int64_t v = (int64_t)(i * 7919 % 32000);
                if (as == 1 && i == 20)
                    v += 1;
                ((int64_t *)buf)[i] = v;
            } else {
                ((double *)buf)[i] = x;
            }
        }
        CU_ASSERT_FATAL(golden_writer_begin(w, &info, &err) == 0);
        CU_ASSERT_FATAL(golden_writer_write(w, buf, n * 8, &err) == 0);
        CU_ASSERT_FATAL(golden_writer_end(w, NULL, &err) == 0);
        free(buf);
    }
    CU_ASSERT_FATAL(golden_writer_commit(w, &err) == 0);
}

/* A split of the names: shard k of n by a hash of the name, or all to one shard. */
typedef struct {
    int k, n, how;
} split;

static bool in_split(const char *name, void *ctx)
{
    const split *s = ctx;
    unsigned h = 5381;
    for (const char *p = name; *p; p++)
        h = h * 33 + (unsigned char)*p;
    int owner = s->how == 0 ? (int)(h % (unsigned)s->n) : s->how == 1 ? s->n - 1 : 0;
    return owner == s->k;
}

/* The report without its timing fields (each tensor's seconds). */
static char *report_text(const golden_diff_result *r)
{
    json_t *doc = golden_diff_to_json(r);
    CU_ASSERT_FATAL(doc != NULL);
    json_t *ts = json_object_get(doc, "tensors");
    size_t i;
    json_t *t;
    json_array_foreach(ts, i, t)
        json_object_del(t, "seconds");
    char *s = json_dumps(doc, JSON_INDENT(1) | JSON_REAL_PRECISION(17));
    json_decref(doc);
    CU_ASSERT_FATAL(s != NULL);
    return s;
}

static char rp[1100], cp[1100], bp[1100], sp_[1100];

/* n shards of the run, each packed and unpacked, merged: rc of the merge */
static int sharded(golden_diff_opts o, int n, int how, golden_diff_result **out, golden_error *err)
{
    golden_diff_result **parts = calloc((size_t)n, sizeof *parts);
    split *sp = calloc((size_t)n, sizeof *sp);
    CU_ASSERT_FATAL(parts && sp);
    for (int k = 0; k < n; k++) {
        sp[k] = (split){k, n, how};
        o.shard = in_split;
        o.shard_ctx = &sp[k];
        golden_diff_result *r = NULL;
        CU_ASSERT_FATAL(golden_diff_run(&o, &r, err) == 0);
        void *buf = NULL;
        size_t len = 0;
        CU_ASSERT_FATAL(golden_diff_pack(r, &buf, &len, err) == 0);
        golden_diff_free(r);
        CU_ASSERT_FATAL(golden_diff_unpack(buf, len, &parts[k], err) == 0);
        free(buf);
    }
    int rc = golden_diff_merge(parts, (size_t)n, out, err);
    for (int k = 0; k < n; k++)
        golden_diff_free(parts[k]);
    free(parts);
    free(sp);
    return rc;
}

static void same_as_single(const char *baseline)
{
    golden_policy *pol = golden_policy_new();
    golden_diff_opts o = {.version = GOLDEN_DIFF_OPTS_VERSION,
                          .reference = rp, .candidate = cp, .baseline = baseline, .policy = pol,
                          .threads = 2, .histogram = true};
    golden_diff_result *whole = NULL, *m = NULL;
    golden_error err;
    CU_ASSERT_FATAL(golden_diff_run(&o, &whole, &err) == 0);
    CU_ASSERT_EQUAL(whole->n, N_SPECS - 1); /* the run itself saw every tensor */
    CU_ASSERT_FALSE(whole->pass);
    char *want = report_text(whole), *want_table = golden_diff_table(whole, false);
    for (int how = 0; how < 3; how++)
        for (int n = 1; n <= 4; n++) {
            CU_ASSERT_FATAL(sharded(o, n, how, &m, &err) == 0);
            char *got = report_text(m), *got_table = golden_diff_table(m, false);
            CU_ASSERT_STRING_EQUAL(got, want);
            CU_ASSERT_STRING_EQUAL(got_table, want_table);
            CU_ASSERT_EQUAL(m->pass, whole->pass);
            CU_ASSERT_EQUAL(m->n_missing_cand, 1);
            CU_ASSERT_EQUAL(m->n_missing_ref, 1);
            free(got);
            free(got_table);
            golden_diff_free(m);
        }
    free(want);
    free(want_table);
    golden_diff_free(whole);
    golden_policy_free(pol);
}

static void test_two_way(void)
{
    same_as_single(NULL);
}

static void test_three_way(void)
{
    same_as_single(bp);
}

/* Every shorter or bit-flipped copy of a packed result is refused, never misread. */
static void test_damaged(void)
{
    golden_policy *pol = golden_policy_new();
    golden_diff_opts o = {.version = GOLDEN_DIFF_OPTS_VERSION,
                          .reference = rp, .candidate = cp, .baseline = bp, .policy = pol};
    golden_diff_result *r = NULL, *u = NULL;
    golden_error err;
    CU_ASSERT_FATAL(golden_diff_run(&o, &r, &err) == 0);
    void *buf = NULL;
    size_t len = 0;
    CU_ASSERT_FATAL(golden_diff_pack(r, &buf, &len, &err) == 0);
    size_t refused = 0;
    for (size_t cut = 0; cut < len; cut += 1 + cut / 64) {
        refused += golden_diff_unpack(buf, cut, &u, &err) != 0;
        CU_ASSERT_PTR_NULL(u);
        golden_diff_free(u);
        u = NULL;
    }
    CU_ASSERT_TRUE(refused > 100);
    CU_ASSERT_EQUAL(err.code, GOLDEN_ECORRUPT);
    ((unsigned char *)buf)[0] ^= 1;
    CU_ASSERT_EQUAL(golden_diff_unpack(buf, len, &u, &err), -1);
    CU_ASSERT_EQUAL(err.code, GOLDEN_ECORRUPT);
    free(buf);
    golden_diff_free(r);
    golden_policy_free(pol);
}

/* A baseline that is the candidate's data: the single run refuses it; so does the merge of
 * shards that each see only part of it (and each accept their part). */
static void test_same_baseline_after_merge(void)
{
    golden_policy *pol = golden_policy_new();
    golden_diff_opts o = {.version = GOLDEN_DIFF_OPTS_VERSION,
                          .reference = rp, .candidate = cp, .baseline = sp_, .policy = pol};
    golden_diff_result *r = NULL;
    golden_error err, merr;
    CU_ASSERT_EQUAL(golden_diff_run(&o, &r, &err), -1);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.what, "the baseline holds the candidate's data"));
    CU_ASSERT_EQUAL(sharded(o, 3, 0, &r, &merr), -1);
    CU_ASSERT_STRING_EQUAL(merr.where, err.where);
    CU_ASSERT_STRING_EQUAL(merr.what, err.what);
    golden_policy_free(pol);
}

/* Largest first, each to the lightest rank (ties: the lowest rank; equal sizes by name). */
static void test_plan(void)
{
    const uint64_t bytes[] = {40, 100, 30, 60, 50};
    const char *const names[] = {"d", "a", "e", "b", "c"};
    int owner[5];
    uint64_t load[2];
    /* 100 -> 0; 60 -> 1; 50 -> 1 (60 < 100); 40 -> 0 (100 < 110); 30 -> 1 (110 < 140) */
    CU_ASSERT_FATAL(shard_plan(bytes, names, 5, 2, owner, load) == 0);
    const int want[] = {0, 0, 1, 1, 1};
    CU_ASSERT_EQUAL(memcmp(owner, want, sizeof want), 0);
    CU_ASSERT_EQUAL(load[0], 140);
    CU_ASSERT_EQUAL(load[1], 140);
    /* equal sizes: by name, round the ranks; more ranks than items leaves some empty */
    const uint64_t same[] = {7, 7, 7};
    const char *const sn[] = {"z", "m", "a"};
    uint64_t l4[4];
    CU_ASSERT_FATAL(shard_plan(same, sn, 3, 4, owner, l4) == 0);
    CU_ASSERT_EQUAL(owner[2], 0); /* a */
    CU_ASSERT_EQUAL(owner[1], 1); /* m */
    CU_ASSERT_EQUAL(owner[0], 2); /* z */
    CU_ASSERT_EQUAL(l4[3], 0);
    /* one rank takes everything */
    CU_ASSERT_FATAL(shard_plan(bytes, names, 5, 1, owner, NULL) == 0);
    for (int i = 0; i < 5; i++)
        CU_ASSERT_EQUAL(owner[i], 0);
}

static void cleanup(void)
{
    const char *files[] = {"ref.h5", "cand.h5", "base.h5", "same.h5"};
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        char p[1100];
        path_of(p, sizeof p, files[i]);
        unlink(p);
    }
    rmdir(dir);
}

static void setup_files(void)
{
    path_of(rp, sizeof rp, "ref.h5");
    path_of(cp, sizeof cp, "cand.h5");
    path_of(bp, sizeof bp, "base.h5");
    path_of(sp_, sizeof sp_, "same.h5");
    write_side("ref.h5", 0, false);
    write_side("cand.h5", 1, false);
    write_side("base.h5", 2, false);
    write_side("same.h5", 2, true);
}

static void test_files(void)
{
    setup_files();
}

int main(void)
{
    const char *tmp = getenv("TMPDIR");
    snprintf(dir, sizeof dir, "%s/golden-diff-merge.XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(dir))
        return 2;
    static const golden_test tests[] = {
        {"the files", test_files},
        {"shards merged equal the single run", test_two_way},
        {"three-way shards merged equal the single run", test_three_way},
        {"damaged packed results are refused", test_damaged},
        {"a candidate baseline is refused after the merge", test_same_baseline_after_merge},
        {"the byte-balanced plan", test_plan},
        {0, 0},
    };
    int rc = golden_test_run("diff-merge", tests);
    cleanup();
    return rc;
}
