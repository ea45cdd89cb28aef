#!/bin/sh
# Red-team pass over npu-replay with hostile vendor plug-ins (issue 27), written from the
# handbook, docs and backend.h alone, without reading the code: 65 cases, 43 got through the
# in-process harness. Adapted where issue 27 set a contract: --call-timeout bounds the hang
# cases, and a FIFO in a model folder is refused.
# Red-team cases for npu-replay (run, conform, matrix, make-model) driven through hostile vendor
# plug-ins that implement the public ABI (libgolden/include/golden/backend.h), and hostile inputs
# for the built-in cpu backend. Written from the handbook (sections 5, 9, 10, 11, 15), the
# architecture sketch, contracts.md, docs/npu-replay.md, docs/conformance.md and docs/cli.md only.
#
# The rule most cases lean on (shared/docs/architecture.md, last paragraph): "a vendor runtime
# plug-in is loaded into a backend host process of its own, so that its crash, hang or `exit` is
# a recorded fault and never the harness's exit status". With docs/npu-replay.md: "2 could not
# run (... a backend error)", "A backend error mid-run fails the whole run (exit 2 naming case
# and request)", "Outputs appear whole or not at all (temporary file, then rename)", and
# conformance.md: conform exits 0 only when every selected check passed, 1 a check failed, 2 some
# check could not run. So a plug-in that exits, crashes or hangs must give `run` exit 2 with no
# golden, raw or temporary file left, `conform` exit 1 or 2 (never 0), `matrix` exit 2 and no
# manifest.
#
# Every command is bounded by `timeout 30`; the hang cases by `timeout -k 2 20` (no doc names a
# timeout option: docs/npu-replay.md even says a call that never returns is not detected, which
# contradicts the architecture rule; the brief counts a hang not stopped by the harness as not ok).
# The hang cases run in the background from the start so the script stays under 60 s.
. "$GOLDEN_ROOT/tests/e2e/lib.sh"

T="timeout 30"
INC="$GOLDEN_ROOT/libgolden/include"
TOP=$(pwd)
# why FILE [N]: the first N (300) bytes of FILE on one printable line (for a "not ok" reason).
why() { head -c "${2:-300}" "$1" 2>/dev/null | LC_ALL=C tr -c ' -~' '?'; }

# ---------------------------------------------------------------------------------------------
# The hostile plug-in: one toy backend (vocabulary 512, context 512, 4 lanes, 2 layers of 64,
# taps attn_out/mlp_out/hidden whose row p depends on tokens 0..p only, marks h2d/npu_wait/d2h),
# whose next token is (sum_i tok[i]*(i+1) + len) mod 512 with logit 2.0 and every other logit in
# [-0.5, 0.5). -DAT=<call> -DDO=<misdeed> makes one entry point misbehave.
cat > hostile.c <<'EOF'
#include "golden/backend.h"
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

enum { C_NONE, C_OPEN, C_INFO, C_HOOKS, C_PREFILL, C_DECODE, C_LOGITS, C_TRUNC, C_RESET,
       C_LENGTH, C_CLOSE };
enum { D_NONE, D_EXIT, D__EXIT, D_SEGV, D_ABORT, D_HANG, D_HANG_NOTERM, D_MSG_OVERFLOW,
       D_MSG_ANSI, D_STDOUT, D_CHDIR, D_FAIL };
#ifndef AT
#define AT C_NONE
#endif
#ifndef DO
#define DO D_NONE
#endif
#ifdef EVIL_NAME
#define NAME "\x1b]0;owned\x07\x1b[31mevil\xff\xfe-npu\x1b[0m"
#endif
#ifndef NAME
#define NAME "toy-npu"
#endif
#ifndef VOCAB
#define VOCAB 512
#endif
#ifndef LOGITS_DTYPE
#define LOGITS_DTYPE GOLDEN_BK_F32
#endif
#ifndef LOGITS_KIND /* 0 clean, 1 every entry NaN, 2 every entry -inf */
#define LOGITS_KIND 0
#endif
#ifndef ELSEWHERE
#define ELSEWHERE "/"
#endif
#define V 512
#define CTX 512
#define LANES 4
#define HID 64
#define LAYERS 2

typedef struct {
    int32_t tok[LANES][CTX];
    int64_t len[LANES];
    golden_backend_hooks hooks;
} toy;

static void say(char *msg, size_t n, const char *s) { if (msg && n) snprintf(msg, n, "%s", s); }

static int hostile(int call, char *msg, size_t n)
{
    if (call != AT)
        return 0;
    switch (DO) {
    case D_NONE: return 0;
    case D_EXIT: exit(0);
    case D__EXIT: _exit(0);
    case D_SEGV: { volatile int *p = NULL; *p = 1; raise(SIGSEGV); return 1; }
    case D_ABORT: abort();
    case D_HANG: alarm(25); for (;;) pause();
    case D_HANG_NOTERM:
        signal(SIGTERM, SIG_IGN); signal(SIGINT, SIG_IGN); signal(SIGHUP, SIG_IGN);
        alarm(25); for (;;) pause();
    case D_MSG_OVERFLOW: /* ignores msg_len: 64 KiB into the harness's buffer */
        if (msg) { memset(msg, 'A', 65536); msg[65535] = 0; }
        return 1;
    case D_MSG_ANSI:
        say(msg, n, "\x1b[2J\x1b[31m\x1b]0;owned\x07 device \xff\xfe\xc0\xaf broken\r\n"
                    "npu-replay: all checks passed\x1b[0m");
        return 1;
    case D_STDOUT:
        printf("PLUGIN-NOISE printf\n"); fflush(stdout);
        if (write(1, "PLUGIN-NOISE write\n", 19) < 0) return 0;
        return 0;
    case D_CHDIR:
        if (chdir(ELSEWHERE) != 0) return 0;
        return 0;
    case D_FAIL:
        say(msg, n, "device error in this call");
        return 1;
    }
    return 0;
}

static uint64_t now_ns(void)
{
    struct timespec ts; clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}
