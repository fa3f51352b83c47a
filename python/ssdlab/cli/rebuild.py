"""``ssdlab rebuild``: fail a member of an array, rebuild it onto a spare (seed 004)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated, Optional

import typer

from .. import api
from ..analysis.waf_projection import DEFAULT_BLOCKS_PER_PLANE
from ..system import raid as raid_system
# `fail` is the command's option (the member that fails): the one-line error is `usage_error` here
from .common import BAD_INPUT, MemoryLimit, check_seed, err, interruptible, overrides, print_json, shown, simulating, warn
from .common import fail as usage_error


@interruptible
def rebuild(
    profile: Annotated[str, typer.Option(help="drive profile of the --raid array")] = api.DEFAULT_PROFILE,
    raid: Annotated[Optional[int], typer.Option(help="RAID level (1, 10, 5, 6) of --drives of --profile")] = None,
    drives: Annotated[Optional[int], typer.Option(help="drives in the --raid array")] = None,
    chunk: Annotated[Optional[str], typer.Option(help="chunk size of the --raid array \\[default: 512k, mdadm's]",
                                                 show_default=False)] = None,
    engine: Annotated[str, typer.Option(help="RAID engine: md, streaming, hwraid (the built-in Adaptec 6805), or an engine TOML")] = "md",
    spares: Annotated[int, typer.Option(help="hot spares of the --raid array (the rebuild needs one)")] = 1,
    system: Annotated[Optional[Path], typer.Option(help="system TOML with an \\[\\[array]] that has spares (instead of --raid)")] = None,
    array: Annotated[Optional[str], typer.Option(help="the array to rebuild (default: the first)")] = None,
    fail: Annotated[Optional[str], typer.Option(help="the member that fails (default: the first)")] = None,
    host_job: Annotated[Optional[Path], typer.Option(help="fio job run on the array during the rebuild")] = None,
    sample: Annotated[Optional[str], typer.Option(help="rebuild only this much of the replacement and extrapolate (e.g. 32GiB), or all \\[default: all when a pilot projects it within 2 minutes of wall time, else a sample that takes about one]", show_default=False)] = None,
    project_waf: Annotated[Optional[bool], typer.Option("--project-waf/--no-project-waf", help="project the rebuilt drive's WAF over the whole rebuild from the sample (default: when --sample is extrapolated under --host-job)", show_default=False)] = None,
    projection_blocks: Annotated[int, typer.Option(help="blocks per plane of the WAF projection's drive")] = DEFAULT_BLOCKS_PER_PLANE,
    scale: Annotated[Optional[float], typer.Option(help="simulate this fraction of each drive's flash (default: the profile's)")] = None,
    precondition: Annotated[Optional[str], typer.Option(help="none | sequential | random[:PASSES] for the members (a spare stays new unless its system entry sets one)")] = None,
    engine_set: Annotated[list[str], typer.Option("--engine-set", help="override an engine key, e.g. sync_speed_max=2GB/s")] = [],
    profile_set: Annotated[list[str], typer.Option("--profile-set", help="override a profile key")] = [],
    mttf_hours: Annotated[float, typer.Option(help="drive MTTF for the exposure, hours")] = 2.0e6,
    ure_bits: Annotated[float, typer.Option(help="bits read per unrecoverable read error")] = 1e17,
    seed: Annotated[int, typer.Option(help="random seed; same seed, same result")] = 0,
    as_json: Annotated[bool, typer.Option("--json", help="print JSON")] = False,
    memory_limit: MemoryLimit = None,
) -> None:
    """Fail a member of an array, rebuild it onto a spare, and report the rebuild.

    Rebuild time and rate, the rebuilt drive's WAF, the host's bandwidth meanwhile and the
    data-loss exposure."""
    check_seed(seed)
    from ..analysis.rebuild import plan_sample
    from ..analysis.rebuild import rebuild as run_rebuild
    from ..system import load_system
    from ..units import UnitError, format_bytes, parse_size, unit_reason

    try:
        limit = None
        if sample is not None and sample.strip().lower() != "all":
            try:
                limit = parse_size(sample)
            except UnitError as e:
                raise ValueError(f"--sample {sample}: {unit_reason(e)}, or all") from None
        if host_job is not None and host_job.is_dir():
            raise ValueError(f"--host-job {host_job}: is a directory, not a job file")
        if host_job is not None and not host_job.is_file():
            raise ValueError(f"{host_job}: no such job file")
        if not (0 < mttf_hours < float("inf") and 0 < ure_bits < float("inf")):
            raise ValueError("--mttf-hours and --ure-bits must be positive and finite")
        sets = overrides(profile_set, "--profile-set", "SECTION.KEY=VALUE")
        if system is not None:
            given = [flag for flag, on in [("--raid", raid is not None), ("--drives", drives is not None),
                                           ("--chunk", chunk is not None), ("--engine", engine != "md"),
                                           ("--spares", spares != 1), ("--engine-set", bool(engine_set)),
                                           ("--profile", profile != api.DEFAULT_PROFILE)] if on]
            if given:
                raise ValueError(f"{', '.join(given)} describe a --raid array; with --system, describe the array "
                                 "in the file (engine_set for engine keys)")
            sysd = load_system(system, scale=scale, precondition=precondition, profile_set=sets)
        else:
            if raid is None or drives is None:
                raise ValueError("describe the array: --raid LEVEL --drives N (or --system FILE)")
            sysd = raid_system(profile, raid, drives, chunk=chunk, engine=engine, spares=spares, profile_set=sets,
                               scale=scale, precondition=precondition,
                               engine_set=overrides(engine_set, "--engine-set", "KEY=VALUE"))
        def go(limit: int | None):
            return run_rebuild(sysd, host_job=host_job, array=array, fail=fail, sample=limit, seed=seed,
                               mttf_hours=mttf_hours, ure_bits=ure_bits, memory_limit=memory_limit,
                               project_waf=project_waf, projection_blocks=projection_blocks)

        with simulating():
            if sample is not None and sample.strip().lower() == "all":
                r = go(None)
            elif sample is not None:
                r = go(limit)
            else:
                plan = plan_sample(sysd, go, array)
                r = plan.done if plan.done is not None else go(plan.sample)
                if plan.sample is not None:
                    err.print(f"ssdlab: the whole rebuild ({format_bytes(plan.whole_bytes)} simulated) would "
                              f"take about {_wall(plan.estimate_s)} of wall time here (a pilot of "
                              f"{format_bytes(plan.pilot_bytes)} took {plan.pilot_s:.2g} s): rebuilt "
                              f"{format_bytes(plan.sample)} of it and extrapolated; --sample all rebuilds "
                              "it whole", markup=False)
    except BAD_INPUT as e:
        usage_error(str(e).splitlines()[0])
        return
    if as_json:
        print_json(r.to_dict())
        for w in r.warnings:
            warn(w)
        return
    hours = r.rebuild_time_s / 3600
    how = f" (extrapolated from {format_bytes(r.simulated_bytes)} simulated)" if r.extrapolated else ""
    e = r.exposure
    lines = [
        f"array {r.array}: raid{r.level} of {r.members} x {format_bytes(r.member_bytes, False)}, engine {r.engine}",
        f"  rebuild time {int(hours)} h {round((hours % 1) * 60)} min{how}",
        f"  rebuild rate {format_bytes(r.rebuild_rate_bytes, False)}/s per member",
        _waf_line(r),
        f"  host during the rebuild: read {format_bytes(r.host_read_bw_bytes, False)}/s, "
        f"write {format_bytes(r.host_write_bw_bytes, False)}/s",
        f"  exposure (MTTF {r.mttf_hours:.3g} h, 1 URE per {r.ure_bits:.3g} bits): MTTDL {e['mttdl_hours']:.3g} h; "
        f"second failure during the rebuild {100 * e['p_second_failure']:.4g} %, "
        f"unrecoverable read {100 * e['p_ure']:.4g} %",
    ]
    sys.stdout.write(shown("\n".join(lines)) + "\n")
    for w in r.warnings:
        warn(w)


def _wall(seconds: float) -> str:
    return f"{seconds:.2g} s" if seconds < 10 else f"{seconds:.0f} s" if seconds < 120 else f"{seconds / 60:.0f} min" if seconds < 7200 else f"{seconds / 3600:.1f} h"


def _waf_line(r) -> str:
    """The rebuilt drive's WAF, and how it was had when projected."""
    from ..units import format_bytes

    if r.rebuilt_drive_waf is None:
        return "  rebuilt drive WAF n/a"
    p = r.waf_projection
    if p is None:
        return f"  rebuilt drive WAF {r.rebuilt_drive_waf:.3f}"
    return (f"  rebuilt drive WAF {p.waf:.3f} projected over the whole rebuild ({r.sampled_waf:.3f} in the sample; "
            f"host writes reaching it {format_bytes(p.host_write_rate_bytes, False)}/s from {p.writers} "
            f"writers; on a {format_bytes(p.drive_bytes, False)} drive of its blocks)")
