#!/bin/sh
# npu-replay run --faults and conform --faults: one calculet-fault/v1 line for the fault that
# ended a run (timeout, device error, lost device, NaN/Inf logits, refused input), with the
# retest after reset, planted by the cpu backend's inject=NAME@N. Every field is checked against
# values worked out by hand from the call numbering, and every line against the schema.
. "$GOLDEN_ROOT/tests/e2e/lib.sh"

expect_exit "make-model tiny" 0 npu-replay make-model --preset tiny --seed 1 -o m
expect_exit "matrix" 0 npu-replay matrix --model m --max-len 32 --random 1 --repeated 0 -o man.jsonl -j1

# --cases 'random-decode-past1*' selects past1, past15, past16, past17 (in that order), each with
# 8 output tokens: one request is 1 prefill + 7 decode calls, so with --warmup 1 --runs 1 the
# first case's warm-up request is calls 1-8 and its measured request calls 9-16.
R="npu-replay run --model m --manifest man.jsonl --cases random-decode-past1* --warmup 1 --runs 1 -j1"
C=random-decode-past1-o8-00

# fault NAME INJECT SIDE: run with the fault planted; exit 2, no golden or raw left behind
fault() {
    expect_exit "$1: the run fails (exit 2)" 2 $R --side "$3" --golden "$1.h5" --raw "$1.raw" --faults "$1.jsonl" --backend-opt inject="$2"
    cp err.txt "$1.err"
    expect_absent "$1: no golden left behind" "$1.h5"
    expect_absent "$1: no raw file left behind" "$1.raw"
    expect_lines "$1: one fault line" 1 "$1.jsonl"
    expect_exit "$1: the line is calculet-fault/v1" 0 manifest-verify --schema calculet-fault/v1 "$1.jsonl"
}
fault timeout timeout@3 candidate        # call 3: warm-up request, decode step 2
fault devlost device_lost@3 baseline     # calls 3 and later all fail: the retest too
fault deverr device_error@9 baseline     # call 9: the measured request's prefill
fault nan nan@2 candidate                # call 2: warm-up request, decode step 1, every logit NaN
fault inf inf@10 candidate               # call 10: measured request, decode step 1, logit 0 +Inf
fault reject reject@1 candidate          # call 1 refused with context_limit_exceeded
expect_grep "the run's error names the request and the retest" "^npu-replay: $C: request candidate/$C/0: cpu: timeout: forward call 3 did not complete \\(the retest after reset passed\\)$" timeout.err
expect_grep "a lost device: the retest failed" "\\(the retest after reset failed\\)$" devlost.err

# check(NAME, side, request run, kind, severity, message, recovered, retest): by hand, above
cat > expect.txt <<EOF2
timeout candidate 0 timeout error cpu: timeout: forward call 3 did not complete|true passed
devlost baseline 0 device_error fatal cpu: device lost since forward call 3|false failed
deverr baseline 1 device_error error cpu: device error in forward call 9|true passed
nan candidate 0 nan_output error logits: step 1: entry 0 is NaN|true passed
inf candidate 1 nan_output error logits: step 1: entry 0 is +Inf|true passed
reject candidate 0 rejected_input error cpu: context_limit_exceeded: forward call 1 refused|true passed
EOF2
while IFS='|' read -r head tail; do
    set -- $head; name=$1; side=$2; run=$3; kind=$4; sev=$5; shift 5; msg="$*"
    set -- $tail; rec=$1; rt=$2
    want="{\"schema\":\"calculet-fault/v1\",\"time\":\"TIME\",\"side\":\"$side\",\"case_id\":\"$C\",\"request_id\":\"$side/$C/$run\",\"kind\":\"$kind\",\"severity\":\"$sev\",\"message\":\"$msg\",\"recovered\":$rec,\"retest_after_reset\":\"$rt\"}"
    got=$(sed -E 's/"time":"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z"/"time":"TIME"/' "$name.jsonl")
    if [ "$got" = "$want" ]; then ok "$name: every field as worked out by hand"; else
        notok "$name: every field as worked out by hand" "got $got, wanted $want"; fi
done < expect.txt

