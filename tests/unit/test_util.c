/* The shared mechanisms of libgolden/util: error codes, the string map (keys with NULs, growth,
 * duplicates) and the worker pool (every item once, first failure by item order). */
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "cunit_main.h"
#include "golden/error.h"
#include "util/pool.h"
#include "util/strmap.h"
#include "util/vec.h"
#include "util/suggest.h"
#include <stdint.h>
#include <stdlib.h>

static void test_error_codes(void)
{
    golden_error e = {0};
    CU_ASSERT_EQUAL(golden_fail_what(&e, GOLDEN_EIO, "f.h5", "cannot read %d bytes", 7), GOLDEN_ERR);
    CU_ASSERT_EQUAL(e.code, GOLDEN_EIO);
    CU_ASSERT_STRING_EQUAL(e.where, "f.h5");
    CU_ASSERT_STRING_EQUAL(e.what, "cannot read 7 bytes");
    CU_ASSERT_EQUAL(golden_fail_where(&e, GOLDEN_ENOTFOUND, "no such tensor", "%s:%s", "g.h5", "x"),
                    GOLDEN_ERR);
    CU_ASSERT_EQUAL(e.code, GOLDEN_ENOTFOUND);
    CU_ASSERT_STRING_EQUAL(e.where, "g.h5:x");
    CU_ASSERT_STRING_EQUAL(e.what, "no such tensor");
    CU_ASSERT_EQUAL(golden_code_from_errno(ENOENT), GOLDEN_ENOTFOUND);
    CU_ASSERT_EQUAL(golden_code_from_errno(ENOMEM), GOLDEN_ENOMEM);
    CU_ASSERT_EQUAL(golden_code_from_errno(EEXIST), GOLDEN_EEXISTS);
    CU_ASSERT_EQUAL(golden_code_from_errno(EACCES), GOLDEN_EIO);
    CU_ASSERT_STRING_EQUAL(golden_code_name(GOLDEN_ECORRUPT), "ECORRUPT");
    golden_error_clear(&e);
    CU_ASSERT_EQUAL(e.code, GOLDEN_ENONE);
    CU_ASSERT_STRING_EQUAL(e.what, "");
    /* a NULL record is allowed and still reports failure */
    CU_ASSERT_EQUAL(golden_fail_what(NULL, GOLDEN_EINVAL, NULL, "x"), GOLDEN_ERR);
}

static void test_strmap(void)
{
    golden_strmap m = {0};
    static const char a[] = "a\0b", b[] = "a\0c";
    uint64_t v = 0;
    CU_ASSERT_EQUAL(lg_strmap_put(&m, a, 3, 1, NULL), 0);
    CU_ASSERT_EQUAL(lg_strmap_put(&m, b, 3, 2, NULL), 0); /* differs after the NUL */
    CU_ASSERT_EQUAL(lg_strmap_put(&m, "a", 1, 3, NULL), 0);
    CU_ASSERT_EQUAL(lg_strmap_put(&m, "", 0, 4, NULL), 0);
    CU_ASSERT_EQUAL(lg_strmap_put(&m, a, 3, 9, &v), 1);
    CU_ASSERT_EQUAL(v, 1);
    CU_ASSERT_EQUAL(lg_strmap_get(&m, b, 3, &v), 1);
    CU_ASSERT_EQUAL(v, 2);
    CU_ASSERT_EQUAL(lg_strmap_get(&m, "", 0, &v), 1);
    CU_ASSERT_EQUAL(v, 4);
    CU_ASSERT_EQUAL(lg_strmap_get(&m, "a\0d", 3, NULL), 0);
    /* growth keeps every key: 10^4 distinct keys, then each found with its value */
    static char keys[10000][16];
    for (int i = 0; i < 10000; i++) {
        snprintf(keys[i], sizeof keys[i], "k%d", i % 10000); /* (the bound silences -O1 truncation warnings) */
        CU_ASSERT_EQUAL_FATAL(lg_strmap_put(&m, keys[i], strlen(keys[i]), (uint64_t)i + 100, NULL), 0);
    }
    CU_ASSERT_EQUAL(m.n, 10004u);
    int bad = 0;
    for (int i = 0; i < 10000; i++)
        if (lg_strmap_get(&m, keys[i], strlen(keys[i]), &v) != 1 || v != (uint64_t)i + 100)
            bad++;
    CU_ASSERT_EQUAL(bad, 0);
    lg_strmap_free(&m);
    CU_ASSERT_EQUAL(m.cap, 0u);
    CU_ASSERT_EQUAL(lg_strmap_get(&m, "k1", 2, NULL), 0);
}

