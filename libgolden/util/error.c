/* Error records: the one way libgolden reports a failure to its caller.
 * Tools turn a record into the single stderr line the contracts ask for. */
#include "golden/error.h"

#include "util/utf8.h"

#include <errno.h>
#include <string.h>

void golden_error_clear(golden_error *err)
{
    if (err) {
        err->code = GOLDEN_ENONE;
        err->where[0] = '\0';
        err->what[0] = '\0';
    }
}

int golden_fail_what(golden_error *err, golden_code code, const char *where,
                     const char *fmt, ...)
{
    if (!err)
        return GOLDEN_ERR;
    err->code = code;
    snprintf(err->where, sizeof err->where, "%s", where ? where : "");
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->what, sizeof err->what, fmt, ap);
    va_end(ap);
    return GOLDEN_ERR;
}

int golden_fail_where(golden_error *err, golden_code code, const char *what,
                      const char *wfmt, ...)
{
    if (!err)
        return GOLDEN_ERR;
    err->code = code;
    va_list ap;
    va_start(ap, wfmt);
    vsnprintf(err->where, sizeof err->where, wfmt, ap);
    va_end(ap);
    snprintf(err->what, sizeof err->what, "%s", what);
    return GOLDEN_ERR;
}

golden_code golden_code_from_errno(int errnum)
{
    switch (errnum) {
    case ENOENT: case ENOTDIR: return GOLDEN_ENOTFOUND;
    case ENOMEM: return GOLDEN_ENOMEM;
    case EEXIST: return GOLDEN_EEXISTS;
    case EINVAL: return GOLDEN_EINVAL;
    default: return GOLDEN_EIO;
    }
}

const char *golden_code_name(golden_code code)
{
    static const char *const names[] = {"ENONE", "EINVAL", "ENOTFOUND", "ECORRUPT", "EIO",
                                        "ENOMEM", "EEXISTS", "EUNSUPPORTED", "EINTERNAL"};
    if ((unsigned)code < sizeof names / sizeof names[0])
        return names[code];
    return "EUNKNOWN";
}

/* Write s with every control character, DEL and invalid UTF-8 byte escaped (\n, \t, \r,
 * \xNN), so a newline in a file name cannot split the one line a problem gets. */
static void put_escaped(FILE *stream, const char *s)
{
    const unsigned char *p = (const unsigned char *)s, *end = p + strlen(s);
    while (p < end) {
        size_t seq = *p >= 0x80 ? lg_utf8_seq(p, (size_t)(end - p)) : 0;
        if (seq) {
            fwrite(p, 1, seq, stream);
            p += seq;
            continue;
        }
        if (*p == '\n')
            fputs("\\n", stream);
        else if (*p == '\t')
            fputs("\\t", stream);
        else if (*p == '\r')
            fputs("\\r", stream);
        else if (*p < 0x20 || *p >= 0x7f)
            fprintf(stream, "\\x%02x", *p);
        else
            fputc(*p, stream);
        p++;
    }
}

void golden_error_print(FILE *stream, const char *tool, const golden_error *err)
{
    const char *what = err->what[0] ? err->what : "unknown error";
    fprintf(stream, "%s: ", tool);
    if (err->where[0]) {
        put_escaped(stream, err->where);
        fputs(": ", stream);
    }
    put_escaped(stream, what);
    fputc('\n', stream);
}
