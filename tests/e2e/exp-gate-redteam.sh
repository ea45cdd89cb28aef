#!/bin/sh
# Red-team pass over exp-gate (issue 26), written from the handbook and the docs alone, without
# reading the code: 71 checks, 25 got through the build before issue 26.
# Red-team cases for exp-gate (summarize --check, decide, matrix), written from the handbook
# (sections 3, 4, 6, 7, 8.4, 13.2, 17, 18, 19), docs/exp-gate.md, docs/manifest-verify.md and
# docs/fields.md only. Every folder is a copy of examples/experiment/OP-MOE-0001.
#
# What the example decides today, and why: `exp-gate decide` gives no_merge (exit 1, rule
# `otherwise`): its TTFT gains are -6.73 % and -7.87 %, under the hypothesis' 8 %
# (acceptance.target_metric_improvement_min_pct, the default graph threshold), and its trace has
# no `side` column, so bottleneck_moved is "not evaluated". The baseline of the attacks, G, is the
# example with new raw data only (mk.py raw G): three cases (prefill-p128-o1, prefill-p512-o1,
# prefill-p128-o32 with TPOT), 10 warm-ups + 30 measured steady runs per side, the candidate's
# samples are the baseline's times 0.90 (permuted), so every median, P90 and P99 improves by
# exactly 10.000 %; clock 1400 +- 2 MHz and temperature 62/63 +- 0.5 C on both chips; a sided
# trace where grouped_moe_dense takes 15 % fewer cycles. G decides soak_24h (rule graph_gain).
# N is the same with factor 0.94 (a 6 % gain): it must decide no_merge. Each attack below is G
# (or N, where the attack tries to lift a no_merge into a soak) with ONE thing changed.
. "$GOLDEN_ROOT/tests/e2e/lib.sh"

if [ -z "$PYTHON" ]; then ok "gate-redteam # skip no numpy"; exit 0; fi
EX=$GOLDEN_ROOT/examples/experiment/OP-MOE-0001
E=OP-MOE-0001

cat > mk.py <<'EOF'
import json, sys, os, re

STAGES = ["client_queue", "service_queue", "input_prepare", "h2d", "npu_wait", "d2h",
          "logits_conversion", "sampling", "stream_flush"]
FRAC = [0.004, 0.006, 0.011, 0.028, 0.862, 0.029, 0.048, 0.008]   # the last stage takes the rest

# case, output tokens, baseline TTFT median (ms), baseline TPOT (ms) or None, seed
CASES = [("prefill-p128-o1", 1, 10.5, None, 1),
         ("prefill-p512-o1", 1, 37.3, None, 2),
         ("prefill-p128-o32", 32, 10.6, 4.2, 3)]
clock_ns = [1000000000]

def stages_for(total_ms):
    t0 = clock_ns[0]; tot = int(round(total_ms * 1e6)); out = {}; t = t0
    for name, f in zip(STAGES, FRAC + [None]):
        d = tot - (t - t0) if f is None else max(1, int(round(tot * f)))
        out[name] = {"start_ns": t, "end_ns": t + d}; t += d
    clock_ns[0] = t + 5000000
    return out

def line(case, side, run, warm, otok, ttft, tpot, clk, tmp, steady=True, timeout=False):
    d = {"request_id": "%s-%s-%03d" % (side, case, run), "case_id": case, "side": side,
         "run": run, "warmup": warm, "steady": steady, "concurrency": 1,
         "chip_temperature_c": [round(x, 2) for x in tmp], "clock_mhz": [round(x, 1) for x in clk],
         "output_tokens": otok}
    if timeout:   # the 2 s npu_wait watchdog fired: no first token, so no latency figure
        st = {}; t = clock_ns[0]
        for name in STAGES:
            dur = 2000000000 if name == "npu_wait" else 1000
            st[name] = {"start_ns": t, "end_ns": t + dur}; t += dur
        clock_ns[0] = t + 5000000; d["stages"] = st
        return d
    d["ttft_ms"] = round(ttft, 6)
    if tpot is not None:
        d["tpot_ms"] = round(tpot, 6)
    d["stages"] = stages_for(ttft + (tpot * (otok - 1) if tpot is not None else 0.0))
    return d

