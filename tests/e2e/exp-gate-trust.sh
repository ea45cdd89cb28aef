# exp-gate decides only on evidence it has checked itself (issue 26). Each folder is a copy of
# the example experiment with one thing wrong; the expected outcome is worked out by hand from
# the edit (the example's TTFT medians, 10.564 and 37.273 ms, scaled by 0.88 give a 12 % gain,
# above the 8 % threshold: soak_24h when nothing is wrong).
. "$GOLDEN_ROOT/tests/e2e/lib.sh"
EX="$GOLDEN_ROOT/examples/experiment/OP-MOE-0001"
PY=/usr/bin/python3
command -v $PY >/dev/null 2>&1 || PY=python3

fresh() {
    rm -rf "$1"; mkdir -p "$1"; cp -r "$EX" "$1/OP-MOE-0001"
    rm -f "$1/OP-MOE-0001/performance/summary.json" "$1/OP-MOE-0001/decision.md" \
          "$1/OP-MOE-0001/decision.json" "$1/OP-MOE-0001/SHA256SUMS"
    echo "$1/OP-MOE-0001"
}

edit() {
    _d=$1; shift
    $PY - "$_d" "$@" <<'PY'
import json, sys, os, copy
d = sys.argv[1]; code = sys.argv[2]
raw = os.path.join(d, "performance/raw-requests.jsonl")
def lines():
    return [json.loads(l) for l in open(raw) if l.strip()]
def save(rs):
    with open(raw, "w") as f:
        for r in rs:
            f.write((r if isinstance(r, str) else json.dumps(r)) + "\n")
def scale(side, factor, case=None):
    rs = lines()
    for r in rs:
        if r["side"] == side and (case is None or r["case_id"] == case) and not r["warmup"]:
            r["ttft_ms"] = round(r["ttft_ms"] * factor, 6)
    save(rs)
def sub(rel, old, new):
    p = os.path.join(d, rel); t = open(p).read()
    assert old in t, (rel, old); open(p, "w").write(t.replace(old, new))
def jedit(rel, fn):
    p = os.path.join(d, rel); j = json.load(open(p)); fn(j); json.dump(j, open(p, "w"), indent=2)
exec(code)
PY
}

decide() { exp-gate decide "$@" > out.txt 2> err.txt; echo $?; }

# 0. the control: the clean gain soaks (so every case below fails for its own edit)
d=$(fresh control); edit "$d" 'scale("candidate", 0.88)'
rc=$(decide "$d")
[ "$rc" = 0 ] && ok "control: a clean 12 % gain soaks" || notok "control: soak" "exit $rc: $(cat err.txt)"

# --- one verification path ---
# 1. a compile log that no longer hashes as its manifest says: manifest-verify's
#    artifact-hash fails, so nothing is decided (the old code soaked it)
d=$(fresh hash); edit "$d" 'scale("candidate", 0.88)'; echo tampered >> "$d/compile/candidate.log"
rc=$(decide "$d")
[ "$rc" = 2 ] && ok "hash: exit 2" || notok "hash: exit 2" "exit $rc: $(cat out.txt err.txt)"
expect_grep "hash: names the rule" 'manifest-verify rule artifact-hash' err.txt
expect_lines "hash: one line" 1 err.txt
expect_absent "hash: no decision.json" "$d/decision.json"
expect_absent "hash: no decision.md" "$d/decision.md"

# 2. two flags changed under a single-factor design: one-main-factor fails: not attributable,
#    nothing decided
d=$(fresh flags); edit "$d" '
scale("candidate", 0.88)
def f(m):
    m["compile"]["flags"]["attention_seq_tile"] = 256
jedit("candidate/manifest.json", f)'
rc=$(decide "$d")
[ "$rc" = 2 ] && ok "two flags: exit 2, no soak" || notok "two flags: exit 2" "exit $rc: $(cat err.txt)"
expect_grep "two flags: names the rule" 'manifest-verify rule (one-main-factor|manifest-agrees|compile-command)' err.txt

# 3. a repeated request_id (a copied line): manifest-verify's request-unique fails
d=$(fresh dup); edit "$d" '
scale("candidate", 0.88)
rs = lines(); rs.append(rs[-1]); save(rs)'
rc=$(decide "$d")
[ "$rc" = 2 ] && ok "repeated request: exit 2" || notok "repeated request: exit 2" "exit $rc"
expect_grep "repeated request: rule request-unique" 'rule request-unique' err.txt

