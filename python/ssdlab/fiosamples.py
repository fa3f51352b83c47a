"""Per-job bandwidth, IOPS and latency over time, as fio samples them, from the simulation's
time series.

fio samples each job's bandwidth and IOPS every ``bwavgtime``/``iopsavgtime`` (500 ms by
default): the bytes (I/Os) the job completed in the window, divided by the window, in KiB/s
(I/Os per second), integer arithmetic, a window without I/O giving no sample. Its log files
(``write_bw_log`` ...) with ``log_avg_msec`` hold one line per window and direction.

What the core returns: cumulative completed bytes and I/Os per direction (read, write) of
the *whole host* at each sample time, and each device's /proc/diskstats. So:

* a job's counts in a window are the host's, shared among the jobs active then in proportion
  to their average rates over the run (each job's own totals are exact). Where one job is the
  only one doing a direction in a window, as in a one-job run or jobs separated by
  ``stonewall``, that is exactly its own count; jobs running side by side get the host's
  ups and downs in proportion, not their own;
* windows between two sample times are read from the cumulative counts by linear
  interpolation (exact when the windows fall on sample times, which ``api.build`` arranges);
* a job's latency in a window (for ``write_lat_log``) is its mean over the run scaled by how
  its device's mean service time (diskstats ticks per I/O) in the window compares with the
  device's over the job's run: the job's mean stays exact, the ups and downs are the device's.

Trims are not in the host's time series: they get no bandwidth or IOPS samples.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass, field
from typing import Any

DIRS = ("read", "write")


@dataclass
class CloneSeries:
    """One job clone's cumulative completed bytes and I/Os per direction at each sample time."""

    t: list[int]
    bytes: dict[str, list[float]] = field(default_factory=dict)
    ios: dict[str, list[float]] = field(default_factory=dict)

    def at(self, d: str, t: float, what: str = "bytes") -> float:
        """The cumulative count at time ``t`` (linear between samples, flat outside them)."""
        values = (self.bytes if what == "bytes" else self.ios)[d]
        ts = self.t
        if not ts:
            return 0.0
        if t <= ts[0]:
            return values[0]
        if t >= ts[-1]:
            return values[-1]
        i = bisect.bisect_right(ts, t)
        t0, t1 = ts[i - 1], ts[i]
        v0, v1 = values[i - 1], values[i]
        return v0 + (v1 - v0) * (t - t0) / (t1 - t0) if t1 > t0 else v1


def clone_series(core: dict[str, Any]) -> list[CloneSeries]:
    """Split the host's time series among the job clones (see the module's docstring)."""
    import numpy as np

    samples = core.get("fio_samples", core.get("samples")) or []
    jobs = core["jobs"]
    if not samples:
        return [CloneSeries([], {d: [0.0] for d in DIRS}, {d: [0.0] for d in DIRS}) for _ in jobs]
    ts = np.array([int(s["t_ns"]) for s in samples], dtype=np.int64)
    start = np.array([j["start_ns"] for j in jobs], dtype=np.int64)
    end = np.array([j["end_ns"] for j in jobs], dtype=np.int64)
    runtime = np.maximum(1, end - np.array([j["measure_start_ns"] for j in jobs], dtype=np.int64)).astype(float)
    # overlap of each job's active time with each sample interval: (intervals, jobs)
    overlap = np.clip(np.minimum(ts[1:, None], end[None, :]) - np.maximum(ts[:-1, None], start[None, :]),
                      0, None).astype(float)
    out: dict[str, dict[str, np.ndarray]] = {"bytes": {}, "ios": {}}
    for d in DIRS:
        for what, key in (("bytes", "bytes"), ("ios", "ios")):
            host = np.diff(np.array([s[f"{d}_{key}"] for s in samples], dtype=float))
            rate = np.array([j[d][key] for j in jobs], dtype=float) / runtime
            weights = overlap * rate[None, :]
            total = weights.sum(axis=1, keepdims=True)
            share = np.divide(weights, total, out=np.zeros_like(weights), where=total > 0) * host[:, None]
            cum = np.vstack([np.zeros((1, len(jobs))), np.cumsum(share, axis=0)])
            out[what][d] = cum
    t_list = ts.tolist()
    return [CloneSeries(t_list, {d: out["bytes"][d][:, i].tolist() for d in DIRS},
                        {d: out["ios"][d][:, i].tolist() for d in DIRS}) for i in range(len(jobs))]


def window_edges(start_ns: int, end_ns: int, avg_ms: int) -> list[int]:
    """fio's sample times for a job measured from ``start_ns`` to ``end_ns``: every
    ``avg_ms`` after the start, complete windows only."""
    step = avg_ms * 1_000_000
    if step <= 0 or end_ns <= start_ns:
        return []
    n = (end_ns - start_ns) // step
    return [start_ns + k * step for k in range(n + 1)]


def rate_samples(series: CloneSeries, d: str, edges: list[int], avg_ms: int, what: str) -> list[tuple[int, int]]:
    """(window end, rate) per window with I/O: KiB/s for bytes, I/Os per second for ios,
    in fio's integer arithmetic (``delta * 1000 / msec``, then ``/ 1024`` for KiB)."""
    out = []
    prev = series.at(d, edges[0], what) if edges else 0.0
    for e in edges[1:]:
        cur = series.at(d, e, what)
        delta = int(round(cur - prev))
        prev = cur
        if delta <= 0:
            continue
        rate = delta * 1000 // avg_ms
        out.append((e, rate // 1024 if what == "bytes" else rate))
    return out


def device_latency_ratio(core: dict[str, Any], target: int, d: str, edges: list[int],
                         start_ns: int, end_ns: int) -> list[tuple[int, float]]:
    """(window end, the device's mean service time in the window / over ``start_ns..end_ns``)
    for windows in which the device completed I/O of direction ``d``."""
    samples = core.get("fio_samples", core.get("samples")) or []
    if not samples or not edges:
        return []
    ts = [int(s["t_ns"]) for s in samples]
    disk = [s["devices"][target]["disk"] for s in samples]
    ios = [x[f"{d}_ios"] for x in disk]
    ticks = [x[f"{d}_ticks_ms"] for x in disk]

    def counters(t: float) -> tuple[float, float]:
        if t <= ts[0]:
            return ios[0], ticks[0]
        if t >= ts[-1]:
            return ios[-1], ticks[-1]
        i = bisect.bisect_right(ts, t)
        f = (t - ts[i - 1]) / (ts[i] - ts[i - 1]) if ts[i] > ts[i - 1] else 1.0
        return (ios[i - 1] + (ios[i] - ios[i - 1]) * f, ticks[i - 1] + (ticks[i] - ticks[i - 1]) * f)

    io0, tk0 = counters(start_ns)
    io1, tk1 = counters(min(end_ns, ts[-1]))
    if io1 - io0 <= 0 or tk1 - tk0 <= 0:
        return []
    overall = (tk1 - tk0) / (io1 - io0)
    out = []
    prev = counters(edges[0])
    for e in edges[1:]:
        cur = counters(e)
        dio, dtk = cur[0] - prev[0], cur[1] - prev[1]
        prev = cur
        if dio >= 0.5:
            out.append((e, (dtk / dio) / overall))
    return out
