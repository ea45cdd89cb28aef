/* Unit tests of the JSON Schema validator, keyword by keyword, with valid and invalid
 * instances worked out from the 2020-12 specification (counts, pointers, keywords, places). */
#include <limits.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cunit_main.h"
#include "golden/report.h"
#include "util/embed.h"
#include "golden/schema.h"

/* A file of tests/data/schema/ in the source tree. */
static const char *data_path(const char *rel)
{
    char path[PATH_MAX];
    snprintf(path, sizeof path, "tests/data/schema/%s", rel);
    return golden_test_source_path(path);
}

static golden_schema *schema_text(const char *text)
{
    FILE *f = fopen("t.schema.json", "w");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    fputs(text, f);
    fclose(f);
    golden_schema *s = NULL;
    golden_error e = {0};
    if (golden_schema_load("t.schema.json", &s, &e) != GOLDEN_OK)
        fprintf(stderr, "schema load: %s: %s\n", e.where, e.what);
    CU_ASSERT_PTR_NOT_NULL_FATAL(s);
    return s;
}

static golden_error schema_fail(const char *text)
{
    FILE *f = fopen("t.schema.json", "w");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    fputs(text, f);
    fclose(f);
    golden_schema *s = NULL;
    golden_error e = {0};
    CU_ASSERT_EQUAL(golden_schema_load("t.schema.json", &s, &e), GOLDEN_ERR);
    CU_ASSERT_PTR_NULL(s);
    golden_schema_free(s);
    return e;
}

/* Validate `instance` (JSON or YAML text, named i.json / i.yaml by its first character);
 * return the violation count with the list in *v (NULL when v is NULL). */
static long check_opts(const golden_schema *s, const char *instance,
                       const golden_schema_options *opts, golden_violation **v);

static long check(const golden_schema *s, const char *instance, golden_violation **v)
{
    return check_opts(s, instance, NULL, v);
}

/* check() with validation options. */
static long check_opts(const golden_schema *s, const char *instance,
                       const golden_schema_options *opts, golden_violation **v)
{
    golden_doc *d = NULL;
    golden_error e = {0};
    const char *name = instance[0] == '{' || instance[0] == '[' || instance[0] == '"' ||
                               instance[0] == '-' || (instance[0] >= '0' && instance[0] <= '9') ||
                               !strcmp(instance, "true") || !strcmp(instance, "false") ||
                               !strcmp(instance, "null")
                           ? "i.json"
                           : "i.yaml";
    if (golden_doc_load_buffer(name, instance, strlen(instance), &d, &e) != GOLDEN_OK)
        fprintf(stderr, "instance load: %s: %s\n", e.where, e.what);
    CU_ASSERT_PTR_NOT_NULL_FATAL(d);
    golden_violation *list = NULL;
    long n = golden_schema_validate_opts(s, d, NULL, opts, &list, &e);
    golden_doc_free(d);
    if (v)
        *v = list;
    else
        free(list);
    return n;
}

/* Expect exactly `n` violations; print them when the count differs. */
static void expect_n(const golden_schema *s, const char *instance, long n)
{
    golden_violation *v;
    long got = check(s, instance, &v);
    if (got != n) {
        fprintf(stderr, "\n%s: %ld violations, wanted %ld\n", instance, got, n);
        for (long i = 0; i < got; i++)
            fprintf(stderr, "  %s %s %s: %s\n", v[i].where, v[i].pointer, v[i].keyword,
                    v[i].message);
    }
    CU_ASSERT_EQUAL(got, n);
    free(v);
}

/* Expect exactly one violation with this pointer and keyword; returns it for more checks. */
static golden_violation one(const golden_schema *s, const char *instance, const char *pointer,
                            const char *keyword)
{
    golden_violation *v, r;
    memset(&r, 0, sizeof r);
    long got = check(s, instance, &v);
    if (got != 1 || strcmp(v[0].pointer, pointer) || strcmp(v[0].keyword, keyword)) {
        fprintf(stderr, "\n%s: wanted one %s at \"%s\", got %ld:\n", instance, keyword, pointer,
                got);
        for (long i = 0; i < got; i++)
            fprintf(stderr, "  %s %s %s: %s\n", v[i].where, v[i].pointer, v[i].keyword,
                    v[i].message);
    }
    CU_ASSERT_EQUAL(got, 1);
    if (got >= 1) {
        CU_ASSERT_STRING_EQUAL(v[0].pointer, pointer);
        CU_ASSERT_STRING_EQUAL(v[0].keyword, keyword);
        r = v[0];
    }
    free(v);
    return r;
}

static void test_type(void)
{
    golden_schema *s = schema_text("{\"type\": \"integer\"}");
    expect_n(s, "1", 0);
    expect_n(s, "1.0", 0); /* a zero fraction is an integer */
    expect_n(s, "-0", 0);
    golden_violation v = one(s, "1.5", "", "type");
    CU_ASSERT_STRING_EQUAL(v.message, "1.5 is not of type \"integer\"");
    CU_ASSERT_STRING_EQUAL(v.where, "i.json:1:1");
    one(s, "\"1\"", "", "type");
    one(s, "true", "", "type");
    golden_schema_free(s);
    s = schema_text("{\"type\": [\"string\", \"null\"]}");
    expect_n(s, "null", 0);
    expect_n(s, "\"x\"", 0);
    v = one(s, "[]", "", "type");
    CU_ASSERT_STRING_EQUAL(v.message, "[] is not of type \"null\" or \"string\"");
    golden_schema_free(s);
    s = schema_text("{\"type\": \"number\"}");
    expect_n(s, "1", 0);
    expect_n(s, "2.5", 0);
    one(s, "{}", "", "type");
    golden_schema_free(s);
    s = schema_text("{\"properties\": {\"o\": {\"type\": \"object\"}, \"a\": {\"type\": "
                    "\"array\"}, \"b\": {\"type\": \"boolean\"}, \"n\": {\"type\": \"null\"}}}");
    expect_n(s, "{\"o\": {}, \"a\": [], \"b\": false, \"n\": null}", 0);
    expect_n(s, "{\"o\": [], \"a\": {}, \"b\": 0, \"n\": false}", 4);
    golden_schema_free(s);
}