static void mark(toy *t, int stage, int end)
{
    if (t->hooks.mark) t->hooks.mark(t->hooks.ctx, stage, end, now_ns());
}
static int target(const toy *t, int lane)
{
    uint64_t h = (uint64_t)t->len[lane];
    for (int64_t i = 0; i < t->len[lane]; i++) h += (uint64_t)t->tok[lane][i] * (uint64_t)(i + 1);
    return (int)(h % V);
}
static float noise(uint64_t a, uint64_t b)
{
    uint64_t x = a * 0x9e3779b97f4a7c15ull ^ (b + 0x632be59bd9b4e019ull);
    x ^= x >> 29; x *= 0xbf58476d1ce4e5b9ull; x ^= x >> 32;
    return (float)((double)(x >> 40) / (double)(1ull << 24)) - 0.5f;
}
static int taps(toy *t, int lane, int64_t pos, int64_t n, char *msg, size_t msgn)
{
    static float buf[CTX * HID];
    static const char *names[3] = {"attn_out", "mlp_out", "hidden"};
    if (!t->hooks.tap || !t->hooks.want_taps) return 0;
    for (int L = 0; L < LAYERS; L++)
        for (int k = 0; k < 3; k++) {
            uint64_t h = 1469598103934665603ull;
            for (int64_t p = 0; p < pos; p++) h = (h ^ (uint64_t)t->tok[lane][p]) * 1099511628211ull;
            for (int64_t r = 0; r < n; r++) {
                h = (h ^ (uint64_t)t->tok[lane][pos + r]) * 1099511628211ull;
                for (int c = 0; c < HID; c++)
                    buf[r * HID + c] = noise(h + (uint64_t)L * 7 + (uint64_t)k, (uint64_t)c);
            }
            char name[64];
            snprintf(name, sizeof name, "layers/%d/%s", L, names[k]);
            if (t->hooks.tap(t->hooks.ctx, name, L, GOLDEN_BK_F32, n, HID, buf)) {
                say(msg, msgn, "tap refused");
                return 1;
            }
        }
    return 0;
}
static int t_open(const golden_backend_open_args *a, void **self, char *msg, size_t n)
{
    if (hostile(C_OPEN, msg, n)) return 1;
    if (a->n_opts) { say(msg, n, "unknown option"); return 1; }
    toy *t = calloc(1, sizeof *t);
    if (!t) { say(msg, n, "out of memory"); return 1; }
    *self = t;
    return 0;
}
static void t_close(void *self) { hostile(C_CLOSE, NULL, 0); free(self); }
static int t_info(void *self, golden_backend_info *o, char *msg, size_t n)
{
    (void)self;
    if (hostile(C_INFO, msg, n)) return 1;
    memset(o, 0, sizeof *o);
    o->version = GOLDEN_BACKEND_ABI_VERSION;
    o->hidden_size = HID; o->num_layers = LAYERS; o->num_experts = 16; o->experts_per_tok = 4;
    o->vocab_size = VOCAB; o->context_limit = CTX; o->num_lanes = LANES;
    o->logits_dtype = LOGITS_DTYPE;
    return 0;
}
static int t_hooks(void *self, const golden_backend_hooks *h, char *msg, size_t n)
{
    toy *t = self;
    if (hostile(C_HOOKS, msg, n)) return 1;
    if (h) t->hooks = *h; else memset(&t->hooks, 0, sizeof t->hooks);
    return 0;
}
static int bad_lane(int lane, char *msg, size_t n)
{
    if (lane < 0 || lane >= LANES) { say(msg, n, "no such lane"); return 1; }
    return 0;
}
static int t_prefill(void *self, int lane, int64_t pos, const int32_t *tk, size_t cnt, char *msg, size_t n)
{
    toy *t = self;
    if (hostile(C_PREFILL, msg, n)) return 1;
    if (bad_lane(lane, msg, n)) return 1;
    if (pos < 0 || pos > t->len[lane]) { say(msg, n, "position above the lane's length"); return 1; }
    if (cnt == 0 || (uint64_t)pos + cnt > CTX) { say(msg, n, "context_limit_exceeded: beyond 512 positions"); return 1; }
    for (size_t i = 0; i < cnt; i++)
        if (tk[i] < 0 || tk[i] >= V) { say(msg, n, "token id out of range"); return 1; }
    mark(t, GOLDEN_BK_STAGE_H2D, 0);
    memcpy(&t->tok[lane][pos], tk, cnt * sizeof *tk);
    t->len[lane] = pos + (int64_t)cnt;
    mark(t, GOLDEN_BK_STAGE_H2D, 1);
    mark(t, GOLDEN_BK_STAGE_NPU_WAIT, 0);
    int r = taps(t, lane, pos, (int64_t)cnt, msg, n);
    mark(t, GOLDEN_BK_STAGE_NPU_WAIT, 1);
    return r;
}
static int t_decode(void *self, int lane, int32_t token, char *msg, size_t n)
{
    toy *t = self;
    if (hostile(C_DECODE, msg, n)) return 1;
    if (bad_lane(lane, msg, n)) return 1;
    if (t->len[lane] >= CTX) { say(msg, n, "context_limit_exceeded: lane full"); return 1; }
    if (token < 0 || token >= V) { say(msg, n, "token id out of range"); return 1; }
    mark(t, GOLDEN_BK_STAGE_H2D, 0);
    t->tok[lane][t->len[lane]++] = token;
    mark(t, GOLDEN_BK_STAGE_H2D, 1);
    mark(t, GOLDEN_BK_STAGE_NPU_WAIT, 0);
    int r = taps(t, lane, t->len[lane] - 1, 1, msg, n);
    mark(t, GOLDEN_BK_STAGE_NPU_WAIT, 1);
    return r;
}
static uint16_t to_bf16(float f)
{
    uint32_t u; memcpy(&u, &f, 4);
    if (f != f) return 0x7fc0;
    return (uint16_t)((u + 0x7fff + ((u >> 16) & 1)) >> 16);
}
static int t_logits(void *self, int lane, int first, int count, void *dst, char *msg, size_t n)
{
    toy *t = self;
    if (hostile(C_LOGITS, msg, n)) return 1;
    if (bad_lane(lane, msg, n)) return 1;
    if (t->len[lane] == 0) { say(msg, n, "nothing processed"); return 1; }
    if (first < 0 || count < 0 || (int64_t)first + count > VOCAB) { say(msg, n, "range out of vocabulary"); return 1; }
    mark(t, GOLDEN_BK_STAGE_D2H, 0);
    int tg = target(t, lane);
    uint64_t seed = (uint64_t)t->len[lane] * 131u + (uint64_t)tg;
    int fill = count < 4096 ? count : 4096; /* a vocabulary of 10^9 is a lie: 4096 at most */
    for (int i = 0; i < fill; i++) {
        int v = first + i;
        float x = v == tg ? 2.0f : noise(seed, (uint64_t)v);
        if (LOGITS_KIND == 1) x = NAN;
        if (LOGITS_KIND == 2) x = -INFINITY;
        if (LOGITS_DTYPE == GOLDEN_BK_BF16) ((uint16_t *)dst)[i] = to_bf16(x);
        else ((float *)dst)[i] = x;
    }
    mark(t, GOLDEN_BK_STAGE_D2H, 1);
    return 0;
}
static int t_truncate(void *self, int lane, int64_t length, char *msg, size_t n)
{
    toy *t = self;
    if (hostile(C_TRUNC, msg, n)) return 1;
    if (bad_lane(lane, msg, n)) return 1;
    if (length < 0 || length > t->len[lane]) { say(msg, n, "truncate beyond the length"); return 1; }
    t->len[lane] = length;
    return 0;
}
static int t_reset(void *self, int lane, char *msg, size_t n)
{
    toy *t = self;
    if (hostile(C_RESET, msg, n)) return 1;
    if (lane < 0) { memset(t->len, 0, sizeof t->len); return 0; }
    if (bad_lane(lane, msg, n)) return 1;
    t->len[lane] = 0;
    return 0;
}
static int64_t t_length(void *self, int lane)
{
    toy *t = self;
    hostile(C_LENGTH, NULL, 0);
    if (lane < 0 || lane >= LANES) return -1;
    return t->len[lane];
}
static const golden_backend_vtable vt = {GOLDEN_BACKEND_ABI_VERSION, NAME, t_open, t_close,
    t_info, t_hooks, t_prefill, t_decode, t_logits, t_truncate, t_reset, t_length};
