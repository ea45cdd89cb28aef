# manifest-verify on the shipped example experiment, and on one broken copy per rule: each
# copy must fail (exit 1) naming exactly the rule that was broken.
. "$GOLDEN_ROOT/tests/e2e/lib.sh"
EX="$GOLDEN_ROOT/examples/experiment/OP-MOE-0001"

# fresh NAME: an unsealed copy of the example under w/NAME/OP-MOE-0001; prints its path.
fresh() {
    rm -rf "w/$1"
    mkdir -p "w/$1"
    cp -R "$EX" "w/$1/OP-MOE-0001"
    rm -f "w/$1/OP-MOE-0001/SHA256SUMS"
    echo "w/$1/OP-MOE-0001"
}

# broken NAME RULE DIR: the check fails with exit 1 and a finding of RULE.
broken() {
    expect_exit "$1 exits 1" 1 manifest-verify "$3"
    expect_grep "$1 names rule $2" ": $2: " out.txt
}

# --- the shipped example passes, sealed as shipped
expect_exit "example passes" 0 manifest-verify "$EX"
expect_grep "example summary says PASS" "^PASS: .*0 errors, 0 to-dos" out.txt
# its input_minimums_waiver is shown as notes (rule input-minimums), which neither fail nor wait
expect_grep "example shows its input-minimums waiver" \
    "hypothesis.yaml:[0-9]+:[0-9]+: note input-minimums: input_minimums.fixed_prompt lowered from section 5.2's 100 to 0 by the waiver of libgolden maintainers" out.txt
expect_grep "example is hashed" "[1-9][0-9]* files hashed" out.txt
d=$(fresh plain)
expect_exit "unsealed copy passes" 0 manifest-verify "$d"
expect_exit "one thread gives the same verdict" 0 manifest-verify -j 1 "$d"

# --- layout (section 3)
d=$(fresh layout); rm "$d/decision.md"
broken layout layout "$d"
expect_grep "layout names decision.md" "decision.md: layout: missing" out.txt
d=$(fresh trace); rm "$d/performance/raw-device-trace.csv"
broken "device trace" layout "$d"
expect_grep "layout names the trace pattern" "raw-device-trace\.\*: layout" out.txt

# --- folder name and EXP_ID
d=$(fresh folder); mv "$d" "w/folder/OP-MOE-0002"
broken folder-name folder-name "w/folder/OP-MOE-0002"
d=$(fresh expid); sed -i 's/^experiment_id: OP-MOE-0001/experiment_id: OP-MOE-01/' "$d/hypothesis.yaml"
mv "$d" "w/expid/OP-MOE-01"
broken exp-id exp-id "w/expid/OP-MOE-01"
expect_grep "exp-id points at the line" "hypothesis.yaml:[0-9]+:[0-9]+: exp-id: " out.txt
d=$(fresh expid2); sed -i 's/"experiment_id": "OP-MOE-0001"/"experiment_id": "OP-MOE-0007"/' "$d/accuracy/result.json"
broken "exp-id across documents" exp-id "$d"
d=$(fresh family); sed -i 's/^operator_family: grouped_moe_dense/operator_family: flash_attention/' "$d/hypothesis.yaml"
broken family family "$d"
expect_grep "family message names both" "flash_attention.*OP-MOE" out.txt

# --- schemas
d=$(fresh schema); sed -i 's/"warmup_runs": 10/"warmup_runs": 5/' "$d/performance/summary.json"
broken schema schema "$d"
expect_grep "schema finding has file:line:col" "summary.json:[0-9]+:[0-9]+: schema: .*minimum" out.txt

