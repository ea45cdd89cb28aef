/* ECMA-262 patterns of schemas: translated to POSIX ERE for regexec, and the simple ones (no
 * groups or alternation) compiled to a bit-parallel matcher that needs no lock. */
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

int sch_compile_regex(pattern_t *p, const char *src, const char **why)
{
    p->fast = NULL;
    char *ere = translate_pattern(src, why);
    if (!ere)
        return *why ? -1 : SCH_REGEX_NOMEM; /* no reason: its buffer could not be allocated */
    int rc = regcomp(&p->re, ere, REG_EXTENDED | REG_NOSUB);
    free(ere);
    if (rc == REG_ESPACE)
        return SCH_REGEX_NOMEM;
    if (rc != 0) {
        *why = "regcomp rejected it (not valid POSIX ERE)";
        return -1;
    }
    p->fast = fast_compile(src);
    return 0;
}

void sch_pattern_free(pattern_t *p)
{
    regfree(&p->re);
    free(p->fast);
}

int sch_regex_search(const pattern_t *p, const char *s, size_t len)
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
