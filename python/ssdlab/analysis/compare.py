"""Two runs side by side (``ssdlab compare A.json B.json``): simulated and measured, or two
simulations. Each run is fio's JSON as ``ssdlab run``/``ssdlab measure`` (or fio itself)
writes it.

Jobs are paired by name (the n-th job of a name with the n-th of that name in the other
run), directions by name, devices by name, else in order (a simulated ``sda`` beside the
measured ``vda``, said in a note). Each figure gets B's value, A's and A's relative error
against B, ``(A - B) / |B|`` (B is the reference: put the measurement second). A job,
direction, device or figure that only one run has is listed as such, never dropped.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

#: per direction: label -> how to read it from fio's direction object
_DIR_FIGURES = (
    ("iops", lambda r: r.get("iops")),
    ("bw_bytes", lambda r: r.get("bw_bytes")),
    ("lat_mean_us", lambda r: _us(r.get("lat_ns", {}).get("mean"))),
    ("clat_mean_us", lambda r: _us(r.get("clat_ns", {}).get("mean"))),
    ("clat_stddev_us", lambda r: _us(r.get("clat_ns", {}).get("stddev"))),
    ("slat_mean_us", lambda r: _us(r.get("slat_ns", {}).get("mean"))),
)
_PERCENTILES = ("50", "90", "99", "99.9", "99.99")
_IOSTAT = ("r/s", "w/s", "rkB/s", "wkB/s", "r_await", "w_await", "aqu-sz", "%util")
_DISK_UTIL = ("read_ios", "write_ios", "util")


class CompareError(ValueError):
    """A file that is not a run's JSON (one line)."""


def _us(ns: float | None) -> float | None:
    return None if ns is None else ns / 1e3


@dataclass
class Row:
    section: str  # "job" | "iostat" | "disk_util"
    subject: str  # job name / device
    direction: str  # read|write|trim, "" for devices
    figure: str
    a: float | None
    b: float | None

    @property
    def error(self) -> float | None:
        """A's relative error against B."""
        if self.a is None or self.b is None:
            return None
        if self.b == 0:
            return 0.0 if self.a == 0 else math.inf
        return (self.a - self.b) / abs(self.b)

    def to_dict(self) -> dict[str, Any]:
        e = self.error
        return {"section": self.section, "subject": self.subject, "direction": self.direction,
                "figure": self.figure, "a": self.a, "b": self.b,
                "error": e if e is None or math.isfinite(e) else None}


@dataclass
class Comparison:
    a: str
    b: str
    rows: list[Row] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {"a": self.a, "b": self.b, "error": "(a - b) / |b|",
                "rows": [r.to_dict() for r in self.rows], "notes": self.notes}

    def format_text(self) -> str:
        head = ("section", "subject", "dir", "figure", "A", "B", "error")
        cells = [head]
        for r in self.rows:
            e = r.error
            err = "" if e is None else ("inf" if not math.isfinite(e) else f"{100 * e:+.1f}%")
            cells.append((r.section, r.subject, r.direction, r.figure, _fmt(r.a), _fmt(r.b), err))
        widths = [max(len(c[i]) for c in cells) for i in range(len(head))]
        lines = [f"A: {self.a}", f"B: {self.b}", "error = (A - B) / |B|", ""]
        for c in cells:
            lines.append("  ".join(x.ljust(w) if i < 4 else x.rjust(w) for i, (x, w) in enumerate(zip(c, widths))).rstrip())
        if self.notes:
            lines.append("")
            lines += [f"note: {n}" for n in self.notes]
        return "\n".join(lines) + "\n"


def _fmt(v: float | None) -> str:
    if v is None:
        return "-"
    if v == 0 or 0.01 <= abs(v) < 1e7:
        return f"{v:.4g}" if abs(v) < 1000 else f"{v:.0f}"
    return f"{v:.4g}"


def load_run(path: str | Path) -> dict[str, Any]:
    """A run's JSON (fio's layout), checked against the output schema
    (:mod:`ssdlab.fioout.schema`); fio's start-up lines before the JSON are skipped."""
    from ..fioout.schema import RunFileError, read_run

    try:
        return read_run(path)
    except RunFileError as e:
        raise CompareError(str(e)) from None


