#!/bin/sh
# Build the example vendor hand-off (examples/handoff/) and the team's side (examples/team/)
# from real runs: the tiny model through npu-replay's cpu backend, the f32 reference for the
# team, the same backend under dtype=bf16 playing the vendor's device (baseline: chunk=1, one
# position at a time; candidate: the default chunk), a fault run for the error path, graphs
# and the handoff.json index with every hash. Usage: make-handoff.sh BIN_DIR ROOT
#   BIN_DIR holds npu-replay and exp-gate; ROOT is the source tree (examples/ is rewritten).
set -eu
BIN=$1
ROOT=$2
H=$ROOT/examples/handoff
T=$ROOT/examples/team
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
R="$BIN/npu-replay"
CASES="random-prefill-p16-o1-00 repeated-prefill-p16-o1-00"

"$R" make-model --preset tiny --seed 1 -o "$W/model" > /dev/null
# production today: the same model with its weights stored in f16, run with bf16 activations
"$R" make-model --preset tiny --seed 1 --dtype f16 -o "$W/model-f16" > /dev/null
"$R" matrix --model "$W/model" --max-len 16 --random 1 --repeated 1 -o "$W/all.jsonl" > /dev/null
mkdir -p "$H/goldens/inputs" "$T"
rm -f "$H"/goldens/inputs/*.json
: > "$H/goldens/input-manifest.jsonl"
for c in $CASES; do
    grep "\"case_id\":\"$c\"" "$W/all.jsonl" >> "$H/goldens/input-manifest.jsonl"
    cp "$W/inputs/$c.json" "$H/goldens/inputs/"
done
M=$H/goldens/input-manifest.jsonl
TAPS='layers/*/mlp_out,layers/*/hidden'
# the team's f32 reference (one measured run: goldens only)
"$R" run -j 1 --model "$W/model" --manifest "$M" --side baseline --taps "$TAPS" \
    --golden "$W/reference.h5" --raw "$W/ref.jsonl" --warmup 0 --runs 1 > /dev/null
"$R" run -j 1 --model "$W/model-f16" --manifest "$M" --side baseline --taps "$TAPS" --backend-opt dtype=bf16 \
    --golden "$W/production.h5" --raw "$W/prod.jsonl" --warmup 0 --runs 1 > /dev/null
# the vendor's device: baseline (production) and candidate, section 7's 10 + 30 runs
"$R" run -j 1 --model "$W/model" --manifest "$M" --side baseline --taps "$TAPS" \
    --backend-opt dtype=bf16 --backend-opt chunk=1 --golden "$W/vendor-baseline.h5" \
    --raw "$W/base.jsonl" --faults "$W/base.faults" --warmup 10 --runs 30 > /dev/null
"$R" run -j 1 --model "$W/model" --manifest "$M" --side candidate --taps "$TAPS" \
    --backend-opt dtype=bf16 --golden "$W/candidate.h5" \
    --raw "$W/cand.jsonl" --faults "$W/cand.faults" --warmup 10 --runs 30 > /dev/null
# the error path: a timeout planted in the candidate run's 2nd forward call, retested after reset
if "$R" run -j 1 --model "$W/model" --manifest "$M" --side candidate --taps none \
    --backend-opt dtype=bf16 --backend-opt inject=timeout@2 --golden "$W/fault.h5" \
    --raw "$W/fault.jsonl" --faults "$W/fault.faults" --warmup 0 --runs 1 > /dev/null 2>&1; then
    echo "make-handoff: the planted fault did not fail the run" >&2; exit 2
fi
cp "$W/reference.h5" "$W/production.h5" "$T/"
cp "$W/candidate.h5" "$H/goldens/candidate.h5"
rm -f "$H/goldens/golden-index.txt" "$H/trace/per-op-per-chip.csv"
cat "$W/base.jsonl" "$W/cand.jsonl" > "$H/performance/raw-requests.jsonl"
cat "$W/base.faults" "$W/cand.faults" "$W/fault.faults" > "$H/error-path/faults.jsonl"
cat > "$H/error-path/reset-retest.md" <<'MD'
Error path: a forward call that times out (planted: the 2nd forward call of a candidate run) fails the request;
the harness resets every lane and runs the same request again (prefill and greedy decode). The
retest after reset passed; the fault is logged in faults.jsonl with retest_after_reset "passed".
MD
cat > "$H/trace/parse_trace.py" <<'PY'
# Reads the per-op per-chip trace (performance/raw-device-trace.csv) and prints cycles per side, family and chip.
import csv, sys, collections
t = collections.Counter()
for r in csv.DictReader(open(sys.argv[1])):
    t[(r['side'], r['family'], r['chip'])] += int(r['end_cycle']) - int(r['start_cycle'])
for k, v in sorted(t.items()):
    print(*k, v)
PY
# the trace of the same runs: the cpu backend has no device counters, so each side's first
# measured request of every case is traced by its stage marks (each stage an op on chip 0; one
# cycle = 1 ns), in the columns exp-gate reads from performance/raw-device-trace.csv
python3 - "$W/base.jsonl" "$W/cand.jsonl" "$H/performance/raw-device-trace.csv" <<'PY'
import json, sys
out = ["side,chip,layer,op,family,start_cycle,end_cycle"]
for path in sys.argv[1:3]:
    done = set()
    for line in open(path):
        r = json.loads(line)
        if r["warmup"] or r["case_id"] in done:
            continue
        done.add(r["case_id"])
        t0 = min(s["start_ns"] for s in r["stages"].values())
        for name, s in r["stages"].items():
            out.append("%s,0,0,%s.%s,%s,%d,%d" % (r["side"], r["case_id"], name, name,
                                                  s["start_ns"] - t0, s["end_ns"] - t0))
open(sys.argv[3], "w").write("\n".join(out) + "\n")
PY
# the vendor's summary of the raw data (what the slides would show)
E=$W/exp
mkdir -p "$E/performance"
cp "$T/hypothesis.yaml" "$E/hypothesis.yaml"
cp "$H/performance/raw-requests.jsonl" "$E/performance/"
cp "$H/performance/raw-device-trace.csv" "$E/performance/raw-device-trace.csv"
"$BIN/exp-gate" summarize "$E" > /dev/null
cp "$E/performance/summary.json" "$H/performance/summary.json"
# the graphs: weights and activations loaded on the DMA queue, the matmul on the core queue,
# the result stored back on the DMA queue after a barrier. The candidate drops the wait on the
# weights' event: the later wait on the activations' event (signalled after it on the same
# queue) already orders it.
mkdir -p "$H/graph"
rm -f "$H/graph/partition.txt" "$H/graph/memory-plan-diff.txt"
graph() { # $1 = 1 with the implied wait
    w=""
    [ "$1" = 1 ] && w='  {"id": "wait_w", "queue": "core", "kind": "wait", "event": "e_w"},
'
    cat <<JSON
{"schema": "calculet-graph/v1",
 "queues": [{"id": "dma", "chip": 0}, {"id": "core", "chip": 0}],
 "buffers": [
  {"id": "w", "chip": 0, "space": "ddr", "address": 0, "size": 8192},
  {"id": "x", "chip": 0, "space": "sram", "address": 0, "size": 4096},
  {"id": "y", "chip": 0, "space": "sram", "address": 4096, "size": 4096}],
 "ops": [
  {"id": "load_w", "queue": "dma", "family": "dma_load", "writes": [{"buffer": "w"}]},
  {"id": "sig_w", "queue": "dma", "kind": "signal", "event": "e_w"},
  {"id": "load_x", "queue": "dma", "family": "dma_load", "writes": [{"buffer": "x"}]},
  {"id": "sig_x", "queue": "dma", "kind": "signal", "event": "e_x"},
$w  {"id": "wait_x", "queue": "core", "kind": "wait", "event": "e_x"},
  {"id": "moe", "queue": "core", "family": "grouped_moe_dense", "reads": [{"buffer": "w"}, {"buffer": "x"}], "writes": [{"buffer": "y"}]},
  {"id": "bar_y", "kind": "barrier", "queues": ["dma", "core"]},
  {"id": "store_y", "queue": "dma", "family": "dma_store", "reads": [{"buffer": "y"}]}
 ]}
JSON
}
graph 1 > "$H/graph/baseline.json"
graph 0 > "$H/graph/candidate.json"
cat > "$H/graph/op-count.csv" <<'CSV'
family,baseline,candidate
dma_load,2,2
grouped_moe_dense,1,1
dma_store,1,1
wait,2,1
CSV
python3 "$ROOT/tests/tools/handoff-index.py" "$H"
