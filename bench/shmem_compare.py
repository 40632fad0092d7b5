#!/usr/bin/env python3
"""Host SHMEM put/get, Kyoyu against Open MPI's OSHMEM, side by side (kybench suite `shmem`).

Runs, ROUNDS times and alternately so that both see the same machine noise:
  bench_shmem          on 2 PEs, one node       (Kyoyu's shmem.h and Kyoyu's own ky_put/ky_get, interleaved)
  bench_shmem          on 2 PEs, KY_NODE_SPLIT=rank (the MPI path)
  bench_shmem_oshmem   on 2 PEs through oshrun  (the same source built with oshcc), when it was built
and keeps the fastest value of every point over the rounds. Writes one record per (path, op, bytes) with
the shmem.h numbers and, beside them, ky_lat_us (ky_put/ky_get), oshmem_lat_us, ratio (shmem.h / ky_*,
the layer's cost: goal <= 1.1) and ratio_oshmem (shmem.h / OSHMEM: goal <= 1).

    shmem_compare.py --build BUILD [--rounds R] [--ranks 2] [bench flags: -b -e -f -n -w -r -W]
                     [--case NAME] [--json FILE]

OSHMEM (Open MPI 4.1.4 here, UCX) crashes in shmem_finalize on this machine after the measurements are
printed; a run counts when it printed "# done" (docs/shmem.md). On the GPU machine (Ubuntu's Open MPI 4.1.6)
it crashes in shmem_init (mca_memheap_modex_recv_all) in 3 to 5 of 5 rounds; those rounds are not used. Should
it never finish, a short run of the OSHMEM program before the rounds tries oshrun's defaults, then the settings
in OSHRUN_CANDIDATES, and the rounds use the first that finishes (OSHRUN_ARGS="..." fixes them instead); the
records carry them as "oshrun_args"."""
import argparse
import json
import os
import shlex
import shutil
import subprocess
import sys
import tempfile


def run(cmd, env, timeout):
    try:
        p = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=timeout, errors="replace")
        return p.returncode, p.stdout + p.stderr
    except subprocess.TimeoutExpired as e:
        return 124, (e.stdout or "") if isinstance(e.stdout, str) else ""


def load(path):
    out = []
    if os.path.exists(path):
        with open(path) as f:
            for line in f:
                line = line.strip()
                if line:
                    out.append(json.loads(line))
    return out


# oshrun settings tried in turn when the defaults crash: the plain mmap symmetric heap, then UCX held to
# host transports (a CUDA-enabled UCX registers the heap with its CUDA memory domains too)
OSHRUN_CANDIDATES = [
    [],
    ["--mca", "sshmem", "mmap"],
    ["-x", "UCX_TLS=self,sm,cma"],
    ["--mca", "sshmem", "mmap", "-x", "UCX_TLS=self,sm,cma"],
    ["--mca", "spml", "ucx", "--mca", "sshmem", "mmap", "-x", "UCX_TLS=self,posix,cma", "-x", "UCX_MEMTYPE_CACHE=n"],
]


