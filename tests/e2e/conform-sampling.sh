#!/bin/sh
# npu-replay conform's sampling-stats (issue 28, handbook section 15; docs/conformance.md
# "Sampling statistics"): the cpu backend's sample call passes at several seeds, in f32 and bf16,
# through the backend host and in process; each of the seven planted sampler faults fails it (one
# of them on the last lane only: every lane is checked, as its own test); a
# version 2 plug-in without sample (NULL, or a table too small to hold it) is skipped in a run of
# all checks and an error when named, never a pass; a version 1 plug-in likewise; a sample call
# that answers a token outside the vocabulary is a violation. Cheap: one check, 8 x 4 calls.
. "$GOLDEN_ROOT/tests/e2e/lib.sh"
NR="$GOLDEN_BIN/npu-replay"

expect_exit "make-model tiny" 0 "$NR" make-model --preset tiny --seed 11 -o m

# ---- the clean cpu backend ----
expect_exit "clean through the backend host passes" 0 "$NR" conform --model m -j1 --checks sampling-stats --json clean.json
expect_grep "the table row passes" '^sampling-stats +pass' out.txt
expect_grep "one line a setting and lane below the table" '^top-p +3 +16384 +[0-9]+ +[0-9.]+ +[0-9]+ +[0-9.e-]+ +pass' out.txt
expect_grep "greedy is exact" '^greedy +0 +16384 .* exact .* pass' out.txt
expect_grep "the tests counted: 7 settings x 4 lanes" '^sampling-stats \(alpha 1e-06, per test 3.57e-08, 28 tests\)' out.txt
if [ "$(grep -Ec '^(greedy|temp|top-k|top-p|min-p|penalty|llama|temp-cuts) +[0-3] +16384 ' out.txt)" -eq 32 ]; then
    ok "32 lines: 8 settings on each of the 4 lanes"; else notok "32 lines: 8 settings on each of the 4 lanes" "$(grep -c 16384 out.txt)"; fi
if [ -n "$PYTHON" ]; then
    expect_exit "clean: the JSON says per setting draws, classes, chi2, dof, p, verdict" 0 "$PYTHON" -c '
import json, sys
k = [c for c in json.load(open(sys.argv[1]))["checks"] if c["check"] == "sampling-stats"][0]
cov = k["coverage"]
assert k["status"] == "pass", k
# the cpu backend has 4 lanes: 7 chi-square settings on each, 28 tests
assert cov["alpha"] == 1e-6 and abs(cov["alpha_per_test"] - 1e-6 / 28) < 1e-18, cov
assert cov["lanes"] == [0, 1, 2, 3] and cov["tests"] == 28, cov
assert cov["draws_per_position"] == 4096 and cov["positions_per_setting"] == 4
names = [(s["setting"], s["lane"]) for s in cov["settings"]]
assert names == [(n, l) for n in ["greedy", "temp", "top-k", "top-p", "min-p", "penalty", "llama",
                                  "temp-cuts"] for l in range(4)], names
for s in cov["settings"]:
    assert s["draws"] == 4 * 4096 and s["repeats"] == 32 and len(s["positions"]) == 4, s
    assert s["verdict"] == "pass" and s["zero_probability_draws"] == 0 and s["repeat_mismatches"] == 0
    if s["setting"] == "greedy":
        assert s["chi2"] is None and s["p"] is None and s["mismatches"] == 0 and s["temp"] == 0
    else:
        assert s["dof"] >= 4 and s["classes"] == s["dof"] + 4, s  # 4 positions, classes - 1 each
        assert s["p"] >= cov["alpha_per_test"], s
