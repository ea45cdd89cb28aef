# Independent check of golden-diff's metrics: numpy computes every metric in float64 on
# random tensors of several dtypes and shapes, and the JSON report must agree (rel 1e-9).
. "$GOLDEN_ROOT/tests/e2e/lib.sh"

if [ -z "$PYTHON" ]; then
    echo "ok numpy-metrics # skip numpy+h5py not importable"
    exit 0
fi

# numpy writes canonical raw bytes and a list of make-golden specs for both sides
# (run/logits and run/tokens contain '/', so their raw files sit in run/)
mkdir -p run
"$PYTHON" - <<'EOF' || echo "not ok numpy-generate"
import numpy as np
rng = np.random.default_rng(20261129)
ref_specs, cand_specs = [], []

def bf16_trunc(x32):
    return (np.asarray(x32, dtype=np.float32).view(np.uint32) >> 16).astype(np.uint16)

def emit(name, dt_r, r_bytes, dt_c, c_bytes, shape):
    shp = "x".join(str(s) for s in shape) if len(shape) else "scalar"
    open(f"{name}.ref.raw", "wb").write(r_bytes)
    open(f"{name}.cand.raw", "wb").write(c_bytes)
    ref_specs.append(f"{name}:{dt_r}:{shp}:file={name}.ref.raw")
    cand_specs.append(f"{name}:{dt_c}:{shp}:file={name}.cand.raw")

shapes = {"s": (), "e": (0, 5), "v": (1000,), "c": (3, 4, 50)}
for sk, shape in shapes.items():
    n = int(np.prod(shape)) if len(shape) else 1
    base = rng.standard_normal(n) * 3
    noise = rng.standard_normal(n) * 0.01
    # f32 vs f32, with one NaN, one Inf and a zero reference where there is room
    r = base.astype(np.float32); c = (base + noise).astype(np.float32)
    if n >= 10:
        c[3] = np.nan; r[5] = np.inf; c[5] = np.inf; r[7] = 0.0; c[8] = -np.inf
    emit(f"f32_{sk}", "f32", r.astype("<f4").tobytes(), "f32", c.astype("<f4").tobytes(), shape)
    # f64
    emit(f"f64_{sk}", "f64", base.astype("<f8").tobytes(), "f64", (base + noise).astype("<f8").tobytes(), shape)
    # f16
    emit(f"f16_{sk}", "f16", base.astype("<f2").tobytes(), "f16", (base + noise).astype("<f2").tobytes(), shape)
    # bf16 both sides, by f32 bit truncation
    emit(f"bf16_{sk}", "bf16", bf16_trunc(base).astype("<u2").tobytes(), "bf16",
         bf16_trunc(base + noise).astype("<u2").tobytes(), shape)
    # f32 golden vs bf16 candidate (mixed dtypes)
    emit(f"mix_{sk}", "f32", base.astype("<f4").tobytes(), "bf16",
         bf16_trunc(base + noise).astype("<u2").tobytes(), shape)
    # integers
    ir = rng.integers(-1000, 1000, n); ic = ir + rng.integers(-2, 3, n)
    emit(f"i32_{sk}", "i32", ir.astype("<i4").tobytes(), "i32", ic.astype("<i4").tobytes(), shape)
    ur = rng.integers(0, 256, n); uc = np.clip(ur + rng.integers(-1, 2, n), 0, 255)
    emit(f"u8_{sk}", "u8", ur.astype("u1").tobytes(), "u8", uc.astype("u1").tobytes(), shape)

# logits and tokens tiers
lr = rng.standard_normal((64, 40)).astype(np.float32) * 4
lc = (lr + rng.standard_normal((64, 40)).astype(np.float32) * 0.3).astype(np.float32)
emit("run/logits", "f32", lr.astype("<f4").tobytes(), "f32", lc.astype("<f4").tobytes(), (64, 40))
tr = rng.integers(0, 151936, (10, 30)); tc = tr.copy()
tc[2, 17:] = 5; tc[7, 3] += 1
emit("run/tokens", "i64", tr.astype("<i8").tobytes(), "i64", tc.astype("<i8").tobytes(), (10, 30))

open("ref.specs", "w").write("\n".join(ref_specs) + "\n")
open("cand.specs", "w").write("\n".join(cand_specs) + "\n")
EOF

tr '\n' '\0' < ref.specs | xargs -0 make-golden ref.h5 || echo "not ok numpy-make-ref"
tr '\n' '\0' < cand.specs | xargs -0 make-golden cand.h5 || echo "not ok numpy-make-cand"
golden-diff --json report.json ref.h5 cand.h5 > table.txt
rc=$?
if [ "$rc" -eq 0 ] || [ "$rc" -eq 1 ]; then ok numpy-run; else notok numpy-run "exit $rc: $(cat table.txt)"; fi

"$PYTHON" - <<'EOF'
import json, math
import numpy as np
rep = json.load(open("report.json"))
specs = {}
for side in ("ref", "cand"):
    for line in open(f"{side}.specs"):
        name, dt, shp, src = line.strip().split(":", 3)
        specs.setdefault(name, {})[side] = (dt, shp, src[5:])