static void test_enum_const(void)
{
    golden_schema *s = schema_text("{\"enum\": [1, \"a\", null, {\"x\": [1]}]}");
    expect_n(s, "1.0", 0); /* 1 == 1.0 */
    expect_n(s, "null", 0);
    expect_n(s, "{\"x\": [1.0]}", 0);
    golden_violation v = one(s, "\"b\"", "", "enum");
    CU_ASSERT_STRING_EQUAL(v.message, "\"b\" is not one of [1,\"a\",null,{\"x\":[1]}]");
    one(s, "{\"x\": [1], \"y\": 2}", "", "enum");
    one(s, "false", "", "enum");
    golden_schema_free(s);
    s = schema_text("{\"const\": {\"a\": 1, \"b\": [true, \"s\"]}}");
    expect_n(s, "{\"b\": [true, \"s\"], \"a\": 1.0}", 0); /* key order does not matter */
    one(s, "{\"a\": 1, \"b\": [true]}", "", "const");
    one(s, "{\"a\": 1, \"b\": [\"s\", true]}", "", "const"); /* array order does */
    golden_schema_free(s);
    s = schema_text("{\"const\": null}");
    expect_n(s, "null", 0);
    one(s, "0", "", "const");
    golden_schema_free(s);
}

/* "did you mean" on the schema errors of a misspelt name (issue 29): a property name against
 * propertyNames' enum (through $ref), a missing required property next to an undeclared key
 * close to it, a string against an enum; nothing when no name is close. */
static void test_did_you_mean(void)
{
    golden_schema *s = schema_text(
        "{\"$defs\": {\"dt\": {\"enum\": [\"f32\", \"bf16\", \"f16\"]}}, "
        "\"propertyNames\": {\"$ref\": \"#/$defs/dt\"}}");
    golden_violation w = one(s, "{\"bf61\": 1}", "/bf61", "propertyNames");
    CU_ASSERT_STRING_EQUAL(w.message, "property name \"bf61\" does not match propertyNames (did you mean bf16?)");
    w = one(s, "{\"zzzz\": 1}", "/zzzz", "propertyNames");
    CU_ASSERT_STRING_EQUAL(w.message, "property name \"zzzz\" does not match propertyNames");
    golden_schema_free(s);
    s = schema_text("{\"properties\": {\"match\": {}, \"tier\": {\"enum\": [\"kernel\", \"layer\"]}}, "
                    "\"required\": [\"match\"]}");
    w = one(s, "{\"mach\": 1}", "", "required");
    CU_ASSERT_STRING_EQUAL(w.message, "missing required property \"match\" (\"mach\" is there: did you mean match?)");
    w = one(s, "{\"other\": 1}", "", "required");
    CU_ASSERT_STRING_EQUAL(w.message, "missing required property \"match\"");
    w = one(s, "{\"match\": 1, \"tier\": \"kernle\"}", "/tier", "enum");
    CU_ASSERT_STRING_EQUAL(w.message, "\"kernle\" is not one of [\"kernel\",\"layer\"] (did you mean kernel?)");
    w = one(s, "{\"match\": 1, \"tier\": \"qqqqqq\"}", "/tier", "enum");
    CU_ASSERT_STRING_EQUAL(w.message, "\"qqqqqq\" is not one of [\"kernel\",\"layer\"]");
    golden_schema_free(s);
}

static void test_objects(void)
{
    golden_schema *s =
        schema_text("{\"properties\": {\"a\": {\"type\": \"string\"}}, \"required\": [\"a\", "
                    "\"b\"], \"additionalProperties\": false}");
    expect_n(s, "{\"a\": \"x\", \"b\": 1}", 1); /* b is required but not declared: additional */
    golden_violation *v;
    long n = check(s, "{\"a\": 1,\n \"c\": 2}", &v);
    CU_ASSERT_EQUAL_FATAL(n, 3);
    CU_ASSERT_STRING_EQUAL(v[0].keyword, "required");
    CU_ASSERT_STRING_EQUAL(v[0].pointer, "");
    CU_ASSERT_STRING_EQUAL(v[0].message, "missing required property \"b\"");
    CU_ASSERT_STRING_EQUAL(v[0].where, "i.json:1:1");
    CU_ASSERT_STRING_EQUAL(v[1].keyword, "type");
    CU_ASSERT_STRING_EQUAL(v[1].pointer, "/a");
    CU_ASSERT_STRING_EQUAL(v[1].where, "i.json:1:7");
    CU_ASSERT_STRING_EQUAL(v[2].keyword, "additionalProperties");
    CU_ASSERT_STRING_EQUAL(v[2].pointer, "/c");
    CU_ASSERT_STRING_EQUAL(v[2].message, "property \"c\" is not allowed");
    CU_ASSERT_STRING_EQUAL(v[2].where, "i.json:2:7");
    free(v);
    expect_n(s, "[]", 0); /* not an object: object keywords do not apply */
    golden_schema_free(s);
    s = schema_text("{\"type\": \"object\"}");
    expect_n(s, "{}", 0);
    golden_schema_free(s);
    s = schema_text("{\"patternProperties\": {\"^x-\": {\"type\": \"integer\"}, \"[0-9]$\": "
                    "{\"minimum\": 10}}, \"additionalProperties\": {\"type\": \"string\"}}");
    expect_n(s, "{\"x-a\": 1, \"y\": \"s\", \"x-9\": 12}", 0);
    expect_n(s, "{\"x-a\": \"s\", \"y\": 2}", 2);
    expect_n(s, "{\"x-9\": 5.5}", 2); /* both patterns apply to one name */
    one(s, "{\"x-9\": 11.5}", "/x-9", "type");
    golden_schema_free(s);
    /* JSON pointer escapes of keys with / and ~ */
    s = schema_text("{\"additionalProperties\": {\"type\": \"integer\"}}");
    one(s, "{\"a/b~c\": \"s\"}", "/a~1b~0c", "type");
    golden_schema_free(s);
    s = schema_text("{\"dependentRequired\": {\"a\": [\"b\", \"c\"]}}");
    expect_n(s, "{\"b\": 1}", 0);
    expect_n(s, "{\"a\": 1, \"b\": 1, \"c\": 1}", 0);
    golden_violation w = one(s, "{\"a\": 1, \"b\": 1}", "", "dependentRequired");
    CU_ASSERT_STRING_EQUAL(w.message, "property \"a\" requires property \"c\"");
    expect_n(s, "{\"a\": 1}", 2);
    golden_schema_free(s);
    s = schema_text("{\"propertyNames\": {\"maxLength\": 3, \"pattern\": \"^[a-z]+$\"}}");
    expect_n(s, "{\"ab\": 1, \"xyz\": 2}", 0);
    w = one(s, "{\"abcd\": 1, \"ab\": 2}", "/abcd", "propertyNames");
    CU_ASSERT_STRING_EQUAL(w.message, "property name \"abcd\" does not match propertyNames");
    expect_n(s, "{\"ABCD\": 1, \"Q\": 2}", 2);
    golden_schema_free(s);
    s = schema_text("{\"minProperties\": 1, \"maxProperties\": 2}");
    one(s, "{}", "", "minProperties");
    expect_n(s, "{\"a\": 1, \"b\": 2}", 0);
    one(s, "{\"a\": 1, \"b\": 2, \"c\": 3}", "", "maxProperties");
    golden_schema_free(s);
    s = schema_text("{\"dependentSchemas\": {\"a\": {\"required\": [\"z\"]}}}");
    expect_n(s, "{\"b\": 1}", 0);
    one(s, "{\"a\": 1}", "", "required");
    golden_schema_free(s);
}

