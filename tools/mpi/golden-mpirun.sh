#!/bin/sh
# golden-mpirun: mpirun for the golden tools (make MPI=1 installs it as build-mpi/bin/golden-mpirun;
# docs/scale.md, "A failing rank"). It runs `${GOLDEN_MPIRUN:-mpirun} ARGS...` and passes its
# output through unchanged. The tools' own statuses 0, 1 and 2 come back as they are. Any other
# status means a rank's process itself died (a SIGKILL, the OOM killer, a lost node), which
# Open MPI 4.1 reports with its own status (137 after a SIGKILL): that becomes exit 2 with one
# line naming the rank. Rank 0 writes its outputs only once every rank has reported, so such a
# job has written no merged output.
set -u
tmp=$(mktemp -d "${TMPDIR:-/tmp}/golden-mpirun.XXXXXX") || {
    echo "golden-mpirun: cannot make a scratch folder" >&2; exit 2; }
trap 'rm -rf "$tmp"' EXIT
trap 'exit 2' HUP INT TERM
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
