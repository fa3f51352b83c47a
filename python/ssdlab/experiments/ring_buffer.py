"""Ring-buffer recorder: overwriting a full drive with and without TRIM ahead of the write pointer.

A packet recorder (seed 002) writes each drive as a ring and, once it has wrapped, overwrites
its oldest data. Seed 002 lists "another drop when a ring buffer wraps (no chance to TRIM
ahead; GC on the critical path)". Does trimming a window W ahead of the write pointer help?

What the flash does (page-mapped FTL, greedy GC, physical space = alpha x logical):

* **A: old data laid out sequentially** (the previous trip round the ring). The new stream
  invalidates the old blocks whole and in order, so GC finds empty victims: WAF = 1 and the
  clean sequential rate, with or without TRIM. The wrap costs nothing.
* **B: old data fragmented** (here: one drive write of random 4 KiB overwrites, as on a drive
  that held other data before, or whose recorder wrote through a file system that scattered it). Every old block holds data from all over the LBA space,
  so the ring kills each block's data gradually and GC copies whatever is still live. With the
  write pointer at fraction f of the drive, the old region (all space not yet holding new data,
  (alpha - f) x L) holds (1 - f) x L of live data: it behaves like a random-write pool of
  spare factor alpha_eff(f) = (alpha - f) / (1 - f). Taking greedy GC's steady state there
  (Desnoyers 2012, :func:`~ssdlab.experiments.gc_waf.desnoyers_waf`) at every f gives WAF(f),
  highest at the start of the wrap and 1 at its end; the rate follows from the die time per
  host byte (program, plus sense and program of each copy, plus erases).
* **C: B with TRIM W ahead.** The trimmed window is dead data the drive knows about:
  alpha_eff(f) = (alpha - f) / (1 - f - W), i.e. extra spare of W. WAF and rate improve most at
  the start of the wrap, where B is worst; the W needed to keep a recorder rate from the start
  follows from alpha_eff(0) = alpha / (1 - W).
* On a drive with an SLC cache (970 EVO Plus) the model above leaves the cache out; ``slc%``
  shows how much host data went through it. With sequential old data the cache stays full of
  live ring data (a recorder never idles, and GC finds empty native victims), so writes go
  native. With fragmented old data GC is busy, and SLC blocks are its cheapest victims (they
  hold at most a third of a native block's data): collecting them frees cache budget, so host
  data keeps going to SLC and is written twice, to SLC and then folded. In the simulation that
  makes B on this drive worse than the model (WAF about 6 against 3.7). It follows from the
  cache and GC rules in docs/model.md; no measurement of this drive under fragmented overwrite
  is at hand to confirm or refute it.

Two ways to run it, as seed 002 did and as a recorder builder asks:

* ``unthrottled``: one thread keeps 32 x 128 KiB writes in flight; the rate the drive sustains.
  Only A and B: a trimmer must be paced (fio cannot tie one job's offset to another's), and an
  unthrottled writer could overtake it and have its fresh data trimmed.
* ``recorder``: the writer is rate-limited at the drive's share of 100 Gb/s (12.5 GB/s over seed
  002's drive count) and the trimmers run at the same rate W ahead; if the drive cannot keep up,
  the writer falls behind (``short%``, ``worst``), its queue fills (p99 latency) and, as the
  trimmers are paced by time (retention by age), the window grows (``maxW%``), which helps the
  drive. A recorder that trims relative to its write pointer holds W; the model gives both
  (:func:`model_table`). The job is ``data/jobs/ring-recorder-trim-ahead.fio`` with W and the
  rate filled in.

Runs simulate a fraction of each drive (``scale``, default 1/16): rates and WAF carry over,
times and sizes are those of the fraction (plots show full-drive time = simulated / scale).
Two things do not scale: greedy GC finds somewhat emptier victims among smaller blocks
(docs/model.md), and fio's rate limiter forgets backlog older than 1 s of simulated time (16 s
of the full drive at 1/16), so a shortfall of a few seconds is caught up at scale and not at
full size; ``worst`` (5th percentile of interval rates) shows such dips. ``pad%`` is NAND data
written that is neither host data nor GC copies: padding of partial program units.
No published number exists for this comparison; the table gives the model above beside each
simulated value and the error.
"""

