#!/usr/bin/env python3
"""NPB on kycc against the serial and plain-OpenMP builds, with page transfers per variant (seed 003,
Figs. 3 and 5). The NPB3.0-omp-C sources come from tools/fetch-npb; they are copied per variant into the
work folder and patched there with bench/npb/patches (the fetched copy stays the unmodified baseline).

    bench/npb/npb_bench.py --bench sp --class S --ranks 1,2,3 [--variants none,mapping,affinity]
                           [--threads 1] [--page 4K] [--work /tmp/npb-bench] [--json out.jsonl]

Variants: none (the program as published), mapping (#pragma kyoyu mapping on the arrays' loop dimension),
affinity (mapping + schedule(affinity(...)) on the loops over that dimension). Builds: serial (gcc -O2,
pragmas ignored), omp (gcc -O2 -fopenmp on ranks x threads threads), kycc (every variant, on `ranks` ranks
of `threads` threads). One JSON line per run: bench, class, build, variant, ranks, threads, time_s, mops,
verified, and for kycc the page statistics summed over ranks (pages_fetched, read_faults, write_faults,
diffs, barriers)."""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.realpath(__file__))))
PATCHES = os.path.join(ROOT, "bench", "npb", "patches")
VARIANTS = {"none": [], "mapping": ["mapping"], "affinity": ["mapping", "affinity"]}


def sh(cmd, **kw):
    r = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if r.returncode != 0:
        sys.exit("npb_bench: %s failed (%d):\n%s%s" % (" ".join(cmd), r.returncode, r.stdout[-2000:], r.stderr[-2000:]))
    return r


def prepare(src, work, bench, cls, variant):
    """A patched copy of the sources with npbparams.h for the class; returns (folder, source files)."""
    d = os.path.join(work, "src-%s-%s" % (bench, variant))
    if not os.path.isdir(d):
        shutil.copytree(src, d)
        for p in VARIANTS[variant]:
            patch = os.path.join(PATCHES, "%s-%s.patch" % (bench, p))
            if not os.path.exists(patch):
                sys.exit("npb_bench: no %s variant for %s (%s missing)" % (variant, bench, patch))
            with open(patch) as f:
                sh(["patch", "-p1", "-s", "-d", d], input=f.read())
        sh(["gcc", "-O1", "-o", os.path.join(d, "sys", "setparams"), os.path.join(d, "sys", "setparams.c")])
        shutil.copy(os.path.join(d, "config", "make.def.template"), os.path.join(d, "config", "make.def"))
    B = os.path.join(d, bench.upper())
    sh([os.path.join(d, "sys", "setparams"), bench, cls], cwd=B)
    files = [os.path.join(B, bench + ".c")] + [os.path.join(d, "common", f) for f in
                                               ("c_print_results.c", "c_timers.c", "wtime.c")]
    if bench == "cg":
        files.append(os.path.join(d, "common", "c_randdp.c"))
    return d, files


def build(kind, d, files, out, kycc):
    inc = ["-I" + os.path.join(d, "common")]
    if kind == "serial":
        cmd = ["gcc", "-O2"] + inc + files + ["-lgomp", "-lm", "-o", out]
    elif kind == "omp":
        cmd = ["gcc", "-O2", "-fopenmp"] + inc + files + ["-lm", "-o", out]
    else:
        cmd = [kycc, "-O2", "-fopenmp"] + inc + files + ["-lm", "-o", out]
    sh(cmd)


STAT = re.compile(r"faults r (\d+) w (\d+) \| fetched (\d+) pages.*diffs (\d+).*barriers (\d+)")


