#!/usr/bin/env bash
# Set-up of the NPB-GPU baseline (GMAP's CUDA NPB, CG) for `bench/cg_device.sh`: clones it into the ignored
# .scratch/npb-gpu (never committed, never part of `make test`) and builds CG for the classes given
# (default C) for sm_90. Run where the network is reachable; the device machine has none, so build here and
# carry .scratch/npb-gpu/CUDA/bin. Usage: bench/cg_baselines/npb_gpu.sh [CLASS ...]
set -eu
root="$(cd -P -- "$(dirname -- "${BASH_SOURCE[0]}")/../.." && pwd)"
dst="$root/.scratch/npb-gpu"
if [ ! -d "$dst/CUDA" ]; then
    mkdir -p "$dst"
    git clone --depth 1 https://github.com/GMAP/NPB-GPU "$dst/repo"
    cp -r "$dst/repo/CUDA" "$dst/CUDA"
fi
cd "$dst/CUDA"
for c in "${@:-C}"; do
    make cg CLASS="$c" COMPUTE_CAPABILITY="-gencode arch=compute_${CUDA_ARCH:-90},code=sm_${CUDA_ARCH:-90}"
done
ls -l bin/
