#!/usr/bin/env python3
"""h5py's side of `kybench run io` (bench/io_bench.py runs it): seed 002's N-body snapshot (float4 position+mass,
float3 velocity, uint64 id) written with h5py from numpy arrays and read back, timed the way ky_bench_io times
its baselines: create to a file on disk (fsync) for writes, reads after the file's pages were dropped from the
page cache. The device-to-host (host-to-device) copy that would come before (after) is measured by ky_bench_io
and added by io_bench.py. Prints one JSON object per N: {"N", "write_s", "read_s"} (best of --reps).

    io_h5py.py --dir DIR --n 1000,10000 [--reps 3]

Exit 77 (skipped) when h5py or numpy is missing."""
import argparse
import json
import os
import sys
import time

try:
    import h5py
    import numpy as np
except ImportError as e:
    print(f"io_h5py.py: {e}: h5py baseline skipped", file=sys.stderr)
    sys.exit(77)


def evict(path):
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fdatasync(fd)
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    finally:
        os.close(fd)


def one(path, n):
    i = np.arange(n, dtype=np.uint64)
    base = ((i % 100003).astype(np.float32) * np.float32(0.5))
    pos = np.stack([base + c for c in range(4)], axis=1)
    vel = np.stack([base + c for c in range(3)], axis=1)
    t0 = time.perf_counter()
    with h5py.File(path, "w") as f:
        f.create_dataset("pos_mass", data=pos)
        f.create_dataset("vel", data=vel)
        f.create_dataset("id", data=i)
    fd = os.open(path, os.O_RDONLY)
    os.fsync(fd)
    os.close(fd)
    tw = time.perf_counter() - t0
    evict(path)
    t0 = time.perf_counter()
    with h5py.File(path, "r") as f:
        p, v, d = f["pos_mass"][...], f["vel"][...], f["id"][...]
    tr = time.perf_counter() - t0
    ok = p.shape == (n, 4) and v.shape == (n, 3) and int(d[-1]) == n - 1
    os.unlink(path)
    return tw, tr, ok


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dir", default="/tmp")
    ap.add_argument("--n", required=True, help="particle counts, comma-separated")
    ap.add_argument("--reps", type=int, default=3)
    a = ap.parse_args()
    path = os.path.join(a.dir, f"io_h5py_{os.getpid()}.h5")
    for n in [int(float(x)) for x in a.n.split(",") if x]:
        tw = tr = None
        ok = True
        for _ in range(a.reps if n < 10**8 else 1):
            w, r, good = one(path, n)
            ok &= good
            tw = w if tw is None else min(tw, w)
            tr = r if tr is None else min(tr, r)
        print(json.dumps({"N": n, "write_s": tw, "read_s": tr, "verified": ok, "h5py": h5py.__version__}), flush=True)


if __name__ == "__main__":
    main()
