#!/bin/sh
# Red team of soak stops (docs/npu-replay.md "soak": Stops, Resumable; "Isolation": SIGINT and
# SIGTERM; docs/exp-gate.md "After the 24 h soak"), written from the docs alone.
#
# Part D (always): what is documented today. A soak is stopped (SIGTERM, SIGINT, two signals in
# quick succession, SIGINT then SIGTERM) before its first clean run, in the clean runs, in the
# --jitter delays, inside a long call (the cpu backend's delay_us=, the v1 test plug-in's
# hostile=slow), while calls fail and are retested, just after a round ends; at concurrency 1,
# 2 and 4, on the cpu backend (ABI v2 with cancel), the v1 test plug-in and the v2 test plug-in
# with cancel. After each: the exit status (2 and one line `interrupted`, nothing written, in the
# clean runs; else 0 or 1 from the counts before the stop), the result (`interrupted: true`, the
# dropped round not counted at all: requests a multiple of the concurrency, every count and hash
# row equal to an uninterrupted `--rounds K` soak of the K rounds the checkpoint says were done),
# no backend host left, and `--resume` ending with an uninterrupted soak's counts and hash rows.
# `--duration` (a round that started finishes), a stop of `npu-replay run`, and an interrupted
# soak fed to `exp-gate decide` in a soak_24h folder.
# The expected counts come from the docs: inject=kv_lane2_zero makes lane 2 mismatch, so at 3
# or more in flight a soak of K rounds has K x N requests and K mismatches; elsewhere the
# reference is an uninterrupted soak of the same options with --rounds K.
#
# Part N (NEW=1): the stop that cancels the call's lanes on an ABI v2 backend with cancel
# (`stop_call` "cancelled" | "killed" | "none", `requests_cancelled`), the v1 plug-in's kill, and
# a --duration end reached mid-round that cuts the round but is a finished soak
# (`interrupted: false`, resume writes the result at once, exp-gate takes it as finished).
. "$GOLDEN_ROOT/tests/e2e/lib.sh"
PY=/usr/bin/python3
command -v $PY > /dev/null 2>&1 || PY=python3
V1="$GOLDEN_BUILD/tests/lib/test-backend.so"
V2="$GOLDEN_BUILD/tests/lib/test-backend-v2-full.so"
NEW=${NEW:-1}
set -f   # --cases globs are npu-replay's

expect_exit "make-model tiny" 0 npu-replay make-model --preset tiny --seed 2 -o m
expect_exit "matrix" 0 npu-replay matrix --model m --backend "$V1" --max-len 16 --random 1 --repeated 0 -o man.jsonl -j1

# next_round of a checkpoint (-1 when there is none yet)
nround() { sed -n 's/.*"next_round": *\([0-9][0-9]*\).*/\1/p' "$1" 2>/dev/null | head -n 1 | grep . || echo -1; }
jget() { $PY -c 'import json,sys
d = json.load(open(sys.argv[1]))
for k in sys.argv[2].split("."): d = d[k]
print(d)' "$1" "$2" 2>/dev/null; }

# stop NAME SIGS HOW CMD...: start the soak CMD with --checkpoint NAME.ck -o NAME.json --faults
# NAME.f, wait as HOW says, send SIGS (comma-separated, 20 ms apart), wait for it; NAME.st its
# exit status, NAME.ms the milliseconds from the first signal to its end, NAME.pids every child
# seen. HOW: t:S (S seconds after the start), r:R (the checkpoint says round >= R), e:R (the
# moment the checkpoint first says round R: just after round R-1 ended), s:S (round >= 1 and
# the checkpoint unchanged for S seconds: inside a long call).
stop() {
    _n=$1; _sigs=$2; _how=$3; shift 3
    rm -f $_n.json $_n.ck $_n.f $_n.pids
    "$@" --checkpoint $_n.ck -o $_n.json --faults $_n.f > $_n.out 2> $_n.err &
    _pid=$!
    _mode=${_how%%:*}; _arg=${_how#*:}
    _t0=$(date +%s%N); _last=-1; _since=$_t0; _landed=0
    while kill -0 $_pid 2>/dev/null; do
        pgrep -P $_pid >> $_n.pids 2>/dev/null
        _now=$(date +%s%N)
        case $_mode in
        t) [ $(( (_now - _t0) / 1000000 )) -ge $(echo "$_arg" | awk '{print int($1 * 1000)}') ] && { _landed=1; break; } ;;
        r) [ "$(nround $_n.ck)" -ge "$_arg" ] && { _landed=1; break; } ;;
        e) _r=$(nround $_n.ck); [ "$_r" -ge "$_arg" ] && { [ "$_r" -eq "$_arg" ] && _landed=1; break; } ;;
        s) _r=$(nround $_n.ck)
           if [ "$_r" != "$_last" ]; then _last=$_r; _since=$_now
           elif [ "$_r" -ge 1 ] && [ $(( (_now - _since) / 1000000 )) -ge $(echo "$_arg" | awk '{print int($1 * 1000)}') ]; then _landed=1; break; fi ;;
        esac
        [ $(( (_now - _t0) / 1000000000 )) -ge 60 ] && break
        sleep 0.01
    done
    _s0=$(date +%s%N)
    # the first signal must find the soak running; a second may find it gone
    _first=1
    for _s in $(echo "$_sigs" | tr , ' '); do
        if ! kill -$_s $_pid 2>/dev/null && [ $_first = 1 ]; then _landed=0; fi
        _first=0; sleep 0.02
    done
    ( sleep 10; kill -KILL $_pid 2>/dev/null ) > /dev/null 2>&1 &
    _kp=$!
    wait $_pid
    echo $? > $_n.st
    _s1=$(date +%s%N)
    kill $_kp 2>/dev/null
    echo $(( (_s1 - _s0) / 1000000 )) > $_n.ms
    [ $_landed -eq 1 ] && ok "$_n: the stop landed ($_how, $_sigs, round $(nround $_n.ck))" \
        || notok "$_n: the stop landed" "$_how: the soak had ended or never got there (round $(nround $_n.ck), exit $(cat $_n.st))"
}

