#!/bin/sh
# What no speed work on dag-check (the loader, the interval map, the sweep) may change: the
# races of a graph, against a python oracle written from contracts.md section 5 and
# docs/dag-check.md (happens-before = queue program order + `after` + signal -> wait +
# barriers; two accesses conflict when their bytes [address + offset, + size) overlap on one
# chip and space and one writes; a conflicting pair on different queues that happens-before
# does not order is a race; `a` is the op first in the file, RAW when a writes and b reads).
# `--all` must list exactly the oracle's pairs; the default list only true races and every
# racing byte. Graphs: ids that differ in their last byte after a common prefix of 1,000
# bytes; `\u0061` against `a` (one id per JSON: a duplicate, or a reference that resolves);
# a range re-read and re-written exactly; adjacent ranges (no race) and ranges overlapping by
# one byte; empty ranges; aliasing buffers, another chip, another space; barriers; and 40
# seeded random graphs. Every report is the same bytes at -j 1 and -j 2 and on the three
# loading paths (streamed, GOLDEN_GRAPH_STREAM_BYTES=1G: the tree path, GOLDEN_GRAPH_FAST_OPS=0).
# Then --redundant and --remove against the same oracle under the documented removal model.
. "$GOLDEN_ROOT/tests/e2e/lib.sh"
FAILED=0
notok() { echo "not ok $1${2:+: $2}"; FAILED=1; }
PY=/usr/bin/python3
if ! $PY -c 'import json' 2>/dev/null; then echo "ok invariance-dag-check # skip no /usr/bin/python3"; exit 0; fi

cat > oracle.py <<'EOF'
# oracle.py GRAPH.json REPORT_ALL.json REPORT_DEFAULT.json: races by contracts section 5's
# definition against dag-check's --all list (exact) and its default list (covers every racing byte)
import json, sys, collections
g = json.load(open(sys.argv[1]))
ops = g["ops"]; idx = {o["id"]: i for i, o in enumerate(ops)}
qchip = {q["id"]: q["chip"] for q in g["queues"]}
buf = {b["id"]: b for b in g["buffers"]}
succ = collections.defaultdict(set); last = {}
sig = {o["event"]: i for i, o in enumerate(ops) if o.get("kind") == "signal"}
for i, o in enumerate(ops):
    qs = o["queues"] if o.get("kind") == "barrier" else [o["queue"]]
    for q in qs:
        if q in last: succ[last[q]].add(i)
        last[q] = i
    for p in o.get("after", []): succ[idx[p]].add(i)
    if o.get("kind") == "wait": succ[sig[o["event"]]].add(i)
# reachability (edges all go forward in file order in these graphs; check)
for u in succ:
    for v in succ[u]: assert v > u, "edge backwards"
reach = [0] * len(ops)
for u in range(len(ops) - 1, -1, -1):
    m = 0
    for v in succ[u]: m |= (1 << v) | reach[v]
    reach[u] = m
def before(u, v): return (reach[u] >> v) & 1
acc = []
for i, o in enumerate(ops):
    if o.get("kind", "compute") != "compute": continue
    for lst in ("reads", "writes"):
        for k, a in enumerate(o.get(lst, [])):
            b = buf[a["buffer"]]; off = a.get("offset", 0); size = a.get("size", b["size"] - off)
            lo = b["address"] + off
            acc.append((i, lst, k, b["chip"], b["space"], lo, lo + size, a["buffer"], off))
races = collections.Counter(); racing = collections.defaultdict(set)
for x in range(len(acc)):
    for y in range(len(acc)):
        A, B = acc[x], acc[y]
        if A[0] >= B[0]: continue
        if ops[A[0]]["queue"] == ops[B[0]]["queue"]: continue
        if A[3] != B[3] or A[4] != B[4]: continue
        lo, hi = max(A[5], B[5]), min(A[6], B[6])
        if lo >= hi or (A[1] == "reads" and B[1] == "reads"): continue
        if before(A[0], B[0]) or before(B[0], A[0]): continue
        kind = "WAW" if A[1] == B[1] else ("RAW" if A[1] == "writes" else "WAR")
        races[(ops[A[0]]["id"], ops[B[0]]["id"], kind, A[7], lo, hi, A[1], A[2], B[1], B[2])] += 1
        for z in range(lo, hi): racing[(A[3], A[4])].add(z)
bad = []
rall = json.load(open(sys.argv[2])); rdef = json.load(open(sys.argv[3]))
got = collections.Counter((r["a"], r["b"], r["kind"], r["buffer"], r["address"][0], r["address"][1],
    r["access_a"]["list"], r["access_a"]["index"], r["access_b"]["list"], r["access_b"]["index"]) for r in rall["races"])
