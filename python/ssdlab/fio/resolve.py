"""From parsed sections to one :class:`~ssdlab.workload.JobSpec` per clone.

This is where fio's job model meets ssdlab's single simulated device: globals are
inherited, ``numjobs`` clones are made in fio's order, files are laid out on the device,
sizes and percentages become byte ranges, ``stonewall``/``wait_for`` become ``start_after``
lists and every clone gets its seed and start delay. The device mapping rule is described
in the package docstring (:mod:`ssdlab.fio`).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Mapping

from pydantic import ValidationError

from ..workload import BlockSizeDist, Distribution, JobSpec, Replay, ReplayTiming, Zone
from .errors import FioJobError
from .grammar import RawOption, Section
from .reporting import SS_LATENCY_CRITERIA, JobReport, job_report
from .options import (
    DEFAULT_PERCENTILES,
    DIRECTIONS,
    FILE_HINTS,
    FILE_LAYER,
    Applier,
    JobState,
    Where,
    section_order,
)
from ..units import FioSize, Percent, Zones, us_to_ns

MAX_JOBS = 4096  # fio's own limit on jobs (threads) per run

# fio's synchronous engines: fio caps iodepth at 1 with them (psync is the default).
SYNC_ENGINES = frozenset("""
sync psync vsync pvsync pvsync2 mmap splice falloc ftruncate filecreate filestat filedelete
dircreate dirstat dirdelete e4defrag cpuio net netsplice exec mtd libpmem dev-dax pmemblk
gfapi libhdfs http ime_psync ime_psyncv page_fault
""".split())
def completes_in_call(ioengine: str, iodepth: int) -> bool:
    """Whether fio's engine completes each I/O inside its submit call (FIO_SYNCIO): a
    synchronous engine, or the null engine at depth 1 (engines/null.c; deeper, it queues)."""
    engine = ioengine.split(":", 1)[0]
    return engine in SYNC_ENGINES or (engine == "null" and iodepth == 1)


# Engines that do not send block I/O to a device; ssdlab still simulates block I/O.
NON_BLOCK_ENGINES = frozenset("""
null cpuio net netsplice netsplice filecreate filestat filedelete dircreate dirstat dirdelete
exec falloc ftruncate e4defrag page_fault http rdma rados nfs dfs gfapi gfapi_async libhdfs
ime_psync ime_psyncv ime_aio libpmem dev-dax pmemblk cpp_null libcufile libhipfile
""".split())
# Block engines whose queue is modelled as it is: up to iodepth requests in flight.
ASYNC_BLOCK_ENGINES = frozenset("""
libaio io_uring io_uring_cmd posixaio windowsaio solarisaio sg xnvme libblkio
""".split())
# Engines that read and write files through the page cache unless direct=1.
PAGE_CACHE_ENGINES = frozenset("""
sync psync vsync pvsync pvsync2 libaio io_uring posixaio mmap splice windowsaio solarisaio
""".split())
WRITE_MODES = frozenset({"write", "randwrite", "rw", "randrw", "trimwrite", "randtrimwrite"})
READ_MODES = frozenset({"read", "randread", "rw", "randrw"})
TRIM_MODES = frozenset({"trim", "randtrim", "trimwrite", "randtrimwrite"})
TRIM_ONLY_MODES = frozenset({"trim", "randtrim"})
# What a buffered job on a block device's own page cache honours of the file options.
DEVICE_CACHE_OPTIONS = frozenset({"end_fsync", "fadvise_hint"})


@dataclass
class JobEntry:
    """One job section after parsing: its state and where it came from."""

    section: Section
    state: JobState
    name: str


@dataclass
class Resolved:
    jobs: list[JobSpec] = field(default_factory=list)
    job_options: list[dict[str, str]] = field(default_factory=list)
    global_options: dict[str, str] = field(default_factory=dict)
    group_reporting: dict[int, bool] = field(default_factory=dict)
    percentiles: list[float] = field(default_factory=lambda: list(DEFAULT_PERCENTILES))
    percentile_precision: int = 2
    #: fio's ``ioscheduler=``: the scheduler a job switches its device to (target -> name).
    ioschedulers: dict[int, str] = field(default_factory=dict)
    #: per clone: what its options say about fio's report and log files
    reports: list[JobReport] = field(default_factory=list)
    #: per clone: it runs on its own files through the file layer (:func:`runs_on_files`)
    on_files: list[bool] = field(default_factory=list)
    #: per clone: buffered I/O to its block device, through the device's own page cache
    #: (:func:`buffered_on_device`)
    on_device_cache: list[bool] = field(default_factory=list)


class Warnings:
    """Collects one-line warnings, once per key (an option per file)."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self._seen: set[str] = set()

    def __call__(self, key: str, path: str, message: str) -> None:
        if key not in self._seen:
            self._seen.add(key)
            self.lines.append(message)

    def at(self, where: Where | None, key: str, message: str, fallback: str = "<job>") -> None:
        prefix = where.prefix() if where else fallback
        self(f"{where.path if where else fallback}:{key}", where.path if where else fallback,
             f"{prefix}: {message}")


