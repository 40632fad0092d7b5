#!/usr/bin/env python3
"""Median and best of the interleaved rounds in a folder of this run (ucx113/ or ucx122/): summarize.py DIR"""
import collections
import glob
import json
import os
import statistics as S
import sys

D = collections.defaultdict(list)
for f in sorted(glob.glob(os.path.join(sys.argv[1], "*.jsonl"))):
    k = os.path.basename(f)[:-6]
    for line in open(f):
        j = json.loads(line)
        op = j.get("op") or j.get("test")
        if op == "am_long_pp":
            continue
        D[(k, op, j["bytes"])].append((j["lat_us"], j["bw_GBs"]))
for key in sorted(D):
    lat = [x[0] for x in D[key]]
    bw = [x[1] for x in D[key]]
    print(f"{key[0]:12s} {key[1]:12s} {key[2]:>9d}  n={len(lat)}  us median {S.median(lat):9.3f} best {min(lat):9.3f}"
          f"  GB/s median {S.median(bw):6.2f} best {max(bw):6.2f}")
