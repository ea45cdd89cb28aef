/* golden-diff's run: pair the tensors of the reference, candidate and baseline by
 * (mapped) name, set up one job per pair, run the pass, and judge every tensor. */
#include "tensor/diff_internal.h"
#include "tensor/policy_private.h"
#include "tensor/verify_internal.h"
#include "util/pool.h"

#include <fnmatch.h>
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>


typedef struct {
    char *mapped;
    size_t index;
    bool used;
    bool by_position;   /* renamed to the reference's one tensor (pair_by_position) */
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
    named key = {(char *)name, 0, false, false};
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

/* This process's share of a sharded run (golden_diff_opts.shard); every name otherwise. */
static bool in_shard(const golden_diff_opts *o, const char *name)
{
    return !o->shard || o->shard(name, o->shard_ctx);
}

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
    golden_cmp_setup s = GOLDEN_CMP_SETUP_INIT;
    s.tier = lg_diff_engine_tier(t);
    s.dtype_ref = t->dtype_ref;
    s.dtype_cand = cand;
    s.atol = t->judge.atol;
    s.rtol = t->judge.rtol;
    s.eps = t->judge.eps;
    s.near_tie_margin = t->judge.limits.near_tie_margin;
    s.row_len = ri->rank ? ri->shape[ri->rank - 1] : 1;
    if (s.tier == GOLDEN_TIER_LAYER &&
        (ri->rank < 2 || s.row_len < 2 || s.row_len > GOLDEN_DIFF_MAX_ROW))
        s.row_len = 0; /* per-row cosine needs rows of two or more that fit one work item */
    return s;
}

static void *alloc_rows(uint64_t n, size_t w)
{
    return calloc(n ? n : 1, w);
}

/* Row tiers: chunks hold whole rows, and the per-row records the verdict needs. */
static int plan_rows(const golden_diff_opts *o, const golden_tensor_info *ri,
                     golden_diff_tensor *t, golden_diff_job *j, uint64_t chunk,
                     golden_error *err)
{
    golden_tier tier = lg_diff_engine_tier(t);
    bool rows = tier == GOLDEN_TIER_LOGITS || tier == GOLDEN_TIER_TOKENS ||
                (tier == GOLDEN_TIER_LAYER && j->setup.row_len);
    j->chunk = chunk;
    if (!rows || !j->setup.row_len) {
        j->setup.row_len = tier == GOLDEN_TIER_LAYER ? 0 : j->setup.row_len;
        j->bsetup.row_len = j->setup.row_len;
        return 0;
    }
    uint64_t len = j->setup.row_len;
    if (len > GOLDEN_DIFF_MAX_ROW) {
        char where[1024];
        snprintf(where, sizeof where, "%s:%s", o->reference, ri->name);
        return golden_fail_what(err, GOLDEN_EINVAL, where,
                                "a %s row of %" PRIu64 " elements is longer than the %" PRIu64
                                " golden-diff compares at once", golden_tier_name(tier), len,
                                GOLDEN_DIFF_MAX_ROW);
    }
    uint64_t per = chunk / len;
    j->chunk = (per ? per : 1) * len;
    t->n_rows = j->count / len;
    bool three = j->with_base;
    if (tier == GOLDEN_TIER_TOKENS) {
        t->first_divergence = alloc_rows(t->n_rows, sizeof(int64_t));
        t->bfirst_divergence = three ? alloc_rows(t->n_rows, sizeof(int64_t)) : NULL;
        if (!t->first_divergence || (three && !t->bfirst_divergence))
            return golden_fail_what(err, GOLDEN_ENOMEM, NULL, "out of memory");
        for (uint64_t k = 0; k < t->n_rows; k++) {
            t->first_divergence[k] = -1;
            if (three)
                t->bfirst_divergence[k] = -1;
        }
        j->setup.first_divergence = t->first_divergence;
        j->bsetup.first_divergence = t->bfirst_divergence;
    } else if (three) {
        /* per-row excuses need both sides' rows */
        t->row_value = alloc_rows(t->n_rows, sizeof(double));
        t->brow_value = alloc_rows(t->n_rows, sizeof(double));
        if (!t->row_value || !t->brow_value)
            return golden_fail_what(err, GOLDEN_ENOMEM, NULL, "out of memory");
        j->setup.row_value = t->row_value;
        j->bsetup.row_value = t->brow_value;
        if (tier == GOLDEN_TIER_LOGITS) {
            t->row_flags = alloc_rows(t->n_rows, 1);
            t->brow_flags = alloc_rows(t->n_rows, 1);
            if (!t->row_flags || !t->brow_flags)
                return golden_fail_what(err, GOLDEN_ENOMEM, NULL, "out of memory");
            j->setup.row_flags = t->row_flags;
            j->bsetup.row_flags = t->brow_flags;
        }
    }
    return 0;
}