# --------------------------------------------------------------------------- parsing


#: The path of an override's errors and warnings (a caller that took it from a command-line
#: option, ``--set``, names that instead: see :func:`ssdlab.cli.runs.run`)
OVERRIDES = "<overrides>"


def parse_sections(
    sections: list[Section],
    overrides: Mapping[str, str] | None,
    warnings: Warnings,
) -> tuple[list[JobEntry], dict[str, str]]:
    """Apply options section by section: globals accumulate within a file, each job copies
    them at its header; ``overrides`` go on top of every job. The file layer's options wait
    to be judged job by job by the resolver."""
    applier = Applier(warnings)
    override_lines = [
        RawOption(str(k), None if v is None else str(v), OVERRIDES, None)
        for k, v in (overrides or {}).items()
    ]
    entries: list[JobEntry] = []
    global_options: dict[str, str] = {}
    globals_state = JobState()
    file_index = -1
    pending_stonewall = False
    for section in sections:
        if section.file_index != file_index:
            if file_index >= 0:
                pending_stonewall = True  # later job files start after the earlier ones
            file_index = section.file_index
            globals_state = JobState()
        if section.is_global:
            for opt in section_order(section.options):
                applier.apply(globals_state, opt)
            global_options.update(globals_state.written)
            globals_state.written = {}
            continue
        state = globals_state.child()
        # fio names a job by its section; only the section's own name= renames it (a
        # [global] name= is not inherited: fio 3.33 prints [file1] as "file1").
        state.name = None
        if pending_stonewall:
            state.stonewall = True
            pending_stonewall = False
        for opt in section_order(section.options):
            applier.apply(state, opt)
        for opt in override_lines:
            applier.apply(state, opt, overriding=True)
        entries.append(JobEntry(section, state, state.name or section.name))
    return entries, global_options


# --------------------------------------------------------------------------- resolving


@dataclass(frozen=True)
class Targets:
    """The devices jobs can address: names as fio's ``/dev/NAME`` gives them, and sizes.
    ``strict``: a ``/dev`` name that is not among them is an error; otherwise (a one-drive
    run named by its profile alone) every ``/dev`` name means the one drive."""

    names: tuple[str, ...]
    sizes: tuple[int, ...]
    strict: bool = True
    #: Drives inside an array -> the array (not addressable on their own).
    members: Mapping[str, str] = field(default_factory=dict)

    @classmethod
    def single(cls, size: int, name: str = "") -> "Targets":
        return cls((name,), (size,), strict=False)


