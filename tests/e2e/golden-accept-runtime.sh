# golden-accept step 9 (--backend SO --model DIR): the conformance suite against the delivered
# runtime and a replay of the delivered input manifest through it, the team's own golden judged
# against the team's reference and the vendor's delivered golden. The example's vendor device is
# the cpu backend with dtype=bf16 on the tiny model of seed 1 (docs/golden-accept.md): that
# runtime passes; the counting test plug-in (tests/tools/plugin) is no runtime of this model
# and is rejected at step 9 and only there, with the reason each mutation gives.
. "$GOLDEN_ROOT/tests/e2e/lib.sh"
HO="$GOLDEN_ROOT/examples/handoff"
TEAM="$GOLDEN_ROOT/examples/team"
PLUGIN="$GOLDEN_BUILD/tests/lib/test-backend.so"
npu-replay make-model --preset tiny --seed 1 -o m > /dev/null 2>&1 && ok "tiny model" || notok "tiny model"
# cheap: two conformance checks, no warm-up, two measured runs a case
accept() { # accept NAME [OPTIONS...]
    _n=$1; shift
    golden-accept "$HO" --golden "$TEAM/reference.h5" --baseline "$TEAM/production.h5" \
        --policy "$TEAM/policy.yaml" --hypothesis "$TEAM/hypothesis.yaml" --json "$_n.json" \
        --model m --conform-checks kv-lanes,rejection --warmup 0 --runs 2 "$@"
}
verdicts() {
    python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
m = {"pass": "p", "fail": "F", "skipped": "s"}
print(d["verdict"], " ".join(m[s["verdict"]] for s in d["steps"]))' "$1"
}
expect_steps() {
    _got=$(verdicts "$1.json" 2>&1)
    if [ "$_got" = "$2" ]; then ok "$1: $2"; else notok "$1: steps" "got '$_got', wanted '$2'"; fi
}

# the vendor's device as delivered: accepted, nine steps
expect_exit "cpu bf16 runtime: accepted" 0 accept cpu --backend cpu --backend-opt dtype=bf16 --junit cpu.xml
expect_steps cpu "accepted p p p p p p p p p"
expect_grep "step 9 line" "^pass    9 runtime" out.txt
expect_grep "the verdict says the team's own run was part of the evidence" \
    "^accepted: every step passed, the team's own run of the delivered runtime included \(step 9\); the section 17 decision is soak_24h" out.txt
expect_exit "nine-step report valid against calculet-accept-report/v1" 0 \
    manifest-verify --schema calculet-accept-report/v1 cpu.json
python3 - cpu.json > s9.txt 2>&1 <<'PY' && ok "step 9: both checks ran, 2 cases replayed, 14 tensors judged twice" || notok "step 9 evidence" "$(cat s9.txt)"
import json, sys
s = json.load(open(sys.argv[1]))["steps"][8]
assert s["name"] == "runtime" and s["number"] == 9
checks = [c["check"] for c in s["report"]["conform"]["checks"]]
assert checks == ["kv-lanes", "rejection"], checks
assert all(c["status"] == "pass" for c in s["report"]["conform"]["checks"])
rp = s["report"]["replay"]
assert rp["cases"] == 2 and rp["requests"] == 4, rp   # 2 cases x 2 measured runs
assert any("14 tensor(s) judged against" in n and "14 against the delivered" in n for n in s["notes"]), s["notes"]
PY
n=$(grep -c '<testsuite ' cpu.xml)
[ "$n" -eq 9 ] && ok "junit: nine suites with --backend" || notok "junit: nine suites" "$n"

# a runtime whose lanes cross (the test plug-in, cross=1): the conformance suite fails
expect_exit "crossing lanes: exit 1" 1 accept cross --backend "$PLUGIN" --backend-opt cross=1
expect_steps cross "reject p p p p p p p p F"
expect_grep "the failing check named" '"rule": "conform",.*' cross.json
expect_grep "kv-lanes is the failing check" '"where": "kv-lanes"' cross.json
# the plug-in without a fault passes those checks on its own model, but it is not the runtime of
# this model: the replay of the delivered input manifest fails (token ids beyond its vocabulary)
expect_exit "another model's runtime: exit 1" 1 accept other --backend "$PLUGIN"
expect_steps other "reject p p p p p p p p F"
expect_grep "replay named" "the replay through the delivered runtime failed: token id [0-9]+ is outside the backend's vocabulary of 64" other.json
python3 -c '
import json, sys
s = json.load(open("other.json"))["steps"][8]
sys.exit(0 if not any(f["rule"] == "conform" for f in s["findings"]) else 1)' \
    && ok "other: no conformance finding" || notok "other: no conformance finding"

