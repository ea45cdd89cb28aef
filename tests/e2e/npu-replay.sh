#!/bin/sh
# npu-replay end to end: model folders, the CPU reference backend against an independent numpy
# forward pass, the KV cache (prefill + decode = one long prefill), bad model folders, and the
# dlopen plug-in path with a second backend built from tests/.
. "$GOLDEN_ROOT/tests/e2e/lib.sh"
ORACLE="$GOLDEN_ROOT/tests/tools/replay_oracle.py"
PLUGIN="$GOLDEN_BUILD/tests/lib/test-backend.so"
PLUGIN99="$GOLDEN_BUILD/tests/lib/test-backend-abi99.so"

# mkcase MANIFEST ID PHASE PROMPT PAST OUTPUT IDS...: one manifest line and its token file
mkcase() {
    _m=$1 _id=$2 _ph=$3 _pr=$4 _pa=$5 _out=$6; shift 6
    mkdir -p "$(dirname "$_m")/inputs"
    _f="inputs/$_id.json"
    echo "[$(echo "$@" | tr ' ' ',')]" > "$(dirname "$_m")/$_f"
    _h=$(sha256sum "$(dirname "$_m")/$_f" | cut -d' ' -f1)
    printf '{"case_id":"%s","phase":"%s","prompt_tokens":%d,"past_tokens":%d,"output_tokens":%d,"dataset":"fixed_prompt","rejection":false,"input":{"path":"%s","sha256":"%s"}}\n' \
        "$_id" "$_ph" "$_pr" "$_pa" "$_out" "$_f" "$_h" >> "$_m"
}
reject() {
    printf '{"case_id":"%s","phase":"prefill","prompt_tokens":%d,"output_tokens":%d,"dataset":"random_tokens","rejection":true,"expected_error":"context_limit_exceeded"}\n' "$2" "$3" "$4" >> "$1"
}

expect_exit "--help" 0 npu-replay --help
expect_grep "--help names the commands" 'make-model.*matrix|matrix' out.txt
expect_exit "--version" 0 npu-replay --version
expect_grep "--version" '^npu-replay [0-9]' out.txt
expect_exit "no command exits 2" 2 npu-replay
expect_exit "unknown command exits 2" 2 npu-replay frobnicate
expect_exit "dense layer beyond the model exits 2" 2 npu-replay make-model --preset tiny --dense-layer 5 -o nope
expect_exit "make-model tiny" 0 npu-replay make-model --preset tiny --seed 7 -o tiny
expect_exit "make-model refuses to overwrite" 2 npu-replay make-model --preset tiny -o tiny
expect_exit "make-model f32" 0 npu-replay make-model --preset tiny --seed 7 --dtype f32 -o tiny32
expect_exit "make-model f16" 0 npu-replay make-model --preset tiny --seed 7 --dtype f16 -o tiny16
expect_exit "make-model sharded" 0 npu-replay make-model --preset tiny --seed 7 --shards 3 -o tinysh
expect_grep "sharded model has an index" '"weight_map"' tinysh/model.safetensors.index.json
if cmp -s tiny/config.json tinysh/config.json; then ok "same config sharded or not"; else notok "same config sharded or not"; fi

mkcase m.jsonl p1 prefill 9 0 6 5 17 300 2 99 411 7 7 7
mkcase m.jsonl d1 decode 0 5 4 1 2 3 4 5
mkcase m.jsonl p2 prefill 1 0 3 42
reject m.jsonl r1 600 1
expect_exit "run f32 reference" 0 npu-replay run --model tiny --manifest m.jsonl --side baseline \
    --golden ref.h5 --raw raw.jsonl --warmup 2 --runs 3 --check-rejection
expect_grep "rejection case refused" 'rejection case r1: refused' out.txt
# a refusal with another error than the contract's is a failure, and is not called "accepted"
mkcase rj.jsonl rjp prefill 3 0 1 5 17 300
reject rj.jsonl r1 600 1
expect_exit "rejection refused with another error fails" 1 npu-replay run --model tiny --manifest rj.jsonl \
    --side baseline --golden rj.h5 --raw rj.raw --warmup 0 --runs 1 --check-rejection \
    --backend-opt inject=device_error@2
