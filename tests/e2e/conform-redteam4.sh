#!/bin/sh
# Kept from the red team's script (session 4) as tests/e2e/conform-redteam4.sh, trimmed for time
# (~30 s plain): the two extra clean seeds and the three cases on the long golden (its manifest
# and reference run) are left out; the golden check's own cases are tests/e2e/conform-golden.sh.
# One case's expectation changed (shift-id0-selfchecks-blind, see there).
# Red team (session 4, AREA conform4): npu-replay conform against a fault-injecting shim.
# The shim (shim.c, written below from a heredoc; a copy lies beside this script)
# wraps the real cpu backend (golden_cpu_backend(), linked from the build's libgolden.a: the
# shared libgolden.so cannot be dlopen'd, "cannot allocate memory in static TLS block") behind
# the version 2 ABI (golden/backend.h) and perturbs logits(), logits_at(), topk() or the router
# taps; --backend-opt shim=NAME picks the fault (stripped before the cpu backend sees options).
# Sources: docs/conformance.md (the check table, "Against a reference", "Built tie and NaN"),
# handbook sections 5.1, 9-11, 15; issue 28.
. "$GOLDEN_ROOT/tests/e2e/lib.sh"
NR="$GOLDEN_BIN/npu-replay"

cat > shim.c <<'SHIM_EOF'
/* conform4 red-team shim: the real cpu backend (golden_cpu_backend() of libgolden.so) behind the
 * v2 ABI, with one fault chosen by --backend-opt shim=NAME (stripped before the cpu backend sees
 * the options). Faults perturb logits(), logits_at(), topk() or the router taps. */
#include "golden/backend.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
extern const golden_backend_vtable *golden_cpu_backend(void);
enum { F_NONE, F_BF16_LANE_LAST, F_BF16_DECODE, F_BF16_PAST100, F_SHIFT_DECODE, F_SHIFT_ID0,
       F_SHIFT_IDS_PAST100, F_TEMP_TWICE, F_REPPEN, F_TOPK39, F_TOPK48, F_TOPK128,
       F_R_NAN_DECODE, F_R_W_BF16_PAST100, F_R_LANE1_SWAP, F_R_BUCKET_SWAP, F_LOGITSAT_BF16,
       F_TOPK_CALL_SHIFT, F_SHIFT_DECODE_PAST300, F_R_PREFILL_LATE_SWAP, F_R_NAN_DECODE_NONTIE, F_R_DECODE_SWAP_ALL, F_R_PREFILL_SWAP_ALL };
static const char *names[] = {"none", "bf16_lane_last", "bf16_decode", "bf16_past100",
    "shift_decode", "shift_id0", "shift_ids_past100", "temp_twice", "reppen", "topk39", "topk48",
    "topk128", "r_nan_decode", "r_w_bf16_past100", "r_lane1_swap", "r_bucket_swap",
    "logitsat_bf16", "topk_call_shift", "shift_decode_past300", "r_prefill_late_swap", "r_nan_decode_nontie", "r_decode_swap_all", "r_prefill_swap_all", NULL};
