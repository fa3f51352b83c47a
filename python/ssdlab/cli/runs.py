"""``ssdlab run``, ``replay``, ``measure``, ``compare`` and ``fit``: one run, simulated or
measured, its report, and a profile fitted to measured runs."""

from __future__ import annotations

import os
import sys
from enum import Enum
from pathlib import Path
from typing import Annotated, Callable, Optional

import typer

from .. import api
from ..cachedir import state_cache_dir
from ..fio import FioJobError
from ..fio.resolve import OVERRIDES
from ..jsonout import dumps
from ..system import raid as raid_system
from ..units import UnitError
from .common import (BAD_INPUT, MemoryLimit, OutputFormat, TextOrJson, check_output, check_scheduler, check_seed, deliver, fail,
                     interruptible, note, overrides, print_json, run_time_ns, simulating, warn)


@interruptible
def run(
    job: Annotated[Optional[list[str]], typer.Argument(help="fio job files, run one after the other as fio runs them; - reads one from standard input (default: the built-in quickstart job)")] = None,
    profile: Annotated[Optional[str], typer.Option(help=f"device profile name or TOML file (a one-drive system) \\[default: {api.DEFAULT_PROFILE}]", show_default=False)] = None,
    system: Annotated[Optional[Path], typer.Option(help="system TOML: a host and its drives (instead of --profile)")] = None,
    host: Annotated[Optional[str], typer.Option(help="host profile (default: the system's, else the first drive's calibration host)")] = None,
    seed: Annotated[int, typer.Option(help="random seed; same seed, same result")] = 0,
    output_format: Annotated[OutputFormat, typer.Option("--output-format", help="normal, json, json+ or terse")] = OutputFormat.normal,
    interval: Annotated[Optional[str], typer.Option(help="time-series interval, e.g. 1s or 500ms (the normal output then has an iostat -x table per interval)")] = None,
    precondition: Annotated[Optional[str], typer.Option(help="none | sequential | random[:PASSES]")] = None,
    set_: Annotated[list[str], typer.Option("--set", help="override a job option in every job, e.g. runtime=10")] = [],
    scale: Annotated[Optional[float], typer.Option(help="simulate this fraction of the flash (default: the profile's)")] = None,
    profile_set: Annotated[list[str], typer.Option("--profile-set", help="override a profile key, e.g. thermal.ambient_temperature=40")] = [],
    output: Annotated[Optional[Path], typer.Option(help="write the report to this file")] = None,
    raid: Annotated[Optional[int], typer.Option(help="RAID level (0, 1, 10, 5, 6): --drives of --profile in array md0")] = None,
    drives: Annotated[Optional[int], typer.Option(help="drives in the --raid array")] = None,
    chunk: Annotated[Optional[str], typer.Option(help="chunk size of the --raid array \\[default: 512k, mdadm's]",
                                                 show_default=False)] = None,
    engine: Annotated[str, typer.Option(help="RAID engine of the --raid array: md, streaming, hwraid (the built-in Adaptec 6805), or an engine TOML")] = "md",
    spares: Annotated[int, typer.Option(help="hot spares of the --raid array")] = 0,
    engine_set: Annotated[list[str], typer.Option("--engine-set", help="override an engine key, e.g. stripe_cache_size=4096")] = [],
    verify_data: Annotated[bool, typer.Option("--verify-data", help="the --raid array's members hold real bytes, parity is computed and every read is checked against what was written (md and streaming, up to 1 GiB of member bytes: give the drives a small capacity, e.g. --profile-set capacity=150000000)")] = False,
    scheduler: Annotated[Optional[str], typer.Option(help="every drive's I/O scheduler: none, mq-deadline, kyber, bfq, noop, deadline, anticipatory, cfq")] = None,
    host_set: Annotated[list[str], typer.Option("--host-set", help="a scheduler tunable or queue setting by its sysfs name, e.g. iosched.slice_idle=0, queue.nomerges=2; or a host profile key: mem=8GiB (its RAM), memory.cpus=4, memory.dirty_ratio=20")] = [],
    memory_limit: MemoryLimit = None,
    runtime: Annotated[Optional[str], typer.Option("--runtime", help="a file workload's run time, e.g. 30s, over its scenario's runtime or its filebench file's run (threads with a runtime of their own keep it); fio jobs take --set runtime=N")] = None,
    power_cut: Annotated[Optional[str], typer.Option("--power-cut", help="the power fails this long after the start, e.g. 2s: the run ends there and the report says what each device held only in volatile memory (acknowledged writes lost, and those a cache flush had covered)")] = None,
    fs: Annotated[Optional[str], typer.Option("--fs", help="a file system made on the first device, ext3 or ext4: fio jobs that name no /dev device run on their own files there (through the page cache unless direct=1); over a system file's filesystem it replaces the type and keeps the mkfs and mount options; a file workload's default is the system file's, else the scenario's, else ext3 on a 2008 host and ext4 on others")] = None,
    no_cache: Annotated[bool, typer.Option("--no-cache", help="precondition every drive again: neither read nor keep preconditioned states (random:N drives are kept in $XDG_CACHE_HOME/ssdlab/states, so the next run of the same drive, preconditioning and seed starts at once)")] = False,
) -> None:
    """Run a fio job file on a simulated device and report as fio and iostat would, or a file workload on a file system there.

    A file workload is a scenario (.toml) or a filebench workload (.f)."""
    states = None if no_cache else state_cache_dir()
    check_seed(seed)
    check_scheduler(scheduler, "--scheduler")
    work_path = _file_workload(job[0]) if job and len(job) == 1 else None
    if work_path is not None:
        if set_:
            fail(f"--set: a fio job option; {job[0]} is a file workload")
        if verify_data:
            fail(f"--verify-data: not for a file workload ({job[0]})")
        run_ns = run_time_ns(runtime) if runtime is not None else None
        profile = _one_of_profile_or_system(profile, system)

        def target() -> tuple[Optional[str], object]:
            """The drive or system the file system is made on (--raid builds an array)."""
            sets = overrides(profile_set, "--profile-set", "SECTION.KEY=VALUE")
            sysd = _raid_system(profile, raid, drives, chunk, engine, spares, engine_set, system, sets, scale,
                                precondition)
            return sets, (sysd if sysd is not None else system)

        return _run_files(work_path, fs, profile=profile, target=target, host=host, seed=seed,
                          output_format=output_format, interval=interval, precondition=precondition,
                          scheduler=scheduler, output=output, scale=scale, memory_limit=memory_limit,
                          host_set=overrides(host_set, "--host-set", "KEY=VALUE (iosched.slice_idle=0, mem=8GiB)"), power_cut=power_cut,
                          states=states, run_ns=run_ns)
    if fs is not None and fs not in ("ext3", "ext4"):
        fail(f"--fs {fs}: expected ext3 or ext4")
    if runtime is not None:
        fail(f"--runtime: a file workload's run time; a fio job takes --set runtime={runtime}")
    jobs = [j if j == "-" else Path(j) for j in job or []]
    if jobs.count("-") > 1:
        fail("-: standard input can hold only one job file")
    for j in jobs:
        if isinstance(j, Path) and j.is_dir():
            fail(f"{j}: is a directory, not a job file")
        if isinstance(j, Path) and not j.is_file():
            hint = (" (a KEY=VALUE? each --set, --profile-set, --engine-set or --host-set takes one; repeat it)"
                    if "=" in j.name else "")
            fail(f"{j}: no such job file{hint}")
    if output is not None:
        check_output(output, "--output")
    profile = _one_of_profile_or_system(profile, system)

    def spec() -> api.RunSpec:
        sets = overrides(profile_set, "--profile-set", "SECTION.KEY=VALUE")
        sysd = _raid_system(profile, raid, drives, chunk, engine, spares, engine_set, system, sets, scale,
                            precondition, verify_data)
        job_sets = overrides(set_)
        try:
            return api.build(jobs if len(jobs) > 1 else jobs[0] if jobs else api.quickstart_job(), profile=profile,
                             system=sysd if sysd is not None else system, host=host, seed=seed,
                             overrides=job_sets, interval=interval, precondition=precondition, scale=scale,
                             profile_set=sets, scheduler=scheduler,
                             host_set=overrides(host_set, "--host-set", "KEY=VALUE (iosched.slice_idle=0, mem=8GiB)"),
                             memory_limit=memory_limit, filesystem=fs, power_cut=power_cut)
        except FioJobError as e:
            if e.path != OVERRIDES:
                raise
            # the override's error, named as it was given: --set bs=abc
            given = f" {e.option}={job_sets[e.option]}" if e.option in job_sets else ""
            raise FioJobError(e.message, path=f"--set{given}") from None

    result = _simulate(spec, check=_check_logs, states=states)
    _write_logs(result)
    _emit(result, output_format, output)


