# End-to-end tests of dag-check on hand-drawn graphs (tests/data/graphs) and generated ones:
# each kind of finding, the exit codes, the JSON report, JUnit, and the safety of outputs.
. "$GOLDEN_ROOT/tests/e2e/lib.sh"
G="$GOLDEN_ROOT/tests/data/graphs"
# any python3 reads JSON; numpy is not needed here
JPY=""
for p in /usr/bin/python3 python3; do
    if command -v "$p" >/dev/null 2>&1 && "$p" -c 'import json' 2>/dev/null; then JPY=$p; break; fi
done
# jq_py NAME EXPR FILE: python expression over the report `r` must be true
jcheck() {
    if [ -z "$JPY" ]; then ok "$1 # skip no python3"; return; fi
    if "$JPY" -c "import json,sys; r=json.load(open(sys.argv[1])); sys.exit(0 if ($2) else 1)" "$3" 2>/dev/null
    then ok "$1"; else notok "$1" "false: $2"; fi
}

expect_exit version 0 dag-check --version
expect_grep version-text '^dag-check 0\.1\.0$' out.txt
expect_exit help 0 dag-check --help
expect_grep help-text '^usage: dag-check' out.txt
expect_exit no-args 2 dag-check
expect_exit missing-file 2 dag-check nope.json
expect_grep missing-file-msg '^dag-check: nope\.json' err.txt

# structure error: one line with the JSON pointer, exit 2
expect_exit duplicate-op 2 dag-check "$G/bad-duplicate-op.json"
expect_grep duplicate-op-msg 'bad-duplicate-op\.json:3:37: duplicate op id "x"$' err.txt
expect_lines duplicate-op-one-line 1 err.txt
# big JSON graphs stream; forced here, the same finding names a JSON pointer instead
GOLDEN_GRAPH_STREAM_BYTES=0 expect_exit stream-duplicate-op 2 dag-check "$G/bad-duplicate-op.json"
expect_grep stream-duplicate-op-msg 'bad-duplicate-op\.json:3:37: duplicate op id "x"$' err.txt
printf '{"schema": "calculet-graph/v1", "queues": [{"id": "A", "chip": 0}], "ops": [{"id": "x", "queue": "A"},]}' > trailing.json
GOLDEN_GRAPH_STREAM_BYTES=0 expect_exit stream-syntax 2 dag-check trailing.json
expect_grep stream-syntax-msg '^dag-check: trailing\.json:1:[0-9]+: ' err.txt
expect_exit doc-syntax 2 dag-check trailing.json
expect_grep doc-syntax-msg '^dag-check: trailing\.json:1:[0-9]+: ' err.txt
# the schema is checked: a chip must be an integer
printf '{"schema": "calculet-graph/v1", "queues": [{"id": "A", "chip": "zero"}], "ops": []}' > badchip.json
expect_exit schema-violation 2 dag-check badchip.json
expect_grep schema-violation-msg '^dag-check: badchip\.json:1:[0-9]+: .*chip' err.txt
# YAML is the same tree
cat > war.yaml <<'Y'
schema: calculet-graph/v1
queues:
  - {id: A, chip: 0}
  - {id: B, chip: 0}
buffers:
  - {id: t, chip: 0, space: sram, address: 0, size: 256}
ops:
  - {id: p, queue: A, writes: [{buffer: t, offset: 0, size: 256}]}
  - {id: s, queue: A, kind: signal, event: e}
  - {id: w, queue: B, kind: wait, event: e}
  - {id: r, queue: B, reads: [{buffer: t, offset: 0, size: 256}]}
  - {id: p2, queue: A, writes: [{buffer: t, offset: 128, size: 128}]}
  - {id: p3, queue: A, writes: [{buffer: nope, offset: 0, size: 1}]}
Y
expect_exit yaml-unknown-buffer 2 dag-check war.yaml
expect_grep yaml-unknown-buffer-msg '^dag-check: war\.yaml:13:[0-9]+: op "p3": unknown buffer "nope"$' err.txt
sed -i '$d' war.yaml
expect_exit yaml-war 1 dag-check war.yaml
expect_grep yaml-war-row 'WAR +r +B +p2 +A +t +\[128, 256\)' out.txt

