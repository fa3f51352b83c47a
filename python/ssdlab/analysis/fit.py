"""Fit a profile's free parameters to measured runs (``ssdlab fit --profile NAME RUN.json…``).

Each measured run (fio's JSON, from ``ssdlab measure`` or fio itself) is simulated again from
the job options its JSON records, on the profile with trial parameter values, and the
simulated figures are compared with the measured ones: for each job and direction that did
I/O, IOPS, mean completion latency and its 99th percentile. The misfit is the sum of the
squared logarithms of simulated over measured (a relative error, the same weight for a
rate and a latency); a run's residual is the root mean square of its logarithms.

The search is scipy's bounded Nelder–Mead simplex (derivative-free: the simulation is a step
function of its parameters at fine scale, so gradients mean nothing) over the logarithm of
each parameter relative to the profile's value, within a factor of ten of it and within what
the parameter may be (a spread ``busy_cv`` at most 1, as the core checks). The fit returns the
best point it simulated, so it never ends worse than the profile it started from. Every trial
uses the same seed, so two trials differ only by their parameters.

Parameters (dotted profile keys, or ``host.KEY`` for the host profile):

* ``controller.read_busy``, ``controller.write_busy``: the controller's time per command;
* ``controller.busy_cv``: its spread (coefficient of variation);
* ``host.io_overhead``: the host software's time per I/O;
* ``write_buffer``: the write buffer's size; ``slc_cache.static``: the SLC cache's.

By default the controller times of the directions the runs exercise, the spread and the host
time are fitted; the sizes only when named (they matter only to runs that write more than
they hold).

fio's JSON records a job's options with values only: bare switches are inferred. A job whose
measured run lasted its whole ``runtime`` is simulated ``time_based`` (one that stopped
earlier was bounded by its size, as the simulation will be), and a job with ``numjobs`` above
1 reported as fewer entries than clones had ``group_reporting``. Its ``filename``,
``directory`` and ``filename_format`` are dropped: the simulated drive takes the I/O.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

DEVICE_PARAMS = ("controller.read_busy", "controller.write_busy", "controller.busy_cv", "write_buffer",
                 "slc_cache.static")
HOST_PARAMS = ("host.io_overhead", "host.io_overhead_cv")
PARAMS = DEVICE_PARAMS + HOST_PARAMS
_TIMES = {"controller.read_busy", "controller.write_busy", "host.io_overhead"}
_SIZES = {"write_buffer", "slc_cache.static"}
_DROPPED = ("filename", "directory", "filename_format")
#: how far from the profile's value a parameter may go (a factor either way)
BOUND = 10.0
#: what a parameter may be at all, where the core limits it (``controller.busy_cv``: 0..=1 in
#: ``device/frontend.rs``); the others only need to stay positive
_LIMITS = {"controller.busy_cv": 1.0}


class FitError(ValueError):
    """Input fit cannot use (one line)."""


@dataclass
class RunFit:
    """One measured run: its residual (RMS of log errors) and each figure."""

    path: str
    residual: float
    figures: list[dict[str, Any]]

    def job_residuals(self) -> dict[str, float]:
        """Each job's residual: the RMS of log(simulated/measured) over its figures."""
        logs: dict[str, list[float]] = {}
        for f in self.figures:
            if f["simulated"] > 0 and f["measured"] > 0:
                logs.setdefault(f["job"], []).append(math.log(f["simulated"] / f["measured"]))
        return {job: math.sqrt(sum(e * e for e in es) / len(es)) for job, es in logs.items()}


@dataclass
class FitResult:
    profile: str
    params: dict[str, float]  # fitted, in ns, bytes or plain numbers
    start: dict[str, float]  # the profile's values
    runs: list[RunFit]
    start_residuals: list[float]
    evaluations: int
    notes: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            "profile": self.profile, "evaluations": self.evaluations,
            "params": {k: {"fitted": v, "profile": self.start[k], "unit": _unit(k)} for k, v in self.params.items()},
            "runs": [{"path": r.path, "residual": r.residual, "residual_at_profile": s,
                      "job_residuals": r.job_residuals(), "figures": r.figures}
                     for r, s in zip(self.runs, self.start_residuals)],
            "notes": self.notes,
        }

    def format_text(self) -> str:
        lines = [f"fit of {self.profile} ({self.evaluations} simulations of each run)", "",
                 f"{'parameter':24} {'profile':>14} {'fitted':>14} {'ratio':>7}"]
        for k, v in self.params.items():
            s = self.start[k]
            lines.append(f"{k:24} {_show(k, s):>14} {_show(k, v):>14} {v / s if s else float('nan'):7.3f}")
        lines += ["", "residual of each run (RMS of log(simulated/measured) over its figures):"]
        for r, s in zip(self.runs, self.start_residuals):
            lines.append(f"  {r.path}: {r.residual:.4f} (at the profile's values {s:.4f})")
            lines += [f"    job {job}: {res:.4f}" for job, res in r.job_residuals().items()]
            for f in r.figures:
                lines.append(f"    {f['job']} {f['direction']} {f['figure']}: measured {f['measured']:.4g}, "
                             f"simulated {f['simulated']:.4g} ({100 * (f['simulated'] / f['measured'] - 1):+.1f}%)")
        lines += [f"note: {n}" for n in self.notes]
        return "\n".join(lines) + "\n"


