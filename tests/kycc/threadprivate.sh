#!/usr/bin/env bash
# -fkycc-threadprivate: tests/kycc/threadprivate.c built with the flag must give every thread of every rank its
# own tmp1 (2 ranks x 2 threads), keep the variables out of the global space and its line numbers (the pragma
# goes on the declaration's line); built without it, the same program must see another thread's value (the
# test's own check that it can fail).
#   threadprivate.sh KYCC KYRUN WORKDIR threadprivate.c
# Exit 77 (skipped) when libclang's Python bindings are missing.
set -u
kycc=$1 kyrun=$2 work=$3 src=$4
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh" && kycc_need_libclang
mkdir -p "$work" && cd "$work" || exit 1
KYCC_KEEP=1 "$kycc" -O2 -fopenmp -fkycc-threadprivate=tmp1,tmp2 -fkycc-threadprivate=tmp3,absent "$src" -o tp ||
    { echo "FAIL: kycc could not build $src with the flag"; exit 1; }
"$kycc" -O2 -fopenmp "$src" -o shared || { echo "FAIL: kycc could not build $src"; exit 1; }
for v in tmp1 tmp2 tmp3; do
    grep -q "_Pragma(\"omp threadprivate($v)\")" threadprivate.kycc.c || { echo "FAIL: no threadprivate pragma for $v"; exit 1; }
    ! grep -q "__kyg_$v\b" threadprivate.kycc.c || { echo "FAIL: $v was moved into the global space"; exit 1; }
done
grep -q "__kyg_not_named" threadprivate.kycc.c || { echo "FAIL: not_named should stay in the global space"; exit 1; }
# the declaration keeps its line: its last line (tmp3;) is line 7 of the source, and so is the pragma's
awk '/^# [0-9]+ ".*threadprivate\.c"/ { line = $2 - 1; next } { line++ } /_Pragma\("omp threadprivate\(tmp3\)"\)/ { print line; exit }' \
    threadprivate.kycc.c | grep -qx 7 || { echo "FAIL: the pragma is not on the declaration's line 7"; exit 1; }
OMP_NUM_THREADS=2 timeout 120 "$kyrun" -n 2 ./tp > tp.txt 2>&1 || { echo "FAIL: with the flag:"; cat tp.txt; exit 1; }
grep -q "another's tmp1: 0, sum 500500.0" tp.txt || { echo "FAIL: with the flag:"; cat tp.txt; exit 1; }
if OMP_NUM_THREADS=2 timeout 120 "$kyrun" -n 2 ./shared > shared.txt 2>&1; then
    echo "FAIL: without the flag the shared tmp1 went unnoticed:"; cat shared.txt; exit 1
fi
cat tp.txt
echo "ok"