# a removed barrier exposes a RAW across chips
expect_exit base-clean 0 dag-check "$G/raw-across-chips-base.json"
expect_grep base-verdict '^verdict: PASS' out.txt
expect_exit cand-race 1 dag-check --json cand.json --junit cand.xml "$G/raw-across-chips-cand.json"
expect_grep cand-table 'RAW +d2d0 +c0\.d2d +add1 +c1\.compute +a1 +\[0, 4096\)' out.txt
jcheck cand-json 'r["schema"]=="calculet-dag-report/v1" and r["verdict"]=="fail" and len(r["races"])==1 and r["races"][0]["kind"]=="RAW" and r["races"][0]["a"]=="d2d0" and r["races"][0]["b"]=="add1" and r["races"][0]["queue_a"]=="c0.d2d" and r["races"][0]["queue_b"]=="c1.compute" and r["races"][0]["range"]==[0,4096]' cand.json
expect_grep cand-junit '<failure' cand.xml
expect_exit baseline 1 dag-check --json bl.json --baseline "$G/raw-across-chips-base.json" "$G/raw-across-chips-cand.json"
expect_grep baseline-removed 'REMOVED SYNCS \(1\): bar0' out.txt
expect_grep baseline-exposed 'new: bar0' out.txt
jcheck baseline-json 'r["removed_syncs"]==["bar0"] and r["races"][0]["exposed_by"]==["bar0"] and r["races"][0]["new"] is True and r["new_races"]==1' bl.json
# the other way round nothing is new: adding a barrier exposes nothing
expect_exit baseline-reverse 0 dag-check --baseline "$G/raw-across-chips-cand.json" "$G/raw-across-chips-base.json"
expect_grep baseline-reverse-added 'ADDED SYNCS \(1\): bar0' out.txt

# WAR on a reused buffer: only the overlapping half
expect_exit war 1 dag-check "$G/war-reused-buffer.json"
expect_grep war-row 'WAR +r +B +p2 +A +t +\[128, 256\)' out.txt
# WAW via two aliasing buffers, and the memory plan says so too
expect_exit waw 1 dag-check --json waw.json "$G/waw-aliasing-buffers.json"
expect_grep waw-row 'WAW +wa +A +wb +B +x/y +\[32, 64\)' out.txt
jcheck waw-json 'r["races"][0]["buffer"]=="x" and r["races"][0]["buffer_b"]=="y" and r["races"][0]["address"]==[32,64] and len(r["aliases"])==1 and r["aliases"][0]["bytes"]==32' waw.json
# a cycle through two waits is a deadlock
expect_exit cycle 1 dag-check --json cyc.json "$G/cycle-two-waits.json"
expect_grep cycle-line 'CYCLE \(deadlock\): wa -> sa -> wb -> sb -> wa' out.txt
jcheck cycle-json 'r["cycles"]==[["wa","sa","wb","sb"]]' cyc.json
# a transitively redundant wait, and sets that are and are not safe
expect_exit redundant 0 dag-check --redundant --json red.json "$G/redundant-wait.json"
expect_grep redundant-w1 '^  w1 +wait +implied by other syncs' out.txt
expect_grep redundant-w2 '^  w2 +wait +orders no conflicting pair' out.txt
expect_grep redundant-note 'not safe to remove all at once' out.txt
jcheck redundant-json '[(s["sync"],s["reason"]) for s in r["redundant_syncs"]]==[("w1","implied"),("w2","orders-no-conflict")]' red.json
expect_exit remove-one 0 dag-check --remove w1 "$G/redundant-wait.json"
expect_exit remove-both 1 dag-check --json rm.json --remove w1,w2 "$G/redundant-wait.json"
jcheck remove-both-json 'r["mode"]=="remove" and r["new_races"]==1 and sorted(r["races"][0]["exposed_by"])==["w1","w2"]' rm.json
expect_exit remove-unknown 2 dag-check --remove nope "$G/redundant-wait.json"
expect_grep remove-unknown-msg '^dag-check: --remove nope: no such op' err.txt
expect_exit remove-compute 2 dag-check --remove p "$G/redundant-wait.json"
# in-place fusion: safe, and unsafe (a reader on another queue still uses the input)
expect_exit inplace-safe 0 dag-check "$G/inplace-safe.json"
expect_exit inplace-unsafe 1 dag-check --json ip.json "$G/inplace-unsafe.json"
jcheck inplace-unsafe-json 'r["aliases"][0]["a"]=="act" and r["aliases"][0]["b"]=="res" and r["aliases"][0]["inplace"] is True and r["races"][0]["kind"]=="WAR"' ip.json

