"""`ssdlab rebuild`: fail a member of an array, rebuild it onto a spare (with or without a
host workload) and report how long it takes, the rebuilt drive's WAF, what the host got
meanwhile, and the data-loss exposure of the window.

A rebuild of a large drive runs for hours of simulated time. ``sample`` rebuilds only that
many bytes of the replacement and extrapolates linearly to the whole drive (a rebuild walks
the drive at a steady rate once it is under way; the error of this is measured in
docs/arrays.md). Drives simulated at a fraction of their flash (``scale``) rebuild that
fraction; the time is extrapolated to the drive's full size the same way. The rebuilt
drive's WAF cannot be extrapolated so: a sample's replacement is nearly empty. Under a host
job it is projected over the whole rebuild instead (:mod:`ssdlab.analysis.waf_projection`).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

from ..api import build, execute
from ..fio import JobSet
from .reliability import DEFAULT_MTTF_HOURS, DEFAULT_URE_BITS, exposure
from ..results import RunResult
from ..system import Array, System
from .waf_projection import DEFAULT_BLOCKS_PER_PLANE, WafProjection, project


@dataclass
class RebuildResult:
    array: str
    level: int
    engine: str
    members: int
    #: Bytes of a member at full size, and the part of it simulated.
    member_bytes: int
    simulated_bytes: int
    simulated_time_s: float
    rebuild_time_s: float
    rebuild_rate_bytes: float
    extrapolated: bool
    #: The rebuilt drive's WAF: projected over the whole rebuild when ``waf_projection`` is
    #: set, else the simulated part's (``sampled_waf``).
    rebuilt_drive_waf: float | None
    host_read_bw_bytes: float
    host_write_bw_bytes: float
    exposure: dict[str, Any]
    mttf_hours: float
    ure_bits: float
    run: RunResult
    sampled_waf: float | None = None
    waf_projection: WafProjection | None = None
    warnings: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        out = {k: v for k, v in self.__dict__.items() if k not in ("run", "warnings", "waf_projection")}
        out["waf_projection"] = self.waf_projection.to_dict() if self.waf_projection else None
        out["rebuild_time_h"] = self.rebuild_time_s / 3600
        return out


def _target_array(system: System, name: str | None) -> Array:
    if not system.arrays:
        raise ValueError("the system has no array to rebuild")
    if name is None:
        return system.arrays[0]
    for a in system.arrays:
        if a.name == name:
            return a
    raise ValueError(f"no array '{name}' (arrays: {', '.join(a.name for a in system.arrays)})")


#: the wall time a whole rebuild may take before ``ssdlab rebuild`` samples it by default, and
#: the wall time the sample it then picks aims at (our choice: a command that answers in a
#: minute or two)
WHOLE_REBUILD_BUDGET_S = 120.0
SAMPLE_TARGET_S = 60.0
#: the pilot: this share of the replacement, at least PILOT_MIN_BYTES
PILOT_SHARE = 1 / 200
PILOT_MIN_BYTES = 256 << 20


@dataclass
class SamplePlan:
    """What :func:`plan_sample` decided: ``sample`` None rebuilds the whole replacement;
    ``done`` is the pilot's result when it is the answer (the whole rebuild, or the sample)."""

    sample: int | None
    estimate_s: float
    pilot_bytes: int
    pilot_s: float
    whole_bytes: int
    done: RebuildResult | None = None


