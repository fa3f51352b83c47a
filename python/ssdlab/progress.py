"""Progress of long simulations on a terminal.

:func:`terminal_progress` shows, for every run inside its block (through :func:`ssdlab.api.observe`,
so :func:`ssdlab.run`, the sizing and rebuild code and the experiments alike), what the core
reports: the preconditioning's fill and passes, then the run's simulated time, requests and
bytes, its rate and the time left where it can be told. It draws on stderr, and only when
stdout and stderr are both terminals: output redirected to a file or a pipe stays as it was.

    >>> from ssdlab.progress import terminal_progress
    >>> with terminal_progress():
    ...     result = ssdlab.run("job.fio", precondition="random:2")
"""

from __future__ import annotations

import contextlib
import sys
import time
from collections.abc import Iterator
from typing import Any

from rich.console import Console
from rich.progress import BarColumn, TaskID, TaskProgressColumn, TextColumn
from rich.progress import Progress as RichProgress

from . import api
from .units import format_bytes

__all__ = ["TerminalProgress", "TimeLeft", "describe", "precondition_estimate", "terminal_progress", "wanted"]

#: CPU seconds the core takes to precondition one GiB of a drive's logical capacity: the
#: sequential fill, and each pass of random overwrite, whose cost grows with its garbage
#: collection: RANDOM_PASS_S_PER_GIB plus GC_SCAN_S_PER_GIB times the drive's blocks per plane
#: over the IUs a block holds (the greedy victim search per block freed), times its write
#: amplification under random writes, taken as (1 + OP) / (2 OP) (assumed: a first
#: approximation for greedy GC; it only ranks drives, the fit absorbs its error). Measured on
#: the machine ssdlab is developed on (2 cores shared with other work, 28 Nov 2026:
#: time.process_time() around ssdlab.execute of a 64 KiB read job), CPU seconds per GiB and
#: pass: samsung-850-pro (--scale 0.05, 12.1 GiB) 0.127, intel-d7-p5510 (0.05, 177 GiB) 0.109,
#: samsung-970-evo-plus (0.05, 46 GiB) 0.110, samsung-970-pro-512 (0.1, 48 GiB) 0.127,
#: intel-x25-m-80 (0.5, 37 GiB) 0.81 and (0.25, 19 GiB) 1.35, intel-x25-e-32 (1, 30 GiB) 0.31;
#: the fit gives each within -9 % to +25 %. A fill unit by unit took 0.003-0.004 s per GiB;
#: a drive without an SLC cache is filled a block at a time instead (the core's
#: ``ftl/fill.rs``), 0.09 s for the whole 61.44 TB profile (29 Nov 2026,
#: ``benches/precondition.py``), so its fill is counted as free.
FILL_S_PER_GIB = 0.004
RANDOM_PASS_S_PER_GIB = 0.109
GC_SCAN_S_PER_GIB = 0.00034


def _fill_s_per_gib(device: dict) -> float:
    """CPU seconds per GiB of a sequential fill: none where the core fills a block at a time
    (a drive without an SLC cache whose blocks hold whole program units), else unit by unit."""
    try:
        n = device["nand"]
        whole_units = n["pages_per_block"] % n["program_pages"] == 0
    except (KeyError, TypeError, ZeroDivisionError):
        return FILL_S_PER_GIB
    return 0.0 if device.get("slc_cache") is None and whole_units else FILL_S_PER_GIB


def _pass_s_per_gib(device: dict) -> float:
    """CPU seconds per GiB of one random pass over this NAND drive (see above)."""
    try:
        n, iu = device["nand"], device["ftl"]["iu_bytes"]
        planes = n["channels"] * n["dies_per_channel"] * n["planes_per_die"]
        raw = planes * n["blocks_per_plane"] * n["pages_per_block"] * n["page_bytes"]
        op = raw / device["capacity_bytes"] - 1
        ius_per_block = n["pages_per_block"] * n["page_bytes"] // iu
        scan = n["blocks_per_plane"] / ius_per_block
        waf = (1 + op) / (2 * op)
    except (KeyError, TypeError, ZeroDivisionError):
        return RANDOM_PASS_S_PER_GIB
    if not 0 < op or ius_per_block < 1:
        return RANDOM_PASS_S_PER_GIB
    return RANDOM_PASS_S_PER_GIB + GC_SCAN_S_PER_GIB * scan * waf


def wanted() -> bool:
    """Whether to show progress: stdout and stderr are both terminals."""
    try:
        return sys.stdout.isatty() and sys.stderr.isatty()
    except (AttributeError, ValueError):  # replaced or closed streams
        return False


