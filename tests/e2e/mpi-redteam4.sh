#!/bin/sh
# tests/e2e/mpi-redteam4.sh: the red team's script (session 4, AREA mpi4), trimmed for CI (one rank
# count, 3, where it ran 1-4; the seal's kill cases left to mpi-manifest-verify.sh: the full
# run took 88 s),
# plus the cases of its two findings: the ranks' scratch folders removed when a rank's own
# process is killed (by the survivors on mpirun's SIGTERM, the dead one's by golden-mpirun), and
# a user's files and links named like the old per-rank files never touched.
# Red team (session 4, AREA mpi4): the MPI build's tools against the single tools, from the outside.
# Authority: docs/scale.md ("They print, exit and write exactly what the single-process tool does",
# "What is sharded", "npu-replay run on ranks", "A failing rank"), docs/manifest-verify.md (seal,
# exit statuses), docs/npu-replay.md (run, outputs whole or not at all), docs/cli.md (--force).
# Every expected answer below is "what the single tool ($GOLDEN_BIN) does on the same input", worked
# out by running it in this script, plus the doc's own statements for the failure paths.
. "$GOLDEN_ROOT/tests/e2e/lib.sh"

MB=${GOLDEN_MPI_BIN:-$GOLDEN_ROOT/build-mpi/bin}
if ! command -v mpirun >/dev/null 2>&1 || [ ! -x "$MB/npu-replay" ] || ! command -v python3 >/dev/null 2>&1 \
   || ! command -v h5dump >/dev/null 2>&1; then
    echo "ok mpi4-redteam # skip no mpirun, MPI build, python3 or h5dump"; exit 0
fi
# a sanitized MPI build (GOLDEN_MPI_BIN=build-mpi-san/bin): Open MPI's own allocations at exit
export LSAN_OPTIONS="${LSAN_OPTIONS:+$LSAN_OPTIONS:}suppressions=$GOLDEN_ROOT/tests/e2e/lsan-mpi.supp:print_suppressions=0"
S=$GOLDEN_BIN
MPI="mpirun --oversubscribe --allow-run-as-root"
GMPI="$MB/golden-mpirun --oversubscribe --allow-run-as-root"
TOP=$(pwd)
mpi_private_session

