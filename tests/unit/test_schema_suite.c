/* The official JSON-Schema-Test-Suite, draft 2020-12 required tests (tests/data/
 * json-schema-test-suite, see its README for the commit): every case must pass, with the
 * suite's remotes/ served from disk as http://localhost:1234/ (--schema-dir BASEURI=DIR). */
#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cunit_main.h"
#include "golden/schema.h"

/* What the imported snapshot holds (counted by hand with python3 over the same files):
 * a file or case that goes missing makes the test fail instead of passing on less. */
#define SUITE_FILES 46
#define SUITE_CASES 1299

static char tmpdir[64];

static const char *suite_path(const char *rel)
{
    static char out[PATH_MAX + 64];
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0)
        return rel;
    exe[n] = '\0';
    for (int up = 0; up < 3; up++) {
        char *s = strrchr(exe, '/');
        if (s)
            *s = '\0';
    }
    snprintf(out, sizeof out, "%s/tests/data/json-schema-test-suite/%s", exe, rel);
    return out;
}

static const char *write_schema(const char *text)
{
    static char p[PATH_MAX];
    if (!tmpdir[0]) {
        snprintf(tmpdir, sizeof tmpdir, "/tmp/test_schema_suite.XXXXXX");
        CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(tmpdir));
    }
    snprintf(p, sizeof p, "%s/case.schema.json", tmpdir);
    FILE *f = fopen(p, "w");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    fputs(text, f);
    fclose(f);
    return p;
}

/* 1 valid, 0 invalid, -1 could not check (an error is never a pass) */
static int verdict(const golden_schema *s, const json_t *data, char **shown)
{
    char *text = json_dumps(data, JSON_ENCODE_ANY | JSON_COMPACT);
    *shown = text;
    golden_doc *d = NULL;
    golden_error e = {0};
    if (!text || golden_doc_load_buffer("data.json", text, strlen(text), &d, &e) != GOLDEN_OK)
        return -1;
    golden_violation *v = NULL;
    long n = golden_schema_validate(s, d, NULL, &v, &e);
    free(v);
    golden_doc_free(d);
    if (n < 0)
        fprintf(stderr, "    validate: %s: %s\n", e.where, e.what);
    return n < 0 ? -1 : n == 0;
}

/* One suite file: returns the number of cases run, adds the failures to *failures.
 * remotes: the --schema-dir argument (the folder alone, or BASEURI=folder). */
