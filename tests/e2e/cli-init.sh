# End-to-end checks of `manifest-verify --init` (a new experiment from the handbook's section 4
# template passes with to-dos only) and of grouped findings (the first few of a kind, then one
# "... and N more like this" line; the JSON report keeps them all).
. "$GOLDEN_ROOT/tests/e2e/lib.sh"

mkdir experiment
expect_exit init 0 manifest-verify --init OP-FA-0001 experiment/OP-FA-0001
expect_grep init-says 'new experiment OP-FA-0001 written' out.txt
for d in baseline candidate compile golden accuracy performance stability; do
    if [ -d "experiment/OP-FA-0001/$d" ]; then ok "init-folder-$d"; else notok "init-folder-$d"; fi
done
H=experiment/OP-FA-0001/hypothesis.yaml
expect_grep init-schema '^schema: calculet-op-experiment/v1$' $H
expect_grep init-id '^experiment_id: OP-FA-0001$' $H
expect_grep init-family '^operator_family: flash_attention' $H
expect_grep init-status '^status: planned$' $H
# the template passes with to-dos and nothing else
expect_exit init-passes 0 manifest-verify --json init.json experiment/OP-FA-0001
tr -d ' \n' < init.json > init.flat
expect_grep init-no-errors '"errors":0' init.flat
# by hand: 13 REQUIRED values in the template (hypothesis, 2 x calbin_sha256, 2 x
# compiler_oci_digest, the changed flag, 7 controlled values) and 11 section 3 assets to come
nreq=$(grep -c 'REQUIRED' $H)
if [ "$nreq" -eq 14 ]; then ok init-required-markers; else notok init-required-markers "$nreq lines"; fi
expect_grep init-todos '"todos":24' init.flat
expect_grep init-todo-rule '"rule":"required-filled"' init.flat
# the schema alone accepts it too (placeholders are allowed while planned)
expect_exit init-schema-valid 0 manifest-verify --schema calculet-op-experiment/v1 $H
# once status moves on, every REQUIRED is an error
sed -i 's/^status: planned$/status: running/' $H
expect_exit init-running-fails 1 manifest-verify experiment/OP-FA-0001
expect_grep init-running-required 'required-filled: /hypothesis is left as REQUIRED' out.txt

# refusals: an existing folder, a folder not named by the EXP_ID, a malformed EXP_ID
expect_exit init-exists 2 manifest-verify --init OP-FA-0001 experiment/OP-FA-0001
expect_grep init-exists-why '^manifest-verify: experiment/OP-FA-0001: exists' err.txt
expect_exit init-wrong-name 2 manifest-verify --init OP-FA-0002 experiment/other
expect_grep init-wrong-name-why "folder's name must be the EXP_ID" err.txt
expect_absent init-wrong-name-nothing experiment/other
expect_exit init-bad-id 2 manifest-verify --init FA1 experiment/FA1
expect_absent init-bad-id-nothing experiment/FA1
expect_exit init-no-dir 2 manifest-verify --init OP-MOE-0002
expect_grep init-no-dir-why '^manifest-verify: usage: --init EXP_ID wants one folder' err.txt
if ls experiment | grep -q tmp; then notok init-no-temp "$(ls experiment)"; else ok init-no-temp; fi
expect_exit init-moe 0 manifest-verify --init OP-MOE-0002 experiment/OP-MOE-0002
expect_grep init-moe-family '^operator_family: grouped_moe_dense' experiment/OP-MOE-0002/hypothesis.yaml

# ---- grouped findings: 240 JSON Lines lines failing the same rule ----
i=0
: > faults.jsonl
while [ $i -lt 240 ]; do echo '{"schema": "calculet-fault/v1"}' >> faults.jsonl; i=$((i + 1)); done
expect_exit grouped 1 manifest-verify --json grouped.json --schema calculet-fault/v1 faults.jsonl
rm -f grouped.json
manifest-verify --json grouped.json --schema calculet-fault/v1 faults.jsonl > grouped.txt
nfirst=$(grep -c '^faults\.jsonl:[0-9]*:[0-9]*: schema: ' grouped.txt)
# each line breaks the schema once or more; the first four findings print, the rest are summed
total=$(tr -d ' \n' < grouped.json | grep -o '"rule":"schema"' | wc -l)
if [ "$nfirst" -eq 4 ]; then ok grouped-first-four; else notok grouped-first-four "$nfirst lines"; fi
if [ "$total" -ge 240 ]; then ok grouped-json-keeps-all; else notok grouped-json-keeps-all "$total"; fi
expect_grep grouped-more-line "^faults\.jsonl: schema: \.\.\. and $((total - 4)) more like this$" grouped.txt
expect_lines grouped-short 6 grouped.txt
