#!/bin/sh
# Red team: `npu-replay conform` against runtime faults nobody planted (issue 28).
# Outside view only: written from docs/conformance.md, docs/npu-replay.md (conform, backend host,
# faults), docs/npu-replay.1, issue 28 and handbook sections 5.1, 9, 10, 11, 15.
#
# The "vendor runtime" is shim.so (below): the built-in cpu reference (golden_cpu_backend(),
# linked in from $GOLDEN_BUILD/lib/libgolden.a: the .so has static TLS and cannot be dlopen'd)
# behind the plug-in ABI, forwarding every call; `--backend-opt fault=NAME` plants one fault,
# every other option goes to the cpu backend. Each fault is proven real first: `prove` runs a
# short call sequence (given next to the case) on fault=clean and on fault=NAME and the two
# traces (status, message, length(), a hash of every logits row and tap) must differ.
# Then `conform --budget 0 --seed 0 -j1` runs the whole suite (every check, so a fault caught
# by any check counts as caught); runs go 12 at a time in the background.
# A fault case passes when conform exits 1 and the check the docs make responsible says FAIL
# (NaN logits: exit 2, the documented nan_output "could not check"); a clean case when it exits 0
# with every check passing. The JSON report must be written whole in every case.
. "$GOLDEN_ROOT/tests/e2e/lib.sh"
NR="$GOLDEN_BIN/npu-replay"
INC="$GOLDEN_ROOT/libgolden/include"
LIBA="$GOLDEN_BUILD/lib/libgolden.a"
PAR=12

cat > shim.c <<'EOF_SHIM'
/* A vendor-style runtime for npu-replay conform's red team: it wraps the built-in cpu reference
 * (golden_cpu_backend(), linked in from libgolden.a) and forwards every call, except where the
 * `fault=NAME` option plants one realistic runtime fault. Every other option goes to the cpu
 * backend (dtype=, lanes=, ...). Faults are simulated through the ABI only: a KV slot that is
 * "written wrong" is the cpu backend fed another token at that position, a tap that is wrong is
 * the tap data changed on its way to the harness, bookkeeping faults are the shim's own. */
#define _GNU_SOURCE
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "golden/backend.h"
/* the cpu reference, linked in from libgolden.a (its .so has static TLS: not dlopen-able) */
const golden_backend_vtable *golden_cpu_backend(void);

#define MAXL 64
#define MAXP 4096

enum {
    F_CLEAN, F_MASK_TAPS_OFF_129, F_MASK_TAP_256, F_MASK_TAP_510, F_CHUNK_PREFILL_SHIFT,
    F_LANE_SHARE_64, F_DECODE_WC16, F_TRUNCATE_LANE0, F_TAIL_PAGE_128, F_RESET_LANE3_STALE,
    F_LENGTH_RESET_STALE, F_REFUSED_DECODE_LEN_BUMP, F_REJECT_MSG_KVFULL,
    F_REFUSED_PREFILL_DROPS_TAIL, F_ROUTER_DECODE_SWAP_128, F_ROUTER_DECODE_TIE_HIGH,
    F_DECODE_TOP16, F_NAN_LANE3_DECODE, F_STALE_D2H_50, F_PER_OPEN_OFFSET,
    F_PER_OPEN_OFFSET_LANE2, F_LANE_MOD4, F_INTERLEAVE_STALE, F_DECODE_LAST_TAPS_OFF,
    F_DECODE_LAST_REFUSED, F_LIMIT_LANE_OTHER, F_BF16_DECODE_LOWBIT, F_TOP128,
    F_PREFILL_OVER_TAIL_KEEPS, F_PREFILL1_AS_DECODE, F_COUNT
};
static const char *const fault_names[F_COUNT] = {
    "clean", "mask_taps_off_129", "mask_tap_256", "mask_tap_510", "chunk_prefill_shift",
    "lane_share_64", "decode_wc16", "truncate_lane0", "tail_page_128", "reset_lane3_stale",
    "length_reset_stale", "refused_decode_len_bump", "reject_msg_kvfull",
    "refused_prefill_drops_tail", "router_decode_swap_128", "router_decode_tie_high",
    "decode_top16", "nan_lane3_decode", "stale_d2h_50", "per_open_offset",
    "per_open_offset_lane2", "lane_mod4", "interleave_stale", "decode_last_taps_off",
    "decode_last_refused", "limit_lane_other", "bf16_decode_lowbit", "top128",
    "prefill_over_tail_keeps", "prefill1_as_decode"};

typedef struct {
    const golden_backend_vtable *in;
    void *is;
    int fault;
    golden_backend_hooks h;
    golden_backend_info info; /* as declared to the harness */
    int inner_lanes;
    int32_t sh[MAXL][MAXP]; /* each lane's tokens as the harness sent them */
    int64_t len[MAXL];      /* each lane's length as the harness should see it */
    int64_t off[MAXL];      /* inner position of the lane's logical position 0 */
    int64_t ghost[MAXL];    /* length() to report instead (-1 none) */
    int consec[MAXL];       /* decode steps since the lane's last prefill/truncate/reset */
    int lastop[MAXL];       /* 1 prefill, 2 decode */
    int32_t pend_tok[MAXL]; /* tail_page_128: the stale token of the slot at the cut */
    int64_t pend_pos[MAXL];
    int64_t tail_len[MAXL];  /* prefill_over_tail_keeps: the length the lane really has */
    int prev_lane;          /* lane of the previous prefill/decode */
    /* the call in progress, for the tap wrapper */
    int cur_kind, cur_lane;
    int64_t cur_pos;
    size_t cur_n;
    const int32_t *cur_toks;
    float per_open;
} shim;

static unsigned long logits_calls;
static unsigned char *prev_row;
static size_t prev_bytes;
static int prev_first = -1, prev_count = -1;

static int taps_on(const shim *s) { return s->h.tap && s->h.want_taps; }
static int ilane(const shim *s, int lane) { return s->fault == F_LANE_MOD4 && lane >= 0 ? lane % s->inner_lanes : lane; }

static int sh_open(const golden_backend_open_args *a, void **self, char *msg, size_t n)
{
    const golden_backend_vtable *(*entry)(void) = golden_cpu_backend;
    if (!entry)
        return snprintf(msg, n, "no cpu backend"), 1;
    shim *s = calloc(1, sizeof *s);
    if (!s)
        return snprintf(msg, n, "out of memory"), 1;
    s->in = entry();
    const char **keys = calloc(a->n_opts + 1, sizeof *keys), **vals = calloc(a->n_opts + 1, sizeof *vals);
    size_t k = 0;
    int lanes_given = 0;
    for (size_t i = 0; i < a->n_opts; i++) {
        if (strcmp(a->keys[i], "fault") == 0) {
            int f;
            for (f = 0; f < F_COUNT && strcmp(fault_names[f], a->values[i]) != 0; f++)
                ;
            if (f == F_COUNT) {
                snprintf(msg, n, "unknown fault %s", a->values[i]);
                free(keys), free(vals), free(s);
                return 1;
            }
            s->fault = f;
            continue;
        }
        if (strcmp(a->keys[i], "lanes") == 0)
            lanes_given = 1;
        keys[k] = a->keys[i], vals[k] = a->values[i], k++;
    }
    if (s->fault == F_LANE_MOD4 && !lanes_given)
        keys[k] = "lanes", vals[k] = "4", k++;
    golden_backend_open_args ia = *a;
    ia.n_opts = k, ia.keys = keys, ia.values = vals;
    int rc = s->in->open(&ia, &s->is, msg, n);
    free(keys), free(vals);
    if (rc) {
        free(s);
        return rc;
    }
    if (s->in->info(s->is, &s->info, msg, n)) {
        s->in->close(s->is);
        free(s);
        return 1;
    }
    s->inner_lanes = s->info.num_lanes;
    if (s->fault == F_LANE_MOD4)
        s->info.num_lanes = 2 * s->inner_lanes; /* declares 8 KV caches, has 4 */
    if (s->info.num_lanes > MAXL || s->info.context_limit >= MAXP) {
        s->in->close(s->is);
        free(s);
        return snprintf(msg, n, "shim: too many lanes or positions"), 1;
    }
    for (int i = 0; i < MAXL; i++)
        s->ghost[i] = -1, s->pend_pos[i] = -1;
    s->prev_lane = -1;
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    unsigned x = (unsigned)ts.tv_nsec ^ (unsigned)getpid() * 2654435761u;
    s->per_open = 0.125f + (float)(x % 1024u) / 4096.0f; /* [0.125, 0.375): its own each open */
    *self = s;
    return 0;
}