static void test_arrays(void)
{
    golden_schema *s = schema_text("{\"prefixItems\": [{\"type\": \"integer\"}, {\"type\": "
                                   "\"string\"}], \"items\": {\"type\": \"boolean\"}}");
    expect_n(s, "[1, \"a\", true, false]", 0);
    expect_n(s, "[1]", 0);
    expect_n(s, "[]", 0);
    golden_violation *v;
    long n = check(s, "[1, 2, 3]", &v);
    CU_ASSERT_EQUAL_FATAL(n, 2);
    CU_ASSERT_STRING_EQUAL(v[0].pointer, "/1");
    CU_ASSERT_STRING_EQUAL(v[1].pointer, "/2");
    CU_ASSERT_STRING_EQUAL(v[1].where, "i.json:1:8");
    free(v);
    golden_schema_free(s);
    s = schema_text("{\"prefixItems\": [{}, {}], \"items\": false}");
    expect_n(s, "[1, 2]", 0);
    golden_violation w = one(s, "[1, 2, null]", "/2", "items");
    CU_ASSERT_STRING_EQUAL(w.where, "i.json:1:8"); /* null's own place, not its array's */
    golden_schema_free(s);
    s = schema_text("{\"items\": {\"type\": \"integer\"}, \"minItems\": 2, \"maxItems\": 3}");
    w = one(s, "[1]", "", "minItems");
    CU_ASSERT_STRING_EQUAL(w.message, "expected at least 2 items, found 1");
    expect_n(s, "[1, 2]", 0);
    w = one(s, "[1, 2, 3, 4]", "", "maxItems");
    CU_ASSERT_STRING_EQUAL(w.message, "expected at most 3 items, found 4");
    expect_n(s, "[\"a\"]", 2);
    golden_schema_free(s);
    s = schema_text("{\"uniqueItems\": true}");
    expect_n(s, "[1, \"1\", [1], {\"a\": 1}, true, null]", 0);
    w = one(s, "[1, 2, 1.0]", "", "uniqueItems");
    CU_ASSERT_STRING_EQUAL(w.message, "items 0 and 2 are equal (uniqueItems)");
    one(s, "[{\"a\": 1, \"b\": [2]}, {\"b\": [2.0], \"a\": 1}]", "", "uniqueItems");
    /* more than 32 items takes the hashing path: 100 distinct, then one repeat */
    char big[2048];
    size_t o = 0;
    big[o++] = '[';
    for (int i = 0; i < 100; i++)
        o += (size_t)snprintf(big + o, sizeof big - o, "%s%d", i ? ", " : "", i * 7);
    snprintf(big + o, sizeof big - o, "]");
    expect_n(s, big, 0);
    snprintf(big + o, sizeof big - o, ", 259.0, 21]");
    w = one(s, big, "", "uniqueItems");
    CU_ASSERT_STRING_EQUAL(w.message, "items 3 and 101 are equal (uniqueItems)");
    /* hostile: 200,000 equal items are one pass, not 4 x 10^10 comparisons */
    char *zeros = malloc(200000 * 2 + 2), *z = zeros;
    *z++ = '[';
    for (int i = 0; i < 200000; i++) {
        if (i)
            *z++ = ',';
        *z++ = '0';
    }
    *z++ = ']';
    *z = '\0';
    w = one(s, zeros, "", "uniqueItems");
    CU_ASSERT_STRING_EQUAL(w.message, "items 0 and 1 are equal (uniqueItems)");
    free(zeros);
    golden_schema_free(s);
    s = schema_text("{\"uniqueItems\": false}");
    expect_n(s, "[1, 1]", 0);
    golden_schema_free(s);
    s = schema_text("{\"contains\": {\"type\": \"string\"}}");
    expect_n(s, "[1, \"a\"]", 0);
    w = one(s, "[1, 2]", "", "contains");
    one(s, "[]", "", "contains");
    expect_n(s, "{}", 0);
    golden_schema_free(s);
    s = schema_text("{\"contains\": {\"type\": \"string\"}, \"minContains\": 2, \"maxContains\": "
                    "3}");
    one(s, "[\"a\", 1]", "", "minContains");
    expect_n(s, "[\"a\", 1, \"b\"]", 0);
    w = one(s, "[\"a\", \"b\", \"c\", \"d\"]", "", "maxContains");
    CU_ASSERT_STRING_EQUAL(w.message, "4 items match the contains schema, more than maxContains 3");
    golden_schema_free(s);
    s = schema_text("{\"contains\": {\"const\": 1}, \"minContains\": 0}");
    expect_n(s, "[]", 0);
    golden_schema_free(s);
}

