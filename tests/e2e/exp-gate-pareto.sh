# exp-gate pareto (handbook section 16.2): five single-group fallback folders built from the
# example experiment, whose frontier is worked out by hand:
#   point  task gain  capacity  candidate TTFT x   frontier?
#   0101   0.010      +100 B    1.00               yes
#   0102   0.020      +300 B    1.00               yes
#   0103   0.005      +200 B    1.00               no: 0101 has more gain, less capacity, same latency
#   0104   0.020      +300 B    1.10               no: 0102 has the same gain and capacity, less latency
#   0105   0.030      +500 B    1.20               yes: the most gain
# latency cost = the worst graph-level case's median delta: the example's prefill-p128-o1
# (10.564137 -> 9.852746 ms, -6.734019 %) at factor 1.00.
. "$GOLDEN_ROOT/tests/e2e/lib.sh"
EX="$GOLDEN_ROOT/examples/experiment/OP-MOE-0001"
PY=/usr/bin/python3
command -v $PY >/dev/null 2>&1 || PY=python3

# mk NAME GAIN CAPACITY FACTOR: a copy of the example as experiment NAME.
mk() {
    $PY - "$EX" "$@" <<'PY'
import json, os, shutil, sys
ex, name, gain, cap, f = sys.argv[1], sys.argv[2], float(sys.argv[3]), int(sys.argv[4]), float(sys.argv[5])
d = name
shutil.rmtree(d, ignore_errors=True)
shutil.copytree(ex, d)
for rel in ("performance/summary.json", "decision.md", "decision.json", "SHA256SUMS"):
    if os.path.exists(os.path.join(d, rel)):
        os.remove(os.path.join(d, rel))
for rel in ("baseline/manifest.json", "accuracy/result.json", "hypothesis.yaml", "candidate/manifest.json"):
    p = os.path.join(d, rel); t = open(p).read(); open(p, "w").write(t.replace("OP-MOE-0001", name))
for side, w in (("baseline", 1000), ("candidate", 1000 + cap)):
    p = os.path.join(d, side, "manifest.json"); m = json.load(open(p))
    m["calbin"]["weight_package_bytes"] = w
    json.dump(m, open(p, "w"), indent=2)
p = os.path.join(d, "accuracy/result.json"); a = json.load(open(p))
a["task"]["baseline"] = 0.7; a["task"]["candidate"] = round(0.7 + gain, 6)
json.dump(a, open(p, "w"), indent=2)
raw = os.path.join(d, "performance/raw-requests.jsonl")
rs = [json.loads(l) for l in open(raw) if l.strip()]
for r in rs:
    if r["side"] == "candidate" and not r["warmup"]:
        r["ttft_ms"] = round(r["ttft_ms"] * f, 6)
with open(raw, "w") as o:
    for r in rs:
        o.write(json.dumps(r) + "\n")
PY
}

mk OP-MOE-0101 0.010 100 1.00
mk OP-MOE-0102 0.020 300 1.00
mk OP-MOE-0103 0.005 200 1.00
mk OP-MOE-0104 0.020 300 1.10
mk OP-MOE-0105 0.030 500 1.20
ALL="OP-MOE-0101 OP-MOE-0102 OP-MOE-0103 OP-MOE-0104 OP-MOE-0105"

# field FILE EXPR: a Python expression over p (the document) and pt (points by id)
field() {
    $PY -c 'import json,sys; p=json.load(open(sys.argv[1])); pt={x["experiment_id"]: x for x in p["points"]}; print(eval(sys.argv[2]))' "$1" "$2"
}

expect_exit "five folders: exit 0" 0 exp-gate pareto --json p.json --html p.html $ALL
expect_exit "the document is calculet-pareto/v1" 0 schema-check p.json calculet-pareto/v1
f=$(field p.json '",".join(sorted(i for i in pt if pt[i]["frontier"]))')
[ "$f" = "OP-MOE-0101,OP-MOE-0102,OP-MOE-0105" ] && ok "frontier is 0101, 0102, 0105" || notok "frontier is 0101, 0102, 0105" "$f"
f=$(field p.json 'pt["OP-MOE-0103"]["dominated_by"]')
[ "$f" = "['OP-MOE-0101']" ] && ok "0103 dominated by 0101 alone" || notok "0103 dominated by 0101 alone" "$f"
f=$(field p.json 'pt["OP-MOE-0104"]["dominated_by"]')
[ "$f" = "['OP-MOE-0102']" ] && ok "0104 dominated by 0102 alone (same gain and capacity, slower)" || notok "0104 dominated by 0102" "$f"
f=$(field p.json '"%.6f %.0f %.6f" % (pt["OP-MOE-0101"]["latency_cost_pct"], pt["OP-MOE-0105"]["capacity_cost_bytes"], pt["OP-MOE-0102"]["task_recovered"])')
[ "$f" = "-6.734019 500 0.020000" ] && ok "costs and gain re-derived (latency from the raw data)" || notok "costs and gain re-derived" "$f"
# latency grows with the factor: 1.10 and 1.20 of the candidate's TTFT
f=$(field p.json 'pt["OP-MOE-0101"]["latency_cost_pct"] < pt["OP-MOE-0104"]["latency_cost_pct"] < pt["OP-MOE-0105"]["latency_cost_pct"]')
[ "$f" = True ] && ok "latency cost follows the slowed candidates" || notok "latency cost follows the slowed candidates" "$f"
# recommendation: frontier by gain (0105, 0102, 0101), all within no budget
f=$(field p.json 'p["recommended"]')
[ "$f" = "['OP-MOE-0105', 'OP-MOE-0102', 'OP-MOE-0101']" ] && ok "no budget: the whole frontier, best gain first" || notok "no budget: whole frontier" "$f"
expect_exit "budget 800 B" 0 exp-gate pareto --capacity-budget 800 --json b800.json $ALL
f=$(field b800.json 'p["recommended"], p["recommended_capacity_bytes"]')
[ "$f" = "(['OP-MOE-0105', 'OP-MOE-0102'], 800.0)" ] && ok "budget 800 B: 0105 + 0102 = 800 B, 0101 would be 900" || notok "budget 800 B" "$f"
expect_exit "budget 600 B" 0 exp-gate pareto --capacity-budget 600 --json b600.json $ALL
f=$(field b600.json 'p["recommended"], pt["OP-MOE-0102"]["not_recommended"]')
[ "$f" = "(['OP-MOE-0105', 'OP-MOE-0101'], 'over the capacity budget')" ] && ok "budget 600 B: 0105 + 0101, 0102 over" || notok "budget 600 B" "$f"
expect_exit "latency budget -100 %" 0 exp-gate pareto --latency-budget -100 --json lat.json $ALL
f=$(field lat.json 'p["recommended"]')
[ "$f" = "[]" ] && ok "latency budget no point meets: nothing recommended" || notok "latency budget" "$f"
# the table and the picture name every experiment
exp-gate pareto $ALL > table.txt 2>&1
expect_lines "table: one line per point, header, recommendation" 7 table.txt
expect_grep "table: 0103 dominated" 'OP-MOE-0103 .* no .*dominated by OP-MOE-0101' table.txt
n=$(grep -c '<circle class="pt frontier"' p.html); m=$(grep -c '<circle class="pt dominated"' p.html)
[ "$n $m" = "3 2" ] && ok "picture: 3 frontier points, 2 dominated" || notok "picture: 3 frontier, 2 dominated" "$n $m"
expect_grep "picture: points named" 'data-id="OP-MOE-0104"' p.html
expect_grep "picture: frontier labelled" '<text class="label"[^>]*>OP-MOE-0105</text>' p.html

