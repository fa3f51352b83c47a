"""The Python entry point, in three steps that can run in different processes:

* :func:`build`: a fio job and a system (or a profile) in, a :class:`RunSpec` out — plain,
  JSON-serialisable data (``spec.model_dump_json()``), nothing compiled in it;
* :func:`execute`: a :class:`RunSpec` in, a :class:`RunResult` out (the simulation itself);
* presentation: the :class:`RunResult`'s fio JSON, pandas tables and text report.

:func:`run` is ``execute(build(...))``. A sweep builds specs where it likes and ships them to
workers as JSON.
"""

from __future__ import annotations

import contextlib
import dataclasses
import itertools
import json
import math
import os
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextvars import ContextVar
from importlib import resources
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from .analysis import memory, steadystate
from .arguments import check_mapping, check_seed
from .config import load_host
from .config.profile import host_places, host_unmodelled
from .fio import JobSet, Targets, load_job_file, load_job_files, parse_job_text
from .filework import FileWork, filesystem_spec
from .filework import load as load_file_work
from .fio.reporting import JobReport
from .results import RunResult, TargetInfo, build_units
from .iosched import check_name, queue_core, split_host_sets
from .workload import Replay, TraceMix, survey
from .system import Array, Drive, IoOverride, Remap, System, load_system, parse_precondition, raid, single
from .units import UnitError, format_bytes, format_time, parse_time_ns, unit_reason

DEFAULT_PROFILE = "samsung-850-pro"

__all__ = ["DEFAULT_PROFILE", "DataLostError", "Progress", "RunLimitError", "RunSpec", "SimulationError", "build",
           "execute", "observe", "parse_precondition", "quickstart_job", "run"]


class SimulationError(ValueError):
    """The core rejected the input (it names the key or job and what was wrong)."""


class RunLimitError(SimulationError):
    """The run passed one of its limits (time-series samples, I/O log records) and stopped."""


class DataLostError(SimulationError):
    """A member failure lost an array's data: the run ended there (it names the array and members)."""


_LIMIT = "run stopped at its limit: "
_SAMPLES = re.compile(r"the time series passed (\d+) samples \(the run's limit, max_samples\) at an interval of "
                      r"(\d+) ns")
_PLANNED = re.compile(r"the time series would take (\d+) samples at an interval of (\d+) ns, more than the run's "
                      r"limit of (\d+)")
_LOGS = re.compile(r"job '(?P<job>.*)': the I/O logs passed (\d+) records \(the run's limit, max_log_records\)")


def _core_error(message: str, spec: "RunSpec", text: str) -> SimulationError:
    """The core's error as the exception of its kind, said in the user's terms: a limit the
    run passed names the option that sets it; an array's lost data is the array's."""
    if message.startswith(_LIMIT):
        what = message.removeprefix(_LIMIT)
        m = _SAMPLES.match(what)
        if m:
            return RunLimitError(f"--interval {format_time(int(m[2]))}: the time series passed {int(m[1]):,} samples, "
                                 "the most a run keeps, and the run stopped; a longer interval takes fewer")
        m = _PLANNED.match(what)
        if m:
            return RunLimitError(f"--interval {format_time(int(m[2]))}: the run would take {int(m[1]):,} time-series "
                                 f"samples, more than the {int(m[3]):,} a run keeps; a longer interval takes fewer")
        m = _LOGS.match(what)
        if m:
            return RunLimitError(f"job '{m['job']}': its I/O logs passed {int(m[2]):,} records, the most a run "
                                 "keeps, and the run stopped; average them over windows (log_avg_msec=) or log a "
                                 "shorter run")
        return RunLimitError(f"the run stopped at its limit: {what}")
    if message.startswith("array ") and any(t["name"] == message[6:].split(":", 1)[0]
                                            for t in spec.core.get("targets", [])):
        return DataLostError(message)
    m = _FS_ERROR.match(message)
    if m and m["key"] in spec.places:
        # mkfs refused a system file's or a scenario's file system (too many inodes for its size,
        # say), or a scenario's file set did not fit.
        where, key = spec.places[m["key"]]
        return SimulationError(f"{where}: key '{key}': {m['sub'] + ': ' if m['sub'] else ''}{m['what']}")
    return SimulationError(_place_core_error(message, spec, text))


_FS_ERROR = re.compile(r"^invalid system: (?P<key>targets\.\d+\.filesystem|file_sets\.[^:]+?)(?:\.(?P<sub>[a-z_]+))?: "
                       r"(?P<what>.*)$", re.S)


def quickstart_job() -> Path:
    """The built-in default job file."""
    return Path(str(resources.files("ssdlab") / "data" / "jobs" / "quickstart.fio"))


