#!/usr/bin/env python3
"""Checks a KY_TRACE file (Chrome trace JSON) written on N ranks: it parses, every rank is a process with its
name, times are non-negative and within the run, and the origin's time of day is recorded. Without --need:
the file of `ky_cg`, so spans of the comm, coll and cg layers are there on every rank with the CG phases.
With --need CAT:NAME (repeatable; NAME a prefix): those spans on every rank instead (the DSM's faults and
synchronisations from ky_stencil, the array's halo exchange and strided puts from array_halo).
Usage: check_trace.py FILE NRANKS [--need CAT:NAME ...]"""
import json
import sys


def main():
    path, nranks = sys.argv[1], int(sys.argv[2])
    need = [a.split(":", 1) for a in sys.argv[4::2]] if sys.argv[3:4] == ["--need"] else []
    if len(sys.argv) > 3:
        assert all(a == "--need" for a in sys.argv[3::2]) and need, sys.argv
    with open(path, encoding="utf-8") as f:
        d = json.load(f)
    ev = d["traceEvents"]
    assert d["otherData"]["origin_utc"].endswith("Z"), d["otherData"]
    names = {e["pid"]: e["args"]["name"] for e in ev if e.get("ph") == "M" and e["name"] == "process_name"}
    assert sorted(names) == list(range(nranks)), names
    spans = [e for e in ev if e.get("ph") == "X"]
    assert spans, "no spans"
    for e in spans:
        assert e["ts"] >= -1000 and e["dur"] >= 0, e  # aligned clocks: nothing before the origin (1 ms slack)
    for r in range(nranks):
        mine = {(e["cat"], e["name"]) for e in spans if e["pid"] == r}
        for cat, name in need:
            assert any(c == cat and n.startswith(name) for c, n in mine), (r, cat, name, sorted(mine))
        if need:
            continue
        for want in [("cg", "ky_cg"), ("cg", "spmv"), ("cg", "dot"), ("cg", "axpy"), ("cg", "allreduce"),
                     ("coll", "ky_allreduce")]:
            assert want in mine, (r, want, sorted(mine)[:20])
        if nranks > 1:
            assert any(c == "comm" for c, _ in mine), (r, "no comm spans")
            assert ("cg", "exchange (allgather/halo)") in mine, r
    span = max(e["ts"] + e["dur"] for e in spans) - min(e["ts"] for e in spans)
    print(f"check_trace: {len(spans)} spans on {nranks} ranks over {span / 1e3:.1f} ms: ok")


if __name__ == "__main__":
    main()
