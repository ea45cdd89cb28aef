# exp-gate decides only on evidence it has checked itself (issue 26). Each folder is a copy of
# the example experiment with one thing wrong; the expected outcome is worked out by hand from
# the edit (the example's TTFT medians, 10.564 and 37.273 ms, scaled by 0.88 give a 12 % gain,
# above the 8 % threshold: soak_24h when nothing is wrong).
. "$GOLDEN_ROOT/tests/e2e/lib.sh"
EX="$GOLDEN_ROOT/examples/experiment/OP-MOE-0001"
PY=/usr/bin/python3
command -v $PY >/dev/null 2>&1 || PY=python3

fresh() {
    rm -rf "$1"; mkdir -p "$1"; cp -r "$EX" "$1/OP-MOE-0001"
    rm -f "$1/OP-MOE-0001/performance/summary.json" "$1/OP-MOE-0001/decision.md" \
          "$1/OP-MOE-0001/decision.json" "$1/OP-MOE-0001/SHA256SUMS"
    echo "$1/OP-MOE-0001"
}

edit() {
    _d=$1; shift
    $PY - "$_d" "$@" <<'PY'
import json, sys, os, copy
d = sys.argv[1]; code = sys.argv[2]
raw = os.path.join(d, "performance/raw-requests.jsonl")
def lines():
    return [json.loads(l) for l in open(raw) if l.strip()]
def save(rs):
    with open(raw, "w") as f:
        for r in rs:
            f.write((r if isinstance(r, str) else json.dumps(r)) + "\n")
def scale(side, factor, case=None):
    rs = lines()
    for r in rs:
        if r["side"] == side and (case is None or r["case_id"] == case) and not r["warmup"]:
            r["ttft_ms"] = round(r["ttft_ms"] * factor, 6)
    save(rs)
def sub(rel, old, new):
    p = os.path.join(d, rel); t = open(p).read()
    assert old in t, (rel, old); open(p, "w").write(t.replace(old, new))
def jedit(rel, fn):
    p = os.path.join(d, rel); j = json.load(open(p)); fn(j); json.dump(j, open(p, "w"), indent=2)
exec(code)
PY
}

decide() { exp-gate decide "$@" > out.txt 2> err.txt; echo $?; }

# 0. the control: the clean gain soaks (so every case below fails for its own edit)
d=$(fresh control); edit "$d" 'scale("candidate", 0.88)'
rc=$(decide "$d")
[ "$rc" = 0 ] && ok "control: a clean 12 % gain soaks" || notok "control: soak" "exit $rc: $(cat err.txt)"

# --- one verification path ---
# 1. a compile log that no longer hashes as its manifest says: manifest-verify's
#    artifact-hash fails, so nothing is decided (the old code soaked it)
d=$(fresh hash); edit "$d" 'scale("candidate", 0.88)'; echo tampered >> "$d/compile/candidate.log"
rc=$(decide "$d")
[ "$rc" = 2 ] && ok "hash: exit 2" || notok "hash: exit 2" "exit $rc: $(cat out.txt err.txt)"
expect_grep "hash: names the rule" 'manifest-verify rule artifact-hash' err.txt
expect_lines "hash: one line" 1 err.txt
expect_absent "hash: no decision.json" "$d/decision.json"
expect_absent "hash: no decision.md" "$d/decision.md"

# 2. two flags changed under a single-factor design: one-main-factor fails: not attributable,
#    nothing decided
d=$(fresh flags); edit "$d" '
scale("candidate", 0.88)
def f(m):
    m["compile"]["flags"]["attention_seq_tile"] = 256
jedit("candidate/manifest.json", f)'
rc=$(decide "$d")
[ "$rc" = 2 ] && ok "two flags: exit 2, no soak" || notok "two flags: exit 2" "exit $rc: $(cat err.txt)"
expect_grep "two flags: names the rule" 'manifest-verify rule (one-main-factor|manifest-agrees|compile-command)' err.txt