# h5norm FILE: h5dump's whole text without its first line (the file name) and with the root
# `created` time blanked (scale.md: "only the root `created` time differs").
h5norm() { h5dump "$1" | sed 1d | sed -E 's/"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]+)?Z"/"TIME"/'; }
# rawnorm FILE: the raw lines in their order, without their times (ttft_ms, tpot_ms, stages).
rawnorm() { python3 -c '
import json, sys
for l in open(sys.argv[1]):
    d = json.loads(l)
    for k in ("ttft_ms", "tpot_ms", "stages"): d.pop(k, None)
    print(json.dumps(d, sort_keys=True))' "$1"; }
# leftovers DIR: files a failed or finished run must not leave (rank files, temporaries).
leftovers() { ls -A "$1" | grep -Ev '^(out.txt|err.txt|o.txt|e.txt)$' ; }
# notime FILE: a JSON report without its per-tensor timing lines ("seconds": ...).
notime() { grep -v '"seconds":' "$1"; }
same() { # same NAME A B WHAT
    if cmp -s "$2" "$3"; then ok "$1"; else notok "$1" "$4 differs: $(diff "$2" "$3" | head -c 300)"; fi; }

# ---------------------------------------------------------------- setup (single tools, < 1 s)
$S/npu-replay make-model --preset tiny --seed 1 --layers 1 -o model >/dev/null 2>&1 &&
$S/npu-replay matrix --model model --max-len 16 --random 1 --repeated 1 -o man.jsonl >/dev/null 2>&1 ||
    { notok setup "make-model/matrix failed"; exit 0; }
NC=$(wc -l < man.jsonl | tr -d ' ')
RUN="run --model $TOP/model --manifest $TOP/man.jsonl --side baseline --warmup 1 --runs 2"
mkdir single && (cd single && $S/npu-replay $RUN --golden g.h5 --raw r.jsonl > o.txt 2> e.txt) ||
    { notok setup "single run failed: $(cat single/e.txt)"; exit 0; }
h5norm single/g.h5 > single.h5txt; rawnorm single/r.jsonl > single.rawtxt
FIRST=$(head -1 man.jsonl | sed -E 's/.*"case_id":"([^"]*)".*/\1/')

# ---------------------------------------------------------------- npu-replay run at 1..4 ranks
# scale.md "The same golden": merged golden = single's h5dump text (data, dtype, shape, attributes;
# only `created` differs) and the raw lines without their times, at 1-4 ranks; stdout the single
# one's ("They print ... exactly what the single-process tool does"); the ranks' files removed.
for n in 3; do
    mkdir np$n; cd np$n
    $MPI -np $n "$MB/npu-replay" $RUN --golden g.h5 --raw r.jsonl > o.txt 2> e.txt; rc=$?
    if [ $rc -eq 0 ]; then ok "replay-np$n-exit"; else notok "replay-np$n-exit" "exit $rc: $(head -c 300 e.txt)"; fi
    if [ -f g.h5 ]; then h5norm g.h5 > ../np$n.h5txt; same "replay-np$n-golden-h5dump" ../single.h5txt ../np$n.h5txt "h5dump text"
    else notok "replay-np$n-golden-h5dump" "no golden"; fi
    if [ -f r.jsonl ]; then rawnorm r.jsonl > ../np$n.rawtxt; same "replay-np$n-raw-order" ../single.rawtxt ../np$n.rawtxt "raw lines"
    else notok "replay-np$n-raw-order" "no raw"; fi
    same "replay-np$n-stdout" ../single/o.txt o.txt "stdout"
    l=$(leftovers . | grep -Ev '^(g.h5|r.jsonl)$'); [ -z "$l" ] && ok "replay-np$n-no-rank-files" || notok "replay-np$n-no-rank-files" "left: $l"
    cd "$TOP"
done

# The merged golden's hashes and statistics are recomputed by the writer (scale.md); golden-dump
# --verify (single build) must pass it and golden-diff single vs merged must be 0 failed, exit 0.
expect_exit replay-merged-dump-verify 0 $S/golden-dump --verify np3/g.h5
expect_exit replay-merged-vs-single-diff 0 $S/golden-diff single/g.h5 np3/g.h5
# golden-dump --list prints stored sha256/min/max/mean/std per tensor: identical tables.
$S/golden-dump --list single/g.h5 > l1.txt 2>&1; $S/golden-dump --list np3/g.h5 > l3.txt 2>&1
same replay-merged-list-hashes-stats l1.txt l3.txt "golden-dump --list"

# More ranks than cases: scale.md "ranks beyond total ... wait"; one selected case on 3 ranks must
# still give the single tool's golden (the case is the unit; two ranks have nothing to do).
mkdir one1 one3
(cd one1 && $S/npu-replay $RUN --cases "$FIRST" --golden g.h5 --raw r.jsonl > o.txt 2> e.txt)
(cd one3 && $MPI -np 3 "$MB/npu-replay" $RUN --cases "$FIRST" --golden g.h5 --raw r.jsonl > o.txt 2> e.txt); rc=$?
if [ $rc -eq 0 ] && [ -f one3/g.h5 ] && [ "$(h5norm one1/g.h5)" = "$(h5norm one3/g.h5)" ] &&
   [ "$(rawnorm one1/r.jsonl)" = "$(rawnorm one3/r.jsonl)" ]; then ok replay-1case-3ranks
else notok replay-1case-3ranks "exit $rc or outputs differ from single: $(head -c 300 one3/e.txt)"; fi
l=$(leftovers one3 | grep -Ev '^(g.h5|r.jsonl)$'); [ -z "$l" ] && ok replay-1case-3ranks-no-rank-files || notok replay-1case-3ranks-no-rank-files "left: $l"

# Raw lines in a stable order: --cases given in the reverse of the manifest's order (repeated-*
# first, then random-*). scale.md: the raw lines go "case by case in manifest order ... the single
# run's order"; so 3 ranks must give the single run's lines and golden for the same options.
mkdir ord1 ord3
(cd ord1 && $S/npu-replay $RUN --cases 'repeated-*' --cases 'random-*' --golden g.h5 --raw r.jsonl > o.txt 2> e.txt); rc1=$?
(cd ord3 && $MPI -np 3 "$MB/npu-replay" $RUN --cases 'repeated-*' --cases 'random-*' --golden g.h5 --raw r.jsonl > o.txt 2> e.txt); rc=$?
if [ $rc1 -eq 0 ] && [ $rc -eq 0 ] && [ "$(rawnorm ord1/r.jsonl)" = "$(rawnorm ord3/r.jsonl)" ] && [ "$(h5norm ord1/g.h5)" = "$(h5norm ord3/g.h5)" ]; then
    ok replay-cases-order-3ranks; else notok replay-cases-order-3ranks "single $rc1, 3 ranks $rc, raw or golden differ: $(head -c 200 ord3/e.txt)"; fi

# An existing output without --force: exit 2 (npu-replay.md: 2 = could not run; cli.md: outputs are
# replaced only with --force), here the raw file (the second output, checked as well before any
# work): it stays untouched, no golden, no rank files.
mkdir exr; cd exr; echo "precious" > r.jsonl
$MPI -np 3 "$MB/npu-replay" $RUN --golden g.h5 --raw r.jsonl > o.txt 2> e.txt; rc=$?
if [ $rc -eq 2 ] && [ "$(cat r.jsonl)" = precious ] && [ -z "$(leftovers . | grep -v '^r.jsonl$')" ]; then ok replay-existing-raw-3ranks
else notok replay-existing-raw-3ranks "exit $rc, r.jsonl='$(head -c 20 r.jsonl)', files: $(leftovers . | tr '\n' ' ')"; fi
# ... and with --force both are replaced by the single run's outputs.
echo "precious" > g.h5
$MPI -np 3 "$MB/npu-replay" $RUN --force --golden g.h5 --raw r.jsonl > o.txt 2> e.txt; rc=$?
if [ $rc -eq 0 ] && [ "$(h5norm g.h5 2>/dev/null)" = "$(cat ../single.h5txt)" ] && [ "$(rawnorm r.jsonl 2>/dev/null)" = "$(cat ../single.rawtxt)" ]; then
    ok replay-force-3ranks; else notok replay-force-3ranks "exit $rc or outputs not the single run's: $(head -c 300 e.txt)"; fi
cd "$TOP"

# One rank's input damaged: a case's token file no longer matches the manifest's sha256. The single
# tool refuses (exit 2, checked here); the ranks must refuse too, with no golden, raw or rank file.
mkdir bad; cp -r model man.jsonl inputs bad/ 2>/dev/null
LASTIN=$(tail -1 man.jsonl | sed -E 's/.*"path":"([^"]*)".*/\1/')
sed -i 's/\([0-9]\)\]/\1,1]/' "bad/$LASTIN"
BRUN="run --model $TOP/bad/model --manifest $TOP/bad/man.jsonl --side baseline --warmup 1 --runs 2"
mkdir bad/s bad/m
(cd bad/s && $S/npu-replay $BRUN --golden g.h5 --raw r.jsonl > o.txt 2> e.txt); rc1=$?
(cd bad/m && $MPI -np 3 "$MB/npu-replay" $BRUN --golden g.h5 --raw r.jsonl > o.txt 2> e.txt); rc2=$?
if [ $rc1 -ne 0 ] && [ $rc2 -eq $rc1 ] && [ -z "$(leftovers bad/m)" ]; then ok replay-damaged-input-3ranks
else notok replay-damaged-input-3ranks "single exit $rc1, 3 ranks exit $rc2, files: $(leftovers bad/m | tr '\n' ' ') $(head -c 200 bad/m/e.txt)"; fi

# A rank's worker killed (scale.md test hook GOLDEN_TEST_SIGKILL=R, "A crash of a rank's worker"):
# exit 2, one line naming "rank 1 of 2", nothing written, the ranks' files removed "in every case".
mkdir k1; cd k1
$MPI -np 2 -x GOLDEN_TEST_SIGKILL=1 "$MB/npu-replay" $RUN --golden g.h5 --raw r.jsonl > o.txt 2> e.txt; rc=$?
if [ $rc -eq 2 ] && grep -q 'rank 1 of 2' e.txt && grep -q 'signal 9' e.txt; then ok replay-worker-sigkill-exit2
else notok replay-worker-sigkill-exit2 "exit $rc: $(grep -v '^-\|^$' e.txt | head -c 300)"; fi
l=$(leftovers .); [ -z "$l" ] && ok replay-worker-sigkill-nothing-left || notok replay-worker-sigkill-nothing-left "left: $l"
cd "$TOP"
# A rank's own MPI process killed (GOLDEN_TEST_SIGKILL=R:rank) under golden-mpirun: status 2 and
# "golden-mpirun: rank 2 ... killed by signal 9", no merged output.
# judgement: "the ranks' files are removed in every case" / "nothing partial is left": a demanding
# user expects no g.h5.rankK-of-N either (the doc does not exempt the dead rank's own file).
mkdir k2; cd k2
$GMPI -np 3 -x GOLDEN_TEST_SIGKILL=2:rank "$MB/npu-replay" $RUN --golden g.h5 --raw r.jsonl > o.txt 2> e.txt; rc=$?
if [ $rc -eq 2 ] && grep -q 'golden-mpirun: rank 2 ' e.txt && [ ! -e g.h5 ] && [ ! -e r.jsonl ]; then ok replay-rank-sigkill-golden-mpirun
else notok replay-rank-sigkill-golden-mpirun "exit $rc, files: $(leftovers . | tr '\n' ' '): $(grep golden-mpirun e.txt | head -c 300)"; fi
sleep 0.3; l=$(leftovers .); [ -z "$l" ] && ok replay-rank-sigkill-no-rank-files || notok replay-rank-sigkill-no-rank-files "left: $l"
cd "$TOP"
# The same kill under a bare mpirun: the survivors remove their own folders on mpirun's SIGTERM
# (scale.md: only the dead rank's own folder can be left, OUT.h5.rank2-of-3.XXXXXX, and no file).
# mpirun's SIGKILL follows its SIGTERM after odls_base_sigkill_timeout (1 s by default): on a loaded
# machine (a sanitizer build beside other tests) a survivor was killed before it had removed its
# folder, which no tool can prevent. 20 s gives the handler the time the doc assumes.
mkdir k3; cd k3
$MPI --mca odls_base_sigkill_timeout 20 -np 3 -x GOLDEN_TEST_SIGKILL=2:rank "$MB/npu-replay" $RUN --golden g.h5 --raw r.jsonl > o.txt 2> e.txt; rc=$?
sleep 0.3; l=$(leftovers . | tr '\n' ' ')
case $l in
"" | "g.h5.rank2-of-3."??????" ") ok replay-rank-sigkill-survivors-clean ;;
*) notok replay-rank-sigkill-survivors-clean "exit $rc, left: $l" ;;
esac
cd "$TOP"
# A user's files named like per-rank files (a link to a precious file, a plain file) are neither
# followed, overwritten nor removed by a run, nor by golden-mpirun after a killed rank.
mkdir own; cd own; echo precious > precious.txt; ln -s precious.txt g.h5.rank1-of-2; echo mine > r.jsonl.rank0-of-2
ln -s precious.txt g.h5.rank0-of-2.abcdef
$MPI -np 2 "$MB/npu-replay" $RUN --golden g.h5 --raw r.jsonl > o.txt 2> e.txt; rc=$?
$GMPI -np 2 -x GOLDEN_TEST_SIGKILL=1:rank "$MB/npu-replay" $RUN --golden g2.h5 --raw r2.jsonl > o2.txt 2> e2.txt; rc2=$?
sleep 0.3
if [ $rc -eq 0 ] && [ $rc2 -eq 2 ] && [ "$(readlink g.h5.rank1-of-2)" = precious.txt ] && [ "$(cat precious.txt)" = precious ] &&
   [ "$(cat r.jsonl.rank0-of-2)" = mine ] && [ -L g.h5.rank0-of-2.abcdef ] &&
   [ "$(leftovers . | grep -v '^o2.txt$' | grep -v '^e2.txt$' | tr '\n' ' ')" = "g.h5 g.h5.rank0-of-2.abcdef g.h5.rank1-of-2 precious.txt r.jsonl r.jsonl.rank0-of-2 " ] &&
   [ "$(h5norm g.h5)" = "$(cat ../single.h5txt)" ]; then ok replay-user-files-untouched
