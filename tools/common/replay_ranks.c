/* npu-replay run on ranks: plan, share, merge (docs/scale.md, "npu-replay run"). */
#include "replay_ranks.h"

#include <fnmatch.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "golden/doc.h"
#include "golden/outfile.h"
#include "golden/store.h"
#include "ranks.h"
#include "scratch.h"
#include "shard.h"

#define COPY_BYTES ((uint64_t)16 << 20) /* a tensor is copied in pieces of this much */

typedef struct {
    const golden_backend_load_opts *lo;
    const golden_replay_run_opts *ro;
    golden_replay_case *cases;
    size_t n;
    bool *sel;        /* selected by the user's --cases and not a rejection case */
    int *owner;       /* of each selected case */
    int me, ranks;
    size_t *count;    /* cases of each rank */
    char **gold, **raw; /* each rank's files: this rank's from the start, the others' on rank 0
                         * once they reported (in this folder of theirs, scratch.h) */
    char *dir;          /* this rank's scratch folder */
} plan;

#define COUNTS (3 * sizeof(uint64_t)) /* a share's report: its counts, then its folder's path */

static bool matches(const golden_replay_run_opts *ro, const char *id)
{
    if (ro->n_globs == 0)
        return true;
    for (size_t i = 0; i < ro->n_globs; i++)
        if (fnmatch(ro->globs[i], id, 0) == 0)
            return true;
    return false;
}

/* A rank's share in its worker: its own backend, its cases into its own files, its counts. */
static int share(void *ctx, void **buf, size_t *len, golden_error *err)
{
    const plan *p = ctx;
    golden_replay_run_opts ro = *p->ro;
    const char **mine = NULL;
    size_t k = 0;
    bool alone = true; /* no rank has a case: rank 0 runs as the single tool (its messages) */
    for (int r = 0; r < p->ranks; r++)
        alone = alone && p->count[r] == 0;
    uint64_t out[3] = {0, 0, 0};
    size_t dl = strlen(p->dir) + 1;
    if (p->count[p->me] == 0 && !(alone && p->me == 0))
        goto done;
    if (!alone) {
        mine = calloc(p->count[p->me], sizeof *mine);
        if (!mine)
            return golden_fail_what(err, GOLDEN_ENOMEM, NULL, "out of memory");
        for (size_t i = 0; i < p->n; i++)
            if (p->sel[i] && p->owner[i] == p->me)
                mine[k++] = p->cases[i].case_id; /* ids hold no glob characters */
        ro.n_globs = k;
        ro.globs = mine;
    }
    if (p->me != 0)
        ro.progress = NULL;
    ro.golden = p->gold[p->me];
    ro.raw = p->raw[p->me];
    ro.force = true; /* this rank's own scratch files */
    golden_backend *b = NULL;
    if (golden_backend_load(p->lo, &b, err) != 0) {
        free(mine);
        return -1;
    }
    ro.backend = b;
    golden_replay_run_result res;
    int rc = golden_replay_run(&ro, &res, err);
    golden_backend_close(b);
    free(mine);
    if (rc != 0)
        return -1;
    out[0] = res.cases;
    out[1] = res.requests;
    out[2] = 1; /* files written */
done:
    if (!(*buf = malloc(COUNTS + dl)))
        return golden_fail_what(err, GOLDEN_ENOMEM, NULL, "out of memory");
    memcpy(*buf, out, COUNTS);
    memcpy((char *)*buf + COUNTS, p->dir, dl);
    *len = COUNTS + dl;
    return 0;
}

/* One tensor of a rank's golden into the merged one: its data in pieces, its statistics and
 * hash computed again by the writer, which must equal what the rank stored. */
static int copy_tensor(golden_reader *r, size_t i, golden_writer *w, unsigned char *piece,
                       golden_error *err)
{
    const golden_tensor_info *t = golden_reader_tensor(r, i);
    size_t es = golden_dtype_size(t->dtype);
    uint64_t step = COPY_BYTES / es;
    if (golden_writer_begin(w, t, err) != 0)
        return -1;
    for (uint64_t at = 0; at < t->count; at += step) {
        uint64_t n = t->count - at < step ? t->count - at : step;
        if (golden_reader_read(r, i, at, n, piece, err) != 0 ||
            golden_writer_write(w, piece, (size_t)(n * es), err) != 0)
            return -1;
    }
    golden_tensor_info made;
    memset(&made, 0, sizeof made);
    if (golden_writer_end(w, &made, err) != 0)
        return -1;
    int same = strcmp(made.sha256, t->sha256) == 0;
    golden_tensor_info_clear(&made);
    if (!same)
        return golden_fail_what(err, GOLDEN_EINTERNAL, golden_reader_path(r), "%s: the merged "
                                "copy's sha256 is not the rank's", t->name);
    return 0;
}

