# exp-gate decide: one experiment folder per branch of section 17 (built from the example
# experiment), each reaching its label for its own reason; --check catches tampered summaries.
. "$GOLDEN_ROOT/tests/e2e/lib.sh"
EX="$GOLDEN_ROOT/examples/experiment/OP-MOE-0001"
PY=/usr/bin/python3
command -v $PY >/dev/null 2>&1 || PY=python3

# fresh NAME: a copy of the example without its stored summary and decision.
fresh() {
    rm -rf "$1"; mkdir -p "$1"; cp -r "$EX" "$1/OP-MOE-0001"
    rm -f "$1/OP-MOE-0001/performance/summary.json" "$1/OP-MOE-0001/decision.md" \
          "$1/OP-MOE-0001/decision.json" "$1/OP-MOE-0001/SHA256SUMS"
    echo "$1/OP-MOE-0001"
}

# edit DIR PYTHON: run PYTHON with d = the folder and helpers to rewrite its raw requests.
edit() {
    _d=$1; shift
    $PY - "$_d" "$@" <<'PY'
import json, sys, os, re
d = sys.argv[1]; code = sys.argv[2]
raw = os.path.join(d, "performance/raw-requests.jsonl")
def lines():
    return [json.loads(l) for l in open(raw) if l.strip()]
def save(rs):
    with open(raw, "w") as f:
        for r in rs:
            f.write(json.dumps(r) + "\n")
def scale(side, factor, case=None, only_tail=0):
    rs = lines()
    for r in rs:
        if r["side"] == side and (case is None or r["case_id"] == case) and not r["warmup"]:
            if only_tail and r["run"] % 10 != 9:
                continue
            r["ttft_ms"] = round(r["ttft_ms"] * factor, 6)
    save(rs)
def sub(rel, old, new):
    p = os.path.join(d, rel); t = open(p).read()
    assert old in t, (rel, old); open(p, "w").write(t.replace(old, new))
exec(code)
PY
}

decide() { exp-gate decide "$1" > out.txt 2> err.txt; echo $?; }

# 1. the example as it is: TTFT gains of 6.7 % and 7.9 % are below the 8 % threshold
d=$(fresh ex)
rc=$(decide "$d")
[ "$rc" = 1 ] && ok "example: exit 1" || notok "example: exit 1" "exit $rc: $(cat err.txt)"
expect_grep "example: no_merge by the last rule" '"rule": "otherwise"' "$d/decision.json"
expect_grep "example: graph gain rule names the worst case and the threshold" \
    'worst case prefill-p128-o1 improves 6.73[0-9]* % \(10.564 -> 9.853 ms, -0.711 ms; needs 8 %\)' "$d/decision.md"

# 2. correctness fails: the accuracy verdict
d=$(fresh acc); edit "$d" 'sub("accuracy/result.json", "\"verdict\": \"pass\"", "\"verdict\": \"fail\"")'
decide "$d" >/dev/null
expect_grep "accuracy fail: reject" '"decision": "reject"' "$d/decision.json"
expect_grep "accuracy fail: correctness fired" '"rule": "correctness"' "$d/decision.json"

# 3. correctness fails: a candidate fault whose retest after reset failed
d=$(fresh fault); edit "$d" 'sub("stability/faults.jsonl", "\"retest_after_reset\":\"passed\"", "\"retest_after_reset\":\"failed\"")'
decide "$d" >/dev/null
expect_grep "failed retest: reject by correctness" '"rule": "correctness"' "$d/decision.json"
expect_grep "failed retest: reason names the fault" 'not recovered or failing their retest' "$d/decision.md"

# 4. P99 regression: the candidate's slowest tenth of prefill-p128-o1 runs 20 % slower
d=$(fresh p99); edit "$d" 'scale("candidate", 1.2, "prefill-p128-o1", only_tail=1)'
rc=$(decide "$d")
[ "$rc" = 1 ] && ok "p99: exit 1" || notok "p99: exit 1" "exit $rc"
expect_grep "p99: reject" '"decision": "reject"' "$d/decision.json"
expect_grep "p99: the rule names the case" 'P99 regression in 1 case\(s\); worst prefill-p128-o1' "$d/decision.md"

