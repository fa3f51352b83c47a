"""fio job files in, resolved :class:`~ssdlab.workload.JobSpec` clones out.

    >>> jobs = parse_job_text("[j]\\nrw=randread\\nbs=4k\\nsize=1g\\n", device_size=2**40)
    >>> jobs.jobs[0].region_size
    1073741824

The grammar and the value syntax are fio's (``grammar``, and fio's rules in :mod:`ssdlab.units`); what each option
means to the simulator is in ``options``; ``resolve`` builds the clones. Anything fio would
reject, and anything ssdlab cannot simulate, raises :class:`FioJobError` with
``file:line: option 'x': ...``. Valid fio options that ssdlab does not simulate are kept
and reported in :attr:`JobSet.warnings`, never silently dropped.

Device mapping (ssdlab's rule, as fio has no single device):

* ``filename=/dev/NAME`` selects the system's device of that name (a name the system does
  not have is an error; with a single drive given only by its profile, every ``/dev`` name
  means that drive); a job without a ``filename`` uses the first device. Such a job uses the
  raw device from byte 0; its default size is the device's size minus ``offset``. With
  ``filesize`` it has fio's default files instead: ``nrfiles`` files of ``filesize`` bytes per
  clone (``jobname.clone.N``), laid out like named files;
* with ``filesize``, a job's size is that of its files from ``offset`` on, or ``size`` when
  smaller (a ``size`` in ``%`` is a share of the files), as fio caps it;
* any other file name is a file laid out on the first device, contiguously and in order of first
  appearance; it is as large as the biggest ``offset + size`` (or ``filesize``) any job asks
  of it, or, when no job gives a size, the rest of the device. Jobs and clones naming the
  same file share its extent; ``a:b`` names several files, modelled as one contiguous
  region;
* a clone's region starts at ``file base + offset + clone * offset_increment``;
  ``size``, ``offset`` and ``offset_increment`` given in ``%`` are percentages of
  ``device_size`` (offsets rounded up to the minimum block size, as fio does); ``io_size`` in
  ``%`` is a percentage of the job's size (fio's rule);
* a region reaching past the end of the device, an empty region, or a block size larger
  than the region is an error.

With a file system on the device (``ssdlab run JOB --fs ext4``, ``build(filesystem=...)``), a
job that names no ``/dev`` device runs on its own files instead, through the page cache unless
``direct=1`` (:mod:`.onfiles`).

Other ssdlab choices, where fio depends on the machine or on chance:

* ``$pagesize``, ``$mb_memory`` and ``$ncpus`` come from a simulated host (4096, 16384,
  8 unless ``host=`` says otherwise), so a job file gives the same jobs everywhere;
* clones appear in fio's order (clone 0, then N-1 down to 1); ``seed`` of each clone is
  derived from the run ``seed`` and its position, or from ``randseed`` when given (then the
  run seed does not change it); ``randrepeat=0`` selects a different, still reproducible,
  stream; a ``startdelay`` range picks each clone's delay from its seed;
* fractional times (``runtime=0.2``) are honoured; fio 3.x would truncate them (a warning
  says so for job files; overrides are taken as meant).
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Mapping

from ..workload import JobSpec
from .errors import FioJobError
from .grammar import parse_sources
from .options import DEFAULT_PERCENTILES
from .reporting import JobReport
from .resolve import Targets, Warnings, parse_sections, resolve

__all__ = ["FioJobError", "JobSet", "Targets", "load_job_file", "load_job_files", "parse_job_text"]


@dataclass
class JobSet:
    """A parsed job file: the clones to simulate and what reporting needs to know."""

    jobs: list[JobSpec]  # one per clone, in fio's order
    job_options: list[dict[str, str]]  # per clone: its sections' options (fio "job options")
    global_options: dict[str, str]
    group_reporting: dict[int, bool]  # per group_id
    percentiles: list[float] = field(default_factory=lambda: list(DEFAULT_PERCENTILES))
    #: decimals of fio's percentile labels: the longest fraction in ``percentile_list``
    percentile_precision: int = 2
    warnings: list[str] = field(default_factory=list)
    #: fio's ``ioscheduler=``: target index -> the scheduler its jobs switch it to.
    ioschedulers: dict[int, str] = field(default_factory=dict)
    #: per clone: its options for fio's report and log files (sampling windows, logs)
    reports: list[JobReport] = field(default_factory=list)
    #: per clone: it runs on its own files through the file layer, not on the raw device
    #: (:func:`ssdlab.fio.resolve.runs_on_files`)
    on_files: list[bool] = field(default_factory=list)
    #: per clone: buffered I/O to its block device through the device's own page cache
    #: (:func:`ssdlab.fio.resolve.buffered_on_device`)
    on_device_cache: list[bool] = field(default_factory=list)


def load_job_file(
    path: str | os.PathLike[str] | Iterable[str | os.PathLike[str]],
    *,
    device_size: int | None = None,
    targets: Targets | None = None,
    overrides: Mapping[str, str] | None = None,
    env: Mapping[str, str] | None = None,
    seed: int = 0,
    host: Mapping[str, int] | None = None,
    mounted: bool = False,
    page_cache: bool = False,
) -> JobSet:
    """Parse a job file (or several, like ``fio a.fio b.fio``) for a device of ``device_size``
    bytes. ``overrides`` are ``option=value`` pairs applied to every job after its own options;
    ``env`` (default ``os.environ``) feeds ``${VAR}``."""
    paths = [path] if isinstance(path, (str, os.PathLike)) else list(path)
    return load_job_files(paths, device_size=device_size, targets=targets, overrides=overrides,
                          env=env, seed=seed, host=host, mounted=mounted, page_cache=page_cache)


def load_job_files(
    paths: Iterable[str | os.PathLike[str]],
    *,
    device_size: int | None = None,
    targets: Targets | None = None,
    overrides: Mapping[str, str] | None = None,
    env: Mapping[str, str] | None = None,
    seed: int = 0,
    host: Mapping[str, int] | None = None,
    mounted: bool = False,
    page_cache: bool = False,
) -> JobSet:
    """Several job files, each later one starting after the earlier ones (fio's implicit
    stonewall) and with its own ``[global]`` defaults. A path ``-`` is standard input."""
    sources = []
    for p in paths:
        if str(p) == "-":
            # fio reads a job file named '-' from standard input (includes: the working directory)
            sources.append((sys.stdin.read(), "<stdin>", Path(".")))
            continue
        p = Path(p)
        try:
            text = p.read_text(encoding="utf-8", errors="replace")
        except OSError as exc:
            raise FioJobError(f"cannot read job file: {exc.strerror}", path=str(p)) from None
        sources.append((text, str(p), p.parent))
    if not sources:
        raise FioJobError("no job file given")
    return _build(sources, _targets(device_size, targets), overrides, env, seed, host, mounted, page_cache)


def _targets(device_size: int | None, targets: Targets | None) -> Targets:
    """``targets`` (a system's devices), or one device of ``device_size`` bytes."""
    if targets is not None:
        return targets
    if device_size is None:
        raise TypeError("give device_size or targets")
    return Targets.single(device_size)


def parse_job_text(
    text: str,
    *,
    name: str = "<string>",
    base_dir: str | os.PathLike[str] = ".",
    device_size: int | None = None,
    targets: Targets | None = None,
    overrides: Mapping[str, str] | None = None,
    env: Mapping[str, str] | None = None,
    seed: int = 0,
    host: Mapping[str, int] | None = None,
    mounted: bool = False,
    page_cache: bool = False,
) -> JobSet:
    """Like :func:`load_job_file` for job text; ``include`` is relative to ``base_dir``."""
    return _build([(text, name, Path(base_dir))], _targets(device_size, targets), overrides, env, seed, host,
                  mounted, page_cache)


def _build(sources, targets: Targets, overrides, env, seed, host, mounted: bool = False,
           page_cache: bool = False) -> JobSet:
    warnings = Warnings()
    sections = parse_sources(sources, env=env, host=host)
    entries, global_options = parse_sections(sections, overrides, warnings)
    if not entries:
        raise FioJobError("no job sections (only [global])", path=sources[0][1])
    out = resolve(entries, global_options, targets=targets, seed=seed, warnings=warnings, mounted=mounted,
                  page_cache=page_cache)
    return JobSet(
        jobs=out.jobs,
        job_options=out.job_options,
        global_options=out.global_options,
        group_reporting=out.group_reporting,
        percentiles=out.percentiles,
        percentile_precision=out.percentile_precision,
        warnings=warnings.lines,
        ioschedulers=out.ioschedulers,
        reports=out.reports,
        on_files=out.on_files,
        on_device_cache=out.on_device_cache,
    )
