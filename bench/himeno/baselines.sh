#!/usr/bin/env bash
# Himeno baselines for `kybench run himeno` (docs/performance.md, "Himeno"): third-party code, fetched into
# an ignored folder, built and run here, never committed.
#
#   bench/himeno/baselines.sh fetch            sources into .scratch/himeno-baselines/src (from a local
#                                              mirror when there is one: the GPU machine has no network,
#                                              so fetch here and carry .scratch/himeno-baselines)
#   bench/himeno/baselines.sh run OUT [what]   build and run; append JSON lines to OUT/himeno_ext.jsonl and
#                                              everything printed to OUT/himeno_ext.log
#       what: cuda:SIZE[,SIZE..]   the public single-GPU CUDA Himenos (keichi/gpu-himeno cuda/, nattoheaven/
#                                  cuda_himenoBMT as published and with slack for its out-of-bounds reads)
#                                  on GPU 0, sizes XS..XL
#             mpi:SIZE:IxJxK       the original C+MPI Himeno (himenoBMTxps.c, RIKEN; as published in
#                                  calorie/himeno_benchmark's first commit) on I*J*K ranks
#       (default: cuda:M,L mpi:M:2x2x1)
#
# Changes made to the fetched code at build time (in the ignored copy): the measured loop's target of
# 60 s becomes HG_TARGET seconds (default 3; environment HG_TARGET), so a run fits the device budget. The
# algorithm, arrays and flop count are untouched. cuda_himenoBMT uses every peer-reachable GPU: it runs
# with CUDA_VISIBLE_DEVICES=0.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
DIR="$ROOT/.scratch/himeno-baselines"
SRC="$DIR/src"
TARGET="${HG_TARGET:-3.0}"
ARCH="${HG_CUDA_ARCH:-90}"

# repository, commit, files
GPUHIMENO=(keichi/gpu-himeno feecf9a9707b23f3baf3218b0d17b3e212d0c28a cuda/himenoBMT.cu)
NATTO=(nattoheaven/cuda_himenoBMT 11c88b41769d2898242752bd989b496cec9b75ec himenoBMT.cu)
ORIG=(calorie/himeno_benchmark b926d97eb754caca9b69cbffeb3e4d3dfcb97aa0 himenoBMTxps.c paramset.sh)

fetch_one() {   # repo commit files...
    local repo=$1 commit=$2; shift 2
    local dst="$SRC/${repo//\//+}" mirror="/work/.mirror/${repo//\//+}/repo"
    mkdir -p "$dst"
    if [ -d "$mirror" ]; then
        local c; c=$(git -C "$mirror" cat-file -e "$commit^{commit}" 2>/dev/null && echo "$commit" || git -C "$mirror" rev-parse HEAD)
        for f in "$@"; do git -C "$mirror" show "$c:$f" > "$dst/$(basename "$f")"; done
        echo "$repo@$c" > "$dst/ORIGIN"
    else
        local tmp; tmp=$(mktemp -d)
        git clone -q "https://github.com/$repo" "$tmp/r"
        git -C "$tmp/r" checkout -q "$commit" 2>/dev/null || true
        for f in "$@"; do cp "$tmp/r/$f" "$dst/"; done
        echo "$repo@$(git -C "$tmp/r" rev-parse HEAD)" > "$dst/ORIGIN"
        rm -rf "$tmp"
    fi
    echo "fetched $(cat "$dst/ORIGIN") -> $dst"
}

size_macro() { case $1 in XS) echo SSMALL;; S) echo SMALL;; M) echo MIDDLE;; L) echo LARGE;; XL) echo ELARGE;; *) echo "bad size $1" >&2; exit 2;; esac; }
size_grid() { case $1 in XS) echo 32x32x64;; S) echo 64x64x128;; M) echo 128x128x256;; L) echo 256x256x512;; XL) echo 512x512x1024;; esac; }

