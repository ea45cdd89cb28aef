#!/bin/sh
# npu-replay soak --checkpoint FILE [--resume]: a soak killed mid-run (SIGKILL: no chance to
# clean up; SIGTERM: a stop after the round) and resumed from its checkpoint ends with the
# same calculet-soak-result/v1 counts and clean-run hashes as an uninterrupted soak of the same
# rounds (the cpu backend's lane 2 that never writes its cache gives a mismatch a round, so
# the counts are not all zero). A checkpoint of other options is refused (exit 2), an existing
# one is never replaced without --force, and the progress line appears on a TTY only (never
# with -q or without a TTY).
. "$GOLDEN_ROOT/tests/e2e/lib.sh"

expect_exit "make-model tiny" 0 npu-replay make-model --preset tiny --seed 2 -o m
expect_exit "matrix" 0 npu-replay matrix --model m --max-len 16 --random 1 --repeated 0 -o man.jsonl -j1
N=70
# delay_us: a seeded device delay of up to 10 ms a call (no bit changes), so the 70 rounds take
# about 1.4 s: without it they took 0.18 s on a quiet machine, less than the poll below needs to
# see round 10, and the kill came after the end (a flake seen in a full make check)
S="npu-replay soak --model m --manifest man.jsonl --cases random-prefill-* -j1 --duration 1h --rounds $N --concurrency 3 --seed 5 --jitter 1ms --backend-opt inject=kv_lane2_zero --backend-opt delay_us=10000 --checkpoint-every 0"
counts() {
    python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
keys = ("cases", "requests", "mismatches", "faults", "retests", "retests_passed", "fault_lines")
print(" ".join("%s=%s" % (k, d[k]) for k in keys),
      sorted((h["case_id"], h["chip"], h["sha256"]) for h in d["hashes"]))' "$1"
}

expect_exit "uninterrupted soak: exit 1 (lane 2 mismatches)" 1 $S --checkpoint full.ck -o full.json
counts full.json > full.txt
if grep -q "requests=$((N * 3)) mismatches=$N " full.txt; then ok "uninterrupted-counts ($(head -c 80 full.txt))"; else notok "uninterrupted-counts" "$(head -c 200 full.txt)"; fi
expect_exit "result against its schema" 0 manifest-verify --schema calculet-soak-result/v1 full.json

# kill SIG after the checkpoint says round >= 10 (and before the soak ends), then resume
kill_resume() {
    sig=$1
    $S --checkpoint $sig.ck -o $sig-first.json > /dev/null 2> $sig-first.err &
    pid=$!
    i=0
    while [ $i -lt 400 ]; do
        r=$(python3 -c 'import json,sys
try: print(json.load(open(sys.argv[1]))["next_round"])
except Exception: print(0)' $sig.ck 2>/dev/null)
        [ "$r" -ge 10 ] && break
        sleep 0.05; i=$((i + 1))
    done
    if kill -$sig $pid 2>/dev/null; then ok "killed-with-$sig-at-round-$r"; else notok "killed-with-$sig" "the soak had ended (round $r)"; fi
    wait $pid
    at=$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(d["next_round"], d["done"])' $sig.ck)
    case "$at" in *False) ok "checkpoint-mid-run-$sig ($at)";; *) notok "checkpoint-mid-run-$sig" "$at";; esac
    expect_exit "resume after $sig" 1 $S --checkpoint $sig.ck --resume -o $sig.json
    counts $sig.json > $sig.txt
    if cmp -s full.txt $sig.txt; then ok "resumed-counts-equal-uninterrupted-$sig"; else notok "resumed-counts-equal-uninterrupted-$sig" "$(cat $sig.txt | head -c 200) vs $(head -c 200 full.txt)"; fi
    expect_exit "resumed result schema ($sig)" 0 manifest-verify --schema calculet-soak-result/v1 $sig.json
}
kill_resume KILL
expect_absent "SIGKILL leaves no result" KILL-first.json
kill_resume TERM

# a resume of a finished soak writes the same result again at once
expect_exit "resume of a finished soak" 1 $S --checkpoint full.ck --resume -o again.json
counts again.json > again.txt
if cmp -s full.txt again.txt; then ok "resume-finished-same-counts"; else notok "resume-finished-same-counts"; fi

# refusals: another seed, another concurrency, no checkpoint, an existing one without --force
mkdir bad
expect_exit "resume with another seed: exit 2" 2 $S --seed 6 --checkpoint full.ck --resume -o bad/a.json
expect_grep "another seed: why" "cannot resume: another seed, concurrency or jitter" err.txt
expect_exit "resume of a missing checkpoint: exit 2" 2 $S --checkpoint none.ck --resume -o bad/b.json
expect_exit "existing checkpoint without --force: exit 2" 2 $S --checkpoint full.ck -o bad/c.json
expect_exit "--resume without --checkpoint: exit 2" 2 $S --resume -o bad/d.json
if [ -z "$(ls -A bad)" ]; then ok "refusals-leave-nothing"; else notok "refusals-leave-nothing" "$(ls -A bad)"; fi

# the progress line: on a TTY (script gives one), not without one, not with -q
P="npu-replay soak --model m --manifest man.jsonl --cases random-prefill-p1-* -j1 --duration 0.8 --concurrency 1"
$P -o p0.json 2> p0.err > /dev/null
if [ ! -s p0.err ]; then ok "no-progress-without-a-tty"; else notok "no-progress-without-a-tty" "$(head -c 200 p0.err)"; fi
if command -v script > /dev/null 2>&1; then
    script -qec "$P -o p1.json" /dev/null > p1.tty 2>&1
    expect_grep "progress-on-a-tty" "soak [0-9.]+/0.8 s, [0-9]+ rounds, [0-9]+ requests, 0 mismatches, 0 faults" p1.tty
    script -qec "$P -q -o p2.json" /dev/null > p2.tty 2>&1
    if grep -q "rounds, " p2.tty; then notok "no-progress-with-q" "$(head -c 200 p2.tty)"; else ok "no-progress-with-q"; fi
else
    notok "progress-on-a-tty" "script(1) is missing (util-linux)"
fi
