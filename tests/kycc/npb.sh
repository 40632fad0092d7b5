#!/usr/bin/env bash
# Builds one NAS Parallel Benchmark of NPB3.0-omp-C (tools/fetch-npb) with kycc, its sources unchanged,
# and runs it on `ranks` ranks; passes when every rank reports NPB's own verification as SUCCESSFUL.
#   npb.sh KYCC KYRUN NPBDIR WORKDIR BENCH CLASS RANKS [THREADS]
# Exit 77 (skipped) when the sources were not fetched or libclang's Python bindings are missing.
set -u
kycc=$1 kyrun=$2 npb=$3 work=$4 bench=$5 class=$6 ranks=$7 threads=${8:-1}
if [ ! -f "$npb/common/npb-C.h" ]; then
    echo "SKIPPED: NPB sources not found in $npb (run tools/fetch-npb; they are never committed)"
    exit 77
fi
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh" && kycc_need_libclang
src=$(cd "$npb" && pwd)
B=$(echo "$bench" | tr a-z A-Z)
mkdir -p "$work/$B" && cd "$work" || exit 1
exe="$bench.$class"
if [ ! -x "$exe" ] || [ -n "$(find "$kycc" "$(dirname "$kycc")/kycc_lib" -newer "$exe" 2>/dev/null | head -1)" ]; then
    # setparams writes npbparams.h (the class's sizes) beside the benchmark, as NPB's own make does
    [ -x setparams ] || gcc -O1 -o setparams "$src/sys/setparams.c" 2>/dev/null || exit 1
    mkdir -p config && cp "$src/config/make.def.template" config/make.def
    (cd "$B" && ../setparams "$bench" "$class") || { echo "FAIL: setparams $bench $class"; exit 1; }
    common="$src/common/c_print_results.c $src/common/c_timers.c $src/common/wtime.c"
    case $bench in cg|ep|mg|ft) common="$common $src/common/c_randdp.c" ;; esac
    # the benchmark's own folder first: npbparams.h is generated here, not in the (read-only) sources
    # BT races on its shared scratch statics tmp1-3 (not threadprivate in NPB3.0-omp-C; docs/kycc.md): with one
    # copy per node the ranks race as threads do, so they are made threadprivate by flag, the source unchanged
    flags=""
    [ "$bench" = bt ] && flags="-fkycc-threadprivate=tmp1,tmp2,tmp3"
    "$kycc" -O2 -fopenmp $flags -I"$B" -I"$src/common" "$src/$B/$bench.c" $common -lm -o "$exe" ||
        { echo "FAIL: kycc could not build $bench class $class"; exit 1; }
fi
OMP_NUM_THREADS=$threads KYCC_OUTPUT=all KY_STATS=1 timeout 600 "$kyrun" -n "$ranks" "./$exe" > out.$ranks.txt 2> err.$ranks.txt
rc=$?
ok=$(grep -c "Verification    =               SUCCESSFUL" out.$ranks.txt)
grep -E "Time in seconds|Mop/s total" out.$ranks.txt | head -2
grep -h "fault\|fetch" err.$ranks.txt | head -"$ranks"
if [ "$ok" -ne "$ranks" ]; then
    echo "FAIL: $bench class $class on $ranks ranks: $ok of $ranks ranks verified (exit $rc)"
    tail -30 out.$ranks.txt err.$ranks.txt
    exit 1
fi
echo "ok: $bench class $class built by kycc unchanged, verified on all $ranks ranks"