static void sh_close(void *self)
{
    shim *s = self;
    s->in->close(s->is);
    free(s);
}

static int sh_info(void *self, golden_backend_info *o, char *msg, size_t n)
{
    (void)msg, (void)n;
    *o = ((shim *)self)->info;
    return 0;
}

static int name_is(const char *name, const char *tail)
{
    size_t a = strlen(name), b = strlen(tail);
    return a >= b && strcmp(name + a - b, tail) == 0;
}

static int tapw(void *ctx, const char *name, int layer, int dtype, int64_t rows, int64_t cols,
                const void *data)
{
    shim *s = ctx;
    void *copy = NULL;
    const void *out = data;
    int last = s->info.num_layers - 1;
    /* causal leak in the last layer: row P of a prefill batch also reads token P+1 */
    int P = s->fault == F_MASK_TAP_256 ? 256 : s->fault == F_MASK_TAP_510 ? 510 : -1;
    if (P >= 0 && s->cur_kind == 1 && layer == last && dtype == GOLDEN_BK_F32 &&
        (name_is(name, "/attn_out") || name_is(name, "/hidden")) && s->cur_pos <= P &&
        s->cur_pos + (int64_t)s->cur_n > P + 1 && rows == (int64_t)s->cur_n) {
        copy = malloc((size_t)(rows * cols) * 4);
        memcpy(copy, data, (size_t)(rows * cols) * 4);
        float *r = (float *)copy + (P - s->cur_pos) * cols;
        int32_t next = s->cur_toks[P + 1 - s->cur_pos];
        for (int64_t c = 0; c < cols; c++)
            r[c] += 1e-3f * (float)(1 + next % 8);
        out = copy;
    }
    /* decode graph's top-k: ranks 0 and 1 swapped from position 128 on */
    if (s->fault == F_ROUTER_DECODE_SWAP_128 && s->cur_kind == 2 && s->cur_pos >= 128 && cols >= 2 &&
        (name_is(name, "/router/topk_ids") || name_is(name, "/router/topk_weights"))) {
        copy = malloc((size_t)(rows * cols) * 4);
        memcpy(copy, data, (size_t)(rows * cols) * 4);
        for (int64_t r = 0; r < rows; r++) {
            uint32_t *e = (uint32_t *)copy + r * cols, t = e[0];
            e[0] = e[1], e[1] = t;
        }
        out = copy;
    }
    /* decode graph's top-k: exact ties go to the higher expert index first */
    if (s->fault == F_ROUTER_DECODE_TIE_HIGH && s->cur_kind == 2 && name_is(name, "/router/topk_ids") &&
        dtype == GOLDEN_BK_I32) {
        copy = malloc((size_t)(rows * cols) * 4);
        memcpy(copy, data, (size_t)(rows * cols) * 4);
        for (int64_t r = 0; r < rows; r++) {
            int32_t *e = (int32_t *)copy + r * cols;
            /* the all-zero router input of a full tie: the reference takes 0..k-1 */
            int tie = 1;
            for (int64_t c = 0; c < cols; c++)
                if (e[c] != (int32_t)c)
                    tie = 0;
            if (tie)
                for (int64_t c = 0; c < cols; c++)
                    e[c] = s->info.num_experts - 1 - (int32_t)c;
        }
        out = copy;
    }
    int rc = s->h.tap(s->h.ctx, name, layer, dtype, rows, cols, out);
    free(copy);
    return rc;
}

static void markw(void *ctx, int stage, int is_end, uint64_t ns)
{
    shim *s = ctx;
    s->h.mark(s->h.ctx, stage, is_end, ns);
}

static int sh_hooks(void *self, const golden_backend_hooks *h, char *msg, size_t n)
{
    shim *s = self;
    s->h = *h;
    golden_backend_hooks ih = {s, h->tap ? tapw : NULL, h->mark ? markw : NULL, h->want_taps};
    return s->in->set_hooks(s->is, &ih, msg, n);
}

static int ok_lane(const shim *s, int lane) { return lane >= 0 && lane < s->info.num_lanes; }

/* the token that lands in the lane's slot p (the shim's view), -1 when unknown */
static int32_t slot_tok(const shim *s, int lane, int64_t p)
{
    return ok_lane(s, lane) && p >= 0 && p < s->len[lane] ? s->sh[lane][p] : -1;
}

static void faulty_tokens(shim *s, int lane, int64_t pos, int32_t *eff, size_t n, int kind)
{
    int V = s->info.vocab_size;
    int64_t L = s->info.context_limit;
    if (s->fault == F_MASK_TAPS_OFF_129 && kind == 1 && !taps_on(s) && pos <= 129 && pos + (int64_t)n > 130)
        eff[129 - pos] = (eff[129 - pos] + eff[130 - pos] + 1) % V;
    if (s->fault == F_CHUNK_PREFILL_SHIFT && kind == 1 && pos > 0 && n >= 8) {
        int32_t prev = slot_tok(s, lane, pos - 1);
        for (size_t i = n - 1; i > 0; i--)
            eff[i] = eff[i - 1];
        eff[0] = prev >= 0 ? prev : 0;
    }
    if (s->fault == F_LANE_SHARE_64 && lane == 3)
        for (size_t i = 0; i < n; i++) {
            int64_t p = pos + (int64_t)i;
            if (p >= 64 && s->len[2] > p)
                eff[i] = s->sh[2][p];
        }
    if (s->fault == F_DECODE_WC16 && kind == 2 && (s->consec[lane] + 1) % 16 == 0 && pos > 0)
        eff[0] = s->sh[lane][pos - 1];
    if (s->fault == F_TAIL_PAGE_128 && s->pend_pos[lane] == pos && s->pend_tok[lane] >= 0)
        eff[0] = s->pend_tok[lane];
    if (s->fault == F_INTERLEAVE_STALE && kind == 2 && s->prev_lane >= 0 && s->prev_lane != lane &&
        s->len[s->prev_lane] != s->len[lane] && s->len[s->prev_lane] >= 1 && pos >= 1) {
        int a = s->prev_lane;
        int64_t q = pos - 1 < s->len[a] - 1 ? pos - 1 : s->len[a] - 1;
        eff[0] = (eff[0] + s->sh[a][q] + 1) % V;
    }
    if (s->fault == F_DECODE_LAST_TAPS_OFF && kind == 2 && !taps_on(s) && pos == L - 1)
        eff[0] = (eff[0] + 1) % V;
}

