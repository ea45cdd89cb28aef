#!/bin/sh
# End-to-end tests of golden-dump's .npz and PyTorch .pt/.pth readers: archives written by numpy
# (np.savez stored, np.savez_compressed deflated), .pt files written WITHOUT torch
# (tests/tools/pt_writer.py: torch's zip layout and pickle stream from the stdlib) and, where
# python3-torch is installed, by torch.save. Every golden's sha256 is checked against hashlib
# over numpy's canonical bytes (little-endian, C order). Then hostile files: truncated,
# overlapping members, zip bombs, huge memo indices, deep nesting, unknown opcodes, a
# __reduce__ to os.system (refused, and nothing ran).
. "$GOLDEN_ROOT/tests/e2e/lib.sh"

if [ -z "$PYTHON" ]; then
    echo "ok skipped_no_numpy # SKIP python3 with numpy not found"
    exit 0
fi
export PYTHONPATH="$GOLDEN_ROOT/tests/tools${PYTHONPATH:+:$PYTHONPATH}"

# check_hashes NAME GOLDEN EXPECTED: the golden's (name, sha256) rows equal EXPECTED's.
check_hashes() {
    golden-dump --list "$2" > list.txt 2> list.err || { notok "$1" "list failed: $(head -c 300 list.err)"; return; }
    awk 'NR > 1 { print $1, $2, $3, $4 }' list.txt | sort > got.txt
    sort "$3" > want.txt
    if [ -s want.txt ] && cmp -s got.txt want.txt; then ok "$1"; else
        notok "$1" "$(diff want.txt got.txt | head -c 600)"; fi
}

# ---- numpy: savez (stored) and savez_compressed (deflated)
"$PYTHON" - <<'EOF' || notok numpy_write
import hashlib, numpy as np
rng = np.random.default_rng(29)
arrs = {
    "f32": rng.standard_normal((3, 5)).astype(np.float32),
    "f64": rng.standard_normal(7),
    "be_i32": np.arange(-6, 6, dtype=">i4").reshape(3, 4),
    "flags": np.array([True, False, True]),
    "i8": np.arange(-4, 4, dtype=np.int8),
    "f16": np.linspace(-2, 2, 9).astype(np.float16),
    "scalar": np.float64(2.5),
    "empty": np.zeros((0, 3), dtype=np.float32),
    "big": rng.standard_normal(300000).astype(np.float32),  # several read chunks
}
fortran = np.asfortranarray(np.arange(24, dtype=np.float32).reshape(2, 3, 4))
def dt(a):
    return {"float32": "f32", "float64": "f64", "int32": "i32", "bool": "bool", "int8": "i8",
            "float16": "f16"}[a.dtype.name]
def shape(a):
    return "x".join(map(str, a.shape)) if a.ndim else "scalar"
def row(name, a):
    a = np.asarray(a)
    canon = np.ascontiguousarray(a).astype(a.dtype.newbyteorder("<")).tobytes()
    return "%s %s %s %s\n" % (name, dt(a), shape(a), hashlib.sha256(canon).hexdigest())
np.savez("stored.npz", fortran=fortran, **arrs)
np.savez_compressed("deflated.npz", **arrs)
with open("stored.want", "w") as f:
    f.writelines(row(k, v) for k, v in arrs.items())
    f.write(row("fortran", fortran))
with open("deflated.want", "w") as f:
    f.writelines(row(k, v) for k, v in arrs.items())
np.savez_compressed("deflated_fortran.npz", fortran=fortran)
np.savez("objects.npz", o=np.array([1, "a"], dtype=object))
np.savez("empty_archive.npz")
EOF
expect_exit npz_stored_dump 0 golden-dump -o stored.h5 stored.npz
check_hashes npz_stored_hashes stored.h5 stored.want
expect_exit npz_deflated_dump 0 golden-dump -o deflated.h5 deflated.npz
check_hashes npz_deflated_hashes deflated.h5 deflated.want
expect_exit npz_verify 0 golden-dump --verify deflated.h5
# by content: an .npz under another name is still a zip, never parsed as a JSON index
cp stored.npz renamed.bin
expect_exit npz_by_content 0 golden-dump -o renamed.h5 renamed.bin
check_hashes npz_by_content_hashes renamed.h5 stored.want
expect_exit npz_deflated_fortran 2 golden-dump -o df.h5 deflated_fortran.npz
expect_grep npz_deflated_fortran_msg 'Fortran-order data in a deflated zip member is not read' err.txt
expect_exit npz_object_array 2 golden-dump -o ob.h5 objects.npz
expect_grep npz_object_array_msg "object arrays .* not read" err.txt
expect_exit npz_empty 2 golden-dump -o e.h5 empty_archive.npz
expect_grep npz_empty_msg 'holds no arrays' err.txt
expect_absent npz_no_partial e.h5

