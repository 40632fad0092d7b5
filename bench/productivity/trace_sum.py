#!/usr/bin/env python3
"""Sum a KY_TRACE timeline of a DSM program per rank (bench/productivity/dsm_probe.sh): time and count of
ky_barrier (its span is mostly the wait for the slowest rank) and of page faults by kind, and rank 0's steps
as the time from one barrier's end to the next one's end (the first 4 and the median).

    trace_sum.py trace.json"""
import collections
import json
import sys


def main(path):
    d = json.load(open(path))
    ev = [e for e in (d["traceEvents"] if isinstance(d, dict) else d) if e.get("ph") == "X"]
    agg = collections.defaultdict(lambda: [0, 0.0])
    for e in ev:
        agg[(e["pid"], e["name"])][0] += 1
        agg[(e["pid"], e["name"])][1] += e.get("dur", 0.0)
    for rank in sorted({p for p, _ in agg}):
        parts = ["%s %d x %.1f ms" % (n, c, t / 1e3) for (p, n), (c, t) in sorted(agg.items())
                 if p == rank and n in ("ky_barrier", "ky_sync", "page fault (read)", "page fault (write)",
                                        "ky_preload_array")]
        print("  rank %d: %s" % (rank, "; ".join(parts)))
    ends = sorted(e["ts"] + e.get("dur", 0.0) for e in ev if e["pid"] == 0 and e["name"] == "ky_barrier")
    steps = [(b - a) / 1e3 for a, b in zip(ends, ends[1:])]
    if steps:
        med = sorted(steps)[len(steps) // 2]
        print("  rank 0 steps (barrier to barrier): first %s ms, median %.2f ms, %d steps" % (
            " ".join("%.1f" % s for s in steps[:4]), med, len(steps)))


if __name__ == "__main__":
    main(sys.argv[1])
