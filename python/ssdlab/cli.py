"""The ``ssdlab`` command line."""

from __future__ import annotations

import functools
import os
import sys
from enum import Enum
from pathlib import Path
from typing import Annotated, Optional

import typer
from rich.console import Console
from rich.table import Table

from . import api, jsonout
from .arguments import SEED_MAX
from .config import (ProfileError, engine_names, host_names, load_engine, load_host, load_profile,
                     profile_names)
from .config.profile import builtin_text
from .fio import FioJobError
from .system import SystemFileError
from .system import raid as raid_system
from .units import UnitError
from .analysis.waf_projection import DEFAULT_BLOCKS_PER_PLANE

app = typer.Typer(add_completion=False, pretty_exceptions_enable=False, no_args_is_help=False,
                  help="Simulate SSDs, hard disks and arrays behind a Linux block layer, driven by fio job files or block traces.")
profiles_app = typer.Typer(help="Built-in device profiles.", invoke_without_command=True)
app.add_typer(profiles_app, name="profiles")

def _console(**kw) -> Console:
    """A console that prints text as given: no markup, no emoji codes (``:100:`` stays
    ``:100:``), no highlighting. Messages carry paths, option values and profile names the
    user wrote; none of it is rich markup."""
    return Console(markup=False, emoji=False, highlight=False, **kw)


_err = _console(stderr=True, soft_wrap=True)


def _show_version(value: bool) -> None:
    if value:
        from . import __version__

        sys.stdout.write(f"ssdlab {__version__}\n")
        raise typer.Exit()


@app.callback()
def _main(
    version: Annotated[bool, typer.Option("--version", callback=_show_version, is_eager=True,
                                          help="print the version and exit")] = False,
) -> None:
    pass


class OutputFormat(str, Enum):
    normal = "normal"
    json = "json"
    json_plus = "json+"
    terse = "terse"


def _fail(message: str) -> None:
    """Bad input: one line on stderr, exit status 2, no traceback."""
    _err.print(f"ssdlab: error: {message}", markup=False)
    raise typer.Exit(2)


def _interruptible(command):
    """A command that may simulate for long: Ctrl-C ends it with one line on stderr and
    exit status 130 (the shell's for SIGINT), no traceback, no partial output file."""

    @functools.wraps(command)
    def wrapper(*args, **kwargs):
        try:
            return command(*args, **kwargs)
        except KeyboardInterrupt:
            _err.print("ssdlab: interrupted", markup=False)
            raise typer.Exit(130) from None

    return wrapper


def _simulating():
    """Around a simulation: its progress on the terminal (only when stdout and stderr are
    terminals; see ``ssdlab.progress``)."""
    from .progress import terminal_progress

    return terminal_progress()


def _check_seed(seed: int) -> None:
    if not 0 <= seed <= SEED_MAX:
        _fail(f"--seed {seed}: expected a whole number from 0 to {SEED_MAX}")


def _overrides(pairs: list[str], flag: str = "--set", form: str = "OPTION=VALUE") -> dict[str, str]:
    out = {}
    for p in pairs:
        key, eq, value = p.partition("=")
        if not eq or not key.strip():
            _fail(f"{flag} {p!r}: expected {form}")
        out[key.strip()] = value.strip()
    return out


