# golden-diff checks every tensor it reads against its stored sha256 (issue 19, point 5):
# HDF5 checksums metadata, not raw data, so one float overwritten in a golden (h5py, the
# attributes left alone) used to pass a candidate that matches the wrong value.
. "$GOLDEN_ROOT/tests/e2e/lib.sh"

if [ -z "$PYTHON" ]; then
    echo "ok hashes # skip numpy+h5py not importable"
    exit 0
fi
jq_like() { tr -d ' \n' < "$1" > "$1.flat"; }
expect_json() { jq_like "$3"; expect_grep "$1" "$2" "$3.flat"; }

make-golden ref.h5 'layers/0/out:f32:64x64:rand=1,-1,1' 'empty:f32:0x4:fill=0' || echo "not ok make-ref"
cp ref.h5 bad-ref.h5
# the candidate holds the value the tampered golden now says
make-golden cand.h5 'layers/0/out:f32:64x64:rand=1,-1,1;set=100,7.5' 'empty:f32:0x4:fill=0'
"$PYTHON" - <<'PY' || echo "not ok tamper"
import h5py, hashlib, numpy as np
with h5py.File("bad-ref.h5", "r+") as f:
    d = f["layers/0/out"]
    v = d[...]; v.flat[100] = 7.5; d[...] = v
    stored = d.attrs["sha256"]
    stored = stored.decode() if isinstance(stored, bytes) else stored
    open("stored.txt", "w").write(stored)
    open("data.txt", "w").write(hashlib.sha256(np.ascontiguousarray(v, "<f4").tobytes()).hexdigest())
PY
expect_exit tampered-golden-fails 1 golden-diff --json h.json bad-ref.h5 cand.h5
expect_grep tampered-reason "the reference's data does not match its stored sha256 \(stored $(head -c 16 stored.txt)\.\.\., data $(head -c 16 data.txt)\.\.\.\)" out.txt
expect_json tampered-json '"sha256_mismatch":\["reference"\]' h.json
expect_json hashes-checked '"hashes":"checked:' h.json
expect_exit trusted-passes 0 golden-diff --trust-hashes --json t.json bad-ref.h5 cand.h5
expect_grep trusted-says-so 'sha256 not checked \(--trust-hashes\)' out.txt
expect_json trusted-json '"hashes":"trusted:storedsha256notchecked\(--trust-hashes\)"' t.json
# the candidate's data is checked too, with a chunk size that splits the tensor (in-order digest)
cp cand.h5 bad-cand.h5
"$PYTHON" -c "
import h5py
with h5py.File('bad-cand.h5', 'r+') as f:
    d = f['layers/0/out']; v = d[...]; v.flat[4000] = -3.0; d[...] = v
" || echo "not ok tamper-cand"
expect_exit tampered-candidate-fails 1 golden-diff -j 2 --chunk 100 --only 'layers/*' ref.h5 bad-cand.h5
expect_grep tampered-candidate-reason "the candidate's data does not match its stored sha256" out.txt
expect_exit untouched-passes 0 golden-diff -j 2 --chunk 100 ref.h5 ref.h5
