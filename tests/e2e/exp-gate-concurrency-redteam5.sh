#!/bin/sh
# conc5 red team: exp-gate summary/decision by concurrency level and throughput (issue 33).
# Authority: docs/exp-gate.md "Concurrency levels and throughput (issue 33)", docs/fields.md,
# exp-gate.1, handbook section 17 (and section 4: "average throughput cannot cover P99 or a
# correctness failure"). Folders are copies of examples/experiment/OP-MOE-0001 with the seal,
# the decision and the summary removed, empty faults, matrix concurrency [1, 4], and generated
# raw requests of case prefill-p128-o1 (10 warm-ups + 30 measured per side and level, 2 % noise).
. "$GOLDEN_ROOT/tests/e2e/lib.sh"
EX="$GOLDEN_ROOT/examples/experiment/OP-MOE-0001"
if [ -z "$PYTHON" ]; then echo "ok conc5 # skip no numpy"; exit 0; fi
cat > gen.py <<'PYEOF'
# gen.py DIR SPEC: write DIR/performance/raw-requests.jsonl from SPEC (json list of groups)
import json, sys, random
d, spec = sys.argv[1], json.loads(sys.argv[2])
STAGES = ["client_queue","service_queue","input_prepare","h2d","npu_wait","d2h","logits_conversion","sampling","stream_flush"]
FR = [0.004,0.006,0.011,0.028,0.86,0.03,0.045,0.011,0.005]
out = []
t = 1_000_000_000
for g in spec:
    rnd = random.Random(g.get("seed", 1))
    c = g.get("conc", 1)
    lanes = c if isinstance(c, int) and c >= 1 else 1
    nw, nm = g.get("warm", 10), g.get("meas", 30)
    for r in range(nw + nm):
        lat = g["ms"] * (1 + rnd.gauss(0, 0.02))
        if g.get("spike") and r >= nw and (r - nw) in g["spike"]:
            lat *= g.get("spike_x", 3.0)
        slot = r // lanes
        st = t + slot * int(g["ms"] * 1.3e6) + (r % lanes) * 1000
        ns = int(lat * 1e6)
        line = {"request_id": "%s-%s-c%s-%03d" % (g["side"], g["case"], str(c), r), "case_id": g["case"],
                "side": g["side"], "run": r, "warmup": r < nw, "steady": True}
        if c != "absent":
            line["concurrency"] = c
        fail = g.get("fail") and r >= nw and (r - nw) in g["fail"]
        if fail:
            line["outcome"] = "timeout"
        else:
            line["ttft_ms"] = round(ns / 1e6, 6)
        if not (g.get("no_tokens") and r >= nw and (r - nw) in g["no_tokens"]):
            line["output_tokens"] = g.get("tok", 1)
        stages = {}; s = st
        for k, f in zip(STAGES, FR):
            e = s + max(1, int(ns * f))
            stages[k] = {"start_ns": s, "end_ns": e}; s = e
        line["stages"] = stages
        out.append(line)
    t += (nw + nm) * int(g["ms"] * 1.3e6) + 10_000_000
with open(d + "/performance/raw-requests.jsonl", "w") as f:
    for l in out:
        f.write(json.dumps(l, separators=(",", ":")) + "\n")
PYEOF
cat > chk.py <<'PYEOF'
# chk.py DIR CASE CONC SIDE: compare summary.json's ttft entry and throughput row of (CASE, CONC, SIDE) with numpy
import json, sys, numpy as np
d, case, conc, side = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
raw = [json.loads(l) for l in open(d + "/performance/raw-requests.jsonl")]
g = [r for r in raw if r["case_id"] == case and r["side"] == side and r.get("concurrency", 1) == conc and not r["warmup"]]
x = np.array([r.get("ttft_ms", np.inf) for r in g])
s = json.load(open(d + "/performance/summary.json"))
ent = [c for c in s["cases"] if c["case_id"] == case and c.get("concurrency", 1) == conc and c["metric"] == "ttft_ms"]
if len(ent) != 1: print("entries for", case, conc, ":", len(ent)); sys.exit(1)
st = ent[0][side]
bad = []
for k, q in (("median", .5), ("p90", .9), ("p99", .99)):
    want = float(np.percentile(x, q * 100))
    if abs(st[k] - want) > 1e-5 * max(1, abs(want)): bad.append("%s %s want %s" % (k, st[k], want))