# 3. a repeated request_id (a copied line): manifest-verify's request-unique fails
d=$(fresh dup); edit "$d" '
scale("candidate", 0.88)
rs = lines(); rs.append(rs[-1]); save(rs)'
rc=$(decide "$d")
[ "$rc" = 2 ] && ok "repeated request: exit 2" || notok "repeated request: exit 2" "exit $rc"
expect_grep "repeated request: rule request-unique" 'rule request-unique' err.txt

# --- accuracy read for its numbers ---
# 4. verdict pass, but top-1 0.99 under the hypothesis' 0.999: reject (correctness)
d=$(fresh top1); edit "$d" 'scale("candidate", 0.88); sub("accuracy/result.json", "\"top1_match\": 0.9995", "\"top1_match\": 0.99")'
rc=$(decide "$d")
[ "$rc" = 1 ] && ok "top-1 under its bound: exit 1" || notok "top-1: exit 1" "exit $rc: $(cat err.txt)"
expect_grep "top-1: reject" '"decision": "reject"' "$d/decision.json"
expect_grep "top-1: by correctness" '"rule": "correctness"' "$d/decision.json"
expect_grep "top-1: the number named" 'logits.top1_match is 0.99, bound >= 0.999' "$d/decision.json"
# 5. verdict pass with a new NaN in the kernel tier
d=$(fresh nan); edit "$d" 'scale("candidate", 0.88); sub("accuracy/result.json", "\"new_nan\": 0", "\"new_nan\": 2")'
decide "$d" > /dev/null
expect_grep "new NaN: reject" '"decision": "reject"' "$d/decision.json"
expect_grep "new NaN: named" 'kernel.new_nan is 2, bound <= 0' "$d/decision.json"
# 6. 99 of 100 greedy sequences exact
d=$(fresh greedy); edit "$d" 'scale("candidate", 0.88); sub("accuracy/result.json", "\"exact\": 100", "\"exact\": 99")'
decide "$d" > /dev/null
expect_grep "greedy 99/100: reject" '"decision": "reject"' "$d/decision.json"
expect_grep "greedy 99/100: named" 'greedy_tokens.exact \(of greedy_tokens.prompts\) is 99, bound >= 100' "$d/decision.json"
# 7. the layer cosine under its own threshold
d=$(fresh cos); edit "$d" 'scale("candidate", 0.88); sub("accuracy/result.json", "\"min_cosine\": 0.99962", "\"min_cosine\": 0.998")'
decide "$d" > /dev/null
expect_grep "layer cosine: reject" '"decision": "reject"' "$d/decision.json"
expect_grep "layer cosine: named" 'layer.min_cosine is 0.998, bound >= 0.999' "$d/decision.json"

# --- the summary always from the raw data ---
# 8. no raw requests, a stored summary claiming a gain: never decided on (the old code used it)
d=$(fresh noraw); edit "$d" 'scale("candidate", 0.88)'
exp-gate summarize "$d" > /dev/null 2>&1
rm "$d/performance/raw-requests.jsonl"
rc=$(decide "$d")
[ "$rc" = 2 ] && ok "no raw data: exit 2" || notok "no raw data: exit 2" "exit $rc: $(cat out.txt)"
expect_grep "no raw data: named" 'raw-requests.jsonl' err.txt
expect_absent "no raw data: no decision" "$d/decision.json"

# --- matrix never trusts a decision.json it did not write ---
# 9. the example's folder with a forged decision.json saying soak_24h
d=$(fresh forged)
$PY - "$EX/decision.json" "$d/decision.json" <<'PY'
import json, sys
j = json.load(open(sys.argv[1])); j["decision"] = "soak_24h"; j["rule"] = "graph_gain"
json.dump(j, open(sys.argv[2], "w"), indent=2)
PY
expect_exit "forged: matrix exit 0" 0 exp-gate matrix --json m.json "$d"
$PY - m.json <<'PY'
import json, sys
e = json.load(open(sys.argv[1]))["experiments"][0]
print("ok forged: re-derived no_merge" if e["conclusion"] == "no_merge (rule otherwise)" else f"not ok forged: conclusion {e['conclusion']}")
print("ok forged: the stored file is named" if any("decision.json in the folder says soak_24h" in u for u in e["uncertain"]) else f"not ok forged: uncertain {e['uncertain']}")
PY
# 10. the matrix runs the same verification: a folder failing it stops the matrix
d=$(fresh mhash); echo tampered >> "$d/compile/candidate.log"
expect_exit "matrix: unverified folder exit 2" 2 exp-gate matrix --json m2.json "$d"
expect_grep "matrix: names the rule" 'rule artifact-hash' err.txt
expect_absent "matrix: nothing written" m2.json

