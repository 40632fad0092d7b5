#!/usr/bin/env bash
# Without OMP_NUM_THREADS an sms.h program's ranks share their host's cores (ky_default_threads): every rank
# the same count, at least 1, ranks x threads no more than the host's cores (or the ranks, where there are
# more ranks than cores). OpenMP's default, every core for every rank, fails this on any host with several
# ranks. With OMP_NUM_THREADS=2 every rank runs exactly 2.
#   sms_threads.sh KYRUN PROGRAM
set -u
kyrun=$1 prog=$2
cores=$(nproc)
for ranks in 2 3; do
    out=$(unset OMP_NUM_THREADS; timeout 120 "$kyrun" -n $ranks "$prog" 2>&1) || { echo "FAIL: $ranks ranks: $out"; exit 1; }
    counts=$(sed -n 's/^rank [0-9]* threads \([0-9]*\) max \([0-9]*\)$/\1 \2/p' <<<"$out" | sort -u)
    n=$(wc -l <<<"$counts")
    read -r team max <<<"$counts"
    limit=$((cores > ranks ? cores : ranks))
    if [ "$n" -ne 1 ] || [ -z "$team" ] || [ "$team" -lt 1 ] || [ $((team * ranks)) -gt "$limit" ] ||
        [ "$max" != "$team" ]; then
        echo "FAIL: $ranks ranks on $cores cores without OMP_NUM_THREADS: '$out' (expected one count, 1..$((limit / ranks)))"
        exit 1
    fi
    out=$(OMP_NUM_THREADS=2 timeout 120 "$kyrun" -n $ranks "$prog" 2>&1) || { echo "FAIL: $ranks ranks x 2: $out"; exit 1; }
    [ "$(grep -c '^rank [0-9]* threads 2 max 2$' <<<"$out")" -eq $ranks ] ||
        { echo "FAIL: OMP_NUM_THREADS=2 on $ranks ranks: '$out'"; exit 1; }
    echo "$ranks ranks on $cores cores: $team threads each by default, 2 with OMP_NUM_THREADS=2"
done
echo "ok"
