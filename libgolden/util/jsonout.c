/* JSON reports: one writer (2-space indent, keys in insertion order, a trailing newline) over
 * the atomic outputs, and null for the numbers JSON cannot hold. */
#include "golden/report.h"

#include <math.h>

json_t *golden_json_real(double v)
{
    return isfinite(v) ? json_real(v) : json_null();
}

int golden_json_write(const char *path, const json_t *doc, bool force, golden_error *err)
{
    golden_outfile *f;
    if (golden_outfile_open(path, force, &f, err) != GOLDEN_OK)
        return GOLDEN_ERR;
    if (json_dumpf(doc, golden_outfile_stream(f), JSON_INDENT(2) | JSON_REAL_PRECISION(17)) != 0 ||
        fputc('\n', golden_outfile_stream(f)) == EOF) {
        golden_outfile_abort(f);
        return golden_fail_what(err, GOLDEN_EIO, path, "cannot write JSON");
    }
    return golden_outfile_commit(f, err);
}
