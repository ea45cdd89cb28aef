# exp-gate's main paths under valgrind on a copy of examples/experiment/OP-MOE-0001: summarize
# (write, then --check clean and tampered), decide (write, then a second run that refuses a
# hand-written decision.md), matrix (JSON and Markdown), and an unknown subcommand
# (exit 1 and 2 are expected; 99 means valgrind found a problem).
set -u
EX="$GOLDEN_ROOT/examples/experiment/OP-MOE-0001"
run() {
    want=$1; shift
    $VG "$@" > /dev/null 2> vg.err
    got=$?
    if [ "$got" -ne "$want" ]; then
        echo "exit $got (wanted $want): $*"; cat vg.err; exit 1
    fi
}
mkdir w && cp -R "$EX" w/OP-MOE-0001 && d=w/OP-MOE-0001
rm -f "$d/performance/summary.json" "$d/decision.md" "$d/decision.json" "$d/SHA256SUMS"
run 0 exp-gate summarize --bootstrap 200 -j2 "$d"
run 0 exp-gate summarize --check "$d"
sed -i 's/"median": \([0-9]\)/"median": 9\1/' "$d/performance/summary.json"
run 1 exp-gate summarize --check "$d"
run 0 exp-gate summarize --force --bootstrap 200 "$d"
run 1 exp-gate decide --bootstrap 200 "$d"
printf 'hand-written\n' > "$d/decision.md"
run 2 exp-gate decide "$d"
run 0 exp-gate matrix --json m.json --markdown m.md "$d" "$EX"
run 2 exp-gate score --help
exit 0