def gen(v):
    import numpy as np
    factor = {"N": 0.94, "newline": 0.94, "dupfast": 0.94, "bottleneck": 0.98}.get(v, 0.90)
    rows = []
    for case, otok, m, mt, seed in CASES:
        rng = np.random.RandomState(seed)
        z = rng.standard_normal(30); zt = rng.standard_normal(30); perm = rng.permutation(30)
        for side in ("baseline", "candidate"):
            f = 1.0 if side == "baseline" else factor
            ft = 0.95 if (v == "tpot_weak" and side == "candidate") else f
            x = m * (1 + 0.02 * z); xt = mt * (1 + 0.02 * zt) if mt else None
            if side == "candidate":
                x = x[perm]; xt = xt[perm] if mt else None
            x = f * x
            if mt:
                xt = ft * xt
            if v == "bimodal" and case == "prefill-p128-o1":
                k = 14 if side == "baseline" else 16      # fast runs (9.0x ms) of 30; the rest 11.0x ms
                x = np.array([9.0 + 0.01 * i for i in range(k)] + [11.0 + 0.01 * i for i in range(30 - k)])[perm]
            if v == "p99_tpot" and side == "candidate" and case == "prefill-p128-o32":
                xt[np.argsort(xt)[-2:]] = mt * 1.2        # two slow tokens streams: 5.04 ms
            for r in range(10):
                clk = [1400 + rng.uniform(-2, 2), 1400 + rng.uniform(-2, 2)]
                tmp = [62 + rng.uniform(-0.5, 0.5), 63 + rng.uniform(-0.5, 0.5)]
                rows.append(line(case, side, r, True, otok, m * f * 1.05, (mt * ft * 1.05 if mt else None), clk, tmp))
            meas = []
            for i in range(30):
                clk = [1400 + rng.uniform(-2, 2), 1400 + rng.uniform(-2, 2)]
                tmp = [62 + rng.uniform(-0.5, 0.5), 63 + rng.uniform(-0.5, 0.5)]
                meas.append(line(case, side, 10 + i, False, otok, x[i], (xt[i] if mt else None), clk, tmp))
            # 10 more measured runs, all flagged steady: true, while the device drifts
            if v == "clock_ramp" and side == "candidate" and case == "prefill-p512-o1":
                for j in range(10):                       # chip 1 throttles 1390 -> 1300 MHz
                    meas.append(line(case, side, 40 + j, False, otok, x[j], None, [1400.0, 1390.0 - 10 * j], [62.0, 63.0]))
            if v == "temp_ramp" and side == "baseline" and case == "prefill-p128-o1":
                for j in range(10):                       # chip 0 heats 63 -> 74.7 C
                    meas.append(line(case, side, 40 + j, False, otok, x[j], None, [1400.0, 1400.0], [63.0 + 1.3 * j, 63.0]))
            if v == "spread" and side == "candidate" and case == "prefill-p128-o1":
                meas.append(line(case, side, 40, False, otok, x[0], None, [1400.0, 1360.0], [62.0, 63.0]))
            if v == "dupreq" and side == "candidate" and case == "prefill-p512-o1":
                meas[-1] = dict(meas[0])                  # run 39 lost, run 10's line copied in its place
            if v == "dupfast" and side == "candidate":
                key = "tpot_ms" if mt else "ttft_ms"
                fast = sorted(meas, key=lambda d: d[key])[:2]
                meas += [dict(d) for d in fast for _ in range(20)]   # the 2 fastest lines, 20 copies each
            rows += meas
            if v == "steady_false" and side == "baseline" and case == "prefill-p512-o1":
                rows.append(line(case, side, 40, False, otok, m * 1.3, None, [1400.0, 1400.0], [62.0, 63.0], steady=False))
            if v == "timeouts" and side == "candidate" and case == "prefill-p128-o1":
                for j in range(12):
                    rows.append(line(case, side, 40 + j, False, otok, None, None, [1400.0, 1400.0], [62.0, 63.0], timeout=True))
    extra = {"onesided": ("prefill-p16-o1", ("baseline",)),
             "newline": ("prefill-p16-o1\nDecision: **24 h soak**, then merge if the soak shows no new fault.",
                         ("baseline", "candidate"))}
    if v in extra:
        case, sides = extra[v]; rng = np.random.RandomState(9)
        for side in sides:
            for r in range(40):
                rows.append(line(case, side, r, r < 10, 1, 3.1 * (1 + 0.02 * rng.standard_normal()), None,
                                 [1400.0, 1400.0], [62.0, 63.0]))
    return rows

def trace():
    out = ["chip,side,layer,op,family,start_cycle,end_cycle"]
    for side in ("baseline", "candidate"):
        gm = 14000 if side == "baseline" else 11900      # target family -15 %
        t = 0
        for layer in range(4):
            for chip in (0, 1):
                for op, fam, d in (("moe_gate_pre", "moe_gate", 900), ("grouped_moe", "grouped_moe_dense", gm),
                                   ("moe_gate_post", "moe_gate", 700)):
                    out.append("%d,%s,%d,%s.%d,%s,%d,%d" % (chip, side, layer, op, layer, fam, t, t + d))
                    t += d + 50
    return "\n".join(out) + "\n"

def reencode(d):
    # the same request, written the way another JSON writer might: keys reversed, escapes,
    # exponents, blanks. Every value is unchanged.
    def enc(o):
        if isinstance(o, dict):
            return "{ " + " , ".join(enc(k) + " : " + enc(o[k]) for k in reversed(list(o))) + " }"
        if isinstance(o, list):
            return "[" + ",".join(enc(x) for x in o) + "]"
        if isinstance(o, bool):
            return "true" if o else "false"
        if isinstance(o, str):
            return '"' + "".join("\\u%04x" % ord(ch) if ch in "-bp" else ch for ch in o) + '"'
        if isinstance(o, float):          # 9.613562 -> 9613562e-6: the same decimal, so the same double
            r = repr(o)
            if "e" in r or "." not in r:
                return r
            i, f = r.split(".")
            return (str(int(i + f)) if (i + f).strip("-0") else "0") + "e-%d" % len(f)
        return str(o)
    return enc(d)

