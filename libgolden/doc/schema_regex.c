/* ECMA-262 patterns of schemas: compiled by PCRE2 in its ECMAScript-like options, and the
 * simple ones (no groups or alternation) also to a bit-parallel matcher for ASCII subjects. */
#include "doc/schema_internal.h"

#include <ctype.h>
#include <math.h>
#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* ECMA-262 patterns (what JSON Schema means) run on PCRE2 with the options closest to
 * ECMAScript: UTF, $ only at the very end, \u escapes, [^] and [] as in ECMAScript, and no
 * implicit anchoring. \d and \w stay ASCII (as in ECMAScript); \s and \S are widened to
 * ECMAScript's white space (which includes the Unicode space separators), the one escape
 * where PCRE2's ASCII default differs. Returns a malloc'd PCRE2 pattern. */
#define ECMA_SPACE "\\t\\n\\u000b\\f\\r \\u00a0\\u1680\\u2000-\\u200a\\u2028\\u2029" \
                   "\\u202f\\u205f\\u3000\\ufeff"
/* ECMAScript's long General_Category names (\p{Letter}) and its "gc=" / "General_Category="
 * / "sc=" / "Script=" prefixes; PCRE2 10.42 knows the short names and bare script names. */
static const char *const gc_names[][2] = {
    {"Letter", "L"}, {"Cased_Letter", "L&"}, {"Uppercase_Letter", "Lu"},
    {"Lowercase_Letter", "Ll"}, {"Titlecase_Letter", "Lt"}, {"Modifier_Letter", "Lm"},
    {"Other_Letter", "Lo"}, {"Mark", "M"}, {"Combining_Mark", "M"}, {"Nonspacing_Mark", "Mn"},
    {"Spacing_Mark", "Mc"}, {"Enclosing_Mark", "Me"}, {"Number", "N"}, {"Decimal_Number", "Nd"},
    {"digit", "Nd"}, {"Letter_Number", "Nl"}, {"Other_Number", "No"}, {"Punctuation", "P"},
    {"punct", "P"}, {"Connector_Punctuation", "Pc"}, {"Dash_Punctuation", "Pd"},
    {"Open_Punctuation", "Ps"}, {"Close_Punctuation", "Pe"}, {"Initial_Punctuation", "Pi"},
    {"Final_Punctuation", "Pf"}, {"Other_Punctuation", "Po"}, {"Symbol", "S"},
    {"Math_Symbol", "Sm"}, {"Currency_Symbol", "Sc"}, {"Modifier_Symbol", "Sk"},
    {"Other_Symbol", "So"}, {"Separator", "Z"}, {"Space_Separator", "Zs"},
    {"Line_Separator", "Zl"}, {"Paragraph_Separator", "Zp"}, {"Other", "C"},
    {"Control", "Cc"}, {"cntrl", "Cc"}, {"Format", "Cf"}, {"Surrogate", "Cs"},
    {"Private_Use", "Co"}, {"Unassigned", "Cn"}};

/* Write \p{name} (or \P) in PCRE2's spelling; returns the characters of src consumed. */
static size_t property_escape(const char *src, char **o)
{
    if (src[2] != '{') /* a pattern may end in \p: src[2] is then its NUL, src + 3 beyond it */
        return 0;
    const char *close = strchr(src + 3, '}');
    if (!close)
        return 0;
    const char *name = src + 3;
    size_t len = (size_t)(close - name);
    static const char *const prefixes[] = {"General_Category=", "gc=", "Script=", "sc="};
    for (size_t i = 0; i < 4; i++) {
        size_t pl = strlen(prefixes[i]);
        if (len > pl && !strncmp(name, prefixes[i], pl)) {
            name += pl;
            len -= pl;
            break;
        }
    }
    const char *pcre = NULL;
    for (size_t i = 0; i < sizeof gc_names / sizeof *gc_names && !pcre; i++)
        if (strlen(gc_names[i][0]) == len && !strncmp(name, gc_names[i][0], len))
            pcre = gc_names[i][1];
    *o += sprintf(*o, "\\%c{%.*s}", src[1], pcre ? (int)strlen(pcre) : (int)len, pcre ? pcre : name);
    return (size_t)(close - src) + 1;
}

