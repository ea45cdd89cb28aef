# HTML pictures at scale (issue 16): dag-check --html on a 10^5-op graph with thousands of racing
# pairs (the picture must stay the neighbourhood of the first 60), and npu-replay profile --html
# on a Qwen3-30B-A3B-shaped pair of goldens (48 layers x 128 experts). Prints sizes, the page's
# own time to its script's end (data-ms) and DOM-dump wall times against a 6-op page's.
# Figures, not asserts (the machine may be shared); needs chromium and python3.
set -u
CHROME=$(command -v chromium || command -v chromium-browser || true)
[ -n "$CHROME" ] || { echo "html-pictures: skip: chromium not installed"; exit 0; }
secs() { date +%s.%N; }
dump() {
    prof=$(mktemp -d)
    timeout 120 "$CHROME" --headless --no-sandbox --disable-gpu --disable-quic \
        --disable-background-networking --disable-component-update --disable-sync --no-first-run \
        --user-data-dir="$prof" --virtual-time-budget=10000 \
        --dump-dom "file://$(pwd)/$1" 2>/dev/null
    rm -rf "$prof"
}
# best of 3 dump-dom wall times of $1 and $2, and $1's data-ms each run
pair() {
    best_a=999; best_b=999; ms=""
    for i in 1 2 3; do
        a=$(secs); dump "$1" > a.dom; b=$(secs); dump "$2" > /dev/null; c=$(secs)
        best_a=$(echo "$a $b $best_a" | awk '{d = $2 - $1; print (d < $3 ? d : $3)}')
        best_b=$(echo "$b $c $best_b" | awk '{d = $2 - $1; print (d < $3 ? d : $3)}')
        ms="$ms $(sed -n 's/.*<body[^>]*data-ms="\([0-9]*\)".*/\1/p' a.dom | head -1)"
    done
    echo "  dump-dom wall, best of 3: $(printf '%.2f' "$best_a") s against $(printf '%.2f' "$best_b") s" \
         "for the small page; script done at (ms):$ms"
}

python3 "$GOLDEN_ROOT/tests/e2e/html-graph.py" 19000 5 > big.json
python3 "$GOLDEN_ROOT/tests/e2e/html-graph.py" 1 1 > small.json
dag-check -q --html small.html small.json
t0=$(secs); dag-check -q --json a.json big.json; t1=$(secs)
dag-check -q --json b.json --html big.html big.json; t2=$(secs)
echo "dag-check: $(python3 -c 'import json,sys; r=json.load(open("a.json")); print(r["ops"], "ops,", len(r["races"]), "racing pairs")')"
echo "  --json $(echo "$t0 $t1" | awk '{printf "%.2f", $2 - $1}') s, --json --html $(echo "$t1 $t2" | awk '{printf "%.2f", $2 - $1}') s"
echo "  html $(wc -c < big.html) bytes, ops drawn $(grep -o '<rect class="op ' big.html | wc -l), sync arrows $(grep -o '<path class="sync"' big.html | wc -l)"
pair big.html small.html

specs="" specs2=""
for L in $(seq 0 47); do
    specs="$specs cases/a/layers/$L/router/topk_ids:i32:512x8:rand=$L,0,127.4"
    specs2="$specs2 cases/a/layers/$L/router/topk_ids:i32:512x8:rand=$((L + 100)),0,127.4"
done
# shellcheck disable=SC2086
make-golden p.h5 $specs && make-golden c.h5 $specs2 || { echo "html-pictures: make-golden failed"; exit 1; }
npu-replay profile -q p.h5 c.h5 --html p.html || { echo "html-pictures: profile failed"; exit 1; }
echo "npu-replay profile: 48 layers x 128 experts, two goldens"
echo "  html $(wc -c < p.html) bytes, heatmap cells $(grep -o '<rect class="cell"' p.html | wc -l)"
pair p.html small.html
