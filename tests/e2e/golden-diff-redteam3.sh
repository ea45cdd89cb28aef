# golden-diff, third red-team pass (issue 25) and the stored-statistics regression (issue 34).
# Expected values are worked out by hand or by numpy in this file, never by golden-diff.
. "$GOLDEN_ROOT/tests/e2e/lib.sh"

if [ -z "$PYTHON" ]; then
    echo "ok redteam3 # skip numpy+h5py not importable"
    exit 0
fi
flat() { tr -d ' \n' < "$1"; }

# ---- issue 34: a golden whose stored statistics lie (data and sha256 intact) ----
make-golden st.h5 'layers/0/out:f32:64x64:rand=1,-1,1' 'ids:i32:4x8:fill=3' || echo "not ok make-st"
for attr in std min mean nan_count; do
    cp st.h5 "lie-$attr.h5"
done
"$PYTHON" - <<'PY' || echo "not ok tamper-stats"
import h5py, numpy as np
for attr in ("std", "min", "mean", "nan_count"):
    with h5py.File("lie-%s.h5" % attr, "r+") as f:
        d = f["layers/0/out"]
        v = d.attrs[attr]
        if attr == "nan_count":
            d.attrs.modify(attr, np.uint64(int(v) + 1))
        else:
            d.attrs.modify(attr, np.float64(float(v) * 1.5 + 0.25))
PY
for attr in std min mean nan_count; do
    expect_exit "stats-lie-ref-$attr" 2 golden-diff "lie-$attr.h5" st.h5
    expect_grep "stats-lie-ref-$attr-names" "lie-$attr\.h5:layers/0/out: stored statistics do not match the data: $attr is" err.txt
    expect_lines "stats-lie-ref-$attr-no-table" 0 out.txt
done
expect_exit stats-lie-cand 2 golden-diff -j 2 --chunk 1000 st.h5 lie-std.h5
expect_grep stats-lie-cand-names 'lie-std\.h5:layers/0/out: stored statistics do not match the data: std is' err.txt
make-golden st2.h5 'layers/0/out:f32:64x64:rand=1,-1,1;set=100,0.5' 'ids:i32:4x8:fill=3' || echo "not ok make-st2"
expect_exit stats-lie-baseline 2 golden-diff --baseline lie-mean.h5 st.h5 st2.h5
expect_grep stats-lie-baseline-names 'lie-mean\.h5:layers/0/out: .*mean is' err.txt
expect_exit stats-lie-dump-agrees 1 golden-dump --verify lie-std.h5
expect_exit stats-trusted 0 golden-diff --trust-hashes --json tr.json lie-std.h5 st.h5
expect_grep stats-trusted-summary 'stored statistics not checked' out.txt
flat tr.json > tr.json.flat
expect_grep stats-trusted-json '"statistics":"notchecked\(--trust-hashes\)"' tr.json.flat
# odd chunk sizes and threads: honest statistics still agree (no false alarm)
expect_exit stats-honest-chunks 0 golden-diff -j 2 --chunk 333 --json h.json st.h5 st.h5
flat h.json > h.json.flat
expect_grep stats-honest-json '"statistics":"checked' h.json.flat
