#!/usr/bin/env python3
"""UCX's own ucx_perftest on this machine: the floor of Kyoyu's UCX transport (kybench suite `comm`, case
ucx_perftest_host). For each test and size it starts a server and a client of ucx_perftest on this host (two
processes, as Kyoyu's ping-pong runs two ranks with KY_NODE_SPLIT=rank KY_TRANSPORT=ucx) and records the
"Final:" line: ucp_put_lat (one-sided put ping-pong, half round trip: the latency floor), ucp_get and
ucp_put_bw (bandwidth, one direction), on host memory, or with --mem cuda on GPU memory at both ends
(ucx_perftest -m cuda,cuda: a UCX with its CUDA transports, each process on its own GPU where there are
two, CUDA_VISIBLE_DEVICES; the floor of Kyoyu's GPU segments over UCX).

    ucx_perftest.py --build BUILD [--sizes 8,65536,67108864] [--iters N] [--mem host|cuda] [--case NAME] [--json FILE]

ucx_perftest comes from UCX's utilities (Debian's ucx-utils; the libucx-cu13 wheel's libucx/bin): found on
PATH or as $UCX_PERFTEST. Without it the case is skipped (exit 77) with a message. Records (bench
"ucx_perftest"): test, bytes, iters, lat_us (average; half round trip for _lat tests), lat_p50_us (median),
bw_GBs, and the
common fields of docs/benchmarks.md. UCX chooses its transports (UCX_TLS is passed through)."""
import argparse
import datetime
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import time

FINAL = re.compile(r"^Final:\s+(\d+)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)")


def version(build):
    try:
        out = subprocess.run([os.path.join(build, "bin", "kyinfo"), "--build"], capture_output=True, text=True,
                             timeout=30).stdout
        m = re.search(r"Kyoyu (\S+) build", out)
        return m.group(1) if m else "unknown"
    except (OSError, subprocess.TimeoutExpired):
        return "unknown"


def gpu_envs():
    """The server's and the client's environments for GPU memory: each its own GPU where there are two (the
    pair of GPUs a Kyoyu run of two ranks uses), else both the one GPU. Asked of nvidia-smi once per run."""
    try:
        n = len([l for l in subprocess.run(["nvidia-smi", "-L"], capture_output=True, text=True,
                                             timeout=30).stdout.splitlines() if l.startswith("GPU")])
    except (OSError, subprocess.TimeoutExpired):
        n = 0
    return [dict(os.environ, **({"CUDA_VISIBLE_DEVICES": str(i)} if n >= 2 else {})) for i in (0, 1)]


def one(exe, test, size, iters, port, envs=None):
    """Server and client of one point (envs: their environments, GPU memory; None: host memory); the
    client's Final line as (iters, median and average latency in us, bw_MBs) or None."""
    args = ["-t", test, "-s", str(size), "-n", str(iters), "-p", str(port)]
    if envs:
        args += ["-m", "cuda,cuda"]
    srv_env, cli_env = envs or (None, None)
    srv = subprocess.Popen([exe] + args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                           env=srv_env)
    text = ""
    try:
        # the server takes its first connection as the client: no probing it; the client tries again
        # while the server is not listening yet
        for _ in range(20):
            time.sleep(0.25)
            cli = subprocess.run([exe, "127.0.0.1"] + args, capture_output=True, text=True, timeout=120,
                                 env=cli_env)
            text = cli.stdout + cli.stderr
            if cli.returncode == 0 or srv.poll() is not None:
                break
    except subprocess.TimeoutExpired:
        pass
    finally:
        try:
            srv.wait(timeout=30)
        except subprocess.TimeoutExpired:
            srv.kill()
    for line in text.splitlines():
        m = FINAL.match(line.strip())
        if m:
            # columns: iterations, latency 50%ile, average, overall (us); bandwidth average, overall (MB/s)
            return int(m.group(1)), float(m.group(2)), float(m.group(3)), float(m.group(6))
    sys.stderr.write(f"ucx_perftest {test} {size}: no result\n{text[-2000:]}\n")
    return None


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default="build")
    ap.add_argument("--sizes", default="8,65536,67108864")
    ap.add_argument("--iters", type=int, default=0, help="iterations per point (default: by size)")
    ap.add_argument("--mem", choices=("host", "cuda"), default="host")
    ap.add_argument("--case", default="ucx_perftest_host")
    ap.add_argument("--json")
    ap.add_argument("--port", type=int, default=13337)
    o, _ = ap.parse_known_args()  # kybench's range flags are not ours
    exe = os.environ.get("UCX_PERFTEST") or shutil.which("ucx_perftest")
    if not exe:
        print("ucx_perftest.py: skipped: no ucx_perftest (install ucx-utils, or set UCX_PERFTEST)")
        return 77
    kind = os.environ.get("KY_BENCH_MACHINE") or socket.gethostname()
    date = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d")
    ver = version(o.build)
    sizes = [int(s) for s in o.sizes.split(",") if s]
    recs, port = [], o.port
    envs = gpu_envs() if o.mem == "cuda" else None
    print(f"{'test':<14} {'bytes':>10} {'iters':>8} {'lat_us':>10} {'p50_us':>10} {'GB/s':>10}")
    for test in ("ucp_put_lat", "ucp_get", "ucp_put_bw"):
        for size in sizes:
            iters = o.iters or (20000 if size <= 65536 else 200)
            r = one(exe, test, size, iters, port, envs)
            port += 1
            if not r:
                continue
            n, p50, lat, mbs = r
            rec = {"bench": "ucx_perftest", "case": o.case, "kind": kind, "date": date, "version": ver,
                   "ranks": 2, "test": test, "mem": "gpu" if o.mem == "cuda" else "host", "bytes": size, "iters": n, "lat_us": lat, "lat_p50_us": p50,
                   "bw_GBs": mbs * 1.048576e6 / 1e9}
            recs.append(rec)
            print(f"{test:<14} {size:>10} {n:>8} {lat:>10.3f} {p50:>10.3f} {rec['bw_GBs']:>10.3f}")
    if o.json:
        with open(o.json, "a") as f:
            for r in recs:
                f.write(json.dumps(r) + "\n")
    return 0 if recs else 1


if __name__ == "__main__":
    sys.exit(main())