def _keyed_jobs(data: dict[str, Any]) -> dict[str, dict[str, Any]]:
    seen: dict[str, int] = {}
    out = {}
    for j in data["jobs"]:
        name = str(j.get("jobname", "?"))
        seen[name] = seen.get(name, 0) + 1
        out[name if seen[name] == 1 else f"{name}#{seen[name]}"] = j
    return out


def _did_io(r: dict[str, Any] | None) -> bool:
    return bool(r) and bool(r.get("total_ios"))


def _pct(lat: dict[str, Any], p: str) -> float | None:
    for k, v in (lat.get("percentile") or {}).items():
        if abs(float(k) - float(p)) < 1e-9:
            return v / 1e3
    return None


def _pair_devices(a: list[dict], b: list[dict], what: str, notes: list[str]) -> list[tuple[str, dict | None, dict | None]]:
    """Devices by name, else in order (with a note)."""
    an = {d["name"]: d for d in a}
    bn = {d["name"]: d for d in b}
    common = [n for n in an if n in bn]
    if common:
        pairs = [(n, an[n], bn[n]) for n in common]
        pairs += [(n, an[n], None) for n in an if n not in bn]
        pairs += [(n, None, bn[n]) for n in bn if n not in an]
        return pairs
    pairs = []
    for i in range(max(len(a), len(b))):
        da = a[i] if i < len(a) else None
        db = b[i] if i < len(b) else None
        if da and db:
            notes.append(f"{what}: no device name in common; {da['name']} (A) paired with {db['name']} (B) by order")
            pairs.append((f"{da['name']}~{db['name']}", da, db))
        else:
            pairs.append(((da or db)["name"], da, db))
    return pairs


def compare(a: dict[str, Any], b: dict[str, Any], a_name: str = "A", b_name: str = "B") -> Comparison:
    """``a`` beside ``b`` (two runs' JSON), figure by figure."""
    out = Comparison(a_name, b_name)
    ja, jb = _keyed_jobs(a), _keyed_jobs(b)
    for name in list(ja) + [n for n in jb if n not in ja]:
        x, y = ja.get(name), jb.get(name)
        if x is None or y is None:
            out.notes.append(f"job '{name}' is only in {'A' if y is None else 'B'}")
            continue
        for d in ("read", "write", "trim", "mixed"):  # mixed: unified_rw_reporting
            rx, ry = x.get(d), y.get(d)
            if not _did_io(rx) and not _did_io(ry):
                continue
            if not _did_io(rx) or not _did_io(ry):
                out.notes.append(f"job '{name}' {d}: only {'A' if _did_io(rx) else 'B'} did {d} I/O")
            rx, ry = rx or {}, ry or {}
            for label, read in _DIR_FIGURES:
                out.rows.append(Row("job", name, d, label, read(rx) if rx else None, read(ry) if ry else None))
            px, py = rx.get("clat_ns", {}), ry.get("clat_ns", {})
            for p in _PERCENTILES:
                vx, vy = _pct(px, p), _pct(py, p)
                if vx is None and vy is None:
                    continue
                out.rows.append(Row("job", name, d, f"clat_p{p}_us", vx, vy))
    devices = (("iostat", (a.get("ssdlab") or {}).get("iostat") or [], (b.get("ssdlab") or {}).get("iostat") or [],
                _IOSTAT, " (a run without diskstats, or fio's own JSON)"),
               ("disk_util", a.get("disk_util") or [], b.get("disk_util") or [], _DISK_UTIL, ""))
    for section, da, db, fields, why in devices:
        if da or db:
            if not da or not db:
                out.notes.append(f"{section}: only {'A' if da else 'B'} has it{why}")
            for dev, x, y in _pair_devices(da, db, section, out.notes):
                for f in fields:
                    out.rows.append(Row(section, dev, "", f, x.get(f) if x else None, y.get(f) if y else None))
    if (a.get("ssdlab") or {}).get("measured") or (b.get("ssdlab") or {}).get("measured"):
        out.notes.append("a measured run has no device internals (WAF, die utilisation): not compared")
    return out