# --- REQUIRED placeholders: errors once past planned, to-dos while planned
d=$(fresh required); sed -i 's/^  driver: 2.4.1/  driver: REQUIRED/' "$d/hypothesis.yaml"
broken required-filled required-filled "$d"
expect_grep "required-filled has the pointer's line" "hypothesis.yaml:[0-9]+:[0-9]+: required-filled: " out.txt
d=$(fresh planned)
sed -i -e 's/^status: decided/status: planned/' -e 's/^  driver: 2.4.1/  driver: REQUIRED/' "$d/hypothesis.yaml"
rm "$d/decision.md" "$d/accuracy/result.json"
expect_exit "planned with REQUIRED passes" 0 manifest-verify "$d"
expect_grep "planned lists REQUIRED as to-do" "todo required-filled: /controlled/driver is still REQUIRED" out.txt
expect_grep "planned lists missing assets as to-do" "decision.md: todo layout" out.txt
expect_grep "planned summary counts to-dos" "0 errors, 3 to-dos" out.txt

# --- one main factor
d=$(fresh factor)
sed -i 's/^  changed_flags:/  changed_flags:\n    opt_level: 2/' "$d/hypothesis.yaml"
broken one-main-factor one-main-factor "$d"
d=$(fresh factorial)
sed -i -e 's/^  changed_flags:/  changed_flags:\n    opt_level: 2/' -e 's/^design: single_factor/design: factorial/' "$d/hypothesis.yaml"
manifest-verify "$d" > out.txt 2>&1
if grep -q "one-main-factor" out.txt; then notok "factorial design exempts one-main-factor"; else ok "factorial design exempts one-main-factor"; fi

# --- controlled values and manifests against the hypothesis
d=$(fresh controlled); sed -i 's/"firmware": "1.9.0-r3"/"firmware": "1.9.0-r4"/' "$d/candidate/manifest.json"
broken controlled-equal controlled-equal "$d"
expect_grep "controlled-equal shows both values" "1.9.0-r4.*1.9.0-r3" out.txt
d=$(fresh agrees)
sed -i "s/^  calbin_sha256: \([0-9a-f]*\)/  calbin_sha256: $(printf '%064d' 7)/" "$d/hypothesis.yaml"
broken manifest-agrees manifest-agrees "$d"
d=$(fresh flags); sed -i 's/"attention_seq_tile": 128/"attention_seq_tile": 256/' "$d/candidate/manifest.json"
broken "undeclared flag change" manifest-agrees "$d"
expect_grep "flag diff names the flag" "attention_seq_tile differs from the baseline" out.txt

# --- artifacts: existence, hashes, escapes
d=$(fresh exists); rm "$d/candidate/qwen3-30b-a3b-prefill.calbin"
broken artifact-exists artifact-exists "$d"
expect_grep "artifact-exists points into the manifest" "candidate/manifest.json:[0-9]+:[0-9]+: artifact-exists: " out.txt
d=$(fresh hash); printf 'x' >> "$d/baseline/qwen3-30b-a3b-prefill.calbin"
broken artifact-hash artifact-hash "$d"
expect_grep "artifact-hash shows the real digest" "SHA-256 of 'baseline/qwen3-30b-a3b-prefill.calbin' is $(sha256sum "$d/baseline/qwen3-30b-a3b-prefill.calbin" | cut -c1-64)" out.txt
d=$(fresh dotdot)
sed -i 's|"path": "baseline/qwen3-30b-a3b-prefill.calbin"|"path": "baseline/../../outside.calbin"|' "$d/baseline/manifest.json"
cp "$EX/baseline/qwen3-30b-a3b-prefill.calbin" w/dotdot/outside.calbin
broken "dot-dot escape" path-escape "$d"
d=$(fresh symlink)
cp "$d/baseline/qwen3-30b-a3b-prefill.calbin" w/symlink/outside.calbin
rm "$d/baseline/qwen3-30b-a3b-prefill.calbin"
ln -s ../../outside.calbin "$d/baseline/qwen3-30b-a3b-prefill.calbin"
broken "symlink escape" path-escape "$d"
d=$(fresh dirlink)
mkdir -p w/dirlink/elsewhere
mv "$d/compile" w/dirlink/elsewhere/compile
ln -s ../elsewhere/compile "$d/compile"
broken "symlinked folder escape" path-escape "$d"
d=$(fresh inlink)
mv "$d/decision.md" "$d/golden/decision-text.md"
ln -s golden/decision-text.md "$d/decision.md"
expect_exit "symlink that stays inside is fine" 0 manifest-verify "$d"

