#!/bin/sh
# npu-replay profile --placement: dispatch, combine and cross-chip (all-to-all) bytes, padding
# slots, dropped pairs, chip load and fault domains per layer. Small goldens worked out by hand
# (the arithmetic is in the comments), a run golden against numpy, deltas of two goldens, and
# every placement error exits 2 naming the file and line:col.
. "$GOLDEN_ROOT/tests/e2e/lib.sh"

# i32 V...: little-endian int32 bytes of small non-negative values
i32() { for v in "$@"; do printf "\\$(printf %03o "$v")\\000\\000\\000"; done; }
# golden NAME CASE_B_T2_IDS: the hand golden (layer 0: case a [4,2], case b [3,2]; layer 1:
# case a [1,2]); the candidate differs only in case b's last token
golden() {
    i32 0 1  0 2  3 0  0 1 > "$1.a0.bin"; i32 2 3  2 0 $2 > "$1.b0.bin"; i32 1 0 > "$1.a1.bin"
    cat > "$1.index.json" <<EOF2
{"schema": "calculet-dump-index/v1", "tensors": [
 {"name": "cases/a/layers/0/router/topk_ids", "file": "$1.a0.bin", "offset": 0, "dtype": "i32", "shape": [4, 2]},
 {"name": "cases/b/layers/0/router/topk_ids", "file": "$1.b0.bin", "offset": 0, "dtype": "i32", "shape": [3, 2]},
 {"name": "cases/a/layers/1/router/topk_ids", "file": "$1.a1.bin", "offset": 0, "dtype": "i32", "shape": [1, 2]}]}
EOF2
    expect_exit "hand golden $1" 0 golden-dump -o "$1.h5" "$1.index.json"
}
golden base "1 3"
golden cand "0 1"

# EP: experts 0,1 on chip 0 and 2,3 on chip 1 (layer 1 has 2 experts: 1 on chip 0, 0 on chip 1);
# tokens split (case a: t0,t1 on chip 0, t2,t3 on chip 1; case b: blocks of ceil(3/2) = 2);
# 8 x bf16 = 16 bytes out, 8 x f32 = 32 back; launches keep 3 pairs and pad to 4.
cat > ep.yaml <<'EOF2'
schema: calculet-expert-placement/v1
chips: 2
experts: [[0, 1], [2, 3]]
layers:
  "1": [[1], [0]]
