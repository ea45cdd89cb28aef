/* A one-pass scanner for the usual raw-request line: it pulls the fields summarize needs without
 * building a tree. Anything unusual (escapes in keys, a wrong type, bad syntax) returns "not
 * handled" and the caller parses the line with jansson, which also words the error. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "gate/rawscan.h"

typedef struct {
    const char *p, *end;
} cur;

static void ws(cur *c)
{
    while (c->p < c->end && (*c->p == ' ' || *c->p == '\t' || *c->p == '\n' || *c->p == '\r'))
        c->p++;
}

static int lit(cur *c, char ch)
{
    ws(c);
    if (c->p < c->end && *c->p == ch) {
        c->p++;
        return 1;
    }
    return 0;
}

/* A string without escapes or control bytes (else 0: let jansson decide). */
static int str(cur *c, const char **s, size_t *n)
{
    ws(c);
    if (c->p >= c->end || *c->p != '"')
        return 0;
    const char *b = ++c->p;
    while (c->p < c->end && *c->p != '"') {
        unsigned char ch = (unsigned char)*c->p;
        if (ch == '\\' || ch < 0x20 || ch >= 0x80) /* escapes, UTF-8 checks: jansson's job */
            return 0;
        c->p++;
    }
    if (c->p >= c->end)
        return 0;
    *s = b;
    *n = (size_t)(c->p - b);
    c->p++;
    return 1;
}

/* A JSON number by the grammar; *is_int when it has no fraction or exponent. */
static int number(cur *c, double *v, long long *iv, int *is_int)
{
    ws(c);
    const char *b = c->p, *q = b;
    if (q < c->end && *q == '-')
        q++;
    if (q >= c->end || *q < '0' || *q > '9')
        return 0;
    if (*q == '0')
        q++;
    else
        while (q < c->end && *q >= '0' && *q <= '9')
            q++;
    *is_int = 1;
    if (q < c->end && *q == '.') {
        *is_int = 0;
        q++;
        if (q >= c->end || *q < '0' || *q > '9')
            return 0;
        while (q < c->end && *q >= '0' && *q <= '9')
            q++;
    }
    if (q < c->end && (*q == 'e' || *q == 'E')) {
        *is_int = 0;
        q++;
        if (q < c->end && (*q == '+' || *q == '-'))
            q++;
        if (q >= c->end || *q < '0' || *q > '9')
            return 0;
        while (q < c->end && *q >= '0' && *q <= '9')
            q++;
    }
    char buf[64];
    size_t n = (size_t)(q - b);
    if (n >= sizeof buf)
        return 0;
    memcpy(buf, b, n);
    buf[n] = 0;
    if (*is_int && n <= 18) { /* at most 18 digits: no overflow possible */
        const char *d = b;
        int neg = *d == '-';
        long long x = 0;
        for (d += neg; d < q; d++)
            x = x * 10 + (*d - '0');
        *iv = neg ? -x : x;
        *v = (double)*iv;
    } else if (*is_int) {
        /* jansson turns an integer that does not fit into an error: so do we (via fallback) */
        char *e;
        errno = 0;
        *iv = strtoll(buf, &e, 10);
        if (errno)
            return 0;
        *v = (double)*iv;
    } else {
        *v = strtod(buf, NULL);
        if (!isfinite(*v))
            return 0;
    }
    c->p = q;
    return 1;
}

static int word(cur *c, const char *w, size_t n)
{
    ws(c);
    if ((size_t)(c->end - c->p) >= n && !memcmp(c->p, w, n)) {
        c->p += n;
        return 1;
    }
    return 0;
}

static int skip_value(cur *c, int depth);

static int skip_container(cur *c, char close, int is_obj, int depth)
{
    if (lit(c, close))
        return 1;
    for (;;) {
        if (is_obj) {
            const char *s;
            size_t n;
            if (!str(c, &s, &n) || !lit(c, ':'))
                return 0;
        }
        if (!skip_value(c, depth + 1))
            return 0;
        if (lit(c, close))
            return 1;
        if (!lit(c, ','))
            return 0;
    }
}

static int skip_value(cur *c, int depth)
{
    if (depth > 32)
        return 0;
    ws(c);
    if (c->p >= c->end)
        return 0;
    const char *s;
    size_t n;
    double v;
    long long iv;
    int ii;
    switch (*c->p) {
    case '"': return str(c, &s, &n);
    case '{': c->p++; return skip_container(c, '}', 1, depth);
    case '[': c->p++; return skip_container(c, ']', 0, depth);
    case 't': return word(c, "true", 4);
    case 'f': return word(c, "false", 5);
    case 'n': return word(c, "null", 4);
    default: return number(c, &v, &iv, &ii);
    }
}

static int boolean(cur *c, int *b)
{
    if (word(c, "true", 4))
        return *b = 1;
    if (word(c, "false", 5)) {
        *b = 0;
        return 1;
    }
    return 0;
}

/* An array of numbers into its [min, max] span. */
static int span(cur *c, double sp[2])
{
    sp[0] = sp[1] = NAN;
    if (!lit(c, '['))
        return 0;
    if (lit(c, ']'))
        return 1;
    for (;;) {
        double v;
        long long iv;
        int ii;
        if (!number(c, &v, &iv, &ii))
            return 0;
        if (isnan(sp[0]) || v < sp[0])
            sp[0] = v;
        if (isnan(sp[1]) || v > sp[1])
            sp[1] = v;
        if (lit(c, ']'))
            return 1;
        if (!lit(c, ','))
            return 0;
    }
}