class RunSpec(BaseModel):
    """Everything one run needs, as plain data: the core's input and what presenting the
    result needs. Serialise with ``model_dump_json()``, restore with ``model_validate_json()``."""

    model_config = ConfigDict(extra="forbid")

    core: dict[str, Any] = Field(description="the SimSpec the core runs")
    host_name: str
    targets: list[TargetInfo]
    group_reporting: dict[int, bool]
    job_options: list[dict[str, str]]
    global_options: dict[str, str]
    percentiles: list[float]
    percentile_precision: int = 2
    warnings: list[str] = Field(default_factory=list)
    sources: dict[str, str] = Field(default_factory=dict)
    #: per clone: fio's reporting options (sampling windows, log files, latency target)
    job_reports: list[JobReport] = Field(default_factory=list)
    #: the time-series interval asked for
    interval_ns: int | None = None
    #: a key of ``core`` (dotted) -> [where the user set it, its name there], for core errors
    places: dict[str, list[str]] = Field(default_factory=dict)
    #: what the run's input holds, for people (a replayed trace's records read and lines skipped)
    notes: list[str] = Field(default_factory=list)
    #: each target's file system and where it came from (when a system file names one)
    filesystems: list[str] = Field(default_factory=list)
    #: bytes the run may add to the process's resident memory before it is stopped (a run
    #: whose memory the estimate cannot bound: ``memory.guard_needed``); None: not watched
    memory_guard: int | None = None


def _load_jobs(job, targets: Targets, overrides, env, seed, mounted: bool = False, page_cache: bool = False) -> JobSet:
    """``mounted``: a file system is named on the first device, so jobs that name no device
    will run on files; ``page_cache``: the host has one, so buffered jobs on a named block
    device go through the device's."""
    if isinstance(job, JobSet):
        return job
    if isinstance(job, (list, tuple)):
        # several job files, as fio takes them (``-`` is standard input)
        return load_job_files([Path(p) if str(p) != "-" else "-" for p in job], targets=targets,
                              overrides=overrides, env=env, seed=seed,
                              mounted=mounted, page_cache=page_cache)
    if str(job) == "-":
        return load_job_files(["-"], targets=targets, overrides=overrides, env=env, seed=seed,
                              mounted=mounted, page_cache=page_cache)
    text = str(job)
    if isinstance(job, os.PathLike) or ("\n" not in text and "=" not in text):
        return load_job_file(Path(job), targets=targets, overrides=overrides, env=env, seed=seed,
                             mounted=mounted, page_cache=page_cache)
    return parse_job_text(text, name="<job text>", targets=targets, overrides=overrides, env=env, seed=seed,
                          mounted=mounted, page_cache=page_cache)


