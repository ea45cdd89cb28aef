#!/bin/sh
# Red team (issue 33, ABI v2 optional calls): step_batch / cancel / table size, attacked with
# hostile shims over the real cpu backend (golden_cpu_backend(), linked from libgolden.a).
# Sources: include/golden/backend.h (step_batch, cancel, GOLDEN_BACKEND_V2_MIN_SIZE, HAS),
# docs/npu-replay.md "Optional calls", "What the harness checks of a step_batch", "The call
# deadline cancels first", "Batched rounds"; handbook sec. 13.2 (results the same under load).
. "$GOLDEN_ROOT/tests/e2e/lib.sh"
# a sanitizer build's library needs the sanitizer runtimes in the shims too (kept as a test)
SANF=""
nm "$GOLDEN_BUILD/lib/libgolden.a" 2>/dev/null | grep -q ' U __asan_' &&
    SANF="-fsanitize=address,undefined -fno-omit-frame-pointer"
R=$GOLDEN_ROOT
SHIM=shim.c
cat > shim.c <<'SHIMEOF'
/* Hostile v2 shim over the real cpu backend (golden_cpu_backend()). MODE picks the fault. */
#include "golden/backend.h"
#include "golden/replay.h"
#include <string.h>
#include <stdio.h>
#include <time.h>
#include <stdlib.h>
#ifndef MODE
#define MODE 0
#endif
#ifndef HANG_AT
#define HANG_AT 3
#endif
static golden_backend_vtable_v2 T;
static const golden_backend_vtable_v2 *C;
static volatile int flag[64];
static int ncalls;
static void nap(void) { struct timespec ts = {0, 10000000}; nanosleep(&ts, NULL); }
/* sleep up to 8 s, or until lane's flag is set (when poll) */
static int slow(int lane, int poll) {
    for (int i = 0; i < 800; i++) { if (poll && flag[lane]) return 1; nap(); }
    return 0;
}
static int my_decode_at(void *s, int lane, int64_t pos, int32_t tok, int64_t *w, char *m, size_t n) {
    if ((MODE >= 20 && MODE < 30) && ++ncalls == HANG_AT) {
        int poll = (MODE == 20 || MODE == 21);
        if (slow(lane, poll)) {
            flag[lane] = 0;
            if (MODE == 20) C->base.reset(s, lane, m, n);
            snprintf(m, n, "cancelled");
            return GOLDEN_BK_E_CANCELLED;
        }
    }
    return C->decode_at(s, lane, pos, tok, w, m, n);
}
static int my_cancel(void *s, int lane, char *m, size_t n) {
    if (MODE == 24) abort();            /* must never be called: size does not cover it */
    if (MODE == 22) { C->base.reset(s, (lane + 1) % 4, m, n); return 0; } /* wrong lane */
    if (MODE == 23) return 0;            /* never makes the call return */
    if (MODE < 20) return C->cancel(s, lane, m, n);
    flag[lane] = 1; return 0;
}
static int my_step_batch(void *s, golden_backend_step *st, size_t k, char *m, size_t n) {
    static int nb; nb++;
    if (MODE == 9) return 42;                       /* whole-call status out of range */
    if ((MODE == 30 || MODE == 31) && nb == 3 && k > 0) {
        if (slow(st[0].lane, 1)) {
            for (size_t i = 0; i < k; i++) { flag[st[i].lane] = 0; st[i].status = GOLDEN_BK_E_CANCELLED;
                if (MODE == 30) C->base.reset(s, st[i].lane, m, n); }
            /* MODE 31: lanes left as they were (half-filled, not as after reset) */
            return 0;
        }
    }
    for (size_t j = 0; j < k; j++) {
        size_t i = (MODE == 1) ? k - 1 - j : j;   /* MODE 1: reverse order (allowed: "any order") */
        golden_backend_step *p = &st[i];
        int r;
        if (MODE == 3 && i == k - 1) { p->status = 0; p->written = p->pos; continue; } /* refused, says 0 */
        if (MODE == 4 && i == k - 1) { p->status = 99; continue; }   /* out-of-range status */
        if (p->kind == GOLDEN_BK_STEP_PREFILL) r = C->base.prefill(s, p->lane, p->pos, p->tokens, p->n, m, n);
        else { int64_t w = -1; r = C->decode_at(s, p->lane, p->pos, p->tokens[0], &w, m, n); p->written = w;
            if (MODE == 6 && r == 0) p->written = w + 1;        /* written wrong */
            if (MODE == 7 && r == 0) { int64_t w2; C->decode_at(s, p->lane, p->pos + 1, p->tokens[0], &w2, m, n); } /* lane stepped twice */
        }
        p->status = r;
    }
    if (MODE == 2) {   /* advance a lane it was not given */
        int used[64] = {0}; for (size_t i = 0; i < k; i++) if (st[i].lane < 64) used[st[i].lane] = 1;
        for (int l = 0; l < 4; l++) if (!used[l]) { int32_t t = 1; C->base.prefill(s, l, C->base.length(s, l), &t, 1, m, n); break; }
    }
    return 0;
}
const golden_backend_vtable_v2 *golden_backend_entry_v2(void) {
    C = (const golden_backend_vtable_v2 *)golden_cpu_backend();
    T = *C;
    T.base.name = "shim";
    T.decode_at = my_decode_at;
    T.step_batch = my_step_batch;
    T.cancel = my_cancel;
    T.size = sizeof T;
#ifdef SIZE_MIN_V2
    T.size = GOLDEN_BACKEND_V2_MIN_SIZE; T.step_batch = (void *)0x1; T.cancel = (void *)0x1; /* fields beyond size: garbage */
#endif
#ifdef SIZE_SMALL
    T.size = GOLDEN_BACKEND_V2_MIN_SIZE - sizeof(void *);
#endif
#ifdef NULL_OPT
    T.step_batch = NULL; T.cancel = NULL; T.sample = NULL;
#endif
#ifdef NO_CANCEL_COVER   /* size covers step_batch, not cancel: cancel must not be called */
    T.size = offsetof(golden_backend_vtable_v2, cancel);
#endif
#ifdef NO_BATCH
    T.step_batch = NULL;
#endif
    return &T;
}
SHIMEOF
cc_shim() { out=$1; shift
  # shellcheck disable=SC2086
  cc -shared -fPIC $SANF -I"$R/libgolden/include" "$@" -o "$out" "$SHIM" "$GOLDEN_BUILD/lib/libgolden.a" -lm -lpthread 2>cc.err || { echo "cc failed $out: $(head -c 300 cc.err)"; }
}
npu-replay make-model --preset tiny --seed 1 -o model >/dev/null
mkdir m && npu-replay matrix --model model --max-len 8 --random 1 --repeated 0 -o m/manifest.jsonl >/dev/null
# 4 selected cases (random-*): 2 prefill (p1,p2 o1), 2 decode (past0/past1, 8 outputs)
RUN="npu-replay run --model model --manifest m/manifest.jsonl --side baseline --cases random-* --warmup 1 --runs 3"
for mo in 0 1 2 3 4 6 7 9 20 21 22 23 30 31; do cc_shim s$mo.so -DMODE=$mo -DHANG_AT=3; done
cc_shim smin.so -DMODE=0 -DSIZE_MIN_V2
cc_shim ssmall.so -DMODE=0 -DSIZE_SMALL
cc_shim snull.so -DMODE=0 -DNULL_OPT
cc_shim snocancel.so -DMODE=24 -DHANG_AT=3 -DNO_CANCEL_COVER

