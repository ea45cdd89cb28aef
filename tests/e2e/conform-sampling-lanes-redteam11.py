#!/usr/bin/env python3
"""Red team 11: the sampling-stats report held to docs/conformance.md ("Sampling statistics").

check.py JSON STDOUT STDERR NLANES FAULTY ALPHA DRAWS POSITIONS WANT [SEED_LANES_FROM]
  FAULTY: '+'-separated faulty lanes ('-' none); WANT: pass or fail.
Every value below is worked out from the doc, not read back from the tool: the lanes (every
lane up to 8, else 8 with the first and the last), tests = 7 x lanes, alpha_per_test =
alpha / tests, one settings entry a setting and lane in the table's order with the table's
parameters, draws = positions x draws a position, the verdict rule (p < alpha per test, a
probability-0 draw, a repeat mismatch, a greedy mismatch), the text lines, findings naming
the lane. Prints one line a failed assertion; exit 1 when any failed."""
import json
import math
import re
import sys

SETTINGS = [
    # name, temp, top_k, top_p, min_p, repeat_penalty, last_n (None: off by the doc's rule)
    ("greedy", 0.0, 40, 0.95, 0.05, 1.1, 64),
    ("temp", 0.6, None, None, None, None, None),
    ("top-k", 1.0, 10, None, None, None, None),
    ("top-p", 1.0, None, 0.8, None, None, None),
    ("min-p", 1.0, None, None, 0.3, None, None),
    ("penalty", 1.0, 40, None, None, 2.0, 64),
    ("llama", 0.8, 40, 0.95, 0.05, 1.1, 64),
    ("temp-cuts", 0.5, None, 0.7, 0.2, None, None),
]

bad = []


def fail(msg):
    bad.append(msg)


def close(a, b, rel=1e-5):
    return a is not None and abs(a - b) <= rel * max(abs(b), 1e-300)


def gammq(a, x):
    """Regularized upper incomplete gamma Q(a, x) (series / continued fraction)."""
    if x <= 0:
        return 1.0
    gln = math.lgamma(a)
    if x < a + 1:
        ap, s, d = a, 1.0 / a, 1.0 / a
        for _ in range(100000):
            ap += 1
            d *= x / ap
            s += d
            if abs(d) < abs(s) * 1e-15:
                break
        return max(0.0, 1.0 - s * math.exp(-x + a * math.log(x) - gln))
    b = x + 1 - a
    c = 1e300
    d = 1 / b
    h = d
    for i in range(1, 100000):
        an = -i * (i - a)
        b += 2
        d = an * d + b
        if abs(d) < 1e-300:
            d = 1e-300
        c = b + an / c
        if abs(c) < 1e-300:
            c = 1e-300
        d = 1 / d
        de = d * c
        h *= de
        if abs(de - 1) < 1e-15:
            break
    return math.exp(-x + a * math.log(x) - gln) * h


