/* Inputs opened without ever blocking on a FIFO, checked by kind before they are read.
 * (Split out of golden/report.h, which still includes every part.) */
#ifndef GOLDEN_INFILE_H
#define GOLDEN_INFILE_H
#include "golden/api.h"
#include <stdio.h>
#include "golden/error.h"

#define GOLDEN_IN_STREAM 1u /* a pipe, a character device or "-" (standard input) is fine */
/* Open an input for reading without ever blocking in open() (a FIFO with no writer), then
 * decide from fstat: a regular file, or a stream when flags allow one; a folder, a socket or
 * a stream where none is allowed is an error naming path. Returns the descriptor (close it),
 * or -1 with err filled. "-" is standard input (a duplicate of descriptor 0). */
GOLDEN_API int golden_infile_open(const char *path, unsigned flags, golden_error *err);
/* The same as a stdio stream (fclose it), or NULL with err filled. */
GOLDEN_API FILE *golden_infile_fopen(const char *path, unsigned flags, golden_error *err);
/* Copy standard input into a new temporary file beside `beside` (removed on a signal like
 * every temporary output), for an input that needs a regular file (a .npy, whose size is read
 * first) but comes from a pipe. *tmp receives its name; give it to golden_infile_spool_done. */
GOLDEN_API int golden_infile_spool_stdin(const char *beside, char **tmp, golden_error *err);
/* Remove a spooled copy and free its name (NULL is allowed). */
GOLDEN_API void golden_infile_spool_done(char *tmp);

#endif