# --- input matrix (section 5)
d=$(fresh context)
sed -i 's/"case_id":"prefill-p40959-o32",\(.*\)"rejection":true,"expected_error":"context_limit_exceeded"/"case_id":"prefill-p40959-o32",\1"rejection":false/' "$d/golden/input-manifest.jsonl"
broken context-limit context-limit "$d"
expect_grep "context-limit gives the total" "40991 tokens" out.txt
d=$(fresh fits)
sed -i 's/"case_id":"prefill-p40959-o1",\(.*\)"rejection":false/"case_id":"prefill-p40959-o1",\1"rejection":true,"expected_error":"context_limit_exceeded"/' "$d/golden/input-manifest.jsonl"
broken "boundary 40960 is not a rejection" context-limit "$d"
d=$(fresh limit); sed -i 's/^  context_limit: 40960/  context_limit: 40000/' "$d/hypothesis.yaml"
broken "hypothesis context limit applies" context-limit "$d"
d=$(fresh overflow)
sed -i '1s/"prompt_tokens":1,/"prompt_tokens":9223372036854775807,/' "$d/golden/input-manifest.jsonl"
broken "token counts near INT64_MAX saturate" context-limit "$d"
d=$(fresh dup); head -n 1 "$d/golden/input-manifest.jsonl" >> "$d/golden/input-manifest.jsonl"
broken input-matrix input-matrix "$d"
expect_grep "duplicate case names its line" "input-manifest.jsonl:20:1: input-matrix: case_id prefill-p1-o1 repeats the one on line 1" out.txt
d=$(fresh cover); sed -i '/"case_id":"prefill-p17-o32"/d' "$d/golden/input-manifest.jsonl"
broken "matrix coverage" input-matrix "$d"
d=$(fresh rejected)
sed -i '1s/"case_id":"prefill-p128-o1"/"case_id":"prefill-p40959-o32"/' "$d/performance/raw-requests.jsonl"
broken rejection-submitted rejection-submitted "$d"
expect_grep "rejection-submitted at line 1" "raw-requests.jsonl:1:[0-9]+: rejection-submitted" out.txt
d=$(fresh unknown); sed -i '2s/"case_id":"prefill-p128-o1"/"case_id":"nowhere"/' "$d/performance/raw-requests.jsonl"
broken unknown-case unknown-case "$d"
d=$(fresh stages); sed -i '3s/"npu_wait":{"start_ns":[0-9]*/"npu_wait":{"start_ns":0/' "$d/performance/raw-requests.jsonl"
broken stage-order stage-order "$d"

# --- the summary rests on the raw requests (section 7: 10 warm-ups, >= 30 measured, unsteady apart)
d=$(fresh runs); sed -i '/"request_id":"baseline-prefill-p128-o1-039"/d' "$d/performance/raw-requests.jsonl"
broken perf-runs perf-runs "$d"
expect_grep "perf-runs counts 29" "29 steady measured runs" out.txt
d=$(fresh unsteady); sed -i '/"request_id":"candidate-prefill-p512-o1-020"/s/"steady":true/"steady":false/' "$d/performance/raw-requests.jsonl"
broken "unsteady sample kept apart" perf-runs "$d"
expect_grep "unsteady counted apart" "n is 30 \\(0 kept apart\\) but raw-requests.jsonl has 29 steady measured candidate runs of case prefill-p512-o1 \\(1 flagged unsteady\\)" out.txt
d=$(fresh warm); sed -i '/"request_id":"candidate-prefill-p128-o1-000"/d' "$d/performance/raw-requests.jsonl"
broken "missing warm-up" perf-runs "$d"

