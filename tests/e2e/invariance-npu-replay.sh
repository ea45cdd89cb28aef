#!/bin/sh
# What no speed work on the cpu backend may change (prefill attention, GEMM, threads,
# batching): the goldens of prompts of length 1, 7, 8, 9, 63, 64 and 65 (either side of the
# 8- and 64-position blocks) and their decode steps, in f32 and bf16.
# - the same bits at -j 1, 2 and 3, concurrency 1 and 4, --batch auto and off, chunk=8, in
#   process (docs/npu-replay.md: "results do not depend on the thread count or on how tokens
#   were batched"; "The goldens are bit-identical with and without batching and to
#   --concurrency 1"; "chunking changes no bit");
# - a decode case of past P is a prefill case of prompt P (the request prefills the past and
#   decodes greedily): the same tensors;
# - prefill of L then k decode steps = one prefill of the L + k ids ("prefill-then-decode
#   equals one long prefill bit for bit"): logits row, token and every tap row;
# - teacher-forced `score` (prefill_keep, up to 256 kept positions a piece) = single-position
#   runs: its nll per case against numpy's log-softmax over the logits of one `run` case per
#   prefix;
# - an independent oracle: a float64 numpy Qwen3-MoE forward pass (contracts section 7) from
#   the safetensors, teacher-forced on the golden's tokens: logits and taps within 2e-5 of
#   their scale, router ids equal (f32 only; bf16 rounds every op).
. "$GOLDEN_ROOT/tests/e2e/lib.sh"
FAILED=0
notok() { echo "not ok $1${2:+: $2}"; FAILED=1; }
PY=/usr/bin/python3
if ! $PY -c 'import numpy, h5py' 2>/dev/null; then
    echo "ok invariance-npu-replay # skip /usr/bin/python3 has no numpy+h5py"; exit 0; fi

# gen.py MANIFEST SPEC: a calculet-input-manifest/v1 from [[case_id, phase, ids, output], ...]
cat > gen.py <<'EOF'
import json, hashlib, sys, os
out, spec = sys.argv[1], sys.argv[2]
d = os.path.dirname(out) or "."
os.makedirs(os.path.join(d, "inputs"), exist_ok=True)
with open(out, "w") as f:
    for cid, phase, ids, o in json.load(open(spec)):
        p = "inputs/%s.json" % cid
        b = json.dumps(ids).encode()
        open(os.path.join(d, p), "wb").write(b)
        f.write(json.dumps({"schema": "calculet-input-manifest/v1", "case_id": cid, "phase": phase,
            "prompt_tokens": len(ids) if phase == "prefill" else 0,
            "past_tokens": len(ids) if phase == "decode" else 0,
            "output_tokens": o, "concurrency": 1, "dataset": "fixed_prompt", "seed": 0,
            "rejection": False, "input": {"path": p, "sha256": hashlib.sha256(b).hexdigest()}},
            separators=(",", ":")) + "\n")
EOF
# same.py A.h5 B.h5: every dataset of A is in B and the other way, same dtype, shape, bytes
# and attributes (the root's `created` may differ)
cat > same.py <<'EOF'
import sys, h5py, numpy as np
def sets(p):
    f = h5py.File(p, "r"); d = {}
    f.visititems(lambda n, o: d.__setitem__(n, o) if isinstance(o, h5py.Dataset) else None)
    return f, d
fa, a = sets(sys.argv[1]); fb, b = sets(sys.argv[2]); bad = []
if set(a) != set(b): bad.append("names differ: %s" % sorted(set(a) ^ set(b))[:4])
for n in sorted(set(a) & set(b)):
    x, y = a[n], b[n]
    if x.dtype != y.dtype or x.shape != y.shape: bad.append("%s: %s%s vs %s%s" % (n, x.dtype, x.shape, y.dtype, y.shape)); continue
    if x[()].tobytes() != y[()].tobytes():
        bad.append("%s: data differs (%d of %d elements)" % (n, int(np.sum(x[()] != y[()])), x.size)); continue
    if {k: str(v) for k, v in x.attrs.items()} != {k: str(v) for k, v in y.attrs.items()}: bad.append("%s: attributes differ" % n)
