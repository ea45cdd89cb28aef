/* Unit tests of the document loader: positions counted by hand on small documents, YAML
 * resolution, and every hostile input the loader must refuse with a place and a reason. */
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cunit_main.h"
#include "golden/doc.h"

static golden_doc *load(const char *name, const char *text)
{
    golden_doc *d = NULL;
    golden_error e = {0};
    int rc = golden_doc_load_buffer(name, text, strlen(text), &d, &e);
    if (rc != GOLDEN_OK)
        fprintf(stderr, "unexpected load error: %s: %s\n", e.where, e.what);
    CU_ASSERT_EQUAL(rc, GOLDEN_OK);
    return d;
}

/* Load expecting failure; returns the error record. */
static golden_error load_fail_n(const char *name, const char *text, size_t len)
{
    golden_doc *d = (golden_doc *)1;
    golden_error e = {0};
    int rc = golden_doc_load_buffer(name, text, len, &d, &e);
    CU_ASSERT_EQUAL(rc, GOLDEN_ERR);
    CU_ASSERT_PTR_NULL(d);
    if (rc == GOLDEN_OK)
        golden_doc_free(d);
    return e;
}

static golden_error load_fail(const char *name, const char *text)
{
    return load_fail_n(name, text, strlen(text));
}

static void expect_pos(const golden_doc *d, const json_t *node, int line, int col)
{
    int l, c;
    golden_doc_line(d, node, &l, &c);
    if (l != line || c != col)
        fprintf(stderr, "position %d:%d, wanted %d:%d\n", l, c, line, col);
    CU_ASSERT_EQUAL(l, line);
    CU_ASSERT_EQUAL(c, col);
}

static void expect_slot(const golden_doc *d, const json_t *parent, const char *key, size_t idx,
                        int line, int col)
{
    int l, c;
    golden_doc_child_line(d, parent, key, idx, &l, &c);
    if (l != line || c != col)
        fprintf(stderr, "slot position %d:%d, wanted %d:%d\n", l, c, line, col);
    CU_ASSERT_EQUAL(l, line);
    CU_ASSERT_EQUAL(c, col);
}

static void test_json_positions(void)
{
    /* columns counted by hand; "é" is one character (two bytes) */
    const char *text = "{\n"
                       "  \"a\": 1,\n"
                       "  \"bé\": [true, \"x\",\n"
                       "     {\"c\": null}],\n"
                       "\t\"d\": -2.5e1\n"
                       "}\n";
    golden_doc *d = load("p.json", text);
    json_t *root = golden_doc_root(d);
    expect_pos(d, root, 1, 1);
    expect_pos(d, json_object_get(root, "a"), 2, 8);
    json_t *b = json_object_get(root, "bé");
    expect_pos(d, b, 3, 9);
    expect_slot(d, b, NULL, 0, 3, 10);
    expect_pos(d, json_array_get(b, 1), 3, 16);
    json_t *inner = json_array_get(b, 2);
    expect_pos(d, inner, 4, 6);
    expect_slot(d, inner, "c", 0, 4, 12);
    expect_pos(d, json_object_get(root, "d"), 5, 7);
    CU_ASSERT_DOUBLE_EQUAL(json_real_value(json_object_get(root, "d")), -25.0, 0);
    /* child_line answers for ordinary nodes too */
    expect_slot(d, root, "a", 0, 2, 8);
    char where[256];
    golden_doc_where(d, json_object_get(root, "a"), where, sizeof where);
    CU_ASSERT_STRING_EQUAL(where, "p.json:2:8");
    golden_doc_child_where(d, inner, "c", 0, where, sizeof where);
    CU_ASSERT_STRING_EQUAL(where, "p.json:4:12");
    /* a node of another tree, or a shared singleton asked directly, has no position */
    json_t *stranger = json_integer(5);
    golden_doc_where(d, stranger, where, sizeof where);
    CU_ASSERT_STRING_EQUAL(where, "p.json");
    json_decref(stranger);
    int l, c;
    CU_ASSERT_EQUAL(golden_doc_line(d, json_true(), &l, &c), 0);
    CU_ASSERT_STRING_EQUAL(golden_doc_name(d), "p.json");
    golden_doc_free(d);
}

static void test_yaml_positions(void)
{
    const char *text = "# comment\n"
                       "name: calc\n"
                       "list:\n"
                       "  - 1\n"
                       "  - {k: v, n: ~}\n"
                       "nested:\n"
                       "    deep: [a, \"b\"]\n";
    golden_doc *d = load("p.yaml", text);
    json_t *root = golden_doc_root(d);
    expect_pos(d, root, 2, 1);
    expect_pos(d, json_object_get(root, "name"), 2, 7);
    json_t *list = json_object_get(root, "list");
    expect_pos(d, list, 4, 3);
    expect_pos(d, json_array_get(list, 0), 4, 5);
    json_t *flow = json_array_get(list, 1);
    expect_pos(d, flow, 5, 5);
    expect_pos(d, json_object_get(flow, "k"), 5, 9);
    expect_slot(d, flow, "n", 0, 5, 15);
    json_t *deep = json_object_get(json_object_get(root, "nested"), "deep");
    expect_pos(d, deep, 7, 11);
    expect_pos(d, json_array_get(deep, 1), 7, 15);
    golden_doc_free(d);
}