from __future__ import annotations

import argparse
import itertools
import math
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ..api import SimulationError, run
from ..config import ProfileError, load_profile
from ..plotting import pyplot, save
from ..reference import SEED002_PUBLISHED as PUBLISHED, SEED002_TARGET
from ..analysis.sustained import estimate_write_rate
from .gc_waf import desnoyers_waf

GB = 1e9
SCALE = 1 / 16
BLOCK = 128 * 1024  # recorder write size (seed 002 used 128 KiB on these drives)
IODEPTH = 32
TRIM_BLOCK = "16MiB"  # a recorder drops old data in large pieces (its capture files)
MODEL_POINTS = 400


@dataclass(frozen=True)
class Scenario:
    key: str
    label: str
    precondition: str  # api.parse_precondition: the old contents of the full drive
    window: int = 0  # % of the drive trimmed ahead of the write pointer (0: no TRIM)

    @property
    def fragmented(self) -> bool:
        return self.precondition.startswith("random")


SCENARIOS = {s.key: s for s in (
    Scenario("A", "sequential old data, no TRIM", "sequential"),
    Scenario("A+T10", "sequential old data, TRIM 10 % ahead", "sequential", 10),
    Scenario("B", "fragmented old data, no TRIM", "random:1"),
    Scenario("C5", "fragmented, TRIM 5 % ahead", "random:1", 5),
    Scenario("C10", "fragmented, TRIM 10 % ahead", "random:1", 10),
    Scenario("C25", "fragmented, TRIM 25 % ahead", "random:1", 25),
)}

# Per drive: the recorder scenarios. The 970 EVO Plus shows what TRIM does to its SLC cache
# (A vs A+T10) and how the cache takes part in GC when old data is fragmented (B, C10).
PLAN = {
    "samsung-pm1725b-1.6tb": ("A", "B", "C5", "C10", "C25"),
    "samsung-970-pro-512": ("A", "B", "C5", "C10", "C25"),
    "samsung-970-evo-plus-1tb": ("A", "A+T10", "B", "C10"),
}
UNTHROTTLED = ("A", "B")  # no trimmer without pacing (module docstring)


def recorder_rate(drive: str) -> float:
    """The drive's share of 100 Gb/s (B/s) with seed 002's drive count for it."""
    return SEED002_TARGET / PUBLISHED[drive].drives_100g


# ---- the fio job ------------------------------------------------------------------------

def recorder_job(window: int = 0, rate: float | None = None, *, block_size: str = "128KiB",
                 iodepth: int = IODEPTH, trim_block: str = TRIM_BLOCK) -> str:
    """One trip round the ring on a full drive, as ``ring-recorder-trim-ahead.fio`` writes it.

    ``window`` (whole %) is trimmed first, then the writer and two paced trimmers (the rest of
    the drive from W on, then the first W again) start together at ``rate`` B/s. Without a
    window there is only the writer; without a rate it runs flat out (seed 002's method)."""
    if not 0 <= window < 100 or int(window) != window:
        raise ValueError(f"window {window}: expected a whole percentage in [0, 100)")
    if window and rate is None:
        raise ValueError("TRIM ahead needs a rate: the trimmers are paced at the writer's rate")
    pace = "" if rate is None else str(round(rate))  # B/s
    head = "[global]\nkb_base=1000\nioengine=libaio\ndirect=1\n\n"
    after_window = "stonewall\n" if window else ""
    writer = (f"[recorder]\n{after_window}rw=write\nbs={block_size}\n"
              f"iodepth={iodepth}\nsize=100%\n" + (f"rate=,{pace}\n" if pace else "") + "\n")
    if not window:
        return head + writer
    return (head
            + f"[window]\nrw=trim\nbs={trim_block}\nsize={window}%\n\n"
            + writer
            + f"[trim-ahead]\nrw=trim\nbs={trim_block}\noffset={window}%\nsize={100 - window}%\n"
              f"rate=,,{pace}\n\n"
            + f"[trim-wrap]\nwait_for=trim-ahead\nrw=trim\nbs={trim_block}\nsize={window}%\n"
              f"rate=,,{pace}\n")


