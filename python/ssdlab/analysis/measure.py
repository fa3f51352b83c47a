"""Real drives beside simulated ones: run the real fio on a file or block device and sample
``/proc/diskstats`` of the device behind it, giving a :class:`MeasuredResult` that has the
same JSON, pandas tables and reports as a simulation's :class:`~ssdlab.results.RunResult`.

* fio runs with ``--output-format=normal,json+`` (its own text report and its JSON with the
  latency histograms' bins) on a copy of the job file whose every job's file is the target:
  a ``[global]`` section with ``filename=TARGET`` comes first, and the job file's own
  ``filename``, ``filename_format`` and ``directory`` lines are dropped;
* the device behind the target is found from its ``st_dev`` (``st_rdev`` for a block
  device): ``/sys/dev/block/MAJ:MIN``; a partition is measured on its disk, whose queue
  serves it (fio's ``disk_util`` does the same). A file on a file system with no block
  device (tmpfs, overlay) has none: measured without iostat, and said so;
* diskstats are read just before fio starts, just after it ends, and every ``interval``
  between; iostat -x over the run and per interval is computed from them as for a
  simulation (:mod:`ssdlab.iostat`), over wall-clock time (fio's start-up and file layout
  included);
* what only a simulation sees (die and channel utilisation, WAF, erases) is absent: the
  ``ssdlab`` object says so and :meth:`MeasuredResult.internal` raises.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import stat
import subprocess
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..iostat import format_table, iostat_fields
from ..jsonout import finite

__all__ = ["MeasureError", "MeasuredResult", "block_device", "measure", "read_diskstats"]

#: /proc/diskstats columns after major, minor and name, in the core's counter names
DISKSTATS_FIELDS = ("read_ios", "read_merges", "read_sectors", "read_ticks_ms",
                    "write_ios", "write_merges", "write_sectors", "write_ticks_ms",
                    "in_flight", "io_ticks_ms", "time_in_queue_ms",
                    "discard_ios", "discard_merges", "discard_sectors", "discard_ticks_ms",
                    "flush_ios", "flush_ticks_ms")

INTERNAL_ABSENT = ("measured on a real device: what only a simulation sees (die, channel and controller "
                   "utilisation, NAND traffic, WAF, erases) is absent")

_DROPPED = ("filename", "filename_format", "directory")


class MeasureError(ValueError):
    """fio missing or failing, or a target that cannot be measured (one line)."""


@dataclass(frozen=True)
class BlockDevice:
    """The block device behind a path: its name in /proc/diskstats, and the partition the
    path lies on when that is measured on its disk."""

    name: str
    partition: str | None = None


def block_device(path: str | os.PathLike[str], sys_root: str = "/sys") -> BlockDevice | None:
    """The disk behind ``path`` (a file, a directory or a block device), or None when its file
    system has no block device (tmpfs, overlay, proc...)."""
    st = os.stat(path)
    dev = st.st_rdev if stat.S_ISBLK(st.st_mode) else st.st_dev
    return disk_of(os.major(dev), os.minor(dev), sys_root)


def disk_of(major: int, minor: int, sys_root: str = "/sys") -> BlockDevice | None:
    """The disk of device number ``major:minor`` as sysfs shows it (None: no block device)."""
    link = Path(sys_root) / "dev" / "block" / f"{major}:{minor}"
    if not link.exists():
        return None
    real = link.resolve()
    if (real / "partition").exists():
        return BlockDevice(real.parent.name, real.name)
    return BlockDevice(real.name)


def read_diskstats(name: str, proc: str = "/proc/diskstats") -> dict[str, int]:
    """One device's /proc/diskstats counters (kernels before 4.18 have no discard columns,
    before 5.5 no flush columns: those read 0)."""
    with open(proc) as f:
        for line in f:
            parts = line.split()
            if len(parts) >= 14 and parts[2] == name:
                values = [int(x) for x in parts[3:3 + len(DISKSTATS_FIELDS)]]
                values += [0] * (len(DISKSTATS_FIELDS) - len(values))
                return dict(zip(DISKSTATS_FIELDS, values))
    raise MeasureError(f"{proc}: no line for device {name}")


class _Sampler:
    """Reads a device's diskstats now, every ``interval_ns`` on a thread, and at stop."""

    def __init__(self, name: str, interval_ns: int | None) -> None:
        self.name = name
        self.interval_ns = interval_ns
        self.samples: list[tuple[int, dict[str, int]]] = []
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def _take(self) -> None:
        self.samples.append((time.monotonic_ns(), read_diskstats(self.name)))

    def start(self) -> None:
        self._take()
        if self.interval_ns:
            self._thread = threading.Thread(target=self._run, daemon=True)
            self._thread.start()

    def _run(self) -> None:
        start = self.samples[0][0]
        k = 1
        while not self._stop.wait(max(0.0, (start + k * self.interval_ns - time.monotonic_ns()) / 1e9)):
            self._take()
            k += 1

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
        self._take()


