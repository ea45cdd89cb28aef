/* npu-replay soak (golden/soak.h). Each round takes the next selected case and runs N requests
 * of it at once on lanes 0..N-1, the calls round robin in a seeded random lane order, each call
 * after a seeded random delay. A request's output (its greedy tokens and every step's logits
 * as the backend gave them) is hashed and held against the hash of the case's reference: the
 * first clean run, alone on lane 0 with every other lane empty and no delay. A difference is a
 * calculet-fault/v1 line (kind crc_mismatch) naming the request, lane, time and both hashes; a
 * failed call is one too (the kind from the backend's code), followed by a reset of every lane
 * and a solo retest of the request against its reference. Memory is bounded whatever the
 * duration: counters, one state per lane, at most GOLDEN_SOAK_MAX_FAULT_LINES lines kept. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "golden/hash.h"
#include "golden/report.h"
#include "golden/replay_run.h"
#include "golden/soak.h"
#include "replay/faults_priv.h"
#include "replay/host_priv.h"
#include "replay/run_priv.h"

typedef struct {
    int64_t step;        /* the next output step */
    int32_t last;        /* the last token chosen */
    golden_sha256 *h;
    bool failed, done;
} lane_req;

typedef struct {
    const golden_soak_opts *o;
    golden_soak_result *res;
    const golden_backend_info *in;
    void *row;           /* one logits row as the backend gives it */
    float *f32;
    uint64_t rng;
    uint64_t t0;
} soak_ctx;

