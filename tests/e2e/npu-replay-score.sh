#!/bin/sh
# npu-replay score (handbook section 6, task-level metric): teacher-forced NLL and perplexity
# per case and per dataset, held against second computations: the test plug-in's counting
# model worked out in Python (the version 1 path, one position at a time), and for the cpu
# backend (version 2, kept prefill logits, a case longer than one keep of 256) numpy's
# log-softmax of the logits `run` wrote into goldens for every prefix of every case, in f32 and
# in bf16. Then exp-gate decide on accuracy/result.json's perplexity: recomputed from the score
# files, a bound exceeded rejects naming the dataset, a stated number they contradict rejects.
. "$GOLDEN_ROOT/tests/e2e/lib.sh"
PLUGIN="$GOLDEN_BUILD/tests/lib/test-backend.so"
EX="$GOLDEN_ROOT/examples/experiment/OP-MOE-0001"
if [ -z "$PYTHON" ]; then notok "numpy and h5py needed (python3-numpy, python3-h5py)"; exit 0; fi

# mk NAME LONG: a manifest (NAME.jsonl) of fixed cases; LONG=1 adds a 300-token case; and its
# prefix manifest (NAME-pfx.jsonl): one 1-output prefill case per scored position of each case.
mk() {
    $PYTHON - "$1" "$2" <<'PY'
import json, hashlib, os, sys
name, long_ = sys.argv[1], sys.argv[2] == "1"
os.makedirs(name + "-in", exist_ok=True)
cases = [("fix-a", "fixed_prompt", "prefill", 0, [(5 * i + 3) % 64 for i in range(12)]),
         ("fix-b", "fixed_prompt", "prefill", 0, [(11 * i * i + 1) % 64 for i in range(7)]),
         ("code-a", "code", "decode", 6, [(13 * i + 7) % 64 for i in range(9)]),
         ("num-short", "numeric", "prefill", 0, [9])]
if long_:
    cases.append(("code-long", "code", "prefill", 0, [(17 * i * i + 5 * i + 2) % 61 for i in range(300)]))
def line(cid, ds, phase, past, ids, out):
    p = "%s-in/%s.json" % (name, cid)
    open(p, "w").write(json.dumps(ids))
    return {"schema": "calculet-input-manifest/v1", "case_id": cid, "phase": phase,
            "prompt_tokens": len(ids) - past, "past_tokens": past, "output_tokens": out,
            "dataset": ds, "rejection": False,
            "input": {"path": p, "sha256": hashlib.sha256(open(p, "rb").read()).hexdigest()}}
with open(name + ".jsonl", "w") as f, open(name + "-pfx.jsonl", "w") as g:
    for cid, ds, phase, past, ids in cases:
        f.write(json.dumps(line(cid, ds, phase, past, ids, 2)) + "\n")
        for p in range(len(ids) - 1):
            g.write(json.dumps(line("%s-%d" % (cid, p), ds, "prefill", 0, ids[:p + 1], 1)) + "\n")
    f.write(json.dumps({"schema": "calculet-input-manifest/v1", "case_id": "num-rej",
                        "phase": "prefill", "prompt_tokens": 4000, "output_tokens": 1,
                        "dataset": "numeric", "rejection": True,
                        "expected_error": "context_limit_exceeded"}) + "\n")
PY
}
mk small 0
mk big 1
SC="npu-replay score -j1"

