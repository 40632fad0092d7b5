#!/usr/bin/env bash
# Orphaned loops met in the serial part run on rank 0 alone where kycc finds them safe (kycc_rt.h,
# "Orphaned loops outside a region"): tests/kycc/orphans.c on 3 ranks must print what gcc's build prints,
# count exactly its 12 such loops on every rank (KYCC_STATS=1; the others stay on every rank: a call of
# rand, a store through a pointer, a local's address, lastprivate, reduction, a loop storing only locals),
# and print the same again with the path off (KYCC_ONE_RANK_LOOPS=0, no loop counted) and with those loops
# shared out over the ranks (KYCC_SHARE_ORPHANS=1: orphans.c's loops are independent, and the locals come from
# the rank of the last iteration); and under the page protocol (KY_DSM_NODE_SHARED=0), where no loop may run
# once (no parallel phase there) and every rank runs them as before.
#   orphans.sh KYCC KYRUN WORKDIR orphans.c
# Exit 77 (skipped) when libclang's Python bindings are missing.
set -u
kycc=$1 kyrun=$2 work=$3 src=$4
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh" && kycc_need_libclang
mkdir -p "$work" && cd "$work" || exit 1
gcc -O2 -fopenmp "$src" -o orphans.gcc -lm || { echo "FAIL: gcc could not build $src"; exit 1; }
"$kycc" -O2 -fopenmp "$src" -o orphans || { echo "FAIL: kycc could not build $src"; exit 1; }
OMP_NUM_THREADS=1 ./orphans.gcc > expected.txt || { echo "FAIL: the gcc build failed"; exit 1; }
for mode in on off share pages; do
    want=12
    [ $mode = off ] || [ $mode = pages ] && want=0
    OMP_NUM_THREADS=1 KYCC_STATS=1 KYCC_ONE_RANK_LOOPS=$([ $mode = off ] && echo 0 || echo 1) \
        KYCC_SHARE_ORPHANS=$([ $mode = share ] && echo 1 || echo 0) \
        KY_DSM_NODE_SHARED=$([ $mode = pages ] && echo 0 || echo 1) \
        timeout 240 "$kyrun" -n 3 ./orphans > $mode.txt 2> $mode.err || { echo "FAIL: run ($mode)"; cat $mode.txt $mode.err; exit 1; }
    diff -u expected.txt $mode.txt || { echo "FAIL: the output differs from gcc's ($mode)"; exit 1; }
    for r in 0 1 2; do
        grep -q "^kycc rank $r: .*| orphaned loops run once $want |" $mode.err ||
            { echo "FAIL: rank $r did not count $want orphaned loops run once ($mode):"; cat $mode.err; exit 1; }
    done
done
grep "^kycc rank" on.err off.err share.err pages.err
echo "ok"