const golden_backend_vtable *golden_backend_entry(void) { return &vt; }
EOF

if ! command -v cc >/dev/null 2>&1; then
    echo "ok replay-redteam # skip no C compiler"
    exit 0
fi
# build NAME FLAGS...: NAME.so in the background (the cases wait for all of them).
build() { _n=$1; shift; cc -shared -fPIC -O1 -I"$INC" "$@" -o "$_n.so" hostile.c -lm 2> "$_n.cc.err" & }
mkdir -p elsewhere
build clean
build exit-open       -DAT=C_OPEN    -DDO=D_EXIT
build exit-info       -DAT=C_INFO    -DDO=D_EXIT
build _exit-hooks     -DAT=C_HOOKS   -DDO=D__EXIT
build exit-prefill    -DAT=C_PREFILL -DDO=D_EXIT
build _exit-decode    -DAT=C_DECODE  -DDO=D__EXIT
build exit-logits     -DAT=C_LOGITS  -DDO=D_EXIT
build _exit-reset     -DAT=C_RESET   -DDO=D__EXIT
build exit-close      -DAT=C_CLOSE   -DDO=D_EXIT
build exit-truncate   -DAT=C_TRUNC   -DDO=D_EXIT
build _exit-length    -DAT=C_LENGTH  -DDO=D__EXIT
build segv-prefill    -DAT=C_PREFILL -DDO=D_SEGV
build abort-decode    -DAT=C_DECODE  -DDO=D_ABORT
build abort-open      -DAT=C_OPEN    -DDO=D_ABORT
build hang-prefill    -DAT=C_PREFILL -DDO=D_HANG
build hang-decode     -DAT=C_DECODE  -DDO=D_HANG_NOTERM
build msg-overflow    -DAT=C_PREFILL -DDO=D_MSG_OVERFLOW
build msg-ansi        -DAT=C_PREFILL -DDO=D_MSG_ANSI
build msg-ansi-reset  -DAT=C_DECODE  -DDO=D_MSG_ANSI
build evil-name       -DEVIL_NAME -DAT=C_DECODE -DDO=D_FAIL
build noisy           -DAT=C_PREFILL -DDO=D_STDOUT
build chdir           -DAT=C_OPEN    -DDO=D_CHDIR -DELSEWHERE="\"$TOP/elsewhere\""
build vocab-1e9       -DVOCAB=1000000000
build dtype-7         -DLOGITS_DTYPE=7
build nan             -DLOGITS_KIND=1
build nan-bf16        -DLOGITS_KIND=1 -DLOGITS_DTYPE=GOLDEN_BK_BF16
build neginf          -DLOGITS_KIND=2
wait
if [ ! -f clean.so ]; then
    notok plugin-compiles "$(why clean.cc.err 400)"
    exit 0
fi

# ---------------------------------------------------------------------------------------------
# helpers
# status NAME "WANTED..." RC: RC is one of the wanted statuses.
status() {
    case " $2 " in *" $3 "*) ok "$1" ;; *) notok "$1" "exit $3, wanted one of {$2}: $(why err.txt 300)" ;; esac
}
# left DIR: what is left in DIR (empty when nothing).
left() { ls -A "$1" 2>/dev/null | tr '\n' ' '; }
# fresh DIR: an empty output folder for one case.
fresh() { rm -rf "$1"; mkdir -p "$1"; }
# rc_empty NAME WANTED RC DIR: the status is wanted and DIR holds nothing (no golden, raw, report
# or temporary file).
rc_empty() {
    _l=$(left "$4")
    case " $2 " in
    *" $3 "*) if [ -z "$_l" ]; then ok "$1"; else notok "$1" "exit $3 but left: $_l"; fi ;;
    *) notok "$1" "exit $3, wanted one of {$2}; left: ${_l:-nothing}: $(why err.txt 300)" ;;
    esac
}
# raw_bytes FILE: FILE holds an ESC, BEL, CR, 0xff, 0xfe or 0xc0 byte (terminal control, or bytes
# that never occur in valid UTF-8, as the plug-in planted them).
raw_bytes() { LC_ALL=C grep -q "$(printf '[\033\007\015\377\376\300]')" "$1"; }
sha() { sha256sum "$1" | cut -d' ' -f1; }

# The two requests every run case makes: a 1-token prefill and a decode case (1 past token, 8
# output tokens: one prefill, then 7 decode calls), no warm-up, one measured run.
C1=random-prefill-p1-o1-00
C2=random-decode-past1-o8-00
RUN="--model model --manifest m.jsonl --side candidate --warmup 0 --runs 1 --cases $C1 --cases $C2"
CONFORM_LOGITS="causal-mask,kv-positions,kv-lanes,kv-tail,kv-reset,rejection"

# ---------------------------------------------------------------------------------------------
# Good: the tiny model and its small matrix (docs/npu-replay.md "make-model", "matrix").
expect_exit make-model-tiny 0 $T npu-replay make-model --preset tiny -o model
expect_exit matrix-tiny 0 $T npu-replay matrix --model model --max-len 32 -o m.jsonl
if ! grep -q "\"$C2\"" m.jsonl 2>/dev/null || ! grep -q "\"$C1\"" m.jsonl; then
    notok matrix-has-cases "m.jsonl lacks $C1 or $C2; the remaining cases cannot run"
    exit 0
fi

