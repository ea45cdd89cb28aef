/* The JSON Lines pipeline (libgolden/doc/jsonl_par.c) against the one-thread reader
 * (golden_doc_each_jsonl): for every file and every worker count and chunk size, the same
 * lines taken in the same order with the same line numbers and trees, the prep's result beside
 * its own line, and the same first error (the same words, the same place). Files: blank lines,
 * CRLF, a byte order mark first and later, no final newline, a bad line late, a duplicate key,
 * a line over 1 MiB, fewer lines than workers, a prep or take failure (either first). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cunit_main.h"
#include "golden/doc.h"
#include "doc/jsonl_internal.h"

typedef struct {
    char *log;
    size_t len, cap;
} trace;

static void emit(trace *t, const char *s)
{
    size_t n = strlen(s);
    if (t->len + n + 1 > t->cap) {
        t->cap = (t->len + n + 1) * 2;
        t->log = realloc(t->log, t->cap);
    }
    memcpy(t->log + t->len, s, n + 1);
    t->len += n;
}

typedef struct {
    size_t line_no;
    size_t size; /* what prep saw: the tree's dump length */
} slot_t;

/* prep: the dump's length; fails on {"prep_fail": ...} */
static int prep(void *ctx, golden_doc *d, size_t line_no, void *slot, golden_error *err)
{
    (void)ctx;
    slot_t *s = slot;
    json_t *r = golden_doc_root(d);
    if (json_object_get(r, "prep_fail"))
        return golden_fail_where(err, GOLDEN_EINVAL, "prep refuses", "line %zu", line_no);
    char *text = json_dumps(r, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY);
    s->size = text ? strlen(text) : 0;
    s->line_no = line_no;
    free(text);
    return 0;
}

static int take(void *ctx, golden_doc *d, size_t line_no, void *slot, golden_error *err)
{
    trace *t = ctx;
    slot_t *s = slot;
    json_t *r = golden_doc_root(d);
    char *text = json_dumps(r, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY);
    char head[96];
    snprintf(head, sizeof head, "%zu [%zu %zu] ", line_no, s->line_no, s->size);
    emit(t, head);
    emit(t, strlen(text) > 200 ? "(long)" : text);
    emit(t, "\n");
    CU_ASSERT(s->line_no == line_no && s->size == strlen(text)); /* its own line's prep */
    free(text);
    if (json_object_get(r, "take_fail"))
        return golden_fail_where(err, GOLDEN_EINVAL, "take refuses", "line %zu", line_no);
    return 0;
}

static void slot_clear(void *slot)
{
    memset(slot, 0, sizeof(slot_t));
}

/* The reference: the one-thread reader, prep then take on each line. */
typedef struct {
    trace *t;
} ref_ctx;

static int ref_line(void *ctx, golden_doc *d, size_t line_no, golden_error *err)
{
    slot_t s = {0, 0};
    if (prep(NULL, d, line_no, &s, err) != 0)
        return -1;
    return take(((ref_ctx *)ctx)->t, d, line_no, &s, err);
}

static void result(trace *t, int rc, const golden_error *err)
{
    char tail[2200];
    snprintf(tail, sizeof tail, "rc %d", rc);
    emit(t, tail);
    if (rc != 0) {
        snprintf(tail, sizeof tail, " %s | %s", err->where, err->what);
        emit(t, tail);
    }
}

static size_t files_compared;

static void compare_file(const char *text, size_t len)
{
    char path[] = "/tmp/test_jsonl_par_XXXXXX";
    int fd = mkstemp(path);
    CU_ASSERT_FATAL(fd >= 0);
    CU_ASSERT_FATAL(write(fd, text, len) == (ssize_t)len);
    close(fd);
    trace ref = {0};
    golden_error err;
    golden_error_clear(&err);
    ref_ctx rc = {&ref};
    int r = golden_doc_each_jsonl(path, ref_line, &rc, &err);
    result(&ref, r, &err);
    static const int workers[] = {1, 2, 3};
    static const size_t chunks[] = {0, 1, 2, 3, 7};
    for (size_t w = 0; w < 3; w++)
        for (size_t c = 0; c < 5; c++) {
            trace got = {0};
            lg_jsonl_par p = {workers[w], chunks[c], sizeof(slot_t), prep, NULL, take, &got,
                              slot_clear};
            golden_error_clear(&err);
            int g = lg_doc_each_jsonl_par(path, &p, &err);
            result(&got, g, &err);
            CU_ASSERT_STRING_EQUAL(got.log, ref.log);
            if (strcmp(got.log, ref.log) != 0)
                fprintf(stderr, "workers %d chunk %zu:\n--- one thread:\n%s\n--- pipeline:\n%s\n",
                        workers[w], chunks[c], ref.log, got.log);
            free(got.log);
        }
    free(ref.log);
    unlink(path);
    files_compared++;
}