def job_for_target(text: str, target: str) -> str:
    """The job file's text with every job's I/O sent to ``target``."""
    lines = [ln for ln in text.splitlines()
             if ln.split("=", 1)[0].strip().lower() not in _DROPPED]
    return f"[global]\nfilename={target}\n" + "\n".join(lines) + "\n"


def split_fio_output(out: str) -> tuple[dict[str, Any], str]:
    """fio's JSON and its normal report from ``--output-format=normal,json+`` (fio writes the
    JSON first; lines before it are its start-up messages)."""
    start = re.search(r"^\{", out, flags=re.M)
    if start is None:
        raise MeasureError("fio printed no JSON (its output starts: "
                           f"{out.strip().splitlines()[0] if out.strip() else 'nothing'})")
    from pydantic import ValidationError

    from ..fioout.schema import FioRun, describe

    try:
        data, end = json.JSONDecoder().raw_decode(out, start.start())
        FioRun.model_validate(data)
    except (json.JSONDecodeError, RecursionError) as e:
        raise MeasureError(f"fio's JSON output cannot be read: {e}") from None
    except ValidationError as e:
        raise MeasureError(f"fio's JSON output is not as expected: {describe(e)}") from None
    return data, (out[:start.start()] + out[end:].lstrip("\n"))


def measure(job: str | os.PathLike[str], target: str | os.PathLike[str], *,
            interval: str | float | None = None, fio: str = "fio") -> "MeasuredResult":
    """Run the real fio job file ``job`` on ``target`` (a file, created by fio if need be, or a
    block device) and sample the diskstats of the device behind it (see the module)."""
    from ..units import parse_time_ns

    job = Path(job)
    if not job.is_file():
        raise MeasureError(f"{job}: no such job file")
    target = Path(target)
    if not target.exists():
        if str(target).startswith("/dev/"):
            raise MeasureError(f"--target {target}: no such device")
        if not target.parent.is_dir():
            raise MeasureError(f"--target {target}: no such directory ({target.parent})")
    elif target.is_dir():
        raise MeasureError(f"--target {target}: is a directory; give a file or a block device")
    interval_ns = parse_time_ns(interval, "s") if interval is not None else None
    if interval_ns is not None and interval_ns <= 0:
        raise MeasureError("--interval: must be positive")
    # The user's own mistakes (job file, target, interval) first: they are worth naming even
    # on a machine without fio.
    exe = shutil.which(fio)
    if exe is None:
        raise MeasureError(f"{fio}: not found on PATH (install fio, e.g. Debian's fio package)")
    probe = target if target.exists() else target.parent
    dev = block_device(probe)
    warnings: list[str] = []
    if dev is None:
        warnings.append(f"{target}: its file system has no block device (tmpfs or overlay?): "
                        "no diskstats, no iostat")
    from ..arguments import InputFileError, read_text

    try:
        job_text = read_text(job)
    except InputFileError as e:
        raise MeasureError(str(e)) from None
    text = job_for_target(job_text, str(target.resolve() if target.exists() else target.absolute()))
    sampler = _Sampler(dev.name, interval_ns) if dev else None
    with tempfile.TemporaryDirectory(prefix="ssdlab-measure-") as tmp:
        jobfile = Path(tmp) / job.name
        jobfile.write_text(text)
        t0 = time.monotonic_ns()
        if sampler:
            sampler.start()
        try:
            # in the working directory, where fio writes its log files
            p = subprocess.run([exe, "--output-format=normal,json+", str(jobfile)], capture_output=True,
                               text=True)
        finally:
            if sampler:
                sampler.stop()
        t1 = time.monotonic_ns()
    if p.returncode != 0:
        first = next((ln.strip() for ln in p.stderr.splitlines() if ln.strip()),
                     next((ln.strip() for ln in p.stdout.splitlines() if "error" in ln.lower()), ""))
        said = first if len(first) <= 200 else first[:200] + "..."
        raise MeasureError(f"{job}: fio failed on it (exit status {p.returncode}): {said or 'no message'}")
    data, normal = split_fio_output(p.stdout)
    for ln in p.stderr.splitlines():
        if ln.strip():
            warnings.append(f"fio: {ln.strip()}")
    return MeasuredResult(fio=data, normal=normal, target=str(target), device=dev,
                          samples=sampler.samples if sampler else [], wall_ns=t1 - t0, warnings=warnings)