if len(a) < 100: bad.append("only %d datasets" % len(a))
print("; ".join(bad[:4]) if bad else "%d datasets" % len(a)); sys.exit(1 if bad else 0)
EOF
same() { # NAME A.h5 B.h5
    if r=$($PY same.py "$2" "$3" 2>&1); then ok "$1 ($r)"; else notok "$1" "$r"; fi
}

LENS="1 7 8 9 63 64 65"
expect_exit "make-model tiny" 0 npu-replay make-model --preset tiny --seed 5 -o m
$PY - "$LENS" > spec.json <<'EOF'
import json, sys, numpy as np
r = np.random.default_rng(20261203); s = []
for L in map(int, sys.argv[1].split()):
    ids = [int(x) for x in r.integers(0, 512, L)]
    s += [["p%d" % L, "prefill", ids, 4], ["d%d" % L, "decode", ids, 4]]
print(json.dumps(s))
EOF
mkdir a && $PY gen.py a/man.jsonl spec.json || notok "write the manifest"
R="npu-replay run --model m --manifest a/man.jsonl --side baseline --warmup 1 --runs 4"
for dt in f32 bf16; do
    O="--backend-opt dtype=$dt"
    expect_exit "$dt: -j 1" 0 $R $O -j1 --golden $dt-j1.h5 --raw $dt-j1.jsonl
    expect_exit "$dt: -j 2" 0 $R $O -j2 --golden $dt-j2.h5 --raw $dt-j2.jsonl
    expect_exit "$dt: -j 3" 0 $R $O -j3 --golden $dt-j3.h5 --raw $dt-j3.jsonl
    expect_exit "$dt: concurrency 4, batch auto" 0 $R $O -j2 --concurrency 4 --golden $dt-c4.h5 --raw $dt-c4.jsonl
    expect_exit "$dt: concurrency 4, batch off" 0 $R $O -j2 --concurrency 4 --batch off --golden $dt-c4off.h5 --raw $dt-c4off.jsonl
    expect_exit "$dt: concurrency 4, taps none" 0 $R $O -j2 --concurrency 4 --taps none --golden $dt-c4n.h5 --raw $dt-c4n.jsonl
    expect_exit "$dt: chunk=8" 0 $R $O --backend-opt chunk=8 -j2 --golden $dt-ch8.h5 --raw $dt-ch8.jsonl
    expect_exit "$dt: in process, concurrency 4" 0 $R $O -j2 --in-process --concurrency 4 --golden $dt-ip.h5 --raw $dt-ip.jsonl
    same "$dt: -j 1 = -j 2" $dt-j1.h5 $dt-j2.h5
    same "$dt: -j 1 = -j 3" $dt-j1.h5 $dt-j3.h5
    same "$dt: concurrency 1 = 4 (batch auto)" $dt-j1.h5 $dt-c4.h5
    same "$dt: batch auto = off" $dt-c4.h5 $dt-c4off.h5
    same "$dt: chunk=8 = default chunk" $dt-j1.h5 $dt-ch8.h5
    same "$dt: in process = backend host" $dt-j1.h5 $dt-ip.h5
    # taps none at concurrency 4 (every round batched) against concurrency 1's ids, tokens, logits
    if r=$($PY - $dt-j1.h5 $dt-c4n.h5 <<'EOF'
import sys, h5py
a = h5py.File(sys.argv[1], "r"); b = h5py.File(sys.argv[2], "r"); bad = []; n = 0
for c in a["cases"]:
    for t in ("input_ids", "tokens", "logits"):
        n += 1
        if a["cases/%s/%s" % (c, t)][()].tobytes() != b["cases/%s/%s" % (c, t)][()].tobytes(): bad.append(c + "/" + t)
    if "layers" in b["cases/" + c]: bad.append(c + ": taps with --taps none")
print(", ".join(bad) if bad else "%d tensors" % n); sys.exit(1 if bad else 0)
EOF
    ); then ok "$dt: batched rounds without taps = concurrency 1 ($r)"; else notok "$dt: batched rounds without taps = concurrency 1" "$r"; fi

    # decode case of past P = prefill case of prompt P, within one golden
    if r=$($PY - $dt-j1.h5 "$LENS" <<'EOF'
import sys, h5py
f = h5py.File(sys.argv[1], "r"); bad = []; n = 0
for L in sys.argv[2].split():
    p, d = f["cases/p" + L], f["cases/d" + L]
    names = []
    p.visititems(lambda k, o: names.append(k) if isinstance(o, h5py.Dataset) else None)
    for k in names:
        n += 1
        if k not in d or p[k][()].tobytes() != d[k][()].tobytes(): bad.append("p%s vs d%s: %s" % (L, L, k))
print("; ".join(bad[:4]) if bad else "%d tensors" % n); sys.exit(1 if bad else 0)
EOF
    ); then ok "$dt: decode case = prefill case ($r)"; else notok "$dt: decode case = prefill case" "$r"; fi

    # prefill of L + k decode steps = one prefill of the L + k ids (k = 1, 2, 3)
    mkdir $dt-ext
    $PY - $dt-j1.h5 "$LENS" > $dt-ext/spec.json <<'EOF'
