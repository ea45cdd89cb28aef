#!/bin/sh
# npu-replay run --concurrency N: N requests of a case in flight on N lanes (closed loop). The
# goldens are the same bits at 1 and at 4 lanes (every tensor's sha256, recomputed by
# golden-dump --list, compared name by name), the raw lines say the concurrency and carry real
# queueing (a request waits for the other lanes' calls), a case's manifest `concurrency` column
# is honoured, and more requests in flight than the backend has lanes is refused (exit 2).
. "$GOLDEN_ROOT/tests/e2e/lib.sh"

expect_exit "make-model tiny" 0 npu-replay make-model --preset tiny --seed 4 -o m
expect_exit "matrix" 0 npu-replay matrix --model m --max-len 32 --random 1 --repeated 0 -o man.jsonl -j1
R="npu-replay run --model m --manifest man.jsonl --side baseline --warmup 1 --runs 3 -j1 --cases random-*"
expect_exit "run at concurrency 1" 0 $R --golden c1.h5 --raw c1.jsonl
expect_exit "run at concurrency 4" 0 $R --golden c4.h5 --raw c4.jsonl --concurrency 4
npu-replay run --help > help.txt 2>&1
expect_grep "--concurrency in --help" "--concurrency N" help.txt

list() { golden-dump --list "$1" | awk 'NR > 1 {print $1, $4}' | sort; }
list c1.h5 > l1.txt; list c4.h5 > l4.txt
n1=$(wc -l < l1.txt)
if [ "$n1" -lt 3 ]; then notok "goldens-listed" "only $n1 tensors at concurrency 1"
elif cmp -s l1.txt l4.txt; then ok "goldens-same-bits-1-vs-4 ($n1 tensors)"
else notok "goldens-same-bits-1-vs-4" "$(diff l1.txt l4.txt | head -5 | tr '\n' ' ')"; fi
expect_exit "golden at 4 verifies" 0 golden-dump --verify c4.h5

# raw lines: as many as at concurrency 1, each saying 4, and some request waited in the client
# queue for the other lanes (more than 0 ns between its issue and its turn)
l1=$(wc -l < c1.jsonl); l4=$(wc -l < c4.jsonl)
if [ "$l1" -gt 0 ] && [ "$l1" -eq "$l4" ]; then ok "raw-lines-same-count ($l4)"; else notok "raw-lines-same-count" "$l1 vs $l4"; fi
if [ "$(grep -c '"concurrency":4,' c4.jsonl)" -eq "$l4" ]; then ok "raw-says-concurrency-4"; else notok "raw-says-concurrency-4"; fi
if [ "$(grep -c '"concurrency":1,' c1.jsonl)" -eq "$l1" ]; then ok "raw-says-concurrency-1"; else notok "raw-says-concurrency-1"; fi
waits=$(python3 -c '
import json, sys
n = 0
for line in open(sys.argv[1]):
    s = json.loads(line)["stages"]["client_queue"]
    n += s["end_ns"] - s["start_ns"] > 0
print(n)' c4.jsonl)
if [ "$waits" -gt 0 ]; then ok "client-queue-waits-recorded ($waits)"; else notok "client-queue-waits-recorded" "no request waited"; fi
expect_exit "raw lines at 4 against the schema" 0 sh -c \
    'while IFS= read -r l; do printf "%s\n" "$l" > line.json; schema-check line.json calculet-raw-request-v1.schema.json >/dev/null || exit 1; done < c4.jsonl'

# the manifest's concurrency column, when --concurrency is not given
sed 's/"concurrency":1,/"concurrency":2,/' man.jsonl > man2.jsonl
expect_exit "run from a manifest with concurrency 2" 0 npu-replay run --model m --manifest man2.jsonl --side baseline --warmup 0 --runs 2 -j1 --cases 'random-*' --golden m2.h5 --raw m2.jsonl
if [ "$(grep -c '"concurrency":2,' m2.jsonl)" -eq "$(wc -l < m2.jsonl)" ] && [ -s m2.jsonl ]; then ok "manifest-column-honoured"; else notok "manifest-column-honoured" "$(head -c 300 m2.jsonl)"; fi
list m2.h5 > lm2.txt
if cmp -s l1.txt lm2.txt; then ok "goldens-same-bits-manifest-2"; else notok "goldens-same-bits-manifest-2"; fi

# more in flight than lanes: the cpu backend has 4 by default
mkdir o5
expect_exit "concurrency 5 on 4 lanes: exit 2" 2 $R --golden o5/g.h5 --raw o5/r.jsonl --concurrency 5
expect_grep "concurrency 5: why" "concurrency 5 needs 5 lanes, the backend has 4" err.txt
if [ -z "$(ls -A o5)" ]; then ok "concurrency-5-leaves-nothing"; else notok "concurrency-5-leaves-nothing" "$(ls -A o5)"; fi
expect_exit "concurrency 5 on lanes=8" 0 $R --golden c5.h5 --raw c5.jsonl --concurrency 5 --backend-opt lanes=8
list c5.h5 > l5.txt
if cmp -s l1.txt l5.txt; then ok "goldens-same-bits-1-vs-5"; else notok "goldens-same-bits-1-vs-5"; fi

# the comparison bites: a lane fault (lane 2 never writes its cache) is invisible at
# concurrency 1 (lane 0 only) and changes the golden when the first measured run lands on lane 2
RF="npu-replay run --model m --manifest man.jsonl --side baseline --warmup 2 --runs 2 -j1 --cases random-* --backend-opt inject=kv_lane2_zero"
expect_exit "lane fault at concurrency 1" 0 $RF --golden f1.h5 --raw f1.jsonl
expect_exit "lane fault at concurrency 4" 0 $RF --golden f4.h5 --raw f4.jsonl --concurrency 4
list f1.h5 > lf1.txt; list f4.h5 > lf4.txt
if cmp -s l1.txt lf1.txt; then ok "lane-fault-unseen-at-1"; else notok "lane-fault-unseen-at-1"; fi
if cmp -s lf1.txt lf4.txt; then notok "lane-fault-seen-at-4" "the goldens are the same"; else ok "lane-fault-seen-at-4"; fi