def resolve(
    entries: list[JobEntry],
    global_options: dict[str, str],
    *,
    targets: Targets,
    seed: int,
    warnings: Warnings,
    mounted: bool = False,
    page_cache: bool = False,
) -> Resolved:
    """The jobs' clones as the core runs them. ``mounted``: a file system is made on the
    first device (``--fs``, a system file's), so every job that names no device runs on files;
    ``page_cache``: the host has a page cache (its profile describes its memory), so a buffered
    job on a named block device goes through the device's own (:func:`buffered_on_device`)."""
    for name, size in zip(targets.names, targets.sizes):
        if size <= 0:
            raise FioJobError(f"device {name or '0'}: size must be positive, got {size}")
    out = Resolved(global_options=global_options)
    total = sum(e.state.numjobs for e in entries)
    if total > MAX_JOBS:
        raise FioJobError(f"{total} jobs (numjobs expanded) exceed fio's limit of {MAX_JOBS}",
                          path=entries[0].section.path if entries else None)
    layout = _Layout(entries, targets, warnings)
    groupid, group_jobs = 0, 0
    phase: list[int] = []  # job indices since the last stonewall
    previous_phase: list[int] = []
    clones_of: dict[int, list[int]] = {}
    # The first device holds a file system when a job runs on files, and with one named
    # (--fs, a system file's) any device may: a buffered job on such a device stays raw (the
    # model keeps no block device's cache beside a file system's).
    first_mounted = any(runs_on_files(e.state, mounted) for e in entries)
    on_files_by_name: dict[str, JobEntry] = {}
    for number, entry in enumerate(entries):
        st = entry.state
        on_files = runs_on_files(entry.state, mounted)
        if on_files:
            # fio names a job's files $jobname.$jobnum.$filenum (filename_format's default):
            # two jobs of one name share them, which the file layer's own set per job cannot.
            first = on_files_by_name.setdefault(entry.name, entry)
            if first is not entry:
                raise FioJobError(f"job '{entry.name}': the job of that name at line {first.section.line} works on "
                                  "files too, and fio would have the two share them ($jobname.$jobnum.$filenum); "
                                  "the model gives each job its own: name the jobs apart",
                                  path=entry.section.path, line=entry.section.line)
        on_cache = page_cache and buffered_on_device(st)
        raw_reason = "memory" if not page_cache else "device"
        if on_cache and (mounted or (layout.regions[(number, 0)].target == 0 and first_mounted)):
            on_cache, raw_reason = False, "mounted"
        _check_job(entry, warnings, on_files, on_cache, raw_reason)
        if st.stonewall and phase:
            previous_phase, phase = phase, []
        if (st.stonewall or st.new_group) and group_jobs:
            groupid += 1
            group_jobs = 0
        after = list(previous_phase) + _waitee(entry, entries[:number], clones_of)
        out.group_reporting[groupid] = out.group_reporting.get(groupid, False) or st.group_reporting
        if st.percentile_list is not None and out.percentiles == DEFAULT_PERCENTILES:
            out.percentiles = list(st.percentile_list)
            out.percentile_precision = st.percentile_precision
        common = _common_fields(entry, warnings)
        report = job_report(st, entry.name)
        if report.ss_dur_s and report.ss_criterion in SS_LATENCY_CRITERIA:
            report = report.model_copy(update={"ss_dur_s": 0})
            _warn(warnings, st, "steadystate", f"option 'steadystate={report.ss_criterion}:...': the latency "
                  "criteria are not modelled; the job runs its whole runtime and reports no steadystate", entry)
        clones_of[number] = []
        for clone in _fio_clone_order(st.numjobs):
            index = len(out.jobs)
            thread_number = index + 1
            clone_seed = _clone_seed(st, seed, thread_number)
            target, region_offset, region_size, io_limit = layout.region(number, clone)
            replay = None
            if st.read_iolog is not None:
                replay, target = _replay(entry, layout, target)
                region_offset, region_size, io_limit = 0, targets.sizes[target], 1 << 62
            if st.ioscheduler is not None:
                _set_ioscheduler(entry, out.ioschedulers, target)
            spec = dict(common)
            spec.update(
                name=entry.name,
                target=target,
                clone=clone,
                group_id=groupid,
                seed=clone_seed,
                start_after=sorted(set(after)),
                start_delay_ns=_start_delay_ns(st, clone_seed),
                region_offset=region_offset,
                region_size=region_size,
                io_limit=io_limit,
                distribution=_distribution(entry, region_size, warnings),
                replay=replay,
            )
            _check_block_sizes(entry, spec, region_size)
            if replay is None:
                _check_direct_sectors(entry, spec)
            try:
                out.jobs.append(JobSpec(**spec))
            except ValidationError as exc:  # pragma: no cover - guarded by the checks above
                raise FioJobError(f"job '{entry.name}': {exc.errors()[0]['msg']}",
                                  path=entry.section.path, line=entry.section.line) from None
            out.job_options.append(dict(entry.state.written))
            out.reports.append(report)
            out.on_files.append(on_files)
            out.on_device_cache.append(on_cache)
            clones_of[number].append(index)
            phase.append(index)
            group_jobs += 1
    return out


def _set_ioscheduler(entry: JobEntry, chosen: dict[int, str], target: int) -> None:
    """fio's ``ioscheduler=``: the job's device runs that scheduler (one per device)."""
    from ..iosched import SCHEDULERS

    name = (entry.state.ioscheduler or "").strip()
    if name not in SCHEDULERS:
        _raise(entry, "ioscheduler", f"'{name}': expected one of {', '.join(SCHEDULERS)}")
    if chosen.get(target, name) != name:
        _raise(entry, "ioscheduler", f"'{name}': another job sets this device's scheduler to '{chosen[target]}'")
    chosen[target] = name


def _replay(entry: JobEntry, layout: "_Layout", target: int) -> tuple[Replay, int]:
    """fio's ``read_iolog``: the log (a path relative to the job file, else to the working
    directory), its timing (``replay_no_stall``, ``replay_time_scale``) and the device
    (``replay_redirect``, else the job's own)."""
    from pathlib import Path

    st = entry.state
    path = Path(st.read_iolog or "")
    near_job = Path(entry.section.path).parent / path if entry.section.path else path
    if not path.is_absolute() and near_job.is_file():
        path = near_job
    if not path.is_file():
        _raise(entry, "read_iolog", f"{st.read_iolog}: no such I/O log")
    if st.replay_no_stall:
        timing = ReplayTiming(kind="closed")
    elif st.replay_time_scale != 100:
        # fio: a percentage of the original rate (50 runs at half the speed).
        timing = ReplayTiming(kind="scaled", speed=st.replay_time_scale / 100)
    else:
        timing = ReplayTiming()
    if st.replay_redirect:
        target = layout._target_of(entry, [st.replay_redirect])
    return Replay(path=str(path), format="fio", timing=timing, wrap=False), target


def _fio_clone_order(numjobs: int) -> list[int]:
    """fio starts clone 0, then adds the others counting down: 0, N-1, ..., 1."""
    return [0] + list(range(numjobs - 1, 0, -1))


