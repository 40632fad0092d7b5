#!/bin/bash
# Third call (issue 15): HEAD's GPU sparse tests, seed sizes with every scheme (pipelined restarts), one NPB C round.
export NCCL_NVLS_ENABLE=0 NVSHMEM_DISABLE_NVLS=1 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 OMPI_ALLOW_RUN_AS_ROOT=1 \
       OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 KY_TIMEOUT=120
root=$PWD; src=/tmp/kycg; mkdir -p $src; tar -xf .scratch/cg/head.tar -C $src; cd $src
L=$OUT/logs; mkdir -p $L $L/results
S=$OUT/summary.txt
T0=$SECONDS
note() { echo "$*" | tee -a $S; }
step() { local name=$1 lim=$2 t=$SECONDS; shift 2; timeout --kill-after=5 $lim "$@" > $L/$name.log 2>&1; note "step $name: exit $? in $((SECONDS - t)) s (at $((SECONDS - T0)) s)"; }
note "dev3 $(date -u +%FT%TZ) $(nvidia-smi -L | head -1) commit $(cat $root/.scratch/cg/head.commit)"
cmake -S . -B b -G Ninja -DCMAKE_BUILD_TYPE=Release -DKY_GTEST_SOURCE=$root/.scratch/googletest > $L/cfg.log 2>&1
step build 300 cmake --build b -j16 --target kyoyu ky_cg bench_cg test_sparse -- -k 0
K=$PWD/b/bin/kyrun
step tests 200 ctest --test-dir b -R '^gpu\.sparse' -j 3 --output-on-failure
grep -E 'tests passed|Failed|\*\*\*|Passed' $L/tests.log | tee -a $S
step seed1 120 $K -n 1 b/bin/bench_cg --iters 1000 --reps 3 --json $L/results/cg_gpu.jsonl
grep -E "^standin" $L/seed1.log | tee -a $S
step seed2 90 $K -n 2 b/bin/bench_cg --iters 200 --reps 2 --matrix standin:Pres_Poisson,standin:nd6k --scheme allgather,halo,pipelined --json $L/results/cg_gpu_seed_n2.jsonl
grep -E "^standin" $L/seed2.log | tee -a $S
step npbC 90 $K -n 1 b/bin/ky_cg --matrix npb:C --mem gpu --scheme graph,allgather,pipelined --json $L/results/ky_cg_npbC.json
grep -E "npb C" $L/npbC.log | tee -a $S
step npbgpuC 60 $root/.scratch/npb-gpu/CUDA/bin/cg.C
grep -E 'Time in seconds|Mop/s total|Verification' $L/npbgpuC.log | tee -a $S
tar -C $L -czf $OUT/logs.tgz . && rm -rf $L
note "done at $((SECONDS - T0)) s"
