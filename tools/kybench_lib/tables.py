"""kybench tables: the Markdown tables of `kybench report`, one function per generated block.

Each function takes the records of one machine kind and returns the block's Markdown, or None when there is
nothing to show (the report then leaves the block in the document as it was). Ratios are baseline time /
Kyoyu time (> 1: Kyoyu faster); "% floor" is floor_us / lat_us (or bw_GBs / floor_GBs): the fraction of
what the hardware allows. Record shapes: docs/benchmarks.md."""
from .records import coll_algo, fmt_bytes

PP_SIZES = [8, 65536, 1 << 20, 64 << 20, 256 << 20]
HALO_NS = [32, 64, 128, 256, 512]
BW_FROM = 64 << 20          # ping-pong cells show GB/s from this size on, µs below
COLL_SIZES = {"allgather": [16, 2048, 131072], "allreduce": [8], "bcast": [8], "reduce": [8]}


def _pick(available, preferred):
    """Preferred values that occur; else the smallest and the largest available."""
    got = [v for v in preferred if v in available]
    if got:
        return got
    av = sorted(available)
    return sorted({av[0], av[-1]}) if av else []


def _ratio(r):
    return f"{r['ratio']:.2f}" if "ratio" in r else "-"


def _floor_pct(r):
    if r.get("floor_us") and r.get("lat_us"):
        return f"{100.0 * r['floor_us'] / r['lat_us']:.0f} %"
    return "-"


def pingpong(recs):
    rows = {}
    for r in recs:
        if r.get("bench") == "pingpong":
            rows.setdefault(r["case"], {})[r["bytes"]] = r
    if not rows:
        return None
    sizes = _pick({b for by in rows.values() for b in by}, PP_SIZES)
    lat_at = sizes[0]
    bw_at = BW_FROM if BW_FROM in sizes else sizes[-1]
    head = ["case"] + [fmt_bytes(s) for s in sizes] + [
        f"baseline at {fmt_bytes(bw_at)}", f"ratio at {fmt_bytes(lat_at)}", f"ratio at {fmt_bytes(bw_at)}",
        f"% floor at {fmt_bytes(lat_at)}", f"% floor at {fmt_bytes(bw_at)}"]
    out = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]

    def cell(r):
        if r is None:
            return "-"
        return f"{r['bw_GBs']:.1f} GB/s" if r["bytes"] >= BW_FROM else f"{r['lat_us']:.2f} µs"

    for case in sorted(rows):
        by = rows[case]
        lo, hi = by.get(lat_at), by.get(bw_at)
        if hi and "base_bw_GBs" in hi:
            base = (f"{hi['baseline']} {hi['base_bw_GBs']:.1f} GB/s" if bw_at >= BW_FROM
                    else f"{hi['baseline']} {hi['base_lat_us']:.2f} µs")
        else:
            base = hi["baseline"] if hi else "-"
        cells = [cell(by.get(s)) for s in sizes]
        tail = [base, _ratio(lo) if lo else "-", _ratio(hi) if hi else "-",
                _floor_pct(lo) if lo else "-", _floor_pct(hi) if hi else "-"]
        out.append(f"| {case} | " + " | ".join(cells + tail) + " |")
    return "\n".join(out)


def halo(recs):
    rows = {}
    for r in recs:
        if r.get("bench") == "halo":
            rows.setdefault(r["case"], {})[r["N"]] = r
    if not rows:
        return None
    ns = _pick({n for by in rows.values() for n in by}, HALO_NS)
    at = 256 if 256 in ns else ns[-1]
    head = ["case"] + [f"N={n}" for n in ns] + [f"baseline at {at}", f"ratio at {at}", f"% floor at {at}"]
    out = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for case in sorted(rows):
        by = rows[case]
        cells = [f"{by[n]['lat_us']:.1f}" if n in by else "-" for n in ns]
        b = by.get(at)
        if b and "base_lat_us" in b:
            tail = [f"{b['baseline']} {b['base_lat_us']:.1f}", f"{b['ratio']:.1f}", _floor_pct(b)]
        else:
            tail = [b["baseline"] if b else "-", "-", _floor_pct(b) if b else "-"]
        out.append(f"| {case} | " + " | ".join(cells + tail) + " |")
    return "\n".join(out)


