"""fio's log files: ``write_bw_log``, ``write_iops_log`` and ``write_lat_log`` (``_lat``,
``_clat`` and ``_slat`` files), named and laid out as fio names and lays them out, so that
fio's own tools (fio_generate_plots, fio2gnuplot, fiologparser, fio-plot) read them.

A file is ``PREFIX_TYPE.N.log`` (N: the job's number among all jobs, from 1), or
``PREFIX_TYPE.log`` with ``per_job_logs=0`` (all clones in one file). Each line is
``time (ms), value, direction (0 read, 1 write, 2 trim), block size, [offset,] priority``
(the offset only with ``log_offset=1``; priority 0), as fio's HOWTO ("Log File Formats")
gives it. Times count from the start of measurement (after ``ramp_time``), as fio's do.

The lines come from the I/O log the core keeps for each job that asks for one
(``metrics/jobstats.rs``):

* without ``log_avg_msec`` (fio's default), a line per I/O: the bandwidth line is the
  I/O's bytes over its completion latency (``bytes * 1000000 / clat_ns``, fio's per-I/O
  sample), the IOPS line 1, the latency lines the I/O's own lat, clat and slat, with its
  size and offset; the slat line is stamped when the I/O was submitted, the others when it
  completed;
* with ``log_avg_msec``, a line per direction and window with I/O: the window's bytes
  (I/Os) times 1000 over its length in ms (then / 1024 for KiB/s), the latencies' means;
  block size and offset 0, as fio writes averaged lines. The last window ends with the job.
  ``log_window_value=max`` logs the window's largest latencies instead of their means;
  ``both`` logs the mean and then the maximum (a bandwidth or IOPS line gives its one value
  twice: a window has one rate, as fio's documentation says).

A synchronous engine's slat file is empty, as fio's is (fio does not time their submission).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from ..fio.reporting import JobReport
from ..fio.resolve import completes_in_call

if TYPE_CHECKING:
    from ..results import RunResult

MS = 1_000_000


def _line(t_ns: int, value: int | tuple[int, int], d: int, bs: int, offset: int, rep: JobReport) -> str:
    """A log line; ``value`` is a pair (mean, maximum) with ``log_window_value=both``."""
    values = list(value) if isinstance(value, tuple) else [value]
    cols = [t_ns // MS, *values, d, bs] + ([offset] if rep.log_offset else []) + [0]
    return ", ".join(str(c) for c in cols)


def _window_value(mean: int, largest: int, rep: JobReport) -> int | tuple[int, int]:
    """What a windowed line gives of a latency: fio's ``log_window_value``."""
    if rep.log_max_value == 0:
        return mean
    return largest if rep.log_max_value == 1 else (mean, largest)


def log_lines(r: "RunResult") -> dict[str, list[tuple[int, str]]]:
    """File name -> (time ns, line) of every log the jobs ask for."""
    reports = list(getattr(r.spec, "job_reports", []) or [])
    files: dict[str, list[tuple[int, str]]] = {}
    for i, (job, st) in enumerate(zip(r.spec.core["jobs"], r.core["jobs"])):
        rep = reports[i] if i < len(reports) else None
        if rep is None or not (rep.bw_log or rep.iops_log or rep.lat_log):
            continue
        epoch = st["measure_start_ns"]
        window = int(job.get("log_window_ns") or 0)
        sync = completes_in_call(rep.ioengine, int(job["iodepth"]))
        out: dict[str, list[tuple[int, str]]] = {}
        for t, d, ios, nbytes, offset, slat, clat, max_slat, max_clat, max_lat in st.get("log", []):
            rel = t - epoch
            if window:
                start = (rel - 1) // window * window if rel > 0 else 0
                span_ms = max((rel - start) // MS, 1)
                rate_b, rate_io = nbytes * 1000 // span_ms // 1024, ios * 1000 // span_ms
                if rep.log_max_value == 2:
                    rate_b, rate_io = (rate_b, rate_b), (rate_io, rate_io)
                lat = _window_value((slat + clat) // ios, max_lat, rep)
                c, s = _window_value(clat // ios, max_clat, rep), _window_value(slat // ios, max_slat, rep)
                bs, at_submit = 0, rel
            else:
                rate_b, rate_io = (nbytes * 1_000_000 // clat if clat else 0), 1
                lat, c, s, bs, at_submit = slat + clat, clat, slat, nbytes, rel - clat
            if rep.bw_log:
                out.setdefault("bw", []).append((rel, _line(rel, rate_b, d, bs, offset, rep)))
            if rep.iops_log:
                out.setdefault("iops", []).append((rel, _line(rel, rate_io, d, bs, offset, rep)))
            if rep.lat_log:
                out.setdefault("lat", []).append((rel, _line(rel, lat, d, bs, offset, rep)))
                out.setdefault("clat", []).append((rel, _line(rel, c, d, bs, offset, rep)))
                if not sync:
                    out.setdefault("slat", []).append((at_submit, _line(at_submit, s, d, bs, offset, rep)))
        for kind, fname in _job_log_names(i, rep):
            # every file fio would open exists, an empty one too (fio's slat of a sync engine)
            files.setdefault(fname, []).extend(out.get(kind, []))
    return files


def _job_log_names(i: int, rep: JobReport) -> list[tuple[str, str]]:
    """(kind, file name) of each log the ``i``-th job clone writes."""
    kinds = [("bw", rep.bw_log), ("iops", rep.iops_log)]
    kinds += [(k, rep.lat_log) for k in ("lat", "clat", "slat")] if rep.lat_log else []
    return [(kind, f"{prefix}_{kind}.{i + 1}.log" if rep.per_job_logs else f"{prefix}_{kind}.log")
            for kind, prefix in kinds if prefix]


_OPTION = {"bw": "write_bw_log", "iops": "write_iops_log", "lat": "write_lat_log", "clat": "write_lat_log",
           "slat": "write_lat_log"}


def log_names(spec) -> dict[str, str]:
    """The log files a run (its :class:`~ssdlab.api.RunSpec`) will write, each with the job
    option that asks for it, known before the run: a path that cannot be written is refused
    before the simulation, as ``--output`` is."""
    names: dict[str, str] = {}
    for i, rep in enumerate(getattr(spec, "job_reports", []) or []):
        names.update((fname, _OPTION[kind]) for kind, fname in _job_log_names(i, rep))
    return names


def write_logs(r: "RunResult", directory: str | Path = ".") -> list[Path]:
    """Write the jobs' log files (relative names under ``directory``, which is made if need
    be), each whole or not at all; their paths. A directory in a log's own name must exist, as
    fio's must."""
    from ..outfiles import write_whole

    Path(directory).mkdir(parents=True, exist_ok=True)
    out = []
    for fname, lines in log_lines(r).items():
        path = Path(directory) / fname
        lines.sort(key=lambda x: x[0])
        write_whole(path, "".join(line + "\n" for _, line in lines))
        out.append(path)
    return out
