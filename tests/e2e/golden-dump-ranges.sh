# golden-dump --ranges (handbook section 16.1): activation ranges per tap and per domain from
# goldens of the calibration run, checked against numpy (np.percentile(|x|, p,
# method="inverted_cdf"), the nearest-rank order statistic the tool computes exactly).
. "$GOLDEN_ROOT/tests/e2e/lib.sh"
PY=/usr/bin/python3
command -v $PY >/dev/null 2>&1 || PY=python3

# Two domains, two cases each, two float taps (one with NaNs, one heavy-tailed; the web one
# with +-inf and -0 in f64) and an integer tensor that is skipped; sizes make no percentile
# rank an exact product (37 x 61 x 2 = 4514 minus NaNs).
$PY - <<'PY'
import numpy as np, os
rng = np.random.default_rng(7)
for dom, scale in (("code", 1.0), ("numeric", 3.0), ("web", 2.0)):
    for case in ("c0", "c1"):
        d = f"{dom}/cases/{case}/layers/0"; os.makedirs(d, exist_ok=True)
        a = (rng.standard_normal((37, 61)) * scale).astype(np.float32)
        a[0, 0] = np.nan
        np.save(f"{d}/attn_out.npy", a)
        b = rng.standard_t(3, (53, 29)).astype(np.float32) * scale
        if dom == "web":
            b = b.astype(np.float64); b[1, 1] = np.inf; b[2, 2] = -np.inf; b[3, 3] = -0.0
        np.save(f"{d}/mlp_out.npy", b)
        np.save(f"{dom}/cases/{case}/tokens.npy", np.arange(5, dtype=np.int32))
PY
golden-dump -o code.h5 code >/dev/null && golden-dump -o numeric.h5 numeric >/dev/null &&
    golden-dump -o web.h5 --meta domain=web web >/dev/null && ok "goldens written" || notok "goldens written"

# check FILE THRESHOLD: every row against numpy over the .npy files of its domain and tap
check() {
    $PY - "$1" "$2" <<'PY'
import numpy as np, json, glob, sys
r = json.load(open(sys.argv[1])); thr = float(sys.argv[2]); bad = []
def v(x):
    return float(x)  # "inf" and "-inf" strings included
seen = set()
for row in r["taps"]:
    seen.add((row["tap"], row["domain"]))
    files = sorted(glob.glob(f"{row['domain']}/cases/*/{row['tap']}.npy"))
    xs = np.concatenate([np.load(f).ravel().astype(np.float64) for f in files])
    nan = int(np.isnan(xs).sum()); xs = xs[~np.isnan(xs)]; a = np.abs(xs)
    want = {"tensors": len(files), "elements": xs.size, "nan": nan, "min": xs.min(), "max": xs.max(),
            "outliers": int((a > thr).sum()), "outlier_share": (a > thr).sum() / xs.size}
    for k, p in (("abs_p99", 99), ("abs_p99_9", 99.9), ("abs_p99_99", 99.99)):
        want[k] = np.percentile(a, p, method="inverted_cdf")
    for k, w in want.items():
        if v(row[k]) != w and not (k == "outlier_share" and abs(v(row[k]) - w) < 1e-15):
            bad.append(f"{row['tap']} {row['domain']} {k}: {row[k]} != {w}")
want_rows = {(t, d) for t in ("layers/0/attn_out", "layers/0/mlp_out") for d in r["domains"]}
if seen != want_rows:
    bad.append(f"rows {sorted(seen)}")
print("\n".join(bad) if bad else "same")
PY
}

