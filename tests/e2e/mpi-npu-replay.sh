# npu-replay run on MPI ranks (issue 31, docs/scale.md): the MPI build under mpirun -np 1..4
# shares the manifest's cases over the ranks, each rank with its own backend; rank 0 merges
# the ranks' goldens and raw files. The merged golden is the normal build's single run's:
# h5dump's whole text (every tensor's data, shape, dtype, sha256, statistics and attributes,
# the root attributes) equal but for the `created` time; the raw lines are the single run's
# in the same order, equal but for their times. A rank whose worker is killed ends the job
# with exit 2 naming the rank and its share, leaving no golden, raw file or rank's scratch
# file. Skipped (no ok line) without an MPI build.
. "$GOLDEN_ROOT/tests/e2e/lib.sh"

MPIBIN=${GOLDEN_MPI_BIN:-$GOLDEN_ROOT/build-mpi/bin}
if ! command -v mpirun >/dev/null 2>&1 || [ ! -x "$MPIBIN/npu-replay" ]; then
    echo "# skip mpi-npu-replay: no mpirun or no MPI build in $MPIBIN (make MPI=1)"
    exit 0
fi
if ! command -v h5dump >/dev/null 2>&1 || ! python3 -c 'import json' 2>/dev/null; then
    echo "not ok mpi-npu-replay: h5dump or python3 missing"
    exit 0
fi
[ "$(id -u)" -eq 0 ] && export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
mpi_private_session
# a sanitized MPI build: Open MPI's own allocations at exit are not leaks of ours
export LSAN_OPTIONS="${LSAN_OPTIONS:+$LSAN_OPTIONS:}suppressions=$GOLDEN_ROOT/tests/e2e/lsan-mpi.supp:print_suppressions=0"
MPIRUN="mpirun --oversubscribe"

expect_exit make-model 0 npu-replay make-model --preset tiny --seed 31 -o m
expect_exit matrix 0 npu-replay matrix --model m --max-len 16 --random 1 --repeated 1 -o man.jsonl -j1
ncases=$(grep -c '"rejection":false' man.jsonl)
[ "$ncases" -ge 5 ] && ok "matrix-has-cases ($ncases)" || notok matrix-has-cases "$ncases cases"
ARGS="run --model $PWD/m --manifest $PWD/man.jsonl --side candidate --warmup 1 --runs 1 -j1 --taps layers/0/attn_out,layers/1/router/topk_ids --golden g.h5 --raw r.jsonl"

# dump FILE: h5dump's text with the one field that differs between any two runs (created) blanked
dump() { (cd "$(dirname "$1")" && h5dump "$(basename "$1")") | sed -E 's/"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:.]+Z?"/"CREATED"/'; }
# rawkey FILE: every raw line without its times (keys ending _ns or _ms, and stages), in order
rawkey() {
    python3 - "$1" <<'PY'
import json, sys
def strip(v):
    if isinstance(v, dict):
        return {k: strip(x) for k, x in v.items() if not k.endswith(("_ns", "_ms")) and k != "stages"}
    return v
for line in open(sys.argv[1]):
    print(json.dumps(strip(json.loads(line)), sort_keys=True))
PY
}

mkdir s && (cd s && npu-replay $ARGS > out.txt 2> err.txt; echo $? > rc)
[ "$(cat s/rc)" -eq 0 ] && ok run-single || notok run-single "exit $(cat s/rc): $(head -c 300 s/err.txt)"
dump s/g.h5 > s/g.txt; rawkey s/r.jsonl > s/r.txt
grep -q 'DATASET' s/g.txt && ok single-golden-has-tensors || notok single-golden-has-tensors
nraw=$(wc -l < s/r.txt | tr -d ' ')
[ "$nraw" -ge 10 ] && ok "single-raw-lines ($nraw)" || notok single-raw-lines "$nraw lines"

for np in 1 2 3 4; do
    mkdir m$np
    (cd m$np && $MPIRUN -np $np "$MPIBIN/npu-replay" $ARGS > out.txt 2> err.txt; echo $? > rc)
    rc=$(cat m$np/rc)
    [ "$rc" -eq 0 ] && ok run-np$np || notok run-np$np "exit $rc: $(head -c 300 m$np/err.txt)"
    dump m$np/g.h5 > m$np/g.txt 2>/dev/null; rawkey m$np/r.jsonl > m$np/r.txt 2>/dev/null
    if cmp -s s/g.txt m$np/g.txt; then ok golden-np$np-same; else
        notok golden-np$np-same "$(diff s/g.txt m$np/g.txt | head -c 300)"; fi
    if cmp -s s/r.txt m$np/r.txt; then ok raw-np$np-same; else
        notok raw-np$np-same "$(diff s/r.txt m$np/r.txt | head -c 300)"; fi
    if cmp -s s/out.txt m$np/out.txt; then ok summary-np$np-same; else
        notok summary-np$np-same "$(cat m$np/out.txt)"; fi
    left=$(ls m$np | grep -c '\.rank' || true)
    [ "$left" -eq 0 ] && ok no-scratch-np$np || notok no-scratch-np$np "$(ls m$np)"
done
expect_exit golden-np3-verifies 0 golden-dump --verify m3/g.h5
expect_exit golden-np3-diff-passes 0 golden-diff s/g.h5 m3/g.h5

# rank 1's worker killed as it starts: exit 2 naming rank 1 and its share; nothing left
mkdir k
(cd k && $MPIRUN -np 2 -x GOLDEN_TEST_SIGKILL=1 "$MPIBIN/npu-replay" $ARGS > out.txt 2> err.txt; echo $? > rc)
rc=$(cat k/rc)
[ "$rc" -eq 2 ] && ok kill-exit-2 || notok kill-exit-2 "exit $rc: $(head -c 300 k/err.txt)"
expect_grep kill-names-rank "^npu-replay: rank 1 of 2 \\(running [1-9][0-9]* of its cases, [1-9][0-9]* tokens\\): its worker process [0-9]+ was killed by signal 9" k/err.txt
left=$(ls k | grep -c -e '\.h5' -e '\.jsonl' || true)
[ "$left" -eq 0 ] && ok kill-nothing-left || notok kill-nothing-left "$(ls k)"

# --faults is not shared yet: refused with exit 2 on ranks, before any work
mkdir f
(cd f && $MPIRUN -np 2 "$MPIBIN/npu-replay" $ARGS --faults faults.jsonl > out.txt 2> err.txt; echo $? > rc)
[ "$(cat f/rc)" -eq 2 ] && ok faults-refused || notok faults-refused "exit $(cat f/rc)"
expect_grep faults-refused-says "not on MPI ranks yet" f/err.txt
# --qps (open loop) and --topk are not carried out by the ranks either: refused, never dropped
for o in "--qps 50" "--topk 8"; do
    d=q$(echo "$o" | tr -dc 'a-z'); mkdir "$d"
    (cd "$d" && $MPIRUN -np 2 "$MPIBIN/npu-replay" $ARGS $o > out.txt 2> err.txt; echo $? > rc)
    [ "$(cat "$d"/rc)" -eq 2 ] && ok "$d-refused" || notok "$d-refused" "exit $(cat "$d"/rc)"
    expect_grep "$d-refused-says" "${o%% *}: rank 0 of 2 \\(planning its share\\): not on MPI ranks yet" "$d"/err.txt
done
