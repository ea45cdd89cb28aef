/* Process settings a program sets once (threads, colour, the run's clock), and the clocks.
 * (Split out of golden/report.h, which still includes every part.) */
#ifndef GOLDEN_SETTINGS_H
#define GOLDEN_SETTINGS_H
#include "golden/api.h"
#include <stdbool.h>
#include <stdio.h>
#include <time.h>
#include "golden/error.h"

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

/* Seconds on the monotonic clock (for durations). */
GOLDEN_API double golden_seconds(void);

#endif
