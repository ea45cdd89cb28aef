# exp-gate decide after the 24 h soak (issue 26): a soak_24h decision and a soak result that
# passes on its own numbers is `merge`; a failing one `no_merge` naming why; a malformed,
# foreign or mismatched one exit 2. Every folder is the example experiment with the candidate's
# TTFT scaled by 0.88 (a 12 % gain over the 8 % threshold: soak_24h, see exp-gate-trust.sh),
# plus a soak result written here by hand; each expectation follows from the edit alone.
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

# edit DIR CODE [SOAKFILE]: python with helpers; soak(**changes) writes a good soak result
# (24 h, no mismatch or fault, the folder's own hashes) with the changes, to SOAKFILE or
# DIR/stability/soak.json.
edit() {
    _d=$1; shift
    $PY - "$_d" "$@" <<'PY'
import json, sys, os, hashlib
d = sys.argv[1]; code = sys.argv[2]
out = sys.argv[3] if len(sys.argv) > 3 else os.path.join(d, "stability/soak.json")
raw = os.path.join(d, "performance/raw-requests.jsonl")
def lines():
    return [json.loads(l) for l in open(raw) if l.strip()]
def save(rs):
    with open(raw, "w") as f:
        for r in rs:
            f.write(json.dumps(r) + "\n")
def scale(side, factor):
    rs = lines()
    for r in rs:
        if r["side"] == side and not r["warmup"]:
            r["ttft_ms"] = round(r["ttft_ms"] * factor, 6)
    save(rs)
def sub(rel, old, new):
    p = os.path.join(d, rel); t = open(p).read()
    assert old in t, (rel, old); open(p, "w").write(t.replace(old, new))
def good():
    man = hashlib.sha256(open(os.path.join(d, "golden/input-manifest.jsonl"), "rb").read()).hexdigest()
    cal = json.load(open(os.path.join(d, "candidate/manifest.json")))["calbin"]["sha256"]
    return {"schema": "calculet-soak-result/v1", "side": "candidate", "backend": "cpu",
            "seed": 1, "concurrency": 4, "duration_s_requested": 86400.0,
            "duration_s": 86412.5, "cases": 2, "requests": 40000, "mismatches": 0,
            "faults": 0, "retests": 0, "retests_passed": 0, "fault_lines": 0,
            "jitter_max_us": 200.0, "interrupted": False, "experiment_id": "OP-MOE-0001",
            "manifest_sha256": man, "graph_sha256": cal}
def soak(drop=(), **kw):
    j = good(); j.update(kw)
    for k in drop:
        del j[k]
    os.makedirs(os.path.dirname(out) or ".", exist_ok=True)
    json.dump(j, open(out, "w"), indent=2)
H1, H2 = "1" * 64, "2" * 64
exec(code)
PY
}

