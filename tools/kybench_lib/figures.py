"""kybench figures: PNG renderers of `kybench report` (matplotlib, Agg backend), in the style of the seeds.

  comm      latency and bandwidth against message size, Kyoyu beside its baselines, log-log, one figure per
            memory/path (pingpong_<mem>_<path>.png); halo face time against N (halo_<mem>_<path>.png)
  coll      latency against message size per operation, memory and rank count, algorithms beside MPI/NCCL
  stencil   weak scaling (time and efficiency against ranks) and per-phase stacked bars (seed 000 Figs. 12-13)
  dsm       pages fetched and time per variant against ranks, grouped bars (seed 003 Figs. 3 and 5)
  npb       NPB on kycc: page transfers and speed-up over serial per variant against ranks, grouped bars, one
            pair per program and class (seed 003 Figs. 2-5)
  io        write and read bandwidth against snapshot size, every path beside h5py, plain HDF5 and the
            disk's raw O_DIRECT floor (seed 002's GDS figures)

Every renderer takes the records of one machine kind and a folder, writes its PNGs and returns
[(file name, caption)]; every title names the machine kind, the date and the baseline."""
import os

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from .records import coll_algo, fmt_bytes  # noqa: E402

DPI = 90
COLORS = plt.rcParams["axes.prop_cycle"].by_key()["color"]


def _stamp(recs):
    kinds = sorted({r.get("kind", "?") for r in recs})
    dates = sorted({r.get("date", "?") for r in recs})
    return f"{', '.join(kinds)}, {dates[0] if len(dates) == 1 else dates[0] + '..' + dates[-1]}"


def _two_lines(title):
    """The title with its '(kind, date)' stamp on a second line (single-panel figures are narrow)."""
    i = title.rfind(" (")
    return title[:i] + "\n" + title[i + 1:] if i > 0 else title


def _save(fig, folder, name):
    fig.tight_layout()
    fig.savefig(os.path.join(folder, name), dpi=DPI)
    plt.close(fig)
    return name


def _size_axis(ax, xs):
    ax.set_xscale("log", base=2)
    xs = sorted(set(xs))
    ticks = [x for x in xs if x in (8, 64, 512, 4096, 32768, 1 << 18, 1 << 21, 1 << 24, 1 << 27)]
    for end in (xs[0], xs[-1]):
        if all(max(end, t) / min(end, t) >= 4 for t in ticks):
            ticks.append(end)
    ticks.sort()
    ax.set_xticks(ticks)
    ax.set_xticklabels([fmt_bytes(t).replace(" ", "") for t in ticks], fontsize=7)
    ax.minorticks_off()
    ax.grid(True, which="major", alpha=0.3)


def _series(recs, key):
    pts = sorted(recs, key=lambda r: r[key])
    return [r[key] for r in pts], pts


