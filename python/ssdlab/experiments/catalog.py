"""The gallery's catalogue: each registration adapts one module of :mod:`ssdlab.experiments` (through
its public ``reproduce``/``sweep``/``trends``) to gallery rows with stated tolerances.

Tolerances: a seed's own figure where its text gives one (seed 004's "within 15 %"), else the
choice written beside it with its reason. Quick mode is what CI runs: fewer points, shorter
runs or smaller drives; a row whose quantity the shortened run cannot show is "not judged in
quick mode" with the reason, never passed.
"""

from __future__ import annotations

import math
import tempfile
from pathlib import Path

from ..gallery.core import Context, Figure, Row, Tolerance, pct_error
from ..gallery.registry import register

QUICK = "not judged in quick mode: "


def _plot_png(draw, caption: str) -> Figure:
    """Run a module's ``plot(..., path)`` into a temporary file and keep the PNG bytes."""
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "figure.png"
        draw(path)
        return Figure(caption=caption, png=path.read_bytes())


def _num(x) -> float | None:
    try:
        x = float(x)
    except (TypeError, ValueError):
        return None
    return x if math.isfinite(x) else None


# ---- seed 000: schedulers, trends ----------------------------------------------------------

TREND = "the blog gives trends, not figures: the row passes when the trend holds on the simulator's runs"


@register("seed000", "Seed 000: host I/O scheduling helps hard disks and hurts SSDs",
          'Kim In-sung, "SSD story 7: SSDs and servers", blog, December 2008, http://minix.tistory.com/93',
          quick_note="4 process counts instead of 7, a quarter of the I/Os")
def seed000(ctx: Context):
    from . import seed000 as m

    data = m.sweep(ctx.quick, ctx.seed)
    rows = [Row(quantity=t.claim, published="trend", tolerance=Tolerance.holds(TREND), holds=t.holds,
                evidence=t.evidence) for t in m.trends(data)]
    fig = _plot_png(lambda p: m.plot(data, p), "random reads by processes per scheduler; File Server mix on RAID 0")
    return rows, [fig], []


# ---- seed 000: the mail queue --------------------------------------------------------------

SEED000_MAILQUEUE_TOL = Tolerance.within(
    25.0, "the issue's bar for each run time; one run each of a procedure the blog tells in two sentences, "
          "how its writers wrote (an fsync per file) and the scheduler (CFQ) our assumptions, written in the scenario")
SEED000_MAILQUEUE_RATIO_TOL = Tolerance.within(15.0, "the issue's bar for the disk/SSD ratio")


@register("seed000_mailqueue", "Seed 000: a mail queue of a million files on a disk and on an SSD",
          'Kim In-sung, "SSD story 7: SSDs and servers", blog, December 2008, item 5, http://minix.tistory.com/93',
          quick_note="the full runs (about 75 s): a part of the queue does not project to the whole")
def seed000_mailqueue(ctx: Context):
    from ..reference import SEED000_MAILQUEUE
    from . import seed000_mailqueue as m

    # The whole queue in quick mode too (about a minute): a part of it does not project. The
    # used SSD's garbage collection gets cheaper as the queue rewrites the same blocks, and
    # the disk's journal checkpoints grow (docs/files.md).
    runs = m.reproduce(1, ctx.seed)
    rows = [Row(case=d, quantity=q, published=f"{pub:.4g}", simulated=sim, unit="s" if "(s)" in q else "",
                error=err, tolerance=SEED000_MAILQUEUE_RATIO_TOL if "ratio" in q else SEED000_MAILQUEUE_TOL)
            for d, q, pub, sim, err in m.table(runs)]
    for d, r in runs.items():
        pub = SEED000_MAILQUEUE[d]
        for name, sim, published in (("CPU utilisation %", r.cpu_pct, pub["cpu_pct"]),
                                     ("iowait %", r.iowait_pct, pub["iowait_pct"]),
                                     ("load average", r.load, pub["load"])):
            rows.append(Row(case=d, quantity=f"{name} range overlaps the published one", published=f"{published[0]}-{published[1]}",
                            tolerance=Tolerance.holds("the blog gives ranges over the run: the simulated minute-by-minute "
                                                      "range must meet the published one (the load: each minute's mean "
                                                      "count of active tasks, what the load average settles to)"),
                            holds=m.overlaps(sim, published), evidence=f"simulated {sim[0]:.2f}-{sim[1]:.2f}"))
    fig = _plot_png(lambda p: m.plot(runs, p), "run times, published and simulated")
    return rows, [fig], []


# ---- seed 000: the web download server ----------------------------------------------------

SEED000_WEBSERVER_TOL = Tolerance.within(15.0, "the issue's bar for the served rates and their ratios")
SEED000_WEBSERVER_CLASS_TOL = Tolerance.within(25.0, "the issue's bar for the per-class download rates")


@register("seed000_webserver", "Seed 000: a web download server on disks and on SSDs, behind bonded NICs",
          'Kim In-sung, "SSD story 7: SSDs and servers", blog, December 2008, item 7, http://minix.tistory.com/93',
          quick_note="60 s runs instead of 180 s (rates past the first 20 s): sar's ranges are one whole-run figure")
