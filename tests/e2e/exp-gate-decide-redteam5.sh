#!/bin/sh
# Red team decide5 (issue 26's split of the raw-request pass over -j workers): every input below
# must give the same exit status and byte-identical decision.json / decision.md / summary.json with
# -j 1, -j 2 and the default (docs/exp-gate.md "Performance": "byte-identical whatever -j is";
# "the first error is the same error (the same line, the same words)"), and the answer the docs give.
# (Written when the docs said chunks of 1,024 lines; they are 512 lines and 2 MiB now, so lines
# 1025 and 2049 of the 2,120-line files still start chunks: 3 and 5.)
. "$GOLDEN_ROOT/tests/e2e/lib.sh"
EX=$GOLDEN_ROOT/examples/experiment/OP-MOE-0001
GEN=$GOLDEN_ROOT/tests/e2e/exp-gate-decide-redteam5-gen.py
if [ -z "$PYTHON" ]; then echo "ok decide5 # skip no numpy"; exit 0; fi

# run_all VAR: build folder per -j setting, decide it; records rc.J and copies outputs to out.J/
run_all() {
    for j in 1 2 def; do
        rm -rf "w.$1.$j"; $PYTHON "$GEN" "$EX" "w.$1.$j" "$1" || return 1
        if [ $j = def ]; then exp-gate decide "w.$1.$j/OP-MOE-0001" > "o.$1.$j" 2> "e.$1.$j"
        else exp-gate decide -j $j "w.$1.$j/OP-MOE-0001" > "o.$1.$j" 2> "e.$1.$j"; fi
        echo $? > "rc.$1.$j"
    done
}
# same NAME VAR WANTRC: all four -j give WANTRC and identical files/stderr
same() {
    _bad=""
    for j in 1 2 def; do
        [ "$(cat rc.$2.$j)" = "$3" ] || _bad="$_bad -j $j exit $(cat rc.$2.$j) (wanted $3: $(head -c 300 e.$2.$j));"
        for f in decision.json decision.md performance/summary.json; do
            a=w.$2.1/OP-MOE-0001/$f; b=w.$2.$j/OP-MOE-0001/$f
            if [ -e "$a" ] || [ -e "$b" ]; then cmp -s "$a" "$b" || _bad="$_bad $f differs -j 1 vs $j;"; fi
        done
        sed "s/w\.$2\.$j/W/g" e.$2.$j > e2.$2.$j; sed "s/w\.$2\.1/W/g" e.$2.1 > e2.$2.1
        cmp -s e2.$2.1 e2.$2.$j || _bad="$_bad stderr differs -j 1 vs $j: $(head -c 200 e2.$2.$j);"
    done
    if [ -z "$_bad" ]; then ok "$1"; else notok "$1" "$_bad"; fi
}
# eqclean NAME VAR: decision.json/md identical to the clean file's (same evidence, other bytes)
eqclean() {
    if cmp -s w.clean.1/OP-MOE-0001/decision.json w.$2.2/OP-MOE-0001/decision.json &&
       cmp -s w.clean.1/OP-MOE-0001/decision.md w.$2.2/OP-MOE-0001/decision.md; then ok "$1"
    else notok "$1" "decision differs from the clean file's"; fi
}
# numbers NAME VAR: decision.json's medians / P99 equal numpy-style percentiles from gen.py
numbers() {
    $PYTHON - "w.$2.2" > num.txt <<'PY'
import json, sys
d = json.load(open(sys.argv[1] + "/OP-MOE-0001/decision.json")); e = json.load(open(sys.argv[1] + "/expect.json"))
bad = []
for c in d["cases"]:
    for s in ("baseline", "candidate"):
        x = e[c["case_id"] + "/" + s]
        for k, v in (("median", c[s + "_median"]), ("p99", c[s + "_p99"])):
            w = x[k]
            if (w is None) != (v is None) or (w is not None and abs(w - v) > 1e-5): bad.append(f"{c['case_id']} {s} {k}: {v} vs {w}")
print("; ".join(bad))
PY
    if [ -s num.txt ] && [ "$(cat num.txt)" != "" ]; then notok "$1" "$(cat num.txt)"; else ok "$1"; fi
}

