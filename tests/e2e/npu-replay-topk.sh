#!/bin/sh
# npu-replay run --topk K --sampling S: the top-k output mode checked against the sampling
# settings at every step (golden_topk_covers). Expected counts worked out by hand on the tiny
# model (vocab 512; 2 runs of a 1-token prefill case + 2 runs of an 8-step decode case = 18
# steps): k = vocab covers anything (0 findings); 8 logprobs with k 4, top_p 0.95 with k 1 at
# temperature 1 (the provable mass inside one entry is at most 1/512), and a raising repetition
# penalty (0.5) with k 8 over a context of random ids are findings at every step (exit 1, the
# golden still whole and the same bits); greedy with k 1 covers every step (exit 0). A version 1
# plug-in has no top-k mode and settings out of range are refused: exit 2, nothing written.
. "$GOLDEN_ROOT/tests/e2e/lib.sh"

expect_exit "make-model tiny" 0 npu-replay make-model --preset tiny --seed 4 -o m
expect_exit "matrix" 0 npu-replay matrix --model m --max-len 32 --random 1 --repeated 0 -o man.jsonl -j1
R="npu-replay run --model m --manifest man.jsonl --side baseline --warmup 0 --runs 2 -j1 --cases random-decode-past16-o8-00 --cases random-prefill-p2-o1-00"
expect_exit "no top-k" 0 $R --golden n.h5 --raw n.jsonl
expect_exit "k = vocab covers: exit 0" 0 $R --golden a.h5 --raw a.jsonl --topk 512
expect_grep "k = vocab: 0 of 18" "top-k 512: 0 of 18 steps not covered" out.txt
expect_exit "logprobs 8 > k 4: exit 1" 1 $R --golden b.h5 --raw b.jsonl --topk 4 --sampling n_probs=8
expect_grep "logprobs: 18 of 18" "at 18 of 18 steps; first: random-prefill-p2-o1-00 step 0 \(lane 0\): 8 logprobs asked for, k is 4" err.txt
expect_exit "top_p with k 1: exit 1" 1 $R --golden c.h5 --raw c.jsonl --topk 1 --sampling temp=1,top_k=0,min_p=0
expect_grep "top_p: 18 of 18, by top_p mass" "at 18 of 18 steps.*by the whole vocabulary.*top_p 0.95: only 0.00195312 of the mass" err.txt
expect_exit "raising penalty outside k 8: exit 1" 1 $R --golden e.h5 --raw e.jsonl --topk 8 --sampling repeat_penalty=0.5,temp=0
expect_grep "penalty: 18 of 18" "at 18 of 18 steps; first: .*penalised token [0-9]+ is outside the top 8, and the penalties can raise it" err.txt
expect_exit "greedy k 1 covers: exit 0" 0 $R --golden d.h5 --raw d.jsonl --topk 1 --sampling temp=0
expect_grep "greedy: 0 of 18" "top-k 1: 0 of 18 steps not covered" out.txt
expect_exit "greedy k 1 at concurrency 2: exit 0" 0 $R --golden g.h5 --raw g.jsonl --topk 1 --sampling temp=0 --concurrency 2
expect_grep "concurrency 2: 0 of 18" "top-k 1: 0 of 18 steps not covered" out.txt

list() { golden-dump --list "$1" | awk 'NR > 1 {print $1, $4}' | sort; }
list n.h5 > ln.txt
for g in a b c e d g; do
    list $g.h5 > l$g.txt
    if [ "$(wc -l < ln.txt)" -ge 3 ] && cmp -s ln.txt l$g.txt; then ok "golden-$g-same-bits"; else notok "golden-$g-same-bits"; fi
done

mkdir bad
expect_exit "top_p=0: exit 2" 2 $R --golden bad/g.h5 --raw bad/r.jsonl --topk 8 --sampling top_p=0
expect_grep "top_p=0: why" "npu-replay: --sampling: .*top_p in \(0, 1\]" err.txt
expect_exit "k 513 > vocab: exit 2" 2 $R --golden bad/g.h5 --raw bad/r.jsonl --topk 513
expect_grep "k 513: why" "k 513 is outside 1..512" err.txt
expect_exit "--sampling without --topk: exit 2" 2 $R --golden bad/g.h5 --raw bad/r.jsonl --sampling temp=0
expect_exit "version 1 plug-in: exit 2" 2 npu-replay run --backend "$GOLDEN_BUILD/tests/lib/test-backend.so" --manifest man.jsonl --side baseline --warmup 0 --runs 1 -j1 --cases random-prefill-p2-o1-00 --golden bad/g.h5 --raw bad/r.jsonl --topk 4
expect_grep "version 1: why" "ABI version 1: the top-k output mode needs version 2" err.txt
if [ -z "$(ls -A bad)" ]; then ok "refusals-leave-nothing"; else notok "refusals-leave-nothing" "$(ls -A bad)"; fi