def seed000_webserver(ctx: Context):
    from ..reference import SEED000_WEBSERVER_HDD as H, SEED000_WEBSERVER_SSD as S
    from . import seed000_webserver as m

    runs = m.reproduce(ctx.quick, ctx.seed)
    rows = []
    for case, q, pub, sim, err in m.table(runs):
        tol = SEED000_WEBSERVER_CLASS_TOL if "client" in q else SEED000_WEBSERVER_TOL
        unit = "Mb/s" if "Mb/s" in q else "kB/s" if "kB/s" in q else ""
        evidence = ""
        if q == "served (Mb/s)":
            r = runs[case]
            evidence = (f"past the first {m.WARM_S} s (the cold start); each {m.INTERVAL} from {r.mbps_range[0]:.0f} to "
                        f"{r.mbps_range[1]:.0f} Mb/s; {r.mbps_whole:.0f} over the whole run")
        rows.append(Row(case=case, quantity=q, published=f"{pub:.5g}", simulated=sim, unit=unit, error=err, tolerance=tol,
                        evidence=evidence))
    bond2 = runs["ssd-bond2"].bound
    rows.append(Row(case="ssd-bond2", quantity="8 SSDs behind two bonded 1 GbE ports are bound by the bond",
                    published=S["bond2"], tolerance=Tolerance.holds("the run's verdict names the NIC"),
                    holds=bond2.resource == "NIC", evidence=f"bound by {bond2.resource}: {bond2.why}"))
    ranges = (("hdd", "CPU utilisation (100 - idle) %", "not_idle_pct", H["cpu_pct"]),
              ("hdd", "iowait %", "iowait_pct", H["iowait_pct"]),
              ("hdd", "load average", "load", H["load"]),
              ("ssd-10g-toe", "CPU utilisation (100 - idle) %", "not_idle_pct", S["tengig_cpu_pct"]),
              ("ssd-10g-toe", "iowait %", "iowait_pct", S["tengig_iowait_pct"]),
              ("ssd-10g-toe", "load average", "load", S["tengig_load"]))
    for case, name, attr, published in ranges:
        sim = getattr(runs[case], attr)
        row = Row(case=case, quantity=f"{name} range overlaps the published one", published=f"{published[0]}-{published[1]}",
                  tolerance=Tolerance.holds("the blog gives ranges over a day: the simulated range over 10 s "
                                            "samples past the first minute must meet it (the load: each sample's "
                                            "mean count of active tasks, what the load average settles to)"),
                  holds=m.overlaps(sim, published), evidence=f"simulated {sim[0]:.2f}-{sim[1]:.2f}")
        rows.append(row)
    fig = _plot_png(lambda p: m.plot(runs, p), "served Mb/s per case, published and simulated, with each run's bound")
    return rows, [fig], []


# ---- seed 000: search-index servers ----------------------------------------------------------

SEED000_SEARCHINDEX_COLD_TOL = Tolerance.within(
    25.0, "our choice: the blog's 20 ms is a round figure in a sentence, over a server and an index it does not describe")
SEED000_SEARCHINDEX_WARM_TOL = Tolerance.within(15.0, "our choice: the issue's bar for seed 000's servers, from the nearer "
                                                      "end of the blog's 6-8 ms")


@register("seed000_searchindex", "Seed 000: a search-index server warming its page cache, then an index swap",
          'Kim In-sung, "SSD story 7: SSDs and servers", blog, December 2008, item 8, http://minix.tistory.com/93',
          quick_note="the full runs (two 600 s runs, about 30 s)")
def seed000_searchindex(ctx: Context):
    from ..reference import SEED000_SEARCHINDEX as P
    from . import seed000_searchindex as m

    runs = m.reproduce(ctx.seed)
    h, s = runs["hdd"], runs["ssd"]
    lo, hi = P["hdd_warm_ms"]
    rows = [
        Row(case="hdd", quantity="cold query, the first minute (ms)", published=f"{P['hdd_cold_ms']:g}",
            simulated=h.cold_ms, unit="ms", error=m.error_pct(h.cold_ms, P["hdd_cold_ms"]),
            tolerance=SEED000_SEARCHINDEX_COLD_TOL),
        Row(case="hdd", quantity="warm query, the last minute before the swap (ms)", published=f"{lo:g}-{hi:g}",
            simulated=h.warm_ms, unit="ms", error=m.range_error_pct(h.warm_ms, P["hdd_warm_ms"]),
            tolerance=SEED000_SEARCHINDEX_WARM_TOL),
        Row(case="hdd", quantity="an index swap makes the disks' server cold again (first minute after it >= 1.5 x warm)",
            published="trend", tolerance=Tolerance.holds(TREND), holds=h.after_swap_ms >= 1.5 * h.warm_ms,
            evidence=f"{h.after_swap_ms:.2f} ms after the swap, {h.warm_ms:.2f} ms warm"),
        Row(case="ssd", quantity="the SSD server stays fast through the swap (its first minute after it is faster "
            "than the disks' server warm)", published=P["ssd_after_swap"], tolerance=Tolerance.holds(TREND),
            holds=s.after_swap_ms < h.warm_ms,
            evidence=f"SSDs {s.after_swap_ms:.2f} ms after the swap ({s.warm_ms:.2f} ms warm); disks {h.warm_ms:.2f} ms warm"),
    ]
    fig = _plot_png(lambda p: m.plot(runs, p), "mean query time per 10 s on disks and SSDs; the index swapped at 300 s")
    return rows, [fig], []


# ---- seed 000: an SSD cache tier --------------------------------------------------------------


@register("seed000_cachetier", "Seed 000: an SSD cache tier in front of disk file servers, and a cache server's failure",
          'Kim In-sung, "SSD story 7: SSDs and servers", blog, December 2008, item 8, http://minix.tistory.com/93',
          quick_note="10 s runs instead of 60 s, one round of the clients' fixed point less")