# nohost NAME: no backend host seen as a child of the soak is still there
nohost() {
    _left=""
    for _p in $(sort -u $1.pids 2>/dev/null); do
        if [ -r /proc/$_p/cmdline ] && tr '\0' ' ' < /proc/$_p/cmdline | grep -q __backend-host; then _left="$_left $_p"; fi
    done
    # and no backend host at all working in this folder (one started after the last look)
    for _p in $(pgrep -f __backend-host 2>/dev/null); do
        [ "$(readlink /proc/$_p/cwd 2>/dev/null)" = "$PWD" ] && _left="$_left $_p"
    done
    [ -s $1.pids ] || { notok "$1: a backend host was seen" "no child of the soak seen"; return; }
    [ -z "$_left" ] && ok "$1: no backend host left ($(sort -u $1.pids | wc -l) seen)" \
        || notok "$1: no backend host left" "still there:$_left ($(ps -o pid,ppid,args -p $(echo $_left | tr ' ' ,) | tail -n +2 | head -c 300))"
}

# cmpcounts A B: the counts and hash rows of two soak results (or checkpoints) agree
cat > counts.py <<'PY'
import json, sys
def get(p):
    d = json.load(open(p))
    keys = ("requests", "mismatches", "faults", "retests", "retests_passed", "fault_lines")
    c = {k: d.get(k) for k in keys}
    c["hashes"] = sorted((h["case_id"], h["chip"], h["sha256"]) for h in d.get("hashes", []))
    return c
a, b = get(sys.argv[1]), get(sys.argv[2])
diff = [k for k in a if a[k] != b[k]]
if diff:
    print("; ".join("%s %s vs %s" % (k, a[k] if k != "hashes" else "%d rows" % len(a[k]),
                    b[k] if k != "hashes" else "%d rows" % len(b[k])) for k in diff))
    sys.exit(1)
PY
cmpcounts() { $PY counts.py "$1" "$2" > cmp.txt 2>&1; }

# ref NAME K CMD...: an uninterrupted soak CMD --rounds K (K >= 1) as NAME.K.json
ref() {
    _rn=$1; _rk=$2; shift 2
    [ -s $_rn.$_rk.json ] || "$@" --rounds $_rk -o $_rn.$_rk.json > /dev/null 2>&1
}

