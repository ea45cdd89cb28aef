# Red team (outside view) for golden-diff on the files engineers already have (issue 29):
# .npy, .npz (savez / savez_compressed), .safetensors, torch.save .pt, plain h5py HDF5, and
# folders of these. Every input is built here with numpy / h5py / torch (Debian python3).
# Authorities: docs/golden-diff.md "Inputs that are not goldens" (GD), docs/formats.md (FM),
# docs/golden-diff.1 (MAN), issue 29 ("one element off by 0.5 must fail by default").
# Data values are k/16 (|k| <= 64) so they are exact in f16, bf16 and f32 and every expected
# number below is worked out by hand (the differences are exactly 0.5 or 1).
. "$GOLDEN_ROOT/tests/e2e/lib.sh"

if [ -z "$PYTHON" ]; then
    echo "ok formats-redteam # skip no numpy"
    exit 0
fi
HAVE_TORCH=0
"$PYTHON" -c 'import torch' 2>/dev/null && HAVE_TORCH=1

"$PYTHON" - <<'PY' || echo "not ok rt-generate"
import json, os, struct, zipfile, io
import numpy as np, h5py
rng = np.random.default_rng(4029)

def st(path, tensors):
    """safetensors writer: tensors = list of (name, DTYPE, shape, raw little-endian bytes)"""
    hdr, off, blobs = {}, 0, []
    for name, dt, shape, raw in tensors:
        hdr[name] = {"dtype": dt, "shape": list(shape), "data_offsets": [off, off + len(raw)]}
        off += len(raw); blobs.append(raw)
    h = json.dumps(hdr).encode()
    open(path, "wb").write(struct.pack("<Q", len(h)) + h + b"".join(blobs))

a = (rng.integers(-64, 65, size=(32, 16)) / 16.0).astype(np.float32)
a[0, 0] = 1.0; a[5, 3] = 1.0; a[31, 15] = 1.0; a[2, 7] = 3.0; a[1, 2] = 1.0
b = a.copy(); b[5, 3] = 1.5                      # one element off by 0.5
np.save("a.npy", a); np.save("b.npy", b)
np.save("h_ref.npy", a.astype(np.float16)); np.save("h_cand.npy", b.astype(np.float16))
i = rng.integers(-1000, 1000, size=(40, 25)).astype(np.int64); i2 = i.copy(); i2[-1, -1] += 1
np.savez("i_ref.npz", ids=i); np.savez("i_cand.npz", ids=i2)
c = a.copy(); c[31, 15] = 1.5
np.savez_compressed("z_ref.npz", first=a, second=a); np.savez_compressed("z_cand.npz", first=a, second=c)
def bf16(x): return (np.ascontiguousarray(x, dtype="<f4").view("<u4") >> 16).astype("<u2").tobytes()
st("bf_ref.safetensors", [("w", "BF16", a.shape, bf16(a))])
st("bf_cand.safetensors", [("w", "BF16", b.shape, bf16(b))])
bo = rng.integers(0, 2, size=(7, 9)).astype(np.bool_); bo2 = bo.copy(); bo2[3, 4] = ~bo2[3, 4]
st("bo_ref.safetensors", [("mask", "BOOL", bo.shape, bo.tobytes())])
st("bo_cand.safetensors", [("mask", "BOOL", bo2.shape, bo2.tobytes())])
e4 = bytes([0x38] + [0x30 + (k % 8) for k in range(63)]); e4c = bytes([0x3C]) + e4[1:]
st("e4_ref.safetensors", [("q", "F8_E4M3", (8, 8), e4)]); st("e4_cand.safetensors", [("q", "F8_E4M3", (8, 8), e4c)])
with h5py.File("p_ref.h5", "w") as f:
    f.create_dataset("grp/x", data=a.astype(np.float64), chunks=(8, 8), compression="gzip")
