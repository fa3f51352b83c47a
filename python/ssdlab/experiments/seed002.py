"""Seed 002 — BittWare, "NVMe SSD Write Performance" (data-recorder white paper;
https://www.bittware.com/resources/ssd-write-performance/).

How many NVMe drives does a 100 Gb/s (12.5 GB/s) recorder need in RAID 0? The paper wrote each
drive with SPDK (no file system, one thread per drive keeping the queue full, large aligned
buffers): fill from empty, then overwrite the whole drive, logging throughput over time.
Datasheet write speeds are not sustained: the 970 EVO Plus drops from 2.7-2.8 GB/s to ~1.6 GB/s
once its SLC cache is full; the PM1725b dips from 1.7 to 1.3 GB/s. The simulator runs the same
stream (:func:`ssdlab.analysis.sustained.sustained_write`) and reads off the same rates. The PM1725b's
dips come from its thermal model (throttling under the profile's assumed server cooling; see
``experiments/thermal_throttling.py`` for how they depend on the cooling).
"""

from __future__ import annotations

import argparse
import math
from pathlib import Path

import numpy as np
import pandas as pd

from ..plotting import pyplot, save
from ..api import SimulationError
from ..config import ProfileError
# The paper's table lives with the other published figures; Drive and Rate stay importable here.
from ..reference import SEED002_PUBLISHED as PUBLISHED, SEED002_TARGET, Drive, Rate
from ..analysis.sizing import drives_for_rate
from ..analysis.sustained import SustainedWrite, sustained_write

GB = 1e9

NOT_AVAILABLE = "profile not available"


def simulate(drives: list[str] | None = None, *, passes: float = 2.0, block_size: str | None = None,
             iodepth: int = 32, seed: int = 0, size: str | int | None = None) -> dict[str, SustainedWrite | str]:
    """Fill and overwrite each drive; a drive whose profile cannot be loaded or run maps to a
    one-line reason instead of a result."""
    out: dict[str, SustainedWrite | str] = {}
    for name in drives or list(PUBLISHED):
        bs = block_size or (PUBLISHED[name].block_size if name in PUBLISHED else "128k")
        try:
            out[name] = sustained_write(name, block_size=bs, iodepth=iodepth, passes=passes,
                                        seed=seed, size=size)
        except ProfileError as e:
            out[name] = f"{NOT_AVAILABLE}: {str(e).splitlines()[0]}"
        except (SimulationError, ValueError) as e:
            out[name] = f"simulation failed: {str(e).splitlines()[0]}"
    return out


def reproduce(drives: list[str] | None = None, *, passes: float = 2.0, block_size: str | None = None,
              seed: int = 0, size: str | int | None = None,
              runs: dict[str, SustainedWrite | str] | None = None) -> pd.DataFrame:
    """Published vs simulated, one row per published rate and one per drive count.

    Rates are in GB/s with ``error`` in % (see :meth:`Rate.error_pct`); the drive-count row
    compares the seed's count with ``ceil(12.5 GB/s / simulated worst sustained rate)`` and its
    ``error`` is in drives. Pass ``runs`` (from :func:`simulate`) to reuse simulations.
    """
    names = drives or list(PUBLISHED)
    if runs is None:
        runs = simulate(names, passes=passes, block_size=block_size, seed=seed, size=size)
    rows = []
    for name in names:
        pub = PUBLISHED[name]
        run = runs.get(name, NOT_AVAILABLE)
        ok = isinstance(run, SustainedWrite)
        status = "ok" if ok else str(run).split(":")[0]
        for rate in pub.rates:
            sim = getattr(run, rate.quantity) / GB if ok else math.nan
            rows.append({
                "drive": name, "quantity": rate.quantity, "published": rate.text,
                "simulated": sim, "unit": "GB/s",
                "error": rate.error_pct(sim) if ok and math.isfinite(sim) else math.nan,
                "status": status,
            })
        n = drives_for_rate(SEED002_TARGET, run.worst_sustained_rate, 0.0) if ok else math.nan
        rows.append({
            "drive": name, "quantity": "drives_100g", "published": str(pub.drives_100g),
            "simulated": n, "unit": "drives", "error": n - pub.drives_100g if ok else math.nan,
            "status": status,
        })
    return pd.DataFrame(rows)


