/* JSON Schema 2020-12 in full: the project's own cases (tests/data/schema2020, one file a
 * topic) for every keyword and resolution rule, and error places, folders, meta-schema, limits. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cunit_main.h"
#include "golden/schema.h"

static char tmpdir[64];

static const char *data_path(const char *rel)
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
    snprintf(out, sizeof out, "%s/tests/data/schema2020/%s", exe, rel);
    return out;
}

/* Write text to tmpdir/name; returns the path (static). */
static const char *write_tmp(const char *name, const char *text)
{
    static char p[PATH_MAX];
    if (!tmpdir[0]) {
        snprintf(tmpdir, sizeof tmpdir, "/tmp/test_schema2020.XXXXXX");
        CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(tmpdir));
    }
    snprintf(p, sizeof p, "%s/%s", tmpdir, name);
    FILE *f = fopen(p, "w");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    fputs(text, f);
    fclose(f);
    return p;
}

static long count_violations(const golden_schema *s, const char *text, golden_violation **vout)
{
    golden_doc *d = NULL;
    golden_error e = {0};
    if (golden_doc_load_buffer("i.json", text, strlen(text), &d, &e) != GOLDEN_OK) {
        fprintf(stderr, "instance %s: %s\n", text, e.what);
        return -2;
    }
    golden_violation *v = NULL;
    long n = golden_schema_validate(s, d, NULL, &v, &e);
    if (n < 0)
        fprintf(stderr, "validate %s: %s: %s\n", text, e.where, e.what);
    if (vout)
        *vout = v;
    else
        free(v);
    golden_doc_free(d);
    return n;
}

static void run_instances(const golden_schema *s, const char *file, const char *name,
                          json_t *list, int want_valid, int *failures)
{
    size_t i;
    json_t *inst;
    json_array_foreach(list, i, inst)
    {
        char *text = json_dumps(inst, JSON_ENCODE_ANY | JSON_COMPACT);
        long n = count_violations(s, text, NULL);
        int ok = want_valid ? n == 0 : n > 0;
        if (!ok) {
            fprintf(stderr, "%s: %s: %s should be %s (%ld violations)\n", file, name, text,
                    want_valid ? "valid" : "invalid", n);
            (*failures)++;
        }
        free(text);
    }
}

/* One case file: each case's schema is written to a file and loaded from there. */
static void run_case_file(const char *file)
{
    json_error_t je;
    json_t *cases = json_load_file(data_path(file), 0, &je);
    CU_ASSERT_PTR_NOT_NULL_FATAL(cases);
    int failures = 0;
    size_t i;
    json_t *c;
    json_array_foreach(cases, i, c)
    {
        const char *name = json_string_value(json_object_get(c, "name"));
        char *text = json_dumps(json_object_get(c, "schema"), JSON_ENCODE_ANY);
        const char *path = write_tmp("case.schema.json", text);
        free(text);
        golden_schema_load_options lo = GOLDEN_SCHEMA_LOAD_OPTIONS_INIT;
        char dir[PATH_MAX + 64];
        const char *dirs[1] = {dir};
        json_t *d = json_object_get(c, "dir");
        if (json_is_string(d)) {
            snprintf(dir, sizeof dir, "https://remote.test/=%s", data_path(json_string_value(d)));
            lo.dirs = dirs;
            lo.ndirs = 1;
        }
        lo.format_assert = json_is_true(json_object_get(c, "format_assert"));
        golden_schema *s = NULL;
        golden_error e = {0};
        if (golden_schema_load_opts(path, &lo, &s, &e) != GOLDEN_OK) {
            fprintf(stderr, "%s: %s: schema does not load: %s: %s\n", file, name, e.where, e.what);
            failures++;
            continue;
        }
        run_instances(s, file, name, json_object_get(c, "valid"), 1, &failures);
        run_instances(s, file, name, json_object_get(c, "invalid"), 0, &failures);
        golden_schema_free(s);
    }
    CU_ASSERT_EQUAL(failures, 0);
    CU_ASSERT(json_array_size(cases) > 0);
    json_decref(cases);
}