tokens: split
hidden_size: 8
dtype: bf16
combine_dtype: f32
padding: {multiple: 4, capacity: 3}
EOF2
expect_exit "profile --placement (EP)" 0 npu-replay profile base.h5 --placement ep.yaml --json ep.json
expect_grep "the text names the placement" '^placement ep.yaml: 2 chips$' out.txt
# layer 0, case a: t0 (chip 0) e0 e1 local; t1 (0) e0 local, e2 cross; t2 (1) e3 local, e0 cross;
# t3 (1) e0 cross - dropped (e0's 4th pair, capacity 3) - and e1 cross. Kept 7, cross 3.
# Launches e0 3->4, e1 2->4, e2 1->4, e3 1->4: 16 slots, 9 padding. Load chip 0 6, chip 1 2;
# tokens with a pair on chip 0: 4, on chip 1: t1, t2 = 2.
# case b: t0 (0) e2 e3 cross; t1 (0) e2 cross, e0 local; t2 (1) e1 cross, e3 local. Kept 6,
# cross 4, none dropped; launches e2 2, e3 2, e0 1, e1 1 -> 16 slots, 10 padding; load 2 | 4;
# tokens on chip 0: t1, t2 = 2, on chip 1: 3.
# By section 12's bucket of the pairs kept: 1 pair: a e2, a e3, b e0, b e1 (4 launches, 12
# padding); 2-4: a e0, a e1, b e2, b e3 (4 launches, 1 + 2 + 2 + 2 = 7 padding).
# layer 0: pairs 14, kept 13, dropped 1, dispatch 13x16 = 208, combine 13x32 = 416, cross 7x16
# = 112 and 7x32 = 224 (all-to-all 336), 8 launches, 32 slots, 19 padding, load [8, 6]
# (max/mean 8/7), tokens [6, 5] of 7.
# layer 1, case a: t0 (chip 0): e1 on chip 0 local, e0 on chip 1 cross: 2 launches of 1 -> 8
# slots, 6 padding; dispatch 32, combine 64, cross 16 + 32; load [1, 1]; tokens [1, 1] of 1.
cat > want-ep.json <<'EOF2'
[{"pairs": 14, "dispatch_bytes": 208, "combine_bytes": 416, "cross_chip_dispatch_bytes": 112,
  "cross_chip_combine_bytes": 224, "all_to_all_bytes": 336, "launches": 8, "slots": 32,
  "padding_slots": 19, "kept_pairs": 13, "dropped_pairs": 1, "chip_load": [8, 6],
  "launches_by_bucket": {"0": 0, "1": 4, "2-4": 4, "5-8": 0, "9-16": 0, "17-32": 0, ">32": 0},
  "padding_by_bucket": {"0": 0, "1": 12, "2-4": 7, "5-8": 0, "9-16": 0, "17-32": 0, ">32": 0},
  "chip_imbalance": 1.1428571428571428,
  "fault_domain": [{"chip": 0, "experts": 2, "tokens": 6, "token_share": 0.8571428571428571},
                   {"chip": 1, "experts": 2, "tokens": 5, "token_share": 0.7142857142857143}]},
 {"pairs": 2, "dispatch_bytes": 32, "combine_bytes": 64, "cross_chip_dispatch_bytes": 16,
  "cross_chip_combine_bytes": 32, "all_to_all_bytes": 48, "launches": 2, "slots": 8,
  "padding_slots": 6, "kept_pairs": 2, "dropped_pairs": 0, "chip_load": [1, 1],
  "launches_by_bucket": {"0": 0, "1": 2, "2-4": 0, "5-8": 0, "9-16": 0, "17-32": 0, ">32": 0},
  "padding_by_bucket": {"0": 0, "1": 6, "2-4": 0, "5-8": 0, "9-16": 0, "17-32": 0, ">32": 0},
  "chip_imbalance": 1.0,
  "fault_domain": [{"chip": 0, "experts": 1, "tokens": 1, "token_share": 1.0},
                   {"chip": 1, "experts": 1, "tokens": 1, "token_share": 1.0}]}]
EOF2
# the HTML page shows the placement it was given: the file, and layer 0's hand-worked row
# (208, 416, 336 all-to-all, 8 launches, 32 slots, 19 padding, 8/7 imbalance, 1 dropped) and
# its tokens per chip (6 and 5)
expect_exit "profile --placement --html" 0 npu-replay profile base.h5 --placement ep.yaml --html ep.html
expect_grep "the page names the placement" 'placement <b>ep.yaml</b>: 2 chip' ep.html
expect_grep "the page's layer 0 placement row" '<tr class="placed-row"><td>0</td><td>208</td><td>416</td><td>336</td><td>8</td><td>32</td><td>19</td><td>1.143</td><td>1</td></tr>' ep.html
expect_grep "the page's layer 1 placement row" '<tr class="placed-row"><td>1</td><td>32</td><td>64</td><td>48</td><td>2</td><td>8</td><td>6</td><td>1</td><td>0</td></tr>' ep.html
expect_grep "the page's tokens per chip" 'data-part="chip 1" data-v="5"' ep.html
# TP: every chip holds every expert, tokens split, 8 x f32 both ways, no padding rule: every
# pair is served on its token's chip. Case a: chip 0 gets t0, t1 (e0 x2, e1, e2: 3 launches),
# chip 1 t2, t3 (e3, e0 x2, e1: 3); case b: chip 0 t0, t1 (e2 x2, e3, e0: 3), chip 1 t2 (e1,
# e3: 2). Layer 1: one launch a pair on chip 0. Two-pair launches: a e0 on chip 0, a e0 on
# chip 1, b e2 on chip 0 (bucket 2-4: 3); the other 8 hold one pair.
cat > tp.json <<'EOF2'
{"schema": "calculet-expert-placement/v1", "chips": 2, "experts": "replicated",
 "tokens": "split", "hidden_size": 8, "dtype": "f32"}
