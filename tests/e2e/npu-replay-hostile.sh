#!/bin/sh
# A hostile backend cannot forge a verdict: the test plug-in's hostile=WHAT@CALL (crash in each
# call, exit(0), _exit(3), abort, hang, a write past msg_len, lying info(), NaN logits,
# non-UTF-8 messages, bad taps and marks) through run, conform and matrix. Each ends in exit 2
# (never 0, never 1: a dead backend is no verdict) with its calculet-fault/v1 line, and run
# leaves nothing but the faults file in its output folder. The backend host's death is what the
# harness saw (signal number, exit status, deadline), worked out from what the plug-in does.
. "$GOLDEN_ROOT/tests/e2e/lib.sh"
PLUGIN="$GOLDEN_BUILD/tests/lib/test-backend.so"
mkdir tmp
TMPDIR=$PWD/tmp
export TMPDIR

expect_exit "make-model tiny" 0 npu-replay make-model --preset tiny --seed 1 -o m
expect_exit "matrix" 0 npu-replay matrix --model m --backend "$PLUGIN" --max-len 16 --random 1 --repeated 0 -o man.jsonl -j1
# one decode case: set_hooks, reset, prefill, logits, then 7 x (decode, logits)
C=random-decode-past1-o8-00
EXTRA=
R="npu-replay run --backend $PLUGIN --manifest man.jsonl --cases $C --warmup 0 --runs 1 --side candidate --call-timeout 1"

# only_faults DIR: the folder holds the faults file and nothing else (no golden, raw, temp file)
only_faults() {
    _left=$(ls -A "$2" | grep -v '^faults.jsonl$' | tr '\n' ' ')
    if [ -z "$_left" ]; then ok "$1"; else notok "$1" "left behind: $_left"; fi
}

# hostile NAME WHAT@CALL KIND MESSAGE-REGEX: run exits 2, one fault line of KIND whose message
# matches, nothing else left
hostile() {
    mkdir "o-$1"
    expect_exit "run $1: exit 2" 2 $R $EXTRA --golden "o-$1/g.h5" --raw "o-$1/r.jsonl" --faults "o-$1/faults.jsonl" --backend-opt "hostile=$2"
    cp err.txt "$1.err"
    expect_lines "run $1: one error line" 1 "$1.err"
    only_faults "run $1: no golden, raw or temporary file left" "o-$1"
    expect_lines "run $1: one fault line" 1 "o-$1/faults.jsonl"
    expect_grep "run $1: kind $3, the message says what happened" "\"kind\":\"$3\",\"severity\":\"(error|fatal)\",\"message\":\"(test-counting: )?$4" "o-$1/faults.jsonl"
    expect_exit "run $1: the line is calculet-fault/v1" 0 manifest-verify --schema calculet-fault/v1 "o-$1/faults.jsonl"
}
hostile segv-hooks segv@set_hooks crash 'backend host crashed in set_hooks: signal 11 '
hostile segv-reset segv@reset crash 'backend host crashed in reset: signal 11 '
hostile segv-prefill segv@prefill crash 'backend host crashed in prefill: signal 11 '
hostile segv-decode segv@decode:3 crash 'backend host crashed in decode: signal 11 '
hostile segv-logits segv@logits:2 crash 'backend host crashed in logits: signal 11 '
hostile exit0 exit0@decode exit 'backend host exited in decode with status 0 '
hostile exit3 exit3@prefill exit 'backend host exited in prefill with status 3 '
hostile abort abort@logits crash 'backend host crashed in logits: signal 6 '
hostile hang hang@decode hang 'backend host hung in decode: no answer within 1.000 s; killed'
# (a sanitizer build may see the write first: it reports into the log, which takes seconds on a
# loaded machine, and exits 1)
EXTRA="--call-timeout 60"
hostile overflow overflow@prefill '(crash|exit)' 'backend host (crashed in prefill: signal 11 |exited in prefill with status 1 )'
hostile overlogits overlogits@logits:2 '(crash|exit)' 'backend host (crashed in logits: signal 11 |exited in logits with status 1 )'
EXTRA=
hostile nan nan@logits:4 nan_output 'logits: step 3: entry 0 is NaN'
hostile badutf8 badutf8@decode device_error 'bad \?\? bytes \?\[31m red \?\? end'
hostile badtap badtap@decode device_error 'backend sent 9 rows of tap layers/0/hidden in a decode call of 1 positions'
hostile badmark badmark@prefill device_error 'backend marked stage 0 at a time outside the prefill call'
# the host's log is limited (RLIMIT_FSIZE 64 MiB): 65 MiB on stdout is SIGXFSZ, a crash
hostile flood flood@decode crash 'backend host crashed in decode: signal 25 '
L=$(sed -n 's/.*(its output: \([^)]*\)).*/\1/p' flood.err)
S=$(wc -c < "$L")
if [ "$S" -eq 67108864 ]; then ok "... the log stopped at 64 MiB"; else notok "... the log stopped at 64 MiB" "$S bytes"; fi
rm -f "$L"
# the deadline scales with the tokens of the call: 1.25 s is too long for a decode under
# --call-timeout 1, not for a prefill of 33 tokens (1 x (1 + 33/64) = 1.52 s)
hostile slow-decode slow@decode hang 'backend host hung in decode: no answer within 1.000 s; killed'
mkdir m33
expect_exit "matrix up to 33 tokens" 0 npu-replay matrix --model m --backend "$PLUGIN" --max-len 33 --random 1 --repeated 0 -o m33/man.jsonl -j1
mkdir o-slow-prefill
expect_exit "a 1.25 s prefill of 33 tokens is within its deadline: exit 0" 0 npu-replay run --backend "$PLUGIN" --manifest m33/man.jsonl --cases random-prefill-p33-o1-00 --warmup 0 --runs 1 --side candidate --call-timeout 1 --golden o-slow-prefill/g.h5 --raw o-slow-prefill/r.jsonl --backend-opt hostile=slow@prefill
expect_grep "... one case ran" '^1 cases, 1 requests' out.txt
# a crash at the first call of its kind happens again in the fresh host: the retest fails; a
# crash at a later call does not recur in the retest's first request
expect_grep "a crash that recurs in the fresh host: retest failed" '"severity":"fatal",.*"recovered":false,"retest_after_reset":"failed"' o-segv-prefill/faults.jsonl
expect_grep "NaN logits do not end the host: the retest (its logits calls 5 on) passes" '"recovered":true,"retest_after_reset":"passed"' o-nan/faults.jsonl
expect_grep "the error line names the request and the retest" "^npu-replay: $C: request candidate/$C/0: test-counting: backend host exited in prefill with status 3 \\(its output: .*\\) \\(the retest after reset failed\\)$" exit3.err
if grep -q "$(printf '\033')" badutf8.err o-badutf8/faults.jsonl; then notok "no terminal escape reaches stderr or the fault line"; else ok "no terminal escape reaches stderr or the fault line"; fi

