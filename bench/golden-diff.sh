# golden-diff speed and memory, side by side with what users would run instead:
# `h5diff -d` and numpy through h5py computing the same metrics (chunked, float64).
# Cases: one 256 MiB f32 tensor (also against two parallel `openssl dgst` and `cat`), one
# 256 MiB bf16 tensor, 1,000 and 10,000 small tensors, and a 2 GiB
# f32 tensor for peak RSS (GOLDEN_BENCH_BIG=0 skips it). Prints ratios; asserts nothing.
set -u
PY=""
/usr/bin/python3 -c 'import numpy, h5py' 2>/dev/null && PY=/usr/bin/python3
TIME=""
[ -x /usr/bin/time ] && TIME=/usr/bin/time

# run LABEL CMD...: wall seconds, CPU seconds and peak RSS (KiB) into $wall $cpu $rss;
# the best of $REPEAT runs (short cases are repeated: one run of 0.3 s is mostly noise)
REPEAT=1
run() {
    label=$1; shift
    best_w=""; _i=0
    while [ $_i -lt $REPEAT ]; do
        run_once "$@"
        if [ -z "$best_w" ] || awk "BEGIN{exit !($wall < $best_w)}"; then
            best_w=$wall; best_c=$cpu; best_r=$rss
        fi
        _i=$((_i + 1))
    done
    wall=$best_w; cpu=$best_c; rss=$best_r
    echo "  $label: ${wall} s wall, ${cpu} s CPU, ${rss} KiB peak RSS$( [ "$REPEAT" -gt 1 ] && echo " (best of $REPEAT)")"
}
run_once() {
    if [ -n "$TIME" ]; then
        $TIME -f '%e %U %S %M' -o t.txt "$@" > /dev/null 2> run.err
        read -r wall u s rss <<TEOF
$(tail -n 1 t.txt)
TEOF
        cpu=$(awk "BEGIN{print $u + $s}")
    else
        t0=$(date +%s.%N); "$@" > /dev/null 2> run.err; t1=$(date +%s.%N)
        wall=$(awk "BEGIN{print $t1 - $t0}"); cpu="?"; rss="?"
    fi
}
ratio() { awk "BEGIN{ if ($2 > 0) printf \"%.2f\", $1 / $2; else print \"-\" }"; }

cat > np_metrics.py <<'PYEOF'
# The same metrics as golden-diff (max_abs and where, mean_abs, rmse, max_rel, cosine,
# mismatches, non-finite counts) in float64, reading 4 Mi elements at a time.
import sys, h5py, numpy as np
names = []
if sys.argv[1].endswith(".npy"):  # np.load memory-mapped: what a numpy user runs on .npy
    ref, cand = {"t": np.load(sys.argv[1], mmap_mode="r")}, {"t": np.load(sys.argv[2], mmap_mode="r")}
    names = ["t"]
else:
    ref, cand = h5py.File(sys.argv[1], "r"), h5py.File(sys.argv[2], "r")
    ref.visititems(lambda n, o: names.append(n) if isinstance(o, h5py.Dataset) else None)