/* The inputs themselves: a baseline that is the candidate's file, and policy rules that
 * match no reference tensor (a misspelt glob silently drops a gate), are errors. */
static int check_inputs(const golden_diff_opts *o, golden_reader *ref, golden_reader *base,
                        const golden_diff_result *r, golden_error *err)
{
    (void)r;
    if (base) {
        struct stat a, b;
        if (stat(o->candidate, &a) == 0 && stat(o->baseline, &b) == 0 && a.st_dev == b.st_dev &&
            a.st_ino == b.st_ino)
            return golden_fail_what(err, GOLDEN_EINVAL, o->baseline,
                                    "the baseline is the candidate's own file: three-way mode "
                                    "needs production's output as the baseline");
    }
    size_t n = golden_reader_count(ref);
    const char **names = calloc(n ? n : 1, sizeof *names);
    if (!names)
        return golden_fail_what(err, GOLDEN_ENOMEM, NULL, "out of memory");
    for (size_t i = 0; i < n; i++)
        names[i] = golden_reader_tensor(ref, i)->name;
    int rc = golden_policy_check_matched(o->policy, names, n, o->reference, err);
    free(names);
    return rc;
}

/* Tensors without elements have no chunk to hash: their digest is the empty one. */
static int hash_empty(golden_reader *ref, golden_reader *cand, golden_reader *base,
                      golden_diff_job *jobs, size_t n, golden_error *err)
{
    char empty[65];
    if (golden_sha256_buffer("", 0, empty, err) != GOLDEN_OK)
        return -1;
    for (size_t k = 0; k < n; k++) {
        golden_diff_job *j = &jobs[k];
        if (!j->hash || j->n_chunks)
            continue;
        const char *stored[3] = {golden_reader_tensor(ref, j->ri)->sha256,
                                 golden_reader_tensor(cand, j->ci)->sha256,
                                 j->with_base ? golden_reader_tensor(base, j->bi)->sha256 : ""};
        for (int side = 0; side < (j->with_base ? 3 : 2); side++) {
            golden_stats_init(&j->stats[side]);
            snprintf(j->t->hash_stored[side], 65, "%s", stored[side]);
            snprintf(j->t->hash_data[side], 65, "%s", empty);
            j->t->hash_bad[side] = !j->t->unstored[side] && strcmp(stored[side], empty) != 0;
        }
    }
    return 0;
}

/* The stored statistics of every tensor read (counts, min, max, mean, std, tensor_digest)
 * against the statistics of the data the pass read: a golden whose attributes lie is an
 * input error, as golden-dump --verify says. A side whose data does not match its sha256 is
 * judged by that (a failed verdict): its statistics say nothing more. */
