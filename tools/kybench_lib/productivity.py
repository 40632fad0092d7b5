"""kybench's productivity suite and table: seed 000 Table 1 for Kyoyu (apps/productivity/productivity.py).

One 5-point 2-D stencil written six ways (sequential with OpenMP, MPI, sms.h, MpC, SMint, Kyoyu arrays):
lines as the seed counts them, lines against the sequential version, the time of the step loop and the
time against MPI's (seed 000's "relative execution time"), every version checked against the sequential
result. `kybench run productivity` runs the script (it builds and launches its own programs); `kybench
report` renders the block `productivity-table`. This module adds the suite, the record schema and the block
to the tables of suites.py, records.py and report.py when kybench_lib is imported."""
from . import records, report, suites

RANGES = {"full": "--ranks 4 --reps 5 --n 4096 --nt 100", "cpu": "--ranks 4 --reps 5 --n 4096 --nt 100",
          "quick": "--ranks 2 --reps 1 --n 512 --nt 20"}
SCHEMA = ({"impl": "string", "lines": "integer", "lines_vs_seq": "number", "time_s": "number", "N": "integer",
           "steps": "integer", "threads": "integer", "verified": "boolean"},
          {"name": "string", "reps": "integer", "baseline": "string", "base_time_s": "number", "ratio": "number",
           "load_before": "string", "load_after": "string", "median_s": "number"})
ORDER = ["seq", "mpi", "sms", "mpc", "smint", "smint1", "array"]


def table(recs):
    """The seed's Table 1: a row per version of the latest run (per rank count)."""
    rs = [r for r in recs if r.get("bench") == "productivity"]
    if not rs:
        return None
    parts = []
    for ranks in sorted({r["ranks"] for r in rs}):
        g = {r["impl"]: r for r in rs if r["ranks"] == ranks}
        any_r = next(iter(g.values()))
        lines = [f"N = {any_r['N']}, {any_r['steps']} steps, {ranks} ranks x {any_r['threads']} threads, best of "
                 f"{any_r.get('reps', 1)} (load average {any_r.get('load_before', '?')} before, "
                 f"{any_r.get('load_after', '?')} after)", "",
                 "| version | lines | lines vs sequential | time (s) | time vs MPI | verified |", "|---|---|---|---|---|---|"]
        for impl in sorted(g, key=lambda k: ORDER.index(k) if k in ORDER else len(ORDER)):
            r = g[impl]
            ratio = f"{r['ratio']:.2f}" if "ratio" in r else "-"
            lines.append(f"| {r.get('name', impl)} | {r['lines']} | {r['lines_vs_seq']:.2f} | {r['time_s']:.3f} | "
                         f"{ratio} | {'yes' if r['verified'] else 'NO'} |")
        parts.append("\n".join(lines))
    return "\n\n".join(parts)


def register():
    records.SCHEMAS.setdefault("productivity", SCHEMA)
    if "productivity" not in suites.SUITES:
        try:   # a script case: it builds and launches its own runs and gets --build, --case and --json
            suites.SUITES["productivity"] = [suites.Case("productivity", "apps/productivity/productivity.py",
                                                         "--bench", RANGES, ranks=1, script=True)]
        except TypeError:   # a kybench without script cases: the report still renders the records
            pass
    if not any(b[0] == "productivity-table" for b in report.BLOCKS):
        report.BLOCKS.append(("productivity-table", table, None, "Productivity (seed 000 Table 1)"))


register()
