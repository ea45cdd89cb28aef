#!/bin/sh
# A stop (SIGTERM, SIGINT) or the --duration end that lands inside a call of a soak (issue 33,
# docs/npu-replay.md "Stops"): on a version 2 backend with cancel the call's lanes are cancelled
# and the backend host closed the normal way (stop_call "cancelled"); with a cancel that leaves
# a lane holding positions (the test plug-in's cancel_leaks=1), with a cancel answered after the
# 2 s grace (cancel_late=1: both a fault, named in stop_violation) and with a version 1 plug-in (no
# cancel) the host is killed ("killed"). Either way the round under way is dropped whole: the
# counts are an uninterrupted soak's of the rounds before it (requests = N a round, and with
# the cpu backend's inject=kv_lane2_zero one mismatch a round: worked out from the round count,
# and compared with a --rounds R soak), and the resume ends with an uninterrupted soak's counts.
# A --duration end is a finished soak (interrupted false), its resume writes the result at once.
# The calls are made long with --backend-opt delay_us= so that the stop lands inside one; the
# test plug-in writes "test-backend: closed" to its log when it is closed (not killed).
. "$GOLDEN_ROOT/tests/e2e/lib.sh"
V1="$GOLDEN_BUILD/tests/lib/test-backend.so"
V2="$GOLDEN_BUILD/tests/lib/test-backend-v2-full.so"

expect_exit "make-model tiny" 0 npu-replay make-model --preset tiny --seed 2 -o m
expect_exit "matrix (cpu)" 0 npu-replay matrix --model m --max-len 16 --random 1 --repeated 0 -o man.jsonl -j1
mkdir -p p
( cd p && npu-replay matrix --model ../m --backend "$V1" --max-len 16 --random 1 --repeated 0 -o man.jsonl -j1 ) \
    > /dev/null 2>&1 && ok "matrix (plug-in)" || notok "matrix (plug-in)"