with h5py.File("p_cand.h5", "w") as f:
    f.create_dataset("grp/x", data=b.astype(np.float64), chunks=(8, 8), compression="gzip")
iv = np.array([2**62, -2**62, 5, 2**62 + 1], dtype="<i8"); iv2 = iv.copy(); iv2[3] = 2**62 + 2
st("i62_ref.safetensors", [("v", "I64", iv.shape, iv.tobytes())]); st("i62_cand.safetensors", [("v", "I64", iv.shape, iv2.tobytes())])
u = np.array([2**64 - 1, 0, 7], dtype="<u8"); u2 = u.copy(); u2[0] = 2**64 - 2
np.save("u64_ref.npy", u.astype(">u8")); np.save("u64_cand.npy", u2)
big = (rng.integers(-64, 65, size=(1024, 4096)) / 16).astype(np.float32); big[0, 0] = 1.0; big[-1, -1] = 1.0
big2 = big.copy(); big2[0, 0] = 1.5; big2[-1, -1] = 1.5
np.savez_compressed("big_ref.npz", t=big); np.savez_compressed("big_cand.npz", t=big2)
# identical data in other formats / layouts
st("a.safetensors", [("weight", "F32", a.shape, a.tobytes())])
with h5py.File("a_plain.h5", "w") as f:
    f["a"] = a
np.savez("a.npz", a=a)
np.save("a_be.npy", a.astype(">f4"))
bf = b.copy(); bf[1, 2] = 1.5                   # Fortran candidate off at [1, 2] and [5, 3]
np.save("b_f.npy", np.asfortranarray(bf))
fw = (rng.integers(-64, 65, size=(3, 300000)) / 16).astype(np.float32); fw[0, 1] = 1.0; fw[2, 299999] = 1.0
fw2 = fw.copy(); fw2[0, 1] = 1.5; fw2[2, 299999] = 1.5
np.save("fw_ref.npy", fw); np.save("fw_cand.npy", np.asfortranarray(fw2))
np.savez("two_ref.npz", p=a, q=a); np.savez("two_cand.npz", r=a, s=a)
# truncated / lying / damaged files
raw = open("a.safetensors", "rb").read(); open("trunc.safetensors", "wb").write(raw[:-64])
rz = bytearray(open("z_ref.npz", "rb").read())
info = zipfile.ZipFile("z_ref.npz").getinfo("second.npy")
lh = info.header_offset; fnl, exl = struct.unpack("<HH", rz[lh + 26:lh + 30])
mid = lh + 30 + fnl + exl + info.compress_size // 2
rz[mid] ^= 0xFF; rz[mid + 1] ^= 0x55
open("zbad.npz", "wb").write(bytes(rz))
buf = io.BytesIO(); np.save(buf, a); m = buf.getvalue()
with zipfile.ZipFile("lies.npz", "w", zipfile.ZIP_STORED) as z:
    z.writestr("a.npy", m.replace(b"(32, 16)", b"(33, 16)"))
os.makedirs("extdir", exist_ok=True); a.tofile("extdir/ext.raw")
with h5py.File("extdir/x.h5", "w") as f:
    f.create_dataset("a", shape=a.shape, dtype="<f4", external=[("ext.raw", 0, a.nbytes)])
os.makedirs("extref", exist_ok=True)
with h5py.File("extref/x.h5", "w") as f:
    f["a"] = a
# folders
for d in ("fr", "fc", "fswap", "fmiss"):
    os.makedirs(d + "/l0", exist_ok=True); os.makedirs(d + "/l1", exist_ok=True)
x0 = (rng.integers(-64, 65, size=(8, 8)) / 16).astype(np.float32); x0[0, 0] = 2.0
x1 = (rng.integers(-64, 65, size=(8, 8)) / 16).astype(np.float32); x1[0, 0] = -2.0
x1b = x1.copy(); x1b[6, 6] += np.float32(0.5)
for d, (p0, p1) in {"fr": (x0, x1), "fc": (x0, x1b), "fswap": (x1, x0), "fmiss": (x0, None)}.items():
    np.save(d + "/l0/out.npy", p0)
    if p1 is not None: np.save(d + "/l1/out.npy", p1)
