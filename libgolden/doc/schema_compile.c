/* Compiling JSON Schemas (draft 2020-12): each subschema once (a map by node address, so $ref
 * may loop), keywords checked and turned into a csch; golden_schema_load and _free. */
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

int sch_fail(golden_schema *S, const resource *r, const json_t *at, golden_error *err,
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

int sch_nomem(golden_schema *S, const resource *r, const json_t *at, golden_error *err)
{
    (void)S;
    char where[sizeof err->where];
    if (!err)
        return GOLDEN_ERR;
    if (r && r->doc)
        golden_doc_where(r->doc, at, where, sizeof where);
    else
        snprintf(where, sizeof where, "schema");
    return golden_fail_what(err, GOLDEN_ENOMEM, where, "out of memory");
}

static csch *compile(golden_schema *S, resource *r, json_t *node, golden_error *err);
static csch *compile_ref(golden_schema *S, resource *r, csch *c, json_t *v, const char *kw,
                         golden_error *err);

static int nonneg(golden_schema *S, resource *r, json_t *s, const char *kw, long long *out,
                  golden_error *err)
{
    json_t *v = json_object_get(s, kw);
    *out = -1;
    if (!v)
        return 0;
    if (!sch_is_integral(v) || sch_num(v) < 0)
        return sch_fail(S, r, v, err, "%s must be a non-negative integer", kw);
    *out = json_is_integer(v) ? (long long)json_integer_value(v)
                              : (sch_num(v) > 9e18 ? (long long)9e18 : (long long)sch_num(v));
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
        return sch_fail(S, r, v, err, "%s must be a schema (an object or a boolean)", kw);
    *out = compile(S, r, v, err);
    return *out ? 0 : -1;
}

/* A keyword whose value maps names to schemas (properties, dependentSchemas). */
static int compile_schema_map(golden_schema *S, resource *r, json_t *v, const char *kw,
                              prop **out, size_t *n, golden_error *err)
{
    if (!json_is_object(v))
        return sch_fail(S, r, v, err, "%s must be an object", kw);
    *out = calloc(json_object_size(v) + 1, sizeof **out);
    if (!*out)
        return sch_nomem(S, r, v, err);
    const char *k;
    size_t kl;
    json_t *x;
    json_object_keylen_foreach(v, k, kl, x)
    {
        if (!json_is_object(x) && !json_is_boolean(x))
            return sch_fail(S, r, x, err, "%s.%s must be a schema", kw, k);
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
        return sch_fail(S, r, v, err, "%s must be a non-empty array of schemas", kw);
    *out = calloc(json_array_size(v), sizeof **out);
    if (!*out)
        return sch_nomem(S, r, v, err);
    size_t i;
    json_t *x;
    json_array_foreach(v, i, x)
    {
        if (!json_is_object(x) && !json_is_boolean(x))
            return sch_fail(S, r, x, err, "%s[%zu] must be a schema", kw, i);
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
        return sch_fail(S, r, v, err, "%s must be a number", kw);
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

/* type, enum, const. */
static int compile_values(golden_schema *S, resource *r, json_t *s, csch *c, golden_error *err)
{
    json_t *v;
    if ((v = json_object_get(s, "type"))) {
        if (json_is_string(v)) {
            c->types = type_bit(json_string_value(v));
            if (!c->types)
                return sch_fail(S, r, v, err, "unknown type \"%s\"", json_string_value(v));
        } else if (json_is_array(v)) {
            size_t i;
            json_t *t;
            json_array_foreach(v, i, t)
            {
                unsigned b = json_is_string(t) ? type_bit(json_string_value(t)) : 0;
                if (!b)
                    return sch_fail(S, r, v, err, "type[%zu] is not a type name", i);
                c->types |= b;
            }
            if (!c->types)
                return sch_fail(S, r, v, err, "type must not be empty");
        } else {
            return sch_fail(S, r, v, err, "type must be a string or an array of strings");
        }
    }
    if ((v = json_object_get(s, "enum"))) {
        if (!json_is_array(v))
            return sch_fail(S, r, v, err, "enum must be an array");
        c->enum_ = v;
    }
    if ((v = json_object_get(s, "const"))) {
        c->const_ = v;
        c->has_const = 1;
    }
    return 0;
}

/* The object keywords: properties (sorted for binary search), patternProperties,
 * additionalProperties, required, dependentRequired, dependentSchemas. */
static int compile_object_kw(golden_schema *S, resource *r, json_t *s, csch *c, golden_error *err)
{
    json_t *v;
    if ((v = json_object_get(s, "properties"))) {
        if (compile_schema_map(S, r, v, "properties", &c->props, &c->nprops, err) < 0)
            return -1;
        qsort(c->props, c->nprops, sizeof *c->props, prop_cmp);
    }
    if ((v = json_object_get(s, "patternProperties"))) {
        if (!json_is_object(v))
            return sch_fail(S, r, v, err, "patternProperties must be an object");
        c->pats = calloc(json_object_size(v) + 1, sizeof *c->pats);
        if (!c->pats)
            return sch_nomem(S, r, v, err);
        const char *k;
        json_t *x;
        json_object_foreach(v, k, x)
        {
            const char *why;
            if (!json_is_object(x) && !json_is_boolean(x))
                return sch_fail(S, r, x, err, "patternProperties.%s must be a schema", k);
            patprop *p = &c->pats[c->npats];
            int rc = sch_compile_regex(&p->re, k, &why);
            if (rc == SCH_REGEX_NOMEM)
                return sch_nomem(S, r, x, err);
            if (rc < 0)
                return sch_fail(S, r, x, err, "pattern %s: %s", k, why);
            c->npats++;
            p->src = k;
            if (!(p->s = compile(S, r, x, err)))
                return -1;
        }
    }
    if (sub(S, r, s, "additionalProperties", &c->addl, err) < 0 ||
        sub(S, r, s, "unevaluatedProperties", &c->uneval_props, err) < 0 ||
        sub(S, r, s, "unevaluatedItems", &c->uneval_items, err) < 0)
        return -1;
    if ((v = json_object_get(s, "required"))) {
        size_t i;
        json_t *x;
        if (!json_is_array(v))
            return sch_fail(S, r, v, err, "required must be an array of strings");
        json_array_foreach(v, i, x) if (!json_is_string(x)) return sch_fail(
            S, r, v, err, "required[%zu] must be a string", i);
        c->required = v;
    }
    if ((v = json_object_get(s, "dependentRequired"))) {
        if (!json_is_object(v))
            return sch_fail(S, r, v, err, "dependentRequired must be an object");
        c->deps = calloc(json_object_size(v) + 1, sizeof *c->deps);
        if (!c->deps)
            return sch_nomem(S, r, v, err);
        const char *k;
        json_t *x;
        json_object_foreach(v, k, x)
        {
            size_t i;
            json_t *y;
            if (!json_is_array(x))
                return sch_fail(S, r, x, err, "dependentRequired.%s must be an array", k);
            json_array_foreach(x, i, y) if (!json_is_string(y)) return sch_fail(
                S, r, x, err, "dependentRequired.%s[%zu] must be a string", k, i);
            c->deps[c->ndeps].key = k;
            c->deps[c->ndeps++].names = x;
        }
    }
    if ((v = json_object_get(s, "dependentSchemas")) &&
        compile_schema_map(S, r, v, "dependentSchemas", &c->depschemas, &c->ndepschemas, err) < 0)
        return -1;
    return 0;
}

/* propertyNames, the array keywords, numeric and length bounds, the combinators, uniqueItems. */
static int compile_subschemas_and_bounds(golden_schema *S, resource *r, json_t *s, csch *c, golden_error *err)
{
    json_t *v;
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
            return sch_fail(S, r, v, err, "uniqueItems must be a boolean");
        c->unique = json_is_true(v);
    }
    if (c->multiple && sch_num(c->multiple) <= 0)
        return sch_fail(S, r, c->multiple, err, "multipleOf must be greater than 0");
    return 0;
}

/* pattern, compiled once. */
static int compile_pattern(golden_schema *S, resource *r, json_t *s, csch *c, golden_error *err)
{
    json_t *v;
    if ((v = json_object_get(s, "pattern"))) {
        const char *why;
        if (!json_is_string(v))
            return sch_fail(S, r, v, err, "pattern must be a string");
        c->pattern = calloc(1, sizeof *c->pattern);
        if (!c->pattern)
            return sch_nomem(S, r, v, err);
        int rc = sch_compile_regex(c->pattern, json_string_value(v), &why);
        if (rc < 0) {
            free(c->pattern);
            c->pattern = NULL;
            if (rc == SCH_REGEX_NOMEM)
                return sch_nomem(S, r, v, err);
            return sch_fail(S, r, v, err, "pattern %s: %s", json_string_value(v), why);
        }
        c->pattern_src = json_string_value(v);
    }
    return 0;
}

/* $defs (all of them) and $ref. */
static int compile_defs_and_ref(golden_schema *S, resource *r, json_t *s, csch *c, golden_error *err)
{
    json_t *v;
    /* $defs compile now, used or not, so that a broken definition is a load error for the
     * schema's author rather than a surprise for whoever first refers to it. */
    if ((v = json_object_get(s, "$defs"))) {
        if (!json_is_object(v))
            return sch_fail(S, r, v, err, "$defs must be an object");
        const char *k;
        json_t *x;
        json_object_foreach(v, k, x)
        {
            if (!json_is_object(x) && !json_is_boolean(x))
                return sch_fail(S, r, x, err, "$defs.%s must be a schema", k);
            if (!compile(S, r, x, err))
                return -1;
        }
    }
    if ((v = json_object_get(s, "$ref"))) {
        if (!json_is_string(v))
            return sch_fail(S, r, v, err, "$ref must be a string");
        if (!(c->ref = compile_ref(S, r, c, v, "$ref", err)))
            return -1;
        c->ref_src = json_string_value(v);
    }
    if ((v = json_object_get(s, "$dynamicRef"))) {
        if (!json_is_string(v))
            return sch_fail(S, r, v, err, "$dynamicRef must be a string");
        if (!(c->dynref = compile_ref(S, r, c, v, "$dynamicRef", err)))
            return -1;
        c->dynref_src = json_string_value(v);
        /* Dynamic only when the static target carries the same $dynamicAnchor (2020-12
         * section 8.2.3.2: otherwise it behaves as $ref). */
        const char *h = strchr(c->dynref_src, '#');
        json_t *da = json_object_get(c->dynref->src, "$dynamicAnchor");
        if (h && h[1] && h[1] != '/' && json_is_string(da) && !strcmp(json_string_value(da), h + 1))
            c->dyn_name = h + 1;
    }
    return 0;
}

/* Compile the schema a $ref or $dynamicRef (at v, in c) names. */
static csch *compile_ref(golden_schema *S, resource *r, csch *c, json_t *v, const char *kw,
                         golden_error *err)
{
    resource *tr = NULL;
    json_t *tn = NULL;
    if (sch_resolve_ref(S, c->base, v, json_string_value(v), &tr, &tn, err) < 0)
        return NULL;
    if (!json_is_object(tn) && !json_is_boolean(tn)) {
        sch_fail(S, r, v, err, "%s \"%s\" does not point at a schema", kw, json_string_value(v));
        return NULL;
    }
    return compile(S, tr, tn, err);
}

static int compile_format(golden_schema *S, resource *r, json_t *s, csch *c, golden_error *err)
{
    json_t *v = json_object_get(s, "format");
    if (!v)
        return 0;
    if (!json_is_string(v))
        return sch_fail(S, r, v, err, "format must be a string");
    c->format_src = json_string_value(v);
    /* An annotation unless asked (the option, or a meta-schema with the format-assertion
     * vocabulary); unknown formats stay annotations even then. */
    if (S->format_assert || r->vocab_format_assert) /* vocab_of() ran in compile() */
        c->format = sch_format_id(c->format_src);
    return 0;
}

static int compile_body(golden_schema *S, resource *r, json_t *s, csch *c, golden_error *err)
{
    if (compile_values(S, r, s, c, err) < 0 ||
        compile_object_kw(S, r, s, c, err) < 0 ||
        compile_subschemas_and_bounds(S, r, s, c, err) < 0 ||
        compile_pattern(S, r, s, c, err) < 0 || compile_format(S, r, s, c, err) < 0 ||
        compile_defs_and_ref(S, r, s, c, err) < 0)
        return -1;
    return 0;
}

#define VOCAB_VALIDATION "https://json-schema.org/draft/2020-12/vocab/validation"
#define VOCAB_FORMAT_ASSERTION "https://json-schema.org/draft/2020-12/vocab/format-assertion"

/* $vocabulary, as the suite expects: a document whose $schema names a meta-schema that does
 * not list the validation vocabulary ignores the validation keywords (type, enum, bounds,
 * required, ...). Only a meta-schema this schema can already reach is consulted. */
static void vocab_of(golden_schema *S, resource *r)
{
    r->vocab_done = 1;
    json_t *ms = json_object_get(golden_doc_root(r->doc), "$schema");
    const sres *base = sch_base_of(S, golden_doc_root(r->doc));
    /* the 2020-12 meta-schema itself lists every vocabulary: nothing to load */
    if (!json_is_string(ms) || !base ||
        !strcmp(json_string_value(ms), "https://json-schema.org/draft/2020-12/schema"))
        return;
    resource *tr;
    json_t *tn;
    golden_error e = {0};
    if (sch_resolve_ref(S, base, ms, json_string_value(ms), &tr, &tn, &e) < 0)
        return;
    json_t *voc = json_object_get(tn, "$vocabulary");
    if (json_is_object(voc) && !json_object_get(voc, VOCAB_VALIDATION))
        r->vocab_no_validation = 1;
    /* listed at all (true or false): this validator knows the vocabulary, so it applies */
    if (json_is_object(voc) && json_object_get(voc, VOCAB_FORMAT_ASSERTION))
        r->vocab_format_assert = 1;
}

static void drop_validation(csch *c)
{
    c->types = 0;
    c->enum_ = c->const_ = NULL;
    c->has_const = 0;
    c->required = NULL;
    c->ndeps = 0;
    c->min_props = c->max_props = c->min_items = c->max_items = -1;
    c->min_contains = c->max_contains = c->min_len = c->max_len = -1;
    c->unique = 0;
    c->minimum = c->maximum = c->xminimum = c->xmaximum = c->multiple = NULL;
    if (c->pattern) {
        sch_pattern_free(c->pattern);
        free(c->pattern);
        c->pattern = NULL;
    }
}

static csch *compile(golden_schema *S, resource *r, json_t *node, golden_error *err)
{
    csch *c = sch_map_get(S, node);
    if (c)
        return c;
    c = calloc(1, sizeof *c);
    if (!c || sch_map_put(S, node, c) < 0) {
        free(c);
        sch_nomem(S, r, node, err);
        return NULL;
    }
    c->next_alloc = S->all;
    S->all = c;
    c->src = node;
    /* Its own resource when indexed; else (a pointer into unknown keywords) the one the
     * reference came from. */
    c->base = sch_base_of(S, node);
    if (!c->base)
        c->base = S->cur_base;
    c->res = c->base && c->base->doc ? c->base->doc : r;
    r = c->res;
    c->boolean = json_is_boolean(node) ? json_is_true(node) : -1;
    c->min_props = c->max_props = c->min_items = c->max_items = -1;
    c->min_contains = c->max_contains = c->min_len = c->max_len = -1;
    if (c->boolean >= 0)
        return c;
    if (!json_is_object(node)) {
        sch_fail(S, r, node, err, "a schema must be an object or a boolean");
        return NULL;
    }
    if (!r->vocab_done)
        vocab_of(S, r);
    const sres *saved = S->cur_base;
    S->cur_base = c->base;
    int rc = compile_body(S, r, node, c, err);
    S->cur_base = saved;
    if (rc == 0 && r->vocab_no_validation)
        drop_validation(c);
    return rc < 0 ? NULL : c;
}

void golden_schema_free(golden_schema *S)
{
    if (!S)
        return;
    for (csch *c = S->all, *n; c; c = n) {
        n = c->next_alloc;
        free(c->props);
        for (size_t i = 0; i < c->npats; i++)
            sch_pattern_free(&c->pats[i].re);
        free(c->pats);
        free(c->deps);
        free(c->depschemas);
        free(c->prefix);
        if (c->pattern) {
            sch_pattern_free(c->pattern);
            free(c->pattern);
        }
        free(c->allof);
        free(c->anyof);
        free(c->oneof);
        free(c);
    }
    for (resource *r = S->resources, *n; r; r = n) {
        n = r->next;
        sch_resource_free(r);
    }
    for (sres *x = S->sres, *n; x; x = n) {
        n = x->next;
        free(x->uri);
        free(x);
    }
    for (anchor *a = S->anchors, *n; a; a = n) {
        n = a->next;
        free(a);
    }
    for (size_t i = 0; i < S->ndirs; i++)
        free(S->dirs[i]);
    free(S->dirs);
    lg_strmap_free(&S->uris);
    free(S->map.e);
    free(S->bases.e);
    free(S);
}

/* In-place applicators ($ref, $dynamicRef's static target, allOf, anyOf, oneOf, not, if,
 * then, else, dependentSchemas) apply to the same instance: a cycle among them can never
 * terminate, whatever the instance. Found by depth-first search, colours in c->visit. */
static const csch *inplace_cycle(csch *c, int depth)
{
    if (c->visit == 2 || depth > 4000) /* deeper chains: the run-time guard stays */
        return NULL;
    if (c->visit == 1)
        return c;
    c->visit = 1;
    csch *next[8] = {c->ref, c->dynref, c->not_, c->if_, c->then_, c->else_, NULL, NULL};
    const csch *hit = NULL;
    for (size_t i = 0; i < 8 && !hit; i++)
        if (next[i])
            hit = inplace_cycle(next[i], depth + 1);
    for (size_t i = 0; i < c->nallof && !hit; i++)
        hit = inplace_cycle(c->allof[i], depth + 1);
    for (size_t i = 0; i < c->nanyof && !hit; i++)
        hit = inplace_cycle(c->anyof[i], depth + 1);
    for (size_t i = 0; i < c->noneof && !hit; i++)
        hit = inplace_cycle(c->oneof[i], depth + 1);
    for (size_t i = 0; i < c->ndepschemas && !hit; i++)
        hit = inplace_cycle(c->depschemas[i].s, depth + 1);
    c->visit = 2;
    return hit;
}

/* Every $dynamicAnchor of every loaded document compiles, so that validation finds the
 * target of a $dynamicRef in whatever resource the dynamic scope holds. */
static int compile_dynamic_anchors(golden_schema *S, golden_error *err)
{
    int dynamic = 0;
    for (const csch *c = S->all; c && !dynamic; c = c->next_alloc)
        dynamic = c->dyn_name != NULL;
    for (int again = dynamic; again;) {
        again = 0;
        for (anchor *a = S->anchors; a; a = a->next) {
            if (!a->dynamic || sch_map_get(S, a->node))
                continue;
            S->cur_base = a->res;
            if (!compile(S, a->res->doc, a->node, err))
                return GOLDEN_ERR;
            again = 1;
        }
    }
    return GOLDEN_OK;
}

static int compile_root(golden_schema *S, resource *r, golden_error *err)
{
    json_t *root = golden_doc_root(r->doc);
    if (!json_is_object(root) && !json_is_boolean(root))
        return golden_fail_what(err, GOLDEN_EINVAL, golden_doc_name(r->doc),
                                "a schema must be an object or a boolean");
    S->cur_base = sch_base_of(S, root);
    S->root = compile(S, r, root, err);
    if (!S->root || compile_dynamic_anchors(S, err) < 0)
        return GOLDEN_ERR;
    for (csch *c = S->all; c; c = c->next_alloc) {
        const csch *loop = inplace_cycle(c, 0);
        if (loop)
            return sch_fail(S, loop->res, loop->src, err,
                            "a $ref loop that can never terminate: this schema applies itself "
                            "to the same instance through $ref/allOf/anyOf/oneOf/not/if/then/"
                            "else/dependentSchemas");
    }
    return GOLDEN_OK;
}

/* The embedded schema (or format name) ref names, or NULL. */
static const golden_embedded_file *embedded_named(const char *ref)
{
    const golden_embedded_file *f = lg_embedded_schema(ref);
    if (!f && !strncmp(ref, ID_PREFIX, strlen(ID_PREFIX)))
        f = lg_embedded_schema(ref + strlen(ID_PREFIX));
    if (!f && !strncmp(ref, "https://json-schema.org/draft/2020-12/", 38)) {
        char name[512];
        snprintf(name, sizeof name, "draft2020-12-%s.json", ref + 38);
        for (char *q = name + 13; *q; q++)
            if (*q == '/')
                *q = '-';
        f = lg_embedded_schema(name);
    }
    if (!f && strchr(ref, '/') && !sch_file_exists(ref)) {
        /* a format name: "calculet-graph/v1" -> "calculet-graph-v1.schema.json" */
        char name[512];
        size_t n = strlen(ref);
        if (n + 13 < sizeof name) {
            for (size_t i = 0; i <= n; i++)
                name[i] = ref[i] == '/' ? '-' : ref[i];
            strcat(name, ".schema.json");
            f = lg_embedded_schema(name);
        }
    }
    return f;
}

int golden_schema_load_opts(const char *ref, const golden_schema_load_options *opts,
                            golden_schema **out, golden_error *err)
{
    *out = NULL;
    if (!ref || !*ref)
        return golden_fail_what(err, GOLDEN_EINVAL, NULL, "no schema named");
    if (opts && opts->version != GOLDEN_SCHEMA_LOAD_OPTIONS_VERSION)
        return golden_fail_what(err, GOLDEN_EINVAL, NULL,
                                "schema load options of version %u (this libgolden knows %u)",
                                opts->version, GOLDEN_SCHEMA_LOAD_OPTIONS_VERSION);
    golden_schema *S = calloc(1, sizeof *S);
    if (!S)
        return golden_fail_what(err, GOLDEN_ENOMEM, ref, "out of memory");
    S->format_assert = opts && opts->format_assert;
    /* The folders register every schema by $id before anything refers to them. */
    for (size_t i = 0; opts && i < opts->ndirs; i++)
        if (sch_load_dir(S, opts->dirs[i], err) < 0) {
            golden_schema_free(S);
            return GOLDEN_ERR;
        }
    const golden_embedded_file *f = embedded_named(ref);
    resource *r = NULL;
    if (f) {
        r = sch_load_embedded(S, f, err);
    } else if (sch_file_exists(ref)) {
        r = sch_load_path(S, ref, err);
    } else {
        /* a URI a --schema-dir registered: its document's root (an $id of a subschema
         * names only a part of a document, which cannot be the root of a schema here) */
        for (sres *x = S->sres; x && !r; x = x->next)
            if (!strcmp(x->uri, ref) && x->node == golden_doc_root(x->doc->doc))
                r = x->doc;
        if (!r) {
            golden_schema_free(S);
            return golden_fail_what(err, GOLDEN_EINVAL, ref,
                                    "no such schema (not embedded, not a format name, not a "
                                    "file, not an $id of a --schema-dir)");
        }
    }
    if (!r || compile_root(S, r, err) < 0) {
        golden_schema_free(S);
        return GOLDEN_ERR;
    }
    *out = S;
    return GOLDEN_OK;
}

int golden_schema_load(const char *ref, golden_schema **out, golden_error *err)
{
    return golden_schema_load_opts(ref, NULL, out, err);
}