import sys, json, h5py
f = h5py.File(sys.argv[1], "r"); s = []
for L in sys.argv[2].split():
    ids = [int(x) for x in f["cases/p%s/input_ids" % L][()]]; tok = [int(x) for x in f["cases/p%s/tokens" % L][()]]
    for k in (1, 2, 3): s.append(["e%s-%d" % (L, k), "prefill", ids + tok[:k], 1])
print(json.dumps(s))
EOF
    $PY gen.py $dt-ext/man.jsonl $dt-ext/spec.json
    expect_exit "$dt: long prefills" 0 npu-replay run --model m --manifest $dt-ext/man.jsonl --side baseline --warmup 0 --runs 1 $O -j2 --golden $dt-ext/g.h5 --raw $dt-ext/r.jsonl
    if r=$($PY - $dt-j1.h5 $dt-ext/g.h5 "$LENS" <<'EOF'
import sys, h5py
f = h5py.File(sys.argv[1], "r"); e = h5py.File(sys.argv[2], "r"); bad = []; n = 0
for L in map(int, sys.argv[3].split()):
    p = f["cases/p%d" % L]
    for k in (1, 2, 3):
        x = e["cases/e%d-%d" % (L, k)]; n += 2
        if x["logits"][0].tobytes() != p["logits"][k].tobytes(): bad.append("p%d logits row %d != prefill of %d ids" % (L, k, L + k))
        if x["tokens"][0] != p["tokens"][k]: bad.append("p%d token %d != prefill of %d ids" % (L, k, L + k))
        names = []
        x.visititems(lambda q, o: names.append(q) if isinstance(o, h5py.Dataset) and q.startswith("layers/") else None)
        for q in names:
            n += 1
            if x[q][()].tobytes() != p[q][:L + k].tobytes(): bad.append("p%d %s rows 0..%d" % (L, q, L + k - 1))
print("; ".join(bad[:4]) if bad else "%d tensors and rows" % n); sys.exit(1 if bad else 0)
EOF
    ); then ok "$dt: prefill + decode = one long prefill ($r)"; else notok "$dt: prefill + decode = one long prefill" "$r"; fi

    # teacher-forced score = one run case per prefix, nll by numpy
    mkdir $dt-tf
    $PY - $dt-j1.h5 > $dt-tf/spec.json <<'EOF'
import sys, json, h5py, numpy as np
f = h5py.File(sys.argv[1], "r"); s = []
for L in (1, 8, 64, 65):
    ids = [int(x) for x in f["cases/p%d/input_ids" % L][()]] + [int(x) for x in f["cases/p%d/tokens" % L][()]]
    s.append(["t%d" % L, "prefill", ids, 1])
r = np.random.default_rng(5); s.append(["t300", "prefill", [int(x) for x in r.integers(0, 512, 300)], 1])
for c, _, ids, _ in list(s):
    for i in range(1, len(ids)): s.append(["q-%s-%d" % (c, i), "prefill", ids[:i], 1])