def _unit(key: str) -> str:
    return "ns" if key in _TIMES else "bytes" if key in _SIZES else ""


def _show(key: str, v: float) -> str:
    if key in _TIMES:
        return f"{v / 1e3:.3f}us"
    if key in _SIZES:
        return f"{v / 2**20:.1f}MiB"
    return f"{v:.4g}"


# ---- the measured runs -------------------------------------------------------------------


@dataclass
class Measured:
    path: str
    job_text: str
    figures: dict[tuple[str, str, str], float]  # (job key, direction, figure) -> value
    #: per line of ``job_text`` (the first is line 1), the field of the run's JSON it comes from
    origins: list[str] = field(default_factory=list)

    def place(self, message: str) -> str:
        """An error about ``job_text`` (``<job text>:LINE: ...``) said of the run's file and field."""
        head, sep, rest = message.partition(": ")
        name, _, line = head.rpartition(":")
        if sep and name == JOB_TEXT and line.isdigit() and 0 < int(line) <= len(self.origins):
            return f"{self.path}: {self.origins[int(line) - 1]}: {rest}"
        return f"{self.path}: {message}"


def _keyed(jobs: list[dict[str, Any]]) -> list[tuple[str, dict[str, Any]]]:
    seen: dict[str, int] = {}
    out = []
    for j in jobs:
        seen[j["jobname"]] = seen.get(j["jobname"], 0) + 1
        out.append((f"{j['jobname']}#{seen[j['jobname']]}", j))
    return out


def run_figures(data: dict[str, Any]) -> dict[tuple[str, str, str], float]:
    """The figures fitted, from a run's fio JSON: IOPS, mean clat and its p99 (ns)."""
    out = {}
    for key, j in _keyed(data["jobs"]):
        for d in ("read", "write", "trim", "mixed"):  # mixed: unified_rw_reporting
            r = j.get(d) or {}
            if not r.get("total_ios"):
                continue
            out[(key, d, "iops")] = float(r["iops"])
            out[(key, d, "clat_mean_ns")] = float(r["clat_ns"]["mean"])
            for p, v in (r["clat_ns"].get("percentile") or {}).items():
                if abs(float(p) - 99.0) < 1e-9:
                    out[(key, d, "clat_p99_ns")] = float(v)
    return out


#: how :func:`ssdlab.api.build` names job text it is given (its errors start ``<job text>:LINE:``)
JOB_TEXT = "<job text>"


def job_text(data: dict[str, Any], path: str = "<run>") -> str:
    """A job file that reruns a run recorded in fio's JSON (see the module on what is inferred)."""
    return "".join(f"{line}\n" for line, _ in _job_lines(data, path))


def _job_lines(data: dict[str, Any], path: str) -> list[tuple[str, str]]:
    """:func:`job_text`'s lines, each with the field of ``data`` it comes from."""
    glob = data.get("global options") or {}
    lines = [("[global]", '"global options"')]
    for k, v in glob.items():
        if k not in _DROPPED:
            lines.append((f"{k}={v}" if v != "" else k, f'"global options".{k}'))
    counts: dict[str, int] = {}
    for j in data["jobs"]:
        counts[j["jobname"]] = counts.get(j["jobname"], 0) + 1
    written: set[str] = set()
    for i, j in enumerate(data["jobs"]):
        name = j["jobname"]
        where = f'jobs[{i}]["job options"]'
        opts = dict(j.get("job options") or {})
        allopts = {**glob, **opts}
        numjobs = _numjobs(allopts, path, where if "numjobs" in opts else '"global options"')
        if name in written and counts[name] > 1 and numjobs >= counts[name]:
            continue  # clones of one job (numjobs, no group_reporting): the section makes them all
        written.add(name)
        lines.append((f"[{name}]", f"jobs[{i}].jobname"))
        for k, v in opts.items():
            if k not in _DROPPED:
                lines.append((f"{k}={v}" if v != "" else k, f"{where}.{k}"))
        runtime = allopts.get("runtime")
        if runtime and "time_based" not in allopts:
            from ..units import parse_fio_time_us

            try:
                us = parse_fio_time_us(str(runtime), seconds_default=True, notes=[])
            except Exception:
                raise FitError(f"{path}: {where if 'runtime' in opts else 'global options'}.runtime: "
                               f"job '{name}': runtime={runtime}: not a time") from None
            if (j.get("job_runtime") or 0) * 1000 >= 0.95 * us:
                lines.append(("time_based", f"jobs[{i}].job_runtime"))
        if numjobs > counts[name] and "group_reporting" not in allopts:
            lines.append(("group_reporting", f"{where}.numjobs"))
    return lines