# ---------------------------------------------------------------------------------------------
# Hang cases first, in the background (each bounded by 20 s). The harness must stop a plug-in
# that never returns and record a fault (architecture.md: "its crash, hang or exit is a recorded
# fault"), so run exits 2 and conform 1 or 2 well before the bound; 124/137 (our timeout killed
# it) is not ok. The plug-in arms alarm(25) so that no hung process outlives the script.
fresh h1
( timeout -k 2 20 npu-replay run $RUN --call-timeout 3 --backend ./hang-prefill.so --golden h1/g.h5 --raw h1/r.jsonl \
      > h1.out 2> h1.err; echo $? > h1.rc ) &
fresh h2
( timeout -k 2 20 npu-replay conform --model model --call-timeout 3 --backend ./hang-decode.so --checks kv-positions \
      --json h2/c.json > h2.out 2> h2.err; echo $? > h2.rc ) &

# info() lies. judgement: a vocabulary of 10^9 (the model folder says 512; f32 logits rows of
# 4 GB, a [8, 10^9] golden tensor of 32 GB) is not a runtime to trust: a demanding user expects
# exit 2 naming the vocabulary, quickly, with nothing left, not a 4 GB allocation, a crash or a
# stall (in the background with the hang cases: a harness that tries to hold it is slow).
fresh h3
( timeout -k 2 20 npu-replay run $RUN --backend ./vocab-1e9.so --golden h3/g.h5 --raw h3/r.jsonl \
      > h3.out 2> h3.err; echo $? > h3.rc ) &

# ---------------------------------------------------------------------------------------------
# Good: a clean plug-in passes. The toy obeys every sentence of backend.h, so run exits 0 with
# both outputs (docs/npu-replay.md: "Exit status: 0 done"), one raw line per request (2 cases x
# (0 warm-up + 1 run) = 2 lines).
fresh ok1
expect_exit clean-plugin-run 0 $T npu-replay run $RUN --backend ./clean.so --golden ok1/g.h5 --raw ok1/r.jsonl
expect_lines clean-plugin-raw-lines 2 ok1/r.jsonl

# The golden's tokens are the toy's greedy choice: next = (sum_i ids[i]*(i+1) + len) mod 512,
# where ids are the input ids followed by the tokens generated so far (worked out in numpy from
# the golden's own input_ids). A harness that mixes up lanes, positions or logits rows fails it.
if [ -z "$PYTHON" ]; then echo "ok clean-plugin-tokens # skip no numpy"; else
    if $PYTHON - ok1/g.h5 "$C1" "$C2" > py.txt 2>&1 <<'EOF'
import sys, h5py, numpy as np
f = h5py.File(sys.argv[1], "r")
for case, n in ((sys.argv[2], 1), (sys.argv[3], 8)):
    ids = [int(x) for x in f["cases/%s/input_ids" % case][()]]
    got = [int(x) for x in f["cases/%s/tokens" % case][()]]
    want = []
    for _ in range(n):
        t = (sum(v * (i + 1) for i, v in enumerate(ids)) + len(ids)) % 512
        want.append(t); ids.append(t)
    assert got == want, (case, got, want)
    lg = f["cases/%s/logits" % case][()]
    assert lg.shape == (n, 512) and [int(np.argmax(r)) for r in lg] == want, (case, lg.shape)
EOF
    then ok clean-plugin-tokens; else notok clean-plugin-tokens "$(tail -c 300 py.txt | why - 300)"; fi
fi

# conformance.md: every check compares the backend with itself. The toy is causal (tap row p is
# a hash of tokens 0..p), keeps its lanes apart, truncates, resets and refuses beyond 512, so
# every logit/tap check passes: exit 0.
expect_exit clean-plugin-conform 0 $T npu-replay conform --model model --backend ./clean.so --checks "$CONFORM_LOGITS"

# ---------------------------------------------------------------------------------------------
# exit(0) / _exit(0) inside each call (architecture.md; npu-replay.md exit status 2 "a backend
# error", outputs whole or not at all). Expected: run exit 2, nothing left in the output folder.
for v in exit-open exit-info _exit-hooks exit-prefill _exit-decode exit-logits _exit-reset; do
    fresh "o-$v"
    $T npu-replay run $RUN --backend "./$v.so" --golden "o-$v/g.h5" --raw "o-$v/r.jsonl" > out.txt 2> err.txt
    rc_empty "run-plugin-$v" 2 $? "o-$v"
done

# exit(0) in close: close may come after the outputs are renamed, so a 0 is acceptable only with
# both outputs whole; anything else must be 2 with nothing left (never 0 with missing outputs).
fresh o-close
$T npu-replay run $RUN --backend ./exit-close.so --golden o-close/g.h5 --raw o-close/r.jsonl > out.txt 2> err.txt
rc=$?
if [ $rc -eq 0 ] && [ -f o-close/g.h5 ] && [ "$(wc -l < o-close/r.jsonl 2>/dev/null)" = 2 ] \
   && [ "$(left o-close)" = "g.h5 r.jsonl " ]; then ok run-plugin-exit-close
elif [ $rc -eq 2 ] && [ -z "$(left o-close)" ]; then ok run-plugin-exit-close
else notok run-plugin-exit-close "exit $rc, left: $(left o-close)"; fi