# --- one strict reader for the raw requests (libgolden/doc, the one manifest-verify uses) ---
# summarize alone (no manifest-verify in front) must refuse what manifest-verify refuses.
strict() { # strict NAME PYTHON-LINE-EDIT PATTERN: the 41st line (a measured run) rewritten
    _d=$(fresh "s-$1")
    $PY - "$_d/performance/raw-requests.jsonl" "$2" <<'PY'
import sys
p = sys.argv[1]; ls = open(p, "rb").read().split(b"\n")
l = ls[40]; exec(sys.argv[2]); ls[40] = l
open(p, "wb").write(b"\n".join(ls))
PY
    exp-gate summarize "$_d" > out.txt 2> err.txt; _rc=$?
    if [ $_rc -eq 2 ] && grep -Eq -- "$3" err.txt && [ "$(wc -l < err.txt)" -eq 1 ]; then
        ok "strict: $1"; else notok "strict: $1" "exit $_rc: $(head -c 300 err.txt)"; fi
    [ -e "$_d/performance/summary.json" ] && notok "strict: $1: nothing written" || ok "strict: $1: nothing written"
}
strict "duplicate key" 'l = l.replace(b"{", b"{\"request_id\":\"x\",", 1)' 'raw-requests.jsonl:41:[0-9]+: .*duplicate'
strict "invalid UTF-8" 'l = l.replace(b"\"side\"", b"\"sid\xff\"", 1)' 'raw-requests.jsonl:41:[0-9]+: .*UTF-8'
strict "NUL byte" 'l = l.replace(b"\"request_id\":\"", b"\"request_id\":\"\x00", 1)' 'raw-requests.jsonl:41:[0-9]+: .*NUL'
strict "lone surrogate" 'l = l.replace(b"\"request_id\":\"", b"\"request_id\":\"\\ud800", 1)' 'raw-requests.jsonl:41:[0-9]+: .*surrogate'
strict "number out of range" 'import re; l = re.sub(rb"\"ttft_ms\":[0-9.]+", b"\"ttft_ms\":1e999", l)' 'raw-requests.jsonl:41:[0-9]+: .*(range|overflow)'
strict "request_id required" 'import re; l = re.sub(rb"\"request_id\":\"[^\"]*\",", b"", l)' 'raw-requests.jsonl:41:[0-9]+: needs request_id'
strict "run required" 'import re; l = re.sub(rb"\"run\":[0-9]+,", b"", l)' 'raw-requests.jsonl:41:[0-9]+: needs request_id, run'
strict "stages required" 'import re; l = re.sub(rb",\"stages\":.*}$", b"}", l)' 'raw-requests.jsonl:41:[0-9]+: stages .* is required'
strict "the phase latency required" 'import re; l = re.sub(rb"\"ttft_ms\":[0-9.]+,", b"", l)' 'raw-requests.jsonl:41:[0-9]+: a prefill request needs ttft_ms'

# decide on the duplicate key: exit 2 (the old code soaked the 12 % gain)
d=$(fresh dupkey); edit "$d" 'scale("candidate", 0.88)
ls = open(raw).read().split("\n"); ls[40] = ls[40].replace("{", "{\"request_id\":\"x\",", 1)
open(raw, "w").write("\n".join(ls))'
rc=$(decide "$d")
[ "$rc" = 2 ] && ok "duplicate key: decide exit 2" || notok "duplicate key: decide exit 2" "exit $rc"
expect_grep "duplicate key: decide names the place" 'raw-requests.jsonl:41:[0-9]+' err.txt