# ---- the model --------------------------------------------------------------------------

@dataclass(frozen=True)
class Flash:
    """What the wrap model needs from a profile, at the simulated scale."""

    alpha: float  # space that can hold aged data / logical space
    iu: int
    ius_per_page: int
    ius_per_block: int
    dies: int
    program_s_per_iu: float
    sense_s: float  # one page sense
    erase_s: float  # one block erase
    rate_cap: float  # link, channels, controller (B/s)
    capacity: int

    @classmethod
    def from_profile(cls, profile: str, scale: float = SCALE) -> Flash:
        prof, _ = load_profile(profile)
        core = prof.to_core(scale)
        n, ftl = core["nand"], core["ftl"]
        iu = ftl["iu_bytes"]
        per_page = n["page_bytes"] // iu
        per_block = per_page * n["planes_per_die"] * n["pages_per_block"]
        dies = n["channels"] * n["dies_per_channel"]
        logical = core["capacity_bytes"] // iu
        # All blocks but each die's GC reserve and open block (as gc_waf counts them); data in
        # the static SLC cache takes bits-per-cell times its size.
        usable = dies * (n["blocks_per_plane"] - ftl["gc_threshold_blocks"] - 1) * per_block
        slc = core.get("slc_cache") or {}
        usable -= (n["bits_per_cell"] - 1) * slc.get("static_bytes", 0) // iu
        unit = per_page * n["planes_per_die"] * n["program_pages"]
        return cls(alpha=usable / logical, iu=iu, ius_per_page=per_page, ius_per_block=per_block,
                   dies=dies, program_s_per_iu=n["program_ns"] / 1e9 / unit, sense_s=n["read_ns"] / 1e9,
                   erase_s=n["erase_ns"] / 1e9, rate_cap=estimate_write_rate(prof),
                   capacity=core["capacity_bytes"])

    def write_rate(self, a: np.ndarray | float) -> np.ndarray:
        """Sustained host write rate (B/s) when GC victims are a fraction ``a`` valid: per host
        IU, 1/(1-a) programs, a/(1-a) copies (each sensing its share of a page) and
        1/((1-a) IUs per block) erases, spread over all dies."""
        a = np.clip(np.asarray(a, dtype=float), 0.0, 0.999)
        k = self.ius_per_page
        safe = np.where(a > 0, a, 1.0)
        senses = np.where(a > 0, (1 - (1 - a) ** k) / (k * safe), 0.0)  # per copied IU
        per_host = (self.program_s_per_iu + a * senses * self.sense_s + self.erase_s / self.ius_per_block) / (1 - a)
        return np.minimum(self.rate_cap, self.dies * self.iu / per_host)