# parse the original's output into one JSON line: name size ranks extra-json log
record() {
    local name=$1 size=$2 ranks=$3 extra=$4 log=$5 out=$6
    local nn gosa mf cpu
    nn=$(grep -E "Loop executed for" "$log" | tail -1 | grep -oE "[0-9]+" | head -1 || true)
    gosa=$(grep -E "Gosa :" "$log" | tail -1 | awk '{print $3}' || true)
    mf=$(grep -E "MFLOPS measured" "$log" | tail -1 | awk '{print $4}' || true)
    cpu=$(grep -E "cpu :" "$log" | tail -1 | grep -oE "cpu : [0-9.]+" | awk '{print $3}' || true)
    if [ -z "$nn" ] || [ -z "$mf" ]; then echo "  $name $size: no result (see $log)"; return 1; fi
    [ -n "$cpu" ] || cpu=0
    printf '{"bench":"himeno","case":"himeno_ext_%s_%s_n%d","kind":"%s","date":"%s","version":"external","ranks":%d,"size":"%s","grid":"%s","variant":"%s","iters":%d,"time_s":%s,"mflops":%s,"gosa":%s,"ms_per_iter":%s%s}\n' \
        "$name" "$size" "$ranks" "${KY_BENCH_MACHINE:-$(hostname)}" "$(date -u +%F)" "$ranks" "$size" "$(size_grid "$size")" \
        "$name" "$nn" "$cpu" "$mf" "$gosa" "$(awk -v c="$cpu" -v n="$nn" 'BEGIN{printf "%.6g", (n>0?1e3*c/n:0)}')" "$extra" >> "$out"
    echo "  $name $size: $nn iterations, $mf MFLOPS, gosa $gosa"
}

CUDA_SPECS=("gpu-himeno:keichi+gpu-himeno" "cuda_himenoBMT:nattoheaven+cuda_himenoBMT"
            "cuda_himenoBMT_pad:nattoheaven+cuda_himenoBMT")

build_cuda() {   # OUT name dir size: the binary, from the fetched source with the changes named above
    local out=$1 name=$2 d=$3 s=$4 bin="$DIR/bin/$2_$4" pad=()
    [ -x "$bin" ] && return 0
    # cuda_himenoBMT_pad: the published code reads the i plane before its first and after its last
    # (p[-1], p[iwidth]: the halo rows of the first and last thread blocks, unused on one GPU) outside
    # the cudaMalloc'd p and wrk2, which hold only 31 floats of slack; the copy gives each a whole
    # plane of slack on both sides, nothing else changed
    [ "$name" = cuda_himenoBMT_pad ] && pad=(-e 's/(iwidth \* (MJMAX - 1) \* (MKMAX + 31) + BLOCKK - 1)/((iwidth + 2) * (MJMAX - 1) * (MKMAX + 31) + BLOCKK - 1)/' \
        -e 's/&tmp\[BLOCKK - 1\];/\&tmp[BLOCKK - 1 + (MJMAX - 1) * (MKMAX + 31)];/')
    sed -e "s/target *= *60\.0;/target= HG_TARGET;/" "${pad[@]}" "$d/himenoBMT.cu" > "$DIR/bin/${name}_$s.cu"
    nvcc -O3 -arch=sm_$ARCH -D$(size_macro "$s") -DHG_TARGET="$TARGET" -Xcompiler -mcmodel=medium \
         "$DIR/bin/${name}_$s.cu" -o "$bin" > "$DIR/bin/${name}_$s.build.log" 2>&1
}