def main():
    jpath, opath, epath, nl, faulty, alpha, draws, positions, want = sys.argv[1:10]
    nl, alpha, draws, positions = int(nl), float(alpha), int(draws), int(positions)
    faulty = set() if faulty == "-" else {int(x) for x in faulty.split("+")}
    doc = json.load(open(jpath))
    checks = [c for c in doc["checks"] if c["check"] == "sampling-stats"]
    if len(checks) != 1:
        fail("not one sampling-stats entry in checks")
        return
    c = checks[0]
    if c["status"] != want:
        fail("status %s, wanted %s" % (c["status"], want))
    cov = c.get("coverage") or {}
    lanes = cov.get("lanes")
    if nl <= 8:
        if lanes != list(range(nl)):
            fail("coverage.lanes %r, wanted every lane %r" % (lanes, list(range(nl))))
    else:
        if not (isinstance(lanes, list) and len(lanes) == 8 and lanes == sorted(set(lanes))
                and lanes[0] == 0 and lanes[-1] == nl - 1 and all(0 <= x < nl for x in lanes)):
            fail("coverage.lanes %r: wanted 8 ascending lanes with 0 and %d" % (lanes, nl - 1))
    if not isinstance(lanes, list):
        return
    nt = 7 * len(lanes)
    if cov.get("tests") != nt:
        fail("coverage.tests %r, wanted 7 x %d = %d" % (cov.get("tests"), len(lanes), nt))
    if not close(cov.get("alpha"), alpha, 1e-12):
        fail("coverage.alpha %r, wanted %r" % (cov.get("alpha"), alpha))
    apt = alpha / nt
    if not close(cov.get("alpha_per_test"), apt, 1e-9):
        fail("coverage.alpha_per_test %r, wanted %r / %d = %r" % (cov.get("alpha_per_test"), alpha, nt, apt))
    if cov.get("draws_per_position") != draws:
        fail("draws_per_position %r, wanted %d" % (cov.get("draws_per_position"), draws))
    if cov.get("positions_per_setting") != positions:
        fail("positions_per_setting %r, wanted %d" % (cov.get("positions_per_setting"), positions))
    st = cov.get("settings") or []
    order = [(s[0], l) for s in SETTINGS for l in lanes]
    got = [(e.get("setting"), e.get("lane")) for e in st]
    if got != order:
        fail("settings entries %r, wanted one a setting and lane in the table's order %r" % (got[:12], order[:12]))
    failed_lanes = set()
    for e in st:
        name, lane = e.get("setting"), e.get("lane")
        tag = "%s lane %s" % (name, lane)
        spec = [s for s in SETTINGS if s[0] == name]
        if not spec:
            fail("%s: unknown setting" % tag)
            continue
        _, temp, tk, tp, mp, rp, ln = spec[0]
        if name == "greedy":
            if not e["temp"] <= 0:
                fail("%s: temp %r is not greedy" % (tag, e["temp"]))
        elif not close(e["temp"], temp, 1e-6):
            fail("%s: temp %r, wanted %r" % (tag, e["temp"], temp))
        if (tk is None and e["top_k"] > 0) or (tk is not None and e["top_k"] != tk):
            fail("%s: top_k %r, wanted %r" % (tag, e["top_k"], tk or "off"))
        if (tp is None and e["top_p"] < 1) or (tp is not None and not close(e["top_p"], tp, 1e-6)):
            fail("%s: top_p %r, wanted %r" % (tag, e["top_p"], tp or "off"))
        if (mp is None and e["min_p"] > 0) or (mp is not None and not close(e["min_p"], mp, 1e-6)):
            fail("%s: min_p %r, wanted %r" % (tag, e["min_p"], mp or "off"))
        if (rp is None and e["repeat_penalty"] != 1) or (rp is not None and not close(e["repeat_penalty"], rp, 1e-6)):
            fail("%s: repeat_penalty %r, wanted %r" % (tag, e["repeat_penalty"], rp or "off"))
        if ln is not None and e["repeat_last_n"] != ln:
            fail("%s: repeat_last_n %r, wanted %r" % (tag, e["repeat_last_n"], ln))
        pos = e.get("positions") or []
        if len(pos) != positions:
            fail("%s: %d positions, wanted %d" % (tag, len(pos), positions))
        prompt = 64 if name == "penalty" else 24
        ps = [p["position"] for p in pos]
        if ps and (ps != list(range(ps[0], ps[0] + len(ps))) or ps[0] not in (prompt - 1, prompt)):
            fail("%s: positions %r: wanted consecutive ones after a prompt of %d" % (tag, ps, prompt))
        if e.get("draws") != positions * draws:
            fail("%s: draws %r, wanted %d x %d" % (tag, e.get("draws"), positions, draws))
        if e.get("repeats") != 8 * positions:
            fail("%s: repeats %r, wanted 8 seeds x %d positions" % (tag, e.get("repeats"), positions))
        if e.get("classes") != sum(p["classes"] for p in pos):
            fail("%s: classes %r is not the sum over the positions" % (tag, e.get("classes")))
        zp, rm = e.get("zero_probability_draws", 0), e.get("repeat_mismatches", 0)
        # the cross-lane repeats: lane 0's re-asked seeds on every other lane at the first
        # position (rows and histories equal bit for bit: the shim passes logits through)
        rm += e.get("cross_lane_mismatches", 0)
        want_x = 0 if lane == lanes[0] else min(8, draws)
        if e.get("cross_lane_repeats") != want_x:
            fail("%s: cross_lane_repeats %r, wanted %d" % (tag, e.get("cross_lane_repeats"), want_x))
        # null chi2 for greedy and for a setting "whose every position kept one class"; the
        # doc's "a position with one class left adds nothing" (after pooling) gives dof 0 too
        if name == "greedy" or all(p["kept"] == 1 for p in pos) or all(p["classes"] <= 1 for p in pos):
            if e.get("chi2") is not None or e.get("dof") is not None or e.get("p") is not None:
                fail("%s: chi2/dof/p not null for an exact setting" % tag)
            bad_v = zp > 0 or rm > 0 or (e.get("mismatches") or 0) > 0
            if name == "greedy" and "mismatches" not in e:
                fail("%s: no mismatches field" % tag)
            if name == "greedy" and any(p["kept"] != 1 for p in pos):
                fail("%s: greedy keeps more than one class" % tag)
        else:
            dof = sum(p["classes"] - 1 for p in pos if p["classes"] > 1)
            if e.get("dof") != dof:
                fail("%s: dof %r, wanted sum of (classes - 1) = %d" % (tag, e.get("dof"), dof))
            pv, chi2 = e.get("p"), e.get("chi2")
            if pv is None or chi2 is None or not 0 <= pv <= 1:
                fail("%s: chi2 %r p %r" % (tag, chi2, pv))
                continue
            q = gammq(e["dof"] / 2.0, chi2 / 2.0)
            if not (abs(q - pv) <= 1e-6 * max(q, 1e-300) or (q < 1e-280 and pv < 1e-280)):
                fail("%s: p %r, but Q(dof/2, chi2/2) = %r" % (tag, pv, q))
            bad_v = pv < apt or zp > 0 or rm > 0
        if (e.get("verdict") == "fail") != bad_v:
            fail("%s: verdict %r against the rule (p %r, per-test alpha %g, zero %r, repeat %r)"
                 % (tag, e.get("verdict"), e.get("p"), apt, zp, rm))
        if e.get("verdict") == "fail":
            failed_lanes.add(lane)
    # the values compared: every draw and every re-asked seed (the doc's cost line: 8 settings x
    # positions x (draws + 8) a lane)
    want_cmp = len(lanes) * 8 * positions * (draws + 8) + (len(lanes) - 1) * 8 * min(8, draws)
    if c.get("comparisons") != want_cmp:
        fail("comparisons %r, wanted %d lanes x 8 x %d x (%d + 8) = %d" % (c.get("comparisons"), len(lanes), positions, draws, want_cmp))
    if len(c.get("findings") or []) > 16:
        fail("%d findings kept, at most 16" % len(c["findings"]))
    # each finding against its settings entry
    ent = {(e.get("setting"), e.get("lane")): e for e in st}
    for f in c.get("findings") or []:
        case, what = f.get("case") or "", f.get("what") or ""
        m = re.match(r"^(\S+) lane (\d+) position (\d+) draw (\d+)$", case)
        if m and what.startswith("token "):
            e = ent.get((m.group(1), int(m.group(2))))
            mm = re.match(r"^token (\d+) has probability 0 under the host chain \(outside the kept classes; the chain keeps (\d+) classes, seed (\d+)\)$", what)
            kept = [p["kept"] for p in (e or {}).get("positions", []) if p["position"] == int(m.group(3))]
            if not e or not mm or kept != [int(mm.group(2))] or not e.get("zero_probability_draws"):
                fail("probability-0 finding %r does not match its entry (kept %r)" % (f, kept))
            continue
        m = re.match(r"^(\S+) lane (\d+) position (\d+)$", case)
        if m:
            e = ent.get((m.group(1), int(m.group(2))))
            lane_x = re.match(r"^seed \d+ gave token \d+ on lane %d and \d+ on lane %s \(" % (lanes[0], m.group(2)), what)
            if lane_x:
                if not e or not e.get("cross_lane_mismatches"):
                    fail("cross-lane finding %r does not match its entry" % f)
                continue
            if not e or not re.match(r"^seed \d+ gave token \d+ in draw \d+, then \d+", what) or not e.get("repeat_mismatches"):
                fail("repeat finding %r does not match its entry" % f)
            continue
        m = re.match(r"^(\S+) lane (\d+)$", case)
        if m and what.startswith("chi-square"):
            e = ent.get((m.group(1), int(m.group(2))))
            mm = re.match(r"^chi-square \S+ with (\d+) degrees of freedom over (\d+) draws in (\d+) classes: p = \S+, below the per-test alpha (\S+)$", what)
            if not e or not mm or int(mm.group(1)) != e.get("dof") or int(mm.group(2)) != e.get("draws") \
                    or int(mm.group(3)) != e.get("classes") or not close(float(mm.group(4)), apt, 5e-3):
                fail("chi-square finding %r does not match its entry" % f)
            continue
        if m and m.group(1) == "greedy":
            continue
        fail("finding of no documented form: %r" % f)
    # "lane L > 0 with seeds mixed with L (independent draws)": the same prompt with lane 0's
    # seeds would repeat lane 0's draws, chi-square for chi-square
    base = {e["setting"]: e.get("chi2") for e in st if e.get("lane") == lanes[0]}
    for l in lanes[1:]:
        same = [e["setting"] for e in st if e.get("lane") == l and e.get("chi2") is not None
                and e.get("chi2") == base.get(e["setting"])]
        if len(same) == 7:
            fail("lane %d repeats lane 0's chi-square in every setting: its seeds are not mixed with the lane" % l)
    checked_faulty = faulty & set(lanes)
    if want == "fail":
        if not failed_lanes:
            fail("no setting failed on any lane")
        if failed_lanes - checked_faulty:
            fail("settings failed on clean lanes %r (faulty %r)" % (sorted(failed_lanes - checked_faulty), sorted(faulty)))
        names = set()
        for f in c.get("findings") or []:
            m = re.search(r"\blane (\d+)\b", (f.get("case") or "") + " " + (f.get("what") or ""))
            if not m:
                fail("finding names no lane: %r" % f)
            else:
                names.add(int(m.group(1)))
        if names - checked_faulty:
            fail("findings name clean lanes %r" % sorted(names - checked_faulty))
        if c.get("findings_total", 0) < len(c.get("findings") or []) or not c.get("findings"):
            fail("findings_total %r, findings %d" % (c.get("findings_total"), len(c.get("findings") or [])))
        err = open(epath).read()
        for line in err.splitlines():
            if line.startswith("npu-replay: sampling-stats: "):
                m = re.search(r"\blane (\d+)\b", line)
                if not m or int(m.group(1)) not in checked_faulty:
                    fail("stderr finding not on a faulty lane: %r" % line[:160])
    else:
        if failed_lanes:
            fail("settings failed on lanes %r of a backend that must pass" % sorted(failed_lanes))
        if c.get("findings"):
            fail("findings on a pass: %r" % c["findings"][:2])
    # the text: the row, the alpha line, one line a setting and lane
    out = open(opath).read().splitlines()
    row = [l for l in out if re.match(r"^sampling-stats +(pass|FAIL|ERROR|skipped)\b", l)]
    wantrow = "FAIL" if want == "fail" else "pass"
    if len(row) != 1 or row[0].split()[1] != wantrow:
        fail("table row %r, wanted sampling-stats %s" % (row, wantrow))
    elif want == "fail":
        if not row[0].rstrip().endswith("(%d findings)" % c.get("findings_total", -1)) and c.get("findings_total", 0) > 1:
            fail("the row does not end with (%r findings): %r" % (c.get("findings_total"), row[0][-80:]))
        m = re.search(r"\blane (\d+)\b", row[0])
        if not m or int(m.group(1)) not in checked_faulty:
            fail("the row's first finding names no faulty lane: %r" % row[0][:200])
    al = [l for l in out if l.startswith("sampling-stats (alpha")]
    m = re.match(r"^sampling-stats \(alpha (\S+), per test (\S+), (\d+) tests\)$", al[0]) if len(al) == 1 else None
    if not m:
        fail("no alpha line: %r" % al)
    else:
        if not close(float(m.group(1)), alpha, 1e-2) or not close(float(m.group(2)), apt, 5e-3) or int(m.group(3)) != nt:
            fail("alpha line %r: wanted alpha %g, per test %.3g, %d tests" % (al[0], alpha, apt, nt))
    names = {s[0] for s in SETTINGS}
    lines = [l.split() for l in out if l.split() and l.split()[0] in names]
    if [(x[0], int(x[1])) for x in lines] != order:
        fail("text lines (setting, lane) %r, wanted %r" % ([(x[0], x[1]) for x in lines][:12], order[:12]))
    else:
        for x, e in zip(lines, st):
            if x[-1] != e.get("verdict") or int(x[2]) != e.get("draws") or int(x[3]) != e.get("classes"):
                fail("text line %r disagrees with the JSON entry" % " ".join(x))
            if e.get("setting") == "greedy" and x[4] != "exact":
                fail("greedy text line %r is not exact" % " ".join(x))


main()
for b in bad[:12]:
    print(b)
sys.exit(1 if bad else 0)
