# End-to-end checks of the option layer: every option --help lists is one the parser takes
# (and the other way round: an unlisted one is refused), short options mean the same thing in
# every tool, and every usage error is one line "TOOL: usage: WHAT (see TOOL --help)", exit 2.
. "$GOLDEN_ROOT/tests/e2e/lib.sh"

TOOLS="golden-dump golden-diff manifest-verify dag-check golden-accept"
# exp-gate (issue 9, port-gate): the top level and each subcommand's own table; a ":" in a
# name separates a tool from its subcommand ("exp-gate:decide" runs `exp-gate decide`)
TOOLS="$TOOLS exp-gate exp-gate:summarize exp-gate:decide exp-gate:matrix"
# tools with one option table per command, as "TOOL:COMMAND" (the ':' becomes a space below)
COMMANDS="npu-replay npu-replay:make-model npu-replay:matrix npu-replay:run npu-replay:conform npu-replay:profile"

# options_rows TOOL...: "SHORT LONG ARG" per option row of its --help ("-" for none)
options_rows() {
    "$@" --help | grep -E '^  (-[A-Za-z], |    )--[a-z]' | while IFS= read -r line; do
        short=-; case "$line" in "  -"?", "*) short=$(printf '%s' "$line" | cut -c4);; esac
        long=$(printf '%s' "$line" | sed 's/^ *\(-., \)\{0,1\}--\([a-z0-9-]*\).*$/\2/')
        # the value's name ends the line when a long row wraps its help to the next line
        arg=$(printf '%s' "$line" | sed -n 's/^ *\(-., \)\{0,1\}--[a-z0-9-]* \([^ ]\{1,\}\)\( .*\)\{0,1\}$/\2/p')
        echo "$short $long ${arg:--}"
    done
}

all_rows=""
for tool in $TOOLS "dag-check diff" $COMMANDS; do
    tool=$(echo "$tool" | tr ':' ' ')
    tbin=${tool%% *}
    tname=$(echo "$tool" | tr ' ' '-')
    # shellcheck disable=SC2086
    rows=$(options_rows $tool)
    if [ -n "$rows" ]; then ok "help-lists-options-$tname"; else notok "help-lists-options-$tname"; fi
    for must in help version quiet threads json junit force; do
        if echo "$rows" | grep -q " $must "; then ok "common-$must-$tname"; else
            notok "common-$must-$tname" "--$must missing from --help"; fi
    done
    echo "$rows" > rows.txt
    while read -r short long arg; do
        # every listed option is one the parser knows: feed it (with a value) and make sure
        # the complaint, if any, is not about the option itself
        val=""; [ "$arg" != "-" ] && val="x"
        # shellcheck disable=SC2086
        $tool --$long $val > /dev/null 2> err.txt < /dev/null
        if grep -q "unknown option\|ambiguous option\|needs a value\|takes no value" err.txt; then
            notok "parser-takes-$tname--$long" "$(cat err.txt)"; else ok "parser-takes-$tname--$long"; fi
        if [ "$short" != "-" ]; then
            # shellcheck disable=SC2086
            $tool -$short $val > /dev/null 2> err.txt < /dev/null
            if grep -q "unknown option\|needs a value" err.txt; then
                notok "parser-takes-$tname-$short" "$(cat err.txt)"; else ok "parser-takes-$tname-$short"; fi
            all_rows="$all_rows
$short $long"
        fi
    done < rows.txt
    # an option the table does not list is refused in one line
    # shellcheck disable=SC2086
    expect_exit "unknown-$tname" 2 $tool --no-such-option
    expect_lines "unknown-one-line-$tname" 1 err.txt
    expect_grep "unknown-format-$tname" "^$tbin: usage: unknown option '--no-such-option' \(see $tbin --help\)$" err.txt
    # a missing value: one line too
    # shellcheck disable=SC2086
    expect_exit "missing-value-$tname" 2 $tool --json
    expect_lines "missing-value-one-line-$tname" 1 err.txt
    expect_grep "missing-value-format-$tname" ": usage: option '--json' needs a value \(FILE\) \(see " err.txt
    # shellcheck disable=SC2086
    expect_exit "bad-threads-$tname" 2 $tool -j 0
    expect_lines "bad-threads-one-line-$tname" 1 err.txt
    expect_grep "bad-threads-format-$tname" ": usage: --threads: expected an integer from 1 to 256, got '0'" err.txt
    # shellcheck disable=SC2086
    expect_exit "version-$tname" 0 $tool -V
    expect_grep "version-text-$tname" "^$tbin 0\.1\.0$" out.txt
    # shellcheck disable=SC2086
    expect_exit "help-short-$tname" 0 $tool -h
    expect_grep "help-usage-$tname" '^usage: ' out.txt
done

