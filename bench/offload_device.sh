#!/usr/bin/env bash
# The offload layer's work of one GPU-machine call (docs/offload.md, "On the GPU machine"): GCC's nvptx
# offloading from the carried .deb files (.scratch/offload-debs-ubuntu, made by tools/fetch-offload-debs-ubuntu),
# or Clang's OpenMP offloading from CLANG_DEBS (.scratch/offload-clang-ubuntu, tools/fetch-offload-clang-ubuntu)
# with OFFLOAD_CC=clang, then, by default (about 5 minutes on one H200):
#   cuda   the CUDA kernels at the benchmark's sizes (ky_stencil_gpu single step 512^3, ky_himeno L);
#   bench  examples/offload's 7-point, 27-point and Himeno kernels in every loop shape (flat, rows, warps,
#          gang, team: offload_kernels.h) under each device back end, one step per back end (tools/offload-check
#          --bench-only; bench.jsonl);
#   table  bench/offload_ratio.py: ms/step of each against the CUDA kernel's, the ratio and each back end's
#          best shape (table.txt);
# and with --only (or ONLY=...) the longer parts for other calls, and:
#   probe  first of all: the macro tests built for the GPU and run there under each of BACKENDS, small
#          (tools/offload-check --gpu-only); the compiler's diagnostics (clang -v, nvptx-arch, the first errors
#          of the logs) in the summary, and the call stops there when no back end ran right; later parts
#          then time only the back ends that did
#   tests  tools/offload-check --gpu-only: the macro tests under every device back end on the GPU;
#   dsm    stencil.offload.gpu (seed 000's GPU DSM stencil built for the GPU, checked on 2 ranks), then that
#          program in each of DSM_SHAPES (default "zstream warps flat") against ky_stencil_gpu's staged variant (a),
#          1 rank.
# Everything lands in $OUT (default .scratch/offload-device): summary.txt, one log per step, *.jsonl, and
# offload-check's logs in check/ (its work folder, CHECK_DIR, default /tmp/offload-check, keeps the rest).
#
#   bench/offload_device.sh [--help] [--only probe,cuda,bench,table,tests,dsm]
#
# Environment: BUILD (the Kyoyu build folder with ky_stencil_gpu and ky_himeno, default build; configured and
# built here when missing), DEBS (default .scratch/offload-debs-ubuntu: GCC's nvptx packages of the machine's own
# GCC version, e.g. Ubuntu 24.04's gcc-13-offload-nvptx; docs/offload.md), CLANG_DEBS (Clang 18's files; "clang"
# in OFFLOAD_CC then means that Clang), OFFLOAD_CC (compilers, default gcc; OpenACC back ends are skipped for clang),
# BACKENDS (default acc_parallel omp_target_distribute acc_kernels omp_target_loop), SHAPES (default all; names by commas or spaces),
# BENCH_LIMIT (seconds per back end, default 110), ONLY (as --only), CLANG_FLAGS_ALSO (with OFFLOAD_CC=clang: each
# back end timed again built with these flags added to the default ones (-fopenmp-target-jit with CUDA 13), e.g.
# "-fopenmp-assume-no-thread-state"; its records name the compiler "clang 18.1+f").
set -u
case "${1:-}" in -h | --help) sed -n '2,/^[^#]/p' "$0" | sed -e '$d' -e 's/^# \{0,1\}//'; exit 0 ;; esac
only=${ONLY:-cuda,bench,table}
[ "${1:-}" = "--only" ] && only=${2:-}
root="$(cd -P -- "$(dirname -- "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root" || exit 1
. bench/device_lib.sh
device_out offload-device
B="${BUILD:-build}"
DEBS="${DEBS:-$root/.scratch/offload-debs-ubuntu}"
# offload-check's work folder outside $OUT: it holds the unpacked compilers (GCC's 55 MB, Clang's 225 MB) and
# the binaries; only its logs and records are copied to $out/check
chk="${CHECK_DIR:-${TMPDIR:-/tmp}/offload-check}"
mkdir -p "$chk" "$out/check"
rm -f "$chk"/*.log "$chk/bench.jsonl"
trap 'cp "$chk"/*.log "$chk"/bench.jsonl "$out/check/" 2>/dev/null' EXIT
cargs=(--debs "$DEBS")
[ -n "${CLANG_DEBS:-}" ] && cargs+=(--clang-debs "$CLANG_DEBS")
cc=${OFFLOAD_CC:-gcc}
# offload_bench takes a comma-separated list; SHAPES="flat team" means the same
shapes=${SHAPES:-all}
shapes=${shapes// /,}
bes=${BACKENDS:-acc_parallel omp_target_distribute acc_kernels omp_target_loop}
case "$cc" in clang*) bes=$(echo " $bes " | sed -e 's/ acc_[a-z]*//g' -e 's/^ *//' -e 's/ *$//') ;; esac
note "offload_device $(date -u +%FT%TZ) $(hostname): $(nvidia-smi -L 2>/dev/null | head -1) commit $(git rev-parse --short HEAD 2>/dev/null)"
if want probe; then # the compiler before anything is timed with it (offload-check's table: -- ok ok)
    step probe "${PROBE_LIMIT:-240}" tools/offload-check "${cargs[@]}" --cc "$cc" --gpu-only --backends "${bes// /,}" \
        --keep "$chk"
    grep -v -e '^$' -e '^logs' "$out/probe.log" | sed 's/^/    /' | tee -a "$S"
    ok=$(awk 'NF >= 5 && $(NF-1) == "ok" && $NF == "ok" { print $(NF-3) }' "$out/probe.log" | sort -u | tr '\n' ' ')
    if [ -z "$ok" ]; then
        for f in "$chk"/*_gpu.build.log "$chk"/*_gpu.run.log; do
            [ -s "$f" ] || continue
            note "  == $f (first errors)"
            { grep -v -e -Wpass-failed "$f" | grep -m 8 -i -E "error|fatal|cannot|not found|undefined|fail" ||
                tail -8 "$f"; } | cut -c1-400 | sed 's/^/    /' | tee -a "$S"
        done
        # Clang's runtime says why it found no device only when asked (cuInit's error, a plugin that did not load)
        for f in "$chk"/clang*_gpu; do
            [ -x "$f" ] || continue
            note "  == LIBOMPTARGET_INFO=-1 $f --device"
            LD_LIBRARY_PATH="$chk/clang-root/fallback-lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" LIBOMPTARGET_INFO=-1 \
                OMP_TARGET_OFFLOAD=MANDATORY timeout 30 "$f" --device 2>&1 | grep -m 12 -i -E "error|fail|cuda|plugin|image|device" |
                cut -c1-300 | sed 's/^/    /' | tee -a "$S"
            break
        done
        ls -l "$chk/clang-root/fallback-lib" 2>/dev/null | sed 's/^/    /' | tee -a "$S"
        note "probe: no back end of $cc ran on the GPU; stopping (logs in $out/check)"
        exit 1
    fi
    note "probe: on the GPU: $ok"
    bes=$ok
fi
if [ ! -x "$B/bin/ky_stencil_gpu" ]; then
    step configure 150 cmake -S . -B "$B" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 -DKY_OFFLOAD_DEBS="$DEBS"
    step build 300 cmake --build "$B" -j"$(nproc)" || { tail -30 "$out/build.log" | tee -a "$S"; exit 1; }
fi
K="$B/bin/kyrun"
if want cuda; then # the CUDA kernels at the same sizes: one rank, single step, no exchange
    step cuda_stencil 90 "$K" -n 1 "$B/bin/ky_stencil_gpu" --nx 512 --ny 512 --nz 512 --pts both --bt 4 \
        --steps 200 --variants c --phases 0 --json "$out/cuda.jsonl"
    grep -E "^kyoyu|device copy" "$out/cuda_stencil.log" | sed 's/^/    /' | tee -a "$S"
    step cuda_himeno 90 "$K" -n 1 "$B/bin/ky_himeno" L --mem gpu --iters 200 --json "$out/cuda.jsonl"
    tail -5 "$out/cuda_himeno.log" | sed 's/^/    /' | tee -a "$S"
fi
if want bench; then # no --check at 512^3: its serial reference alone outlasts a call (tests/offload checks small)
    for be in $bes; do
        step "bench_$be" "${BENCH_LIMIT:-110}" tools/offload-check "${cargs[@]}" --cc "$cc" \
            --backends "$be" --bench-only --keep "$chk" \
            --bench "--n 512,512,512 --size L --steps 20 --reps 2 --shape $shapes"
        grep -E "ms/step|FAIL|no-build" "$out/bench_$be.log" | sed 's/^/    /' | tee -a "$S"
        cp "$chk/bench.jsonl" "$out/offload_bench.jsonl" 2>/dev/null # what is timed stays if the call is cut short
    done
    case "$cc" in clang*) [ -n "${CLANG_FLAGS_ALSO:-}" ] && for be in $bes; do
        note "bench_${be}_flags: OFFLOAD_CLANG_FLAGS_EXTRA=\"$CLANG_FLAGS_ALSO\" (records: compiler \"clang N+f\")"
        step "bench_${be}_flags" "${BENCH_LIMIT:-110}" env OFFLOAD_CLANG_FLAGS_EXTRA="$CLANG_FLAGS_ALSO" tools/offload-check \
            "${cargs[@]}" --cc "$cc" --label +f --backends "$be" --bench-only --keep "$chk" \
            --bench "--n 512,512,512 --size L --steps 20 --reps 2 --shape $shapes"
        grep -E "ms/step|FAIL|no-build" "$out/bench_${be}_flags.log" | sed 's/^/    /' | tee -a "$S"
        cp "$chk/bench.jsonl" "$out/offload_bench.jsonl" 2>/dev/null
    done ;; esac
    cp "$chk/bench.jsonl" "$out/offload_bench.jsonl" 2>/dev/null
fi
if want table; then
    python3 bench/offload_ratio.py "$out/offload_bench.jsonl" "$out/cuda.jsonl" >"$out/table.txt" 2>&1
    sed 's/^/    /' "$out/table.txt" | tee -a "$S"
fi
if want tests; then
    step offload_check "${CHECK_LIMIT:-300}" tools/offload-check "${cargs[@]}" --cc "$cc" --gpu-only \
        --backends acc_kernels,acc_parallel,omp_target_loop,omp_target_distribute --keep "$chk"
    grep -E "^gcc|^g\+\+|^clang|FAIL" "$out/offload_check.log" | sed 's/^/    /' | tee -a "$S"
fi
if want dsm; then
    step stencil_offload_gpu 240 ctest --test-dir "$B" -R 'stencil.offload.gpu' --output-on-failure
    o="$B/apps/stencil/offload_gpu"
    export LD_LIBRARY_PATH="$o/nvptx-root/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
    step staged_n1 90 "$K" -n 1 "$B/bin/ky_stencil_gpu" --nx 512 --ny 512 --nz 512 --pts both --bt 4 \
        --steps 128 --variants a --json "$out/offload_stencil.jsonl"
    grep -E "^staged|^\(a\)|step" "$out/staged_n1.log" | head -6 | sed 's/^/    /' | tee -a "$S"
    for be in acc_parallel omp_target_distribute; do
        [ -x "$o/ky_stencil_offload_$be" ] || { note "no $o/ky_stencil_offload_$be"; continue; }
        for sh in ${DSM_SHAPES:-zstream warps flat}; do
            step "dsm_${be}_$sh" 90 "$K" -n 1 "$o/ky_stencil_offload_$be" --nx 512 --ny 512 --nz 512 \
                --points 7,27 --bt 4 --nt 64 --variant host --reps 2 --shape "$sh" --require-device \
                --json "$out/offload_stencil.jsonl"
            tail -3 "$out/dsm_${be}_$sh.log" | sed 's/^/    /' | tee -a "$S"
        done
    done
fi
note "done in $SECONDS s"
