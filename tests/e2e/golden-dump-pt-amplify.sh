# A .pt whose pickle names one list from millions of paths (DUP of shared lists, found by
# fuzz_unpickle on 2026-12-02: 133 bytes took 2.3 GB and 5.6 s before the walk had an entry budget).
# It must be refused, exit 2, one line naming the file, in bounded memory and time.
. "$GOLDEN_ROOT/tests/e2e/lib.sh"
if [ -z "$PYTHON" ]; then echo "ok pt-amplify # SKIP no python"; exit 0; fi
"$PYTHON" - "$GOLDEN_ROOT/tests/fuzz/corpus/fuzz_unpickle/oom-dup-shared-list" <<'PYEOF'
import sys, zipfile
pkl = open(sys.argv[1], "rb").read()
with zipfile.ZipFile("amp.pt", "w", zipfile.ZIP_STORED) as z:
    z.writestr("archive/data.pkl", pkl)
    z.writestr("archive/version", "3\n")
PYEOF
# 1 GiB of address space is far more than a refusal needs (ASan builds reserve shadow memory:
# no limit there)
lim=""
[ "${GOLDEN_SAN:-}" = 1 ] || lim="ulimit -v 1048576;"
start=$(date +%s)
sh -c "$lim golden-dump --list amp.pt" > out.txt 2> err.txt
rc=$?
took=$(( $(date +%s) - start ))
[ $rc -eq 2 ] && ok pt-amplify-exit-2 || notok pt-amplify-exit-2 "exit $rc: $(head -c 300 err.txt)"
# (the tool's walk meets the cycle's depth limit first; the fuzz harness met the entry budget)
expect_grep pt-amplify-says '^golden-dump: amp.pt: .*(more than 131072 tensors and skipped values|nested deeper than 64 levels)' err.txt
[ "$(wc -l < err.txt)" -eq 1 ] && ok pt-amplify-one-line || notok pt-amplify-one-line "$(head -c 300 err.txt)"
[ $took -le 20 ] && ok pt-amplify-bounded-time || notok pt-amplify-bounded-time "$took s"
