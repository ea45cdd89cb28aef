/* Shards of one golden-diff run (golden_diff_opts.shard): a result as bytes and back, and
 * the shards merged into the one result a single process computes (docs/scale.md). The
 * bytes are this build's native layout: the process that unpacks runs the same executable
 * as the one that packed (the ranks of one MPI job). */
#include "golden/doc.h"
#include "tensor/diff_internal.h"
#include "tensor/policy_private.h"
#include "util/vec.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#define PACK_MAGIC "GDIFFR1"
#define NO_BLOB UINT64_MAX

/* ------------------------------------------------------------------ writing */

typedef struct {
    unsigned char *p;
    size_t n, cap;
    bool oom;
} wbuf;

static void put(wbuf *w, const void *v, size_t n)
{
    if (w->oom || !n)
        return;
    if (n > SIZE_MAX - w->n || vec_reserve(&w->p, &w->cap, w->n + n, 1, 4096) != 0) {
        w->oom = true;
        return;
    }
    memcpy(w->p + w->n, v, n);
    w->n += n;
}

static void put_u64(wbuf *w, uint64_t v)
{
    put(w, &v, sizeof v);
}

/* A blob: its length then its bytes; NULL is NO_BLOB. */
static void put_blob(wbuf *w, const void *v, size_t n)
{
    put_u64(w, v ? (uint64_t)n : NO_BLOB);
    if (v)
        put(w, v, n);
}

static void put_str(wbuf *w, const char *s)
{
    put_blob(w, s, s ? strlen(s) : 0);
}

static void put_strs(wbuf *w, char *const *list, size_t n)
{
    put_u64(w, n);
    for (size_t i = 0; i < n; i++)
        put_str(w, list[i]);
}

static void put_json(wbuf *w, const json_t *v)
{
    char *s = v ? json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT | JSON_REAL_PRECISION(17)) : NULL;
    if (v && !s)
        w->oom = true;
    put_str(w, s);
    free(s);
}

/* The names error_metric points to (static strings of diff_verdict.c). */
static const char *const metric_names[] = {"router rows differing", "tolerance_used", "rel_err",
                                           "kl_max", "diverged sequences"};
#define N_METRICS (sizeof metric_names / sizeof metric_names[0])

static void put_tensor(wbuf *w, const golden_diff_tensor *t, bool *unknown_metric)
{
    put(w, t, sizeof *t);
    put_str(w, t->name);
    put_str(w, t->candidate_name);
    put_str(w, t->baseline_name);
    put_str(w, t->error_metric);
    if (t->error_metric) {
        bool known = false;
        for (size_t k = 0; k < N_METRICS; k++)
            known |= strcmp(metric_names[k], t->error_metric) == 0;
        *unknown_metric |= !known;
    }
    uint64_t why = UINT64_MAX; /* the tier's reason, by its index among the static names */
    for (size_t k = 0; t->tier_why && k < LG_TIER_WHY_N; k++)
        if (t->tier_why == lg_tier_why_names[k] || strcmp(t->tier_why, lg_tier_why_names[k]) == 0)
            why = k;
    *unknown_metric |= t->tier_why && why == UINT64_MAX;
    put_u64(w, why);
    put_strs(w, t->reasons, t->n_reasons);
    put_strs(w, t->notes, t->n_notes);
    put_strs(w, t->router_reasons, t->n_router_reasons);
    put_strs(w, t->router_notes, t->n_router_notes);
    size_t rows = (size_t)t->n_rows;
    put_blob(w, t->first_divergence, rows * sizeof(int64_t));
    put_blob(w, t->bfirst_divergence, rows * sizeof(int64_t));
    put_blob(w, t->row_value, rows * sizeof(double));
    put_blob(w, t->brow_value, rows * sizeof(double));
    put_blob(w, t->row_flags, rows);
    put_blob(w, t->brow_flags, rows);
    size_t sides = t->bcol_cos ? 2 : 1;
    put_blob(w, t->col_cos, (size_t)t->n_cols * 2 * sides * sizeof(double));
}

