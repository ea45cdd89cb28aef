/* Allocation-failure injection, SQLite style: each public entry point is run with its 1st, 2nd,
 * 3rd ... allocation failing until a run sees no failure; every failure must come back as an
 * error (GOLDEN_ENOMEM from the doc, schema, hash and util layers), never a crash, a wrong
 * success or (under ASan) a leak. How the allocations are caught: docs/testing.md. */
#include <errno.h>
#include <limits.h>
#include <openssl/crypto.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cunit_main.h"
#include "golden/doc.h"
#include "golden/experiment.h"
#include "golden/graph.h"
#include "golden/hash.h"
#include "golden/policy.h"
#include "golden/schema.h"
#include "util/pool.h"
#include "util/strmap.h"

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/lsan_interface.h>
#define LEAK_CHECK() __lsan_do_recoverable_leak_check()
#else
#define LEAK_CHECK() 0 /* without ASan the valgrind pass of make check looks for leaks */
#endif

/* ---------------------------------------------------------------- the injector */

static atomic_long alloc_calls; /* allocations seen since the injector was armed */
static atomic_long fail_at;     /* 0: disarmed; k: the k-th allocation fails */
static atomic_int fail_hit;     /* the k-th allocation happened (and failed) */

static int inject(void)
{
    long k = atomic_load(&fail_at);
    if (!k)
        return 0;
    if (atomic_fetch_add(&alloc_calls, 1) + 1 != k)
        return 0;
    atomic_store(&fail_hit, 1);
    errno = ENOMEM;
    return 1;
}

/* The linker's --wrap (GNUmakefile: ALLOC_WRAP) sends libgolden's and this file's calls here. */
void *__real_malloc(size_t n);
void *__real_calloc(size_t n, size_t size);
void *__real_realloc(void *p, size_t n);
char *__real_strdup(const char *s);
char *__real_strndup(const char *s, size_t n);
void *__wrap_malloc(size_t n);
void *__wrap_calloc(size_t n, size_t size);
void *__wrap_realloc(void *p, size_t n);
char *__wrap_strdup(const char *s);
char *__wrap_strndup(const char *s, size_t n);

void *__wrap_malloc(size_t n)
{
    return inject() ? NULL : __real_malloc(n);
}

void *__wrap_calloc(size_t n, size_t size)
{
    return inject() ? NULL : __real_calloc(n, size);
}

void *__wrap_realloc(void *p, size_t n)
{
    return inject() ? NULL : __real_realloc(p, n);
}

char *__wrap_strdup(const char *s)
{
    return inject() ? NULL : __real_strdup(s);
}

char *__wrap_strndup(const char *s, size_t n)
{
    return inject() ? NULL : __real_strndup(s, n);
}

/* Threads started by libgolden (the pool), counted for the threads option's test. */
static atomic_int threads_started;
int __real_pthread_create(pthread_t *t, const pthread_attr_t *a, void *(*fn)(void *), void *arg);
int __wrap_pthread_create(pthread_t *t, const pthread_attr_t *a, void *(*fn)(void *), void *arg);

int __wrap_pthread_create(pthread_t *t, const pthread_attr_t *a, void *(*fn)(void *), void *arg)
{
    atomic_fetch_add(&threads_started, 1);
    return __real_pthread_create(t, a, fn, arg);
}

/* jansson's and OpenSSL's own allocations come through their allocator hooks (this test
 * program's choice, installed first thing in main). */
static void *json_alloc(size_t n)
{
    return __wrap_malloc(n);
}

static void *ssl_malloc(size_t n, const char *file, int line)
{
    (void)file;
    (void)line;
    return __wrap_malloc(n);
}

static void *ssl_realloc(void *p, size_t n, const char *file, int line)
{
    (void)file;
    (void)line;
    return __wrap_realloc(p, n);
}

static void ssl_free(void *p, const char *file, int line)
{
    (void)file;
    (void)line;
    free(p);
}

/* One attempt at an entry point: GOLDEN_OK after checking the result against the reference,
 * GOLDEN_ERR with err filled, or WRONG when it succeeded with a wrong result. */
