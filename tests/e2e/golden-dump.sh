# End-to-end tests of golden-dump: dump -> --verify -> --list, a corrupted dataset, every
# bad-input case, and (with numpy+h5py) values and hashes checked independently by numpy.
. "$GOLDEN_ROOT/tests/e2e/lib.sh"

# mk_npy FILE DESCR SHAPE [FORTRAN]: an .npy v1 header (128 bytes in all); data is appended.
mk_npy() {
    _dict="{'descr': '$2', 'fortran_order': ${4:-False}, 'shape': $3, }"
    { printf '\223NUMPY\001\000\166\000'; printf '%-117s\n' "$_dict"; } > "$1"
}

# ---- a sample run: raw dumps + index, hand-made .npy files
dump-gen run 3 4096 > /dev/null 2>&1 || notok gen "dump-gen failed"
mkdir -p npys/sub
mk_npy npys/sub/ones.npy '<f4' '(2, 2)'; printf '\000\000\200\077\000\000\200\077\000\000\200\077\000\000\200\077' >> npys/sub/ones.npy
mk_npy npys/be.npy '>i2' '(3,)'; printf '\000\001\377\376\001\002' >> npys/be.npy
mk_npy npys/scalar.npy '<f8' '()'; printf '\000\000\000\000\000\000\004\100' >> npys/scalar.npy

expect_exit dump_ok 0 golden-dump -o g.h5 --meta run_id=e2e --meta chip=calculet run npys
expect_grep dump_summary '^g\.h5: 9 tensors' out.txt
expect_exit verify_ok 0 golden-dump --verify g.h5
expect_grep verify_pass 'PASS' out.txt
expect_exit list_ok 0 golden-dump --list g.h5
cp out.txt list.txt
expect_grep list_header '^name +dtype +shape +sha256 +min +max +mean +std +nan +inf$' list.txt
expect_lines list_rows 10 list.txt
# names: index names, and .npy named by their path in the folder
expect_grep list_index_name '^layers/2/mlp/out +f32 +1x1024 ' list.txt
expect_grep list_npy_name '^sub/ones +f32 +2x2 +[0-9a-f]{64} +1 +1 +1 +0 +0 +0$' list.txt
# big-endian i16 1, -2, 258 swapped: min -2, max 258, mean 257/3
expect_grep list_big_endian '^be +i16 +3 +[0-9a-f]{64} +-2 +258 +85.6667 ' list.txt
expect_grep list_scalar '^scalar +f64 +scalar +[0-9a-f]{64} +2.5 +2.5 +2.5 +0 ' list.txt

# raw little-endian dumps are canonical bytes already: sha256sum must agree
okh=0
for b in run/*.bin; do
    h=$(sha256sum "$b" | cut -d' ' -f1)
    grep -q " $h " list.txt || { okh=1; notok "hash_matches_sha256sum" "$b $h not listed"; }
done
[ $okh -eq 0 ] && ok hash_matches_sha256sum
# the same for the hand-made big-endian npy: canonical bytes are 01 00 fe ff 02 01
h=$(printf '\001\000\376\377\002\001' | sha256sum | cut -d' ' -f1)
expect_grep hash_big_endian_canonical "^be .* $h " list.txt

# root attributes and optional dataset attributes
expect_exit list_json 0 golden-dump --list g.h5 --json list.json
expect_grep json_schema '"schema": "calculet-golden/v1"' list.json
expect_grep json_meta '"run_id": "e2e"' list.json
expect_grep json_producer '"producer": "golden-dump 0.1.0"' list.json
expect_grep json_layer '"op_family": "moe_expert"' list.json
expect_exit list_json_schema 0 schema-check list.json calculet-golden/v1
sed 's/"nan_count": 0/"nan_count": -1/' list.json > list-bad.json
expect_exit list_json_schema_can_fail 1 schema-check list-bad.json calculet-golden/v1
expect_exit index_schema 0 schema-check run/index.json calculet-dump-index/v1
expect_exit list_json_stdout 0 golden-dump --list g.h5 --json -
expect_grep json_stdout_only '^\{' out.txt

# ---- .safetensors: header written by hand (8-byte little-endian length, JSON, data)
# st FILE HEADER: header padded with spaces to 160 bytes (length 0xa0)
st() { { printf '\240\000\000\000\000\000\000\000'; printf '%-160s' "$2"; } > "$1"; }
st m.safetensors '{"__metadata__":{"format":"pt"},"w.bf16":{"dtype":"BF16","shape":[2],"data_offsets":[0,4]},"e.fp8":{"dtype":"F8_E4M3","shape":[2,1],"data_offsets":[4,6]}}'
# bf16 1.0, -2.0; fp8_e4m3fn 0x38 = 1.0, 0xc0 = -2.0
printf '\200\077\000\300\070\300' >> m.safetensors
expect_exit st_dump 0 golden-dump -o st.h5 m.safetensors
expect_exit st_list 0 golden-dump --list st.h5
expect_grep st_bf16 '^w\.bf16 +bf16 +2 +[0-9a-f]{64} +-2 +1 +-0\.5 +1\.5 ' out.txt
expect_grep st_fp8 '^e\.fp8 +fp8_e4m3fn +2x1 +[0-9a-f]{64} +-2 +1 +-0\.5 +1\.5 ' out.txt
h=$(printf '\200\077\000\300' | sha256sum | cut -d' ' -f1)
expect_grep st_hash "^w\.bf16 .* $h " out.txt
st o.safetensors '{"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},"b":{"dtype":"F32","shape":[1],"data_offsets":[2,6]}}'
printf '\000\000\000\000\000\000' >> o.safetensors
expect_exit st_overlap 2 golden-dump -o st2.h5 o.safetensors
expect_grep st_overlap_message 'o\.safetensors:b: data_offsets overlap' err.txt
expect_absent st_overlap_no_output st2.h5

# ---- corrupt one byte of one dataset: --verify must fail and name it
cp g.h5 bad.h5
off=$(h5dump -p -d /layers/1/attn/out bad.h5 | sed -n 's/.*OFFSET \([0-9]*\).*/\1/p' | head -n 1)
if [ -n "$off" ]; then
    old=$(od -An -tu1 -j "$off" -N1 bad.h5 | tr -d ' ')
    new=$(( (old + 1) % 256 ))
    printf "\\$(printf '%03o' "$new")" | dd of=bad.h5 bs=1 seek="$off" conv=notrunc 2>/dev/null
    expect_exit verify_corrupt_fails 1 golden-dump --verify bad.h5 --json v.json --junit v.xml
    expect_grep verify_names_tensor '^FAIL layers/1/attn/out: sha256 is' out.txt
    expect_lines verify_one_failure 2 out.txt
    expect_grep verify_json_verdict '"verdict": "fail"' v.json
    expect_exit verify_json_schema 0 schema-check v.json calculet-golden/v1
    expect_grep verify_junit_failure '<failure' v.xml
