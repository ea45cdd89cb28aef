/* Inputs and outputs every tool shares: inputs opened without blocking on a FIFO, outputs that
 * appear whole or not at all, JSON reports, JUnit XML, terminal niceties, process settings. */
#ifndef GOLDEN_REPORT_H
#define GOLDEN_REPORT_H
#include "golden/api.h"
#include <stdbool.h>
#include <stdio.h>
#include <time.h>
#include <jansson.h>
#include "golden/error.h"

/* ---- process settings (util/settings.c) ---- */
#define GOLDEN_SETTINGS_VERSION 1
/* Defaults a program sets once, before it starts threads (the tools set them from -j,
 * GOLDEN_THREADS, NO_COLOR and TERM). The library never reads the environment. */
typedef struct {
    unsigned version;         /* GOLDEN_SETTINGS_VERSION */
    int threads;              /* default worker count; 0 = online cores */
    bool no_color;            /* never colour, even on a TTY */
    double started_monotonic; /* golden_seconds() when the run began; 0 = unknown */
    time_t started_wall;      /* wall clock when the run began; 0 = unknown */
} golden_settings;

/* Replace the process settings (copied). Error on a wrong version or thread count. */
GOLDEN_API int golden_configure(const golden_settings *s, golden_error *err);
/* Number of worker threads to use: the configured count, else online cores (>= 1). */
GOLDEN_API int golden_threads(void);
/* True when colour may be used on stream: it is a TTY and colour was not switched off. */
GOLDEN_API bool golden_use_color(FILE *stream);
/* Seconds since the configured run start (0 when unknown) and the wall clock it began at. */
GOLDEN_API void golden_run_clock(double *seconds, time_t *started);

/* ---- inputs (util/infile.c) ---- */
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

/* ---- outputs (util/outfile.c) ---- */
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

/* ---- JSON (util/jsonout.c) ---- */
/* Write a JSON document (2-space indent, keys in insertion order, trailing newline). */
GOLDEN_API int golden_json_write(const char *path, const json_t *doc, bool force, golden_error *err);

/* A JSON number, or JSON null for NaN/Inf (JSON has no non-finite numbers; jansson would
 * return NULL). Reports document which keys may be null. */
GOLDEN_API json_t *golden_json_real(double v);

/* ---- JUnit XML (util/junit.c) ---- */
typedef struct {
    const char *classname; /* e.g. the tool or the tier */
    const char *name;      /* e.g. the tensor name */
    bool failed;
    bool skipped;
    const char *message;   /* failure message (first reason), may be NULL */
    const char *details;   /* failure body (all reasons), may be NULL */
    double seconds;
} golden_junit_case;

#define GOLDEN_JUNIT_SUITE_VERSION 1
typedef struct {
    unsigned version;  /* GOLDEN_JUNIT_SUITE_VERSION */
    const char *name;
    double seconds;    /* wall time of the whole suite; the sum of the cases when larger */
    time_t started;    /* 0 = now minus seconds */
} golden_junit_suite;

/* One <testsuites> holding one <testsuite>: attributes as junit-10.xsd allows them, with
 * timestamp and hostname. */
GOLDEN_API int golden_junit_write_suite(const char *path, bool force, const golden_junit_suite *suite,
                             const golden_junit_case *cases, size_t n, golden_error *err);
/* The same with the suite's time and timestamp taken from the configured run clock. */
GOLDEN_API int golden_junit_write(const char *path, bool force, const char *suite_name,
                       const golden_junit_case *cases, size_t n, golden_error *err);
/* XML-escape s into a newly allocated string (drops control characters XML 1.0 forbids and
 * replaces invalid UTF-8 by U+FFFD). */
GOLDEN_API char *golden_xml_escape(const char *s);

/* ---- terminal (util/term.c) ---- */
/* ANSI sequences, or "" when colour is off. */
GOLDEN_API const char *golden_color(bool on, const char *which); /* "red" "green" "yellow" "bold" "reset" */

/* Progress on stderr, only when stderr is a TTY; rate-limited to ~10 updates a second. */
typedef struct {
    bool enabled;
    const char *label;
    double last;
    unsigned long long total;
} golden_progress;
GOLDEN_API void golden_progress_start(golden_progress *p, const char *label, unsigned long long total);
GOLDEN_API void golden_progress_update(golden_progress *p, unsigned long long done);
GOLDEN_API void golden_progress_end(golden_progress *p);

/* Seconds on the monotonic clock (for durations). */
GOLDEN_API double golden_seconds(void);

#endif
