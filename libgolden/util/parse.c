/* Strict, locale-independent, overflow-checked number parsing (golden/parse.h). The grammar is
 * checked here byte by byte first; only a string that passed is converted, so the C library
 * never sees white space, hex, "inf" or a locale's decimal comma. */
#include "golden/parse.h"

#include <errno.h>
#include <locale.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

const char *golden_parse_reason(golden_parse_status st)
{
    switch (st) {
    case GOLDEN_PARSE_OK: return "fine";
    case GOLDEN_PARSE_EMPTY: return "empty";
    case GOLDEN_PARSE_SYNTAX: return "not a number of that kind";
    case GOLDEN_PARSE_TRAILING: return "trailing characters";
    case GOLDEN_PARSE_OVERFLOW: return "does not fit the type";
    case GOLDEN_PARSE_RANGE: return "out of range";
    case GOLDEN_PARSE_UNIT: return "unknown unit";
    case GOLDEN_PARSE_NOMEM: return "out of memory";
    }
    return "invalid";
}

static bool digit(char c) { return c >= '0' && c <= '9'; }

/* Digits at s into *v (no sign); *end after them. SYNTAX when there are none, OVERFLOW past
 * UINT64_MAX (all digits are still consumed, so "9...9x" is OVERFLOW, not TRAILING). */
static golden_parse_status digits_u64(const char *s, const char **end, uint64_t *v)
{
    uint64_t x = 0;
    bool over = false;
    const char *p = s;
    for (; digit(*p); p++) {
        unsigned d = (unsigned)(*p - '0');
        if (x > (UINT64_MAX - d) / 10)
            over = true;
        else
            x = x * 10 + d;
    }
    *end = p;
    if (p == s)
        return GOLDEN_PARSE_SYNTAX;
    *v = x;
    return over ? GOLDEN_PARSE_OVERFLOW : GOLDEN_PARSE_OK;
}

golden_parse_status golden_parse_uint(const char *s, uint64_t lo, uint64_t hi, uint64_t *out)
{
    if (!s || !*s)
        return GOLDEN_PARSE_EMPTY;
    const char *p = s;
    if (*p == '+')
        p++;
    uint64_t v = 0;
    const char *end;
    golden_parse_status st = digits_u64(p, &end, &v);
    if (st == GOLDEN_PARSE_OK && *end)
        st = GOLDEN_PARSE_TRAILING;
    if (st == GOLDEN_PARSE_OK && (v < lo || v > hi))
        st = GOLDEN_PARSE_RANGE;
    if (st == GOLDEN_PARSE_OK)
        *out = v;
    return st;
}

golden_parse_status golden_parse_int(const char *s, int64_t lo, int64_t hi, int64_t *out)
{
    if (!s || !*s)
        return GOLDEN_PARSE_EMPTY;
    const char *p = s;
    bool neg = *p == '-';
    if (*p == '-' || *p == '+')
        p++;
    uint64_t v = 0;
    const char *end;
    golden_parse_status st = digits_u64(p, &end, &v);
    if (st == GOLDEN_PARSE_OK && *end)
        st = GOLDEN_PARSE_TRAILING;
    uint64_t limit = neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;
    if (st == GOLDEN_PARSE_OK && v > limit)
        st = GOLDEN_PARSE_OVERFLOW;
    if (st != GOLDEN_PARSE_OK)
        return st;
    int64_t x = neg ? (v == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)v) : (int64_t)v;
    if (x < lo || x > hi)
        return GOLDEN_PARSE_RANGE;
    *out = x;
    return GOLDEN_PARSE_OK;
}

/* The length of the real at s ([+-]digits[.digits][e[+-]digits]), 0 when none; *nonzero
 * when a mantissa digit is not 0 (so an underflow to 0 can be told from "0e5"). */
static size_t real_span(const char *s, bool *nonzero)
{
    const char *p = s;
    *nonzero = false;
    if (*p == '+' || *p == '-')
        p++;
    if (!digit(*p))
        return 0;
    for (; digit(*p); p++)
        *nonzero |= *p != '0';
    if (*p == '.') {
        if (!digit(p[1]))
            return 0;
        for (p++; digit(*p); p++)
            *nonzero |= *p != '0';
    }
    if ((*p == 'e' || *p == 'E') &&
        (digit(p[1]) || ((p[1] == '+' || p[1] == '-') && digit(p[2])))) {
        p += p[1] == '+' || p[1] == '-' ? 2 : 1;
        while (digit(*p))
            p++;
    }
    return (size_t)(p - s);
}