def _waitee(entry: JobEntry, earlier: list[JobEntry], clones_of: dict[int, list[int]]) -> list[int]:
    st = entry.state
    if st.wait_for is None:
        return []
    where = st.where.get("wait_for")
    path, line = (where.path, where.line) if where else (entry.section.path, entry.section.line)
    if st.wait_for == entry.name:
        raise FioJobError(f"job '{entry.name}' cannot wait for itself", path=path, line=line,
                          option="wait_for")
    matches = [i for i, e in enumerate(earlier) if e.name == st.wait_for]
    if not matches:
        raise FioJobError(f"no earlier job named '{st.wait_for}'", path=path, line=line,
                          option="wait_for")
    if len(matches) > 1:
        raise FioJobError(f"several jobs are named '{st.wait_for}'", path=path, line=line,
                          option="wait_for")
    return list(clones_of[matches[0]])


def _hash(*parts: object) -> int:
    digest = hashlib.blake2b(repr(parts).encode(), digest_size=8).digest()
    return int.from_bytes(digest, "little") & (2**63 - 1)


def _clone_seed(st: JobState, run_seed: int, thread_number: int) -> int:
    """randseed fixes the seed; otherwise it follows the run seed (randrepeat=0 gets its own
    stream, so flipping it changes the pattern as it does in fio)."""
    if st.randseed is not None:
        return _hash("randseed", st.randseed, thread_number)
    return _hash("repeat" if st.randrepeat else "norepeat", run_seed, thread_number)


def _start_delay_ns(st: JobState, clone_seed: int) -> int:
    lo, hi = (int(v) for v in st.startdelay_us)
    if hi > lo:
        lo += _hash("startdelay", clone_seed) % (hi - lo + 1)
    return us_to_ns(lo)


# --------------------------------------------------------------------------- per job


def _warn(warnings: Warnings, st: JobState, option: str, message: str, entry: JobEntry) -> None:
    where = st.where.get(option)
    fallback = f"{entry.section.path}:{entry.section.line}"
    warnings.at(where, option, message, fallback=fallback)


#: fio's ioengines whose I/O is a call on a file or a directory: run as such on files.
METADATA_ENGINES = frozenset("filecreate filestat filedelete dircreate dirstat dirdelete".split())


def asks_for_files(st: JobState) -> bool:
    """Whether a job asks for files, as fio run on a mounted file system would give them:
    buffered I/O through the page cache (``direct`` unset is fio's default, or ``buffered=1``)
    by an engine that reads and writes through it, more than one file, a file size, one of
    the file layer's options (FILE_LAYER) or a metadata engine. Trims are not buffered I/O
    (fio sends them to a block device), so a trim-only job does not ask by its ``direct``."""
    engine = st.ioengine.split(":", 1)[0]
    if engine in METADATA_ENGINES:
        return True
    if not st.direct and engine in PAGE_CACHE_ENGINES and st.rw not in TRIM_ONLY_MODES:
        return True
    return st.nrfiles > 1 or st.filesize is not None or bool(FILE_LAYER & st.where.keys())


def runs_on_files(st: JobState, mounted: bool) -> bool:
    """Whether a job runs on its own files through the file layer: it names no block device
    (``filename=/dev/...`` stays on its device: raw, or its own page cache,
    :func:`buffered_on_device`) and replays no I/O log, and a file system
    is there or the job asks for files (:func:`asks_for_files`: then one is made on the first
    device)."""
    if (st.filename or "").startswith("/dev/") or st.read_iolog is not None:
        return False  # a replayed I/O log addresses its device, as the replay path does
    return mounted or asks_for_files(st)


def buffered_on_device(st: JobState) -> bool:
    """Whether a job does buffered I/O to a block device it names (``filename=/dev/...``,
    ``direct`` unset, an engine that goes through the page cache, reads or writes): Linux
    sends it through the device's own page cache (block/fops.c's ``blkdev_read_iter`` and
    ``blkdev_write_iter``). Trims and replayed I/O logs address the device itself."""
    engine = st.ioengine.split(":", 1)[0]
    return ((st.filename or "").startswith("/dev/") and not st.direct and engine in PAGE_CACHE_ENGINES
            and st.read_iolog is None and st.rw not in TRIM_MODES)


