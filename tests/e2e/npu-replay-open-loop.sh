#!/bin/sh
# npu-replay run --qps R --arrivals poisson --seed S: the open loop (MLPerf LoadGen's server
# scenario). The schedule is reproducible (same seed, same arrival times to the ns; another seed,
# others), it is the documented recipe (a second implementation here in Python gives the same
# offsets), its inter-arrival mean is 1/R within a stated tolerance (numpy), the client queue is
# a real wait (from the scheduled arrival until a lane takes the request: never before the
# arrival, and behind the previous request when the only lane is busy), and the goldens are the
# same bits as the closed loop's. Bad --qps/--arrivals: exit 2, nothing written.
. "$GOLDEN_ROOT/tests/e2e/lib.sh"

expect_exit "make-model tiny" 0 npu-replay make-model --preset tiny --seed 4 -o m
expect_exit "matrix" 0 npu-replay matrix --model m --max-len 32 --random 1 --repeated 0 -o man.jsonl -j1
case=$(python3 -c '
import json, sys
for l in open(sys.argv[1]):
    d = json.loads(l)
    if d.get("phase") == "prefill" and not d.get("rejection") and d["case_id"].startswith("random-"):
        print(d["case_id"]); break' man.jsonl)
if [ -n "$case" ]; then ok "a prefill case ($case)"; else notok "a prefill case" "none in man.jsonl"; fi
R="npu-replay run --model m --manifest man.jsonl --side baseline --warmup 0 -j1 --cases $case"
expect_exit "closed loop" 0 $R --runs 40 --golden c.h5 --raw c.jsonl
expect_exit "open loop seed 7" 0 $R --runs 40 --golden a.h5 --raw a.jsonl --qps 500 --arrivals poisson --seed 7 --concurrency 2
expect_exit "open loop seed 7 again" 0 $R --runs 40 --golden b.h5 --raw b.jsonl --qps 500 --seed 7 --concurrency 2
expect_exit "open loop seed 8" 0 $R --runs 40 --golden d.h5 --raw d.jsonl --qps 500 --seed 8 --concurrency 2
# saturated: far more arrivals than one lane serves, so requests queue behind each other
expect_exit "open loop saturated" 0 $R --runs 20 --golden s.h5 --raw s.jsonl --qps 1000000 --seed 7 --concurrency 1

list() { golden-dump --list "$1" | awk 'NR > 1 {print $1, $4}' | sort; }
list c.h5 > lc.txt; list a.h5 > la.txt
if [ "$(wc -l < lc.txt)" -ge 3 ] && cmp -s lc.txt la.txt; then ok "goldens-same-bits-open-vs-closed"
else notok "goldens-same-bits-open-vs-closed" "$(diff lc.txt la.txt | head -3 | tr '\n' ' ')"; fi
list s.h5 > ls.txt
if cmp -s lc.txt ls.txt; then ok "goldens-same-bits-saturated"; else notok "goldens-same-bits-saturated"; fi

cat > check.py <<'PY'
import json, math, sys
import numpy as np

def starts(path):
    rows = [json.loads(l) for l in open(path)]
    rows.sort(key=lambda r: r["run"])
    return rows

def fnv1a64(s):
    h = 0xcbf29ce484222325
    for c in s.encode():
        h = ((h ^ c) * 0x100000001b3) & (2**64 - 1)
    return h

def schedule(seed, case_id, qps, n):
    """The recipe of docs/npu-replay.md, written again: splitmix64 from seed ^ fnv1a64(id)."""
    M = 2**64 - 1
    st = seed ^ fnv1a64(case_id)
    t, out = 0.0, []
    for _ in range(n):
        st = (st + 0x9e3779b97f4a7c15) & M
        z = st
        z = ((z ^ (z >> 30)) * 0xbf58476d1ce4e5b9) & M
        z = ((z ^ (z >> 27)) * 0x94d049bb133111eb) & M
        z ^= z >> 31
        u = (z >> 11) * (1.0 / 9007199254740992.0)
        t += -math.log(1.0 - u) / qps
        out.append(int(math.floor(t * 1e9 + 0.5)))
    return out

case = sys.argv[1]
fails = []
def check(name, cond, why=""):
    print(("ok " if cond else "not ok ") + name + ("" if cond else ": " + why))

a, b, d, s = (starts(p) for p in ("a.jsonl", "b.jsonl", "d.jsonl", "s.jsonl"))
arr = lambda rows: np.array([r["stages"]["client_queue"]["start_ns"] for r in rows], dtype=np.int64)
A, B, D = arr(a), arr(b), arr(d)
check("runs-all-there", [r["run"] for r in a] == list(range(40)), str([r["run"] for r in a]))
check("same-seed-same-arrivals", np.array_equal(A - A[0], B - B[0]),
      str((A - A[0])[:5]) + " vs " + str((B - B[0])[:5]))
check("other-seed-other-arrivals", not np.array_equal(A - A[0], D - D[0]))
want = np.array(schedule(7, case, 500.0, 40), dtype=np.int64)
dev = np.abs((A - A[0]) - (want - want[0])).max()
check("arrivals-are-the-documented-recipe", dev <= 1, "max deviation %d ns" % dev)
# the mean of n exponential gaps has standard error mean/sqrt(n): 4 of them is the tolerance
gaps = np.diff(np.concatenate([[0], want])) / 1e9
tol = 4 * (1 / 500.0) / math.sqrt(len(gaps))
check("inter-arrival-mean-40 (%.5f s, 1/R %.5f, tol %.5f)" % (gaps.mean(), 1 / 500.0, tol),
      abs(gaps.mean() - 1 / 500.0) <= tol)
big = np.diff(np.concatenate([[0], schedule(7, case, 500.0, 20000)])) / 1e9
tol = 4 * (1 / 500.0) / math.sqrt(len(big))
check("inter-arrival-mean-20000 (%.6f s, tol %.6f)" % (big.mean(), tol),
      abs(big.mean() - 1 / 500.0) <= tol)
# exponential: the standard deviation equals the mean (coefficient of variation 1, within 5%)
check("inter-arrival-cv-1 (%.4f)" % (big.std() / big.mean()), abs(big.std() / big.mean() - 1) < 0.05)
# never issued before its arrival; the client queue ends when a lane takes it
cq = lambda r: r["stages"]["client_queue"]
check("never-before-arrival", all(cq(r)["end_ns"] >= cq(r)["start_ns"] for r in a + s))
check("raw-says-concurrency-2", all(r["concurrency"] == 2 for r in a))
# saturated, one lane: request r is taken only after request r-1 ended, and waits grow
ok_order = all(cq(s[i])["end_ns"] >= s[i - 1]["stages"]["stream_flush"]["end_ns"] for i in range(1, len(s)))
check("saturated-waits-behind-the-lane", ok_order)
waits = [cq(r)["end_ns"] - cq(r)["start_ns"] for r in s]
check("saturated-queue-grows (%d -> %d ns)" % (waits[0], waits[-1]), waits[-1] > waits[0] and waits[-1] > 0)
PY
PY3=${PYTHON:-/usr/bin/python3}
$PY3 check.py "$case" || notok "check.py" "exit $?"

mkdir bad
expect_exit "--qps 0: exit 2" 2 $R --runs 2 --golden bad/g.h5 --raw bad/r.jsonl --qps 0
expect_exit "--arrivals uniform: exit 2" 2 $R --runs 2 --golden bad/g.h5 --raw bad/r.jsonl --qps 10 --arrivals uniform
if [ -z "$(ls -A bad)" ]; then ok "bad-options-leave-nothing"; else notok "bad-options-leave-nothing" "$(ls -A bad)"; fi
npu-replay run --help > help.txt 2>&1
expect_grep "--qps in --help" "--qps R" help.txt