#define WRONG 2
typedef int (*attempt_fn)(void *ctx, golden_error *err);

/* Fail the 1st, 2nd, ... allocation of fn until a run has no failure. `enomem_only`: every
 * failure must be GOLDEN_ENOMEM (else any error with a message is accepted and counted). */
static int sweep_every(const char *name, attempt_fn fn, void *ctx, int enomem_only,
                       long dense, long stride)
{
    long k, other = 0, absorbed = 0, runs = 0;
    const long limit = 200000;
    char last_other[1100] = "";
    for (k = 1; k < limit; k += k < dense ? 1 : stride) {
        runs++;
        golden_error e;
        golden_error_clear(&e);
        atomic_store(&alloc_calls, 0);
        atomic_store(&fail_hit, 0);
        atomic_store(&fail_at, k);
        int rc = fn(ctx, &e);
        atomic_store(&fail_at, 0);
        if (!atomic_load(&fail_hit)) {
            if (rc != GOLDEN_OK)
                fprintf(stderr, "%s: fails with no injected failure: %s: %s\n", name, e.where,
                        e.what);
            CU_ASSERT_EQUAL(rc, GOLDEN_OK);
            break;
        }
        if (rc == WRONG)
            fprintf(stderr, "%s: allocation %ld failed and the call succeeded wrongly\n", name, k);
        CU_ASSERT_NOT_EQUAL(rc, WRONG);
        if (rc == WRONG)
            continue;
        if (rc == GOLDEN_OK) {
            absorbed++; /* a fallback took over, and the result was still right */
            continue;
        }
        CU_ASSERT_EQUAL(rc, GOLDEN_ERR);
        CU_ASSERT(e.what[0] != '\0');
        if (e.code != GOLDEN_ENOMEM) {
            other++;
            if (enomem_only || strcmp(last_other, e.what) != 0)
                fprintf(stderr, "%s: allocation %ld failed, reported as %s: %s: %s\n", name, k,
                        golden_code_name(e.code), e.where, e.what);
            snprintf(last_other, sizeof last_other, "%s", e.what);
        }
        if (enomem_only)
            CU_ASSERT_EQUAL(e.code, GOLDEN_ENOMEM);
    }
    CU_ASSERT(k < limit);
    CU_ASSERT(k > 1); /* the entry point allocates: otherwise this tested nothing */
    int leaks = LEAK_CHECK();
    CU_ASSERT_EQUAL(leaks, 0);
    fprintf(stderr, "alloc-failure %s: %ld allocation points, %ld failed in turn: %ld ENOMEM, "
                    "%ld other errors, %ld absorbed by a fallback%s\n",
            name, k - 1, runs - 1, runs - 1 - other - absorbed, other, absorbed,
            leaks ? ", LEAKS" : "");
    return leaks;
}

/* Every allocation of fn fails in turn. */
static void sweep(const char *name, attempt_fn fn, void *ctx, int enomem_only)
{
    sweep_every(name, fn, ctx, enomem_only, LONG_MAX, 1);
}

/* What a sweep of another module's entry point found (bits), in a forked child so that a
 * crash or a leak there is reported here without ending this suite or its leak checks. */
enum { FOUND_ASSERTS = 1, FOUND_LEAKS = 2, FOUND_CRASH = 4 };

/* Sweep another module's entry point in a child process. `known`: the findings its owner
 * has been told about (docs/testing.md lists them), accepted until fixed; anything else
 * fails this test. */
