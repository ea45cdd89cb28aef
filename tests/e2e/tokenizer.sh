#!/bin/sh
# The tokenizer (libgolden/tok) against a second implementation: tests/tools/tok_oracle.py, a
# plain-Python byte-level BPE (Debian's python3-regex for \p{L}, unicodedata for NFC). Both
# encode the same corpus (the repo's docs, C source, and a multilingual/emoji/number file made
# here) with several tokenizer.json files; the ids must agree line by line and for whole
# files. Round trips decode(encode(s)) == s, invalid UTF-8 included; tokens/s of both.
. "$GOLDEN_ROOT/tests/e2e/lib.sh"

ORACLE="$GOLDEN_ROOT/tests/tools/tok_oracle.py"
PY=""
if /usr/bin/python3 -c 'import regex, unicodedata' 2>/dev/null; then PY=/usr/bin/python3; fi

# ---- tokenizers: the synthetic one at two sizes, and variants of it
expect_exit "synthetic tokenizer, vocab 512" 0 tok-tool synth t512.json 512
expect_exit "synthetic tokenizer, vocab 4096" 0 tok-tool synth t4096.json 4096
tok-tool synth again.json 512
if cmp -s t512.json again.json; then ok "synthetic tokenizer is deterministic"; else
    notok "synthetic tokenizer is deterministic"; fi
expect_exit "synthetic tokenizer below 259 refused" 2 tok-tool synth small.json 100
expect_grep "the refusal names the file" "^tok-tool: small.json: " err.txt
tok-tool hash t512.json > hash.txt
want=$(sha256sum t512.json | cut -d' ' -f1)
expect_grep "the tokenizer's hash is the file's sha256" "^$want 512\$" hash.txt
tok-tool hash t4096.json > hash4k.txt
n4k=$(cut -d' ' -f2 hash4k.txt)
if [ "$n4k" -gt 512 ] && [ "$n4k" -le 4096 ]; then ok "vocab 4096 learns more merges ($n4k ids)"; else
    notok "vocab 4096 learns more merges" "$n4k ids"; fi

# ---- the corpus
cat > multi.txt <<'EOF'
Hello, world! The quick brown fox jumps over the lazy dog.
Größe, Straße, Übermaß — naïve café, déjà vu, ﬁne (a ligature), Ångström.
Проверка: может ли кандидат заменить рабочую версию?
验证工具根据证据判断编译器候选版本是否可以替换生产版本。
検証ツールは、候補が本番を置き換えられるかを証拠で判断します。
검증 도구는 후보가 운영 버전을 대체할 수 있는지 판단합니다.
التحقق يقرر ما إذا كان المرشح يمكن أن يحل محل الإنتاج.
Ελληνικά: η γρήγορη καφέ αλεπού. हिन्दी में परीक्षण। ภาษาไทย ทดสอบ
Emoji: 🙂 🚀 ✅ ❌ 👍🏽 👨‍👩‍👧‍👦 🇩🇪 ❤️ — and symbols: → ≤ ≥ ± × ÷ € £ ¥ © ™
Numbers: 0 7 42 3.14159 -2.5e-06 1,000,000 12:30:59 2026-12-01 0x7fff 99.9% 151936
Contractions: I'm, you're, it's, we've, they'll, he'd, DON'T, She'S
Spaces:   three,	tab,    four, trailing   
  indented line with CRLF ending
<|im_start|>user
Say hi.<|im_end|><|endoftext|>
for (int i = 0; i < n; i++) { sum += x[i] * w[i]; }   // dot product
    def f(x): return {"a": [1, 2, 3], 'b': x ** 2}
