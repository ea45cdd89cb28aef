#!/bin/sh
# exp-gate decide and manifest-verify read performance/raw-requests.jsonl in a pipeline (parse
# and schema on -j workers, the rest in file order: docs/exp-gate.md "Performance"). Whatever -j
# is, the decision files, the summary, the findings and the first error are the same bytes.
# The folder has 3,000 lines (six chunks of 512 lines), so the cases below cross chunks: a
# request_id repeated across them, a bad line in the second half, a schema-invalid and a
# stage-order line late, CRLF, a file of one line.
. "$GOLDEN_ROOT/tests/e2e/lib.sh"
EX="$GOLDEN_ROOT/examples/experiment/OP-MOE-0001"
PY=/usr/bin/python3
$PY "$GOLDEN_ROOT/bench/gen-exp-gate-folder.py" "$EX" gen 3000 > /dev/null || { notok "generate"; exit 0; }
RAW=performance/raw-requests.jsonl

# run NAME DIR: decide and manifest-verify with -j 1, 2 and 3 on copies of DIR; every output equal
run() {
    _n=$1; _d=$2
    for j in 1 2 3; do
        rm -rf "r$j" "m$j" "mv$j.json" && mkdir "r$j" "m$j"
        cp -r "$_d" "r$j/OP-MOE-0001" && cp -r "$_d" "m$j/OP-MOE-0001"
        exp-gate decide --force -j "$j" "r$j/OP-MOE-0001" > "d$j.out" 2> "d$j.err"
        echo "exit $?" >> "d$j.out"
        for f in decision.json decision.md performance/summary.json; do
            if [ -f "r$j/OP-MOE-0001/$f" ]; then cat "r$j/OP-MOE-0001/$f"; else echo "no $f"; fi
        done | cat "d$j.out" "d$j.err" - | sed "s#r$j/#DIR/#g" > "d$j.all"
        manifest-verify -j "$j" --json "mv$j.json" "m$j/OP-MOE-0001" > "mv$j.out" 2>&1
        echo "exit $?" >> "mv$j.out"
        { cat "mv$j.out"; cat "mv$j.json" 2>/dev/null; } | sed "s#m$j/#DIR/#g" > "mv$j.all"
    done
    if cmp -s d1.all d2.all && cmp -s d1.all d3.all; then ok "$_n: decide -j 1 = -j 2 = -j 3"
    else notok "$_n: decide -j 1 = -j 2 = -j 3" "$(diff d1.all d2.all | head -5)"; fi
    if cmp -s mv1.all mv2.all && cmp -s mv1.all mv3.all; then ok "$_n: manifest-verify -j 1 = -j 2 = -j 3"
    else notok "$_n: manifest-verify -j 1 = -j 2 = -j 3" "$(diff mv1.all mv2.all | head -5)"; fi
}

D=gen/OP-MOE-0001
run "clean" "$D"
expect_grep "clean: decided" "exit 0" d2.out
expect_grep "clean: summary from 3000 lines' groups" '"case_id"' d2.all

# the same file with line 5's and line 1500's request_id again on lines 2000 and 2800
cp -r "$D" rep
$PY - rep/$RAW <<'PY'
import sys, json
p = sys.argv[1]; L = open(p).read().split("\n")[:-1]
L[1999] = L[4]; L[2799] = L[1499]
open(p, "w").write("\n".join(L) + "\n")
PY
run "repeated ids across chunks" rep
expect_grep "repeated: line 2000 repeats line 5" "line 2000.*repeats the one on line 5|repeats the one on line 5" mv2.all
expect_grep "repeated: line 2800 repeats line 1500" "repeats the one on line 1500" mv2.all
expect_grep "repeated: decide refuses" "exit 2" d2.out

# a line that is not JSON in the second half: the same first error, naming line 2500
cp -r "$D" bad
$PY - bad/$RAW <<'PY'
import sys
p = sys.argv[1]; L = open(p).read().split("\n")[:-1]
L[2499] = L[2499][:100]; L[2799] = "{"
open(p, "w").write("\n".join(L) + "\n")
PY
run "bad line late" bad
expect_grep "bad line: the error names line 2500" "raw-requests.jsonl:2500" d2.all
expect_grep "bad line: manifest-verify names line 2500" "raw-requests.jsonl:2500" mv2.all

# schema-invalid and stage-order lines late (the generic validator's findings, in order)
cp -r "$D" inv
$PY - inv/$RAW <<'PY'
import sys, json
p = sys.argv[1]; L = open(p).read().split("\n")[:-1]
o = json.loads(L[2100]); o["run"] = -1; o["extra"] = 1; L[2100] = json.dumps(o)
o = json.loads(L[2900]); s = o["stages"]; s["h2d"]["end_ns"] = s["h2d"]["start_ns"] - 1; L[2900] = json.dumps(o)
o = json.loads(L[600]); o["ttft_ms"] = 1.0; o["run"] = 3.0; L[600] = json.dumps(o)
open(p, "w").write("\n".join(L) + "\n")
PY
run "invalid lines late" inv
expect_grep "invalid: schema finding on line 2101" "raw-requests.jsonl:2101:.*(minimum|additionalProperties)" mv2.all
expect_grep "invalid: stage-order finding on line 2901" "raw-requests.jsonl:2901:.*stage h2d ends before it starts" mv2.all

# CRLF line ends; a file of one line (fewer lines than workers)
cp -r "$D" crlf
sed -i 's/$/\r/' crlf/$RAW
run "CRLF" crlf
expect_grep "CRLF: decided" "exit 0" d2.out
cp -r "$D" one
head -1 "$D/$RAW" > one/$RAW
run "one line" one
expect_grep "one line: refused (too few runs)" "exit 2" d2.out
