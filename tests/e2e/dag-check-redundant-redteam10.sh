#!/bin/sh
# Red team 10: dag-check --redundant on graphs that already race must never call a needed sync
# idle. An independent oracle (from docs/dag-check.md and contracts §5 only) builds
# happens-before by brute force, removes each listed sync per the doc's removal model and
# requires no new racing pair, alias or cycle. Also compares with $DAG_CHECK_OTHER (main's build).
. "$GOLDEN_ROOT/tests/e2e/lib.sh"
# the build's tools from PATH (lib.sh); DAG_CHECK_OTHER=/path/to/dag-check compares with
# another build (skipped when unset)
DC=${DAG_CHECK:-dag-check}
OTHER=${DAG_CHECK_OTHER:-}
GEN=${GEN_GRAPH:-gen-graph}
PY=""
for p in /usr/bin/python3 python3; do
    if command -v "$p" >/dev/null 2>&1 && "$p" -c 'import json, itertools' 2>/dev/null; then PY=$p; break; fi
done
if [ -z "$PY" ]; then echo "ok dag-check-redundant-redteam10 # SKIP no python3"; exit 0; fi

cat > oracle.py <<'EOF'
import json, sys, itertools
def load(p): return json.load(open(p))
def model(g, drop=None):
    """drop: ('wait', id) | ('barrier', id) | ('after', op, pred)"""
    ops = g["ops"]; bufs = {b["id"]: b for b in g.get("buffers", [])}
    drop = drop or ()
    live_ops = [o for o in ops if not (drop and drop[0] == 'barrier' and o["id"] == drop[1])]
    ids = [o["id"] for o in live_ops]; idx = {i: n for n, i in enumerate(ids)}
    E = set(); lastq = {}
    sig = {o["event"]: o["id"] for o in live_ops if o.get("kind") == "signal"}
    for o in live_ops:
        k = o.get("kind", "compute")
        qs = o["queues"] if k == "barrier" else [o["queue"]]
        for q in qs:
            if q in lastq: E.add((lastq[q], o["id"]))
            lastq[q] = o["id"]
        for p in o.get("after", []):
            # one entry goes; an equal entry left in the list still orders (doc: "the first stays")
            if drop and drop[0] == 'after' and drop[1] == o["id"] and drop[2] == p and o["after"].count(p) == 1: continue
            if p not in idx: continue  # after edge to a removed barrier
            E.add((p, o["id"]))
        if k == "wait" and not (drop and drop[0] == 'wait' and drop[1] == o["id"]):
            E.add((sig[o["event"]], o["id"]))
    succ = {i: [] for i in ids}
    for a, b in E: succ[a].append(b)
    reach = {}
    for s in ids:
        seen = set(); st = [s]
        while st:
            x = st.pop()
            for y in succ[x]:
                if y not in seen: seen.add(y); st.append(y)
        reach[s] = seen
    cyc = any(i in reach[i] for i in ids)
    before = lambda a, b: b in reach[a]
    acc = []
    for o in live_ops:
        for kind in ("reads", "writes"):
            for n, r in enumerate(o.get(kind, [])):
                b = bufs[r["buffer"]]; off = r.get("offset", 0); sz = r.get("size", b["size"] - off)
                lo = b["address"] + off
                acc.append((o["id"], kind == "writes", b["chip"], b.get("space"), lo, lo + sz, kind, n))
    races = set()
    for x, y in itertools.combinations(acc, 2):
        if x[0] == y[0] or not (x[1] or y[1]) or x[2] != y[2] or x[3] != y[3]: continue
        lo, hi = max(x[4], y[4]), min(x[5], y[5])
        if lo >= hi: continue
        if before(x[0], y[0]) or before(y[0], x[0]): continue
        races.add(tuple(sorted([(x[0], x[6], x[7]), (y[0], y[6], y[7])])) + (lo, hi))
    aliases = set(); B = list(bufs.values())
    def ends(b): return b["live"] if "live" in b else None
    for X, Y in itertools.combinations(B, 2):
        if X["chip"] != Y["chip"] or X.get("space") != Y.get("space"): continue
        if max(X["address"], Y["address"]) >= min(X["address"] + X["size"], Y["address"] + Y["size"]): continue
        ex, ey = ends(X), ends(Y)
        if ex is None or ey is None or any(e not in idx for e in ex + ey): aliases.add((X["id"], Y["id"])); continue
        inp = X.get("inplace_of") == Y["id"] or Y.get("inplace_of") == X["id"]
        le = (lambda a, b: a == b or before(a, b)) if inp else before
        if all(le(a, b) for a in ex for b in ey) or all(le(b, a) for a in ex for b in ey): continue
        aliases.add((X["id"], Y["id"]))
    return cyc, races, aliases
