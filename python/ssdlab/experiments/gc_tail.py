"""Garbage collection and tail latency: why read p99.9 jumps on a drive in steady state.

A storage engineer sees 4 KiB random reads with a p99.9 well under a millisecond on a new
drive and far above it on the same drive once it has been written over and takes writes.
This experiment runs the same reader (4 KiB random reads, QD4) in three situations:

* reads alone — no writes, so no garbage collection (GC) and no programs on the dies;
* reads beside a rate-limited 4 KiB random writer on a *fresh* drive (sequentially filled,
  spare blocks never used): reads can wait behind host programs, but GC has nothing to do;
  the run stops before the writer uses up the never-written blocks;
* the same reads and writes on a drive in *steady state* (two random overwrite passes): every
  unit of host data placed on a die also makes that die relocate valid data and erase blocks.

The writer runs at shares (25/50/100 %) of the drive's own steady-state random-write IOPS,
measured first; greedy and cost-benefit victim choice are compared at one share.

Why the tail lands where it does. In the model a die has no program/erase suspend
(docs/model.md, "Not modelled yet"), but it serves reads before the GC work it owes: GC is
decided by the FTL at once and then carried out one flash operation at a time between host
operations, and host programs queue behind it. On a fresh drive a read can wait for a host
program in progress, so the read tail moves from the read time tR to tR + tPROG. In steady
state the die is also busy with relocations and erases, so a read can wait for an erase in
progress: the tail reaches tBERS and stops there (plus a program queued ahead of the read).
The writes, not the reads, wait for GC: they queue behind it until the write buffer is full.
For comparison the printout also gives the time to empty one whole victim ("victim" below,
from the profile's geometry and timings and the measured WAF): a controller that collected
a block in one go would hold its reads up that long. A QD4 reader is a closed loop: it
stalls if all four of its reads sit on busy dies ("stall" = share of 50 ms intervals below
10 % of the reads-alone rate). There is no published figure for this; the printout puts tR,
tPROG and tBERS beside the percentiles instead.

Drive: by default the Samsung 970 PRO 512 GB (NVMe, so reads never wait for a queue tag
behind writes, and four controller cores, so the controller is not the bottleneck), shrunk
to 16 GB so preconditioning takes seconds. Dies, block size and timings stay; blocks per
plane are cut so that the blocks outside each die's GC reserve give the full drive's spare
factor. Greedy GC finds slightly emptier victims among fewer blocks, so WAF comes out a little
lower (checked once at 50 % writes, 10 s: WAF 6.7 at 16 GB, 7.0 at 32 GB, 7.5 at full size),
while the read percentiles barely move: the GC work per host unit depends on the victims'
valid fraction, the block size and the timings, not on capacity. Much smaller drives fail the
core's check that the flash holds the capacity plus each die's GC reserve.
"""

from __future__ import annotations

import argparse
import math
import re
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

import numpy as np
import pandas as pd

from ..api import run
from ..config import load_profile
from ..plotting import pyplot, save
from ..results import DirResult, RunResult

PROFILE = "samsung-970-pro-512"
IO_BYTES = 4096  # every read and write
PERCENTILES = (50.0, 99.0, 99.9, 99.99)
WRITE_SHARES = (0.25, 0.5, 1.0)
INTERVAL_S = 0.05  # time-series step: short against a GC storm, long against one I/O
STALL_FRACTION = 0.1  # an interval is a stall when reads fall below this share of reads alone
FRESH_MARGIN = 0.8  # share of the fresh drive's never-used blocks its writer may consume


