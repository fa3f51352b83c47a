"""Seed 000, item 4 — a tree copied by 1 ... 128 parallel ``cp -a`` (Kim In-sung, "SSD story 7:
SSDs and servers", blog, December 2008, http://minix.tistory.com/93).

A 1.5 GB tree of 55,000 files (mean 27.27 KB) on a RAM disk, copied by N processes at once
(``cp -a /ramdisk/usr /ssd/usrN``: each its own copy) onto RAID 0 of five SSDs and of five
SATA disks. The blog: with few writers RAID shows no gain; the peak is set by the maximum
bandwidth; past some number of writers throughput falls; SSD writes are not much better
than the disks'.

The model: each copier creates its tree's files one after the other in its own top-level
directory and writes each in 4 KiB calls (cp's buffer of the day), nothing read from the
device (the RAM disk); sizes gamma-distributed around 27.27 KB (shape 1.5, assumed: /usr's
many small files and few large ones); ext3 on md RAID 0 (64 KiB chunks), the ``server-2008``
host, CFQ. Throughput is bytes copied over the time until they are on disk (the copies, then
``sync``): with 8 GB of RAM the page cache would otherwise hold a good part of a small
copy. A shortened run copies 1/scale of each tree on a host with 1/scale of the memory, so
that the page cache holds the same share of what is copied.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass

from ..api import build, execute
from ..filework import FileWork, Thread
from ..system import raid

DRIVES = {"hdd": "seagate-barracuda-7200.11-1tb", "ssd": "intel-x25-m-80"}
HOST = "server-2008"
TREE_FILES = 55_000
MEAN_FILE_BYTES = 27_925  # 27.27 KB (KiB, as ls -s and du count): 1.5 GB over 55,000 files
COPIERS = (1, 2, 4, 8, 16, 32, 64, 128)
QUICK_COPIERS = (1, 4, 16)
#: 1/10 of each tree: 155 MB a copier, five times the drives' 32 MB write caches together
#: (smaller copies end in the caches: ext3 of 2008 sends no cache flush)
SCALE = 10


def work(copiers: int, files: int) -> FileWork:
    """``copiers`` copies of a tree of ``files`` files, each by its own process."""
    size = {"kind": "gamma", "mean": MEAN_FILE_BYTES, "shape": 1.5, "max": 11 * MEAN_FILE_BYTES}
    sets = [{"name": f"usr{i}", "target": 0, "dir": f"/usr{i}", "entries": files, "size": size, "dir_width": 0,
             "prealloc": 0.0} for i in range(copiers)]
    program = lambda i: {"ops": [{"op": "create", "set": i, "pick": {"kind": "next"}},  # noqa: E731
                                 {"op": "write_whole", "io_bytes": 4096}, {"op": "close"}],
                         "loops": files, "stop_on_error": True}
    threads = [Thread(f"cp{i}", 1, {"set": i, "direct": False, "service": "roundrobin", "end_fsync": False,
                                    "unlink": False, "program": program(i)}) for i in range(copiers)]
    # then sync, once every copier is done: the copy's time is until its data is on disk
    threads.append(Thread("sync", 1, {"set": 0, "direct": False, "service": "roundrobin", "end_fsync": False,
                                      "unlink": False, "program": {"ops": [{"op": "sync", "set": 0}], "loops": 1,
                                                                   "stop_on_error": False}},
                          after=[f"cp{i}" for i in range(copiers)]))
    return FileWork(name=f"treecopy-{copiers}", file_sets=sets, threads=threads, filesystem={"type": "ext3"})


@dataclass
class Point:
    drive: str
    drives: int
    copiers: int
    mb_s: float
    run_s: float
    dirty_at_end_mb: float


def run(drive: str, copiers: int, scale: int = 1, drives: int = 5, seed: int = 0) -> Point:
    w = work(copiers, max(TREE_FILES // scale, 1))
    system = raid(DRIVES[drive], 0, drives, chunk="64k") if drives > 1 else None
    spec = build(None, profile=DRIVES[drive] if system is None else None, system=system, host=HOST, files=w,
                 scheduler="cfq", seed=seed, precondition="sequential" if drive == "ssd" and system is None else None)
    mem = spec.core["host"]["memory"]
    mem["ram_bytes"] //= scale
    mem["reserved_bytes"] //= scale
    core = execute(spec).core
    f = core["files"]
    run_s = (core["end_ns"] - core["start_ns"]) / 1e9
    copied = f["dirtied_pages"] * 4096
    return Point(drive, drives, copiers, copied / run_s / 1e6, run_s, f["dirty_pages_at_end"] * 4096 / 1e6)


def sweep(quick: bool, seed: int = 0) -> list[Point]:
    scale = SCALE
    points = [run(d, n, scale, seed=seed) for d in DRIVES for n in (QUICK_COPIERS if quick else COPIERS)]
    # one copier on one drive: what RAID adds for few writers
    points += [run(d, 1, scale, drives=1, seed=seed) for d in DRIVES]
    return points


@dataclass
class Trend:
    claim: str
    holds: bool | None
    evidence: str


def trends(points: list[Point]) -> list[Trend]:
    """The blog's claims on the points; "too many copiers" needs the sweep's larger counts
    (``Trend.holds`` None when the points stop at 16)."""
    out = []
    by = {(p.drive, p.drives, p.copiers): p for p in points}
    peak = {d: max((p for p in points if p.drive == d and p.drives == 5), key=lambda p: p.mb_s) for d in DRIVES}
    for d in DRIVES:
        one, alone = by[(d, 5, 1)], by[(d, 1, 1)]
        out.append(Trend(f"{d}: one copier gains nothing from RAID 0 (within 20 % of one drive)",
                         one.mb_s <= 1.2 * alone.mb_s,
                         f"{one.mb_s:.0f} MB/s on five drives, {alone.mb_s:.0f} on one"))
        most = max(p.copiers for p in points if p.drive == d and p.drives == 5)
        last = by[(d, 5, most)]
        out.append(Trend(f"{d}: too many copiers lose throughput (the most at least 10 % under the peak)",
                         last.mb_s <= 0.9 * peak[d].mb_s if most > 16 else None,
                         f"peak {peak[d].mb_s:.0f} MB/s at {peak[d].copiers}, {last.mb_s:.0f} at {most}"))
    ratio = peak["ssd"].mb_s / peak["hdd"].mb_s
    out.append(Trend("SSD writes not much better than the disks' (peak under 1.5x)", ratio < 1.5,
                     f"peaks {peak['ssd'].mb_s:.0f} and {peak['hdd'].mb_s:.0f} MB/s ({ratio:.2f}x)"))
    return out


def plot(points: list[Point], path) -> None:
    from ..plotting import pyplot, save

    plt = pyplot()
    fig, ax = plt.subplots(figsize=(9, 5))
    for d in DRIVES:
        ps = sorted((p for p in points if p.drive == d and p.drives == 5), key=lambda p: p.copiers)
        ax.plot([p.copiers for p in ps], [p.mb_s for p in ps], marker="o", label=f"5 x {DRIVES[d]}, RAID 0")
    ax.set_xscale("log", base=2)
    ax.set_xlabel("parallel cp -a")
    ax.set_ylabel("copy throughput (MB/s)")
    ax.set_title("Seed 000 item 4: a 1.5 GB tree copied by N processes (simulated)")
    ax.legend()
    save(fig, path)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="three copier counts (1, 4, 16) instead of eight")
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args(argv)
    points = sweep(a.quick, a.seed)
    for p in points:
        print(f"{p.drive} x{p.drives} {p.copiers:4d} copiers: {p.mb_s:7.1f} MB/s ({p.run_s:.1f} s, "
              f"{p.dirty_at_end_mb:.0f} MB dirty at the end)")
    for t in trends(points):
        verdict = "not judged" if t.holds is None else "holds" if t.holds else "FAILS"
        print(f"{verdict}: {t.claim}: {t.evidence}")
    return 0