else notok replay-user-files-untouched "exit $rc/$rc2, files: $(ls -lA | tr '\n' ' ' | head -c 400)"; fi
cd "$TOP"

# ---------------------------------------------------------------- manifest-verify --seal at 1..4 ranks
# scale.md: "The seal and every output are byte for byte the single tool's at 1-4 ranks". Each run
# happens in its own parent folder so the printed relative path is the same.
mkdir -p ms/OP-MOE-0001; cp -r "$GOLDEN_ROOT/examples/experiment/OP-MOE-0001/." ms/OP-MOE-0001/; rm -f ms/OP-MOE-0001/SHA256SUMS
# more bytes to split: a few extra golden files of different sizes (sealed like every asset)
i=1; for sz in 300000 200000 100000 50000; do head -c $sz /dev/urandom > ms/OP-MOE-0001/golden/extra$i.bin; i=$((i+1)); done
cp -r ms base
(cd ms && $S/manifest-verify --seal --json rep.json OP-MOE-0001 > o.txt 2> e.txt); rcs=$?
if [ $rcs -ne 0 ]; then notok seal-single-setup "single seal exit $rcs: $(tail -2 ms/o.txt)"; fi
for n in 3; do
    cp -r base m$n
    (cd m$n && $MPI -np $n "$MB/manifest-verify" --seal --json rep.json OP-MOE-0001 > o.txt 2> e.txt); rc=$?
    if [ $rc -eq $rcs ] && cmp -s ms/OP-MOE-0001/SHA256SUMS m$n/OP-MOE-0001/SHA256SUMS && cmp -s ms/rep.json m$n/rep.json &&
       cmp -s ms/o.txt m$n/o.txt; then ok "seal-np$n-identical"
    else notok "seal-np$n-identical" "exit $rc (single $rcs); seal/report/stdout differ: $(diff ms/OP-MOE-0001/SHA256SUMS m$n/OP-MOE-0001/SHA256SUMS 2>&1 | head -c 200)"; fi
