# manifest-verify's hashing on MPI ranks (issue 31, docs/scale.md): the MPI build under mpirun
# -np 1..4 seals the example experiment folder with the SHA256SUMS, table, JSON and JUnit
# (minus timing) of the normal build's single process, byte for byte; a later check of a
# changed sealed folder, and a hand-off, likewise. A rank whose worker is killed ends the job
# with exit 2 naming the rank and its share; a rank whose own process is killed ends
# golden-mpirun with exit 2 naming the rank (mpirun itself says 137); neither leaves a seal
# or a report. Skipped (no ok line) without an MPI build.
. "$GOLDEN_ROOT/tests/e2e/lib.sh"

MPIBIN=${GOLDEN_MPI_BIN:-$GOLDEN_ROOT/build-mpi/bin}
if ! command -v mpirun >/dev/null 2>&1 || [ ! -x "$MPIBIN/manifest-verify" ]; then
    echo "# skip mpi-manifest-verify: no mpirun or no MPI build in $MPIBIN (make MPI=1)"
    exit 0
fi
[ "$(id -u)" -eq 0 ] && export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
mpi_private_session
# a sanitized MPI build: Open MPI's own allocations at exit are not leaks of ours
export LSAN_OPTIONS="${LSAN_OPTIONS:+$LSAN_OPTIONS:}suppressions=$GOLDEN_ROOT/tests/e2e/lsan-mpi.supp:print_suppressions=0"
MPIRUN="mpirun --oversubscribe"
SINGLE="$GOLDEN_BIN/manifest-verify"
EX="$GOLDEN_ROOT/examples/experiment/OP-MOE-0001"

# fresh NAME: NAME/OP-MOE-0001, the example unsealed (every run names the folder alike)
fresh() {
    rm -rf "$1"; mkdir -p "$1"; cp -R "$EX" "$1/OP-MOE-0001"; rm -f "$1/OP-MOE-0001/SHA256SUMS"
}
norm() { [ -f "$1" ] && sed -e 's/ time="[^"]*"//g' -e 's/ timestamp="[^"]*"//g' "$1" > "$1.n"; return 0; }
# same NAME DIR_A DIR_B: the outputs of two runs are the same bytes (stderr: mpirun adds its
# own banner after a non-zero status)
same() {
    bad=""
    for f in out.txt r.json SHA256SUMS; do
        if [ -f "$2/$f" ] || [ -f "$3/$f" ]; then cmp -s "$2/$f" "$3/$f" || bad="$bad $f"; fi
    done
    norm "$2/r.xml"; norm "$3/r.xml"
    cmp -s "$2/r.xml.n" "$3/r.xml.n" || bad="$bad junit"
    if [ -z "$bad" ]; then ok "$1"; else notok "$1" "differs:$bad"; fi
}
# run DIR CMD...: CMD in DIR on OP-MOE-0001, its outputs and the seal kept there; its status
run() {
    _d=$1; shift
    (cd "$_d" && "$@" --json r.json --junit r.xml OP-MOE-0001 > out.txt 2> err.txt; echo $? > rc)
    [ -f "$_d/OP-MOE-0001/SHA256SUMS" ] && cp "$_d/OP-MOE-0001/SHA256SUMS" "$_d/SHA256SUMS"
    cat "$_d/rc"
}

fresh s
rc=$(run s "$SINGLE" --seal)
[ "$rc" -eq 0 ] && ok seal-single || notok seal-single "exit $rc: $(head -c 300 s/err.txt)"
# the seal against coreutils' own digests of every file (not this code's)
(cd s/OP-MOE-0001 && find . -type f ! -name SHA256SUMS | sed 's|^\./||' | LC_ALL=C sort |
    while read -r f; do sha256sum "$f"; done) > want.sums
if cmp -s want.sums s/SHA256SUMS; then ok seal-single-is-sha256sum; else
    notok seal-single-is-sha256sum "$(diff want.sums s/SHA256SUMS | head -c 300)"; fi
n_files=$(wc -l < want.sums | tr -d ' ')
[ "$n_files" -ge 8 ] && ok seal-has-files || notok seal-has-files "$n_files files"
for np in 1 2 3 4; do
    fresh m$np
    rc=$(run m$np $MPIRUN -np $np "$MPIBIN/manifest-verify" --seal)
    [ "$rc" -eq 0 ] && ok seal-np$np || notok seal-np$np "exit $rc: $(head -c 300 m$np/err.txt)"
    same seal-np$np-same s m$np
    [ -s m$np/err.txt ] && notok seal-np$np-quiet "$(head -c 300 m$np/err.txt)" || ok seal-np$np-quiet
