"""Steady-state write amplification of uniform random writes against spare area.

Greedy garbage collection under uniform random 4 KiB writes, compared with the analytic model
of Desnoyers ("Analytic modeling of SSD write performance", SYSTOR 2012): with alpha the ratio
of physical space that can hold aged data to logical space, the valid fraction `a` of a
cleaned block solves a = exp(-alpha (1 - a)) and WAF = 1 / (1 - a). The model assumes large
blocks and cleans the oldest block; greedy with finite blocks, and GC that empties a victim
gradually while the host keeps invalidating it, do somewhat better, so simulated values sit
at or a little below the curve (the Rust test `gc_model.rs` bounds the gap).

Drive: the 850 PRO's flash shrunk to 16 GB so a full-size steady state takes seconds; the
spare area is varied through the number of blocks per plane.
"""

from __future__ import annotations

import argparse
import math
import re
from importlib import resources
from pathlib import Path

import pandas as pd

from ..api import run
from ..config import load_profile
from ..plotting import pyplot, save

JOB = "[w]\nrw=randwrite\nbs=4k\nioengine=libaio\ndirect=1\niodepth=32\nnorandommap\nruntime={runtime}\ntime_based\n"
BLOCKS = [68, 72, 80, 90, 104, 130]


def desnoyers_waf(alpha: float) -> float:
    """WAF of the Desnoyers model for effective spare ratio alpha (> 1)."""
    a = 0.5
    for _ in range(200):  # fixed-point iteration converges for alpha > 1
        a = math.exp(-alpha * (1.0 - a))
    return 1.0 / (1.0 - a)


def profile_text(blocks_per_plane: int) -> str:
    text = (resources.files("ssdlab") / "profiles" / "samsung-850-pro.toml").read_text()
    text = re.sub(r"capacity = \{ value = \d+", "capacity = { value = 16000000000", text)
    return re.sub(r"blocks_per_plane = \{ value = \d+", f"blocks_per_plane = {{ value = {blocks_per_plane}", text)


def reproduce(blocks: list[int] | None = None, runtime: float = 3.0, workdir: Path = Path("out")) -> pd.DataFrame:
    rows = []
    workdir.mkdir(parents=True, exist_ok=True)
    for b in blocks or BLOCKS:
        path = workdir / f"gc_waf_{b}.toml"
        path.write_text(profile_text(b))
        dev, _ = load_profile(path)
        n = dev.nand
        ius_per_block = n.page_size // dev.ftl.indirection_unit * n.planes_per_die * n.pages_per_block
        # Space that holds aged data: all blocks but each die's GC reserve and open block.
        usable = (dev.dies * (n.blocks_per_plane - dev.ftl.gc_threshold_blocks - 1)) * ius_per_block
        alpha = usable / (dev.capacity // dev.ftl.indirection_unit)
        r = run(JOB.format(runtime=runtime), profile=path, precondition="random:2", interval=runtime / 10)
        ts = r.timeseries_table()
        settled = ts[ts.t_s > runtime / 3]
        waf = float((settled.waf * settled.write_bw_bytes).sum() / settled.write_bw_bytes.sum())
        model = desnoyers_waf(alpha)
        rows.append({"blocks_per_plane": b, "raw_spare": dev.raw_bytes / dev.capacity - 1, "alpha": alpha,
                     "waf_model": model, "waf_simulated": waf, "ratio": waf / model,
                     "iops": r.total_iops()})
    return pd.DataFrame(rows)


def plot(table: pd.DataFrame, path: Path) -> None:
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(6.5, 4))
    xs = [1.02 + i * 0.01 for i in range(120)]
    ax.plot([x - 1 for x in xs], [desnoyers_waf(x) for x in xs], "k-", label="Desnoyers 2012 (model)")
    ax.plot(table.alpha - 1, table.waf_simulated, "o", label="simulated, greedy GC")
    ax.set(xlabel="effective spare factor (alpha - 1)", ylabel="write amplification",
           title="Uniform random 4 KiB writes at steady state", yscale="log")
    ax.legend()
    save(fig, path)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runtime", type=float, default=3.0, help="simulated seconds per point")
    ap.add_argument("--plot", type=Path, default=Path("out/gc_waf.png"))
    args = ap.parse_args(argv)
    table = reproduce(runtime=args.runtime, workdir=args.plot.parent)
    with pd.option_context("display.width", 160, "display.float_format", "{:.3f}".format):
        print("Steady-state WAF of uniform random 4 KiB writes: Desnoyers model vs simulated")
        print(table.to_string(index=False))
    print(f"simulated / model: {table.ratio.min():.3f} .. {table.ratio.max():.3f}")
    plot(table, args.plot)
    print(f"plot: {args.plot}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
