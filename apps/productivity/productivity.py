#!/usr/bin/env python3
"""The productivity table of seed 000 (Table 1) for Kyoyu: one 5-point 2-D stencil written six ways.

    productivity.py --lines                                   # the line counts only
    productivity.py --check --ranks 2 [--build build]         # build all, run each on 2 ranks, check vs seq
    productivity.py --bench --ranks 4 --reps 5 --n 4096 --nt 100 [--json f.json]   # the table with times

Versions: seq.c (sequential with OpenMP, the baseline of lines), mpi.c (the baseline of speed), sms.c
(Kyoyu's DSM through sms.h), mpc.c and smint.c (kycc's MpC and SMint front ends), array.c (kyoyu/array.h).
Lines are counted as the seed counts them: every line but blank ones and comments. Every version prints
`checksum S W time T`: S and W (a plain and a weighted sum of the final grid) must match the sequential
run's to 1e-9 relative, T is the time of the step loop in seconds. --bench interleaves the versions in every
repetition (a shared machine's drift hits all alike), keeps the best time of each and reports the load
average before and after. Exit status: 0, 1 on a mismatch or a failed run, 77 without libclang (kycc)."""
import argparse
import json
import os
import re
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.realpath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
VERSIONS = [("seq", "Sequential (OpenMP)"), ("mpi", "MPI"), ("sms", "Kyoyu DSM (sms.h)"), ("mpc", "MpC"),
            ("smint", "SMint"), ("smint1", "SMint, KY_DSM_SNAPSHOT=1"), ("array", "Kyoyu arrays")]
# smint1: smint.c's program with kycc's guard on every home page. kycc keeps that guard for programs whose
# serial part may update global data in place (docs/kycc.md, Limits); SMint units whose serial part writes
# no global data (this one) run with the DSM's default instead (docs/mpc.md): smint1 shows the difference.
SAME_PROGRAM = {"smint1": "smint"}
RUN_ENV = {"smint1": {"KY_DSM_SNAPSHOT": "1"}}


def count_lines(path):
    """Lines that hold code: comments (/* */, //) removed, blank lines not counted; strings respected."""
    text, out, i, state = open(path).read(), [], 0, "code"
    while i < len(text):
        c, nxt = text[i], text[i:i + 2]
        if state == "code":
            if nxt == "/*":
                state, i = "block", i + 2
                continue
            if nxt == "//":
                state, i = "line", i + 2
                continue
            if c in "\"'":
                state = c
            out.append(c)
        elif state == "block":
            if nxt == "*/":
                state, i = "code", i + 2
                continue
            if c == "\n":
                out.append(c)
        elif state == "line":
            if c == "\n":
                state = "code"
                out.append(c)
        else:   # inside a string or character constant
            out.append(c)
            if c == "\\":
                out.append(text[i + 1])
                i += 1
            elif c == state:
                state = "code"
        i += 1
    return sum(1 for line in "".join(out).split("\n") if line.strip())


def build(v, work, bld, n, nt):
    src, exe = os.path.join(HERE, v + ".c"), os.path.join(work, v)
    sizes = ["-DN=%d" % n, "-DNT=%d" % nt]
    lib = os.path.join(bld, "lib")
    if v == "seq":
        cmd = ["cc", "-O2", "-fopenmp"] + sizes + [src, "-o", exe]
    elif v in ("mpc", "smint"):
        cmd = [os.path.join(ROOT, "tools", "kycc"), "-O2", "-fopenmp"] + sizes + [src, "-o", exe]
    else:
        cmd = ["mpicc", "-O2", "-fopenmp", "-I", os.path.join(ROOT, "include")] + sizes + \
              [src, "-o", exe, "-L", lib, "-Wl,-rpath," + lib, "-lkyoyu", "-lm"]
    r = subprocess.run(cmd, capture_output=True, text=True, cwd=work,
                       env=dict(os.environ, KYCC_KYOYU_BUILD=bld))
    if r.returncode != 0:
        sys.stderr.write("productivity: building %s failed:\n%s%s" % (v, r.stdout, r.stderr))
        return None
    return exe


def run(v, exe, ranks, threads, bld):
    env = dict(os.environ, OMP_NUM_THREADS=str(threads if v != "seq" else ranks * threads), **RUN_ENV.get(v, {}))
    env.setdefault("KY_TIMEOUT", "600")
    cmd = [exe] if v == "seq" else [os.path.join(bld, "bin", "kyrun"), "-n", str(ranks), exe]
    r = subprocess.run(cmd, capture_output=True, text=True, env=env)
    m = re.search(r"^checksum (\S+) (\S+) time (\S+)$", r.stdout, re.M)
    if r.returncode != 0 or not m:
        sys.stderr.write("productivity: %s on %d ranks failed (exit %d):\n%s%s" %
                         (v, ranks, r.returncode, r.stdout[-2000:], r.stderr[-2000:]))
        return None
    return float(m.group(1)), float(m.group(2)), float(m.group(3))