ok = [r for r in g if r.get("outcome", "ok") == "ok"]
win = (max(r["stages"]["stream_flush"]["end_ns"] for r in g) - min(r["stages"]["client_queue"]["start_ns"] for r in g)) / 1e6
tp = [t for t in s.get("throughput", []) if t["case_id"] == case and t["concurrency"] == conc and t["side"] == side]
if len(tp) != 1: print("throughput rows", len(tp)); sys.exit(1)
tp = tp[0]
rps = len(ok) / (win / 1000); tok = sum(r["output_tokens"] for r in ok) / (win / 1000)
for k, w in (("requests", len(ok)), ("failed", len(g) - len(ok)), ("window_ms", win), ("requests_per_s", rps), ("output_tokens_per_s", tok)):
    if tp.get(k) is None or abs(tp[k] - w) > 1e-4 * max(1, abs(w)): bad.append("%s %s want %s" % (k, tp.get(k), w))
print("; ".join(bad)); sys.exit(1 if bad else 0)
PYEOF
C=prefill-p128-o1
# mk NAME SPEC: a folder NAME/OP-MOE-0001 with the raw lines of SPEC
mk() {
    rm -rf "$1"; mkdir -p "$1"; cp -r "$EX" "$1/OP-MOE-0001"; F="$1/OP-MOE-0001"
    rm -f "$F/SHA256SUMS" "$F/decision.json" "$F/decision.md" "$F/performance/summary.json"
    : > "$F/stability/faults.jsonl"
    sed -i 's/^  concurrency: \[1\]/  concurrency: [1, 4]/' "$F/hypothesis.yaml"
    $PYTHON gen.py "$F" "$2"
}
g() { # g SIDE CONC MS [extra json]
    printf '{"case":"%s","side":"%s","conc":%s,"ms":%s,"seed":%s%s}' "$C" "$1" "$2" "$3" "$(echo "$1$2$3" | cksum | cut -c1-6)" "${4:+,$4}"
}
jget() { $PYTHON -c "import json,sys; d=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))" "$@"; }

# 1. levels 1 and 4 on both sides, candidate 10 % faster at both (> 8 % threshold), 30 steady
# runs, delta clearly below 0: section 17 rule 4 -> soak_24h, exit 0.
mk good "[$(g baseline 1 10.0),$(g candidate 1 9.0),$(g baseline 4 20.0),$(g candidate 4 18.0)]"
expect_exit good-two-levels-soak 0 exp-gate decide good/OP-MOE-0001
expect_grep good-decision-soak '"decision": *"soak_24h"' good/OP-MOE-0001/decision.json
# 2-5. percentiles per level and throughput per level = numpy (chk.py: numpy percentile of the
# level's measured ttft; window = max stream_flush.end - min client_queue.start of the
# level's measured requests; requests/s = ok / window s; output tokens/s = sum tokens / window s).
for lv in 1 4; do for sd in baseline candidate; do
  if $PYTHON chk.py good/OP-MOE-0001 $C $lv $sd > chk.txt 2>&1; then ok good-numpy-c$lv-$sd; else notok good-numpy-c$lv-$sd "$(head -c 300 chk.txt)"; fi
done; done
# 6. decision.json: each case row carries concurrency and the six throughput keys; two rows (levels 1, 4).
r=$(jget good/OP-MOE-0001/decision.json "sorted(c.get('concurrency') for c in d['cases'] if c['case_id']=='$C' and c.get('metric','ttft_ms')=='ttft_ms')" 2>&1)
[ "$r" = "[1, 4]" ] && ok good-json-levels || notok good-json-levels "case rows' concurrency: $r"
r=$(jget good/OP-MOE-0001/decision.json "[k for k in ('baseline_requests_per_s','candidate_requests_per_s','requests_per_s_change_pct','baseline_output_tokens_per_s','candidate_output_tokens_per_s','output_tokens_per_s_change_pct') if any(k not in c for c in d['cases'])]" 2>&1)
[ "$r" = "[]" ] && ok good-json-throughput-keys || notok good-json-throughput-keys "missing: $r"
# 7. requests_per_s_change_pct = 100 (cand - base) / base from the summary's throughput rows (level 4).
r=$(jget good/OP-MOE-0001/decision.json "[(c['requests_per_s_change_pct'], c['baseline_requests_per_s'], c['candidate_requests_per_s']) for c in d['cases'] if c.get('concurrency')==4][0]" 2>&1)
$PYTHON -c "import sys; p,b,c=eval(sys.argv[1]); sys.exit(0 if abs(p-100*(c-b)/b)<0.01 and c>b else 1)" "$r" && ok good-json-change-pct || notok good-json-change-pct "$r"
# 8. decision.md shows throughput beside latency: a concurrency column and requests/s per row, a row with level 4.
expect_grep good-md-throughput '\| 4 \|.*/s' good/OP-MOE-0001/decision.md

