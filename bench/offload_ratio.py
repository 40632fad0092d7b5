#!/usr/bin/env python3
"""The directives-against-CUDA table of docs/offload.md from one GPU call's JSON lines.

    bench/offload_ratio.py OFFLOAD_BENCH_JSONL CUDA_JSONL

OFFLOAD_BENCH_JSONL: tools/offload-check --bench's bench.jsonl (examples/offload/offload_bench.c, a line per
compiler, back end, kernel and loop shape); CUDA_JSONL: ky_stencil_gpu's and ky_himeno's records at the same
sizes. Prints ms per step (Himeno: per iteration) of each, the CUDA kernel's, and the ratio CUDA / directives
(the issue's goal: >= 0.7 for the best back end), best shape per back end marked; standard library only."""
import json
import sys


def lines(path):
    try:
        with open(path) as f:
            for ln in f:
                ln = ln.strip()
                if ln.startswith("{"):
                    try:
                        yield json.loads(ln)
                    except ValueError:
                        pass
    except OSError as e:
        print(f"offload_ratio: {e}")


def main(argv):
    if len(argv) != 3:
        print(__doc__)
        return 2
    cuda = {}
    for r in lines(argv[2]):
        if r.get("bench") == "stencil_gpu" and r.get("variant") == "kyoyu":
            cuda[f"stencil{r['pts']}"] = r["step_ms"]
        elif r.get("bench") == "himeno" and r.get("mem") == "gpu":
            cuda["himeno"] = r["ms_per_iter"]
    rows = [r for r in lines(argv[1]) if "seconds_per_step" in r]
    best = {}
    for r in rows:
        key = (r.get("compiler", "?"), r["backend"], r["kernel"])
        if key not in best or r["seconds_per_step"] < best[key]:
            best[key] = r["seconds_per_step"]
    print(f"{'compiler':12s} {'back end':22s} {'kernel':9s} {'shape':6s} {'ms/step':>9s} {'CUDA ms':>8s} "
          f"{'ratio':>6s}")
    for r in sorted(rows, key=lambda r: (r["kernel"], r["backend"], r.get("compiler", ""), r["seconds_per_step"])):
        ms = 1e3 * r["seconds_per_step"]
        c = cuda.get(r["kernel"])
        ratio = f"{c / ms:6.2f}" if c and ms > 0 else "   n/a"
        key = (r.get("compiler", "?"), r["backend"], r["kernel"])
        mark = "  <- best of " + r["backend"] if r["seconds_per_step"] == best[key] else ""
        print(f"{r.get('compiler', '?'):12s} {r['backend']:22s} {r['kernel']:9s} {r['shape']:6s} {ms:9.3f} "
              f"{(f'{c:8.3f}' if c else '     n/a')} {ratio}{mark}")
    if not rows:
        print("offload_ratio: no offload_bench records")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
