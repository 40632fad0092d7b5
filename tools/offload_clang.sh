# Sourced by tools/offload-check: Clang's OpenMP offloading to NVIDIA GPUs from carried files (made by
# tools/fetch-offload-clang-ubuntu), and the flags of a Clang offload build, in one place.
#   clang_use_debs DIR ROOT  unpack DIR's .deb files (dpkg -x: nothing is installed) and .tar.gz into ROOT once;
#                            set OFFLOAD_CLANG to its clang and make it start: a library the machine lacks that
#                            DIR carries (libedit, libbsd, libmd; libxml2's stub) is linked into ROOT/fallback-lib,
#                            which goes first on LD_LIBRARY_PATH, with libcuda.so (below); CUDA's bin on PATH
#                            (ptxas, nvlink, fatbinary)
#   clang_cuda_path          the CUDA toolkit clang is to use: nvcc's, else /usr/local/cuda, or ""
#   clang_offload_flags SM CC  the flags of a Clang nvptx build for compute capability SM (with clang_rpath's)
#   clang_rpath CC           -Wl,-rpath to CC's own libomp and libomptarget: an unpacked tree is not on the
#                            loader's path
# shellcheck shell=bash

clang_use_debs() {
    local debs=$1 root=$2 d lib err fb=$2/fallback-lib cuda
    if [ ! -e "$root/.unpacked" ]; then
        mkdir -p "$root"
        for d in "$debs"/*.deb; do dpkg -x "$d" "$root" || echo "offload_clang: dpkg -x $d failed"; done
        for d in "$debs"/*.tar.gz; do [ -e "$d" ] && { tar -xzf "$d" -C "$root" || echo "offload_clang: tar $d failed"; }; done
        : >"$root/.unpacked"
    fi
    OFFLOAD_CLANG=$(ls -d "$root"/usr/lib/llvm-*/bin/clang 2>/dev/null | sort -V | tail -1)
    if [ -z "$OFFLOAD_CLANG" ]; then
        echo "offload_clang: no clang in $debs ($(ls "$debs" 2>/dev/null | tr '\n' ' '))"
        return 1
    fi
    mkdir -p "$fb"
    export LD_LIBRARY_PATH="$fb${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
    # the loader names one missing library at a time
    for _ in 1 2 3 4 5 6 7 8; do
        err=$("$OFFLOAD_CLANG" --version 2>&1 >/dev/null) && break
        lib=$(echo "$err" | sed -n 's/.*error while loading shared libraries: \([^:]*\):.*/\1/p')
        if [ -z "$lib" ]; then
            echo "offload_clang: $OFFLOAD_CLANG does not start: $err"
            return 1
        elif [ "$lib" = libxml2.so.2 ] && [ -e "$debs/libxml2-stub.so.2" ]; then
            cp "$debs/libxml2-stub.so.2" "$fb/libxml2.so.2"
        elif [ -e "$root/usr/lib/x86_64-linux-gnu/$lib" ]; then
            ln -sf "$root/usr/lib/x86_64-linux-gnu/$lib" "$fb/$lib"
        else
            echo "offload_clang: $OFFLOAD_CLANG needs $lib, which this machine and $debs lack"
            return 1
        fi
        echo "offload_clang: $lib is not on this machine: $([ "$lib" = libxml2.so.2 ] && echo "a stub" || echo "the carried one")"
    done
    # libomptarget's CUDA plugin (LLVM 18) opens "libcuda.so", the name only a CUDA toolkit's development
    # symlink has; a machine with the driver alone (or a container of one) has libcuda.so.1 only
    lib=$( (ldconfig -p 2>/dev/null | sed -n 's/.*libcuda\.so\.1 (libc6,x86-64[^)]*) => \(.*\)$/\1/p'
        ls /usr/lib/x86_64-linux-gnu/libcuda.so.1 /usr/lib64/libcuda.so.1 /usr/local/nvidia/lib64/libcuda.so.1 2>/dev/null) | head -1)
    [ -n "$lib" ] && ln -sf "$lib" "$fb/libcuda.so"
    cuda=$(clang_cuda_path)
    [ -n "$cuda" ] && export PATH="$PATH:$cuda/bin"
    export OFFLOAD_CLANG
}

clang_cuda_path() {
    local n d
    if n=$(command -v nvcc 2>/dev/null); then
        n=$(readlink -f "$n")
        dirname "$(dirname "$n")"
        return
    fi
    for d in /usr/local/cuda /usr/lib/cuda; do
        [ -d "$d/nvvm/libdevice" ] && { echo "$d"; return; }
    done
}

# --cuda-path: Clang's own search misses a CUDA that is only on PATH. -Wno-unknown-cuda-version: Clang 18 knows
# CUDA up to 12.3 and warns about newer ones (it then writes the newest PTX it knows, 8.3, which CUDA 13's ptxas
# takes). -Wno-pass-failed: each omp simd inner loop of a device region says it was not vectorized (there is no
# such vectorizing on the GPU). -fopenmp-target-jit (where the toolkit's ptxas writes the new cubin header):
# CUDA 13's ptxas marks a cubin with ELF ABI version 8 and the SM in bits 8-15 of e_flags (sm_90: 0x6005a04),
# where LLVM 18's CUDA plugin reads it from bits 0-7, finds sm_4 and refuses the image ("No images found
# compatible with the installed hardware", H200, 2026-11-28); with the flag the program carries LLVM bitcode,
# the plugin compiles it to PTX when it loads and the driver makes the cubin, with the same speed (within 3%
# in the same call). OFFLOAD_CLANG_FLAGS: flags for the device builds, instead of that default;
# OFFLOAD_CLANG_FLAGS_EXTRA: flags added after it (what bench/offload_device.sh's CLANG_FLAGS_ALSO sets).
clang_offload_flags() {
    local sm=$1 cc=${2:-clang} cuda
    cuda=$(clang_cuda_path)
    echo "-fopenmp-targets=nvptx64-nvidia-cuda -Xopenmp-target=nvptx64-nvidia-cuda -march=sm_$sm" \
        "${cuda:+--cuda-path=$cuda} -Wno-unknown-cuda-version -Wno-pass-failed $(clang_rpath "$cc")" \
        "${OFFLOAD_CLANG_FLAGS-$(clang_jit_flag "$cuda" "$cc")}" "${OFFLOAD_CLANG_FLAGS_EXTRA:-}"
}

# -fopenmp-target-jit where the toolkit's ptxas writes cubins LLVM 18 cannot read (CUDA 13 and later: above) and
# the Clang knows the flag (17 and later; Clang 14 cannot build for sm_90 anyway)
clang_jit_flag() {
    local v c
    v=$("$1/bin/ptxas" --version 2>/dev/null | sed -n 's/.*release \([0-9]*\)\..*/\1/p' | head -1)
    c=$("${2:-clang}" -dumpversion 2>/dev/null | cut -d. -f1)
    [ -n "$v" ] && [ "$v" -ge 13 ] && [ -n "$c" ] && [ "$c" -ge 17 ] && echo "-fopenmp-target-jit"
}

clang_rpath() {
    local lib
    lib=$("${1:-clang}" -print-resource-dir 2>/dev/null) && [ -d "$lib/../.." ] && echo "-Wl,-rpath,$(readlink -f "$lib/../..")"
}
