#!/usr/bin/env python3
"""CTest driver for kybench (tests/kybench/CMakeLists.txt registers one test per step).

    check_kybench.py run     KYBENCH BUILD WORK   tiny comm suite on CPU ranks into WORK/results; validate it
    check_kybench.py report  KYBENCH BUILD WORK   report from WORK/results and from the synthetic fixtures;
                                                  PNGs exist and are non-empty; text outside blocks is kept
    check_kybench.py compare KYBENCH BUILD WORK   identical inputs pass; a planted 1.5x lat_us fails naming it

Exit 77 (CTest SKIP_RETURN_CODE) when report has no matplotlib: the tables are still checked."""
import json
import os
import shutil
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
FIXTURES = os.path.join(HERE, "fixtures")


def kb(kybench, *args, expect=0):
    cmd = [sys.executable, kybench] + list(args)
    t0 = time.monotonic()
    p = subprocess.run(cmd, capture_output=True, text=True)
    out = p.stdout + p.stderr
    print(f"$ kybench {' '.join(args)}  -> exit {p.returncode} ({time.monotonic() - t0:.1f} s)")
    print("    " + out.rstrip().replace("\n", "\n    "))
    if expect is not None and p.returncode != expect:
        sys.exit(f"FAIL: kybench {' '.join(args)}: exit {p.returncode}, expected {expect}")
    return p.returncode, out


def check(cond, what):
    if not cond:
        sys.exit(f"FAIL: {what}")
    print(f"ok: {what}")


def step_run(kybench, build, work):
    res = os.path.join(work, "results")
    shutil.rmtree(res, ignore_errors=True)
    t0 = time.monotonic()
    kb(kybench, "run", "comm", "--quick", "--no-gpus", "--build", build, "--machine", "ci", "--out", res)
    check(time.monotonic() - t0 < 30, f"quick comm suite in < 30 s ({time.monotonic() - t0:.1f} s)")
    for name in ("pingpong_host_shm", "pingpong_host_mpi", "halo_host_shm", "halo_host_mpi"):
        f = os.path.join(res, name + ".jsonl")
        check(os.path.getsize(f) > 0 if os.path.exists(f) else False, f"{name}.jsonl written")
    check(os.path.exists(os.path.join(res, "comm.log")), "comm.log written")
    kb(kybench, "validate", res)
    kb(kybench, "validate", FIXTURES)
    # the validator rejects what the schema forbids
    bad = os.path.join(work, "bad.jsonl")
    with open(os.path.join(res, "halo_host_shm.jsonl")) as fh:
        r = json.loads(fh.readline())
    with open(bad, "w") as fh:
        fh.write(json.dumps(dict(r, lat_us="fast")) + "\n")
        fh.write(json.dumps({k: v for k, v in r.items() if k != "face"}) + "\n")
        fh.write(json.dumps(dict(r, date="22/11/2026")) + "\n")
        fh.write(json.dumps(r).replace(f'"ratio": {json.dumps(r["ratio"])}', '"ratio": NaN') + "\n")
    _, out = kb(kybench, "validate", bad, expect=1)
    check("'lat_us' must be number" in out and "missing required field 'face'" in out and "YYYY-MM-DD" in out
          and "NaN" in out and "4 invalid" in out, "validate names every broken field")


DOC = """# Test document

Hand-written goals: keep me.

<!-- kybench:begin comm-pingpong -->
old table
<!-- kybench:end comm-pingpong -->

Analysis between blocks: keep me too.

<!-- kybench:begin comm-figures -->
<!-- kybench:end comm-figures -->

<!-- kybench:begin stencil-tables -->
stencil block without records: stays as it is
<!-- kybench:end stencil-tables -->

Closing words.
"""


def outside_blocks(text):
    out, keep = [], True
    for line in text.splitlines():
        if line.startswith("<!-- kybench:begin"):
            keep = False
            out.append(line)
        elif line.startswith("<!-- kybench:end"):
            keep = True
        if keep:
            out.append(line)
    return out


def pngs_ok(folder, names):
    for n in names:
        p = os.path.join(folder, n)
        check(os.path.exists(p) and os.path.getsize(p) > 1000, f"figure {n} exists and is not empty")
        with open(p, "rb") as fh:
            check(fh.read(8) == b"\x89PNG\r\n\x1a\n", f"figure {n} is a PNG")


