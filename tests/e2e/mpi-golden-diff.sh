# golden-diff on MPI ranks (issue 31, docs/scale.md): the MPI build (make MPI=1, build-mpi/)
# under mpirun -np 1..4 gives the verdict, table, JSON (minus timing), JUnit (minus timing)
# and HTML (minus timing) of the normal build's single process, byte for byte: a passing
# candidate, a failing one with a missing and an extra tensor, a three-way run, --only, and
# a baseline that is the candidate's data (the check across tensors, done after the merge).
# A rank that meets a lying golden, or whose worker is killed mid-run, ends the job with exit
# 2 naming the rank, and no output is left. Skipped (no ok line) without an MPI build.
. "$GOLDEN_ROOT/tests/e2e/lib.sh"

MPIBIN=${GOLDEN_MPI_BIN:-$GOLDEN_ROOT/build-mpi/bin}
if ! command -v mpirun >/dev/null 2>&1 || [ ! -x "$MPIBIN/golden-diff" ]; then
    echo "# skip mpi-golden-diff: no mpirun or no MPI build in $MPIBIN (make MPI=1)"
    exit 0
fi
if [ -z "$PYTHON" ]; then
    echo "not ok mpi-golden-diff: numpy+h5py not importable"
    exit 0
fi
[ "$(id -u)" -eq 0 ] && export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
mpi_private_session
MPIRUN="mpirun --oversubscribe"
SINGLE="$GOLDEN_BIN/golden-diff"

"$PYTHON" - <<'PY' || echo "not ok mpi-generate"
import subprocess
import numpy as np
import h5py
rng = np.random.default_rng(31)
n = [0]
def spec(name, dt, a):
    a = np.asarray(a); n[0] += 1; p = f"raw{n[0]}.bin"
    a.astype({"f32": "<f4", "i64": "<i8"}[dt]).tofile(p)
    return f"{name}:{dt}:{'x'.join(map(str, a.shape))}:file={p}"
def golden(out, d):
    subprocess.run(["make-golden", "--force", out] + [spec(k, *v) for k, v in d.items()], check=True)
ref = {}
for l in range(4):
    for part, shape in (("attn/out", (64, 96 + 32 * l)), ("mlp/out", (64 + 16 * l, 128))):
        ref[f"ref/layers/{l}/{part}"] = ("f32", rng.standard_normal(shape))
ref["ref/kernel/scale"] = ("f32", rng.standard_normal(300))
ref["ref/logits"] = ("f32", rng.standard_normal((16, 500)) * 3)
ref["ref/tokens"] = ("i64", rng.integers(0, 32000, (4, 32)))
def noisy(d, s):
    return {k: (dt, a if dt == "i64" or "kernel" in k else
                a + s * rng.standard_normal(a.shape) * np.abs(a).mean()) for k, (dt, a) in d.items()}
golden("ref.h5", ref)
golden("good.h5", noisy(ref, 1e-5))
bad = noisy(ref, 1e-5)
a = bad["ref/layers/1/mlp/out"][1].copy(); a[3, 7] = np.nan; bad["ref/layers/1/mlp/out"] = ("f32", a)
bad["ref/layers/2/attn/out"] = ("f32", ref["ref/layers/2/attn/out"][1] * 1.2)
t = ref["ref/tokens"][1].copy(); t[2, 20:] += 1; bad["ref/tokens"] = ("i64", t)
del bad["ref/layers/3/mlp/out"]
bad["cand/only/extra"] = ("f32", rng.standard_normal(10))
golden("bad.h5", bad)
base = noisy(ref, 1e-5)
base["ref/layers/2/attn/out"] = ("f32", ref["ref/layers/2/attn/out"][1] * 1.19)
golden("base.h5", base)
golden("bad-copy.h5", bad)              # the candidate's data under another name
golden("lie.h5", bad)                   # one tensor's stored max lies about its data
with h5py.File("lie.h5", "r+") as f:
    f["ref/layers/2/mlp/out"].attrs["max"] = 99.0
# big enough to be mid-run when a worker is killed (compared one element per work item)
big = {f"t{i}": ("f32", rng.standard_normal(500000)) for i in range(4)}
golden("big-ref.h5", big)
golden("big-cand.h5", big)
PY

# normalised outputs: timing fields out (per-tensor seconds, JUnit time and timestamp)
norm() {
    for f in "$1".json "$1".html; do
        [ -f "$f" ] && sed -e 's/"seconds": *[-+0-9.eE]*//g' "$f" > "$f.n"
    done
    [ -f "$1.xml" ] && sed -e 's/ time="[^"]*"//g' -e 's/ timestamp="[^"]*"//g' "$1.xml" > "$1.xml.n"
    return 0
}

# same NAME WANT ARGS...: the single process, then 1..4 ranks, with every output compared
same() {
    name=$1; want=$2; shift 2
    rm -f s.json s.xml s.html
    "$SINGLE" --json s.json --junit s.xml --html s.html "$@" > s.txt 2> s.err
    rc=$?
    if [ "$rc" -ne "$want" ]; then notok "$name-single" "exit $rc, wanted $want: $(head -c 300 s.err)"; return; fi
    norm s
    for np in 1 2 3 4; do
        rm -f m.json m.xml m.html
        $MPIRUN -np $np "$MPIBIN/golden-diff" --json m.json --junit m.xml --html m.html "$@" \
            > m.txt 2> m.err
        rc=$?
        norm m
        bad=""
        [ "$rc" -eq "$want" ] || bad="exit $rc, wanted $want: $(head -c 300 m.err)"
        [ -z "$bad" ] && ! cmp -s s.txt m.txt && bad="table differs"
        for f in json xml html; do
            [ -z "$bad" ] && ! cmp -s s.$f.n m.$f.n && bad="$f differs"
        done
        # the comparison itself must see the tensors: every case compares some
        [ -z "$bad" ] && ! grep -q '"tensors": *[1-9]' m.json.n && bad="no tensor compared"
        if [ -z "$bad" ]; then ok "$name-np$np"; else notok "$name-np$np" "$bad"; fi
    done
}

