# Checks an HTML report's DOM (as headless Chromium dumped it) against expectations worked out
# here from the tool's --json report, independently of libgolden's code. Used by tests/e2e/html.sh.
# usage: python3 html-check.py KIND DOM.html REPORT.json [SUMMARY.json]; prints ok / not ok lines.
# KIND diffhist: python3 html-check.py diffhist DOM.html REPORT.json REF.h5 CAND.h5 CHOSEN.
import json, re, sys
from html.parser import HTMLParser

kind, dom_path, rep_path = sys.argv[1:4]
def crashed(t, v, tb):
    print(f"not ok html-{kind}-checker: {t.__name__}: {v}")
    sys.exit(1)
sys.excepthook = crashed
rep = json.load(open(rep_path))
summary = json.load(open(sys.argv[4])) if len(sys.argv) > 4 and kind != "diffhist" else None

class Dom(HTMLParser):
    def __init__(self):
        super().__init__()
        self.els = []          # (tag, attrs, chart id)
        self.chart = None
        self.body = {}
        self.json_text = None
        self._in_json = False
        self.scripts = 0
        self.json_encoding = None
    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "body":
            self.body = a
        if tag == "svg" and "data-chart" in a:
            self.chart = a["data-chart"]
        if tag == "script":
            self.scripts += 1
            self._in_json = a.get("id") == "report-json"
            if self._in_json:
                self.json_encoding = a.get("data-encoding")
        self.els.append((tag, a, self.chart))
    def handle_startendtag(self, tag, attrs):
        self.handle_starttag(tag, attrs)
    def handle_endtag(self, tag):
        if tag == "svg":
            self.chart = None
        if tag == "script":
            self._in_json = False
    def handle_data(self, data):
        if self._in_json:
            self.json_text = (self.json_text or "") + data

d = Dom()
d.feed(open(dom_path, encoding="utf-8").read())
fails = 0
def check(name, cond, why=""):
    global fails
    if cond:
        print(f"ok html-{kind}-{name}")
    else:
        fails += 1
        print(f"not ok html-{kind}-{name}: {why}")

def cls(a):
    return a.get("class", "").split()
def find(tag, c=None, chart=None):
    return [a for t, a, ch in d.els if t == tag and (c is None or c in cls(a)) and (chart is None or ch == chart)]

check("script-ran", d.body.get("data-ready") == "1", f"body attributes {d.body}")
check("no-js-errors", "data-js-errors" not in d.body, d.body.get("data-js-errors", ""))
def embedded():
    if d.json_text is None:
        return None
    if d.json_encoding == "deflate-base64":
        import base64, zlib
        return json.loads(zlib.decompress(base64.b64decode(d.json_text)))
    return json.loads(d.json_text)
check("json-embedded", embedded() ==
      (rep if kind != "gate" else {"decision": rep, "summary": summary}), "embedded JSON differs from --json")
offsite = [a for t, a, _ in d.els if any(k in a and re.match(r"\s*(https?:)?//", a[k] or "") for k in ("src", "href"))]
offsite += [a for t, a, _ in d.els if t in ("link", "img", "iframe") or (t == "script" and "src" in a)]
check("self-contained", not offsite, f"external references {offsite[:3]}")

def worst(a, b):
    if b is None: return a
    return b if a is None else max(a, b)