def jl(p):
    return [json.loads(l) for l in open(p)]

def wjl(p, rows):
    with open(p, "w") as f:
        for d in rows:
            f.write(json.dumps(d, separators=(",", ":")) + "\n")

def main():
    cmd, dirn = sys.argv[1], sys.argv[2]
    a = sys.argv[3:]
    P = lambda *x: os.path.join(dirn, *x)
    raw = P("performance", "raw-requests.jsonl")
    if cmd == "raw":
        rows = gen(a[0])
        if a[0] == "reencode":
            with open(raw, "w") as f:
                for d in rows:
                    f.write(reencode(d) + "\n")
        else:
            wjl(raw, rows)
        open(P("performance", "raw-device-trace.csv"), "w").write(trace())
        if a[0] == "timeouts":
            with open(P("stability", "faults.jsonl"), "a") as f:
                for j in range(12):
                    f.write(json.dumps({"time": "2026-08-03T05:%02d:00Z" % j, "side": "candidate",
                        "case_id": "prefill-p128-o1", "request_id": "candidate-prefill-p128-o1-%03d" % (40 + j),
                        "chip": 0, "kind": "timeout", "severity": "warning",
                        "message": "npu_wait exceeded 2 s watchdog; device reset and the case re-run",
                        "recovered": True, "retest_after_reset": "passed"}) + "\n")
    elif cmd == "json":          # json FILE POINTER VALUE: set one field of a JSON document
        p = P(a[0]); doc = json.load(open(p)); keys = a[1].split("/"); o = doc
        if keys[0].startswith("case="):   # case=CASE=METRIC: the summary case of that id and metric
            _, cid, met = keys[0].split("=")
            o = [c for c in doc["cases"] if c["case_id"] == cid and c["metric"] == met][0]; keys = keys[1:]
        for k in keys[:-1]:
            o = o[int(k)] if isinstance(o, list) else o[k]
        k = keys[-1]
        if isinstance(o, list):
            o[int(k)] = json.loads(a[2])
        elif a[2] == "DELETE":
            del o[k]
        else:
            o[k] = json.loads(a[2])
        json.dump(doc, open(p, "w"), indent=2)
    elif cmd == "dupkey":        # dupkey LINE KEY FIRSTVALUE: give line LINE (1-based) KEY twice
        lines = open(raw).read().split("\n"); n = int(a[0]) - 1
        lines[n] = lines[n].replace('"%s":' % a[1], '"%s":%s,"%s":' % (a[1], a[2], a[1]), 1)
        open(raw, "w").write("\n".join(lines))
    elif cmd == "fault":         # fault JSON: one more fault line
        with open(P("stability", "faults.jsonl"), "a") as f:
            f.write(a[0] + "\n")
    elif cmd == "sameseries":    # sameseries A B: the cases of two summaries are identical
        ca = json.load(open(dirn))["cases"]; cb = json.load(open(a[0]))["cases"]
        sys.exit(0 if ca == cb else 1)
    elif cmd == "field":         # field FILE POINTER: print one value
        o = json.load(open(P(a[0]))); keys = a[1].split("/")
        if keys[0].startswith("case="):
            _, cid, met = keys[0].split("=")
            o = [c for c in o["cases"] if c["case_id"] == cid and c["metric"] == met][0]; keys = keys[1:]
        for k in keys:
            o = o[int(k)] if isinstance(o, list) else o[k]
        print(o if not isinstance(o, str) else o)
    elif cmd == "matrixrow":     # matrixrow MATRIX.json: conclusion of the first row
        print(json.load(open(dirn))["experiments"][0]["conclusion"])
main()
EOF

mk() { "$PYTHON" mk.py "$@"; }

# fresh NAME VARIANT: the example copied to NAME/OP-MOE-0001 with raw data VARIANT (and trace), without its
# seal, decision and summary.
fresh() {
    rm -rf "$1"; mkdir "$1"; cp -R "$EX" "$1/"
    rm -f "$1/$E/SHA256SUMS" "$1/$E/decision.md" "$1/$E/decision.json" "$1/$E/performance/summary.json"
    mk raw "$1/$E" "$2"
}
# summ DIR: write DIR's summary with 200 bootstrap resamples (decide then recomputes with the
# stored count: docs/exp-gate.md --check "with the stored summary's seed, resamples"), to keep
# the script fast; the result of summarize itself is not what these cases test.
summ() { exp-gate summarize --bootstrap 200 "$1" > /dev/null 2>&1; }
# fromG NAME: a copy of the decided G without its decision (summary kept).
fromG() {
    rm -rf "$1"; mkdir "$1"; cp -R "G/$E" "$1/"; rm -f "$1/$E/decision.md" "$1/$E/decision.json"
}
# decision DIR: "decision rule" from DIR/decision.json, or "none"
decision() {
    if [ -f "$1/decision.json" ]; then
        echo "$(sed -n 's/^  "decision": "\([a-z_0-9]*\)",$/\1/p' "$1/decision.json") $(sed -n 's/^  "rule": "\([a-z_0-9]*\)",$/\1/p' "$1/decision.json")"
    else echo none; fi
}
# decide_is NAME DIR EXIT "DECISION RULE"
decide_is() {
    exp-gate decide "$2" > out.txt 2> err.txt; _s=$?; _d=$(decision "$2")
    if [ "$_s" -ne "$3" ]; then notok "$1" "exit $_s, wanted $3 ($4); decision.json: $_d; $(head -c 300 out.txt) $(head -c 300 err.txt)"
    elif [ "$_d" != "$4" ]; then notok "$1" "decision.json says '$_d', wanted '$4'"
    else ok "$1"; fi
}
# not_soak NAME DIR: decide must not reach soak_24h: exit 1 (a verdict) or 2 (could not decide),
# and no decision.json that says soak_24h.
not_soak() {
    exp-gate decide "$2" > out.txt 2> err.txt; _s=$?; _d=$(decision "$2")
    if [ "$_s" -ne 1 ] && [ "$_s" -ne 2 ]; then notok "$1" "exit $_s, wanted 1 or 2 (anything but soak_24h); decision.json: $_d; $(head -c 300 out.txt) $(head -c 200 err.txt)"
    else case "$_d" in soak_24h*) notok "$1" "exit $_s but decision.json says $_d" ;; *) ok "$1" ;; esac; fi
}

