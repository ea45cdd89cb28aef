# Hostile documents never crash or hang manifest-verify: each gives exit 2 (cannot read) or 1
# (a schema verdict) with one clear stderr line, and memory stays bounded on a 1 GB line.
. "$GOLDEN_ROOT/tests/e2e/lib.sh"
S=calculet-fault/v1

# hostile NAME FILE: exit 1 or 2, no sanitizer report, a one-line error when 2.
hostile() {
    timeout 60 manifest-verify --schema "$S" "$2" > out.txt 2> err.txt
    rc=$?
    if [ "$rc" -eq 1 ] || [ "$rc" -eq 2 ]; then ok "$1 exits $rc"; else notok "$1 exits 1 or 2" "exit $rc: $(head -c 300 err.txt)"; fi
    if grep -q -e Sanitizer -e 'runtime error' err.txt; then notok "$1 sanitizer clean" "$(head -c 300 err.txt)"; else ok "$1 sanitizer clean"; fi
    if [ "$rc" -eq 2 ]; then
        if [ "$(wc -l < err.txt)" -eq 1 ] && grep -q "^manifest-verify: $2" err.txt; then ok "$1 one error line naming the file"
        else notok "$1 one error line naming the file" "$(head -c 300 err.txt)"; fi
    fi
}

awk 'BEGIN { for (i = 0; i < 200000; i++) printf "["; for (i = 0; i < 200000; i++) printf "]"; print "" }' > deep.json
hostile "deep JSON nesting" deep.json
awk 'BEGIN { for (i = 0; i < 100000; i++) printf "- "; print "x" }' > deep.yaml
hostile "deep YAML nesting" deep.yaml
printf '{"time": 1e999999999, "n": 123456789012345678901234567890123456789}\n' > huge.json
hostile "huge numbers" huge.json
printf '{"message": "\377\376 bad"}\n' > badutf8.json
hostile "invalid UTF-8" badutf8.json
printf 'message: "ok"\nkind: \300\200\n' > badutf8.yaml
hostile "invalid UTF-8 YAML" badutf8.yaml
printf '{"message": "a\000b"}\n' > nul.json
hostile "NUL byte" nul.json
printf '{"kind":"timeout"}\n\000\n' > nul.jsonl
hostile "NUL byte in JSONL" nul.jsonl
{
    echo 'a: &a ["x","x","x","x","x","x","x","x","x","x"]'
    prev=a
    for l in b c d e f g h i j k l m n o p q r s t; do
        printf '%s: &%s [*%s,*%s,*%s,*%s,*%s,*%s,*%s,*%s,*%s,*%s]\n' $l $l $prev $prev $prev $prev $prev $prev $prev $prev $prev $prev
        prev=$l
    done
} > bomb.yaml
start=$(date +%s)
hostile "alias bomb" bomb.yaml
[ $(( $(date +%s) - start )) -lt 30 ] && ok "alias bomb rejected quickly" || notok "alias bomb rejected quickly"
printf 'a: 1\na: 2\n' > dup.yaml
hostile "duplicate keys" dup.yaml

# a 1 GiB line without writing 1 GiB: a sparse file, and a pipe
printf '{"message":"' > sparse.jsonl
truncate -s 1G sparse.jsonl
/usr/bin/time -f '%M' -o rss.txt timeout 120 manifest-verify --schema "$S" sparse.jsonl > out.txt 2> err.txt
rc=$?
[ "$rc" -eq 2 ] && ok "sparse 1 GiB line exits 2" || notok "sparse 1 GiB line exits 2" "exit $rc $(head -c 300 err.txt)"
rss=$(tail -n 1 rss.txt)
[ "${rss:-999999999}" -lt 400000 ] && ok "sparse 1 GiB line in bounded memory (${rss} KiB)" || notok "sparse 1 GiB line bounded memory" "${rss} KiB"
rm -f sparse.jsonl
mkfifo pipe.jsonl
( { printf '{"message":"'; head -c 1073741824 /dev/zero | tr '\0' a; printf '"}\n'; } > pipe.jsonl 2>/dev/null ) &
writer=$!
/usr/bin/time -f '%M' -o rss.txt timeout 120 manifest-verify --schema "$S" pipe.jsonl > out.txt 2> err.txt
rc=$?
kill "$writer" 2>/dev/null; wait "$writer" 2>/dev/null
[ "$rc" -eq 2 ] && ok "piped 1 GiB line exits 2" || notok "piped 1 GiB line exits 2" "exit $rc $(head -c 300 err.txt)"
grep -q "line longer than" err.txt && ok "piped 1 GiB line: clear message" || notok "piped 1 GiB line: clear message" "$(head -c 300 err.txt)"
rss=$(tail -n 1 rss.txt)
[ "${rss:-999999999}" -lt 400000 ] && ok "piped 1 GiB line in bounded memory (${rss} KiB)" || notok "piped 1 GiB line bounded memory" "${rss} KiB"
rm -f pipe.jsonl
mkfifo pipe.json
( { printf '{"message":"'; head -c 1073741824 /dev/zero | tr '\0' a; printf '"}\n'; } > pipe.json 2>/dev/null ) &
writer=$!
/usr/bin/time -f '%M' -o rss.txt timeout 120 manifest-verify --schema "$S" pipe.json > out.txt 2> err.txt
rc=$?
kill "$writer" 2>/dev/null; wait "$writer" 2>/dev/null
[ "$rc" -eq 2 ] && ok "piped 1 GiB document exits 2" || notok "piped 1 GiB document exits 2" "exit $rc $(head -c 300 err.txt)"
expect_grep "piped 1 GiB document: size limit named" "limit" err.txt
rss=$(tail -n 1 rss.txt)
[ "${rss:-999999999}" -lt 400000 ] && ok "piped 1 GiB document in bounded memory (${rss} KiB)" || notok "piped 1 GiB document bounded memory" "${rss} KiB"
rm -f pipe.json
truncate -s 100M big.json
expect_exit "100 MB document refused" 2 manifest-verify --schema "$S" big.json
expect_grep "100 MB document: size named" "104857600 bytes" err.txt
rm -f big.json
