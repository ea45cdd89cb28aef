#!/bin/sh
# manifest-verify -j N bounds every thread it starts, schema validation of big arrays included:
# counted from the outside with strace (clone/clone3 calls), not from the tool's own word.
. "$GOLDEN_ROOT/tests/e2e/lib.sh"

if ! command -v strace >/dev/null 2>&1; then
    ok "threads # skip strace not installed"
    exit 0
fi
# 20,000 items: well above the validator's parallel threshold (4,096 items)
awk 'BEGIN { printf "["; for (i = 0; i < 20000; i++) printf "%s{\"a\": %d}", (i ? ", " : ""), i; print "]" }' > big.json
printf '{"$schema": "https://json-schema.org/draft/2020-12/schema", "type": "array",\n "items": {"type": "object", "required": ["a"], "properties": {"a": {"type": "integer"}}}}\n' > s.json
# LeakSanitizer stops the world with ptrace, which strace already holds: in the sanitizer build
# leak checking is left to every other test here
ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"; export ASAN_OPTIONS
count_clones() {
    strace -f -qq -e trace=clone,clone3 -o trace.txt "$@" > run.out 2>&1
    rc=$?
    n=$(grep -c 'clone' trace.txt)
    echo "$rc $n"
}
# the baseline: what the tool starts whatever it validates (the crash guard's watchdog)
echo '[{"a": 1}]' > small.json
set -- $(count_clones manifest-verify -j 2 --schema s.json small.json)
base=$2
set -- $(count_clones manifest-verify -j 1 --schema s.json big.json)
[ "$1" = 0 ] && ok "valid big array passes with -j 1" || notok "valid big array passes with -j 1" "exit $1: $(head -c 300 run.out)"
[ "$2" = "$base" ] && ok "-j 1 starts no validation thread" || notok "-j 1 starts no validation thread" "$2 clone calls, $base without validation work"
set -- $(count_clones manifest-verify -j 2 --schema s.json big.json)
[ "$2" -gt "$base" ] && ok "-j 2 starts a validation worker" || notok "-j 2 starts a validation worker" "$2 clone calls, $base without validation work"
set -- $(count_clones env GOLDEN_THREADS=1 manifest-verify --schema s.json big.json)
[ "$2" = "$base" ] && ok "GOLDEN_THREADS=1 starts no validation thread" || notok "GOLDEN_THREADS=1 starts no validation thread" "$2 clone calls, $base without validation work"
