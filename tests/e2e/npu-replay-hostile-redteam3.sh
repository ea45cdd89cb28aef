#!/bin/sh
# Red team (AREA iso3): npu-replay against hostile vendor plug-ins (isolation, signals, config)
# and npu-replay score on hostile inputs. Written from docs/npu-replay.md ("Isolation", "A host
# that dies or hangs", "What crosses the ABI is checked", "The CPU reference backend", "score"),
# docs/conformance.md, docs/npu-replay.1 and golden/backend.h only.
. "$GOLDEN_ROOT/tests/e2e/lib.sh"
NR=npu-replay
TO="timeout -s KILL 25"
# --- the hostile plug-in: a complete minimal version 1 backend (vocab 32, context 64, 4 lanes,
# no experts, no taps) that behaves until the at-th call of kind `call`, then does `mode`.
cat > hostile.c <<'EOF'
/* A minimal version 1 backend (golden/backend.h) that behaves until call N of one kind. */
#include "golden/backend.h"
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <fcntl.h>
#define V 32
#define CTX 64
#define LANES 4
typedef struct { int32_t tok[LANES][CTX]; int64_t len[LANES]; } st;
static char mode[64] = "good", call[32] = "none"; static int at = 1; static int cnt;
static char marker[256] = ""; static int lie_vocab = V, lie_layers = 1, lie_hidden = 8;
static int hit(const char *c) { if (strcmp(c, call)) return 0; return ++cnt == at; }
static void lingerchild(void) { pid_t p = fork(); if (p == 0) { setsid(); if (fork() == 0) { sleep(30); _exit(0); } _exit(0); } }
static int act(char *msg, size_t n) {
    if (!strcmp(mode, "exit0")) exit(0);
    if (!strcmp(mode, "_exit0")) _exit(0);
    if (!strcmp(mode, "abort")) abort();
    if (!strcmp(mode, "segv")) { volatile int *p = (int *)16; *p = 1; }
    if (!strcmp(mode, "sigkill_self")) raise(SIGKILL);
    if (!strcmp(mode, "ppid_term")) kill(getppid(), SIGTERM);
    if (!strcmp(mode, "ppid_int")) kill(getppid(), SIGINT);
    if (!strcmp(mode, "ppid_kill")) kill(getppid(), SIGKILL);
    if (!strcmp(mode, "ppid_stop")) kill(getppid(), SIGSTOP);
    if (!strcmp(mode, "ppid_cont")) kill(getppid(), SIGCONT);
    if (!strcmp(mode, "kill0_term")) kill(0, SIGTERM);
    if (!strcmp(mode, "linger")) lingerchild();
    if (!strcmp(mode, "closestdio")) { close(0); close(1); close(2); }
    if (!strcmp(mode, "closeall")) { for (int fd = 3; fd < 1024; fd++) close(fd); }
    if (!strcmp(mode, "dup2all")) { int z = open("/dev/null", O_RDWR); for (int fd = 3; fd < 1024; fd++) if (fd != z) dup2(z, fd); }
    if (!strcmp(mode, "msgover")) { memset(msg, 'A', n + 8192); return 1; }
    if (!strcmp(mode, "escmsg")) { snprintf(msg, n, "\033]0;pwned\007\033[31mred\xff\xfe\xc0\xaf end"); return 1; }
    if (!strcmp(mode, "sleep")) for (;;) sleep(100);
    if (!strcmp(mode, "spin")) for (volatile unsigned long i = 0;; i++) ;
    if (!strcmp(mode, "nonul")) { memset(msg, 'A', n); return 1; }
    if (!strcmp(mode, "print")) { printf("\033]0;owned\007\033[2J stdout\n"); fflush(stdout); fprintf(stderr, "\033[31mstderr\xff\n"); }
    if (!strcmp(mode, "writecwd")) { FILE *f = fopen("planted.txt", "w"); if (f) { fputs("x", f); fclose(f); } }
    return 0;
}
static int b_open(const golden_backend_open_args *a, void **self, char *msg, size_t n) {
    for (size_t i = 0; i < a->n_opts; i++) {
        if (!strcmp(a->keys[i], "mode")) snprintf(mode, sizeof mode, "%s", a->values[i]);
        else if (!strcmp(a->keys[i], "call")) snprintf(call, sizeof call, "%s", a->values[i]);
        else if (!strcmp(a->keys[i], "at")) at = atoi(a->values[i]);
        else if (!strcmp(a->keys[i], "vocab")) lie_vocab = atoi(a->values[i]);
        else if (!strcmp(a->keys[i], "layers")) lie_layers = atoi(a->values[i]);
        else if (!strcmp(a->keys[i], "hidden")) lie_hidden = atoi(a->values[i]);
        else if (!strcmp(a->keys[i], "marker")) snprintf(marker, sizeof marker, "%s", a->values[i]);
        else { snprintf(msg, n, "unknown option %s", a->keys[i]); return 1; }
    }
    *self = calloc(1, sizeof(st));
    if (marker[0]) { if (access(marker, F_OK) == 0) lie_vocab = V - 1; else { FILE *f = fopen(marker, "w"); if (f) fclose(f); } }
    if (hit("open")) return act(msg, n);
    return 0;
}
static void b_close(void *s) { free(s); }
static int b_info(void *s, golden_backend_info *o, char *msg, size_t n) {
    (void)s; memset(o, 0, sizeof *o);
    o->version = 1; o->hidden_size = lie_hidden; o->num_layers = lie_layers; o->num_experts = 0;
    o->experts_per_tok = 0; o->vocab_size = lie_vocab; o->context_limit = CTX; o->num_lanes = LANES;
    o->logits_dtype = GOLDEN_BK_F32;
    if (hit("info")) return act(msg, n);
    return 0;
}
static int b_hooks(void *s, const golden_backend_hooks *h, char *m, size_t n) { (void)s; (void)h; (void)m; (void)n; return 0; }
static int b_prefill(void *sv, int lane, int64_t pos, const int32_t *t, size_t k, char *msg, size_t n) {
    st *s = sv;
    if (lane < 0 || lane >= LANES || pos < 0 || pos > s->len[lane]) { snprintf(msg, n, "bad lane or pos"); return 1; }
    if (pos + (int64_t)k > CTX) { snprintf(msg, n, "context_limit_exceeded: %lld", (long long)(pos + k)); return 1; }
    if (hit("prefill")) { int r = act(msg, n); if (r) return r; }
    for (size_t i = 0; i < k; i++) s->tok[lane][pos + i] = t[i];
    s->len[lane] = pos + k; return 0;
}
static int b_decode(void *sv, int lane, int32_t t, char *msg, size_t n) {
    st *s = sv;
    if (lane < 0 || lane >= LANES) { snprintf(msg, n, "bad lane"); return 1; }
    if (s->len[lane] + 1 > CTX) { snprintf(msg, n, "context_limit_exceeded: %lld", (long long)s->len[lane] + 1); return 1; }
    if (hit("decode")) { int r = act(msg, n); if (r) return r; }
    s->tok[lane][s->len[lane]++] = t; return 0;
}
static int b_logits(void *sv, int lane, int first, int count, void *dst, char *msg, size_t n) {
    st *s = sv; float *d = dst;
    if (lane < 0 || lane >= LANES || s->len[lane] == 0 || first < 0 || count < 0 || first + count > V) { snprintf(msg, n, "bad logits range"); return 1; }
    int64_t p = s->len[lane] - 1; int32_t last = s->tok[lane][p];
    for (int i = 0; i < count; i++) { int e = first + i; d[i] = (e == (int)((last * 3 + p) % V)) ? 2.0f : -0.1f * (float)((e * 7 + p) % 5); }
    if (hit("logits")) {
        if (!strcmp(mode, "nan")) { d[0] = NAN; return 0; }
        if (!strcmp(mode, "inf")) { d[count - 1] = INFINITY; return 0; }
        if (!strcmp(mode, "allneginf")) { for (int i = 0; i < count; i++) d[i] = -INFINITY; return 0; }
        if (!strcmp(mode, "logitsover")) { for (int i = 0; i < count + 4096; i++) d[i] = 0.f; return 0; }
        return act(msg, n);
    }
    return 0;
}
static int b_truncate(void *sv, int lane, int64_t len, char *msg, size_t n) {
    st *s = sv; if (lane < 0 || lane >= LANES || len < 0 || len > s->len[lane]) { snprintf(msg, n, "bad truncate"); return 1; }
    s->len[lane] = len; return 0;
}
static int b_reset(void *sv, int lane, char *msg, size_t n) {
    st *s = sv;
    if (hit("reset")) { int r = act(msg, n); if (r) return r; }
    if (lane < 0) memset(s->len, 0, sizeof s->len); else if (lane < LANES) s->len[lane] = 0; else { snprintf(msg, n, "bad lane"); return 1; }
    return 0;
}
static int64_t b_length(void *sv, int lane) { st *s = sv; return (lane >= 0 && lane < LANES) ? s->len[lane] : -1; }
#ifndef BKNAME
#define BKNAME "hostile"
#endif
static const golden_backend_vtable vt = {1, BKNAME, b_open, b_close, b_info, b_hooks, b_prefill, b_decode, b_logits, b_truncate, b_reset, b_length};
const golden_backend_vtable *golden_backend_entry(void) { return &vt; }
EOF
if ! cc -shared -fPIC -I"$GOLDEN_ROOT/libgolden/include" -o hostile.so hostile.c 2> cc.txt; then
    notok build-hostile-plugin "$(head -c 300 cc.txt)"; exit 0; fi
