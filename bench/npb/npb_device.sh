#!/usr/bin/env bash
# NPB class A on the GPU machine's CPUs (kycc's goals, docs/performance.md), about 8 minutes on a 16-core host: kycc's
# programs against plain OpenMP on the same host, in one call.
#   1. CG class A on 1, 2, 4, 8, 16 ranks and 8 x 2 (serial, omp, kycc: speed-ups and the ratios);
#   2. SP and BT class A on 16 x 1 and 8 x 2 (omp, kycc);
#   3. SP again with the idle progress threads waking every 5 ms (KY_POLL_SLEEP_MAX_US=5000), with the node
#      barrier on one counter (KY_DSM_NODE_BARRIER=counter), with its orphaned loops shared out
#      (KYCC_SHARE_ORPHANS=1), and the node barrier back to back against MPI_Barrier on 16 and 8 ranks
#      (ky_bench_dsm --node, both algorithms) and libgomp's barrier on 16, 8 and 2 threads
#      (bench/npb/omp_barrier.c, the floor);
#   4. the page transfers per variant with the page protocol (KY_DSM_NODE_SHARED=0), CG and BT class S on 4 ranks.
# One line per run in $OUT/npb.jsonl (bench/npb/npb_bench.py's records), logs and summary.txt beside it.
#
#   bench/npb/npb_device.sh [--only cg,spbt,spquiet,spcounter,spshare,barrier,pages]   (bt or sp alone: one of the two;
#   not in the default: scaleW, SP and BT class W on 1-16 ranks against serial and OpenMP; spaff, SP class A's
#   affinity variant beside none)
#
# Environment: NPB (the fetched NPB3.0-omp-C, default .scratch/npb/NPB3.0-omp-C), BUILD (default build), OUT,
# NPB_ONLY (as --only, for tools/device-run), NPB_CG_REPEAT (CG's runs per configuration, default 5).
set -u
# --help: the comment above, to its last line
case "${1:-}" in -h | --help) sed -n '2,/^[^#]/s/^# \{0,1\}//p' "$0"; exit 0 ;; esac
only=${NPB_ONLY:-cg,spbt,spquiet,spcounter,spshare,barrier,pages}
[ "${1:-}" = "--only" ] && only=${2:-}
root="$(cd -P -- "$(dirname -- "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$root" || exit 1
. bench/device_lib.sh
device_out npb-device
npb="${NPB:-$root/.scratch/npb/NPB3.0-omp-C}"
B="${BUILD:-build}"
J="$out/npb.jsonl"
work="${NPB_WORK:-/tmp/npb-device}" # binaries: not in $out, which comes back
note "npb_device $(date -u +%FT%TZ) $(hostname): $(nproc) cores, commit $(git rev-parse --short HEAD 2>/dev/null)"
: >"$J"
# npb_bench.py writes its --json afresh: each step its own file, appended to $J after the step (what a step
# killed at its limit had finished stays, since the script writes each run's record at once)
nbstep() { # name limit npb_bench-arguments...
    local name=$1 lim=$2
    shift 2
    step "$name" "$lim" python3 bench/npb/npb_bench.py --npb "$npb" --build "$B" --work "$work" \
        --json "$work/$name.jsonl" "$@"
    cat "$work/$name.jsonl" >>"$J" 2>/dev/null
}
mkdir -p "$work"
if want cg; then
    nbstep cg_A 150 --bench cg --class A --ranks 1,2,4,8,16,8x2 --variants none --builds serial,omp,kycc \
        --repeat "${NPB_CG_REPEAT:-5}" # 0.1-0.8 s per run: the fastest of 5 for every build
    grep -E "^(cg|CG)|ratio|kycc|omp" "$out/cg_A.log" | tail -14 | sed 's/^/    /' | tee -a "$S"
fi
if want spbt || want bt; then
    nbstep bt_A 120 --bench bt --class A --ranks 16,8x2 --variants none --builds omp,kycc --timeout 80
    tail -4 "$out/bt_A.log" | sed 's/^/    /' | tee -a "$S"
fi
if want spbt || want sp; then # SP class A: plain OpenMP took 24-28 s on 16 threads; kycc's runs 80 s at most
    nbstep sp_A 200 --bench sp --class A --ranks 16,8x2 --variants none --builds omp,kycc --timeout 80
    tail -4 "$out/sp_A.log" | sed 's/^/    /' | tee -a "$S"
fi
if want spaff; then # SP class A's affinity variant beside none (its y and z lhs loops on their planes' homes:
    # 44% fewer barriers at class S), 16 x 1 and 8 x 2, against the same OpenMP build
    nbstep sp_A_aff 240 --bench sp --class A --ranks 16,8x2 --variants none,affinity --builds omp,kycc --timeout 80
    tail -6 "$out/sp_A_aff.log" | sed 's/^/    /' | tee -a "$S"
fi
if want spquiet; then # the same with idle progress threads waking every 5 ms, not 0.2: do their wake-ups on a full
    # host (16 ranks, 16 cores) delay SP's barriers?
    nbstep sp_A_quiet 120 --bench sp --class A --ranks 16,8x2 --variants none --builds kycc --timeout 80 \
        --kyenv KY_POLL_SLEEP_MAX_US=5000
    tail -3 "$out/sp_A_quiet.log" | sed 's/^/    /' | tee -a "$S"
fi
if want spnoprog; then # no progress thread at all (KY_PROGRESS_THREAD=0): not in the default list, since the DSM
    # refuses to start without one (2026-11-28: both runs "NO" at once)
    nbstep sp_A_noprog 120 --bench sp --class A --ranks 16,8x2 --variants none --builds kycc --timeout 80 \
        --kyenv KY_PROGRESS_THREAD=0
    tail -3 "$out/sp_A_noprog.log" | sed 's/^/    /' | tee -a "$S"
fi
if want spcounter; then # the node barrier on one counter (KY_DSM_NODE_BARRIER=counter): SP's barriers come after
    # uneven work, where the steps after the last arrival count (a counter: 2, dissemination: log2 16 = 4)
    nbstep sp_A_counter 120 --bench sp --class A --ranks 16,8x2 --variants none --builds kycc --timeout 80 \
        --kyenv KY_DSM_NODE_BARRIER=counter
    tail -3 "$out/sp_A_counter.log" | sed 's/^/    /' | tee -a "$S"
fi
if want spshare; then # SP's orphaned txinvr and add shared out over the ranks (KYCC_SHARE_ORPHANS=1, docs/kycc.md):
    # OpenMP runs them on one thread; this is the user's promise that their iterations are independent
    nbstep sp_A_share 120 --bench sp --class A --ranks 16,8x2 --variants none --builds kycc --timeout 80 \
        --kyenv KYCC_SHARE_ORPHANS=1
    tail -3 "$out/sp_A_share.log" | sed 's/^/    /' | tee -a "$S"
fi
if want scaleW; then # speed-ups over the serial build on 1-16 ranks for SP and BT too (class W: class A's serial
    # runs alone would take minutes); not in the default list: a call of its own, NPB_ONLY=scaleW
    for b in bt sp; do
        nbstep ${b}_W_scale 200 --bench $b --class W --ranks 1,2,4,8,16,8x2 --variants none \
            --builds serial,omp,kycc --timeout 60
        tail -14 "$out/${b}_W_scale.log" | sed 's/^/    /' | tee -a "$S"
    done
fi
if want barrier; then # what one node barrier costs back to back (SP: 9.7 million per rank), beside MPI_Barrier
    for n in 16 8; do
        step barrier_n$n 60 "$B/bin/kyrun" -n $n "$B/bin/ky_bench_dsm" --node -n 1000 --json "$out/barrier.jsonl"
        grep -E "^ +0 B" "$out/barrier_n$n.log" | sed "s/^/    $n ranks: /" | tee -a "$S"
        step barrier_counter_n$n 60 env KY_DSM_NODE_BARRIER=counter "$B/bin/kyrun" -n $n "$B/bin/ky_bench_dsm" \
            --node -n 1000 --json "$out/barrier_counter.jsonl"
        grep -E "^ +0 B" "$out/barrier_counter_n$n.log" | sed "s/^/    $n ranks, counter: /" | tee -a "$S"
    done
    # the floor: libgomp's own barrier on as many threads (SP's OpenMP build passes the same count)
    if cc -O2 -fopenmp bench/npb/omp_barrier.c -o "$work/omp_barrier"; then
        for n in 16 8 2; do
            step omp_barrier_t$n 30 env OMP_NUM_THREADS=$n "$work/omp_barrier" 200000
            grep omp_barrier: "$out/omp_barrier_t$n.log" | sed 's/^/    /' | tee -a "$S"
        done
    fi
fi
if want pages; then # the page protocol (several nodes' behaviour on one host): slow, last
    for b in cg bt; do
        nbstep ${b}_S_pages 45 --bench $b --class S --ranks 4 --variants none,mapping,affinity,update \
            --builds kycc --kyenv KY_DSM_NODE_SHARED=0
        tail -5 "$out/${b}_S_pages.log" | sed 's/^/    /' | tee -a "$S"
    done
fi
note "done in $SECONDS s"
