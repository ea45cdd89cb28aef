#!/bin/sh
# Red team 11: `npu-replay conform`'s sampling-stats on every lane (docs/conformance.md,
# "Sampling statistics", written from the docs alone). A plug-in over the real cpu backend
# (conform-sampling-lanes-redteam11.c, linked from the build's libgolden.a) changes only
# `sample`, per lane or per state; the cases the doc promises are caught must fail (exit 1,
# the row `sampling-stats FAIL`), the good samplers (the cpu backend's own, the documented chain
# written in the shim, harmless per-lane state) must pass (exit 0). Some runs' reports are held
# to values worked out from the doc (conform-sampling-lanes-redteam11.py). Prints a count line.
. "$GOLDEN_ROOT/tests/e2e/lib.sh"
T=conform-sampling-lanes-redteam11
HERE=$GOLDEN_ROOT/tests/e2e
BUILD=${GOLDEN_BUILD:-$(dirname "$GOLDEN_BIN")}
ARCHIVE=$BUILD/lib/libgolden.a
CC=${CC:-cc}
if [ ! -f "$ARCHIVE" ]; then echo "ok $T # skip no $ARCHIVE"; exit 0; fi
if ! command -v "$CC" >/dev/null 2>&1; then echo "ok $T # skip no C compiler ($CC)"; exit 0; fi

# The flags: the library's headers (an installed tree's include/ when the build has one), the
# archive, then what the archive needs (GNUmakefile's PKGS through pkg-config, -lm, -pthread);
# a sanitizer build's archive (it calls __asan_*) needs the same sanitizers in the plug-in.
INC=$GOLDEN_ROOT/libgolden/include
[ -d "$BUILD/include/golden" ] && INC=$BUILD/include
PKGS=$(sed -n 's/^PKGS *:= *//p' "$GOLDEN_ROOT/GNUmakefile")
LIBS=$(pkg-config --libs $PKGS 2>/dev/null)
SANF=
if command -v nm >/dev/null 2>&1 && nm "$ARCHIVE" 2>/dev/null | grep -q ' U __asan_'; then
    SANF="-fsanitize=address,undefined -fno-omit-frame-pointer"
fi
if ! $CC -std=c11 -D_GNU_SOURCE -O2 -Wall -Wextra $SANF -shared -fPIC -o shim.so \
        "$HERE/$T.c" -I"$INC" "$ARCHIVE" $LIBS -lm -pthread 2> cc.txt; then
    notok "$T: the shim builds" "$(head -c 600 cc.txt)"; exit 0
fi
ok "$T: the shim builds"
PY=
for p in /usr/bin/python3 python3; do command -v "$p" >/dev/null 2>&1 && { PY=$p; break; }; done

expect_exit "$T: make-model tiny" 0 npu-replay make-model --preset tiny --seed 7 -o m

H=0; HT=0; G=0; GF=0; I=0; IP=0
# conform on the shim, the sampling-stats check alone, the report to r.json
cf() { rm -f r.json; npu-replay conform --model m --backend ./shim.so -j1 --checks sampling-stats --json r.json "$@" > out.txt 2> err.txt; }
# hostile NAME OPTS...: the doc promises a failure
hostile() {
    _n=$1; shift; H=$((H + 1)); cf "$@"; _rc=$?
    if [ "$_rc" -eq 1 ] && grep -Eq '^sampling-stats +FAIL' out.txt; then ok "$T: hostile: $_n fails"
    else
        [ "$_rc" -eq 0 ] && HT=$((HT + 1))
        notok "$T: hostile: $_n fails" "exit $_rc, wanted 1 (conform --checks sampling-stats $*): $(sed -n 2p out.txt | head -c 300) $(head -c 300 err.txt)"
    fi
}
# good NAME OPTS...: the doc says it must pass
good() {
    _n=$1; shift; G=$((G + 1)); cf "$@"; _rc=$?
    if [ "$_rc" -eq 0 ] && grep -Eq '^sampling-stats +pass' out.txt; then ok "$T: good: $_n passes"
    else GF=$((GF + 1)); notok "$T: good: $_n passes" "exit $_rc, wanted 0 (conform --checks sampling-stats $*): $(sed -n 2p out.txt | head -c 300) $(head -c 300 err.txt)"; fi
}
# error NAME PATTERN OPTS...: the doc says the check could not run (exit 2, the row ERROR)
error() {
    _n=$1; _p=$2; shift 2; H=$((H + 1)); cf "$@"; _rc=$?
    if [ "$_rc" -eq 2 ] && grep -Eq "^sampling-stats +ERROR .*$_p" out.txt; then ok "$T: hostile: $_n: could not run"
    else
        [ "$_rc" -eq 0 ] && HT=$((HT + 1))
        notok "$T: hostile: $_n: could not run" "exit $_rc, wanted 2 and /$_p/ (conform --checks sampling-stats $*): $(sed -n 2p out.txt | head -c 300)"
    fi
}
# info NAME OPTS...: the doc promises nothing; the outcome is printed
info() {
    _n=$1; shift; I=$((I + 1)); cf "$@"; _rc=$?
    [ "$_rc" -eq 0 ] && IP=$((IP + 1))
    ok "$T: info: $_n: exit $_rc ($(sed -n 2p out.txt | awk '{print $2}'))"
}
# report NAME NLANES FAULTY ALPHA DRAWS POSITIONS WANT: the last run's JSON and text
report() {
    [ -n "$PY" ] || { ok "$T: report: $1 # skip no python3"; return; }
    if "$PY" "$HERE/$T.py" r.json out.txt err.txt "$2" "$3" "$4" "$5" "$6" "$7" > chk.txt 2>&1; then
        ok "$T: report: $1"
    else notok "$T: report: $1" "$(head -c 900 chk.txt)"; fi
}
o() { for _a in "$@"; do printf ' --backend-opt %s' "$_a"; done; }