#define MAXL 64
typedef struct {
    void *in; int fault; golden_backend_hooks h; int have_h; golden_backend_info info;
    int cur_lane, cur_decode; int64_t cur_pos; int64_t cur_n;
    int last_decode[MAXL]; int32_t last_tok[MAXL];
} S;
static const golden_backend_vtable_v2 *R;
static float bf16r(float x) { /* round to nearest even bf16 */
    uint32_t u; memcpy(&u, &x, 4);
    if ((u & 0x7f800000u) == 0x7f800000u) return x;
    u += 0x7fffu + ((u >> 16) & 1u); u &= 0xffff0000u; memcpy(&x, &u, 4); return x;
}
static float getv(const S *s, const void *d, int i) {
    if (s->info.logits_dtype == GOLDEN_BK_BF16) { uint32_t u = (uint32_t)((const uint16_t *)d)[i] << 16; float f; memcpy(&f, &u, 4); return f; }
    return ((const float *)d)[i];
}
static void setv(const S *s, void *d, int i, float f) {
    if (s->info.logits_dtype == GOLDEN_BK_BF16) { f = bf16r(f); uint32_t u; memcpy(&u, &f, 4); ((uint16_t *)d)[i] = (uint16_t)(u >> 16); }
    else ((float *)d)[i] = f;
}
static int cmpdesc(const void *a, const void *b) { float x = *(const float *)a, y = *(const float *)b; return (x < y) - (x > y); }
/* the row [first, first+count) of the lane's logits at pos; is_dec: the last call was a decode */
static void perturb(S *s, int lane, int64_t pos, int is_dec, int first, int count, void *dst) {
    int f = s->fault;
    if (f == F_TOPK39 || f == F_TOPK48 || f == F_TOPK128) {
        int k = f == F_TOPK39 ? 39 : f == F_TOPK48 ? 48 : 128;
        int V = s->info.vocab_size; float *all = malloc(sizeof(float) * V), *srt = malloc(sizeof(float) * V);
        char m[64]; R->base.logits(s->in, lane, 0, V, s->info.logits_dtype == GOLDEN_BK_BF16 ? (void *)srt : (void *)all, m, sizeof m);
        if (s->info.logits_dtype == GOLDEN_BK_BF16) { for (int i = 0; i < V; i++) all[i] = getv(s, srt, i); }
        memcpy(srt, all, sizeof(float) * V); qsort(srt, V, sizeof(float), cmpdesc);
        float thr = srt[k - 1]; int above = 0; for (int i = 0; i < V; i++) if (all[i] > thr) above++;
        int eq_keep = k - above; /* lower index first among equal */
        for (int i = 0; i < V; i++) {
            int keep = all[i] > thr || (all[i] == thr && eq_keep-- > 0);
            if (!keep) all[i] = -INFINITY;
        }
        for (int i = 0; i < count; i++) setv(s, dst, i, all[first + i]);
        free(all); free(srt); return;
    }
    for (int i = 0; i < count; i++) {
        int id = first + i; float v = getv(s, dst, i), o = v;
        switch (f) {
        case F_BF16_LANE_LAST: if (lane == s->info.num_lanes - 1) v = bf16r(v); break;
        case F_BF16_DECODE: if (is_dec) v = bf16r(v); break;
        case F_BF16_PAST100: if (pos >= 100) v = bf16r(v); break;
        case F_SHIFT_DECODE: if (is_dec) v += 0x1p-10f; break;
        case F_SHIFT_DECODE_PAST300: if (is_dec && pos >= 300) v += 0x1p-10f; break;
        case F_SHIFT_ID0: if (id == 0) v += 1.0f / 64; break;
        case F_SHIFT_IDS_PAST100: if (pos >= 100 && id % 8 == 3) v += 1.0f / 32; break;
        case F_TEMP_TWICE: v = v / 0.8f; break;
        case F_REPPEN: if (id == s->last_tok[lane]) v = v > 0 ? v / 1.1f : v * 1.1f; break;
        default: break;
        }
        if (v != o) setv(s, dst, i, v);
    }
}
static int w_open(const golden_backend_open_args *a, void **self, char *msg, size_t n) {
    R = (const golden_backend_vtable_v2 *)golden_cpu_backend();
    if (!R || R->base.abi_version != 2) { snprintf(msg, n, "shim: cpu backend is not v2"); return GOLDEN_BK_E_OTHER; }
    S *s = calloc(1, sizeof *s); const char **k = calloc(a->n_opts + 1, sizeof *k), **v = calloc(a->n_opts + 1, sizeof *v);
    size_t m = 0;
    for (size_t i = 0; i < a->n_opts; i++) {
        if (!strcmp(a->keys[i], "shim")) {
            int j; for (j = 0; names[j] && strcmp(names[j], a->values[i]); j++) {}
            if (!names[j]) { snprintf(msg, n, "shim: unknown fault %s", a->values[i]); return GOLDEN_BK_E_INVALID; }
            s->fault = j;
        } else { k[m] = a->keys[i]; v[m] = a->values[i]; m++; }
    }
    golden_backend_open_args b = *a; b.n_opts = m; b.keys = k; b.values = v;
    int rc = R->base.open(&b, &s->in, msg, n);
    if (rc) { free(s); return rc; }
    rc = R->base.info(s->in, &s->info, msg, n);
    if (rc) return rc;
    for (int i = 0; i < MAXL; i++) s->last_tok[i] = -1;
    *self = s; return 0;
}
static void w_close(void *self) { S *s = self; R->base.close(s->in); free(s); }
static int w_info(void *self, golden_backend_info *o, char *msg, size_t n) {
    S *s = self; int rc = R->base.info(s->in, o, msg, n); if (!rc) o->version = 2; return rc; }