def load(dt, shp, path):
    shape = () if shp == "scalar" else tuple(int(s) for s in shp.split("x"))
    raw = open(path, "rb").read()
    if dt == "bf16":
        u = np.frombuffer(raw, "<u2").astype(np.uint32) << 16
        x = u.view(np.float32).astype(np.float64)
    else:
        npdt = {"f32": "<f4", "f64": "<f8", "f16": "<f2", "i32": "<i4", "u8": "u1", "i64": "<i8"}[dt]
        x = np.frombuffer(raw, npdt).astype(np.float64)
    return x.reshape(shape), np.frombuffer(raw, {"bf16": "<u2", "f16": "<u2", "f32": "<u4", "f64": "<u8"}.get(dt, "u1"))

def ulp_index(dt, bits):
    w = {"f16": 16, "bf16": 16, "f32": 32, "f64": 64}[dt]
    b = bits.astype(np.uint64) if w == 64 else bits.astype(np.int64)
    if w == 64:
        mag = (b & np.uint64(0x7FFFFFFFFFFFFFFF)).astype(object)
        neg = (b >> np.uint64(63)).astype(bool)
        return np.array([-m if s else m for m, s in zip(mag, neg)], dtype=object)
    mag = b & ((1 << (w - 1)) - 1)
    neg = (b >> (w - 1)) & 1
    return np.where(neg == 1, -mag, mag).astype(object)

def rne_f32_to_bf16(x):
    u = np.asarray(x, dtype=np.float32).view(np.uint32).astype(np.uint64)
    return ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16)

bad = []
def close(name, key, got, want, tol=1e-9):
    if want is None or (isinstance(want, float) and not math.isfinite(want)):
        if got is not None:
            bad.append(f"{name} {key}: got {got}, numpy has none")
        return
    if got is None:
        bad.append(f"{name} {key}: got null, numpy {want}"); return
    if want == 0:
        ok = abs(got) <= 1e-300
    else:
        ok = abs(got - want) <= tol * abs(want)
    if not ok:
        bad.append(f"{name} {key}: got {got!r}, numpy {want!r}")

def exact(name, key, got, want):
    if got != want:
        bad.append(f"{name} {key}: got {got!r}, numpy {want!r}")