# a short letter means one long option in every tool (golden-diff's -o for --only is gone)
echo "$all_rows" | sed '/^$/d' | sort -u > shorts.txt
dups=$(awk '{print $1}' shorts.txt | uniq -d)
if [ -z "$dups" ]; then ok short-options-agree; else
    notok short-options-agree "$(grep -E "^($(echo $dups | tr ' ' '|')) " shorts.txt | tr '\n' ';')"; fi
expect_exit diff-o-is-not-only 2 golden-diff -o 'x*' a.h5 b.h5
expect_grep diff-o-unknown "usage: unknown option '-o'" err.txt

# GNU conventions the table parser keeps: --opt=value, -j4, clusters, "--", unique prefixes
make-golden ref.h5 'a:f32:4:rand=1,-1,1' || echo "not ok make-golden"
expect_exit long-equals 0 golden-diff --threads=2 --json=r.json ref.h5 ref.h5
expect_grep long-equals-json '"verdict": "pass"' r.json
expect_exit short-attached 0 golden-diff -j2 -qf --json r.json ref.h5 ref.h5
if [ -s out.txt ]; then notok quiet-is-quiet "$(cat out.txt)"; else ok quiet-is-quiet; fi
expect_exit unique-prefix 0 golden-diff --allow-em ref.h5 ref.h5
expect_exit ambiguous-prefix 2 golden-diff --a ref.h5 ref.h5
expect_grep ambiguous-prefix-why "usage: ambiguous option '--a'" err.txt
cp ref.h5 ./-dash.h5
expect_exit double-dash 0 golden-diff -- -dash.h5 ref.h5
expect_exit flag-with-value 2 golden-diff --force=yes ref.h5 ref.h5
expect_grep flag-with-value-why "usage: option '--force' takes no value" err.txt
# GOLDEN_THREADS is read by the tool (not the library) and checked like -j
GOLDEN_THREADS=abc golden-diff ref.h5 ref.h5 > out.txt 2> err.txt
rc=$?
if [ $rc -eq 2 ]; then ok golden-threads-checked; else notok golden-threads-checked "exit $rc"; fi
expect_grep golden-threads-why "usage: GOLDEN_THREADS: expected an integer" err.txt
expect_exit golden-threads-ok 0 env GOLDEN_THREADS=1 golden-diff ref.h5 ref.h5
# a newline in an argument stays one line in the usage error
expect_exit usage-newline 2 golden-diff "--tier" "bad
tier" ref.h5 ref.h5
expect_lines usage-newline-one-line 1 err.txt

# An unknown subcommand is a usage error (exit 2, one line) with or without --help, wherever
# --help stands, so a script can tell a missing subcommand from a present one (issue 34).
for tool in npu-replay exp-gate; do
    for args in "frobnicate" "frobnicate --help" "--help frobnicate" "frobnicate -h" "-q frobnicate --version"; do
        # shellcheck disable=SC2086
        expect_exit "unknown-subcommand-$tool-$(echo "$args" | tr ' ' '_')" 2 $tool $args
        expect_lines "unknown-subcommand-one-line-$tool-$(echo "$args" | tr ' ' '_')" 1 err.txt
        expect_grep "unknown-subcommand-format-$tool-$(echo "$args" | tr ' ' '_')" \
            "^$tool: usage: unknown subcommand 'frobnicate' \(.*\) \(see $tool --help\)$" err.txt
        if [ -s out.txt ]; then notok "unknown-subcommand-no-help-$tool-$(echo "$args" | tr ' ' '_')"; else
            ok "unknown-subcommand-no-help-$tool-$(echo "$args" | tr ' ' '_')"; fi
    done
    expect_exit "top-help-$tool" 0 $tool --help
    expect_grep "top-help-text-$tool" '^usage: ' out.txt
    expect_exit "top-version-$tool" 0 $tool -q --version
    expect_exit "no-subcommand-$tool" 2 $tool -q
    expect_grep "no-subcommand-why-$tool" "usage: a subcommand is required" err.txt
done
expect_exit subcommand-help-npu-replay 0 npu-replay run --help
expect_exit subcommand-help-exp-gate 0 exp-gate decide --help
expect_exit subcommand-not-first 2 npu-replay -q run
expect_grep subcommand-not-first-why "usage: the subcommand comes first: npu-replay run \[OPTIONS\]" err.txt
# dag-check: its first argument is "diff" or a GRAPH file; neither is a usage error under --help
expect_exit dag-check-unknown-subcommand-help 2 dag-check dif --help
expect_lines dag-check-unknown-subcommand-one-line 1 err.txt
expect_grep dag-check-unknown-subcommand-why \
    "^dag-check: usage: 'dif' is neither a subcommand \(diff\) nor a file \(see dag-check --help\)$" err.txt
