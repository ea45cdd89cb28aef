#!/bin/sh
# npu-replay soak (handbook section 13.2): the cases looped with N requests in flight and seeded
# random delays; every request's output hashed against the first clean (solo) run. Shown to
# bite on faults a single-request run cannot see: lanes of the test plug-in that cross only
# when two requests are in flight (cross=1), a rare nondeterministic move of one logit
# (flaky=N), and the cpu backend's lane 2 that never writes its cache. Every document is held
# against its schema and its counts against the fault lines.
. "$GOLDEN_ROOT/tests/e2e/lib.sh"
PLUGIN="$GOLDEN_BUILD/tests/lib/test-backend.so"

expect_exit "make-model tiny" 0 npu-replay make-model --preset tiny --seed 2 -o m
expect_exit "matrix" 0 npu-replay matrix --model m --backend "$PLUGIN" --max-len 16 --random 1 --repeated 0 -o man.jsonl -j1
S="npu-replay soak --manifest man.jsonl --cases random-* -j1 --duration 1.5"
num() { python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])' "$1" "$2"; }

expect_exit "clean cpu soak at concurrency 4: exit 0" 0 $S --model m --concurrency 4 -o c.json --faults c-faults.jsonl
expect_exit "soak result against its schema" 0 manifest-verify --schema calculet-soak-result/v1 c.json
req=$(num c.json requests); mis=$(num c.json mismatches); dur=$(num c.json duration_s)
if [ "$req" -ge 8 ] && [ "$mis" -eq 0 ] && [ ! -s c-faults.jsonl ]; then ok "clean-soak-counts ($req requests)"; else notok "clean-soak-counts" "$req requests, $mis mismatches"; fi
if python3 -c "import sys; sys.exit(0 if $dur >= 1.5 else 1)"; then ok "duration-reached ($dur s)"; else notok "duration-reached" "$dur"; fi

# lanes that cross only when two requests are in flight: unseen alone, seen at 2
expect_exit "cross=1 alone: exit 0" 0 $S --backend "$PLUGIN" --backend-opt cross=1 --concurrency 1 -o x1.json --faults x1-faults.jsonl
expect_exit "cross=1 at concurrency 2: exit 1" 1 $S --backend "$PLUGIN" --backend-opt cross=1 --concurrency 2 -o x2.json --faults x2-faults.jsonl
expect_exit "cross result against its schema" 0 manifest-verify --schema calculet-soak-result/v1 x2.json
expect_exit "cross fault lines against their schema" 0 manifest-verify --schema calculet-fault/v1 x2-faults.jsonl
mis=$(num x2.json mismatches); lines=$(grep -c '"kind":"crc_mismatch"' x2-faults.jsonl)
# every mismatch counted; a line for each until the cap of 1000 fault lines (docs/npu-replay.md),
# the result's fault_lines saying how many the file holds (a fast machine reaches the cap)
fl=$(num x2.json fault_lines); all=$(wc -l < x2-faults.jsonl)
if [ "$mis" -gt 0 ] && [ "$all" -eq "$fl" ] &&
   { [ "$mis" -eq "$lines" ] || { [ "$fl" -eq 1000 ] && [ "$lines" -lt "$mis" ]; }; }; then
    ok "cross-mismatches-counted ($mis, $lines lines)"
else notok "cross-mismatches-counted" "$mis mismatches vs $lines lines, fault_lines $fl, file $all"; fi
expect_grep "cross line names lane, time and both hashes" "on lane [01] of 2 in flight, [0-9.]+ s into the soak: sha256 [0-9a-f]{64}, the clean run gave [0-9a-f]{64}" x2-faults.jsonl

# a rare nondeterministic mismatch, alone on one lane
expect_exit "flaky=50 alone: exit 1" 1 $S --backend "$PLUGIN" --backend-opt flaky=50 --concurrency 1 -o f.json --faults f-faults.jsonl
mis=$(num f.json mismatches); req=$(num f.json requests)
if [ "$mis" -gt 0 ] && [ "$mis" -lt "$req" ]; then ok "flaky-rare-mismatch ($mis of $req)"; else notok "flaky-rare-mismatch" "$mis of $req"; fi

# the cpu backend's lane 2 that never writes its cache: only a soak on 3 lanes or more sees it
expect_exit "kv_lane2_zero at concurrency 2: exit 0" 0 $S --model m --concurrency 2 --backend-opt inject=kv_lane2_zero -o z2.json
expect_exit "kv_lane2_zero at concurrency 3: exit 1" 1 $S --model m --concurrency 3 --backend-opt inject=kv_lane2_zero -o z3.json --faults z3-faults.jsonl
expect_grep "only lane 2 mismatches" "on lane 2 of 3" z3-faults.jsonl
if grep -q "on lane [01] of 3" z3-faults.jsonl; then notok "lanes-0-1-clean"; else ok "lanes-0-1-clean"; fi

# usage and refusals: one line, exit 2, nothing written
mkdir o
expect_exit "no --duration: exit 2" 2 npu-replay soak --model m --manifest man.jsonl -o o/s.json
expect_exit "3 in flight on a 2-lane plug-in: exit 2" 2 $S --backend "$PLUGIN" --concurrency 3 -o o/s.json
expect_grep "why" "3 requests in flight need 3 lanes, the backend has 2" err.txt
expect_exit "no case matches: exit 2" 2 npu-replay soak --model m --manifest man.jsonl --cases nothing-* --duration 1 -o o/s.json
if [ -z "$(ls -A o)" ]; then ok "refusals-leave-nothing"; else notok "refusals-leave-nothing" "$(ls -A o)"; fi
