/* Findings of a check: what failed or is still to fill, where (file:line:col or JSON pointer),
 * collected in order for the tool to print and the reports to carry. */
#include "exp/internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "util/vec.h"

void golden_findings_init(golden_findings *f)
{
    memset(f, 0, sizeof *f);
}

void golden_findings_free(golden_findings *f)
{
    if (!f)
        return;
    free(f->items);
    memset(f, 0, sizeof *f);
}

int exp_findings_vadd(golden_findings *f, golden_severity sev, const char *rule,
                         const char *file, int line, int col, const char *pointer,
                         golden_error *err, const char *fmt, va_list ap)
{
    if (VEC_GROW(f->items, f->count, f->cap, 32) != 0)
        return golden_fail_what(err, GOLDEN_ENOMEM, NULL, "out of memory collecting findings");
    golden_finding *g = &f->items[f->count++];
    memset(g, 0, sizeof *g);
    g->severity = sev;
    snprintf(g->rule, sizeof g->rule, "%s", rule);
    snprintf(g->file, sizeof g->file, "%s", file ? file : "");
    g->line = line;
    g->col = col;
    snprintf(g->pointer, sizeof g->pointer, "%s", pointer ? pointer : "");
    vsnprintf(g->message, sizeof g->message, fmt, ap);
    if (sev == GOLDEN_SEV_ERROR)
        f->errors++;
    else if (sev == GOLDEN_SEV_TODO)
        f->todos++;
    return GOLDEN_OK;
}

int golden_findings_add(golden_findings *f, golden_severity sev, const char *rule,
                        const char *file, int line, int col, const char *pointer,
                        golden_error *err, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int rc = exp_findings_vadd(f, sev, rule, file, line, col, pointer, err, fmt, ap);
    va_end(ap);
    return rc;
}

void golden_finding_where(const golden_finding *f, char *buf, size_t n)
{
    if (f->line > 0)
        snprintf(buf, n, "%s:%d:%d", f->file, f->line, f->col);
    else if (f->pointer[0])
        snprintf(buf, n, "%s#%s", f->file, f->pointer);
    else
        snprintf(buf, n, "%s", f->file);
}

const char *golden_item_status_name(golden_item_status s)
{
    switch (s) {
    case GOLDEN_ITEM_PRESENT: return "present";
    case GOLDEN_ITEM_MISSING: return "missing";
    default: return "malformed";
    }
}
