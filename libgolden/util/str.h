/* The library's small string helpers, one of each: a suffix test, a path-component suffix test
 * and a path join (heap or caller's buffer). */
#ifndef LG_UTIL_STR_H
#define LG_UTIL_STR_H
#include <stdbool.h>
#include <stddef.h>

/* Whether s ends with suffix (byte for byte; "" ends every string). */
bool lg_has_suffix(const char *s, const char *suffix);
/* Whether path ends with the path components of suffix: "a/decision.md" and "decision.md" end
 * with "decision.md", "a/xdecision.md" does not. */
bool lg_path_has_suffix(const char *path, const char *suffix);
/* dir + "/" + name, malloc'd (free it); NULL when out of memory. */
char *lg_path_join(const char *dir, const char *name);
/* dir + "/" + name into buf; -1 when it does not fit (never a truncated path). */
int lg_path_join_buf(char *buf, size_t n, const char *dir, const char *name);

#endif
