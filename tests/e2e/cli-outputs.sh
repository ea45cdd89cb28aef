# End-to-end checks of the output conventions every tool shares (docs/cli.md): --force never
# replaces a special file or an input, "-" is stdout with the table moved out of the way,
# /dev/fd/N from process substitution, a full stdout is exit 2, signals leave no temporary file.
. "$GOLDEN_ROOT/tests/e2e/lib.sh"

make-golden ref.h5 'a:f32:4x4:rand=1,-1,1' 'b:f32:8:rand=2,-1,1' || echo "not ok make-golden"
G="$GOLDEN_ROOT/tests/data/graphs/inplace-safe.json"
cp "$G" g.json

# is_fifo NAME PATH / is_chr NAME PATH: the node is still what it was
is_fifo() { if [ -p "$2" ]; then ok "$1"; else notok "$1" "$2 is no longer a FIFO: $(ls -l "$2")"; fi; }
is_chr() { if [ -c "$2" ]; then ok "$1"; else notok "$1" "$2 is no longer a device: $(ls -l "$2")"; fi; }

# ---- a FIFO as an output: written directly, never renamed over (with or without --force) ----
for tool in diff dag verify; do
    rm -f out.fifo; mkfifo out.fifo
    cat out.fifo > fifo-$tool.txt &
    reader=$!
    case $tool in
    diff) expect_exit fifo-json-$tool 0 golden-diff --force --json out.fifo ref.h5 ref.h5 ;;
    dag) expect_exit fifo-json-$tool 0 dag-check --force --json out.fifo g.json ;;
    verify) expect_exit fifo-json-$tool 0 manifest-verify --force --json out.fifo --schema calculet-graph/v1 g.json ;;
    esac
    wait $reader
    is_fifo fifo-still-fifo-$tool out.fifo
    expect_grep fifo-got-report-$tool '"schema": "calculet-' fifo-$tool.txt
done
# no temporary file was left beside it
if ls out.fifo.tmp.* > /dev/null 2>&1; then notok fifo-no-temp "$(ls out.fifo.tmp.*)"; else ok fifo-no-temp; fi

# ---- a character device: /dev/null needs no --force and stays a device ----
expect_exit devnull-json 0 golden-diff --json /dev/null ref.h5 ref.h5
expect_exit devnull-junit 0 golden-dump --verify ref.h5 --junit /dev/null
is_chr devnull-still-device /dev/null
# a device node of our own (as root: mknod), replaced by the old code under --force
if mknod mynull c 1 3 2> /dev/null; then
    expect_exit mknod-force 0 golden-diff --force --json mynull ref.h5 ref.h5
    is_chr mknod-still-device mynull
    expect_exit mknod-force-dag 0 dag-check --force --junit mynull g.json
    is_chr mknod-still-device-dag mynull
else
    ok "mknod-force # SKIP not root"
fi

# ---- an HDF5 golden cannot be streamed: -o - and -o FIFO are refused with one clear line ----
expect_exit dump-stdout-refused 2 golden-dump -o - ref.h5
expect_lines dump-stdout-one-line 1 err.txt
expect_grep dump-stdout-why '^golden-dump: -: not a regular file: an HDF5 file cannot be written to a stream' err.txt
rm -f out.fifo; mkfifo out.fifo
expect_exit dump-fifo-refused 2 golden-dump --force -o out.fifo ref.h5
is_fifo dump-fifo-still-fifo out.fifo

# ---- /dev/fd/N from bash's process substitution ----
if command -v bash > /dev/null 2>&1; then
    bash -c 'golden-diff --json >(cat > procsub.json) ref.h5 ref.h5 > /dev/null; wait; sleep 0.2'
    expect_grep procsub-json '"verdict": "pass"' procsub.json
    bash -c 'dag-check --junit >(cat > procsub.xml) g.json > /dev/null; wait; sleep 0.2'
    expect_grep procsub-junit '<testsuites ' procsub.xml
else
    ok "procsub # SKIP no bash"
fi

# ---- "-" is stdout; the human table moves out of the way ----
golden-diff --junit - ref.h5 ref.h5 > junit-stdout.xml 2> junit-stderr.txt
expect_grep junit-stdout-xml '^<\?xml version' junit-stdout.xml
if grep -q 'PASS' junit-stdout.xml; then notok junit-stdout-no-table "$(head -3 junit-stdout.xml)"; else ok junit-stdout-no-table; fi
if command -v python3 > /dev/null 2>&1; then
    if python3 -c 'import sys, xml.dom.minidom as m; m.parse(sys.argv[1])' junit-stdout.xml; then
        ok junit-stdout-parses; else notok junit-stdout-parses; fi
