#!/usr/bin/env bash
# Seed 000 Fig. 6 (MpC) built by kycc: the file as printed (tests/mpc/fig6.c, 2048^3 grids) must build; a
# copy with a small grid (only the #define lines of NZ, NY, NX, NT changed; NT a multiple of BT, as the figure's loop assumes) runs on RANKS ranks x 1 thread
# and the sum of the ranks' slab sums must match the serial reference fig6_ref.c (relative 1e-12).
#   check_fig6.sh KYCC KYRUN WORKDIR RANKS
set -u
kycc=$1 kyrun=$2 work=$3 ranks=$4
here="$(cd "$(dirname "$0")" && pwd)"
if ! python3 -c 'import clang.cindex' 2>/dev/null; then
    echo "SKIPPED: libclang's Python bindings are missing (make deps installs them: pip install libclang)"
    exit 77
fi
mkdir -p "$work" && cd "$work" || exit 1
"$kycc" -O2 -fopenmp "$here/fig6.c" -o fig6_full || { echo "FAIL: kycc did not build Fig. 6 as printed"; exit 1; }
sed -e 's/^#define NZ 2048.*/#define NZ 24/' -e 's/^#define NY 2048/#define NY 12/' -e 's/^#define NX 2048/#define NX 10/' \
    -e 's/^#define NT 128/#define NT 12/' "$here/fig6.c" > fig6_small.c
"$kycc" -O2 -fopenmp fig6_small.c -o fig6_small || { echo "FAIL: kycc did not build the small Fig. 6"; exit 1; }
cc -O2 -DNZ=24 -DNY=12 -DNX=10 -DNT=12 "$here/fig6_ref.c" -o fig6_ref || exit 1
ref=$(./fig6_ref)
OMP_NUM_THREADS=1 KY_TIMEOUT=120 "$kyrun" -n "$ranks" ./fig6_small > out.txt 2>&1
rc=$?
cat out.txt
[ $rc -eq 0 ] || { echo "FAIL: exit status $rc"; exit 1; }
n=$(grep -c '^fig6 rank' out.txt)
[ "$n" -eq "$ranks" ] || { echo "FAIL: $n of $ranks ranks printed their sum"; exit 1; }
python3 - "$ref" out.txt <<'PY' || exit 1
import sys
ref = float(sys.argv[1])
got = sum(float(l.split()[-1]) for l in open(sys.argv[2]) if l.startswith("fig6 rank"))
ok = abs(got - ref) <= 1e-12 * abs(ref)
print("%s: Fig. 6 sum %.17g, serial %.17g" % ("ok" if ok else "FAIL", got, ref))
sys.exit(0 if ok else 1)
PY
