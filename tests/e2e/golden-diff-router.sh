# golden-diff's router tier (issue 14): MoE router top-k ids exact per row with ties among
# equal reference logits excused, weights under the layer tier plus candidate-alone checks.
# Tensors are hand-made; every expected row, id list and sum below is worked out by hand.
. "$GOLDEN_ROOT/tests/e2e/lib.sh"

if [ -z "$PYTHON" ]; then
    echo "ok router # skip numpy+h5py not importable"
    exit 0
fi
flat() { tr -d ' \n' < "$1" > "$1.flat"; }
expect_json() { flat "$3"; expect_grep "$1" "$2" "$3.flat"; }

"$PYTHON" - <<'EOF' || echo "not ok router-generate"
import subprocess
import numpy as np
D = "cases/c0/layers/0/router/"
# reference router logits, 4 positions x 4 experts, and its top-2 by hand:
#   row 0 [1 2 3 4] -> [3, 2]; row 1 [5 5 1 0] -> [0, 1] (0 and 1 tied at 5);
#   row 2 [0 1 2 2] -> [2, 3] (tied at 2); row 3 [0 9 1 8] -> [1, 3] (9 > 8: no tie)
L = np.array([[1, 2, 3, 4], [5, 5, 1, 0], [0, 1, 2, 2], [0, 9, 1, 8]], np.float32)
IDS = np.array([[3, 2], [0, 1], [2, 3], [1, 3]], np.int32)
W = np.array([[0.75, 0.25], [0.5, 0.5], [0.5, 0.5], [0.625, 0.375]], np.float32)
n = [0]
def spec(name, a):
    a = np.asarray(a); n[0] += 1; p = f"raw{n[0]}.bin"
    open(p, "wb").write(a.astype("<f4" if a.dtype.kind == "f" else "<i4").tobytes())
    dt = "f32" if a.dtype.kind == "f" else "i32"
    return f"{D}{name}:{dt}:{'x'.join(map(str, a.shape))}:file={p}"
def golden(out, ids, w, logits=True):
    s = [spec("topk_ids", ids), spec("topk_weights", w)] + ([spec("logits", L)] if logits else [])
    subprocess.run(["make-golden", "--force", out] + s, check=True)
golden("ref.h5", IDS, W)
golden("same.h5", IDS, W)
t = IDS.copy(); t[1] = [1, 0]; golden("tie.h5", t, W)          # swap among tied 0, 1
t = IDS.copy(); t[2] = [3, 2]; t[1] = [1, 0]; golden("tie2.h5", t, W)
t = IDS.copy(); t[3] = [3, 1]; golden("untied.h5", t, W)       # 9 vs 8: not a tie
t = IDS.copy(); t[0] = [3, 3]; golden("dup.h5", t, W)          # expert 3 twice
t = IDS.copy(); t[0] = [3, 4]; golden("range.h5", t, W)        # 4 experts: id 4 is out
w = W.copy(); w[2] = [0.5, 0.625]; golden("unnorm.h5", IDS, w) # row 2 sums to 1.125
w = W.copy(); w[1, 0] = np.nan; golden("nan.h5", IDS, w)
# a reference whose rows are not normalised, and an identical candidate
w = W.copy(); w[3] = [0.5, 0.25]; golden("ref-raw.h5", IDS, w); golden("cand-raw.h5", IDS, w)
# the tied swap of row 1 again, in files without router/logits
golden("ref-nolog.h5", IDS, W, logits=False)
golden("tie-nolog.h5", np.array([[3, 2], [1, 0], [2, 3], [1, 3]], np.int32), W, logits=False)
EOF

expect_exit "identical router taps pass" 0 golden-diff --json same.json ref.h5 same.h5
expect_json "topk_ids judged by the router tier by default" \
    '"name":"cases/c0/layers/0/router/topk_ids","tier":"router"' same.json
expect_json "topk_weights judged by the router tier by default" \
    '"name":"cases/c0/layers/0/router/topk_weights","tier":"router"' same.json
expect_json "identical: 4 rows, 4 exact, no tie, no divergence" \
    '"router_rows":4,"router_rows_exact":4,"router_tie_rows":0,"router_duplicates":0,"router_first_divergence":-1' same.json
expect_json "experts read from the reference's router/logits" '"router_experts":4' same.json

expect_exit "a swap among tied reference logits passes" 0 golden-diff --json tie.json ref.h5 tie.h5
expect_json "tie: one tie row, three exact" '"router_rows_exact":3,"router_tie_rows":1' tie.json
expect_grep "tie: a note names the row and both lists" \
    'differ only among experts whose reference logits are equal.*row 1: reference \[0, 1\], candidate \[1, 0\]' tie.json
expect_exit "two tied swaps pass" 0 golden-diff --json tie2.json ref.h5 tie2.h5
expect_json "two tie rows" '"router_rows_exact":2,"router_tie_rows":2' tie2.json

expect_exit "a swap among untied experts fails" 1 golden-diff --json untied.json ref.h5 untied.h5
expect_grep "untied: the reason names row 3 and both lists" \
    '1 of 4 router rows select other experts or another order; first at row 3: reference \[1, 3\], candidate \[3, 1\]' untied.json
expect_json "untied: first divergence is row 3" '"router_first_divergence":3' untied.json

expect_exit "a duplicate expert fails" 1 golden-diff --json dup.json ref.h5 dup.h5
expect_grep "duplicate: named with its row" 'select an expert twice; first at row 0: \[3, 3\]' dup.json
expect_json "duplicate counted" '"router_duplicates":1' dup.json
expect_exit "an expert id out of range fails" 1 golden-diff --json range.json ref.h5 range.h5
expect_grep "out of range: named" 'outside \[0, 4\); first at row 0: 4' range.json