def _baselines(r):
    """{name: µs} of one coll record: its `baselines` object, else baseline/base_lat_us."""
    if isinstance(r.get("baselines"), dict):
        return dict(r["baselines"])
    if "baseline" in r and "base_lat_us" in r:
        return {r["baseline"]: r["base_lat_us"]}
    return {}


def coll(recs):
    """Seed 001 Tables 3-4: per operation and memory, algorithms (and the baselines) as rows, message size
    x process count as columns, µs per call; then the best algorithm's ratio to each baseline. From the
    coll_seed records (the table points) when there are any, else from coll."""
    groups = {}
    bench = "coll_seed" if any(r.get("bench") == "coll_seed" for r in recs) else "coll"
    for r in recs:
        if r.get("bench") == bench:
            groups.setdefault((r["op"], r["mem"]), []).append(dict(r, algo=coll_algo(r)))
    if not groups:
        return None
    parts = []
    for (op, mem) in sorted(groups):
        g = groups[(op, mem)]
        sizes = _pick({r["bytes"] for r in g}, COLL_SIZES.get(op, [8]))
        ranks = sorted({r["ranks"] for r in g})
        cols = [(s, p) for s in sizes for p in ranks]
        at = {}
        for r in g:
            at[(r["algo"], r["bytes"], r["ranks"])] = r
        algos = sorted({r["algo"] for r in g})
        base = {}
        for r in g:
            for name, us in _baselines(r).items():
                base.setdefault(name, {}).setdefault((r["bytes"], r["ranks"]), us)
        head = ["algorithm"] + [f"{fmt_bytes(s)}, p={p}" for s, p in cols]
        lines = [f"**{op}, {mem} memory** (µs per call; p = ranks)", "",
                 "| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
        best = {}
        for a in algos:
            cells = []
            for c in cols:
                r = at.get((a, c[0], c[1]))
                cells.append(f"{r['lat_us']:.1f}" if r else "-")
                if r and (c not in best or r["lat_us"] < best[c]):
                    best[c] = r["lat_us"]
            lines.append(f"| {a} | " + " | ".join(cells) + " |")
        for name in sorted(base):
            lines.append(f"| {name} | " + " | ".join(
                f"{base[name][c]:.1f}" if c in base[name] else "-" for c in cols) + " |")
        for name in sorted(base):
            lines.append(f"| ratio {name} / best Kyoyu | " + " | ".join(
                f"{base[name][c] / best[c]:.2f}" if c in base[name] and best.get(c) else "-" for c in cols) + " |")
        floors = {}
        for r in g:
            if r.get("floor_us"):
                floors.setdefault((r["bytes"], r["ranks"]), r["floor_us"])
        if floors:
            lines.append("| % floor (best Kyoyu) | " + " | ".join(
                f"{100 * floors[c] / best[c]:.0f} %" if c in floors and best.get(c) else "-" for c in cols) + " |")
        parts.append("\n".join(lines))
    return "\n\n".join(parts)


def _gbs(v):
    return f"{v:.0f}" if v >= 100 else f"{v:.1f}"


COLL_BW_SIZES = [1 << 20, 4 << 20, 16 << 20, 128 << 20, 256 << 20]


def coll_bw(recs):
    """Bus bandwidth of the sweep (`coll` records, automatic choice) at a few large sizes: Kyoyu beside the
    baseline (NCCL for GPU memory, MPI for host memory), the ratio and Kyoyu's share of the floor (one
    GPU-to-GPU copy-engine transfer, floor_GBs) where the record has one."""
    # bench/coll's host records carry the bus bandwidth as bw_GBs, the GPU ones as busbw_GBs
    g = [dict(r, algo=coll_algo(r), busbw_GBs=r.get("busbw_GBs") or r.get("bw_GBs")) for r in recs
         if r.get("bench") == "coll" and (r.get("busbw_GBs") or r.get("bw_GBs"))]
    g = [r for r in g if r["algo"] == "auto"]
    if not g:
        return None
    ranks = sorted({r["ranks"] for r in g})
    head = ["operation", "memory", "bytes"] + [f"p={p}: Kyoyu / baseline GB/s (ratio)" for p in ranks] + \
           ["% floor (largest p)"]
    out = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    at = {(r["op"], r["mem"], r["bytes"], r["ranks"]): r for r in g}
    for op in sorted({r["op"] for r in g}):
        for mem in sorted({r["mem"] for r in g if r["op"] == op}):
            have = {r["bytes"] for r in g if r["op"] == op and r["mem"] == mem}
            for b in [x for x in COLL_BW_SIZES if x in have]:
                cells = []
                for p in ranks:
                    r = at.get((op, mem, b, p))
                    if not r:
                        cells.append("-")
                    elif r.get("base_bw_GBs"):
                        cells.append(f"{_gbs(r['busbw_GBs'])} / {_gbs(r['base_bw_GBs'])} {r.get('baseline', '')} "
                                     f"({r['busbw_GBs'] / r['base_bw_GBs']:.2f})")
                    else:
                        cells.append(_gbs(r["busbw_GBs"]))
                last = [at[(op, mem, b, p)] for p in ranks if (op, mem, b, p) in at][-1]
                fl = f"{100 * last['busbw_GBs'] / last['floor_GBs']:.0f} % of {last['floor_GBs']:.0f} (p={last['ranks']})" \
                    if last.get("floor_GBs") else "-"
                out.append(f"| {op} | {mem} | {fmt_bytes(b)} | " + " | ".join(cells) + f" | {fl} |")
    return "\n".join(out)


def coll_lat(recs):
    """GPU collective latency (the collectives' goals): per operation, algorithm and mode, Kyoyu's µs per call at
    each rank count beside NCCL's and the stream-operation floor of the same mode (launch, and for `sync`
    the synchronisation)."""
    g = [dict(r, algo=coll_algo(r)) for r in recs if r.get("bench") == "coll_lat"]
    if not g:
        return None
    ranks = sorted({r["ranks"] for r in g})
    at = {(r["op"], r["algo"], r["mode"], r["ranks"]): r for r in g}
    modes = [m for m in ("sync", "b2b", "graph", "blocking") if any(r["mode"] == m for r in g)]
    head = ["operation (8 B)", "algorithm", "mode"] + [f"p={p}: Kyoyu / NCCL µs (ratio)" for p in ranks] + \
           [f"floor µs (p={ranks[-1]})"]
    out = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for op in sorted({r["op"] for r in g}):
        for algo in sorted({r["algo"] for r in g if r["op"] == op}):
            for m in modes:
                rs = [at.get((op, algo, m, p)) for p in ranks]
                if not any(rs):
                    continue
                cells = []
                for r in rs:
                    base = _baselines(r).get("ncclAllReduce" if op == "allreduce" else "ncclAllGather") if r else None
                    if not r:
                        cells.append("-")
                    elif base:
                        cells.append(f"{r['lat_us']:.1f} / {base:.1f} ({base / r['lat_us']:.2f})")
                    else:
                        cells.append(f"{r['lat_us']:.1f}")
                fl = rs[-1].get("floor_us") if rs[-1] else None
                out.append(f"| {op} | {algo} | {m} | " + " | ".join(cells) + f" | {fl:.1f} |" if fl else
                           f"| {op} | {algo} | {m} | " + " | ".join(cells) + " | - |")
    return "\n".join(out)


def stencil(recs):
    """Weak scaling: per stencil and per-rank size, variants as rows, time per run at each rank count, the
    efficiency at the largest count, the ratio to the baseline and the fraction of the HBM floor."""
    groups = {}
    for r in recs:
        if r.get("bench") == "stencil":
            groups.setdefault((r["stencil"], r["N"], r["mem"]), []).append(r)
    if not groups:
        return None
    parts = []
    for key in sorted(groups):
        g = groups[key]
        ranks = sorted({r["ranks"] for r in g})
        at = {(r["variant"], r["ranks"]): r for r in g}
        top = ranks[-1]
        head = ["variant"] + [f"p={p}" for p in ranks] + [f"efficiency at p={top}", f"ratio at p={top}",
                                                          f"% floor at p={top}"]
        lines = [f"**{key[0]} stencil, N={key[1]} per rank, {key[2]} memory** (seconds per run)", "",
                 "| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
        for v in sorted({r["variant"] for r in g}):
            cells = [f"{at[(v, p)]['time_s']:.3f}" if (v, p) in at else "-" for p in ranks]
            t = at.get((v, top), {})
            one = at.get((v, ranks[0]))
            eff = t.get("eff")
            if eff is None and one and t and t.get("time_s"):
                eff = one["time_s"] / t["time_s"]
            flo = (f"{100 * t['bw_GBs'] / t['floor_GBs']:.0f} %" if t.get("bw_GBs") and t.get("floor_GBs")
                   else "-")
            ratio = t.get("ratio")
            b = at.get(("baseline", top))  # ky_stencil_gpu names its hand-written baseline variant "baseline"
            if ratio is None and b and t.get("time_s") and v != "baseline":
                ratio = b["time_s"] / t["time_s"]
            cells += [f"{100 * eff:.0f} %" if eff is not None else "-",
                      f"{ratio:.2f} ({t.get('baseline', '')})" if ratio is not None else "-", flo]
            lines.append(f"| {v} | " + " | ".join(cells) + " |")
        parts.append("\n".join(lines))
    return "\n\n".join(parts)


def dsm(recs):
    """Per application: variants as rows; time and pages fetched at each rank count (seed 003 Figs. 2-5)."""
    groups = {}
    for r in recs:
        if r.get("bench") == "dsm":
            groups.setdefault(r["app"], []).append(r)
    if not groups:
        return None
    parts = []
    for app in sorted(groups):
        g = groups[app]
        ranks = sorted({r["ranks"] for r in g})
        at = {(r["variant"], r["ranks"]): r for r in g}
        head = ["variant"] + [f"p={p}: s / pages" for p in ranks] + [f"ratio at p={ranks[-1]}"]
        lines = [f"**{app}** (seconds per run / pages fetched, all ranks)", "",
                 "| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
        for v in sorted({r["variant"] for r in g}):
            cells = [f"{at[(v, p)]['time_s']:.3f} / {at[(v, p)]['pages_fetched']}" if (v, p) in at else "-"
                     for p in ranks]
            t = at.get((v, ranks[-1]), {})
            cells.append(f"{t['ratio']:.2f} ({t.get('baseline', '')})" if "ratio" in t else "-")
            lines.append(f"| {v} | " + " | ".join(cells) + " |")
        parts.append("\n".join(lines))
    return "\n\n".join(parts)


def npb(recs):
    """NPB on kycc (seed 003 Figs. 2-5): per program and class, the time and speed-up over serial of each build
    and variant at every ranks x threads, the ratio to plain OpenMP on as many threads, and the page
    transfers per variant (fetched + preloaded + pushed, all ranks)."""
    groups = {}
    for r in recs:
        if r.get("bench") == "npb":
            groups.setdefault((r["program"], r["class"]), []).append(r)
    if not groups:
        return None
    parts = []
    for prog, cls in sorted(groups):
        g = groups[(prog, cls)]
        kycc = [r for r in g if r["build"] == "kycc"]
        lays = sorted({(r["ranks"], r["threads"]) for r in kycc})
        omp = {r["threads"]: r for r in g if r["build"] == "omp"}
        serial = next((r for r in g if r["build"] == "serial"), None)

        def cell(r):
            if r is None:
                return "-"
            if r.get("time_s") is None:
                p = r.get("projected_time_s")
                return f"~{p:.0f} s (projected)" if p else ("past the limit" if r.get("timed_out") else "failed")
            base = serial.get("time_s") if serial else None
            sp = f", {base / r['time_s']:.2f}x serial" if base and r["time_s"] else ""
            ok = "" if r.get("verified") else " (not verified)"
            return f"{r['time_s']:.2f} s{sp}{ok}"
        lines = [f"**{prog.upper()} class {cls}**" + (f" (serial {serial['time_s']:.2f} s)" if serial and
                                                      serial.get("time_s") else ""), ""]
        head = ["build / variant"] + [f"{n} x {t}" for n, t in lays]
        lines += ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
        lines.append("| omp (same threads) | " + " | ".join(cell(omp.get(n * t)) for n, t in lays) + " |")
        # runs under other settings (field `settings`) are rows of their own
        def label(r):
            return r["variant"] + (f" ({r['settings']})" if r.get("settings") not in (None, "", "default") else "")
        at = {(label(r), r["ranks"], r["threads"]): r for r in kycc}
        order = ("none", "mapping", "affinity", "update")
        variants = sorted({k[0] for k in at}, key=lambda v: (order.index(v.split(" ")[0]) if v.split(" ")[0] in order
                                                              else len(order), v))
        for v in variants:
            row = []
            for n, t in lays:
                r = at.get((v, n, t))
                ratio = (f", {r['ratio']:.2f} of omp" if r and "ratio" in r else
                         f", ~{r['projected_ratio']:.3f} of omp" if r and "projected_ratio" in r else "")
                row.append(cell(r) + ratio if r else "-")
            lines.append(f"| kycc {v} | " + " | ".join(row) + " |")
        if any("page_transfers" in r for r in kycc):
            lines += ["", "Page transfers (all ranks):", "",
                      "| variant | " + " | ".join(f"{n} x {t}" for n, t in lays) + " |", "|" + "---|" * (len(lays) + 1)]
            for v in variants:
                lines.append(f"| {v} | " + " | ".join(
                    f"{at[(v, n, t)]['page_transfers']:,}" if "page_transfers" in at.get((v, n, t), {}) else "-"
                    for n, t in lays) + " |")
        parts.append("\n".join(lines))
    return "\n\n".join(parts)


def dsm_micro(recs):
    """bench/dsm.c: one row per operation, size, path and rank count: Kyoyu µs, the MPI baseline, ratio."""
    rows = [r for r in recs if r.get("bench") == "dsm_micro"]
    if not rows:
        return None
    head = ["operation", "path", "ranks", "bytes", "Kyoyu µs", "baseline", "baseline µs", "ratio"]
    out = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in sorted(rows, key=lambda r: (r["case"], r["path"], r["ranks"], r["bytes"])):
        base = f"{r['base_lat_us']:.1f}" if "base_lat_us" in r else "-"
        out.append(f"| {r['case']} | {r['path']} | {r['ranks']} | {fmt_bytes(r['bytes'])} | {r['lat_us']:.1f} | "
                   f"{r['baseline']} | {base} | {_ratio(r)} |")
    return "\n".join(out)


def device(recs):
    """kybench run device (bench/device_bench.cu): one row per size, the put_signal ping-pong's round trip (µs)
    on each path, NVSHMEM's in the same job, and the no-library floors of the same shape (8 B only: a relaxed
    flag, a data word then a release flag, the same as fences, one 16-byte store)."""
    rows = [r for r in recs if r.get("bench") == "device"]
    if not rows:
        return None
    paths = sorted({r["path"] for r in rows if r["op"] == "put_signal_pp"})
    floors = [op for op in ("raw_flag_pp", "raw_data_flag_pp", "raw_data_fence_pp", "raw_ll16_pp")
              if any(r["op"] == op for r in rows)]
    head = ["bytes"] + [f"put_signal, {p}" for p in paths] + ["NVSHMEM", "vs NVSHMEM (direct)"] + floors
    out = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    at = {(r["op"], r["path"], r["bytes"]): r for r in rows}
    for b in sorted({r["bytes"] for r in rows if r["op"] == "put_signal_pp"}):
        cells = [fmt_bytes(b)]
        for p in paths:
            r = at.get(("put_signal_pp", p, b))
            cells.append(f"{r['lat_us']:.2f}" if r else "-")
        base = next((r["base_lat_us"] for r in rows
                     if r["op"] == "put_signal_pp" and r["bytes"] == b and "base_lat_us" in r), None)
        cells.append(f"{base:.2f}" if base else "-")
        d = at.get(("put_signal_pp", "direct", b))
        cells.append(_ratio(d) if d and "base_lat_us" in d else "-")
        for op in floors:
            r = next((r for r in rows if r["op"] == op and r["bytes"] == b), None)
            cells.append(f"{r['lat_us']:.2f}" if r else "-")
        out.append("| " + " | ".join(cells) + " |")
    return "\n".join(out)


_IO_IMPLS = ("raw", "hdf5", "h5py", "bounce", "cufile", "auto")


def io(recs):
    """kybench run io (bench/io_bench.c, bench/io_h5py.py): one row per snapshot size and memory kind, GB/s
    write / read per path, then auto against h5py, the raw floor and the better fixed path, with the issue's
    goals (from N = 1e7: 1.5x h5py and 80% of the raw write; every N: auto at least the better fixed path)."""
    rows = [r for r in recs if r.get("bench") == "io" and r.get("impl") in _IO_IMPLS]
    if not rows:
        return None
    at = {(r.get("mem"), r["N"], r["impl"], r["dir"]): r.get("bw_GBs", 0) for r in rows}
    head = ["memory", "N", "MB"] + [f"{i} W / R" for i in _IO_IMPLS] + ["auto / h5py W / R", "auto / raw W",
                                                                       "auto / best fixed W / R", "goals"]
    out = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]

    def gb(v):
        return f"{v:.2f}" if v and v > 0 else "-"

    for mem, n in sorted({(r.get("mem"), r["N"]) for r in rows}):
        bw = {(i, d): at.get((mem, n, i, d), 0) for i in _IO_IMPLS for d in ("write", "read")}
        mb = next(r["bytes"] for r in rows if r.get("mem") == mem and r["N"] == n) / 1e6
        cells = [f"{gb(bw[(i, 'write')])} / {gb(bw[(i, 'read')])}" for i in _IO_IMPLS]
        aw, ar = bw[("auto", "write")], bw[("auto", "read")]
        best = {d: max(bw[("bounce", d)], bw[("cufile", d)]) for d in ("write", "read")}

        def q(a, b):
            return f"{a / b:.2f}" if a > 0 and b > 0 else "-"

        # as bench/io_bench.py judges them: "at least the better fixed path" within 5% (timing noise)
        def yn(ok):
            return "yes" if ok else "no"

        goals = []
        if aw > 0 and best["write"] > 0:
            goals.append(f"auto >= best W {yn(aw >= 0.95 * best['write'])} R {yn(ar >= 0.95 * best['read'])}")
        if n >= 10**7 and aw > 0:
            hw, hr = bw[("h5py", "write")], bw[("h5py", "read")]
            goals.append(f"1.5x h5py W {yn(hw > 0 and aw >= 1.5 * hw)} R {yn(hr > 0 and ar >= 1.5 * hr)}")
            goals.append(f"80% raw W {yn(bw[('raw', 'write')] > 0 and aw >= 0.8 * bw[('raw', 'write')])}")
        out.append(f"| {mem} | {n:.0e} | {mb:.1f} | " + " | ".join(cells) +
                   f" | {q(aw, bw[('h5py', 'write')])} / {q(ar, bw[('h5py', 'read')])} | "
                   f"{q(aw, bw[('raw', 'write')])} | {q(aw, best['write'])} / {q(ar, best['read'])} | "
                   f"{', '.join(goals) or '-'} |")
    return "\n".join(out)