def _strip_bins(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _strip_bins(v) for k, v in value.items() if k != "bins"}
    if isinstance(value, list):
        return [_strip_bins(v) for v in value]
    return value


@dataclass
class MeasuredResult:
    """A real fio run: the same views as a simulation's :class:`~ssdlab.results.RunResult`
    (fio JSON, pandas tables, iostat), without what only a simulation sees."""

    fio: dict[str, Any]
    normal: str
    target: str
    device: BlockDevice | None
    samples: list[tuple[int, dict[str, int]]]
    wall_ns: int
    warnings: list[str] = field(default_factory=list)

    measured = True

    @property
    def elapsed_ns(self) -> int:
        """Wall-clock time of the diskstats window (fio's whole run)."""
        if len(self.samples) >= 2:
            return self.samples[-1][0] - self.samples[0][0]
        return self.wall_ns

    @property
    def all_device_names(self) -> list[str]:
        return [self.device.name] if self.device else []

    device_names = all_device_names

    def _disk(self, name: str | None) -> tuple[dict[str, int], dict[str, int]]:
        if self.device is None or len(self.samples) < 2:
            raise KeyError(f"{self.target}: no block device behind it, so no diskstats")
        if name is not None and name != self.device.name:
            raise KeyError(f"no device '{name}' (measured: {self.device.name})")
        return self.samples[0][1], self.samples[-1][1]

    def iostat(self, name: str | None = None) -> dict[str, float]:
        """iostat -x of the device behind the target over the run."""
        before, after = self._disk(name)
        return iostat_fields(before, after, max(self.elapsed_ns / 1e6, 1e-9))

    def iostat_table(self):
        import pandas as pd

        rows = [{"device": n, **self.iostat(n)} for n in self.all_device_names]
        return pd.DataFrame(rows).set_index("device") if rows else pd.DataFrame()

    def iostat_intervals(self) -> list[tuple[float, float, list[tuple[str, dict[str, float]]]]]:
        """iostat -x per sampling interval (with ``interval``)."""
        if self.device is None:
            return []
        t0 = self.samples[0][0] if self.samples else 0
        out = []
        for (ta, a), (tb, b) in zip(self.samples, self.samples[1:]):
            if tb > ta:
                out.append(((ta - t0) / 1e9, (tb - t0) / 1e9,
                            [(self.device.name, iostat_fields(a, b, (tb - ta) / 1e6))]))
        return out

    def timeseries(self, name: str | None = None) -> list[dict[str, float]]:
        """Per interval: the device's iostat fields (the host's own rates are in fio's logs)."""
        self._disk(name)
        return [{"t_s": end, **fields} for _, end, [(_, fields)] in self.iostat_intervals()]

    def timeseries_table(self, name: str | None = None):
        import pandas as pd

        return pd.DataFrame(self.timeseries(name))

    def internal(self, name: str | None = None) -> dict[str, Any]:
        raise ValueError(INTERNAL_ABSENT)

    def disk_util(self) -> list[dict[str, Any]]:
        """fio's own ``disk_util`` (fio reads the same diskstats)."""
        return list(self.fio.get("disk_util", []))

    def to_fio_json(self, plus: bool = False) -> dict[str, Any]:
        """fio's JSON as fio wrote it (``plus``: with the histograms' bins) and an ``ssdlab``
        object like a simulation's: iostat from the sampled diskstats, no device internals."""
        out = dict(self.fio if plus else _strip_bins(self.fio))
        ssdlab: dict[str, Any] = {
            "measured": True,
            "target": self.target,
            "device": self.device.name if self.device else None,
            "wall_time_s": self.elapsed_ns / 1e9,
            "devices": [],
            "internal": INTERNAL_ABSENT,
            "iostat": [{"name": n, **self.iostat(n)} for n in self.all_device_names] if len(self.samples) >= 2 else [],
            "warnings": list(self.warnings),
        }
        if self.device and self.device.partition:
            ssdlab["partition"] = self.device.partition
        if len(self.samples) > 2:
            ssdlab["timeseries"] = self.timeseries()
        out["ssdlab"] = ssdlab
        return finite(out)

    def to_pandas(self):
        """One row per job and direction that did I/O, as :meth:`RunResult.to_pandas`."""
        return fio_json_table(self.fio)

    def total_iops(self, direction: str = "all") -> float:
        dirs = ("read", "write", "trim") if direction == "all" else (direction,)
        return sum(j[d]["iops"] for j in self.fio.get("jobs", []) for d in dirs if d in j)

    def format_normal(self) -> str:
        """fio's own text report, then iostat -x over the run (and per interval)."""
        lines = [self.normal.rstrip("\n"), ""]
        if self.device is not None and len(self.samples) >= 2:
            part = f" (partition {self.device.partition} measured on its disk)" if self.device.partition else ""
            lines.append(f"iostat -x over the run ({self.elapsed_ns / 1e9:.2f} s of wall clock), "
                         f"from /proc/diskstats of {self.device.name}{part}:")
            lines.append(format_table([(n, self.iostat(n)) for n in self.all_device_names]))
            for start, end, rows in self.iostat_intervals() if len(self.samples) > 2 else []:
                lines += ["", f"iostat -x {start:.1f}-{end:.1f} s:", format_table(rows)]
        lines += ["", f"Device internals: {INTERNAL_ABSENT}."]
        return "\n".join(lines) + "\n"


