"""iostat -x fields from two /proc/diskstats snapshots, computed as sysstat's iostat does.

Counters use the core's names (``read_ios``, ``io_ticks_ms``, …). Over an interval of
``dt_ms``: r/s = Δreads/Δt; rkB/s = Δsectors/2/Δt; r_await = Δread_ticks/Δreads;
rareq-sz = Δsectors/2/Δreads; aqu-sz = Δtime_in_queue/Δt; %util = 100·Δio_ticks/Δt (capped
at 100 as iostat does). Awaits and request sizes are 0 when no request of that kind completed.
"""

from __future__ import annotations

from collections.abc import Mapping

FIELDS = [
    "r/s", "rkB/s", "rrqm/s", "%rrqm", "r_await", "rareq-sz",
    "w/s", "wkB/s", "wrqm/s", "%wrqm", "w_await", "wareq-sz",
    "d/s", "dkB/s", "drqm/s", "%drqm", "d_await", "dareq-sz",
    "f/s", "f_await", "aqu-sz", "%util",
]

_KINDS = (("r", "read"), ("w", "write"), ("d", "discard"))


def _delta(prev: Mapping[str, int] | None, cur: Mapping[str, int], key: str) -> float:
    return float(cur[key] - (prev[key] if prev else 0))


def iostat_fields(prev: Mapping[str, int] | None, cur: Mapping[str, int], dt_ms: float) -> dict[str, float]:
    """The iostat -x row for the interval between ``prev`` (None = boot) and ``cur``."""
    if dt_ms <= 0:
        raise ValueError("interval must be positive")
    dt_s = dt_ms / 1000.0
    row: dict[str, float] = {}
    for short, name in _KINDS:
        ios = _delta(prev, cur, f"{name}_ios")
        merges = _delta(prev, cur, f"{name}_merges")
        sectors = _delta(prev, cur, f"{name}_sectors")
        ticks = _delta(prev, cur, f"{name}_ticks_ms")
        row[f"{short}/s"] = ios / dt_s
        row[f"{short}kB/s"] = sectors / 2.0 / dt_s
        row[f"{short}rqm/s"] = merges / dt_s
        row[f"%{short}rqm"] = 100.0 * merges / (merges + ios) if merges + ios else 0.0
        row[f"{short}_await"] = ticks / ios if ios else 0.0
        row[f"{short}areq-sz"] = sectors / 2.0 / ios if ios else 0.0
    flushes = _delta(prev, cur, "flush_ios")
    row["f/s"] = flushes / dt_s
    row["f_await"] = _delta(prev, cur, "flush_ticks_ms") / flushes if flushes else 0.0
    row["aqu-sz"] = _delta(prev, cur, "time_in_queue_ms") / dt_ms
    row["%util"] = min(100.0, 100.0 * _delta(prev, cur, "io_ticks_ms") / dt_ms)
    return {k: row[k] for k in FIELDS}


def format_table(rows: list[tuple[str, Mapping[str, float]]]) -> str:
    """An ``iostat -x``-style table, one line per ``(device, fields)``."""
    cells = [[f"{row[k]:.2f}" for k in FIELDS] for _, row in rows]
    widths = [max([len(k)] + [len(c[i]) for c in cells]) + 1 for i, k in enumerate(FIELDS)]
    lines = ["Device".ljust(10) + "".join(k.rjust(w) for k, w in zip(FIELDS, widths))]
    for (device, _), c in zip(rows, cells):
        lines.append(device[:10].ljust(10) + "".join(x.rjust(w) for x, w in zip(c, widths)))
    return "\n".join(lines)