fi
dag-check --json - g.json > dag-stdout.json
expect_grep dag-json-stdout '^\{' dag-stdout.json
if grep -q '^verdict:' dag-stdout.json; then notok dag-json-stdout-no-table; else ok dag-json-stdout-no-table; fi
expect_exit two-stdout-outputs 2 golden-diff --json - --junit - ref.h5 ref.h5
expect_grep two-stdout-why "^golden-diff: usage: only one output can be '-'" err.txt

# ---- an output that is one of the inputs: an error even with --force, the input intact ----
cp ref.h5 keep.h5
expect_exit out-is-input-diff 2 golden-diff --force --json keep.h5 keep.h5 ref.h5
expect_grep out-is-input-diff-why '^golden-diff: keep\.h5: output is also an input' err.txt
if cmp -s keep.h5 ref.h5; then ok out-is-input-diff-intact; else notok out-is-input-diff-intact; fi
expect_exit out-is-input-dag 2 dag-check --force --json g.json g.json
if cmp -s g.json "$G"; then ok out-is-input-dag-intact; else notok out-is-input-dag-intact; fi
ln -s g.json link.json
expect_exit out-is-input-link 2 dag-check --force --junit link.json g.json
expect_exit out-is-input-policy 2 golden-diff --force --json g.json --policy g.json ref.h5 ref.h5
expect_exit out-is-input-dump 2 golden-dump --force -o keep.h5 keep.h5
if cmp -s keep.h5 ref.h5; then ok out-is-input-dump-intact; else notok out-is-input-dump-intact; fi
expect_exit out-is-input-verify 2 golden-dump --force --verify keep.h5 --json keep.h5

# ---- a regular output still needs --force, and gets it ----
echo old > report.json
expect_exit exists-no-force 2 dag-check --json report.json g.json
expect_grep exists-no-force-why 'output exists \(use --force to replace it\)' err.txt
expect_exit exists-force 0 dag-check -f --json report.json g.json
expect_grep exists-force-replaced '"schema": "calculet-dag-report/v1"' report.json

# ---- stdout on /dev/full: a failed write is exit 2, never a silent 0 ----
if [ -w /dev/full ]; then
    for cmd in "golden-diff ref.h5 ref.h5" "golden-dump --list ref.h5" "dag-check g.json" \
               "manifest-verify --schema calculet-graph/v1 g.json" "golden-diff --help" \
               "dag-check --json - g.json" "golden-dump --json - --list ref.h5"; do
        name=full-$(echo "$cmd" | tr ' /' '__' | cut -c1-40)
        # shellcheck disable=SC2086
        $cmd > /dev/full 2> err.txt
        rc=$?
        if [ "$rc" -eq 2 ]; then ok "$name"; else notok "$name" "exit $rc"; fi
        expect_grep "$name-line" ': -: cannot write to standard output' err.txt
        expect_lines "$name-one-line" 1 err.txt
    done
fi

# ---- SIGINT/SIGTERM/SIGHUP: no temporary output left, the conventional status ----
# A slow run: a big raw tensor is hashed and written while we signal it.
big_ok=1
mkdir -p bigrun && head -c 268435456 /dev/zero > bigrun/x.bin 2> /dev/null || big_ok=0
printf '{"schema": "calculet-dump-index/v1", "tensors": [{"name": "x", "file": "x.bin", "offset": 0, "dtype": "f32", "shape": [67108864]}]}\n' > bigrun/index.json
for sig in INT TERM HUP; do
    rm -f sig.h5 sig.h5.tmp.*
    # a background job of a script starts with SIGINT ignored (and the tools keep an ignored
    # signal ignored, as nohup wants): python restores the default action first
    python3 -c 'import os, signal, sys
signal.signal(signal.SIGINT, signal.SIG_DFL)
os.execvp(sys.argv[1], sys.argv[1:])' golden-dump --gzip 9 -o sig.h5 bigrun/index.json > /dev/null 2> sig-err.txt &
    pid=$!
    # wait until the temporary output exists, then signal
    i=0
    while [ $i -lt 100 ] && ! ls sig.h5.tmp.* > /dev/null 2>&1; do sleep 0.05; i=$((i + 1)); done
    kill -$sig $pid
    wait $pid
    rc=$?
    want=$((128 + $(kill -l $sig 2>/dev/null || echo 0)))
    case $sig in INT) want=130;; TERM) want=143;; HUP) want=129;; esac
    if [ $big_ok -eq 0 ]; then ok "signal-$sig # SKIP no space"; continue; fi
    if [ "$rc" -eq "$want" ]; then ok "signal-$sig-status"; else notok "signal-$sig-status" "exit $rc, wanted $want"; fi
    if ls sig.h5.tmp.* > /dev/null 2>&1; then notok "signal-$sig-no-temp" "$(ls -l sig.h5.tmp.*)"; else ok "signal-$sig-no-temp"; fi
    expect_absent "signal-$sig-no-output" sig.h5
done
rm -rf bigrun