# ties: a sixth point equal to 0101 on every axis dominates nothing and is not dominated
mk OP-MOE-0106 0.010 100 1.00
expect_exit "tie: exit 0" 0 exp-gate pareto --json tie.json $ALL OP-MOE-0106
f=$(field tie.json 'pt["OP-MOE-0106"]["frontier"], pt["OP-MOE-0101"]["frontier"], pt["OP-MOE-0103"]["dominated_by"]')
[ "$f" = "(True, True, ['OP-MOE-0101', 'OP-MOE-0106'])" ] && ok "tie: both equal points on the frontier" || notok "tie" "$f"

# top1 axis: every point has the example's 0.9995; all tie on quality, so capacity and
# latency decide: only 0101 (least capacity, least latency) is on the frontier
expect_exit "top1 axis" 0 exp-gate pareto --quality top1 --json t1.json $ALL
f=$(field t1.json '",".join(sorted(i for i in pt if pt[i]["frontier"]))')
[ "$f" = "OP-MOE-0101" ] && ok "top1 axis: 0101 alone" || notok "top1 axis" "$f"
# kl axis: the example's accuracy result names no golden-diff report: could not check
expect_exit "kl axis without reports: exit 2" 2 exp-gate pareto --quality kl --json kl.json $ALL
exp-gate pareto --quality kl $ALL 2> err.txt >/dev/null
expect_grep "kl: says what is missing" 'OP-MOE-0101/accuracy/result.json: no kl_mean in the reports it names' err.txt
expect_absent "kl: no partial output" kl.json

# refused folders: never plotted
mk OP-MOE-0107 0.010 100 1.00
printf 'tampered' >> OP-MOE-0107/candidate/qwen3-30b-a3b-prefill.calbin
exp-gate pareto --json bad.json $ALL OP-MOE-0107 > out.txt 2> err.txt; rc=$?
[ $rc = 2 ] && ok "a folder failing manifest-verify: exit 2" || notok "failing folder: exit 2" "exit $rc"
expect_grep "refused: names folder and rule" 'OP-MOE-0107.*manifest-verify rule .*folder refused, not plotted' err.txt
expect_absent "refused: no document" bad.json
mk OP-MOE-0108 0.010 100 1.00
$PY - <<'PY'
p = "OP-MOE-0108/accuracy/result.json"; t = open(p).read()
open(p, "w").write(t.replace('"top1_match": 0.9995', '"top1_match": 0.5'))
PY
exp-gate pareto $ALL OP-MOE-0108 > out.txt 2> err.txt; rc=$?
[ $rc = 2 ] && ok "accuracy contradicting its bound (accuracy-agrees): refused" || notok "accuracy-agrees refused" "exit $rc: $(cat err.txt)"
mk OP-MOE-0109 0.010 100 1.00
$PY - <<'PY'
import json
p = "OP-MOE-0109/candidate/manifest.json"; m = json.load(open(p)); del m["calbin"]["weight_package_bytes"]
json.dump(m, open(p, "w"), indent=2)
PY
exp-gate pareto $ALL OP-MOE-0109 > out.txt 2> err.txt; rc=$?
[ $rc = 2 ] && ok "no capacity figure: exit 2" || notok "no capacity figure: exit 2" "exit $rc"
expect_grep "no capacity figure: named" 'OP-MOE-0109/candidate/manifest.json: capacity cost unknown' err.txt
expect_exit "same folder twice: exit 2" 2 exp-gate pareto OP-MOE-0101 OP-MOE-0101
expect_exit "no folder: usage" 2 exp-gate pareto
expect_exit "--junit refused" 2 exp-gate pareto --junit j.xml $ALL
expect_exit "unknown axis refused" 2 exp-gate pareto --quality cosine $ALL