open("fc/README.txt", "w").write("notes about this candidate\n")
# hand-made hostile .pt: posix.system via GLOBAL/REDUCE (protocol 2)
cmd = b"touch PWNED"
p = b"\x80\x02cposix\nsystem\nq\x00X" + struct.pack("<I", len(cmd)) + cmd + b"\x85R."
with zipfile.ZipFile("evil_system.pt", "w", zipfile.ZIP_STORED) as z:
    z.writestr("archive/data.pkl", p); z.writestr("archive/version", "3\n")
PY

if [ "$HAVE_TORCH" = 1 ]; then
"$PYTHON" - <<'PY' || echo "not ok rt-generate-torch"
import numpy as np, torch, io, zipfile, struct, os
a = np.load("a.npy"); b = np.load("b.npy")
ta = torch.from_numpy(a)
torch.save({"w": ta.to(torch.bfloat16)}, "bf_ref.pt")
torch.save({"w": torch.from_numpy(b).to(torch.bfloat16)}, "bf_cand.pt")
torch.save(ta.clone(), "a.pt")
# transposed view: the storage holds a.T, the saved tensor is its .t() (== a by value)
tv = ta.t().contiguous().t(); assert tv.stride() == (1, 32)
torch.save({"x": tv}, "tv_ref.pt"); torch.save({"x": ta.clone()}, "c_ref.pt")
bt = torch.from_numpy(b.copy()); torch.save({"x": bt.t().contiguous().t()}, "tv_cand.pt")
# 3-D reversed-axes view (strides (1, 4, 20)), off at [3, 1, 2]
t3 = torch.arange(120, dtype=torch.float32).view(4, 5, 6) / 16
np.save("t3_ref.npy", t3.numpy())
t3b = t3.clone(); t3b[3, 1, 2] += 0.5
torch.save({"t3": t3b.permute(2, 1, 0).contiguous().permute(2, 1, 0)}, "t3v_cand.pt")
# two views of one storage at offsets 0 and 256; candidate storage element 273 (= hi[1, 1]) +0.5
s = torch.arange(512, dtype=torch.float32) / 16
torch.save({"lo": s[:256].view(16, 16), "hi": s[256:].view(16, 16)}, "share_ref.pt")
s2 = s.clone(); s2[256 + 17] += 0.5
torch.save({"lo": s2[:256].view(16, 16).clone(), "hi": s2[256:].view(16, 16).clone()}, "share_cand.pt")
torch.save(torch.nn.Linear(4, 3), "module.pt")
r = open("a.pt", "rb").read(); open("trunc.pt", "wb").write(r[: len(r) - 700])
# a state_dict with a valid tensor 'w' and, after it, 'z' = posix.system(cmd) (SETITEM before STOP)
buf = io.BytesIO(); torch.save({"w": ta.clone()}, buf)
zf = zipfile.ZipFile(io.BytesIO(buf.getvalue())); names = zf.namelist()
pk = zf.read([n for n in names if n.endswith("/data.pkl")][0]); assert pk.endswith(b".")
cmd = b"touch PWNED3"
pk2 = pk[:-1] + b"X\x01\x00\x00\x00zcposix\nsystem\nX" + struct.pack("<I", len(cmd)) + cmd + b"\x85Rs."
with zipfile.ZipFile("evil_mixed.pt", "w", zipfile.ZIP_STORED) as z:
    for nm in names:
        z.writestr(nm, pk2 if nm.endswith("/data.pkl") else zf.read(nm))
for d in ("ptr/sub", "ptc/sub"):
    os.makedirs(d, exist_ok=True)
torch.save(ta.clone(), "ptr/sub/w.pt"); np.save("ptc/sub/w.npy", a)
PY
fi

