/* Terminal niceties: colour sequences and a rate-limited progress line on a TTY.
 * (Split out of golden/report.h, which still includes every part.) */
#ifndef GOLDEN_TERM_H
#define GOLDEN_TERM_H
#include "golden/api.h"
#include <stdbool.h>

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

#endif
