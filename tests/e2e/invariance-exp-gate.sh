#!/bin/sh
# What no speed work on exp-gate (parallel statistics, the pipelined reader) may change: the
# summary, decision.json, decision.md and what decide prints are the same bytes at -j 1, 2 and
# 3 (and with a memory budget small enough to take the groups in several batches), on folders
# with several groups (one case at concurrency 1, 2 and 4), failed requests (timeouts without
# a latency: +inf) and a repeated request_id (counted once by summarize; refused by decide
# through manifest-verify's request-unique rule); and every n, P50, P90, P99, MAD and std of
# the summary against numpy from the raw lines (contracts section 8: numpy's default linear
# percentile; MAD unscaled; std with n - 1; a percentile landing between a finite value and
# +inf is +inf and written null, as is a std made unbounded), and each throughput row (requests,
# failed, output tokens, the wall window, both rates) from the raw lines.
. "$GOLDEN_ROOT/tests/e2e/lib.sh"
FAILED=0
notok() { echo "not ok $1${2:+: $2}"; FAILED=1; }
PY=/usr/bin/python3
if ! $PY -c 'import numpy' 2>/dev/null; then echo "ok invariance-exp-gate # skip /usr/bin/python3 has no numpy"; exit 0; fi
EX="$GOLDEN_ROOT/examples/experiment/OP-MOE-0001"
RAW=performance/raw-requests.jsonl
$PY "$GOLDEN_ROOT/bench/gen-exp-gate-folder.py" "$EX" gen 2000 > /dev/null || { notok "generate the folder"; exit 1; }
D=gen/OP-MOE-0001

# groups: prefill-p1-o1 also at concurrency 2 and 4 (both sides, new ids, other latencies);
# failures: two measured candidate runs of the second case and one baseline run of a decode
# case time out (no latency), one more is an error that kept its ttft
cp -r "$D" grp
$PY - grp/$RAW <<'EOF'
import json, sys, random
p = sys.argv[1]; L = [json.loads(l) for l in open(p)]
r = random.Random(7); extra = []
first = L[0]["case_id"]
for lvl, f in ((2, 1.3), (4, 1.9)):
    for o in L:
        if o["case_id"] != first: continue
        q = json.loads(json.dumps(o)); q["concurrency"] = lvl; q["request_id"] += "-c%d" % lvl
        q["ttft_ms"] = round(o["ttft_ms"] * f + r.gauss(0, 0.1), 6)
        extra.append(q)
cases = []
for o in L:
    if o["case_id"] not in cases: cases.append(o["case_id"])
def fail(case, side, k, outcome, drop):
    m = [o for o in L if o["case_id"] == case and o["side"] == side and not o["warmup"]]
    for o in m[3:3 + k]:
        o["outcome"] = outcome
        if drop:
            o.pop("ttft_ms", None); o.pop("tpot_ms", None)
fail(cases[1], "candidate", 2, "timeout", True)
dec = [c for c in cases if c.startswith("decode")][0]
fail(dec, "baseline", 1, "timeout", True)
fail(cases[2], "baseline", 1, "error", False)
open(p, "w").write("".join(json.dumps(o) + "\n" for o in L + extra))
EOF
# the same with line 7's request_id again on line 900 and the last line's on line 30
cp -r grp rep
$PY - rep/$RAW <<'EOF'
import sys
p = sys.argv[1]; L = open(p).read().split("\n")[:-1]
L.insert(899, L[6]); L.insert(29, L[-1])
open(p, "w").write("\n".join(L) + "\n")
EOF