def plan_sample(system: System, run_pilot: Callable[[int], RebuildResult], array: str | None = None,
                clock: Callable[[], float] = time.monotonic) -> SamplePlan:
    """Whether to rebuild ``array``'s replacement whole: ``run_pilot(bytes)`` rebuilds a pilot
    sample (1/200 of it, at least 256 MiB), timed on the wall clock; past
    WHOLE_REBUILD_BUDGET_S projected, a sample is picked that takes about SAMPLE_TARGET_S (a
    whole number of chunks). The projection is linear in bytes, so the pilot's setup (building
    and preconditioning the drives) counts against the rebuild: it errs toward sampling."""
    target = _target_array(system, array)
    whole = min(int(m.core["capacity_bytes"]) for m in target.members) // target.chunk * target.chunk
    pilot = min(whole, max(PILOT_MIN_BYTES, int(whole * PILOT_SHARE)) // target.chunk * target.chunk)
    t0 = clock()
    done = run_pilot(pilot)
    took = max(clock() - t0, 1e-6)
    if pilot >= whole:
        return SamplePlan(None, took, pilot, took, whole, done)
    estimate = took * whole / pilot
    if estimate <= WHOLE_REBUILD_BUDGET_S:
        return SamplePlan(None, estimate, pilot, took, whole)
    chosen = min(int(pilot * SAMPLE_TARGET_S / took) // target.chunk * target.chunk, whole)
    if chosen <= pilot:  # the pilot is as much as the time allows: it is the sample
        return SamplePlan(pilot, estimate, pilot, took, whole, done)
    return SamplePlan(chosen, estimate, pilot, took, whole)


def rebuild(system: System, *, host_job: Any = None, array: str | None = None, fail: str | None = None,
            sample: int | None = None, seed: int = 0, interval: str | None = None,
            mttf_hours: float = DEFAULT_MTTF_HOURS, ure_bits: float = DEFAULT_URE_BITS,
            memory_limit: str | int | None = None, project_waf: bool | None = None,
            projection_blocks: int = DEFAULT_BLOCKS_PER_PLANE) -> RebuildResult:
    """Rebuild one member of ``array`` (default: the system's first) onto its first spare.
    ``memory_limit`` is :func:`ssdlab.api.build`'s. ``project_waf``: project the rebuilt
    drive's WAF over the whole rebuild (:mod:`ssdlab.analysis.waf_projection`); by default, when a
    sample is extrapolated under a host job."""
    target = _target_array(system, array)
    if not target.spares:
        raise ValueError(f"array {target.name} has no spare to rebuild onto (with --raid, add --spares 1; in a "
                         f"system file, add a [[drive]] and name it in the [[array]]: spares = [\"NAME\"])")
    if target.level == 0:
        raise ValueError("raid0 has no redundancy: a lost member cannot be rebuilt")
    names = [d.name for d in target.members]
    victim = fail or (target.failures[0][0] if target.failures else names[0])
    if victim not in names:
        raise ValueError(f"--fail {victim}: not a member of {target.name} (members: {', '.join(names)})")
    if sample is not None and sample <= 0:
        raise ValueError("--sample must be a positive size")
    warnings = []
    if target.failures and target.failures != [(victim, 0)]:
        told = ", ".join(f"{m} at {at / 1e9:g} s" for m, at in target.failures)
        warnings.append(f"array {target.name}: the rebuild fails {victim} at the start instead of the "
                        f"failures described ({told})")
    arrays = [replace(a, failures=[(victim, 0)], rebuild_limit=sample) if a is target else a for a in system.arrays]
    sysd = replace(system, arrays=arrays)
    job = host_job if host_job is not None else JobSet(jobs=[], job_options=[], global_options={},
                                                         group_reporting={})
    if projection_blocks < 1:
        raise ValueError("--projection-blocks must be at least 1")
    spec = build(job, system=sysd, seed=seed, interval=interval, until="rebuild", memory_limit=memory_limit)
    result = execute(spec)
    out = summarise(result, target, sample, mttf_hours, ure_bits)
    out.warnings = warnings + out.run.warnings + out.warnings
    if project_waf is None:
        project_waf = out.extrapolated and host_job is not None
    if project_waf:
        made, why = project(result, spec.core, target, seed=seed, blocks_per_plane=projection_blocks)
        if made is None:
            out.warnings.append(f"rebuilt drive's WAF not projected: {why}")
        else:
            out.waf_projection = made
            out.rebuilt_drive_waf = made.waf
            if made.written_bytes < 0.97 * made.planned_bytes:
                out.warnings.append(
                    f"the WAF projection's drive took {made.written_bytes / made.planned_bytes:.0%} of the writes "
                    "planned at the sampled rates: its WAF is that of what it took")
    return out


def summarise(result: RunResult, target: Array, sample: int | None, mttf_hours: float,
              ure_bits: float) -> RebuildResult:
    dev = next(d for d in result.devices if d["name"] == target.name)
    rb = dev["internal"]["array"].get("rebuild")
    if rb is None or rb["finished_ns"] is None:
        raise ValueError(f"array {target.name}: the rebuild did not finish")
    secs = (rb["finished_ns"] - rb["started_ns"]) / 1e9
    done = rb["done_bytes"]
    # The drives' real size (a profile simulated at scale < 1 holds that fraction).
    full = min(d.profile.capacity for d in target.members) // target.chunk * target.chunk
    rate = done / secs if secs else float("inf")
    notes = []
    cap = target.engine.sync_speed_max if target.engine.kind == "md" else None
    if cap is not None and done < full and rate > cap:
        # md's speed check divides what it synced by the seconds since its mark plus one, so
        # a rebuild's first seconds run over sync_speed_max; over a whole rebuild the check
        # holds it to the cap. A sample that short is extrapolated at the cap.
        notes.append(f"the simulated part rebuilt at {rate / 1e6:.1f} MB/s, over md's sync_speed_max of {cap / 1e6:.1f} MB/s "
                     "as md does in a rebuild's first seconds; the whole rebuild is extrapolated at sync_speed_max")
        rate = cap
    total = full / rate if notes else secs * full / done
    replacement = next(m for m in dev["members"] if m["name"] == rb["member"])
    written = replacement["internal"]["host_bytes_written"]
    waf = replacement["internal"]["media_bytes_written"] / written if written else None
    elapsed = max((result.core["end_ns"] - result.core["start_ns"]) / 1e9, 1e-12)
    jobs_end = max((j["end_ns"] for j in result.core["jobs"]), default=None)
    if jobs_end is not None and jobs_end < rb["finished_ns"] - 0.01 * (rb["finished_ns"] - rb["started_ns"]):
        notes.append(f"the host job ended {(jobs_end - rb['started_ns']) / 1e9:g} s into the "
                     f"{secs:g} s rebuild: its bandwidth is averaged over the whole rebuild, and the rest "
                     "of the rebuild ran without it (give the job a longer runtime)")
    jobs_start = min((j["start_ns"] for j in result.core["jobs"]), default=None)
    if jobs_start is not None and jobs_start > rb["started_ns"] + 0.01 * (rb["finished_ns"] - rb["started_ns"]):
        notes.append(f"the host job started {(jobs_start - rb['started_ns']) / 1e9:g} s into the {secs:g} s "
                     "rebuild (startdelay): the rebuild ran without it until then")
    reads = sum(j["read"]["bytes"] for j in result.core["jobs"])
    writes = sum(j["write"]["bytes"] for j in result.core["jobs"])
    exp = exposure(target.level, len(target.members), full, total / 3600, mttf_hours, ure_bits)
    return RebuildResult(
        array=target.name, level=target.level, engine=target.engine.name, members=len(target.members),
        member_bytes=full, simulated_bytes=done, simulated_time_s=secs, rebuild_time_s=total,
        rebuild_rate_bytes=rate, extrapolated=done < full,
        rebuilt_drive_waf=waf, sampled_waf=waf, host_read_bw_bytes=reads / elapsed, host_write_bw_bytes=writes / elapsed,
        exposure=exp.to_dict(), mttf_hours=mttf_hours, ure_bits=ure_bits, run=result, warnings=notes)
