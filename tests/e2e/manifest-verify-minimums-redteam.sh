#!/bin/sh
# Red team: manifest-verify rule input-minimums (handbook 5.2) and npu-replay matrix --texts.
# Written from docs/manifest-verify.md ("input-minimums" row of the rules table, the
# input_minimums / input_minimums_waiver rows of the op-experiment schema table),
# docs/npu-replay.md ("## matrix", "Labelled texts"), docs/tokenizer.md, issue 32 and the
# handbook section 5.2 (100 fixed prompts; 20 random / 10 repeated per length; 50 each of
# multilingual, code, numeric; every expert of every layer hit; 1,000 near-tie steps).
#
# Fixture: a `manifest-verify --init` folder (status planned: every absent asset and every
# REQUIRED is a to-do, exit 0), whose hypothesis matrix is cut to prompt_tokens [4],
# output_tokens [1], and a golden/input-manifest.jsonl with token files that meets every
# minimum exactly: 100 fixed_prompt, 20 random_tokens and 10 repeated_tokens at prompt length 4,
# 50 multilingual/code/numeric, 1000 near_tie_logits (all distinct token lists, 4 ids each) and
# 2 moe_expert_coverage cases whose router taps (made with the make-golden helper in
# golden/run.h5, 3 layers x 8 experts, topk_ids 4x2 = ids 0..7) hit every expert of every layer.
# Each case then removes or adds exactly one thing, so the expected count is worked out by hand.
. "$GOLDEN_ROOT/tests/e2e/lib.sh"
MV="$GOLDEN_BIN/manifest-verify"
NR="$GOLDEN_BIN/npu-replay"
EX=OP-MOE-0009

if [ -z "$PYTHON" ]; then
    echo "ok minimums3-all # skip no numpy"; exit 0
fi

cat > gen.py <<'EOF'
import json, sys, os, hashlib, re, subprocess
# gen.py DIR SPECJSON: fill an --init folder with an input manifest, token files, a golden.
d = sys.argv[1]; spec = json.loads(sys.argv[2])
n = dict(fixed_prompt=100, random_tokens=20, repeated_tokens=10, multilingual=50, code=50,
         numeric=50, near_tie_logits=1000, moe_expert_coverage=2)
n.update(spec.get("counts", {}))
os.makedirs(d + "/golden/inputs", exist_ok=True)
code = dict(fixed_prompt=1, random_tokens=2, repeated_tokens=3, multilingual=4, code=5,
            numeric=6, near_tie_logits=7, moe_expert_coverage=8)
lines = []
def put(path, b):
    # the folder is a hard-linked copy of a base fixture: never write through a shared link
    if os.path.exists(path):
        if open(path, "rb").read() == b:
            return
        os.unlink(path)
    open(path, "wb").write(b)
def add(cid, ds, toks, phase="prefill", past=0, out=1, raw=None, samefile=None, rej=False, ptok=None):
    if phase == "prefill":
        p = len(toks) if toks is not None else ptok
    else:
        p = 1 if past == 0 else 0
    rec = {"case_id": cid, "phase": phase, "prompt_tokens": p, "past_tokens": past,
           "output_tokens": out, "concurrency": 1, "dataset": ds, "seed": 0, "rejection": rej}
    if rej:
        rec["expected_error"] = "context_limit_exceeded"
    if samefile is not None:
        b = open(d + "/golden/inputs/" + samefile + ".json", "rb").read()
        rec["input"] = {"path": "inputs/" + samefile + ".json", "sha256": hashlib.sha256(b).hexdigest()}
    elif toks is not None:
        b = raw.encode() if raw is not None else json.dumps(toks).encode()
        put(d + "/golden/inputs/" + cid + ".json", b)
        rec["input"] = {"path": "inputs/" + cid + ".json", "sha256": hashlib.sha256(b).hexdigest()}
    lines.append(rec)
