#!/bin/sh
# The walk over a golden's objects and links (issue 35: one walk over the links instead of an
# object walk and a link walk, datasets opened by address) must judge every file as before:
# goldens with nested and dense groups (50 tensors in one group) and a bf16 tensor (the named
# /bfloat16 type), edited with h5py into files with extra, missing and wrongly typed attributes,
# soft and external links, a second hard link to a dataset, a group or the named type, a bad
# name, a wrong dtype and corrupt bytes. Each case has the exit status and the message its
# reason calls for (from docs/hdf5-trust.md and the reader's messages), at -j 1 and -j 2, with
# and without --trust-hashes. GOLDEN_DIFF_OTHER=/path/to/golden-diff also compares stdout,
# stderr and the exit status of every run with that build's (the change was checked so against
# main's binary).
. "$GOLDEN_ROOT/tests/e2e/lib.sh"

if [ -z "$PYTHON" ]; then
    echo "ok walk35-all # skip no h5py"
    exit 0
fi

specs="a/x:f32:4x8:rand=1,-1,1 a/b/y:f32:16:rand=2,-1,1 z:bf16:8:rand=3,-1,1"
i=0
while [ $i -lt 50 ]; do specs="$specs layers/$i/out:f32:8:rand=$i,-1,1"; i=$((i + 1)); done
# shellcheck disable=SC2086
make-golden base.h5 $specs > /dev/null 2>&1 || { notok walk35-setup "make-golden failed"; exit 0; }

cat > edit.py <<'EOF'
import sys, shutil, numpy as np, h5py
case, out = sys.argv[1], sys.argv[2]
shutil.copy('base.h5', out)
if case == 'corrupt':       # bytes of one dataset's object header overwritten
    with h5py.File(out, 'r') as f:
        addr = h5py.h5o.get_info(f['layers/7/out'].id).addr
    with open(out, 'r+b') as g:
        g.seek(addr + 12); g.write(b'\xff' * 24)
    sys.exit(0)
with h5py.File(out, 'r+') as f:
    x = f['a/x']
    if case == 'extra':
        x.attrs['note'] = np.int32(5); f['layers/3/out'].attrs['x'] = 'y'; f.attrs['who'] = 'me'
        f.create_group('empty/deeper')
    elif case == 'no-count': del x.attrs['count']
    elif case == 'no-dtype': del f['layers/12/out'].attrs['dtype']
    elif case == 'no-sha': del x.attrs['sha256']
    elif case == 'no-mean': del f['a/b/y'].attrs['mean']
    elif case == 'layer-str': x.attrs['layer'] = 'three'
    elif case == 'count-arr': x.attrs['count'] = np.array([1, 2], dtype=np.uint64)
    elif case == 'mean-str': x.attrs['mean'] = 'big'
    elif case == 'opfam-int': f['layers/40/out'].attrs['op_family'] = np.int64(4)
    elif case == 'digest-bad': x.attrs['tensor_digest'] = 'not hex'
    elif case == 'dtype-f64': x.attrs['dtype'] = 'f64'
    elif case == 'soft': f['s'] = h5py.SoftLink('/a/x')
    elif case == 'external': f['layers/9/ext'] = h5py.ExternalLink('other.h5', '/x')
    elif case == 'hard2': f['layers/20/again'] = x
    elif case == 'group2': f['g2'] = f['a/b']
    elif case == 'type2': f['bf2'] = f['bfloat16']
    elif case == 'soft-then-bad':
        f['a/s'] = h5py.SoftLink('/a/x'); del f['layers/5/out'].attrs['count']
    elif case == 'bad-name':
        f.create_dataset('a/bad\tname', data=np.zeros(4, np.float32))
    else:
        sys.exit('unknown case ' + case)
EOF

OTHER=${GOLDEN_DIFF_OTHER:-}
# one CASE STATUS MESSAGE: the edited file against the golden, both ways, flags $F
one() {
    nm=$1 want=$2 msg=$3 tag="walk35-$1${F:+-trust}"
    for order in fwd rev; do
        if [ $order = fwd ]; then a=base.h5 b=$nm.h5; else a=$nm.h5 b=base.h5; fi
        for j in 1 2; do
            # shellcheck disable=SC2086
            golden-diff -j $j $F "$a" "$b" > "$nm.out" 2> "$nm.err"; got=$?
            if [ -n "$OTHER" ]; then
                # shellcheck disable=SC2086
                "$OTHER" -j $j $F "$a" "$b" > "$nm.oout" 2> "$nm.oerr"; ogot=$?
                if [ "$got" != "$ogot" ] || ! cmp -s "$nm.out" "$nm.oout" || ! cmp -s "$nm.err" "$nm.oerr"; then
                    notok "$tag" "$order -j $j differs from $OTHER: exit $got/$ogot: $(head -c 300 "$nm.err") / $(head -c 300 "$nm.oerr")"
                    return
                fi
            fi
            if [ "$got" != "$want" ]; then
                notok "$tag" "$order -j $j: exit $got, wanted $want: $(head -c 300 "$nm.err")"; return; fi
            if [ -n "$msg" ] && ! grep -Fq -- "$msg" "$nm.err"; then
                notok "$tag" "$order -j $j: no '$msg' in: $(head -c 300 "$nm.err")"; return; fi
        done
    done
    ok "$tag"
}

for c in extra no-count no-dtype no-sha no-mean layer-str count-arr mean-str opfam-int digest-bad \
         dtype-f64 soft external hard2 group2 type2 soft-then-bad bad-name corrupt; do
    "$PYTHON" edit.py "$c" "$c.h5" || notok "walk35-$c-setup" "h5py edit failed"
done

F=
one extra 0 ""
one no-count 2 "a/x: missing integer attribute 'count'"
one no-dtype 2 "layers/12/out: missing string attribute 'dtype'"
one no-sha 2 "a/x: attribute 'sha256' is missing or not 64 lowercase hex digits"
one no-mean 2 "a/b/y: missing number attribute 'mean'"
one layer-str 2 "a/x: attribute 'layer' is not a number"
one count-arr 2 "a/x: attribute 'count' is not a number"
one mean-str 2 "a/x: attribute 'mean' is not a number"
one opfam-int 2 "layers/40/out: attribute 'op_family' is not a string"
one digest-bad 2 "a/x: attribute 'tensor_digest' is not 64 lowercase hex digits"
one dtype-f64 2 "type mismatch: dtype 'f64' is stored as IEEE f64 little-endian"
one soft 2 "s: soft link: a golden holds only its own tensors"
one external 2 "layers/9/ext: external link: a golden holds only its own tensors"
one hard2 2 "object has 2 hard links: a golden names each tensor once"
one group2 2 "object has 2 hard links: a golden names each tensor once"
one type2 2 "links do not lead to its"
# an object's failure is reported before a link's, as when links were walked second
one soft-then-bad 2 "layers/5/out: missing integer attribute 'count'"
one bad-name 2 "a dataset's name is not a tensor name"
one corrupt 2 ""
# --trust-hashes checks the hash and statistics attributes for presence only
F=--trust-hashes
one no-sha 2 "a/x: missing attribute 'sha256'"
one mean-str 0 ""
one layer-str 2 "a/x: attribute 'layer' is not a number"
one soft 2 "s: soft link: a golden holds only its own tensors"
one type2 2 "links do not lead to its"
one extra 0 ""
