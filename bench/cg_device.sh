#!/usr/bin/env bash
# The CG work of one GPU-machine call (issue: distributed CG, seed 001): builds only the sparse layer's
# targets, runs its GPU tests, bench_cg (Kyoyu vs cuSPARSE+cuBLAS on one GPU at the seed's six sizes; vs the
# seed's MPI+CUDA scheme with 2 ranks on the GPU), ky_cg on the real s1rmq4m1 and NPB CG class C on the GPU,
# and ky_cg on CPU ranks. Carry .scratch/googletest (when the machine has no GoogleTest) and .scratch/cg
# (s1rmq4m1.mtx). Everything lands in $OUT (or .scratch/cg-device): logs, results/*.jsonl, summary.txt.
set -u
root="$(cd -P -- "$(dirname -- "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root" || exit 1
. bench/device_lib.sh
device_out cg-device
mkdir -p "$out/results"
note "cg_device $(date -u +%FT%TZ) $(hostname): $(nvidia-smi -L 2>/dev/null | head -4 | tr '\n' ';')"
gt=""
[ -d /usr/src/googletest ] || gt="-DKY_GTEST_SOURCE=$root/.scratch/googletest"
B=build-cgdev
step configure 120 cmake -S . -B $B -DKY_BUILD_EXAMPLES=OFF -DCMAKE_BUILD_TYPE=Release $gt
step build 240 cmake --build $B -j16 --target kyoyu ky_cg bench_cg test_sparse
K=$B/bin/kyrun
note "cpus $(nproc), $(grep -m1 'model name' /proc/cpuinfo)"
step tests 150 env KY_TEST_MATRIX_DIR=$root/.scratch/cg ctest --test-dir $B -R '^gpu\.sparse' --output-on-failure
grep -E 'tests passed|Failed|Passed' "$out/tests.log" | tee -a "$S"
kind=nvidia-h100-x1
nvidia-smi -L 2>/dev/null | grep -q H200 && kind=nvidia-h200
step kybench 200 $B/bin/kybench run cg --build $B --gpus --machine $kind --out "$out/results/cg"
grep -E '^(standin|matrix|\[)' "$out/results/cg/cg.log" | tee -a "$S"
step s1rmq4m1 60 $K -n 1 $B/bin/ky_cg --matrix $root/.scratch/cg/s1rmq4m1.mtx --mem gpu --scheme all --rtol 1e-8 \
    --iters 20000 --json "$out/results/ky_cg_s1rmq4m1_gpu.json"
cat "$out/s1rmq4m1.log" | tee -a "$S"
# NPB C: the SpMV tuner's timings of every candidate at info level; NPB-GPU right after (same job)
step npbC 120 env KY_DEBUG=info KY_DEBUG_SUBSYS=gpu $K -n 1 $B/bin/ky_cg --matrix npb:C --mem gpu --scheme graph,allgather,pipelined \
    --json "$out/results/ky_cg_npbC_gpu.json"
cat "$out/npbC.log" | tee -a "$S"
# SpMV alone against cusparseSpMV and the floor (bytes / measured copy bandwidth), CG on NPB C's matrix
step spmv 120 $K -n 1 $B/bin/bench_cg --spmv 1 --matrix npb:C,standin:nd6k --iters 250 --reps 3 \
    --scheme graph,allgather,halo,pipelined --json "$out/results/cg_spmv.jsonl"
grep -E '^(spmv|npb|standin)' "$out/spmv.log" | tee -a "$S"
# GMAP's NPB-GPU CG, built by bench/cg_baselines/npb_gpu.sh and carried (.scratch/npb-gpu/CUDA/bin)
if [ -x "$root/.scratch/npb-gpu/CUDA/bin/cg.C" ]; then
    step npbgpuC 120 "$root/.scratch/npb-gpu/CUDA/bin/cg.C"
    grep -E 'Time in seconds|Mop/s total|Verification|Zeta|Class|VERIFICATION' "$out/npbgpuC.log" | tee -a "$S"
fi
step omp1 40 env OMP_NUM_THREADS=1 $K -n 1 $B/bin/ky_cg --matrix standin:nd6k --scheme halo --iters 50 --quiet
grep -E '^  [a-z]' "$out/omp1.log" | sed 's/^/OMP 1: /' | tee -a "$S"
for n in 1 2 4; do
    step cpu_n$n 40 env OMP_NUM_THREADS=$((16 / n)) $K -n $n $B/bin/ky_cg --matrix standin:nd6k --scheme all --iters 200 \
        --json "$out/results/ky_cg_nd6k_cpu_n$n.json"
    grep -E '^  [a-z]' "$out/cpu_n$n.log" | tee -a "$S"
done
tar -C "$out" -czf "$out/cg-device.tgz" --exclude cg-device.tgz . && find "$out" -mindepth 1 ! -name cg-device.tgz ! -name summary.txt -delete
