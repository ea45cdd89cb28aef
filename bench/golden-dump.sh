# make bench: golden-dump of about 1 GiB of bf16/f32 tensors, as raw dumps with an index, as .npy
# files (bf16 saved as uint16, read with --dtype) and as one .safetensors file, each against
# copying the same bytes into one file and flushing it to disk (golden-dump flushes its output
# too): issue 10's target is at most 1.5x the copy. The raw set is also hashed by sha256sum.
# Commands alternate (copy, dump, copy, dump, ...) from a warm page cache after a sync; the
# fastest of three runs of each counts, so a neighbour's burst on this shared machine hits both.
set -u
layers=${GOLDEN_BENCH_LAYERS:-8}
bytes=${GOLDEN_BENCH_TENSOR_BYTES:-67108864}   # 8 layers x 2 tensors x 64 MiB = 1 GiB
now() { date +%s.%N; }
# time1 CMD...: wall seconds of one run of CMD after a sync
time1() {
    sync
    _t0=$(now); "$@" > /dev/null || { echo "golden-dump bench: $* failed" >&2; return 1; }; _t1=$(now)
    awk -v a="$_t0" -v b="$_t1" 'BEGIN { print b - a }'
}
minof() { awk -v a="$1" -v b="$2" 'BEGIN { print (a == "" || b < a) ? b : a }'; }
# pair VAR_A VAR_B "CMD A" "CMD B": both three times in turn, the fastest of each
pair() {
    _a=""; _b=""
    for _i in 1 2 3; do
        _t=$(eval "time1 $3") || exit 1; _a=$(minof "$_a" "$_t")
        _t=$(eval "time1 $4") || exit 1; _b=$(minof "$_b" "$_t")
    done
    eval "$1=\$_a; $2=\$_b"
}
# Both sides first delete their previous output, so both write into pages just freed: replacing
# a 1 GiB file atomically (golden-dump --force keeps the old one until the new one is whole) made
# the kernel's copy into fresh page-cache pages up to 4x slower on this virtual machine.
copy_flush() { out=$1; shift; rm -f "$out"; cat "$@" > "$out" && sync "$out"; }
dump_fresh() { rm -f g.h5; golden-dump "$@" -o g.h5; }
for f in raw npy safetensors; do
    dump-gen "$f" "$layers" "$bytes" "$f" || { echo "golden-dump bench: dump-gen $f failed"; exit 1; }
done
bf16_opts=""
for l in $(seq 0 $((layers - 1))); do bf16_opts="$bf16_opts --dtype layers/$l/attn/out=bf16"; done
total=$(cat raw/*.bin | wc -c)   # also warms the page cache
cat npy/layers/*/*/out.npy safetensors/model.safetensors > /dev/null
pair c_raw g_raw "copy_flush copy.out raw/*.bin" "dump_fresh raw"
pair c_npy g_npy "copy_flush copy.out npy/layers/*/*/out.npy" "dump_fresh $bf16_opts npy"
pair c_st g_st "copy_flush copy.out safetensors/model.safetensors" "dump_fresh safetensors"
s=""; for _i in 1 2; do s=$(minof "$s" "$(time1 sha256sum raw/*.bin)") || exit 1; done
g1=$(GOLDEN_THREADS=1 time1 dump_fresh raw) || exit 1
golden-dump --force -o g.h5 raw > /dev/null
v=$(time1 golden-dump --verify g.h5) || exit 1
rm -f copy.out
# the hashes must agree: raw little-endian dumps are canonical bytes
golden-dump --list g.h5 > list.txt
sha256sum raw/*.bin | while read -r h f; do
    grep -q " $h " list.txt || { echo "golden-dump bench: $f hash differs"; exit 1; }
done || exit 1
awk -v n="$((layers * 2))" -v b="$total" -v s="$s" -v g1="$g1" -v v="$v" \
    -v cr="$c_raw" -v gr="$g_raw" -v cn="$c_npy" -v gn="$g_npy" -v cs="$c_st" -v gs="$g_st" 'BEGIN {
    mib = b / 1048576
    printf "%.0f MiB of bf16/f32 tensors (%d tensors), fastest of 3, side by side\n", mib, n
    printf "%-46s %7.2f s %6.0f MiB/s\n", "raw: copy into one file + flush", cr, mib / cr
    printf "%-46s %7.2f s %6.0f MiB/s   %.2fx the copy\n", "raw: golden-dump (hash+stats+HDF5+flush)", gr, mib / gr, gr / cr
    printf "%-46s %7.2f s %6.0f MiB/s\n", ".npy: copy into one file + flush", cn, mib / cn
    printf "%-46s %7.2f s %6.0f MiB/s   %.2fx the copy\n", ".npy: golden-dump", gn, mib / gn, gn / cn
    printf "%-46s %7.2f s %6.0f MiB/s\n", ".safetensors: copy + flush", cs, mib / cs
    printf "%-46s %7.2f s %6.0f MiB/s   %.2fx the copy\n", ".safetensors: golden-dump", gs, mib / gs, gs / cs
    printf "%-46s %7.2f s %6.0f MiB/s\n", "sha256sum raw (hash only)", s, mib / s
    printf "%-46s %7.2f s %6.0f MiB/s\n", "golden-dump raw, GOLDEN_THREADS=1", g1, mib / g1
    printf "%-46s %7.2f s %6.0f MiB/s\n", "golden-dump --verify (re-read, hash, stats)", v, mib / v
    printf "ratio sha256sum / golden-dump: %.2fx (above 1 = golden-dump faster)\n", s / gr
    printf "ratio golden-dump / flushed copy: raw %.2fx, .npy %.2fx, .safetensors %.2fx (target: at most 1.5x)\n", gr / cr, gn / cn, gs / cs
}'
