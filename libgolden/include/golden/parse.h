/* Strict number parsing for command-line options and KEY=VALUE settings (a backend's
 * --backend-opt): one grammar, locale-independent, overflow-checked, whole string or nothing.
 * The tools' typed option table (tools/common/cli.h) and any backend use these, so "1e999",
 * "99999999999999999999999", "12abc" and " 5" are refused the same way everywhere. */
#ifndef GOLDEN_PARSE_H
#define GOLDEN_PARSE_H
#include "golden/api.h"
#include <stdint.h>


/* Why a value was refused (GOLDEN_PARSE_OK: taken). */
typedef enum {
    GOLDEN_PARSE_OK = 0,
    GOLDEN_PARSE_EMPTY,    /* "" */
    GOLDEN_PARSE_SYNTAX,   /* not a number of that kind ("x", "0x10", "-3" unsigned, "inf") */
    GOLDEN_PARSE_TRAILING, /* a number followed by something else ("12abc", "5 ") */
    GOLDEN_PARSE_OVERFLOW, /* does not fit the type at all ("99999999999999999999999", "1e999",
                              "1e-999": a non-zero value that would round to 0) */
    GOLDEN_PARSE_RANGE,    /* a number, outside [lo, hi] */
    GOLDEN_PARSE_UNIT,     /* an unknown unit ("5parsecs") */
    GOLDEN_PARSE_NOMEM     /* the C locale could not be made */
} golden_parse_status;

/* A short English reason ("trailing characters", "too large for the type", ...). */
GOLDEN_API const char *golden_parse_reason(golden_parse_status st);

/* A decimal integer: optional sign, digits (leading zeros allowed), nothing else; no
 * white space, no hex, no octal. lo <= value <= hi. */
GOLDEN_API golden_parse_status golden_parse_int(const char *s, int64_t lo, int64_t hi,
                                                int64_t *out);
/* The same without a sign: the whole uint64_t range (a seed). */
GOLDEN_API golden_parse_status golden_parse_uint(const char *s, uint64_t lo, uint64_t hi,
                                                 uint64_t *out);
/* A finite decimal real: [+-]digits[.digits][(e|E)[+-]digits] (the JSON grammar with an
 * optional '+'); "inf", "nan", hex floats and ".5" are refused. Read in the C locale
 * whatever the process's. lo <= value <= hi. */
GOLDEN_API golden_parse_status golden_parse_real(const char *s, double lo, double hi,
                                                 double *out);
/* A size: digits and an optional unit, B, K/KiB, M/MiB, G/GiB, T/TiB (powers of 1024; "kB" or
 * "MB" are refused as ambiguous). A bare number counts bare_unit bytes (1, or 1 << 20 for
 * an option given in MiB). In bytes, lo <= value <= hi; overflowing uint64_t is OVERFLOW. */
GOLDEN_API golden_parse_status golden_parse_size(const char *s, uint64_t bare_unit, uint64_t lo,
                                                 uint64_t hi, uint64_t *bytes);
/* A duration: a real as above and an optional unit, ns, us, ms, s, min, h. A bare number
 * counts bare_unit seconds (1, or 0.001 for an option given in ms). In seconds,
 * lo <= value <= hi. */
GOLDEN_API golden_parse_status golden_parse_duration(const char *s, double bare_unit, double lo,
                                                     double hi, double *seconds);

#endif
