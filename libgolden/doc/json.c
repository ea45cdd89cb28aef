/* The JSON reader: a strict RFC 8259 parser of our own (jansson keeps no positions) that
 * builds a jansson tree and records every node's line:col as it goes. */
#include "doc/internal.h"
#include "util/vec.h"

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

typedef struct {
    const char *name;
    const unsigned char *p, *end;
    size_t line;
    const unsigned char *line_start;
    const unsigned char *col_line, *col_ptr; /* incremental column counter */
    size_t col_val;
    golden_doc *doc;
    golden_error *err;
    char *scratch;
    size_t scratch_cap;
    int depth;
    const unsigned char *discarded; /* input before this is no longer needed */
    int discardable;                /* the input is ours to drop page by page */
    const unsigned char *first_line; /* the buffer's first line starts col_base columns in */
    size_t col_base;
} jparser;

#define DISCARD_STEP ((size_t)64 << 20)

/* A large input is parsed from an anonymous mapping: pages already parsed are handed back
 * as the parser moves on, so the input and the tree do not both stay resident. The
 * mapping stays, so a late look back (a column on a very long line) reads zeros, never
 * faults. */
static void discard_consumed(jparser *jp)
{
    const unsigned char *upto = jp->col_ptr && jp->col_ptr < jp->p ? jp->col_ptr : jp->p;
    if (!jp->discardable) {
        jp->discarded = jp->p;
        return;
    }
    uintptr_t a = ((uintptr_t)jp->discarded + 4095) & ~(uintptr_t)4095;
    uintptr_t b = (uintptr_t)upto & ~(uintptr_t)4095;
    if (b > a)
        madvise((void *)a, b - a, MADV_DONTNEED);
    jp->discarded = upto;
}

/* Column (in characters) of q on the current line; q only moves forward, so the whole
 * document costs one extra pass at most. */
static size_t jcol(jparser *jp, const unsigned char *q)
{
    if (jp->col_line != jp->line_start || q < jp->col_ptr) {
        jp->col_line = jp->line_start;
        jp->col_ptr = jp->line_start;
        jp->col_val = 1;
    }
    for (const unsigned char *r = jp->col_ptr; r < q; r++)
        if ((*r & 0xC0) != 0x80)
            jp->col_val++;
    jp->col_ptr = q;
    return jp->col_val + (jp->line_start == jp->first_line ? jp->col_base : 0);
}