static void sweep_foreign(const char *name, attempt_fn fn, void *ctx, long dense, long stride,
                          int known)
{
    fflush(NULL);
    pid_t pid = fork();
    CU_ASSERT_FATAL(pid >= 0);
    if (pid == 0) {
        unsigned before = CU_get_number_of_failures();
        int leaks = sweep_every(name, fn, ctx, 0, dense, stride);
        fflush(NULL);
        unsigned asserts = CU_get_number_of_failures() - before - (leaks ? 1 : 0);
        _exit((asserts ? FOUND_ASSERTS : 0) | (leaks ? FOUND_LEAKS : 0));
    }
    int st = 0;
    CU_ASSERT_FATAL(waitpid(pid, &st, 0) == pid);
    int found = WIFEXITED(st) ? WEXITSTATUS(st) : FOUND_CRASH;
#if !defined(__SANITIZE_ADDRESS__)
    known &= ~FOUND_LEAKS; /* leaks are seen under ASan only */
#endif
    if (found && found == known)
        fprintf(stderr, "alloc-failure %s: KNOWN (%s%s%s), see docs/testing.md\n", name,
                found & FOUND_ASSERTS ? "wrong results " : "", found & FOUND_LEAKS ? "leaks " : "",
                found & FOUND_CRASH ? "crash" : "");
    else if (known && !found)
        fprintf(stderr, "alloc-failure %s: the known issue is gone: update docs/testing.md\n",
                name);
    else
        CU_ASSERT_EQUAL(found, 0);
}

/* ---------------------------------------------------------------- inputs */

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    fputs(text, f);
    fclose(f);
}

static const char json_text[] =
    "{\"name\": \"op\\u00e9\\n\", \"n\": -12, \"x\": 2.5e3, \"ok\": true, \"none\": null,\n"
    " \"list\": [1, [2, {\"deep\": false}], \"s\"], \"empty\": {}, \"arr\": []}\n";

static const char yaml_text[] =
    "base: &b {kind: item, flag: false, n: 1}\n"
    "items:\n"
    "  - *b\n"
    "  - {<<: *b, n: 2, id: second}\n"
    "text: |\n  two\n  lines\n"
    "nums: [0x10, 1.5, ~, -0.5e1]\n";

/* ---------------------------------------------------------------- doc */

typedef struct {
    const char *name, *text;
    json_t *want;
    int line, col; /* where want's "list" value starts */
} doc_case;

static int try_doc_load(void *vctx, golden_error *err)
{
    doc_case *c = vctx;
    golden_doc *d = NULL;
    if (golden_doc_load_buffer(c->name, c->text, strlen(c->text), &d, err) != GOLDEN_OK)
        return d ? WRONG : GOLDEN_ERR;
    int ok = json_equal(golden_doc_root(d), c->want);
    if (ok && c->line) {
        int l, col;
        golden_doc_line(d, json_object_get(golden_doc_root(d), "list"), &l, &col);
        /* positions are sorted on the first question; if that sort cannot allocate, the
         * position is unknown (0), as golden_doc_line documents, never a wrong one */
        ok = (l == c->line && col == c->col) || (l == 0 && atomic_load(&fail_hit));
    }
    golden_doc_free(d);
    return ok ? GOLDEN_OK : WRONG;
}

static void test_doc_json(void)
{
    json_error_t je;
    doc_case c = {"a.json", json_text, json_loads(json_text, 0, &je), 2, 10};
    CU_ASSERT_PTR_NOT_NULL_FATAL(c.want);
    sweep("golden_doc_load_buffer (JSON)", try_doc_load, &c, 1);
    json_decref(c.want);
}

static void test_doc_yaml(void)
{
    /* worked out by hand from YAML 1.2's core schema and the merge key */
    doc_case c = {"a.yaml", yaml_text,
                  json_pack("{s:{s:s,s:b,s:i},s:[{s:s,s:b,s:i},{s:s,s:b,s:i,s:s}],s:s,s:[i,f,n,f]}",
                            "base", "kind", "item", "flag", 0, "n", 1, "items", "kind", "item",
                            "flag", 0, "n", 1, "kind", "item", "flag", 0, "n", 2, "id", "second",
                            "text", "two\nlines\n", "nums", 16, 1.5, -5.0),
                  0, 0};
    CU_ASSERT_PTR_NOT_NULL_FATAL(c.want);
    sweep("golden_doc_load_buffer (YAML)", try_doc_load, &c, 1);
    json_decref(c.want);
}

typedef struct {
    size_t lines;
    json_int_t sum;
} jsonl_count;