static void after_write(shim *s, int lane, int64_t pos, const int32_t *t, size_t n, int kind)
{
    if (!ok_lane(s, lane))
        return;
    for (size_t i = 0; i < n && pos + (int64_t)i < MAXP; i++)
        s->sh[lane][pos + (int64_t)i] = t[i];
    s->len[lane] = pos + (int64_t)n;
    s->ghost[lane] = -1;
    s->consec[lane] = kind == 2 ? s->consec[lane] + 1 : 0;
    s->lastop[lane] = kind;
    s->pend_pos[lane] = -1;
    s->prev_lane = lane;
}

/* prefill_over_tail_keeps: the kept old tail becomes real on the lane's next write */
static int materialize_tail(shim *s, int lane, char *msg, size_t ml)
{
    if (s->tail_len[lane] <= s->len[lane]) {
        s->tail_len[lane] = 0;
        return 0;
    }
    golden_backend_hooks none = {0};
    s->in->set_hooks(s->is, &none, msg, ml);
    int64_t from = s->len[lane];
    int rc = s->in->prefill(s->is, lane, from + s->off[lane], s->sh[lane] + from,
                            (size_t)(s->tail_len[lane] - from), msg, ml);
    golden_backend_hooks ih = {s, s->h.tap ? tapw : NULL, s->h.mark ? markw : NULL, s->h.want_taps};
    s->in->set_hooks(s->is, &ih, msg, ml);
    if (rc == 0)
        s->len[lane] = s->tail_len[lane];
    s->tail_len[lane] = 0;
    return rc;
}

static int do_prefill(shim *s, int lane, int64_t pos, const int32_t *t, size_t n, char *msg, size_t ml)
{
    if (!ok_lane(s, lane) || s->fault == F_LANE_MOD4) {
        int rc = s->in->prefill(s->is, ilane(s, lane), pos, t, n, msg, ml);
        if (rc == 0 && ok_lane(s, lane))
            after_write(s, lane, pos, t, n, 1);
        return rc;
    }
    if (s->tail_len[lane] && pos > s->len[lane] && materialize_tail(s, lane, msg, ml))
        return 1;
    int32_t *eff = malloc((n ? n : 1) * sizeof *eff);
    if (!eff)
        return snprintf(msg, ml, "out of memory"), 1;
    memcpy(eff, t, n * sizeof *eff);
    int64_t off = s->off[lane], oldlen = s->tail_len[lane] > s->len[lane] ? s->tail_len[lane] : s->len[lane];
    faulty_tokens(s, lane, pos, eff, n, 1);
    if (s->fault == F_REFUSED_PREFILL_DROPS_TAIL && pos < oldlen && pos + (int64_t)n > s->info.context_limit) {
        /* drops the tail first, checks the limit after */
        if (s->in->truncate(s->is, lane, pos + off, msg, ml) == 0)
            s->len[lane] = pos;
    }
    if (s->fault == F_PREFILL1_AS_DECODE && n == 1 && pos > 0 && pos < oldlen) {
        /* one token goes to the decode graph, which appends at the lane's length */
        int64_t at = s->len[lane];
        s->cur_kind = 2, s->cur_lane = lane, s->cur_pos = at, s->cur_n = 1, s->cur_toks = eff;
        int rc = s->in->decode(s->is, lane, eff[0], msg, ml);
        s->cur_kind = 0;
        free(eff);
        if (rc == 0)
            after_write(s, lane, at, t, 1, 1);
        return rc;
    }
    s->cur_kind = 1, s->cur_lane = lane, s->cur_pos = pos, s->cur_n = n, s->cur_toks = eff;
    int rc = s->in->prefill(s->is, lane, pos + off, eff, n, msg, ml);
    s->cur_kind = 0;
    free(eff);
    if (rc)
        return rc;
    after_write(s, lane, pos, t, n, 1);
    s->tail_len[lane] = 0;
    if (s->fault == F_PREFILL_OVER_TAIL_KEEPS && pos + (int64_t)n < oldlen)
        s->tail_len[lane] = oldlen; /* the old tail stays behind the new tokens */
    return 0;
}

static int sh_prefill(void *self, int lane, int64_t pos, const int32_t *t, size_t n, char *msg, size_t ml)
{
    return do_prefill(self, lane, pos, t, n, msg, ml);
}

static int sh_decode(void *self, int lane, int32_t tok, char *msg, size_t ml)
{
    shim *s = self;
    if (!ok_lane(s, lane) || s->fault == F_LANE_MOD4)
        return s->in->decode(s->is, ilane(s, lane), tok, msg, ml);
    int64_t p = s->len[lane], L = s->info.context_limit;
    if (s->fault == F_LIMIT_LANE_OTHER && lane != 0 && p >= L)
        return 0; /* the limit test reads lane 0's length: the step is dropped, "success" */
    if (s->fault == F_DECODE_LAST_REFUSED && p == L - 1)
        return snprintf(msg, ml, "context_limit_exceeded: position %lld of %lld", (long long)p, (long long)L), 1;
    if (s->tail_len[lane] && materialize_tail(s, lane, msg, ml))
        return 1;
    p = s->len[lane];
    int32_t eff = tok;
    faulty_tokens(s, lane, p, &eff, 1, 2);
    s->cur_kind = 2, s->cur_lane = lane, s->cur_pos = p, s->cur_n = 1, s->cur_toks = &eff;
    int rc = s->in->decode(s->is, lane, eff, msg, ml);
    s->cur_kind = 0;
    if (rc == 0) {
        after_write(s, lane, p, &tok, 1, 2);
        return 0;
    }
    if (strncmp(msg, "context_limit_exceeded", 22) == 0) {
        if (s->fault == F_REFUSED_DECODE_LEN_BUMP)
            s->ghost[lane] = p + 1; /* the position counter moved before the limit test */
        if (s->fault == F_REJECT_MSG_KVFULL)
            snprintf(msg, ml, "KV cache full: %lld of %lld slots in use", (long long)p, (long long)L);
    }
    return rc;
}

static float bf2f(uint16_t b)
{
    uint32_t u = (uint32_t)b << 16;
    float f;
    memcpy(&f, &u, 4);
    return f;
}

static int sh_logits(void *self, int lane, int first, int count, void *dst, char *msg, size_t ml)
{
    shim *s = self;
    int rc = s->in->logits(s->is, ilane(s, lane), first, count, dst, msg, ml);
    if (rc || !ok_lane(s, lane) || count <= 0)
        return rc;
    int bf = s->info.logits_dtype == GOLDEN_BK_BF16;
    size_t esz = bf ? 2 : 4, bytes = (size_t)count * esz;
    float *f = dst;
    uint16_t *b = dst;
    logits_calls++;
    if (s->fault == F_STALE_D2H_50) {
        unsigned char *real = malloc(bytes);
        memcpy(real, dst, bytes);
        if (logits_calls % 50 == 0 && prev_row && prev_first == first && prev_count == count)
            memcpy(dst, prev_row, bytes); /* the double buffer was not flipped: last call's row */
        free(prev_row);
        prev_row = real, prev_bytes = bytes, prev_first = first, prev_count = count;
    }
    if ((s->fault == F_PER_OPEN_OFFSET || s->fault == F_PER_OPEN_OFFSET_LANE2) && first == 0 && !bf)
        f[0] += s->per_open;
    if (s->fault == F_PER_OPEN_OFFSET_LANE2 && lane == 2 && s->lastop[lane] == 2 && first <= 5 &&
        first + count > 5 && !bf)
        f[5 - first] += 2.0f;
    if (s->fault == F_NAN_LANE3_DECODE && lane == 3 && s->lastop[lane] == 2 && !taps_on(s) &&
        first <= 77 && first + count > 77 && !bf)
        f[77 - first] = NAN;
    if (s->fault == F_BF16_DECODE_LOWBIT && bf && s->lastop[lane] == 2)
        for (int i = 0; i < count; i++)
            if ((b[i] & 0x7f80) != 0x7f80)
                b[i] &= 0xfffe; /* the decode graph truncates where prefill rounds */
    int K = s->fault == F_DECODE_TOP16 && s->lastop[lane] == 2 ? 16 : s->fault == F_TOP128 ? 128 : 0;
    if (K && count > K) {
        /* an NPU top-K: the K largest (lower index first among equal), the rest -inf */
        float *v = malloc((size_t)count * sizeof *v);
        for (int i = 0; i < count; i++)
            v[i] = bf ? bf2f(b[i]) : f[i];
        for (int i = 0; i < count; i++) {
            int above = 0;
            for (int j = 0; j < count && above < K; j++)
                if (v[j] > v[i] || (v[j] == v[i] && j < i))
                    above++;
            if (above >= K) {
                if (bf)
                    b[i] = 0xff80;
                else
                    f[i] = -INFINITY;
            }
        }
        free(v);
    }
    return 0;
}

