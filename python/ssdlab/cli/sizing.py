"""``ssdlab size`` and ``ssdlab endurance`` (seed 002): how many drives an array needs for a
sustained write stream, and how long drives last under one. The arithmetic is in
:mod:`ssdlab.analysis.sizing`, the sustained-write simulation in :mod:`ssdlab.analysis.sustained`."""

from __future__ import annotations

import dataclasses
import functools
import inspect
import math
import sys
import typing
from dataclasses import dataclass
from typing import Annotated, Optional

import typer
from rich.table import Table

from ..config import ProfileError, load_profile
from ..units import UnitError
from .common import BAD_INPUT, check_seed, console, fail, interruptible, note, print_json, shown, simulating


# ---- the options `size` and `endurance` share, defined once ---------------------------------
# The drive's rating (after --tbw) and the sustained-write simulation (at the end): each command
# names a parameter `rating: Rating` or `run: SustainedRun` where they go, and
# `shared_options` puts the options in its place and hands the command their values together.

_SIM_HELP = "simulation of the drive's sustained write"


@dataclass(frozen=True)
class Rating:
    """The drive's endurance rating as given on the command line (overrides the profile's)."""

    dwpd: Optional[float] = None
    warranty_years: Optional[float] = None
    pe_cycles: Optional[int] = None


@dataclass(frozen=True)
class SustainedRun:
    """How the drive's sustained write is simulated (see :mod:`ssdlab.analysis.sustained`)."""

    passes: float = 2.0
    block_size: str = "128k"
    iodepth: int = 32
    sim_size: Optional[str] = None
    seed: int = 0
    no_cache: bool = False


_HELP = {
    "dwpd": "rated drive writes per day",
    "warranty_years": "warranty in years (with --dwpd)",
    "pe_cycles": "rated P/E cycles of the flash",
    "passes": f"{_SIM_HELP}: drive writes (fill + overwrite = 2)",
    "block_size": f"{_SIM_HELP}: write size",
    "iodepth": f"{_SIM_HELP}: writes in flight",
    "sim_size": f"{_SIM_HELP}: only this much of the drive (quicker, less faithful)",
    "seed": "random seed of the simulation",
    "no_cache": "simulate even if a cached result exists",
}
_FLAGS = {"no_cache": ("--no-cache",)}


def _parameters(group) -> list[inspect.Parameter]:
    """The typer options of a dataclass's fields, with its defaults."""
    hints = typing.get_type_hints(group)
    return [inspect.Parameter(f.name, inspect.Parameter.POSITIONAL_OR_KEYWORD, default=f.default,
                              annotation=Annotated[hints[f.name],
                                                   typer.Option(*_FLAGS.get(f.name, ()), help=_HELP[f.name])])
            for f in dataclasses.fields(group)]


_GROUPS = {"rating": Rating, "run": SustainedRun}


def shared_options(command):
    """``command`` with its ``rating`` and ``run`` parameters replaced by their options."""
    sig = inspect.signature(command, eval_str=True)
    params: list[inspect.Parameter] = []
    for p in sig.parameters.values():
        params.extend(_parameters(_GROUPS[p.name]) if p.name in _GROUPS else [p])

    @functools.wraps(command)
    def wrapper(**kwargs):
        for name, group in _GROUPS.items():
            kwargs[name] = group(**{f.name: kwargs.pop(f.name) for f in dataclasses.fields(group)})
        return command(**kwargs)

    wrapper.__signature__ = sig.replace(parameters=params)
    wrapper.__annotations__ = {p.name: p.annotation for p in params}
    return wrapper


_Json = Annotated[bool, typer.Option("--json", help="print JSON")]


def _sz_drive(profile: Optional[str], capacity: Optional[str], tbw: Optional[str], rating: Rating,
              need: str) -> dict:
    """The drive: a profile, or a bare capacity and rating given on the command line (these
    options also override the profile's own)."""
    from ..units import parse_size, unit_reason

    def size_of(value: str, option: str) -> int:
        try:
            return parse_size(value)
        except UnitError as e:
            fail(f"{option} {value}: {unit_reason(e)}")
            raise  # unreachable

    d: dict = {"profile": None, "capacity": None, "flash_bytes": None, "tbw": None, "dwpd": None,
               "warranty_years": None, "pe_cycles": None}
    try:
        if profile is not None:
            p, _ = load_profile(profile)
            e = p.endurance
            d.update(profile=profile, name=p.name, capacity=p.capacity, flash_bytes=p.raw_bytes,
                     tbw=e.rated_tbw, dwpd=getattr(e, "dwpd", None), warranty_years=e.warranty_years,
                     pe_cycles=e.pe_cycles)
        elif capacity is None:
            fail(f"give --profile NAME, or --capacity SIZE {need}")
        if capacity is not None:
            d.update(capacity=size_of(capacity, "--capacity"), flash_bytes=None)
            if profile is None:
                d["name"] = f"{d['capacity'] / 1e12:g} TB drive"
        if tbw is not None:
            d["tbw"] = size_of(tbw, "--tbw")
    except (ProfileError, UnitError) as e:
        fail(str(e).splitlines()[0])
    for key, value in dataclasses.asdict(rating).items():
        if value is not None:
            if not 0 < value < math.inf:
                fail(f"--{key.replace('_', '-')} {value}: expected a positive, finite number")
            d[key] = value
    if not d["capacity"]:
        fail("--capacity must be positive")
    return d


