#!/bin/sh
# The cpu backend's device-side delay (--backend-opt delay_us=N[,delay_seed=S]): a seeded
# uniform [0, N] us wait inside npu_wait of every prefill and decode call, for the soak's
# random delay injection on the device side (handbook section 13.2). The raw lines' npu_wait
# grows by about N/2 on average (uniform: mean N/2; the check asks for at least N/3 more than
# without), the goldens keep their bits, a soak with it stays clean, a bad value is exit 2.
. "$GOLDEN_ROOT/tests/e2e/lib.sh"

expect_exit "make-model tiny" 0 npu-replay make-model --preset tiny --seed 4 -o m
expect_exit "matrix" 0 npu-replay matrix --model m --max-len 16 --random 1 --repeated 0 -o man.jsonl -j1
R="npu-replay run --model m --manifest man.jsonl --side baseline --warmup 0 --runs 20 -j1 --cases random-decode-past16-*"
expect_exit "no delay" 0 $R --golden a.h5 --raw a.jsonl
expect_exit "delay_us=3000" 0 $R --golden b.h5 --raw b.jsonl --backend-opt delay_us=3000 --backend-opt delay_seed=9
list() { golden-dump --list "$1" | awk 'NR > 1 {print $1, $4}' | sort; }
list a.h5 > la.txt; list b.h5 > lb.txt
if [ "$(wc -l < la.txt)" -ge 3 ] && cmp -s la.txt lb.txt; then ok "delay-keeps-the-bits"; else notok "delay-keeps-the-bits"; fi
python3 - <<'PY'
import json
def waits(p):
    return [(lambda s: s["end_ns"] - s["start_ns"])(json.loads(l)["stages"]["npu_wait"]) for l in open(p)]
a, b = waits("a.jsonl"), waits("b.jsonl")
ma, mb = sum(a) / len(a), sum(b) / len(b)
grow = (mb - ma) / 1e3
print(("ok" if grow >= 1000 else "not ok") + " npu-wait-grows-by-the-delay (%.0f us on average, want >= 1000 of a mean 1500)" % grow)
PY
expect_exit "soak with the device delay: exit 0" 0 npu-replay soak --model m --manifest man.jsonl --cases 'random-prefill-p1*' -j1 --duration 0.5 --concurrency 2 --backend-opt delay_us=500 -o s.json
expect_exit "delay_us=-1: exit 2" 2 $R --golden c.h5 --raw c.jsonl --backend-opt delay_us=-1
expect_grep "delay_us=-1: why" "delay_us 0..10000000" err.txt
expect_absent "delay_us=-1 leaves no golden" c.h5