def build(
    job: str | os.PathLike[str] | JobSet | None = None,
    *,
    profile: str | os.PathLike[str] = DEFAULT_PROFILE,
    system: str | os.PathLike[str] | System | None = None,
    host: str | os.PathLike[str] | None = None,
    seed: int = 0,
    overrides: Mapping[str, str] | None = None,
    env: Mapping[str, str] | None = None,
    interval: str | float | None = None,
    precondition: str | Mapping[str, Any] | None = None,
    scale: float | None = None,
    profile_set: Mapping[str, str] | None = None,
    until: str = "jobs",
    scheduler: str | None = None,
    host_set: Mapping[str, str] | None = None,
    replay: Sequence[tuple[Replay, str | None, int]] | None = None,
    memory_limit: str | int | None = None,
    files: "FileWork | str | os.PathLike[str] | None" = None,
    filesystem: str | Mapping[str, Any] | None = None,
    power_cut: str | float | None = None,
) -> RunSpec:
    """Parse the job, load the system (a system file, or ``profile`` as a one-drive system)
    and resolve everything into a :class:`RunSpec`. Bad input raises here, never later.
    ``until="rebuild"`` ends the run when the arrays' rebuilds are done (jobs still running
    are stopped then, as fio stops them at their runtime). ``power_cut`` (a time from the
    start, ``"2s"``; bare numbers are seconds) ends it when the power fails: nothing drains,
    and the result's ``power_cut`` says what each device held only in volatile memory.
    ``scheduler`` and ``host_set``
    (``{"iosched.slice_idle": "0", "queue.nomerges": "2"}``, sysfs names and units) apply to
    every drive, over what a system file sets. ``replay`` replaces ``job``: one job per
    (trace, target device name or None for the first, iodepth). Without ``replay`` a ``job``
    is required (``quickstart_job()`` is the built-in example).

    The memory the run will need is estimated here (:mod:`ssdlab.analysis.memory`), and a run that
    needs more than ``memory_limit`` (a size like ``"16GiB"``, a share of the available
    memory like ``"90%"``, or ``"none"``; default ``$SSDLAB_MEMORY_LIMIT``, else 75 % of
    MemAvailable) is refused with :class:`ssdlab.analysis.memory.MemoryLimitError` (a ValueError)
    naming what takes the memory and how to need less; so is an ``interval`` that would take
    more than :data:`ssdlab.analysis.memory.MAX_SAMPLES` samples."""
    if isinstance(files, (str, os.PathLike)):
        files = load_file_work(files)
    if job is None and not replay and files is None:
        raise TypeError("job: expected a fio job file path, job text or a parsed JobSet, got None "
                        "(ssdlab.api.quickstart_job() is the built-in example job)")
    check_seed(seed)
    check_mapping(profile_set, "profile_set", {"thermal.ambient_temperature": "40"})
    check_mapping(overrides, "overrides", {"runtime": "10"})
    check_mapping(host_set, "host_set", {"iosched.slice_idle": "0"})
    check_mapping(env, "env", {"NUMJOBS": "4"})
    if until not in ("jobs", "rebuild"):
        raise ValueError(f"until {until!r}: expected 'jobs' or 'rebuild'")
    until_core: Any = "rebuild-done" if until == "rebuild" else "jobs-done"
    if power_cut is not None:
        if until == "rebuild":
            raise ValueError("power_cut: a run ends at the power cut or when the rebuild is done, not both")
        try:
            cut_ns = parse_time_ns(power_cut if isinstance(power_cut, str) else f"{power_cut}s")
        except UnitError as e:
            raise ValueError(f"power cut {power_cut!r}: {e}") from None
        if cut_ns <= 0:
            raise ValueError(f"power cut {power_cut!r}: expected a time after the start")
        until_core = {"power-cut": {"at_ns": cut_ns}}
    if scale is not None and not 0 < scale <= 1:
        raise ValueError(f"scale {scale}: expected a fraction in (0, 1]")
    if precondition is not None and not isinstance(precondition, str):
        precondition = dict(precondition)
    sets = dict(profile_set) if profile_set else None
    if system is None:
        sysd = single(profile, profile_set=sets, scale=scale, precondition=precondition)
    elif isinstance(system, System):
        sysd = system
    else:
        sysd = load_system(system, scale=scale, precondition=precondition, profile_set=sets)
    strict = sysd.strict
    io = None
    io_sched, io_queue, host_keys = split_host_sets(host_set)
    if scheduler is not None or io_sched or io_queue:
        if scheduler is not None:
            check_name(scheduler)
        io = IoOverride(scheduler, io_sched, io_queue)
    host_ref = host or sysd.host or sysd.drives[0].profile.default_host
    host_profile, host_sources = load_host(host_ref, host_keys or None)
    chosen = sysd.targets
    sizes = tuple(t.capacity if isinstance(t, (Array, Remap)) else t.core["capacity_bytes"] for t in chosen)
    targets = Targets(tuple(sysd.names), sizes, strict=strict, members=sysd.members)
    if replay:
        for _, name, _ in replay:
            if name is not None and strict and name not in sysd.names:
                raise ValueError(f"replay to /dev/{name}: no such device in the system "
                                 f"(it has {', '.join('/dev/' + n for n in sysd.names)})")
        job = "".join(f"[replay{i}]\nioengine=libaio\ndirect=1\niodepth={qd}\nsize=100%\n"
                      + (f"filename=/dev/{name}\n" if name else "") for i, (_, name, qd) in enumerate(replay))
    if files is not None:
        # A job per thread instance: refused before they are made when they alone pass the limit.
        limit, origin = memory.memory_limit(memory_limit)
        memory.check_threads(sum(t.instances for t in files.threads), limit, origin)
        if power_cut is None:
            files.check_ends()
        jobs = files.jobs(seed)
        jobset = JobSet(jobs=jobs, job_options=[{} for _ in jobs], global_options={}, group_reporting={},
                        warnings=list(files.warnings), reports=[JobReport() for _ in jobs])
    else:
        # A system file's file system on the first device mounts it as --fs does.
        mounted = (filesystem is not None or getattr(chosen[0], "filesystem", None) is not None) and not replay
        jobset = _load_jobs(job, targets, overrides, env, seed, mounted=mounted,
                            page_cache=host_profile.memory is not None)
    fio_file_sets: list[dict[str, Any]] = []
    if files is None and not replay and (any(jobset.on_files) or any(jobset.on_device_cache)):
        # fio on a file system: the jobs that ask for files (or all that name no device, when
        # one is named) run on their own files, on one made on the first device if need be.
        from .fio.onfiles import on_files

        moved, fio_file_sets, kept = on_files(jobset.jobs, jobset.job_options, jobset.global_options,
                                              jobset.warnings, jobset.on_files, jobset.on_device_cache,
                                              targets.sizes)
        jobset = dataclasses.replace(jobset, jobs=moved, warnings=kept)
    if replay:
        jobs = [j.model_copy(update={"replay": r, "io_limit": 1 << 62, "name": "replay"})
                for j, (r, _, _) in zip(jobset.jobs, replay, strict=True)]
        # The generated job text's own options are not the user's to be warned about.
        jobset = dataclasses.replace(jobset, jobs=jobs, warnings=[w for w in jobset.warnings if "ioengine" not in w])
    notes, trace_warnings, mixes = _survey_traces(jobset.jobs)
    if mixes:
        # The header says what each replay sends, not the generated job's defaults.
        jobset = dataclasses.replace(jobset, reports=[
            r.model_copy(update={"header_rw": mixes[j.replay].rw, "header_lengths": mixes[j.replay].lengths})
            if j.replay in mixes else r for j, r in zip(jobset.jobs, jobset.reports, strict=True)])
    try:
        interval_ns = parse_time_ns(interval, "s") if interval is not None else None
    except UnitError as e:
        raise UnitError(f"interval {interval!r}: {unit_reason(e)}") from None
    if interval_ns is not None and interval_ns <= 0:
        raise ValueError(f"interval {interval!r}: expected a positive time, e.g. 100ms")
    core = {
        "seed": seed,
        "host": host_profile.to_core(),
        "targets": [_core_target(t, _job_scheduler(t, i, jobset, io)) for i, t in enumerate(chosen)],
        "jobs": [j.model_dump(mode="json") for j in jobset.jobs],
        "interval_ns": interval_ns,
        "until": until_core,
        "limits": {"max_samples": memory.MAX_SAMPLES, "max_log_records": memory.MAX_LOG_RECORDS},
        "file_sets": files.file_sets if files is not None else fio_file_sets,
        # the server's network and its clients, when a scenario's threads send files
        "network": files.network if files is not None else None,
    }
    if (files is not None or fio_file_sets) and core["host"]["memory"] is None:
        raise ValueError(_no_memory(host_profile.name, jobset if fio_file_sets else None))
    default_fs = None if host_profile.memory is None else host_profile.default_filesystem()
    fs_specs, fs_notes, fs_warnings = _filesystems(chosen, filesystem, files, default_fs, bool(replay),
                                                   fio_on_files=any(not f.get("block_device") for f in fio_file_sets),
                                                   host=host_profile.name)
    if files is None and not replay and (fio_file_sets or any(f is not None for f in fs_specs)):
        # A run with a file system says which path each job took; one without is raw throughout.
        notes.extend(_job_paths(jobset.jobs, fio_file_sets, fs_specs[0], [t.name for t in chosen]))
    for t, fs_spec in zip(core["targets"], fs_specs):
        if fs_spec is not None:
            t["filesystem"] = fs_spec
    _observe(core["jobs"], jobset.reports)
    warnings = list(jobset.warnings) + trace_warnings + fs_warnings + host_unmodelled(host_ref, host_profile,
                                                                                     host_keys or None)
    sources = {f"host.{k}": v for k, v in host_sources.items()}
    used = [d for t in chosen for d in (t.members if isinstance(t, (Array, Remap)) else [t])]
    for d in used:
        prefix = "device" if len(used) == 1 else f"device.{d.name}"
        sources.update({f"{prefix}.{k}": v for k, v in d.sources.items()})
    for a in sysd.arrays:
        sources.update({f"array.{a.name}.engine.{k}": v for k, v in a.engine_sources.items()})
        if a.spares and a.level == 0:
            warnings.append(f"array {a.name}: raid0 has no redundancy to rebuild, so spares "
                            f"{', '.join(d.name for d in a.spares)} are never used")
        elif a.spares and not a.failures:
            warnings.append(f"array {a.name}: no member fails, so spares {', '.join(d.name for d in a.spares)} "
                            "stay idle")
        trims = any("trim" in j["rw"] and chosen[j["target"]] is a for j in core["jobs"])
        if trims and a.level in (5, 6) and a.engine.kind == "md":
            warnings.append(f"array {a.name}: Linux's raid456 refuses discards unless its module parameter "
                            "devices_handle_discard_safely is set (it is off by default); they are modelled "
                            "as if it were on")
        if a.level == 1 and a.chunk_given:
            warnings.append(f"array {a.name}: raid1 has no chunks; its chunk size is ignored (as mdadm says)")
    spares = [d for a in sysd.arrays for d in a.spares]
    warnings.extend(_scale_warnings([*used, *spares]))
    labels = {d.name: d.profile.name + (f" at scale {d.scale:g}" if d.scale < 1 else "") for d in (*used, *spares)}
    if files is not None:
        # Where each file set was written, for a message about its memory.
        labels.update({k: v for k, v in files.places.items() if k.startswith("file_sets.")})
    estimate = memory.estimate(core, labels)
    limit, origin = memory.memory_limit(memory_limit)
    scales = {d.name: d.scale for d in (*used, *spares) if d.core.get("kind") == "nand-ssd"}
    guard = None
    before = memory.guard_needed(core, estimate, limit, labels)
    if before is not None:
        # The jobs' writes until the rebuild is done are not known before the run: it runs,
        # and stops if its resident memory passes the limit.
        guard = limit
        base = before.total
        warnings.append(f"memory: the estimate ({memory.gb(estimate.total)}) counts the jobs' writes to the end of "
                        f"their size or runtime, but the run ends with its rebuild ({memory.gb(base)} before those "
                        f"writes): it runs watched, and stops if it passes the limit of {memory.gb(limit)} ({origin})")
        # Its time series and I/O logs are still held to their own limits.
        memory.check(estimate, None, origin, asked_interval_ns=interval_ns, scales=scales)
    else:
        memory.check(estimate, limit, origin, asked_interval_ns=interval_ns, scales=scales)
        big = memory.warning(estimate, scales)
        if big is not None:
            warnings.append(big)
    infos = [_target_info(t) for t in chosen]
    places = host_places(host_ref)
    if not replay:
        places.update({f"targets.{i}.filesystem": [t.filesystem.origin, f"filesystem of /dev/{t.name}"]
                       for i, t in enumerate(chosen) if getattr(t, "filesystem", None) is not None})
    if files is not None:
        # A scenario's file system is on each target the system file gives none; its sets.
        if "filesystem" in files.places:
            places.update({f"targets.{i}.filesystem": [files.places["filesystem"], "filesystem"]
                           for i, t in enumerate(chosen) if getattr(t, "filesystem", None) is None})
        places.update({k: [v, k.replace("file_sets.", "fileset ", 1)] for k, v in files.places.items()
                       if k.startswith("file_sets.")})
    return RunSpec(core=core, host_name=host_profile.name, targets=infos,
                   group_reporting=jobset.group_reporting, job_options=jobset.job_options,
                   global_options=dict(jobset.global_options), percentiles=list(jobset.percentiles),
                   percentile_precision=jobset.percentile_precision,
                   warnings=warnings, sources=sources, places=places,
                   job_reports=list(jobset.reports), interval_ns=interval_ns, notes=notes,
                   filesystems=fs_notes, memory_guard=guard)