EOF2
expect_exit "profile --placement (replicated)" 0 npu-replay profile base.h5 --placement tp.json --json tp-out.json
cat > want-tp.json <<'EOF2'
[{"pairs": 14, "dispatch_bytes": 448, "combine_bytes": 448, "cross_chip_dispatch_bytes": 0,
  "cross_chip_combine_bytes": 0, "all_to_all_bytes": 0, "launches": 11, "slots": 14,
  "padding_slots": 0, "kept_pairs": 14, "chip_load": [8, 6], "chip_imbalance": 1.1428571428571428,
  "launches_by_bucket": {"0": 0, "1": 8, "2-4": 3, "5-8": 0, "9-16": 0, "17-32": 0, ">32": 0},
  "padding_by_bucket": {"0": 0, "1": 0, "2-4": 0, "5-8": 0, "9-16": 0, "17-32": 0, ">32": 0},
  "fault_domain": [{"chip": 0, "experts": 4, "tokens": 4, "token_share": 0.5714285714285714},
                   {"chip": 1, "experts": 4, "tokens": 3, "token_share": 0.42857142857142855}]},
 {"pairs": 2, "dispatch_bytes": 64, "combine_bytes": 64, "cross_chip_dispatch_bytes": 0,
  "cross_chip_combine_bytes": 0, "all_to_all_bytes": 0, "launches": 2, "slots": 2,
  "padding_slots": 0, "kept_pairs": 2, "chip_load": [2, 0], "chip_imbalance": 2.0,
  "launches_by_bucket": {"0": 0, "1": 2, "2-4": 0, "5-8": 0, "9-16": 0, "17-32": 0, ">32": 0},
  "padding_by_bucket": {"0": 0, "1": 0, "2-4": 0, "5-8": 0, "9-16": 0, "17-32": 0, ">32": 0},
  "fault_domain": [{"chip": 0, "experts": 2, "tokens": 1, "token_share": 1.0},
                   {"chip": 1, "experts": 2, "tokens": 0, "token_share": 0.0}]}]
EOF2
# Deltas: the candidate's case b t2 routes to e0, e1 (both on chip 0) from chip 1 instead of
# e1 (cross) and e3 (local): one more cross pair (+16, +32: all-to-all +48), padding the same
# (e2 2, e3 1, e0 2, e1 1 -> 10), load [9, 5]: max/mean 9/7, +1/7.
expect_exit "profile --placement of two goldens" 0 npu-replay profile base.h5 cand.h5 --placement ep.yaml --json d.json
cat > want-d.json <<'EOF2'
{"dispatch_bytes": 0, "combine_bytes": 0, "cross_chip_dispatch_bytes": 16,
 "cross_chip_combine_bytes": 32, "all_to_all_bytes": 48, "padding_slots": 0,
 "chip_imbalance": 0.14285714285714285, "dropped_pairs": 0}
EOF2
if command -v "${PYTHON:-/usr/bin/python3}" > /dev/null 2>&1; then
    PY=${PYTHON:-/usr/bin/python3}
    cat > same.py <<'PY'
import json, sys
def same(a, b):
    if isinstance(a, float) or isinstance(b, float):
        return abs(a - b) <= 1e-12
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    return a == b
got = json.load(open(sys.argv[1])); want = json.load(open(sys.argv[2]))
if sys.argv[3] == "layers":
    got = [L["placement"] for L in got["layers"]]
else:
    got = got["deltas"][0]["placement"]
if not same(got, want):
    print(json.dumps(got), file=sys.stderr); sys.exit(1)
PY
    expect_exit "EP: every figure as worked out by hand" 0 "$PY" same.py ep.json want-ep.json layers
    expect_exit "replicated: every figure as worked out by hand" 0 "$PY" same.py tp-out.json want-tp.json layers
    expect_exit "deltas as worked out by hand" 0 "$PY" same.py d.json want-d.json deltas
    expect_exit "the placement in the JSON" 0 "$PY" -c '