# ---- the version 1 plug-in: the counting model's logits -(v - want)^2 / 8 worked out in Python
expect_exit "plug-in score: exit 0" 0 $SC --backend "$PLUGIN" --manifest small.jsonl --side baseline -o p.json
cp out.txt p-table.txt
expect_exit "plug-in score against its schema" 0 manifest-verify --schema calculet-score/v1 p.json
check_plugin() {
$PYTHON - "$1" <<'PY'
import json, math, sys
d = json.load(open(sys.argv[1])); bad = []
man = [json.loads(l) for l in open("small.jsonl")]
want_ds = {}
for m in man:
    if m["rejection"]: continue
    ids = json.load(open(m["input"]["path"]))
    if len(ids) < 2: continue
    s = 0.0
    for p in range(len(ids) - 1):
        w = (7 * ids[p] + p + 3) % 64
        row = [-(v - w) ** 2 / 8.0 for v in range(64)]
        mx = max(row); lse = mx + math.log(sum(math.exp(x - mx) for x in row))
        s += lse - row[ids[p + 1]]
    c = [c for c in d["cases"] if c["case_id"] == m["case_id"]][0]
    if abs(c["nll_sum"] - s) > 1e-9 * s: bad.append("%s %r %r" % (m["case_id"], c["nll_sum"], s))
    a = want_ds.setdefault(m["dataset"], [0.0, 0]); a[0] += s; a[1] += len(ids) - 1
for ds in d["datasets"]:
    s, n = want_ds.pop(ds["dataset"])
    if abs(ds["perplexity"] - math.exp(s / n)) > 1e-9 * ds["perplexity"] or ds["scored_tokens"] != n:
        bad.append("dataset %s" % ds["dataset"])
if want_ds: bad.append("datasets missing: %s" % list(want_ds))
if d["skipped"] != {"rejection": 1, "too_short": 1}: bad.append("skipped %r" % d["skipped"])
if any(x["dataset"] == "numeric" for x in d["datasets"]): bad.append("numeric has no scored case")
print("; ".join(bad)); sys.exit(1 if bad else 0)
PY
}
if check_plugin p.json > chk.txt; then ok "plug-in NLL per case and dataset = Python's"; else notok "plug-in NLL per case and dataset = Python's" "$(cat chk.txt)"; fi
expect_grep "table: one line a dataset, never a mixed average" '^fixed_prompt +2 +17 ' p-table.txt
if [ "$(wc -l < p-table.txt)" -eq 3 ]; then ok "no mixed line"; else notok "no mixed line" "$(cat p-table.txt)"; fi

# non-finite logits are a finding, never a number: the 3rd logits call of the plug-in is NaN
expect_exit "NaN logits: exit 1" 1 $SC --backend "$PLUGIN" --backend-opt hostile=nan@logits:3 --manifest small.jsonl --side candidate -o n.json
expect_grep "finding: the table says no number" '^fixed_prompt .*NO NUMBER' out.txt
expect_exit "NaN score against its schema" 0 manifest-verify --schema calculet-score/v1 n.json
expect_grep "the case names the position and the entry" '"finding": "position 2 \(predicting token 3\): logit 0 is NaN"' n.json
if $PYTHON -c '
import json,sys; d = json.load(open("n.json"))
f = [x for x in d["datasets"] if x["dataset"] == "fixed_prompt"][0]
c = [x for x in d["datasets"] if x["dataset"] == "code"][0]
sys.exit(0 if d["findings"] == 1 and f["findings"] == 1 and "perplexity" not in f and "nll_sum" not in f and c["perplexity"] > 1 else 1)'
then ok "finding: its dataset carries no number, the others do"; else notok "finding: its dataset carries no number" "$(head -c 600 n.json)"; fi

# could not score: no output left
expect_exit "nothing selected: exit 2" 2 $SC --backend "$PLUGIN" --manifest small.jsonl --side baseline --cases 'zzz*' -o z.json
expect_absent "nothing selected: no output" z.json
expect_grep "nothing selected: says so" 'no case to score' err.txt
expect_exit "bad side: exit 2" 2 $SC --backend "$PLUGIN" --manifest small.jsonl --side both -o z.json
expect_exit "existing output without --force: exit 2" 2 $SC --backend "$PLUGIN" --manifest small.jsonl --side baseline -o p.json
# a token outside the vocabulary (the plug-in's is 64): could not score, naming the token file, the position and the id (the one check of run, score and soak)
sed 's/"fix-b"/"fix-b"/' small.jsonl > oov.jsonl
$PYTHON - <<'PY'
import json, hashlib
ls = [json.loads(l) for l in open("oov.jsonl")]
for l in ls:
    if l["case_id"] == "fix-a":
        p = l["input"]["path"] = "small-in/fix-a-oov.json"
        ids = json.load(open("small-in/fix-a.json")); ids[4] = 64
        open(p, "w").write(json.dumps(ids)); l["input"]["sha256"] = hashlib.sha256(open(p, "rb").read()).hexdigest()
open("oov.jsonl", "w").write("".join(json.dumps(l) + "\n" for l in ls))
PY
expect_exit "token outside the vocabulary: exit 2" 2 $SC --backend "$PLUGIN" --manifest oov.jsonl --side baseline -o oov.json
expect_grep "token outside the vocabulary: names file, position and id" "^npu-replay: .*/small-in/fix-a-oov.json#/4: token id 64 is outside the backend's vocabulary of 64$" err.txt
expect_absent "token outside the vocabulary: no output" oov.json