int golden_diff_pack(const golden_diff_result *r, void **buf, size_t *len, golden_error *err)
{
    wbuf w = {0};
    bool unknown = false;
    put(&w, PACK_MAGIC, sizeof PACK_MAGIC);
    put(&w, r, sizeof *r);
    put_str(&w, r->reference);
    put_str(&w, r->candidate);
    put_str(&w, r->baseline);
    put_json(&w, r->policy);
    put_json(&w, r->overrides);
    put_u64(&w, r->n);
    for (size_t i = 0; i < r->n; i++)
        put_tensor(&w, &r->tensors[i], &unknown);
    put_strs(&w, r->missing_in_candidate, r->n_missing_cand);
    put_blob(&w, r->missing_cand_allowed, r->missing_cand_allowed ? r->n_missing_cand : 0);
    put_strs(&w, r->missing_in_reference, r->n_missing_ref);
    put_strs(&w, r->missing_in_baseline, r->n_missing_base);
    put_strs(&w, r->skipped, r->n_skipped);
    if (w.oom || unknown) {
        free(w.p);
        return unknown ? golden_fail_what(err, GOLDEN_EINTERNAL, NULL,
                                          "a tensor's headline metric has no packed name")
                       : golden_fail_what(err, GOLDEN_ENOMEM, NULL, "out of memory packing a result");
    }
    *buf = w.p;
    *len = w.n;
    return 0;
}

/* ------------------------------------------------------------------ reading */

typedef struct {
    const unsigned char *p;
    size_t n, off;
    bool bad, oom;
} rbuf;

static void get(rbuf *r, void *v, size_t n)
{
    if (r->bad || n > r->n - r->off) {
        r->bad = true;
        memset(v, 0, n);
        return;
    }
    memcpy(v, r->p + r->off, n);
    r->off += n;
}

static uint64_t get_u64(rbuf *r)
{
    uint64_t v;
    get(r, &v, sizeof v);
    return v;
}

/* A blob of `want` bytes (want SIZE_MAX: any length, NUL-terminated for strings). */
static void *get_blob(rbuf *r, size_t want, bool text)
{
    uint64_t n = get_u64(r);
    if (r->bad || n == NO_BLOB)
        return NULL;
    if (n > r->n - r->off || (want != SIZE_MAX && n != want)) {
        r->bad = true;
        return NULL;
    }
    unsigned char *v = malloc((size_t)n + (text ? 1 : 0) + (n ? 0 : 1));
    if (!v) {
        r->oom = r->bad = true;
        return NULL;
    }
    get(r, v, (size_t)n);
    if (text) {
        v[n] = 0;
        if (strlen((char *)v) != n)
            r->bad = true; /* an embedded NUL: not a packed string */
    }
    return v;
}

static char *get_str(rbuf *r)
{
    return get_blob(r, SIZE_MAX, true);
}

static char **get_strs(rbuf *r, size_t *n)
{
    uint64_t k = get_u64(r);
    *n = 0;
    if (r->bad || k > (r->n - r->off) / sizeof(uint64_t)) {
        r->bad = true;
        return NULL;
    }
    char **v = calloc(k ? (size_t)k : 1, sizeof *v);
    if (!v) {
        r->oom = r->bad = true;
        return NULL;
    }
    *n = (size_t)k;
    for (size_t i = 0; i < k && !r->bad; i++) {
        v[i] = get_str(r);
        r->bad |= !v[i];
    }
    return v;
}

/* Through the one strict JSON reader (golden/doc.h); the tree is copied out of the doc. */
static json_t *get_json(rbuf *r)
{
    char *s = get_str(r);
    if (!s)
        return NULL;
    golden_doc *doc = NULL;
    golden_error e;
    json_t *v = NULL;
    if (golden_doc_load_json("diff pack", s, strlen(s), 1, &doc, &e) == 0)
        v = json_deep_copy(golden_doc_root(doc));
    golden_doc_free(doc);
    free(s);
    r->bad |= !v;
    return v;
}

