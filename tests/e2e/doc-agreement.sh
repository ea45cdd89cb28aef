# Every document type the project reads, fed to every tool that reads it, in hostile variants
# (issue 24): duplicate key, invalid UTF-8, a NUL byte, an escaped NUL, a lone surrogate, a
# number out of range, an over-long JSON Lines line. All tools must give the same
# accept/refuse answer; the unmodified document must be accepted by all (so the test can fail)
# and every hostile variant refused by all. An escaped \u0000 is a valid character of a JSON
# string (docs/documents.md): kept in free text (a policy's description, a request_id). Not fed
# to the graph: its ids have no free text, and dag-check's graph rules refuse a NUL in an id
# that calculet-graph/v1's schema admits (known; see docs/design.md, "Open").
. "$GOLDEN_ROOT/tests/e2e/lib.sh"
PY=/usr/bin/python3
EX="$GOLDEN_ROOT/examples/experiment/OP-MOE-0001"

# the base documents, all JSON (a policy is YAML, and JSON is YAML: one mutator for all)
cp "$GOLDEN_ROOT/tests/data/graphs/redundant-wait.json" graph.json
head -n 1 "$EX/performance/raw-requests.jsonl" > /dev/null || { notok "example raw requests"; exit 1; }
cat > policy.json <<'J'
{"schema": "calculet-diff-policy/v1", "description": "agreement base",
 "default_tier": "layer", "rules": [{"match": "*", "tier": "layer", "atol": 0.001}]}
J

# mutate KIND IN OUT DUP_FROM STRING NUMBER: one variant of IN, textually
mutate() {
    $PY - "$@" <<'PY'
import sys
kind, src, dst, dup, s, num = sys.argv[1:7]
b = open(src, "rb").read()
def sub(old, new):
    global b
    o = old.encode()
    assert o in b, (kind, old)
    b = b.replace(o, new, 1)
q = '"' + s + '"'
if kind == "dup":       sub(dup, (dup + dup).encode())          # the same pair twice
elif kind == "utf8":    sub(q, b'"' + s.encode() + b'\xff"')
elif kind == "nul":     sub(q, b'"' + s.encode() + b'\x00"')
elif kind == "escnul":  sub(q, b'"' + s.encode() + b'\\u0000"')
elif kind == "surr":    sub(q, b'"' + s.encode() + b'\\ud800"')
elif kind == "big":     sub(num, num.split(":")[0].encode() + b":1e999")
elif kind == "long":    b = b + b'{"request_id": "' + b"x" * (65 << 20) + b'"}\n'
open(dst, "wb").write(b)
PY
}

# readers: each prints "accept" or "refuse" for one file
r_dag() { dag-check "$1" > /dev/null 2>&1; [ $? -le 1 ] && echo accept || echo refuse; }
r_mv() { # manifest-verify --schema FORMAT FILE
    manifest-verify --schema "$1" "$2" > /dev/null 2>&1 && echo accept || echo refuse; }
r_diff() { # golden-diff --policy: refused when the error names the policy, not the goldens
    golden-diff --policy "$1" no-ref.h5 no-cand.h5 > /dev/null 2> e.txt
    if grep -q "^golden-diff: $1" e.txt; then echo refuse; else echo accept; fi; }
r_gate() { # exp-gate summarize on a copy of the example folder with FILE as its raw requests
    rm -rf gx; cp -r "$EX" gx
    rm -f gx/performance/summary.json gx/decision.json gx/decision.md gx/SHA256SUMS
    cp "$1" gx/performance/raw-requests.jsonl
    exp-gate summarize --bootstrap 50 gx > /dev/null 2>&1 && echo accept || echo refuse; }

# agree NAME FILE WANT READER...: every reader's answer is WANT
agree() {
    _n=$1; _f=$2; _want=$3; shift 3
    _all=""; _bad=0
    for _r in "$@"; do
        _a=$(eval "$_r \"$_f\"")
        _all="$_all [$_r: $_a]"
        [ "$_a" = "$_want" ] || _bad=$((_bad + 1))
    done
    if [ "$_bad" -eq 0 ]; then ok "agree $_n: all $_want"; else notok "agree $_n" "want $_want:$_all"; fi
}

RAWL=raw.jsonl
cp "$EX/performance/raw-requests.jsonl" $RAWL
RID='baseline-prefill-p128-o1-000'
kinds="dup utf8 nul escnul surr big"
want_of() { [ "$1" = escnul ] && echo "$2" || echo refuse; }
agree graph-base graph.json accept r_dag "r_mv calculet-graph/v1"
agree policy-base policy.json accept r_diff "r_mv calculet-diff-policy/v1"
agree raw-base $RAWL accept r_gate "r_mv calculet-raw-request/v1"
for k in $kinds; do
    if [ $k != escnul ]; then
        mutate $k graph.json g-$k.json '"schema": "calculet-graph/v1",' p '"size": 64'
        agree "graph-$k" g-$k.json refuse r_dag "r_mv calculet-graph/v1"
    fi
    mutate $k policy.json p-$k.json '"schema": "calculet-diff-policy/v1",' 'agreement base' '"atol": 0.001'
    agree "policy-$k" p-$k.json "$(want_of $k accept)" r_diff "r_mv calculet-diff-policy/v1"
    mutate $k $RAWL r-$k.jsonl "\"request_id\":\"$RID\"," "$RID" '"ttft_ms":10.722918'
    agree "raw-$k" r-$k.jsonl "$(want_of $k accept)" r_gate "r_mv calculet-raw-request/v1"
done
# an over-long line (past the 64 MiB JSON Lines limit): refused without reading it whole
mutate long $RAWL r-long.jsonl - - -
agree raw-long r-long.jsonl refuse r_gate "r_mv calculet-raw-request/v1"
rm -f r-long.jsonl
