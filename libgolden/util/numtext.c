/* Numbers in text: the shortest round-trip form of a double in the C locale, and a bounded
 * integer inside a longer string, through the strict parser of golden/parse.h. */
#include "util/numtext.h"

#include <locale.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Run snprintf and strtod under the C locale on this thread only (uselocale), so a program's
 * decimal comma never reaches a number the library prints or reads back. */
typedef struct {
    locale_t c, old;
} c_locale;

static void c_enter(c_locale *l)
{
    l->c = newlocale(LC_ALL_MASK, "C", (locale_t)0);
    l->old = l->c ? uselocale(l->c) : (locale_t)0;
}

static void c_leave(c_locale *l)
{
    if (l->c) {
        uselocale(l->old);
        freelocale(l->c);
    }
}

int lg_num_shortest(double x, int min_prec, char *buf, size_t n)
{
    c_locale l;
    c_enter(&l);
    int p = min_prec < 1 ? 1 : min_prec > 17 ? 17 : min_prec;
    for (; p < 17; p++) {
        snprintf(buf, n, "%.*g", p, x);
        if (isfinite(x) && strtod(buf, NULL) == x)
            break;
    }
    if (p == 17)
        snprintf(buf, n, "%.17g", x);
    c_leave(&l);
    return p;
}

double lg_num_read(const char *s)
{
    c_locale l;
    c_enter(&l);
    char *end;
    double v = strtod(s, &end);
    c_leave(&l);
    return end == s ? NAN : v;
}

int lg_num_digits(double x, int *exp10)
{
    c_locale l;
    c_enter(&l);
    char buf[64];
    int p = 1;
    for (; p < 17; p++) {
        snprintf(buf, sizeof buf, "%.*e", p - 1, x);
        if (strtod(buf, NULL) == x)
            break;
    }
    snprintf(buf, sizeof buf, "%.*e", p - 1, x);
    c_leave(&l);
    /* the exponent after 'e': [+-]digits, read by the strict parser */
    const char *e = strchr(buf, 'e');
    int64_t ex = 0;
    if (e && golden_parse_int(e[1] == '+' ? e + 2 : e + 1, -400, 400, &ex) != GOLDEN_PARSE_OK)
        ex = 0;
    *exp10 = (int)ex;
    return p;
}

golden_parse_status lg_parse_int_n(const char *s, size_t len, int64_t lo, int64_t hi,
                                   int64_t *out)
{
    char buf[32];
    if (len == 0)
        return GOLDEN_PARSE_EMPTY;
    if (len >= sizeof buf)
        return GOLDEN_PARSE_OVERFLOW; /* 31 digits and more fit no int64_t */
    memcpy(buf, s, len);
    buf[len] = '\0';
    return golden_parse_int(buf, lo, hi, out);
}

size_t lg_digits_len(const char *s)
{
    size_t n = 0;
    while (s[n] >= '0' && s[n] <= '9')
        n++;
    return n;
}
