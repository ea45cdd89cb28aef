# End-to-end checks of golden-diff on golden files written by make-golden (no python):
# the handbook's fault cases, tiers, policy, mapping, three-way mode, outputs and exit codes.
. "$GOLDEN_ROOT/tests/e2e/lib.sh"

# grep for a compact JSON fragment: the report is pretty-printed, so squeeze it first
jq_like() { tr -d ' \n' < "$1" > "$1.flat"; }
expect_json() { jq_like "$3"; expect_grep "$1" "$2" "$3.flat"; }

expect_exit help 0 golden-diff --help
expect_grep help-usage '^usage: golden-diff' out.txt
expect_exit version 0 golden-diff --version
expect_grep version-text '^golden-diff 0\.1\.0$' out.txt
expect_exit no-args 2 golden-diff
expect_exit bad-option 2 golden-diff --frobnicate a b
expect_exit bad-tier 2 golden-diff --tier final a b

# ---- identical and near-identical files pass ----
make-golden ref.h5 'layers/0/out:f32:8x16:rand=1,-1,1' 'layers/1/out:f32:16x16:rand=5,-1,1' \
    'logits:f32:2000x16:rand=2,-5,5;set=3,9;set=4,9.05' 'tokens:i32:4x12:seq=100,3' \
    'empty:f32:0x4:fill=0' 'scalar:f64:scalar:values=2.5' || echo "not ok make-golden-ref"
expect_exit identical 0 golden-diff ref.h5 ref.h5
expect_grep identical-summary '^PASS: 6 tensors compared, 6 passed, 0 failed' out.txt

# ---- one NaN injected in a layer output ----
make-golden nan.h5 'layers/0/out:f32:8x16:rand=1,-1,1;set=37,nan' 'layers/1/out:f32:16x16:rand=5,-1,1' \
    'logits:f32:2000x16:rand=2,-5,5;set=3,9;set=4,9.05' 'tokens:i32:4x12:seq=100,3' \
    'empty:f32:0x4:fill=0' 'scalar:f64:scalar:values=2.5'
expect_exit nan-fails 1 golden-diff --json nan.json ref.h5 nan.h5
expect_json nan-reason '"name":"layers/0/out","tier":"layer","verdict":"fail","reasons":\["1newNaNand0newInfinthecandidatewherethereferenceisfinite\(firstat\[2,5\]\)"\]' nan.json
expect_json nan-counts '"nan_reference":0,"nan_candidate":1' nan.json
expect_json nan-only-one-fails '"tensors":6,"passed":5,"failed":1' nan.json
golden-diff ref.h5 nan.h5 > nan.txt
expect_grep nan-table-first '^FAIL +layer +layers/0/out ' nan.txt
if [ "$(sed -n 2p nan.txt | awk '{print $3}')" = layers/0/out ]; then ok nan-failing-first; else
    notok nan-failing-first "$(cat nan.txt)"; fi

# ---- a transposed tensor: the same statistics, a different tensor ----
make-golden tr.h5 'layers/1/out:f32:16x16:rand=5,-1,1;transpose'
expect_exit transposed-fails 1 golden-diff --only 'layers/1/*' --json tr.json ref.h5 tr.h5
expect_json transposed-cosine '"reasons":\["cosine-?0\.[0-9]+<0\.999",' tr.json
expect_grep transposed-table 'cosine -?0\.[0-9]+ < 0\.999' out.txt
make-golden trs.h5 'x:f32:3x5:seq=0,1;transpose'
make-golden trr.h5 'x:f32:3x5:seq=0,1'
expect_exit transposed-shape 1 golden-diff --json trs.json trr.h5 trs.h5
expect_json transposed-shape-reason '"shapediffers:reference\[3,5\],candidate\[5,3\]"' trs.json
expect_json transposed-shape-null '"max_abs":null' trs.json