# outputs: never overwritten without --force, never half-written
echo keep > taken.json
expect_exit no-overwrite 2 dag-check --json taken.json "$G/war-reused-buffer.json"
expect_grep no-overwrite-kept '^keep$' taken.json
expect_exit overwrite-force 1 dag-check --force --json taken.json "$G/war-reused-buffer.json"
jcheck overwrite-force-json 'r["verdict"]=="fail"' taken.json
expect_exit json-stdout 1 dag-check --json - "$G/war-reused-buffer.json"
expect_grep json-stdout-doc '"schema": "calculet-dag-report/v1"' out.txt

# --all lists every pair: three writers of one range on three queues make three WAW pairs
cat > three.json <<'G3'
{"schema": "calculet-graph/v1",
 "queues": [{"id": "A", "chip": 0}, {"id": "B", "chip": 0}, {"id": "C", "chip": 0}],
 "buffers": [{"id": "b", "chip": 0, "space": "ddr", "address": 0, "size": 8}],
 "ops": [{"id": "a", "queue": "A", "writes": [{"buffer": "b", "offset": 0, "size": 8}]},
         {"id": "bb", "queue": "B", "writes": [{"buffer": "b", "offset": 0, "size": 8}]},
         {"id": "c", "queue": "C", "writes": [{"buffer": "b", "offset": 0, "size": 8}]}]}
G3
expect_exit all-pairs 1 dag-check --all --json all.json three.json
jcheck all-pairs-json 'sorted((x["a"],x["b"]) for x in r["races"])==[("a","bb"),("a","c"),("bb","c")]' all.json

# generated realistic graphs: clean, and with one dropped wait
gen-graph --ops 3000 -o real.json 2> gen.txt
expect_grep gen-counts 'ops, [0-9]+ accesses' gen.txt
expect_exit real-clean 0 dag-check --json real-doc.json real.json
GOLDEN_GRAPH_STREAM_BYTES=0 expect_exit real-clean-stream 0 dag-check --json real-stream.json real.json
if cmp -s real-doc.json real-stream.json; then ok stream-same-report; else notok stream-same-report; fi
# the streaming loader's fast path for plain ops and buffers against jansson for every element
GOLDEN_GRAPH_STREAM_BYTES=0 GOLDEN_GRAPH_FAST_OPS=0 expect_exit real-clean-slow 0 dag-check --json real-slow.json real.json
if cmp -s real-slow.json real-stream.json; then ok fast-path-same-report; else notok fast-path-same-report; fi
# escapes and a float send single elements down the slow path, mid-stream
sed -e 's/"id": "p2"/"id": "p\\u0032"/' \
    -e 's/"offset": 128, "size": 128/"offset": 128, "size": 128.0/' "$G/war-reused-buffer.json" > mixed.json
expect_exit mixed-doc 2 dag-check mixed.json
GOLDEN_GRAPH_STREAM_BYTES=0 expect_exit mixed-stream 2 dag-check mixed.json
expect_grep mixed-stream-msg 'mixed\.json:[0-9]+:[0-9]+: "size" must be a non-negative integer' err.txt
sed -i 's/"size": 128.0/"size": 128/' mixed.json
expect_exit mixed-doc-ok 1 dag-check --json mixed-doc.json mixed.json
GOLDEN_GRAPH_STREAM_BYTES=0 expect_exit mixed-stream-ok 1 dag-check --json mixed-stream.json mixed.json
if cmp -s mixed-doc.json mixed-stream.json; then ok mixed-same-report; else notok mixed-same-report; fi
jcheck mixed-race 'r["races"][0]["b"]=="p2" and r["races"][0]["kind"]=="WAR"' mixed-stream.json
gen-graph --ops 3000 --race -o real-race.json 2> /dev/null
expect_exit real-race 1 dag-check --json rr.json --baseline real.json real-race.json
jcheck real-race-json 'r["removed_syncs"]==["s0l24c0.w3"] and all(x["exposed_by"]==["s0l24c0.w3"] for x in r["races"]) and {x["kind"] for x in r["races"]}=={"RAW"}' rr.json

# diff: statistics, labelled structural
expect_exit diff 0 dag-check diff --json diff.json real.json real-race.json
expect_grep diff-structural 'data_size sum \(structural, not traffic\)' out.txt
expect_grep diff-wait 'syncs: wait +[0-9]+ +[0-9]+ +-1' out.txt
jcheck diff-json 'r["mode"]=="diff" and r["diff"]["delta"]["syncs"]["wait"]==-1 and "never measured traffic" in r["diff"]["note"]' diff.json
expect_exit diff-usage 2 dag-check diff real.json