def comm_pingpong(recs, folder):
    out = []
    groups = {}
    for r in recs:
        if r.get("bench") == "pingpong":
            groups.setdefault((r["mem"], r["path"]), {}).setdefault(r["op"], []).append(r)
    for (mem, path), ops in sorted(groups.items()):
        allr = [r for v in ops.values() for r in v]
        fig, (al, ab) = plt.subplots(1, 2, figsize=(10, 4))
        bases = {}
        for i, op in enumerate(sorted(ops)):
            xs, pts = _series(ops[op], "bytes")
            c = COLORS[i % len(COLORS)]
            al.plot(xs, [r["lat_us"] for r in pts], "-o", ms=3, color=c, label=f"Kyoyu {op}")
            ab.plot(xs, [r["bw_GBs"] for r in pts], "-o", ms=3, color=c, label=f"Kyoyu {op}")
            b = [r for r in pts if "base_lat_us" in r]
            if b and pts[0].get("baseline") not in bases:
                bases[pts[0]["baseline"]] = b
        for j, (name, b) in enumerate(sorted(bases.items())):
            ls = ["--", "-."][j % 2]
            xs = [r["bytes"] for r in b]
            al.plot(xs, [r["base_lat_us"] for r in b], ls, color="0.25", label=name)
            ab.plot(xs, [r["base_bw_GBs"] for r in b], ls, color="0.25", label=name)
        fl = [r for r in sorted(ops.get("put_pp", []), key=lambda r: r["bytes"]) if "floor_us" in r]
        if fl:
            al.plot([r["bytes"] for r in fl], [r["floor_us"] for r in fl], ":", color="k", label="floor")
        fg = [r["floor_GBs"] for r in allr if "floor_GBs" in r]
        if fg:
            ab.axhline(max(fg), ls=":", color="k", label=f"floor {max(fg):.1f} GB/s")
        xs = [r["bytes"] for r in allr]
        for ax, yl in ((al, "one-way time per message (µs)"), (ab, "bandwidth (GB/s)")):
            _size_axis(ax, xs)
            ax.set_yscale("log")
            ax.set_xlabel("message size")
            ax.set_ylabel(yl)
        al.legend(fontsize=7)
        ab.legend(fontsize=7, loc="lower right")
        title = (f"pingpong, {mem} memory, {path} path: Kyoyu vs {' / '.join(sorted(bases)) or 'no baseline'}"
                 f" ({_stamp(allr)})")
        fig.suptitle(title, fontsize=10)
        out.append((_save(fig, folder, f"pingpong_{mem}_{path}.png"), title))
    return out


def comm_halo(recs, folder):
    out = []
    groups = {}
    for r in recs:
        if r.get("bench") == "halo":
            groups.setdefault((r["mem"], r["path"]), {}).setdefault(r["face"], []).append(r)
    for (mem, path), faces in sorted(groups.items()):
        allr = [r for v in faces.values() for r in v]
        fig, ax = plt.subplots(figsize=(6.5, 4.2))
        bases = sorted({r["baseline"] for r in allr})
        for i, face in enumerate(sorted(faces)):
            xs, pts = _series(faces[face], "N")
            c = COLORS[i % len(COLORS)]
            ax.plot(xs, [r["lat_us"] for r in pts], "-o", ms=3, color=c, label=f"Kyoyu {face}")
            b = [r for r in pts if "base_lat_us" in r]
            if b:
                ax.plot([r["N"] for r in b], [r["base_lat_us"] for r in b], "--", color=c, label=f"baseline {face}")
        ns = sorted({r["N"] for r in allr})
        ax.set_xscale("log", base=2)
        ax.set_xticks(ns)
        ax.set_xticklabels([str(n) for n in ns])
        ax.minorticks_off()
        ax.set_yscale("log")
        ax.grid(True, alpha=0.3)
        ax.set_xlabel("N (array N³ doubles; face = N² doubles)")
        ax.set_ylabel("time per two-way face exchange (µs)")
        ax.legend(fontsize=7, ncol=2)
        title = f"halo faces, {mem} memory, {path} path: Kyoyu vs {' / '.join(bases)} ({_stamp(allr)})"
        ax.set_title(_two_lines(title), fontsize=9)
        out.append((_save(fig, folder, f"halo_{mem}_{path}.png"), title))
    return out


