"""Seed 000, item 1 again, as file reads (Kim In-sung, "SSD story 7: SSDs and servers", blog,
December 2008, http://minix.tistory.com/93).

Item 1 (``seed000``) ran its random 4 KiB reads with O_DIRECT on the raw arrays; the blog's
test was most likely file reads through the page cache. Here the same 64 processes each read
4 KiB at random offsets of their own file, one read at a time, buffered, on ext3 on md RAID 0
(64 KiB chunks) of 8 disks (Barracuda 7200.11) or 8 SSDs (X25-M), on the ``server-2008``
host (8 GB of RAM), under CFQ and noop on the members. The files together are twice the RAM
(assumed: the blog says only that the test set was larger than memory; 64 files of 256 MiB).
They are read once from start to end before the timed reads (as a benchmark's own layout or a
first pass leaves them), so the page cache holds what it would in a warm run. The published
claim is a trend: "8 SSDs vs 8 HDDs look alike under CFQ" (``seed000``'s reading: the SSD
array under 2x the disks'); its companion, "far apart under noop". ext3 is made on each whole
array with 2008's mke2fs defaults; the files are in one directory, so ext3 keeps them
together in one part of the array (the disks' seeks span 16 GiB of the 8 TB, where item 1's
reads spanned all of it).
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from pathlib import Path

from ..api import build, execute
from ..filework import FileWork, Thread
from ..system import raid

DRIVES = {"hdd": "seagate-barracuda-7200.11-1tb", "ssd": "intel-x25-m-80"}
SCHEDULERS = ("cfq", "noop")
HOST = "server-2008"
PROCESSES = 64
FILE_BYTES = 256 << 20  # 64 x 256 MiB = 16 GiB: twice the host's 8 GB of RAM (assumed)
#: timed reads per process: full and quick (the disks' runs take most of the time)
READS = {"full": {"hdd": 60, "ssd": 800}, "quick": {"hdd": 12, "ssd": 120}}
#: a read faster than this found its page cached: the system call and the copy are a few µs,
#: the fastest device read here (an X25-M's) tens of µs more (the runs print the fastest miss)
HIT_NS = 40_000
#: "alike": seed000's reading of the blog, the SSD array under this many times the disks'
ALIKE = 2.0


def work(reads: int) -> FileWork:
    """64 files read whole once (the warm page cache), then 64 readers of ``reads`` random
    4 KiB reads each, each in its own file."""
    sets = [{"name": "data", "target": 0, "dir": "/data", "entries": PROCESSES,
             "size": {"kind": "fixed", "bytes": FILE_BYTES}, "dir_width": 0, "prealloc": 1.0}]

    def thread(name: str, ops: list, after: list[str]) -> Thread:
        return Thread(name, PROCESSES, {"set": 0, "direct": False, "service": "roundrobin", "end_fsync": False,
                                        "unlink": False, "program": {"ops": ops, "loops": 1, "stop_on_error": True}},
                      after=after)

    warm = thread("warm", [{"op": "open", "set": 0, "pick": {"kind": "rotor"}},
                           {"op": "read_whole", "io_bytes": 1 << 20}, {"op": "close"}], [])
    ops = [{"op": "open", "set": 0, "pick": {"kind": "rotor"}}]
    ops += [{"op": "read", "io_bytes": 4096, "random": True}] * reads + [{"op": "close"}]
    return FileWork(name="filereads", file_sets=sets, threads=[warm, thread("reader", ops, ["warm"])],
                    filesystem={"type": "ext3"})


@dataclass
class Point:
    drive: str
    scheduler: str
    iops: float
    hit_pct: float
    reads: int
    #: the fastest read that was not a hit, µs (how clear the line between them is)
    fastest_miss_us: float


def run(drive: str, scheduler: str, reads: int, seed: int = 0) -> Point:
    """One array and scheduler: the readers' IOPS (reads over the time from the first to the
    last reader's end) and the share of their pages found in the cache."""
    w = work(reads)
    spec = build(None, system=raid(DRIVES[drive], 0, 8, chunk="64k"), host=HOST, files=w, scheduler=scheduler,
                 seed=seed, precondition="sequential" if drive == "ssd" else None)
    core = execute(spec).core
    readers = [j for j in core["jobs"] if j["name"] == "reader"]
    start = min(j["start_ns"] for j in readers)
    end = max(j["end_ns"] for j in readers)
    # Each read is its own step of the program (between the open and the close), so each
    # has its own latency: one under HIT_NS was served from the cache.
    lat = [o["latency_ns"] for j in readers for o in j["file_ops"][1:-1] if o["ops"]]
    hits = sum(x < HIT_NS for x in lat)
    return Point(drive, scheduler, len(lat) / ((end - start) / 1e9), 100 * hits / max(len(lat), 1), len(lat),
                 min((x for x in lat if x >= HIT_NS), default=0) / 1e3)


