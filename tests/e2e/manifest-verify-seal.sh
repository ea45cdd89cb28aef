# --seal writes SHA256SUMS in sha256sum -c format over every asset; a later run fails when a
# sealed asset changed, vanished or appeared.
. "$GOLDEN_ROOT/tests/e2e/lib.sh"
EX="$GOLDEN_ROOT/examples/experiment/OP-MOE-0001"

fresh() {
    rm -rf "w/$1"; mkdir -p "w/$1"; cp -R "$EX" "w/$1/OP-MOE-0001"
    rm -f "w/$1/OP-MOE-0001/SHA256SUMS"; echo "w/$1/OP-MOE-0001"
}

d=$(fresh seal)
expect_exit "seal a clean folder" 0 manifest-verify --seal "$d"
expect_grep "summary says sealed" "sealed \(SHA256SUMS written\)" out.txt
n_assets=$(cd "$d" && find . -type f ! -name SHA256SUMS | wc -l | tr -d ' ')
expect_lines "one line per asset" "$n_assets" "$d/SHA256SUMS"
if (cd "$d" && sha256sum --quiet -c SHA256SUMS) > sc.txt 2>&1; then ok "sha256sum -c accepts the seal"; else
    notok "sha256sum -c accepts the seal" "$(head -c 300 sc.txt)"; fi
# the seal lists exactly the files find sees (independent listing)
(cd "$d" && find . -type f ! -name SHA256SUMS | sed 's|^\./||' | LC_ALL=C sort) > want.txt
cut -c67- "$d/SHA256SUMS" > got.txt
if cmp -s want.txt got.txt; then ok "seal lists every asset, sorted"; else notok "seal lists every asset, sorted"; fi
expect_exit "sealed folder passes" 0 manifest-verify "$d"
expect_exit "sealing twice is refused" 2 manifest-verify --seal "$d"
expect_grep "refusal says why" "already sealed" err.txt
expect_exit "--force reseals" 0 manifest-verify --seal --force "$d"

d=$(fresh changed); manifest-verify --seal "$d" > /dev/null
printf 'late edit\n' >> "$d/decision.md"
expect_exit "changed asset fails" 1 manifest-verify "$d"
expect_grep "changed asset: seal rule with line" "SHA256SUMS:[0-9]+:67: seal: SHA-256 of 'decision.md'" out.txt

d=$(fresh vanished); manifest-verify --seal "$d" > /dev/null
rm "$d/performance/raw-device-trace.csv"
expect_exit "vanished asset fails" 1 manifest-verify "$d"
expect_grep "vanished asset named" "seal: sealed asset 'performance/raw-device-trace.csv' has vanished" out.txt

d=$(fresh appeared); manifest-verify --seal "$d" > /dev/null
printf 'extra\n' > "$d/performance/notes.txt"
expect_exit "appeared asset fails" 1 manifest-verify "$d"
expect_grep "appeared asset named" "performance/notes.txt: seal: asset appeared" out.txt

d=$(fresh escape); manifest-verify --seal "$d" > /dev/null
printf '%064d  ../../etc/hostname\n' 0 >> "$d/SHA256SUMS"
expect_exit "seal entry with .. fails" 1 manifest-verify "$d"
expect_grep "seal entry with .. is path-escape" "path-escape" out.txt

d=$(fresh junk); manifest-verify --seal "$d" > /dev/null
printf 'not a digest line\n' >> "$d/SHA256SUMS"
expect_exit "malformed seal line fails" 1 manifest-verify "$d"
expect_grep "malformed seal line named" "SHA256SUMS:[0-9]+:1: seal: not a 'SHA256  path' line" out.txt

d=$(fresh broken); sed -i 's/"pii_review":"passed"/"pii_review":"failed"/' "$d/golden/calibration-manifest.jsonl"
expect_exit "a failing folder is not sealed" 1 manifest-verify --seal "$d"
expect_absent "no SHA256SUMS after a failing check" "$d/SHA256SUMS"
expect_grep "summary says not sealed" "not sealed" out.txt

# a seal written by sha256sum itself (with its "./" prefixes) is accepted, and still catches a change
d=$(fresh coreutils)
(cd "$d" && find . -type f -print0 | LC_ALL=C sort -z | xargs -0 sha256sum > ../sums.tmp) && mv "w/coreutils/sums.tmp" "$d/SHA256SUMS"
expect_exit "sha256sum-made seal accepted" 0 manifest-verify "$d"
printf 'z' >> "$d/performance/raw-device-trace.csv"
expect_exit "sha256sum-made seal catches a change" 1 manifest-verify "$d"
expect_grep "change found through the ./ path" "seal: SHA-256 of 'performance/raw-device-trace.csv'" out.txt
