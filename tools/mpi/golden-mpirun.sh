#!/bin/sh
# golden-mpirun: mpirun for the golden tools (make MPI=1 installs it as build-mpi/bin/golden-mpirun;
# docs/scale.md, "A failing rank"). It runs `${GOLDEN_MPIRUN:-mpirun} ARGS...` and passes its
# output through unchanged. The tools' own statuses 0, 1 and 2 come back as they are. Any other
# status means a rank's process itself died (a SIGKILL, the OOM killer, a lost node), which
# Open MPI 4.1 reports with its own status (137 after a SIGKILL): that becomes exit 2 with one
# line naming the rank. Rank 0 writes its outputs only once every rank has reported, so such a
# job has written no merged output. The ranks' scratch folders (npu-replay run: FILE.rankK-of-N.XXXXXX
# beside the golden) are removed by the ranks themselves, also when mpirun stops them with SIGTERM;
# a rank killed outright cannot, so every rank appends its folder's absolute path to the file
# named by GOLDEN_MPIRUN_SCRATCH and what is still there after mpirun is removed here: only
# folders of that name, never a symbolic link, only what is in them (a rank on another node
# whose TMPDIR is not this one's has only its own removal).
set -u
tmp=$(mktemp -d "${TMPDIR:-/tmp}/golden-mpirun.XXXXXX") || {
    echo "golden-mpirun: cannot make a scratch folder" >&2; exit 2; }
trap 'clean_scratch 2>/dev/null; rm -rf "$tmp"' EXIT
trap 'exit 2' HUP INT TERM
: > "$tmp/scratch" || { echo "golden-mpirun: cannot write in $tmp" >&2; exit 2; }
GOLDEN_MPIRUN_SCRATCH=$tmp/scratch
export GOLDEN_MPIRUN_SCRATCH
# clean_scratch: the folders the ranks listed and did not remove themselves.
clean_scratch() {
    while IFS= read -r d; do
        case ${d##*/} in
        *.rank[0-9]*-of-[0-9]*.??????) ;;
        *) continue ;;
        esac
        if [ -d "$d" ] && [ ! -L "$d" ]; then
            find "$d" -mindepth 1 -maxdepth 1 ! -type d -exec rm -f {} + 2>/dev/null
            rmdir "$d" 2>/dev/null
        fi
    done < "$tmp/scratch"
}
mkfifo "$tmp/err" || { echo "golden-mpirun: cannot make a pipe in $tmp" >&2; exit 2; }
tee "$tmp/log" < "$tmp/err" >&2 &
tee_pid=$!
${GOLDEN_MPIRUN:-mpirun} "$@" 2> "$tmp/err"
st=$?
wait "$tee_pid"
case $st in
0 | 1 | 2) exit "$st" ;;
esac
# Open MPI: "mpirun noticed that process rank 1 with PID 0 on node vm exited on signal 9 (Killed)."
what=$(sed -n 's/.*process rank \([0-9][0-9]*\) with PID \([0-9][0-9]*\) on node \([^ ]*\) exited on signal \([0-9][0-9]*\) (\([^)]*\)).*/rank \1 (PID \2 on node \3) was killed by signal \4 (\5)/p' "$tmp/log" | head -n 1)
[ -n "$what" ] || what=$(sed -n 's/.*process rank \([0-9][0-9]*\) with PID \([0-9][0-9]*\) on node \([^ ]*\) exited with status \([0-9][0-9]*\).*/rank \1 (PID \2 on node \3) exited with status \4/p' "$tmp/log" | head -n 1)
[ -n "$what" ] || what="a rank's process died"
echo "golden-mpirun: $what; the job stopped (mpirun exit $st) and wrote no merged output" >&2
exit 2
