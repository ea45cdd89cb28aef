/* JSON reports: one writer (2-space indent, insertion order) and non-finite numbers as null.
 * (Split out of golden/report.h, which still includes every part.) */
#ifndef GOLDEN_JSONOUT_H
#define GOLDEN_JSONOUT_H
#include "golden/api.h"
#include <stdbool.h>
#include <jansson.h>
#include "golden/error.h"

/* Write a JSON document (2-space indent, keys in insertion order, trailing newline). */
GOLDEN_API int golden_json_write(const char *path, const json_t *doc, bool force, golden_error *err);

/* A JSON number, or JSON null for NaN/Inf (JSON has no non-finite numbers; jansson would
 * return NULL). Reports document which keys may be null. */
GOLDEN_API json_t *golden_json_real(double v);

#endif