static int w_tap(void *ctx, const char *name, int layer, int dtype, int64_t rows, int64_t cols, const void *data) {
    S *s = ctx; int f = s->fault; const char *r = strstr(name, "/router/");
    if (!s->h.tap) return 0;
    if (!r || f < F_R_NAN_DECODE || (f > F_R_PREFILL_LATE_SWAP && f < F_R_NAN_DECODE_NONTIE))
        return s->h.tap(s->h.ctx, name, layer, dtype, rows, cols, data);
    size_t esz = 4; void *c = malloc((size_t)(rows * cols) * esz + 8); memcpy(c, data, (size_t)(rows * cols) * esz);
    int dec = s->cur_decode;
    for (int64_t row = 0; row < rows; row++) {
        int64_t pos = s->cur_pos + row;
        if (f == F_R_NAN_DECODE && dec && !strcmp(r, "/router/logits")) ((float *)c)[row * cols] = NAN;
        if (f == F_R_NAN_DECODE_NONTIE && dec && !strcmp(r, "/router/logits")) {
            int nz = 0; for (int64_t j = 0; j < cols; j++) if (((float *)c)[row * cols + j] != 0.0f) nz = 1;
            if (nz) ((float *)c)[row * cols] = NAN;
        }
        if (f == F_R_W_BF16_PAST100 && dec && pos >= 100 && !strcmp(r, "/router/topk_weights"))
            for (int64_t j = 0; j < cols; j++) ((float *)c)[row * cols + j] = bf16r(((float *)c)[row * cols + j]);
        int swap = (f == F_R_LANE1_SWAP && dec && s->cur_lane == 1) ||
                   (f == F_R_BUCKET_SWAP && dec && pos >= 300 && pos < 500) ||
                   (f == F_R_PREFILL_LATE_SWAP && !dec && pos >= 100) ||
                   (f == F_R_DECODE_SWAP_ALL && dec) || (f == F_R_PREFILL_SWAP_ALL && !dec);
        if (swap && cols >= 2 && (!strcmp(r, "/router/topk_ids") || !strcmp(r, "/router/topk_weights"))) {
            if (!strcmp(r, "/router/topk_ids")) { int32_t *p = (int32_t *)c + row * cols, t = p[0]; p[0] = p[1]; p[1] = t; }
        }
    }
    int rc = s->h.tap(s->h.ctx, name, layer, dtype, rows, cols, c); free(c); return rc;
}
static void w_mark(void *ctx, int st, int e, uint64_t ns) { S *s = ctx; if (s->h.mark) s->h.mark(s->h.ctx, st, e, ns); }
static int w_set_hooks(void *self, const golden_backend_hooks *h, char *msg, size_t n) {
    S *s = self; golden_backend_hooks in = {0};
    if (h) { s->h = *h; s->have_h = 1; in.ctx = s; in.tap = h->tap ? w_tap : NULL; in.mark = h->mark ? w_mark : NULL; in.want_taps = h->want_taps; }
    else memset(&s->h, 0, sizeof s->h);
    return R->base.set_hooks(s->in, h ? &in : NULL, msg, n);
}
static void begin(S *s, int lane, int64_t pos, int dec, int64_t n) { s->cur_lane = lane; s->cur_pos = pos; s->cur_decode = dec; s->cur_n = n; }
static void done(S *s, int lane, int dec, int32_t tok) { if (lane >= 0 && lane < MAXL) { s->last_decode[lane] = dec; s->last_tok[lane] = tok; } }
static int w_prefill(void *self, int lane, int64_t pos, const int32_t *t, size_t n, char *msg, size_t ml) {
    S *s = self; begin(s, lane, pos, 0, (int64_t)n); int rc = R->base.prefill(s->in, lane, pos, t, n, msg, ml);
    if (!rc && n) done(s, lane, 0, t[n - 1]); return rc; }