def wrap_model(flash: Flash, window: int, fragmented: bool, target: float | None = None, *,
               paced: bool = True, points: int = MODEL_POINTS, catch_up_s: float = 1.0) -> pd.DataFrame:
    """The wrap step by step, as the fio job runs it: per step of the write pointer f (fraction
    of the drive), the time, the rate the drive sustains there, the writer's speed and WAF.

    The trimmers are paced by time (``target`` B/s from the window W on, up to 1 + W), so a
    writer that falls behind leaves a wider window; ``paced=False`` holds the window at W
    instead (a recorder that trims relative to its write pointer, which fio cannot express). Live old data is what lies beyond the
    trimmer; new data counts as valid until the trimmer comes round to it (after 1). On
    fragmented old data the old region is a random-write pool with spare factor
    (alpha - new valid) / live old; on sequential old data GC victims are empty. The writer is
    fio's rate-limited job: at ``target`` while on schedule, flat out while behind it, with at
    most ``catch_up_s`` of backlog kept (fio forgets older debt).
    """
    w = window / 100.0
    step = 1.0 / points
    f = t = 0.0
    g, schedule = w, 0.0
    rows = []
    for _ in range(points):
        live = max(0.0, 1.0 - g) if window else 1.0 - f
        new_valid = f - min(f, max(0.0, g - 1.0)) if window else f
        a = 0.0
        if fragmented and live > 1e-12:
            a = 1.0 - 1.0 / desnoyers_waf((flash.alpha - new_valid) / live)
        can = float(flash.write_rate(a))
        behind = target is None or f + step / 2 < schedule
        speed = can if behind else min(target, can)
        dt = step * flash.capacity / speed
        rows.append({"f": f + step / 2, "t_s": t + dt, "rate": can, "speed": speed, "queued": behind or can < target,
                     "waf": 1.0 / (1.0 - a), "window": g - f})
        f, t = f + step, t + dt
        if target is not None:
            schedule = min(schedule + target * dt / flash.capacity, f + target * catch_up_s / flash.capacity)
            if window and paced:
                g = min(g + target * dt / flash.capacity, 1.0 + w)
        if window and not paced:
            g = min(f + w, 1.0 + w)
    return pd.DataFrame(rows)


def predict(flash: Flash, window: int, fragmented: bool, target: float | None, *, paced: bool = True) -> dict[str, Any]:
    """Model values for one run: mean WAF over the wrap, mean rate, lowest sustainable rate,
    p99 write latency (Little: iodepth x bs / speed for the writes made while the queue is
    full; NaN when the recorder keeps up and never queues), the widest window and the curve."""
    m = wrap_model(flash, window, fragmented, target, paced=paced)
    lat = np.where(m.queued, IODEPTH * BLOCK / m.speed, 0.0)
    p99 = float(np.percentile(lat, 99))
    return {"waf": float(m.waf.mean()), "rate": flash.capacity / float(m.t_s.iloc[-1]),
            "rate_min": float(m.rate.min()), "p99_ms": p99 * 1e3 if p99 > 0 else math.nan,
            "max_window_pct": 100.0 * float(m.window.max()), "curve": m}


def window_to_keep_up(flash: Flash, target: float) -> float:
    """Smallest W (%) for which the model's rate at the start of the wrap (its slowest point)
    reaches ``target``; NaN if even 90 % is not enough."""
    def rate_at_start(w: float) -> float:
        return float(flash.write_rate(1.0 - 1.0 / desnoyers_waf(flash.alpha / (1.0 - w))))

    if rate_at_start(0.0) >= target:
        return 0.0
    lo, hi = 0.0, 0.9
    if rate_at_start(hi) < target:
        return math.nan
    for _ in range(40):
        mid = (lo + hi) / 2
        lo, hi = (lo, mid) if rate_at_start(mid) >= target else (mid, hi)
    return 100.0 * hi


# ---- running ----------------------------------------------------------------------------

@dataclass
class RingRun:
    drive: str
    scenario: Scenario
    mode: str  # "recorder" or "unthrottled"
    target: float | None
    scale: float
    prediction: dict[str, Any]
    wall_s: float = 0.0
    error: str | None = None
    metrics: dict[str, float] = field(default_factory=dict)
    timeseries: pd.DataFrame | None = None


def _interval_ns(flash: Flash, prediction: dict[str, Any]) -> int:
    """About 200 samples over the predicted run time, rounded to whole milliseconds."""
    expected = flash.capacity / prediction["rate"]
    return max(1, round(expected / 200 * 1e3)) * 1_000_000


