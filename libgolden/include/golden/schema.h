/* A JSON Schema (draft 2020-12) validator over golden_doc trees. Schemas are found by
 * name among those compiled into libgolden (schemas/ of the source tree) or by path. */
#ifndef GOLDEN_SCHEMA_H
#define GOLDEN_SCHEMA_H
#include "golden/api.h"
#include <stddef.h>
#include <jansson.h>
#include "golden/doc.h"
#include "golden/error.h"

typedef struct golden_schema golden_schema;

/* `ref` is an embedded schema's file name ("calculet-graph-v1.schema.json"), its `$id`,
 * a format name ("calculet-graph/v1"), or a path to a schema file. */
GOLDEN_API int golden_schema_load(const char *ref, golden_schema **out, golden_error *err);
/* How a schema loads. Versioned like golden_schema_options; NULL means the defaults. */
typedef struct {
    unsigned version;
    /* Folders whose schema files (*.json, *.yaml, recursive) are registered by their $id
     * before anything refers to them; "BASEURI=DIR" also names each file BASEURI + its path
     * in DIR (for files without $id). Nothing is ever fetched from a network. */
    const char *const *dirs;
    size_t ndirs;
    int format_assert; /* 1: "format" asserts the formats the library knows (see
                        * docs/documents.md); 0: an annotation only (the default) */
} golden_schema_load_options;
#define GOLDEN_SCHEMA_LOAD_OPTIONS_VERSION 1u
#define GOLDEN_SCHEMA_LOAD_OPTIONS_INIT {GOLDEN_SCHEMA_LOAD_OPTIONS_VERSION, NULL, 0, 0}

/* golden_schema_load with options. `ref` may also be an $id a --schema-dir folder defines,
 * or a draft 2020-12 meta-schema URI ("https://json-schema.org/draft/2020-12/schema"). */
GOLDEN_API int golden_schema_load_opts(const char *ref, const golden_schema_load_options *opts,
                            golden_schema **out, golden_error *err);

/* Free a schema (NULL is fine). A loaded schema may validate from several threads at once. */
GOLDEN_API void golden_schema_free(golden_schema *s);

typedef struct {
    char where[1024];    /* file:line:col of the offending node (or file) */
    char pointer[1024];  /* JSON Pointer of the instance location ("" = root) */
    char keyword[64];    /* the schema keyword that failed, e.g. "required" */
    char message[1024];  /* one plain sentence */
} golden_violation;

/* At most this many violations are collected; the last one then says that it stopped. */
#define GOLDEN_SCHEMA_MAX_VIOLATIONS 10000

/* Validate the tree of doc (or `instance`, a node inside it, when non-NULL; pointers are
 * then relative to it), with default options (all cores). Every violation is collected into *out, in document order (caller
 * frees with free(); NULL when none); returns the count,
 * or -1 on an internal error (err set: out of memory, or a $ref loop that recurses
 * without end). */
GOLDEN_API long golden_schema_validate(const golden_schema *s, const golden_doc *doc,
                            const json_t *instance, golden_violation **out, golden_error *err);

/* How a validation runs. Versioned: set version to GOLDEN_SCHEMA_OPTIONS_VERSION (or start
 * from GOLDEN_SCHEMA_OPTIONS_INIT); a NULL options pointer means the defaults. */
typedef struct {
    unsigned version;
    int threads; /* workers for the items of big arrays (4096 and more); 0 = all online
                  * cores; 1 = the calling thread only, no thread is started */
} golden_schema_options;
#define GOLDEN_SCHEMA_OPTIONS_VERSION 1u
#define GOLDEN_SCHEMA_OPTIONS_INIT {GOLDEN_SCHEMA_OPTIONS_VERSION, 0}

/* golden_schema_validate with options (opts may be NULL). The violations do not depend on
 * opts->threads. A version this library does not know is an error (GOLDEN_EINVAL). */
GOLDEN_API long golden_schema_validate_opts(const golden_schema *s, const golden_doc *doc,
                                 const json_t *instance, const golden_schema_options *opts,
                                 golden_violation **out, golden_error *err);

/* Convenience for tools that need a valid document: 0 when valid, else -1 with err set to
 * the first violation (where = file:line:col, what = "pointer: message (keyword)"). */
GOLDEN_API int golden_schema_check(const golden_schema *s, const golden_doc *doc, golden_error *err);
/* The same with options (opts may be NULL). */
GOLDEN_API int golden_schema_check_opts(const golden_schema *s, const golden_doc *doc,
                             const golden_schema_options *opts, golden_error *err);

#endif
