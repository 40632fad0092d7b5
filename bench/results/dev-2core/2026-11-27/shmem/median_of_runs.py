#!/usr/bin/env python3
"""Medians over several `kybench run shmem` runs (each already the best of its alternating rounds).

    median_of_runs.py RUN1.jsonl RUN2.jsonl ... [--md]

For every (path, op, bytes): the median over the runs of the shmem.h, ky_put/ky_get and OSHMEM times, and
the median of each run's ratios (shmem.h / ky_*, shmem.h / OSHMEM); then, per path, how many points miss each
goal (ratio > 1.1 against ky_*, > 1 against OSHMEM) by the median ratio and in how many runs. --md prints the
table as Markdown."""
import json
import statistics
import sys
from collections import defaultdict


def main():
    md = "--md" in sys.argv
    files = [a for a in sys.argv[1:] if a != "--md"]
    pts = defaultdict(list)
    for f in files:
        with open(f) as fh:
            for line in fh:
                if line.strip():
                    r = json.loads(line)
                    pts[(r["path"], r["op"], r["bytes"])].append(r)
    med = statistics.median
    rows = []
    for (path, op, nbytes), recs in sorted(pts.items()):
        g = lambda k: [r[k] for r in recs if isinstance(r.get(k), (int, float))]
        row = {"path": path, "op": op, "bytes": nbytes, "runs": len(recs),
               "shmem": med(g("lat_us")), "ky": med(g("ky_lat_us")) if g("ky_lat_us") else None,
               "osh": med(g("oshmem_lat_us")) if g("oshmem_lat_us") else None,
               "r_ky": med(g("ratio")) if g("ratio") else None,
               "r_osh": med(g("ratio_oshmem")) if g("ratio_oshmem") else None,
               "ky_miss": sum(1 for v in g("ratio") if v > 1.1),
               "osh_miss": sum(1 for v in g("ratio_oshmem") if v > 1.0)}
        row["bw"] = nbytes * (64 if op.endswith("_bw") else 1) / row["shmem"] * 1e-3
        rows.append(row)
    f = lambda v, p=3: "-" if v is None else f"{v:.{p}f}"
    if md:
        print("| path | op | bytes | shmem.h µs | ky_put/ky_get µs | OSHMEM µs | shmem.h / ky | shmem.h / OSHMEM "
              "| runs over 1.1 / over 1 |")
        print("|---|---|---:|---:|---:|---:|---:|---:|---:|")
        for r in rows:
            print(f"| {r['path']} | {r['op']} | {r['bytes']} | {f(r['shmem'])} | {f(r['ky'])} | {f(r['osh'])} | "
                  f"{f(r['r_ky'], 2)} | {f(r['r_osh'], 2)} | {r['ky_miss']} / "
                  f"{r['osh_miss'] if r['osh'] is not None else '-'} |")
    else:
        print(f"{'path':<4} {'op':<8} {'bytes':>8} {'shmem.h':>10} {'ky_*':>10} {'OSHMEM':>10} {'sh/ky':>6} "
              f"{'sh/OSH':>6} {'>1.1':>4} {'>1':>3}  (medians of {len(files)} runs, us)")
        for r in rows:
            print(f"{r['path']:<4} {r['op']:<8} {r['bytes']:>8} {f(r['shmem']):>10} {f(r['ky']):>10} "
                  f"{f(r['osh']):>10} {f(r['r_ky'], 3):>6} {f(r['r_osh'], 3):>6} {r['ky_miss']:>4} "
                  f"{r['osh_miss'] if r['osh'] is not None else '-':>3}")
    for path in sorted({r["path"] for r in rows}):
        rr = [r for r in rows if r["path"] == path]
        ky = [r["r_ky"] for r in rr if r["r_ky"] is not None]
        osh = [r["r_osh"] for r in rr if r["r_osh"] is not None]
        line = f"{path}: {len(rr)} points; shmem.h/ky_* median {med(ky):.3f}, max {max(ky):.3f}, over 1.1 at " \
               f"{sum(1 for v in ky if v > 1.1)}"
        if osh:
            line += f"; shmem.h/OSHMEM median {med(osh):.3f}, max {max(osh):.3f}, over 1 at " \
                    f"{sum(1 for v in osh if v > 1.0)}: " + ", ".join(
                        f"{r['op']} {r['bytes']} {r['r_osh']:.2f}" for r in rr
                        if r["r_osh"] is not None and r["r_osh"] > 1.0)
        print(("\n" if path == sorted({r['path'] for r in rows})[0] else "") + line)


if __name__ == "__main__":
    main()
