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
expect_exit unique-prefix 0 golden-diff --allow-miss ref.h5 ref.h5
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
