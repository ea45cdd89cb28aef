/* Errors as values: every fallible libgolden call returns a status and fills a golden_error
 * (a code a caller can branch on, what went wrong and where). The library never exits and
 * never prints, with one exception a program must ask for: after lg_guard_install
 * (util/guard.h, tools only), a SIGSEGV/SIGBUS in a thread that is inside HDF5, or an HDF5 call
 * running past the timeout, writes one line to stderr from the signal handler (or the
 * watchdog thread) and calls _exit(2). golden_error_print writes only to the stream it is
 * given; golden_progress_* (report.h) draw their progress line on stderr, on a TTY only. */
#ifndef GOLDEN_ERROR_H
#define GOLDEN_ERROR_H
#include "golden/api.h"
#include <stdarg.h>
#include <stdio.h>

#define GOLDEN_OK 0
#define GOLDEN_ERR (-1)

/* What kind of failure an error record holds. */
typedef enum {
    GOLDEN_ENONE = 0,    /* no error recorded */
    GOLDEN_EINVAL,       /* the input or an argument breaks a rule or a format */
    GOLDEN_ENOTFOUND,    /* a named file, key, tensor or reference does not exist */
    GOLDEN_ECORRUPT,     /* a file is damaged: truncated, bad checksum, inconsistent structure */
    GOLDEN_EIO,          /* the system refused a read, write, open or rename */
    GOLDEN_ENOMEM,       /* an allocation failed */
    GOLDEN_EEXISTS,      /* an output exists and may not be replaced */
    GOLDEN_EUNSUPPORTED, /* valid, but beyond what this build can do */
    GOLDEN_EINTERNAL     /* a bug or a library below us misbehaved */
} golden_code;

typedef struct {
    golden_code code;
    char where[1024]; /* file, file:LINE, file:LINE:COL, file#/json/pointer or file:tensor */
    char what[1024];  /* one plain sentence, no trailing period */
} golden_error;

/* Clear an error record. */
GOLDEN_API void golden_error_clear(golden_error *err);

/* Fill err (if non-NULL) with code, the place `where` (may be NULL) and the message built by
 * printf from what_fmt; return GOLDEN_ERR. */
GOLDEN_API int golden_fail_what(golden_error *err, golden_code code, const char *where,
                     const char *what_fmt, ...) __attribute__((format(printf, 4, 5)));

/* Fill err (if non-NULL) with code, the fixed message `what` and the place built by printf from
 * where_fmt; return GOLDEN_ERR. */
GOLDEN_API int golden_fail_where(golden_error *err, golden_code code, const char *what,
                      const char *where_fmt, ...) __attribute__((format(printf, 4, 5)));

/* The code that matches a C errno value (ENOENT -> GOLDEN_ENOTFOUND, ENOMEM -> GOLDEN_ENOMEM,
 * EEXIST -> GOLDEN_EEXISTS, anything else -> GOLDEN_EIO). */
GOLDEN_API golden_code golden_code_from_errno(int errnum);

/* A short stable name of a code ("ENOMEM"), for logs and tests. */
GOLDEN_API const char *golden_code_name(golden_code code);

/* Print the contract's one line "TOOL: WHERE: WHAT" (or "TOOL: WHAT") to stream, with control
 * characters, DEL and invalid UTF-8 in WHERE and WHAT escaped (\n, \t, \r, \xNN) so that one
 * problem stays one line. This is the one libgolden function that writes to a stream, and only
 * to the one its caller names. */
GOLDEN_API void golden_error_print(FILE *stream, const char *tool, const golden_error *err);

#endif
