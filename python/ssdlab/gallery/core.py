"""The gallery's result type and its one rule for pass and fail.

Every experiment returns an :class:`ExperimentResult`: rows of published (or modelled) vs
simulated, each with a stated tolerance and a status, plus figures. A row passes only inside
its tolerance; a row that cannot be judged says why, and so does a row that was not run. The
status is computed here from the numbers, never set by an experiment, so "pass" always means
the same thing."""

from __future__ import annotations

import math
from enum import Enum
from typing import Any, Callable, Optional

from pydantic import BaseModel, ConfigDict, Field, model_validator


class Status(str, Enum):
    passed = "pass"
    failed = "fail"
    not_judged = "not-judged"
    not_run = "not-run"


class Tolerance(BaseModel):
    """Accepted range of a row's error, ``low <= error <= high`` (in the row's error unit: %
    of the published value, or e.g. drives), and why this range. A published lower bound
    ("at least X") has ``high = inf``; an upper bound ``low = -inf``. A trend row has no
    range: it passes when the trend holds."""

    model_config = ConfigDict(frozen=True)

    low: float = -math.inf
    high: float = math.inf
    reason: str
    trend: bool = False

    @classmethod
    def within(cls, pct: float, reason: str) -> "Tolerance":
        return cls(low=-pct, high=pct, reason=reason)

    @classmethod
    def at_least(cls, pct: float, reason: str) -> "Tolerance":
        """The published figure is a lower bound: anything above passes, and down to ``pct`` below."""
        return cls(low=-pct, reason=reason)

    @classmethod
    def at_most(cls, pct: float, reason: str) -> "Tolerance":
        """The published figure is an upper bound: anything below passes, and up to ``pct`` above."""
        return cls(high=pct, reason=reason)

    @classmethod
    def holds(cls, reason: str = "the trend must hold") -> "Tolerance":
        return cls(reason=reason, trend=True)

    def text(self, unit: str = "%") -> str:
        if self.trend:
            return "trend holds"
        u = "" if unit == "%" else " "
        if math.isinf(self.low) and math.isinf(self.high):
            return "any"
        if math.isinf(self.high):
            return f">= {self.low:+g}{u}{unit}"
        if math.isinf(self.low):
            return f"<= {self.high:+g}{u}{unit}"
        if self.low == -self.high:
            return f"±{self.high:g}{u}{unit}"
        return f"{self.low:+g}..{self.high:+g}{u}{unit}"


def _finite(x: Optional[float]) -> bool:
    return x is not None and isinstance(x, (int, float)) and math.isfinite(x)


class Row(BaseModel):
    """One quantity: what was published, what the simulator gave, the error and its status.

    ``simulated``/``error`` are numbers for a measured row; a trend row has ``holds`` and an
    ``evidence`` text instead. ``skip`` (not judged) and ``missing`` (not run) carry the
    reason a row has no verdict. ``status`` is derived (see :func:`judge`)."""

    model_config = ConfigDict(frozen=True)

    experiment: str = ""
    case: str = ""
    quantity: str
    published: str
    simulated: Optional[float] = None
    unit: str = ""
    error: Optional[float] = None
    error_unit: str = "%"
    tolerance: Tolerance
    holds: Optional[bool] = None
    evidence: str = ""
    skip: Optional[str] = None
    missing: Optional[str] = None
    status: Status = Status.not_run
    reason: str = ""

    @model_validator(mode="after")
    def _judge(self) -> "Row":
        status, reason = judge(self)
        object.__setattr__(self, "status", status)
        object.__setattr__(self, "reason", reason)
        return self


def judge(row: Row) -> tuple[Status, str]:
    """The status of a row and its reason. Order matters: a row not run cannot be judged, a
    row not judged is never passed, and a number missing where a verdict needs one fails."""
    if row.missing:
        return Status.not_run, row.missing
    if row.skip:
        return Status.not_judged, row.skip
    t = row.tolerance
    if t.trend:
        if row.holds is None:
            return Status.failed, "no verdict on the trend"
        return (Status.passed, "trend holds") if row.holds else (Status.failed, "trend does not hold")
    if not _finite(row.error):
        return Status.failed, "no finite error to judge"
    if t.low <= row.error <= t.high:
        return Status.passed, f"inside {t.text(row.error_unit)}"
    return Status.failed, f"outside {t.text(row.error_unit)}"


def pct_error(simulated: Optional[float], published: float) -> Optional[float]:
    """Signed error in % of the published value (None when either is missing or zero)."""
    if not _finite(simulated) or not published:
        return None
    return 100.0 * (simulated / published - 1.0)


class Figure(BaseModel):
    """A figure as PNG bytes with its caption."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    caption: str
    png: bytes


class ExperimentResult(BaseModel):
    """What one experiment gives the gallery."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    name: str
    title: str
    citation: str
    quick: bool
    rows: list[Row]
    figures: list[Figure] = Field(default_factory=list)
    notes: list[str] = Field(default_factory=list)
    wall_s: float = 0.0
    error: Optional[str] = None  # the experiment raised: one line

    @property
    def failed(self) -> bool:
        return self.error is not None or any(r.status == Status.failed for r in self.rows)

    def counts(self) -> dict[str, int]:
        out = {s.value: 0 for s in Status}
        for r in self.rows:
            out[r.status.value] += 1
        return out


class Context(BaseModel):
    """What an experiment's run function gets: the mode and a seed."""

    quick: bool = False
    seed: int = 0


RunFn = Callable[[Context], tuple[list[Row], list[Figure], list[str]]]


class Experiment(BaseModel):
    """A registered reproduction: ``run(ctx)`` returns rows, figures and notes."""

    model_config = ConfigDict(arbitrary_types_allowed=True, frozen=True)

    name: str
    title: str
    citation: str
    run: Any  # RunFn
    quick_note: str = ""  # what quick mode leaves out, for --list and the page


def figure_png(fig: Any, dpi: int = 100) -> bytes:
    """A matplotlib figure as PNG bytes (and closed)."""
    import io

    from ..plotting import finish, pyplot

    buf = io.BytesIO()
    finish(fig)
    fig.savefig(buf, format="png", dpi=dpi)
    pyplot().close(fig)
    return buf.getvalue()
