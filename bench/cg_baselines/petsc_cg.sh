#!/usr/bin/env bash
# PETSc KSPCG against ky_cg on CPU ranks, side by side (docs/performance.md, "Distributed CG"): installs
# Debian's PETSc for this benchmark only (libpetsc-real3.18-dev, never a dependency of the build or of
# `make test`), builds petsc_cg.c into the ignored .scratch/petsc, then for each rank count runs PETSc and
# ky_cg (--mem host, halo and pipelined) on the same 3-D Poisson matrix with the same fixed iteration count,
# interleaved 3 times (best of each), one OpenMP thread per rank. ky_cg runs without Kyoyu's progress thread
# (KY_PROGRESS_THREAD=0: on the shared-memory path nothing needs it, and an idle progress thread spinning on a
# core costs a compute-bound host solve up to 40% on a 2-core machine), in the next column with it, and in the
# last column with what a user gets by default (no OMP_NUM_THREADS: the library shares the cores among the
# ranks; progress thread on).
# Prints a table, writes JSON lines.
# Usage: bench/cg_baselines/petsc_cg.sh [BUILD] [M] [ITERS] [RANKS...]   (defaults: build 64 200 1 2 4)
set -eu
root="$(cd -P -- "$(dirname -- "${BASH_SOURCE[0]}")/../.." && pwd)"
build="${1:-build}"; m="${2:-64}"; iters="${3:-200}"; shift $(( $# < 3 ? $# : 3 ))
ranks=("${@:-1 2 4}"); [ "$#" -eq 0 ] && ranks=(1 2 4)
dst="$root/.scratch/petsc"; mkdir -p "$dst"
pc="PETSc"
if ! pkg-config --exists PETSc 2>/dev/null; then
    export PKG_CONFIG_PATH="${PKG_CONFIG_PATH:-}:/usr/lib/petscdir/petsc3.18/x86_64-linux-gnu-real/lib/pkgconfig"
fi
if ! pkg-config --exists $pc; then
    sudo=""; [ "$(id -u)" = 0 ] || sudo=sudo
    $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends libpetsc-real3.18-dev
fi
mpicc -O2 -o "$dst/petsc_cg" "$root/bench/cg_baselines/petsc_cg.c" $(pkg-config --cflags --libs $pc)
K="$root/$build/bin/kyrun"; C="$root/$build/bin/ky_cg"
out="$dst/petsc_vs_ky_$(date -u +%F).jsonl"; : > "$out"
export OMP_NUM_THREADS=1
printf "%-6s %-10s %12s %12s %12s %12s %12s\n" ranks matrix petsc_us ky_halo_us ky_pipe_us ky_halo_prog ky_default
for n in "${ranks[@]}"; do
    bp=1e30; bh=1e30; bq=1e30; bg=1e30; bd=1e30
    for rep in 1 2 3; do
        p=$("$K" -n "$n" "$dst/petsc_cg" "$m" "$iters" 1 | awk '/petsc_cg/{print $11}')
        g=$("$K" -n "$n" "$C" --matrix "poisson7:$m" --scheme halo --iters "$iters" --quiet | awk '/^  halo/{print $4}')
        h=$(KY_PROGRESS_THREAD=0 "$K" -n "$n" "$C" --matrix "poisson7:$m" --scheme halo --iters "$iters" --quiet | awk '/^  halo/{print $4}')
        q=$(KY_PROGRESS_THREAD=0 "$K" -n "$n" "$C" --matrix "poisson7:$m" --scheme pipelined --iters "$iters" --quiet | awk '/^  pipelined/{print $4}')
        d=$(env -u OMP_NUM_THREADS "$K" -n "$n" "$C" --matrix "poisson7:$m" --scheme halo --iters "$iters" --quiet | awk '/^  halo/{print $4}')
        bd=$(python3 -c "print(min($bd, ${d:-1e30}))")
        bp=$(python3 -c "print(min($bp, ${p:-1e30}))"); bh=$(python3 -c "print(min($bh, ${h:-1e30}))"); bq=$(python3 -c "print(min($bq, ${q:-1e30}))"); bg=$(python3 -c "print(min($bg, ${g:-1e30}))")
    done
    printf "%-6s %-10s %12.2f %12.2f %12.2f %12.2f %12.2f\n" "$n" "poisson7:$m" "$bp" "$bh" "$bq" "$bg" "$bd"
    echo "{\"bench\": \"cg_cpu\", \"ranks\": $n, \"matrix\": \"poisson7:$m\", \"iters\": $iters, \"petsc_us\": $bp, \"ky_halo_us\": $bh, \"ky_pipelined_us\": $bq, \"ky_halo_progress_thread_us\": $bg, \"ky_default_us\": $bd}" >> "$out"
done
echo "results: $out"