# 5. the same, with the hypothesis asking to keep it as an experiment
d=$(fresh keep); edit "$d" 'scale("candidate", 1.2, "prefill-p128-o1", only_tail=1); sub("hypothesis.yaml", "  target_metric_improvement_min_pct: 8\n", "  target_metric_improvement_min_pct: 8\n  keep_experiment_on_p99_regression: 1\n")'
decide "$d" >/dev/null
expect_grep "p99 kept: experiment_only" '"decision": "experiment_only"' "$d/decision.json"

# 6. a clear graph gain, steady: 24 h soak, exit 0
d=$(fresh soak); edit "$d" 'scale("candidate", 0.88)'
rc=$(decide "$d")
[ "$rc" = 0 ] && ok "soak: exit 0" || notok "soak: exit 0" "exit $rc: $(cat out.txt err.txt)"
expect_grep "soak: soak_24h by graph_gain" '"rule": "graph_gain"' "$d/decision.json"

# 7. the same gain but too few measured runs: insufficient never leads to a soak
d=$(fresh few); edit "$d" 'scale("candidate", 0.88); save([r for r in lines() if r["warmup"] or r["run"] < 30 or r["side"] == "baseline"])'
rc=$(decide "$d")
[ "$rc" = 1 ] && ok "insufficient: exit 1" || notok "insufficient: exit 1" "exit $rc: $(cat err.txt)"
expect_grep "insufficient: no_merge" '"decision": "no_merge"' "$d/decision.json"
expect_grep "insufficient: said so" 'insufficient cases cannot lead to a soak' "$d/decision.md"
expect_grep "insufficient: summary marks the case" '"insufficient": true' "$d/performance/summary.json"

# 8. the same gain, but clocks drift outside the steady band in some runs: not steady, no soak
d=$(fresh drift); edit "$d" '
import copy
rs = lines()
rs += [dict(copy.deepcopy(r), run=r["run"] + 40, request_id=r["request_id"] + "-again")
       for r in rs if not r["warmup"]]
for r in rs:
    r["clock_mhz"] = [1000.0, 1001.0]
    if r["side"] == "candidate" and not r["warmup"] and r["run"] % 20 == 3:
        r["clock_mhz"] = [1000.0, 930.0]
    if r["side"] == "candidate" and not r["warmup"]:
        r["ttft_ms"] = round(r["ttft_ms"] * 0.88, 6)
save(rs)'
decide "$d" >/dev/null
expect_grep "drift: no_merge" '"decision": "no_merge"' "$d/decision.json"
expect_grep "drift: unsteady samples counted" '"unsteady_samples": [1-9]' "$d/performance/summary.json"
expect_grep "drift: reason says power/temperature" 'improves 1[0-9][.][0-9]+ % \([0-9.]+ -> [0-9.]+ ms, -[0-9.]+ ms; needs 8 %\), [1-9][0-9]* unsteady sample\(s\) \(power/temperature not steady\)' "$d/decision.md"

# 9. a sided trace: the target family 20 % cheaper, the graph flat: investigate
d=$(fresh inv); edit "$d" '
scale("candidate", 1.07)
rows = ["side,chip,layer,op,family,start_cycle,end_cycle,bytes,tokens"]
for side, moe in (("baseline", 14000), ("candidate", 11200)):
    t = 0
    for chip in (0, 1):
        for layer in range(4):
            for fam, cyc in (("moe_gate", 900), ("grouped_moe_dense", moe), ("attention", 40000)):
                tok = str(layer * 5) if fam == "grouped_moe_dense" else ""
                rows.append(f"{side},{chip},{layer},op{layer},{fam},{t},{t + cyc},{cyc * 4},{tok}")
                t += cyc + 50