static void test_numbers(void)
{
    golden_schema *s = schema_text("{\"minimum\": 1, \"exclusiveMaximum\": 3}");
    expect_n(s, "1", 0);
    expect_n(s, "2.999", 0);
    golden_violation v = one(s, "0.5", "", "minimum");
    CU_ASSERT_STRING_EQUAL(v.message, "0.5 is less than the minimum 1");
    v = one(s, "3", "", "exclusiveMaximum");
    CU_ASSERT_STRING_EQUAL(v.message, "3 is not less than the exclusive maximum 3");
    expect_n(s, "\"text\"", 0); /* numeric keywords ignore other types */
    golden_schema_free(s);
    s = schema_text("{\"exclusiveMinimum\": 0, \"maximum\": 9007199254740993}");
    one(s, "0", "", "exclusiveMinimum");
    expect_n(s, "9007199254740993", 0); /* integers compare exactly beyond 2^53 */
    one(s, "9007199254740994", "", "maximum");
    expect_n(s, "0.001", 0);
    golden_schema_free(s);
    s = schema_text("{\"multipleOf\": 2}");
    expect_n(s, "4", 0);
    expect_n(s, "-6", 0);
    expect_n(s, "4.0", 0);
    v = one(s, "7", "", "multipleOf");
    CU_ASSERT_STRING_EQUAL(v.message, "7 is not a multiple of 2");
    one(s, "4.5", "", "multipleOf");
    golden_schema_free(s);
    s = schema_text("{\"multipleOf\": 0.1}");
    expect_n(s, "0.3", 0); /* 0.3 / 0.1 = 2.9999999999999996 in binary: tolerated */
    expect_n(s, "12", 0);
    one(s, "0.35", "", "multipleOf");
    golden_schema_free(s);
}

static void test_strings(void)
{
    golden_schema *s = schema_text("{\"minLength\": 2, \"maxLength\": 3}");
    /* lengths count code points: "é" is 2 bytes but 1 character */
    golden_violation v = one(s, "\"\xc3\xa9\"", "", "minLength");
    CU_ASSERT_STRING_EQUAL(v.message, "\"\xc3\xa9\" is shorter than 2 characters");
    expect_n(s, "\"\xc3\xa9\xc3\xa9\"", 0);
    expect_n(s, "\"\xf0\x9f\x98\x80\xf0\x9f\x98\x80\xf0\x9f\x98\x80\"", 0);
    one(s, "\"\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\"", "", "maxLength");
    expect_n(s, "12345", 0);
    golden_schema_free(s);
    s = schema_text("{\"pattern\": \"^[0-9a-f]{64}$\"}");
    expect_n(s, "\"0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef\"", 0);
    v = one(s, "\"abc\"", "", "pattern");
    CU_ASSERT_STRING_EQUAL(v.message, "\"abc\" does not match pattern ^[0-9a-f]{64}$");
    one(s, "\"0123456789ABCDEF0123456789abcdef0123456789abcdef0123456789abcdef\"", "",
        "pattern");
    expect_n(s, "5", 0);
    golden_schema_free(s);
    /* unanchored patterns search; ECMA class escapes are translated */
    s = schema_text("{\"pattern\": \"a\\\\d+\"}");
    expect_n(s, "\"xxa12yy\"", 0);
    one(s, "\"xxayy\"", "", "pattern");
    golden_schema_free(s);
    s = schema_text("{\"pattern\": \"^\\\\w+\\\\.\\\\s?[\\\\d_]$\"}");
    expect_n(s, "\"ab_9. 7\"", 0);
    expect_n(s, "\"a._\"", 0);
    one(s, "\"a-b.7\"", "", "pattern");
    one(s, "\"ab.x\"", "", "pattern");
    golden_schema_free(s);
    /* a NUL inside a string does not cut the match short */
    s = schema_text("{\"pattern\": \"^a*$\"}");
    one(s, "\"aa\\u0000b\"", "", "pattern");
    golden_schema_free(s);
    /* format is an annotation only */
    s = schema_text("{\"format\": \"email\", \"unknownKeyword\": 5}");
    expect_n(s, "\"not an email\"", 0);
    golden_schema_free(s);
}