/* Every pointer of a tensor copied raw: cleared before it is read. */
static void clear_pointers(golden_diff_tensor *t)
{
    t->name = t->candidate_name = t->baseline_name = NULL;
    t->error_metric = NULL;
    t->tier_why = NULL;
    t->reasons = t->notes = t->router_reasons = t->router_notes = NULL;
    t->n_reasons = t->n_notes = t->n_router_reasons = t->n_router_notes = 0;
    t->first_divergence = t->bfirst_divergence = NULL;
    t->row_value = t->brow_value = NULL;
    t->row_flags = t->brow_flags = NULL;
    t->col_cos = t->col_rel = t->bcol_cos = t->bcol_rel = NULL;
}

static void get_tensor(rbuf *r, golden_diff_tensor *t)
{
    get(r, t, sizeof *t);
    bool two_sides = t->bcol_cos != NULL;
    size_t rows = (size_t)t->n_rows, cols = (size_t)t->n_cols;
    clear_pointers(t);
    if (r->bad || rows > r->n || cols > r->n)
        return (void)(r->bad = true);
    t->name = get_str(r);
    t->candidate_name = get_str(r);
    t->baseline_name = get_str(r);
    char *metric = get_str(r);
    for (size_t k = 0; metric && k < N_METRICS; k++)
        if (strcmp(metric_names[k], metric) == 0)
            t->error_metric = metric_names[k];
    r->bad |= metric && !t->error_metric;
    free(metric);
    uint64_t why = get_u64(r);
    if (why < LG_TIER_WHY_N)
        t->tier_why = lg_tier_why_names[why];
    else
        r->bad |= why != UINT64_MAX;
    t->reasons = get_strs(r, &t->n_reasons);
    t->notes = get_strs(r, &t->n_notes);
    t->router_reasons = get_strs(r, &t->n_router_reasons);
    t->router_notes = get_strs(r, &t->n_router_notes);
    t->first_divergence = get_blob(r, rows * sizeof(int64_t), false);
    t->bfirst_divergence = get_blob(r, rows * sizeof(int64_t), false);
    t->row_value = get_blob(r, rows * sizeof(double), false);
    t->brow_value = get_blob(r, rows * sizeof(double), false);
    t->row_flags = get_blob(r, rows, false);
    t->brow_flags = get_blob(r, rows, false);
    t->col_cos = get_blob(r, cols * 2 * (two_sides ? 2 : 1) * sizeof(double), false);
    if (t->col_cos) {
        t->col_rel = t->col_cos + cols;
        if (two_sides) {
            t->bcol_cos = t->col_rel + cols;
            t->bcol_rel = t->bcol_cos + cols;
        }
    }
    r->bad |= !t->name || !t->candidate_name;
}