P=$PWD/hostile.so
# the same plug-in whose vtable name is a terminal escape and invalid UTF-8
cc -shared -fPIC -I"$GOLDEN_ROOT/libgolden/include" '-DBKNAME="\033]0;t\007\033[2Jevil\xff"' -o evilname.so hostile.c 2> cc.txt || notok build-evilname "$(head -c 300 cc.txt)"
mkdir -p pm && echo '{}' > pm/config.json
# A manifest of two cases over the plug-in's vocabulary: a prefill of 4 tokens (1 output) and a
# decode case (past 3, 4 outputs). Token files are JSON arrays named with their sha256.
mkman() { # mkman FILE ID1-TOKENS ID2-TOKENS  (comma-separated ids)
    _m=$1; _b=${1%.jsonl}; mkdir -p inputs; : > "$_m"
    printf '[%s]' "$2" > inputs/$_b-c1.json; printf '[%s]' "$3" > inputs/$_b-c2.json
    _h1=$(sha256sum inputs/$_b-c1.json | cut -d' ' -f1); _h2=$(sha256sum inputs/$_b-c2.json | cut -d' ' -f1)
    _n1=$(echo "$2" | tr ',' '\n' | wc -l | tr -d ' '); _n2=$(echo "$3" | tr ',' '\n' | wc -l | tr -d ' ')
    echo "{\"schema\":\"calculet-input-manifest/v1\",\"case_id\":\"c1\",\"phase\":\"prefill\",\"prompt_tokens\":$_n1,\"past_tokens\":0,\"output_tokens\":1,\"concurrency\":1,\"dataset\":\"random_tokens\",\"seed\":0,\"rejection\":false,\"input\":{\"path\":\"inputs/$_b-c1.json\",\"sha256\":\"$_h1\"}}" >> "$_m"
    echo "{\"schema\":\"calculet-input-manifest/v1\",\"case_id\":\"c2\",\"phase\":\"decode\",\"prompt_tokens\":1,\"past_tokens\":$((_n2 - 1)),\"output_tokens\":4,\"concurrency\":1,\"dataset\":\"repeated_tokens\",\"seed\":0,\"rejection\":false,\"input\":{\"path\":\"inputs/$_b-c2.json\",\"sha256\":\"$_h2\"}}" >> "$_m"
}
mkman man.jsonl 1,5,9,13 2,4,6,8
ESC=$(printf '\033'); BEL=$(printf '\007')
# clean_text NAME FILE...: no ESC or BEL byte and valid UTF-8 in every FILE.
clean_text() {
    _n=$1; shift
    for _f in "$@"; do [ -f "$_f" ] || continue
        if LC_ALL=C grep -q "[$ESC$BEL]" "$_f"; then notok "$_n" "raw escape in $_f"; return; fi
        if ! iconv -f UTF-8 -t UTF-8 "$_f" > /dev/null 2>&1; then notok "$_n" "invalid UTF-8 in $_f"; return; fi
    done; ok "$_n"
}
# hostile_run NAME KIND OPTS...: `run` through the plug-in with --backend-opt OPTS must be exit 2,
# a calculet-fault/v1 line of kind KIND in f.jsonl, no golden, no raw file, no temporary left
# beside them (docs/npu-replay.md: "A host that dies or hangs is a fault of the backend" table,
# "Which partial run is valid: none", "Only the faults file is written").
hostile_run() {
    _n=$1; _k=$2; shift 2; _o=""
    for _a in "$@"; do _o="$_o --backend-opt $_a"; done
    rm -rf out && mkdir out
    # shellcheck disable=SC2086
    $TO $NR run --backend "$P" --model pm --manifest man.jsonl --side candidate --golden out/g.h5 \
        --raw out/r.jsonl --faults out/f.jsonl --warmup 1 --runs 1 --call-timeout 2 $_o > out.txt 2> err.txt
    _rc=$?; _left=$(ls out | grep -v '^f.jsonl$' | tr '\n' ' ')
    if [ "$_rc" -ne 2 ]; then notok "$_n" "exit $_rc, wanted 2: $(head -c 300 err.txt)"
    elif [ -n "$_left" ]; then notok "$_n" "partial output left: $_left"
    elif ! grep -Eq "\"kind\": *\"($_k)\"" out/f.jsonl 2>/dev/null; then notok "$_n" "no fault of kind $_k: $(head -c 300 out/f.jsonl 2>/dev/null) / $(head -c 200 err.txt)"
    else ok "$_n"; fi
}
# hostile_conform NAME KIND OPTS...: `conform --checks kv-reset` through the plug-in must be exit
# 2 ("a crash, exit, abort or hang in it is that check's error with a fault line, never a pass
# and never a fail: the exit status is 2"), the JSON verdict "could not check", a fault of KIND.
hostile_conform() {
    _n=$1; _k=$2; shift 2; _o=""
    for _a in "$@"; do _o="$_o --backend-opt $_a"; done
    rm -f c.json cf.jsonl
    # shellcheck disable=SC2086
    $TO $NR conform --backend "$P" --model pm --checks kv-reset --json c.json --faults cf.jsonl \
        --call-timeout 2 $_o > out.txt 2> err.txt
    _rc=$?
    if [ "$_rc" -ne 2 ]; then notok "$_n" "exit $_rc, wanted 2: $(head -c 300 err.txt)"
    elif ! grep -q '"verdict": *"could not check"' c.json 2>/dev/null; then notok "$_n" "verdict: $(grep verdict c.json 2>/dev/null)"
    elif ! grep -Eq "\"kind\": *\"($_k)\"" cf.jsonl 2>/dev/null; then notok "$_n" "no fault of kind $_k: $(head -c 300 cf.jsonl 2>/dev/null)"
    else ok "$_n"; fi
}

