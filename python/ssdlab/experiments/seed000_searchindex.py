"""Seed 000, item 8 — a search-index server warming up, and an index swap (Kim In-sung, "SSD
story 7: SSDs and servers", blog, December 2008, http://minix.tistory.com/93).

The blog: on disks a query took 20 ms at first and 6-8 ms once the index was cached; a server
on SSDs stayed fast through an index swap. It says nothing of the server, the index or the
queries: the bundled scenario ``seed000-searchindex.toml`` assumes them, each with its reason
(an index four times the RAM, Zipf-popular posting lists scattered over its file, 2.4 terms a
query, 32 front-end connections). The server is the web server's: ``server-2008`` (8 GB of
RAM), ext3 on RAID 0 (64 KiB chunks) behind its RAID card (``seed000_webserver.ENGINE``) of 9
Barracuda 7200.11 disks or 8 X25-M SSDs (filled first, as drives in service are). The page
cache starts cold; after 300 s the queries move to the next index, none of which is cached.

A query's time is its open, reads and close (its think time left out), from the run's
10 s samples; "cold" is the first minute of queries, "warm" the last minute before the swap,
"after the swap" the first minute on the new index — minute-long windows, as a monitoring
graph of the day would show them.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from importlib import resources

from ..api import build, execute
from ..fileseries import Interval, intervals
from ..filework import FileWork, load
from ..system import raid
from .seed000_webserver import ENGINE

DRIVES = {"hdd": ("seagate-barracuda-7200.11-1tb", 9), "ssd": ("intel-x25-m-80", 8)}
HOST = "server-2008"
INTERVAL_S = 10
#: the window each figure is the mean over, s
WINDOW_S = 60
BEFORE = ["query-2-a", "query-3-a"]
AFTER = ["query-2-b", "query-3-b"]


@dataclass
class Run:
    drive: str
    #: (end of interval s, mean query ms or None, cache hit ratio or None) per 10 s interval
    series: list[tuple[float, float | None, float | None]]
    cold_ms: float
    warm_ms: float
    after_swap_ms: float
    warm_hit_ratio: float
    queries_per_s: float


def scenario() -> FileWork:
    return load(resources.files("ssdlab") / "scenarios" / "seed000-searchindex.toml")


def _mean_ms(rows: list[Interval], names: list[str]) -> float:
    """The mean query time over ``rows``, weighted by the queries each completed."""
    runs = sum(t.programs for r in rows for n, t in r.threads.items() if n in names)
    busy = sum(t.busy_ns for r in rows for n, t in r.threads.items() if n in names)
    return busy / runs / 1e6 if runs else float("nan")


def _hits(rows: list[Interval]) -> float:
    xs = [r.hit_ratio for r in rows if r.hit_ratio is not None]
    return sum(xs) / len(xs) if xs else float("nan")


def run(drive: str, seed: int = 0) -> Run:
    profile, n = DRIVES[drive]
    work = scenario()
    spec = build(None, system=raid(profile, 0, n, chunk="64k", engine=ENGINE), host=HOST, files=work, scheduler="cfq",
                 seed=seed, interval=f"{INTERVAL_S}s", precondition="sequential" if drive == "ssd" else None)
    core = execute(spec).core
    rows = intervals(work, core)
    # The swap: when the first index's queries end (their runtime).
    swap_s = next(t.runtime_ns for t in work.threads if t.name == BEFORE[0]) / 1e9
    before = [r for r in rows if r.end_s <= swap_s + 1e-9]
    after = [r for r in rows if r.start_s >= swap_s - 1e-9]
    per = WINDOW_S // INTERVAL_S
    series = [(r.end_s, r.program_ms(BEFORE + AFTER), r.hit_ratio) for r in rows]
    elapsed = rows[-1].end_s - rows[0].start_s if rows else 0.0
    queries = sum(t.programs for r in rows for t in r.threads.values())
    return Run(drive, series, _mean_ms(before[:per], BEFORE), _mean_ms(before[-per:], BEFORE), _mean_ms(after[:per], AFTER),
               _hits(before[-per:]), queries / elapsed if elapsed else 0.0)


def reproduce(seed: int = 0) -> dict[str, Run]:
    return {d: run(d, seed) for d in DRIVES}


def error_pct(simulated: float, published: float) -> float:
    return 100.0 * (simulated - published) / published


def range_error_pct(simulated: float, published: tuple[float, float]) -> float:
    """How far outside a published range, as a share of its nearer end (0 inside it)."""
    lo, hi = published
    return 0.0 if lo <= simulated <= hi else error_pct(simulated, lo if simulated < lo else hi)


def plot(runs: dict[str, Run], path) -> None:
    """Mean query time per 10 s interval on disks and on SSDs, with the blog's figures."""
    from pathlib import Path

    from ..plotting import pyplot, save
    from ..reference import SEED000_SEARCHINDEX as P

    plt = pyplot()
    fig, ax = plt.subplots(figsize=(8, 4.5))
    for d, r in runs.items():
        pts = [(t, ms) for t, ms, _ in r.series if ms is not None]
        ax.plot([t for t, _ in pts], [ms for _, ms in pts], label=f"{d} (simulated)")
    ax.axhline(P["hdd_cold_ms"], color="#999999", ls="--", lw=1, label="disks, cold (published)")
    ax.axhspan(*P["hdd_warm_ms"], color="#999999", alpha=0.25, label="disks, warm (published)")
    ax.set_yscale("log")
    ax.set_xlabel("time (s); the index is swapped at 300 s")
    ax.set_ylabel("mean query time (ms)")
    ax.set_title("Seed 000 item 8: a search-index server warming up")
    ax.legend(fontsize=8)
    save(fig, Path(path))


def main(argv: list[str] | None = None) -> int:
    from ..reference import SEED000_SEARCHINDEX as P

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--plot", default="seed000_searchindex.png")
    a = ap.parse_args(argv)
    runs = reproduce(a.seed)
    h, s = runs["hdd"], runs["ssd"]
    print(f"{'quantity':34} {'published':>10} {'simulated':>10} {'error':>8}")
    print(f"{'disks, cold query (ms)':34} {P['hdd_cold_ms']:10.1f} {h.cold_ms:10.2f} {error_pct(h.cold_ms, P['hdd_cold_ms']):+7.1f}%")
    lo, hi = P["hdd_warm_ms"]
    print(f"{'disks, warm query (ms)':34} {f'{lo:g}-{hi:g}':>10} {h.warm_ms:10.2f} "
          f"{range_error_pct(h.warm_ms, P['hdd_warm_ms']):+7.1f}%")
    for r in (h, s):
        print(f"{r.drive}: cold {r.cold_ms:.2f} ms, warm {r.warm_ms:.2f} ms (cache hits {100 * r.warm_hit_ratio:.0f} %), "
              f"first minute after the swap {r.after_swap_ms:.2f} ms; {r.queries_per_s:.0f} queries/s")
    plot(runs, a.plot)
    print(f"figure: {a.plot}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