def seed000_cachetier(ctx: Context):
    from ..reference import SEED000_CACHETIER as P
    from . import seed000_cachetier as m

    res = m.reproduce(ctx.quick, ctx.seed)
    n = m.smallest_over(res.ssd_sweep, P["over_mbps"])
    sweep = ", ".join(f"{k}: {v.mbps:.0f} Mb/s ({v.bound})" for k, v in res.ssd_sweep.items())
    rows = [Row(case="cache server", quantity=f"SSDs in RAID 0 for more than {P['over_mbps'] / 1000:g} Gb/s",
                published=f">= {P['ssds_over_10g']}", simulated=n if n is not None else float("nan"), unit="SSDs",
                tolerance=Tolerance.holds("our reading: the smallest count that serves more than 10 Gb/s behind "
                                          "2 x 10 GbE is the blog's or more"),
                holds=n is not None and n >= P["ssds_over_10g"], evidence=sweep)]
    few = min(res.ssd_sweep)
    rows.append(Row(case="cache server", quantity=f"fewer than {P['ssds_min']} SSDs are not enough "
                    f"({few} serve less than {P['ssds_min']})", published=f">= {P['ssds_min']}",
                    tolerance=Tolerance.holds("our reading of the blog's minimum"),
                    holds=res.ssd_sweep[few].mbps < 0.95 * res.ssd_sweep[P["ssds_min"]].mbps, evidence=sweep))
    for load, claim, want in ((0.5, "a cache server's failure at 50 % load leaves the file servers as they were", False),
                              (1.0, "a cache server's failure at 100 % load pushes popular downloads onto the file "
                                    "servers, their own clients slower by a fifth or more", True)):
        up, down = res.sites[(load, 0)], res.sites[(load, 1)]
        moved = sum(down.clients_overflow.values())
        slower = 1 - m.cold_rate(down) / m.cold_rate(up)
        holds = (moved > 0 and slower >= 0.2) if want else (moved == 0 and abs(slower) < 0.05)
        rows.append(Row(case=f"{100 * load:.0f} % load", quantity=claim, published="trend",
                        tolerance=Tolerance.holds(TREND), holds=holds,
                        evidence=f"{moved} clients a file server sent there; its own clients {m.cold_rate(up):.0f} -> "
                                 f"{m.cold_rate(down):.0f} kB/s ({-100 * slower:+.0f} %); a file server "
                                 f"{up.file_server.mbps:.0f} -> {down.file_server.mbps:.0f} Mb/s"))
    fig = _plot_png(lambda p: m.plot(res, p), "a cache server's Mb/s by SSDs; a file server with the cache tier up and "
                                              "with one cache server failed")
    return rows, [fig], []


# ---- seed 000: the aging procedure ----------------------------------------------------------

#: "collapse": our reading, at least halved
SEED000_COLLAPSE = 0.5


@register("seed000_aging", "Seed 000: a file system aged by deletes (free space, random I/O before and after)",
          'Kim In-sung, "SSD story 7: SSDs and servers", blog, December 2008, item 3, http://minix.tistory.com/93',
          quick_note="the full runs (about 26 s): the aging fills a 256 MiB file system")
def seed000_aging(ctx: Context):
    from . import seed000_aging as m

    runs = m.reproduce(ctx.seed)
    rows = []
    for d, rs in runs.items():
        fs = m.free_space(rs["aged-only"].free_extents)
        rows.append(Row(case=d, quantity="free extents of 1-3 KiB are most of them", published="most",
                        tolerance=Tolerance.holds("the blog: \"most are 1-3 KB\": more than half"),
                        holds=fs["share_1_3k"] > 0.5, evidence=f"{100 * fs['share_1_3k']:.1f} % of free extents"))
        rows.append(Row(case=d, quantity="largest free extent (KiB)", published="4", simulated=fs["largest_kib"],
                        unit="KiB", error=100 * (fs["largest_kib"] - 4) / 4,
                        tolerance=Tolerance.within(1.0, "our choice: an extent's size is exact in blocks")))
        fresh, aged = rs["fresh"], rs["aged"]
        for what, a, f in (("random reads", aged.read_iops, fresh.read_iops),
                           ("random writes", aged.write_iops, fresh.write_iops)):
            ratio = a / f if f else float("nan")
            rows.append(Row(case=d, quantity=f"{what} collapse after aging", published="collapse",
                            tolerance=Tolerance.holds(f"our reading of \"collapse\": aged at most "
                                                      f"{SEED000_COLLAPSE:g} of fresh (4 KiB, O_DIRECT, one at a time)"),
                            holds=ratio <= SEED000_COLLAPSE,
                            evidence=f"{a:.0f} IOPS aged, {f:.0f} fresh ({ratio:.2f})"))
    fig = _plot_png(lambda p: m.plot(runs, p), "free extents after aging; random IOPS fresh vs aged")
    return rows, [fig], []


# ---- seed 000: mkfs with 20 million inodes ------------------------------------------------------

@register("seed000_mkfs", "Seed 000: mkfs with 20 million inodes on a 2008 disk and a 2008 MLC SSD",
          'Kim In-sung, "SSD story 7: SSDs and servers", blog, December 2008, item 3, http://minix.tistory.com/93',
          quick_note="the full runs (about 22 s, most of it preconditioning the used SSD): mke2fs writes 5 GB on each drive")
