"""Figures for reports and experiments: headless matplotlib, written to a file."""

from __future__ import annotations

from pathlib import Path
from typing import Any


def pyplot():
    """matplotlib.pyplot on the non-interactive Agg backend (works without a display)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def plain(x: float, pos: Any = None) -> str:
    """A tick label as a plain number: 2, 0.5, 1,024 (not 2×10⁰)."""
    if x == 0 or abs(x) >= 1 and float(x).is_integer():
        return f"{x:,.0f}"
    return f"{x:.3g}"


def plain_log_ticks(fig: Any) -> None:
    """Plain numbers on every log axis of ``fig``. matplotlib labels a log axis in powers of
    its base, and a tick between powers as "2×10⁰"; here the decades read 1, 10, 100 and,
    where an axis spans too little for its decades to be enough, the ticks between them
    are labelled too, plainly."""
    from matplotlib.ticker import FuncFormatter, LogFormatter

    class Plain(LogFormatter):  # LogFormatter decides which ticks get a label; the label is plain
        def __call__(self, x, pos=None):
            return plain(x) if super().__call__(x, pos) else ""

    for ax in fig.axes:
        for axis, scale in ((ax.xaxis, ax.get_xscale()), (ax.yaxis, ax.get_yscale())):
            if scale != "log":
                continue
            base = getattr(axis.get_transform(), "base", 10)
            axis.set_major_formatter(FuncFormatter(plain))
            axis.set_minor_formatter(Plain(base=base, labelOnlyBase=False, minor_thresholds=(1, 0.4)))


def from_zero(ax: Any, headroom: float = 0.1) -> None:
    """The y axis from 0 to ``headroom`` above the highest point drawn, so that a line at its
    maximum is not drawn on the frame (setting only the bottom keeps matplotlib's top, which
    is the data's maximum when the data's range is small beside it)."""
    top = ax.dataLim.y1
    if top > 0 and top == top:
        ax.set_ylim(0, top * (1 + headroom))
    else:
        ax.set_ylim(bottom=0)


def finish(fig: Any, layout: bool = True) -> None:
    """What every figure gets before it is written: plain log ticks, then the layout (unless
    the caller has set the margins itself)."""
    plain_log_ticks(fig)
    if layout:
        fig.tight_layout()


def save(fig: Any, path: Path, dpi: int = 120) -> None:
    """Lay out, write (creating the folder) and close a figure."""
    finish(fig)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=dpi)
    pyplot().close(fig)