# ---- logits: one flipped argmax outside a near tie fails; a flip inside one is reported as such ----
make-golden l100.h5 'logits:f32:100x16:rand=2,-5,5;set=39,20'
make-golden l100f.h5 'logits:f32:100x16:rand=2,-5,5;set=39,20;set=41,30'
expect_exit logits-flip-fails 1 golden-diff --json l100.json l100.h5 l100f.h5
expect_grep logits-flip-reason 'top1_match 0\.99 < 0\.999 \(1 of 100 rows flipped: 1 outside near ties, 0 in near-tie rows with margin < one f32 step at \|top1\|\)' out.txt
expect_json logits-flip-entry '"flips":\[\{"row":2,"reference_top1":7,"candidate_top1":9,"margin":1[0-9.]+,"near_tie":false\}\]' l100.json
make-golden lg.h5 'logits:f32:2000x16:rand=2,-5,5;set=3,9;set=4,9.05;set=39,20'
make-golden lgf.h5 'logits:f32:2000x16:rand=2,-5,5;set=3,9.06;set=4,9.05;set=39,20;set=41,30'
# two flips in 2000 rows: top1 = 0.999 is not below the first-round 0.999
# row 2 gains a logit of 30 over a top of 20: its distribution is another one (KL ~10), so the
# default KL gate fails it even though 2 flips of 2000 rows meet top1_min 0.999
expect_exit logits-two-flips-kl-fails 1 golden-diff --json lgf0.json lg.h5 lgf.h5
expect_grep logits-two-flips-kl-reason 'KL\(softmax\(reference\) \|\| softmax\(candidate\)\) [0-9.]+ > 0\.01 \(row 2;' out.txt
# with the distribution gates opened and the margin set, only the top-1 gates speak
printf '{"schema": "calculet-diff-policy/v1", "tiers": {"logits": {"kl_max": 100, "logsoftmax_max_abs": 100, "near_tie_margin": 0.1}}}\n' > open.json
expect_exit logits-two-flips-pass 0 golden-diff --policy open.json --json lgf.json lg.h5 lgf.h5
expect_json logits-top1 '"top1_match":0\.999,' lgf.json
expect_json logits-near-tie '"near_tie_flips":1' lgf.json
expect_json logits-flips '"flips":\[\{"row":0,"reference_top1":4,"candidate_top1":3,"margin":0\.0[0-9]+,"near_tie":true\},\{"row":2,"reference_top1":7,"candidate_top1":9,"margin":1[0-9.]+,"near_tie":false\}\]' lgf.json
# the default margin is one step of the pair's format: 0.05 apart in f32 is no near tie
expect_json logits-no-near-tie-f32 '"near_tie_flips":0' lgf0.json
printf '{"schema": "calculet-diff-policy/v1", "tiers": {"logits": {"top1_min": 0.9995, "kl_max": 100, "logsoftmax_max_abs": 100, "near_tie_margin": 0.1}}}\n' > strict.json
expect_exit logits-strict-fails 1 golden-diff --policy strict.json lg.h5 lgf.h5
expect_grep logits-reason 'top1_match 0\.999 < 0\.9995 \(2 of 2000 rows flipped: 1 outside near ties, 1 in near-tie rows with margin < 0\.1\)' out.txt
make-golden lgn.h5 'logits:f32:2000x16:rand=2,-5,5;set=3,9.06;set=4,9.05;set=39,20'
expect_exit logits-near-tie-only-passes 0 golden-diff --policy strict.json lg.h5 lgn.h5

# ---- tokens diverging at step 5 of row 2 ----
make-golden tk.h5 'tokens:i32:4x12:seq=100,3;set=29,999'
expect_exit tokens-fail 1 golden-diff --only tokens --json tk.json ref.h5 tk.h5
expect_json tokens-divergence '"first_divergence":\[-1,-1,5,-1\]' tk.json
expect_json tokens-reason '1of4tokensequencesdiverge;earliestatstep5\(row2\)' tk.json
make-golden tkf.h5 'tokens:f32:4x12:seq=100,3'
expect_exit tokens-float-fails 1 golden-diff --only tokens ref.h5 tkf.h5
expect_grep tokens-float-reason 'dtype class differs: reference i32 is integer, candidate f32 is float' out.txt

# ---- bf16 rounding of an f32 golden at the layer tier passes (and at kernel, bf16 tolerance) ----
make-golden g32.h5 'layers/2/out:f32:64x64:rand=9,-3,3'
make-golden c16.h5 'layers/2/out:bf16:64x64:rand=9,-3,3;round=f32'
expect_exit bf16-layer-passes 0 golden-diff --json bf.json g32.h5 c16.h5
expect_json bf16-zero-ulp '"max_ulp":0,' bf.json
expect_json bf16-ulp-dtype '"ulp_dtype":"bf16"' bf.json
# the tolerance is the f32 reference's: a bf16 candidate needs a declared compute dtype
expect_exit bf16-kernel-f32-tolerance-fails 1 golden-diff --tier kernel g32.h5 c16.h5
expect_grep bf16-kernel-f32-reason 'rtol 1\.3e-06 \* \|reference\| \(f32 tolerance\)' out.txt
printf '{"schema": "calculet-diff-policy/v1", "compute_dtype": "bf16"}\n' > cbf16.json
expect_exit bf16-kernel-passes 0 golden-diff --policy cbf16.json --tier kernel g32.h5 c16.h5
expect_exit bf16-kernel-tight-fails 1 golden-diff --policy cbf16.json --tier kernel --rtol 1e-6 g32.h5 c16.h5
expect_grep bf16-kernel-reason 'elements differ by more than atol 1e-05 \+ rtol 1e-06 \* \|reference\| \(bf16 tolerance\) \(worst at \[[0-9]+, [0-9]+\]: [0-9.e+]+x its tolerance; max_abs [0-9.e-]+\)' out.txt