import json; d = json.load(open("ep.json"))
assert d["placement"] == {"file": "ep.yaml", "chips": 2, "tokens": "split", "bytes_per_token": 16,
    "combine_bytes_per_token": 32, "padding": {"multiple": 4, "capacity": 3}}, d["placement"]'
fi
expect_exit "profile without --placement" 0 npu-replay profile base.h5 --json none.json
expect_grep "the text says why there are no placement figures" '^no --placement: dispatch, cross-chip bytes and padding slots need to know where experts live' out.txt
if grep -q '"placement"\|dispatch_bytes' none.json; then notok "without --placement the keys are absent"; else ok "without --placement the keys are absent"; fi

# every placement error: exit 2 naming the file and line:col
bad() { # NAME PATTERN BODY...
    name=$1; pat=$2; shift 2
    printf '%s\n' "schema: calculet-expert-placement/v1" "chips: 2" "$@" "hidden_size: 8" "dtype: bf16" > bad.yaml
    expect_exit "bad placement: $name: exit 2" 2 npu-replay profile base.h5 --placement bad.yaml --json bad.json
    expect_grep "bad placement: $name: named with its position" "^npu-replay: bad.yaml:$pat" err.txt
    expect_absent "bad placement: $name: no JSON" bad.json
}
L1='layers: {"1": [[1], [0]]}'
bad "expert missing" "3:10: expert 3 of layer 0 \\(base.h5 has 4\\) is on no chip" "experts: [[0, 1], [2]]" "$L1" "tokens: split"
bad "expert on two chips" "3:26: expert 1 is on chip 0 and chip 1" "experts: [[0, 1], [2, 3, 1]]" "$L1" "tokens: split"
bad "expert out of range" "3:26: expert 4 is out of range: layer 0 of base.h5 has 4 experts" "experts: [[0, 1], [2, 3, 4]]" "$L1" "tokens: split"
bad "expert out of range of layer 1" "3:20: expert 2 is out of range: layer 1 of base.h5 has 2 experts" "experts: [[0, 1], [2, 3]]" "tokens: split"
bad "tokens on an unknown chip" "5:16: tokens on chip 2: no such chip" "experts: [[0, 1], [2, 3]]" "$L1" "tokens: {chip: 2}"
bad "a list per chip" "3:10: 3 expert lists, chips is 2" "experts: [[0, 1], [2, 3], []]" "$L1" "tokens: split"
bad "a layer the golden lacks" "4:32: layer 7 has no router taps in base.h5" "experts: replicated" 'layers: {"1": replicated, "7": replicated}' "tokens: split"
bad "an unknown key" "5:8: /bogus: .*additionalProperties" "experts: replicated" "tokens: split" "bogus: 1"
expect_exit "a missing placement file: exit 2" 2 npu-replay profile base.h5 --placement nope.yaml

# a run golden against numpy: every figure recomputed independently
if [ -n "$PYTHON" ]; then
    expect_exit "make-model tiny" 0 npu-replay make-model --preset tiny --seed 5 -o m
    expect_exit "matrix" 0 npu-replay matrix --model m --max-len 64 --random 2 --repeated 1 -o man.jsonl -j1
    expect_exit "run (router taps)" 0 npu-replay run --model m --manifest man.jsonl --side baseline --golden g.h5 --raw raw.jsonl --warmup 0 --runs 1 --taps 'layers/*/router/*' -j1
    cat > np.json <<'EOF2'
{"schema": "calculet-expert-placement/v1", "chips": 3,
 "experts": [[0, 3, 6, 9, 12, 15], [1, 4, 7, 10, 13], [2, 5, 8, 11, 14]],
 "layers": {"1": [[15, 14, 13, 12, 11, 10, 9, 8], [7, 6, 5, 4], [3, 2, 1, 0]]},
 "tokens": "split", "hidden_size": 64, "dtype": "bf16", "combine_dtype": "f32",
 "padding": {"multiple": 8, "capacity": 5}}
EOF2
    expect_exit "profile the run golden under a 3-chip placement" 0 npu-replay profile g.h5 --placement np.json --json np-out.json
    cat > oracle.py <<'PY'
