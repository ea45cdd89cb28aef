/* A golden-diff run: pairing by (mapped) name, a pool of workers streaming chunks of every
 * pair through the metrics engine, verdicts under the policy, and the report document. */
#include "golden/diff.h"

#include <fnmatch.h>
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ---- small helpers ---- */

static int push_str(char ***list, size_t *n, char *s)
{
    char **nl = realloc(*list, (*n + 1) * sizeof *nl);
    if (!nl) {
        free(s);
        return -1;
    }
    *list = nl;
    nl[(*n)++] = s;
    return 0;
}

static char *fmt(const char *f, ...) __attribute__((format(printf, 1, 2)));
static char *fmt(const char *f, ...)
{
    va_list ap;
    va_start(ap, f);
    char *s = NULL;
    if (vasprintf(&s, f, ap) < 0)
        s = NULL;
    va_end(ap);
    return s;
}

static void free_strs(char **list, size_t n)
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

/* A value printed with as few digits as keep it on the right side of its limit. */
static void num_vs(char *buf, size_t n, double v, double limit)
{
    for (int p = 5; p <= 17; p++) {
        snprintf(buf, n, "%.*g", p, v);
        double back = strtod(buf, NULL);
        if ((v < limit) == (back < limit) && (v > limit) == (back > limit))
            return;
    }
}

/* ---- pairing ---- */

typedef struct {
    char *mapped;
    size_t index;
    bool used;
} named;

static int cmp_named(const void *a, const void *b)
{
    return strcmp(((const named *)a)->mapped, ((const named *)b)->mapped);
}

static void free_named(named *v, size_t n)
{
    for (size_t i = 0; v && i < n; i++)
        free(v[i].mapped);
    free(v);
}

static int map_names(golden_reader *r, const golden_namemap *map, named **out, golden_error *err)
{
    size_t n = golden_reader_count(r);
    named *v = calloc(n ? n : 1, sizeof *v);
    if (!v)
        return golden_fail_what(err, GOLDEN_ENOMEM, golden_reader_path(r), "out of memory");
    for (size_t i = 0; i < n; i++) {
        v[i].index = i;
        v[i].mapped = golden_namemap_apply(map, golden_reader_tensor(r, i)->name, err);
        if (!v[i].mapped) {
            free_named(v, n);
            return -1;
        }
    }
    qsort(v, n, sizeof *v, cmp_named);
    for (size_t i = 1; i < n; i++)
        if (strcmp(v[i - 1].mapped, v[i].mapped) == 0) {
            golden_fail_what(err, GOLDEN_EINVAL, golden_reader_path(r), "tensors %s and %s both map to %s",
                        golden_reader_tensor(r, v[i - 1].index)->name,
                        golden_reader_tensor(r, v[i].index)->name, v[i].mapped);
            free_named(v, n);
            return -1;
        }
    *out = v;
    return 0;
}

static named *find_named(named *v, size_t n, const char *name)
{
    named key = {(char *)name, 0, false};
    return n ? bsearch(&key, v, n, sizeof *v, cmp_named) : NULL;
}

static bool wanted(const golden_diff_opts *o, const char *name)
{
    if (!o->n_only)
        return true;
    for (size_t i = 0; i < o->n_only; i++)
        if (fnmatch(o->only[i], name, 0) == 0)
            return true;
    return false;
}

/* ---- the work ---- */

typedef struct {
    golden_diff_tensor *t;
    size_t ri, ci, bi;              /* reader indices */
    bool with_base;
    golden_cmp_setup setup, bsetup;
    uint64_t count, chunk;          /* elements, elements per item */
    size_t n_chunks, first_item;
    golden_cmp_acc all, ball;       /* the chunks merged so far, in order */
} pair_job;

/* A finished work item waiting for its turn to be merged. */
typedef struct {
    golden_cmp_acc acc, bacc;
    double secs;
    bool ready;
} ring_slot;

/* Workers take items (chunks of every pair, in order) and merge finished ones in item order
 * through a small ring: memory does not grow with the tensor, and the merge order (hence
 * every bit of the report) does not depend on the number of threads or their timing. */
typedef struct {
    golden_reader *ref, *cand, *base;
    pair_job *jobs;
    size_t n_jobs, n_items;
    size_t next, frontier;          /* next item to hand out, next item to merge */
    ring_slot *ring;
    size_t ring_n;
    bool failed;
    pthread_mutex_t lock;
    pthread_cond_t room;
    golden_error err;
    size_t buf_bytes;
    golden_progress *progress;
    unsigned long long done;
} pool;

static size_t job_of_item(const pool *p, size_t item)
{
    size_t lo = 0, hi = p->n_jobs;
    while (hi - lo > 1) {
        size_t mid = (lo + hi) / 2;
        if (p->jobs[mid].first_item <= item)
            lo = mid;
        else
            hi = mid;
    }
    return lo;
}

static void pool_fail(pool *p, const golden_error *e)
{
    pthread_mutex_lock(&p->lock);
    if (!p->failed) {
        p->err = *e;
        p->failed = true;
    }
    pthread_cond_broadcast(&p->room);
    pthread_mutex_unlock(&p->lock);
}