# usage: --backend and --model together; step-9 options need --backend
expect_exit "--backend without --model: exit 2" 2 golden-accept "$HO" --golden "$TEAM/reference.h5" \
    --hypothesis "$TEAM/hypothesis.yaml" --backend cpu
expect_exit "--runs without --backend: exit 2" 2 golden-accept "$HO" --golden "$TEAM/reference.h5" \
    --hypothesis "$TEAM/hypothesis.yaml" --runs 2
expect_exit "unknown conformance check: exit 2" 2 accept badcheck --backend cpu --conform-checks nope

# --- --html: one self-contained page that opens on the verdict and the first failing step,
# with every step and its picture (the accepted example; then the dropped barrier: step 4)
page_check() { # page_check NAME PAGE WANT_VERDICT WANT_FIRST_STEP NSTEPS
    python3 - "$2" "$3" "$4" "$5" > "$1.chk" 2>&1 <<'PY'
import re, sys
h = open(sys.argv[1]).read()
want_v, want_first, nsteps = sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
body = h[h.index("<body"):]
# the first thing after the title is the verdict, then the first failing step
m = re.search(r'<p class="verdict" data-verdict="([a-z_]+)"', body)
assert m and m.group(1) == want_v, m and m.group(1)
f = re.search(r'<p class="first-fail" data-step="([0-9]+)"', body)
assert f and int(f.group(1)) == want_first, f and f.group(1)
assert m.start() < f.start() < body.index('<section'), "verdict, first failing step, then the steps"
first_tag = re.findall(r"<(p|section|table|div|svg)\b", body)[0:1]
assert first_tag == ["p"], first_tag
steps = re.findall(r'<section class="step" id="step-([0-9]+)" data-step="([a-z_]+)" data-verdict="([a-z]+)"', body)
assert [int(s[0]) for s in steps] == list(range(1, nsteps + 1)), steps
if want_first:
    assert steps[want_first - 1][2] == "fail", steps
    assert all(s[2] == "pass" for s in steps[:want_first - 1]), steps
# every step's picture from the existing writers: the layer error chart (accuracy), the latency
# boxes (performance) and, with a race, the swimlanes (graph), each inside its step
def section(name):
    i = body.index('data-step="%s"' % name)
    return body[i:body.index("</section>", i)]
assert 'data-chart="layers-cosine"' in section("accuracy")
assert 'data-chart="latency-ttft_ms"' in section("performance")
if want_first == 4:
    assert 'data-chart="swimlanes"' in section("graph")
    assert "bar_y" in section("graph") or "store_y" in section("graph")
# self-contained: no external resource of any kind
for pat in [r'<script[^>]+src=', r'<link\b', r'<img\b', r'<iframe\b', r'url\(\s*["\']?(https?:)?//',
            r'@import', r'(src|href)\s*=\s*["\']?(https?:)?//']:
    assert not re.search(pat, h, re.I), pat
assert 'id="report-json"' in h
print("ok")
PY
    if [ "$(cat "$1.chk")" = ok ]; then ok "$1: page markup"; else notok "$1: page markup" "$(tail -3 "$1.chk")"; fi
}
expect_exit "html: the example accepted" 0 golden-accept "$HO" --golden "$TEAM/reference.h5" \
    --baseline "$TEAM/production.h5" --policy "$TEAM/policy.yaml" --hypothesis "$TEAM/hypothesis.yaml" \
    --html ok.html
page_check html-ok ok.html accepted 0 8
rm -rf race; cp -R "$HO" race
sed -i '/"id": "bar_y"/d' race/graph/candidate.json   # as golden-accept.sh's step 4 mutation
python3 "$GOLDEN_ROOT/tests/tools/handoff-index.py" race
expect_exit "html: a dropped barrier rejected" 1 golden-accept race --golden "$TEAM/reference.h5" \
    --baseline "$TEAM/production.h5" --policy "$TEAM/policy.yaml" --hypothesis "$TEAM/hypothesis.yaml" \
    --html race.html --json race.json
page_check html-race race.html reject 4 8
expect_exit "html: nine steps with --backend" 1 accept html9 --backend "$PLUGIN" --backend-opt cross=1 --html nine.html
page_check html-nine nine.html reject 9 9
expect_exit "html: existing page without --force exits 2 before the work" 2 golden-accept "$HO" \
    --golden "$TEAM/reference.h5" --hypothesis "$TEAM/hypothesis.yaml" --html ok.html