# ---------------------------------------------------------------------------------------------
# Good folders.

# The example as shipped: section 17 gives no_merge (gains 6.73 % and 7.87 % < 8 %), docs/exp-gate.md
# "The example experiment". Its decision.md is exp-gate's own, so deciding it again is exit 1, not 2.
rm -rf ex; mkdir ex; cp -R "$EX" ex/; rm -f ex/$E/SHA256SUMS
decide_is example-no-merge ex/$E 1 "no_merge otherwise"

# G: every graph-level case (p128-o1 TTFT, p512-o1 TTFT, p128-o32 TPOT) -10.000 %, >= 8 %;
# 10 warm-ups, 30 steady runs a side; no unsteady sample; trace -15 % on grouped_moe_dense and the
# graph -10 % >= 3 % (so bottleneck_moved does not hold); faults: one recovered, retested timeout.
# Section 17 rule 4 -> soak_24h, exit 0 (docs/exp-gate.md decide table).
fresh G G; summ G/$E
decide_is good-10pct-soak G/$E 0 "soak_24h graph_gain"
# The decided G is a complete section 3 folder: manifest-verify passes it (summary-follows included).
expect_exit good-folder-verifies 0 manifest-verify G/$E
# summarize --check on G's summary: every number follows (exit 0).
expect_exit good-summary-checks 0 exp-gate summarize --check G/$E
# Deciding again finds its own decision.md identical: not a hand-written difference, same exit 0.
cp G/$E/decision.md g-decision.md
expect_exit good-redecide-same 0 exp-gate decide G/$E
if cmp -s g-decision.md G/$E/decision.md; then ok good-redecide-unchanged; else notok good-redecide-unchanged "decision.md changed on an identical rerun"; fi

# G without a stored summary, default 10 000 resamples: decide computes the summary and writes it
# (docs/exp-gate.md "When there is no stored summary, the computed one is written too"), soak_24h,
# and that summary then passes --check.
fresh G2 G
decide_is good-no-summary-soak G2/$E 0 "soak_24h graph_gain"
expect_exit good-written-summary-checks 0 exp-gate summarize --check G2/$E

# N: the same with a 6 % gain (factor 0.94): rule 4 not met (6 < 8) -> no_merge, exit 1.
fresh N N; summ N/$E
decide_is good-6pct-no-merge N/$E 1 "no_merge otherwise"

# Second parser of the same file: the raw lines of G written with reversed key order, \u escapes in
# every string (\u002d for '-', \u0062 for 'b', \u0070 for 'p'), every real as digits + e-N (9.613562 ->
# 9613562e-6, the same decimal) and blanks.
# docs/exp-gate.md: such lines go to jansson, and "both paths give identical cases": the summary's
# cases must equal G's exactly and the decision must still be soak_24h.
fresh reenc reencode; summ reenc/$E
decide_is good-reencoded-soak reenc/$E 0 "soak_24h graph_gain"
if mk sameseries G/$E/performance/summary.json reenc/$E/performance/summary.json 2>/dev/null; then ok good-reencoded-same-cases
else notok good-reencoded-same-cases "summary cases differ from G's when the same requests are spelled differently"; fi

# Whole-graph-only timing (trace with its header and no row): docs/exp-gate.md, attribution is
# whole_graph_only, rule 4 for grouped_moe_dense needs no trace -> still soak_24h; section 7:
# "only the whole-graph candidate is faster", no target line.
fromG wg; rm -f wg/$E/performance/summary.json; head -1 G/$E/performance/raw-device-trace.csv > wg/$E/performance/raw-device-trace.csv; summ wg/$E
decide_is good-whole-graph-soak wg/$E 0 "soak_24h graph_gain"
if grep -q '^Target family' wg/$E/decision.md; then notok good-whole-graph-no-kernel "decision.md attributes to a kernel with no per-op trace"; else ok good-whole-graph-no-kernel; fi