/* Under the lock: fold every finished item at the frontier into its pair. */
static void merge_ready(pool *p)
{
    while (p->frontier < p->n_items && p->ring[p->frontier % p->ring_n].ready) {
        ring_slot *s = &p->ring[p->frontier % p->ring_n];
        pair_job *j = &p->jobs[job_of_item(p, p->frontier)];
        golden_cmp_merge(&j->all, &s->acc);
        if (j->with_base)
            golden_cmp_merge(&j->ball, &s->bacc);
        j->t->seconds += s->secs;
        s->ready = false;
        p->frontier++;
    }
    pthread_cond_broadcast(&p->room);
}

static void *worker(void *arg)
{
    pool *p = arg;
    unsigned char *rb = malloc(p->buf_bytes), *cb = malloc(p->buf_bytes),
                  *bb = p->base ? malloc(p->buf_bytes) : NULL;
    golden_cmp_acc *acc = malloc(2 * sizeof *acc);
    golden_error e;
    if (!rb || !cb || (p->base && !bb) || !acc) {
        golden_fail_what(&e, GOLDEN_ENOMEM, NULL, "out of memory for chunk buffers");
        pool_fail(p, &e);
        goto out;
    }
    for (;;) {
        pthread_mutex_lock(&p->lock);
        while (!p->failed && p->next < p->n_items && p->next - p->frontier >= p->ring_n)
            pthread_cond_wait(&p->room, &p->lock);
        if (p->failed || p->next >= p->n_items) {
            pthread_mutex_unlock(&p->lock);
            break;
        }
        size_t item = p->next++;
        pthread_mutex_unlock(&p->lock);

        pair_job *j = &p->jobs[job_of_item(p, item)];
        size_t k = item - j->first_item;
        uint64_t first = (uint64_t)k * j->chunk;
        uint64_t n = j->count - first < j->chunk ? j->count - first : j->chunk;
        double t0 = golden_seconds();
        if (golden_reader_read(p->ref, j->ri, first, n, rb, &e) != 0 ||
            golden_reader_read(p->cand, j->ci, first, n, cb, &e) != 0 ||
            (j->with_base && golden_reader_read(p->base, j->bi, first, n, bb, &e) != 0)) {
            pool_fail(p, &e);
            break;
        }
        golden_cmp_acc_init(&acc[0], first);
        golden_cmp_add_raw(&j->setup, &acc[0], rb, cb, (size_t)n);
        if (j->with_base) {
            golden_cmp_acc_init(&acc[1], first);
            golden_cmp_add_raw(&j->bsetup, &acc[1], rb, bb, (size_t)n);
        }
        double secs = golden_seconds() - t0;

        pthread_mutex_lock(&p->lock);
        ring_slot *s = &p->ring[item % p->ring_n];
        s->acc = acc[0];
        if (j->with_base)
            s->bacc = acc[1];
        s->secs = secs;
        s->ready = true;
        merge_ready(p);
        if (p->progress && p->progress->enabled) {
            p->done += n;
            golden_progress_update(p->progress, p->done);
        }
        pthread_mutex_unlock(&p->lock);
    }
out:
    free(acc);
    free(rb);
    free(cb);
    free(bb);
    return NULL;
}

/* ---- verdicts ---- */

typedef struct {
    bool failed;
    bool excusable;   /* three-way may excuse it */
    double error;     /* the quantity compared with the baseline's */
    char *text;
} check;

enum { CK_CLASS, CK_TOKENS_TYPE, CK_NONFINITE, CK_KERNEL, CK_COSINE, CK_TOP1, CK_TOP5, CK_TOKENS, CK_N };

static bool is_float(golden_dtype t)
{
    return golden_dtype_is_float(t);
}