if got != races:
    bad.append("--all: extra %s; missing %s" % (sorted(got - races)[:2], sorted(races - got)[:2]))
# the verdict: fail with a race; pass without one unless the memory plan has an alias
want_verdict = "fail" if races else "pass"
for name, r in (("--all", rall), ("default", rdef)):
    if r.get("cycles"): bad.append("%s: a cycle in a graph whose edges all go forward" % name)
    if r["verdict"] != want_verdict and not (r.get("aliases") and not races):
        bad.append("%s: verdict %s, oracle %s" % (name, r["verdict"], want_verdict))
cov = collections.defaultdict(set)
for r in rdef["races"]:
    k = (r["a"], r["b"], r["kind"], r["buffer"], r["address"][0], r["address"][1],
         r["access_a"]["list"], r["access_a"]["index"], r["access_b"]["list"], r["access_b"]["index"])
    if k not in races: bad.append("default: %s is no race" % (k,))
    ch = buf[r["buffer"]]["chip"]; sp = buf[r["buffer"]]["space"]
    cov[(ch, sp)].update(range(r["address"][0], r["address"][1]))
for key in set(racing) | set(cov):
    if racing[key] != cov[key]:
        miss = sorted(racing[key] - cov[key])
        bad.append("default: racing bytes %s not covered (%d bytes)" % (miss[:3], len(miss)) if miss else "default: covers non-racing bytes")
print("; ".join(bad[:4]) if bad else "%d races" % sum(races.values()))
sys.exit(1 if bad else 0)
EOF

# check NAME GRAPH [EXPECTED-RACES]: every mode and path the same bytes, then the oracle;
# EXPECTED-RACES (optional) "a b KIND lo hi;..." worked out by hand, against --all
check() {
    _n=$1; _g=$2
    rm -f def.*.json all.*.json
    for m in def all; do
        _o=""; [ $m = all ] && _o=--all
        dag-check $_o -j 1 --json $m.j1.json "$_g" > $m.j1.txt 2>&1; echo "exit $?" >> $m.j1.txt
        dag-check $_o -j 2 --json $m.j2.json "$_g" > $m.j2.txt 2>&1; echo "exit $?" >> $m.j2.txt
        GOLDEN_GRAPH_STREAM_BYTES=1G dag-check $_o -j 2 --json $m.tree.json "$_g" > $m.tree.txt 2>&1; echo "exit $?" >> $m.tree.txt
        GOLDEN_GRAPH_FAST_OPS=0 dag-check $_o -j 2 --json $m.slow.json "$_g" > $m.slow.txt 2>&1; echo "exit $?" >> $m.slow.txt
        for v in j2 tree slow; do
            if ! cmp -s $m.j1.json $m.$v.json || ! cmp -s $m.j1.txt $m.$v.txt; then
                notok "$_n: ${_o:-default} j1 = $v" "$(diff $m.j1.txt $m.$v.txt | head -3 | tr '\n' ' ') $(diff $m.j1.json $m.$v.json 2>&1 | head -4 | tr '\n' ' ')"
                return
            fi
        done
    done
    if ! grep -q '^exit [01]$' all.j1.txt; then notok "$_n: ran" "$(tail -3 all.j1.txt | tr '\n' ' ')"; return; fi
    if r=$($PY oracle.py "$_g" all.j1.json def.j1.json 2>&1); then ok "$_n: oracle, -j and loading paths agree ($r)"
    else notok "$_n: oracle" "$r"; fi
    if [ $# -ge 3 ]; then
        _got=$($PY -c '
import json, sys
print(";".join(sorted("%s %s %s %d %d" % (r["a"], r["b"], r["kind"], r["address"][0], r["address"][1]) for r in json.load(open(sys.argv[1]))["races"])))' all.j1.json)
        _want=$(printf '%s' "$3" | tr ';' '\n' | sort | tr '\n' ';' | sed 's/;$//')
        if [ "$_got" = "$_want" ]; then ok "$_n: races worked out by hand"; else notok "$_n: races worked out by hand" "got '$_got', wanted '$_want'"; fi
    fi
}
# refused NAME GRAPH: exit 2 on every path (a structure error), one line naming the file
refused() {
    _n=$1; _g=$2; _bad=""
    for e in "" "GOLDEN_GRAPH_STREAM_BYTES=1G" "GOLDEN_GRAPH_FAST_OPS=0"; do
        env $e dag-check --json x.json "$_g" > x.out 2> x.err; _rc=$?
        if [ $_rc -ne 2 ] || ! grep -q "$_g" x.err; then _bad="$_bad [${e:-streamed}: exit $_rc: $(head -c 200 x.err)]"; fi
        rm -f x.json
    done
    if [ -z "$_bad" ]; then ok "$_n: exit 2 on every loading path"; else notok "$_n" "$_bad"; fi
}

H='{"schema":"calculet-graph/v1","queues":[{"id":"q0","chip":0},{"id":"q1","chip":0},{"id":"q2","chip":0},{"id":"q3","chip":1}],"buffers":[{"id":"x","chip":0,"space":"ddr","address":0,"size":256}'
# exact re-read and re-write: w1 -> (signal, wait) -> r1 ordered; w2 on q2 ordered with nothing
cat > exact.json <<EOF
$H],"ops":[
 {"id":"w1","queue":"q0","writes":[{"buffer":"x","offset":0,"size":64}]},
 {"id":"s1","queue":"q0","kind":"signal","event":"e1"},
 {"id":"t1","queue":"q1","kind":"wait","event":"e1"},
 {"id":"r1","queue":"q1","reads":[{"buffer":"x","offset":0,"size":64}]},
 {"id":"w2","queue":"q2","writes":[{"buffer":"x","offset":0,"size":64}]},
 {"id":"r2","queue":"q0","reads":[{"buffer":"x","offset":0,"size":64}]},
 {"id":"w3","queue":"q1","writes":[{"buffer":"x","offset":0,"size":64}]}]}