def seed000_mkfs(ctx: Context):
    from . import seed000_mkfs as m

    runs = m.reproduce(ctx.seed)
    ratio = runs["ssd"].seconds / runs["hdd"].seconds
    rows = [Row(case="ssd vs hdd", quantity="the MLC SSD gains nothing over the disk at mkfs -N 20000000",
                published="MLC does badly",
                tolerance=Tolerance.holds(f"the blog gives no time; our reading, chosen after a first run: the SSD "
                                          f"takes at least {m.NO_GAIN:g} of the disk's time"),
                holds=ratio >= m.NO_GAIN,
                evidence=", ".join(f"{d} {r.seconds:.1f} s ({r.mib_per_s:.0f} MiB/s, {r.write_kib:.0f} KiB writes)"
                                   for d, r in runs.items()) + f"; ratio {ratio:.2f}")]
    fig = _plot_png(lambda p: m.plot(runs, p), "mkfs time per drive")
    return rows, [fig], []


# ---- seed 000: MFT write remapping and the power cut ------------------------------------------

@register("seed000_mft", "Seed 000: MFT host-side write remapping on a 2008 MLC SSD and a 2008 disk, and a power cut",
          'Kim In-sung, "SSD story 7: SSDs and servers", blog, December 2008, item 3, http://minix.tistory.com/93',
          quick_note="3 s runs instead of 10 s")
def seed000_mft(ctx: Context):
    from . import seed000_mft as m

    data = m.reproduce(ctx.quick, ctx.seed)
    rows = [Row(quantity=t.claim, published=t.published,
                tolerance=Tolerance.holds(f"the blog gives no figures; our reading: {t.reading}"),
                holds=t.holds, evidence=t.evidence) for t in m.trends(data)]
    fig = _plot_png(lambda p: m.plot(data, p), "IOPS alone and through MFT; bytes lost at a power cut")
    return rows, [fig], []


# ---- seed 000: the tree copy ------------------------------------------------------------------


@register("seed000_treecopy", "Seed 000: a 1.5 GB tree copied by 1-128 parallel cp -a onto RAID 0 of 5 SSDs vs 5 disks",
          'Kim In-sung, "SSD story 7: SSDs and servers", blog, December 2008, item 4, http://minix.tistory.com/93',
          quick_note="1, 4 and 16 copiers instead of 1 to 128 (\"too many copiers\" not judged); both modes copy "
                     "1/10 of each tree with 1/10 of the memory")
def seed000_treecopy(ctx: Context):
    from . import seed000_treecopy as m

    points = m.sweep(ctx.quick, ctx.seed)
    rows = []
    for t in m.trends(points):
        reason = "the blog gives trends, not figures: the row passes when the trend holds on the simulator's runs"
        rows.append(Row(quantity=t.claim, published="trend", tolerance=Tolerance.holds(reason), holds=t.holds,
                        evidence=t.evidence, skip=(QUICK + "needs more than 16 copiers") if t.holds is None else None))
    fig = _plot_png(lambda p: m.plot(points, p), "copy throughput (copies, then sync) by parallel cp -a")
    return rows, [fig], []


# ---- seed 000: item 1 as file reads -----------------------------------------------------------


@register("seed000_filereads", "Seed 000: item 1's random reads as file reads through the page cache, "
          "8 SSDs vs 8 disks in RAID 0, CFQ and noop",
          'Kim In-sung, "SSD story 7: SSDs and servers", blog, December 2008, item 1, http://minix.tistory.com/93',
          quick_note="12 and 120 reads per process instead of 60 and 800 (disks, SSDs); item 1's O_DIRECT comparison with a quarter of its I/Os")
def seed000_filereads(ctx: Context):
    from . import seed000_filereads as m

    points = m.sweep(ctx.quick, ctx.seed)
    direct = m.direct_ratios(ctx.quick, ctx.seed)
    rows = [Row(quantity=t.claim, published=t.published, simulated=t.ratio, unit="x", tolerance=Tolerance.holds(TREND),
                holds=t.holds, evidence=t.evidence) for t in m.trends(points, direct)]
    fig = _plot_png(lambda p: m.plot(points, p), "random 4 KiB file reads by 64 processes, per array and scheduler")
    return rows, [fig], []


# ---- seed 001: hardware RAID 5, trends ----------------------------------------------------


@register("seed001", "Seed 001: hardware RAID 5 of SSDs (Adaptec 6805, Samsung 830)",
          'Sang-Su Lee and Dongkun Shin, "Performance Analysis on SSD RAID Device", KIISE 2012, '
          "http://www.dbpia.co.kr/Article/NODE01901539",
          quick_note="fewer queue depths, request sizes, stripes and SSD counts")
def seed001(ctx: Context):
    from . import seed001 as m

    data = m.sweep(ctx.quick, ctx.seed)
    rows = [Row(case=f"figure {t.figure}", quantity=t.claim, published="trend",
                tolerance=Tolerance.holds("the paper gives trends in figures, not numbers: the row passes "
                                          "when the trend holds on the simulator's runs"),
                holds=t.holds, evidence=t.evidence) for t in m.trends(data)]
    fig = _plot_png(lambda p: m.plot(data, p), "the paper's four figures, simulated")
    return rows, [fig], []


# ---- seed 002: sustained sequential write -------------------------------------------------

#: Quick mode: this fraction of each drive's flash (rates carry over; time does not).
SEED002_QUICK_SCALE = 0.01
SEED002_RATE_TOL = Tolerance.within(
    10.0, "the paper quotes rates to 0.1 GB/s read off throughput charts (~X, X-Y, >= X); 10 % is our "
          "choice for a chart reading")
SEED002_COUNT_TOL = Tolerance.within(
    1.0, "the paper's counts carry headroom it does not state (its D7-P5510 >= 3.2 GB/s gives 4 drives "
         "for 12.5 GB/s, it recommends 5): within one drive")
