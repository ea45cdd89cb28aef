# dag-check --redundant on graphs that already race: idle syncs are decided incrementally (no
# re-check per sync), with the answers a full re-check per sync gives.
# 1. The removal oracle, on small random racy graphs (and race-free ones): every offered sync
#    removed alone with --remove adds no race, alias or cycle (exit 0), and every other sync
#    (not a barrier a live range names) does add one (exit 1): --redundant misses nothing.
# 2. DAG_CHECK_OTHER=/path/to/dag-check (e.g. main's build, which re-checked every sync of a
#    racy graph in full) also compares human report, JSON report, -q and exit status on racy
#    and race-free generated graphs of several sizes and seeds; skipped when unset or absent.
. "$GOLDEN_ROOT/tests/e2e/lib.sh"
JPY=""
for p in /usr/bin/python3 python3; do
    if command -v "$p" >/dev/null 2>&1 && "$p" -c 'import json' 2>/dev/null; then JPY=$p; break; fi
done

# syncs.py GRAPH REPORT: one line per sync: "offered|needed|endpoint NAME"
cat > syncs.py <<'EOF'
import json, sys
g = json.load(open(sys.argv[1]))
r = json.load(open(sys.argv[2]))
offered = {x["sync"] for x in r.get("redundant_syncs", [])}
ends = set()
for b in g.get("buffers", []):
    if "live" in b:
        ends.update(b["live"])
for op in g["ops"]:
    kind = op.get("kind", "compute")
    names = [op["id"]] if kind in ("wait", "barrier") else []
    after = ["%s:after:%s" % (op["id"], p) for p in op.get("after", [])]
    names += after
    for n in names:
        if after.count(n) > 1:
            print("ambiguous", n)  # --remove names the first of equal entries only
        elif n in offered:
            print("offered", n)
        elif kind == "barrier" and n == op["id"] and n in ends:
            print("endpoint", n)
        else:
            print("needed", n)
EOF

# oracle GRAPH NAME: every sync's --remove verdict agrees with --redundant
oracle() {
    gr=$1; nm=$2
    dag-check -q --redundant --json "$nm.rep.json" "$gr" > /dev/null 2> "$nm.err"; e=$?
    if [ "$e" -ge 2 ]; then notok "$nm" "exit $e: $(head -c 300 "$nm.err")"; return; fi
    if "$JPY" -c 'import json,sys; sys.exit(0 if json.load(open(sys.argv[1]))["cycles"] else 1)' "$nm.rep.json"; then
        ok "$nm # skip cyclic"; return; fi
    "$JPY" syncs.py "$gr" "$nm.rep.json" > "$nm.syncs" || { notok "$nm" "syncs.py failed"; return; }
    bad=""
    while read -r what s; do
        case $what in endpoint|ambiguous) continue ;; esac
        dag-check -q --remove "$s" "$gr" > /dev/null 2>&1; rc=$?
        if [ "$what" = offered ] && [ "$rc" != 0 ]; then bad="$bad offered-but-needed:$s($rc)"; fi
        if [ "$what" = needed ] && [ "$rc" != 1 ]; then bad="$bad needed-but-not-offered:$s($rc)"; fi
    done < "$nm.syncs"
    if [ -n "$bad" ]; then notok "$nm" "$bad"; else ok "$nm"; fi
}

if [ -z "$JPY" ]; then
    ok "idle-racy-oracle # skip no python3"
else
    racy=0
    for seed in 3 7 8 11 19 30 42 57 64 77 88 101 150 202 333 444; do
        gen-graph --random "$seed" -o "rnd$seed.json" 2> /dev/null ||
            { notok "idle-racy-gen-$seed" "gen-graph failed"; continue; }
        oracle "rnd$seed.json" "idle-racy-oracle-random$seed"
        if [ -f "idle-racy-oracle-random$seed.rep.json" ] && "$JPY" -c 'import json,sys; sys.exit(0 if json.load(open(sys.argv[1]))["races"] else 1)' "idle-racy-oracle-random$seed.rep.json" 2> /dev/null; then
            racy=$((racy + 1)); fi
    done
    # 100-180 ops, not cyclic: racy with aliases, race-free with aliases, racy, race-free
    for seed in 13 19 22 28 43 70 74 80; do
        gen-graph --random "$seed" --max-ops 200 -o "big$seed.json" 2> /dev/null ||
            { notok "idle-racy-gen-big$seed" "gen-graph failed"; continue; }
        oracle "big$seed.json" "idle-racy-oracle-random200-$seed"
    done
    # the generator must give racy graphs, or the oracle means little
    if [ "$racy" -ge 5 ]; then ok idle-racy-oracle-has-races; else
        notok idle-racy-oracle-has-races "only $racy of the random graphs fail"; fi
    # the realistic graph with one dropped wait: its offered syncs, each removed alone
    gen-graph --ops 1200 --race -o real-race.json 2> /dev/null
    dag-check -q --redundant --json real.rep.json real-race.json > /dev/null 2>&1; e=$?
    "$JPY" -c 'import json,sys; r=json.load(open(sys.argv[1])); [print(x["sync"]) for x in r["redundant_syncs"]]' real.rep.json > real.offered
    bad=""
    n=0
    while read -r s; do
        n=$((n + 1))
        dag-check -q --remove "$s" real-race.json > /dev/null 2>&1 || bad="$bad $s"
    done < real.offered
    if [ "$e" = 1 ] && [ "$n" -gt 0 ] && [ -z "$bad" ]; then ok idle-racy-oracle-realistic; else
        notok idle-racy-oracle-realistic "exit $e, $n offered, needed:$bad"; fi
