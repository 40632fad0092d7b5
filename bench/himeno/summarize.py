#!/usr/bin/env python3
"""Himeno results as Markdown tables (docs/performance.md, "Himeno"): ky_himeno's records (bench "himeno",
variants ky and mpi, written by `kybench run himeno`) and the third-party baselines' (himeno_ext.jsonl from
bench/himeno/baselines.sh) of one results folder.

    bench/himeno/summarize.py bench/results/nvidia-h200/2026-11-25/himeno

Ratios are baseline time / Kyoyu time per iteration (> 1: Kyoyu faster)."""
import glob
import json
import os
import sys


def load(folder):
    recs = []
    for f in sorted(glob.glob(os.path.join(folder, "*.jsonl"))):
        for line in open(f, encoding="utf-8"):
            if line.strip():
                r = json.loads(line)
                r["_file"] = os.path.basename(f)
                recs.append(r)
    return recs


def per_it(r, phase):
    return 1e3 * r["phases"][phase] / r["iters"]


def main(folder):
    recs = load(folder)
    ky = [r for r in recs if r.get("variant") == "ky"]
    mpi = {(r["_file"], r["ranks"]): r for r in recs if r.get("variant") == "mpi"}
    ext = {}
    for r in recs:
        if r.get("version") == "external":
            ext[(r["variant"], r["size"])] = r   # the latest run of each
    print("| case | ranks | mem | kernel, chain, sweep | ms/iter | GFLOP/s | kernel ms | halo ms | reduce ms | "
          "kernel % roofline | iteration % roofline | vs MPI(+CUDA) | halo vs MPI | vs gpu-himeno | "
          "vs cuda_himenoBMT (slack) | vs original C+MPI |")
    print("|---" * 16 + "|")
    for r in ky:
        m = mpi.get((r["_file"], r["ranks"]))
        one = r["mem"] == "gpu" and r["ranks"] == 1
        g = ext.get(("gpu-himeno", r["size"])) if one else None
        n = ext.get(("cuda_himenoBMT_pad", r["size"])) if one else None
        o = ext.get(("orig_mpi", r["size"])) if r["mem"] == "host" else None
        it = r["ms_per_iter"]
        shape = ", ".join(x for x in (r.get("block"), r.get("chain"), r.get("sweep")) if x) or "-"
        cells = [r["_file"].replace(".jsonl", "") + (" (" + r["gosa_by"] + ")" if r["gosa_by"] != "am" else ""),
                 str(r["ranks"]), r["mem"] + (" split" if r.get("path") == "split" else ""), shape, f"{it:.3f}",
                 f"{r['mflops'] / 1e3:.0f}", f"{per_it(r, 'kernel'):.3f}", f"{per_it(r, 'halo'):.3f}",
                 f"{per_it(r, 'reduce'):.3f}",
                 f"{r['kernel_roofline_pct']:.0f}%" if "kernel_roofline_pct" in r else "-",
                 f"{r['roofline_pct']:.0f}%" if "roofline_pct" in r else "-",
                 f"{m['ms_per_iter'] / it:.2f}x" if m else "-",
                 f"{per_it(r, 'halo') / per_it(m, 'halo'):.2f}x" if m and per_it(m, "halo") > 0 else "-",
                 f"{g['ms_per_iter'] / it:.2f}x" if g else "-",
                 f"{n['ms_per_iter'] / it:.2f}x" if n else "-",
                 f"{o['ms_per_iter'] / it:.2f}x" if o else "-"]
        print("| " + " | ".join(cells) + " |")
    print()
    print("| third-party baseline | size | ranks | iterations | ms/iter | GFLOP/s | gosa | source |")
    print("|---" * 8 + "|")
    for (name, size), r in sorted(ext.items()):
        print(f"| {name} | {size} | {r['ranks']} | {r['iters']} | {r['ms_per_iter']:.3f} | {r['mflops'] / 1e3:.0f} | "
              f"{r['gosa']} | {r.get('origin', '')} |")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else ".")
