#!/bin/sh
# exp-gate's per-group statistics and bootstraps run over the workers (one group a worker, one
# bootstrap cache per worker) and decide hashes raw-requests.jsonl on a thread of its own beside
# the pass (docs/exp-gate.md "Performance"). No bit may change with -j: on folders of several
# cases, sides and concurrency levels, with timeouts, one group of a single measured sample,
# repeated request ids (a finding) and several memory batches, `summarize` and `decide` with
# -j 1, 2 and 3 write the same bytes (stdout, stderr, exit, summary.json, decision.json,
# decision.md). GOLDEN_EXP_GATE_REF (another exp-gate binary, e.g. main's) is compared too when
# set. numpy recomputes the median and P99 of two groups (numpy's default linear percentile is
# the handbook's, docs/exp-gate.md "Statistics"), the timeouts counted as +inf.
. "$GOLDEN_ROOT/tests/e2e/lib.sh"
EX="$GOLDEN_ROOT/examples/experiment/OP-MOE-0001"
PY=/usr/bin/python3
RAW=performance/raw-requests.jsonl
$PY "$GOLDEN_ROOT/bench/gen-exp-gate-folder.py" "$EX" gen 6000 > /dev/null || { notok "generate"; exit 0; }
D=gen/OP-MOE-0001

# edit NAME CODE: a copy of the generated folder as NAME/OP-MOE-0001, CODE editing `rs` (the
# parsed lines, in file order) before they are written back
edit() {
    rm -rf "$1" && mkdir "$1" && cp -r "$D" "$1/OP-MOE-0001"
    $PY - "$1/OP-MOE-0001/$RAW" "$2" <<'PY' || notok "$1: edit"
import json, sys
p, code = sys.argv[1], sys.argv[2]
rs = [json.loads(l) for l in open(p)]
exec(code)
with open(p, "w") as f:
    for r in rs:
        f.write(json.dumps(r, separators=(",", ":")) + "\n")
PY
}

# outputs BIN J DIR OUT ARGS: run `summarize ARGS` and `decide ARGS` on fresh copies of DIR with
# BIN -j J; everything they print and write, in one file (the copies' names made equal)
outputs() {
    _b=$1; _j=$2; _d=$3; _o=$4; shift 4
    for cmd in summarize decide; do
        rm -rf w && mkdir w && cp -r "$_d" w/OP-MOE-0001
        "$_b" "$cmd" -j "$_j" "$@" w/OP-MOE-0001 > o.txt 2> e.txt
        echo "$cmd exit $?"
        cat o.txt e.txt
        for f in performance/summary.json decision.json decision.md; do
            echo "== $f"
            if [ -f "w/OP-MOE-0001/$f" ]; then cat "w/OP-MOE-0001/$f"; else echo "(none)"; fi
        done
    done > "$_o"
}

# same NAME DIR ARGS: -j 1 = -j 2 = -j 3 (= the reference binary when given), byte for byte
same() {
    _n=$1; _d=$2; shift 2
    EG=$(command -v exp-gate)
    outputs "$EG" 1 "$_d" j1.all "$@"
    outputs "$EG" 2 "$_d" j2.all "$@"
    outputs "$EG" 3 "$_d" j3.all "$@"
    if cmp -s j1.all j2.all && cmp -s j1.all j3.all; then ok "$_n: -j 1 = -j 2 = -j 3, byte for byte"
    else notok "$_n: -j 1 = -j 2 = -j 3" "$(diff j1.all j2.all | head -4)"; fi
    if [ -n "${GOLDEN_EXP_GATE_REF:-}" ]; then
        outputs "$GOLDEN_EXP_GATE_REF" 2 "$_d" ref.all "$@"
        if cmp -s j1.all ref.all; then ok "$_n: the same bytes as $GOLDEN_EXP_GATE_REF"
        else notok "$_n: the same bytes as $GOLDEN_EXP_GATE_REF" "$(diff ref.all j1.all | head -4)"; fi
    fi
}

