#!/bin/sh
# The closed loop of issue 26: npu-replay soak writes the identity and per-case hashes of what it
# really ran (manifest_sha256, graph_sha256, experiment_id, hashes), and exp-gate decide accepts
# that very file. The folder is the example experiment with the candidate's TTFT scaled by 0.88
# (soak_24h, see exp-gate-soak.sh) and a golden/input-manifest.jsonl the tiny model can replay:
# the example's 19 cases, each non-rejection case given a token file (ids < the tiny vocab), a
# decode case at least 2 output tokens (the replay loader's rule) and at least 1 token to prefill.
# Every expected hash is computed here by python's hashlib from the files, never by the tools.
. "$GOLDEN_ROOT/tests/e2e/lib.sh"
EX="$GOLDEN_ROOT/examples/experiment/OP-MOE-0001"
PY=/usr/bin/python3
command -v $PY >/dev/null 2>&1 || PY=python3

expect_exit "make-model tiny" 0 npu-replay make-model --preset tiny --seed 2 -o m

# fresh NAME SCALE: the folder NAME/OP-MOE-0001, the candidate's TTFT times SCALE
fresh() {
    rm -rf "$1"; mkdir -p "$1"; cp -r "$EX" "$1/OP-MOE-0001"
    rm -f "$1/OP-MOE-0001/performance/summary.json" "$1/OP-MOE-0001/decision.md" \
          "$1/OP-MOE-0001/decision.json" "$1/OP-MOE-0001/SHA256SUMS"
    $PY - "$1/OP-MOE-0001" "$2" <<'PY'
import json, sys, os, hashlib, random
d, factor = sys.argv[1], float(sys.argv[2])
raw = os.path.join(d, "performance/raw-requests.jsonl")
rs = [json.loads(l) for l in open(raw) if l.strip()]
for r in rs:
    if r["side"] == "candidate" and not r["warmup"]:
        r["ttft_ms"] = round(r["ttft_ms"] * factor, 6)
open(raw, "w").write("".join(json.dumps(r) + "\n" for r in rs))
p = os.path.join(d, "golden/input-manifest.jsonl")
V = json.load(open("m/config.json"))["vocab_size"]
os.makedirs(os.path.join(d, "golden/inputs"), exist_ok=True)
out = []
for l in open(p):
    r = json.loads(l)
    if not r["rejection"]:
        if r["phase"] == "decode":
            if r["past_tokens"] + 2 > 40960:
                r["phase"] = "prefill"
            else:
                r["output_tokens"] = 2
        if r["prompt_tokens"] + r["past_tokens"] == 0:
            r["prompt_tokens"] = 1
        rnd = random.Random(r["seed"])
        ids = [rnd.randrange(V) for _ in range(r["prompt_tokens"] + r["past_tokens"])]
        rel = "inputs/%s.json" % r["case_id"]
        b = json.dumps(ids).encode()
        open(os.path.join(d, "golden", rel), "wb").write(b)
        r["input"] = {"path": rel, "sha256": hashlib.sha256(b).hexdigest()}
    out.append(json.dumps(r))
open(p, "w").write("\n".join(out) + "\n")
PY
    echo "$1/OP-MOE-0001"
}
waiver() { printf 'soak_waiver:\n  duration_h: 0.0002\n  reason: e2e soak of 1 s on the tiny model\n' >> "$1/hypothesis.yaml"; }
decide() { exp-gate decide --force "$@" > out.txt 2> err.txt; echo $?; }
field() { $PY -c 'import json,sys; d=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$1" "$2"; }
CASES="--cases prefill-p1-* --cases prefill-p16-*"

d=$(fresh good 0.88)
rc=$(decide "$d")
[ "$rc" = 0 ] && grep -q 'OP-MOE-0001: soak_24h (rule graph_gain)' out.txt \
    && ok "control: the replayable folder is soak_24h without a soak" \
    || notok "control: soak_24h" "exit $rc: $(cat out.txt err.txt)"

# 1. the soak of the folder, its result in stability/soak.json
expect_exit "soak --experiment: exit 0" 0 npu-replay soak --model m -j1 \
    --manifest "$d/golden/input-manifest.jsonl" --experiment "$d" $CASES --duration 1 \
    --concurrency 2 -o "$d/stability/soak.json"
expect_exit "soak result against its schema" 0 manifest-verify --schema calculet-soak-result/v1 "$d/stability/soak.json"
got=$($PY - "$d" <<'PY'
import json, sys, os, hashlib
d = sys.argv[1]
s = json.load(open(os.path.join(d, "stability/soak.json")))
h = lambda rel: hashlib.sha256(open(os.path.join(d, rel), "rb").read()).hexdigest()
bad = []
if s.get("manifest_sha256") != h("golden/input-manifest.jsonl"): bad.append("manifest_sha256")
if s.get("graph_sha256") != h("candidate/qwen3-30b-a3b-prefill.calbin"): bad.append("graph_sha256")
if s.get("experiment_id") != "OP-MOE-0001": bad.append("experiment_id")
rows = {(r["case_id"], r["chip"]) for r in s.get("hashes", [])}
want = {(c, l) for c in ("prefill-p1-o1", "prefill-p1-o32", "prefill-p16-o1", "prefill-p16-o32")
        for l in (0, 1)}
if rows != want or len(s["hashes"]) != 8: bad.append("hashes %s" % sorted(rows))
if s["cases"] != 4: bad.append("cases %d" % s["cases"])
print(" ".join(bad) or "same")
PY
)
[ "$got" = same ] && ok "soak result: identity from the files, 4 cases x lanes 0,1" \
    || notok "soak result identity" "$got"

# 2. 1 s soaked, no waiver: no_merge by soak_result; with the hypothesis' waiver: merge
rc=$(decide "$d")
[ "$rc" = 1 ] && [ "$(field "$d/decision.json" 'd["decision"], d["rule"]')" = "('no_merge', 'soak_result')" ] \
    && grep -q 'section 13.2 asks 24 h' "$d/decision.json" \
    && ok "1 s without a waiver: no_merge, exit 1" || notok "1 s without a waiver" "exit $rc: $(cat out.txt err.txt)"
waiver "$d"
rc=$(decide "$d")
[ "$rc" = 0 ] && [ "$(field "$d/decision.json" 'd["decision"], d["rule"], d["soak"]["passes"], d["soak"]["hash_cases"]')" = "('merge', 'soak_result', True, 4)" ] \
    && ok "waived soak_24h folder with its soak: merge, exit 0" \
    || notok "merge" "exit $rc: $(cat out.txt err.txt)"

# 3. the same soak in a folder that is not soak_24h (the unscaled example: no_merge by
#    otherwise): no merge
u=$(fresh plain 1.0); waiver "$u"; mkdir -p "$u/stability"; cp "$d/stability/soak.json" "$u/stability/"
rc=$(decide "$u")
dec=$(field "$u/decision.json" 'd["decision"]' 2>/dev/null)
[ "$rc" = 1 ] && [ "$dec" = no_merge ] && [ "$(field "$u/decision.json" 'd["rule"]')" != soak_result ] \
    && ok "not soak_24h: the soak does not make it merge" || notok "not soak_24h" "exit $rc, $dec: $(cat err.txt)"

# 4. one per-case hash changed (lane 1 of prefill-p16-o1): no_merge naming the disagreement
m=$(fresh mut 0.88); waiver "$m"; mkdir -p "$m/stability"
$PY - "$d/stability/soak.json" "$m/stability/soak.json" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
for r in s["hashes"]:
    if r["case_id"] == "prefill-p16-o1" and r["chip"] == 1:
        r["sha256"] = ("0" if r["sha256"][0] != "0" else "1") + r["sha256"][1:]
json.dump(s, open(sys.argv[2], "w"), indent=2)
PY
rc=$(decide "$m")
[ "$rc" = 1 ] && [ "$(field "$m/decision.json" 'd["decision"], d["rule"]')" = "('no_merge', 'soak_result')" ] \
    && grep -q 'per-request hashes disagree across chips/hosts: case prefill-p16-o1' "$m/decision.json" \
    && ok "one hash changed: no_merge, exit 1" || notok "one hash changed" "exit $rc: $(cat out.txt err.txt)"
# a case's rows dropped: the hashes no longer cover the soak's cases: exit 2
$PY - "$d/stability/soak.json" "$m/stability/soak.json" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
s["hashes"] = [r for r in s["hashes"] if r["case_id"] != "prefill-p1-o1"]
json.dump(s, open(sys.argv[2], "w"), indent=2)
PY
rc=$(decide "$m")
[ "$rc" = 2 ] && grep -q 'hashes cover 3 case(s), the soak ran 4' err.txt \
    && ok "a case's hashes dropped: exit 2" || notok "hashes dropped" "exit $rc: $(cat err.txt)"

# 5. the graph hash is the file's, never the manifest's claim: --graph of another file gives
#    that file's hash, and decide refuses the result as another candidate's (exit 2)
printf 'another graph\n' > other.calbin
expect_exit "soak --graph other.calbin: exit 0" 0 npu-replay soak --model m -j1 \
    --manifest "$d/golden/input-manifest.jsonl" --experiment "$d" --graph other.calbin $CASES \
    --duration 0.3 --concurrency 2 -o "$m/stability/soak.json" --force
want=$($PY -c 'import hashlib; print(hashlib.sha256(b"another graph\n").hexdigest())')
[ "$(field "$m/stability/soak.json" 'd["graph_sha256"]')" = "$want" ] \
    && ok "--graph: graph_sha256 is the file's" || notok "--graph hash" "$(field "$m/stability/soak.json" 'd["graph_sha256"]')"
rc=$(decide "$m")
[ "$rc" = 2 ] && grep -q 'mismatched' err.txt && ok "another graph: exit 2 (mismatched)" \
    || notok "another graph" "exit $rc: $(cat err.txt)"
# the soak of another manifest: exit 2
cp "$d/golden/input-manifest.jsonl" other.jsonl; cp -r "$d/golden/inputs" inputs
printf '\n' >> other.jsonl
npu-replay soak --model m -j1 --manifest other.jsonl --experiment "$d" $CASES --duration 0.3 \
    --concurrency 2 -o "$m/stability/soak.json" --force > out.txt 2> err.txt
rc=$(decide "$m")
[ "$rc" = 2 ] && grep -q 'soak result of input manifest' err.txt && ok "another manifest: exit 2" \
    || notok "another manifest" "exit $rc: $(cat err.txt)"
# --experiment without an experiment_id: exit 2, nothing written
mkdir -p noid && printf 'schema: calculet-op-experiment/v1\n' > noid/hypothesis.yaml
expect_exit "--experiment without experiment_id: exit 2" 2 npu-replay soak --model m -j1 \
    --manifest "$d/golden/input-manifest.jsonl" --experiment noid $CASES --duration 0.3 -o n.json
expect_absent "nothing written" n.json