# conform: kv-tail is the check that calls truncate (conformance.md table), rejection reads the
# lane's length. A plug-in exiting there must not give "every check passed" (0); the --json
# report, when written, is whole and not a pass.
for v in exit-truncate:kv-tail _exit-length:kv-tail,rejection exit-prefill:kv-reset; do
    so=${v%%:*}; ck=${v#*:}
    fresh "c-$so"
    $T npu-replay conform --model model --backend "./$so.so" --checks "$ck" --json "c-$so/c.json" > out.txt 2> err.txt
    rc=$?
    if [ $rc -ne 1 ] && [ $rc -ne 2 ]; then notok "conform-plugin-$so" "exit $rc, wanted 1 or 2; left: $(left c-$so)"
    elif [ -f "c-$so/c.json" ] && grep -q '"verdict": *"pass"' "c-$so/c.json"; then notok "conform-plugin-$so" "report says pass"
    else ok "conform-plugin-$so"; fi
done

# matrix runs coverage prompts through the backend (npu-replay.md "matrix": "random 32-token
# prompts run through the backend"): exit(0) in info or in prefill must give exit 2 and no
# manifest, no inputs/ folder and no temporary file beside it.
for v in exit-info exit-prefill abort-open; do
    fresh "mx-$v"
    $T npu-replay matrix --model model --backend "./$v.so" --max-len 32 -o "mx-$v/m.jsonl" > out.txt 2> err.txt
    rc_empty "matrix-plugin-$v" 2 $? "mx-$v"
done

# ---------------------------------------------------------------------------------------------
# Crashes (backend.h: "a backend never aborts"; architecture.md: a crash is a recorded fault).
# A SIGSEGV in prefill: exit 2 (not 139), nothing left; with --faults the fault is recorded: one
# calculet-fault/v1 line (npu-replay.md "Faults during a run": "the faults file is written").
fresh o-segv
$T npu-replay run $RUN --backend ./segv-prefill.so --golden o-segv/g.h5 --raw o-segv/r.jsonl > out.txt 2> err.txt
rc_empty run-plugin-segv-prefill 2 $? o-segv
fresh o-segvf
$T npu-replay run $RUN --backend ./segv-prefill.so --golden o-segvf/g.h5 --raw o-segvf/r.jsonl --faults segv.faults > out.txt 2> err.txt
rc=$?
if [ $rc -ne 2 ]; then notok run-plugin-segv-fault-recorded "exit $rc, wanted 2"
elif [ ! -s segv.faults ]; then notok run-plugin-segv-fault-recorded "no fault line recorded for the crash"
elif ! $T manifest-verify -q --schema calculet-fault/v1 segv.faults > mv.txt 2>&1; then
    notok run-plugin-segv-fault-recorded "fault line not calculet-fault/v1: $(why mv.txt 300)"
else ok run-plugin-segv-fault-recorded; fi

fresh o-abort
$T npu-replay run $RUN --backend ./abort-decode.so --golden o-abort/g.h5 --raw o-abort/r.jsonl > out.txt 2> err.txt
rc_empty run-plugin-abort-decode 2 $? o-abort

fresh c-segv
$T npu-replay conform --model model --backend ./segv-prefill.so --checks kv-positions,kv-reset > out.txt 2> err.txt
status conform-plugin-segv-prefill "1 2" $?

# ---------------------------------------------------------------------------------------------
# Messages. backend.h: a message is "never longer than msg_len - 1 bytes, always NUL-terminated".
# A plug-in that writes 64 KiB into the buffer must not take the harness down: exit 2, the one
# error line of contracts section 1 on stderr, nothing left.
fresh o-ovf
$T npu-replay run $RUN --backend ./msg-overflow.so --golden o-ovf/g.h5 --raw o-ovf/r.jsonl > out.txt 2> err.txt
rc=$?
if [ $rc -ne 2 ]; then notok run-plugin-msg-overflow "exit $rc, wanted 2"
elif [ -n "$(left o-ovf)" ]; then notok run-plugin-msg-overflow "left: $(left o-ovf)"
elif [ "$(wc -l < err.txt)" -ne 1 ]; then notok run-plugin-msg-overflow "stderr has $(wc -l < err.txt) lines"
else ok run-plugin-msg-overflow; fi

# A message with ESC sequences (clear screen, set title, colour), BEL, CR/LF, invalid UTF-8 and a
# forged second line: cli.md "Control characters, DEL and invalid UTF-8 in WHERE and WHAT are
# escaped ... so a file name with a newline still gives one line". stderr: exit 2, one line, none
# of the planted bytes raw, and no line starting with the forged "npu-replay: all checks passed".
fresh o-ansi
$T npu-replay run $RUN --backend ./msg-ansi.so --golden o-ansi/g.h5 --raw o-ansi/r.jsonl --faults ansi.faults > out.txt 2> err.txt
rc=$?
if [ $rc -ne 2 ]; then notok run-plugin-msg-ansi-stderr "exit $rc, wanted 2"
elif raw_bytes err.txt || raw_bytes out.txt; then notok run-plugin-msg-ansi-stderr "raw control/invalid UTF-8 bytes reach the terminal: $(od -c err.txt | head -3 | why - 300)"
elif [ "$(wc -l < err.txt)" -ne 1 ] || grep -q '^npu-replay: all checks passed' err.txt; then notok run-plugin-msg-ansi-stderr "message split into lines: $(cat err.txt)"
else ok run-plugin-msg-ansi-stderr; fi
# The same message in the faults report (calculet-fault/v1 `message`, the backend's message): a
# JSON Lines file must stay valid UTF-8 JSON (RFC 8259 section 8.1) and schema-valid.
if [ -z "$PYTHON" ]; then echo "ok run-plugin-msg-ansi-faults # skip no numpy"; else
    if [ ! -s ansi.faults ]; then notok run-plugin-msg-ansi-faults "no fault line written"
    elif $PYTHON -c '
import json, sys
for l in open(sys.argv[1], encoding="utf-8", errors="strict"):
    d = json.loads(l)
    assert d["schema"] == "calculet-fault/v1" and d["kind"] == "device_error", d
' ansi.faults > py.txt 2>&1; then ok run-plugin-msg-ansi-faults
    else notok run-plugin-msg-ansi-faults "$(tail -c 300 py.txt | why - 300)"; fi
fi

# conform with the planted message in decode (kv-reset decodes): the table on stdout, the findings
# on stderr, the --json report (valid UTF-8 JSON, calculet-conform/v1) and the --junit report
# (XML 1.0 cannot hold ESC or BEL, not even as &#27;: it must be escaped in text) must all be clean.
# The check cannot run because the backend failed: exit 2 (or 1), never 0.
fresh c-ansi
$T npu-replay conform --model model --backend ./msg-ansi-reset.so --checks kv-reset,kv-positions \
    --json c-ansi/c.json --junit c-ansi/c.xml > out.txt 2> err.txt
rc=$?
if [ $rc -ne 1 ] && [ $rc -ne 2 ]; then notok conform-plugin-msg-ansi "exit $rc, wanted 1 or 2"
elif raw_bytes out.txt || raw_bytes err.txt; then notok conform-plugin-msg-ansi "raw control/invalid UTF-8 bytes on the terminal: $(od -c err.txt | head -3 | why - 300)"
elif grep -q '^npu-replay: all checks passed' err.txt out.txt; then notok conform-plugin-msg-ansi "forged line printed"
elif [ -z "$PYTHON" ]; then ok conform-plugin-msg-ansi
elif $PYTHON -c '
import json, sys, xml.etree.ElementTree as ET
d = json.load(open(sys.argv[1], encoding="utf-8", errors="strict"))
assert d["schema"] == "calculet-conform/v1" and d["verdict"] != "pass", d.get("verdict")
ET.parse(sys.argv[2])
' c-ansi/c.json c-ansi/c.xml > py.txt 2>&1; then ok conform-plugin-msg-ansi
else notok conform-plugin-msg-ansi "$(tail -c 300 py.txt | why - 300)"; fi

# The vtable's `name` is plug-in text too ("short, e.g. cpu"): an ESC/BEL/invalid-UTF-8 name
# whose decode fails with a plain message. The harness names the backend in its error lines, so
# the name reaches stderr and the report: it must be escaped there as every WHERE/WHAT is
# (cli.md), and the --json report stay valid UTF-8. The check could not run: exit 2 (or 1).
fresh c-name
$T npu-replay conform --model model --backend ./evil-name.so --checks kv-reset,kv-positions --json c-name/c.json > out.txt 2> err.txt
rc=$?
if [ $rc -ne 1 ] && [ $rc -ne 2 ]; then notok conform-plugin-evil-name "exit $rc, wanted 1 or 2"
elif raw_bytes out.txt || raw_bytes err.txt; then notok conform-plugin-evil-name "the name reaches the terminal raw: $(od -c err.txt | head -3 | why - 300)"
elif [ -n "$PYTHON" ] && ! $PYTHON -c '
import json, sys; json.load(open(sys.argv[1], encoding="utf-8", errors="strict"))' c-name/c.json > py.txt 2>&1; then
    notok conform-plugin-evil-name "report not valid UTF-8 JSON: $(tail -c 200 py.txt | why - 200)"
else ok conform-plugin-evil-name; fi

# ---------------------------------------------------------------------------------------------
# A plug-in that writes to the harness's stdout (backend.h: "a backend never prints"). The
# harness's stdout is its own: `conform --json -` is the machine report alone (cli.md: "When a
# machine output goes to stdout ... sees only XML"), so it must parse as JSON and hold no noise;
# run's human report must not carry it either. Exit: the backend is otherwise clean (0), or the
# harness refuses it (2).
fresh c-noisy
$T npu-replay conform --model model --backend ./noisy.so --checks kv-reset --json - > out.txt 2> err.txt
rc=$?
if [ $rc -ne 0 ] && [ $rc -ne 2 ]; then notok conform-plugin-stdout-json "exit $rc, wanted 0 or 2"
elif grep -q PLUGIN-NOISE out.txt; then notok conform-plugin-stdout-json "the plug-in's text is in the JSON on stdout: $(grep -m1 PLUGIN-NOISE out.txt | why - 100)"
elif [ $rc -eq 0 ] && [ -n "$PYTHON" ] && ! $PYTHON -c 'import json,sys; json.load(open(sys.argv[1]))' out.txt > py.txt 2>&1; then
    notok conform-plugin-stdout-json "stdout is not JSON: $(tail -c 200 py.txt | why - 200)"
else ok conform-plugin-stdout-json; fi
fresh o-noisy
$T npu-replay run $RUN --backend ./noisy.so --golden o-noisy/g.h5 --raw o-noisy/r.jsonl > out.txt 2> err.txt
rc=$?
if [ $rc -ne 0 ] && [ $rc -ne 2 ]; then notok run-plugin-stdout "exit $rc, wanted 0 or 2"
elif grep -q PLUGIN-NOISE out.txt; then notok run-plugin-stdout "the plug-in's text is on the harness's stdout"
else ok run-plugin-stdout; fi

# judgement: a plug-in that calls chdir() in open. Relative --manifest/--golden/--raw name paths
# of the user's working directory; in a backend host process the chdir changes nothing. A
# demanding user expects exit 0 and the outputs where named, nothing in the other folder.
fresh o-cd
$T npu-replay run $RUN --backend ./chdir.so --golden o-cd/g.h5 --raw o-cd/r.jsonl > out.txt 2> err.txt
rc=$?
if [ $rc -ne 0 ]; then notok run-plugin-chdir "exit $rc, wanted 0: $(why err.txt 300)"
elif [ ! -f o-cd/g.h5 ] || [ ! -f o-cd/r.jsonl ] || [ -n "$(left elsewhere)" ]; then
    notok run-plugin-chdir "outputs not where named: here [$(left o-cd)] elsewhere [$(left elsewhere)]"
else ok run-plugin-chdir; fi

# ---------------------------------------------------------------------------------------------
# backend.h: logits_dtype is "GOLDEN_BK_F32 or GOLDEN_BK_BF16"; 7 is neither: exit 2, nothing left.
fresh o-dt
$T npu-replay run $RUN --backend ./dtype-7.so --golden o-dt/g.h5 --raw o-dt/r.jsonl > out.txt 2> err.txt
rc_empty run-plugin-logits-dtype-7 2 $? o-dt

# NaN logits. npu-replay.md: a row with a NaN entry is unusable, a fault of kind nan_output, and
# "NaN or +Inf logits count as a backend error" (exit 2). The cpu backend's inject=nan is tested;
# here the plug-in lane, f32 and bf16 (the harness converts bf16 itself: section 15 C2).
fresh o-nan
$T npu-replay run $RUN --backend ./nan.so --golden o-nan/g.h5 --raw o-nan/r.jsonl --faults nan.faults > out.txt 2> err.txt
rc=$?
if [ $rc -ne 2 ] || [ -n "$(left o-nan)" ]; then notok run-plugin-nan-logits "exit $rc, left: $(left o-nan)"
elif ! grep -q '"kind": *"nan_output"' nan.faults 2>/dev/null; then notok run-plugin-nan-logits "no nan_output fault: $(why nan.faults 200)"
else ok run-plugin-nan-logits; fi
fresh o-nanb
$T npu-replay run $RUN --backend ./nan-bf16.so --golden o-nanb/g.h5 --raw o-nanb/r.jsonl > out.txt 2> err.txt
rc_empty run-plugin-nan-logits-bf16 2 $? o-nanb
# "or every entry -inf": a row where nothing can be chosen is unusable too.
fresh o-ninf
$T npu-replay run $RUN --backend ./neginf.so --golden o-ninf/g.h5 --raw o-ninf/r.jsonl > out.txt 2> err.txt
rc_empty run-plugin-all-neginf-logits 2 $? o-ninf

# conform compares the backend with itself "bitwise by default": an all-NaN backend compares
# equal to itself bit for bit, yet a NaN logits row is unusable (the retest rule of
# conformance.md calls it a failed retest). The suite must not pass it (1 or 2, never 0), neither
# the logit checks together nor rejection alone ("the lane then gives the same logits as before").
$T npu-replay conform --model model --backend ./nan.so --checks kv-positions,kv-lanes,kv-tail,kv-reset > out.txt 2> err.txt
status conform-plugin-nan-logits "1 2" $?
$T npu-replay conform --model model --backend ./nan.so --checks rejection > out.txt 2> err.txt
status conform-plugin-nan-rejection "1 2" $?

# ---------------------------------------------------------------------------------------------
# Outputs that are inputs (cli.md: "An output that is one of the inputs (same device and inode,
# also through a symbolic link) is an error, --force or not"; contracts section 1). On a copy of
# the model folder and manifest; each case: exit 2 and the input byte-identical afterwards.
# mkoi: a fresh copy before each case, so that one overwritten input cannot decide the next case.
mkoi() {
    rm -rf oi; mkdir -p oi && cp -r model oi/model && cp -r m.jsonl inputs oi/ && cp clean.so oi/plugin.so
    ln -s model/config.json oi/cfg-link.json
    ln oi/model/model.safetensors oi/weights-hardlink 2>/dev/null || cp oi/model/model.safetensors oi/weights-hardlink
}
ORUN="--model oi/model --manifest oi/m.jsonl --side candidate --warmup 0 --runs 1 --cases $C1 --force"
# out_in NAME FILE CMD...: CMD (which names FILE as an output, with --force) exits 2, FILE kept.
out_in() {
    _n=$1; _f=$2; shift 2
    mkoi
    _s=$(sha "$_f")
    $T "$@" > out.txt 2> err.txt
    _rc=$?
    _c=kept; { [ -f "$_f" ] && [ "$(sha "$_f")" = "$_s" ]; } || _c=overwritten
    if [ $_rc -ne 2 ] || [ $_c != kept ]; then notok "$_n" "exit $_rc (wanted 2), $_f $_c"
    else ok "$_n"; fi
}
# Control: the same command with outputs of its own passes (exit 0), so the refusals below are
# about the output, not about the command.
mkoi
expect_exit run-outputs-control 0 $T npu-replay run $ORUN --golden oi/g0.h5 --raw oi/r0.jsonl
out_in run-golden-is-safetensors oi/model/model.safetensors npu-replay run $ORUN --golden oi/model/model.safetensors --raw oi/r1.jsonl
out_in run-raw-is-config oi/model/config.json npu-replay run $ORUN --golden oi/g2.h5 --raw oi/model/config.json
out_in run-raw-is-manifest oi/m.jsonl npu-replay run $ORUN --golden oi/g3.h5 --raw oi/m.jsonl
out_in run-golden-is-token-file "oi/inputs/$C1.json" npu-replay run $ORUN --golden "oi/inputs/$C1.json" --raw oi/r4.jsonl
out_in run-faults-is-manifest oi/m.jsonl npu-replay run $ORUN --golden oi/g5.h5 --raw oi/r5.jsonl --faults oi/m.jsonl
out_in run-raw-symlink-to-config oi/model/config.json npu-replay run $ORUN --golden oi/g6.h5 --raw oi/cfg-link.json
out_in run-golden-hardlink-of-weights oi/model/model.safetensors npu-replay run $ORUN --golden oi/weights-hardlink --raw oi/r7.jsonl
out_in conform-json-is-config oi/model/config.json npu-replay conform --model oi/model --checks rejection --json oi/model/config.json --force
out_in matrix-output-is-config oi/model/config.json npu-replay matrix --model oi/model --max-len 32 -o oi/model/config.json --force
# judgement: the plug-in is read (loaded) by the run; overwriting it with the golden destroys the
# vendor's library. A demanding user expects it treated as an input.
out_in run-golden-is-plugin oi/plugin.so npu-replay run $ORUN --backend oi/plugin.so --golden oi/plugin.so --raw oi/r8.jsonl

# ---------------------------------------------------------------------------------------------
# Manifests with absurd lengths (calculet-input-manifest/v1: "A case whose prompt + past +
# output tokens exceed the context limit must carry rejection: true and is never sent to a
# device"; handbook 5.1: beyond 40960 is a rejection case). A non-rejection case asking for 2^62
# output tokens, and one whose total wraps int64 (2 + 2^63-1), is a bad manifest: exit 2
# quickly, nothing left (never an allocation of 2^62 slots, a crash or a 2^62-step loop).
mkdir -p mf/inputs
printf '[5, 7]\n' > mf/inputs/p2.json
P2SHA=$(sha mf/inputs/p2.json)
mline() { # case_id prompt past output rejection input-json
    printf '{"schema":"calculet-input-manifest/v1","case_id":"%s","phase":"prefill","prompt_tokens":%s,"past_tokens":%s,"output_tokens":%s,"concurrency":1,"dataset":"random_tokens","seed":0,"rejection":%s%s}\n' "$@"
}
mline huge-out 2 0 4611686018427387904 false ",\"input\":{\"path\":\"inputs/p2.json\",\"sha256\":\"$P2SHA\"}" > mf/a.jsonl
mline wrap-out 2 0 9223372036854775807 false ",\"input\":{\"path\":\"inputs/p2.json\",\"sha256\":\"$P2SHA\"}" > mf/b.jsonl
for m in a:manifest-output-2e62 b:manifest-output-sum-wraps; do
    f=${m%%:*}; n=${m#*:}
    fresh "o-$f"
    $T npu-replay run --model model --manifest "mf/$f.jsonl" --side baseline --warmup 0 --runs 1 \
        --golden "o-$f/g.h5" --raw "o-$f/r.jsonl" > out.txt 2> err.txt
    rc_empty "$n" 2 $? "o-$f"
done
# judgement: the same 2^62 as a rejection case under --check-rejection, which "submits the first
# selected one whole (prompt + past + output tokens)". The backend refuses anything beyond 512,
# so the right answers are 0 (refused as expected) or 2 (absurd manifest); never a crash, an
# out-of-memory kill or a timeout.
mline huge-reject 2 0 4611686018427387904 true ',"expected_error":"context_limit_exceeded"' > mf/c.jsonl
fresh o-c
$T npu-replay run --model model --manifest mf/c.jsonl --side baseline --warmup 0 --runs 1 --check-rejection \
    --golden o-c/g.h5 --raw o-c/r.jsonl > out.txt 2> err.txt
status manifest-check-rejection-2e62 "0 2" $?

# A token file that is a FIFO (no writer): cli.md "Inputs ... O_NONBLOCK then fstat, so a FIFO
# with no writer never hangs a tool"; a token file is hashed and parsed, its sha256 cannot match
# an empty stream: exit 2, within the bound (124 = hung).
mkfifo mf/inputs/fifo.json
mline fifo-ids 2 0 1 false ",\"input\":{\"path\":\"inputs/fifo.json\",\"sha256\":\"$P2SHA\"}" > mf/d.jsonl
fresh o-d
$T npu-replay run --model model --manifest mf/d.jsonl --side baseline --warmup 0 --runs 1 \
    --golden o-d/g.h5 --raw o-d/r.jsonl > out.txt 2> err.txt
rc_empty run-token-file-fifo 2 $? o-d

# ---------------------------------------------------------------------------------------------
# config.json keys the CPU reference does not implement (npu-replay.md: the forward pass is
# contracts section 7's Qwen3-MoE one: no rope scaling, no q/k/v/o biases, SwiGLU with SiLU, full
# causal attention). Running such a model as if it were plain Qwen3-MoE gives wrong goldens that
# look right, so the cpu backend must refuse: exit 2, the reason naming the key.
# cfg NAME SED-EXPRESSION: a copy of the tiny model with config.json edited.
cfg() {
    rm -rf "$1"; cp -r model "$1"
    sed "$2" model/config.json > "$1/config.json"
}
# cfg_refused NAME KEY: run on folder NAME must exit 2 and name KEY.
cfg_refused() {
    fresh "o-$1"
    $T npu-replay run --model "$1" --manifest m.jsonl --side baseline --warmup 0 --runs 1 --cases $C1 \
        --golden "o-$1/g.h5" --raw "o-$1/r.jsonl" > out.txt 2> err.txt
    _rc=$?
    if [ $_rc -ne 2 ] || [ -n "$(left "o-$1")" ]; then notok "$1" "exit $_rc, wanted 2; left: $(left "o-$1")"
    elif ! grep -q "$2" err.txt; then notok "$1" "reason does not name $2: $(why err.txt 300)"
    else ok "$1"; fi
}
cfg cfg-model-type-llama 's/"model_type": "qwen3_moe"/"model_type": "llama"/'
cfg_refused cfg-model-type-llama model_type
cfg cfg-rope-scaling-yarn 's/"hidden_act": "silu",/"hidden_act": "silu", "rope_scaling": {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 128},/'
cfg_refused cfg-rope-scaling-yarn rope_scaling
cfg cfg-attention-bias 's/"hidden_act": "silu",/"hidden_act": "silu", "attention_bias": true,/'
cfg_refused cfg-attention-bias attention_bias
cfg cfg-hidden-act-gelu 's/"hidden_act": "silu"/"hidden_act": "gelu"/'
cfg_refused cfg-hidden-act-gelu hidden_act
# a window of 4 from layer 0 on changes every position past 4 of a 32-token prompt
cfg cfg-sliding-window 's/"hidden_act": "silu",/"hidden_act": "silu", "use_sliding_window": true, "sliding_window": 4, "max_window_layers": 0,/'
cfg_refused cfg-sliding-window use_sliding_window

# Good: the same keys with the values the real Qwen3-30B-A3B config.json carries (Hugging Face
# hub: attention_bias false, rope_scaling null, use_sliding_window false, sliding_window null,
# max_window_layers 48, plus bookkeeping keys) are plain Qwen3-MoE and must be accepted: exit 0.
cfg cfg-real-qwen3-keys 's/"hidden_act": "silu",/"hidden_act": "silu", "attention_bias": false, "attention_dropout": 0.0, "rope_scaling": null, "use_sliding_window": false, "sliding_window": null, "max_window_layers": 48, "output_router_logits": false, "router_aux_loss_coef": 0.001, "initializer_range": 0.02, "bos_token_id": 151643, "eos_token_id": 151645, "use_cache": true, "transformers_version": "4.51.0",/'
fresh o-real
expect_exit cfg-real-qwen3-keys 0 $T npu-replay run --model cfg-real-qwen3-keys --manifest m.jsonl --side baseline \
    --warmup 0 --runs 1 --cases $C1 --golden o-real/g.h5 --raw o-real/r.jsonl

# ---------------------------------------------------------------------------------------------
# FIFOs in the model folder (cli.md: a FIFO never hangs a tool; `.safetensors` given as a FIFO
# is refused, its size is read first). The weights as a FIFO: exit 2 naming the file, in bounds.
rm -rf fifo-weights; cp -r model fifo-weights; rm fifo-weights/model.safetensors; mkfifo fifo-weights/model.safetensors
fresh o-fw
$T npu-replay run --model fifo-weights --manifest m.jsonl --side baseline --warmup 0 --runs 1 --cases $C1 \
    --golden o-fw/g.h5 --raw o-fw/r.jsonl > out.txt 2> err.txt
rc=$?
if [ $rc -ne 2 ] || [ -n "$(left o-fw)" ]; then notok cpu-fifo-weights "exit $rc, wanted 2; left: $(left o-fw)"
elif ! grep -q model.safetensors err.txt; then notok cpu-fifo-weights "reason does not name the file: $(why err.txt 200)"
else ok cpu-fifo-weights; fi
# A FIFO beside the model (a tokenizer.json someone streams): issue 27 "a FIFO, device or
# endless file in a model folder is refused, never copied or read whole": run and conform
# exit 2 naming it, without blocking on it.
rm -rf fifo-extra; cp -r model fifo-extra; mkfifo fifo-extra/vendor-stream.fifo
fresh o-fx
expect_exit cpu-fifo-extra-run 2 $T npu-replay run --model fifo-extra --manifest m.jsonl --side baseline --warmup 0 --runs 1 \
    --cases $C1 --golden o-fx/g.h5 --raw o-fx/r.jsonl
expect_exit cpu-fifo-extra-conform-router 2 $T npu-replay conform --model fifo-extra --checks router

# ---------------------------------------------------------------------------------------------
# Collect the hang cases.
wait
rc=$(cat h3.rc 2>/dev/null || echo none)
if [ "$rc" != 2 ] || [ -n "$(left h3)" ]; then notok run-plugin-vocab-1e9 "exit $rc (124/137: not done in 20 s), wanted 2; left: $(left h3): $(why h3.err 200)"
elif ! grep -qi vocab h3.err; then notok run-plugin-vocab-1e9 "reason does not name the vocabulary: $(why h3.err 200)"
else ok run-plugin-vocab-1e9; fi
rc=$(cat h1.rc 2>/dev/null || echo none)
if [ "$rc" != 2 ]; then notok run-plugin-hang-prefill "exit $rc (124/137: still hung after 20 s), wanted 2: $(why h1.err 200)"
elif [ -n "$(left h1)" ]; then notok run-plugin-hang-prefill "left: $(left h1)"
else ok run-plugin-hang-prefill; fi
rc=$(cat h2.rc 2>/dev/null || echo none)
case $rc in
1|2) if [ -f h2/c.json ] && grep -q '"verdict": *"pass"' h2/c.json; then notok conform-plugin-hang-decode-sigterm-ignored "report says pass"
     else ok conform-plugin-hang-decode-sigterm-ignored; fi ;;
*) notok conform-plugin-hang-decode-sigterm-ignored "exit $rc (124/137: still hung after 20 s), wanted 1 or 2: $(why h2.err 200)" ;;
esac
