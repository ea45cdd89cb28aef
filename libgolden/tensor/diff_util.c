/* Small helpers of golden-diff's run: allocated formatting, string lists, and the printing
 * of a value against its limit with enough digits that the two sides never look equal. */
#include "tensor/diff_internal.h"
#include "util/numtext.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

char *lg_diff_fmt(const char *f, ...)
{
    va_list ap;
    va_start(ap, f);
    char *s = NULL;
    if (vasprintf(&s, f, ap) < 0)
        s = NULL;
    va_end(ap);
    return s;
}

int lg_diff_push(char ***list, size_t *n, char *s)
{
    if (!s)
        return -1;
    char **nl = realloc(*list, (*n + 1) * sizeof *nl);
    if (!nl) {
        free(s);
        return -1;
    }
    *list = nl;
    nl[(*n)++] = s;
    return 0;
}

void lg_diff_free_strs(char **list, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(list[i]);
    free(list);
}

void golden_diff_shape_str(int rank, const uint64_t *shape, char *buf, size_t n)
{
    size_t o = 0;
    o += (size_t)snprintf(buf + o, n - o, "[");
    for (int d = 0; d < rank && o < n; d++)
        o += (size_t)snprintf(buf + o, n - o, d ? ", %" PRIu64 : "%" PRIu64, shape[d]);
    if (o < n)
        snprintf(buf + o, n - o, "]");
}

golden_tier lg_diff_engine_tier(const golden_diff_tensor *t)
{
    if (t->judge.tier != GOLDEN_TIER_ROUTER)
        return t->judge.tier;
    return golden_dtype_is_float(t->dtype_ref) ? GOLDEN_TIER_LAYER : GOLDEN_TIER_KERNEL;
}

bool lg_diff_mismatches_judged(const golden_diff_tensor *t, uint64_t *n)
{
    bool judged = t->compared && (t->m.ints ? !(t->router_checked && t->router_ids)
                                            : lg_diff_engine_tier(t) == GOLDEN_TIER_KERNEL);
    *n = judged ? t->m.mismatches : 0;
    return judged;
}

void lg_diff_index_str(const golden_diff_tensor *t, uint64_t index, char *buf, size_t n)
{
    uint64_t co[GOLDEN_MAX_RANK];
    golden_cmp_unravel(index, t->rank, t->shape, co);
    golden_diff_shape_str(t->rank, co, buf, n);
}

void lg_diff_num_pair(double v, double limit, char *vbuf, char *lbuf, size_t n)
{
    /* the limit exactly as the policy gave it (shortest form that reads back the same) */
    for (int p = 1; p <= 17; p++) {
        snprintf(lbuf, n, "%.*g", p, limit);
        if (lg_num_read(lbuf) == limit)
            break;
    }
    for (int p = 6; p <= 17; p++) {
        snprintf(vbuf, n, "%.*g", p, v);
        double back = lg_num_read(vbuf);
        bool side = (v < limit) == (back < limit) && (v > limit) == (back > limit);
        if (side && (v == limit || strcmp(vbuf, lbuf) != 0))
            return;
    }
}