/* Rank 0: every rank's tensors into one golden, case by case in manifest order. */
static int merge_golden(const plan *p, golden_reader **rd, golden_error *err)
{
    golden_writer_opts wo = {.version = GOLDEN_WRITER_OPTS_VERSION, .force = p->ro->force,
                             .producer = p->ro->producer ? p->ro->producer : "npu-replay"};
    golden_writer *w = NULL;
    unsigned char *piece = malloc((size_t)COPY_BYTES);
    if (!piece)
        return golden_fail_what(err, GOLDEN_ENOMEM, NULL, "out of memory");
    int rc = golden_writer_open(p->ro->golden, &wo, &w, err);
    golden_reader *first = NULL;
    for (int k = 0; !first && k < p->ranks; k++)
        first = rd[k];
    for (size_t m = 0; rc == 0 && first && m < golden_reader_meta_count(first); m++) {
        const char *key, *val;
        golden_reader_meta_at(first, m, &key, &val);
        if (strcmp(key, "schema") && strcmp(key, "producer") && strcmp(key, "created"))
            rc = golden_writer_meta(w, key, val, err);
    }
    size_t copied = 0;
    for (size_t c = 0; rc == 0 && c < p->n; c++) {
        if (!p->sel[c])
            continue;
        golden_reader *r = rd[p->owner[c]];
        char prefix[512];
        snprintf(prefix, sizeof prefix, "cases/%s/", p->cases[c].case_id);
        for (size_t i = 0; rc == 0 && r && i < golden_reader_count(r); i++)
            if (strncmp(golden_reader_tensor(r, i)->name, prefix, strlen(prefix)) == 0) {
                rc = copy_tensor(r, i, w, piece, err);
                copied++;
            }
    }
    size_t total = 0;
    for (int k = 0; k < p->ranks; k++)
        total += rd[k] ? golden_reader_count(rd[k]) : 0;
    if (rc == 0 && copied != total)
        rc = golden_fail_what(err, GOLDEN_EINTERNAL, NULL, "the ranks' goldens hold %zu tensors, "
                              "%zu of them under their cases", total, copied);
    free(piece);
    if (rc == 0)
        return golden_writer_commit(w, err);
    golden_writer_abort(w);
    return -1;
}

/* The raw lines of one rank's file, each with its case id. */
typedef struct {
    char **line;
    char **id;
    size_t n, cap, at;
} lines;

static int keep_line(void *ctx, const char *text, size_t len, size_t no, golden_error *err)
{
    lines *l = ctx;
    golden_doc *d = NULL;
    if (golden_doc_load_json("raw", text, len, no, &d, err) != 0)
        return -1;
    const char *id = json_string_value(json_object_get(golden_doc_root(d), "case_id"));
    if (l->n == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 64;
        char **nl = realloc(l->line, cap * sizeof *nl), **ni = nl ? realloc(l->id, cap * sizeof *ni) : NULL;
        if (nl)
            l->line = nl;
        if (ni)
            l->id = ni;
        if (!nl || !ni) {
            golden_doc_free(d);
            return golden_fail_what(err, GOLDEN_ENOMEM, NULL, "out of memory");
        }
        l->cap = cap;
    }
    l->line[l->n] = strndup(text, len);
    l->id[l->n] = id ? strdup(id) : NULL;
    golden_doc_free(d);
    if (!l->line[l->n] || !l->id[l->n]) {
        free(l->line[l->n]);
        free(l->id[l->n]);
        return golden_fail_what(err, GOLDEN_EINTERNAL, NULL, "raw line %zu: no case_id", no);
    }
    l->n++;
    return 0;
}

static void lines_free(lines *l)
{
    for (size_t i = 0; i < l->n; i++) {
        free(l->line[i]);
        free(l->id[i]);
    }
    free(l->line);
    free(l->id);
}

/* Rank 0: the raw lines case by case in manifest order, each case's lines as its rank wrote
 * them (the single run's order). */
