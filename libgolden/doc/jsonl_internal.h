/* Private to libgolden: a JSON Lines pass whose parsing runs on worker threads while the lines
 * are taken in file order (issue 26's speed). Not installed. */
#ifndef GOLDEN_DOC_JSONL_INTERNAL_H
#define GOLDEN_DOC_JSONL_INTERNAL_H
#include <stddef.h>

#include "golden/doc.h"

/* Runs on a worker, lines in any order across chunks: may read shared state that does not
 * change during the pass, writes only its line's slot (slot_size zeroed bytes). 0, or -1 with
 * err (the pass then fails at this line, after every earlier line was taken). */
typedef int (*lg_jsonl_prep_fn)(void *ctx, golden_doc *d, size_t line_no, void *slot,
                                golden_error *err);
/* Runs in the calling thread, lines in file order, after the line's prep: 0, or non-zero to
 * stop (err says why, as golden_jsonl_fn). */
typedef int (*lg_jsonl_take_fn)(void *ctx, golden_doc *d, size_t line_no, void *slot,
                                golden_error *err);

typedef struct {
    int workers;           /* parse threads; <= 1: every line parsed and taken by the caller */
    size_t chunk_lines;    /* lines a chunk (0: 512); tests use small chunks */
    size_t slot_size;      /* bytes of a line's slot (0: none) */
    lg_jsonl_prep_fn prep; /* NULL: none */
    void *prep_ctx;
    lg_jsonl_take_fn take;
    void *take_ctx;
    void (*slot_clear)(void *slot); /* after take, or for a line never taken; NULL: none */
} lg_jsonl_par;

/* golden_doc_each_jsonl with prep on p->workers threads: the same lines (lines.c's reader, its
 * blank-line, CR, byte-order-mark and line-length rules and line numbers), the same parse, the
 * same first error, take called in file order exactly where golden_doc_each_jsonl calls fn. */
int lg_doc_each_jsonl_par(const char *path, const lg_jsonl_par *p, golden_error *err);
#endif