def coll(recs, folder):
    """Per (op, mem), the largest rank count: µs per call against bytes (left) and bus bandwidth against bytes
    (right, with the link floor where the records carry one), one line per algorithm and baseline."""
    out = []
    groups = {}
    bench = "coll" if any(r.get("bench") == "coll" for r in recs) else "coll_seed"
    for r in recs:
        if r.get("bench") == bench:
            groups.setdefault((r["op"], r["mem"]), []).append(dict(r, algo=coll_algo(r)))
    for (op, mem), g in sorted(groups.items()):
        p = max(r["ranks"] for r in g)
        g = [r for r in g if r["ranks"] == p]
        fig, (ax, bx) = plt.subplots(1, 2, figsize=(12, 4.2))
        algos = sorted({r["algo"] for r in g})
        for i, a in enumerate(algos):
            xs, pts = _series([r for r in g if r["algo"] == a], "bytes")
            c = COLORS[i % len(COLORS)]
            ax.plot(xs, [r["lat_us"] for r in pts], "-o", ms=3, color=c, label=f"Kyoyu {a}")
            bw = [(x, r.get("busbw_GBs") or r.get("bw_GBs")) for x, r in zip(xs, pts)]
            bw = [(x, v) for x, v in bw if v]
            if bw:
                bx.plot([x for x, _ in bw], [v for _, v in bw], "-o", ms=3, color=c, label=f"Kyoyu {a}")
        base, base_bw = {}, {}
        for r in g:
            b = r.get("baselines") if isinstance(r.get("baselines"), dict) else (
                {r["baseline"]: r["base_lat_us"]} if "base_lat_us" in r and "baseline" in r else {})
            for name, us in b.items():
                base.setdefault(name, {})[r["bytes"]] = us
            if r.get("baseline") and r.get("base_bw_GBs"):
                base_bw.setdefault(r["baseline"], {})[r["bytes"]] = r["base_bw_GBs"]
        for j, (name, pts) in enumerate(sorted(base.items())):
            xs = sorted(pts)
            ax.plot(xs, [pts[x] for x in xs], ["--", "-.", ":"][j % 3], color="0.2", label=name)
        for j, (name, pts) in enumerate(sorted(base_bw.items())):
            xs = sorted(pts)
            bx.plot(xs, [pts[x] for x in xs], ["--", "-.", ":"][j % 3], color="0.2", label=name)
        floors = sorted({r["floor_GBs"] for r in g if r.get("floor_GBs")})
        if floors:
            bx.axhline(floors[-1], color="0.5", lw=0.8, ls=":", label=f"link floor {floors[-1]:.0f} GB/s")
        for a_ in (ax, bx):
            _size_axis(a_, [r["bytes"] for r in g])
            a_.set_xlabel("message size (bytes per rank)" if op == "allgather" else "message size")
            a_.legend(fontsize=7)
        ax.set_yscale("log")
        ax.set_ylabel("time per call (µs)")
        bx.set_yscale("log")
        bx.set_ylabel("bus bandwidth (GB/s, nccl-tests)")
        title = f"{op}, {mem} memory, {p} ranks: Kyoyu vs {' / '.join(sorted(base)) or 'no baseline'} ({_stamp(g)})"
        fig.suptitle(_two_lines(title), fontsize=9)
        out.append((_save(fig, folder, f"coll_{op}_{mem}.png"), title))
    return out