/* Evaluate every check of t's tier on metrics m (texts allocated only when want_text). */
static int run_checks(const golden_diff_tensor *t, const golden_cmp_metrics *m, golden_dtype dc,
                      check ck[CK_N], bool want_text)
{
    const golden_judge *j = &t->judge;
    char a[64], b[64];
    memset(ck, 0, CK_N * sizeof *ck);
    if (is_float(t->dtype_ref) != is_float(dc)) {
        ck[CK_CLASS].failed = true;
        if (want_text)
            ck[CK_CLASS].text = fmt("dtype class differs: reference %s is %s, candidate %s is %s",
                                    golden_dtype_name(t->dtype_ref),
                                    is_float(t->dtype_ref) ? "float" : "integer",
                                    golden_dtype_name(dc), is_float(dc) ? "float" : "integer");
    }
    if (j->tier == GOLDEN_TIER_TOKENS && (is_float(t->dtype_ref) || is_float(dc))) {
        ck[CK_TOKENS_TYPE].failed = true;
        if (want_text)
            ck[CK_TOKENS_TYPE].text =
                fmt("tokens tier needs integer token ids, got reference %s and candidate %s",
                    golden_dtype_name(t->dtype_ref), golden_dtype_name(dc));
    }
    if (m->new_nan + m->new_inf > 0) {
        ck[CK_NONFINITE] = (check){true, true, (double)(m->new_nan + m->new_inf), NULL};
        if (want_text) {
            char idx[400] = "?";
            if (m->first_new_nonfinite >= 0) {
                uint64_t co[GOLDEN_MAX_RANK];
                golden_cmp_unravel((uint64_t)m->first_new_nonfinite, t->rank, t->shape, co);
                golden_diff_shape_str(t->rank, co, idx, sizeof idx);
            }
            ck[CK_NONFINITE].text =
                fmt("%" PRIu64 " new NaN and %" PRIu64 " new Inf in the candidate where the "
                    "reference is finite (first at %s)", m->new_nan, m->new_inf, idx);
        }
    }
    switch (j->tier) {
    case GOLDEN_TIER_KERNEL:
        if (m->mismatches > 0) {
            ck[CK_KERNEL] = (check){true, true, m->has_finite ? m->max_abs : (double)m->mismatches, NULL};
            if (want_text) {
                char where[512] = "";
                if (m->has_finite) {
                    uint64_t co[GOLDEN_MAX_RANK];
                    golden_cmp_unravel(m->max_abs_index, t->rank, t->shape, co);
                    char idx[400];
                    golden_diff_shape_str(t->rank, co, idx, sizeof idx);
                    snprintf(where, sizeof where, " (max_abs %.6g at %s)", m->max_abs, idx);
                }
                ck[CK_KERNEL].text = fmt("%" PRIu64 " of %" PRIu64 " elements differ by more than "
                                         "atol %g + rtol %g * |reference|%s",
                                         m->mismatches, m->count, j->atol, j->rtol, where);
            }
        }
        break;
    case GOLDEN_TIER_LAYER:
        if (m->cosine < j->limits.cosine_min) {
            ck[CK_COSINE] = (check){true, true, 1.0 - m->cosine, NULL};
            if (want_text) {
                num_vs(a, sizeof a, m->cosine, j->limits.cosine_min);
                ck[CK_COSINE].text = fmt("cosine %s < %g", a, j->limits.cosine_min);
            }
        }
        break;
    case GOLDEN_TIER_LOGITS:
        if (m->rows && m->top1_match < j->limits.top1_min) {
            ck[CK_TOP1] = (check){true, true, 1.0 - m->top1_match, NULL};
            if (want_text) {
                num_vs(a, sizeof a, m->top1_match, j->limits.top1_min);
                ck[CK_TOP1].text =
                    fmt("top1_match %s < %g (%" PRIu64 " of %" PRIu64 " rows flipped: %" PRIu64
                        " outside near ties, %" PRIu64 " in near-tie rows with margin < %g)",
                        a, j->limits.top1_min, m->flips, m->rows, m->flips - m->near_tie_flips,
                        m->near_tie_flips, j->limits.near_tie_margin);
            }
        }
        if (m->rows && m->top5_overlap < j->limits.top5_min) {
            ck[CK_TOP5] = (check){true, true, 1.0 - m->top5_overlap, NULL};
            if (want_text) {
                num_vs(b, sizeof b, m->top5_overlap, j->limits.top5_min);
                ck[CK_TOP5].text = fmt("top5_overlap %s < %g", b, j->limits.top5_min);
            }
        }
        break;
    case GOLDEN_TIER_TOKENS:
        if (m->sequences_exact < m->sequences) {
            uint64_t bad = m->sequences - m->sequences_exact;
            ck[CK_TOKENS] = (check){true, true, (double)bad, NULL};
            if (want_text)
                ck[CK_TOKENS].text = fmt("%" PRIu64 " of %" PRIu64 " token sequences diverge; "
                                         "earliest at step %" PRId64 " (row %" PRIu64 ")",
                                         bad, m->sequences, m->earliest_divergence,
                                         m->earliest_divergence_row);
        }
        break;
    default:
        break;
    }
    for (int i = 0; want_text && i < CK_N; i++)
        if (ck[i].failed && !ck[i].text)
            return -1;
    return 0;
}

static void headline(const golden_diff_tensor *t, const golden_cmp_metrics *m, const char **name,
                     double *v)
{
    switch (t->judge.tier) {
    case GOLDEN_TIER_KERNEL: *name = "max_abs"; *v = m->max_abs; break;
    case GOLDEN_TIER_LAYER: *name = "1 - cosine"; *v = 1.0 - m->cosine; break;
    case GOLDEN_TIER_LOGITS: *name = "1 - top1_match"; *v = m->rows ? 1.0 - m->top1_match : 0; break;
    default: *name = "diverged sequences"; *v = (double)(m->sequences - m->sequences_exact); break;
    }
}