# a repeated request_id counts once in summarize: baseline prefill-p128-o1 keeps n = 30
d=$(fresh rep); edit "$d" 'rs = lines(); rs.append(rs[40]); save(rs)'
exp-gate summarize "$d" > /dev/null 2>&1
$PY - "$d/performance/summary.json" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
c = [c for c in s["cases"] if c["case_id"] == "prefill-p128-o1" and c["metric"] == "ttft_ms"][0]
print("ok repeated id: counted once (n 30)" if c["baseline"]["n"] == 30 else f"not ok repeated id: n {c['baseline']['n']}")
print("ok repeated id: reported" if s.get("repeated_request_ids") == 1 else f"not ok repeated id: {s.get('repeated_request_ids')}")
PY
expect_exit "repeated id: summarize --check finds it" 1 exp-gate summarize --check "$d"
expect_grep "repeated id: rule request-unique" 'request-unique' out.txt

# /dev/zero and a FIFO without a writer as raw-requests.jsonl: refused, no hang, bounded memory
d=$(fresh zero); rm "$d/performance/raw-requests.jsonl"; ln -s /dev/zero "$d/performance/raw-requests.jsonl"
# (a virtual-memory cap guards the machine should the limit regress; AddressSanitizer's shadow
# memory cannot live under one, so a sanitized build runs without it)
vcap="ulimit -v 1500000;"; grep -q __asan_init "$(command -v exp-gate)" 2>/dev/null && vcap=""
(eval "$vcap"; /usr/bin/time -f '%M' -o rss.txt timeout 60 exp-gate summarize "$d") > out.txt 2> err.txt
rc=$?
[ $rc -eq 2 ] && ok "/dev/zero: exit 2" || notok "/dev/zero: exit 2" "exit $rc: $(head -c 200 err.txt)"
grep -q 'line longer than' err.txt && ok "/dev/zero: line limit named" || notok "/dev/zero: line limit named" "$(head -c 200 err.txt)"
rss=$(tail -n 1 rss.txt)
[ "${rss:-999999999}" -lt 400000 ] && ok "/dev/zero: bounded memory (${rss} KiB)" || notok "/dev/zero: bounded memory" "${rss} KiB"
d=$(fresh fifo); rm "$d/performance/raw-requests.jsonl"; mkfifo "$d/performance/raw-requests.jsonl"
timeout 20 exp-gate summarize "$d" > out.txt 2> err.txt
rc=$?
[ $rc -eq 2 ] && ok "FIFO without a writer: exit 2, no hang" || notok "FIFO: exit 2" "exit $rc: $(head -c 200 err.txt)"

# the trace through the same readers: a duplicate key in a JSON Lines trace, a NUL in a CSV one
d=$(fresh tracejl); rm "$d/performance/raw-device-trace.csv"
printf '{"side":"baseline","chip":0,"family":"moe_gate","start_cycle":0,"end_cycle":9,"chip":1}\n' > "$d/performance/raw-device-trace.jsonl"
expect_exit "trace JSONL duplicate key: exit 2" 2 exp-gate summarize "$d"
expect_grep "trace JSONL duplicate key: place" 'raw-device-trace.jsonl:1:[0-9]+: .*duplicate' err.txt
d=$(fresh tracecsv); printf '0,0,x.0,moe_gate,0,9\0\n' >> "$d/performance/raw-device-trace.csv"
expect_exit "trace CSV NUL: exit 2" 2 exp-gate summarize "$d"
expect_grep "trace CSV NUL: place" 'raw-device-trace.csv:26:[0-9]+: .*NUL' err.txt

