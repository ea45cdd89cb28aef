/* npu-replay run: every case of a manifest through a backend, greedy decoding, goldens of the
 * first measured run (contracts section 7) and every request's stage timings (section 7). */
#include <fnmatch.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "golden/replay_run.h"
#include "golden/report.h"
#include "golden/store.h"
#include "replay/faults_priv.h"
#include "replay/host_priv.h"
#include "replay/run_priv.h"

uint64_t replay_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* One captured tap: rows appended over the calls of a case. */
typedef struct {
    char name[96];
    int layer, dtype;
    int64_t rows, cols;
    unsigned char *data;
    size_t cap;
} tap_buf;

typedef struct {
    tap_buf *v;
    size_t n, cap;
} tap_set;

typedef struct {
    const golden_replay_run_opts *o;
    const golden_backend_info *info;
    tap_set main_taps; /* the requests of a concurrency-1 case */
    tap_set *ts;       /* where taps go now (NULL: the call's request keeps none) */
    replay_request *req;   /* the request whose backend marks are being recorded, or NULL */
    bool batch_marks;      /* a step_batch: a stage's first start and last end are kept */
    bool tap_failed;
    const char *fault_kind; /* set when a request failed by the backend's doing (a fault) */
    bool has_fault;
    replay_fault fault;     /* the fault that ended the run, for stability/faults.jsonl */
    golden_replay_run_result *res;
    const golden_replay_case *k; /* the case being run (top-k: its context) */
    float *tk_val;          /* [topk] */
    int32_t *tk_idx, *pen, *cnt; /* [topk], the penalised ids and counts [n_ids + output] */
} run_state;

static bool tap_wanted(const char *spec, const char *name)
{
    if (!spec || strcmp(spec, "all") == 0)
        return true;
    if (strcmp(spec, "none") == 0)
        return false;
    char buf[1024];
    snprintf(buf, sizeof buf, "%s", spec);
    for (char *save = NULL, *p = strtok_r(buf, ",", &save); p; p = strtok_r(NULL, ",", &save))
        if (fnmatch(p, name, 0) == 0)
            return true;
    return false;
}

static int on_tap(void *ctx, const char *name, int layer, int dtype, int64_t rows, int64_t cols,
                  const void *data)
{
    run_state *s = ctx;
    tap_set *ts = s->ts;
    if (!ts || !tap_wanted(s->o->taps, name))
        return 0;
    if ((dtype != GOLDEN_BK_F32 && dtype != GOLDEN_BK_I32) || rows < 0 || cols < 1)
        return s->tap_failed = true, 1;
    tap_buf *t = NULL;
    for (size_t i = 0; i < ts->n; i++)
        if (strcmp(ts->v[i].name, name) == 0)
            t = &ts->v[i];
    if (!t) {
        if (ts->n == ts->cap) {
            size_t nc = ts->cap ? 2 * ts->cap : 64;
            tap_buf *nt = realloc(ts->v, nc * sizeof *nt);
            if (!nt)
                return s->tap_failed = true, 1;
            ts->v = nt;
            ts->cap = nc;
        }
        t = &ts->v[ts->n++];
        memset(t, 0, sizeof *t);
        snprintf(t->name, sizeof t->name, "%s", name);
        t->layer = layer;
        t->dtype = dtype;
        t->cols = cols;
    }
    if (t->cols != cols || t->dtype != dtype)
        return s->tap_failed = true, 1;
    size_t need = (size_t)((t->rows + rows) * cols) * 4;
    if (need > t->cap) {
        size_t nc = t->cap ? t->cap : 4096;
        while (nc < need)
            nc *= 2;
        unsigned char *nd = realloc(t->data, nc);
        if (!nd)
            return s->tap_failed = true, 1;
        t->data = nd;
        t->cap = nc;
    }
    memcpy(t->data + (size_t)(t->rows * cols) * 4, data, (size_t)(rows * cols) * 4);
    t->rows += rows;
    return 0;
}

static void on_mark(void *ctx, int stage, int is_end, uint64_t ns)
{
    run_state *s = ctx;
    if (s->req && stage >= 0 && stage < GOLDEN_BK_STAGE_COUNT) {
        uint64_t *at = &s->req->stage[REPLAY_H2D + stage][is_end ? 1 : 0];
        if (!s->batch_marks || is_end || *at == 0)
            *at = ns;
    }
}

/* First maximal logit; NaN never wins. */
static int64_t greedy(const float *row, int n)
{
    int64_t best = 0;
    float bv = row[0];
    for (int i = 1; i < n; i++)
        if (row[i] > bv || (bv != bv && row[i] == row[i])) {
            bv = row[i];
            best = i;
        }
    return best;
}

/* What one request leaves behind for the golden (the first measured run only). */
typedef struct {
    float *logits;   /* [output, vocab] */
    int64_t *tokens; /* [output] */
    void *raw_row;   /* one row as the backend gives it */
} case_out;

/* A backend call failed: a fault of the kind its message names. GOLDEN_ERR. */
static int backend_failed(run_state *s, const golden_error *err)
{
    s->fault_kind = replay_backend_fault_kind(s->o->backend, err);
    return GOLDEN_ERR;
}

/* The top-k output mode at step i of a request (after the timed stages): the backend's k
 * largest logits, which must agree with the row's greedy choice, and whether they cover the
 * sampling settings with the penalised ids of the context. A finding is counted; an error
 * (the call failed, settings out of range) ends the run. */