static void test_combinators(void)
{
    golden_schema *s = schema_text("{\"allOf\": [{\"type\": \"integer\"}, {\"minimum\": 5}]}");
    expect_n(s, "7", 0);
    one(s, "3", "", "minimum");
    one(s, "\"x\"", "", "type");
    expect_n(s, "3.5", 2);
    golden_schema_free(s);
    s = schema_text("{\"anyOf\": [{\"type\": \"string\"}, {\"minimum\": 10}]}");
    expect_n(s, "\"a\"", 0);
    expect_n(s, "12", 0);
    golden_violation v = one(s, "5", "", "anyOf");
    CU_ASSERT_STRING_EQUAL(v.message, "5 matches none of the 2 schemas in anyOf");
    golden_schema_free(s);
    s = schema_text("{\"oneOf\": [{\"type\": \"integer\"}, {\"minimum\": 2}]}");
    expect_n(s, "1", 0);   /* integer, below 2 */
    expect_n(s, "2.5", 0); /* not an integer, at least 2 */
    v = one(s, "3", "", "oneOf");
    CU_ASSERT_STRING_EQUAL(v.message, "3 matches more than one of the 2 schemas in oneOf");
    v = one(s, "1.5", "", "oneOf");
    CU_ASSERT_STRING_EQUAL(v.message, "1.5 matches none of the 2 schemas in oneOf");
    golden_schema_free(s);
    s = schema_text("{\"not\": {\"type\": \"null\"}}");
    expect_n(s, "1", 0);
    one(s, "null", "", "not");
    golden_schema_free(s);
    s = schema_text("{\"if\": {\"properties\": {\"kind\": {\"const\": \"a\"}}, \"required\": "
                    "[\"kind\"]}, \"then\": {\"required\": [\"x\"]}, \"else\": {\"required\": "
                    "[\"y\"]}}");
    expect_n(s, "{\"kind\": \"a\", \"x\": 1}", 0);
    expect_n(s, "{\"kind\": \"b\", \"y\": 1}", 0);
    v = one(s, "{\"kind\": \"a\"}", "", "required");
    CU_ASSERT_STRING_EQUAL(v.message, "missing required property \"x\"");
    v = one(s, "{\"kind\": \"b\"}", "", "required");
    CU_ASSERT_STRING_EQUAL(v.message, "missing required property \"y\"");
    one(s, "{}", "", "required");
    golden_schema_free(s);
    /* if without then/else has no effect; then alone only when if holds */
    s = schema_text("{\"if\": {\"type\": \"string\"}, \"then\": {\"minLength\": 2}}");
    expect_n(s, "1", 0);
    one(s, "\"a\"", "", "minLength");
    golden_schema_free(s);
    /* boolean schemas */
    s = schema_text("true");
    expect_n(s, "{\"anything\": [1]}", 0);
    golden_schema_free(s);
    s = schema_text("false");
    one(s, "1", "", "false");
    golden_schema_free(s);
    s = schema_text("{\"properties\": {\"a\": false, \"b\": true}}");
    expect_n(s, "{\"b\": 1}", 0);
    one(s, "{\"a\": 1}", "/a", "properties");
    golden_schema_free(s);
}

static void test_refs(void)
{
    /* a recursive tree schema: the violation's pointer goes all the way down */
    golden_schema *s = schema_text(
        "{\"$defs\": {\"name\": {\"type\": \"string\"}}, \"type\": \"object\", \"properties\": "
        "{\"name\": {\"$ref\": \"#/$defs/name\"}, \"kids\": {\"type\": \"array\", \"items\": "
        "{\"$ref\": \"#\"}}}}");
    expect_n(s, "{\"name\": \"r\", \"kids\": [{\"name\": \"a\", \"kids\": []}]}", 0);
    golden_violation v =
        one(s, "name: r\nkids:\n  - name: a\n    kids:\n      - name: 5\n", "/kids/0/kids/0/name",
            "type");
    CU_ASSERT_STRING_EQUAL(v.where, "i.yaml:5:15");
    golden_schema_free(s);
    /* $ref applies together with its sibling keywords (2020-12) */
    s = schema_text("{\"$defs\": {\"int\": {\"type\": \"integer\"}}, \"$ref\": \"#/$defs/int\", "
                    "\"minimum\": 3}");
    expect_n(s, "4", 0);
    one(s, "2", "", "minimum");
    one(s, "4.5", "", "type");
    golden_schema_free(s);
    /* a sibling file found beside the referring schema, escaped pointers, $anchor */
    golden_schema *m = NULL;
    golden_error e = {0};
    if (golden_schema_load(data_path("test-main.schema.json"), &m, &e) != GOLDEN_OK)
        fprintf(stderr, "%s: %s\n", e.where, e.what);
    CU_ASSERT_PTR_NOT_NULL_FATAL(m);
    golden_doc *d = NULL;
    CU_ASSERT_EQUAL_FATAL(golden_doc_load_file(data_path("test-main-valid.yaml"), &d, &e),
                          GOLDEN_OK);
    golden_violation *list;
    CU_ASSERT_EQUAL(golden_schema_validate(m, d, NULL, &list, &e), 0);
    free(list);
    CU_ASSERT_EQUAL(golden_schema_check(m, d, &e), GOLDEN_OK);
    golden_doc_free(d);
    CU_ASSERT_EQUAL_FATAL(golden_doc_load_file(data_path("test-main-invalid.yaml"), &d, &e),
                          GOLDEN_OK);
    long n = golden_schema_validate(m, d, NULL, &list, &e);
    CU_ASSERT_EQUAL_FATAL(n, 4);
    const char *want[4][3] = {{"/sha256", "pattern", ":2:9"},
                              {"/anchored", "exclusiveMinimum", ":4:11"},
                              {"/child", "required", ":6:3"},
                              {"/child/extra", "additionalProperties", ":7:10"}};
    for (int i = 0; i < 4; i++) {
        CU_ASSERT_STRING_EQUAL(list[i].pointer, want[i][0]);
        CU_ASSERT_STRING_EQUAL(list[i].keyword, want[i][1]);
        size_t wl = strlen(list[i].where), sl = strlen(want[i][2]);
        CU_ASSERT(wl > sl && !strcmp(list[i].where + wl - sl, want[i][2]));
    }
    CU_ASSERT_STRING_EQUAL(list[0].message, "\"ABC\" does not match pattern ^[0-9a-f]{64}$");
    free(list);
    /* golden_schema_check: the first violation as an error record */
    CU_ASSERT_EQUAL(golden_schema_check(m, d, &e), GOLDEN_ERR);
    CU_ASSERT_STRING_EQUAL(e.what,
                           "/sha256: \"ABC\" does not match pattern ^[0-9a-f]{64}$ (pattern)");
    /* validating one node inside the document */
    json_t *child = json_object_get(golden_doc_root(d), "child");
    n = golden_schema_validate(m, d, child, &list, &e);
    CU_ASSERT_EQUAL(n, 2);
    if (n == 2)
        CU_ASSERT_STRING_EQUAL(list[1].pointer, "/extra");
    free(list);
    golden_doc_free(d);
    golden_schema_free(m);
}