def _check_job(entry: JobEntry, warnings: Warnings, on_files: bool = False, on_cache: bool = False,
               raw_reason: str = "memory") -> None:
    """The job's options judged now that it is whole; ``on_files``: it runs on its own files
    through the file layer, which answers buffered I/O, ``nrfiles``, the metadata engines
    and the file options (FILE_LAYER), so none of those is said to be unmodelled;
    ``on_cache``: it does buffered I/O through its device's page cache, which answers
    ``end_fsync`` and ``fadvise_hint`` of them; ``raw_reason``: why a buffered job on a device
    is not (:func:`_warn_buffered`)."""
    st = entry.state
    if not on_files:
        # The file layer's options were held back for a run with a file system: this job
        # stays on its device, where they are not modelled (but for what its cache does).
        answered = DEVICE_CACHE_OPTIONS if on_cache else frozenset()
        for name in sorted(((FILE_LAYER | FILE_HINTS) - answered) & st.where.keys()):
            Applier(warnings).warn_unmodelled(name, st.where[name])
    if any(st.rate) and any(st.rate_iops):
        where = st.where.get("rate_iops") or st.where.get("rate")
        raise FioJobError("rate and rate_iops are mutually exclusive",
                          path=where.path if where else entry.section.path,
                          line=where.line if where else entry.section.line, option="rate_iops")
    if st.time_based and not st.runtime_us:
        _warn(warnings, st, "time_based", "option 'time_based' needs a runtime; like fio,"
              " ssdlab turns it off", entry)
        st.time_based = False
    engine = st.ioengine.split(":", 1)[0]
    if "ioengine" in st.where:
        text = st.where["ioengine"].text
        if on_files and engine in METADATA_ENGINES:
            pass  # the file layer makes its calls
        elif engine == "null":
            pass  # modelled: each I/O done once submitted, no device
        elif engine in NON_BLOCK_ENGINES:
            _warn(warnings, st, "ioengine", f"option '{text}' is not modelled: fio's {engine}"
                  " engine does not do block I/O to the device; the simulation does", entry)
        elif engine not in SYNC_ENGINES and engine not in ASYNC_BLOCK_ENGINES:
            _warn(warnings, st, "ioengine", f"option '{text}': simulated as block I/O to the device"
                  f" with up to iodepth={st.iodepth} requests in flight; what the {engine} engine itself"
                  " does is not modelled", entry)
    if not st.direct and engine in PAGE_CACHE_ENGINES and not on_files and not on_cache:
        _warn_buffered(entry, warnings, raw_reason)
    if engine in SYNC_ENGINES and st.iodepth > 1:
        default = "" if "ioengine" in st.where else " (fio's default)"
        _warn(warnings, st, "iodepth", f"fio caps iodepth={st.iodepth} at 1 with the"
              f" synchronous ioengine '{engine}'{default}; ssdlab does the same", entry)
        st.iodepth = 1
    writes = st.rw in WRITE_MODES
    if "verify" in st.where or "do_verify" in st.where:
        verifying = st.verify not in ("0", "none")
        if verifying and st.do_verify and writes:
            _warn(warnings, st, "verify", f"option '{st.where.get('verify', st.where.get('do_verify')).text}'"
                  " adds a read-back verify phase in fio, which is not modelled; the simulated"
                  " result ignores it", entry)
        else:
            for name in ("verify", "do_verify"):
                if name in st.where:
                    _warn(warnings, st, name, f"option '{st.where[name].text}' is accepted but"
                          " not modelled", entry)
    if "verify_backlog" in st.where:
        if st.verify not in ("0", "none") and writes and st.verify_backlog:
            _warn(warnings, st, "verify_backlog", f"option '{st.where['verify_backlog'].text}'"
                  " interleaves verify reads in fio, which is not modelled; the simulated"
                  " result ignores it", entry)
        else:
            _warn(warnings, st, "verify_backlog", f"option '{st.where['verify_backlog'].text}'"
                  " is accepted but not modelled", entry)
    if "nrfiles" in st.where and not on_files:
        # a job on a block device: fio opens it nrfiles times, which the raw path does not model
        if st.nrfiles > 1:
            kind = "changes what fio does but is not modelled; the simulated result ignores it"
        else:
            kind = "is accepted but not modelled"
        _warn(warnings, st, "nrfiles", f"option '{st.where['nrfiles'].text}' {kind}", entry)
    if "zonesize" in st.where and st.zonesize:
        _warn(warnings, st, "zonesize", f"option '{st.where['zonesize'].text}' is only used to"
              " read 'z' size units; zoned I/O is not modelled", entry)
    if "fill_device" in st.where and (not st.fill_device or st.size is not None):
        _warn(warnings, st, "fill_device", f"option '{st.where['fill_device'].text}' is"
              " accepted but not modelled (the job's size decides how much is written)", entry)
    if st.filesize and st.filesize[0] != st.filesize[1]:
        _warn(warnings, st, "filesize", f"option '{st.where['filesize'].text}': random file"
              f" sizes are not modelled; ssdlab uses {st.filesize[0]} bytes", entry)
    if st.fsync and st.fdatasync and st.fsync != st.fdatasync:
        _warn(warnings, st, "fdatasync", "fsync and fdatasync are both set; ssdlab issues one"
              f" flush every {min(st.fsync, st.fdatasync)} writes", entry)


_RAW_REASONS = {
    "memory": "the host profile describes no memory, so the device's page cache is not modelled",
    "mounted": "the run mounts a file system, and a block device's page cache beside it is not modelled",
    "device": "its trims (or replayed log) address the device itself",
}


def _warn_buffered(entry: JobEntry, warnings: Warnings, reason: str = "memory") -> None:
    """Buffered I/O (fio's default) on a block device simulated as direct I/O, said once per
    run with why (``reason``): the host describes no memory (no page cache to model), the run
    mounts a file system (beside whose cache the device's own is not modelled), or the job
    trims or replays a log, which go to the device itself."""
    st = entry.state
    written = st.where.get("direct") or st.where.get("buffered")
    why = _RAW_REASONS[reason]
    what = f"{why}; simulated as direct=1"
    if written is not None:
        message = f"{written.prefix()}: option '{written.text}' (buffered I/O): {what}"
        path = written.path
    else:
        path = entry.section.path
        message = (f"{path}:{entry.section.line}: job '{entry.name}': direct=0 (buffered I/O, fio's"
                   f" default): {what}")
    warnings("buffered-io", path, message)