def _sz_sustained(profile: str, run: SustainedRun) -> dict:
    from ..analysis.sustained import sustained_summary

    try:
        announce = note if sys.stderr.isatty() else None
        with simulating():
            return sustained_summary(profile, use_cache=not run.no_cache, announce=announce,
                                     block_size=run.block_size, iodepth=run.iodepth, passes=run.passes,
                                     seed=run.seed, size=run.sim_size)
    except BAD_INPUT as e:
        fail(str(e).splitlines()[0])
        raise  # unreachable


def _sz_rate(value: str, option: str) -> float:
    from ..units import parse_rate, unit_reason

    try:
        rate = parse_rate(value)
    except UnitError as e:
        fail(f"{option} {value}: {unit_reason(e)}")
    if not rate > 0:
        fail(f"{option} {value}: expected a positive rate")
    return rate


def _sz_fraction(value: float, option: str, upper_open: bool) -> None:
    if not (0 <= value < 1 if upper_open else 0 < value <= 1):
        fail(f"{option} {value}: expected a fraction in {'[0, 1)' if upper_open else '(0, 1]'}")


def _sz_endurance(d: dict, waf: float):
    from ..analysis import sizing

    try:
        return sizing.rated_endurance(d["capacity"], tbw=d["tbw"], dwpd=d["dwpd"],
                                      warranty_years=d["warranty_years"], pe_cycles=d["pe_cycles"],
                                      flash_bytes=d["flash_bytes"], waf=waf)
    except ValueError:
        return None


def _sz_print(title: str, rows: list[tuple[str, str]], notes: list[str]) -> None:
    table = Table("quantity", "value", title=title, box=None, title_justify="left")
    for k, v in rows:
        table.add_row(shown(k), shown(v))
    out = console(soft_wrap=True)
    out.print(table)
    for n in notes:
        out.print(f"note: {shown(n)}", markup=False)


def _gbps(x: Optional[float]) -> str:
    return "-" if x is None else f"{x / 1e9:.3f} GB/s"


def _years(x: Optional[float]) -> str:
    return "-" if x is None else ("never" if x == float("inf") else f"{x:.2f} years")


def _jsonable(d: dict) -> dict:
    return {k: (None if isinstance(v, float) and v != v else
                ("inf" if isinstance(v, float) and v == float("inf") else v)) for k, v in d.items()}


