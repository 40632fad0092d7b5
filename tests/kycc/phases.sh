#!/usr/bin/env bash
# On one node the run-time skips the serial phase between two regions whose serial code stores nothing to
# global data (kycc_rt.h, "Lazy serial phase"): tests/kycc/phases.c on 2 ranks must count the phase changes
# its stretches allow (KYCC_STATS=1), and print the same with the laziness off (KYCC_LAZY_PHASE=0).
#   phases.sh KYCC KYRUN WORKDIR phases.c
# Exit 77 (skipped) when libclang's Python bindings are missing.
set -u
kycc=$1 kyrun=$2 work=$3 src=$4
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh" && kycc_need_libclang
mkdir -p "$work" && cd "$work" || exit 1
"$kycc" -O2 -fopenmp "$src" -o phases || { echo "FAIL: kycc could not build $src"; exit 1; }
OMP_NUM_THREADS=1 KYCC_STATS=1 timeout 240 "$kyrun" -n 2 ./phases > lazy.txt 2> lazy.err || { echo "FAIL: lazy run"; cat lazy.txt lazy.err; exit 1; }
OMP_NUM_THREADS=1 KYCC_STATS=1 KYCC_LAZY_PHASE=0 timeout 240 "$kyrun" -n 2 ./phases > eager.txt 2> eager.err || { echo "FAIL: eager run"; cat eager.txt eager.err; exit 1; }
diff -u eager.txt lazy.txt || { echo "FAIL: the output differs with and without the lazy serial phase"; exit 1; }
# 62 regions: the first starts from the serial phase; the 40 of the loop over locals (bump(&loc) among them:
# a store through a pointer whose address is checked at run time, KYCC_STA) and the 5 sum_region
# calls (after a region, before any store) skip their change; the 5 x 3 others follow a store; the if(false)
# region begins a serial phase and the region it runs ends in one. The 5 serial calls of halve run on rank 0
# in the parallel phase (kycc_rt.h, "Orphaned loops outside a region"), so the region after each skips too.
for r in 0 1; do
    grep -q "^kycc rank $r: regions 62 | serial phases 17 | phase changes skipped 50 | orphaned loops run once 5 " lazy.err ||
        { echo "FAIL: rank $r's phase counts differ from the expected:"; cat lazy.err; exit 1; }
    grep -q "^kycc rank $r: regions 62 | serial phases 62 | phase changes skipped 0 | orphaned loops run once 0 " eager.err ||
        { echo "FAIL: KYCC_LAZY_PHASE=0 on rank $r:"; cat eager.err; exit 1; }
done
grep "^kycc rank" lazy.err eager.err
echo "ok"