static void test_yaml_scalars(void)
{
    const char *text = "n1: null\nn2: ~\nn3:\nn4: Null\n"
                       "b1: true\nb2: False\nb3: 'true'\nb4: yes\n"
                       "i1: 42\ni2: -17\ni3: 0x1F\ni4: 0o17\ni5: +3\n"
                       "i6: 9223372036854775807\ni7: 9223372036854775808\n"
                       "f1: 1.5\nf2: -2e3\nf3: .5\nf4: 1.\n"
                       "s1: \"42\"\ns2: hello world\ns3: !!str 7\ns4: 1_000\ns5: 0x\n"
                       "t1: !!float 3\n";
    golden_doc *d = load("s.yaml", text);
    json_t *r = golden_doc_root(d);
    CU_ASSERT(json_is_null(json_object_get(r, "n1")));
    CU_ASSERT(json_is_null(json_object_get(r, "n2")));
    CU_ASSERT(json_is_null(json_object_get(r, "n3")));
    CU_ASSERT(json_is_null(json_object_get(r, "n4")));
    CU_ASSERT(json_is_true(json_object_get(r, "b1")));
    CU_ASSERT(json_is_false(json_object_get(r, "b2")));
    CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(r, "b3")), "true");
    CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(r, "b4")), "yes");
    CU_ASSERT_EQUAL(json_integer_value(json_object_get(r, "i1")), 42);
    CU_ASSERT_EQUAL(json_integer_value(json_object_get(r, "i2")), -17);
    CU_ASSERT_EQUAL(json_integer_value(json_object_get(r, "i3")), 31);
    CU_ASSERT_EQUAL(json_integer_value(json_object_get(r, "i4")), 15);
    CU_ASSERT_EQUAL(json_integer_value(json_object_get(r, "i5")), 3);
    CU_ASSERT_EQUAL(json_integer_value(json_object_get(r, "i6")), INT64_MAX);
    CU_ASSERT(json_is_real(json_object_get(r, "i7")));
    CU_ASSERT_DOUBLE_EQUAL(json_real_value(json_object_get(r, "i7")), 9223372036854775808.0, 0);
    CU_ASSERT_DOUBLE_EQUAL(json_real_value(json_object_get(r, "f1")), 1.5, 0);
    CU_ASSERT_DOUBLE_EQUAL(json_real_value(json_object_get(r, "f2")), -2000.0, 0);
    CU_ASSERT_DOUBLE_EQUAL(json_real_value(json_object_get(r, "f3")), 0.5, 0);
    CU_ASSERT_DOUBLE_EQUAL(json_real_value(json_object_get(r, "f4")), 1.0, 0);
    CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(r, "s1")), "42");
    CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(r, "s2")), "hello world");
    CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(r, "s3")), "7");
    CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(r, "s4")), "1_000");
    CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(r, "s5")), "0x");
    CU_ASSERT(json_is_real(json_object_get(r, "t1")));
    golden_doc_free(d);

    golden_error e = load_fail("x.yaml", "a: .inf\n");
    CU_ASSERT_STRING_EQUAL(e.where, "x.yaml:1:4");
    CU_ASSERT_PTR_NOT_NULL(strstr(e.what, "cannot be represented"));
    e = load_fail("x.yaml", "a: !!int abc\n");
    CU_ASSERT_STRING_EQUAL(e.where, "x.yaml:1:4");
    e = load_fail("x.yaml", "a: 0xFFFFFFFFFFFFFFFFF\n");
    CU_ASSERT_PTR_NOT_NULL(strstr(e.what, "64 bits"));
    e = load_fail("x.yaml", "a: 1e999\n");
    CU_ASSERT_PTR_NOT_NULL(strstr(e.what, "out of range"));
    /* an empty YAML document is null */
    d = load("empty.yaml", "");
    CU_ASSERT(json_is_null(golden_doc_root(d)));
    golden_doc_free(d);
    e = load_fail("two.yaml", "a: 1\n---\nb: 2\n");
    CU_ASSERT_STRING_EQUAL(e.where, "two.yaml:2:1");
}

static void test_yaml_anchors(void)
{
    const char *text = "base: &b {x: 1, y: 2}\n"
                       "copy: *b\n"
                       "list: [&s str, *s, *s]\n"
                       "merged:\n"
                       "  <<: *b\n"
                       "  y: 20\n"
                       "  z: 30\n"
                       "multi: {<<: [{p: 1}, {p: 2, q: 3}]}\n";
    golden_doc *d = load("a.yaml", text);
    json_t *r = golden_doc_root(d);
    json_t *base = json_object_get(r, "base"), *copy = json_object_get(r, "copy");
    CU_ASSERT(json_equal(base, copy));
    CU_ASSERT_EQUAL(json_integer_value(json_object_get(copy, "x")), 1);
    /* an alias keeps the anchored node's position (libyaml's: where its anchor starts) */
    expect_pos(d, copy, 1, 7);
    json_t *list = json_object_get(r, "list");
    CU_ASSERT_EQUAL(json_array_size(list), 3);
    CU_ASSERT_STRING_EQUAL(json_string_value(json_array_get(list, 2)), "str");
    json_t *m = json_object_get(r, "merged");
    CU_ASSERT_EQUAL(json_object_size(m), 3);
    CU_ASSERT_EQUAL(json_integer_value(json_object_get(m, "x")), 1);
    CU_ASSERT_EQUAL(json_integer_value(json_object_get(m, "y")), 20);
    CU_ASSERT_EQUAL(json_integer_value(json_object_get(m, "z")), 30);
    CU_ASSERT_PTR_NULL(json_object_get(m, "<<"));
    json_t *multi = json_object_get(r, "multi");
    CU_ASSERT_EQUAL(json_integer_value(json_object_get(multi, "p")), 1);
    CU_ASSERT_EQUAL(json_integer_value(json_object_get(multi, "q")), 3);
    golden_doc_free(d);

    golden_error e = load_fail("a.yaml", "a: *nope\n");
    CU_ASSERT_STRING_EQUAL(e.where, "a.yaml:1:4");
    CU_ASSERT_PTR_NOT_NULL(strstr(e.what, "unknown alias"));
    e = load_fail("a.yaml", "a: &x [1, *x]\n");
    CU_ASSERT_STRING_EQUAL(e.where, "a.yaml:1:11");
    CU_ASSERT_PTR_NOT_NULL(strstr(e.what, "contains it"));
    e = load_fail("a.yaml", "a: {<<: 5}\n");
    CU_ASSERT_PTR_NOT_NULL(strstr(e.what, "merge key"));
    e = load_fail("a.yaml", "? [1, 2]\n: v\n");
    CU_ASSERT_PTR_NOT_NULL(strstr(e.what, "scalar"));
}

