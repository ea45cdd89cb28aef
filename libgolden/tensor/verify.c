/* Checks of a golden file against itself, on every core, and its description as JSON:
 * what golden-dump --verify and --list report, kept here so any tool can verify a golden. */
#include "golden/verify.h"

#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "golden/dtype.h"
#include "golden/stats.h"
#include "util/pool.h"
#include "tensor/verify_internal.h"

/* One tensor as the calculet-golden/v1 JSON listing shows it. */
json_t *golden_tensor_json(const golden_tensor_info *t)
{
    json_t *o = json_object(), *shape = json_array();
    if (!o || !shape) {
        json_decref(o);
        json_decref(shape);
        return NULL;
    }
    for (int d = 0; d < t->rank; d++)
        json_array_append_new(shape, json_integer((json_int_t)t->shape[d]));
    json_object_set_new(o, "name", json_string(t->name));
    json_object_set_new(o, "dtype", json_string(golden_dtype_name(t->dtype)));
    json_object_set_new(o, "shape", shape);
    json_object_set_new(o, "count", json_integer((json_int_t)t->count));
    json_object_set_new(o, "sha256", json_string(t->sha256));
    json_object_set_new(o, "nan_count", json_integer((json_int_t)t->nan_count));
    json_object_set_new(o, "posinf_count", json_integer((json_int_t)t->posinf_count));
    json_object_set_new(o, "neginf_count", json_integer((json_int_t)t->neginf_count));
    json_object_set_new(o, "zero_count", json_integer((json_int_t)t->zero_count));
    json_object_set_new(o, "min", golden_json_real(t->min));
    json_object_set_new(o, "max", golden_json_real(t->max));
    json_object_set_new(o, "mean", golden_json_real(t->mean));
    json_object_set_new(o, "std", golden_json_real(t->std));
    if (t->has_layer)
        json_object_set_new(o, "layer", json_integer(t->layer));
    if (t->has_chip)
        json_object_set_new(o, "chip", json_integer(t->chip));
    if (t->has_step)
        json_object_set_new(o, "step", json_integer(t->step));
    if (t->op_family)
        json_object_set_new(o, "op_family", json_string(t->op_family));
    if (t->source)
        json_object_set_new(o, "source", json_string(t->source));
    return o;
}

/* The root of the listing: file, root attributes, tensors (array filled by the caller). */
json_t *golden_file_json(golden_reader *r, json_t **tensors)
{
    json_t *doc = json_object(), *attrs = json_object(), *arr = json_array();
    if (!doc || !attrs || !arr) {
        json_decref(doc);
        json_decref(attrs);
        json_decref(arr);
        return NULL;
    }
    json_object_set_new(doc, "schema", json_string(GOLDEN_SCHEMA_GOLDEN));
    json_object_set_new(doc, "file", json_string(golden_reader_path(r)));
    for (size_t i = 0; i < golden_reader_meta_count(r); i++) {
        const char *k, *v;
        golden_reader_meta_at(r, i, &k, &v);
        json_object_set_new(attrs, k, json_string(v));
    }
    json_object_set_new(doc, "attributes", attrs);
    json_object_set_new(doc, "tensors", arr);
    *tensors = arr;
    return doc;
}


typedef struct {
    golden_reader *r;
    pthread_mutex_t mu;
    char **problems;   /* per tensor: NULL = agrees, else "; "-joined reasons */
    golden_progress *prog; /* bytes verified, under mu */
    unsigned long long done;
    bool (*shard)(const char *name, void *shard_ctx); /* NULL: every tensor */
    void *shard_ctx;
} verify_job;

/* Statistics that golden-dump writes now are summed in the one fixed block order of
 * golden/stats.h, so the recompute gives the same bits. Goldens from older writers or other
 * producers summed in another order; their mean and std may differ by the rounding error of
 * a blocked, merged summation, which is bounded by about (B/4 + 2 log2 n + 4) u max|x| (four
 * lanes over blocks of B = 4096, then a merge tree of depth log2 n; u = 2^-53), plus the last
 * bits of the value itself. A larger difference means the data or the attribute changed (the
 * data is also bound by sha256). */
static double stat_tolerance(const golden_stats *s)
{
    if (s->finite == 0)
        return 0;
    double amax = fmax(fabs(golden_stats_min(s)), fabs(golden_stats_max(s)));
    double depth = GOLDEN_STATS_BLOCK / 4.0 + 2.0 * log2((double)s->finite + 1.0) + 4.0;
    return depth * 0x1p-53 * amax;
}

static bool same_stat(double a, double b, double abs_tol)
{
    if (isnan(a) || isnan(b))
        return isnan(a) && isnan(b);
    if (a == b)
        return true;
    return fabs(a - b) <= 1e-12 * fmax(fabs(a), fabs(b)) + abs_tol;
}

