/* npu-replay soak (golden/soak.h). Each round takes the next selected case and runs N requests
 * of it at once on lanes 0..N-1, the calls round robin in a seeded random lane order, each call
 * after a seeded random delay. A request's output (its greedy tokens and every step's logits
 * as the backend gave them) is hashed and held against the hash of the case's reference: the
 * first clean run, alone on lane 0 with every other lane empty and no delay. A difference is a
 * calculet-fault/v1 line (kind crc_mismatch) naming the request, lane, time and both hashes; a
 * failed call is one too (the kind from the backend's code), followed by a reset of every lane
 * and a solo retest of the request against its reference. Memory is bounded whatever the
 * duration: counters, one state per lane, at most GOLDEN_SOAK_MAX_FAULT_LINES lines kept. */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "golden/doc.h"
#include "golden/hash.h"
#include "golden/jsonout.h"
#include "golden/outfile.h"
#include "golden/parse.h"
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
    double before_s;     /* seconds soaked before a resume */
    uint64_t cut_ns;     /* the --duration end (replay_now_ns) during the rounds, 0 = none */
    int stop_call;       /* GOLDEN_SOAK_STOP_CALL_* of the round a stop or the end dropped */
    size_t req_cancelled;
} soak_ctx;

static uint64_t rnd(soak_ctx *c)
{
    uint64_t z = (c->rng += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* SIGINT/SIGTERM: the tool's flag (a call under way is cancelled or its host killed) */
static bool interrupted(const soak_ctx *c)
{
    return c->o->stop && *c->o->stop;
}

/* A stop, or the --duration end reached during a round (it cuts the round as a stop does, the
 * backend host doing the same at the same time: replay_backend_set_cut). */
static bool stopped(const soak_ctx *c)
{
    return interrupted(c) || (c->cut_ns && replay_now_ns() >= c->cut_ns);
}

static const char *stop_call_name(int v)
{
    return v == GOLDEN_SOAK_STOP_CALL_CANCELLED ? "cancelled"
           : v == GOLDEN_SOAK_STOP_CALL_KILLED  ? "killed"
                                                : "none";
}

/* soak_round: the stop came during the round (not a fault: the round is dropped) */
#define SOAK_STOPPED 3

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
    for (int left = n; rc == 0 && left > 0 && !stopped(c);) {
        for (int i = n - 1; delays && i > 0; i--) { /* a fresh interleaving each pass */
            int j = (int)(rnd(c) % (uint64_t)(i + 1)), t = order[i];
            order[i] = order[j];
            order[j] = t;
        }
        for (int x = 0; x < n && !stopped(c); x++) {
            int L = order[x];
            if (q[L].done || q[L].failed)
                continue;
            if (delays)
                jitter(c);
            if (stopped(c)) /* in the delay: no call after a stop */
                break;
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
    if (lane >= 0)
        snprintf(f.request_id, sizeof f.request_id, "%s/soak/%s/%lld/lane%d", c->o->side,
                 k->case_id, (long long)round, lane);
    else /* the call cut by a stop (its lanes are in the message) */
        snprintf(f.request_id, sizeof f.request_id, "%s/soak/%s/%lld/stop", c->o->side,
                 k->case_id, (long long)round);
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
    /* Every round starts on lanes that hold nothing. A lane keeps the last round's sequence
     * until its own first call resets it, so a lane that crosses into another (the test
     * plug-in's cross=1, a real device's stale cache) would see what the round before left
     * there, which a resumed soak's fresh host never held: with this reset a round's results
     * depend on the round alone, and a resume runs its rounds as an uninterrupted soak does
     * (red team rtsoak, tests/e2e/npu-replay-soak-cancel-redteam.sh). */
    golden_error e0;
    if (golden_backend_reset(c->o->backend, -1, &e0))
        return stopped(c) ? SOAK_STOPPED
                          : golden_fail_what(err, GOLDEN_EIO, "soak",
                                             "reset of every lane before round %lld failed: %s",
                                             (long long)round, e0.what);
    if (round_of(c, k, n, true, hex, failed, errs, err))
        return GOLDEN_ERR;
    if (stopped(c)) /* a call the stop cut short failed for it, not for the backend */
        return SOAK_STOPPED;
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
            int rt = retest(c, k, ref);
            if (stopped(c))
                return SOAK_STOPPED;
            add_fault(c, k, replay_backend_fault_kind(c->o->backend, &errs[L]), round, L, msg, rt);
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
        return stopped(c) ? SOAK_STOPPED : golden_fail_what(err, GOLDEN_EIO, "soak",
                                                            "reset after a fault failed: %s",
                                                            e.what);
    return 0;
}

/* ---- the checkpoint (options version 3) ---- */

#define SOAK_CKPT_FORMAT "npu-replay-soak-checkpoint/1"

static double elapsed(const soak_ctx *c)
{
    return c->before_s + (double)(replay_now_ns() - c->t0) / 1e9;
}

static int str_cmp(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The backend's options (options version 4) sorted: the same set in any order is the same
 * backend; NULL when out of memory. */
static json_t *backend_opts_json(const golden_soak_opts *o)
{
    size_t n = o->version >= 4 ? o->n_backend_opts : 0;
    const char **v = malloc((n ? n : 1) * sizeof *v);
    json_t *a = json_array();
    if (!v || !a) {
        free(v);
        json_decref(a);
        return NULL;
    }
    for (size_t i = 0; i < n; i++)
        v[i] = o->backend_opts[i] ? o->backend_opts[i] : "";
    qsort(v, n, sizeof *v, str_cmp);
    for (size_t i = 0; a && i < n; i++)
        if (json_array_append_new(a, json_string(v[i]))) {
            json_decref(a);
            a = NULL;
        }
    free(v);
    return a;
}

/* Write where the soak is: the next round, the generator, the counts, what it saw. */
static int ckpt_write(soak_ctx *c, const golden_replay_case *cases, const size_t *sel, size_t ns,
                      char (*ref)[65], int64_t round, bool done, golden_error *err)
{
    const golden_soak_opts *o = c->o;
    golden_soak_result *r = c->res;
    json_t *ids = json_array(), *refs = json_array(), *bo = backend_opts_json(o);
    for (size_t i = 0; ids && refs && i < ns; i++)
        if (json_array_append_new(ids, json_string(cases[sel[i]].case_id)) ||
            json_array_append_new(refs, json_string(ref[i])))
            break;
    char rng[24]; /* decimal in a string: JSON integers stop at 2^63 */
    snprintf(rng, sizeof rng, "%llu", (unsigned long long)c->rng);
    json_t *j = ids && refs && bo ? json_pack(
        "{s:s, s:s, s:s, s:s, s:s, s:o, s:I, s:i, s:f, s:o, s:o, s:I, s:s, s:f, s:b, s:I, s:I,"
        " s:I, s:I, s:I, s:I, s:O, s:O, s:I, s:s}",
        "format", SOAK_CKPT_FORMAT, "manifest", o->manifest, "manifest_sha256",
        r->manifest_sha256, "side", o->side, "backend", golden_backend_name(o->backend),
        "backend_options", bo, "seed",
        (json_int_t)o->seed, "concurrency", o->concurrency, "jitter_max_us", o->jitter_max_us,
        "cases", ids, "references", refs, "next_round", (json_int_t)round, "rng", rng,
        "elapsed_s", elapsed(c), "done", done, "requests", (json_int_t)r->requests, "mismatches",
        (json_int_t)r->mismatches, "faults", (json_int_t)r->faults, "retests",
        (json_int_t)r->retests, "retests_passed", (json_int_t)r->retests_passed, "fault_lines",
        (json_int_t)r->fault_lines, "fault_list", r->faults_jsonl, "hashes", r->hashes,
        "requests_cancelled", (json_int_t)c->req_cancelled, "stop_call",
        stop_call_name(c->stop_call)) : NULL;
    if (!j) {
        json_decref(ids);
        json_decref(refs);
        json_decref(bo);
        return golden_fail_what(err, GOLDEN_ENOMEM, "soak", "out of memory for the checkpoint");
    }
    int rc = golden_json_write(o->checkpoint, j, true, err);
    json_decref(j);
    return rc;
}

static int ckpt_bad(const char *path, const char *what, golden_error *err)
{
    return golden_fail_what(err, GOLDEN_EINVAL, path, "cannot resume: %s", what);
}

static int64_t ckpt_int(const json_t *j, const char *key, bool *bad)
{
    const json_t *v = json_object_get(j, key);
    if (!json_is_integer(v) || json_integer_value(v) < 0)
        *bad = true;
    return json_is_integer(v) ? (int64_t)json_integer_value(v) : 0;
}

/* The checkpoint's word for word check against these options and the selection. */
static int ckpt_match(const soak_ctx *c, const json_t *j, const golden_replay_case *cases,
                      const size_t *sel, size_t ns, golden_error *err)
{
    const golden_soak_opts *o = c->o;
    const char *path = o->checkpoint;
    const char *fmt = json_string_value(json_object_get(j, "format"));
    if (!fmt || strcmp(fmt, SOAK_CKPT_FORMAT) != 0)
        return ckpt_bad(path, "not a " SOAK_CKPT_FORMAT " file", err);
    const char *keys[] = {"manifest_sha256", "side", "backend"};
    const char *want[] = {c->res->manifest_sha256, o->side, golden_backend_name(o->backend)};
    for (int i = 0; i < 3; i++) {
        const char *v = json_string_value(json_object_get(j, keys[i]));
        if (!v || strcmp(v, want[i]) != 0)
            return golden_fail_what(err, GOLDEN_EINVAL, path, "cannot resume: its %s is %s, this "
                                    "soak's %s", keys[i], v ? v : "missing", want[i]);
    }
    json_t *bo = backend_opts_json(o);
    bool same_opts = bo && json_equal(bo, json_object_get(j, "backend_options"));
    json_decref(bo);
    if (!same_opts) /* a planted fault or a dtype the first part did not have */
        return ckpt_bad(path, "other --backend-opt options than this soak's (or none recorded)",
                        err);
    bool bad = false;
    if ((uint64_t)ckpt_int(j, "seed", &bad) != o->seed ||
        ckpt_int(j, "concurrency", &bad) != o->concurrency || bad ||
        json_number_value(json_object_get(j, "jitter_max_us")) != o->jitter_max_us)
        return ckpt_bad(path, "another seed, concurrency or jitter than this soak's", err);
    const json_t *ids = json_object_get(j, "cases"), *refs = json_object_get(j, "references");
    if (json_array_size(ids) != ns || json_array_size(refs) != ns)
        return ckpt_bad(path, "another selection of cases than this soak's", err);
    for (size_t i = 0; i < ns; i++) {
        const char *id = json_string_value(json_array_get(ids, i));
        const char *h = json_string_value(json_array_get(refs, i));
        if (!id || strcmp(id, cases[sel[i]].case_id) != 0 || !h || strlen(h) != 64)
            return ckpt_bad(path, "another selection of cases than this soak's", err);
    }
    return 0;
}

/* Resume: the references, counts, generator, next round and time from the checkpoint. */
static int ckpt_load(soak_ctx *c, const golden_replay_case *cases, const size_t *sel, size_t ns,
                     char (*ref)[65], int64_t *round, golden_error *err)
{
    golden_doc *d = NULL;
    if (golden_doc_load_file(c->o->checkpoint, &d, err))
        return GOLDEN_ERR;
    const json_t *j = golden_doc_root(d);
    int rc = ckpt_match(c, j, cases, sel, ns, err);
    golden_soak_result *r = c->res;
    bool bad = false;
    const char *rng = json_string_value(json_object_get(j, "rng"));
    json_t *fl = json_object_get(j, "fault_list"), *hs = json_object_get(j, "hashes");
    double el = json_number_value(json_object_get(j, "elapsed_s"));
    if (rc == 0) {
        *round = ckpt_int(j, "next_round", &bad);
        r->requests = (size_t)ckpt_int(j, "requests", &bad);
        r->mismatches = (size_t)ckpt_int(j, "mismatches", &bad);
        r->faults = (size_t)ckpt_int(j, "faults", &bad);
        r->retests = (size_t)ckpt_int(j, "retests", &bad);
        r->retests_passed = (size_t)ckpt_int(j, "retests_passed", &bad);
        r->fault_lines = (size_t)ckpt_int(j, "fault_lines", &bad);
        uint64_t v = 0;
        if (!rng || golden_parse_uint(rng, 0, UINT64_MAX, &v) != GOLDEN_PARSE_OK)
            bad = true;
        /* the stop that ended the part before (absent from checkpoints written before them) */
        const json_t *sc = json_object_get(j, "stop_call");
        const char *scs = json_string_value(sc);
        if (json_object_get(j, "requests_cancelled"))
            c->req_cancelled = (size_t)ckpt_int(j, "requests_cancelled", &bad);
        if (sc && !(scs && (strcmp(scs, "none") == 0 || strcmp(scs, "cancelled") == 0 ||
                            strcmp(scs, "killed") == 0)))
            bad = true;
        c->stop_call = !scs || strcmp(scs, "none") == 0 ? GOLDEN_SOAK_STOP_CALL_NONE
                       : strcmp(scs, "cancelled") == 0 ? GOLDEN_SOAK_STOP_CALL_CANCELLED
                                                       : GOLDEN_SOAK_STOP_CALL_KILLED;
        c->rng = v;
        if (bad || !json_is_array(fl) || json_array_size(fl) != r->fault_lines ||
            !json_is_array(hs) || !(el >= 0) || r->retests_passed > r->retests)
            rc = ckpt_bad(c->o->checkpoint, "its counts, generator or lists are malformed", err);
    }
    if (rc == 0) {
        for (size_t i = 0; i < ns; i++)
            snprintf(ref[i], 65, "%s", json_string_value(json_array_get(
                                           json_object_get(j, "references"), i)));
        json_decref(r->faults_jsonl);
        json_decref(r->hashes);
        r->faults_jsonl = json_deep_copy(fl);
        r->hashes = json_deep_copy(hs);
        c->before_s = el;
        r->resumed = true;
        if (!r->faults_jsonl || !r->hashes)
            rc = golden_fail_what(err, GOLDEN_ENOMEM, "soak", "out of memory");
    }
    golden_doc_free(d);
    return rc;
}

/* The clean reference of every selected case: alone, lane 0, every lane empty, no delay. */
static int soak_references(soak_ctx *c, golden_replay_case *cases, size_t n, size_t *sel,
                           size_t *ns_out, char (*ref)[65], bool run, golden_error *err)
{
    const golden_soak_opts *o = c->o;
    size_t ns = 0;
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < n; i++) {
        if (cases[i].rejection || !selected(o, cases[i].case_id))
            continue;
        bool failed[1] = {false};
        golden_error errs[1];
        if (!run)
            ; /* resumed: the checkpoint has them */
        else if (golden_backend_reset(o->backend, -1, err) ||
                 round_of(c, &cases[i], 1, false, &ref[ns], failed, errs, err))
            rc = stopped(c) ? golden_fail_what(err, GOLDEN_EIO, "soak", "interrupted") : GOLDEN_ERR;
        else if (stopped(c)) /* before the first round: nothing to keep, nothing written */
            rc = golden_fail_what(err, GOLDEN_EIO, "soak", "interrupted");
        else if (failed[0])
            rc = golden_fail_what(err, errs[0].code, cases[i].case_id,
                                  "the clean reference run failed: %s", errs[0].what);
        else if (soak_hash_row(c, cases[i].case_id, 0, ref[ns]))
            rc = golden_fail_what(err, GOLDEN_ENOMEM, "soak", "out of memory");
        sel[ns++] = i;
    }
    *ns_out = ns;
    return rc;
}

/* What a round changes, to drop a round a stop cut short: it runs again on --resume, with the
 * same generator, as if it never started. */
typedef struct {
    size_t requests, mismatches, faults, retests, retests_passed, fault_lines;
    uint64_t rng;
    size_t n_lines, n_hashes;
} soak_mark;

static void mark_take(const soak_ctx *c, soak_mark *m)
{
    const golden_soak_result *r = c->res; /* fields only: an older caller's result is shorter */
    m->requests = r->requests;
    m->mismatches = r->mismatches;
    m->faults = r->faults;
    m->retests = r->retests;
    m->retests_passed = r->retests_passed;
    m->fault_lines = r->fault_lines;
    m->rng = c->rng;
    m->n_lines = json_array_size(c->res->faults_jsonl);
    m->n_hashes = json_array_size(c->res->hashes);
}

static void mark_restore(soak_ctx *c, const soak_mark *m)
{
    golden_soak_result *r = c->res;
    r->requests = m->requests;
    r->mismatches = m->mismatches;
    r->faults = m->faults;
    r->retests = m->retests;
    r->retests_passed = m->retests_passed;
    r->fault_lines = m->fault_lines;
    c->rng = m->rng;
    while (json_array_size(r->faults_jsonl) > m->n_lines)
        json_array_remove(r->faults_jsonl, json_array_size(r->faults_jsonl) - 1);
    while (json_array_size(r->hashes) > m->n_hashes)
        json_array_remove(r->hashes, json_array_size(r->hashes) - 1);
}

static int soak_cases(soak_ctx *c, golden_replay_case *cases, size_t n, golden_error *err)
{
    const golden_soak_opts *o = c->o;
    size_t *sel = calloc(n ? n : 1, sizeof *sel), ns = 0;
    char (*ref)[65] = calloc(n ? n : 1, sizeof *ref);
    const char *ck = o->version >= 3 ? o->checkpoint : NULL;
    bool resume = ck && o->resume;
    int64_t max_rounds = o->version >= 3 ? o->max_rounds : 0, round = 0;
    int rc = sel && ref ? 0 : golden_fail_what(err, GOLDEN_ENOMEM, "soak", "out of memory");
    if (rc == 0)
        rc = soak_references(c, cases, n, sel, &ns, ref, !resume, err);
    c->res->cases = ns;
    if (rc == 0 && ns == 0)
        rc = golden_fail_what(err, GOLDEN_EINVAL, o->manifest, "no case to soak (every case is "
                              "a rejection case or none matches --cases)");
    if (rc == 0 && resume)
        rc = ckpt_load(c, cases, sel, ns, ref, &round, err);
    c->t0 = replay_now_ns();
    uint64_t last_ck = c->t0;
    /* the --duration end cuts the round under way (the backend host's call too) */
    double left_s = o->duration - c->before_s;
    c->cut_ns = c->t0 + (uint64_t)(left_s > 0 ? left_s * 1e9 : 0.0) + 1; /* never 0 */
    if (rc == 0)
        replay_backend_set_cut(o->backend, c->cut_ns);
    for (; rc == 0; round++) {
        if (elapsed(c) >= o->duration || (max_rounds > 0 && round >= max_rounds))
            break;
        if (interrupted(c)) { /* between rounds: no call was under way */
            c->res->interrupted = true;
            c->stop_call = GOLDEN_SOAK_STOP_CALL_NONE;
            c->req_cancelled = 0;
            break;
        }
        c->stop_call = GOLDEN_SOAK_STOP_CALL_NONE; /* this part's stop, not the one before */
        c->req_cancelled = 0;
        soak_mark m;
        mark_take(c, &m);
        rc = soak_round(c, &cases[sel[round % (int64_t)ns]], ref[round % (int64_t)ns], round,
                        round < (int64_t)ns, err);
        if (rc == SOAK_STOPPED || (rc == 0 && interrupted(c))) {
            /* the stop (or the duration's end) cut the round: the call under way was cancelled
             * (its host lives on to its close) or its host killed, so the round cannot end: it
             * is dropped whole and the checkpoint says to run it again (a resume of a soak whose
             * duration ended runs nothing) */
            mark_restore(c, &m);
            c->res->interrupted = interrupted(c);
            size_t lanes = 0;
            int sc = replay_backend_stop_call(o->backend, &lanes);
            c->stop_call = sc == REPLAY_STOP_CALL_CANCELLED ? GOLDEN_SOAK_STOP_CALL_CANCELLED
                           : sc == REPLAY_STOP_CALL_KILLED  ? GOLDEN_SOAK_STOP_CALL_KILLED
                                                            : GOLDEN_SOAK_STOP_CALL_NONE;
            c->req_cancelled = lanes;
            const char *why = replay_backend_stop_why(o->backend);
            if (why && o->version >= 6) { /* a broken cancel is the backend's fault, not a stop */
                snprintf(c->res->stop_violation, sizeof c->res->stop_violation, "%s", why);
                c->res->faults++; /* and its line in the faults file, as every fault has */
                add_fault(c, &cases[sel[round % (int64_t)ns]], replay_fault_kind(why), round, -1,
                          why, REPLAY_RETEST_NOT_RUN);
            }
            rc = 0;
            break;
        }
        uint64_t now = replay_now_ns();
        if (rc == 0 && ck && (double)(now - last_ck) / 1e9 >= o->checkpoint_every) {
            rc = ckpt_write(c, cases, sel, ns, ref, round + 1, false, err);
            last_ck = now;
        }
        if (rc == 0 && o->version >= 3 && o->progress)
            o->progress(o->progress_ctx, elapsed(c), o->duration, round + 1, c->res->requests,
                        c->res->mismatches, c->res->faults);
    }
    replay_backend_set_cut(o->backend, 0);
    c->cut_ns = 0;
    if (o->version >= 3)
        c->res->rounds = round;
    if (o->version >= 5) {
        c->res->requests_cancelled = c->req_cancelled;
        c->res->stop_call = c->stop_call;
    }
    if (rc == 0 && ck) /* where it stopped: a resume after the end writes the result at once */
        rc = ckpt_write(c, cases, sel, ns, ref, round, !c->res->interrupted, err);
    c->res->duration_s = elapsed(c);
    free(sel);
    free(ref);
    return rc;
}

int golden_soak_run(const golden_soak_opts *o, golden_soak_result *res, golden_error *err)
{
    /* an older caller's result ends before rounds: never written past */
    memset(res, 0, o->version >= 6   ? sizeof *res
                   : o->version >= 5 ? offsetof(golden_soak_result, stop_violation)
                   : o->version >= 3 ? offsetof(golden_soak_result, requests_cancelled)
                                     : offsetof(golden_soak_result, rounds));
    if (o->version < 1 || o->version > 6)
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
    const char *ck = o->version >= 3 ? o->checkpoint : NULL;
    if (o->version >= 3 && (!(o->checkpoint_every >= 0) || o->max_rounds < 0 ||
                            (o->resume && !ck)))
        return golden_fail_what(err, GOLDEN_EINVAL, "soak", "checkpoint_every and max_rounds "
                                "must be >= 0, and resume needs a checkpoint");
    if (ck && !o->resume && golden_outfile_check(ck, o->force, err))
        return GOLDEN_ERR; /* a soak's checkpoint is never replaced by accident */
    if (ck && o->resume && access(ck, R_OK) != 0)
        return golden_fail_what(err, GOLDEN_EINVAL, ck, "cannot resume: no checkpoint to read");
    /* what was soaked, measured: the manifest file read and the graph file given */
    if (golden_sha256_file(o->manifest, res->manifest_sha256, err) ||
        (graph && golden_sha256_file(graph, res->graph_sha256, err)))
        return GOLDEN_ERR;
    golden_replay_case *cases = NULL;
    size_t n = 0;
    if (replay_manifest_load_vocab(o->manifest, in->vocab_size, &cases, &n, err))
        return GOLDEN_ERR;
    soak_ctx c = {o, res, in, malloc((size_t)in->vocab_size * 4),
                  malloc((size_t)in->vocab_size * 4), o->seed, 0, 0, 0,
                  GOLDEN_SOAK_STOP_CALL_NONE, 0};
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
              (r->hashes && json_object_set(j, "hashes", r->hashes)) ||
              (o->version >= 5 &&
               (json_object_set_new(j, "requests_cancelled",
                                    json_integer((json_int_t)r->requests_cancelled)) ||
                json_object_set_new(j, "stop_call", json_string(stop_call_name(r->stop_call))))) ||
              (o->version >= 6 && r->stop_violation[0] &&
               json_object_set_new(j, "stop_violation", json_string(r->stop_violation))))) {
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