static void test_yaml_bomb(void)
{
    /* billion laughs: 9 levels of 9 aliases, 9^9 = 387,420,489 nodes from about 90 */
    char text[2048];
    size_t o = (size_t)snprintf(text, sizeof text, "l0: &l0 [lol, lol]\n");
    for (int i = 1; i <= 9; i++) {
        o += (size_t)snprintf(text + o, sizeof text - o, "l%d: &l%d [", i, i);
        for (int k = 0; k < 9; k++)
            o += (size_t)snprintf(text + o, sizeof text - o, "%s*l%d", k ? ", " : "", i - 1);
        o += (size_t)snprintf(text + o, sizeof text - o, "]\n");
    }
    golden_error e = load_fail("bomb.yaml", text);
    CU_ASSERT_PTR_NOT_NULL(strstr(e.what, "YAML bomb"));
    CU_ASSERT_PTR_NOT_NULL(strstr(e.where, "bomb.yaml:"));
    /* the same shape three levels deep (2 * 9^3 = 1458 nodes) is an honest document */
    o = (size_t)snprintf(text, sizeof text, "l0: &l0 [lol, lol]\n");
    for (int i = 1; i <= 3; i++) {
        o += (size_t)snprintf(text + o, sizeof text - o, "l%d: &l%d [", i, i);
        for (int k = 0; k < 9; k++)
            o += (size_t)snprintf(text + o, sizeof text - o, "%s*l%d", k ? ", " : "", i - 1);
        o += (size_t)snprintf(text + o, sizeof text - o, "]\n");
    }
    golden_doc *d = load("ok.yaml", text);
    json_t *l3 = json_object_get(golden_doc_root(d), "l3");
    CU_ASSERT_EQUAL(json_array_size(l3), 9);
    json_t *leaf = json_array_get(json_array_get(json_array_get(json_array_get(l3, 8), 8), 8), 1);
    CU_ASSERT_FATAL(json_is_string(leaf));
    CU_ASSERT_STRING_EQUAL(json_string_value(leaf), "lol");
    golden_doc_free(d);
}

static void test_duplicates(void)
{
    golden_error e = load_fail("d.json", "{\"a\": 1,\n \"b\": 2,\n \"a\": 3}");
    CU_ASSERT_STRING_EQUAL(e.where, "d.json:3:2");
    CU_ASSERT_STRING_EQUAL(e.what, "duplicate key \"a\"");
    e = load_fail("d.json", "[{\"x\": {\"k\": 1, \"k\": 1}}]");
    CU_ASSERT_STRING_EQUAL(e.where, "d.json:1:17");
    e = load_fail("d.yaml", "top:\n  a: 1\n  b: 2\n  a: 3\n");
    CU_ASSERT_STRING_EQUAL(e.where, "d.yaml:4:3");
    CU_ASSERT_STRING_EQUAL(e.what, "duplicate key \"a\"");
    e = load_fail("d.yaml", "{k: 1, k: 2}\n");
    CU_ASSERT_STRING_EQUAL(e.where, "d.yaml:1:8");
    CU_ASSERT_STRING_EQUAL(e.what, "duplicate key \"k\"");
    /* the same key in different objects is fine */
    golden_doc *d = load("ok.json", "{\"a\": {\"a\": 1}, \"b\": {\"a\": 2}}");
    golden_doc_free(d);
}

static void test_tabs(void)
{
    golden_error e = load_fail("t.yaml", "a:\n\tb: 1\n");
    CU_ASSERT_STRING_EQUAL(e.where, "t.yaml:2:1");
    CU_ASSERT_PTR_NOT_NULL(strstr(e.what, "tab"));
    /* a tab inside a flow or a scalar is not indentation */
    golden_doc *d = load("t.yaml", "a: [1,\t2]\nb: \"x\ty\"\n");
    CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(golden_doc_root(d), "b")), "x\ty");
    golden_doc_free(d);
}

static char *nested(int depth, const char *open, const char *close, const char *mid)
{
    size_t lo = strlen(open), lc = strlen(close), lm = strlen(mid);
    char *s = malloc((size_t)depth * (lo + lc) + lm + 1), *p = s;
    for (int i = 0; i < depth; i++, p += lo)
        memcpy(p, open, lo);
    memcpy(p, mid, lm);
    p += lm;
    for (int i = 0; i < depth; i++, p += lc)
        memcpy(p, close, lc);
    *p = '\0';
    return s;
}

static void test_depth(void)
{
    char *ok = nested(GOLDEN_DOC_MAX_DEPTH, "[", "]", "1");
    golden_doc *d = load("deep.json", ok);
    golden_doc_free(d);
    free(ok);
    char *bad = nested(GOLDEN_DOC_MAX_DEPTH + 1, "[", "]", "1");
    golden_error e = load_fail("deep.json", bad);
    CU_ASSERT_STRING_EQUAL(e.where, "deep.json:1:513");
    CU_ASSERT_PTR_NOT_NULL(strstr(e.what, "nesting deeper"));
    free(bad);
    /* hostile: a million brackets, objects, YAML flow and block nesting */
    char *huge = nested(1000000, "[", "]", "");
    e = load_fail("huge.json", huge);
    CU_ASSERT_PTR_NOT_NULL(strstr(e.what, "nesting deeper"));
    free(huge);
    huge = nested(100000, "{\"a\":", "}", "1");
    e = load_fail("huge.json", huge);
    CU_ASSERT_PTR_NOT_NULL(strstr(e.what, "nesting deeper"));
    free(huge);
    huge = nested(100000, "[", "]", "");
    e = load_fail("huge.yaml", huge);
    CU_ASSERT_PTR_NOT_NULL(strstr(e.where, "huge.yaml:1:"));
    free(huge);
    huge = nested(GOLDEN_DOC_MAX_DEPTH + 1, "- ", "", "x\n");
    e = load_fail("block.yaml", huge);
    CU_ASSERT_PTR_NOT_NULL(strstr(e.what, "nesting deeper"));
    free(huge);
    ok = nested(GOLDEN_DOC_MAX_DEPTH, "- ", "", "x\n");
    d = load("block.yaml", ok);
    golden_doc_free(d);
    free(ok);
}