def summary_table(runs: dict[str, SustainedWrite | str]) -> pd.DataFrame:
    """What each simulated run measured (GB/s, GB), for the printout."""
    rows = []
    for name, r in runs.items():
        if not isinstance(r, SustainedWrite):
            rows.append({"drive": name, "status": r.split(":")[0]})
            continue
        rows.append({
            "drive": name, "burst": r.burst_rate / GB,
            "cache_GB": r.cache_bytes / r.scale / GB if r.cache_bytes is not None else None,
            "after_cache": r.after_cache_rate / GB, "overwrite": r.overwrite_rate / GB,
            "worst": r.worst_sustained_rate / GB, "waf": r.waf, "throttled": r.throttled_share,
            "sim_s": r.elapsed_s, "scale": r.scale,
            "status": "ok",
        })
    return pd.DataFrame(rows)


def plot(runs: dict[str, SustainedWrite | str], path: Path) -> None:
    """Throughput over time per drive (one panel each, fill and overwrite), with the paper's
    rates and the datasheet figure, like the white paper's charts."""
    plt = pyplot()

    names = list(runs)
    fig, axes = plt.subplots(len(names), 1, figsize=(9, 2.6 * len(names)), squeeze=False)
    for ax, name in zip(axes[:, 0], names, strict=True):
        pub = PUBLISHED.get(name)
        run = runs[name]
        title = pub.label if pub else name
        if not isinstance(run, SustainedWrite):
            ax.text(0.5, 0.5, run, ha="center", va="center", transform=ax.transAxes, fontsize=9)
            ax.set(title=title, xticks=[], yticks=[])
            continue
        ts = run.timeseries[~run.timeseries.partial]  # the short end-of-run interval is noise
        for phase, colour in (("fill", "tab:blue"), ("overwrite", "tab:orange")):
            part = ts[ts.phase == phase]
            if len(part):  # each rate held over its interval
                x = [float(part.t_start_s.iloc[0]), *part.t_s]
                y = [float(part.write_bw_bytes.iloc[0]) / GB, *(part.write_bw_bytes / GB)]
                ax.step(x, y, where="pre", color=colour, label=f"simulated, {phase}")
        if pub:
            ax.axhline(pub.datasheet_gbps, color="grey", ls=":", lw=1, label="datasheet")
            for rate in pub.rates:
                if rate.kind == "range":
                    ax.axhspan(rate.low, rate.high, color="green", alpha=0.15)
                else:
                    ax.axhline(rate.low, color="green", ls="--", lw=1)
            ax.plot([], [], color="green", ls="--", label="published")
        if run.cache_bytes is not None:
            t_full = float(np.interp(run.cache_bytes, [0.0, *ts.bytes_written], [0.0, *ts.t_s]))
            ax.axvline(t_full, color="k", lw=0.6, label=f"cache full ({run.cache_bytes / run.scale / GB:.0f} GB of the drive)")
        top = max([float(ts.write_bw_bytes.max()) / GB]
                  + ([pub.datasheet_gbps] + [r.high or r.low for r in pub.rates] if pub else []))
        ax.set(title=title, xlabel="time (s)", ylabel="write GB/s", ylim=(0, 1.2 * top))
        ax.legend(fontsize=7, loc="best")
    save(fig, path, dpi=110)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--drives", nargs="+", choices=list(PUBLISHED), default=list(PUBLISHED), metavar="NAME",
                    help="profiles to run (default: all five of the paper)")
    ap.add_argument("--passes", type=float, default=2.0, help="drive writes (paper: fill + overwrite = 2)")
    ap.add_argument("--block-size", default=None,
                    help="write size (default: 128k, 256k on the D7-P5510 as in the paper)")
    ap.add_argument("--size", default=None, help="write only this much of each drive (quick look)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--plot", type=Path, default=Path("out/seed002_sustained_write.png"))
    args = ap.parse_args(argv)
    runs = simulate(args.drives, passes=args.passes, block_size=args.block_size, seed=args.seed,
                    size=args.size)
    table = reproduce(args.drives, runs=runs)
    with pd.option_context("display.width", 200, "display.max_columns", 20,
                           "display.float_format", "{:.2f}".format, "display.max_colwidth", 60):
        print(f"Seed 002: sustained sequential write, published vs simulated ({args.passes:g} drive writes)")
        print(table.to_string(index=False))
        print()
        print(summary_table(runs).to_string(index=False))
    rates = table[(table.unit == "GB/s") & (table.status == "ok")]
    if len(rates):
        worst = rates.loc[rates.error.abs().idxmax()]
        print(f"largest rate error: {worst.error:+.1f} % ({worst.drive} {worst.quantity})")
    else:
        print("largest rate error: n/a (no drive could be simulated)")
    for name, r in runs.items():
        if not isinstance(r, SustainedWrite):
            print(f"not simulated: {name}: {r}")
    plot(runs, args.plot)
    print(f"plot: {args.plot}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