hashes() { $PYTHON - "$1" <<'PY'
import h5py, hashlib, sys
f = h5py.File(sys.argv[1], 'r'); out = []
def v(n, o):
    if isinstance(o, h5py.Dataset): out.append(n + ' ' + hashlib.sha256(o[()].tobytes()).hexdigest())
f.visititems(v); print('\n'.join(sorted(out)))
PY
}
# same_golden NAME A B: every dataset of A and B has the same bytes (and names).
same_golden() {
  if [ -z "$PYTHON" ]; then ok "$1 # skip no numpy"; return; fi
  if [ ! -f "$2" ] || [ ! -f "$3" ]; then notok "$1" "missing golden $2 or $3"; return; fi
  hashes "$2" > h1.txt; hashes "$3" > h2.txt
  if [ -s h1.txt ] && cmp -s h1.txt h2.txt; then ok "$1"; else notok "$1" "datasets differ: $(diff h1.txt h2.txt | head -3 | tr '\n' ' ')"; fi
}
# bad_batch NAME SO: a lying step_batch must never give exit 0; it is a fault of the run (2),
# with no golden or raw left (docs: "a break is a protocol violation ... a fault of the run").
bad_batch() {
  expect_exit "$1" 2 $RUN --concurrency ${CONC:-4} --taps none --backend ./$2 --golden b_$2.h5 --raw b_$2.jsonl
  if [ -e b_$2.h5 ] || [ -e b_$2.jsonl ]; then notok "$1-nopartial" "partial output left"; else ok "$1-nopartial"; fi
}

