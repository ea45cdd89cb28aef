# gen.py EXAMPLE OUT VARIANT : builds an experiment folder OUT from the example with a generated
# raw-requests.jsonl (2 cases x 2 sides x (10 warm-ups + M measured)), then applies VARIANT.
import json, os, shutil, sys, random
ex, par, var = sys.argv[1], sys.argv[2], sys.argv[3]
os.makedirs(par, exist_ok=True); out = os.path.join(par, "OP-MOE-0001")
shutil.copytree(ex, out)
for f in ("performance/summary.json", "decision.json", "decision.md", "SHA256SUMS"):
    try: os.remove(os.path.join(out, f))
    except FileNotFoundError: pass
rng = random.Random(7)
M = 520 if var != "few" else 1
cases = [("prefill-p128-o1", 10.5), ("prefill-p512-o1", 37.0)]
recs = []; t = 10**9
for run in range(10 + M):
    for cid, base in cases:
        for side in ("baseline", "candidate"):
            v = base * (0.85 if side == "candidate" else 1.0) * (1 + rng.uniform(-0.03, 0.03))
            v = round(v, 6)
            st = {}; s = t
            for k in ("client_queue service_queue input_prepare h2d npu_wait d2h logits_conversion sampling stream_flush").split():
                st[k] = {"start_ns": s, "end_ns": s + 1000}; s += 1000
            t = s + 1000
            recs.append({"request_id": f"{side}-{cid}-{run:04d}", "case_id": cid, "side": side, "run": run,
                         "warmup": run < 10, "steady": True, "concurrency": 1, "output_tokens": 1,
                         "ttft_ms": v, "stages": st})
if var == "few":
    recs = [r for r in recs if not r["warmup"]][:4] or recs[:4]
if var == "dupid":   # line 1500 repeats line 500's request_id with a hostile latency
    r = dict(recs[1499]); r["request_id"] = recs[499]["request_id"]; r["case_id"] = recs[499]["case_id"]
    r["side"] = recs[499]["side"]; r["ttft_ms"] = 1000.0; recs[1499] = r
if var == "timeout": # the last measured candidate line of case 1 (near the end) timed out
    idxs = [i for i, r in enumerate(recs) if r["side"] == "candidate" and r["case_id"] == "prefill-p128-o1"][-6:]
    for idx in idxs: del recs[idx]["ttft_ms"]; recs[idx]["outcome"] = "timeout"
lines = [json.dumps(r, separators=(",", ":")) for r in recs]
nl = "\n"
if var == "crlf": nl = "\r\n"
if var == "badjson1025": lines[1024] = lines[1024][:-1]
if var == "schema2049": lines[2048] = lines[2048].replace('"side":"candidate"', '"side":"cand"').replace('"side":"baseline"', '"side":"base"')
if var == "dupkey1500": lines[1499] = lines[1499][:-1] + ',"ttft_ms":1.0}'
if var == "bomlater": lines[1024] = "\ufeff" + lines[1024]
if var == "bomstart": lines[0] = "\ufeff" + lines[0]
if var == "huge": lines[1024] = lines[1024].replace(',"case_id"', " " * (5 << 20) + ',"case_id"', 1)
if var == "toolong": lines[1499] = lines[1499].replace(',"case_id"', " " * (65 << 20) + ',"case_id"', 1)
text = nl.join(lines) + nl
if var in ("blank", "blankbad"):
    lines.insert(1024, "   ")          # a blank line becomes line 1025 (the split)
    if var == "blankbad": lines[1599] = lines[1599][:-1]   # line 1600 (file numbering) is cut
    text = nl.join(lines) + nl
if var == "nolastnl": text = text[:-1]
with open(os.path.join(out, "performance/raw-requests.jsonl"), "w", encoding="utf-8", newline="") as f:
    f.write(text)
# numbers for the test: per case/side, measured samples (timeouts as inf), first copy of an id only
seen = set(); grp = {}
for r in recs:
    if r["request_id"] in seen: continue
    seen.add(r["request_id"])
    if r["warmup"]: continue
    grp.setdefault((r["case_id"], r["side"]), []).append(r.get("ttft_ms", float("inf")))
res = {}
for (c, s), xs in grp.items():
    xs = sorted(xs); n = len(xs)
    def q(p):
        h = (n - 1) * p; f = int(h)
        if f + 1 >= n or h == f: return xs[f]
        if xs[f + 1] == float("inf"): return None
        return xs[f] + (h - f) * (xs[f + 1] - xs[f])
    res[f"{c}/{s}"] = {"n": n, "median": q(0.5), "p99": q(0.99)}
json.dump(res, open(os.path.join(par, "expect.json"), "w"))