@app.command()
@_interruptible
def run(
    job: Annotated[Optional[list[str]], typer.Argument(help="fio job files, run one after the other as fio runs them; - reads one from standard input (default: the built-in quickstart job)")] = None,
    profile: Annotated[str, typer.Option(help="device profile name or TOML file (a one-drive system)")] = api.DEFAULT_PROFILE,
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
    chunk: Annotated[Optional[str], typer.Option(help="chunk size of the --raid array [default: 512k, mdadm's]",
                                                 show_default=False)] = None,
    engine: Annotated[str, typer.Option(help="RAID engine of the --raid array: md, streaming, hwraid (the built-in Adaptec 6805), or an engine TOML")] = "md",
    spares: Annotated[int, typer.Option(help="hot spares of the --raid array")] = 0,
    engine_set: Annotated[list[str], typer.Option("--engine-set", help="override an engine key, e.g. stripe_cache_size=4096")] = [],
    verify_data: Annotated[bool, typer.Option("--verify-data", help="the --raid array's members hold real bytes, parity is computed and every read is checked against what was written (md and streaming, up to 1 GiB of member bytes: give the drives a small capacity, e.g. --profile-set capacity=150000000)")] = False,
    scheduler: Annotated[Optional[str], typer.Option(help="every drive's I/O scheduler: none, mq-deadline, kyber, bfq, noop, deadline, anticipatory, cfq")] = None,
    host_set: Annotated[list[str], typer.Option("--host-set", help="a scheduler tunable or queue setting by its sysfs name, e.g. iosched.slice_idle=0, queue.nomerges=2")] = [],
    memory_limit: Annotated[Optional[str], typer.Option(help="refuse a run that would need more memory than this: a size (16GiB), a share of the available memory (90%) or none (default: $SSDLAB_MEMORY_LIMIT, else 75% of MemAvailable)")] = None,
) -> None:
    """Run a fio job file on a simulated device and report as fio and iostat would."""
    _check_seed(seed)
    jobs = [j if j == "-" else Path(j) for j in job or []]
    if jobs.count("-") > 1:
        _fail("-: standard input can hold only one job file")
    for j in jobs:
        if isinstance(j, Path) and j.is_dir():
            _fail(f"{j}: is a directory, not a job file")
        if isinstance(j, Path) and not j.is_file():
            hint = (" (a KEY=VALUE? each --set, --profile-set, --engine-set or --host-set takes one; repeat it)"
                    if "=" in j.name else "")
            _fail(f"{j}: no such job file{hint}")
    if output is not None:
        _check_output(output, "--output")
    try:
        sets = _overrides(profile_set, "--profile-set", "SECTION.KEY=VALUE")
        sysd = _raid_system(profile, raid, drives, chunk, engine, spares, engine_set, system, sets, scale,
                            precondition, verify_data)
        spec = api.build(jobs if len(jobs) > 1 else jobs[0] if jobs else api.quickstart_job(), profile=profile,
                         system=sysd if sysd is not None else system, host=host, seed=seed,
                         overrides=_overrides(set_), interval=interval, precondition=precondition, scale=scale,
                         profile_set=sets, scheduler=scheduler,
                         host_set=_overrides(host_set, "--host-set", "iosched.TUNABLE=VALUE"),
                         memory_limit=memory_limit)
        with _simulating():
            result = api.execute(spec)
    except (FioJobError, ProfileError, SystemFileError, UnitError, api.SimulationError, ValueError) as e:
        _fail(str(e).splitlines()[0])
        return
    _emit(result, output_format, output)
    _write_logs(result)


def _write_logs(result) -> None:
    """The log files the jobs ask for (write_bw_log, write_iops_log, write_lat_log), in the
    working directory as fio writes them."""
    try:
        result.write_fio_logs()
    except OSError as e:
        _fail(f"cannot write a log file: {e.strerror or e} ({e.filename})")


def _check_output(path: Path, option: str) -> None:
    """Fail now, not after the simulation, if the report cannot be written to ``path``."""
    parent = path.parent if str(path.parent) else Path(".")
    if path.is_dir():
        _fail(f"{option} {path}: is a directory; give a file name")
    if not parent.is_dir():
        why = "not a directory" if parent.exists() else "no such directory"
        _fail(f"{option} {path}: {why} ({parent})")
    if path.exists() and not os.access(path, os.W_OK) or not path.exists() and not os.access(parent, os.W_OK | os.X_OK):
        _fail(f"{option} {path}: permission denied")


def _emit(result, output_format: "OutputFormat", output: Optional[Path]) -> None:
    """The report as fio prints it (or its JSON), to stdout or ``output``; warnings to stderr."""
    from .fioout import format_report

    text = format_report(result, output_format.value)
    if output_format == OutputFormat.normal:
        for w in result.warnings:
            _err.print(f"ssdlab: warning: {w}", markup=False)
    _deliver(text, output)


def _deliver(text: str, output: Optional[Path]) -> None:
    """The report to ``--output`` (whole or not at all) or to standard output."""
    if output:
        try:
            _write_whole(output, text)
        except OSError as e:
            _fail(f"--output {output}: {e.strerror or e}")
    else:
        sys.stdout.write(text)


