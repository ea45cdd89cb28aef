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
