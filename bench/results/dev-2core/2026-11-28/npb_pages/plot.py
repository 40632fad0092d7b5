#!/usr/bin/env python3
"""docs/figures/npb_{bt,sp}_S_{pages,speedup}.png and npb_bt_W_{pages,speedup}.png from this folder's records
(kycc's default placement; the KYCC_PLACEMENT=whole runs are in the tables only), with kybench's renderer.
Needs matplotlib (`make deps`).    python3 plot.py [FIGURE_DIR]"""
import glob
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, *[".."] * 5))
sys.path.insert(0, os.path.join(ROOT, "tools"))
from kybench_lib import figures  # noqa: E402

recs = []
for f in sorted(glob.glob(os.path.join(HERE, "*.jsonl"))):
    if "whole" not in f and "cg_" not in f:
        recs += [json.loads(line) for line in open(f) if line.strip()]
out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "docs", "figures")
for name, caption in figures.npb(recs, out):
    print(os.path.join(out, name), "-", caption)