# the load: a host that dies or a backend that lies before the run is one error line, exit 2
for h in segv@open exit0@info hugevocab@info; do
    mkdir "o-$h"
    expect_exit "run $h: exit 2" 2 $R --golden "o-$h/g.h5" --raw "o-$h/r.jsonl" --faults "o-$h/faults.jsonl" --backend-opt "hostile=$h"
    expect_lines "run $h: one error line" 1 err.txt
    cp err.txt "$h.err"
    only_faults "run $h: nothing left but the faults file" "o-$h"
done
expect_grep "a crash in open: its fault line, the retest (a fresh host) failed" '"kind":"crash","severity":"fatal","message":"[^"]*test-backend.so: backend host crashed in open: signal 11 [^"]*","recovered":false,"retest_after_reset":"failed"' o-segv@open/faults.jsonl
expect_grep "exit(0) in info: its fault line" '"kind":"exit",.*backend host exited in info with status 0 ' o-exit0@info/faults.jsonl
expect_exit "... calculet-fault/v1" 0 manifest-verify --schema calculet-fault/v1 o-segv@open/faults.jsonl
expect_absent "a lying info() is no host death: no faults file" o-hugevocab@info/faults.jsonl
expect_grep "a crash in open" 'backend host crashed in open: signal 11 ' segv@open.err
expect_grep "exit(0) in info" 'backend host exited in info with status 0 ' exit0@info.err
expect_grep "a vocabulary of 10^9 is refused (before anything of that size is allocated)" 'backend reports vocab_size 1000000000, beyond the memory budget' hugevocab@info.err

# a clean plug-in still passes, isolated as every backend
mkdir o-clean
expect_exit "run, clean plug-in: exit 0" 0 $R --golden o-clean/g.h5 --raw o-clean/r.jsonl --faults o-clean/faults.jsonl
expect_lines "run, clean plug-in: no fault line" 0 o-clean/faults.jsonl
expect_exit "run, clean plug-in: the golden verifies" 0 golden-dump --verify o-clean/g.h5