open(os.path.join(d, "performance/raw-device-trace.csv"), "w").write("\n".join(rows) + "\n")'
decide "$d" >/dev/null
expect_grep "investigate: label" '"decision": "investigate"' "$d/decision.json"
expect_grep "investigate: target cycles both sides" 'Target family grouped\\_moe\\_dense: 112000 -> 89600 cycles \(-22400, -20.00 %\)' "$d/decision.md"
expect_grep "investigate: moe buckets in the summary" '"bucket": "9-16"' "$d/performance/summary.json"
$PY - "$d/performance/summary.json" <<'PY'
import json, sys
t = json.load(open(sys.argv[1]))["trace"]
row = [r for r in t["per_chip"] if r["side"] == "baseline" and r["chip"] == 0 and r["family"] == "grouped_moe_dense"]
print("ok investigate: per-chip cycles and bytes" if row == [dict(side="baseline", chip=0, family="grouped_moe_dense", ops=4, cycles=56000, bytes=224000)] else f"not ok per-chip {row}")
b = {(r["side"], r["bucket"]): r for r in t["moe_buckets"]}
# candidate layers 2 and 3 (10 and 15 tokens) on two chips: 4 launches of 11200 cycles, 50 tokens
r = b[("candidate", "9-16")]
print("ok investigate: bucket cycles per token" if (r["launches"], r["tokens"], r["cycles"], r["cycles_per_token"]) == (4, 50, 44800, 896) else f"not ok bucket {r}")
s = {r["side"]: r for r in t["target_share"]}
print("ok investigate: target share" if abs(s["baseline"]["share"] - 112000 / (112000 + 7200 + 320000)) < 1e-6 else f"not ok share {s}")
PY

# 10. whole-graph timing only (a device trace without rows): a soak may follow, never a
# kernel's credit (no trace file at all fails manifest-verify's layout rule: exit 2)
d=$(fresh whole); echo "chip,layer,op,family,start_cycle,end_cycle" > "$d/performance/raw-device-trace.csv"
edit "$d" 'scale("candidate", 0.88)'
decide "$d" >/dev/null
expect_grep "whole graph: soak" '"decision": "soak_24h"' "$d/decision.json"
expect_grep "whole graph: attribution" '"attribution": "whole_graph_only"' "$d/decision.json"
expect_grep "whole graph: the whole-graph candidate is faster" 'whole-graph candidate is faster' "$d/decision.md"
if grep -q 'Target family' "$d/decision.md"; then notok "whole graph: no kernel credited"; else ok "whole graph: no kernel credited"; fi

# 10b. CSV trace, the candidate side without the target family, the graph flat (as in 9): the
# family is not measured on the candidate (never 0 cycles, never "-100 %"): bottleneck_moved does
# not fire, otherwise -> no_merge; the uncertainty names the family.
d=$(fresh csv-one-side); edit "$d" '
scale("candidate", 1.07)
rows = ["side,chip,family,start_cycle,end_cycle"]
for side in ("baseline", "candidate"):
    for chip in (0, 1):
        rows.append(f"{side},{chip},attention,0,40000")
        if side == "baseline":
            rows.append(f"{side},{chip},grouped_moe_dense,40000,54000")
open(os.path.join(d, "performance/raw-device-trace.csv"), "w").write("\n".join(rows) + "\n")'
decide "$d" >/dev/null
expect_grep "csv one side: no_merge" '"decision": "no_merge"' "$d/decision.json"
expect_grep "csv one side: uncertain names the family" 'does not carry the grouped_moe_dense family on both sides' "$d/decision.json"
expect_grep "csv one side: bottleneck not evaluated" 'not evaluated: the device trace does not give' "$d/decision.md"
# 10c. CSV trace over chips 0 and 1 on the baseline, chip 0 only on the candidate: no per-op
# attribution (whole_graph_only), the chips named as uncertain.
d=$(fresh csv-chips); edit "$d" '
scale("candidate", 0.88)
rows = ["side,chip,family,start_cycle,end_cycle"]
for side, chips in (("baseline", (0, 1)), ("candidate", (0,))):
    for chip in chips:
        rows += [f"{side},{chip},attention,0,40000", f"{side},{chip},grouped_moe_dense,40000,54000"]
