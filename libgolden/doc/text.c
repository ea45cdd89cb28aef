/* Text rules both readers share: UTF-8 validity, no NUL bytes, and exact number parsing
 * independent of the process locale. */
#include "doc/internal.h"

#include <errno.h>
#include <fcntl.h>
#include <locale.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---------------------------------------------------------------- UTF-8 */

/* Length of the valid UTF-8 sequence at p (RFC 3629: no overlongs, no surrogates, at most
 * U+10FFFF), or 0 when invalid. */
size_t doc_utf8_len(const unsigned char *p, const unsigned char *end)
{
    unsigned c = p[0];
    if (c < 0x80)
        return 1;
    size_t n = (size_t)(end - p);
    if (c >= 0xC2 && c <= 0xDF)
        return n >= 2 && (p[1] & 0xC0) == 0x80 ? 2 : 0;
    if (c >= 0xE0 && c <= 0xEF) {
        if (n < 3 || (p[1] & 0xC0) != 0x80 || (p[2] & 0xC0) != 0x80)
            return 0;
        if (c == 0xE0 && p[1] < 0xA0)
            return 0;
        if (c == 0xED && p[1] >= 0xA0)
            return 0;
        return 3;
    }
    if (c >= 0xF0 && c <= 0xF4) {
        if (n < 4 || (p[1] & 0xC0) != 0x80 || (p[2] & 0xC0) != 0x80 || (p[3] & 0xC0) != 0x80)
            return 0;
        if (c == 0xF0 && p[1] < 0x90)
            return 0;
        if (c == 0xF4 && p[1] >= 0x90)
            return 0;
        return 4;
    }
    return 0;
}

/* Reject NUL bytes and invalid UTF-8 anywhere, naming line:col (columns count characters). */
int doc_check_text(const char *name, const unsigned char *p, size_t len, size_t first_line,
                      golden_error *err)
{
    const unsigned char *end = p + len;
    size_t line = first_line, col = 1;
    while (p < end) {
        unsigned c = *p;
        if (c == 0)
            return golden_fail_where(err, GOLDEN_EINVAL, "NUL byte in a text document", "%s:%zu:%zu", name, line,
                                     col);
        if (c < 0x80) {
            p++;
            if (c == '\n') {
                line++;
                col = 1;
            } else {
                col++;
            }
            continue;
        }
        size_t n = doc_utf8_len(p, end);
        if (!n)
            return golden_fail_where(err, GOLDEN_EINVAL, "invalid UTF-8", "%s:%zu:%zu", name, line, col);
        p += n;
        col++;
    }
    return GOLDEN_OK;
}

/* ---------------------------------------------------------------- numbers */

static locale_t c_locale;
static pthread_once_t c_locale_once = PTHREAD_ONCE_INIT;

static void make_c_locale(void)
{
    c_locale = newlocale(LC_ALL_MASK, "C", (locale_t)0);
}

/* strtod that ignores the process locale (a "," decimal point must not change documents). */
static double c_strtod(const char *s, char **end)
{
    pthread_once(&c_locale_once, make_c_locale);
    if (c_locale)
        return strtod_l(s, end, c_locale);
    return strtod(s, end);
}

/* Digits (optionally signed) that fit int64. */
int doc_parse_int64(const char *s, size_t len, json_int_t *out)
{
    size_t i = 0;
    int neg = 0;
    if (i < len && (s[i] == '-' || s[i] == '+')) {
        neg = s[i] == '-';
        i++;
    }
    if (i == len)
        return 0;
    uint64_t v = 0, limit = neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;
    for (; i < len; i++) {
        if (s[i] < '0' || s[i] > '9')
            return 0;
        unsigned dgt = (unsigned)(s[i] - '0');
        if (v > (limit - dgt) / 10)
            return 0;
        v = v * 10 + dgt;
    }
    *out = neg ? (json_int_t)(0 - v) : (json_int_t)v;
    return 1;
}

/* A finite double from a number token, or 0 when it overflows. */
int doc_parse_real(const char *s, size_t len, double *out)
{
    char small[128];
    char *buf = len < sizeof small ? small : malloc(len + 1);
    if (!buf)
        return -1;
    memcpy(buf, s, len);
    buf[len] = '\0';
    char *end;
    double v = c_strtod(buf, &end);
    int ok = end == buf + len && v - v == 0;
    if (buf != small)
        free(buf);
    if (!ok)
        return 0;
    *out = v;
    return 1;
}

int doc_failv(golden_error *err, golden_code code, const char *name, size_t line, size_t col,
              const char *fmt, va_list ap)
{
    char msg[sizeof err->what];
    vsnprintf(msg, sizeof msg, fmt, ap);
    return golden_fail_where(err, code, msg, "%s:%zu:%zu", name, line, col);
}