# the settings are what the docs table says
t = {s["setting"]: s for s in cov["settings"] if s["lane"] == 0}
assert t["top-k"]["top_k"] == 10 and t["top-k"]["temp"] == 1
assert abs(t["top-p"]["top_p"] - 0.8) < 1e-6 and t["top-p"]["top_k"] == 0
assert abs(t["min-p"]["min_p"] - 0.3) < 1e-6 and abs(t["temp"]["temp"] - 0.6) < 1e-6
assert t["penalty"]["repeat_penalty"] == 2 and t["penalty"]["positions"][0]["position"] == 63
assert all(p["kept"] == 10 for p in t["top-k"]["positions"])
assert all(p["kept"] == 512 for p in t["temp"]["positions"])
' clean.json
fi
for s in 1 2 3; do
    expect_exit "clean, --seed $s, through the host" 0 "$NR" conform --model m -j1 --checks sampling-stats --seed $s
done
expect_exit "clean bf16 --seed 4" 0 "$NR" conform --model m -j1 --checks sampling-stats --seed 4 --backend-opt dtype=bf16
expect_exit "clean --in-process --seed 5" 0 "$NR" conform --in-process --model m -j1 --checks sampling-stats --seed 5 --json ip.json
expect_exit "the same seed twice: the same report" 0 "$NR" conform --model m -j1 --checks sampling-stats --seed 5 --json host5.json
if [ -n "$PYTHON" ]; then
    expect_exit "in process and through the host: the same draws (chi2 of every setting equal)" 0 "$PYTHON" -c '
import json, sys
a, b = (json.load(open(f))["checks"][0]["coverage"]["settings"] for f in sys.argv[1:3])
assert [(s["chi2"], s["classes"]) for s in a] == [(s["chi2"], s["classes"]) for s in b], (a, b)
' ip.json host5.json
fi

# ---- the planted sampler faults: each fails sampling-stats ----
while read -r fault pattern; do
    expect_exit "inject=$fault fails (exit 1)" 1 "$NR" conform --model m -j1 --checks sampling-stats --backend-opt "inject=$fault"
    expect_grep "inject=$fault: the row says FAIL" '^sampling-stats +FAIL' out.txt
    if grep -Eq -- "$pattern" out.txt err.txt; then ok "inject=$fault: a finding /$pattern/"; else
        notok "inject=$fault: a finding /$pattern/" "$(head -c 600 out.txt)"; fi
done <<'T'
sample_ignores_temp ^temp +0 +16384 .* fail
sample_topp_off_by_one top-p lane [0-3] position [0-9]+ draw [0-9]+: token [0-9]+ has probability 0 under the host chain
sample_no_penalty ^penalty +0 +16384 .* fail
sample_biased ^top-k +0 +16384 .* fail
sample_last_lane_biased ^top-k +3 +16384 .* fail
sample_seed_ignored seed [0-9]+ gave token [0-9]+ in draw [0-9]+, then [0-9]+
sample_temp_first ^temp-cuts +0 +16384 .* fail
T
expect_exit "inject=sample_biased in process fails" 1 "$NR" conform --in-process --model m -j1 --checks sampling-stats --backend-opt inject=sample_biased --seed 9
expect_exit "inject=sample_seed_ignored in process fails" 1 "$NR" conform --in-process --model m -j1 --checks sampling-stats --backend-opt inject=sample_seed_ignored

# ---- usage ----
expect_exit "--sampling-draws 5 is refused" 2 "$NR" conform --model m --checks sampling-stats --sampling-draws 5
expect_exit "--sampling-alpha 0 is refused" 2 "$NR" conform --model m --checks sampling-stats --sampling-alpha 0
expect_exit "--sampling-positions 0 is refused" 2 "$NR" conform --model m --checks sampling-stats --sampling-positions 0
expect_exit "--sampling-draws 5000: two calls a position" 0 "$NR" conform --model m -j1 --checks sampling-stats --sampling-draws 5000 --sampling-positions 2 --sampling-alpha 1e-3
expect_grep "5000 draws: 10000 a setting" '^llama +0 +10000 ' out.txt

