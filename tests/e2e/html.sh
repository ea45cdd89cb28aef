# End-to-end tests of the HTML reports (issue 16): golden-diff, exp-gate decide, dag-check,
# npu-replay conform and npu-replay profile write --html from files made here; headless Chromium opens each one, and the DOM it dumps must
# show the series and marks the --json report implies (tests/e2e/html-check.py works them out),
# with the page's script run and no JavaScript error. HTML_SHOTS=DIR also saves screenshots.
. "$GOLDEN_ROOT/tests/e2e/lib.sh"
CHECK="$GOLDEN_ROOT/tests/e2e/html-check.py"
JPY=""
for p in /usr/bin/python3 python3; do
    if command -v "$p" >/dev/null 2>&1 && "$p" -c 'import json, html.parser' 2>/dev/null; then JPY=$p; break; fi
done
CHROME=""
for p in chromium chromium-browser; do
    if command -v "$p" >/dev/null 2>&1; then CHROME=$p; break; fi
done

# browse URL-less FILE OUT [ARGS]: dump the DOM (or take a screenshot with --screenshot=...)
browse() {
    _prof=$(mktemp -d)
    _f=$1; shift
    timeout 90 "$CHROME" --headless --no-sandbox --disable-gpu --disable-quic --disable-background-networking \
        --disable-component-update --disable-sync --no-first-run --user-data-dir="$_prof" \
        --virtual-time-budget=10000 \
        "$@" "file://$(pwd)/$_f" 2>/dev/null
    _rc=$?
    rm -rf "$_prof"
    return $_rc
}

# dom_check KIND FILE.html REPORT.json [EXTRA] (EXTRA: see html-check.py)
dom_check() {
    if [ -z "$CHROME" ]; then
        echo "ok html-$1-browser # skip chromium not installed (ci/install-deps installs it)"
        return
    fi
    if [ -z "$JPY" ]; then echo "ok html-$1-browser # skip no python3"; return; fi
    if browse "$2" --dump-dom > "$2.dom"; then ok "html-$1-browser"; else notok "html-$1-browser" "chromium failed"; return; fi
    _kind=$1 _page=$2
    shift 2
    "$JPY" "$CHECK" "$_kind" "$_page.dom" "$@" 2>&1 | sed 's/^/    /; s/^    \(not \)\{0,1\}ok /\1ok /'
    if [ -n "${HTML_SHOTS:-}" ] && [ "$_kind" != big ] && [ "$_kind" != dagbig ]; then
        browse "$_page" --screenshot="$HTML_SHOTS/$_kind.png" --window-size=1100,1500 --hide-scrollbars >/dev/null
    fi
}

# ---- golden-diff: six layers of three tap kinds, error growing from layer 3, logits flips ----
R=""; C=""; B=""
for L in 0 1 2 3 4 5; do
    # layers 0-2 exact (1 - cosine 0: drawn at the axis floor), noise growing from layer 3
    n="" nb=""
    [ "$L" -ge 3 ] && n=";noise=$((L + 7)),0.0$((L - 2))" && nb=";noise=$((L + 17)),0.01"
    R="$R layers/$L/attn_out:f32:4x32:rand=$L,-1,1 layers/$L/mlp_out:f32:4x32:rand=$((L+50)),-1,1"
    R="$R layers/$L/hidden:f32:4x32:rand=$((L+90)),-2,2"
    C="$C layers/$L/attn_out:f32:4x32:rand=$L,-1,1$n layers/$L/mlp_out:f32:4x32:rand=$((L+50)),-1,1$n"
    C="$C layers/$L/hidden:f32:4x32:rand=$((L+90)),-2,2;noise=$((L + 30)),0.00$((L + 1))$n"
    B="$B layers/$L/attn_out:f32:4x32:rand=$L,-1,1$nb layers/$L/mlp_out:f32:4x32:rand=$((L+50)),-1,1$nb"
    B="$B layers/$L/hidden:f32:4x32:rand=$((L+90)),-2,2$nb"
done
# a name that would break out of markup if it were not escaped
ODD='odd</script><b>&x'
# shellcheck disable=SC2086
make-golden ref.h5 $R "logits:f32:16x50:rand=3,-4,4" "$ODD:f32:3:values=1,2,3" \
    || notok make-ref
