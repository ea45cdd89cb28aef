# Issue 29's defaults on the files engineers have, checked against numpy: a tensor whose name
# gives no tier, from a .npy, .npz, .safetensors, .pt (written without torch by
# tests/tools/pt_writer.py) or plain HDF5 file, is judged at the kernel tier with its dtype's
# tolerances (one element off by 0.5 fails) and --explain says so and why; the MISMATCHES
# count is numpy's |c - r| > atol + rtol |r| as typed; an int `epoch` beside the tensors of a
# .pt is listed as skipped; a torch.save zip without a suffix is read; int64 beyond 2^53 has
# its exact max_abs.
. "$GOLDEN_ROOT/tests/e2e/lib.sh"
if [ -z "$PYTHON" ]; then echo "ok defaults29 # SKIP python3 with numpy and h5py not found"; exit 0; fi
export PYTHONPATH="$GOLDEN_ROOT/tests/tools${PYTHONPATH:+:$PYTHONPATH}"
"$PYTHON" - <<'PYEOF' || notok write-inputs
import json, struct, numpy as np, h5py, pt_writer as pw
a = (np.arange(64, dtype=np.float32) / 16 + 1).reshape(4, 16)
b = a.copy(); b[2, 5] += 0.5
for n, x in (("a", a), ("b", b)):
    np.save(n + ".npy", x)
    np.savez(n + ".npz", w=x)
    pw.save({"w": pw.Tensor(pw.Storage(x), shape=x.shape)}, n + ".pt")
    pw.save({"w": pw.Tensor(pw.Storage(x), shape=x.shape), "epoch": 3}, n + "_epoch.pt")
    pw.save({"w": pw.Tensor(pw.Storage(x), shape=x.shape)}, n + "_ckpt")
    with h5py.File(n + ".h5", "w") as f:
        f["w"] = x
    h = json.dumps({"w": {"dtype": "F32", "shape": list(x.shape), "data_offsets": [0, x.nbytes]}}).encode()
    open(n + ".safetensors", "wb").write(struct.pack("<Q", len(h)) + h + x.tobytes())
# mismatches: some elements inside atol + rtol |r|, some outside (numpy counts them)
rng = np.random.default_rng(29)
r = rng.standard_normal(4096).astype(np.float32)
c = (r + rng.standard_normal(4096).astype(np.float32) * np.float32(1e-3)).astype(np.float32)
np.save("r.npy", r); np.save("c.npy", c)
rd, cd = r.astype(np.float64), c.astype(np.float64)
for atol, rtol in ((1e-3, 0.0), (5e-4, 1e-3), (0.0, 0.0)):
    n = int((np.abs(cd - rd) > atol + rtol * np.abs(rd)).sum())
    open("want_%g_%g" % (atol, rtol), "w").write(str(n))
# int64 beyond 2^53: f64 rounds 2^60 + 7 and 2^60 + 8 to the same value; the integers differ by 1
i = np.array([2**60, 2**60 + 7, 5, -2**62], dtype=np.int64)
j = i.copy(); j[1] += 1; j[3] -= 3
np.save("i1.npy", i); np.save("i2.npy", j)
PYEOF
jq_py() { "$PYTHON" -c "import json,sys; t=json.load(open('$1'))['tensors'][0]; print(repr(($2,)))"; }

for e in npy npz safetensors pt h5; do
    expect_exit "$e-default-kernel-one-element-fails" 1 golden-diff --json "$e.json" "a.$e" "b.$e"
    got=$(jq_py "$e.json" "t['tier'], t['mismatches'], 'not goldens' in t['tier_reason'], t['max_abs'], t['max_abs_index']")
    if [ "$got" = "('kernel', 1, True, 0.5, [2, 5])" ]; then ok "$e-tier-reason-json"; else notok "$e-tier-reason-json" "$got"; fi
    expect_grep "$e-table-says-tier-and-why" '^tier: kernel .* for 1 tensor of files that are not goldens and whose names give no tier' out.txt
    nm=w; [ "$e" = npy ] && nm=a
    expect_exit "$e-explain" 0 golden-diff --explain "$nm" "a.$e" "b.$e"
    expect_grep "$e-explain-kernel-why" '^  tier +kernel +default for files that are not goldens' out.txt
    expect_grep "$e-explain-dtype-table" '^  atol +1e-05 +dtype table \(f32\)' out.txt
