/* Documents are trees: YAML (libyaml) and JSON load into one jansson json_t tree that keeps
 * the line and column of every node, so every finding can say file:line:col. */
#ifndef GOLDEN_DOC_H
#define GOLDEN_DOC_H
#include "golden/api.h"
#include <stddef.h>
#include <jansson.h>
#include "golden/error.h"


typedef struct golden_doc golden_doc;

/* Load a JSON or YAML file (detected by content: JSON when it parses as JSON, YAML otherwise;
 * `.json` files must be JSON). Duplicate keys, YAML alias bombs, over-deep nesting,
 * invalid UTF-8 and NUL bytes are errors with file:line:col. */
GOLDEN_API int golden_doc_load_file(const char *path, golden_doc **out, golden_error *err);
/* The same from memory; `name` is used in positions. */
GOLDEN_API int golden_doc_load_buffer(const char *name, const char *buf, size_t len, golden_doc **out,
                           golden_error *err);
/* The tree (borrowed; lives as long as the doc: nodes must not outlive golden_doc_free, so
 * json_deep_copy what you keep). See docs/documents.md for the loader's rules. */
GOLDEN_API json_t *golden_doc_root(const golden_doc *doc);
GOLDEN_API const char *golden_doc_name(const golden_doc *doc);
/* 1-based line and column of a node of this doc's tree; 0 when unknown. */
GOLDEN_API int golden_doc_line(const golden_doc *doc, const json_t *node, int *line, int *col);
/* "file:line:col" for node (or "file" when unknown) into buf. */
GOLDEN_API void golden_doc_where(const golden_doc *doc, const json_t *node, char *buf, size_t n);
/* Free the doc and its tree (NULL is fine). A loaded doc may be read, and its positions
 * asked, from several threads at once. */
GOLDEN_API void golden_doc_free(golden_doc *doc);

/* Opt in, once, before any other use of jansson in the process, to loading documents of
 * 1 MiB and more into arenas (about 1.4x faster and 20 % less memory on a 32 MB graph; see
 * docs/design.md). This replaces jansson's allocator for the whole process (jansson has only
 * one), which is why the library never does it by itself: call it from a program's main, and
 * never install another jansson allocator afterwards. Everything outside a document load still
 * goes to malloc/free. */
GOLDEN_API void golden_doc_use_arena_allocator(void);

/* Limits every load enforces (docs/documents.md explains them). */
#define GOLDEN_DOC_MAX_BYTES ((size_t)1 << 30)      /* a whole document file: 1 GiB */
#define GOLDEN_DOC_MAX_DEPTH 512                    /* nested arrays/objects */
#define GOLDEN_JSONL_MAX_LINE ((size_t)64 << 20)    /* one JSON Lines line: 64 MiB */
#define GOLDEN_YAML_MAX_EXPANSION 1000000           /* alias-expanded nodes beyond 10x the real ones */

/* Position of a child slot: parent[key] (object; key NUL-terminated) or parent[index]
 * (array; key NULL). Unlike golden_doc_line this also answers for true/false/null, which
 * jansson shares between all places (one pointer each), so they have no position of their
 * own. 0 when unknown. */
GOLDEN_API int golden_doc_child_line(const golden_doc *doc, const json_t *parent, const char *key,
                          size_t index, int *line, int *col);
/* "file:line:col" of that slot (or "file") into buf. */
GOLDEN_API void golden_doc_child_where(const golden_doc *doc, const json_t *parent, const char *key,
                            size_t index, char *buf, size_t n);
/* Load from memory as JSON only (strict RFC 8259), whatever the name; `first_line` is the
 * line number the buffer starts at (1 normally; a JSON Lines line's number otherwise). */
GOLDEN_API int golden_doc_load_json(const char *name, const char *buf, size_t len, size_t first_line,
                         golden_doc **out, golden_error *err);

/* JSON Lines: call fn for each non-empty line as its own doc (line numbers are the file's).
 * Stops at the first load error or when fn returns non-zero (that value is returned).
 * line_doc is freed when fn returns (json_deep_copy what you keep). A line longer
 * than GOLDEN_JSONL_MAX_LINE is an error; memory stays bounded by that. */
typedef int (*golden_jsonl_fn)(void *ctx, golden_doc *line_doc, size_t line_no,
                               golden_error *err);
GOLDEN_API int golden_doc_each_jsonl(const char *path, golden_jsonl_fn fn, void *ctx, golden_error *err);

/* The line reader under golden_doc_each_jsonl, for other line files (a CSV trace): fn gets each
 * non-blank line (without its \n or \r\n; not NUL-terminated) and its 1-based number. A line
 * longer than max_line bytes (0 or more than GOLDEN_JSONL_MAX_LINE: that limit) is an error as
 * soon as the limit is passed, never read whole; a FIFO or device never blocks the open, and
 * memory stays bounded by max_line. Stops at fn's first non-zero return (returned). */
typedef int (*golden_line_fn)(void *ctx, const char *line, size_t len, size_t line_no,
                              golden_error *err);
GOLDEN_API int golden_doc_each_line(const char *path, size_t max_line, golden_line_fn fn,
                                    void *ctx, golden_error *err);
/* A large JSON document streamed: a top-level array, or an object whose member array_key is an
 * array (a Chrome trace's "traceEvents"). fn gets each element of that array (key NULL) and
 * each other top-level member's value (key its name), each parsed by the strict JSON reader on
 * its own as a doc with the file's positions; the structure between them is checked too
 * (duplicate top-level keys, commas, brackets, nothing after the value). Memory is one element:
 * a value longer than GOLDEN_JSONL_MAX_LINE is an error as soon as the limit is passed. The doc
 * is emptied when fn returns (json_deep_copy what you keep); fn's first non-zero return stops
 * the reading and is returned. */
typedef int (*golden_doc_element_fn)(void *ctx, const char *key, golden_doc *doc,
                                     golden_error *err);
GOLDEN_API int golden_doc_each_element(const char *path, const char *array_key,
                                       golden_doc_element_fn fn, void *ctx, golden_error *err);
/* NUL bytes and invalid UTF-8 in text (a line of such a file) are errors naming name:line:col. */
GOLDEN_API int golden_doc_check_text(const char *name, const char *p, size_t len, size_t line,
                                     golden_error *err);

#endif
