#!/bin/bash
# interleaved rounds: orig lib (HEAD before the change), new with KY_SEG_ALLOC=shm, new auto; progress thread 0/1;
# then ucx_perftest (sm: UCX-allocated shared memory; cma)
cd /work/wt-ucxalloc
export KY_NODE_SPLIT=rank KY_TRANSPORT=ucx
R=${R:-5}
run() { # tag env...
  tag=$1; shift
  env "$@" timeout 120 build/bin/kyrun -n 2 build/bin/pingpong -b 8 -e 64K -f 8192 -c 0 -n 2000 \
        --json /tmp/ucxalloc/m/pp_${tag}.jsonl >/dev/null 2>&1 || echo "fail pp $tag"
  env "$@" timeout 120 build/bin/kyrun -n 2 build/bin/pingpong -b 64M -e 64M -c 0 -n 10 \
        --json /tmp/ucxalloc/m/pp_${tag}.jsonl >/dev/null 2>&1 || echo "fail pp64M $tag"
}
for r in $(seq 1 $R); do
  for prog in 0 1; do
    run orig_p$prog KY_PROGRESS_THREAD=$prog LD_LIBRARY_PATH=/tmp/ucxalloc/oldlib
    run shm_p$prog KY_PROGRESS_THREAD=$prog KY_SEG_ALLOC=shm
    run auto_p$prog KY_PROGRESS_THREAD=$prog KY_SEG_ALLOC=auto
  done
  timeout 200 python3 bench/ucx_perftest.py --build build --json /tmp/ucxalloc/m/perf_sm.jsonl >/dev/null 2>&1 || echo fail perf
  UCX_TLS=self,cma,tcp timeout 200 python3 bench/ucx_perftest.py --build build --sizes 8,65536 --json /tmp/ucxalloc/m/perf_cma.jsonl >/dev/null 2>&1 || echo fail perfcma
  echo "round $r $(date +%T) load $(cut -d' ' -f1-3 /proc/loadavg)"
done