if kind in ("diff", "big"):
    tensors = rep["tensors"]
    kinds = {"attn": "attention output", "mlp": "MoE output", "moe": "MoE output", "expert": "MoE output",
             "hidden": "residual stream", "resid": "residual stream"}
    per = {}   # (metric, kind name) -> {layer: value}
    first_fail = None
    for t in tensors:
        m = re.search(r"(?:^|[/._])layers[/._](\d+)(.*)$", t["name"])
        if not m: continue
        L, rest = int(m.group(1)), m.group(2)
        k = next((v for key, v in (("attn", kinds["attn"]), ("attention", kinds["attn"]), ("mlp", kinds["mlp"]),
                                   ("moe", kinds["moe"]), ("expert", kinds["expert"]), ("hidden", kinds["hidden"]),
                                   ("resid", kinds["resid"])) if key in rest), None)
        if k is None: continue
        cos = t["cosine"]
        for metric, v in (("cos", None if cos is None else 1 - cos), ("rel", t["max_rel"])):
            per.setdefault((metric, k), {})
            per[(metric, k)][L] = worst(per[(metric, k)].get(L), v)
        b = t.get("baseline")
        if b and b.get("compared"):
            for side, key in (("candidate", "error_candidate"), ("baseline", "error_baseline")):
                per.setdefault(("3w", f"{k}: {side}"), {})
                per[("3w", f"{k}: {side}")][L] = worst(per[("3w", f"{k}: {side}")].get(L), b.get(key))
        if t["verdict"] == "fail" and (first_fail is None or L < first_fail):
            first_fail = L
    for chart, metric in (("layers-cosine", "cos"), ("layers-maxrel", "rel")):
        lines = {a["data-series"]: int(a["data-points"]) for a in find("polyline", "series", chart)}
        want = {k: sum(v is not None for v in vals.values()) for (m, k), vals in per.items() if m == metric}
        want = {k: n for k, n in want.items() if n}
        check(f"{chart}-series", lines == want, f"DOM {lines}, JSON {want}")
        check(f"{chart}-points", len(find("circle", "pt", chart)) == sum(want.values()),
              f"{len(find('circle', 'pt', chart))} circles, want {sum(want.values())}")
        marks = [a.get("data-x") for a in find("line", "mark", chart)]
        check(f"{chart}-gate-mark", marks == ([] if first_fail is None else [str(first_fail)]),
              f"marks {marks}, first failing layer {first_fail}")
    want3 = {k: sum(v is not None for v in vals.values()) for (m, k), vals in per.items() if m == "3w"}
    want3 = {k: n for k, n in want3.items() if n}
    lines3 = {a["data-series"]: int(a["data-points"]) for a in find("polyline", "series", "layers-threeway")}
    check("threeway-series", lines3 == want3, f"DOM {lines3}, JSON {want3}")
    rows = [a for a in find("tr", "row")]
    shown = min(len(tensors), 500)   # the page shows 500 rows until "show all" is pressed
    check("table-rows", len(rows) == shown, f"{len(rows)} rows, want {shown} of {len(tensors)} tensors")
    more = [a for a in find("button", "more") if "hidden" not in a]
    check("show-all-button", len(more) == (len(tensors) > 500), f"{len(more)} visible buttons")
    # failing first: the verdict cells in DOM order
    verdicts = [a.get("class") for a in find("td") if a.get("class", "").startswith("verdict-")]
    nfail = sum(t["verdict"] == "fail" for t in tensors)
    check("failing-first", verdicts == (["verdict-fail"] * nfail + ["verdict-pass"] * (len(tensors) - nfail))[:shown],
          f"verdict order {verdicts[:12]}")
    positive = [t["max_abs"] for t in tensors if t["max_abs"] is not None and t["max_abs"] > 0]
    bins = sum(int(a["data-count"]) for a in find("rect", "bin", "maxabs-hist"))
    check("histogram-count", bins == len(positive), f"{bins} in bins, {len(positive)} positive max_abs")
    flips = [(i, t) for i, t in enumerate(tensors) if t["tier"] == "logits" and t.get("flips")]
    for i, t in flips:
        pts = find("circle", "flip", f"flips-{i}")
        drawn = [f for f in t["flips"] if f["margin"] is not None and f["margin"] > 0]
        near = sum(f["near_tie"] for f in drawn)
        check(f"flips-{i}-points", len(pts) == len(drawn) and
              sum("near" in cls(a) for a in pts) == near, f"{len(pts)} points, want {len(drawn)} ({near} near)")
    check("flips-present", not any(t["tier"] == "logits" and t.get("flips") for t in tensors) or flips, "")

if kind == "gate":
    cases = summary["cases"]
    for metric in ("ttft_ms", "tpot_ms"):
        rows = [c for c in cases if c["metric"] == metric and not c.get("insufficient")]
        meds = [a for a in find("line", "median", f"latency-{metric}")]
        want = [v for c in rows for v in (c["baseline"]["median"], c["candidate"]["median"])]
        got = [float(a["data-v"]) for a in meds]
        check(f"{metric}-medians", len(got) == len(want) and all(abs(g - w) <= 1e-6 * max(1, abs(w)) for g, w in zip(got, want)),
              f"DOM {got}, summary {want}")
        check(f"{metric}-ci-boxes", len(find("rect", "box", f"latency-{metric}")) == len(want), "")
    stages = [c for c in cases if c["metric"].endswith("_ms") and c["metric"] not in ("ttft_ms", "tpot_ms")
              and not c.get("insufficient")]
    segs = find("rect", "seg", "stages")
    want = sum((c["baseline"]["median"] > 0) + (c["candidate"]["median"] > 0) for c in stages)
    check("stage-segments", len(segs) == want, f"{len(segs)} segments, want {want}")
    tot = sum(float(a["data-v"]) for a in segs)
    wtot = sum(max(c["baseline"]["median"], 0) + max(c["candidate"]["median"], 0) for c in stages)
    check("stage-total", abs(tot - wtot) <= 1e-6 * max(1, wtot), f"{tot} vs {wtot}")
    per_chip = (summary.get("trace") or {}).get("per_chip", [])
    cells = {(r["side"], r["chip"], r["family"]) for r in per_chip if r["cycles"] > 0}
    check("chip-segments", len(find("rect", "seg", "chip-cycles")) == len(cells), f"want {len(cells)}")
    fired = [a for a in find("tr", "fired")]
    check("fired-rule", len(fired) == 1 and sum(r["fired"] for r in rep["rules"]) == 1, "")
    apart = [c for c in cases if c.get("insufficient") or c["baseline"].get("unsteady", 0) or c["candidate"].get("unsteady", 0)]
    check("kept-apart", len(find("tr", "apart")) == len(apart), f"{len(find('tr', 'apart'))} vs {len(apart)}")
    check("decision", any(a.get("data-decision") == rep["decision"] for a in find("p", "verdict")), "")

