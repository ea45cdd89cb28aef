# make bench: golden-dump of about 1 GiB of raw bf16/f32 dumps (+ index) against sha256sum of
# the same files. golden-dump also converts, computes statistics and writes HDF5.
set -u
layers=${GOLDEN_BENCH_LAYERS:-8}
bytes=${GOLDEN_BENCH_TENSOR_BYTES:-67108864}   # 8 layers x 2 tensors x 64 MiB = 1 GiB
now() { date +%s.%N; }
dump-gen data "$layers" "$bytes" || { echo "golden-dump bench: dump-gen failed"; exit 1; }
total=$(cat data/*.bin | wc -c)
# warm the page cache so that both sides read from memory
cat data/*.bin > /dev/null
t0=$(now); sha256sum data/*.bin > sums.txt; t1=$(now)
golden-dump -o g.h5 data > /dev/null || { echo "golden-dump bench: dump failed"; exit 1; }
t2=$(now)
GOLDEN_THREADS=1 golden-dump -o g1.h5 data > /dev/null || exit 1
t3=$(now)
golden-dump --verify g.h5 > /dev/null || { echo "golden-dump bench: verify failed"; exit 1; }
t4=$(now)
# the hashes must agree: raw little-endian dumps are canonical bytes
golden-dump --list g.h5 > list.txt
while read -r h f; do grep -q " $h " list.txt || { echo "golden-dump bench: $f hash differs"; exit 1; }; done < sums.txt
awk -v b="$total" -v t0="$t0" -v t1="$t1" -v t2="$t2" -v t3="$t3" -v t4="$t4" 'BEGIN {
    mib = b / 1048576; s = t1 - t0; g = t2 - t1; g1 = t3 - t2; v = t4 - t3
    printf "%-42s %8.2f s %8.0f MiB/s\n", "sha256sum (hash only)", s, mib / s
    printf "%-42s %8.2f s %8.0f MiB/s\n", "golden-dump (hash+stats+HDF5, all cores)", g, mib / g
    printf "%-42s %8.2f s %8.0f MiB/s\n", "golden-dump GOLDEN_THREADS=1", g1, mib / g1
    printf "%-42s %8.2f s %8.0f MiB/s\n", "golden-dump --verify", v, mib / v
    printf "ratio sha256sum / golden-dump: %.2fx (above 1 = golden-dump faster)\n", s / g
}'