# dropped NAME C N LANE2 "CMD" ["REFCMD"]: the checks after a stop in a round of the soak CMD
# --rounds N at concurrency C (LANE2=1: inject=kv_lane2_zero at C >= 3, a mismatch a round;
# REFCMD: the same soak without device delays, default CMD)
dropped() {
    _n=$1; _c=$2; _N=$3; _l2=$4; _cmd=$5; _ref=${6:-$5}
    _st=$(cat $_n.st)
    if [ ! -s $_n.json ]; then notok "$_n: an interrupted result" "exit $_st, no result: $(head -c 300 $_n.err)"; nohost $_n; return; fi
    [ "$(jget $_n.json interrupted)" = True ] && ok "$_n: interrupted true" \
        || notok "$_n: interrupted true" "interrupted is $(jget $_n.json interrupted)"
    expect_exit "$_n: result against its schema" 0 manifest-verify --schema calculet-soak-result/v1 $_n.json
    _k=$(nround $_n.ck); _req=$(jget $_n.json requests); _mis=$(jget $_n.json mismatches); _fa=$(jget $_n.json faults)
    [ "$(jget $_n.ck done)" = False ] && ok "$_n: checkpoint not done" || notok "$_n: checkpoint not done" "done $(jget $_n.ck done)"
    [ "$_req" -eq $((_k * _c)) ] && ok "$_n: requests = $_k rounds x $_c" \
        || notok "$_n: requests = rounds done x concurrency" "$_req requests, checkpoint next_round $_k, concurrency $_c (the dropped round counted partly?)"
    if [ "$_l2" = 1 ]; then
        [ "$_mis" -eq "$_k" ] && ok "$_n: one lane-2 mismatch a round ($_mis)" \
            || notok "$_n: one lane-2 mismatch a round" "$_mis mismatches in $_k rounds"
    fi
    _want=0; [ $((_mis + _fa)) -gt 0 ] && _want=1
    [ "$_st" -eq $_want ] && ok "$_n: exit $_st from the counts before the stop" \
        || notok "$_n: exit from the counts before the stop" "exit $_st, wanted $_want ($_mis mismatches, $_fa faults): $(head -c 200 $_n.err)"
    _ms=$(cat $_n.ms)
    [ "$_ms" -le 3000 ] && ok "$_n: ended ${_ms} ms after the stop" || notok "$_n: ended soon after the stop" "$_ms ms"
    nohost $_n
    _fl=$(jget $_n.json fault_lines); _lines=$(cat $_n.f 2>/dev/null | wc -l)
    [ "$_lines" -eq "$_fl" ] && ok "$_n: faults file holds fault_lines ($_fl)" \
        || notok "$_n: faults file holds fault_lines" "$_lines lines, fault_lines $_fl"
    # an interrupt is no fault: without a planted fault every fault line is a crc_mismatch
    if [ -z "$(echo "$_cmd" | grep -e hostile= -e call-timeout)" ]; then
        if grep -v '"kind":"crc_mismatch"' $_n.f 2>/dev/null | grep -q .; then
            notok "$_n: the stop is no fault" "$(grep -v '"kind":"crc_mismatch"' $_n.f | head -c 300)"
        else ok "$_n: the stop is no fault"; fi
    fi
    if [ "$_k" -ge 1 ]; then
        ref $_n-ref $_k $_ref
        if cmpcounts $_n.json $_n-ref.$_k.json; then ok "$_n: counts and hashes = uninterrupted --rounds $_k"
        else notok "$_n: counts and hashes = uninterrupted --rounds $_k" "$(head -c 300 cmp.txt)"; fi
    fi
    # resume: the same options, the final counts those of an uninterrupted --rounds N soak
    cp $_n.ck $_n.ck0
    $_cmd --checkpoint $_n.ck --resume -o $_n-r.json > $_n-r.out 2> $_n-r.err
    _rst=$?
    ref $_n-ref $_N $_ref
    if [ -s $_n-r.json ] && cmpcounts $_n-r.json $_n-ref.$_N.json; then ok "$_n: resume gives an uninterrupted soak's counts and hashes"
    else notok "$_n: resume gives an uninterrupted soak's counts and hashes" "resume exit $_rst: $(head -c 200 $_n-r.err) $(head -c 300 cmp.txt)"; fi
    _rw=$(jget $_n-ref.$_N.json mismatches); _rf=$(jget $_n-ref.$_N.json faults); _want=0
    [ $((${_rw:-0} + ${_rf:-0})) -gt 0 ] && _want=1
    [ "$_rst" -eq $_want ] && ok "$_n: resume exit $_rst" || notok "$_n: resume exit" "exit $_rst, wanted $_want"
    [ "$(jget $_n-r.json interrupted)" = False ] && ok "$_n: resumed result not interrupted" \
        || notok "$_n: resumed result not interrupted" "$(jget $_n-r.json interrupted)"
    if [ "$NEW" = 1 ]; then
        # the checkpoint the stop wrote: $_n.ck0 ($_n.ck is the resume's by now)
        for _f in $_n.json $_n.ck0; do
            _sc=$(jget $_f stop_call); _rc=$(jget $_f requests_cancelled)
            case "$_sc" in cancelled|killed|none) ok "NEW $_n: $_f stop_call $_sc";;
                *) notok "NEW $_n: $_f stop_call" "'$_sc'";; esac
            case "$_rc" in ''|*[!0-9]*) notok "NEW $_n: $_f requests_cancelled an integer" "'$_rc'";;
                *) [ "$_rc" -le "$_c" ] && ok "NEW $_n: $_f requests_cancelled $_rc" \
                       || notok "NEW $_n: $_f requests_cancelled at most $_c" "$_rc";; esac
        done
        [ "$(jget $_n.json stop_call)" = "$(jget $_n.ck0 stop_call)" ] && [ "$(jget $_n.json requests_cancelled)" = "$(jget $_n.ck0 requests_cancelled)" ] \
            && ok "NEW $_n: result and checkpoint agree on the stop" || notok "NEW $_n: result and checkpoint agree on the stop" \
            "result $(jget $_n.json stop_call)/$(jget $_n.json requests_cancelled), checkpoint $(jget $_n.ck0 stop_call)/$(jget $_n.ck0 requests_cancelled)"
        # a resumed soak that ran to its end was not stopped
        _sc=$(jget $_n-r.json stop_call)
        case "$_sc" in ''|none) ok "NEW $_n: resumed result stop_call '${_sc}'";; *) notok "NEW $_n: resumed result stop_call" "'$_sc' in a soak that was not stopped";; esac
    fi
}

# newcall NAME WANT: (NEW) a stop inside a call: stop_call WANT, requests_cancelled >= 1 for a
# cancel (the call under way had a lane)
newcall() {
    [ "$NEW" = 1 ] || return 0
    _sc=$(jget $1.json stop_call); _rc=$(jget $1.json requests_cancelled)
    [ "$_sc" = "$2" ] && ok "NEW $1: stop_call $2" || notok "NEW $1: stop_call $2" "'$_sc' (requests_cancelled '$_rc')"
    if [ "$2" = cancelled ]; then
        case "$_rc" in ''|*[!0-9]*|0) notok "NEW $1: requests_cancelled >= 1" "'$_rc'";; *) ok "NEW $1: requests_cancelled $_rc";; esac
    fi
}

# clean NAME: the checks after a stop before the rounds: exit 2, one line, nothing written
clean() {
    _st=$(cat $1.st)
    [ "$_st" -eq 2 ] && ok "$1: exit 2" || notok "$1: exit 2" "exit $_st: $(head -c 200 $1.err)"
    [ "$(wc -l < $1.err)" -eq 1 ] && grep -q interrupted $1.err && ok "$1: one line interrupted ($(cat $1.err))" \
        || notok "$1: one line interrupted" "$(head -c 300 $1.err)"
    _w=""; for _f in $1.json $1.ck $1.f; do [ -e $_f ] && _w="$_w $_f"; done
    [ -z "$_w" ] && ok "$1: nothing written" || notok "$1: nothing written" "$_w"
    _ms=$(cat $1.ms)
    [ "$_ms" -le 3000 ] && ok "$1: ended ${_ms} ms after the stop" || notok "$1: ended soon after the stop" "$_ms ms"
    nohost $1
}

CPU="npu-replay soak --model m --manifest man.jsonl --cases random-* -j1 --duration 1h --seed 5 --checkpoint-every 0"

# ============================== D: before the rounds ==============================
# in the v1 plug-in's open (hostile=slow sleeps 1.25 s in it): before the first clean run
stop d-open TERM t:0.4 npu-replay soak --backend "$V1" --backend-opt hostile=slow@open --manifest man.jsonl \
    --cases random-* -j1 --duration 1h --concurrency 2 --rounds 5