print(json.dumps(s))
EOF
    $PY gen.py $dt-tf/man.jsonl $dt-tf/spec.json
    expect_exit "$dt: prefix runs" 0 npu-replay run --model m --manifest $dt-tf/man.jsonl --side baseline --warmup 0 --runs 1 $O -j2 --taps none --golden $dt-tf/g.h5 --raw $dt-tf/r.jsonl --cases 'q-*'
    expect_exit "$dt: score -j 1" 0 npu-replay score --model m --manifest $dt-tf/man.jsonl --side baseline $O -j1 --cases 't*' -o $dt-tf/s1.json
    expect_exit "$dt: score -j 2" 0 npu-replay score --model m --manifest $dt-tf/man.jsonl --side baseline $O -j2 --cases 't*' -o $dt-tf/s2.json
    expect_exit "$dt: score chunk=8" 0 npu-replay score --model m --manifest $dt-tf/man.jsonl --side baseline $O --backend-opt chunk=8 -j2 --cases 't*' -o $dt-tf/s8.json
    if cmp -s $dt-tf/s1.json $dt-tf/s2.json; then ok "$dt: score -j 1 = -j 2"; else notok "$dt: score -j 1 = -j 2" "$(diff $dt-tf/s1.json $dt-tf/s2.json | head -4 | tr '\n' ' ')"; fi
    if sed 's/chunk=8//' $dt-tf/s8.json | cmp -s - $dt-tf/s1.json; then ok "$dt: score chunk=8 = default"; else notok "$dt: score chunk=8 = default" "$(diff $dt-tf/s1.json $dt-tf/s8.json | head -4 | tr '\n' ' ')"; fi
    if r=$($PY - $dt-tf/g.h5 $dt-tf/s1.json $dt-tf/spec.json <<'EOF'
import sys, json, h5py, numpy as np
g = h5py.File(sys.argv[1], "r"); s = json.load(open(sys.argv[2])); spec = {c: ids for c, _, ids, _ in json.load(open(sys.argv[3]))}
bad = []; n = 0
for c in s["cases"]:
    ids = spec[c["case_id"]]; tot = 0.0
    for i in range(1, len(ids)):
        row = g["cases/q-%s-%d/logits" % (c["case_id"], i)][0].astype(np.float64)
        m = row.max(); tot += m + np.log(np.sum(np.exp(row - m))) - row[ids[i]]
    n += 1
    if c["scored_tokens"] != len(ids) - 1: bad.append("%s: scored_tokens %d, wanted %d" % (c["case_id"], c["scored_tokens"], len(ids) - 1))
    if abs(c["nll_sum"] - tot) > 1e-10 * abs(tot): bad.append("%s: nll_sum %.17g, numpy over single-position runs %.17g" % (c["case_id"], c["nll_sum"], tot))
if n != 5: bad.append("%d cases scored, wanted 5" % n)
print("; ".join(bad) if bad else "%d cases" % n); sys.exit(1 if bad else 0)
EOF
    ); then ok "$dt: teacher-forced score = single-position runs ($r)"; else notok "$dt: teacher-forced score = single-position runs" "$r"; fi
done

# the numpy oracle (float64) on the f32 golden
cat > oracle.py <<'EOF'
import json, struct, sys, numpy as np, h5py
mdir, golden = sys.argv[1], sys.argv[2]
cfg = json.load(open(mdir + "/config.json"))
import os
files = {}
if os.path.exists(mdir + "/model.safetensors.index.json"):
    wm = json.load(open(mdir + "/model.safetensors.index.json"))["weight_map"]
else:
    wm = None
def shard(fn):
    if fn not in files:
        raw = open(mdir + "/" + fn, "rb").read(); hn = struct.unpack("<Q", raw[:8])[0]
        files[fn] = (raw, json.loads(raw[8:8 + hn]), 8 + hn)
    return files[fn]
def W(name):
    raw, hdr, base = shard(wm[name] if wm else "model.safetensors")
    t = hdr[name]; a, b = t["data_offsets"]; buf = raw[base + a:base + b]
    if t["dtype"] == "BF16":
        x = (np.frombuffer(buf, "<u2").astype(np.uint32) << 16).view(np.float32)
    elif t["dtype"] == "F16": x = np.frombuffer(buf, "<f2")
    else: x = np.frombuffer(buf, "<f4")
    return x.astype(np.float64).reshape(t["shape"])
H, nh, nkv, hd = cfg["hidden_size"], cfg["num_attention_heads"], cfg["num_key_value_heads"], cfg["head_dim"]
E, K, eps, theta = cfg["num_experts"], cfg["num_experts_per_tok"], cfg["rms_norm_eps"], cfg["rope_theta"]
def rms(x, w): return x / np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + eps) * w
def rope(x, pos):  # x [T, heads, hd]
    inv = theta ** (-np.arange(0, hd, 2) / hd); ang = pos[:, None] * inv[None, :]
    c = np.cos(np.concatenate([ang, ang], -1))[:, None, :]; s = np.sin(np.concatenate([ang, ang], -1))[:, None, :]
    h2 = hd // 2; rot = np.concatenate([-x[..., h2:], x[..., :h2]], -1)
    return x * c + rot * s
