/* Validating a document against a compiled schema: every violation with its place, JSON
 * Pointer and keyword, big arrays' items on the library's pool. */
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

#include "util/pool.h"
#include "util/suggest.h"
#include "util/vec.h"

typedef struct {
    const char *key; /* NULL: an array index */
    size_t len;
    size_t idx;
} seg;

/* The dynamic scope: the schema resources entered so far, innermost first, on the C stack. */
typedef struct scope_node {
    const sres *r;
    const struct scope_node *up;
} scope_node;

typedef struct {
    const golden_schema *S;
    const scope_node *scope;
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
    const csch *addl_of; /* the object schema whose additionalProperties is being applied:
                            its property names are the "did you mean" candidates */
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
    if (VEC_GROW(c->v, c->nv, c->capv, 16) != 0) {
        c->internal = 1;
        golden_fail_what(c->err, GOLDEN_ENOMEM, golden_doc_name(c->doc), "out of memory collecting violations");
        return;
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
    if (VEC_GROW(c->path, c->depth, c->capdepth, 64) != 0) {
        c->internal = 1;
        golden_fail_what(c->err, GOLDEN_ENOMEM, golden_doc_name(c->doc), "out of memory");
        return -1;
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
    case JSON_REAL: return (types & T_NUMBER) || ((types & T_INTEGER) && sch_is_integral(v));
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
    double x = sch_num(v), d = sch_num(m);
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

/* A pattern that hit PCRE2's match limits (catastrophic backtracking) cannot be decided:
 * an error, never a pass or a hang. */
static int regex_error(vctx *c, const inst *in, const char *src, int m)
{
    char where[512];
    c->internal = 1;
    golden_doc_where(c->doc, in->node, where, sizeof where);
    if (m == SCH_REGEX_NOMEM)
        golden_fail_what(c->err, GOLDEN_ENOMEM, where, "out of memory matching pattern %s", src);
    else
        golden_fail_what(c->err, GOLDEN_EINVAL, where,
                         "pattern %s: the match limit was hit (catastrophic backtracking); "
                         "the document cannot be checked against it", src);
    return -1;
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

/* The names a schema allows for a string, as "did you mean" candidates: its const and enum
 * strings, through $ref and the combinators (a few levels: candidates, not a proof). */
static void offer_names(lg_suggest *sg, const csch *s, int depth)
{
    if (!s || depth > 8)
        return;
    if (s->const_ && json_is_string(s->const_))
        lg_suggest_offer(sg, json_string_value(s->const_), json_string_length(s->const_));
    if (s->enum_) {
        size_t i;
        json_t *e;
        json_array_foreach(s->enum_, i, e) if (json_is_string(e))
            lg_suggest_offer(sg, json_string_value(e), json_string_length(e));
    }
    offer_names(sg, s->ref, depth + 1);
    for (size_t i = 0; i < s->nallof; i++)
        offer_names(sg, s->allof[i], depth + 1);
    for (size_t i = 0; i < s->nanyof; i++)
        offer_names(sg, s->anyof[i], depth + 1);
    for (size_t i = 0; i < s->noneof; i++)
        offer_names(sg, s->oneof[i], depth + 1);
}

/* A missing required property with a key of the object close to it that the schema does not
 * declare ("mach" for "match"): " (\"mach\" is there: did you mean match?)" into buf, else "". */
static const char *near_required(const csch *s, const json_t *o, const char *want, size_t wl,
                                 char *buf, size_t n)
{
    const char *k;
    size_t kl;
    json_t *v;
    buf[0] = '\0';
    json_object_keylen_foreach((json_t *)o, k, kl, v)
    {
        (void)v;
        if (find_prop(s, k, kl) || !lg_name_close(k, kl, want, wl, NULL))
            continue;
        snprintf(buf, n, " (\"%.*s\" is there: did you mean %.*s?)", (int)(kl > 100 ? 100 : kl), k,
                 (int)(wl > 100 ? 100 : wl), want);
        break;
    }
    return buf;
}

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
                if (collect) {
                    char hint[300];
                    violation(c, in, "required", "missing required property \"%s\"%s",
                              json_string_value(x),
                              near_required(s, o, json_string_value(x), json_string_length(x),
                                            hint, sizeof hint));
                }
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
                if (r > 0 && collect) {
                    /* a near miss of a name the schema allows: say which */
                    char hint[300];
                    lg_suggest sg;
                    lg_suggest_init(&sg, k, kl);
                    offer_names(&sg, s->propnames, 0);
                    lg_suggest_text(&sg, "", hint, sizeof hint);
                    violation(c, &nin, "propertyNames",
                              "property name \"%.*s\" does not match propertyNames%s",
                              (int)(kl > 200 ? 200 : kl), k, hint);
                }
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
                int m = sch_regex_search(&s->pats[i].re, k, kl);
                if (m < 0)
                    return regex_error(c, &(inst){v, o, k, 0}, s->pats[i].src, m);
                if (!m)
                    continue;
                matched = 1;
                SUBCHECK(child(c, s->pats[i].s, o, k, kl, 0, v, "patternProperties", collect));
            }
            if (!matched && s->addl) {
                c->addl_of = s; /* read by validate_false only, right below */
                SUBCHECK(child(c, s->addl, o, k, kl, 0, v, "additionalProperties", collect));
            }
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
                if (sch_json_same(json_array_get(a, i), json_array_get(a, j)))
                    dup = 1, first = i, second = j;
    } else {
        hashed_item *t = malloc(n * sizeof *t);
        if (!t) {
            c->internal = 1;
            golden_fail_what(c->err, GOLDEN_ENOMEM, golden_doc_name(c->doc), "out of memory");
            return -1;
        }
        for (size_t i = 0; i < n; i++)
            t[i] = (hashed_item){sch_json_hash(json_array_get(a, i)), i};
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
                    if (sch_json_same(json_array_get(a, t[x].i), json_array_get(a, t[y].i))) {
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
    if (j->ctx.internal) {
        /* a violation could not be recorded (out of memory): the list is incomplete, and an
         * incomplete list must never pass for a complete one */
        *err = j->err;
        return GOLDEN_ERR;
    }
    return GOLDEN_OK;
}

/* A chunk's own context: the parent's path so far, its own violation list. */
static int items_chunk_init(items_chunk *j, const vctx *c, size_t lo, size_t hi)
{
    memset(j, 0, sizeof *j);
    j->ctx.doc = c->doc;
    j->ctx.S = c->S;
    j->ctx.scope = c->scope; /* the caller's frames outlive the workers */
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
        if (VEC_GROW(c->v, c->nv, c->capv, 16) != 0)
            return golden_fail_what(c->err, GOLDEN_ENOMEM, golden_doc_name(c->doc),
                                    "out of memory");
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
        rc = lg_parallel_for(nchunks, c->threads, items_chunk_run, &job, c->err);
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

/* Each check below returns how many of its keywords failed (0: all passed) or -1 on an
 * internal error. A failure ends the check early when nothing more is collected (collect
 * is 0: the caller only asks pass or fail) or the violation list is full. */
#define STOP_EARLY() (!collect || c->full)

/* The schema `false` (or additionalProperties: false for this property). */
static int validate_false(vctx *c, const inst *in, const char *via, int collect)
{
    if (!collect)
        return 1;
    if (via && (!strcmp(via, "additionalProperties") || !strcmp(via, "unevaluatedProperties")) &&
        c->depth && c->path[c->depth - 1].key) {
        const seg *last = &c->path[c->depth - 1];
        /* a near miss of a declared property: say which (util/suggest.h, as the tools do for
         * options) */
        char hint[300] = "";
        if (!strcmp(via, "additionalProperties") && c->addl_of) {
            lg_suggest sg;
            lg_suggest_init(&sg, last->key, last->len);
            for (size_t i = 0; i < c->addl_of->nprops; i++)
                lg_suggest_offer(&sg, c->addl_of->props[i].key, c->addl_of->props[i].len);
            lg_suggest_text(&sg, "", hint, sizeof hint);
        }
        violation(c, in, via, "property \"%.*s\" is not allowed%s",
                  (int)(last->len > 200 ? 200 : last->len), last->key ? last->key : "", hint);
    } else {
        violation(c, in, via ? via : "false", "no value is allowed here (schema false)");
    }
    return 1;
}

/* type, const, enum. */
static int validate_values(vctx *c, const csch *s, const inst *in, int collect)
{
    const json_t *v = in->node;
    char *b1 = c->b1, *b2 = c->b2; /* scratch in the context: validate() recurses */
    int bad = 0;
    if (s->types && !type_ok(s->types, v)) {
        if (collect) {
            types_text(s->types, b2, sizeof c->b2);
            violation(c, in, "type", "%s is not of type %s", sch_show(v, b1, 80), b2);
        }
        if (++bad && STOP_EARLY())
            return bad;
    }
    if (s->has_const && !sch_json_same(v, s->const_)) {
        if (collect)
            violation(c, in, "const", "%s is not equal to %s", sch_show(v, b1, 80),
                      sch_show(s->const_, b2, 80));
        if (++bad && STOP_EARLY())
            return bad;
    }
    if (s->enum_) {
        size_t i;
        json_t *e;
        int found = 0;
        json_array_foreach(s->enum_, i, e) if (sch_json_same(v, e))
        {
            found = 1;
            break;
        }
        if (!found) {
            if (collect) {
                char hint[300] = "";
                if (json_is_string(v)) { /* a near miss of an allowed string: say which */
                    lg_suggest sg;
                    lg_suggest_init(&sg, json_string_value(v), json_string_length(v));
                    offer_names(&sg, s, 0);
                    lg_suggest_text(&sg, "", hint, sizeof hint);
                }
                violation(c, in, "enum", "%s is not one of %s%s", sch_show(v, b1, 80),
                          sch_show(s->enum_, b2, 120), hint);
            }
            bad++;
        }
    }
    return bad;
}

/* minimum, maximum, exclusiveMinimum, exclusiveMaximum, multipleOf. */
static int validate_number(vctx *c, const csch *s, const inst *in, int collect)
{
    const json_t *v = in->node;
    int bad = 0;
    for (int k = 0; k < 5; k++) {
        const char *kw = NULL, *what = NULL;
        const json_t *bound = NULL;
        if (k == 0 && s->minimum && sch_num_cmp(v, s->minimum) < 0)
            kw = "minimum", bound = s->minimum, what = "less than the minimum";
        else if (k == 1 && s->maximum && sch_num_cmp(v, s->maximum) > 0)
            kw = "maximum", bound = s->maximum, what = "greater than the maximum";
        else if (k == 2 && s->xminimum && sch_num_cmp(v, s->xminimum) <= 0)
            kw = "exclusiveMinimum", bound = s->xminimum,
            what = "not greater than the exclusive minimum";
        else if (k == 3 && s->xmaximum && sch_num_cmp(v, s->xmaximum) >= 0)
            kw = "exclusiveMaximum", bound = s->xmaximum,
            what = "not less than the exclusive maximum";
        else if (k == 4 && s->multiple && !multiple_ok(v, s->multiple))
            kw = "multipleOf", bound = s->multiple, what = "not a multiple of";
        if (!kw)
            continue;
        if (collect)
            violation(c, in, kw, "%s is %s %s", sch_show(v, c->b1, 80), what,
                      sch_show(bound, c->b2, 80));
        if (++bad && STOP_EARLY())
            return bad;
    }
    return bad;
}

/* minLength, maxLength (in characters), pattern. */
static int validate_string(vctx *c, const csch *s, const inst *in, int collect)
{
    const json_t *v = in->node;
    const char *str = json_string_value(v);
    size_t len = json_string_length(v);
    char *b1 = c->b1;
    int bad = 0;
    if (s->min_len >= 0 || s->max_len >= 0) {
        size_t chars = utf8_chars(str, len);
        if (s->min_len >= 0 && (long long)chars < s->min_len) {
            if (collect)
                violation(c, in, "minLength", "%s is shorter than %lld characters",
                          sch_show(v, b1, 80), s->min_len);
            if (++bad && STOP_EARLY())
                return bad;
        }
        if (s->max_len >= 0 && (long long)chars > s->max_len) {
            if (collect)
                violation(c, in, "maxLength", "%s is longer than %lld characters",
                          sch_show(v, b1, 80), s->max_len);
            if (++bad && STOP_EARLY())
                return bad;
        }
    }
    int m = s->pattern ? sch_regex_search(s->pattern, str, len) : 1;
    if (m < 0)
        return regex_error(c, in, s->pattern_src, m);
    if (s->format && !sch_format_ok(s->format, str, len)) {
        if (collect)
            violation(c, in, "format", "%s is not a valid %s", sch_show(v, b1, 80),
                      s->format_src);
        if (++bad && STOP_EARLY())
            return bad;
    }
    if (!m) {
        if (collect)
            violation(c, in, "pattern", "%s does not match pattern %s", sch_show(v, b1, 80),
                      s->pattern_src);
        bad++;
    }
    return bad;
}

static int validate(vctx *c, const csch *s, const inst *in, const char *via, int collect);

/* How many of the n schemas v matches, counting no further than `enough`; -1 on error. */
static long count_matches(vctx *c, csch *const *list, size_t n, const inst *in, const char *kw,
                          size_t enough)
{
    size_t matches = 0;
    for (size_t i = 0; i < n && matches < enough; i++) {
        int r = validate(c, list[i], in, kw, 0);
        if (r < 0)
            return -1;
        matches += r == 0;
    }
    return (long)matches;
}

/* anyOf, oneOf, not: each asks pass or fail of its subschemas, and fails as a whole. */
static int validate_alternatives(vctx *c, const csch *s, const inst *in, int collect)
{
    const json_t *v = in->node;
    char *b1 = c->b1;
    int bad = 0;
    if (s->nanyof) {
        long m = count_matches(c, s->anyof, s->nanyof, in, "anyOf", 1);
        if (m < 0)
            return -1;
        if (m == 0) {
            if (collect)
                violation(c, in, "anyOf", "%s matches none of the %zu schemas in anyOf",
                          sch_show(v, b1, 80), s->nanyof);
            if (++bad && STOP_EARLY())
                return bad;
        }
    }
    if (s->noneof) {
        long m = count_matches(c, s->oneof, s->noneof, in, "oneOf", 2);
        if (m < 0)
            return -1;
        if (m != 1) {
            if (collect)
                violation(c, in, "oneOf",
                          m == 0 ? "%s matches none of the %zu schemas in oneOf"
                                 : "%s matches more than one of the %zu schemas in oneOf",
                          sch_show(v, b1, 80), s->noneof);
            if (++bad && STOP_EARLY())
                return bad;
        }
    }
    if (s->not_) {
        int r = validate(c, s->not_, in, "not", 0);
        if (r < 0)
            return -1;
        if (r == 0) {
            if (collect)
                violation(c, in, "not", "%s must not match the schema in not",
                          sch_show(v, b1, 80));
            bad++;
        }
    }
    return bad;
}

/* Add a check's result r to *bad: 1 when validate() must stop here (an error, or a failure
 * that ends the check early), 0 to go on. */
static int tally(vctx *c, int r, int *bad, int collect)
{
    if (r < 0) {
        *bad = -1;
        return 1;
    }
    *bad += r;
    return r > 0 && STOP_EARLY();
}

/* $dynamicRef: the static target, unless it carries the $dynamicAnchor named, in which case
 * the outermost resource of the dynamic scope that defines that dynamic anchor wins. */
static const csch *dynamic_target(const vctx *c, const csch *s)
{
    if (!s->dyn_name)
        return s->dynref;
    const csch *found = s->dynref;
    for (const scope_node *n = c->scope; n; n = n->up) {
        json_t *node = sch_dynamic_anchor(c->S, n->r, s->dyn_name);
        const csch *t = node ? sch_map_get(c->S, node) : NULL;
        if (t)
            found = t; /* keep going: the outermost one counts */
    }
    return found;
}

/* The in-place applicators: $ref, allOf, the alternatives, if/then/else. */
static int validate_applicators(vctx *c, const csch *s, const inst *in, int collect)
{
    int bad = 0;
    if (s->ref && tally(c, validate(c, s->ref, in, "$ref", collect), &bad, collect))
        return bad;
    if (s->dynref &&
        tally(c, validate(c, dynamic_target(c, s), in, "$dynamicRef", collect), &bad, collect))
        return bad;
    for (size_t i = 0; i < s->nallof; i++)
        if (tally(c, validate(c, s->allof[i], in, "allOf", collect), &bad, collect))
            return bad;
    if (tally(c, validate_alternatives(c, s, in, collect), &bad, collect))
        return bad;
    if (s->if_ && (s->then_ || s->else_)) {
        int r = validate(c, s->if_, in, "if", 0);
        if (r < 0)
            return -1;
        if (r == 0 && s->then_)
            tally(c, validate(c, s->then_, in, "then", collect), &bad, collect);
        else if (r > 0 && s->else_)
            tally(c, validate(c, s->else_, in, "else", collect), &bad, collect);
    }
    return bad;
}

/* ---- unevaluatedProperties / unevaluatedItems ----
 * The annotations 2020-12 defines (properties, patternProperties, additionalProperties,
 * prefixItems, items, contains, and the unevaluated* keywords themselves) are gathered again
 * only where an unevaluated* keyword asks: the common schemas pay nothing for them. A
 * subschema that fails contributes no annotations (anyOf/oneOf/if branches that do not
 * match, not). seen[] is indexed by member order (objects) or item index (arrays). */
static int collect_evaluated(vctx *c, const csch *s, const inst *in, unsigned char *seen,
                             size_t n, int self);

static int passes(vctx *c, const csch *s, const inst *in)
{
    return validate(c, s, in, NULL, 0);
}

/* In-place subschema sub: its annotations when it passes. */
static int collect_if_passes(vctx *c, const csch *sub, const inst *in, unsigned char *seen,
                             size_t n)
{
    int r = passes(c, sub, in);
    if (r < 0)
        return -1;
    return r == 0 ? collect_evaluated(c, sub, in, seen, n, 0) : 0;
}

static int collect_own(vctx *c, const csch *s, const inst *in, unsigned char *seen, size_t n,
                       int self)
{
    const json_t *v = in->node;
    if (json_is_object(v)) {
        if ((s->uneval_props && !self) || s->addl) {
            memset(seen, 1, n);
            return 0;
        }
        const char *k;
        size_t kl, i = 0;
        json_t *x;
        json_object_keylen_foreach((json_t *)v, k, kl, x)
        {
            if (find_prop(s, k, kl))
                seen[i] = 1;
            for (size_t p = 0; p < s->npats && !seen[i]; p++) {
                int m = sch_regex_search(&s->pats[p].re, k, kl);
                if (m < 0)
                    return regex_error(c, in, s->pats[p].src, m);
                seen[i] = (unsigned char)(m > 0);
            }
            i++;
        }
    } else if (json_is_array(v)) {
        if ((s->uneval_items && !self) || s->items) {
            memset(seen, 1, n);
            return 0;
        }
        for (size_t i = 0; i < n && i < s->nprefix; i++)
            seen[i] = 1;
        if (s->contains)
            for (size_t i = 0; i < n; i++) {
                if (seen[i])
                    continue;
                int r = passes(c, s->contains, &(inst){json_array_get(v, i), v, NULL, i});
                if (r < 0)
                    return -1;
                seen[i] = (unsigned char)(r == 0);
            }
    }
    return 0;
}

static int collect_evaluated(vctx *c, const csch *s, const inst *in, unsigned char *seen,
                             size_t n, int self)
{
    if (s->boolean >= 0)
        return 0;
    if (++c->rdepth > MAX_RECURSION) {
        c->internal = 1;
        golden_fail_where(c->err, GOLDEN_EINVAL,
                          "schema recursion deeper than 2048 levels (a $ref loop?)", "%s",
                          golden_doc_name(c->doc));
        return -1;
    }
    const scope_node *saved = c->scope;
    scope_node here;
    if (!c->scope || c->scope->r != s->base) {
        here = (scope_node){s->base, c->scope};
        c->scope = &here;
    }
    int rc = collect_own(c, s, in, seen, n, self);
    /* $ref, $dynamicRef and allOf pass when s passes, but s itself may be failing */
    const csch *direct[2] = {s->ref, s->dynref ? dynamic_target(c, s) : NULL};
    for (size_t i = 0; i < 2 && rc == 0; i++)
        if (direct[i])
            rc = collect_if_passes(c, direct[i], in, seen, n);
    for (size_t i = 0; i < s->nallof && rc == 0; i++)
        rc = collect_if_passes(c, s->allof[i], in, seen, n);
    for (size_t i = 0; i < s->nanyof && rc == 0; i++)
        rc = collect_if_passes(c, s->anyof[i], in, seen, n);
    for (size_t i = 0; i < s->noneof && rc == 0; i++)
        rc = collect_if_passes(c, s->oneof[i], in, seen, n);
    if (rc == 0 && s->if_) {
        int r = passes(c, s->if_, in);
        if (r < 0)
            rc = -1;
        else if (r == 0) {
            rc = collect_evaluated(c, s->if_, in, seen, n, 0);
            if (rc == 0 && s->then_)
                rc = collect_if_passes(c, s->then_, in, seen, n);
        } else if (s->else_) {
            rc = collect_if_passes(c, s->else_, in, seen, n);
        }
    }
    for (size_t i = 0; i < s->ndepschemas && rc == 0 && json_is_object(in->node); i++)
        if (json_object_getn(in->node, s->depschemas[i].key, s->depschemas[i].len))
            rc = collect_if_passes(c, s->depschemas[i].s, in, seen, n);
    c->scope = saved;
    c->rdepth--;
    return rc;
}

static int validate_unevaluated(vctx *c, const csch *s, const inst *in, int collect)
{
    const json_t *v = in->node;
    const csch *u = json_is_object(v) ? s->uneval_props : json_is_array(v) ? s->uneval_items : NULL;
    if (!u)
        return 0;
    size_t n = json_is_object(v) ? json_object_size(v) : json_array_size(v);
    unsigned char *seen = calloc(n + 1, 1);
    if (!seen) {
        c->internal = 1;
        golden_fail_what(c->err, GOLDEN_ENOMEM, golden_doc_name(c->doc), "out of memory");
        return -1;
    }
    int bad = 0;
    if (collect_evaluated(c, s, in, seen, n, 1) < 0) {
        free(seen);
        return -1;
    }
    if (json_is_object(v)) {
        const char *k;
        size_t kl, i = 0;
        json_t *x;
        json_object_keylen_foreach((json_t *)v, k, kl, x)
        {
            if (!seen[i++]) {
                int r = child(c, u, v, k, kl, 0, x, "unevaluatedProperties", collect);
                if (r < 0 || (r > 0 && (bad += r) && STOP_EARLY())) {
                    free(seen);
                    return r < 0 ? -1 : bad;
                }
            }
        }
    } else {
        for (size_t i = 0; i < n; i++) {
            if (seen[i])
                continue;
            int r = child(c, u, v, NULL, 0, i, json_array_get(v, i), "unevaluatedItems", collect);
            if (r < 0 || (r > 0 && (bad += r) && STOP_EARLY())) {
                free(seen);
                return r < 0 ? -1 : bad;
            }
        }
    }
    free(seen);
    return bad;
}

static int validate(vctx *c, const csch *s, const inst *in, const char *via, int collect)
{
    if (s->boolean == 1)
        return 0;
    if (s->boolean == 0)
        return validate_false(c, in, via, collect);
    if (++c->rdepth > MAX_RECURSION) {
        char ptr[512];
        pointer_of(c, ptr, sizeof ptr);
        c->internal = 1;
        golden_fail_where(c->err, GOLDEN_EINVAL,
                          "schema recursion deeper than 2048 levels (a $ref loop?)", "%s#%s",
                          golden_doc_name(c->doc), ptr);
        return -1;
    }
    const json_t *v = in->node;
    int bad = 0;
    const scope_node *saved = c->scope;
    scope_node here;
    if (!c->scope || c->scope->r != s->base) {
        here = (scope_node){s->base, c->scope};
        c->scope = &here;
    }
    if (!tally(c, validate_values(c, s, in, collect), &bad, collect)) {
        int r = 0;
        if (json_is_number(v))
            r = validate_number(c, s, in, collect);
        else if (json_is_string(v))
            r = validate_string(c, s, in, collect);
        else if (json_is_object(v))
            r = validate_object(c, s, in, collect);
        else if (json_is_array(v))
            r = validate_array(c, s, in, collect);
        if (!tally(c, r, &bad, collect) &&
            !tally(c, validate_applicators(c, s, in, collect), &bad, collect) &&
            (s->uneval_props || s->uneval_items))
            tally(c, validate_unevaluated(c, s, in, collect), &bad, collect);
    }
    c->scope = saved;
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
    c.S = s;
    c.doc = doc;
    c.err = err;
    c.threads = opts && opts->threads > 0 ? opts->threads : lg_cpu_count();
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
