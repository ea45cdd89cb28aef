/* The JSON Schema validator's private parts: the compiled schema (csch), its resources and
 * patterns, and the helpers the compiler and the validator share. Not installed. */
#ifndef GOLDEN_DOC_SCHEMA_INTERNAL_H
#define GOLDEN_DOC_SCHEMA_INTERNAL_H
#include <stddef.h>
#include <stdint.h>
#include "golden/schema.h"
#include "util/embed.h"
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
 * rest (and non-ASCII subjects) on PCRE2, with match limits. */
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
    void *code; /* pcre2_code */
    void *mctx; /* pcre2_match_context with the match limits */
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

/* A loaded document (a file, an embedded schema, a file of a --schema-dir). */
typedef struct resource {
    char *uri;  /* the URI it was retrieved by (file://..., or the embedded/registered one) */
    char *path; /* file it came from (NULL when embedded) */
    char *name; /* embedded base name (NULL when from disk) */
    golden_doc *doc;
    int vocab_done, vocab_no_validation, vocab_format_assert; /* see vocab_of() */
    struct resource *next;
} resource;

/* A schema resource: the document root or a subschema with $id, named by an absolute URI
 * (without fragment). Several URIs may name one node (the retrieval URI and the $id). */
typedef struct sres {
    char *uri;
    json_t *node;
    resource *doc;
    struct sres *next;
} sres;

/* $anchor and $dynamicAnchor names, each in the schema resource where it appears. */
typedef struct anchor {
    const sres *res;
    const char *name;
    json_t *node;
    int dynamic;
    struct anchor *next;
} anchor;

/* A map from node address to a pointer (compiled schema, or base resource). */
struct map_entry {
    const void *key;
    void *val;
};
typedef struct {
    struct map_entry *e;
    size_t cap, n;
} ptrmap;
void *sch_ptrmap_get(const ptrmap *m, const void *k);
int sch_ptrmap_put(ptrmap *m, const void *k, void *v);

struct csch {
    json_t *src;
    resource *res;
    const sres *base; /* the schema resource this node belongs to (the dynamic scope) */
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
    csch *dynref;            /* $dynamicRef's static target */
    const char *dyn_name;    /* its anchor name when the target has that $dynamicAnchor */
    const char *dynref_src;
    csch *uneval_props, *uneval_items;
    int visit;               /* colour of the compile-time loop search */
    int format;              /* a SCH_FMT_* to assert (0: annotation only) */
    const char *format_src;
    csch *next_alloc; /* every compiled node, for freeing */
};

struct golden_schema {
    resource *resources;
    sres *sres;
    golden_strmap uris; /* URI -> sres */
    anchor *anchors;
    csch *root;
    csch *all;
    /* node address -> compiled schema, so each subschema compiles once and refs can loop */
    ptrmap map;
    ptrmap bases; /* schema node -> its sres (from indexing each document) */
    int format_assert;
    const sres *cur_base; /* while compiling: the resource of the node being compiled */
    char **dirs; /* --schema-dir folders not yet loaded (loaded when a ref is not found) */
    size_t ndirs;
};

/* schema_compile.c: fill err with the schema place of `at` in resource r; returns GOLDEN_ERR. */
int sch_fail(golden_schema *S, const resource *r, const json_t *at, golden_error *err,
             const char *fmt, ...) __attribute__((format(printf, 5, 6)));
/* schema_compile.c: the same for a failed allocation (GOLDEN_ENOMEM). */
int sch_nomem(golden_schema *S, const resource *r, const json_t *at, golden_error *err);
/* schema_compile.c: the compiled form of a schema node (by address), NULL when not yet. */
#define sch_map_get(S, k) ((csch *)sch_ptrmap_get(&(S)->map, (k)))
#define sch_map_put(S, k, v) sch_ptrmap_put(&(S)->map, (k), (v))

/* schema_ref.c: resources (embedded or on disk) and $ref resolution. */
void sch_resource_free(resource *r);
resource *sch_load_embedded(golden_schema *S, const golden_embedded_file *f, golden_error *err);
resource *sch_load_path(golden_schema *S, const char *path, golden_error *err);
int sch_file_exists(const char *p);
/* Resolve ref (written in schema resource base, found at `at`) to the node it names, its
 * document, and (for a plain-name fragment) the anchor name. */
int sch_resolve_ref(golden_schema *S, const sres *base, const json_t *at, const char *ref,
                    resource **rout, json_t **nout, golden_error *err);
/* The schema resource a node belongs to (NULL when the node was never indexed). */
const sres *sch_base_of(const golden_schema *S, const json_t *node);
/* The node of a $dynamicAnchor `name` in resource r, or NULL. */
json_t *sch_dynamic_anchor(const golden_schema *S, const sres *r, const char *name);
/* Register every schema file of dir ("DIR" or "BASEURI=DIR", recursive). */
int sch_load_dir(golden_schema *S, const char *dir, golden_error *err);
/* RFC 3986 reference resolution: malloc'd absolute URI, fragment dropped. */
char *sch_uri_resolve(const char *base, const char *ref, size_t reflen);

/* schema_value.c: JSON values as JSON Schema sees them (1 == 1.0, key order ignored). */
int sch_is_integral(const json_t *v);
double sch_num(const json_t *v);
int sch_num_cmp(const json_t *a, const json_t *b);
int sch_json_same(const json_t *a, const json_t *b);
uint64_t sch_json_hash(const json_t *v);
/* A bounded rendering of v into buf, for messages. */
const char *sch_show(const json_t *v, char *buf, size_t n);

/* schema_regex.c: ECMA-262 patterns, on a bit-parallel matcher when simple, else PCRE2. */
/* 0; -1 an invalid pattern (why says how); SCH_REGEX_NOMEM out of memory. */
#define SCH_REGEX_NOMEM (-2)
int sch_compile_regex(pattern_t *p, const char *src, const char **why);
void sch_pattern_free(pattern_t *p);
/* 1 a match, 0 none, -1 the match limit was hit (a catastrophic pattern), -2 no memory. */
int sch_regex_search(const pattern_t *p, const char *s, size_t len);

/* schema_format.c: the formats --format-assert checks. */
int sch_format_id(const char *name);
int sch_format_ok(int id, const char *s, size_t len);

#endif
