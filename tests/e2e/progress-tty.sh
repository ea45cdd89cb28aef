# Progress on a TTY (issue 29): golden-dump, golden-diff, npu-replay make-model and run draw one redrawing
# line on stderr (\r ... ESC[K: label, elapsed, done/total, rate, ETA) when stderr is a terminal
# (script(1) gives them one), nothing in a pipe or with -q.
. "$GOLDEN_ROOT/tests/e2e/lib.sh"
if ! command -v script > /dev/null 2>&1 || [ -z "$PYTHON" ]; then
    echo "ok progress-tty # SKIP no script(1) (util-linux) or numpy"; exit 0
fi
"$PYTHON" - <<'PYEOF'
import numpy as np
a = np.arange(1 << 21, dtype=np.float32)
np.save("a.npy", a)
b = a.copy(); b[5] += 0.5
np.save("b.npy", b)
PYEOF
# tty CMD...: run CMD with a pseudo-terminal as stdin, stdout and stderr; all of it to tty.txt
tty() { script -qec "$*" /dev/null > tty.txt 2>&1 < /dev/null; }
has_line() { grep -q "$(printf '\r')$1" tty.txt && grep -q "$(printf '\033')\[K" tty.txt; }

tty golden-dump -o g.h5 a.npy
if has_line 'golden-dump  [0-9.]* s  [0-9.]* [KMG]*i*B of 8.0 MiB (' tty.txt; then ok dump-progress-on-tty
else notok dump-progress-on-tty "$(od -c tty.txt | head -5)"; fi
golden-dump -f -o g.h5 a.npy > out.txt 2> err.txt
if [ -s err.txt ]; then notok dump-no-progress-in-pipe "$(head -c 200 err.txt)"; else ok dump-no-progress-in-pipe; fi
tty golden-dump -q -f -o g.h5 a.npy
if grep -q "$(printf '\r')" tty.txt; then notok dump-quiet-no-progress; else ok dump-quiet-no-progress; fi

tty golden-diff --tier kernel a.npy b.npy
if has_line 'golden-diff  [0-9.]* s  [0-9]*/2097152 elements ([0-9]*%)'; then ok diff-progress-on-tty
else notok diff-progress-on-tty "$(od -c tty.txt | head -5)"; fi
# the report is still there after the line is cleared, and the verdict unchanged
expect_grep diff-report-after-progress 'FAIL.* kernel +a +f32' tty.txt
golden-diff --tier kernel a.npy b.npy > out.txt 2> err.txt
if grep -q "$(printf '\r')" err.txt; then notok diff-no-progress-in-pipe; else ok diff-no-progress-in-pipe; fi
tty golden-diff -q --tier kernel a.npy b.npy
if [ -s tty.txt ]; then notok diff-quiet-silent "$(od -c tty.txt | head -3)"; else ok diff-quiet-silent; fi

# npu-replay make-model: tensor bytes written of the total, the tensor in hand. The total is
# worked out from the file it writes: the safetensors data after its 8-byte length and header.
tty npu-replay make-model --preset tiny --seed 7 -o tiny
"$PYTHON" - > mm-total.txt <<'PYEOF'
import struct, os
f = open("tiny/model.safetensors", "rb"); n = struct.unpack("<Q", f.read(8))[0]
print("%.1f KiB" % ((os.path.getsize("tiny/model.safetensors") - 8 - n) / 1024))
PYEOF
tot=$(cat mm-total.txt)
if has_line "make-model model[.a-z_]*weight  [0-9.]* s  [0-9.]* [KMG]*i*B of $tot ("; then ok make-model-progress-on-tty
else notok make-model-progress-on-tty "want of $tot: $(od -c tty.txt | head -8)"; fi
if tr '\r' '\n' < tty.txt | grep -q "  $tot of $tot (100%)"; then ok make-model-progress-reaches-total
else notok make-model-progress-reaches-total "want $tot of $tot: $(tr '\r' '\n' < tty.txt | tail -3)"; fi
npu-replay make-model --preset tiny --seed 7 -f -o tiny > out.txt 2> err.txt
if [ -s err.txt ]; then notok make-model-no-progress-in-pipe "$(head -c 200 err.txt)"; else ok make-model-no-progress-in-pipe; fi
tty npu-replay make-model -q -f --preset tiny --seed 7 -o tiny
if grep -q "$(printf '\r')" tty.txt; then notok make-model-quiet-no-progress; else ok make-model-quiet-no-progress; fi

# npu-replay run: requests done, rate, the case in hand
mkdir -p inputs
echo "[6,5,17,300]" > inputs/p1.json
h=$(sha256sum inputs/p1.json | cut -d' ' -f1)
printf '{"case_id":"p1","phase":"prefill","prompt_tokens":4,"past_tokens":0,"output_tokens":2,"dataset":"fixed_prompt","rejection":false,"input":{"path":"inputs/p1.json","sha256":"%s"}}\n' "$h" > m.jsonl
tty npu-replay run --model tiny --manifest m.jsonl --side baseline --golden r.h5 --raw raw.jsonl --warmup 1 --runs 2
if has_line 'npu-replay run p1 [0-9]/3  [0-9.]* s  [0-9] requests  '; then ok run-progress-on-tty
else notok run-progress-on-tty "$(od -c tty.txt | head -8)"; fi
tty npu-replay run -q -f --model tiny --manifest m.jsonl --side baseline --golden r.h5 --raw raw.jsonl --warmup 1 --runs 2
if grep -q "$(printf '\r')" tty.txt; then notok run-quiet-no-progress; else ok run-quiet-no-progress; fi
