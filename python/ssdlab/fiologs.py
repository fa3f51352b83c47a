"""fio's log files: ``write_bw_log``, ``write_iops_log`` and ``write_lat_log`` (``_lat``,
``_clat`` and ``_slat`` files), named and laid out as fio names and lays them out, so that
fio's own tools (fio_generate_plots, fio2gnuplot, fiologparser) read them.

A file is ``PREFIX_TYPE.N.log`` (N: the job's number among all jobs, from 1), or
``PREFIX_TYPE.log`` with ``per_job_logs=0`` (all clones in one file). Each line is
``time (ms), value, direction (0 read, 1 write), block size, [offset,] priority``: bandwidth
in KiB/s, IOPS, latencies in ns; the offset column only with ``log_offset=1``.

What differs from fio, and why: the core returns no per-I/O times, so every line is a
window's average, as fio writes with ``log_avg_msec`` (block size and offset 0, as fio
writes them for averaged lines). Without ``log_avg_msec`` fio would write one line per I/O;
here the windows are ``api.PER_IO_LOG_WINDOW_MS`` long. The values come from the time series
as :mod:`ssdlab.fiosamples` describes (latencies: the job's mean scaled by its device's
service time in the window).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from .fio.reporting import JobReport
from .fioview import is_sync_engine
from .fiosamples import DIRS, clone_series, device_latency_ratio, rate_samples

if TYPE_CHECKING:
    from .results import RunResult


def _windows(start_ns: int, measure_ns: int, end_ns: int, avg_ms: int) -> list[int]:
    """Window edges every ``avg_ms`` from the job's start, those after its ramp, and the
    job's end (fio writes the last, partial window when the job ends)."""
    step = avg_ms * 1_000_000
    edges = list(range(start_ns, end_ns, step)) + [end_ns]
    while len(edges) > 2 and edges[1] <= measure_ns:
        edges.pop(0)
    return edges


def _line(t_ms: int, value: int, d: int, rep: JobReport) -> str:
    cols = [t_ms, value, d, 0] + ([0] if rep.log_offset else []) + [0]
    return ", ".join(str(c) for c in cols)


def log_lines(r: "RunResult") -> dict[str, list[tuple[int, str]]]:
    """File name -> (time ns, line) of every log the jobs ask for."""
    from .api import PER_IO_LOG_WINDOW_MS

    reports = list(getattr(r.spec, "job_reports", []) or [])
    series = clone_series(r.core)
    files: dict[str, list[tuple[int, str]]] = {}
    for i, (job, st) in enumerate(zip(r.spec.core["jobs"], r.core["jobs"])):
        rep = reports[i] if i < len(reports) else None
        if rep is None or not (rep.bw_log or rep.iops_log or rep.lat_log):
            continue
        avg = rep.log_avg_msec or PER_IO_LOG_WINDOW_MS
        edges = _windows(st["start_ns"], st["measure_start_ns"], st["end_ns"], avg)
        if len(edges) < 2:
            continue

        def name(prefix: str, kind: str) -> str:
            return f"{prefix}_{kind}.{i + 1}.log" if rep.per_job_logs else f"{prefix}_{kind}.log"

        def add(prefix: str, kind: str, entries: list[tuple[int, int, int]]) -> None:
            lines = files.setdefault(name(prefix, kind), [])
            for t, value, d in entries:
                lines.append((t, _line((t - st["start_ns"]) // 1_000_000, value, d, rep)))

        spans = [(a, b) for a, b in zip(edges, edges[1:])]
        for prefix, kind, what in ((rep.bw_log, "bw", "bytes"), (rep.iops_log, "iops", "ios")):
            if not prefix:
                continue
            entries = []
            for k, d in enumerate(DIRS):
                if not st[d]["ios"]:
                    continue
                for a, b in spans:
                    ms = (b - a) / 1e6
                    delta = series[i].at(d, b, what) - series[i].at(d, a, what)
                    if delta < 0.5 or ms <= 0:
                        continue
                    rate = int(delta * 1000 / ms)
                    entries.append((b, rate // 1024 if what == "bytes" else rate, k))
            entries.sort(key=lambda e: (e[0], e[2]))
            add(prefix, kind, entries)
        if rep.lat_log:
            lat, clat, slat = [], [], []
            sync = is_sync_engine(rep.ioengine) or (rep.ioengine == "null" and int(job["iodepth"]) == 1)
            for k, d in enumerate(DIRS):
                if not st[d]["ios"]:
                    continue
                ratios = dict(device_latency_ratio(r.core, int(job.get("target", 0)), d, edges,
                                                   st["measure_start_ns"], st["end_ns"]))
                s_mean = 0.0 if sync else st[d]["slat"]["mean"]
                for a, b in spans:
                    if b not in ratios or series[i].at(d, b, "ios") - series[i].at(d, a, "ios") < 0.5:
                        continue
                    c = st[d]["clat"]["mean"] * ratios[b]
                    clat.append((b, int(c + 0.5), k))
                    lat.append((b, int(c + s_mean + 0.5), k))
                    if not sync:
                        slat.append((b, int(s_mean + 0.5), k))
            for kind, entries in (("lat", lat), ("clat", clat), ("slat", slat)):
                entries.sort(key=lambda e: (e[0], e[2]))
                add(rep.lat_log, kind, entries)
    return files


def write_logs(r: "RunResult", directory: str | Path = ".") -> list[Path]:
    """Write the jobs' log files (relative names under ``directory``); their paths."""
    out = []
    for fname, lines in log_lines(r).items():
        path = Path(directory) / fname
        path.parent.mkdir(parents=True, exist_ok=True)
        lines.sort(key=lambda x: x[0])
        path.write_text("".join(line + "\n" for _, line in lines))
        out.append(path)
    return out