expect_grep "... and says with what" 'rejection case r1: REFUSED WITH ANOTHER ERROR.*device error in forward call 2' out.txt
if grep -q ACCEPTED out.txt; then notok "... never ACCEPTED"; else ok "... never ACCEPTED"; fi
expect_lines "raw: one line per request (3 cases x 5)" 15 raw.jsonl
expect_grep "raw: warm-ups marked" '"warmup":true' raw.jsonl
expect_grep "raw: decode case has tpot, no ttft" '"case_id":"d1".*"tpot_ms"' raw.jsonl
if grep '"case_id":"d1"' raw.jsonl | grep -q ttft_ms; then notok "decode case has no ttft"; else ok "decode case has no ttft"; fi
if grep -q '"case_id":"r1"' raw.jsonl; then notok "rejection case never submitted"; else ok "rejection case never submitted"; fi
expect_exit "raw lines valid calculet-raw-request/v1" 0 sh -c \
    'n=0; while IFS= read -r l; do printf "%s\n" "$l" > line.json; schema-check line.json calculet-raw-request-v1.schema.json >/dev/null || exit 1; done < raw.jsonl'
if [ -n "$PYTHON" ]; then
    "$PYTHON" - <<'PY'
import json
order = ["client_queue", "service_queue", "input_prepare", "h2d", "npu_wait", "d2h",
         "logits_conversion", "sampling", "stream_flush"]
bad = 0
for line in open("raw.jsonl"):
    r = json.loads(line); st = r["stages"]
    seq = [v for k in order for v in (st[k]["start_ns"], st[k]["end_ns"])]
    bad += any(v == 0 for v in seq) or any(a > b for a, b in zip(seq, seq[1:]))
print(("ok" if bad == 0 else "not ok") + " raw: the nine stages are real readings, in order (%d bad lines)" % bad)
PY
fi
expect_exit "golden verifies" 0 golden-dump --verify ref.h5
expect_exit "output exists without --force" 2 npu-replay run --model tiny --manifest m.jsonl \
    --side baseline --golden ref.h5 --raw raw2.jsonl --runs 1 --warmup 0
expect_absent "no raw left after a refused start" raw2.jsonl

if [ -n "$PYTHON" ]; then
    # the numpy oracle: logits, router taps, greedy tokens, per-layer taps
    "$PYTHON" "$ORACLE" tiny ref.h5 p1 d1 p2 > oracle.txt 2>&1
    cat oracle.txt | grep -E '^(ok|not ok) ' | sed 's/^/numpy: /; s/^numpy: not ok/not ok numpy:/; s/^numpy: ok/ok numpy:/'
    [ -s oracle.txt ] || notok "oracle ran" "$(head -c 300 oracle.txt)"
    # the oracle can fail: another seed's model does not match these goldens
    npu-replay make-model --preset tiny --seed 8 -o other > /dev/null
    if "$PYTHON" "$ORACLE" other ref.h5 p1 > /dev/null 2>&1; then notok "oracle rejects another model"; else ok "oracle rejects another model"; fi
    # prefill then decode = one long prefill of the same ids (the KV cache is right)
    "$PYTHON" - > long.txt <<'PY'
import h5py
f = h5py.File("ref.h5", "r")
ids = list(f["cases/p1/input_ids"][()]) + list(f["cases/p1/tokens"][()][:-1])
print(" ".join(str(int(i)) for i in ids))
PY
    mkcase long.jsonl pl prefill "$(wc -w < long.txt)" 0 1 $(cat long.txt)
    npu-replay run --model tiny --manifest long.jsonl --side baseline --golden long.h5 --raw long.raw \
        --warmup 0 --runs 1 > /dev/null 2>&1
    "$PYTHON" - <<'PY'
import h5py, numpy as np
a = h5py.File("ref.h5", "r")["cases/p1"]; b = h5py.File("long.h5", "r")["cases/pl"]
# one summation order per element whatever the batch: equal bit for bit, not just close
ok = np.array_equal(a["logits"][-1], b["logits"][0])
print(("ok" if ok else "not ok") + " prefill+decode logits = long prefill logits, bit for bit")
for n in ("layers/0/hidden", "layers/1/hidden", "layers/1/mlp_out", "layers/0/router/logits", "layers/1/router/topk_ids"):
    x, y = a[n][()], b[n][()]
    print(("ok" if x.shape == y.shape and np.array_equal(x, y) else "not ok") + " prefill+decode %s = long prefill" % n)
PY
    # f32 and f16 weights, and shards, through the oracle
    for v in tiny32 tiny16 tinysh; do
        npu-replay run --model $v --manifest m.jsonl --side baseline --golden $v.h5 --raw $v.raw \
            --warmup 0 --runs 1 --cases p1 > /dev/null 2>&1
        if "$PYTHON" "$ORACLE" $v $v.h5 p1 > o.txt 2>&1; then ok "numpy oracle on $v"; else notok "numpy oracle on $v" "$(grep 'not ok' o.txt | head -3)"; fi
    done
    "$PYTHON" - <<'PY'
