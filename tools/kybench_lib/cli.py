"""kybench command line: run, compare, report, validate (see `kybench --help` and docs/benchmarks.md)."""
import argparse
import os
import subprocess
import sys

from . import compare, records, report, suites


def find_root(script_dir):
    """The Kyoyu source tree: $KYBENCH_ROOT, else the first folder holding bench/ and include/kyoyu.h above
    the working directory or above this script, else the working directory."""
    if os.environ.get("KYBENCH_ROOT"):
        return os.path.abspath(os.environ["KYBENCH_ROOT"])
    for start in (os.getcwd(), script_dir):
        d = os.path.abspath(start)
        while True:
            if os.path.isdir(os.path.join(d, "bench")) and os.path.isfile(os.path.join(d, "include", "kyoyu.h")):
                return d
            parent = os.path.dirname(d)
            if parent == d:
                break
            d = parent
    return os.getcwd()


def find_bindir(build, root, script_dir):
    """Programs to run: BUILD/bin; else the script's own folder when it is a build's bin (kyrun and kyinfo
    beside it); else $BUILD/bin or <root>/build/bin."""
    if build:
        return os.path.abspath(os.path.join(build, "bin"))
    if all(os.access(os.path.join(script_dir, p), os.X_OK) for p in ("kyrun", "kyinfo")):
        return script_dir
    return os.path.abspath(os.path.join(os.environ.get("BUILD") or os.path.join(root, "build"), "bin"))


def _ranks(s):
    try:
        v = [int(x) for x in s.split(",") if x.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"--ranks takes N or a list N,M,...: {s!r}")
    if not v or min(v) < 1:
        raise argparse.ArgumentTypeError(f"--ranks takes positive counts: {s!r}")
    return v


def parser():
    p = argparse.ArgumentParser(prog="kybench", description="Kyoyu's benchmark harness: run suites, compare "
                                "result sets, regenerate docs/performance.md with tables and figures.")
    sub = p.add_subparsers(dest="cmd", required=True, metavar="COMMAND")

    r = sub.add_parser("run", help="run a suite through kyrun and store JSON lines")
    r.add_argument("suite", choices=sorted(suites.SUITES) + ["all"],
                   help="comm (pingpong, halo), coll, dsm, stencil, or all (every suite with cases)")
    r.add_argument("--ranks", type=_ranks, help="rank count(s) for suites that take one (coll): N or N,M,...")
    r.add_argument("--case", help="only the cases whose names match (shell patterns, comma-separated), "
                   "e.g. 'stencil_gpu*'")
    r.add_argument("--gpus", action="store_true", help="run the GPU cases even if nvidia-smi finds < 2 GPUs")
    r.add_argument("--no-gpus", action="store_true", help="host cases only")
    r.add_argument("--build", help="build folder whose bin/ holds kyrun and the benchmarks (default: build)")
    r.add_argument("--machine", help="machine kind (default: $KY_BENCH_MACHINE, else the host name)")
    r.add_argument("--out", help="folder for the JSON lines and the log (default: "
                   "bench/results/<machine>/<UTC date>)")
    r.add_argument("--quick", action="store_true", help="tiny sizes (CI: seconds, numbers mean nothing)")
    r.add_argument("--full", action="store_true", help="full ranges even without GPUs (as BENCH_FULL=1)")
    r.add_argument("--timeout", type=int, default=900, help="seconds per case before it is killed (900)")
    r.add_argument("-v", "--verbose", action="store_true", help="show the programs' output as they run")

    c = sub.add_parser("compare", help="flag every figure that moved by more than a threshold")
    c.add_argument("a", help="result folder or .jsonl file (before)")
    c.add_argument("b", help="result folder or .jsonl file (after)")
    c.add_argument("--threshold", type=float, default=0.10, help="relative change that is flagged (0.10)")

    g = sub.add_parser("report", help="regenerate docs/performance.md (tables) and docs/figures (PNG)")
    g.add_argument("--results", nargs="+", help="result folders or files (default: the newest GPU machine's "
                   "folders under bench/results, each suite from its latest date)")
    g.add_argument("--machine", help="machine kind to report when the results hold several")
    g.add_argument("--out", help="Markdown file to update (default: docs/performance.md)")
    g.add_argument("--figures", help="folder for the PNG figures (default: docs/figures)")
    g.add_argument("--no-figures", action="store_true", help="tables only")

    v = sub.add_parser("validate", help="check JSON lines against the schema of docs/benchmarks.md")
    v.add_argument("paths", nargs="+", metavar="FILE|DIR")
    io = sub.add_parser("io-tune", help="measure the io layer's bounce and cufile paths on directories and write "
                        "the table KY_IO_PATH=auto reads (KY_IO_TABLE, docs/io.md)")
    io.add_argument("dirs", nargs="+", metavar="DIR", help="directories on the file systems to measure (one table "
                    "row set per file-system type)")
    io.add_argument("--out", help="table file to write (default: kyoyu-io-table-<host>.txt in the current folder)")
    io.add_argument("--build", help="build folder whose bin/ holds kyrun and ky_bench_io (default: build)")
    io.add_argument("--ranks", type=int, default=1, help="ranks writing together (sizes are per rank; default 1)")
    io.add_argument("--tmin", default="4K", help="smallest size per rank (4K)")
    io.add_argument("--tmax", default="1G", help="largest size per rank (1G; sizes x4)")
    io.add_argument("--reps", type=int, default=3, help="best of this many (1 from 256 MiB)")
    io.add_argument("--mem", default="gpu", choices=["gpu", "host"], help="where the data is (gpu)")
    sub.add_parser("machine", help="print the machine kind records get: $KY_BENCH_MACHINE, else the GPUs' kind "
                   "as the device tool names it (nvidia-h200, nvidia-h100-x1, -xN), else the host name")
    t = sub.add_parser("timeline", help="draw a KY_TRACE file (Chrome trace JSON) as a per-rank timeline PNG")
    t.add_argument("trace", metavar="FILE")
    t.add_argument("-o", "--out", help="PNG to write (default: FILE with .png)")
    return p


