/* Outputs every tool shares: files that appear whole or not at all (temp + rename, never
 * overwriting without force), JSON reports, JUnit XML, and terminal niceties (colour only on
 * a TTY without NO_COLOR, progress only on a TTY). */
#ifndef GOLDEN_REPORT_H
#define GOLDEN_REPORT_H
#include <stdbool.h>
#include <stdio.h>
#include <jansson.h>
#include "golden/error.h"

/* ---- atomic output files ---- */
typedef struct golden_outfile golden_outfile;

/* Open `path` for writing ("-" = stdout). A real path gets a temporary file beside it;
 * an existing `path` is an error unless force. */
int golden_outfile_open(const char *path, bool force, golden_outfile **out, golden_error *err);
FILE *golden_outfile_stream(golden_outfile *f);
/* Flush, fsync and rename into place; frees f. On error the temp file is removed. */
int golden_outfile_commit(golden_outfile *f, golden_error *err);
/* Remove the temporary file; frees f. NULL is allowed. */
void golden_outfile_abort(golden_outfile *f);
/* Whether an output path is usable now: error when it exists and !force ("-" always ok).
 * Tools call this for every output before doing long work. */
int golden_outfile_check(const char *path, bool force, golden_error *err);

/* Create an empty file `PATH.tmp.XXXXXX` beside path, with the permissions an ordinary new
 * file gets under the umask (mkstemp alone makes 0600). *tmp receives its name (free it);
 * returns the open descriptor, or -1 with err naming path. */
int golden_tmpfile_beside(const char *path, char **tmp, golden_error *err);

/* Write a JSON document (2-space indent, keys in insertion order, trailing newline). */
int golden_json_write(const char *path, const json_t *doc, bool force, golden_error *err);

/* A JSON number, or JSON null for NaN/Inf (JSON has no non-finite numbers; jansson would
 * return NULL). Reports document which keys may be null. */
json_t *golden_json_real(double v);

/* ---- JUnit XML ---- */
typedef struct {
    const char *classname; /* e.g. the tool or the tier */
    const char *name;      /* e.g. the tensor name */
    bool failed;
    bool skipped;
    const char *message;   /* failure message (first reason), may be NULL */
    const char *details;   /* failure body (all reasons), may be NULL */
    double seconds;
} golden_junit_case;

int golden_junit_write(const char *path, bool force, const char *suite_name,
                       const golden_junit_case *cases, size_t n, golden_error *err);
/* XML-escape s into a newly allocated string (also drops characters XML 1.0 forbids). */
char *golden_xml_escape(const char *s);

/* ---- terminal ---- */
/* True when colour may be used on stream: it is a TTY, NO_COLOR is unset, TERM != dumb. */
bool golden_use_color(FILE *stream);
/* ANSI sequences, or "" when colour is off. */
const char *golden_color(bool on, const char *which); /* "red" "green" "yellow" "bold" "reset" */

/* Progress on stderr, only when stderr is a TTY; rate-limited to ~10 updates a second. */
typedef struct {
    bool enabled;
    const char *label;
    double last;
    unsigned long long total;
} golden_progress;
void golden_progress_start(golden_progress *p, const char *label, unsigned long long total);
void golden_progress_update(golden_progress *p, unsigned long long done);
void golden_progress_end(golden_progress *p);

/* Seconds on the monotonic clock (for durations). */
double golden_seconds(void);

/* Number of worker threads to use: GOLDEN_THREADS if set, else online cores (>= 1). */
int golden_threads(void);

#endif