def stencil(recs, folder):
    """Weak scaling (time and efficiency against ranks, per variant) and per-phase stacked bars, one panel per
    variant (seed 000 Figs. 12-13), for each (stencil, N, mem)."""
    out = []
    groups = {}
    for r in recs:
        if r.get("bench") == "stencil":
            groups.setdefault((r["stencil"], r["N"], r["mem"]), []).append(r)
    for (st, n, mem), g in sorted(groups.items()):
        variants = sorted({r["variant"] for r in g})
        ranks = sorted({r["ranks"] for r in g})
        base = sorted({r["baseline"] for r in g if "baseline" in r})
        tag = f"{st} stencil, N={n} per rank, {mem}"
        fig, (at, ae) = plt.subplots(1, 2, figsize=(10, 4))
        for i, v in enumerate(variants):
            xs, pts = _series([r for r in g if r["variant"] == v], "ranks")
            c = COLORS[i % len(COLORS)]
            at.plot(xs, [r["time_s"] for r in pts], "-o", ms=4, color=c, label=v)
            eff = [r.get("eff", pts[0]["time_s"] / r["time_s"]) for r in pts]
            ae.plot(xs, [100 * e for e in eff], "-o", ms=4, color=c, label=v)
        for ax in (at, ae):
            ax.set_xscale("log", base=2)
            ax.set_xticks(ranks)
            ax.set_xticklabels([str(p) for p in ranks])
            ax.minorticks_off()
            ax.set_xlabel("ranks (GPUs)")
            ax.grid(True, alpha=0.3)
        at.set_ylabel("time per run (s)")
        at.set_ylim(bottom=0)
        ae.set_ylabel("weak-scaling efficiency (%)")
        ae.set_ylim(0, 110)
        at.legend(fontsize=7)
        title = f"{tag}: weak scaling, baseline {' / '.join(base) or '-'} ({_stamp(g)})"
        fig.suptitle(title, fontsize=10)
        stem = f"stencil_{st}_N{n}_{mem}"
        out.append((_save(fig, folder, f"{stem}_weak.png"), title))

        phased = [r for r in g if isinstance(r.get("phases"), dict)]
        if not phased:
            continue
        phases = []
        for r in phased:
            phases += [p for p in r["phases"] if p not in phases]
        pv = [v for v in variants if any(r["variant"] == v for r in phased)]
        fig, axes = plt.subplots(1, len(pv), figsize=(3.6 * len(pv) + 1, 4), sharey=True, squeeze=False)
        for ax, v in zip(axes[0], pv):
            pts = sorted([r for r in phased if r["variant"] == v], key=lambda r: r["ranks"])
            xs = list(range(len(pts)))
            bottom = [0.0] * len(pts)
            for k, ph in enumerate(phases):
                h = [r["phases"].get(ph, 0.0) for r in pts]
                ax.bar(xs, h, bottom=bottom, color=COLORS[k % len(COLORS)], label=ph, width=0.6)
                bottom = [b + x for b, x in zip(bottom, h)]
            ax.set_xticks(xs)
            ax.set_xticklabels([str(r["ranks"]) for r in pts])
            ax.set_xlabel("ranks (GPUs)")
            ax.set_title(v, fontsize=9)
            ax.grid(True, axis="y", alpha=0.3)
        axes[0][0].set_ylabel("time per run (s)")
        axes[0][-1].legend(fontsize=7)
        title = f"{tag}: time per phase, baseline {' / '.join(base) or '-'} ({_stamp(phased)})"
        fig.suptitle(title, fontsize=10)
        out.append((_save(fig, folder, f"{stem}_phases.png"), title))
    return out


def dsm(recs, folder):
    """Pages fetched per variant against ranks, grouped bars, one figure per application."""
    out = []
    groups = {}
    for r in recs:
        if r.get("bench") == "dsm":
            groups.setdefault(r["app"], []).append(r)
    for app, g in sorted(groups.items()):
        variants = sorted({r["variant"] for r in g})
        ranks = sorted({r["ranks"] for r in g})
        at = {(r["variant"], r["ranks"]): r for r in g}
        base = sorted({r["baseline"] for r in g if "baseline" in r})
        for field, ylabel, what, fname in (
                ("pages_fetched", "pages fetched (all ranks)", "page transfers", "pages"),
                ("time_s", "seconds per run (slowest rank)", "time", "time")):
            # grouped bars: one group per rank count, one bar per variant (the baseline is one of them)
            fig, ax = plt.subplots(figsize=(6.5, 4.2))
            w = 0.8 / max(1, len(variants))
            for i, v in enumerate(variants):
                xs = [j + (i - (len(variants) - 1) / 2) * w for j in range(len(ranks))]
                ax.bar(xs, [at[(v, p)][field] if (v, p) in at else 0 for p in ranks], width=w,
                       color=COLORS[i % len(COLORS)], label=v)
            ax.set_xticks(range(len(ranks)))
            ax.set_xticklabels([str(p) for p in ranks])
            ax.set_xlabel("ranks")
            ax.set_ylabel(ylabel)
            ax.grid(True, axis="y", alpha=0.3)
            ax.legend(fontsize=7)
            title = f"{app}: {what} per variant, baseline {' / '.join(base) or '-'} ({_stamp(g)})"
            ax.set_title(_two_lines(title), fontsize=9)
            out.append((_save(fig, folder, f"dsm_{app}_{fname}.png"), title))
    return out


_NPB_ORDER = ("none", "mapping", "affinity", "update")