static int check_stats(golden_reader *ref, golden_reader *cand, golden_reader *base,
                       const golden_diff_job *jobs, size_t n, golden_error *err)
{
    for (size_t k = 0; k < n; k++) {
        const golden_diff_job *j = &jobs[k];
        if (!j->hash)
            continue;
        for (int side = 0; side < (j->with_base ? 3 : 2); side++) {
            if (side == 0 && j->t->unstored[0] && j->count) { /* max |r| from the data */
                double mx = fmax(fabs(golden_stats_min(&j->stats[0])),
                                 fabs(golden_stats_max(&j->stats[0])));
                j->t->ref_max_abs = isfinite(mx) ? mx : 0;
            }
            if (j->t->hash_bad[side] || j->t->unstored[side])
                continue; /* nothing stored to check the data against */
            golden_reader *r = side == 0 ? ref : side == 1 ? cand : base;
            size_t i = side == 0 ? j->ri : side == 1 ? j->ci : j->bi;
            const golden_tensor_info *ti = golden_reader_tensor(r, i);
            char *problems = NULL;
            if (verify_compare(ti, ti->sha256, &j->stats[side], &problems, err) != 0)
                return -1;
            if (problems) {
                char where[1024];
                snprintf(where, sizeof where, "%.600s:%.400s", golden_reader_path(r), ti->name);
                golden_fail_what(err, GOLDEN_EINVAL, where,
                                 "stored statistics do not match the data: %s "
                                 "(golden-dump --verify says the same; --trust-hashes skips "
                                 "this check)", problems);
                free(problems);
                return -1;
            }
        }
    }
    return 0;
}

/* A baseline whose every compared tensor holds the candidate's bytes excuses anything. */
static int same_baseline(const golden_diff_opts *o, const golden_diff_job *jobs, size_t n,
                         golden_error *err)
{
    size_t with = 0, same = 0;
    for (size_t k = 0; k < n; k++)
        if (jobs[k].with_base) {
            with++;
            same += !jobs[k].base_differs;
        }
    if (with && same == with)
        return golden_fail_what(err, GOLDEN_EINVAL, o->baseline,
                                "the baseline holds the candidate's data (every one of its %zu "
                                "compared tensors is byte-identical): three-way mode needs "
                                "production's output as the baseline", with);
    return 0;
}

/* A single-tensor file on each side (not a folder), one of them foreign, whose names differ
 * after --map: they pair by position (a.npy and b.npy hold "a" and "b"). Goldens keep pairing
 * by name only. */
static int pair_by_position(const golden_diff_opts *o, golden_reader *ref, golden_reader *other,
                            named *v, size_t n, golden_error *err)
{
    if (!o->foreign || n != 1 || golden_reader_count(ref) != 1 || golden_reader_is_folder(ref) ||
        golden_reader_is_folder(other) ||
        (golden_reader_stored(ref, 0) && golden_reader_stored(other, 0)))
        return 0;
    const char *rn = golden_reader_tensor(ref, 0)->name;
    if (strcmp(v[0].mapped, rn) == 0)
        return 0;
    char *s = strdup(rn);
    if (!s)
        return golden_fail_what(err, GOLDEN_ENOMEM, NULL, "out of memory");
    free(v[0].mapped);
    v[0].mapped = s;
    v[0].by_position = true;
    return 0;
}

/* What the readers passed over, side by side, for the report. */
static int collect_skipped(golden_diff_result *r, golden_reader *rd, const char *side,
                           golden_error *err)
{
    for (size_t i = 0; rd && i < golden_reader_skipped_count(rd); i++) {
        const char *path, *why;
        golden_reader_skipped_at(rd, i, &path, &why);
        char *s = lg_diff_fmt("%s: %s: %s", side, path, why);
        if (!s || lg_diff_push(&r->skipped, &r->n_skipped, s))
            return golden_fail_what(err, GOLDEN_ENOMEM, NULL, "out of memory");
    }
    return 0;
}

/* Everything the pairing builds for the pass. */
typedef struct {
    const golden_diff_opts *o;
    golden_diff_result *r;
    golden_reader *ref, *cand, *base;
    named *cn, *bn;
    size_t ncn, nbn;
    golden_diff_job *jobs;
    size_t n_jobs, n_items, buf_bytes;
    uint64_t chunk;
    unsigned long long total;
} plan;

