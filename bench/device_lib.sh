# Sourced by the one-call GPU-machine scripts (bench/cg_device.sh, bench/io_device.sh, bench/*/tb_device.sh):
# what every such call keeps the same. It exports the environment of every device run (NVLink multicast off,
# Open MPI as root, KY_TIMEOUT bounded so that a hung run ends inside the call) and defines
#   device_out NAME     $out = $OUT, else .scratch/NAME under the checkout; $S = $out/summary.txt, emptied
#   note TEXT...        a line on stdout and in the summary
#   want PART           whether PART is in the comma list $only (the script's --only)
#   step NAME LIMIT CMD...  CMD under `timeout LIMIT`, its output in $out/NAME.log, one line in the summary;
#                       returns CMD's status, and exit 77 (no GPU: the tests' skip code) sets nogpu=1
# The caller sets $root (the checkout) first.
# shellcheck disable=SC2034 # nogpu is read by the scripts that source this
export NCCL_NVLS_ENABLE=0 NVSHMEM_DISABLE_NVLS=1 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 OMPI_ALLOW_RUN_AS_ROOT=1 \
       OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 KY_TIMEOUT=120
nogpu=0

device_out() {
    out="${OUT:-$root/.scratch/$1}"
    mkdir -p "$out"
    S="$out/summary.txt"
    : >"$S"
}

note() { echo "$*" | tee -a "$S"; }

# shellcheck disable=SC2154 # only: the --only list of the script that sources this
want() { case ",$only," in *",$1,"*) return 0 ;; *) return 1 ;; esac; }

step() {
    local name=$1 lim=$2 t0=$SECONDS rc
    shift 2
    timeout --kill-after=5 "$lim" "$@" >"$out/$name.log" 2>&1
    rc=$?
    [ $rc = 77 ] && nogpu=1
    note "step $name: exit $rc in $((SECONDS - t0)) s$([ $rc = 124 ] && echo " (killed at the ${lim} s limit)")"
    return $rc
}