# --- a request without its latency counts as the worst latency ---
# candidate prefill-p128-o1: 3 of its 30 measured runs time out (no ttft_ms). By hand: n stays
# 30, the P99 rank h = 29 * 0.99 = 28.71 lands between the 29th and 30th values, both +inf,
# so the candidate P99 is +inf: the P99 SLA rejects. The median (ranks 15 and 16 of 30) is
# finite: numpy's median of the 27 finite values and 3 x 1e300 stands for it.
d=$(fresh timeout); edit "$d" '
scale("candidate", 0.88)
rs = lines(); k = 0
for r in rs:
    if r["side"] == "candidate" and r["case_id"] == "prefill-p128-o1" and not r["warmup"] and r["run"] in (12, 19, 33):
        del r["ttft_ms"]; r["outcome"] = "timeout"; k += 1
assert k == 3, k
save(rs)'
rc=$(decide "$d")
[ "$rc" = 1 ] && ok "timeouts: exit 1" || notok "timeouts: exit 1" "exit $rc: $(cat err.txt)"
expect_grep "timeouts: reject by the P99 SLA" '"rule": "p99_sla"' "$d/decision.json"
expect_grep "timeouts: counted in the decision" '3 measured request\(s\) of graph-level cases without their latency' "$d/decision.json"
$PY - "$d/performance/summary.json" "$d/performance/raw-requests.jsonl" <<'PY'
import json, sys
import numpy as np
s = json.load(open(sys.argv[1]))
c = [c for c in s["cases"] if c["case_id"] == "prefill-p128-o1" and c["metric"] == "ttft_ms"][0]["candidate"]
xs = [r.get("ttft_ms", 1e300) for r in map(json.loads, open(sys.argv[2])) if r["side"] == "candidate" and r["case_id"] == "prefill-p128-o1" and not r["warmup"]]
ok = c["n"] == 30 and c["failed"] == 3 and c["p99"] is None and abs(c["median"] - float(np.median(xs))) < 1e-6
print("ok timeouts: n 30, failed 3, P99 +inf (null), median as numpy" if ok else f"not ok timeouts: {c} numpy median {np.median(xs)}")
PY
# without an outcome, a missing latency is an error, never a gap
d=$(fresh nolat); edit "$d" '
rs = lines()
for r in rs:
    if r["side"] == "candidate" and r["case_id"] == "prefill-p128-o1" and r["run"] == 12:
        del r["ttft_ms"]
save(rs)'
expect_exit "missing latency without outcome: exit 2" 2 exp-gate decide "$d"
expect_grep "missing latency: named" 'a prefill request needs ttft_ms' err.txt

# --- decision.md escapes data ---
# case ids are patterned by the input manifest's schema; the rollback is free text: a newline
# and a forged table row in it, and markup, must neither forge a line nor pass raw
d=$(fresh esc); edit "$d" 'sub("hypothesis.yaml", "rollback: deploy previous calbin generation", "rollback: \"deploy previous\\n| forged | row |<b>x</b>*y*\"")'
rc=$(decide "$d")
[ "$rc" = 1 ] && ok "escape: decided" || notok "escape: decided" "exit $rc: $(cat err.txt)"
if grep -q '^| forged' "$d/decision.md"; then notok "escape: no forged line"; else ok "escape: no forged line"; fi
expect_grep "escape: newline shown, markup escaped" '^Rollback: deploy previous\\n\\\| forged \\\| row \\\|&lt;b>x&lt;/b>\\\*y\\\*\.$' "$d/decision.md"
if grep -q '<b>' "$d/decision.md"; then notok "escape: no raw HTML"; else ok "escape: no raw HTML"; fi

# --- decision.json and decision.md as a pair ---
d=$(fresh pair); mkdir "$d/decision.md"
expect_exit "pair: decision.md unwritable: exit 2" 2 exp-gate decide --force "$d"
expect_absent "pair: no decision.json alone" "$d/decision.json"

# --- comparisons that are fair ---
# a case measured on the candidate only (prefill-p1-o1, in the input manifest): incomplete, no soak
d=$(fresh lone); edit "$d" '
scale("candidate", 0.88)
rs = lines()
extra = [dict(copy.deepcopy(r), case_id="prefill-p1-o1", request_id="lone-" + r["request_id"])
         for r in rs if r["side"] == "candidate" and r["case_id"] == "prefill-p512-o1"]