def sweep(quick: bool = False, seed: int = 0) -> list[Point]:
    n = READS["quick" if quick else "full"]
    return [run(d, s, n[d], seed) for d in DRIVES for s in SCHEDULERS]


def direct_ratios(quick: bool = False, seed: int = 0) -> dict[str, float]:
    """Item 1's SSD/HDD ratios with O_DIRECT on the raw arrays (``seed000``'s runs, the same
    I/O counts), per scheduler: what the file reads are compared with."""
    from .seed000 import HDD, SSD, processes_iops

    scale = 4 if quick else 1
    iops = {(p, s): processes_iops(p, s, PROCESSES, total=total // scale, seed=seed, drives=8)
            for p, total in ((HDD, 4_000), (SSD, 60_000)) for s in SCHEDULERS}
    return {s: iops[(SSD, s)] / iops[(HDD, s)] for s in SCHEDULERS}


@dataclass
class Trend:
    claim: str
    holds: bool
    evidence: str
    #: SSD/HDD IOPS
    ratio: float
    #: the claim as a bound on the ratio, and the ratio's error against it (%)
    published: str
    error: float


def trends(points: list[Point], direct: dict[str, float] | None = None) -> list[Trend]:
    """The blog's two claims on the arrays; ``direct``: item 1's SSD/HDD ratios with O_DIRECT
    per scheduler, for the evidence."""
    by = {(p.drive, p.scheduler): p for p in points}
    r = {s: by[("ssd", s)].iops / by[("hdd", s)].iops for s in SCHEDULERS}

    def was(s: str) -> str:
        return f"; O_DIRECT {direct[s]:.0f}x" if direct and s in direct else ""

    return [Trend("8 SSDs vs 8 HDDs (RAID 0), file reads: alike under cfq", r["cfq"] < ALIKE,
                  f"SSD/HDD {r['cfq']:.1f}x under cfq ({by[('ssd', 'cfq')].iops:.0f} vs {by[('hdd', 'cfq')].iops:.0f} "
                  f"IOPS, {by[('hdd', 'cfq')].hit_pct:.0f} % cache hits){was('cfq')}", r["cfq"],
                  f"< {ALIKE:g}x", 100 * (r["cfq"] - ALIKE) / ALIKE),
            Trend("8 SSDs vs 8 HDDs (RAID 0), file reads: SSDs far ahead under noop",
                  r["noop"] > 2 * r["cfq"] and r["noop"] > 10,
                  f"SSD/HDD {r['noop']:.1f}x under noop ({by[('ssd', 'noop')].iops:.0f} vs "
                  f"{by[('hdd', 'noop')].iops:.0f} IOPS){was('noop')}", r["noop"],
                  "> 10x", 100 * (r["noop"] - 10) / 10)]


def plot(points: list[Point], path) -> None:
    from ..plotting import pyplot, save

    plt = pyplot()
    fig, ax = plt.subplots(figsize=(8, 5))
    x = range(len(SCHEDULERS))
    for k, d in enumerate(DRIVES):
        vals = [next(p.iops for p in points if p.drive == d and p.scheduler == s) for s in SCHEDULERS]
        ax.bar([i + 0.4 * k for i in x], vals, width=0.4, label=f"8 x {DRIVES[d]}, RAID 0")
    ax.set_xticks([i + 0.2 for i in x], SCHEDULERS)
    ax.set_yscale("log")
    ax.set_ylabel("random 4 KiB file reads, IOPS (64 processes)")
    ax.set_title("Seed 000 item 1 as file reads: ext3, page cache, files 2x RAM (simulated)")
    ax.legend()
    save(fig, path)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="fewer reads per process")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--plot", type=Path, default=Path("seed000_filereads.png"))
    a = ap.parse_args(argv)
    points = sweep(a.quick, a.seed)
    direct = direct_ratios(a.quick, a.seed)
    for p in points:
        print(f"{p.drive:4} {p.scheduler:5} {p.iops:10.0f} IOPS  {p.hit_pct:5.1f} % hits  {p.reads} reads  "
              f"fastest miss {p.fastest_miss_us:.0f} us")
    ok = True
    print(f"{'claim':64} {'published':>12} {'simulated':>10} {'error':>8}")
    for t in trends(points, direct):
        print(f"{t.claim:64} {t.published:>12} {t.ratio:9.1f}x {t.error:+7.0f}%  "
              f"{'holds' if t.holds else 'FAILS'}: {t.evidence}")
        ok &= t.holds
    plot(points, a.plot)
    print(f"figure: {a.plot}")
    return 0 if ok else 1
