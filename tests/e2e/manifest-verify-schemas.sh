# --schema mode over the example documents of every schema in tests/data/schemas/FORMAT/:
# valid/ documents pass, each invalid/KEYWORD--what.ext fails naming KEYWORD.
. "$GOLDEN_ROOT/tests/e2e/lib.sh"
DATA="$GOLDEN_ROOT/tests/data/schemas"
n=0
for dir in "$DATA"/*/v*/; do
    format=${dir#"$DATA"/}; format=${format%/}
    for doc in "$dir"valid/*; do
        [ -f "$doc" ] || continue
        n=$((n + 1))
        expect_exit "$format valid $(basename "$doc")" 0 manifest-verify --schema "$format" "$doc"
    done
    for doc in "$dir"invalid/*; do
        [ -f "$doc" ] || continue
        n=$((n + 1))
        base=$(basename "$doc"); keyword=${base%%--*}
        expect_exit "$format invalid $base" 1 manifest-verify --schema "$format" "$doc"
        expect_grep "$format invalid $base names ($keyword)" "\\($keyword\\)" out.txt
        expect_grep "$format invalid $base has a position" "^[^ ]+:[0-9]+:[0-9]+: schema: " out.txt
    done
done
if [ "$n" -ge 40 ]; then ok "schema examples found ($n)"; else notok "schema examples found" "only $n"; fi

# every experiment format has examples both ways
for f in calculet-op-experiment calculet-calbin-manifest calculet-input-manifest \
         calculet-calibration-manifest calculet-accuracy-result calculet-raw-request \
         calculet-perf-summary calculet-fault calculet-handoff calculet-verify-report; do
    if ls "$DATA/$f/v1/valid/"* > /dev/null 2>&1 && ls "$DATA/$f/v1/invalid/"* > /dev/null 2>&1; then
        ok "$f has valid and invalid examples"; else notok "$f has valid and invalid examples"; fi
done

# schema named by file name, by $id and by path all work
V="$DATA/calculet-fault/v1/valid/faults.jsonl"
expect_exit "schema by file name" 0 manifest-verify --schema calculet-fault-v1.schema.json "$V"
expect_exit "schema by \$id" 0 manifest-verify --schema https://calculet.invalid/schemas/calculet-fault-v1.schema.json "$V"
expect_exit "schema by path" 0 manifest-verify --schema "$GOLDEN_ROOT/schemas/calculet-fault-v1.schema.json" "$V"
expect_exit "unknown schema exits 2" 2 manifest-verify --schema calculet-nothing/v9 "$V"

# JSONL: every line checked, line numbers are the file's
cp "$DATA/calculet-raw-request/v1/valid/requests.jsonl" r.jsonl
sed -i -e '3s/"warmup":true/"warmup":"yes"/' -e '7s/"side":"baseline"/"side":"both"/' r.jsonl
expect_exit "two bad lines fail" 1 manifest-verify --schema calculet-raw-request/v1 r.jsonl
expect_grep "line 3 reported" "^r.jsonl:3:[0-9]+: schema: .*\(type\)" out.txt
expect_grep "line 7 reported" "^r.jsonl:7:[0-9]+: schema: .*\(enum\)" out.txt
expect_grep "12 lines counted" "12 documents" out.txt
: > empty.jsonl
expect_exit "empty JSONL passes" 0 manifest-verify --schema calculet-fault/v1 empty.jsonl
# several documents at once, mixed YAML and JSON; all violations reported
expect_exit "many documents, one bad" 1 manifest-verify --schema calculet-op-experiment/v1 \
    "$DATA/calculet-op-experiment/v1/valid/handbook-template.yaml" \
    "$DATA/calculet-op-experiment/v1/valid/handbook-template.json" \
    "$DATA/calculet-op-experiment/v1/invalid/enum--status-unknown.yaml"
expect_grep "summary counts three documents" "3 documents, 0 files hashed, 1 error" out.txt
expect_exit "--json in schema mode" 1 manifest-verify --json s.json --junit s.xml \
    --schema calculet-op-experiment/v1 "$DATA/calculet-op-experiment/v1/invalid/enum--status-unknown.yaml"
expect_grep "json has the pointer" '"pointer": "/status"' s.json
expect_grep "junit schema case failed" '<failure' s.xml
expect_exit "missing document exits 2" 2 manifest-verify --schema calculet-fault/v1 nothing.json
