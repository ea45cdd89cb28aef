/* npu-replay conform's driver: which checks run, a fresh backend for each with tap capture, the
 * findings, and the report as JSON. The checks themselves are in conform_kv.c and conform_router.c. */
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "golden/report.h"
#include "replay/conform_priv.h"
#include "replay/faults_priv.h"
#include "replay/host_priv.h"
#include "util/vec.h"

typedef struct {
    const char *name;
    int (*run)(cf_ctx *c);
    int (*fixed)(cf_ctx *c); /* under opts.fixed_points; NULL: the check did not exist then */
} cf_entry;

static const cf_entry checks[] = {
    {"causal-mask", cf_check_causal_mask, cf_fixed_causal_mask},
    {"kv-positions", cf_check_kv_positions, cf_fixed_kv_positions},
    {"kv-lanes", cf_check_kv_lanes, cf_fixed_kv_lanes},
    {"kv-tail", cf_check_kv_tail, cf_fixed_kv_tail},
    {"kv-reset", cf_check_kv_reset, cf_fixed_kv_reset},
    {"rejection", cf_check_rejection, cf_fixed_rejection},
    {"router", cf_check_router, cf_check_router},
    {"taps", cf_check_taps, NULL},
    {"determinism", cf_check_determinism, NULL},
    {"sampling-topk", cf_check_sampling_topk, cf_check_sampling_topk},
    {"sampling-stats", cf_check_sampling_stats, NULL},
    {"golden", cf_check_golden, NULL},
    {"kv-growth", cf_check_kv_growth, cf_check_kv_growth}};
#define N_CHECKS (sizeof checks / sizeof *checks)

const char *const *golden_conform_check_names(void)
{
    static const char *names[N_CHECKS + 1];
    for (size_t i = 0; i < N_CHECKS; i++)
        names[i] = checks[i].name;
    return names;
}

/* The harness's tap hook: keep (a copy of) every tap the filter lets through, rows of one
 * name appended in arrival order (a backend may send a long prefill in chunks). */
static int on_tap(void *ctx, const char *name, int layer, int dtype, int64_t rows, int64_t cols,
                  const void *data)
{
    cf_ctx *c = ctx;
    if (c->tap_discard || (c->tap_filter && !strstr(name, c->tap_filter)))
        return 0;
    cf_tap *t = (cf_tap *)cf_tap_find(c, name);
    if (t && t->cols != cols)
        return 1;
    if (!t) {
        if (VEC_GROW(c->taps, c->n_taps, c->cap_taps, 16) != 0)
            return c->tap_oom = true, 1;
        t = &c->taps[c->n_taps++];
        memset(t, 0, sizeof *t);
        snprintf(t->name, sizeof t->name, "%s", name);
        t->layer = layer;
        t->dtype = dtype;
        t->cols = cols;
    }
    void *d = realloc(t->data, (size_t)((t->rows + rows) * cols) * 4);
    if (!d)
        return c->tap_oom = true, 1;
    memcpy((char *)d + (size_t)(t->rows * cols) * 4, data, (size_t)(rows * cols) * 4);
    t->data = d;
    t->rows += rows;
    return 0;
}

void cf_taps_clear(cf_ctx *c)
{
    for (size_t i = 0; i < c->n_taps; i++)
        free(c->taps[i].data);
    c->n_taps = 0;
}

const cf_tap *cf_tap_find(const cf_ctx *c, const char *name)
{
    for (size_t i = 0; i < c->n_taps; i++)
        if (strcmp(c->taps[i].name, name) == 0)
            return &c->taps[i];
    return NULL;
}

int cf_open(cf_ctx *c, const char *model_dir)
{
    const golden_conform_opts *o = c->o;
    golden_backend_load_opts lo = {2, o->backend, model_dir ? model_dir : o->model_dir, o->n_opts,
                                   o->opts, o->threads, o->version >= 2 ? o->iso : NULL};
    golden_error_clear(&c->err);
    if (golden_backend_load(&lo, &c->b, &c->err))
        return cf_error(c, NULL);
    c->info = golden_backend_get_info(c->b);
    golden_backend_hooks h = {c, on_tap, NULL, 1};
    if (golden_backend_set_hooks(c->b, &h, &c->err))
        return cf_error(c, NULL);
    c->taps_on = true;
    c->limit = c->info->context_limit;
    if (o->max_context > 0 && o->max_context < c->limit)
        c->limit = o->max_context;
    return 0;
}

