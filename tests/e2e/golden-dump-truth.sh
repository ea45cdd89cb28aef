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
