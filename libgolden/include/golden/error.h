/* Errors as values: every fallible libgolden call returns a status and fills a golden_error
 * (what went wrong and where); nothing in the library prints or exits. */
#ifndef GOLDEN_ERROR_H
#define GOLDEN_ERROR_H
#include <stdarg.h>
#include <stdio.h>

#define GOLDEN_OK 0
#define GOLDEN_ERR (-1)

typedef struct {
    char where[1024]; /* file, file:LINE, file:LINE:COL, file#/json/pointer or file:tensor */
    char what[1024];  /* one plain sentence, no trailing period */
} golden_error;

/* Clear an error record. */
void golden_error_clear(golden_error *err);

/* Fill err (if non-NULL) and return GOLDEN_ERR.  `where` may be NULL. */
int golden_fail(golden_error *err, const char *where, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Like golden_fail, with `where` built by printf from wfmt. */
int golden_failw(golden_error *err, const char *what, const char *wfmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Print the contract's one line "TOOL: WHERE: WHAT" (or "TOOL: WHAT") to stream. */
void golden_error_print(FILE *stream, const char *tool, const golden_error *err);

#endif