/* Reference tensor i: pair it with the candidate's (and the baseline's) and plan its job. */
static int pair_one(plan *p, size_t i, golden_error *err)
{
    const golden_diff_opts *o = p->o;
    golden_diff_result *r = p->r;
    golden_reader *ref = p->ref, *cand = p->cand, *base = p->base;
    named *cn = p->cn, *bn = p->bn;
    size_t ncn = p->ncn, nbn = p->nbn;
    golden_diff_job *jobs = p->jobs;
    uint64_t chunk = p->chunk;
    const golden_tensor_info *ri = golden_reader_tensor(ref, i);
    if (!wanted(o, ri->name) || !in_shard(o, ri->name))
        return 0;
    named *c = find_named(cn, ncn, ri->name);
    if (!c) {
        char *s = strdup(ri->name);
        if (!s || lg_diff_push(&r->missing_in_candidate, &r->n_missing_cand, s)) {
            golden_fail_what(err, GOLDEN_ENOMEM, NULL, "out of memory");
            return -1;
        }
        return 0;
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
        return -1;
    }
    t->unstored[0] = !golden_reader_stored(ref, i);
    lg_policy_resolve_why(o->policy, ri->name, ri->dtype, ci->dtype, ri->rank, t->unstored[0],
                          &t->judge, &t->tier_why);
    t->unstored[1] = !golden_reader_stored(cand, c->index);
    t->paired_by_position = c->by_position;
    double mx = fmax(fabs(ri->min), fabs(ri->max));
    t->ref_max_abs = isfinite(mx) ? mx : 0;
    t->compared = same_shape(ri, ci);
    if (!t->compared)
        return 0;
    golden_diff_job *j = &jobs[p->n_jobs];
    j->t = t;
    j->ri = i;
    j->ci = c->index;
    j->count = ri->count;
    j->setup = make_setup(t, ci->dtype, ri);
    j->setup.histogram = o->histogram;
    named *b = base ? find_named(bn, nbn, ri->name) : NULL;
    if (b) {
        b->used = true;
        const golden_tensor_info *bi = golden_reader_tensor(base, b->index);
        t->baseline_name = strdup(bi->name);
        if (!t->baseline_name) {
            golden_fail_what(err, GOLDEN_ENOMEM, NULL, "out of memory");
            return -1;
        }
        t->dtype_base = bi->dtype;
        t->unstored[2] = !golden_reader_stored(base, b->index);
        if (same_shape(ri, bi)) {
            j->with_base = true;
            j->bi = b->index;
            j->bsetup = make_setup(t, bi->dtype, ri);
            t->has_baseline = true;
        }
    } else if (base) {
        char *s = strdup(ri->name);
        if (!s || lg_diff_push(&r->missing_in_baseline, &r->n_missing_base, s)) {
            golden_fail_what(err, GOLDEN_ENOMEM, NULL, "out of memory");
            return -1;
        }
    }
    if (t->judge.channel_axis >= 0 && t->judge.channel_axis >= t->rank) {
        char where[1024];
        snprintf(where, sizeof where, "%s:%s", o->reference, ri->name);
        return golden_fail_what(err, GOLDEN_EINVAL, where,
                                "the policy's channel_axis %d is not an axis of this tensor "
                                "(rank %d)", t->judge.channel_axis, t->rank);
    }
    if (plan_rows(o, ri, t, j, chunk, err) != 0)
        return -1;
    if (diff_cols_wanted(j)) {
        uint64_t rows = j->count / j->setup.row_len;
        j->cols = calloc(diff_cols_size(j), sizeof *j->cols);
        j->row_sums = rows <= DIFF_PROB_MAX_ROWS ? calloc(3 * (size_t)rows, sizeof *j->row_sums) : NULL;
        if (!j->cols || (rows <= DIFF_PROB_MAX_ROWS && !j->row_sums)) {
            golden_fail_what(err, GOLDEN_ENOMEM, NULL, "out of memory");
            return -1;
        }
    }
    j->n_chunks = (size_t)((j->count + j->chunk - 1) / j->chunk);
    j->hash = !o->trust_hashes;
    j->first_item = p->n_items;
    p->n_items += j->n_chunks;
    golden_cmp_acc_init(&j->all, 0);
    golden_cmp_acc_init(&j->ball, 0);
    size_t w = golden_dtype_size(ri->dtype);
    if (golden_dtype_size(ci->dtype) > w)
        w = golden_dtype_size(ci->dtype);
    if (j->with_base && golden_dtype_size(t->dtype_base) > w)
        w = golden_dtype_size(t->dtype_base);
    uint64_t need = (j->count < j->chunk ? j->count : j->chunk) * w;
    if (need > p->buf_bytes)
        p->buf_bytes = (size_t)need;
    p->total += j->count;
    p->n_jobs++;
    return 0;
}