# jget FILE EXPR: a Python expression over j = the JSON report
jget() { "$PYTHON" -c "import json,sys; j=json.load(open(sys.argv[1])); print($2)" "$1" 2>/dev/null; }
# expect_eq NAME GOT WANT
expect_eq() { if [ "$2" = "$3" ]; then ok "$1"; else notok "$1" "got '$2', wanted '$3'"; fi; }

# === 1. One element off by 0.5 fails by default (issue 29 "Defaults an engineer expects"; GD
# "Default tier": kernel, elementwise; MAN kernel tolerances f16 1e-5/1e-3, bf16 1e-5/1.6e-2,
# f64 1e-7/1e-7; at |r| = 1 each is far below 0.5).
# 1: f16 .npy, 1.0 -> 1.5 at [5, 3]: tolerance 1e-5 + 1e-3 = 0.00101.
expect_exit rt-npy-f16-half-fails 1 golden-diff h_ref.npy h_cand.npy
# 2: int64 np.savez member, last element +1: integers compared exactly (MAN "At every tier").
expect_exit rt-npz-int64-last-fails 1 golden-diff i_ref.npz i_cand.npz
# 3: np.savez_compressed, the second member's last element [31, 15] off: that member alone
# fails, with exactly 1 mismatch.
golden-diff --json z.json z_ref.npz z_cand.npz > out.txt 2> err.txt; rc=$?
expect_eq rt-npz-deflated-second-member-fails "$rc:$(jget z.json "[(t['name'], t.get('mismatches')) for t in j['tensors'] if t['verdict']=='fail']")" "1:[('second', 1)]"
# 4: deflated 16 MiB member, the first and the last element off: exactly 2 mismatches
# (numpy: (big2 != big).sum() == 2) whatever order the parallel readers inflate in.
golden-diff --json bz.json big_ref.npz big_cand.npz > out.txt 2> err.txt; rc=$?
expect_eq rt-npz-deflated-big-first-last-fails "$rc:$(jget bz.json "j['tensors'][0].get('mismatches')")" "1:2"
# 5: bf16 .safetensors (tolerance 1e-5 + 1.6e-2 at |r| = 1).
expect_exit rt-safetensors-bf16-half-fails 1 golden-diff bf_ref.safetensors bf_cand.safetensors
# 6: bool .safetensors, [3, 4] flipped: bool tolerance 0/0 (GD dtype table).
expect_exit rt-safetensors-bool-flip-fails 1 golden-diff bo_ref.safetensors bo_cand.safetensors
# 7: fp8_e4m3fn 0x38 (1.0) -> 0x3C (1.5): 0.5 > 2^-10 + 0.125 * 1 (GD fp8 tolerances).
expect_exit rt-safetensors-fp8-e4m3-half-fails 1 golden-diff e4_ref.safetensors e4_cand.safetensors
# 8: plain HDF5 (h5py, chunked + gzip, in group grp): f64, named grp/x, worst at [5, 3], 0.5.
golden-diff --json p.json p_ref.h5 p_cand.h5 > out.txt 2> err.txt; rc=$?
expect_eq rt-h5py-gzip-f64-half-fails "$rc:$(jget p.json "(j['tensors'][0]['name'], j['tensors'][0]['max_abs_index'], j['tensors'][0]['max_abs'])")" "1:('grp/x', [5, 3], 0.5)"
# 9: integers beyond 2^53 (GD: "exact |c - r| computed on the integers, not in f64"):
# 2^62+1 vs 2^62+2 (i64 .safetensors) and 2^64-1 vs 2^64-2 (big-endian u64 .npy against
# little-endian) are equal in f64 but must fail.
expect_exit rt-int64-beyond-2p53-fails 1 golden-diff i62_ref.safetensors i62_cand.safetensors
expect_exit rt-uint64-bigendian-max-fails 1 golden-diff u64_ref.npy u64_cand.npy