# a clean run: an empty faults file beside the golden and raw file
expect_exit "a clean run with --faults" 0 $R --side baseline --golden ok.h5 --raw ok.raw --faults ok.jsonl
expect_lines "no fault: an empty faults file" 0 ok.jsonl
expect_exit "an empty faults file is valid" 0 manifest-verify --schema calculet-fault/v1 ok.jsonl
# outputs: an existing faults file needs --force (checked before the run), a failure that is not
# the backend's leaves no faults file, inject names are checked
expect_exit "an existing faults file without --force: exit 2" 2 $R --side baseline --golden x.h5 --raw x.raw --faults ok.jsonl
expect_absent "... before anything was written" x.h5
expect_exit "with --force it is replaced" 0 $R --side baseline --golden x.h5 --raw x.raw --faults ok.jsonl --force
echo '{"schema":"nope"}' > bad.jsonl
expect_exit "a bad manifest: exit 2" 2 npu-replay run --model m --manifest bad.jsonl --side baseline --golden y.h5 --raw y.raw --faults y.jsonl
expect_absent "a bad manifest is not a fault: no faults file" y.jsonl
expect_exit "an unknown run-time fault: exit 2" 2 $R --side baseline --golden y.h5 --raw y.raw --backend-opt inject=meltdown@3
expect_grep "... named" "inject=meltdown@3: not a run-time fault" err.txt
expect_exit "a fault at call 0: exit 2" 2 $R --side baseline --golden y.h5 --raw y.raw --backend-opt inject=timeout@0
# --backend-opt numbers through golden/parse.h (issue 24): trailing characters, a space, an
# exponent and overflow are refused as a whole, where atoi/strtoll took a prefix
for bad in lanes=2x "lanes= 2" lanes=1e1 chunk=99999999999999999999999 chunk=0 inject=timeout@3x inject=timeout@+3; do
    expect_exit "backend-opt '$bad' refused" 2 $R --side baseline --golden y.h5 --raw y.raw --backend-opt "$bad"
    expect_absent "backend-opt '$bad': no golden" y.h5
done
expect_exit "backend-opt lanes=2: taken" 0 $R --side baseline --golden l2.h5 --raw l2.raw --backend-opt lanes=2
expect_exit "backend-opt a near miss" 2 $R --side baseline --golden y.h5 --raw y.raw --backend-opt lane=2
expect_grep "... says which" "unknown backend option 'lane' \\(did you mean lanes\\?\\)" err.txt
# a fault after the last call of the run never fires
expect_exit "a fault beyond the run's calls: the run completes" 0 $R --side baseline --golden z.h5 --raw z.raw --faults z.jsonl --backend-opt inject=device_lost@65
expect_lines "... and no fault line" 0 z.jsonl
expect_exit "... but at call 64 (the last: 4 cases x 2 requests x 8 calls) it fires" 2 $R --side baseline --golden z2.h5 --raw z2.raw --faults z2.jsonl --backend-opt inject=device_lost@64
expect_grep "... in the last case's measured request, step 7" '"request_id":"baseline/random-decode-past17-o8-00/1".*"retest_after_reset":"failed"' z2.jsonl

# conform writes through the same writer: a lost device in every check's first call
expect_exit "conform with a lost device: exit 2" 2 npu-replay conform --model m -j1 --checks kv-lanes,rejection --backend-opt inject=device_lost@1 --faults c.jsonl
expect_lines "conform: one line a check" 2 c.jsonl
expect_exit "conform's lines are calculet-fault/v1" 0 manifest-verify --schema calculet-fault/v1 c.jsonl
expect_grep "conform: kv-lanes, a device error, not recovered" '^\{"schema":"calculet-fault/v1","time":"[0-9T:Z-]+","side":"candidate","case_id":"kv-lanes","kind":"device_error","severity":"fatal","message":"conform kv-lanes: cpu: device lost since forward call 1","recovered":false,"retest_after_reset":"failed"\}$' c.jsonl
expect_exit "conform with a one-off timeout recovers" 2 npu-replay conform --model m -j1 --checks rejection --backend-opt inject=timeout@1 --faults c2.jsonl --side baseline
expect_grep "conform: rejection, a timeout, recovered" '"side":"baseline","case_id":"rejection","kind":"timeout","severity":"error","message":"conform rejection: cpu: timeout: forward call 1 did not complete","recovered":true,"retest_after_reset":"passed"' c2.jsonl
