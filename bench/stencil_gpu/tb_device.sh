#!/usr/bin/env bash
# ky_stencil_gpu's in-kernel temporal blocking (--tb, apps/stencil_gpu/tblock.cu) on one GPU, in one device
# call of under 6 minutes: builds ky_stencil_gpu (Release, its own build dir), checks every blocked kernel
# bitwise against the single-step kernels and the CPU (the GPU tests' cases), times 512^3 doubles for the
# 7- and 27-point stencils at tb 1..4, tiles and z chunks (persistent blocks too), and prints one table: ms/step, effective Gpoint/s,
# the ratio to the single-step HBM roofline (16 B/point at the device copy bandwidth measured by the
# program), registers, spills and shared memory per kernel (ptxas -v), and ncu's speed-of-light figures
# where ncu exists. Everything lands in $OUT (default .scratch/tb-device): summary.txt (what you read first),
# results.jsonl (one JSON line per run), resources.txt, *.log.
#
#   bench/stencil_gpu/tb_device.sh [--only check,perf,staged,ncu,ncubest] [--quick] [--help]
#
# --only: the parts to run after the build (default check,perf,ncu; a second call on the same machine
# rebuilds nothing, so `--only ncu` fits in another call if the first ran out of time). staged: the staged
# 27-point kernel (--tb-kernel staged, tblock27s.cuh) at tb 1..3 and its tiles beside the old kernels' best
# (7-point tb 1 and tb 3, 27-point tb 1 and tb 2 12x2), about 2 minutes at STEPS=400; ncubest: ncu's
# speed of light, memory workload and occupancy of the best 7-point kernel and of the 27-point ones (old
# and staged), under 90 s. The staged kernels' call: STEPS=400 tb_device.sh --only check,staged,ncubest
# (about 4 minutes on one H200). --quick: only the default tiles (no tile or z-chunk sweep). Environment:
# OUT (output folder), BUILD (build dir, default build-tbdev), STEPS (timed steps, default 1200).
set -u
usage() { sed -n '2,20p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; }
only=check,perf,ncu quick=0
while [ $# -gt 0 ]; do
    case "$1" in
        --help | -h) usage; exit 0 ;;
        --only) only=${2:-}; shift ;;
        --quick) quick=1 ;;
        *) echo "tb_device.sh: unknown argument $1" >&2; usage >&2; exit 2 ;;
    esac
    shift