# summarize NAME DIR: -j 1, 2, 3 and --memory 1M (-j 2): summary.json and output the same bytes
summ() {
    _n=$1; _d=$2
    for v in j1 j2 j3 mem; do
        rm -rf "s$v" && mkdir "s$v" && cp -r "$_d" "s$v/F"
        case $v in mem) _o="-j 2 --memory 1M";; *) _o="-j ${v#j}";; esac
        exp-gate summarize $_o "s$v/F" > "s$v.out" 2>&1; echo "exit $?" >> "s$v.out"
        { sed "s#s$v/##g" "s$v.out"; cat "s$v/F/performance/summary.json" 2>/dev/null || echo "no summary"; } > "s$v.all"
    done
    if grep -q "^exit 0" sj1.out; then ok "$_n: summarize ran"; else notok "$_n: summarize ran" "$(head -c 300 sj1.out)"; fi
    if cmp -s sj1.all sj2.all && cmp -s sj1.all sj3.all && cmp -s sj1.all smem.all; then ok "$_n: summarize -j 1 = -j 2 = -j 3 = --memory 1M"
    else notok "$_n: summarize -j 1 = -j 2 = -j 3 = --memory 1M" "$(diff sj1.all sj2.all | head -4 | tr '\n' ' ') $(diff sj1.all smem.all | head -4 | tr '\n' ' ')"; fi
    cp sj1/F/performance/summary.json "$_n.summary.json" 2>/dev/null
}
# decide NAME DIR: -j 1, 2, 3: decision.json, decision.md, summary.json, stdout, stderr, exit
decide() {
    _n=$1; _d=$2
    for j in 1 2 3; do
        rm -rf "d$j" && mkdir "d$j" && cp -r "$_d" "d$j/OP-MOE-0001"
        exp-gate decide --force -j $j "d$j/OP-MOE-0001" > "d$j.out" 2> "d$j.err"; echo "exit $?" >> "d$j.out"
        for f in decision.json decision.md performance/summary.json; do
            if [ -f "d$j/OP-MOE-0001/$f" ]; then cat "d$j/OP-MOE-0001/$f"; else echo "no $f"; fi
        done | cat "d$j.out" "d$j.err" - | sed "s#d$j/#DIR/#g" > "d$j.all"
    done
    if cmp -s d1.all d2.all && cmp -s d1.all d3.all; then ok "$_n: decide -j 1 = -j 2 = -j 3 ($(tail -1 d1.out))"
    else notok "$_n: decide -j 1 = -j 2 = -j 3" "$(diff d1.all d2.all | head -5 | tr '\n' ' ')"; fi
}
summ clean "$D"; decide clean "$D"
summ groups grp; decide groups grp
expect_grep "groups: decided (a label, not exit 2)" "^exit [01]$" d1.out
# --check at -j 2 of the summary written at -j 1 follows (exit 0); one stored P99 moved by 1 %
# is a finding naming the case and the field (exit 1), the same at -j 1 and -j 2
expect_exit "groups: summarize --check -j 2 of the -j 1 summary" 0 exp-gate summarize --check -j 2 sj1/F
$PY - sj1/F/performance/summary.json <<'EOF'
import json, sys
p = sys.argv[1]; s = json.load(open(p))
c = [e for e in s["cases"] if e["baseline"].get("p99") is not None][0]; c["baseline"]["p99"] = round(c["baseline"]["p99"] * 1.01, 6)
open(p, "w").write(json.dumps(s, indent=2) + "\n")
EOF
for j in 1 2; do exp-gate summarize --check -j $j sj1/F > chk$j.txt 2>&1; echo "exit $?" >> chk$j.txt; done
if grep -q "^exit 1" chk1.txt && grep -q "p99" chk1.txt && cmp -s chk1.txt chk2.txt; then ok "--check: a moved P99 is a finding, the same at -j 1 and -j 2"
else notok "--check: a moved P99 is a finding, the same at -j 1 and -j 2" "$(head -c 300 chk1.txt) | $(diff chk1.txt chk2.txt | head -3 | tr '\n' ' ')"; fi
summ repeated rep; decide repeated rep
expect_grep "repeated: decide refuses (request-unique)" "^exit 2$" d1.out
expect_grep "repeated: the rule named" "request-unique|repeat" d1.err
# the summary of the repeated folder is the summary of the folder without the copies but for
# its count of repeated ids
if $PY - groups.summary.json repeated.summary.json <<'EOF'
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
ra, rb = a.pop("repeated_request_ids", 0), b.pop("repeated_request_ids", 0)
a.pop("raw_requests"); b.pop("raw_requests")  # the file's hash and size differ, nothing else may
# rows come in order of first appearance, which the copy of the last line on line 30 changes
for x in (a, b):
    for k in ("throughput", "cases"): x[k] = sorted(x[k], key=lambda r: json.dumps(r, sort_keys=True))