open(os.path.join(d, "performance/raw-device-trace.csv"), "w").write("\n".join(rows) + "\n")'
decide "$d" >/dev/null
expect_grep "csv chips differ: attribution" '"attribution": "whole_graph_only"' "$d/decision.json"
expect_grep "csv chips differ: uncertain names the chips" 'chip\(s\) 0, 1 on the baseline and chip\(s\) 0 on the candidate' "$d/decision.json"
if grep -q 'Target family' "$d/decision.md"; then notok "csv chips differ: no kernel credited"; else ok "csv chips differ: no kernel credited"; fi

# 11. section 8.4 for fused matmul/add: graph +12 % but target GEMM only 5 % better: no soak
d=$(fresh gemm); mv "$d" gemm/OP-GEMM-0001; d=gemm/OP-GEMM-0001; edit "$d" '
scale("candidate", 0.88)
for rel in ("hypothesis.yaml", "accuracy/result.json", "baseline/manifest.json", "candidate/manifest.json"):
    sub(rel, "OP-MOE-0001", "OP-GEMM-0001")
sub("hypothesis.yaml", "operator_family: grouped_moe_dense", "operator_family: fused_matmul_add")
rows = ["side,chip,family,start_cycle,end_cycle"]
for side, g in (("baseline", 10000), ("candidate", 9500)):
    rows += [f"{side},0,fused_matmul_add,0,{g}", f"{side},0,attention,{g},{g + 5000}"]
open(os.path.join(d, "performance/raw-device-trace.csv"), "w").write("\n".join(rows) + "\n")'
decide "$d" >/dev/null
expect_grep "8.4: no_merge" '"decision": "no_merge"' "$d/decision.json"
expect_grep "8.4: reason" 'section 8.4: the target GEMM cycles must improve by 8 %' "$d/decision.md"
expect_grep "8.4: deployment figures missing noted" 'weight package size, load time or DRAM' "$d/decision.md"
edit "$d" '
for side, w in (("baseline", 1000), ("candidate", 900)):
    p = os.path.join(d, side, "manifest.json"); m = json.load(open(p))
    m["calbin"].update(weight_package_bytes=w, load_time_ms=w / 100, dram_reservation_bytes=2 * w)
    json.dump(m, open(p, "w"), indent=2)'
exp-gate decide --force "$d" >/dev/null 2>&1
expect_grep "8.4: deployment figures reported" 'weight package: 1000 -> 900 bytes \(-100, -10.00 %\); load time: 10 -> 9 ms \(-1, -10.00 %\); DRAM reservation: 2000 -> 1800 bytes' "$d/decision.md"
if grep -q 'weight package size, load time or DRAM' "$d/decision.md"; then notok "8.4: no longer listed as missing"; else ok "8.4: no longer listed as missing"; fi

# 12. missing input: exit 2, named
d=$(fresh missing); rm "$d/accuracy/result.json"
expect_exit "missing accuracy: exit 2" 2 exp-gate decide "$d"
expect_grep "missing accuracy: named" 'accuracy/result.json' err.txt

# 13. a hand-written decision.md that differs is kept unless --force
d=$(fresh hand); printf '# OP-MOE-0001: decision\n\nSoak it.\n' > "$d/decision.md"
expect_exit "hand-written decision.md: refused" 2 exp-gate decide "$d"
expect_grep "hand-written: says what differs" 'line 3 is "Soak it.", exp-gate would write' err.txt
expect_grep "hand-written: kept" 'Soak it' "$d/decision.md"
expect_absent "hand-written: no decision.json either" "$d/decision.json"
expect_exit "hand-written: --force replaces" 1 exp-gate decide --force "$d"
expect_exit "same text again: no --force needed" 1 exp-gate decide "$d"

