"""Seed 000, item 3 — the "tooth-missing" aging procedure (Kim In-sung, "SSD story 7: SSDs and
servers", blog, December 2008, http://minix.tistory.com/93).

Fill a file system with 4 KB files, delete every other one, fill it with 7 KB files, delete
every other one: "now the largest contiguous free extent is 4 KB and most are 1-3 KB; random
reads and random writes both collapse after aging". The procedure is the bundled scenario
``seed000-aging.toml`` (its assumptions written there: ext3 with 1 KiB blocks, 256 MiB, as
in 2008), run through the file layer on a 2008 SSD and a 2008 disk. The free space is read
as e2freefrag bins it; the benchmark (an 8 MiB file written into what is left, then 4 KiB
random reads and writes on it with O_DIRECT, one at a time) runs once on the aged file
system and once on a fresh one.
"""

from __future__ import annotations

import argparse
import dataclasses
import tempfile
from dataclasses import dataclass
from importlib import resources

from ..api import build, execute
from ..filework import FileWork, load
from .seed000_ssd_state import SSD_STATE

DRIVES = {"ssd": "intel-x25-m-80", "hdd": "seagate-barracuda-7200.11-1tb"}
HOST = "server-2008"
AGING = ("fill-a", "thin-a", "fill-b", "thin-b")
BENCH = ("make-bench", "randread", "randwrite")


def scenario(phases: tuple[str, ...]) -> FileWork:
    """The aging scenario with only the threads named (a thread's `after` keeps those kept)."""
    w = load(resources.files("ssdlab") / "scenarios" / "seed000-aging.toml")
    threads = [dataclasses.replace(t, after=[a for a in t.after if a in phases]) for t in w.threads if t.name in phases]
    return dataclasses.replace(w, threads=threads)


@dataclass
class Result:
    drive: str
    aged: bool
    #: free extents by e2freefrag's bins: (bin start in bytes, extents, free blocks)
    free_extents: list[tuple[int, int, int]]
    #: files left by their extents as filefrag counts them: (extents, files)
    extents_per_file: list[tuple[int, int]] = dataclasses.field(default_factory=list)
    read_iops: float | None = None
    write_iops: float | None = None


def _iops(core: dict, thread: str, names: list[str]) -> float:
    job = core["jobs"][names.index(thread)]
    op = job["file_ops"][1]  # open, then the repeated operation
    n = sum(o["ops"] for o in job["file_ops"][1:-1])
    ns = sum(o["latency_ns"] for o in job["file_ops"][1:-1])
    assert op["ops"] >= 1
    return n / (ns / 1e9) if ns else 0.0


def run(drive: str, aged: bool, bench: bool = True, seed: int = 0, state_cache: str | None = None) -> Result:
    """One run; ``state_cache``: a directory keeping the used SSD's preconditioned state between runs."""
    phases = (AGING if aged else ()) + (BENCH if bench else ())
    w = scenario(phases)
    spec = build(None, profile=DRIVES[drive], host=HOST, files=w, scheduler="noop", seed=seed,
                 precondition=SSD_STATE if drive == "ssd" else None)
    core = execute(spec, state_cache=state_cache).core
    names = [n for t in w.threads for n in [t.name] * t.instances]
    hist = [tuple(b) for b in core["files"]["free_extents"][0]]
    per_file = [(e, n) for e, n in core["files"]["extents_per_file"][0]]
    r = Result(drive, aged, hist, per_file)  # type: ignore[arg-type]
    if bench:
        r.read_iops = _iops(core, "randread", names)
        r.write_iops = _iops(core, "randwrite", names)
    return r