expect_exit "unnormalised weights fail" 1 golden-diff --json unnorm.json ref.h5 unnorm.h5
expect_grep "unnormalised: row 2 sums to 1.125" \
    '1 of 4 candidate router weight rows do not sum to 1 within [0-9.e-]+; first at row 2, which sums to 1.125' unnorm.json
expect_exit "a NaN weight fails" 1 golden-diff --json nan.json ref.h5 nan.h5
expect_grep "NaN weight: named with its row" '1 candidate router weights are NaN or Inf; first at row 1' nan.json

# the normalisation check is on the candidate alone: identical but unnormalised rows fail by
# default (norm_topk_prob true), and pass when the policy says the rows are not normalised
expect_exit "identical unnormalised rows fail (norm_topk_prob default true)" 1 \
    golden-diff --json raw.json ref-raw.h5 cand-raw.h5
expect_grep "row 3 sums to 0.75" 'first at row 3, which sums to 0.75' raw.json
printf 'schema: calculet-diff-policy/v1\nnorm_topk_prob: false\n' > nonorm.yaml
expect_exit "norm_topk_prob: false with an unnormalised reference passes" 0 \
    golden-diff -p nonorm.yaml ref-raw.h5 cand-raw.h5
expect_exit "norm_topk_prob: false still checks a normalised reference's rows" 1 \
    golden-diff -p nonorm.yaml ref.h5 unnorm.h5

# without the reference's router/logits no tie can be recognised
expect_exit "a swap without reference logits fails" 1 golden-diff --json nolog.json ref-nolog.h5 tie-nolog.h5
expect_grep "no logits: said so" 'no reference router/logits, so no tie is recognised' nolog.json

# the tier is a default pattern: a policy rule with tier: overrides it
printf 'schema: calculet-diff-policy/v1\nrules:\n  - match: "*/topk_ids"\n    tier: tokens\n' > tok.yaml
expect_exit "tier: tokens overrides the router tier (the tied swap then fails)" 1 \
    golden-diff -p tok.yaml --json tok.json ref.h5 tie.h5
expect_json "overridden tier is tokens" '"name":"cases/c0/layers/0/router/topk_ids","tier":"tokens"' tok.json
expect_exit "report is valid calculet-diff-report/v1" 0 schema-check tie.json calculet-diff-report-v1.schema.json

# real goldens of the tiny model: f32 against bf16, router taps judged by the router tier
printf '[5,17,300,2,99,411]' > in1.json
h=$(sha256sum in1.json | cut -d' ' -f1)
printf '{"case_id":"p1","phase":"prefill","prompt_tokens":6,"past_tokens":0,"output_tokens":3,"dataset":"fixed_prompt","rejection":false,"input":{"path":"in1.json","sha256":"%s"}}\n' "$h" > m.jsonl
if npu-replay make-model --preset tiny --seed 1 -o tiny > /dev/null 2>&1 &&
   npu-replay run --model tiny --manifest m.jsonl --side baseline --golden f32.h5 --raw f32.jsonl \
       --warmup 0 --runs 1 > /dev/null 2>&1 &&
   npu-replay run --model tiny --manifest m.jsonl --side candidate --backend-opt dtype=bf16 \
       --golden bf16.h5 --raw bf16.jsonl --warmup 0 --runs 1 > /dev/null 2>&1; then
    ok "tiny model: f32 and bf16 goldens"
else
    notok "tiny model: f32 and bf16 goldens"
fi
golden-diff --json real.json f32.h5 bf16.h5 > /dev/null 2>&1
"$PYTHON" - <<'EOF'
import json
r = json.load(open("real.json"))
ts = [t for t in r["tensors"] if t["name"].endswith(("/router/topk_ids", "/router/topk_weights"))]
bad = [t["name"] for t in ts if t["tier"] != "router" or "router_rows" not in t]
ids = [t for t in ts if t["name"].endswith("topk_ids")]
print(("ok" if ts and ids and not bad else "not ok") +
      " tiny model: %d router taps, all judged by the router tier (%s)" % (len(ts), bad[:2]))
good = all(t["router_rows_exact"] + t["router_tie_rows"] <= t["router_rows"] for t in ids)
print(("ok" if good else "not ok") + " tiny model: router row counts consistent")
EOF
# a bf16 device normalises in bf16: its rows sum to 1 only within bf16 rounding; declaring
# compute_dtype bf16 for the weights widens the sum tolerance to 1e-5 + 2^-8 (no more)
printf 'schema: calculet-diff-policy/v1\nrules:\n  - match: "*/router/topk_weights"\n    compute_dtype: bf16\n' > cd.yaml
golden-diff -p cd.yaml --json real-cd.json f32.h5 bf16.h5 > /dev/null 2>&1
"$PYTHON" - <<'EOF'
import json, h5py, numpy as np
r = json.load(open("real-cd.json"))
f = h5py.File("bf16.h5", "r")
res = []
for t in r["tensors"]:
    if not t["name"].endswith("/router/topk_weights"):
        continue
    s = np.asarray(f[t["name"]], np.float64).sum(-1)
    res.append((np.abs(s - 1) <= 1e-5 + 2.0 ** -8).all() == ("do not sum" not in " ".join(t["reasons"])))
print(("ok" if res and all(res) else "not ok") +
      " tiny model bf16: compute_dtype bf16 sum verdicts agree with numpy (%d taps)" % len(res))
EOF
