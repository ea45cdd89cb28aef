#!/bin/sh
# npu-replay run under load (issue 33): throughput at concurrency 1, 2 and 4 (closed loop, one
# decode case) on the tiny preset and the 2-layer Qwen3-30B-A3B widths (the model bench/npu-replay.sh
# keeps in bench/out/). Throughput is worked out from the raw lines of the measured requests:
# decode tokens (output_tokens - 1 each) over the span from the first one's client-queue start
# to the last one's end (client_queue start + tpot * (output_tokens - 1)). Short by default:
# NPU_REPLAY_LOAD_RUNS measured requests per level (default 200 tiny, 4 for the 30B widths).
# Each level runs with --batch off and auto (one step_batch per round), in process and, for the
# tiny model, through the backend host.
set -eu
layers=${NPU_REPLAY_BENCH_LAYERS:-2}
big="$(dirname "$PWD")/npu-replay-qwen3-30b-a3b-${layers}l"
[ -f tiny/config.json ] || npu-replay make-model --preset tiny --seed 1 -o tiny > /dev/null
if [ ! -f "$big/config.json" ]; then
    echo "making the model (qwen3-30b-a3b widths, $layers layers) in $big"
    npu-replay make-model --preset qwen3-30b-a3b --layers "$layers" --seed 1 -o "$big"
fi
tput() {
    /usr/bin/python3 - "$1" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
rows = [r for r in rows if not r["warmup"]]
start = min(r["stages"]["client_queue"]["start_ns"] for r in rows)
end = max(r["stages"]["client_queue"]["start_ns"] + r["tpot_ms"] * 1e6 * (r["output_tokens"] - 1)
          for r in rows)
tok = sum(r["output_tokens"] - 1 for r in rows)
print("%d requests, %d decode tokens in %.3f s: %.1f tokens/s, %.2f requests/s, mean tpot %.2f ms"
      % (len(rows), tok, (end - start) / 1e9, tok / ((end - start) / 1e9),
         len(rows) / ((end - start) / 1e9), sum(r["tpot_ms"] for r in rows) / len(rows)))
PY
}
for m in tiny "$big"; do
    name=$(basename "$m")
    runs=${NPU_REPLAY_LOAD_RUNS:-$([ "$m" = tiny ] && echo 200 || echo 4)}
    npu-replay matrix --model "$m" --in-process --max-len 16 --random 1 --repeated 0 --decode-steps 9 \
        -o "$name.jsonl" --force > /dev/null
    case=$(grep -o '"case_id":"random-decode-past16-[^"]*"' "$name.jsonl" | head -1 | cut -d'"' -f4)
    # issue 33: with and without step_batch (--batch), in process and (tiny) through the host,
    # where one batch per round saves the per-lane round trips
    for where in in-process host; do
        [ "$where" = host ] && [ "$m" != tiny ] && continue
        ip=$([ "$where" = in-process ] && echo --in-process || true)
        for c in 1 2 4; do
            for batch in off auto; do
                npu-replay run --model "$m" $ip --manifest "$name.jsonl" --side baseline \
                    --cases "$case" --warmup "$c" --runs "$runs" --concurrency "$c" --taps none \
                    --batch "$batch" --golden "$name-$c.h5" --raw "$name-$c.jsonl" --force -q
                printf '%s %s %s concurrency %d batch %s: ' "$name" "$case" "$where" "$c" "$batch"
                tput "$name-$c.jsonl"
            done
        done
    done
done
