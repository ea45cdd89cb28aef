/* Terminal niceties: ANSI colour names, progress on a TTY stderr only (never in files or pipes):
 * elapsed, done/total, rate and time left in one redrawing line; and the monotonic clock. */
#include "golden/report.h"
#include "util/term.h"

#include <stdarg.h>
#include <stdio.h>
#include <sys/ioctl.h>

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

/* appends to buf[0..n) at *at, never past the end (vsnprintf: truncation is intended) */
__attribute__((format(printf, 4, 5))) static void app(char *buf, size_t n, size_t *at,
                                                      const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int wrote = vsnprintf(buf + *at, n - *at, fmt, ap);
    va_end(ap);
    if (wrote > 0)
        *at += (size_t)wrote;
    if (*at >= n)
        *at = n - 1;
}

static void put_size(char *b, size_t n, size_t *at, double v)
{
    static const char *const units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
    size_t u = 0;
    while (v >= 1024 && u + 1 < sizeof units / sizeof *units) {
        v /= 1024;
        u++;
    }
    if (u == 0)
        app(b, n, at, "%.0f %s", v, units[0]);
    else
        app(b, n, at, "%.1f %s", v, units[u]);
}

static void put_time(char *b, size_t n, size_t *at, double s)
{
    if (s < 60) {
        app(b, n, at, "%.1f s", s);
        return;
    }
    unsigned long long t = (unsigned long long)(s + 0.5);
    if (t < 3600)
        app(b, n, at, "%llu m %02llu s", t / 60, t % 60);
    else
        app(b, n, at, "%llu h %02llu m", t / 3600, t / 60 % 60);
}

void lg_progress_line(char *buf, size_t n, const char *label, const char *note, bool bytes,
                      const char *unit, unsigned long long done, unsigned long long total,
                      double elapsed)
{
    if (n == 0)
        return;
    buf[0] = 0;
    size_t at = 0;
    const char *u = unit && unit[0] ? unit : NULL;
    if (elapsed < 0)
        elapsed = 0;
    app(buf, n, &at, "%s%s%s  ", label ? label : "", note && note[0] ? " " : "", note ? note : "");
    put_time(buf, n, &at, elapsed);
    app(buf, n, &at, "  ");
    if (bytes) {
        put_size(buf, n, &at, (double)done);
        if (total) {
            app(buf, n, &at, " of ");
            put_size(buf, n, &at, (double)total);
        }
    } else if (total) {
        app(buf, n, &at, "%llu/%llu%s%s", done, total, u ? " " : "", u ? u : "");
    } else {
        app(buf, n, &at, "%llu%s%s", done, u ? " " : "", u ? u : "");
    }
    if (total)
        app(buf, n, &at, " (%.0f%%)", 100.0 * (double)(done < total ? done : total) / (double)total);
    if (elapsed <= 0 || done == 0)
        return;
    double rate = (double)done / elapsed;
    app(buf, n, &at, "  ");
    if (bytes)
        put_size(buf, n, &at, rate);
    else
        app(buf, n, &at, "%.*f%s%s%s", rate >= 100 && rate < 1e4 ? 0 : 1,
            rate >= 1e9 ? rate / 1e9 : rate >= 1e6 ? rate / 1e6 : rate >= 1e4 ? rate / 1e3 : rate,
            rate >= 1e9 ? " G" : rate >= 1e6 ? " M" : rate >= 1e4 ? " k" : "", u ? " " : "",
            u ? u : "");
    app(buf, n, &at, "/s");
    if (total && done < total) {
        app(buf, n, &at, "  ETA ");
        put_time(buf, n, &at, (double)(total - done) / rate);
    }
}

static void draw(golden_progress *p, unsigned long long done, const char *note)
{
    if (!p->enabled)
        return;
    double t = golden_seconds();
    if (p->last > 0 && t - p->last < 0.1 && !(p->total && done >= p->total))
        return;
    p->last = t;
    char line[512];
    lg_progress_line(line, sizeof line, p->label, note, p->bytes, p->unit, done, p->total,
                     t - p->start);
    struct winsize ws;
    size_t cols = ioctl(STDERR_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 1 ? ws.ws_col : 80;
    if (strlen(line) > cols - 1)
        line[cols - 1] = 0; /* one line that redraws: never wrapped */
    fprintf(stderr, "\r%s\033[K", line);
    fflush(stderr);
}

void golden_progress_start(golden_progress *p, const char *label, unsigned long long total)
{
    p->enabled = isatty(STDERR_FILENO) != 0;
    p->label = label;
    p->total = total;
    p->last = 0;
    p->start = golden_seconds();
    p->bytes = false;
    p->unit = NULL;
}

void golden_progress_update(golden_progress *p, unsigned long long done)
{
    draw(p, done, NULL);
}

void golden_progress_update_note(golden_progress *p, unsigned long long done, const char *note)
{
    draw(p, done, note);
}

void golden_progress_end(golden_progress *p)
{
    if (p->enabled && p->last > 0)
        fprintf(stderr, "\r\033[K");
    p->enabled = false;
}