# 14. summarize, then tampered summaries are caught by --check (and decide refuses them)
d=$(fresh tamper)
expect_exit "summarize writes" 0 exp-gate summarize --bootstrap 500 "$d"
expect_exit "summarize refuses to replace" 2 exp-gate summarize "$d"
expect_exit "check: fresh summary follows" 0 exp-gate summarize --check "$d"
cp "$d/performance/summary.json" good.json
t() { # t NAME PYTHON-EDIT-OF-s PATTERN
    cp good.json "$d/performance/summary.json"
    $PY - "$d/performance/summary.json" "$2" <<'PY'
import json, sys
p = sys.argv[1]; s = json.load(open(p)); exec(sys.argv[2]); json.dump(s, open(p, "w"), indent=2)
PY
    exp-gate summarize --check "$d" > out.txt 2> err.txt; _rc=$?
    if [ $_rc -eq 1 ] && grep -Eq -- "$3" out.txt; then ok "tamper: $1"; else
        notok "tamper: $1" "exit $_rc; $(head -c 300 out.txt)"; fi
}
t "median" 's["cases"][0]["candidate"]["median"] -= 0.05' 'case prefill-p128-o1 metric ttft_ms: field /cases/0/candidate/median'
t "coarse rounding" 'c = s["cases"][0]["baseline"]; c["median"] = round(c["median"], 1)' 'field /cases/0/baseline/median'
t "p99 hidden" 's["cases"][0]["candidate"]["p99"] = s["cases"][0]["candidate"]["p90"]' 'field /cases/0/candidate/p99'
t "population std" 'c = s["cases"][0]["baseline"]; c["std"] = c["std"] * (29 / 30) ** 0.5' 'field /cases/0/baseline/std'
t "n" 's["cases"][3]["baseline"]["n"] = 31' 'field /cases/3/baseline/n'
t "ci" 's["cases"][1]["candidate"]["ci95"][1] += 0.01' 'field /cases/1/candidate/ci95/1'
t "case dropped" 's["cases"] = [c for c in s["cases"] if c["case_id"] != "prefill-p512-o1"]' 'case prefill-p512-o1: measured in the raw data but missing'
t "invented case" 'import copy; c = copy.deepcopy(s["cases"][0]); c["case_id"] = "x"; s["cases"].append(c)' 'case x metric ttft_ms: no such case'
t "unsteady count" 's["unsteady_samples"] = 3' 'field /unsteady_samples'
t "delta_pct" 's["cases"][0]["delta_pct"] = -12.0' 'field /cases/0/delta_pct'
t "trace cycles" 's["trace"]["per_chip"][0]["cycles"] += 1' 'field /trace/per_chip/0/cycles'
# a stored seed the schema's pattern admits (20 digits) but no uint64 holds: read strictly
# (issue 24), an error at its place; strtoull made it 18446744073709551615 without a word
cp good.json "$d/performance/summary.json"
$PY - "$d/performance/summary.json" <<'PY'
import json, sys
p = sys.argv[1]; s = json.load(open(p)); s["bootstrap"]["seed"] = "99999999999999999999"; json.dump(s, open(p, "w"), indent=2)
PY
expect_exit "check: a 20-digit seed past uint64 is an error" 2 exp-gate summarize --check "$d"
expect_grep "... at its place" 'summary.json:[0-9]+:[0-9]+: bootstrap.seed "99999999999999999999" is not a 64-bit seed \(does not fit the type\)' err.txt
expect_exit "decide: the same" 2 exp-gate decide "$d"
expect_grep "decide: the same, named" 'is not a 64-bit seed' err.txt
cp good.json "$d/performance/summary.json"
$PY - "$d/performance/summary.json" <<'PY'
import json, sys
p = sys.argv[1]; s = json.load(open(p)); s["cases"][0]["candidate"]["median"] -= 1; json.dump(s, open(p, "w"))
PY
expect_exit "decide refuses a tampered summary" 2 exp-gate decide "$d"
expect_grep "decide names the field" 'field /cases/0/candidate/median' err.txt
rm "$d/performance/raw-requests.jsonl"
expect_exit "check without raw data: exit 2" 2 exp-gate summarize --check "$d"