sys.exit(0 if a == b and ra == 0 and rb == 2 else 1)
EOF
then ok "repeated: copies counted once (repeated_request_ids 2, all else equal)"
else notok "repeated: copies counted once" "$(diff groups.summary.json repeated.summary.json | head -6 | tr '\n' ' ')"; fi

cat > stats.py <<'EOF'
import json, math, sys, numpy as np
raw, summ = sys.argv[1], sys.argv[2]
S = json.load(open(summ)); man = {}
seen = set(); G = {}; failed = {}
for line in open(raw):
    o = json.loads(line)
    if o["request_id"] in seen: continue
    seen.add(o["request_id"])
    if o["warmup"] or not o["steady"]: continue
    k = (o["case_id"], o["side"], o.get("concurrency", 1))
    bad = o.get("outcome", "ok") in ("timeout", "error")
    for m in ("ttft_ms", "tpot_ms"):
        if m in o: G.setdefault(k + (m,), []).append(float(o[m]))
        elif bad: G.setdefault(k + (m,), []).append(math.inf)
    if bad: failed[k] = failed.get(k, 0) + 1
    for st, v in o["stages"].items():
        G.setdefault(k + (st + "_ms",), []).append((v["end_ns"] - v["start_ns"]) / 1e6)
def pct(x, q):  # contracts section 8, with +inf as the worst value
    h = (len(x) - 1) * q; f = math.floor(h)
    if f + 1 >= len(x) or h == f: return x[f]
    if math.isinf(x[f + 1]): return math.inf
    return x[f] + (h - f) * (x[f + 1] - x[f])
bad = []; n = 0
def close(where, key, got, want):
    global n; n += 1
    if want is None or math.isinf(want):
        if got is not None: bad.append("%s %s: %r, numpy: unbounded (null)" % (where, key, got))
    elif got is None or abs(got - want) > 1e-6 * max(1.0, abs(want)) + 1e-12:
        bad.append("%s %s: %r, numpy %r" % (where, key, got, want))
checked = set()
for c in S["cases"]:
    for side in ("baseline", "candidate"):
        k = (c["case_id"], side, c.get("concurrency", 1), c["metric"])
        if k not in G or side not in c: continue
        if c["metric"].endswith("_ms") and c["metric"] not in ("ttft_ms", "tpot_ms") and failed.get(k[:3]): continue
        x = sorted(G[k]); s = c[side]; w = "%s@%d %s %s" % (k[0], k[2], side, k[3]); checked.add(k[3])
        n += 1
        if s["n"] != len(x): bad.append("%s n: %r, raw lines %d" % (w, s["n"], len(x))); continue
        close(w, "median", s["median"], pct(x, 0.5)); close(w, "p90", s["p90"], pct(x, 0.9)); close(w, "p99", s["p99"], pct(x, 0.99))
        med = pct(x, 0.5)
        close(w, "mad", s["mad"], pct(sorted(abs(v - med) for v in x), 0.5) if not math.isinf(med) else None)
        close(w, "std", s["std"], None if any(math.isinf(v) for v in x) else (float(np.std(x, ddof=1)) if len(x) > 1 else 0.0))
        if "failed" in s: close(w, "failed", s["failed"], failed.get(k[:3], 0))
        # numpy's own percentile where every value is finite
        if not any(math.isinf(v) for v in x):
            close(w, "p99 (np.percentile)", s["p99"], float(np.percentile(x, 99)))