import h5py, numpy as np
a = h5py.File("ref.h5", "r"); b = h5py.File("tinysh.h5", "r")
print(("ok" if np.array_equal(a["cases/p1/logits"][()], b["cases/p1/logits"][()]) else "not ok") + " sharded model gives bit-identical logits")
PY
    # a dense layer (mlp_only_layers) through the oracle; it has no router taps
    npu-replay make-model --preset tiny --seed 7 --dense-layer 0 -o tinyd > /dev/null 2>&1
    expect_grep "dense layer in config" '"mlp_only_layers": \[0\]' tinyd/config.json
    npu-replay run --model tinyd --manifest m.jsonl --side baseline --golden tinyd.h5 --raw tinyd.raw \
        --warmup 0 --runs 1 --cases p1 > /dev/null 2>&1
    if "$PYTHON" "$ORACLE" tinyd tinyd.h5 p1 > o.txt 2>&1; then ok "numpy oracle on a dense layer"; else notok "numpy oracle on a dense layer" "$(grep 'not ok' o.txt | head -3)"; fi
    "$PYTHON" -c 'import h5py,sys; f=h5py.File("tinyd.h5","r"); sys.exit(0 if "router" not in f["cases/p1/layers/0"] and "router" in f["cases/p1/layers/1"] else 1)' \
        && ok "a dense layer has no router taps" || notok "a dense layer has no router taps"
    # dtype=bf16: close to the f32 reference, not equal to it
    npu-replay run --model tiny --manifest m.jsonl --side candidate --golden bf.h5 --raw bf.raw \
        --warmup 0 --runs 1 --backend-opt dtype=bf16 > /dev/null 2>&1
    "$PYTHON" - <<'PY'
import h5py, numpy as np
a = h5py.File("ref.h5", "r")["cases/p1/logits"][0]; b = h5py.File("bf.h5", "r")["cases/p1/logits"][0]
rel = np.abs(a - b).max() / np.abs(a).max()
print(("ok" if 0 < rel < 0.1 else "not ok") + " dtype=bf16 logits near f32 (relative %.3g)" % rel)
bits = (b.astype(np.float32).view(np.uint32) & 0xffff)
print(("ok" if (bits == 0).all() else "not ok") + " dtype=bf16 logits are bf16 values")
PY
fi

# ---- Ctrl-C: stops between requests, leaves neither golden nor raw file (nor a temporary)
mkdir intr
npu-replay run --model tiny --manifest m.jsonl --side baseline --golden intr/g.h5 --raw intr/r.jsonl \
    --warmup 0 --runs 1000000 --cases p1 > intr/out 2> intr/err &
pid=$!
sleep 1
kill -INT $pid
wait $pid
st=$?
if [ "$st" -eq 2 ]; then ok "Ctrl-C exits 2"; else notok "Ctrl-C exits 2" "exit $st"; fi
expect_grep "Ctrl-C says interrupted" 'interrupted' intr/err
if [ -z "$(ls intr | grep -v -e '^out$' -e '^err$')" ]; then ok "Ctrl-C leaves no file behind"; else notok "Ctrl-C leaves no file behind" "$(ls intr)"; fi

# ---- bad model folders: exit 2, one line naming what is wrong
bad() { # NAME PATTERN DIR
    expect_exit "bad model: $1 exits 2" 2 npu-replay run --model "$3" --manifest m.jsonl --side baseline \
        --golden bad.h5 --raw bad.jsonl --runs 1 --warmup 0
    expect_lines "bad model: $1 is one line" 1 err.txt
    expect_grep "bad model: $1 names it" "$2" err.txt
    expect_absent "bad model: $1 leaves no golden" bad.h5
}
cp -R tiny b_cfg && sed -i 's/"hidden_size": 64/"hidden_size": "64"/' b_cfg/config.json
bad "config key of the wrong type" 'hidden_size' b_cfg
cp -R tiny b_cfg2 && sed -i '/"rope_theta"/d' b_cfg2/config.json
bad "config key missing" 'rope_theta' b_cfg2
cp -R tiny b_trunc && truncate -s -100 b_trunc/model.safetensors
bad "truncated shard" 'model.safetensors.*(out of range|exceeds)' b_trunc
cp -R tinysh b_shard && rm b_shard/model-00002-of-00003.safetensors
bad "index naming a missing shard" 'model-00002-of-00003|does not exist' b_shard
cp -R tiny b_shape && sed -i 's/"num_experts": 16/"num_experts": 15/' b_shape/config.json
bad "wrong shape" 'model.layers.0.mlp.gate.weight.*shape \[16, 64\].*\[15, 64\]' b_shape
if [ -n "$PYTHON" ]; then
    # rewrite a header: drop one tensor, or make one tensor's offsets lie
    cat > sthdr.py <<'PY'
