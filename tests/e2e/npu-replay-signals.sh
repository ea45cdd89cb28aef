#!/bin/sh
# A plug-in that signals the harness never makes a pass: the test plug-in's hostile=WHAT@CALL
# with termparent (kill(getppid(), SIGTERM)), intgroup (kill(0, SIGINT)), killparent (SIGKILL
# to the parent), stopparent (SIGSTOP to the parent) and sigioparent (F_SETOWN of its socket to
# the parent, O_ASYNC), through run, conform and matrix.
# - Under the host's system-call filter (the default) each signal to another process kills the
#   host with SIGSYS before it is sent: a crash fault, exit 2, nothing but the faults file. A
#   kill(0, ...) reaches only the host's own process group (it leads its own session): the host
#   dies of SIGINT, the harness never sees it.
# - With the filter off (GOLDEN_BACKEND_FILTER=off), a SIGTERM whose sender is the host is a
#   fault of kind signal (not the user's interrupt), exit 2, nothing partial; a SIGKILL of the
#   harness cannot be caught: exit 137, never 0.
. "$GOLDEN_ROOT/tests/e2e/lib.sh"
PLUGIN="$GOLDEN_BUILD/tests/lib/test-backend.so"
mkdir tmp
TMPDIR=$PWD/tmp
export TMPDIR

expect_exit "make-model tiny" 0 npu-replay make-model --preset tiny --seed 1 -o m
expect_exit "matrix" 0 npu-replay matrix --model m --backend "$PLUGIN" --max-len 16 --random 1 --repeated 0 -o man.jsonl -j1
C=random-decode-past1-o8-00
R="npu-replay run --backend $PLUGIN --manifest man.jsonl --cases $C --warmup 0 --runs 1 --side candidate --call-timeout 20"

only_faults() {
    _left=$(ls -A "$2" | grep -v '^faults.jsonl$' | tr '\n' ' ')
    if [ -z "$_left" ]; then ok "$1"; else notok "$1" "left behind: $_left"; fi
}

# signalled NAME WHAT@CALL KIND MESSAGE-REGEX [ENV...]: run exits 2 (under `timeout`: a stopped
# harness would be 124), one fault line of KIND, nothing else left
signalled() {
    sg_n=$1 sg_h=$2 sg_k=$3 sg_m=$4
    shift 4
    mkdir "o-$sg_n"
    expect_exit "run $sg_n: exit 2" 2 env "$@" timeout 120 $R --golden "o-$sg_n/g.h5" --raw "o-$sg_n/r.jsonl" --faults "o-$sg_n/faults.jsonl" --backend-opt "hostile=$sg_h"
    cp err.txt "$sg_n.err"
    expect_lines "run $sg_n: nothing on stdout (no summary that reads as done)" 0 out.txt
    expect_lines "run $sg_n: one error line" 1 "$sg_n.err"
    only_faults "run $sg_n: no golden, raw or temporary file left" "o-$sg_n"
    expect_lines "run $sg_n: one fault line" 1 "o-$sg_n/faults.jsonl"
    expect_grep "run $sg_n: kind $sg_k, the message says what happened" "\"kind\":\"$sg_k\",\"severity\":\"(error|fatal)\",\"message\":\"test-counting: $sg_m" "o-$sg_n/faults.jsonl"
    expect_exit "run $sg_n: the line is calculet-fault/v1" 0 manifest-verify --schema calculet-fault/v1 "o-$sg_n/faults.jsonl"
}
SYS='backend host crashed in decode: signal 31 \(Bad system call\): it made a system call its filter forbids'
signalled term termparent@decode crash "$SYS"
signalled kill killparent@decode crash "$SYS"
signalled stop stopparent@decode crash "$SYS"
signalled sigio sigioparent@decode crash "$SYS"
signalled term-prefill termparent@prefill crash 'backend host crashed in prefill: signal 31 '
signalled group intgroup@decode crash 'backend host crashed in decode: signal 2 \(Interrupt\)'
# the harness's own check: a SIGTERM from the host is the backend's fault, not an interrupt
signalled term-nofilter termparent@decode signal 'backend host signalled the harness in decode: SIGINT or SIGTERM from pid [0-9]+ \(the host or its session\); killed' GOLDEN_BACKEND_FILTER=off
signalled group-nofilter intgroup@decode crash 'backend host crashed in decode: signal 2 ' GOLDEN_BACKEND_FILTER=off
expect_grep "the filter's crash names the call and the retest" "^npu-replay: $C: request candidate/$C/0: test-counting: $SYS .*\\(the retest after reset failed\\)$" term.err
if grep -q "interrupted" term-nofilter.err; then notok "a SIGTERM from the host is not reported as an interrupt"; else ok "a SIGTERM from the host is not reported as an interrupt"; fi