static int judge_tensor(golden_diff_tensor *t)
{
    if (!t->compared) {
        char a[400], b[400];
        golden_diff_shape_str(t->rank, t->shape, a, sizeof a);
        golden_diff_shape_str(t->rank_cand, t->shape_cand, b, sizeof b);
        t->passed = false;
        return push_str(&t->reasons, &t->n_reasons,
                        fmt("shape differs: reference %s, candidate %s", a, b));
    }
    check ck[CK_N], bk[CK_N];
    if (run_checks(t, &t->m, t->dtype_cand, ck, true) != 0)
        goto oom;
    if (t->has_baseline) {
        run_checks(t, &t->bm, t->dtype_base, bk, false);
        t->baseline_passed = true;
        for (int i = 0; i < CK_N; i++)
            if (bk[i].failed)
                t->baseline_passed = false;
        const char *nm;
        headline(t, &t->m, &nm, &t->error_candidate);
        headline(t, &t->bm, &nm, &t->error_baseline);
        t->error_metric = nm;
        t->ratio = t->error_baseline > 0 ? t->error_candidate / t->error_baseline
                   : (t->error_candidate == 0 ? 1.0 : NAN);
    }
    t->passed = true;
    int rc = 0;
    for (int i = 0; i < CK_N; i++) {
        if (!ck[i].failed)
            continue;
        char *text = ck[i].text;
        ck[i].text = NULL;
        if (t->has_baseline && ck[i].excusable) {
            double eb = bk[i].failed ? bk[i].error : 0, lim = t->judge.limits.baseline_ratio;
            double r = eb > 0 ? ck[i].error / eb : NAN;
            char *s;
            if (eb > 0 && ck[i].error <= lim * eb) {
                s = fmt("%s; excused: %.3gx the baseline's error (limit %gx)", text, r, lim);
                free(text);
                rc |= push_str(&t->notes, &t->n_notes, s);
                continue;
            }
            if (eb > 0)
                s = fmt("%s and %.3gx the baseline's error (limit %gx)", text, r, lim);
            else
                s = fmt("%s; the baseline passes this check", text);
            free(text);
            text = s;
        }
        t->passed = false;
        rc |= push_str(&t->reasons, &t->n_reasons, text);
    }
    for (int i = 0; i < CK_N; i++)
        free(ck[i].text);
    return rc;
oom:
    for (int i = 0; i < CK_N; i++)
        free(ck[i].text);
    return -1;
}

/* ---- the run ---- */

static bool same_shape(const golden_tensor_info *a, const golden_tensor_info *b)
{
    if (a->rank != b->rank)
        return false;
    for (int d = 0; d < a->rank; d++)
        if (a->shape[d] != b->shape[d])
            return false;
    return true;
}

static golden_cmp_setup make_setup(const golden_diff_tensor *t, golden_dtype cand,
                                   const golden_tensor_info *ri)
{
    golden_cmp_setup s;
    memset(&s, 0, sizeof s);
    s.tier = t->judge.tier;
    s.dtype_ref = t->dtype_ref;
    s.dtype_cand = cand;
    s.atol = t->judge.atol;
    s.rtol = t->judge.rtol;
    s.eps = t->judge.eps;
    s.near_tie_margin = t->judge.limits.near_tie_margin;
    s.row_len = ri->rank ? ri->shape[ri->rank - 1] : 1;
    return s;
}

