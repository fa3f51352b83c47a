"""fio jobs on files: with a file system on the device (``ssdlab run JOB.fio --fs ext4``), a
job that does not name a device runs on its own files through the file layer, as fio runs
on a mounted file system: ``nrfiles`` files of ``filesize`` bytes (or the job's size shared
among them) per clone, laid out before the run as fio lays them out, in ``/JOB.CLONE``;
``direct=0`` goes through the page cache; ``fadvise_hint`` (fio's posix_fadvise of each
file, sequential or random by the job's ``rw`` unless 0: it sets the files' read-ahead),
``file_service_type`` (random, roundrobin, sequential), ``fsync``/``fdatasync``,
``end_fsync`` and ``unlink`` are honoured. Each file
keeps its own offset, per direction, as fio's do (``last_pos``): with roundrobin each I/O
goes to the next file, where that file's stream left off.

fio's metadata engines run as fio runs them (engines/filecreate.c, filestat.c, filedelete.c,
dircreate.c, dirstat.c, dirdelete.c): each I/O is one call on the next file (filecreate:
open(O_CREAT) and close; filestat: stat; filedelete: unlink) or directory (mkdir, stat,
rmdir), once per file a loop, counted in the job's data direction (read unless the job only
writes) with the job's smallest block size, as fio counts it. filestat, filedelete, dirstat
and dirdelete need their files there (fio fails with ENOENT otherwise): they are laid out
first, empty, as filecreate and dircreate leave them. A call that fails stops the job with
its errno, as fio's does.

``openfiles``, ``create_on_open``, ``fallocate`` and ``stat_type`` are honoured where the
model has what they change (a metadata engine opens one file at a time and creates it at
open; stat, lstat and statx are the same path walk here) and warned once each otherwise.
Left as fio's rules are not: ``file_service_type``'s zipf, pareto and normal choices and its
``:N`` batch run as ``random`` and ``roundrobin`` (a warning says so); with ``filesize``
above the block size fio counts ``filesize/bs`` I/Os per file of which only the call is
timed, here one (a warning says so).

Which jobs run on files, and so which warnings of the raw-device path apply, is decided by
the resolver (:func:`~ssdlab.fio.resolve.runs_on_files`): a job that names no block device
when a file system is named, or one that asks for files (buffered I/O, fio's default; file
options; a metadata engine). A buffered job that names a block device goes through that
device's own page cache instead (:func:`~ssdlab.fio.resolve.buffered_on_device`): a set that
is the device itself, one per device.
"""

from __future__ import annotations

from typing import Any

from ..units import ValueProblem, parse_fio_count
from ..workload import BlockSizeDist, JobSpec
from .resolve import METADATA_ENGINES

_TRUE = {"1", "true", "yes", "on"}


def _flag(opts: dict[str, str], name: str, default: bool = False) -> bool:
    v = opts.get(name)
    return default if v is None else v.strip().lower() in _TRUE or v.strip() == ""


def _count_set(opts: dict[str, str], name: str) -> bool:
    """Whether count option ``name`` is given and not 0 (the job's resolution has checked it)."""
    v = opts.get(name)
    if v is None:
        return False
    try:
        return parse_fio_count(v) != 0
    except (ValueError, ValueProblem):
        return v.strip() not in ("", "0")


def _datasync(opts: dict[str, str]) -> bool:
    """fio's ``fdatasync=N`` without ``fsync=N``: the job's flushes are fdatasyncs."""
    return _count_set(opts, "fdatasync") and not _count_set(opts, "fsync")