def pick_oshrun_args(base, env, timeout):
    """The oshrun settings the OSHMEM program finishes with (a short run of 8 bytes), or None."""
    if "OSHRUN_ARGS" in os.environ:
        return shlex.split(os.environ["OSHRUN_ARGS"])
    for extra in OSHRUN_CANDIDATES:
        cmd = base[:1] + extra + base[1:] + ["-b", "8", "-e", "8", "-n", "10", "-w", "2"]
        rc, out = run(cmd, env, min(timeout, 60))
        ok = "# done" in out
        print(f"shmem_compare: oshrun {' '.join(extra) or '(defaults)'}: {'ok' if ok else f'exit {rc}, no'}",
              flush=True)
        if ok:
            return extra
    return None


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", required=True)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--ranks", type=int, default=2)
    ap.add_argument("--case", default="shmem_host")
    ap.add_argument("--json")
    ap.add_argument("--timeout", type=int, default=600)
    ap.add_argument("--no-split", action="store_true", help="skip the KY_NODE_SPLIT=rank runs")
    args, bench_flags = ap.parse_known_args()
    bindir = os.path.join(args.build, "bin")
    ky = os.path.join(bindir, "bench_shmem")
    osh = os.path.join(bindir, "bench_shmem_oshmem")
    kyrun = os.path.join(bindir, "kyrun")
    oshrun = shutil.which("oshrun")
    if not os.access(ky, os.X_OK):
        sys.exit(f"shmem_compare: {ky} is not built")
    have_osh = os.access(osh, os.X_OK) and oshrun
    if not have_osh:
        print("shmem_compare: no OSHMEM baseline (bench_shmem_oshmem or oshrun missing)")
    env = dict(os.environ)
    tmp = tempfile.mkdtemp(prefix="shmem_compare.")
    runs = [("shm", [kyrun, "-n", str(args.ranks), ky], {}),
            ("mpi", [kyrun, "-n", str(args.ranks), ky], {"KY_NODE_SPLIT": "rank"})]
    if args.no_split:
        runs = runs[:1]
    osh_args = []
    if have_osh:
        base = [oshrun, "--allow-run-as-root", "--oversubscribe", "-n", str(args.ranks), osh]
        osh_args = pick_oshrun_args(base, env, args.timeout)
        if osh_args is None:
            print("shmem_compare: OSHMEM did not finish with any oshrun settings tried: no OSHMEM baseline")
        else:
            runs.append(("oshmem", base[:1] + osh_args + base[1:], {}))
    best = {}   # (impl-api, path, op, bytes) -> record with the lowest lat_us
    for r in range(args.rounds):
        for tag, cmd, extra in runs:
            jf = os.path.join(tmp, f"{tag}.{r}.jsonl")
            rc, out = run(cmd + bench_flags + ["--json", jf], dict(env, **extra), args.timeout)
            done = "# done" in out
            print(f"round {r + 1}/{args.rounds} {tag}: exit {rc}{'' if done else ' (incomplete: not used)'}",
                  flush=True)
            if not done:
                print(out[-2000:])
                continue
            for rec in load(jf):
                impl = "oshmem" if tag == "oshmem" else rec["api"]
                key = (impl, rec["path"] if tag != "oshmem" else "shm", rec["op"], rec["bytes"])
                if key not in best or rec["lat_us"] < best[key]["lat_us"]:
                    best[key] = rec
    shutil.rmtree(tmp, ignore_errors=True)
    rows = []
    for (impl, path, op, nbytes), rec in sorted(best.items(), key=lambda kv: (kv[0][1], kv[0][2], kv[0][3])):
        if impl != "shmem":
            continue
        out = dict(rec)
        out["case"] = args.case
        out["baseline"] = "ky_put/ky_get"
        k = best.get(("ky", path, op, nbytes))
        o = best.get(("oshmem", "shm", op, nbytes)) if path == "shm" else None
        if k:
            out["ky_lat_us"], out["ky_bw_GBs"] = k["lat_us"], k["bw_GBs"]
            out["base_lat_us"], out["base_bw_GBs"] = k["lat_us"], k["bw_GBs"]
            out["ratio"] = round(rec["lat_us"] / k["lat_us"], 4) if k["lat_us"] > 0 else None
        if o:
            out["oshmem_lat_us"], out["oshmem_bw_GBs"] = o["lat_us"], o["bw_GBs"]
            out["ratio_oshmem"] = round(rec["lat_us"] / o["lat_us"], 4) if o["lat_us"] > 0 else None
        out["rounds"] = args.rounds
        if o:
            out["oshrun_args"] = " ".join(osh_args)
        rows.append(out)
    print(f"\n{'path':<5} {'op':<8} {'bytes':>9} {'shmem.h us':>11} {'ky_* us':>9} {'OSHMEM us':>10} "
          f"{'shmem/ky':>9} {'shmem/OSH':>10} {'shmem GB/s':>11} {'OSH GB/s':>9}")
    for o in rows:
        f = lambda v, w, p=3: f"{v:>{w}.{p}f}" if isinstance(v, (int, float)) else f"{'-':>{w}}"
        print(f"{o['path']:<5} {o['op']:<8} {o['bytes']:>9} {f(o['lat_us'], 11)} {f(o.get('ky_lat_us'), 9)} "
              f"{f(o.get('oshmem_lat_us'), 10)} {f(o.get('ratio'), 9)} {f(o.get('ratio_oshmem'), 10)} "
              f"{f(o['bw_GBs'], 11, 4)} {f(o.get('oshmem_bw_GBs'), 9, 4)}")
    if args.json:
        with open(args.json, "a") as f:
            for o in rows:
                f.write(json.dumps(o) + "\n")
    return 0 if rows else 1


if __name__ == "__main__":
    sys.exit(main())