def _survey_traces(jobs: Sequence[Any]) -> tuple[list[str], list[str], dict[Replay, TraceMix]]:
    """Every trace the jobs replay, read once before the run (:func:`ssdlab.workload.survey`):
    a trace with nothing to replay, a bad record or a time past the simulated clock is refused
    here, not after simulating up to it. Returns a line per trace saying what was read and
    skipped, warnings, and what each replay sends."""
    notes: list[str] = []
    warnings: list[str] = []
    mixes: dict[Replay, TraceMix] = {}
    for j in jobs:
        if j.replay is None or j.replay in mixes:
            continue
        _, line, said, mixes[j.replay] = survey(j.replay)
        if line not in notes:
            notes.append(line)
        warnings += [w for w in said if w not in warnings]
    return notes, warnings, mixes


def _no_memory(host: str, jobset: JobSet | None) -> str:
    """Why a run on files cannot run on a host profile without ``[memory]``: one line naming
    the job that asked for files and how to keep it on the raw device."""
    if jobset is None:
        return (f"host {host}: file workloads need the host's memory and CPUs (a [memory] table in the "
                "host profile)")
    name = next(j.name for j, f in zip(jobset.jobs, jobset.on_files, strict=True) if f)
    return (f"host {host}: job '{name}' runs on files through the page cache (buffered I/O, fio's default "
            "when direct is not set, or file options), which needs the host's memory and CPUs: add a "
            "[memory] table to the host profile, or set direct=1 to run on the raw device")


