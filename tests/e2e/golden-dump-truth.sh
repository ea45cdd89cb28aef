# Goldens that tell the truth (issues 19, 11): files edited with h5py so that what a dataset
# says differs from what it holds, and links that would show a tensor twice or from outside.
# Each must be refused (exit 2, one line naming the file and tensor), never judged.
. "$GOLDEN_ROOT/tests/e2e/lib.sh"
if [ -z "$PYTHON" ]; then ok "# SKIP no python3 with numpy and h5py"; exit 0; fi
dump-gen run 1 64 > /dev/null
golden-dump -o ref.h5 run > /dev/null 2>&1 || notok "make the golden"
# mk NAME PY: copy ref.h5 to NAME.h5 and run PY on it with f open read-write
mk() {
    cp ref.h5 "$1.h5"
    "$PYTHON" - "$1.h5" > py.txt 2>&1 <<EOF2 || notok "make $1.h5" "$(cat py.txt)"
import sys, h5py, numpy as np
f = h5py.File(sys.argv[1], 'r+')
names = []
f.visititems(lambda n, o: names.append(n) if isinstance(o, h5py.Dataset) else None)
t = names[0]
def copy_attrs(src, dst):
    for k, v in src.attrs.items(): dst.attrs[k] = v
$2
f.close()
EOF2
}
# refused NAME FILE PATTERN: golden-dump --verify, --list and golden-diff against ref.h5 all
# end with exit 2 and one stderr line matching PATTERN
refused() {
    for how in verify list diff; do
        case $how in
        verify) golden-dump --verify "$2" > out.txt 2> err.txt ;;
        list) golden-dump --list "$2" > out.txt 2> err.txt ;;
        diff) golden-diff --tier kernel ref.h5 "$2" > out.txt 2> err.txt ;;
        esac
        rc=$?
        if [ "$rc" -eq 2 ] && [ "$(wc -l < err.txt)" -eq 1 ] && grep -Eq -- "$3" err.txt; then ok "$1 ($how)"
        else notok "$1 ($how)" "exit $rc: $(head -c 300 err.txt)"; fi
    done
}
# 19.1: a dataset with no data is not a tensor
mk nullspace "
a = f[t]; d = dict(a.attrs); tid = a.id.get_type(); del f[t]
h5py.h5d.create(f.id, t.encode(), tid, h5py.h5s.create(h5py.h5s.NULL))
for k, v in d.items(): f[t].attrs[k] = v
f[t].attrs['count'] = np.uint64(1)"
refused "NULL dataspace refused" nullspace.h5 "nullspace.h5:.*NULL"
mk unwritten "
a = f[t]; d = dict(a.attrs); tid = a.id.get_type(); shp = a.shape; del f[t]
dcpl = h5py.h5p.create(h5py.h5p.DATASET_CREATE)
dcpl.set_fill_time(h5py.h5d.FILL_TIME_NEVER)
sid = h5py.h5s.create_simple(shp)
h5py.h5d.create(f.id, t.encode(), tid, sid, dcpl=dcpl)
for k, v in d.items(): f[t].attrs[k] = v"
refused "dataset never written refused" unwritten.h5 "unwritten.h5:.*never"
# 19.2: the stored type must be the dtype's one, never converted on reading
mk fp8asi8 "
a = f[t]; d = dict(a.attrs); del f[t]
f.create_dataset(t, data=np.array([-1, -128, 56], dtype='i1'))
for k, v in d.items(): f[t].attrs[k] = v
f[t].attrs['dtype'] = np.bytes_(b'fp8_e4m3fn'); f[t].attrs['count'] = np.uint64(3)"
refused "fp8 stored as int8 refused" fp8asi8.h5 "fp8asi8.h5:.*type mismatch"
mk u8asi8 "
a = f[t]; d = dict(a.attrs); del f[t]
f.create_dataset(t, data=np.array([1, 128, 200, 255], dtype='u1'))
for k, v in d.items(): f[t].attrs[k] = v
f[t].attrs['dtype'] = np.bytes_(b'i8'); f[t].attrs['count'] = np.uint64(4)"
refused "u8 data labelled i8 refused" u8asi8.h5 "u8asi8.h5:.*type mismatch"
mk f16asbf16 "
a = f[t]; d = dict(a.attrs); del f[t]
f.create_dataset(t, data=np.array([65504, 1], dtype='<f2'))
for k, v in d.items(): f[t].attrs[k] = v
f[t].attrs['dtype'] = np.bytes_(b'bf16'); f[t].attrs['count'] = np.uint64(2)"
refused "f16 data labelled bf16 refused" f16asbf16.h5 "f16asbf16.h5:.*type mismatch"
# 19.7: links would show one tensor under two names, or a tensor from another file
mk hardlink "f['twin'] = f[t]"
refused "second hard link refused" hardlink.h5 "hardlink.h5:.*hard links"
mk softlink "f['alias'] = h5py.SoftLink('/' + t)"
refused "soft link refused" softlink.h5 "softlink.h5:.*soft link"
mk extlink "f['outside'] = h5py.ExternalLink('ref.h5', '/' + t)"
refused "external link refused" extlink.h5 "extlink.h5:.*external link"
# an intact golden still passes all three
expect_exit "intact golden verifies" 0 golden-dump --verify ref.h5
expect_exit "intact golden diffs clean against itself" 0 golden-diff ref.h5 ref.h5

