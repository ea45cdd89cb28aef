# golden-diff --histogram: the |c - r| log2 histogram of each tensor in the JSON report must be
# the counts numpy works out from the two goldens' data (h5py reads them back), on adversarial
# data; the same for any thread count and chunk size; absent without the flag; at most 256.
. "$GOLDEN_ROOT/tests/e2e/lib.sh"

if [ -z "$PYTHON" ]; then
    echo "ok histogram-numpy # skip numpy+h5py not importable"
    exit 0
fi

"$PYTHON" - <<'EOF' || echo "not ok histogram-generate"
import numpy as np
rng = np.random.default_rng(16)
ref, cand = [], []
def emit(name, dt, npdt, r, c):
    n = r.size
    r.astype(npdt).tofile(f"{name}.r.raw"); c.astype(npdt).tofile(f"{name}.c.raw")
    ref.append(f"{name}:{dt}:{n}:file={name}.r.raw"); cand.append(f"{name}:{dt}:{n}:file={name}.c.raw")
n = 200003
u = rng.standard_normal(n)
# errors spread over many binades, then adversarial values at random places
r = u.copy(); c = u + rng.standard_normal(n) * np.exp2(-rng.integers(0, 70, n).astype(float))
def spoil(r, c, tiny, huge):
    k = rng.permutation(n)[:6000].reshape(12, 500)
    r[k[0]] = np.nan; c[k[1]] = np.nan; r[k[2]] = np.inf; c[k[2]] = np.inf
    c[k[3]] = -np.inf; c[k[4]] = r[k[4]]            # exact matches
    r[k[5]] = 0.0; c[k[5]] = -0.0                    # signed zeros
    r[k[6]] = tiny * rng.standard_normal(500); c[k[6]] = tiny * rng.standard_normal(500)
    r[k[7]] = huge; c[k[7]] = -huge                  # huge, opposite signs
    r[k[8]] = huge * 0.5; c[k[8]] = huge * 0.25
    c[k[9]] = r[k[9]] + 2.0 ** 31
spoil(r, c, 1e-310, 1.7e308)
emit("f64", "f64", "<f8", r, c)
r32 = u.astype(np.float32); c32 = (u + rng.standard_normal(n) * 1e-4).astype(np.float64)
r32 = r32.astype(np.float64)
spoil(r32, c32, 1e-40, 3e38)
emit("f32", "f32", "<f4", r32, c32)
emit("f16", "f16", "<f2", (u * 4), (u * 4 + rng.standard_normal(n) * 1e-2))
emit("i32", "i32", "<i4", rng.integers(-1000, 1000, n), rng.integers(-1000, 1000, n))
b = rng.standard_normal(n).astype(np.float32)
bc = (b + rng.standard_normal(n).astype(np.float32) * 0.05).astype(np.float32)
b.view(np.uint32).__rshift__(16).astype("<u2").tofile("bf16.r.raw")
bc.view(np.uint32).__rshift__(16).astype("<u2").tofile("bf16.c.raw")
ref.append(f"bf16:bf16:{n}:file=bf16.r.raw"); cand.append(f"bf16:bf16:{n}:file=bf16.c.raw")
open("ref.specs", "w").write("\n".join(ref) + "\n")
open("cand.specs", "w").write("\n".join(cand) + "\n")
EOF
tr '\n' '\0' < ref.specs | xargs -0 make-golden ref.h5 || echo "not ok histogram-make-ref"
tr '\n' '\0' < cand.specs | xargs -0 make-golden cand.h5 || echo "not ok histogram-make-cand"

golden-diff --histogram --json h.json ref.h5 cand.h5 > /dev/null
rc=$?
if [ "$rc" -le 1 ]; then ok histogram-run; else notok histogram-run "exit $rc"; fi
if schema-check h.json calculet-diff-report/v1 > schema.txt 2>&1; then ok histogram-schema
else notok histogram-schema "$(head -3 schema.txt)"; fi
GOLDEN_THREADS=1 golden-diff --histogram --chunk 777 --json h1.json ref.h5 cand.h5 > /dev/null
golden-diff --json plain.json ref.h5 cand.h5 > /dev/null

"$PYTHON" - <<'EOF'
import json, sys
import h5py
import numpy as np
sys.path.insert(0, ".")