static int topk_step(run_state *s, golden_backend *b, int lane, const case_out *co, int64_t i,
                     int64_t tok, const float *row, golden_error *err)
{
    const golden_replay_run_opts *o = s->o;
    const golden_replay_case *k = s->k;
    int K = o->topk;
    if (golden_backend_topk(b, lane, K, s->tk_val, s->tk_idx, err))
        return backend_failed(s, err);
    golden_sampling g = GOLDEN_SAMPLING_INIT;
    golden_sampling smp = o->sampling ? *o->sampling : g;
    /* the context before step i: the ids, then the tokens of steps 0 .. i-1 */
    int64_t len = (int64_t)k->n_ids + i, from = 0;
    if (o->repeat_last_n > 0 && len > o->repeat_last_n)
        from = len - o->repeat_last_n;
    size_t np = 0;
    for (int64_t j = from; j < len; j++) {
        int32_t t = j < (int64_t)k->n_ids ? k->ids[j] : (int32_t)co->tokens[j - (int64_t)k->n_ids];
        size_t q = 0;
        while (q < np && s->pen[q] != t)
            q++;
        if (q == np)
            s->pen[np] = t, s->cnt[np++] = 0;
        s->cnt[q]++;
    }
    smp.penalised = s->pen;
    smp.counts = s->cnt;
    smp.n_penalised = np;
    char why[512];
    int c = golden_topk_covers(&smp, s->info->vocab_size, s->tk_val, s->tk_idx, K, why, sizeof why);
    if (c < 0)
        return golden_fail_what(err, GOLDEN_EINVAL, "--sampling", "%s", why);
    if (c == 1 && (s->tk_idx[0] != tok || s->tk_val[0] != row[tok])) {
        snprintf(why, sizeof why, "the top-k's first entry is token %d (%.9g), the full row's "
                 "largest is %lld (%.9g)", (int)s->tk_idx[0], s->tk_val[0], (long long)tok,
                 row[tok]);
        c = 0;
    }
    s->res->topk_steps++;
    if (c == 0 && s->res->topk_findings++ == 0)
        snprintf(s->res->topk_first, sizeof s->res->topk_first, "%s step %lld (lane %d): %s",
                 k->case_id, (long long)i, lane, why);
    return 0;
}

/* logits -> f32 row -> greedy -> token appended: the last four stages of one step. */
static int finish_step(run_state *s, golden_backend *b, int lane, case_out *co, int64_t i,
                       replay_request *rq, golden_error *err)
{
    const golden_backend_info *in = s->info;
    uint64_t *st = rq ? rq->stage[0] : NULL;
    float *row = co->logits + i * in->vocab_size;
    s->req = rq; /* the backend marks d2h */
    int rc = golden_backend_logits(b, lane, 0, in->vocab_size, co->raw_row, err);
    s->req = NULL;
    if (rc)
        return backend_failed(s, err);
    uint64_t t = replay_now_ns();
    if (in->logits_dtype == GOLDEN_BK_BF16)
        golden_logits_bf16_to_f32(co->raw_row, 0, (size_t)in->vocab_size, row);
    else
        memcpy(row, co->raw_row, (size_t)in->vocab_size * 4);
    uint64_t t2 = replay_now_ns();
    long bad = replay_logits_bad(row, in->vocab_size);
    if (bad >= 0) { /* the harness's own check: the call succeeded, its output is unusable */
        s->fault_kind = "nan_output";
        if (bad == in->vocab_size)
            return golden_fail_what(err, GOLDEN_ECORRUPT, "logits", "step %lld: every entry is -inf",
                                    (long long)i);
        return golden_fail_what(err, GOLDEN_ECORRUPT, "logits", "step %lld: entry %ld is %s",
                                (long long)i, bad, isnan(row[bad]) ? "NaN" : "+Inf");
    }
    uint64_t t2b = replay_now_ns(); /* each stage has its own readings, none derived */
    int64_t tok = greedy(row, in->vocab_size);
    uint64_t t3 = replay_now_ns();
    uint64_t t3b = replay_now_ns();
    co->tokens[i] = tok;
    uint64_t t4 = replay_now_ns();
    if (st) {
        rq->stage[REPLAY_LOGITS_CONVERSION][0] = t;
        rq->stage[REPLAY_LOGITS_CONVERSION][1] = t2;
        rq->stage[REPLAY_SAMPLING][0] = t2b;
        rq->stage[REPLAY_SAMPLING][1] = t3;
        rq->stage[REPLAY_STREAM_FLUSH][0] = t3b;
        rq->stage[REPLAY_STREAM_FLUSH][1] = t4;
    }
    if (s->o->version >= 4 && s->o->topk > 0)
        return topk_step(s, b, lane, co, i, tok, row, err);
    return 0;
}

/* The first call of a request on its lane, for one lane (request) and for several (flight_start):
 * reset, prefill, the first token. Its client queue started at rq's stage[CLIENT_QUEUE][0] and
 * ends now; the service queue is the lane's reset. *steps_start: where the decode steps start. */
static int first_call(run_state *s, golden_backend *b, const golden_replay_case *k, int lane,
                      case_out *co, replay_request *rq, uint64_t *steps_start, golden_error *err)
{
    rq->stage[REPLAY_CLIENT_QUEUE][1] = replay_now_ns();
    rq->stage[REPLAY_SERVICE_QUEUE][0] = replay_now_ns();
    if (golden_backend_reset(b, lane, err))
        return backend_failed(s, err);
    rq->stage[REPLAY_SERVICE_QUEUE][1] = replay_now_ns();
    uint64_t t0 = replay_now_ns();
    int32_t *ids = malloc(k->n_ids * sizeof *ids);
    if (!ids)
        return golden_fail_what(err, GOLDEN_ENOMEM, k->case_id, "out of memory");
    memcpy(ids, k->ids, k->n_ids * sizeof *ids);
    uint64_t t1 = replay_now_ns();
    if (!k->decode) {
        rq->stage[REPLAY_INPUT_PREPARE][0] = t0;
        rq->stage[REPLAY_INPUT_PREPARE][1] = t1;
        s->req = rq;
    }
    int rc = golden_backend_prefill(b, lane, 0, ids, k->n_ids, err);
    free(ids);
    s->req = NULL;
    if (rc)
        return backend_failed(s, err);
    if (finish_step(s, b, lane, co, 0, k->decode ? NULL : rq, err))
        return GOLDEN_ERR;
    *steps_start = replay_now_ns();
    if (!k->decode) {
        rq->has_ttft = true;
        rq->ttft_ms = (double)(rq->stage[REPLAY_STREAM_FLUSH][1] -
                               rq->stage[REPLAY_CLIENT_QUEUE][0]) / 1e6;
        *steps_start = rq->stage[REPLAY_STREAM_FLUSH][1];
    }
    return 0;
}

