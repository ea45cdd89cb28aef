# Writes a calculet-graph/v1 test graph for the dag-check HTML tests and bench: two chips of two
# queues, ROUNDS rounds of one access an op, random signals (some with two waits), after edges,
# a barrier every 7 rounds. usage: python3 html-graph.py ROUNDS SEED > graph.json
import json, random, sys
rounds, seed = int(sys.argv[1]), int(sys.argv[2])
rnd = random.Random(seed)
queues = [{"id": f"c{c}.q{q}", "chip": c} for c in (0, 1) for q in (0, 1)]
buffers = [{"id": f"b{c}_{i}", "chip": c, "space": "ddr", "address": 256 * i, "size": 256}
           for c in (0, 1) for i in range(12)]
ops, ev = [], 0
for r in range(rounds):
    for q in queues:
        c = q["chip"]
        acc = {"buffer": f"b{c}_{rnd.randrange(12)}", "offset": 64 * rnd.randrange(3), "size": 64}
        op = {"id": f"r{r}.{q['id']}", "queue": q["id"], "family": "matmul",
              ("writes" if rnd.random() < 0.5 else "reads"): [acc]}
        if r > 2 and rnd.random() < 0.15:
            op["after"] = [f"r{r - 2}.{rnd.choice(queues)['id']}"]
        ops.append(op)
    if rnd.random() < 0.5:
        a, b = rnd.sample(queues, 2)
        ops.append({"id": f"s{ev}", "queue": a["id"], "kind": "signal", "event": f"e{ev}"})
        ops.append({"id": f"w{ev}", "queue": b["id"], "kind": "wait", "event": f"e{ev}"})
        if rnd.random() < 0.3:
            ops.append({"id": f"w{ev}x", "queue": rnd.choice(queues)["id"], "kind": "wait", "event": f"e{ev}"})
        ev += 1
    if r % 7 == 6:
        ops.append({"id": f"bar{r}", "kind": "barrier", "queues": ["c0.q0", "c1.q0"]})
json.dump({"schema": "calculet-graph/v1", "queues": queues, "buffers": buffers, "ops": ops}, sys.stdout)
