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
#: sequential fill, and each pass of random overwrite (with its garbage collection). Measured
#: on the machine ssdlab is developed on (2 cores shared with other work, 28 Nov 2026:
#: time.process_time() around ssdlab.execute of a 64 KiB read job at --scale 0.05):
#: samsung-850-pro 12.1 GiB fill 0.05 s, random:1 1.59 s, random:2 3.23 s;
#: samsung-970-evo-plus-1tb 46.1 GiB 0.15 s, 5.2 s, 10.8 s; intel-d7-p5510-3.84tb 177 GiB
#: 0.65 s, 19.9 s, 41.0 s. A pass took 0.11-0.13 s per GiB, a fill 0.003-0.004 s.
FILL_S_PER_GIB = 0.004
RANDOM_PASS_S_PER_GIB = 0.12


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


def _preconditioned(node: Any, out: list[tuple[str, int, dict]]) -> None:
    """The drives of a run's targets that the core preconditions (its NAND SSDs with a
    precondition other than none): name, logical capacity, precondition."""
    if isinstance(node, dict):
        pre, device = node.get("precondition"), node.get("device")
        if isinstance(pre, dict) and isinstance(device, dict) and device.get("kind") == "nand-ssd" \
                and pre.get("kind", "none") != "none":
            out.append((str(node.get("name", device.get("name", "?"))), int(device["capacity_bytes"]), pre))
        for value in node.values():
            _preconditioned(value, out)
    elif isinstance(node, list):
        for value in node:
            _preconditioned(value, out)


def precondition_estimate(spec: api.RunSpec) -> str | None:
    """One line on what preconditioning will cost before the run's jobs start: its drives,
    their size and about how much CPU time (from :data:`FILL_S_PER_GIB` and
    :data:`RANDOM_PASS_S_PER_GIB`); None when no drive is preconditioned."""
    drives: list[tuple[str, int, dict]] = []
    _preconditioned(spec.core.get("targets", []), drives)
    if not drives:
        return None
    seconds = 0.0
    kinds = []
    for _, capacity, pre in drives:
        passes = float(pre.get("passes", 0.0)) if pre["kind"] == "random" else 0.0
        seconds += capacity / 2**30 * (FILL_S_PER_GIB + passes * RANDOM_PASS_S_PER_GIB)
        kind = f"random:{passes:g}" if pre["kind"] == "random" else pre["kind"]
        if kind not in kinds:
            kinds.append(kind)
    names = drives[0][0] if len(drives) == 1 else f"{len(drives)} drives"
    total = format_bytes(sum(c for _, c, _ in drives)).replace("GiB", " GiB").replace("TiB", " TiB") \
        .replace("MiB", " MiB")
    if seconds < 1:
        cost = "under 1 s"
    elif seconds < 120:
        cost = f"about {seconds:.0f} s"
    else:
        cost = f"about {seconds / 60:.0f} min"
    return f"preconditioning {names} ({total}, {', '.join(kinds)}): {cost} of CPU time before the jobs start"


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

    def announce(self, spec: api.RunSpec) -> None:
        """Before ``spec`` runs: a line on what preconditioning its drives will cost, if any
        (a long silent wait otherwise surprises)."""
        line = precondition_estimate(spec)
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
