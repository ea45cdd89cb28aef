/* Terminal niceties: ANSI colour names, progress on a TTY stderr only (never in files or pipes),
 * and the monotonic clock durations are measured with. */
#include "golden/report.h"

#include <string.h>
#include <time.h>
#include <unistd.h>

const char *golden_color(bool on, const char *which)
{
    if (!on)
        return "";
    if (strcmp(which, "red") == 0) return "\033[31m";
    if (strcmp(which, "green") == 0) return "\033[32m";
    if (strcmp(which, "yellow") == 0) return "\033[33m";
    if (strcmp(which, "bold") == 0) return "\033[1m";
    return "\033[0m";
}

double golden_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

void golden_progress_start(golden_progress *p, const char *label, unsigned long long total)
{
    p->enabled = isatty(STDERR_FILENO) != 0;
    p->label = label;
    p->total = total;
    p->last = 0;
}

void golden_progress_update(golden_progress *p, unsigned long long done)
{
    if (!p->enabled)
        return;
    double t = golden_seconds();
    if (t - p->last < 0.1)
        return;
    p->last = t;
    if (p->total)
        fprintf(stderr, "\r%s %5.1f%%", p->label, 100.0 * (double)done / (double)p->total);
    else
        fprintf(stderr, "\r%s %llu", p->label, done);
    fflush(stderr);
}

void golden_progress_end(golden_progress *p)
{
    if (p->enabled && p->last > 0)
        fprintf(stderr, "\r\033[K");
    p->enabled = false;
}