def _series(result, capacity: int, scale: float) -> pd.DataFrame:
    """Per interval: write rate and WAF, where the write pointer is and how far TRIM is ahead."""
    rows = []
    s = result.core["samples"]
    for p, c in itertools.pairwise(s):
        dt = (c["t_ns"] - p["t_ns"]) / 1e9
        if dt <= 0:
            continue
        ci, pi = c["devices"][0]["internal"], p["devices"][0]["internal"]
        host = ci["host_bytes_written"] - pi["host_bytes_written"]
        nand = ci["media_bytes_written"] - pi["media_bytes_written"]
        rows.append({
            "t_s": c["t_ns"] / 1e9, "t_full_s": c["t_ns"] / 1e9 / scale, "dt_s": dt,
            "write_bw_bytes": (c["write_bytes"] - p["write_bytes"]) / dt,
            "waf": nand / host if host else math.nan,
            "position": c["write_bytes"] / capacity,
            "lead": (c["devices"][0]["disk"]["discard_sectors"] * 512 - c["write_bytes"]) / capacity,
        })
    df = pd.DataFrame(rows)
    if len(df) and not s[-1]["devices"][0]["disk"]["discard_sectors"]:
        df["lead"] = math.nan  # no TRIM, no window
    return df


def _metrics(result, ts: pd.DataFrame, target: float | None) -> dict[str, float]:
    rec = next(u for u in result.units if u.name == "recorder")
    w = rec.dirs["write"]
    rate = w.bytes / (rec.runtime_ns / 1e9)
    job = next(j for j in result.core["jobs"] if j["name"] == "recorder")
    full = ts[(ts.t_s - ts.dt_s >= job["start_ns"] / 1e9) & (ts.t_s <= job["end_ns"] / 1e9)]
    full = full.iloc[1:-1] if len(full) > 3 else full  # ramp-up and the short last interval
    i = result.internal()
    host = i["host_bytes_written"] or 1
    return {
        "rate": rate,
        "short_pct": 100.0 * (1.0 - rate / target) if target else math.nan,
        "worst": float(np.percentile(full.write_bw_bytes, 5)) if len(full) else math.nan,
        "p99_ms": w.percentiles([99.0])["99.000000"] / 1e6,
        "waf": i["waf"] or math.nan,
        "gc_copies": i["gc_relocated_bytes"] / host,
        "slc_pct": 100.0 * i["slc_host_bytes"] / host,
        "pad_pct": 100.0 * (i["nand_bytes_written"] - host - i["gc_relocated_bytes"]) / host,
        "max_window_pct": 100.0 * float(ts.lead.max()) if len(ts) else math.nan,
    }


def run_one(drive: str, scenario: Scenario, mode: str, *, scale: float = SCALE, seed: int = 0,
            target: float | None = None) -> RingRun:
    """Simulate one trip round the ring (``recorder`` mode at ``target`` B/s, by default the
    drive's seed 002 share); a profile that cannot be loaded or a core that fails gives a run
    with ``error`` set instead of raising."""
    if mode not in ("recorder", "unthrottled"):
        raise ValueError(f"mode {mode!r}: expected recorder or unthrottled")
    if mode == "unthrottled":
        target = None
    elif target is None:
        if drive not in PUBLISHED:
            return RingRun(drive, scenario, mode, None, scale, {}, error="no seed 002 recorder rate for this drive")
        target = recorder_rate(drive)
    try:
        flash = Flash.from_profile(drive, scale)
    except ProfileError as e:
        return RingRun(drive, scenario, mode, target, scale, {},
                       error=f"profile not available: {str(e).splitlines()[0]}")
    pred = predict(flash, scenario.window, scenario.fragmented, target)
    out = RingRun(drive, scenario, mode, target, scale, pred)
    t0 = time.perf_counter()
    try:
        result = run(recorder_job(scenario.window, target), profile=drive, scale=scale, seed=seed,
                     precondition=scenario.precondition, interval=f"{_interval_ns(flash, pred)}ns")
    except (SimulationError, ValueError) as e:
        out.error = f"simulation failed: {str(e).splitlines()[0]}"
    except BaseException as e:  # a Rust panic arrives as pyo3's PanicException (a BaseException)
        if type(e).__name__ != "PanicException":
            raise
        out.error = f"core panic: {str(e).splitlines()[0]}"
    else:
        out.timeseries = _series(result, flash.capacity, scale)
        out.metrics = _metrics(result, out.timeseries, target)
    out.wall_s = time.perf_counter() - t0
    return out