/* Convert the first n bytes of s (already checked by real_span) in the C locale. */
static golden_parse_status convert_real(const char *s, size_t n, bool nonzero, double *out)
{
    char buf[128];
    char *heap = NULL, *text = buf;
    if (n >= sizeof buf) {
        if (!(heap = malloc(n + 1)))
            return GOLDEN_PARSE_NOMEM;
        text = heap;
    }
    memcpy(text, s, n);
    text[n] = '\0';
    /* per call, so the library keeps no process-wide locale (options are parsed rarely) */
    locale_t c = newlocale(LC_ALL_MASK, "C", (locale_t)0);
    if (!c) {
        free(heap);
        return GOLDEN_PARSE_NOMEM;
    }
    errno = 0;
    char *end;
    double v = strtod_l(text, &end, c);
    int e = errno;
    freelocale(c);
    bool whole = end == text + n;
    free(heap);
    if (!whole)
        return GOLDEN_PARSE_SYNTAX;
    if (!isfinite(v) || (e == ERANGE && (v == 0 || fabs(v) > 1)) || (nonzero && v == 0))
        return GOLDEN_PARSE_OVERFLOW;
    *out = v;
    return GOLDEN_PARSE_OK;
}

/* A real at the start of s: *rest after it. */
static golden_parse_status real_prefix(const char *s, const char **rest, double *out)
{
    bool nonzero;
    size_t n = real_span(s, &nonzero);
    if (n == 0)
        return GOLDEN_PARSE_SYNTAX;
    *rest = s + n;
    return convert_real(s, n, nonzero, out);
}

golden_parse_status golden_parse_real(const char *s, double lo, double hi, double *out)
{
    if (!s || !*s)
        return GOLDEN_PARSE_EMPTY;
    const char *rest;
    double v;
    golden_parse_status st = real_prefix(s, &rest, &v);
    if (st == GOLDEN_PARSE_OK && *rest)
        st = GOLDEN_PARSE_TRAILING;
    if (st == GOLDEN_PARSE_OK && !(v >= lo && v <= hi))
        st = GOLDEN_PARSE_RANGE;
    if (st == GOLDEN_PARSE_OK)
        *out = v;
    return st;
}

golden_parse_status golden_parse_size(const char *s, uint64_t bare_unit, uint64_t lo, uint64_t hi,
                                      uint64_t *bytes)
{
    static const struct {
        const char *name;
        unsigned shift;
    } units[] = {{"B", 0},   {"K", 10},  {"KiB", 10}, {"M", 20},  {"MiB", 20},
                 {"G", 30},  {"GiB", 30}, {"T", 40},  {"TiB", 40}};
    if (!s || !*s)
        return GOLDEN_PARSE_EMPTY;
    const char *p = s, *end;
    if (*p == '+')
        p++;
    uint64_t v = 0;
    golden_parse_status st = digits_u64(p, &end, &v);
    if (st != GOLDEN_PARSE_OK)
        return st;
    uint64_t unit = bare_unit ? bare_unit : 1;
    if (*end) {
        size_t k = 0, nu = sizeof units / sizeof *units;
        while (k < nu && strcmp(end, units[k].name) != 0)
            k++;
        if (k == nu)
            return *end == '.' || digit(*end) ? GOLDEN_PARSE_TRAILING : GOLDEN_PARSE_UNIT;
        unit = (uint64_t)1 << units[k].shift;
    }
    if (v && unit > UINT64_MAX / v)
        return GOLDEN_PARSE_OVERFLOW;
    v *= unit;
    if (v < lo || v > hi)
        return GOLDEN_PARSE_RANGE;
    *bytes = v;
    return GOLDEN_PARSE_OK;
}

golden_parse_status golden_parse_duration(const char *s, double bare_unit, double lo, double hi,
                                          double *seconds)
{
    static const struct {
        const char *name;
        double scale;
    } units[] = {{"ns", 1e-9}, {"us", 1e-6}, {"ms", 1e-3}, {"s", 1}, {"min", 60}, {"h", 3600}};
    if (!s || !*s)
        return GOLDEN_PARSE_EMPTY;
    const char *rest;
    double v;
    golden_parse_status st = real_prefix(s, &rest, &v);
    if (st != GOLDEN_PARSE_OK)
        return st;
    double scale = bare_unit > 0 ? bare_unit : 1;
    if (*rest) {
        size_t k = 0, nu = sizeof units / sizeof *units;
        while (k < nu && strcmp(rest, units[k].name) != 0)
            k++;
        if (k == nu)
            return GOLDEN_PARSE_UNIT;
        scale = units[k].scale;
    }
    v *= scale;
    if (!isfinite(v))
        return GOLDEN_PARSE_OVERFLOW;
    if (!(v >= lo && v <= hi))
        return GOLDEN_PARSE_RANGE;
    *seconds = v;
    return GOLDEN_PARSE_OK;
}