# 15. the matrix, in section 19's order whatever the order given
d1=$(fresh m1); d2=$(fresh m2)
# a planned experiment: its hypothesis alone (manifest-verify's planned layout)
mkdir m2/HOST-LOGITS-0001; mv "$d2/hypothesis.yaml" m2/HOST-LOGITS-0001/; rm -rf "$d2"; d2=m2/HOST-LOGITS-0001
edit "$d2" 'sub("hypothesis.yaml", "experiment_id: OP-MOE-0001", "experiment_id: HOST-LOGITS-0001"); sub("hypothesis.yaml", "status: decided", "status: planned"); sub("hypothesis.yaml", "operator_family: grouped_moe_dense", "operator_family: logits_sampling")'
exp-gate decide "$d1" >/dev/null 2>&1
expect_exit "matrix: exit 0" 0 exp-gate matrix --json m.json --markdown m.md "$d1" "$d2"
$PY - m.json <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))
ids = [e["experiment_id"] for e in m["experiments"]]
print("ok matrix: section 19 order" if ids == ["HOST-LOGITS-0001", "OP-MOE-0001"] else f"not ok matrix order {ids}")
e = m["experiments"][1]
print("ok matrix: conclusion from decision.json" if e["conclusion"] == "no_merge (rule otherwise)" else f"not ok matrix conclusion {e['conclusion']}")
print("ok matrix: pending without a decision" if m["experiments"][0]["conclusion"].startswith("pending") else "not ok matrix pending")
PY
expect_grep "matrix markdown row" '^\| OP-MOE-0001 \| a lower expert bucket threshold' m.md
expect_exit "matrix refuses to overwrite" 2 exp-gate matrix --json m.json "$d1"

# 16. manifest-verify runs the check as its rule summary-follows when raw data is present
rm -rf mv && mkdir mv && cp -R "$EX" mv/OP-MOE-0001 && rm mv/OP-MOE-0001/SHA256SUMS
expect_exit "manifest-verify: the example's summary follows" 0 manifest-verify mv/OP-MOE-0001
$PY - mv/OP-MOE-0001/performance/summary.json <<'PY'
import json, sys
p = sys.argv[1]; s = json.load(open(p)); s["cases"][0]["candidate"]["p99"] -= 0.5; json.dump(s, open(p, "w"), indent=2)
PY
expect_exit "manifest-verify: tampered P99 fails" 1 manifest-verify mv/OP-MOE-0001
expect_grep "manifest-verify: rule summary-follows names the field" 'summary-follows.*field /cases/0/candidate/p99|field /cases/0/candidate/p99.*summary-follows' out.txt
manifest-verify --junit mv.xml mv/OP-MOE-0001 > /dev/null 2>&1
expect_grep "manifest-verify: JUnit carries the summary-follows failure" 'name="summary-follows"' mv.xml
expect_grep "manifest-verify: JUnit counts it" 'failures="1"' mv.xml

# 17. the command-line layer (issue 9): machine output alone on stdout, stdout checked,
# one-line usage errors, outputs under the layer's rules
d=$(fresh cli)
expect_exit "html to stdout: exit is the label's" 1 exp-gate decide --html - "$d"
if head -n 1 out.txt | grep -q '^<!DOCTYPE html>' && tail -n 1 out.txt | grep -q '</html>$' &&
   ! grep -q 'no_merge (rule' out.txt; then ok "html to stdout: the page alone"; else
    notok "html to stdout: the page alone" "$(head -c 80 out.txt) ... $(tail -c 80 out.txt)"; fi
if [ -s err.txt ]; then notok "html to stdout: nothing on stderr" "$(cat err.txt)"; else
    ok "html to stdout: nothing on stderr"; fi
