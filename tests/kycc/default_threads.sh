#!/usr/bin/env bash
# Without OMP_NUM_THREADS a kycc program's team is its ranks x the host's cores shared among the ranks (less one
# per rank for its progress thread where that leaves one), the same count on every rank: never more team
# threads than the host's cores with a core left per progress thread where there are enough, at least one per
# rank. With OMP_NUM_THREADS set, that count per rank exactly.
#   default_threads.sh KYCC KYRUN WORKDIR
# Exit 77 (skipped) when libclang's Python bindings are missing.
set -u
kycc=$1 kyrun=$2 work=$3
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh" && kycc_need_libclang
mkdir -p "$work" && cd "$work" || exit 1
cat > team.c <<'C'
#include <stdio.h>
#include <omp.h>
int main(void)
{
    int n = 0;
#pragma omp parallel
    {
#pragma omp single
        n = omp_get_num_threads();
    }
    printf("team %d max %d\n", n, omp_get_max_threads());
    return 0;
}
C
"$kycc" -O2 -fopenmp team.c -o team || { echo "FAIL: kycc could not build team.c"; exit 1; }
cores=$(nproc)
for ranks in 2 3; do
    out=$(unset OMP_NUM_THREADS; timeout 120 "$kyrun" -n $ranks ./team 2>&1) || { echo "FAIL: $ranks ranks: $out"; exit 1; }
    read -r _ team _ max <<<"$(grep '^team' <<<"$out")"
    per=$((cores / ranks)); [ $per -ge 2 ] && per=$((per - 1)); [ $per -lt 1 ] && per=1
    # kyrun may bind ranks to cores, which lowers what OpenMP sees per rank: at most the expected, at least 1
    if [ -z "$team" ] || [ "$team" -lt $ranks ] || [ "$team" -gt $((ranks * per)) ] || [ $((team % ranks)) -ne 0 ] ||
        [ "$max" != "$team" ]; then
        echo "FAIL: $ranks ranks on $cores cores without OMP_NUM_THREADS: '$out' (expected a team of $ranks..$((ranks * per)), a multiple of $ranks)"
        exit 1
    fi
    out=$(OMP_NUM_THREADS=2 timeout 120 "$kyrun" -n $ranks ./team 2>&1) || { echo "FAIL: $ranks ranks x 2: $out"; exit 1; }
    grep -q "^team $((2 * ranks)) max $((2 * ranks))$" <<<"$out" || { echo "FAIL: OMP_NUM_THREADS=2 on $ranks ranks: '$out'"; exit 1; }
    echo "$ranks ranks on $cores cores: team $team by default, $((2 * ranks)) with OMP_NUM_THREADS=2"
done
echo "ok"
