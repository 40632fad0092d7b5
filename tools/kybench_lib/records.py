"""kybench records: loading benchmark JSON lines and checking them against the schema of docs/benchmarks.md.

A record is one JSON object per line (one measured point). The schema is a table per benchmark family:
fields every record has (COMMON), then per-bench required and optional fields. `validate` is plain Python
(no jsonschema); docs/benchmarks.md carries the same tables for people. Unknown fields are allowed
(consumers ignore what they do not know); unknown benches get the common checks and a note."""
import glob
import json
import math
import os
import re

# type names used in the tables: "string", "integer", "number", "boolean", "object" (name -> number)
COMMON = {
    "bench": "string", "case": "string", "kind": "string", "date": "string", "version": "string",
    "ranks": "integer",
}

_COMM_REQ = {"op": "string", "mem": "string", "path": "string", "bytes": "integer", "iters": "integer",
             "lat_us": "number", "bw_GBs": "number", "baseline": "string"}
_COMM_OPT = {"base_lat_us": "number", "base_bw_GBs": "number", "ratio": "number", "floor_us": "number",
             "floor_GBs": "number", "verified": "boolean"}

# coll (curves) and coll_seed (the seed 001 table points): algo, when absent, is read from the case
# "<op>_<algo>_<mem>" (coll_algo).
_COLL = ({"op": "string", "mem": "string", "bytes": "integer", "iters": "integer", "lat_us": "number"},
         {"algo": "string", "path": "string", "dtype": "string", "redop": "string", "bw_GBs": "number",
          "busbw_GBs": "number", "baseline": "string", "base_lat_us": "number", "base_bw_GBs": "number",
          "ratio": "number", "baselines": "object", "floor_us": "number", "floor_GBs": "number",
          "verified": "boolean"})

# bench -> (required, optional). Shapes for coll, dsm and stencil are the ones the report renders
# (docs/benchmarks.md, "Record shapes of the later suites").
SCHEMAS = {
    "pingpong": (_COMM_REQ, _COMM_OPT),
    # bench/device_bench.cu: op put_signal_pp, path direct | proxy_<comm path>, lat_us the round trip from a
    # kernel, baseline nvshmem or none
    "device": (_COMM_REQ, _COMM_OPT),
    "halo": (dict(_COMM_REQ, N="integer", face="string"),
             dict(_COMM_OPT, plan_hits="integer", plan_misses="integer")),
    # bench/dsm.c: the pingpong shape; case = op (fault_read, preload_contig, preload_strided, sync, ...)
    "dsm_micro": (_COMM_REQ, _COMM_OPT),
    "coll": _COLL,
    "coll_seed": _COLL,
    # bench/coll --gpu's latency points: one per operation, algorithm and mode (sync, b2b, graph, blocking);
    # floor_us is the same mode's cheapest stream operation
    "coll_lat": (dict(_COLL[0], mode="string"), _COLL[1]),
    "stencil": ({"variant": "string", "stencil": "string", "mem": "string", "N": "integer", "steps": "integer",
                 "time_s": "number"},
                {"gpus": "integer", "bt": "integer", "phases": "object", "gflops": "number", "eff": "number",
                 "bw_GBs": "number", "floor_GBs": "number", "baseline": "string", "base_time_s": "number",
                 "ratio": "number", "path": "string", "verified": "boolean"}),
    # bench/cg_gpu.cu: one point per matrix and implementation (cusparse, seed_mpi_cuda, ky_<scheme>)
    "cg": ({"matrix": "string", "impl": "string", "N": "integer", "nnz": "integer", "iters": "integer",
            "us_per_iter": "number"},
           {"rel_residual": "number", "ratio": "number", "baseline": "string", "launches_per_iter": "integer",
            "syncs_per_iter": "integer", "active_ranks": "integer", "agglomerated": "boolean"}),
    "dsm": ({"app": "string", "variant": "string", "time_s": "number", "pages_fetched": "integer"},
            {"N": "integer", "threads": "integer", "faults_read": "integer", "faults_write": "integer",
             "bytes_fetched": "integer", "diffs": "integer", "diff_bytes": "integer",
             "pages_preloaded": "integer", "pages_overloaded": "integer", "drops": "integer",
             "home_snapshots": "integer", "coherence_s": "number", "gflops": "number", "bt": "integer",
             "steps": "integer", "baseline": "string", "base_time_s": "number", "ratio": "number",
             "verified": "boolean"}),
    # bench/io_bench.c and bench/io_bench.py (kybench run io): one point per N, implementation (raw, hdf5, h5py,
    # copy, bounce, cufile, auto) and direction; bw_GBs = 36 N bytes / time_s
    "io": ({"impl": "string", "dir": "string", "N": "integer", "bytes": "integer", "time_s": "number",
            "bw_GBs": "number"},
           {"mem": "string", "fs": "string", "reps": "integer", "baseline": "string", "base_time_s": "number",
            "ratio": "number", "floor_GBs": "number", "raw_frac": "number", "raw_direct": "boolean",
            "copy_s": "number", "h5py_time_s": "number", "h5py_ratio": "number", "best_fixed_ratio": "number",
            "verified": "boolean"}),
    # bench/npb/npb_bench.py: one point per build (serial, omp, kycc), variant and ranks x threads;
    # ranks is the kycc ranks (1 for serial and omp), threads the threads per rank (omp: all of them)
    "npb": ({"program": "string", "class": "string", "build": "string", "variant": "string",
             "threads": "integer", "verified": "boolean"},
            {"time_s": "number", "mops": "number", "speedup": "number", "base_time_s": "number",
             "omp_time_s": "number", "ratio": "number", "pages_fetched": "integer", "read_faults": "integer",
             "write_faults": "integer", "diffs": "integer", "barriers": "integer", "invalidations": "integer",
             "timed_out": "boolean", "steps_done": "integer", "projected_time_s": "number",
             "projected_ratio": "number", "page_transfers": "integer", "pages_preloaded": "integer",
             "pages_pushed": "integer"}),
    # apps/himeno (ky_himeno, variants ky and mpi) and bench/himeno/baselines.sh (version "external": the public
    # CUDA Himenos, the original C+MPI); time_s is the timed loop, ms_per_iter = 1e3 time_s / iters
    "himeno": ({"size": "string", "grid": "string", "variant": "string", "iters": "integer", "time_s": "number",
                "mflops": "number", "gosa": "number", "ms_per_iter": "number"},
               {"dims": "string", "decomp": "string", "mem": "string", "gosa_by": "string", "pack": "integer",
                "path": "string", "phases": "object", "phases_avg": "object", "bytes_per_point": "number",
                "floor_GBs": "number", "bw_GBs": "number", "kernel_bw_GBs": "number", "roofline_pct": "number",
                "kernel_roofline_pct": "number", "block": "string", "plan_hits": "integer",
                "plan_misses": "integer", "baseline": "string", "base_time_s": "number", "ratio": "number",
                "halo_ratio": "number", "verified": "boolean", "origin": "string", "target_s": "number"}),
}

