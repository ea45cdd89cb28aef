/* Reading values the same way in every rule: scalars as whole text (any length), and one
 * accessor for integer-valued numbers (65536.0 is 65536; 2^63 is a finding, never a default). */
#include "exp/internal.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *exp_sget(const json_t *o, const char *key)
{
    return json_string_value(json_object_get(o, key));
}

/* A scalar's text, so that YAML's 0.7 (a number) equals JSON's "0.7". Strings are returned in
 * place and whole (any length, NUL bytes included); numbers and booleans are printed into small. */
static bool scalar_text(const json_t *v, char small[64], const char **text, size_t *len)
{
    if (json_is_string(v)) {
        *text = json_string_value(v);
        *len = json_string_length(v);
        return true;
    }
    if (json_is_integer(v))
        snprintf(small, 64, "%lld", (long long)json_integer_value(v));
    else if (json_is_real(v))
        snprintf(small, 64, "%.17g", json_real_value(v));
    else if (json_is_true(v))
        snprintf(small, 64, "true");
    else if (json_is_false(v))
        snprintf(small, 64, "false");
    else
        return false;
    /* a whole number written as a real (65536.0) reads as the integer it stands for */
    if (json_is_real(v)) {
        double x = json_real_value(v);
        if (x == floor(x) && fabs(x) < 9007199254740992.0)
            snprintf(small, 64, "%lld", (long long)x);
    }
    *text = small;
    *len = strlen(small);
    return true;
}

/* Whole values compared, at any length: scalars by their text, the rest structurally. */
bool exp_value_eq(const json_t *a, const json_t *b)
{
    char sa[64], sb[64];
    const char *ta, *tb;
    size_t la, lb;
    if (scalar_text(a, sa, &ta, &la) && scalar_text(b, sb, &tb, &lb))
        return la == lb && memcmp(ta, tb, la) == 0;
    return a && b && json_equal((json_t *)a, (json_t *)b);
}

void exp_value_show(const json_t *v, char *buf, size_t n)
{
    char small[64];
    const char *t;
    size_t len;
    if (!v)
        snprintf(buf, n, "(absent)");
    else if (!scalar_text(v, small, &t, &len))
        snprintf(buf, n, "(%s)", json_is_object(v) ? "object" : json_is_array(v) ? "array" : "null");
    else if (len + 1 > n && n > 16)
        snprintf(buf, n, "%.*s...(%zu bytes)", (int)(n - 16), t, len);
    else
        snprintf(buf, n, "%.*s", (int)len, t);
}

/* The one reader of "an integer-valued number" every rule uses: a JSON integer, or a real that
 * is a whole number inside int64 (65536.0, 1e6 are read as the integers they are). 1 = *out set;
 * 0 = absent or not a number (the schema reports that); 2 = a number that is no integer in
 * range (0.5, 9223372036854775808, 1e300): a finding of `rule` at ptr was added; -1 = error. */
int exp_int_at(vctx *c, const golden_doc *d, const json_t *v, const char *ptr,
                  const char *rule, long long *out)
{
    if (json_is_integer(v)) {
        *out = (long long)json_integer_value(v);
        return 1;
    }
    if (!json_is_real(v))
        return 0;
    double x = json_real_value(v);
    /* -2^63 is exact in a double; 2^63 is the first value past the range */
    if (x == floor(x) && x >= -9223372036854775808.0 && x < 9223372036854775808.0) {
        *out = (long long)x;
        return 1;
    }
    return exp_add_node(c, GOLDEN_SEV_ERROR, rule, d, ptr,
                    "%s is %.17g, not an integer between -2^63 and 2^63-1", ptr, x) ? -1 : 2;
}

/* int_at for obj[key], the pointer built from base + key. */
int exp_int_key(vctx *c, const golden_doc *d, const json_t *obj, const char *base,
                   const char *key, const char *rule, long long *out)
{
    /* the pointer is built only when a finding needs it (a real that is not an integer): 18
     * snprintf + escapes a raw request line were 10 % of exp-gate decide (issue 26) */
    const json_t *v = json_object_get(obj, key);
    if (json_is_integer(v) || !json_is_real(v))
        return exp_int_at(c, d, v, NULL, rule, out);
    char p[512];
    snprintf(p, sizeof p, "%s", base);
    exp_ptr_push(p, sizeof p, key);
    return exp_int_at(c, d, v, p, rule, out);
}