same pass 0 ref.h5 good.h5
same fail 1 ref.h5 bad.h5
same three-way 1 -b base.h5 ref.h5 bad.h5
same only 1 --only 'ref/layers/[12]/*' --only ref/tokens ref.h5 bad.h5
same allowed 1 --allow-missing-in-candidate 'ref/layers/3/*' -b base.h5 ref.h5 bad.h5

# the verdicts worked out by hand from the generator: all 11 pass; 3 fail (the NaN, the 1.2x
# layer, the diverging tokens) and 1 missing; three-way excuses the 1.2x layer (the baseline
# is 1.19x off), 2 fail
"$SINGLE" --json p.json ref.h5 good.h5 > /dev/null
expect_grep pass-counted '"passed": *11' p.json
"$SINGLE" --json f.json ref.h5 bad.h5 > /dev/null
expect_grep fail-counted '"failed": *3,' f.json
"$SINGLE" --json t.json -b base.h5 ref.h5 bad.h5 > /dev/null
expect_grep three-way-counted '"failed": *2,' t.json

# a baseline holding the candidate's data: refused after the merge, in the single run's words
"$SINGLE" -b bad-copy.h5 ref.h5 bad.h5 > /dev/null 2> s.err
for np in 2 3; do
    rm -f m.json
    expect_exit same-baseline-np$np 2 $MPIRUN -np $np "$MPIBIN/golden-diff" --json m.json \
        -b bad-copy.h5 ref.h5 bad.h5
    if grep -q "$(cat s.err)" err.txt; then ok same-baseline-words-np$np; else
        notok same-baseline-words-np$np "$(head -c 300 err.txt)"; fi
    expect_absent same-baseline-no-json-np$np m.json
done

# a rank meets a golden whose stored statistics lie: exit 2 naming the rank, nothing written
expect_exit lie-single 2 "$SINGLE" ref.h5 lie.h5
expect_grep lie-single-words 'lie.h5:ref/layers/2/mlp/out: stored statistics do not match' err.txt
for np in 2 3 4; do
    rm -f m.json m.xml m.html
    expect_exit lie-np$np 2 $MPIRUN -np $np "$MPIBIN/golden-diff" --json m.json --junit m.xml \
        --html m.html ref.h5 lie.h5
    expect_grep lie-rank-np$np "^golden-diff: lie.h5:ref/layers/2/mlp/out: rank [0-9] of $np \\(comparing [0-9]+ of its tensors, [0-9]+ bytes\\): stored statistics do not match" err.txt
    expect_absent lie-no-json-np$np m.json
    # (changed on merge: like the single tool, an exit 2 with --junit writes one error case)
    expect_grep lie-junit-error-np$np '<failure message="could not compare: lie.h5' m.xml
    expect_absent lie-no-html-np$np m.html
done

# kill -9 rank 1's worker mid-run: exit 2 naming rank 1 and the signal, no output
rm -f k.json k.xml
$MPIRUN -np 2 "$MPIBIN/golden-diff" --chunk 1 --json k.json --junit k.xml big-ref.h5 big-cand.h5 \
    > k.out 2> k.err &
job=$!
victim=""
for _ in $(seq 1 200); do
    for p in $(pgrep -f "$MPIBIN/golden-diff --chunk 1"); do
        pp=$(ps -o ppid= -p "$p" 2>/dev/null | tr -d ' ')
        # a worker: its parent is a golden-diff rank too; rank 1 by its environment
        if [ -n "$pp" ] && [ "$(cat "/proc/$pp/comm" 2>/dev/null)" = golden-diff ] &&
           tr '\0' '\n' < "/proc/$p/environ" 2>/dev/null | grep -qx 'OMPI_COMM_WORLD_RANK=1'; then
            victim=$p
        fi
    done
    [ -n "$victim" ] && break
    sleep 0.05
done
if [ -n "$victim" ]; then
    sleep 0.1
    kill -9 "$victim"
    ok kill-found-worker
else
    notok kill-found-worker "no worker process of rank 1 seen"
fi
wait $job
rc=$?
if [ "$rc" -eq 2 ]; then ok kill-exit-2; else notok kill-exit-2 "exit $rc: $(head -c 300 k.err)"; fi
expect_grep kill-names-rank "^golden-diff: rank 1 of 2 \\(comparing [0-9]+ of its tensors, [0-9]+ bytes\\): its worker process $victim was killed by signal 9" k.err
expect_absent kill-no-json k.json
expect_grep kill-junit-error '<failure message="could not compare: rank 1 of 2' k.xml

# run alone (no launcher) the MPI build is the normal tool
rm -f s.json a.json
"$SINGLE" --json s.json -b base.h5 ref.h5 bad.h5 > s.txt 2>&1
"$MPIBIN/golden-diff" --json a.json -b base.h5 ref.h5 bad.h5 > a.txt 2>&1
norm s; norm a
if cmp -s s.txt a.txt && cmp -s s.json.n a.json.n; then ok alone-is-single; else notok alone-is-single; fi
