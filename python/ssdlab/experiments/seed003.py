"""Seed 003 — Lee & Lee, "Limitations of IOSTAT Metrics on Flash Memory SSDs" (KIISE
conference paper, Sungkyunkwan University).

fio ``bs=4K time_based runtime=300 rw=randwrite ioengine=libaio iodepth=1 fsync=0 direct=1
numjobs=N`` on a Samsung 850 PRO. iostat's %util reaches ~100 % at two jobs while IOPS keeps
rising to four: %util counts time with at least one request in flight, and a flash SSD serves
many at once. The simulator shows the same, plus the device's internal utilisation (busy dies /
dies), which iostat cannot see.
"""

from __future__ import annotations

import argparse
from importlib import resources
from pathlib import Path

import pandas as pd

from ..plotting import pyplot, save
from ..api import run
# numjobs -> (IOPS, %util), Table 2 of the paper.
from ..reference import SEED003_PUBLISHED as PUBLISHED

PROFILE = "samsung-850-pro"


def job_file() -> Path:
    return Path(str(resources.files("ssdlab") / "data" / "jobs" / "seed003-iostat.fio"))


def reproduce(runtime_s: float = 300.0, seed: int = 0, numjobs: list[int] | None = None) -> pd.DataFrame:
    """Run the paper's job for each job count; published vs simulated, with errors in %."""
    rows = []
    for n in numjobs or list(PUBLISHED):
        r = run(job_file(), profile=PROFILE, seed=seed, env={"NUMJOBS": str(n)},
                overrides={"runtime": f"{runtime_s}"})
        iops = r.total_iops("write")
        util = r.iostat()["%util"]
        pub_iops, pub_util = PUBLISHED[n]
        rows.append({
            "numjobs": n,
            "iops_published": pub_iops,
            "iops_simulated": iops,
            "iops_error_pct": 100.0 * (iops / pub_iops - 1.0),
            "util_published": pub_util,
            "util_simulated": util,
            "util_error_pct": 100.0 * (util / pub_util - 1.0),
            "internal_util_pct": 100.0 * r.internal()["internal_utilization"],
            "controller_util_pct": 100.0 * r.internal()["controller_utilization"],
        })
    return pd.DataFrame(rows)


def plot(table: pd.DataFrame, path: Path) -> None:
    plt = pyplot()

    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(10, 4))
    ax1.plot(table.numjobs, table.iops_published, "o-", label="published (850 PRO)")
    ax1.plot(table.numjobs, table.iops_simulated, "s--", label="simulated")
    ax1.set(xscale="log", xlabel="fio numjobs (iodepth 1 each)", ylabel="4 KiB random write IOPS",
            title="IOPS keeps rising after %util saturates")
    ax1.set_xticks(table.numjobs, [str(n) for n in table.numjobs])
    ax1.legend()
    ax2.plot(table.numjobs, table.util_published, "o-", label="iostat %util, published")
    ax2.plot(table.numjobs, table.util_simulated, "s--", label="iostat %util, simulated")
    ax2.plot(table.numjobs, table.internal_util_pct, "^:", label="busy dies / dies, simulated")
    ax2.plot(table.numjobs, table.controller_util_pct, "v:", label="controller busy, simulated")
    ax2.set(xscale="log", xlabel="fio numjobs", ylabel="%", ylim=(0, 105), title="What iostat sees vs inside")
    ax2.set_xticks(table.numjobs, [str(n) for n in table.numjobs])
    ax2.legend(fontsize=8)
    save(fig, path)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runtime", type=float, default=300.0, help="seconds per run (paper: 300)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--plot", type=Path, default=Path("out/seed003_iostat_util.png"))
    args = ap.parse_args(argv)
    table = reproduce(args.runtime, args.seed)
    with pd.option_context("display.width", 200, "display.max_columns", 20, "display.float_format", "{:.2f}".format):
        print(f"Seed 003 on {PROFILE}: published vs simulated ({args.runtime:g} s per run)")
        print(table.to_string(index=False))
    worst = table.iops_error_pct.abs().max()
    print(f"largest IOPS error: {worst:.1f} % (target: within 10 %)")
    plot(table, args.plot)
    print(f"plot: {args.plot}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
