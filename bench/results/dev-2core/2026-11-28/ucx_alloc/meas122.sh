#!/bin/bash
# the same with the libucx-cu13 wheel's UCX 1.22 (run-time LD_LIBRARY_PATH), KY_PROGRESS_THREAD=0 only
cd /work/wt-ucxalloc
L=/tmp/ucxalloc/ucx122/libucx/lib
export KY_NODE_SPLIT=rank KY_TRANSPORT=ucx KY_PROGRESS_THREAD=0
for r in $(seq 1 ${R:-3}); do
  for a in shm auto; do
    timeout 120 build/bin/kyrun -n 2 env LD_LIBRARY_PATH=$L KY_SEG_ALLOC=$a build/bin/pingpong -b 8 -e 64K -f 8192 -c 0 -n 2000 \
      --json /tmp/ucxalloc/m122/pp_${a}_p0.jsonl >/dev/null 2>&1 || echo "fail $a"
    timeout 120 build/bin/kyrun -n 2 env LD_LIBRARY_PATH=$L KY_SEG_ALLOC=$a build/bin/pingpong -b 64M -e 64M -c 0 -n 10 \
      --json /tmp/ucxalloc/m122/pp_${a}_p0.jsonl >/dev/null 2>&1 || echo "fail64 $a"
  done
  LD_LIBRARY_PATH=$L UCX_PERFTEST=/tmp/ucxalloc/ucx122/libucx/bin/ucx_perftest timeout 200 python3 bench/ucx_perftest.py --build build \
      --json /tmp/ucxalloc/m122/perf_sm.jsonl >/dev/null 2>&1 || echo fail perf
  LD_LIBRARY_PATH=$L UCX_PERFTEST=/tmp/ucxalloc/ucx122/libucx/bin/ucx_perftest UCX_TLS=self,cma,tcp timeout 200 python3 bench/ucx_perftest.py --build build \
      --sizes 8,65536 --json /tmp/ucxalloc/m122/perf_cma.jsonl >/dev/null 2>&1 || echo fail perfcma
  echo "round $r $(date +%T) load $(cut -d' ' -f1-3 /proc/loadavg)"
done