# 1. Control: the well-behaved plug-in passes `run` (exit 0: "0 done"), golden and raw written,
# an empty faults file ("A run that completes writes an empty faults file").
rm -rf out && mkdir out
$TO $NR run --backend "$P" --model pm --manifest man.jsonl --side baseline --golden out/g.h5 \
    --raw out/r.jsonl --faults out/f.jsonl --warmup 1 --runs 1 > out.txt 2> err.txt
rc=$?
if [ $rc -eq 0 ] && [ -s out/g.h5 ] && [ -s out/r.jsonl ] && [ ! -s out/f.jsonl ]; then ok good-plugin-run-passes
else notok good-plugin-run-passes "exit $rc: $(head -c 300 err.txt)"; fi
# 2. Control: conform's logits-only checks pass on it (exit 0 "every selected check passed").
expect_exit good-plugin-conform-passes 0 $TO $NR conform --backend "$P" --model pm --checks kv-reset,kv-lanes,kv-tail

# 3-9. The death table (docs/npu-replay.md "A host that dies or hangs"): exit(0)/_exit(0) is
# kind exit ("also exit(0)"), signals are kind crash; each in a different call.
hostile_run exit0-in-prefill exit mode=exit0 call=prefill at=2
hostile_run exit0-in-decode exit mode=exit0 call=decode at=3
hostile_run _exit0-in-logits exit mode=_exit0 call=logits at=2
hostile_run exit0-in-reset exit mode=exit0 call=reset at=2
hostile_run abort-in-decode crash mode=abort call=decode at=1
hostile_run segv-in-prefill crash mode=segv call=prefill at=3
hostile_run raise-sigkill-self crash mode=sigkill_self call=decode at=2
# 10. exit(0) in info: "A host that dies or hangs in open or info is one error line, exit 2, and
# with --faults its fault line (no case_id, no request_id)".
rm -rf out && mkdir out
$TO $NR run --backend "$P" --model pm --manifest man.jsonl --side candidate --golden out/g.h5 \
    --raw out/r.jsonl --faults out/f.jsonl --backend-opt mode=exit0 --backend-opt call=info > out.txt 2> err.txt
