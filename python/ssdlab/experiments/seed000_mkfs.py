"""Seed 000, item 3 — mkfs with 20 million inodes on a 2008 disk and a 2008 MLC SSD (Kim
In-sung, "SSD story 7: SSDs and servers", blog, December 2008, http://minix.tistory.com/93).

The blog names mkfs with 20 million inodes "another small-write test where MLC does badly",
without a figure. The bundled scenario ``seed000-mkfs.toml`` (its assumptions are written
there) runs mke2fs of ext3 with ``-N 20000000`` on each whole drive, as 1.41 writes it: every
inode table zeroed, the journal zeroed, bitmaps and descriptors, through the block device's
page cache, then fsync. The time is from its first write to the end of the fsync.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from importlib import resources

from ..api import build, execute
from ..filework import FileWork, load
from ..reference import SEED000_MKFS_CLAIM, SEED000_MKFS_INODES
from .seed000_ssd_state import SSD_STATE

DRIVES = {"hdd": "seagate-barracuda-7200.11-1tb", "ssd": "intel-x25-m-80"}
HOST = "server-2008"
#: our reading of "MLC does badly" at mkfs (the blog gives no time): the SSD takes at least
#: this fraction of the disk's time
NO_GAIN = 0.9


@dataclass
class Run:
    drive: str
    seconds: float
    written_mib: float
    #: the mean size of the writes the drive saw, KiB
    write_kib: float

    @property
    def mib_per_s(self) -> float:
        return self.written_mib / self.seconds


def scenario() -> FileWork:
    w = load(resources.files("ssdlab") / "scenarios" / "seed000-mkfs.toml")
    if (w.filesystem or {}).get("inode_count") != SEED000_MKFS_INODES:
        raise ValueError(f"seed000-mkfs.toml: {(w.filesystem or {}).get('inode_count')} inodes, the blog's is {SEED000_MKFS_INODES}")
    return w


def run(drive: str, seed: int = 0, scheduler: str = "cfq") -> Run:
    """mkfs on `drive` under `scheduler` (2008's default, CFQ; one writer: the others give
    the same)."""
    w = scenario()
    spec = build(None, profile=DRIVES[drive], host=HOST, files=w, scheduler=scheduler, seed=seed,
                 precondition=SSD_STATE if drive == "ssd" else None)
    core = execute(spec).core
    disk = core["devices"][0]["disk"]
    return Run(drive, (core["end_ns"] - core["start_ns"]) / 1e9, core["files"]["mkfs_bytes"] / 2**20,
               disk["write_sectors"] * 512 / 1024 / max(disk["write_ios"], 1))


def reproduce(seed: int = 0) -> dict[str, Run]:
    return {d: run(d, seed) for d in DRIVES}


def plot(runs: dict[str, Run], path) -> None:
    """mkfs time per drive."""
    from pathlib import Path

    from ..plotting import pyplot, save

    plt = pyplot()
    fig, ax = plt.subplots(figsize=(6, 4))
    drives = list(runs)
    ax.bar(range(len(drives)), [runs[d].seconds for d in drives], 0.5, color="#4878a8")
    ax.set_xticks(range(len(drives)), [f"{d}\n{DRIVES[d]}" for d in drives])
    ax.set_ylabel("mke2fs -N 20000000, simulated (s)")
    ax.set_title("Seed 000 item 3: mkfs with 20 million inodes")
    save(fig, Path(path))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--plot", default="seed000_mkfs.png")
    a = ap.parse_args(argv)
    runs = reproduce(a.seed)
    for d, r in runs.items():
        print(f"{d:4} {DRIVES[d]:32} {r.seconds:8.1f} s  {r.written_mib:9,.0f} MiB written  "
              f"{r.mib_per_s:6.1f} MiB/s  writes of {r.write_kib:6.0f} KiB on average")
    ratio = runs["ssd"].seconds / runs["hdd"].seconds
    print(f"published: \"{SEED000_MKFS_CLAIM}\" (no time given)")
    print(f"simulated: ssd / hdd time {ratio:.2f}; our reading of the claim, the SSD at least {NO_GAIN:g} of the "
          f"disk's time: {'holds' if ratio >= NO_GAIN else 'fails'}")
    plot(runs, a.plot)
    print(f"figure: {a.plot}")
    return 0
