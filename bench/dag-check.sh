# dag-check at scale: the realistic two-chip 48-layer graph at 10^4, 10^5 and 10^6 ops (about
# four accesses per op). Prints load/check seconds, the parse share, peak memory and the
# 10^5 -> 10^6 growth ratio. Figures, not asserts; the machine may be shared.
set -u
TIME=""
[ -x /usr/bin/time ] && TIME=/usr/bin/time
secs() { date +%s.%N; }
# run LABEL ENV... -- ARGS: one dag-check run; prints one row and leaves load/check/total/rss
run() {
    label=$1; shift
    t0=$(secs)
    if [ -n "$TIME" ]; then
        env "$@" $TIME -f '%M' -o rss.txt dag-check --timings g.json > out.txt 2> err.txt
    else
        env "$@" dag-check --timings g.json > out.txt 2> err.txt; echo 0 > rss.txt
    fi
    rc=$?
    t1=$(secs)
    load=$(sed -n 's/.*load \([0-9.]*\) s.*/\1/p' err.txt)
    check=$(sed -n 's/.*check \([0-9.]*\) s.*/\1/p' err.txt)
    total=$(echo "$t0 $t1" | awk '{printf "%.2f", $2 - $1}')
    rss=$(awk '{printf "%.0f", $1 / 1024}' rss.txt)
    share=$(echo "$load $total" | awk '{ if ($2 > 0) printf "%.0f%%", 100 * $1 / $2; else print "-" }')
    printf '%-9s %-8s %9s %9s %8s %8s %7s %8s  exit %s\n' "$n" "$label" "$ops" "$acc" "$load" \
        "$check" "$total" "${rss}MB" "$rc"
    printf '          parse share of total: %s\n' "$share"
}
printf '%-9s %-8s %9s %9s %8s %8s %7s %8s\n' target loader ops accesses load_s check_s total_s peak
for n in 10000 100000 1000000; do
    gen-graph --ops "$n" -o g.json 2> gen.txt || { echo "gen-graph failed"; exit 1; }
    ops=$(sed -n 's/.*: \([0-9]*\) ops, .*/\1/p' gen.txt)
    acc=$(sed -n 's/.*ops, \([0-9]*\) accesses.*/\1/p' gen.txt)
    run default GOLDEN_BENCH=1
    eval "total_default_$n=$total"
    run stream GOLDEN_GRAPH_STREAM_BYTES=0
    eval "total_stream_$n=$total"
    t0=$(secs); dag-check --redundant g.json > /dev/null 2>&1; t1=$(secs)
    echo "$t0 $t1 $n" | awk '{printf "          --redundant at %d ops: %.2f s\n", $3, $2 - $1}'
    if [ "$n" -eq 100000 ]; then
        gen-graph --ops "$n" --race -o race.json 2> /dev/null
        t0=$(secs); dag-check --baseline g.json race.json > /dev/null 2>&1; t1=$(secs)
        echo "$t0 $t1" | awk '{printf "          --baseline at 10^5 (one dropped wait): %.2f s\n", $2 - $1}'
        t0=$(secs); dag-check --all g.json > /dev/null 2>&1; t1=$(secs)
        echo "$t0 $t1" | awk '{printf "          --all at 10^5: %.2f s\n", $2 - $1}'
        t0=$(secs); dag-check --redundant race.json > /dev/null 2>&1; t1=$(secs)
        echo "$t0 $t1" | awk '{printf "          --redundant at 10^5, racy (one dropped wait): %.2f s\n", $2 - $1}'
    fi
    rm -f g.json race.json
done
echo "$total_default_100000 $total_default_1000000 $total_stream_100000 $total_stream_1000000" |
    awk '{printf "10^5 -> 10^6 time ratio: %.1fx default loader, %.1fx streaming loader (10x the ops)\n", $2 / $1, $4 / $3}'