def _common_fields(entry: JobEntry, warnings: Warnings) -> dict:
    st = entry.state
    dists = [_block_sizes(st, d) for d in range(3)]
    min_bs = [d.min_size for d in dists]
    align = []
    for d in range(3):
        ba = st.ba[d]
        align.append(ba if (ba and st.is_random) else min_bs[d])
    random_map = not st.norandommap and st.dist.kind == "random" and align == min_bs
    flushes = [n for n in (st.fsync, st.fdatasync) if n]
    return dict(
        rw=st.rw,
        rw_modifier=st.rw_modifier,
        rwmix_read=st.rwmix_read,
        block_sizes=tuple(dists),
        block_align=tuple(align),
        iodepth=st.iodepth,
        iodepth_batch_submit=st.iodepth_batch,
        sync_engine=completes_in_call(st.ioengine, st.iodepth),
        null_engine=st.ioengine.split(":", 1)[0] == "null",
        loops=st.loops,
        number_ios=st.number_ios or None,
        runtime_ns=us_to_ns(st.runtime_us) or None,
        time_based=st.time_based,
        ramp_time_ns=us_to_ns(st.ramp_time_us),
        thinktime_ns=us_to_ns(st.thinktime_us),
        thinktime_blocks=st.thinktime_blocks,
        rate_bytes=tuple(st.rate),
        rate_iops=tuple(st.rate_iops),
        rate_process=st.rate_process,
        fsync_every=min(flushes) if flushes else 0,
        random_map=random_map,
    )


def _block_sizes(st: JobState, d: int) -> BlockSizeDist:
    """bssplit beats bsrange beats bs, per direction, as in fio."""
    if st.bssplit[d]:
        return BlockSizeDist(split=list(st.bssplit[d]))
    rng = st.bsrange[d]
    if rng and rng[0] != rng[1]:
        return BlockSizeDist(range_min=rng[0], range_max=rng[1])
    return BlockSizeDist(split=[(rng[0] if rng else st.bs[d], 100.0)])


def _used_directions(rw: str) -> list[int]:
    used = []
    if rw in READ_MODES:
        used.append(0)
    if rw in WRITE_MODES:
        used.append(1)
    if rw in TRIM_MODES:
        used.append(2)
    return used


def _check_block_sizes(entry: JobEntry, spec: dict, region_size: int) -> None:
    for d in _used_directions(spec["rw"]):
        biggest = spec["block_sizes"][d].max_size
        if biggest > region_size:
            st = entry.state
            option = "bssplit" if st.bssplit[d] else ("bsrange" if st.bsrange[d] else "bs")
            where = st.where.get(option) or st.where.get("size")
            raise FioJobError(
                f"{DIRECTIONS[d]} block size {biggest} is larger than the job's region of"
                f" {region_size} bytes", path=where.path if where else entry.section.path,
                line=where.line if where else entry.section.line, option=option,
            )


#: the unit of direct I/O to a block device: its logical block size, 512 bytes on every
#: simulated device (Linux's sector)
SECTOR = 512


def _check_direct_sectors(entry: JobEntry, spec: dict) -> None:
    """Direct I/O to a block device moves whole sectors from sector-aligned offsets: the kernel
    refuses anything else (EINVAL) and fio's job fails, so such a job is refused here."""
    st = entry.state
    if not st.direct:
        return
    why = (f"with direct=1, I/O to a block device moves whole {SECTOR}-byte sectors (fio's I/O fails with "
           f"EINVAL); use a multiple of {SECTOR}, or direct=0")
    for d in _used_directions(spec["rw"]):
        dist = spec["block_sizes"][d]
        sizes = [size for size, _ in dist.split] or [dist.min_size, dist.max_size]
        odd = next((size for size in sizes if size % SECTOR), None)
        if odd is not None:
            option = "bssplit" if st.bssplit[d] else ("bsrange" if st.bsrange[d] else "bs")
            _raise(entry, option, f"{DIRECTIONS[d]} block size {odd}: {why}")
        if st.is_random and st.ba[d] and st.ba[d] % SECTOR:
            _raise(entry, "ba", f"{DIRECTIONS[d]} block alignment {st.ba[d]}: {why}")
    if spec["region_offset"] % SECTOR:
        option = "offset_increment" if "offset_increment" in st.where and spec["clone"] else "offset"
        _raise(entry, option, f"job '{entry.name}' (clone {spec['clone']}) starts at byte {spec['region_offset']}: {why}")


