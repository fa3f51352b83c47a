"""Large indirection units (seed 004): write amplification against write size and alignment.

QLC drives map flash in units larger than 4 KiB (16 KiB on the Solidigm D5-P5336) to keep the
map small. A write smaller than the IU, or one that straddles IU boundaries, makes the drive
read the rest of each IU it touches and program whole IUs (read-modify-write). Before any
garbage collection, that alone gives WAF = (IUs touched x IU size) / write size:

* aligned writes of size s <= IU:      WAF = IU / s            (4 KiB on 16 KiB: 4)
* aligned writes of a multiple of IU:  WAF = 1
* writes offset by 4 KiB:              WAF = ceil((s + 4 KiB) / IU) x IU / s

The brief gives no figure for this (it cites the effect, and the rebuilt drive's WAF of
1.02-1.58 under RAID); the analytic values above are the published expectation, and the
simulation must reproduce them exactly on a fresh drive.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import pandas as pd

from ..plotting import pyplot, save
from ..api import run
from ..config import load_profile

PROFILE = "solidigm-d5-p5336-61.44tb"
SIZES = [4096, 8192, 16384, 32768, 65536, 131072]


def analytic_waf(size: int, offset: int, iu: int) -> float:
    """IUs a write touches times the IU, over the bytes written (no GC, no merging)."""
    first = offset // iu
    last = (offset + size - 1) // iu
    return (last - first + 1) * iu / size


def job_text(size: int, misalign: int, writes: int) -> str:
    # Random offsets aligned to the write size (or the IU, whichever is larger), then shifted.
    return (f"[w]\nrw=randwrite\nbs={size}\nba={max(size, 16384)}\noffset={misalign}\n"
            f"ioengine=libaio\ndirect=1\niodepth=32\nnumber_ios={writes}\nnorandommap\n")


def reproduce(profile: str = PROFILE, writes: int = 4000, seed: int = 0) -> pd.DataFrame:
    dev, _ = load_profile(profile)
    iu = dev.ftl.indirection_unit
    rows = []
    for size in SIZES:
        for misalign in (0, 4096):
            r = run(job_text(size, misalign, writes), profile=profile, seed=seed)
            # IUs still waiting in the write buffer will be programmed whole: count them.
            i = r.device["internal"]
            sim = (i["media_bytes_written"] + i["nand"]["write_buffer_unplaced_bytes"]) / i["host_bytes_written"]
            expect = analytic_waf(size, misalign, iu)
            rows.append({
                "write_size_kib": size // 1024,
                "offset_kib": misalign // 1024,
                "waf_analytic": expect,
                "waf_simulated": sim,
                "error_pct": 100.0 * (sim / expect - 1.0),
                "rmw_reads": r.internal()["rmw_reads"],
            })
    return pd.DataFrame(rows)


def plot(table: pd.DataFrame, path: Path, iu: int) -> None:
    plt = pyplot()

    fig, ax = plt.subplots(figsize=(7, 4))
    for off, style in ((0, "o-"), (4, "s--")):
        t = table[table.offset_kib == off]
        label = "aligned" if off == 0 else "offset by 4 KiB"
        ax.plot(t.write_size_kib, t.waf_simulated, style, label=f"simulated, {label}")
        ax.plot(t.write_size_kib, t.waf_analytic, "k:", alpha=0.5)
    ax.set(xscale="log", xlabel="random write size (KiB)", ylabel="write amplification (NAND / host)",
           title=f"Read-modify-write with a {iu // 1024} KiB indirection unit (dotted: analytic)")
    ax.set_xticks(table.write_size_kib.unique(), [str(v) for v in table.write_size_kib.unique()])
    ax.legend()
    save(fig, path)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--profile", default=PROFILE)
    ap.add_argument("--writes", type=int, default=4000)
    ap.add_argument("--plot", type=Path, default=Path("out/large_iu_waf.png"))
    args = ap.parse_args(argv)
    table = reproduce(args.profile, args.writes)
    iu = load_profile(args.profile)[0].ftl.indirection_unit
    with pd.option_context("display.width", 160, "display.float_format", "{:.3f}".format):
        print(f"WAF from read-modify-write on {args.profile} (IU {iu // 1024} KiB), fresh drive")
        print(table.to_string(index=False))
    print(f"largest error: {table.error_pct.abs().max():.2f} %")
    plot(table, args.plot, iu)
    print(f"plot: {args.plot}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