# conform: each hostile call is an ERROR check with its fault line; never PASS, never FAIL
CF="npu-replay conform --model m --backend $PLUGIN --call-timeout 1 -j1"
conform() {
    expect_exit "conform $1: exit 2" 2 $CF $EXTRA --checks "$2" --backend-opt "hostile=$3" --faults "c-$1.jsonl" --json "c-$1.json"
    cp err.txt "c-$1.err"
    expect_grep "conform $1: kind $4" "\"case_id\":\"$5\",\"kind\":\"$4\",.*\"message\":\"conform $5: test-counting: $6" "c-$1.jsonl"
    expect_exit "conform $1: calculet-fault/v1" 0 manifest-verify --schema calculet-fault/v1 "c-$1.jsonl"
    expect_grep "conform $1: the report says could not check" '"verdict": "could not check"' "c-$1.json"
    expect_exit "conform $1: the check's status is error" 0 grep -A1 "\"check\": \"$5\"" "c-$1.json"
    expect_grep "conform $1: ... error, not pass" '"status": "error"' out.txt
}
conform segv-truncate kv-tail segv@truncate crash kv-tail 'backend host crashed in truncate: signal 11 '
conform exit0-length kv-tail exit0@length exit kv-tail 'backend host exited in length with status 0 '
conform abort-prefill kv-positions abort@prefill crash kv-positions 'backend host crashed in prefill: signal 6 '
conform hang kv-positions hang@prefill hang kv-positions 'backend host hung in prefill: no answer within'
EXTRA="--call-timeout 60"
conform overflow kv-positions overflow@logits '(crash|exit)' kv-positions 'backend host (crashed in logits: signal 11 |exited in logits with status 1 )'
EXTRA=
conform nan kv-positions nan@logits:2 nan_output kv-positions 'logits: entry 0 is NaN'
conform badutf8 kv-positions badutf8@decode device_error kv-positions 'bad \?\? bytes \?\[31m red \?\? end'
expect_exit "conform, clean plug-in: exit 0" 0 $CF --checks kv-positions,kv-tail --faults c-clean.jsonl --backend-log blog.txt --json c-clean.json --backend-opt hostile=print@open
expect_lines "conform, clean plug-in: no fault line" 0 c-clean.jsonl
expect_grep "the report names the backend log" '"backend_log": "blog.txt"' c-clean.json
expect_grep "the backend's stdout went to the log" '^backend says hello on stdout$' blog.txt
expect_grep "the backend's stderr went to the log" '^backend says hello on stderr$' blog.txt
if grep -q "backend says" out.txt err.txt; then notok "nothing of the backend on the harness's stdout or stderr"; else ok "nothing of the backend on the harness's stdout or stderr"; fi

# matrix: the reference's near-tie search through a crashing backend is exit 2, no manifest
mkdir mx
expect_exit "matrix through a crashing backend: exit 2" 2 npu-replay matrix --model m --backend "$PLUGIN" --backend-opt hostile=segv@prefill --max-len 16 --random 1 --repeated 0 --near-ties 2 -o mx/mx.jsonl -j1
expect_grep "... names the crash" 'backend host crashed in prefill: signal 11 ' err.txt
expect_absent "... no manifest" mx/mx.jsonl
expect_absent "... and no token file it wrote" mx/inputs

# SIGTERM during a hung call: the host is killed at once, nothing is left, exit 2
mkdir o-term
$R --model "$PWD/m" --call-timeout 300 --golden o-term/g.h5 --raw o-term/r.jsonl --backend-opt hostile=hang@decode > term.out 2> term.err &
pid=$!
sleep 2
kill -TERM $pid
wait $pid
rc=$?
if [ "$rc" -eq 2 ]; then ok "SIGTERM: exit 2"; else notok "SIGTERM: exit 2" "exit $rc: $(cat term.err)"; fi
n=$(ps -eo args | grep -F "__backend-host" | grep -cF "$PWD/m")
if [ "$n" -eq 0 ]; then ok "SIGTERM: no backend host left"; else notok "SIGTERM: no backend host left" "$n left"; fi
only_faults "SIGTERM: no golden or raw file left" o-term
expect_grep "SIGTERM: one line, interrupted" 'interrupted' term.err