def values(f, name):
    d = f[name]
    t = d.id.get_type()
    if isinstance(t, h5py.h5t.TypeFloatID) and t.get_size() == 2 and t.get_fields()[2] == 7:
        raw = np.empty(d.shape, "<u2")   # bf16: read the stored bits, widen by hand
        d.id.read(h5py.h5s.ALL, h5py.h5s.ALL, raw, mtype=t)
        return (raw.astype(np.uint32) << 16).view(np.float32).astype(np.float64).ravel()
    return d[...].astype(np.float64).ravel()

def numpy_hist(r, c):
    fin = np.isfinite(r) & np.isfinite(c)
    with np.errstate(over="ignore", invalid="ignore"):
        d = np.abs(c[fin] - r[fin])
    zero = int((d == 0).sum())
    d = d[d != 0]
    _, e = np.frexp(np.where(np.isinf(d), 1.0, d))
    e = np.where(np.isinf(d), 10 ** 6, e - 1)        # |c - r| in [2^(e-1), 2^e): floor log2
    e = np.clip(e, -60, 30)
    ks, ns = np.unique(e, return_counts=True)
    return {"emin": -60, "emax": 30, "zero": zero, "nonfinite": int((~fin).sum()),
            "log2": [[int(k), int(v)] for k, v in zip(ks, ns)]}

rep, rep1, plain = (json.load(open(p)) for p in ("h.json", "h1.json", "plain.json"))
fr, fc = h5py.File("ref.h5", "r"), h5py.File("cand.h5", "r")
bad = []
for t in rep["tensors"]:
    want = numpy_hist(values(fr, t["name"]), values(fc, t["name"]))
    got = t.get("abs_error_histogram")
    if got != want:
        bad.append(f"{t['name']}: got {got}, numpy {want}")
    elif sum(n for _, n in got["log2"]) + got["zero"] + got["nonfinite"] != t["count"]:
        bad.append(f"{t['name']}: bins do not sum to count")
print(("ok" if not bad else "not ok") + " histogram-numpy" + "".join("\n# " + b for b in bad[:10]))
h = {t["name"]: t.get("abs_error_histogram") for t in rep["tensors"]}
h1 = {t["name"]: t.get("abs_error_histogram") for t in rep1["tensors"]}
print(("ok" if h == h1 else "not ok") + " histogram-threads-chunks")
print(("ok" if all("abs_error_histogram" not in t for t in plain["tensors"]) else "not ok")
      + " histogram-off-by-default")
# the adversarial parts really reached the clamped and special bins
f64 = h["f64"]
reach = f64["nonfinite"] > 0 and f64["zero"] > 0 and f64["log2"][0][0] == -60 and f64["log2"][-1][0] == 30
print(("ok" if reach else "not ok") + " histogram-adversarial-bins")
EOF

# more than 256 tensors: only 256 carry one, every failing tensor among them, then the worst
R="" C=""
i=0
while [ $i -lt 300 ]; do
    R="$R t$i:f32:64:rand=$i,-1,1"
    if [ $((i % 30)) -eq 7 ]; then C="$C t$i:f32:64:rand=$i,-1,1;noise=$((i + 1000)),0.5"
    else C="$C t$i:f32:64:rand=$i,-1,1;noise=$((i + 1000)),0.00000$((i % 9 + 1))"; fi
    i=$((i + 1))
done
# shellcheck disable=SC2086
make-golden many-r.h5 $R && make-golden many-c.h5 $C || echo "not ok histogram-many-make"
golden-diff --histogram --atol 1e-5 --rtol 0 --json many.json many-r.h5 many-c.h5 > /dev/null
"$PYTHON" - <<'EOF'
import json
ts = json.load(open("many.json"))["tensors"]
carry = [t for t in ts if "abs_error_histogram" in t]
rest = [t for t in ts if "abs_error_histogram" not in t]
fails = [t for t in ts if t["verdict"] == "fail"]
ok = len(carry) == 256 and len(fails) >= 10 and all("abs_error_histogram" in t for t in fails)
passing = [t["tolerance_used"] for t in carry if t["verdict"] == "pass"]
ok = ok and all(t["verdict"] == "pass" for t in rest) and min(passing) >= max(t["tolerance_used"] for t in rest)
print(("ok" if ok else "not ok") + " histogram-bounded-256 # %d carry, %d failing" % (len(carry), len(fails)))
EOF