for ds, cnt in n.items():
    for i in range(cnt):
        t = [100 + i] * 4 if ds == "repeated_tokens" else [code[ds], i // 100, i % 100, 9]
        add("%s-%04d" % (ds, i), ds, t)
for e in spec.get("extra", []):
    add(e["id"], e["ds"], e.get("toks"), e.get("phase", "prefill"), e.get("past", 0),
        e.get("out", 1), e.get("raw"), e.get("samefile"), e.get("rej", False), e.get("ptok"))
put(d + "/golden/input-manifest.jsonl", "".join(json.dumps(r) + "\n" for r in lines).encode())
g = spec.get("golden", "full")
if os.path.exists(d + "/golden/run.h5"):
    os.unlink(d + "/golden/run.h5")
if g != "none":
    specs = []
    prefix = spec.get("golden_prefix", "moe_expert_coverage")
    for c in range(2):
        cid = "%s-%04d" % (prefix, c)
        for L in range(3):
            ids = [0, 1, 2, 3, 4, 5, 6, 7]
            if g == "miss5l2" and L == 2:
                ids = [4 if x == 5 else x for x in ids]
            if g == "notaps":
                specs.append("cases/%s/layers/%d/mlp_out:f32:4x8:fill=0" % (cid, L))
            else:
                specs.append("cases/%s/layers/%d/router/topk_ids:i32:4x2:values=%s" % (cid, L, ",".join(map(str, ids))))
                specs.append("cases/%s/layers/%d/router/logits:f32:4x8:fill=0" % (cid, L))
    subprocess.check_call(["make-golden", d + "/golden/run.h5"] + specs, stdout=subprocess.DEVNULL)
hy = open(d + "/hypothesis.yaml").read()
mx = spec.get("matrix", "  prompt_tokens: [4]\n  output_tokens: [1]\n  concurrency: [1]\n  context_limit: 40960\n")
hy = re.sub(r"matrix:.*?\nmetrics:", "matrix:\n" + mx + "metrics:", hy, flags=re.S)
hy += spec.get("hyp", "")
put(d + "/hypothesis.yaml", hy.encode())
EOF

# The base fixture (all minimums met) is made once; each case starts from a hard-linked copy
# (gen.py unlinks before it changes a file), which keeps the script well under 60 s.
mkdir base && "$MV" --init "$EX" "base/$EX" > /dev/null 2>&1
cp "base/$EX/hypothesis.yaml" base.hyp
"$PYTHON" gen.py "base/$EX" '{}' > /dev/null 2>&1
rm -f "base/$EX/golden/run.h5"
# flat FILE: the findings of FILE on one line (to-dos of the planned folder left out)
flat() { grep -v -e 'todo layout' -e 'todo required-filled' "$1" | tr '\n' ' ' | head -c 400; }

# mk SPEC: a fresh experiment folder $EX made from SPEC (see gen.py)
mk() {
    rm -rf "$EX" out.txt err.txt
    mkdir "$EX" && cp -al "base/$EX/." "$EX"/ && rm -f "$EX/hypothesis.yaml" && cp base.hyp "$EX/hypothesis.yaml" &&
    "$PYTHON" gen.py "$EX" "$1" 2> gen.err
}
# mv_case NAME WANT PATTERN SPEC: build, check, exit WANT, and (when PATTERN) stdout matches it
mv_case() {
    _n=$1; _w=$2; _p=$3
    if ! mk "$4"; then notok "$_n" "fixture: $(head -c 300 gen.err)"; return; fi
    "$MV" "$EX" > out.txt 2> err.txt; _g=$?
    if [ "$_g" -ne "$_w" ]; then
        notok "$_n" "exit $_g, wanted $_w: $(flat out.txt) $(head -c 200 err.txt)"
    elif [ -n "$_p" ] && ! grep -Eq -- "$_p" out.txt; then
        notok "$_n" "no /$_p/ in: $(flat out.txt)"
    else ok "$_n"; fi
}

# 1. The fixture meets every section 5.2 minimum exactly (counts above), so input-minimums
#    has no error: exit 0 (status planned, the rest are to-dos).
mv_case mv-good-exact-minimums 0 '^PASS' '{}'

# 2-8. One short of each content minimum (5.2; rules table: "at least 100 fixed_prompt, 20
#    random_tokens and 10 repeated_tokens at every length, ... 50 each of multilingual, code,
#    numeric, 1,000 near_tie_logits steps"). Exit 1 and the finding names the class.
mv_case mv-fixed-99 1 'input-minimums: .*fixed_prompt' '{"counts":{"fixed_prompt":99}}'
mv_case mv-random-19-at-4 1 'input-minimums: .*random_tokens' '{"counts":{"random_tokens":19}}'
mv_case mv-repeated-9-at-4 1 'input-minimums: .*repeated_tokens' '{"counts":{"repeated_tokens":9}}'
mv_case mv-multilingual-49 1 'input-minimums: .*multilingual' '{"counts":{"multilingual":49}}'
mv_case mv-code-49 1 'input-minimums: .*code' '{"counts":{"code":49}}'
mv_case mv-numeric-49 1 'input-minimums: .*numeric' '{"counts":{"numeric":49}}'
mv_case mv-near-tie-999 1 'input-minimums: .*near_tie' '{"counts":{"near_tie_logits":999}}'

# 9. "20 random_tokens ... at every length (each prefill prompt length ... of a random or
#    repeated case)": one more random case at prompt length 8 creates length 8 with 1 of 20.
mv_case mv-random-lone-length-8 1 'input-minimums: .*random_tokens.*8' \
  '{"extra":[{"id":"rnd-p8","ds":"random_tokens","toks":[2,9,9,9,9,9,9,9]}]}'

# 10. The same for a decode past length: one repeated decode case at past 5 -> 1 of 10 at 5.
mv_case mv-repeated-decode-past-5 1 'input-minimums: .*repeated_tokens.*5' \
  '{"extra":[{"id":"rep-d5","ds":"repeated_tokens","phase":"decode","past":5,"toks":[7,7,7,7,7]}]}'

# 11. "each of the hypothesis's matrix lengths a case can run at: prompt_tokens p with p + 1
#    within the context limit": the matrix adds prompt length 8 (8+1 <= 40960) but no random or
#    repeated case has it -> 0 of 20 random at 8 is an input-minimums finding (input-matrix
#    fails too; we look for the minimums finding).
mv_case mv-matrix-length-8-uncovered 1 'input-minimums: .*random_tokens.*8' \
  '{"matrix":"  prompt_tokens: [4, 8]\n  output_tokens: [1]\n  concurrency: [1]\n  context_limit: 40960\n","extra":[{"id":"num-p8","ds":"numeric","toks":[6,7,7,7,7,7,7,7]}]}'

# 12. "past_tokens q > 0": a matrix past length 0 demands no random/repeated set. The decode
#    case at past 0 is a numeric case (51 numeric, fine), so everything passes: exit 0.
mv_case mv-matrix-past-0-not-demanded 0 '^PASS' \
  '{"matrix":"  prompt_tokens: [4]\n  past_tokens: [0]\n  output_tokens: [1]\n  concurrency: [1]\n  context_limit: 40960\n","extra":[{"id":"num-d0","ds":"numeric","phase":"decode","past":0,"out":8,"toks":[6]}]}'

# 13. Duplicates: "distinct prompts by the hash of their token ids". 99 fixed + a 100th whose
#    token file repeats fixed_prompt-0000's ids ([1,0,0,9]) -> 99 distinct -> exit 1.
mv_case mv-dup-same-tokens 1 'input-minimums: .*fixed_prompt' \
  '{"counts":{"fixed_prompt":99},"extra":[{"id":"fx-copy","ds":"fixed_prompt","toks":[1,0,0,9]}]}'

# 14. The same ids written differently ("[1,0,0,9]" vs json.dumps' "[1, 0, 0, 9]"): the hash is
#    of the token ids, not of the file bytes, so still 99 distinct -> exit 1.
mv_case mv-dup-same-ids-other-bytes 1 'input-minimums: .*fixed_prompt' \
  '{"counts":{"fixed_prompt":99},"extra":[{"id":"fx-copy","ds":"fixed_prompt","toks":[1,0,0,9],"raw":"[1,0,0,9]\n"}]}'

# 14b. Numbers section: "a real that is a whole number ... is the integer it spells" (the one
#     accessor every rule reads through): a token file "[1.0,0,0,9]" holds the ids 1,0,0,9 of
#     fixed_prompt-0000, so the prompt is not new -> 99 distinct -> exit 1.
mv_case mv-dup-ids-as-whole-reals 1 'input-minimums: .*fixed_prompt' \
  '{"counts":{"fixed_prompt":99},"extra":[{"id":"fx-real","ds":"fixed_prompt","toks":[1,0,0,9],"raw":"[1.0,0,0,9]"}]}'

# 15. Same prompt under two case ids sharing one token file (input.path of fixed_prompt-0000)
#    -> still one distinct prompt -> 99 -> exit 1.
mv_case mv-dup-shared-token-file 1 'input-minimums: .*fixed_prompt' \
  '{"counts":{"fixed_prompt":99},"extra":[{"id":"fx-alias","ds":"fixed_prompt","samefile":"fixed_prompt-0000"}]}'

# 16. judgement: a case claiming a dataset it is not: the 50th "code" case carries exactly the
#     ids of multilingual-0000 ([4,0,0,9]). One prompt cannot be two section 5.2 samples;
#     a demanding user expects it not to count for both sets -> code has 49 -> exit 1.
mv_case mv-dup-across-datasets 1 'input-minimums: .*(code|multilingual)' \
  '{"counts":{"code":49},"extra":[{"id":"code-fake","ds":"code","toks":[4,0,0,9]}]}'

# 17. "1,000 near_tie_logits steps ... counted by hash": two of the 1,000 have the same ids
#    -> 999 distinct -> exit 1.
mv_case mv-dup-near-tie 1 'input-minimums: .*near_tie' \
  '{"counts":{"near_tie_logits":999},"extra":[{"id":"nt-copy","ds":"near_tie_logits","toks":[7,0,0,9]}]}'

# 18. "Rejection cases count nowhere": 99 fixed + one fixed rejection case (40960+1 > 40960)
#    -> 99 -> exit 1.
mv_case mv-rejection-counts-nowhere 1 'input-minimums: .*fixed_prompt' \
  '{"counts":{"fixed_prompt":99},"extra":[{"id":"fx-rej","ds":"fixed_prompt","ptok":40960,"rej":true}]}'

# 19. "runnable cases without a token file count nowhere (one to-do says how many)": 99 fixed
#     + one without input -> 99 -> exit 1; 19b: the rules table says that line is a to-do
#     (`WHERE: todo RULE: MESSAGE`), i.e. the experiment waits on it, not a note (notes are
#     documented as "for a recorded waiver and what it covers", and there is no waiver here).
mv_case mv-no-token-file-counts-nowhere 1 'input-minimums: .*fixed_prompt' \
  '{"counts":{"fixed_prompt":99},"extra":[{"id":"fx-nofile","ds":"fixed_prompt","ptok":4}]}'
if grep -Eq 'todo input-minimums: .*1 ' out.txt; then ok mv-no-token-file-is-a-todo
else notok mv-no-token-file-is-a-todo "no to-do of input-minimums: $(flat out.txt)"; fi

# 20. Expert coverage "proven from the router taps ... without such a golden the finding says
#     'not proven'": no golden at all -> exit 1, "not proven".
mv_case mv-coverage-no-golden 1 'input-minimums: .*not proven' '{"golden":"none"}'

# 21. A golden with the coverage cases but no router taps (only mlp_out) proves nothing.
mv_case mv-coverage-golden-without-taps 1 'input-minimums: .*not proven' '{"golden":"notaps"}'

# 22. Router taps that miss expert 5 of layer 2 (5 replaced by 4 in layer 2's topk_ids; width
#     of router/logits is 8): 7 of 8 in layer 2 -> exit 1 naming layer 2 and expert 5.
mv_case mv-coverage-misses-l2-e5 1 'input-minimums: .*layer 2.*5' '{"golden":"miss5l2"}'

# 23. "the router taps ... of the manifest's cases": taps that hit everything, but under case
#     ids the manifest does not have (ghost-0000/1) prove nothing for this manifest -> exit 1.
mv_case mv-coverage-taps-of-other-cases 1 'input-minimums: .*moe_expert_coverage' '{"golden_prefix":"ghost"}'

# 24. "lowering one is an error unless input_minimums_waiver is recorded": fixed_prompt 99
#     with 99 fixed prompts, no waiver -> exit 1.
mv_case mv-lower-without-waiver 1 'input-minimums' \
  '{"counts":{"fixed_prompt":99},"hyp":"input_minimums:\n  fixed_prompt: 99\n"}'

# 25. expert_coverage: false lowers the coverage minimum; without a waiver -> exit 1 (no golden).
mv_case mv-coverage-off-without-waiver 1 'input-minimums' \
  '{"golden":"none","hyp":"input_minimums:\n  expert_coverage: false\n"}'

# 26. With the waiver the lowering is allowed (exit 0) and "every report shows the waiver":
#     the approver's name is printed.
mv_case mv-lower-with-waiver-shown 0 'input-minimums.*Approver Rt3' \
  '{"counts":{"fixed_prompt":99},"hyp":"input_minimums:\n  fixed_prompt: 99\ninput_minimums_waiver:\n  reason: pilot run\n  approver: Approver Rt3\n"}'

# 27. The JSON report (calculet-verify-report/v1) also shows it: a finding of rule
#     input-minimums whose message names the approver.
if mk '{"counts":{"fixed_prompt":99},"hyp":"input_minimums:\n  fixed_prompt: 99\ninput_minimums_waiver:\n  reason: pilot run\n  approver: Approver Rt3\n"}'; then
    "$MV" --json rep.json "$EX" > out.txt 2> err.txt
    if "$PYTHON" -c '
import json,sys
r=json.load(open("rep.json"))
sys.exit(0 if any(f["rule"]=="input-minimums" and "Approver Rt3" in f["message"] for f in r["findings"]) else 1)'; then
        ok mv-waiver-in-json-report; else notok mv-waiver-in-json-report "no input-minimums finding names the approver in rep.json"; fi
else notok mv-waiver-in-json-report "fixture"; fi

# 28. Coverage waived (expert_coverage false + waiver), no golden -> exit 0, waiver shown.
mv_case mv-coverage-waived 0 'input-minimums.*Approver Rt3' \
  '{"golden":"none","hyp":"input_minimums:\n  expert_coverage: false\ninput_minimums_waiver:\n  reason: no device yet\n  approver: Approver Rt3\n"}'

# 29. A waiver whose approver is empty is no recorded approval (schema: non-empty strings):
#     exit 1.
mv_case mv-waiver-empty-approver 1 '' \
  '{"counts":{"fixed_prompt":99},"hyp":"input_minimums:\n  fixed_prompt: 99\ninput_minimums_waiver:\n  reason: pilot run\n  approver: \"\"\n"}'

# 29b. "integers >= 0": a negative minimum is no lowering a waiver can record; the schema
#     refuses it -> exit 1.
mv_case mv-negative-minimum 1 '' \
  '{"hyp":"input_minimums:\n  code: -1\ninput_minimums_waiver:\n  reason: x\n  approver: Approver Rt3\n"}'

# 30. "raises any minimum": fixed_prompt 101 with the 100 of the fixture -> exit 1.
mv_case mv-raise-fixed-101 1 'input-minimums: .*fixed_prompt' '{"hyp":"input_minimums:\n  fixed_prompt: 101\n"}'

# 31. Raising random_per_length to 21 with 20 at length 4 -> exit 1.
mv_case mv-raise-random-21 1 'input-minimums: .*random_tokens' '{"hyp":"input_minimums:\n  random_per_length: 21\n"}'

# 32. A waiver excuses lowering only: with a waiver recorded, a raised minimum (101) still
#     fails on 100 -> exit 1.
mv_case mv-waiver-does-not-excuse-raise 1 'input-minimums: .*fixed_prompt' \
  '{"hyp":"input_minimums:\n  fixed_prompt: 101\ninput_minimums_waiver:\n  reason: x\n  approver: Approver Rt3\n"}'

# 33. Numbers section: "a real that is a whole number ... is the integer it spells":
#     fixed_prompt: 100.0 equals the handbook's 100, neither raise nor lowering -> exit 0.
mv_case mv-minimum-100.0-is-100 0 '^PASS' '{"hyp":"input_minimums:\n  fixed_prompt: 100.0\n"}'

# ---- npu-replay matrix --texts (docs/npu-replay.md "Labelled texts") ----
"$NR" make-model --preset tiny --seed 1 -o model > /dev/null 2>&1 || notok nr-make-model "make-model failed"
CORPUS="$GOLDEN_ROOT/examples/texts/prompts.jsonl"

# mx_folder NAME TEXTS LIMIT PAST: --init folder, hypothesis matrix prompt [4], past PAST,
# output [1], context_limit LIMIT, near-tie minimum waived (the tiny model gives none);
# npu-replay matrix --hypothesis ... --texts TEXTS writes golden/input-manifest.jsonl, then
# npu-replay run of the coverage cases with router taps writes golden/run.h5.
mx_folder() {
    rm -rf "$EX"
    "$MV" --init "$EX" "$EX" > /dev/null 2>&1 || return 1
    "$PYTHON" - "$EX" "$3" "$4" <<'EOF' || return 1
import re, sys
d, lim, past = sys.argv[1:4]
hy = open(d + "/hypothesis.yaml").read()
hy = re.sub(r"matrix:.*?\nmetrics:", "matrix:\n  prompt_tokens: [4]\n  past_tokens: [%s]\n  output_tokens: [1]\n  concurrency: [1]\n  context_limit: %s\nmetrics:" % (past, lim), hy, flags=re.S)
hy += "input_minimums:\n  near_tie_steps: 0\ninput_minimums_waiver:\n  reason: the tiny model has no near ties\n  approver: Approver Rt3\n"
open(d + "/hypothesis.yaml", "w").write(hy)
EOF
    "$NR" matrix --model model --hypothesis "$EX/hypothesis.yaml" --texts "$2" \
        --tokenizer model/tokenizer.json -o "$EX/golden/input-manifest.jsonl" > mx.out 2> mx.err || return 1
    "$NR" run --model model --manifest "$EX/golden/input-manifest.jsonl" --side baseline \
        --golden "$EX/golden/run.h5" --raw raw.jsonl --warmup 0 --runs 1 --cases 'coverage-*' \
        --taps 'layers/*/router/*' > run.out 2> run.err || return 1
    rm -f raw.jsonl
}

# 34. Production path: the shipped corpus (100 fixed, 50 multilingual/code/numeric), a context
#     limit of 512 (the tiny model's max_position_embeddings, every text fits), matrix length 4
#     and past 4. Every set meets section 5.2 (near ties waived, shown as a note) -> exit 0.
if mx_folder x "$CORPUS" 512 4; then
    "$MV" "$EX" > out.txt 2> err.txt; _g=$?
    if [ $_g -eq 0 ]; then ok nr-corpus-meets-minimums; else
        notok nr-corpus-meets-minimums "exit $_g: $(grep 'input-minimums' out.txt | tr '\n' ' ' | head -c 400)"; fi
    # 35. "every case names its dataset", and the text cases carry the domain of their line:
    #     D-NNNN-oO cases with dataset D, 100/50/50/50 of them, each with a token file.
    if "$PYTHON" - "$EX/golden/input-manifest.jsonl" <<'EOF'
import json, sys, collections
c = collections.Counter(); bad = 0
for l in open(sys.argv[1]):
    r = json.loads(l)
    if "dataset" not in r: bad += 1; continue
    for d in ("fixed_prompt", "multilingual", "code", "numeric"):
        if r["case_id"].startswith(d + "-"):
            if r["dataset"] != d or "input" not in r: bad += 1
            c[d] += 1
sys.exit(0 if bad == 0 and c == {"fixed_prompt": 100, "multilingual": 50, "code": 50, "numeric": 50} else 1)
EOF
    then ok nr-texts-cases-name-dataset; else notok nr-texts-cases-name-dataset "dataset/count mismatch"; fi
else notok nr-corpus-meets-minimums "setup: $(head -c 300 mx.err) $(head -c 300 run.err)"; notok nr-texts-cases-name-dataset "setup"; fi

# 36. judgement: same with matrix past_tokens [0, 4]. matrix promises "repeated-* 10 per
#     length" and manifest-verify counts every decode past length of a repeated case (0
#     included) by distinct token hash; a decode case at past 0 has one prompt token, and 10
#     distinct single ids exist in any vocabulary. A demanding user expects matrix's own
#     output to meet the minimum it generates for -> exit 0.
if mx_folder x "$CORPUS" 512 "0, 4"; then
    "$MV" "$EX" > out.txt 2> err.txt; _g=$?
    if [ $_g -eq 0 ]; then ok nr-matrix-past0-repeated-distinct; else
        notok nr-matrix-past0-repeated-distinct "exit $_g: $(grep 'input-minimums' out.txt | tr '\n' ' ' | head -c 400)"; fi
else notok nr-matrix-past0-repeated-distinct "setup: $(head -c 300 mx.err)"; fi

# 37. "the sets report the minimums": with context_limit 64 some corpus texts (65-79 tokens
#     with the tiny tokenizer) become rejection cases, and "rejection cases count nowhere",
#     so multilingual and code fall under 50 -> manifest-verify exit 1 naming them.
if mx_folder x "$CORPUS" 64 4; then
    "$MV" "$EX" > out.txt 2> err.txt; _g=$?
    if [ $_g -eq 1 ] && grep -q 'input-minimums: .*multilingual' out.txt && grep -q 'input-minimums: .*code' out.txt; then
        ok nr-long-texts-rejected-reported; else notok nr-long-texts-rejected-reported "exit $_g: $(grep 'input-minimums' out.txt | tr '\n' ' ' | head -c 400)"; fi
else notok nr-long-texts-rejected-reported "setup: $(head -c 300 mx.err)"; fi

# 38. A corpus whose 100th fixed prompt repeats the 1st text: matrix may write both (the docs do
#     not forbid it), but they encode to the same ids, so manifest-verify counts 99 -> exit 1.
"$PYTHON" - "$CORPUS" <<'EOF'
import json, sys
L = [json.loads(l) for l in open(sys.argv[1])]
fx = [i for i, x in enumerate(L) if x["domain"] == "fixed_prompt"]
L[fx[-1]]["text"] = L[fx[0]]["text"]
open("dup-corpus.jsonl", "w").write("".join(json.dumps(x, ensure_ascii=False) + "\n" for x in L))
cd = [i for i, x in enumerate(L) if x["domain"] == "code"]
L[fx[-1]]["text"] = "Write one sentence about the harbour crane."
del L[cd[-1]]
open("code49-corpus.jsonl", "w").write("".join(json.dumps(x, ensure_ascii=False) + "\n" for x in L))
EOF
if mx_folder x dup-corpus.jsonl 512 4; then
    "$MV" "$EX" > out.txt 2> err.txt; _g=$?
    if [ $_g -eq 1 ] && grep -q 'input-minimums: .*fixed_prompt' out.txt; then ok nr-duplicate-text-counts-once
    else notok nr-duplicate-text-counts-once "exit $_g: $(grep 'input-minimums' out.txt | tr '\n' ' ' | head -c 400)"; fi
else notok nr-duplicate-text-counts-once "setup: $(head -c 300 mx.err)"; fi

# 39. A corpus with 49 code texts -> the matrix output reports code under 50 -> exit 1.
if mx_folder x code49-corpus.jsonl 512 4; then
    "$MV" "$EX" > out.txt 2> err.txt; _g=$?
    if [ $_g -eq 1 ] && grep -q 'input-minimums: .*code' out.txt; then ok nr-code-49-reported
    else notok nr-code-49-reported "exit $_g: $(grep 'input-minimums' out.txt | tr '\n' ' ' | head -c 400)"; fi
else notok nr-code-49-reported "setup: $(head -c 300 mx.err)"; fi

# 40-45. Malformed text files: "An unknown domain or key, an empty text, ... a file without any
#     text ... are errors at file:line:col, with no manifest or token file left behind"; exit 2
#     ("could not run"). Each bad line is the last of the file, at the line number asserted.
# bad_texts NAME LINE FILE
bad_texts() {
    rm -rf mo && mkdir mo
    "$NR" matrix --model model --max-len 4 --random 1 --repeated 1 --texts "$3" \
        --tokenizer model/tokenizer.json -o mo/m.jsonl > out.txt 2> err.txt; _g=$?
    if [ $_g -ne 2 ]; then notok "$1" "exit $_g, wanted 2: $(head -c 300 err.txt)"
    elif [ -n "$2" ] && ! grep -q -- "$3:$2:" err.txt; then notok "$1" "no $3:$2: in: $(head -c 300 err.txt)"
    elif [ -e mo/m.jsonl ] || [ -e mo/inputs ]; then notok "$1" "partial output left: $(ls mo)"
    else ok "$1"; fi
}
printf '{"domain":"code","text":"x = 1"}\n{"domain":"poetry","text":"roses are red"}\n' > t-domain.jsonl
bad_texts nr-texts-unknown-domain 2 t-domain.jsonl
printf '{"domain":"code","text":"x = 1"}\n{"domain":"numeric","text":"3.14"}\n{"domain":"code","text":"y = 2","lang":"py"}\n' > t-key.jsonl
bad_texts nr-texts-unknown-key 3 t-key.jsonl
printf '{"domain":"code","text":"x = 1"}\n{"domain":"multilingual","text":""}\n' > t-empty.jsonl
bad_texts nr-texts-empty-text 2 t-empty.jsonl
printf '{"domain":"code","text":"x = 1"}\n{"domain":"code"}\n' > t-notext.jsonl
bad_texts nr-texts-missing-text 2 t-notext.jsonl
printf '{"domain":"code","text":"x = 1"}\n{"domain":"code","text":"a","text":"b"}\n' > t-dupkey.jsonl
bad_texts nr-texts-duplicate-key 2 t-dupkey.jsonl
printf '{"domain":"code","text":42}\n' > t-num.jsonl
bad_texts nr-texts-text-not-string 1 t-num.jsonl
: > t-none.jsonl
bad_texts nr-texts-file-without-text "" t-none.jsonl

# 46b. "an id the model does not have (a tokenizer that is not the model's) are errors at
#     file:line:col": a synthetic 4,096 tokenizer (tok-tool synth; its specials are ids 542-544,
#     docs/tokenizer.md) against the tiny model (vocab 512): line 2's <|im_start|> is 543.
if tok-tool synth big-tok.json 4096 > /dev/null 2>&1; then
    printf '{"domain":"numeric","text":"7"}\n{"domain":"fixed_prompt","text":"<|im_start|>user hello<|im_end|>"}\n' > t-big.jsonl
    rm -rf mo && mkdir mo
    "$NR" matrix --model model --max-len 4 --random 1 --repeated 1 --texts t-big.jsonl \
        --tokenizer big-tok.json -o mo/m.jsonl > out.txt 2> err.txt; _g=$?
    if [ $_g -eq 2 ] && grep -q 't-big.jsonl:2:' err.txt && [ ! -e mo/m.jsonl ] && [ ! -e mo/inputs ]; then
        ok nr-texts-foreign-tokenizer; else notok nr-texts-foreign-tokenizer "exit $_g: $(head -c 300 err.txt) $(ls mo)"; fi
else notok nr-texts-foreign-tokenizer "tok-tool synth failed"; fi

# 47. "--texts FILE --tokenizer FILE (both or neither)": --texts alone is bad usage, exit 2.
rm -rf mo && mkdir mo
expect_exit nr-texts-without-tokenizer 2 "$NR" matrix --model model --max-len 4 --texts t-key.jsonl -o mo/m.jsonl