def parse_sync(g, s):
    if ":after:" in s:
        op, pred = s.split(":after:"); return ('after', op, pred)
    k = {o["id"]: o.get("kind", "compute") for o in g["ops"]}[s]
    return (k, s)
if __name__ == "__main__":
    g = load(sys.argv[1]); r = load(sys.argv[2])
    base = model(g); bad = []
    named = set()
    for b in g.get("buffers", []): named.update(b.get("live", []))
    for s in r.get("redundant_syncs", []):
        d = parse_sync(g, s["sync"])
        if d[0] == 'barrier' and d[1] in named: bad.append("%s: barrier named by live offered" % s["sync"]); continue
        c, ra, al = model(g, d)
        new = ra - base[1]
        if c and not base[0]: bad.append("%s: cycle" % s["sync"])
        if new: bad.append("%s: new races %s" % (s["sync"], sorted(new)[:2]))
        if al - base[2]: bad.append("%s: new aliases %s" % (s["sync"], sorted(al - base[2])))
    # missed idle syncs (informative, not a safety bug)
    offered = {s["sync"] for s in r.get("redundant_syncs", [])}
    missed = []
    for o in (g["ops"] if not base[0] else []):  # with a cycle dag-check computes no races (doc)
        k = o.get("kind", "compute")
        cand = ([o["id"]] if k in ("wait", "barrier") else []) + ["%s:after:%s" % (o["id"], p) for p in o.get("after", [])]
        for s in cand:
            if s in offered or s in named: continue
            c, ra, al = model(g, parse_sync(g, s))
            if not (ra - base[1]) and not (al - base[2]) and not c: missed.append(s)
    if base[0] and offered: bad.append("syncs offered on a graph with a cycle")
    print("BAD " + "; ".join(bad) if bad else "GOOD cycle=%d races=%d offered=%d missed=%s" % (base[0], len(base[1]), len(offered), ",".join(missed) or "-"))
EOF

cat > cases.py <<'EOF'
import json
Q = lambda *qs: [{"id": q, "chip": c} for q, c in qs]
def buf(i, size=64, chip=0, addr=0, space="ddr", **k): return dict(id=i, chip=chip, space=space, address=addr, size=size, **k)
def c(i, q, r=(), w=(), after=None):
    o = {"id": i, "queue": q, "reads": [dict(buffer=b, offset=o_, size=s) for b, o_, s in r],
         "writes": [dict(buffer=b, offset=o_, size=s) for b, o_, s in w]}
    if after: o["after"] = after
    return o
sig = lambda i, q, e: {"id": i, "queue": q, "kind": "signal", "event": e}
wt = lambda i, q, e: {"id": i, "queue": q, "kind": "wait", "event": e}
bar = lambda i, qs, after=None: dict({"id": i, "kind": "barrier", "queues": qs}, **({"after": after} if after else {}))
G = lambda qs, bs, ops: {"schema": "calculet-graph/v1", "queues": qs, "buffers": bs, "ops": ops}
QQ = Q(("A", 0), ("B", 0))
cases = {}
# 1 sync guards bytes adjacent to racing bytes: [0,8) races, [8,16) ordered by w
cases["adjacent"] = G(QQ, [buf("x")], [c("p", "A", w=[("x", 0, 16)]), sig("s", "A", "e"), c("p2", "A", w=[("x", 0, 8)]),
    wt("w", "B", "e"), c("q", "B", r=[("x", 0, 16)])])
# 2 partial overlap: racing writer on [0,8); sync guards [4,12)
cases["partial"] = G(QQ, [buf("x")], [c("p", "A", w=[("x", 4, 8)]), sig("s", "A", "e"), c("p2", "A", w=[("x", 0, 8)]),
    wt("w", "B", "e"), c("q", "B", r=[("x", 0, 12)])])
# 3 same pair races on one byte range and is ordered through the sync on another (two accesses)
cases["samepair"] = G(QQ, [buf("x"), buf("y", addr=128)], [c("p", "A", w=[("x", 0, 4)]), sig("s", "A", "e"),
    c("p2", "A", w=[("y", 0, 4)]), wt("w", "B", "e"), c("q", "B", r=[("x", 0, 4), ("y", 0, 4)])])
# 3b same op pair, one access racing via a later write, other access ordered
cases["samepair2"] = G(QQ, [buf("x")], [c("p", "A", w=[("x", 0, 4), ("x", 8, 4)]), sig("s", "A", "e"),
    c("p2", "A", w=[("x", 0, 4)]), wt("w", "B", "e"), c("q", "B", r=[("x", 0, 12)])])