_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")


class RecordError(Exception):
    pass


def _reject_constant(name):
    raise ValueError(f"{name} is not valid JSON (a field without a value is left out)")


def parse_line(line):
    """One JSON object from one line; NaN/Infinity rejected."""
    obj = json.loads(line, parse_constant=_reject_constant)
    if not isinstance(obj, dict):
        raise ValueError("not a JSON object")
    return obj


def files_of(paths):
    """*.jsonl files named by PATHS: files as given, folders searched recursively; sorted per folder."""
    out = []
    for p in paths:
        if os.path.isdir(p):
            out += sorted(glob.glob(os.path.join(p, "**", "*.jsonl"), recursive=True))
        elif os.path.exists(p):
            out.append(p)
        else:
            raise RecordError(f"{p}: no such file or folder")
    return out


def load(paths, strict=False):
    """Records of every *.jsonl under PATHS, each with '_src' = 'file:line'. Lines that do not parse raise
    RecordError when strict, else are skipped."""
    recs = []
    for f in files_of(paths):
        with open(f, encoding="utf-8") as fh:
            for n, line in enumerate(fh, 1):
                if not line.strip():
                    continue
                try:
                    r = parse_line(line)
                except ValueError as e:
                    if strict:
                        raise RecordError(f"{f}:{n}: {e}")
                    continue
                r["_src"] = f"{f}:{n}"
                recs.append(stencil_of_gpu(r))
    return recs


def stencil_of_gpu(r):
    """ky_stencil_gpu (apps/stencil_gpu) writes its own record ("stencil_gpu": one row of its table); the
    report reads it in the stencil shape, so the weak-scaling table and the per-phase bars (seed 000 Figs.
    12-13) cover the GPU stencil too. time_s and phases are per run (the program's ms per step times its
    steps). The original fields stay."""
    if r.get("bench") != "stencil_gpu":
        return r
    g = dict(r)
    g.update(bench="stencil", stencil=f"{r.get('pts', 7)}pt", N=int(r.get("nx", 0)),
             mem="gpu-split" if r.get("node_split") else "gpu",
             time_s=float(r.get("step_ms", 0.0)) * 1e-3 * int(r.get("steps", 1)),
             gpus=int(r.get("gpus", r.get("ranks", 1))), ranks=int(r.get("gpus", r.get("ranks", 1))))
    if int(r.get("tb", 1)) > 1:  # kernels that advance tb steps per pass: a variant of their own in the tables
        g["variant"] = f"{r.get('variant', '?')}_tb{int(r['tb'])}"
    if "weak_eff" in r:
        g["eff"] = r["weak_eff"]
    if isinstance(r.get("phase_ms"), dict):
        g["phases"] = {k: v * 1e-3 * int(r.get("steps", 1)) for k, v in r["phase_ms"].items()}
    if "GBs_per_gpu" in r:
        g["bw_GBs"] = r["GBs_per_gpu"]
    if "roofline_GBs" in r:
        g["floor_GBs"] = r["roofline_GBs"]
    g["stencil_gpu"] = True
    return g