typedef struct {
    atomic_int hits[1000];
    size_t fail_from;
} pool_ctx;

static int count_item(void *ctx, size_t item, int worker, golden_error *err)
{
    pool_ctx *c = ctx;
    CU_ASSERT(worker >= 0 && worker < 4);
    atomic_fetch_add(&c->hits[item], 1);
    if (item >= c->fail_from)
        return golden_fail_what(err, GOLDEN_EINVAL, "item", "failed at %zu", item);
    return 0;
}

static void test_pool(void)
{
    static pool_ctx c;
    for (int threads = 1; threads <= 4; threads++) {
        memset(&c, 0, sizeof c);
        c.fail_from = (size_t)-1;
        golden_error e = {0};
        CU_ASSERT_EQUAL(lg_parallel_for(1000, threads, count_item, &c, &e), 0);
        int wrong = 0;
        for (int i = 0; i < 1000; i++)
            wrong += c.hits[i] != 1;
        CU_ASSERT_EQUAL(wrong, 0);
        /* a failure stops new items; the failure reported is the lowest item that failed */
        memset(&c, 0, sizeof c);
        c.fail_from = 500;
        CU_ASSERT_EQUAL(lg_parallel_for(1000, threads, count_item, &c, &e), GOLDEN_ERR);
        CU_ASSERT_STRING_EQUAL(e.what, "failed at 500");
        CU_ASSERT_EQUAL(e.code, GOLDEN_EINVAL);
        for (int i = 0; i < 500; i++)
            wrong += c.hits[i] != 1;
        CU_ASSERT_EQUAL(wrong, 0);
    }
    /* zero items: nothing runs, success */
    CU_ASSERT_EQUAL(lg_parallel_for(0, 2, count_item, &c, NULL), 0);
    CU_ASSERT(lg_cpu_count() >= 1);
}

/* vec_reserve: capacities worked out by hand (doubling from the first capacity), overflow
 * refused with the array left as it was. */
static void test_vec(void)
{
    int *v = NULL;
    size_t n = 0, cap = 0;
    for (int i = 0; i < 100; i++) {
        CU_ASSERT_EQUAL_FATAL(VEC_GROW(v, n, cap, 8), 0);
        v[n++] = i;
        if (i == 0)
            CU_ASSERT_EQUAL(cap, 8);
        if (i == 8)
            CU_ASSERT_EQUAL(cap, 16);
    }
    CU_ASSERT_EQUAL(cap, 128); /* 8, 16, 32, 64, 128 */
    long sum = 0;
    for (size_t i = 0; i < n; i++)
        sum += v[i];
    CU_ASSERT_EQUAL(sum, 4950);
    /* a reservation for many at once jumps straight past them */
    CU_ASSERT_EQUAL(vec_reserve(&v, &cap, 1000, sizeof *v, 8), 0);
    CU_ASSERT_EQUAL(cap, 1024);
    CU_ASSERT_EQUAL(v[99], 99);
    /* overflow: refused, nothing changed */
    int *before = v;
    CU_ASSERT_EQUAL(vec_reserve(&v, &cap, SIZE_MAX / 2, sizeof *v, 8), -1);
    CU_ASSERT_PTR_EQUAL(v, before);
    CU_ASSERT_EQUAL(cap, 1024);
    CU_ASSERT_EQUAL(vec_reserve(&v, &cap, SIZE_MAX, 1, 8), -1);
    CU_ASSERT_EQUAL(cap, 1024);
    free(v);
}