class _Once:
    """Warnings said once per run, each under its own key."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self._seen: set[str] = set()

    def __call__(self, key: str, message: str) -> None:
        if key not in self._seen:
            self._seen.add(key)
            self.lines.append(message)


def _service(value: str | None, warn: _Once, job: str) -> str:
    if value is None:
        return "roundrobin"
    kind, _, batch = value.partition(":")
    kind = kind.strip().lower()
    if kind in ("random", "roundrobin", "sequential") and not batch:
        return kind
    chosen = "roundrobin" if kind == "roundrobin" else "random"
    warn(f"service:{job}", f"job '{job}': file_service_type={value}: simulated as {chosen}")
    return chosen


def _fadvise(job: JobSpec, opts: dict[str, str]) -> str | None:
    """The advice fio gives each file it opens (``fadvise_hint``, on by default: ioengines.c's
    ``td_io_open_file`` calls ``posix_fadvise`` with POSIX_FADV_RANDOM for a random job and
    POSIX_FADV_SEQUENTIAL otherwise; 0 gives none). The kernel doubles a sequentially advised
    file's read-ahead (mm/fadvise.c): fio's sequential buffered reads go out in windows of
    twice ``read_ahead_kb``."""
    hint = opts.get("fadvise_hint", "1").strip().lower()
    if hint in ("0", "none"):
        return None
    if hint in ("random", "sequential"):
        return hint
    return "random" if job.rw.startswith("rand") else "sequential"


def _min_bs(dists: tuple[BlockSizeDist, ...]) -> int:
    """fio's ``td_min_bs``: the smallest block size of reads and writes."""
    sizes = [d.range_min if d.range_min is not None else min(s for s, _ in d.split) for d in dists[:2]]
    return max(min(sizes), 1)


def _engine_job(job: JobSpec, opts: dict[str, str], engine: str, nrfiles: int, index: int, warn: _Once
                ) -> tuple[JobSpec, dict[str, Any], dict[str, Any]]:
    """A metadata engine's job: one call per file a loop, each an I/O of the job's smallest
    block size (fio's get_file_size gives each file that size)."""
    bs = _min_bs(job.block_sizes)
    dirs = engine.startswith("dir")
    creates = engine in ("filecreate", "dircreate")
    file_bytes = job.region_size // nrfiles
    if file_bytes > bs:
        warn(f"engine-size:{job.name}",
             f"job '{job.name}': ioengine={engine} with files of {file_bytes} bytes and bs={bs}: fio counts "
             f"{file_bytes // bs} I/Os per file of which only the first makes the call; ssdlab counts one per file")
    if opts.get("file_service_type", "roundrobin").strip().lower() != "roundrobin":
        warn(f"engine-service:{job.name}",
             f"job '{job.name}': ioengine={engine}: file_service_type={opts['file_service_type']}: each file is "
             "taken in turn (roundrobin), so that each is made, looked at or removed once a loop")
    fset = {"name": f"{job.name}.{job.clone}", "target": 0, "dir": f"/{job.name}.{job.clone}",
            "entries": nrfiles, "size": {"kind": "fixed", "bytes": 0}, "dir_width": 0,
            # fio's stat and delete engines find the files there (filecreate made them, empty)
            "prealloc": 0.0 if creates else 1.0}
    if dirs:
        fset["dirs"] = True
    unlink = _flag(opts, "unlink")
    if unlink and engine not in ("filecreate", "filestat"):
        warn(f"engine-unlink:{job.name}", f"job '{job.name}': unlink=1 with ioengine={engine}: ignored (there "
             "are no files of the job's to delete at its end)")
        unlink = False
    files = {"set": index, "direct": False, "service": "roundrobin", "end_fsync": False, "datasync": False,
             "unlink": unlink, "program": None, "engine": engine}
    moved = job.model_copy(update={"files": files, "region_offset": 0, "region_size": bs,
                                   "io_limit": nrfiles * bs})
    return moved, fset, files


def _file_options(job: JobSpec, opts: dict[str, str], nrfiles: int, engine: str | None, warn: _Once) -> None:
    """openfiles, create_on_open, fallocate and stat_type: honoured where the model has what
    they change, each warned once otherwise."""
    if engine is None:
        openfiles = opts.get("openfiles")
        if openfiles is not None and 0 < parse_fio_count(openfiles) < nrfiles:
            warn("openfiles", f"job '{job.name}': openfiles={openfiles} with {nrfiles} files: fio closes and "
                 "reopens files to keep that many open; here the files stay open (no open or close is timed)")
        if _flag(opts, "create_on_open"):
            warn("create_on_open", f"job '{job.name}': create_on_open=1: the files are laid out before the run, "
                 "as without it")
        fallocate = opts.get("fallocate", "").strip().lower()
        if fallocate not in ("", "none", "0"):
            warn("fallocate", f"job '{job.name}': fallocate={fallocate}: the files are laid out written whole "
                 "(fio writes them after preallocating); the unwritten extents fallocate makes first are not "
                 "modelled, and the layout is not timed")
    if "stat_type" in opts and engine not in ("filestat", "dirstat"):
        warn("stat_type", f"job '{job.name}': stat_type is an option of fio's filestat and dirstat engines; "
             "ignored")


