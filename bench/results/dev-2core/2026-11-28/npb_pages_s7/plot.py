#!/usr/bin/env python3
"""docs/figures/npb_{bt,sp}_S_{pages,speedup}.png and npb_bt_W_{pages,speedup}.png: SP from this folder (the
affinity variant with the y and z lhs loops scheduled by their planes' homes) and BT class W on 8 ranks, the
rest of BT from ../npb_pages (its patches did not change), with kybench's renderer. Needs matplotlib (`make deps`).
    python3 plot.py [FIGURE_DIR]"""
import glob
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, *[".."] * 5))
sys.path.insert(0, os.path.join(ROOT, "tools"))
from kybench_lib import figures  # noqa: E402

OLD = os.path.join(HERE, "..", "npb_pages")
files = [f for f in sorted(glob.glob(os.path.join(OLD, "bt_*.jsonl"))) if "whole" not in f]
files += [os.path.join(HERE, "bt_W8.jsonl"), os.path.join(HERE, "sp_S.jsonl")]
recs = []
for f in files:
    recs += [json.loads(line) for line in open(f) if line.strip()]
out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "docs", "figures")
for name, caption in figures.npb(recs, out):
    print(os.path.join(out, name), "-", caption)