rc=$?
if [ $rc -ne 2 ]; then notok exit0-in-info "exit $rc, wanted 2"
elif [ "$(wc -l < err.txt)" -ne 1 ]; then notok exit0-in-info "not one error line: $(head -c 300 err.txt)"
elif ! grep -q '"kind": *"exit"' out/f.jsonl 2>/dev/null || grep -q '"case_id"' out/f.jsonl; then notok exit0-in-info "fault line: $(head -c 300 out/f.jsonl 2>/dev/null)"
elif [ -e out/g.h5 ] || [ -e out/r.jsonl ]; then notok exit0-in-info "partial output"
else ok exit0-in-info; fi

# 11-16. Signals at the harness (Isolation, "The host cannot signal the harness", layer 2): the
# filter kills the host with SIGSYS before the call happens: kind crash, exit 2, nothing partial,
# and the harness is never stopped (SIGSTOP) nor killed (timeout would report 137).
hostile_run kill-parent-sigterm crash mode=ppid_term call=decode at=2
hostile_run kill-parent-sigint crash mode=ppid_int call=prefill at=1
hostile_run kill-parent-sigkill crash mode=ppid_kill call=decode at=1
hostile_run kill-parent-sigstop crash mode=ppid_stop call=logits at=1
hostile_run kill-parent-sigcont crash mode=ppid_cont call=decode at=1
# 16. kill(0, SIGTERM): layer 1, the host leads its own group, so it dies of it: a crash.
hostile_run kill0-sigterm crash mode=kill0_term call=decode at=2
# 17. Filter off (GOLDEN_BACKEND_FILTER=off): layer 3, a SIGTERM from the host is kind signal,
# exit 2, nothing partial ("backend host signalled the harness ... kind signal").
export GOLDEN_BACKEND_FILTER=off
hostile_run nofilter-kill-parent-sigterm signal mode=ppid_term call=decode at=2
hostile_run nofilter-kill-parent-sigint signal mode=ppid_int call=prefill at=2
# 19. Filter off, SIGKILL of the harness: "the harness exits 137 (never 0 ...)".
rm -rf out && mkdir out
$TO $NR run --backend "$P" --model pm --manifest man.jsonl --side candidate --golden out/g.h5 \
    --raw out/r.jsonl --warmup 0 --runs 1 --backend-opt mode=ppid_kill --backend-opt call=decode > out.txt 2> err.txt
