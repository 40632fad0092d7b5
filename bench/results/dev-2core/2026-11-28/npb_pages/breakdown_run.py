#!/usr/bin/env python3
"""The breakdown runs (breakdown.json): with instrumentation.patch applied to the tree and the library rebuilt,
build a variant with kycc, run it under the page protocol (4 KiB pages, KY_DSM_NODE_SHARED=0, 1 thread per
rank) with KY_TMP_PAGE_HIST set, and sum over ranks the pages fetched per array (the page histogram mapped onto
kycc's allocations) and per parallel region (ky_dsm_stats deltas between region begin and end, "serial" the
rest). One JSON object per run is appended to $NPBP_OUT/results.jsonl (default /tmp/npbp/an).
usage: breakdown_run.py bench variant ranks [KEY=VAL ...] [--tp=a,b] [--tag=t] [--class=S]
  KEY=VAL: run settings (KYCC_PLACEMENT=whole); --tp: also -fkycc-threadprivate these (BT: fjac,njac)"""
import os, sys, subprocess, re, glob, collections, json
W = os.environ.get("KYOYU_ROOT") or os.path.abspath(os.path.join(os.path.dirname(__file__), *[".."] * 5))
OUT = os.environ.get("NPBP_OUT", "/tmp/npbp/an")
NPB = os.path.join(W, ".scratch", "npb", "NPB3.0-omp-C")
sys.path.insert(0, os.path.join(W, "bench", "npb"))
import npb_bench as nb  # noqa: E402
bench, variant, ranks = sys.argv[1], sys.argv[2], int(sys.argv[3])
extra = dict(a.split("=", 1) for a in sys.argv[4:] if "=" in a and not a.startswith("--"))
tp = next((a.split("=", 1)[1] for a in sys.argv[4:] if a.startswith("--tp=")), None)
tag = next((a.split("=", 1)[1] for a in sys.argv[4:] if a.startswith("--tag=")), "")
cls = next((a.split("=", 1)[1] for a in sys.argv[4:] if a.startswith("--class=")), "S")
work = OUT + "/work" + ("-tp" if tp else "")
os.makedirs(work, exist_ok=True)
env = dict(os.environ, KYCC_KYOYU_BUILD=W + "/build")
if tp:
    env["KYCC_THREADPRIVATE"] = tp.replace(",", " ")
exe = os.path.join(work, "%s.%s.kycc-%s" % (bench, cls, variant))
stamp = exe + ".built"
if not os.path.exists(stamp):
    d, files = nb.prepare(NPB, work, bench, cls, variant)
    nb.build("kycc", d, files, exe, W + "/tools/kycc", env)
    open(stamp, "w").write("")
name = "%s.%s.%s.%d%s" % (bench, cls, variant, ranks, tag)
hp = OUT + "/h/" + name
os.makedirs(OUT + "/h", exist_ok=True)
for f in glob.glob(hp + ".[0-9]*"):
    os.remove(f)
renv = dict(env, KY_STATS="1", KY_PAGE_SIZE="4K", KY_DSM_NODE_SHARED="0", OMP_NUM_THREADS="1", KY_TMP_PAGE_HIST=hp, **extra)
r = subprocess.run([W + "/build/bin/kyrun", "-n", str(ranks), exe], env=renv, cwd=W, capture_output=True, text=True)
open(hp + ".out", "w").write(r.stdout); open(hp + ".err", "w").write(r.stderr)
ok = "SUCCESSFUL" in r.stdout
stats = [list(map(int, s)) for s in nb.STAT.findall(r.stderr)]
tot = {n: sum(s[k] for s in stats) for k, n in enumerate(nb.STAT_NAMES)}
vars_ = []
for l in r.stderr.splitlines():
    m = re.match(r"KYVAR (\S+) (0x[0-9a-f]+) (\d+)", l)
    if m:
        vars_.append((int(m.group(2), 16), int(m.group(3)), m.group(1).split("/")[-1]))
vars_.sort()
src = open(glob.glob(os.path.join(work, "src-%s-%s" % (bench, variant), bench.upper(), "header.h"))[0]).read().splitlines()
def vname(w):
    f, ln = w.split(":")
    line = src[int(ln) - 1]
    m = re.findall(r"([A-Za-z_]\w*)\s*\[", line)
    return m[0] if m else ("small" if "grid_points" in line else w)
arr = collections.Counter()
for f in glob.glob(hp + ".[0-9]*"):
    for l in open(f):
        a, c = l.split(); a = int(a, 16); c = int(c)
        nm = "?"
        for s, n, w in vars_:
            if s - 4096 < a < s + n:
                nm = vname(w); break
        arr[nm] += c
reg = collections.defaultdict(lambda: [0, 0])
for l in r.stderr.splitlines():
    m = re.match(r"KYREG (\d+) (\S+) (\d+) (\d+)", l)
    if m:
        k = m.group(2).split("/")[-1]
        reg[k][0] += int(m.group(3)); reg[k][1] += int(m.group(4))
res = dict(bench=bench, cls=cls, variant=variant, ranks=ranks, extra=extra, tp=tp, verified=ok, fetched=tot.get("pages_fetched"),
           diffs=tot.get("diffs"), transfers=tot.get("pages_fetched", 0) + tot.get("pages_preloaded", 0) + tot.get("pages_pushed", 0),
           arrays=dict(arr.most_common()), regions={k: v for k, v in sorted(reg.items(), key=lambda x: -x[1][0])})
open(OUT + "/results.jsonl", "a").write(json.dumps(res) + "\n")
print(name, "verified" if ok else "NOT VERIFIED", "fetched", res["fetched"], "diffs", res["diffs"])
T = max(1, res["fetched"] or 1)
print("  arrays:", ", ".join("%s %d (%.0f%%)" % (k, v, 100 * v / T) for k, v in arr.most_common(8)))
print("  regions:", ", ".join("%s %d/%d" % (k, v[0], v[1]) for k, v in list(res["regions"].items())[:10]))