def _job_paths(jobs: Sequence[Any], fio_file_sets: list[dict[str, Any]], fs: dict[str, Any] | None,
               names: list[str]) -> list[str]:
    """A line per job (its first clone) saying which path it takes: its files on the first
    device's file system, through the page cache or O_DIRECT, or the raw device."""
    lines = []
    for j in jobs:
        if j.clone != 0:
            continue
        f = j.files
        if not f:
            where = f"on the raw device /dev/{names[j.target]}"
        elif fio_file_sets[f["set"]].get("block_device"):
            where = f"on /dev/{names[j.target]} through its own page cache (buffered, no file system)"
        else:
            fset = fio_file_sets[f["set"]]
            on = f"{fs['type'] if fs else 'a file system'} on /dev/{names[0]}"
            if f.get("engine"):
                kind = "directories" if fset.get("dirs") else "files"
                where = f"fio's {f['engine']} on {fset['entries']} {kind} in {fset['dir']} of {on}"
            else:
                how = "with O_DIRECT" if f["direct"] else "through the page cache"
                n = fset["entries"]
                files = f"{n} file{'s' if n != 1 else ''} of {j.region_size:,} bytes ({format_bytes(j.region_size)})"
                where = f"on files {how} and {on}: {files}{' each' if n != 1 else ''} in {fset['dir']}"
        lines.append(f"job '{j.name}' runs {where}")
    return lines


def _filesystems(chosen: Sequence[Drive | Array | Remap], filesystem: str | Mapping[str, Any] | None,
                 files: FileWork | None, default_fs: tuple[str, str] | None, replay: bool = False,
                 fio_on_files: bool = False, host: str = ""
                 ) -> tuple[list[dict[str, Any] | None], list[str], list[str]]:
    """Each target's file system, a note per target saying where it came from (when a system
    file names one, or the host's default is taken) and the mkfs and mount options' warnings.
    ``filesystem`` (``--fs``) wins: on a target the system file gives a file system, it
    replaces only the type; elsewhere it is the whole spec. Then the system file's (not under
    a trace replay), then the work's (a scenario's), then, for a file workload or fio jobs on
    files (``fio_on_files``), the host's default (``default_fs``: its kind and where it comes
    from), with the mke2fs defaults of the host's era: for fio jobs on the first device only,
    where their files are."""
    fs_choice = filesystem if filesystem is not None else (files.filesystem if files else None)
    origin = "--fs" if filesystem is not None else "the scenario" if fs_choice is not None else None
    from_host = False
    if (files is not None or fio_on_files) and fs_choice is None and default_fs is not None:
        if files is not None or getattr(chosen[0], "filesystem", None) is None:
            fs_choice, why = default_fs
            origin = f"the host profile {host} ({why})"
            from_host = True
    plain = _filesystem(fs_choice)
    given = None if filesystem is None else filesystem if isinstance(filesystem, str) else filesystem.get("type")
    specs: list[dict[str, Any] | None] = []
    notes: list[str] = []
    warnings: list[str] = []
    any_system = any(getattr(t, "filesystem", None) is not None for t in chosen)
    if replay and any_system:
        # A block trace addresses the devices: nothing is mounted under it.
        named = ", ".join(f"/dev/{t.name}" for t in chosen if getattr(t, "filesystem", None) is not None)
        return [plain for _ in chosen], [], [f"the system file's file systems ({named}) are not made for a trace replay"]
    for i, t in enumerate(chosen):
        tfs = getattr(t, "filesystem", None)
        if tfs is None:
            # fio's files are on the first device: the others stay raw.
            mine = plain if not (from_host and files is None and i > 0) else None
            specs.append(mine)
            if (any_system or (from_host and files is None)) and mine is not None:
                notes.append(f"/dev/{t.name}: {mine['type']} from {origin}")
            continue
        parsed = tfs.parse(given)
        specs.append(parsed.spec)
        for w in parsed.warnings:
            line = f"{tfs.origin}: /dev/{t.name}: {w}"
            if line not in warnings:
                warnings.append(line)
        if given is not None:
            over = f" (over {tfs.request.type})" if given != tfs.request.type else ""
            notes.append(f"/dev/{t.name}: {given} from --fs{over}, mkfs and mount options from {tfs.origin}")
        else:
            notes.append(f"/dev/{t.name}: {parsed.spec['type']} from {tfs.origin}")
        if files is not None and files.filesystem is not None and filesystem is None:
            warnings.append(f"/dev/{t.name}: the system file's file system ({tfs.origin}) replaces the scenario's")
    return specs, notes, warnings


