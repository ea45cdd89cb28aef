# --handoff: the shipped vendor delivery has all eight items of section 18; broken copies show
# each item present, missing or malformed.
. "$GOLDEN_ROOT/tests/e2e/lib.sh"
HO="$GOLDEN_ROOT/examples/handoff"
fresh() { rm -rf "w/$1"; mkdir -p w; cp -R "$HO" "w/$1"; echo "w/$1"; }
status_of() { awk -v k="$1" '$2 == k { print $3 }' out.txt; }

expect_exit "example hand-off passes" 0 manifest-verify --handoff "$HO"
for k in calbins compile graph goldens trace limits error_path performance; do
    if [ "$(status_of $k)" = present ]; then ok "item $k present"; else notok "item $k present" "$(grep " $k " out.txt)"; fi
done

d=$(fresh nolimits)
sed -i '/"limits": {/,/^    },/d' "$d/handoff.json"
expect_exit "missing item fails" 1 manifest-verify --handoff "$d"
[ "$(status_of limits)" = missing ] && ok "limits missing" || notok "limits missing" "$(cat out.txt)"
[ "$(status_of graph)" = present ] && ok "graph still present" || notok "graph still present"
expect_grep "handoff-missing finding" "handoff-missing: item 6" out.txt

d=$(fresh badhash); printf 'x' >> "$d/trace/parse_trace.py"
expect_exit "changed file fails" 1 manifest-verify --handoff "$d"
[ "$(status_of trace)" = malformed ] && ok "trace malformed" || notok "trace malformed" "$(cat out.txt)"
expect_grep "hash finding points into handoff.json" "handoff.json:[0-9]+:[0-9]+: artifact-hash: " out.txt

d=$(fresh gone); rm "$d/calbins/candidate.calbin"
expect_exit "absent file fails" 1 manifest-verify --handoff "$d"
[ "$(status_of calbins)" = missing ] && ok "calbins missing" || notok "calbins missing" "$(cat out.txt)"

d=$(fresh norole); sed -i 's/"role": "parser"/"role": "notes"/' "$d/handoff.json"
expect_exit "trace without parser fails" 1 manifest-verify --handoff "$d"
[ "$(status_of trace)" = missing ] && ok "trace without parser is missing" || notok "trace without parser is missing"

d=$(fresh badfaults)
sed -i 's/"kind":"timeout"/"kind":"gremlins"/' "$d/error-path/faults.jsonl"
sum=$(sha256sum "$d/error-path/faults.jsonl" | cut -c1-64)
old=$(sha256sum "$HO/error-path/faults.jsonl" | cut -c1-64)
sed -i "s/$old/$sum/" "$d/handoff.json"
expect_exit "invalid delivered document fails" 1 manifest-verify --handoff "$d"
[ "$(status_of error_path)" = malformed ] && ok "error_path malformed" || notok "error_path malformed" "$(cat out.txt)"
expect_grep "document finding has its line" "faults.jsonl:1:[0-9]+: schema: .*\(enum\)" out.txt

d=$(fresh escape)
ln -s /etc/hostname "$d/limits/host.yaml"
sed -i 's|"path": "limits/supported.yaml"|"path": "limits/host.yaml"|' "$d/handoff.json"
expect_exit "symlink escape in hand-off fails" 1 manifest-verify --handoff "$d"
[ "$(status_of limits)" = malformed ] && ok "escaping limits malformed" || notok "escaping limits malformed" "$(cat out.txt)"
expect_grep "escape named" "path-escape" out.txt

expect_exit "hand-off json report" 1 manifest-verify --handoff "$d" --json h.json --junit h.xml
expect_grep "json items" '"status": "malformed"' h.json
expect_exit "hand-off report valid" 0 manifest-verify --schema calculet-verify-report/v1 h.json
expect_grep "junit case per item" '<testcase[^>]*name="limits"' h.xml
mkdir -p w/empty
expect_exit "folder without handoff.json exits 2" 2 manifest-verify --handoff w/empty
expect_grep "names handoff.json" "handoff.json" err.txt

# a reference inside a delivered document (the compile manifest's calbin) is checked too
d=$(fresh innerref)
printf 'y' >> "$d/calbins/candidate.calbin"
sum=$(sha256sum "$d/calbins/candidate.calbin" | cut -c1-64)
old=$(sha256sum "$HO/calbins/candidate.calbin" | cut -c1-64)
# the index is updated to the new calbin, the compile manifest is not
sed -i "s/$old/$sum/" "$d/handoff.json"
expect_exit "stale compile manifest fails" 1 manifest-verify --handoff "$d"
[ "$(status_of calbins)" = present ] && ok "calbins present after index update" || notok "calbins present after index update" "$(cat out.txt)"
[ "$(status_of compile)" = malformed ] && ok "compile malformed by its calbin reference" || notok "compile malformed by its calbin reference" "$(cat out.txt)"
expect_grep "inner reference points into the manifest" "candidate-manifest.json:[0-9]+:[0-9]+: artifact-hash" out.txt