int golden_diff_run(const golden_diff_opts *o, golden_diff_result **out, golden_error *err)
{
    golden_reader *ref = NULL, *cand = NULL, *base = NULL;
    named *cn = NULL, *bn = NULL;
    size_t ncn = 0, nbn = 0;
    pair_job *jobs = NULL;
    size_t n_jobs = 0;
    golden_diff_result *r = calloc(1, sizeof *r);
    int rc = -1;
    if (!r)
        return golden_fail_what(err, GOLDEN_ENOMEM, NULL, "out of memory");
    r->allow_missing = o->allow_missing;
    r->reference = strdup(o->reference);
    r->candidate = strdup(o->candidate);
    r->baseline = o->baseline ? strdup(o->baseline) : NULL;
    r->policy = golden_policy_to_json(o->policy);
    r->overrides = golden_policy_overrides_json(o->policy);
    if (!r->reference || !r->candidate || (o->baseline && !r->baseline) || !r->policy ||
        !r->overrides) {
        golden_fail_what(err, GOLDEN_ENOMEM, NULL, "out of memory");
        goto out;
    }
    /* every metric comes from the data: the stored hash and statistics are not needed */
    if (golden_reader_open_flags(o->reference, GOLDEN_READ_DATA_ONLY, &ref, err) != 0 ||
        golden_reader_open_flags(o->candidate, GOLDEN_READ_DATA_ONLY, &cand, err) != 0 ||
        (o->baseline &&
         golden_reader_open_flags(o->baseline, GOLDEN_READ_DATA_ONLY, &base, err) != 0))
        goto out;
    ncn = golden_reader_count(cand);
    if (map_names(cand, o->map, &cn, err) != 0)
        goto out;
    if (base) {
        nbn = golden_reader_count(base);
        if (map_names(base, o->map, &bn, err) != 0)
            goto out;
    }

    size_t nref = golden_reader_count(ref);
    r->tensors = calloc(nref ? nref : 1, sizeof *r->tensors);
    jobs = calloc(nref ? nref : 1, sizeof *jobs);
    if (!r->tensors || !jobs) {
        golden_fail_what(err, GOLDEN_ENOMEM, NULL, "out of memory");
        goto out;
    }
    uint64_t chunk = o->chunk_elems ? o->chunk_elems : GOLDEN_DIFF_CHUNK;
    size_t n_items = 0, buf_bytes = 8;
    unsigned long long total = 0;
    for (size_t i = 0; i < nref; i++) {
        const golden_tensor_info *ri = golden_reader_tensor(ref, i);
        if (!wanted(o, ri->name))
            continue;
        named *c = find_named(cn, ncn, ri->name);
        if (!c) {
            char *s = strdup(ri->name);
            if (!s || push_str(&r->missing_in_candidate, &r->n_missing_cand, s)) {
                golden_fail_what(err, GOLDEN_ENOMEM, NULL, "out of memory");
                goto out;
            }
            continue;
        }
        c->used = true;
        const golden_tensor_info *ci = golden_reader_tensor(cand, c->index);
        golden_diff_tensor *t = &r->tensors[r->n++];
        t->name = strdup(ri->name);
        t->candidate_name = strdup(ci->name);
        t->dtype_ref = ri->dtype;
        t->dtype_cand = ci->dtype;
        t->rank = ri->rank;
        t->rank_cand = ci->rank;
        memcpy(t->shape, ri->shape, sizeof t->shape);
        memcpy(t->shape_cand, ci->shape, sizeof t->shape_cand);
        t->ratio = NAN;
        if (!t->name || !t->candidate_name) {
            golden_fail_what(err, GOLDEN_ENOMEM, NULL, "out of memory");
            goto out;
        }
        golden_policy_resolve(o->policy, ri->name, ri->dtype, ci->dtype, &t->judge);
        t->compared = same_shape(ri, ci);
        if (!t->compared)
            continue;
        pair_job *j = &jobs[n_jobs];
        j->t = t;
        j->ri = i;
        j->ci = c->index;
        j->count = ri->count;
        j->setup = make_setup(t, ci->dtype, ri);
        named *b = base ? find_named(bn, nbn, ri->name) : NULL;
        if (b) {
            b->used = true;
            const golden_tensor_info *bi = golden_reader_tensor(base, b->index);
            t->baseline_name = strdup(bi->name);
            if (!t->baseline_name) {
                golden_fail_what(err, GOLDEN_ENOMEM, NULL, "out of memory");
                goto out;
            }
            t->dtype_base = bi->dtype;
            if (same_shape(ri, bi)) {
                j->with_base = true;
                j->bi = b->index;
                j->bsetup = make_setup(t, bi->dtype, ri);
                t->has_baseline = true;
            }
        } else if (base) {
            char *s = strdup(ri->name);
            if (!s || push_str(&r->missing_in_baseline, &r->n_missing_base, s)) {
                golden_fail_what(err, GOLDEN_ENOMEM, NULL, "out of memory");
                goto out;
            }
        }
        bool rows = t->judge.tier == GOLDEN_TIER_LOGITS || t->judge.tier == GOLDEN_TIER_TOKENS;
        j->chunk = chunk;
        if (rows && j->setup.row_len) {
            if (j->setup.row_len > GOLDEN_DIFF_MAX_ROW) {
                char where[1024];
                snprintf(where, sizeof where, "%s:%s", o->reference, ri->name);
                golden_fail_what(err, GOLDEN_EINVAL, where,
                            "a %s row of %" PRIu64 " elements is longer than the %" PRIu64
                            " golden-diff compares at once", golden_tier_name(t->judge.tier),
                            j->setup.row_len, GOLDEN_DIFF_MAX_ROW);
                goto out;
            }
            uint64_t per = chunk / j->setup.row_len;
            j->chunk = (per ? per : 1) * j->setup.row_len;
        }
        if (t->judge.tier == GOLDEN_TIER_TOKENS && j->setup.row_len) {
            t->n_rows = j->count / j->setup.row_len;
            t->first_divergence = malloc((t->n_rows ? t->n_rows : 1) * sizeof(int64_t));
            if (!t->first_divergence) {
                golden_fail_what(err, GOLDEN_ENOMEM, NULL, "out of memory");
                goto out;
            }
            for (uint64_t k = 0; k < t->n_rows; k++)
                t->first_divergence[k] = -1;
            j->setup.first_divergence = t->first_divergence;
        }
        j->n_chunks = (size_t)((j->count + j->chunk - 1) / j->chunk);
        j->first_item = n_items;
        n_items += j->n_chunks;
        golden_cmp_acc_init(&j->all, 0);
        golden_cmp_acc_init(&j->ball, 0);
        size_t w = golden_dtype_size(ri->dtype);
        if (golden_dtype_size(ci->dtype) > w)
            w = golden_dtype_size(ci->dtype);
        if (j->with_base && golden_dtype_size(t->dtype_base) > w)
            w = golden_dtype_size(t->dtype_base);
        uint64_t need = (j->count < j->chunk ? j->count : j->chunk) * w;
        if (need > buf_bytes)
            buf_bytes = (size_t)need;
        total += j->count;
        n_jobs++;
    }
    for (size_t i = 0; i < ncn; i++)
        if (!cn[i].used && wanted(o, cn[i].mapped)) {
            char *s = strdup(cn[i].mapped);
            if (!s || push_str(&r->missing_in_reference, &r->n_missing_ref, s)) {
                golden_fail_what(err, GOLDEN_ENOMEM, NULL, "out of memory");
                goto out;
            }
        }

    /* Work: every chunk of every pair, in order, taken by whichever worker is free. */
    pool p;
    memset(&p, 0, sizeof p);
    p.ref = ref;
    p.cand = cand;
    p.base = base;
    p.jobs = jobs;
    p.n_jobs = n_jobs;
    p.n_items = n_items;
    p.buf_bytes = buf_bytes;
    p.progress = o->progress;
    int nt = o->threads > 0 ? o->threads : golden_threads();
    if ((size_t)nt > n_items)
        nt = n_items ? (int)n_items : 1;
    if (nt > 256)
        nt = 256;
    p.ring_n = 4 * (size_t)nt;
    p.ring = calloc(p.ring_n, sizeof *p.ring);
    if (!p.ring) {
        golden_fail_what(err, GOLDEN_ENOMEM, NULL, "out of memory");
        goto out;
    }
    if (pthread_mutex_init(&p.lock, NULL) != 0) {
        free(p.ring);
        golden_fail_what(err, GOLDEN_EIO, NULL, "cannot create a mutex");
        goto out;
    }
    if (pthread_cond_init(&p.room, NULL) != 0) {
        pthread_mutex_destroy(&p.lock);
        free(p.ring);
        golden_fail_what(err, GOLDEN_EIO, NULL, "cannot create a condition variable");
        goto out;
    }
    if (o->progress)
        golden_progress_start(o->progress, "golden-diff", total);
    pthread_t tids[256];
    int started = 0;
    for (int k = 1; k < nt; k++) {
        if (pthread_create(&tids[started], NULL, worker, &p) != 0)
            break; /* fewer threads still finish the work */
        started++;
    }
    if (n_items)
        worker(&p);
    for (int k = 0; k < started; k++)
        pthread_join(tids[k], NULL);
    if (o->progress)
        golden_progress_end(o->progress);
    pthread_cond_destroy(&p.room);
    pthread_mutex_destroy(&p.lock);
    free(p.ring);
    if (p.failed) {
        *err = p.err;
        goto out;
    }

    for (size_t k = 0; k < n_jobs; k++) {
        pair_job *j = &jobs[k];
        golden_cmp_finish(&j->setup, &j->all, &j->t->m);
        memcpy(j->t->flips, j->all.examples, sizeof j->all.examples);
        j->t->n_flips = j->all.n_examples;
        if (j->with_base)
            golden_cmp_finish(&j->bsetup, &j->ball, &j->t->bm);
    }
    for (size_t i = 0; i < r->n; i++) {
        if (judge_tensor(&r->tensors[i]) != 0) {
            golden_fail_what(err, GOLDEN_ENOMEM, NULL, "out of memory");
            goto out;
        }
        if (r->tensors[i].passed)
            r->passed++;
        else
            r->failed++;
    }
    r->pass = r->failed == 0 &&
              (o->allow_missing || (r->n_missing_cand == 0 && r->n_missing_ref == 0));
    rc = 0;
out:
    free(jobs);
    free_named(cn, ncn);
    free_named(bn, nbn);
    golden_reader_close(ref);
    golden_reader_close(cand);
    golden_reader_close(base);
    if (rc != 0) {
        golden_diff_free(r);
        r = NULL;
    }
    *out = r;
    return rc;
}

