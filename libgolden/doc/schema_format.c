/* The formats `format` asserts under --format-assert (golden_schema_load_options): date-time,
 * date, time, duration, email, hostname, ipv4, ipv6, uri, uri-reference, uuid, regex, json-pointer. */
#include "doc/schema_internal.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

enum { F_DATETIME = 1, F_DATE, F_TIME, F_DURATION, F_EMAIL, F_HOSTNAME, F_IPV4, F_IPV6, F_URI,
       F_URIREF, F_UUID, F_REGEX, F_JSONPTR };

static const char *const names[] = {NULL, "date-time", "date", "time", "duration", "email",
                                    "hostname", "ipv4", "ipv6", "uri", "uri-reference", "uuid",
                                    "regex", "json-pointer"};

int sch_format_id(const char *name)
{
    for (int i = 1; i <= F_JSONPTR; i++)
        if (!strcmp(name, names[i]))
            return i;
    return 0;
}

/* n digits at s, their value in *v */
static int digits(const char *s, size_t n, int *v)
{
    *v = 0;
    for (size_t i = 0; i < n; i++) {
        if (!isdigit((unsigned char)s[i]))
            return 0;
        *v = *v * 10 + (s[i] - '0');
    }
    return 1;
}

/* RFC 3339 full-date */
static int is_date(const char *s, size_t n)
{
    int y, m, d;
    if (n != 10 || s[4] != '-' || s[7] != '-' || !digits(s, 4, &y) || !digits(s + 5, 2, &m) ||
        !digits(s + 8, 2, &d) || m < 1 || m > 12 || d < 1)
        return 0;
    static const int mdays[] = {31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    int leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    return d <= (m == 2 ? (leap ? 29 : 28) : mdays[m - 1]);
}

/* RFC 3339 full-time: hh:mm:ss[.frac](Z|+hh:mm); a leap second only at 23:59:60 UTC. */
static int is_time(const char *s, size_t n)
{
    int h, m, sec, oh = 0, om = 0;
    if (n < 9 || s[2] != ':' || s[5] != ':' || !digits(s, 2, &h) || !digits(s + 3, 2, &m) ||
        !digits(s + 6, 2, &sec))
        return 0;
    size_t i = 8;
    if (i < n && s[i] == '.') {
        size_t j = ++i;
        while (i < n && isdigit((unsigned char)s[i]))
            i++;
        if (i == j)
            return 0;
    }
    int sign = 0;
    if (i < n && (s[i] == 'Z' || s[i] == 'z'))
        i++;
    else if (i + 6 == n && (s[i] == '+' || s[i] == '-') && s[i + 3] == ':' &&
             digits(s + i + 1, 2, &oh) && digits(s + i + 4, 2, &om)) {
        sign = s[i] == '+' ? 1 : -1;
        i += 6;
    } else
        return 0;
    if (i != n || h > 23 || m > 59 || sec > 60 || oh > 23 || om > 59)
        return 0;
    if (sec == 60) { /* the leap second, in UTC */
        int utc = (h * 60 + m - sign * (oh * 60 + om) + 2 * 1440) % 1440;
        return utc == 23 * 60 + 59;
    }
    return 1;
}

static int is_datetime(const char *s, size_t n)
{
    return n > 11 && (s[10] == 'T' || s[10] == 't') && is_date(s, 10) && is_time(s + 11, n - 11);
}

/* RFC 3339 appendix A duration: PnW, or P date-part [T time-part] where the parts run on
 * without gaps (Y[M[D]], M[D], D; H[M[S]], M[S], S). */
static int is_duration(const char *s, size_t n)
{
    if (n < 3 || s[0] != 'P')
        return 0;
    size_t i = 1;
    if (s[n - 1] == 'W') {
        for (i = 1; i < n - 1; i++)
            if (!isdigit((unsigned char)s[i]))
                return 0;
        return 1;
    }
    int in_t = 0;
    char last = 0; /* the previous designator of this part, 0 none */
    while (i < n) {
        if (s[i] == 'T') {
            if (in_t || i + 1 == n)
                return 0;
            in_t = 1, last = 0, i++;
            continue;
        }
        size_t j = i;
        while (i < n && isdigit((unsigned char)s[i]))
            i++;
        if (i == j || i == n)
            return 0;
        const char *ord = in_t ? "HMS" : "YMD";
        const char *p = strchr(ord, s[i]);
        if (!p)
            return 0;
        if (last && (!strchr(ord, last) || strchr(ord, last) + 1 != p))
            return 0; /* a gap (Y then D) or out of order */
        last = s[i++];
    }
    return 1;
}

static int is_ipv4(const char *s, size_t n)
{
    int parts = 0;
    size_t i = 0;
    while (parts < 4) {
        size_t j = i;
        int v = 0;
        while (i < n && isdigit((unsigned char)s[i]) && i - j < 4)
            v = v * 10 + (s[i++] - '0');
        if (i == j || i - j > 3 || v > 255 || (s[j] == '0' && i - j > 1))
            return 0;
        parts++;
        if (parts < 4) {
            if (i >= n || s[i] != '.')
                return 0;
            i++;
        }
    }
    return i == n;
}

static int is_ipv6(const char *s, size_t n)
{
    int groups = 0, dcolon = 0;
    size_t i = 0;
    if (n < 2)
        return 0;
    if (s[0] == ':') {
        if (s[1] != ':')
            return 0;
        dcolon = 1, i = 2;
        if (i == n)
            return 1;
    }
    while (i < n) {
        size_t j = i;
        while (i < n && isxdigit((unsigned char)s[i]) && i - j < 5)
            i++;
        if (i < n && s[i] == '.') { /* an embedded IPv4 address ends it */
            if (!is_ipv4(s + j, n - j))
                return 0;
            groups += 2;
            i = n;
            break;
        }
        if (i == j || i - j > 4)
            return 0;
        groups++;
        if (i == n)
            break;
        if (s[i] != ':')
            return 0;
        i++;
        if (i < n && s[i] == ':') {
            if (dcolon)
                return 0;
            dcolon = 1, i++;
            if (i == n)
                break;
        } else if (i == n)
            return 0;
    }
    return dcolon ? groups < 8 : groups == 8;
}

static int is_label_char(char c)
{
    return isalnum((unsigned char)c) || c == '-';
}

/* RFC 1123 host name (ASCII): labels of 1..63 letters, digits and hyphens, not starting or
 * ending with a hyphen, at most 253 characters. */
static int is_hostname(const char *s, size_t n)
{
    if (n == 0 || n > 253)
        return 0;
    size_t i = 0;
    while (i <= n) {
        size_t j = i;
        while (i < n && s[i] != '.')
            if (!is_label_char(s[i++]))
                return 0;
        if (i == j || i - j > 63 || s[j] == '-' || s[i - 1] == '-')
            return 0;
        if (i - j >= 4 && s[j + 2] == '-' && s[j + 3] == '-' && strncasecmp(s + j, "xn", 2))
            return 0; /* "--" in positions 3-4 is reserved for A-labels */
        i++;
    }
    return 1;
}

/* RFC 5321 mailbox: local part (dot-atom or quoted string) @ domain (host name or [IP]) */
static int is_email(const char *s, size_t n)
{
    const char *at = NULL;
    if (n && s[0] == '"') {
        size_t i = 1;
        while (i < n && s[i] != '"')
            i += s[i] == '\\' ? 2 : 1;
        if (i >= n || i + 1 >= n || s[i + 1] != '@')
            return 0;
        at = s + i + 1;
    } else {
        at = memrchr(s, '@', n);
        if (!at || at == s || s[0] == '.' || at[-1] == '.')
            return 0;
        for (const char *p = s; p < at; p++) {
            if (*p == '.' && p[1] == '.')
                return 0;
            if (!isalnum((unsigned char)*p) && !strchr("!#$%&'*+-/=?^_`{|}~.", *p))
                return 0;
        }
    }
    const char *d = at + 1;
    size_t dn = (size_t)(s + n - d);
    if (dn > 2 && d[0] == '[' && d[dn - 1] == ']') {
        if (dn > 7 && !strncasecmp(d + 1, "IPv6:", 5))
            return is_ipv6(d + 6, dn - 7);
        return is_ipv4(d + 1, dn - 2);
    }
    return is_hostname(d, dn);
}

static int is_uuid(const char *s, size_t n)
{
    if (n != 36)
        return 0;
    for (size_t i = 0; i < n; i++) {
        int dash = i == 8 || i == 13 || i == 18 || i == 23;
        if (dash ? s[i] != '-' : !isxdigit((unsigned char)s[i]))
            return 0;
    }
    return 1;
}

static int is_jsonptr(const char *s, size_t n)
{
    if (n && s[0] != '/')
        return 0;
    for (size_t i = 0; i < n; i++)
        if (s[i] == '~' && (i + 1 >= n || (s[i + 1] != '0' && s[i + 1] != '1')))
            return 0;
    return 1;
}

/* RFC 3986 characters of a path, query or fragment (plus %XX, checked by the caller). */
static int uri_char(unsigned char c)
{
    return isalnum(c) || strchr("-._~!$&'()*+,;=:@/?%", c);
}

static int pct_ok(const char *s, size_t n, size_t i)
{
    return s[i] != '%' ||
           (i + 2 < n && isxdigit((unsigned char)s[i + 1]) && isxdigit((unsigned char)s[i + 2]));
}

/* authority = [userinfo "@"] host [":" port]; host a reg-name, IPv4, or [IPv6] */
static int authority_ok(const char *h, size_t n)
{
    const char *at = memchr(h, '@', n);
    if (at) {
        size_t ul = (size_t)(at - h);
        if (memchr(at + 1, '@', n - ul - 1))
            return 0;
        for (size_t i = 0; i < ul; i++)
            if (!pct_ok(h, ul, i) || !(uri_char((unsigned char)h[i]) && h[i] != '/' && h[i] != '?' && h[i] != '@'))
                return 0;
        n -= ul + 1;
        h = at + 1;
    }
    const char *port = NULL;
    if (n && h[0] == '[') {
        const char *rb = memchr(h, ']', n);
        if (!rb || !is_ipv6(h + 1, (size_t)(rb - h - 1)))
            return 0;
        if (rb + 1 < h + n) {
            if (rb[1] != ':')
                return 0;
            port = rb + 2;
        }
    } else {
        const char *colon = memchr(h, ':', n);
        size_t hl = colon ? (size_t)(colon - h) : n;
        for (size_t i = 0; i < hl; i++)
            if (!pct_ok(h, hl, i) || !(isalnum((unsigned char)h[i]) || strchr("-._~!$&'()*+,;=%", h[i])))
                return 0;
        if (colon)
            port = colon + 1;
    }
    for (const char *p = port; p && p < h + n; p++)
        if (!isdigit((unsigned char)*p))
            return 0;
    return 1;
}

/* RFC 3986 URI (absolute: a scheme) or URI-reference. */
static int is_uri(const char *s, size_t n, int absolute)
{
    size_t i = 0;
    while (i < n && (isalnum((unsigned char)s[i]) || strchr("+-.", s[i])))
        i++;
    int has_scheme = i > 0 && i < n && s[i] == ':' && isalpha((unsigned char)s[0]);
    if (absolute && !has_scheme)
        return 0;
    size_t p = has_scheme ? i + 1 : 0;
    if (n - p >= 2 && s[p] == '/' && s[p + 1] == '/') {
        size_t a = p + 2, e = a;
        while (e < n && s[e] != '/' && s[e] != '?' && s[e] != '#')
            e++;
        if (!authority_ok(s + a, e - a))
            return 0;
        p = e;
    } else if (!has_scheme) {
        /* a relative-path reference: no ':' in its first segment */
        size_t e = p;
        while (e < n && s[e] != '/' && s[e] != '?' && s[e] != '#')
            if (s[e++] == ':')
                return 0;
    }
    int hash = 0;
    for (; p < n; p++) {
        unsigned char c = (unsigned char)s[p];
        if (!pct_ok(s, n, p))
            return 0;
        if (c == '#') {
            if (hash)
                return 0;
            hash = 1;
            continue;
        }
        if (!uri_char(c))
            return 0;
    }
    return 1;
}

static int is_regex(const char *s, size_t n)
{
    char *z = strndup(s, n);
    if (!z)
        return 1; /* cannot decide without memory: annotations never fail a document */
    pattern_t p;
    const char *why;
    int rc = sch_compile_regex(&p, z, &why);
    free(z);
    if (rc == 0)
        sch_pattern_free(&p);
    return rc != -1;
}

int sch_format_ok(int id, const char *s, size_t n)
{
    switch (id) {
    case F_DATETIME: return is_datetime(s, n);
    case F_DATE: return is_date(s, n);
    case F_TIME: return is_time(s, n);
    case F_DURATION: return is_duration(s, n);
    case F_EMAIL: return is_email(s, n);
    case F_HOSTNAME: return is_hostname(s, n);
    case F_IPV4: return is_ipv4(s, n);
    case F_IPV6: return is_ipv6(s, n);
    case F_URI: return is_uri(s, n, 1);
    case F_URIREF: return is_uri(s, n, 0);
    case F_UUID: return is_uuid(s, n);
    case F_REGEX: return is_regex(s, n);
    case F_JSONPTR: return is_jsonptr(s, n);
    default: return 1;
    }
}