int cf_set_taps(cf_ctx *c, bool on)
{
    golden_backend_hooks h = {c, on_tap, NULL, on ? 1 : 0};
    if (golden_backend_set_hooks(c->b, &h, &c->err))
        return cf_error(c, NULL);
    c->taps_on = on;
    return 0;
}

int cf_open_ref(cf_ctx *c, cf_ctx *ref)
{
    memset(ref, 0, sizeof *ref);
    ref->o = c->o;
    ref->chk = c->chk;
    ref->tap_discard = true;
    ref->rng = c->rng;
    ref->path_rng = c->path_rng; /* the other open takes the other path at each step */
    memset(ref->path_n, 1, sizeof ref->path_n);
    if (cf_open(ref, NULL) == 0)
        return 0;
    c->err = ref->err;
    cf_close(ref);
    return 1;
}

void cf_close(cf_ctx *c)
{
    golden_backend_close(c->b);
    c->b = NULL;
    cf_taps_clear(c);
    free(c->taps);
    c->taps = NULL;
    c->cap_taps = 0;
}

void cf_find(cf_ctx *c, const char *kase, const char *fmt, ...)
{
    golden_conform_check *k = c->chk;
    if (k->status == GOLDEN_CONFORM_PASS)
        k->status = GOLDEN_CONFORM_FAIL;
    if (k->n_findings++ >= GOLDEN_CONFORM_KEEP)
        return;
    golden_conform_finding *f = &k->findings[k->n_findings - 1];
    snprintf(f->kase, sizeof f->kase, "%s", kase);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(f->what, sizeof f->what, fmt, ap);
    va_end(ap);
}

int cf_error(cf_ctx *c, const char *what)
{
    golden_conform_check *k = c->chk;
    /* a failure found wins over a check that could not finish (docs/conformance.md): the
     * check stays FAIL with its findings, and why it stopped is one finding more */
    bool failed = k->status == GOLDEN_CONFORM_FAIL;
    if (failed && k->error[0])
        return 1; /* already stopped once: the first reason stands */
    k->status = GOLDEN_CONFORM_ERROR;
    if (!what && c->b && strcmp(c->err.where, golden_backend_name(c->b)) == 0)
        k->fault = true; /* the backend itself failed a call */
    if (what)
        snprintf(k->error, sizeof k->error, "%s", what);
    else if (c->err.where[0])
        snprintf(k->error, sizeof k->error, "%.280s: %.300s", c->err.where, c->err.what);
    else
        snprintf(k->error, sizeof k->error, "%.590s", c->err.what);
    if (failed) {
        k->status = GOLDEN_CONFORM_FAIL;
        cf_find(c, "not finished", "the check stopped after %zu findings: %s", k->n_findings,
                k->error);
    }
    return 1;
}

static uint64_t next64(cf_ctx *c);

void cf_tokens(cf_ctx *c, int32_t *t, size_t n)
{
    for (size_t i = 0; i < n; i++) /* splitmix64 */
        t[i] = (int32_t)(next64(c) % (uint64_t)c->info->vocab_size);
}

/* A row the backend returned that no check may compare (NaN or +Inf anywhere, or nothing but
 * -inf): a fault of the backend, as in run, never a pair of NaNs that compare equal. */
static int logits_usable(cf_ctx *c, const float *row, int V)
{
    long bad = replay_logits_bad(row, V);
    if (bad < 0)
        return 0;
    if (bad == V)
        golden_fail_what(&c->err, GOLDEN_ECORRUPT, golden_backend_name(c->b),
                         "logits: every entry is -inf");
    else
        golden_fail_what(&c->err, GOLDEN_ECORRUPT, golden_backend_name(c->b),
                         "logits: entry %ld is %s", bad, isnan(row[bad]) ? "NaN" : "+Inf");
    return cf_error(c, NULL);
}