# 1. 17 cases x 2 sides (ttft, and tpot for the decode cases): 34 groups, 11 metrics each
same "17 cases" "$D"
expect_grep "17 cases: summarized" "summarize exit 0" j1.all
expect_grep "17 cases: decided" "decide exit 0" j1.all

# 2. the same with levels 1 and 2 and 4: four prefill cases again at concurrency 2 (latencies
#    1.5x), one case at concurrency 4 with one measured sample a side (a group of 1), and three
#    timeouts (no ttft_ms) on one candidate group
edit lv '
extra = []
for r in rs:
    if r["case_id"] in ("prefill-p1-o1", "prefill-p16-o1", "prefill-p128-o1", "prefill-p512-o1"):
        c = dict(r); c["request_id"] = r["request_id"] + "-c2"; c["concurrency"] = 2
        c["ttft_ms"] = round(r["ttft_ms"] * 1.5, 6); extra.append(c)
    if r["case_id"] == "prefill-p17-o1" and r["run"] <= 10:
        c = dict(r); c["request_id"] = r["request_id"] + "-c4"; c["concurrency"] = 4
        extra.append(c)
rs += extra
k = 0
for r in rs:
    if r["side"] == "candidate" and r["case_id"] == "prefill-p16-o1" and r.get("concurrency") == 1 \
            and not r["warmup"] and r["run"] in (20, 50, 90):
        del r["ttft_ms"]; r["outcome"] = "timeout"; k += 1
assert k == 3, k
'
same "levels, timeouts, a group of 1" lv/OP-MOE-0001
expect_grep "levels: summarized" "summarize exit 0" j1.all
# the group of one sample: n 1 on both sides at concurrency 4
$PY - j1.all <<'PY'
import json, sys
t = open(sys.argv[1]).read()
s = json.loads(t.split("== performance/summary.json\n")[1].split("\n== decision.json")[0])
c = [c for c in s["cases"] if c["case_id"] == "prefill-p17-o1" and c["concurrency"] == 4
     and c["metric"] == "ttft_ms"]
ok = len(c) == 1 and c[0]["baseline"]["n"] == 1 and c[0]["candidate"]["n"] == 1 \
     and c[0]["baseline"]["std"] == 0 and c[0]["insufficient"] is True
print("ok levels: a group of one measured sample (n 1, std 0, insufficient)" if ok
      else "not ok levels: a group of one sample: %s" % c)
PY
# numpy's median and P99 of two groups from the raw lines (timeouts as +inf: P99 null)
$PY - lv/OP-MOE-0001/$RAW j1.all <<'PY'
import json, sys
import numpy as np
rs = [json.loads(l) for l in open(sys.argv[1])]
t = open(sys.argv[2]).read()
s = json.loads(t.split("== performance/summary.json\n")[1].split("\n== decision.json")[0])
def entry(case, level, metric):
    c = [c for c in s["cases"] if c["case_id"] == case and c["concurrency"] == level
         and c["metric"] == metric]
    return c[0] if len(c) == 1 else None
def xs(case, level, side, f):
    return np.array([r[f] if f in r else np.inf for r in rs if r["case_id"] == case
                     and r.get("concurrency", 1) == level and r["side"] == side
                     and not r["warmup"] and r["steady"]])
def close(a, b):
    return a is not None and abs(a - b) <= 1e-6 * max(1.0, abs(b))
bad = []
# a level-2 baseline group
x = xs("prefill-p128-o1", 2, "baseline", "ttft_ms"); e = entry("prefill-p128-o1", 2, "ttft_ms")
med, p99 = np.percentile(x, [50, 99])
if not e or not close(e["baseline"]["median"], med) or not close(e["baseline"]["p99"], p99) \
        or e["baseline"]["n"] != len(x):
    bad.append("p128 c2: %s vs n %d median %r p99 %r" % (e and e["baseline"], len(x), med, p99))