# 19.7: tensor_digest binds dtype and shape; relabelling fp8_e4m3fn as fp8_e5m2 keeps sha256
"$PYTHON" - <<'PY'
import numpy as np, json, os
os.makedirs('fp8', exist_ok=True)
np.array([0xff, 0x80, 0x38], dtype='u1').tofile('fp8/a.bin')
json.dump({'schema': 'calculet-dump-index/v1', 'tensors': [
    {'name': 'q', 'file': 'a.bin', 'dtype': 'fp8_e4m3fn', 'shape': [3]}]}, open('fp8/index.json', 'w'))
PY
golden-dump -o fp8.h5 fp8 > /dev/null 2>&1 || notok "make fp8.h5"
cp fp8.h5 relabel.h5
"$PYTHON" -c "
import h5py, numpy as np
f = h5py.File('relabel.h5', 'r+'); f['q'].attrs['dtype'] = np.bytes_(b'fp8_e5m2')"
expect_exit "relabelled fp8 dtype fails --verify (tensor_digest)" 1 golden-dump --verify relabel.h5
expect_grep "the relabel is named" "tensor_digest is" out.txt
expect_exit "the fp8 golden itself verifies" 0 golden-dump --verify fp8.h5

# 19.6 and 11: golden-dump accepts nothing silently
mkdir -p in
"$PYTHON" - <<'PY'
import numpy as np, json, os, struct
def index(folder, entries, **top):
    os.makedirs(folder, exist_ok=True)
    np.arange(4, dtype='<f4').tofile(f'{folder}/a.bin')
    d = {'schema': 'calculet-dump-index/v1', 'tensors': entries}; d.update(top)
    open(f'{folder}/index.json', 'w').write(json.dumps(d))
e = {'name': 'x', 'file': 'a.bin', 'dtype': 'f32', 'shape': [4]}
index('misspelt', [dict(e, sha_256='0' * 64)])
index('byteorder', [dict(e, byte_order='big')])
index('topkey', [e], byte_order='big')
index('nulname', [dict(e, name='x\u0000y')])
index('nulfile', [dict(e, file='a.bin\u0000/../../etc/passwd')])
os.makedirs('v2', exist_ok=True)
np.arange(4, dtype='<f4').tofile('v2/a.bin')
open('v2/index.json', 'w').write(json.dumps({'schema': 'calculet-dump-index/v2', 'tensors': [e]}))
os.makedirs('npz', exist_ok=True)
np.save('npz/ok.npy', np.ones(2, dtype='<f4'))
np.savez('npz/more.npz', a=np.ones(2))
def st(path, header, data):
    h = json.dumps(header).encode()
    open(path, 'wb').write(struct.pack('<Q', len(h)) + h + data)
st('gap.safetensors', {'a': {'dtype': 'F32', 'shape': [1], 'data_offsets': [4, 8]}}, b'\0' * 8)
st('tail.safetensors', {'a': {'dtype': 'F32', 'shape': [1], 'data_offsets': [0, 4]}}, b'\0' * 8)
st('good.safetensors', {'a': {'dtype': 'F32', 'shape': [1], 'data_offsets': [0, 4]},
                        'b': {'dtype': 'F32', 'shape': [0], 'data_offsets': [4, 4]}}, b'\0' * 4)
np.save('mask.npy', np.array([0, 1, 2, 255], dtype='u1').view(np.bool_))
# a dimension of 2**64-1 with no elements: HDF5's reserved "unlimited"
hdr = "{'descr': '<f4', 'fortran_order': False, 'shape': (18446744073709551615, 0), }"
hdr = hdr + ' ' * (64 - (10 + len(hdr) + 1) % 64) + '\n'
open('huge.npy', 'wb').write(b'\x93NUMPY\x01\x00' + struct.pack('<H', len(hdr)) + hdr.encode())
PY
expect_exit "misspelt sha_256 key refused" 2 golden-dump -o o1.h5 misspelt
expect_grep "misspelt key named" "index.json:/tensors/0/sha_256: unknown key" err.txt
expect_exit "byte_order key refused" 2 golden-dump -o o2.h5 byteorder
expect_exit "unknown top-level key refused" 2 golden-dump -o o3.h5 topkey
expect_grep "top-level key named" "index.json:/byte_order" err.txt
expect_exit "NUL in a tensor name refused" 2 golden-dump -o o4.h5 nulname
expect_grep "NUL named" "/tensors/0/name: .*NUL" err.txt
expect_exit "NUL in a file refused" 2 golden-dump -o o5.h5 nulfile
expect_grep "NUL file named" "/tensors/0/file: .*NUL" err.txt
expect_exit "dump index v2 in a folder refused" 2 golden-dump -o o6.h5 v2
# issue 29: an .npz in a folder is read now (its arrays keep their names), never skipped
expect_exit ".npz in a folder read" 0 golden-dump -o o7.h5 npz
expect_grep ".npz arrays counted" "^o7\.h5: 2 tensors" out.txt
expect_exit "safetensors gap refused" 2 golden-dump -o o8.h5 gap.safetensors
expect_exit "safetensors trailing bytes refused" 2 golden-dump -o o9.h5 tail.safetensors
expect_exit "safetensors without gaps (and an empty tensor) accepted" 0 golden-dump -o o10.h5 good.safetensors
expect_exit "bool bytes other than 0 and 1 refused" 2 golden-dump -o o11.h5 mask.npy
expect_grep "bool byte named" "mask.*byte 2, not 0 or 1" err.txt
expect_exit "dimension 2^64-1 refused" 2 golden-dump -o o12.h5 huge.npy
expect_grep "dimension 2^64-1 names the file and says why" "huge.npy.*unlimited" err.txt
expect_exit "repeated --meta key refused" 2 golden-dump -o o13.h5 --meta a=1 --meta a=2 fp8
expect_grep "repeated --meta named" "given twice" err.txt
expect_exit "non-UTF-8 --meta value refused" 2 golden-dump -o o14.h5 --meta "a=$(printf '\377')" fp8
for k in 1 2 3 4 5 6 8 9 11 12 13 14; do expect_absent "no partial output o$k.h5" "o$k.h5"; done