done

# a sealed folder whose decision changed: exit 1, the same findings from 1 and 3 ranks
for d in s m3; do
    printf 'late edit\n' >> $d/OP-MOE-0001/decision.md; rm -f $d/SHA256SUMS $d/r.json $d/r.xml
done
rc=$(run s "$SINGLE")
[ "$rc" -eq 1 ] && ok changed-single || notok changed-single "exit $rc: $(head -c 300 s/err.txt)"
expect_grep changed-single-says "seal: SHA-256 of 'decision.md'" s/out.txt
# (through golden-mpirun: it passes the tool's own status 1 through)
rc=$(run m3 "$MPIBIN/golden-mpirun" --oversubscribe -np 3 "$MPIBIN/manifest-verify")
[ "$rc" -eq 1 ] && ok changed-np3 || notok changed-np3 "exit $rc: $(head -c 300 m3/err.txt)"
same changed-np3-same s m3

# a hand-off's artifacts, hashed on 2 ranks
"$SINGLE" --handoff "$GOLDEN_ROOT/examples/handoff" > ho-s.txt 2>&1
rs=$?
$MPIRUN -np 2 "$MPIBIN/manifest-verify" --handoff "$GOLDEN_ROOT/examples/handoff" > ho-m.txt 2>&1
rh=$?
if [ "$rs" -eq 0 ] && [ "$rh" -eq 0 ] && cmp -s ho-s.txt ho-m.txt; then ok handoff-np2-same; else
    notok handoff-np2-same "exit $rs/$rh: $(diff ho-s.txt ho-m.txt | head -c 300)"; fi
expect_grep handoff-hashed '[1-9][0-9]* files? hashed' ho-m.txt

# schema mode under mpirun: one report, rank 0's
"$SINGLE" --schema calculet-op-experiment/v1 "$EX/hypothesis.yaml" > sc-s.txt 2>&1
$MPIRUN -np 2 "$MPIBIN/manifest-verify" --schema calculet-op-experiment/v1 "$EX/hypothesis.yaml" > sc-m.txt 2>&1
if cmp -s sc-s.txt sc-m.txt; then ok schema-np2-once; else notok schema-np2-once "$(head -c 300 sc-m.txt)"; fi

# rank 1's worker killed as it starts: exit 2 naming rank 1 and its share, nothing written
fresh k
rc=$(run k $MPIRUN -np 2 -x GOLDEN_TEST_SIGKILL=1 "$MPIBIN/manifest-verify" --seal)
[ "$rc" -eq 2 ] && ok kill-worker-exit-2 || notok kill-worker-exit-2 "exit $rc: $(head -c 300 k/err.txt)"
expect_grep kill-worker-names-rank "^manifest-verify: rank 1 of 2 \\(hashing [1-9][0-9]* of its files, [1-9][0-9]* bytes\\): its worker process [0-9]+ was killed by signal 9" k/err.txt
expect_absent kill-worker-no-seal k/OP-MOE-0001/SHA256SUMS
expect_absent kill-worker-no-json k/r.json

# rank 1's own process killed while its worker hashes: mpirun says 137, golden-mpirun says 2
fresh p
rc=$(run p "$MPIBIN/golden-mpirun" --oversubscribe -np 2 -x GOLDEN_TEST_SIGKILL=1:rank \
     "$MPIBIN/manifest-verify" --seal)
[ "$rc" -eq 2 ] && ok kill-rank-exit-2 || notok kill-rank-exit-2 "exit $rc: $(tail -c 300 p/err.txt)"
expect_grep kill-rank-names-rank "^golden-mpirun: rank 1 \\(PID [0-9]+ on node [^ ]+\\) was killed by signal 9 \\(Killed\\); the job stopped \\(mpirun exit 137\\)" p/err.txt
expect_absent kill-rank-no-seal p/OP-MOE-0001/SHA256SUMS
expect_absent kill-rank-no-json p/r.json

# run alone (no launcher) the MPI build is the normal tool
fresh a
rc=$(run a "$MPIBIN/manifest-verify" --seal)
[ "$rc" -eq 0 ] && ok alone-seal || notok alone-seal "exit $rc"
same alone-is-single m1 a