rc=$?
if [ $rc -eq 0 ] || [ -e out/g.h5 ]; then notok nofilter-kill-parent-sigkill-never-0 "exit $rc"; else ok nofilter-kill-parent-sigkill-never-0; fi
unset GOLDEN_BACKEND_FILTER

# 20-22. Broken channel: closing or dup2-ing over the channel fds is "broke the channel": crash.
hostile_run close-all-fds crash mode=closeall call=decode at=2
hostile_run dup2-over-channel crash mode=dup2all call=prefill at=2
# 22. judgement: a plug-in closing its own fds 0-2 harms nobody (its stdout/stderr are the backend
# log); the run must still complete (exit 0, golden written).
rm -rf out && mkdir out
expect_exit close-stdio-is-harmless 0 $TO $NR run --backend "$P" --model pm --manifest man.jsonl --side candidate \
    --golden out/g.h5 --raw out/r.jsonl --warmup 0 --runs 1 --backend-opt mode=closestdio --backend-opt call=prefill

# 23-24. Guard pages: "a write past either end kills the host (a crash), never the harness".
# Under AddressSanitizer the sanitizer catches the overflowing memset first and the host exits 1
# (kind exit); the plain build hits the guard page (kind crash): either is the fault, exit 2.
hostile_run write-past-msg 'crash|exit' mode=msgover call=decode at=1
hostile_run write-past-logits crash mode=logitsover call=logits at=2
# 25-26. Deadlines: --call-timeout 2, a sleeping or spinning call is a hang (killed).
hostile_run sleep-forever-in-decode hang mode=sleep call=decode at=1
hostile_run spin-in-prefill hang mode=spin call=prefill at=2
# 27-29. Unusable logits: "NaN, +Inf, or nothing but -inf is a nan_output fault".
hostile_run nan-logits nan_output mode=nan call=logits at=2
hostile_run inf-logits nan_output mode=inf call=logits at=1
hostile_run all-neginf-logits nan_output mode=allneginf call=logits at=3
# 30. Terminal escapes / invalid UTF-8 in a message: cleaned to printable UTF-8 "before they reach
# a terminal, a report or a fault line"; the kind from a message without a keyword: device_error.
hostile_run escape-message-fault device_error mode=escmsg call=prefill at=1
clean_text escape-message-cleaned out.txt err.txt out/f.jsonl
# 32. A lingering setsid'd grandchild must not keep the harness waiting: the run completes
# (exit 0) long before the grandchild's 30 s sleep ends (judgement: the docs promise deadlines
# for calls; a demanding user expects the harness not to wait on a process it never asked for).
rm -rf out && mkdir out
t0=$(date +%s)
timeout -s KILL 15 $NR run --backend "$P" --model pm --manifest man.jsonl --side candidate --golden out/g.h5 \
    --raw out/r.jsonl --warmup 0 --runs 1 --backend-opt mode=linger --backend-opt call=prefill > out.txt 2> err.txt
rc=$?; t1=$(date +%s)
if [ $rc -eq 0 ] && [ -s out/g.h5 ] && [ $((t1 - t0)) -lt 12 ]; then ok lingering-grandchild-no-wait
else notok lingering-grandchild-no-wait "exit $rc after $((t1 - t0)) s: $(head -c 200 err.txt)"; fi
# 33. A fresh host whose info() differs from the first's ("a fresh host must report the same
# info as the first"): the retest after the crash must fail, never pass on another model.
rm -f marker.flag
hostile_run fresh-host-info-changes crash mode=segv call=decode at=1 marker=$PWD/marker.flag
if grep -q '"retest_after_reset": *"failed"' out/f.jsonl 2>/dev/null; then ok fresh-host-info-changes-retest-failed
else notok fresh-host-info-changes-retest-failed "$(head -c 300 out/f.jsonl 2>/dev/null)"; fi

# 35-37. Lying info() ("info() against budgets ... a vocabulary of 10^9 is exit 2 naming the field").
expect_exit lying-info-huge-vocab 2 $TO $NR run --backend "$P" --model pm --manifest man.jsonl --side candidate \
    --golden g.h5 --raw r.jsonl --backend-opt vocab=1000000000
expect_grep lying-info-huge-vocab-named 'vocab' err.txt
# judgement: a vocabulary of 0 or a negative hidden size is no model: exit 2, like a budget breach.
expect_exit lying-info-zero-vocab 2 $TO $NR run --backend "$P" --model pm --manifest man.jsonl --side candidate \
    --golden g.h5 --raw r.jsonl --backend-opt vocab=0
expect_exit lying-info-negative-layers 2 $TO $NR run --backend "$P" --model pm --manifest man.jsonl --side candidate \
    --golden g.h5 --raw r.jsonl --backend-opt layers=-1