# the walk-through's fix: a signal after the copy and a wait before the consumer instead
expect_exit baseline-fixed 0 dag-check --baseline "$G/raw-across-chips-base.json" "$G/raw-across-chips-fixed.json"
expect_grep baseline-fixed-removed 'REMOVED SYNCS \(1\): bar0' out.txt
expect_grep baseline-fixed-added 'ADDED SYNCS \(1\): w1' out.txt

# a misspelt key is an error with its position on both loaders (it used to drop the access
# and pass a real race)
sed 's/"reads"/"raeds"/' "$G/raw-across-chips-cand.json" > raeds.json
expect_exit raeds-doc 2 dag-check raeds.json
expect_grep raeds-doc-msg 'raeds\.json:[0-9]+:[0-9]+: .*"raeds"' err.txt
GOLDEN_GRAPH_STREAM_BYTES=0 expect_exit raeds-stream 2 dag-check raeds.json
expect_grep raeds-stream-msg 'raeds\.json:[0-9]+:[0-9]+: an op: unknown key "raeds"' err.txt
GOLDEN_GRAPH_STREAM_BYTES=0 GOLDEN_GRAPH_FAST_OPS=0 expect_exit raeds-slow 2 dag-check raeds.json

# a misspelt or unknown top-level key is an error with its place on both loaders, JSON and
# YAML: "opps" beside "ops" would otherwise drop its ops (here the op that races) and pass
python3 - "$G/raw-across-chips-cand.json" opps.json opps.yaml <<'PY'
import json, sys
g = json.load(open(sys.argv[1]))
keep = g["ops"][:1]
g["opps"] = g["ops"][1:]
g["ops"] = keep
t = json.dumps(g, indent=1)
open(sys.argv[2], "w").write(t + "\n")
# YAML: the same tree in flow style (JSON is YAML 1.2), with the key in block style
lines = ["%s: %s" % (k, json.dumps(v)) for k, v in g.items()]
open(sys.argv[3], "w").write("\n".join(lines) + "\n")
PY
line=$(grep -n '"opps"' opps.json | cut -d: -f1)
expect_exit opps-doc 2 dag-check opps.json
expect_lines opps-doc-one-line 1 err.txt
expect_grep opps-doc-msg "^dag-check: opps\.json:$line:[0-9]+: .*opps" err.txt
GOLDEN_GRAPH_STREAM_BYTES=0 expect_exit opps-stream 2 dag-check opps.json
expect_grep opps-stream-msg "^dag-check: opps\.json:$line:[0-9]+: the graph: unknown key \"opps\"" err.txt
GOLDEN_GRAPH_STREAM_BYTES=0 GOLDEN_GRAPH_FAST_OPS=0 expect_exit opps-slow 2 dag-check opps.json
expect_exit opps-yaml 2 dag-check opps.yaml
expect_grep opps-yaml-msg '^dag-check: opps\.yaml:5:[0-9]+: .*opps' err.txt
expect_exit opps-yaml-stdin 2 sh -c 'dag-check - < opps.yaml'
# what would have been checked without the refusal: the first op alone, race-free
python3 -c 'import json,sys; g=json.load(open("opps.json")); del g["opps"]; print(json.dumps(g))' > dropped.json
expect_exit opps-dropped-would-pass 0 dag-check dropped.json
expect_exit opps-whole-graph-races 1 dag-check "$G/raw-across-chips-cand.json"
sed 's/"opps"/"ops_note"/' opps.json > note.json
GOLDEN_GRAPH_STREAM_BYTES=0 expect_exit unknown-top-stream 2 dag-check note.json
expect_exit unknown-top-doc 2 dag-check note.json
expect_grep unknown-top-doc-msg 'ops_note' err.txt

# a graph of 32 MiB and more that shrinks while it is read: a verdict or exit 2, never SIGBUS
# (the file is read, not mapped); padded with white space (an unknown key would be refused)
python3 - "$G/raw-across-chips-base.json" big.json <<'PY'
import sys
t = open(sys.argv[1]).read().rstrip().rstrip('}')
open(sys.argv[2], 'w').write(t + '\n' + ' ' * (40 << 20) + '}\n')
PY
crash=0
for i in 1 2 3; do
    cp big.json shrink.json
    dag-check shrink.json > /dev/null 2>&1 &
    pid=$!
    truncate -s 1000 shrink.json
    wait $pid
    rc=$?
    [ $rc -le 2 ] || crash=$rc
done
if [ $crash -eq 0 ]; then ok shrink-no-sigbus; else notok shrink-no-sigbus "exit $crash"; fi
expect_exit big-whole 0 dag-check big.json
rm -f big.json shrink.json
