# Every tool writes its JUnit also when it exits 2 (issue 29): one error case, class TOOL.error,
# case "inputs", naming the problem; never over a file that was there before without -f, and
# none from a command that refuses --junit.
. "$GOLDEN_ROOT/tests/e2e/lib.sh"
# err NAME FILE CMD...: exit 2, FILE holds one failed case TOOL.error/inputs naming the problem
err() {
    _n=$1 _f=$2; shift 2
    expect_exit "$_n-exit-2" 2 "$@"
    if [ -f "$_f" ] && grep -q "<testsuites name=\"$1\" tests=\"1\" failures=\"1\"" "$_f" &&
       grep -q "<testcase classname=\"$1.error\" name=\"inputs\">" "$_f" &&
       grep -Eq '<failure message="could not (check|compare): [^"]{8,}' "$_f"; then ok "$_n-junit-error-case"
    else notok "$_n-junit-error-case" "$(head -c 400 "$_f" 2>/dev/null)"; fi
}
err golden-diff j1.xml golden-diff --junit j1.xml nope.npy nope2.npy
err golden-dump j2.xml golden-dump --verify nope.h5 --junit j2.xml
err dag-check j3.xml dag-check --junit j3.xml nope.json
err manifest-verify j4.xml manifest-verify --junit j4.xml nope.jsonl
err exp-gate j5.xml exp-gate decide --junit j5.xml nope
err golden-accept j7.xml golden-accept --junit j7.xml --golden nope.h5 nope
err usage j8.xml golden-diff --junit j8.xml --tier nope a b
# a file that was there stays without -f; replaced with -f
echo keep > old.xml
expect_exit old-exit-2 2 dag-check --junit old.xml nope.json
if [ "$(cat old.xml)" = keep ]; then ok junit-never-over-old-file; else notok junit-never-over-old-file; fi
expect_exit old-force-exit-2 2 dag-check -f --junit old.xml nope.json
expect_grep junit-force-replaces 'classname="dag-check.error"' old.xml
# refused --junit: nothing written
expect_exit refused-make-model 2 npu-replay make-model --junit r1.xml --preset tiny -o m
expect_absent refused-make-model-no-junit r1.xml
expect_exit refused-pareto 2 exp-gate pareto --junit r2.xml x
expect_absent refused-pareto-no-junit r2.xml
# --junit - (standard output) on exit 2: exactly one XML document, the tool's own wording
# (golden-diff "could not compare", the others "could not check"); the common layer is its only writer.
outerr() {
    _n=$1 _w=$2; shift 2
    "$@" > "$_n.out" 2>/dev/null; _rc=$?
    _d=$(grep -c '<?xml' "$_n.out")
    if [ "$_rc" -eq 2 ] && [ "$_d" -eq 1 ] && grep -q "<failure message=\"$_w: " "$_n.out"; then ok "$_n-stdout-one-document"
    else notok "$_n-stdout-one-document" "exit $_rc, $_d documents: $(head -c 300 "$_n.out")"; fi
}
outerr golden-diff "could not compare" golden-diff --junit - nope.npy nope2.npy
outerr golden-diff-usage "could not compare" golden-diff --junit - --tier nope a b
outerr golden-dump "could not check" golden-dump --verify nope.h5 --junit -
outerr dag-check "could not check" dag-check --junit - nope.json
outerr manifest-verify "could not check" manifest-verify --junit - nope.jsonl
outerr exp-gate "could not check" exp-gate decide --junit - nope
outerr golden-accept "could not check" golden-accept --junit - --golden nope.h5 nope