# ---- the cpu backend (version 2, chunks of 256 kept positions) in f32 and bf16 against numpy
# over the goldens `run` writes for every prefix (the logits of its last position)
expect_exit "make-model tiny" 0 npu-replay make-model --preset tiny --seed 3 -o m
for t in f32 bf16; do
    expect_exit "cpu score $t: exit 0" 0 $SC --model m --backend-opt dtype=$t --manifest big.jsonl --side $([ $t = f32 ] && echo baseline || echo candidate) -o s-$t.json
    expect_exit "cpu score $t against its schema" 0 manifest-verify --schema calculet-score/v1 s-$t.json
    expect_exit "prefix run $t" 0 npu-replay run -j1 --model m --backend-opt dtype=$t --manifest big-pfx.jsonl --side baseline --golden g-$t.h5 --raw r-$t.jsonl --warmup 0 --runs 1 --taps none
done
expect_exit "bf16 against the f32 score: exit 0" 0 $SC --model m --backend-opt dtype=bf16 --manifest big.jsonl --side candidate --baseline s-f32.json -o s-bf16-again.json
cp out.txt table.txt
$PYTHON - > np.txt 2>&1 <<'PY'
import json, sys, h5py, numpy as np
man = [json.loads(l) for l in open("big.jsonl")]
bad = []; ppl = {}
for t in ("f32", "bf16"):
    d = json.load(open("s-%s.json" % t)); g = h5py.File("g-%s.h5" % t, "r"); acc = {}
    for m in man:
        if m["rejection"]: continue
        ids = json.load(open(m["input"]["path"]))
        if len(ids) < 2: continue
        s = 0.0
        for p in range(len(ids) - 1):
            row = np.asarray(g["cases/%s-%d/logits" % (m["case_id"], p)][0], dtype=np.float64)
            mx = row.max(); s += mx + np.log(np.exp(row - mx).sum()) - row[ids[p + 1]]
        c = [c for c in d["cases"] if c["case_id"] == m["case_id"]][0]
        if abs(c["nll_sum"] - s) > 1e-9 * s: bad.append("%s %s: %r, numpy %r" % (t, m["case_id"], c["nll_sum"], s))
        a = acc.setdefault(m["dataset"], [0.0, 0]); a[0] += s; a[1] += len(ids) - 1
    ppl[t] = {k: np.exp(v[0] / v[1]) for k, v in acc.items()}
    for ds in d["datasets"]:
        if abs(ds["perplexity"] - ppl[t][ds["dataset"]]) > 1e-9 * ds["perplexity"]:
            bad.append("%s dataset %s" % (t, ds["dataset"]))
# the delta: the table's change against numpy's, sign and size
for l in open("table.txt").read().splitlines()[1:]:
    f = l.split(); ds = f[0]
    want = 100 * (ppl["bf16"][ds] - ppl["f32"][ds]) / ppl["f32"][ds]
    got = float(f[-1].rstrip("%"))
    if abs(got - want) > 0.0006 or (abs(want) > 0.001 and (got > 0) != (want > 0)):
        bad.append("change %s: table %s, numpy %.4f" % (ds, f[-1], want))
    print("%s %.9f %.9f %.6f" % (ds, ppl["f32"][ds], ppl["bf16"][ds], want))
if bad: print("BAD " + "; ".join(bad)); sys.exit(1)
PY
if [ $? -eq 0 ]; then ok "cpu f32 and bf16 NLL per case and dataset = numpy's over run's goldens"; else notok "cpu NLL = numpy's" "$(cat np.txt)"; fi
if grep -q 'code-long' s-f32.json && grep -Eq '^code +2 +307 ' table.txt; then ok "a 300-token case (two keeps) scored whole"; else notok "300-token case" "$(cat table.txt)"; fi
if awk '{ if ($2 != $3) d = 1 } END { exit !d }' np.txt; then ok "bf16 moves the perplexity (the comparison has something to see)"; else notok "bf16 moves the perplexity" "$(cat np.txt)"; fi

