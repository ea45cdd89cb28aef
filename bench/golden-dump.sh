# make bench: golden-dump of about 1 GiB of raw bf16/f32 dumps (+ index) against sha256sum of
# the same files. golden-dump also converts, computes statistics and writes HDF5.
# Each side runs twice from a warm page cache after a sync; the faster run counts.
set -u
layers=${GOLDEN_BENCH_LAYERS:-8}
bytes=${GOLDEN_BENCH_TENSOR_BYTES:-67108864}   # 8 layers x 2 tensors x 64 MiB = 1 GiB
now() { date +%s.%N; }
# best TIMEVAR CMD...: run CMD twice, keep the shorter wall time in TIMEVAR
best() {
    _var=$1; shift; _best=""
    for _i in 1 2; do
        sync
        _t0=$(now); "$@" > /dev/null || { echo "golden-dump bench: $* failed"; exit 1; }; _t1=$(now)
        _best=$(awk -v a="$_t0" -v b="$_t1" -v c="$_best" 'BEGIN { d = b - a; print (c == "" || d < c) ? d : c }')
    done
    eval "$_var=\$_best"
}
dump-gen data "$layers" "$bytes" || { echo "golden-dump bench: dump-gen failed"; exit 1; }
total=$(cat data/*.bin | wc -c)   # also warms the page cache
best s sha256sum data/*.bin
# the floor of issue 10: copying the same bytes into one file (golden-dump's target: 1.5x)
copy_all() { cat data/*.bin > copy.out; }
best c copy_all
best g golden-dump --force -o g.h5 data
GOLDEN_THREADS=1 best g1 golden-dump --force -o g.h5 data
golden-dump --force -o g.h5 data > /dev/null
best v golden-dump --verify g.h5
rm -f copy.out
# the hashes must agree: raw little-endian dumps are canonical bytes
golden-dump --list g.h5 > list.txt
sha256sum data/*.bin | while read -r h f; do
    grep -q " $h " list.txt || { echo "golden-dump bench: $f hash differs"; exit 1; }
done || exit 1
awk -v n="$((layers * 2))" -v b="$total" -v s="$s" -v c="$c" -v g="$g" -v g1="$g1" -v v="$v" 'BEGIN {
    mib = b / 1048576
    printf "%.0f MiB of raw bf16/f32 dumps (%d tensors)\n", mib, n
    printf "%-44s %7.2f s %6.0f MiB/s\n", "cat into one file (copy only)", c, mib / c
    printf "%-44s %7.2f s %6.0f MiB/s\n", "sha256sum (hash only)", s, mib / s
    printf "%-44s %7.2f s %6.0f MiB/s\n", "golden-dump (hash+stats+HDF5 write)", g, mib / g
    printf "%-44s %7.2f s %6.0f MiB/s\n", "golden-dump, GOLDEN_THREADS=1", g1, mib / g1
    printf "%-44s %7.2f s %6.0f MiB/s\n", "golden-dump --verify (re-read, hash, stats)", v, mib / v
    printf "ratio sha256sum / golden-dump: %.2fx (above 1 = golden-dump faster)\n", s / g
    printf "ratio golden-dump / copy: %.2fx (target: at most 1.5x)\n", g / c
}'