Combining: e\u0301 written as e + U+0301: é (NFC makes it one character)
EOF
printf 'CRLF line\r\nsecond\r\n' >> multi.txt
# a combining acute accent (not NFC: the round trip is checked on NFC text only)
printf 'cafe\314\201 and e\314\201te\n' > combining.txt
cat "$GOLDEN_ROOT"/docs/*.md > docs.txt
cat "$GOLDEN_ROOT"/libgolden/tok/*.c "$GOLDEN_ROOT"/libgolden/doc/json.c > code.txt
cat multi.txt docs.txt code.txt > all.txt

# ---- variants: the [a, b] pair form of merges; GPT-2's ByteLevel split with a prefix space
if [ -n "$PY" ]; then
    "$PY" - <<'EOF'
import json
d = json.load(open("t4096.json", encoding="utf-8"))
d["model"]["merges"] = [m.split(" ") for m in d["model"]["merges"]]
json.dump(d, open("pairs.json", "w", encoding="utf-8"), ensure_ascii=False)
d = json.load(open("t4096.json", encoding="utf-8"))
d["pre_tokenizer"] = {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True,
                      "use_regex": True}
d["normalizer"] = None
d["model"]["ignore_merges"] = True
json.dump(d, open("gpt2.json", "w", encoding="utf-8"), ensure_ascii=False, indent=2)
EOF
fi

# ---- the same ids as the oracle
if [ -z "$PY" ]; then
    echo "ok # skip python comparison: /usr/bin/python3 has no regex module (apt-get install python3-regex)"
else
    for tk in t512 t4096 pairs gpt2; do
        for c in multi docs code combining; do
            tok-tool encode $tk.json $c.txt > c.$tk.$c 2> err.txt
            "$PY" "$ORACLE" encode $tk.json $c.txt > p.$tk.$c 2>> err.txt
            lines=$(wc -l < p.$tk.$c | tr -d ' ')
            if [ "$lines" -gt 0 ] && cmp -s c.$tk.$c p.$tk.$c; then
                ok "$tk: $c.txt: the same ids as the Python oracle, $lines lines"
            else
                notok "$tk: $c.txt: the same ids as the Python oracle" \
                    "$(diff c.$tk.$c p.$tk.$c | head -n 4) $(head -c 300 err.txt)"
            fi
        done
        tok-tool whole $tk.json all.txt > cw.$tk
        "$PY" "$ORACLE" whole $tk.json all.txt > pw.$tk
        ntok=$(wc -w < cw.$tk | tr -d ' ')
        if [ "$ntok" -gt 1000 ] && cmp -s cw.$tk pw.$tk; then
            ok "$tk: the whole corpus in one piece: the same $ntok ids"
        else
            notok "$tk: the whole corpus in one piece" "$(wc -w < pw.$tk) ids from the oracle"
        fi
    done
    # a test that can fail: the oracle with one merge dropped disagrees
    "$PY" - <<'EOF'
import json
d = json.load(open("t512.json", encoding="utf-8"))
d["model"]["merges"] = d["model"]["merges"][1:]
json.dump(d, open("dropped.json", "w", encoding="utf-8"), ensure_ascii=False)
EOF
    "$PY" "$ORACLE" whole dropped.json all.txt > pw.dropped
    if cmp -s cw.t512 pw.dropped; then notok "a tokenizer without its first merge gives other ids"; else
        ok "a tokenizer without its first merge gives other ids"; fi
fi

# ---- round trips, invalid UTF-8 included
for c in multi docs code all; do
    expect_exit "round trip: $c.txt" 0 tok-tool roundtrip t512.json $c.txt
done
printf 'ok\377\376 bytes \300\200 overlong \355\240\200 surrogate \364\220\200\200 too big, cut \342\202' > invalid.txt
head -c 4096 /dev/zero | tr '\0' 'a' > long.txt
printf '%5000s\n' '' >> long.txt
for tk in t512 t4096; do
    expect_exit "round trip of invalid UTF-8 ($tk)" 0 tok-tool roundtrip $tk.json invalid.txt
    expect_exit "round trip of 4096 a and 5000 spaces ($tk)" 0 tok-tool roundtrip $tk.json long.txt
done
# 200,000 random bytes (mostly invalid UTF-8) through a tokenizer without NFC: exact. With NFC
# only the valid parts that are not NFC may change (U+0374 becomes U+02B9, say), so not there.
sed 's/"type": "NFC"/"type": "Sequence", "normalizers": []/' t512.json > nonfc.json
LC_ALL=C awk 'BEGIN { srand(7); for (i = 0; i < 200000; i++) printf "%c", int(rand() * 256) }' > random.bin
if [ "$(wc -c < random.bin | tr -d ' ')" -eq 200000 ]; then ok "200,000 random bytes made"; else
    notok "200,000 random bytes made" "$(wc -c < random.bin)"; fi
expect_exit "round trip of 200,000 random bytes (no normalizer)" 0 tok-tool roundtrip nonfc.json random.bin
if [ -n "$PY" ]; then
    LC_ALL=C tr -c '\0-\177' 'x' < random.bin | tr '\0' 'y' > random7.txt
    tok-tool whole nonfc.json random7.txt > cw.r7
    "$PY" "$ORACLE" whole nonfc.json random7.txt > pw.r7
    if cmp -s cw.r7 pw.r7; then ok "random ASCII (controls included): the same ids as the oracle"; else
        notok "random ASCII (controls included): the same ids as the oracle"; fi
fi
# GPT-2's add_prefix_space: the decoded text has the space the encoder put in front
if [ -f gpt2.json ]; then
    printf 'ok\377 x' > pre.txt
    tok-tool decode gpt2.json $(tok-tool whole gpt2.json pre.txt) > pre.out
    if [ "$(od -An -tx1 pre.out | tr -d ' \n')" = "206f6bff2078" ]; then
        ok "add_prefix_space: decode gives ' ' + the text"
    else
        notok "add_prefix_space: decode gives ' ' + the text" "$(od -An -tx1 pre.out)"
    fi
fi
# each invalid byte stands alone: 0xFF is id of byte 0xFF, decoded back exactly
tok-tool decode t512.json 32 > dec.bin
if [ "$(od -An -tx1 dec.bin | tr -d ' \n')" = "41" ]; then ok "id 32 decodes to 'A' (GPT-2 order)"; else
    notok "id 32 decodes to 'A'" "$(od -An -tx1 dec.bin)"; fi
expect_exit "decoding an unknown id fails" 2 tok-tool decode t512.json 5 999999
expect_grep "the failure names the id" "id 999999 is not in the vocab" err.txt

# ---- hostile files: one line naming the file, exit 2
printf '{"model": ' > bad.json
expect_exit "truncated JSON refused" 2 tok-tool hash bad.json
expect_grep "one line naming the file" "^tok-tool: bad.json:1:" err.txt
expect_lines "only one line" 1 err.txt
printf '{"model": {"type": "Unigram"}}' > uni.json
expect_exit "a Unigram model refused" 2 tok-tool hash uni.json
expect_grep "the refusal says why" "uni.json:1:[0-9]+: model.type is \"Unigram\", not \"BPE\"" err.txt

# ---- speed: tokens/s of both implementations on the whole corpus
if [ -n "$PY" ]; then
    tok-tool bench t4096.json all.txt 5 > bench.c
    "$PY" "$ORACLE" bench t4096.json all.txt 1 > bench.py
    ctoks=$(cut -d' ' -f3 bench.c); ptoks=$(cut -d' ' -f3 bench.py)
    echo "# tokens/s on $(wc -c < all.txt | tr -d ' ') bytes, vocab 4096: C $ctoks, Python $ptoks"
    if [ "$(cut -d' ' -f1 bench.c)" -eq "$(( $(cut -d' ' -f1 bench.py) * 5 ))" ]; then
        ok "bench: the same token count in both"
    else
        notok "bench: the same token count in both" "$(cat bench.c) / $(cat bench.py)"
    fi
fi

# ---- make-model writes the tokenizer with its model
expect_exit "make-model tiny" 0 npu-replay make-model --preset tiny --seed 3 -o model
if cmp -s model/tokenizer.json t512.json; then ok "make-model's tokenizer.json is the synthetic one of its vocab (512)"; else
    notok "make-model's tokenizer.json is the synthetic one of its vocab"; fi
cfgvocab=$(sed -n 's/.*"vocab_size": *\([0-9]*\).*/\1/p' model/config.json)
tokvocab=$(tok-tool hash model/tokenizer.json | cut -d' ' -f2)
if [ -n "$cfgvocab" ] && [ "$tokvocab" -le "$cfgvocab" ]; then
    ok "its ids fit the config's vocab_size ($tokvocab <= $cfgvocab)"
else
    notok "its ids fit the config's vocab_size" "$tokvocab vs '$cfgvocab'"
fi
expect_exit "make-model --force replaces a folder with a tokenizer" 0 \
    npu-replay make-model --preset tiny --seed 4 --force -o model
if [ -z "$(ls -d model.tmp-* 2>/dev/null)" ] && [ -f model/tokenizer.json ]; then
    ok "no temporary folder is left behind"; else notok "no temporary folder is left behind" "$(ls)"; fi
