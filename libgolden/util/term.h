/* The progress line of golden_progress_* as text, apart from the terminal (unit-tested). */
#ifndef LG_UTIL_TERM_H
#define LG_UTIL_TERM_H
#include <stdbool.h>
#include <stddef.h>

/* "LABEL[ NOTE]  ELAPSED  DONE/TOTAL UNIT  RATE/s  ETA T" into buf (always terminated).
 * bytes: DONE, TOTAL and the rate are bytes shown in KiB/MiB/GiB; else counts of `unit`
 * (may be NULL or ""). total 0: unknown, no percentage or ETA. */
void lg_progress_line(char *buf, size_t n, const char *label, const char *note, bool bytes,
                      const char *unit, unsigned long long done, unsigned long long total,
                      double elapsed);

#endif