def _on_device_cache(job: JobSpec, opts: dict[str, str], sets: list[dict[str, Any]],
                     device_sets: dict[int, int], device_sizes: tuple[int, ...]) -> JobSpec:
    """A buffered job on its block device: its I/O goes to the set that is the device (one
    per device, shared by its jobs as Linux shares the device's inode and cache), at the
    device's own offsets."""
    target = job.target
    if target not in device_sets:
        device_sets[target] = len(sets)
        sets.append({"name": f"dev{target}", "target": target, "dir": "/", "entries": 1,
                     "size": {"kind": "fixed", "bytes": device_sizes[target]}, "dir_width": 0,
                     "prealloc": 1.0, "block_device": True})
    files: dict[str, Any] = {"set": device_sets[target], "direct": False, "service": "sequential",
                             "end_fsync": _flag(opts, "end_fsync"), "datasync": False, "unlink": False, "program": None}
    advice = _fadvise(job, opts)
    if advice is not None:
        files["fadvise"] = advice
    return job.model_copy(update={"files": files})


def on_files(jobs: list[JobSpec], job_options: list[dict[str, str]], global_options: dict[str, str],
             warnings: list[str], flags: list[bool], device_cache: list[bool] | None = None,
             device_sizes: tuple[int, ...] = ()) -> tuple[list[JobSpec], list[dict[str, Any]], list[str]]:
    """The jobs the resolver put on files (``flags``, per clone) moved onto file sets of
    target 0 (each clone its own set), and those it put on their device's page cache
    (``device_cache``) onto one set per device that is the device itself (``device_sizes``
    bytes each; the job's offsets are the device's); the others stay on their device. Returns
    the jobs, the file sets and the warnings (the resolver's, then the file layer's own)."""
    out: list[JobSpec] = []
    sets: list[dict[str, Any]] = []
    device_sets: dict[int, int] = {}
    warn = _Once()
    cached = device_cache if device_cache is not None else [False] * len(jobs)
    for job, own, flag, on_cache in zip(jobs, job_options, flags, cached, strict=True):
        opts = {**global_options, **own}
        if on_cache:
            out.append(_on_device_cache(job, opts, sets, device_sets, device_sizes))
            continue
        if not flag:
            out.append(job)
            continue
        if job.target != 0:
            raise ValueError(f"job '{job.name}': on a file system, a job's files are on the first device")
        nrfiles = max(int(opts.get("nrfiles", opts.get("nr_files", "1")) or 1), 1)
        engine = opts.get("ioengine", "").split(":", 1)[0].strip()
        engine = engine if engine in METADATA_ENGINES else None
        _file_options(job, opts, nrfiles, engine, warn)
        if engine is not None:
            moved, fset, _ = _engine_job(job, opts, engine, nrfiles, len(sets), warn)
            sets.append(fset)
            out.append(moved)
            continue
        file_bytes = max(job.region_size // nrfiles, 4096)
        direct = _flag(opts, "direct") or not _flag(opts, "buffered", True)
        service = _service(opts.get("file_service_type"), warn, job.name)
        index = len(sets)
        fset = {"name": f"{job.name}.{job.clone}", "target": 0, "dir": f"/{job.name}.{job.clone}",
                "entries": nrfiles, "size": {"kind": "fixed", "bytes": file_bytes}, "dir_width": 0,
                # laid out (written or fallocated) just before the job: the blocks mapping
                # them are still cached, their data not (fio drops it, invalidate=1)
                "prealloc": 1.0, "maps_cached": True}
        if str(job.rw) in ("write", "randwrite") and not _flag(opts, "overwrite"):
            # fio writes a file out first only for a job that reads it or with overwrite=1
            # (filesetup.c's new_layout); a write-only job's is fallocated: unwritten extents
            fset["unwritten"] = True
        sets.append(fset)
        files = {"set": index, "direct": direct, "service": service, "end_fsync": _flag(opts, "end_fsync"),
                 "datasync": _datasync(opts), "unlink": _flag(opts, "unlink"), "program": None}
        advice = _fadvise(job, opts)
        if advice is not None:
            files["fadvise"] = advice
        out.append(job.model_copy(update={"files": files, "region_offset": 0, "region_size": file_bytes}))
    return out, sets, list(warnings) + warn.lines
