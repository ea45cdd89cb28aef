# The complete examples of docs/fields.md are valid: every block marked
# "<!-- check: SCHEMA -->" is cut out and validated against SCHEMA; the graph one also passes
# dag-check. A schema change that breaks a documented example fails here.
. "$GOLDEN_ROOT/tests/e2e/lib.sh"

awk '
    /^<!-- check: / { schema = $3; next }
    schema != "" && /^```/ { if (inblock) { close(out); schema = ""; inblock = 0 } else { n++; out = sprintf("ex%02d.json", n); print schema > "schemas.txt"; inblock = 1 } ; next }
    inblock { print > out }
' "$GOLDEN_ROOT/docs/fields.md"
n=$(wc -l < schemas.txt | tr -d ' ')
if [ "$n" -eq 5 ]; then ok fields-examples-found; else notok fields-examples-found "$n blocks"; fi
i=0
while read -r schema; do
    i=$((i + 1))
    f=$(printf 'ex%02d.json' $i)
    name=fields-$(echo "$schema" | tr '/' '-')
    expect_exit "$name" 0 manifest-verify --schema "$schema" "$f"
    expect_grep "$name-0-errors" '0 errors' out.txt
    if [ "$schema" = calculet-graph/v1 ]; then
        expect_exit fields-graph-race-free 0 dag-check --redundant "$f"
        expect_grep fields-graph-idle-barrier '^  bar0 ' out.txt
    fi
done < schemas.txt
