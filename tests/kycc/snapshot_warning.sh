#!/usr/bin/env bash
# kycc's run-time takes a user's KY_DSM_SNAPSHOT other than 1 but says so: the serial part's in-place updates
# need 1, and NPB CG fails its verification under 0. The warning must come with 0 and not without it.
#   snapshot_warning.sh KYCC KYRUN WORKDIR file.c
# Exit 77 (skipped) when libclang's Python bindings are missing.
set -u
kycc=$1 kyrun=$2 work=$3 src=$4
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh" && kycc_need_libclang
mkdir -p "$work" && cd "$work" || exit 1
"$kycc" -O2 -fopenmp "$src" -o prog || { echo "FAIL: kycc could not build $src"; exit 1; }
OMP_NUM_THREADS=1 KY_DSM_SNAPSHOT=0 timeout 120 "$kyrun" -n 2 ./prog > out0.txt 2>&1 || { echo "FAIL: the run under KY_DSM_SNAPSHOT=0 failed"; cat out0.txt; exit 1; }
grep -q "kycc: warning: KY_DSM_SNAPSHOT=0" out0.txt || { echo "FAIL: no warning under KY_DSM_SNAPSHOT=0"; cat out0.txt; exit 1; }
[ "$(grep -c "kycc: warning: KY_DSM_SNAPSHOT" out0.txt)" = 1 ] || { echo "FAIL: the warning came more than once"; exit 1; }
(unset KY_DSM_SNAPSHOT; OMP_NUM_THREADS=1 timeout 120 "$kyrun" -n 2 ./prog > out1.txt 2>&1) || { echo "FAIL: the default run failed"; cat out1.txt; exit 1; }
if grep -q "kycc: warning: KY_DSM_SNAPSHOT" out1.txt; then echo "FAIL: a warning without KY_DSM_SNAPSHOT set"; exit 1; fi
echo "ok: warned once under KY_DSM_SNAPSHOT=0, silent by default"
