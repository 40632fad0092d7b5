#!/bin/sh
# Where the DSM versions of the productivity stencil (apps/productivity: sms.h, MpC, SMint) spend their time
# beside the MPI version, on the machine it runs on: each runs under the settings that change the DSM's costs
# (the default, no snapshots, the shortest guard window, 4x fewer faults while a new allocation is copied),
# with KY_STATS and a KY_TRACE timeline that trace_sum.py sums per rank (time in ky_barrier: waiting for the
# slowest rank; page faults by kind; the steps of rank 0 as the time between barriers: first steps and
# median). About 30 runs of a few seconds each on 4 ranks.
#
#   bench/productivity/dsm_probe.sh [BUILD [RANKS [OUT]]]
#
# BUILD: the build folder (libkyoyu, kyrun; default build); the programs are those productivity.py built there
# (BUILD/productivity: run `apps/productivity/productivity.py --bench --build BUILD` first). RANKS: 4.
# OUT: a folder for the traces and probe.txt (default BUILD/productivity/probe).
set -u
here=$(cd "$(dirname "$0")" && pwd)
build=$(cd "${1:-build}" && pwd) || exit 2
ranks=${2:-4}
out=${3:-$build/productivity/probe}
progs=$build/productivity
if [ ! -x "$progs/sms" ] || [ ! -x "$progs/mpi" ]; then
    echo "dsm_probe: no programs in $progs: run apps/productivity/productivity.py --bench --build $build first" >&2
    exit 2
fi
mkdir -p "$out"
export OMP_NUM_THREADS=1 KY_TIMEOUT=600
for rep in 1 2; do
    for v in mpi sms mpc smint; do
        [ -x "$progs/$v" ] || continue
        for setting in default KY_DSM_SNAPSHOT=0 KY_DSM_SHARED_WINDOW=1 KY_DSM_SNAPSHOT_RUN=32; do
            [ "$v" = mpi ] && [ "$setting" != default ] && continue
            tag=$v.$(echo "$setting" | tr '=' '_').$rep
            set -- env
            [ "$setting" != default ] && set -- env "$setting"
            [ "$v" != mpi ] && set -- "$@" KY_STATS=1 KY_TRACE="$out/$tag.trace.json"
            [ -x /usr/bin/time ] && set -- "$@" /usr/bin/time -f 'TIME %e s real %U s user %S s sys'
            log=$("$@" "$build/bin/kyrun" -n "$ranks" "$progs/$v" 2>&1)
            echo "== $tag: $(echo "$log" | sed -n 's/^checksum .* time \(.*\)$/loop \1 s/p') $(echo "$log" | grep '^TIME' | cut -c6-)"
            echo "$log" | grep 'kyoyu dsm rank 0:' | cut -c1-220
            [ -f "$out/$tag.trace.json" ] && python3 "$here/trace_sum.py" "$out/$tag.trace.json"
        done
    done
done 2>&1 | tee "$out/probe.txt"
