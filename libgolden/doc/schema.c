/* JSON Schema (draft 2020-12) validation of golden_doc trees: schemas are compiled once (refs
 * resolved to pointers, regexes compiled) and every violation is collected with its place. */
#include "golden/schema.h"

#include <ctype.h>
#include <math.h>
#include <regex.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "util/embed.h"
#include "util/pool.h"
#include "util/strmap.h"

#define ID_PREFIX "https://calculet.invalid/schemas/"
#define MAX_RECURSION 2048

enum {
    T_NULL = 1,
    T_BOOLEAN = 2,
    T_OBJECT = 4,
    T_ARRAY = 8,
    T_NUMBER = 16,
    T_STRING = 32,
    T_INTEGER = 64
};

typedef struct csch csch;

/* Simple patterns (classes and literals with quantifiers, no groups or alternation: the
 * identifiers and hex digests schemas are full of) run on a bit-parallel matcher; the
 * rest on regexec, which is slower and takes a lock per call. */
typedef struct {
    uint64_t w[2];
} bits128;

typedef struct {
    bits128 byte[256]; /* atoms that accept each byte */
    bits128 opt, loop, final, all;
    int anchored_start, anchored_end, empty_ok;
    int ascii_only; /* some atom matches a non-ASCII character: multi-byte input goes to regexec */
} fastre;

typedef struct {
    regex_t re;
    fastre *fast;
} pattern_t;

typedef struct {
    const char *key;
    size_t len;
    csch *s;
} prop;

typedef struct {
    pattern_t re;
    const char *src;
    csch *s;
} patprop;

typedef struct {
    const char *key;
    json_t *names; /* array of strings */
} dep_req;

typedef struct resource {
    char *id;   /* absolute $id, or NULL */
    char *path; /* file it came from (NULL when embedded) */
    char *name; /* embedded base name (NULL when from disk) */
    golden_doc *doc;
    struct resource *next;
} resource;

struct csch {
    json_t *src;
    resource *res;
    int boolean; /* -1: an object schema; 0/1: false/true */
    unsigned types;
    json_t *enum_, *const_;
    int has_const;
    prop *props;
    size_t nprops;
    patprop *pats;
    size_t npats;
    csch *addl;
    json_t *required;
    dep_req *deps;
    size_t ndeps;
    prop *depschemas;
    size_t ndepschemas;
    csch *propnames;
    long long min_props, max_props;
    csch *items;
    csch **prefix;
    size_t nprefix;
    long long min_items, max_items;
    int unique;
    csch *contains;
    long long min_contains, max_contains;
    json_t *minimum, *maximum, *xminimum, *xmaximum, *multiple;
    long long min_len, max_len;
    pattern_t *pattern;
    const char *pattern_src;
    csch **allof, **anyof, **oneof;
    size_t nallof, nanyof, noneof;
    csch *not_, *if_, *then_, *else_;
    csch *ref;
    const char *ref_src;
    csch *next_alloc; /* every compiled node, for freeing */
};

struct map_entry {
    const json_t *key;
    csch *val;
};

struct golden_schema {
    resource *resources;
    csch *root;
    csch *all;
    /* node address -> compiled schema, so each subschema compiles once and refs can loop */
    struct map_entry *map;
    size_t mapcap, mapn;
};

/* ---------------------------------------------------------------- helpers */

static int sfail(golden_schema *S, const resource *r, const json_t *at, golden_error *err,
                 const char *fmt, ...) __attribute__((format(printf, 5, 6)));

static int sfail(golden_schema *S, const resource *r, const json_t *at, golden_error *err,
                 const char *fmt, ...)
{
    (void)S;
    if (!err)
        return GOLDEN_ERR;
    char where[sizeof err->where];
    if (r && r->doc)
        golden_doc_where(r->doc, at, where, sizeof where);
    else
        snprintf(where, sizeof where, "schema");
    char msg[sizeof err->what];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return golden_fail_what(err, GOLDEN_EINVAL, where, "%s", msg);
}

static uint64_t ptr_hash(const void *p)
{
    uint64_t x = (uint64_t)(uintptr_t)p;
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    return x;
}

static csch *map_get(const golden_schema *S, const json_t *k)
{
    if (!S->mapcap)
        return NULL;
    size_t mask = S->mapcap - 1, i = (size_t)ptr_hash(k) & mask;
    while (S->map[i].key) {
        if (S->map[i].key == k)
            return S->map[i].val;
        i = (i + 1) & mask;
    }
    return NULL;
}

static int map_put(golden_schema *S, const json_t *k, csch *v)
{
    if ((S->mapn + 1) * 2 > S->mapcap) {
        size_t cap = S->mapcap ? S->mapcap * 2 : 256;
        struct map_entry *old = S->map;
        size_t oldcap = S->mapcap;
        S->map = calloc(cap, sizeof *S->map);
        if (!S->map) {
            S->map = old;
            return -1;
        }
        S->mapcap = cap;
        S->mapn = 0;
        for (size_t i = 0; i < oldcap; i++) {
            if (old[i].key)
                map_put(S, old[i].key, old[i].val);
        }
        free(old);
    }
    size_t mask = S->mapcap - 1, i = (size_t)ptr_hash(k) & mask;
    while (S->map[i].key)
        i = (i + 1) & mask;
    S->map[i].key = k;
    S->map[i].val = v;
    S->mapn++;
    return 0;
}

static int is_integral(const json_t *v)
{
    if (json_is_integer(v))
        return 1;
    if (json_is_real(v)) {
        double d = json_real_value(v);
        return isfinite(d) && d == floor(d);
    }
    return 0;
}

static double num(const json_t *v)
{
    return json_is_integer(v) ? (double)json_integer_value(v) : json_real_value(v);
}

/* -1, 0, 1 comparing two numbers; exact between two integers. */
static int num_cmp(const json_t *a, const json_t *b)
{
    if (json_is_integer(a) && json_is_integer(b)) {
        json_int_t x = json_integer_value(a), y = json_integer_value(b);
        return x < y ? -1 : x > y;
    }
    double x = num(a), y = num(b);
    return x < y ? -1 : x > y;
}

/* Deep equality as JSON Schema means it: 1 equals 1.0; key order does not matter. */
static int json_same(const json_t *a, const json_t *b)
{
    if (json_is_number(a) && json_is_number(b))
        return num_cmp(a, b) == 0;
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
            if (!json_same(json_array_get(a, i), json_array_get(b, i)))
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
            if (!w || !json_same(v, w))
                return 0;
        }
        return 1;
    }
    default:
        return 1; /* true, false, null */
    }
}