static void test_keywords(void) { run_case_file("keywords.json"); }
static void test_resolution(void) { run_case_file("resolution.json"); }
static void test_dynamic(void) { run_case_file("dynamic.json"); }
static void test_unevaluated(void) { run_case_file("unevaluated.json"); }
static void test_patterns(void) { run_case_file("patterns.json"); }
static void test_formats(void) { run_case_file("formats.json"); }
static void test_vocabulary(void) { run_case_file("vocabulary.json"); }

static golden_schema *load_text(const char *text)
{
    golden_schema *s = NULL;
    golden_error e = {0};
    if (golden_schema_load(write_tmp("t.schema.json", text), &s, &e) != GOLDEN_OK)
        fprintf(stderr, "load: %s: %s\n", e.where, e.what);
    CU_ASSERT_PTR_NOT_NULL_FATAL(s);
    return s;
}

/* unevaluated* violations keep their keyword, JSON pointer and file:line:col */
static void test_unevaluated_places(void)
{
    golden_schema *s = load_text("{\"allOf\": [{\"properties\": {\"a\": true}}],\n"
                                 " \"properties\": {\"list\": {\"prefixItems\": [true], "
                                 "\"unevaluatedItems\": {\"type\": \"integer\"}}},\n"
                                 " \"unevaluatedProperties\": false}");
    golden_violation *v = NULL;
    long n = count_violations(s, "{\"a\": 1,\n \"b/c\": 2,\n \"list\": [0, \"x\"]}", &v);
    CU_ASSERT_EQUAL_FATAL(n, 2);
    /* unevaluatedProperties runs after the other keywords of its schema: the item first */
    golden_violation t = v[0];
    v[0] = v[1];
    v[1] = t;
    CU_ASSERT_STRING_EQUAL(v[0].keyword, "unevaluatedProperties");
    CU_ASSERT_STRING_EQUAL(v[0].pointer, "/b~1c");
    CU_ASSERT_STRING_EQUAL(v[0].where, "i.json:2:9");
    CU_ASSERT_PTR_NOT_NULL(strstr(v[0].message, "\"b/c\" is not allowed"));
    CU_ASSERT_STRING_EQUAL(v[1].keyword, "type");
    CU_ASSERT_STRING_EQUAL(v[1].pointer, "/list/1");
    CU_ASSERT_STRING_EQUAL(v[1].where, "i.json:3:14");
    free(v);
    golden_schema_free(s);
}

/* A schema beside the referring one is found by file name and by its $id. */
static void test_beside(void)
{
    write_tmp("word.schema.json", "{\"$id\": \"https://beside.test/w\", \"type\": \"string\"}");
    write_tmp("num.json", "{\"type\": \"number\"}");
    golden_schema *s = load_text("{\"properties\": {\"a\": {\"$ref\": \"https://beside.test/w\"}, "
                                 "\"b\": {\"$ref\": \"num.json\"}}}");
    CU_ASSERT_EQUAL(count_violations(s, "{\"a\": \"x\", \"b\": 1}", NULL), 0);
    CU_ASSERT_EQUAL(count_violations(s, "{\"a\": 1, \"b\": \"x\"}", NULL), 2);
    golden_schema_free(s);
    /* an unknown absolute URI is an error at load (never fetched) */
    golden_schema *t = NULL;
    golden_error e = {0};
    CU_ASSERT_EQUAL(golden_schema_load(write_tmp("t.schema.json",
                                                 "{\"$ref\": \"https://nowhere.test/x\"}"),
                                       &t, &e), GOLDEN_ERR);
    CU_ASSERT_PTR_NOT_NULL(strstr(e.what, "nothing is fetched"));
}

