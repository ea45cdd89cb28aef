/* Terminal niceties: colour sequences and a rate-limited progress line on a TTY.
 * (Split out of golden/report.h, which still includes every part.) */
#ifndef GOLDEN_TERM_H
#define GOLDEN_TERM_H
#include "golden/api.h"
#include <stdbool.h>

/* ANSI sequences, or "" when colour is off. */
GOLDEN_API const char *golden_color(bool on, const char *which); /* "red" "green" "yellow" "bold" "reset" */

/* Progress on stderr, only when stderr is a TTY; rate-limited to ~10 updates a second. One line
 * that redraws: label, elapsed time, done/total, rate and the estimated time left. Start sets
 * every field; afterwards a caller may set `bytes` (done and total count bytes) or `unit` (what
 * they count, e.g. "cases"), and clear `enabled` (--quiet). */
typedef struct {
    bool enabled;
    const char *label;
    double last;
    unsigned long long total;
    double start;     /* golden_seconds() at start */
    bool bytes;       /* done/total are bytes (shown as KiB, MiB, GiB) */
    const char *unit; /* else what they count; NULL: plain numbers */
} golden_progress;
GOLDEN_API void golden_progress_start(golden_progress *p, const char *label, unsigned long long total);
GOLDEN_API void golden_progress_update(golden_progress *p, unsigned long long done);
/* The same with a short note after the label (the item in hand, e.g. a case id). */
GOLDEN_API void golden_progress_update_note(golden_progress *p, unsigned long long done,
                                            const char *note);
GOLDEN_API void golden_progress_end(golden_progress *p);

#endif