@interruptible
@shared_options
def size(
    target: Annotated[str, typer.Option(help="sustained write rate the array must take, e.g. 100Gb/s or 12.5GB/s")],
    duration: Annotated[str, typer.Option(help="how long the array must hold at that rate, e.g. 8h or 7d")],
    profile: Annotated[Optional[str], typer.Option(help="device profile (its sustained rate is simulated)")] = None,
    raid: Annotated[int, typer.Option(help="RAID level (only 0, striping, is supported)")] = 0,
    margin: Annotated[float, typer.Option(help="fraction of each drive's worst sustained rate held back")] = 0.1,
    duty: Annotated[float, typer.Option(help="share of the time the target rate is written, for lifetime")] = 1.0,
    drive_rate: Annotated[Optional[str], typer.Option(help="use this per-drive sustained rate instead of simulating")] = None,
    capacity: Annotated[Optional[str], typer.Option(help="drive capacity (with --drive-rate, in place of --profile)")] = None,
    tbw: Annotated[Optional[str], typer.Option(help="rated TBW, e.g. 600TB (overrides the profile)")] = None,
    rating: Rating = Rating(),
    run: SustainedRun = SustainedRun(),
    json_out: _Json = False,
) -> None:
    """How many drives a RAID 0 array needs to take a sustained write stream, and how long they last."""
    check_seed(run.seed)
    from ..analysis import sizing
    from ..units import parse_time_ns, unit_reason

    if raid != 0:
        fail(f"--raid {raid}: only RAID 0 is supported")
    target_rate = _sz_rate(target, "--target")
    try:
        duration_s = parse_time_ns(duration, "s") / 1e9
    except UnitError as e:
        fail(f"--duration {duration}: {unit_reason(e)}")
    if not duration_s > 0:
        fail(f"--duration {duration}: expected a positive time, e.g. 8h")
    _sz_fraction(margin, "--margin", upper_open=True)
    _sz_fraction(duty, "--duty", upper_open=False)
    if profile is None and (drive_rate is None or capacity is None):
        fail("give --profile NAME, or --drive-rate RATE with --capacity SIZE")
    d = _sz_drive(profile, capacity, tbw, rating, "with --drive-rate RATE")
    sim = None
    if drive_rate is not None:
        rate = _sz_rate(drive_rate, "--drive-rate")
        rate_source = "given (--drive-rate)"
    else:
        sim = _sz_sustained(profile, run)
        rate = sim["worst_sustained_rate"]
        rate_source = (f"simulated: p5 of interval rates over {sim['passes']:g} drive writes of"
                       f" {sim['size_bytes'] / 1e9:.4g} GB, {sim['block_size'] // 1024} KiB writes,"
                       f" queue depth {sim['iodepth']}")
        if sim.get("scale", 1.0) < 1:
            rate_source += f", {sim['scale']:.3g} of the flash simulated"
    sized = sizing.size_array(target_rate, duration_s, rate, d["capacity"], margin=margin)
    waf = max(1.0, (sim or {}).get("waf") or 1.0)
    endurance = _sz_endurance(d, waf)
    per_day = sizing.bytes_per_drive_per_day(target_rate, sized["drives"], duty)
    out = {
        "target_bytes_per_s": target_rate, "duration_s": duration_s, "raid": 0,
        "profile": d.get("name"), "capacity_bytes": d["capacity"],
        "drive_rate_source": rate_source,
        "burst_rate": sim["burst_rate"] if sim else None,
        "worst_sustained_rate": rate,
        "margin": margin, "margin_policy": sizing.margin_policy(margin),
        **sized,
        "duty": duty, "bytes_per_drive_per_day": per_day,
        "drive_writes_per_day": per_day / d["capacity"],
        "endurance_basis": endurance.basis if endurance else None,
        "endurance_formula": endurance.formula if endurance else None,
        "endurance_bytes": endurance.host_bytes if endurance else None,
        "lifetime_years": sizing.lifetime_years(endurance.host_bytes, per_day) if endurance else None,
        "waf": waf if sim else None,
        "cached": sim.get("cached") if sim else None,
    }
    note = (f"{sized['drives']} drives: {sized['drives_for_rate']} for the rate,"
            f" {sized['drives_for_capacity']} for {duration} of retention; limited by {sized['limited_by']}")
    seed_note = sizing.seed002_note(d.get("name") or "", target_rate, sized["drives_for_rate"],
                                    sized["drives_for_rate_no_margin"], rate, margin)
    if seed_note is not None:
        note += f". {seed_note[0].upper()}{seed_note[1:]}"
    if endurance is None:
        note += "; no endurance rating known, so no lifetime (give --tbw, --dwpd with --warranty-years, or --pe-cycles)"
    out["note"] = note
    if json_out:
        print_json(_jsonable(out))
        return
    rows = [
        ("target", f"{target_rate / 1e9:.3f} GB/s for {duration} ({duration_s / 3600:g} h)"),
        ("drive", f"{out['profile']} ({d['capacity'] / 1e12:.3g} TB)"),
        ("burst rate", _gbps(out["burst_rate"])),
        ("worst sustained rate", f"{_gbps(rate)}  [{rate_source}]"),
        ("margin", f"{margin:.0%} -> {_gbps(sized['usable_drive_rate'])} per drive"),
        ("drives for the rate", str(sized["drives_for_rate"])),
        ("drives for the retention", str(sized["drives_for_capacity"])),
        ("drives (RAID 0)", f"{sized['drives']} (limited by {sized['limited_by']})"),
        ("array", f"{_gbps(sized['array_rate'])}, {sized['array_capacity_bytes'] / 1e12:.4g} TB,"
                  f" holds {sized['retention_s'] / 3600:.3g} h"),
        ("writes per drive", f"{out['drive_writes_per_day']:.3g} drive writes/day at duty {duty:g}"),
        ("endurance", out["endurance_formula"] or "-"),
        ("lifetime", _years(out["lifetime_years"])),
    ]
    _sz_print("ssdlab size", rows, [f"margin policy: {out['margin_policy']}", note])