int cf_logits(cf_ctx *c, int lane, float *dst)
{
    int V = c->info->vocab_size;
    if (c->info->logits_dtype != GOLDEN_BK_BF16)
        return golden_backend_logits(c->b, lane, 0, V, dst, &c->err) ? cf_error(c, NULL)
                                                                      : logits_usable(c, dst, V);
    uint16_t *h = malloc((size_t)V * 2);
    if (!h)
        return cf_error(c, "out of memory");
    int rc = golden_backend_logits(c->b, lane, 0, V, h, &c->err);
    if (rc == 0)
        golden_logits_bf16_to_f32(h, 0, (size_t)V, dst);
    free(h);
    return rc ? cf_error(c, NULL) : logits_usable(c, dst, V);
}

int cf_prefill_logits(cf_ctx *c, int lane, int64_t pos, const int32_t *t, size_t n, float *dst)
{
    if (golden_backend_prefill(c->b, lane, pos, t, n, &c->err))
        return cf_error(c, NULL);
    return dst ? cf_logits(c, lane, dst) : 0;
}

/* One decode step. A version 2 backend has two decode paths and the tools use both (`run` and
 * soak decode through decode_at at the harness's count, matrix and score through decode): the
 * steps of a lane alternate between them, from a phase a lane drawn from the check's own seed
 * (not the stream of its positions and tokens), so any two decodes of a lane take both paths
 * and a fault in either is seen where the check looks. decode_at goes at the lane's length and
 * must say it wrote there (abi.c: a violation else). */
int cf_decode_logits(cf_ctx *c, int lane, int32_t tok, float *dst)
{
    unsigned slot = (unsigned)lane & 63u;
    uint64_t z = c->path_rng ^ (0x9e3779b97f4a7c15ull * (slot + 1));
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    bool at = (((z ^ (z >> 31)) ^ c->path_n[slot]++) & 1) != 0;
    if (golden_backend_abi(c->b) >= 2 && at) {
        int64_t pos;
        if (cf_length(c, lane, &pos))
            return 1;
        if (golden_backend_decode_at(c->b, lane, pos, tok, &c->err))
            return cf_error(c, NULL);
    } else if (golden_backend_decode(c->b, lane, tok, &c->err)) {
        return cf_error(c, NULL);
    }
    return dst ? cf_logits(c, lane, dst) : 0;
}

bool cf_same(const cf_ctx *c, const float *a, const float *b, size_t n, size_t *at, double *maxd)
{
    bool same = true;
    double tol = c->o->atol;
    if (c->cross_open && c->o->nondet_tol > tol)
        tol = c->o->nondet_tol;
    *maxd = 0;
    for (size_t i = 0; i < n; i++) {
        bool eq = tol > 0 ? fabs((double)a[i] - (double)b[i]) <= tol
                          : memcmp(&a[i], &b[i], 4) == 0 && a[i] == a[i];
        if (eq)
            continue;
        double d = fabs((double)a[i] - (double)b[i]);
        if (same)
            *at = i;
        same = false;
        if (d > *maxd || isnan(d))
            *maxd = d;
    }
    return same;
}

/* Compare logits a (what the check got) with ref, and record a finding on a difference. */
void cf_cmp_logits(cf_ctx *c, const char *kase, const char *what, const float *a,
                       const float *ref)
{
    size_t at = 0, V = (size_t)c->info->vocab_size;
    double d;
    c->chk->comparisons += V;
    if (!cf_same(c, a, ref, V, &at, &d))
        cf_find(c, kase, "%s: logits differ, first at vocab entry %zu (%.9g vs %.9g), max |d| %.3g",
                what, at, (double)a[at], (double)ref[at], d);
}

/* Taps of the perturbed run against the base run: rows before j must be equal; returns whether
 * some row j changed. */
