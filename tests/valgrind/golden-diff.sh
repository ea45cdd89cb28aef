# golden-diff's main paths under valgrind: two-way with every output, three-way with a
# policy and a map, a failing verdict, and an input error. Leaks are errors.
set -u
# One thread: golden-diff opens its inputs side by side on threads, and each open forks a child
# for its HDF5 walk; memcheck then reports, in a child forked from one of several threads, the
# other threads' allocations (reachable only from stacks the child does not have) as definitely
# lost, and the child's exit 99 reads as "HDF5 failed". The parent's leaks are what this checks;
# the threaded opens run under ASan/LSan in the sanitizer suite.
GOLDEN_THREADS=1; export GOLDEN_THREADS
make-golden ref.h5 'layers/0/out:f32:8x16:rand=1,-1,1' 'logits:f32:20x16:rand=2,-5,5' \
    'tokens:i32:4x12:seq=100,3' 'empty:f32:0x4:fill=0' || exit 1
make-golden cand.h5 'model.layers.0.out:bf16:8x16:rand=1,-1,1;set=3,nan' \
    'logits:f32:20x16:rand=2,-5,5;set=5,9' 'tokens:i32:4x12:seq=100,3;set=20,1' \
    'empty:f32:0x4:fill=0' || exit 1
make-golden base.h5 'layers/0/out:bf16:8x16:rand=1,-1,1' 'logits:f32:20x16:rand=2,-5,5' \
    'tokens:i32:4x12:seq=100,3' || exit 1
printf '{"schema": "calculet-diff-policy/v1", "rules": [{"match": "layers/*", "tier": "kernel"}], "map": [{"from": "model.layers.*.out", "to": "layers/*/out"}]}\n' > pol.json
$VG golden-diff --json r.json --junit r.xml ref.h5 cand.h5 > /dev/null
[ $? -eq 1 ] || exit 1
$VG golden-diff --policy pol.json --baseline base.h5 -j 1 --chunk 5 --json - ref.h5 cand.h5 > /dev/null
[ $? -eq 1 ] || exit 1
printf 'schema: calculet-diff-policy/v1\nmap:\n  - from: "model\\\\.layers\\\\.([0-9]+)\\\\.out"\n    to: "layers/\\\\1/out"\n    regex: true\n' > map.yaml
$VG golden-diff --map map.yaml --tier kernel --rtol 0.1 ref.h5 cand.h5 > /dev/null
[ $? -eq 1 ] || exit 1
printf 'schema: calculet-diff-policy/v1\ndefault_tier: final\n' > bad.yaml
$VG golden-diff --policy bad.yaml ref.h5 ref.h5 2> /dev/null
[ $? -eq 2 ] || exit 1
$VG golden-diff ref.h5 ref.h5 > /dev/null || exit 1
$VG golden-diff ref.h5 missing.h5 2> /dev/null
[ $? -eq 2 ] || exit 1
exit 0
