# Hash an experiment folder of 2 GiB in many files: manifest-verify --seal (both cores, through
# golden_sha256_files) against sha256sum over the same files. Prints seconds and the ratio.
set -u
EX="$GOLDEN_ROOT/examples/experiment/OP-MOE-0001"
MB=${GOLDEN_BENCH_MV_MB:-2048}
cp -R "$EX" OP-MOE-0001 && rm -f OP-MOE-0001/SHA256SUMS
mkdir -p OP-MOE-0001/golden/tensors
# 64 files of MB/64 MiB each (32 MiB at the default 2 GiB), written once from /dev/urandom
per=$((MB / 64))
i=0
while [ "$i" -lt 64 ]; do
    head -c $((per * 1048576)) /dev/urandom > "OP-MOE-0001/golden/tensors/t$i.bin"
    i=$((i + 1))
done
sync
# warm the page cache for both contenders alike
cat OP-MOE-0001/golden/tensors/* > /dev/null
now() { date +%s.%N; }
t0=$(now)
manifest-verify --seal OP-MOE-0001 > mv.out || { cat mv.out; exit 1; }
t1=$(now)
(cd OP-MOE-0001 && find . -type f ! -name SHA256SUMS -print0 | xargs -0 sha256sum > ../ref.sums)
t2=$(now)
n=$(wc -l < OP-MOE-0001/SHA256SUMS)
awk -v a="$t0" -v b="$t1" -v c="$t2" -v mb="$MB" -v n="$n" 'BEGIN {
    mv = b - a; ss = c - b
    printf "manifest-verify --seal: %d files, %d MiB: %.2f s (%.0f MiB/s)\n", n, mb, mv, mb / mv
    printf "sha256sum (one core):   %.2f s (%.0f MiB/s)\n", ss, mb / ss
    printf "ratio sha256sum / manifest-verify: %.2fx\n", ss / mv }'
# same digests as sha256sum (a sanity check, not a timing)
sed 's|  \./|  |' ref.sums | LC_ALL=C sort -k2 > a.txt
LC_ALL=C sort -k2 OP-MOE-0001/SHA256SUMS > b.txt
cmp -s a.txt b.txt && echo "digests agree with sha256sum" || echo "DIGESTS DIFFER"
rm -rf OP-MOE-0001