static void test_utf8_and_nul(void)
{
    golden_error e = load_fail("u.json", "{\"a\": \"ok\",\n \"b\": \"x\xff\"}");
    CU_ASSERT_STRING_EQUAL(e.where, "u.json:2:9");
    CU_ASSERT_STRING_EQUAL(e.what, "invalid UTF-8");
    e = load_fail("u.json", "[\"\xc0\x80\"]"); /* overlong NUL */
    CU_ASSERT_STRING_EQUAL(e.what, "invalid UTF-8");
    e = load_fail("u.json", "[\"\xed\xa0\x80\"]"); /* an encoded surrogate */
    CU_ASSERT_STRING_EQUAL(e.what, "invalid UTF-8");
    e = load_fail("u.json", "[\"\xf4\x90\x80\x80\"]"); /* beyond U+10FFFF */
    CU_ASSERT_STRING_EQUAL(e.what, "invalid UTF-8");
    e = load_fail("u.json", "[\"\xe2\x82\"]"); /* truncated */
    CU_ASSERT_STRING_EQUAL(e.what, "invalid UTF-8");
    e = load_fail("u.yaml", "a: b\nc: d\xfe\n");
    CU_ASSERT_STRING_EQUAL(e.where, "u.yaml:2:5");
    CU_ASSERT_STRING_EQUAL(e.what, "invalid UTF-8");
    e = load_fail_n("n.json", "[1,\n \"a\0b\"]", 11);
    CU_ASSERT_STRING_EQUAL(e.where, "n.json:2:4");
    CU_ASSERT_PTR_NOT_NULL(strstr(e.what, "NUL"));
    e = load_fail_n("n.json", "[1,\0 2]", 7);
    CU_ASSERT_STRING_EQUAL(e.where, "n.json:1:4");
    CU_ASSERT_PTR_NOT_NULL(strstr(e.what, "NUL"));
    e = load_fail_n("n.yaml", "a: 1\nb: x\0y\n", 12);
    CU_ASSERT_STRING_EQUAL(e.where, "n.yaml:2:5");
    CU_ASSERT_PTR_NOT_NULL(strstr(e.what, "NUL"));
    /* escapes: \u00e9 and a surrogate pair decode to UTF-8; \u0000 is a valid string byte */
    golden_doc *d = load("e.json", "[\"\\u00e9\\ud83d\\ude00\", \"a\\u0000b\"]");
    json_t *a = golden_doc_root(d);
    CU_ASSERT_STRING_EQUAL(json_string_value(json_array_get(a, 0)), "\xc3\xa9\xf0\x9f\x98\x80");
    CU_ASSERT_EQUAL(json_string_length(json_array_get(a, 1)), 3);
    golden_doc_free(d);
    e = load_fail("e.json", "[\"\\ud83d\"]");
    CU_ASSERT_PTR_NOT_NULL(strstr(e.what, "surrogate"));
    e = load_fail("e.json", "[\"\\ude00\"]");
    CU_ASSERT_PTR_NOT_NULL(strstr(e.what, "surrogate"));
    /* a UTF-8 byte order mark is skipped */
    d = load("bom.json", "\xef\xbb\xbf{\"a\": 1}");
    CU_ASSERT_EQUAL(json_integer_value(json_object_get(golden_doc_root(d), "a")), 1);
    golden_doc_free(d);
}

static void test_numbers(void)
{
    golden_doc *d = load("n.json", "[9223372036854775807, -9223372036854775808, "
                                   "9223372036854775808, -0, 1.0, 1e2, 1E-400, 0.1, -12]");
    json_t *a = golden_doc_root(d);
    CU_ASSERT(json_is_integer(json_array_get(a, 0)));
    CU_ASSERT_EQUAL(json_integer_value(json_array_get(a, 0)), INT64_MAX);
    CU_ASSERT_EQUAL(json_integer_value(json_array_get(a, 1)), INT64_MIN);
    CU_ASSERT(json_is_real(json_array_get(a, 2)));
    CU_ASSERT_DOUBLE_EQUAL(json_real_value(json_array_get(a, 2)), 9223372036854775808.0, 0);
    CU_ASSERT(json_is_integer(json_array_get(a, 3)));
    CU_ASSERT(json_is_real(json_array_get(a, 4)));
    CU_ASSERT_DOUBLE_EQUAL(json_real_value(json_array_get(a, 5)), 100.0, 0);
    CU_ASSERT_DOUBLE_EQUAL(json_real_value(json_array_get(a, 6)), 0.0, 0);
    CU_ASSERT_DOUBLE_EQUAL(json_real_value(json_array_get(a, 7)), 0.1, 0);
    CU_ASSERT_EQUAL(json_integer_value(json_array_get(a, 8)), -12);
    golden_doc_free(d);
    /* a 100,000-digit integer is a real (1e99999 overflows: an error, never UB) */
    size_t n = 100000;
    char *big = malloc(n + 3);
    big[0] = '[';
    memset(big + 1, '9', n);
    big[n + 1] = ']';
    big[n + 2] = '\0';
    golden_error e = load_fail("big.json", big);
    CU_ASSERT_STRING_EQUAL(e.where, "big.json:1:2");
    CU_ASSERT_PTR_NOT_NULL(strstr(e.what, "out of range"));
    memset(big + 1, '9', 300); /* 300 nines: about 1e300, a double */
    big[301] = ']';
    big[302] = '\0';
    d = load("big.json", big);
    CU_ASSERT(json_is_real(json_array_get(golden_doc_root(d), 0)));
    CU_ASSERT(json_real_value(json_array_get(golden_doc_root(d), 0)) > 9.9e299);
    golden_doc_free(d);
    free(big);
    e = load_fail("n.json", "[1e400]");
    CU_ASSERT_PTR_NOT_NULL(strstr(e.what, "out of range"));
    e = load_fail("n.json", "[-1e400]");
    CU_ASSERT_PTR_NOT_NULL(strstr(e.what, "out of range"));
    e = load_fail("n.json", "[01]");
    CU_ASSERT_PTR_NOT_NULL(strstr(e.what, "leading zero"));
    e = load_fail("n.json", "[1.]");
    CU_ASSERT_STRING_EQUAL(e.where, "n.json:1:2");
    e = load_fail("n.json", "[.5]");
    CU_ASSERT_STRING_EQUAL(e.where, "n.json:1:2");
    e = load_fail("n.json", "[1e]");
    e = load_fail("n.json", "[+1]");
    e = load_fail("n.json", "[-]");
    e = load_fail("n.json", "[NaN]");
    e = load_fail("n.json", "[Infinity]");
}

