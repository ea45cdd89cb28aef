/* Process-wide defaults a program sets once at start (as libgit2's git_libgit2_opts): worker
 * count, whether colour is wanted, when the run began. The library reads no environment. */
#include "golden/report.h"

#include "util/pool.h"

#include <string.h>
#include <time.h>
#include <unistd.h>

static golden_settings current; /* zero: all cores, colour allowed, no run clock */

int golden_configure(const golden_settings *s, golden_error *err)
{
    if (!s || s->version != GOLDEN_SETTINGS_VERSION)
        return golden_fail_what(err, GOLDEN_EINVAL, NULL, "golden_settings version %u is not %u",
                                s ? s->version : 0u, (unsigned)GOLDEN_SETTINGS_VERSION);
    if (s->threads < 0 || s->threads > GOLDEN_POOL_MAX)
        return golden_fail_what(err, GOLDEN_EINVAL, NULL, "threads must be 0 to %d, not %d",
                                GOLDEN_POOL_MAX, s->threads);
    current = *s;
    return GOLDEN_OK;
}

int golden_threads(void)
{
    return current.threads > 0 ? current.threads : lg_cpu_count();
}

bool golden_use_color(FILE *stream)
{
    return !current.no_color && stream && isatty(fileno(stream));
}

void golden_run_clock(double *seconds, time_t *started)
{
    *seconds = current.started_monotonic > 0 ? golden_seconds() - current.started_monotonic : 0;
    *started = current.started_wall;
}