done
root="$(cd -P -- "$(dirname -- "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$root" || exit 1
. bench/device_lib.sh
device_out tb-device
B="${BUILD:-build-tbdev}"
STEPS="${STEPS:-1200}"
J="$out/results.jsonl"
: >"$J"
note "tb_device $(date -u +%FT%TZ) $(hostname): $(nvidia-smi -L 2>/dev/null | head -2 | tr '\n' ';') commit $(git rev-parse --short HEAD 2>/dev/null)"
note "cpus $(nproc); every run: 1 rank, variant kyoyu (c), --bt 12 (a multiple of every tb), --roofline 0 (measured copy)"

# ---- build ---------------------------------------------------------------------------------------------
# -Xptxas=-v: registers, stack frame and spills of every kernel into build.log (cuobjdump may be missing)
step configure 150 cmake -S . -B "$B" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 \
    -DCMAKE_CUDA_FLAGS=-Xptxas=-v -DKY_BUILD_TESTS=OFF -DKY_BUILD_BENCH=OFF -DKY_BUILD_EXAMPLES=OFF -DBUILD_TESTING=OFF
step build 240 cmake --build "$B" -j"$(nproc)" --target ky_stencil_gpu || { tail -30 "$out/build.log" | tee -a "$S"; exit 1; }
grep -i "warning" "$out/build.log" | grep -i stencil_gpu | head -5 | tee -a "$S"
K="$B/bin/kyrun"
X="$B/bin/ky_stencil_gpu"
# registers, stack frame and spills per kernel (ptxas, in build.log); the blocked kernels' shared memory is
# dynamic: 2 planes x tb stages x (by*rows + 2) x 66 doubles
# (kept in the build dir and updated with what this build compiled: a rebuild compiles only what changed)
python3 - "$out/build.log" "$B/tb_resources.txt" <<'PY'
import os, re, sys
res = {}
if os.path.exists(sys.argv[2]):
    for l in open(sys.argv[2]):
        if l.split():
            res[l.split()[0]] = l
cur = None
for l in open(sys.argv[1], errors="replace"):
    m = re.search(r"Compiling entry function '(\S+)'", l)
    if m:
        cur = m.group(1) if re.search(r"k_tb|k_stencil", m.group(1)) else None
        continue
    if cur is None:
        continue
    m = re.search(r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads", l)
    if m:
        stack, spill = m.group(1), m.group(2)
    m = re.search(r"Used (\d+) registers", l)
    if m:
        res[cur] = f"{cur} REG:{m.group(1)} STACK:{stack} SPILL:{spill}\n"
        cur = None
with open(sys.argv[2], "w") as f:
    f.writelines(res[k] for k in sorted(res))
PY
cp "$B/tb_resources.txt" "$out/resources.txt"

# ---- correctness: the GPU tests' cases (small grids, --check: bitwise against 1 GPU and the CPU) ----------
ok=1 nogpu=0
want check && for n in 1 2; do
    for tb in 2 3; do
        step check_n${n}_tb$tb 60 "$K" -n $n "$X" --small --nx 131 --ny 45 --pts both --bt 6 --tb $tb --variants ac || ok=0
        grep -E "identical|DIFFERENT|WRONG" "$out/check_n${n}_tb$tb.log" | sed 's/^/    /' | tee -a "$S"
    done
done
# every other tile at tb 4, z chunks of 3 planes: 8x4, 16x2 (the 27-point stencil: 16x1) and 12x2 (the
# 7-point stencil: 16x2) on 1 rank, 4x4, 8x2 and 32x1 (the 7-point stencil: 16x2) on 2 (as the GPU tests)
want check && for nt in 1:8x4 1:16x2 2:4x4 2:8x2 2:32x1 1:12x2; do
    n=${nt%%:*} tile=${nt#*:}
    step check_n${n}_tile$tile 60 "$K" -n $n "$X" --small --nx 77 --ny 53 --pts both --bt 4 --tb 4 --zchunk 3 \
        --tb-tile $tile --variants c || ok=0
    grep -E "^kyoyu" "$out/check_n${n}_tile$tile.log" | sed "s/^/    $tile: /" | tee -a "$S"
done
# persistent blocks (--zchunk -1: rounds of whole tiles, then shares that span tiles), 1024-thread tiles
want check && for nt in 1:2:16x2 2:3:16x2 2:2:32x1; do
    n=${nt%%:*} tb=${nt#*:} tile=${tb#*:} tb=${tb%%:*}
    step check_n${n}_persist_tb${tb}_$tile 60 "$K" -n $n "$X" --small --nx 131 --ny 45 --pts both --bt 6 \
        --tb $tb --zchunk -1 --tb-tile $tile --variants c || ok=0
    grep -E "^kyoyu" "$out/check_n${n}_persist_tb${tb}_$tile.log" | sed "s/^/    persistent $tile: /" | tee -a "$S"
done
# the first kernels (--tb-unroll 0: k_tb7, k_tb27; every other run is k_tb7u, k_tb27u)
want check && {
    step check_n2_rolled 60 "$K" -n 2 "$X" --small --nx 131 --ny 45 --pts both --bt 6 --tb 3 --tb-tile 16x2 \
        --tb-unroll 0 --variants c || ok=0
    grep -E "^kyoyu" "$out/check_n2_rolled.log" | sed "s/^/    first kernels: /" | tee -a "$S"
}
# the staged 27-point kernel: tb 1..3, odd nx (8-byte copies) and even (16-byte), 1 and 2 ranks, persistent
want check && for n in 1 2; do
    for tb in 1 2 3; do
        step check_n${n}_staged_tb$tb 60 "$K" -n $n "$X" --small --nx 131 --ny 45 --pts 27 --bt 6 --tb $tb \
            --tb-kernel staged --zchunk 5 --variants ac || ok=0
        grep -E "identical|DIFFERENT|WRONG" "$out/check_n${n}_staged_tb$tb.log" | sed 's/^/    staged: /' | tee -a "$S"
        step check_n${n}_staged_even_tb$tb 60 "$K" -n $n "$X" --small --nx 130 --ny 45 --pts 27 --bt 6 --tb $tb \
            --tb-kernel staged --tb-tile $([ $tb = 1 ] && echo 6x4 || echo 6x3) --zchunk -1 --variants c || ok=0
        grep -E "^kyoyu" "$out/check_n${n}_staged_even_tb$tb.log" | sed 's/^/    staged, even nx: /' | tee -a "$S"
    done
done
# the exchange behind the interior (--overlap 1, overlap.cu) in passes of tb steps, 2 ranks, every rank a node
want check && for tb in 2 4; do
    step check_n2_overlap_tb$tb 60 "$K" -n 2 --node-split "$X" --small --nz 16 --bt 4 --tb $tb --overlap 1 \
        --variants c || ok=0
    grep -E "^kyoyu" "$out/check_n2_overlap_tb$tb.log" | sed "s/^/    overlap: /" | tee -a "$S"
done
if want check; then
    if [ $nogpu = 1 ]; then
        note "CORRECTNESS: not checked: no GPU (exit status 77)"
    elif grep -q -E "WRONG|DIFFERENT" "$out"/check_*.log || [ $ok = 0 ]; then
        note "CORRECTNESS: FAILED (see check_*.log): the timings below are of wrong kernels"
    else
        note "CORRECTNESS: every blocked run identical to the single-step kernels and the CPU"
    fi
fi

# ---- 512^3: tb 1..4, tiles, z chunks ----------------------------------------------------------------------
perf() { # name args...: one process, both stencils
    local name=$1
    shift
    step "$name" 60 "$K" -n 1 "$X" --nx 512 --ny 512 --nz 512 --bt 12 --steps "$STEPS" --pts both --variants c \
        --phases 0 --roofline 0 --json "$J" "$@"
    grep -E "^kyoyu|device copy" "$out/$name.log" | sed 's/^/    /' | tee -a "$S"
}
if want perf; then
    perf perf_tb1 --tb 1
    [ $quick = 1 ] && for tb in 2 3 4; do perf perf_tb$tb --tb $tb; done
fi
# the staged 27-point kernel beside the old kernels' best (the same machine, the same call)
if want staged; then
    perf perf_old_tb1 --tb 1
    perf perf_old_tb3_16x2_pers --tb 3 --tb-tile 16x2 --zchunk -1 --pts 7
    perf perf_old_tb2_12x2 --tb 2 --tb-tile 12x2 --pts 27
    for tt in 1:12x2 1:6x4 1:8x2 2:12x2 2:10x2 2:6x3 2:8x3 2:6x4 3:8x2 3:6x3 3:12x2; do
        tb=${tt%%:*} tile=${tt#*:}
        perf perf_staged_tb${tb}_$tile --tb $tb --tb-tile $tile --tb-kernel staged --pts 27
    done
    perf perf_staged_tb1_12x2_pers --tb 1 --tb-tile 12x2 --tb-kernel staged --zchunk -1 --pts 27
    perf perf_staged_tb2_12x2_pers --tb 2 --tb-tile 12x2 --tb-kernel staged --zchunk -1 --pts 27
    perf perf_staged_tb2_12x2_zc128 --tb 2 --tb-tile 12x2 --tb-kernel staged --zchunk 128 --pts 27
fi
if want perf && [ $quick = 0 ]; then
    # 16x2: the 7-point stencil's 64x32 tile of 1024 threads; the 27-point one takes 16x1 (64x16, 1024
    # threads, one row each); 12x2 and 32x1: the 27-point stencil's 64x24 (768 threads) and 32x32 (1024)
    # tiles; zchunk -1: persistent blocks. Left out as slow on 2026-11-27 (and unchanged since): the 7-point
    # 4x4 tile, 7-point 8x4 at tb 4 and the 27-point 8x4 tile (it still spills); to keep the call short,
    # the 27-point 4x4 tile at tb 4 and 32x1 beyond tb 2 too.
    for tb in 2 3 4; do
        perf perf_tb${tb}_16x2 --tb $tb --tb-tile 16x2
        perf perf_tb${tb}_8x2 --tb $tb --tb-tile 8x2
    done
    for tb in 2 3; do
        perf perf_tb${tb}_16x2_pers --tb $tb --tb-tile 16x2 --zchunk -1
        perf perf_tb${tb}_8x2_pers --tb $tb --tb-tile 8x2 --zchunk -1
        perf perf_tb${tb}_4x4 --tb $tb --tb-tile 4x4 --pts 27
    done
    perf perf_tb2_12x2 --tb 2 --tb-tile 12x2 --pts 27
    perf perf_tb2_32x1 --tb 2 --tb-tile 32x1 --pts 27
    perf perf_tb3_8x4 --tb 3 --tb-tile 8x4 --pts 7
    # the first kernels (--tb-unroll 0: k_tb7, 386 Gpoint/s on 2026-11-27, and k_tb27, 150) against
    # k_tb7u and k_tb27u on the same machine
    perf perf_tb3_16x2_rolled --tb 3 --tb-tile 16x2 --tb-unroll 0 --pts 7
    perf perf_tb2_8x2_rolled --tb 2 --tb-tile 8x2 --tb-unroll 0 --pts 27
fi

# ---- ncu: speed of light of each default kernel (a short run: one block of bt steps) ----------------------
if want ncu && command -v ncu >/dev/null; then
    pd=""
    ncu --help 2>/dev/null | grep -q -- "--print-details" && pd="--print-details all"
    for tb in 1 3 2 4; do
        for pts in 7 27; do
            if [ $SECONDS -gt 300 ]; then note "ncu: stopped at ${SECONDS} s (the 6-minute budget)"; break 2; fi
            # shellcheck disable=SC2086
            step ncu_${pts}_tb$tb 45 "$K" -n 1 ncu --section SpeedOfLight $pd -k "regex:k_tb|k_stencil" --launch-skip 2 \
                --launch-count 1 "$X" --nx 512 --ny 512 --nz 512 --bt 12 --steps 12 --pts $pts --variants c --phases 0 \
                --tb $tb
        done
    done
else
    want ncu && note "ncu: not installed"
fi
# ---- ncu on the best kernels: the limiter (speed of light, memory workload, occupancy), under 90 s --------
if want ncubest && command -v ncu >/dev/null; then
    t0=$SECONDS
    for c in "7 3 --tb-tile 16x2 --zchunk -1" "27 2 --tb-tile 12x2" "27 2 --tb-tile 12x2 --tb-kernel staged" \
        "27 1 --tb-tile 12x2 --tb-kernel staged" "27 1"; do
        set -- $c
        pts=$1 tb=$2
        shift 2
        name=ncubest_${pts}_tb${tb}$(echo "$*" | tr -d ' -' | sed 's/tbtile/_/; s/zchunk/_zc/; s/tbkernel/_/')
        if [ $((SECONDS - t0)) -gt 75 ]; then note "ncubest: stopped at $((SECONDS - t0)) s"; break; fi
        step "$name" 30 "$K" -n 1 ncu --section SpeedOfLight --section MemoryWorkloadAnalysis --section Occupancy \
            --section LaunchStats -k "regex:k_tb|k_stencil" --launch-skip 2 --launch-count 1 "$X" --nx 512 --ny 512 \
            --nz 512 --bt 12 --steps 12 --pts "$pts" --variants c --phases 0 --tb "$tb" "$@"
        grep -E "k_tb|k_stencil|Duration|Throughput|Busy|Achieved Occupancy|Theoretical Occupancy|Registers Per|Block Limit" \
            "$out/$name.log" | head -24 | sed "s/^/    $name: /" | tee -a "$S"
    done
    note "ncubest: $((SECONDS - t0)) s"
else
    want ncubest && note "ncu: not installed"
fi

# ---- the table -------------------------------------------------------------------------------------------
python3 - "$J" "$out/resources.txt" "$out" <<'PY' | tee -a "$S"
import glob, json, os, re, sys
jf, rf, out = sys.argv[1:4]
recs = [json.loads(l) for l in open(jf) if l.strip()]
# resources: "<mangled> REG:n STACK:n SPILL:n" (ptxas -v)
res = {}
for l in open(rf):
    w = l.split()
    if w:
        res[w[0]] = dict(re.findall(r"(\w+):(\d+)", l))
def kernel_of(pts, tb, by, rows, unroll, staged=0):
    """mangled-name pattern of the kernel a run used"""
    if staged:  # k_tb27s<TB, TBY, RY, 4 planes, 16-byte copies> (nx 512 is even)
        return rf"_Z\d+k_tb27sILi{tb}ELi{by}ELi{rows}ELi4ELi2EE"
    if tb == 1:
        return r"k_stencilILi7ELi4E" if pts == 7 else r"k_stencil27sILi64ELi4ELi4ELi4E"
    return rf"_Z\d+k_tb{pts}{'u' if unroll else ''}ILi{tb}ELi{by}ELi{rows}EE"
def resources(pts, tb, by, rows, unroll=1, staged=0):
    pat = re.compile(kernel_of(pts, tb, by, rows, unroll, staged))
    for k, f in res.items():
        if pat.search(k):
            return f
    return {}
def ncu_of(pts, tb):
    p = os.path.join(out, f"ncu_{pts}_tb{tb}.log")
    if not os.path.exists(p):
        return "-"
    t = open(p, errors="replace").read()
    def g(name):
        m = re.search(re.escape(name) + r"\s+%\s+([\d.]+)", t)
        return m.group(1) if m else "?"
    return (f"SM {g('Compute (SM) Throughput')}% mem {g('Memory Throughput')}% DRAM {g('DRAM Throughput')}% "
            f"L1 {g('L1/TEX Cache Throughput')}% L2 {g('L2 Cache Throughput')}%")
print()
print("512^3 doubles, 1 GPU; Gpt/s = points x steps / s; x roof = Gpt/s / (copy GB/s / 16 B per point)")
print(f"{'pts':>3} {'tb':>2} {'tile':>10} {'zc':>4} {'ms/step':>8} {'Gpt/s':>7} {'x roof':>6} {'regs':>4} {'spill':>5} {'smem KB':>7}  ncu (default tile)")
best = {}
for r in recs:
    pts, tb = r["pts"], r.get("tb", 1)
    by, rows, zc = r.get("tb_by", 0), r.get("tb_rows", 0), r.get("zchunk", 0)
    g = r.get("gpoints_per_s", 0.0)
    roof = r["roofline_GBs"] / 16.0
    staged = r.get("tb_staged", 0)
    f = resources(pts, tb, by, rows, r.get("tb_unroll", 1), staged)
    # dynamic shared memory: the blocked kernels' planes; the single-step 27-point kernel's 4 staged tiles
    cols = 32 if by == 32 else 64  # tile columns (= threads per thread row)
    smem = 2 * tb * (by * rows + 2) * (cols + 2) * 8 / 1024 if tb > 1 else (4 * 18 * 68 * 8 / 1024 if pts == 27 else 0)
    tile = f"{cols}x{by * rows}:{by}x{rows}" if tb > 1 else "1-step"  # columns x rows: thread rows x rows each
    if staged:  # k_tb27s: a ring of 4 planes and 2 per stage 1 .. tb-1, rows of 68 doubles
        smem = (4 + 2 * (tb - 1)) * (by * rows + 2) * 68 * 8 / 1024
        tile = f"64x{by * rows}:{by}x{rows}s"
    if tb > 1 and not r.get("tb_unroll", 1):
        tile += "r"  # the first kernels, k_tb7 and k_tb27 (--tb-unroll 0)
    # sg_tb_shape's default tile: 16x2 for the 7-point stencil, 8x2 for the 27-point one
    dby, drows = (16, 2) if pts == 7 else (8, 2)
    default = not staged and (tb == 1 or (rows == drows and by == dby and zc == 64 and r.get("tb_unroll", 1)))
    zcs = "pers" if zc == -1 else zc or "-"  # -1: persistent blocks
    if tb == 1 and not staged:
        zcs = "-"
    print(f"{pts:>3} {tb:>2} {tile:>10} {zcs:>4} {r['step_ms']:>8.4f} {g:>7.1f} {g / roof:>6.2f} "
          f"{f.get('REG', '?'):>4} {f.get('SPILL', '?'):>5} {smem:>7.1f}  {ncu_of(pts, tb) if default else ''}")
    k = (pts, tb, "staged" if staged else "old")
    if k not in best or g > best[k][0]:
        best[k] = (g, tile, zcs, g / roof)
print()
print("best per (pts, tb, kernel): " + "; ".join(f"{p}pt tb{t} {k}: {v[0]:.0f} Gpt/s = {v[3]:.2f}x roofline ({v[1]}, zc {v[2] or '-'})" for (p, t, k), v in sorted(best.items())))
g7 = max((v[0] for (p, t, k), v in best.items() if p == 7), default=0)
x27 = max((v[3] for (p, t, k), v in best.items() if p == 27), default=0)
x27s = max((v[3] for (p, t, k), v in best.items() if p == 27 and t == 1), default=0)
print(f"27-point single step (tb 1, either kernel) >= 0.80x roofline: {x27s:.2f}x ({'met' if x27s >= 0.8 else 'NOT met'})")
print(f"goals: 7-point >= 400 Gpt/s: {g7:.0f} ({'met' if g7 >= 400 else 'NOT met'}); 27-point >= 1.2x roofline: {x27:.2f}x ({'met' if x27 >= 1.2 else 'NOT met'})")
PY
note "ncu summaries: grep -A12 'Section: GPU Speed Of Light' $out/ncu_*.log; total ${SECONDS} s"
for f in "$out"/ncu_*.log; do
    [ -f "$f" ] || continue
    echo "== $(basename "$f")" >>"$out/ncu_brief.txt"
    grep -E "k_tb|k_stencil|Throughput|Duration|OPT|INF|Registers|Shared" "$f" | head -24 >>"$out/ncu_brief.txt"
done
