# An experiment folder for exp-gate decide with N raw request lines: the example experiment
# (its hypothesis, manifests, accuracy, faults) with raw-requests.jsonl replaced by N lines
# over the input manifest's cases, both sides, 10 warm-ups per case and side, ttft and the
# nine section 7 stages a line (about 800 bytes a line). Seeded: the same N gives the same file.
# Usage: gen-exp-gate-folder.py EXAMPLE_DIR OUT_PARENT N  (writes OUT_PARENT/<experiment id>)
import json, os, random, shutil, sys
ex, parent, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
out = os.path.join(parent, os.path.basename(ex.rstrip("/")))
shutil.rmtree(out, ignore_errors=True)
shutil.copytree(ex, out)
for f in ("performance/summary.json", "decision.json", "decision.md", "SHA256SUMS"):
    try:
        os.remove(os.path.join(out, f))
    except FileNotFoundError:
        pass
cases = [json.loads(l) for l in open(os.path.join(ex, "golden/input-manifest.jsonl")) if l.strip()]
cases = [c for c in cases if not c.get("rejection")]  # never run on a device
per = max(n // (len(cases) * 2), 11)
rnd = random.Random(1)
st = ["client_queue", "service_queue", "input_prepare", "h2d", "npu_wait", "d2h",
      "logits_conversion", "sampling", "stream_flush"]
t = 1_000_000_000
with open(os.path.join(out, "performance/raw-requests.jsonl"), "w") as f:
    for c in cases:
        cid, toks = c["case_id"], c.get("output_tokens", 1)
        for side in ("baseline", "candidate"):
            base = 10.0 if side == "baseline" else 9.0
            for r in range(per):
                stages = {}
                t0 = t
                for s in st:
                    d = int(rnd.lognormvariate(11, 0.5))
                    stages[s] = {"start_ns": t, "end_ns": t + d}
                    t += d
                o = {"request_id": f"{side}-{cid}-{r:06d}", "case_id": cid, "side": side, "run": r,
                     "warmup": r < 10, "steady": True, "concurrency": c.get("concurrency", 1),
                     "output_tokens": toks, "ttft_ms": round(rnd.gauss(base, 0.3), 6)}
                if toks > 1 or c.get("phase") == "decode":
                    o["tpot_ms"] = round(rnd.gauss(base / 2, 0.2), 6)
                o["stages"] = stages
                f.write(json.dumps(o, separators=(",", ":")) + "\n")
print(out)
