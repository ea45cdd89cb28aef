# Checks an HTML report's DOM (as headless Chromium dumped it) against expectations worked out
# here from the tool's --json report, independently of libgolden's code. Used by tests/e2e/html.sh.
# usage: python3 html-check.py KIND DOM.html REPORT.json [EXTRA]; prints ok / not ok lines. EXTRA:
# gate: SUMMARY.json; dag: the GRAPH.json checked; profile: pick=L (the layer the address picks).
# KIND diffhist: python3 html-check.py diffhist DOM.html REPORT.json REF.h5 CAND.h5 CHOSEN.
import json, math, re, sys
from html.parser import HTMLParser

kind, dom_path, rep_path = sys.argv[1:4]
family = {"dagnb": "dag", "dagbig": "dag", "profile1": "profile"}.get(kind, kind)
def crashed(t, v, tb):
    print(f"not ok html-{kind}-checker: {t.__name__}: {v}")
    sys.exit(1)
sys.excepthook = crashed
rep = json.load(open(rep_path))
extra = sys.argv[4] if len(sys.argv) > 4 else None
summary = json.load(open(extra)) if kind == "gate" else None

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
emb = embedded()
nb = emb.pop("neighbourhood", None) if family == "dag" and isinstance(emb, dict) else None
if kind == "gate" and isinstance(emb, dict):  # issue 26: drift and CDF series per graph-level case
    ser = emb.pop("series", None)
    gl = sorted({c["case_id"] for c in summary["cases"] if c.get("graph_level")})
    check("gate-series", isinstance(ser, list) and sorted(r["case_id"] for r in ser) == gl,
          f"series {ser if not isinstance(ser, list) else [r.get('case_id') for r in ser]} vs {gl}")