# shellcheck disable=SC2086
make-golden cand.h5 $C "logits:f32:16x50:rand=3,-4,4;noise=5,0.6" "$ODD:f32:3:values=1,2,3" \
    || notok make-cand
# shellcheck disable=SC2086
make-golden base.h5 $B "logits:f32:16x50:rand=3,-4,4;noise=6,0.05" "$ODD:f32:3:values=1,2,3" \
    || notok make-base
expect_exit diff-html 1 golden-diff --json d.json --html d.html ref.h5 cand.h5
expect_grep diff-html-doctype '^<!DOCTYPE html>' d.html
if grep -q '<b>&x' d.html; then notok diff-html-raw-name "the tensor name is in the page unescaped"; else ok diff-html-raw-name; fi
expect_exit diff-html-exists 2 golden-diff --html d.html ref.h5 cand.h5
expect_grep diff-html-exists-msg 'd\.html' err.txt
expect_exit diff-html-is-input 2 golden-diff --force --html ref.h5 ref.h5 cand.h5
dom_check diff d.html d.json
if [ -n "$CHROME" ]; then expect_grep diff-html-escaped '<td>odd&lt;/script&gt;&lt;b&gt;&amp;x</td>' d.html.dom; fi
# three-way: candidate and baseline lines per kind
expect_exit diff3-html 1 golden-diff --json d3.json --html d3.html -b base.h5 ref.h5 cand.h5
dom_check diff3 d3.html d3.json
# the check can fail: a page whose script throws is caught, and a missing series is noticed
if [ -n "$CHROME" ] && [ -n "$JPY" ]; then
    sed 's|<script type="application/json"|<script>null.boom();</script>&|' d.html > broken.html
    browse broken.html --dump-dom > broken.html.dom
    if grep -q 'data-js-errors=' broken.html.dom; then ok html-js-error-caught; else notok html-js-error-caught "no data-js-errors"; fi
    sed 's|<polyline [^>]*data-series="MoE output"[^>]*/>||' d.html > less.html
    browse less.html --dump-dom > less.html.dom
    if "$JPY" "$CHECK" diff less.html.dom d.json > less.out 2>&1; then
        notok html-missing-series-caught "the checker passed a page without a series"
    else ok html-missing-series-caught; fi
fi

# ---- a report over 256 KiB: its JSON is embedded deflated, its table paged (500 rows) ----
: > big.specs
: > bigc.specs
i=0
while [ $i -lt 600 ]; do
    echo "t$i:f32:2:values=$i,1" >> big.specs
    if [ $((i % 7)) -eq 0 ]; then echo "t$i:f32:2:values=$i,2" >> bigc.specs
    else echo "t$i:f32:2:values=$i,1" >> bigc.specs; fi
    i=$((i + 1))
done
# shellcheck disable=SC2046
make-golden big.h5 $(cat big.specs) || notok make-big
# shellcheck disable=SC2046
make-golden bigc.h5 $(cat bigc.specs) || notok make-bigc
expect_exit big-html 1 golden-diff --json big.json --html big.html big.h5 bigc.h5
expect_grep big-html-deflated 'data-encoding="deflate-base64"' big.html
dom_check big big.html big.json

# ---- exp-gate decide on the example experiment ----
# (named as its experiment: decide runs manifest-verify's checks first, folder-name among them)
mkdir -p expd && cp -R "$GOLDEN_ROOT/examples/experiment/OP-MOE-0001" expd/ && ln -s expd/OP-MOE-0001 exp
expect_exit gate-html 1 exp-gate decide --force --html g.html expd/OP-MOE-0001
expect_grep gate-html-rule 'data-decision="no_merge"' g.html
dom_check gate g.html exp/decision.json exp/performance/summary.json

