#!/usr/bin/env python3
"""CTest settings.docs: the settings tables in docs/api.md ("Settings") and docs/dsm.md ("Settings") agree
with the one table in src/runtime/config.c, as `kyinfo` prints it, so the copies a reader sees cannot drift.

    check_settings_docs.py KYINFO SOURCE_DIR

docs/api.md lists every setting, with its type and default, and nothing else. docs/dsm.md lists the global
space's settings (KY_GAS_*, KY_PAGE_SIZE, KY_DSM_*, KY_STATS), each with the table's default. An empty
default may be written as an empty cell or a note in parentheses ("(stderr)")."""
import os
import re
import subprocess
import sys

DSM = re.compile(r"KY_(GAS_|PAGE_SIZE$|DSM_|STATS$)")


def table_from_kyinfo(kyinfo):
    # kyinfo prints "NAME = value type (default D[, set in environment])" then the doc; run it with no KY_*
    # variable in the environment so the value column is the default.
    env = {k: v for k, v in os.environ.items() if not k.startswith("KY_")}
    out = subprocess.run([kyinfo], env=env, check=True, capture_output=True, text=True).stdout
    table = {}
    for line in out.splitlines():
        m = re.match(r"(KY_[A-Z0-9_]+)\s+=\s.*?\s(int|float|size|string|list)\s+\(default (.*)\)$", line)
        if m:
            table[m.group(1)] = (m.group(2), m.group(3))
    if not table:
        sys.exit("kyinfo printed no settings:\n" + out)
    return table


def doc_rows(path, columns):
    """Rows `| `KY_X` | ... |` of the table under the heading "## Settings..." in path."""
    rows, inside = {}, False
    with open(path, encoding="utf-8") as f:
        for line in f:
            if line.startswith("## "):
                inside = line.startswith("## Settings")
                continue
            m = re.match(r"\|\s*`(KY_[A-Z0-9_]+)`\s*\|", line)
            if inside and m:
                cells = [c.strip() for c in line.strip().strip("|").split("|")]
                rows[m.group(1)] = cells[1:1 + columns]
    return rows


def same_default(doc, table):
    return doc == table or (table == "" and (doc == "" or doc.startswith("(")))


def main():
    kyinfo, src = sys.argv[1], sys.argv[2]
    table = table_from_kyinfo(kyinfo)
    errors = []

    api = doc_rows(os.path.join(src, "docs", "api.md"), 2)
    for name in sorted(set(table) - set(api)):
        errors.append(f"docs/api.md: setting {name} is missing from the Settings table")
    for name in sorted(set(api) - set(table)):
        errors.append(f"docs/api.md: {name} is in the Settings table but not in src/runtime/config.c")
    for name in sorted(set(api) & set(table)):
        (typ, default), (dtyp, ddefault) = table[name], api[name]
        if dtyp != typ:
            errors.append(f"docs/api.md: {name} has type {dtyp}, the table says {typ}")
        if not same_default(ddefault, default):
            errors.append(f"docs/api.md: {name} has default {ddefault!r}, the table says {default!r}")

    dsm = doc_rows(os.path.join(src, "docs", "dsm.md"), 1)
    for name in sorted(n for n in table if DSM.match(n) and n not in dsm):
        errors.append(f"docs/dsm.md: setting {name} is missing from the Settings table")
    for name, (ddefault,) in sorted(dsm.items()):
        if name not in table:
            errors.append(f"docs/dsm.md: {name} is in the Settings table but not in src/runtime/config.c")
        elif not same_default(ddefault, table[name][1]):
            errors.append(f"docs/dsm.md: {name} has default {ddefault!r}, the table says {table[name][1]!r}")

    for e in errors:
        print(e)
    print(f"settings.docs: {len(table)} settings, {len(api)} in docs/api.md, {len(dsm)} in docs/dsm.md: "
          + ("FAIL" if errors else "PASS"))
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