static void test_ref_loop(void)
{
    /* a $ref cycle that never consumes the instance is refused when the schema loads,
     * before any document could hang or exhaust the stack on it */
    golden_schema *s = NULL;
    golden_error e = {0};
    CU_ASSERT_EQUAL(golden_schema_load(data_path("test-loop.schema.json"), &s, &e), GOLDEN_ERR);
    CU_ASSERT_PTR_NULL(s);
    CU_ASSERT_PTR_NOT_NULL(strstr(e.what, "$ref loop"));
    CU_ASSERT_PTR_NOT_NULL(strstr(e.where, "test-loop.schema.json:"));
    /* the same through allOf under items (met by the worker threads before: now at load) */
    e = schema_fail("{\"items\": {\"$ref\": \"#/$defs/a\"}, \"$defs\": {\"a\": {\"$ref\": "
                    "\"#/$defs/b\"}, \"b\": {\"allOf\": [{\"$ref\": \"#/$defs/a\"}]}}}");
    CU_ASSERT_PTR_NOT_NULL(strstr(e.what, "$ref loop"));
    e = schema_fail("{\"$ref\": \"#\"}");
    CU_ASSERT_PTR_NOT_NULL(strstr(e.what, "$ref loop"));
    e = schema_fail("{\"anyOf\": [{\"type\": \"string\"}, {\"not\": {\"$ref\": \"#\"}}]}");
    CU_ASSERT_PTR_NOT_NULL(strstr(e.what, "$ref loop"));
    /* recursion through a keyword that descends into the instance terminates: fine */
    s = schema_text("{\"$defs\": {\"t\": {\"type\": \"array\", \"items\": {\"$ref\": "
                    "\"#/$defs/t\"}}}, \"$ref\": \"#/$defs/t\"}");
    expect_n(s, "[[[], [[]]]]", 0);
    expect_n(s, "[[[], [1]]]", 1);
    golden_schema_free(s);
}

static void test_schema_errors(void)
{
    golden_error e = schema_fail("{\n  \"type\": \"strng\"\n}");
    CU_ASSERT_STRING_EQUAL(e.where, "t.schema.json:2:11");
    CU_ASSERT_PTR_NOT_NULL(strstr(e.what, "strng"));
    e = schema_fail("{\"pattern\": \"[b-a]\"}");
    CU_ASSERT_STRING_EQUAL(e.where, "t.schema.json:1:13");
    CU_ASSERT_PTR_NOT_NULL(strstr(e.what, "not a valid ECMA-262 pattern"));
    e = schema_fail("{\"$defs\": {\"unused\": {\"pattern\": \"(?<=a\"}}}");
    CU_ASSERT_STRING_EQUAL(e.where, "t.schema.json:1:34");
    /* \p or \P at the very end: an error, not a read past the string (fuzz_schema found it) */
    e = schema_fail("{\"pattern\": \"a\\\\P\"}");
    CU_ASSERT_STRING_EQUAL(e.where, "t.schema.json:1:13");
    e = schema_fail("{\"pattern\": \"\\\\p\"}");
    CU_ASSERT_STRING_EQUAL(e.where, "t.schema.json:1:13");
    e = schema_fail("{\"pattern\": \"a(b\"}");
    CU_ASSERT_PTR_NOT_NULL(strstr(e.what, "PCRE2"));
    e = schema_fail("{\"properties\": {\"a\": {\"$ref\": \"#/$defs/missing\"}}}");
    CU_ASSERT_STRING_EQUAL(e.where, "t.schema.json:1:31");
    CU_ASSERT_PTR_NOT_NULL(strstr(e.what, "points at nothing"));
    e = schema_fail("{\"$ref\": \"no-such-file.schema.json#/x\"}");
    CU_ASSERT_PTR_NOT_NULL(strstr(e.what, "no schema"));
    e = schema_fail("{\"$ref\": \"../t.schema.json\"}");
    CU_ASSERT_PTR_NOT_NULL(strstr(e.what, "leaves the schema's folder"));
    e = schema_fail("{\"$ref\": \"/etc/passwd\"}");
    CU_ASSERT_PTR_NOT_NULL(strstr(e.what, "leaves the schema's folder"));
    e = schema_fail("{\"required\": \"a\"}");
    e = schema_fail("{\"minItems\": -1}");
    e = schema_fail("{\"multipleOf\": 0}");
    e = schema_fail("{\"items\": 3}");
    e = schema_fail("[1]");
    e = schema_fail("{\"a\": 1, \"a\": 2}"); /* the loader's duplicate check applies */
    CU_ASSERT_PTR_NOT_NULL(strstr(e.what, "duplicate"));
    golden_schema *s = NULL;
    CU_ASSERT_EQUAL(golden_schema_load("no-such/v1", &s, &e), GOLDEN_ERR);
    CU_ASSERT_EQUAL(golden_schema_load("", &s, &e), GOLDEN_ERR);
}

static void test_embedded(void)
{
    /* every schema compiled into the library loads, by file name, by $id and by format */
    for (const golden_embedded_file *f = lg_embedded_schemas; f->name; f++) {
        golden_schema *s = NULL;
        golden_error e = {0};
        if (golden_schema_load(f->name, &s, &e) != GOLDEN_OK)
            fprintf(stderr, "embedded %s: %s: %s\n", f->name, e.where, e.what);
        CU_ASSERT_PTR_NOT_NULL(s);
        golden_schema_free(s);
        char id[512], format[512];
        snprintf(id, sizeof id, "https://calculet.invalid/schemas/%s", f->name);
        CU_ASSERT_EQUAL(golden_schema_load(id, &s, &e), GOLDEN_OK);
        golden_schema_free(s);
        size_t n = strlen(f->name), suffix = strlen(".schema.json");
        if (n <= suffix || strcmp(f->name + n - suffix, ".schema.json"))
            continue;
        /* "calculet-graph-v1.schema.json" <- "calculet-graph/v1" */
        snprintf(format, sizeof format, "%.*s", (int)(n - suffix), f->name);
        char *dash = strrchr(format, '-');
        if (!dash || dash[1] != 'v')
            continue;
        *dash = '/';
        CU_ASSERT_EQUAL(golden_schema_load(format, &s, &e), GOLDEN_OK);
        golden_schema_free(s);
    }
}