# no log file is left in TMPDIR by hosts that wrote nothing
left=$(ls -A tmp | tr '\n' ' ')
if [ -z "$left" ]; then ok "no empty backend log left in TMPDIR"; else
    if grep -q . tmp/*; then ok "only backend logs with output are kept"; else notok "no empty backend log left in TMPDIR" "$left"; fi
fi

# ---- inputs are inputs: no output may overwrite the model folder's files, the manifest or its
# token files, with or without --force
T=$(sed -n 's/.*"input":{"path":"\([^"]*\)".*/\1/p' man.jsonl | head -n 1)
cp "$T" token.bak
cp m/model.safetensors weights.bak
RUN="npu-replay run --model m --manifest man.jsonl --side baseline --runs 1 --warmup 0 --force"
refused() {
    expect_exit "$1 --force: refused (an input)" 2 $2
    expect_grep "... says so" "output is also an input" err.txt
}
refused "run --golden onto config.json" "$RUN --golden m/config.json --raw x.jsonl"
refused "run --golden onto the weights" "$RUN --golden m/model.safetensors --raw x.jsonl"
refused "run --raw onto a token file" "$RUN --golden x.h5 --raw $T"
refused "run --faults onto the manifest" "$RUN --golden x.h5 --raw x.jsonl --faults man.jsonl"
expect_exit "conform --json onto the weights --force: refused" 2 npu-replay conform --model m --checks kv-lanes --json m/model.safetensors --force
expect_exit "conform --html onto config.json --force: refused" 2 npu-replay conform --model m --checks kv-lanes --html m/config.json --force
expect_exit "the token file is untouched" 0 cmp "$T" token.bak
expect_exit "the weights are untouched" 0 cmp m/model.safetensors weights.bak
expect_absent "no golden of the refused runs" x.h5
# the experiment folder (the one holding hypothesis.yaml, next to or above an input): its
# top-level documents and those of baseline/, candidate/ and compile/ are inputs too; its
# golden/, performance/ and stability/ are where outputs go
mkdir -p E/baseline E/candidate E/compile E/golden E/performance E/stability
printf 'matrix:\n  prompt_tokens: [4]\n  past_tokens: [1]\n  output_tokens: [3]\n' > E/hypothesis.yaml
echo '{"side": "baseline"}' > E/baseline/manifest.json
echo '{"side": "candidate"}' > E/candidate/manifest.json
echo 'compiled' > E/compile/baseline.log
echo '# decision' > E/decision.md
tar cf E.tar E
MX="npu-replay matrix --model m --random 1 --repeated 0 --force"
expect_exit "matrix -o into the experiment's golden/: written" 0 $MX --hypothesis E/hypothesis.yaml -o E/golden/input-manifest.jsonl
expect_exit "... and again with --force (an output, not an input)" 0 $MX --hypothesis E/hypothesis.yaml -o E/golden/input-manifest.jsonl
refused "matrix -o onto the hypothesis" "$MX --hypothesis E/hypothesis.yaml -o E/hypothesis.yaml"
refused "matrix -o onto baseline/manifest.json" "$MX --hypothesis E/hypothesis.yaml -o E/baseline/manifest.json"
ER="npu-replay run --model m --manifest E/golden/input-manifest.jsonl --side baseline --runs 1 --warmup 0 --force"
refused "run (manifest in E/golden/) --raw onto compile/baseline.log" "$ER --golden E/golden/b.h5 --raw E/compile/baseline.log"
refused "run --golden onto decision.md" "$ER --golden E/decision.md --raw E/performance/raw-requests.jsonl"
refused "run --faults onto hypothesis.yaml" "$ER --golden E/golden/b.h5 --raw E/performance/raw-requests.jsonl --faults E/hypothesis.yaml"
refused "run --raw onto candidate/manifest.json" "$ER --golden E/golden/b.h5 --raw E/candidate/manifest.json"
refused "soak -o onto candidate/manifest.json" "npu-replay soak --model m --manifest E/golden/input-manifest.jsonl --duration 1s -o E/candidate/manifest.json --force"
refused "soak --faults onto hypothesis.yaml" "npu-replay soak --model m --manifest E/golden/input-manifest.jsonl --duration 1s -o E/stability/soak.json --faults E/hypothesis.yaml --force"
expect_exit "run into the experiment's output folders: written" 0 $ER --golden E/golden/b.h5 --raw E/performance/raw-requests.jsonl --faults E/stability/faults.jsonl
mkdir E2 && tar cf - E | (cd E2 && tar xf -)
rm -rf E2/E/golden E2/E/performance E2/E/stability
mkdir -p E1 && (cd E1 && tar xf ../E.tar)
rm -rf E1/E/golden E1/E/performance E1/E/stability
expect_exit "the experiment's documents are untouched" 0 diff -r E1/E E2/E
mkfifo m/pipe
expect_exit "a FIFO in the model folder: exit 2" 2 npu-replay conform --model m --checks kv-lanes
expect_grep "... named, never read" "m/pipe: not a regular file" err.txt
rm m/pipe
ln -s /dev/zero m/endless
expect_exit "an endless device in the model folder: exit 2" 2 npu-replay run --model m --manifest man.jsonl --side baseline --golden x.h5 --raw x.jsonl
expect_grep "... named" "m/endless: not a regular file" err.txt
rm m/endless