# === 2. Identical data in two formats passes; naming and pairing (GD "Names").
# 10: a.npy (tensor "a") against a.safetensors (tensor "weight"): single-tensor files pair by
# position, JSON paired_by "position", max_abs 0.
golden-diff --json pos.json a.npy a.safetensors > out.txt 2> err.txt; rc=$?
expect_eq rt-npy-vs-safetensors-by-position-passes "$rc:$(jget pos.json "(j['tensors'][0].get('paired_by'), j['tensors'][0]['max_abs'])")" "0:('position', 0.0)"
# 11: h5py dataset "a" against np.savez member "a".
expect_exit rt-h5py-vs-npz-identical-passes 0 golden-diff a_plain.h5 a.npz
# 12: big-endian .npy (">f4") against the little-endian .safetensors: compared by value (FM ".npy").
expect_exit rt-bigendian-npy-vs-safetensors-passes 0 golden-diff a_be.npy a.safetensors
# 13: multi-tensor files with other names (p,q vs r,s) do not pair by position (GD: only
# single-tensor files do): p and q are missing in the candidate -> exit 1.
expect_exit rt-npz-two-members-no-position-pairing 1 golden-diff two_ref.npz two_cand.npz

# === 3. Layouts compare by value (FM "Fortran order in bounded memory").
# 14: C-order a.npy against a Fortran-order candidate off at [1, 2] and [5, 3] (0.5 each):
# 2 mismatches, worst (first maximal in C order) at [1, 2] -- in value coordinates.
golden-diff --json f.json a.npy b_f.npy > out.txt 2> err.txt; rc=$?
expect_eq rt-fortran-index-in-c-coords "$rc:$(jget f.json "(j['tensors'][0].get('mismatches'), j['tensors'][0]['max_abs_index'])")" "1:(2, [1, 2])"
# 15: Fortran (3, 300000): one C slice (1.2 MB) exceeds the 1 MiB chunk (the recursive path).
golden-diff --json fw.json fw_ref.npy fw_cand.npy > out.txt 2> err.txt; rc=$?
expect_eq rt-fortran-wide-recursive-path "$rc:$(jget fw.json "(j['tensors'][0].get('mismatches'), j['tensors'][0]['max_abs_index'])")" "1:(2, [0, 1])"

# === 4. Refused inputs: exit 2 naming the file (MAN "2: could not compare"), no partial report.
# 16: .safetensors cut 64 bytes short (FM: end <= data length).
expect_exit rt-safetensors-truncated-refused 2 golden-diff a.safetensors trunc.safetensors
expect_grep rt-safetensors-truncated-names-file 'trunc\.safetensors' err.txt
# 17: stored .npz member whose header says (33, 16) over 32*16*4 bytes (FM ".npy").
expect_exit rt-npz-member-lying-header-refused 2 golden-diff a.npy lies.npz
expect_grep rt-npz-member-lying-names-file 'lies\.npz' err.txt
# 18: two bytes of a deflated member's compressed data flipped: inflate error or CRC-32
# mismatch (FM "Deflated members"); --json leaves no report behind.
golden-diff --json zb.json z_ref.npz zbad.npz > out.txt 2> err.txt; rc=$?
expect_eq rt-npz-deflated-damaged-refused "$rc" 2
expect_absent rt-npz-deflated-damaged-no-report zb.json
# 19: plain HDF5 with external raw storage, met inside a folder (GD "Plain HDF5": exit 2).
expect_exit rt-h5-external-in-folder-refused 2 golden-diff extref extdir
expect_grep rt-h5-external-names-file 'extdir/x\.h5' err.txt
# 20: hand-made .pt whose data.pkl calls posix.system (FM ".pt": any other global refused,
# "a Python object (posix system)"), and the command did not run.
expect_exit rt-pt-os-system-refused 2 golden-diff a.npy evil_system.pt
expect_grep rt-pt-os-system-says-what 'posix system' err.txt
expect_absent rt-pt-os-system-not-run PWNED

