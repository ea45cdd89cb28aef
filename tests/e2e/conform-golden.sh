#!/bin/sh
# npu-replay conform --golden REF.h5 (issue 28): a `run` golden of the reference backend replayed
# on the backend under test, its logits judged under the logits tier. Two planted faults that
# every self-consistency check passes (a constant shift of some token ids, f32 logits cut to
# bf16) fail the golden check alone; the clean backend passes it, in f32 and in bf16 against a
# golden of its own dtype. Inputs kept small: 26 cases of at most 32 positions.
. "$GOLDEN_ROOT/tests/e2e/lib.sh"

expect_exit "make-model tiny" 0 npu-replay make-model --preset tiny --seed 11 -o m
expect_exit "matrix" 0 npu-replay matrix --model m --max-len 32 --random 2 --repeated 0 -o man.jsonl -j1
expect_exit "the reference golden (f32)" 0 npu-replay run --model m --manifest man.jsonl --side baseline --golden ref.h5 --raw ref.raw --warmup 0 --runs 1 -j1
expect_exit "the reference golden (bf16)" 0 npu-replay run --model m --manifest man.jsonl --side baseline --backend-opt dtype=bf16 --golden ref16.h5 --raw ref16.raw --warmup 0 --runs 1 -j1

expect_exit "clean f32 against the f32 golden passes" 0 npu-replay conform --model m -j1 --checks golden --golden ref.h5 --json clean.json
expect_grep "golden in the table" '^golden +pass' out.txt
if [ -n "$PYTHON" ]; then
    # 26 cases: 14 prefills and 2 coverage prompts of one step, 10 decode cases of 8 steps
    expect_exit "clean: every case replayed, every step compared" 0 "$PYTHON" -c '
import json, sys
k = [c for c in json.load(open(sys.argv[1]))["checks"] if c["check"] == "golden"][0]
assert k["coverage"]["cases"] == [26], k["coverage"]
assert sorted(k["coverage"]["steps"]) == [1] * 16 + [8] * 10, k["coverage"]
assert k["comparisons"] == (16 + 80) * 512, k["comparisons"]
' clean.json
fi
expect_exit "clean bf16 against the bf16 golden passes" 0 npu-replay conform --model m -j1 --checks golden --golden ref16.h5 --backend-opt dtype=bf16
# a bf16 device against an f32 golden: the default thresholds are for a golden of the same
# dtype; looser bounds, chosen from what bf16 rounding gives on the tiny model (KL up to
# 0.025, log-softmax up to 0.7), let it through
expect_exit "bf16 against the f32 golden fails at the defaults" 1 npu-replay conform --model m -j1 --checks golden --golden ref.h5 --backend-opt dtype=bf16
expect_exit "bf16 against the f32 golden within --golden-kl 0.05 --golden-logsoftmax 1" 0 npu-replay conform --model m -j1 --checks golden --golden ref.h5 --backend-opt dtype=bf16 --golden-kl 0.05 --golden-logsoftmax 1

# each fault: the whole suite (with the golden) fails the golden check alone
for fault in logit_shift_token logits_bf16_truncate; do
    expect_exit "inject=$fault exits 1" 1 npu-replay conform --model m -j1 --max-context 64 --budget 0 --golden ref.h5 --backend-opt "inject=$fault"
    got=$(grep -E '^[a-z-]+ +FAIL' out.txt | awk '{print $1}' | tr '\n' ' ')
    if [ "$got" = "golden " ]; then ok "inject=$fault fails the golden check alone"; else
        notok "inject=$fault fails the golden check alone" "failed: '$got'"; fi
    n=$(grep -cE '^[a-z-]+ +pass' out.txt)
    if [ "$n" -eq 12 ]; then ok "inject=$fault: the 12 self-consistency checks pass"; else
        notok "inject=$fault: the 12 self-consistency checks pass" "$n"; fi
done
expect_grep "the shift is named by KL" 'KL\(golden \|\| backend\)' err.txt

expect_exit "--checks golden without --golden: could not check" 2 npu-replay conform --model m -j1 --checks golden
expect_grep "says what it needs" 'needs --golden' out.txt
expect_exit "a missing golden: exit 2" 2 npu-replay conform --model m -j1 --checks golden --golden nope.h5
expect_exit "a bad --golden-kl: exit 2" 2 npu-replay conform --model m --checks golden --golden ref.h5 --golden-kl x
# goldens that prove nothing are no pass: the check cannot run (exit 2)
H="$GOLDEN_HELPERS"
expect_exit "a golden without cases" 0 "$H/make-golden" e.h5 "x:f32:4:fill=1"
expect_exit "no cases: exit 2" 2 npu-replay conform --model m -j1 --checks golden --golden e.h5
expect_grep "no cases: said" 'holds no cases/\*/logits' out.txt
expect_exit "a golden of another vocabulary" 0 "$H/make-golden" v.h5 "cases/a/input_ids:i64:2:values=1,2" "cases/a/tokens:i64:1:values=3" "cases/a/logits:f32:1x64:fill=0"
expect_exit "another vocabulary: exit 2" 2 npu-replay conform --model m -j1 --checks golden --golden v.h5
expect_grep "names the vocabulary" 'not f32 \[steps, 512\]' out.txt
expect_exit "a golden with a token past the vocabulary" 0 "$H/make-golden" t.h5 "cases/a/input_ids:i64:2:values=1,999" "cases/a/tokens:i64:1:values=3" "cases/a/logits:f32:1x512:fill=0"
expect_exit "a token past the vocabulary: exit 2" 2 npu-replay conform --model m -j1 --checks golden --golden t.h5
expect_grep "names the token" 'holds token 999' out.txt