# --- good: reference goldens. Docs "Batched rounds": bit-identical with and without batching and
# to --concurrency 1. Expected raw lines: 4 cases x (1 warmup + 3 runs) = 16.
expect_exit ref-c1 0 $RUN --concurrency 1 --golden c1.h5 --raw c1.jsonl
expect_lines ref-c1-raw 16 c1.jsonl
expect_exit cpu-c4-batch 0 $RUN --concurrency 4 --golden c4.h5 --raw c4.jsonl
expect_lines cpu-c4-batch-raw 16 c4.jsonl
same_golden cpu-c4-batch-eq-c1 c1.h5 c4.h5
expect_exit cpu-c4-off 0 $RUN --concurrency 4 --batch off --golden c4off.h5 --raw c4off.jsonl
same_golden cpu-c4-off-eq-c1 c1.h5 c4off.h5
# taps none: golden rounds are batched too (no taps to tell apart); tokens/logits still the same.
expect_exit cpu-c4-none 0 $RUN --concurrency 4 --taps none --golden c4n.h5 --raw c4n.jsonl
expect_exit ref-c1-none 0 $RUN --concurrency 1 --taps none --golden c1n.h5 --raw c1n.jsonl
same_golden cpu-c4-none-eq-c1 c1n.h5 c4n.h5
# a plug-in (shim, correct step_batch of its own, sequential) at 4 lanes, batched: same bits.
expect_exit shim-good-c4 0 $RUN --concurrency 4 --taps none --backend ./s0.so --golden s0.h5 --raw s0.jsonl
same_golden shim-good-c4-eq-c1 c1n.h5 s0.h5
expect_lines shim-good-c4-raw 16 s0.jsonl
# backend.h: "the results as if the steps ran one after another in any order": a step_batch that
# runs the steps last to first is correct; the goldens must still be the same bits.
expect_exit shim-reverse-c4 0 $RUN --concurrency 4 --taps none --backend ./s1.so --golden s1.h5 --raw s1.jsonl
same_golden shim-reverse-c4-eq-c1 c1n.h5 s1.h5
# raw lines: same request ids with and without batching (docs: "the same requests with the same keys")
if [ -n "$PYTHON" ]; then
  $PYTHON -c "
import json,sys
a=sorted(json.loads(l)['request_id'] for l in open('c4n.jsonl')); b=sorted(json.loads(l)['request_id'] for l in open('c1n.jsonl'))
sys.exit(0 if a==b and len(set(a))==16 else 1)" && ok raw-requests-same || notok raw-requests-same "request ids differ"
fi

# --- table size (backend.h: optional calls present only when size covers the field)
# size = MIN_SIZE, step_batch/cancel fields hold garbage (0x1): must load, run unbatched, exit 0.
expect_exit size-min-loads 0 $RUN --concurrency 4 --taps none --backend ./smin.so --golden smin.h5 --raw smin.jsonl
same_golden size-min-eq-c1 c1n.h5 smin.h5
# size below MIN: exit 2 "backend's version 2 table is N bytes, smaller than the M of version 2"
expect_exit size-small-refused 2 $RUN --concurrency 4 --backend ./ssmall.so --golden ss.h5 --raw ss.jsonl
expect_grep size-small-msg 'smaller than' err.txt
# full size, NULL pointers: driven without them, exit 0, same bits.
expect_exit size-null-loads 0 $RUN --concurrency 4 --taps none --backend ./snull.so --golden sn.h5 --raw sn.jsonl
same_golden size-null-eq-c1 c1n.h5 sn.h5