# Rows a short run cannot show: the PM1725b's dips are thermal, so they need the full time.
SEED002_QUICK_SKIP = {
    ("samsung-pm1725b-1.6tb", "worst_sustained_rate"):
        "the PM1725b's dips to 1.3 GB/s are thermal and need the full-length fill and overwrite (~30 min "
        "of writing); quick mode writes 1 % of the drive",
    ("samsung-pm1725b-1.6tb", "drives_100g"):
        "follows from the PM1725b's worst rate, which needs the full-length run",
}


@register("seed002", "Seed 002: sustained sequential write of five NVMe drives (100 Gb/s recorder)",
          'BittWare, "NVMe SSD Write Performance", white paper, '
          "https://www.bittware.com/resources/ssd-write-performance/",
          quick_note=f"{SEED002_QUICK_SCALE:g} of each drive's flash; thermal dips not judged")
def seed002(ctx: Context):
    from ..config import load_profile
    from . import seed002 as m
    from ..analysis.sustained import sustained_write

    names = list(m.PUBLISHED)
    if ctx.quick:
        runs = {}
        for n in names:
            try:
                # In-place media (3D XPoint) is not scaled: write as many bytes of the real drive
                # instead (no cache, no GC: its rate does not depend on how much is written).
                if load_profile(n)[0].kind == "in-place":
                    part = {"size": round(SEED002_QUICK_SCALE * load_profile(n)[0].capacity) // (1 << 20) << 20}
                else:
                    part = {"scale": SEED002_QUICK_SCALE}
                runs[n] = sustained_write(n, block_size=m.PUBLISHED[n].block_size, passes=2.0, seed=ctx.seed,
                                          **part)
            except Exception as e:  # noqa: BLE001 - one drive's failure is that drive's row
                runs[n] = f"simulation failed: {str(e).splitlines()[0]}"
    else:
        runs = m.simulate(names, seed=ctx.seed)
    table = m.reproduce(names, runs=runs)
    rows = []
    for r in table.itertuples(index=False):
        count = r.quantity == "drives_100g"
        missing = None if r.status == "ok" else str(runs.get(r.drive, r.status))
        skip = SEED002_QUICK_SKIP.get((r.drive, r.quantity)) if ctx.quick else None
        rows.append(Row(case=r.drive, quantity=r.quantity, published=str(r.published),
                        simulated=_num(r.simulated), unit=r.unit, error=_num(r.error),
                        error_unit="drives" if count else "%",
                        tolerance=SEED002_COUNT_TOL if count else SEED002_RATE_TOL,
                        missing=missing, skip=QUICK + skip if skip else None))
    fig = _plot_png(lambda p: m.plot(runs, p), "write rate over time per drive: fill, then overwrite")
    return rows, [fig], []


# ---- seed 003: iostat %util ---------------------------------------------------------------


@register("seed003", "Seed 003: iostat %util saturates while a flash SSD's IOPS keeps rising",
          'Jae-Hun Lee and Sang-Won Lee, "Limitations of IOSTAT Metrics on Flash Memory SSDs", KIISE '
          "conference paper, Table 2",
          quick_note="4 s per point instead of the paper's 300 s (the rate settles within a second)")
def seed003(ctx: Context):
    from . import seed003 as m

    table = m.reproduce(runtime_s=4.0 if ctx.quick else 300.0, seed=ctx.seed)
    rows = []
    for r in table.itertuples(index=False):
        rows.append(Row(case=f"numjobs={r.numjobs}", quantity="write IOPS", published=f"{r.iops_published:g}",
                        simulated=r.iops_simulated, unit="IOPS", error=r.iops_error_pct,
                        tolerance=Tolerance.within(10.0, "the experiment's stated target (within 10 %)")))
        rows.append(Row(case=f"numjobs={r.numjobs}", quantity="iostat %util", published=f"{r.util_published:g}",
                        simulated=r.util_simulated, unit="%", error=r.util_error_pct,
                        tolerance=Tolerance.within(5.0, "our choice: %util is the share of time with I/O in "
                                                        "flight; 5 % separates 76 % from saturation")))
    fig = _plot_png(lambda p: m.plot(table, p), "IOPS and %util by job count, with the internal utilisation")
    return rows, [fig], []


# ---- datasheet cross-check: 4 KiB random read ----------------------------------------------


@register("datasheet_reads", "Datasheet cross-check: 4 KiB random-read IOPS at QD 32 × 4 jobs",
          "the makers' ratings named in reference.DATASHEET_RANDOM_READ_IOPS (Samsung 970 PRO and 850 PRO "
          "specifications, digit.in for the 970 EVO Plus)",
          quick_note="a fifth of each drive's flash (same dies and channels) instead of all of it; its "
                     "blocks have a fifth of the pages, so multi-plane reads find partners more often")
def datasheet_reads(ctx: Context):
    from . import datasheet_reads as m

    points = m.reproduce(scale=0.2 if ctx.quick else 1.0, seed=ctx.seed)
    rows = [Row(case=p.profile, quantity="4 KiB random read IOPS", published=f"{p.published:g}",
                simulated=p.simulated, unit="IOPS", error=p.error_pct,
                tolerance=Tolerance.within(15.0, "our choice: a datasheet figure is a best case on the "
                                                 "maker's host, within 15 % as for the 2008 Intel drives"))
            for p in points]
    return rows, [], []


# ---- seed 004: RAID 5 rebuild -------------------------------------------------------------

SEED004_TOL = "seed 004: within 15 %"
#: Quick mode: smaller rebuilt samples (extrapolated to the whole drive, as the full run does).
SEED004_QUICK_SAMPLES = {"md-idle": 1 << 30, "streaming-idle": 1 << 30}


#: The module's quantities as the gallery names them (the unit is the row's own).
SEED004_QUANTITIES = {"rebuild_time_h": "rebuild time", "rebuild_rate": "rebuild rate",
                      "rebuilt_drive_waf": "rebuilt drive WAF", "host_read": "host read rate",
                      "host_write": "host write rate"}


def _seed004_tolerance(bound: str) -> Tolerance:
    """Within 15 %, one-sided where the brief gives a bound (">= " or "<= ")."""
    if bound == ">= ":
        return Tolerance.at_least(15.0, f"{SEED004_TOL}; the published value is a lower bound")
    if bound == "<= ":
        return Tolerance.at_most(15.0, f"{SEED004_TOL}; the published value is an upper bound")
    return Tolerance.within(15.0, SEED004_TOL)


@register("seed004", "Seed 004: rebuild of a RAID 5 of nine 61.44 TB QLC drives, md vs xiRAID",
          'Sarika Mehta and Daniel Landau, "Accelerating RAID Rebuild and Reducing Write Amplification on '
          'High Density Solidigm QLC Drives with xiRAID", Solidigm solution brief, 2025, Tables 1 and 2',
          quick_note="1 GiB rebuilt per idle case (extrapolated); the cases under load with their full samples")
def seed004(ctx: Context):
    from . import seed004 as m

    # Under load the samples stay whole (under a minute each since the members share one fill).
    table = m.reproduce(list(m.PUBLISHED), seed=ctx.seed, samples=SEED004_QUICK_SAMPLES if ctx.quick else None)
    rows = []
    for r in table.to_dict("records"):
        note = str(r.get("note") or "")
        bound = ">= " if "lower bound" in note else "<= " if "upper bound" in note else ""
        tol = _seed004_tolerance(bound)
        error = r.get("error_pct", r.get("error"))
        rows.append(Row(case=r["case"], quantity=SEED004_QUANTITIES.get(r["quantity"], r["quantity"]),
                        published=f"{bound}{r['published']:.4g}",
                        simulated=_num(r["simulated"]), unit=str(r.get("unit", "")), error=_num(error),
                        tolerance=tol))
    rows += _seed004_waf_trends(table)
    return rows, [_error_bars(rows, "seed 004: error of each simulated row against the brief (grey band: the row's "
                                    "tolerance, ±15 % or one-sided where the brief gives a bound)")], []


def _seed004_waf_trends(table) -> list[Row]:
    """The issue's "WAF under load above idle for both" engines, as trend rows."""
    waf = {r["case"]: r for r in table.to_dict("records") if r["quantity"] == "rebuilt_drive_waf"}
    rows = []
    for engine in ("md", "streaming"):
        idle, load = waf.get(f"{engine}-idle"), waf.get(f"{engine}-load")
        if idle is None or load is None:
            continue
        rows.append(Row(case=engine, quantity="rebuilt drive WAF under load above idle",
                        published=f"trend ({load['published']:g} > {idle['published']:g})",
                        tolerance=Tolerance.holds("the brief's WAF is higher under load for both engines"),
                        holds=bool(load["simulated"] > idle["simulated"]),
                        evidence=f"{load['simulated']:.3f} under load vs {idle['simulated']:.3f} idle"))
    return rows


#: Bar colours: judged rows by where their error falls against their tolerance, the others grey.
INSIDE, OUTSIDE, UNJUDGED = "#2ca02c", "#d62728", "#999999"
ERROR_AXIS = 200.0  # errors beyond ±200 % are drawn at the edge, with their value written


def _bound_text(r: Row) -> str:
    """What a row's error is judged against, in words for the figure: "within ±15 %", or for
    a one-sided bound the published bound itself ("one-sided bound: ≥ 1608 h")."""
    t = r.tolerance
    if math.isinf(t.high) != math.isinf(t.low):
        sign, limit = ("≥", t.low) if math.isinf(t.high) else ("≤", t.high)
        bound = r.published.removeprefix(">= ").removeprefix("<= ")
        return f"one-sided bound: {sign} {bound} {r.unit}".rstrip() + f" (error {sign} {limit:+g} {r.error_unit})"
    return f"within {t.text(r.error_unit)}"


def error_bars_figure(rows: list[Row]):
    """Each row with an error as a bar, its tolerance as a grey band behind it and, beside the
    axis, the error and what it is judged against. A bar is green inside its tolerance and red
    outside it, checked here against the tolerance itself; a one-sided bound says so, since a
    large error in its open direction passes (+309 % over a published lower bound)."""
    from ..plotting import pyplot

    shown = [r for r in rows if r.error is not None and math.isfinite(r.error)]
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(13, 0.45 * len(shown) + 1.4))
    side = ax.get_yaxis_transform()  # x in axes fractions, y in rows
    for i, r in enumerate(shown):
        t = r.tolerance
        low, high = max(t.low, -ERROR_AXIS - 10), min(t.high, ERROR_AXIS + 10)
        ax.barh(i, high - low, left=low, height=0.8, color="#e8e8e8", zorder=0)
        judged = r.status.value in ("pass", "fail")
        inside = t.low <= r.error <= t.high
        e = max(-ERROR_AXIS, min(ERROR_AXIS, r.error))
        ax.barh(i, e, height=0.55, color=(INSIDE if inside else OUTSIDE) if judged else UNJUDGED, zorder=2)
        verdict = ("passes" if inside else "fails") if judged else r.status.value
        ax.text(1.01, i, f"{r.error:+.1f} %  {verdict}: {_bound_text(r)}", transform=side, va="center",
                fontsize=10)
        if e != r.error:
            ax.text(e, i, "»" if e > 0 else "«", va="center", ha="right" if e > 0 else "left", color="white",
                    fontsize=12, fontweight="bold", zorder=3)
    ax.set_yticks(range(len(shown)), [f"{r.case}: {r.quantity}" for r in shown], fontsize=10)
    ax.axvline(0, color="k", lw=0.8)
    ax.set(xlabel=f"error (%; beyond ±{ERROR_AXIS:g} % drawn at the edge »)", xlim=(-ERROR_AXIS - 10, ERROR_AXIS + 10),
           ylim=(len(shown) - 0.5, -0.5))
    ax.grid(True, axis="x", alpha=0.3)
    return fig