static void compare(const char *text)
{
    compare_file(text, strlen(text));
}

static char *numbered(size_t n, size_t bad_at, const char *bad)
{
    size_t cap = n * 40 + 200;
    char *s = malloc(cap), *p = s;
    for (size_t i = 1; i <= n; i++)
        if (i == bad_at)
            p += sprintf(p, "%s\n", bad);
        else
            p += sprintf(p, "{\"i\":%zu,\"s\":\"line %zu\"}\n", i, i);
    *p = 0;
    return s;
}

static void test_plain_and_tiny(void)
{
    compare("");
    compare("\n\n  \n");
    compare("{\"a\":1}");
    compare("{\"a\":1}\n{\"b\":2}\n");
    compare("{\"a\":1}\n\n\n{\"b\":[1,2,{\"c\":null}]}\n   \n{\"d\":\"\\u00e9\"}");
    char *s = numbered(40, 0, NULL);
    compare(s);
    free(s);
}

static void test_cr_bom(void)
{
    compare("{\"a\":1}\r\n{\"b\":2}\r\n\r\n{\"c\":3}\r\n");
    compare("\xEF\xBB\xBF{\"a\":1}\n{\"b\":2}\n");
    compare("{\"a\":1}\n{\"b\":2}\n{\"c\":3}\n{\"d\":4}\n\xEF\xBB\xBF{\"e\":5}\n{\"f\":6}\n");
    compare("{\"a\":1}\r\n{\"b\":2}\r"); /* a lone CR at the end */
    compare("{\"a\":1}\n\t\r\n{\"b\":2}\n");
}

static void test_bad_lines(void)
{
    char *s = numbered(12, 8, "{\"i\":8,");
    compare(s);
    free(s);
    s = numbered(9, 3, "{\"k\":1,\"k\":2}");
    compare(s);
    free(s);
    s = numbered(5000, 4321, "{\"i\": tru}");
    compare(s);
    free(s);
    s = numbered(30, 1, "[1,2");
    compare(s);
    free(s);
    s = numbered(6, 6, "{\"bad\":\"\xff\"}");
    compare(s);
    free(s);
}

static void test_prep_take_failures(void)
{
    char *s = numbered(12, 6, "{\"prep_fail\":1}");
    compare(s);
    free(s);
    s = numbered(12, 9, "{\"take_fail\":1}");
    compare(s);
    free(s);
    /* a take failure before a prep failure and before a bad line: the take's comes first */
    compare("{\"a\":1}\n{\"take_fail\":1}\n{\"prep_fail\":1}\n{\"x\":\n");
    compare("{\"a\":1}\n{\"prep_fail\":1}\n{\"take_fail\":1}\n");
    compare("{\"a\":1}\n{\"b\":2}\n{\"x\":\n{\"prep_fail\":1}\n");
}

static void test_big_line(void)
{
    size_t big = (size_t)3 << 19; /* 1.5 MiB: parsed with nothing else in flight */
    char *s = malloc(big + 400), *p = s;
    p += sprintf(p, "{\"a\":1}\n{\"b\":2}\n{\"c\":3}\n{\"big\":\"");
    memset(p, 'x', big);
    p += big;
    p += sprintf(p, "\"}\n{\"d\":4}\n{\"e\":5}\n");
    compare_file(s, (size_t)(p - s));
    free(s);
    CU_ASSERT(files_compared > 15);
}

int main(void)
{
    static const golden_test tests[] = {
        {"pipeline = one thread: plain files and fewer lines than workers", test_plain_and_tiny},
        {"pipeline = one thread: CRLF, blank lines, byte order marks", test_cr_bom},
        {"pipeline = one thread: the first bad line, early or late", test_bad_lines},
        {"pipeline = one thread: prep and take failures, in file order", test_prep_take_failures},
        {"pipeline = one thread: a line over 1 MiB", test_big_line},
        {NULL, NULL}};
    return golden_test_run("JSON Lines pipeline", tests);
}