# ---- dag-check: two racing pairs over three queues ----
cat > race.json <<'Y'
{"schema": "calculet-graph/v1",
 "queues": [{"id": "A", "chip": 0}, {"id": "B", "chip": 0}, {"id": "C", "chip": 1},
            {"id": "D", "chip": 1}],
 "buffers": [{"id": "t", "chip": 0, "space": "sram", "address": 0, "size": 256},
             {"id": "u", "chip": 0, "space": "sram", "address": 1024, "size": 64}],
 "ops": [
  {"id": "p", "queue": "A", "writes": [{"buffer": "t", "offset": 0, "size": 256}]},
  {"id": "s", "queue": "A", "kind": "signal", "event": "e"},
  {"id": "w", "queue": "B", "kind": "wait", "event": "e"},
  {"id": "r", "queue": "B", "reads": [{"buffer": "t", "offset": 0, "size": 256}],
   "writes": [{"buffer": "u", "offset": 0, "size": 64}]},
  {"id": "p2", "queue": "A", "writes": [{"buffer": "t", "offset": 128, "size": 128}]},
  {"id": "d0", "queue": "D"},
  {"id": "bd", "kind": "barrier", "queues": ["D"]},
  {"id": "q", "queue": "C", "reads": [{"buffer": "u", "offset": 0, "size": 32}], "after": ["bd"]}]}
Y
expect_exit dag-html 1 dag-check --json g.json --html dag.html race.json
dom_check dag dag.html g.json race.json
# --remove w: the picture is the graph checked, so the removed wait is drawn without its arrow
expect_exit dag-remove-html 1 dag-check --remove w --json rm.json --html rm.html race.json
if grep -q 'data-from="s" data-to="w"' rm.html; then notok dag-remove-no-arrow "the removed wait still has its arrow"
else ok dag-remove-no-arrow; fi
expect_grep dag-remove-op-shown 'data-op="w".*removed: it orders nothing here' rm.html
expect_grep dag-full-has-arrow 'data-from="s" data-to="w"' dag.html
# q waits (after) for barrier bd, whose one queue D has no shown op: D gets a lane for it
expect_grep dag-barrier-lane 'class="lane" data-queue="D"' dag.html
expect_grep dag-barrier-arrow 'data-from="bd" data-to="q"' dag.html

# ---- dag-check on generated graphs: two chips, signals with several waits, after edges,
# barriers; the neighbourhood, its happens-before columns and sync arrows are worked out again
# by html-check.py from the graph file (graphs from html-graph.py). 400 rounds give more racing
# pairs than are drawn (60).
if [ -n "$JPY" ]; then
    { "$JPY" "$GOLDEN_ROOT/tests/e2e/html-graph.py" 30 1 > g30.json &&
      "$JPY" "$GOLDEN_ROOT/tests/e2e/html-graph.py" 400 2 > g400.json; } || notok dag-gen "html-graph.py failed"
    expect_exit dagnb-html 1 dag-check --json g30.rep.json --html g30.html g30.json
    dom_check dagnb g30.html g30.rep.json g30.json
    expect_exit dagbig-html 1 dag-check --json g400.rep.json --html g400.html g400.json
    dom_check dagbig g400.html g400.rep.json g400.json
    if [ -n "$CHROME" ]; then
        # the checker notices a missing sync arrow and an op moved against happens-before
        sed '0,/<path class="sync"[^>]*>/s///' g30.html > nosync.html
        browse nosync.html --dump-dom > nosync.dom
        if "$JPY" "$CHECK" dagnb nosync.dom g30.rep.json g30.json > nosync.out 2>&1; then
            notok html-missing-sync-caught "the checker passed a page without a sync arrow"
        else ok html-missing-sync-caught; fi
        sed '0,/data-col="\([0-9]*\)"/s//data-col="9\1"/' g30.html > badcol.html
        browse badcol.html --dump-dom > badcol.dom
        if "$JPY" "$CHECK" dagnb badcol.dom g30.rep.json g30.json > badcol.out 2>&1; then
            notok html-bad-column-caught "the checker passed an op out of happens-before order"
        else ok html-bad-column-caught; fi
    fi
else
    echo "ok dagnb-html # skip no python3"
fi

# ---- npu-replay conform: a planted router fault (findings listed) and the kv-growth curve ----
expect_exit make-model 0 npu-replay make-model --preset tiny --seed 3 -o m
expect_exit conform-html 1 npu-replay conform --model m -j1 --checks causal-mask,router,kv-growth \
    --backend-opt inject=router_duplicate --json conform.json --html conform.html