expect_exit dag-check-diff-help 0 dag-check diff --help
printf '{}\n' > g.json
expect_exit dag-check-file-help 0 dag-check g.json --help
expect_exit dag-check-stdin-help 0 dag-check - --help

# The typed option table (issue 24): the layer parses, checks the range and says it in one
# line; out of range, overflowing and trailing garbage are refused alike; 0 means 0.
typed_refused() { # NAME WANT-IN-ERR CMD...
    _n=$1; _w=$2; shift 2
    expect_exit "typed-$_n" 2 "$@"
    expect_lines "typed-$_n-one-line" 1 err.txt
    expect_grep "typed-$_n-why" "$_w" err.txt
    if [ -s out.txt ]; then notok "typed-$_n-no-output"; else ok "typed-$_n-no-output"; fi
}
G="$GOLDEN_ROOT/tests/data/graphs"
typed_refused gzip-range "^golden-dump: usage: --gzip: expected an integer from 0 to 9, got '10' \(see golden-dump --help\)$" \
    golden-dump --gzip 10 -o z.h5 ref.h5
typed_refused gzip-negative "got '-1' \(see" golden-dump --gzip -1 -o z.h5 ref.h5
typed_refused gzip-overflow "got '99999999999999999999999' \(does not fit the type\)" \
    golden-dump --gzip 99999999999999999999999 -o z.h5 ref.h5
typed_refused gzip-trailing "got '5x' \(trailing characters\)" golden-dump --gzip 5x -o z.h5 ref.h5
typed_refused gzip-space "got '5 ' \(trailing characters\)" golden-dump --gzip '5 ' -o z.h5 ref.h5
typed_refused gzip-real "got '1.5' \(trailing characters\)" golden-dump --gzip=1.5 -o z.h5 ref.h5
typed_refused gzip-hex "got '0x5' \(trailing characters\)" golden-dump --gzip 0x5 -o z.h5 ref.h5
typed_refused gzip-empty "got '' \(empty\)" golden-dump --gzip= -o z.h5 ref.h5
typed_refused limit-negative "^dag-check: usage: --limit: expected an integer >= 0, got '-1'" \
    dag-check --limit -1 "$G/redundant-wait.json"
typed_refused limit-overflow "\(does not fit the type\)" \
    dag-check --limit 99999999999999999999999 "$G/redundant-wait.json"
typed_refused limit-exp "got '1e3' \(trailing characters\)" dag-check --limit 1e3 "$G/redundant-wait.json"
expect_absent typed-refused-no-file z.h5
# the range is in --help, from the same row
expect_exit typed-help 0 golden-dump --help
expect_grep typed-help-range '^ +\(an integer from 0 to 9\)$' out.txt
expect_exit typed-help-limit 0 dag-check --help
expect_grep typed-help-limit-range '^ +\(an integer >= 0\)$' out.txt
# 0 means 0: --limit 0 shows no row (the JSON keeps all), --gzip 0 writes contiguous data
expect_exit typed-limit-zero 1 dag-check --limit 0 --json lz.json "$G/raw-across-chips-cand.json"
expect_grep typed-limit-zero-none '^  \.\.\. 1 more \(all of them in --json\)$' out.txt
if grep -q '^  RAW ' out.txt; then notok typed-limit-zero-no-row; else ok typed-limit-zero-no-row; fi
expect_exit typed-limit-one 1 dag-check --limit 1 "$G/raw-across-chips-cand.json"
expect_grep typed-limit-one-row '^  RAW +d2d0' out.txt
if command -v h5dump > /dev/null 2>&1 && [ -n "$PYTHON" ]; then
    $PYTHON -c 'import numpy; numpy.save("t.npy", numpy.arange(64, dtype=numpy.float32))'
    expect_exit typed-gzip-zero 0 golden-dump --gzip 0 --name t -o g0.h5 t.npy
    if h5dump -p g0.h5 | grep -q DEFLATE; then notok typed-gzip-zero-contiguous; else ok typed-gzip-zero-contiguous; fi
    expect_exit typed-gzip-one 0 golden-dump --gzip 1 --name t -o g1.h5 t.npy
    if h5dump -p g1.h5 | grep -q DEFLATE; then ok typed-gzip-one-deflates; else notok typed-gzip-one-deflates; fi