# === 5. Folders (GD "Skipped files are listed"; "Folders therefore pair by relative path").
# 21: l1/out off by 0.5 at [6, 6]: l1/out fails, l0/out passes; README.txt noted on stderr
# and in summary.skipped.
golden-diff --json fd.json fr fc > out.txt 2> err.txt; rc=$?
expect_eq rt-folder-diff-in-l1-fails "$rc:$(jget fd.json "sorted((t['name'], t['verdict']) for t in j['tensors'])")" "1:[('l0/out', 'pass'), ('l1/out', 'fail')]"
expect_grep rt-folder-readme-noted 'skipped candidate: .*README\.txt' err.txt
expect_eq rt-folder-readme-in-json "$(jget fd.json "any('README.txt' in s for s in j['summary'].get('skipped', []))")" "True"
# 22: contents of l0/out and l1/out swapped: pairing by relative path makes both fail.
expect_exit rt-folder-swapped-fails 1 golden-diff fr fswap
# 23: l1/out.npy missing from the candidate folder: exit 1 and named in the JSON.
golden-diff --json fm.json fr fmiss > out.txt 2> err.txt; rc=$?
expect_eq rt-folder-missing-in-candidate-fails "$rc:$(jget fm.json "j['summary']['missing_in_candidate']")" "1:['l1/out']"

# === 6. --atol/--rtol as typed (issue 29; GD "Resolution order": they override everything;
# MAN kernel: an element fails only when |c - r| > atol + rtol |r|). |b - a| = 0.5 at |a| = 1;
# max |a| = 4 > atol, so the "atol above the values" flag does not fire.
# 24: --atol 0.6 passes, --atol 0.4 fails, --atol 0.5 (exactly the bound, f16) passes.
expect_exit rt-atol-0.6-passes 0 golden-diff --atol 0.6 --rtol 0 a.npy b.npy
expect_exit rt-atol-0.4-fails 1 golden-diff --atol 0.4 --rtol 0 a.npy b.npy
expect_exit rt-atol-exact-bound-passes 0 golden-diff --atol 0.5 --rtol 0 h_ref.npy h_cand.npy
#     and --rtol alone: 0.5 <= 0.5 * 1 passes; 0.4 * 1 < 0.5 fails.
expect_exit rt-rtol-0.5-passes 0 golden-diff --atol 0 --rtol 0.5 a.npy b.npy
expect_exit rt-rtol-0.4-fails 1 golden-diff --atol 0 --rtol 0.4 a.npy b.npy
# 25: a declared integer tolerance is used (GD changes, 3): int64 off by 1 with --atol 1 passes.
expect_exit rt-int-atol-1-passes 0 golden-diff --atol 1 i_ref.npz i_cand.npz

# === 7. JSON tier_reason and no_stored_hash (GD "No stored hash is never a pass", "Default tier").
# 26: two .npy: tier kernel, tier_reason the non-golden default, no_stored_hash both sides,
# summary.no_stored_hash present.
golden-diff --json j1.json a.npy b.npy > out.txt 2> err.txt
expect_eq rt-json-tier-kernel-default "$(jget j1.json "(j['tensors'][0]['tier'], 'not goldens' in j['tensors'][0]['tier_reason'])")" "('kernel', True)"
expect_eq rt-json-no-stored-hash-both "$(jget j1.json "(j['tensors'][0]['no_stored_hash'], 'no_stored_hash' in j['summary'])")" "(['reference', 'candidate'], True)"
# 27: a golden made from a.npy against a.npy: pass; only the candidate lacks a stored hash.
golden-dump -o g.h5 a.npy > /dev/null 2>&1
golden-diff --json j2.json g.h5 a.npy > out.txt 2> err.txt; rc=$?
expect_eq rt-golden-vs-npy-no-stored-hash-candidate "$rc:$(jget j2.json "j['tensors'][0].get('no_stored_hash')")" "0:['candidate']"

