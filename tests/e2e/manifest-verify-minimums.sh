#!/bin/sh
# Rule input-minimums (handbook section 5.2): an input manifest whose counts are set by
# construction (gen.py below writes one token file per case, distinct ids per case unless told
# to repeat one), on a copy of the example experiment without its waiver. The expected counts
# are the constructed ones, never the tool's output.
. "$GOLDEN_ROOT/tests/e2e/lib.sh"
if [ -z "$PYTHON" ]; then ok "input-minimums # skip: no python3 with numpy"; exit 0; fi
EX="$GOLDEN_ROOT/examples/experiment/OP-MOE-0001"

cat > gen.py <<'EOF'
# gen.py DIR KEY=N ...: append constructed cases to DIR/golden/input-manifest.jsonl.
# Keys: fixed random_p16 repeated_p16 random_d16 repeated_d16 multilingual code numeric
# near_tie (distinct prompts), dup_fixed (extra fixed cases repeating prompt 0's tokens),
# poetry (cases naming no section 5.2 set), code_dup_multi (code cases repeating multilingual
# prompt 0's tokens).
import hashlib, json, os, sys
d = sys.argv[1]
want = dict(fixed=100, random_p16=20, repeated_p16=10, random_d16=20, repeated_d16=10,
            multilingual=50, code=50, numeric=50, near_tie=1000, dup_fixed=0, poetry=0, code_dup_multi=0)
for a in sys.argv[2:]:
    k, v = a.split("=")
    assert k in want, k
    want[k] = int(v)
sets = dict(fixed="fixed_prompt", random_p16="random_tokens", repeated_p16="repeated_tokens",
            random_d16="random_tokens", repeated_d16="repeated_tokens", multilingual="multilingual",
            code="code", numeric="numeric", near_tie="near_tie_logits", dup_fixed="fixed_prompt",
            poetry="poetry", code_dup_multi="code")