# ---- good: the cpu backend's sampler through the shim, the chain written from the doc --------
good "the cpu sampler passed through, 4 lanes" $(o rt_mode=pass)
report "4 lanes clean: lanes 0-3, 28 tests, alpha/28, 32 entries" 4 - 1e-6 4096 4 pass
for s in 0 1; do good "the independent chain, 4 lanes, seed $s" --seed $s $(o rt_base=indep); done
good "the independent chain, 1 lane" --seed 3 $(o rt_base=indep lanes=1)
report "1 lane clean: lane 0, 7 tests, alpha/7" 1 - 1e-6 4096 4 pass
good "the independent chain, 2 lanes" --seed 4 $(o rt_base=indep lanes=2)
good "the independent chain, 8 lanes" --seed 5 $(o rt_base=indep lanes=8)
report "8 lanes clean: lanes 0-7, 56 tests" 8 - 1e-6 4096 4 pass
good "the independent chain, 12 lanes" --seed 6 $(o rt_base=indep lanes=12)
report "12 lanes clean: 8 lanes with 0 and 11, 56 tests" 12 - 1e-6 4096 4 pass
good "the independent chain, bf16 logits" --seed 1 $(o rt_base=indep dtype=bf16)
good "the independent chain, 2 lanes, 5000 draws at 2 positions (two calls a position)" --seed 2 --sampling-draws 5000 --sampling-positions 2 $(o rt_base=indep lanes=2)
report "--sampling-draws 5000 --sampling-positions 2" 2 - 1e-6 5000 2 pass
# 20 draws: every position of the cut-free settings pools into one class although the chain
# keeps hundreds: no test, so the check could not judge (red team 11 found this read "exact")
error "the independent chain, --sampling-draws 20: no test, an error" 'pooled into one class .*no test at --sampling-draws 20' --sampling-draws 20 $(o rt_base=indep)
error "temperature ignored on every lane, --sampling-draws 20: an error, not exact" 'pooled into one class' --sampling-draws 20 $(o rt_mode=temp1)
good "the independent chain, --sampling-alpha 1e-3, 2 lanes" --seed 8 --sampling-alpha 1e-3 $(o rt_base=indep lanes=2)
report "--sampling-alpha 1e-3 on 2 lanes: per test 1e-3/14" 2 - 1e-3 4096 4 pass
# the lane mixed into every seed: the same seed and logits give another token on another lane
# (docs: the lane is not one of the inputs that fix the token; the cross-lane repeats)
hostile "the lane mixed into every seed (the same seed gives another token on another lane)" $(o rt_mode=xorlane)
good "a correct per-lane cache (keyed on logits, settings, history)" $(o rt_mode=cache)
good "a sampler that ignores the lane, 1 lane" $(o rt_mode=lane0 lanes=1)
good "a fault on lane 1 of a 1-lane backend (no such lane)" $(o rt_mode=nocut rt_lanes=1 lanes=1)
good "a fault only with 2 lanes, run on 4" $(o rt_mode=boost rt_lanes=1 rt_nl=2)
good "a fault only with 12 lanes, run on 8" $(o rt_mode=nocut rt_nl=12 lanes=8)