def _error_bars(rows: list[Row], caption: str) -> Figure:
    from ..gallery.core import figure_png

    return Figure(caption=caption, png=figure_png(error_bars_figure(rows)))


# ---- gc_waf: Desnoyers's model ------------------------------------------------------------

GC_WAF_QUICK_BLOCKS = [72, 90, 130]


@register("gc_waf", "Steady-state WAF of uniform random writes vs spare area (greedy GC)",
          'P. Desnoyers, "Analytic modeling of SSD write performance", SYSTOR 2012 (model)',
          quick_note=f"{len(GC_WAF_QUICK_BLOCKS)} spare factors instead of 6")
def gc_waf(ctx: Context):
    from . import gc_waf as m

    with tempfile.TemporaryDirectory() as d:
        table = m.reproduce(blocks=GC_WAF_QUICK_BLOCKS if ctx.quick else None, workdir=Path(d))
    tol = Tolerance(low=-20.0, high=5.0, reason="the model cleans the oldest block of an infinite drive; greedy "
                    "GC on finite blocks does better, so the simulation sits at or below the curve (bounds as "
                    "the core's gc_model test)")
    rows = [Row(case=f"spare {100 * r.alpha - 100:.1f} %", quantity="WAF", published=f"{r.waf_model:.3f} (model)",
                simulated=r.waf_simulated, error=pct_error(r.waf_simulated, r.waf_model), tolerance=tol)
            for r in table.itertuples(index=False)]
    fig = _plot_png(lambda p: m.plot(table, p), "simulated WAF against the Desnoyers curve")
    return rows, [fig], []