# ---- exp-gate decide: accuracy/result.json's perplexity, recomputed from the score files
# exp NAME BOUND EDIT: the example experiment with both scores in accuracy/, result.json's
# perplexity block stated from numpy's numbers (np.txt), the hypothesis bound BOUND (- = none),
# then the Python EDIT (r: result, h: hypothesis text, sc: candidate score path).
exp() {
    rm -rf "$1"; mkdir -p "$1"; cp -r "$EX" "$1/OP-MOE-0001"; d="$1/OP-MOE-0001"
    rm -f "$d/performance/summary.json" "$d/decision.md" "$d/decision.json" "$d/SHA256SUMS"
    cp s-f32.json "$d/accuracy/score-baseline.json"; cp s-bf16.json "$d/accuracy/score-candidate.json"
    $PYTHON - "$d" "$2" "$3" <<'PY'
import json, hashlib, sys, os
d, bound, code = sys.argv[1:]
ref = lambda p: {"path": p, "sha256": hashlib.sha256(open(os.path.join(d, p), "rb").read()).hexdigest()}
rp = os.path.join(d, "accuracy/result.json"); r = json.load(open(rp))
ds = [l.split() for l in open("np.txt")]
r["perplexity"] = {"baseline": ref("accuracy/score-baseline.json"), "candidate": ref("accuracy/score-candidate.json"),
                   "datasets": [{"dataset": x[0], "baseline": float(x[1]), "candidate": float(x[2]),
                                 "regression_pct": float(x[3])} for x in ds]}
hp = os.path.join(d, "hypothesis.yaml"); h = open(hp).read()
if bound != "-":
    h = h.replace("  p99_regression_max_pct: 5\n", "  p99_regression_max_pct: 5\n  perplexity_regression_max_pct: %s\n" % bound)
sc = os.path.join(d, "accuracy/score-candidate.json")
def reref():
    r["perplexity"]["candidate"] = ref("accuracy/score-candidate.json")
exec(code)
json.dump(r, open(rp, "w"), indent=2); open(hp, "w").write(h)
PY
    echo "$d"
}
decide() { exp-gate decide "$1" > out.txt 2> err.txt; echo $?; }
worst=$(sort -k4 -g np.txt | tail -n 1)   # the dataset bf16 raised most
wds=$(echo "$worst" | cut -d' ' -f1); wpct=$(echo "$worst" | cut -d' ' -f4)
below=$($PYTHON -c "print(round($wpct / 2, 6))"); above=$($PYTHON -c "print(round(abs($wpct) * 2 + 1, 6))")

d=$(exp ok "$above" '')
rc=$(decide "$d")
[ "$rc" = 1 ] && ok "bound met: the example's own decision (exit 1)" || notok "bound met: exit 1" "exit $rc: $(cat err.txt)"
expect_grep "bound met: not rejected" '"decision": "no_merge"' "$d/decision.json"
expect_grep "bound met: correctness inputs carry each dataset's recomputed perplexity" "\"dataset\": \"$wds\"" "$d/decision.json"
expect_grep "bound met: decision.md shows the recomputed table" "^\| $(echo "$wds" | sed 's/_/.{1,2}/g') \| [0-9]+ \| [0-9]+ \| [0-9.]+ \| [0-9.]+ \| \+[0-9.]+ % \|$" "$d/decision.md"

d=$(exp over "$below" '')
decide "$d" > /dev/null
expect_grep "bound exceeded: reject" '"decision": "reject"' "$d/decision.json"
expect_grep "bound exceeded: names the dataset" "perplexity of dataset $wds rose [0-9.e-]+ % .*above perplexity_regression_max_pct" "$d/decision.json"

d=$(exp lie "$above" 'r["perplexity"]["datasets"][0]["regression_pct"] = -5.0')
decide "$d" > /dev/null
expect_grep "stated delta the files contradict: reject" '"decision": "reject"' "$d/decision.json"
expect_grep "stated delta: names the number" 'accuracy/result.json says regression_pct -5, the score files give' "$d/decision.json"

d=$(exp drop "$above" 'r["perplexity"]["datasets"].pop()')
decide "$d" > /dev/null
expect_grep "a dataset left out: reject" 'is not reported in accuracy/result.json' "$d/decision.json"

d=$(exp none "$above" 'del r["perplexity"]')
decide "$d" > /dev/null
expect_grep "a bound with no perplexity: reject" 'reports no perplexity' "$d/decision.json"

# a score file changed after result.json named it: manifest-verify's artifact-hash, nothing decided
d=$(exp tamper "$above" 'open(sc, "a").write(" ")')
rc=$(decide "$d")
[ "$rc" = 2 ] && ok "a score file changed after the fact: exit 2" || notok "tampered score: exit 2" "exit $rc"
expect_grep "tampered score: the hash rule names it" "artifact-hash.*accuracy/score-candidate.json" err.txt

# a score file whose own aggregates its cases contradict (sha256 restated to match)
d=$(exp cook "$above" 's = json.load(open(sc)); s["cases"][0]["nll_sum"] *= 0.5; json.dump(s, open(sc, "w")); reref()')
decide "$d" > /dev/null
expect_grep "cooked case numbers: reject" 'cannot be compared: candidate: score file: dataset' "$d/decision.json"

d=$(exp side "$above" 'import shutil; shutil.copy(os.path.join(d, "accuracy/score-baseline.json"), sc); reref()')
decide "$d" > /dev/null
expect_grep "the baseline's score as the candidate's: reject" 'is a score of the baseline side' "$d/decision.json"
exit 0