static void add_problem(char **p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void add_problem(char **p, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    size_t old = *p ? strlen(*p) : 0;
    char *s = realloc(*p, old + strlen(msg) + 3);
    if (!s)
        return;
    snprintf(s + old, strlen(msg) + 3, "%s%s", old ? "; " : "", msg);
    *p = s;
}

/* Compare a tensor's stored attributes with what its data gives (sha256 and statistics
 * recomputed from the data): each disagreement is appended to *p ("; "-joined). */
int verify_compare(const golden_tensor_info *t, const char sha[65], const golden_stats *s,
                   char **p, golden_error *err)
{
    if (strcmp(sha, t->sha256) != 0)
        add_problem(p, "sha256 is %s, data hashes to %s", t->sha256, sha);
    if (t->tensor_digest[0]) {
        /* binds dtype and shape too: a relabelled dtype keeps sha256 but not this */
        golden_tensor_info now = *t;
        char digest[65];
        memcpy(now.sha256, sha, sizeof now.sha256);
        if (golden_tensor_digest(&now, digest, err) != GOLDEN_OK)
            return GOLDEN_ERR;
        if (strcmp(digest, t->tensor_digest) != 0)
            add_problem(p, "tensor_digest is %s, dtype, shape and data give %s", t->tensor_digest, digest);
    }
    const struct {
        const char *name;
        uint64_t stored, actual;
    } counts[] = {
        {"count", t->count_attr, s->count},
        {"nan_count", t->nan_count, s->nan_count},
        {"posinf_count", t->posinf_count, s->posinf_count},
        {"neginf_count", t->neginf_count, s->neginf_count},
        {"zero_count", t->zero_count, s->zero_count},
    };
    for (size_t k = 0; k < sizeof counts / sizeof counts[0]; k++)
        if (counts[k].stored != counts[k].actual)
            add_problem(p, "%s is %llu, data has %llu", counts[k].name,
                        (unsigned long long)counts[k].stored, (unsigned long long)counts[k].actual);
    double tol = stat_tolerance(s);
    const struct {
        const char *name;
        double stored, actual, tol;
    } stats[] = {
        {"min", t->min, golden_stats_min(s), 0},
        {"max", t->max, golden_stats_max(s), 0},
        {"mean", t->mean, golden_stats_mean(s), tol},
        {"std", t->std, golden_stats_std(s), tol},
    };
    for (size_t k = 0; k < sizeof stats / sizeof stats[0]; k++)
        if (!same_stat(stats[k].stored, stats[k].actual, stats[k].tol))
            add_problem(p, "%s is %.17g, data gives %.17g", stats[k].name, stats[k].stored,
                        stats[k].actual);
    return GOLDEN_OK;
}

/* One tensor: recompute, compare with its attributes (a pool task). */
static int verify_one(void *ctx, size_t i, int worker, golden_error *err)
{
    (void)worker;
    verify_job *job = ctx;
    const golden_tensor_info *t = golden_reader_tensor(job->r, i);
    if (job->shard && !job->shard(t->name, job->shard_ctx))
        return GOLDEN_OK; /* another process's share */
    char sha[65];
    golden_stats s;
    if (golden_reader_recompute(job->r, i, sha, &s, err) != GOLDEN_OK)
        return GOLDEN_ERR;
    if (verify_compare(t, sha, &s, &job->problems[i], err) != GOLDEN_OK)
        return GOLDEN_ERR;
    pthread_mutex_lock(&job->mu);
    job->done += t->count * golden_dtype_size(t->dtype);
    golden_progress_update(job->prog, job->done);
    pthread_mutex_unlock(&job->mu);
    return GOLDEN_OK;
}

int golden_verify_run(golden_reader *r, const golden_verify_opts *opts, char ***problems,
                      golden_error *err)
{
    *problems = NULL;
    golden_progress quiet = {0};
    size_t n = golden_reader_count(r);
    verify_job job = {.r = r, .prog = opts && opts->progress ? opts->progress : &quiet};
    if (opts && opts->version >= 2) {
        job.shard = opts->shard;
        job.shard_ctx = opts->shard_ctx;
    }
    job.problems = calloc(n ? n : 1, sizeof *job.problems);
    if (!job.problems)
        return golden_fail_what(err, GOLDEN_ENOMEM, golden_reader_path(r), "out of memory");
    pthread_mutex_init(&job.mu, NULL);
    int threads = opts && opts->threads > 0 ? opts->threads : lg_cpu_count();
    golden_error e;
    int rc = lg_parallel_for(n, threads, verify_one, &job, &e);
    pthread_mutex_destroy(&job.mu);
    if (rc != GOLDEN_OK) {
        golden_verify_free(job.problems, n);
        if (err)
            *err = e;
        return GOLDEN_ERR;
    }
    *problems = job.problems;
    return GOLDEN_OK;
}

int golden_verify_tensors(golden_reader *r, char ***problems, golden_progress *prog,
                          golden_error *err)
{
    golden_verify_opts o = {.version = GOLDEN_VERIFY_OPTS_VERSION, .threads = 0, .progress = prog};
    return golden_verify_run(r, &o, problems, err);
}

void golden_verify_free(char **problems, size_t n)
{
    if (!problems)
        return;
    for (size_t i = 0; i < n; i++)
        free(problems[i]);
    free(problems);
}