clean d-open
# in the clean runs (every call waits up to 0.1 s on the device), SIGINT, concurrency 4
stop d-clean-int INT t:0.6 $CPU --concurrency 4 --rounds 5 --backend-opt delay_us=100000
clean d-clean-int
# the same with SIGINT then SIGTERM
stop d-clean-int-term INT,TERM t:0.6 $CPU --concurrency 4 --rounds 5 --backend-opt delay_us=100000
clean d-clean-int-term

# ============================== D: in the rounds ==============================
# in the --jitter delays (20 ms a call at most), concurrency 4, SIGTERM after 3 rounds
C4="$CPU --concurrency 4 --jitter 20ms --backend-opt inject=kv_lane2_zero --rounds 12"
stop d-jit4 TERM r:3 $C4
dropped d-jit4 4 12 1 "$C4"
# concurrency 1, SIGINT
C1="$CPU --concurrency 1 --jitter 20ms --backend-opt inject=kv_lane2_zero --rounds 12"
stop d-jit1 INT r:4 $C1
dropped d-jit1 1 12 0 "$C1"
# concurrency 2 on the v1 test plug-in with lanes that cross (mismatches at 2 in flight)
X1="npu-replay soak --backend $V1 --backend-opt cross=1 --manifest man.jsonl --cases random-* -j1 --duration 1h --seed 5 --checkpoint-every 0 --concurrency 2 --jitter 20ms --rounds 12"
stop d-cross-v1 TERM r:3 $X1
dropped d-cross-v1 2 12 0 "$X1"
# the same on the v2 test plug-in with cancel
X2="npu-replay soak --backend $V2 --backend-opt cross=1 --manifest man.jsonl --cases random-* -j1 --duration 1h --seed 5 --checkpoint-every 0 --concurrency 2 --jitter 20ms --rounds 12"
stop d-cross-v2 TERM r:3 $X2
dropped d-cross-v2 2 12 0 "$X2"
# resume alone, no stop: a soak of 4 rounds that ended, resumed to 12 (--rounds is no option a
# resume must repeat), against the uninterrupted 12 rounds: the docs say the rounds are run
# "again exactly" and the test of resume compares "every count and hash row"; with cross=1 a
# lane's output depends on what the other lane holds, so the hash rows see the lane state too.
# Fails on main 08e12258 (deterministically: a resume split after round 2 or 3 gives 15
# mismatches instead of 16, after round 4, 5 or 6 the same counts but other lane-1 hash rows of
# the rounds just after the split), as do the resume checks of d-cross-v1 and d-cross-v2
$X1 --rounds 4 --checkpoint x4.ck -o x4.json > /dev/null 2>&1
$X1 --rounds 12 --checkpoint x4.ck --resume -o x12.json > /dev/null 2>&1
ref d-cross-v1-ref 12 $X1
if cmpcounts x12.json d-cross-v1-ref.12.json; then ok "d-cross-resume: a finished 4-round soak resumed to 12 = uninterrupted 12"
else notok "d-cross-resume: a finished 4-round soak resumed to 12 = uninterrupted 12" "$(head -c 300 cmp.txt)"; fi
# no jitter at all: the stop lands between or inside calls, concurrency 2 and 4
C2z="$CPU --concurrency 2 --jitter 0 --backend-opt inject=kv_lane2_zero --rounds 400"
stop d-nojit2 TERM r:40 $C2z  # by round: on a quiet machine 400 rounds end within 1 s
dropped d-nojit2 2 400 0 "$C2z"
C4z="$CPU --concurrency 4 --jitter 0 --backend-opt inject=kv_lane2_zero --rounds 300"
stop d-nojit4 INT r:30 $C4z
dropped d-nojit4 4 300 1 "$C4z"

# inside a long call: every call waits up to 0.4 s on the device (cpu: ABI v2 with cancel),
# no jitter, one case, the stop after the checkpoint has not moved for 0.15 s
L4="npu-replay soak --model m --manifest man.jsonl --cases random-prefill-p16-* -j1 --duration 1h --seed 5 --checkpoint-every 0 --concurrency 4 --jitter 0 --backend-opt inject=kv_lane2_zero --rounds 4"
L4ref="npu-replay soak --model m --manifest man.jsonl --cases random-prefill-p16-* -j1 --duration 1h --seed 5 --checkpoint-every 0 --concurrency 4 --jitter 0 --backend-opt inject=kv_lane2_zero"
stop d-call4 TERM s:0.15 $L4 --backend-opt delay_us=400000
dropped d-call4 4 4 1 "$L4 --backend-opt delay_us=400000" "$L4ref"
newcall d-call4 cancelled
# the same at concurrency 2 with SIGINT
L2="npu-replay soak --model m --manifest man.jsonl --cases random-decode-past0-* -j1 --duration 1h --seed 5 --checkpoint-every 0 --concurrency 2 --jitter 0 --rounds 3"
stop d-call2 INT s:0.15 $L2 --backend-opt delay_us=200000
dropped d-call2 2 3 0 "$L2 --backend-opt delay_us=200000" "$L2"
newcall d-call2 cancelled
# inside a long call of the v1 plug-in (its 120th decode sleeps 1.25 s): the host is killed
S1="npu-replay soak --backend $V1 --backend-opt hostile=slow@decode:120 --manifest man.jsonl --cases random-* -j1 --duration 1h --seed 5 --checkpoint-every 0 --concurrency 2 --jitter 0 --rounds 40"
S1ref="npu-replay soak --backend $V1 --manifest man.jsonl --cases random-* -j1 --duration 1h --seed 5 --checkpoint-every 0 --concurrency 2 --jitter 0"
stop d-call-v1 TERM s:0.4 $S1
dropped d-call-v1 2 40 0 "$S1" "$S1ref"
newcall d-call-v1 killed