expect_grep "html to stdout: decision.json still written" '"decision": "no_merge"' "$d/decision.json"
expect_exit "decision line to /dev/full: exit 2" 2 sh -c 'exp-gate decide "$1" > /dev/full' sh "$d"
expect_grep "decision line to /dev/full: said once" '^exp-gate: -: cannot write to standard output' err.txt
expect_lines "decision line to /dev/full: one line" 1 err.txt
expect_exit "matrix markdown to /dev/full: exit 2" 2 sh -c 'exp-gate matrix "$1" > /dev/full' sh "$d"
expect_exit "quiet decide: label in the status" 1 exp-gate decide -q "$d"
if [ -s out.txt ]; then notok "quiet decide: no output" "$(cat out.txt)"; else ok "quiet decide: no output"; fi
expect_exit "html to /dev/null: no --force needed" 1 exp-gate decide --html /dev/null "$d"
expect_exit "check is summarize's" 2 exp-gate decide --check "$d"
expect_lines "check is summarize's: one line" 1 err.txt
expect_grep "check is summarize's: the layer's usage line" "^exp-gate: usage: unknown option '--check' \(see exp-gate --help\)$" err.txt
expect_exit "no subcommand: exit 2" 2 exp-gate
expect_grep "no subcommand: usage line" '^exp-gate: usage: a subcommand is required' err.txt
expect_exit "two folders for decide: exit 2" 2 exp-gate decide "$d" "$d"
expect_grep "two folders: usage line" '^exp-gate: usage: one experiment folder is required \(see exp-gate --help\)$' err.txt
expect_exit "bad --bootstrap: exit 2" 2 exp-gate summarize --bootstrap 0 "$d"
expect_grep "bad --bootstrap: usage line" "^exp-gate: usage: --bootstrap: expected an integer >= 1, got '0'" err.txt
# the typed table (issue 24): a seed is a whole uint64, read strictly; 0 means 0
for bad in 99999999999999999999999 1e23 -1 " 5" 18446744073709551616; do
    expect_exit "bad --seed '$bad': exit 2" 2 exp-gate summarize --seed "$bad" "$d"
    expect_grep "bad --seed '$bad': usage line" "^exp-gate: usage: --seed: expected an integer from 0 to 18446744073709551615, got '$bad'" err.txt
    expect_lines "bad --seed '$bad': one line" 1 err.txt
done
expect_exit "bad --clock-band 1e999" 2 exp-gate decide --clock-band 1e999 "$d"
expect_grep "bad --clock-band 1e999: why" "^exp-gate: usage: --clock-band: expected a number >= 0, got '1e999' \\(does not fit the type\\)" err.txt
expect_exit "bad --memory 512K: under 1 MiB" 2 exp-gate summarize --memory 512K "$d"
d0=$(fresh seed0)
expect_exit "--seed 0 --bootstrap 200: written" 0 exp-gate summarize --seed 0 --bootstrap 200 --memory 1G "$d0"
$PY - "$d0/performance/summary.json" > seed0.txt <<'PY'
import json, sys
print(json.load(open(sys.argv[1]))["bootstrap"])
PY
expect_grep "--seed 0 means seed 0" "'seed': '0'" seed0.txt
expect_grep "--bootstrap 200 kept" "'resamples': 200" seed0.txt
expect_exit "matrix: two outputs on stdout refused" 2 exp-gate matrix --json - --markdown - "$d"
expect_exit "matrix: JSON alone on stdout" 0 exp-gate matrix --json - "$d"
expect_grep "matrix: JSON alone on stdout: schema" '"schema": "calculet-evidence-matrix/v1"' out.txt
if grep -q '^| experiment' out.txt; then notok "matrix: no Markdown with --json -"; else ok "matrix: no Markdown with --json -"; fi
expect_exit "decide --json refused" 2 exp-gate decide --json d.json "$d"
expect_absent "decide --json refused: nothing written" d.json
expect_exit "summarize --junit refused" 2 exp-gate summarize --junit m.xml "$d"
echo x > taken.md
expect_exit "matrix: existing markdown kept without -f" 2 exp-gate matrix --markdown taken.md "$d"
expect_exit "matrix: -f replaces it" 0 exp-gate matrix -f --markdown taken.md "$d"
expect_grep "matrix: -f replaced it" '^# Operator evidence matrix' taken.md
