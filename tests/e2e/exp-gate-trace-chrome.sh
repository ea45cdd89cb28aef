# exp-gate: a device trace in the Chrome Trace Event format (performance/raw-device-trace.json).
# The figures below were worked out by hand from the tiny trace written here; malformed traces
# and B/E nesting mismatches are refused at file:line:col (columns counted by hand).
. "$GOLDEN_ROOT/tests/e2e/lib.sh"
EX="$GOLDEN_ROOT/examples/experiment/OP-MOE-0001"
PY=/usr/bin/python3
command -v $PY >/dev/null 2>&1 || PY=python3
rm -rf X && cp -r "$EX" X
rm -f X/performance/summary.json X/decision.json X/decision.md X/SHA256SUMS X/performance/raw-device-trace.csv
T=X/performance/raw-device-trace.json
cat > $T <<'EOF'
{"displayTimeUnit": "ns", "otherData": {"vendor": "test"},
 "traceEvents": [
  {"ph": "X", "pid": 10, "tid": 1, "name": "moe0", "cat": "grouped_moe_dense", "ts": 0, "dur": 10, "args": {"cycles": 1000, "bytes_ddr": 4096, "bytes_sram": 1024, "stall_ddr_wait": 100, "tokens": 3}},
  {"ph": "X", "pid": 10, "tid": 1, "name": "attn", "cat": "attention", "ts": 10, "dur": 5, "args": {"cycles": 500, "bytes_ddr": 2048}},
  {"ph": "B", "pid": 10, "tid": 1, "name": "moe1", "cat": "x", "ts": 20, "args": {"family": "grouped_moe_dense", "cycles": 1500, "stall_ddr_wait": 50}},
  {"ph": "B", "pid": 10, "tid": 1, "name": "inner", "cat": "d2d_copy", "ts": 21, "args": {"bytes_d2d": 512}},
  {"ph": "E", "pid": 10, "tid": 1, "name": "inner", "ts": 23, "args": {"cycles": 200}},
  {"ph": "E", "pid": 10, "tid": 1, "ts": 30, "args": {"bytes_ddr": 8192, "stall_sync": 7}},
  {"ph": "X", "pid": 11, "tid": 1, "name": "moe0", "cat": "grouped_moe_dense", "ts": 0, "dur": 8, "args": {"cycles": 800, "bytes_ddr": 4096, "tokens": 3}},
  {"ph": "X", "pid": 11, "tid": 2, "name": "attn", "cat": "attention", "ts": 8, "dur": 4.5, "args": {"cycles": 500}},
  {"ph": "X", "pid": 12, "tid": 1, "name": "moe0", "cat": "grouped_moe_dense", "ts": 0, "dur": 9, "args": {"cycles": 900, "tokens": 20, "bytes_pcie": 64}},
  {"ph": "C", "pid": 10, "name": "power", "ts": 0, "args": {"value": 100}},
  {"ph": "C", "pid": 10, "name": "power", "ts": 10, "args": {"value": 120}},
  {"ph": "C", "pid": 10, "name": "power", "ts": 30, "args": {"value": 110}},
  {"ph": "C", "pid": 11, "name": "power_w", "ts": 0, "args": {"watts": 90}},
  {"ph": "i", "pid": 10, "tid": 1, "name": "mark", "ts": 5, "s": "t"},
  {"ph": "C", "pid": 10, "name": "queue_depth", "ts": 5, "args": {"n": 3}},
  {"ph": "M", "pid": 10, "tid": 1, "name": "thread_name", "args": {"name": "stream 0"}},
  {"ph": "M", "pid": 10, "name": "process_name", "args": {"name": "baseline chip 0"}},
  {"ph": "M", "pid": 11, "name": "process_name", "args": {"name": "candidate chip 0"}},
  {"ph": "M", "pid": 12, "name": "process_name", "args": {"name": "baseline chip 1"}}
 ]
}
EOF
expect_exit "chrome: summarize" 0 exp-gate summarize X
$PY - X/performance/summary.json <<'PY'
import json, sys
s = json.load(open(sys.argv[1])); t = s["trace"]
def check(name, got, want):
    print(("ok chrome: " if got == want else "not ok chrome: ") + name + ("" if got == want else f": {got!r} != {want!r}"))