# 9. level 4 on the baseline only: one_sided with concurrency, comparison incomplete -> no soak,
# exit 1 (no_merge), reason names "at concurrency 4".
mk onesided "[$(g baseline 1 10.0),$(g candidate 1 9.0),$(g baseline 4 20.0)]"
expect_exit onesided-no-soak 1 exp-gate decide onesided/OP-MOE-0001
expect_grep onesided-named 'at concurrency 4' onesided/OP-MOE-0001/decision.json
r=$(jget onesided/OP-MOE-0001/performance/summary.json "[(o.get('case_id'),o.get('concurrency'),o.get('side')) for o in d.get('one_sided',[])]" 2>&1)
[ "$r" = "[('$C', 4, 'baseline')]" ] && ok onesided-summary || notok onesided-summary "one_sided: $r"
# 10. levels differ between sides (baseline 1+4, candidate 1+2): both 4 and 2 are one-sided,
# never paired across levels -> no soak (exit 1).
mk differ "[$(g baseline 1 10.0),$(g candidate 1 9.0),$(g baseline 4 20.0),$(g candidate 2 12.0)]"
sed -i 's/concurrency: \[1, 4\]/concurrency: [1, 2, 4]/' differ/OP-MOE-0001/hypothesis.yaml
expect_exit differ-no-soak 1 exp-gate decide differ/OP-MOE-0001
r=$(jget differ/OP-MOE-0001/performance/summary.json "sorted((o.get('concurrency'),o.get('side')) for o in d.get('one_sided',[]))" 2>&1)
[ "$r" = "[(2, 'candidate'), (4, 'baseline')]" ] && ok differ-one-sided || notok differ-one-sided "one_sided: $r"

# 11-17. a concurrency that is not an integer >= 1 on one line: exit 2, nothing written
# (docs/exp-gate.md lists 0, -1, 2.5, 4.0, "4", null, true). Applied to the 15th candidate
# line of level 1 (a measured one).
i=0
for v in 0 -1 1.5 '"4"' 4.0 null true; do i=$((i+1))
  mk bad$i "[$(g baseline 1 10.0),$(g candidate 1 9.0)]"
  $PYTHON - bad$i/OP-MOE-0001/performance/raw-requests.jsonl "$v" <<'PYEOF'
import sys
p, v = sys.argv[1], sys.argv[2]
L = open(p).read().split("\n")
L[54] = L[54].replace('"concurrency":1', '"concurrency":' + v, 1)
open(p, "w").write("\n".join(L))
PYEOF
  exp-gate decide bad$i/OP-MOE-0001 > out.txt 2> err.txt; s=$?
  if [ $s -eq 2 ] && [ ! -e bad$i/OP-MOE-0001/decision.json ] && [ ! -e bad$i/OP-MOE-0001/decision.md ]; then ok "bad-concurrency-$v"
  else notok "bad-concurrency-$v" "exit $s (want 2, nothing written): $(head -c 200 err.txt)"; fi
done
# 18. the same bad value (0) through summarize: exit 2 naming the line (:55:), no summary written.
mk sbad "[$(g baseline 1 10.0),$(g candidate 1 9.0)]"
sed -i '55s/"concurrency":1/"concurrency":0/' sbad/OP-MOE-0001/performance/raw-requests.jsonl
exp-gate summarize sbad/OP-MOE-0001 > out.txt 2> err.txt; s=$?
if [ $s -eq 2 ] && grep -q ':55:' err.txt && grep -qi concurrency err.txt && [ ! -e sbad/OP-MOE-0001/performance/summary.json ]; then ok summarize-concurrency-0
else notok summarize-concurrency-0 "exit $s: $(head -c 200 err.txt)"; fi

# 19. concurrency absent on the baseline, explicit 1 on the candidate: the same level (schema
# default 1), paired, 10 % gain -> soak_24h, exit 0, one entry at concurrency 1.
mk absent "[$(g baseline '"absent"' 10.0),$(g candidate 1 9.0)]"
expect_exit absent-is-level-1 0 exp-gate decide absent/OP-MOE-0001
r=$(jget absent/OP-MOE-0001/performance/summary.json "[(c.get('concurrency')) for c in d['cases'] if c['metric']=='ttft_ms']" 2>&1)
[ "$r" = "[1]" ] && ok absent-one-entry || notok absent-one-entry "ttft entries' concurrency: $r"

