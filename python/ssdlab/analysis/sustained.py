"""Sustained sequential write of a whole drive, measured as seed 002 measured it.

Seed 002 (a data-recorder white paper) wrote each NVMe drive with SPDK: no file system, one
thread per drive keeping the queue full, large aligned buffers. It filled the drive from empty,
then overwrote all of it once more, and logged the throughput over time. The rate a recorder
can count on is the lowest sustained one, not the datasheet's burst.

:func:`sustained_write` runs the same workload on a simulated drive: a generated fio job
(``rw=write``, ``bs``, ``iodepth``, ``size`` = the drive or a slice, ``io_size`` = passes ×
size so the sequential stream wraps round and overwrites), sampled over time, and reads off:

- ``burst_rate``: the rate at the start (the SLC cache, if the drive has one);
- ``cache_bytes``: bytes written before the first *sustained* drop below the burst (a drop of
  more than ``drop_fraction`` whose rolling median over a window of about 5 % of the fill
  stays down; short dips do not count), ``None`` without one;
- ``after_cache_rate``: the median rate during the fill after that drop (or after the first
  interval if there was none);
- ``overwrite_rate``: the median rate while the stream overwrites written data;
- ``worst_sustained_rate``: for each phase, the 5th percentile of the interval rates
  (excluding the first interval, which includes the ramp-up, and the short tail interval that
  ends the run); the minimum over the phases;
- ``throttled_share``: for a drive with a thermal model, the share of the run it spent
  throttled. Throttled intervals count only in the worst rate, not in the cache cliff or
  the phase rates above.

:func:`sustained_summary` is the same as a plain dict, cached on disk (see its docstring), for
the sizing commands.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from pydantic import ConfigDict, TypeAdapter, ValidationError
from typing_extensions import TypedDict

from ..api import run
from ..cachedir import cache_dir
from ..config import load_host, load_profile
from ..config.profile import profile_text
from ..units import parse_size, parse_time_ns

TARGET_ROWS = 300  # rows of the reported time series (200-400)
FINE_SAMPLES = 2000  # samples taken from the core before they are merged to TARGET_ROWS
WORST_PERCENTILE = 5.0
DROP_FRACTION = 0.15

# Payload MB/s of one PCIe lane by generation (8b/10b up to gen 2, 128b/130b from gen 3).
_PCIE_LANE_BYTES = {1: 250e6, 2: 500e6, 3: 985e6, 4: 1969e6, 5: 3938e6, 6: 7877e6}


@dataclass
class SustainedWrite:
    """A fill-then-overwrite run: the time series and the rates read off it (bytes/s)."""

    profile: str
    timeseries: pd.DataFrame
    burst_rate: float
    cache_bytes: float | None
    after_cache_rate: float
    overwrite_rate: float  # NaN when the run has no overwrite pass (passes <= 1)
    worst_sustained_rate: float
    size_bytes: int = 0
    passes: float = 0.0
    block_size: int = 0
    iodepth: int = 0
    seed: int = 0
    bytes_written: int = 0
    elapsed_s: float = 0.0
    nand_bytes_written: int = 0
    waf: float | None = None  # NAND bytes / host bytes over the whole run
    throttled_share: float | None = None  # None: the drive has no thermal model
    interval_s: float = 0.0
    scale: float = 1.0  # fraction of the flash simulated; byte counts are of that fraction
    warnings: list[str] = field(default_factory=list)
    result: Any = field(default=None, repr=False)  # the RunResult

    @property
    def mean_rate(self) -> float:
        return self.bytes_written / self.elapsed_s if self.elapsed_s else 0.0

    def summary(self) -> dict[str, Any]:
        """The scalars, JSON-ready (NaN becomes None)."""

        def clean(x: Any) -> Any:
            if isinstance(x, float) and not math.isfinite(x):
                return None
            return x

        d = {
            "profile": self.profile,
            "size_bytes": self.size_bytes,
            "passes": self.passes,
            "block_size": self.block_size,
            "iodepth": self.iodepth,
            "seed": self.seed,
            "burst_rate": self.burst_rate,
            "cache_bytes": self.cache_bytes,
            "cache_bytes_drive": None if self.cache_bytes is None else self.cache_bytes / self.scale,
            "after_cache_rate": self.after_cache_rate,
            "overwrite_rate": self.overwrite_rate,
            "worst_sustained_rate": self.worst_sustained_rate,
            "mean_rate": self.mean_rate,
            "bytes_written": self.bytes_written,
            "elapsed_s": self.elapsed_s,
            "nand_bytes_written": self.nand_bytes_written,
            "waf": self.waf,
            "throttled_share": self.throttled_share,
            "interval_s": self.interval_s,
            "samples": len(self.timeseries),
            "scale": self.scale,
        }
        return {k: clean(float(v) if isinstance(v, np.floating) else v) for k, v in d.items()}


# ---- workload ----------------------------------------------------------------------------

def job_text(size_bytes: int, io_bytes: int, block_size: int, iodepth: int) -> str:
    """The fio job: one thread writing sequentially with ``iodepth`` in flight, ``io_bytes``
    in all over a region of ``size_bytes`` (fio wraps round to the start when io_size > size)."""
    return (
        "; sustained sequential write (seed 002): fill from empty, then overwrite\n"
        "[sustained-write]\n"
        "rw=write\n"
        f"bs={block_size}\n"
        f"iodepth={iodepth}\n"
        "ioengine=libaio\n"
        "direct=1\n"
        f"size={size_bytes}\n"
        f"io_size={io_bytes}\n"
    )


def estimate_write_rate(prof) -> float:
    """A rough sustained sequential-write rate (B/s) from a profile's geometry: the least of
    link, channels, native programming and controller (128 KiB commands). Only used to pick
    the sampling interval, never reported."""
    limits = []
    itf = prof.interface
    if itf.kind == "sata" and itf.gbit_per_s:
        limits.append(itf.gbit_per_s * 1e9 / 10 * itf.efficiency)
    elif itf.gen and itf.lanes:
        limits.append(_PCIE_LANE_BYTES.get(itf.gen, 1969e6) * itf.lanes * itf.efficiency)
    if prof.kind == "hdd":
        limits.append(float(prof.mechanics.outer_rate))
    elif prof.kind == "in-place":
        m = prof.media
        limits.append(m.channels * float(m.channel_rate))
        limits.append(prof.dies * m.access_unit / (m.write_time / 1e9))
    else:
        n = prof.nand
        limits.append(n.channels * float(n.channel_rate))
        limits.append(prof.dies * n.planes_per_die * n.page_size * n.program_pages / (n.program_time / 1e9))
    c = prof.controller
    if c.write_busy:
        limits.append(c.cores * 131072 / (c.write_busy / 1e9))
    return max(min(limits), 1e6)


# ---- time series -------------------------------------------------------------------------

def _rows(result, size_bytes: int, every: int) -> pd.DataFrame:
    """Interval rows from the core's cumulative samples (every ``every``-th sample), plus a
    last, partial interval up to the end of the run so that no byte is lost."""
    samples = result.core["samples"]
    picked = samples[::every]
    if samples and picked[-1] is not samples[-1]:
        picked.append(samples[-1])
    def throttled_ns(internal: dict[str, Any]) -> int:
        return (internal.get("thermal") or {}).get("throttled_ns", 0)

    def device(sample: dict[str, Any]) -> dict[str, Any]:
        return sample["devices"][0]["internal"]

    points = [(s["t_ns"], s["write_bytes"], device(s)["media_bytes_written"],
               device(s)["die_busy_ns"], device(s)["dies"], throttled_ns(device(s))) for s in picked]
    if not points or points[0][0] != 0:
        points.insert(0, (0, 0, 0, 0, 1, 0))
    end_ns = result.elapsed_ns
    total = sum(u.dirs["write"].bytes for u in result.units)
    internal = result.device["internal"]
    if end_ns > points[-1][0] or total > points[-1][1]:
        points.append((max(end_ns, points[-1][0] + 1), total, internal["media_bytes_written"],
                       internal["die_busy_ns"], internal["dies"], throttled_ns(internal)))
    step = points[1][0] - points[0][0] if len(points) > 1 else 0
    rows = []
    for (t0, b0, n0, d0, _, h0), (t1, b1, n1, d1, dies, h1) in zip(points, points[1:], strict=False):
        dt = (t1 - t0) / 1e9
        if dt <= 0:
            continue
        hb = b1 - b0
        rows.append({
            "t_s": t1 / 1e9,
            "t_start_s": t0 / 1e9,
            "dt_s": dt,
            "write_bw_bytes": hb / dt,
            "bytes_written": b1,
            "phase": "fill" if b1 <= size_bytes else "overwrite",
            "nand_bytes_written": n1,
            "waf": (n1 - n0) / hb if hb else float("nan"),
            "internal_utilization": (d1 - d0) / (dies * (t1 - t0)),
            "throttled_fraction": (h1 - h0) / (t1 - t0),
            "partial": (t1 - t0) < step * 0.999,
        })
    df = pd.DataFrame(rows)
    if not df.empty:
        df.loc[df.index[0], "partial"] = False
    return df


def _median(x) -> float:
    return float(np.median(x)) if len(x) else float("nan")


def _analyse(ts: pd.DataFrame, drop_fraction: float,
             buffer_bytes: int = 0) -> tuple[float, float | None, float, float, float]:
    """burst_rate, cache_bytes, after_cache_rate, overwrite_rate, worst_sustained_rate.

    The DRAM write buffer fills at link speed first; with short intervals that shows as a
    burst of its own. It lasts ``buffer × link / (link − drain)`` bytes, and for a drop of more
    than ``drop_fraction`` (15 %: drain < 0.85 link) that is under 6.7 buffers, so the burst and
    the drop are looked for only in intervals that start after ``8 × buffer_bytes``.
    """
    every = ts[~ts.partial]
    # Cache cliff and phase rates are read where the drive ran at full speed; thermal
    # throttling (a drive with a thermal model) shows only in the worst sustained rate.
    full = every[every.throttled_fraction == 0] if "throttled_fraction" in every else every
    fill = full[full.phase == "fill"]
    settled = fill[fill.bytes_written - fill.write_bw_bytes * fill.dt_s >= 8 * buffer_bytes]
    skip = 1  # the first interval includes the ramp-up ...
    if len(settled) >= 2:
        skip = 0 if len(settled) < len(fill) else 1  # ... unless it was left out above
        fill = settled
    over = full[full.phase == "overwrite"]
    rates = fill.write_bw_bytes.to_numpy()
    n = len(rates)
    if n == 0:  # the whole run fits in one interval
        r = float(ts.write_bw_bytes.iloc[0]) if len(ts) else 0.0
        return r, None, r, _median(over.write_bw_bytes.to_numpy()), r
    window = max(3, n // 20)
    ref = float(np.max(rates[: min(n, 5)]))
    threshold = (1.0 - drop_fraction) * ref
    i0 = None
    for i in range(1, n):
        if rates[i] < threshold and np.median(rates[i:i + window]) < threshold:
            i0 = i
            break
    if i0 is None:
        burst = _median(rates[skip:window + skip] if n > skip else rates)
        cache = None
        after = _median(rates[skip:] if n > skip else rates)
    else:
        pre = rates[skip:i0] if i0 >= 2 + skip else rates[:i0]
        burst = _median(pre)
        after = _median(rates[i0 + 1:] if i0 + 1 < n else rates[i0:])
        # Piecewise-linear: the burst rate until time t, then the after rate; t is where the
        # bytes written by the end of interval i0 are matched, kept within intervals i0-1..i0.
        t_end = float(fill.t_s.iloc[i0])
        b_end = float(fill.bytes_written.iloc[i0])
        t_lo = float(fill.t_start_s.iloc[max(i0 - 1, 0)])
        if burst > after:
            t = (b_end - after * t_end) / (burst - after)
            t = min(max(t, t_lo), t_end)
        else:
            t = t_lo
        cache = b_end - after * (t_end - t)
    per_phase = []
    for phase in (every[every.phase == "fill"], every[every.phase == "overwrite"]):
        r = phase[phase.index > ts.index[0]].write_bw_bytes.to_numpy()
        if len(r):
            per_phase.append(float(np.percentile(r, WORST_PERCENTILE)))
    worst = min(per_phase) if per_phase else float(rates[0])
    return burst, cache, after, _median(over.write_bw_bytes.to_numpy()), worst


def _nice_ns(ns: float) -> int:
    """``ns`` rounded down to 1, 2 or 5 times a power of ten."""
    p = 10 ** math.floor(math.log10(ns))
    return int(max(m for m in (1, 2, 5) if m * p <= ns) * p)


# ---- the run -----------------------------------------------------------------------------

def device_capacity(prof, scale: float | None = None) -> int:
    """User bytes of the device the run sees: the drive, or the fraction of it that is simulated
    when the profile (``simulation_scale``) or the caller (``scale``) asks for one."""
    if scale is None:
        scale = getattr(prof, "simulation_scale", 1.0)
    if scale < 1 and hasattr(prof, "scaled_capacity"):
        return int(prof.scaled_capacity(scale))
    return int(prof.capacity)


def _resolve(profile, block_size, iodepth, passes, size, scale):
    prof, _ = load_profile(profile)
    capacity = device_capacity(prof, scale)
    bs = parse_size(block_size)
    if bs <= 0 or bs % 512:
        raise ValueError(f"block size {block_size!r}: expected a positive multiple of 512 bytes")
    if iodepth < 1:
        raise ValueError(f"iodepth {iodepth}: expected at least 1")
    if not 0 < passes < math.inf:
        raise ValueError(f"passes {passes}: expected a positive, finite number of drive writes")
    region = capacity if size is None else parse_size(size)
    if region > capacity:
        raise ValueError(f"size {size!r} is larger than the simulated drive ({capacity} bytes)")
    region -= region % bs
    if region <= 0:
        raise ValueError(f"size {size!r}: smaller than one block of {bs} bytes")
    io_bytes = round(passes * region / bs) * bs
    return prof, bs, region, max(io_bytes, bs)


def sustained_write(profile: str, *, block_size: str | int = "128k", iodepth: int = 32,
                    passes: float = 2.0, interval: str | float | None = None, seed: int = 0,
                    host: str | None = None, size: str | int | None = None, scale: float | None = None,
                    drop_fraction: float = DROP_FRACTION) -> SustainedWrite:
    """Write ``profile``'s drive sequentially from empty, ``passes`` times its size.

    ``size`` limits the run to the first bytes of the drive (quicker, for tests; it rounds
    down to whole blocks). ``scale`` (default: the profile's ``simulation_scale``) simulates a
    fraction of the flash: rates and WAF carry over, byte counts (``size_bytes``,
    ``cache_bytes``, the time series) are those of the fraction (``cache_bytes / scale`` is the
    drive's). ``interval`` fixes the sampling interval (by default about 300
    rows: the core samples ~2000 times at an interval guessed from the profile's geometry,
    then neighbouring samples are merged). Phases come from the cumulative bytes: up to
    ``size`` the stream fills, after that it overwrites.
    """
    prof, bs, region, io_bytes = _resolve(profile, block_size, iodepth, passes, size, scale)
    if interval is None:
        guess_s = io_bytes / estimate_write_rate(prof)
        fine_ns = _nice_ns(max(guess_s * 1e9 / FINE_SAMPLES, 100_000))
        interval_arg: str | float = f"{fine_ns}ns"
    else:
        interval_arg = interval
        fine_ns = parse_time_ns(interval, "s")
    extra = {} if scale is None else {"scale": scale}  # older api.run has no scale
    result = run(job_text(region, io_bytes, bs, iodepth), profile=profile, host=host, seed=seed,
                 interval=interval_arg, **extra)
    n_samples = max(len(result.core["samples"]) - 1, 1)
    every = 1 if interval is not None else max(1, round(n_samples / TARGET_ROWS))
    ts = _rows(result, region, every)
    burst, cache, after, over, worst = _analyse(ts, drop_fraction, prof.write_buffer)
    internal = result.device["internal"]
    host_w = internal["host_bytes_written"]
    written = int(sum(u.dirs["write"].bytes for u in result.units))
    return SustainedWrite(
        profile=prof.name, timeseries=ts, burst_rate=burst, cache_bytes=cache,
        after_cache_rate=after, overwrite_rate=over, worst_sustained_rate=worst,
        size_bytes=region, passes=float(passes), block_size=bs, iodepth=iodepth, seed=seed,
        bytes_written=written, elapsed_s=result.elapsed_ns / 1e9,
        nand_bytes_written=int(internal["media_bytes_written"]),
        waf=internal["media_bytes_written"] / host_w if host_w else None,
        throttled_share=(None if result.internal()["throttled_s"] is None
                         else result.internal()["throttled_s"] / max(result.elapsed_ns / 1e9, 1e-9)),
        interval_s=fine_ns * every / 1e9, scale=float(getattr(result, "scale", 1.0) or 1.0),
        warnings=list(result.warnings), result=result,
    )


# ---- cached summaries (for the sizing commands) ------------------------------------------

_STRICT = ConfigDict(strict=True, extra="forbid", allow_inf_nan=False)


class Summary(TypedDict):
    """:meth:`SustainedWrite.summary`, as a cache entry holds it (checked when read back)."""

    __pydantic_config__ = _STRICT  # type: ignore[misc]
    profile: str
    size_bytes: int
    passes: float
    block_size: int
    iodepth: int
    seed: int
    burst_rate: float | None
    cache_bytes: float | None
    cache_bytes_drive: float | None
    after_cache_rate: float | None
    overwrite_rate: float | None
    worst_sustained_rate: float | None
    mean_rate: float | None
    bytes_written: int
    elapsed_s: float
    nand_bytes_written: int
    waf: float | None
    throttled_share: float | None
    interval_s: float
    samples: int
    scale: float


SUMMARY: TypeAdapter[Summary] = TypeAdapter(Summary)


def _cached(key: str) -> dict[str, Any] | None:
    """The cache entry of ``key`` if it is there and whole: one that is missing, cut short,
    or not a summary (damaged, or written by another version) is None, and is computed again."""
    try:
        return dict(SUMMARY.validate_json(_entry_path(key).read_bytes()))
    except (OSError, ValidationError):
        return None


def _core_stamp() -> str:
    """The compiled core's identity (version and a hash of its source): the same for every
    worker built from the same source, and different for any change to the model."""
    from .. import _core

    return _core.core_build_id()


def cache_key(profile: str, **options: Any) -> str:
    """A hash of the profile file's content, the host the run uses, the options and the core."""
    prof, _ = load_profile(profile)
    host_name = options.get("host") or prof.default_host
    host, _ = load_host(host_name)
    material = json.dumps({
        "profile_text": hashlib.sha256(profile_text(profile).encode()).hexdigest(),
        "host": host.to_core(),
        "options": {k: (str(v) if v is not None else None) for k, v in sorted(options.items())},
        "core": _core_stamp(),
        "version": 4,
    }, sort_keys=True)
    return hashlib.sha256(material.encode()).hexdigest()


def _entry_path(key: str) -> Path:
    return cache_dir() / "sustained" / f"{key}.json"


def _store(key: str, summary: dict[str, Any]) -> None:
    """Write one entry atomically: a file of its own, renamed into place, so that processes
    storing at once never lose or tear each other's entries."""
    import tempfile

    path = _entry_path(key)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile("w", dir=path.parent, prefix=f".{key[:12]}.", suffix=".tmp",
                                         delete=False) as f:
            json.dump(summary, f)
            tmp = f.name
        os.replace(tmp, path)
    except OSError:
        pass  # a read-only cache directory only costs time


def sustained_summary(profile: str, *, use_cache: bool = True, announce=None, **options: Any) -> dict[str, Any]:
    """:meth:`SustainedWrite.summary` of :func:`sustained_write` (same keyword options), read
    from ``cache_dir()/sustained/KEY.json`` when the same profile content, host, options and
    core were run before (see :func:`cache_key`); the entry is stored after a run, one file per
    entry, so several processes may share the cache. ``use_cache=False`` always simulates
    (and does not store). ``announce(message)`` is called before a simulation starts."""
    key = cache_key(profile, **options) if use_cache else None
    if key is not None:
        entry = _cached(key)
        if entry is not None:
            return dict(entry, cached=True)
    if announce is not None:
        announce(f"simulating a sustained sequential write on {profile} (options: "
                 + ", ".join(f"{k}={v}" for k, v in sorted(options.items()) if v is not None) + ")"
                 + ("; the result will be cached" if use_cache else ""))
    summary = sustained_write(profile, **options).summary()
    if key is not None:
        _store(key, summary)
    return dict(summary, cached=False)