# ---- large_iu: read-modify-write ----------------------------------------------------------


@register("large_iu", "Write amplification of writes smaller than a 16 KiB indirection unit",
          "analytic: IUs touched x IU size / bytes written (the effect cited by seed 004's brief)",
          quick_note="1000 writes per point instead of 4000")
def large_iu(ctx: Context):
    from ..config import load_profile
    from . import large_iu as m

    table = m.reproduce(writes=1000 if ctx.quick else 4000, seed=ctx.seed)
    tol = Tolerance.within(1.0, "exact arithmetic on a fresh drive; 1 % leaves room for the IUs still in the "
                                "write buffer at the end")
    rows = [Row(case=f"{r.write_size_kib} KiB at +{r.offset_kib} KiB", quantity="WAF",
                published=f"{r.waf_analytic:.3f} (analytic)", simulated=r.waf_simulated, error=r.error_pct,
                tolerance=tol) for r in table.itertuples(index=False)]
    iu = load_profile(m.PROFILE)[0].ftl.indirection_unit
    fig = _plot_png(lambda p: m.plot(table, p, iu), "WAF against write size, aligned and offset")
    return rows, [fig], []


# ---- gc_tail: read tail vs die timings ----------------------------------------------------


@register("gc_tail", "Garbage collection and the read tail: p99.9 on a fresh vs a steady-state drive",
          "no published figure: expectations from the profile's die timings (tR, tPROG, tBERS), "
          "as the experiment's docstring derives them",
          quick_note="8 GB drive, 4 s runs, 50 % and 100 % write shares, no cost-benefit run")
def gc_tail(ctx: Context):
    from . import gc_tail as m

    with tempfile.TemporaryDirectory() as d:
        if ctx.quick:
            table = m.reproduce(capacity=8 * 10**9, runtime=4.0, shares=(0.5, 1.0), policy_share=None,
                                workdir=Path(d), seed=ctx.seed)
        else:
            table = m.reproduce(workdir=Path(d), seed=ctx.seed)
    ref = table.attrs["reference"]
    t = table.set_index("scenario")
    alone, steady, fresh = t.loc["reads alone, steady"], t.loc["writes 50%, steady"], t.loc["writes 50%, fresh"]
    why = "expected from the die timings (no published figure)"
    checks = [
        ("reads alone: p99.9 below 4 x tR (queueing behind reads only)",
         alone["read_p99.9_us"] < 4 * ref["tR_us"], f"p99.9 {alone['read_p99.9_us']:.0f} us, tR {ref['tR_us']:.0f} us"),
        ("fresh drive, 50 % writes: read p99.9 near tPROG (a read waits for a program)",
         0.5 * ref["tPROG_us"] < fresh["read_p99.9_us"] < 2 * ref["tPROG_us"],
         f"p99.9 {fresh['read_p99.9_us']:.0f} us, tPROG {ref['tPROG_us']:.0f} us"),
        ("steady state, 50 % writes: read median unchanged (within 20 %)",
         abs(steady["read_p50_us"] / alone["read_p50_us"] - 1) < 0.2,
         f"p50 {steady['read_p50_us']:.0f} us vs {alone['read_p50_us']:.0f} us alone"),
        ("steady state, 50 % writes: longest read near tBERS, far below a whole victim",
         0.8 * ref["tBERS_us"] < steady["read_max_us"] < ref["tBERS_us"] + 2 * ref["tPROG_us"]
         and steady["read_max_us"] < ref["victim_us"] / 10,
         f"max {steady['read_max_us']:.0f} us, tBERS {ref['tBERS_us']:.0f} us, victim {ref['victim_us']:.0f} us"),
    ]
    rows = [Row(quantity=q, published="expected", tolerance=Tolerance.holds(why), holds=bool(ok), evidence=ev)
            for q, ok, ev in checks]
    fig = _plot_png(lambda p: m.plot(table, p), "read latency percentiles per scenario")
    return rows, [fig], []


