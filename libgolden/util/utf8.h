/* UTF-8 validation shared by the escapers (error lines, XML): how long the valid sequence at p
 * is, so invalid bytes can be shown instead of passed on. */
#ifndef GOLDEN_UTIL_UTF8_H
#define GOLDEN_UTIL_UTF8_H
#include <stddef.h>

/* Length (2..4) of the well-formed multi-byte UTF-8 sequence starting at p (at most n bytes
 * available), or 0 when p[0] does not start one (ASCII included). Overlong forms, surrogates
 * and code points above U+10FFFF are not well-formed. */
size_t lg_utf8_seq(const unsigned char *p, size_t n);

#endif