def plan(drives: list[str] | None = None, scenarios: list[str] | None = None,
         modes: tuple[str, ...] = ("recorder", "unthrottled")) -> list[tuple[str, Scenario, str]]:
    """(drive, scenario, mode) triples: each drive's PLAN (or ``scenarios``), unthrottled only
    for the scenarios without TRIM."""
    out = []
    for d in drives or list(PLAN):
        keys = scenarios or PLAN.get(d, ("A", "B", "C10"))
        for mode in modes:
            for k in keys:
                if mode == "recorder" or (k in UNTHROTTLED and not SCENARIOS[k].window):
                    out.append((d, SCENARIOS[k], mode))
    return out


def simulate(drives: list[str] | None = None, scenarios: list[str] | None = None, *,
             modes: tuple[str, ...] = ("recorder", "unthrottled"), scale: float = SCALE,
             seed: int = 0, workers: int = 2) -> list[RingRun]:
    """All runs of :func:`plan`; the core releases the GIL, so ``workers`` threads run
    simulations side by side (results do not depend on it)."""
    todo = plan(drives, scenarios, modes)
    with ThreadPoolExecutor(max_workers=max(1, workers)) as pool:
        return list(pool.map(lambda t: run_one(t[0], t[1], t[2], scale=scale, seed=seed), todo))


def _err(sim: float, model: float) -> float:
    return 100.0 * (sim / model - 1.0) if model and math.isfinite(sim) and math.isfinite(model) else math.nan


def model_table(drives: list[str], windows: tuple[int, ...] = (0, 5, 10, 25), *,
                scale: float = SCALE) -> pd.DataFrame:
    """The model alone, for a recorder at each drive's rate on fragmented old data: the
    window paced by time (as the fio job) and held at W (trimming relative to the write
    pointer), plus the smallest W that keeps up from the first byte."""
    rows = []
    for d in drives:
        try:
            flash = Flash.from_profile(d, scale)
        except ProfileError:
            continue
        target = recorder_rate(d)
        need = window_to_keep_up(flash, target)
        for w in sorted(set(windows) | ({math.ceil(need)} if math.isfinite(need) else set())):
            held = predict(flash, w, True, target, paced=False)
            paced = predict(flash, w, True, target)
            rows.append({"drive": d, "window_pct": w, "target_GBps": target / GB,
                         "waf_held": held["waf"], "rate_held": held["rate"] / GB, "min_held": held["rate_min"] / GB,
                         "waf_paced": paced["waf"], "rate_paced": paced["rate"] / GB,
                         "max_window_paced": paced["max_window_pct"], "keeps_up_held": held["rate"] >= 0.999 * target})
    return pd.DataFrame(rows)