# ---- ring buffer: TRIM ahead of the write pointer -----------------------------------------

RING_QUICK = {"drives": ["samsung-970-pro-512"], "scenarios": ["A", "B", "C10"], "scale": 1 / 64}
RING_WAF_TOL = Tolerance.within(15.0, "the model is greedy GC's steady state along the wrap; a fraction of the "
                                      "flash finds somewhat emptier victims (docs/model.md), so the simulation "
                                      "sits a little below (bound as the experiment's tests)")
RING_RATE_TOL = Tolerance.within(20.0, "rate from the model's die time per host byte; as WAF, plus the queue's "
                                       "ramp at the start and end of the trip (bound as the experiment's tests)")


@register("ring_buffer", "Ring-buffer recorder: overwriting a full drive with and without TRIM ahead",
          "model: Desnoyers 2012 greedy GC along the wrap; recorder rates from seed 002 (BittWare white paper)",
          quick_note="970 PRO only, 1/64 of its flash, recorder mode, scenarios A, B, C10")
def ring_buffer(ctx: Context):
    from ..config import load_profile
    from . import ring_buffer as m

    if ctx.quick:
        runs = m.simulate(RING_QUICK["drives"], RING_QUICK["scenarios"], modes=("recorder",),
                          scale=RING_QUICK["scale"], seed=ctx.seed)
    else:
        runs = m.simulate(seed=ctx.seed)
    table = m.reproduce(runs=runs)
    slc = {d: load_profile(d)[0].slc_cache is not None for d in table.drive.unique()}
    rows = []
    for r in table.to_dict("records"):
        case = f"{r['drive']} {r['scenario']} ({r['mode']})"
        missing = None if r["status"] == "ok" else r["status"]
        for quantity, sim, model, err, tol, unit in (
                ("WAF", r["waf"], r["waf_model"], r["waf_err_pct"], RING_WAF_TOL, ""),
                ("write rate", r["rate_GBps"], r["rate_model"], r["rate_err_pct"], RING_RATE_TOL, "GB/s")):
            skip = None
            if _num(model) is None:
                skip = "the model gives no value for this run"
            elif slc[r["drive"]] and r["scenario"].startswith(("B", "C")):
                skip = ("the model leaves the SLC cache out; with fragmented old data the cache takes part in "
                        "GC (see the experiment's docstring), so the model does not apply")
            rows.append(Row(case=case, quantity=quantity, published=f"{model:.3g} (model)" if _num(model) else "n/a",
                            simulated=_num(sim), unit=unit, error=_num(err), tolerance=tol, missing=missing,
                            skip=skip))
    fig = _plot_png(lambda p: m.plot(runs, p), "write rate along one trip round the ring (dashed: model)")
    return rows, [fig], []


# ---- thermal throttling -------------------------------------------------------------------

THERMAL_QUICK_RUNTIME_S = 200.0  # the fanless 970 PRO: onset at ~150 s, then throttled
THERMAL_QUICK_PM_S = 100.0  # the PM1725b: its usual rate, not its dips


@register("thermal", "Thermal throttling: onset on a fanless 970 PRO; the PM1725b's dips in seed 002",
          'TechPowerUp, "Samsung 970 Pro 512 GB Review", thermal page, '
          "https://www.techpowerup.com/review/samsung-970-pro-ssd-512-gb/7.html; seed 002 (BittWare)",
          quick_note=f"970 PRO for {THERMAL_QUICK_RUNTIME_S:g} s; PM1725b for {THERMAL_QUICK_PM_S:g} s "
                     "instead of seed 002's ~1880 s (its dips not judged)")
def thermal(ctx: Context):
    from ..config import load_profile
    from . import thermal as m

    profile_r = load_profile("samsung-pm1725b-1.6tb")[0].thermal.thermal_resistance
    runtime = THERMAL_QUICK_PM_S if ctx.quick else 1880.0
    tpu, tpu_ts = m.fanless_970pro(THERMAL_QUICK_RUNTIME_S if ctx.quick else 300.0)
    cooling, series = m.pm1725b_cooling([profile_r], runtime)
    table = m.published_vs_simulated(tpu, cooling, profile_r)
    rows = []
    for r in table.to_dict("records"):
        q = r["quantity"]
        skip = None
        if "[fitted]" in q:
            skip = "fitted to this figure: it matches by construction"
        elif "[profile input]" in q:
            skip = "a profile input taken from this figure, not a prediction"
        elif ctx.quick and "dip" in q:
            skip = QUICK + f"the dips need seed 002's ~1880 s of writing; quick mode writes {runtime:g} s"
        tol = Tolerance.within(15.0, "the review quotes ~150 s and ~300 GB: rounded figures, 15 % is our choice") \
            if "970" in q else SEED002_RATE_TOL
        rows.append(Row(quantity=q, published=f"{r['published']:.3g}", simulated=_num(r["simulated"]),
                        error=_num(r["error_%"]), tolerance=tol, skip=skip))
    fig = _plot_png(lambda p: m.plot(tpu_ts, series, p), "970 PRO fanless; PM1725b under the profile's cooling")
    return rows, [fig], []