/* One request of one case: prefill (timed for a prefill case), then greedy decode steps. */
static int request(run_state *s, golden_backend *b, const golden_replay_case *k, case_out *co,
                   replay_request *rq, golden_error *err)
{
    rq->stage[REPLAY_CLIENT_QUEUE][0] = replay_now_ns();
    uint64_t steps_start;
    int rc = first_call(s, b, k, 0, co, rq, &steps_start, err);
    if (rc)
        return rc;
    for (int64_t i = 1; i < k->output; i++) {
        bool timed = k->decode && i == 1;
        if (timed) {
            /* the decode request starts when its first step is asked for; each stage gets its
             * own readings (the lane is already in place, so the queues are short) */
            steps_start = rq->stage[REPLAY_CLIENT_QUEUE][0] = replay_now_ns();
            rq->stage[REPLAY_CLIENT_QUEUE][1] = replay_now_ns();
            rq->stage[REPLAY_SERVICE_QUEUE][0] = replay_now_ns();
            rq->stage[REPLAY_SERVICE_QUEUE][1] = replay_now_ns();
            rq->stage[REPLAY_INPUT_PREPARE][0] = replay_now_ns();
        }
        int32_t tok = (int32_t)co->tokens[i - 1];
        if (timed) {
            rq->stage[REPLAY_INPUT_PREPARE][1] = replay_now_ns();
            s->req = rq;
        }
        /* at the harness's own count: a version 2 backend says where it wrote, and that is checked */
        rc = golden_backend_decode_at(b, 0, (int64_t)k->n_ids + i - 1, tok, err);
        s->req = NULL;
        if (rc)
            return backend_failed(s, err);
        if (finish_step(s, b, 0, co, i, timed ? rq : NULL, err))
            return GOLDEN_ERR;
    }
    if (k->output >= 2) {
        rq->has_tpot = true;
        uint64_t end = replay_now_ns();
        rq->tpot_ms = (double)(end - steps_start) / 1e6 / (double)(k->output - 1);
    }
    return 0;
}

static int put(golden_writer *w, const char *name, golden_dtype dt, int rank, int64_t d0,
               int64_t d1, int layer, const char *family, const void *data, golden_error *err)
{
    golden_tensor_info ti;
    memset(&ti, 0, sizeof ti);
    ti.name = (char *)name;
    ti.dtype = dt;
    ti.rank = rank;
    ti.shape[0] = (uint64_t)d0;
    ti.shape[1] = (uint64_t)d1;
    ti.has_layer = layer >= 0;
    ti.layer = layer;
    ti.op_family = (char *)family;
    size_t bytes = (size_t)d0 * (rank == 2 ? (size_t)d1 : 1) * golden_dtype_size(dt);
    if (golden_writer_begin(w, &ti, err) || golden_writer_write(w, data, bytes, err) ||
        golden_writer_end(w, NULL, err))
        return GOLDEN_ERR;
    return 0;
}

static const char *tap_family(const char *name)
{
    if (strstr(name, "/router/"))
        return "router";
    if (strstr(name, "attn_out"))
        return "attention";
    if (strstr(name, "mlp_out"))
        return "moe";
    return "residual";
}

static int write_case(run_state *s, golden_writer *w, const golden_replay_case *k,
                      const case_out *co, golden_error *err)
{
    char name[512];
    int64_t *ids = malloc((k->n_ids ? k->n_ids : 1) * sizeof *ids);
    if (!ids)
        return golden_fail_what(err, GOLDEN_ENOMEM, k->case_id, "out of memory");
    for (size_t i = 0; i < k->n_ids; i++)
        ids[i] = k->ids[i];
    snprintf(name, sizeof name, "cases/%s/input_ids", k->case_id);
    int rc = put(w, name, GOLDEN_I64, 1, (int64_t)k->n_ids, 0, -1, NULL, ids, err);
    free(ids);
    snprintf(name, sizeof name, "cases/%s/tokens", k->case_id);
    if (rc || put(w, name, GOLDEN_I64, 1, k->output, 0, -1, "sampling", co->tokens, err))
        return GOLDEN_ERR;
    snprintf(name, sizeof name, "cases/%s/logits", k->case_id);
    if (put(w, name, GOLDEN_F32, 2, k->output, s->info->vocab_size, -1, "lm_head", co->logits, err))
        return GOLDEN_ERR;
    for (size_t i = 0; s->ts && i < s->ts->n; i++) {
        const tap_buf *t = &s->ts->v[i];
        snprintf(name, sizeof name, "cases/%s/%s", k->case_id, t->name);
        if (put(w, name, t->dtype == GOLDEN_BK_I32 ? GOLDEN_I32 : GOLDEN_F32, 2, t->rows, t->cols,
                t->layer, tap_family(t->name), t->data, err))
            return GOLDEN_ERR;
    }
    return 0;
}

bool replay_case_selected(size_t n_globs, const char *const *globs, const char *id)
{
    if (n_globs == 0)
        return true;
    for (size_t i = 0; i < n_globs; i++)
        if (fnmatch(globs[i], id, 0) == 0)
            return true;
    return false;
}

static bool case_selected(const golden_replay_run_opts *o, const char *id)
{
    return replay_case_selected(o->n_globs, o->globs, id);
}

static void taps_clear(tap_set *t)
{
    for (size_t i = 0; i < t->n; i++)
        free(t->v[i].data);
    t->n = 0;
}

static void taps_reset(run_state *s) { taps_clear(&s->main_taps); }

/* A request failed by the backend's doing: note the fault, reset every lane and submit the
 * same request again (no taps, no timings kept); the retest passes when it completes with
 * usable logits. Returns the note the run's error ends with. */
static const char *record_fault(run_state *s, const golden_replay_case *k, int r,
                                const golden_error *inner, case_out *co)
{
    replay_fault *f = &s->fault;
    replay_fault_begin(f);
    s->has_fault = true;
    f->kind = s->fault_kind;
    snprintf(f->case_id, sizeof f->case_id, "%s", k->case_id);
    snprintf(f->request_id, sizeof f->request_id, "%s/%s/%d", s->o->side, k->case_id, r);
    snprintf(f->message, sizeof f->message, "%.300s%s%.700s", inner->where,
             inner->where[0] ? ": " : "", inner->what);
    golden_backend *b = s->o->backend;
    golden_backend_hooks h = {s, on_tap, on_mark, 0};
    replay_request scratch;
    memset(&scratch, 0, sizeof scratch);
    golden_error e;
    golden_error_clear(&e);
    bool ok = golden_backend_set_hooks(b, &h, &e) == 0 && golden_backend_reset(b, -1, &e) == 0 &&
              request(s, b, k, co, &scratch, &e) == 0;
    f->retest = ok ? REPLAY_RETEST_PASSED : REPLAY_RETEST_FAILED;
    return ok ? " (the retest after reset passed)" : " (the retest after reset failed)";
}