def _seconds(ns: float) -> str:
    s = ns / 1e9
    if s < 120:
        return f"{s:.2f} s" if s < 10 else f"{s:.1f} s"
    if s < 7200:
        return f"{s / 60:.1f} min"
    return f"{s / 3600:.2f} h"


def _of(done_ns: float, total_ns: float) -> str:
    """``done/total unit``, both in the total's unit (67.4 s of 10 minutes is "1.1/10.0 min",
    not "67.4/10.0 min")."""
    total = _seconds(total_ns)
    value, unit = total.split(" ")
    scale = {"s": 1e9, "min": 60e9, "h": 3600e9}[unit]
    decimals = len(value.split(".")[1]) if "." in value else 0
    return f"{done_ns / scale:.{decimals}f}/{total}"


def _count(n: int) -> str:
    for div, unit in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if n >= div:
            return f"{n / div:.1f}{unit}"
    return str(n)


def describe(p: api.Progress, wall_s: float | None = None) -> str:
    """One line on ``p``: the preconditioning's fill and passes, or the run's simulated time,
    requests, bytes and rates (``wall_s``: wall-clock seconds the phase has taken)."""
    if p.phase == "precondition":
        if p.restored:
            return "read back from the state cache"
        if p.fill is not None and p.fill < 1:
            return f"fill {100 * p.fill:.0f} %"
        if p.passes:
            return f"fill done, random pass {p.passes_done:.2f} of {p.passes:g}"
        return "fill done"
    sim = p.simulated_ns
    if p.end_ns is not None:
        parts = [f"sim {_of(sim, p.end_ns - p.start_ns)}"]
    else:
        parts = [f"sim {_seconds(sim)}"]
    if p.phase == "run":
        if p.rebuild_target_bytes:
            parts.append(f"rebuilt {format_bytes(p.rebuild_bytes or 0, False)}/"
                         f"{format_bytes(p.rebuild_target_bytes, False)}")
        if p.requests or not p.rebuild_target_bytes:  # a rebuild may run with no host I/O
            parts.append(f"{_count(p.requests)} req")
            parts.append(format_bytes(p.bytes, False) + (f"/{format_bytes(p.planned_bytes, False)}"
                                                          if p.planned_bytes is not None else ""))
            if sim > 0:
                parts.append(f"{format_bytes(p.bytes / (sim / 1e9), False)}/s")
        if wall_s:
            speed = sim / 1e9 / wall_s
            parts.append(f"{speed:.0f}x real time" if speed >= 10 else f"{speed:.2g}x real time")
    else:
        parts.append("devices finishing their own work")
    return ", ".join(parts)


def _preconditioned(node: Any, out: list[tuple[str, dict, dict]]) -> None:
    """The drives of a run's targets that the core preconditions (its NAND SSDs with a
    precondition other than none): name, device, precondition."""
    if isinstance(node, dict):
        pre, device = node.get("precondition"), node.get("device")
        if isinstance(pre, dict) and isinstance(device, dict) and device.get("kind") == "nand-ssd" \
                and pre.get("kind", "none") != "none":
            out.append((str(node.get("name", device.get("name", "?"))), device, pre))
        for value in node.values():
            _preconditioned(value, out)
    elif isinstance(node, list):
        for value in node:
            _preconditioned(value, out)


def precondition_estimate(spec: api.RunSpec, cached: bool = False) -> str | None:
    """One line on what preconditioning will cost before the run's jobs start: its drives,
    their size and about how much CPU time (from the rates measured above); None when no
    drive is preconditioned. ``cached``: the run keeps random preconditionings in the state
    cache, and says so."""
    drives: list[tuple[str, dict, dict]] = []
    _preconditioned(spec.core.get("targets", []), drives)
    if not drives:
        return None
    seconds = 0.0
    kinds = []
    for _, device, pre in drives:
        passes = float(pre.get("passes", 0.0)) if pre["kind"] == "random" else 0.0
        seconds += device["capacity_bytes"] / 2**30 * (_fill_s_per_gib(device) + passes * _pass_s_per_gib(device))
        kind = f"random:{passes:g}" if pre["kind"] == "random" else pre["kind"]
        if kind not in kinds:
            kinds.append(kind)
    names = drives[0][0] if len(drives) == 1 else f"{len(drives)} drives"
    total = format_bytes(sum(d["capacity_bytes"] for _, d, _ in drives)).replace("GiB", " GiB").replace("TiB", " TiB") \
        .replace("MiB", " MiB")
    if seconds < 1:
        cost = "under 1 s"
    elif seconds < 120:
        cost = f"about {seconds:.0f} s"
    else:
        cost = f"about {seconds / 60:.0f} min"
    line = f"preconditioning {names} ({total}, {', '.join(kinds)}): {cost} of CPU time before the jobs start"
    if cached and any(k.startswith("random") for k in kinds):
        line += " (none if the state cache holds it from an earlier run; else it is kept there)"
    return line


