# HTML reports at scale (issue 16): a golden-diff report of 10,000 tensors (48 layers of taps,
# the rest expert outputs, one in ten off by noise) must stay under 2 MB and render in under a
# second in headless Chromium. Prints the size, the page's own time to its script's end
# (performance.now() at data-ready) and the wall time of a DOM dump against an empty page's.
# Figures, not asserts (the machine may be shared); needs chromium and python3.
set -u
CHROME=$(command -v chromium || command -v chromium-browser || true)
[ -n "$CHROME" ] || { echo "html: skip: chromium not installed"; exit 0; }
secs() { date +%s.%N; }
python3 - <<'PY'
ref, cand = [], []
n = 0
for L in range(48):
    for k in ("attn_out", "mlp_out", "hidden"):
        ref.append(f"layers/{L}/{k}:f32:4x8:rand={n},-1,1")
        cand.append(f"layers/{L}/{k}:f32:4x8:rand={n},-1,1" + (f";noise={n},0.0{L // 10 + 1}" if L >= 30 else ""))
        n += 1
E = 0
while n < 10000:
    L, e = divmod(E, 48 * 0 + 208)  # 208 experts a layer
    name = f"model.layers.{L % 48}.mlp.experts.{e}.out"
    if L >= 48:
        name = f"extra.{E}.out"
    ref.append(f"{name}:f32:4x8:rand={n},-1,1")
    cand.append(f"{name}:f32:4x8:rand={n},-1,1" + (f";noise={n},0.01" if n % 10 == 0 else ""))
    n += 1; E += 1
open("ref.specs", "w").write("\n".join(ref) + "\n")
open("cand.specs", "w").write("\n".join(cand) + "\n")
PY
# shellcheck disable=SC2046
make-golden ref.h5 $(cat ref.specs) || { echo "html: make-golden failed"; exit 1; }
# shellcheck disable=SC2046
make-golden cand.h5 $(cat cand.specs) || { echo "html: make-golden failed"; exit 1; }
t0=$(secs)
golden-diff -q --json r.json --html r.html ref.h5 cand.h5
rc=$?
t1=$(secs)
printf '<!DOCTYPE html><title>empty</title><body>empty</body>\n' > empty.html
dump() {
    prof=$(mktemp -d)
    timeout 120 "$CHROME" --headless --no-sandbox --disable-gpu --disable-background-networking \
        --disable-component-update --disable-sync --no-first-run --user-data-dir="$prof" \
        --virtual-time-budget=10000 \
        --dump-dom "file://$(pwd)/$1" 2>/dev/null
    rm -rf "$prof"
}
dump empty.html > /dev/null   # warm the disk cache
best_page=999; best_empty=999; page_ms=""
for i in 1 2 3; do
    a=$(secs); dump empty.html > /dev/null; b=$(secs); dump r.html > dom.html; c=$(secs)
    best_empty=$(echo "$a $b $best_empty" | awk '{d = $2 - $1; print (d < $3 ? d : $3)}')
    best_page=$(echo "$b $c $best_page" | awk '{d = $2 - $1; print (d < $3 ? d : $3)}')
    page_ms="$page_ms $(sed -n 's/.*<body[^>]*data-ms="\([0-9]*\)".*/\1/p' dom.html | head -1)"
done
rows=$(grep -o '<tr class="row"' dom.html | wc -l)
size=$(wc -c < r.html)
jsize=$(wc -c < r.json)
echo "golden-diff: 10000 tensors, exit $rc, $(echo "$t0 $t1" | awk '{printf "%.2f", $2 - $1}') s with --json and --html"
echo "html size: $size bytes ($(echo "$size" | awk '{printf "%.2f", $1 / 1048576}') MiB; limit 2 MiB); --json file $jsize bytes"
echo "rows built in the browser: $rows"
echo "page script done at (ms since navigation, 3 runs):$page_ms"
echo "dump-dom wall, best of 3: page $(printf '%.2f' "$best_page") s, empty page $(printf '%.2f' "$best_empty") s"