static void test_json_strict(void)
{
    struct {
        const char *text, *where;
    } bad[] = {
        {"", "s.json:1:1"},
        {"   \n ", "s.json:2:2"},
        {"[1, 2,]", "s.json:1:7"},
        {"{\"a\": 1,}", "s.json:1:9"},
        {"{'a': 1}", "s.json:1:2"},
        {"{\"a\" 1}", "s.json:1:6"},
        {"{a: 1}", "s.json:1:2"},
        {"[1] // c", "s.json:1:5"},
        {"[1] [2]", "s.json:1:5"},
        {"[\"a\nb\"]", "s.json:1:4"},
        {"[\"a\tb\"]", "s.json:1:4"},
        {"[\"\\x\"]", "s.json:1:3"},
        {"[\"\\u12\"]", "s.json:1:3"},
        {"[tru]", "s.json:1:2"},
        {"[nul", "s.json:1:2"},
        {"{\"a\": [1, 2", "s.json:1:12"},
        {"\"abc", "s.json:1:1"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        golden_error e = load_fail("s.json", bad[i].text);
        if (strcmp(e.where, bad[i].where) != 0)
            fprintf(stderr, "case %zu: %s: %s (wanted %s)\n", i, e.where, e.what, bad[i].where);
        CU_ASSERT_STRING_EQUAL(e.where, bad[i].where);
        CU_ASSERT(e.what[0] != '\0');
    }
    /* whitespace JSON allows, escapes it defines */
    golden_doc *d = load("s.json", " \r\n\t{\"a\" : [ \"\\\"\\\\\\/\\b\\f\\n\\r\\t\" ] } \n");
    CU_ASSERT_STRING_EQUAL(json_string_value(json_array_get(json_object_get(golden_doc_root(d),
                                                                             "a"),
                                                             0)),
                           "\"\\/\b\f\n\r\t");
    golden_doc_free(d);
}

static void test_detection(void)
{
    /* .json must be JSON */
    golden_error e = load_fail("x.json", "a: 1\n");
    CU_ASSERT_STRING_EQUAL(e.where, "x.json:1:1");
    /* other names: JSON when the text starts with { or [, YAML otherwise */
    e = load_fail("x.yaml", "  {\"a\": [1,}");
    CU_ASSERT_STRING_EQUAL(e.where, "x.yaml:1:12");
    /* ... unless it reads as YAML: a flow mapping with plain keys */
    golden_doc *d = load("x.yaml", "{a: 1, b: [x, y],}");
    CU_ASSERT_STRING_EQUAL(json_string_value(json_array_get(json_object_get(golden_doc_root(d),
                                                                             "b"),
                                                             1)),
                           "y");
    golden_doc_free(d);
    d = load("x.txt", "a: [1]\n");
    CU_ASSERT(json_is_array(json_object_get(golden_doc_root(d), "a")));
    golden_doc_free(d);
    d = load("x.yaml", "\n[1, 2]");
    CU_ASSERT_EQUAL(json_array_size(golden_doc_root(d)), 2);
    golden_doc_free(d);
    /* a name not ending in .yaml/.yml (stdin's "-", "x.txt") that looks like JSON is JSON only:
     * the flow mapping above, a trailing comma, a leading zero (YAML's octal 0100 = 64) and a
     * hex number are JSON errors there, at the place the JSON reader stops */
    e = load_fail("-", "{a: 1, b: [x, y],}");
    CU_ASSERT_STRING_EQUAL(e.where, "-:1:2");
    e = load_fail("-", "{\"a\": [1, 2,]}");
    CU_ASSERT_STRING_EQUAL(e.where, "-:1:13"); /* the ] after the comma */
    e = load_fail("x.txt", "{\"offset\": 0100}");
    CU_ASSERT_STRING_EQUAL(e.where, "x.txt:1:12");
    e = load_fail("-", "[0x100]");
    CU_ASSERT_STRING_EQUAL(e.where, "-:1:3");
    d = load("-", "a: 0100\n"); /* not JSON-looking: YAML as before */
    CU_ASSERT(json_is_integer(json_object_get(golden_doc_root(d), "a")));
    golden_doc_free(d);
    /* golden_doc_load_json refuses YAML whatever the name, and counts from first_line */
    golden_error e2 = {0};
    CU_ASSERT_EQUAL(golden_doc_load_json("x.yaml", "a: 1", 4, 7, &d, &e2), GOLDEN_ERR);
    CU_ASSERT_STRING_EQUAL(e2.where, "x.yaml:7:1");
}

static void write_file(const char *path, const char *text, size_t len)
{
    FILE *f = fopen(path, "wb");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    CU_ASSERT_EQUAL(fwrite(text, 1, len, f), len);
    fclose(f);
}

static void test_load_file(void)
{
    write_file("f.yaml", "k: [1, 2]\nv: x\n", 15);
    golden_doc *d = NULL;
    golden_error e = {0};
    CU_ASSERT_EQUAL_FATAL(golden_doc_load_file("f.yaml", &d, &e), GOLDEN_OK);
    expect_pos(d, json_object_get(golden_doc_root(d), "v"), 2, 4);
    golden_doc_free(d);
    CU_ASSERT_EQUAL(golden_doc_load_file("missing.json", &d, &e), GOLDEN_ERR);
    CU_ASSERT_STRING_EQUAL(e.where, "missing.json");
    CU_ASSERT_EQUAL(golden_doc_load_file(".", &d, &e), GOLDEN_ERR);
    CU_ASSERT_PTR_NOT_NULL(strstr(e.what, "directory"));
    /* over the size limit: refused from its size, never read (a sparse file costs nothing) */
    int fd = open("huge.json", O_CREAT | O_TRUNC | O_WRONLY, 0644);
    CU_ASSERT_FATAL(fd >= 0);
    CU_ASSERT_EQUAL(ftruncate(fd, (off_t)GOLDEN_DOC_MAX_BYTES + 1), 0);
    close(fd);
    CU_ASSERT_EQUAL(golden_doc_load_file("huge.json", &d, &e), GOLDEN_ERR);
    CU_ASSERT_PTR_NOT_NULL(strstr(e.what, "larger than"));
    unlink("huge.json");
}

/* A document over the arena threshold (1 MiB) goes through the arena and the page-dropping
 * input: check values and positions at its far end. */
static void test_large_document(void)
{
    size_t n = 60000;
    FILE *f = fopen("large.json", "wb");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    fprintf(f, "{\"items\": [\n");
    for (size_t i = 0; i < n; i++)
        fprintf(f, "  {\"id\": \"item%zu\", \"n\": %zu, \"ok\": %s}%s\n", i, i * 3,
                i % 2 ? "true" : "false", i + 1 < n ? "," : "");
    fprintf(f, "]}\n");
    fclose(f);
    for (int round = 0; round < 2; round++) { /* the second reuses released chunks */
        golden_doc *d = NULL;
        golden_error e = {0};
        CU_ASSERT_EQUAL_FATAL(golden_doc_load_file("large.json", &d, &e), GOLDEN_OK);
        json_t *items = json_object_get(golden_doc_root(d), "items");
        CU_ASSERT_EQUAL(json_array_size(items), n);
        json_t *last = json_array_get(items, n - 1);
        CU_ASSERT_EQUAL(json_integer_value(json_object_get(last, "n")), (json_int_t)(n - 1) * 3);
        CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(last, "id")), "item59999");
        /* line = index + 2; the object starts at column 3 */
        expect_pos(d, last, (int)n + 1, 3);
        expect_pos(d, json_object_get(last, "n"), (int)n + 1, 28);
        expect_slot(d, last, "ok", 0, (int)n + 1, 42);
        expect_pos(d, json_array_get(items, 7), 9, 3);
        /* the tree may be changed after the load (freed with the doc) */
        CU_ASSERT_EQUAL(json_object_set_new(last, "added", json_string("later")), 0);
        golden_doc_free(d);
    }
    unlink("large.json");
    /* the same through YAML, with anchors and merges (aliases share arena nodes) */
    f = fopen("large.yaml", "wb");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    fprintf(f, "base: &b {kind: item, flag: false}\nitems:\n");
    for (size_t i = 0; i < n; i++)
        fprintf(f, "  - {<<: *b, id: item%zu, n: %zu}\n", i, i * 3);
    fclose(f);
    golden_doc *d = NULL;
    golden_error e = {0};
    CU_ASSERT_EQUAL_FATAL(golden_doc_load_file("large.yaml", &d, &e), GOLDEN_OK);
    json_t *items = json_object_get(golden_doc_root(d), "items");
    CU_ASSERT_EQUAL(json_array_size(items), n);
    json_t *last = json_array_get(items, n - 1);
    CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(last, "kind")), "item");
    CU_ASSERT(json_is_false(json_object_get(last, "flag")));
    CU_ASSERT_EQUAL(json_integer_value(json_object_get(last, "n")), (json_int_t)(n - 1) * 3);
    /* line = index + 3; "  - {" puts the mapping at column 5, and n's value is at 32 */
    expect_pos(d, last, (int)n + 2, 5);
    expect_pos(d, json_object_get(last, "n"), (int)n + 2, 32);
    expect_slot(d, last, "flag", 0, (int)n + 2, 10); /* merged: the place of the *b */
    golden_doc_free(d);
    unlink("large.yaml");
}