# Matrix over G: conclusion soak_24h (rule graph_gain), exit 0.
exp-gate matrix --json mg.json G/$E > out.txt 2> err.txt; _s=$?
if [ $_s -eq 0 ] && [ "$(mk matrixrow mg.json 2>/dev/null)" = "soak_24h (rule graph_gain)" ]; then ok good-matrix-soak
else notok good-matrix-soak "exit $_s, row: $(mk matrixrow mg.json 2>&1 | head -c 200)"; fi

# ---------------------------------------------------------------------------------------------
# Folders manifest-verify rejects.

# judgement: docs/manifest-verify.md controlled-equal; handbook section 3 (one main factor, all else
# controlled). A candidate measured on other firmware is not the experiment the hypothesis states;
# a demanding user expects decide to refuse (2) or at least not soak such a folder.
fromG fw; sed -i 's/"firmware": "1.9.0-r3"/"firmware": "1.9.0-r4"/' fw/$E/candidate/manifest.json
not_soak mv-firmware-changed fw/$E

# judgement: artifact-hash (handbook 18.1 calbin and SHA-256): the calbin that was measured is
# not the one the manifests and hypothesis name.
fromG cb; printf 'X' >> cb/$E/candidate/qwen3-30b-a3b-prefill.calbin
not_soak mv-calbin-hash cb/$E

# ---------------------------------------------------------------------------------------------
# accuracy/result.json says "verdict": "pass" but its own numbers fail the hypothesis'
# acceptance or section 6's tiers (docs/manifest-verify.md accuracy-agrees names exactly these).
# Section 17 rule 1: correctness fails -> reject (exit 1); exit 2 (refuse the contradiction) is
# also acceptable; soak is not.
fromG t1; mk json t1/$E accuracy/result.json logits/top1_match 0.998          # < top1_match_min 0.999
not_soak acc-pass-but-top1 t1/$E
fromG t5; mk json t5/$E accuracy/result.json logits/top5_overlap 0.9985       # < top5_overlap_min 0.999
not_soak acc-pass-but-top5 t5/$E
fromG gr; mk json gr/$E accuracy/result.json greedy_tokens/exact 99           # section 6: 100 prompts identical
not_soak acc-pass-but-greedy gr/$E
fromG nn; mk json nn/$E accuracy/result.json kernel/new_nan 2                 # section 6/8.4: no new NaN
not_soak acc-pass-but-new-nan nn/$E
fromG lc; mk json lc/$E accuracy/result.json layer/min_cosine 0.9981          # < layer.threshold 0.999
not_soak acc-pass-but-layer-cosine lc/$E

# ---------------------------------------------------------------------------------------------
# Raw data.

# raw-requests.jsonl missing, summary.json present. summarize --check: "no raw data" -> exit 2
# (docs/exp-gate.md table). decide: judgement: the docs let decide use the stored summary, but a
# folder without its section 3 raw data is one manifest-verify rejects (layout) and section 18.8
# demands raw data, "not only a summary": no soak on a summary alone.
fromG nr; rm nr/$E/performance/raw-requests.jsonl
expect_exit raw-missing-check-2 2 exp-gate summarize --check nr/$E
not_soak raw-missing-decide nr/$E

# Duplicate JSON key on a raw line: docs/exp-gate.md, a duplicate key is not understood by the
# scanner and goes to jansson, which refuses it (FILE:LINE): invalid input -> decide exit 2, and no
# decision written. Line 51 is candidate-prefill-p128-o1-010 (measured): "ttft_ms":30.0 first.
fresh dk G; mk dupkey dk/$E 51 ttft_ms 30.0
decide_is raw-dup-key-ttft dk/$E 2 "none"
expect_grep raw-dup-key-names-line 'raw-requests\.jsonl:51' err.txt
expect_absent raw-dup-key-no-summary dk/$E/performance/summary.json
# The same on the side: a baseline line that also says it is a candidate (line 12: measured).
fresh ds G; mk dupkey ds/$E 12 side '"candidate"'
decide_is raw-dup-key-side ds/$E 2 "none"
# ... and on --check of G's own summary (a finding is not enough: the input is invalid, exit 2).
fromG dc; mk dupkey dc/$E 12 warmup true
expect_exit raw-dup-key-check-2 2 exp-gate summarize --check dc/$E

# A repeated request_id: the last measured candidate run of prefill-p512-o1 (run 39) is lost and
# run 10's line is copied in its place. manifest-verify request-unique: "a repeated line ... is not
# counted as a run": 29 distinct runs < 30 -> insufficient -> never soak_24h (exit 1), or invalid (2).
fresh dr dupreq; summ dr/$E
not_soak raw-repeated-request-id dr/$E
# manifest-verify itself rejects that folder (request-unique, exit 1) once the summary is there.
expect_exit raw-repeated-request-id-verify 1 manifest-verify dr/$E
# N (6 %) with the 2 fastest candidate lines of each case copied 20 times (request_ids repeated):
# counted, they lift every graph-level gain to 8.5-9.5 % (numpy on the same samples); not counted,
# it stays 6 % -> no_merge. Never soak.
fresh df dupfast; summ df/$E
not_soak raw-repeated-fast-lines df/$E