fi
# units, through the same parser: GOLDEN_GRAPH_STREAM_BYTES is a size (K, M, G, ...); the
# path taken shows in how an unknown top-level key is refused
printf '{"schema": "calculet-graph/v1", "queues": [], "ops": [], "opps": []}\n' > opps.json
GOLDEN_GRAPH_STREAM_BYTES=1K expect_exit typed-unit-1k 2 dag-check opps.json
expect_grep typed-unit-1k-tree 'property "opps" is not allowed' err.txt
GOLDEN_GRAPH_STREAM_BYTES=0 expect_exit typed-unit-0-streams 2 dag-check opps.json
expect_grep typed-unit-0-stream 'the graph: unknown key "opps"' err.txt
GOLDEN_GRAPH_STREAM_BYTES=64B expect_exit typed-unit-64b 2 dag-check opps.json
expect_grep typed-unit-64b-stream 'the graph: unknown key "opps"' err.txt
for bad in 1kB 1.5M 99999999999999999999999 12x -1; do
    GOLDEN_GRAPH_STREAM_BYTES=$bad expect_exit "typed-unit-bad-$bad" 2 dag-check opps.json
    expect_grep "typed-unit-bad-$bad-why" "^dag-check: usage: GOLDEN_GRAPH_STREAM_BYTES: expected a size" err.txt
done
# GOLDEN_HDF5_TIMEOUT goes through the same parser (whole seconds; 0 keeps the default)
GOLDEN_HDF5_TIMEOUT=2x expect_exit typed-hdf5-timeout-bad 2 golden-dump --list ref.h5
expect_grep typed-hdf5-timeout-why "^golden-dump: usage: GOLDEN_HDF5_TIMEOUT: expected whole seconds" err.txt
GOLDEN_HDF5_TIMEOUT=0 expect_exit typed-hdf5-timeout-zero 0 golden-dump --list ref.h5
GOLDEN_HDF5_TIMEOUT=30 expect_exit typed-hdf5-timeout-ok 0 golden-dump --list ref.h5
# "Did you mean" (issue 24): a near miss of an option, a subcommand or a document key names the
# close one, through one rule (util/suggest.h) in the option layer and the schema validator;
# a far one names none
expect_exit dym-typed 2 dag-check --limt 3 "$G/redundant-wait.json"
expect_grep dym-typed-line "^dag-check: usage: unknown option '--limt' \(did you mean --limit\?\) \(see dag-check --help\)$" err.txt
expect_exit dym-untyped 2 golden-diff --atl 1 ref.h5 ref.h5
expect_grep dym-untyped-line "^golden-diff: usage: unknown option '--atl' \(did you mean --atol\?\)" err.txt
expect_exit dym-common 2 exp-gate decide --jsn x.json .
expect_grep dym-common-line "unknown option '--jsn' \(did you mean --json\?\)" err.txt
expect_exit dym-swap 2 exp-gate summarize --bootstarp 5 .
expect_grep dym-swap-line "unknown option '--bootstarp' \(did you mean --bootstrap\?\)" err.txt
expect_exit dym-far 2 dag-check --zzzzzz "$G/redundant-wait.json"
expect_grep dym-far-none "^dag-check: usage: unknown option '--zzzzzz' \(see dag-check --help\)$" err.txt
expect_exit dym-subcommand 2 exp-gate summerize .
expect_grep dym-subcommand-line "unknown subcommand 'summerize' \(summarize, decide, matrix or pareto\) \(did you mean summarize\?\)" err.txt
expect_lines dym-subcommand-one-line 1 err.txt
# document keys: the graph (both loaders), a policy (golden-diff and manifest-verify alike)
GOLDEN_GRAPH_STREAM_BYTES=1K expect_exit dym-graph-tree 2 dag-check opps.json
expect_grep dym-graph-tree-line 'property "opps" is not allowed \(did you mean ops\?\)' err.txt
GOLDEN_GRAPH_STREAM_BYTES=0 expect_exit dym-graph-stream 2 dag-check opps.json
expect_grep dym-graph-stream-line 'unknown key "opps" \(did you mean ops\?\)' err.txt
# every JSON file streams by default since issue 35, whatever its size
expect_exit dym-graph-default 2 dag-check opps.json
expect_grep dym-graph-default-line 'opps\.json:1:[0-9]+: the graph: unknown key "opps" \(did you mean ops\?\)' err.txt
printf 'schema: calculet-diff-policy/v1\ndefualt_tier: layer\nrules: []\nzzzzzzzz: 1\n' > dym-policy.yaml
expect_exit dym-policy-verify 1 manifest-verify --schema calculet-diff-policy/v1 dym-policy.yaml
expect_grep dym-policy-verify-line 'dym-policy.yaml:2:15: .*property "defualt_tier" is not allowed \(did you mean default_tier\?\)' out.txt
expect_grep dym-policy-verify-far 'property "zzzzzzzz" is not allowed \(additionalProperties\)' out.txt
expect_exit dym-policy-diff 2 golden-diff --policy dym-policy.yaml ref.h5 ref.h5
expect_grep dym-policy-diff-line 'property "defualt_tier" is not allowed \(did you mean default_tier\?\)' err.txt