def forward(ids):
    T = len(ids); pos = np.arange(T, dtype=np.float64)
    x = W("model.embed_tokens.weight")[ids]; taps = {}
    for L in range(cfg["num_hidden_layers"]):
        p = "model.layers.%d." % L
        h = rms(x, W(p + "input_layernorm.weight"))
        q = (h @ W(p + "self_attn.q_proj.weight").T).reshape(T, nh, hd)
        k = (h @ W(p + "self_attn.k_proj.weight").T).reshape(T, nkv, hd)
        v = (h @ W(p + "self_attn.v_proj.weight").T).reshape(T, nkv, hd)
        q = rope(rms(q, W(p + "self_attn.q_norm.weight")), pos)
        k = rope(rms(k, W(p + "self_attn.k_norm.weight")), pos)
        o = np.zeros((T, nh, hd)); g = nh // nkv
        mask = np.triu(np.full((T, T), -np.inf), 1)
        for hh in range(nh):
            s = q[:, hh, :] @ k[:, hh // g, :].T / np.sqrt(hd) + mask
            s = np.exp(s - s.max(-1, keepdims=True)); s /= s.sum(-1, keepdims=True)
            o[:, hh, :] = s @ v[:, hh // g, :]
        a = o.reshape(T, nh * hd) @ W(p + "self_attn.o_proj.weight").T
        x = x + a
        h = rms(x, W(p + "post_attention_layernorm.weight"))
        if L in cfg.get("mlp_only_layers", []):  # a dense SwiGLU layer
            gg = h @ W(p + "mlp.gate_proj.weight").T; uu = h @ W(p + "mlp.up_proj.weight").T
            m = (gg / (1 + np.exp(-gg)) * uu) @ W(p + "mlp.down_proj.weight").T
            ids_k = rl = None
        else:
            rl = h @ W(p + "mlp.gate.weight").T
            pr = np.exp(rl - rl.max(-1, keepdims=True)); pr /= pr.sum(-1, keepdims=True)
            ids_k = np.argsort(-pr, axis=-1, kind="stable")[:, :K]
            wk = np.take_along_axis(pr, ids_k, -1)
            if cfg["norm_topk_prob"]: wk = wk / wk.sum(-1, keepdims=True)
            m = np.zeros_like(x)
            for t in range(T):
                for j in range(K):
                    e = ids_k[t, j]; pe = p + "mlp.experts.%d." % e
                    gg = h[t] @ W(pe + "gate_proj.weight").T; uu = h[t] @ W(pe + "up_proj.weight").T
                    m[t] += wk[t, j] * ((gg / (1 + np.exp(-gg)) * uu) @ W(pe + "down_proj.weight").T)
        x = x + m
        taps[L] = dict(attn_out=a, mlp_out=m, hidden=x, topk_ids=ids_k, logits=rl)
    logits = rms(x, W("model.norm.weight")) @ W("lm_head.weight").T
    return logits, taps
f = h5py.File(golden, "r"); bad = []; n = 0
for cid in sys.argv[3:]:
    g = f["cases/" + cid]; inp = list(g["input_ids"][()]); tok = list(g["tokens"][()])
    lg, taps = forward(np.array(inp + tok[:-1])); P = len(inp)
    got = g["logits"][()].astype(np.float64); want = lg[P - 1:P - 1 + len(tok)]
    d = np.abs(got - want).max() / max(1.0, np.abs(want).max()); n += 1
    if d > 2e-5: bad.append("%s: logits differ from numpy by %.3g of their scale" % (cid, d))
    if list(np.argmax(want, -1)) != tok: bad.append("%s: tokens %s, numpy's argmax %s" % (cid, tok, list(np.argmax(want, -1))))
    for L in taps:
        for nm in ("hidden", "attn_out", "mlp_out"):
            gt = g["layers/%d/%s" % (L, nm)][()].astype(np.float64); w = taps[L][nm]; n += 1
            dd = np.abs(gt - w).max() / max(1.0, np.abs(w).max())
            if dd > 2e-5: bad.append("%s: layers/%d/%s differs from numpy by %.3g" % (cid, L, nm, dd))
        if taps[L]["topk_ids"] is None:
            if "layers/%d/router/topk_ids" % L in g: bad.append("%s: router taps of the dense layer %d" % (cid, L))
            continue
        n += 1
        if not np.array_equal(g["layers/%d/router/topk_ids" % L][()], taps[L]["topk_ids"]): bad.append("%s: layers/%d/router/topk_ids differ from numpy's" % (cid, L))
print("; ".join(bad[:4]) if bad else "%d tensors" % n); sys.exit(1 if bad else 0)
EOF
if r=$($PY oracle.py m f32-j1.h5 p1 p7 p8 p9 p63 p64 p65 d65 2>&1); then ok "f32: numpy float64 forward pass ($r)"; else notok "f32: numpy float64 forward pass" "$r"; fi
if r=$($PY oracle.py m f32-ext/g.h5 e63-1 e64-3 e65-3 2>&1); then ok "f32: numpy on the long prefills ($r)"; else notok "f32: numpy on the long prefills" "$r"; fi
# conform (docs/conformance.md: the causal mask, KV positions, lanes, tail, reset, router,
# determinism all compare one path of the backend with another) at --budget 0 (no time-bound
# random positions): every check passes, and the report is the same at -j 1 and -j 2 but for
# its timings (seconds, the kv-growth curve's tpot_s); in f32 and bf16
for dt in f32 bf16; do
    for j in 1 2; do
        npu-replay conform --model m --backend-opt dtype=$dt --budget 0 --max-context 160 --backend-log backend.log -j $j --json conf-$dt-$j.json > conf-$dt-$j.txt 2>&1
        echo "exit $?" >> conf-$dt-$j.txt
    done
    if grep -q "^exit 0" conf-$dt-1.txt && grep -q '"verdict": "pass"' conf-$dt-1.json; then ok "$dt: conform passes"
    else notok "$dt: conform passes" "$(grep -v '^ *[0-9]' conf-$dt-1.txt | head -5 | tr '\n' ' ')"; fi
    for j in 1 2; do sed -E 's/"(seconds|tpot_s)": [0-9.e+-]+/"\1": S/' conf-$dt-$j.json > conf-$dt-$j.s; done
    if [ -s conf-$dt-1.s ] && cmp -s conf-$dt-1.s conf-$dt-2.s; then ok "$dt: conform -j 1 = -j 2"
    else notok "$dt: conform -j 1 = -j 2" "$(diff conf-$dt-1.s conf-$dt-2.s | head -6 | tr '\n' ' ')"; fi
done
# f16 and f32 weights (other conversion paths than bf16's), a dense layer 1, three shards
for wd in f16 f32; do
    sh=""; [ $wd = f16 ] && sh="--shards 3"
    expect_exit "$wd weights: make-model" 0 npu-replay make-model --preset tiny --seed 6 --dtype $wd --dense-layer 1 $sh -o m$wd
    R="npu-replay run --model m$wd --manifest a/man.jsonl --side baseline --warmup 1 --runs 4"
    expect_exit "$wd weights: -j 1" 0 $R -j1 --golden w$wd-j1.h5 --raw w$wd-j1.jsonl
    expect_exit "$wd weights: -j 2, concurrency 4" 0 $R -j2 --concurrency 4 --golden w$wd-c4.h5 --raw w$wd-c4.jsonl
    expect_exit "$wd weights: -j 2, chunk=8, bf16" 0 $R -j2 --backend-opt chunk=8 --backend-opt dtype=bf16 --golden w$wd-ch8b.h5 --raw w$wd-ch8b.jsonl
    expect_exit "$wd weights: -j 1, bf16" 0 $R -j1 --backend-opt dtype=bf16 --golden w$wd-b.h5 --raw w$wd-b.jsonl
    same "$wd weights: -j 1 = -j 2 at concurrency 4" w$wd-j1.h5 w$wd-c4.h5
    same "$wd weights, bf16: chunk=8 at -j 2 = -j 1" w$wd-b.h5 w$wd-ch8b.h5
    if r=$($PY oracle.py m$wd w$wd-j1.h5 p1 p7 p8 p9 p63 p64 p65 d65 2>&1); then ok "$wd weights: numpy float64 forward pass ($r)"; else notok "$wd weights: numpy float64 forward pass" "$r"; fi
done
exit $FAILED