def _type_ok(v, t):
    if t == "string":
        return isinstance(v, str)
    if t == "boolean":
        return isinstance(v, bool)
    if t == "integer":
        return isinstance(v, int) and not isinstance(v, bool)
    if t == "number":
        return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)
    if t == "object":
        return isinstance(v, dict) and all(isinstance(k, str) and _type_ok(x, "number") for k, x in v.items())
    raise AssertionError(t)


def check_record(r):
    """Problems of one record (list of strings, empty when valid) and notes (unknown bench)."""
    errs, notes = [], []

    def need(fields, required):
        for name, t in fields.items():
            if name not in r:
                if required:
                    errs.append(f"missing required field '{name}' ({t})")
            elif not _type_ok(r[name], t):
                errs.append(f"field '{name}' must be {t}, is {json.dumps(r[name])}")

    need(COMMON, True)
    if isinstance(r.get("date"), str) and not _DATE.match(r["date"]):
        errs.append(f"field 'date' must be YYYY-MM-DD, is {r['date']!r}")
    if isinstance(r.get("ranks"), int) and r["ranks"] < 1:
        errs.append("field 'ranks' must be >= 1")
    bench = r.get("bench")
    if bench in SCHEMAS:
        req, opt = SCHEMAS[bench]
        need(req, True)
        need(opt, False)
    elif isinstance(bench, str):
        notes.append(f"no schema for bench '{bench}': common fields checked only")
    for name in ("lat_us", "time_s", "bw_GBs"):
        if _type_ok(r.get(name), "number") and r[name] < 0:
            errs.append(f"field '{name}' is negative")
    return errs, notes


def validate(paths, out):
    """Check every line of every *.jsonl under PATHS; print problems to OUT; return (records, errors)."""
    nrec = nerr = 0
    files = files_of(paths)
    if not files:
        print(f"validate: no *.jsonl in {' '.join(paths)}", file=out)
        return 0, 1
    seen_notes = set()
    for f in files:
        with open(f, encoding="utf-8") as fh:
            for n, line in enumerate(fh, 1):
                if not line.strip():
                    continue
                nrec += 1
                try:
                    r = parse_line(line)
                except ValueError as e:
                    print(f"{f}:{n}: not a JSON object: {e}", file=out)
                    nerr += 1
                    continue
                errs, notes = check_record(r)
                for e in errs:
                    print(f"{f}:{n}: {e}", file=out)
                nerr += bool(errs)
                for note in notes:
                    if note not in seen_notes:
                        seen_notes.add(note)
                        print(f"{f}:{n}: note: {note}", file=out)
    return nrec, nerr


def coll_algo(r):
    """A coll record's algorithm: its `algo` field, else the middle of its case "<op>_<algo>_<mem>"."""
    if isinstance(r.get("algo"), str):
        return r["algo"]
    case, op, mem = r.get("case", ""), r.get("op", ""), r.get("mem", "")
    if case.startswith(op + "_"):
        case = case[len(op) + 1:]
    if case.endswith("_" + mem):
        case = case[:-len(mem) - 1]
    return case or "?"


def size_key(r):
    """('N', n) for records with an N (halo, stencil), else ('bytes', b), else ('', None)."""
    if "N" in r:
        return ("N", r["N"])
    if "bytes" in r:
        return ("bytes", r["bytes"])
    return ("", None)


def point_key(r):
    """What identifies a point across runs: (bench, case, size, ranks)."""
    return (r.get("bench"), r.get("case"), size_key(r), r.get("ranks"))


def fmt_bytes(n):
    for unit, shift in (("GiB", 30), ("MiB", 20), ("KiB", 10)):
        if n >= (1 << shift) and n % (1 << shift) == 0:
            return f"{n >> shift} {unit}"
    return f"{n} B"


def fmt_size(sk):
    kind, v = sk
    if kind == "N":
        return f"N={v}"
    if kind == "bytes":
        return fmt_bytes(v)
    return "-"
