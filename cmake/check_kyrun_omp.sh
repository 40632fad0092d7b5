#!/bin/sh
# CTest kyrun.omp_threads: kyrun counts the cores the ranks may run on, not OMP_NUM_THREADS. `nproc` reports
# OMP_NUM_THREADS when it is set, so with OMP_NUM_THREADS above the core count kyrun used to leave out
# --oversubscribe and Open MPI refused to start more ranks than cores.
#   (1) dry run: cores+1 ranks with OMP_NUM_THREADS=cores+2 must get --oversubscribe (Open MPI);
#   (2) the reported command, OMP_NUM_THREADS=4 kyrun -n 3 hello_put (`true` where the examples are not
#       built), must run, without the oversubscription switch the other tests get from their environment.
#       On 2 cores (CI) this is the failing launch itself.
#   usage: check_kyrun_omp.sh BIN_DIR      (BIN_DIR holds kyrun and, if built, hello_put)
set -u
bin="$1"
fail=0
cores="$(env -u OMP_NUM_THREADS -u OMP_THREAD_LIMIT nproc 2>/dev/null || echo 1)"
big=$((cores + 1))
dry="$(OMP_NUM_THREADS=$((big + 1)) KYRUN_DRYRUN=1 "$bin/kyrun" -n "$big" prog)"
echo "dry run, OMP_NUM_THREADS=$((big + 1)), $big ranks on $cores core(s): $dry"
if mpirun --version 2>/dev/null | grep -q "Open MPI"; then
    case "$dry" in
        *--oversubscribe*) echo "ok   --oversubscribe for $big ranks" ;;
        *) echo "FAIL no --oversubscribe for $big ranks on $cores cores"; fail=1 ;;
    esac
fi

prog=true
[ -x "$bin/hello_put" ] && prog="$bin/hello_put"
out="$(env -u OMPI_MCA_rmaps_base_oversubscribe OMP_NUM_THREADS=4 KY_TIMEOUT=60 "$bin/kyrun" -n 3 "$prog" 2>&1)"
rc=$?
echo "OMP_NUM_THREADS=4 kyrun -n 3 $prog: exit $rc"
echo "$out"
if [ "$rc" != 0 ]; then
    echo "FAIL kyrun -n 3 with OMP_NUM_THREADS=4 (exit $rc)"; fail=1
elif [ "$prog" != true ] && [ "$(echo "$out" | grep -c ': ok$')" != 3 ]; then
    echo "FAIL not every rank of hello_put reported ok"; fail=1
else
    echo "ok   kyrun -n 3 with OMP_NUM_THREADS=4"
fi
[ "$fail" = 0 ] && echo "kyrun.omp_threads: PASS" || echo "kyrun.omp_threads: FAIL"
exit "$fail"
