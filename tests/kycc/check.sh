#!/usr/bin/env bash
# kycc test driver: builds an OpenMP program with plain gcc -fopenmp and with kycc, runs the first on
# ranks x threads OpenMP threads and the second on `ranks` ranks of `threads` threads (the same global
# team), and compares their output.
#   check.sh KYCC KYRUN WORKDIR RANKS THREADS file.c...
# Exit 77 (skipped) when libclang's Python bindings are missing.
set -u
kycc=$1 kyrun=$2 work=$3 ranks=$4 threads=$5
shift 5
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh" && kycc_need_libclang
mkdir -p "$work" && cd "$work" || exit 1
name=$(basename "$1" .c)
gcc -O2 -fopenmp "$@" -o "$name.gcc" -lm || { echo "FAIL: gcc -fopenmp could not build $*"; exit 1; }
"$kycc" -O2 -fopenmp "$@" -o "$name.kycc" || { echo "FAIL: kycc could not build $*"; exit 1; }
OMP_NUM_THREADS=$((ranks * threads)) ./"$name.gcc" > expected.txt 2>&1 || { echo "FAIL: the gcc build failed"; exit 1; }
OMP_NUM_THREADS=$threads timeout 240 "$kyrun" -n "$ranks" ./"$name.kycc" > got.txt 2> stderr.txt
rc=$?
if [ $rc -ne 0 ]; then
    echo "FAIL: the kycc build on $ranks ranks x $threads threads exited with $rc"; cat got.txt stderr.txt; exit 1
fi
if ! diff -u expected.txt got.txt; then
    echo "FAIL: $name on $ranks ranks x $threads threads differs from gcc -fopenmp on $((ranks * threads)) threads"
    exit 1
fi
echo "ok: $name on $ranks ranks x $threads threads matches gcc -fopenmp on $((ranks * threads)) threads"
cat got.txt
