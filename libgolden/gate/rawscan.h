/* Private to libgolden/gate: the fast path for one raw-request line (rawscan.c); the jansson
 * path in raw.c stays the reference and handles every line this one declines. */
#ifndef GOLDEN_GATE_RAWSCAN_H
#define GOLDEN_GATE_RAWSCAN_H
#include <errno.h>
#include <stddef.h>
#include "golden/gate.h"

typedef struct {
    const char *case_id; /* into the line, not NUL-terminated */
    size_t case_len;
    int side;            /* 0 baseline, 1 candidate */
    int warmup, steady;
    unsigned have;       /* 1 warmup, 2 steady, 4 output_tokens */
    long long output_tokens;
    double clock[2], temp[2];
    double m[GOLDEN_GATE_METRICS];
} gate_scan;

/* 1 when the line is a well-formed raw request this scanner fully understood (r filled);
 * 0 otherwise: the caller then parses it with jansson. */
int gate_scan_line(const char *buf, size_t len, gate_scan *r);

#endif