def cmd_report(a, root):
    out = a.out or os.path.join(root, "docs", "performance.md")
    fig_dir = a.figures or os.path.join(root, "docs", "figures")
    paths = a.results or report.default_results(root, a.machine)
    if not paths:
        print(f"report: no results under {os.path.join(root, 'bench', 'results')} (name them with --results)",
              file=sys.stderr)
        return 1
    try:
        recs = report.select(records.load(paths), a.machine)
    except records.RecordError as e:
        print(f"report: {e}", file=sys.stderr)
        return 1
    if not recs:
        print(f"report: no records in {' '.join(paths)}", file=sys.stderr)
        return 1
    figures_mod = None
    if not a.no_figures:
        try:
            from . import figures as figures_mod
        except ImportError as e:
            print(f"report: figures need matplotlib ({e}); `make deps` installs python3-matplotlib. "
                  "Writing the tables only.", file=sys.stderr)
    # which result folders the records came from, relative to the root where possible
    srcs = sorted({os.path.dirname(r["_src"].rsplit(":", 1)[0]) for r in recs})
    sources = [os.path.relpath(s, root) if os.path.abspath(s).startswith(root + os.sep) else s for s in srcs]
    kinds = sorted({f"{r['kind']}, {r['date']}" for r in recs})
    blocks, written = report.build_blocks(recs, out, fig_dir, figures_mod, sources)
    doc = ""
    if os.path.exists(out):
        with open(out, encoding="utf-8") as fh:
            doc = fh.read()
    bad = report.unbalanced(doc)
    if bad:
        print(f"report: {out}: unbalanced kybench markers ({', '.join(bad)}); nothing written", file=sys.stderr)
        return 1
    new, replaced, appended = report.merge(doc, blocks, "; ".join(kinds))
    os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
    with open(out, "w", encoding="utf-8") as fh:
        fh.write(new)
    print(f"report: {len(recs)} records ({'; '.join(kinds)}) from {', '.join(sources)}")
    print(f"report: {out}: {len(replaced)} block(s) replaced ({', '.join(replaced) or '-'}), "
          f"{len(appended)} appended ({', '.join(appended) or '-'})")
    if figures_mod is not None:
        print(f"report: {len(written)} figure(s) in {fig_dir}")
    return 0


def cmd_io_tune(a, bindir):
    """kybench io-tune: bin/ky_bench_io --table on each directory (rows appended to one table file)."""
    prog = os.path.join(bindir, "ky_bench_io")
    if not os.access(prog, os.X_OK):
        print(f"io-tune: {prog} not built (the io layer needs parallel HDF5)", file=sys.stderr)
        return 1
    out = os.path.abspath(a.out or f"kyoyu-io-table-{suites.machine_name(None)}.txt")
    if os.path.exists(out):
        os.remove(out)
    env = dict(os.environ, **suites.MULTICAST_OFF)
    for d in a.dirs:
        cmd = (suites._launcher(bindir, a.ranks, a.mem == "gpu")
               + [prog, "--table", out, "--dir", d, "--tmin", a.tmin, "--tmax", a.tmax, "--reps", str(a.reps),
                  "--mem", a.mem])
        print("io-tune: " + " ".join(cmd), flush=True)
        rc = subprocess.run(cmd, env=env).returncode
        if rc != 0:
            print(f"io-tune: {d}: exit {rc}" + (" (no GPU: --mem host measures host memory)" if rc == 77 else ""),
                  file=sys.stderr)
            return rc
    print(f"io-tune: table {out}; use it with\n  export KY_IO_TABLE={out}")
    return 0


def main(argv=None, script_dir=None):
    script_dir = script_dir or os.path.dirname(os.path.abspath(__file__))
    a = parser().parse_args(argv)
    root = find_root(script_dir)
    if a.cmd == "run":
        if a.gpus and a.no_gpus:
            print("run: --gpus and --no-gpus exclude each other", file=sys.stderr)
            return 2
        a.root = root
        a.bindir = find_bindir(a.build, root, script_dir)
        return suites.run(a)
    if a.cmd == "compare":
        try:
            status, _ = compare.compare([a.a], [a.b], a.threshold, sys.stdout)
        except records.RecordError as e:
            print(f"compare: {e}", file=sys.stderr)
            return 2
        return status
    if a.cmd == "report":
        return cmd_report(a, root)
    if a.cmd == "io-tune":
        return cmd_io_tune(a, find_bindir(a.build, root, script_dir))
    if a.cmd == "machine":
        print(suites.machine_name(None))
        return 0
    if a.cmd == "timeline":
        from . import timeline
        png = a.out or os.path.splitext(a.trace)[0] + ".png"
        print(f"timeline: {timeline.draw(a.trace, png)} -> {png}")
        return 0
    if a.cmd == "validate":
        try:
            n, bad = records.validate(a.paths, sys.stdout)
        except records.RecordError as e:
            print(f"validate: {e}", file=sys.stderr)
            return 2
        print(f"validate: {n} record(s), {bad} invalid")
        return 1 if bad else 0
    return 2
