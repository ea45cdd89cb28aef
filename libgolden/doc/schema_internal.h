/* The JSON Schema validator's private parts: the compiled schema (csch), its resources and
 * patterns, and the helpers the compiler and the validator share. Not installed. */
#ifndef GOLDEN_DOC_SCHEMA_INTERNAL_H
#define GOLDEN_DOC_SCHEMA_INTERNAL_H
#include <regex.h>
#include <stddef.h>
#include <stdint.h>
#include "golden/schema.h"
#include "util/embed.h"

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

/* schema_compile.c: fill err with the schema place of `at` in resource r; returns GOLDEN_ERR. */
int sch_fail(golden_schema *S, const resource *r, const json_t *at, golden_error *err,
             const char *fmt, ...) __attribute__((format(printf, 5, 6)));
/* schema_compile.c: the same for a failed allocation (GOLDEN_ENOMEM). */
int sch_nomem(golden_schema *S, const resource *r, const json_t *at, golden_error *err);
/* schema_compile.c: the compiled form of a schema node (by address), NULL when not yet. */
csch *sch_map_get(const golden_schema *S, const json_t *k);
int sch_map_put(golden_schema *S, const json_t *k, csch *v);

/* schema_ref.c: resources (embedded or on disk) and $ref resolution. */
void sch_resource_free(resource *r);
resource *sch_load_embedded(golden_schema *S, const golden_embedded_file *f, golden_error *err);
resource *sch_load_path(golden_schema *S, const char *path, golden_error *err);
int sch_file_exists(const char *p);
/* Resolve ref (relative to resource r, found at `at`) to the resource and node it names. */
int sch_resolve_ref(golden_schema *S, resource *r, const json_t *at, const char *ref,
                    resource **rout, json_t **nout, golden_error *err);

/* schema_value.c: JSON values as JSON Schema sees them (1 == 1.0, key order ignored). */
int sch_is_integral(const json_t *v);
double sch_num(const json_t *v);
int sch_num_cmp(const json_t *a, const json_t *b);
int sch_json_same(const json_t *a, const json_t *b);
uint64_t sch_json_hash(const json_t *v);
/* A bounded rendering of v into buf, for messages. */
const char *sch_show(const json_t *v, char *buf, size_t n);

/* schema_regex.c: ECMA-262 patterns, on a bit-parallel matcher when simple, else regexec. */
/* 0; -1 an invalid pattern (why says how); SCH_REGEX_NOMEM out of memory. */
#define SCH_REGEX_NOMEM (-2)
int sch_compile_regex(pattern_t *p, const char *src, const char **why);
void sch_pattern_free(pattern_t *p);
int sch_regex_search(const pattern_t *p, const char *s, size_t len);

#endif