void golden_diff_free(golden_diff_result *r)
{
    if (!r)
        return;
    for (size_t i = 0; i < r->n; i++) {
        golden_diff_tensor *t = &r->tensors[i];
        free(t->name);
        free(t->candidate_name);
        free(t->baseline_name);
        free_strs(t->reasons, t->n_reasons);
        free_strs(t->notes, t->n_notes);
        free(t->first_divergence);
    }
    free(r->tensors);
    free_strs(r->missing_in_candidate, r->n_missing_cand);
    free_strs(r->missing_in_reference, r->n_missing_ref);
    free_strs(r->missing_in_baseline, r->n_missing_base);
    free(r->reference);
    free(r->candidate);
    free(r->baseline);
    json_decref(r->policy);
    json_decref(r->overrides);
    free(r);
}

/* ---- the report ---- */

/* Non-finite numbers have no JSON form: they are null. */
static json_t *juint(uint64_t v)
{
    return json_integer(v > INT64_MAX ? INT64_MAX : (json_int_t)v);
}

static json_t *jstrs(char **list, size_t n)
{
    json_t *a = json_array();
    for (size_t i = 0; a && i < n; i++)
        if (json_array_append_new(a, json_string(list[i]))) {
            json_decref(a);
            return NULL;
        }
    return a;
}

static json_t *jshape(int rank, const uint64_t *shape)
{
    json_t *a = json_array();
    for (int d = 0; a && d < rank; d++)
        if (json_array_append_new(a, juint(shape[d]))) {
            json_decref(a);
            return NULL;
        }
    return a;
}

typedef struct {
    json_t *o;
    int bad;
} jb;

static void put(jb *b, const char *key, json_t *v)
{
    if (!v || json_object_set_new(b->o, key, v))
        b->bad = 1;
}

static void put_metrics(jb *b, const golden_diff_tensor *t, const golden_cmp_metrics *m,
                        bool ok)
{
    bool f = ok && m->has_finite;
    put(b, "max_abs", f ? golden_json_real(m->max_abs) : json_null());
    if (f) {
        uint64_t co[GOLDEN_MAX_RANK];
        golden_cmp_unravel(m->max_abs_index, t->rank, t->shape, co);
        put(b, "max_abs_index", jshape(t->rank, co));
    } else {
        put(b, "max_abs_index", json_null());
    }
    put(b, "mean_abs", f ? golden_json_real(m->mean_abs) : json_null());
    put(b, "rmse", f ? golden_json_real(m->rmse) : json_null());
    put(b, "max_rel", f ? golden_json_real(m->max_rel) : json_null());
    put(b, "cosine", ok ? golden_json_real(m->cosine) : json_null());
    put(b, "mismatches", ok ? juint(m->mismatches) : json_null());
    put(b, "max_ulp", ok && m->has_ulp ? juint(m->max_ulp) : json_null());
    put(b, "new_nan", ok ? juint(m->new_nan) : json_null());
    put(b, "new_inf", ok ? juint(m->new_inf) : json_null());
    if (ok && m->first_new_nonfinite >= 0) {
        uint64_t co[GOLDEN_MAX_RANK];
        golden_cmp_unravel((uint64_t)m->first_new_nonfinite, t->rank, t->shape, co);
        put(b, "first_new_nonfinite_index", jshape(t->rank, co));
    } else {
        put(b, "first_new_nonfinite_index", json_null());
    }
}

