# Opening goldens (issue 35): tensors written now keep their attributes in the object header
# (compact storage, not HDF5's dense heap past 8), the isolated child's one walk is what the
# parent lists (checked against h5py's own reading), and the inputs opened side by side
# still report the reference's error first.
. "$GOLDEN_ROOT/tests/e2e/lib.sh"

specs=""
i=0
while [ $i -lt 40 ]; do
    specs="$specs layers/$i/out:f32:4x8:rand=$i,-1,1"
    i=$((i + 1))
done
# shellcheck disable=SC2086
make-golden a.h5 $specs 'z:bf16:3:values=1,-2,0.5' 'n:f32:5:values=1,nan,inf,-inf,0' ||
    echo "not ok make-golden"

# h5stat -F: bytes of the attributes' B-trees and heaps (dense storage); -A: attributes a
# tensor has (more than 8: HDF5 alone would have made them dense)
h5stat -A a.h5 > attrs.txt 2>&1
most=$(sed -n 's/.*Max\. # of attributes to objects: *//p' attrs.txt)
if [ -n "$most" ] && [ "$most" -gt 8 ]; then ok "tensors hold more than 8 attributes"; else
    notok "tensors hold more than 8 attributes" "h5stat -A: ${most:-nothing}"; fi
h5stat -F a.h5 > space.txt 2>&1
dense=$(sed -n '/Attributes:/,/Heap/p' space.txt | sed -n 's/.*\(B-tree\/List\|Heap\): *//p' | tr '\n' ' ')
if [ "$dense" = "0 0 " ]; then ok "attributes stored compactly"; else
    notok "attributes stored compactly" "dense attribute bytes (B-tree, heap): '$dense'"; fi
expect_exit "compact goldens verify" 0 golden-dump --verify a.h5

# the parent lists what the child walked: every name, shape and stored sha256 as h5py reads them
expect_exit "list" 0 golden-dump --list a.h5 --json list.json
if [ -n "$PYTHON" ]; then
    "$PYTHON" - > py.txt 2>&1 <<'PY'
import json, h5py
got = {t["name"]: (t["shape"], t["sha256"], t["dtype"]) for t in json.load(open("list.json"))["tensors"]}
want = {}
with h5py.File("a.h5", "r") as f:
    def one(name, obj):
        if isinstance(obj, h5py.Dataset):
            a = obj.attrs
            s = a["sha256"]; d = a["dtype"]
            want[name] = (list(obj.shape), s.decode() if isinstance(s, bytes) else s,
                          d.decode() if isinstance(d, bytes) else d)
    f.visititems(one)
print(len(want), "same" if got == want else "differ: %r vs %r" % (got, want))
PY
    expect_grep "the list is the file's (h5py)" '^42 same$' py.txt
else
    echo "ok the list is the file's (h5py) # skip numpy+h5py not importable"
fi

# both sides opened at once: the reference's error is the one reported, on one line
expect_exit "two missing inputs" 2 golden-diff nope1.h5 nope2.h5
expect_grep "the reference's error first" '^golden-diff: nope1\.h5: ' err.txt
expect_lines "one error line" 1 err.txt
printf 'not an HDF5 file at all\n' > junk.h5
expect_exit "a corrupt candidate" 2 golden-diff a.h5 junk.h5
expect_grep "the candidate named" '^golden-diff: junk\.h5: ' err.txt
expect_exit "same file passes" 0 golden-diff -q a.h5 a.h5
expect_exit "same file passes on one thread" 0 golden-diff -q -j 1 a.h5 a.h5