@dataclass(frozen=True)
class Drive:
    """A shrunk profile on disk and the physical numbers the tail is compared with."""

    path: Path
    read_us: float
    program_us: float
    erase_us: float
    dies: int
    gc_threshold: int
    block_bytes: int  # one multi-plane block of a die, the unit GC erases
    ius_per_block: int
    ius_per_page: int
    ius_per_program: int  # IUs in one program operation (page x planes x program_pages)

    def victim_us(self, waf: float) -> float:
        """Time to empty one victim at steady-state WAF: sense every page holding valid data,
        program the valid IUs, erase. Uniform random writes leave each IU valid with the
        victim's valid fraction u = 1 - 1/WAF, independently."""
        u = 1.0 - 1.0 / waf
        pages = self.ius_per_block / self.ius_per_page * (1.0 - (1.0 - u) ** self.ius_per_page)
        programs = u * self.ius_per_block / self.ius_per_program
        return pages * self.read_us + programs * self.program_us + self.erase_us


def shrunk_blocks_per_plane(profile: str, capacity: int) -> int:
    """Blocks per plane that give ``capacity`` the full drive's effective spare factor: the
    space outside each die's GC reserve and open block, over the user capacity (as gc_waf)."""
    dev, _ = load_profile(profile)
    n = dev.nand
    block = n.page_size * n.planes_per_die * n.pages_per_block
    kept = dev.ftl.gc_threshold_blocks + 1
    alpha = dev.dies * (n.blocks_per_plane - kept) * block / dev.capacity
    return math.ceil(alpha * capacity / (dev.dies * block)) + kept


def profile_text(profile: str, capacity: int, gc_policy: str) -> str:
    """The built-in profile's TOML with capacity, blocks per plane and GC policy replaced."""
    text = (resources.files("ssdlab") / "profiles" / f"{profile}.toml").read_text()
    blocks = shrunk_blocks_per_plane(profile, capacity)
    text = re.sub(r"^capacity = \{ value = \d+", f"capacity = {{ value = {capacity}", text, flags=re.MULTILINE)
    text = re.sub(r"^blocks_per_plane = \{ value = \d+", f"blocks_per_plane = {{ value = {blocks}", text,
                  flags=re.MULTILINE)
    text = re.sub(r"^gc_policy = .*\n", "", text, flags=re.MULTILINE)
    policy = f'gc_policy = {{ value = "{gc_policy}", source = "gc_tail experiment" }}\n'
    return re.sub(r"^\[ftl\]\n", "[ftl]\n" + policy, text, count=1, flags=re.MULTILINE)


