#!/bin/sh
# npu-replay matrix --texts FILE --tokenizer FILE: section 5.2's fixed natural-language prompts
# and multilingual, code and numeric sets from labelled texts (examples/texts/prompts.jsonl),
# each text's ids checked against a second tokenizer (tests/tools/tok_oracle.py) and each
# case naming its set; the resulting manifest's counts checked by manifest-verify's rule.
. "$GOLDEN_ROOT/tests/e2e/lib.sh"
TEXTS="$GOLDEN_ROOT/examples/texts/prompts.jsonl"

npu-replay make-model --preset tiny --seed 3 -o m > /dev/null 2>&1
mkdir a b e
expect_exit "matrix with the shipped texts" 0 npu-replay matrix --model m --random 0 --repeated 0 \
    --texts "$TEXTS" --tokenizer m/tokenizer.json -o a/manifest.jsonl
expect_grep "it says how many texts" "^250 labelled texts from .*prompts.jsonl, one case each per output length" out.txt
count() { grep -c "\"dataset\":\"$1\"" "$2"; }
for want in fixed_prompt:100 multilingual:50 code:50 numeric:50; do
    set=${want%:*}; n=${want#*:}
    got=$(count "$set" a/manifest.jsonl)
    [ "$got" -eq "$n" ] && ok "$n $set cases (the corpus's lines of that domain)" || notok "$n $set cases" "$got"
done
expect_exit "every line is calculet-input-manifest/v1" 0 manifest-verify --schema calculet-input-manifest/v1 a/manifest.jsonl
expect_exit "every token file has the hash the manifest says" 0 sh -c '
    grep -o "\"path\":\"[^\"]*\",\"sha256\":\"[0-9a-f]*\"" a/manifest.jsonl | sed "s/\"path\":\"\([^\"]*\)\",\"sha256\":\"\(.*\)\"/\2  a\/\1/" > sums
    [ "$(wc -l < sums)" -ge 250 ] && sha256sum -c --quiet sums'

# the ids of every text against the second implementation of the tokenizer
PY=""
if /usr/bin/python3 -c 'import regex, unicodedata' 2>/dev/null; then PY=/usr/bin/python3; fi
if [ -n "$PY" ]; then
    cat > check.py <<'EOF'
import json, sys
sys.path.insert(0, sys.argv[1])
from tok_oracle import Tokenizer
tok = Tokenizer(sys.argv[2])
cases = {}
for l in open(sys.argv[4]):
    c = json.loads(l)
    cases[c["case_id"]] = c
k, bad = {}, 0
for l in open(sys.argv[3], encoding="utf-8"):
    t = json.loads(l)
    d = t["domain"]
    i = k.get(d, 0); k[d] = i + 1
    c = cases.get("%s-%04d-o1" % (d, i))
    want = tok.encode(t["text"])
    got = json.load(open("a/" + c["input"]["path"])) if c else None
    if not c or c["dataset"] != d or got != want or c["prompt_tokens"] != len(want):
        bad += 1
        if bad < 3:
            print("mismatch", d, i, want[:8], got[:8] if got else None)
print("checked %d texts, %d mismatches" % (sum(k.values()), bad))
EOF
    "$PY" check.py "$GOLDEN_ROOT/tests/tools" m/tokenizer.json "$TEXTS" a/manifest.jsonl > chk.txt 2>&1
    expect_grep "every text's ids are the oracle's" "^checked 250 texts, 0 mismatches" chk.txt
else
    ok "oracle comparison # skip: /usr/bin/python3 has no regex module"
fi

# one case per output length of the hypothesis
printf 'matrix:\n  prompt_tokens: [4]\n  past_tokens: []\n  output_tokens: [1, 4]\n' > h.yaml
expect_exit "texts with two output lengths" 0 npu-replay matrix --model m --hypothesis h.yaml \
    --random 0 --repeated 0 --texts "$TEXTS" --tokenizer m/tokenizer.json -o b/manifest.jsonl
n=$(grep -c '"case_id":"code-[0-9]*-o4"' b/manifest.jsonl)
[ "$n" -eq 50 ] && ok "50 code cases with 4 output tokens" || notok "50 code cases with 4 output tokens" "$n"

# bad input: one line naming the file, exit 2, nothing left behind
bad() { # NAME TEXTLINE PATTERN
    printf '%s\n' '{"domain": "code", "text": "x = 1"}' "$2" > e/t.jsonl
    expect_exit "$1: could not check" 2 npu-replay matrix --model m --random 0 --repeated 0 \
        --texts e/t.jsonl --tokenizer m/tokenizer.json -o e/manifest.jsonl
    expect_grep "$1: one line naming the file" "^npu-replay: e/t.jsonl.*$3" err.txt
    expect_absent "$1: no manifest" e/manifest.jsonl
    expect_absent "$1: no token files" e/inputs
}
bad "unknown domain" '{"domain": "poetry", "text": "roses"}' "domain must be one of fixed_prompt, multilingual, code, numeric"
bad "unknown key" '{"domain": "code", "text": "y", "lang": "c"}' "unknown key 'lang'"
bad "empty text" '{"domain": "code", "text": ""}' "text must be a non-empty string"
bad "not an object" '["code", "z"]' "is not an object"
bad "not JSON" '{"domain": "code", "text": ' ""
: > e/t.jsonl
expect_exit "an empty texts file: could not check" 2 npu-replay matrix --model m --random 0 --repeated 0 \
    --texts e/t.jsonl --tokenizer m/tokenizer.json -o e/manifest.jsonl
expect_grep "says no text" "no text in the file" err.txt
# a tokenizer that is not the model's: with vocab 4096 it learns more merges, and its special
# token <|endoftext|> comes after them (id 542, checked with tok-tool encode), beyond the tiny
# model's 512 ids
tok-tool synth big.json 4096
printf '%s\n' '{"domain": "fixed_prompt", "text": "a prompt <|endoftext|>"}' > e/t.jsonl
expect_exit "a tokenizer with ids beyond the model's vocabulary: could not check" 2 npu-replay matrix \
    --model m --random 0 --repeated 0 --texts e/t.jsonl --tokenizer big.json -o e/manifest.jsonl
expect_grep "says the tokenizer is not the model's" "the tokenizer is not the model's" err.txt
rm -rf e/manifest.jsonl e/inputs
expect_exit "--texts without --tokenizer is a usage error" 2 npu-replay matrix --model m --texts e/t.jsonl -o e/manifest.jsonl
expect_grep "says they go together" "go together" err.txt
expect_exit "--tokenizer without --texts is a usage error" 2 npu-replay matrix --model m --tokenizer m/tokenizer.json -o e/manifest.jsonl