def _file_workload(arg: str) -> Path | str | None:
    """The file workload ``arg`` names: a scenario (``.toml``; a shipped one by its name, e.g.
    ``seed000-webserver.toml``, where no such file is), a filebench file (``.f``), or a
    shipped filebench personality by name (``varmail``, or ``varmail.f`` where no such file
    is); None for a fio job file."""
    from ..filebench import PERSONALITIES
    from ..filework import bundled

    p = Path(arg)
    if p.suffix == ".f" and not p.exists() and p.parent == Path(".") and p.stem in PERSONALITIES:
        return p.stem
    if p.suffix == ".toml":
        return bundled(p)
    if p.suffix == ".f":
        return p
    if arg in PERSONALITIES and not p.exists():
        return arg
    return None


def _run_files(path: Path | str, fs: Optional[str], *, profile, target, host, seed, output_format, interval, precondition,
               scheduler, output, scale, memory_limit, host_set, power_cut=None, states=None, run_ns=None) -> None:
    """A file workload: its threads on a file system made on the first device (a drive, or
    the --raid array)."""
    from .. import filereport
    from ..filework import load as load_work

    if output_format not in (OutputFormat.normal, OutputFormat.json):
        fail(f"--output-format {output_format.value}: a file workload reports as normal or json")
    if isinstance(path, Path) and not path.is_file():
        fail(f"{path}: no such file workload")
    if fs is not None and fs not in ("ext3", "ext4"):
        fail(f"--fs {fs}: expected ext3 or ext4")
    if output is not None:
        check_output(output, "--output")
    work = None

    def spec() -> api.RunSpec:
        nonlocal work
        work = load_work(path)
        if run_ns is not None:
            work.run_ns = run_ns
        profile_set, system = target()
        # --fs replaces the scenario's type and keeps its other options; unsaid, the
        # scenario's, else the host's era's.
        filesystem = {**work.filesystem, "type": fs} if fs is not None and work.filesystem is not None else fs
        return api.build(None, profile=profile, system=system, host=host, seed=seed, interval=interval,
                         precondition=precondition, scale=scale, scheduler=scheduler, memory_limit=memory_limit,
                         profile_set=profile_set, host_set=host_set, files=work, filesystem=filesystem,
                         power_cut=power_cut)

    result = _simulate(spec, states=states)
    for w in result.warnings:
        warn(w)
    targets = [f"{t.name} ({t.profile})" for t in result.spec.targets]
    if output_format == OutputFormat.json:
        import json

        text = json.dumps(filereport.as_json(work, result.core, result.spec.host_name, targets,
                                             result.spec.filesystems), indent=2) + "\n"
    else:
        text = filereport.text(work, result.core, result.spec.host_name, targets, result.spec.filesystems)
    deliver(text, output)