check("json-embedded", emb ==
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

def close(a, b, rel=1e-6, tiny=1e-12):
    return abs(a - b) <= rel * max(abs(a), abs(b)) + tiny

def dag_checks(check, find, cls, rep, graph, nb):
    """The neighbourhood worked out again from the graph file: windows of 3 ops around each
    drawn racing op on its queue, one step out to sync partners; happens-before by reachability."""
    W, P, PAIRS = 3, 4, 60
    ops = graph["ops"]
    idx = {o["id"]: i for i, o in enumerate(ops)}
    chip = {q["id"]: q["chip"] for q in graph["queues"]}
    qorder = {q["id"]: i for i, q in enumerate(graph["queues"])}
    kind_of = lambda o: o.get("kind", "compute")
    qops = {q["id"]: [] for q in graph["queues"]}
    for i, o in enumerate(ops):
        for q in (o["queues"] if kind_of(o) == "barrier" else [o["queue"]]):
            qops[q].append(i)
    signal = {o["event"]: i for i, o in enumerate(ops) if kind_of(o) == "signal"}
    waits = {}
    for i, o in enumerate(ops):
        if kind_of(o) == "wait":
            waits.setdefault(o["event"], []).append(i)
    races = rep["races"][:PAIRS]
    base = set()
    for r in races:
        for e in ("a", "b"):
            x = idx[r[e]]
            seq = qops[ops[x]["queue"]]
            k = seq.index(x)
            base.update(seq[max(0, k - W):k + W + 1])
    shown = set(base)
    for x in base:
        o = ops[x]
        if kind_of(o) == "wait":
            shown.add(signal[o["event"]])
        if kind_of(o) == "signal":
            shown.update(waits.get(o["event"], [])[:P])
        shown.update(idx[p] for p in o.get("after", [])[:P])
    dom_ops = {a["data-op"]: a for a in find("rect", "op", "swimlanes")}
    check("nb-ops", set(dom_ops) == {ops[i]["id"] for i in shown},
          f"DOM {len(dom_ops)} ops, worked out {len(shown)}: {sorted(set(dom_ops) ^ {ops[i]['id'] for i in shown})[:6]}")
    check("nb-bounded", len(dom_ops) <= PAIRS * 2 * (2 * W + 1) * (1 + 2 * P), f"{len(dom_ops)} ops")
    # happens-before: program order on each queue, after, signal -> wait; reachability as bitsets
    succ = [set() for _ in ops]
    for seq in qops.values():
        for u, v in zip(seq, seq[1:]):
            succ[u].add(v)
    for i, o in enumerate(ops):
        for p in o.get("after", []):
            succ[idx[p]].add(i)
        if kind_of(o) == "wait":
            succ[signal[o["event"]]].add(i)
    indeg = [0] * len(ops)
    for u in range(len(ops)):
        for v in succ[u]:
            indeg[v] += 1
    order = [u for u in range(len(ops)) if indeg[u] == 0]
    for u in order:
        for v in succ[u]:
            indeg[v] -= 1
            if indeg[v] == 0:
                order.append(v)
    reach = [0] * len(ops)
    for u in reversed(order):
        for v in succ[u]:
            reach[u] |= reach[v] | (1 << v)
    before = lambda u, v: bool(reach[u] >> v & 1)
    col = {i: int(dom_ops[ops[i]["id"]]["data-col"]) for i in shown if ops[i]["id"] in dom_ops}
    # column = longest chain of shown ops ending there (so u before v puts u left of v)
    want = {}
    pos = {u: i for i, u in enumerate(order)}
    for v in sorted(col, key=lambda v: pos[v]):
        want[v] = max([want[u] + 1 for u in want if before(u, v)], default=0)
    check("nb-hb-columns", col == want, f"{[(ops[v]['id'], col[v], want.get(v)) for v in col if col[v] != want.get(v)][:5]}")
    syncs = set()
    for v in shown:
        o = ops[v]
        if kind_of(o) == "wait" and signal[o["event"]] in shown:
            syncs.add((ops[signal[o["event"]]]["id"], o["id"]))
        for p in o.get("after", []):
            if idx[p] in shown:
                syncs.add((p, o["id"]))
    arrows = [(a["data-from"], a["data-to"]) for a in find("path", "sync", "swimlanes")]
    check("nb-sync-arrows", len(arrows) == len(syncs) and set(arrows) == syncs, f"DOM {len(arrows)} arrows, {len(syncs)} syncs")
    drawn = [(a["data-a"], a["data-b"], a["data-range"]) for a in find("path", "race", "swimlanes")]
    check("race-arrows", drawn == [(r["a"], r["b"], f"{r['range'][0]},{r['range'][1]}") for r in races], f"DOM {drawn[:3]}")
    racing = {k for k, a in dom_ops.items() if "racing" in cls(a)}
    check("racing-highlighted", racing == {r[e] for r in races for e in ("a", "b")}, f"{sorted(racing)[:6]}")
    lanes = {}
    for i in shown:
        if kind_of(ops[i]) != "barrier":
            lanes[ops[i]["queue"]] = 1
    for i in sorted(shown):
        if kind_of(ops[i]) == "barrier" and not any(q in lanes for q in ops[i]["queues"]):
            lanes[ops[i]["queues"][0]] = 1
    want_lanes = sorted(lanes, key=lambda q: (chip[q], qorder[q]))
    got_lanes = [(a["data-queue"], int(a["data-chip"])) for a in find("rect", "lane", "swimlanes")]
    check("lanes-by-chip", got_lanes == [(q, chip[q]) for q in want_lanes], f"DOM {got_lanes}")
    check("neighbourhood-embedded", nb is not None and len(nb["ops"]) == len(shown) and len(nb["syncs"]) == len(syncs), "")
    rows = sum(min(500, len(rep[k])) for k in ("races", "aliases", "redundant_syncs"))  # 500 a page
    check("race-rows", len(find("tr", "row")) == rows, f"{len(find('tr', 'row'))} rows, want {rows}")
    check("verdict", any(a.get("data-verdict") == rep["verdict"] for a in find("p", "verdict")), "")

if family == "dag":
    dag_checks(check, find, cls, rep, json.load(open(extra)), nb)

if kind == "conform":
    checks = rep["checks"]
    check("verdict", any(a.get("data-verdict") == rep["verdict"] for a in find("p", "verdict")), "")
    got = [a.get("data-status") for a in find("tr", "check")]
    check("check-rows", got == [k["status"] for k in checks], f"DOM {got}")
    nf = sum(len(k["findings"]) for k in checks)
    check("findings", len(find("li", "finding")) == nf, f"{len(find('li', 'finding'))} listed, JSON {nf}")
    curve = next((k["curve"] for k in checks if k.get("curve")), [])
    want = {"TPOT (median decode step)": [(p["context"], p["tpot_s"] * 1e3) for p in curve],
            "KV bytes written / token": [(p["context"], p["kv_write_bytes_per_token"]) for p in curve],
            "KV bytes read / token": [(p["context"], p["kv_read_bytes_per_token"]) for p in curve]}
    for chart, names in (("kv-tpot", ["TPOT (median decode step)"]),
                         ("kv-bytes", ["KV bytes written / token", "KV bytes read / token"])):
        lines = {a["data-series"]: int(a["data-points"]) for a in find("polyline", "series", chart)}
        check(f"{chart}-series", lines == {n: len(want[n]) for n in names if want[n]}, f"DOM {lines}")
        pts = [(float(a["data-x"]), float(a["data-y"])) for a in find("circle", "pt", chart)]
        exp = [p for n in names for p in want[n]]
        check(f"{chart}-values", len(pts) == len(exp) and all(close(x, u) and close(y, v) for (x, y), (u, v) in zip(pts, exp)),
              f"DOM {pts[:4]}, JSON {exp[:4]}")
    check("curve-present", bool(curve) == bool(find("svg", None)), "")

if family == "profile":
    import numpy as np
    names = ["0", "1", "2-4", "5-8", "9-16", "17-32", ">32"]
    def cells(chart):
        return {(int(a["data-r"]), int(a["data-c"])): float(a["data-v"]) for a in find("rect", "cell", chart)}
    def hits(layers):
        E = max(len(L["expert_hits"]) for L in layers)
        m = np.full((len(layers), E), np.nan)
        for r, L in enumerate(layers):
            m[r, :len(L["expert_hits"])] = L["expert_hits"]
        return m
    sides = [("", "expert-hits", rep["layers"])]
    if "candidate_layers" in rep:
        sides.append(("cand-", "expert-hits-candidate", rep["candidate_layers"]))
    for side, chart, layers in sides:
        m = hits(layers)
        got = cells(chart)
        n = int(np.sum(~np.isnan(m)))
        check(f"{chart}-cells", len(got) == n and n == sum(len(L["expert_hits"]) for L in layers),
              f"{len(got)} cells, {m.shape[0]} layers x {m.shape[1]} experts")
        check(f"{chart}-values", all(got.get((r, c)) == m[r, c] for r in range(m.shape[0]) for c in range(m.shape[1])
                                     if not np.isnan(m[r, c])), "a cell differs from expert_hits")
        b = np.array([[L["buckets"][k] for k in names] for L in layers], dtype=float)
        allv = [float(a["data-v"]) for a in find("rect", "col", f"{side}buckets-all")]
        check(f"{side}buckets-summed", allv == list(b.sum(axis=0)), f"DOM {allv}, numpy {list(b.sum(axis=0))}")
        per = all([float(a["data-v"]) for a in find("rect", "col", f"{side}buckets-{L['layer']}")] == list(b[i])
                  for i, L in enumerate(layers))
        check(f"{side}buckets-per-layer", per, "a layer's histogram differs from its buckets")
        segs = find("rect", "seg", f"{side}buckets-per-layer")
        check(f"{side}buckets-segments", len(segs) == int(np.sum(b > 0)) and
              sorted(float(a["data-v"]) for a in segs) == sorted(b[b > 0]), f"{len(segs)} segments")
    if "candidate_layers" in rep:
        base = {L["layer"]: L for L in rep["layers"]}
        rows = [L for L in rep["candidate_layers"] if L["layer"] in base]
        E = max(len(L["expert_hits"]) for L in rep["layers"] + rows)
        def share(L):
            v = np.zeros(E)
            v[:len(L["expert_hits"])] = L["expert_hits"]
            return v / v.sum()
        dd = np.array([100 * (share(L) - share(base[L["layer"]])) for L in rows])
        got = cells("expert-share-diff")
        check("share-diff-cells", len(got) == dd.size, f"{len(got)} cells, want {dd.size}")
        check("share-diff-values", all(close(got.get((r, c), math.inf), dd[r, c], 1e-6, 1e-9)
                                       for r in range(dd.shape[0]) for c in range(dd.shape[1])), "a cell differs from numpy")
        deltas = {x["layer"]: x for x in rep["deltas"]}
        check("share-diff-matches-deltas", all(close(np.max(np.abs(dd[r])), 100 * abs(deltas[L["layer"]]["max_share_change"]), 1e-6, 1e-9)
                                               for r, L in enumerate(rows)), "the largest change is not the JSON's")
    pick = extra.split("=", 1)[1] if extra and extra.startswith("pick=") else "all"
    shown = [a["data-pick"] for t, a, _ in d.els if "data-pick" in a and "hidden" not in a]
    npick = 2 if "candidate_layers" in rep else 1
    check(f"selector-{pick}", shown == [pick] * npick, f"visible {shown}")
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
