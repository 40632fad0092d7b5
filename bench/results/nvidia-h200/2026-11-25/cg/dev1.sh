#!/bin/bash
# One device call for issue 15 (CG): build HEAD's tarball twice (spans in / compiled out), GPU sparse tests,
# SpMV vs cuSPARSE vs floor, NPB C vs NPB-GPU, bench_cg seed sizes (1 rank, 2 ranks sharing), trace A/B.
export NCCL_NVLS_ENABLE=0 NVSHMEM_DISABLE_NVLS=1 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 OMPI_ALLOW_RUN_AS_ROOT=1 \
       OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 KY_TIMEOUT=120
root=$PWD; src=/tmp/kycg; mkdir -p $src; tar -xf .scratch/cg/head.tar -C $src; cd $src
L=$OUT/logs; mkdir -p $L $L/results
S=$OUT/summary.txt
T0=$SECONDS
note() { echo "$*" | tee -a $S; }
step() { local name=$1 lim=$2 t=$SECONDS; shift 2; timeout --kill-after=5 $lim "$@" > $L/$name.log 2>&1; note "step $name: exit $? in $((SECONDS - t)) s (at $((SECONDS - T0)) s)"; }
note "dev1 $(date -u +%FT%TZ) $(nvidia-smi -L | head -1) commit $(cat $root/.scratch/cg/head.commit)"
cfg="-G Ninja -DCMAKE_BUILD_TYPE=Release -DKY_GTEST_SOURCE=$root/.scratch/googletest"
cmake -S . -B b $cfg > $L/cfg.log 2>&1
cmake -S . -B boff $cfg -DKY_TRACE_SPANS=OFF -DKY_BUILD_TESTS=OFF >> $L/cfg.log 2>&1
( cmake --build boff -j5 --target pingpong ky_cg -- -k 0 > $L/build_off.log 2>&1; echo "build_off rc $?" >> $S ) &
step build 300 cmake --build b -j11 --target kyoyu ky_cg bench_cg test_sparse pingpong -- -k 0
wait
K=$PWD/b/bin/kyrun
tail -3 $L/build.log >> $S
# GPU tests of the sparse layer (new: pipelined on GPU, forced rows4 / xblk1k kernels)
step tests 200 ctest --test-dir b -R '^gpu\.sparse' -j 3 --output-on-failure
grep -E 'tests passed|Failed|\*\*\*|Passed' $L/tests.log | tee -a $S
# NPB CG class C: Kyoyu (tuner report at info) and NPB-GPU, interleaved twice
for r in 1 2; do
  step npbC_$r 90 env KY_DEBUG=info KY_DEBUG_SUBSYS=gpu,runtime $K -n 1 b/bin/ky_cg --matrix npb:C --mem gpu --scheme graph,allgather,pipelined --json $L/results/ky_cg_npbC_$r.json
  grep -E "npb|SpMV of|rnorm" $L/npbC_$r.log | cut -c1-1500 | tee -a $S
  step npbgpuC_$r 60 $root/.scratch/npb-gpu/CUDA/bin/cg.C
  grep -E 'Time in seconds|Mop/s total|Verification|VERIFICATION' $L/npbgpuC_$r.log | tee -a $S
done
# SpMV alone vs cusparseSpMV and the floor, and CG on the NPB C matrix vs cuSPARSE+cuBLAS
step spmv 120 env KY_DEBUG=info KY_DEBUG_SUBSYS=gpu $K -n 1 b/bin/bench_cg --spmv 1 --matrix npb:C,standin:nd6k,standin:smt --iters 200 --reps 3 --scheme graph,allgather,pipelined --json $L/results/cg_spmv.jsonl
grep -E "^spmv|^npb|^standin|SpMV of" $L/spmv.log | cut -c1-1200 | tee -a $S
# seed sizes, one rank: every scheme against cuSPARSE+cuBLAS (kybench's cg_gpu case)
step seed1 120 $K -n 1 b/bin/bench_cg --iters 1000 --reps 3 --json $L/results/cg_gpu.jsonl
grep -E "^standin" $L/seed1.log | tee -a $S
# KY_TRACE compiled in but off (b) vs compiled out (boff): same programs, interleaved, best of 7
ab() { # tag build -> "pp bw cg_host cg_gpu"
  local B=$1
  local pp=$($B/bin/kyrun -n 2 $B/bin/pingpong -b 8 -e 8 -n 20000 -w 1000 -c 0 2>&1 | awk '/# pingpong put_pp_/{f=1;next} f&&/ 8 B/{print $3; exit}')
  local bw=$($B/bin/kyrun -n 2 $B/bin/pingpong -b 8 -e 8 -n 20000 -w 1000 -c 0 2>&1 | awk '/# pingpong put_bw_/{f=1;next} f&&/ 8 B/{print $3; exit}')
  local ch=$(OMP_NUM_THREADS=4 $B/bin/kyrun -n 2 $B/bin/ky_cg --matrix poisson7:48 --scheme halo --iters 300 --quiet 2>&1 | awk '/^  halo/{print $4}')
  local cgg=$($B/bin/kyrun -n 1 $B/bin/ky_cg --matrix standin:nasa2910 --mem gpu --scheme allgather --iters 2000 --quiet 2>&1 | awk '/^  allgather/{print $4}')
  echo "$pp $bw $ch $cgg"
}
t=$SECONDS
for i in 1 2 3 4 5 6; do
  if [ $((i % 2)) = 1 ]; then echo "on $(ab b)" >> $L/ab.txt; echo "off $(ab boff)" >> $L/ab.txt
  else echo "off $(ab boff)" >> $L/ab.txt; echo "on $(ab b)" >> $L/ab.txt; fi
  [ $((SECONDS - T0)) -gt 440 ] && break
done
note "A/B in $((SECONDS - t)) s: columns put_pp_us put_bw_us cg_host_us cg_gpu_nasa2910_allgather_us"
cat $L/ab.txt >> $S
python3 - $L/ab.txt >> $S <<'EOF'
import sys
rows = [l.split() for l in open(sys.argv[1]) if len(l.split()) == 5]
for tag in ("on", "off"):
    v = [[float(x) for x in r[1:]] for r in rows if r[0] == tag]
    if v: print(tag, "best", [min(c) for c in zip(*v)], "n", len(v))
EOF
# two ranks sharing the GPU: pipelined beside the others and the seed's scheme
[ $((SECONDS - T0)) -lt 500 ] && step seed2 80 $K -n 2 b/bin/bench_cg --iters 200 --reps 2 --matrix standin:Pres_Poisson,standin:nd6k --scheme allgather,halo,pipelined --json $L/results/cg_gpu_seed_n2.jsonl
grep -E "^standin" $L/seed2.log | tee -a $S
uptime >> $S; nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv >> $S
tar -C $L -czf $OUT/logs.tgz . && rm -rf $L
note "done at $((SECONDS - T0)) s"