# ---- --cases that match nothing: no empty golden that reads as a run (exit 2, nothing written)
expect_exit "run --cases matching no case: exit 2" 2 npu-replay run --model m --manifest man.jsonl --side baseline --golden none.h5 --raw none.jsonl --cases 'no-such-case*' --runs 1 --warmup 0
expect_grep "... says so" "no case matches --cases no-such-case" err.txt
expect_absent "... no golden" none.h5
expect_absent "... no raw file" none.jsonl

# ---- sizes from a document: output_tokens 2^62 is refused before any allocation
sed 's/"output_tokens":8,/"output_tokens":4611686018427387904,/' man.jsonl > huge.jsonl
expect_exit "output_tokens 2^62: exit 2" 2 npu-replay run --model m --manifest huge.jsonl --side baseline --golden h.h5 --raw h.jsonl
expect_grep "... names the key" "output_tokens 4611686018427387904 is beyond the largest context" err.txt
expect_absent "... no golden" h.h5
sed 's/"output_tokens":8,/"output_tokens":2147483648,/' man.jsonl > big.jsonl
expect_exit "output_tokens 2^31 x 512 logits: beyond the memory budget, exit 2" 2 npu-replay run --model m --manifest big.jsonl --side baseline --golden h.h5 --raw h.jsonl --cases "$C" --runs 1 --warmup 0
expect_grep "... says the budget" "2147483648 output tokens x 512 logits are beyond the memory budget" err.txt