def free_space(hist: list[tuple[int, int, int]], block: int = 1024) -> dict[str, float]:
    """The share of free extents of 1-3 KiB and the largest free extent's bin (KiB)."""
    extents = sum(e for _, e, _ in hist)
    small = sum(b for start, e, b in hist if start < 4096)  # blocks in extents under 4 KiB
    small_extents = sum(e for start, e, _ in hist if start < 4096)
    largest = max((start for start, e, _ in hist if e), default=0)
    # within its bin, the largest extent's size: the bin's blocks over its extents when all
    # are one size (e2freefrag's bins are [start, 2 * start))
    top = next((blocks / e for start, e, blocks in hist if start == largest and e), 0.0)
    return {"share_1_3k": small_extents / extents if extents else 0.0, "largest_kib": top * block / 1024,
            "largest_bin_kib": largest / 1024, "free_blocks_small": small}


def reproduce(seed: int = 0) -> dict[str, dict[str, Result]]:
    out: dict[str, dict[str, Result]] = {}
    # The used SSD is preconditioned once and read back by the runs after the first.
    with tempfile.TemporaryDirectory(prefix="ssdlab-aging-") as cache:
        for d in DRIVES:
            out[d] = {"aged-only": run(d, True, bench=False, seed=seed, state_cache=cache),
                      "aged": run(d, True, seed=seed, state_cache=cache), "fresh": run(d, False, seed=seed, state_cache=cache)}
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--plot", default="seed000_aging.png")
    a = ap.parse_args(argv)
    runs = reproduce(a.seed)
    for d, rs in runs.items():
        fs = free_space(rs["aged-only"].free_extents)
        print(f"{d}: free extents of 1-3 KiB {100 * fs['share_1_3k']:.1f} % (published: most); "
              f"largest free extent {fs['largest_kib']:.1f} KiB (published 4 KB, error "
              f"{100 * (fs['largest_kib'] - 4) / 4:+.1f} %)")
        per_file = rs["aged-only"].extents_per_file
        files = sum(n for _, n in per_file)
        print(f"  files left {files:,}, by extents as filefrag counts them: "
              + ", ".join(f"{e}: {n:,} ({100 * n / files:.1f} %)" for e, n in per_file))
        for k in ("fresh", "aged"):
            r = rs[k]
            print(f"  {k:6} random read {r.read_iops:8.0f} IOPS, random write {r.write_iops:8.0f} IOPS")
        f, g = rs["fresh"], rs["aged"]
        print(f"  aged / fresh: read {g.read_iops / f.read_iops:.2f}, write {g.write_iops / f.write_iops:.2f} "
              "(published: both collapse)")
    plot(runs, a.plot)
    print(f"figure: {a.plot}")
    return 0


def plot(runs: dict[str, dict[str, Result]], path) -> None:
    """Left: the aged file system's free extents by e2freefrag's bins. Right: 4 KiB random
    IOPS, fresh against aged, per drive."""
    from pathlib import Path

    from ..plotting import pyplot, save

    plt = pyplot()
    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4.5))
    hist = [b for b in runs[next(iter(runs))]["aged-only"].free_extents if b[1]]
    labels = [f"{b[0] // 1024}-{2 * b[0] // 1024} KiB" for b in hist]
    left.bar(labels, [b[1] for b in hist], color="#4878a8")
    left.set_ylabel("free extents")
    left.set_title("free space after aging (ext3, 1 KiB blocks)")
    names, width = [], 0.2
    for i, (d, rs) in enumerate(runs.items()):
        for j, (what, attr) in enumerate((("read", "read_iops"), ("write", "write_iops"))):
            x = i * 2 + j
            names.append(f"{d} {what}")
            right.bar(x - width / 2, getattr(rs["fresh"], attr), width, color="#6aa84f",
                      label="fresh" if x == 0 else None)
            right.bar(x + width / 2, getattr(rs["aged"], attr), width, color="#cc4125",
                      label="aged" if x == 0 else None)
    right.set_xticks(range(len(names)), names)
    right.set_yscale("log")
    right.set_ylim(bottom=10)
    right.set_ylabel("4 KiB random IOPS (O_DIRECT, QD 1)")
    right.set_title("an 8 MiB file, fresh vs aged")
    right.legend()
    save(fig, Path(path))
