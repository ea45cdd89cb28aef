#!/bin/sh
# npu-replay profile end to end: the routing profile of a run golden against numpy (h5py reads
# the router taps; hits, section 12's buckets, top-k mass and margin recomputed), two goldens'
# deltas, and bad inputs.
. "$GOLDEN_ROOT/tests/e2e/lib.sh"

expect_exit "make-model tiny" 0 npu-replay make-model --preset tiny --seed 3 -o m
expect_exit "matrix" 0 npu-replay matrix --model m --max-len 64 --random 2 --repeated 0 -o man.jsonl -j1
expect_exit "run (router taps)" 0 npu-replay run --model m --manifest man.jsonl --side baseline --golden g.h5 --raw raw.jsonl --warmup 0 --runs 1 --taps 'layers/*/router/*' -j1
expect_exit "run bf16 (router taps)" 0 npu-replay run --model m --manifest man.jsonl --side candidate --golden c.h5 --raw raw2.jsonl --warmup 0 --runs 1 --taps 'layers/*/router/*' -j1 --backend-opt dtype=bf16
expect_exit "profile one golden" 0 npu-replay profile g.h5 --json p.json
expect_grep "profile table has layer 1" '^ +1 +16 +4 ' out.txt
expect_exit "profile two goldens" 0 npu-replay profile g.h5 c.h5 --json d.json
expect_grep "deltas in the JSON" '"max_share_change"' d.json

if [ -n "$PYTHON" ]; then
    cat > oracle.py <<'PY'
import json, sys, h5py, numpy as np
f = h5py.File("g.h5", "r"); prof = json.load(open("p.json"))
hits = {}; buckets = {}; mass = {}; margin = {}
def walk(name, obj):
    if not name.endswith("/router/topk_ids"): return
    l = int(name.split("layers/")[1].split("/")[0])
    ids = obj[()]; lg = f[name[:-len("topk_ids")] + "logits"][()].astype(np.float64)
    E = lg.shape[1]
    h = hits.setdefault(l, np.zeros(E, np.int64)); b = buckets.setdefault(l, np.zeros(7, np.int64))
    per = np.bincount(ids.ravel(), minlength=E); h += per
    for n in per: b[np.searchsorted([0, 1, 4, 8, 16, 32], n)] += 1
    p = np.exp(lg - lg.max(1, keepdims=True)); p /= p.sum(1, keepdims=True)
    for t in range(ids.shape[0]):
        sel = p[t, ids[t]]; rest = np.delete(p[t], ids[t])
        mass.setdefault(l, []).append(sel.sum()); margin.setdefault(l, []).append(sel.min() - rest.max())
f.visititems(walk)
bad = 0
for L in prof["layers"]:
    l = L["layer"]
    bad += L["expert_hits"] != hits[l].tolist()
    bad += [L["buckets"][k] for k in ["0", "1", "2-4", "5-8", "9-16", "17-32", ">32"]] != buckets[l].tolist()
    bad += abs(L["topk_mass_mean"] - np.mean(mass[l])) > 1e-9 or abs(L["topk_mass_min"] - np.min(mass[l])) > 1e-9
    bad += abs(L["margin_mean"] - np.mean(margin[l])) > 1e-9
    bad += abs(L["max_mean_load"] - hits[l].max() / hits[l].mean()) > 1e-12
    bad += L["empty_experts"] != int((hits[l] == 0).sum())
print("bad", bad, "layers", len(prof["layers"]))
sys.exit(1 if bad or len(prof["layers"]) != 2 else 0)
PY
    expect_exit "profile equals numpy (hits, buckets, mass, margin, load)" 0 "$PYTHON" oracle.py
else
    ok "# SKIP numpy/h5py not installed"
fi

expect_exit "a golden without router taps exits 2" 2 npu-replay profile m/config.json
expect_exit "profile without a golden exits 2" 2 npu-replay profile
expect_exit "profile of three goldens exits 2" 2 npu-replay profile g.h5 g.h5 g.h5
expect_absent "no JSON left by a failed profile" nope.json
