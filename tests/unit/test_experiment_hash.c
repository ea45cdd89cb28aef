/* golden_experiment_opts.hash_files (options version 3): the check's one hashing call goes to
 * the hook (manifest-verify's MPI ranks, docs/scale.md), its digests are the ones compared,
 * its error ends the check, and an older options version never calls it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cunit_main.h"
#include "golden/experiment.h"
#include "golden/hash.h"

typedef struct {
    int calls;
    size_t n;
    const char *lie_about; /* a path's tail whose digest the hook gets wrong */
    bool fail;
} hook_state;

static int hook(void *ctx, const char *const *paths, size_t n, char (*hexes)[65], int threads,
                golden_error *err)
{
    hook_state *h = ctx;
    h->calls++;
    h->n = n;
    if (h->fail)
        return golden_fail_what(err, GOLDEN_EIO, "rank 1", "its worker died");
    if (n && golden_sha256_files(paths, n, hexes, threads, err) != 0)
        return -1;
    for (size_t i = 0; h->lie_about && i < n; i++) {
        size_t lp = strlen(paths[i]), lt = strlen(h->lie_about);
        if (lp >= lt && strcmp(paths[i] + lp - lt, h->lie_about) == 0)
            memset(hexes[i], '0', 64);
    }
    return 0;
}

static int check(unsigned version, hook_state *h, golden_findings *f, golden_error *err)
{
    golden_experiment_opts o = {.version = version, .threads = 1, .hash_files = hook,
                                .hash_ctx = h};
    golden_findings_init(f);
    golden_error_clear(err);
    return golden_experiment_check(golden_test_source_path("examples/experiment/OP-MOE-0001"),
                                   &o, f, err);
}

static void test_hook_digests_are_compared(void)
{
    golden_findings f;
    golden_error err;
    hook_state h = {0};
    CU_ASSERT_EQUAL(check(GOLDEN_EXPERIMENT_OPTS_VERSION, &h, &f, &err), 0);
    CU_ASSERT_EQUAL(h.calls, 1);
    CU_ASSERT(h.n >= 8); /* the sealed example lists every asset */
    CU_ASSERT_EQUAL(f.errors, 0);
    CU_ASSERT_EQUAL(f.files_hashed, h.n);
    golden_findings_free(&f);

    hook_state lie = {.lie_about = "/decision.md"};
    CU_ASSERT_EQUAL(check(GOLDEN_EXPERIMENT_OPTS_VERSION, &lie, &f, &err), 0);
    CU_ASSERT_EQUAL(lie.calls, 1);
    CU_ASSERT_EQUAL(f.errors, 1); /* the seal's line of decision.md, by the hook's digest */
    bool named = false;
    for (size_t i = 0; i < f.count; i++)
        named = named || (strcmp(f.items[i].rule, "seal") == 0 &&
                          strstr(f.items[i].message, "'decision.md' is 0000") != NULL);
    CU_ASSERT(named);
    golden_findings_free(&f);
}

static void test_hook_error_ends_check(void)
{
    golden_findings f;
    golden_error err;
    hook_state h = {.fail = true};
    CU_ASSERT_EQUAL(check(GOLDEN_EXPERIMENT_OPTS_VERSION, &h, &f, &err), -1);
    CU_ASSERT_EQUAL(h.calls, 1);
    CU_ASSERT_STRING_EQUAL(err.what, "its worker died");
    golden_findings_free(&f);
}

static void test_version_2_never_calls(void)
{
    golden_findings f;
    golden_error err;
    hook_state h = {.lie_about = "/decision.md"};
    CU_ASSERT_EQUAL(check(2, &h, &f, &err), 0);
    CU_ASSERT_EQUAL(h.calls, 0);
    CU_ASSERT_EQUAL(f.errors, 0);
    CU_ASSERT(f.files_hashed >= 8);
    golden_findings_free(&f);
}

int main(void)
{
    static const golden_test tests[] = {
        {"hook_digests_are_compared", test_hook_digests_are_compared},
        {"hook_error_ends_check", test_hook_error_ends_check},
        {"version_2_never_calls", test_version_2_never_calls},
        {0, 0},
    };
    return golden_test_run("experiment_hash", tests);
}