def _filesystem(fs: str | Mapping[str, Any] | None) -> dict[str, Any] | None:
    """The core's file-system spec from ``"ext4"`` or a table of mkfs and mount options."""
    if fs is None:
        return None
    table = {"type": fs} if isinstance(fs, str) else dict(fs)
    if "commit_interval_ns" in table:  # already the core's spec
        return table

    def fail(key: str, message: str) -> ValueError:
        return ValueError(f"filesystem: {key}: {message}")

    if table.get("type") not in ("ext3", "ext4"):
        raise fail("type", f"{table.get('type')!r}: expected ext3 or ext4")
    return filesystem_spec(table, fail)


def _observe(jobs: list[dict[str, Any]], reports: Sequence[JobReport]) -> None:
    """What the core observes of each clone for fio's report: its bandwidth and IOPS
    sampling windows, and its I/O log if it writes a log file."""
    for job, rep in zip(jobs, reports):
        job["bw_window_ns"] = rep.bw_avg_msec * 1_000_000
        job["iops_window_ns"] = rep.iops_avg_msec * 1_000_000
        if rep.bw_log or rep.iops_log or rep.lat_log:
            job["log_window_ns"] = rep.log_avg_msec * 1_000_000


def _job_scheduler(t: Drive | Array | Remap, i: int, jobset: JobSet, io: IoOverride | None) -> IoOverride | None:
    """fio's ``ioscheduler=`` for target ``i``; ``--scheduler`` wins over it."""
    name = jobset.ioschedulers.get(i)
    if name is None or (io is not None and io.scheduler is not None):
        return io
    if isinstance(t, (Array, Remap)):
        what = "an md array" if isinstance(t, Array) else "a remapping layer"
        raise ValueError(f"ioscheduler={name}: /dev/{t.name} is {what}, which has no I/O scheduler "
                         "(set its members' with --scheduler or in the system file)")
    base = io or IoOverride()
    return IoOverride(name, base.iosched, base.queue)


def _core_target(t: Drive | Array | Remap, io: IoOverride | None) -> dict[str, Any]:
    if isinstance(t, (Array, Remap)):
        # md and the remapping layer are bio-based: no scheduler of their own; their drives
        # have theirs.
        ra = getattr(t, "read_ahead_kb", None)
        return {"name": t.name, "device": t.core(io), "scheduler": {"name": "none"}, "precondition": {"kind": "none"},
                "queue": queue_core({} if ra is None else {"read_ahead_kb": ra}), "filesystem": None}
    return {**t.target_core(io), "filesystem": None}


def _drive_info(d: Drive) -> TargetInfo:
    return TargetInfo(name=d.name, profile=d.profile.name, kind=d.core["kind"], scale=d.scale,
                      endurance=d.profile.endurance.model_dump())


def _target_info(t: Drive | Array | Remap) -> TargetInfo:
    if isinstance(t, Drive):
        return _drive_info(t)
    if isinstance(t, Remap):
        d = _drive_info(t.drive)
        return TargetInfo(name=t.name, profile=d.profile, kind="remap", scale=d.scale, members=[d])
    members = [_drive_info(d) for d in (*t.members, *t.spares)]
    profiles = sorted({m.profile for m in members})
    return TargetInfo(name=t.name, profile=profiles[0] if len(profiles) == 1 else "+".join(profiles),
                      kind="array", scale=members[0].scale, members=members,
                      array={"level": t.level, "chunk_bytes": t.chunk, "engine": t.engine.name})