else
    notok verify_corrupt_fails "no dataset offset from h5dump -p"
fi

# ---- options
expect_exit prefix_ok 0 golden-dump -o p.h5 --prefix ref/run1/ --json p.json npys
expect_lines dump_json_summary_only 1 out.txt
expect_grep dump_json_listing '"name": "ref/run1/sub/ones"' p.json
expect_exit prefix_list 0 golden-dump --list p.h5
expect_grep prefix_names '^ref/run1/sub/ones ' out.txt
expect_exit name_ok 0 golden-dump -o n.h5 --name logits/final npys/be.npy
expect_exit name_list 0 golden-dump --list n.h5
expect_grep name_named '^logits/final +i16' out.txt
expect_exit name_needs_one_npy 2 golden-dump -o n2.h5 --name x run
expect_absent name_needs_one_npy_no_output n2.h5
expect_exit gzip_ok 0 golden-dump -o z.h5 --gzip 6 run
expect_exit gzip_verify 0 golden-dump --verify z.h5
if h5dump -p -d /layers/0/attn/out z.h5 | grep -q DEFLATE; then ok gzip_deflate; else notok gzip_deflate; fi
expect_exit gzip_bad_level 2 golden-dump -o z2.h5 --gzip 12 run
expect_exit help 0 golden-dump --help
expect_grep help_usage '^usage: golden-dump' out.txt
expect_exit version 0 golden-dump --version
expect_grep version_text '^golden-dump 0\.1\.0$' out.txt
expect_exit no_mode 2 golden-dump run
expect_exit meta_reserved 2 golden-dump -o m.h5 --meta schema=x npys
expect_absent meta_reserved_no_output m.h5