# 1. clean file: candidate 15 % faster on both cases, 520 steady runs a side -> graph_gain,
#    soak_24h, exit 0 (exp-gate.md rule 4); medians/P99 by numpy's default interpolation.
run_all clean; same clean-same-all-j clean 0; numbers clean-numbers clean
expect_grep clean-soak '"decision": "soak_24h"' w.clean.2/OP-MOE-0001/decision.json
# 2. CRLF throughout: documents.md "a \r before it is dropped" -> same decision as LF.
run_all crlf; same crlf-same-all-j crlf 0; eqclean crlf-eq-clean crlf
# 3. BOM at the start: allowed (manifest-verify.md: error only "anywhere but at the start").
run_all bomstart; same bomstart-same-all-j bomstart 0; eqclean bomstart-eq-clean bomstart
# 4. BOM opening line 1025 (first line of chunk 2): exit 2 naming line 1025, same words every -j.
run_all bomlater; same bomlater-same-all-j bomlater 2; expect_grep bomlater-line 'raw-requests.jsonl:1025' e.bomlater.2
# 5. blank line at the split (line 1025): skipped but counted -> same decision as clean.
run_all blank; same blank-same-all-j blank 0; eqclean blank-eq-clean blank
# 6. blank line at 1025 and a cut line at file line 1600: exit 2 naming 1600 (blank lines counted).
run_all blankbad; same blankbad-same-all-j blankbad 2; expect_grep blankbad-line 'raw-requests.jsonl:1600' e.blankbad.2
# 7. a 5 MiB line (whitespace inside the JSON object, valid) at 1025: over the 4 MiB chunk cap,
#    under the 64 MiB line cap -> same decision as clean.
run_all huge; same huge-same-all-j huge 0; eqclean huge-eq-clean huge
# 8. a 65 MiB line at 1500: "line longer than the 64 MiB limit" at that line, exit 2.
run_all toolong; same toolong-same-all-j toolong 2; expect_grep toolong-line 'raw-requests.jsonl:1500' e.toolong.2
rm -rf w.toolong.*
# 9. 4 lines (fewer than threads): insufficient cases never soak -> no_merge, exit 1 (rule 4).
run_all few; same few-same-all-j few 1
expect_grep few-nomerge '"decision": "no_merge"' w.few.2/OP-MOE-0001/decision.json
# 10. last line without newline: same decision as clean.
run_all nolastnl; same nolastnl-same-all-j nolastnl 0; eqclean nolastnl-eq-clean nolastnl
# 11. duplicate key on line 1500: a parse error (exit 2) naming line 1500.
run_all dupkey1500; same dupkey-same-all-j dupkey1500 2; expect_grep dupkey-line 'raw-requests.jsonl:1500' e.dupkey1500.2
# 12. line 1025 cut (bad JSON, first line of chunk 2): exit 2 naming 1025.
run_all badjson1025; same badjson-same-all-j badjson1025 2; expect_grep badjson-line 'raw-requests.jsonl:1025' e.badjson1025.2
# 13. schema violation (side enum) on line 2049, the first line of chunk 3: exit 2 naming 2049.
run_all schema2049; same schema-same-all-j schema2049 2; expect_grep schema-line 'raw-requests.jsonl:2049' e.schema2049.2
# 14. line 1500 repeats line 500's request_id (with 1000 ms): manifest-verify rule request-unique
#     stops decide, exit 2, naming line 1500 and "line 500".
run_all dupid; same dupid-same-all-j dupid 2
expect_grep dupid-rule 'raw-requests.jsonl:1500.*request-unique' e.dupid.2
expect_grep dupid-names-first 'line 500' e.dupid.2
# 14b. summarize on it: counts the copy once (repeated_request_ids 1), first copy's value kept:
#      n and P99 as numpy without the copy; identical with -j 1 and -j 2.
for j in 1 2; do rm -f w.dupid.$j/OP-MOE-0001/performance/summary.json
  exp-gate summarize -j $j w.dupid.$j/OP-MOE-0001 > /dev/null 2> es.$j; echo $? > rs.$j; done