static json_t *jfail(jparser *jp, const unsigned char *at, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static json_t *jfail(jparser *jp, const unsigned char *at, const char *fmt, ...)
{
    if (jp->err) {
        va_list ap;
        va_start(ap, fmt);
        doc_failv(jp->err, GOLDEN_EINVAL, jp->name, jp->line, jcol(jp, at), fmt, ap);
        va_end(ap);
    }
    return NULL;
}

/* An allocation failed at `at`: GOLDEN_ENOMEM, with the place the parser had reached. */
static json_t *jnomem(jparser *jp, const unsigned char *at)
{
    if (jp->err)
        golden_fail_where(jp->err, GOLDEN_ENOMEM, "out of memory", "%s:%zu:%zu", jp->name,
                          jp->line, jcol(jp, at));
    return NULL;
}

static void jskip_ws(jparser *jp)
{
    const unsigned char *p = jp->p;
    while (p < jp->end) {
        unsigned c = *p;
        if (c == ' ' || c == '\t' || c == '\r') {
            p++;
        } else if (c == '\n') {
            p++;
            jp->line++;
            jp->line_start = p;
        } else {
            break;
        }
    }
    jp->p = p;
}

static const char *describe_byte(unsigned c, char *buf, size_t n)
{
    if (c >= 0x21 && c < 0x7F)
        snprintf(buf, n, "'%c'", (char)c);
    else
        snprintf(buf, n, "byte 0x%02X", c);
    return buf;
}

static int scratch_put(jparser *jp, size_t *len, const char *s, size_t n)
{
    if (vec_reserve(&jp->scratch, &jp->scratch_cap, *len + n + 1, 1, 256) != 0)
        return -1;
    memcpy(jp->scratch + *len, s, n);
    *len += n;
    return 0;
}

static int hex4(const unsigned char *p, const unsigned char *end, unsigned *out)
{
    if (end - p < 4)
        return 0;
    unsigned v = 0;
    for (int i = 0; i < 4; i++) {
        unsigned c = p[i], d;
        if (c >= '0' && c <= '9')
            d = c - '0';
        else if (c >= 'a' && c <= 'f')
            d = c - 'a' + 10;
        else if (c >= 'A' && c <= 'F')
            d = c - 'A' + 10;
        else
            return 0;
        v = v * 16 + d;
    }
    *out = v;
    return 1;
}

/* A byte below 0x20 inside a string: say which kind of mistake it most likely is. */
static int jcontrol(jparser *jp, const unsigned char *p, unsigned c)
{
    jfail(jp, p, c == 0       ? "NUL byte in a string"
                 : c == '\n' ? "unterminated string"
                              : "control character in a string (escape it)");
    return -1;
}

/* Scan a string at jp->p (on the opening quote). On success *s and *len point either into the
 * input (no escapes) or into jp->scratch (decoded). */
static int jstring(jparser *jp, const char **s, size_t *len)
{
    const unsigned char *start = ++jp->p, *p = start, *end = jp->end;
    /* Fast path: no escapes. */
    while (p < end) {
        unsigned c = *p;
        if (c == '"') {
            *s = (const char *)start;
            *len = (size_t)(p - start);
            jp->p = p + 1;
            return 0;
        }
        if (c == '\\')
            break;
        if (c < 0x20) {
            return jcontrol(jp, p, c);
        }
        if (c < 0x80) {
            p++;
            continue;
        }
        size_t n = doc_utf8_len(p, end);
        if (!n) {
            jfail(jp, p, "invalid UTF-8");
            return -1;
        }
        p += n;
    }
    if (p >= end) {
        jfail(jp, start - 1, "unterminated string");
        return -1;
    }
    size_t out = 0;
    if (scratch_put(jp, &out, (const char *)start, (size_t)(p - start)) < 0) {
        jnomem(jp, p);
        return -1;
    }
    while (p < end) {
        unsigned c = *p;
        if (c == '"') {
            jp->scratch[out] = '\0';
            *s = jp->scratch;
            *len = out;
            jp->p = p + 1;
            return 0;
        }
        if (c == '\\') {
            if (p + 1 >= end)
                break;
            char ch;
            unsigned e = p[1];
            switch (e) {
            case '"': ch = '"'; break;
            case '\\': ch = '\\'; break;
            case '/': ch = '/'; break;
            case 'b': ch = '\b'; break;
            case 'f': ch = '\f'; break;
            case 'n': ch = '\n'; break;
            case 'r': ch = '\r'; break;
            case 't': ch = '\t'; break;
            case 'u': {
                unsigned cp;
                if (!hex4(p + 2, end, &cp)) {
                    jfail(jp, p, "bad \\u escape (four hex digits expected)");
                    return -1;
                }
                const unsigned char *esc = p;
                p += 6;
                if (cp >= 0xDC00 && cp <= 0xDFFF) {
                    jfail(jp, esc, "lone low surrogate \\u%04X", cp);
                    return -1;
                }
                if (cp >= 0xD800 && cp <= 0xDBFF) {
                    unsigned lo;
                    if (end - p < 6 || p[0] != '\\' || p[1] != 'u' || !hex4(p + 2, end, &lo) ||
                        lo < 0xDC00 || lo > 0xDFFF) {
                        jfail(jp, esc, "lone high surrogate \\u%04X", cp);
                        return -1;
                    }
                    p += 6;
                    cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
                }
                char u[4];
                size_t un;
                if (cp < 0x80) {
                    u[0] = (char)cp;
                    un = 1;
                } else if (cp < 0x800) {
                    u[0] = (char)(0xC0 | (cp >> 6));
                    u[1] = (char)(0x80 | (cp & 0x3F));
                    un = 2;
                } else if (cp < 0x10000) {
                    u[0] = (char)(0xE0 | (cp >> 12));
                    u[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
                    u[2] = (char)(0x80 | (cp & 0x3F));
                    un = 3;
                } else {
                    u[0] = (char)(0xF0 | (cp >> 18));
                    u[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
                    u[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
                    u[3] = (char)(0x80 | (cp & 0x3F));
                    un = 4;
                }
                if (scratch_put(jp, &out, u, un) < 0) {
                    jnomem(jp, p);
                    return -1;
                }
                continue;
            }
            default:
                jfail(jp, p, "unknown escape \\%c", e >= 0x20 && e < 0x7F ? (char)e : '?');
                return -1;
            }
            if (scratch_put(jp, &out, &ch, 1) < 0) {
                jnomem(jp, p);
                return -1;
            }
            p += 2;
            continue;
        }
        if (c < 0x20) {
            return jcontrol(jp, p, c);
        }
        size_t n = c < 0x80 ? 1 : doc_utf8_len(p, end);
        if (!n) {
            jfail(jp, p, "invalid UTF-8");
            return -1;
        }
        if (scratch_put(jp, &out, (const char *)p, n) < 0) {
            jnomem(jp, p);
            return -1;
        }
        p += n;
    }
    jfail(jp, start - 1, "unterminated string");
    return -1;
}

static json_t *jnumber(jparser *jp)
{
    const unsigned char *s = jp->p, *p = s, *end = jp->end;
    int is_int = 1;
    if (p < end && *p == '-')
        p++;
    if (p >= end || *p < '0' || *p > '9')
        return jfail(jp, s, "bad number");
    if (*p == '0') {
        p++;
        if (p < end && *p >= '0' && *p <= '9')
            return jfail(jp, s, "bad number (leading zero)");
    } else {
        while (p < end && *p >= '0' && *p <= '9')
            p++;
    }
    if (p < end && *p == '.') {
        is_int = 0;
        p++;
        if (p >= end || *p < '0' || *p > '9')
            return jfail(jp, s, "bad number (digit expected after '.')");
        while (p < end && *p >= '0' && *p <= '9')
            p++;
    }
    if (p < end && (*p == 'e' || *p == 'E')) {
        is_int = 0;
        p++;
        if (p < end && (*p == '+' || *p == '-'))
            p++;
        if (p >= end || *p < '0' || *p > '9')
            return jfail(jp, s, "bad number (digit expected in exponent)");
        while (p < end && *p >= '0' && *p <= '9')
            p++;
    }
    size_t len = (size_t)(p - s);
    json_t *v;
    json_int_t iv;
    double dv;
    if (is_int && doc_parse_int64((const char *)s, len, &iv)) {
        v = json_integer(iv);
    } else {
        int r = doc_parse_real((const char *)s, len, &dv);
        if (r < 0)
            return jnomem(jp, s);
        if (r == 0)
            return jfail(jp, s, "number out of range (beyond a double)");
        v = json_real(dv);
    }
    if (!v)
        return jnomem(jp, s);
    jp->p = p;
    return v;
}

static json_t *jvalue(jparser *jp, size_t *line, size_t *col);

static json_t *jcontainer_fail(json_t *c)
{
    json_decref(c);
    return NULL;
}

/* Nodes record their own position as they are made, so that (in an arena) positions are
 * appended in address order and need no sorting. */
/* Open a container at jp->p (its bracket): check the depth, make it with make() and record
 * its place, step inside. *empty when the closing bracket follows at once (then consumed). */
static json_t *jopen(jparser *jp, json_t *(*make)(void), char close, size_t line, size_t col,
                     int *empty)
{
    const unsigned char *open = jp->p;
    *empty = 0;
    if (++jp->depth > GOLDEN_DOC_MAX_DEPTH)
        return jfail(jp, open, "nesting deeper than %d levels", GOLDEN_DOC_MAX_DEPTH);
    json_t *c = make();
    if (!c)
        return jnomem(jp, open);
    if (doc_pos_add(jp->doc, c, line, col) < 0)
        return jcontainer_fail(c), jnomem(jp, open);
    jp->p++;
    jskip_ws(jp);
    if (jp->p < jp->end && *jp->p == close) {
        jp->p++;
        jp->depth--;
        *empty = 1;
    }
    return c;
}

/* After a member of a container: 1 a ',' (consumed: another member follows), 0 the closing
 * bracket (consumed: the container is done), -1 anything else (err filled). */
static int jnext(jparser *jp, char close, const char *kind)
{
    jskip_ws(jp);
    if (jp->p >= jp->end) {
        jfail(jp, jp->p, "unterminated %s", kind);
        return -1;
    }
    if (*jp->p == ',') {
        jp->p++;
        return 1;
    }
    if (*jp->p == close) {
        jp->p++;
        jp->depth--;
        return 0;
    }
    char b[16];
    jfail(jp, jp->p, "expected ',' or '%c' in an %s, found %s", close, kind,
          describe_byte(*jp->p, b, sizeof b));
    return -1;
}

static json_t *jobject(jparser *jp, size_t line, size_t col)
{
    int empty;
    json_t *obj = jopen(jp, json_object, '}', line, col, &empty);
    if (!obj || empty)
        return obj;
    for (;;) {
        jskip_ws(jp);
        if (jp->p >= jp->end)
            return jcontainer_fail(obj), jfail(jp, jp->p, "unterminated object");
        if (*jp->p != '"') {
            char b[16];
            return jcontainer_fail(obj),
                   jfail(jp, jp->p, "expected a string key, found %s",
                         describe_byte(*jp->p, b, sizeof b));
        }
        const unsigned char *kat = jp->p;
        size_t kline = jp->line;
        size_t kcol = jcol(jp, kat);
        const char *k;
        size_t klen;
        if (jstring(jp, &k, &klen) < 0)
            return jcontainer_fail(obj);
        /* The key sits in scratch (which the value reuses) or in the input (whose pages
         * the value's parse may hand back): copy it first. */
        char kshort[64], *kcopy = NULL;
        if (klen < sizeof kshort) {
            memcpy(kshort, k, klen);
            k = kshort;
        } else {
            kcopy = malloc(klen);
            if (!kcopy)
                return jcontainer_fail(obj), jnomem(jp, kat);
            memcpy(kcopy, k, klen);
            k = kcopy;
        }
        jskip_ws(jp);
        if (jp->p >= jp->end || *jp->p != ':') {
            free(kcopy);
            return jcontainer_fail(obj), jfail(jp, jp->p, "expected ':' after an object key");
        }
        jp->p++;
        size_t vline, vcol;
        json_t *v = jvalue(jp, &vline, &vcol);
        if (!v) {
            free(kcopy);
            return jcontainer_fail(obj);
        }
        size_t before = json_object_size(obj);
        if (json_object_setn_new_nocheck(obj, k, klen, v) != 0) {
            free(kcopy);
            return jcontainer_fail(obj), jnomem(jp, kat);
        }
        if (json_object_size(obj) == before) {
            if (jp->err) {
                char msg[sizeof jp->err->what];
                snprintf(msg, sizeof msg, "duplicate key \"%.*s\"", (int)(klen > 200 ? 200 : klen),
                         k);
                golden_fail_where(jp->err, GOLDEN_EINVAL, msg, "%s:%zu:%zu", jp->name, kline, kcol);
            }
            free(kcopy);
            return jcontainer_fail(obj);
        }
        if (doc_is_singleton(v) && doc_slot_add(jp->doc, obj, doc_key_sub(k, klen), vline, vcol) < 0) {
            free(kcopy);
            return jcontainer_fail(obj), jnomem(jp, kat);
        }
        free(kcopy);
        int more = jnext(jp, '}', "object");
        if (more <= 0)
            return more < 0 ? jcontainer_fail(obj) : obj;
    }
}

static json_t *jarray(jparser *jp, size_t line, size_t col)
{
    int empty;
    json_t *arr = jopen(jp, json_array, ']', line, col, &empty);
    if (!arr || empty)
        return arr;
    for (size_t i = 0;; i++) {
        size_t vline, vcol;
        json_t *v = jvalue(jp, &vline, &vcol);
        if (!v)
            return jcontainer_fail(arr);
        if (json_array_append_new(arr, v) != 0)
            return jcontainer_fail(arr), jnomem(jp, jp->p);
        if (doc_is_singleton(v) && doc_slot_add(jp->doc, arr, doc_index_sub(i), vline, vcol) < 0)
            return jcontainer_fail(arr), jnomem(jp, jp->p);
        int more = jnext(jp, ']', "array");
        if (more <= 0)
            return more < 0 ? jcontainer_fail(arr) : arr;
    }
}

static json_t *jliteral(jparser *jp, const char *word, json_t *v)
{
    size_t n = strlen(word);
    if ((size_t)(jp->end - jp->p) < n || memcmp(jp->p, word, n) != 0)
        return jfail(jp, jp->p, "unknown literal (expected %s)", word);
    jp->p += n;
    return v;
}

static json_t *jscalar_done(jparser *jp, json_t *v, const unsigned char *at, size_t line,
                            size_t col)
{
    if (v && doc_pos_add(jp->doc, v, line, col) < 0) {
        json_decref(v);
        return jnomem(jp, at);
    }
    return v;
}

/* One value; *line and *col receive where it starts. */
static json_t *jvalue(jparser *jp, size_t *line, size_t *col)
{
    jskip_ws(jp);
    *line = jp->line;
    *col = jcol(jp, jp->p);
    if (jp->p >= jp->end)
        return jfail(jp, jp->p, "unexpected end of input (a value was expected)");
    if (jp->p - jp->discarded > (ptrdiff_t)DISCARD_STEP)
        discard_consumed(jp);
    switch (*jp->p) {
    case '{':
        return jobject(jp, *line, *col);
    case '[':
        return jarray(jp, *line, *col);
    case '"': {
        const char *s;
        size_t len;
        const unsigned char *at = jp->p;
        if (jstring(jp, &s, &len) < 0)
            return NULL;
        json_t *v = json_stringn_nocheck(s, len);
        return v ? jscalar_done(jp, v, at, *line, *col) : jnomem(jp, at);
    }
    case 't':
        return jliteral(jp, "true", json_true());
    case 'f':
        return jliteral(jp, "false", json_false());
    case 'n':
        return jliteral(jp, "null", json_null());
    default:
        if (*jp->p == '-' || (*jp->p >= '0' && *jp->p <= '9')) {
            const unsigned char *at = jp->p;
            return jscalar_done(jp, jnumber(jp), at, *line, *col);
        }
        if (*jp->p == 0)
            return jfail(jp, jp->p, "NUL byte in a text document");
        {
            char b[16];
            return jfail(jp, jp->p, "unexpected %s (a JSON value was expected)",
                         describe_byte(*jp->p, b, sizeof b));
        }
    }
}

int doc_load_json(golden_doc *d, const unsigned char *buf, size_t len, size_t first_line,
                     int discardable, golden_error *err)
{
    return doc_load_json_at(d, buf, len, first_line, 1, discardable, err);
}

int doc_load_json_at(golden_doc *d, const unsigned char *buf, size_t len, size_t first_line,
                     size_t first_col, int discardable, golden_error *err)
{
    jparser jp = {0};
    jp.first_line = buf;
    jp.col_base = first_col > 0 ? first_col - 1 : 0;
    jp.name = d->name;
    jp.p = buf;
    jp.end = buf + len;
    jp.line = first_line;
    jp.line_start = buf;
    jp.doc = d;
    jp.err = err;
    jp.discarded = buf;
    jp.discardable = discardable;
    size_t line, col;
    json_t *root = jvalue(&jp, &line, &col);
    free(jp.scratch);
    jp.scratch = NULL;
    if (!root)
        return GOLDEN_ERR;
    jskip_ws(&jp);
    if (jp.p < jp.end) {
        json_decref(root);
        char b[16];
        jfail(&jp, jp.p, "unexpected %s after the JSON value",
              describe_byte(*jp.p, b, sizeof b));
        return GOLDEN_ERR;
    }
    d->root = root;
    return GOLDEN_OK;
}