# ---- bad input: exit 2, one stderr line naming the file (and tensor), no output file
# bad NAME WHAT-IN-STDERR INPUT...
bad() {
    _bn=$1; _bp=$2; shift 2
    rm -f o.h5
    expect_exit "bad_$_bn" 2 golden-dump -o o.h5 "$@"
    expect_lines "bad_${_bn}_one_line" 1 err.txt
    expect_grep "bad_${_bn}_message" "$_bp" err.txt
    expect_absent "bad_${_bn}_no_output" o.h5
    if ls o.h5.tmp* >/dev/null 2>&1; then notok "bad_${_bn}_no_temp"; else ok "bad_${_bn}_no_temp"; fi
}
mkdir -p bad
head -c 20 npys/be.npy > bad/trunc.npy
bad npy_truncated 'golden-dump: bad/trunc.npy: .*header' bad/trunc.npy
cp npys/be.npy bad/corrupt.npy; printf 'X' | dd of=bad/corrupt.npy bs=1 seek=10 conv=notrunc 2>/dev/null
bad npy_corrupt 'bad/corrupt.npy: corrupt .npy header' bad/corrupt.npy
mk_npy bad/cplx.npy '<c8' '(1,)'; printf '\000\000\000\000\000\000\000\000' >> bad/cplx.npy
bad npy_unknown_dtype "bad/cplx.npy: unknown or unsupported dtype '<c8'" bad/cplx.npy
cp npys/be.npy bad/long.npy; printf '\000' >> bad/long.npy
bad npy_size 'bad/long.npy: data size 7 bytes does not match' bad/long.npy
mkdir -p bad/ovf; printf '\000' > bad/ovf/x.bin
printf '{"schema": "calculet-dump-index/v1", "tensors": [{"name": "huge", "file": "x.bin", "dtype": "f32", "shape": [4294967296, 4294967296, 2]}]}' > bad/ovf/index.json
bad overflow 'bad/ovf/index.json:huge: .*overflow' bad/ovf/index.json
mkdir -p bad/d1 bad/d2; cp npys/be.npy bad/d1/t.npy; cp npys/be.npy bad/d2/t.npy
bad duplicate 'bad/d2/t.npy:t: duplicate tensor name \(also in bad/d1/t.npy\)' bad/d1/t.npy bad/d2/t.npy
mkdir -p bad/esc; printf '\000\000\000\000' > bad/outside.bin
printf '{"schema": "calculet-dump-index/v1", "tensors": [{"name": "t", "file": "../outside.bin", "dtype": "f32", "shape": [1]}]}' > bad/esc/index.json
bad index_escape 'bad/esc/index.json:t: .*leaves the index folder' bad/esc/index.json
mkdir -p bad/lnk; ln -s ../outside.bin bad/lnk/x.bin
printf '{"schema": "calculet-dump-index/v1", "tensors": [{"name": "t", "file": "x.bin", "dtype": "f32", "shape": [1]}]}' > bad/lnk/index.json
bad index_symlink_escape 'bad/lnk/index.json:t: .*leaves the index folder' bad/lnk/index.json
mkdir -p bad/hash; printf '\000\000\200\077' > bad/hash/x.bin
printf '{"schema": "calculet-dump-index/v1", "tensors": [{"name": "h/t", "file": "x.bin", "dtype": "f32", "shape": [1], "sha256": "%064d"}]}' 0 > bad/hash/index.json
bad expected_hash 'bad/hash/x.bin:h/t: expected sha256 0{64}, data hashes to' bad/hash/index.json
printf '{"schema": "calculet-dump-index/v1", "tensors": [{"name": "s", "file": "x.bin", "dtype": "f64", "shape": [1]}]}' > bad/hash/size.json
bad index_size 'bad/hash/size.json:s: byte size 8 at offset 0 does not fit' bad/hash/size.json
bad unreadable 'bad/missing.npy: cannot open' bad/missing.npy
mkdir -p bad/empty
bad no_tensors 'bad/empty: no tensors found' bad/empty
if [ "$(id -u)" -ne 0 ]; then
    cp npys/be.npy bad/noperm.npy; chmod 000 bad/noperm.npy
    bad unreadable_perm 'bad/noperm.npy: cannot open' bad/noperm.npy
    chmod 644 bad/noperm.npy
fi
# an existing output is kept without --force, replaced with it
cp g.h5 keep.h5
expect_exit exists_refused 2 golden-dump -o keep.h5 npys
expect_lines exists_one_line 1 err.txt
expect_grep exists_message 'keep.h5: .*exist' err.txt
if cmp -s g.h5 keep.h5; then ok exists_untouched; else notok exists_untouched; fi
expect_exit exists_force 0 golden-dump -o keep.h5 --force npys
expect_exit exists_force_verify 0 golden-dump --verify keep.h5
expect_exit verify_missing 2 golden-dump --verify nothing.h5
expect_exit verify_not_hdf5 2 golden-dump --verify npys/be.npy

# ---- numpy + h5py: values, shapes and hashes checked by numpy and hashlib
if [ -z "$PYTHON" ]; then
    ok "numpy_interop # skip numpy/h5py not installed"
else
    mkdir -p np
    "$PYTHON" - <<'EOF' || notok numpy_write
