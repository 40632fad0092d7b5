#!/usr/bin/env bash
# Kyoyu benchmarks: run every case of pingpong and halo on 2 ranks, with the environment that selects each
# path, and store JSON lines (docs/benchmarks.md) plus a log under bench/results/<kind>/<date>/.
#
#   bench/run_all.sh [BUILD_DIR]          (default: $BUILD or build)
#
# kind = $KY_BENCH_MACHINE, default `hostname`; date = UTC YYYY-MM-DD. Host cases always run; GPU cases run
# when nvidia-smi lists at least 2 GPUs and are skipped with a message otherwise. On a machine without GPUs
# the host cases use smaller ranges so the script finishes quickly (set BENCH_FULL=1 for the full ranges).
# Extra arguments for every run: BENCH_PINGPONG_ARGS, BENCH_HALO_ARGS (appended, so they override).
# Launcher: BUILD_DIR/bin/kyrun -n 2 if it exists, else mpirun -n 2 --allow-run-as-root --oversubscribe.
set -u
export NCCL_NVLS_ENABLE=0 NVSHMEM_DISABLE_NVLS=1 TORCH_SYMM_MEM_DISABLE_MULTICAST=1

root="$(cd -P -- "$(dirname -- "${BASH_SOURCE[0]}")/.." && pwd)"
build="${1:-${BUILD:-$root/build}}"
case "$build" in /*) ;; *) build="$PWD/$build" ;; esac
bin="$build/bin"
for prog in pingpong halo; do
    if [ ! -x "$bin/$prog" ]; then
        echo "run_all: $bin/$prog not found: build first (make build, or cmake --build $build)" >&2
        exit 1
    fi
done

kind="${KY_BENCH_MACHINE:-$(hostname)}"
export KY_BENCH_MACHINE="$kind"
date="$(date -u +%F)"
out="$root/bench/results/$kind/$date"
mkdir -p "$out"
log="$out/run.log"
: >"$log"

if [ -x "$bin/kyrun" ]; then
    launch=("$bin/kyrun" -n 2)
    gpu_launch=("$bin/kyrun" -n 2 --gpus-per-rank 1)
else
    launch=(mpirun -n 2 --allow-run-as-root --oversubscribe)
    gpu_launch=("${launch[@]}")
fi

ngpus=0
if command -v nvidia-smi >/dev/null 2>&1; then
    ngpus="$(nvidia-smi -L 2>/dev/null | grep -c '^GPU ' || true)"
fi

# Ranges: full on a GPU machine (the numbers that count), quick on CPU-only machines.
if [ "$ngpus" -ge 1 ] || [ "${BENCH_FULL:-0}" = 1 ]; then
    pp_host=(-b 8 -e 256M -n 200 -w 10)
    halo_host=(-N 32,64,128,256,512 -n 100 -w 5)
else
    pp_host=(-b 8 -e 16M -f 4 -n 100 -w 5)
    halo_host=(-N 32,64,128 -n 50 -w 5)
fi
pp_gpu=(-b 8 -e 256M -n 200 -w 10)
halo_gpu=(-N 32,64,128,256,512 -n 100 -w 5)
# shellcheck disable=SC2206
pp_extra=(${BENCH_PINGPONG_ARGS:-})
# shellcheck disable=SC2206
halo_extra=(${BENCH_HALO_ARGS:-})

say() { echo "$*" | tee -a "$log"; }

failures=0
# run NAME "ENV=V ..." launcher-kind prog args...
run_case() {
    local name="$1" envs="$2" lk="$3"
    shift 3
    local json="$out/$name.jsonl"
    rm -f "$json"
    local -a l
    if [ "$lk" = gpu ]; then l=("${gpu_launch[@]}"); else l=("${launch[@]}"); fi
    say ""
    say "=== $name: ${envs:-(default environment)} ${l[*]} $* --json $json"
    local t0=$SECONDS rc
    # shellcheck disable=SC2086
    env $envs timeout 900 "${l[@]}" "$@" --json "$json" 2>&1 | tee -a "$log"
    rc=${PIPESTATUS[0]}
    say "=== $name: exit $rc after $((SECONDS - t0)) s"
    [ "$rc" = 0 ] || failures=$((failures + 1))
}

say "Kyoyu benchmarks: kind $kind, date $date, $(uname -n), GPUs: $ngpus, results in $out"
say "launcher: ${launch[*]}"

# Host memory: same-node shared memory, then every rank its own node (MPI path).
run_case pingpong_host_shm "" host "$bin/pingpong" --mem host "${pp_host[@]}" "${pp_extra[@]}"
run_case pingpong_host_mpi "KY_NODE_SPLIT=rank" host "$bin/pingpong" --mem host "${pp_host[@]}" "${pp_extra[@]}"
run_case halo_host_shm "" host "$bin/halo" --mem host "${halo_host[@]}" "${halo_extra[@]}"
run_case halo_host_mpi "KY_NODE_SPLIT=rank" host "$bin/halo" --mem host "${halo_host[@]}" "${halo_extra[@]}"

# GPU memory: same-node CUDA IPC, then staged through pinned host buffers over MPI.
if [ "$ngpus" -ge 2 ]; then
    run_case pingpong_gpu_ipc "KY_GPUS_PER_RANK=1" gpu "$bin/pingpong" --mem gpu "${pp_gpu[@]}" "${pp_extra[@]}"
    run_case pingpong_gpu_staged "KY_GPUS_PER_RANK=1 KY_NODE_SPLIT=rank" gpu "$bin/pingpong" --mem gpu "${pp_gpu[@]}" "${pp_extra[@]}"
    run_case halo_gpu_ipc "KY_GPUS_PER_RANK=1" gpu "$bin/halo" --mem gpu "${halo_gpu[@]}" "${halo_extra[@]}"
    run_case halo_gpu_staged "KY_GPUS_PER_RANK=1 KY_NODE_SPLIT=rank" gpu "$bin/halo" --mem gpu "${halo_gpu[@]}" "${halo_extra[@]}"
else
    say ""
    say "=== GPU cases skipped: nvidia-smi finds $ngpus GPU(s), 2 are needed"
fi

say ""
say "run_all: done, $failures failed case(s); JSON lines and run.log in $out"
[ "$failures" = 0 ]