static int sh_truncate(void *self, int lane, int64_t length, char *msg, size_t ml)
{
    shim *s = self;
    if (!ok_lane(s, lane) || s->fault == F_LANE_MOD4)
        return s->in->truncate(s->is, ilane(s, lane), length, msg, ml);
    if (s->fault == F_TRUNCATE_LANE0 && lane != 0) {
        /* the lane argument is lost on the way: lane 0 is cut instead */
        if (length <= s->len[0] && s->in->truncate(s->is, 0, length + s->off[0], msg, ml) == 0)
            s->len[0] = length, s->consec[0] = 0;
        return 0;
    }
    if (s->tail_len[lane] && length > s->len[lane] && materialize_tail(s, lane, msg, ml))
        return 1;
    s->tail_len[lane] = 0;
    int32_t stale = length >= 0 && length < s->len[lane] ? s->sh[lane][length] : -1;
    int rc = s->in->truncate(s->is, lane, length + s->off[lane], msg, ml);
    if (rc == 0) {
        s->len[lane] = length, s->consec[lane] = 0, s->ghost[lane] = -1, s->pend_pos[lane] = -1;
        if (s->fault == F_TAIL_PAGE_128 && length > 0 && length % 128 == 0 && stale >= 0)
            s->pend_pos[lane] = length, s->pend_tok[lane] = stale;
    }
    return rc;
}

static int sh_reset(void *self, int lane, char *msg, size_t ml)
{
    shim *s = self;
    if (s->fault == F_LANE_MOD4)
        return s->in->reset(s->is, ilane(s, lane), msg, ml);
    if (s->fault == F_RESET_LANE3_STALE && lane == 3 && ok_lane(s, 3)) {
        /* the lane's pages stay mapped: a new sequence goes in behind the old one */
        int64_t il = s->in->length(s->is, 3);
        s->off[3] = il > 0 ? il : 0;
        s->len[3] = 0, s->consec[3] = 0, s->lastop[3] = 0, s->pend_pos[3] = -1;
        return 0;
    }
    int rc = s->in->reset(s->is, lane, msg, ml);
    if (rc)
        return rc;
    for (int i = 0; i < s->info.num_lanes; i++)
        if (lane < 0 || lane == i) {
            if (s->fault == F_LENGTH_RESET_STALE)
                s->ghost[i] = s->len[i]; /* the counter is cleared lazily, by the next write */
            s->len[i] = 0, s->off[i] = 0, s->consec[i] = 0, s->lastop[i] = 0, s->pend_pos[i] = -1;
            s->tail_len[i] = 0;
        }
    return 0;
}

static int64_t sh_length(void *self, int lane)
{
    shim *s = self;
    if (!ok_lane(s, lane) || s->fault == F_LANE_MOD4)
        return s->in->length(s->is, ilane(s, lane));
    if (s->ghost[lane] >= 0 && s->ghost[lane] != s->len[lane])
        return s->ghost[lane];
    if (s->tail_len[lane] > s->len[lane])
        return s->tail_len[lane];
    int64_t r = s->in->length(s->is, lane);
    return r >= 0 ? r - s->off[lane] : r;
}

static const golden_backend_vtable vt = {GOLDEN_BACKEND_ABI_VERSION, "redteam-shim", sh_open, sh_close,
                                         sh_info, sh_hooks, sh_prefill, sh_decode, sh_logits,
                                         sh_truncate, sh_reset, sh_length};

const golden_backend_vtable *golden_backend_entry(void);
const golden_backend_vtable *golden_backend_entry(void) { return &vt; }
EOF_SHIM

cat > prove.c <<'EOF_PROVE'
/* Runs a short call sequence against a plug-in and prints every observable (status, message,
 * length, a hash of each logits row and each tap) so two plug-ins can be compared with cmp:
 *   prove PLUGIN MODEL_DIR KEY=VALUE... -- OP...
 * OP: taps=0|1, p:L:POS:N:SEED (prefill N generated tokens), P:L:POS:T,T,.. (explicit tokens),
 *     d:L:TOK, D:L:K:SEED (K decodes of generated tokens), g:L (logits), t:L:LEN, r:L, l:L */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "golden/backend.h"

static uint64_t fnv(const void *p, size_t n, uint64_t h)
{
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++)
        h = (h ^ b[i]) * 1099511628211ull;
    return h;
}

static int tap(void *ctx, const char *name, int layer, int dtype, int64_t rows, int64_t cols, const void *data)
{
    (void)ctx, (void)layer, (void)dtype;
    printf("  tap %s %lldx%lld %016llx\n", name, (long long)rows, (long long)cols,
           (unsigned long long)fnv(data, (size_t)(rows * cols) * 4, 1469598103934665603ull));
    return 0;
}

static int V;
static int32_t gen(int seed, int i) { return (int32_t)(((uint64_t)seed * 7919u + (uint64_t)i * 104729u + (uint64_t)i * i % 97u) % (uint64_t)(V - 2)); }