expect_exit "three domains: exit 0" 0 golden-dump --ranges --json r.json --html r.html code=code.h5 numeric=numeric.h5 web.h5
expect_grep "table: a row per tap and domain" '^layers/0/attn_out +numeric +4512 +2 ' out.txt
expect_grep "table: the threshold said" 'outliers: \|x\| > 6$' out.txt
expect_exit "the report is calculet-activation-ranges/v1" 0 schema-check r.json calculet-activation-ranges/v1
f=$(check r.json 6)
[ "$f" = same ] && ok "min, max, |x| p99/p99.9/p99.99, outliers > 6: numpy's, per tap and domain" || notok "against numpy" "$f"
f=$($PY -c 'import json; r=json.load(open("r.json")); print(r["domains"], len(r["taps"]), [i["skipped_integer"] for i in r["inputs"]])')
[ "$f" = "['code', 'numeric', 'web'] 6 [2, 2, 2]" ] && ok "one row per tap and domain (no mixed average); integer tensors skipped and counted" || notok "rows per tap and domain" "$f"
f=$($PY -c 'import json; r=json.load(open("r.json")); w=[t for t in r["taps"] if t["domain"]=="web" and t["tap"].endswith("mlp_out")][0]; print(w["min"], w["max"], w["abs_p99_99"])')
[ "$f" = "-inf inf inf" ] && ok "infinities kept (as strings), not dropped" || notok "infinities kept" "$f"
n=$(grep -o '<rect class="cell"' r.html | wc -l | tr -d ' ')
# 3 heatmaps x 2 taps x 3 domains = 18, less web's mlp_out max and p99.99 (infinite)
[ "$n" = 16 ] && ok "picture: 3 heatmaps of 2 taps x 3 domains, infinities apart" || notok "picture: 16 cells" "$n"
n=$(grep -c '<p class="infinite">layers/0/mlp_out in web: inf (empty cell above)</p>' r.html)
[ "$n" = 2 ] && ok "picture: the two infinite cells said" || notok "picture: infinite cells said" "$n"
expect_grep "picture: self-contained SVG" '<svg class="chart" data-chart="outlier-share"' r.html

expect_exit "threshold 2" 0 golden-dump --ranges --outlier-threshold 2 --json r2.json code=code.h5 numeric=numeric.h5
f=$(check r2.json 2)
[ "$f" = same ] && ok "--outlier-threshold 2: numpy's counts" || notok "--outlier-threshold 2" "$f"

# two goldens of one domain pool into one row
expect_exit "one domain twice" 0 golden-dump --ranges --json pool.json code=code.h5 code=numeric.h5
f=$($PY -c 'import json; r=json.load(open("pool.json")); print(r["domains"], [(t["tensors"], t["elements"]) for t in r["taps"]])')
[ "$f" = "['code'] [(4, 9024), (4, 6148)]" ] && ok "one domain from two goldens: pooled" || notok "pooled" "$f"

