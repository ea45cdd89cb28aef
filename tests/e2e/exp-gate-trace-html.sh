# exp-gate decide --html: drift (latency against run order) and CDF per side beside the boxes.
# The expected points are computed here from raw-requests.jsonl (python, numpy for the CDF),
# not from exp-gate's own output; a drifting candidate and a timed-out request are built in.
. "$GOLDEN_ROOT/tests/e2e/lib.sh"
EX="$GOLDEN_ROOT/examples/experiment/OP-MOE-0001"
PY=/usr/bin/python3
command -v $PY >/dev/null 2>&1 || PY=python3
rm -rf hd && mkdir hd && cp -r "$EX" hd/OP-MOE-0001; D=hd/OP-MOE-0001
rm -f $D/performance/summary.json $D/decision.json $D/decision.md $D/SHA256SUMS
# the candidate of prefill-p128-o1 drifts: +0.05 ms a run; one of its requests timed out
$PY - $D <<'PY'
import json, sys, os
raw = os.path.join(sys.argv[1], "performance/raw-requests.jsonl")
rs = [json.loads(l) for l in open(raw) if l.strip()]
for r in rs:
    if r["side"] == "candidate" and r["case_id"] == "prefill-p128-o1" and not r["warmup"]:
        r["ttft_ms"] = round(r["ttft_ms"] + 0.05 * r["run"], 6)
        if r["run"] == 20:
            r["outcome"] = "timeout"; del r["ttft_ms"]
open(raw, "w").write("".join(json.dumps(r) + "\n" for r in rs))
PY
exp-gate decide --html r.html $D > out.txt 2> err.txt
case $? in 0|1) ok "html: decide ran";; *) notok "html: decide ran" "$(cat err.txt)";; esac
$PY - r.html $D/performance/raw-requests.jsonl $D/performance/summary.json <<'PY'
import json, sys, math
from html.parser import HTMLParser
import numpy as np
class P(HTMLParser):
    def __init__(s):
        super().__init__(); s.chart = None; s.pts = {}; s.series = {}; s.order = []
    def handle_starttag(s, tag, a):
        a = dict(a)
        if tag == "svg" and "data-chart" in a:
            s.chart = a["data-chart"]; s.order.append(s.chart)
        if tag == "polyline" and s.chart:
            s.series.setdefault(s.chart, []).append((a.get("data-series"), int(a.get("data-points", 0))))
        if tag == "circle" and s.chart and "data-x" in a:
            cls = a["class"].split()
            s.pts.setdefault((s.chart, "s1" in cls), []).append((float(a["data-x"]), float(a["data-y"])))
    def handle_endtag(s, tag):
        if tag == "svg": s.chart = None
p = P(); p.feed(open(sys.argv[1]).read())
rs = [json.loads(l) for l in open(sys.argv[2]) if l.strip()]
summ = json.load(open(sys.argv[3]))
def say(name, cond, why=""):
    print(("ok html: " if cond else "not ok html: ") + name + ("" if cond else ": " + why))
gl = sorted({(c["case_id"], c["metric"]) for c in summ["cases"] if c.get("graph_level")})
say("a drift and a CDF chart per graph-level case", all(f"drift-{c}" in p.order and f"cdf-{c}" in p.order for c, _ in gl) and len(gl) > 0, str(p.order))
say("drift and CDF beside the boxes", p.order.index("latency-ttft_ms") < p.order.index(f"drift-{gl[0][0]}") < p.order.index("stages"))
for cid, m in gl:
    for side, s1 in (("baseline", False), ("candidate", True)):
        meas = sorted((r["run"], r.get(m, math.inf) if r.get("outcome", "ok") == "ok" else math.inf)
                      for r in rs if r["case_id"] == cid and r["side"] == side and not r["warmup"])
        want = [(float(a), round(b, 6)) for a, b in meas if math.isfinite(b)]
        got = p.pts.get((f"drift-{cid}", s1), [])
        if got != want:
            say(f"drift {cid} {side}", False, f"{got[:3]} vs {want[:3]}"); break
        v = sorted(b for _, b in meas)
        def pct(x, q):  # docs/exp-gate.md's rule, +inf kept (never 0 x inf)
            h = (len(x) - 1) * q; f = int(math.floor(h)); t = h - f
            if f + 1 >= len(x) or t == 0 or x[f] == x[f + 1]: return x[f]
            return x[f] + t * (x[f + 1] - x[f])
        q = [pct(v, k / 100) for k in range(101)]
        if all(math.isfinite(x) for x in v):  # and numpy agrees where it can
            assert np.allclose(q, np.percentile(np.array(v), list(range(101))), rtol=0, atol=1e-9)
        wantc = [(round(float(x), 6), k / 100) for k, x in enumerate(q) if math.isfinite(x)]
        gotc = p.pts.get((f"cdf-{cid}", s1), [])
        if len(gotc) != len(wantc) or any(abs(a - c) > 1.5e-6 or abs(b - d) > 1e-9 for (a, b), (c, d) in zip(gotc, wantc)):
            say(f"cdf {cid} {side}", False, f"{len(gotc)} vs {len(wantc)}: {[(g, w) for g, w in zip(gotc, wantc) if g != w][:3]}"); break
    else:
        continue
    break
else:
    say("drift points are every measured request's (run, latency), both sides, every case", True)
    say("CDF points are numpy's percentiles 0..100, both sides, every case", True)
d = p.pts[("drift-prefill-p128-o1", True)]
slope = np.polyfit([x for x, _ in d], [y for _, y in d], 1)[0]
say("the drifting candidate rises (+0.05 ms a run)", 0.03 < slope < 0.07, str(slope))
c = p.pts[("cdf-prefill-p128-o1", True)]
say("the timed-out request keeps the CDF short of 1", len(c) < 101 and max(y for _, y in c) < 1, str(c[-2:]))
PY
