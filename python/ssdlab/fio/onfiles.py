"""fio jobs on files: with a file system on the device (``ssdlab run JOB.fio --fs ext4``), a
job that does not name a device runs on its own files through the file layer, as fio runs
on a mounted file system: ``nrfiles`` files of ``filesize`` bytes (or the job's size shared
among them) per clone, laid out before the run as fio lays them out, in ``/JOB.CLONE``;
``direct=0`` goes through the page cache; ``file_service_type`` (random, roundrobin,
sequential), ``fsync``/``fdatasync``, ``end_fsync`` and ``unlink`` are honoured.

Left as fio's rules are not: a sequential job's offset advances across its files in turn
(fio keeps one offset per file); ``file_service_type``'s zipf, pareto and normal choices and
its ``:N`` batch run as ``random`` and ``roundrobin`` (a warning says so).
"""

from __future__ import annotations

from typing import Any

from ..workload import JobSpec

#: The warnings of the raw-device path that a run on files answers: dropped for its jobs.
_ANSWERED = ("(buffered I/O)", "direct=0 (buffered I/O", "option 'nrfiles", "option 'file_service_type",
             "option 'end_fsync", "option 'unlink", "option 'buffered")

_TRUE = {"1", "true", "yes", "on"}


def _flag(opts: dict[str, str], name: str, default: bool = False) -> bool:
    v = opts.get(name)
    return default if v is None else v.strip().lower() in _TRUE or v.strip() == ""


def _service(value: str | None, warn: list[str], job: str) -> str:
    if value is None:
        return "roundrobin"
    kind, _, batch = value.partition(":")
    kind = kind.strip().lower()
    if kind in ("random", "roundrobin", "sequential") and not batch:
        return kind
    chosen = "roundrobin" if kind == "roundrobin" else "random"
    warn.append(f"job '{job}': file_service_type={value}: simulated as {chosen}")
    return chosen


def on_files(jobs: list[JobSpec], job_options: list[dict[str, str]], global_options: dict[str, str],
             warnings: list[str]) -> tuple[list[JobSpec], list[dict[str, Any]], list[str]]:
    """The jobs that address files moved onto file sets of target 0 (each clone its own set);
    jobs with ``filename=/dev/...`` stay on their device. Returns the jobs, the file sets and
    the warnings (those of the raw-device path a run on files answers are dropped)."""
    out: list[JobSpec] = []
    sets: list[dict[str, Any]] = []
    notes: list[str] = []
    moved: set[str] = set()
    for job, own in zip(jobs, job_options, strict=True):
        opts = {**global_options, **own}
        filename = opts.get("filename", "")
        if filename.startswith("/dev/"):
            out.append(job)
            continue
        if job.target != 0:
            raise ValueError(f"job '{job.name}': on a file system, a job's files are on the first device")
        nrfiles = max(int(opts.get("nrfiles", opts.get("nr_files", "1")) or 1), 1)
        file_bytes = max(job.region_size // nrfiles, 4096)
        direct = _flag(opts, "direct") or not _flag(opts, "buffered", True)
        service = _service(opts.get("file_service_type"), notes, job.name)
        index = len(sets)
        sets.append({"name": f"{job.name}.{job.clone}", "target": 0, "dir": f"/{job.name}.{job.clone}",
                     "entries": nrfiles, "size": {"kind": "fixed", "bytes": file_bytes}, "dir_width": 0,
                     "prealloc": 1.0})
        files = {"set": index, "direct": direct, "service": service, "end_fsync": _flag(opts, "end_fsync"),
                 "unlink": _flag(opts, "unlink"), "program": None}
        out.append(job.model_copy(update={"files": files, "region_offset": 0, "region_size": file_bytes}))
        moved.add(job.name)
    # The raw path's warnings about buffered I/O and files, answered now, when every job runs
    # on files (with a job left on a device they may be its own: kept).
    all_moved = len(moved) == len({j.name for j in jobs})
    kept = [w for w in warnings if not (all_moved and any(a in w for a in _ANSWERED))]
    return out, sets, kept + notes