expect_grep conform-html-verdict 'data-verdict="fail"' conform.html
dom_check conform conform.html conform.json

# ---- npu-replay profile: one golden, then baseline and candidate (f32 against bf16) ----
expect_exit matrix 0 npu-replay matrix --model m --max-len 32 --random 1 --repeated 0 -o man.jsonl -j1
expect_exit run-base 0 npu-replay run --model m --manifest man.jsonl --side baseline --golden pb.h5 \
    --raw rb.jsonl --warmup 0 --runs 1 --taps 'layers/*/router/*' -j1
expect_exit run-cand 0 npu-replay run --model m --manifest man.jsonl --side candidate --golden pc.h5 \
    --raw rc.jsonl --warmup 0 --runs 1 --taps 'layers/*/router/*' -j1 --backend-opt dtype=bf16
expect_exit profile1-html 0 npu-replay profile pb.h5 --json p1.json --html p1.html
dom_check profile1 p1.html p1.json
expect_exit profile-html 0 npu-replay profile pb.h5 pc.h5 --json p2.json --html p2.html
dom_check profile p2.html p2.json
expect_exit profile-html-exists 2 npu-replay profile pb.h5 --html p2.html
expect_grep profile-html-exists-msg 'p2\.html' err.txt
if [ -n "$CHROME" ] && [ -n "$JPY" ]; then
    # #bucket-layer=1 in the address shows layer 1's histogram and hides the summed one
    browse "p2.html#bucket-layer=1" --dump-dom > p2pick.dom
    "$JPY" "$CHECK" profile p2pick.dom p2.json pick=1 2>&1 | grep selector | sed 's/^/    /; s/^    \(not \)\{0,1\}ok /\1ok /'
fi
# ---- golden-diff: the |c - r| histogram of a chosen tensor, bars against numpy (h5py) ----
diff_histogram_block() {
    if [ -z "$PYTHON" ]; then echo "ok html-diffhist # skip numpy+h5py not importable"; return; fi
    "$PYTHON" - <<'EOF' || notok hist-generate
import numpy as np
rng = np.random.default_rng(1616)
n = 40000
specs = {"r": [], "c": []}
def emit(name, dt, npdt, r, c):
    for side, v in (("r", r), ("c", c)):
        v.astype(npdt).tofile(f"h-{name}.{side}.raw")
        specs[side].append(f"{name}:{dt}:{n}:file=h-{name}.{side}.raw")
u = rng.standard_normal(n)
def spoil(r, c, tiny, huge):
    k = rng.permutation(n)[:3000].reshape(6, 500)
    r[k[0]] = np.nan; c[k[1]] = np.inf; c[k[2]] = r[k[2]]
    r[k[3]] = 0.0; c[k[3]] = -0.0
    r[k[4]] = tiny; c[k[4]] = -tiny
    r[k[5]] = huge; c[k[5]] = -huge
r = u.copy(); c = u + rng.standard_normal(n) * np.exp2(-rng.integers(0, 60, n).astype(float))
spoil(r, c, 1e-310, 1e308)
emit("adversarial_f64", "f64", "<f8", r, c)
r = u.astype(np.float32).astype(np.float64); c = r + rng.standard_normal(n) * 1e-2
spoil(r, c, 1e-40, 3e38)
emit("worst_f32", "f32", "<f4", r, c)
emit("close_f32", "f32", "<f4", u, u + rng.standard_normal(n) * 1e-6)
emit("exact_f16", "f16", "<f2", u, u)
b = u.astype(np.float32); bc = (b + rng.standard_normal(n).astype(np.float32) * 1e-3).astype(np.float32)
for side, v in (("r", b), ("c", bc)):
    (v.view(np.uint32) >> 16).astype("<u2").tofile(f"h-bf16.{side}.raw")
    specs[side].append(f"bf16:bf16:{n}:file=h-bf16.{side}.raw")
open("h-ref.specs", "w").write("\n".join(specs["r"]) + "\n")
open("h-cand.specs", "w").write("\n".join(specs["c"]) + "\n")
EOF
    tr '\n' '\0' < h-ref.specs | xargs -0 make-golden h-ref.h5 || notok hist-make-ref
    tr '\n' '\0' < h-cand.specs | xargs -0 make-golden h-cand.h5 || notok hist-make-cand
    expect_exit diffhist-html 1 golden-diff --tier kernel --atol 1e-3 --rtol 0 --json h.json \
        --html h.html h-ref.h5 h-cand.h5
    if [ -z "$CHROME" ]; then
        echo "ok html-diffhist-browser # skip chromium not installed (ci/install-deps installs it)"
        return
    fi
    # the first tensor on load, then the select switched (through the page's #hist=K hook)
    for k in 0 3; do
        _prof=$(mktemp -d)
        timeout 90 "$CHROME" --headless --no-sandbox --disable-gpu --disable-background-networking \
            --disable-component-update --disable-sync --no-first-run --user-data-dir="$_prof" \
            --virtual-time-budget=10000 --dump-dom "file://$(pwd)/h.html#hist=$k" > "h$k.dom" 2>/dev/null \
            || notok "diffhist-browser-$k" "chromium failed"
        rm -rf "$_prof"
        "$PYTHON" "$CHECK" diffhist "h$k.dom" h.json h-ref.h5 h-cand.h5 "$k" 2>&1 |
            sed "s/^    //; s/html-diffhist-/html-diffhist$k-/"
    done
}
diff_histogram_block

