# Every tool's JUnit XML read back by a real consumer (Debian's python3-junitparser) with the
# counts worked out by hand, and every attribute checked against the sets the Jenkins xunit
# plugin's junit-10.xsd allows (and the Ant schema's required testsuite attributes).
. "$GOLDEN_ROOT/tests/e2e/lib.sh"

PY=/usr/bin/python3
if ! $PY -c 'import junitparser' 2> /dev/null; then
    ok "junit # SKIP python3-junitparser not installed (ci/install-deps installs it)"
    exit 0
fi

# check.py FILE TESTS FAILURES SKIPPED [CASE=failed|passed|skipped ...]: read FILE with
# junitparser, compare the counts, the per-case results, and the attribute sets.
cat > check.py <<'PYEOF'
import re, sys
import xml.etree.ElementTree as ET
from junitparser import JUnitXml, Failure, Skipped, Error

path, tests, failures, skipped = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
want = dict(a.rsplit("=", 1) for a in sys.argv[5:])
problems = []

# junit-10.xsd (jenkinsci/xunit-plugin): the attributes each element may carry
ALLOWED = {
    "testsuites": {"name", "time", "tests", "failures", "errors"},
    "testsuite": {"name", "tests", "failures", "errors", "group", "time", "skipped", "timestamp",
                  "hostname", "id", "package", "file", "log", "url"},
    "testcase": {"name", "time", "classname", "group"},
    "failure": {"type", "message"}, "error": {"type", "message"}, "skipped": {"type", "message"},
}
REQUIRED = {"testsuite": {"name", "tests", "failures", "errors"}, "testcase": {"name"}}
# the Ant JUnit schema requires these on every testsuite as well: CI servers read them
ANT_SUITE = {"name", "timestamp", "hostname", "tests", "failures", "errors", "time"}
SUREFIRE_TIME = re.compile(r"(([0-9]{0,3},)*[0-9]{3}|[0-9]{0,3})*(\.[0-9]*)?$")

root = ET.parse(path).getroot()
if root.tag != "testsuites":
    problems.append("root is %s" % root.tag)