static int w_decode(void *self, int lane, int32_t tok, char *msg, size_t ml) {
    S *s = self; begin(s, lane, R->base.length(s->in, lane), 1, 1); int rc = R->base.decode(s->in, lane, tok, msg, ml);
    if (!rc) done(s, lane, 1, tok); return rc; }
static int w_logits(void *self, int lane, int first, int count, void *dst, char *msg, size_t ml) {
    S *s = self; int rc = R->base.logits(s->in, lane, first, count, dst, msg, ml);
    if (!rc && lane >= 0 && lane < MAXL) perturb(s, lane, R->base.length(s->in, lane) - 1, s->last_decode[lane], first, count, dst);
    return rc; }
static int w_truncate(void *self, int lane, int64_t len, char *msg, size_t ml) { S *s = self; return R->base.truncate(s->in, lane, len, msg, ml); }
static int w_reset(void *self, int lane, char *msg, size_t ml) { S *s = self; return R->base.reset(s->in, lane, msg, ml); }
static int64_t w_length(void *self, int lane) { S *s = self; return R->base.length(s->in, lane); }
static int w_decode_at(void *self, int lane, int64_t pos, int32_t tok, int64_t *wr, char *msg, size_t ml) {
    S *s = self; begin(s, lane, pos, 1, 1); int rc = R->decode_at(s->in, lane, pos, tok, wr, msg, ml);
    if (!rc) done(s, lane, 1, tok); return rc; }
static int w_prefill_keep(void *self, int lane, int64_t pos, const int32_t *t, size_t n, const int64_t *keep, size_t nk, char *msg, size_t ml) {
    S *s = self; begin(s, lane, pos, 0, (int64_t)n); int rc = R->prefill_keep(s->in, lane, pos, t, n, keep, nk, msg, ml);
    if (!rc && n) done(s, lane, 0, t[n - 1]); return rc; }
static int w_logits_at(void *self, int lane, int64_t pos, int first, int count, void *dst, char *msg, size_t ml) {
    S *s = self; int rc = R->logits_at(s->in, lane, pos, first, count, dst, msg, ml);
    if (!rc && s->fault == F_LOGITSAT_BF16) for (int i = 0; i < count; i++) setv(s, dst, i, bf16r(getv(s, dst, i)));
    else if (!rc && s->fault != F_LOGITSAT_BF16 && lane >= 0 && lane < MAXL && s->fault < F_TOPK39)
        perturb(s, lane, pos, s->last_decode[lane] && pos == R->base.length(s->in, lane) - 1, first, count, dst);
    return rc; }
static int w_topk(void *self, int lane, int k, float *vals, int32_t *idx, char *msg, size_t ml) {
    S *s = self; int rc = R->topk(s->in, lane, k, vals, idx, msg, ml);
    if (!rc && s->fault == F_TOPK_CALL_SHIFT && k > 0) vals[0] += 1.0f / 16;
    return rc; }