by_name = {t["name"]: t for t in rep["tensors"]}
for name, sides in specs.items():
    t = by_name.get(name)
    if t is None:
        bad.append(f"{name}: not in the report"); continue
    r, rbits = load(*sides["ref"]); c, cbits = load(*sides["cand"])
    rf, cf = r.ravel(), c.ravel()
    fin = np.isfinite(rf) & np.isfinite(cf)
    with np.errstate(invalid="ignore"):
        d = np.abs(cf - rf)
    eps = t["eps"]
    exact(name, "count", t["count"], rf.size)
    if fin.any():
        df = d[fin]
        close(name, "max_abs", t["max_abs"], float(df.max()))
        first = int(np.flatnonzero(fin)[np.argmax(df)])
        exact(name, "max_abs_index", t["max_abs_index"], [int(i) for i in np.unravel_index(first, r.shape)] if r.ndim else [])
        close(name, "mean_abs", t["mean_abs"], float(df.mean()))
        close(name, "rmse", t["rmse"], float(np.sqrt((df ** 2).mean())))
        close(name, "max_rel", t["max_rel"], float((df / np.maximum(np.abs(rf[fin]), eps)).max()))
        nr = np.sqrt((rf[fin] ** 2).sum()); nc = np.sqrt((cf[fin] ** 2).sum())
        cos = 1.0 if nr == 0 and nc == 0 else (0.0 if nr == 0 or nc == 0 else float((rf[fin] @ cf[fin]) / (nr * nc)))
        close(name, "cosine", t["cosine"], cos)
        if nr > 0:
            close(name, "rel_err", t["rel_err"], float(np.sqrt((df ** 2).sum()) / nr))
            close(name, "norm_ratio", t["norm_ratio"], float(nc / nr))
        tol = t["atol"] + t["rtol"] * np.abs(rf[fin])
        with np.errstate(invalid="ignore", divide="ignore"):
            used = np.where(df == 0, 0.0, df / tol)
        close(name, "tolerance_used", t["tolerance_used"], float(used.max()))
        if t["tier"] == "layer" and r.ndim >= 2 and r.shape[-1] >= 2 and np.isfinite(rf).all() and np.isfinite(cf).all():
            rr = r.reshape(-1, r.shape[-1]); cc = c.reshape(-1, c.shape[-1])
            nrr = np.sqrt((rr ** 2).sum(1)); ncc = np.sqrt((cc ** 2).sum(1))
            keep = nrr > 0
            if keep.any():
                rc = (rr * cc).sum(1)[keep] / (nrr[keep] * ncc[keep])
                close(name, "min_row_cosine", t["min_row_cosine"], float(rc.min()))
    else:
        exact(name, "max_abs", t["max_abs"], None)
        exact(name, "cosine", t["cosine"], 1.0)
    atol, rtol = t["atol"], t["rtol"]
    with np.errstate(invalid="ignore"):
        m_fin = (fin & (d > atol + rtol * np.abs(rf))).sum()
    nr_, nc_ = ~np.isfinite(rf), ~np.isfinite(cf)
    one = nr_ ^ nc_
    both = nr_ & nc_
    differ = both & ((np.isnan(rf) != np.isnan(cf)) | (~np.isnan(rf) & ~np.isnan(cf) & (rf != cf)))
    exact(name, "mismatches", t["mismatches"], int(m_fin + one.sum() + differ.sum()))
    exact(name, "nan_reference", t["nan_reference"], int(np.isnan(rf).sum()))
    exact(name, "nan_candidate", t["nan_candidate"], int(np.isnan(cf).sum()))
    exact(name, "inf_reference", t["inf_reference"], int(np.isinf(rf).sum()))
    exact(name, "inf_candidate", t["inf_candidate"], int(np.isinf(cf).sum()))
    exact(name, "new_nan", t["new_nan"], int((np.isnan(cf) & np.isfinite(rf)).sum()))
    exact(name, "new_inf", t["new_inf"], int((np.isinf(cf) & np.isfinite(rf)).sum()))
    new_nf = np.flatnonzero(~np.isfinite(cf) & np.isfinite(rf))
    exact(name, "first_new_nonfinite_index", t["first_new_nonfinite_index"],
          ([int(i) for i in np.unravel_index(int(new_nf[0]), r.shape)] if r.ndim else [])
          if new_nf.size else None)
    dr, dc = sides["ref"][0], sides["cand"][0]
    if dr == dc and dr in ("f16", "bf16", "f32", "f64") and fin.any():
        ir, ic = ulp_index(dr, rbits), ulp_index(dc, cbits)
        exact(name, "max_ulp", t["max_ulp"], int(max(abs(a - b) for a, b in zip(ir[fin], ic[fin]))))
    elif dr == "f32" and dc == "bf16" and fin.any():
        ir = ulp_index("bf16", rne_f32_to_bf16(rf.astype(np.float32)))
        ic = ulp_index("bf16", cbits)
        exact(name, "max_ulp", t["max_ulp"], int(max(abs(a - b) for a, b in zip(ir[fin], ic[fin]))))
    elif dr.startswith("i") or dr.startswith("u"):
        exact(name, "max_ulp", t["max_ulp"], None)
    if t["tier"] == "logits":
        rows = r.reshape(-1, r.shape[-1]); cols = c.reshape(-1, c.shape[-1])
        k = min(5, rows.shape[1])
        top_r = np.argsort(-rows, axis=1, kind="stable")[:, :k]
        top_c = np.argsort(-cols, axis=1, kind="stable")[:, :k]
        exact(name, "rows", t["rows"], rows.shape[0])
        close(name, "top1_match", t["top1_match"], float((top_r[:, 0] == top_c[:, 0]).mean()))
        ov = np.mean([len(set(a) & set(b)) / k for a, b in zip(top_r, top_c)])
        close(name, "top5_overlap", t["top5_overlap"], float(ov))
        srt = -np.sort(-rows, axis=1)
        margin = t["near_tie_margin"]
        if margin is None:  # one step of the pair's format at |top1| (f32 here: 2^(e-23))
            margin = np.exp2(np.floor(np.log2(np.abs(srt[:, 0]))) - 23)
        near = (srt[:, 0] - srt[:, 1]) < margin
        # distributions: KL(softmax(r) || softmax(c)) per row and the log-softmax distance
        def lsm(x):
            m = x.max(axis=1, keepdims=True)
            return x - m - np.log(np.exp(x - m).sum(axis=1, keepdims=True))
        a, b = lsm(rows), lsm(cols)
        kl = (np.exp(a) * (a - b)).sum(axis=1)
        close(name, "kl_max", t["kl_max"], float(kl.max()), 1e-9)
        exact(name, "kl_max_row", t["kl_max_row"], int(np.argmax(kl)))
        close(name, "kl_mean", t["kl_mean"], float(kl.mean()), 1e-9)
        close(name, "logsoftmax_max_abs", t["logsoftmax_max_abs"], float(np.abs(a - b).max()), 1e-9)
        exact(name, "near_tie_rows", t["near_tie_rows"], int(near.sum()))
        exact(name, "near_tie_flips", t["near_tie_flips"], int((near & (top_r[:, 0] != top_c[:, 0])).sum()))
    if t["tier"] == "tokens":
        rows = r.reshape(-1, r.shape[-1]); cols = c.reshape(-1, c.shape[-1])
        div = [int(np.flatnonzero(a != b)[0]) if (a != b).any() else -1 for a, b in zip(rows, cols)]
        exact(name, "first_divergence", t["first_divergence"], div)
        exact(name, "sequences_exact", t["sequences_exact"], div.count(-1))

if bad:
    for b in bad[:30]:
        print("not ok numpy-metric " + b)
else:
    print(f"ok numpy-metrics ({len(specs)} tensors, every metric within 1e-9)")
EOF