EOF
check "exact ranges" exact.json "w1 w2 WAW 0 64;r1 w2 WAR 0 64;w2 r2 RAW 0 64;w2 w3 WAW 0 64;r2 w3 WAR 0 64"
# adjacent ranges do not race; one byte of overlap does; an empty range touches nothing;
# no offset starts at 0, no size runs to the end
cat > adjacent.json <<EOF
$H],"ops":[
 {"id":"a","queue":"q0","writes":[{"buffer":"x","offset":0,"size":64}]},
 {"id":"b","queue":"q1","writes":[{"buffer":"x","offset":64,"size":64}]},
 {"id":"c","queue":"q1","reads":[{"buffer":"x","offset":128,"size":64}]},
 {"id":"d","queue":"q0","writes":[{"buffer":"x","offset":191,"size":65}]},
 {"id":"e","queue":"q2","writes":[{"buffer":"x","offset":10,"size":0}]},
 {"id":"f","queue":"q2","reads":[{"buffer":"x","offset":255}]},
 {"id":"g","queue":"q2","reads":[{"buffer":"x","size":1}]}]}
EOF
check "adjacent and one-byte overlaps" adjacent.json "c d WAR 191 192;d f RAW 255 256;a g RAW 0 1"
# aliasing buffers (same chip and space, overlapping addresses) race through each other; the
# same addresses on another chip or in another space do not
cat > alias.json <<EOF
{"schema":"calculet-graph/v1","queues":[{"id":"q0","chip":0},{"id":"q1","chip":0},{"id":"q3","chip":1}],
 "buffers":[{"id":"y","chip":0,"space":"ddr","address":1000,"size":100},{"id":"z","chip":0,"space":"ddr","address":1050,"size":100},
            {"id":"w","chip":1,"space":"ddr","address":1000,"size":100},{"id":"v","chip":0,"space":"sram","address":1000,"size":100}],
 "ops":[
 {"id":"a","queue":"q0","writes":[{"buffer":"y","offset":60,"size":40}]},
 {"id":"b","queue":"q1","reads":[{"buffer":"z","offset":0,"size":20}]},
 {"id":"c","queue":"q3","writes":[{"buffer":"w","offset":0,"size":100}]},
 {"id":"d","queue":"q1","writes":[{"buffer":"v","offset":0,"size":100}]}]}
EOF
check "aliasing buffers, other chip, other space" alias.json "a b RAW 1060 1070"
# a barrier over q0 and q1 orders them, not q2
cat > barrier.json <<EOF
$H],"ops":[
 {"id":"a","queue":"q0","writes":[{"buffer":"x","offset":0,"size":32}]},
 {"id":"bar","kind":"barrier","queues":["q0","q1"]},
 {"id":"b","queue":"q1","reads":[{"buffer":"x","offset":0,"size":32}]},
 {"id":"c","queue":"q2","reads":[{"buffer":"x","offset":16,"size":32}]},
 {"id":"d","queue":"q1","writes":[{"buffer":"x","offset":40,"size":8}],"after":["c"]}]}