run_cuda() {   # OUT sizes
    local out=$1 sizes=$2
    mkdir -p "$DIR/bin"
    # every binary first, in parallel (nvcc is slow; the device call's time is short), then the runs, one at a time
    for s in ${sizes//,/ }; do
        for spec in "${CUDA_SPECS[@]}"; do build_cuda "$out" "${spec%%:*}" "$SRC/${spec#*:}" "$s" & done
    done
    wait
    for s in ${sizes//,/ }; do
        for spec in "${CUDA_SPECS[@]}"; do
            local name=${spec%%:*} d="$SRC/${spec#*:}" bin="$DIR/bin/${spec%%:*}_$s"
            cat "$DIR/bin/${name}_$s.build.log" >> "$out/himeno_ext.log" 2>/dev/null
            [ -x "$bin" ] || { echo "  $name $s: build failed"; continue; }
            echo "=== $name $s ($(cat "$d/ORIGIN")): CUDA_VISIBLE_DEVICES=0 $bin" >> "$out/himeno_ext.log"
            local log="$out/himeno_ext_${name}_$s.log"
            CUDA_VISIBLE_DEVICES=0 timeout 120 "$bin" > "$log" 2>&1 || echo "  $name $s: exit $?"
            cat "$log" >> "$out/himeno_ext.log"
            record "$name" "$s" 1 ",\"mem\":\"gpu\",\"origin\":\"$(cat "$d/ORIGIN")\",\"target_s\":$TARGET" "$log" "$out/himeno_ext.jsonl" || true
        done
    done
}

run_mpi() {   # OUT size IxJxK
    local out=$1 s=$2 dims=$3
    local d="$SRC/calorie+himeno_benchmark" b="$DIR/bin/orig_mpi_${s}_$dims"
    IFS=x read -r di dj dk <<< "$dims"
    local n=$((di * dj * dk))
    mkdir -p "$b"
    sed "s/target *= *60\.0;/target= HG_TARGET;/" "$d/himenoBMTxps.c" > "$b/himenoBMTxps.c"
    (cd "$b" && sh "$d/paramset.sh" "$s" "$di" "$dj" "$dk" > /dev/null && \
        mpicc -O3 -DHG_TARGET="$TARGET" himenoBMTxps.c -o bmt) >> "$out/himeno_ext.log" 2>&1 || { echo "  original MPI: build failed"; return; }
    local log="$out/himeno_ext_orig_mpi_${s}_$dims.log" kr="$ROOT/build/bin/kyrun"
    [ -x "$kr" ] || kr="${KYRUN:-mpirun}"
    echo "=== original C+MPI $s $dims ($(cat "$d/ORIGIN")): OMP_NUM_THREADS=1 $kr -n $n $b/bmt" >> "$out/himeno_ext.log"
    (cd "$b" && OMP_NUM_THREADS=1 timeout 180 "${KYRUN:-$kr}" -n "$n" ./bmt) > "$log" 2>&1 || echo "  original MPI: exit $?"
    cat "$log" >> "$out/himeno_ext.log"
    # the original prints "cpu : T sec." on its own line
    record orig_mpi "$s" "$n" ",\"mem\":\"host\",\"dims\":\"$dims\",\"origin\":\"$(cat "$d/ORIGIN")\",\"target_s\":$TARGET" "$log" "$out/himeno_ext.jsonl" || true
}

case "${1:-}" in
fetch)
    fetch_one "${GPUHIMENO[@]}"
    fetch_one "${NATTO[@]}"
    fetch_one "${ORIG[@]}"
    ;;
run)
    out=${2:?run OUT [cuda:SIZES] [mpi:SIZE:IxJxK]}
    shift 2
    mkdir -p "$out"
    [ -d "$SRC" ] || { echo "himeno baselines: $SRC missing: run '$0 fetch' (here, then carry .scratch/himeno-baselines)"; exit 2; }
    [ $# -gt 0 ] || set -- cuda:M,L mpi:M:2x2x1
    for w in "$@"; do
        case $w in
        cuda:*) if command -v nvcc > /dev/null && nvidia-smi -L > /dev/null 2>&1; then run_cuda "$out" "${w#cuda:}"; else echo "  no GPU or nvcc: CUDA baselines skipped"; fi ;;
        mpi:*) IFS=: read -r _ s dims <<< "$w"; run_mpi "$out" "$s" "$dims" ;;
        *) echo "himeno baselines: unknown '$w'"; exit 2 ;;
        esac
    done
    ;;
*)
    sed -n '2,22p' "$0"
    exit 2
    ;;
esac
