#!/bin/sh
# Issue 33: run --concurrency N advances the lanes in flight with one step_batch per round when
# the backend has it. The goldens have the same bits with and without batching (--batch off),
# at concurrency 1 and 4, through the backend host and --in-process, with taps too; batching
# really happened (a batched round's timed requests share the batch's npu_wait reading, which
# per-lane calls never do). A call that misses --call-timeout is cancelled, not killed, when
# the backend has cancel. Loading: a version 2 plug-in of the older header (size =
# GOLDEN_BACKEND_V2_MIN_SIZE) loads and runs lane by lane; a smaller table is exit 2; a
# step_batch that answers a status out of range or changes a lane it was not given is a
# protocol violation the harness catches (exit 2, its fault line); a version 1 plug-in still runs.
. "$GOLDEN_ROOT/tests/e2e/lib.sh"
LIB="$GOLDEN_BUILD/tests/lib"

list() { golden-dump --list "$1" | awk 'NR > 1 {print $1, $4}' | sort; }
same() { # NAME A.h5 B.h5
    list "$2" > a.lst; list "$3" > b.lst
    n=$(wc -l < a.lst)
    if [ "$n" -lt 3 ]; then notok "$1" "only $n tensors in $2"
    elif cmp -s a.lst b.lst; then ok "$1 ($n tensors)"
    else notok "$1" "$(diff a.lst b.lst | head -4 | tr '\n' ' ')"; fi
}
# lines of RAW whose (case, npu_wait start) another line shares: > 0 only when batched
shared() {
    python3 -c '
import json, sys, collections
c = collections.Counter()
for line in open(sys.argv[1]):
    s = json.loads(line)
    c[(s["case_id"], s["stages"]["npu_wait"]["start_ns"])] += 1
print(sum(v for v in c.values() if v > 1))' "$1"
}