save(rs + extra)'
rc=$(decide "$d")
[ "$rc" = 1 ] && ok "one-sided case: no soak (exit 1)" || notok "one-sided case: exit 1" "exit $rc: $(cat err.txt)"
expect_grep "one-sided case: named" 'comparison is incomplete: 1 case\(s\) measured on one side only \(first: prefill-p1-o1 on the candidate side\)' "$d/decision.json"
# a nan_output on the candidate, recovered and retested: still a wrong answer: reject
d=$(fresh nanf); edit "$d" 'scale("candidate", 0.88); sub("stability/faults.jsonl", "\"kind\":\"timeout\"", "\"kind\":\"nan_output\"")'
decide "$d" > /dev/null
expect_grep "nan_output fault: reject" '"decision": "reject"' "$d/decision.json"
expect_grep "nan_output fault: named" 'correctness class \(nan_output, crc_mismatch\)' "$d/decision.json"
# a fatal fault whose retest after reset did not run (on the baseline): no soak
d=$(fresh fatal); edit "$d" '
scale("candidate", 0.88)
sub("stability/faults.jsonl", "\"side\":\"candidate\"", "\"side\":\"baseline\"")
sub("stability/faults.jsonl", "\"severity\":\"warning\"", "\"severity\":\"fatal\"")
sub("stability/faults.jsonl", "\"retest_after_reset\":\"passed\"", "\"retest_after_reset\":\"not_run\"")'
rc=$(decide "$d")
[ "$rc" = 1 ] && ok "fatal fault not retested: no soak" || notok "fatal fault: no soak" "exit $rc: $(cat err.txt)"
expect_grep "fatal fault not retested: said" '1 fatal fault\(s\) whose retest after reset did not run or failed' "$d/decision.json"

# --- absolute SLA budgets beside the relative ---
# p99_ttft_ms_max 30: prefill-p512-o1's candidate P99 after the 12 % gain is about 31.3 ms
d=$(fresh budget); edit "$d" 'scale("candidate", 0.88); sub("hypothesis.yaml", "  p99_regression_max_pct: 5\n", "  p99_regression_max_pct: 5\n  p99_ttft_ms_max: 30\n")'
rc=$(decide "$d")
[ "$rc" = 1 ] && ok "absolute budget: exit 1" || notok "absolute budget: exit 1" "exit $rc: $(cat err.txt)"
expect_grep "absolute budget: p99_sla fired" '"rule": "p99_sla"' "$d/decision.json"
$PY - "$d/decision.json" "$d/performance/raw-requests.jsonl" <<'PY'
import json, sys
import numpy as np
d = json.load(open(sys.argv[1]))
xs = [r["ttft_ms"] for r in map(json.loads, open(sys.argv[2])) if r["side"] == "candidate" and r["case_id"] == "prefill-p512-o1" and not r["warmup"]]
p99 = float(np.percentile(xs, 99))
want = "worst prefill-p512-o1 ttft_ms: P99 %.3f ms, budget 30 ms (%+.3f ms, %+.2f %% over)" % (p99, p99 - 30, 100 * (p99 - 30) / 30)
r = [r for r in d["rules"] if r["rule"] == "p99_sla"][0]["reason"]
print("ok absolute budget: numpy's P99, absolute and relative" if want in r else f"not ok absolute budget: {r!r} wanted {want!r}")
PY
# and a budget the candidate keeps: the soak stands
d=$(fresh budgetok); edit "$d" 'scale("candidate", 0.88); sub("hypothesis.yaml", "  p99_regression_max_pct: 5\n", "  p99_regression_max_pct: 5\n  p99_ttft_ms_max: 40\n")'
rc=$(decide "$d")
[ "$rc" = 0 ] && ok "absolute budget kept: soak" || notok "absolute budget kept: soak" "exit $rc: $(cat err.txt)"