fi

# same SUFFIX ARGS...: this build and DAG_CHECK_OTHER give the same reports and exit status
OTHER=${DAG_CHECK_OTHER:-}
same() {
    nm=$1; shift
    if [ -z "$OTHER" ] || [ ! -x "$OTHER" ]; then ok "$nm # skip DAG_CHECK_OTHER not set"; return; fi
    dag-check --redundant --json "$nm.a.json" "$@" > "$nm.a.out" 2> /dev/null; ea=$?
    "$OTHER" --redundant --json "$nm.b.json" "$@" > "$nm.b.out" 2> /dev/null; eb=$?
    dag-check -q --redundant "$@" > "$nm.a.q" 2>&1; qa=$?
    "$OTHER" -q --redundant "$@" > "$nm.b.q" 2>&1; qb=$?
    if [ "$ea" != "$eb" ] || [ "$qa" != "$qb" ]; then notok "$nm" "exit $ea/$qa, other $eb/$qb"; return; fi
    if ! cmp -s "$nm.a.out" "$nm.b.out"; then notok "$nm" "human reports differ"; return; fi
    if ! cmp -s "$nm.a.json" "$nm.b.json"; then notok "$nm" "JSON reports differ"; return; fi
    if ! cmp -s "$nm.a.q" "$nm.b.q"; then notok "$nm" "-q output differs"; return; fi
    ok "$nm"
}

for seed in 3 8 30 42 101; do
    same "idle-racy-other-random$seed" "rnd$seed.json"
done
for seed in 13 19 22 43 74; do
    same "idle-racy-other-random200-$seed" "big$seed.json"
done
# OPS LAYERS SEED [--race]: about 600, 1800 and 3700 ops, racy and race-free
for spec in "600 8 1 --race" "600 8 1" "1500 12 2 --race" "1500 12 2" "3000 48 3 --race" "3000 48 3"; do
    set -- $spec
    nm="idle-racy-other-$1-l$2-seed$3${4:+-race}"
    if [ -z "$OTHER" ] || [ ! -x "$OTHER" ]; then ok "$nm # skip DAG_CHECK_OTHER not set"; continue; fi
    gen-graph --ops "$1" --layers "$2" --seed "$3" ${4:-} -o "$nm.json" 2> /dev/null ||
        { notok "$nm" "gen-graph failed"; continue; }
    same "$nm" "$nm.json"
done
# a realistic racy graph with fewer tiles, also with --all
gen-graph --ops 2000 --layers 12 --tiles 4 --race -o wide-race.json 2> /dev/null
same idle-racy-other-wide-race wide-race.json
same idle-racy-other-wide-race-all --all wide-race.json
# many races: every third wait dropped from a realistic graph (racing bytes everywhere)
if [ -n "$JPY" ] && [ -n "$OTHER" ] && [ -x "$OTHER" ]; then
    gen-graph --ops 1500 --layers 12 -o heavy-src.json 2> /dev/null
    "$JPY" -c '
import json, sys
g = json.load(open(sys.argv[1]))
k = 0
ops = []
for o in g["ops"]:
    if o.get("kind") == "wait":
        k += 1
        if k % 3 == 0:
            continue
    ops.append(o)
g["ops"] = ops
json.dump(g, open(sys.argv[2], "w"))' heavy-src.json heavy.json
    same idle-racy-other-heavy heavy.json
else
    ok "idle-racy-other-heavy # skip DAG_CHECK_OTHER not set"
fi