# ---- config.json keys the cpu reference does not implement: exit 2 naming the key; the
# neutral value is accepted
for kv in 'model_type:"llama"' 'rope_scaling:{"type":"yarn","factor":4}' 'attention_bias:true' 'hidden_act:"gelu"' 'use_sliding_window:true'; do
    key=${kv%%:*}; val=${kv#*:}
    rm -rf mk; cp -r m mk
    sed -i "s/^{/{\"$key\": $val,/" mk/config.json
    sed -i "0,/\"$key\": [^,]*,/! s/\"$key\": [^,]*,//" mk/config.json 2>/dev/null
    expect_exit "config $key=$val: exit 2" 2 npu-replay conform --model mk --checks kv-lanes
    expect_lines "... one line" 1 err.txt
    expect_grep "... names the key" "mk/config.json: $key is " err.txt
done
rm -rf mk; cp -r m mk
sed -i 's/^{/{"rope_scaling": null, "attention_bias": false, "use_sliding_window": false,/' mk/config.json
expect_exit "neutral values of those keys: accepted" 0 npu-replay conform --model mk --checks kv-lanes --json mk.json
tr -d ' \n' < mk.json > mk.flat
expect_grep "... and no key listed as unknown (every one is known)" '"config_unknown_keys":\[\]' mk.flat
# keys the cpu reference knows nothing about: accepted, and listed in the run's metadata (the
# golden's config_unknown_keys attribute, conform's report), sorted
rm -rf mk; cp -r m mk
sed -i 's/^{/{"zeta_gate": {"a": 1}, "qk_layernorm": true, "bos_token_id": 1,/' mk/config.json
expect_exit "unknown config keys: conform runs" 0 npu-replay conform --model mk --checks kv-lanes --json mk2.json
tr -d ' \n' < mk2.json > mk2.flat
expect_grep "... the report lists them, sorted, and not the known bos_token_id" '"config_unknown_keys":\["qk_layernorm","zeta_gate"\]' mk2.flat
expect_exit "unknown config keys: run" 0 npu-replay run --model mk --manifest man.jsonl --side baseline --golden mk.h5 --raw mk.jsonl --cases "$C" --runs 1 --warmup 0
expect_exit "... the golden verifies" 0 golden-dump --verify mk.h5
expect_exit "... its attributes" 0 golden-dump --list mk.h5 --json mk-list.json
expect_grep "... list them as config_unknown_keys" '"config_unknown_keys": "qk_layernorm,zeta_gate"' mk-list.json
expect_exit "a golden of a model with no unknown key" 0 golden-dump --list o-clean/g.h5 --json clean-list.json
if grep -q config_unknown_keys clean-list.json; then notok "... a plug-in run without --model has no such attribute"; else ok "... a plug-in run without --model has no such attribute"; fi
expect_exit "run on the plain model" 0 npu-replay run --model m --manifest man.jsonl --side baseline --golden m0.h5 --raw m0.jsonl --cases "$C" --runs 1 --warmup 0
expect_exit "... its attributes" 0 golden-dump --list m0.h5 --json m0-list.json
expect_grep "... an empty list: every key of make-model's config is known" '"config_unknown_keys": ""' m0-list.json
expect_exit "conform on a missing model folder: exit 2" 2 npu-replay conform --model nowhere
expect_lines "... one line" 1 err.txt

# ---- a full disk during run: one error line, exit 2, nothing left (needs a small tmpfs)
mkdir full
if mount -t tmpfs -o size=1M tmpfs full 2>/dev/null; then
    dd if=/dev/zero of=full/fill bs=1k count=900 2>/dev/null
    expect_exit "a full disk during run: exit 2" 2 npu-replay run --model m --manifest man.jsonl --side baseline --golden full/g.h5 --raw full/r.jsonl --cases 'random-decode*' --runs 1 --warmup 0 -j1
    expect_lines "... one error line" 1 err.txt
    left=$(ls -A full | grep -v '^fill$' | tr '\n' ' ')
    if [ -z "$left" ]; then ok "... nothing left"; else notok "... nothing left" "$left"; fi
    umount full
else
    ok "a full disk during run # skip: cannot mount a tmpfs here"
fi

# ---- --in-process (the cpu backend's speed tests): the same golden, bit for bit, as isolated
expect_exit "run --in-process" 0 npu-replay run --model m --manifest man.jsonl --side baseline --golden ip.h5 --raw ip.jsonl --cases 'random-decode*' --runs 1 --warmup 0 --in-process -j1
expect_exit "run isolated (the default)" 0 npu-replay run --model m --manifest man.jsonl --side baseline --golden is.h5 --raw is.jsonl --cases 'random-decode*' --runs 1 --warmup 0 -j1
golden-dump --list ip.h5 | awk 'NR > 1 {print $1, $4}' > ip.sha
golden-dump --list is.h5 | awk 'NR > 1 {print $1, $4}' > is.sha
expect_lines "... 60 tensors listed" 60 ip.sha
expect_exit "... every tensor's sha256 equal" 0 cmp ip.sha is.sha
expect_exit "--in-process with a plug-in: refused" 2 npu-replay run --backend "$PLUGIN" --manifest man.jsonl --side baseline --golden y.h5 --raw y.jsonl --in-process
expect_grep "... for the built-in cpu backend only" 'in-process is for the built-in cpu backend only' err.txt
expect_exit "--in-process with --call-timeout: refused" 2 npu-replay run --model m --manifest man.jsonl --side baseline --golden y.h5 --raw y.jsonl --in-process --call-timeout 5

# ---- --backend-mem: the host's address space; too small a limit is the host's death, not ours
expect_exit "--backend-mem 1M: the host cannot even start: exit 2" 2 npu-replay conform --model m --checks kv-lanes --backend-mem 1M
expect_lines "... one line" 1 err.txt
expect_grep "... it says the host died in open" 'backend host (crashed|exited) in open' err.txt
if ldd "$GOLDEN_BIN/npu-replay" 2>/dev/null | grep -q asan; then
    ok "--backend-mem 2G is enough # skip: a sanitizer build reserves terabytes of address space"
else
    expect_exit "--backend-mem 2G is enough for the tiny model" 0 npu-replay conform --model m --checks kv-lanes --backend-mem 2G
fi
expect_exit "--backend-mem nonsense: exit 2" 2 npu-replay conform --model m --backend-mem 12X
expect_exit "--call-timeout 0: exit 2" 2 npu-replay conform --model m --call-timeout 0