# inside a long call of the v2 test plug-in whose cancel is only a reset (its 120th decode
# sleeps 1.25 s and then goes on: the call is not cut short and leaves its position): the docs
# of today drop the round whole all the same. NEW: this was written when the plug-in's cancel
# was a reset; since the soak-cancel work its cancel raises the lane's flag and the lane's next
# call (the harness's length() first) empties it, so the late cancel is honoured: the call
# answers within the 2 s bound and the lane is empty, stop_call cancelled (a cancel that leaves
# positions is cancel_leaks=1, tested in tests/e2e/npu-replay-soak-cancel.sh)
S2="npu-replay soak --backend $V2 --backend-opt hostile=slow@decode:120 --manifest man.jsonl --cases random-* -j1 --duration 1h --seed 5 --checkpoint-every 0 --concurrency 2 --jitter 0 --rounds 40"
S2ref="npu-replay soak --backend $V2 --manifest man.jsonl --cases random-* -j1 --duration 1h --seed 5 --checkpoint-every 0 --concurrency 2 --jitter 0"
stop d-call-v2slow TERM s:0.4 $S2
dropped d-call-v2slow 2 40 0 "$S2" "$S2ref"
newcall d-call-v2slow cancelled

# after calls failed and were retested: the v1 plug-in's host crashes at its 80th decode (every
# fresh host counts again: a fault every few rounds, retested in a fresh host); the stop after
# round 21, so the counts hold faults and passed retests
F1="npu-replay soak --backend $V1 --backend-opt hostile=segv@decode:80 --manifest man.jsonl --cases random-* -j1 --duration 1h --seed 5 --checkpoint-every 0 --concurrency 2 --jitter 2ms --rounds 60"
stop d-retest-v1 TERM r:21 $F1
dropped d-retest-v1 2 60 0 "$F1"
[ "$(jget d-retest-v1.json faults)" -ge 1 ] 2>/dev/null && ok "d-retest-v1: faults before the stop ($(jget d-retest-v1.json faults))" \
    || notok "d-retest-v1: faults before the stop" "$(jget d-retest-v1.json faults)"
# cpu backend, calls that miss a 0.2 s deadline (device delay up to 0.35 s): cancelled at the
# deadline, retested after a reset; the outcome of each call is the clock's, so only the
# invariants are checked (and the resume's round count)
T4="npu-replay soak --model m --manifest man.jsonl --cases random-prefill-p1-* -j1 --duration 1h --seed 5 --checkpoint-every 0 --concurrency 4 --jitter 0 --call-timeout 0.2 --backend-opt delay_us=350000 --backend-opt delay_seed=3 --rounds 6"
stop d-retest-cpu TERM t:2.5 $T4
if [ -s d-retest-cpu.json ]; then
    k=$(nround d-retest-cpu.ck); req=$(jget d-retest-cpu.json requests); fa=$(jget d-retest-cpu.json faults); rt=$(jget d-retest-cpu.json retests)
    [ "$(jget d-retest-cpu.json interrupted)" = True ] && [ "$req" -eq $((k * 4)) ] && [ "$fa" -eq "$rt" ] \
        && ok "d-retest-cpu: interrupted, $req requests in $k rounds, $fa faults = retests" \
        || notok "d-retest-cpu: interrupted, whole rounds, faults = retests" "interrupted $(jget d-retest-cpu.json interrupted), $req requests, next_round $k, $fa faults, $rt retests"
    st=$(cat d-retest-cpu.st); mis=$(jget d-retest-cpu.json mismatches); w=0; [ $((mis + fa)) -gt 0 ] && w=1
    [ "$st" -eq $w ] && ok "d-retest-cpu: exit $st from the counts" || notok "d-retest-cpu: exit from the counts" "exit $st, wanted $w"
    if grep -q '"kind":"signal"' d-retest-cpu.f 2>/dev/null; then notok "d-retest-cpu: the stop is no fault" "$(grep '"kind":"signal"' d-retest-cpu.f | head -c 300)"; else ok "d-retest-cpu: the stop is no fault"; fi
    $T4 --checkpoint d-retest-cpu.ck --resume -o d-retest-cpu-r.json > /dev/null 2>&1
    [ "$(jget d-retest-cpu-r.json requests)" = 24 ] && ok "d-retest-cpu: resume runs the 6 rounds (24 requests)" \
        || notok "d-retest-cpu: resume runs the 6 rounds" "$(jget d-retest-cpu-r.json requests) requests"
else notok "d-retest-cpu: an interrupted result" "exit $(cat d-retest-cpu.st): $(head -c 300 d-retest-cpu.err)"; fi
nohost d-retest-cpu

# just after a round ends (the moment the checkpoint says round 5: round 4 ended), concurrency 4
E4="$CPU --concurrency 4 --jitter 30ms --backend-opt inject=kv_lane2_zero --rounds 12"
stop d-end4 TERM e:5 $E4
dropped d-end4 4 12 1 "$E4"
# two SIGTERMs in quick succession, concurrency 2
stop d-two2 TERM,TERM r:3 $C2z
dropped d-two2 2 400 0 "$C2z"
# SIGINT then SIGTERM, concurrency 4, inside long calls
stop d-intterm4 INT,TERM s:0.15 $L4 --backend-opt delay_us=400000
dropped d-intterm4 4 4 1 "$L4 --backend-opt delay_us=400000" "$L4ref"
newcall d-intterm4 cancelled
# a stop of the resumed part: the second resume still ends with the uninterrupted counts
cp d-jit4.ck0 d-jit4b.ck 2>/dev/null
$C4 --checkpoint d-jit4b.ck --resume -o d-jit4b.json > /dev/null 2> d-jit4b.err &
pid=$!; i=0
while [ $i -lt 500 ] && [ "$(nround d-jit4b.ck)" -lt 7 ]; do sleep 0.01; i=$((i + 1)); done
kill -TERM $pid 2>/dev/null; wait $pid
k=$(nround d-jit4b.ck)
[ "$(jget d-jit4b.json interrupted)" = True ] && [ "$(jget d-jit4b.json requests)" = $((k * 4)) ] \
    && ok "d-jit4b: a stopped resume is interrupted with $k whole rounds" \
    || notok "d-jit4b: a stopped resume is interrupted with whole rounds" "interrupted $(jget d-jit4b.json interrupted), $(jget d-jit4b.json requests) requests, next_round $k"