expect_exit "make-model tiny" 0 npu-replay make-model --preset tiny --seed 4 -o m
expect_exit "matrix" 0 npu-replay matrix --model m --max-len 32 --random 1 --repeated 0 -o man.jsonl -j1
R="npu-replay run --model m --manifest man.jsonl --side baseline --warmup 1 --runs 3 -j1 --cases random-*"
expect_exit "concurrency 1" 0 $R --taps none --golden c1.h5 --raw c1.jsonl
expect_exit "concurrency 4, batched" 0 $R --taps none --golden b4.h5 --raw b4.jsonl --concurrency 4
expect_exit "concurrency 4, --batch off" 0 $R --taps none --golden o4.h5 --raw o4.jsonl --concurrency 4 --batch off
expect_exit "concurrency 4, batched, in process" 0 $R --taps none --golden i4.h5 --raw i4.jsonl --concurrency 4 --in-process
expect_exit "concurrency 4, taps, batched" 0 $R --golden t4.h5 --raw t4.jsonl --concurrency 4
expect_exit "concurrency 1, taps" 0 $R --golden t1.h5 --raw t1.jsonl
same "goldens-batched-vs-1" c1.h5 b4.h5
same "goldens-batched-vs-off" o4.h5 b4.h5
same "goldens-batched-in-process-vs-1" c1.h5 i4.h5
same "goldens-taps-batched-vs-1" t1.h5 t4.h5
sb=$(shared b4.jsonl); so=$(shared o4.jsonl); si=$(shared i4.jsonl)
if [ "$sb" -gt 0 ] && [ "$si" -gt 0 ] && [ "$so" -eq 0 ]; then ok "batching-happened ($sb, $si lines share a batch; 0 off)"
else notok "batching-happened" "batched $sb, in process $si, off $so"; fi
keys() { python3 -c '
import json, sys
for l in open(sys.argv[1]):
    s = json.loads(l); print(s["request_id"], s["warmup"], s["concurrency"], sorted(s))' "$1" | sort; }
keys b4.jsonl > kb.txt; keys o4.jsonl > ko.txt
if [ -s kb.txt ] && cmp -s kb.txt ko.txt; then ok "raw-lines-same-requests-and-keys ($(wc -l < kb.txt))"
else notok "raw-lines-same-requests-and-keys" "$(diff kb.txt ko.txt | head -3 | tr '\n' ' ')"; fi
expect_exit "batched raw lines against the schema" 0 sh -c \
    'while IFS= read -r l; do printf "%s\n" "$l" > line.json; schema-check line.json calculet-raw-request-v1.schema.json >/dev/null || exit 1; done < b4.jsonl'
expect_exit "--batch bogus: exit 2" 2 $R --golden x.h5 --raw x.jsonl --batch bogus
npu-replay run --help > help.txt 2>&1
expect_grep "--batch in --help" "--batch auto\|off" help.txt

# the call deadline cancels first: the cpu backend's device delay (up to 3 s, cancellable) on a
# deadline of 0.3 s; the host lives on and the fault line says so (kind timeout, as before)
mkdir d
expect_exit "a missed deadline: exit 2" 2 npu-replay run --model m --manifest man.jsonl --side baseline \
    --warmup 0 --runs 1 -j1 --cases random-prefill-p1-o1-00 --golden d/g.h5 --raw d/r.jsonl \
    --faults d/f.jsonl --backend-opt delay_us=3000000 --call-timeout 0.3
expect_grep "deadline: cancelled, not killed" '"kind":"timeout",[^}]*"message":"cpu: backend call prefill missed its deadline of 0.305 s; cancelled, lane 0 reset \(the backend host lives on\)"' d/f.jsonl
expect_absent "deadline: no golden" d/g.h5

# loading and the protocol checks, through the backend host (a plug-in always runs there)
mkdir p
expect_exit "plug-in matrix" 0 npu-replay matrix --model m --backend "$LIB/test-backend.so" --max-len 16 --random 1 --repeated 0 -o p/man.jsonl -j1
P="npu-replay run --manifest p/man.jsonl --side baseline --warmup 1 --runs 2 -j1 --cases random-* --taps none"
expect_exit "version 1 plug-in at concurrency 2" 0 $P --backend "$LIB/test-backend.so" --concurrency 2 --golden v1.h5 --raw v1.jsonl
expect_exit "full version 2 plug-in, batched" 0 $P --backend "$LIB/test-backend-v2-full.so" --concurrency 2 --golden full.h5 --raw full.jsonl
expect_exit "older version 2 header (MIN_SIZE) at concurrency 2" 0 $P --backend "$LIB/test-backend-v2-min.so" --concurrency 2 --golden min.h5 --raw min.jsonl
same "goldens-v2-batched-vs-v1" v1.h5 full.h5
same "goldens-v2-min-vs-v1" v1.h5 min.h5
sf=$(shared full.jsonl); sm=$(shared min.jsonl)
if [ "$sf" -gt 0 ] && [ "$sm" -eq 0 ]; then ok "min-size-table-runs-per-lane (full $sf, min $sm)"
else notok "min-size-table-runs-per-lane" "full $sf, min $sm"; fi
mkdir small
expect_exit "table below MIN_SIZE: exit 2" 2 $P --backend "$LIB/test-backend-v2-small.so" --golden small/g.h5 --raw small/r.jsonl
expect_grep "below MIN_SIZE: why" "version 2 table is [0-9]+ bytes, smaller than the [0-9]+ of version 2" err.txt
if [ -z "$(ls -A small)" ]; then ok "below-min-leaves-nothing"; else notok "below-min-leaves-nothing" "$(ls -A small)"; fi
for v in badstatus otherlane; do
    mkdir "$v"
    expect_exit "$v: exit 2" 2 $P --backend "$LIB/test-backend-v2-$v.so" --concurrency 2 --golden "$v/g.h5" --raw "$v/r.jsonl" --faults "$v/f.jsonl"
    cp err.txt "$v/err.txt"
    expect_absent "$v: no golden" "$v/g.h5"
done
expect_grep "status out of range caught" "step_batch gave lane 0 status 99, not an error code of ABI version 2" badstatus/err.txt
expect_grep "status out of range: fault line" '"message":"test-v2: step_batch gave lane 0 status 99' badstatus/f.jsonl
expect_grep "other lane changed caught" "step_batch changed lane 1, which it was not given \(length [0-9]+ -> 1\)" otherlane/err.txt
expect_grep "other lane changed: fault line" '"message":"test-v2: step_batch changed lane 1' otherlane/f.jsonl
# the same plug-ins with --batch off never call step_batch: they pass
expect_exit "badstatus plug-in, --batch off" 0 $P --backend "$LIB/test-backend-v2-badstatus.so" --concurrency 2 --batch off --golden bo.h5 --raw bo.jsonl
same "goldens-batch-off-vs-v1" v1.h5 bo.h5