import json, sys, h5py, numpy as np
pl = json.load(open("np.json")); prof = json.load(open("np-out.json"))
C, M, CAP = pl["chips"], pl["padding"]["multiple"], pl["padding"]["capacity"]
B, CB = 64 * 2, 64 * 4
f = h5py.File("g.h5", "r")
names = []
f.visititems(lambda n, o: names.append(n) if n.endswith("/router/topk_ids") else None)
bad = 0
for L in prof["layers"]:
    l = L["layer"]; E = L["experts"]
    lists = pl["layers"].get(str(l), pl["experts"])
    owner = np.full(E, -1)
    for c, xs in enumerate(lists): owner[xs] = c
    tot = dict(pairs=0, kept=0, dropped=0, disp=0, comb=0, xd=0, xc=0, launches=0, slots=0, pad=0)
    bl = np.zeros(7, np.int64); bp = np.zeros(7, np.int64)
    load = np.zeros(C, np.int64); toks = np.zeros(C, np.int64); ntok = 0
    for n in sorted(names):
        if int(n.split("layers/")[1].split("/")[0]) != l: continue
        ids = f[n][()]; T, K = ids.shape; ntok += T
        home = np.arange(T) // -(-T // C)
        serve = owner[ids]                           # [T, K]
        # capacity: the first CAP pairs of each expert in (token, rank) order are kept
        flat = ids.ravel(); order_rank = np.zeros(flat.size, np.int64); seen = {}
        for i, e in enumerate(flat):
            order_rank[i] = seen.get(e, 0); seen[e] = order_rank[i] + 1
        kept = (order_rank < CAP).reshape(T, K)
        cross = serve != home[:, None]
        tot["pairs"] += T * K; tot["kept"] += kept.sum(); tot["dropped"] += (~kept).sum()
        tot["disp"] += kept.sum() * B; tot["comb"] += kept.sum() * CB
        tot["xd"] += (kept & cross).sum() * B; tot["xc"] += (kept & cross).sum() * CB
        for e, cnt in seen.items():
            k = min(cnt, CAP); s = -(-k // M) * M
            tot["launches"] += 1; tot["slots"] += s; tot["pad"] += s - k
            b = int(np.searchsorted([0, 1, 4, 8, 16, 32], k)); bl[b] += 1; bp[b] += s - k
        load += np.bincount(serve.ravel(), minlength=C)
        for c in range(C): toks[c] += (serve == c).any(axis=1).sum()
    P = L["placement"]
    got = [P["pairs"], P["kept_pairs"], P["dropped_pairs"], P["dispatch_bytes"], P["combine_bytes"],
           P["cross_chip_dispatch_bytes"], P["cross_chip_combine_bytes"], P["launches"], P["slots"], P["padding_slots"]]
    want = [tot[k] for k in ["pairs", "kept", "dropped", "disp", "comb", "xd", "xc", "launches", "slots", "pad"]]
    bad += got != [int(x) for x in want]
    bad += P["all_to_all_bytes"] != tot["xd"] + tot["xc"]
    bad += P["chip_load"] != load.tolist()
    keys = ["0", "1", "2-4", "5-8", "9-16", "17-32", ">32"]
    bad += [P["launches_by_bucket"][k] for k in keys] != bl.tolist()
    bad += [P["padding_by_bucket"][k] for k in keys] != bp.tolist()
    bad += abs(P["chip_imbalance"] - load.max() / load.mean()) > 1e-12
    bad += [d["tokens"] for d in P["fault_domain"]] != toks.tolist()
    bad += [d["experts"] for d in P["fault_domain"]] != np.bincount(owner, minlength=C).tolist()
    bad += any(abs(d["token_share"] - t / ntok) > 1e-12 for d, t in zip(P["fault_domain"], toks))
    if got != [int(x) for x in want]: print(l, got, want, file=sys.stderr)
print("bad", bad, file=sys.stderr)
sys.exit(1 if bad or len(prof["layers"]) != 2 else 0)
PY
    expect_exit "placement figures equal numpy (bytes, cross-chip, padding, drops, load, fault domains)" 0 "$PYTHON" oracle.py
else
    ok "# SKIP numpy/h5py not installed"
fi
