#!/usr/bin/env python3
"""Tables of docs/performance.md's "Page transfers per variant (development machine, 2026-11-28)" from this
folder: page transfers per variant (npb_bench's records, *.jsonl) and where they come from (breakdown.json,
the instrumented runs: pages fetched per array and per parallel region, all ranks).
    python3 summary.py            # Markdown on stdout"""
import glob
import json
import os

HERE = os.path.dirname(os.path.abspath(__file__))
ORDER = ("none", "mapping", "affinity", "update")


def load():
    recs = []
    for f in sorted(glob.glob(os.path.join(HERE, "*.jsonl"))):
        recs += [json.loads(line) for line in open(f) if line.strip()]
    return recs


def placement(r):
    return "whole" if "KYCC_PLACEMENT=whole" in (r.get("settings") or "") else "first"


def transfers_table(recs, prog, cls, pl):
    ks = [r for r in recs if r["program"] == prog and r["class"] == cls and r["build"] == "kycc"
          and placement(r) == pl]
    if not ks:
        return None
    serial = next((r["time_s"] for r in recs if r["program"] == prog and r["class"] == cls
                   and r["build"] == "serial" and r.get("verified")), None)
    ranks = sorted({r["ranks"] for r in ks})
    at = {(r["variant"], r["ranks"]): r for r in ks}
    variants = [v for v in ORDER if any((v, n) in at for n in ranks)]
    head = "| %s class %s, %s placement | " % (prog.upper(), cls, pl) + " | ".join(
        "%d ranks: fetched / written back / speed-up" % n for n in ranks) + " |"
    out = [head, "|" + "---|" * (len(ranks) + 1)]
    for v in variants:
        row = []
        for n in ranks:
            r = at.get((v, n))
            if r is None:
                row.append("-")
                continue
            ok = "" if r["verified"] else " (not verified)"
            sp = "%.2gx" % (serial / r["time_s"]) if serial and r.get("time_s") else "-"
            row.append("%s / %s / %s%s" % (format(r["page_transfers"], ","), format(r["diffs"], ","), sp, ok))
        out.append("| %s | %s |" % (v, " | ".join(row)))
    for v in variants[1:]:
        row = []
        for n in ranks:
            a, b = at.get(("none", n)), at.get((v, n))
            row.append("%.2fx / %.2fx" % (a["page_transfers"] / b["page_transfers"], a["diffs"] / b["diffs"])
                       if a and b else "-")
        out.append("| none / %s | %s |" % (v, " | ".join(row)))
    return "\n".join(out)


REGIONS = {"bt": {"205": "compute_rhs", "208": "x_solve", "211": "y_solve", "214": "z_solve", "217": "add"},
           "sp": {"1302": "compute_rhs", "2323": "x_solve", "2556": "y_solve", "2780": "z_solve"}}
TRANSPOSED = {"bt": ("x_solve",), "sp": ("x_solve", "y_solve", "z_solve")}


def breakdown_table(prog):
    rows = [b for b in json.load(open(os.path.join(HERE, "breakdown.json"))) if b["bench"] == prog
            and not b.get("tp") and not b["extra"].get("KYCC_PLACEMENT") and b["variant"] in ("none", "affinity")]
    if not rows:
        return None
    out = ["| %s class S | ranks | fetched | of which %s | the rest | top arrays |" % (
        prog.upper(), " + ".join(TRANSPOSED[prog])), "|---|---|---|---|---|---|"]
    for b in sorted(rows, key=lambda b: (b["ranks"], ORDER.index(b["variant"]))):
        reg = {REGIONS[prog].get(k.split(":")[-1], k): v[0] for k, v in b["regions"].items()}
        tr = sum(reg.get(t, 0) for t in TRANSPOSED[prog])
        arrays = ", ".join("%s %d%%" % (k if k != "grid_points" else "1-D buffers", round(100 * v / b["fetched"]))
                           for k, v in list(b["arrays"].items())[:4])
        out.append("| %s | %d | %s | %s | %s | %s |" % (b["variant"], b["ranks"], format(b["fetched"], ","),
                                                        format(tr, ","), format(b["fetched"] - tr, ","), arrays))
    return "\n".join(out)


def main():
    recs = load()
    for prog, cls in (("bt", "S"), ("sp", "S"), ("bt", "W"), ("cg", "S")):
        for pl in ("first", "whole"):
            t = transfers_table(recs, prog, cls, pl)
            if t:
                print(t + "\n")
    for prog in ("bt", "sp"):
        t = breakdown_table(prog)
        if t:
            print(t + "\n")


if __name__ == "__main__":
    main()