# ---- the lanes: a sampler biased on the last lane only ----
# 4 lanes: lanes 0-2 pass every setting, lane 3 fails top-k (the bias's largest effect)
"$NR" conform --model m -j1 --checks sampling-stats --backend-opt inject=sample_last_lane_biased > ll.txt 2>&1
if grep -Eq '^top-k +[012] +16384 .* pass$' ll.txt && [ "$(grep -Ec '^top-k +[012] +16384 .* pass$' ll.txt)" -eq 3 ] \
   && ! grep -Eq '^[a-z-]+ +[012] +16384 .* fail$' ll.txt; then ok "last lane biased: lanes 0-2 pass"; else
    notok "last lane biased: lanes 0-2 pass" "$(grep -E ' fail$' ll.txt | head -3)"; fi
expect_grep "last lane biased: the first finding names lane 3" '^sampling-stats +FAIL .* lane 3( |:)' ll.txt
expect_grep "last lane biased: top-k lane 3's chi-square is a finding" 'top-k lane 3: chi-square' ll.txt
expect_exit "lanes=2: the bias on lane 1 fails" 1 "$NR" conform --model m -j1 --checks sampling-stats --backend-opt inject=sample_last_lane_biased --backend-opt lanes=2
expect_grep "lanes=2: 14 tests" 'per test 7.14e-08, 14 tests' out.txt
expect_grep "lanes=2: top-k lane 1 fails" '^top-k +1 +16384 .* fail' out.txt
# 12 lanes: 8 checked (the first and the last among them), 56 tests; the last lane's bias fails
expect_exit "lanes=12: the bias on lane 11 fails" 1 "$NR" conform --model m -j1 --checks sampling-stats --backend-opt inject=sample_last_lane_biased --backend-opt lanes=12 --json l12.json
expect_grep "lanes=12: top-k lane 11 fails" '^top-k +11 +16384 .* fail' out.txt
if [ -n "$PYTHON" ]; then
    expect_exit "lanes=12: 8 lanes checked, 0 and 11 among them, 56 tests" 0 "$PYTHON" -c '
import json, sys
cov = json.load(open(sys.argv[1]))["checks"][0]["coverage"]
L = cov["lanes"]
assert len(L) == 8 and L == sorted(set(L)) and L[0] == 0 and L[-1] == 11, L
assert cov["tests"] == 56 and abs(cov["alpha_per_test"] - 1e-6 / 56) < 1e-18, cov
assert len(cov["settings"]) == 64 and {s["lane"] for s in cov["settings"]} == set(L)
bad = {(s["setting"], s["lane"]) for s in cov["settings"] if s["verdict"] == "fail"}
assert bad and all(l == 11 for _, l in bad), bad
' l12.json
fi
# one lane: nothing is planted (the fault needs two lanes), the check passes
expect_exit "lanes=1: no last lane apart from lane 0, passes" 0 "$NR" conform --model m -j1 --checks sampling-stats --backend-opt inject=sample_last_lane_biased --backend-opt lanes=1
expect_grep "lanes=1: 7 tests" 'per test 1.43e-07, 7 tests' out.txt

# ---- plug-ins: sample present, absent, gated by size, wrong ----
LIBA="$GOLDEN_BUILD/lib/libgolden.a"
if [ ! -f "$LIBA" ]; then
    ok "conform-sampling plug-ins # skip no $LIBA"
    exit 0
fi
cat > shim.c <<'EOF'
/* The cpu backend's version 2 table (golden_cpu_backend() is its base) behind a plug-in; the
 * environment variable SAMPLING_SHIM picks what becomes of its sample call: full (kept), null
 * (NULL), small (size of a table built before the optional calls, sample left in place),
 * badtoken (the last draw a token outside the vocabulary). */
