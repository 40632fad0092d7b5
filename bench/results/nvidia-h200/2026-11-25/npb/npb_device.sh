#!/bin/bash
# Issue 17 on the GPU machine's 16-core host: NPB on kycc against plain OpenMP and serial (kybench run npb).
# Carried: .scratch/k17 (head.tar: the commit; npb: NPB3.0-omp-C; this script) and .whl (libclang for kycc).
# STEPS names what runs; every step's kybench output goes to $OUT/res, packed into $OUT/npb_res.tgz at the end.
export NCCL_NVLS_ENABLE=0 NVSHMEM_DISABLE_NVLS=1 TORCH_SYMM_MEM_DISABLE_MULTICAST=1
export PYTHONUNBUFFERED=1 KY_BENCH_MACHINE=nvidia-h200
root=$PWD; t0=$SECONDS; S=$OUT/summary.txt; LIMIT=${LIMIT:-560}
note() { echo "[$((SECONDS-t0)) s] $*" | tee -a $S; }
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site .whl/libclang-*.whl && export PYTHONPATH=/tmp/site
mkdir -p /tmp/src && tar -xf .scratch/k17/head.tar -C /tmp/src && cd /tmp/src
mkdir -p .scratch && cp -r $root/.scratch/k17/npb .scratch/npb
note "host $(hostname) cores $(nproc) $(lscpu | grep 'Model name' | sed 's/  */ /g') mpicc $(which mpicc) $(mpirun --version 2>&1 | head -1)"
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DKY_ENABLE_CUDA=OFF -DKY_BUILD_TESTS=OFF -DKY_BUILD_BENCH=OFF \
      -DKY_BUILD_EXAMPLES=OFF -DKY_BUILD_APPS=OFF > $OUT/cfg.log 2>&1
cmake --build build -j16 --target kyoyu > $OUT/build.log 2>&1; note "build rc $? $(ls build/bin)"
R=$OUT/res; mkdir -p $R
step() { # name, program, npb_bench flags, seconds
    left=$((LIMIT - (SECONDS - t0)))
    if [ $left -lt 30 ]; then note "skip $1: $left s left"; return; fi
    lim=$(( $4 < left ? $4 : left ))
    note "start $1 (limit $lim s): $3"
    BENCH_NPB_BENCH_ARGS="$3 --work /tmp/w-$1" timeout $((lim + 20)) tools/kybench run npb --case npb_$2 --out $R/$1 \
        --timeout $lim > $R/$1.out 2>&1
    note "end $1 rc $?"; sed -n '/^NPB/,/^===/p' $R/$1/npb.log >> $S
}
for s in ${STEPS:-cg goalbt goalsp}; do
    case $s in
    cg) step cg cg "--class A --ranks 1,2,4,8,16,8x2 --variants none --timeout 60" 150 ;;
    goalbt) step goalbt bt "--class A --ranks 16,8x2 --variants affinity --builds omp,kycc --omp-threads 16 --timeout 75" 230 ;;
    goalsp) step goalsp sp "--class A --ranks 16,8x2 --variants affinity --builds omp,kycc --omp-threads 16 --timeout 75" 230 ;;
    cgknob)
        step cgk0 cg "--class A --ranks 16,8x2 --variants none --builds omp,kycc --omp-threads 16 --timeout 30 --log $R/cgk0.log" 90
        step cgk1 cg "--class A --ranks 16,8x2 --variants none --builds kycc --timeout 30 --kyenv KY_POLL_SLEEP_MAX_US=10 --log $R/cgk1.log" 70
        step cgk2 cg "--class A --ranks 16,8x2 --variants none --builds kycc --timeout 30 --kyenv KY_POLL_YIELD_US=100000000 --log $R/cgk2.log" 70
        step cgk3 cg "--class A --ranks 16,8x2 --variants none --builds kycc --timeout 30 --kyenv KY_PROGRESS_SPIN_US=100000000 --log $R/cgk3.log" 70 ;;
    bt16) step bt16 bt "--class A --ranks 16 --variants affinity --builds kycc --timeout 60 --log $R/bt16.log" 90 ;;
    spS) step spS sp "--class S --ranks 2,4,8,16 --variants none,mapping,affinity,update --builds serial,kycc --timeout 25 --log $R/spS.log" 200 ;;
    btS) step btS bt "--class S --ranks 2,4,8,16 --variants none,mapping,affinity,update --builds serial,kycc --timeout 25 --log $R/btS.log" 200 ;;
    spw) step spw sp "--class W --ranks 1,2,4,8,16 --variants none,mapping,affinity,update --timeout 30" 300 ;;
    btw) step btw bt "--class W --ranks 1,2,4,8,16 --variants none,mapping,affinity,update --timeout 30" 300 ;;
    esac
done
cd $OUT && tar -czf npb_res.tgz res && rm -rf res; note "done"