/* Every run of one case: warm-ups, measured runs, raw lines; the golden from the first measured. */
static int run_case(run_state *s, golden_writer *w, FILE *raw, const golden_replay_case *k,
                    golden_replay_run_result *res, golden_error *err)
{
    const golden_replay_run_opts *o = s->o;
    golden_backend *b = o->backend;
    int warm = o->warmup < 0 ? 10 : o->warmup;
    int runs = o->runs >= 0 ? o->runs : (k->past + k->prompt + k->output <= 128 ? 100 : 30);
    if (runs < 1)
        runs = 1; /* the golden comes from a measured run */
    case_out co = {NULL, NULL, NULL};
    /* the case's logits are kept whole for its golden: within the budget, never an overflow */
    uint64_t bytes;
    if (__builtin_mul_overflow((uint64_t)k->output, (uint64_t)s->info->vocab_size * 4, &bytes) ||
        bytes > REPLAY_MAX_LOGITS_BYTES)
        return golden_fail_what(err, GOLDEN_EINVAL, k->case_id,
                                "%lld output tokens x %d logits are beyond the memory budget of "
                                "%llu bytes", (long long)k->output, s->info->vocab_size,
                                (unsigned long long)REPLAY_MAX_LOGITS_BYTES);
    co.logits = malloc((size_t)k->output * (size_t)s->info->vocab_size * 4);
    co.tokens = malloc((size_t)k->output * 8);
    co.raw_row = malloc((size_t)s->info->vocab_size * 4);
    int rc = 0;
    if (!co.logits || !co.tokens || !co.raw_row)
        rc = golden_fail_what(err, GOLDEN_ENOMEM, k->case_id, "out of memory for the logits");
    for (int r = 0; rc == 0 && r < warm + runs; r++) {
        if (o->stop && *o->stop) {
            rc = golden_fail_what(err, GOLDEN_EIO, k->case_id, "interrupted");
            break;
        }
        bool first = r == warm;
        golden_backend_hooks h = {s, on_tap, on_mark, first && !(o->taps && strcmp(o->taps, "none") == 0)};
        taps_reset(s);
        replay_request rq;
        memset(&rq, 0, sizeof rq);
        rq.side = o->side;
        rq.case_id = k->case_id;
        rq.run = r;
        rq.warmup = r < warm;
        rq.output_tokens = k->output;
        s->fault_kind = NULL;
        if ((golden_backend_set_hooks(b, &h, err) ? backend_failed(s, err) : 0) ||
            request(s, b, k, &co, &rq, err)) {
            golden_error inner = *err;
            /* an interrupted run is not a fault of the backend: nothing to retest */
            bool stopped = o->stop && *o->stop;
            const char *retested = s->fault_kind && !stopped ? record_fault(s, k, r, &inner, &co) : "";
            rc = golden_fail_what(err, inner.code, k->case_id, "request %s/%s/%d: %s%s%s%s", o->side,
                                  k->case_id, r, inner.where, inner.where[0] ? ": " : "", inner.what,
                                  retested);
            break;
        }
        if (s->tap_failed) {
            rc = golden_fail_what(err, GOLDEN_EINVAL, k->case_id, "a tap of the backend was malformed or out of memory");
            break;
        }
        res->requests++;
        if (replay_raw_write(raw, &rq, err) || (first && write_case(s, w, k, &co, err)))
            rc = GOLDEN_ERR;
        if (o->progress)
            o->progress(o->progress_ctx, (size_t)r + 1, (size_t)(warm + runs), k->case_id);
    }
    taps_reset(s);
    free(co.logits);
    free(co.tokens);
    free(co.raw_row);
    return rc;
}

/* ---- concurrency > 1: several requests of a case in flight, each on its own lane ---- */

/* One request in flight. */
typedef struct {
    bool busy;
    int r;              /* its run number (warm-ups first) */
    int64_t step;       /* the next output step; 0 = not started */
    uint64_t ready;     /* when its last call ended (it waits from then for its turn) */
    uint64_t steps_start;
    case_out co;
    replay_request rq;
    tap_set taps;
} flight;

/* The first call of a request on its lane: reset, prefill, the first token. The client queue
 * is the real wait from its issue to its turn; the service queue is the lane's reset. */
static int flight_start(run_state *s, golden_backend *b, const golden_replay_case *k, flight *f,
                        int lane, golden_error *err)
{
    int rc = first_call(s, b, k, lane, &f->co, &f->rq, &f->steps_start, err);
    if (rc)
        return rc;
    f->step = 1;
    return 0;
}

/* The start of a request, and when it ended (a decode case's first timed step waits, its
 * client queue, from then until its turn). */
static int flight_advance(run_state *s, golden_backend *b, const golden_replay_case *k, flight *f,
                          int lane, golden_error *err)
{
    int rc = flight_start(s, b, k, f, lane, err);
    f->ready = replay_now_ns();
    return rc;
}

/* One decode step at the harness's own count. */
static int flight_step(run_state *s, golden_backend *b, const golden_replay_case *k, flight *f,
                       int lane, golden_error *err)
{
    replay_request *rq = &f->rq;
    int64_t i = f->step;
    bool timed = k->decode && i == 1;
    if (timed) {
        rq->stage[REPLAY_CLIENT_QUEUE][0] = f->ready;
        f->steps_start = f->ready;
        rq->stage[REPLAY_CLIENT_QUEUE][1] = replay_now_ns();
        rq->stage[REPLAY_SERVICE_QUEUE][0] = replay_now_ns();
        rq->stage[REPLAY_SERVICE_QUEUE][1] = replay_now_ns();
        rq->stage[REPLAY_INPUT_PREPARE][0] = replay_now_ns();
    }
    int32_t tok = (int32_t)f->co.tokens[i - 1];
    if (timed) {
        rq->stage[REPLAY_INPUT_PREPARE][1] = replay_now_ns();
        s->req = rq;
    }
    int rc = golden_backend_decode_at(b, lane, (int64_t)k->n_ids + i - 1, tok, err);
    s->req = NULL;
    if (rc)
        return backend_failed(s, err);
    if (finish_step(s, b, lane, &f->co, i, timed ? rq : NULL, err))
        return GOLDEN_ERR;
    f->step++;
    f->ready = replay_now_ns();
    if (f->step == k->output && k->output >= 2) {
        rq->has_tpot = true;
        rq->tpot_ms = (double)(f->ready - f->steps_start) / 1e6 / (double)(k->output - 1);
    }
    return 0;
}

