# golden-dump's main paths under valgrind (leaks are errors): dump of raw dumps + index and
# .npy (C and Fortran order, big-endian), --verify, --list --json, and a bad input.
set -eu
mkdir -p run
dump-gen run/raw 2 4096 >/dev/null
npy() { { printf '\223NUMPY\001\000\166\000'
          printf '%-117s\n' "{'descr': '$2', 'fortran_order': $4, 'shape': $3, }"; } > "$1"; }
npy run/f.npy '>i2' '(2, 3)' True
printf '\000\001\000\002\000\003\000\004\000\005\000\006' >> run/f.npy
$VG golden-dump -o g.h5 --meta k=v --gzip 1 run >/dev/null
$VG golden-dump --verify g.h5 --json v.json --junit v.xml >/dev/null
$VG golden-dump --list g.h5 --json l.json >/dev/null
# a bad input must exit 2 without leaking
npy run/bad.npy '<c8' '(1,)' False
set +e
$VG golden-dump -o g2.h5 run/bad.npy 2>/dev/null
rc=$?
set -e
[ "$rc" -eq 2 ] || { echo "bad input: exit $rc, wanted 2"; exit 1; }
[ ! -e g2.h5 ]