@interruptible
@shared_options
def endurance(
    write_rate: Annotated[str, typer.Option(help="write rate of the array (split evenly over --drives), e.g. 12.5GB/s")],
    profile: Annotated[Optional[str], typer.Option(help="device profile (its endurance rating; --waf auto simulates its WAF)")] = None,
    capacity: Annotated[Optional[str], typer.Option(help="drive capacity, in place of --profile, e.g. 30TB")] = None,
    tbw: Annotated[Optional[str], typer.Option(help="rated TBW, e.g. 600TB")] = None,
    rating: Rating = Rating(),
    drives: Annotated[int, typer.Option(help="drives sharing the write rate (RAID 0)")] = 1,
    duty: Annotated[float, typer.Option(help="share of the time the rate is written")] = 1.0,
    waf: Annotated[str, typer.Option(help="write amplification: auto (simulate a sequential stream) or a number")] = "auto",
    run: SustainedRun = SustainedRun(),
    json_out: _Json = False,
) -> None:
    """Years until the drives' rated endurance is used up by a write stream."""
    check_seed(run.seed)
    from ..analysis import sizing

    rate = _sz_rate(write_rate, "--write-rate")
    if drives < 1:
        fail(f"--drives {drives}: expected at least 1")
    _sz_fraction(duty, "--duty", upper_open=False)
    d = _sz_drive(profile, capacity, tbw, rating, "with --tbw, --dwpd and --warranty-years, or --pe-cycles")
    if waf.strip().lower() == "auto":
        if profile is not None:
            sim = _sz_sustained(profile, run)
            # Data still in the write buffer at the end makes a short run read a hair under 1.
            waf_value = max(1.0, float(sim["waf"] or 1.0))
            waf_source = (f"simulated: NAND/host bytes of a sequential stream, {sim['passes']:g} drive"
                          f" writes of {sim['size_bytes'] / 1e9:.4g} GB")
        else:
            waf_value, waf_source = 1.0, "assumed 1.0: a sequential stream, no profile to simulate"
    else:
        try:
            waf_value = float(waf)
        except ValueError:
            fail(f"--waf {waf!r}: expected auto or a number")
        if not waf_value >= 1.0:
            fail(f"--waf {waf}: expected auto or a number >= 1")
        waf_source = "given (--waf)"
    e = _sz_endurance(d, waf_value)
    if e is None:
        fail(f"{d['name']}: no endurance rating; give --tbw, --dwpd with --warranty-years, or --pe-cycles")
    per_day = sizing.bytes_per_drive_per_day(rate, drives, duty)
    years = sizing.lifetime_years(e.host_bytes, per_day)
    pe_years = None
    if e.basis != "pe_cycles" and d["pe_cycles"]:
        pe = sizing.endurance_from_pe(d["pe_cycles"], d["flash_bytes"] or d["capacity"], waf_value)
        pe_years = sizing.lifetime_years(pe.host_bytes, per_day)
    dwpd_asked = per_day / d["capacity"]
    note = (f"each drive takes {per_day / 1e12:.4g} TB/day = {dwpd_asked:.3g} drive writes/day"
            f" (the {drives}-drive array of {drives * d['capacity'] / 1e12:.4g} TB is overwritten every"
            f" {drives * d['capacity'] / (rate * duty) / 3600:.3g} h)")
    if d["dwpd"]:
        note += f" against a rating of {d['dwpd']:g} DWPD"
    note += ("; rated TBW/DWPD already include the vendor's write amplification, so WAF is not applied"
             " to them; it divides only the P/E-cycle budget (host writes x WAF = NAND writes)")
    out = {
        "profile": d.get("name"), "capacity_bytes": d["capacity"], "drives": drives,
        "write_rate_bytes_per_s": rate, "duty": duty, "bytes_per_drive_per_day": per_day,
        "drive_writes_per_day": dwpd_asked, "basis": e.basis, "formula": e.formula,
        "endurance_bytes": e.host_bytes, "full_drive_writes": e.host_bytes / d["capacity"],
        "years": years, "waf": waf_value, "waf_source": waf_source, "waf_applied": e.waf_applied,
        "pe_years": pe_years, "note": note,
    }
    if json_out:
        print_json(_jsonable(out))
        return
    rows = [
        ("drive", f"{out['profile']} ({d['capacity'] / 1e12:.4g} TB) x {drives}"),
        ("write rate", f"{_gbps(rate)} at duty {duty:g} -> {per_day / 1e12:.4g} TB/day per drive"),
        ("drive writes per day", f"{dwpd_asked:.3g}"),
        ("endurance", f"{e.formula}  [{e.basis}]"),
        ("full drive writes", f"{out['full_drive_writes']:.4g}"),
        ("WAF", f"{waf_value:.3g} ({waf_source}; {'applied' if e.waf_applied else 'not applied to a rated figure'})"),
        ("lifetime", _years(years)),
    ]
    if pe_years is not None:
        rows.append(("lifetime by P/E cycles", _years(pe_years)))
    _sz_print("ssdlab endurance", rows, [note])
