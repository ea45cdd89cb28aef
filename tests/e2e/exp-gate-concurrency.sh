# exp-gate by concurrency level, with throughput beside latency (issue 33). Every folder is the
# example experiment with its raw requests replaced by ones generated here: both cases at
# concurrency 1 and 4 (4 requests in flight on 4 lanes), the level-4 latencies about 3x the
# level-1 ones, the candidate 15 % faster at both levels. numpy computes the expected
# percentiles per (case, level, side) and this script the throughput over each wall window
# (earliest client_queue.start_ns to latest stream_flush.end_ns of the measured requests), from
# the generated numbers, never from exp-gate's output.
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

# gen DIR CODE: write DIR's raw requests (levels 1 and 4, both sides, both cases) and the
# expected figures (DIR/../expect.json), then run CODE (edits of the lines list `rs`).
gen() {
    $PY - "$1" "$2" <<'PY'
import json, sys, os
import numpy as np
d, code = sys.argv[1], sys.argv[2]
rng = np.random.default_rng(33)
STAGES = ["client_queue", "service_queue", "input_prepare", "h2d", "npu_wait", "d2h",
          "logits_conversion", "sampling", "stream_flush"]
BASE = {"prefill-p128-o1": 10.0, "prefill-p512-o1": 37.0}
rs = []
t0 = 10**9
for case, ms in BASE.items():
    for side, f in (("baseline", 1.0), ("candidate", 0.85)):
        for level in (1, 4):
            lanes = [t0] * level
            for run in range(40):          # 10 warm-ups, 30 measured
                dur_ns = int(round(ms * f * (3.0 if level == 4 else 1.0)
                                   * (1 + 0.02 * rng.standard_normal()) * 1e6))
                lane = min(range(level), key=lambda k: lanes[k])
                start = lanes[lane]
                cuts = sorted(rng.integers(1, dur_ns, 8).tolist())
                marks = [start] + [start + c for c in cuts] + [start + dur_ns]
                st = {STAGES[i]: {"start_ns": marks[i], "end_ns": marks[i + 1]} for i in range(9)}
                lanes[lane] = start + dur_ns + (5_000_000 if level == 1 else 200_000)
                rs.append({"schema": "calculet-raw-request/v1",
                           "request_id": f"{side}-{case}-c{level}-{run:03d}", "case_id": case,
                           "side": side, "run": run, "warmup": run < 10, "steady": True,
                           "concurrency": level, "output_tokens": int(1 + run % 3),
                           "ttft_ms": dur_ns / 1e6, "stages": st})
            t0 = max(lanes) + 50_000_000
exec(code)
with open(os.path.join(d, "performance/raw-requests.jsonl"), "w") as fo:
    for r in rs:
        fo.write(json.dumps(r) + "\n")
# the expected figures per (case, level, side): numpy's percentiles, the window's throughput
exp = {}
for r in rs:
    if r.get("warmup"):
        continue
    k = "%s|%s|%s" % (r["case_id"], r.get("concurrency", 1), r["side"])
    e = exp.setdefault(k, {"v": [], "s": [], "e": [], "tok": 0, "n": 0, "tok_missing": 0})
    e["v"].append(r["ttft_ms"]); e["n"] += 1
    e["s"].append(r["stages"]["client_queue"]["start_ns"])
    e["e"].append(r["stages"]["stream_flush"]["end_ns"])
    if "output_tokens" in r: e["tok"] += r["output_tokens"]
    else: e["tok_missing"] += 1
out = {}
for k, e in exp.items():
    v = np.array(e["v"]); win = (max(e["e"]) - min(e["s"])) / 1e9
    out[k] = {"n": len(v), "median": float(np.percentile(v, 50)),
              "p90": float(np.percentile(v, 90)), "p99": float(np.percentile(v, 99)),
              "requests_per_s": e["n"] / win,
              "output_tokens_per_s": None if e["tok_missing"] else e["tok"] / win,
              "window_ms": win * 1e3}
json.dump(out, open(os.path.join(os.path.dirname(d), "expect.json"), "w"))
PY
}