int main(int argc, char **argv)
{
    if (argc < 4)
        return 2;
    void *h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    if (!h)
        return fprintf(stderr, "%s\n", dlerror()), 2;
    const golden_backend_vtable *(*entry)(void) = (const golden_backend_vtable *(*)(void))dlsym(h, GOLDEN_BACKEND_ENTRY);
    const golden_backend_vtable *vt = entry();
    const char *keys[32], *vals[32];
    size_t k = 0;
    int a = 3;
    for (; a < argc && strcmp(argv[a], "--") != 0; a++) {
        char *eq = strchr(argv[a], '=');
        if (!eq || k == 32)
            return 2;
        *eq = 0;
        keys[k] = argv[a], vals[k] = eq + 1, k++;
    }
    golden_backend_open_args oa = {GOLDEN_BACKEND_ABI_VERSION, argv[2], k, keys, vals, 1};
    void *self;
    char msg[512] = "";
    if (vt->open(&oa, &self, msg, sizeof msg))
        return fprintf(stderr, "open: %s\n", msg), 2;
    golden_backend_info info;
    if (vt->info(self, &info, msg, sizeof msg))
        return fprintf(stderr, "info: %s\n", msg), 2;
    V = info.vocab_size;
    float *row = malloc((size_t)V * 4);
    int32_t *toks = malloc(8192 * sizeof *toks);
    golden_backend_hooks hk = {NULL, tap, NULL, 1};
    vt->set_hooks(self, &hk, msg, sizeof msg);
    for (a++; a < argc; a++) {
        char *op = argv[a];
        int L = 0, rc = 0;
        long long x = 0, y = 0, z = 0;
        msg[0] = 0;
        printf("%s", op);
        if (strncmp(op, "taps=", 5) == 0) {
            hk.want_taps = atoi(op + 5);
            hk.tap = hk.want_taps ? tap : NULL;
            rc = vt->set_hooks(self, &hk, msg, sizeof msg);
        } else if (sscanf(op, "p:%d:%lld:%lld:%lld", &L, &x, &y, &z) == 4) {
            for (long long i = 0; i < y; i++)
                toks[i] = gen((int)z, (int)(x + i));
            printf("\n");
            rc = vt->prefill(self, L, x, toks, (size_t)y, msg, sizeof msg);
        } else if (op[0] == 'P' && sscanf(op, "P:%d:%lld:", &L, &x) == 2) {
            char *q = strchr(strchr(op + 2, ':') + 1, ':') + 1;
            size_t n = 0;
            while (*q) {
                toks[n++] = (int32_t)strtol(q, &q, 10);
                if (*q == ',')
                    q++;
            }
            printf("\n");
            rc = vt->prefill(self, L, x, toks, n, msg, sizeof msg);
        } else if (sscanf(op, "d:%d:%lld", &L, &x) == 2) {
            printf("\n");
            rc = vt->decode(self, L, (int32_t)x, msg, sizeof msg);
        } else if (sscanf(op, "D:%d:%lld:%lld", &L, &x, &z) == 3) {
            printf("\n");
            for (long long i = 0; i < x && rc == 0; i++) {
                rc = vt->decode(self, L, gen((int)z, (int)(1000 + i)), msg, sizeof msg);
                if (rc == 0 && vt->logits(self, L, 0, V, row, msg, sizeof msg) == 0)
                    printf("  step %lld %016llx\n", i, (unsigned long long)fnv(row, (size_t)V * (info.logits_dtype == GOLDEN_BK_BF16 ? 2 : 4), 1469598103934665603ull));
            }
        } else if (sscanf(op, "g:%d", &L) == 1) {
            rc = vt->logits(self, L, 0, V, row, msg, sizeof msg);
            if (rc == 0)
                printf(" %016llx", (unsigned long long)fnv(row, (size_t)V * (info.logits_dtype == GOLDEN_BK_BF16 ? 2 : 4), 1469598103934665603ull));
        } else if (sscanf(op, "t:%d:%lld", &L, &x) == 2) {
            rc = vt->truncate(self, L, x, msg, sizeof msg);
        } else if (sscanf(op, "r:%d", &L) == 1) {
            rc = vt->reset(self, L, msg, sizeof msg);
        } else if (sscanf(op, "l:%d", &L) == 1) {
            printf(" = %lld", (long long)vt->length(self, L));
        } else {
            return fprintf(stderr, "bad op %s\n", op), 2;
        }
        printf(" rc=%d%s%s\n", rc, rc ? " " : "", rc ? msg : "");
    }
    vt->close(self);
    return 0;
}
EOF_PROVE

if [ ! -f "$LIBA" ]; then
    ok "conform-redteam # skip no $LIBA to build the wrapping plug-in from"
    exit 0
fi
# libgolden.a needs the libraries the build links (GNUmakefile PKGS, through pkg-config, so the
# Debian name of HDF5's library is not hard-coded); a sanitizer build's archive (build-san: it
# calls __asan_*/__ubsan_*) needs the same sanitizers on the shim and on prove, whose traces must
# not end in a leak report (prove frees nothing on exit: it is a test driver)
LIBS=$(pkg-config --libs hdf5 yaml-0.1 jansson libcrypto libpcre2-8 zlib icu-uc 2>/dev/null) ||
    LIBS="-lhdf5_serial -lyaml -ljansson -lcrypto -lpcre2-8 -lz -licuuc"
SANF="" PROVE_ASAN="${ASAN_OPTIONS:-}"
if nm "$LIBA" 2>/dev/null | grep -q ' U __asan_'; then
    SANF="-fsanitize=address,undefined -fno-omit-frame-pointer"
    PROVE_ASAN="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"
fi
prove() { ASAN_OPTIONS="$PROVE_ASAN" ./prove "$@"; }
# shellcheck disable=SC2086
if ! cc -shared -fPIC -O2 $SANF -I"$INC" -o shim.so shim.c "$LIBA" -Wl,--exclude-libs,ALL \
        -Wl,-Bsymbolic $LIBS -lm -pthread 2> cc.txt ||
   ! cc -O2 $SANF -I"$INC" -o prove prove.c -ldl 2>> cc.txt; then
    notok "conform-redteam-build" "$(head -c 400 cc.txt)"
    exit 0
fi
"$NR" make-model --preset tiny --seed 1 -o model > /dev/null 2>&1 || { notok conform-redteam-model "make-model failed"; exit 0; }
# the router check's own built tie, rebuilt for the proof of router-decode-tie-high: embedding
# row V-1 = 0 makes every router logit exactly 0 (docs/conformance.md, "Built tie and NaN")
if [ -n "$PYTHON" ]; then
    "$PYTHON" - model tiemodel <<'EOF_PY'
import json, os, shutil, struct, sys
src, dst = sys.argv[1], sys.argv[2]
os.makedirs(dst)
for f in os.listdir(src):
    if f != "model.safetensors":
        shutil.copy(os.path.join(src, f), dst)
b = bytearray(open(os.path.join(src, "model.safetensors"), "rb").read())
n = struct.unpack("<Q", b[:8])[0]
e = json.loads(b[8:8 + n])["model.embed_tokens.weight"]
V, H = e["shape"]
sz = {"BF16": 2, "F16": 2, "F32": 4}[e["dtype"]]
s0 = 8 + n + e["data_offsets"][0] + (V - 1) * H * sz
b[s0:s0 + H * sz] = bytes(H * sz)
open(os.path.join(dst, "model.safetensors"), "wb").write(b)
EOF_PY
fi

CASES=""
NJOBS=0
# fault NAME EXPECT CHECKS PROOF_MODEL "PROOF_OPTS" "PROOF_OPS" CONFORM_ARGS...
#   EXPECT: exit status wanted; CHECKS: regex of the check(s) whose row must say FAIL (exit 1)
#   or ERROR (exit 2); PROOF_OPS "-": no proof (a clean case).
fault() {
    _n=$1 _e=$2 _c=$3 _pm=$4 _po=$5 _ops=$6
    shift 6
    CASES="$CASES $_n"
    echo "$_e" > "$_n.want"; echo "$_c" > "$_n.checks"
    if [ "$_ops" != "-" ]; then
        if [ "$_pm" = tiemodel ] && [ ! -d tiemodel ]; then echo skip > "$_n.proof"; return; fi
        _f=$(echo "$*" | sed -n 's/.*fault=\([a-z0-9_]*\).*/\1/p')
        # PROOF_OPTS "CLEAN|FAULT" gives the two runs their own options, else both get it
        case $_po in
        *"|"*) _pc=${_po%%|*} _pf=${_po#*|} ;;
        *) _pc=$_po _pf=$_po ;;
        esac
        # shellcheck disable=SC2086
        prove ./shim.so "$_pm" fault=clean $_pc -- $_ops > "$_n.clean.trace" 2>&1
        # shellcheck disable=SC2086
        prove ./shim.so "$_pm" fault="$_f" $_pf -- $_ops > "$_n.fault.trace" 2>&1
        if cmp -s "$_n.clean.trace" "$_n.fault.trace"; then echo same > "$_n.proof"; else echo real > "$_n.proof"; fi
    else
        echo real > "$_n.proof"
    fi
    # a fault case runs the checks it names (the verdict asked of it is theirs: exit 1 and their
    # FAIL rows), which keeps the test's time bounded; clean cases and "any check" run them all
    _sel=""
    if [ "$_e" = 1 ] && echo "$_c" | grep -Eqx '[a-z-]+(\|[a-z-]+)*'; then
        _sel="--checks $(echo "$_c" | tr '|' ',')"
    fi
    # shellcheck disable=SC2086
    ( "$NR" conform --model model --backend ./shim.so --seed 0 -j1 --json "$_n.json" $_sel "$@" \
          > "$_n.out" 2> "$_n.err"; echo $? > "$_n.rc" ) &
    NJOBS=$((NJOBS + 1))
    if [ "$NJOBS" -ge "$PAR" ]; then wait; NJOBS=0; fi
}
clean() { _n=$1 _e=$2 _c=$3; shift 3; fault "$_n" "$_e" "$_c" model "" - "$@"; }