# Timeouts dropped: 12 more measured candidate runs of prefill-p128-o1 hit the 2 s watchdog (no
# ttft_ms; npu_wait 2 s; logged in faults.jsonl, recovered, retest passed). judgement: a request
# without a latency is the worst latency, not a missing one (section 7 is about latency tails;
# section 17 "cannot cover P99 with averages"): counted as worst, the candidate's P99 is >= 2000 ms
# vs 10.9 ms -> p99_sla reject; dropped, the folder soaks on its 30 fast runs.
fresh to timeouts; summ to/$E
not_soak raw-timeouts-dropped to/$E

# A case on one side only: prefill-p16-o1 measured on the baseline only (10 + 30 runs). judgement:
# docs/exp-gate.md lists it in one_sided; the candidate was never shown on that shape, so "every
# graph-level case improves" cannot be claimed: a demanding user expects no soak.
fresh os onesided; summ os/$E
not_soak raw-one-sided-case os/$E

# A difference whose bootstrap CI includes zero: prefill-p128-o1 bimodal: baseline 14 runs at
# 9.00-9.13 ms and 16 at 11.00-11.15 ms (median 11.005), candidate 16 fast and 14 slow (median
# 9.145): -16.9 % by medians, but the 95 % bootstrap CI of either median is [9.095, 11.05] (numpy,
# 10 000 resamples) and that of the difference [-1.94, +1.91] ms. judgement: section 7 asks for the
# CI precisely so that such a gain is not taken as one: no soak.
fresh bm bimodal; summ bm/$E
not_soak raw-ci-includes-zero bm/$E

# ---------------------------------------------------------------------------------------------
# Two changed flags for a single-factor hypothesis (handbook section 3; manifest-verify
# one-main-factor). judgement: decide must not soak a result that cannot be attributed.
# (a) declared: the hypothesis and the candidate manifest both change moe_bucket_threshold and
# attention_seq_tile (128 -> 256), the command says so too.
fromG f2; d=f2/$E
sed -i 's/^    moe_bucket_threshold: 8$/    moe_bucket_threshold: 8\n    attention_seq_tile: 256/' $d/hypothesis.yaml
sed -i 's/--attention-seq-tile=128/--attention-seq-tile=256/; s/"attention_seq_tile": 128/"attention_seq_tile": 256/; s/^    "moe_bucket_threshold": 8$/    "moe_bucket_threshold": 8,\n    "attention_seq_tile": 256/' $d/candidate/manifest.json
not_soak two-flags-declared $d
# (b) hidden: the hypothesis still names one flag, the candidate manifest changes two.
fromG f3; d=f3/$E
sed -i 's/--attention-seq-tile=128/--attention-seq-tile=256/; s/"attention_seq_tile": 128/"attention_seq_tile": 256/' $d/candidate/manifest.json
not_soak two-flags-hidden $d

# ---------------------------------------------------------------------------------------------
# Faults (stability/faults.jsonl).

# A candidate nan_output, even recovered and retested: judgement: section 6 "NaN/Inf 不新增",
# section 8.4 "无新 overflow/NaN": a NaN the candidate produced is a correctness failure -> reject.
fromG fn; mk fault fn/$E '{"time":"2026-08-03T06:00:00Z","side":"candidate","case_id":"prefill-p512-o1","request_id":"candidate-prefill-p512-o1-020","chip":0,"kind":"nan_output","severity":"error","message":"logits row 3 all NaN","recovered":true,"retest_after_reset":"passed"}'
not_soak fault-nan-output fn/$E
# A fatal candidate fault never retested after reset: judgement: section 18.7 (error path and
# retest after reset) and section 10 (after reset/timeout no old state reused): a fatal fault with
# no retest on record cannot go to a soak that assumes the error path works.
fromG ff; mk fault ff/$E '{"time":"2026-08-03T06:00:00Z","side":"candidate","case_id":"prefill-p128-o1","chip":1,"kind":"device_error","severity":"fatal","message":"chip 1 ECC uncorrectable; reset","recovered":true,"retest_after_reset":"not_run"}'
not_soak fault-fatal-no-retest ff/$E
# A candidate fault whose retest failed: docs/exp-gate.md rule 1 -> reject, exit 1.
fromG fr; mk fault fr/$E '{"time":"2026-08-03T06:00:00Z","side":"candidate","case_id":"prefill-p128-o32","chip":0,"kind":"hang","severity":"error","message":"stream stalled","recovered":true,"retest_after_reset":"failed"}'
decide_is fault-retest-failed fr/$E 1 "reject correctness"