decide() { exp-gate decide "$@" > out.txt 2> err.txt; echo $?; }
field() { $PY -c 'import json,sys; d=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$1" "$2"; }

# 0. controls: without a soak result the gain is soak_24h (no soak_result rule recorded), and
#    the unscaled example stays no_merge by `otherwise`
d=$(fresh nosoak); edit "$d" 'scale("candidate", 0.88)'
rc=$(decide "$d")
[ "$rc" = 0 ] && ok "no soak: soak_24h exits 0" || notok "no soak: exit 0" "exit $rc: $(cat err.txt)"
[ "$(field "$d/decision.json" 'd["decision"], len(d["rules"]), "soak" in d')" = "('soak_24h', 5, False)" ] \
    && ok "no soak: soak_24h, five rules, no soak key" || notok "no soak: document" "$(field "$d/decision.json" 'd["decision"], len(d["rules"])')"

# 1. a good soak in stability/soak.json: merge, exit 0, the figures recorded
d=$(fresh good); edit "$d" 'scale("candidate", 0.88); soak()'
rc=$(decide "$d")
[ "$rc" = 0 ] && ok "good soak: exit 0" || notok "good soak: exit 0" "exit $rc: $(cat err.txt)"
expect_grep "good soak: merge by soak_result" 'OP-MOE-0001: merge \(rule soak_result\)' out.txt
[ "$(field "$d/decision.json" 'd["decision"], d["rule"], d["soak"]["passes"], d["soak"]["required_s"], d["soak"]["requests"]')" = "('merge', 'soak_result', True, 86400.0, 40000)" ] \
    && ok "good soak: decision.json merge, 86400 s required, 40000 requests" \
    || notok "good soak: decision.json" "$(field "$d/decision.json" 'd.get("soak")')"
expect_grep "good soak: decision.md says merge" 'Decision: \*\*merge\*\*' "$d/decision.md"
expect_grep "good soak: decision.md gives the soak's numbers" '`soak_result` -> merge \(\*\*fired\*\*\): the soak passes: 86412\.5 s' "$d/decision.md"
expect_grep "good soak: no hashes is said, and uncertain" 'no per-chip or per-host hashes given' "$d/decision.md"
expect_grep "good soak: no hashes listed as uncertain" 'agreement across chips and hosts is not shown' "$d/decision.md"
expect_exit "good soak: manifest-verify accepts the folder" 0 manifest-verify "$d"
exp-gate decide --force --junit j.xml "$d" > /dev/null 2>&1
expect_grep "good soak: junit has a soak_result case" 'name="soak_result"' j.xml
if grep -A1 'name="soak_result"' j.xml | grep -q '<failure'; then notok "good soak: junit soak_result passes"; else ok "good soak: junit soak_result passes"; fi

# 2. the same soak given by --soak from outside the folder: merge
d=$(fresh given); edit "$d" 'scale("candidate", 0.88); soak()' "$PWD/given-soak.json"
rc=$(decide --soak "$PWD/given-soak.json" "$d")
[ "$rc" = 0 ] && ok "--soak FILE: merge" || notok "--soak FILE: merge" "exit $rc: $(cat err.txt)"
[ "$(field "$d/decision.json" 'd["soak"]["path"].endswith("given-soak.json")')" = True ] \
    && ok "--soak FILE: path recorded" || notok "--soak FILE: path recorded"
rc=$(decide --force --soak "$PWD/nowhere.json" "$d")
[ "$rc" = 2 ] && ok "--soak missing file: exit 2" || notok "--soak missing file: exit 2" "exit $rc"

# --- soaks that fail: no_merge (exit 1) naming why ---
# 3. 23 h: short of section 13.2's 24 h
d=$(fresh short); edit "$d" 'scale("candidate", 0.88); soak(duration_s_requested=82800.0, duration_s=82800.0)'
rc=$(decide "$d")
[ "$rc" = 1 ] && ok "23 h soak: exit 1" || notok "23 h soak: exit 1" "exit $rc: $(cat err.txt)"
expect_grep "23 h soak: no_merge by soak_result" 'no_merge \(rule soak_result\)' out.txt
expect_grep "23 h soak: names the duration" 'the soak fails: the soak ran 82800\.0 s \(23\.00 h\), section 13\.2 asks 24 h = 86400\.0 s' "$d/decision.md"

# 4. the same 13 h soak under a 12 h waiver in the hypothesis: merge, the waiver shown
d=$(fresh waived); edit "$d" '
scale("candidate", 0.88); soak(duration_s_requested=46800.0, duration_s=46800.0)
open(os.path.join(d, "hypothesis.yaml"), "a").write("soak_waiver:\n  duration_h: 12\n  reason: lab slot of 12 h, signed off by the release owner\n")'
rc=$(decide "$d")
[ "$rc" = 0 ] && ok "waiver: 13 h against 12 h merges" || notok "waiver: merge" "exit $rc: $(cat err.txt)"
[ "$(field "$d/decision.json" 'd["soak"]["required_s"], d["soak"]["waiver"]')" = "(43200.0, 'lab slot of 12 h, signed off by the release owner')" ] \
    && ok "waiver: 43200 s required, reason recorded" || notok "waiver: recorded" "$(field "$d/decision.json" 'd["soak"]')"
expect_grep "waiver: decision.md shows it" 'waiver: lab slot of 12 h' "$d/decision.md"
d=$(fresh waived-short); edit "$d" '
scale("candidate", 0.88); soak(duration_s_requested=36000.0, duration_s=36000.0)
open(os.path.join(d, "hypothesis.yaml"), "a").write("soak_waiver:\n  duration_h: 12\n  reason: lab slot\n")'
rc=$(decide "$d")
[ "$rc" = 1 ] && ok "waiver: 10 h against 12 h is no_merge" || notok "waiver: 10 h" "exit $rc: $(cat err.txt)"
expect_grep "waiver: names the waiver's 43200 s" "the hypothesis' waiver asks 43200\.0 s" "$d/decision.md"

# 5. one request of 40000 differs from its clean run
d=$(fresh mismatch); edit "$d" 'scale("candidate", 0.88); soak(mismatches=1, fault_lines=1)'
rc=$(decide "$d")
[ "$rc" = 1 ] && ok "mismatch: exit 1" || notok "mismatch: exit 1" "exit $rc: $(cat err.txt)"
expect_grep "mismatch: named" '1 of 40000 soak requests differ from their clean run' "$d/decision.md"

# 6. two faults, one retest failed
d=$(fresh retest); edit "$d" 'scale("candidate", 0.88); soak(faults=2, retests=2, retests_passed=1, fault_lines=2)'
rc=$(decide "$d")
[ "$rc" = 1 ] && ok "failed retest: exit 1" || notok "failed retest: exit 1" "exit $rc: $(cat err.txt)"
expect_grep "failed retest: named" '1 of 2 soak faults did not pass their retest after reset' "$d/decision.md"
# ... and two faults both retested and passed: a merge (a recovered fault is not a failure)
d=$(fresh retested); edit "$d" 'scale("candidate", 0.88); soak(faults=2, retests=2, retests_passed=2, fault_lines=2)'
rc=$(decide "$d")
[ "$rc" = 0 ] && ok "faults retested and passed: merge" || notok "retested: merge" "exit $rc: $(cat err.txt)"

# 7. hashes across hosts and chips: all agree -> merge; host b chip 1 differs -> no_merge
d=$(fresh hashes-agree); edit "$d" '
scale("candidate", 0.88)
soak(hashes=[{"case_id": c, "host": h, "chip": k, "sha256": (H1 if c == "p1" else H2)}
             for c in ("p1", "p2") for h in ("a", "b") for k in (0, 1)])'
rc=$(decide "$d")
[ "$rc" = 0 ] && ok "hashes agree: merge" || notok "hashes agree: merge" "exit $rc: $(cat err.txt)"
[ "$(field "$d/decision.json" 'd["soak"]["hash_cases"]')" = 2 ] && ok "hashes agree: 2 case groups" || notok "hashes agree: groups"
expect_grep "hashes agree: said" "every case's hashes agree across chips and hosts" "$d/decision.md"
d=$(fresh hashes-differ); edit "$d" '
scale("candidate", 0.88)
soak(hashes=[{"case_id": c, "host": h, "chip": k, "sha256": (H2 if (c, h, k) == ("p2", "b", 1) else H1)}
             for c in ("p1", "p2") for h in ("a", "b") for k in (0, 1)])'
rc=$(decide "$d")
[ "$rc" = 1 ] && ok "hashes differ: exit 1" || notok "hashes differ: exit 1" "exit $rc: $(cat err.txt)"
expect_grep "hashes differ: names case, host and chip" 'hashes disagree across chips/hosts: case p2: host b chip 0 gives 1{64}, host b chip 1 gives 2{64}' "$d/decision.md"

# 8. a soak result beside a decision that is not soak_24h changes nothing (no override)
d=$(fresh not-soak); edit "$d" 'soak()'
rc=$(decide "$d")
[ "$rc" = 1 ] && ok "no gain + good soak: still exit 1" || notok "no gain: exit 1" "exit $rc: $(cat err.txt)"
expect_grep "no gain + good soak: no_merge by otherwise" 'no_merge \(rule otherwise\)' out.txt
expect_grep "no gain + good soak: the soak is noted as not used" 'a soak result is there .* but the decision is no\\_merge: not used' "$d/decision.md"

# --- malformed, foreign or mismatched: exit 2, nothing decided ---
bad() { # NAME CODE PATTERN
    _dd=$(fresh "bad-$1"); edit "$_dd" "scale('candidate', 0.88); $2"
    _rc=$(decide "$_dd")
    [ "$_rc" = 2 ] && ok "$1: exit 2" || notok "$1: exit 2" "exit $_rc: $(cat out.txt err.txt)"
    expect_grep "$1: says why" "$3" err.txt
    expect_lines "$1: one line" 1 err.txt
    expect_absent "$1: no decision.json" "$_dd/decision.json"
}
bad verdict 'soak(verdict="pass")' 'manifest-verify rule schema|verdict'
bad baseline 'soak(side="baseline")' 'soak of the baseline side.*foreign'
bad foreign-schema 'soak(schema="calculet-fault/v1")' 'schema|foreign'
bad other-experiment 'soak(experiment_id="OP-MOE-0002")' "experiment 'OP-MOE-0002', not 'OP-MOE-0001'"
bad graph 'soak(graph_sha256="0" * 64)' 'graph 0{64}, the folder.s candidate calbin is [0-9a-f]{64} \(mismatched\)'
bad manifest 'soak(manifest_sha256="0" * 64)' 'input manifest 0{64}.*mismatched'
bad no-identity 'soak(drop=("graph_sha256",))' 'without graph_sha256'
bad retests 'soak(faults=2, retests=1, retests_passed=1, fault_lines=2)' '1 retests for 2 faults'
bad passed-over 'soak(faults=1, retests=1, retests_passed=2, fault_lines=1)' '2 retests passed of 1'
bad lines 'soak(mismatches=3, fault_lines=1)' '1 fault lines for 3 mismatches and 0 faults \(expected 3\)'
bad too-many 'soak(requests=2, mismatches=3, fault_lines=3)' '3 mismatches and 0 faults in 2 requests'
bad empty 'soak(requests=0)' 'nothing was soaked'
bad early 'soak(duration_s=3600.0)' 'ran 3600\.000 s of 86400\.000 s asked without being interrupted'
bad hash-cover 'soak(hashes=[{"case_id": "p1", "host": "a", "chip": 0, "sha256": H1}])' 'hashes cover 1 case\(s\), the soak ran 2'
# an interrupted soak that still ran its 24 h is consistent (and passes)
d=$(fresh interrupted); edit "$d" 'scale("candidate", 0.88); soak(duration_s_requested=90000.0, interrupted=True)'
rc=$(decide "$d")
[ "$rc" = 0 ] && ok "interrupted after 24 h: merge" || notok "interrupted after 24 h" "exit $rc: $(cat err.txt)"
# (issue 33, a stop through the ABI v2 cancel) the result's stop_call and requests_cancelled
# are read (a soak whose --duration end cut its last round: interrupted false, merge); a value
# outside the three, a negative count and a field the schema does not name are still refused
for sc in cancelled killed none; do
    d=$(fresh "stop-$sc"); edit "$d" "scale('candidate', 0.88); soak(stop_call='$sc', requests_cancelled=$([ $sc = cancelled ] && echo 1 || echo 0))"
    rc=$(decide "$d")
    [ "$rc" = 0 ] && ok "stop_call $sc: merge" || notok "stop_call $sc: merge" "exit $rc: $(cat err.txt)"
done
bad stop-call-other 'soak(stop_call="paused")' 'manifest-verify rule schema|stop_call'
bad stop-cancelled-negative 'soak(requests_cancelled=-1)' 'manifest-verify rule schema|requests_cancelled'
bad stop-unknown-field 'soak(stop_cut="none")' 'manifest-verify rule schema|stop_cut'
# not JSON at all, given by --soak
d=$(fresh notjson); edit "$d" 'scale("candidate", 0.88)'
printf '{"schema": "calculet-soak-result/v1",' > broken.json
rc=$(decide --soak broken.json "$d")
[ "$rc" = 2 ] && ok "broken --soak file: exit 2" || notok "broken --soak file: exit 2" "exit $rc"
expect_grep "broken --soak file: FILE:LINE" 'broken\.json:[0-9]+' err.txt

# a sealed folder whose soak.json came later: the seal no longer holds, nothing decided
d=$(fresh sealed); edit "$d" 'scale("candidate", 0.88)'
rc=$(decide "$d")
expect_exit "sealed: the soak_24h folder seals" 0 manifest-verify --seal "$d"
edit "$d" 'soak()'
rc=$(decide "$d")
[ "$rc" = 2 ] && ok "soak added after the seal: exit 2" || notok "sealed: exit 2" "exit $rc: $(cat err.txt)"
manifest-verify --seal --force "$d" > /dev/null 2>&1
rc=$(decide --force "$d")
[ "$rc" = 0 ] && ok "resealed with the soak: merge" || notok "resealed: merge" "exit $rc: $(cat err.txt)"

# --- power (handbook section 4): power_w per request ---
# power(fn): fn(side, run, rmin, rmax, case) -> watts for every measured steady-flagged line (others
# get the side's flat figure); the expectations below follow from the formula.
pw() {
    _d=$1; shift
    edit "$_d" '
scale("candidate", 0.88)
def power(fn):
    rs = lines()
    span = {}
    for r in rs:
        if not r["warmup"] and r["steady"]:
            k = (r["case_id"], r["side"]); lo, hi = span.get(k, (r["run"], r["run"]))
            span[k] = (min(lo, r["run"]), max(hi, r["run"]))
    for r in rs:
        lo, hi = span.get((r["case_id"], r["side"]), (0, 1))
        r["power_w"] = fn(r["side"], r["run"], lo, hi, r["case_id"]) if not r["warmup"] and r["steady"] \
            else (300.0 if r["side"] == "baseline" else 280.0)
    save(rs)
'"$1"
}
summ() { field "$1/performance/summary.json" "$2"; }
# 9. flat power, 300 W baseline and 280 W candidate: still soak_24h; power per side reported
d=$(fresh power-flat); pw "$d" 'power(lambda s, r, lo, hi, c: 300.0 if s == "baseline" else 280.0)'
rc=$(decide "$d")
[ "$rc" = 0 ] && ok "flat power: soak_24h" || notok "flat power: soak_24h" "exit $rc: $(cat err.txt)"
[ "$(summ "$d" 'sorted({(c["baseline"]["power_w"], c["candidate"]["power_w"], c["candidate"]["power_drift_w"]) for c in d["cases"]})')" = "[(300.0, 280.0, 0.0)]" ] \
    && ok "flat power: power_w 300 and 280 per side, drift 0" || notok "flat power: figures" "$(summ "$d" 'd["cases"][0]["candidate"]')"
[ "$(summ "$d" 'd["steady_band"]')" = "{'clock_pct': 2.0, 'temperature_c': 5.0, 'power_pct': 5.0}" ] \
    && ok "flat power: steady_band records the 5 % power band" || notok "flat power: band" "$(summ "$d" 'd["steady_band"]')"
# 10. in case prefill-p128-o1 the candidate's power ramps by 8 % of its start over the run
#     order: every reading lies within 4 % of the median (inside the band), but the fitted
#     line changes by 22.4 W / 291.2 W = 7.7 % > 5 %: a drift, all 30 of its measured
#     candidate runs unsteady, the case insufficient, no soak
d=$(fresh power-ramp); pw "$d" 'power(lambda s, r, lo, hi, c: 300.0 if s == "baseline" or c != "prefill-p128-o1" else 280.0 * (1 + 0.08 * (r - lo) / (hi - lo)))'
rc=$(decide "$d")
[ "$rc" = 1 ] && ok "power ramp: not a soak (exit 1)" || notok "power ramp: exit 1" "exit $rc: $(cat err.txt)"
want=$($PY -c '
import json
rs = [json.loads(l) for l in open("'"$d"'/performance/raw-requests.jsonl")]
print(sum(1 for r in rs if r["side"] == "candidate" and r["case_id"] == "prefill-p128-o1" and not r["warmup"] and r["steady"]))')
got=$(summ "$d" 'd["unsteady_samples"]')
[ "$got" = "$want" ] && ok "power ramp: all $want measured candidate runs unsteady" || notok "power ramp: unsteady" "got $got, want $want"
expect_grep "power ramp: decision names unsteadiness" 'insufficient|not steady' "$d/decision.md"
# the drift as numpy's least-squares line gives it, per case
# the drift of a curved 3 % ramp (no case unsteady) as numpy's least-squares line gives it
d=$(fresh power-ramp2); pw "$d" 'power(lambda s, r, lo, hi, c: 300.0 if s == "baseline" else 280.0 * (1 + 0.03 * ((r - lo) / (hi - lo)) ** 2))'
decide "$d" > /dev/null
$PY - "$d" > drift.txt <<'PY'
import json, sys, numpy as np
d = sys.argv[1]
rs = [json.loads(l) for l in open(d + "/performance/raw-requests.jsonl")]
s = json.load(open(d + "/performance/summary.json"))
bad = 0
for c in s["cases"]:
    pts = [(r["run"], r["power_w"]) for r in rs if r["case_id"] == c["case_id"] and r["side"] == "candidate" and not r["warmup"] and r["steady"]]
    x = np.array([p[0] for p in pts], float); y = np.array([p[1] for p in pts], float)
    want = np.polyfit(x, y, 1)[0] * (x.max() - x.min())
    if abs(c["candidate"]["power_drift_w"] - want) > 1e-5 * abs(want):
        bad += 1; print("case", c["case_id"], c["candidate"]["power_drift_w"], want)
print("bad", bad)
PY
expect_grep "power ramp: drift equals numpy's polyfit line" '^bad 0$' drift.txt
# 11. a ramp of 2 % stays within the band: soak_24h
d=$(fresh power-slight); pw "$d" 'power(lambda s, r, lo, hi, c: 300.0 if s == "baseline" else 280.0 * (1 + 0.02 * (r - lo) / (hi - lo)))'
rc=$(decide "$d")
[ "$rc" = 0 ] && ok "2 % power ramp: still soak_24h" || notok "2 % ramp: soak" "exit $rc: $(cat err.txt)"
# 12. one candidate run at 400 W (43 % over 280): that one run is unsteady (the line is fitted
#     to the in-band runs, so it is no ramp); 29 steady runs left: insufficient, no soak
d=$(fresh power-spike); pw "$d" '
first = []
def f(s, r, lo, hi, c):
    if s == "candidate" and not first:
        first.append(r); return 400.0
    return 300.0 if s == "baseline" else 280.0
power(f)'
rc=$(decide "$d")
[ "$rc" = 1 ] && ok "power spike: not a soak" || notok "power spike: exit 1" "exit $rc: $(cat err.txt)"
[ "$(summ "$d" 'd["unsteady_samples"]')" = 1 ] && ok "power spike: one unsteady run" || notok "power spike: one unsteady" "$(summ "$d" 'd["unsteady_samples"]')"
expect_grep "power spike: said in the decision" 'insufficient cases cannot lead to a soak' "$d/decision.md"
# 13. no power_w: today's summary (no power fields, no power band)
d=$(fresh power-none); edit "$d" 'scale("candidate", 0.88)'
rc=$(decide "$d")
[ "$(summ "$d" '"power_pct" in d["steady_band"] or any("power_w" in c["candidate"] for c in d["cases"])')" = False ] \
    && ok "no power_w: no power fields" || notok "no power_w: no power fields"
# 14. a power_w that is not a number >= 0: exit 2 naming it
d=$(fresh power-bad); edit "$d" '
scale("candidate", 0.88)
rs = lines(); rs[5]["power_w"] = -3; save(rs)'
rc=$(decide "$d")
[ "$rc" = 2 ] && ok "negative power_w: exit 2" || notok "negative power_w: exit 2" "exit $rc"
expect_grep "negative power_w: named" 'raw-requests\.jsonl:6:.*(power_w|minimum 0)' err.txt

# --- section 8.4 deployment figures and section 10 KV-candidate fields in the manifests ---
dep() {
    edit "$1" '
scale("candidate", 0.88)
def put(rel, **kw):
    p = os.path.join(d, rel); m = json.load(open(p)); m.update(kw); json.dump(m, open(p, "w"), indent=2)
'"$2"
}
# 15. top-level figures (the schema used to reject them) and a V-only S8 KV cache:
#     3.75 GiB = 4026531840 -> K bf16 1.875 GiB + V s8 0.9375 GiB = 3019898880 bytes, saving
#     1006632960 bytes = 25 %
d=$(fresh deploy); dep "$d" '
put("baseline/manifest.json", weight_package_bytes=1000, load_time_ms=10, dram_reservation_bytes=2000,
    kv_cache={"bytes": 4026531840, "compressed": "none", "dtype": "bf16"})
put("candidate/manifest.json", weight_package_bytes=900, load_time_ms=9, dram_reservation_bytes=1800,
    kv_cache={"bytes": 3019898880, "saving_bytes": 1006632960, "compressed": "v", "dtype": "s8",
              "scale_granularity": "per_head", "dequant_at": "attention kernel, before PV"})'
rc=$(decide "$d")
[ "$rc" = 0 ] && ok "deployment: soak_24h" || notok "deployment: soak_24h" "exit $rc: $(cat err.txt)"
expect_exit "deployment: manifest-verify accepts top-level figures and kv_cache" 0 manifest-verify "$d"
[ "$(field "$d/decision.json" 'd["deployment"]["candidate"]["weight_package_bytes"], d["deployment"]["kv_saving"]["saving_bytes"], d["deployment"]["kv_saving"]["saving_pct"], d["deployment"]["candidate"]["kv_cache"]["compressed"]')" = "(900, 1006632960, 25.0, 'v')" ] \
    && ok "deployment: decision.json reports the figures and the 25 % KV saving" \
    || notok "deployment: decision.json" "$(field "$d/decision.json" 'd["deployment"]')"
expect_grep "deployment: decision.md 8.4 line" 'weight package: 1000 -> 900 bytes \(-100, -10\.00 %\); load time: 10 -> 9 ms \(-1, -10\.00 %\); DRAM reservation: 2000 -> 1800 bytes \(-200, -10\.00 %\)' "$d/decision.md"
expect_grep "deployment: decision.md KV line" 'KV cache \(candidate\): compressed v; dtype s8; scale\\_granularity per\\_head|compressed v; dtype s8; scale_granularity per\\_head' "$d/decision.md"
expect_grep "deployment: decision.md KV saving" 'real saving 4026531840 -> 3019898880 bytes = 1006632960 bytes \(25\.00 %\)' "$d/decision.md"
# 16. a stated saving its own bytes contradict: exit 2
d=$(fresh deploy-lie); dep "$d" '
put("baseline/manifest.json", kv_cache={"bytes": 4026531840})
put("candidate/manifest.json", kv_cache={"bytes": 3019898880, "saving_bytes": 2013265920, "compressed": "k_and_v"})'
rc=$(decide "$d")
[ "$rc" = 2 ] && ok "KV saving contradicted: exit 2" || notok "KV saving contradicted: exit 2" "exit $rc: $(cat err.txt)"
expect_grep "KV saving contradicted: names the numbers" 'saving_bytes is 2013265920, the manifests. kv_cache\.bytes give 4026531840 - 3019898880 = 1006632960' err.txt
# 17. an unknown KV field is refused by the schema (not silently dropped)
d=$(fresh deploy-unknown); dep "$d" 'put("candidate/manifest.json", kv_cache={"bytes": 1, "savings": 5})'
rc=$(decide "$d")
[ "$rc" = 2 ] && ok "unknown kv_cache field: exit 2" || notok "unknown kv_cache field: exit 2" "exit $rc"