#define ED(a, b) lg_edit_distance(a, strlen(a), b, strlen(b))
#define CLOSE(a, b) lg_name_close(a, strlen(a), b, strlen(b), NULL)
/* Edit distances worked out by hand (optimal string alignment: a swap of neighbours is one
 * edit, "ca" -> "abc" is 3, not Damerau's 2), and the closeness rule's limits. */
static void test_suggest(void)
{
    CU_ASSERT_EQUAL(ED("", ""), 0);
    CU_ASSERT_EQUAL(ED("", "abc"), 3);
    CU_ASSERT_EQUAL(ED("seed", "seed"), 0);
    CU_ASSERT_EQUAL(ED("sed", "seed"), 1);      /* insert */
    CU_ASSERT_EQUAL(ED("seeed", "seed"), 1);    /* delete */
    CU_ASSERT_EQUAL(ED("atl", "atol"), 1);
    CU_ASSERT_EQUAL(ED("bootstarp", "bootstrap"), 1); /* swap */
    CU_ASSERT_EQUAL(ED("kitten", "sitting"), 3);
    CU_ASSERT_EQUAL(ED("ca", "abc"), 3);
    CU_ASSERT_EQUAL(ED("flaw", "lawn"), 2);
    char big[70];
    memset(big, 'a', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    CU_ASSERT_EQUAL(ED(big, "a"), SIZE_MAX);    /* past 64 bytes: never close */
    CU_ASSERT(CLOSE("chek", "check"));
    CU_ASSERT(!CLOSE("check", "check"));        /* the same name is no suggestion */
    CU_ASSERT(!CLOSE("x", "j"));                /* a whole one-letter name replaced */
    CU_ASSERT(!CLOSE("jsn", "html"));
    CU_ASSERT(CLOSE("tolerence", "tolerance"));
    CU_ASSERT(!CLOSE("tolrence", "tolerance_x")); /* 3 edits for 8 bytes: too far */
    CU_ASSERT(CLOSE("refrence_dtype", "reference_dtype"));
    lg_suggest s;
    char buf[120];
    lg_suggest_init(&s, "jsn", 3);
    const char *names[] = {"json", "junit", "js", "json", "html"};
    for (size_t i = 0; i < 5; i++)
        lg_suggest_offer(&s, names[i], strlen(names[i]));
    /* "json" and "js" are both one edit away; the second "json" counts once */
    CU_ASSERT_STRING_EQUAL(lg_suggest_text(&s, "--", buf, sizeof buf),
                           " (did you mean --json or --js?)");
    lg_suggest_init(&s, "zzzz", 4);
    lg_suggest_offer(&s, "json", 4);
    CU_ASSERT_STRING_EQUAL(lg_suggest_text(&s, "--", buf, sizeof buf), "");
    lg_suggest_init(&s, "ab", 2);
    lg_suggest_offer(&s, "abcd", 4); /* 2 edits: not close */
    lg_suggest_offer(&s, "abc", 3);
    lg_suggest_offer(&s, "xb", 2);
    lg_suggest_offer(&s, "a", 1);
    lg_suggest_offer(&s, "abd", 3);
    CU_ASSERT_EQUAL(s.ties, 4);
    CU_ASSERT_STRING_EQUAL(lg_suggest_text(&s, "", buf, sizeof buf),
                           " (did you mean abc, xb or a?)");
}

int main(void)
{
    static const golden_test tests[] = {
        {"error records carry codes", test_error_codes},
        {"string map: NUL bytes, growth, duplicates", test_strmap},
        {"parallel for: every item once, first failure", test_pool},
        {"growable array: doubling, bulk reserve, overflow", test_vec},
        {"did you mean: edit distance and closeness", test_suggest},
        {0, 0}};
    return golden_test_run("util", tests);
}