# ---------------------------------------------------------------------------------------------
# Steadiness (section 7: samples taken while temperature/clock were not steady are never mixed;
# section 17: soak needs power/thermal stable; docs/exp-gate.md steady band 2 % / +-5 C, any reading).
# All runs below say steady: true; exp-gate must find them unsteady from their readings. Each
# variant ADDS 10 (or 1) drifting measured runs to G's 30 steady ones, so that after the unsteady
# runs are kept apart the case still has >= 30 and is sufficient: the only reason left not to soak
# is "no unsteady sample anywhere" (rule 4) -> no_merge, exit 1, unsteady_samples > 0.
unsteady_is() {
    decide_is "$1" "$2" 1 "no_merge otherwise"
    if grep -Eq '"unsteady_samples": [1-9]' "$2/decision.json" 2>/dev/null; then ok "$1-counted"
    else notok "$1-counted" "decision.json records no unsteady sample"; fi
}
# Candidate prefill-p512-o1 runs 40-49: chip 1 throttles 1390 -> 1300 MHz in 10 MHz steps. The
# reference (median run centre over 40 runs, 30 of them at ~1400) is ~1400 MHz; 2 % is 28 MHz, so
# the runs at 1370 MHz and below (8 runs) are out of the band.
fresh cr clock_ramp; summ cr/$E
unsteady_is steady-clock-ramp-chip1 cr/$E
# Baseline prefill-p128-o1 runs 40-49: chip 0 heats 63 -> 74.7 C (1.3 C a run). Reference centre
# ~62.5 C, band +-5 C: the runs above 67.5 C (6 runs) are out.
fresh tr temp_ramp; summ tr/$E
unsteady_is steady-temp-ramp-baseline tr/$E
# One more candidate run (prefill-p128-o1 run 40) with chip 1 at 1360 MHz, 2.86 % under 1400:
# "any reading" more than 2 % from the reference -> unsteady, although its centre (1380) is 1.4 % off.
fresh sp spread; summ sp/$E
unsteady_is steady-one-reading-off sp/$E
# One more baseline run flagged steady: false (prefill-p512-o1 run 40): kept apart and counted.
fresh sf steady_false; summ sf/$E
unsteady_is steady-flag-false sf/$E

# ---------------------------------------------------------------------------------------------
# Other section 17 rules on G with one change.

# TPOT is the graph-level metric of prefill-p128-o32 (32 tokens): its TTFT still -10 % but its TPOT
# only -5 % (>= the 3 % phase floor, so no bottleneck_moved) -> rule 4 not met (5 < 8) -> no_merge
# (docs/exp-gate.md "graph-level metric"); judged on TTFT it would soak.
fresh tw tpot_weak; summ tw/$E
decide_is rule-tpot-is-graph-metric tw/$E 1 "no_merge otherwise"
# TPOT P99 regression: the two slowest candidate TPOTs of prefill-p128-o32 at 5.04 ms: P99 with
# h = 28.71 is 5.04 vs the baseline's 4.354 ms: +15.8 % > 5 % (median still -10 %) -> p99_sla reject.
fresh pt p99_tpot; summ pt/$E
decide_is rule-p99-tpot-reject pt/$E 1 "reject p99_sla"
# Bottleneck moved: graph only -2 % (factor 0.98) while the trace's target family is -15 %
# (>= 8 %) and 2 % < the 3 % phase floor -> investigate, exit 1.
fresh bn bottleneck; summ bn/$E
decide_is rule-bottleneck-investigate bn/$E 1 "investigate bottleneck_moved"
# acceptance.graph_improvement_min_pct: 12 -> G's 10 % is not enough -> no_merge.
fromG gt
sed -i 's/^  target_metric_improvement_min_pct: 8$/  target_metric_improvement_min_pct: 8\n  graph_improvement_min_pct: 12/' gt/$E/hypothesis.yaml
decide_is rule-graph-threshold-12 gt/$E 1 "no_merge otherwise"
# acceptance.p99_regression_max_pct missing: required (docs/exp-gate.md decide inputs) -> exit 2,
# and no partial output left (contract section 1).
fromG np; sed -i '/p99_regression_max_pct/d' np/$E/hypothesis.yaml
decide_is hyp-missing-p99-bound np/$E 2 "none"
expect_absent hyp-missing-p99-no-md np/$E/decision.md

# ---------------------------------------------------------------------------------------------
# Duplicate keys in the other documents decide reads (docs/manifest-verify.md: duplicate keys make
# a document unparseable -> exit 2; contract section 1: invalid input is 2, never a verdict).
fromG ad; sed -i 's/"verdict": "pass",/"verdict": "fail", "verdict": "pass",/' ad/$E/accuracy/result.json
decide_is dupkey-accuracy-verdict ad/$E 2 "none"
fromG hd; sed -i 's/^  p99_regression_max_pct: 5$/  p99_regression_max_pct: 500\n  p99_regression_max_pct: 5/' hd/$E/hypothesis.yaml
decide_is dupkey-hypothesis-yaml hd/$E 2 "none"
fromG fd; printf '%s\n' '{"time":"2026-08-03T06:00:00Z","side":"candidate","kind":"hang","severity":"error","message":"stall","recovered":false,"retest_after_reset":"failed","recovered":true,"retest_after_reset":"passed"}' >> fd/$E/stability/faults.jsonl
decide_is dupkey-faults-line fd/$E 2 "none"