typedef struct {
    size_t lines[8];
    int where_line[8];
    int n;
    int stop_at;
} jl_ctx;

static int on_line(void *vctx, golden_doc *d, size_t line_no, golden_error *err)
{
    (void)err;
    jl_ctx *c = vctx;
    if (c->n < 8) {
        int l, col;
        c->lines[c->n] = line_no;
        golden_doc_line(d, golden_doc_root(d), &l, &col);
        c->where_line[c->n] = l;
    }
    c->n++;
    return c->n == c->stop_at ? 7 : 0;
}

static void test_jsonl(void)
{
    const char *text = "{\"a\": 1}\n\n  \r\n{\"a\": 2}\r\n[3]\n{\"a\": 4}";
    write_file("l.jsonl", text, strlen(text));
    jl_ctx c = {{0}, {0}, 0, 0};
    golden_error e = {0};
    CU_ASSERT_EQUAL(golden_doc_each_jsonl("l.jsonl", on_line, &c, &e), GOLDEN_OK);
    CU_ASSERT_EQUAL(c.n, 4);
    CU_ASSERT_EQUAL(c.lines[0], 1);
    CU_ASSERT_EQUAL(c.lines[1], 4);
    CU_ASSERT_EQUAL(c.lines[2], 5);
    CU_ASSERT_EQUAL(c.lines[3], 6);
    CU_ASSERT_EQUAL(c.where_line[1], 4);
    CU_ASSERT_EQUAL(c.where_line[3], 6);
    /* the callback's non-zero return stops the walk and is returned */
    jl_ctx s = {{0}, {0}, 0, 2};
    CU_ASSERT_EQUAL(golden_doc_each_jsonl("l.jsonl", on_line, &s, &e), 7);
    CU_ASSERT_EQUAL(s.n, 2);
    /* an error names the file's line and column */
    const char *bad = "{\"a\": 1}\n{\"a\": 2}\n{\"a\": 3, \"a\": 4}\n{\"a\": 5}\n";
    write_file("b.jsonl", bad, strlen(bad));
    jl_ctx b = {{0}, {0}, 0, 0};
    CU_ASSERT_EQUAL(golden_doc_each_jsonl("b.jsonl", on_line, &b, &e), GOLDEN_ERR);
    CU_ASSERT_STRING_EQUAL(e.where, "b.jsonl:3:10");
    CU_ASSERT_EQUAL(b.n, 2);
    /* each line is JSON, never YAML */
    write_file("y.jsonl", "a: 1\n", 5);
    CU_ASSERT_EQUAL(golden_doc_each_jsonl("y.jsonl", on_line, &b, &e), GOLDEN_ERR);
    CU_ASSERT_STRING_EQUAL(e.where, "y.jsonl:1:1");
    CU_ASSERT_EQUAL(golden_doc_each_jsonl("nope.jsonl", on_line, &b, &e), GOLDEN_ERR);
    unlink("l.jsonl");
    unlink("b.jsonl");
    unlink("y.jsonl");
    unlink("n.jsonl");
}

/* Positions inside lines, worked out by hand; run on the heap and again in the rewound arena
 * of a program that opted in (one doc and one arena serve every line). */
typedef struct {
    int got[6];
    int n;
} jl_pos;