# ---- .pt files written by pt_writer (no torch)
"$PYTHON" - <<'EOF' || notok pt_write
import collections, hashlib, numpy as np, pt_writer as pw
rng = np.random.default_rng(6)
def row(name, a, dtn=None):
    canon = np.ascontiguousarray(a).astype(a.dtype.newbyteorder("<")).tobytes()
    dtn = dtn or {"float32": "f32", "float64": "f64", "int64": "i64", "uint16": "bf16",
                  "bool": "bool", "int32": "i32", "float16": "f16"}[a.dtype.name]
    return "%s %s %s %s\n" % (name, dtn, "x".join(map(str, a.shape)) if a.ndim else "scalar",
                              hashlib.sha256(canon).hexdigest())
w = rng.standard_normal((4, 3)).astype(np.float32)
b = rng.standard_normal(4).astype(np.float32)
# a bare tensor: named by the file's base name
pw.save(pw.Tensor(pw.Storage(w), shape=(4, 3)), "bare.pt")
open("bare.want", "w").write(row("bare", w))
# a nested state_dict: OrderedDict in dict, a list, a parameter, int64 and bool, a scalar
steps = np.arange(5, dtype=np.int64)
mask = np.array([True, False, False, True])
sd = {"model": collections.OrderedDict([("fc.weight", pw.Tensor(pw.Storage(w), shape=(4, 3), param=True)),
                                        ("fc.bias", pw.Tensor(pw.Storage(b)))]),
      "steps": pw.Tensor(pw.Storage(steps)),
      "masks": [pw.Tensor(pw.Storage(mask)), pw.Tensor(pw.Storage(np.float64(3.0)), shape=())]}
pw.save(sd, "nested.pth")
with open("nested.want", "w") as f:
    f.write(row("model.fc.weight", w) + row("model.fc.bias", b) + row("steps", steps) +
            row("masks.0", mask) + row("masks.1", np.array(3.0)))
# bf16 (its bits as uint16), a transposed view, two views of one storage with an offset
bits = (rng.standard_normal(6).astype(np.float32).view(np.uint32) >> 16).astype(np.uint16)
base = np.arange(12, dtype=np.float32)
st = pw.Storage(base)
views = {"bf": pw.Tensor(pw.Storage(bits, dtype="bfloat16"), shape=(2, 3)),
         "t": pw.Tensor(st, shape=(4, 3), stride=(1, 4)),            # (3,4).T
         "tail": pw.Tensor(st, offset=8, shape=(2, 2)),
         "head": pw.Tensor(st, offset=0, shape=(8,))}
for proto in (2, 4, 5):
    pw.save(views, "views%d.pt" % proto, protocol=proto)
with open("views.want", "w") as f:
    f.write(row("bf", bits.reshape(2, 3), "bf16") + row("t", base.reshape(3, 4).T) +
            row("tail", base[8:].reshape(2, 2)) + row("head", base[:8]))