static int on_line(void *vctx, golden_doc *d, size_t line_no, golden_error *err)
{
    (void)line_no;
    (void)err;
    jsonl_count *c = vctx;
    c->lines++;
    c->sum += json_integer_value(json_object_get(golden_doc_root(d), "v"));
    return 0;
}

static int try_doc_files(void *vctx, golden_error *err)
{
    (void)vctx;
    golden_doc *d = NULL;
    if (golden_doc_load_file("alloc.json", &d, err) != GOLDEN_OK)
        return GOLDEN_ERR;
    int ok = json_integer_value(json_object_get(golden_doc_root(d), "n")) == -12;
    golden_doc_free(d);
    jsonl_count c = {0, 0};
    if (golden_doc_each_jsonl("alloc.jsonl", on_line, &c, err) != GOLDEN_OK)
        return GOLDEN_ERR;
    return ok && c.lines == 3 && c.sum == 6 ? GOLDEN_OK : WRONG;
}

static void test_doc_files(void)
{
    write_file("alloc.json", json_text);
    write_file("alloc.jsonl", "{\"v\": 1}\n\n{\"v\": 2}\r\n{\"v\": 3, \"w\": [true]}\n");
    sweep("golden_doc_load_file + golden_doc_each_jsonl", try_doc_files, NULL, 1);
    unlink("alloc.json");
    unlink("alloc.jsonl");
}

/* ---------------------------------------------------------------- schema */

static const char schema_text[] =
    "{\"$schema\": \"https://json-schema.org/draft/2020-12/schema\",\n"
    " \"type\": \"object\", \"required\": [\"id\", \"items\"],\n"
    " \"properties\": {\"id\": {\"$ref\": \"#/$defs/id\"},\n"
    "   \"kind\": {\"enum\": [\"a\", \"b\"]},\n"
    "   \"items\": {\"type\": \"array\", \"uniqueItems\": true,\n"
    "             \"items\": {\"$ref\": \"#/$defs/item\"}}},\n"
    " \"patternProperties\": {\"^x-[a-z]+$\": {\"type\": \"string\"}},\n"
    " \"additionalProperties\": false,\n"
    " \"dependentRequired\": {\"kind\": [\"id\"]},\n"
    " \"$defs\": {\"id\": {\"type\": \"string\", \"pattern\": \"^op[0-9]+$\", \"maxLength\": 12},\n"
    "   \"item\": {\"type\": \"object\", \"required\": [\"n\"],\n"
    "            \"properties\": {\"n\": {\"type\": \"integer\", \"minimum\": 0},\n"
    "                           \"tag\": {\"anyOf\": [{\"type\": \"string\"}, {\"type\": \"null\"}]}},\n"
    "            \"if\": {\"required\": [\"tag\"]}, \"then\": {\"required\": [\"n\"]}}}}\n";

/* Instance: 5000 items (enough for the threaded path) of which items 7 and 4000 break the
 * minimum, plus a bad id and a property that is not allowed: 4 violations by hand. */
static char *big_instance(void)
{
    size_t n = 5000;
    char *buf = malloc(n * 32 + 128), *p = buf;
    CU_ASSERT_PTR_NOT_NULL_FATAL(buf);
    p += sprintf(p, "{\"id\": \"opX\", \"kind\": \"a\", \"x-note\": \"hi\", \"other\": 1, \"items\": [");
    for (size_t i = 0; i < n; i++)
        p += sprintf(p, "%s{\"n\": %ld, \"tag\": \"t%zu\"}", i ? "," : "",
                     i == 7 || i == 4000 ? -1L : (long)i, i);
    sprintf(p, "]}");
    return buf;
}

typedef struct {
    const char *ref;
    golden_schema *s;
    golden_doc *d;
    int threads;
    long want;
} schema_case;

static int try_schema_load(void *vctx, golden_error *err)
{
    schema_case *c = vctx;
    golden_schema *s = NULL;
    if (golden_schema_load(c->ref, &s, err) != GOLDEN_OK)
        return s ? WRONG : GOLDEN_ERR;
    golden_schema_free(s);
    return GOLDEN_OK;
}