def npb_scaling(recs, folder):
    """NPB on kycc against plain OpenMP on one host (seed 003 Figs. 2 and 4 in a line chart): speed-up over the
    serial build against cores used, kycc with N ranks x 1 thread (and N/2 x 2, marked) beside the OpenMP build
    on N threads; variant none, verified runs only. npb_<prog>_<class>_scaling.png per program and class."""
    out = []
    groups = {}
    for r in recs:
        if r.get("bench") == "npb" and r.get("verified") and r.get("variant", "none") == "none":
            groups.setdefault((r["program"], r["class"]), []).append(r)
    for (prog, cls), g in sorted(groups.items()):
        serial = next((r.get("time_s") for r in g if r["build"] == "serial"), None)
        if not serial:
            continue
        fig, ax = plt.subplots(figsize=(6.0, 4.2))
        cores_all = set()
        lines = (("omp", lambda r: r["ranks"] == 1, "OpenMP, N threads", "s-"),
                 ("kycc", lambda r: r.get("threads", 1) == 1, "kycc, N ranks x 1 thread", "o-"),
                 ("kycc", lambda r: r.get("threads", 1) == 2, "kycc, N/2 ranks x 2 threads", "D"))
        for i, (build, pick, name, style) in enumerate(lines):
            pts = sorted((r["ranks"] * r.get("threads", 1), serial / r["time_s"]) for r in g
                         if r["build"] == build and pick(r) and r.get("time_s"))
            if pts:
                cores_all.update(c for c, _ in pts)
                ax.plot([c for c, _ in pts], [v for _, v in pts], style, color=COLORS[i], label=name)
        ticks = sorted(cores_all)
        ax.plot(ticks, ticks, ":", color="0.6", label="ideal")
        ax.set_xscale("log", base=2)
        ax.set_yscale("log", base=2)
        ax.set_xticks(ticks)
        ax.set_xticklabels([str(c) for c in ticks])
        ax.set_xlabel("cores (ranks x threads)")
        ax.set_ylabel(f"speed-up over serial ({serial:.2f} s)")
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=7)
        title = f"NPB {prog.upper()} class {cls}: kycc against OpenMP on one host ({_stamp(g)})"
        ax.set_title(_two_lines(title), fontsize=9)
        out.append((_save(fig, folder, f"npb_{prog}_{cls}_scaling.png"), title))
    return out


def npb(recs, folder):
    """NPB on kycc (seed 003 Figs. 2-5): page transfers (fetched + preloaded + pushed, all ranks; the pages
    written back at barriers stacked on them, lighter) and speed-up over the serial build per variant against
    ranks, grouped bars; runs NPB did not verify are left out, and runs under other settings (field
    `settings`, KY_DSM_NODE_SHARED aside) are variants of their own."""
    out = []
    groups = {}
    for r in recs:
        if r.get("bench") == "npb":
            groups.setdefault((r["program"], r["class"]), []).append(r)
    for (prog, cls), g in sorted(groups.items()):
        serial = next((r.get("time_s") for r in g if r["build"] == "serial" and r.get("verified")), None)
        kycc = [r for r in g if r["build"] == "kycc" and r.get("verified") and r.get("threads", 1) == 1]
        if not kycc:
            continue

        def label(r):
            s = r.get("settings") or ""
            s = ",".join(kv for kv in s.split(",") if kv and not kv.startswith("KY_DSM_NODE_SHARED"))
            return r["variant"] + (f" ({s})" if s else "")

        base = sorted({r["variant"] for r in kycc}, key=lambda v: _NPB_ORDER.index(v) if v in _NPB_ORDER else 9)
        variants = sorted({label(r) for r in kycc},
                          key=lambda v: (v != v.split(" ")[0], base.index(v.split(" ")[0]), v))
        ranks = sorted({r["ranks"] for r in kycc})
        at = {(label(r), r["ranks"]): r for r in kycc}
        for field, ylabel, what, fname in (
                ("page_transfers", "pages fetched, then written back (all ranks)", "page transfers", "pages"),
                ("speedup", "speed-up over serial", "speed-up over serial", "speedup")):
            if field == "speedup" and not serial:
                continue
            fig, ax = plt.subplots(figsize=(6.5, 4.2))
            w = 0.8 / max(1, len(variants))
            for i, v in enumerate(variants):
                xs = [j + (i - (len(variants) - 1) / 2) * w for j in range(len(ranks))]
                ys = []
                for p in ranks:
                    r = at.get((v, p))
                    ys.append(0 if r is None else serial / r["time_s"] if field == "speedup" and r.get("time_s")
                              else r.get(field, 0))
                ax.bar(xs, ys, width=w, color=COLORS[i % len(COLORS)], label=v,
                       hatch="//" if "(" in v else None)
                if field == "page_transfers":
                    # the pages written back at barriers (diffs) on top, lighter: SCASH's transfers both ways
                    ax.bar(xs, [at[(v, p)].get("diffs", 0) if (v, p) in at else 0 for p in ranks], width=w,
                           bottom=ys, color=COLORS[i % len(COLORS)], alpha=0.35, edgecolor="0.3", linewidth=0.3)
            ax.set_xticks(range(len(ranks)))
            ax.set_xticklabels([str(p) for p in ranks])
            ax.set_xlabel("ranks (1 thread each)")
            ax.set_ylabel(ylabel)
            ax.grid(True, axis="y", alpha=0.3)
            if field == "page_transfers":
                ax.bar([0], [0], color="0.6", alpha=0.35, edgecolor="0.3", linewidth=0.3,
                       label="lighter: pages written back")
            ax.legend(fontsize=7)
            title = f"NPB {prog.upper()} class {cls} on kycc: {what} per variant ({_stamp(kycc)})"
            ax.set_title(_two_lines(title), fontsize=9)
            out.append((_save(fig, folder, f"npb_{prog}_{cls}_{fname}.png"), title))
    return out