# bounded memory: a tap larger than one read chunk (65536) and larger than the histograms
$PY - <<'PY'
import numpy as np, os
os.makedirs("big/cases/x", exist_ok=True)
np.save("big/cases/x/h.npy", (np.random.default_rng(1).standard_cauchy(300001)).astype(np.float32))
PY
golden-dump -o big.h5 big >/dev/null
expect_exit "big tap" 0 golden-dump --ranges --json big.json big=big.h5
f=$($PY -c '
import json, numpy as np
r = json.load(open("big.json"))["taps"][0]; a = np.abs(np.load("big/cases/x/h.npy").astype(np.float64))
print(all(np.percentile(a, p, method="inverted_cdf") == r[k] for k, p in (("abs_p99", 99), ("abs_p99_9", 99.9), ("abs_p99_99", 99.99))))')
[ "$f" = True ] && ok "300001 elements over several chunks: exact" || notok "big tap exact" "$f"

# could not check: exit 2, one line, no output
expect_exit "no domain: exit 2" 2 golden-dump --ranges --json nd.json code.h5
expect_grep "no domain: named" '^golden-dump: code.h5: no domain: give DOMAIN=FILE' err.txt
expect_absent "no domain: no partial output" nd.json
mkdir -p ints && $PY -c 'import numpy as np; np.save("ints/t.npy", np.arange(9, dtype=np.int64))'
golden-dump -o ints.h5 ints >/dev/null
expect_exit "integer-only golden: exit 2" 2 golden-dump --ranges x=ints.h5
expect_grep "integer-only: says why" 'ints.h5: no float tensor to take ranges of \(1 integer tensor\(s\)\)' err.txt
expect_exit "empty domain: usage" 2 golden-dump --ranges =code.h5
expect_exit "no input: usage" 2 golden-dump --ranges
expect_exit "--html without --ranges: usage" 2 golden-dump --html x.html --list code.h5
expect_exit "--outlier-threshold without --ranges: usage" 2 golden-dump --outlier-threshold 3 --list code.h5
expect_exit "--junit with --ranges: usage" 2 golden-dump --ranges --junit j.xml code=code.h5
expect_exit "negative threshold refused" 2 golden-dump --ranges --outlier-threshold -1 code=code.h5
expect_exit "missing golden: exit 2" 2 golden-dump --ranges code=nope.h5

# The calibration run itself: npu-replay run over each domain's samples (token ids of the tiny
# model), per-layer taps into one golden per domain, then the ranges over them, against h5py +
# numpy reading the same goldens.
expect_exit "make-model tiny" 0 npu-replay make-model --preset tiny --seed 7 -o tiny
# mkcase MANIFEST ID IDS...: a one-token-output prefill case of the given prompt ids
mkcase() {
    _m=$1 _id=$2; shift 2
    mkdir -p "$(dirname "$_m")/inputs"
    _f="inputs/$_id.json"
    echo "[$(echo "$@" | tr ' ' ',')]" > "$(dirname "$_m")/$_f"
    _h=$(sha256sum "$(dirname "$_m")/$_f" | cut -d' ' -f1)
    printf '{"case_id":"%s","phase":"prefill","prompt_tokens":%d,"past_tokens":0,"output_tokens":1,"dataset":"fixed_prompt","rejection":false,"input":{"path":"%s","sha256":"%s"}}\n' \
        "$_id" $# "$_f" "$_h" >> "$_m"
}
mkdir -p cal/code cal/numeric
mkcase cal/code/m.jsonl cal-0000 6 5 17 300 2 99 411 7
mkcase cal/code/m.jsonl cal-0001 40 41 42 43 44
mkcase cal/numeric/m.jsonl cal-0002 1 2 3 4 5 6 7 8 9 10 11
mkcase cal/numeric/m.jsonl cal-0003 100 200 300 400
for dom in code numeric; do
    npu-replay run --model tiny --manifest cal/$dom/m.jsonl --side baseline --golden cal/$dom.h5 \
        --raw cal/$dom-raw.jsonl --warmup 0 --runs 1 > /dev/null 2> err.txt ||
        notok "calibration run $dom" "$(cat err.txt)"
done
expect_exit "ranges over the calibration run" 0 golden-dump --ranges --json cal.json code=cal/code.h5 numeric=cal/numeric.h5
f=$($PY - <<'PY'
import h5py, json, numpy as np
r = json.load(open("cal.json")); want = {}
def walk(dom, path):
    with h5py.File(path, "r") as h:
        def visit(name, obj):
            if isinstance(obj, h5py.Dataset) and obj.dtype.kind == "f":
                tap = name.split("/", 2)[2] if name.startswith("cases/") else name
                want.setdefault((tap, dom), []).append(obj[...].astype(np.float64).ravel())
        h.visititems(visit)
walk("code", "cal/code.h5"); walk("numeric", "cal/numeric.h5")
bad = []
got = {(t["tap"], t["domain"]): t for t in r["taps"]}
if set(got) != set(want):
    bad.append("rows differ: %s" % sorted(set(got) ^ set(want)))
for k, parts in want.items():
    x = np.concatenate(parts); x = x[~np.isnan(x)]; a = np.abs(x); t = got.get(k)
    if t is None:
        continue
    for key, p in (("abs_p99", 99), ("abs_p99_9", 99.9), ("abs_p99_99", 99.99)):
        if float(t[key]) != np.percentile(a, p, method="inverted_cdf"):
            bad.append(f"{k} {key}")
    if float(t["min"]) != x.min() or float(t["max"]) != x.max() or t["outliers"] != int((a > 6).sum()):
        bad.append(f"{k} min/max/outliers")
print("same %d" % len(want) if not bad else "; ".join(bad[:5]))
PY
)
case "$f" in "same "*) [ "${f#same }" -ge 10 ] && ok "calibration run: every tap x domain as numpy ($f rows)" || notok "calibration run: too few taps" "$f" ;;
    *) notok "calibration run: against numpy" "$f" ;; esac
