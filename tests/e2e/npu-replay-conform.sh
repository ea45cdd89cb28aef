#!/bin/sh
# npu-replay conform end to end: the clean cpu backend passes every check (exit 0), each planted
# fault fails exactly the check made for it (exit 1, JSON and JUnit say which), bad usage exits 2.
. "$GOLDEN_ROOT/tests/e2e/lib.sh"

expect_exit "make-model tiny" 0 npu-replay make-model --preset tiny --seed 11 -o m
expect_exit "clean backend passes" 0 npu-replay conform --model m -j1 --json clean.json --junit clean.xml
expect_grep "clean: the table lists every check" '^router +pass' out.txt
expect_grep "clean: JSON verdict pass" '"verdict": "pass"' clean.json
expect_grep "clean: JUnit has 7 cases, none failed" 'tests="9" failures="0"' clean.xml

# fault -> the one check that must fail (worked out from what each fault breaks)
while read -r fault check; do
    expect_exit "inject=$fault exits 1" 1 npu-replay conform --model m -j1 --backend-opt "inject=$fault" --json "$fault.json"
    got=$(grep -E '^[a-z-]+ +FAIL' out.txt | awk '{print $1}' | tr '\n' ' ')
    if [ "$got" = "$check " ]; then ok "inject=$fault fails exactly $check"; else
        notok "inject=$fault fails exactly $check" "failed: '$got'"; fi
    n=$(grep -c '"status": "fail"' "$fault.json")
    if [ "$n" -eq 1 ]; then ok "inject=$fault: one failed check in the JSON"; else
        notok "inject=$fault: one failed check in the JSON" "$n"; fi
done <<'T'
causal_leak causal-mask
kv_off_by_one_at_16 kv-positions
kv_lane_cross kv-lanes
kv_tail_stale kv-tail
kv_stale_after_reset kv-reset
router_duplicate router
router_unnormalized router
router_tie_high_index router
router_nan_silent router
topk_too_small sampling-topk
T

expect_exit "--checks selects" 1 npu-replay conform --model m -j1 --checks kv-lanes,router --backend-opt inject=router_duplicate
if [ "$(grep -cE '^(kv-lanes|router) ' out.txt)" -eq 2 ] && ! grep -q '^causal-mask' out.txt; then
    ok "--checks runs only the listed checks"; else notok "--checks runs only the listed checks"; fi
expect_exit "a finding names layer and position" 1 npu-replay conform --model m -j1 --checks router --backend-opt inject=router_duplicate
expect_grep "duplicate named with its ranks" 'layer [0-9]+ position [0-9]+: expert [0-9]+ chosen twice' out.txt
expect_exit "unknown check exits 2" 2 npu-replay conform --model m --checks nope --json bad.json
expect_grep "unknown check is named" "nope" err.txt
expect_absent "no JSON left behind on exit 2" bad.json
expect_exit "unknown fault exits 2" 2 npu-replay conform --model m --backend-opt inject=nope
expect_exit "conform without --model exits 2" 2 npu-replay conform
expect_exit "existing --json without --force exits 2" 2 npu-replay conform --model m --json clean.json
expect_exit "kv-growth table" 0 npu-replay conform --model m -j1 --checks kv-growth --json g.json
expect_grep "kv-growth: 256 bytes written a token at context 16" '^ +16 +256 +5120 ' out.txt
expect_grep "kv-growth curve in the JSON" '"kv_read_bytes_per_token": 66560' g.json
expect_exit "sampling-topk with logprobs needs the whole vocabulary" 0 npu-replay conform --model m -j1 --checks sampling-topk --sampling n_probs=5
expect_grep "sampling-topk names the k" 'need k >= 512; the backend gives 512' out.txt
expect_exit "bad --sampling exits 2" 2 npu-replay conform --model m --sampling top_q=1

# stability/faults.jsonl: a backend whose decode fails at position 17 (the test plug-in)
PLUGIN="$GOLDEN_BUILD/tests/lib/test-backend.so"
expect_exit "a failing backend call: exit 2" 2 npu-replay conform --model m --backend "$PLUGIN" --backend-opt fail_at=17 --checks kv-positions,rejection --faults faults.jsonl --side baseline
expect_lines "one fault line (kv-positions; rejection passes)" 1 faults.jsonl
expect_grep "calculet-fault/v1 with the retest after reset" '"schema":"calculet-fault/v1".*"side":"baseline","case_id":"kv-positions","kind":"device_error".*"recovered":true,"retest_after_reset":"passed"' faults.jsonl
if [ -n "$PYTHON" ]; then
    expect_exit "fault lines carry exactly the schema's fields" 0 "$PYTHON" -c '
import json, sys
s = json.load(open(sys.argv[1]))
for line in open(sys.argv[2]):
    d = json.loads(line)
    assert set(s["required"]) <= set(d) <= set(s["properties"]), d
    assert d["kind"] in s["properties"]["kind"]["enum"]
' "$GOLDEN_ROOT/schemas/calculet-fault-v1.schema.json" faults.jsonl
fi
expect_exit "no fault: an empty faults file" 0 npu-replay conform --model m -j1 --checks rejection --faults none.jsonl
expect_lines "empty faults file" 0 none.jsonl
