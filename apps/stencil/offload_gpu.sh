#!/usr/bin/env bash
# stencil.offload.gpu: ky_stencil_offload (apps/stencil/offload_*.c) built for the GPU with GCC's nvptx
# offloading under acc_parallel and omp_target_distribute, run on 2 ranks against the serial run with
# --require-device (a build that quietly ran on the host fails), once with a device thread per rank and
# once with two (p2p between them). Exit 77 without an NVIDIA GPU or without
# GCC's offload compiler (installed, or .deb files in DEBS, unpacked with dpkg -x as tools/offload-check
# does). Exit 1 if a build or a run fails.
#
#   offload_gpu.sh SRC_DIR WORK_DIR DEBS CC "LAUNCHER" "COMPILE AND LINK FLAGS (Kyoyu, MPI)"
set -u
src=$1 work=$2 debs=$3 cc=$4 launch=$5 flags=$6
if ! command -v nvidia-smi >/dev/null 2>&1 || ! nvidia-smi -L >/dev/null 2>&1; then
    echo "stencil.offload.gpu: skipped: no NVIDIA GPU here (nvidia-smi -L)"
    exit 77
fi
mkdir -p "$work"
# by name from PATH: given a path (/usr/bin/cc), mkoffload looks for the accel compiler beside it only
command -v "$(basename "$cc")" >/dev/null 2>&1 && cc=$(basename "$cc")
major=$("$cc" -dumpversion | cut -d. -f1)
# shellcheck source=../../tools/offload_nvptx.sh
. "$src/../../tools/offload_nvptx.sh"
if ls "$debs"/*.deb >/dev/null 2>&1; then
    nvptx_use_debs "$debs" "$work/nvptx-root" "$major"
fi
mk=$(nvptx_mkoffload "$major")
if [ -z "$mk" ]; then
    echo "stencil.offload.gpu: skipped: no nvptx offload compiler for $cc" \
        "(gcc-$major-offload-nvptx; tools/offload-check --fetch DIR)"
    exit 77
fi
sm=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader | head -1 | tr -d '.')
off=$(nvptx_flags "$sm")
rc=0
# the host side once, host OpenMP only (no target regions there, so nothing to offload); the directive code
# per back end with that back end's flag alone: GCC's mkoffload takes -fopenacc or -fopenmp, not both
incs=$(for w in $flags; do case $w in -I*) printf '%s ' "$w" ;; esac; done)
for f in offload_main offload_team kernel; do
    # shellcheck disable=SC2086
    "$cc" -O3 -fopenmp -c "$src/$f.c" -I"$src" $incs -o "$work/$f.o" || exit 1
done
for be in acc_parallel omp_target_distribute; do
    case $be in acc_*) bf="-fopenacc" ;; *) bf="-fopenmp" ;; esac
    exe=$work/ky_stencil_offload_$be
    # shellcheck disable=SC2086
    if ! "$cc" -O3 $bf $off -DKY_OFFLOAD_BACKEND=$be -I"$src" "$src"/offload_device.c "$work"/offload_main.o \
        "$work"/offload_team.o "$work"/kernel.o $flags -lm -o "$exe" >"$exe.build.log" 2>&1; then
        echo "stencil.offload.gpu: $be: build failed:"
        tail -20 "$exe.build.log"
        rc=1
        continue
    fi
    echo "stencil.offload.gpu: $be: built ($exe)"
    # shellcheck disable=SC2086
    if ! $launch "$exe" --check --require-device --points 7,27 --variant all --nx 67 --ny 45 --nz 61 --nt 9 \
        --bt 4; then
        echo "stencil.offload.gpu: $be: run failed"
        rc=1
    fi
    # two device threads per rank on one GPU: private copies, and p2p's copies between device addresses
    # shellcheck disable=SC2086
    if ! $launch "$exe" --check --require-device --points 7 --variant p2p --devices 2 --nx 67 --ny 45 --nz 61 \
        --nt 9 --bt 4; then
        echo "stencil.offload.gpu: $be: run with --devices 2 failed"
        rc=1
    fi
done
exit $rc