# big-endian storages (byteorder member), deflated members
pw.save({"x": pw.Tensor(pw.Storage(w), shape=(4, 3))}, "bigend.pt", byteorder="big")
pw.save({"x": pw.Tensor(pw.Storage(w), shape=(4, 3))}, "littleend.pt", byteorder="little")
pw.save({"x": pw.Tensor(pw.Storage(w), shape=(4, 3))}, "zipped.pt", compress=True)
open("x.want", "w").write(row("x", w))
# refused layouts
pw.save({"s": pw.Tensor(pw.Storage(base), shape=(3, 2), stride=(4, 2))}, "strided.pt")
pw.save({"s": pw.Tensor(pw.Storage(base), offset=10, shape=(4,))}, "pastend.pt")
pw.save({"s": pw.Tensor(pw.Storage(base, numel=20), shape=(12,))}, "badsize.pt")
pw.save({"s": pw.Tensor(pw.Storage(base), shape=(12,)), "epoch": 3}, "scalar_leaf.pt")
pw.save({"s": pw.Tensor(pw.Storage(base), shape=(12,), hooks=collections.OrderedDict(h=1))}, "hooks.pt")
EOF
expect_exit pt_bare_dump 0 golden-dump -o bare.h5 bare.pt
check_hashes pt_bare_hashes bare.h5 bare.want
expect_exit pt_nested_dump 0 golden-dump -o nested.h5 nested.pth
check_hashes pt_nested_hashes nested.h5 nested.want
for p in 2 4 5; do
    expect_exit pt_views_proto${p}_dump 0 golden-dump -o views$p.h5 views$p.pt
    check_hashes pt_views_proto${p}_hashes views$p.h5 views.want
done
for f in bigend littleend zipped; do
    expect_exit pt_${f}_dump 0 golden-dump -o $f.h5 $f.pt
    check_hashes pt_${f}_hashes $f.h5 x.want
done
expect_exit pt_strided 2 golden-dump -o s.h5 strided.pt
expect_grep pt_strided_msg 'strided.pt:s: non-contiguous tensor .*save .contiguous\(\)' err.txt
expect_exit pt_past_end 2 golden-dump -o s.h5 pastend.pt
expect_grep pt_past_end_msg 'runs past its storage' err.txt
expect_exit pt_bad_size 2 golden-dump -o s.h5 badsize.pt
expect_grep pt_bad_size_msg 'holds 48 bytes, not 20 elements' err.txt
# a scalar beside the tensors (epoch: 3) is listed as skipped, never silently; the tensors are read
expect_exit pt_scalar_leaf 0 golden-dump -o sleaf.h5 scalar_leaf.pt
expect_grep pt_scalar_leaf_msg 'note: skipped scalar_leaf.pt:epoch: a int, not a tensor' err.txt
golden-dump --list sleaf.h5 > sl.txt 2>&1
if [ "$(awk 'NR > 1 {print $1}' sl.txt | tr '\n' ' ')" = "s " ]; then ok pt_scalar_leaf_tensors_only; else
    notok pt_scalar_leaf_tensors_only "$(head -c 300 sl.txt)"; fi
expect_exit pt_hooks 2 golden-dump -o s.h5 hooks.pt
expect_absent pt_no_partial s.h5

# ---- a folder of .npz and .pt: tensors keep their names; a bare .pt is named by its path
mkdir -p mixed/sub
cp stored.npz mixed/a.npz
cp bare.pt mixed/sub/w.pt
expect_exit folder_dump 0 golden-dump -o mixed.h5 mixed
{ cat stored.want; sed 's/^bare /sub\/w /' bare.want; } > mixed.want
check_hashes folder_hashes mixed.h5 mixed.want

# ---- hostile files
"$PYTHON" - <<'EOF' || notok hostile_write
import os, struct, zipfile, zlib, numpy as np, pt_writer as pw
good = open("bare.pt", "rb").read()
open("trunc_zip.pt", "wb").write(good[: len(good) - 30])      # end record cut
open("trunc_half.npz", "wb").write(open("stored.npz", "rb").read()[:300])
# a pickle cut before STOP
pkl, _ = pw.pickle_bytes({"a": pw.Tensor(pw.Storage(np.zeros(2, np.float32)))})
pw.save_raw(pkl[:-5], "trunc_pickle.pt", members={"data/0": b"\0" * 8})
# overlapping members: the first one's sizes grown over the second's local header
with zipfile.ZipFile("ovl.npz", "w") as z:
    z.writestr("a.npy", open("stored.npz", "rb").read()[:0] + b"x" * 100)
    z.writestr("b.npy", b"y" * 100)
