"""``ssdlab server``: a server scenario over drives and NICs — what each configuration serves
and what bounds it, as a table and a plot (:mod:`ssdlab.serversize`)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer
from rich.table import Table

from .common import check_scheduler, check_seed, console, fail, interruptible, print_json, run_time_ns, shown


@interruptible
def server(
    scenario: Annotated[Path, typer.Argument(help="a scenario .toml with a \\[network] table and threads that serve its clients (a shipped one by name: seed000-webserver.toml)")],
    profile: Annotated[str, typer.Option(help="the drives' profile")],
    drives: Annotated[str, typer.Option(help="drives in the array, a list: 4,8,12")] = "8",
    nic: Annotated[str, typer.Option(help="NICs, a list of PORTSxRATE: 2x1g,4x1g,1x10g")] = "2x1g",
    raid: Annotated[int, typer.Option(help="the array's RAID level (md)")] = 0,
    chunk: Annotated[str, typer.Option(help="the array's chunk size")] = "64k",
    host: Annotated[Optional[str], typer.Option(help="host profile (default: the drive's calibration host)")] = None,
    iosched: Annotated[str, typer.Option(help="the members' I/O scheduler")] = "noop",
    precondition: Annotated[Optional[str], typer.Option(help="none | sequential | random[:PASSES] (the drives' state)")] = None,
    runtime: Annotated[Optional[str], typer.Option(help="simulated time of each run (default: the scenario's)")] = None,
    seed: Annotated[int, typer.Option(help="seed of every run")] = 0,
    workers: Annotated[Optional[int], typer.Option(help="local worker processes (default: one per CPU)")] = None,
    scheduler: Annotated[Optional[str], typer.Option(help="run on a Dask cluster: its scheduler's address, e.g. tcp://HOST:8786")] = None,
    plot: Annotated[Optional[Path], typer.Option(help="write the plot (served Mb/s by drives, a line per NIC) here")] = None,
    output_format: Annotated[str, typer.Option("--output-format", help="normal or json")] = "normal",
) -> None:
    """What a server serves on each array size and NIC, and what bounds it.

    The bound is its clients, a NIC port, the CPUs or the storage (docs/network.md)."""
    from .. import api
    from ..filework import FileWorkError, bundled, load
    from ..serversize import parse_nic, run_all, with_nic
    from ..sweep.runner import SweepError
    from ..system import raid as raid_system
    from ..units import UnitError

    check_seed(seed)
    check_scheduler(iosched, "--iosched")
    if output_format not in ("normal", "json"):
        fail(f"--output-format {output_format}: expected normal or json")
    try:
        counts = [int(x) for x in drives.split(",")]
    except ValueError:
        fail(f"--drives {drives}: expected whole numbers separated by commas, e.g. 4,8,12")
    if any(n < 1 for n in counts):
        fail(f"--drives {drives}: expected at least one drive")
    try:
        nics = [parse_nic(x) for x in nic.split(",")]
        work = load(bundled(scenario))
    except (ValueError, FileWorkError, UnitError) as e:
        fail(str(e))
    if runtime is not None:
        work.run_ns = run_time_ns(runtime)
    if work.network is None:
        fail(f"{scenario}: the scenario has no [network]: nothing to serve clients over")
    specs = []
    try:
        for n in counts:
            system = raid_system(profile, raid, n, chunk=chunk, precondition=precondition)
            for c in nics:
                spec = api.build(None, system=system, host=host, files=with_nic(work, c), scheduler=iosched, seed=seed)
                specs.append((n, c, spec.model_dump_json()))
    except ValueError as e:
        fail(str(e))
    try:
        points = run_all(specs, workers, scheduler)
    except SweepError as e:
        fail(str(e))
    if plot is not None:
        from ..serversize import plot as draw

        draw(points, plot, f"{work.name} on RAID {raid} of {profile}")
    if output_format == "json":
        print_json([p.__dict__ for p in points])
        return
    t = Table(title=f"{shown(work.name)}: {sum(th.instances for th in work.threads)} threads, RAID {raid} of {profile}")
    for col in ("drives", "NIC", "served Mb/s", "bound by", "NIC full", "CPU busy", "storage %util"):
        t.add_column(col, justify="right" if col not in ("NIC", "bound by") else "left")
    for p in points:
        served = "-" if p.mbps is None else f"{p.mbps:,.1f}"
        t.add_row(str(p.drives), shown(p.nic), served, p.bound if p.error is None else "error (below)",
                  f"{100 * p.nic_full:.0f} %", f"{100 * p.cpu_busy:.0f} %", f"{100 * p.storage_util:.0f} %")
    console().print(t)
    for p in points:
        if p.error is not None:
            console().print(shown(f"{p.drives} drives, NIC {p.nic}: {p.error}"), soft_wrap=True)
    if plot is not None:
        console().print(shown(f"plot: {plot}"))