def reproduce(drives: list[str] | None = None, scenarios: list[str] | None = None, *,
              scale: float = SCALE, seed: int = 0, workers: int = 2,
              runs: list[RingRun] | None = None) -> pd.DataFrame:
    """One row per run: simulated rate, shortfall, worst interval, p99, WAF, GC copies, SLC and
    padding shares, widest TRIM window, each with the model's value and the error in % where
    the model has one. Rates in GB/s. Pass ``runs`` (from :func:`simulate`) to reuse them."""
    if runs is None:
        runs = simulate(drives, scenarios, scale=scale, seed=seed, workers=workers)
    rows = []
    for r in runs:
        m, p = r.metrics, r.prediction
        nan = math.nan
        rows.append({
            "drive": r.drive, "scenario": r.scenario.key, "mode": r.mode,
            "target_GBps": r.target / GB if r.target else nan, "window_pct": r.scenario.window,
            "rate_GBps": m.get("rate", nan) / GB, "rate_model": p.get("rate", nan) / GB,
            "rate_err_pct": _err(m.get("rate", nan), p.get("rate", nan)),
            "short_pct": m.get("short_pct", nan), "worst_GBps": m.get("worst", nan) / GB,
            "rate_min_model": p.get("rate_min", nan) / GB,
            "p99_ms": m.get("p99_ms", nan), "p99_model_ms": p.get("p99_ms", nan),
            "waf": m.get("waf", nan), "waf_model": p.get("waf", nan),
            "waf_err_pct": _err(m.get("waf", nan), p.get("waf", nan)),
            "gc_copies": m.get("gc_copies", nan), "slc_pct": m.get("slc_pct", nan),
            "pad_pct": m.get("pad_pct", nan), "max_window_pct": m.get("max_window_pct", nan),
            "max_window_model": p.get("max_window_pct", nan),
            "scale": r.scale, "wall_s": r.wall_s, "status": r.error or "ok",
        })
    return pd.DataFrame(rows)


# ---- plot -------------------------------------------------------------------------------

def plot(runs: list[RingRun], path: Path) -> None:
    """Write throughput against full-drive time, one row per drive: the recorder runs (left)
    and the unthrottled ones (right); dashed, the model's rate along the wrap."""
    plt = pyplot()
    drives = list(dict.fromkeys(r.drive for r in runs))
    modes = [m for m in ("recorder", "unthrottled") if any(r.mode == m for r in runs)]
    keys = list(dict.fromkeys(r.scenario.key for r in runs))
    colour = {k: plt.get_cmap("tab10")(i % 10) for i, k in enumerate(keys)}
    fig, axes = plt.subplots(len(drives), len(modes), figsize=(6.5 * len(modes), 3.0 * len(drives)),
                             squeeze=False)
    for row, drive in enumerate(drives):
        for col, mode in enumerate(modes):
            ax = axes[row, col]
            mine = [r for r in runs if r.drive == drive and r.mode == mode]
            failed = [f"{r.scenario.key}: {r.error}" for r in mine if r.error]
            top = 0.0
            for r in mine:
                if r.error or r.timeseries is None or r.timeseries.empty:
                    continue
                ts, c = r.timeseries, colour[r.scenario.key]
                ax.step(ts.t_full_s / 60, ts.write_bw_bytes / GB, where="pre", color=c, lw=1.1,
                        label=f"{r.scenario.key}: {r.scenario.label}")
                curve = r.prediction["curve"]
                start = float(ts.t_s[ts.write_bw_bytes > 0].iloc[0] - ts.dt_s.iloc[0]) if (ts.write_bw_bytes > 0).any() else 0.0
                ax.plot((start + curve.t_s) / r.scale / 60, curve.speed / GB, ls="--", lw=0.8, color=c)
                top = max(top, float(ts.write_bw_bytes.max()) / GB)
            if mine and mine[0].target:
                ax.axhline(mine[0].target / GB, color="k", ls=":", lw=0.8, label="recorder rate")
                top = max(top, mine[0].target / GB)
            if failed:
                ax.text(0.02, 0.04, "\n".join(failed)[:300], transform=ax.transAxes, fontsize=6, va="bottom")
            title = PUBLISHED[drive].label if drive in PUBLISHED else drive
            what = (f"recorder at {mine[0].target / GB:.2f} GB/s" if mode == "recorder" and mine and mine[0].target
                    else "unthrottled, 32 x 128 KiB in flight")
            ax.set(title=f"{title}: {what}", xlabel="time at full drive size (min)", ylabel="write GB/s",
                   ylim=(0, 1.25 * top if top else 1))
            ax.legend(fontsize=6, loc="lower right")
    fig.suptitle(f"One trip round a ring on a full drive (simulated at scale {runs[0].scale:g}; dashed: model)",
                 fontsize=9)
    save(fig, path, dpi=110)