# ---------------------------------------------------------------------------------------------
# Good inputs: must pass (exit 0, every one of the 11 checks "pass").
# ---------------------------------------------------------------------------------------------

# docs/conformance.md "Faults that prove the checks": "The clean backend passes all, in f32 and
# bf16, at several seeds, with random positions on". The shim with no fault is the cpu reference
# behind the plug-in ABI; run at the default budget (1 s of random positions) and seed 0.
clean clean-f32-default-budget 0 "" --backend-opt fault=clean
# the same in bf16 (cpu option dtype=bf16: logits come as bf16, logits_dtype BF16)
clean clean-bf16 0 "" --budget 0 --backend-opt fault=clean --backend-opt dtype=bf16
# the same with 8 KV caches (cpu option lanes=8): kv-lanes/kv-reset use all 8 lanes
# (conformance.md "Lanes": every lane the backend declares); the baseline of reset-lane3-stale-8lanes
clean clean-8-lanes 0 "" --budget 0 --backend-opt fault=clean --backend-opt lanes=8
# An NPU that returns only its top 128 logits, the rest -inf (handbook 15, C3 "NPU outputs top-k
# values"). conformance.md sampling-topk: "a backend that returns top-k logits (the rest -inf)
# samples exactly as full-vocabulary sampling would"; the default settings need k >= 40 (the
# clean run prints it), and even with all 40 recent tokens penalised the top-40 after the
# penalty lie within the raw top 40+40 = 80 <= 128. A lone -inf is "a masked entry" (allowed).
# Every check compares the backend with itself, so the same -inf pattern everywhere passes.
clean clean-npu-top128 0 "" --budget 0 --backend-opt fault=top128
# A runtime that is nondeterministic across opens (each open adds its own 0.125..0.375 to logit
# 0, from the clock: the difference between two opens is below 0.25) under
# --nondeterministic-ok 0.5: docs/npu-replay.1 "determinism (and the checks that compare with a
# second open): allow |a-b| <= TOL between two opens"; conformance.md: the planted
# `nondeterministic` fault "all pass under --nondeterministic-ok 1". Within one open the offset
# is constant, so every self-comparison stays bitwise equal.
fault clean-per-open-offset-tolerated 0 "" model "" "taps=0 p:0:0:10:1 g:0" \
    --budget 0 --nondeterministic-ok 0.5 --backend-opt fault=per_open_offset
# One KV cache only (cpu lanes=1): conformance.md exit status "2 nothing failed but some check
# could not run (..., one lane only, ...)": kv-lanes says ERROR, nothing FAILs, exit 2.
clean one-lane-could-not-check 2 "kv-lanes" --budget 0 --backend-opt fault=clean --backend-opt lanes=1

# ---------------------------------------------------------------------------------------------
# Faults: must fail (exit 1) with the responsible check's row saying FAIL.
# ---------------------------------------------------------------------------------------------

# --- causal mask (handbook 9: "verify the causal mask, future tokens must not affect past
# outputs"; "cover 1 to 40959, especially before and after tile boundaries") ---

# Production path only (taps off): the KV of position 129 is computed with token 130 mixed in
# when both are in one prefill batch (a mask bug at the 128 tile boundary in the no-tap graph).
# Proof: taps=0, prefill 131 tokens, logits(130) differ from the clean plug-in's.
# conformance.md "The production path": the logits-decided checks run taps off too; kv-positions'
# prefill path at w = 129 puts 129 and 130 in one continued prefill, taps off on lane 1.
fault mask-leak-129-taps-off 1 "kv-positions|causal-mask" model "" "taps=0 p:0:0:131:1 g:0" \
    --budget 0 --backend-opt fault=mask_taps_off_129
# Last layer, prefill: row 510 also reads token 511 (its attn_out/hidden rows move by 1e-3 x
# (1 + token511 mod 8)). Proof: taps=1, prefill 512 tokens: the layers/1 attn_out and hidden
# taps differ. causal-mask (1) at j = 511 (the last position is in the set) must see row 510 move.
fault mask-leak-510-last-position 1 "causal-mask" model "" "taps=1 p:0:0:512:1" \
    --budget 0 --backend-opt fault=mask_tap_510
# judgement: the same leak at row 256 (reads 257). Handbook 4's own hypothesis template changes
# `attention_seq_tile: 256`, and section 9 asks for the tile's before/after boundaries; the set
# (P = 16, 32, 128, then powers of two from 512) has no 255/256/257, so only a random j = 257
# can see it (at --budget 0 nothing; the default budget draws a handful of the 510 positions).
# Proof: taps=1, prefill 300 tokens: layers/1 attn_out and hidden taps differ.
fault mask-leak-256-seq-tile 1 "causal-mask" model "" "taps=1 p:0:0:300:1" \
    --budget 0 --backend-opt fault=mask_tap_256

# --- KV positions, prefill and decode paths (handbook 10: "token position 0, 15, 16, 17, the
# last position"; 5.1 lengths; conformance.md kv-positions "the decode and the continued-prefill
# paths write and read the KV slot of each position as a one-shot prefill does") ---

# judgement: a continued (chunked / prefix-cached) prefill of 8 or more tokens at pos > 0 reads
# its input ids one position early (token i gets ids[i-1], the first gets the cached last one):
# a classic chunk-offset bug of the big-batch prefill graph. The ABI lets prefill start at any
# pos <= length; kv-positions continues with 2 tokens, kv-tail with 4, so n >= 8 is never run.
# Proof: taps=0, prefill 20, prefill 8 at 20, logits(27) differ.
fault chunked-prefill-shift 1 "kv-positions|kv-tail" model "" "taps=0 p:0:0:20:1 p:0:20:8:2 g:0" \
    --budget 0 --backend-opt fault=chunk_prefill_shift
# judgement: KV write-combining (handbook 10 lists "write-combine granularity" as a KV variable):
# the 16th decode step in a row writes its slot from the previous token. Handbook 4's matrix asks
# for output_tokens 32 and 256; conform's longest decode run is kv-lanes' 12 steps.
# Proof: taps=0, prefill 8, 16 decode steps: step 15's logits differ.
fault decode-write-combine-16 1 "kv-positions|kv-lanes|kv-reset|determinism" model "" \
    "taps=0 p:0:0:8:1 D:0:16:3" --budget 0 --backend-opt fault=decode_wc16