static int try_schema_validate(void *vctx, golden_error *err)
{
    schema_case *c = vctx;
    golden_schema_options o = {GOLDEN_SCHEMA_OPTIONS_VERSION, c->threads};
    golden_violation *v = NULL;
    long n = golden_schema_validate_opts(c->s, c->d, NULL, &o, &v, err);
    if (n < 0)
        return v ? WRONG : GOLDEN_ERR;
    /* in document order: the id, the extra property, then the items */
    int ok = n == c->want && !strcmp(v[0].pointer, "/id") && !strcmp(v[0].keyword, "pattern") &&
             !strcmp(v[1].pointer, "/other") &&
             !strcmp(v[1].keyword, "additionalProperties") &&
             !strcmp(v[2].pointer, "/items/7/n") && !strcmp(v[2].keyword, "minimum") &&
             !strcmp(v[3].pointer, "/items/4000/n");
    free(v);
    return ok ? GOLDEN_OK : WRONG;
}

static void test_schema(void)
{
    write_file("alloc.schema.json", schema_text);
    schema_case c = {"alloc.schema.json", NULL, NULL, 1, 4};
    sweep("golden_schema_load (file)", try_schema_load, &c, 1);
    c.ref = "calculet-graph/v1";
    sweep("golden_schema_load (embedded calculet-graph/v1)", try_schema_load, &c, 1);
    golden_error e = {0};
    char *text = big_instance();
    CU_ASSERT_EQUAL_FATAL(golden_schema_load("alloc.schema.json", &c.s, &e), GOLDEN_OK);
    CU_ASSERT_EQUAL_FATAL(golden_doc_load_buffer("i.json", text, strlen(text), &c.d, &e),
                          GOLDEN_OK);
    free(text);
    c.threads = 1;
    sweep("golden_schema_validate_opts (1 thread)", try_schema_validate, &c, 1);
    c.threads = 3;
    sweep("golden_schema_validate_opts (3 threads)", try_schema_validate, &c, 1);
    /* the threads option bounds the threads validation starts (manifest-verify -j 1): one
     * means the calling thread only; three means two more, whatever the machine has */
    for (int t = 1; t <= 3; t += 2) {
        c.threads = t;
        atomic_store(&threads_started, 0);
        CU_ASSERT_EQUAL(try_schema_validate(&c, &e), GOLDEN_OK);
        CU_ASSERT_EQUAL(atomic_load(&threads_started), t - 1);
    }
    golden_doc_free(c.d);
    golden_schema_free(c.s);
    unlink("alloc.schema.json");
}

/* ---------------------------------------------------------------- util */

static char map_keys[1000][16];

static int try_strmap(void *vctx, golden_error *err)
{
    (void)vctx;
    golden_strmap m = {0};
    int rc = GOLDEN_OK;
    size_t done = 0; /* keys put */
    if (lg_strmap_reserve(&m, 10) != 0)
        rc = golden_fail_what(err, GOLDEN_ENOMEM, "strmap", "out of memory");
    while (rc == GOLDEN_OK && done < 1000) {
        if (lg_strmap_put(&m, map_keys[done], strlen(map_keys[done]), done, NULL) != 0)
            rc = golden_fail_what(err, GOLDEN_ENOMEM, "strmap", "out of memory");
        else
            done++;
    }
    /* a failed growth leaves the map as it was: every key put so far is still there */
    int ok = m.n == done;
    for (size_t i = 0; i < done; i++) {
        uint64_t v;
        ok &= lg_strmap_get(&m, map_keys[i], strlen(map_keys[i]), &v) == 1 && v == i;
    }
    lg_strmap_free(&m);
    return ok ? rc : WRONG;
}

static void test_strmap(void)
{
    for (int i = 0; i < 1000; i++)
        snprintf(map_keys[i], sizeof map_keys[i], "key%d", i);
    sweep("lg_strmap_put/reserve", try_strmap, NULL, 1);
}

