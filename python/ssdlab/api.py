"""The Python entry point: a fio job and a profile in, a :class:`RunResult` out."""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from importlib import resources
from pathlib import Path
from typing import Any

from .config import load_host, load_profile
from .fio import JobSet, load_job_file, parse_job_text
from .results import RunResult, build_units
from .units import parse_time_ns

DEFAULT_PROFILE = "samsung-850-pro"


class SimulationError(ValueError):
    """The core rejected the input (it names the key or job and what was wrong)."""


def quickstart_job() -> Path:
    """The built-in default job file."""
    return Path(str(resources.files("ssdlab") / "data" / "jobs" / "quickstart.fio"))


def parse_precondition(value: str | Mapping[str, Any] | None) -> dict[str, Any]:
    """``none``, ``sequential`` or ``random[:PASSES]`` (default 2 passes of random overwrite)."""
    if value is None:
        return {"kind": "none"}
    if isinstance(value, Mapping):
        return dict(value)
    kind, _, arg = str(value).partition(":")
    kind = kind.strip().lower()
    if kind in ("none", "sequential") and not arg:
        return {"kind": kind}
    if kind == "random":
        try:
            passes = float(arg) if arg else 2.0
        except ValueError:
            passes = -1.0
        if passes < 0:
            raise ValueError(f"precondition random:{arg}: expected a number of passes >= 0")
        return {"kind": "random", "passes": passes}
    raise ValueError(f"precondition {value!r}: expected none, sequential or random[:PASSES]")


def _load_jobs(job: str | os.PathLike[str] | JobSet | None, device_size: int, overrides, env, seed) -> JobSet:
    if isinstance(job, JobSet):
        return job
    if job is None:
        job = quickstart_job()
    text = str(job)
    if isinstance(job, os.PathLike) or ("\n" not in text and "=" not in text):
        return load_job_file(Path(job), device_size=device_size, overrides=overrides, env=env, seed=seed)
    return parse_job_text(text, name="<job text>", device_size=device_size, overrides=overrides,
                          env=env, seed=seed)


def build_spec(jobset: JobSet, profile_core: dict[str, Any], host_core: dict[str, Any], *,
               seed: int, interval_ns: int | None, precondition: dict[str, Any]) -> dict[str, Any]:
    """The SimSpec JSON object the core runs."""
    return {
        "seed": seed,
        "device": profile_core,
        "host": host_core,
        "jobs": [j.model_dump(mode="json") for j in jobset.jobs],
        "interval_ns": interval_ns,
        "precondition": precondition,
    }


def run(
    job: str | os.PathLike[str] | JobSet | None = None,
    *,
    profile: str | os.PathLike[str] = DEFAULT_PROFILE,
    host: str | os.PathLike[str] | None = None,
    seed: int = 0,
    overrides: Mapping[str, str] | None = None,
    env: Mapping[str, str] | None = None,
    interval: str | float | None = None,
    precondition: str | Mapping[str, Any] | None = None,
    scale: float | None = None,
    profile_set: Mapping[str, str] | None = None,
) -> RunResult:
    """Simulate ``job`` (a fio job file path, job text, or a parsed JobSet) on ``profile``.

    ``host`` defaults to the host the profile was calibrated on. ``interval`` (e.g. ``"1s"``)
    adds a time series. ``precondition`` puts the drive in a used state first, without
    simulating time: ``"sequential"`` or ``"random:2"``. ``scale`` (0 < scale <= 1) simulates
    that fraction of the drive's flash — same dies, channels, timings and spare ratio, smaller
    blocks — so huge drives fit in memory; rates and WAF carry over, byte counts and fill
    times are those of the fraction. It defaults to the profile's ``simulation_scale``.
    ``profile_set`` overrides profile keys for this run, e.g.
    ``{"thermal.ambient_temperature": "40"}``.
    """
    from . import _core

    dev, dev_sources = load_profile(profile, profile_set)
    host_profile, host_sources = load_host(host or dev.default_host)
    scale = dev.simulation_scale if scale is None else scale
    if not 0 < scale <= 1:
        raise ValueError(f"scale {scale}: expected a fraction in (0, 1]")
    device_core = dev.to_core(scale)
    scale = dev.effective_scale(scale)
    jobset = _load_jobs(job, device_core["capacity_bytes"], overrides, env, seed)
    interval_ns = parse_time_ns(interval, "s") if interval is not None else None
    if interval_ns is not None and interval_ns <= 0:
        raise ValueError("interval must be positive")
    spec = build_spec(jobset, device_core, host_profile.to_core(), seed=seed, interval_ns=interval_ns,
                      precondition=parse_precondition(precondition))
    try:
        raw = _core.run_json(json.dumps(spec))
    except ValueError as e:
        raise SimulationError(str(e)) from None
    core = json.loads(raw)
    units = build_units(core, jobset.group_reporting, jobset.job_options)
    sources = {f"device.{k}": v for k, v in dev_sources.items()}
    sources.update({f"host.{k}": v for k, v in host_sources.items()})
    warnings = list(jobset.warnings)
    if scale < 1:
        warnings.append(f"simulating {scale:g} of {dev.name}'s flash ({device_core['capacity_bytes'] / 1e9:.1f} GB of "
                        f"{dev.capacity / 1e9:.1f} GB): rates and WAF carry over, sizes and fill times scale")
        if dev.thermal is not None:
            warnings.append("the thermal model runs in real time: at scale < 1 a fill ends sooner than on the "
                            "drive, so it heats less during it")
    return RunResult(core=core, units=units, percentiles_list=list(jobset.percentiles),
                     profile_name=dev.name, host_name=host_profile.name, device_core=device_core,
                     global_options=dict(jobset.global_options), warnings=warnings, scale=scale,
                     sources=sources, endurance=dev.endurance.model_dump())
