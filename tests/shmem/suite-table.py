#!/usr/bin/env python3
"""Markdown table of public-suite runs (run-suite.sh outputs) for docs/shmem.md: one row per test, one
column per run, and a count per column.
    suite-table.py "TITLE" "COLUMN::FILE.tsv" ...   (the first file's order sets the rows)"""
import sys


def load(path):
    rows = {}
    order = []
    for line in open(path, errors="replace"):
        parts = line.rstrip("\n").split("\t")
        if len(parts) < 2 or parts[1] not in ("pass", "fail", "n/a"):
            continue
        rows[parts[0]] = (parts[1], parts[2] if len(parts) > 2 else "")
        order.append(parts[0])
    return order, rows


def main():
    title, specs = sys.argv[1], sys.argv[2:]
    cols = []
    for spec in specs:
        name, path = spec.split("::", 1)
        cols.append((name,) + load(path))
    order = cols[0][1]
    print(f"**{title}**\n")
    print("| test | " + " | ".join(c[0] for c in cols) + " | note |")
    print("|---|" + "---|" * len(cols) + "---|")
    for t in order:
        cells, notes = [], []
        for name, _, rows in cols:
            st, detail = rows.get(t, ("", ""))
            cells.append({"pass": "pass", "fail": "**fail**", "n/a": "n/a"}.get(st, "-"))
            if st in ("n/a", "fail") and detail and detail not in notes:
                notes.append(detail.replace("|", "/"))
        print(f"| {t} | " + " | ".join(cells) + " | " + "; ".join(notes) + " |")
    counts = []
    for name, o, rows in cols:
        c = {"pass": 0, "fail": 0, "n/a": 0}
        for t in o:
            c[rows[t][0]] += 1
        counts.append(f"{c['pass']} pass, {c['fail']} fail, {c['n/a']} n/a")
    print("| **total** | " + " | ".join(counts) + " | |")


if __name__ == "__main__":
    main()