def _distribution(entry: JobEntry, region_size: int, warnings: Warnings) -> Distribution:
    st = entry.state
    dist = st.dist
    text = st.where["random_distribution"].text if "random_distribution" in st.where else ""
    if dist.center is not None:
        _warn(warnings, st, "random_distribution", f"option '{text}': the center of the"
              " distribution is not modelled; the simulated result ignores it", entry)
    if dist.kind == "random":
        return Distribution()
    if dist.kind in ("zipf", "pareto", "normal"):
        return Distribution(kind=dist.kind, param=dist.param)
    if dist.kind == "sequence":
        _warn(warnings, st, "random_distribution", f"option '{text}' is not modelled; the"
              " simulated result uses uniform random offsets", entry)
        return Distribution()
    lists = [z for z in dist.zones]
    used = _used_directions(st.rw)
    chosen = next((d for d in used if lists[d] is not None), None)
    if chosen is None:
        chosen = next(d for d in range(3) if lists[d] is not None)
    zones = lists[chosen]
    if any(lists[d] != zones for d in used if lists[d] is not None):
        _warn(warnings, st, "random_distribution", f"option '{text}': per-direction zones are"
              f" not modelled; ssdlab uses the {DIRECTIONS[chosen]} list for all I/O", entry)
    assert zones is not None
    if dist.kind == "zoned_abs":
        if any(size <= 0 for _, size in zones):
            _raise(entry, "random_distribution", "zoned_abs needs a size for every zone")
        total = sum(size for _, size in zones)
        if total > region_size:
            _raise(entry, "random_distribution", f"zoned_abs zones cover {int(total)} bytes,"
                   f" more than the job's region of {region_size} bytes")
        zones = [(acc, 100.0 * size / region_size) for acc, size in zones]
    return Distribution(kind="zoned", zones=[Zone(access_pct=a, size_pct=s) for a, s in zones])


def _raise(entry: JobEntry, option: str, message: str) -> None:
    where = entry.state.where.get(option)
    raise FioJobError(message, path=where.path if where else entry.section.path,
                      line=where.line if where else entry.section.line, option=option)


# --------------------------------------------------------------------------- device layout


def split_filenames(value: str) -> list[str]:
    """fio's ``a:b`` list, where ``\\:`` is a colon inside a name."""
    names, current, i = [], "", 0
    while i < len(value):
        c = value[i]
        if c == "\\" and i + 1 < len(value) and value[i + 1] == ":":
            current += ":"
            i += 2
            continue
        if c == ":":
            if current:
                names.append(current)
            current = ""
        else:
            current += c
        i += 1
    if current:
        names.append(current)
    return names


def is_device(name: str) -> bool:
    return name.startswith("/dev/")


@dataclass
class _CloneRegion:
    target: int  # the device it addresses (files live on the first)
    files: list[str]  # empty: the raw device
    devices: list[str]  # /dev names given
    start: int  # offset inside the file (or device) of this clone's region
    size: int | None  # bytes of the region, None: up to the end of the file/device
    io: FioSize | None  # io_size as written
    io_default: int | None  # io amount when io_size is not given (None: region size)
    entry: JobEntry
    clone: int