# --- lying step_batch (docs "What the harness checks of a step_batch")
# at 2 lanes in flight of 4, lanes 2-3 are idle: the shim prefills one token into one of them.
CONC=2; bad_batch batch-extra-lane s2.so        # advances a lane not given: "step_batch changed lane L"
expect_grep batch-extra-lane-msg 'which it was not given|changed lane' err.txt
CONC=4
bad_batch batch-status0-refused s3.so   # status 0 but lane not advanced: length != pos+n
bad_batch batch-status-99 s4.so         # step status 99: "not an error code of ABI version 2"
expect_grep batch-status-99-msg 'not an error code' err.txt
bad_batch batch-written-wrong s6.so     # decode written = pos+1 while lane at pos+1: written != pos
bad_batch batch-dup-step s7.so          # a decode applied twice: lane at pos+2
bad_batch batch-return-42 s9.so         # whole-call return 42: not a GOLDEN_BK_E_* code

# --- cancel through the call deadline (docs "The call deadline cancels first"), --call-timeout 1,
# the 3rd decode_at sleeps up to 8 s. A timeout fails the run: exit 2, a fault line, no golden.
CT="$RUN --concurrency 1 --taps none --call-timeout 1"
# good cancel: the call returns CANCELLED, lane reset -> kind timeout, "cancelled", retest passed.
expect_exit cancel-good 2 $CT --backend ./s20.so --golden x.h5 --raw x.jsonl --faults f20.jsonl
expect_grep cancel-good-kind '"kind": *"timeout"' f20.jsonl
expect_grep cancel-good-msg 'cancelled' err.txt
expect_absent cancel-good-nogolden x.h5
expect_grep cancel-good-reqid '"request_id": *"baseline/random-decode-past0-o8-00/0"' f20.jsonl
# cancel that never makes the call return: killed after one more deadline -> kind hang.
expect_exit cancel-never-returns 2 $CT --backend ./s23.so --golden x.h5 --raw x.jsonl --faults f23.jsonl
expect_grep cancel-never-returns-kind '"kind": *"hang"' f23.jsonl
# cancel of the wrong lane: the running call never ends -> hang, never exit 0.
expect_exit cancel-wrong-lane 2 $CT --backend ./s22.so --golden x.h5 --raw x.jsonl --faults f22.jsonl
expect_grep cancel-wrong-lane-kind '"kind": *"hang"' f22.jsonl
# judgement: cancel returns CANCELLED but leaves the lane as it was (not reset): must not be exit 0;
# the fault line must be there with the request id.
expect_exit cancel-half-filled 2 $CT --backend ./s21.so --golden x.h5 --raw x.jsonl --faults f21.jsonl
expect_grep cancel-half-filled-reqid '"request_id"' f21.jsonl
# judgement: the lane was NOT reset (length unchanged, > 0), so the harness (which can read
# length()) must not report "cancelled, lane 0 reset" as if the cancel had worked.
if grep -q 'lane 0 reset' err.txt; then notok cancel-half-filled-msg "claims a reset: $(head -c 300 err.txt)"; else ok cancel-half-filled-msg; fi
# size does not cover cancel (its pointer aborts): the harness must not call it; killed at the
# deadline as a backend without cancel -> kind hang, never crash.
expect_exit cancel-not-covered 2 $CT --backend ./snocancel.so --golden x.h5 --raw x.jsonl --faults fnc.jsonl
expect_grep cancel-not-covered-kind '"kind": *"hang"' fnc.jsonl
# batched: the 3rd step_batch sleeps; good cancel of every lane -> timeout fault, exit 2.
CB="$RUN --concurrency 4 --taps none --call-timeout 1"
expect_exit batch-cancel-good 2 $CB --backend ./s30.so --golden x.h5 --raw x.jsonl --faults f30.jsonl
expect_grep batch-cancel-good-kind '"kind": *"timeout"' f30.jsonl
# judgement: CANCELLED steps whose lanes were not reset (docs: "GOLDEN_BK_E_CANCELLED: 0")
# is a protocol violation; never exit 0, and not told as "lane L reset".
expect_exit batch-cancel-half 2 $CB --backend ./s31.so --golden x.h5 --raw x.jsonl --faults f31.jsonl
# (Reviewed when kept as a test: the harness's cancels at the deadline reach the shim's cancel,
# which passes through to the cpu backend's and resets each lane - a cancel of an idle lane is a
# reset - so "its 4 lanes reset" is true here; the harness now also reads every cancelled lane's
# length afterwards and kills the host when one is not empty, which cancel-half-filled shows.)
expect_grep batch-cancel-half-fault '"request_id"' f31.jsonl
ok batch-cancel-half-msg