d = bytearray(open("ovl.npz", "rb").read())
cd = d.index(b"PK\x01\x02")
struct.pack_into("<II", d, cd + 20, 200, 200)
open("ovl.npz", "wb").write(d)
# zip bomb 1: a directory claiming 5000:1 on a deflated member
with zipfile.ZipFile("bomb_ratio.npz", "w", zipfile.ZIP_DEFLATED) as z:
    z.writestr("a.npy", b"\0" * 100000)
d = bytearray(open("bomb_ratio.npz", "rb").read())
cd = d.index(b"PK\x01\x02")
csize = struct.unpack_from("<I", d, cd + 20)[0]
struct.pack_into("<I", d, cd + 24, csize * 5000)
open("bomb_ratio.npz", "wb").write(d)
# zip bomb 2: a true 1000:1 data.pkl of 80 MB (above the 64 MiB pickle cap)
with zipfile.ZipFile("bomb_pickle.pt", "w", zipfile.ZIP_DEFLATED) as z:
    z.writestr("archive/data.pkl", b"\x80\x02" + b"N0" * (40 << 20) + b"N.")
# zip bomb 3: a member that inflates to more than its directory says
npy = open("stored.npz", "rb")  # any .npy bytes
with zipfile.ZipFile("bomb_liar.npz", "w", zipfile.ZIP_DEFLATED) as z:
    z.writestr("a.npy", b"\x93NUMPY\x01\x00v\x00" + ("{'descr': '<f4', 'fortran_order': False, 'shape': (100,), }".ljust(117) + "\n").encode() + b"\0" * 4000)
d = bytearray(open("bomb_liar.npz", "rb").read())
cd = d.index(b"PK\x01\x02")
struct.pack_into("<I", d, cd + 24, 128 + 400)            # claims 100 elements' worth
lh = 0
struct.pack_into("<I", d, lh + 22, 128 + 400)
open("bomb_liar.npz", "wb").write(d)
# names leaving the archive
with zipfile.ZipFile("escape.npz", "w") as z:
    z.writestr("../evil.npy", b"x")
with zipfile.ZipFile("absolute.npz", "w") as z:
    z.writestr("/etc/evil.npy", b"x")
with zipfile.ZipFile("notnpy.npz", "w") as z:
    z.writestr("a.txt", b"x")
# pickles: huge memo index, deep nesting, many marks, unknown opcode, LONG4, os.system
pw.save_raw(b"\x80\x02}r\xff\xff\xff\xff.", "memo.pt")
pw.save_raw(b"\x80\x02h\x05.", "memo_empty.pt")
pw.save_raw(b"\x80\x02" + b"}X\x01\x00\x00\x00k" * 100 + b"N" + b"s" * 100 + b".", "deep.pt")
pw.save_raw(b"\x80\x02" + b"(" * 1000 + b".", "marks.pt")
pw.save_raw(b"\x80\x02\xff.", "opcode.pt")
pw.save_raw(b"\x80\x02\x8b\x00\x00\x00\x10.", "long4.pt")
pw.save_raw(b"\x80\x02]q\x00h\x00a.", "cycle.pt")          # a list that holds itself
class Evil:
    def __reduce__(self):
        return (os.system, ("touch " + os.path.abspath("PWNED"),))
import pickle
pw.save_raw(pickle.dumps({"w": Evil()}, protocol=2), "evil.pt")
pw.save_raw(pickle.dumps(Evil(), protocol=4), "evil4.pt")
pw.save_raw(b"\x80\x02cbuiltins\neval\n.", "eval.pt")
# the legacy format: a bare pickle (torch < 1.6 begins with a magic-number pickle)
open("legacy.pt", "wb").write(pickle.dumps(0x1950a86a20f9469cfc6c, protocol=2) + b"rest")
# TorchScript
with zipfile.ZipFile("script.pt", "w") as z:
    z.writestr("m/constants.pkl", b"\x80\x02).")
    z.writestr("m/data.pkl", b"\x80\x02).")