$C4 --checkpoint d-jit4b.ck --resume -o d-jit4c.json > /dev/null 2>&1
ref d-jit4-ref 12 $C4
if cmpcounts d-jit4c.json d-jit4-ref.12.json; then ok "d-jit4b: second resume = uninterrupted"; else notok "d-jit4b: second resume = uninterrupted" "$(head -c 300 cmp.txt)"; fi

# ============================== D: --duration ==============================
# a round that started finishes: duration reached, not interrupted, whole rounds, the counts of
# an uninterrupted soak of as many rounds; a resume of the finished soak writes it at once
D4="$CPU --concurrency 4 --jitter 2ms --backend-opt inject=kv_lane2_zero"
$D4 --duration 1.0 --checkpoint dd.ck -o dd.json > /dev/null 2> dd.err
st=$?
req=$(jget dd.json requests); k=$((req / 4))
[ "$st" -eq 1 ] && ok "d-duration: exit 1 (lane 2 mismatches)" || notok "d-duration: exit 1" "exit $st: $(head -c 200 dd.err)"
[ "$(jget dd.json interrupted)" = False ] && $PY -c "import sys; sys.exit(0 if $(jget dd.json duration_s) >= 1.0 else 1)" \
    && ok "d-duration: not interrupted, duration_s >= 1.0 ($(jget dd.json duration_s))" \
    || notok "d-duration: not interrupted, duration reached" "interrupted $(jget dd.json interrupted), duration_s $(jget dd.json duration_s)"
[ $((k * 4)) -eq "$req" ] && [ "$(jget dd.json mismatches)" -eq "$k" ] && [ "$(nround dd.ck)" -eq "$k" ] && [ "$(jget dd.ck done)" = True ] \
    && ok "d-duration: $k whole rounds, $k mismatches, checkpoint done at round $k" \
    || notok "d-duration: whole rounds" "$req requests, $(jget dd.json mismatches) mismatches, checkpoint round $(nround dd.ck) done $(jget dd.ck done)"
ref dd-ref $k $D4
if cmpcounts dd.json dd-ref.$k.json; then ok "d-duration: counts = uninterrupted --rounds $k"; else notok "d-duration: counts = uninterrupted --rounds $k" "$(head -c 300 cmp.txt)"; fi
t0=$(date +%s%N)
$D4 --duration 1.0 --checkpoint dd.ck --resume -o dd-r.json > /dev/null 2>&1
t1=$(date +%s%N)
if cmpcounts dd.json dd-r.json && [ $(( (t1 - t0) / 1000000 )) -lt 900 ]; then ok "d-duration: resume of the finished soak at once ($(( (t1 - t0) / 1000000 )) ms)"
else notok "d-duration: resume of the finished soak at once" "$(( (t1 - t0) / 1000000 )) ms: $(head -c 200 cmp.txt)"; fi

# ============================== D: npu-replay run ==============================
# SIGTERM inside a long call of run (cpu, ABI v2 with cancel): exit 2, one line, nothing left
npu-replay run --model m --manifest man.jsonl --side candidate --golden g.h5 --raw raw.jsonl -j1 \
    --backend-opt delay_us=300000 > run.out 2> run.err &
pid=$!; : > run.pids; i=0
while [ $i -lt 100 ]; do pgrep -P $pid >> run.pids 2>/dev/null; sleep 0.01; i=$((i + 1)); done
kill -TERM $pid; t0=$(date +%s%N); wait $pid; st=$?; t1=$(date +%s%N)
[ "$st" -eq 2 ] && [ "$(wc -l < run.err)" -eq 1 ] && grep -q interrupted run.err \
    && ok "d-run: exit 2, one line interrupted ($(( (t1 - t0) / 1000000 )) ms)" \
    || notok "d-run: exit 2, one line interrupted" "exit $st: $(head -c 300 run.err)"
left=$(ls -A | grep -e 'g\.h5' -e 'raw\.jsonl' | tr '\n' ' ')
[ -z "$left" ] && ok "d-run: nothing left" || notok "d-run: nothing left" "$left"
nohost run