static void flights_free(flight *fl, int n)
{
    for (int i = 0; fl && i < n; i++) {
        free(fl[i].co.logits);
        free(fl[i].co.tokens);
        free(fl[i].co.raw_row);
        taps_clear(&fl[i].taps);
        free(fl[i].taps.v);
    }
    free(fl);
}

/* A request completed: its raw line, and the golden when it is the first measured run. */
static int flight_done(run_state *s, golden_writer *w, FILE *raw, const golden_replay_case *k,
                       flight *f, int warm, golden_replay_run_result *res, golden_error *err)
{
    f->busy = false;
    if (s->tap_failed)
        return golden_fail_what(err, GOLDEN_EINVAL, k->case_id,
                                "a tap of the backend was malformed or out of memory");
    res->requests++;
    s->ts = &f->taps;
    int rc = replay_raw_write(raw, &f->rq, err) || (f->r == warm && write_case(s, w, k, &f->co, err));
    s->ts = NULL;
    return rc ? GOLDEN_ERR : 0;
}

/* Issue run r on a free lane: its client queue starts at its arrival (now in the closed loop,
 * the scheduled time in the open loop, which may have passed while the lanes were busy). */
static void flight_issue(run_state *s, const golden_replay_case *k, flight *f, int r, int conc,
                         int warm, uint64_t arrival)
{
    const golden_replay_run_opts *o = s->o;
    f->busy = true;
    f->r = r;
    f->step = 0;
    taps_clear(&f->taps);
    memset(&f->rq, 0, sizeof f->rq);
    f->rq = (replay_request){.side = o->side, .case_id = k->case_id, .run = r,
                             .concurrency = conc, .warmup = r < warm, .output_tokens = k->output};
    f->rq.stage[REPLAY_CLIENT_QUEUE][0] = arrival;
}

/* ---- issue 33: a round of the lanes in flight as one step_batch ---- */

/* Before the batch, what first_call and flight_step do before their backend call: the queues,
 * the lane's reset (a first call), the input copy; the step for the batch. */
static int batch_prepare(run_state *s, golden_backend *b, const golden_replay_case *k, flight *f,
                         int lane, golden_backend_step *st, int32_t **ids, int32_t *tok,
                         golden_error *err)
{
    replay_request *rq = &f->rq;
    if (f->step == 0) {
        rq->stage[REPLAY_CLIENT_QUEUE][1] = replay_now_ns();
        rq->stage[REPLAY_SERVICE_QUEUE][0] = replay_now_ns();
        if (golden_backend_reset(b, lane, err))
            return backend_failed(s, err);
        rq->stage[REPLAY_SERVICE_QUEUE][1] = replay_now_ns();
        uint64_t t0 = replay_now_ns();
        *ids = malloc(k->n_ids * sizeof **ids);
        if (!*ids)
            return golden_fail_what(err, GOLDEN_ENOMEM, k->case_id, "out of memory");
        memcpy(*ids, k->ids, k->n_ids * sizeof **ids);
        uint64_t t1 = replay_now_ns();
        if (!k->decode) {
            rq->stage[REPLAY_INPUT_PREPARE][0] = t0;
            rq->stage[REPLAY_INPUT_PREPARE][1] = t1;
        }
        *st = (golden_backend_step){lane, GOLDEN_BK_STEP_PREFILL, 0, *ids, k->n_ids, 0, -1};
        return 0;
    }
    int64_t i = f->step;
    if (k->decode && i == 1) {
        rq->stage[REPLAY_CLIENT_QUEUE][0] = f->ready;
        f->steps_start = f->ready;
        rq->stage[REPLAY_CLIENT_QUEUE][1] = replay_now_ns();
        rq->stage[REPLAY_SERVICE_QUEUE][0] = replay_now_ns();
        rq->stage[REPLAY_SERVICE_QUEUE][1] = replay_now_ns();
        rq->stage[REPLAY_INPUT_PREPARE][0] = replay_now_ns();
    }
    *tok = (int32_t)f->co.tokens[i - 1];
    if (k->decode && i == 1)
        rq->stage[REPLAY_INPUT_PREPARE][1] = replay_now_ns();
    *st = (golden_backend_step){lane, GOLDEN_BK_STEP_DECODE, (int64_t)k->n_ids + i - 1, tok, 1, 0,
                                -1};
    return 0;
}

/* After the batch, what first_call and flight_step do after their backend call: the logits,
 * the token, the request's times. The batch's h2d and npu_wait marks (in *bm) are each timed
 * request's. */
static int batch_finish(run_state *s, golden_backend *b, const golden_replay_case *k, flight *f,
                        int lane, const replay_request *bm, golden_error *err)
{
    replay_request *rq = &f->rq;
    int64_t i = f->step;
    bool timed = k->decode ? i == 1 : i == 0;
    if (timed)
        for (int g = REPLAY_H2D; g <= REPLAY_NPU_WAIT; g++)
            memcpy(rq->stage[g], bm->stage[g], sizeof rq->stage[g]);
    if (finish_step(s, b, lane, &f->co, i, timed ? rq : NULL, err))
        return GOLDEN_ERR;
    if (i == 0) {
        f->steps_start = replay_now_ns();
        if (!k->decode) {
            rq->has_ttft = true;
            rq->ttft_ms = (double)(rq->stage[REPLAY_STREAM_FLUSH][1] -
                                   rq->stage[REPLAY_CLIENT_QUEUE][0]) / 1e6;
            f->steps_start = rq->stage[REPLAY_STREAM_FLUSH][1];
        }
        f->step = 1;
        f->ready = replay_now_ns();
        return 0;
    }
    f->step++;
    f->ready = replay_now_ns();
    if (f->step == k->output && k->output >= 2) {
        rq->has_tpot = true;
        rq->tpot_ms = (double)(f->ready - f->steps_start) / 1e6 / (double)(k->output - 1);
    }
    return 0;
}

/* One round of every lane in flight through one step_batch; *bad = the lane whose request a
 * failure belongs to (the first failed step's, else the first lane of the round). */