# issue 10: --dtype NAME=bf16 for a .npy holding bf16 as a uint16 view (as PyTorch users save
# it), fp8 as uint8; bf16 values checked against torch's own conversion, fp8 by hand
if "$PYTHON" -c 'import torch' 2>/dev/null; then
    mkdir -p views
    "$PYTHON" - <<'PY'
import torch, numpy as np
x = torch.tensor([1.5, -2.0, 65504.0, 3.0e38, float('nan')], dtype=torch.bfloat16)
np.save('views/w.npy', x.view(torch.int16).numpy().view(np.uint16))
# fp8_e4m3fn by hand (this torch has no float8): 0x30 = 2^(6-7) = 0.5, 0xfe = -1.75 * 2^8 =
# -448 (the largest magnitude), 0x38 = 1.0
np.save('views/q.npy', np.array([0x30, 0xfe, 0x38], dtype=np.uint8))
open('expect.txt', 'w').write(repr([float(v) for v in x.float()]) + '\n' + repr([0.5, -448.0, 1.0]) + '\n')
PY
    expect_exit "--dtype w=bf16 q=fp8_e4m3fn" 0 golden-dump -o views.h5 --dtype w=bf16 --dtype q=fp8_e4m3fn views
    "$PYTHON" - > py.txt 2>&1 <<'PY'
import h5py, numpy as np, math
f = h5py.File('views.h5', 'r')
w, q = f['w'], f['q']
lines = open('expect.txt').read().split('\n')
ew, eq = eval(lines[0].replace('nan', 'float("nan")')), eval(lines[1])
bad = []
if w.attrs['dtype'] != b'bf16' or w.dtype != np.float32: bad.append(f'w: {w.attrs["dtype"]} {w.dtype}')
gw = [float(v) for v in w[()]]
if not all((math.isnan(a) and math.isnan(b)) or a == b for a, b in zip(gw, ew)): bad.append(f'w: {gw} != {ew}')
if q.attrs['dtype'] != b'fp8_e4m3fn': bad.append('q dtype')
if q.attrs['min'] != min(eq) or q.attrs['max'] != max(eq): bad.append(f"q: {q.attrs['min']} {q.attrs['max']} vs {eq}")
if w.attrs['nan_count'] != 1 or w.attrs['max'] != max(v for v in ew if not math.isnan(v)): bad.append('w stats')
print('\n'.join(bad) if bad else 'all good')
PY
    expect_grep "--dtype values match torch" '^all good$' py.txt
    expect_exit "--dtype on a non-uint16 tensor refused" 2 golden-dump -o v2.h5 --dtype q=bf16 views
    expect_exit "--dtype naming no tensor refused" 2 golden-dump -o v3.h5 --dtype nope=bf16 views
fi

# 19.7: a name cannot print a fake PASS line
mkdir -p ctl
"$PYTHON" -c "
import numpy as np
np.save('ctl/x\nPASS: all.npy', np.ones(2, dtype='<f4'))"
expect_exit "a newline in a tensor name refused" 2 golden-dump -o ctl.h5 ctl
expect_grep "control character named" "control character 0x0a" err.txt

# issue 11: a FIFO as input is refused, never waited on
if mkfifo fifo.npy 2>/dev/null; then
    expect_exit "a FIFO input refused without hanging" 2 timeout 20 golden-dump -o fifo.h5 fifo.npy
    expect_grep "the FIFO named" "fifo.npy: (is )?not a regular file" err.txt
fi
mk ctlname "f['x\nPASS: everything'] = np.ones(2, dtype='<f4')
copy_attrs(f[t], f['x\nPASS: everything'])"
refused "a golden's tensor name with a newline refused" ctlname.h5 "ctlname.h5: .*control character"