bool cf_cmp_taps(cf_ctx *c, const cf_tap *base, size_t nb, int64_t j, const char *kase)
{
    bool changed = false;
    for (size_t i = 0; i < nb; i++) {
        const cf_tap *b = &base[i], *x = cf_tap_find(c, b->name);
        if (!x || x->rows != b->rows) {
            cf_find(c, kase, "tap %s: %lld rows in the base run, %lld now", b->name,
                    (long long)b->rows, x ? (long long)x->rows : 0LL);
            continue;
        }
        size_t at = 0, n = (size_t)(j * b->cols);
        double d;
        c->chk->comparisons += n;
        bool same = b->dtype == GOLDEN_BK_I32 ? memcmp(b->data, x->data, n * 4) == 0
                                              : cf_same(c, x->data, b->data, n, &at, &d);
        if (!same && b->dtype == GOLDEN_BK_I32)
            for (at = 0; ((const int32_t *)b->data)[at] == ((const int32_t *)x->data)[at]; at++)
                d = 0;
        if (!same)
            cf_find(c, kase, "%s at position %lld (before j) changed: column %lld, %.9g vs %.9g",
                    b->name, (long long)(at / (size_t)b->cols), (long long)(at % (size_t)b->cols),
                    b->dtype == GOLDEN_BK_I32 ? (double)((const int32_t *)x->data)[at]
                                              : (double)((const float *)x->data)[at],
                    b->dtype == GOLDEN_BK_I32 ? (double)((const int32_t *)b->data)[at]
                                              : (double)((const float *)b->data)[at]);
        if (j < b->rows && memcmp((const char *)b->data + (size_t)(j * b->cols) * 4,
                                  (const char *)x->data + (size_t)(j * b->cols) * 4,
                                  (size_t)b->cols * 4) != 0)
            changed = true;
    }
    return changed;
}


void cf_cover(cf_ctx *c, const char *key, int64_t v)
{
    if (!c->chk->coverage)
        c->chk->coverage = json_object();
    json_t *a = json_object_get(c->chk->coverage, key);
    if (!a && c->chk->coverage) {
        a = json_array();
        json_object_set_new(c->chk->coverage, key, a);
    }
    json_array_append_new(a, json_integer(v));
}

void cf_cover_str(cf_ctx *c, const char *key, const char *v)
{
    if (!c->chk->coverage)
        c->chk->coverage = json_object();
    json_object_set_new(c->chk->coverage, key, json_string(v));
}

static void add_pos(int64_t *out, size_t *n, size_t cap, int64_t p, int64_t lim)
{
    if (p < 1 || p >= lim || *n >= cap)
        return;
    for (size_t i = 0; i < *n; i++)
        if (out[i] == p)
            return;
    size_t i = *n;
    while (i > 0 && out[i - 1] > p) { /* keep sorted */
        out[i] = out[i - 1];
        i--;
    }
    out[i] = p;
    (*n)++;
}

size_t cf_boundaries(int64_t lim, int64_t *out, size_t cap)
{
    size_t n = 0;
    add_pos(out, &n, cap, 1, lim);
    add_pos(out, &n, cap, 2, lim);
    for (int64_t P = 16; P < lim + 1 && P > 0; P *= 2) /* every power of two from 16 */
        for (int d = -1; d <= 1; d++)             /* (tile, page and head edges) and its neighbours */
            add_pos(out, &n, cap, P + d, lim);
    add_pos(out, &n, cap, lim - 1, lim);
    return n;
}

/* The lane's length; a host that died is the check's error (1), as for every other call. */
int cf_length(cf_ctx *c, int lane, int64_t *len)
{
    *len = -1;
    if (replay_backend_length(c->b, lane, len, &c->err))
        return cf_error(c, NULL), 1;
    return 0;
}

int cf_expect_length(cf_ctx *c, int lane, int64_t want, const char *kase, const char *after)
{
    int64_t len;
    if (cf_length(c, lane, &len))
        return 1;
    c->chk->comparisons++;
    if (len != want)
        cf_find(c, kase, "lane %d: length() is %lld after %s, the harness counts %lld", lane,
                (long long)len, after, (long long)want);
    return 0;
}

double cf_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

void cf_budget_start(cf_ctx *c)
{
    c->deadline = c->o->budget > 0 && !c->o->fixed_points ? cf_now() + c->o->budget : 0;
}

bool cf_budget_left(const cf_ctx *c, size_t done)
{
    return done < CF_MAX_RANDOM && c->deadline > 0 && cf_now() < c->deadline;
}