static int batch_round(run_state *s, golden_backend *b, const golden_replay_case *k, flight *fl,
                       int conc, int *bad, golden_error *err)
{
    golden_backend_step *st = calloc((size_t)conc, sizeof *st);
    int32_t **ids = calloc((size_t)conc, sizeof *ids), *tok = calloc((size_t)conc, sizeof *tok);
    int *lane_of = calloc((size_t)conc, sizeof *lane_of);
    int rc = st && ids && tok && lane_of ? 0 : golden_fail_what(err, GOLDEN_ENOMEM, k->case_id,
                                                                "out of memory");
    size_t n = 0;
    *bad = -1;
    for (int L = 0; rc == 0 && L < conc; L++) {
        if (!fl[L].busy)
            continue;
        if (*bad < 0)
            *bad = L;
        s->fault_kind = NULL;
        if ((rc = batch_prepare(s, b, k, &fl[L], L, &st[n], &ids[n], &tok[n], err)) != 0)
            *bad = L;
        lane_of[n++] = L;
    }
    replay_request bm;
    memset(&bm, 0, sizeof bm);
    if (rc == 0 && n > 0) {
        s->req = &bm; /* the batch's marks: each stage from its first start to its last end */
        s->batch_marks = true;
        s->fault_kind = NULL;
        rc = golden_backend_step_batch(b, st, n, err);
        s->req = NULL;
        s->batch_marks = false;
        if (rc) {
            for (size_t j = n; j-- > 0;)
                if (st[j].status > 0)
                    *bad = lane_of[j]; /* the first failed step's lane */
            backend_failed(s, err);
        }
    }
    for (size_t j = 0; rc == 0 && j < n; j++) {
        s->fault_kind = NULL;
        if ((rc = batch_finish(s, b, k, &fl[lane_of[j]], lane_of[j], &bm, err)) != 0)
            *bad = lane_of[j];
    }
    for (size_t j = 0; ids && j < n; j++)
        free(ids[j]);
    free(ids);
    free(tok);
    free(st);
    free(lane_of);
    return rc;
}

/* The open loop with every lane idle: a real wait until the next arrival (or a stop). */
static void wait_arrival(const golden_replay_run_opts *o, uint64_t at)
{
    for (;;) {
        uint64_t now = replay_now_ns();
        if (now >= at || (o->stop && *o->stop))
            return;
        uint64_t d = at - now < 50000000u ? at - now : 50000000u; /* look at stop every 50 ms */
        struct timespec ts = {(time_t)(d / 1000000000u), (long)(d % 1000000000u)};
        nanosleep(&ts, NULL);
    }
}

/* Every run of one case with conc requests in flight (closed loop: a lane that finishes takes
 * the next request at once; open loop, arr != NULL: request r arrives at arr[r] and takes the
 * first free lane); the calls go out one at a time, round robin over the lanes. */
static int run_case_conc(run_state *s, golden_writer *w, FILE *raw, const golden_replay_case *k,
                         int conc, const uint64_t *arr, golden_replay_run_result *res,
                         golden_error *err)
{
    const golden_replay_run_opts *o = s->o;
    golden_backend *b = o->backend;
    int warm = o->warmup < 0 ? 10 : o->warmup;
    int runs = o->runs >= 0 ? o->runs : (k->past + k->prompt + k->output <= 128 ? 100 : 30);
    runs = runs < 1 ? 1 : runs;
    if (conc > s->info->num_lanes)
        return golden_fail_what(err, GOLDEN_EINVAL, k->case_id, "concurrency %d needs %d lanes, "
                                "the backend has %d", conc, conc, s->info->num_lanes);
    uint64_t bytes;
    if (__builtin_mul_overflow((uint64_t)k->output, (uint64_t)s->info->vocab_size * 4, &bytes) ||
        __builtin_mul_overflow(bytes, (uint64_t)conc, &bytes) || bytes > REPLAY_MAX_LOGITS_BYTES)
        return golden_fail_what(err, GOLDEN_EINVAL, k->case_id,
                                "%d requests of %lld output tokens x %d logits in flight are beyond "
                                "the memory budget of %llu bytes", conc, (long long)k->output,
                                s->info->vocab_size, (unsigned long long)REPLAY_MAX_LOGITS_BYTES);
    flight *fl = calloc((size_t)conc, sizeof *fl);
    int rc = fl ? 0 : golden_fail_what(err, GOLDEN_ENOMEM, k->case_id, "out of memory");
    for (int i = 0; rc == 0 && i < conc; i++) {
        fl[i].co.logits = malloc((size_t)k->output * (size_t)s->info->vocab_size * 4);
        fl[i].co.tokens = malloc((size_t)k->output * 8);
        fl[i].co.raw_row = malloc((size_t)s->info->vocab_size * 4);
        if (!fl[i].co.logits || !fl[i].co.tokens || !fl[i].co.raw_row)
            rc = golden_fail_what(err, GOLDEN_ENOMEM, k->case_id, "out of memory for the logits");
    }
    bool taps_none = o->taps && strcmp(o->taps, "none") == 0;
    /* issue 33: one step_batch per round when the backend has it (options version 5) */
    bool batch = o->version >= 5 && !o->batch_off && golden_backend_has_step_batch(b);
    int next = 0, done = 0, total = warm + runs, hooked = -1;
    while (rc == 0 && done < total) {
        if (o->stop && *o->stop) {
            rc = golden_fail_what(err, GOLDEN_EIO, k->case_id, "interrupted");
            break;
        }
        bool want = false, any = false;
        for (int L = 0; L < conc; L++)
            any |= fl[L].busy;
        if (arr && !any && next < total)
            wait_arrival(o, arr[next]);
        for (int L = 0; L < conc; L++) {
            flight *f = &fl[L];
            uint64_t now = replay_now_ns();
            if (!f->busy && next < total && (!arr || now >= arr[next])) { /* issued */
                flight_issue(s, k, f, next, conc, warm, arr ? arr[next] : now);
                next++;
            }
            want |= f->busy && f->r == warm && !taps_none; /* a golden run in flight */
        }
        s->fault_kind = NULL;
        if (hooked != want) {
            golden_backend_hooks h = {s, on_tap, on_mark, want};
            if (golden_backend_set_hooks(b, &h, err)) {
                backend_failed(s, err);
                golden_error inner = *err;
                rc = golden_fail_what(err, inner.code, k->case_id, "request %s/%s: set_hooks: %s",
                                      o->side, k->case_id, inner.what);
                break;
            }
            hooked = want;
        }
        int bad = -1;
        int bc = batch && !want ? batch_round(s, b, k, fl, conc, &bad, err) : 0;
        for (int L = 0; rc == 0 && L < conc; L++) {
            flight *f = &fl[L];
            if (!f->busy)
                continue;
            int c = 0;
            if (batch && !want) { /* done in the batch: its failure is lane bad's */
                c = L == bad ? bc : 0;
            } else {
                s->ts = f->r == warm ? &f->taps : NULL;
                s->fault_kind = NULL;
                c = f->step == 0 ? flight_advance(s, b, k, f, L, err)
                                 : flight_step(s, b, k, f, L, err);
                s->ts = NULL;
            }
            if (c) {
                golden_error inner = *err;
                bool stopped = o->stop && *o->stop;
                const char *retested = s->fault_kind && !stopped
                                           ? record_fault(s, k, f->r, &inner, &f->co) : "";
                rc = golden_fail_what(err, inner.code, k->case_id,
                                      "request %s/%s/%d (lane %d of %d in flight): %s%s%s%s",
                                      o->side, k->case_id, f->r, L, conc, inner.where,
                                      inner.where[0] ? ": " : "", inner.what, retested);
                break;
            }
            if (f->step == k->output) {
                rc = flight_done(s, w, raw, k, f, warm, res, err);
                done++;
                if (rc == 0 && o->progress)
                    o->progress(o->progress_ctx, (size_t)done, (size_t)total, k->case_id);
            }
        }
    }
    s->ts = &s->main_taps;
    flights_free(fl, conc);
    return rc;
}