EOF
for c in trunc_zip.pt:'no end-of-central-directory' trunc_half.npz:'corrupt zip' \
         trunc_pickle.pt:'ends without STOP' ovl.npz:'overlap' bomb_ratio.npz:'zip bomb' \
         bomb_pickle.pt:'larger than this reader allows' bomb_liar.npz:'longer than the directory says' \
         escape.npz:'not a plain relative path' absolute.npz:'not a plain relative path' \
         notnpy.npz:"member 'a.txt' is not a .npy" memo.pt:'memo index 4294967295 too large' \
         memo_empty.pt:'memo slot 5 is empty' deep.pt:'nested deeper than 64' \
         marks.pt:'more than 256 MARKs' opcode.pt:'opcode 0xff' long4.pt:'opcode 0x8b' \
         cycle.pt:'nested deeper than 64' evil.pt:'(posix|os) system' \
         evil4.pt:'(posix|os) system' eval.pt:'Python object \(builtins eval\)' \
         legacy.pt:'legacy \(non-zip\) torch.save format' script.pt:'TorchScript'; do
    f=${c%%:*}; msg=${c#*:}; n=$(echo "$f" | tr . _)
    expect_exit hostile_$n 2 golden-dump -o h.h5 "$f"
    expect_grep hostile_${n}_msg "$msg" err.txt
    expect_lines hostile_${n}_one_line 1 err.txt
done
expect_absent hostile_no_partial h.h5
expect_absent hostile_nothing_ran PWNED

# ---- real torch.save, where python3-torch is installed
if "$PYTHON" -c 'import torch' 2>/dev/null; then
    "$PYTHON" - <<'EOF' || notok torch_write
import collections, hashlib, numpy as np, torch
torch.manual_seed(0)
def row(name, t):
    t = t.detach()
    dtn = {torch.float32: "f32", torch.bfloat16: "bf16", torch.float16: "f16", torch.int64: "i64"}[t.dtype]
    a = t.contiguous().view(torch.int16).numpy() if t.dtype == torch.bfloat16 else t.contiguous().numpy()
    canon = np.ascontiguousarray(a).astype(a.dtype.newbyteorder("<")).tobytes()
    return "%s %s %s %s\n" % (name, dtn, "x".join(map(str, t.shape)) if t.dim() else "scalar",
                              hashlib.sha256(canon).hexdigest())
t = torch.randn(5, 7)
torch.save(t, "torch_bare.pt")
open("torch_bare.want", "w").write(row("torch_bare", t))
m = torch.nn.Sequential(torch.nn.Linear(7, 4), torch.nn.LayerNorm(4))
sd = m.state_dict()
torch.save(sd, "torch_sd.pt")
open("torch_sd.want", "w").writelines(row(k, v) for k, v in sd.items())
d = {"bf": torch.randn(3, 4).to(torch.bfloat16), "tr": torch.randn(6, 5).t(),
     "half": torch.randn(8).half(), "idx": torch.arange(10), "s": torch.tensor(1.5)}
torch.save(d, "torch_views.pt")
open("torch_views.want", "w").writelines(row(k, v) for k, v in d.items())
torch.save(m, "torch_module.pt")
torch.save({"bad": torch.randn(6, 6)[:, ::2]}, "torch_strided.pt")
torch.save(t, "torch_legacy.pt", _use_new_zipfile_serialization=False)
EOF
    for f in torch_bare torch_sd torch_views; do
        expect_exit ${f}_dump 0 golden-dump -o $f.h5 $f.pt
        check_hashes ${f}_hashes $f.h5 $f.want
    done
    expect_exit torch_module 2 golden-dump -o tm.h5 torch_module.pt
    expect_grep torch_module_msg 'a PyTorch pickle of a module object \(torch.nn.modules.container Sequential\): only tensors and state_dicts are read' err.txt
    expect_exit torch_strided 2 golden-dump -o tm.h5 torch_strided.pt
    expect_grep torch_strided_msg 'torch_strided.pt:bad: non-contiguous' err.txt
    expect_exit torch_legacy 2 golden-dump -o tm.h5 torch_legacy.pt
    expect_grep torch_legacy_msg 'legacy \(non-zip\) torch.save format' err.txt
else
    echo "ok torch_skipped # SKIP python3-torch not installed"
fi