EOF
check "barrier" barrier.json "a c RAW 16 32"
# ids of 1,000 bytes and more that differ in the last byte only
$PY - <<'EOF'
import json
P = "p" * 1000; Q = "q" * 1000
g = {"schema": "calculet-graph/v1",
     "queues": [{"id": Q + "a", "chip": 0}, {"id": Q + "b", "chip": 0}],
     "buffers": [{"id": P + "x", "chip": 0, "space": "ddr", "address": 0, "size": 64},
                 {"id": P + "y", "chip": 0, "space": "ddr", "address": 64, "size": 64}],
     "ops": [{"id": P + "1", "queue": Q + "a", "writes": [{"buffer": P + "x", "offset": 0, "size": 8}]},
             {"id": P + "2", "queue": Q + "b", "reads": [{"buffer": P + "x", "offset": 4, "size": 8}]},
             {"id": P + "3", "queue": Q + "b", "kind": "signal", "event": P + "e"},
             {"id": P + "4", "queue": Q + "a", "kind": "wait", "event": P + "e"},
             {"id": P + "5", "queue": Q + "a", "writes": [{"buffer": P + "y", "offset": 0, "size": 64}]},
             {"id": P + "6", "queue": Q + "b", "reads": [{"buffer": P + "y"}], "after": [P + "2"]}]}
open("long.json", "w").write(json.dumps(g))
g["ops"][5]["after"] = [P + "5"]
open("long2.json", "w").write(json.dumps(g))
# the same ids, the last byte of every reference escaped (\u0031 for 1 ...): one graph per JSON
s = json.dumps(g)
for c in "123456xye": s = s.replace('"%s%s"' % (P, c), '"%s\\u%04x"' % (P, ord(c)))
open("long2esc.json", "w").write(s)
# two ops whose ids differ only in how the last byte is written: a duplicate
d = json.loads(json.dumps(g)); d["ops"].append({"id": P + "x7", "queue": Q + "a"})
t = json.dumps(d).replace('"%sx7"' % P, '"%s\\u0078\\u0037"' % P)
d["ops"].append({"id": P + "x7", "queue": Q + "b"})
open("longdup.json", "w").write(json.dumps(d).replace('"%sx7"}]}' % P, '"%s\\u0078\\u0037"}]}' % P))
EOF
P1000=$($PY -c 'print("p" * 1000)')
check "ids of 1,000 bytes, last byte differs" long.json "${P1000}1 ${P1000}2 RAW 4 8;${P1000}5 ${P1000}6 RAW 64 128"
check "ids of 1,000 bytes, ordered through after" long2.json "${P1000}1 ${P1000}2 RAW 4 8"
cp all.j1.json long2.all.json
check "escaped last bytes: the same graph" long2esc.json "${P1000}1 ${P1000}2 RAW 4 8"
if $PY -c '
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:])
a.pop("graph"); b.pop("graph"); sys.exit(0 if a == b else 1)' long2.all.json all.j1.json
then ok "escaped last bytes: the report of the plain graph"; else notok "escaped last bytes: the report of the plain graph" "$(diff long2.all.json all.j1.json | head -4 | cut -c1-200)"; fi
refused "an id written once plain and once escaped: a duplicate" longdup.json
# \u0061 is a: a duplicate op id; a buffer, queue, event and after written escaped resolve
cat > dupesc.json <<'EOF'
{"schema":"calculet-graph/v1","queues":[{"id":"q0","chip":0}],"buffers":[],"ops":[{"id":"a","queue":"q0"},{"id":"\u0061","queue":"q0"}]}
EOF
refused '"\u0061" and "a": one id' dupesc.json
printf '%s\n' '{"schema":"calculet-graph/v1","queues":[{"id":"q0","chip":0}],"buffers":[],"ops":[{"id":"\u00e9","queue":"q0"},{"id":"é","queue":"q0"}]}' > dupe9.json
refused '"\u00e9" and a raw é: one id' dupe9.json
printf '%s\n' '{"schema":"calculet-graph/v1","queues":[{"id":"q0","chip":0},{"id":"q0","chip":1}],"buffers":[],"ops":[]}' > dupq.json
refused "a queue listed twice" dupq.json
cat > escres.json <<'EOF'
{"schema":"calculet-graph/v1","queues":[{"id":"q0","chip":0},{"id":"q\u0031","chip":0}],
 "buffers":[{"id":"x","chip":0,"space":"ddr","address":0,"size":16}],
 "ops":[{"id":"a","queue":"\u0071\u0030","writes":[{"buffer":"\u0078","offset":0,"size":16}]},
        {"id":"s","queue":"q0","kind":"signal","event":"\u0065"},
        {"id":"t","queue":"q1","kind":"wait","event":"e"},
        {"id":"b","queue":"q1","reads":[{"buffer":"x","offset":0,"size":16}]},
        {"id":"c","queue":"q1","writes":[{"buffer":"x","offset":8,"size":8}]},
        {"id":"d","queue":"q0","reads":[{"buffer":"x","offset":12,"size":1}],"after":["\u0063"]},
        {"id":"A","queue":"q0","writes":[{"buffer":"x","offset":0,"size":1}]},
        {"id":"a ","queue":"q1","reads":[{"buffer":"x","offset":0,"size":1}]}]}