static golden_backend_vtable_v2 VT;
const golden_backend_vtable_v2 *golden_backend_entry_v2(void) {
    VT.base.abi_version = 2; VT.base.name = "conform4-shim"; VT.base.open = w_open; VT.base.close = w_close;
    VT.base.info = w_info; VT.base.set_hooks = w_set_hooks; VT.base.prefill = w_prefill; VT.base.decode = w_decode;
    VT.base.logits = w_logits; VT.base.truncate = w_truncate; VT.base.reset = w_reset; VT.base.length = w_length;
    VT.size = sizeof VT; VT.flags = 0; VT.decode_at = w_decode_at; VT.prefill_keep = w_prefill_keep;
    VT.logits_at = w_logits_at; VT.topk = w_topk; return &VT;
}
SHIM_EOF
# build the shim against the build's static library
LIBS=$(pkg-config --libs hdf5-serial yaml-0.1 jansson libcrypto libpcre2-8 zlib icu-uc 2>/dev/null)
# a sanitizer build's library needs the sanitizer runtimes in the shim too
SANF=""
nm "$GOLDEN_BUILD/lib/libgolden.a" 2>/dev/null | grep -q ' U __asan_' &&
    SANF="-fsanitize=address,undefined -fno-omit-frame-pointer"
# shellcheck disable=SC2086
if ! cc -O1 -shared -fPIC $SANF -I"$GOLDEN_ROOT/libgolden/include" -o shim.so shim.c \
        "$GOLDEN_BUILD/lib/libgolden.a" -Wl,--exclude-libs,ALL -Wl,-Bsymbolic $LIBS -lm -pthread 2> cc.txt; then
    notok shim-build "$(head -c 400 cc.txt)"; exit 0
fi
SHIM=./shim.so  # each case folder links it
"$NR" make-model --preset tiny --seed 1 -o m > /dev/null 2>&1 || { notok make-model; exit 0; }
"$NR" matrix --model m --max-len 32 --random 2 --repeated 0 -o man.jsonl > /dev/null 2>&1
# goldens of the clean cpu reference (docs/conformance.md "Against a reference"), made side by side
"$NR" run --model m --manifest man.jsonl --side baseline --golden ref.h5 --raw ref.raw > /dev/null 2>&1 &
"$NR" run --model m --backend-opt dtype=bf16 --manifest man.jsonl --side baseline --golden refbf.h5 --raw refbf.raw > /dev/null 2>&1 &
wait
for f in ref.h5 refbf.h5; do [ -s $f ] || notok "golden-$f" "npu-replay run made no $f"; done

# the cheap checks (kv-tail alone takes 4.6 s here, causal-mask 9 s, kv-positions 5-7 s)
QUICK=kv-lanes,kv-reset,rejection,router,taps,determinism,sampling-topk

# Cases run six at a time (the machine is shared and slow), each in its own folder; results
# are printed in order at the end. CASES counts them.
CASES=0; mkdir -p res
_spawn() { # NUM then the body's arguments
    _k=$1; shift
    mkdir -p "c$_k" && ( cd "c$_k" && ln -s ../m m && ln -s ../shim.so shim.so && for g in ref.h5 refbf.h5; do ln -s ../$g $g; done; "$@" ) > "res/$_k" 2>&1 &
    if [ $((CASES % 6)) -eq 0 ]; then wait; fi
}
# bad NAME CHECK ARGS...: conform must exit 1 and the table row of CHECK must say FAIL
_bad() {
    _n=$1; _c=$2; shift 2
    "$NR" conform -j1 --model m "$@" > out.txt 2> err.txt; _got=$?
    if [ "$_got" -ne 1 ]; then notok "$_n" "exit $_got, wanted 1 ($_c should fail): $(grep -Ei ' (pass|fail|error) ' out.txt | tr -s ' ' | tr '\n' ';' | head -c 300) $(head -c 200 err.txt)"
    elif ! grep -Eqi "^$_c +fail" out.txt; then notok "$_n" "exit 1 but $_c not failed: $(tr '\n' ';' < out.txt | head -c 300)"
    else ok "$_n"; fi
}
bad() { CASES=$((CASES + 1)); _spawn $CASES _bad "$@"; }
# good NAME ARGS...: conform must exit 0
_good() { _n=$1; shift; expect_exit "$_n" 0 "$NR" conform -j1 --model m "$@"; }
good() { CASES=$((CASES + 1)); _spawn $CASES _good "$@"; }
# status NAME WANT ARGS...: conform must exit WANT
status() { CASES=$((CASES + 1)); _n=$1; _w=$2; shift 2; _spawn $CASES expect_exit "$_n" "$_w" "$NR" conform -j1 --model m "$@"; }