# === 8. PyTorch torch.save files (FM "PyTorch .pt / .pth"), when torch is installed.
if [ "$HAVE_TORCH" = 1 ]; then
    # 28: bf16 state_dict 'w' off by 0.5.
    expect_exit rt-pt-bf16-half-fails 1 golden-diff bf_ref.pt bf_cand.pt
    # 29: the same bf16 bits in .pt and .safetensors (both named 'w'): pass.
    expect_exit rt-pt-vs-safetensors-bf16-passes 0 golden-diff bf_ref.pt bf_ref.safetensors
    # 30: transposed view (strides (1, 32), read as Fortran order) vs a C-order copy: pass;
    # the candidate view off at [5, 3] reports [5, 3] (value coordinates).
    expect_exit rt-pt-transposed-view-passes 0 golden-diff tv_ref.pt c_ref.pt
    golden-diff --json tv.json c_ref.pt tv_cand.pt > out.txt 2> err.txt; rc=$?
    expect_eq rt-pt-transposed-view-index "$rc:$(jget tv.json "j['tensors'][0]['max_abs_index']")" "1:[5, 3]"
    #     and a 3-D reversed-axes view against the C .npy (by position): only [3, 1, 2] off.
    golden-diff --json t3v.json t3_ref.npy t3v_cand.pt > out.txt 2> err.txt; rc=$?
    expect_eq rt-pt-3d-permuted-view-index "$rc:$(jget t3v.json "(j['tensors'][0].get('mismatches'), j['tensors'][0]['max_abs_index'])")" "1:(1, [3, 1, 2])"
    # 31: two views sharing one storage (storage_offset 0 and 256); storage element 273 off is
    # hi[1, 1]: hi fails there, lo passes.
    golden-diff --json sh.json share_ref.pt share_cand.pt > out.txt 2> err.txt; rc=$?
    expect_eq rt-pt-shared-storage-offset "$rc:$(jget sh.json "sorted((t['name'], t['verdict'], t.get('max_abs_index')) for t in j['tensors'])")" "1:[('hi', 'fail', [1, 1]), ('lo', 'pass', [0, 0])]"
    # 32: torch.save(nn.Linear) -> exit 2, "a PyTorch pickle of a module object".
    expect_exit rt-pt-module-refused 2 golden-diff module.pt a.pt
    expect_grep rt-pt-module-says-module 'module object' err.txt
    # 33: a real state_dict with posix.system hidden in a second value after a valid tensor:
    # refused (globals are refused when named, before anything else), nothing run, no report.
    golden-diff --json em.json a.pt evil_mixed.pt > out.txt 2> err.txt; rc=$?
    expect_eq rt-pt-mixed-evil-refused "$rc" 2
    expect_absent rt-pt-mixed-evil-not-run PWNED3
    expect_absent rt-pt-mixed-evil-no-report em.json
    # 34: truncated .pt: exit 2 naming the file.
    expect_exit rt-pt-truncated-refused 2 golden-diff a.pt trunc.pt
    expect_grep rt-pt-truncated-names-file 'trunc\.pt' err.txt
    # 35: folder with a bare-tensor sub/w.pt against a folder with sub/w.npy (same data):
    # FM "Folders": "a .pt holding one bare tensor is named by its path in the folder without
    # the suffix (sub/w.pt -> sub/w), as a .npy is"; FM issue-29 section: the reader's folder
    # walk follows those rules. Expected: one tensor sub/w, pass.
    golden-diff --json pf.json ptr ptc > out.txt 2> err.txt; rc=$?
    expect_eq rt-folder-bare-pt-named-by-path "$rc:$(jget pf.json "[t['name'] for t in j['tensors']]")" "0:['sub/w']"
else
    echo "ok rt-torch # skip no torch"
fi