# --- accuracy read for its numbers ---
# 4. verdict pass, but top-1 0.99 under the hypothesis' 0.999: reject (correctness)
d=$(fresh top1); edit "$d" 'scale("candidate", 0.88); sub("accuracy/result.json", "\"top1_match\": 0.9995", "\"top1_match\": 0.99")'
rc=$(decide "$d")
[ "$rc" = 1 ] && ok "top-1 under its bound: exit 1" || notok "top-1: exit 1" "exit $rc: $(cat err.txt)"
expect_grep "top-1: reject" '"decision": "reject"' "$d/decision.json"
expect_grep "top-1: by correctness" '"rule": "correctness"' "$d/decision.json"
expect_grep "top-1: the number named" 'logits.top1_match is 0.99, bound >= 0.999' "$d/decision.json"
# 5. verdict pass with a new NaN in the kernel tier
d=$(fresh nan); edit "$d" 'scale("candidate", 0.88); sub("accuracy/result.json", "\"new_nan\": 0", "\"new_nan\": 2")'
decide "$d" > /dev/null
expect_grep "new NaN: reject" '"decision": "reject"' "$d/decision.json"
expect_grep "new NaN: named" 'kernel.new_nan is 2, bound <= 0' "$d/decision.json"
# 6. 99 of 100 greedy sequences exact
d=$(fresh greedy); edit "$d" 'scale("candidate", 0.88); sub("accuracy/result.json", "\"exact\": 100", "\"exact\": 99")'
decide "$d" > /dev/null
expect_grep "greedy 99/100: reject" '"decision": "reject"' "$d/decision.json"
expect_grep "greedy 99/100: named" 'greedy_tokens.exact \(of greedy_tokens.prompts\) is 99, bound >= 100' "$d/decision.json"
# 7. the layer cosine under its own threshold
d=$(fresh cos); edit "$d" 'scale("candidate", 0.88); sub("accuracy/result.json", "\"min_cosine\": 0.99962", "\"min_cosine\": 0.998")'
decide "$d" > /dev/null
expect_grep "layer cosine: reject" '"decision": "reject"' "$d/decision.json"
expect_grep "layer cosine: named" 'layer.min_cosine is 0.998, bound >= 0.999' "$d/decision.json"

# --- the summary always from the raw data ---
# 8. no raw requests, a stored summary claiming a gain: never decided on (the old code used it)
d=$(fresh noraw); edit "$d" 'scale("candidate", 0.88)'
exp-gate summarize "$d" > /dev/null 2>&1
rm "$d/performance/raw-requests.jsonl"
rc=$(decide "$d")
[ "$rc" = 2 ] && ok "no raw data: exit 2" || notok "no raw data: exit 2" "exit $rc: $(cat out.txt)"
expect_grep "no raw data: named" 'raw-requests.jsonl' err.txt
expect_absent "no raw data: no decision" "$d/decision.json"

# --- matrix never trusts a decision.json it did not write ---
# 9. the example's folder with a forged decision.json saying soak_24h
d=$(fresh forged)
$PY - "$EX/decision.json" "$d/decision.json" <<'PY'
import json, sys
j = json.load(open(sys.argv[1])); j["decision"] = "soak_24h"; j["rule"] = "graph_gain"
json.dump(j, open(sys.argv[2], "w"), indent=2)
PY
expect_exit "forged: matrix exit 0" 0 exp-gate matrix --json m.json "$d"
$PY - m.json <<'PY'
import json, sys
e = json.load(open(sys.argv[1]))["experiments"][0]
print("ok forged: re-derived no_merge" if e["conclusion"] == "no_merge (rule otherwise)" else f"not ok forged: conclusion {e['conclusion']}")
print("ok forged: the stored file is named" if any("decision.json in the folder says soak_24h" in u for u in e["uncertain"]) else f"not ok forged: uncertain {e['uncertain']}")
PY
# 10. the matrix runs the same verification: a folder failing it stops the matrix
d=$(fresh mhash); echo tampered >> "$d/compile/candidate.log"
expect_exit "matrix: unverified folder exit 2" 2 exp-gate matrix --json m2.json "$d"
expect_grep "matrix: names the rule" 'rule artifact-hash' err.txt
expect_absent "matrix: nothing written" m2.json