EOF
# b happens before A (b -> c on q1, c -> d by after, d -> A on q0): only A and "a " race
check "escaped references resolve; near ids stay apart" escres.json "A a  RAW 0 1"

# 40 seeded random graphs (forward edges only: no cycle), ranges often exactly equal or adjacent
$PY - <<'EOF'
import json, random
for n in range(40):
    r = random.Random(20261203 + n)
    nq = r.randint(2, 4); qs = [{"id": "q%d" % i, "chip": r.randint(0, 1) if n % 3 == 0 else 0} for i in range(nq)]
    bufs = []; addr = {}
    for i in range(r.randint(1, 4)):
        chip, space = r.choice([(0, "ddr"), (0, "ddr"), (0, "sram"), (1, "ddr")]); size = r.choice([16, 32, 64, 100])
        a = addr.get((chip, space), 0)
        if n % 5 == 4 and a and r.random() < 0.5: a -= r.randint(1, 8)   # an alias now and then
        bufs.append({"id": "b%d" % i, "chip": chip, "space": space, "address": a, "size": size}); addr[(chip, space)] = a + size
    ops = []; events = []; cut = [0, 4, 8, 16, 32, 64]
    for i in range(r.randint(4, 18)):
        k = r.random(); o = {"id": "o%d" % i}
        if k < 0.12 and ops:
            o.update(kind="signal", queue=r.choice(qs)["id"], event="e%d" % i); events.append("e%d" % i)
        elif k < 0.22 and events:
            o.update(kind="wait", queue=r.choice(qs)["id"], event=r.choice(events))
        elif k < 0.27 and nq > 1:
            o.update(kind="barrier", queues=sorted(r.sample([q["id"] for q in qs], r.randint(2, nq))))
        else:
            o["queue"] = r.choice(qs)["id"]
            for lst in ("reads", "writes"):
                acc = []
                for _ in range(r.choice([0, 1, 1, 2])):
                    b = r.choice(bufs); lo = r.choice([c for c in cut if c <= b["size"]])
                    if r.random() < 0.3: lo = r.randint(0, b["size"])
                    hi = r.choice([c for c in cut + [b["size"]] if lo <= c <= b["size"]] or [lo])
                    a = {"buffer": b["id"]}
                    if lo or r.random() < 0.5: a["offset"] = lo
                    if hi != b["size"] or r.random() < 0.5: a["size"] = hi - lo
                    acc.append(a)
                if acc: o[lst] = acc
        if ops and r.random() < 0.2:
            o["after"] = sorted(set(r.sample([p["id"] for p in ops], min(len(ops), r.randint(1, 2)))))
        ops.append(o)
    g = {"schema": "calculet-graph/v1", "queues": qs, "buffers": bufs, "ops": ops}
    open("rand%02d.json" % n, "w").write(json.dumps(g, indent=None if n % 2 else 1))