# the candidate with three timeouts: n counts them, the median is finite (numpy), and the P99
# rank h = (n - 1) 0.99 falls between two +inf (the handbook's rule: +inf, written null)
x = xs("prefill-p16-o1", 1, "candidate", "ttft_ms"); e = entry("prefill-p16-o1", 1, "ttft_ms")
med = float(np.percentile(x, 50)); xsort = np.sort(x); h = (len(x) - 1) * 0.99; f = int(np.floor(h))
if not e or not close(e["candidate"]["median"], med) or not np.isinf(xsort[f]) \
        or not np.isinf(xsort[f + 1]) or e["candidate"]["p99"] is not None \
        or e["candidate"]["n"] != len(x) or e["candidate"]["failed"] != 3:
    bad.append("p16 candidate: %s vs n %d median %r ranks %r %r" % (e and e["candidate"], len(x),
               med, xsort[f], xsort[min(f + 1, len(x) - 1)]))
# the decode cases' tpot of one group
x = xs("decode-past16-o1", 1, "candidate", "tpot_ms"); e = entry("decode-past16-o1", 1, "tpot_ms")
med, p99 = np.percentile(x, [50, 99])
if not e or not close(e["candidate"]["median"], med) or not close(e["candidate"]["p99"], p99):
    bad.append("decode tpot: %s vs median %r p99 %r" % (e and e["candidate"], med, p99))
print("ok numpy: median and P99 of three groups (one with timeouts) agree" if not bad
      else "not ok numpy: " + "; ".join(bad))
PY

# 3. repeated request ids (a finding: decide refuses, summarize counts each once)
edit rep 'rs.insert(3000, dict(rs[20])); rs.insert(5000, dict(rs[4000])); rs.append(dict(rs[100]))'
same "repeated ids" rep/OP-MOE-0001
expect_grep "repeated ids: counted" '"repeated_request_ids": 3' j1.all
expect_grep "repeated ids: decide refuses" "decide exit 2" j1.all

# 4. several memory batches (1 MiB of samples holds about 5,700 of the ~5,300 measured ones
#    plus their copies at level 2: the groups are split over batches)
same "memory batches" lv/OP-MOE-0001 --memory 1
expect_grep "memory batches: summarized" "summarize exit 0" j1.all
outputs "$(command -v exp-gate)" 2 lv/OP-MOE-0001 big.all
# the summary and decision do not depend on the budget either
sed -n '/^== performance\/summary.json/,$p' big.all > big.files
sed -n '/^== performance\/summary.json/,$p' j2.all > small.files
if cmp -s big.files small.files; then ok "memory batches: the same files as one batch"
else notok "memory batches: the same files as one batch" "$(diff big.files small.files | head -4)"; fi

# 5. a stored summary: decide takes the check's path (the summary recomputed with the stored
#    settings); one stored with the per-resample generator (n draws a resample, the bootstrap
#    over the workers inside each group when a batch has one group) is recomputed with it
rm -rf st && mkdir st && cp -r "$D" st/ && exp-gate summarize --bootstrap 300 st/OP-MOE-0001 > /dev/null
same "stored summary" st/OP-MOE-0001
expect_grep "stored summary: decided" "decide exit 0" j1.all
rm -rf st && mkdir st && cp -r lv/OP-MOE-0001 st/ && exp-gate summarize --bootstrap 300 st/OP-MOE-0001 > /dev/null
$PY - st/OP-MOE-0001/performance/summary.json <<'PY'
import json, sys
p = sys.argv[1]; s = json.load(open(p))
s["bootstrap"]["generator"] = "splitmix64-per-resample/v1"
json.dump(s, open(p, "w"), indent=2)
PY
for j in 1 2 3; do
    exp-gate summarize --check -j $j st/OP-MOE-0001 > c$j.txt 2>&1; echo "exit $?" >> c$j.txt
    exp-gate summarize --check -j $j --memory 1 st/OP-MOE-0001 >> c$j.txt 2>&1; echo "exit $?" >> c$j.txt
done
if cmp -s c1.txt c2.txt && cmp -s c1.txt c3.txt; then ok "per-resample generator: --check -j 1 = -j 2 = -j 3"
else notok "per-resample generator: --check -j 1 = -j 2 = -j 3" "$(diff c1.txt c2.txt | head -4)"; fi
expect_grep "per-resample generator: its intervals differ from the stored ones" "ci95" c1.txt