def _numjobs(opts: dict[str, str], path: str, where: str) -> int:
    text = opts.get("numjobs", "1")
    try:
        n = int(text)
    except ValueError:
        n = -1
    if n < 1:
        raise FitError(f"{path}: {where}.numjobs: expected a whole number >= 1, got {text!r}")
    return n


def load_measured(path: str | Path) -> Measured:
    from .compare import CompareError, load_run

    try:
        data = load_run(path)
    except CompareError as e:
        raise FitError(str(e)) from None
    figures = run_figures(data)
    if not figures:
        raise FitError(f"{path}: no job did I/O: nothing to fit to")
    lines = _job_lines(data, str(path))
    return Measured(str(path), "".join(f"{line}\n" for line, _ in lines), figures, [o for _, o in lines])


# ---- the search --------------------------------------------------------------------------


def search(f: Callable[[list[float]], float], bounds: Sequence[tuple[float, float]], max_evals: int,
           step: float = 0.2) -> tuple[list[float], float, int]:
    """Minimise ``f`` from the origin within ``bounds`` (one (low, high) per coordinate, the
    origin inside) by scipy's bounded Nelder–Mead, its first simplex ``step`` along each axis
    (backwards where the upper bound is nearer than that). Returns the best point evaluated
    (the origin unless something beat it), its value and the evaluations made."""
    from scipy.optimize import minimize

    n = len(bounds)
    seen: list[tuple[float, list[float]]] = []

    def value(x) -> float:
        point = [float(c) for c in x]
        v = f(point)
        seen.append((v, point))
        return v

    origin = [0.0] * n
    value(origin)
    if n:
        simplex = [origin] + [[(step if hi >= step else -step) if j == i else 0.0 for j in range(n)]
                              for i, (_, hi) in enumerate(bounds)]
        minimize(value, origin, method="Nelder-Mead", bounds=list(bounds),
                 options={"maxfev": max(max_evals - 1, 1), "xatol": 1e-3, "fatol": 1e-6, "initial_simplex": simplex})
    # the first point seen is the origin: a tie keeps it
    best_v, best_x = min(seen, key=lambda t: t[0])
    return best_x, best_v, len(seen)


def _profile_value(prof, key: str) -> float | None:
    node: Any = prof.model_dump()
    for part in key.split("."):
        if not isinstance(node, dict) or node.get(part) is None:
            return None
        node = node[part]
    return float(node)


def set_io_overhead(host: dict, ns: int) -> None:
    """The core's host description with its time per I/O set to ``ns``: its submit call and
    its reap, parts of that time, keep their shares of it."""
    old = host["io_overhead_ns"]
    for part in ("submit_ns", "reap_ns"):
        if host.get(part) is not None:
            host[part] = host[part] * ns // old if old else 0
    host["io_overhead_ns"] = ns


def _set_value(key: str, v: float) -> str:
    if key in _TIMES or key in _SIZES:
        return f"{int(round(v))}ns" if key in _TIMES else str(int(round(v)))
    return f"{v:.6g}"