def run(cmd, env):
    r = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=3600)
    out = r.stdout
    t = re.search(r"Time in seconds =\s*([\d.]+)", out)
    m = re.search(r"Mop/s total\s*=\s*([\d.]+)", out)
    rec = {"time_s": float(t.group(1)) if t else None, "mops": float(m.group(1)) if m else None,
           "verified": "Verification    =               SUCCESSFUL" in out and r.returncode in (0, 26)}
    stats = [list(map(int, s)) for s in STAT.findall(r.stderr)]
    if stats:
        for k, name in enumerate(("read_faults", "write_faults", "pages_fetched", "diffs", "barriers")):
            rec[name] = sum(s[k] for s in stats) if name != "barriers" else stats[0][k]
    return rec


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bench", default="sp")
    ap.add_argument("--class", dest="cls", default="S")
    ap.add_argument("--ranks", default="1,2")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--variants", default="none,mapping,affinity")
    ap.add_argument("--page", default="4K", help="KY_PAGE_SIZE for the kycc runs (SCASH's pages were 4 KiB)")
    ap.add_argument("--npb", default=os.path.join(ROOT, ".scratch", "npb", "NPB3.0-omp-C"))
    ap.add_argument("--build", default=os.environ.get("KYCC_KYOYU_BUILD", os.path.join(ROOT, "build")))
    ap.add_argument("--work", default=os.path.join(ROOT, ".scratch", "npb-bench"))
    ap.add_argument("--json")
    a = ap.parse_args()
    if not os.path.isfile(os.path.join(a.npb, "common", "npb-C.h")):
        sys.exit("npb_bench: no NPB sources in %s (run tools/fetch-npb)" % a.npb)
    os.makedirs(a.work, exist_ok=True)
    kycc, kyrun = os.path.join(ROOT, "tools", "kycc"), os.path.join(a.build, "bin", "kyrun")
    env = dict(os.environ, KYCC_KYOYU_BUILD=a.build)
    ranks = [int(r) for r in a.ranks.split(",")]
    recs = []
    d, files = prepare(a.npb, a.work, a.bench, a.cls, "none")
    for kind in ("serial", "omp"):
        exe = os.path.join(a.work, "%s.%s.%s" % (a.bench, a.cls, kind))
        build(kind, d, files, exe, kycc)
        for n in ([1] if kind == "serial" else ranks):
            rec = run([exe], dict(env, OMP_NUM_THREADS=str(n * a.threads)))
            rec.update(build=kind, variant="none", ranks=1, threads=n * a.threads)
            recs.append(rec)
    for v in a.variants.split(","):
        d, files = prepare(a.npb, a.work, a.bench, a.cls, v)
        exe = os.path.join(a.work, "%s.%s.kycc-%s" % (a.bench, a.cls, v))
        build("kycc", d, files, exe, kycc)
        for n in ranks:
            rec = run([kyrun, "-n", str(n), exe], dict(env, OMP_NUM_THREADS=str(a.threads), KY_STATS="1",
                                                       KY_PAGE_SIZE=a.page))
            rec.update(build="kycc", variant=v, ranks=n, threads=a.threads)
            recs.append(rec)
    serial = next(r["time_s"] for r in recs if r["build"] == "serial")
    print("NPB %s class %s (%s page for kycc): time, speed-up over serial, pages fetched (all ranks)" %
          (a.bench.upper(), a.cls, a.page))
    print("%-8s %-9s %5s %7s %9s %8s %8s %12s %9s" % ("build", "variant", "ranks", "threads", "time_s", "speedup",
                                                     "verified", "pages_fetch", "barriers"))
    for r in recs:
        r.update(bench=a.bench, **{"class": a.cls})
        print("%-8s %-9s %5d %7d %9.2f %8.2f %8s %12s %9s" % (
            r["build"], r["variant"], r["ranks"], r["threads"], r["time_s"] or -1,
            serial / r["time_s"] if r["time_s"] else 0, "yes" if r["verified"] else "NO",
            r.get("pages_fetched", "-"), r.get("barriers", "-")))
    if a.json:
        with open(a.json, "w") as f:
            for r in recs:
                f.write(json.dumps(r) + "\n")
    return 0 if all(r["verified"] for r in recs) else 1


if __name__ == "__main__":
    sys.exit(main())
