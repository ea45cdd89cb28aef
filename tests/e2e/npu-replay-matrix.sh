#!/bin/sh
# npu-replay matrix: section 5's lengths and content sets, reproducible from the seed, token files
# referenced with their hashes, rejection cases beyond the context limit, expert coverage proven.
. "$GOLDEN_ROOT/tests/e2e/lib.sh"

npu-replay make-model --preset tiny --seed 3 -o m > /dev/null 2>&1
mkdir a b c h h/lim h/m4 h/m5 h/nt
expect_exit "matrix with section 5.1 defaults up to 2 tokens" 0 npu-replay matrix --model m --max-len 2 -o a/manifest.jsonl
expect_grep "matrix reports coverage" 'every expert hit: yes' out.txt
# 2 prefill lengths (1, 2) and 2 decode pasts (0, 1), each 20 random + 10 repeated
expect_exit "120 random/repeated cases" 0 sh -c '[ "$(grep -c "\"dataset\":\"r" a/manifest.jsonl)" -eq 120 ]'
expect_exit "20 random cases of prefill length 2" 0 sh -c '[ "$(grep -c "\"case_id\":\"random-prefill-p2-" a/manifest.jsonl)" -eq 20 ]'
# section 5.2 counts distinct prompts: 90 of the 120 are one token (prefill 1, past 0 and 1),
# and no two of the 120 token files carry the same ids
expect_exit "120 distinct random/repeated prompts" 0 sh -c '[ "$(cat a/inputs/random-*.json a/inputs/repeated-*.json | sort -u | wc -l)" -eq 120 ]'
expect_exit "every line is calculet-input-manifest/v1" 0 sh -c \
    'while IFS= read -r l; do printf "%s\n" "$l" > line.json; schema-check line.json calculet-input-manifest-v1.schema.json > /dev/null || exit 1; done < a/manifest.jsonl'
expect_exit "every token file has the hash the manifest says" 0 sh -c '
    grep -o "\"path\":\"[^\"]*\",\"sha256\":\"[0-9a-f]*\"" a/manifest.jsonl | sed "s/\"path\":\"\([^\"]*\)\",\"sha256\":\"\(.*\)\"/\2  a\/\1/" > sums
    [ -s sums ] && sha256sum -c --quiet sums'
expect_exit "same seed, same matrix" 0 npu-replay matrix --model m --max-len 2 -o b/manifest.jsonl
expect_exit "reproducible manifest and token files" 0 sh -c 'cmp a/manifest.jsonl b/manifest.jsonl && diff -r a/inputs b/inputs'
expect_exit "another seed" 0 npu-replay matrix --model m --max-len 2 --seed 9 -o c/manifest.jsonl
if cmp -s a/manifest.jsonl c/manifest.jsonl; then notok "another seed, another matrix"; else ok "another seed, another matrix"; fi
expect_exit "manifest exists without --force" 2 npu-replay matrix --model m --max-len 2 -o a/manifest.jsonl

# the tiny model holds 512 positions: 513-token prompts and 511-token pasts + 8 steps are rejections
cat > h/hyp.yaml <<'Y'
matrix:
  prompt_tokens: [16, 512, 513]
  past_tokens: [4, 511]
  output_tokens: [1, 4]
Y
expect_exit "matrix from a hypothesis" 0 npu-replay matrix --model m --hypothesis h/hyp.yaml --random 1 --repeated 1 -o h/manifest.jsonl
expect_exit "prompt 513 is a rejection" 0 sh -c 'grep "random-prefill-p513-o1-00" h/manifest.jsonl | grep -q "\"rejection\":true,\"expected_error\":\"context_limit_exceeded\""'
expect_exit "prompt 512 + 1 output is a rejection" 0 sh -c 'grep "random-prefill-p512-o1-00" h/manifest.jsonl | grep -q "\"rejection\":true"'
expect_exit "past 511 + 8 steps is a rejection" 0 sh -c 'grep "random-decode-past511-o8-00" h/manifest.jsonl | grep -q "\"rejection\":true"'
expect_exit "prompt 16 is submitted" 0 sh -c 'grep "random-prefill-p16-o4-00" h/manifest.jsonl | grep -q "\"rejection\":false"'
printf 'matrix:\n  prompt_tokens: [100, 101]\n  past_tokens: []\n  context_limit: 101\n' > h/lim.yaml
expect_exit "hypothesis context_limit" 0 npu-replay matrix --model m --hypothesis h/lim.yaml --random 1 --repeated 1 -o h/lim/lim.jsonl
expect_exit "the hypothesis' smaller limit makes 101 + 1 a rejection" 0 sh -c 'grep "random-prefill-p101-o1-00" h/lim/lim.jsonl | grep -q "\"rejection\":true" && grep "random-prefill-p100-o1-00" h/lim/lim.jsonl | grep -q "\"rejection\":false"'
expect_exit "rejection cases carry no token file" 0 sh -c '! grep "\"rejection\":true" h/manifest.jsonl | grep -q "\"input\""'
printf '[1, 2, 3]\n[500, 4]\n' > h/prompts.jsonl
expect_exit "fixed prompts" 0 npu-replay matrix --model m --hypothesis h/hyp.yaml --prompts h/prompts.jsonl --random 1 --repeated 1 -o h/m2.jsonl
expect_grep "fixed prompt case" '"case_id":"fixed-0001-o4".*"prompt_tokens":2' h/m2.jsonl
# the prompts go through the document layer's JSON Lines reader (issue 24): a broken line, a
# NUL byte or invalid UTF-8 is refused at file:line:col (json_loads said "line 2 is not a list")
printf '[1, 2]\n[3, \n' > h/broken.jsonl
expect_exit "a broken prompts line exits 2" 2 npu-replay matrix --model m --prompts h/broken.jsonl --max-len 1 -o h/m4/m4.jsonl
expect_grep "... placed" 'h/broken.jsonl:2:' err.txt
printf '[1, 2]\n["\377"]\n' > h/utf8.jsonl
expect_exit "invalid UTF-8 in prompts exits 2" 2 npu-replay matrix --model m --prompts h/utf8.jsonl --max-len 1 -o h/m5/m5.jsonl
expect_grep "... placed" 'h/utf8.jsonl:2:' err.txt
printf '[1, 2, 9999]\n' > h/badprompts.jsonl
expect_exit "a fixed prompt outside the vocabulary exits 2" 2 npu-replay matrix --model m --prompts h/badprompts.jsonl --max-len 1 -o h/m3.jsonl
expect_absent "no manifest after an error" h/m3.jsonl
echo 'matrix: {prompt_tokens: [1, "x"]}' > h/bad.yaml
expect_exit "bad hypothesis exits 2" 2 npu-replay matrix --model m --hypothesis h/bad.yaml -o h/m4/m4.jsonl
expect_grep "bad hypothesis names the item" 'prompt_tokens/1' err.txt