static int on_pos_line(void *vctx, golden_doc *d, size_t line_no, golden_error *err)
{
    (void)err;
    jl_pos *p = vctx;
    json_t *r = golden_doc_root(d);
    int l = 0, c = 0;
    if (line_no == 2) {
        json_t *b = json_object_get(r, "b");
        golden_doc_line(d, b, &l, &c);
        p->got[0] = l * 100 + c;
        golden_doc_child_line(d, b, "c", 0, &l, &c);
        p->got[1] = l * 100 + c;
    } else if (line_no == 3) {
        json_t *a = json_object_get(r, "\xc3\xa9");
        golden_doc_child_line(d, a, NULL, 0, &l, &c);
        p->got[2] = l * 100 + c;
        golden_doc_child_line(d, a, NULL, 1, &l, &c);
        p->got[3] = l * 100 + c;
    }
    p->n++;
    return 0;
}

static void test_jsonl_positions(void)
{
    /* line 2: {"a": 1, "b": is 14 characters, so b's { is column 15, c's true column 21;
     * line 3: {"\u00e9": [ is 7 characters (the e-acute one), false at 8, 5 at 15 */
    const char *text = "{\"x\": null}\n{\"a\": 1, \"b\": {\"c\": true, \"d\": \"\\u00e9x\"}}\n"
                       "{\"\xc3\xa9\": [false, 5]}\n{\"a\": 1, \"a\": 2}\n";
    write_file("p.jsonl", text, strlen(text));
    jl_pos p = {{0}, 0};
    golden_error e = {0};
    CU_ASSERT_EQUAL(golden_doc_each_jsonl("p.jsonl", on_pos_line, &p, &e), GOLDEN_ERR);
    CU_ASSERT_EQUAL(p.n, 3);
    CU_ASSERT_EQUAL(p.got[0], 215);
    CU_ASSERT_EQUAL(p.got[1], 221);
    CU_ASSERT_EQUAL(p.got[2], 308);
    CU_ASSERT_EQUAL(p.got[3], 315);
    CU_ASSERT_STRING_EQUAL(e.where, "p.jsonl:4:10"); /* the second "a" */
    unlink("p.jsonl");
}

static void test_jsonl_long_line(void)
{
    /* one good line, then a sparse 200 MiB line without a newline: refused at the 64 MiB
     * cap with the line's number, never read whole */
    int fd = open("long.jsonl", O_CREAT | O_TRUNC | O_WRONLY, 0644);
    CU_ASSERT_FATAL(fd >= 0);
    CU_ASSERT_EQUAL(write(fd, "[1]\n", 4), 4);
    CU_ASSERT_EQUAL(ftruncate(fd, (off_t)200 << 20), 0);
    close(fd);
    jl_ctx c = {{0}, {0}, 0, 0};
    golden_error e = {0};
    CU_ASSERT_EQUAL(golden_doc_each_jsonl("long.jsonl", on_line, &c, &e), GOLDEN_ERR);
    CU_ASSERT_STRING_EQUAL(e.where, "long.jsonl:2");
    CU_ASSERT_PTR_NOT_NULL(strstr(e.what, "64 MiB"));
    CU_ASSERT_EQUAL(c.n, 1);
    unlink("long.jsonl");
    /* a short line of NUL bytes is an error of that line, not a crash */
    fd = open("nul.jsonl", O_CREAT | O_TRUNC | O_WRONLY, 0644);
    CU_ASSERT_FATAL(fd >= 0);
    CU_ASSERT_EQUAL(write(fd, "[1]\n[2]\n", 8), 8);
    CU_ASSERT_EQUAL(ftruncate(fd, 100), 0);
    close(fd);
    CU_ASSERT_EQUAL(golden_doc_each_jsonl("nul.jsonl", on_line, &c, &e), GOLDEN_ERR);
    CU_ASSERT_STRING_EQUAL(e.where, "nul.jsonl:3:1");
    CU_ASSERT_PTR_NOT_NULL(strstr(e.what, "NUL"));
    unlink("nul.jsonl");
}

/* Hostile input by mutation: thousands of corruptions (byte flips, cuts, inserted brackets,
 * quotes, tabs, NULs, high bytes) of one JSON and one YAML document. Each load either
 * succeeds with a tree whose every node it can place, or fails with a place in the named
 * document and a reason; ASan/UBSan runs of this suite catch any memory error. */
static int placed_everywhere(const golden_doc *d, const json_t *node, const json_t *parent,
                             const char *key, size_t idx)
{
    int l, c;
    if (parent)
        golden_doc_child_line(d, parent, key, idx, &l, &c);
    else
        golden_doc_line(d, node, &l, &c);
    if (parent && l <= 0)
        return 0;
    if (json_is_object(node)) {
        const char *k;
        json_t *v;
        json_object_foreach((json_t *)node, k, v)
        {
            if (!placed_everywhere(d, v, node, k, 0))
                return 0;
        }
    } else if (json_is_array(node)) {
        size_t i;
        json_t *v;
        json_array_foreach(node, i, v)
        {
            if (!placed_everywhere(d, v, node, NULL, i))
                return 0;
        }
    }
    return 1;
}

static void mutate_and_load(const char *name, const char *seed_text, unsigned seed, int rounds)
{
    static const char inserts[] = "{}[]\"'\t\0\xff\xc3:,-&*!|>#\n\\";
    size_t n = strlen(seed_text);
    char *buf = malloc(n + 64);
    int ok = 0, failed = 0;
    for (int r = 0; r < rounds; r++) {
        memcpy(buf, seed_text, n);
        size_t len = n;
        int edits = 1 + (int)(seed % 4);
        for (int e = 0; e < edits; e++) {
            seed = seed * 1103515245u + 12345u;
            size_t at = (seed >> 8) % len;
            unsigned kind = (seed >> 20) % 4;
            char ch = inserts[(seed >> 24) % (sizeof inserts - 1)];
            if (kind == 0) {
                buf[at] = ch;
            } else if (kind == 1 && len < n + 60) {
                memmove(buf + at + 1, buf + at, len - at);
                buf[at] = ch;
                len++;
            } else if (kind == 2 && len > 1) {
                memmove(buf + at, buf + at + 1, len - at - 1);
                len--;
            } else {
                len = at + 1; /* cut */
            }
        }
        golden_doc *d = NULL;
        golden_error err = {0};
        if (golden_doc_load_buffer(name, buf, len, &d, &err) == GOLDEN_OK) {
            ok++;
            int placed = placed_everywhere(d, golden_doc_root(d), NULL, NULL, 0);
            if (!placed)
                fprintf(stderr, "\nnot every node placed in: %.*s\n", (int)len, buf);
            CU_ASSERT(placed);
            golden_doc_free(d);
        } else {
            failed++;
            CU_ASSERT_PTR_NULL(d);
            CU_ASSERT(strncmp(err.where, name, strlen(name)) == 0);
            CU_ASSERT(strchr(err.where, ':') != NULL);
            CU_ASSERT(err.what[0] != '\0');
        }
    }
    /* both outcomes must occur, or the mutations test nothing */
    CU_ASSERT(ok > 0);
    CU_ASSERT(failed > 0);
    free(buf);
}

