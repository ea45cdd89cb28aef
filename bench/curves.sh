# Cost curves (issue 35): golden-diff, golden-dump, dag-check and exp-gate, each at three sizes
# a decade apart, so that a super-linear step shows. Each row: the size, the wall seconds
# (fastest of three runs), and the growth against the row above (10x the input should be
# about 10x the time once fixed costs are paid). About 30 s in all on an idle 2-core machine.
# Figures, not asserts. GOLDEN_BENCH_CURVE_SCALE=10 moves every size one decade up.
set -u
scale=${GOLDEN_BENCH_CURVE_SCALE:-1}
PY=/usr/bin/python3
now() { date +%s.%N; }
# best CMD...: the fastest wall time of three runs of CMD (an exit status above 1 is a failure)
best() {
    _b=""
    for _i in 1 2 3; do
        _t0=$(now); "$@" > /dev/null 2> curve.err; _rc=$?; _t1=$(now)
        if [ "$_rc" -gt 1 ]; then echo "curves: $* failed: $(head -c 300 curve.err)" >&2; return 1; fi
        _b=$(awk -v a="$_t0" -v b="$_t1" -v m="$_b" 'BEGIN { t = b - a; print (m == "" || t < m) ? t : m }')
    done
    echo "$_b"
}
prev=""
# row TOOL SIZE UNIT SECONDS: one line of a curve, with the growth from the previous size
row() {
    awk -v tool="$1" -v n="$2" -v unit="$3" -v t="$4" -v p="$prev" 'BEGIN {
        g = (p != "" && p > 0) ? sprintf("%.1fx the time for 10x", t / p) : ""
        printf "  %-12s %12d %-9s %8.3f s  %s\n", tool, n, unit, t, g }'
    prev=$4
}
echo "tool                 size unit       wall (best of 3)"

# golden-diff: two goldens of one f32 tensor with noise, every metric
prev=""
for n in 100000 1000000 10000000; do
    n=$((n * scale))
    make-golden a.h5 "t:f32:$n:rand=1,-4,4" > /dev/null && \
        make-golden b.h5 "t:f32:$n:rand=1,-4,4;noise=2,0.001" > /dev/null || { echo "make-golden failed"; exit 1; }
    t=$(best golden-diff a.h5 b.h5) || exit 1
    row golden-diff "$n" "f32 el." "$t"
    rm -f a.h5 b.h5
done

# golden-dump: one layer of raw dumps (a bf16 and an f32 tensor of the given bytes each)
prev=""
for n in 400000 4000000 40000000; do
    n=$((n * scale))
    rm -rf d && dump-gen d 1 "$n" > /dev/null || { echo "dump-gen failed"; exit 1; }
    t=$(best sh -c 'rm -f g.h5 && golden-dump -o g.h5 d') || exit 1
    row golden-dump "$((2 * n))" bytes "$t"
    rm -rf d g.h5
done

# dag-check: the realistic two-chip graph (tests/tools/gen-graph), about four accesses an op
prev=""
for n in 1000 10000 100000; do
    n=$((n * scale))
    gen-graph --ops "$n" -o g.json 2> /dev/null || { echo "gen-graph failed"; exit 1; }
    t=$(best dag-check g.json) || exit 1
    row dag-check "$n" ops "$t"
    rm -f g.json
done

# exp-gate summarize over raw request lines (bench/gen-exp-gate-folder.py), one bootstrap
# resample (the resampling's own cost is linear in the resamples, see bench/exp-gate.sh)
prev=""
for n in 1000 10000 100000; do
    n=$((n * scale))
    $PY "$GOLDEN_ROOT/bench/gen-exp-gate-folder.py" "$GOLDEN_ROOT/examples/experiment/OP-MOE-0001" \
        D "$n" > /dev/null || { echo "gen-exp-gate-folder failed"; exit 1; }
    t=$(best exp-gate summarize --force --bootstrap 1 D/OP-MOE-0001) || exit 1
    row exp-gate "$n" lines "$t"
    rm -rf D
done