# ---- main -------------------------------------------------------------------------------

COLUMNS = {  # printed column: DataFrame column
    "drive": "drive", "scen": "scenario", "mode": "mode", "W%": "window_pct",
    "GB/s": "rate_GBps", "model": "rate_model", "err%": "rate_err_pct", "short%": "short_pct",
    "worst": "worst_GBps", "min_model": "rate_min_model", "p99ms": "p99_ms", "p99_model": "p99_model_ms",
    "WAF": "waf", "WAF_model": "waf_model", "WAF_err%": "waf_err_pct", "copies": "gc_copies",
    "slc%": "slc_pct", "pad%": "pad_pct", "maxW%": "max_window_pct", "maxW_model": "max_window_model", "wall_s": "wall_s", "status": "status",
}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--drives", nargs="+", default=list(PLAN), metavar="NAME", help="profiles (default: %(default)s)")
    ap.add_argument("--scenarios", nargs="+", choices=list(SCENARIOS), default=None,
                    help="scenarios for every drive (default: each drive's plan)")
    ap.add_argument("--scale", type=float, default=SCALE, help="fraction of each drive simulated (default 1/16)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--workers", type=int, default=2, help="simulations run side by side")
    ap.add_argument("--plot", type=Path, default=Path("out/ring_buffer_trim.png"))
    args = ap.parse_args(argv)
    unknown = [d for d in args.drives if d not in PUBLISHED]
    if unknown:
        ap.error(f"no seed 002 recorder rate for {', '.join(unknown)} (known: {', '.join(PUBLISHED)})")
    t0 = time.perf_counter()
    runs = simulate(args.drives, args.scenarios, scale=args.scale, seed=args.seed, workers=args.workers)
    table = reproduce(runs=runs)
    shown = table[list(COLUMNS.values())].set_axis(list(COLUMNS), axis=1)
    shown["drive"] = shown.drive.str.replace("samsung-", "", regex=False)
    with pd.option_context("display.width", 250, "display.max_columns", 30, "display.float_format", "{:.2f}".format):
        print(f"Ring-buffer recorder, one wrap over a full drive, TRIM ahead vs none (scale {args.scale:g}; "
              "GB/s, ms; model = Desnoyers greedy GC along the wrap)")
        print(shown.to_string(index=False))
    print()
    for d in args.drives:
        try:
            flash = Flash.from_profile(d, args.scale)
        except ProfileError:
            continue
        print(f"{d}: alpha {flash.alpha:.3f} (spare the GC can use), clean rate "
              f"{float(flash.write_rate(0.0)) / GB:.2f} GB/s, recorder {recorder_rate(d) / GB:.3f} GB/s")
    with pd.option_context("display.width", 250, "display.float_format", "{:.2f}".format):
        print("\nModel only, fragmented old data, recorder rate: window paced by time (the fio job) vs held at W"
              " (trimming relative to the write pointer); the last W of each drive is the least that keeps up")
        print(model_table(args.drives, scale=args.scale).to_string(index=False))
    ok = table[table.status == "ok"]
    for col in ("waf_err_pct", "rate_err_pct"):
        e = ok[col].dropna()
        if len(e):
            print(f"largest |{col}|: {e.abs().max():.1f} %")
    for _, r in table[table.status != "ok"].iterrows():
        print(f"not simulated: {r.drive} {r.scenario} ({r['mode']}): {r.status}")
    print(f"wall time: {time.perf_counter() - t0:.1f} s for {len(runs)} runs "
          f"(sum of runs {table.wall_s.sum():.1f} s, {args.workers} workers)")
    plot(runs, args.plot)
    print(f"plot: {args.plot}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
