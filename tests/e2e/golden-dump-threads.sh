# The writer splits hashing and statistics over threads; the golden file's attributes must
# not depend on how many (tensors span several 4 MiB write buffers here).
. "$GOLDEN_ROOT/tests/e2e/lib.sh"
dump-gen run 2 9000000 > /dev/null
GOLDEN_THREADS=1 golden-dump -o one.h5 run > /dev/null 2>&1
GOLDEN_THREADS=2 golden-dump -o two.h5 run > /dev/null 2>&1
GOLDEN_THREADS=3 golden-dump -o three.h5 run > /dev/null 2>&1
for f in one two three; do golden-dump --list "$f.h5" --json - | grep -v '"file"' > "$f.json"; done
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
