#!/usr/bin/env bash
# Himeno on a lent GPU machine in one call (tools/device-run's himeno step calls the same script):
# build ky_himeno, its GPU tests, `kybench run himeno` (one GPU: sizes M, L, XL; ranks sharing the GPU; every
# rank its own node; CPU ranks) and the third-party baselines (bench/himeno/baselines.sh) in the same job.
#
#   bench/himeno/device.sh [--cases PATTERNS] [--baselines "cuda:M,L,XL mpi:M:2x2x1"] [--no-tests] [--no-check] [--diag]
#
# Source: a clean tree from .scratch/himeno-tree.tgz when carried (git archive of the commit to measure, so
# that others' unfinished files in the working tree cannot break the build), else this checkout. Results in
# bench/results/<kind>/<date>/himeno/ of that tree; with $OUT set, packed into $OUT/himeno.tgz beside
# $OUT/himeno-summary.txt. Limits per step: HIMENO_LIMIT_{BUILD,TESTS,BENCH,BASE} seconds.
set -u
here="$(cd -P -- "$(dirname -- "${BASH_SOURCE[0]}")/../.." && pwd)"
cases='himeno_gpu_*,himeno_host_M'
base="cuda:M,L,XL mpi:M:2x2x1"
tests=1
check=1
diag=0
while [ $# -gt 0 ]; do
    case $1 in
    --cases) cases=$2; shift 2 ;;
    --baselines) base=$2; shift 2 ;;
    --no-tests) tests=0; shift ;;
    --no-check) check=0; shift ;;
    --diag) diag=1; shift ;;
    *) echo "device.sh: unknown argument $1"; exit 2 ;;
    esac
done
export NCCL_NVLS_ENABLE=0 NVSHMEM_DISABLE_NVLS=1 TORCH_SYMM_MEM_DISABLE_MULTICAST=1
ngpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU' || true)
# the device tool's name of the GPUs found (nvidia-h200, nvidia-h100-x1, -xN): kybench's own default
export KY_BENCH_MACHINE="${KY_BENCH_MACHINE:-$(python3 "$here/tools/kybench" machine)}"
src="$here"
if [ -f "$here/.scratch/himeno-tree.tgz" ]; then
    src=/tmp/himeno-src
    rm -rf "$src" && mkdir -p "$src" && tar xzf "$here/.scratch/himeno-tree.tgz" -C "$src"
    [ -d "$here/.scratch/himeno-baselines" ] && mkdir -p "$src/.scratch" && cp -r "$here/.scratch/himeno-baselines" "$src/.scratch/"
fi
cd "$src" || exit 1
out="${OUT:-$src/.scratch/himeno-device}"
mkdir -p "$out"
sum="$out/himeno-summary.txt"
: > "$sum"
note() { echo "$*" | tee -a "$sum"; }
step() { # name limit command...
    local name=$1 lim=$2 t0=$SECONDS
    shift 2
    timeout --kill-after=10 "$lim" "$@" > "$out/himeno-$name.log" 2>&1
    note "step $name: exit $? in $((SECONDS - t0)) s (limit $lim s)"
    tail -4 "$out/himeno-$name.log" | sed 's/^/    /' | tee -a "$sum"
}
note "himeno device run $(date -u +%FT%TZ) on $(hostname): $ngpus GPU(s) $(nvidia-smi --query-gpu=name --format=csv,noheader | head -1), kind $KY_BENCH_MACHINE, source $src"
b=build-himeno-dev
step build "${HIMENO_LIMIT_BUILD:-240}" bash -c "cmake -S . -B $b -G Ninja -DCMAKE_BUILD_TYPE=Release -DKY_BUILD_TESTS=OFF \
    -DKY_BUILD_EXAMPLES=OFF -DKY_BUILD_BENCH=OFF && cmake --build $b -j $(nproc) --target ky_himeno"
[ -x $b/bin/ky_himeno ] || { note "no ky_himeno: see himeno-build.log"; exit 1; }
[ $tests = 1 ] && step tests "${HIMENO_LIMIT_TESTS:-150}" ctest --test-dir $b -R himeno -L gpu --output-on-failure
# the original's size-S output on GPUs: its 3 + 2700 iterations (bench/himeno/baselines.sh run on one rank
# printed gosa 3.390654e-05, summed in float); the serial reference's float sum must match, every rank's field too
[ $check = 1 ] && step check_S 90 bash -c "$b/bin/kyrun -n 1 --gpus-per-rank 1 $b/bin/ky_himeno S --mem gpu --iters 2703 --warmup 0 --check -q && \
    $b/bin/kyrun -n 4 --gpus-per-rank 1 $b/bin/ky_himeno S --mem gpu --decomp 3d --iters 2703 --warmup 0 --check -q"
date=$(date -u +%F)
res="bench/results/$KY_BENCH_MACHINE/$date/himeno"
mkdir -p "$res"
step bench "${HIMENO_LIMIT_BENCH:-200}" python3 tools/kybench run himeno --build $b --gpus --case "$cases" --out "$res"
# what the per-iteration gosa reduction costs the kernel (size L, one GPU)
[ $diag = 1 ] && step diag 40 $b/bin/kyrun -n 1 --gpus-per-rank 1 $b/bin/ky_himeno L --mem gpu --diag-nogosa --iters 300 -q
# shellcheck disable=SC2086
step baselines "${HIMENO_LIMIT_BASE:-150}" env KYRUN="$src/$b/bin/kyrun" HG_TARGET="${HG_TARGET:-2.0}" \
    bash bench/himeno/baselines.sh run "$res" $base
cp "$out"/himeno-*.log "$res/" 2>/dev/null
tar czf "$out/himeno.tgz" "$res"
note "packed $res into \$OUT/himeno.tgz"