# ============================== D: exp-gate decide ==============================
EX="$GOLDEN_ROOT/examples/experiment/OP-MOE-0001"
fresh() {
    rm -rf "$1"; mkdir -p "$1"; cp -r "$EX" "$1/OP-MOE-0001"
    rm -f "$1/OP-MOE-0001/performance/summary.json" "$1/OP-MOE-0001/decision.md" \
          "$1/OP-MOE-0001/decision.json" "$1/OP-MOE-0001/SHA256SUMS"
    $PY - "$1/OP-MOE-0001" <<'PY'
import json, sys, os, hashlib, random
d = sys.argv[1]
raw = os.path.join(d, "performance/raw-requests.jsonl")
rs = [json.loads(l) for l in open(raw) if l.strip()]
for r in rs:
    if r["side"] == "candidate" and not r["warmup"]:
        r["ttft_ms"] = round(r["ttft_ms"] * 0.88, 6)
open(raw, "w").write("".join(json.dumps(r) + "\n" for r in rs))
p = os.path.join(d, "golden/input-manifest.jsonl")
V = json.load(open("m/config.json"))["vocab_size"]
os.makedirs(os.path.join(d, "golden/inputs"), exist_ok=True)
out = []
for l in open(p):
    r = json.loads(l)
    if not r["rejection"]:
        if r["phase"] == "decode":
            if r["past_tokens"] + 2 > 40960:
                r["phase"] = "prefill"
            else:
                r["output_tokens"] = 2
        if r["prompt_tokens"] + r["past_tokens"] == 0:
            r["prompt_tokens"] = 1
        rnd = random.Random(r["seed"])
        ids = [rnd.randrange(V) for _ in range(r["prompt_tokens"] + r["past_tokens"])]
        rel = "inputs/%s.json" % r["case_id"]
        b = json.dumps(ids).encode()
        open(os.path.join(d, "golden", rel), "wb").write(b)
        r["input"] = {"path": rel, "sha256": hashlib.sha256(b).hexdigest()}
    out.append(json.dumps(r))
open(p, "w").write("\n".join(out) + "\n")
PY
    echo "$1/OP-MOE-0001"
}
waiver() { printf 'soak_waiver:\n  duration_h: 0.0002\n  reason: e2e soak of 1 s on the tiny model\n' >> "$1/hypothesis.yaml"; }
decide() { exp-gate decide --force "$@" > out.txt 2> err.txt; echo $?; }
dfield() { $PY -c 'import json,sys; d=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$1" "$2" 2>/dev/null; }
ECASES="--cases prefill-p1-* --cases prefill-p16-*"

g=$(fresh eg)
rc=$(decide "$g")
[ "$rc" = 0 ] && grep -q 'soak_24h (rule graph_gain)' out.txt && ok "e-control: soak_24h without a soak" \
    || notok "e-control: soak_24h without a soak" "exit $rc: $(head -c 300 out.txt err.txt)"
# a soak of the folder stopped (SIGTERM) after 1.2 s: an interrupted result of whole rounds
ES="npu-replay soak --model m -j1 --manifest $g/golden/input-manifest.jsonl --experiment $g $ECASES --duration 1h --concurrency 2 --jitter 5ms --checkpoint-every 0 --rounds 100000"
stop e-int TERM t:1.5 $ES
mkdir -p "$g/stability"; cp e-int.json "$g/stability/soak.json" 2>/dev/null
[ "$(jget e-int.json interrupted)" = True ] && [ "$(cat e-int.st)" = 0 ] && ok "e-int: interrupted soak, exit 0" \
    || notok "e-int: interrupted soak, exit 0" "exit $(cat e-int.st), interrupted $(jget e-int.json interrupted)"
nohost e-int
rc=$(decide "$g")
# docs: duration_s may be below duration_s_requested when interrupted (not malformed); it ran
# ~1 s of the 24 h: no_merge by soak_result, the soak object says interrupted
[ "$rc" = 1 ] && [ "$(dfield "$g/decision.json" 'd["decision"], d["rule"], d["soak"]["interrupted"]')" = "('no_merge', 'soak_result', True)" ] \
    && grep -q 'section 13.2 asks 24 h' "$g/decision.json" \
    && ok "e-int: interrupted soak, no waiver: no_merge (24 h), soak.interrupted true" \
    || notok "e-int: interrupted soak, no waiver: no_merge" "exit $rc: $(dfield "$g/decision.json" 'd["decision"], d["rule"], d.get("soak")') $(head -c 300 err.txt)"
# with the waiver (0.72 s) the numbers pass; docs list no rule on interrupted: merge
waiver "$g"
rc=$(decide "$g")
[ "$rc" = 0 ] && [ "$(dfield "$g/decision.json" 'd["decision"], d["soak"]["passes"], d["soak"]["interrupted"]')" = "('merge', True, True)" ] \
    && ok "e-int: interrupted soak past the waiver: merge, soak.interrupted true" \
    || notok "e-int: interrupted soak past the waiver: merge (docs)" "exit $rc: $(dfield "$g/decision.json" 'd["decision"], d.get("soak")') $(head -c 300 err.txt)"
# the same counts claiming not interrupted: duration_s < duration_s_requested: exit 2
$PY - e-int.json "$g/stability/soak.json" <<'PY'
import json, sys
s = json.load(open(sys.argv[1])); s["interrupted"] = False
json.dump(s, open(sys.argv[2], "w"), indent=2)
PY
rc=$(decide "$g")
[ "$rc" = 2 ] && ok "e-int: not interrupted but short of its --duration: exit 2 ($(head -c 120 err.txt))" \
    || notok "e-int: not interrupted but short of its --duration: exit 2" "exit $rc: $(head -c 300 out.txt err.txt)"
# a soak stopped in its clean runs wrote nothing: decide has no result and stays soak_24h
rm -f "$g/stability/soak.json"
rc=$(decide "$g")
[ "$rc" = 0 ] && grep -q 'soak_24h' out.txt && ok "e-int: no result, soak_24h" || notok "e-int: no result, soak_24h" "exit $rc"

# ============================== N: the new behaviour ==============================
if [ "$NEW" = 1 ]; then
    # a --duration end mid-round: rounds alternate a short case (p1: 4 calls) and a long one
    # (decode past0 o8: 8 calls a request, 32 a round, ~8 s at up to 0.5 s a call); --duration 2
    # ends inside the long round 1: cut, round 0's counts, not interrupted, ended soon
    NC="npu-replay soak --model m --manifest man.jsonl --cases random-prefill-p1-* --cases random-decode-past0-* -j1 --seed 5 --checkpoint-every 0 --concurrency 4 --jitter 0 --backend-opt inject=kv_lane2_zero"
    t0=$(date +%s%N)
    $NC --backend-opt delay_us=500000 --duration 2 --checkpoint n-cut.ck --faults n-cut.f -o n-cut.json > n-cut.out 2> n-cut.err &
    pid=$!; : > n-cut.pids
    while kill -0 $pid 2>/dev/null; do pgrep -P $pid >> n-cut.pids 2>/dev/null; sleep 0.05; done
    wait $pid; st=$?; t1=$(date +%s%N); wall=$(( (t1 - t0) / 1000000 ))
    [ "$st" -eq 1 ] && ok "NEW n-cut: exit 1 (round 0's lane-2 mismatch)" || notok "NEW n-cut: exit 1" "exit $st: $(head -c 200 n-cut.err)"
    [ "$(jget n-cut.json interrupted)" = False ] && ok "NEW n-cut: not interrupted" || notok "NEW n-cut: not interrupted" "$(jget n-cut.json interrupted)"
    [ "$(jget n-cut.json requests)" = 4 ] && [ "$(jget n-cut.json mismatches)" = 1 ] && [ "$(jget n-cut.json fault_lines)" = 1 ] \
        && ok "NEW n-cut: the cut round dropped whole (4 requests, 1 mismatch)" \
        || notok "NEW n-cut: the cut round dropped whole" "$(jget n-cut.json requests) requests, $(jget n-cut.json mismatches) mismatches, $(jget n-cut.json fault_lines) fault lines"
    $PY -c "import sys; sys.exit(0 if $(jget n-cut.json duration_s) >= 2.0 else 1)" 2>/dev/null \
        && ok "NEW n-cut: duration_s >= duration_s_requested ($(jget n-cut.json duration_s))" \
        || notok "NEW n-cut: duration_s >= duration_s_requested" "$(jget n-cut.json duration_s) of 2.0 (exp-gate refuses a finished soak short of its --duration)"
    [ "$wall" -lt 8500 ] && ok "NEW n-cut: ended $wall ms after the start (the long round cut)" \
        || notok "NEW n-cut: the long round cut" "$wall ms (the round ran to its end?)"
    [ "$(jget n-cut.ck done)" = True ] && [ "$(nround n-cut.ck)" = 1 ] && ok "NEW n-cut: checkpoint done, next round 1" \
        || notok "NEW n-cut: checkpoint done, next round 1" "done $(jget n-cut.ck done), next_round $(nround n-cut.ck)"
    nohost n-cut
    ref n-cut-ref 1 $NC --duration 1h
    if cmpcounts n-cut.json n-cut-ref.1.json; then ok "NEW n-cut: counts = uninterrupted --rounds 1"; else notok "NEW n-cut: counts = uninterrupted --rounds 1" "$(head -c 300 cmp.txt)"; fi
    t0=$(date +%s%N)
    $NC --backend-opt delay_us=500000 --duration 2 --checkpoint n-cut.ck --resume -o n-cut-r.json > /dev/null 2> n-cut-r.err
    st=$?; t1=$(date +%s%N)
    if [ "$st" -eq 1 ] && cmpcounts n-cut.json n-cut-r.json && [ $(( (t1 - t0) / 1000000 )) -lt 1500 ]; then ok "NEW n-cut: resume writes the result at once"
    else notok "NEW n-cut: resume writes the result at once" "exit $st, $(( (t1 - t0) / 1000000 )) ms: $(head -c 200 cmp.txt) $(head -c 200 n-cut-r.err)"; fi
    [ "$(jget n-cut-r.json interrupted)" = False ] && ok "NEW n-cut: resumed result not interrupted" || notok "NEW n-cut: resumed result not interrupted" "$(jget n-cut-r.json interrupted)"
    for f in n-cut.json n-cut.ck; do
        sc=$(jget $f stop_call)
        case "$sc" in cancelled|none) ok "NEW n-cut: $f stop_call $sc";; *) notok "NEW n-cut: $f stop_call cancelled or none" "'$sc'";; esac
    done
    expect_exit "NEW n-cut: result against its schema" 0 manifest-verify --schema calculet-soak-result/v1 n-cut.json

    # the cut soak of a soak_24h folder: a finished soak; with the waiver: merge
    h=$(fresh ncut); waiver "$h"; mkdir -p "$h/stability"
    npu-replay soak --model m -j1 --manifest $h/golden/input-manifest.jsonl --experiment $h --cases prefill-p1-* \
        --concurrency 2 --jitter 0 --backend-opt delay_us=200000 --duration 1.5 -o $h/stability/soak.json > n-eg.out 2> n-eg.err
    st=$?
    [ "$st" -eq 0 ] && [ "$(jget $h/stability/soak.json interrupted)" = False ] && ok "NEW n-eg: cut soak of the folder, exit 0, not interrupted" \
        || notok "NEW n-eg: cut soak of the folder, exit 0, not interrupted" "exit $st, interrupted $(jget $h/stability/soak.json interrupted): $(head -c 200 n-eg.err)"
    rc=$(decide "$h")
    [ "$rc" = 0 ] && [ "$(dfield "$h/decision.json" 'd["decision"], d["soak"]["interrupted"]')" = "('merge', False)" ] \
        && ok "NEW n-eg: decide takes the cut soak as finished: merge" \
        || notok "NEW n-eg: decide takes the cut soak as finished: merge" "exit $rc: $(dfield "$h/decision.json" 'd.get("decision"), d.get("soak")') $(head -c 300 err.txt)"

    # v1 plug-ins keep the kill even without a call under way is "none" or "killed", never cancelled
    for n in d-cross-v1 d-retest-v1; do
        sc=$(jget $n.json stop_call)
        case "$sc" in killed|none) ok "NEW $n: v1 plug-in stop_call $sc";; *) notok "NEW $n: v1 plug-in stop_call killed or none" "'$sc'";; esac
    done
fi