def make_drive(profile: str, capacity: int, gc_policy: str, workdir: Path) -> Drive:
    """Write the shrunk profile to ``workdir`` (run() takes a path) and read back its numbers."""
    workdir.mkdir(parents=True, exist_ok=True)
    path = workdir / f"gc_tail_{profile}_{capacity / 1e9:g}gb_{gc_policy}.toml"
    path.write_text(profile_text(profile, capacity, gc_policy))
    dev, _ = load_profile(path)
    n, iu = dev.nand, dev.ftl.indirection_unit
    return Drive(path=path, read_us=n.read_time / 1e3, program_us=n.program_time / 1e3,
                 erase_us=n.erase_time / 1e3, dies=dev.dies, gc_threshold=dev.ftl.gc_threshold_blocks,
                 block_bytes=n.page_size * n.planes_per_die * n.pages_per_block,
                 ius_per_block=n.page_size * n.planes_per_die * n.pages_per_block // iu,
                 ius_per_page=n.page_size // iu,
                 ius_per_program=n.page_size * n.planes_per_die * n.program_pages // iu)


def job_text(runtime: float, reader: bool = True, write_iops: float | None = None,
             flat_out_writer: bool = False, ramp: float = 0.0) -> str:
    """fio jobs: a QD4 random reader and/or a random writer (rate-limited, or flat out at QD32).
    Each job draws its own offsets, so reads rarely hit data still in the write buffer."""
    plist = ":".join(f"{p:g}" for p in PERCENTILES)
    text = (f"[global]\nioengine=libaio\ndirect=1\nbs={IO_BYTES}\nnorandommap\nruntime={runtime:g}\ntime_based\n"
            f"ramp_time={ramp:g}\npercentile_list={plist}\n")
    if reader:
        text += "[reader]\nrw=randread\niodepth=4\n"
    if write_iops is not None or flat_out_writer:
        text += "[writer]\nrw=randwrite\niodepth=32\n"
        if write_iops is not None:
            text += f"rate_iops={round(write_iops)}\n"
    return text


def direction(result: RunResult, job: str, rw: str) -> DirResult:
    """One job's statistics for one direction (every job here is a single clone)."""
    return next(u for u in result.units if u.name == job).dirs[rw]


def steady_write_iops(drive: Drive, runtime: float, seed: int = 0) -> float:
    """Random-write IOPS the steady-state drive sustains, writer alone at QD32; the first third
    of the run is ramp time, as the buffer fills before GC sets the pace."""
    r = run(job_text(runtime, reader=False, flat_out_writer=True, ramp=runtime / 3),
            profile=drive.path, precondition="random:2", seed=seed)
    return next(u for u in r.units if u.name == "writer").iops("write")


def nines(percentile: float) -> float:
    """Plot position of a percentile: 1 at p90, 2 at p99, 3 at p99.9."""
    return -math.log10(1.0 - percentile / 100.0)


def read_curve(reads: DirResult) -> pd.DataFrame:
    """Read latency against percentile, by fio's rule (DirResult.percentiles), up to the
    percentile the sample count can resolve."""
    top = min(5.0, math.log10(max(reads.ios, 10)))
    plist = [100.0 * (1.0 - 10.0 ** -x) for x in np.linspace(0.0, top, 120)[1:]]
    values = reads.percentiles(plist)
    return pd.DataFrame({"percentile": plist, "read_us": [values[f"{p:f}"] / 1e3 for p in plist]})


def measure(drive: Drive, *, scenario: str, state: str, policy: str, runtime: float,
            write_iops: float | None, write_share: float | None,
            seed: int = 0) -> tuple[dict, pd.DataFrame, pd.DataFrame]:
    """One run: its table row, its read percentile curve and its time series."""
    precondition = "random:2" if state == "steady" else "sequential"
    r = run(job_text(runtime, write_iops=write_iops), profile=drive.path, precondition=precondition,
            interval=INTERVAL_S, seed=seed)
    reads = direction(r, "reader", "read")
    row = {"scenario": scenario, "drive": state, "gc_policy": policy, "runtime_s": runtime,
           "write_share": write_share, "write_target_iops": write_iops,
           "read_iops": r.total_iops("read"), "write_iops": r.total_iops("write")}
    for rw, res in (("read", reads), ("write", direction(r, "writer", "write") if write_iops else None)):
        pct = res.percentiles(list(PERCENTILES)) if res is not None and res.ios else {}
        for p in PERCENTILES:
            row[f"{rw}_p{p:g}_us"] = pct[f"{p:f}"] / 1e3 if pct else float("nan")
        row[f"{rw}_max_us"] = res.clat.max / 1e3 if res is not None and res.ios else float("nan")
    i = r.internal()
    row.update({"waf": i["waf"] if i["waf"] is not None else float("nan"), "gc_erases": i["gc_runs"],
                "relocated_gib": i["gc_relocated_bytes"] / 2**30, "die_util": i["internal_utilization"],
                "free_blocks": i["free_blocks"]})
    ts = r.timeseries_table()[["t_s", "read_iops", "write_iops", "waf", "internal_utilization"]]
    return row, read_curve(reads).assign(scenario=scenario), ts.assign(scenario=scenario)


def reproduce(profile: str = PROFILE, capacity: int = 16 * 10**9, runtime: float = 20.0,
              shares: tuple[float, ...] = WRITE_SHARES, policy_share: float | None = 0.5,
              workdir: Path = Path("out"), seed: int = 0) -> pd.DataFrame:
    """One row per scenario: read and write percentiles (µs), WAF and GC activity.

    ``table.attrs`` carries what the plot and the printout need: ``reference`` (tR, tPROG,
    tBERS and the victim time, µs), ``steady_write_iops``, ``curves`` (read latency per
    percentile per scenario) and ``timeseries`` (per 50 ms). ``policy_share`` adds a
    cost-benefit run at that share (None to skip)."""
    greedy = make_drive(profile, capacity, "greedy", workdir)
    full_rate = steady_write_iops(greedy, runtime, seed)
    rows, curves, series = [], [], []

    def add(drive: Drive, **kw) -> dict:
        row, curve, ts = measure(drive, seed=seed, **kw)
        rows.append(row)
        curves.append(curve)
        series.append(ts)
        return row

    fresh = add(greedy, scenario="reads alone, fresh", state="fresh", policy="greedy", runtime=runtime,
                write_iops=None, write_share=None)
    add(greedy, scenario="reads alone, steady", state="steady", policy="greedy", runtime=runtime,
        write_iops=None, write_share=None)
    # Never-used blocks above the GC threshold on the fresh drive: the writes it takes before GC.
    spare_bytes = max(0, fresh["free_blocks"] - greedy.dies * greedy.gc_threshold) * greedy.block_bytes
    for share in shares:
        rate = share * full_rate
        fresh_runtime = min(runtime, FRESH_MARGIN * spare_bytes / (rate * IO_BYTES))
        label = f"writes {share:.0%}"
        add(greedy, scenario=f"{label}, fresh", state="fresh", policy="greedy", runtime=round(fresh_runtime, 2),
            write_iops=rate, write_share=share)
        add(greedy, scenario=f"{label}, steady", state="steady", policy="greedy", runtime=runtime,
            write_iops=rate, write_share=share)
    if policy_share is not None:
        cost_benefit = make_drive(profile, capacity, "cost-benefit", workdir)
        add(cost_benefit, scenario=f"writes {policy_share:.0%}, steady, cost-benefit", state="steady",
            policy="cost-benefit", runtime=runtime, write_iops=policy_share * full_rate, write_share=policy_share)

    table = pd.DataFrame(rows)
    alone = table.loc[table.scenario == "reads alone, steady", "read_iops"].iloc[0]
    all_series = pd.concat(series, ignore_index=True)
    stalled = (all_series.read_iops < STALL_FRACTION * alone).groupby(all_series.scenario).mean()
    table["read_stall_pct"] = 100.0 * table.scenario.map(stalled)
    steady_waf = table.loc[(table.drive == "steady") & (table.gc_policy == "greedy"), "waf"].dropna()
    table.attrs.update(
        reference={"tR_us": greedy.read_us, "tPROG_us": greedy.program_us, "tBERS_us": greedy.erase_us,
                   "victim_us": greedy.victim_us(float(steady_waf.median())) if len(steady_waf) else float("nan")},
        steady_write_iops=full_rate, profile=profile, capacity=capacity,
        curves=pd.concat(curves, ignore_index=True), timeseries=all_series)
    return table


def plot(table: pd.DataFrame, path: Path) -> None:
    """Left: read latency against percentile per scenario, with the physical reference times.
    Right: read IOPS over time at the middle write share, fresh vs steady (GC storms)."""
    plt = pyplot()
    fig, (ax, ax_ts) = plt.subplots(1, 2, figsize=(13, 5), gridspec_kw={"width_ratios": [3, 2]})
    curves, ref = table.attrs["curves"], table.attrs["reference"]
    shares = sorted(table.write_share.dropna().unique())
    cmap = plt.get_cmap("viridis")
    for row in table.itertuples():
        c = curves[curves.scenario == row.scenario]
        if pd.isna(row.write_share):
            color = "black"
        else:
            color = cmap(0.15 + 0.7 * shares.index(row.write_share) / max(1, len(shares) - 1))
        style = {"fresh": "--", "steady": "-"}[row.drive]
        if row.gc_policy != "greedy":
            style = ":"
        ax.plot(c.percentile.map(nines), c.read_us, style, color=color, label=row.scenario)
    for name, key in (("tR", "tR_us"), ("tPROG", "tPROG_us"), ("tBERS", "tBERS_us"), ("one victim", "victim_us")):
        if math.isfinite(ref[key]):
            ax.axhline(ref[key], color="grey", lw=0.7, alpha=0.6)
            ax.text(0.01, ref[key] * 1.08, name, color="grey", fontsize=8, transform=ax.get_yaxis_transform())
    ticks = [50, 90, 99, 99.9, 99.99, 99.999]
    ax.set_xticks([nines(p) for p in ticks], [f"{p:g}" for p in ticks])
    ax.set(yscale="log", xlabel="percentile", ylabel="read completion latency (µs)",
           title=f"4 KiB random reads QD4, {table.attrs['profile']}")
    ax.set_ylim(top=30 * max(curves.read_us.max(), ref["victim_us"]))  # room for the legend
    ax.legend(fontsize=7, loc="upper left", ncol=2)

    ts = table.attrs["timeseries"]
    middle = shares[len(shares) // 2] if shares else None
    for row in table[(table.write_share == middle) & (table.gc_policy == "greedy")].itertuples():
        t = ts[ts.scenario == row.scenario]
        ax_ts.plot(t.t_s, t.read_iops.clip(lower=1), {"fresh": "--", "steady": "-"}[row.drive], label=row.scenario)
    ax_ts.set(yscale="log", xlabel="time (s)", ylabel=f"read IOPS per {INTERVAL_S * 1e3:g} ms (0 drawn as 1)",
              title=f"Reads over time, writes at {middle:.0%}" if middle is not None else "Reads over time")
    ax_ts.legend(fontsize=7)
    save(fig, path)


def format_tables(table: pd.DataFrame) -> str:
    """The printout: reference times, then read and write/GC tables (latencies in µs)."""
    ref = table.attrs["reference"]
    lines = [
        (f"GC and tail latency: {table.attrs['profile']} shrunk to {table.attrs['capacity'] / 1e9:g} GB; "
         f"steady-state 4 KiB random-write IOPS (writer alone, QD32) = {table.attrs['steady_write_iops']:,.0f}"),
        (f"physical reference: tR {ref['tR_us']:g} us, tPROG {ref['tPROG_us']:g} us, tBERS {ref['tBERS_us']:g} us; "
         f"a read behind GC waits for one operation (at most tBERS + tPROG); emptying a whole victim "
         f"would take ~ {ref['victim_us'] / 1e3:,.1f} ms"),
    ]
    read_cols = ["scenario", "runtime_s", "write_iops", "read_iops"] + [
        f"read_p{p:g}_us" for p in PERCENTILES] + ["read_max_us", "read_stall_pct"]
    write_cols = ["scenario"] + [f"write_p{p:g}_us" for p in PERCENTILES] + [
        "write_max_us", "waf", "gc_erases", "relocated_gib", "die_util"]
    with pd.option_context("display.width", 200, "display.max_columns", 20,
                           "display.float_format", "{:,.1f}".format):
        lines += ["", "Reads (completion latency, us)", table[read_cols].to_string(index=False)]
        writes = table[table.write_share.notna()][write_cols].copy()
        writes["die_util"] = 100 * writes.die_util
        lines += ["", "Writes (completion latency, us), WAF and GC (die_util in %)", writes.to_string(index=False)]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runtime", type=float, default=20.0, help="simulated seconds per scenario")
    ap.add_argument("--profile", default=PROFILE, help="built-in profile to shrink")
    ap.add_argument("--capacity-gb", type=float, default=16.0, help="capacity of the shrunk drive")
    ap.add_argument("--plot", type=Path, default=Path("out/gc_tail.png"))
    args = ap.parse_args(argv)
    table = reproduce(profile=args.profile, capacity=int(args.capacity_gb * 1e9), runtime=args.runtime,
                      workdir=args.plot.parent)
    print(format_tables(table))
    plot(table, args.plot)
    print(f"plot: {args.plot}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