rows = {(r["side"], r["chip"], r["family"]): r for r in t["per_chip"]}
# baseline chip 0 (pid 10): X moe0 (1000 cycles, 10 us) + B/E moe1 (1500 cycles, 20..30 us);
# the E adds bytes_ddr 8192 and stall_sync 7 to the B's args; the inner B/E is d2d_copy by cat
check("pid 10 moe row", rows[("baseline", 0, "grouped_moe_dense")],
      dict(side="baseline", chip=0, family="grouped_moe_dense", ops=2, cycles=2500, time_us=20,
           bytes_ddr=4096 + 8192, bytes_sram=1024, stall_cycles={"ddr_wait": 150, "sync": 7}))
check("nested B/E row", rows[("baseline", 0, "d2d_copy")],
      dict(side="baseline", chip=0, family="d2d_copy", ops=1, cycles=200, time_us=2, bytes_d2d=512))
check("attention rows", (rows[("baseline", 0, "attention")]["cycles"], rows[("candidate", 0, "attention")]["time_us"]), (500, 4.5))
check("chip 1 from its late process_name", rows[("baseline", 1, "grouped_moe_dense")],
      dict(side="baseline", chip=1, family="grouped_moe_dense", ops=1, cycles=900, time_us=9, bytes_pcie=64))
check("row count", (len(t["per_chip"]), t["rows"], t["sided"]), (6, 7, True))
share = {r["side"]: (r["cycles"], r["graph_cycles"]) for r in t["target_share"]}
check("target share", share, {"baseline": (3400, 4100), "candidate": (800, 1300)})
# power of pid 10: 100 W for 10 us, 120 W for 20 us: (1000 + 2400) / 30
pw = {r["side"]: r for r in t["power_w"]}
check("power windows", (pw["baseline"]["samples"], pw["baseline"]["min"], pw["baseline"]["max"], pw["baseline"]["mean"], pw["baseline"]["span_us"]),
      (3, 100, 120, round(3400 / 30, 6), 30))
check("one power reading", (pw["candidate"]["samples"], pw["candidate"]["mean"], pw["candidate"]["span_us"]), (1, 90, 0))
check("ignored events counted", t["ignored_events"], 3)
b = {(r["side"], r["bucket"]): (r["launches"], r["tokens"], r["cycles"]) for r in t["moe_buckets"]}
check("moe buckets", b, {("baseline", "2-4"): (1, 3, 1000), ("baseline", "17-32"): (1, 20, 900), ("candidate", "2-4"): (1, 3, 800)})
check("attribution", s["attribution"], "per_op")
PY
expect_exit "chrome: --check follows" 0 exp-gate summarize --check X

# refused: each a one-line error at file:line:col, exit 2, no summary written
bad() { # NAME EXPECTED-MESSAGE-REGEX TRACE-TEXT
    printf '%s\n' "$3" > $T; rm -f X/performance/summary.json
    expect_exit "chrome refuses: $1" 2 exp-gate summarize X
    expect_grep "chrome refuses: $1: place and reason" "^exp-gate: X/performance/raw-device-trace.json$2" err.txt
    expect_lines "chrome refuses: $1: one line" 1 err.txt
    expect_absent "chrome refuses: $1: no summary" X/performance/summary.json
}
X1='{"ph": "X", "pid": 1, "tid": 1, "name": "ok", "ts": 0, "dur": 1, "args": {"cycles": 5}}'
bad "syntax" ':2:23: expected a string key' '{"traceEvents": [
 {"ph": "X", "pid": 1,, "tid": 1}
]}'
bad "E name mismatch" ':3:4: .*B/E nesting mismatch' '{"traceEvents": [
 {"ph": "B", "pid": 1, "tid": 1, "name": "a", "ts": 0, "args": {"cycles": 5}},
   {"ph": "E", "pid": 1, "tid": 1, "name": "b", "ts": 1}
]}'
bad "E without B" ':2:2: an E event without an open B' '{"traceEvents": [
 {"ph": "E", "pid": 1, "tid": 1, "ts": 1}]}'
