# The writer splits hashing and statistics over threads; the golden file's attributes must
# not depend on how many (tensors span several 4 MiB write buffers here).
. "$GOLDEN_ROOT/tests/e2e/lib.sh"
dump-gen run 2 9000000 > /dev/null
GOLDEN_THREADS=1 golden-dump -o one.h5 run > /dev/null 2>&1
GOLDEN_THREADS=2 golden-dump -o two.h5 run > /dev/null 2>&1
GOLDEN_THREADS=3 golden-dump -o three.h5 run > /dev/null 2>&1
for f in one two three; do golden-dump --list "$f.h5" --json - | grep -v -e '"file"' -e '"created"' > "$f.json"; done
if cmp -s one.json two.json && cmp -s one.json three.json; then ok "same attributes on 1, 2 and 3 threads"
else notok "same attributes on 1, 2 and 3 threads" "$(diff one.json two.json | head -5)"; fi
# and the hashes are those of the raw little-endian dumps, worked out by sha256sum
bad=0
for b in run/*.bin; do
    h=$(sha256sum "$b" | cut -d' ' -f1)
    grep -q "\"$h\"" two.json || bad=$((bad + 1))
done
if [ "$bad" -eq 0 ]; then ok "threaded hashes match sha256sum"; else notok "threaded hashes match sha256sum" "$bad differ"; fi
expect_exit "threaded file verifies" 0 golden-dump --verify two.h5
# Issue 19.3/19.4: data whose statistics are hard to sum must verify however many threads
# wrote or re-checked it (the writer and the re-check sum in one fixed block order), and
# finite data gives finite statistics (worked by hand: ten 1e308 have mean 1e308, std 0;
# [1e200, -1e200] has mean 0 and std 1e200).
if [ -n "$PYTHON" ]; then
    mkdir hard
    "$PYTHON" - <<'PY'
import numpy as np
rng = np.random.default_rng(7)
w = rng.standard_normal((512, 512)).astype(np.float32)
np.save('hard/zero_mean.npy', (w - w.mean()).astype(np.float32))
g = np.ones(4096 * 5 + 3, dtype=np.float32); g[[3, 999, 4097, 9000, 20000]] = np.nextafter(np.float32(1), np.float32(2))
np.save('hard/gamma.npy', g)
np.save('hard/sine.npy', np.sin(2 * np.pi * np.arange(1 << 18) / (1 << 18)).astype(np.float32))
np.save('hard/wide.npy', (rng.standard_normal(300000) * 10.0 ** rng.integers(-300, 300, 300000)))
np.save('hard/huge.npy', np.full(10, 1e308))
np.save('hard/pm.npy', np.array([1e200, -1e200]))
PY
    bad=""
    for wt in 1 2 3; do
        GOLDEN_THREADS=$wt golden-dump -o "hard$wt.h5" hard > /dev/null 2> err.txt || bad="$bad dump $wt: $(cat err.txt);"
        for vt in 1 2 3; do
            GOLDEN_THREADS=$vt golden-dump --verify "hard$wt.h5" > out.txt 2>&1 || bad="$bad written on $wt, verified on $vt: $(head -c 300 out.txt);"
        done
    done
    if [ -z "$bad" ]; then ok "zero-mean, near-constant, periodic, wide-range data verify on any thread count"
    else notok "zero-mean, near-constant, periodic, wide-range data verify on any thread count" "$bad"; fi
    golden-dump --list hard1.h5 --json - > hard.json
    "$PYTHON" - > py.txt 2>&1 <<'PY'
import json
t = {x['name']: x for x in json.load(open('hard.json'))['tensors']}
bad = []
if t['huge']['mean'] != 1e308 or t['huge']['std'] != 0: bad.append(f"huge: {t['huge']['mean']} {t['huge']['std']}")
if t['pm']['mean'] != 0 or abs(t['pm']['std'] / 1e200 - 1) > 1e-15: bad.append(f"pm: {t['pm']['mean']} {t['pm']['std']}")
print('\n'.join(bad) if bad else 'all good')
PY
    expect_grep "finite data gives finite statistics" '^all good$' py.txt
fi