#include "golden/backend.h"
#include <stdlib.h>
#include <string.h>
extern const golden_backend_vtable *golden_cpu_backend(void);
static golden_backend_vtable_v2 VT;
static const golden_backend_vtable_v2 *CPU;
static int bad_sample(void *self, int lane, const golden_backend_sampling *s, int32_t *tok,
                      char *msg, size_t n)
{
    int rc = CPU->sample(self, lane, s, tok, msg, n);
    if (rc == 0)
        tok[s->n_draws > 1 ? s->n_draws - 1 : 0] = 1 << 20;
    return rc;
}
const golden_backend_vtable_v2 *golden_backend_entry_v2(void)
{
    CPU = (const golden_backend_vtable_v2 *)(const void *)golden_cpu_backend();
    VT = *CPU;
    VT.base.name = "sampling-shim";
    const char *m = getenv("SAMPLING_SHIM");
    if (m && strcmp(m, "null") == 0)
        VT.sample = NULL;
    if (m && strcmp(m, "small") == 0)
        VT.size = GOLDEN_BACKEND_V2_MIN_SIZE, VT.sample = bad_sample; /* must not be called */
    if (m && strcmp(m, "badtoken") == 0)
        VT.sample = bad_sample;
    return &VT;
}
EOF
LIBS=$(pkg-config --libs hdf5 yaml-0.1 jansson libcrypto libpcre2-8 zlib icu-uc 2>/dev/null) ||
    LIBS="-lhdf5_serial -lyaml -ljansson -lcrypto -lpcre2-8 -lz -licuuc"
SANF=""
if nm "$LIBA" 2>/dev/null | grep -q ' U __asan_'; then
    SANF="-fsanitize=address,undefined -fno-omit-frame-pointer"
fi
# shellcheck disable=SC2086
if ! cc -shared -fPIC -O1 $SANF -I"$GOLDEN_ROOT/libgolden/include" -o shim.so shim.c "$LIBA" \
        -Wl,--exclude-libs,ALL -Wl,-Bsymbolic $LIBS -lm -pthread 2> cc.txt; then
    notok "conform-sampling shim build" "$(head -c 400 cc.txt)"
    exit 0
fi
SAMPLING_SHIM=full expect_exit "a plug-in with sample, through the host: pass" 0 "$NR" conform --model m -j1 --backend ./shim.so --checks sampling-stats
SAMPLING_SHIM=full expect_exit "a plug-in with sample_seed_ignored behind it fails" 1 "$NR" conform --model m -j1 --backend ./shim.so --backend-opt inject=sample_seed_ignored --checks sampling-stats
for mode in null small; do
    SAMPLING_SHIM=$mode expect_exit "sample $mode, named: could not run (exit 2)" 2 "$NR" conform --model m -j1 --backend ./shim.so --checks sampling-stats --json named-$mode.json
    # the harness's own words: the proxy did not offer a call the plug-in lacks
    expect_grep "sample $mode: the proxy offers no sample call" 'ERROR .*its version 2 table leaves sample out' out.txt
    expect_grep "sample $mode: the report's verdict is not pass" '"verdict": "could not check"' named-$mode.json
done
SAMPLING_SHIM=null expect_exit "sample null, all checks: the rest pass, sampling-stats skipped (exit 0)" 0 "$NR" conform --model m -j1 --backend ./shim.so --max-context 80 --budget 0 --json all.json --junit all.xml
expect_grep "the row says skipped, with why" '^sampling-stats +skipped .*no sample call' out.txt
expect_grep "the JSON says skipped, with why" '"status": "skipped"' all.json
expect_grep "the JSON's why" '"why": "the backend has no sample call' all.json
expect_grep "JUnit marks it skipped, not passed" 'skipped="1"' all.xml
SAMPLING_SHIM=badtoken expect_exit "a sample call answering a token outside the vocabulary: exit 2" 2 "$NR" conform --model m -j1 --backend ./shim.so --checks sampling-stats
expect_grep "the violation names the draw and the token" 'sample draw 4095 gave token 1048576, outside the vocabulary of 512' out.txt
expect_exit "a version 1 plug-in, named: exit 2" 2 "$NR" conform --model m -j1 --backend "$GOLDEN_BUILD/tests/lib/test-backend.so" --checks sampling-stats
expect_grep "the version 1 plug-in has no sample call" 'ERROR .*no sample call \(ABI version 1\)' out.txt
