# Hostile golden files: deterministic corruptions (bytes overwritten or the file cut) of a
# golden file in the checksummed HDF5 1.8 format golden-dump writes (most are refused by the
# checksums), and of the unchecksummed 0.1.0 anchor (where HDF5 itself may crash or loop, and
# the tools' guard must turn that into a refusal). Every tool ends with 0, 1 or 2, never
# hangs, never crashes, and a refusal (2) is exactly one error line.
. "$GOLDEN_ROOT/tests/e2e/lib.sh"
# HDF5's own small leaks on malformed metadata are not ours (see the file)
LSAN_OPTIONS="suppressions=$GOLDEN_ROOT/ci/lsan-hdf5.supp:print_suppressions=0${LSAN_OPTIONS:+:$LSAN_OPTIONS}"
# a hostile length makes HDF5 ask for a huge block: let it fail as malloc does without ASan
ASAN_OPTIONS="allocator_may_return_null=1${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
# the 120 s default watchdog: a spin must end within the per-run timeout by the isolated
# first walk's limits (issue 11), not by a shortened watchdog
GOLDEN_HDF5_TIMEOUT=120
export LSAN_OPTIONS ASAN_OPTIONS GOLDEN_HDF5_TIMEOUT
golden-dump -o good.h5 "$GOLDEN_ROOT/goldens/sample" > /dev/null 2>&1 || notok "make the golden"
# attack FILE SEEDS: corrupt FILE SEEDS times and run every tool on each copy
attack() {
    bad=""; refused=0; runs=0
    seed=1
    while [ "$seed" -le "$2" ]; do
        corrupt "$1" c.h5 "$seed"
        for mode in verify list diff; do
            case $mode in
            verify) timeout 60 golden-dump --verify c.h5 > o.txt 2> e.txt ;;
            list) timeout 60 golden-dump --list c.h5 > o.txt 2> e.txt ;;
            diff) timeout 60 golden-diff "$1" c.h5 > o.txt 2> e.txt ;;
            esac
            rc=$?
            runs=$((runs + 1))
            if [ "$rc" -gt 2 ] || grep -q 'Sanitizer\|runtime error' e.txt; then
                bad="$bad seed $seed $mode: exit $rc $(head -c 200 e.txt);"
            elif [ "$rc" -eq 2 ]; then
                refused=$((refused + 1))
                [ "$(wc -l < e.txt)" -eq 1 ] || bad="$bad seed $seed $mode: $(wc -l < e.txt) error lines;"
                # the refusal names the corrupt copy, never the intact reference
                grep -q "c\.h5" e.txt || bad="$bad seed $seed $mode: names the wrong file: $(head -c 200 e.txt);"
            elif [ "$mode" = verify ] && [ "$rc" -eq 0 ] && ! grep -q "^c\.h5: $3 tensors" o.txt; then
                # a corrupt golden never verifies as PASS with fewer tensors than it holds
                bad="$bad seed $seed verify: PASS on $(head -c 100 o.txt);"
            fi
        done
        seed=$((seed + 1))
    done
}
attack good.h5 100 3
if [ -z "$bad" ]; then ok "tools survive 100 corrupted 1.8-format goldens ($runs runs, $refused refused)"
else notok "tools survive 100 corrupted 1.8-format goldens" "$bad"; fi
cp "$GOLDEN_ROOT/goldens/sample-v1.h5" old.h5
attack old.h5 60 3
if [ -z "$bad" ]; then ok "tools survive 60 corrupted unchecksummed goldens ($runs runs, $refused refused)"
else notok "tools survive 60 corrupted unchecksummed goldens" "$bad"; fi
