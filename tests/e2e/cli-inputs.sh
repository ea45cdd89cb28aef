# End-to-end checks of inputs: a FIFO given as an input never hangs a tool (a stream where one
# is allowed, else exit 2 at once), "-" reads standard input where a document is read, and a
# newline or invalid UTF-8 in a file name keeps the error on one line.
. "$GOLDEN_ROOT/tests/e2e/lib.sh"

make-golden ref.h5 'a:f32:4x4:rand=1,-1,1' || echo "not ok make-golden"
G="$GOLDEN_ROOT/tests/data/graphs/inplace-safe.json"
mkfifo in.fifo

# hangs NAME STATUS CMD...: CMD ends within 10 s with STATUS (the old code blocked in open())
hangs() {
    _n=$1; _want=$2; shift 2
    timeout 10 "$@" > out.txt 2> err.txt < /dev/null
    _rc=$?
    if [ $_rc -eq 124 ]; then notok "$_n" "hung (killed after 10 s)"
    elif [ $_rc -eq "$_want" ]; then ok "$_n"
    else notok "$_n" "exit $_rc, wanted $_want: $(head -c 300 err.txt)"; fi
}

# ---- a FIFO with no writer: every input site ends at once with exit 2 ----
hangs fifo-golden-dump 2 golden-dump -o x.h5 in.fifo
expect_grep fifo-golden-dump-why '^golden-dump: in\.fifo: is not a regular file' err.txt
hangs fifo-dump-verify 2 golden-dump --verify in.fifo
hangs fifo-diff-reference 2 golden-diff in.fifo ref.h5
hangs fifo-diff-policy 2 golden-diff --policy in.fifo ref.h5 ref.h5
hangs fifo-diff-map 2 golden-diff --map in.fifo ref.h5 ref.h5
hangs fifo-dag 2 dag-check in.fifo
hangs fifo-dag-baseline 2 dag-check --baseline in.fifo "$G"
# a document may be a stream: no writer is an empty document (null), which fails the schema
hangs fifo-mv-schema-doc 1 manifest-verify --schema calculet-graph/v1 in.fifo
hangs fifo-mv-schema 2 manifest-verify --schema in.fifo "$G"
expect_absent fifo-no-output x.h5

# ---- a FIFO with a writer, where a stream is allowed: read like a file ----
# The writer must have opened the FIFO before the tool reads it (a FIFO without a writer reads
# as an empty document, docs/cli.md): a loaded machine once ran the tool first, and the writer
# then blocked in open() for ever. So wait until the writer is in open(), and stop it after.
with_writer() {
    _n=$1; shift
    cat "$G" > in.fifo &
    _w=$!
    _i=0
    while [ $_i -lt 100 ] && [ "$(cat "/proc/$_w/wchan" 2>/dev/null)" != wait_for_partner ]; do
        sleep 0.05; _i=$((_i + 1))
    done
    hangs "$_n" "$@"
    kill "$_w" 2>/dev/null
    wait "$_w" 2>/dev/null
}
with_writer fifo-dag-stream 0 dag-check in.fifo
with_writer fifo-mv-stream 0 manifest-verify --schema calculet-graph/v1 in.fifo

# ---- "-" is standard input where a document is read ----
expect_exit stdin-dag 0 sh -c "dag-check - < '$G'"
expect_grep stdin-dag-verdict '^verdict: PASS' out.txt
expect_exit stdin-dag-json 0 sh -c "cat '$G' | dag-check --json - -"
expect_grep stdin-dag-json-graph '"graph": "-"' out.txt
expect_exit stdin-dag-baseline 0 sh -c "dag-check --baseline - '$G' < '$G'"
expect_exit stdin-twice 2 sh -c "dag-check --baseline - - < '$G'"
expect_grep stdin-twice-why 'usage: standard input can be read once' err.txt
expect_exit stdin-mv-schema 0 sh -c "cat '$G' | manifest-verify --schema calculet-graph/v1 -"
printf '{"schema": "calculet-graph/v1", "queues": 3}' > bad.json
expect_exit stdin-mv-schema-fails 1 sh -c "manifest-verify --schema calculet-graph/v1 - < bad.json"
expect_exit stdin-diff-map 0 sh -c "printf '{\"schema\": \"calculet-diff-policy/v1\"}' | golden-diff --map - ref.h5 ref.h5"
expect_exit stdin-diff-policy-refused 2 sh -c "golden-diff --policy - ref.h5 ref.h5 < /dev/null"
expect_grep stdin-diff-policy-why "usage: --policy needs a file, not '-'" err.txt
# a golden needs a regular file: stdin is refused with a reason, at once
hangs stdin-golden-refused 2 golden-diff - ref.h5
expect_lines stdin-golden-one-line 1 err.txt

# ---- one problem, one line: a newline, a tab and invalid UTF-8 in a file name ----
nl_name=$(printf 'new\nline.json')
printf '{"schema": "calculet-graph/v1", "queues": 3}' > "$nl_name"
expect_exit newline-name 2 dag-check "$nl_name"
expect_lines newline-name-one-line 1 err.txt
expect_grep newline-name-escaped '^dag-check: new\\nline\.json' err.txt
bad_name=$(printf 'bad\377\tname.h5')
expect_exit invalid-utf8-name 2 golden-diff "$bad_name" ref.h5
expect_lines invalid-utf8-one-line 1 err.txt
expect_grep invalid-utf8-escaped 'bad\\xff\\tname\.h5' err.txt
utf_name=$(printf 'caf\303\251.h5')
expect_exit utf8-name-kept 2 golden-diff "$utf_name" ref.h5
expect_grep utf8-name-kept-text "$(printf 'caf\303\251')\\.h5" err.txt

# ---- golden-dump reads one .npy from a pipe ("-", with --name): copied beside the output ----
if [ -n "$PYTHON" ]; then
    $PYTHON -c 'import numpy as np, sys; np.save(sys.stdout.buffer, (np.arange(6, dtype=np.float32) * 0.5).reshape(2, 3))' |
        golden-dump -o piped.h5 --name x/y - > out.txt 2> err.txt
    rc=$?
    if [ $rc -eq 0 ]; then ok npy-stdin; else notok npy-stdin "exit $rc: $(cat err.txt)"; fi
    want=$($PYTHON -c 'import numpy as np, hashlib; print(hashlib.sha256((np.arange(6, dtype=np.float32) * 0.5).astype("<f4").tobytes()).hexdigest())')
    golden-dump --list piped.h5 > list.txt
    expect_grep npy-stdin-hash "^x/y +f32 +2x3 +$want +0 +2\.5 " list.txt
    if ls piped.h5.tmp.* > /dev/null 2>&1; then notok npy-stdin-no-copy-left "$(ls piped.h5.tmp.*)"; else ok npy-stdin-no-copy-left; fi
fi
echo garbage > garbage.txt
expect_exit npy-stdin-bad 2 sh -c "golden-dump -o bad.h5 --name z - < garbage.txt"
expect_grep npy-stdin-bad-names-stdin '^golden-dump: -: corrupt \.npy header' err.txt
if ls bad.h5* > /dev/null 2>&1; then notok npy-stdin-bad-nothing-left "$(ls bad.h5*)"; else ok npy-stdin-bad-nothing-left; fi
expect_exit npy-stdin-needs-name 2 sh -c "golden-dump -o bad.h5 - < garbage.txt"
expect_grep npy-stdin-needs-name-why 'usage: a \.npy on standard input needs --name' err.txt