done

# More ranks than files to hash: a fresh folder from --init (status planned: only hypothesis.yaml, "1 file hashed"
# is required; a handful of files) sealed on 4 ranks gives the single tool's status, lines and seal.
mkdir i1; $S/manifest-verify --init OP-MOE-0002 i1/OP-MOE-0002 > /dev/null 2>&1
cp -r i1 i4
(cd i1 && $S/manifest-verify --seal OP-MOE-0002 > o.txt 2> e.txt); rc1=$?
(cd i4 && $MPI -np 4 "$MB/manifest-verify" --seal OP-MOE-0002 > o.txt 2> e.txt); rc=$?
if [ $rc1 -eq 0 ] && [ $rc -eq 0 ] && cmp -s i1/o.txt i4/o.txt && {
   cmp -s i1/OP-MOE-0002/SHA256SUMS i4/OP-MOE-0002/SHA256SUMS; }; then ok seal-init-folder-4ranks
else notok seal-init-folder-4ranks "exit $rc (single $rc1): $(diff i1/o.txt i4/o.txt | head -c 200)"; fi

# An existing seal without --force (manifest-verify.md: "an existing seal is replaced only with
# --force"; exit 2 for "an output that exists without --force"): the ranks answer as the single
# tool, and the seal is untouched.
cp -r ms ex1; cp -r ms ex2; cp ex1/OP-MOE-0001/SHA256SUMS seal.orig
(cd ex1 && $S/manifest-verify --seal OP-MOE-0001 > o.txt 2> e.txt); rc1=$?
(cd ex2 && $MPI -np 2 "$MB/manifest-verify" --seal OP-MOE-0001 > o.txt 2> e.txt); rc2=$?
if [ $rc1 -ne 0 ] && [ $rc2 -eq $rc1 ] && cmp -s seal.orig ex2/OP-MOE-0001/SHA256SUMS && cmp -s ex1/o.txt ex2/o.txt; then ok seal-existing-no-force-2ranks
else notok seal-existing-no-force-2ranks "single exit $rc1, 2 ranks exit $rc2, seal changed or stdout differs"; fi

