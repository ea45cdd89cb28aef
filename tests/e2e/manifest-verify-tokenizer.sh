#!/bin/sh
# Rule tokenizer-hash: the tokenizer file (the folder's tokenizer.json or --tokenizer FILE)
# hashes to the hypothesis's controlled.tokenizer_hash and the calibration manifest's
# tokenizer_sha256. Works on a copy of the example experiment, unsealed.
. "$GOLDEN_ROOT/tests/e2e/lib.sh"

cp -r "$GOLDEN_ROOT/examples/experiment/OP-MOE-0001" OP-MOE-0001
rm OP-MOE-0001/SHA256SUMS
expect_exit "the unsealed copy passes (no tokenizer file: nothing to check)" 0 manifest-verify OP-MOE-0001
tok-tool synth tok.json 512
tok-tool synth other.json 4096
real=$(sha256sum tok.json | cut -d' ' -f1)
old=7d22c09155b3fb77f63e065f5251cf939c968a067e829a978db55a6bcb6f5867

# The example's hash is not this file's: both places are findings.
cp tok.json OP-MOE-0001/tokenizer.json
expect_exit "a folder tokenizer.json of another hash fails" 1 manifest-verify OP-MOE-0001
expect_grep "the hypothesis's hash is named" \
    "OP-MOE-0001/hypothesis.yaml:[0-9]+:[0-9]+: tokenizer-hash: controlled.tokenizer_hash 7d22c09155b3\.\.\. is not the sha256 of OP-MOE-0001/tokenizer.json \(${real%"${real#????????????}"}\.\.\.\)" out.txt
expect_grep "the calibration manifest's line is named" \
    "OP-MOE-0001/golden/calibration-manifest.jsonl:1:1: tokenizer-hash: tokenizer_sha256 7d22c09155b3" out.txt
n=$(grep -c "tokenizer-hash" out.txt)
if [ "$n" -eq 2 ]; then ok "exactly two tokenizer-hash findings"; else notok "exactly two tokenizer-hash findings" "$n"; fi

# Every place names the real file's hash: passes, and the file counts as hashed.
for f in hypothesis.yaml baseline/manifest.json candidate/manifest.json golden/calibration-manifest.jsonl; do
    sed "s/$old/$real/g" OP-MOE-0001/$f > x && mv x OP-MOE-0001/$f
done
manifest-verify OP-MOE-0001 > before.txt 2>&1
expect_exit "the matching tokenizer.json passes" 0 manifest-verify OP-MOE-0001
h_with=$(sed -n 's/.* \([0-9]*\) files* hashed.*/\1/p' out.txt)
mv OP-MOE-0001/tokenizer.json aside.json
manifest-verify OP-MOE-0001 > out2.txt 2>&1
h_without=$(sed -n 's/.* \([0-9]*\) files* hashed.*/\1/p' out2.txt)
if [ -n "$h_with" ] && [ "$h_with" -eq $((h_without + 1)) ]; then ok "the tokenizer counts as a hashed file"; else
    notok "the tokenizer counts as a hashed file" "$h_with vs $h_without"; fi

# --tokenizer FILE instead of the folder's file.
expect_exit "--tokenizer with the right file passes" 0 manifest-verify --tokenizer tok.json OP-MOE-0001
expect_exit "--tokenizer with another file fails" 1 manifest-verify --tokenizer other.json OP-MOE-0001
expect_grep "the finding names the given file" "is not the sha256 of other.json" out.txt
cp other.json OP-MOE-0001/tokenizer.json
expect_exit "--tokenizer wins over the folder's tokenizer.json" 0 manifest-verify --tokenizer tok.json OP-MOE-0001
rm OP-MOE-0001/tokenizer.json
expect_exit "--tokenizer naming no file: could not check" 2 manifest-verify --tokenizer missing.json OP-MOE-0001
expect_grep "one line naming the file" "^manifest-verify: missing.json: " err.txt
expect_exit "--tokenizer with --schema is a usage error" 2 manifest-verify --tokenizer tok.json \
    --schema calculet-fault/v1 x.json

# Nothing names a hash (a planned folder): an explicit --tokenizer is a finding, not a pass.
manifest-verify --init OP-MOE-0002 OP-MOE-0002 > /dev/null 2>&1
expect_exit "--tokenizer with nothing to compare fails" 1 manifest-verify --tokenizer tok.json OP-MOE-0002
expect_grep "and says so" "tokenizer-hash: --tokenizer tok.json given, but neither" out.txt
expect_exit "without --tokenizer the planned folder still passes" 0 manifest-verify OP-MOE-0002
