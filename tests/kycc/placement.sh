#!/usr/bin/env bash
# KYCC_PLACEMENT: tests/kycc/placement.c on 2 ranks must home each page of its unmapped a[3][1024] where the
# chosen placement puts the page's first element (first: row / 2, kycc's default; whole: element / 1536, the
# whole array in two equal blocks); the expected homes are computed here, the printed ones come from the
# run-time. The two placements differ at element 1536 (row 1), so either one mistaken for the other fails;
# an unknown value must be refused.
#   placement.sh KYCC KYRUN WORKDIR placement.c
# Exit 77 (skipped) when libclang's Python bindings are missing.
set -u
kycc=$1 kyrun=$2 work=$3 src=$4
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh" && kycc_need_libclang
mkdir -p "$work" && cd "$work" || exit 1
"$kycc" -O2 -fopenmp "$src" -o placement || { echo "FAIL: kycc could not build $src"; exit 1; }
for p in "" first whole; do
    KY_PAGE_SIZE=4K KYCC_PLACEMENT=$p OMP_NUM_THREADS=1 timeout 120 "$kyrun" -n 2 ./placement > out.txt 2>&1 ||
        { echo "FAIL: KYCC_PLACEMENT=$p:"; cat out.txt; exit 1; }
    grep -qx "sum 4717056.0" out.txt || { echo "FAIL: KYCC_PLACEMENT=$p: wrong sum:"; cat out.txt; exit 1; }
    for e in 0 512 1024 1536 2048 2560; do
        if [ "$p" = whole ]; then want=$((e / 1536)); else want=$((e / 1024 / 2)); fi
        grep -qx "element $e home $want" out.txt ||
            { echo "FAIL: KYCC_PLACEMENT=$p: element $e should be homed at rank $want:"; cat out.txt; exit 1; }
    done
    echo "KYCC_PLACEMENT=${p:-unset}: $(grep -c home out.txt) pages homed as expected"
done
if KYCC_PLACEMENT=rows OMP_NUM_THREADS=1 timeout 120 "$kyrun" -n 2 ./placement > bad.txt 2>&1; then
    echo "FAIL: KYCC_PLACEMENT=rows was taken:"; cat bad.txt; exit 1
fi
grep -q "KYCC_PLACEMENT" bad.txt || { echo "FAIL: KYCC_PLACEMENT=rows: no message naming it:"; cat bad.txt; exit 1; }
echo "ok"