expect_absent lying-info-no-golden g.h5

# 40-44. conform through the same plug-ins: each a check error, verdict "could not check", exit 2.
hostile_conform conform-exit0-in-decode exit mode=exit0 call=decode at=5
hostile_conform conform-segv-in-prefill crash mode=segv call=prefill at=3
hostile_conform conform-kill-parent-sigterm crash mode=ppid_term call=decode at=2
hostile_conform conform-sleep-in-logits hang mode=sleep call=logits at=4
# NaN logits: "refused ... a nan_output fault, so two NaN rows never compare equal" (an error,
# exit 2; never a pass).
hostile_conform conform-nan-logits nan_output mode=nan call=logits at=3
hostile_conform conform-escape-message device_error mode=escmsg call=prefill at=2
clean_text conform-escape-message-cleaned out.txt err.txt c.json cf.jsonl
# 47. conform with exit(0) in open: "conform prints that one error line and exits 2 with no
# table and no report".
rm -f c.json
expect_exit conform-exit0-in-open 2 $TO $NR conform --backend "$P" --model pm --checks kv-reset --json c.json \
    --backend-opt mode=exit0 --backend-opt call=open
expect_absent conform-exit0-in-open-no-report c.json
# 49. conform interrupted by a SIGINT from the host with the filter off: kind signal, never a
# pass ("A stop sent by the host ... is no interrupt but the backend's fault").
export GOLDEN_BACKEND_FILTER=off
hostile_conform conform-nofilter-sigint signal mode=ppid_int call=decode at=3
unset GOLDEN_BACKEND_FILTER

# 50-52. matrix through hostile plug-ins: "A matrix that fails removes the manifest and every
# token file (and the inputs/ folder) it created"; a host death in info is exit 2.
mkdir -p mx && cd mx
expect_exit matrix-exit0-in-info 2 $TO $NR matrix --backend "$P" --max-len 4 --random 1 --repeated 0 -o mm.jsonl \
    --backend-opt mode=exit0 --backend-opt call=info
expect_absent matrix-exit0-in-info-no-manifest mm.jsonl
expect_exit matrix-kill-parent-sigterm 2 $TO $NR matrix --backend "$P" --max-len 4 --random 1 --repeated 0 -o mm.jsonl \
    --backend-opt mode=ppid_term --backend-opt call=info
expect_absent matrix-kill-parent-no-inputs inputs
# near-ties decode through the backend: a crash in the middle leaves nothing.
$TO $NR matrix --backend "$P" --max-len 4 --random 1 --repeated 0 --near-ties 4 -o mm.jsonl \
    --backend-opt mode=segv --backend-opt call=decode --backend-opt at=2 > ../out.txt 2> ../err.txt
rc=$?
if [ $rc -eq 2 ] && [ ! -e mm.jsonl ] && [ ! -e inputs ]; then ok matrix-near-ties-crash-nothing-left
else notok matrix-near-ties-crash-nothing-left "exit $rc; left: $(ls)"; fi
cd ..