static int run_file(const char *name, const char *remotes, int *failures)
{
    char rel[PATH_MAX];
    snprintf(rel, sizeof rel, "tests/draft2020-12/%s", name);
    json_error_t je;
    json_t *groups = json_load_file(suite_path(rel), JSON_ALLOW_NUL, &je);
    if (!groups) {
        fprintf(stderr, "%s: %s\n", name, je.text);
        (*failures)++;
        return 0;
    }
    const char *dirs[1] = {remotes};
    int cases = 0;
    size_t i, j;
    json_t *g, *t;
    json_array_foreach(groups, i, g)
    {
        const char *desc = json_string_value(json_object_get(g, "description"));
        char *text = json_dumps(json_object_get(g, "schema"), JSON_ENCODE_ANY);
        golden_schema_load_options lo = GOLDEN_SCHEMA_LOAD_OPTIONS_INIT;
        lo.dirs = dirs;
        lo.ndirs = 1;
        golden_schema *s = NULL;
        golden_error e = {0};
        int loaded = golden_schema_load_opts(write_schema(text), &lo, &s, &e) == GOLDEN_OK;
        free(text);
        if (!loaded)
            fprintf(stderr, "%s: %s: schema does not load: %s: %s\n", name, desc, e.where, e.what);
        json_array_foreach(json_object_get(g, "tests"), j, t)
        {
            cases++;
            if (!loaded) {
                (*failures)++;
                continue;
            }
            char *shown = NULL;
            int want = json_is_true(json_object_get(t, "valid"));
            int got = verdict(s, json_object_get(t, "data"), &shown);
            if (got != want) {
                fprintf(stderr, "%s: %s: %s: %s should be %s, is %s\n", name, desc,
                        json_string_value(json_object_get(t, "description")), shown,
                        want ? "valid" : "invalid",
                        got < 0 ? "an error" : got ? "valid" : "invalid");
                (*failures)++;
            }
            free(shown);
        }
        golden_schema_free(s);
    }
    json_decref(groups);
    return cases;
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static void run_suite(const char *remotes)
{
    DIR *dir = opendir(suite_path("tests/draft2020-12"));
    CU_ASSERT_PTR_NOT_NULL_FATAL(dir);
    char *names[128];
    int nfiles = 0;
    struct dirent *de;
    while ((de = readdir(dir)) && nfiles < 128) {
        size_t len = strlen(de->d_name);
        if (len > 5 && strcmp(de->d_name + len - 5, ".json") == 0)
            names[nfiles++] = strdup(de->d_name);
    }
    closedir(dir);
    qsort(names, (size_t)nfiles, sizeof *names, by_name);
    int cases = 0, failures = 0;
    for (int i = 0; i < nfiles; i++) {
        cases += run_file(names[i], remotes, &failures);
        free(names[i]);
    }
    fprintf(stderr, "JSON-Schema-Test-Suite draft2020-12, --schema-dir %s: %d files, %d of %d "
            "cases pass\n", strncmp(remotes, "http", 4) ? "remotes" : "BASEURI=remotes", nfiles,
            cases - failures, cases);
    CU_ASSERT_EQUAL(nfiles, SUITE_FILES);
    CU_ASSERT_EQUAL(cases, SUITE_CASES);
    CU_ASSERT_EQUAL(failures, 0);
}

/* --schema-dir remotes: the folder's base URI (http://localhost:1234/) is read from the $id of
 * its own files, so the remote references find their files. */
static void test_required_plain(void)
{
    char remotes[PATH_MAX + 64];
    snprintf(remotes, sizeof remotes, "%s", suite_path("remotes"));
    run_suite(remotes);
}

/* --schema-dir http://localhost:1234/=remotes: the base URI given. */
static void test_required_base(void)
{
    char remotes[PATH_MAX + 64];
    snprintf(remotes, sizeof remotes, "http://localhost:1234/=%s", suite_path("remotes"));
    run_suite(remotes);
}

/* Without the remotes folder the remote references cannot be resolved: a load error, never a
 * pass (nothing is fetched from the network). */
static void test_no_remotes(void)
{
    golden_schema *s = NULL;
    golden_error e = {0};
    const char *p = write_schema("{\"$ref\": \"http://localhost:1234/draft2020-12/integer.json\"}");
    CU_ASSERT_EQUAL(golden_schema_load(p, &s, &e), GOLDEN_ERR);
    CU_ASSERT_PTR_NOT_NULL(strstr(e.what, "nothing is fetched"));
}

static void put(const char *rel, const char *text)
{
    char p[PATH_MAX];
    snprintf(p, sizeof p, "%s/%s", tmpdir, rel);
    FILE *f = fopen(p, "w");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    fputs(text, f);
    fclose(f);
}

/* 1 when the schema {"$ref": ref} loads with --schema-dir tmpdir/lib, 0 when it does not. */
static int loads_with_lib(const char *ref)
{
    char schema[600], lib[PATH_MAX];
    snprintf(schema, sizeof schema, "{\"$ref\": \"%s\"}", ref);
    const char *p = write_schema(schema);
    snprintf(lib, sizeof lib, "%s/lib", tmpdir);
    const char *dirs[1] = {lib};
    golden_schema_load_options lo = GOLDEN_SCHEMA_LOAD_OPTIONS_INIT;
    lo.dirs = dirs;
    lo.ndirs = 1;
    golden_schema *s = NULL;
    golden_error e = {0};
    int ok = golden_schema_load_opts(p, &lo, &s, &e) == GOLDEN_OK;
    if (!ok)
        CU_ASSERT_PTR_NOT_NULL(strstr(e.what, "nothing is fetched"));
    golden_schema_free(s);
    return ok;
}

/* How a plain folder's base URI is inferred: from files whose $id ends in their own path;
 * an $id that names another path is no evidence; two files that disagree: no base at all. */
static void test_base_inference(void)
{
    write_schema("{}");
    char p[PATH_MAX];
    snprintf(p, sizeof p, "%s/lib", tmpdir);
    CU_ASSERT_EQUAL_FATAL(mkdir(p, 0700), 0);
    snprintf(p, sizeof p, "%s/lib/sub", tmpdir);
    CU_ASSERT_EQUAL_FATAL(mkdir(p, 0700), 0);
    put("lib/sub/b.json", "{\"type\": \"string\"}");
    /* no file tells a base: b.json (no $id) is not reachable by any http URI */
    CU_ASSERT_EQUAL(loads_with_lib("https://x.test/lib/sub/b.json"), 0);
    put("lib/a.json", "{\"$id\": \"https://x.test/lib/a.json\", \"type\": \"integer\"}");
    CU_ASSERT_EQUAL(loads_with_lib("https://x.test/lib/sub/b.json"), 1);
    CU_ASSERT_EQUAL(loads_with_lib("https://x.test/lib/a.json"), 1);
    CU_ASSERT_EQUAL(loads_with_lib("https://x.test/sub/b.json"), 0);
    CU_ASSERT_EQUAL(loads_with_lib("https://other.test/lib/sub/b.json"), 0);
    /* an $id naming another path is registered by that $id, and is no evidence */
    put("lib/d.json", "{\"$id\": \"https://z.test/elsewhere.json\"}");
    CU_ASSERT_EQUAL(loads_with_lib("https://x.test/lib/sub/b.json"), 1);
    CU_ASSERT_EQUAL(loads_with_lib("https://z.test/elsewhere.json"), 1);
    /* a second file saying another base: nothing is guessed, $id lookups still work */
    put("lib/sub/c.json", "{\"$id\": \"https://y.test/sub/c.json\"}");
    CU_ASSERT_EQUAL(loads_with_lib("https://x.test/lib/sub/b.json"), 0);
    CU_ASSERT_EQUAL(loads_with_lib("https://y.test/sub/c.json"), 1);
    CU_ASSERT_EQUAL(loads_with_lib("https://x.test/lib/a.json"), 1);
}

static void cleanup(void)
{
    if (!tmpdir[0])
        return;
    const char *names[] = {"case.schema.json", "lib/sub/b.json", "lib/sub/c.json",
                           "lib/a.json", "lib/d.json", "lib/sub", "lib"};
    for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
        char p[PATH_MAX];
        snprintf(p, sizeof p, "%s/%s", tmpdir, names[i]);
        remove(p);
    }
    rmdir(tmpdir);
}

int main(void)
{
    static const golden_test tests[] = {
        {"draft 2020-12 required, --schema-dir remotes", test_required_plain},
        {"draft 2020-12 required, --schema-dir BASEURI=remotes", test_required_base},
        {"remote references need --schema-dir", test_no_remotes},
        {"a plain folder's base URI", test_base_inference},
        {NULL, NULL},
    };
    int rc = golden_test_run("schema_suite", tests);
    cleanup();
    return rc;
}
