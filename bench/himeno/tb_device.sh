#!/usr/bin/env bash
# ky_himeno's temporally blocked Jacobi (--tb, apps/himeno/tb_kernel.cuh) on one GPU, in one device call of
# about 5 minutes: builds ky_himeno (Release, its own build dir, ptxas -v), runs the GPU tests of --tb (the
# field bitwise against the single-step kernel, gosa of every iteration, the serial original), then times
# M, L and XL at tb 1 (the tuned single-step kernels, chained with PDL), 2 and 3 (every tile) and prints one
# table: ms per iteration, Gpoint-iterations/s, the speed-up over tb 1, and the fraction of the floors:
# the single-step floor (56 B per point per iteration at the device copy bandwidth ky_himeno measures) and
# the blocked one (56 / tb B: the 12 coefficient arrays and p read once per pass, p written once).
# Everything lands in $OUT (default .scratch/himeno-tb-device): summary.txt, results.jsonl, *.log.
#
#   bench/himeno/tb_device.sh [--only check,perf] [--sizes M,L,XL] [--help]
#
# A second call on the same machine rebuilds nothing: if one call runs short of time, split it (`--only check`,
# then `--only perf --sizes M,L`, then `--only perf --sizes XL`; each call rewrites summary.txt and results.jsonl).
# Environment: OUT, BUILD (default build-hgtb).
set -u
usage() { sed -n '2,15p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; }
only=check,perf sizes=M,L,XL
while [ $# -gt 0 ]; do
    case "$1" in
        --help | -h) usage; exit 0 ;;
        --only) only=${2:-}; shift ;;
        --sizes) sizes=${2:-}; shift ;;
        *) echo "tb_device.sh: unknown argument $1" >&2; usage >&2; exit 2 ;;
    esac
    shift
done
root="$(cd -P -- "$(dirname -- "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$root" || exit 1
. bench/device_lib.sh
device_out himeno-tb-device
B="${BUILD:-build-hgtb}"
J="$out/results.jsonl"
: >"$J"
note "himeno tb_device $(date -u +%FT%TZ) $(hostname): $(nvidia-smi -L 2>/dev/null | head -1) commit $(git rev-parse --short HEAD 2>/dev/null)"

step configure 150 cmake -S . -B "$B" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 \
    -DCMAKE_CUDA_FLAGS=-Xptxas=-v -DKY_BUILD_TESTS=OFF -DKY_BUILD_BENCH=OFF -DKY_BUILD_EXAMPLES=OFF \
    -DKY_ENABLE_IO=OFF -DBUILD_TESTING=ON
step build 240 cmake --build "$B" -j"$(nproc)" --target ky_himeno ky_himeno_tb_emu || {
    tail -30 "$out/build.log" | tee -a "$S"
    exit 1
}
# registers and spills of the blocked kernels (dynamic shared memory: tb x 3 planes x (TBX+2)(TBY+2) floats)
awk '/Compiling entry function .*hg_tb_kernel/ {n=$0; sub(/.*_Z12hg_tb_kernelILi/, "tb ", n); sub(/EEv.*/, "", n);
     gsub(/ELi/, " ", n)} /spill stores/ && n {sp=$0; sub(/.*frame, /, "", sp)} /Used [0-9]+ registers/ && n {
     r=$0; sub(/.*Used /, "", r); sub(/ registers.*/, "", r); print "    hg_tb_kernel<" n ">: " r " registers, " sp; n=""}' \
    "$out/build.log" | sort -u | tee -a "$S"
K="$B/bin/kyrun"
X="$B/bin/ky_himeno"

if want check; then
    step check_emu 120 "$B/bin/ky_himeno_tb_emu"
    tail -1 "$out/check_emu.log" | sed 's/^/    /' | tee -a "$S"
    step check_tests 300 ctest --test-dir "$B" -R 'gpu\.himeno\.n1\.tb' --output-on-failure
    grep -E "tests passed|Failed|\*\*\*" "$out/check_tests.log" | sed 's/^/    /' | tee -a "$S"
fi

perf() { # name args...
    local name=$1
    shift
    step "$name" 120 "$K" -n 1 "$X" --mem gpu --warmup 6 -q --json "$J" "$@"
    grep -E "temporally blocked|per iteration|Gosa" "$out/$name.log" | sed 's/^/    /' | tee -a "$S"
}
if want perf; then
    for size in ${sizes//,/ }; do
        # iterations: a multiple of 6 (whole passes at tb 2 and 3), about 0.2-0.5 s of loop
        case $size in M) it=1200 ;; L) it=300 ;; *) it=48 ;; esac
        perf "perf_${size}_tb1" "$size" --iters "$it"
        for tb in 2 3; do
            perf "perf_${size}_tb${tb}_32x16" "$size" --iters "$it" --tb "$tb"
            perf "perf_${size}_tb${tb}_64x16" "$size" --iters "$it" --tb "$tb" --tb-tile 64x16
            perf "perf_${size}_tb${tb}_32x16x2" "$size" --iters "$it" --tb "$tb" --tb-tile 32x16x2
        done
        [ "$size" = M ] && perf perf_M_tb2_32x16_chunk32 M --iters "$it" --tb 2 --tb-chunk 32 &&
            perf perf_M_tb2_32x16_chunk128 M --iters "$it" --tb 2 --tb-chunk 128
    done
fi

# ---- the table -------------------------------------------------------------------------------------------
python3 - "$J" <<'PY' | tee -a "$S"
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
if not recs:
    print("no timed runs")
    sys.exit(0)
print("\nsize  tb  tile / chunk      ms/iter  Gpt-it/s  vs tb1  of 56 B floor  of 56/tb B floor")
base = {}
for r in recs:
    if r.get("tb", 1) == 1:
        base[r["size"]] = r["ms_per_iter"]
for r in recs:
    g = [int(x) for x in r["grid"].split("x")]
    pts = (g[0] - 2) * (g[1] - 2) * (g[2] - 2)
    tb = r.get("tb", 1)
    ms = r["ms_per_iter"]
    fl = r.get("floor_GBs", 0)
    floor1 = pts * 56.0 / (fl * 1e9) * 1e3 if fl else 0  # ms per iteration at 56 B/point
    tile = r.get("tb_tile", "-") if tb > 1 else r.get("block", "")
    print(f"{r['size']:4s} {tb:3d}  {tile:16s} {ms:8.4f} {pts / ms / 1e6:9.2f}  {base.get(r['size'], ms) / ms:6.2f}"
          f"  {100 * floor1 / ms:12.1f}%  {100 * floor1 / tb / ms:15.1f}%")
print("(floor: the device copy bandwidth ky_himeno measures; 56 B per point per iteration single-step, 56/tb B"
      " per iteration blocked, halo re-reads of the tiles and i chunks not counted)")
PY
