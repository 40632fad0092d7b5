#!/usr/bin/env bash
# Run one command under CUDA MPS (the multi-process service), so that ranks sharing one GPU run their
# kernels at the same time instead of taking turns in time slices: the setting of issue 22's "ranks on one
# GPU" goal (a put_signal round trip between two ranks' kernels on one H200).
#
#   bench/device_mps.sh CMD [ARG ...]
#
# The control daemon gets private pipe and log folders (CUDA_MPS_PIPE_DIRECTORY, CUDA_MPS_LOG_DIRECTORY under
# a fresh temporary folder), so it serves only the processes this command starts, and it is told to quit
# when the command ends, however it ends. Nothing about the GPU changes: compute mode, clocks and MIG stay as
# found (MPS runs in the default compute mode). Afterwards the server's log says how many clients it served.
# Exit: the command's status; 77 (a skip) where nvidia-cuda-mps-control is missing or the daemon does not
# start.
set -u
case "${1:-}" in -h|--help|"") sed -n '2,/^[^#]/s/^# \{0,1\}//p' "$0"; exit 0 ;; esac
export NCCL_NVLS_ENABLE=0 NVSHMEM_DISABLE_NVLS=1 TORCH_SYMM_MEM_DISABLE_MULTICAST=1
ctl=$(command -v nvidia-cuda-mps-control) || {
    echo "device_mps: no nvidia-cuda-mps-control on this machine: MPS cannot start" >&2
    exit 77
}
dir=$(mktemp -d "${TMPDIR:-/tmp}/ky-mps.XXXXXX") || exit 1
export CUDA_MPS_PIPE_DIRECTORY="$dir/pipe" CUDA_MPS_LOG_DIRECTORY="$dir/log"
mkdir -p "$CUDA_MPS_PIPE_DIRECTORY" "$CUDA_MPS_LOG_DIRECTORY"
if ! "$ctl" -d; then
    echo "device_mps: nvidia-cuda-mps-control -d failed" >&2
    rm -rf "$dir"
    exit 77
fi
stop() {
    echo quit | "$ctl" >/dev/null 2>&1
    # the daemon ends its server first; wait for it (at most 10 s) so no process outlives the call
    for _ in $(seq 50); do pgrep -f "nvidia-cuda-mps" >/dev/null 2>&1 || break; sleep 0.2; done
    echo "device_mps: MPS stopped; server log:"
    grep -h -i -E "client|server|error|fail" "$CUDA_MPS_LOG_DIRECTORY"/*.log 2>/dev/null | tail -12
    rm -rf "$dir"
}
trap stop EXIT
trap 'exit 130' INT TERM
echo "device_mps: MPS control daemon started ($CUDA_MPS_PIPE_DIRECTORY)"
"$@"