def fit(profile: str, runs: Sequence[str | Path], *, params: Sequence[str] | None = None,
        host: str | None = None, seed: int = 0, max_evals: int | None = None,
        scale: float | None = None) -> FitResult:
    """Fit ``params`` of ``profile`` (see the module) to the measured ``runs`` (fio JSON
    files). ``scale`` simulates that fraction of the drive's flash (as ``ssdlab run --scale``:
    rates carry over, and a small drive is quicker to set up for each trial)."""
    from .. import api
    from ..config import load_host, load_profile

    if not runs:
        raise FitError("no measured run given (fio JSON files, e.g. from ssdlab measure --output-format json)")
    measured = [load_measured(p) for p in runs]
    prof, _ = load_profile(profile)
    host_ref = host or prof.default_host
    host_prof, _ = load_host(host_ref)
    if params is None:
        dirs = {d for m in measured for (_, d, _) in m.figures}
        params = [p for p, d in (("controller.read_busy", "read"), ("controller.write_busy", "write"))
                  if d in dirs] + ["controller.busy_cv", "host.io_overhead"]
    params = list(dict.fromkeys(params))
    start: dict[str, float] = {}
    for p in params:
        if p not in PARAMS:
            raise FitError(f"--params {p}: not a fitted parameter (expected one of {', '.join(PARAMS)})")
        v = float(getattr(host_prof, p.split(".", 1)[1])) if p in HOST_PARAMS else _profile_value(prof, p)
        if v is None:
            raise FitError(f"--params {p}: profile {profile} has no such value")
        if v <= 0:
            raise FitError(f"--params {p}: the profile's value is {v:g}; a fit needs a positive start")
        start[p] = v
    notes = []
    if any(p in _SIZES for p in params):
        notes.append("buffer and cache sizes only matter to runs that write more than they hold")

    def simulate(values: dict[str, float]) -> list[dict[tuple[str, str, str], float]]:
        sets = {k: _set_value(k, v) for k, v in values.items() if k in DEVICE_PARAMS}
        out = []
        for m in measured:
            try:
                spec = api.build(m.job_text, profile=profile, host=host_ref, seed=seed, profile_set=sets or None,
                                  scale=scale)
                for k, v in values.items():
                    if k == "host.io_overhead":
                        set_io_overhead(spec.core["host"], int(round(v)))
                    elif k in HOST_PARAMS:
                        spec.core["host"][k.split(".", 1)[1]] = v
                out.append(run_figures(api.execute(spec).to_fio_json()))
            except ValueError as e:  # the run's job or its simulation: said of its file and field
                raise FitError(m.place(str(e).splitlines()[0])) from None
        return out

    def logs(sim: dict, meas: dict) -> list[float]:
        return [math.log(sim[k] / meas[k]) for k in meas if k in sim and sim[k] > 0 and meas[k] > 0]

    def misfit(x: list[float]) -> float:
        values = {p: start[p] * math.exp(v) for p, v in zip(params, x)}
        return sum(e * e for s, m in zip(simulate(values), measured) for e in logs(s, m.figures))

    # fail early, with the simulator's own message, if a run's job cannot be simulated
    try:
        at_start = simulate(start)
    except FitError:
        raise
    except Exception as e:
        raise FitError(f"simulating the measured jobs: {str(e).splitlines()[0]}") from None
    budget = max_evals if max_evals is not None else 40 * len(params) + 20
    lim = math.log(BOUND)
    bounds = [(-lim, min(lim, math.log(_LIMITS[p] / start[p])) if p in _LIMITS else lim) for p in params]
    for p, (lo, hi) in zip(params, bounds):
        if hi < 0:
            raise FitError(f"--params {p}: the profile's value {start[p]:g} is past its limit {_LIMITS[p]:g}")
    best, _, evals = search(misfit, bounds, budget)
    fitted = {p: start[p] * math.exp(v) for p, v in zip(params, best)}
    final = simulate(fitted)
    for p, v, (lo, hi) in zip(params, best, bounds):
        if hi > 0 and abs(v - hi) < 0.02 and p in _LIMITS and hi < lim:
            notes.append(f"{p} stopped at its limit ({_LIMITS[p]:g}): the profile may not fit these runs")
        elif abs(abs(v) - lim) < 0.02:  # within 2 % of the bound
            notes.append(f"{p} stopped at the bound (a factor {BOUND:g} from the profile's value): the profile may not fit these runs")
    if not any(best):
        notes.append("no trial fitted better than the profile's own values: they are kept")
    runs_out = []
    for m, sim in zip(measured, final):
        figs = [{"job": k[0].rsplit("#1", 1)[0] if k[0].endswith("#1") else k[0], "direction": k[1],
                 "figure": k[2], "measured": v, "simulated": sim.get(k, float("nan"))}
                for k, v in m.figures.items()]
        e = logs(sim, m.figures)
        runs_out.append(RunFit(m.path, math.sqrt(sum(x * x for x in e) / len(e)) if e else float("nan"), figs))
    start_res = []
    for m, sim in zip(measured, at_start):
        e = logs(sim, m.figures)
        start_res.append(math.sqrt(sum(x * x for x in e) / len(e)) if e else float("nan"))
    return FitResult(profile, fitted, start, runs_out, start_res, evals, notes)