if kind == "dag":
    races = rep["races"][:60]
    ops = {r[e] for r in races for e in ("a", "b")}
    queues = {r[e] for r in races for e in ("queue_a", "queue_b")}
    check("race-arrows", len(find("path", "race", "swimlanes")) == len(races), "")
    check("race-ops", sorted(a["data-op"] for a in find("rect", "op", "swimlanes")) == sorted(ops), "")
    check("lanes", len(find("rect", "lane", "swimlanes")) == len(queues), "")
    check("race-rows", len(find("tr", "row")) == len(rep["races"]) + len(rep["aliases"]) + len(rep["redundant_syncs"]), "")
    check("verdict", any(a.get("data-verdict") == rep["verdict"] for a in find("p", "verdict")), "")
def diff_histograms(ref_h5, cand_h5, chosen):
    """golden-diff's |c - r| histogram: every drawn tensor's bars are the counts numpy works out
    from the two goldens (not from the JSON), the chosen figure alone is shown, the worst failing
    tensor is first and the atol mark is drawn."""
    import h5py
    import numpy as np
    def values(f, name):
        dset = f[name]
        t = dset.id.get_type()
        if isinstance(t, h5py.h5t.TypeFloatID) and t.get_size() == 2 and t.get_fields()[2] == 7:
            raw = np.empty(dset.shape, "<u2")  # bf16: the stored bits, widened by hand
            dset.id.read(h5py.h5s.ALL, h5py.h5s.ALL, raw, mtype=t)
            return (raw.astype(np.uint32) << 16).view(np.float32).astype(np.float64).ravel()
        return dset[...].astype(np.float64).ravel()
    def bars(r, c):
        fin = np.isfinite(r) & np.isfinite(c)
        with np.errstate(over="ignore", invalid="ignore"):
            a = np.abs(c[fin] - r[fin])
        out = {"zero": int((a == 0).sum()), "nonfinite": int((~fin).sum())}
        a = a[a != 0]
        _, e = np.frexp(np.where(np.isinf(a), 1.0, a))
        e = np.clip(np.where(np.isinf(a), 10 ** 6, e - 1), -60, 30)
        for k, n in zip(*np.unique(e, return_counts=True)):
            out[str(int(k))] = int(n)
        return {k: v for k, v in out.items() if v}
    fr, fc = h5py.File(ref_h5, "r"), h5py.File(cand_h5, "r")
    figs = find("div", "hist-fig")
    carriers = [t for t in rep["tensors"] if "abs_error_histogram" in t]
    check("hist-figures", len(figs) == min(len(carriers), 32) and len(figs) > 1, f"{len(figs)} figures")
    for a in figs:
        i, name = a["data-index"], a["data-tensor"]
        got = {b["data-bin"]: int(b["data-count"]) for b in find("rect", "bin", f"abs-hist-{i}")}
        want = bars(values(fr, name), values(fc, name))
        check(f"hist-{i}-bars", got == want, f"{name}: DOM {got}, numpy {want}")
    shown = [a["data-index"] for a in figs if "hidden" not in a]
    check("hist-chosen", shown == [str(chosen)] and
          any(a.get("data-shown") == str(chosen) for a in find("select")), f"shown {shown}, want {chosen}")
    failing = sorted((t for t in carriers if t["verdict"] == "fail"), key=lambda t: -(t["tolerance_used"] if t["tolerance_used"] is not None else float("inf")))
    first = [a for a in figs if a["data-index"] == "0"]
    check("hist-worst-first", bool(failing) and bool(first) and first[0]["data-tensor"] == failing[0]["name"],
          f"first {first[0]['data-tensor'] if first else None}")
    check("hist-atol-mark", len(find("line", "mark", f"abs-hist-{chosen}")) == 1, "no atol mark")

if kind == "diffhist":
    diff_histograms(sys.argv[4], sys.argv[5], int(sys.argv[6]))

sys.exit(1 if fails else 0)