def _one_of_profile_or_system(profile: Optional[str], system: Optional[Path]) -> str:
    """The drive profile: --profile and --system both say what the drives are, so only one
    may be given (a system file names each drive's profile)."""
    if profile is not None and system is not None:
        fail(f"--profile {profile} and --system {system}: give one; a system file names each drive's profile "
             "(--profile-set, --scale and --precondition apply to every drive of either)")
    return profile if profile is not None else api.DEFAULT_PROFILE


def _simulate(spec: Callable[[], api.RunSpec], check: Callable[[api.RunSpec], None] | None = None,
              states: Path | None = None):
    """The run ``spec()`` builds, simulated (its progress on a terminal); bad input (see
    :data:`.common.BAD_INPUT`), while building or simulating, is one line. ``check`` sees
    the spec before the simulation (what the command will write, say); ``states`` keeps
    preconditioned drives (see :func:`ssdlab.api.execute`)."""
    try:
        built = spec()
        if check is not None:
            check(built)
        with simulating() as display:
            if display is not None:  # only on a terminal: never in what fio's formats print
                display.announce(built, cached=states is not None)
            return api.execute(built, state_cache=states)
    except BAD_INPUT as e:
        fail(str(e).splitlines()[0])


def _check_logs(spec: api.RunSpec) -> None:
    """Fail now, not after the simulation, if a log file the jobs ask for cannot be written
    (its directory is missing, say: fio does not make it either)."""
    from ..fioout.logs import log_names

    for name, option in log_names(spec).items():
        check_output(Path(name), f"{option}: log file")


