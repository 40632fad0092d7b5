# Sourced by tools/offload-check and apps/stencil/offload_gpu.sh: GCC's nvptx offloading from carried .deb
# files, and the flags of an nvptx build, in one place.
#   nvptx_use_debs DEBS ROOT MAJOR  unpack DEBS/*.deb into ROOT once (dpkg -x: nothing is installed) and put
#                                   its accel driver, mkoffload, nvptx-as/ld and libgomp plugin on PATH,
#                                   COMPILER_PATH (where lto-wrapper finds mkoffload) and LD_LIBRARY_PATH
#   nvptx_mkoffload MAJOR           the mkoffload lto-wrapper will find (COMPILER_PATH, then the system's), or ""
#   nvptx_flags SM                  GCC's flags of an nvptx build for compute capability SM
# shellcheck shell=bash

nvptx_use_debs() {
    local debs=$1 root=$2 major=$3 d
    if [ ! -d "$root" ]; then
        for d in "$debs"/*.deb; do dpkg -x "$d" "$root" || echo "nvptx: dpkg -x $d failed"; done
    fi
    export PATH="$root/usr/bin:$PATH"
    # Debian keeps the accel tools under usr/lib/gcc, Ubuntu 24.04 under usr/libexec/gcc
    export COMPILER_PATH="$root/usr/lib/gcc/x86_64-linux-gnu/$major:$root/usr/libexec/gcc/x86_64-linux-gnu/$major${COMPILER_PATH:+:$COMPILER_PATH}"
    export LD_LIBRARY_PATH="$root/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
}

nvptx_mkoffload() {
    local major=$1 d
    for d in ${COMPILER_PATH:+${COMPILER_PATH//:/ }} "/usr/lib/gcc/x86_64-linux-gnu/$major" "/usr/libexec/gcc/x86_64-linux-gnu/$major"; do
        ls "$d/accel/nvptx-none/mkoffload" 2>/dev/null
    done | head -1
}

# PTX for at most sm_80 (GCC 12's newest; PTX runs on newer GPUs; GCC's default sm_35 is refused by CUDA 12's
# ptxas) with nvptx's libatomic (16-byte compare-and-swap in reductions). -ffp-contract=off for nvptx too: the
# host's does not reach the offload compile, whose fused multiply-adds made the GPU's stencils differ from the
# plain loops in the last bit (H200, 2026-11-27). -fcf-protection=none -fno-stack-protector: Ubuntu's GCC turns
# both on by default, and its nvptx lto1 then stops ("'-fcf-protection=full' is not supported for this target")
# or ptxas ("Unknown symbol '__stack_chk_guard'").
nvptx_flags() {
    local sm=$1
    [ "$sm" -ge 80 ] && sm=80
    echo "-foffload=nvptx-none -foffload-options=nvptx-none=-misa=sm_$sm -foffload-options=nvptx-none=-latomic" \
        "-foffload-options=nvptx-none=-ffp-contract=off -fcf-protection=none -fno-stack-protector"
}
