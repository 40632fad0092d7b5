#!/usr/bin/env bash
# The offload layer's work of one GPU-machine call (docs/offload.md, "Left for the GPU session"), about 5
# minutes: GCC's nvptx offloading from the carried .deb files (.scratch/offload-debs, made by
# tools/offload-check --fetch), then
#   1. tools/offload-check --gpu-only --bench: every macro test under every device back end on the GPU, and
#      examples/offload's 7-point, 27-point and Himeno kernels timed under each back end (bench.jsonl);
#   2. the CUDA kernels at the same sizes (ky_stencil_gpu single step, ky_himeno L) for the ratio;
#   3. stencil.offload.gpu (seed 000's GPU DSM stencil built for the GPU, checked on 2 ranks), then that
#      program against ky_stencil_gpu's staged variant (a) on 1 and 2 ranks sharing the GPU.
# Everything lands in $OUT (default .scratch/offload-device): summary.txt, one log per step, *.jsonl.
#
#   bench/offload_device.sh [--help] [--only tests,cuda,dsm]
#
# Environment: BUILD (the Kyoyu build folder with ky_stencil_gpu and ky_himeno, default build; configured and
# built here when missing), DEBS (default .scratch/offload-debs-ubuntu, made by tools/fetch-offload-debs-ubuntu: GCC's nvptx packages of the machine's own GCC
# version, e.g. Ubuntu 24.04's gcc-13-offload-nvptx; docs/offload.md), OFFLOAD_CC (compilers tried, default
# gcc), CHECK_LIMIT (seconds for step 1, default 300).
set -u
case "${1:-}" in -h | --help) sed -n '2,15p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;; esac
only=tests,cuda,dsm
[ "${1:-}" = "--only" ] && only=${2:-}
root="$(cd -P -- "$(dirname -- "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root" || exit 1
. bench/device_lib.sh
device_out offload-device
B="${BUILD:-build}"
DEBS="${DEBS:-$root/.scratch/offload-debs-ubuntu}"
note "offload_device $(date -u +%FT%TZ) $(hostname): $(nvidia-smi -L 2>/dev/null | head -1) commit $(git rev-parse --short HEAD 2>/dev/null)"
if [ ! -x "$B/bin/ky_stencil_gpu" ]; then
    step configure 150 cmake -S . -B "$B" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 -DKY_OFFLOAD_DEBS="$DEBS"
    step build 300 cmake --build "$B" -j"$(nproc)" || { tail -30 "$out/build.log" | tee -a "$S"; exit 1; }
fi
K="$B/bin/kyrun"
if want tests; then
    step offload_check "${CHECK_LIMIT:-300}" tools/offload-check --debs "$DEBS" --cc "${OFFLOAD_CC:-gcc}" --gpu-only --keep "$out/check" \
        --bench "--n 512,512,512 --size L --steps 50 --reps 3 --shape both"
    grep -E "FAIL|PASS|pass|fail|GB/s|ms" "$out/offload_check.log" | tail -40 | sed 's/^/    /' | tee -a "$S"
    cp "$out/check/bench.jsonl" "$out/offload_bench.jsonl" 2>/dev/null
fi
if want cuda; then # the CUDA kernels at the same sizes: one rank, single step, no exchange
    step cuda_stencil 90 "$K" -n 1 "$B/bin/ky_stencil_gpu" --nx 512 --ny 512 --nz 512 --pts both --bt 4 \
        --steps 200 --variants c --phases 0 --json "$out/cuda.jsonl"
    grep -E "^kyoyu|device copy" "$out/cuda_stencil.log" | sed 's/^/    /' | tee -a "$S"
    step cuda_himeno 90 "$K" -n 1 "$B/bin/ky_himeno" L --mem gpu --iters 200 --json "$out/cuda.jsonl"
    tail -5 "$out/cuda_himeno.log" | sed 's/^/    /' | tee -a "$S"
fi
if want dsm; then
    step stencil_offload_gpu 240 ctest --test-dir "$B" -R 'stencil.offload.gpu' --output-on-failure
    o="$B/apps/stencil/offload_gpu"
    export LD_LIBRARY_PATH="$o/nvptx-root/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
    for n in 1 2; do # 2 ranks share the one GPU, both programs alike
        step staged_n$n 90 "$K" -n $n "$B/bin/ky_stencil_gpu" --nx 512 --ny 512 --nz 512 --pts both --bt 4 \
            --steps 128 --variants a --json "$out/offload_stencil.jsonl"
        grep -E "^staged|^\(a\)|step" "$out/staged_n$n.log" | head -6 | sed 's/^/    /' | tee -a "$S"
        for be in acc_parallel omp_target_distribute; do
            [ -x "$o/ky_stencil_offload_$be" ] || { note "no $o/ky_stencil_offload_$be"; continue; }
            step dsm_${be}_n$n 120 "$K" -n $n "$o/ky_stencil_offload_$be" --nx 512 --ny 512 --nz 512 \
                --points 7,27 --bt 4 --nt 128 --variant all --reps 3 --require-device --json "$out/offload_stencil.jsonl"
            tail -8 "$out/dsm_${be}_n$n.log" | sed 's/^/    /' | tee -a "$S"
        done
    done
fi
note "done in $SECONDS s"