/* The open loop of one case: its seeded schedule from now, then the lanes take the arrivals. */
static int run_case_open(run_state *s, golden_writer *w, FILE *raw, const golden_replay_case *k,
                         int conc, golden_replay_run_result *res, golden_error *err)
{
    const golden_replay_run_opts *o = s->o;
    int warm = o->warmup < 0 ? 10 : o->warmup;
    int runs = o->runs >= 0 ? o->runs : (k->past + k->prompt + k->output <= 128 ? 100 : 30);
    size_t total = (size_t)warm + (size_t)(runs < 1 ? 1 : runs);
    uint64_t *arr = malloc(total * sizeof *arr);
    if (!arr)
        return golden_fail_what(err, GOLDEN_ENOMEM, k->case_id, "out of memory");
    replay_arrivals(o->seed, k->case_id, o->qps, total, arr);
    uint64_t t0 = replay_now_ns();
    for (size_t r = 0; r < total; r++)
        arr[r] += t0;
    int rc = run_case_conc(s, w, raw, k, conc < 1 ? 1 : conc, arr, res, err);
    free(arr);
    return rc;
}

/* Submit one rejection case whole and expect the backend to refuse it. */
static int check_rejection(run_state *s, const golden_replay_case *cases, size_t n,
                           golden_replay_run_result *res, golden_error *err)
{
    for (size_t i = 0; i < n; i++) {
        const golden_replay_case *k = &cases[i];
        if (!k->rejection || !case_selected(s->o, k->case_id))
            continue;
        int64_t total = k->past + k->prompt + k->output;
        int32_t *ids = calloc((size_t)(total ? total : 1), sizeof *ids);
        if (!ids)
            return golden_fail_what(err, GOLDEN_ENOMEM, k->case_id, "out of memory");
        golden_error e, reset_err;
        golden_error_clear(&e);
        golden_error_clear(&reset_err);
        golden_backend_reset(s->o->backend, 0, &reset_err);
        int rc = golden_backend_prefill(s->o->backend, 0, 0, ids, (size_t)total, &e);
        free(ids);
        bool limit = rc != 0 && replay_refused_for_limit(s->o->backend, &e); /* before the reset */
        golden_backend_reset(s->o->backend, 0, &reset_err); /* never overwrites the refusal */
        res->rejection_checked = true;
        res->rejection_refused = limit;
        /* refused, but not as the contract says: say with what, so nobody reads "accepted" */
        snprintf(res->rejection_other, sizeof res->rejection_other, "%s",
                 rc != 0 && !res->rejection_refused ? e.what : "");
        snprintf(res->rejection_case, sizeof res->rejection_case, "%s", k->case_id);
        return 0;
    }
    return 0;
}

/* stability/faults.jsonl of a run that completed (no line) or that a fault ended (its line).
 * A completed run whose faults file cannot be written leaves no golden and raw file either. */
static int write_faults(run_state *s, const char *path, int rc, golden_error *err)
{
    golden_error e;
    golden_error_clear(&e);
    if (replay_faults_write(&s->fault, s->has_fault, s->o->side, path, s->o->force, &e) == 0)
        return rc;
    if (rc == 0) {
        unlink(s->o->golden);
        unlink(s->o->raw);
        *err = e;
        return GOLDEN_ERR;
    }
    golden_error inner = *err;
    return golden_fail_what(err, inner.code, inner.where, "%.700s (and %.100s: %.200s)", inner.what,
                            e.where, e.what);
}

/* The top-k buffers for case k: k values and indices, the context's penalised ids and counts. */
static int topk_alloc(run_state *s, const golden_replay_case *k, golden_error *err)
{
    size_t ctx = k->n_ids + (size_t)k->output + 1;
    if (!s->tk_val) {
        s->tk_val = malloc((size_t)s->o->topk * sizeof *s->tk_val);
        s->tk_idx = malloc((size_t)s->o->topk * sizeof *s->tk_idx);
    }
    free(s->pen);
    free(s->cnt);
    s->pen = malloc(ctx * sizeof *s->pen);
    s->cnt = malloc(ctx * sizeof *s->cnt);
    if (!s->tk_val || !s->tk_idx || !s->pen || !s->cnt)
        return golden_fail_what(err, GOLDEN_ENOMEM, k->case_id, "out of memory for the top-k");
    return 0;
}