import json, struct, sys
src, dst, mode = sys.argv[1:4]
raw = open(src, "rb").read()
(n,) = struct.unpack("<Q", raw[:8]); h = json.loads(raw[8:8 + n]); data = raw[8 + n:]
name = "model.layers.1.self_attn.k_norm.weight"
if mode == "drop":
    # remove the entry and its bytes, shifting later offsets: a well-formed file without it
    b, e = h.pop(name)["data_offsets"]
    data = data[:b] + data[e:]
    for k, v in h.items():
        if k != "__metadata__" and v["data_offsets"][0] >= e:
            v["data_offsets"] = [v["data_offsets"][0] - (e - b), v["data_offsets"][1] - (e - b)]
else:
    b, e = h[name]["data_offsets"]; h[name]["data_offsets"] = [b + 2, e + 2]
s = json.dumps(h).encode(); s += b" " * (-len(s) % 8)
open(dst, "wb").write(struct.pack("<Q", len(s)) + s + data)
PY
    cp -R tiny b_miss && "$PYTHON" sthdr.py tiny/model.safetensors b_miss/model.safetensors drop
    bad "missing tensor" 'model.layers.1.self_attn.k_norm.weight.*missing|missing.*k_norm' b_miss
    cp -R tiny b_off && "$PYTHON" sthdr.py tiny/model.safetensors b_off/model.safetensors lie
    bad "header lying about offsets" 'k_norm.weight.*(overlap|out of range)|overlap' b_off
fi
expect_exit "unknown backend option exits 2" 2 npu-replay run --model tiny --manifest m.jsonl \
    --side baseline --golden x.h5 --raw x.jsonl --backend-opt colour=red
expect_grep "unknown backend option named" "colour" err.txt

# ---- the plug-in path: a second backend through dlopen
mkcase pm.jsonl c1 prefill 3 0 6 5 9 11
mkcase pm.jsonl c2 decode 0 4 5 1 2 3 4
reject pm.jsonl big 40 20
expect_exit "plug-in backend runs" 0 npu-replay run --backend "$PLUGIN" --manifest pm.jsonl \
    --side candidate --golden pl.h5 --raw pl.jsonl --warmup 1 --runs 2 --check-rejection
expect_grep "plug-in refuses the rejection case" 'rejection case big: refused' out.txt
expect_exit "plug-in bf16 logits" 0 npu-replay run --backend "$PLUGIN" --backend-opt logits=bf16 \
    --manifest pm.jsonl --side candidate --golden plb.h5 --raw plb.jsonl --warmup 0 --runs 1
if [ -n "$PYTHON" ]; then
    "$PYTHON" - <<'PY'
import h5py, numpy as np
for fn in ("pl.h5", "plb.h5"):
    f = h5py.File(fn, "r")
    for c in ("c1", "c2"):
        ids = list(f["cases/%s/input_ids" % c][()]); want = []
        for _ in range(f["cases/%s/tokens" % c].shape[0]):
            p = len(ids) - 1; t = (7 * ids[-1] + p + 3) % 64; want.append(t); ids.append(t)
        got = list(f["cases/%s/tokens" % c][()])
        print(("ok" if got == want else "not ok") + " plug-in %s %s greedy tokens %s" % (fn, c, got))
    h = f["cases/c1/layers/0/hidden"][()]
    print(("ok" if h.shape == (8, 2) and list(h[:, 1]) == list(range(8)) else "not ok") + " plug-in %s taps cover every position" % fn)
PY
fi
expect_grep "plug-in marks d2h" '"d2h":\{"start_ns":[1-9]' pl.jsonl
expect_exit "ABI mismatch exits 2" 2 npu-replay run --backend "$PLUGIN99" --manifest pm.jsonl \
    --side candidate --golden a.h5 --raw a.jsonl
expect_grep "ABI mismatch names both versions" 'version 99.*version 1' err.txt
expect_exit "backend error mid-run exits 2" 2 npu-replay run --backend "$PLUGIN" --backend-opt fail_at=4 \
    --manifest pm.jsonl --side candidate --golden f.h5 --raw f.jsonl --warmup 0 --runs 1
expect_grep "backend error names case and request" 'c1.*request candidate/c1/0.*device fault' err.txt
expect_absent "no partial golden after a backend error" f.h5
expect_absent "no partial raw file after a backend error" f.jsonl
expect_exit "not a backend exits 2" 2 npu-replay run --backend /nonexistent.so --manifest pm.jsonl \
    --side candidate --golden a.h5 --raw a.jsonl