# 4 two duplicate waits, racy elsewhere
cases["twowaits"] = G(Q(("A", 0), ("B", 0), ("C", 0)), [buf("x"), buf("z", addr=256)], [c("p", "A", w=[("x", 0, 8)]),
    sig("s", "A", "e"), sig("s2", "A", "f"), wt("w1", "B", "e"), wt("w2", "B", "f"), c("q", "B", r=[("x", 0, 8)]),
    c("r1", "A", w=[("z", 0, 8)]), c("r2", "C", w=[("z", 0, 8)])])
# 5 barriers with after entries on a racy graph
cases["barafter"] = G(Q(("A", 0), ("B", 0), ("C", 0)), [buf("x"), buf("z", addr=256)], [c("p", "A", w=[("x", 0, 8)]),
    bar("b0", ["A", "B"], after=["p"]), c("m", "C", w=[("z", 0, 4)]), c("q", "B", r=[("x", 0, 8)], after=["b0"]),
    c("r", "C", r=[("x", 0, 8)], after=["b0"]), c("t", "B", w=[("z", 0, 4)])])
# 5b barrier not on the reader's queue: ordering only via after: [b0]
cases["barafter2"] = G(Q(("A", 0), ("B", 0), ("C", 0)), [buf("x"), buf("z", addr=256)], [c("p", "A", w=[("x", 0, 8)]),
    bar("b0", ["A", "B"]), c("r", "C", r=[("x", 0, 8)], after=["b0"]), c("m", "C", w=[("z", 0, 4)]), c("t", "B", w=[("z", 0, 4)])])
# 5c barrier that lists its own after entries, after entry duplicating a wait
cases["barafter3"] = G(Q(("A", 0), ("B", 0), ("C", 0)), [buf("x"), buf("z", addr=256)], [c("p", "C", w=[("x", 0, 8)]),
    sig("s", "C", "e"), bar("b0", ["A", "B"], after=["p"]), wt("w", "B", "e"), c("q", "B", r=[("x", 0, 8)], after=["p"]),
    c("u", "A", w=[("z", 0, 4)]), c("v", "C", r=[("z", 0, 4)])])
# 6 races on another chip / space than the sync
QC = Q(("A", 0), ("B", 0), ("C", 1), ("D", 1))
cases["otherchip"] = G(QC, [buf("x"), buf("x1", chip=1)], [c("p", "A", w=[("x", 0, 8)]), sig("s", "A", "e"), wt("w", "B", "e"),
    c("q", "B", r=[("x", 0, 8)]), c("r1", "C", w=[("x1", 0, 8)]), c("r2", "D", r=[("x1", 0, 8)])])
cases["otherspace"] = G(QQ, [buf("x"), buf("xs", space="l2")], [c("p", "A", w=[("x", 0, 8)]), sig("s", "A", "e"),
    c("r1", "A", w=[("xs", 0, 8)]), wt("w", "B", "e"), c("q", "B", r=[("x", 0, 8)]), c("r2", "B", r=[("xs", 0, 8)])])
# same address, different space: the sync is the only order on ddr, l2 races
cases["samebytes-otherspace"] = G(QQ, [buf("x"), buf("xs", space="l2")], [c("r1", "A", w=[("xs", 0, 8)]),
    c("p", "A", w=[("x", 0, 8)]), sig("s", "A", "e"), wt("w", "B", "e"), c("q", "B", r=[("x", 0, 8)]), c("r2", "B", r=[("xs", 0, 8)])])
# aliasing buffers racing (same bytes via two buffers), sync guards other bytes of one
cases["aliasrace"] = G(QQ, [buf("x"), buf("y", addr=0, size=16)], [c("p", "A", w=[("x", 32, 8), ("y", 0, 8)]), sig("s", "A", "e"),
    c("p2", "A", w=[("x", 0, 4)]), wt("w", "B", "e"), c("q", "B", r=[("x", 0, 40)])])
# WAR: race on write side; reads on several queues
cases["war"] = G(Q(("A", 0), ("B", 0), ("C", 0)), [buf("x")], [c("r0", "C", r=[("x", 0, 16)]), c("rA", "A", r=[("x", 0, 16)]),
    sig("s", "A", "e"), wt("w", "B", "e"), c("wb", "B", w=[("x", 0, 16)])])