def _write_logs(result) -> None:
    """The log files the jobs ask for (write_bw_log, write_iops_log, write_lat_log), in the
    working directory as fio writes them."""
    try:
        result.write_fio_logs()
    except OSError as e:
        fail(f"cannot write a log file: {e.strerror or e} ({e.filename})")


def _emit(result, output_format: OutputFormat, output: Optional[Path]) -> None:
    """The report as fio prints it (or its JSON), to stdout or ``output``; warnings to stderr."""
    from ..fioout import format_report

    text = format_report(result, output_format.value)
    for n in result.spec.notes:
        note(n)
    for f in result.spec.filesystems:
        note(f"file system on {f}")
    for j in result.core["jobs"]:
        if j.get("error"):
            # fio says the same of a job whose call failed (td_verror), on stderr.
            note(f"job '{j['name']}' (clone {j['clone']}) stopped: err={j['error']} "
                 f"({os.strerror(j['error'])}), as fio stops a job whose call fails")
    if output_format in (OutputFormat.normal, OutputFormat.terse):  # the JSON holds them ("warnings")
        for w in result.warnings:
            warn(w)
    interval_ns = getattr(result.spec, "interval_ns", None)
    if output_format == OutputFormat.terse and interval_ns:
        from ..units import format_time

        warn(f"--interval {format_time(interval_ns)}: ignored with --output-format terse, which has no time series"
             " (normal has an iostat -x table per interval, json the series)")
    deliver(text, output)
    if any(j.get("error") for j in result.core["jobs"]):
        # fio's exit status counts the jobs that ended on an error (backend.c's exit_value):
        # 1 after the report, as real fio 3.33 exits for a failed call.
        raise typer.Exit(1)


def _raid_system(profile, level, drives, chunk, engine, spares, engine_set, system, profile_set, scale,
                 precondition, verify_data=False):
    """The system ``--raid`` describes, or None without it."""
    if level is None:
        if verify_data and system is not None:
            raise ValueError("--verify-data: with --system, set verify_data = true in the file's [[array]]")
        if drives is not None or spares or engine_set or chunk is not None or engine != "md" or verify_data:
            raise ValueError("--drives, --chunk, --engine, --spares, --engine-set and --verify-data describe a "
                             "--raid array; add --raid LEVEL")
        return None
    if system is not None:
        raise ValueError("--raid builds the system from --profile; with --system, describe the array in the file")
    if drives is None:
        raise ValueError("--raid needs --drives N")
    return raid_system(profile, level, drives, chunk=chunk, engine=engine, spares=spares, profile_set=profile_set,
                       scale=scale, precondition=precondition,
                       engine_set=overrides(engine_set, "--engine-set", "KEY=VALUE"), verify_data=verify_data)