# judgement: a one-token prefill below the lane's length (prompt length 1 of handbook 5.1; the
# ABI: "pos may be below the lane's length (the tail is dropped)") goes to the decode graph,
# which appends at the length instead. Proof: prefill 20, prefill 1 token at 10: length() is 21,
# not 11, and the logits differ.
fault prefill-one-below-length 1 "kv-positions|kv-tail" model "" "p:0:0:20:1 P:0:10:7 l:0 g:0" \
    --budget 0 --backend-opt fault=prefill1_as_decode
# A prefill at a position below the length writes the new tokens but keeps the old tail behind
# them (length() unchanged, the next decode goes behind the stale tail). ABI: "the tail from pos
# on is dropped first". Proof: prefill 40, prefill 3 at 10: length() 40 not 13, then a decode's
# logits differ. kv-tail ("a prefill of them at the cut over the old tail") must fail.
fault prefill-over-tail-keeps-tail 1 "kv-tail" model "" "taps=0 p:0:0:40:1 P:0:10:1,2,3 l:0 d:0:5 g:0" \
    --budget 0 --backend-opt fault=prefill_over_tail_keeps
# Production path, context limit: the decode into the last position (511) with taps off writes
# token+1. Proof: taps=0, prefill 511, decode: logits differ. conformance.md rejection: "a decode
# into the last position (after a prefill of limit-1) is accepted and equals the prefill of the
# limit", taps on, then off.
fault decode-last-position-taps-off 1 "rejection" model "" "taps=0 p:0:0:511:1 d:0:5 g:0" \
    --budget 0 --backend-opt fault=decode_last_taps_off
# bf16 logits (cpu dtype=bf16): the decode graph truncates the low mantissa bit where prefill
# rounds. Proof (dtype=bf16): prefill 10, decode: logits differ. kv-positions compares decode
# logits bitwise with one-shot prefills.
fault bf16-decode-truncates 1 "kv-positions" model "dtype=bf16" "p:0:0:10:1 d:0:5 g:0" \
    --budget 0 --backend-opt fault=bf16_decode_lowbit --backend-opt dtype=bf16

# --- lanes (handbook 10: "two sequences written alternately, verify they never cross lanes") ---

# The backend declares 8 KV caches but has 4: lane L is cache L mod 4. Proof (clean with lanes=8
# against the fault): prefill lane 0, prefill lane 4, logits(0) differ. kv-lanes uses every lane.
fault lanes-declared-8-has-4 1 "kv-lanes" model "lanes=8|" "p:0:0:10:1 p:4:0:10:2 g:0" \
    --budget 0 --backend-opt fault=lane_mod4
# A decode right after a call on another lane of a different length mixes that lane's slot p-1
# into its token (a stale KV base pointer). Proof: taps=0, prefill lane 0 (10), prefill lane 1
# (5), decode lane 0, decode lane 1: logits(1) differ. kv-lanes' seeded random interleaving.
fault interleave-stale-pointer 1 "kv-lanes" model "" "taps=0 p:0:0:10:1 p:1:0:5:2 d:0:3 d:1:7 g:1" \
    --budget 0 --backend-opt fault=interleave_stale
# judgement: lanes 2 and 3 share the KV page holding positions >= 64 (a block-table bug past the
# first page): lane 3's slot p >= 64 holds lane 2's token when lane 2 holds p. kv-lanes runs
# 8 + 12 positions, kv-reset 48 + 2, determinism 40 + 8: two lanes never both pass 64.
# Proof: taps=0, prefill lane 2 (70), prefill lane 3 (70), logits(3) differ.
fault lanes-share-page-past-64 1 "kv-lanes|kv-reset" model "" "taps=0 p:2:0:70:1 p:3:0:70:2 g:3" \
    --budget 0 --backend-opt fault=lane_share_64
# Across-open nondeterminism tolerated by --nondeterministic-ok 0.5 (as in
# clean-per-open-offset-tolerated) plus a real lane fault: lane 2's decode logits have +2.0 on
# entry 5, four times the tolerance. Proof: taps=0, prefill lane 2, decode: logits(2) differ.
# The tolerance covers the open-to-open difference, not a lane that is wrong by 2.0.
fault lane2-fault-under-tolerance 1 "kv-lanes" model "" "taps=0 p:2:0:10:1 d:2:5 g:2" \
    --budget 0 --nondeterministic-ok 0.5 --backend-opt fault=per_open_offset_lane2

# --- tail and reset (handbook 10: "remove the tail, rewrite the same positions"; "after reset or
# timeout the old KV is not used by the new generation") ---

# judgement: truncate() loses its lane argument and cuts lane 0 (if long enough). ABI:
# "truncate(self, lane, length)"; issue 28: "several non-aligned cuts, length() after the cut".
# conform's kv-tail cuts one lane (coverage lists cuts, no lanes). Proof: prefill lane 1 (20),
# truncate(1, 10), length(1) = 20, not 10.
fault truncate-ignores-lane 1 "kv-tail" model "" "p:1:0:20:1 t:1:10 l:1" \
    --budget 0 --backend-opt fault=truncate_lane0
# judgement: a cut at a 128-position page boundary (handbook 5.1's 127/128/129 head/tile edge)
# leaves the page's first slot stale: the first token written at the cut is computed from the
# old tail's token. kv-tail cuts at 16, 5, 17, 37, 100 and one seeded cut (79 at seed 0).
# Proof: taps=0, prefill 150, truncate 128, decode: logits differ.
fault truncate-at-128-stale-slot 1 "kv-tail" model "" "taps=0 p:0:0:150:1 t:0:128 d:0:7 g:0" \
    --budget 0 --backend-opt fault=tail_page_128
# reset(3) alone keeps lane 3's pages: the next sequence goes in behind the old one (the brief's
# "KV slot reused after reset on lane 3 only"). With 4 lanes, lane 3 is the last lane, the one
# kv-reset resets alone. Proof: taps=0, prefill lane 3 (20), reset(3), prefill lane 3 (10),
# logits(3) differ.
fault reset-lane3-stale-4lanes 1 "kv-reset" model "" "taps=0 p:3:0:20:1 r:3 p:3:0:10:2 g:3" \
    --budget 0 --backend-opt fault=reset_lane3_stale
# judgement: the same fault with 8 lanes (lane 3 is a middle lane). conformance.md kv-reset
# "proves: reset of one lane invalidates that lane only", but only the last lane is reset alone
# (coverage "reset_one": [last]); issue 28 wants "reset of one lane and of all lanes, then
# regeneration on every lane". Proof as above with lanes=8.
fault reset-lane3-stale-8lanes 1 "kv-reset" model "lanes=8" "taps=0 p:3:0:20:1 r:3 p:3:0:10:2 g:3" \
    --budget 0 --backend-opt fault=reset_lane3_stale --backend-opt lanes=8
# judgement: length() after reset still reports the old length (the counter is cleared lazily by
# the next write; the KV itself is reset). ABI: length() = "Positions the lane holds now";
# kv-tail holds length() to the cut, nothing holds it to 0 after a reset. Proof: prefill 10,
# reset(0), length(0) = 10, not 0.
fault length-stale-after-reset 1 "kv-reset" model "" "p:0:0:10:1 r:0 l:0" \
    --budget 0 --backend-opt fault=length_reset_stale

# --- limits (handbook 5.1: a case beyond the context is a rejection case; issue 28 "one position
# past it is refused, in prefill and in decode; a refused request leaves the lane as it was") ---

