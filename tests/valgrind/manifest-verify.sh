# manifest-verify's main paths under valgrind: experiment check (pass and fail), seal, schema
# mode on JSON, YAML and JSONL, hand-off, reports. Exit codes 0/1 are verdicts; 99 is valgrind.
set -u
EX="$GOLDEN_ROOT/examples/experiment/OP-MOE-0001"
DATA="$GOLDEN_ROOT/tests/data/schemas"
run() { want=$1; shift; $VG "$@" > /dev/null 2> vg.err; rc=$?
    if [ "$rc" -ne "$want" ]; then echo "exit $rc (wanted $want): $*"; cat vg.err; exit 1; fi; }
run 0 manifest-verify "$EX"
cp -R "$EX" exp && rm -f exp/SHA256SUMS && mv exp OP-MOE-0001
run 0 manifest-verify --seal OP-MOE-0001
printf 'x' >> OP-MOE-0001/decision.md
sed -i 's/"pii_review":"passed"/"pii_review":"pending"/' OP-MOE-0001/golden/calibration-manifest.jsonl
run 1 manifest-verify --json r.json --junit r.xml OP-MOE-0001
run 0 manifest-verify --schema calculet-verify-report/v1 r.json
run 1 manifest-verify --schema calculet-op-experiment/v1 "$DATA"/calculet-op-experiment/v1/invalid/*.yaml
run 0 manifest-verify --schema calculet-raw-request/v1 "$DATA"/calculet-raw-request/v1/valid/requests.jsonl
run 0 manifest-verify --handoff "$GOLDEN_ROOT/examples/handoff" --json h.json
printf 'a: &a [1,1,1,1,1,1,1,1]\nb: &b [*a,*a,*a,*a,*a,*a,*a,*a]\nc: [*b,*b,*b,*b,*b,*b,*b,*b,*b]\n' > y.yaml
$VG manifest-verify --schema calculet-fault/v1 y.yaml > /dev/null 2> vg.err; rc=$?
[ "$rc" -eq 99 ] && { cat vg.err; exit 1; }
run 2 manifest-verify nowhere
exit 0