def _pct(lat: dict[str, Any], p: str) -> float:
    """A percentile of fio's latency object (ns), whatever its key precision."""
    table = lat.get("percentile") or {}
    for k, v in table.items():
        if abs(float(k) - float(p)) < 1e-9:
            return float(v)
    return float("nan")


def fio_json_table(data: dict[str, Any]):
    """fio's JSON (real or simulated) as :meth:`RunResult.to_pandas`'s table."""
    import pandas as pd

    rows = []
    for j in data.get("jobs", []):
        opts = {**data.get("global options", {}), **j.get("job options", {})}
        grouped = opts.get("group_reporting") is not None
        for d in ("read", "write", "trim", "sync"):
            r = j.get(d)
            if not r or not r.get("total_ios"):
                continue
            if d == "sync":
                lat = r.get("lat_ns", {})
                rows.append({"job": j["jobname"], "group": j["groupid"], "clones": 1, "direction": d,
                             "ios": r["total_ios"], "bytes": 0, "iops": 0.0, "bw_bytes": 0.0,
                             "runtime_s": j.get("job_runtime", 0) / 1e3,
                             "clat_mean_us": lat.get("mean", 0) / 1e3, "clat_stddev_us": lat.get("stddev", 0) / 1e3,
                             "clat_p50_us": _pct(lat, "50") / 1e3, "clat_p99_us": _pct(lat, "99") / 1e3,
                             "clat_p99.9_us": _pct(lat, "99.9") / 1e3, "lat_mean_us": lat.get("mean", 0) / 1e3,
                             "slat_mean_us": 0.0})
                continue
            clat = r["clat_ns"]
            rows.append({
                "job": j["jobname"], "group": j["groupid"],
                "clones": int(opts.get("numjobs", 1)) if grouped else 1, "direction": d,
                "ios": r["total_ios"], "bytes": r["io_bytes"], "iops": float(r["iops"]),
                "bw_bytes": float(r["bw_bytes"]), "runtime_s": r["runtime"] / 1e3,
                "clat_mean_us": clat["mean"] / 1e3, "clat_stddev_us": clat["stddev"] / 1e3,
                "clat_p50_us": _pct(clat, "50") / 1e3, "clat_p99_us": _pct(clat, "99") / 1e3,
                "clat_p99.9_us": _pct(clat, "99.9") / 1e3,
                "lat_mean_us": r["lat_ns"]["mean"] / 1e3, "slat_mean_us": r["slat_ns"]["mean"] / 1e3,
            })
    return pd.DataFrame(rows)