int golden_diff_unpack(const void *buf, size_t len, golden_diff_result **out, golden_error *err)
{
    rbuf rd = {buf, len, 0, false, false};
    char magic[sizeof PACK_MAGIC];
    *out = NULL;
    get(&rd, magic, sizeof magic);
    golden_diff_result *r = calloc(1, sizeof *r);
    if (!r)
        return golden_fail_what(err, GOLDEN_ENOMEM, NULL, "out of memory unpacking a result");
    golden_diff_result h;
    get(&rd, &h, sizeof h);
    rd.bad |= memcmp(magic, PACK_MAGIC, sizeof magic) != 0;
    if (!rd.bad) {
        r->allow_missing = h.allow_missing;
        r->allow_empty = h.allow_empty;
        r->trust_hashes = h.trust_hashes;
        r->passed = h.passed;
        r->failed = h.failed;
        r->empty = h.empty;
        r->pass = h.pass;
        r->n_missing_cand_allowed = h.n_missing_cand_allowed;
        r->n_unstored = h.n_unstored;
    }
    r->reference = get_str(&rd);
    r->candidate = get_str(&rd);
    r->baseline = get_str(&rd);
    r->policy = get_json(&rd);
    r->overrides = get_json(&rd);
    uint64_t n = get_u64(&rd);
    if (!rd.bad && n > len / sizeof(golden_diff_tensor))
        rd.bad = true;
    if (!rd.bad && !(r->tensors = calloc(n ? (size_t)n : 1, sizeof *r->tensors)))
        rd.oom = rd.bad = true;
    for (size_t i = 0; !rd.bad && i < n; i++) {
        r->n = i + 1; /* freed with the result from here on */
        get_tensor(&rd, &r->tensors[i]);
    }
    r->missing_in_candidate = get_strs(&rd, &r->n_missing_cand);
    r->missing_cand_allowed = get_blob(&rd, r->n_missing_cand, false);
    r->missing_in_reference = get_strs(&rd, &r->n_missing_ref);
    r->missing_in_baseline = get_strs(&rd, &r->n_missing_base);
    r->skipped = get_strs(&rd, &r->n_skipped);
    rd.bad |= !r->reference || !r->candidate || !r->policy || !r->overrides ||
              rd.off != rd.n;
    if (rd.bad) {
        golden_diff_free(r);
        return rd.oom ? golden_fail_what(err, GOLDEN_ENOMEM, NULL, "out of memory unpacking a result")
                      : golden_fail_what(err, GOLDEN_ECORRUPT, NULL,
                                         "a packed golden-diff result is truncated or damaged");
    }
    *out = r;
    return 0;
}

/* ------------------------------------------------------------------ merging */