# ---- config.json of a cpu-backend model folder (docs/npu-replay.md, "The CPU reference backend").
$NR make-model --preset tiny --seed 1 -o tiny > /dev/null 2>&1 || notok make-model-tiny
# mkcfg DIR 'EXTRA JSON MEMBERS,' : a copy of the tiny model with members added at the top.
mkcfg() {
    rm -rf "$1"; mkdir "$1"; ln -s "$PWD/tiny/model.safetensors" "$1/model.safetensors"
    { echo '{'; echo "$2"; sed 1d tiny/config.json; } > "$1/config.json"
}
printf '[1,2,3]' > inputs/t1.json
h=$(sha256sum inputs/t1.json | cut -d' ' -f1)
echo "{\"schema\":\"calculet-input-manifest/v1\",\"case_id\":\"t1\",\"phase\":\"prefill\",\"prompt_tokens\":3,\"past_tokens\":0,\"output_tokens\":2,\"concurrency\":1,\"dataset\":\"random_tokens\",\"seed\":0,\"rejection\":false,\"input\":{\"path\":\"inputs/t1.json\",\"sha256\":\"$h\"}}" > tman.jsonl
cfgrun() { # cfgrun NAME STATUS DIR: one run of the one-case manifest
    rm -f cg.h5 cr.jsonl
    expect_exit "$1" "$2" $TO $NR run --model "$3" --manifest tman.jsonl --side baseline --golden cg.h5 --raw cr.jsonl \
        --warmup 0 --runs 1 --taps none
}
# Keys that change the math are refused "unless absent or at their neutral value", one line
# naming the key.
for kv in 'rope_scaling:{"type":"linear","factor":2}' 'attention_bias:true' 'mlp_bias:true' \
          'hidden_act:"gelu"' 'use_sliding_window:true' 'partial_rotary_factor:0.5' 'model_type:"llama"'; do
    k=${kv%%:*}; v=${kv#*:}
    mkcfg cm "\"$k\": $v,"
    # model_type and hidden_act are already in the file: drop the original line
    sed -i "1,2!{/\"$k\"/d}" cm/config.json
    cfgrun "config-refused-$k" 2 cm
    expect_grep "config-refused-$k-named" "$k" err.txt
done
# Neutral values are accepted: rope_scaling null, use_sliding_window false with a sliding_window.
mkcfg cn '"rope_scaling": null, "use_sliding_window": false, "sliding_window": 4, "attention_bias": false,'
cfgrun config-neutral-values-accepted 0 cn
# judgement: a duplicate key is two answers to one question (a last-wins parser reads "silu", a
# first-wins one "gelu"): refused, exit 2, never a golden of either model.
mkcfg cd '"hidden_act": "gelu",'
cfgrun config-duplicate-key-refused 2 cd
# Unknown keys are accepted and listed, sorted, comma-separated, in the golden's root attribute
# config_unknown_keys ("" when every key is known); conform's report lists them too.
mkcfg cu '"zeta_new_knob": 1, "attn_logit_softcapping": 30.0, "quantization_config": {"bits": 4},'
cfgrun config-unknown-keys-accepted 0 cu
if [ -z "$PYTHON" ]; then ok "config-unknown-keys-listed # skip no numpy"; else
    got=$("$PYTHON" -c 'import h5py,sys; v=h5py.File(sys.argv[1],"r").attrs.get("config_unknown_keys"); print(v.decode() if isinstance(v,bytes) else v)' cg.h5 2>&1)
    if [ "$got" = "attn_logit_softcapping,quantization_config,zeta_new_knob" ]; then ok config-unknown-keys-listed
    else notok config-unknown-keys-listed "config_unknown_keys=$got"; fi
fi
rm -f cj.json
$TO $NR conform --model cu --checks kv-reset --json cj.json > out.txt 2> err.txt
tr -d ' \n' < cj.json > cj1.json 2>/dev/null
expect_grep conform-unknown-keys-listed '"config_unknown_keys":\["attn_logit_softcapping","quantization_config","zeta_new_knob"\]' cj1.json
# A refused key stops conform before the first check: one line, exit 2, no report.
mkcfg cr2 '"rope_scaling": {"type": "yarn", "factor": 4},'
rm -f cj.json
expect_exit conform-refused-key-exit2 2 $TO $NR conform --model cr2 --checks kv-reset --json cj.json
expect_absent conform-refused-key-no-report cj.json

# ---- score (docs/npu-replay.md "score"): through the plug-in (version 1 path).
# 1. Control: it scores (exit 0) the 3 + 3 scored tokens of the two cases.
mkman sman.jsonl 1,5,9,13 2,4,6,8
rm -f s.json
expect_exit score-good-plugin 0 $TO $NR score --backend "$P" --model pm --manifest sman.jsonl --side baseline -o s.json
# 2. NaN logits at the 2nd logits read of the run: "a finding, never a number": exit 1, the case
# carries `finding` and its dataset no perplexity.
rm -f s.json
$TO $NR score --backend "$P" --model pm --manifest sman.jsonl --side baseline -o s.json \
    --backend-opt mode=nan --backend-opt call=logits --backend-opt at=2 > out.txt 2> err.txt
rc=$?
if [ $rc -ne 1 ]; then notok score-nan-is-finding "exit $rc, wanted 1: $(head -c 300 err.txt)"
elif [ -z "$PYTHON" ]; then ok "score-nan-is-finding # skip no numpy"
elif "$PYTHON" - s.json <<'PY'
import json, sys, math
d = json.load(open(sys.argv[1]))
bad = [c for c in d["cases"] if "finding" in c]
assert len(bad) == 1 and "nll_sum" not in bad[0] and "perplexity" not in bad[0], d["cases"]
ds = [x for x in d["datasets"] if x["dataset"] == bad[0]["dataset"]][0]
assert ds.get("perplexity") is None and ds["findings"] == 1, ds
for x in d["datasets"]:
    p = x.get("perplexity")
    assert p is None or math.isfinite(p), x
PY
then ok score-nan-is-finding; else notok score-nan-is-finding "document: $(head -c 400 s.json)"; fi
# 3. +Inf logits: the same rule.
rm -f s.json
expect_exit score-inf-is-finding 1 $TO $NR score --backend "$P" --model pm --manifest sman.jsonl --side baseline -o s.json \
    --backend-opt mode=inf --backend-opt call=logits --backend-opt at=4
# 4. A token outside the vocabulary (32 and 40 for a vocabulary of 32): exit 2, nothing written.
mkman oman.jsonl 1,5,32,13 2,4,6,40
rm -f s.json
expect_exit score-id-out-of-vocab 2 $TO $NR score --backend "$P" --model pm --manifest oman.jsonl --side baseline -o s.json
expect_absent score-id-out-of-vocab-nothing-written s.json
# 5. A negative id: the same (judgement: -1 is outside [0, vocab) as surely as 32).
mkman nman.jsonl 1,-1,9,13 2,4,6,8
expect_exit score-negative-id 2 $TO $NR score --backend "$P" --model pm --manifest nman.jsonl --side baseline -o s.json
# 6. A host death while scoring: a backend error, exit 2, nothing written.
rm -f s.json
expect_exit score-exit0-in-decode 2 $TO $NR score --backend "$P" --model pm --manifest sman.jsonl --side baseline -o s.json \
    --backend-opt mode=exit0 --backend-opt call=decode --backend-opt at=2
expect_absent score-exit0-nothing-written s.json
expect_exit score-kill-parent-sigterm 2 $TO $NR score --backend "$P" --model pm --manifest sman.jsonl --side baseline -o s.json \
    --backend-opt mode=ppid_term --backend-opt call=logits --backend-opt at=3
# 7. judgement: run with an out-of-vocabulary id in the token file. score calls "a token outside
# the vocabulary" exit 2 for this very manifest; run, a second reader of the same token file
# sending it to the same backend, must not hand a vendor runtime ids it does not have (an
# out-of-range embedding read on a device) and record them as a golden's input_ids.: exit 2 before any golden.
rm -rf out && mkdir out
expect_exit run-id-out-of-vocab 2 $TO $NR run --backend "$P" --model pm --manifest oman.jsonl --side candidate \
    --golden out/g.h5 --raw out/r.jsonl --warmup 0 --runs 1
expect_absent run-id-out-of-vocab-no-golden out/g.h5

# ---- A real Ctrl-C while the plug-in sleeps in a call: "SIGINT and SIGTERM kill the host at once,
# also in the middle of a call ... exit 2, one line `interrupted`, nothing left, no fault line"
# (and "A failure that is not the backend's (... an interrupt ...) leaves no faults file").
rm -rf out && mkdir out
$NR run --backend "$P" --model pm --manifest man.jsonl --side candidate --golden out/g.h5 --raw out/r.jsonl \
    --faults out/f.jsonl --warmup 0 --runs 1 --call-timeout 60 --backend-opt mode=sleep --backend-opt call=decode \
    > out.txt 2> err.txt &
pid=$!
sleep 1.5; kill -INT $pid
t0=$(date +%s); wait $pid; rc=$?; t1=$(date +%s)
if [ $rc -ne 2 ]; then notok sigint-mid-call-interrupted "exit $rc, wanted 2"
elif [ $((t1 - t0)) -gt 3 ]; then notok sigint-mid-call-interrupted "took $((t1 - t0)) s to stop"
elif ! grep -q interrupted err.txt; then notok sigint-mid-call-interrupted "$(head -c 200 err.txt)"
elif [ -s out/f.jsonl ] || [ -e out/g.h5 ] || [ -e out/r.jsonl ]; then notok sigint-mid-call-interrupted "left: $(ls out)"
else ok sigint-mid-call-interrupted; fi
# SIGSTOP of the harness from conform's host: the filter kills the host; conform must finish
# (exit 2, could not check) instead of being stopped (the 25 s timeout would say 137).
hostile_conform conform-kill-parent-sigstop crash mode=ppid_stop call=decode at=2
# The fault line of a cleaned message is a valid calculet-fault/v1 line.
hostile_run escape-message-fault-again device_error mode=escmsg call=decode at=2
expect_exit escape-message-fault-schema 0 manifest-verify --schema calculet-fault/v1 out/f.jsonl
# A message with no NUL in msg_len bytes: "the host copies at most msg_len - 1 bytes": exit 2, a
# device_error fault line, and the harness's line stays short (no read past the buffer).
hostile_run unterminated-message device_error mode=nonul call=decode at=1
if [ "$(wc -c < err.txt)" -lt 8192 ]; then ok unterminated-message-bounded; else notok unterminated-message-bounded "$(wc -c < err.txt) bytes of error"; fi
# A plug-in that prints escapes ("a backend never prints") reaches only the backend log, never the
# harness's terminal; the run still passes; --backend-log FILE gets the output (appended).
rm -rf out && mkdir out
expect_exit printing-plugin-runs 0 $TO $NR run --backend "$P" --model pm --manifest man.jsonl --side candidate \
    --golden out/g.h5 --raw out/r.jsonl --warmup 0 --runs 1 --backend-log blog.txt \
    --backend-opt mode=print --backend-opt call=prefill
clean_text printing-plugin-terminal-clean out.txt err.txt
expect_grep printing-plugin-log-kept 'stdout' blog.txt
# A backend name that is a terminal escape: "the harness cleans every backend string (messages,
# names)": a crash's error line and fault line carry no raw escape.
P0=$P; P=$PWD/evilname.so
hostile_run evil-name-crash crash mode=segv call=decode at=1
clean_text evil-name-cleaned out.txt err.txt out/f.jsonl
P=$P0