# Verifying a sealed folder whose asset changed (no --seal): rule `seal`, exit 1, the single tool's
# lines (decision.md edited: the seal finding names it) -- the hashes of 4 ranks must find it.
cp -r ms tp1; cp -r ms tp4
for d in tp1 tp4; do echo "x" >> $d/OP-MOE-0001/decision.md; done
(cd tp1 && $S/manifest-verify OP-MOE-0001 > o.txt 2> e.txt); rc1=$?
(cd tp4 && $MPI -np 4 "$MB/manifest-verify" OP-MOE-0001 > o.txt 2> e.txt); rc2=$?
if [ $rc1 -eq 1 ] && [ $rc2 -eq 1 ] && grep -q "seal: .*decision.md" tp4/o.txt && cmp -s tp1/o.txt tp4/o.txt; then ok seal-tampered-verify-4ranks
else notok seal-tampered-verify-4ranks "single $rc1, 4 ranks $rc2: $(diff tp1/o.txt tp4/o.txt | head -c 300)"; fi

# (trimmed: a worker or a rank's own process killed during the seal, tested in
# tests/e2e/mpi-manifest-verify.sh)

# One rank's file unhashable: an asset replaced by a dangling symbolic link. The single tool's
# answer (status and lines) is the one the ranks must give; it must not be a pass.
cp -r base dl1; cp -r base dl2
for d in dl1 dl2; do rm $d/OP-MOE-0001/golden/extra3.bin; ln -s extra-gone.bin $d/OP-MOE-0001/golden/extra3.bin; done
(cd dl1 && $S/manifest-verify --seal OP-MOE-0001 > o.txt 2> e.txt); rc1=$?
(cd dl2 && $MPI -np 2 "$MB/manifest-verify" --seal OP-MOE-0001 > o.txt 2> e.txt); rc2=$?
if [ $rc1 -ne 0 ] && [ $rc2 -eq $rc1 ] && cmp -s dl1/o.txt dl2/o.txt && [ ! -e dl2/OP-MOE-0001/SHA256SUMS ]; then ok seal-dangling-link-2ranks
else notok seal-dangling-link-2ranks "single $rc1, 2 ranks $rc2: $(diff dl1/o.txt dl2/o.txt | head -c 200)"; fi