def _write_whole(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` so that the file is either as it was or complete: into a
    temporary file beside it, renamed over it once written. (A directory that takes no new
    file but holds a writable ``path`` is written directly.)"""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    except OSError:
        path.write_text(text)
        return
    try:
        with os.fdopen(fd, "w") as f:
            f.write(text)
        if path.exists():
            os.chmod(tmp, path.stat().st_mode & 0o7777)
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


@app.command()
@_interruptible
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
    from .analysis.measure import MeasureError
    from .analysis.measure import measure as run_measure

    if output_format == OutputFormat.terse:
        _fail("--output-format terse: measure reports normal, json or json+")
    if output is not None:
        _check_output(output, "--output")
    try:
        result = run_measure(job, target, interval=interval)
    except (MeasureError, UnitError, ValueError, OSError) as e:
        _fail(str(e).splitlines()[0] if str(e) else type(e).__name__)
        return
    if output_format in (OutputFormat.json, OutputFormat.json_plus):
        text = jsonout.dumps(result.to_fio_json(plus=output_format == OutputFormat.json_plus), indent=2) + "\n"
    else:
        text = result.format_normal()
    for w in result.warnings:
        _err.print(f"ssdlab: warning: {w}", markup=False)
    _deliver(text, output)


class CompareFormat(str, Enum):
    text = "text"
    json = "json"


@app.command()
def compare(
    a: Annotated[Path, typer.Argument(help="a run's JSON (ssdlab run/measure --output-format json, or fio's)")],
    b: Annotated[Path, typer.Argument(help="the reference run's JSON (put the measurement here)")],
    output_format: Annotated[CompareFormat, typer.Option("--output-format", help="text or json")] = CompareFormat.text,
) -> None:
    """Two runs side by side, with the error of each figure.

    Each job's and direction's IOPS, bandwidth and latencies, and each device's iostat and
    disk_util, with A's relative error against B."""
    from .analysis.compare import CompareError, compare as run_compare, load_run

    try:
        result = run_compare(load_run(a), load_run(b), str(a), str(b))
    except CompareError as e:
        _fail(str(e))
        return
    if output_format == CompareFormat.json:
        sys.stdout.write(jsonout.dumps(result.to_dict(), indent=2) + "\n")
    else:
        sys.stdout.write(result.format_text())


@app.command()
@_interruptible
def fit(
    runs: Annotated[list[Path], typer.Argument(help="measured runs: fio JSON files (ssdlab measure --output-format json, or fio's)")],
    profile: Annotated[str, typer.Option(help="device profile whose parameters are fitted")] = api.DEFAULT_PROFILE,
    params: Annotated[Optional[str], typer.Option(help="comma-separated parameters: controller.read_busy, controller.write_busy, controller.busy_cv, host.io_overhead, host.io_overhead_cv, write_buffer, slc_cache.static (default: the controller times the runs exercise, busy_cv, host.io_overhead)")] = None,
    host: Annotated[Optional[str], typer.Option(help="host profile (default: the drive's calibration host)")] = None,
    seed: Annotated[int, typer.Option(help="random seed of every trial simulation")] = 0,
    scale: Annotated[Optional[float], typer.Option(help="simulate this fraction of the flash (quicker trials; rates carry over)")] = None,
    max_evals: Annotated[Optional[int], typer.Option(help="at most this many trial simulations of each run (default 40 per parameter + 20)")] = None,
    output_format: Annotated[CompareFormat, typer.Option("--output-format", help="text or json")] = CompareFormat.text,
) -> None:
    """Fit a profile's free parameters to measured runs.

    Prints the fitted values and each run's residual."""
    from .analysis.fit import FitError, fit as run_fit

    _check_seed(seed)
    if max_evals is not None and max_evals < 1:
        _fail(f"--max-evals {max_evals}: expected at least 1")
    names = [p.strip() for p in params.split(",") if p.strip()] if params is not None else None
    try:
        with _simulating():
            result = run_fit(profile, runs, params=names, host=host, seed=seed, max_evals=max_evals, scale=scale)
    except (FitError, ProfileError, FioJobError, UnitError, api.SimulationError, ValueError) as e:
        _fail(str(e).splitlines()[0])
        return
    if output_format == CompareFormat.json:
        sys.stdout.write(jsonout.dumps(result.to_dict(), indent=2) + "\n")
    else:
        sys.stdout.write(result.format_text())


class TraceFormatName(str, Enum):
    fio = "fio"
    disksim = "disksim"
    msr = "msr"
    snia = "snia"
    blkparse = "blkparse"


@app.command()
@_interruptible
def replay(
    trace: Annotated[Path, typer.Argument(help="block trace to replay")],
    format: Annotated[TraceFormatName, typer.Option("--format", help="the trace's format")],
    timing: Annotated[str, typer.Option(help="recorded | scaled:X (X times as fast) | closed:QD (QD outstanding, times ignored)")] = "recorded",
    profile: Annotated[str, typer.Option(help="device profile name or TOML file (a one-drive system)")] = api.DEFAULT_PROFILE,
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
    host_set: Annotated[list[str], typer.Option("--host-set", help="a scheduler tunable or queue setting, e.g. iosched.slice_idle=0")] = [],
    interval: Annotated[Optional[str], typer.Option(help="time-series interval, e.g. 1s")] = None,
    memory_limit: Annotated[Optional[str], typer.Option(help="refuse a run that would need more memory than this: a size (16GiB), a share of the available memory (90%) or none (default: $SSDLAB_MEMORY_LIMIT, else 75% of MemAvailable)")] = None,
) -> None:
    """Replay a block trace on a simulated system and report as `run` does.

    One job per trace, or per trace device with --map."""
    _check_seed(seed)
    from .workload import Replay, ReplayTiming

    if trace.is_dir():
        _fail(f"{trace}: is a directory, not a trace file")
    if not trace.is_file():
        _fail(f"{trace}: no such trace file")
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
        _fail(f"--timing {timing!r}: expected recorded, scaled:X or closed:QD")
        return
    if disksim_unit not in ("ns", "ms"):
        _fail(f"--disksim-unit {disksim_unit!r}: expected ns or ms")
    pairs: list[tuple[int | None, str | None]] = []
    for m in map_:
        dev, eq, name = m.partition("=")
        if not eq or not dev.strip().isdigit() or not name.strip():
            _fail(f"--map {m!r}: expected DEVICE_ID=TARGET, e.g. 0=sda")
        pairs.append((int(dev), name.strip().removeprefix("/dev/")))
    if not pairs:
        pairs = [(None, None)]
    jobs = [(Replay(path=str(trace), format=format.value, timing=t, device=dev, wrap=wrap,
                    disksim_time_unit=disksim_unit), name, qd) for dev, name in pairs]
    try:
        spec = api.build(None, profile=profile, system=system, host=host, seed=seed, interval=interval,
                         precondition=precondition, scheduler=scheduler,
                         host_set=_overrides(host_set, "--host-set", "iosched.TUNABLE=VALUE"), replay=jobs,
                         memory_limit=memory_limit)
        with _simulating():
            result = api.execute(spec)
    except (FioJobError, ProfileError, SystemFileError, UnitError, api.SimulationError, ValueError) as e:
        _fail(str(e).splitlines()[0])
        return
    _emit(result, output_format, None)


@app.command()
def sweep(
    grid: Annotated[Path, typer.Argument(help="grid TOML: a job file, fixed settings, a grid table of lists (cartesian) and zip tables (lists that advance together)")],
    workers: Annotated[Optional[int], typer.Option(help="local worker processes (default: one per CPU)")] = None,
    scheduler: Annotated[Optional[str], typer.Option(help="run on a Dask cluster: its scheduler's address, e.g. tcp://HOST:8786")] = None,
    out: Annotated[Optional[Path], typer.Option(help="Parquet file of the results (default: the grid file's name with .parquet)")] = None,
    retry_failed: Annotated[bool, typer.Option("--retry-failed", help="run again the runs that failed in an earlier sweep")] = False,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="list the runs (and which the journal has) without running them")] = False,
) -> None:
    """Run a grid of runs in parallel, one Parquet row per run and job direction.

    Finished runs are kept in OUT.runs.jsonl: running the same sweep again runs only what is
    missing (docs/sweeps.md)."""
    import signal

    from .sweep.grid import GridError, load_grid
    from .sweep.runner import SweepError, SweepInterrupted, default_out, journal_path, prestart, run_sweep

    if not dry_run:
        prestart(workers, scheduler)  # the workers' server loads ssdlab while the grid is checked
    try:
        g = load_grid(grid)
    except GridError as e:
        _fail(str(e))
        return
    target = out if out is not None else default_out(g)
    if dry_run:
        _sweep_plan(g, journal_path(target))
        return

    def _term(signum, frame):  # a batch system's time limit: stop as Ctrl-C does
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, _term)
    try:
        summary = run_sweep(g, target, workers=workers, scheduler=scheduler, retry_failed=retry_failed)
    except SweepInterrupted as e:
        _err.print(f"ssdlab sweep: {e}", markup=False)
        raise typer.Exit(130)
    except (SweepError, GridError) as e:
        _fail(str(e))
        return
    sys.stdout.write(f"ssdlab sweep: {summary.line()}\n")


def _sweep_plan(g, journal: Path) -> None:
    """The runs of a grid as a table, with what the journal already has."""
    import json

    done: dict = {}
    if journal.is_file():
        for line in journal.read_text().splitlines():
            try:
                rec = json.loads(line)
                done[rec["key"]] = rec
            except (ValueError, KeyError, TypeError):
                continue
    keys = [k for k in g.keys if any(a for a in g.axes if k in a.keys)] or g.keys
    table = Table("run", *keys, "status", box=None)
    for r in g.runs:
        rec = done.get(r.key)
        status = "to run" if rec is None else ("failed" if rec.get("error") else "done")
        table.add_row(str(r.index), *(str(r.params[k]) for k in keys), status)
    _console().print(table)
    n_done = sum(r.key in done for r in g.runs)
    sys.stdout.write(f"{len(g.runs)} runs, {n_done} in {journal}\n")


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
                       engine_set=_overrides(engine_set, "--engine-set", "KEY=VALUE"), verify_data=verify_data)


@profiles_app.callback()
def profiles(ctx: typer.Context) -> None:
    """List the built-in profiles: drives (--profile), hosts (--host) and RAID engines (--engine)."""
    if ctx.invoked_subcommand is not None:
        return
    table = Table("name", "kind", "description", "capacity", box=None)
    for name in profile_names():
        p, _ = load_profile(name)
        table.add_row(name, p.kind, p.description, f"{p.capacity / 1e9:.0f} GB")
    for name in host_names():
        h, _ = load_host(name)
        table.add_row(name, "host", h.description, "-")
    for name in engine_names():
        e, _ = load_engine(name)
        table.add_row(name, "engine", f"{e.description} ({e.kind})", "-")
    _console().print(table)


@profiles_app.command("show")
def profiles_show(name: Annotated[str, typer.Argument(help="profile name (a drive, host or engine)")]) -> None:
    """Print a profile as TOML, with the source of every value."""
    try:
        sys.stdout.write(builtin_text(name))
    except ProfileError as e:
        _fail(str(e))


# ==== sizing: `ssdlab size` and `ssdlab endurance` (seed 002) ================================
# The arithmetic is in ssdlab.analysis.sizing, the sustained-write simulation in ssdlab.analysis.sustained.

_SIM_HELP = "simulation of the drive's sustained write"

# Options shared by `size` and `endurance`: the drive's rating and the sustained-write run.
_Dwpd = Annotated[Optional[float], typer.Option(help="rated drive writes per day")]
_WarrantyYears = Annotated[Optional[float], typer.Option(help="warranty in years (with --dwpd)")]
_PeCycles = Annotated[Optional[int], typer.Option(help="rated P/E cycles of the flash")]
_Passes = Annotated[float, typer.Option(help=f"{_SIM_HELP}: drive writes (fill + overwrite = 2)")]
_BlockSize = Annotated[str, typer.Option(help=f"{_SIM_HELP}: write size")]
_IoDepth = Annotated[int, typer.Option(help=f"{_SIM_HELP}: writes in flight")]
_SimSize = Annotated[Optional[str], typer.Option(help=f"{_SIM_HELP}: only this much of the drive (quicker, less faithful)")]
_Seed = Annotated[int, typer.Option(help="random seed of the simulation")]
_NoCache = Annotated[bool, typer.Option("--no-cache", help="simulate even if a cached result exists")]
_Json = Annotated[bool, typer.Option("--json", help="print JSON")]


def _sz_drive(profile: Optional[str], capacity: Optional[str], tbw: Optional[str], dwpd: Optional[float],
              warranty_years: Optional[float], pe_cycles: Optional[int], need: str) -> dict:
    """The drive: a profile, or a bare capacity and rating given on the command line (these
    options also override the profile's own)."""
    from .units import parse_size

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
            _fail(f"give --profile NAME, or --capacity SIZE {need}")
        if capacity is not None:
            d.update(capacity=parse_size(capacity), flash_bytes=None)
            if profile is None:
                d["name"] = f"{d['capacity'] / 1e12:g} TB drive"
        if tbw is not None:
            d["tbw"] = parse_size(tbw)
    except (ProfileError, UnitError) as e:
        _fail(str(e).splitlines()[0])
    for key, value in (("dwpd", dwpd), ("warranty_years", warranty_years), ("pe_cycles", pe_cycles)):
        if value is not None:
            if value <= 0:
                _fail(f"--{key.replace('_', '-')} {value}: expected a positive number")
            d[key] = value
    if not d["capacity"]:
        _fail("--capacity must be positive")
    return d


def _sz_sustained(profile: str, no_cache: bool, passes: float, block_size: str, iodepth: int,
                  sim_size: Optional[str], seed: int) -> dict:
    from .analysis.sustained import sustained_summary

    try:
        announce = (lambda m: _err.print(f"ssdlab: {m}", markup=False)) if sys.stderr.isatty() else None
        with _simulating():
            return sustained_summary(profile, use_cache=not no_cache, announce=announce, block_size=block_size,
                                     iodepth=iodepth, passes=passes, seed=seed, size=sim_size)
    except (ProfileError, UnitError, api.SimulationError, FioJobError, ValueError) as e:
        _fail(str(e).splitlines()[0])
        raise  # unreachable


def _sz_rate(value: str, option: str) -> float:
    from .units import parse_rate

    try:
        rate = parse_rate(value)
    except UnitError as e:
        _fail(f"{option}: {e}")
    if not rate > 0:
        _fail(f"{option} {value}: expected a positive rate")
    return rate


def _sz_fraction(value: float, option: str, upper_open: bool) -> None:
    if not (0 <= value < 1 if upper_open else 0 < value <= 1):
        _fail(f"{option} {value}: expected a fraction in {'[0, 1)' if upper_open else '(0, 1]'}")


def _sz_endurance(d: dict, waf: float):
    from .analysis import sizing

    try:
        return sizing.rated_endurance(d["capacity"], tbw=d["tbw"], dwpd=d["dwpd"],
                                      warranty_years=d["warranty_years"], pe_cycles=d["pe_cycles"],
                                      flash_bytes=d["flash_bytes"], waf=waf)
    except ValueError:
        return None


def _sz_print(title: str, rows: list[tuple[str, str]], notes: list[str]) -> None:
    table = Table("quantity", "value", title=title, box=None, title_justify="left")
    for k, v in rows:
        table.add_row(k, v)
    console = _console(soft_wrap=True)
    console.print(table)
    for n in notes:
        console.print(f"note: {n}", markup=False)


def _gbps(x: Optional[float]) -> str:
    return "-" if x is None else f"{x / 1e9:.3f} GB/s"


def _years(x: Optional[float]) -> str:
    return "-" if x is None else ("never" if x == float("inf") else f"{x:.2f} years")


def _jsonable(d: dict) -> dict:
    return {k: (None if isinstance(v, float) and v != v else
                ("inf" if isinstance(v, float) and v == float("inf") else v)) for k, v in d.items()}


@app.command()
@_interruptible
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
    dwpd: _Dwpd = None,
    warranty_years: _WarrantyYears = None,
    pe_cycles: _PeCycles = None,
    passes: _Passes = 2.0,
    block_size: _BlockSize = "128k",
    iodepth: _IoDepth = 32,
    sim_size: _SimSize = None,
    seed: _Seed = 0,
    no_cache: _NoCache = False,
    json_out: _Json = False,
) -> None:
    """How many drives a RAID 0 array needs to take a sustained write stream, and how long they last."""
    _check_seed(seed)
    from .analysis import sizing
    from .units import parse_time_ns

    if raid != 0:
        _fail(f"--raid {raid}: only RAID 0 is supported")
    target_rate = _sz_rate(target, "--target")
    try:
        duration_s = parse_time_ns(duration, "s") / 1e9
    except UnitError as e:
        _fail(f"--duration: {e}")
    _sz_fraction(margin, "--margin", upper_open=True)
    _sz_fraction(duty, "--duty", upper_open=False)
    if profile is None and (drive_rate is None or capacity is None):
        _fail("give --profile NAME, or --drive-rate RATE with --capacity SIZE")
    d = _sz_drive(profile, capacity, tbw, dwpd, warranty_years, pe_cycles, "with --drive-rate RATE")
    sim = None
    if drive_rate is not None:
        rate = _sz_rate(drive_rate, "--drive-rate")
        rate_source = "given (--drive-rate)"
    else:
        sim = _sz_sustained(profile, no_cache, passes, block_size, iodepth, sim_size, seed)
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
        sys.stdout.write(jsonout.dumps(_jsonable(out), indent=2) + "\n")
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


@app.command()
@_interruptible
def endurance(
    write_rate: Annotated[str, typer.Option(help="write rate of the array (split evenly over --drives), e.g. 12.5GB/s")],
    profile: Annotated[Optional[str], typer.Option(help="device profile (its endurance rating; --waf auto simulates its WAF)")] = None,
    capacity: Annotated[Optional[str], typer.Option(help="drive capacity, in place of --profile, e.g. 30TB")] = None,
    tbw: Annotated[Optional[str], typer.Option(help="rated TBW, e.g. 600TB")] = None,
    dwpd: _Dwpd = None,
    warranty_years: _WarrantyYears = None,
    pe_cycles: _PeCycles = None,
    drives: Annotated[int, typer.Option(help="drives sharing the write rate (RAID 0)")] = 1,
    duty: Annotated[float, typer.Option(help="share of the time the rate is written")] = 1.0,
    waf: Annotated[str, typer.Option(help="write amplification: auto (simulate a sequential stream) or a number")] = "auto",
    passes: _Passes = 2.0,
    block_size: _BlockSize = "128k",
    iodepth: _IoDepth = 32,
    sim_size: _SimSize = None,
    seed: _Seed = 0,
    no_cache: _NoCache = False,
    json_out: _Json = False,
) -> None:
    """Years until the drives' rated endurance is used up by a write stream."""
    _check_seed(seed)
    from .analysis import sizing

    rate = _sz_rate(write_rate, "--write-rate")
    if drives < 1:
        _fail(f"--drives {drives}: expected at least 1")
    _sz_fraction(duty, "--duty", upper_open=False)
    d = _sz_drive(profile, capacity, tbw, dwpd, warranty_years, pe_cycles,
                  "with --tbw, --dwpd and --warranty-years, or --pe-cycles")
    if waf.strip().lower() == "auto":
        if profile is not None:
            sim = _sz_sustained(profile, no_cache, passes, block_size, iodepth, sim_size, seed)
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
            _fail(f"--waf {waf!r}: expected auto or a number")
        if not waf_value >= 1.0:
            _fail(f"--waf {waf}: expected auto or a number >= 1")
        waf_source = "given (--waf)"
    e = _sz_endurance(d, waf_value)
    if e is None:
        _fail(f"{d['name']}: no endurance rating; give --tbw, --dwpd with --warranty-years, or --pe-cycles")
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
        sys.stdout.write(jsonout.dumps(_jsonable(out), indent=2) + "\n")
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

# ==== end of sizing commands =================================================================


# ==== arrays: `ssdlab rebuild` (seed 004) ===================================================


@app.command()
@_interruptible
def rebuild(
    profile: Annotated[str, typer.Option(help="drive profile of the --raid array")] = api.DEFAULT_PROFILE,
    raid: Annotated[Optional[int], typer.Option(help="RAID level (1, 10, 5, 6) of --drives of --profile")] = None,
    drives: Annotated[Optional[int], typer.Option(help="drives in the --raid array")] = None,
    chunk: Annotated[Optional[str], typer.Option(help="chunk size of the --raid array [default: 512k, mdadm's]",
                                                 show_default=False)] = None,
    engine: Annotated[str, typer.Option(help="RAID engine: md, streaming, hwraid (the built-in Adaptec 6805), or an engine TOML")] = "md",
    spares: Annotated[int, typer.Option(help="hot spares of the --raid array (the rebuild needs one)")] = 1,
    system: Annotated[Optional[Path], typer.Option(help="system TOML with an \\[\\[array]] that has spares (instead of --raid)")] = None,
    array: Annotated[Optional[str], typer.Option(help="the array to rebuild (default: the first)")] = None,
    fail: Annotated[Optional[str], typer.Option(help="the member that fails (default: the first)")] = None,
    host_job: Annotated[Optional[Path], typer.Option(help="fio job run on the array during the rebuild")] = None,
    sample: Annotated[Optional[str], typer.Option(help="rebuild only this much of the replacement and extrapolate (e.g. 32GiB)")] = None,
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
    memory_limit: Annotated[Optional[str], typer.Option(help="refuse a run that would need more memory than this: a size (16GiB), a share of the available memory (90%) or none (default: $SSDLAB_MEMORY_LIMIT, else 75% of MemAvailable)")] = None,
) -> None:
    """Fail a member of an array, rebuild it onto a spare, and report the rebuild.

    Rebuild time and rate, the rebuilt drive's WAF, the host's bandwidth meanwhile and the
    data-loss exposure."""
    _check_seed(seed)
    from .analysis.rebuild import rebuild as run_rebuild
    from .system import load_system
    from .units import format_bytes, parse_size

    try:
        if host_job is not None and host_job.is_dir():
            raise ValueError(f"--host-job {host_job}: is a directory, not a job file")
        if host_job is not None and not host_job.is_file():
            raise ValueError(f"{host_job}: no such job file")
        if not (0 < mttf_hours < float("inf") and 0 < ure_bits < float("inf")):
            raise ValueError("--mttf-hours and --ure-bits must be positive and finite")
        sets = _overrides(profile_set, "--profile-set", "SECTION.KEY=VALUE")
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
                               engine_set=_overrides(engine_set, "--engine-set", "KEY=VALUE"))
        with _simulating():
            r = run_rebuild(sysd, host_job=host_job, array=array, fail=fail,
                            sample=parse_size(sample) if sample is not None else None, seed=seed,
                            mttf_hours=mttf_hours, ure_bits=ure_bits, memory_limit=memory_limit,
                            project_waf=project_waf, projection_blocks=projection_blocks)
    except (FioJobError, ProfileError, SystemFileError, UnitError, api.SimulationError, ValueError) as e:
        _fail(str(e).splitlines()[0])
        return
    if as_json:
        sys.stdout.write(jsonout.dumps(r.to_dict(), indent=2) + "\n")
        for w in r.warnings:
            _err.print(f"ssdlab: warning: {w}", markup=False)
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
    sys.stdout.write("\n".join(lines) + "\n")
    for w in r.warnings:
        _err.print(f"ssdlab: warning: {w}", markup=False)


def _waf_line(r) -> str:
    """The rebuilt drive's WAF, and how it was had when projected."""
    from .units import format_bytes

    if r.rebuilt_drive_waf is None:
        return "  rebuilt drive WAF n/a"
    p = r.waf_projection
    if p is None:
        return f"  rebuilt drive WAF {r.rebuilt_drive_waf:.3f}"
    return (f"  rebuilt drive WAF {p.waf:.3f} projected over the whole rebuild ({r.sampled_waf:.3f} in the sample; "
            f"host writes reaching it {format_bytes(p.host_write_rate_bytes, False)}/s from {p.writers} "
            f"writers; on a {format_bytes(p.drive_bytes, False)} drive of its blocks)")


# ==== the reproduction gallery and the HTML report of one run ================================


@app.command()
@_interruptible
def reproduce(
    names: Annotated[Optional[list[str]], typer.Argument(help="experiments to run (default: all; --list shows them)", show_default=False)] = None,
    quick: Annotated[bool, typer.Option("--quick", help="shortened runs (what CI runs); rows they cannot show are not judged")] = False,
    out: Annotated[Path, typer.Option("--out", help="directory for the gallery page (DIR/index.html)")] = Path("gallery"),
    list_: Annotated[bool, typer.Option("--list", help="list the experiments and exit")] = False,
    seed: Annotated[int, typer.Option(help="random seed; same seed, same result")] = 0,
) -> None:
    """Run the published-measurement reproductions and write an HTML gallery.

    Prints published vs simulated with each row's tolerance and status. Exit status 1 if any
    row fails its tolerance."""
    _check_seed(seed)
    from . import gallery

    try:
        chosen = gallery.select(names)
    except gallery.UnknownExperiment as e:
        _fail(str(e))
        return
    if list_:
        for exp in chosen:
            sys.stdout.write(f"{exp.name}\t{exp.title}\n\tquick: {exp.quick_note or 'as full'}\n")
        return
    if out.exists() and not out.is_dir():
        _fail(f"--out {out}: not a directory")
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        _fail(f"--out {out}: {e.strerror or e}")
    _check_output(out / "index.html", "--out")
    results = []
    show = sys.stderr.isatty()
    for i, exp in enumerate(chosen, 1):
        label = f"[{i}/{len(chosen)}] {exp.name}{' (quick)' if quick else ''}"
        if show:
            with _err.status(label, spinner="dots"):
                res = gallery.run_experiment(exp, quick=quick, seed=seed)
        else:
            res = gallery.run_experiment(exp, quick=quick, seed=seed)
        results.append(res)
        counts = ", ".join(f"{v} {k}" for k, v in res.counts().items() if v)
        tail = f" (raised: {res.error})" if res.error else ""
        _err.print(f"{label}: {res.wall_s:.0f} s, {counts or 'no rows'}{tail}", markup=False)
    sys.stdout.write(gallery.text_table(results))
    sys.stdout.write(gallery.summary(results) + "\n")
    try:
        _write_whole(out / "index.html", gallery.page(results, quick=quick))
    except OSError as e:
        _fail(f"--out {out}: {e.strerror or e}")
    sys.stdout.write(f"gallery: {out / 'index.html'}\n")
    if any(r.failed for r in results):
        raise typer.Exit(1)


@app.command()
def report(
    result: Annotated[Path, typer.Argument(help="JSON written by ssdlab run --output-format json (with --interval for the time series)")],
    output: Annotated[Path, typer.Option("--output", "-o", help="HTML file to write")] = Path("report.html"),
) -> None:
    """One run's JSON result as a self-contained HTML page.

    fio summary, latency percentiles, iostat, each device's insides and, when the run was
    sampled, their course over time."""
    from .htmlreport import ReportInputError, load_result, render

    _check_output(output, "--output")
    try:
        data = load_result(result)
        text = render(data, source=result.name)
    except ReportInputError as e:
        _fail(str(e))
        return
    try:
        _write_whole(output, text)
    except OSError as e:
        _fail(f"--output {output}: {e.strerror or e}")
    sys.stdout.write(f"report: {output}\n")


def main() -> None:
    app()