static int alloc_item(void *vctx, size_t item, int worker, golden_error *err)
{
    (void)worker;
    atomic_long *sum = vctx;
    long *p = malloc(64 * sizeof *p);
    if (!p)
        return golden_fail_what(err, GOLDEN_ENOMEM, "item", "out of memory at %zu", item);
    p[63] = (long)item;
    atomic_fetch_add(sum, p[63]);
    free(p);
    return GOLDEN_OK;
}

static int try_parallel_for(void *vctx, golden_error *err)
{
    int threads = *(int *)vctx;
    atomic_long sum = 0;
    if (lg_parallel_for(100, threads, alloc_item, &sum, err) != GOLDEN_OK)
        return GOLDEN_ERR;
    return atomic_load(&sum) == 4950 ? GOLDEN_OK : WRONG;
}

/* The pool allocates nothing itself (100 items, 100 allocations, all the tasks'); a task's
 * failure comes back from lg_parallel_for. */
static void test_parallel_for(void)
{
    int threads = 1;
    sweep("lg_parallel_for (1 thread)", try_parallel_for, &threads, 1);
    threads = 4;
    sweep("lg_parallel_for (4 threads)", try_parallel_for, &threads, 1);
    atomic_store(&alloc_calls, 0);
    atomic_store(&fail_at, LONG_MAX);
    golden_error e;
    CU_ASSERT_EQUAL(try_parallel_for(&threads, &e), GOLDEN_OK);
    atomic_store(&fail_at, 0);
    CU_ASSERT_EQUAL(atomic_load(&alloc_calls), 100);
}

/* ---------------------------------------------------------------- hashing */

#define ABC_SHA256 "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"