done
# a policy's default_tier or a rule still wins, and --explain says which
printf 'schema: calculet-diff-policy/v1\ndefault_tier: layer\n' > dt.yaml
expect_exit policy-default-tier-explain 0 golden-diff -p dt.yaml --explain w a.npz b.npz
expect_grep policy-default-tier-explain-line '^  tier +layer +default_tier' out.txt
# goldens keep their default (layer): --explain on a golden does not say "not goldens"
golden-dump -o ga.h5 a.npz > /dev/null 2>&1
expect_exit golden-explain 0 golden-diff --explain w ga.h5 ga.h5
if grep -q 'not goldens' out.txt; then notok golden-explain-not-foreign; else ok golden-explain-not-foreign; fi

# MISMATCHES = numpy's count at the tolerance as typed (kernel tier)
for tol in "0.001 0" "0.0005 0.001" "0 0"; do
    set -- $tol
    want=$(cat "want_$(awk "BEGIN{printf \"%g_%g\", $1, $2}")")
    golden-diff -f --tier kernel --atol "$1" --rtol "$2" --json m.json r.npy c.npy > out.txt 2>&1
    got=$(jq_py m.json "t['mismatches']")
    if [ "$got" = "($want,)" ] && [ "$want" -gt 0 ]; then ok "mismatches-numpy-$1-$2"; else
        notok "mismatches-numpy-$1-$2" "golden-diff $got, numpy $want"; fi
    if grep -Eq "^FAIL +kernel +r +f32/f32 .* $want +$want of 4096 elements" out.txt; then
        ok "mismatches-column-$1-$2"; else notok "mismatches-column-$1-$2" "$(head -c 400 out.txt)"; fi
done

# .pt: an int epoch beside the tensors is listed as skipped, never silent; the tensor compared
expect_exit pt-epoch-compared 1 golden-diff --json e.json a_epoch.pt b_epoch.pt
expect_grep pt-epoch-skipped-note 'note: skipped reference: a_epoch.pt:epoch: a int, not a tensor' err.txt
got=$("$PYTHON" -c "import json; d=json.load(open('e.json')); print(len(d['tensors']), len(d['summary']['skipped']))")
if [ "$got" = "1 2" ]; then ok pt-epoch-skipped-json; else notok pt-epoch-skipped-json "$got"; fi
expect_exit pt-epoch-list 0 golden-dump --list a_epoch.pt
expect_grep pt-epoch-list-note 'note: skipped a_epoch.pt:epoch' err.txt

# a torch.save zip without a suffix, named itself: read by content, as golden-dump -o reads it
expect_exit suffixless-zip-diff 1 golden-diff a_ckpt b_ckpt
expect_grep suffixless-zip-verdict '^FAIL +kernel +w ' out.txt
expect_exit suffixless-zip-list 0 golden-dump --list a_ckpt
expect_exit suffixless-zip-dump 0 golden-dump -o ck.h5 a_ckpt
# in a folder, a zip without .npz/.pt/.pth is listed as skipped, never read silently
mkdir -p fa fb && cp a.npy fa/x.npy && cp b.npy fb/x.npy && cp a_ckpt fa/ && cp b_ckpt fb/
expect_exit folder-zip-by-suffix 1 golden-diff fa fb
expect_grep folder-zip-skipped-note 'note: skipped .*a_ckpt.*zip archive not named' err.txt

# int64 beyond 2^53: max_abs is the exact integer difference (3 at [3]), not a rounded 0
expect_exit int64-differs 1 golden-diff --json i.json i1.npy i2.npy
got=$(jq_py i.json "t['max_abs'], t['max_abs_index'], t['integer_mismatches']")
if [ "$got" = "(3.0, [3], 2)" ]; then ok int64-exact-max-abs; else notok int64-exact-max-abs "$got"; fi
