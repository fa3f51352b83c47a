"""fio's steady-state test (``steadystate``/``ss``, ``ss_dur``, ``ss_ramp``, ``ss_interval``)
on a simulated run, judged as fio judges it (fio's ``steadystate.c``, its HOWTO):

* every ``ss_interval`` (1 s) after a job starts, its IOPS and bandwidth over the last
  interval are taken (``1000 * Δ / ms``, integers: bytes/s and I/Os per second, reads, writes
  and trims together); with ``group_reporting`` the group's jobs are summed;
* the first sample is taken once ``ss_ramp`` plus one interval have passed;
* once ``ss_dur`` worth of samples fill the rolling window, the criterion is computed at each
  sample: ``iops``/``bw``: the largest deviation of a sample from the window's mean;
  ``*_slope``: the least-squares slope of the samples over their index; both as a share of
  the mean (``%`` limits) or as they are. Below the limit, steady state is attained and the
  job (every job of the group with ``group_reporting``) stops there.

How the simulation stops a job there: the run is simulated with samples on whole seconds of
the host's counters, the test is applied to each job's share of them
(:func:`clone_series`; exact for a job that runs alone or with its group),
and when a job attains steady state before it ended, the run is simulated again with that
job's ``runtime`` ending at the moment of attainment. The simulation is deterministic for a
seed and a job's runtime only sets when it stops, so the rerun is the first run cut at that
moment; a later job that attains steady state is judged on the rerun. A run with ``n`` jobs
that stop early is simulated ``n + 1`` times.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass, field
from typing import Any


NS = 1_000_000_000


@dataclass
class Check:
    """One steady-state test (a job, or a group with ``group_reporting``) over a run."""

    clones: list[int]
    attained_ns: int | None  # simulated time at which steady state was attained
    ended_ns: int  # when the jobs ended in this run
    json: dict[str, Any]  # fio's ``steadystate`` object


def enabled(spec) -> bool:
    return any(r.ss_dur_s > 0 for r in spec.job_reports)


def _units(spec, core: dict[str, Any]) -> list[list[int]]:
    """Clones judged together: a group under group_reporting, else each clone alone."""
    groups: dict[int, list[int]] = {}
    out: list[list[int]] = []
    for i, (j, r) in enumerate(zip(core["jobs"], spec.job_reports)):
        if r.ss_dur_s <= 0:
            continue
        g = j["group_id"]
        if spec.group_reporting.get(g, False):
            if g not in groups:
                groups[g] = []
                out.append(groups[g])
            groups[g].append(i)
        else:
            out.append([i])
    return out


def _criterion(values: list[int], slope_mode: bool, percent: bool) -> tuple[float, float, float]:
    """(criterion, max deviation, slope) of a full window, as fio computes them."""
    n = len(values)
    mean = sum(values) / n
    if slope_mode:
        sum_x = n * (n - 1) / 2
        sum_x2 = (n - 1) * n * (2 * n - 1) / 6
        sum_xy = sum(i * v for i, v in enumerate(values))
        denom = sum_x2 - sum_x * sum_x / n
        slope = (sum_xy - sum_x * sum(values) / n) / denom if denom else 0.0
        crit = 100.0 * slope / mean if percent and mean else slope
        return crit, 0.0, slope
    dev = max(abs(v - mean) for v in values)
    crit = 100.0 * dev / mean if percent and mean else dev
    return crit, dev, 0.0


# ---- each job clone's counts over time ----------------------------------------------------
#
# The core's host-wide time series has cumulative completed bytes and I/Os per direction; a
# clone's share of each interval is in proportion to the clones' average rates among those
# active then (exact for a job that runs alone or with its group only).

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


def evaluate(spec, core: dict[str, Any]) -> list[Check]:
    """The steady-state tests of a simulated run (``core`` as the core returned it)."""
    units = _units(spec, core)
    if not units:
        return []
    series = clone_series(core)
    jobs = core["jobs"]
    out = []
    for clones in units:
        r = spec.job_reports[clones[0]]
        step = r.ss_interval_s * NS
        need = r.ss_dur_s // r.ss_interval_s
        slope_mode = r.ss_criterion.endswith("_slope")
        use_iops = r.ss_criterion.startswith("iops")
        start = min(jobs[c]["start_ns"] for c in clones)
        end = max(jobs[c]["end_ns"] for c in clones)
        iops_w: list[int] = []
        bw_w: list[int] = []
        attained = None
        crit = dev = slope = 0.0
        k = 1
        while start + k * step <= end:
            t0, t1 = start + (k - 1) * step, start + k * step
            if k * step >= r.ss_ramp_us * 1000 + step:
                ios = sum(series[c].at(d, t1, "ios") - series[c].at(d, t0, "ios") for c in clones for d in ("read", "write"))
                byt = sum(series[c].at(d, t1) - series[c].at(d, t0) for c in clones for d in ("read", "write"))
                ms = step // 1_000_000
                iops_w.append(int(1000 * round(ios) // ms))
                bw_w.append(int(1000 * round(byt) // ms))
                iops_w, bw_w = iops_w[-need:], bw_w[-need:]
                if len(iops_w) == need:
                    crit, dev, slope = _criterion(iops_w if use_iops else bw_w, slope_mode, r.ss_percent)
                    if (abs(crit) if slope_mode else crit) < r.ss_limit:
                        attained = t1
                        break
            k += 1
        pct = "%" if r.ss_percent else ""
        full = len(iops_w) == need
        obj = {
            "ss": f"{r.ss_criterion}:{r.ss_limit:f}{pct}",
            "duration": r.ss_dur_s,
            "attained": 1 if attained is not None else 0,
            "criterion": f"{crit:f}{pct}",
            "max_deviation": dev,
            "slope": slope,
            "data": {
                "bw_mean": sum(bw_w) // need if full else 0,
                "iops_mean": sum(iops_w) // need if full else 0,
                "iops": iops_w,
                "bw": bw_w,
            },
        }
        out.append(Check(clones, attained, end, obj))
    return out


def stop_at_attainment(spec, simulate):
    """Simulate ``spec`` (``simulate(core_dict) -> core output``) with each steady-state test
    stopping its jobs where it is attained (see the module's docstring). Returns the final
    core output, with the ``steadystate`` objects under ``core["steadystate"]`` (clone index
    of the unit's first job -> fio's object)."""
    import copy

    core_in = copy.deepcopy(spec.core)
    # The test needs the host's counters on whole seconds of each job's clock.
    every = core_in.get("interval_ns")
    if not every or NS % every:
        import math

        core_in["interval_ns"] = math.gcd(every, NS) if every else NS
    stopped: set[int] = set()
    while True:
        out = simulate(core_in)
        checks = evaluate(spec, out)
        early = [c for c in checks if c.attained_ns is not None and c.attained_ns < c.ended_ns
                 and c.clones[0] not in stopped]
        if not early:
            break
        first = min(early, key=lambda c: c.attained_ns)
        stopped.add(first.clones[0])
        for i in first.clones:
            job = core_in["jobs"][i]
            job["runtime_ns"] = max(1, first.attained_ns - out["jobs"][i]["measure_start_ns"])
    out["steadystate"] = {str(c.clones[0]): c.json for c in checks}
    return out, core_in