@interruptible
def measure(
    job: Annotated[Path, typer.Argument(help="fio job file to run with the real fio")],
    target: Annotated[Path, typer.Option(help="file or block device every job's I/O goes to (its filename)")],
    output_format: Annotated[OutputFormat, typer.Option("--output-format", help="normal, json or json+")] = OutputFormat.normal,
    interval: Annotated[Optional[str], typer.Option(help="also sample /proc/diskstats every INTERVAL, e.g. 1s (iostat -x per interval)")] = None,
    output: Annotated[Optional[Path], typer.Option(help="write the report to this file")] = None,
) -> None:
    """Run a fio job file with the real fio on a file or block device.

    /proc/diskstats of the device behind it is sampled alongside; the report has the shape
    `ssdlab run` gives (same JSON)."""
    from ..analysis.measure import MeasureError
    from ..analysis.measure import measure as run_measure

    if output_format == OutputFormat.terse:
        fail("--output-format terse: measure reports normal, json or json+")
    if output is not None:
        check_output(output, "--output")
    try:
        result = run_measure(job, target, interval=interval)
    except (MeasureError, UnitError, ValueError, OSError) as e:
        fail(str(e).splitlines()[0] if str(e) else type(e).__name__)
        return
    if output_format in (OutputFormat.json, OutputFormat.json_plus):
        text = dumps(result.to_fio_json(plus=output_format == OutputFormat.json_plus), indent=2) + "\n"
    else:
        text = result.format_normal()
    for w in result.warnings:
        warn(w)
    deliver(text, output)


def compare(
    a: Annotated[Path, typer.Argument(help="a run's JSON (ssdlab run/measure --output-format json, or fio's)")],
    b: Annotated[Path, typer.Argument(help="the reference run's JSON (put the measurement here)")],
    output_format: Annotated[TextOrJson, typer.Option("--output-format", help="text or json")] = TextOrJson.text,
) -> None:
    """Two runs side by side, with the error of each figure.

    Each job's and direction's IOPS, bandwidth and latencies, and each device's iostat and
    disk_util, with A's relative error against B."""
    from ..analysis.compare import CompareError, compare as run_compare, load_run

    try:
        result = run_compare(load_run(a), load_run(b), str(a), str(b))
    except CompareError as e:
        fail(str(e))
        return
    if output_format == TextOrJson.json:
        print_json(result.to_dict())
    else:
        sys.stdout.write(result.format_text())


@interruptible
def fit(
    runs: Annotated[list[Path], typer.Argument(help="measured runs: fio JSON files (ssdlab measure --output-format json, or fio's)")],
    profile: Annotated[str, typer.Option(help="device profile whose parameters are fitted")] = api.DEFAULT_PROFILE,
    params: Annotated[Optional[str], typer.Option(help="comma-separated parameters: controller.read_busy, controller.write_busy, controller.busy_cv, host.io_overhead, host.io_overhead_cv, write_buffer, slc_cache.static (default: the controller times the runs exercise, busy_cv, host.io_overhead)")] = None,
    host: Annotated[Optional[str], typer.Option(help="host profile (default: the drive's calibration host)")] = None,
    seed: Annotated[int, typer.Option(help="random seed of every trial simulation")] = 0,
    scale: Annotated[Optional[float], typer.Option(help="simulate this fraction of the flash (quicker trials; rates carry over)")] = None,
    max_evals: Annotated[Optional[int], typer.Option(help="at most this many trial simulations of each run (default 40 per parameter + 20)")] = None,
    output_format: Annotated[TextOrJson, typer.Option("--output-format", help="text or json")] = TextOrJson.text,
) -> None:
    """Fit a profile's free parameters to measured runs.

    Prints the fitted values and each run's residual."""
    from ..analysis.fit import FitError, fit as run_fit

    check_seed(seed)
    if max_evals is not None and max_evals < 1:
        fail(f"--max-evals {max_evals}: expected at least 1")
    names = [p.strip() for p in params.split(",") if p.strip()] if params is not None else None
    try:
        with simulating():
            result = run_fit(profile, runs, params=names, host=host, seed=seed, max_evals=max_evals, scale=scale)
    except (FitError, *BAD_INPUT) as e:
        fail(str(e).splitlines()[0])
        return
    if output_format == TextOrJson.json:
        print_json(result.to_dict())
    else:
        sys.stdout.write(result.format_text())


class TraceFormatName(str, Enum):
    fio = "fio"
    disksim = "disksim"
    msr = "msr"
    snia = "snia"
    blkparse = "blkparse"