class TimeLeft:
    """The wall time left in a phase, from the share of it done and the wall time taken: at
    the phase's mean rate so far (the last few updates' rate jumps as the simulation's cost
    per simulated second changes: 6, 14, 31, 14 s left in four updates), with the previous
    figure counted down by the time since and eased toward each new one (``ease``: the share
    of the difference taken per update)."""

    def __init__(self, ease: float = 0.2) -> None:
        self._ease = ease
        self._left: float | None = None
        self._at = 0.0

    def update(self, fraction: float | None, wall_s: float) -> float | None:
        """Seconds left after ``wall_s`` seconds with ``fraction`` done (None: not known yet)."""
        if fraction is None or not 0 < fraction <= 1 or wall_s <= 0:
            return self._left
        estimate = wall_s * (1 - fraction) / fraction
        if self._left is None:
            self._left = estimate
        else:
            counted = max(self._left - (wall_s - self._at), 0.0)
            self._left = counted + self._ease * (estimate - counted)
        self._at = wall_s
        return self._left


def _left(seconds: float | None) -> str:
    if seconds is None:
        return ""
    s = int(round(seconds))
    return f"{s // 3600}:{s // 60 % 60:02d}:{s % 60:02d} left"


class TerminalProgress:
    """A progress callback that draws one rich progress line for the phase under way (on
    ``console``; cleared when done)."""

    def __init__(self, console: Console | None = None) -> None:
        self._console = console or Console(stderr=True, markup=False, emoji=False, highlight=False)
        self._bar = RichProgress(TextColumn("{task.description}"), BarColumn(bar_width=12), TaskProgressColumn(),
                                 TextColumn("{task.fields[detail]}"), TextColumn("{task.fields[left]}"),
                                 console=self._console, transient=True)
        self._started = False
        self._key: tuple | None = None
        self._task: TaskID | None = None
        self._since = 0.0
        self._time_left = TimeLeft()

    def __call__(self, p: api.Progress) -> None:
        if not self._started:
            self._bar.start()
            self._started = True
        key = (p.run, p.phase, p.device)
        if p.restored and key != self._key:
            self._console.print(f"ssdlab: precondition {p.device}: read back from the state cache "
                                "(--no-cache preconditions it again)")
        if key != self._key:
            if self._task is not None:
                self._bar.remove_task(self._task)
            label = {"precondition": f"precondition {p.device}", "run": "run", "drain": "drain"}.get(p.phase, p.phase)
            if p.run > 1:
                label = f"#{p.run} {label}"
            self._task = self._bar.add_task(label, total=1.0 if p.fraction is not None else None, detail="", left="")
            self._key = key
            self._since = time.monotonic()
            self._time_left = TimeLeft()
        wall = time.monotonic() - self._since
        self._bar.update(self._task, completed=p.fraction or 0.0, detail=describe(p, wall),
                         left=_left(self._time_left.update(p.fraction, wall)))
        # Drawn now, not at the display's next tick: a phase shorter than a tick (a quick
        # preconditioning) is shown too. Reports come about ten times a second at most.
        self._bar.refresh()

    def announce(self, spec: api.RunSpec, cached: bool = False) -> None:
        """Before ``spec`` runs: a line on what preconditioning its drives will cost, if any
        (a long silent wait otherwise surprises); ``cached``: the run uses the state cache."""
        line = precondition_estimate(spec, cached)
        if line is not None:
            self._console.print(f"ssdlab: {line}")

    def close(self) -> None:
        if self._started:
            self._bar.stop()
            self._started = False

    def __enter__(self) -> TerminalProgress:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


@contextlib.contextmanager
def terminal_progress(enabled: bool | None = None) -> Iterator[TerminalProgress | None]:
    """Within the block, show the progress of every simulation on stderr if ``enabled``
    (default: :func:`wanted`, stdout and stderr both terminals); otherwise do nothing."""
    if not (wanted() if enabled is None else enabled):
        yield None
        return
    with TerminalProgress() as display, api.observe(display):
        yield display