# without the filter a SIGKILL of the harness cannot be caught: 137, never 0
mkdir o-kill9
env GOLDEN_BACKEND_FILTER=off $R --golden o-kill9/g.h5 --raw o-kill9/r.jsonl --backend-opt hostile=killparent@decode > k9.out 2> k9.err
rc=$?
if [ "$rc" -eq 137 ]; then ok "no filter, SIGKILL of the harness: exit 137"; else notok "no filter, SIGKILL of the harness: exit 137" "exit $rc"; fi
expect_absent "... no golden" o-kill9/g.h5
expect_absent "... no raw file" o-kill9/r.jsonl
sleep 1
n=$(ps -eo args | grep -F "__backend-host" | grep -cF "hostile=killparent")
if [ "$n" -eq 0 ]; then ok "... its host does not outlive it (PDEATHSIG)"; else notok "... its host does not outlive it (PDEATHSIG)" "$n left"; fi

# a clean plug-in still passes under the filter (abort, raise and threads of its own are allowed)
mkdir o-clean
expect_exit "run, clean plug-in under the filter: exit 0" 0 $R --golden o-clean/g.h5 --raw o-clean/r.jsonl --faults o-clean/faults.jsonl
expect_lines "... no fault line" 0 o-clean/faults.jsonl
expect_exit "the cpu backend under the filter (threads): conform kv-lanes exit 0" 0 npu-replay conform --model m --checks kv-lanes,kv-positions -j2
if grep -qs "refused the system-call filter" tmp/*; then notok "the kernel took the filter"; else ok "the kernel took the filter"; fi

# conform: an ERROR check with its fault line; never PASS, never FAIL
CF="npu-replay conform --model m --backend $PLUGIN --call-timeout 20 -j1 --checks kv-positions"
for v in termparent@prefill:crash:'backend host crashed in prefill: signal 31 ' \
         intgroup@decode:crash:'backend host crashed in decode: signal 2 ' \
         nofilter-termparent@prefill:signal:'backend host signalled the harness in prefill: '; do
    h=${v%%:*}; rest=${v#*:}; kind=${rest%%:*}; msg=${rest#*:}
    envs=
    case $h in nofilter-*) h=${h#nofilter-}; envs=GOLDEN_BACKEND_FILTER=off ;; esac
    expect_exit "conform $envs $h: exit 2" 2 env $envs timeout 120 $CF --backend-opt "hostile=$h" --faults "c-$h$envs.jsonl" --json "c-$h$envs.json"
    expect_grep "conform $envs $h: kind $kind" "\"case_id\":\"kv-positions\",\"kind\":\"$kind\",.*\"message\":\"conform kv-positions: test-counting: $msg" "c-$h$envs.jsonl"
    expect_exit "conform $envs $h: calculet-fault/v1" 0 manifest-verify --schema calculet-fault/v1 "c-$h$envs.jsonl"
    expect_grep "conform $envs $h: the report says could not check" '"verdict": "could not check"' "c-$h$envs.json"
    if grep -q '"status": "pass"' out.txt; then notok "conform $envs $h: the check is no pass"; else ok "conform $envs $h: the check is no pass"; fi
done

# matrix: the near-tie search through a plug-in that signals the harness: exit 2, no manifest
for h in termparent@prefill stopparent@prefill; do
    mkdir "mx-$h"
    expect_exit "matrix, $h: exit 2" 2 timeout 120 npu-replay matrix --model m --backend "$PLUGIN" --backend-opt "hostile=$h" --max-len 16 --random 1 --repeated 0 --near-ties 2 -o "mx-$h/mx.jsonl" -j1
    expect_grep "... names the filter's crash" 'backend host crashed in prefill: signal 31 ' err.txt
    expect_absent "... no manifest" "mx-$h/mx.jsonl"
    expect_absent "... no token file" "mx-$h/inputs"
done
# matrix has no stop handler: without the filter the host's SIGTERM ends it as SIGTERM does (143)
mkdir mx-nofilter
expect_exit "matrix, no filter, termparent: killed by the signal (143), never 0" 143 env GOLDEN_BACKEND_FILTER=off timeout 120 npu-replay matrix --model m --backend "$PLUGIN" --backend-opt hostile=termparent@prefill --max-len 16 --random 1 --repeated 0 --near-ties 2 -o mx-nofilter/mx.jsonl -j1
expect_absent "... no manifest" mx-nofilter/mx.jsonl

# the user's own SIGTERM is still an interrupt (its sender is not the host)
mkdir o-user
$R --model "$PWD/m" --call-timeout 300 --golden o-user/g.h5 --raw o-user/r.jsonl --backend-opt hostile=hang@decode > u.out 2> u.err &
pid=$!
sleep 2
kill -TERM $pid
wait $pid
rc=$?
if [ "$rc" -eq 2 ]; then ok "the user's SIGTERM: exit 2"; else notok "the user's SIGTERM: exit 2" "exit $rc: $(cat u.err)"; fi
expect_grep "... reported as an interrupt" 'interrupted' u.err
only_faults "... nothing left" o-user