# agree DIR: every expected (case, level, side) matches the summary's ttft_ms entry and
# throughput row (within the summary's 6-decimal rounding); prints what differs.
agree() {
    $PY - "$1" <<'PY'
import json, sys, os
d = sys.argv[1]
exp = json.load(open(os.path.join(os.path.dirname(d), "expect.json")))
s = json.load(open(os.path.join(d, "performance/summary.json")))
bad = []
def close(a, b):
    if a is None or b is None: return a is None and b is None
    return abs(a - b) <= 2e-6 * max(1.0, abs(b))
for k, e in exp.items():
    case, level, side = k.split("|"); level = int(level)
    cs = [c for c in s["cases"] if c["case_id"] == case and c.get("concurrency", 1) == level
          and c["metric"] == "ttft_ms"]
    tp = [t for t in s.get("throughput", []) if t["case_id"] == case
          and t["concurrency"] == level and t["side"] == side]
    if len(cs) != 1 or len(tp) != 1:
        bad.append("%s: %d case entries, %d throughput rows" % (k, len(cs), len(tp))); continue
    st = cs[0][side]
    for f in ("n", "median", "p90", "p99"):
        if not close(st[f], e[f]): bad.append("%s %s %s != %s" % (k, f, st[f], e[f]))
    for f in ("requests_per_s", "output_tokens_per_s", "window_ms"):
        if not close(tp[0][f], e[f]): bad.append("%s %s %s != %s" % (k, f, tp[0][f], e[f]))
print("; ".join(bad[:6]) if bad else "agree")
PY
}
field() { $PY -c 'import json,sys; d=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$1" "$2"; }

# 1. two levels on both sides: two rows per case, each matching numpy at its own level (a
#    summary that mixed the levels would give a median between 1x and 3x); soak_24h, because
#    each level is compared with the same level and gains 15 %
d=$(fresh two); gen "$d" 'pass'
expect_exit "two levels: summarize" 0 exp-gate summarize "$d"
r=$(agree "$d")
[ "$r" = agree ] && ok "two levels: percentiles and throughput per level agree with numpy" \
    || notok "two levels: agree with numpy" "$r"
[ "$(field "$d/performance/summary.json" 'sorted((c["case_id"], c["concurrency"]) for c in d["cases"] if c["metric"] == "ttft_ms")')" \
  = "[('prefill-p128-o1', 1), ('prefill-p128-o1', 4), ('prefill-p512-o1', 1), ('prefill-p512-o1', 4)]" ] \
    && ok "two levels: one ttft_ms entry per case and level" \
    || notok "two levels: entries" "$(field "$d/performance/summary.json" '[(c["case_id"], c.get("concurrency")) for c in d["cases"] if c["metric"] == "ttft_ms"]')"
[ "$(field "$d/performance/summary.json" 'len(d["throughput"]), "one_sided" in d')" = "(8, False)" ] \
    && ok "two levels: eight throughput rows, nothing one-sided" \
    || notok "two levels: throughput rows" "$(field "$d/performance/summary.json" 'len(d["throughput"])')"
expect_exit "two levels: summarize --check follows" 0 exp-gate summarize --check "$d"
expect_exit "two levels: decide soak_24h (exit 0)" 0 exp-gate decide "$d"
expect_grep "two levels: decide says soak_24h" 'soak_24h' out.txt
[ "$(field "$d/decision.json" 'sorted((c["case_id"], c["concurrency"], c["candidate_requests_per_s"] > c["baseline_requests_per_s"]) for c in d["cases"])')" \
  = "[('prefill-p128-o1', 1, True), ('prefill-p128-o1', 4, True), ('prefill-p512-o1', 1, True), ('prefill-p512-o1', 4, True)]" ] \
    && ok "two levels: decision.json rows per level with the candidate's higher requests/s" \
    || notok "two levels: decision.json rows" "$(field "$d/decision.json" '[(c["case_id"], c.get("concurrency")) for c in d["cases"]]')"
expect_grep "two levels: decision.md row of level 4 with its throughput" \
    '^\| prefill-p512-o1 \| ttft\\_ms \(graph\) \| 4 \|.* -> .* /s \(\+[0-9.]+ %\) \|' "$d/decision.md"

# the level-4 P99 of one case regressed on the candidate: the P99 rule names the level
d=$(fresh p99); gen "$d" '
for r in rs:
    if r["side"] == "candidate" and r["concurrency"] == 4 and r["case_id"] == "prefill-p128-o1" and r["run"] == 39:
        r["ttft_ms"] = 500.0'
expect_exit "level-4 P99 regression: reject (exit 1)" 1 exp-gate decide "$d"
expect_grep "level-4 P99 regression: the reason names case and level" \
    'worst prefill-p128-o1 at concurrency 4' "$d/decision.md"

# 2. a level measured on one side only: not compared, named, no soak (the other level of the
#    same case and the other case still compare and gain 15 %)
d=$(fresh lone); gen "$d" 'rs = [r for r in rs if not (r["side"] == "candidate" and r["case_id"] == "prefill-p512-o1" and r["concurrency"] == 4)]'
expect_exit "one-sided level: summarize" 0 exp-gate summarize "$d"
[ "$(field "$d/performance/summary.json" 'd["one_sided"]')" = "[{'case_id': 'prefill-p512-o1', 'concurrency': 4, 'side': 'baseline'}]" ] \
    && ok "one-sided level: one_sided names the case, level 4 and the side" \
    || notok "one-sided level: one_sided" "$(field "$d/performance/summary.json" 'd.get("one_sided")')"
[ "$(field "$d/performance/summary.json" 'sorted(c["concurrency"] for c in d["cases"] if c["case_id"] == "prefill-p512-o1" and c["metric"] == "ttft_ms")')" = "[1]" ] \
    && ok "one-sided level: the level-1 entry of the case is still compared" \
    || notok "one-sided level: level 1 kept" "$(field "$d/performance/summary.json" '[c.get("concurrency") for c in d["cases"] if c["case_id"] == "prefill-p512-o1"]')"
expect_exit "one-sided level: decide no_merge (exit 1)" 1 exp-gate decide "$d"
expect_grep "one-sided level: no soak, the comparison named incomplete" \
    'graph_gain` -> soak_24h: not met: .*the comparison is incomplete: 1 case\(s\) measured on one side only \(first: prefill-p512-o1 at concurrency 4 on the baseline side\)' "$d/decision.md"
expect_grep "one-sided level: listed under uncertain" \
    'measured on one side only: not compared \(prefill-p512-o1 at concurrency 4\)' "$d/decision.md"
# the same case at different levels on the two sides is no pair: both one-sided
d=$(fresh cross); gen "$d" 'rs = [r for r in rs if not (r["case_id"] == "prefill-p512-o1" and r["concurrency"] == (1 if r["side"] == "baseline" else 4))]'
expect_exit "levels crossed: summarize" 0 exp-gate summarize "$d"
[ "$(field "$d/performance/summary.json" 'sorted((o["concurrency"], o["side"]) for o in d["one_sided"]), [c["concurrency"] for c in d["cases"] if c["case_id"] == "prefill-p512-o1"]')" \
  = "([(1, 'candidate'), (4, 'baseline')], [])" ] \
    && ok "levels crossed: level 4 baseline and level 1 candidate are not paired" \
    || notok "levels crossed" "$(field "$d/performance/summary.json" 'd.get("one_sided")')"

# 3. a line without concurrency is level 1: the same summary as with concurrency 1 written
d=$(fresh implicit); gen "$d" '
for r in rs:
    if r["concurrency"] == 1: del r["concurrency"]'
expect_exit "absent concurrency: summarize" 0 exp-gate summarize "$d"
r=$(agree "$d")
[ "$r" = agree ] && ok "absent concurrency: level 1, agrees with numpy" || notok "absent concurrency: level 1" "$r"
$PY - "$d" "$(dirname "$(dirname "$d")")/two/OP-MOE-0001" > cmp.txt <<'PY'
import json, sys
a, b = (json.load(open(p + "/performance/summary.json")) for p in sys.argv[1:3])
print("same" if a["cases"] == b["cases"] and a["throughput"] == b["throughput"] else "differ")
PY
[ "$(cat cmp.txt)" = same ] && ok "absent concurrency: cases and throughput equal to explicit level 1" \
    || notok "absent concurrency: same as explicit 1" "$(cat cmp.txt)"

# 4. a concurrency that is not an integer >= 1: one line naming the place, exit 2, no summary
for bad in 0 -1 2.5 4.0 '"4"' null true; do
    d=$(fresh "bad$bad"); gen "$d" "rs[13][\"concurrency\"] = json.loads('$bad')"
    expect_exit "concurrency $bad: summarize exit 2" 2 exp-gate summarize "$d"
    expect_grep "concurrency $bad: the line and the rule named" \
        '^exp-gate: .*raw-requests.jsonl:14:[0-9]+: concurrency must be an integer >= 1' err.txt
    expect_lines "concurrency $bad: one line" 1 err.txt
    expect_absent "concurrency $bad: no summary written" "$d/performance/summary.json"
done
d=$(fresh baddecide); gen "$d" 'rs[13]["concurrency"] = 0'
expect_exit "concurrency 0: decide exit 2" 2 exp-gate decide "$d"
expect_absent "concurrency 0: decide writes no decision" "$d/decision.json"

# 5. throughput's nulls: an ok measured line without output_tokens makes the tokens/s of its
#    group null (counted), not a smaller number; requests/s stays
d=$(fresh notok); gen "$d" 'del rs[15]["output_tokens"]'
expect_exit "no output_tokens: summarize" 0 exp-gate summarize "$d"
r=$(agree "$d")
[ "$r" = agree ] && ok "no output_tokens: the others agree, tokens/s null" || notok "no output_tokens: agree" "$r"
[ "$(field "$d/performance/summary.json" '[(t["output_tokens"], t["output_tokens_missing"], t["requests_per_s"] is not None) for t in d["throughput"] if t["case_id"] == "prefill-p128-o1" and t["concurrency"] == 1 and t["side"] == "baseline"]')" \
  = "[(None, 1, True)]" ] && ok "no output_tokens: output_tokens null, missing 1, requests/s kept" \
    || notok "no output_tokens: row" "$(field "$d/performance/summary.json" 'd["throughput"][0]')"

# 6. --check matches by level: a stored level-4 median off is named with its level
d=$(fresh check); gen "$d" 'pass'
exp-gate summarize "$d" > /dev/null 2>&1
$PY - "$d/performance/summary.json" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
for c in s["cases"]:
    if c["case_id"] == "prefill-p128-o1" and c["concurrency"] == 4 and c["metric"] == "ttft_ms":
        c["baseline"]["median"] += 1.0
json.dump(s, open(sys.argv[1], "w"))
PY
expect_exit "check: level-4 median off is a finding" 1 exp-gate summarize --check "$d"
expect_grep "check: the finding names the case at concurrency 4" \
    'case prefill-p128-o1 at concurrency 4 metric ttft_ms' out.txt

# 7. a summary from before issue 33 (no concurrency, no throughput) of a level-1 folder still
#    follows: an entry without concurrency is level 1
d=$(fresh old); gen "$d" 'rs = [r for r in rs if r["concurrency"] == 1]'
exp-gate summarize "$d" > /dev/null 2>&1
$PY - "$d/performance/summary.json" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
del s["throughput"]
for c in s["cases"]:
    del c["concurrency"]
json.dump(s, open(sys.argv[1], "w"))
PY
expect_exit "old summary: --check follows" 0 exp-gate summarize --check "$d"
expect_exit "old summary: decide soak_24h on it (exit 0)" 0 exp-gate decide "$d"

# 8. --html: a throughput-and-latency row per case and level (numbers from the summary, checked
#    against numpy's requests/s), and a drift and CDF chart per case and level
d=$(fresh html); gen "$d" 'pass'
expect_exit "html: decide --html soak_24h" 0 exp-gate decide --html page.html "$d"
$PY - page.html "$(dirname "$d")/expect.json" > html.txt <<'PY'
import re, sys, json
t = open(sys.argv[1]).read(); exp = json.load(open(sys.argv[2]))
tab = re.search(r'<table class="sortable" id="throughput">.*?</table>', t, re.S)
bad = []
if not tab:
    bad.append("no throughput table")
else:
    rows = re.findall(r'<tr><td>([^<]+)</td><td data-v="(\d+)">\d+</td><td>[^<]+</td>(.*?)</tr>', tab.group(0))
    got = sorted((r[0], int(r[1])) for r in rows)
    if got != [("prefill-p128-o1", 1), ("prefill-p128-o1", 4), ("prefill-p512-o1", 1), ("prefill-p512-o1", 4)]:
        bad.append("rows %s" % got)
    for case, lv, cells in rows:
        v = [float(x) if x else None for x in re.findall(r'data-v="([^"]*)"', cells)]
        for i, side in ((4, "baseline"), (5, "candidate")):
            e = exp["%s|%s|%s" % (case, lv, side)]["requests_per_s"]
            if v[i] is None or abs(v[i] - e) > 2e-6 * e:
                bad.append("%s@%s %s requests/s %s != %s" % (case, lv, side, v[i], e))
for case in ("prefill-p128-o1", "prefill-p512-o1"):
    for pre in ("drift", "cdf"):
        for sfx in ("", "-c4"):
            if ('data-chart="%s-%s%s"' % (pre, case, sfx)) not in t:
                bad.append("no chart %s-%s%s" % (pre, case, sfx))
print("; ".join(bad[:5]) if bad else "good")
PY
[ "$(cat html.txt)" = good ] && ok "html: throughput rows per level agree with numpy; drift/CDF per level" \
    || notok "html: per level" "$(cat html.txt)"

# 9. the evidence matrix names each graph-level case with its level
d=$(fresh mx); gen "$d" 'pass'
expect_exit "matrix: written" 0 exp-gate matrix --json mx.json "$d"
[ "$(field mx.json 'sorted(o.split(":")[0] for o in d["experiments"][0]["observation"])')" \
  = "['prefill-p128-o1 at concurrency 4 ttft_ms', 'prefill-p128-o1 ttft_ms', 'prefill-p512-o1 at concurrency 4 ttft_ms', 'prefill-p512-o1 ttft_ms']" ] \
    && ok "matrix: observation per case and level" || notok "matrix: observation" "$(field mx.json 'd["experiments"][0]["observation"]' 2>&1 | head -c 300)"