def loadavg():
    try:
        return open("/proc/loadavg").read().split()[0]
    except OSError:
        return "?"


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--lines", action="store_true")
    ap.add_argument("--check", action="store_true")
    ap.add_argument("--bench", action="store_true")
    ap.add_argument("--ranks", type=int, default=4)
    ap.add_argument("--threads", type=int, default=1, help="OpenMP threads per rank")
    ap.add_argument("--reps", type=int, default=1)
    ap.add_argument("--n", type=int, default=None, help="grid N x N (check: 96, bench: 4096)")
    ap.add_argument("--nt", type=int, default=None, help="steps (check: 10, bench: 100)")
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--work", default=None)
    ap.add_argument("--versions", default=",".join(v for v, _ in VERSIONS))
    ap.add_argument("--json", default=None, help="append one JSON line per version (kybench's productivity records)")
    ap.add_argument("--case", default="productivity", help="the record's case (kybench run passes it)")
    a = ap.parse_args(argv)
    want = a.versions.split(",")
    lines = {v: count_lines(os.path.join(HERE, SAME_PROGRAM.get(v, v) + ".c")) for v, _ in VERSIONS}
    if not (a.check or a.bench):
        print("| version | lines | vs sequential |\n|---|---|---|")
        for v, name in VERSIONS:
            if v not in SAME_PROGRAM:
                print("| %s | %d | %.2f |" % (name, lines[v], lines[v] / lines["seq"]))
        return 0
    try:
        import clang.cindex  # noqa: F401  (kycc's MpC and SMint front ends need it)
    except ImportError:
        print("SKIPPED: libclang's Python bindings are missing (make deps installs them: pip install libclang)")
        return 77
    n = a.n or (4096 if a.bench else 96)
    nt = a.nt or (100 if a.bench else 10)
    bld = os.path.abspath(a.build)
    work = os.path.abspath(a.work or os.path.join(bld, "productivity"))
    os.makedirs(work, exist_ok=True)
    exes = {}
    for v in ["seq"] + [x for x in want if x != "seq"]:
        exes[v] = exes.get(SAME_PROGRAM.get(v)) or build(SAME_PROGRAM.get(v, v), work, bld, n, nt)
        if exes[v] is None:
            return 1
    load0 = loadavg()
    best, sums, times = {}, {}, {}
    for rep in range(a.reps):
        for v in exes:   # interleaved: every repetition runs every version once
            r = run(v, exes[v], a.ranks, a.threads, bld)
            if r is None:
                return 1
            sums[v] = r[:2]
            best[v] = min(best.get(v, r[2]), r[2])
            times.setdefault(v, []).append(r[2])
    load1 = loadavg()
    ref = sums["seq"]
    sys.path.insert(0, os.path.join(ROOT, "tools"))
    from kybench_lib.suites import machine_name  # KY_BENCH_MACHINE, the GPUs' kind, else the host name
    machine = machine_name(None)
    r = subprocess.run(["git", "-C", ROOT, "describe", "--always", "--dirty"], capture_output=True, text=True)
    version = r.stdout.strip() or "unknown"
    ok_all = True
    mpi_t = best.get("mpi")
    print("5-point 2-D stencil, N = %d, %d steps, %d ranks x %d threads (sequential: %d threads), best of %d; "
          "load average %s before, %s after" % (n, nt, a.ranks, a.threads, a.ranks * a.threads, a.reps, load0, load1))
    med = {v: sorted(t)[len(t) // 2] for v, t in times.items()}
    print("| version | lines | lines vs sequential | time (s), best | time vs MPI | speed vs MPI | median (s) | "
          "median vs MPI | verified |")
    print("|---|---|---|---|---|---|---|---|---|")
    for v, name in VERSIONS:
        if v not in exes:
            continue
        s, w = sums[v]
        ok = all(abs(x - y) <= 1e-9 * max(abs(y), 1e-300) for x, y in ((s, ref[0]), (w, ref[1])))
        ok_all &= ok
        rel = "%.2f" % (best[v] / mpi_t) if mpi_t else "-"
        speed = "%.2f" % (mpi_t / best[v]) if mpi_t and best[v] > 0 else "-"
        mrel = "%.2f" % (med[v] / med["mpi"]) if mpi_t else "-"
        print("| %s | %d | %.2f | %.4f | %s | %s | %.4f | %s | %s |" % (
            name, lines[v], lines[v] / lines["seq"], best[v], rel, speed, med[v], mrel,
            "yes" if ok else "NO: %r vs %r" % ((s, w), ref)))
        if a.json:
            with open(a.json, "a") as f:
                rec = {"bench": "productivity", "case": a.case, "kind": machine, "date": time.strftime("%Y-%m-%d",
                       time.gmtime()), "version": version, "ranks": a.ranks, "impl": v, "name": name,
                       "lines": lines[v], "lines_vs_seq": lines[v] / lines["seq"], "time_s": best[v], "N": n,
                       "steps": nt, "threads": a.threads, "reps": a.reps, "verified": ok, "load_before": load0,
                       "load_after": load1, "median_s": med[v], "times_s": times[v]}
                if mpi_t:
                    rec.update(baseline="mpi", base_time_s=mpi_t, ratio=best[v] / mpi_t)
                f.write(json.dumps(rec) + "\n")
    if not ok_all:
        print("FAIL: a version does not match the sequential result")
        return 1
    print("ok: every version matches the sequential result")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