# ---------------- clean runs that must pass (issue 28: "no false alarm on the cpu backend in f32
# and bf16, across seeds"; conformance.md: "The clean backend passes all ... at several seeds").
# causal-mask and kv-positions (and kv-tail but once) are left out for time (9 s and 5-7 s here; their clean runs are
# tests/e2e/npu-replay-conform.sh's).
good clean-f32-seed0 --checks $QUICK,kv-tail
good clean-bf16-seed3 --backend-opt dtype=bf16 --checks $QUICK --seed 3
# The shim with no fault must be transparent (else every fault case below proves nothing).
good shim-none-clean --backend $SHIM --backend-opt shim=none --checks $QUICK --seed 5
# conformance.md "Bounds": "the cpu backend against its own golden gives 0 and 0, in f32 and in bf16"
good golden-clean-f32 --checks golden --golden ref.h5
good golden-clean-bf16 --backend-opt dtype=bf16 --checks golden --golden refbf.h5
# conformance.md red-team table: "an NPU top-128" is a clean run (128 >= the 40 that top_k 40 needs)
good sampling-npu-top128 --backend $SHIM --backend-opt shim=topk128 --checks sampling-topk

# ---------------- logits faults
# bf16_lane_last: the last lane's logits rounded to bf16 (nearest even) in an f32 backend: a lane
# with its own output conversion. kv-lanes compares every lane's every step with lane 0 of a fresh
# instance, bitwise (conformance.md, kv-lanes row; "Comparisons are bitwise by default").
bad bf16-last-lane kv-lanes --backend $SHIM --backend-opt shim=bf16_lane_last --checks kv-lanes
# bf16_decode: decode-step logits only rounded to bf16 (a decode graph with a bf16 output cast).
# kv-positions compares the decode path with one-shot prefills (bitwise); --max-context 160 for
# time (the default budget is kept), the fault is at every position.
bad bf16-decode-only kv-positions --backend $SHIM --backend-opt shim=bf16_decode --checks kv-positions --max-context 160
# shift_decode: every decode-step logit + 2^-10 (softmax-invariant, so only bitwise checks see it).
# rejection: "a decode into the last position ... equals the prefill of the limit".
bad shift-decode-rejection rejection --backend $SHIM --backend-opt shim=shift_decode --checks rejection
# shift_decode_past300: the same shift on decode steps at position >= 300 only (a decode graph
# for a long-context bucket). rejection's decode at 511 against the prefill of 512 sees it.
bad shift-decode-past300 rejection --backend $SHIM --backend-opt shim=shift_decode_past300 --checks rejection
# bf16_decode against a golden: the golden check decodes each golden token (teacher forcing);
# bf16 rounding of f32 logits gives KL ~1e-5 (conformance.md: logits_bf16_truncate 5e-6..1.6e-5,
# round-to-nearest is the same order) > the default 1e-6.
bad golden-bf16-decode golden --backend $SHIM --backend-opt shim=bf16_decode --checks golden --golden ref.h5
# shift_id0: logit of id 0 + 1/64 on every path: self-consistent; |log-softmax diff| at id 0 is
# ~1/64 = 0.0156 > 1e-3 (worked by hand: log-softmax(x)_0 moves by d*(1-p0), p0 ~ 1/512).
bad golden-shift-id0 golden --backend $SHIM --backend-opt shim=shift_id0 --checks golden --golden ref.h5
# ... and its self-consistency counterpart: every path shares it, so the quick checks pass
# (conformance.md: "Self-consistency cannot see a fault that every path shares").
# Changed after the fix: kv-lanes now compares topk() with logits(), and the shim shifts
# logits() and logits_at() but not topk(), so the fault is no longer shared by every path and
# kv-lanes fails (rightly); the blind case keeps the checks that read logits() alone.
good shift-id0-selfchecks-blind --backend $SHIM --backend-opt shim=shift_id0 --checks determinism,router
bad shift-id0-topk-differs kv-lanes --backend $SHIM --backend-opt shim=shift_id0 --checks kv-lanes
# the same shift in a bf16 backend, held to a bf16 golden of the reference (the bounds say
# "judge a bf16 device against a bf16 golden of the reference"); 1/64 survives bf16 rounding for
# |x| < 2 (bf16 step there <= 2^-7 ... the shift is 2 steps at |x| in [1,2), more below).
bad golden-bf16-shift-id0 golden --backend $SHIM --backend-opt dtype=bf16 --backend-opt shim=shift_id0 --checks golden --golden refbf.h5
# ---------------- sampling (section 15). The ABI has no sampling call (conformance.md "Not done
# yet"), so a device-side sampler fault can only show when it leaks into the logits. These cases
# put the sampler's transformations into logits() where a vendor's fused sampler would.
# temp_twice: the device divides logits by temperature 0.8 and the host does it again: logits x1.25;
# KL of a 1.25x temperature change is far above 1e-6 (numpy on a random 512 row: ~1e-3).
bad sampling-temp-twice golden --backend $SHIM --backend-opt shim=temp_twice --checks golden --golden ref.h5
# reppen: the device applies a 1.1 repetition penalty to the last input token (the wrong tokens:
# the host sampler is the one that applies it, over the last 64): that logit /1.1 or x1.1.
bad sampling-reppen-wrong-token golden --backend $SHIM --backend-opt shim=reppen --checks golden --golden ref.h5
# topk39: an NPU top-k output mode one token short of top_k 40 ("the settings need k >= 40").
bad sampling-topk-off-by-one sampling-topk --backend $SHIM --backend-opt shim=topk39 --checks sampling-topk
# topk48 under --sampling top_k=64: needs k >= 64 on the tiny model (flat logits: top-p 0.95 keeps
# nearly all 64), 48 is short.
bad sampling-topk48-vs-64 sampling-topk --backend $SHIM --backend-opt shim=topk48 --checks sampling-topk --sampling top_k=64