class _Layout:
    """Places files on the device and computes every clone's region."""

    def __init__(self, entries: list[JobEntry], targets: Targets, warnings: Warnings) -> None:
        self.targets = targets
        self.device_size = targets.sizes[0]  # files are laid out on the first device
        self.warnings = warnings
        self.regions: dict[tuple[int, int], _CloneRegion] = {}
        self.extent_need: dict[str, int | None] = {}
        for number, entry in enumerate(entries):
            for clone in range(entry.state.numjobs):
                region = self._clone_region(entry, clone)
                self.regions[(number, clone)] = region
                for name in region.files:
                    need = None if region.size is None else region.start + region.size
                    if entry.state.filesize:
                        need = entry.state.filesize[0]  # each file is filesize bytes
                    known = self.extent_need.get(name)
                    if need is None:
                        self.extent_need.setdefault(name, None)
                    else:
                        self.extent_need[name] = need if known is None else max(known, need)
        self.base: dict[str, int] = {}
        self.extent: dict[str, int] = {}
        cursor = 0
        for name, need in self.extent_need.items():
            self.base[name] = cursor
            self.extent[name] = need if need is not None else max(self.device_size - cursor, 0)
            cursor += self.extent[name]

    def _bytes(self, entry: JobEntry, option: str, value: FioSize, *, round_up: bool, target: int = 0) -> int:
        st = entry.state
        if isinstance(value, Percent):
            raw = self.targets.sizes[target] * value.value // 100
            align = min(_block_sizes(st, d).min_size for d in range(3))
            return -(-raw // align) * align if round_up else raw // align * align
        if isinstance(value, Zones):
            if not st.zonesize:
                _raise(entry, option, "zone units (z) need zonesize to be set")
            return value.count * st.zonesize
        return value

    def _clone_region(self, entry: JobEntry, clone: int) -> _CloneRegion:
        st = entry.state
        names = split_filenames(st.filename) if st.filename else []
        devices = [n for n in names if is_device(n)]
        files = [] if (not names or devices) else names
        if not names and st.filesize:
            # fio's default files, $jobname.$jobnum.$filenum: nrfiles of them per clone.
            files = [f"{entry.name}.{clone}.{k}" for k in range(st.nrfiles)]
        target = self._target_of(entry, devices)
        start = self._bytes(entry, "offset", st.offset, round_up=True, target=target)
        start += clone * self._bytes(entry, "offset_increment", st.offset_increment, round_up=True, target=target)
        io_default = None
        if files and st.filesize:
            size = self._files_size(entry, len(files), start)
        else:
            size = None if st.size is None else self._bytes(entry, "size", st.size, round_up=False, target=target)
            if files and len(files) > 1 and size is not None:
                size = size // len(files) * len(files)
        return _CloneRegion(target, files, devices, start, size, st.io_size, io_default, entry, clone)

    def _files_size(self, entry: JobEntry, count: int, start: int) -> int:
        """fio's size of a job on ``count`` files of ``filesize`` bytes: each file from the
        offset to its end, or less when ``size`` asks for less (a percentage is of the files)."""
        st = entry.state
        each = st.filesize[0] if st.filesize else 0
        total = count * (each - start) if start < each else 0
        if st.size is None:
            return total
        if isinstance(st.size, Percent):
            align = min(_block_sizes(st, d).min_size for d in range(3))
            asked = count * each * st.size.value // 100 // align * align
        else:
            asked = self._bytes(entry, "size", st.size, round_up=False)
        return min(asked, total)

    def _target_of(self, entry: JobEntry, devices: list[str]) -> int:
        """The device a job's ``/dev`` names select (the first device without one)."""
        if not devices:
            return 0
        t = self.targets
        wanted = {d.removeprefix("/dev/") for d in devices}
        found = {t.names.index(w) for w in wanted if w in t.names}
        missing = sorted(w for w in wanted if w not in t.names)
        inside = [w for w in missing if w in t.members]
        if inside:
            _raise(entry, "filename", f"/dev/{inside[0]} is a member of array {t.members[inside[0]]};"
                   f" jobs address the array (/dev/{t.members[inside[0]]})")
        if not t.strict:
            if missing and t.members:
                # One array alone (--raid): a name other than its own is not the example job
                # file's device the one-drive rule is for; say where the job goes.
                self.warnings.at(entry.state.where.get("filename"), "filename",
                                 f"/dev/{missing[0]} is not a device of this run: the job runs on its one"
                                 f" device, /dev/{t.names[0]}")
            return 0
        if missing:
            _raise(entry, "filename", f"/dev/{missing[0]} names no device of the system"
                   f" (it has {', '.join('/dev/' + n for n in t.names)})")
        if len(found) > 1:
            _raise(entry, "filename", "one job on several devices is not modelled; give each"
                   " device its own job")
        return found.pop()

    def region(self, number: int, clone: int) -> tuple[int, int, int, int]:
        """(target, absolute offset, size, io limit) of one clone."""
        r = self.regions[(number, clone)]
        entry, st = r.entry, r.entry.state
        device_size = self.targets.sizes[r.target]
        if r.files:
            base = self.base[r.files[0]]
            end_of_area = base + sum(self.extent[f] for f in r.files)
        else:
            base, end_of_area = 0, device_size
        offset = base + r.start
        size = r.size if r.size is not None else end_of_area - offset
        if isinstance(st.size, Percent) and not r.files:
            size = min(size, device_size - offset)
        # Blame the option that put the region out: a clone's increment, else where the
        # region starts if that is already outside, else how far it reaches.
        if clone and st.offset_increment:
            option = "offset_increment"
        elif offset >= device_size or st.size is None:
            option = "offset" if st.offset else "filename"
        else:
            option = "size"
        if offset >= device_size:
            _raise(entry, option, f"job '{entry.name}' (clone {clone}) starts at byte {offset}, past the"
                   f" end of the {device_size}-byte device")
        if size <= 0:
            _raise(entry, option, f"job '{entry.name}' (clone {clone}) has an empty region:"
                   f" it starts at byte {offset} of a {device_size}-byte device")
        if offset + size > device_size:
            _raise(entry, option, f"job '{entry.name}' (clone {clone}) addresses bytes"
                   f" {offset}..{offset + size} but the device has {device_size} bytes")
        named = split_filenames(st.filename or "")
        if not self.targets.strict and (len(set(r.devices)) > 1 or (r.devices and len(r.devices) != len(named))):
            self.warnings.at(st.where.get("filename"), "filename", f"filename '{st.filename}':"
                             " every name is mapped to the one simulated device")
        elif r.devices and len(r.devices) != len(named):
            _raise(entry, "filename", "mixing /dev names and file names in one job is not modelled")
        if len(r.files) > 1 and st.filename:  # fio's default files: the nrfiles warning says it
            names = ":".join(r.files)
            where = st.where.get("filename")
            self.warnings.at(where, "filename", f"filename '{names}': the {len(r.files)} files"
                             " are modelled as one contiguous region")
        if r.io is None:
            io = r.io_default if r.io_default is not None else size
        elif isinstance(r.io, Percent):
            io = size * r.io.value // 100
        else:
            io = self._bytes(entry, "io_size", r.io, round_up=False)
        if io <= 0:
            _raise(entry, "io_size", "io_size must be positive")
        return r.target, offset, size, io