@interruptible
def replay(
    trace: Annotated[Path, typer.Argument(help="block trace to replay")],
    format: Annotated[TraceFormatName, typer.Option("--format", help="the trace's format")],
    timing: Annotated[str, typer.Option(help="recorded | scaled:X (X times as fast) | closed:QD (QD outstanding, times ignored)")] = "recorded",
    profile: Annotated[Optional[str], typer.Option(help=f"device profile name or TOML file (a one-drive system) \\[default: {api.DEFAULT_PROFILE}]", show_default=False)] = None,
    system: Annotated[Optional[Path], typer.Option(help="system TOML (instead of --profile)")] = None,
    host: Annotated[Optional[str], typer.Option(help="host profile")] = None,
    seed: Annotated[int, typer.Option(help="random seed; same seed, same result")] = 0,
    output_format: Annotated[OutputFormat, typer.Option("--output-format", help="normal, json, json+ or terse")] = OutputFormat.normal,
    map_: Annotated[list[str], typer.Option("--map", help="trace device id to a target, e.g. 0=sda (one job each; unmapped ids are skipped)")] = [],
    wrap: Annotated[bool, typer.Option(help="fold records past a device's end onto it (offset modulo its size)")] = False,
    disksim_unit: Annotated[str, typer.Option(help="DiskSim arrival-time unit: ns (MQSim's traces) or ms (classic DiskSim)")] = "ns",
    iodepth: Annotated[Optional[int], typer.Option(help="most records outstanding (default: 4096 for recorded/scaled timing, an open loop)")] = None,
    precondition: Annotated[Optional[str], typer.Option(help="none | sequential | random[:PASSES]")] = None,
    scheduler: Annotated[Optional[str], typer.Option(help="every drive's I/O scheduler")] = None,
    host_set: Annotated[list[str], typer.Option("--host-set", help="a scheduler tunable or queue setting, e.g. iosched.slice_idle=0; or a host profile key, e.g. mem=8GiB")] = [],
    interval: Annotated[Optional[str], typer.Option(help="time-series interval, e.g. 1s")] = None,
    memory_limit: MemoryLimit = None,
    no_cache: Annotated[bool, typer.Option("--no-cache", help="precondition every drive again: neither read nor keep preconditioned states (see run --help)")] = False,
) -> None:
    """Replay a block trace on a simulated system and report as `run` does.

    One job per trace, or per trace device with --map."""
    check_seed(seed)
    check_scheduler(scheduler, "--scheduler")
    from ..workload import Replay, ReplayTiming

    profile = _one_of_profile_or_system(profile, system)
    if trace.is_dir():
        fail(f"{trace}: is a directory, not a trace file")
    if not trace.is_file():
        fail(f"{trace}: no such trace file")
    kind, _, arg = timing.partition(":")
    try:
        if kind == "closed":
            qd = int(arg) if arg else (iodepth or 1)
            if qd < 1:
                raise ValueError
            t = ReplayTiming(kind="closed")
        else:
            t = ReplayTiming.parse(timing)
            qd = iodepth or 4096
    except ValueError:
        fail(f"--timing {timing!r}: expected recorded, scaled:X (X a positive, finite factor) or closed:QD")
        return
    if iodepth is not None and iodepth < 1:
        fail(f"--iodepth {iodepth}: expected at least 1 record outstanding")
    if disksim_unit not in ("ns", "ms"):
        fail(f"--disksim-unit {disksim_unit!r}: expected ns or ms")
    pairs: list[tuple[int | None, str | None]] = []
    for m in map_:
        dev, eq, name = m.partition("=")
        if not eq or not dev.strip().isdigit() or not name.strip():
            fail(f"--map {m!r}: expected DEVICE_ID=TARGET, e.g. 0=sda")
        pairs.append((int(dev), name.strip().removeprefix("/dev/")))
    if not pairs:
        pairs = [(None, None)]
    jobs = [(Replay(path=str(trace), format=format.value, timing=t, device=dev, wrap=wrap,
                    disksim_time_unit=disksim_unit), name, qd) for dev, name in pairs]
    result = _simulate(lambda: api.build(None, profile=profile, system=system, host=host, seed=seed,
                                         interval=interval, precondition=precondition, scheduler=scheduler,
                                         host_set=overrides(host_set, "--host-set", "KEY=VALUE (iosched.slice_idle=0, mem=8GiB)"),
                                         replay=jobs, memory_limit=memory_limit),
                       states=None if no_cache else state_cache_dir())
    _emit(result, output_format, None)