import numpy as np
rng = np.random.default_rng(7)
np.save('np/c_f4.npy', rng.standard_normal((3, 5)).astype('<f4'))
np.save('np/be_f8.npy', rng.standard_normal((4, 3, 2)).astype('>f8'))
np.save('np/fortran_i4.npy', np.asfortranarray(np.arange(60, dtype='<i4').reshape(3, 4, 5)))
np.save('np/fortran_be_u2.npy', np.asfortranarray(np.arange(30, dtype='>u2').reshape(5, 6)))
np.save('np/f16.npy', np.array([0.5, -np.inf, np.nan, 65504, 6e-8], dtype='<f2'))
np.save('np/bools.npy', np.array([[True, False], [False, False]]))
np.save('np/i8.npy', np.array([-128, 127, 0], dtype='i1'))
np.save('np/u64.npy', np.array([2**64 - 1, 0], dtype='<u8'))
np.save('np/empty.npy', np.zeros((0, 4), dtype='<f4'))
np.save('np/scalar.npy', np.float64(3.0))
np.lib.format.write_array(open('np/v2.npy', 'wb'), np.ones(3, dtype='<f4'), version=(2, 0))
np.lib.format.write_array(open('np/v3.npy', 'wb'), np.ones(2, dtype='<i2'), version=(3, 0))
EOF
    expect_exit numpy_dump 0 golden-dump -o np.h5 np run
    "$PYTHON" - > py.txt 2>&1 <<'EOF'
import glob, hashlib, json, os
import h5py, numpy as np
f = h5py.File('np.h5', 'r')
bad = []
# string attributes are fixed-length (no global heap): h5py gives them as bytes
def text(v): return v.decode('utf-8') if isinstance(v, bytes) else v
def check(name, ref):
    ds = f[name]
    ref = np.asarray(ref)
    canon = np.ascontiguousarray(ref).astype(ref.dtype.newbyteorder('<')).tobytes()
    if ds.shape != ref.shape: bad.append(f'{name}: shape {ds.shape} != {ref.shape}')
    if text(ds.attrs['sha256']) != hashlib.sha256(canon).hexdigest(): bad.append(f'{name}: sha256')
    got = ds[()]
    if not np.array_equal(np.asarray(got).astype(np.float64) if ref.dtype.kind == 'f' else got,
                          ref.astype(np.float64) if ref.dtype.kind == 'f' else ref,
                          equal_nan=ref.dtype.kind == 'f'):
        bad.append(f'{name}: values')
    fin = ref[np.isfinite(ref)] if ref.dtype.kind == 'f' else ref.astype(np.float64)
    if ref.size and ref.dtype.kind != 'b':
        if int(ds.attrs['nan_count']) != int(np.isnan(ref.astype(np.float64)).sum()): bad.append(f'{name}: nan_count')
        if fin.size and not np.isclose(ds.attrs['mean'], fin.astype(np.float64).mean(), rtol=1e-12): bad.append(f'{name}: mean')
        if fin.size and not np.isclose(ds.attrs['std'], fin.astype(np.float64).std(), rtol=1e-9): bad.append(f'{name}: std')
        if fin.size and ds.attrs['min'] != fin.min(): bad.append(f'{name}: min')
    if int(ds.attrs['count']) != ref.size: bad.append(f'{name}: count')
for p in sorted(glob.glob('np/*.npy')):
    check(os.path.basename(p)[:-4], np.load(p))
idx = json.load(open('run/index.json'))
for t in idx['tensors']:
    raw = open(os.path.join('run', t['file']), 'rb').read()
    ds = f[t['name']]
    if t['dtype'] == 'bf16':
        bits = np.frombuffer(raw, dtype='<u2').astype(np.uint32) << 16
        ref = bits.view('<f4').reshape(t['shape'])
        if ds.id.get_type().get_size() != 2 or text(ds.attrs['dtype']) != 'bf16': bad.append(t['name'] + ': bf16 type')
        # the committed /bfloat16 type: h5py still reads the values as float32
        if ds.dtype != np.dtype('<f4'): bad.append(t['name'] + f': h5py reads bf16 as {ds.dtype}')
        if not ds.id.get_type().committed() or not isinstance(f['bfloat16'], h5py.Datatype): bad.append(t['name'] + ': bf16 type not committed as /bfloat16')
    else:
        ref = np.frombuffer(raw, dtype='<f4').reshape(t['shape'])
    if not np.array_equal(ds[()].astype(np.float32), ref): bad.append(t['name'] + ': values')
    if text(ds.attrs['sha256']) != hashlib.sha256(raw).hexdigest(): bad.append(t['name'] + ': sha256')
    if int(ds.attrs['layer']) != t['layer']: bad.append(t['name'] + ': layer')
    if not np.isclose(ds.attrs['mean'], ref.astype(np.float64).mean(), rtol=1e-12): bad.append(t['name'] + ': mean')
if text(f.attrs['schema']) != 'calculet-golden/v1': bad.append('schema attribute')
print('\n'.join(bad) if bad else 'all good')
EOF
    expect_grep numpy_values_shapes_hashes '^all good$' py.txt
    # h5dump names the bf16 type instead of showing it like f16
    h5dump -H np.h5 > h5dump.txt 2>&1
    expect_grep h5dump_names_bfloat16 'DATATYPE +"/bfloat16"' h5dump.txt
    expect_exit numpy_verify 0 golden-dump --verify np.h5
fi