static int try_hash(void *vctx, golden_error *err)
{
    (void)vctx;
    char hex[65];
    if (golden_sha256_buffer("abc", 3, hex, err) != GOLDEN_OK)
        return GOLDEN_ERR;
    if (strcmp(hex, ABC_SHA256) != 0)
        return WRONG;
    const char *paths[3] = {"alloc-a.bin", "alloc-b.bin", "alloc-a.bin"};
    char hexes[3][65];
    if (golden_sha256_files(paths, 3, hexes, 2, err) != GOLDEN_OK)
        return GOLDEN_ERR;
    return !strcmp(hexes[0], ABC_SHA256) && !strcmp(hexes[2], ABC_SHA256) &&
                   !strcmp(hexes[1],
                           "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
               ? GOLDEN_OK
               : WRONG;
}

static void test_hash(void)
{
    write_file("alloc-a.bin", "abc");
    write_file("alloc-b.bin", "");
    /* OpenSSL's one-time setup (the digest's method table) latches a failure for the rest of
     * the process: it runs once, without failures, before the sweep */
    golden_error e;
    CU_ASSERT_EQUAL(try_hash(NULL, &e), GOLDEN_OK);
    sweep("golden_sha256_buffer + golden_sha256_files", try_hash, NULL, 1);
    unlink("alloc-a.bin");
    unlink("alloc-b.bin");
}

/* ---------------------------------------------------------------- other modules */

static int try_graph(void *vctx, golden_error *err)
{
    const char *path = vctx;
    golden_graph *g = NULL;
    if (golden_graph_load_file(path, &g, err) != GOLDEN_OK)
        return g ? WRONG : GOLDEN_ERR;
    int ok = golden_graph_find_op(g, "no-such-op") == GOLDEN_NONE && g->nops > 0;
    golden_graph_free(g);
    return ok ? GOLDEN_OK : WRONG;
}

static void test_graph(void)
{
    char path[PATH_MAX + 64];
    snprintf(path, sizeof path, "%s", golden_test_source_path("tests/data/graphs/war-reused-buffer.json"));
    sweep_foreign("golden_graph_load_file", try_graph, path, LONG_MAX, 1, 0);
}

static int try_policy(void *vctx, golden_error *err)
{
    (void)vctx;
    golden_policy *p = golden_policy_new();
    if (!p)
        return golden_fail_what(err, GOLDEN_ENOMEM, "policy", "out of memory");
    if (golden_policy_load(p, "alloc-policy.yaml", err) != GOLDEN_OK) {
        golden_policy_free(p);
        return GOLDEN_ERR;
    }
    golden_judge j;
    golden_policy_resolve(p, "layers.3.attn_out", GOLDEN_F32, GOLDEN_F32, &j);
    int ok = j.tier == GOLDEN_TIER_LAYER && j.atol == 0.25;
    golden_policy_free(p);
    return ok ? GOLDEN_OK : WRONG;
}

static void test_policy(void)
{
    write_file("alloc-policy.yaml", "schema: calculet-diff-policy/v1\n"
                                    "default_tier: kernel\n"
                                    "rules:\n"
                                    "  - match: 'layers.*.attn*'\n"
                                    "    tier: layer\n"
                                    "    atol: 0.25\n"
                                    "dtypes: {bf16: {atol: 0.02, rtol: 0.01}}\n");
    sweep_foreign("golden_policy_load", try_policy, NULL, LONG_MAX, 1, 0);
    unlink("alloc-policy.yaml");
}

typedef struct {
    const char *dir;
    size_t count, errors, documents, files_hashed; /* of a run without failures */
} exp_case;

static int try_experiment(void *vctx, golden_error *err)
{
    exp_case *c = vctx;
    golden_experiment_opts o = {.threads = 1};
    golden_findings f;
    golden_findings_init(&f);
    int rc = golden_experiment_check(c->dir, &o, &f, err);
    int same = f.count == c->count && f.errors == c->errors && f.documents == c->documents &&
               f.files_hashed == c->files_hashed;
    golden_findings_free(&f);
    if (rc != 0)
        return GOLDEN_ERR;
    return same ? GOLDEN_OK : WRONG;
}

static void test_experiment(void)
{
    static char dir[PATH_MAX + 64];
    snprintf(dir, sizeof dir, "%s", golden_test_source_path("examples/experiment/OP-MOE-0001"));
    /* the example is a passing experiment: no errors or to-dos (only the notes of its
     * input_minimums_waiver); findings, documents and hashes as counted by a run without
     * failures (each failing run must not report fewer as a pass) */
    exp_case c = {dir, 0, 0, 0, 0};
    golden_experiment_opts o = {.threads = 1};
    golden_findings f;
    golden_findings_init(&f);
    golden_error e = {0};
    CU_ASSERT_EQUAL_FATAL(golden_experiment_check(dir, &o, &f, &e), 0);
    CU_ASSERT_EQUAL(f.errors, 0);
    CU_ASSERT_EQUAL(f.todos, 0);
    CU_ASSERT(f.count > 0); /* the waiver's notes */
    c.count = f.count;
    CU_ASSERT(f.documents > 0);
    c.documents = f.documents;
    c.files_hashed = f.files_hashed;
    golden_findings_free(&f);
    /* about 22,000 allocations, each run a whole check: the first 1,000 each, then every
     * 37th (a prime, so the samples fall on every kind of step of the check) */
    sweep_foreign("golden_experiment_check", try_experiment, &c, 1000, 37, 0);
}

int main(void)
{
    /* before anything allocates through them */
    json_set_alloc_funcs(json_alloc, free);
    if (!CRYPTO_set_mem_functions(ssl_malloc, ssl_realloc, ssl_free))
        fprintf(stderr, "OpenSSL allocated before main: its allocations are not injected\n");
    static const golden_test tests[] = {
        {"doc: JSON from memory", test_doc_json},
        {"doc: YAML from memory", test_doc_yaml},
        {"doc: files and JSON Lines", test_doc_files},
        {"schema: compile and validate", test_schema},
        {"util: string map", test_strmap},
        {"util: parallel for", test_parallel_for},
        {"hash: buffers and files", test_hash},
        {"graph: load", test_graph},
        {"policy: load", test_policy},
        {"experiment: check", test_experiment},
        {0, 0}};
    return golden_test_run("alloc", tests);
}
