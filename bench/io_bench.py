#!/usr/bin/env python3
"""`kybench run io`: seed 002's N-body snapshot through Kyoyu's io paths against the baselines, one table.

Runs BUILD/bin/ky_bench_io (bench/io_bench.c: Kyoyu's bounce, cufile and auto paths, plain HDF5 after
cudaMemcpy, the disk's raw O_DIRECT bandwidth, the copies alone) through kyrun, then bench/io_h5py.py (h5py
from numpy; its time plus ky_bench_io's copy time is "h5py after a device-to-host copy"; skipped with a
message where h5py is missing: then plain HDF5 is the baseline that counts). Writes the JSON lines of both to
--json (records "io", docs/benchmarks.md) with the ratios added, and prints the merged table and the issue's
goals (auto >= the better fixed path at every N; at N >= 1e7 auto >= 1.5x h5py and >= 80% of the raw write
bandwidth).

    io_bench.py --build BUILD --json FILE [--case NAME] [--nmin 1e3] [--nmax 1e8] [--reps 3] [--quick]
                [--dir DIR] [--mem gpu|host] [--ranks 1] [--python PY] [--budget SECONDS]"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def launcher(build, ranks, gpu):
    kyrun = os.path.join(build, "bin", "kyrun")
    if os.access(kyrun, os.X_OK):
        return [kyrun, "-n", str(ranks)] + (["--gpus-per-rank", "1"] if gpu else [])
    return ["mpirun", "-n", str(ranks), "--allow-run-as-root", "--oversubscribe"]


def h5py_python(explicit):
    """A python3 with h5py and numpy: --python, this one, or /usr/bin/python3 (Debian's python3-h5py)."""
    for py in [explicit, sys.executable, "/usr/bin/python3", shutil.which("python3")]:
        if py and os.access(py, os.X_OK):
            r = subprocess.run([py, "-c", "import h5py, numpy"], capture_output=True)
            if r.returncode == 0:
                return py
    return None


def gbs(b, t):
    return b / t / 1e9 if t and t > 0 else 0.0


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", required=True)
    ap.add_argument("--json", required=True)
    ap.add_argument("--case", default="io_nbody")
    ap.add_argument("--nmin", default="1e3")
    ap.add_argument("--nmax", default="1e8")
    ap.add_argument("--reps", default="3")
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--dir", default=os.environ.get("KY_BENCH_IO_DIR", "/tmp"))
    ap.add_argument("--mem", default="gpu", choices=["gpu", "host"])
    ap.add_argument("--ranks", type=int, default=1)
    ap.add_argument("--python", help="python3 with h5py for the h5py baseline")
    ap.add_argument("--budget", type=float, default=0, help="seconds for the whole run (0: no limit): ky_bench_io "
                    "gets three quarters and stops before an N that would pass them, h5py the rest")
    a = ap.parse_args()
    if a.quick:
        a.nmin, a.nmax, a.reps = "1e3", "1e4", "1"
    prog = os.path.join(a.build, "bin", "ky_bench_io")
    if not os.access(prog, os.X_OK):
        print(f"io_bench.py: {prog} not built (needs parallel HDF5: the io layer)")
        return 1
    tmp = tempfile.NamedTemporaryFile(prefix="ky_bench_io_", suffix=".jsonl", delete=False).name
    cmd = (launcher(a.build, a.ranks, a.mem == "gpu") + [prog, "--dir", a.dir, "--nmin", a.nmin, "--nmax", a.nmax,
                                                          "--reps", a.reps, "--mem", a.mem, "--json", tmp])
    if a.budget > 0:
        cmd += ["--budget", str(0.75 * a.budget)]
    t0 = time.monotonic()
    print("io_bench.py: " + " ".join(cmd), flush=True)
    rc = subprocess.run(cmd).returncode
    if rc != 0:
        os.unlink(tmp)
        return rc  # 77: no GPU, the case is skipped
    recs = [json.loads(l) for l in open(tmp) if l.strip()]
    os.unlink(tmp)

    # h5py after a device-to-host copy: its time plus the copies alone
    ns = sorted({r["N"] for r in recs})
    h5 = {}
    py = h5py_python(a.python)
    if a.ranks != 1:
        print("io_bench.py: h5py baseline only with 1 rank: skipped")
    elif not py:
        print("io_bench.py: no python3 with h5py and numpy here: the h5py baseline is skipped "
              "(plain HDF5 after cudaMemcpy is the baseline that counts)")
    else:
        left = a.budget - (time.monotonic() - t0) if a.budget > 0 else None
        try:
            out = subprocess.run([py, os.path.join(HERE, "io_h5py.py"), "--dir", a.dir, "--n",
                                  ",".join(str(n) for n in ns), "--reps", a.reps], capture_output=True, text=True,
                                 timeout=max(left, 10) if left is not None else None)
            text, rc, err = out.stdout, out.returncode, out.stderr
        except subprocess.TimeoutExpired as e:  # the sizes it finished count
            text = e.stdout.decode() if isinstance(e.stdout, bytes) else (e.stdout or "")
            rc, err = 124, "stopped at the --budget"
        if rc != 0:
            print(f"io_bench.py: io_h5py.py exit {rc}: {err.strip()[-300:]}")
        for line in text.splitlines():
            if line.startswith("{"):
                x = json.loads(line)
                h5[x["N"]] = x
    by = {(r["impl"], r["dir"], r["N"]): r for r in recs}
    for n, x in h5.items():
        for d, key in (("write", "write_s"), ("read", "read_s")):
            cp = by.get(("copy", d, n))
            base = by.get(("raw", d, n))
            t = x[key] + (cp["time_s"] if cp else 0.0)
            b = 36 * n
            r = dict(by.get(("hdf5", d, n), {}), impl="h5py", case=f"nbody_h5py_{d}", time_s=t, bw_GBs=gbs(b, t),
                     verified=x["verified"], copy_s=cp["time_s"] if cp else 0.0)
            for k in ("baseline", "base_time_s", "ratio"):
                r.pop(k, None)
            if base:
                r["floor_GBs"] = base["bw_GBs"]
                r["raw_frac"] = r["bw_GBs"] / base["bw_GBs"] if base["bw_GBs"] else 0
            if "bench" not in r:
                continue
            recs.append(r)
            by[("h5py", d, n)] = r
    # ratios: against h5py, and auto against the better fixed path
    for r in recs:
        if r["impl"] in ("bounce", "cufile", "auto"):
            h = by.get(("h5py", r["dir"], r["N"]))
            if h:
                r["h5py_time_s"] = h["time_s"]
                r["h5py_ratio"] = h["time_s"] / r["time_s"]
        if r["impl"] == "auto":
            fixed = [by[(p, r["dir"], r["N"])]["time_s"] for p in ("bounce", "cufile") if (p, r["dir"], r["N"]) in by]
            if fixed:
                r["best_fixed_ratio"] = min(fixed) / r["time_s"]
    with open(a.json, "a") as f:
        for r in recs:
            f.write(json.dumps(r) + "\n")

    impls = ["raw", "hdf5", "h5py", "bounce", "cufile", "auto"]
    head = f"{'N':>11} {'MB':>8} |" + "".join(f" {i[:6]:>6}W {i[:6]:>6}R |" for i in impls)
    print("\nio_bench.py: GB/s (write: create to file on disk; read: from disk), "
          f"fs {recs[0].get('fs', '?') if recs else '?'}, {a.mem} memory")
    print(head + "  auto/h5py W R | auto/raw W R | auto/best W R")
    for n in ns:
        row = f"{n:>11} {36 * n / 1e6:>8.1f} |"
        for i in impls:
            for d in ("write", "read"):
                r = by.get((i, d, n))
                row += f" {r['bw_GBs']:>7.2f}" if r else f" {'-':>7}"
            row += " |"
        w, rd = by.get(("auto", "write", n)), by.get(("auto", "read", n))

        def rat(r, k):
            return f"{r[k]:5.2f}" if r and k in r else "    -"
        row += (f"  {rat(w, 'h5py_ratio')} {rat(rd, 'h5py_ratio')} | {rat(w, 'raw_frac')} {rat(rd, 'raw_frac')} | "
                f"{rat(w, 'best_fixed_ratio')} {rat(rd, 'best_fixed_ratio')}")
        print(row)
    # the goals
    print("\ngoals (issue: one H200):")
    for n in ns:
        for d in ("write", "read"):
            r = by.get(("auto", d, n))
            if not r:
                continue
            g = [f"auto >= better fixed path: {'yes' if r.get('best_fixed_ratio', 0) >= 0.95 else 'NO'} "
                 f"({r.get('best_fixed_ratio', 0):.2f}x)"]
            if n >= 10**7:
                if "h5py_ratio" in r:
                    g.append(f">= 1.5x h5py: {'yes' if r['h5py_ratio'] >= 1.5 else 'NO'} ({r['h5py_ratio']:.2f}x)")
                if d == "write" and "raw_frac" in r:
                    g.append(f">= 80% raw write: {'yes' if r['raw_frac'] >= 0.8 else 'NO'} ({100 * r['raw_frac']:.0f}%)")
            print(f"  N={n:<10} {d:<5} " + "; ".join(g))
    return 0


if __name__ == "__main__":
    sys.exit(main())