static void test_mutations(void)
{
    mutate_and_load("m.json",
                    "{\"schema\": \"calculet-graph/v1\", \"ops\": [{\"id\": \"a\", \"n\": 1, "
                    "\"ok\": true, \"x\": null}, {\"id\": \"b\\u00e9\", \"f\": -1.5e3}], "
                    "\"e\": {}, \"l\": []}",
                    7, 3000);
    mutate_and_load("m.yaml",
                    "base: &b {x: 1, y: [a, b]}\nlist:\n  - *b\n  - {<<: *b, z: \"q\"}\n"
                    "flag: true\nnothing: ~\ntext: |\n  line one\n  line two\n",
                    11, 3000);
}

/* Two threads loading large documents at once share the arena's address range: each tree
 * must come out whole. */
typedef struct {
    const char *path;
    int good;
} load_job;

static void *load_worker(void *arg)
{
    load_job *j = arg;
    j->good = 0;
    for (int round = 0; round < 3; round++) {
        golden_doc *d = NULL;
        golden_error e = {0};
        if (golden_doc_load_file(j->path, &d, &e) != GOLDEN_OK)
            return NULL;
        json_t *items = golden_doc_root(d);
        size_t n = json_array_size(items), bad = 0;
        for (size_t i = 0; i < n; i++)
            bad += json_integer_value(json_object_get(json_array_get(items, i), "v")) !=
                   (json_int_t)(i * i);
        int l, c;
        golden_doc_line(d, json_array_get(items, n - 1), &l, &c);
        if (n == 50000 && bad == 0 && l == 50000 && c == 1)
            j->good++;
        golden_doc_free(d);
    }
    return NULL;
}

static void test_concurrent_loads(void)
{
    FILE *f = fopen("c.json", "wb");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    for (size_t i = 0; i < 50000; i++)
        fprintf(f, "%s{\"v\": %zu, \"pad\": \"xxxxxxxxxxxx\"}%s", i ? "" : "[", i * i,
                i + 1 < 50000 ? ",\n" : "]\n");
    fclose(f);
    load_job jobs[2] = {{"c.json", 0}, {"c.json", 0}};
    pthread_t t;
    CU_ASSERT_EQUAL_FATAL(pthread_create(&t, NULL, load_worker, &jobs[1]), 0);
    load_worker(&jobs[0]);
    pthread_join(t, NULL);
    CU_ASSERT_EQUAL(jobs[0].good, 3);
    CU_ASSERT_EQUAL(jobs[1].good, 3);
    unlink("c.json");
}

/* Linking and using libgolden leaves jansson's process-wide allocator alone (it used to be
 * replaced by a constructor before main): a program embedding libgolden keeps its own. */
static void test_no_process_hooks(void)
{
    golden_doc *d = load("x.json", "{\"a\": [1, 2, 3]}");
    golden_doc_free(d);
    json_malloc_t m;
    json_free_t f;
    json_get_alloc_funcs(&m, &f);
    CU_ASSERT_PTR_EQUAL((void *)m, (void *)malloc);
    CU_ASSERT_PTR_EQUAL((void *)f, (void *)free);
}

/* The program's opt-in: from here on, large loads in this test process use arenas, and the
 * same documents must load to the same trees and positions. */
static void test_arena_opt_in(void)
{
    golden_doc_use_arena_allocator();
    json_malloc_t m;
    json_free_t f;
    json_get_alloc_funcs(&m, &f);
    CU_ASSERT_PTR_NOT_EQUAL((void *)m, (void *)malloc);
    /* memory jansson allocates outside a load is still plain heap memory */
    json_t *v = json_pack("{s:[i,i]}", "k", 1, 2);
    char *text = json_dumps(v, JSON_COMPACT);
    CU_ASSERT_STRING_EQUAL(text, "{\"k\":[1,2]}");
    free(text);
    json_decref(v);
}

int main(void)
{
    static const golden_test tests[] = {
        {"no process-wide hooks", test_no_process_hooks},
        {"json positions", test_json_positions},
        {"yaml positions", test_yaml_positions},
        {"yaml scalars", test_yaml_scalars},
        {"yaml anchors and merges", test_yaml_anchors},
        {"yaml alias bomb", test_yaml_bomb},
        {"duplicate keys", test_duplicates},
        {"yaml tab indentation", test_tabs},
        {"nesting depth", test_depth},
        {"utf-8 and NUL bytes", test_utf8_and_nul},
        {"numbers", test_numbers},
        {"strict json", test_json_strict},
        {"json or yaml detection", test_detection},
        {"load file", test_load_file},
        {"large document (heap)", test_large_document},
        {"jsonl", test_jsonl},
        {"jsonl long line", test_jsonl_long_line},
        {"jsonl positions", test_jsonl_positions},
        {"mutated documents", test_mutations},
        {"concurrent loads (heap)", test_concurrent_loads},
        {"arena allocator opt-in", test_arena_opt_in},
        {"large document (arena)", test_large_document},
        {"concurrent loads (arena)", test_concurrent_loads},
        {"jsonl (arena)", test_jsonl},
        {"jsonl positions (arena)", test_jsonl_positions},
        {"jsonl long line (arena)", test_jsonl_long_line},
        {0, 0}};
    return golden_test_run("doc", tests);
}
