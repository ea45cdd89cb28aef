# exp-gate's statistics against numpy (percentile, MAD, std with ddof=1) on random and hostile
# samples, and its bootstrap against a plain Python implementation of the documented generator.
. "$GOLDEN_ROOT/tests/e2e/lib.sh"

if [ -z "$PYTHON" ]; then
    echo "ok gate-numpy # skip numpy not importable"
    exit 0
fi

"$PYTHON" - > samples.txt <<'PY'
import numpy as np
rng = np.random.default_rng(20261201)
samples = [
    [3.5], [2.0, 7.0], list(rng.normal(10, 1, 30)), list(rng.lognormal(0, 2, 1001)),
    [5.0] * 40, [1, 1, 2, 2, 2, 3, 3, 3, 3, 9], list(rng.integers(0, 4, 57).astype(float)),
    [1e300, 1e300 * 0.5, 1e299, 3e300], [1e-300, 2e-300, 5e-301, 7e-300, 1e-299],
    [1e15 + 0.25, 1e15 + 0.5, 1e15 + 0.75, 1e15 + 1.0], list(-rng.exponential(3, 99)),
    [0.0, -0.0, 0.0], list(rng.standard_cauchy(200)),
]
for s in samples:
    print(" ".join(repr(float(v)) for v in s))
PY
gate-stats 0 1 < samples.txt > ours.txt || echo "not ok gate-stats-run"

"$PYTHON" - samples.txt ours.txt <<'PY'
import sys, numpy as np
samples = [[float(v) for v in l.split()] for l in open(sys.argv[1]) if l.strip()]
ours = [l.split() for l in open(sys.argv[2])]
def close(a, b):
    return a == b or abs(a - b) <= 1e-12 * max(abs(a), abs(b))
bad = 0
for i, (s, o) in enumerate(zip(samples, ours)):
    x = np.array(s)
    med = np.percentile(x, 50)
    # numpy's std overflows on 1e300 (inf) and its one-pass mean loses 1e15 + 0.25: shifted by
    # the minimum (exact here) and scaled by the largest deviation, numpy is exact again
    y = x - x.min(); sc = float(np.max(np.abs(y))) or 1.0
    want = [len(x), med, np.percentile(x, 90), np.percentile(x, 99),
            np.median(np.abs(x - med)), (y / sc).std(ddof=1) * sc if len(x) > 1 else 0.0]
    got = [int(o[0])] + [float(v) for v in o[1:6]]
    for name, w, g in zip(["n", "median", "p90", "p99", "mad", "std"], want, got):
        if not close(float(w), float(g)):
            print(f"not ok sample {i} {name}: numpy {w!r}, exp-gate {g!r}")
            bad += 1
print("ok stats-vs-numpy" if bad == 0 and len(ours) == len(samples) else
      f"not ok stats-vs-numpy: {bad} mismatches, {len(ours)} of {len(samples)} lines")
PY

# The bootstrap: the documented generator, written plainly (sort each resample).
"$PYTHON" - > boot.txt <<'PY'
import numpy as np
rng = np.random.default_rng(7)
for s in ([4.0], [1.0, 2.0], list(rng.normal(5, 2, 31)), list(rng.integers(0, 3, 20).astype(float))):
    print(" ".join(repr(float(v)) for v in s))
PY
for seed in 1 20260802 18446744073709551615; do
    gate-stats 300 $seed 1 < boot.txt > b1.txt
    gate-stats 300 $seed 2 < boot.txt > b2.txt
    if cmp -s b1.txt b2.txt; then ok "bootstrap seed $seed: same interval on 1 and 2 threads"; else
        notok "bootstrap seed $seed: thread count changes the interval"; fi
    "$PYTHON" - boot.txt b1.txt $seed <<'PY'
import sys
M = (1 << 64) - 1
def mix(z):
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & M
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & M
    return z ^ (z >> 31)
def pct(xs, q):
    h = (len(xs) - 1) * q; f = int(h)
    return xs[-1] if f >= len(xs) - 1 else xs[f] + (h - f) * (xs[f + 1] - xs[f])
seed = int(sys.argv[3]); B = 300
samples = [sorted(float(v) for v in l.split()) for l in open(sys.argv[1]) if l.strip()]
ours = [l.split() for l in open(sys.argv[2])]
bad = 0
for s, o in zip(samples, ours):
    n = len(s); meds = []
    for b in range(B):
        st = seed ^ mix(b + 1); draw = []
        for i in range(n):
            st = (st + 0x9E3779B97F4A7C15) & M
            draw.append(s[(mix(st) * n) >> 64])
        meds.append(pct(sorted(draw), 0.5))
    meds.sort()
    want = (pct(meds, 0.025), pct(meds, 0.975))
    got = (float(o[6]), float(o[7]))
    if want != got:
        print(f"not ok bootstrap n={n} seed={seed}: reference {want}, exp-gate {got}"); bad += 1
print(f"ok bootstrap-reference seed {seed}" if bad == 0 and len(ours) == len(samples)
      else f"not ok bootstrap-reference seed {seed}")
PY
done
gate-stats 300 5 < boot.txt > c1.txt; gate-stats 300 6 < boot.txt > c2.txt
if cmp -s c1.txt c2.txt; then notok "another seed gives another interval"; else ok "another seed gives another interval"; fi
