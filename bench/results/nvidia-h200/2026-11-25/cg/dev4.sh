#!/bin/bash
# Why ky_cg --mem gpu printed nothing in 14 of 16 A/B runs: run it unpiped, exit codes and stderr kept.
export NCCL_NVLS_ENABLE=0 NVSHMEM_DISABLE_NVLS=1 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 OMPI_ALLOW_RUN_AS_ROOT=1 \
       OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 KY_TIMEOUT=60
root=$PWD; src=/tmp/kycg; mkdir -p $src; tar -xf .scratch/cg/head.tar -C $src; cd $src
echo "dev4 $(date -u +%FT%TZ) commit $(cat $root/.scratch/cg/head.commit)"
cmake -S . -B b -G Ninja -DCMAKE_BUILD_TYPE=Release -DKY_BUILD_TESTS=OFF > $OUT/cfg.log 2>&1
cmake --build b -j16 --target ky_cg > $OUT/build.log 2>&1; echo "build rc $?"
for i in 1 2 3; do
  for s in graph allgather; do
    timeout 60 b/bin/kyrun -n 1 b/bin/ky_cg --matrix standin:nasa2910 --mem gpu --scheme $s --iters 3000 --quiet > $OUT/o_${s}_$i.txt 2> $OUT/e_${s}_$i.txt
    echo "$s $i rc $? out: $(grep -E '^  ' $OUT/o_${s}_$i.txt | cut -c1-60) err: $(tail -c 300 $OUT/e_${s}_$i.txt | tr '\n' ' ')"
  done
done
timeout 60 b/bin/kyrun -n 1 b/bin/ky_cg --matrix standin:nasa2910 --mem gpu --scheme graph --iters 3000 --quiet 2>&1 | cat > $OUT/piped.txt; echo "piped rc ${PIPESTATUS[0]}: $(cat $OUT/piped.txt | tail -c 400 | tr '\n' ' ')"
cd $OUT && tar -czf e.tgz e_* o_* && rm -f e_* o_*