static void test_many_violations(void)
{
    golden_schema *s = schema_text("{\"items\": {\"type\": \"string\"}}");
    /* every violation is collected: 10 bad items of 12 */
    golden_violation *v;
    long n = check(s, "[1, \"a\", 2, 3, 4, \"b\", 5, 6, 7, 8, 9, 10]", &v);
    CU_ASSERT_EQUAL(n, 10);
    if (n == 10) {
        CU_ASSERT_STRING_EQUAL(v[0].pointer, "/0");
        CU_ASSERT_STRING_EQUAL(v[9].pointer, "/11");
    }
    free(v);
    /* ... up to the limit, the last one saying so */
    size_t items = GOLDEN_SCHEMA_MAX_VIOLATIONS + 500;
    char *big = malloc(items * 3 + 3), *p = big;
    *p++ = '[';
    for (size_t i = 0; i < items; i++) {
        if (i)
            *p++ = ',';
        *p++ = '1';
    }
    *p++ = ']';
    *p = '\0';
    n = check(s, big, &v);
    CU_ASSERT_EQUAL(n, GOLDEN_SCHEMA_MAX_VIOLATIONS);
    if (n == GOLDEN_SCHEMA_MAX_VIOLATIONS)
        CU_ASSERT_STRING_EQUAL(v[n - 1].keyword, "maxViolations");
    free(v);
    free(big);
    golden_schema_free(s);
}

/* The validator's pattern verdicts against glibc's regexec on the same patterns, written so
 * that ECMA and POSIX ERE read them alike: many random subjects over a small alphabet. */
static void test_pattern_differential(void)
{
    static const char *patterns[] = {
        "^[a-c]+x?[0-9]{2,3}$", "b[0-9]*c", "^a?b?c?$", "[xyz]{2}", "^x*$", "^[^ab]+$",
        "c.a", "^.{2,4}$", "^(ab|c)+$", "^[a-c0-9_.:-]+$", "a{0,2}b{1,}$", "^$",
        "^sha256:[0-9a-f]{4}$", "x|y", "^[-a]b+[a-]$",
    };
    const char alphabet[] = "abcxyz0129_.:- ";
    unsigned seed = 12345;
    for (size_t p = 0; p < sizeof patterns / sizeof *patterns; p++) {
        regex_t re;
        CU_ASSERT_EQUAL_FATAL(regcomp(&re, patterns[p], REG_EXTENDED | REG_NOSUB), 0);
        json_t *js = json_pack("{ss}", "pattern", patterns[p]);
        char *text = json_dumps(js, 0);
        json_decref(js);
        golden_schema *s = schema_text(text);
        free(text);
        for (int k = 0; k < 400; k++) {
            char subj[16];
            seed = seed * 1103515245u + 12345u;
            int len = (int)((seed >> 16) % 9);
            for (int i = 0; i < len; i++) {
                seed = seed * 1103515245u + 12345u;
                subj[i] = alphabet[(seed >> 16) % (sizeof alphabet - 1)];
            }
            subj[len] = '\0';
            if (p == 12 && k % 3 == 0) /* give the digest pattern some hits */
                snprintf(subj, sizeof subj, "sha256:%c%c0f", alphabet[k % 6], "0a9f"[k % 4]);
            int want = regexec(&re, subj, 0, NULL, 0) == 0;
            json_t *str = json_string(subj);
            char *inst = json_dumps(str, JSON_ENCODE_ANY);
            json_decref(str);
            long got = check(s, inst, NULL);
            if ((got == 0) != want)
                fprintf(stderr, "pattern %s on \"%s\": regexec %d, validator %ld violations\n",
                        patterns[p], subj, want, got);
            CU_ASSERT_EQUAL(got == 0, want);
            free(inst);
        }
        regfree(&re);
        golden_schema_free(s);
    }
}

/* A big array is split over threads: the violations must be the same, in the same order,
 * with one thread and with several. */
static void test_threads_agree(void)
{
    golden_schema *s = schema_text("{\"items\": {\"type\": \"object\", \"required\": [\"id\"], "
                                   "\"properties\": {\"id\": {\"pattern\": \"^op[0-9]+$\"}, "
                                   "\"n\": {\"minimum\": 0}}}}");
    size_t n = 9000;
    char *big = malloc(n * 40 + 8), *p = big;
    *p++ = '[';
    for (size_t i = 0; i < n; i++) {
        if (i % 997 == 5)
            p += sprintf(p, "%s{\"n\": -1}", i ? "," : "");
        else if (i % 1499 == 7)
            p += sprintf(p, "%s{\"id\": \"op-%zu\", \"n\": %zu}", i ? "," : "", i, i);
        else
            p += sprintf(p, "%s{\"id\": \"op%zu\", \"n\": %zu}", i ? "," : "", i, i);
    }
    sprintf(p, "]");
    golden_violation *one_t, *many_t;
    golden_schema_options o1 = {GOLDEN_SCHEMA_OPTIONS_VERSION, 1};
    golden_schema_options o3 = {GOLDEN_SCHEMA_OPTIONS_VERSION, 3};
    long n1 = check_opts(s, big, &o1, &one_t);
    long n3 = check_opts(s, big, &o3, &many_t);
    /* by hand: i % 997 == 5 for i = 5, 1002, ..., 8978 (10 items, two violations each);
     * i % 1499 == 7 for i = 7, 1506, ..., 7502 (6 items, one each) */
    CU_ASSERT_EQUAL(n1, 26);
    CU_ASSERT_EQUAL(n3, n1);
    for (long i = 0; i < n1 && i < n3; i++) {
        CU_ASSERT_STRING_EQUAL(one_t[i].pointer, many_t[i].pointer);
        CU_ASSERT_STRING_EQUAL(one_t[i].keyword, many_t[i].keyword);
        CU_ASSERT_STRING_EQUAL(one_t[i].where, many_t[i].where);
    }
    if (n1 == 26) {
        CU_ASSERT_STRING_EQUAL(one_t[0].pointer, "/5");
        CU_ASSERT_STRING_EQUAL(one_t[0].keyword, "required");
        CU_ASSERT_STRING_EQUAL(one_t[1].pointer, "/5/n");
        CU_ASSERT_STRING_EQUAL(one_t[2].pointer, "/7/id");
        CU_ASSERT_STRING_EQUAL(one_t[25].pointer, "/8978/n");
    }
    free(one_t);
    free(many_t);
    /* 7 threads (28 shares of 322 items), and the library's default, agree as well */
    golden_schema_options o7 = {GOLDEN_SCHEMA_OPTIONS_VERSION, 7};
    for (int k = 0; k < 2; k++) {
        golden_violation *v;
        long nk = check_opts(s, big, k ? NULL : &o7, &v);
        CU_ASSERT_EQUAL(nk, 26);
        if (nk == 26) {
            CU_ASSERT_STRING_EQUAL(v[2].pointer, "/7/id");
            CU_ASSERT_STRING_EQUAL(v[25].pointer, "/8978/n");
        }
        free(v);
    }
    free(big);
    golden_schema_free(s);
}