# --- significance: the bootstrap interval of the difference of medians ---
# prefill-p128-o1 made bimodal by hand: baseline 15 runs at 5 ms and 15 at 15 ms (median 10),
# candidate 16 at 5 and 14 at 15 (median 5): a "50 % gain" that one run decides. Resampled
# medians jump between 5, 10 and 15 on both sides, so the interval of the difference holds 0:
# not significant, no soak. The interval itself is checked against a Python implementation of
# the documented default generator (seed XOR mix64(2^32 + side) per side, B = 2000).
d=$(fresh signif); edit "$d" '
scale("candidate", 0.88, "prefill-p512-o1")
rs = lines(); k = {"baseline": 0, "candidate": 0}
for r in rs:
    if r["case_id"] == "prefill-p128-o1" and not r["warmup"]:
        i = k[r["side"]]; k[r["side"]] += 1
        r["ttft_ms"] = 5.0 if i < (15 if r["side"] == "baseline" else 16) else 15.0
save(rs)'
rc=$(decide --bootstrap 2000 "$d")
[ "$rc" = 1 ] && ok "not significant: no soak" || notok "not significant: no soak" "exit $rc: $(cat err.txt)"
expect_grep "not significant: said" 'not significant: the 95 % bootstrap interval of the difference of medians of prefill-p128-o1' "$d/decision.json"
$PY - "$d/performance/summary.json" "$d/performance/raw-requests.jsonl" <<'PY'
import json, sys
M = (1 << 64) - 1
def mix(z):
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & M
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & M
    return z ^ (z >> 31)
def pct(xs, q):
    h = (len(xs) - 1) * q; f = int(h)
    return xs[-1] if f >= len(xs) - 1 or h == f else xs[f] + (h - f) * (xs[f + 1] - xs[f])
import math
G = 0x9E3779B97F4A7C15
# The default generator, splitmix64-order-statistic/v1, as docs/exp-gate.md states it: the two
# order statistics of each resample's median drawn from their Beta distributions (Gamma ratio,
# Marsaglia-Tsang, Box-Muller normals), written here from the text, not from the C.
def unit(st):
    st = (st + G) & M
    return st, ((mix(st) >> 11) + 0.5) * 2.0 ** -53
def normal(st):
    st, u1 = unit(st); st, u2 = unit(st)
    return st, math.sqrt(-2.0 * math.log(u1)) * math.cos(6.283185307179586 * u2)
def gamma(st, a):
    d = a - 1.0 / 3.0; c = 1.0 / math.sqrt(9.0 * d)
    while True:
        while True:
            st, x = normal(st); v = 1.0 + c * x
            if v > 0: break
        v = v * v * v; st, u = unit(st); x2 = x * x
        if u < 1.0 - 0.0331 * x2 * x2 or math.log(u) < 0.5 * x2 + d * (1.0 - v + math.log(v)):
            return st, d * v
def idx(u, n):
    return min(max(int(math.floor(u * n)), 0), n - 1)
def meds(s, seed, B):
    s = sorted(s); n = len(s); out = []; j = (n - 1) // 2 + 1; t = (n - 1) / 2 - (n - 1) // 2
    for b in range(B):
        st = seed ^ mix(b + 1)
        st, ga = gamma(st, float(j)); st, gb = gamma(st, float(n - j + 1))
        u = ga / (ga + gb); ia = idx(u, n); ib = ia
        if n % 2 == 0 and j < n:
            st, w = unit(st)
            ib = max(ia, idx(u + (1.0 - u) * -math.expm1(math.log(w) / (n - j)), n))
        out.append(s[ia] if ia == ib else s[ia] + t * (s[ib] - s[ia]))
    return out