static json_t *tensor_json(const golden_diff_tensor *t)
{
    jb b = {json_object(), 0};
    if (!b.o)
        return NULL;
    const golden_cmp_metrics *m = &t->m;
    bool ok = t->compared;
    put(&b, "name", json_string(t->name));
    if (strcmp(t->name, t->candidate_name) != 0)
        put(&b, "candidate_name", json_string(t->candidate_name));
    put(&b, "tier", json_string(golden_tier_name(t->judge.tier)));
    put(&b, "verdict", json_string(t->passed ? "pass" : "fail"));
    put(&b, "reasons", jstrs(t->reasons, t->n_reasons));
    if (t->n_notes)
        put(&b, "notes", jstrs(t->notes, t->n_notes));
    put(&b, "dtype_reference", json_string(golden_dtype_name(t->dtype_ref)));
    put(&b, "dtype_candidate", json_string(golden_dtype_name(t->dtype_cand)));
    put(&b, "shape", jshape(t->rank, t->shape));
    if (!ok)
        put(&b, "shape_candidate", jshape(t->rank_cand, t->shape_cand));
    uint64_t count = 1;
    for (int d = 0; d < t->rank; d++)
        count *= t->shape[d];
    put(&b, "count", juint(count));
    put_metrics(&b, t, m, ok);
    put(&b, "eps", golden_json_real(t->judge.eps));
    put(&b, "atol", golden_json_real(t->judge.atol));
    put(&b, "rtol", golden_json_real(t->judge.rtol));
    golden_dtype ud;
    if (golden_cmp_ulp_dtype(t->dtype_ref, t->dtype_cand, &ud))
        put(&b, "ulp_dtype", json_string(golden_dtype_name(ud)));
    put(&b, "nan_reference", ok ? juint(m->nan_ref) : json_null());
    put(&b, "nan_candidate", ok ? juint(m->nan_cand) : json_null());
    put(&b, "inf_reference", ok ? juint(m->inf_ref) : json_null());
    put(&b, "inf_candidate", ok ? juint(m->inf_cand) : json_null());
    if (t->judge.tier == GOLDEN_TIER_LAYER)
        put(&b, "cosine_min", golden_json_real(t->judge.limits.cosine_min));
    if (t->judge.tier == GOLDEN_TIER_LOGITS) {
        put(&b, "rows", ok ? juint(m->rows) : json_null());
        put(&b, "top1_match", ok ? golden_json_real(m->top1_match) : json_null());
        put(&b, "top5_overlap", ok ? golden_json_real(m->top5_overlap) : json_null());
        put(&b, "near_tie_rows", ok ? juint(m->near_tie_rows) : json_null());
        put(&b, "near_tie_flips", ok ? juint(m->near_tie_flips) : json_null());
        put(&b, "near_tie_margin", golden_json_real(t->judge.limits.near_tie_margin));
        put(&b, "top1_min", golden_json_real(t->judge.limits.top1_min));
        put(&b, "top5_min", golden_json_real(t->judge.limits.top5_min));
        json_t *fl = json_array();
        for (int i = 0; fl && i < t->n_flips; i++) {
            const golden_cmp_flip *f = &t->flips[i];
            json_t *e = json_pack("{s:I,s:I,s:I,s:o,s:b}", "row", (json_int_t)f->row,
                                  "reference_top1", (json_int_t)f->ref_top1, "candidate_top1",
                                  (json_int_t)f->cand_top1, "margin", golden_json_real(f->margin),
                                  "near_tie", f->near_tie);
            if (!e || json_array_append_new(fl, e))
                b.bad = 1;
        }
        put(&b, "flips", fl);
    }
    if (t->judge.tier == GOLDEN_TIER_TOKENS) {
        put(&b, "sequences", ok ? juint(m->sequences) : json_null());
        put(&b, "sequences_exact", ok ? juint(m->sequences_exact) : json_null());
        json_t *fd = json_array();
        for (uint64_t i = 0; fd && ok && t->first_divergence && i < t->n_rows; i++)
            if (json_array_append_new(fd, json_integer(t->first_divergence[i])))
                b.bad = 1;
        put(&b, "first_divergence", fd);
    }
    if (t->baseline_name) {
        jb bb = {json_object(), 0};
        if (!bb.o) {
            b.bad = 1;
        } else {
            put(&bb, "name", json_string(t->baseline_name));
            put(&bb, "dtype", json_string(golden_dtype_name(t->dtype_base)));
            put(&bb, "compared", json_boolean(t->has_baseline));
            if (t->has_baseline) {
                put(&bb, "verdict", json_string(t->baseline_passed ? "pass" : "fail"));
                put_metrics(&bb, t, &t->bm, true);
                if (t->judge.tier == GOLDEN_TIER_LOGITS) {
                    put(&bb, "top1_match", golden_json_real(t->bm.top1_match));
                    put(&bb, "top5_overlap", golden_json_real(t->bm.top5_overlap));
                }
                if (t->judge.tier == GOLDEN_TIER_TOKENS)
                    put(&bb, "sequences_exact", juint(t->bm.sequences_exact));
                put(&bb, "error_metric", json_string(t->error_metric));
                put(&bb, "error_candidate", golden_json_real(t->error_candidate));
                put(&bb, "error_baseline", golden_json_real(t->error_baseline));
                put(&bb, "ratio", golden_json_real(t->ratio));
                put(&bb, "ratio_limit", golden_json_real(t->judge.limits.baseline_ratio));
            }
            b.bad |= bb.bad;
            put(&b, "baseline", bb.o);
        }
    }
    put(&b, "seconds", golden_json_real(t->seconds));
    if (b.bad) {
        json_decref(b.o);
        return NULL;
    }
    return b.o;
}

