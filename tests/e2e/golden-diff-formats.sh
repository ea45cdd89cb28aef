# golden-diff (and golden-dump --list) on the files engineers already have (issue 29): .npy
# (C and Fortran order, big-endian), .safetensors, plain HDF5 written by h5py, goldens, and
# folders of these, told by content; every metric checked against numpy, computed here.
. "$GOLDEN_ROOT/tests/e2e/lib.sh"

if [ -z "$PYTHON" ]; then
    echo "ok formats # skip numpy+h5py not importable"
    exit 0
fi

"$PYTHON" - <<'PY' || echo "not ok formats-generate"
import json, os, struct
import numpy as np, h5py
rng = np.random.default_rng(29)
a = rng.standard_normal((64, 32)).astype(np.float32)
b = a + rng.standard_normal(a.shape).astype(np.float32) * np.float32(1e-4)
b[10, 7] += np.float32(0.5)
np.save("a.npy", a)
np.save("b.npy", b)
np.save("a_fortran.npy", np.asfortranarray(a))
np.save("b_fortran_be.npy", np.asfortranarray(b.astype(">f4")))
np.save("a_be.npy", a.astype(">f4"))
os.system("cp a.npy a.bin")  # told by content, not by suffix

def safetensors(path, tensors):
    hdr, off, blobs = {}, 0, []
    for name, arr in tensors.items():
        raw = np.ascontiguousarray(arr).astype(arr.dtype.newbyteorder("<")).tobytes()
        dt = {"float32": "F32", "float16": "F16", "int64": "I64"}[arr.dtype.name]
        hdr[name] = {"dtype": dt, "shape": list(arr.shape), "data_offsets": [off, off + len(raw)]}
        off += len(raw)
        blobs.append(raw)
    h = json.dumps(hdr).encode()
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)) + h + b"".join(blobs))

w = rng.standard_normal((16, 8)).astype(np.float16)
ids = rng.integers(0, 1000, size=(4, 6)).astype(np.int64)
safetensors("m.safetensors", {"model.w": w, "model.tokens": ids})
w2 = w.copy(); w2[3, 3] = np.float16(w2[3, 3] + np.float16(0.25))
safetensors("m2.safetensors", {"model.w": w2, "model.tokens": ids})

with h5py.File("m.h5", "w") as f:  # the same tensors, as h5py writes them
    f["model.w"] = w
    f["model.tokens"] = ids.astype(">i8")
    f["note"] = "a string dataset: skipped, listed"
    f.attrs["producer"] = "someone else's tool"
with h5py.File("ext.h5", "w") as f:
    f.create_dataset("x", shape=(4,), dtype="f4", external=[("ext.raw", 0, 16)])
    f["x"][:] = np.arange(4, dtype=np.float32)
with h5py.File("soft.h5", "w") as f:
    f["x"] = np.arange(4, dtype=np.float32)
    f["y"] = h5py.SoftLink("/x")

# hostile npy: truncated data, a header whose shape claims more than the file holds
raw = open("a.npy", "rb").read()
open("trunc.npy", "wb").write(raw[:len(raw) - 100])
hl = struct.unpack("<H", raw[8:10])[0]
hdr = raw[10:10 + hl].decode().replace("(64, 32)", "(640, 32)").encode()
open("lies.npy", "wb").write(raw[:8] + struct.pack("<H", len(hdr)) + hdr + raw[10 + hl:])
open("notes.txt", "w").write("hello\n")

os.makedirs("ref/sub", exist_ok=True); os.makedirs("cand/sub", exist_ok=True)
x = rng.standard_normal((8, 4)).astype(np.float32)
np.save("ref/sub/x.npy", x); np.save("cand/sub/x.npy", x)
np.save("ref/y.npy", a); np.save("cand/y.npy", b)
np.save("ref/z.npy", x); np.save("cand/z.npy", x)
open("cand/README.txt", "w").write("not a tensor\n")

def metrics(r, c):
    r = r.astype(np.float64).ravel(); c = c.astype(np.float64).ravel()
    d = np.abs(c - r)
    return {"max_abs": float(d.max()), "index": int(d.argmax()),
            "cosine": float(np.dot(r, c) / (np.linalg.norm(r) * np.linalg.norm(c))),
            "mean_abs": float(d.mean())}