# ---------------- router faults (taps altered only: the logits stay right, as in the docs'
# router_decode_rank_swap). conformance.md router row: every layer's topk_ids against the
# reference rule on the backend's own router/logits, in id and order; weights within --router-tol.
# r_nan_decode: on decode steps a NaN in router/logits (expert 0) while topk is reported as if
# nothing happened (a NaN in a tap the router ran on silently). "tap comparisons count NaN as a
# difference"; the reference rule on a NaN logit must be an error ("is nan: not routed").
# r_nan_decode_nontie: the same NaN, but not on a row whose router logits are all exactly 0 (so
# the check's built tie is untouched and only the silently routed NaN is left to judge).
bad router-nan-tap-decode-nontie router --backend $SHIM --backend-opt shim=r_nan_decode_nontie --checks router
# judgement: r_nan_decode as it is (the NaN also lands in the built tie's decode row). The check
# prints the findings "router logit 0 is nan and the token was routed anyway" at positions 64-71,
# then calls the whole check "could not run" because the tie did not tie: exit 2. conformance.md:
# "a failure wins over a check that could not run"; a demanding user expects the findings to be
# a verdict, exit 1.
bad router-nan-tap-decode router --backend $SHIM --backend-opt shim=r_nan_decode --checks router
# r_w_bf16_past100: decode steps from position 100: topk weights rounded to bf16 in an f32 backend:
# error up to 2^-9 relative (~1e-3 for weight 0.5) > router-tol 1e-5 ("2^-7 with bf16 logits" only).
bad router-weights-bf16-decode-past100 router --backend $SHIM --backend-opt shim=r_w_bf16_past100 --checks router
# Controls proving the shim's swap is real and visible to the router check: the same rank 0/1
# swap of topk_ids on every decode step, and on every prefill row (the docs' router_decode_rank_swap
# is caught by router). The three judgement cases below then differ only in where the swap is.
bad router-decode-swap-all-control router --backend $SHIM --backend-opt shim=r_decode_swap_all --checks router
bad router-prefill-swap-all-control router --backend $SHIM --backend-opt shim=r_prefill_swap_all --checks router
# judgement: r_lane1_swap: on lane 1's decode steps ranks 0 and 1 of topk_ids swapped (a lane with
# its own decode graph). Issue 28: "Lanes: every lane the backend declares"; the router row does
# not say lane 0 only; a demanding user expects router taps of another lane to be held too.
bad router-lane1-decode-swap router --backend $SHIM --backend-opt shim=r_lane1_swap --checks router
# judgement: r_bucket_swap: decode steps at positions 300-499 swap ranks 0 and 1 (a decode graph
# of a 300-499 context bucket). The router decodes at 127-129, 255-257 and 511 only; handbook
# 5.1/issue 28 ask for a seeded random sample of further positions "each run" as well.
bad router-decode-bucket-300 router --backend $SHIM --backend-opt shim=r_bucket_swap --checks router
# judgement: r_prefill_late_swap: a prefill's rows from position 100 on swap ranks 0 and 1 (a long
# prefill tile's top-k). The router's prefill is 64 tokens; a demanding user expects the prefill
# graph to be held past the first tiles as the decode is (127-129, 255-257, last).
bad router-prefill-rows-past100 router --backend $SHIM --backend-opt shim=r_prefill_late_swap --checks router

