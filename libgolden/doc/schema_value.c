/* JSON values as JSON Schema compares them: numbers by value (1 equals 1.0), objects whatever
 * their key order, a hash consistent with that equality, and short renderings for messages. */
#include "doc/schema_internal.h"

#include <ctype.h>
#include <math.h>
#include <regex.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "util/strmap.h"

int sch_is_integral(const json_t *v)
{
    if (json_is_integer(v))
        return 1;
    if (json_is_real(v)) {
        double d = json_real_value(v);
        return isfinite(d) && d == floor(d);
    }
    return 0;
}

double sch_num(const json_t *v)
{
    return json_is_integer(v) ? (double)json_integer_value(v) : json_real_value(v);
}

/* -1, 0, 1 comparing two numbers; exact between two integers. */
int sch_num_cmp(const json_t *a, const json_t *b)
{
    if (json_is_integer(a) && json_is_integer(b)) {
        json_int_t x = json_integer_value(a), y = json_integer_value(b);
        return x < y ? -1 : x > y;
    }
    double x = sch_num(a), y = sch_num(b);
    return x < y ? -1 : x > y;
}

/* Deep equality as JSON Schema means it: 1 equals 1.0; key order does not matter. */
int sch_json_same(const json_t *a, const json_t *b)
{
    if (json_is_number(a) && json_is_number(b))
        return sch_num_cmp(a, b) == 0;
    if (json_typeof(a) != json_typeof(b))
        return 0;
    switch (json_typeof(a)) {
    case JSON_STRING:
        return json_string_length(a) == json_string_length(b) &&
               memcmp(json_string_value(a), json_string_value(b), json_string_length(a)) == 0;
    case JSON_ARRAY: {
        size_t n = json_array_size(a);
        if (n != json_array_size(b))
            return 0;
        for (size_t i = 0; i < n; i++)
            if (!sch_json_same(json_array_get(a, i), json_array_get(b, i)))
                return 0;
        return 1;
    }
    case JSON_OBJECT: {
        if (json_object_size(a) != json_object_size(b))
            return 0;
        const char *k;
        size_t kl;
        json_t *v;
        json_object_keylen_foreach((json_t *)a, k, kl, v)
        {
            json_t *w = json_object_getn(b, k, kl);
            if (!w || !sch_json_same(v, w))
                return 0;
        }
        return 1;
    }
    default:
        return 1; /* true, false, null */
    }
}

/* A hash consistent with json_same. */
uint64_t sch_json_hash(const json_t *v)
{
    uint64_t h = 1469598103934665603ULL;
#define MIX(x) (h = (h ^ (uint64_t)(x)) * 1099511628211ULL)
    switch (json_typeof(v)) {
    case JSON_INTEGER:
    case JSON_REAL: {
        double d = sch_num(v);
        if (d == 0)
            d = 0; /* -0 */
        uint64_t bits;
        memcpy(&bits, &d, sizeof bits);
        MIX(bits);
        MIX(7);
        break;
    }
    case JSON_STRING: {
        const unsigned char *s = (const unsigned char *)json_string_value(v);
        for (size_t i = 0, n = json_string_length(v); i < n; i++)
            MIX(s[i]);
        MIX(3);
        break;
    }
    case JSON_ARRAY:
        for (size_t i = 0, n = json_array_size(v); i < n; i++)
            MIX(sch_json_hash(json_array_get(v, i)));
        MIX(5);
        break;
    case JSON_OBJECT: {
        /* order-independent: sum of per-member hashes */
        uint64_t sum = 0;
        const char *k;
        size_t kl;
        json_t *x;
        json_object_keylen_foreach((json_t *)v, k, kl, x)
        {
            sum += lg_strmap_hash(k, kl) * 31 + sch_json_hash(x);
        }
        MIX(sum);
        MIX(9);
        break;
    }
    default:
        MIX(json_typeof(v) + 11);
    }
#undef MIX
    return h;
}

/* A short rendering of a value for messages: bounded however large the value is. */
typedef struct {
    char *buf;
    size_t cap, len;
} sbuf;

static void sb_put(sbuf *b, const char *s, size_t n)
{
    for (size_t i = 0; i < n && b->len + 1 < b->cap; i++)
        b->buf[b->len++] = s[i];
    b->buf[b->len < b->cap ? b->len : b->cap - 1] = '\0';
}

static void render(sbuf *b, const json_t *v, int depth)
{
    char tmp[64];
    if (b->len + 1 >= b->cap)
        return;
    switch (json_typeof(v)) {
    case JSON_NULL:
        sb_put(b, "null", 4);
        break;
    case JSON_TRUE:
        sb_put(b, "true", 4);
        break;
    case JSON_FALSE:
        sb_put(b, "false", 5);
        break;
    case JSON_INTEGER:
        snprintf(tmp, sizeof tmp, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
        sb_put(b, tmp, strlen(tmp));
        break;
    case JSON_REAL:
        snprintf(tmp, sizeof tmp, "%.17g", json_real_value(v));
        sb_put(b, tmp, strlen(tmp));
        break;
    case JSON_STRING: {
        sb_put(b, "\"", 1);
        const char *s = json_string_value(v);
        for (size_t i = 0, n = json_string_length(v); i < n && b->len + 1 < b->cap; i++) {
            unsigned char c = (unsigned char)s[i];
            if (c == '"' || c == '\\') {
                tmp[0] = '\\';
                tmp[1] = (char)c;
                sb_put(b, tmp, 2);
            } else if (c < 0x20) {
                snprintf(tmp, sizeof tmp, "\\u%04x", c);
                sb_put(b, tmp, 6);
            } else {
                sb_put(b, (const char *)&c, 1);
            }
        }
        sb_put(b, "\"", 1);
        break;
    }
    case JSON_ARRAY:
        if (depth > 3) {
            sb_put(b, "[...]", 5);
            break;
        }
        sb_put(b, "[", 1);
        for (size_t i = 0, n = json_array_size(v); i < n && b->len + 1 < b->cap; i++) {
            if (i)
                sb_put(b, ",", 1);
            render(b, json_array_get(v, i), depth + 1);
        }
        sb_put(b, "]", 1);
        break;
    case JSON_OBJECT: {
        if (depth > 3) {
            sb_put(b, "{...}", 5);
            break;
        }
        sb_put(b, "{", 1);
        const char *k;
        json_t *x;
        int first = 1;
        json_object_foreach((json_t *)v, k, x)
        {
            if (b->len + 1 >= b->cap)
                break;
            if (!first)
                sb_put(b, ",", 1);
            first = 0;
            json_t *ks = json_string(k);
            if (ks) {
                render(b, ks, depth + 1);
                json_decref(ks);
            }
            sb_put(b, ":", 1);
            render(b, x, depth + 1);
        }
        sb_put(b, "}", 1);
        break;
    }
    }
}

/* Render v into buf, shortened with "..." when longer than max characters. */
const char *sch_show(const json_t *v, char *buf, size_t n)
{
    sbuf b = {buf, n, 0};
    buf[0] = '\0';
    render(&b, v, 0);
    if (b.len + 1 >= n && n > 4)
        memcpy(buf + n - 4, "...", 4);
    return buf;
}