# ---- missing tensors ----
make-golden part.h5 'layers/0/out:f32:8x16:rand=1,-1,1' 'extra:u8:3:values=1,2,3'
# a tensor only in the candidate is not judged and does not fail the run (issue 25; it did)
expect_exit only-in-candidate-not-judged 0 golden-diff --only 'layers/0/*' --only extra --json miss.json ref.h5 part.h5
expect_json missing-lists '"missing_in_candidate":\[\],"missing_in_reference":\["extra"\]' miss.json
expect_grep only-in-candidate-table '^- +- +extra +only in the candidate: not judged' out.txt
expect_exit missing-all-fails 1 golden-diff ref.h5 part.h5
expect_grep missing-table 'missing in the candidate' out.txt
# --allow-missing is split (issue 25): the missing tensors are named, logits and tokens only
# by their exact names
expect_exit allow-missing-refused 2 golden-diff --allow-missing ref.h5 part.h5
expect_grep allow-missing-refused-why 'allow-missing-in-candidate GLOB' err.txt
expect_exit allow-missing-glob-not-logits 1 golden-diff --allow-missing-in-candidate '*' ref.h5 part.h5
expect_grep allow-missing-glob-logits-fails '^FAIL +- +logits +missing in the candidate$' out.txt
expect_grep allow-missing-glob-layer-allowed '^missing +- +layers/1/out +missing in the candidate \(allowed\)' out.txt
expect_grep allow-missing-summary ', 5 missing in the candidate \(3 allowed\), 1 only in the candidate \(not judged\)' out.txt
expect_exit allow-missing-named 0 golden-diff --allow-missing-in-candidate '*' --allow-missing-in-candidate logits --allow-missing-in-candidate tokens ref.h5 part.h5

# ---- name mapping ----
make-golden renamed.h5 'model.layers.0.out:f32:8x16:rand=1,-1,1'
printf 'schema: calculet-diff-policy/v1\nmap:\n  - from: "model.layers.*.out"\n    to: "layers/*/out"\n' > map.yaml
printf '{"schema": "calculet-diff-policy/v1", "map": [{"from": "model\\\\.layers\\\\.([0-9]+)\\\\.out", "to": "layers/\\\\1/out", "regex": true}]}\n' > map.json
expect_exit map-glob 0 golden-diff --only 'layers/0/*' --map map.yaml ref.h5 renamed.h5
expect_exit map-regex 0 golden-diff --only 'layers/0/*' --map map.json --json map-out.json ref.h5 renamed.h5
expect_json map-candidate-name '"name":"layers/0/out","candidate_name":"model.layers.0.out"' map-out.json
expect_exit unmapped-missing 1 golden-diff --only 'layers/0/*' ref.h5 renamed.h5

# ---- policy files ----
printf '{"schema": "calculet-diff-policy/v1", "rules": [{"match": "layers/2/*", "tier": "kernel", "rtol": 1e-6}]}\n' > kern.json
expect_exit policy-rule-fails 1 golden-diff --policy kern.json --json pk.json g32.h5 c16.h5
expect_json policy-rule-tier '"tier":"kernel"' pk.json
printf '{"schema": "calculet-diff-policy/v1", "default_tier": "final"}\n' > badpol.json
expect_exit policy-invalid 2 golden-diff --policy badpol.json g32.h5 c16.h5
expect_grep policy-invalid-line '^golden-diff: badpol\.json' err.txt
expect_lines policy-invalid-one-line 1 err.txt

