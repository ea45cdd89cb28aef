#!/bin/sh
# The backend host must not let the taps it sends back overwrite the tokens of the call in the
# shared channel: a backend that reads its tokens as it goes (the cpu backend's chunk=1, one
# position at a time) read tap data as tokens. Isolated and in-process runs must write the
# same golden, bit for bit (tensor hashes compared), with taps on.
. "$GOLDEN_ROOT/tests/e2e/lib.sh"
npu-replay make-model --preset tiny -o model > /dev/null 2>&1 || { notok iso-make-model; exit 0; }
npu-replay matrix --model model --max-len 32 -o m.jsonl > /dev/null 2>&1 || { notok iso-matrix; exit 0; }
case=random-prefill-p16-o1-00
for c in 1 4; do
    expect_exit "iso-chunk$c-isolated" 0 npu-replay run --model model --manifest m.jsonl --side baseline \
        --backend-opt chunk=$c --golden iso$c.h5 --raw iso$c.jsonl --warmup 1 --runs 2 --cases $case
    if grep -q 'outside the vocabulary' err.txt; then notok "iso-chunk$c-tokens-intact" "$(head -c 300 err.txt)"
    else ok "iso-chunk$c-tokens-intact"; fi
    expect_exit "iso-chunk$c-in-process" 0 npu-replay run --in-process --model model --manifest m.jsonl \
        --side baseline --backend-opt chunk=$c --golden inp$c.h5 --raw inp$c.jsonl --warmup 1 --runs 2 --cases $case
    golden-dump --list iso$c.h5 | awk 'NR > 1 {print $1, $4}' > a.txt
    golden-dump --list inp$c.h5 | awk 'NR > 1 {print $1, $4}' > b.txt
    if [ -s a.txt ] && cmp -s a.txt b.txt; then ok "iso-chunk$c-same-golden"
    else notok "iso-chunk$c-same-golden" "$(diff a.txt b.txt | head -c 300)"; fi
done