static char *translate_pattern(const char *src)
{
    size_t n = strlen(src);
    char *out = malloc(n * 80 + 16), *o = out;
    if (!out)
        return NULL;
    int in_class = 0;
    for (size_t i = 0; i < n; i++) {
        char c = src[i];
        if (c == '\\' && i + 1 < n) {
            char e = src[i + 1];
            if (e == 's' || (e == 'S' && !in_class)) {
                o += sprintf(o, "%s%s%s", in_class ? "" : (e == 's' ? "[" : "[^"), ECMA_SPACE,
                             in_class ? "" : "]");
                i++;
                continue;
            }
            if (e == 'p' || e == 'P') {
                size_t used = property_escape(src + i, &o);
                if (used) {
                    i += used - 1;
                    continue;
                }
            }
            *o++ = c;
            *o++ = src[++i];
            continue;
        }
        if (c == '[' && !in_class)
            in_class = 1;
        else if (c == ']' && in_class)
            in_class = 0;
        *o++ = c;
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
        *wide = 1; /* ECMAScript's \s also matches U+00A0, U+2003, U+FEFF...: PCRE2 decides those */
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

/* Backtracking budget of one match: a catastrophic pattern stops here with an error. */
#define MATCH_LIMIT 2000000u
#define DEPTH_LIMIT 20000u

int sch_compile_regex(pattern_t *p, const char *src, const char **why)
{
    static _Thread_local char msg[160];
    p->fast = NULL;
    p->code = p->mctx = NULL;
    char *pat = translate_pattern(src);
    if (!pat)
        return SCH_REGEX_NOMEM;
    pcre2_compile_context *cc = pcre2_compile_context_create(NULL);
    if (!cc) {
        free(pat);
        return SCH_REGEX_NOMEM;
    }
    pcre2_set_compile_extra_options(cc, PCRE2_EXTRA_ALT_BSUX);
    pcre2_set_newline(cc, PCRE2_NEWLINE_ANY); /* "." stops at \r, \u2028, \u2029 too */
    int ec;
    PCRE2_SIZE off;
    pcre2_code *code = pcre2_compile((PCRE2_SPTR)pat, PCRE2_ZERO_TERMINATED,
                                     PCRE2_UTF | PCRE2_DOLLAR_ENDONLY | PCRE2_ALT_BSUX |
                                         PCRE2_ALLOW_EMPTY_CLASS | PCRE2_NO_UTF_CHECK,
                                     &ec, &off, cc);
    pcre2_compile_context_free(cc);
    free(pat);
    if (!code) {
        if (ec == PCRE2_ERROR_NOMEMORY)
            return SCH_REGEX_NOMEM;
        char buf[120];
        pcre2_get_error_message(ec, (PCRE2_UCHAR *)buf, sizeof buf);
        snprintf(msg, sizeof msg, "not a valid ECMA-262 pattern (PCRE2: %s)", buf);
        *why = msg;
        return -1;
    }
    pcre2_match_context *mc = pcre2_match_context_create(NULL);
    if (!mc) {
        pcre2_code_free(code);
        return SCH_REGEX_NOMEM;
    }
    pcre2_set_match_limit(mc, MATCH_LIMIT);
    pcre2_set_depth_limit(mc, DEPTH_LIMIT);
    p->code = code;
    p->mctx = mc;
    p->fast = fast_compile(src);
    return 0;
}

void sch_pattern_free(pattern_t *p)
{
    pcre2_code_free(p->code);
    pcre2_match_context_free(p->mctx);
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
    pcre2_match_data *md = pcre2_match_data_create(1, NULL);
    if (!md)
        return SCH_REGEX_NOMEM;
    /* jansson strings are valid UTF-8 */
    int rc = pcre2_match(p->code, (PCRE2_SPTR)s, len, 0, PCRE2_NO_UTF_CHECK, md, p->mctx);
    pcre2_match_data_free(md);
    if (rc >= 0)
        return 1;
    if (rc == PCRE2_ERROR_NOMATCH)
        return 0;
    if (rc == PCRE2_ERROR_NOMEMORY)
        return SCH_REGEX_NOMEM;
    return -1; /* match or depth limit, or another failure to decide */
}
