# Shared helpers for end-to-end tests (sourced). Each check prints "ok NAME" or
# "not ok NAME"; ci/run-tests counts them. Scripts run in a fresh temporary folder.
# Environment: GOLDEN_ROOT (source tree), GOLDEN_BIN (tools), GOLDEN_HELPERS (test programs).
set -u
PATH="$GOLDEN_BIN:$GOLDEN_HELPERS:$PATH"
export PATH

ok() { echo "ok $1"; }
notok() { echo "not ok $1${2:+: $2}"; }

# expect_exit NAME STATUS CMD...: run CMD (stdout to out.txt, stderr to err.txt); check status.
expect_exit() {
    _name=$1; _want=$2; shift 2
    "$@" > out.txt 2> err.txt
    _got=$?
    if [ "$_got" -eq "$_want" ]; then ok "$_name"; else
        notok "$_name" "exit $_got, wanted $_want: $(head -c 400 err.txt)"; fi
}

# expect_grep NAME PATTERN FILE: FILE contains an extended-regex match.
expect_grep() {
    if grep -Eq -- "$2" "$3"; then ok "$1"; else notok "$1" "no /$2/ in $3: $(head -c 400 "$3")"; fi
}

# expect_lines NAME N FILE: FILE has exactly N lines.
expect_lines() {
    _n=$(wc -l < "$3" | tr -d ' ')
    if [ "$_n" -eq "$2" ]; then ok "$1"; else notok "$1" "$3 has $_n lines, wanted $2"; fi
}

# expect_absent NAME PATH: PATH does not exist.
expect_absent() {
    if [ -e "$2" ]; then notok "$1" "$2 exists"; else ok "$1"; fi
}

# PYTHON: Debian's python3 with numpy+h5py when available (else empty: skip interop checks).
PYTHON=""
for _p in /usr/bin/python3 python3; do
    if command -v "$_p" >/dev/null 2>&1 && "$_p" -c 'import numpy, h5py' 2>/dev/null; then
        PYTHON=$_p; break
    fi
done

# mpi_private_session: Open MPI's session folder (/tmp/ompi.HOST.UID by default) made private to
# this script, so two mpiruns started at once by parallel suites (build and build-san) do not
# race to create the same folder ("A call to mkdir was unable to create the desired directory
# ... File exists", seen in CI). A short path under TMPDIR (PMIx keeps sockets there), removed
# when the script exits.
mpi_private_session() {
    _mpis=$(mktemp -d "${TMPDIR:-/tmp}/gmpi.XXXXXX") || { echo "not ok mpi-session-dir"; exit 0; }
    OMPI_MCA_orte_tmpdir_base=$_mpis
    export OMPI_MCA_orte_tmpdir_base
    trap 'rm -rf "$_mpis"' EXIT
}
