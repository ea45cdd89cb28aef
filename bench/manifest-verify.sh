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
manifest-verify -j 1 --seal OP-MOE-0001 > mv.out || { cat mv.out; exit 1; }
t1=$(now)
manifest-verify --seal --force OP-MOE-0001 > mv.out || { cat mv.out; exit 1; }
t2=$(now)
(cd OP-MOE-0001 && find . -type f ! -name SHA256SUMS -print0 | xargs -0 sha256sum > ../ref.sums)
t3=$(now)
n=$(wc -l < OP-MOE-0001/SHA256SUMS)
awk -v a="$t0" -v b="$t1" -v c="$t2" -v d="$t3" -v mb="$MB" -v n="$n" 'BEGIN {
    one = b - a; all = c - b; ss = d - c
    printf "files: %d, %d MiB in all\n", n, mb
    printf "sha256sum (one process):         %6.2f s  %5.0f MiB/s\n", ss, mb / ss
    printf "manifest-verify --seal -j 1:     %6.2f s  %5.0f MiB/s\n", one, mb / one
    printf "manifest-verify --seal (all cores): %6.2f s  %5.0f MiB/s\n", all, mb / all
    printf "ratio sha256sum / manifest-verify: %.2fx (one thread %.2fx; threads add %.2fx)\n", ss / all, ss / one, one / all }'
# same digests as sha256sum (a sanity check, not a timing)
sed 's|  \./|  |' ref.sums | LC_ALL=C sort -k2 > a.txt
LC_ALL=C sort -k2 OP-MOE-0001/SHA256SUMS > b.txt
cmp -s a.txt b.txt && echo "digests agree with sha256sum" || echo "DIGESTS DIFFER"
rm -rf OP-MOE-0001