EOF
for g in rand*.json; do check "random ${g%.json}" "$g"; done
# 30 seeded graphs of producer -> sync -> consumer steps (a wait, a barrier, an after entry,
# both, a second wait for one signal): syncs that matter and syncs that do not
$PY - <<'EOF'
import json, random
for n in range(30):
    r = random.Random(777 + n)
    nq = r.randint(2, 4); qs = [{"id": "q%d" % i, "chip": 0} for i in range(nq)]
    bufs = [{"id": "b%d" % i, "chip": 0, "space": "ddr", "address": 128 * i, "size": 128} for i in range(r.randint(1, 3))]
    ops = []; ev = [0]
    def add(o): o["id"] = "o%d" % len(ops); ops.append(o); return o["id"]
    def rng():
        lo = r.choice([0, 0, 32, 64, 96]); return lo, r.choice([h for h in (32, 64, 96, 128) if h > lo])
    for step in range(r.randint(3, 7)):
        p, c = r.sample([q["id"] for q in qs], 2); b = r.choice(bufs)["id"]
        lo, hi = rng()
        w = add({"queue": p, "writes": [{"buffer": b, "offset": lo, "size": hi - lo}]})
        how = r.choice(["wait", "wait", "barrier", "after", "wait+after"])
        after = []
        if "wait" in how:
            e = "e%d" % ev[0]; ev[0] += 1
            add({"queue": p, "kind": "signal", "event": e}); add({"queue": c, "kind": "wait", "event": e})
            if r.random() < 0.3: add({"queue": c, "kind": "wait", "event": e})   # a second wait: one of the two is idle
        if how == "barrier": add({"kind": "barrier", "queues": sorted({p, c} | ({r.choice(qs)["id"]} if r.random() < 0.5 else set()))})
        if "after" in how: after = [w]
        lo2, hi2 = rng()
        o = {"queue": c, r.choice(["reads", "reads", "writes"]): [{"buffer": b, "offset": lo2, "size": hi2 - lo2}]}
        if after: o["after"] = after
        add(o)
    open("sync%02d.json" % n, "w").write(json.dumps({"schema": "calculet-graph/v1", "queues": qs, "buffers": bufs, "ops": ops}))
EOF
for g in sync*.json; do check "synced ${g%.json}" "$g"; done

# --redundant and --remove against the removal model (docs/dag-check.md "One removal model"):
# every listed sync, removed alone, adds no race ("implied" ones change no ordering at all);
# every sync whose removal alone adds no race is listed; --remove of a seeded set of 1 to 3
# syncs lists only true races of the graph without them, every racing byte, every pair when the
# report says all_pairs, `new` exactly for the races the set exposed, exposed_by exactly the
# removed syncs on a path between the two ops; the same bytes at -j 1 and -j 2
cat > oracle2.py <<'EOF'
# oracle2.py redundant GRAPH REPORT | remove|baseline GRAPH REPORT SYNC,...: --redundant, --remove
# and --baseline GRAPH CANDIDATE (the candidate: GRAPH without SYNC,...)
# against the removal model of docs/dag-check.md ("One removal model"): a wait is its
# signal -> wait edge, an `after` entry its edge, a barrier its node (its queues run straight
# on; its `after` edges both ways go too)
import json, sys, collections
mode, gpath, rpath = sys.argv[1:4]
g = json.load(open(gpath)); ops = g["ops"]; idx = {o["id"]: i for i, o in enumerate(ops)}
buf = {b["id"]: b for b in g["buffers"]}
sig = {o["event"]: i for i, o in enumerate(ops) if o.get("kind") == "signal"}
def reach_of(removed):  # removed: set of ("after", op, pred) / ("wait", op) / ("barrier", op)
    gone = {idx[s[1]] for s in removed if s[0] == "barrier"}
    succ = collections.defaultdict(set); last = {}
    for i, o in enumerate(ops):
        if i in gone: continue
        qs = o["queues"] if o.get("kind") == "barrier" else [o["queue"]]
        for q in qs:
            if q in last: succ[last[q]].add(i)
            last[q] = i
        for p in o.get("after", []):
            if idx[p] not in gone and ("after", o["id"], p) not in removed: succ[idx[p]].add(i)
        if o.get("kind") == "wait" and ("wait", o["id"]) not in removed: succ[sig[o["event"]]].add(i)
    reach = [0] * len(ops)
    for u in range(len(ops) - 1, -1, -1):
        m = 0
        for v in succ[u]: m |= (1 << v) | reach[v]
        reach[u] = m
    return reach, gone
acc = []
for i, o in enumerate(ops):
    if o.get("kind", "compute") != "compute": continue
    for lst in ("reads", "writes"):
        for k, a in enumerate(o.get(lst, [])):
            b = buf[a["buffer"]]; off = a.get("offset", 0); size = a.get("size", b["size"] - off); lo = b["address"] + off
            acc.append((i, lst, k, b["chip"], b["space"], lo, lo + size, a["buffer"]))