# ---------------- the v2 calls beside logits()
# judgement: logitsat_bf16: logits_at() (prefill_keep's kept rows: the scoring path) rounds to
# bf16 while logits() is exact. backend.h makes logits_at of "the last processed one" the same
# row as logits(); a demanding user expects conform to hold it (exit 1 from some check).
# Proven real by hand (not in this script, for time): `npu-replay score` through the shim with
# shim=logitsat_bf16 gives nll_sum 1020.8655 against 1020.8871 with shim=none on the same
# manifest, so the scoring path reads logits_at and its numbers change.
status logits-at-bf16-unchecked 1 --backend $SHIM --backend-opt shim=logitsat_bf16 --checks kv-lanes,rejection,determinism,sampling-topk
# judgement: topk_call_shift: topk() (the top-k output mode) returns values[0] + 1/16: backend.h
# says its values are "exact conversions of info.logits_dtype" of the largest logits; sampling-topk
# reads logits() only; a demanding user expects the top-k mode itself to be checked.
status topk-call-wrong-values 1 --backend $SHIM --backend-opt shim=topk_call_shift --checks kv-lanes,determinism,sampling-topk

# ---------------- exit 2 cases
# conformance.md: "named in --checks without --golden it cannot run (exit 2)".
status golden-without-file 2 --checks golden
# conformance.md: "a plug-in that dies in open ... exits 2 with no table and no report".
_openfail() { expect_exit shim-open-fails 2 "$NR" conform --model m --backend ./shim.so --backend-opt shim=bogus --checks taps --json rep.json
    expect_absent shim-open-fails-no-report rep.json; }
CASES=$((CASES + 1)); _spawn $CASES _openfail
wait
_i=1; while [ $_i -le $CASES ]; do cat "res/$_i"; _i=$((_i + 1)); done