# coverage: running the coverage cases, the router taps hit every expert of every layer
npu-replay run --model m --manifest a/manifest.jsonl --side baseline --golden cov.h5 --raw cov.jsonl \
    --warmup 0 --runs 1 --cases 'coverage-*' --taps 'layers/*/router/topk_ids' > /dev/null 2>&1
if [ -n "$PYTHON" ]; then
    "$PYTHON" - <<'PY'
import h5py, numpy as np
f = h5py.File("cov.h5", "r"); hit = np.zeros((2, 16), bool); n = 0
for c in f["cases"]:
    n += 1
    for l in range(2):
        hit[l, f["cases/%s/layers/%d/router/topk_ids" % (c, l)][()].ravel()] = True
print(("ok" if n > 0 and hit.all() else "not ok") + " coverage cases hit all %d experts (%d hit, %d cases)" % (hit.size, hit.sum(), n))
only = all(k in ("input_ids", "tokens", "logits", "layers") for c in f["cases"] for k in f["cases/" + c])
print(("ok" if only and "logits" not in f["cases/%s/layers/0" % c] and "hidden" not in f["cases/%s/layers/0" % c] else "not ok") + " --taps LIST keeps only the listed taps")
PY
fi
# near ties: a loose margin finds some, and each is a one-token prefill case
expect_exit "near-tie search" 0 npu-replay matrix --model m --max-len 1 --random 1 --repeated 1 --near-ties 200 --near-tie-margin 0.05 -o h/nt/nt.jsonl
expect_grep "near-tie cases written" '"dataset":"near_tie_logits"' h/nt/nt.jsonl

# Two manifests in one folder share inputs/: a second matrix with other ids for the same case ids
# must not overwrite the first one's token files (their hashes are in the first manifest).
mkdir s
npu-replay matrix --model m --max-len 2 -o s/one.jsonl > /dev/null 2>&1
sums_of() { grep -o "\"path\":\"[^\"]*\",\"sha256\":\"[0-9a-f]*\"" "$1" | sed "s/\"path\":\"\([^\"]*\)\",\"sha256\":\"\(.*\)\"/\2  s\/\1/"; }
sums_of s/one.jsonl > one.sums
expect_exit "shared inputs/: a second manifest with other ids is refused" 2 \
    npu-replay matrix --model m --max-len 2 --seed 9 -o s/two.jsonl
expect_grep "shared inputs/: the error names the token file and --force" \
    "s/inputs/random-.*exists with other token ids.*--force" err.txt
expect_exit "shared inputs/: no second manifest left" 1 test -e s/two.jsonl
expect_exit "shared inputs/: the first manifest's token files unchanged" 0 sha256sum -c --quiet one.sums
expect_exit "shared inputs/: the same ids under a second name are reused" 0 \
    npu-replay matrix --model m --max-len 2 -o s/three.jsonl
expect_exit "shared inputs/: and still match the first manifest" 0 sha256sum -c --quiet one.sums
expect_exit "shared inputs/: --force overwrites" 0 \
    npu-replay matrix --model m --max-len 2 --seed 9 --force -o s/two.jsonl
sums_of s/two.jsonl > two.sums
expect_exit "shared inputs/: the forced manifest's hashes hold" 0 sha256sum -c --quiet two.sums