# ---- three-way: the reference is only so close; the candidate is judged against the baseline ----
make-golden tw-ref.h5 'layers/3/out:f32:128x64:rand=11,-1,1'
make-golden tw-base.h5 'layers/3/out:bf16:128x64:rand=11,-1,1;noise=7,0.063'
make-golden tw-good.h5 'layers/3/out:bf16:128x64:rand=11,-1,1;noise=8,0.065'
make-golden tw-bad.h5 'layers/3/out:bf16:128x64:rand=11,-1,1;noise=9,0.2'
expect_exit three-way-absolute-fails 1 golden-diff tw-ref.h5 tw-good.h5
expect_exit three-way-excused 0 golden-diff --baseline tw-base.h5 --json tw1.json tw-ref.h5 tw-good.h5
expect_json three-way-note '"notes":\["cosine0\.99[0-9]+<0\.999;excused:1\.[0-9]+xthebaseline.serror\(limit1\.25x\)"' tw1.json
expect_json three-way-ratio '"error_metric":"rel_err"' tw1.json
expect_exit three-way-worse 1 golden-diff --baseline tw-base.h5 --json tw2.json tw-ref.h5 tw-bad.h5
expect_json three-way-reason 'cosine0\.9[0-9]+<0\.999and[0-9.]+xthebaseline.serror\(limit1\.25x\)' tw2.json

# ---- outputs ----
expect_exit junit 1 golden-diff --junit j.xml ref.h5 nan.h5
n=$(grep -c '<testcase' j.xml)
if [ "$n" -eq 6 ]; then ok junit-one-case-per-tensor; else notok junit-one-case-per-tensor "$n cases"; fi
expect_grep junit-failure '<failure message="1 new NaN' j.xml
echo keep > exists.json
expect_exit no-overwrite 2 golden-diff --json exists.json ref.h5 ref.h5
expect_grep no-overwrite-kept '^keep$' exists.json
expect_exit force-overwrite 0 golden-diff --force --json exists.json ref.h5 ref.h5
expect_grep force-written '"verdict": "pass"' exists.json
expect_exit json-stdout 0 golden-diff --json - ref.h5 ref.h5
expect_grep json-stdout-schema '"schema": "calculet-diff-report/v1"' out.txt
expect_exit unreadable 2 golden-diff ref.h5 nonexistent.h5
expect_grep unreadable-where '^golden-diff: nonexistent\.h5' err.txt
expect_lines unreadable-one-line 1 err.txt
echo 'not hdf5' > junk.h5
expect_exit junk-input 2 golden-diff ref.h5 junk.h5

# ---- chunked and threaded runs give the same report, in the same order ----
golden-diff -j 1 --chunk 7 --json r1.json ref.h5 nan.h5 >/dev/null
golden-diff -j 2 --chunk 7 --json r2.json ref.h5 nan.h5 >/dev/null
grep -v '"seconds"' r1.json > r1.txt; grep -v '"seconds"' r2.json > r2.txt
if cmp -s r1.txt r2.txt; then ok threads-deterministic; else notok threads-deterministic "$(diff r1.txt r2.txt | head -5)"; fi
golden-diff -j 2 --json r3.json ref.h5 nan.h5 >/dev/null
jq_like r1.json; jq_like r3.json
for k in mismatches max_abs new_nan top1_match near_tie_rows; do
    a=$(grep -o "\"$k\":[^,]*" r1.json.flat | tr '\n' ' '); b=$(grep -o "\"$k\":[^,]*" r3.json.flat | tr '\n' ' ')
    if [ "$a" = "$b" ]; then ok "chunking-same-$k"; else notok "chunking-same-$k" "$a vs $b"; fi
done

# ---- empty and scalar tensors ----
expect_json empty-count '"name":"empty","tier":"layer","verdict":"pass","reasons":\[\],"dtype_reference":"f32","dtype_candidate":"f32","shape":\[0,4\],"count":0,"max_abs":null' r1.json
expect_json scalar-entry '"name":"scalar","tier":"layer","verdict":"pass","reasons":\[\],"dtype_reference":"f64","dtype_candidate":"f64","shape":\[\],"count":1,"max_abs":0\.0,"max_abs_index":\[\]' r1.json

# ---- YAML policies are validated against calculet-diff-policy/v1 with line:column ----
printf 'schema: calculet-diff-policy/v1\nrules:\n  - match: "layers/2/*"\n    tiers: kernel\n' > typo.yaml
expect_exit policy-yaml-typo 2 golden-diff --policy typo.yaml g32.h5 c16.h5
expect_grep policy-yaml-where '^golden-diff: typo\.yaml:4:[0-9]+: /rules/0/tiers' err.txt
printf 'schema: calculet-diff-policy/v1\ndefault_tier: kernel\ndtypes:\n  bf16: {rtol: 1.0e-6}\n' > tight.yaml
expect_exit policy-yaml-dtype 1 golden-diff --policy tight.yaml g32.h5 c16.h5
# f32 golden, bf16 candidate: the looser of the two dtypes' rtol (f32's 1.3e-6) wins
expect_grep policy-yaml-dtype-reason 'atol 1e-05 \+ rtol 1\.3e-06' out.txt