# --- calibration manifest (section 16.1)
d=$(fresh calunique); sed -i '2s/"sample_id":"cal-0001"/"sample_id":"cal-0000"/' "$d/golden/calibration-manifest.jsonl"
broken calibration-unique calibration-unique "$d"
d=$(fresh calhash); printf 'changed\n' >> "$d/golden/calibration/cal-0002.txt"
broken calibration-hash calibration-hash "$d"
d=$(fresh caltok)
sed -i "3s/\"tokenizer_sha256\":\"[0-9a-f]*\"/\"tokenizer_sha256\":\"$(printf '%064d' 5)\"/" "$d/golden/calibration-manifest.jsonl"
broken calibration-tokenizer calibration-tokenizer "$d"
d=$(fresh calpii); sed -i '4s/"pii_review":"passed"/"pii_review":"pending"/' "$d/golden/calibration-manifest.jsonl"
broken calibration-pii calibration-pii "$d"

# --- exit 2: cannot check
expect_exit "missing folder exits 2" 2 manifest-verify w/does-not-exist
expect_grep "missing folder one line" "^manifest-verify: w/does-not-exist: " err.txt
d=$(fresh garbage); printf 'schema: [unclosed\n  - : :\n' > "$d/hypothesis.yaml"
expect_exit "unparseable hypothesis exits 2" 2 manifest-verify "$d"
expect_grep "unparseable hypothesis names the file" "hypothesis.yaml" err.txt
expect_exit "no arguments exits 2" 2 manifest-verify
expect_exit "unknown option exits 2" 2 manifest-verify --bogus "$EX"
expect_exit "--help exits 0" 0 manifest-verify --help
expect_grep "--help shows usage" "^usage: manifest-verify" out.txt
expect_exit "--version exits 0" 0 manifest-verify --version
expect_grep "--version prints the version" "^manifest-verify 0\.1\.0$" out.txt

# --- reports: JSON (valid against its own schema) and JUnit
d=$(fresh report); printf 'x' >> "$d/candidate/qwen3-30b-a3b-prefill.calbin"
expect_exit "json report of a failure exits 1" 1 manifest-verify --json report.json --junit junit.xml "$d"
expect_grep "json verdict fail" '"verdict": "fail"' report.json
expect_grep "json finding rule" '"rule": "artifact-hash"' report.json
expect_exit "report is a valid calculet-verify-report/v1" 0 \
    manifest-verify --schema calculet-verify-report/v1 report.json
expect_grep "junit has the failing rule" '<testcase[^>]*name="artifact-hash"' junit.xml
expect_grep "junit has a failure" '<failure' junit.xml
if command -v python3 > /dev/null 2>&1; then
    n=$(python3 -c 'import sys, xml.dom.minidom as m; print(len(m.parse(sys.argv[1]).getElementsByTagName("testcase")))' junit.xml 2>&1)
    # one case per experiment rule, counted from docs/manifest-verify.md's rules table
    rules=$(awk '/^## Rules of the experiment mode/,/^### EXP_ID families/' "$GOLDEN_ROOT/docs/manifest-verify.md" | grep -c '^| `[a-z-]*` | ')
    [ "$n" = "$rules" ] && ok "junit parses, one case per documented rule ($n)" || notok "junit parses, one case per documented rule" "$n cases, $rules rules"
else
    ok "junit parses # skip: no python3"
fi
expect_exit "existing --json refused" 2 manifest-verify --json report.json "$EX"
expect_exit "--force replaces" 0 manifest-verify --force --json report.json "$EX"
expect_grep "json verdict pass" '"verdict": "pass"' report.json
expect_exit "--json - writes stdout only" 0 manifest-verify --json - "$EX"
expect_grep "stdout is the JSON report" '"schema": "calculet-verify-report/v1"' out.txt
