"""kybench compare: two result sets side by side, every figure that moved by more than a threshold.

Points are matched by records.point_key (bench, case, bytes or N, ranks). Figures and which way is better:
lat_us and time_s lower, bw_GBs and ratio higher. A figure of Kyoyu's own speed (lat_us, time_s, bw_GBs)
that got worse is a regression ("slower") and makes the exit status 1; a ratio moves with the baseline too,
so a ratio change is flagged ("ratio down"/"ratio up") but does not fail the comparison by itself."""
from . import records

FIGURES = (("lat_us", "lower"), ("time_s", "lower"), ("bw_GBs", "higher"), ("ratio", "higher"))
SPEED = {"lat_us", "time_s", "bw_GBs"}


def _index(recs, label, out):
    idx, dups = {}, 0
    for r in recs:
        k = records.point_key(r)
        dups += k in idx
        idx[k] = r                      # the later file wins
    if dups:
        print(f"compare: {label}: {dups} point(s) appear more than once; the last one counts", file=out)
    return idx


def compare(a_paths, b_paths, threshold, out):
    """Print the table to OUT; return (exit status, list of flagged rows)."""
    a = records.load(a_paths)
    b = records.load(b_paths)
    if not a or not b:
        print(f"compare: no records in {' '.join(a_paths if not a else b_paths)}", file=out)
        return 2, []
    ia, ib = _index(a, "A", out), _index(b, "B", out)
    common = [k for k in ia if k in ib]
    rows = []
    for k in common:
        ra, rb = ia[k], ib[k]
        for fig, better in FIGURES:
            va, vb = ra.get(fig), rb.get(fig)
            if not isinstance(va, (int, float)) or not isinstance(vb, (int, float)) or va <= 0:
                continue
            change = vb / va - 1.0
            if abs(change) <= threshold:
                continue
            worse = change > 0 if better == "lower" else change < 0
            if fig in SPEED:
                verdict = "slower" if worse else "faster"
            else:
                verdict = "ratio down" if worse else "ratio up"
            rows.append((k, fig, va, vb, change, verdict, rb.get("_src", "")))
    order = {"slower": 0, "ratio down": 1, "faster": 2, "ratio up": 3}
    rows.sort(key=lambda x: (order[x[5]], -abs(x[4])))
    only_a = sum(1 for k in ia if k not in ib)
    only_b = sum(1 for k in ib if k not in ia)

    def kinds(recs):
        return ", ".join(sorted({f"{r.get('kind')} {r.get('date')}" for r in recs}))

    print(f"A: {' '.join(a_paths)} ({len(ia)} points; {kinds(a)})", file=out)
    print(f"B: {' '.join(b_paths)} ({len(ib)} points; {kinds(b)})", file=out)
    print(f"{len(common)} points in both, {only_a} only in A, {only_b} only in B; threshold {threshold:.0%}",
          file=out)
    nslow = sum(1 for r in rows if r[5] == "slower")
    if rows:
        hdr = ("bench", "case", "size", "ranks", "figure", "A", "B", "change", "verdict")
        table = [hdr] + [(k[0], k[1], records.fmt_size(k[2]), str(k[3]), fig, f"{va:.4g}", f"{vb:.4g}",
                          f"{ch:+.1%}", verdict) for k, fig, va, vb, ch, verdict, _ in rows]
        widths = [max(len(str(t[i])) for t in table) for i in range(len(hdr))]
        print("", file=out)
        for t in table:
            print("  ".join(str(x).ljust(w) for x, w in zip(t, widths)).rstrip(), file=out)
    print(f"\n{len(rows)} figure(s) moved by more than {threshold:.0%}: {nslow} slower (regressions), "
          f"{sum(1 for r in rows if r[5] == 'faster')} faster, "
          f"{sum(1 for r in rows if r[5].startswith('ratio'))} ratio changes", file=out)
    if not common:
        print("compare: A and B have no point in common", file=out)
        return 2, rows
    return (1 if nslow else 0), rows