# ---- every report written above is a valid calculet-diff-report/v1 document ----
for f in nan.json tr.json trs.json l100.json lgf.json tk.json bf.json miss.json map-out.json pk.json tw1.json tw2.json r1.json; do
    expect_exit "schema-$f" 0 schema-check "$f" calculet-diff-report/v1
done
# and the schema can say no
sed 's/"verdict": "fail"/"verdict": "maybe"/' nan.json > bad-report.json
expect_exit schema-rejects-bad-verdict 1 schema-check bad-report.json calculet-diff-report/v1

# ---- usage errors are one line on stderr ----
expect_exit usage-one-line 2 golden-diff --chunk 0 ref.h5 ref.h5
expect_lines usage-one-line-count 1 err.txt
expect_grep usage-one-line-text '^golden-diff: usage: --chunk' err.txt
expect_exit usage-bad-number 2 golden-diff --threads many ref.h5 ref.h5
expect_lines usage-bad-number-count 1 err.txt

# ---- chunked+deflated datasets (read through HDF5, not pread) compare the same ----
make-golden --gzip=4 gz.h5 'layers/0/out:f32:8x16:rand=1,-1,1;set=37,nan' 'layers/1/out:f32:16x16:rand=5,-1,1' \
    'logits:f32:2000x16:rand=2,-5,5;set=3,9;set=4,9.05' 'tokens:i32:4x12:seq=100,3' \
    'empty:f32:0x4:fill=0' 'scalar:f64:scalar:values=2.5'
golden-diff -j 2 --chunk 7 --json gz.json ref.h5 gz.h5 >/dev/null
grep -v '"seconds"' gz.json | sed 's/"candidate": "gz.h5"/"candidate": "nan.h5"/' > gz.txt
if cmp -s r1.txt gz.txt; then ok gzip-same-report; else notok gzip-same-report "$(diff r1.txt gz.txt | head -5)"; fi

# ---- the report records the command-line overrides ----
golden-diff --tier kernel --rtol 1e-6 --json ov.json g32.h5 c16.h5 > /dev/null
expect_json overrides-recorded '"overrides":\{"tier":"kernel","rtol":(1e-0?6|9\.99999+[0-9]*e-0?7)\}' ov.json
expect_exit overrides-schema 0 schema-check ov.json calculet-diff-report/v1

# ---- interoperability: a golden written by golden-dump from a raw dump ----
if command -v golden-dump >/dev/null 2>&1; then
    mkdir -p dump
    # f32 1, 2, 3, 4 little-endian, and 1, 2, 3, 4.5 for a candidate
    printf '\000\000\200\077\000\000\000\100\000\000\100\100\000\000\200\100' > dump/x.bin
    printf '\000\000\200\077\000\000\000\100\000\000\100\100\000\000\220\100' > dump/y.bin
    printf '{"schema": "calculet-dump-index/v1", "tensors": [{"name": "layers/0/x", "file": "x.bin", "offset": 0, "dtype": "f32", "shape": [2, 2]}]}\n' > dump/index.json
    golden-dump -o dumped.h5 dump > /dev/null 2>&1 || notok golden-dump-wrote
    printf '{"schema": "calculet-dump-index/v1", "tensors": [{"name": "layers/0/x", "file": "y.bin", "offset": 0, "dtype": "f32", "shape": [2, 2]}]}\n' > dump/index.json
    golden-dump -o dumped2.h5 dump > /dev/null 2>&1 || notok golden-dump-wrote-2
    make-golden made.h5 'layers/0/x:f32:2x2:values=1,2,3,4'
    expect_exit golden-dump-interop 0 golden-diff --tier kernel --atol 0 --rtol 0 made.h5 dumped.h5
    expect_exit golden-dump-interop-diff 1 golden-diff --tier kernel --json gdd.json made.h5 dumped2.h5
    expect_json golden-dump-interop-max '"max_abs":0\.5,"max_abs_index":\[1,1\]' gdd.json
else
    echo "ok golden-dump-interop # skip golden-dump not built"
fi