bad "B without E" ':3:3: a B event without its E' "{\"traceEvents\": [
 $X1,
  {\"ph\": \"B\", \"pid\": 1, \"tid\": 1, \"name\": \"a\", \"ts\": 0, \"args\": {\"cycles\": 5}}]}"
bad "E on another thread" ':2:.*without an open B' "[{\"ph\": \"B\", \"pid\": 1, \"tid\": 1, \"name\": \"a\", \"ts\": 0},
{\"ph\": \"E\", \"pid\": 1, \"tid\": 2, \"ts\": 1, \"args\": {\"cycles\": 5}}]"
bad "cycles on B and E" ':2:1: a figure in the args of both' "[{\"ph\": \"B\", \"pid\": 1, \"tid\": 1, \"name\": \"a\", \"ts\": 0, \"args\": {\"cycles\": 5}},
{\"ph\": \"E\", \"pid\": 1, \"tid\": 1, \"ts\": 1, \"args\": {\"cycles\": 5}}]"
bad "E before B" ':2:1: E event before its B' "[{\"ph\": \"B\", \"pid\": 1, \"tid\": 1, \"name\": \"a\", \"ts\": 5},
{\"ph\": \"E\", \"pid\": 1, \"tid\": 1, \"ts\": 1, \"args\": {\"cycles\": 5}}]"
bad "no cycles" ':1:18: an op slice needs args.cycles' '{"traceEvents": [{"ph": "X", "pid": 1, "tid": 1, "name": "ok", "ts": 0, "dur": 1}]}'
bad "unknown byte kind" ':1:118: unknown byte kind' '{"traceEvents": [{"ph": "X", "pid": 1, "tid": 1, "name": "ok", "ts": 0, "dur": 1, "args": {"cycles": 5, "bytes_hbm": 3}}]}'
bad "duplicate top-level key" ':1:21: duplicate key' '{"traceEvents": [], "traceEvents": []}'
bad "duplicate args key" ':1:79: duplicate key "cycles"' '[{"ph": "X", "pid": 1, "tid": 1, "name": "ok", "ts": 0, "args": {"cycles": 5, "cycles": 6}}]'
bad "empty" ': no trace events' '{"traceEvents": []}'
bad "no traceEvents" ': no trace events' '{"other": 1}'
bad "truncated" ':2:1: unexpected end of input' "[$X1,"
bad "trailing comma" ':1:90: expected an array element' "[$X1,]"
bad "garbage after" ':1:91: expected the end of the document' "[$X1] x"
bad "displayTimeUnit" ':1:21: displayTimeUnit must be' "{\"displayTimeUnit\": \"s\", \"traceEvents\": [$X1]}"
bad "negative dur" ':1:64: dur must not be negative' '[{"ph": "X", "pid": 1, "tid": 1, "name": "ok", "ts": 0, "dur": -1, "args": {"cycles": 5}}]'
bad "process not a chip" ': pid 1: process_name must be' "[$X1, {\"ph\": \"M\", \"pid\": 1, \"name\": \"process_name\", \"args\": {\"name\": \"host\"}}]"
bad "two pids one chip" ': pids 1 and 2: two processes name the same side and chip' "[{\"ph\":\"M\",\"pid\":1,\"name\":\"process_name\",\"args\":{\"name\":\"chip 0\"}}, {\"ph\":\"M\",\"pid\":2,\"name\":\"process_name\",\"args\":{\"name\":\"chip 0\"}}, $X1]"
bad "power out of order" ':1:58: power readings of a process out of time order' '[{"ph":"C","pid":1,"name":"power","ts":5,"args":{"v":1}},{"ph":"C","pid":1,"name":"power","ts":4,"args":{"v":1}}]'
bad "power without a number" ':1:49: a power counter needs' '[{"ph":"C","pid":1,"name":"power","ts":5,"args":{"v":"high"}}]'
bad "event not an object" ':1:2: a trace event must be an object' '[3]'

# a family per launch (no cat, unique names) is refused at the 65,537th, not aggregated without end
$PY - $T <<'PY'
import sys
with open(sys.argv[1], "w") as f:
    f.write("[\n" + ",\n".join('{"ph":"X","pid":0,"tid":0,"name":"launch%d","ts":%d,"dur":1,"args":{"cycles":1}}' % (i, i) for i in range(65537)) + "\n]\n")
PY
expect_exit "chrome refuses: a family per launch" 2 exp-gate summarize --force X
expect_grep "chrome refuses: a family per launch: where" 'raw-device-trace.json:65538:1: more than 65536 op families' err.txt

# a bare array, power only: no op slice, so whole-graph attribution (never per_op on nothing)
printf '%s\n' '[{"ph":"C","pid":1,"name":"power","ts":5,"args":{"v":1}}]' > $T
expect_exit "chrome: power only summarizes" 0 exp-gate summarize --force X
expect_grep "chrome: power only is whole_graph_only" '"attribution": "whole_graph_only"' X/performance/summary.json

# streaming: a 40 MB trace (2x10^5 events on one line each) costs the reader a bounded buffer,
# not the file: peak RSS well under the file's size
$PY - $T <<'PY'
import sys
with open(sys.argv[1], "w") as f:
    f.write('{"traceEvents":[\n')
    for i in range(200000):
        f.write('{"ph":"X","pid":%d,"tid":1,"name":"op%d","cat":"%s","ts":%d,"dur":3,"args":{"cycles":%d,"bytes_ddr":4096,"stall_ddr_wait":5,"pad":"%s"}},\n'
                % (i % 2, i % 50, ("grouped_moe_dense", "attention")[i % 2], i * 3, 1000 + i % 7, "x" * 60))
    f.write('{"ph":"M","pid":0,"name":"process_name","args":{"name":"baseline chip 0"}},{"ph":"M","pid":1,"name":"process_name","args":{"name":"candidate chip 0"}}]}\n')
PY
if [ -x /usr/bin/time ]; then
    /usr/bin/time -f %M -o rss.txt exp-gate summarize --force X > /dev/null 2>err.txt
    rss=$(tail -1 rss.txt); size=$(wc -c < $T)
    case "${GOLDEN_BUILD:-}" in *san*) lim=131072;; *) lim=32768;; esac  # ASan's shadow memory
    if [ "$rss" -lt "$lim" ] && [ "$size" -gt 40000000 ]; then ok "chrome: streamed ($rss KiB for $size bytes)"
    else notok "chrome: streamed" "peak $rss KiB for a $size-byte trace: $(cat err.txt)"; fi
    # 10^5 events a side: cycles 1000 + i % 7 over even i (baseline), odd i (candidate)
    $PY - X/performance/summary.json <<'PY'
import json, sys
t = json.load(open(sys.argv[1]))["trace"]
want = {"baseline": sum(1000 + i % 7 for i in range(0, 200000, 2)), "candidate": sum(1000 + i % 7 for i in range(1, 200000, 2))}
got = {r["side"]: r["cycles"] for r in t["per_chip"]}
print("ok chrome: big trace sums" if got == want and t["rows"] == 200000 else f"not ok chrome: big trace sums {got} {want}")
PY
else ok "chrome: streamed # SKIP no /usr/bin/time"; fi

# decide on a Chrome trace: the target family 20 % cheaper on both chips, the graph 7 % slower:
# investigate (section 17's bottleneck_moved), the target's cycles read from the trace
rm -rf dd && mkdir dd && cp -r "$EX" dd/OP-MOE-0001; D=dd/OP-MOE-0001
rm -f $D/performance/summary.json $D/decision.json $D/decision.md $D/SHA256SUMS $D/performance/raw-device-trace.csv
$PY - $D <<'PY'
import json, sys, os
d = sys.argv[1]; raw = os.path.join(d, "performance/raw-requests.jsonl")
rs = [json.loads(l) for l in open(raw) if l.strip()]
for r in rs:
    if r["side"] == "candidate" and not r["warmup"]:
        r["ttft_ms"] = round(r["ttft_ms"] * 1.07, 6)
open(raw, "w").write("".join(json.dumps(r) + "\n" for r in rs))
ev = []
for pid, (side, chip) in enumerate([("baseline", 0), ("baseline", 1), ("candidate", 0), ("candidate", 1)]):
    ev.append({"ph": "M", "pid": pid, "name": "process_name", "args": {"name": f"{side} chip {chip}"}})
    moe = 14000 if side == "baseline" else 11200
    ts = 0
    for layer in range(4):
        ev.append({"ph": "X", "pid": pid, "tid": 0, "name": f"moe{layer}", "cat": "grouped_moe_dense", "ts": ts, "dur": 14, "args": {"cycles": moe}})
        ev.append({"ph": "B", "pid": pid, "tid": 0, "name": f"attn{layer}", "cat": "attention", "ts": ts + 14})
        ev.append({"ph": "E", "pid": pid, "tid": 0, "ts": ts + 54, "args": {"cycles": 40000}})
        ts += 60
json.dump({"traceEvents": ev}, open(os.path.join(d, "performance/raw-device-trace.json"), "w"), indent=1)
PY
exp-gate decide $D > out.txt 2> err.txt
expect_grep "chrome decide: investigate" '"decision": "investigate"' $D/decision.json
expect_grep "chrome decide: per_op attribution" '"attribution": "per_op"' $D/decision.json
# 4 layers x 2 chips: 112000 -> 89600 cycles
expect_grep "chrome decide: target cycles from the trace" 'Target family grouped\\_moe\\_dense: 112000 -> 89600 cycles \(-22400, -20.00 %\)' $D/decision.md