static int stage(cur *c, gate_scan *r, int s)
{
    if (!lit(c, '{'))
        return 0;
    int have[2] = {0, 0};
    long long ns[2] = {0, 0};
    if (!lit(c, '}'))
        for (;;) {
            const char *k;
            size_t n;
            if (!str(c, &k, &n) || !lit(c, ':'))
                return 0;
            int which = n == 8 && !memcmp(k, "start_ns", 8) ? 0
                        : n == 6 && !memcmp(k, "end_ns", 6) ? 1 : -1;
            if (which >= 0) {
                double v;
                int ii;
                if (!number(c, &v, &ns[which], &ii) || !ii)
                    return 0;
                have[which] = 1;
            } else if (!skip_value(c, 2))
                return 0;
            if (lit(c, '}'))
                break;
            if (!lit(c, ','))
                return 0;
        }
    if (!have[0] || !have[1] || ns[1] < ns[0])
        return 0;
    r->m[2 + s] = (double)(ns[1] - ns[0]) / 1e6;
    return 1;
}

static int stages(cur *c, gate_scan *r)
{
    static const char *const names[9] = {"client_queue", "service_queue", "input_prepare",
                                         "h2d", "npu_wait", "d2h", "logits_conversion",
                                         "sampling", "stream_flush"};
    if (!lit(c, '{'))
        return 0;
    if (lit(c, '}'))
        return 1;
    for (;;) {
        const char *k;
        size_t n;
        if (!str(c, &k, &n) || !lit(c, ':'))
            return 0;
        int s = -1;
        for (int i = 0; i < 9 && s < 0; i++)
            if (strlen(names[i]) == n && !memcmp(names[i], k, n))
                s = i;
        if (s >= 0 ? !stage(c, r, s) : !skip_value(c, 1))
            return 0;
        if (lit(c, '}'))
            return 1;
        if (!lit(c, ','))
            return 0;
    }
}

static int key_is(const char *k, size_t n, const char *w)
{
    return strlen(w) == n && !memcmp(k, w, n);
}

/* One member of the top-level object. */
static int member(cur *c, const char *k, size_t n, gate_scan *r)
{
    double v;
    long long iv;
    int ii;
    if (key_is(k, n, "case_id"))
        return str(c, &r->case_id, &r->case_len) && r->case_len > 0;
    if (key_is(k, n, "side")) {
        const char *s;
        size_t sl;
        if (!str(c, &s, &sl))
            return 0;
        r->side = key_is(s, sl, "baseline") ? 0 : key_is(s, sl, "candidate") ? 1 : -1;
        return r->side >= 0;
    }
    if (key_is(k, n, "warmup"))
        return boolean(c, &r->warmup) && (r->have |= 1);
    if (key_is(k, n, "steady"))
        return boolean(c, &r->steady) && (r->have |= 2);
    if (key_is(k, n, "ttft_ms") || key_is(k, n, "tpot_ms")) {
        if (!number(c, &v, &iv, &ii) || v < 0)
            return 0;
        r->m[k[1] == 'p' ? 1 : 0] = v;
        return 1;
    }
    if (key_is(k, n, "output_tokens")) {
        if (!number(c, &v, &iv, &ii))
            return 0;
        if (ii)
            r->output_tokens = iv, r->have |= 4;
        return 1;
    }
    if (key_is(k, n, "clock_mhz"))
        return span(c, r->clock);
    if (key_is(k, n, "chip_temperature_c"))
        return span(c, r->temp);
    if (key_is(k, n, "stages"))
        return stages(c, r);
    return skip_value(c, 1);
}

int gate_scan_line(const char *buf, size_t len, gate_scan *r)
{
    memset(r, 0, sizeof *r);
    r->side = -1;
    for (int m = 0; m < GOLDEN_GATE_METRICS; m++)
        r->m[m] = NAN;
    r->clock[0] = r->clock[1] = r->temp[0] = r->temp[1] = NAN;
    cur c = {buf, buf + len};
    if (!lit(&c, '{'))
        return 0;
    /* A key seen twice: jansson keeps the last, and so would we, but the spans and stages are
     * merged field by field here; rather than reason about it, let jansson take such lines. */
    unsigned seen = 0;
    if (!lit(&c, '}'))
        for (;;) {
            const char *k;
            size_t n;
            if (!str(&c, &k, &n) || !lit(&c, ':'))
                return 0;
            static const char *const tracked[] = {"case_id", "side", "warmup", "steady",
                                                  "ttft_ms", "tpot_ms", "output_tokens",
                                                  "clock_mhz", "chip_temperature_c", "stages"};
            for (unsigned t = 0; t < 10; t++)
                if (key_is(k, n, tracked[t])) {
                    if (seen & (1u << t))
                        return 0;
                    seen |= 1u << t;
                }
            if (!member(&c, k, n, r))
                return 0;
            if (lit(&c, '}'))
                break;
            if (!lit(&c, ','))
                return 0;
        }
    ws(&c);
    return c.p == c.end && r->case_id && r->side >= 0 && (r->have & 3) == 3;
}