# ---------------------------------------------------------------- golden-diff and golden-dump --verify
# golden-diff on ranks prints, exits and writes (--json, minus its per-tensor "seconds") exactly the
# single tool's (scale.md, first paragraph; "minus timing" per the task). Candidate: bf16 runs of the
# same manifest (npu-replay.md's demo), which fail the compare.
mkdir gd; cd gd
$S/npu-replay run --model ../model --manifest ../man.jsonl --side candidate --backend-opt dtype=bf16 \
    --warmup 0 --runs 1 --golden c.h5 --raw c.jsonl > /dev/null 2>&1
# More ranks than tensors: one case with --taps none (3 tensors: input_ids, tokens, logits) on 4 ranks.
$S/npu-replay $RUN --cases "$FIRST" --taps none --golden t1.h5 --raw t1.jsonl > /dev/null 2>&1
$S/npu-replay run --model ../model --manifest ../man.jsonl --side candidate --backend-opt dtype=bf16 \
    --cases "$FIRST" --taps none --warmup 0 --runs 1 --golden t2.h5 --raw t2.jsonl > /dev/null 2>&1
$S/golden-diff --json s1.json t1.h5 t2.h5 > s1.txt 2>&1; rc1=$?
$MPI -np 4 "$MB/golden-diff" --json s4.json t1.h5 t2.h5 > s4.txt 2> s4.err; rc=$?
if [ $rc -eq $rc1 ] && cmp -s s1.txt s4.txt && [ "$(notime s1.json)" = "$(notime s4.json)" ]; then ok diff-3tensors-4ranks
else notok diff-3tensors-4ranks "exit $rc (single $rc1): $(diff s1.txt s4.txt | head -c 300)"; fi
# A damaged candidate (tests helper `corrupt`): the ranks' status is the single tool's; when that is
# 2 ("could not check") nothing is written; never a pass.
corrupt c.h5 cx.h5 7 > /dev/null 2>&1
$S/golden-diff --json x1.json ../single/g.h5 cx.h5 > x1.txt 2>&1; rc1=$?
$MPI -np 3 "$MB/golden-diff" --json x3.json ../single/g.h5 cx.h5 > x3.txt 2> x3.err; rc=$?
if [ $rc -eq $rc1 ] && [ $rc -ne 0 ] && { [ $rc -ne 2 ] || [ ! -e x3.json ]; }; then ok diff-damaged-3ranks
else notok diff-damaged-3ranks "exit $rc (single $rc1), json $(ls x3.json 2>&1)"; fi
cd "$TOP"