for el in root.iter():
    allowed = ALLOWED.get(el.tag)
    if allowed is None:
        problems.append("element %s is not in junit-10.xsd" % el.tag)
        continue
    extra = set(el.attrib) - allowed
    if extra:
        problems.append("%s carries %s, which junit-10.xsd refuses" % (el.tag, sorted(extra)))
    missing = REQUIRED.get(el.tag, set()) - set(el.attrib)
    if missing:
        problems.append("%s lacks required %s" % (el.tag, sorted(missing)))
    if el.tag == "testsuite" and ANT_SUITE - set(el.attrib):
        problems.append("testsuite lacks %s (Ant schema)" % sorted(ANT_SUITE - set(el.attrib)))
    if el.tag in ("testsuites", "testsuite") and "time" in el.attrib:
        if not SUREFIRE_TIME.match(el.attrib["time"]):
            problems.append("%s time %r is not a SUREFIRE_TIME" % (el.tag, el.attrib["time"]))
        elif float(el.attrib["time"]) <= 0:
            problems.append("%s time is %s: not a real duration" % (el.tag, el.attrib["time"]))
    if el.tag == "testsuite" and not re.match(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d$", el.attrib.get("timestamp", "")):
        problems.append("timestamp %r" % el.attrib.get("timestamp"))

xml = JUnitXml.fromfile(path)
suites = list(xml) if hasattr(xml, "__iter__") else [xml]
n = f = s = 0
seen = {}
for suite in suites:
    for case in suite:
        n += 1
        kinds = [type(r) for r in case.result]
        if Failure in kinds or Error in kinds:
            f += 1
            state = "failed"
            msg = next(r for r in case.result if isinstance(r, (Failure, Error))).message
            if not msg:
                problems.append("case %s fails without a message" % case.name)
        elif Skipped in kinds:
            s += 1
            state = "skipped"
        else:
            state = "passed"
        seen[case.name] = state
if (n, f, s) != (tests, failures, skipped):
    problems.append("junitparser counts tests=%d failures=%d skipped=%d, wanted %d %d %d" %
                    (n, f, s, tests, failures, skipped))
for suite in suites:
    if (suite.tests, suite.failures) != (tests, failures):
        problems.append("suite attributes say tests=%s failures=%s" % (suite.tests, suite.failures))
for name, state in want.items():
    if seen.get(name) != state:
        problems.append("case %r is %s, wanted %s" % (name, seen.get(name), state))
if problems:
    print("; ".join(problems))
    sys.exit(1)
PYEOF

# junit NAME FILE TESTS FAILURES SKIPPED [CASE=STATE ...]
junit() {
    _n=$1; shift
    if out=$($PY check.py "$@" 2>&1); then ok "$_n"; else notok "$_n" "$out"; fi
}

# ---- golden-diff: one test case per tensor (and per missing tensor) ----
make-golden ref.h5 'layers/0/out:f32:8x16:rand=1,-1,1' 'layers/1/out:f32:16x16:rand=5,-1,1' \
    'only-ref:f32:4:fill=1' || echo "not ok make-golden"
make-golden cand.h5 'layers/0/out:f32:8x16:rand=1,-1,1;set=3,nan' 'layers/1/out:f32:16x16:rand=5,-1,1'
expect_exit diff-fails 1 golden-diff --junit diff.xml ref.h5 cand.h5
junit diff-junit diff.xml 3 2 0 layers/0/out=failed layers/1/out=passed only-ref=failed
expect_exit diff-allow 1 golden-diff --allow-missing-in-candidate only-ref --junit diff2.xml ref.h5 cand.h5
junit diff-junit-allow-missing diff2.xml 3 1 1 only-ref=skipped
expect_exit diff-pass 0 golden-diff --junit pass.xml ref.h5 ref.h5
junit diff-junit-pass pass.xml 3 0 0

# ---- golden-dump --verify: one case per tensor ----
expect_exit verify 0 golden-dump --verify ref.h5 --junit verify.xml
junit verify-junit verify.xml 3 0 0 layers/0/out=passed only-ref=passed

# ---- dag-check: one case per check (structure, cycles, races, aliases) ----
D="$GOLDEN_ROOT/tests/data/graphs"
expect_exit dag-pass 0 dag-check --junit dag.xml "$D/inplace-safe.json"
junit dag-junit-pass dag.xml 4 0 0 structure=passed races=passed
expect_exit dag-race 1 dag-check --junit race.xml "$D/war-reused-buffer.json"
junit dag-junit-race race.xml 4 1 0 races=failed cycles=passed
expect_exit dag-cycle 1 dag-check --junit cycle.xml "$D/cycle-two-waits.json"
junit dag-junit-cycle cycle.xml 4 1 2 cycles=failed races=skipped
expect_exit dag-baseline 1 dag-check --junit base.xml --baseline "$D/raw-across-chips-base.json" "$D/raw-across-chips-cand.json"
junit dag-junit-baseline base.xml 4 1 0 "new races=failed"

# ---- manifest-verify: one case per rule, per document schema, per hand-off item ----
E="$GOLDEN_ROOT/examples/experiment/OP-MOE-0001"
expect_exit mv-experiment 0 manifest-verify --junit exp.xml "$E"
nrules=$(grep -c '<testcase ' exp.xml)
if [ "$nrules" -ge 20 ]; then ok mv-one-case-per-rule; else notok mv-one-case-per-rule "$nrules cases"; fi
junit mv-junit-experiment exp.xml "$nrules" 0 0 layout=passed seal=passed
expect_exit mv-schema 1 manifest-verify --junit schema.xml --schema calculet-graph/v1 "$D/inplace-safe.json" "$GOLDEN_ROOT/examples/experiment/OP-MOE-0001/accuracy/result.json"
junit mv-junit-schema schema.xml 1 1 0 schema=failed
expect_exit mv-handoff 0 manifest-verify --junit handoff.xml --handoff "$GOLDEN_ROOT/examples/handoff"
junit mv-junit-handoff handoff.xml 9 0 0 findings=passed

# ---- no made-up times: a case nobody timed has no time attribute (optional in junit-10.xsd),
#      never time="0.000000" ----
zero=$(cat ./*.xml | grep -c 'time="0\.0*"')
if [ "$zero" -eq 0 ]; then ok no-zero-times; else notok no-zero-times "$zero elements say time=\"0.000000\""; fi

# ---- the JUnit on stdout is the whole of stdout: a consumer reads it from a pipe ----
golden-diff --junit - ref.h5 cand.h5 > piped.xml 2> /dev/null
junit junit-stdout piped.xml 3 2 0