# 20. handbook 17/4: throughput cannot cover a P99 failure. Level 4: candidate median 15 %
# faster (more requests/s) but 3 of 30 runs x3 slow: P99 (numpy, h=28.71) about 3x the baseline
# -> p99_sla reject, exit 1, the reason naming "at concurrency 4".
mk p99 "[$(g baseline 1 10.0),$(g candidate 1 9.0),$(g baseline 4 20.0),$(g candidate 4 17.0 '"spike":[5,15,25],"spike_x":3.0')]"
expect_exit p99-level4-reject 1 exp-gate decide p99/OP-MOE-0001
expect_grep p99-level4-rule '"decision": *"reject"' p99/OP-MOE-0001/decision.json
expect_grep p99-level4-named 'at concurrency 4' p99/OP-MOE-0001/decision.md
# 21. gain at level 1 only (level 4: candidate equal, 0 %): graph_gain fails at level 4 -> no_merge exit 1.
mk gain1 "[$(g baseline 1 10.0),$(g candidate 1 9.0),$(g baseline 4 20.0),$(g candidate 4 20.0)]"
expect_exit gain-level1-only 1 exp-gate decide gain1/OP-MOE-0001
# 22. level 4 insufficient (20 measured runs < 30 on the candidate): per level sufficiency -> no soak, exit 1.
mk insuf "[$(g baseline 1 10.0),$(g candidate 1 9.0),$(g baseline 4 20.0),$(g candidate 4 18.0 '"meas":20')]"
expect_exit insufficient-level4 1 exp-gate decide insuf/OP-MOE-0001
# 23. level 4's warm-ups are per level: 5 warm-ups at level 4 (level 1 has its 10) -> insufficient, exit 1.
mk warm "[$(g baseline 1 10.0),$(g candidate 1 9.0),$(g baseline 4 20.0 '"warm":5'),$(g candidate 4 18.0)]"
expect_exit warmups-per-level 1 exp-gate decide warm/OP-MOE-0001

# 24-26. throughput with a timeout and a line without output_tokens (level 4 candidate):
# requests excludes the timeout, failed = 1, output_tokens_per_s null (never 0-filled), the
# window still covers the failed one.
mk tput "[$(g baseline 4 20.0),$(g candidate 4 18.0 '"fail":[7],"no_tokens":[3]')]"
expect_exit tput-summarize 0 exp-gate summarize tput/OP-MOE-0001
r=$(jget tput/OP-MOE-0001/performance/summary.json "[(t['requests'],t['failed'],t['output_tokens_per_s'],t.get('output_tokens_missing')) for t in d['throughput'] if t['side']=='candidate']" 2>&1)
[ "$r" = "[(29, 1, None, 1)]" ] && ok tput-failed-missing || notok tput-failed-missing "candidate row (requests, failed, tok/s, missing): $r"
$PYTHON - tput/OP-MOE-0001 <<'PYEOF' > chk.txt 2>&1 && ok tput-window-numpy || notok tput-window-numpy "$(head -c 300 chk.txt)"
import json, sys
d = sys.argv[1]
raw = [json.loads(l) for l in open(d + "/performance/raw-requests.jsonl")]
g = [r for r in raw if r["side"] == "candidate" and not r["warmup"]]
w = (max(r["stages"]["stream_flush"]["end_ns"] for r in g) - min(r["stages"]["client_queue"]["start_ns"] for r in g)) / 1e6
t = [t for t in json.load(open(d + "/performance/summary.json"))["throughput"] if t["side"] == "candidate"][0]
ok = abs(t["window_ms"] - w) < 1e-3 and abs(t["requests_per_s"] - 29 / (w / 1000)) < 1e-3 * 29 / (w / 1000)
print(t, w); sys.exit(0 if ok else 1)
PYEOF
# 27. --check on a stored summary whose level-4 baseline median was edited (+1 ms): a finding
# naming the case, exit 1 (entries matched by case, concurrency, metric).
$PYTHON - good/OP-MOE-0001/performance/summary.json <<'PYEOF'
import json, sys
p = sys.argv[1]; s = json.load(open(p))
for c in s["cases"]:
    if c.get("concurrency") == 4 and c["metric"] == "ttft_ms": c["baseline"]["median"] += 1.0
json.dump(s, open(p, "w"), indent=1)
PYEOF
expect_exit check-level4-edited 1 exp-gate summarize --check good/OP-MOE-0001
expect_grep check-level4-named "$C" out.txt
# 28. naming: an insufficient level-4 entry is named "CASE at concurrency 4" in uncertain
# (docs/exp-gate.md "Names": a level other than 1 is named with the case).
expect_grep insufficient-named 'insufficient.*prefill-p128-o1 at concurrency 4' insuf/OP-MOE-0001/decision.json
# 29. matrix re-derives gain1 (exit 0, written); its observation names the level-4 case.
expect_exit matrix-level-named 0 exp-gate matrix gain1/OP-MOE-0001
expect_grep matrix-level-named-text 'at concurrency 4' out.txt
# 30. --html: a per-level table with requests/s of both sides (issue 33).
mk html "[$(g baseline 1 10.0),$(g candidate 1 9.0),$(g baseline 4 20.0),$(g candidate 4 18.0)]"
expect_exit html-written 0 exp-gate decide --html page.html html/OP-MOE-0001
expect_grep html-throughput 'requests/s' page.html