# ---------------------------------------------------------------------------------------------
# Stored summary that does not follow (docs/exp-gate.md --check: findings name case and field,
# exit 1; decide: exit 2 naming the first finding).
fromG sm; mk json sm/$E performance/summary.json case=prefill-p512-o1=ttft_ms/delta_pct -10.4   # true -10.000
expect_exit summary-delta-check 1 exp-gate summarize --check sm/$E
expect_grep summary-delta-names-case 'prefill-p512-o1' out.txt
decide_is summary-delta-decide-2 sm/$E 2 "none"
# "10.6 cannot stand for 10.564": G's p128-o1 TTFT baseline p90 (10.747057) written as 10.7: the
# allowance is 5e-5 relative (0.00054 ms), the error 0.047 ms -> a finding, exit 1.
fromG sr; v=$(mk field sr/$E performance/summary.json case=prefill-p128-o1=ttft_ms/baseline/p90)
mk json sr/$E performance/summary.json case=prefill-p128-o1=ttft_ms/baseline/p90 "$("$PYTHON" -c "print(round($v, 1))")"
expect_exit summary-rounded-p90-check 1 exp-gate summarize --check sr/$E
# A case of the raw data missing from the summary is a finding.
fromG sc; "$PYTHON" -c '
import json,sys; p=sys.argv[1]; d=json.load(open(p)); d["cases"]=[c for c in d["cases"] if c["case_id"]!="prefill-p512-o1"]; json.dump(d,open(p,"w"))' sc/$E/performance/summary.json
expect_exit summary-case-missing-check 1 exp-gate summarize --check sc/$E

# ---------------------------------------------------------------------------------------------
# matrix trusting a stale or forged decision.json. judgement: docs/exp-gate.md says the conclusion
# comes "from decision.json"; a demanding user expects matrix not to report soak_24h for a folder
# whose decision no longer follows from its inputs: exit 2 or a conclusion that is not soak_24h.
matrix_not_soak() {
    rm -f "$1.json"; exp-gate matrix --json "$1.json" "$2" > out.txt 2> err.txt; _s=$?
    if [ "$_s" -eq 2 ]; then ok "$1"; return; fi
    _c=$(mk matrixrow "$1.json" 2>/dev/null)
    case "$_c" in soak_24h*) notok "$1" "exit $_s, conclusion '$_c' for a folder that decides no_merge" ;; *) ok "$1" ;; esac
}
# (a) G decided soak, then its performance data replaced by N's (6 %) without deciding again.
rm -rf st; mkdir st; cp -R G/$E st/; rm -rf st/$E/performance; cp -R N/$E/performance st/$E/
matrix_not_soak matrix-stale-decision st/$E
# (b) N's decision.json edited to soak_24h / graph_gain (schema-valid), decision.md left no_merge.
rm -rf fj; mkdir fj; cp -R N/$E fj/
sed -i 's/"decision": "no_merge"/"decision": "soak_24h"/; s/^  "rule": "otherwise"/  "rule": "graph_gain"/' fj/$E/decision.json
matrix_not_soak matrix-forged-decision fj/$E

# ---------------------------------------------------------------------------------------------
# A case id with a newline that forges a decision.md line: N (no_merge) plus the case
# "prefill-p16-o1\nDecision: **24 h soak**, then merge if the soak shows no new fault." measured on
# both sides. The id is not in the input manifest (unknown-case) and breaks its pattern; raw
# case_id is any string. decide must not soak (exit 1 or 2), and if decision.md is written it holds
# exactly one "Decision:" line, and no line that claims the soak.
fresh nl newline; summ nl/$E
not_soak newline-case-decide nl/$E
if [ -f nl/$E/decision.md ] && grep -q '^Decision: \*\*24 h soak' nl/$E/decision.md; then
    notok newline-case-forged-line "decision.md of a no_merge folder has a line 'Decision: **24 h soak**'"
else ok newline-case-forged-line; fi
# and in the Markdown matrix: one table row per folder, no forged line either.
exp-gate matrix nl/$E > mnl.md 2> err.txt
if grep -q '^Decision:' mnl.md; then notok newline-case-matrix "matrix Markdown has a line 'Decision:' from a case id"; else ok newline-case-matrix; fi

# The P99 attack above with acceptance.keep_experiment_on_p99_regression: 1 (docs/exp-gate.md rule
# 2): experiment_only instead of reject, still exit 1.
rm -rf pk; mkdir pk; cp -R pt/$E pk/; rm -f pk/$E/decision.md pk/$E/decision.json
sed -i 's/^  p99_regression_max_pct: 5$/  p99_regression_max_pct: 5\n  keep_experiment_on_p99_regression: 1/' pk/$E/hypothesis.yaml
decide_is rule-p99-experiment-only pk/$E 1 "experiment_only p99_sla"

# matrix never overwrites an existing output without --force (docs/exp-gate.md table: exit 2;
# contract section 1), and leaves it byte for byte; with --force it is replaced.
echo "keep me" > mx.md
expect_exit matrix-no-force-2 2 exp-gate matrix --markdown mx.md G/$E
if [ "$(cat mx.md)" = "keep me" ]; then ok matrix-no-force-kept; else notok matrix-no-force-kept "mx.md was changed"; fi
expect_exit matrix-force-0 0 exp-gate matrix --force --markdown mx.md G/$E
expect_grep matrix-force-written 'OP-MOE-0001' mx.md