def step_report(kybench, build, work):
    res = os.path.join(work, "results")
    rep = os.path.join(work, "report")
    shutil.rmtree(rep, ignore_errors=True)
    os.makedirs(rep)
    md = os.path.join(rep, "performance.md")
    with open(md, "w") as fh:
        fh.write(DOC)
    # tables only first: works without matplotlib
    kb(kybench, "report", "--no-figures", "--results", res, "--out", md, "--figures", os.path.join(rep, "fig"))
    with open(md) as fh:
        text = fh.read()
    kept = outside_blocks(DOC)
    check(outside_blocks(text)[:len(kept)] == kept, "text outside the generated blocks is unchanged")
    check("old table" not in text and "| put_pp_host_shm |" in text, "comm-pingpong block regenerated")
    check("stencil block without records: stays as it is" in text, "block without records left as it was")
    check("<!-- kybench:begin comm-halo -->" in text, "missing block (comm-halo) appended with markers")

    try:
        rc = subprocess.run([sys.executable, kybench, "report", "--results", res, "--out", md,
                             "--figures", os.path.join(rep, "fig")], capture_output=True, text=True)
    except OSError as e:
        sys.exit(f"FAIL: {e}")
    print(rc.stdout + rc.stderr)
    if "figures need matplotlib" in rc.stderr:
        print("SKIP: no matplotlib for this interpreter or /usr/bin/python3 (make deps installs "
              "python3-matplotlib); the figure checks did not run")
        sys.exit(77)
    check(rc.returncode == 0, "report with figures")
    pngs_ok(os.path.join(rep, "fig"), ["pingpong_host_shm.png", "pingpong_host_mpi.png", "halo_host_shm.png",
                                       "halo_host_mpi.png"])
    with open(md) as fh:
        text = fh.read()
    check("](fig/pingpong_host_shm.png)" in text, "figures linked relative to the document")
    # second run: idempotent
    with open(md) as fh:
        before = fh.read()
    kb(kybench, "report", "--results", res, "--out", md, "--figures", os.path.join(rep, "fig"))
    with open(md) as fh:
        check(fh.read() == before, "a second report gives the same document")

    # renderers of the later suites, on synthetic records (coll, stencil, dsm)
    fmd = os.path.join(rep, "fixtures.md")
    kb(kybench, "report", "--results", FIXTURES, "--out", fmd, "--figures", os.path.join(rep, "fxfig"))
    pngs_ok(os.path.join(rep, "fxfig"), ["coll_allgather_host.png", "coll_allreduce_host.png",
                                         "stencil_27pt_N256_gpu_weak.png", "stencil_27pt_N256_gpu_phases.png",
                                         "dsm_stencil7_pages.png", "stencil_7pt_N512_gpu_weak.png",
                                         "stencil_7pt_N512_gpu_phases.png", "npb_sp_A_pages.png",
                                         "npb_sp_A_speedup.png"])
    with open(fmd) as fh:
        text = fh.read()
    check("| mpi_allgather |" in text and "16 B, p=2" in text and "128 KiB, p=4" in text,
          "coll table in seed 001 Table 3 layout")
    check("| host_staged |" in text and "efficiency at p=4" in text, "stencil weak-scaling table")
    check("| faults |" in text, "dsm table")
    check("| bytes | put_signal, direct | put_signal, proxy_ipc | NVSHMEM |" in text and
          "| 8 B | 5.73 | 59.06 | 5.50 | 0.96 | 1.45 | 5.14 | 5.07 | 1.72 |" in text,
          "device table: put_signal per path, NVSHMEM and the floors")
    check("| allreduce | oneshot | sync |" in text and "floor µs" in text, "GPU collective latency table with floors")
    check("ncclAllReduce (" in text and "% of 380" in text, "collective bus bandwidth table with the link floor")
    check("**7pt stencil, N=512 per rank, gpu memory**" in text and "| kyoyu |" in text,
          "ky_stencil_gpu records read in the stencil shape (weak-scaling table)")
    check("**SP class A** (serial 60.00 s)" in text and "| omp (same threads) | 16.00 s, 3.75x serial |" in text
          and "32.00 s, 1.88x serial, 0.50 of omp" in text and "~800 s (projected), ~0.020 of omp" in text
          and "| affinity | 61,728 |" in text, "npb table: times, speed-up over serial, ratio to omp, page transfers")


def step_compare(kybench, build, work):
    res = os.path.join(work, "results")
    a = os.path.join(work, "cmp_a")
    b = os.path.join(work, "cmp_b")
    for d in (a, b):
        shutil.rmtree(d, ignore_errors=True)
        shutil.copytree(res, d)
    _, out = kb(kybench, "compare", a, b, expect=0)
    check("0 figure(s) moved" in out, "identical inputs: nothing flagged, exit 0")
    f = os.path.join(b, "halo_host_mpi.jsonl")
    with open(f) as fh:
        lines = fh.readlines()
    r = json.loads(lines[1])
    r["lat_us"] *= 1.5
    lines[1] = json.dumps(r) + "\n"
    with open(f, "w") as fh:
        fh.writelines(lines)
    _, out = kb(kybench, "compare", a, b, "--threshold", "0.10", expect=1)
    row = [line for line in out.splitlines() if r["case"] in line and "lat_us" in line]
    check(row and "slower" in row[0] and f"N={r['N']}" in row[0] and "+50.0%" in row[0],
          f"planted regression named: {r['case']} N={r['N']} lat_us +50% slower")
    _, out = kb(kybench, "compare", a, b, "--threshold", "0.6", expect=0)
    check("0 figure(s) moved" in out, "below the threshold: exit 0")
    kb(kybench, "compare", f, os.path.join(a, "halo_host_mpi.jsonl"), expect=0)


def main():
    if len(sys.argv) != 5 or sys.argv[1] not in ("run", "report", "compare"):
        sys.exit(__doc__)
    step, kybench, build, work = sys.argv[1:]
    os.makedirs(work, exist_ok=True)
    {"run": step_run, "report": step_report, "compare": step_compare}[step](kybench, build, work)
    print(f"PASS: kybench {step}")


if __name__ == "__main__":
    main()
