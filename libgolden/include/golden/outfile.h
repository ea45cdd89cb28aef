/* Outputs that appear whole or not at all: temporary file beside, fsync, rename; never an input.
 * (Split out of golden/report.h, which still includes every part.) */
#ifndef GOLDEN_OUTFILE_H
#define GOLDEN_OUTFILE_H
#include "golden/api.h"
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include "golden/error.h"

typedef enum {
    GOLDEN_OUT_NEW,      /* nothing there: written beside, then renamed */
    GOLDEN_OUT_EXISTING, /* a regular file (or a dangling link): replaced only with force */
    GOLDEN_OUT_STDOUT,   /* "-" */
    GOLDEN_OUT_SPECIAL,  /* a character device or FIFO (/dev/null, /dev/fd/N): written directly */
    GOLDEN_OUT_FOLDER,   /* refused */
    GOLDEN_OUT_REFUSED   /* a block device or a socket: refused */
} golden_outkind;

/* What writing to path would do (following symbolic links, as open() does). */
GOLDEN_API golden_outkind golden_outfile_kind(const char *path);

typedef struct golden_outfile golden_outfile;

/* Open `path` for writing. "-" is stdout; a character device or FIFO is opened and written
 * directly (never replaced, no force needed); otherwise a temporary file beside path is
 * written, and an existing regular file is an error unless force. */
GOLDEN_API int golden_outfile_open(const char *path, bool force, golden_outfile **out, golden_error *err);
GOLDEN_API FILE *golden_outfile_stream(golden_outfile *f);
/* Flush; for a regular file fsync it, rename it into place and fsync its folder. Frees f.
 * On error the temporary file is removed and nothing at path changed. */
GOLDEN_API int golden_outfile_commit(golden_outfile *f, golden_error *err);
/* Remove the temporary file; frees f. NULL is allowed. */
GOLDEN_API void golden_outfile_abort(golden_outfile *f);
/* Whether an output path is usable now: error for a folder, a block device or socket, and
 * an existing regular file without force. Tools call this for every output before long work. */
GOLDEN_API int golden_outfile_check(const char *path, bool force, golden_error *err);
/* golden_outfile_check for an output that must be a regular file (an HDF5 golden): "-" and
 * special files are refused too. */
GOLDEN_API int golden_outfile_check_regular(const char *path, bool force, golden_error *err);
/* Error when path exists as a regular file that is one of inputs[0..n) (same device and
 * inode), whatever force says: --force must never destroy an input. */
GOLDEN_API int golden_outfile_distinct(const char *path, const char *const *inputs, size_t n,
                            golden_error *err);

/* Create an empty file `PATH.tmp.XXXXXX` beside path, with the permissions an ordinary new
 * file gets under the umask (mkstemp alone makes 0600), registered for removal on a crash or
 * signal. *tmp receives its name (free it); returns the open descriptor, or -1 with err. */
GOLDEN_API int golden_tmpfile_beside(const char *path, char **tmp, golden_error *err);
/* Install a finished temporary file: fsync it, refuse when path appeared meanwhile (without
 * force) or became a special file, rename, fsync the folder. On error tmp is removed. */
GOLDEN_API int golden_tmpfile_install(const char *tmp, const char *path, bool force, golden_error *err);

#endif
