/* Documents are trees: YAML (libyaml) and JSON load into one jansson json_t tree that keeps
 * the line and column of every node, so every finding can say file:line:col. */
#ifndef GOLDEN_DOC_H
#define GOLDEN_DOC_H
#include <stddef.h>
#include <jansson.h>
#include "golden/error.h"

typedef struct golden_doc golden_doc;

/* Load a JSON or YAML file (detected by content: JSON when it parses as JSON, YAML otherwise;
 * `.json` files must be JSON). Duplicate keys, YAML alias bombs, over-deep nesting,
 * invalid UTF-8 and NUL bytes are errors with file:line:col. */
int golden_doc_load_file(const char *path, golden_doc **out, golden_error *err);
/* The same from memory; `name` is used in positions. */
int golden_doc_load_buffer(const char *name, const char *buf, size_t len, golden_doc **out,
                           golden_error *err);
/* The tree (borrowed; lives as long as the doc). */
json_t *golden_doc_root(const golden_doc *doc);
const char *golden_doc_name(const golden_doc *doc);
/* 1-based line and column of a node of this doc's tree; 0 when unknown. */
int golden_doc_line(const golden_doc *doc, const json_t *node, int *line, int *col);
/* "file:line:col" for node (or "file" when unknown) into buf. */
void golden_doc_where(const golden_doc *doc, const json_t *node, char *buf, size_t n);
void golden_doc_free(golden_doc *doc);

/* JSON Lines: call fn for each non-empty line as its own doc (line numbers are the file's).
 * Stops at the first load error or when fn returns non-zero (that value is returned). */
typedef int (*golden_jsonl_fn)(void *ctx, golden_doc *line_doc, size_t line_no,
                               golden_error *err);
int golden_doc_each_jsonl(const char *path, golden_jsonl_fn fn, void *ctx, golden_error *err);

#endif