static uint64_t rnd(soak_ctx *c)
{
    uint64_t z = (c->rng += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static void jitter(soak_ctx *c)
{
    if (c->o->jitter_max_us <= 0)
        return;
    double us = c->o->jitter_max_us * (double)(rnd(c) >> 11) / 9007199254740992.0;
    struct timespec ts = {(time_t)(us / 1e6), (long)(((uint64_t)(us * 1e3)) % 1000000000u)};
    nanosleep(&ts, NULL);
}

/* The greedy token of the lane's logits row, the row hashed (and the token). */
static int take_step(soak_ctx *c, int lane, lane_req *q, golden_error *err)
{
    golden_backend *b = c->o->backend;
    int V = c->in->vocab_size;
    size_t esz = c->in->logits_dtype == GOLDEN_BK_BF16 ? 2 : 4;
    if (golden_backend_logits(b, lane, 0, V, c->row, err))
        return GOLDEN_ERR;
    if (esz == 2)
        golden_logits_bf16_to_f32(c->row, 0, (size_t)V, c->f32);
    else
        memcpy(c->f32, c->row, (size_t)V * 4);
    if (replay_logits_bad(c->f32, V) >= 0)
        return golden_fail_what(err, GOLDEN_ECORRUPT, "logits", "NaN, +Inf or no usable entry");
    int32_t best = 0;
    for (int i = 1; i < V; i++)
        if (c->f32[i] > c->f32[best])
            best = i;
    q->last = best;
    int64_t t = best;
    if (golden_sha256_update(q->h, c->row, (size_t)V * esz, err) ||
        golden_sha256_update(q->h, &t, sizeof t, err))
        return GOLDEN_ERR;
    return 0;
}

/* One call of a request: the prefill and first step, or one decode step. */
static int advance(soak_ctx *c, const golden_replay_case *k, int lane, lane_req *q,
                   golden_error *err)
{
    golden_backend *b = c->o->backend;
    int rc;
    if (q->step == 0)
        rc = golden_backend_reset(b, lane, err) ||
             golden_backend_prefill(b, lane, 0, k->ids, k->n_ids, err);
    else
        rc = golden_backend_decode_at(b, lane, (int64_t)k->n_ids + q->step - 1, q->last, err);
    if (rc || take_step(c, lane, q, err))
        return GOLDEN_ERR;
    q->done = ++q->step == k->output;
    return 0;
}

/* Run n requests of case k at once on lanes 0..n-1 (n = 1: the clean solo run); hex[i] their
 * hashes. failed[i] / errs[i] for a request whose call failed. */
static int round_of(soak_ctx *c, const golden_replay_case *k, int n, bool delays, char (*hex)[65],
                    bool *failed, golden_error *errs, golden_error *err)
{
    lane_req q[64];
    int order[64];
    memset(q, 0, sizeof q);
    int rc = 0;
    for (int i = 0; i < n; i++) {
        order[i] = i;
        if (!(q[i].h = golden_sha256_new(err)))
            rc = GOLDEN_ERR;
    }
    for (int left = n; rc == 0 && left > 0;) {
        for (int i = n - 1; delays && i > 0; i--) { /* a fresh interleaving each pass */
            int j = (int)(rnd(c) % (uint64_t)(i + 1)), t = order[i];
            order[i] = order[j];
            order[j] = t;
        }
        for (int x = 0; x < n; x++) {
            int L = order[x];
            if (q[L].done || q[L].failed)
                continue;
            if (delays)
                jitter(c);
            golden_error_clear(&errs[L]);
            if (advance(c, k, L, &q[L], &errs[L])) {
                q[L].failed = true;
                left--;
            } else if (q[L].done) {
                left--;
            }
        }
    }
    for (int i = 0; i < n; i++) {
        failed[i] = q[i].failed;
        if (rc == 0 && !q[i].failed && golden_sha256_final(q[i].h, hex[i], err))
            rc = GOLDEN_ERR;
        golden_sha256_free(q[i].h);
    }
    return rc;
}

static void add_fault(soak_ctx *c, const golden_replay_case *k, const char *kind, int64_t round,
                      int lane, const char *msg, int retest)
{
    golden_soak_result *r = c->res;
    if (r->fault_lines >= GOLDEN_SOAK_MAX_FAULT_LINES)
        return; /* counted by the caller, not kept */
    replay_fault f;
    replay_fault_begin(&f);
    f.kind = kind;
    snprintf(f.case_id, sizeof f.case_id, "%s", k->case_id);
    snprintf(f.request_id, sizeof f.request_id, "%s/soak/%s/%lld/lane%d", c->o->side, k->case_id,
             (long long)round, lane);
    snprintf(f.message, sizeof f.message, "%s", msg);
    f.retest = retest;
    json_t *j = replay_fault_json(&f, c->o->side);
    if (j && json_array_append_new(r->faults_jsonl, j) == 0)
        r->fault_lines++;
}

static bool selected(const golden_soak_opts *o, const char *id)
{
    return replay_case_selected(o->n_globs, o->globs, id);
}

/* A failed request: reset every lane, run it alone again and compare with its reference. */
static int retest(soak_ctx *c, const golden_replay_case *k, const char *ref)
{
    golden_error e;
    golden_error_clear(&e);
    char hex[1][65];
    bool failed[1];
    golden_error errs[1];
    c->res->retests++;
    if (golden_backend_reset(c->o->backend, -1, &e) ||
        round_of(c, k, 1, false, hex, failed, errs, &e) || failed[0] || strcmp(hex[0], ref) != 0)
        return REPLAY_RETEST_FAILED;
    c->res->retests_passed++;
    return REPLAY_RETEST_PASSED;
}

/* A case's hash as measured here on this host (gethostname) and lane (the row's chip: the
 * backend ABI names no device, a lane is where the backend serves a request). */
static int soak_hash_row(soak_ctx *c, const char *case_id, int lane, const char *hex)
{
    char host[256] = "";
    if (gethostname(host, sizeof host - 1) != 0 || !host[0])
        snprintf(host, sizeof host, "localhost");
    host[sizeof host - 1] = 0;
    json_t *row = json_pack("{s:s, s:s, s:i, s:s}", "case_id", case_id, "host", host, "chip", lane,
                            "sha256", hex);
    return row && json_array_append_new(c->res->hashes, row) == 0 ? 0 : -1;
}

/* One soak round of case k: n requests, each checked. The case's first round (first) gives
 * its hash rows of lanes 1..n-1 (lane 0's is the clean run). */
static int soak_round(soak_ctx *c, const golden_replay_case *k, const char *ref, int64_t round,
                      bool first, golden_error *err)
{
    int n = c->o->concurrency;
    char hex[64][65];
    bool failed[64];
    golden_error errs[64];
    if (round_of(c, k, n, true, hex, failed, errs, err))
        return GOLDEN_ERR;
    double t = (double)(replay_now_ns() - c->t0) / 1e9;
    bool any_failed = false;
    for (int L = 0; L < n; L++) {
        c->res->requests++;
        char msg[1024];
        if (failed[L]) {
            any_failed = true;
            c->res->faults++;
            snprintf(msg, sizeof msg, "request on lane %d of %d in flight, %.3f s into the soak: "
                     "%.300s%s%.500s", L, n, t, errs[L].where, errs[L].where[0] ? ": " : "",
                     errs[L].what);
            add_fault(c, k, replay_backend_fault_kind(c->o->backend, &errs[L]), round, L, msg,
                      retest(c, k, ref));
        } else if (strcmp(hex[L], ref) != 0) {
            c->res->mismatches++;
            snprintf(msg, sizeof msg, "output mismatch on lane %d of %d in flight, %.3f s into "
                     "the soak: sha256 %s, the clean run gave %s", L, n, t, hex[L], ref);
            add_fault(c, k, "crc_mismatch", round, L, msg, REPLAY_RETEST_NOT_RUN);
        }
        if (first && L > 0 && !failed[L] && soak_hash_row(c, k->case_id, L, hex[L]))
            return golden_fail_what(err, GOLDEN_ENOMEM, "soak", "out of memory");
    }
    golden_error e;
    if (any_failed && golden_backend_reset(c->o->backend, -1, &e))
        return golden_fail_what(err, GOLDEN_EIO, "soak", "reset after a fault failed: %s", e.what);
    return 0;
}

static int soak_cases(soak_ctx *c, golden_replay_case *cases, size_t n, golden_error *err)
{
    const golden_soak_opts *o = c->o;
    size_t *sel = calloc(n ? n : 1, sizeof *sel), ns = 0;
    char (*ref)[65] = calloc(n ? n : 1, sizeof *ref);
    int rc = sel && ref ? 0 : golden_fail_what(err, GOLDEN_ENOMEM, "soak", "out of memory");
    for (size_t i = 0; rc == 0 && i < n; i++) {
        if (cases[i].rejection || !selected(o, cases[i].case_id))
            continue;
        /* the clean reference: alone, lane 0, every lane empty, no delay */
        bool failed[1];
        golden_error errs[1];
        if (golden_backend_reset(o->backend, -1, err) ||
            round_of(c, &cases[i], 1, false, &ref[ns], failed, errs, err))
            rc = GOLDEN_ERR;
        else if (failed[0])
            rc = golden_fail_what(err, errs[0].code, cases[i].case_id,
                                  "the clean reference run failed: %s", errs[0].what);
        else if (soak_hash_row(c, cases[i].case_id, 0, ref[ns]))
            rc = golden_fail_what(err, GOLDEN_ENOMEM, "soak", "out of memory");
        sel[ns++] = i;
    }
    c->res->cases = ns;
    if (rc == 0 && ns == 0)
        rc = golden_fail_what(err, GOLDEN_EINVAL, o->manifest, "no case to soak (every case is "
                              "a rejection case or none matches --cases)");
    c->t0 = replay_now_ns();
    for (int64_t round = 0; rc == 0; round++) {
        double t = (double)(replay_now_ns() - c->t0) / 1e9;
        if (t >= o->duration)
            break;
        if (o->stop && *o->stop) {
            c->res->interrupted = true;
            break;
        }
        rc = soak_round(c, &cases[sel[round % (int64_t)ns]], ref[round % (int64_t)ns], round,
                        round < (int64_t)ns, err);
    }
    c->res->duration_s = (double)(replay_now_ns() - c->t0) / 1e9;
    free(sel);
    free(ref);
    return rc;
}

int golden_soak_run(const golden_soak_opts *o, golden_soak_result *res, golden_error *err)
{
    memset(res, 0, sizeof *res);
    if (o->version != 1 && o->version != 2)
        return golden_fail_what(err, GOLDEN_EINVAL, "soak", "options of an unknown version %u",
                                o->version);
    const char *graph = o->version >= 2 ? o->graph : NULL;
    if (o->version >= 2 && o->experiment_id && !o->experiment_id[0])
        return golden_fail_what(err, GOLDEN_EINVAL, "soak", "an empty experiment id");
    if (!o->side || (strcmp(o->side, "baseline") != 0 && strcmp(o->side, "candidate") != 0))
        return golden_fail_what(err, GOLDEN_EINVAL, "--side", "must be baseline or candidate");
    if (!(o->duration > 0) || o->jitter_max_us < 0 || o->concurrency < 1 || o->concurrency > 64)
        return golden_fail_what(err, GOLDEN_EINVAL, "soak", "duration must be > 0, jitter >= 0, "
                                "concurrency 1..64");
    const golden_backend_info *in = golden_backend_get_info(o->backend);
    if (o->concurrency > in->num_lanes)
        return golden_fail_what(err, GOLDEN_EINVAL, "--concurrency", "%d requests in flight need "
                                "%d lanes, the backend has %d", o->concurrency, o->concurrency,
                                in->num_lanes);
    /* what was soaked, measured: the manifest file read and the graph file given */
    if (golden_sha256_file(o->manifest, res->manifest_sha256, err) ||
        (graph && golden_sha256_file(graph, res->graph_sha256, err)))
        return GOLDEN_ERR;
    golden_replay_case *cases = NULL;
    size_t n = 0;
    if (replay_manifest_load_vocab(o->manifest, in->vocab_size, &cases, &n, err))
        return GOLDEN_ERR;
    soak_ctx c = {o, res, in, malloc((size_t)in->vocab_size * 4),
                  malloc((size_t)in->vocab_size * 4), o->seed, 0};
    res->faults_jsonl = json_array();
    res->hashes = json_array();
    int rc = c.row && c.f32 && res->faults_jsonl && res->hashes
                 ? soak_cases(&c, cases, n, err)
                 : golden_fail_what(err, GOLDEN_ENOMEM, "soak", "out of memory");
    free(c.row);
    free(c.f32);
    golden_replay_cases_free(cases, n);
    if (rc)
        golden_soak_result_free(res);
    return rc;
}

json_t *golden_soak_json(const golden_soak_opts *o, const golden_soak_result *r)
{
    json_t *j = json_pack("{s:s, s:s, s:s, s:I, s:i, s:f, s:f, s:I, s:I, s:I, s:I, s:I, s:I, s:I,"
                          " s:f, s:b}",
                          "schema", GOLDEN_SCHEMA_SOAK_RESULT, "side", o->side, "backend",
                          golden_backend_name(o->backend), "seed", (json_int_t)o->seed,
                          "concurrency", o->concurrency, "duration_s_requested", o->duration,
                          "duration_s", r->duration_s, "cases", (json_int_t)r->cases,
                          "requests", (json_int_t)r->requests, "mismatches",
                          (json_int_t)r->mismatches, "faults", (json_int_t)r->faults, "retests",
                          (json_int_t)r->retests, "retests_passed", (json_int_t)r->retests_passed,
                          "fault_lines", (json_int_t)r->fault_lines, "jitter_max_us",
                          o->jitter_max_us, "interrupted", r->interrupted);
    const char *id = o->version >= 2 ? o->experiment_id : NULL;
    if (j && ((id && json_object_set_new(j, "experiment_id", json_string(id))) ||
              (r->manifest_sha256[0] &&
               json_object_set_new(j, "manifest_sha256", json_string(r->manifest_sha256))) ||
              (r->graph_sha256[0] &&
               json_object_set_new(j, "graph_sha256", json_string(r->graph_sha256))) ||
              (r->hashes && json_object_set(j, "hashes", r->hashes)))) {
        json_decref(j);
        return NULL;
    }
    return j;
}

void golden_soak_result_free(golden_soak_result *r)
{
    json_decref(r->faults_jsonl);
    r->faults_jsonl = NULL;
    json_decref(r->hashes);
    r->hashes = NULL;
}

int golden_soak_faults_write(const golden_soak_result *r, const char *path, bool force,
                             golden_error *err)
{
    golden_outfile *out = NULL;
    if (golden_outfile_open(path, force, &out, err))
        return GOLDEN_ERR;
    FILE *f = golden_outfile_stream(out);
    bool bad = false;
    for (size_t i = 0; !bad && i < json_array_size(r->faults_jsonl); i++) {
        char *line = json_dumps(json_array_get(r->faults_jsonl, i),
                                JSON_COMPACT | JSON_PRESERVE_ORDER);
        bad = !line || fprintf(f, "%s\n", line) < 0;
        free(line);
    }
    if (bad) {
        golden_outfile_abort(out);
        return golden_fail_what(err, GOLDEN_EIO, path, "cannot write the faults");
    }
    return golden_outfile_commit(out, err);
}
