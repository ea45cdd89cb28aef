# npu-replay's cpu backend against a reference build of the project (issue 35): the goldens
# of `npu-replay run` (logits, every layer's taps, router ids and weights) are byte-equal,
# dataset by dataset and attribute by attribute (the `created` time aside), between this build
# and the reference's binary. Kernel work that keeps every summation order (the blocked
# matmul, attention over several positions) must pass it; a change of order shows here.
# Prompt lengths cross the attention blocks (4 positions), the matmul's token passes (48) and
# V tiles (64 keys); tiny bf16 and f32 weights, dtype f32 and bf16. The reference is
# GOLDEN_REPLAY_REF_BIN (a bin/ folder, e.g. main's build/bin); GOLDEN_REPLAY_REF_MODEL adds a
# model folder of your own (e.g. the qwen3-30b-a3b widths, whose K exceeds the matmul's
# 256-wide slices). Skipped (no ok line) without a reference.
. "$GOLDEN_ROOT/tests/e2e/lib.sh"

REF=${GOLDEN_REPLAY_REF_BIN:-}
if [ -z "$REF" ] || [ ! -x "$REF/npu-replay" ]; then
    echo "# skip npu-replay-bits-vs-ref: set GOLDEN_REPLAY_REF_BIN to a reference build's bin/"
    exit 0
fi
if [ -z "${PYTHON:-}" ] || ! "$PYTHON" -c 'import h5py' 2>/dev/null; then
    echo "# skip npu-replay-bits-vs-ref: no python3 with h5py"
    exit 0
fi

npu-replay make-model --preset tiny --seed 11 -o tb > /dev/null 2>&1
npu-replay make-model --preset tiny --seed 12 --dtype f32 -o tf > /dev/null 2>&1

# case MANIFEST LEN VOCAB: a prefill of LEN pseudo-random tokens, 3 decoded after it
case_line() {
    mkdir -p inputs
    "$PYTHON" -c "import random; random.seed($2); print('[' + ','.join(str(random.randrange($3)) for _ in range($2)) + ']')" > inputs/c$2.json
    _h=$(sha256sum inputs/c$2.json | cut -d' ' -f1)
    printf '{"case_id":"c%s","phase":"prefill","prompt_tokens":%d,"past_tokens":0,"output_tokens":3,"dataset":"fixed_prompt","rejection":false,"input":{"path":"inputs/c%s.json","sha256":"%s"}}\n' \
        "$2" "$2" "$2" "$_h" >> "$1"
}

# compare NAME MODEL OPTS LEN...: run both binaries, every dataset and attribute equal
compare() {
    _name=$1 _model=$2 _opts=$3; shift 3
    _v=$("$PYTHON" -c "import json; print(json.load(open('$_model/config.json'))['vocab_size'])")
    rm -f "$_name.jsonl"
    for _l in "$@"; do case_line "$_name.jsonl" "$_l" "$_v"; done
    for _side in new ref; do
        _bin=npu-replay
        [ "$_side" = ref ] && _bin="$REF/npu-replay"
        # shellcheck disable=SC2086
        if ! "$_bin" run --model "$_model" --manifest "$_name.jsonl" --side baseline \
            --golden "$_name.$_side.h5" --raw "$_name.$_side.raw" --warmup 0 --runs 1 \
            --taps 'layers/*' -j2 $_opts > "$_name.$_side.log" 2>&1; then
            notok "$_name: run ($_side)" "$(head -c 400 "$_name.$_side.log")"
            return
        fi
    done
    if "$PYTHON" - "$_name.new.h5" "$_name.ref.h5" > "$_name.cmp" 2>&1 <<'PY'
import sys, h5py, numpy as np
a, b = h5py.File(sys.argv[1], "r"), h5py.File(sys.argv[2], "r")
bad, n = [], [0]
def walk(name, obj):
    if name not in b:
        bad.append("only here: " + name); return
    if isinstance(obj, h5py.Dataset):
        n[0] += 1
        x, y = np.asarray(obj[()]), np.asarray(b[name][()])
        if x.dtype != y.dtype or x.shape != y.shape or x.tobytes() != y.tobytes():
            bad.append(name)
    for k, v in obj.attrs.items():
        if k != "created" and np.asarray(v).tobytes() != np.asarray(b[name].attrs.get(k)).tobytes():
            bad.append(name + "@" + k)
a.visititems(walk)
b.visititems(lambda name, obj: bad.append("only in ref: " + name) if name not in a else None)
print("%d datasets, %d differ: %s" % (n[0], len(bad), bad[:5]))
sys.exit(1 if bad or n[0] == 0 else 0)
PY
    then ok "$_name: goldens byte-equal to the reference ($(cat "$_name.cmp"))"
    else notok "$_name: goldens differ from the reference" "$(cat "$_name.cmp")"; fi
}

compare tiny-bf16 tb "" 1 3 4 5 7 47 48 49 64 65 130 300
compare tiny-f32w tf "" 1 7 48 65 130 257
compare tiny-dtype-bf16 tb "--backend-opt dtype=bf16" 1 7 9 64 130 200
compare tiny-f32w-dtype-bf16 tf "--backend-opt dtype=bf16" 1 7 130
# past tiny's 512 positions: the same weights with the context raised to 4,096
for _m in tb tf; do
    cp -r "$_m" "${_m}4k"
    sed -i 's/"max_position_embeddings": 512/"max_position_embeddings": 4096/' "${_m}4k/config.json"
done
compare tiny-bf16-513 tb4k "" 513
compare tiny-bf16-513-dtype-bf16 tb4k "--backend-opt dtype=bf16" 513
compare tiny-f32w-513 tf4k "" 513
compare tiny-f32w-513-dtype-bf16 tf4k "--backend-opt dtype=bf16" 513
if [ -n "${GOLDEN_REPLAY_REF_MODEL:-}" ] && [ -f "$GOLDEN_REPLAY_REF_MODEL/config.json" ]; then
    compare own-model "$GOLDEN_REPLAY_REF_MODEL" "" 1 7 130 513
    compare own-model-dtype-bf16 "$GOLDEN_REPLAY_REF_MODEL" "--backend-opt dtype=bf16" 1 7 130 513
fi
