"""``ssdlab site``: a site of servers in two tiers — SSD cache servers in front of file
servers — and the clients they serve, from a site file (:mod:`ssdlab.sitefile`,
:mod:`ssdlab.cachetier`): the hit ratio, each tier's load, what each server serves and what
bounds it, and what the clients get."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer
from rich.table import Table

from .common import check_seed, console, fail, interruptible, print_json, shown


@interruptible
def site(
    path: Annotated[Path, typer.Argument(help="a site file (.toml): \\[catalogue], \\[cache], \\[files], \\[\\[clients]]")],
    runtime: Annotated[Optional[str], typer.Option(help="simulated time of each server's run (default: the file's)")] = None,
    seed: Annotated[int, typer.Option(help="seed of every run")] = 0,
    output_format: Annotated[str, typer.Option("--output-format", help="normal or json")] = "normal",
) -> None:
    """What a site of cache servers and file servers serves, and what bounds each tier.

    The model is in docs/network.md."""
    from dataclasses import replace

    from ..api import SimulationError
    from ..cachetier import simulate, summary
    from ..filework import FileWorkError
    from ..sitefile import SiteFileError, load_site
    from ..units import UnitError, parse_time_ns, unit_reason

    check_seed(seed)
    if output_format not in ("normal", "json"):
        fail(f"--output-format {output_format}: expected normal or json")
    try:
        name, s = load_site(path)
    except SiteFileError as e:
        fail(str(e))
    if runtime is not None:
        try:
            secs = parse_time_ns(runtime, "s") / 1e9
        except (ValueError, UnitError) as e:
            fail(f"--runtime {runtime}: {unit_reason(e)}")
        if secs < 1:
            fail(f"--runtime {runtime}: expected at least a second")
        s = replace(s, run_s=int(secs))
    try:
        r = simulate(s, seed)
    except (SimulationError, FileWorkError, ValueError) as e:
        fail(f"{path}: {e}")
    if output_format == "json":
        print_json({"name": name, **summary(r)})
        return
    out = console()
    out.print(f"{shown(name)}: {sum(c.count for c in s.clients)} clients, {s.files:,} files "
              f"({s.size_mb[0]}-{s.size_mb[1]} MiB, Zipf {s.zipf:g}); {s.run_s} s a run")
    if s.cached:
        out.print(f"cache tier: {s.cache.servers} servers ({s.cache.failed} down) holding the {s.cached:,} most popular "
                  f"files: {100 * r.hit_ratio:.1f} % of requests; a cache server carries {r.cache_capacity.mbps:,.0f} "
                  f"Mb/s at most (bound by {r.cache_capacity.bound}); load {100 * r.cache_load:.0f} %")
    t = Table(title="one server of each tier")
    for col in ("tier", "up", "clients each", "served Mb/s each", "bound by", "CPU busy", "storage %util"):
        t.add_column(col, justify="left" if col in ("tier", "bound by") else "right")
    if r.cache_server is not None:
        c = r.cache_server
        t.add_row("cache", str(s.cache.up), str(sum(r.clients_cache.values())), f"{c.mbps:,.1f}", c.bound,
                  f"{100 * c.cpu_busy:.0f} %", f"{100 * c.storage_util:.0f} %")
    f = r.file_server
    moved = sum(r.clients_overflow.values())
    t.add_row("files", str(s.origin.up), f"{sum(r.clients_origin.values())}" + (f" + {moved} sent on" if moved else ""),
              f"{f.mbps:,.1f}", f.bound, f"{100 * f.cpu_busy:.0f} %", f"{100 * f.storage_util:.0f} %")
    out.print(t)
    out.print(f"served {r.served_mbps:,.0f} Mb/s in all, {100 * r.cache_share:.1f} % of it by the cache tier")
    for label, run in (("cache server", r.cache_server), ("file server", r.file_server)):
        if run is not None:
            rates = ", ".join(f"{shown(k)} x{n}: {kbps:,.0f} kB/s" for k, (n, kbps) in run.classes.items())
            out.print(f"  a {label}'s clients: {rates}", soft_wrap=True)