def _scale_warnings(drives: list[Drive]) -> list[str]:
    """One warning per profile simulated at a fraction of its flash."""
    out = []
    seen = set()
    for d in drives:
        if d.scale >= 1 or (d.profile.name, d.scale) in seen:
            continue
        seen.add((d.profile.name, d.scale))
        names = [x.name for x in drives if x.profile.name == d.profile.name and x.scale == d.scale]
        who = f"{', '.join(names)}: " if len(drives) > 1 else ""
        out.append(
            f"{who}simulating {d.scale:g} of {d.profile.name}'s flash ({d.core['capacity_bytes'] / 1e9:.1f} GB"
            f" of {d.profile.capacity / 1e9:.1f} GB): rates and WAF carry over, sizes and fill times scale")
        if d.profile.thermal is not None:
            out.append("the thermal model runs in real time: at scale < 1 a fill ends sooner than on the "
                       "drive, so it heats less during it")
    return out


@dataclasses.dataclass(frozen=True)
class Progress:
    """How far a run is, as the core reports it: at the start of each phase, then about every
    100 ms of wall clock. ``phase`` is ``"precondition"`` (a drive brought to its used state:
    ``device``, the ``fill`` fraction done, ``passes_done`` of ``passes`` random overwrites),
    ``"run"`` (the jobs) or ``"drain"`` (the devices finishing their own work). Times are
    simulated ns; ``end_ns`` (every job has a runtime) and ``planned_bytes`` (every job has a
    size) are None when unknown; ``fraction`` is the share of the phase done, where known.
    ``run`` numbers the runs of this process, so one callback can follow several."""

    run: int
    phase: str
    start_ns: int
    now_ns: int
    end_ns: int | None
    planned_bytes: int | None
    requests: int
    bytes: int
    events: int
    fraction: float | None
    rebuild_bytes: int | None
    rebuild_target_bytes: int | None
    device: str | None
    fill: float | None
    passes_done: float | None
    passes: float | None
    #: The drive's preconditioned state was read from the state cache, not written.
    restored: bool | None = None

    @property
    def simulated_ns(self) -> int:
        """Simulated time since the run began."""
        return self.now_ns - self.start_ns


ProgressCallback = Callable[[Progress], object]

_observer: ContextVar[ProgressCallback | None] = ContextVar("ssdlab_progress", default=None)
_run_numbers = itertools.count(1)


@contextlib.contextmanager
def observe(callback: ProgressCallback) -> Iterator[ProgressCallback]:
    """Within the block, every simulation :func:`execute` runs (and so :func:`run`, the
    sizing, rebuild and experiment code built on it) reports its :class:`Progress` to
    ``callback``, unless given its own. An exception the callback raises ends the run and
    propagates. ``ssdlab.progress.terminal_progress()`` shows it with rich."""
    token = _observer.set(callback)
    try:
        yield callback
    finally:
        _observer.reset(token)


def execute(spec: RunSpec, *, progress: ProgressCallback | None = None,
            state_cache: str | os.PathLike[str] | None = None,
            carry_states: str | os.PathLike[str] | None = None) -> RunResult:
    """Run the simulation a :class:`RunSpec` describes (the GIL is released meanwhile).
    ``progress`` (default: the one set by :func:`observe`, if any) is called with the run's
    :class:`Progress`. Ctrl-C stops the run within about 100 ms (KeyboardInterrupt).
    ``state_cache``: a directory (``ssdlab.cachedir.state_cache_dir()`` is the command
    line's) where drives preconditioned with random overwrites are kept, and read back by
    the next run of the same drive description, preconditioning and seed instead of being
    preconditioned again. The result is the same with or without an observer or a cache.
    ``carry_states``: a directory the flash drives start from, each in the state an earlier
    run with it left (a drive it has no state for starts as built), and where they leave
    their states when the run has drained: drives used by a series of runs one after another,
    as a benchmark's points are run on the same drives."""
    from . import _core

    callback = progress if progress is not None else _observer.get()
    tell = None
    failed: list[BaseException] = []  # what the callback raised, told apart from core errors
    guard = _MemoryGuard(spec.memory_guard) if spec.memory_guard is not None else None
    if callback is not None or guard is not None:
        number = next(_run_numbers)

        def tell(d: dict) -> None:
            try:
                if guard is not None:
                    guard.check()
                if callback is not None:
                    callback(Progress(run=number, **d))
            except BaseException as e:
                failed.append(e)
                raise

    def simulate(core_in: dict[str, Any]) -> dict[str, Any]:
        text = json.dumps(core_in)
        try:
            raw = _core.run_json(text, tell, None if state_cache is None else os.fspath(state_cache),
                                 None if carry_states is None else os.fspath(carry_states))
        except ValueError as e:
            if failed and e is failed[-1]:
                raise
            raise _core_error(str(e), spec, text) from None
        return json.loads(raw)

    if steadystate.enabled(spec):
        if carry_states is not None:
            raise ValueError("carry_states: not with fio's steady-state options (a rerun would start from "
                             "the state the first attempt left)")
        # jobs stop where fio's steady-state test is attained: reruns cut at that moment
        core, ran = steadystate.stop_at_attainment(spec, simulate)
        spec = spec.model_copy(update={"core": ran})
    else:
        core = simulate(spec.core)
    units = build_units(core, spec.group_reporting, spec.job_options)
    return RunResult(core=core, units=units, spec=spec)