int golden_replay_run(const golden_replay_run_opts *o, golden_replay_run_result *res,
                      golden_error *err)
{
    /* an older caller's result ends before the top-k fields: never written past */
    memset(res, 0, o->version >= 4 ? sizeof *res : offsetof(golden_replay_run_result, topk_steps));
    if (!o->side || (strcmp(o->side, "baseline") != 0 && strcmp(o->side, "candidate") != 0))
        return golden_fail_what(err, GOLDEN_EINVAL, "--side", "must be baseline or candidate");
    if (o->version < 1 || o->version > 5)
        return golden_fail_what(err, GOLDEN_EINVAL, "run", "options of an unknown version %u",
                                o->version);
    if (!o->backend)
        return golden_fail_what(err, GOLDEN_EINVAL, "run", "no backend");
    const char *faults = o->version >= 2 ? o->faults : NULL;
    bool open_loop = o->version >= 4 && o->qps != 0;
    if (open_loop && (!(o->qps > 0) || !isfinite(o->qps) ||
                      (o->arrivals && strcmp(o->arrivals, "poisson") != 0)))
        return golden_fail_what(err, GOLDEN_EINVAL, "run", "the open loop needs qps > 0 (finite) "
                                "and arrivals poisson");
    if (golden_outfile_check(o->golden, o->force, err) || golden_outfile_check(o->raw, o->force, err) ||
        (faults && golden_outfile_check(faults, o->force, err)))
        return GOLDEN_ERR;
    const golden_backend_info *bi = golden_backend_get_info(o->backend);
    int topk = o->version >= 4 ? o->topk : 0;
    if (topk != 0 && (topk < 1 || topk > GOLDEN_BK_MAX_TOPK || topk > bi->vocab_size))
        return golden_fail_what(err, GOLDEN_EINVAL, "--topk", "k %d is outside 1..%d", topk,
                                bi->vocab_size < GOLDEN_BK_MAX_TOPK ? bi->vocab_size
                                                                    : GOLDEN_BK_MAX_TOPK);
    if (topk && golden_backend_abi(o->backend) < 2)
        return golden_fail_what(err, GOLDEN_EUNSUPPORTED, "--topk", "the backend %s has ABI "
                                "version %u: the top-k output mode needs version 2",
                                golden_backend_name(o->backend), golden_backend_abi(o->backend));
    if (topk && o->sampling) { /* the settings checked once before anything runs */
        float v0 = 0;
        int32_t i0 = 0;
        char why[256];
        if (golden_topk_covers(o->sampling, 1, &v0, &i0, 1, why, sizeof why) < 0)
            return golden_fail_what(err, GOLDEN_EINVAL, "--sampling", "%s", why);
    }
    golden_replay_case *cases = NULL;
    size_t n = 0;
    if (replay_manifest_load_vocab(o->manifest, golden_backend_get_info(o->backend)->vocab_size,
                                   &cases, &n, err))
        return GOLDEN_ERR;
    run_state s;
    memset(&s, 0, sizeof s);
    s.o = o;
    s.ts = &s.main_taps;
    s.info = golden_backend_get_info(o->backend);
    s.res = res;
    golden_writer *w = NULL;
    golden_outfile *raw = NULL;
    golden_writer_opts wo = {.version = GOLDEN_WRITER_OPTS_VERSION,
                             .force = o->force, .gzip = 0,
                             .producer = o->producer ? o->producer : "npu-replay", .threads = 0};
    int rc = golden_writer_open(o->golden, &wo, &w, err);
    if (rc == 0)
        rc = golden_writer_meta(w, "side", o->side, err);
    if (rc == 0)
        rc = golden_writer_meta(w, "backend", golden_backend_name(o->backend), err);
    const char *unknown = replay_backend_config_unknown(o->backend);
    if (rc == 0 && unknown) /* the model's config.json keys the cpu reference does not know */
        rc = golden_writer_meta(w, "config_unknown_keys", unknown, err);
    if (rc == 0)
        rc = golden_outfile_open(o->raw, o->force, &raw, err);
    for (size_t i = 0; rc == 0 && i < n; i++) {
        if (!case_selected(o, cases[i].case_id))
            continue;
        if (cases[i].rejection) { /* never submitted (section 5.1) */
            res->skipped_rejections++;
            continue;
        }
        int conc = o->version >= 3 && o->concurrency > 0 ? o->concurrency : cases[i].concurrency;
        s.k = &cases[i];
        if (topk)
            rc = topk_alloc(&s, &cases[i], err);
        if (rc)
            break;
        if (open_loop)
            rc = run_case_open(&s, w, golden_outfile_stream(raw), &cases[i], conc, res, err);
        else
            rc = conc > 1 ? run_case_conc(&s, w, golden_outfile_stream(raw), &cases[i], conc,
                                          NULL, res, err)
                          : run_case(&s, w, golden_outfile_stream(raw), &cases[i], res, err);
        res->cases += rc == 0;
    }
    if (rc == 0 && o->check_rejection)
        rc = check_rejection(&s, cases, n, res, err);
    if (rc == 0 && o->n_globs > 0 && res->cases == 0 && res->skipped_rejections == 0)
        rc = golden_fail_what(err, GOLDEN_EINVAL, o->manifest, /* no empty golden as a result */
                              "no case matches --cases %s%s", o->globs[0],
                              o->n_globs > 1 ? " ..." : "");
    if (rc == 0)
        rc = golden_writer_commit(w, err);
    else
        golden_writer_abort(w);
    if (rc == 0) {
        rc = golden_outfile_commit(raw, err);
        if (rc != 0)
            unlink(o->golden); /* both files or neither */
    } else {
        golden_outfile_abort(raw);
    }
    if (faults && (rc == 0 || s.has_fault))
        rc = write_faults(&s, faults, rc, err);
    taps_clear(&s.main_taps);
    free(s.main_taps.v);
    free(s.tk_val);
    free(s.tk_idx);
    free(s.pen);
    free(s.cnt);
    golden_replay_cases_free(cases, n);
    return rc;
}

int golden_replay_load_fault(const golden_backend_load_opts *lo, const char *side,
                             const char *path, bool force, const golden_error *load_err,
                             golden_error *err)
{
    const char *kind = replay_fault_kind(load_err->what);
    if (!path || !side || (strcmp(side, "baseline") != 0 && strcmp(side, "candidate") != 0) ||
        (strcmp(kind, "crash") != 0 && strcmp(kind, "exit") != 0 && strcmp(kind, "hang") != 0 &&
         strcmp(kind, "signal") != 0))
        return 0;
    replay_fault f;
    replay_fault_begin(&f);
    f.kind = kind;
    snprintf(f.message, sizeof f.message, "%.300s%s%.700s", load_err->where,
             load_err->where[0] ? ": " : "", load_err->what);
    golden_backend *b = NULL;
    golden_error e;
    golden_error_clear(&e);
    f.retest = golden_backend_load(lo, &b, &e) == 0 ? REPLAY_RETEST_PASSED : REPLAY_RETEST_FAILED;
    golden_backend_close(b);
    return replay_faults_write(&f, 1, side, path, force, err);
}