# dag-check --baseline: the page names the baseline file and the removed syncs, and marks each
# race new or not with the removals that expose it (the example graphs' removal of bar0)
G="$GOLDEN_ROOT/tests/data/graphs"
expect_exit dagbase-html 1 dag-check --baseline "$G/raw-across-chips-base.json" \
    "$G/raw-across-chips-cand.json" --json base.rep.json --html base.html
expect_grep dagbase-names-baseline "<th>baseline</th><td><code>[^<]*raw-across-chips-base.json</code> \(0 race" base.html
expect_grep dagbase-names-removed "<th>removed syncs \(1\)</th><td class=\"removed\"><code>bar0</code>" base.html
expect_grep dagbase-new-count "1 race\(s\), 0 alias\(es\)</span> the baseline does not have" base.html
expect_grep dagbase-exposed-column "<th[^>]*>exposed by</th>" base.html
expect_grep dagbase-no-empty-alias-table "No live alias in the memory plan" base.html
# heatmaps: a perceptual scale (viridis ends) with a colour bar and the expert numbers
# (p2.html: 16 experts on 2 layers; the lowest count is the dark end, the highest the bright one)
expect_grep profile-viridis-low 'fill="rgb\(68,1,84\)"' p2.html
expect_grep profile-viridis-high 'fill="rgb\(253,231,37\)"' p2.html
expect_grep profile-colour-bar 'class="scale" data-lo=' p2.html
expect_grep profile-expert-numbers 'class="collabel"[^>]*>15</text>' p2.html

# the layer chart for names that carry a layer index in other conventions (transformer.h.N.mlp,
# blocks.N.attn.out, model.layers.N): three layers of each kind, one point a layer
if /usr/bin/python3 -c 'import numpy' 2>/dev/null; then
    /usr/bin/python3 - <<'PY'
import numpy as np
r = np.random.default_rng(1)
a, b = {}, {}
for i in range(3):
    for n in ("transformer.h.%d.mlp" % i, "blocks.%d.attn.out" % i, "model.layers.%d" % i):
        x = r.standard_normal((4, 8)).astype(np.float32)
        a[n] = x
        b[n] = x * (1 + 1e-3 * i)
np.savez("lk-a.npz", **a)
np.savez("lk-b.npz", **b)
PY
    expect_exit layer-names-html 1 golden-diff --html lk.html lk-a.npz lk-b.npz
    for k in "attention output" "MoE output" "residual stream"; do
        expect_grep "layer-names-chart-$k" "data-series=\"$k\" data-points=\"3\"" lk.html
    done
else
    echo "ok layer-names-html # skip no numpy"
fi
