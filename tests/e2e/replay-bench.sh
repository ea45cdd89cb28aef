#!/bin/sh
# replay-bench (tests/tools/replay-bench.c), the driver of bench/npu-replay.sh: --decode N with
# no prefill lengths and N > 48 read past its token array (issue 35). Under the sanitizer build
# (ci/run-tests build-san) the read past the end is a heap-buffer-overflow and this fails;
# in every build the runs must finish with their figures and --decode 0 / junk is refused.
. "$GOLDEN_ROOT/tests/e2e/lib.sh"

expect_exit "make-model tiny" 0 npu-replay make-model --preset tiny --seed 7 -o tiny
# decode only, 200 steps: the old array held 17 + 32 tokens and the run read toks[17 + 199]
expect_exit "decode 200, no prefill" 0 replay-bench tiny --decode 200 --probe-mib 0
expect_grep "decode 200 prints its rate" '^decode: [0-9.]+ ms/token' out.txt
expect_grep "decode 200 prints the model" '^info: hidden ' out.txt
if grep -q '^prefill' out.txt; then notok "no prefill line without lengths"; else ok "no prefill line without lengths"; fi
# prefill lengths shorter than the decode run, and longer
expect_exit "prefill 3, decode 100" 0 replay-bench tiny 3 --decode 100 --probe-mib 0
expect_grep "prefill 3 printed" '^prefill 3 tokens: ' out.txt
expect_exit "prefill 64, decode 49" 0 replay-bench tiny 64 --decode 49 --probe-mib 0
expect_grep "prefill 64 printed" '^prefill 64 tokens: ' out.txt
expect_exit "decode 0 refused" 2 replay-bench tiny --decode 0 --probe-mib 0
expect_grep "decode 0 says why" 'replay-bench: --decode: expected 1 to 1048576 steps' err.txt