for name in names:
    a, b = ref[name], cand[name]
    rows = a.shape[0] if a.ndim else 1
    per = max(1, (1 << 22) // max(1, a.size // max(rows, 1)))
    mx, arg, sa, ss, dot, nr, nc, mr, mism, bad, seen = -1.0, -1, 0.0, 0.0, 0.0, 0.0, 0.0, -1.0, 0, 0, 0
    for start in range(0, rows, per):
        r = np.asarray(a[start:start + per] if a.ndim else a[()], dtype=np.float64).reshape(-1)
        c = np.asarray(b[start:start + per] if b.ndim else b[()], dtype=np.float64).reshape(-1)
        fin = np.isfinite(r) & np.isfinite(c)
        bad += int((~fin).sum())
        rf, cf = r[fin], c[fin]
        d = np.abs(cf - rf)
        if d.size:
            k = int(d.argmax())
            if d[k] > mx:
                mx, arg = float(d[k]), seen + k
            sa += float(d.sum()); ss += float(d @ d)
            dot += float(rf @ cf); nr += float(rf @ rf); nc += float(cf @ cf)
            mr = max(mr, float((d / np.maximum(np.abs(rf), 1e-6)).max()))
            mism += int((d > 1e-5 + 1.3e-6 * np.abs(rf)).sum())
        seen += r.size
    cos = dot / (np.sqrt(nr) * np.sqrt(nc)) if nr and nc else 1.0
PYEOF

compare_all() {
    case_name=$1 a=$2 b=$3
    echo "$case_name"
    cat "$a" "$b" > /dev/null   # every tool starts from a warm page cache
    run "golden-diff (2 threads)" golden-diff -q "$a" "$b"; gw=$wall; gc=$cpu; gr=$rss
    run "golden-diff (1 thread) " golden-diff -q -j 1 "$a" "$b"; g1=$wall
    run "h5diff -d 0.01        " h5diff -d 0.01 "$a" "$b"; hw=$wall; hc=$cpu
    if [ -n "$PY" ]; then run "numpy via h5py        " "$PY" np_metrics.py "$a" "$b"; nw=$wall; else nw=0; fi
    echo "  ratios: h5diff/golden-diff $(ratio "$hw" "$gw") wall, $(ratio "$hc" "$gc") CPU;" \
         "numpy/golden-diff $(ratio "$nw" "$gw") wall; 1 thread/2 threads $(ratio "$g1" "$gw");" \
         "golden-diff CPU/wall $(ratio "$gc" "$gw")"
}

N=67108864   # 256 MiB of f32
make-golden a32.h5 "t:f32:8192x8192:rand=1,-4,4" && \
make-golden b32.h5 "t:f32:8192x8192:rand=1,-4,4;noise=2,0.001" || { echo "generation failed"; exit 1; }
compare_all "256 MiB f32 tensor" a32.h5 b32.h5
# the floors of issue 35: SHA-256 of both files on both cores (what a verified run must do at
# least), and reading both (what --trust-hashes must do at least)
if command -v openssl > /dev/null; then
    echo "256 MiB f32 tensor against the hashing and reading floors"
    run "golden-diff (verified)       " golden-diff -q a32.h5 b32.h5; gv=$wall; gvc=$cpu
    run "golden-diff --trust-hashes   " golden-diff -q --trust-hashes a32.h5 b32.h5; gt=$wall; gtc=$cpu
    run "2 x openssl dgst in parallel " sh -c 'openssl dgst -sha256 a32.h5 > /dev/null &
        openssl dgst -sha256 b32.h5 > /dev/null; wait'; ow=$wall; oc=$cpu
    run "cat of both files            " cat a32.h5 b32.h5; cw=$wall
    echo "  ratios: verified/openssl $(ratio "$gv" "$ow") wall, $(ratio "$gvc" "$oc") CPU (target <= 1.3);" \
         "--trust-hashes/cat $(ratio "$gt" "$cw") wall (target <= 2); --trust-hashes CPU $gtc s"
fi
if [ -n "$PY" ]; then
    # the same tensors as .npy (issue 29): golden-diff reads them directly, no golden-dump
    "$PY" -c 'import sys, h5py, numpy as np
for s, d in (("a32.h5", "a32.npy"), ("b32.h5", "b32.npy")):
    np.save(d, h5py.File(s, "r")["t"][()])'
    echo "256 MiB f32 tensor as .npy (golden-diff a.npy b.npy)"
    cat a32.npy b32.npy > /dev/null
    run "golden-diff on goldens  " golden-diff -q a32.h5 b32.h5; gh=$wall
    run "golden-diff a.npy b.npy " golden-diff -q --tier layer a32.npy b32.npy; gn=$wall; gnr=$rss
    run "numpy (np.load mmap)    " "$PY" np_metrics.py a32.npy b32.npy; nn=$wall
    echo "  ratios: npy/goldens $(ratio "$gn" "$gh") wall; numpy/golden-diff on .npy $(ratio "$nn" "$gn") wall;" \
         "peak RSS on .npy $(awk "BEGIN{printf \"%.1f\", $gnr / 1024}") MiB"
    rm -f a32.npy b32.npy
fi
rm -f a32.h5 b32.h5

make-golden a16.h5 "t:bf16:8192x16384:rand=1,-4,4" && \
make-golden b16.h5 "t:bf16:8192x16384:rand=1,-4,4;noise=2,0.01" || { echo "generation failed"; exit 1; }
compare_all "256 MiB bf16 tensor" a16.h5 b16.h5
rm -f a16.h5 b16.h5

specs_a=""; specs_b=""
i=0
while [ $i -lt 1000 ]; do
    specs_a="$specs_a layers/$i/out:f32:16x256:rand=$i,-1,1"
    specs_b="$specs_b layers/$i/out:f32:16x256:rand=$i,-1,1;noise=$i,0.0001"
    i=$((i + 1))
done
# shellcheck disable=SC2086
make-golden sa.h5 $specs_a && make-golden sb.h5 $specs_b || { echo "generation failed"; exit 1; }
REPEAT=5 compare_all "1,000 small f32 tensors (16 KiB each)" sa.h5 sb.h5
REPEAT=1
rm -f sa.h5 sb.h5

# 10,000 tensors of 1 KiB (issue 35; GOLDEN_BENCH_MANY=0 skips it: make-golden itself takes
# minutes to write 10,000 tensors)
if [ "${GOLDEN_BENCH_MANY:-1}" != 0 ]; then
    specs_a=""; specs_b=""
    i=0
    while [ $i -lt 10000 ]; do
        specs_a="$specs_a layers/$i/out:f32:256:rand=$i,-1,1"
        specs_b="$specs_b layers/$i/out:f32:256:rand=$i,-1,1;noise=$i,0.0001"
        i=$((i + 1))
    done
    # shellcheck disable=SC2086
    make-golden ma.h5 $specs_a && make-golden mb.h5 $specs_b || { echo "generation failed"; exit 1; }
    REPEAT=3 compare_all "10,000 small f32 tensors (1 KiB each)" ma.h5 mb.h5
    REPEAT=1
    rm -f ma.h5 mb.h5
fi

if [ "${GOLDEN_BENCH_BIG:-1}" != 0 ]; then
    make-golden big_a.h5 "t:f32:536870912:rand=1,-4,4" && \
    make-golden big_b.h5 "t:f32:536870912:rand=1,-4,4;noise=2,0.001" || { echo "generation failed"; exit 1; }
    echo "2 GiB f32 tensor (memory bound check: peak RSS must stay under 256 MiB)"
    run "golden-diff (2 threads)" golden-diff -q big_a.h5 big_b.h5
    echo "  peak RSS $(awk "BEGIN{printf \"%.1f\", $rss / 1024}") MiB for $(awk "BEGIN{printf \"%.0f\", 2 * 2048}") MiB of input"
    rm -f big_a.h5 big_b.h5
fi
echo "($N f32 elements per 256 MiB case; load from other processes inflates wall times)"