class _MemoryGuard:
    """Stops a run (from its progress reports, every 100 ms of wall time) once the process's
    resident memory has grown by more than ``limit`` bytes since the run began."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.base = memory.resident_bytes()

    def check(self) -> None:
        now = memory.resident_bytes()
        if self.base is None or now is None or now - self.base <= self.limit:
            return
        raise memory.MemoryLimitError(
            f"the run passed its memory limit of {memory.gb(self.limit)} ({memory.gb(now - self.base)} more resident "
            f"than when it began) and was stopped: its write jobs wrote more than the flash maps can hold; simulate "
            f"a fraction of the flash with --scale, shorten the jobs (runtime=, size=), or raise the limit with "
            f"--memory-limit SIZE (or {memory.ENV_VAR}, or memory_limit=)")


_AT = re.compile(r"^(?P<message>.*) at line (?P<line>\d+) column (?P<column>\d+)$")


def _place_core_error(message: str, spec: RunSpec, text: str) -> str:
    """The core's message about its input, said where the user wrote the value: the core
    reads the JSON ``text`` and names a column in it; the key there is looked up in
    ``spec.places`` (a host profile's file and line), else named as the run's key."""
    m = _AT.match(message)
    if m is None or m["line"] != "1":
        return message
    path = _json_path_at(spec.core, text, int(m["column"]) - 1)
    if not path:
        return message
    what = m["message"].removeprefix("invalid simulation input: ")
    for n in range(len(path), 0, -1):
        place = spec.places.get(".".join(str(p) for p in path[:n]))
        if place is not None:
            where, key = place
            return f"{where}: key '{key}': {what}"
    key = ".".join(str(p) for p in path)
    return f"{key}: {what}"


def _json_path_at(value: Any, text: str, offset: int) -> tuple | None:
    """The deepest key path of ``value`` whose JSON (as ``json.dumps`` writes it, ``text``)
    covers character ``offset``; None if the text is not that serialisation."""
    spans: list[tuple[int, int, tuple]] = []

    def walk(v: Any, path: tuple, pos: int) -> int:
        if isinstance(v, dict):
            pos += 1
            for i, (k, item) in enumerate(v.items()):
                pos += (2 if i else 0) + len(json.dumps(k if isinstance(k, str) else str(k))) + 2
                end = walk(item, path + (k,), pos)
                spans.append((pos, end, path + (k,)))
                pos = end
            return pos + 1
        if isinstance(v, list):
            pos += 1
            for i, item in enumerate(v):
                pos += 2 if i else 0
                end = walk(item, path + (i,), pos)
                spans.append((pos, end, path + (i,)))
                pos = end
            return pos + 1
        return pos + len(json.dumps(v))

    if walk(value, (), 0) != len(text):
        return None
    inside = [p for start, end, p in spans if start <= offset <= end]
    return max(inside, key=len) if inside else None


def run(
    job: str | os.PathLike[str] | JobSet | None = None,
    *,
    profile: str | os.PathLike[str] = DEFAULT_PROFILE,
    system: str | os.PathLike[str] | System | None = None,
    host: str | os.PathLike[str] | None = None,
    seed: int = 0,
    overrides: Mapping[str, str] | None = None,
    env: Mapping[str, str] | None = None,
    interval: str | float | None = None,
    precondition: str | Mapping[str, Any] | None = None,
    scale: float | None = None,
    profile_set: Mapping[str, str] | None = None,
    scheduler: str | None = None,
    host_set: Mapping[str, str] | None = None,
    memory_limit: str | int | None = None,
    progress: ProgressCallback | None = None,
    state_cache: str | os.PathLike[str] | None = None,
    carry_states: str | os.PathLike[str] | None = None,
) -> RunResult:
    """Simulate ``job`` (a fio job file path, job text, or a parsed JobSet) on ``system`` (a
    system TOML file) or, without one, on ``profile`` alone.

    ``host`` defaults to the system's host, else the first drive's calibration host.
    ``interval`` (e.g. ``"1s"``) adds a time series. ``precondition`` puts the drives in a
    used state first, without simulating time: ``"sequential"`` or ``"random:2"``. ``scale``
    (0 < scale <= 1) simulates that fraction of each drive's flash — same dies, channels,
    timings and spare ratio, smaller blocks — so huge drives fit in memory; rates and WAF
    carry over, byte counts and fill times are those of the fraction. It defaults to each
    profile's ``simulation_scale``. ``profile_set`` overrides profile keys for this run, e.g.
    ``{"thermal.ambient_temperature": "40"}``. The system file's per-drive settings win over
    these. ``scheduler`` (e.g. ``"cfq"``) and ``host_set`` (e.g. ``{"iosched.slice_idle": "0"}``)
    set every drive's I/O scheduler and its tunables, as sysfs names them. ``memory_limit``
    (e.g. ``"16GiB"``, ``"90%"``, ``"none"``) replaces the default limit on the memory the
    run may need (see :func:`build`). ``progress`` is called with the run's :class:`Progress`
    and ``state_cache`` keeps preconditioned drives; ``carry_states`` carries the drives'
    states from run to run (see :func:`execute`).
    """
    return execute(build(job, profile=profile, system=system, host=host, seed=seed, overrides=overrides,
                         env=env, interval=interval, precondition=precondition, scale=scale,
                         profile_set=profile_set, scheduler=scheduler, host_set=host_set,
                         memory_limit=memory_limit), progress=progress, state_cache=state_cache,
                   carry_states=carry_states)
