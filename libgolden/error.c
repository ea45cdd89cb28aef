/* Error records: the one way libgolden reports a failure to its caller.
 * Tools turn a record into the single stderr line the contracts ask for. */
#include "golden/error.h"

#include <string.h>

void golden_error_clear(golden_error *err)
{
    if (err) {
        err->where[0] = '\0';
        err->what[0] = '\0';
    }
}

int golden_fail(golden_error *err, const char *where, const char *fmt, ...)
{
    if (!err)
        return GOLDEN_ERR;
    snprintf(err->where, sizeof err->where, "%s", where ? where : "");
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->what, sizeof err->what, fmt, ap);
    va_end(ap);
    return GOLDEN_ERR;
}

int golden_failw(golden_error *err, const char *what, const char *wfmt, ...)
{
    if (!err)
        return GOLDEN_ERR;
    va_list ap;
    va_start(ap, wfmt);
    vsnprintf(err->where, sizeof err->where, wfmt, ap);
    va_end(ap);
    snprintf(err->what, sizeof err->what, "%s", what);
    return GOLDEN_ERR;
}

void golden_error_print(FILE *stream, const char *tool, const golden_error *err)
{
    const char *what = err->what[0] ? err->what : "unknown error";
    if (err->where[0])
        fprintf(stream, "%s: %s: %s\n", tool, err->where, what);
    else
        fprintf(stream, "%s: %s\n", tool, what);
}
