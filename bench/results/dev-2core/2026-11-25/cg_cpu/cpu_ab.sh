#!/bin/bash
# PETSc KSPCG vs ky_cg (defaults a user gets: no OMP_NUM_THREADS, progress thread on; and OMP=1 without the
# progress thread) on poisson7:M, ITERS iterations, ranks 1 2 4, interleaved, best of REPS. Prints the load.
B=${1:-build-cg}; M=${2:-48}; IT=${3:-150}; REPS=${4:-5}
cd /work/main
K=$B/bin/kyrun; C=$B/bin/ky_cg; P=.scratch/petsc/petsc_cg
echo "load before: $(cat /proc/loadavg)"
for n in 1 2 4; do
  bp=1e30; bd=1e30; b1=1e30; all=""
  for r in $(seq $REPS); do
    p=$(env -u OMP_NUM_THREADS $K -n $n $P $M $IT 1 2>/dev/null | awk '/petsc_cg/{print $11}')
    d=$(env -u OMP_NUM_THREADS -u KY_PROGRESS_THREAD $K -n $n $C --matrix poisson7:$M --scheme halo --iters $IT --quiet 2>/dev/null | awk '/^  halo/{print $4}')
    o=$(env OMP_NUM_THREADS=1 KY_PROGRESS_THREAD=0 $K -n $n $C --matrix poisson7:$M --scheme halo --iters $IT --quiet 2>/dev/null | awk '/^  halo/{print $4}')
    all="$all [$p $d $o]"
    bp=$(python3 -c "print(min($bp, ${p:-1e30}))"); bd=$(python3 -c "print(min($bd, ${d:-1e30}))"); b1=$(python3 -c "print(min($b1, ${o:-1e30}))")
  done
  printf "ranks %d poisson7:%s petsc %.1f  ky_default %.1f (%.2fx)  ky_omp1_noprog %.1f (%.2fx)  runs(petsc ky_def ky_1):%s\n" $n $M $bp $bd $(python3 -c "print($bp/$bd)") $b1 $(python3 -c "print($bp/$b1)") "$all"
done
echo "load after: $(cat /proc/loadavg)"
