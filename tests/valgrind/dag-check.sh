# dag-check's main paths under valgrind: check, --all, --baseline, --redundant, --remove, diff,
# a cycle and a structure error (exit 1 and 2 are expected; 99 means valgrind found a problem).
set -u
G="$GOLDEN_ROOT/tests/data/graphs"
run() {
    want=$1; shift
    $VG "$@" > /dev/null 2> vg.err
    got=$?
    if [ "$got" -ne "$want" ]; then
        echo "exit $got (wanted $want): $*"; cat vg.err; exit 1
    fi
}
gen-graph --ops 600 -o real.json 2> /dev/null || exit 1
gen-graph --ops 600 --race -o race.json 2> /dev/null || exit 1
run 0 dag-check --redundant --json r1.json --junit r1.xml real.json
run 1 dag-check --all --json r2.json --baseline real.json race.json
run 1 dag-check --json r3.json --junit r3.xml "$G/inplace-unsafe.json"
run 1 dag-check --remove w1,w2 "$G/redundant-wait.json"
run 1 dag-check "$G/cycle-two-waits.json"
run 2 dag-check "$G/bad-duplicate-op.json"
run 2 dag-check --remove nope "$G/redundant-wait.json"
run 0 dag-check diff --json d.json real.json race.json
# the streaming loader too
export GOLDEN_GRAPH_STREAM_BYTES=0
run 1 dag-check --json r4.json --baseline real.json race.json
run 2 dag-check "$G/bad-duplicate-op.json"
unset GOLDEN_GRAPH_STREAM_BYTES
exit 0