static int merge_raw(const plan *p, const bool *wrote, golden_error *err)
{
    lines *l = calloc((size_t)p->ranks, sizeof *l);
    if (!l)
        return golden_fail_what(err, GOLDEN_ENOMEM, NULL, "out of memory");
    int rc = 0;
    for (int k = 0; rc == 0 && k < p->ranks; k++)
        if (wrote[k])
            rc = golden_doc_each_line(p->raw[k], 0, keep_line, &l[k], err);
    golden_outfile *of = NULL;
    if (rc == 0)
        rc = golden_outfile_open(p->ro->raw, p->ro->force, &of, err);
    FILE *s = rc == 0 ? golden_outfile_stream(of) : NULL;
    for (size_t c = 0; rc == 0 && c < p->n; c++) {
        if (!p->sel[c])
            continue;
        lines *o = &l[p->owner[c]];
        while (o->at < o->n && strcmp(o->id[o->at], p->cases[c].case_id) == 0)
            if (fprintf(s, "%s\n", o->line[o->at++]) < 0)
                rc = golden_fail_what(err, GOLDEN_EIO, p->ro->raw, "write error");
    }
    for (int k = 0; rc == 0 && k < p->ranks; k++)
        if (l[k].at != l[k].n)
            rc = golden_fail_what(err, GOLDEN_EINTERNAL, p->raw[k], "line %zu is not of a case "
                                  "of rank %d, in order", l[k].at + 1, k);
    for (int k = 0; k < p->ranks; k++)
        lines_free(&l[k]);
    free(l);
    if (rc == 0)
        return golden_outfile_commit(of, err);
    if (of)
        golden_outfile_abort(of);
    return -1;
}

static int rank_files(char **gold, char **raw, const char *dir)
{
    return asprintf(gold, "%s/golden.h5", dir) < 0 || asprintf(raw, "%s/raw.jsonl", dir) < 0 ? -1 : 0;
}

/* Rank 0, every share done: the merged golden and raw file (both or neither), the counts. */
static int merge(const plan *p, void **bufs, golden_replay_run_result *res, golden_error *err)
{
    golden_reader **rd = calloc((size_t)p->ranks, sizeof *rd);
    bool *wrote = calloc((size_t)p->ranks, sizeof *wrote);
    int rc = rd && wrote ? 0 : golden_fail_what(err, GOLDEN_ENOMEM, NULL, "out of memory");
    for (int k = 0; rc == 0 && k < p->ranks; k++) {
        uint64_t v[3];
        memcpy(v, bufs[k], sizeof v);
        res->cases += (size_t)v[0];
        res->requests += (size_t)v[1];
        wrote[k] = v[2] != 0;
        if (k != p->me && wrote[k] && rank_files(&p->gold[k], &p->raw[k], (char *)bufs[k] + COUNTS))
            rc = golden_fail_what(err, GOLDEN_ENOMEM, NULL, "out of memory");
        if (rc == 0 && wrote[k])
            rc = golden_reader_open(p->gold[k], &rd[k], err);
    }
    if (rc == 0)
        rc = merge_golden(p, rd, err);
    for (int k = 0; rd && k < p->ranks; k++)
        golden_reader_close(rd[k]);
    if (rc == 0 && merge_raw(p, wrote, err) != 0) {
        unlink(p->ro->golden); /* both files or neither */
        rc = -1;
    }
    free(rd);
    free(wrote);
    return rc;
}

static int planning_failed(void *ctx, void **buf, size_t *len, golden_error *err)
{
    (void)buf;
    (void)len;
    *err = *(const golden_error *)ctx;
    return -1;
}