good "the independent chain, 64 lanes" --seed 9 $(o rt_base=indep lanes=64)
report "64 lanes clean: 8 lanes with 0 and 63, 56 tests" 64 - 1e-6 4096 4 pass
# --max-context: the prompt shortened so that the lane ends within it, at least 8 prompt tokens
for mc in 32 12 11; do
    G=$((G + 1)); cf --max-context $mc $(o rt_base=indep); _rc=$?
    if [ $_rc -eq 0 ] && [ -n "$PY" ] && "$PY" -c '
import json, sys
mc = int(sys.argv[1])
c = [c for c in json.load(open("r.json"))["checks"] if c["check"] == "sampling-stats"][0]
for e in c["coverage"]["settings"]:
    ps = [p["position"] for p in e["positions"]]
    assert ps and max(ps) <= mc - 1 and min(ps) >= 7, (e["setting"], e["lane"], ps)
' $mc > mc.txt 2>&1; then ok "$T: good: --max-context $mc: passes, every position inside the context, >= 8 prompt tokens"
    elif [ $_rc -eq 0 ] && [ -z "$PY" ]; then ok "$T: good: --max-context $mc passes"
    else GF=$((GF + 1)); notok "$T: good: --max-context $mc: passes, every position inside the context, >= 8 prompt tokens" "exit $_rc (docs: 8 prompt tokens + 3 decodes = $mc fit for 11): $(sed -n 2p out.txt | head -c 200) $(tail -c 300 mc.txt 2>/dev/null)"; fi
done
expect_exit "$T: --max-context 10 (7 prompt tokens): the check cannot run" 2 npu-replay conform --model m --backend ./shim.so -j1 --checks sampling-stats --max-context 10

# "The same --seed gives the same draws, also in process and through the backend host"
if [ -n "$PY" ]; then
    rm -f h.json p.json
    npu-replay conform --model m -j1 --checks sampling-stats --seed 2 --json h.json > /dev/null 2>&1
    npu-replay conform --model m -j1 --checks sampling-stats --seed 2 --in-process --json p.json > /dev/null 2>&1
    if "$PY" -c '
import json, sys
def st(f):
    return [c for c in json.load(open(f))["checks"] if c["check"] == "sampling-stats"][0]["coverage"]["settings"]
sys.exit(0 if st("h.json") == st("p.json") else "the settings entries differ")' > ip.txt 2>&1
    then ok "$T: the same seed, the same draws in process and through the host"
    else notok "$T: the same seed, the same draws in process and through the host" "$(cat ip.txt)"; fi
fi