# A refused decode into the full lane still bumps length() to 513. Proof: taps=0, prefill 512,
# decode (refused), length() = 513. rejection: "leaving the lane as it was (the same length())".
fault refused-decode-bumps-length 1 "rejection" model "" "taps=0 p:0:0:512:1 d:0:5 l:0" \
    --budget 0 --backend-opt fault=refused_decode_len_bump
# The decode into a full lane is refused with "KV cache full: 512 of 512 slots in use" instead of
# a message starting `context_limit_exceeded` (docs/npu-replay.md: "must be refused with a
# message starting context_limit_exceeded"). Proof: prefill 512, decode: the message differs.
fault reject-message-not-contract 1 "rejection" model "" "taps=0 p:0:0:512:1 d:0:5" \
    --budget 0 --backend-opt fault=reject_msg_kvfull
# A prefill crossing the limit from below the length drops the tail before the limit test
# (truncate first, check after). Proof: prefill 300, prefill 500 at 100 (refused), length() 100
# not 300. rejection: "a prefill of limit+1 ... refused, leaving the lane as it was".
fault refused-prefill-drops-tail 1 "rejection" model "" "taps=0 p:0:0:300:1 p:0:100:500:2 l:0 g:0" \
    --budget 0 --backend-opt fault=refused_prefill_drops_tail
# Off by one at the limit: the decode into the last position (511) is refused with
# context_limit_exceeded. Proof: prefill 511, decode: refused (clean accepts).
# rejection: "a decode into the last position ... is accepted".
fault decode-last-position-refused 1 "rejection" model "" "taps=0 p:0:0:511:1 d:0:5" \
    --budget 0 --backend-opt fault=decode_last_refused
# judgement: the limit test reads lane 0's length: a decode into a full lane 1..3 "succeeds" and
# is dropped. The same rule holds on every lane (lanes are independent KV caches); conform's
# rejection uses one lane (coverage: only "limit"). Proof: prefill lane 1 (512), decode lane 1:
# rc 0, the clean plug-in refuses it.
fault limit-only-on-lane0 1 "rejection" model "" "taps=0 p:1:0:512:1 d:1:5" \
    --budget 0 --backend-opt fault=limit_lane_other

# --- router (handbook 11: "top-8 expert id/order, weight error, no duplicate expert,
# normalised probabilities, tie case, NaN router input"; issue 28 "Router: decode steps as
# well as prefill") ---

# judgement: the decode graph (handbook 1: production is precompiled prefill and decode graphs)
# swaps ranks 0 and 1 of every layer's top-k from position 128 on (same experts, same MoE sum:
# only the order, which section 11 requires, is wrong). conform's router decodes at 64..71 only.
# Proof: taps=1, prefill 130, decode: the decode's topk_ids and topk_weights taps differ.
fault router-decode-rank-swap-past-128 1 "router" model "" "taps=1 p:0:0:130:1 d:0:5" \
    --budget 0 --backend-opt fault=router_decode_swap_128
# judgement: the decode graph breaks an exact tie with the higher expert index first (experts
# 15,14,13,12 for the all-zero router input; the output is still 0, so no logit moves). The
# router check builds its tie (embedding row V-1 = 0) but, it seems, only as a prefill; section
# 11's tie case and issue 28's "decode steps as well" make the decode tie part of the rule.
# Proof (the tie model): taps=1, prefill [511], decode 511: the decode's topk_ids taps differ.
fault router-decode-tie-high-index 1 "router" tiemodel "" "taps=1 P:0:0:511 d:0:511" \
    --budget 0 --backend-opt fault=router_decode_tie_high

# --- logits, sampling, determinism (handbook 15; conformance.md determinism) ---

# An NPU top-16 on the decode graph only (the rest -inf; prefill gives all 512). Proof: prefill
# 10, decode: logits differ. sampling-topk: "the settings need k >= 40", the backend gives 16.
fault npu-topk16-on-decode 1 "sampling-topk" model "" "p:0:0:10:1 d:0:5 g:0" \
    --budget 0 --backend-opt fault=decode_top16
# Once in 50 logits calls (a process-wide counter) the D2H double buffer is not flipped: the
# row is the previous call's. Proof: taps=0, prefill 10, 60 decode+logits steps: step 49 differs.
# Any check whose comparison takes in the 50th call must fail (no particular one: exit 1).
fault stale-d2h-once-in-50 1 "[a-z-]+" model "" "taps=0 p:0:0:10:1 D:0:60:1" \
    --budget 0 --backend-opt fault=stale_d2h_50
# Logit 77 is NaN on lane 3's decode steps with taps off. conformance.md: "Logits a check reads
# are refused when they hold NaN ... a nan_output fault"; a check whose backend call failed is
# `error`, exit 2 ("nothing failed but some check could not run"), and --faults writes a
# calculet-fault/v1 line of kind nan_output. kv-lanes (reverse interleaving, taps off, every
# lane) reads it. Proof: taps=0, prefill lane 3, decode: logits(3) differ.
fault nan-logit-lane3-decode 2 "kv-lanes" model "" "taps=0 p:3:0:10:1 d:3:5 g:3" \
    --budget 0 --faults nan-logit-lane3-decode.faults --backend-opt fault=nan_lane3_decode
wait

for n in $CASES; do
    want=$(cat "$n.want"); chk=$(cat "$n.checks"); proof=$(cat "$n.proof")
    if [ "$proof" = skip ]; then ok "$n # skip no numpy (the tie model needs python3)"; continue; fi
    if [ "$proof" = same ]; then
        notok "$n" "test bug: the fault's proof sequence gives the clean plug-in's trace"; continue
    fi
    got=$(cat "$n.rc" 2>/dev/null || echo none)
    bad=$(awk 'NR > 1 && ($2 == "FAIL" || $2 == "ERROR") { printf "%s %s, ", $1, $2 }' "$n.out")
    first=$(grep -m1 '^npu-replay:' "$n.err" | cut -c1-220)
    why=""
    [ "$got" = "$want" ] || why="exit $got, wanted $want"
    case $want in
    0)  [ -z "$bad" ] || why="${why:+$why; }not passing: $bad"
        [ "$(awk '$2 == "pass"' "$n.out" | wc -l)" -ge 11 ] || why="${why:+$why; }fewer than 11 checks pass" ;;
    1)  grep -Eq "^($chk) +FAIL " "$n.out" || why="${why:+$why; }no FAIL from $chk (${bad:-every check passed})" ;;
    2)  grep -Eq "^($chk) +ERROR " "$n.out" || why="${why:+$why; }no ERROR from $chk (${bad:-every check passed})"
        if grep -Eq '^[a-z-]+ +FAIL ' "$n.out"; then why="${why:+$why; }a check FAILed: $bad"; fi
        if [ -f "$n.faults" ] && ! grep -q '"nan_output"' "$n.faults"; then
            why="${why:+$why; }no nan_output fault line in --faults"
        fi ;;
    esac
    # the report is written whole in every case, with the verdict of the exit status
    if [ -n "$PYTHON" ]; then
        v=$("$PYTHON" -c 'import json,sys; print(json.load(open(sys.argv[1]))["verdict"])' "$n.json" 2>/dev/null)
        case $want:$v in 0:pass | 1:fail | "2:could not check") ;;
        *) [ -n "$why" ] || why="JSON report verdict '$v' for exit $got" ;;
        esac
    fi
    if [ -z "$why" ]; then ok "$n"; else notok "$n" "$why${first:+; $first}"; fi
done