json_t *golden_diff_to_json(const golden_diff_result *r)
{
    jb b = {json_object(), 0};
    if (!b.o)
        return NULL;
    put(&b, "schema", json_string(GOLDEN_SCHEMA_DIFF_REPORT));
    put(&b, "producer", json_string("golden-diff " GOLDEN_VERSION));
    put(&b, "reference", json_string(r->reference));
    put(&b, "candidate", json_string(r->candidate));
    if (r->baseline)
        put(&b, "baseline", json_string(r->baseline));
    put(&b, "verdict", json_string(r->pass ? "pass" : "fail"));
    jb s = {json_object(), 0};
    if (s.o) {
        put(&s, "tensors", juint(r->n));
        put(&s, "passed", juint(r->passed));
        put(&s, "failed", juint(r->failed));
        put(&s, "missing_in_candidate", jstrs(r->missing_in_candidate, r->n_missing_cand));
        put(&s, "missing_in_reference", jstrs(r->missing_in_reference, r->n_missing_ref));
        if (r->baseline)
            put(&s, "missing_in_baseline", jstrs(r->missing_in_baseline, r->n_missing_base));
        put(&s, "allow_missing", json_boolean(r->allow_missing));
        b.bad |= s.bad;
    }
    put(&b, "summary", s.o);
    json_t *list = json_array();
    for (size_t i = 0; list && i < r->n; i++)
        if (json_array_append_new(list, tensor_json(&r->tensors[i])))
            b.bad = 1;
    put(&b, "tensors", list);
    put(&b, "policy", json_incref(r->policy));
    put(&b, "overrides", json_incref(r->overrides));
    if (b.bad) {
        json_decref(b.o);
        return NULL;
    }
    return b.o;
}

int golden_diff_junit(const golden_diff_result *r, const char *path, bool force,
                      golden_error *err)
{
    size_t n = r->n + r->n_missing_cand + r->n_missing_ref;
    golden_junit_case *cases = calloc(n ? n : 1, sizeof *cases);
    char **classes = calloc(n ? n : 1, sizeof *classes), **details = calloc(n ? n : 1, sizeof *details);
    int rc = -1;
    if (!cases || !classes || !details) {
        golden_fail_what(err, GOLDEN_ENOMEM, path, "out of memory");
        goto out;
    }
    size_t k = 0;
    for (size_t i = 0; i < r->n; i++, k++) {
        const golden_diff_tensor *t = &r->tensors[i];
        classes[k] = fmt("golden-diff.%s", golden_tier_name(t->judge.tier));
        size_t len = 1;
        for (size_t j = 0; j < t->n_reasons; j++)
            len += strlen(t->reasons[j]) + 1;
        details[k] = malloc(len);
        if (!classes[k] || !details[k]) {
            golden_fail_what(err, GOLDEN_ENOMEM, path, "out of memory");
            goto out;
        }
        details[k][0] = '\0';
        for (size_t j = 0; j < t->n_reasons; j++) {
            strcat(details[k], t->reasons[j]);
            strcat(details[k], "\n");
        }
        cases[k] = (golden_junit_case){classes[k], t->name, !t->passed, false,
                                       t->n_reasons ? t->reasons[0] : NULL,
                                       t->n_reasons ? details[k] : NULL, t->seconds};
    }
    for (size_t i = 0; i < r->n_missing_cand; i++, k++)
        cases[k] = (golden_junit_case){"golden-diff.missing", r->missing_in_candidate[i],
                                       !r->allow_missing, r->allow_missing,
                                       "missing in the candidate", NULL, 0};
    for (size_t i = 0; i < r->n_missing_ref; i++, k++)
        cases[k] = (golden_junit_case){"golden-diff.missing", r->missing_in_reference[i],
                                       !r->allow_missing, r->allow_missing,
                                       "missing in the reference", NULL, 0};
    rc = golden_junit_write(path, force, "golden-diff", cases, n, err);
out:
    for (size_t i = 0; classes && details && i < r->n; i++) {
        free(classes[i]);
        free(details[i]);
    }
    free(classes);
    free(details);
    free(cases);
    return rc;
}