# ---- hostile: one lane, the last lane, lanes >= 2, odd lanes (4 lanes) ------------------------
hostile "top-k/top-p/min-p ignored on lane 1" $(o rt_mode=nocut rt_lanes=1)
report "fault on lane 1: only lane 1 fails, findings name lane 1" 4 1 1e-6 4096 4 fail
hostile "top-k/top-p/min-p ignored on the last lane" $(o rt_mode=nocut rt_lanes=last)
hostile "half the draws the top class, lanes >= 2" $(o rt_mode=boost rt_lanes=ge2)
report "fault on lanes 2 and 3" 4 2+3 1e-6 4096 4 fail
hostile "temperature ignored on odd lanes" $(o rt_mode=temp1 rt_lanes=odd)
report "fault on lanes 1 and 3 (temperature)" 4 1+3 1e-6 4096 4 fail
hostile "greedy takes the second largest on lane 3" $(o rt_mode=greedy2 rt_lanes=3)
hostile "no repetition penalty on lane 3" $(o rt_mode=nopen rt_lanes=3)
hostile "penalty window halved on lane 1" $(o rt_mode=histhalf rt_lanes=1)
hostile "bf16: top class boosted on lane 3" $(o rt_mode=boost rt_lanes=3 rt_base=indep dtype=bf16)
# ---- hostile: state a lane ----------------------------------------------------------------------
hostile "a per-lane call counter in the seed, lane 2" $(o rt_mode=seedctr rt_lanes=2)
hostile "a per-lane generator stream (later seeds ignored), lane 1" $(o rt_mode=stream rt_lanes=1)
hostile "a per-lane cache keyed on the settings only (stale positions), every lane" $(o rt_mode=stalecache)
hostile "a per-lane cache keyed on the settings only, lane 3" $(o rt_mode=stalecache rt_lanes=3)
hostile "a cache shared by the lanes, keyed on settings and history length, lanes >= 1" $(o rt_mode=sharedcache rt_lanes=ge1)
hostile "ignores the lane (samples lane 0's logits), 4 lanes" $(o rt_mode=lane0)
hostile "ignores the lane, 2 lanes" $(o rt_mode=lane0 lanes=2)
hostile "lane L samples lane L-1's logits, the last lane" $(o rt_mode=nextlane rt_lanes=last)
hostile "top class boosted after 84 calls on every lane (temp-cuts only)" $(o rt_mode=boost rt_after=84)
hostile "top class boosted after 40 calls on lane 3 (from top-p on)" $(o rt_mode=boost rt_lanes=3 rt_after=40)
hostile "greedy second largest after 3 calls on lane 1 (greedy positions 2-4)" $(o rt_mode=greedy2 rt_lanes=1 rt_after=3)
hostile "a one-draw call on another generator than a batch, lane 2" $(o rt_mode=singlediff rt_lanes=2)
hostile "a batch continuing its first seed's generator, lane 3" $(o rt_mode=callstream rt_lanes=3)
hostile "temperature before top-p and min-p on lane 2" $(o rt_mode=tempfirst rt_lanes=2)
hostile "the rarest kept class 1.5x on lane 1 (sample_biased on one lane)" $(o rt_mode=rarebias rt_lanes=1)
hostile "8 lanes: the rarest kept class 1.5x on lane 5" $(o rt_mode=rarebias rt_lanes=5 lanes=8)
hostile "2 lanes: the rarest kept class 1.5x on lane 1" $(o rt_mode=rarebias rt_lanes=1 lanes=2)
error "a token outside the vocabulary on lane 2" "outside the vocabulary" $(o rt_mode=oov rt_lanes=2)
error "sample fails on lane 3" "the device sampler failed" $(o rt_mode=err rt_lanes=3)
hostile "half the draws the top class on the first call after another lane's, lane 3" $(o rt_mode=switch rt_lanes=3)
# one logits buffer: first proven wrong by a call sequence the check never makes (lane 0 and 1
# prefilled, lane 1 last, a greedy draw on lane 0 against lane 0's own largest logit)
if $CC -std=c11 -D_GNU_SOURCE -O2 $SANF -o proof "$HERE/$T-proof.c" -I"$INC" -ldl 2> pcc.txt; then
    a=$(./proof ./shim.so m pass 2>&1); b=$(./proof ./shim.so m lastrow 2>&1)
    case "$a/$b" in same*/differs*) ok "$T: proof: one logits buffer samples lane 1's row for lane 0 ($b)";;
    *) notok "$T: proof: one logits buffer samples lane 1's row for lane 0" "pass: $a; lastrow: $b";; esac
else notok "$T: proof driver builds" "$(head -c 300 pcc.txt)"; fi
# found by this red team (passed before): the lanes now advance together, so a lane draws after
# another lane advanced
hostile "one logits buffer (the row of the lane advanced last, whatever lane is given), 4 lanes" $(o rt_mode=lastrow)
hostile "one logits buffer, 12 lanes" $(o rt_mode=lastrow lanes=12)
hostile "one logits buffer, 2 lanes" $(o rt_mode=lastrow lanes=2)
info "lanes >= 1 use the history lane 0 passed at the same length" $(o rt_mode=hist0 rt_lanes=ge1)
# found by this red team (passed before): the re-asked seeds are now spread over the batch
hostile "a batch's draws past the 8th use the previous draw's seed" $(o rt_mode=batchshift rt_lanes=2)
info "the penalty once per occurrence in the window (doc: once per token?)" $(o rt_mode=pendup rt_lanes=2)
info "the history of the previous sample call (another lane's on a lane's first call), lane 2" $(o rt_mode=lasthist rt_lanes=2)
# ---- hostile: lane counts ----------------------------------------------------------------------
hostile "1 lane: top class boosted on lane 0" $(o rt_mode=boost rt_lanes=0 lanes=1)
report "1 lane, fault on lane 0" 1 0 1e-6 4096 4 fail
hostile "2 lanes: cuts ignored on lane 1" $(o rt_mode=nocut rt_lanes=1 lanes=2)
hostile "a fault only with 2 lanes, on lane 1" $(o rt_mode=boost rt_lanes=1 rt_nl=2 lanes=2)
hostile "8 lanes: cuts ignored on lane 5" $(o rt_mode=nocut rt_lanes=5 lanes=8)
hostile "8 lanes: top class boosted on lane 7" $(o rt_mode=boost rt_lanes=7 lanes=8)
report "8 lanes, fault on lane 7" 8 7 1e-6 4096 4 fail
hostile "12 lanes: cuts ignored on the last lane" $(o rt_mode=nocut rt_lanes=last lanes=12)
report "12 lanes, fault on lane 11" 12 11 1e-6 4096 4 fail
hostile "12 lanes: cuts ignored on lane 0" $(o rt_mode=nocut rt_lanes=0 lanes=12)
hostile "12 lanes: top class boosted on every lane but the first and last" $(o rt_mode=boost rt_lanes=mid lanes=12)
hostile "12 lanes: cuts ignored on lanes >= 8 (the last is in)" $(o rt_mode=nocut rt_lanes=ge8 lanes=12)
hostile "a fault only with 12 lanes, every lane" $(o rt_mode=nocut rt_nl=12 lanes=12)
hostile "9 lanes: cuts ignored on lanes 1 and 2 (6 of the 7 between are checked)" $(o rt_mode=nocut rt_lanes=1+2 lanes=9)
hostile "9 lanes: cuts ignored on lanes 6 and 7" $(o rt_mode=nocut rt_lanes=6+7 lanes=9)
hostile "64 lanes: cuts ignored on the last lane" $(o rt_mode=nocut rt_lanes=last lanes=64)
report "64 lanes, fault on lane 63" 64 63 1e-6 4096 4 fail
hostile "a fault only with 8 lanes, on lane 4" $(o rt_mode=nocut rt_lanes=4 rt_nl=8 lanes=8)
hostile "64 lanes: top class boosted on lanes >= 1" $(o rt_mode=boost rt_lanes=ge1 lanes=64)

