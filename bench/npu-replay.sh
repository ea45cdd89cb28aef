#!/bin/sh
# npu-replay's CPU reference backend on the real Qwen3-30B-A3B widths (2 layers by default):
# decode tokens/s and effective GB/s beside a memory-read probe in the same process, prefill at
# 128 and 2048 tokens, PyTorch eager on the same weights (when installed; prefill 128 only, as
# eager 2048 takes many minutes on two cores), and the logits
# conversion of one 151,936-entry row against the naive convert-everything loop.
# The model (3.5 GB for 2 layers) is kept in bench/out/ between runs: delete it to rebuild.
set -eu
layers=${NPU_REPLAY_BENCH_LAYERS:-2}
model="$(dirname "$PWD")/npu-replay-qwen3-30b-a3b-${layers}l"
if [ ! -f "$model/config.json" ]; then
    echo "making the model (qwen3-30b-a3b widths, $layers layers) in $model"
    npu-replay make-model --preset qwen3-30b-a3b --layers "$layers" --seed 1 -o "$model"
fi
replay-bench x --conversion
# the cost of isolation a decode step (docs/performance.md): the tiny preset and this model
[ -f tiny/config.json ] || npu-replay make-model --preset tiny --seed 1 -o tiny
replay-isolation-bench tiny "$(command -v npu-replay)" 250 5 1
replay-isolation-bench "$model" "$(command -v npu-replay)" 30 3 2
replay-bench "$model" 128 2048 --decode 16 --probe-mib 2048 --dump-logits c128.f32
if /usr/bin/python3 -c 'import torch' 2>/dev/null; then
    /usr/bin/python3 "$GOLDEN_ROOT/tests/tools/replay_torch.py" "$model" c128.f32 128 --decode 8
else
    echo "python3-torch not installed: no PyTorch comparison"
fi
