"""kybench timeline: draw a KY_TRACE file (Chrome trace JSON, one process per rank) as a figure: one row per
rank and track (threads, GPU stream), one bar per span coloured by its name, over a window of the run
(default: the middle ten CG iterations of the busiest track, or the whole run when it is short). Used by
`kybench timeline FILE` and by `kybench report` for every *.trace.json beside the records it reads."""
import glob
import json
import os

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

# spans that contain others are drawn thin behind them (a whole solve, a collective around its messages)
_OUTER = {"ky_cg", "ky_coll_wait"}


def load(path):
    with open(path, encoding="utf-8") as f:
        d = json.load(f)
    ev = d.get("traceEvents", [])
    spans = [e for e in ev if e.get("ph") == "X"]
    procs = {e["pid"]: e["args"]["name"] for e in ev if e.get("ph") == "M" and e.get("name") == "process_name"}
    threads = {(e["pid"], e["tid"]): e["args"]["name"] for e in ev
               if e.get("ph") == "M" and e.get("name") == "thread_name"}
    return d.get("otherData", {}), spans, procs, threads


def _window(spans, iters=10):
    """Around the middle of the run: `iters` repetitions of the most frequent phase of the busiest track."""
    if not spans:
        return 0.0, 1.0
    t0 = min(e["ts"] for e in spans)
    t1 = max(e["ts"] + e["dur"] for e in spans)
    names = {}
    for e in spans:
        if e["name"] not in _OUTER:
            names[e["name"]] = names.get(e["name"], 0) + 1
    if not names:
        return t0, t1
    top = max(names, key=names.get)
    marks = sorted(e["ts"] for e in spans if e["name"] == top and e["pid"] == spans[0]["pid"])
    if len(marks) <= iters + 1:
        return t0, t1
    mid = len(marks) // 2
    lo, hi = marks[max(0, mid - iters // 2)], marks[min(len(marks) - 1, mid + iters // 2)]
    return lo, hi


def draw(path, png, window=None, title=None):
    """Render PATH into PNG; returns the caption."""
    other, spans, procs, threads = load(path)
    lo, hi = window or _window(spans)
    rows = sorted({(e["pid"], e["tid"]) for e in spans})
    names = sorted({e["name"] for e in spans})
    cmap = plt.get_cmap("tab20")
    colour = {n: cmap(i % 20) for i, n in enumerate(names)}
    fig, ax = plt.subplots(figsize=(11, 0.55 * len(rows) + 1.8))
    used = set()
    # nested spans (a CG phase, the collective inside it, the puts inside that) drawn as ever thinner bars
    height = {"cg": 0.8, "gpu": 0.8, "coll": 0.5, "comm": 0.28}
    order = {"cg": 0, "gpu": 0, "coll": 1, "comm": 2}
    for y, (pid, tid) in enumerate(rows):
        mine = [e for e in spans if (e["pid"], e["tid"]) == (pid, tid) and e["ts"] + e["dur"] >= lo and e["ts"] <= hi]
        for e in sorted(mine, key=lambda e: (e["name"] not in _OUTER, order.get(e["cat"], 1))):
            outer = e["name"] in _OUTER
            h = 0.95 if outer else height.get(e["cat"], 0.5)
            ax.broken_barh([(e["ts"] - lo, max(e["dur"], (hi - lo) * 1e-4))], (y - h / 2, h),
                           facecolors=colour[e["name"]], alpha=0.18 if outer else 0.95, linewidth=0)
            used.add(e["name"])
    ax.set_yticks(range(len(rows)))
    ax.set_yticklabels([f"{procs.get(p, f'rank {p}')}: {threads.get((p, t), f'track {t}')}" for p, t in rows],
                       fontsize=7)
    ax.invert_yaxis()
    ax.set_xlim(0, hi - lo)
    ax.set_xlabel(f"µs from {lo:.0f} µs after the trace's origin ({other.get('origin_utc', '?')})")
    handles = [plt.Rectangle((0, 0), 1, 1, color=colour[n]) for n in names if n in used]
    ax.legend(handles, [n for n in names if n in used], fontsize=7, ncol=4, loc="upper center",
              bbox_to_anchor=(0.5, -0.18), frameon=False)
    caption = title or f"Timeline of {os.path.basename(path)}: {len(procs)} ranks, clocks aligned on rank 0"
    ax.set_title(caption, fontsize=9)
    fig.tight_layout()
    fig.savefig(png, dpi=130)
    plt.close(fig)
    return caption


def for_report(recs, folder):
    """Report renderer: every *.trace.json in the folders the records came from."""
    dirs = sorted({os.path.dirname(r["_src"].rsplit(":", 1)[0]) for r in recs})
    out = []
    for d in dirs:
        for t in sorted(glob.glob(os.path.join(d, "*.trace.json"))):
            name = "timeline_" + os.path.basename(t).replace(".trace.json", ".png")
            out.append((name, draw(t, os.path.join(folder, name))))
    return out