/* Options are versioned: one this library does not know is refused, not misread. */
static void test_options_version(void)
{
    golden_schema *s = schema_text("{\"type\": \"object\"}");
    golden_doc *d = NULL;
    golden_error e = {0};
    CU_ASSERT_EQUAL_FATAL(golden_doc_load_buffer("i.json", "{}", 2, &d, &e), GOLDEN_OK);
    golden_schema_options bad = {GOLDEN_SCHEMA_OPTIONS_VERSION + 1, 1};
    golden_violation *v = (golden_violation *)1;
    CU_ASSERT_EQUAL(golden_schema_validate_opts(s, d, NULL, &bad, &v, &e), -1);
    CU_ASSERT_EQUAL(e.code, GOLDEN_EINVAL);
    CU_ASSERT_PTR_NULL(v);
    golden_schema_options good = GOLDEN_SCHEMA_OPTIONS_INIT;
    CU_ASSERT_EQUAL(golden_schema_check_opts(s, d, &good, &e), GOLDEN_OK);
    golden_doc_free(d);
    golden_schema_free(s);
}

/* Corrupted schemas: each one loads (and then validates an instance without an internal
 * error) or fails with a place in the schema file and a reason. */
static void test_mutated_schemas(void)
{
    const char *seed_text =
        "{\"$defs\": {\"id\": {\"type\": \"string\", \"pattern\": \"^[a-z]+[0-9]*$\", "
        "\"maxLength\": 9}, \"n\": {\"type\": \"integer\", \"minimum\": 0, \"multipleOf\": 2}},"
        " \"type\": \"object\", \"required\": [\"id\"], \"properties\": {\"id\": {\"$ref\": "
        "\"#/$defs/id\"}, \"n\": {\"$ref\": \"#/$defs/n\"}, \"l\": {\"type\": \"array\", "
        "\"prefixItems\": [{\"const\": 1}], \"items\": {\"enum\": [2, 3]}, \"uniqueItems\": "
        "true, \"contains\": {\"const\": 3}}}, \"patternProperties\": {\"^x\": true}, "
        "\"additionalProperties\": false, \"oneOf\": [{\"required\": [\"n\"]}, {\"required\": "
        "[\"l\"]}], \"if\": {\"required\": [\"x1\"]}, \"then\": {\"not\": {\"required\": "
        "[\"n\"]}}}";
    const char *instance = "{\"id\": \"abc1\", \"l\": [1, 2, 3], \"x1\": null}";
    static const char inserts[] = "{}[]\":,#0-~/^$*+?()";
    size_t n = strlen(seed_text);
    char *buf = malloc(n + 64);
    unsigned seed = 99;
    int ok = 0, failed = 0;
    for (int r = 0; r < 1500; r++) {
        memcpy(buf, seed_text, n);
        size_t len = n;
        for (int e = 0; e < 1 + (int)(seed % 3); e++) {
            seed = seed * 1103515245u + 12345u;
            size_t at = (seed >> 8) % len;
            char ch = inserts[(seed >> 24) % (sizeof inserts - 1)];
            if ((seed >> 20) % 2) {
                buf[at] = ch;
            } else if (len < n + 60) {
                memmove(buf + at + 1, buf + at, len - at);
                buf[at] = ch;
                len++;
            }
        }
        buf[len] = '\0';
        FILE *f = fopen("m.schema.json", "w");
        CU_ASSERT_PTR_NOT_NULL_FATAL(f);
        fputs(buf, f);
        fclose(f);
        golden_schema *s = NULL;
        golden_error e = {0};
        if (golden_schema_load("m.schema.json", &s, &e) == GOLDEN_OK) {
            ok++;
            long got = check(s, instance, NULL);
            CU_ASSERT(got >= 0);
            golden_schema_free(s);
        } else {
            failed++;
            CU_ASSERT_PTR_NULL(s);
            CU_ASSERT(strncmp(e.where, "m.schema.json", 13) == 0);
            CU_ASSERT(e.what[0] != '\0');
        }
    }
    CU_ASSERT(ok > 0);
    CU_ASSERT(failed > 0);
    /* the unmutated schema accepts the instance: the mutations start from a valid pair */
    golden_schema *s = schema_text(seed_text);
    expect_n(s, instance, 0);
    golden_schema_free(s);
    free(buf);
    unlink("m.schema.json");
}

int main(void)
{
    static const golden_test tests[] = {
        {"type", test_type},
        {"enum and const", test_enum_const},
        {"object keywords", test_objects},
        {"array keywords", test_arrays},
        {"number keywords", test_numbers},
        {"string keywords", test_strings},
        {"allOf anyOf oneOf not if", test_combinators},
        {"$ref", test_refs},
        {"$ref loop", test_ref_loop},
        {"schema errors", test_schema_errors},
        {"embedded schemas", test_embedded},
        {"many violations", test_many_violations},
        {"patterns against regexec", test_pattern_differential},
        {"options version", test_options_version},
        {"threads agree", test_threads_agree},
        {"mutated schemas", test_mutated_schemas},
        {"did you mean", test_did_you_mean},
        {0, 0}};
    int rc = golden_test_run("schema", tests);
    unlink("t.schema.json");
    return rc;
}