os.makedirs(os.path.join(d, "golden/inputs"), exist_ok=True)
lines = []
for ci, (key, n) in enumerate(want.items()):
    decode = key.endswith("_d16")
    for i in range(n):
        ids = [ci, i // 256, i % 256, 7] if key != "dup_fixed" else [0, 0, 0, 7]
        if key == "code_dup_multi":
            ids = [list(want).index("multilingual"), 0, 0, 7]  # multilingual-0000's ids
        if key.endswith("16"):
            ids = ids + [3] * 12  # 16 ids: the prompt (prefill) or the past (decode)
        rel = "inputs/%s-%04d.json" % (key, i)
        data = (json.dumps(ids) + "\n").encode()
        open(os.path.join(d, "golden", rel), "wb").write(data)
        lines.append({"case_id": "%s-%04d" % (key, i), "phase": "decode" if decode else "prefill",
                      "prompt_tokens": 0 if decode else len(ids), "past_tokens": 16 if decode else 0,
                      "output_tokens": 2 if decode else 1, "concurrency": 1, "dataset": sets[key],
                      "seed": 1, "rejection": False,
                      "input": {"path": rel, "sha256": hashlib.sha256(data).hexdigest()}})
with open(os.path.join(d, "golden/input-manifest.jsonl"), "a") as f:
    for l in lines:
        f.write(json.dumps(l) + "\n")
EOF

cat > golden.py <<'EOF'
# golden.py OUTDIR SPEC...: router taps as .npy files named like npu-replay run's goldens
# (cases/<id>/layers/<L>/router/{logits,topk_ids}); SPEC = CASE:LAYER:EXPERTS:ID,ID,...
import numpy as np, os, sys
for spec in sys.argv[2:]:
    case, layer, experts, ids = spec.split(":")
    p = os.path.join(sys.argv[1], "cases", case, "layers", layer, "router")
    os.makedirs(p, exist_ok=True)
    ids = [int(x) for x in ids.split(",")]
    np.save(os.path.join(p, "topk_ids.npy"), np.array(ids, dtype=np.int32).reshape(-1, 1))
    np.save(os.path.join(p, "logits.npy"), np.zeros((len(ids), int(experts)), dtype=np.float32))
EOF

# every expert of layers 0 and 1 (4 experts each) hit by manifest cases
ALL="fixed-0000:0:4:0,1,2 fixed-0001:0:4:3 code-0000:1:4:0,1 numeric-0003:1:4:2,3"

# fresh NAME [GEN ARGS]: the example without its waiver, matrix cut to length 16 (its
# random_tokens cases relabelled, so the constructed ones are all the per-length samples)
fresh() {
    _n=$1; shift
    rm -rf "w/$_n"; mkdir -p "w/$_n"
    cp -R "$EX" "w/$_n/OP-MOE-0001"
    _d="w/$_n/OP-MOE-0001"
    rm -f "$_d/SHA256SUMS"
    sed -i -e '/^# Section 5.2/,$d' -e 's/^  prompt_tokens: .*/  prompt_tokens: [16]/' \
        -e 's/^  past_tokens: .*/  past_tokens: [16]/' "$_d/hypothesis.yaml"
    sed -i 's/"random_tokens"/"moe_expert_coverage"/' "$_d/golden/input-manifest.jsonl"
    "$PYTHON" gen.py "$_d" "$@"
    D=$_d
}
# with_golden SPEC...: router taps of D's cases in D/golden/run.h5
with_golden() {
    rm -rf taps; "$PYTHON" golden.py taps "$@"
    golden-dump -o "$D/golden/run.h5" --force taps > /dev/null
}

# --- every minimum met, coverage proven: passes with no input-minimums finding
fresh full; with_golden $ALL
expect_exit "every minimum met passes" 0 manifest-verify "$D"
if grep -q ": input-minimums: " out.txt; then notok "no input-minimums error" "$(grep input-minimums out.txt | head -3)"
else ok "no input-minimums error"; fi
# the example's 19 cases minus its 2 rejection cases carry no token file
expect_grep "the example's cases without token files are a to-do" \
    "todo input-minimums: 17 runnable cases carry no token file in the folder \(input\): counted nowhere$" out.txt

# --- one short in each class: a finding naming the class, the count and the minimum
short() { # NAME GENARG PATTERN
    fresh "$1" "$2"; with_golden $ALL
    expect_exit "$1 one short fails" 1 manifest-verify "$D"
    expect_grep "$1 named with count and minimum" "input-minimums: $3" out.txt
    _k=$(grep -c ": input-minimums: " out.txt)
    [ "$_k" -eq 1 ] && ok "$1: exactly one finding" || notok "$1: exactly one finding" "$_k"
}
short fixed fixed=99 "fixed_prompt: 99 distinct prompts \(by token hash\), minimum 100 \(section 5.2\)"
short random-p random_p16=19 "random_tokens at prefill length 16: 19 distinct prompts \(by token hash\), minimum 20"
short repeated-p repeated_p16=9 "repeated_tokens at prefill length 16: 9 distinct prompts \(by token hash\), minimum 10"
short random-d random_d16=19 "random_tokens at decode past length 16: 19 distinct prompts \(by token hash\), minimum 20"
short repeated-d repeated_d16=9 "repeated_tokens at decode past length 16: 9 distinct prompts \(by token hash\), minimum 10"
short multilingual multilingual=49 "multilingual: 49 distinct prompts \(by token hash\), minimum 50"
short code code=49 "code: 49 distinct prompts \(by token hash\), minimum 50"
short numeric numeric=49 "numeric: 49 distinct prompts \(by token hash\), minimum 50"
short near-tie near_tie=999 "near_tie_logits: 999 distinct prompts \(by token hash\), minimum 1000"

# --- counted by token hash, not by case: 99 distinct fixed prompts plus 5 copies are 99
fresh dup fixed=99 dup_fixed=5; with_golden $ALL
expect_exit "repeated prompts do not count twice" 1 manifest-verify "$D"
expect_grep "the count is the distinct prompts" "input-minimums: fixed_prompt: 99 distinct prompts" out.txt
fresh dup-ok fixed=100 dup_fixed=5; with_golden $ALL
expect_exit "copies beside 100 distinct prompts pass" 0 manifest-verify "$D"

# --- a length of the hypothesis's matrix with no random prompts at all
fresh len-missing; with_golden $ALL
sed -i 's/^  prompt_tokens: .*/  prompt_tokens: [16, 17]/' "$D/hypothesis.yaml"
expect_exit "a hypothesis length without random prompts fails" 1 manifest-verify "$D"
expect_grep "named with 0" "input-minimums: random_tokens at prefill length 17: 0 distinct prompts \(by token hash\), minimum 20" out.txt
expect_grep "repeated too" "input-minimums: repeated_tokens at prefill length 17: 0 distinct prompts" out.txt

# --- a case in no section 5.2 set is counted nowhere and reported
fresh poetry poetry=1; with_golden $ALL
expect_exit "a case in no known set fails" 1 manifest-verify "$D"
expect_grep "reported by input-minimums" "input-minimums: case poetry-0000 is in no section 5.2 set: counted nowhere" out.txt

# --- the hypothesis raises a minimum
fresh raised; with_golden $ALL
printf 'input_minimums:\n  code: 51\n' >> "$D/hypothesis.yaml"
expect_exit "a raised minimum not met fails" 1 manifest-verify "$D"
expect_grep "raised minimum named" "input-minimums: code: 50 distinct prompts \(by token hash\), minimum 51 \(raised by the hypothesis's input_minimums\)" out.txt

# --- lowering without a waiver is refused: the handbook's minimum holds
fresh lowered numeric=40; with_golden $ALL
printf 'input_minimums:\n  numeric: 10\n' >> "$D/hypothesis.yaml"
expect_exit "lowering without a waiver fails" 1 manifest-verify "$D"
expect_grep "the lowering is a finding at the hypothesis" \
    "hypothesis.yaml:[0-9]+:[0-9]+: input-minimums: input_minimums.numeric 10 lowers section 5.2's minimum 50 without an input_minimums_waiver" out.txt
expect_grep "and the handbook's minimum is applied" "input-minimums: numeric: 40 distinct prompts \(by token hash\), minimum 50 \(section 5.2\)" out.txt
# a waiver without an approver is no waiver
printf 'input_minimums_waiver:\n  reason: short on numbers\n' >> "$D/hypothesis.yaml"
expect_exit "a waiver without approver lowers nothing" 1 manifest-verify "$D"
expect_grep "still refused" "input_minimums.numeric 10 lowers section 5.2's minimum 50 without" out.txt

# --- one prompt in two sets is one sample: counted for the first case's set (multilingual,
#     earlier in the manifest), so code has 49 distinct prompts
fresh xset code=49 code_dup_multi=1; with_golden $ALL
expect_exit "a prompt in two sets fails the second" 1 manifest-verify "$D"
expect_grep "the finding names both cases" \
    "input-minimums: case code_dup_multi-0000 \(code\) has the token ids of case multilingual-0000 \(multilingual\): one prompt is one sample, counted once, for multilingual" out.txt
expect_grep "code counts 49" "input-minimums: code: 49 distinct prompts \(by token hash\), minimum 50" out.txt
if grep -q "input-minimums: multilingual:" out.txt; then notok "multilingual keeps its 50" "$(grep 'input-minimums: multilingual' out.txt)"
else ok "multilingual keeps its 50"; fi

# --- the example's waiver lowers the sets of its token-less cases: a note naming the approver
expect_exit "the example passes" 0 manifest-verify --json ex.json "$EX"
expect_exit "its token-less cases are a note of the waiver" 0 "$PYTHON" -c '
import json, sys
m = "17 runnable cases carry no token file in the folder (input): counted nowhere; their sets\x27 minimums waived by libgolden maintainers (example only)"
f = [x for x in json.load(open("ex.json"))["findings"] if x["message"] == m]
sys.exit(0 if len(f) == 1 and f[0]["severity"] == "note" and f[0]["rule"] == "input-minimums" else 1)'
expect_exit "and no to-do" 0 "$PYTHON" -c '
import json, sys
sys.exit(1 if any(x["severity"] == "todo" for x in json.load(open("ex.json"))["findings"]) else 0)'

# --- with a recorded waiver: passes, and the report shows the waiver
fresh waived numeric=40; with_golden $ALL
printf 'input_minimums:\n  numeric: 10\ninput_minimums_waiver:\n  reason: numeric corpus still in review\n  approver: Q. Approver\n' >> "$D/hypothesis.yaml"
expect_exit "lowering with a waiver passes" 0 manifest-verify --json waived.json "$D"
expect_grep "the waiver is shown" \
    "hypothesis.yaml:[0-9]+:[0-9]+: note input-minimums: input_minimums.numeric lowered from section 5.2's 50 to 10 by the waiver of Q. Approver: numeric corpus still in review" out.txt
expect_grep "the shortfall it covers is shown" "note input-minimums: numeric: 40 distinct prompts, under section 5.2's 50: waived by Q. Approver" out.txt
# the waiver lowers numeric only: the example's 17 token-less cases (other sets) stay a to-do
expect_grep "the waiver does not cover other sets' token-less cases" \
    "todo input-minimums: 17 runnable cases carry no token file in the folder \(input\): counted nowhere$" out.txt
expect_grep "the summary counts notes apart" "^PASS: .* 0 errors, 1 to-dos?, [0-9]+ notes" out.txt
expect_grep "the JSON report carries them as notes" '"severity": "note"' waived.json
expect_exit "the report is a valid calculet-verify-report/v1" 0 manifest-verify --schema calculet-verify-report/v1 waived.json
# under the lowered minimum: still a finding
fresh waived-short numeric=9; with_golden $ALL
printf 'input_minimums:\n  numeric: 10\ninput_minimums_waiver:\n  reason: numeric corpus still in review\n  approver: Q. Approver\n' >> "$D/hypothesis.yaml"
expect_exit "short of the waived minimum fails" 1 manifest-verify "$D"
expect_grep "against the waived minimum" "input-minimums: numeric: 9 distinct prompts \(by token hash\), minimum 10 \(lowered by the waiver\)" out.txt

# --- expert coverage from the goldens' router taps
fresh nogolden
expect_exit "no golden: coverage not proven fails" 1 manifest-verify "$D"
expect_grep "says not proven" "input-minimums: moe_expert_coverage: expert coverage not proven: the folder has no golden" out.txt
fresh miss; with_golden fixed-0000:0:4:0,1,2,3 code-0000:1:4:0,1,2 not-a-case:1:4:3
expect_exit "an expert never hit fails" 1 manifest-verify "$D"
expect_grep "layer, count and the expert named" \
    "input-minimums: moe_expert_coverage: layer 1: 3 of 4 experts hit by the manifest's cases in the goldens' router taps \(expert 3 never routed to\)" out.txt
fresh notaps; with_golden
mkdir -p t2/cases/fixed-0000/layers/0/attn; "$PYTHON" -c 'import numpy as np; np.save("t2/cases/fixed-0000/layers/0/attn/out.npy", np.zeros((2,2),dtype=np.float32))'
golden-dump -o "$D/golden/run.h5" --force t2 > /dev/null
expect_exit "a golden without router taps fails" 1 manifest-verify "$D"
expect_grep "not proven without taps" "moe_expert_coverage: expert coverage not proven: no golden under golden/ has router taps" out.txt
# a waiver may drop coverage; then it is a note
printf 'input_minimums:\n  expert_coverage: false\ninput_minimums_waiver:\n  reason: no taps on this device\n  approver: Q. Approver\n' >> "$D/hypothesis.yaml"
expect_exit "coverage waived passes" 0 manifest-verify "$D"
expect_grep "waived coverage shown" "note input-minimums: moe_expert_coverage: expert coverage not proven: no golden under golden/ has router taps .*; waived by Q. Approver" out.txt
expect_grep "the dropped minimum shown" "note input-minimums: input_minimums.expert_coverage dropped by the waiver of Q. Approver" out.txt

# --- the shipped example carries a waiver that manifest-verify shows
expect_exit "the example passes with its waiver" 0 manifest-verify "$EX"
expect_grep "the example's waiver is shown" "note input-minimums: input_minimums.fixed_prompt lowered from section 5.2's 100 to 0 by the waiver of libgolden maintainers" out.txt