# throughput rows (docs/exp-gate.md "Throughput"): measured requests, warm-ups left out
T = {}
seen = set()
for line in open(raw):
    o = json.loads(line)
    if o["request_id"] in seen or o["warmup"]: continue
    seen.add(o["request_id"])
    t = T.setdefault((o["case_id"], o.get("concurrency", 1), o["side"]), {"ok": 0, "failed": 0, "tok": 0, "lo": None, "hi": None})
    if o.get("outcome", "ok") == "ok": t["ok"] += 1; t["tok"] += o["output_tokens"]
    else: t["failed"] += 1
    a, b = o["stages"]["client_queue"]["start_ns"], o["stages"]["stream_flush"]["end_ns"]
    t["lo"] = a if t["lo"] is None else min(t["lo"], a); t["hi"] = b if t["hi"] is None else max(t["hi"], b)
rows = {(r["case_id"], r["concurrency"], r["side"]): r for r in S["throughput"]}
if set(rows) != set(T): bad.append("throughput rows %d, raw groups %d" % (len(rows), len(T)))
for k, t in T.items():
    r = rows.get(k)
    if r is None: continue
    w = "throughput %s@%d %s" % k; win = (t["hi"] - t["lo"]) / 1e6
    n += 3
    if r["requests"] != t["ok"] or r["failed"] != t["failed"] or r["output_tokens"] != t["tok"]:
        bad.append("%s: requests/failed/tokens %s/%s/%s, raw %d/%d/%d" % (w, r["requests"], r["failed"], r["output_tokens"], t["ok"], t["failed"], t["tok"]))
    close(w, "window_ms", r["window_ms"], win)
    close(w, "requests_per_s", r["requests_per_s"], t["ok"] / (win / 1000))
    close(w, "output_tokens_per_s", r["output_tokens_per_s"], t["tok"] / (win / 1000))
levels = {c.get("concurrency", 1) for c in S["cases"]}
if sys.argv[3:] and levels != set(map(int, sys.argv[3].split(","))): bad.append("concurrency levels %s, wanted %s" % (sorted(levels), sys.argv[3]))
if "ttft_ms" not in checked or "tpot_ms" not in checked: bad.append("checked only %s" % sorted(checked))
print("; ".join(bad[:5]) + (" (+%d more)" % (len(bad) - 5) if len(bad) > 5 else "") if bad else "%d values" % n)
sys.exit(1 if bad else 0)
EOF
for v in clean:$D groups:grp repeated:rep; do
    n=${v%%:*}; d=${v#*:}; lv=1; [ $n = clean ] || lv=1,2,4
    if r=$($PY stats.py "$d/$RAW" $n.summary.json $lv 2>&1); then ok "$n: n, P50, P90, P99, MAD, std = numpy ($r)"
    else notok "$n: n, P50, P90, P99, MAD, std = numpy" "$r"; fi
done
# one case by hand: the P99 of a group with two timeouts lands between a finite value and +inf
if $PY - grp/$RAW groups.summary.json <<'EOF'
import json, sys
S = json.load(open(sys.argv[2])); L = [json.loads(l) for l in open(sys.argv[1])]
cases = []
for o in L:
    if o["case_id"] not in cases: cases.append(o["case_id"])
c = [e for e in S["cases"] if e["case_id"] == cases[1] and e["metric"] == "ttft_ms" and e.get("concurrency", 1) == 1][0]
sys.exit(0 if c["candidate"]["p99"] is None and c["candidate"]["p90"] is not None and c["baseline"]["p99"] is not None else 1)
EOF
then ok "timeouts: P99 unbounded (null), P90 finite, the other side untouched"
else notok "timeouts: P99 unbounded (null), P90 finite, the other side untouched"; fi
exit $FAILED