/* Which reference tensors missing from the candidate are allowed to be: named by a glob of
 * --allow-missing-in-candidate (a logits or tokens tensor only by its exact name, never by a
 * wildcard), or by the older allow_missing (never logits or tokens). Tensors only in the
 * candidate are not judged and never fail the run. */
static int allow_missing(const golden_diff_opts *o, golden_reader *ref, golden_diff_result *r,
                         golden_error *err)
{
    r->missing_cand_allowed = calloc(r->n_missing_cand ? r->n_missing_cand : 1, 1);
    if (!r->missing_cand_allowed)
        return golden_fail_what(err, GOLDEN_ENOMEM, NULL, "out of memory");
    r->n_missing_cand_allowed = 0;
    for (size_t i = 0; i < r->n_missing_cand; i++) {
        const char *name = r->missing_in_candidate[i];
        long k = golden_reader_find(ref, name);
        const golden_tensor_info *ti = k >= 0 ? golden_reader_tensor(ref, (size_t)k) : NULL;
        golden_judge j;
        j.tier = GOLDEN_TIER_LAYER;
        if (ti)
            golden_policy_resolve_rank(o->policy, name, ti->dtype, ti->dtype, ti->rank, &j);
        bool output = j.tier == GOLDEN_TIER_LOGITS || j.tier == GOLDEN_TIER_TOKENS;
        bool ok = o->allow_missing && !output;
        for (size_t g = 0; !ok && g < o->n_allow_missing_in_candidate; g++) {
            const char *glob = o->allow_missing_in_candidate[g];
            ok = output ? strcmp(glob, name) == 0 : fnmatch(glob, name, 0) == 0;
        }
        r->missing_cand_allowed[i] = ok;
        r->n_missing_cand_allowed += ok;
    }
    return 0;
}

typedef struct {
    const char *path;
    unsigned flags;
    golden_reader *r;
    golden_error err;
    int rc;
} open_task;

static void *open_thread(void *arg)
{
    open_task *t = arg;
    t->rc = golden_reader_open_flags(t->path, t->flags, &t->r, &t->err);
    return NULL;
}

/* Open the inputs side by side (each walk runs in its own child process, so two cores walk
 * two files at once); on a failure, the first input's error in the order reference,
 * candidate, baseline, and none stays open. */
