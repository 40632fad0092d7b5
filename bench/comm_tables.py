#!/usr/bin/env python3
"""Markdown tables of the comm benchmarks (pingpong, halo) from one results folder of bench/run_all.sh.

    python3 bench/comm_tables.py bench/results/nvidia-h200-x4/2026-11-22

Prints the ping-pong table (selected sizes) and the halo table that docs/performance.md carries, so the
document is regenerated from the JSON lines instead of copied by hand. (The kybench harness of a later
issue will subsume this.)"""
import glob
import json
import os
import sys

SIZES = [8, 65536, 1 << 20, 64 << 20, 256 << 20]
NS = [32, 64, 128, 256, 512]


def load(folder):
    recs = []
    for f in sorted(glob.glob(os.path.join(folder, "*.jsonl"))):
        with open(f) as fh:
            recs += [json.loads(line) for line in fh if line.strip()]
    return recs


def cell_pp(r):
    # latency for small messages, bandwidth from 64 MiB on
    return f"{r['bw_GBs']:.1f} GB/s" if r["bytes"] >= (64 << 20) else f"{r['lat_us']:.2f} µs"


def pingpong(recs):
    rows = {}
    for r in recs:
        if r["bench"] == "pingpong" and r["bytes"] in SIZES:
            rows.setdefault(r["case"], {})[r["bytes"]] = r
    out = ["| case | 8 B | 64 KiB | 1 MiB | 64 MiB | 256 MiB | baseline at 64 MiB | ratio at 8 B | ratio at 64 MiB |",
           "|---|---|---|---|---|---|---|---|---|"]
    for case in sorted(rows):
        by = rows[case]
        if not all(s in by for s in SIZES):
            continue
        b = by[64 << 20]
        out.append(f"| {case} | " + " | ".join(cell_pp(by[s]) for s in SIZES) +
                   f" | {b['baseline']} {b['base_bw_GBs']:.1f} GB/s | {by[8]['ratio']:.2f} | {b['ratio']:.2f} |")
    return "\n".join(out)


def halo(recs):
    rows = {}
    for r in recs:
        if r["bench"] == "halo":
            rows.setdefault(r["case"], {})[r["N"]] = r
    out = ["| case | N=32 | N=64 | N=128 | N=256 | N=512 | baseline at 256 | ratio at 256 |",
           "|---|---|---|---|---|---|---|---|"]
    for case in sorted(rows):
        by = rows[case]
        cells = [f"{by[n]['lat_us']:.1f}" if n in by else "-" for n in NS]
        b = by.get(256)
        tail = f" | {b['baseline']} {b['base_lat_us']:.1f} | {b['ratio']:.1f} |" if b else " | - | - |"
        out.append(f"| {case} | " + " | ".join(cells) + tail)
    return "\n".join(out)


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    recs = load(sys.argv[1])
    if not recs:
        sys.exit(f"comm_tables: no *.jsonl in {sys.argv[1]}")
    print("### Ping-pong and bandwidth (one-way µs below 64 MiB, GB/s from 64 MiB)\n")
    print(pingpong(recs))
    print("\n### Halo faces, µs per exchange\n")
    print(halo(recs))


if __name__ == "__main__":
    main()