/* A hash consistent with json_same. */
static uint64_t json_hash(const json_t *v)
{
    uint64_t h = 1469598103934665603ULL;
#define MIX(x) (h = (h ^ (uint64_t)(x)) * 1099511628211ULL)
    switch (json_typeof(v)) {
    case JSON_INTEGER:
    case JSON_REAL: {
        double d = num(v);
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
            MIX(json_hash(json_array_get(v, i)));
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
            sum += golden_strmap_hash(k, kl) * 31 + json_hash(x);
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
static const char *show(const json_t *v, char *buf, size_t n)
{
    sbuf b = {buf, n, 0};
    buf[0] = '\0';
    render(&b, v, 0);
    if (b.len + 1 >= n && n > 4)
        memcpy(buf + n - 4, "...", 4);
    return buf;
}

/* ---------------------------------------------------------------- regex */

/* ECMA-262 patterns (what JSON Schema means) are turned into POSIX ERE for regcomp: the
 * class escapes \d \w \s (and negations), \t \n \r, \/ and \uXXXX are rewritten; other
 * ECMA-only syntax (lookaround, lazy quantifiers, (?:...), backreferences) makes regcomp
 * fail and the schema fails to load rather than silently matching something else. */
static char *translate_pattern(const char *src, const char **bad)
{
    size_t n = strlen(src);
    size_t cap = n * 16 + 16;
    char *out = malloc(cap), *o = out;
    *bad = NULL;
    if (!out)
        return NULL;
    int in_class = 0;
    for (size_t i = 0; i < n; i++) {
        char c = src[i];
        if (c == '[' && !in_class) {
            in_class = 1;
            *o++ = c;
            if (src[i + 1] == '^')
                *o++ = src[++i];
            if (src[i + 1] == ']')
                *o++ = src[++i];
            continue;
        }
        if (c == ']' && in_class) {
            in_class = 0;
            *o++ = c;
            continue;
        }
        if (c == '(' && src[i + 1] == '?') {
            *bad = "(?...) groups, lookaround and lazy quantifiers have no POSIX ERE form";
            free(out);
            return NULL;
        }
        if (c != '\\' || i + 1 >= n) {
            *o++ = c;
            continue;
        }
        char e = src[++i];
        const char *rep = NULL;
        char lit[8] = {0};
        switch (e) {
        case 'd': rep = in_class ? "0-9" : "[0-9]"; break;
        case 'w': rep = in_class ? "A-Za-z0-9_" : "[A-Za-z0-9_]"; break;
        case 's': rep = in_class ? "[:space:]" : "[[:space:]]"; break;
        case 'D':
        case 'W':
        case 'S':
            if (in_class) {
                *bad = "negated class escapes (\\D \\W \\S) inside [...] have no POSIX ERE form";
                free(out);
                return NULL;
            }
            rep = e == 'D' ? "[^0-9]" : e == 'W' ? "[^A-Za-z0-9_]" : "[^[:space:]]";
            break;
        case 't': lit[0] = '\t'; break;
        case 'n': lit[0] = '\n'; break;
        case 'r': lit[0] = '\r'; break;
        case 'u': {
            unsigned cp = 0;
            int ok = i + 4 < n;
            for (int k = 1; ok && k <= 4; k++) {
                char h = src[i + (size_t)k];
                ok = isxdigit((unsigned char)h);
                cp = cp * 16 + (unsigned)(h <= '9' ? h - '0' : (h | 0x20) - 'a' + 10);
            }
            if (!ok || (cp >= 0xD800 && cp <= 0xDFFF) || cp == 0) {
                *bad = "bad \\u escape in pattern";
                free(out);
                return NULL;
            }
            i += 4;
            if (cp < 0x80) {
                if (!in_class && strchr(".[]{}()\\*+?^$|", (int)cp))
                    lit[0] = '\\', lit[1] = (char)cp;
                else
                    lit[0] = (char)cp;
            } else if (cp < 0x800) {
                lit[0] = (char)(0xC0 | (cp >> 6));
                lit[1] = (char)(0x80 | (cp & 0x3F));
            } else {
                lit[0] = (char)(0xE0 | (cp >> 12));
                lit[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
                lit[2] = (char)(0x80 | (cp & 0x3F));
            }
            break;
        }
        case 'b':
        case 'B':
            if (!in_class) {
                *bad = "word boundaries (\\b \\B) have no POSIX ERE form";
                free(out);
                return NULL;
            }
            lit[0] = '\b';
            break;
        default:
            if (e >= '1' && e <= '9') {
                *bad = "backreferences are not regular (no POSIX ERE form)";
                free(out);
                return NULL;
            }
            if (in_class) {
                /* POSIX brackets have no escapes: a literal is itself */
                if (e == ']' || e == '\\' || e == '^' || e == '-') {
                    *bad = "escaped ] \\ ^ - inside [...] have no POSIX ERE form; reorder the class";
                    free(out);
                    return NULL;
                }
                lit[0] = e;
            } else if (strchr(".[]{}()\\*+?^$|", e)) {
                lit[0] = '\\';
                lit[1] = e;
            } else {
                lit[0] = e; /* \/ \- \: ... are the character itself */
            }
        }
        const char *r = rep ? rep : lit;
        size_t rl = strlen(r);
        memcpy(o, r, rl);
        o += rl;
    }
    *o = '\0';
    return out;
}

static void b_set(bits128 *b, int i)
{
    b->w[i >> 6] |= (uint64_t)1 << (i & 63);
}

static bits128 b_and(bits128 a, bits128 b)
{
    return (bits128){{a.w[0] & b.w[0], a.w[1] & b.w[1]}};
}

static bits128 b_or(bits128 a, bits128 b)
{
    return (bits128){{a.w[0] | b.w[0], a.w[1] | b.w[1]}};
}

static bits128 b_shl(bits128 a)
{
    return (bits128){{a.w[0] << 1, (a.w[1] << 1) | (a.w[0] >> 63)}};
}

static int b_any(bits128 a)
{
    return (a.w[0] | a.w[1]) != 0;
}

static int b_eq(bits128 a, bits128 b)
{
    return a.w[0] == b.w[0] && a.w[1] == b.w[1];
}

/* One character class of the pattern at *pp into set (256 bits); 0 when not simple. */
static int fast_class_escape(char e, uint8_t set[32], int *wide)
{
    switch (e) {
    case 'd':
        for (int c = '0'; c <= '9'; c++)
            set[c >> 3] |= (uint8_t)(1u << (c & 7));
        return 1;
    case 'w':
        for (int c = 0; c < 128; c++)
            if (isalnum(c) || c == '_')
                set[c >> 3] |= (uint8_t)(1u << (c & 7));
        return 1;
    case 's':
        for (const char *w = " \t\n\r\f\v"; *w; w++)
            set[(unsigned char)*w >> 3] |= (uint8_t)(1u << (*w & 7));
        return 1;
    case 'D':
    case 'W':
    case 'S': {
        uint8_t pos[32] = {0};
        fast_class_escape((char)(e | 0x20), pos, wide);
        for (int k = 0; k < 32; k++)
            set[k] |= (uint8_t)~pos[k];
        *wide = 1;
        return 1;
    }
    default:
        if (strchr(".[]{}()\\*+?^$|/-:", e) && e) {
            set[(unsigned char)e >> 3] |= (uint8_t)(1u << (e & 7));
            return 1;
        }
        return 0;
    }
}

static fastre *fast_compile(const char *src)
{
    uint8_t sets[128][32];
    int opt[128], loop[128], n = 0, wide = 0;
    const char *p = src;
    int astart = 0, aend = 0;
    if (*p == '^')
        astart = 1, p++;
    while (*p) {
        if (p[0] == '$' && p[1] == '\0') {
            aend = 1;
            break;
        }
        uint8_t set[32] = {0};
        unsigned char c = (unsigned char)*p;
        if (c >= 0x80 || strchr("()|{}*+?^$]", c))
            return NULL;
        if (c == '.') {
            for (int k = 0; k < 256; k++)
                if (k != '\n' && k != '\r')
                    set[k >> 3] |= (uint8_t)(1u << (k & 7));
            wide = 1;
            p++;
        } else if (c == '\\') {
            if (!fast_class_escape(p[1], set, &wide))
                return NULL;
            p += 2;
        } else if (c == '[') {
            p++;
            int neg = 0;
            if (*p == '^')
                neg = 1, p++;
            int first = 1;
            while (*p && (*p != ']' || first)) {
                first = 0;
                unsigned char lo = (unsigned char)*p;
                if (lo >= 0x80 || lo == '[')
                    return NULL;
                if (lo == '\\') {
                    if (!p[1] || !fast_class_escape(p[1], set, &wide))
                        return NULL;
                    p += 2;
                    continue;
                }
                if (p[1] == '-' && p[2] && p[2] != ']') {
                    unsigned char hi = (unsigned char)p[2];
                    if (hi >= 0x80 || hi == '\\' || hi == '[' || hi < lo)
                        return NULL;
                    for (unsigned k = lo; k <= hi; k++)
                        set[k >> 3] |= (uint8_t)(1u << (k & 7));
                    p += 3;
                } else {
                    set[lo >> 3] |= (uint8_t)(1u << (lo & 7));
                    p++;
                }
            }
            if (*p != ']')
                return NULL;
            p++;
            if (neg) {
                for (int k = 0; k < 32; k++)
                    set[k] = (uint8_t)~set[k];
                wide = 1;
            }
        } else {
            set[c >> 3] |= (uint8_t)(1u << (c & 7));
            p++;
        }
        /* quantifier */
        long lo = 1, hi = 1; /* hi < 0: unbounded */
        if (*p == '?')
            lo = 0, hi = 1, p++;
        else if (*p == '*')
            lo = 0, hi = -1, p++;
        else if (*p == '+')
            lo = 1, hi = -1, p++;
        else if (*p == '{') {
            char *e;
            if (!isdigit((unsigned char)p[1]))
                return NULL;
            lo = strtol(p + 1, &e, 10);
            hi = lo;
            if (*e == ',') {
                if (e[1] == '}')
                    hi = -1, e++;
                else {
                    if (!isdigit((unsigned char)e[1]))
                        return NULL;
                    hi = strtol(e + 1, &e, 10);
                }
            }
            if (*e != '}' || lo > 128 || (hi >= 0 && (hi < lo || hi > 128)))
                return NULL;
            p = e + 1;
        }
        if (*p == '?' || *p == '*' || *p == '+' || *p == '{')
            return NULL; /* lazy or stacked quantifiers */
        long copies = hi < 0 ? (lo ? lo + 1 : 1) : hi;
        if (copies == 0)
            continue; /* x{0}: matches nothing, consumes nothing */
        if (n + copies > 128)
            return NULL;
        for (long k = 0; k < copies; k++) {
            memcpy(sets[n], set, 32);
            opt[n] = k >= lo;
            loop[n] = hi < 0 && k == copies - 1;
            n++;
        }
    }
    fastre *f = calloc(1, sizeof *f);
    if (!f)
        return NULL;
    f->anchored_start = astart;
    f->anchored_end = aend;
    f->ascii_only = !wide;
    f->empty_ok = 1;
    for (int i = 0; i < n; i++) {
        for (int b = 0; b < 256; b++)
            if (sets[i][b >> 3] & (1u << (b & 7)))
                b_set(&f->byte[b], i);
        if (opt[i])
            b_set(&f->opt, i);
        if (loop[i])
            b_set(&f->loop, i);
        b_set(&f->all, i);
        f->empty_ok &= opt[i];
    }
    /* final: atoms after which only optional atoms remain */
    for (int i = n - 1; i >= 0; i--) {
        b_set(&f->final, i);
        if (!opt[i])
            break;
    }
    if (n == 0)
        f->empty_ok = 1;
    return f;
}

/* next candidates: after each active atom, plus the first atom when a match may start
 * here, closed over optional atoms (which may be skipped). */
static bits128 fast_next(const fastre *f, bits128 d, int start_here)
{
    bits128 nx = b_shl(d);
    if (start_here)
        nx.w[0] |= 1;
    for (;;) {
        bits128 more = b_or(nx, b_shl(b_and(nx, f->opt)));
        more = b_and(more, f->all);
        if (b_eq(more, nx))
            break;
        nx = more;
    }
    return b_and(nx, f->all);
}

static int fast_search(const fastre *f, const unsigned char *s, size_t len)
{
    if (f->empty_ok && (!f->anchored_end || !f->anchored_start || len == 0))
        return 1;
    bits128 d = {{0, 0}};
    for (size_t i = 0; i < len; i++) {
        bits128 cand = b_or(fast_next(f, d, !f->anchored_start || i == 0), b_and(d, f->loop));
        d = b_and(cand, f->byte[s[i]]);
        if (!f->anchored_end && b_any(b_and(d, f->final)))
            return 1;
        if (f->anchored_start && !b_any(d))
            return 0;
    }
    return f->anchored_end && b_any(b_and(d, f->final));
}

static int compile_regex(pattern_t *p, const char *src, const char **why)
{
    p->fast = NULL;
    char *ere = translate_pattern(src, why);
    if (!ere)
        return -1;
    int rc = regcomp(&p->re, ere, REG_EXTENDED | REG_NOSUB);
    free(ere);
    if (rc != 0) {
        *why = "regcomp rejected it (not valid POSIX ERE)";
        return -1;
    }
    p->fast = fast_compile(src);
    return 0;
}

static void pattern_free(pattern_t *p)
{
    regfree(&p->re);
    free(p->fast);
}

static int regex_search(const pattern_t *p, const char *s, size_t len)
{
    if (p->fast) {
        int ascii = 1;
        if (!p->fast->ascii_only)
            for (size_t i = 0; i < len && ascii; i++)
                ascii = (unsigned char)s[i] < 0x80;
        if (ascii)
            return fast_search(p->fast, (const unsigned char *)s, len);
    }
    regmatch_t m[1];
    m[0].rm_so = 0;
    m[0].rm_eo = (regoff_t)len;
    return regexec(&p->re, s, 1, m, REG_STARTEND) == 0;
}

/* ---------------------------------------------------------------- loading resources */

static void resource_free(resource *r)
{
    golden_doc_free(r->doc);
    free(r->id);
    free(r->path);
    free(r->name);
    free(r);
}

static resource *resource_add(golden_schema *S, golden_doc *doc, const char *path,
                              const char *name, golden_error *err)
{
    resource *r = calloc(1, sizeof *r);
    if (!r) {
        golden_doc_free(doc);
        golden_fail_what(err, GOLDEN_ENOMEM, path ? path : name, "out of memory");
        return NULL;
    }
    r->doc = doc;
    r->path = path ? strdup(path) : NULL;
    r->name = name ? strdup(name) : NULL;
    json_t *id = json_object_get(golden_doc_root(doc), "$id");
    if (json_is_string(id))
        r->id = strdup(json_string_value(id));
    if ((path && !r->path) || (name && !r->name) || (json_is_string(id) && !r->id)) {
        resource_free(r);
        golden_fail_what(err, GOLDEN_ENOMEM, path ? path : name, "out of memory");
        return NULL;
    }
    /* A trailing empty fragment is the same resource. */
    if (r->id && r->id[0] && r->id[strlen(r->id) - 1] == '#')
        r->id[strlen(r->id) - 1] = '\0';
    r->next = S->resources;
    S->resources = r;
    return r;
}

static resource *load_embedded(golden_schema *S, const golden_embedded_file *f, golden_error *err)
{
    for (resource *r = S->resources; r; r = r->next)
        if (r->name && !strcmp(r->name, f->name))
            return r;
    golden_doc *d;
    if (golden_doc_load_json(f->name, f->data, f->size, 1, &d, err) < 0)
        return NULL;
    return resource_add(S, d, NULL, f->name, err);
}

static resource *load_path(golden_schema *S, const char *path, golden_error *err)
{
    for (resource *r = S->resources; r; r = r->next)
        if (r->path && !strcmp(r->path, path))
            return r;
    golden_doc *d;
    if (golden_doc_load_file(path, &d, err) < 0)
        return NULL;
    return resource_add(S, d, path, NULL, err);
}

static const char *base_name(const char *s)
{
    const char *b = strrchr(s, '/');
    return b ? b + 1 : s;
}

static int file_exists(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0 && S_ISREG(st.st_mode);
}

static int has_dotdot(const char *p)
{
    for (const char *s = p; *s;) {
        const char *e = strchr(s, '/');
        size_t n = e ? (size_t)(e - s) : strlen(s);
        if (n == 2 && s[0] == '.' && s[1] == '.')
            return 1;
        if (!e)
            break;
        s = e + 1;
    }
    return 0;
}

/* Percent-decoding of a URI fragment (JSON pointers in refs may be URI-escaped). */
static char *pct_decode(const char *s, size_t n)
{
    char *o = malloc(n + 1);
    if (!o)
        return NULL;
    size_t j = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '%' && i + 2 < n && isxdigit((unsigned char)s[i + 1]) &&
            isxdigit((unsigned char)s[i + 2])) {
            char h[3] = {s[i + 1], s[i + 2], 0};
            o[j++] = (char)strtol(h, NULL, 16);
            i += 2;
        } else {
            o[j++] = s[i];
        }
    }
    o[j] = '\0';
    return o;
}

static json_t *find_anchor(json_t *node, const char *name, int depth)
{
    if (depth > 600)
        return NULL;
    if (json_is_object(node)) {
        json_t *a = json_object_get(node, "$anchor");
        if (json_is_string(a) && !strcmp(json_string_value(a), name))
            return node;
        const char *k;
        json_t *v;
        json_object_foreach(node, k, v)
        {
            if (!strcmp(k, "enum") || !strcmp(k, "const"))
                continue;
            json_t *f = find_anchor(v, name, depth + 1);
            if (f)
                return f;
        }
    } else if (json_is_array(node)) {
        size_t i;
        json_t *v;
        json_array_foreach(node, i, v)
        {
            json_t *f = find_anchor(v, name, depth + 1);
            if (f)
                return f;
        }
    }
    return NULL;
}

/* Resolve `ref` written in resource r (at node `at`) to a schema node and its resource. */
static int resolve_ref(golden_schema *S, resource *r, const json_t *at, const char *ref,
                       resource **rout, json_t **nout, golden_error *err)
{
    const char *hash = strchr(ref, '#');
    size_t ulen = hash ? (size_t)(hash - ref) : strlen(ref);
    const char *frag = hash ? hash + 1 : "";
    resource *target = r;
    if (ulen) {
        char *uri = strndup(ref, ulen);
        if (!uri)
            return sfail(S, r, at, err, "out of memory");
        char *abs = NULL;
        int absolute = strstr(uri, "://") != NULL || !strncmp(uri, "urn:", 4);
        if (absolute) {
            abs = strdup(uri);
        } else if (r->id && strstr(r->id, "://")) {
            const char *slash = strrchr(r->id, '/');
            size_t bl = (size_t)(slash - r->id) + 1;
            const char *u = uri;
            while (!strncmp(u, "./", 2))
                u += 2;
            abs = malloc(bl + strlen(u) + 1);
            if (abs) {
                memcpy(abs, r->id, bl);
                strcpy(abs + bl, u);
            }
        }
        target = NULL;
        for (resource *x = S->resources; x && abs; x = x->next)
            if (x->id && !strcmp(x->id, abs))
                target = x;
        /* Beside the referring file on disk first, then among the embedded schemas. A ref
         * stays in the referring schema's folder or below: no "..", no absolute path. */
        if (!absolute && (uri[0] == '/' || has_dotdot(uri))) {
            int rc = sfail(S, r, at, err,
                           "$ref \"%s\" leaves the schema's folder (no \"..\" or absolute paths)",
                           ref);
            free(uri);
            free(abs);
            return rc;
        }
        if (!target && r->path && !absolute) {
            const char *slash = strrchr(r->path, '/');
            size_t dl = slash ? (size_t)(slash - r->path) + 1 : 0;
            char *p = malloc(dl + strlen(uri) + 1);
            if (!p) {
                free(uri);
                free(abs);
                return sfail(S, r, at, err, "out of memory");
            }
            memcpy(p, r->path, dl);
            strcpy(p + dl, uri);
            if (file_exists(p)) {
                target = load_path(S, p, err);
                if (!target) {
                    free(p);
                    free(uri);
                    free(abs);
                    return GOLDEN_ERR;
                }
            }
            free(p);
        }
        if (!target) {
            const char *bn = base_name(uri);
            const golden_embedded_file *f = golden_embedded_schema(bn);
            if (f && (!absolute || !strncmp(uri, ID_PREFIX, strlen(ID_PREFIX)))) {
                target = load_embedded(S, f, err);
                if (!target) {
                    free(uri);
                    free(abs);
                    return GOLDEN_ERR;
                }
            }
        }
        free(abs);
        if (!target) {
            int rc = sfail(S, r, at, err, "$ref \"%s\": no schema \"%s\" (neither embedded nor "
                                          "beside the referring schema)",
                           ref, uri);
            free(uri);
            return rc;
        }
        free(uri);
    }
    json_t *node = golden_doc_root(target->doc);
    char *f = pct_decode(frag, strlen(frag));
    if (!f)
        return sfail(S, r, at, err, "out of memory");
    if (f[0] == '/') {
        /* JSON pointer: ~1 is '/', ~0 is '~' */
        char *seg = f + 1;
        for (;;) {
            char *end = strchr(seg, '/');
            if (end)
                *end = '\0';
            char *w = seg;
            for (char *q = seg; *q; q++) {
                if (q[0] == '~' && q[1] == '1')
                    *w++ = '/', q++;
                else if (q[0] == '~' && q[1] == '0')
                    *w++ = '~', q++;
                else
                    *w++ = *q;
            }
            *w = '\0';
            if (json_is_object(node)) {
                node = json_object_get(node, seg);
            } else if (json_is_array(node)) {
                char *e;
                unsigned long idx = strtoul(seg, &e, 10);
                node = *seg && !*e ? json_array_get(node, idx) : NULL;
            } else {
                node = NULL;
            }
            if (!node || !end)
                break;
            seg = end + 1;
        }
    } else if (f[0]) {
        node = find_anchor(node, f, 0);
    }
    free(f);
    if (!node)
        return sfail(S, r, at, err, "$ref \"%s\" points at nothing", ref);
    *rout = target;
    *nout = node;
    return GOLDEN_OK;
}

/* ---------------------------------------------------------------- compiling */

static csch *compile(golden_schema *S, resource *r, json_t *node, golden_error *err);

static int nonneg(golden_schema *S, resource *r, json_t *s, const char *kw, long long *out,
                  golden_error *err)
{
    json_t *v = json_object_get(s, kw);
    *out = -1;
    if (!v)
        return 0;
    if (!is_integral(v) || num(v) < 0)
        return sfail(S, r, v, err, "%s must be a non-negative integer", kw);
    *out = json_is_integer(v) ? (long long)json_integer_value(v)
                              : (num(v) > 9e18 ? (long long)9e18 : (long long)num(v));
    return 0;
}

static int sub(golden_schema *S, resource *r, json_t *s, const char *kw, csch **out,
               golden_error *err)
{
    json_t *v = json_object_get(s, kw);
    *out = NULL;
    if (!v)
        return 0;
    if (!json_is_object(v) && !json_is_boolean(v))
        return sfail(S, r, v, err, "%s must be a schema (an object or a boolean)", kw);
    *out = compile(S, r, v, err);
    return *out ? 0 : -1;
}

/* A keyword whose value maps names to schemas (properties, dependentSchemas). */
static int compile_schema_map(golden_schema *S, resource *r, json_t *v, const char *kw,
                              prop **out, size_t *n, golden_error *err)
{
    if (!json_is_object(v))
        return sfail(S, r, v, err, "%s must be an object", kw);
    *out = calloc(json_object_size(v) + 1, sizeof **out);
    if (!*out)
        return sfail(S, r, v, err, "out of memory");
    const char *k;
    size_t kl;
    json_t *x;
    json_object_keylen_foreach(v, k, kl, x)
    {
        if (!json_is_object(x) && !json_is_boolean(x))
            return sfail(S, r, x, err, "%s.%s must be a schema", kw, k);
        prop *p = &(*out)[*n];
        p->key = k;
        p->len = kl;
        if (!(p->s = compile(S, r, x, err)))
            return -1;
        (*n)++;
    }
    return 0;
}

static int sub_list(golden_schema *S, resource *r, json_t *s, const char *kw, csch ***out,
                    size_t *n, golden_error *err)
{
    json_t *v = json_object_get(s, kw);
    *out = NULL;
    *n = 0;
    if (!v)
        return 0;
    if (!json_is_array(v) || json_array_size(v) == 0)
        return sfail(S, r, v, err, "%s must be a non-empty array of schemas", kw);
    *out = calloc(json_array_size(v), sizeof **out);
    if (!*out)
        return sfail(S, r, v, err, "out of memory");
    size_t i;
    json_t *x;
    json_array_foreach(v, i, x)
    {
        if (!json_is_object(x) && !json_is_boolean(x))
            return sfail(S, r, x, err, "%s[%zu] must be a schema", kw, i);
        if (!((*out)[i] = compile(S, r, x, err)))
            return -1;
        *n = i + 1;
    }
    return 0;
}

static int number_kw(golden_schema *S, resource *r, json_t *s, const char *kw, json_t **out,
                     golden_error *err)
{
    json_t *v = json_object_get(s, kw);
    *out = NULL;
    if (!v)
        return 0;
    if (!json_is_number(v))
        return sfail(S, r, v, err, "%s must be a number", kw);
    *out = v;
    return 0;
}

static int prop_cmp(const void *a, const void *b)
{
    const prop *x = a, *y = b;
    size_t n = x->len < y->len ? x->len : y->len;
    int c = memcmp(x->key, y->key, n);
    return c ? c : (x->len > y->len) - (x->len < y->len);
}

static unsigned type_bit(const char *t)
{
    static const char *names[] = {"null", "boolean", "object", "array", "number", "string",
                                  "integer"};
    for (unsigned i = 0; i < 7; i++)
        if (!strcmp(t, names[i]))
            return 1u << i;
    return 0;
}

static int compile_body(golden_schema *S, resource *r, json_t *s, csch *c, golden_error *err)
{
    static const char *unsupported[] = {"unevaluatedProperties", "unevaluatedItems",
                                        "$dynamicRef", "$recursiveRef"};
    for (size_t i = 0; i < sizeof unsupported / sizeof *unsupported; i++) {
        json_t *u = json_object_get(s, unsupported[i]);
        if (u)
            return sfail(S, r, u, err,
                         "%s is not supported by this validator (see docs/documents.md)",
                         unsupported[i]);
    }
    json_t *v;
    if ((v = json_object_get(s, "type"))) {
        if (json_is_string(v)) {
            c->types = type_bit(json_string_value(v));
            if (!c->types)
                return sfail(S, r, v, err, "unknown type \"%s\"", json_string_value(v));
        } else if (json_is_array(v)) {
            size_t i;
            json_t *t;
            json_array_foreach(v, i, t)
            {
                unsigned b = json_is_string(t) ? type_bit(json_string_value(t)) : 0;
                if (!b)
                    return sfail(S, r, v, err, "type[%zu] is not a type name", i);
                c->types |= b;
            }
            if (!c->types)
                return sfail(S, r, v, err, "type must not be empty");
        } else {
            return sfail(S, r, v, err, "type must be a string or an array of strings");
        }
    }
    if ((v = json_object_get(s, "enum"))) {
        if (!json_is_array(v))
            return sfail(S, r, v, err, "enum must be an array");
        c->enum_ = v;
    }
    if ((v = json_object_get(s, "const"))) {
        c->const_ = v;
        c->has_const = 1;
    }
    if ((v = json_object_get(s, "properties"))) {
        if (compile_schema_map(S, r, v, "properties", &c->props, &c->nprops, err) < 0)
            return -1;
        qsort(c->props, c->nprops, sizeof *c->props, prop_cmp);
    }
    if ((v = json_object_get(s, "patternProperties"))) {
        if (!json_is_object(v))
            return sfail(S, r, v, err, "patternProperties must be an object");
        c->pats = calloc(json_object_size(v) + 1, sizeof *c->pats);
        if (!c->pats)
            return sfail(S, r, v, err, "out of memory");
        const char *k;
        json_t *x;
        json_object_foreach(v, k, x)
        {
            const char *why;
            if (!json_is_object(x) && !json_is_boolean(x))
                return sfail(S, r, x, err, "patternProperties.%s must be a schema", k);
            patprop *p = &c->pats[c->npats];
            if (compile_regex(&p->re, k, &why) < 0)
                return sfail(S, r, x, err, "pattern %s: %s", k, why);
            c->npats++;
            p->src = k;
            if (!(p->s = compile(S, r, x, err)))
                return -1;
        }
    }
    if (sub(S, r, s, "additionalProperties", &c->addl, err) < 0)
        return -1;
    if ((v = json_object_get(s, "required"))) {
        size_t i;
        json_t *x;
        if (!json_is_array(v))
            return sfail(S, r, v, err, "required must be an array of strings");
        json_array_foreach(v, i, x) if (!json_is_string(x)) return sfail(
            S, r, v, err, "required[%zu] must be a string", i);
        c->required = v;
    }
    if ((v = json_object_get(s, "dependentRequired"))) {
        if (!json_is_object(v))
            return sfail(S, r, v, err, "dependentRequired must be an object");
        c->deps = calloc(json_object_size(v) + 1, sizeof *c->deps);
        if (!c->deps)
            return sfail(S, r, v, err, "out of memory");
        const char *k;
        json_t *x;
        json_object_foreach(v, k, x)
        {
            size_t i;
            json_t *y;
            if (!json_is_array(x))
                return sfail(S, r, x, err, "dependentRequired.%s must be an array", k);
            json_array_foreach(x, i, y) if (!json_is_string(y)) return sfail(
                S, r, x, err, "dependentRequired.%s[%zu] must be a string", k, i);
            c->deps[c->ndeps].key = k;
            c->deps[c->ndeps++].names = x;
        }
    }
    if ((v = json_object_get(s, "dependentSchemas")) &&
        compile_schema_map(S, r, v, "dependentSchemas", &c->depschemas, &c->ndepschemas, err) < 0)
        return -1;
    if (sub(S, r, s, "propertyNames", &c->propnames, err) < 0 ||
        nonneg(S, r, s, "minProperties", &c->min_props, err) < 0 ||
        nonneg(S, r, s, "maxProperties", &c->max_props, err) < 0 ||
        sub(S, r, s, "items", &c->items, err) < 0 ||
        sub_list(S, r, s, "prefixItems", &c->prefix, &c->nprefix, err) < 0 ||
        nonneg(S, r, s, "minItems", &c->min_items, err) < 0 ||
        nonneg(S, r, s, "maxItems", &c->max_items, err) < 0 ||
        sub(S, r, s, "contains", &c->contains, err) < 0 ||
        nonneg(S, r, s, "minContains", &c->min_contains, err) < 0 ||
        nonneg(S, r, s, "maxContains", &c->max_contains, err) < 0 ||
        number_kw(S, r, s, "minimum", &c->minimum, err) < 0 ||
        number_kw(S, r, s, "maximum", &c->maximum, err) < 0 ||
        number_kw(S, r, s, "exclusiveMinimum", &c->xminimum, err) < 0 ||
        number_kw(S, r, s, "exclusiveMaximum", &c->xmaximum, err) < 0 ||
        number_kw(S, r, s, "multipleOf", &c->multiple, err) < 0 ||
        nonneg(S, r, s, "minLength", &c->min_len, err) < 0 ||
        nonneg(S, r, s, "maxLength", &c->max_len, err) < 0 ||
        sub_list(S, r, s, "allOf", &c->allof, &c->nallof, err) < 0 ||
        sub_list(S, r, s, "anyOf", &c->anyof, &c->nanyof, err) < 0 ||
        sub_list(S, r, s, "oneOf", &c->oneof, &c->noneof, err) < 0 ||
        sub(S, r, s, "not", &c->not_, err) < 0 || sub(S, r, s, "if", &c->if_, err) < 0 ||
        sub(S, r, s, "then", &c->then_, err) < 0 || sub(S, r, s, "else", &c->else_, err) < 0)
        return -1;
    if ((v = json_object_get(s, "uniqueItems"))) {
        if (!json_is_boolean(v))
            return sfail(S, r, v, err, "uniqueItems must be a boolean");
        c->unique = json_is_true(v);
    }
    if (c->multiple && num(c->multiple) <= 0)
        return sfail(S, r, c->multiple, err, "multipleOf must be greater than 0");
    if ((v = json_object_get(s, "pattern"))) {
        const char *why;
        if (!json_is_string(v))
            return sfail(S, r, v, err, "pattern must be a string");
        c->pattern = calloc(1, sizeof *c->pattern);
        if (!c->pattern)
            return sfail(S, r, v, err, "out of memory");
        if (compile_regex(c->pattern, json_string_value(v), &why) < 0) {
            free(c->pattern);
            c->pattern = NULL;
            return sfail(S, r, v, err, "pattern %s: %s", json_string_value(v), why);
        }
        c->pattern_src = json_string_value(v);
    }
    /* $defs compile now, used or not, so that a broken definition is a load error for the
     * schema's author rather than a surprise for whoever first refers to it. */
    if ((v = json_object_get(s, "$defs"))) {
        if (!json_is_object(v))
            return sfail(S, r, v, err, "$defs must be an object");
        const char *k;
        json_t *x;
        json_object_foreach(v, k, x)
        {
            if (!json_is_object(x) && !json_is_boolean(x))
                return sfail(S, r, x, err, "$defs.%s must be a schema", k);
            if (!compile(S, r, x, err))
                return -1;
        }
    }
    if ((v = json_object_get(s, "$ref"))) {
        if (!json_is_string(v))
            return sfail(S, r, v, err, "$ref must be a string");
        resource *tr = NULL;
        json_t *tn = NULL;
        if (resolve_ref(S, r, v, json_string_value(v), &tr, &tn, err) < 0)
            return -1;
        if (!json_is_object(tn) && !json_is_boolean(tn))
            return sfail(S, r, v, err, "$ref \"%s\" does not point at a schema",
                         json_string_value(v));
        c->ref_src = json_string_value(v);
        if (!(c->ref = compile(S, tr, tn, err)))
            return -1;
    }
    return 0;
}

static csch *compile(golden_schema *S, resource *r, json_t *node, golden_error *err)
{
    csch *c = map_get(S, node);
    if (c)
        return c;
    c = calloc(1, sizeof *c);
    if (!c || map_put(S, node, c) < 0) {
        free(c);
        sfail(S, r, node, err, "out of memory");
        return NULL;
    }
    c->next_alloc = S->all;
    S->all = c;
    c->src = node;
    c->res = r;
    c->boolean = json_is_boolean(node) ? json_is_true(node) : -1;
    c->min_props = c->max_props = c->min_items = c->max_items = -1;
    c->min_contains = c->max_contains = c->min_len = c->max_len = -1;
    if (c->boolean >= 0)
        return c;
    if (!json_is_object(node)) {
        sfail(S, r, node, err, "a schema must be an object or a boolean");
        return NULL;
    }
    return compile_body(S, r, node, c, err) < 0 ? NULL : c;
}

void golden_schema_free(golden_schema *S)
{
    if (!S)
        return;
    for (csch *c = S->all, *n; c; c = n) {
        n = c->next_alloc;
        free(c->props);
        for (size_t i = 0; i < c->npats; i++)
            pattern_free(&c->pats[i].re);
        free(c->pats);
        free(c->deps);
        free(c->depschemas);
        free(c->prefix);
        if (c->pattern) {
            pattern_free(c->pattern);
            free(c->pattern);
        }
        free(c->allof);
        free(c->anyof);
        free(c->oneof);
        free(c);
    }
    for (resource *r = S->resources, *n; r; r = n) {
        n = r->next;
        resource_free(r);
    }
    free(S->map);
    free(S);
}

int golden_schema_load(const char *ref, golden_schema **out, golden_error *err)
{
    *out = NULL;
    if (!ref || !*ref)
        return golden_fail_what(err, GOLDEN_EINVAL, NULL, "no schema named");
    golden_schema *S = calloc(1, sizeof *S);
    if (!S)
        return golden_fail_what(err, GOLDEN_ENOMEM, ref, "out of memory");
    const golden_embedded_file *f = golden_embedded_schema(ref);
    if (!f && !strncmp(ref, ID_PREFIX, strlen(ID_PREFIX)))
        f = golden_embedded_schema(ref + strlen(ID_PREFIX));
    if (!f && strchr(ref, '/') && !file_exists(ref)) {
        /* a format name: "calculet-graph/v1" -> "calculet-graph-v1.schema.json" */
        char name[512];
        size_t n = strlen(ref);
        if (n + 13 < sizeof name) {
            for (size_t i = 0; i <= n; i++)
                name[i] = ref[i] == '/' ? '-' : ref[i];
            strcat(name, ".schema.json");
            f = golden_embedded_schema(name);
        }
    }
    resource *r;
    if (f) {
        r = load_embedded(S, f, err);
    } else if (file_exists(ref)) {
        r = load_path(S, ref, err);
    } else {
        golden_schema_free(S);
        return golden_fail_what(err, GOLDEN_EINVAL, ref, "no such schema (not embedded, not a format name, not a "
                                     "file)");
    }
    if (!r) {
        golden_schema_free(S);
        return GOLDEN_ERR;
    }
    json_t *root = golden_doc_root(r->doc);
    if (!json_is_object(root) && !json_is_boolean(root)) {
        golden_schema_free(S);
        return golden_fail_what(err, GOLDEN_EINVAL, ref, "a schema must be an object or a boolean");
    }
    S->root = compile(S, r, root, err);
    if (!S->root) {
        golden_schema_free(S);
        return GOLDEN_ERR;
    }
    *out = S;
    return GOLDEN_OK;
}

/* ---------------------------------------------------------------- validating */

typedef struct {
    const char *key; /* NULL: an array index */
    size_t len;
    size_t idx;
} seg;

typedef struct {
    const golden_doc *doc;
    golden_violation *v;
    size_t nv, capv;
    int full;
    seg *path;
    size_t depth, capdepth;
    int rdepth;
    int internal;
    int in_parallel; /* inside a worker: no further splitting */
    int threads;     /* workers for a big array's items (1: no splitting) */
    golden_error *err;
    char b1[160], b2[160];
} vctx;

/* Where an instance node sits: its own position, or its slot's for true/false/null. */
typedef struct {
    const json_t *node, *parent;
    const char *key;
    size_t idx;
} inst;

static size_t pointer_of(const vctx *c, char *buf, size_t n)
{
    size_t o = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < c->depth && o + 1 < n; i++) {
        const seg *s = &c->path[i];
        buf[o++] = '/';
        if (!s->key) {
            o += (size_t)snprintf(buf + o, n - o, "%zu", s->idx);
            if (o >= n)
                o = n - 1;
            continue;
        }
        for (size_t k = 0; k < s->len && o + 2 < n; k++) {
            char ch = s->key[k];
            if (ch == '~') {
                buf[o++] = '~';
                buf[o++] = '0';
            } else if (ch == '/') {
                buf[o++] = '~';
                buf[o++] = '1';
            } else {
                buf[o++] = ch;
            }
        }
    }
    if (o >= n)
        o = n - 1;
    buf[o] = '\0';
    return o;
}

static void violation(vctx *c, const inst *in, const char *keyword, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static void violation(vctx *c, const inst *in, const char *keyword, const char *fmt, ...)
{
    if (c->full)
        return;
    if (c->nv == c->capv) {
        size_t cap = c->capv ? c->capv * 2 : 16;
        golden_violation *nv = realloc(c->v, cap * sizeof *nv);
        if (!nv) {
            c->internal = 1;
            golden_fail_what(c->err, GOLDEN_ENOMEM, golden_doc_name(c->doc), "out of memory collecting violations");
            return;
        }
        c->v = nv;
        c->capv = cap;
    }
    golden_violation *v = &c->v[c->nv++];
    if (json_is_true(in->node) || json_is_false(in->node) || json_is_null(in->node))
        golden_doc_child_where(c->doc, in->parent, in->key, in->idx, v->where, sizeof v->where);
    else
        golden_doc_where(c->doc, in->node, v->where, sizeof v->where);
    pointer_of(c, v->pointer, sizeof v->pointer);
    snprintf(v->keyword, sizeof v->keyword, "%s", keyword);
    if (c->nv == GOLDEN_SCHEMA_MAX_VIOLATIONS) {
        snprintf(v->keyword, sizeof v->keyword, "maxViolations");
        snprintf(v->message, sizeof v->message,
                 "too many violations: stopped after %d (fix these first)",
                 GOLDEN_SCHEMA_MAX_VIOLATIONS);
        c->full = 1;
        return;
    }
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(v->message, sizeof v->message, fmt, ap);
    va_end(ap);
}

static int push(vctx *c, const char *key, size_t len, size_t idx)
{
    if (c->depth == c->capdepth) {
        size_t cap = c->capdepth ? c->capdepth * 2 : 64;
        seg *p = realloc(c->path, cap * sizeof *p);
        if (!p) {
            c->internal = 1;
            golden_fail_what(c->err, GOLDEN_ENOMEM, golden_doc_name(c->doc), "out of memory");
            return -1;
        }
        c->path = p;
        c->capdepth = cap;
    }
    c->path[c->depth++] = (seg){key, len, idx};
    return 0;
}

static int type_ok(unsigned types, const json_t *v)
{
    switch (json_typeof(v)) {
    case JSON_OBJECT: return types & T_OBJECT;
    case JSON_ARRAY: return types & T_ARRAY;
    case JSON_STRING: return types & T_STRING;
    case JSON_INTEGER: return types & (T_INTEGER | T_NUMBER);
    case JSON_REAL: return (types & T_NUMBER) || ((types & T_INTEGER) && is_integral(v));
    case JSON_TRUE:
    case JSON_FALSE: return types & T_BOOLEAN;
    default: return types & T_NULL;
    }
}

static void types_text(unsigned types, char *buf, size_t n)
{
    static const char *names[] = {"null", "boolean", "object", "array", "number", "string",
                                  "integer"};
    size_t o = 0;
    int first = 1;
    buf[0] = '\0';
    for (unsigned i = 0; i < 7; i++)
        if (types & (1u << i)) {
            o += (size_t)snprintf(buf + o, o < n ? n - o : 0, "%s\"%s\"", first ? "" : " or ",
                                  names[i]);
            first = 0;
        }
}

static size_t utf8_chars(const char *s, size_t n)
{
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        k += ((unsigned char)s[i] & 0xC0) != 0x80;
    return k;
}

static int multiple_ok(const json_t *v, const json_t *m)
{
    if (json_is_integer(v) && json_is_integer(m))
        return json_integer_value(v) % json_integer_value(m) == 0;
    double x = num(v), d = num(m);
    double q = x / d;
    if (!isfinite(q))
        return 0;
    /* Decimal multiples such as 0.3 of 0.1 are not exact in binary: allow rounding. */
    return fabs(q - nearbyint(q)) <= 1e-9 * fmax(1.0, fabs(q));
}

static int validate(vctx *c, const csch *s, const inst *in, const char *via, int collect);

/* Validate a child (object member or array item) with the path extended. */
static int child(vctx *c, const csch *s, const json_t *parent, const char *key, size_t klen,
                 size_t idx, const json_t *node, const char *via, int collect)
{
    if (push(c, key, klen, idx) < 0)
        return -1;
    inst in = {node, parent, key, idx};
    int rc = validate(c, s, &in, via, collect);
    c->depth--;
    return rc;
}

/* The same order as prop_cmp, inline: property names are short, and this runs for every
 * member of every object (a library memcmp call per probe showed in profiles). */
static int key_cmp(const unsigned char *a, size_t al, const unsigned char *b, size_t bl)
{
    size_t n = al < bl ? al : bl;
    for (size_t i = 0; i < n; i++)
        if (a[i] != b[i])
            return a[i] < b[i] ? -1 : 1;
    return (al > bl) - (al < bl);
}

static const prop *find_prop(const csch *s, const char *k, size_t kl)
{
    size_t lo = 0, hi = s->nprops;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        const prop *p = &s->props[mid];
        int c = key_cmp((const unsigned char *)p->key, p->len, (const unsigned char *)k, kl);
        if (c == 0)
            return p;
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return NULL;
}

#define FAIL_OR_RETURN()                                                                       \
    do {                                                                                       \
        bad++;                                                                                 \
        if (!collect || c->full)                                                               \
            return bad;                                                                        \
    } while (0)
#define SUBCHECK(expr)                                                                         \
    do {                                                                                       \
        int r_ = (expr);                                                                       \
        if (r_ < 0)                                                                            \
            return -1;                                                                         \
        if (r_ > 0) {                                                                          \
            bad += r_;                                                                         \
            if (!collect || c->full)                                                           \
                return bad;                                                                    \
        }                                                                                      \
    } while (0)

static int validate_object(vctx *c, const csch *s, const inst *in, int collect)
{
    const json_t *o = in->node;
    int bad = 0;
    if (s->required) {
        size_t i;
        json_t *x;
        json_array_foreach(s->required, i, x)
        {
            if (!json_object_getn(o, json_string_value(x), json_string_length(x))) {
                if (collect)
                    violation(c, in, "required", "missing required property \"%s\"",
                              json_string_value(x));
                FAIL_OR_RETURN();
            }
        }
    }
    for (size_t d = 0; d < s->ndeps; d++) {
        if (!json_object_get(o, s->deps[d].key))
            continue;
        size_t i;
        json_t *x;
        json_array_foreach(s->deps[d].names, i, x)
        {
            if (!json_object_getn(o, json_string_value(x), json_string_length(x))) {
                if (collect)
                    violation(c, in, "dependentRequired",
                              "property \"%s\" requires property \"%s\"", s->deps[d].key,
                              json_string_value(x));
                FAIL_OR_RETURN();
            }
        }
    }
    size_t n = json_object_size(o);
    if (s->min_props >= 0 && (long long)n < s->min_props) {
        if (collect)
            violation(c, in, "minProperties", "expected at least %lld properties, found %zu",
                      s->min_props, n);
        FAIL_OR_RETURN();
    }
    if (s->max_props >= 0 && (long long)n > s->max_props) {
        if (collect)
            violation(c, in, "maxProperties", "expected at most %lld properties, found %zu",
                      s->max_props, n);
        FAIL_OR_RETURN();
    }
    if (s->nprops || s->npats || s->addl || s->propnames) {
        const char *k;
        size_t kl;
        json_t *v;
        json_object_keylen_foreach((json_t *)o, k, kl, v)
        {
            int matched = 0;
            if (s->propnames) {
                json_t *name = json_stringn_nocheck(k, kl);
                if (!name) {
                    c->internal = 1;
                    golden_fail_what(c->err, GOLDEN_ENOMEM, golden_doc_name(c->doc), "out of memory");
                    return -1;
                }
                if (push(c, k, kl, 0) < 0) {
                    json_decref(name);
                    return -1;
                }
                inst nin = {v, o, k, 0};
                int r = validate(c, s->propnames, &(inst){name, NULL, NULL, 0}, "propertyNames",
                                 0);
                json_decref(name);
                if (r > 0 && collect)
                    violation(c, &nin, "propertyNames",
                              "property name \"%.*s\" does not match propertyNames",
                              (int)(kl > 200 ? 200 : kl), k);
                c->depth--;
                if (r < 0)
                    return -1;
                if (r > 0)
                    FAIL_OR_RETURN();
            }
            const prop *p = find_prop(s, k, kl);
            if (p) {
                matched = 1;
                SUBCHECK(child(c, p->s, o, k, kl, 0, v, "properties", collect));
            }
            for (size_t i = 0; i < s->npats; i++) {
                if (!regex_search(&s->pats[i].re, k, kl))
                    continue;
                matched = 1;
                SUBCHECK(child(c, s->pats[i].s, o, k, kl, 0, v, "patternProperties", collect));
            }
            if (!matched && s->addl)
                SUBCHECK(child(c, s->addl, o, k, kl, 0, v, "additionalProperties", collect));
        }
    }
    for (size_t i = 0; i < s->ndepschemas; i++)
        if (json_object_getn(o, s->depschemas[i].key, s->depschemas[i].len))
            SUBCHECK(validate(c, s->depschemas[i].s, in, "dependentSchemas", collect));
    return bad;
}

typedef struct {
    uint64_t h;
    size_t i;
} hashed_item;

/* by hash, then by index, so that equal items sit together in document order */
static int hashed_cmp(const void *pa, const void *pb)
{
    const hashed_item *a = pa, *b = pb;
    if (a->h != b->h)
        return a->h < b->h ? -1 : 1;
    return (a->i > b->i) - (a->i < b->i);
}

static int unique_check(vctx *c, const inst *in, int collect)
{
    const json_t *a = in->node;
    size_t n = json_array_size(a);
    size_t first = 0, second = 0;
    int dup = 0;
    if (n <= 32) {
        for (size_t i = 0; i < n && !dup; i++)
            for (size_t j = i + 1; j < n && !dup; j++)
                if (json_same(json_array_get(a, i), json_array_get(a, j)))
                    dup = 1, first = i, second = j;
    } else {
        hashed_item *t = malloc(n * sizeof *t);
        if (!t) {
            c->internal = 1;
            golden_fail_what(c->err, GOLDEN_ENOMEM, golden_doc_name(c->doc), "out of memory");
            return -1;
        }
        for (size_t i = 0; i < n; i++)
            t[i] = (hashed_item){json_hash(json_array_get(a, i)), i};
        qsort(t, n, sizeof *t, hashed_cmp);
        /* Within a run of equal hashes (in index order) the first item that equals a later
         * one gives that run's earliest pair; the run is done then, so a million equal
         * items cost one pass, not a million squared. */
        for (size_t i = 0; i < n;) {
            size_t end = i + 1;
            while (end < n && t[end].h == t[i].h)
                end++;
            int found = 0;
            for (size_t x = i; x < end && !found; x++)
                for (size_t y = x + 1; y < end && !found; y++)
                    if (json_same(json_array_get(a, t[x].i), json_array_get(a, t[y].i))) {
                        if (!dup || t[x].i < first || (t[x].i == first && t[y].i < second))
                            first = t[x].i, second = t[y].i;
                        dup = found = 1;
                    }
            i = end;
        }
        free(t);
    }
    if (!dup)
        return 0;
    if (collect)
        violation(c, in, "uniqueItems", "items %zu and %zu are equal (uniqueItems)", first,
                  second);
    return 1;
}

#define PARALLEL_MIN_ITEMS 4096
#define CHUNKS_PER_THREAD 4 /* shares are handed out one at a time: uneven items balance */

typedef struct {
    vctx ctx;
    golden_error err;
    size_t lo, hi;
    int bad;
} items_chunk;

typedef struct {
    items_chunk *chunks;
    const csch *s;
    const json_t *a;
} items_job;

static int items_chunk_run(void *arg, size_t k, int worker, golden_error *err)
{
    (void)worker;
    items_job *job = arg;
    items_chunk *j = &job->chunks[k];
    for (size_t i = j->lo; i < j->hi && !j->ctx.full; i++) {
        int r = child(&j->ctx, job->s, job->a, NULL, 0, i, json_array_get(job->a, i), "items", 1);
        if (r < 0) {
            j->bad = -1;
            *err = j->err;
            return GOLDEN_ERR;
        }
        j->bad += r;
    }
    return GOLDEN_OK;
}

/* A chunk's own context: the parent's path so far, its own violation list. */
static int items_chunk_init(items_chunk *j, const vctx *c, size_t lo, size_t hi)
{
    memset(j, 0, sizeof *j);
    j->ctx.doc = c->doc;
    j->ctx.err = &j->err;
    j->ctx.in_parallel = 1;
    j->ctx.threads = 1;
    j->ctx.rdepth = c->rdepth;
    j->ctx.path = malloc((c->depth + 64) * sizeof *j->ctx.path);
    if (!j->ctx.path)
        return golden_fail_what(c->err, GOLDEN_ENOMEM, golden_doc_name(c->doc), "out of memory");
    if (c->depth)
        memcpy(j->ctx.path, c->path, c->depth * sizeof *c->path);
    j->ctx.depth = c->depth;
    j->ctx.capdepth = c->depth + 64;
    j->lo = lo;
    j->hi = hi;
    return GOLDEN_OK;
}

/* Append a chunk's violations to c's, stopping at the limit as violation() does. */
static int items_chunk_join(vctx *c, const items_chunk *j)
{
    for (size_t k = 0; k < j->ctx.nv && !c->full; k++) {
        if (c->nv == c->capv) {
            size_t cap = c->capv ? c->capv * 2 : 16;
            golden_violation *nv = realloc(c->v, cap * sizeof *nv);
            if (!nv)
                return golden_fail_what(c->err, GOLDEN_ENOMEM, golden_doc_name(c->doc),
                                        "out of memory");
            c->v = nv;
            c->capv = cap;
        }
        c->v[c->nv++] = j->ctx.v[k];
        if (c->nv == GOLDEN_SCHEMA_MAX_VIOLATIONS) {
            golden_violation *last = &c->v[c->nv - 1];
            snprintf(last->keyword, sizeof last->keyword, "maxViolations");
            snprintf(last->message, sizeof last->message,
                     "too many violations: stopped after %d (fix these first)",
                     GOLDEN_SCHEMA_MAX_VIOLATIONS);
            c->full = 1;
        }
    }
    return GOLDEN_OK;
}

/* Items lo..hi of array a against s, in chunks on c->threads workers of the library's pool,
 * each chunk with its own violation list; the lists are joined in item order, so the result
 * does not depend on the number of threads. */
static int items_parallel(vctx *c, const csch *s, const json_t *a, size_t lo, size_t hi)
{
    size_t nchunks = (size_t)c->threads * CHUNKS_PER_THREAD;
    size_t per = (hi - lo + nchunks - 1) / nchunks;
    nchunks = (hi - lo + per - 1) / per;
    items_chunk *chunks = calloc(nchunks, sizeof *chunks);
    if (!chunks) {
        c->internal = 1;
        golden_fail_what(c->err, GOLDEN_ENOMEM, golden_doc_name(c->doc), "out of memory");
        return -1;
    }
    int rc = GOLDEN_OK;
    size_t ready = 0;
    for (; ready < nchunks && rc == GOLDEN_OK; ready++) {
        size_t from = lo + per * ready, to = from + per < hi ? from + per : hi;
        rc = items_chunk_init(&chunks[ready], c, from, to);
    }
    if (rc != GOLDEN_OK)
        ready--; /* the failed one owns nothing */
    items_job job = {chunks, s, a};
    if (rc == GOLDEN_OK)
        rc = golden_parallel_for(nchunks, c->threads, items_chunk_run, &job, c->err);
    int bad = 0;
    for (size_t k = 0; k < ready; k++) {
        if (rc == GOLDEN_OK)
            rc = items_chunk_join(c, &chunks[k]);
        if (chunks[k].bad > 0)
            bad += chunks[k].bad;
        free(chunks[k].ctx.v);
        free(chunks[k].ctx.path);
    }
    free(chunks);
    if (rc != GOLDEN_OK) {
        c->internal = 1;
        return -1;
    }
    return bad;
}

static int validate_array(vctx *c, const csch *s, const inst *in, int collect)
{
    const json_t *a = in->node;
    size_t n = json_array_size(a);
    int bad = 0;
    if (s->min_items >= 0 && (long long)n < s->min_items) {
        if (collect)
            violation(c, in, "minItems", "expected at least %lld items, found %zu", s->min_items,
                      n);
        FAIL_OR_RETURN();
    }
    if (s->max_items >= 0 && (long long)n > s->max_items) {
        if (collect)
            violation(c, in, "maxItems", "expected at most %lld items, found %zu", s->max_items,
                      n);
        FAIL_OR_RETURN();
    }
    if (s->unique)
        SUBCHECK(unique_check(c, in, collect));
    if (collect && !c->in_parallel && c->threads > 1 && !c->full &&
        n - (n < s->nprefix ? n : s->nprefix) >=
                                                      PARALLEL_MIN_ITEMS &&
        s->items) {
        /* A big array (a graph's ops): its items are checked on all cores. */
        size_t from = s->nprefix < n ? s->nprefix : n;
        for (size_t i = 0; i < from; i++)
            SUBCHECK(child(c, s->prefix[i], a, NULL, 0, i, json_array_get(a, i), "prefixItems",
                           collect));
        int r = items_parallel(c, s->items, a, from, n);
        if (r < 0)
            return -1;
        bad += r;
        if (r && c->full)
            return bad;
    } else for (size_t i = 0; i < n; i++) {
        const csch *is = i < s->nprefix ? s->prefix[i] : s->items;
        if (is)
            SUBCHECK(child(c, is, a, NULL, 0, i, json_array_get(a, i),
                           i < s->nprefix ? "prefixItems" : "items", collect));
    }
    if (s->contains) {
        long long matches = 0;
        long long minc = s->min_contains >= 0 ? s->min_contains : 1;
        for (size_t i = 0; i < n; i++) {
            int r = child(c, s->contains, a, NULL, 0, i, json_array_get(a, i), "contains", 0);
            if (r < 0)
                return -1;
            matches += r == 0;
        }
        if (matches < minc) {
            if (collect) {
                if (s->min_contains < 0)
                    violation(c, in, "contains", "no item matches the contains schema");
                else
                    violation(c, in, "minContains",
                              "%lld items match the contains schema, fewer than minContains %lld",
                              matches, minc);
            }
            FAIL_OR_RETURN();
        }
        if (s->max_contains >= 0 && matches > s->max_contains) {
            if (collect)
                violation(c, in, "maxContains",
                          "%lld items match the contains schema, more than maxContains %lld",
                          matches, s->max_contains);
            FAIL_OR_RETURN();
        }
    }
    return bad;
}

static int validate(vctx *c, const csch *s, const inst *in, const char *via, int collect)
{
    if (s->boolean == 1)
        return 0;
    if (s->boolean == 0) {
        if (collect) {
            if (via && !strcmp(via, "additionalProperties") && c->depth)
                violation(c, in, via, "property \"%.*s\" is not allowed",
                          (int)(c->path[c->depth - 1].len > 200 ? 200
                                                                 : c->path[c->depth - 1].len),
                          c->path[c->depth - 1].key ? c->path[c->depth - 1].key : "");
            else
                violation(c, in, via ? via : "false", "no value is allowed here (schema false)");
        }
        return 1;
    }
    if (++c->rdepth > MAX_RECURSION) {
        char ptr[512];
        pointer_of(c, ptr, sizeof ptr);
        c->internal = 1;
        golden_fail_where(c->err, GOLDEN_EINVAL, "schema recursion deeper than 2048 levels (a $ref loop?)",
                     "%s#%s", golden_doc_name(c->doc), ptr);
        return -1;
    }
    int bad = 0;
    const json_t *v = in->node;
    /* message scratch lives in the context: validate() recurses, its frame stays small */
    char *b1 = c->b1, *b2 = c->b2;
    if (s->types && !type_ok(s->types, v)) {
        if (collect) {
            types_text(s->types, b2, sizeof c->b2);
            violation(c, in, "type", "%s is not of type %s", show(v, b1, 80), b2);
        }
        bad++;
        if (!collect || c->full)
            goto out;
    }
    if (s->has_const && !json_same(v, s->const_)) {
        if (collect)
            violation(c, in, "const", "%s is not equal to %s", show(v, b1, 80),
                      show(s->const_, b2, 80));
        bad++;
        if (!collect || c->full)
            goto out;
    }
    if (s->enum_) {
        size_t i;
        json_t *e;
        int found = 0;
        json_array_foreach(s->enum_, i, e) if (json_same(v, e))
        {
            found = 1;
            break;
        }
        if (!found) {
            if (collect)
                violation(c, in, "enum", "%s is not one of %s", show(v, b1, 80),
                          show(s->enum_, b2, 120));
            bad++;
            if (!collect || c->full)
                goto out;
        }
    }
    if (json_is_number(v)) {
        const char *kw = NULL;
        const json_t *bound = NULL;
        const char *what = NULL;
        for (int k = 0; k < 5; k++) {
            kw = NULL;
            if (k == 0 && s->minimum && num_cmp(v, s->minimum) < 0)
                kw = "minimum", bound = s->minimum, what = "less than the minimum";
            else if (k == 1 && s->maximum && num_cmp(v, s->maximum) > 0)
                kw = "maximum", bound = s->maximum, what = "greater than the maximum";
            else if (k == 2 && s->xminimum && num_cmp(v, s->xminimum) <= 0)
                kw = "exclusiveMinimum", bound = s->xminimum,
                what = "not greater than the exclusive minimum";
            else if (k == 3 && s->xmaximum && num_cmp(v, s->xmaximum) >= 0)
                kw = "exclusiveMaximum", bound = s->xmaximum,
                what = "not less than the exclusive maximum";
            else if (k == 4 && s->multiple && !multiple_ok(v, s->multiple))
                kw = "multipleOf", bound = s->multiple, what = "not a multiple of";
            if (!kw)
                continue;
            if (collect)
                violation(c, in, kw, "%s is %s %s", show(v, b1, 80), what, show(bound, b2, 80));
            bad++;
            if (!collect || c->full)
                goto out;
        }
    } else if (json_is_string(v)) {
        const char *str = json_string_value(v);
        size_t len = json_string_length(v);
        if (s->min_len >= 0 || s->max_len >= 0) {
            size_t chars = utf8_chars(str, len);
            if (s->min_len >= 0 && (long long)chars < s->min_len) {
                if (collect)
                    violation(c, in, "minLength", "%s is shorter than %lld characters",
                              show(v, b1, 80), s->min_len);
                bad++;
                if (!collect || c->full)
                    goto out;
            }
            if (s->max_len >= 0 && (long long)chars > s->max_len) {
                if (collect)
                    violation(c, in, "maxLength", "%s is longer than %lld characters",
                              show(v, b1, 80), s->max_len);
                bad++;
                if (!collect || c->full)
                    goto out;
            }
        }
        if (s->pattern && !regex_search(s->pattern, str, len)) {
            if (collect)
                violation(c, in, "pattern", "%s does not match pattern %s", show(v, b1, 80),
                          s->pattern_src);
            bad++;
            if (!collect || c->full)
                goto out;
        }
    } else if (json_is_object(v)) {
        int r = validate_object(c, s, in, collect);
        if (r < 0) {
            bad = -1;
            goto out;
        }
        bad += r;
        if (r && (!collect || c->full))
            goto out;
    } else if (json_is_array(v)) {
        int r = validate_array(c, s, in, collect);
        if (r < 0) {
            bad = -1;
            goto out;
        }
        bad += r;
        if (r && (!collect || c->full))
            goto out;
    }
#define SUB(expr)                                                                              \
    do {                                                                                       \
        int r_ = (expr);                                                                       \
        if (r_ < 0) {                                                                          \
            bad = -1;                                                                          \
            goto out;                                                                          \
        }                                                                                      \
        if (r_ > 0) {                                                                          \
            bad += r_;                                                                         \
            if (!collect || c->full)                                                           \
                goto out;                                                                      \
        }                                                                                      \
    } while (0)
    if (s->ref)
        SUB(validate(c, s->ref, in, "$ref", collect));
    for (size_t i = 0; i < s->nallof; i++)
        SUB(validate(c, s->allof[i], in, "allOf", collect));
    if (s->nanyof) {
        int any = 0;
        for (size_t i = 0; i < s->nanyof && !any; i++) {
            int r = validate(c, s->anyof[i], in, "anyOf", 0);
            if (r < 0) {
                bad = -1;
                goto out;
            }
            any = r == 0;
        }
        if (!any) {
            if (collect)
                violation(c, in, "anyOf", "%s matches none of the %zu schemas in anyOf",
                          show(v, b1, 80), s->nanyof);
            SUB(1);
        }
    }
    if (s->noneof) {
        size_t matches = 0;
        for (size_t i = 0; i < s->noneof && matches < 2; i++) {
            int r = validate(c, s->oneof[i], in, "oneOf", 0);
            if (r < 0) {
                bad = -1;
                goto out;
            }
            matches += r == 0;
        }
        if (matches != 1) {
            if (collect) {
                if (matches == 0)
                    violation(c, in, "oneOf", "%s matches none of the %zu schemas in oneOf",
                              show(v, b1, 80), s->noneof);
                else
                    violation(c, in, "oneOf",
                              "%s matches more than one of the %zu schemas in oneOf",
                              show(v, b1, 80), s->noneof);
            }
            SUB(1);
        }
    }
    if (s->not_) {
        int r = validate(c, s->not_, in, "not", 0);
        if (r < 0) {
            bad = -1;
            goto out;
        }
        if (r == 0) {
            if (collect)
                violation(c, in, "not", "%s must not match the schema in not", show(v, b1, 80));
            SUB(1);
        }
    }
    if (s->if_ && (s->then_ || s->else_)) {
        int r = validate(c, s->if_, in, "if", 0);
        if (r < 0) {
            bad = -1;
            goto out;
        }
        if (r == 0 && s->then_)
            SUB(validate(c, s->then_, in, "then", collect));
        else if (r > 0 && s->else_)
            SUB(validate(c, s->else_, in, "else", collect));
    }
#undef SUB
out:
    c->rdepth--;
    return bad;
}

long golden_schema_validate_opts(const golden_schema *s, const golden_doc *doc,
                                 const json_t *instance, const golden_schema_options *opts,
                                 golden_violation **out, golden_error *err)
{
    *out = NULL;
    if (!s || !doc)
        return golden_fail_what(err, GOLDEN_EINVAL, NULL, "no schema or no document"), -1;
    if (opts && opts->version != GOLDEN_SCHEMA_OPTIONS_VERSION)
        return golden_fail_what(err, GOLDEN_EINVAL, NULL,
                                "schema options of version %u (this libgolden knows %u)",
                                opts->version, GOLDEN_SCHEMA_OPTIONS_VERSION), -1;
    vctx c = {0};
    c.doc = doc;
    c.err = err;
    c.threads = opts && opts->threads > 0 ? opts->threads : golden_cpu_count();
    if (c.threads > GOLDEN_POOL_MAX)
        c.threads = GOLDEN_POOL_MAX;
    inst in = {instance ? instance : golden_doc_root(doc), NULL, NULL, 0};
    int r = validate(&c, s->root, &in, NULL, 1);
    free(c.path);
    if (r < 0 || c.internal) {
        free(c.v);
        return -1;
    }
    *out = c.v;
    return (long)c.nv;
}

long golden_schema_validate(const golden_schema *s, const golden_doc *doc,
                            const json_t *instance, golden_violation **out, golden_error *err)
{
    return golden_schema_validate_opts(s, doc, instance, NULL, out, err);
}

int golden_schema_check_opts(const golden_schema *s, const golden_doc *doc,
                             const golden_schema_options *opts, golden_error *err)
{
    golden_violation *v;
    long n = golden_schema_validate_opts(s, doc, NULL, opts, &v, err);
    if (n < 0)
        return GOLDEN_ERR;
    if (n == 0) {
        free(v);
        return GOLDEN_OK;
    }
    golden_fail_what(err, GOLDEN_EINVAL, v[0].where, "%s: %s (%s)", v[0].pointer[0] ? v[0].pointer : "(root)",
                v[0].message, v[0].keyword);
    free(v);
    return GOLDEN_ERR;
}

int golden_schema_check(const golden_schema *s, const golden_doc *doc, golden_error *err)
{
    return golden_schema_check_opts(s, doc, NULL, err);
}