/* --schema-dir: every schema of the folder by $id; a schema can be named by its $id too. */
static void test_schema_dir(void)
{
    golden_schema_load_options lo = GOLDEN_SCHEMA_LOAD_OPTIONS_INIT;
    char dir[PATH_MAX];
    snprintf(dir, sizeof dir, "%s", data_path("remote"));
    const char *dirs[1] = {dir};
    lo.dirs = dirs;
    lo.ndirs = 1;
    golden_schema *s = NULL;
    golden_error e = {0};
    CU_ASSERT_EQUAL_FATAL(golden_schema_load_opts("https://remote.test/ids/positive", &lo, &s, &e),
                          GOLDEN_OK);
    CU_ASSERT_EQUAL(count_violations(s, "1", NULL), 0);
    CU_ASSERT_EQUAL(count_violations(s, "0", NULL), 1);
    golden_schema_free(s);
    /* without the folder the same $id is unknown */
    CU_ASSERT_EQUAL(golden_schema_load("https://remote.test/ids/positive", &s, &e), GOLDEN_ERR);
    lo.version = 99;
    CU_ASSERT_EQUAL(golden_schema_load_opts("https://remote.test/ids/positive", &lo, &s, &e),
                    GOLDEN_ERR);
}

/* The embedded meta-schema checks schemas, offline, by its URI. */
static void test_meta_schema(void)
{
    golden_schema *s = NULL;
    golden_error e = {0};
    CU_ASSERT_EQUAL_FATAL(golden_schema_load("https://json-schema.org/draft/2020-12/schema", &s, &e),
                          GOLDEN_OK);
    CU_ASSERT_EQUAL(count_violations(s, "{\"type\": \"object\", \"properties\": {\"a\": "
                                        "{\"$ref\": \"#/$defs/x\"}}, \"$defs\": {\"x\": true}}",
                                     NULL), 0);
    golden_violation *v = NULL;
    CU_ASSERT_EQUAL(count_violations(s, "{\"properties\": {\"a\": {\"minLength\": -1}}}", &v), 1);
    if (v)
        CU_ASSERT_STRING_EQUAL(v[0].pointer, "/properties/a/minLength");
    free(v);
    /* $dynamicRef "#meta" reaches nested schemas: a bad keyword deep inside is found */
    CU_ASSERT(count_violations(s, "{\"items\": {\"not\": {\"uniqueItems\": 1}}}", NULL) > 0);
    golden_schema_free(s);
}

/* A catastrophic pattern ends in an error, not a hang and never a pass. */
static void test_catastrophic_pattern(void)
{
    golden_schema *s = load_text("{\"pattern\": \"^(a+)+$\"}");
    char text[80];
    snprintf(text, sizeof text, "\"%s\"", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa!");
    time_t t0 = time(NULL);
    golden_doc *d = NULL;
    golden_error e = {0};
    CU_ASSERT_EQUAL_FATAL(golden_doc_load_buffer("i.json", text, strlen(text), &d, &e), GOLDEN_OK);
    golden_violation *v = NULL;
    CU_ASSERT_EQUAL(golden_schema_validate(s, d, NULL, &v, &e), -1);
    CU_ASSERT_PTR_NOT_NULL(strstr(e.what, "match limit"));
    CU_ASSERT(time(NULL) - t0 < 20);
    free(v);
    golden_doc_free(d);
    /* the same pattern on a short subject decides normally */
    CU_ASSERT_EQUAL(count_violations(s, "\"aaa\"", NULL), 0);
    CU_ASSERT_EQUAL(count_violations(s, "\"aab!\"", NULL), 1);
    golden_schema_free(s);
}

static void cleanup(void)
{
    if (!tmpdir[0])
        return;
    const char *names[] = {"case.schema.json", "t.schema.json", "word.schema.json", "num.json"};
    for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
        char p[PATH_MAX];
        snprintf(p, sizeof p, "%s/%s", tmpdir, names[i]);
        unlink(p);
    }
    rmdir(tmpdir);
}

int main(void)
{
    static const golden_test tests[] = {
        {"every keyword", test_keywords},
        {"references and resources", test_resolution},
        {"$dynamicRef", test_dynamic},
        {"unevaluated*", test_unevaluated},
        {"unevaluated* places", test_unevaluated_places},
        {"ECMA-262 patterns", test_patterns},
        {"formats", test_formats},
        {"$vocabulary", test_vocabulary},
        {"schemas beside the referring one", test_beside},
        {"schema folders", test_schema_dir},
        {"the 2020-12 meta-schema", test_meta_schema},
        {"catastrophic pattern", test_catastrophic_pattern},
        {NULL, NULL},
    };
    int rc = golden_test_run("schema2020", tests);
    cleanup();
    return rc;
}