static uint64_t next64(cf_ctx *c)
{
    uint64_t z = (c->rng += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

int64_t cf_random_position(cf_ctx *c, int64_t lo, int64_t hi, const int64_t *set, size_t n)
{
    if (hi - lo <= (int64_t)n)
        return -1;
    for (int tries = 0; tries < 64; tries++) {
        int64_t p = lo + (int64_t)(next64(c) % (uint64_t)(hi - lo));
        bool seen = false;
        for (size_t i = 0; i < n && !seen; i++)
            seen = set[i] == p;
        if (!seen)
            return p;
    }
    return -1;
}

int cf_lanes(cf_ctx *c, int *out)
{
    int n = c->info->num_lanes, m = 0;
    if (n <= 8) {
        for (int i = 0; i < n; i++)
            out[m++] = i;
        return m;
    }
    out[m++] = 0;
    out[m++] = n - 1;
    while (m < 8) { /* seeded, distinct, then sorted */
        int l = 1 + (int)(next64(c) % (uint64_t)(n - 2));
        bool seen = false;
        for (int i = 0; i < m; i++)
            seen |= out[i] == l;
        if (!seen)
            out[m++] = l;
    }
    for (int i = 1; i < m; i++)
        for (int j = i; j > 0 && out[j - 1] > out[j]; j--) {
            int t = out[j];
            out[j] = out[j - 1];
            out[j - 1] = t;
        }
    return m;
}

/* After a failed call: the shared retest after reset, on 8 of the check's own tokens. */
static int retest(cf_ctx *c)
{
    int32_t t[8];
    cf_tokens(c, t, 8);
    return replay_fault_retest(c->b, t, 8);
}


/* Whether name is in the comma-separated list (NULL = all). */
static bool selected(const char *list, const char *name)
{
    if (!list)
        return true;
    size_t n = strlen(name);
    for (const char *p = list; *p;) {
        const char *e = strchr(p, ',');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        if (len == n && strncmp(p, name, n) == 0)
            return true;
        p += len + (e != NULL);
    }
    return false;
}

static int check_list(const char *list, golden_error *err)
{
    if (!list)
        return 0;
    if (!*list) /* --checks '': zero checks would be a pass by accident */
        return golden_fail_what(err, GOLDEN_EINVAL, "--checks", "names no check");
    for (const char *p = list; *p;) {
        const char *e = strchr(p, ',');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        bool known = false;
        for (size_t i = 0; i < N_CHECKS; i++)
            known |= strlen(checks[i].name) == len && strncmp(p, checks[i].name, len) == 0;
        if (!known)
            return golden_fail_what(err, GOLDEN_EINVAL, "--checks", "unknown check '%.*s'",
                                    (int)len, p);
        p += len + (e != NULL);
    }
    return 0;
}

int golden_conform_run(const golden_conform_opts *given, golden_conform_report *rep,
                       golden_error *err)
{
    memset(rep, 0, sizeof *rep);
    if (!given || given->version < 1 || given->version > GOLDEN_CONFORM_OPTS_VERSION)
        return golden_fail_what(err, GOLDEN_EINVAL, "conform", "options of an unknown version");
    golden_conform_opts oo; /* version 1 ends at kv_elem_bytes: the rest stays 0 */
    memset(&oo, 0, sizeof oo);
    memcpy(&oo, given, given->version == 1   ? offsetof(golden_conform_opts, iso)
                       : given->version == 2 ? offsetof(golden_conform_opts, golden)
                       : given->version == 3 ? offsetof(golden_conform_opts, sampling_draws)
                                             : sizeof oo);
    if (oo.budget == 0)
        oo.budget = 1;
    if (!(oo.nondet_tol >= 0) || !(oo.budget == oo.budget) || !(oo.golden_kl_max >= 0) ||
        !(oo.golden_lsm_max >= 0))
        return golden_fail_what(err, GOLDEN_EINVAL, "conform", "a negative or NaN tolerance or budget");
    if (oo.sampling_draws < 0 || oo.sampling_positions < 0 || !(oo.sampling_alpha >= 0) ||
        oo.sampling_alpha >= 0.5)
        return golden_fail_what(err, GOLDEN_EINVAL, "conform",
                                "sampling-stats: negative draws or positions, or an alpha outside "
                                "[0, 0.5)");
    const golden_conform_opts *o = &oo;
    if (check_list(o->checks, err))
        return GOLDEN_ERR;
    rep->checks = calloc(N_CHECKS, sizeof *rep->checks);
    if (!rep->checks)
        return golden_fail_what(err, GOLDEN_ENOMEM, "conform", "out of memory");
    snprintf(rep->backend, sizeof rep->backend, "%s", o->backend ? o->backend : "cpu");
    if (o->version >= 2 && o->iso)
        replay_host_log_path(o->iso, rep->backend_log, sizeof rep->backend_log);
    if (replay_config_unknown(o->model_dir, &rep->config_unknown_keys, err) != 0) {
        golden_conform_report_free(rep);
        return GOLDEN_ERR;
    }
    for (size_t i = 0; i < N_CHECKS; i++) {
        int (*fn)(cf_ctx *) = o->fixed_points ? checks[i].fixed : checks[i].run;
        if (!selected(o->checks, checks[i].name) || !fn)
            continue;
        if (!o->checks && fn == cf_check_golden && !o->golden)
            continue; /* all checks: golden only with a golden to compare with */
        golden_conform_check *k = &rep->checks[rep->n++];
        k->name = checks[i].name;
        k->findings = calloc(GOLDEN_CONFORM_KEEP, sizeof *k->findings);
        if (!k->findings) {
            golden_conform_report_free(rep);
            return golden_fail_what(err, GOLDEN_ENOMEM, "conform", "out of memory");
        }
        cf_ctx c;
        memset(&c, 0, sizeof c);
        c.o = o;
        c.chk = k;
        c.rng = o->seed ^ (0x5bd1e995ull * (i + 1));
        c.path_rng = o->seed ^ (0x64656361ull * (i + 7));
        double t0 = cf_now();
        if (cf_open(&c, NULL) != 0 && !c.b && rep->n == 1) {
            /* the backend cannot even be loaded (no model folder, a bad config, a plug-in that
             * dies in open): nothing can be checked, one error for the whole run */
            *err = c.err;
            cf_close(&c);
            free(c.taps);
            golden_conform_report_free(rep);
            return GOLDEN_ERR;
        }
        if (c.b)
            fn(&c);
        if (c.tap_oom && k->status != GOLDEN_CONFORM_ERROR)
            cf_error(&c, "out of memory while keeping taps");
        if (k->fault) {
            replay_fault stamp;
            replay_fault_begin(&stamp);
            snprintf(k->fault_time, sizeof k->fault_time, "%s", stamp.time);
            k->fault_kind = replay_fault_kind(k->error);
            k->retest = c.b ? retest(&c) : 0;
        }
        cf_close(&c);
        free(c.taps);
        k->seconds = cf_now() - t0;
    }
    return 0;
}

int golden_conform_exit(const golden_conform_report *rep)
{
    int rc = 0;
    size_t skipped = 0;
    for (size_t i = 0; i < rep->n; i++) {
        if (rep->checks[i].status == GOLDEN_CONFORM_FAIL)
            return 1;
        if (rep->checks[i].status == GOLDEN_CONFORM_ERROR)
            rc = 2;
        skipped += rep->checks[i].status == GOLDEN_CONFORM_SKIPPED;
    }
    return skipped == rep->n ? 2 : rc; /* nothing checked (no check, or all skipped) is no pass */
}

json_t *golden_conform_json(const golden_conform_report *rep)
{
    static const char *const status[] = {"pass", "fail", "error", "skipped"};
    json_t *arr = json_array();
    for (size_t i = 0; arr && i < rep->n; i++) {
        const golden_conform_check *k = &rep->checks[i];
        json_t *fs = json_array();
        size_t kept = k->n_findings < GOLDEN_CONFORM_KEEP ? k->n_findings : GOLDEN_CONFORM_KEEP;
        for (size_t f = 0; fs && f < kept; f++)
            json_array_append_new(fs, json_pack("{s:s, s:s}", "case", k->findings[f].kase,
                                                "what", k->findings[f].what));
        json_t *o = json_pack("{s:s, s:s, s:o, s:I, s:I, s:o}", "check", k->name, "status",
                              status[k->status], "seconds", golden_json_real(k->seconds),
                              "comparisons", (json_int_t)k->comparisons, "findings_total",
                              (json_int_t)k->n_findings, "findings", fs ? fs : json_array());
        if (o && k->status == GOLDEN_CONFORM_ERROR)
            json_object_set_new(o, "error", json_string(k->error));
        if (o && k->status == GOLDEN_CONFORM_SKIPPED)
            json_object_set_new(o, "why", json_string(k->error));
        if (o && k->k_required > 0) {
            json_object_set_new(o, "k_required", json_integer(k->k_required));
            json_object_set_new(o, "k_backend", json_integer(k->k_backend));
        }
        if (o && k->coverage)
            json_object_set(o, "coverage", k->coverage);
        if (o && k->n_points) {
            json_t *pts = json_array();
            for (size_t p = 0; pts && p < k->n_points; p++)
                json_array_append_new(pts, json_pack("{s:I, s:o, s:o, s:o}", "context",
                    (json_int_t)k->points[p].context, "kv_write_bytes_per_token",
                    golden_json_real(k->points[p].kv_write_bytes), "kv_read_bytes_per_token",
                    golden_json_real(k->points[p].kv_read_bytes), "tpot_s",
                    golden_json_real(k->points[p].tpot_s)));
            json_object_set_new(o, "curve", pts ? pts : json_array());
        }
        json_array_append_new(arr, o);
    }
    static const char *const verdict[] = {"pass", "fail", "could not check"};
    json_t *j = json_pack("{s:s, s:s, s:s, s:o}", "schema", "calculet-conform/v1", "backend",
                          rep->backend, "verdict", verdict[golden_conform_exit(rep)], "checks",
                          arr ? arr : json_array());
    if (j && rep->backend_log[0]) /* where the backend host's output went */
        json_object_set_new(j, "backend_log", json_string(rep->backend_log));
    if (j && rep->config_unknown_keys) { /* a list, [] when every key is known */
        json_t *u = json_array();
        char *dup = strdup(rep->config_unknown_keys);
        bool whole = u && dup;
        for (char *save = NULL, *k = whole ? strtok_r(dup, ",", &save) : NULL; k;
             k = strtok_r(NULL, ",", &save))
            whole = whole && json_array_append_new(u, json_string(k)) == 0;
        free(dup);
        if (whole)
            json_object_set_new(j, "config_unknown_keys", u);
        else
            json_decref(u);
    }
    return j;
}

int golden_conform_faults_write(const golden_conform_report *rep, const char *side,
                                const char *path, bool force, golden_error *err)
{
    replay_fault *f = calloc(rep->n ? rep->n : 1, sizeof *f);
    if (!f)
        return golden_fail_what(err, GOLDEN_ENOMEM, path, "out of memory");
    size_t n = 0;
    for (size_t i = 0; i < rep->n; i++) {
        const golden_conform_check *k = &rep->checks[i];
        if (!k->fault)
            continue;
        replay_fault_begin(&f[n]);
        snprintf(f[n].time, sizeof f[n].time, "%s", k->fault_time);
        snprintf(f[n].case_id, sizeof f[n].case_id, "%s", k->name);
        snprintf(f[n].message, sizeof f[n].message, "conform %s: %s", k->name, k->error);
        f[n].kind = k->fault_kind;
        f[n].retest = k->retest;
        n++;
    }
    int rc = replay_faults_write(f, n, side, path, force, err);
    free(f);
    return rc;
}

void golden_conform_report_free(golden_conform_report *rep)
{
    for (size_t i = 0; rep->checks && i < rep->n; i++) {
        free(rep->checks[i].findings);
        free(rep->checks[i].points);
        json_decref(rep->checks[i].coverage);
    }
    free(rep->checks);
    free(rep->config_unknown_keys);
    memset(rep, 0, sizeof *rep);
}