if [ "$(cat rs.1)$(cat rs.2)" = 00 ] && cmp -s w.dupid.1/OP-MOE-0001/performance/summary.json w.dupid.2/OP-MOE-0001/performance/summary.json
then ok dupid-summarize-same; else notok dupid-summarize-same "exit $(cat rs.1)/$(cat rs.2) $(head -c 200 es.2)"; fi
$PYTHON - w.dupid.2 > num.txt <<'PY'
import json, sys
s = json.load(open(sys.argv[1] + "/OP-MOE-0001/performance/summary.json")); e = json.load(open(sys.argv[1] + "/expect.json"))
bad = [] if s.get("repeated_request_ids") == 1 else ["repeated_request_ids %r" % s.get("repeated_request_ids")]
for c in s["cases"]:
    if c.get("metric") != "ttft_ms": continue
    for side in ("baseline", "candidate"):
        x = e[c["case_id"] + "/" + side]; g = c[side]
        if g["n"] != x["n"] or abs(g["p99"] - x["p99"]) > 1e-5: bad.append(f"{c['case_id']} {side} n {g['n']} p99 {g['p99']} vs {x}")
print("; ".join(bad))
PY
if [ -s num.txt ] && [ -n "$(cat num.txt)" ]; then notok dupid-summary-numbers "$(cat num.txt)"; else ok dupid-summary-numbers; fi
# 14c. manifest-verify (the other user of the pipeline): same findings with -j 1 and -j 2, exit 1.
manifest-verify -j 1 w.dupid.1/OP-MOE-0001 2>&1 | sed 's/w\.dupid\.1/W/g' > mv.1; echo $? > /dev/null
manifest-verify -j 2 w.dupid.2/OP-MOE-0001 2>&1 | sed 's/w\.dupid\.2/W/g' > mv.2
if cmp -s mv.1 mv.2 && grep -q 'request-unique' mv.2; then ok dupid-mv-same; else notok dupid-mv-same "$(diff mv.1 mv.2 | head -5)"; fi
# 15. six timeouts (no ttft_ms) as the last six candidate lines of case p128 (chunk 3): +inf each;
#     n 520, P99 rank 519 x 0.99 = 513.81: x[513] finite, x[514] = +inf -> P99 +inf (null),
#     a P99 regression -> p99_sla reject, exit 1; failed 1; median by numpy with inf included.
run_all timeout; same timeout-same-all-j timeout 1; numbers timeout-numbers timeout
$PYTHON -c 'import json,sys; d=json.load(open(sys.argv[1])); sys.exit(0 if (d["decision"],d["rule"])==("reject","p99_sla") else 1)' w.timeout.2/OP-MOE-0001/decision.json && ok timeout-reject || notok timeout-reject "not reject by p99_sla"
expect_grep timeout-failed '"failed": 6' w.timeout.2/OP-MOE-0001/decision.json
# 16. GOLDEN_THREADS=2 (the documented default source) == -j 1 on the clean folder.
rm -rf w.env; $PYTHON "$GEN" "$EX" w.env clean
GOLDEN_THREADS=2 exp-gate decide w.env/OP-MOE-0001 > /dev/null 2>&1
cmp -s w.env/OP-MOE-0001/decision.json w.clean.1/OP-MOE-0001/decision.json && ok env-threads || notok env-threads "differs"
rm -rf w.*.def
# 17. 10^5-line folder (bench generator), -j 1 vs -j 2: identical decision.json/md/summary.json.
# (about 20-30 s more on this machine: set DECIDE5_BIG=1 to run it; off by default for the 60 s budget)
if [ "${DECIDE5_BIG:-0}" = 1 ]; then
  for j in 1 2; do mkdir -p big$j; $PYTHON "$GOLDEN_ROOT/bench/gen-exp-gate-folder.py" "$EX" big$j 100000 > /dev/null
    exp-gate decide -j $j big$j/OP-MOE-0001 > /dev/null 2> eb.$j; echo $? > rb.$j; done
  _b=""; for f in decision.json decision.md performance/summary.json; do
    cmp -s big1/OP-MOE-0001/$f big2/OP-MOE-0001/$f || _b="$_b $f differs;"; done
  [ "$(cat rb.1)" = "$(cat rb.2)" ] || _b="$_b exit $(cat rb.1) vs $(cat rb.2);"
  if [ -z "$_b" ]; then ok big-1e5-same; else notok big-1e5-same "$_b"; fi
  rm -rf big1 big2
fi