# io paths in drawing order: the floor dashed, Kyoyu's paths solid, the baselines dotted
_IO_STYLE = {"raw": ("k", "--", "raw O_DIRECT (floor)"), "copy": ("0.6", "--", "device-host copy alone"),
             "auto": (COLORS[0], "-", "Kyoyu auto"), "bounce": (COLORS[1], "-", "Kyoyu bounce"),
             "cufile": (COLORS[2], "-", "Kyoyu cuFile"), "h5py": (COLORS[3], ":", "h5py after a copy"),
             "hdf5": (COLORS[4], ":", "HDF5 after cudaMemcpy")}


def io(recs, folder):
    """Bandwidth against the snapshot's bytes, write and read side by side, one figure per memory kind and
    file system (kybench run io: bench/io_bench.c and bench/io_h5py.py)."""
    out = []
    groups = {}
    for r in recs:
        if r.get("bench") == "io" and r.get("bw_GBs", 0) > 0:
            groups.setdefault((r.get("mem", "?"), r.get("fs", "?"), r.get("ranks", 1)), []).append(r)
    for (mem, fs, ranks), g in sorted(groups.items()):
        fig, axes = plt.subplots(1, 2, figsize=(10, 4.2), sharey=True)
        for ax, d in zip(axes, ("write", "read")):
            for impl, (color, ls, label) in _IO_STYLE.items():
                xs, pts = _series([r for r in g if r["impl"] == impl and r["dir"] == d], "bytes")
                if xs:
                    ax.plot(xs, [p["bw_GBs"] for p in pts], color=color, linestyle=ls, marker="o", ms=3,
                            label=label)
            ax.set_xscale("log")
            ax.set_yscale("log")
            ax.set_xlabel("bytes per snapshot")
            ax.set_title(d, fontsize=9)
            ax.grid(True, which="major", alpha=0.3)
        axes[0].set_ylabel("GB/s (write: create to file on disk; read: from disk)")
        axes[-1].legend(fontsize=7)
        title = f"N-body snapshot, {mem} memory, {fs}, {ranks} rank(s): bandwidth per path ({_stamp(g)})"
        fig.suptitle(title, fontsize=10)
        out.append((_save(fig, folder, f"io_{mem}_{fs}_n{ranks}.png"), title))
    return out


def timeline(recs, folder):
    """KY_TRACE files beside the records (tools/kybench_lib/timeline.py)."""
    from . import timeline as tl
    return tl.for_report(recs, folder)