# sync ordering a hidden pair behind a racing last write (shadow-memory hiding)
cases["hidden"] = G(Q(("A", 0), ("B", 0), ("C", 0)), [buf("x")], [c("p", "A", w=[("x", 0, 8)]), sig("s", "A", "e"),
    wt("w", "B", "e"), c("q", "B", r=[("x", 0, 8)]), c("k", "C", w=[("x", 0, 8)]), c("q2", "B", r=[("x", 0, 8)])])
cases["hidden2"] = G(Q(("A", 0), ("B", 0), ("C", 0)), [buf("x")], [c("k", "C", w=[("x", 0, 8)]), c("p", "A", w=[("x", 0, 8)]),
    sig("s", "A", "e"), wt("w", "B", "e"), c("q", "B", r=[("x", 2, 2)])])
# after entry as the only order, racy elsewhere on same bytes
cases["afteronly"] = G(Q(("A", 0), ("B", 0), ("C", 0)), [buf("x")], [c("p", "A", w=[("x", 0, 8)]), c("q", "B", r=[("x", 0, 8)], after=["p"]),
    c("k", "C", r=[("x", 0, 8)])])
for n, g in cases.items(): json.dump(g, open("case-%s.json" % n, "w"), indent=1)
print(" ".join(cases))
EOF
CASES=$($PY cases.py)

check() { # NAME GRAPH: --redundant on DC judged by the oracle (and compared with OTHER)
    name=$1; g=$2
    "$DC" --redundant --json "$name.dc.json" "$g" > "$name.dc.txt" 2> "$name.dc.err"; rc=$?
    if [ ! -s "$name.dc.json" ] && [ "$rc" = 2 ] && [ -x "$OTHER" ]; then # structurally refused graph
        "$OTHER" --redundant "$g" > /dev/null 2>&1; rc2=$?
        [ "$rc2" = 2 ] && ok "$name refused-by-both" || notok "$name" "exit 2 here, $rc2 on $OTHER"; return
    fi
    if [ ! -s "$name.dc.json" ] && [ "$rc" = 2 ] && [ ! -x "$OTHER" ] &&
       [ "$(wc -l < "$name.dc.err")" -eq 1 ] && grep -qF "$g" "$name.dc.err"; then
        ok "$name refused (one line naming the file)"; return
    fi
    if [ ! -s "$name.dc.json" ]; then notok "$name" "no JSON (exit $rc): $(head -c 300 "$name.dc.err")"; return; fi
    if [ "${3:-}" != noorc ]; then
        v=$($PY oracle.py "$g" "$name.dc.json" 2>&1)
        case $v in GOOD*) ok "$name oracle ($v)";; *) notok "$name" "oracle: $v; output: $(tr '\n' '|' < "$name.dc.txt" | head -c 600)";; esac
    fi
    if [ -x "$OTHER" ]; then
        "$OTHER" --redundant --json "$name.ot.json" "$g" > "$name.ot.txt" 2>&1; rc2=$?
        if [ "$rc" = "$rc2" ] && cmp -s "$name.dc.json" "$name.ot.json" && cmp -s "$name.dc.txt" "$name.ot.txt"; then
            ok "$name same-as-other"
        else notok "$name" "differs from $OTHER (exit $rc vs $rc2): $(diff "$name.dc.txt" "$name.ot.txt" | head -c 500 | tr '\n' '|')"; fi
    fi
}
for n in $CASES; do check "$n" "case-$n.json"; done
# the doc's claim: each listed sync alone passes --remove; the two duplicate waits together do not
for n in twowaits barafter3; do
    for sy in $($PY -c 'import json,sys; print(" ".join(x["sync"] for x in json.load(open(sys.argv[1]))["redundant_syncs"]))' "$n.dc.json"); do
        "$DC" --remove "$sy" "case-$n.json" > rm.txt 2>&1; r=$?
        [ $r -eq 0 ] && ok "$n remove-alone $sy" || notok "$n remove-alone $sy" "exit $r: $(head -c 300 rm.txt | tr '\n' '|')"
    done
done
"$DC" --remove w1,w2 case-twowaits.json > rm.txt 2>&1; r=$?
[ $r -eq 1 ] && ok "twowaits remove-both-fails" || notok "twowaits remove-both-fails" "exit $r: $(head -c 300 rm.txt | tr '\n' '|')"
for s in $(seq 1 60) 89 144 233; do
    "$GEN" --random "$s" -o "rand$s.json" 2>/dev/null && check "random-$s" "rand$s.json"
done
for n in 200 600 3000; do for sd in 1 2; do
    "$GEN" --ops $n --race --seed $sd -o "race$n-$sd.json" 2>/dev/null && check "race-ops$n-seed$sd" "race$n-$sd.json" noorc
done; done
exit 0
