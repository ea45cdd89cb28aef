#!/usr/bin/env python3
"""Write DIR/handoff.json (calculet-handoff/v1): every delivered file with its role, format and
SHA-256. Used by make-handoff.sh and by tests that mutate a copy (re-index after a change)."""
import hashlib, json, os, sys

ITEMS = [
    ("calbins", [("calbins/baseline.calbin", "baseline", None),
                 ("calbins/candidate.calbin", "candidate", None)]),
    ("compile", [("compile/baseline-manifest.json", "baseline", "calculet-calbin-manifest/v1"),
                 ("compile/candidate-manifest.json", "candidate", "calculet-calbin-manifest/v1"),
                 ("compile/flags-diff.txt", "flags_diff", None),
                 ("compile/baseline.log", "log", None),
                 ("compile/candidate.log", "log", None)]),
    ("graph", [("graph/baseline.json", "baseline_graph", "calculet-graph/v1"),
               ("graph/candidate.json", "candidate_graph", "calculet-graph/v1"),
               ("graph/op-count.csv", "op_count", None)]),
    ("goldens", [("goldens/candidate.h5", "golden", None),
                 ("goldens/input-manifest.jsonl", "input_manifest", "calculet-input-manifest/v1"),
                 ("goldens/tolerances.yaml", "tolerances", "calculet-diff-policy/v1")]),
    ("trace", [("performance/raw-device-trace.csv", "trace", None),
               ("trace/parse_trace.py", "parser", None)]),
    ("limits", [("limits/supported.yaml", "limits", None)]),
    ("error_path", [("error-path/faults.jsonl", "faults", "calculet-fault/v1"),
                    ("error-path/reset-retest.md", "retest", None)]),
    ("performance", [("performance/raw-requests.jsonl", "raw", "calculet-raw-request/v1"),
                     ("performance/summary.json", "summary", "calculet-perf-summary/v1")]),
]


def sha(path):
    return hashlib.sha256(open(path, "rb").read()).hexdigest()


def main(d):
    old = {}
    p = os.path.join(d, "handoff.json")
    if os.path.exists(p):
        old = json.load(open(p))
    doc = {"schema": "calculet-handoff/v1",
           "vendor": old.get("vendor", "Calculet compiler team"),
           "candidate": old.get("candidate", "qwen3-30b-a3b-prefill moe_bucket_threshold=8"),
           "experiment_id": old.get("experiment_id", "OP-MOE-0001"),
           "delivered": old.get("delivered", "2026-08-02T18:00:00Z"),
           "items": {}}
    for key, files in ITEMS:
        out = []
        for rel, role, fmt in files:
            if not os.path.exists(os.path.join(d, rel)):
                continue
            f = {"path": rel, "sha256": sha(os.path.join(d, rel)), "role": role}
            if fmt:
                f["format"] = fmt
            out.append(f)
        doc["items"][key] = {"files": out}
    with open(p, "w") as f:
        json.dump(doc, f, indent=2)
        f.write("\n")


if __name__ == "__main__":
    main(sys.argv[1])