# ---- 12 lanes: the chosen lanes of a seed (from a clean run's coverage, which the doc says
# lists the lanes checked); a fault on a chosen lane between must fail, on one left out it
# cannot be seen (the doc's 8 of them), the lanes the same for the same seed --------------------
if [ -n "$PY" ]; then
    # one run gives kv-lanes' lanes and sampling-stats' at seed 0 (the shim passing sample through)
    rm -f k.json
    npu-replay conform --model m --backend ./shim.so -j1 --checks kv-lanes,sampling-stats --budget 0 --seed 0 --backend-opt lanes=12 --json k.json > kout.txt 2> kerr.txt
    chosen=$("$PY" -c 'import json,sys; c=[c for c in json.load(open("k.json"))["checks"] if c["check"]=="sampling-stats"][0]; print(" ".join(map(str, c["coverage"]["lanes"])))')
    # "the same rule as kv-lanes": 8 distinct lanes, sorted, the first and the last among them
    # (each check draws its own 6 between: the sets may differ)
    if "$PY" -c '
import json, sys
d = {c["check"]: c for c in json.load(open("k.json"))["checks"]}
b = d["sampling-stats"]["coverage"].get("lanes")
sys.exit(0 if len(b) == 8 and b == sorted(set(b)) and b[0] == 0 and b[-1] == 11 and all(0 <= l < 12 for l in b) else "sampling-stats %r" % (b,))' 2> kchk.txt; then
        ok "$T: 12 lanes seed 0: sampling-stats checks 8 lanes by kv-lanes' rule"
    else notok "$T: 12 lanes seed 0: sampling-stats checks 8 lanes by kv-lanes' rule" "$(cat kchk.txt)"; fi
    cf --seed 0 $(o lanes=12 rt_mode=cache)
    again=$("$PY" -c 'import json,sys; c=[c for c in json.load(open("r.json"))["checks"] if c["check"]=="sampling-stats"][0]; print(" ".join(map(str, c["coverage"]["lanes"])))')
    if [ "$chosen" = "$again" ]; then ok "$T: 12 lanes: the same seed, the same lanes ($chosen)"
    else notok "$T: 12 lanes: the same seed, the same lanes" "'$chosen' then '$again'"; fi
    for l in $chosen; do
        [ "$l" -eq 0 ] || [ "$l" -eq 11 ] && continue
        hostile "12 lanes seed 0: cuts ignored on chosen lane $l" --seed 0 $(o rt_mode=nocut rt_lanes=$l lanes=12)
    done
    l=1; nb=0
    while [ $l -lt 11 ] && [ $nb -lt 2 ]; do
        case " $chosen " in *" $l "*) ;; *)
            nb=$((nb + 1))
            I=$((I + 1)); cf --seed 0 $(o rt_mode=nocut rt_lanes=$l lanes=12)
            if [ $? -eq 0 ]; then IP=$((IP + 1)); ok "$T: by design: a fault on lane $l, not among the 8 checked at seed 0, passes"
            else notok "$T: by design: a fault on lane $l, not among the 8 checked at seed 0, passes" "$(sed -n 2p out.txt | head -c 300)"; fi;;
        esac
        l=$((l + 1))
    done
fi

echo "# $T: $H hostile cases, $HT got through (passed where the doc says fail); $G good cases, $GF failed; $I not promised either way, $IP of them passed"
