# Sharded golden-diff (issue 31, docs/scale.md): per-rank throughput at 1 and 2 ranks
# (one thread per rank, so the split is what is measured), the launch cost of mpirun, and the
# merge cost (pack, unpack, merge per tensor, without MPI: tests/tools/diff-merge-bench), and
# manifest-verify --seal of a folder of MB x 4 MiB on 1 and 2 ranks (the hashing shared).
# Needs the MPI build (make MPI=1; make bench builds it when mpicc is there). Asserts nothing.
set -u
MPIBIN=$GOLDEN_ROOT/build-mpi/bin
if ! command -v mpirun >/dev/null 2>&1 || [ ! -x "$MPIBIN/golden-diff" ]; then
    echo "  skipped: no mpirun or no MPI build (make MPI=1)"
    exit 0
fi
/usr/bin/python3 -c 'import numpy' 2>/dev/null || { echo "  skipped: no numpy"; exit 0; }
[ "$(id -u)" -eq 0 ] && export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
MB=${GOLDEN_BENCH_MPI_MB:-32}    # MiB per file, in 8 tensors (short; 128 or more for the docs)
/usr/bin/python3 - "$MB" <<'PY'
import subprocess, sys
import numpy as np
mb = int(sys.argv[1]); rng = np.random.default_rng(1)
n = mb * (1 << 20) // 4 // 8
specs_r, specs_c = [], []
for i in range(8):
    r = rng.standard_normal((n // 1024, 1024)).astype("<f4")
    c = (r + np.float32(1e-6) * rng.standard_normal(r.shape).astype("<f4")).astype("<f4")
    r.tofile(f"r{i}.bin"); c.tofile(f"c{i}.bin")
    specs_r.append(f"layers/{i}/out:f32:{r.shape[0]}x1024:file=r{i}.bin")
    specs_c.append(f"layers/{i}/out:f32:{c.shape[0]}x1024:file=c{i}.bin")
subprocess.run(["make-golden", "--force", "ref.h5"] + specs_r, check=True)
subprocess.run(["make-golden", "--force", "cand.h5"] + specs_c, check=True)
# many small tensors: what the merge costs per tensor
s_r, s_c = [], []
for i in range(2000):
    r = rng.standard_normal((64, 16)).astype("<f4"); r.tofile(f"sr{i}.bin")
    (r + np.float32(1e-6)).astype("<f4").tofile(f"sc{i}.bin")
    s_r.append(f"l/{i:04d}:f32:64x16:file=sr{i}.bin"); s_c.append(f"l/{i:04d}:f32:64x16:file=sc{i}.bin")
subprocess.run(["make-golden", "--force", "small-ref.h5"] + s_r, check=True)
subprocess.run(["make-golden", "--force", "small-cand.h5"] + s_c, check=True)
PY
rm -f ./*.bin
bytes=$((2 * MB * 1048576))
secs() { t0=$(date +%s.%N); "$@" > /dev/null 2> run.err; t1=$(date +%s.%N); awk "BEGIN{print $t1 - $t0}"; }
best() { b=""; for _ in 1 2 3; do s=$(secs "$@"); if [ -z "$b" ] || awk "BEGIN{exit !($s < $b)}"; then b=$s; fi; done; echo "$b"; }
mibs() { awk "BEGIN{printf \"%.0f\", $1 / 1048576 / $2}"; }
cat ref.h5 cand.h5 > /dev/null   # page cache: the disk is not what is measured
w0=$(best golden-diff --threads 1 ref.h5 cand.h5)
w1=$(best mpirun --oversubscribe -np 1 "$MPIBIN/golden-diff" --threads 1 ref.h5 cand.h5)
w2=$(best mpirun --oversubscribe -np 2 "$MPIBIN/golden-diff" --threads 1 ref.h5 cand.h5)
wt=$(best mpirun --oversubscribe -np 2 "$MPIBIN/golden-diff" --threads 1 small-ref.h5 small-ref.h5)
echo "  ${MB} MiB x 2 files, 8 tensors, one thread per rank (2 cores here):"
echo "  single process:  $w0 s, $(mibs $bytes $w0) MiB/s read"
echo "  mpirun -np 1:    $w1 s, $(mibs $bytes $w1) MiB/s per rank"
echo "  mpirun -np 2:    $w2 s, $(mibs $((bytes / 2)) $w2) MiB/s per rank, $(mibs $bytes $w2) MiB/s in all"
echo "  mpirun -np 2, 2000 small tensors (launch + plan + fork + merge): $wt s"
for s in 2 4; do
    echo "  merge of $s shards, 2000 tensors: $(diff-merge-bench small-ref.h5 small-cand.h5 $s)"
done

# manifest-verify --seal: the example experiment with four big assets, hashed on 1 and 2 ranks
for x in x1 x2; do # (the folder's name is its experiment's id)
    e=$x/OP-MOE-0001
    rm -rf $x && mkdir $x && cp -R "$GOLDEN_ROOT/examples/experiment/OP-MOE-0001" $e && rm -f $e/SHA256SUMS
    for i in 1 2 3 4; do cp ref.h5 "$e/performance/extra-$i.bin"; done
done
cat x1/OP-MOE-0001/performance/extra-*.bin x2/OP-MOE-0001/performance/extra-*.bin > /dev/null
sb=$((4 * MB * 1048576))
s1=$(cd x1 && secs manifest-verify -j1 --seal OP-MOE-0001)
s2=$(cd x2 && secs mpirun --oversubscribe -np 2 "$MPIBIN/manifest-verify" -j1 --seal OP-MOE-0001)
[ -f x1/OP-MOE-0001/SHA256SUMS ] && cmp -s x1/OP-MOE-0001/SHA256SUMS x2/OP-MOE-0001/SHA256SUMS ||
    echo "  (no seal, or the seals differ: the numbers below are not valid)"
echo "  manifest-verify --seal, $((4 * MB)) MiB in 4 big files + the example's, one thread per rank:"
echo "  single process:  $s1 s, $(mibs $sb $s1) MiB/s hashed"
echo "  mpirun -np 2:    $s2 s, $(mibs $((sb / 2)) $s2) MiB/s per rank, $(mibs $sb $s2) MiB/s in all"
