# exp-gate summarize over 10^6 raw requests (200 cases x 2 sides x 2500 runs) against two Python
# programs computing the same per-case statistics: one with only json + statistics, one with
# numpy (json.loads per line). The bootstrap is set to 1 resample in exp-gate (neither Python
# program bootstraps) so that reading and statistics are compared like with like.
# Prints seconds, peak memory and ratios. GOLDEN_BENCH_GATE_LINES changes the line count.
set -u
LINES=${GOLDEN_BENCH_GATE_LINES:-1000000}
PY=/usr/bin/python3
EX="$GOLDEN_ROOT/examples/experiment/OP-MOE-0001"
mkdir -p X/performance && cp "$EX/hypothesis.yaml" X/
$PY - "$LINES" > X/performance/raw-requests.jsonl <<'PY'
import sys, random, json
n = int(sys.argv[1]); cases = 200; per = n // (cases * 2)
rnd = random.Random(1)
st = ["client_queue", "service_queue", "input_prepare", "h2d", "npu_wait", "d2h",
      "logits_conversion", "sampling", "stream_flush"]
out = sys.stdout
t = 1_000_000_000
for c in range(cases):
    for side in ("baseline", "candidate"):
        for r in range(per):
            stages = {}
            for s in st:
                d = int(rnd.lognormvariate(11, 0.5)); stages[s] = {"start_ns": t, "end_ns": t + d}; t += d
            out.write(json.dumps({"request_id": f"{side}-c{c}-{r}", "case_id": f"c{c}", "side": side,
                "run": r, "warmup": r < 10, "steady": True, "output_tokens": 1,
                "ttft_ms": round(rnd.gauss(10, 0.3), 6), "stages": stages}, separators=(",", ":")) + "\n")
PY
cat > plain.py <<'PY'
# json + statistics only: per case, side and metric n, median, P90, P99, MAD, std
import sys, json, statistics
groups = {}
for line in open(sys.argv[1]):
    o = json.loads(line)
    if o["warmup"] or not o["steady"]:
        continue
    g = groups.setdefault((o["case_id"], o["side"]), {})
    g.setdefault("ttft_ms", []).append(o["ttft_ms"])
    for k, s in o["stages"].items():
        g.setdefault(k, []).append((s["end_ns"] - s["start_ns"]) / 1e6)
def pct(xs, q):
    h = (len(xs) - 1) * q; f = int(h)
    return xs[-1] if f >= len(xs) - 1 else xs[f] + (h - f) * (xs[f + 1] - xs[f])
res = []
for key, ms in groups.items():
    for m, xs in ms.items():
        xs.sort(); med = pct(xs, 0.5)
        mad = statistics.median(abs(x - med) for x in xs)
        res.append((key, m, len(xs), med, pct(xs, 0.9), pct(xs, 0.99), mad, statistics.stdev(xs)))
print(len(res))
PY
cat > withnumpy.py <<'PY'
# numpy, json.loads per line
import sys, json, numpy as np
groups = {}
for line in open(sys.argv[1]):
    o = json.loads(line)
    if o["warmup"] or not o["steady"]:
        continue
    g = groups.setdefault((o["case_id"], o["side"]), {})
    g.setdefault("ttft_ms", []).append(o["ttft_ms"])
    for k, s in o["stages"].items():
        g.setdefault(k, []).append((s["end_ns"] - s["start_ns"]) / 1e6)
res = []
for key, ms in groups.items():
    for m, xs in ms.items():
        x = np.asarray(xs); med, p90, p99 = np.percentile(x, [50, 90, 99])
        res.append((key, m, len(x), med, p90, p99, np.median(np.abs(x - med)), x.std(ddof=1)))
print(len(res))
PY
now() { date +%s.%N; }
peak() { # peak RSS in MiB of a command, when GNU time is there
    if [ -x /usr/bin/time ]; then /usr/bin/time -f %M "$@" 2>&1 >/dev/null | tail -1 | awk '{printf "%.0f", $1 / 1024}'
    else echo "?"; fi; }
t0=$(now); exp-gate summarize --force --bootstrap 1 X > /dev/null || exit 1; t1=$(now)
$PY plain.py X/performance/raw-requests.jsonl > /dev/null; t2=$(now)
np_ok=1; $PY withnumpy.py X/performance/raw-requests.jsonl > /dev/null 2>&1 || np_ok=0; t3=$(now)
m_c=$(peak exp-gate summarize --force --bootstrap 1 X)
m_p=$(peak $PY plain.py X/performance/raw-requests.jsonl)
m_n=$(peak $PY withnumpy.py X/performance/raw-requests.jsonl)
awk -v a="$t0" -v b="$t1" -v c="$t2" -v d="$t3" -v n="$LINES" -v np_ok="$np_ok" \
    -v mc="$m_c" -v mp="$m_p" -v mn="$m_n" 'BEGIN {
    g = b - a; p = c - b; q = d - c
    printf "raw requests: %d lines\n", n
    printf "exp-gate summarize:           %6.2f s  peak %s MiB\n", g, mc
    printf "python json + statistics:     %6.2f s  peak %s MiB  (%.1fx exp-gate)\n", p, mp, p / g
    if (np_ok) printf "python json.loads + numpy:    %6.2f s  peak %s MiB  (%.1fx exp-gate)\n", q, mn, q / g
    else print "python json.loads + numpy:    numpy not importable" }'
# bounded memory: the same file with a 16 MiB sample budget is read in several passes
echo "exp-gate summarize --memory 16: peak $(peak exp-gate summarize --force --bootstrap 1 --memory 16 X) MiB"
rm -rf X
# decide (issue 26): a whole experiment folder of the same size (bench/gen-exp-gate-folder.py:
# the example's hypothesis, manifests and accuracy, 17 cases x 2 sides of raw requests), the
# default 10^4 resamples, manifest-verify's checks first; beside it numpy reading the same file
# and computing the same per-case statistics (no bootstrap, no checks). Target: <= 10 s wall.
$PY "$GOLDEN_ROOT/bench/gen-exp-gate-folder.py" "$EX" D "$LINES" > /dev/null || exit 1
t4=$(now); exp-gate decide --force D/OP-MOE-0001 > /dev/null; rc=$?; t5=$(now)
np_ok=1; $PY withnumpy.py D/OP-MOE-0001/performance/raw-requests.jsonl > /dev/null 2>&1 || np_ok=0; t6=$(now)
awk -v a="$t4" -v b="$t5" -v c="$t6" -v rc="$rc" -v np_ok="$np_ok" 'BEGIN {
    printf "exp-gate decide (exit %d):     %6.2f s wall (target 10 s)\n", rc, b - a
    if (np_ok) printf "python json.loads + numpy:    %6.2f s  (%.1fx exp-gate decide)\n", c - b, (c - b) / (b - a) }'
rm -rf D