seed, B = 20260802, 2000
rs = [json.loads(l) for l in open(sys.argv[2])]
x = {sd: [r["ttft_ms"] for r in rs if r["case_id"] == "prefill-p128-o1" and r["side"] == sd and not r["warmup"]] for sd in ("baseline", "candidate")}
mb = meds(x["baseline"], seed ^ mix((1 << 32) + 0), B)
mc = meds(x["candidate"], seed ^ mix((1 << 32) + 1), B)
diff = sorted(c - b for b, c in zip(mb, mc))
want = [round(pct(diff, 0.025), 6), round(pct(diff, 0.975), 6)]
s = json.load(open(sys.argv[1]))
got = [c for c in s["cases"] if c["case_id"] == "prefill-p128-o1" and c["metric"] == "ttft_ms"][0]["delta_ci95"]
print("ok difference interval = the Python reference %s, holds 0" % want if got == want and want[0] <= 0 <= want[1] else f"not ok difference interval {got}, reference {want}")
g = [c for c in s["cases"] if c["case_id"] == "prefill-p512-o1" and c["metric"] == "ttft_ms"][0]["delta_ci95"]
print("ok the scaled case's interval lies below 0" if g[1] < 0 else f"not ok p512 interval {g}")
PY

# --- --junit for decide and matrix ---
d=$(fresh junit)
expect_exit "decide --junit: exit is the label's" 1 exp-gate decide --junit d.xml "$d"
$PY - d.xml <<'PY'
import sys, xml.etree.ElementTree as ET
t = ET.parse(sys.argv[1]); cs = {c.get("name"): c for c in t.iter("testcase")}
want = {"correctness": False, "p99_sla": False, "bottleneck_moved": False, "graph_gain": True, "decision": True}
got = {n: c.find("failure") is not None for n, c in cs.items()}
print("ok decide --junit: graph_gain and decision fail for the example's no_merge" if got == want else f"not ok decide --junit {got}")
PY
d2=$(fresh junit2); edit "$d2" 'scale("candidate", 0.88)'
exp-gate decide "$d2" > /dev/null 2>&1
d3=$(fresh junit3); edit "$d3" 'sub("accuracy/result.json", "\"new_nan\": 0", "\"new_nan\": 1")'
expect_exit "matrix --junit: exit 0" 0 exp-gate matrix --json mj.json --junit m.xml "$d2" "$d3"
$PY - m.xml <<'PY'
import sys, xml.etree.ElementTree as ET
t = ET.parse(sys.argv[1]); cs = list(t.iter("testcase"))
fails = [c.find("failure") is not None for c in cs]
print("ok matrix --junit: the reject fails, the soak passes" if sorted(fails) == [False, True] and len(cs) == 2 else f"not ok matrix --junit {fails}")
PY

# --- both sides at the same clock and within the temperature band of each other ---
# each side is steady within its own band, but the candidate ran 100 MHz lower (7.14 %, band
# 2 %): the gain is not comparable, no soak. Then 60 C against 70 C (band 5 C).
d=$(fresh clocks); edit "$d" '
scale("candidate", 0.88)
rs = lines()
for r in rs:
    r["clock_mhz"] = [1400.0, 1400.0] if r["side"] == "baseline" else [1300.0, 1300.0]
save(rs)'
rc=$(decide "$d")
[ "$rc" = 1 ] && ok "different clocks: no soak" || notok "different clocks: no soak" "exit $rc: $(cat err.txt)"
expect_grep "different clocks: said with both numbers" 'the sides ran at different clocks in prefill-p128-o1: 1400.000 -> 1300.000 MHz \(-100.000 MHz, -7.14 %; band 2 %\)' "$d/decision.json"
d=$(fresh temps); edit "$d" '
scale("candidate", 0.88)
rs = lines()
for r in rs:
    r["chip_temperature_c"] = [60.0, 60.5] if r["side"] == "baseline" else [70.0, 70.5]
save(rs)'
rc=$(decide "$d")
[ "$rc" = 1 ] && ok "different temperatures: no soak" || notok "different temperatures: no soak" "exit $rc: $(cat err.txt)"
expect_grep "different temperatures: said" 'different temperatures in prefill-p128-o1: 60.250 -> 70.250 C \(\+10.000 C' "$d/decision.json"