static int open_inputs(const golden_diff_opts *o, unsigned flags, golden_reader **ref,
                       golden_reader **cand, golden_reader **base, golden_error *err)
{
    open_task t[3] = {{o->reference, flags, NULL, {0}, 0}, {o->candidate, flags, NULL, {0}, 0},
                      {o->baseline, flags, NULL, {0}, 0}};
    size_t n = o->baseline ? 3 : 2;
    pthread_t th[3];
    bool started[3] = {false, false, false};
    bool parallel = o->threads != 1 && lg_cpu_count() > 1;
    for (size_t i = 1; i < n; i++)
        started[i] = parallel && pthread_create(&th[i], NULL, open_thread, &t[i]) == 0;
    open_thread(&t[0]);
    for (size_t i = 1; i < n; i++) {
        if (started[i])
            pthread_join(th[i], NULL);
        else
            open_thread(&t[i]);
    }
    for (size_t i = 0; i < n; i++)
        if (t[i].rc != 0) {
            if (err)
                *err = t[i].err;
            for (size_t k = 0; k < n; k++)
                golden_reader_close(t[k].r);
            return -1;
        }
    *ref = t[0].r;
    *cand = t[1].r;
    *base = t[2].r;
    return 0;
}

int golden_diff_run(const golden_diff_opts *o, golden_diff_result **out, golden_error *err)
{
    golden_reader *ref = NULL, *cand = NULL, *base = NULL;
    named *cn = NULL, *bn = NULL;
    size_t ncn = 0, nbn = 0;
    golden_diff_job *jobs = NULL;
    size_t n_jobs = 0, n_alloc = 0;
    *out = NULL;
    if (!o || o->version != GOLDEN_DIFF_OPTS_VERSION)
        return golden_fail_what(err, GOLDEN_EINVAL, NULL,
                                "diff options of version %u (this libgolden knows %u)",
                                o ? o->version : 0u, GOLDEN_DIFF_OPTS_VERSION);
    golden_diff_result *r = calloc(1, sizeof *r);
    int rc = -1;
    if (!r)
        return golden_fail_what(err, GOLDEN_ENOMEM, NULL, "out of memory");
    r->allow_missing = o->allow_missing;
    r->allow_empty = o->allow_empty;
    r->trust_hashes = o->trust_hashes;
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
    /* every metric comes from the data; the stored sha256 is read to check the data against
     * it (HDF5 checksums metadata, not raw data), unless the user trusts the hashes */
    unsigned flags = (o->trust_hashes ? GOLDEN_READ_DATA_ONLY : 0) |
                     (o->foreign ? GOLDEN_READ_FOREIGN : 0);
    if (open_inputs(o, flags, &ref, &cand, &base, err) != 0)
        goto out;
    ncn = golden_reader_count(cand);
    if (map_names(cand, o->map, &cn, err) != 0 ||
        pair_by_position(o, ref, cand, cn, ncn, err) != 0)
        goto out;
    if (base) {
        nbn = golden_reader_count(base);
        if (map_names(base, o->map, &bn, err) != 0 ||
            pair_by_position(o, ref, base, bn, nbn, err) != 0)
            goto out;
    }
    if (collect_skipped(r, ref, "reference", err) || collect_skipped(r, cand, "candidate", err) ||
        collect_skipped(r, base, "baseline", err))
        goto out;

    size_t nref = golden_reader_count(ref);
    r->tensors = calloc(nref ? nref : 1, sizeof *r->tensors);
    jobs = calloc(nref ? nref : 1, sizeof *jobs);
    n_alloc = jobs ? nref : 0;
    if (!r->tensors || !jobs) {
        golden_fail_what(err, GOLDEN_ENOMEM, NULL, "out of memory");
        goto out;
    }
    uint64_t chunk = o->chunk_elems ? o->chunk_elems : GOLDEN_DIFF_CHUNK;
    plan pl = {o, r, ref, cand, base, cn, bn, ncn, nbn, jobs, 0, 0, 8, chunk, 0};
    for (size_t i = 0; i < nref; i++)
        if (pair_one(&pl, i, err) != 0)
            goto out;
    n_jobs = pl.n_jobs;
    size_t n_items = pl.n_items, buf_bytes = pl.buf_bytes;
    unsigned long long total = pl.total;
    for (size_t i = 0; i < ncn; i++)
        if (!cn[i].used && wanted(o, cn[i].mapped) && in_shard(o, cn[i].mapped)) {
            char *s = strdup(cn[i].mapped);
            if (!s || lg_diff_push(&r->missing_in_reference, &r->n_missing_ref, s)) {
                golden_fail_what(err, GOLDEN_ENOMEM, NULL, "out of memory");
                goto out;
            }
        }

    if (check_inputs(o, ref, base, r, err) != 0)
        goto out;
    if (lg_diff_pass(ref, cand, base, jobs, n_jobs, n_items, buf_bytes, o->threads,
                         o->progress, total, err) != 0)
        goto out;
    for (size_t k = 0; k < n_jobs; k++) {
        golden_diff_job *j = &jobs[k];
        golden_cmp_finish(&j->setup, &j->all, &j->t->m);
        memcpy(j->t->flips, j->all.examples, sizeof j->all.examples);
        j->t->n_flips = j->all.n_examples;
        if (j->with_base) {
            golden_cmp_finish(&j->bsetup, &j->ball, &j->t->bm);
            j->t->baseline_same_data = !j->base_differs;
        }
        if (j->cols && diff_cols_finish(j) != 0) {
            golden_fail_what(err, GOLDEN_ENOMEM, NULL, "out of memory");
            goto out;
        }
    }
    if ((!o->shard && same_baseline(o, jobs, n_jobs, err)) || hash_empty(ref, cand, base, jobs, n_jobs, err) ||
        check_stats(ref, cand, base, jobs, n_jobs, err))
        goto out;
    for (size_t k = 0; k < n_jobs; k++)
        if (jobs[k].t->judge.tier == GOLDEN_TIER_ROUTER &&
            lg_diff_router(ref, cand, jobs[k].ri, jobs[k].ci, o->policy, jobs[k].t, err) != 0)
            goto out;
    for (size_t i = 0; i < r->n; i++) {
        if (lg_diff_judge(&r->tensors[i]) != 0) {
            golden_fail_what(err, GOLDEN_ENOMEM, NULL, "out of memory");
            goto out;
        }
        const golden_diff_tensor *ti = &r->tensors[i];
        r->n_unstored += ti->compared && (ti->unstored[0] || ti->unstored[1] ||
                                          (ti->has_baseline && ti->unstored[2]));
        if (r->tensors[i].passed)
            r->passed++;
        else
            r->failed++;
    }
    r->empty = r->n == 0;
    if (allow_missing(o, ref, r, err) != 0)
        goto out;
    r->pass = r->failed == 0 && (!r->empty || o->allow_empty) &&
              r->n_missing_cand_allowed == r->n_missing_cand;
    rc = 0;
out:
    for (size_t k = 0; jobs && k < n_alloc; k++) {
        free(jobs[k].cols);
        free(jobs[k].row_sums);
    }
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
        lg_diff_free_strs(t->reasons, t->n_reasons);
        lg_diff_free_strs(t->router_reasons, t->n_router_reasons);
        lg_diff_free_strs(t->router_notes, t->n_router_notes);
        lg_diff_free_strs(t->notes, t->n_notes);
        free(t->first_divergence);
        free(t->bfirst_divergence);
        free(t->row_value);
        free(t->brow_value);
        free(t->row_flags);
        free(t->brow_flags);
        free(t->col_cos); /* col_rel, bcol_cos, bcol_rel share its block */
    }
    free(r->tensors);
    lg_diff_free_strs(r->missing_in_candidate, r->n_missing_cand);
    lg_diff_free_strs(r->missing_in_reference, r->n_missing_ref);
    free(r->missing_cand_allowed);
    lg_diff_free_strs(r->missing_in_baseline, r->n_missing_base);
    lg_diff_free_strs(r->skipped, r->n_skipped);
    free(r->reference);
    free(r->candidate);
    free(r->baseline);
    json_decref(r->policy);
    json_decref(r->overrides);
    free(r);
}