def races(reach):
    out = {}
    for A in acc:
        for B in acc:
            if A[0] >= B[0] or ops[A[0]]["queue"] == ops[B[0]]["queue"] or A[3:5] != B[3:5]: continue
            lo, hi = max(A[5], B[5]), min(A[6], B[6])
            if lo >= hi or (A[1] == "reads" and B[1] == "reads"): continue
            if (reach[A[0]] >> B[0]) & 1 or (reach[B[0]] >> A[0]) & 1: continue
            kind = "WAW" if A[1] == B[1] else ("RAW" if A[1] == "writes" else "WAR")
            out[(ops[A[0]]["id"], ops[B[0]]["id"], kind, lo, hi, A[1], A[2], B[1], B[2])] = (A[0], B[0])
    return out
def parse(s):
    if ":after:" in s: op, pred = s.split(":after:"); return ("after", op, pred)
    return (ops[idx[s]].get("kind"), s)
def key(r): return (r["a"], r["b"], r["kind"], r["address"][0], r["address"][1], r["access_a"]["list"], r["access_a"]["index"], r["access_b"]["list"], r["access_b"]["index"])
base_reach, _ = reach_of(set()); base_races = races(base_reach)
rep = json.load(open(rpath)); bad = []
def same_order(reach, gone):
    return all(((reach[u] >> v) & 1) == ((base_reach[u] >> v) & 1) for u in range(len(ops)) for v in range(len(ops)) if u not in gone and v not in gone)
if mode == "redundant":
    listed = {}
    for s in rep["redundant_syncs"]:
        t = parse(s["sync"]); listed[t] = s["reason"]
        if t[0] != s["kind"]: bad.append("%s: kind %s, the graph says %s" % (s["sync"], s["kind"], t[0]))
        reach, gone = reach_of({t})
        if s["reason"] == "implied" and not same_order(reach, gone): bad.append("%s: 'implied', yet removing it changes happens-before" % s["sync"])
        new = set(races(reach)) - set(base_races)
        if new: bad.append("%s (%s): removing it alone adds %d race(s), e.g. %s" % (s["sync"], s["reason"], len(new), sorted(new)[0][:5]))
    # every sync whose removal alone adds no race is listed
    allsyncs = [("wait", o["id"]) for o in ops if o.get("kind") == "wait"] + [("barrier", o["id"]) for o in ops if o.get("kind") == "barrier"] \
             + [("after", o["id"], p) for o in ops for p in o.get("after", [])]
    n_idle = 0
    for t in allsyncs:
        reach, gone = reach_of({t})
        if set(races(reach)) - set(base_races): continue
        n_idle += 1
        if t not in listed: bad.append("%s: removing it alone adds no race, not listed" % (":after:".join(t[1:]) if t[0] == "after" else t[1]))
    msg = "%d syncs, %d idle" % (len(allsyncs), n_idle)
else:
    rem = {parse(s) for s in sys.argv[4].split(",")}
    if mode == "baseline":  # a barrier deleted from the candidate takes its own `after` entries with it
        rem |= {("after", t[1], p) for t in list(rem) if t[0] == "barrier" for p in ops[idx[t[1]]].get("after", [])}
    reach, gone = reach_of(rem); now = races(reach)
    got = {key(r): r for r in rep["races"]}
    extra = set(got) - set(now)
    if extra: bad.append("races that are none: %s" % sorted(extra)[:2])
    if rep.get("all_pairs") and set(now) - set(got):  # the report says it lists every racing pair
        bad.append('"all_pairs": true, yet %d racing pair(s) missing, e.g. %s' % (len(set(now) - set(got)), sorted(set(now) - set(got))[0][:5]))
    miss = {z for k in now for z in range(k[3], k[4])} - {z for k in got for z in range(k[3], k[4])}
    if miss: bad.append("racing bytes not covered: %s" % sorted(miss)[:3])
    newset = set(now) - set(base_races)
    for k, r in got.items():
        if k not in now: continue
        if r.get("new") != (k in newset): bad.append("%s: new %r, oracle %r" % (k[:3], r.get("new"), k in newset))
        ex = {parse(s) for s in r.get("exposed_by", [])}
        if k in newset and (not ex or not ex <= rem): bad.append("%s: exposed_by %s, not a non-empty part of the removed set" % (k[:3], r.get("exposed_by")))
        if k in newset:  # exposed_by: the removed syncs that lay on a path between the two ops, in the graph with them
            a, b = now[k]
            def le(u, v): return u == v or (base_reach[u] >> v) & 1
            on = set()
            for t in rem:
                if t[0] == "after": u, v = idx[t[2]], idx[t[1]]
                elif t[0] == "wait": u, v = sig[ops[idx[t[1]]]["event"]], idx[t[1]]
                else: u = v = idx[t[1]]
                if le(a, u) and le(v, b): on.add(t)
            if ex != on: bad.append("%s: exposed_by %s, the removed syncs on a path between them %s" % (k[:3], sorted(ex), sorted(on)))
    want = "fail" if newset else "pass"
    if rep["verdict"] != want and not (rep.get("aliases") and not newset): bad.append("verdict %s, oracle %s (%d new races)" % (rep["verdict"], want, len(newset)))
    msg = "%d races, %d new" % (len(now), len(newset))