json.dump({"ab": metrics(a, b), "w": metrics(w, w2)}, open("expect.json", "w"))
PY

# ---- .npy against .npy: the metrics are numpy's
expect_exit npy-kernel-fails 1 golden-diff --tier kernel --json ab.json a.npy b.npy
"$PYTHON" - <<'PY' && ok npy-metrics-match-numpy || notok npy-metrics-match-numpy
import json, sys
e = json.load(open("expect.json"))["ab"]; t = json.load(open("ab.json"))["tensors"][0]
close = lambda x, y: abs(x - y) <= 1e-9 * max(1, abs(y))
bad = [k for k in ("max_abs", "cosine", "mean_abs") if not close(t[k], e[k])]
if t["max_abs_index"] != [e["index"] // 32, e["index"] % 32]: bad.append("index")
if t["verdict"] != "fail" or t["tier"] != "kernel": bad.append("verdict")
if t["no_stored_hash"] != ["reference", "candidate"]: bad.append("no_stored_hash")
if t.get("paired_by") != "position": bad.append("paired_by")  # "a" and "b" pair by position
if t["sha256_mismatch"] != []: bad.append("sha256_mismatch")
if bad: print(bad, t)
sys.exit(1 if bad else 0)
PY
expect_grep npy-no-stored-hash-said 'no stored hash' out.txt 2>/dev/null || true
golden-diff --tier kernel a.npy b.npy > t.txt 2>&1
expect_grep npy-table-says-no-stored-hash 'with no stored hash' t.txt
expect_grep table-by-tier-line '^by tier: kernel 0 passed, 1 failed' t.txt
expect_exit npy-identical-passes 0 golden-diff a.npy a.npy
expect_exit npy-fortran-equals-c 0 golden-diff --tier kernel --atol 0 --rtol 0 a.npy a_fortran.npy
expect_exit npy-bigendian-equals 0 golden-diff --tier kernel --atol 0 --rtol 0 a.npy a_be.npy
expect_exit npy-by-content-not-suffix 0 golden-diff --tier kernel --atol 0 --rtol 0 a.bin a.npy
expect_exit npy-fortran-be-fails 1 golden-diff --tier kernel --json fb.json a_fortran.npy b_fortran_be.npy
"$PYTHON" -c '
import json, sys
e = json.load(open("expect.json"))["ab"]; t = json.load(open("fb.json"))["tensors"][0]
sys.exit(0 if abs(t["max_abs"] - e["max_abs"]) <= 1e-12 and t["max_abs_index"] == [e["index"] // 32, e["index"] % 32] else 1)' \
    && ok npy-fortran-bigendian-metrics || notok npy-fortran-bigendian-metrics
# --atol/--rtol as typed: loose enough for 0.5, the run passes
expect_exit npy-atol-as-typed 0 golden-diff --tier kernel --atol 0.6 --rtol 0 a.npy b.npy

# ---- .safetensors, plain HDF5 (h5py), goldens
expect_exit st-vs-h5py-identical 0 golden-diff --json sh.json m.safetensors m.h5
expect_grep h5py-string-dataset-noted 'note: skipped candidate: m.h5:note: a string dataset' err.txt
"$PYTHON" -c '
import json, sys
d = json.load(open("sh.json"))
names = sorted(t["name"] for t in d["tensors"])
sk = d["summary"]["skipped"]
sys.exit(0 if names == ["model.tokens", "model.w"] and len(sk) == 1 and "m.h5:note" in sk[0] else 1)' \
    && ok h5py-skipped-in-json || notok h5py-skipped-in-json
expect_exit st-changed-fails 1 golden-diff --tier kernel --json st.json m.safetensors m2.safetensors
"$PYTHON" -c '
import json, sys
e = json.load(open("expect.json"))["w"]
t = [t for t in json.load(open("st.json"))["tensors"] if t["name"] == "model.w"][0]
sys.exit(0 if abs(t["max_abs"] - e["max_abs"]) <= 1e-12 and t["mismatches"] == 1 else 1)' \
    && ok st-metrics-match-numpy || notok st-metrics-match-numpy
golden-dump -o a.h5 a.npy > /dev/null 2>&1
expect_exit golden-vs-npy 1 golden-diff --tier kernel --json gn.json a.h5 b.npy
"$PYTHON" -c '
import json, sys
t = json.load(open("gn.json"))["tensors"][0]
sys.exit(0 if t["no_stored_hash"] == ["candidate"] and t["sha256_mismatch"] == [] else 1)' \
    && ok golden-side-hash-checked || notok golden-side-hash-checked
expect_exit list-npy 0 golden-dump --list a.npy
"$PYTHON" -c '
import hashlib, numpy as np, sys
h = hashlib.sha256(np.load("a.npy").astype("<f4").tobytes()).hexdigest()
sys.exit(0 if h in open("out.txt").read() else 1)' && ok list-npy-sha256-is-hashlibs || notok list-npy-sha256-is-hashlibs
expect_exit list-h5py 0 golden-dump --list m.h5
expect_grep list-h5py-rows '^model\.tokens +i64 +4x6' out.txt

# ---- folders: paired by relative path, skipped files listed
expect_exit folders-fail-one 1 golden-diff --tier kernel --json fd.json ref cand
expect_grep folder-skip-noted 'note: skipped candidate: cand/README.txt: not a tensor file \(text\)' err.txt
"$PYTHON" -c '
import json, sys
d = json.load(open("fd.json"))
v = {t["name"]: t["verdict"] for t in d["tensors"]}
sys.exit(0 if v == {"sub/x": "pass", "y": "fail", "z": "pass"} and len(d["summary"]["skipped"]) == 1 else 1)' \
    && ok folders-by-relative-path || notok folders-by-relative-path
expect_exit failed-only 1 golden-diff --tier kernel --failed-only ref cand
if grep -q '^pass' out.txt; then notok failed-only-rows; else expect_grep failed-only-rows '^FAIL +kernel +y ' out.txt; fi
expect_exit limit-one 1 golden-diff --tier kernel --limit 1 ref cand
expect_grep limit-one-rest '2 more tensors not shown' out.txt

# ---- what is not a tensor file, and hostile inputs: one line, exit 2, no table
expect_exit text-refused 2 golden-diff --junit j.xml notes.txt a.npy
expect_grep text-says-what 'notes.txt: not a tensor file \(text\): the readers take goldens, \.npy' err.txt
expect_lines text-one-line 1 err.txt
expect_grep junit-on-exit-2 'could not compare: notes.txt' j.xml
expect_exit npy-truncated 2 golden-diff trunc.npy a.npy
expect_lines npy-truncated-one-line 1 err.txt
expect_exit npy-lying-shape 2 golden-diff lies.npy a.npy
expect_exit h5py-external-refused 2 golden-diff ext.h5 ext.h5
expect_grep h5py-external-says 'external raw file' err.txt
expect_exit h5py-soft-link-refused 2 golden-diff soft.h5 soft.h5
expect_grep h5py-soft-link-says 'soft link' err.txt
mkfifo fifo.npy
expect_exit fifo-refused 2 golden-diff fifo.npy a.npy
mkdir fifodir && mkfifo fifodir/p.npy && cp a.npy fifodir/
expect_exit fifo-in-folder-skipped 0 golden-diff fifodir fifodir
expect_grep fifo-in-folder-noted 'fifodir/p.npy: a FIFO' err.txt

# ---- defaults an engineer expects: no tier in the name, not a golden -> kernel, elementwise
"$PYTHON" -c '
import numpy as np
a = np.random.default_rng(7).standard_normal((512, 512)).astype(np.float32)
b = a.copy(); b[5, 5] += np.float32(0.5)
np.save("big_a.npy", a); np.save("big_b.npy", b)'
expect_exit default-kernel-one-element-fails 1 golden-diff --json dk.json big_a.npy big_b.npy
"$PYTHON" -c '
import json, sys
t = json.load(open("dk.json"))["tensors"][0]
sys.exit(0 if t["tier"] == "kernel" and t["mismatches"] == 1 and "not goldens" in t["tier_reason"] else 1)' \
    && ok default-kernel-tier-reason || notok default-kernel-tier-reason
expect_grep default-kernel-said-in-table '^tier: kernel .* for 1 tensor of files that are not goldens' out.txt
expect_exit layer-by-tier-option 0 golden-diff --tier layer big_a.npy big_b.npy

# ---- every report written here is a valid calculet-diff-report/v1
for f in ab.json sh.json st.json gn.json fd.json dk.json; do
    expect_exit "schema-$f" 0 schema-check "$f" calculet-diff-report/v1
done