/* Every rank's plan, alike: the cases, their owners, the ranks' file names. 0, or -1. */
static int make_plan(plan *p, char **doing, golden_replay_run_result *res, golden_error *err)
{
    /* an option the ranks do not carry out is refused, never dropped */
    const char *alone = p->ro->faults ? "--faults" : p->ro->check_rejection ? "--check-rejection"
                        : p->ro->version >= 4 && p->ro->qps > 0 ? "--qps"
                        : p->ro->version >= 4 && p->ro->topk > 0 ? "--topk" : NULL;
    if (alone)
        return golden_fail_what(err, GOLDEN_EINVAL, alone,
                                "not on MPI ranks yet: run it as one process (docs/scale.md)");
    if (golden_outfile_check(p->ro->golden, p->ro->force, err) ||
        golden_outfile_check(p->ro->raw, p->ro->force, err) ||
        golden_replay_manifest_load(p->ro->manifest, &p->cases, &p->n, err))
        return -1;
    size_t n = p->n;
    p->sel = calloc(n ? n : 1, sizeof *p->sel);
    p->owner = calloc(n ? n : 1, sizeof *p->owner);
    uint64_t *tok = calloc(n ? n : 1, sizeof *tok), *load = calloc((size_t)p->ranks, sizeof *load);
    const char **ids = calloc(n ? n : 1, sizeof *ids);
    int *own = calloc(n ? n : 1, sizeof *own);
    p->count = calloc((size_t)p->ranks, sizeof *p->count);
    p->gold = calloc((size_t)p->ranks, sizeof *p->gold);
    p->raw = calloc((size_t)p->ranks, sizeof *p->raw);
    int rc = p->sel && p->owner && tok && load && ids && own && p->count && p->gold && p->raw ? 0 : -1;
    size_t m = 0;
    for (size_t i = 0; rc == 0 && i < n; i++) {
        const golden_replay_case *k = &p->cases[i];
        if (!matches(p->ro, k->case_id))
            continue;
        if (k->rejection) { /* never submitted, as in one process */
            res->skipped_rejections++;
            continue;
        }
        p->sel[i] = true;
        ids[m] = k->case_id;
        tok[m++] = (uint64_t)(k->past + k->prompt + k->output) + 1;
    }
    if (rc == 0)
        rc = shard_plan(tok, ids, m, p->ranks, own, load);
    for (size_t i = 0, j = 0; rc == 0 && i < n; i++)
        if (p->sel[i]) {
            p->owner[i] = own[j++];
            p->count[p->owner[i]]++;
        }
    for (int k = 0; rc == 0 && k < p->ranks; k++)
        if (asprintf(&doing[k], "running %zu of its cases, %" PRIu64 " tokens", p->count[k],
                     load[k]) < 0)
            rc = -1;
    free(tok);
    free(load);
    free(ids);
    free(own);
    if (rc != 0)
        return golden_fail_what(err, GOLDEN_ENOMEM, NULL, "out of memory planning the ranks' shares");
    /* this rank's files, in a folder of its own made now beside the golden (never a name that
     * exists, never through a link); it goes when the rank ends or is stopped (scratch.h) */
    char *prefix = NULL;
    if (asprintf(&prefix, "%s.rank%d-of-%d", p->ro->golden, p->me, p->ranks) < 0)
        return golden_fail_what(err, GOLDEN_ENOMEM, NULL, "out of memory");
    rc = scratch_make(prefix, &p->dir, err);
    free(prefix);
    if (rc == 0 && rank_files(&p->gold[p->me], &p->raw[p->me], p->dir) != 0)
        return golden_fail_what(err, GOLDEN_ENOMEM, NULL, "out of memory");
    return rc;
}

int replay_ranks_run(const golden_backend_load_opts *lo, const golden_replay_run_opts *ro,
                     golden_replay_run_result *res, bool *root, golden_error *err)
{
    memset(res, 0, sizeof *res);
    *root = true;
    if (ranks_start(err) != 0)
        return -1;
    plan p = {.lo = lo, .ro = ro, .me = ranks_rank(), .ranks = ranks_size()};
    *root = p.me == 0;
    char **doing = calloc((size_t)p.ranks, sizeof *doing);
    golden_error plan_err;
    golden_error_clear(&plan_err);
    int planned = doing ? make_plan(&p, doing, res, &plan_err) == 0 : 0;
    if (!doing)
        golden_fail_what(&plan_err, GOLDEN_ENOMEM, NULL, "out of memory");
    void **bufs = NULL;
    size_t *lens = NULL;
    int rc = planned ? ranks_gather(share, &p, doing, &bufs, &lens, err)
                     : ranks_gather(planning_failed, &plan_err, NULL, &bufs, &lens, err);
    for (int k = 0; rc == 0 && *root && k < p.ranks; k++)
        if (lens[k] <= COUNTS || ((char *)bufs[k])[lens[k] - 1] != '\0')
            rc = golden_fail_what(err, GOLDEN_EINTERNAL, NULL, "rank %d's counts are cut short", k);
    if (rc == 0 && *root)
        rc = merge(&p, bufs, res, err);
    /* the ranks' files: each rank removes its own folder in ranks_finish, once rank 0 merged */
    for (int k = 0; bufs && k < p.ranks; k++)
        free(bufs[k]);
    free(bufs);
    free(lens);
    for (int k = 0; k < p.ranks; k++) {
        free(doing ? doing[k] : NULL);
        free(p.gold ? p.gold[k] : NULL);
        free(p.raw ? p.raw[k] : NULL);
    }
    free(doing);
    free(p.gold);
    free(p.raw);
    free(p.dir);
    free(p.count);
    free(p.sel);
    free(p.owner);
    golden_replay_cases_free(p.cases, p.n);
    return rc;
}
