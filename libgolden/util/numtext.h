/* Numbers in text the library writes or names it reads: the shortest %g form of a double that
 * reads back exactly (C locale), and a bounded decimal integer inside a longer string (a layer
 * number in "layers/12/router"). The strict grammar is golden/parse.h's, in both. */
#ifndef LG_UTIL_NUMTEXT_H
#define LG_UTIL_NUMTEXT_H
#include <stddef.h>
#include <stdint.h>

#include "golden/parse.h"

/* The shortest "%.*g" text of x with at least min_prec (1..17) significant digits that reads
 * back as x, formatted and read in the C locale whatever the process's. Returns the precision
 * used (17 when none shorter reads back, or x is not finite). */
int lg_num_shortest(double x, int min_prec, char *buf, size_t n);

/* A text printf wrote ("%g", "%e"), read back in the C locale (NaN when it is not a number). */
double lg_num_read(const char *s);

/* The significant digits of x's shortest round-trip form and the decimal exponent of its first
 * digit (1234.5 -> 5 digits, exponent 3). x finite and non-zero. */
int lg_num_digits(double x, int *exp10);

/* The decimal integer in the first len bytes of s (golden_parse_int's grammar: no sign unless
 * lo < 0, no space), lo <= value <= hi. */
golden_parse_status lg_parse_int_n(const char *s, size_t len, int64_t lo, int64_t hi,
                                   int64_t *out);

/* The run of decimal digits at s: its length (0 when s does not start with a digit). */
size_t lg_digits_len(const char *s);

#endif