print("; ".join(bad[:4]) if bad else msg); sys.exit(1 if bad else 0)
EOF
for g in rand*.json sync*.json; do
    rm -f red1.json red2.json
    dag-check --redundant -j 1 --json red1.json "$g" > /dev/null 2>&1
    dag-check --redundant -j 2 --json red2.json "$g" > /dev/null 2>&1
    if ! cmp -s red1.json red2.json; then notok "--redundant ${g%.json}: -j 1 = -j 2" "$(diff red1.json red2.json | head -4 | tr '\n' ' ')"
    elif r=$($PY oracle2.py redundant "$g" red1.json 2>&1); then ok "--redundant ${g%.json} ($r)"
    else notok "--redundant ${g%.json}" "$r"; fi
    set=$($PY -c '
import json, sys, random
g = json.load(open(sys.argv[1])); r = random.Random(sys.argv[1])
s = [o["id"] for o in g["ops"] if o.get("kind") in ("wait", "barrier")] + ["%s:after:%s" % (o["id"], p) for o in g["ops"] for p in o.get("after", [])]
print(",".join(r.sample(s, min(len(s), r.randint(1, 3)))) if s else "")' "$g")
    [ -n "$set" ] || continue
    for a in "" --all; do
        rm -f rm1.json rm2.json
        dag-check $a --remove "$set" -j 1 --json rm1.json "$g" > /dev/null 2>&1
        dag-check $a --remove "$set" -j 2 --json rm2.json "$g" > /dev/null 2>&1
        if ! cmp -s rm1.json rm2.json; then notok "$a --remove $set ${g%.json}: -j 1 = -j 2" "$(diff rm1.json rm2.json | head -4 | tr '\n' ' ')"
        elif r=$($PY oracle2.py remove "$g" rm1.json "$set" 2>&1); then ok "${a:+$a }--remove $set ${g%.json} ($r)"
        else notok "${a:+$a }--remove $set ${g%.json}" "$r"; fi
    done
done
# --baseline GRAPH CANDIDATE, the candidate being GRAPH without a seeded set of 1 to 3 syncs
# (after entries dropped, waits and barriers deleted): the same judgement as --remove of that set
# (a deleted barrier takes its own after entries with it), default and --all, -j 1 = -j 2
cat > mkcand.py <<'EOF'
import json, sys, random
g = json.load(open(sys.argv[1])); r = random.Random("cand" + sys.argv[1])
named = {p for o in g["ops"] for p in o.get("after", [])}
s = [o["id"] for o in g["ops"] if o.get("kind") in ("wait", "barrier") and o["id"] not in named] + ["%s:after:%s" % (o["id"], p) for o in g["ops"] for p in o.get("after", [])]
if not s: sys.exit(3)
pick = r.sample(s, min(len(s), r.randint(1, 3)))
for t in pick:
    if ":after:" in t:
        op, p = t.split(":after:")
        for o in g["ops"]:
            if o["id"] == op:
                o["after"] = [x for x in o["after"] if x != p]
                if not o["after"]: del o["after"]
    else: g["ops"] = [o for o in g["ops"] if o["id"] != t]
open(sys.argv[2], "w").write(json.dumps(g)); print(",".join(pick))
EOF
for g in rand*.json sync*.json; do
    set=$($PY mkcand.py "$g" cand.json) || continue
    for a in "" --all; do
        rm -f bl1.json bl2.json
        dag-check $a --baseline "$g" cand.json -j 1 --json bl1.json > /dev/null 2>&1
        dag-check $a --baseline "$g" cand.json -j 2 --json bl2.json > /dev/null 2>&1
        if ! cmp -s bl1.json bl2.json; then notok "${a:+$a }--baseline ${g%.json} without $set: -j 1 = -j 2" "$(diff bl1.json bl2.json | head -4 | tr '\n' ' ')"
        elif r=$($PY oracle2.py baseline "$g" bl1.json "$set" 2>&1); then ok "${a:+$a }--baseline ${g%.json} without $set ($r)"
        else notok "${a:+$a }--baseline ${g%.json} without $set" "$r"; fi
    done
done
exit $FAILED