static int cmp_tensor(const void *a, const void *b)
{
    return strcmp(((const golden_diff_tensor *)a)->name, ((const golden_diff_tensor *)b)->name);
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

typedef struct {
    char *name;
    bool allowed;
} missing;

static int cmp_missing(const void *a, const void *b)
{
    return strcmp(((const missing *)a)->name, ((const missing *)b)->name);
}

/* Move every part's list into one, sorted as the single run lists it (reader order, which is
 * name order). The parts' lists are left empty. */
static int merge_strs(golden_diff_result *const *parts, size_t n, size_t off_list, size_t off_n,
                      char ***out, size_t *n_out)
{
    size_t total = 0;
    for (size_t k = 0; k < n; k++)
        total += *(size_t *)((char *)parts[k] + off_n);
    char **v = calloc(total ? total : 1, sizeof *v);
    if (!v)
        return -1;
    size_t m = 0;
    for (size_t k = 0; k < n; k++) {
        char ***list = (char ***)((char *)parts[k] + off_list);
        size_t *cnt = (size_t *)((char *)parts[k] + off_n);
        for (size_t i = 0; i < *cnt; i++)
            v[m++] = (*list)[i];
        *cnt = 0;
    }
    qsort(v, m, sizeof *v, cmp_str);
    *out = v;
    *n_out = m;
    return 0;
}

static int merge_missing_cand(golden_diff_result *const *parts, size_t n, golden_diff_result *r)
{
    size_t total = 0;
    for (size_t k = 0; k < n; k++)
        total += parts[k]->n_missing_cand;
    missing *v = calloc(total ? total : 1, sizeof *v);
    r->missing_in_candidate = calloc(total ? total : 1, sizeof *r->missing_in_candidate);
    r->missing_cand_allowed = calloc(total ? total : 1, 1);
    if (!v || !r->missing_in_candidate || !r->missing_cand_allowed) {
        free(v);
        return -1;
    }
    size_t m = 0;
    for (size_t k = 0; k < n; k++) {
        golden_diff_result *p = parts[k];
        for (size_t i = 0; i < p->n_missing_cand; i++)
            v[m++] = (missing){p->missing_in_candidate[i],
                               p->missing_cand_allowed && p->missing_cand_allowed[i]};
        p->n_missing_cand = 0;
    }
    qsort(v, m, sizeof *v, cmp_missing);
    for (size_t i = 0; i < m; i++) {
        r->missing_in_candidate[i] = v[i].name;
        r->missing_cand_allowed[i] = v[i].allowed;
        r->n_missing_cand_allowed += v[i].allowed;
    }
    r->n_missing_cand = m;
    free(v);
    return 0;
}

/* The check across tensors a shard cannot do (diff_pair.c's same_baseline, same words). */
static int same_baseline(const golden_diff_result *r, golden_error *err)
{
    size_t with = 0, same = 0;
    for (size_t i = 0; i < r->n; i++)
        if (r->tensors[i].has_baseline) {
            with++;
            same += r->tensors[i].baseline_same_data;
        }
    if (with && same == with)
        return golden_fail_what(err, GOLDEN_EINVAL, r->baseline,
                                "the baseline holds the candidate's data (every one of its %zu "
                                "compared tensors is byte-identical): three-way mode needs "
                                "production's output as the baseline", with);
    return 0;
}

int golden_diff_merge(golden_diff_result *const *parts, size_t n, golden_diff_result **out,
                      golden_error *err)
{
    *out = NULL;
    if (!n)
        return golden_fail_what(err, GOLDEN_EINTERNAL, NULL, "no shard to merge");
    golden_diff_result *r = calloc(1, sizeof *r), *p0 = parts[0];
    if (!r)
        return golden_fail_what(err, GOLDEN_ENOMEM, NULL, "out of memory merging results");
    /* what every shard of one run shares: the first one's */
    r->reference = p0->reference;
    r->candidate = p0->candidate;
    r->baseline = p0->baseline;
    r->policy = p0->policy;
    r->overrides = p0->overrides;
    p0->reference = p0->candidate = p0->baseline = NULL;
    p0->policy = p0->overrides = NULL;
    r->allow_missing = p0->allow_missing;
    r->allow_empty = p0->allow_empty;
    r->trust_hashes = p0->trust_hashes;
    /* every shard read every input's listing: the files passed over are the first's */
    r->skipped = p0->skipped;
    r->n_skipped = p0->n_skipped;
    p0->skipped = NULL;
    p0->n_skipped = 0;
    size_t total = 0;
    for (size_t k = 0; k < n; k++)
        r->n_unstored += parts[k]->n_unstored;
    for (size_t k = 0; k < n; k++)
        total += parts[k]->n;
    r->tensors = calloc(total ? total : 1, sizeof *r->tensors);
    if (!r->tensors)
        goto oom;
    for (size_t k = 0; k < n; k++) {
        if (parts[k]->n)
            memcpy(r->tensors + r->n, parts[k]->tensors, parts[k]->n * sizeof *r->tensors);
        r->n += parts[k]->n;
        parts[k]->n = 0;
    }
    qsort(r->tensors, r->n, sizeof *r->tensors, cmp_tensor);
    for (size_t i = 1; i < r->n; i++)
        if (strcmp(r->tensors[i - 1].name, r->tensors[i].name) == 0) {
            golden_fail_what(err, GOLDEN_EINTERNAL, r->tensors[i].name,
                             "the tensor is in two shards of the run");
            golden_diff_free(r);
            return -1;
        }
    if (merge_missing_cand(parts, n, r) != 0 ||
        merge_strs(parts, n, offsetof(golden_diff_result, missing_in_reference),
                   offsetof(golden_diff_result, n_missing_ref), &r->missing_in_reference,
                   &r->n_missing_ref) != 0 ||
        merge_strs(parts, n, offsetof(golden_diff_result, missing_in_baseline),
                   offsetof(golden_diff_result, n_missing_base), &r->missing_in_baseline,
                   &r->n_missing_base) != 0)
        goto oom;
    for (size_t i = 0; i < r->n; i++) {
        if (r->tensors[i].passed)
            r->passed++;
        else
            r->failed++;
    }
    r->empty = r->n == 0;
    r->pass = r->failed == 0 && (!r->empty || r->allow_empty) &&
              r->n_missing_cand_allowed == r->n_missing_cand;
    if (same_baseline(r, err) != 0) {
        golden_diff_free(r);
        return -1;
    }
    *out = r;
    return 0;
oom:
    golden_diff_free(r);
    return golden_fail_what(err, GOLDEN_ENOMEM, NULL, "out of memory merging results");
}
