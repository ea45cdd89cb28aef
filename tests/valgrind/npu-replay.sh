# npu-replay's main paths under valgrind on the tiny model: make-model, matrix, run (with a
# golden and raw timings), conform (two checks, pass and a planted fault), profile, and a bad
# model folder (exit 1 and 2 are expected; 99 means valgrind found a problem).
set -u
run() {
    want=$1; shift
    $VG "$@" > /dev/null 2> vg.err
    got=$?
    if [ "$got" -ne "$want" ]; then
        echo "exit $got (wanted $want): $*"; cat vg.err; exit 1
    fi
}
run 0 npu-replay make-model --preset tiny --seed 3 -o m
run 0 npu-replay matrix --model m --max-len 8 --random 1 --repeated 1 -o man.jsonl -j1
run 0 npu-replay run --model m --manifest man.jsonl --side baseline --golden g.h5 --raw raw.jsonl \
    --warmup 0 --runs 1 --taps 'layers/*/router/*' -j1
run 0 npu-replay run --model m --manifest man.jsonl --side candidate --golden c.h5 --raw raw2.jsonl \
    --warmup 0 --runs 1 --taps 'layers/*/router/*' -j2 --backend-opt dtype=bf16
run 0 npu-replay conform --model m -j1 --checks causal-mask,router --max-context 16 --json ok.json
run 1 npu-replay conform --model m -j1 --checks router --max-context 16 \
    --backend-opt inject=router_duplicate --json bad.json --junit bad.xml
run 0 npu-replay profile g.h5 c.h5 --json p.json
mkdir broken && printf '{"model_type": "nope"}\n' > broken/config.json
run 2 npu-replay run --model broken --manifest man.jsonl --side baseline --golden x.h5 --raw x.jsonl
exit 0