# jf FILE EXPR: EXPR of the JSON document d in FILE ("-" when unreadable)
jf() { python3 -c 'import json,sys
try: d = json.load(open(sys.argv[1]))
except Exception: print("-"); sys.exit(0)
print(eval(sys.argv[2]))' "$1" "$2"; }
# counts FILE: the counts and hash rows a resumed soak must share with an uninterrupted one
counts() { python3 -c 'import json,sys
d = json.load(open(sys.argv[1]))
keys = ("cases", "requests", "mismatches", "faults", "retests", "retests_passed", "fault_lines")
print(" ".join("%s=%s" % (k, d[k]) for k in keys), sorted((h["case_id"], h["chip"], h["sha256"]) for h in d["hashes"]))' "$1" 2>/dev/null; }
# waitround CK K PID: wait (at most 60 s, while PID runs) until the checkpoint's next round is K
# or more
waitround() {
    _i=0
    while [ $_i -lt 600 ] && kill -0 $3 2>/dev/null; do
        [ "$(jf "$1" 'd["next_round"] >= '"$2")" = True ] && return 0
        sleep 0.1; _i=$((_i + 1))
    done
    return 1
}
now_ms() { echo $(( $(date +%s%N) / 1000000 )); }

CPU="npu-replay soak --model m --manifest man.jsonl --cases random-prefill-* -j1 --duration 1h --concurrency 3 --seed 5 --jitter 0 --backend-opt inject=kv_lane2_zero"
# stopsoak NAME SIG CMD...: start the soak CMD (its checkpoint NAME.ck, result NAME.json), send
# SIG 0.2 s after its checkpoint says it is past round 2, and record its exit status and how
# long it took. The checkpoint is written (and synced) between rounds, where no call is under way
# (a stop there is stop_call none, rightly); at the default --checkpoint-every 1 the next write
# is a second away, and rounds end every few tenths of a second in a few microseconds.
stopsoak() {
    _n=$1; _sig=$2; shift 2
    rm -f $_n.ck $_n.json $_n.log
    "$@" --checkpoint $_n.ck -o $_n.json > $_n.out 2> $_n.err &
    _pid=$!
    if waitround $_n.ck 2 $_pid; then ok "$_n: past round 2"; else notok "$_n: past round 2" "$(head -c 200 $_n.err)"; fi
    sleep 0.2; kill -$_sig $_pid 2>/dev/null
    _t0=$(now_ms)
    ( sleep 20; kill -KILL $_pid 2>/dev/null ) & _kp=$!
    wait $_pid; st=$?
    took=$(( $(now_ms) - _t0 ))
    kill $_kp 2>/dev/null
    R=$(jf $_n.ck 'd["next_round"]')
}
# the dropped round: the counts are those of the R rounds before it, worked out from R
expect_rounds() { # NAME FILE R PER_ROUND MISMATCH_PER_ROUND
    _w="requests=$(($3 * $4)) mismatches=$(($3 * $5)) faults=0"
    _g=$(jf $2 '"requests=%d mismatches=%d faults=%d" % (d["requests"], d["mismatches"], d["faults"])')
    [ "$_g" = "$_w" ] && ok "$1: counts of the $3 rounds before the stop" || notok "$1: counts of the $3 rounds before the stop" "$_g, wanted $_w"
}

# ---- the cpu backend (version 2, cancel), SIGTERM inside a call ----
stopsoak cpu-term TERM $CPU --rounds 8 --backend-opt delay_us=200000
[ "$st" = 1 ] && ok "cpu SIGTERM: exit 1 (lane 2's mismatches before the stop)" || notok "cpu SIGTERM: exit 1" "exit $st: $(head -c 300 cpu-term.err)"
[ "$took" -lt 2500 ] && ok "cpu SIGTERM: ended within the 2 s bound ($took ms)" || notok "cpu SIGTERM: ended within the 2 s bound" "$took ms"
[ "$(jf cpu-term.json '(d["interrupted"], d.get("stop_call"), d.get("requests_cancelled"))')" = "(True, 'cancelled', 1)" ] \
    && ok "cpu SIGTERM: interrupted, stop_call cancelled, 1 request cancelled" \
    || notok "cpu SIGTERM: interrupted, stop_call cancelled, 1 request cancelled" "$(jf cpu-term.json '(d["interrupted"], d.get("stop_call"), d.get("requests_cancelled"))')"
[ "$(jf cpu-term.ck '(d["done"], d.get("stop_call"), d.get("requests_cancelled"))')" = "(False, 'cancelled', 1)" ] \
    && ok "cpu SIGTERM: the checkpoint says so, not done" || notok "cpu SIGTERM: the checkpoint" "$(jf cpu-term.ck '(d["done"], d.get("stop_call"))')"
if grep -Eqi 'fault|reset|killed' cpu-term.err; then notok "cpu SIGTERM: not a fault" "$(head -c 200 cpu-term.err)"; else ok "cpu SIGTERM: not a fault"; fi
expect_rounds "cpu SIGTERM" cpu-term.json "$R" 3 1
expect_exit "cpu: the uninterrupted soak of the $R rounds before the stop" 1 $CPU --rounds "$R" -o r$R.json
[ -s r$R.json ] && [ "$(counts r$R.json)" = "$(counts cpu-term.json)" ] && ok "cpu SIGTERM: counts and hash rows = a --rounds $R soak" \
    || notok "cpu SIGTERM: counts and hash rows = a --rounds $R soak" "$(counts cpu-term.json | head -c 100) vs $(counts r$R.json | head -c 100)"
expect_exit "cpu SIGTERM: manifest-verify the result" 0 manifest-verify --schema calculet-soak-result/v1 cpu-term.json
expect_exit "cpu: the uninterrupted soak of 8 rounds" 1 $CPU --rounds 8 -o r8.json
expect_exit "cpu SIGTERM: resume" 1 $CPU --rounds 8 --backend-opt delay_us=200000 --checkpoint cpu-term.ck --resume -o cpu-term.json --force
[ -s r8.json ] && [ "$(counts r8.json)" = "$(counts cpu-term.json)" ] && ok "cpu SIGTERM: resumed counts = the uninterrupted soak's" \
    || notok "cpu SIGTERM: resumed counts = the uninterrupted soak's" "$(counts cpu-term.json | head -c 100) vs $(counts r8.json | head -c 100)"
expect_rounds "cpu SIGTERM resumed" cpu-term.json 8 3 1
[ "$(jf cpu-term.json '(d["interrupted"], d.get("stop_call"), d.get("requests_cancelled"))')" = "(False, 'none', 0)" ] \
    && ok "cpu SIGTERM resumed: not interrupted, stop_call none" || notok "cpu SIGTERM resumed: not interrupted, stop_call none" "$(jf cpu-term.json '(d["interrupted"], d.get("stop_call"))')"

# ---- the cpu backend, SIGINT inside a call ----
stopsoak cpu-int INT $CPU --rounds 8 --backend-opt delay_us=200000
[ "$st" = 1 ] && ok "cpu SIGINT: exit 1" || notok "cpu SIGINT: exit 1" "exit $st: $(head -c 300 cpu-int.err)"
[ "$(jf cpu-int.json '(d["interrupted"], d.get("stop_call"), d.get("requests_cancelled"))')" = "(True, 'cancelled', 1)" ] \
    && ok "cpu SIGINT: interrupted, stop_call cancelled" || notok "cpu SIGINT: interrupted, stop_call cancelled" "$(jf cpu-int.json '(d["interrupted"], d.get("stop_call"))')"
expect_rounds "cpu SIGINT" cpu-int.json "$R" 3 1

# ---- the version 2 test plug-in: a cancel that empties the lane, and one that leaks ----
PL="npu-replay soak --model m --manifest man.jsonl --cases random-prefill-* -j1 --duration 1h --concurrency 2 --seed 5 --jitter 0 --rounds 8"
cd p
stopsoak v2 TERM $PL --backend "$V2" --backend-opt delay_us=400000 --backend-log v2.log
[ "$st" = 0 ] && ok "v2 plug-in SIGTERM: exit 0" || notok "v2 plug-in SIGTERM: exit 0" "exit $st: $(head -c 300 v2.err)"
[ "$(jf v2.json '(d["interrupted"], d.get("stop_call"), d.get("requests_cancelled"))')" = "(True, 'cancelled', 1)" ] \
    && ok "v2 plug-in SIGTERM: stop_call cancelled" || notok "v2 plug-in SIGTERM: stop_call cancelled" "$(jf v2.json '(d["interrupted"], d.get("stop_call"))')"
expect_grep "v2 plug-in SIGTERM: the host was closed, not killed" '^test-backend: closed$' v2.log
expect_rounds "v2 plug-in SIGTERM" v2.json "$R" 2 0
RV2=$R
stopsoak leak TERM $PL --backend "$V2" --backend-opt delay_us=400000 --backend-opt cancel_leaks=1 --backend-log leak.log
[ "$st" = 1 ] && ok "leaking cancel SIGTERM: exit 1 (the broken cancel is a fault)" || notok "leaking cancel SIGTERM: exit 1" "exit $st: $(head -c 300 leak.err)"
[ "$(jf leak.json '(d["interrupted"], d.get("stop_call"), d.get("requests_cancelled"))')" = "(True, 'killed', 0)" ] \
    && ok "leaking cancel SIGTERM: stop_call killed (a lane not empty)" || notok "leaking cancel SIGTERM: stop_call killed" "$(jf leak.json '(d["interrupted"], d.get("stop_call"))')"
# the rule the cancel broke is in the result (JSON and text), the test plug-in leaves lane positions
jf leak.json 'd.get("stop_violation", "")' | grep -Eq 'cancelled at a stop; the backend answered the cancel but lane [0-9]+ still holds [1-9][0-9]* positions \(a cancelled lane must be empty\): protocol violation' \
    && ok "leaking cancel: stop_violation names the rule (a cancelled lane must be empty)" || notok "leaking cancel: stop_violation names the rule" "$(jf leak.json 'd.get("stop_violation")')"
expect_grep "leaking cancel: the text says the violation" '^stop_violation: .*a cancelled lane must be empty' leak.out
if grep -q closed leak.log 2>/dev/null; then notok "leaking cancel: the host was killed" "$(head -c 200 leak.log)"; else ok "leaking cancel: the host was killed (no close)"; fi
_g=$(jf leak.json '"requests=%d mismatches=%d faults=%d" % (d["requests"], d["mismatches"], d["faults"])')
[ "$_g" = "requests=$((R * 2)) mismatches=0 faults=1" ] && ok "leaking cancel: the $R rounds before the stop and one fault (the violation)" || notok "leaking cancel: counts" "$_g"
# every fault has its line: the violation's is the cut call's (request id .../stop), kind and rule
[ "$(jf leak.json 'd["fault_lines"]')" = 1 ] && ok "leaking cancel: one fault line for the one fault" || notok "leaking cancel: one fault line" "$(jf leak.json 'd["fault_lines"]')"
expect_exit "leaking cancel: manifest-verify the result" 0 manifest-verify --schema calculet-soak-result/v1 leak.json
RLEAK=$R

# ---- a cancel answered too late (the test plug-in's cancel_late=1: the call ends 5 s after the
# cancel, the harness waits 2 s): the host is killed within the bound, the rule is named ----
stopsoak late TERM $PL --backend "$V2" --backend-opt delay_us=400000 --backend-opt cancel_late=1 --backend-log late.log
[ "$st" = 1 ] && ok "late cancel SIGTERM: exit 1 (the unanswered cancel is a fault)" || notok "late cancel SIGTERM: exit 1" "exit $st: $(head -c 300 late.err)"
[ "$took" -lt 4500 ] && ok "late cancel SIGTERM: ended within the 2 s grace, not the plug-in's 5 s ($took ms)" || notok "late cancel SIGTERM: ended within the grace" "$took ms"
[ "$(jf late.json '(d["interrupted"], d.get("stop_call"), d.get("requests_cancelled"))')" = "(True, 'killed', 0)" ] \
    && ok "late cancel SIGTERM: stop_call killed" || notok "late cancel SIGTERM: stop_call killed" "$(jf late.json '(d["interrupted"], d.get("stop_call"))')"
jf late.json 'd.get("stop_violation", "")' | grep -Eq 'not answered' \
    && ok "late cancel: stop_violation says the cancel was not answered" || notok "late cancel: stop_violation says not answered" "$(jf late.json 'd.get("stop_violation")')"
expect_grep "late cancel: the text says the violation" '^stop_violation: .*not answered' late.out
if grep -q closed late.log 2>/dev/null; then notok "late cancel: the host was killed" "$(head -c 200 late.log)"; else ok "late cancel: the host was killed (no close)"; fi
_g=$(jf late.json '"requests=%d mismatches=%d faults=%d fault_lines=%d" % (d["requests"], d["mismatches"], d["faults"], d["fault_lines"])')
[ "$_g" = "requests=$((R * 2)) mismatches=0 faults=1 fault_lines=1" ] && ok "late cancel: the $R rounds before the stop and one fault with its line" || notok "late cancel: counts" "$_g"
expect_exit "late cancel: manifest-verify the result" 0 manifest-verify --schema calculet-soak-result/v1 late.json
expect_exit "leaking cancel: resume (a fresh host; the violation stays counted)" 1 $PL --backend "$V2" --backend-opt delay_us=400000 --backend-opt cancel_leaks=1 --checkpoint leak.ck --resume -o leak.json --force
_g=$(jf leak.json '"requests=%d mismatches=%d faults=%d" % (d["requests"], d["mismatches"], d["faults"])')
[ "$_g" = "requests=16 mismatches=0 faults=1" ] && ok "leaking cancel resumed: 8 rounds and the one fault" || notok "leaking cancel resumed: counts" "$_g"

# ---- a version 1 plug-in (no cancel): killed, as before ----
stopsoak v1 INT $PL --backend "$V1" --backend-opt delay_us=400000 --backend-log v1.log
[ "$st" = 0 ] && ok "v1 plug-in SIGINT: exit 0" || notok "v1 plug-in SIGINT: exit 0" "exit $st: $(head -c 300 v1.err)"
[ "$(jf v1.json '(d["interrupted"], d.get("stop_call"), d.get("requests_cancelled"))')" = "(True, 'killed', 0)" ] \
    && ok "v1 plug-in SIGINT: stop_call killed" || notok "v1 plug-in SIGINT: stop_call killed" "$(jf v1.json '(d["interrupted"], d.get("stop_call"))')"
if grep -q closed v1.log 2>/dev/null; then notok "v1 plug-in: the host was killed" "$(head -c 200 v1.log)"; else ok "v1 plug-in: the host was killed (no close)"; fi
expect_rounds "v1 plug-in SIGINT" v1.json "$R" 2 0

# ---- npu-replay run: the same cancel at a stop (exit 2 interrupted, nothing left) ----
for v in "v2:$V2:" "leak:$V2:--backend-opt cancel_leaks=1" "v1:$V1:"; do
    n=${v%%:*}; rest=${v#*:}; be=${rest%%:*}; extra=${rest#*:}
    rm -f run-$n.*
    npu-replay run --model m --manifest man.jsonl --side baseline --golden run-$n.h5 --raw run-$n.jsonl \
        --warmup 0 --runs 40 --cases random-prefill-p1-o1-00 --taps none --backend "$be" \
        --backend-opt delay_us=400000 $extra --backend-log run-$n.log > run-$n.out 2> run-$n.err &
    pid=$!
    sleep 1.2; kill -TERM $pid 2>/dev/null; wait $pid; st=$?
    [ "$st" = 2 ] && grep -q interrupted run-$n.err && ok "run $n SIGTERM: exit 2, interrupted" || notok "run $n SIGTERM: exit 2, interrupted" "exit $st: $(head -c 200 run-$n.err)"
    [ ! -e run-$n.h5 ] && [ ! -e run-$n.jsonl ] && ok "run $n SIGTERM: nothing left" || notok "run $n SIGTERM: nothing left"
    if [ $n = v2 ]; then expect_grep "run v2 SIGTERM: cancelled, the host closed" '^test-backend: closed$' run-$n.log
    elif grep -q closed run-$n.log 2>/dev/null; then notok "run $n SIGTERM: the host killed" "$(head -c 200 run-$n.log)"
    else ok "run $n SIGTERM: the host killed (no close)"; fi
done
# the --duration end cuts the call under way (on main the round under way went on to its end):
# one case, 2 requests a round, every call 1 s; the end at 1.5 s lands in round 0's second call
expect_exit "duration cut in a 1 s call: exit 0" 0 npu-replay soak --model m --manifest man.jsonl --cases random-prefill-p1-o1-00 -j1 \
    --concurrency 2 --seed 5 --jitter 0 --duration 1.5 --backend "$V2" --backend-opt delay_us=1000000 --backend-log cut.log -o cut.json
[ "$(jf cut.json '(d["requests"], d["interrupted"], d.get("stop_call"), d["duration_s"] >= 1.5 and d["duration_s"] < 1.9)')" = "(0, False, 'cancelled', True)" ] \
    && ok "duration cut in a 1 s call: round 0 dropped at once, cancelled" \
    || notok "duration cut in a 1 s call: round 0 dropped at once, cancelled" "$(jf cut.json '(d["requests"], d["interrupted"], d.get("stop_call"), d["duration_s"])')"
expect_grep "duration cut in a 1 s call: the host was closed" '^test-backend: closed$' cut.log
cd ..

# ---- the --duration end inside a call: the round dropped, a finished soak ----
rm -f dur.ck
t0=$(now_ms)
expect_exit "duration cut: exit 1 (lane 2's mismatches)" 1 $CPU --duration 2 --backend-opt delay_us=200000 --checkpoint dur.ck -o dur.json
took=$(( $(now_ms) - t0 ))
R=$(jf dur.ck 'd["next_round"]')
[ "$(jf dur.json '(d["interrupted"], d.get("stop_call"), d.get("requests_cancelled"))')" = "(False, 'cancelled', 1)" ] \
    && ok "duration cut: not interrupted, stop_call cancelled" || notok "duration cut: not interrupted, stop_call cancelled" "$(jf dur.json '(d["interrupted"], d.get("stop_call"))')"
[ "$(jf dur.json 'd["duration_s"] >= d["duration_s_requested"] and d["duration_s"] < d["duration_s_requested"] + 1.5')" = True ] \
    && ok "duration cut: the duration reached, the last round not waited for" || notok "duration cut: duration" "$(jf dur.json 'd["duration_s"]')"
[ "$(jf dur.ck 'd["done"]')" = True ] && ok "duration cut: the checkpoint is done" || notok "duration cut: the checkpoint is done"
expect_rounds "duration cut" dur.json "$R" 3 1
expect_exit "duration cut: manifest-verify the result" 0 manifest-verify --schema calculet-soak-result/v1 dur.json
cp dur.json dur-first.json
t0=$(now_ms)
expect_exit "duration cut: resume" 1 $CPU --duration 2 --backend-opt delay_us=200000 --checkpoint dur.ck --resume -o dur.json --force
took=$(( $(now_ms) - t0 ))
[ "$(counts dur.json)" = "$(counts dur-first.json)" ] && [ "$(jf dur.ck 'd["next_round"]')" = "$R" ] \
    && ok "duration cut: the resume ran no round (written at once, $took ms)" || notok "duration cut: the resume ran no round" "$(counts dur.json | head -c 100)"
[ "$(jf dur.json '(d["interrupted"], d.get("stop_call"))')" = "(False, 'cancelled')" ] \
    && ok "duration cut: the resumed result keeps stop_call" || notok "duration cut: the resumed result keeps stop_call" "$(jf dur.json '(d["interrupted"], d.get("stop_call"))')"
# in process: the end is seen between calls (stop_call none), the round under way dropped all the same
expect_exit "duration cut in process: exit 1" 1 $CPU --in-process --duration 1.5 --backend-opt delay_us=200000 --checkpoint dip.ck -o dip.json
R=$(jf dip.ck 'd["next_round"]')
[ "$(jf dip.json '(d["interrupted"], d.get("stop_call"), d.get("requests_cancelled"))')" = "(False, 'none', 0)" ] \
    && ok "duration cut in process: stop_call none" || notok "duration cut in process: stop_call none" "$(jf dip.json '(d["interrupted"], d.get("stop_call"))')"
expect_rounds "duration cut in process" dip.json "$R" 3 1
