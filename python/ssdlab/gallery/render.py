"""The gallery as text (the terminal table) and as one self-contained HTML page."""

from __future__ import annotations

import math
import time
from typing import Iterable

from .core import ExperimentResult, Row, Status

COLUMNS = ("experiment", "case", "quantity", "published", "simulated", "error", "tolerance", "status")


def _fmt(x: float | None, unit: str = "") -> str:
    if x is None or not math.isfinite(x):
        return ""
    a = abs(x)
    s = f"{x:.0f}" if a >= 1000 else f"{x:.3g}" if a >= 1 or a == 0 else f"{x:.3f}"
    return f"{s} {unit}".strip()


def row_cells(r: Row) -> dict[str, str]:
    """A row's cells as text, the same in the terminal and on the page."""
    if r.tolerance.trend:
        simulated = "holds" if r.holds else "does not hold" if r.holds is not None else ""
        error = ""
    else:
        simulated = _fmt(r.simulated, r.unit)
        error = "" if r.error is None else (f"{r.error:+.1f} %" if r.error_unit == "%" else
                                            f"{r.error:+g} {r.error_unit}")
    status = r.status.value + (f" ({r.reason})" if r.status in (Status.not_judged, Status.not_run) else "")
    return {"experiment": r.experiment, "case": r.case, "quantity": r.quantity, "published": r.published,
            "simulated": simulated, "error": error, "tolerance": r.tolerance.text(r.error_unit),
            "status": status}


def text_table(results: Iterable[ExperimentResult], width: int = 60) -> str:
    """Plain text, one line per row; long cells are cut at ``width`` characters (the page
    has them whole). An experiment that raised gets one line with its error."""
    lines = []
    for res in results:
        if res.error:
            lines.append({"experiment": res.name, "case": "", "quantity": "(experiment)", "published": "",
                          "simulated": "", "error": "", "tolerance": "", "status": f"fail ({res.error})"})
        lines.extend(row_cells(r) for r in res.rows)
    cut = lambda s, c: s if c == "status" or len(s) <= width else s[: width - 1] + "…"  # noqa: E731
    cells = [{c: cut(d[c], c) for c in COLUMNS} for d in lines]
    widths = {c: max([len(c)] + [len(d[c]) for d in cells]) for c in COLUMNS}
    out = ["  ".join(c.ljust(widths[c]) for c in COLUMNS).rstrip()]
    out += ["  ".join(d[c].ljust(widths[c]) for c in COLUMNS).rstrip() for d in cells]
    return "\n".join(out) + "\n"


def rows_json(results: Iterable[ExperimentResult]) -> str:
    """Every row as one JSON object (experiment, case, quantity, published, simulated, unit,
    error, tolerance, status, reason), for scripts: ``DIR/rows.json``. An experiment that
    raised is one row with status "error" and its message."""
    import json

    out = []
    for res in results:
        for r in res.rows:
            out.append({"experiment": res.name, "case": r.case, "quantity": r.quantity, "published": r.published,
                        "simulated": r.simulated if r.simulated is None or math.isfinite(r.simulated) else None,
                        "unit": r.unit, "error": r.error if r.error is None or math.isfinite(r.error) else None,
                        "error_unit": r.error_unit, "tolerance": r.tolerance.text(r.error_unit),
                        "holds": r.holds, "evidence": r.evidence, "status": r.status.value, "reason": r.reason})
        if res.error:
            out.append({"experiment": res.name, "case": "", "quantity": "", "published": "", "simulated": None,
                        "unit": "", "error": None, "error_unit": "", "tolerance": "", "holds": None, "evidence": "",
                        "status": "error", "reason": res.error})
    return json.dumps(out, indent=1) + "\n"


def summary(results: list[ExperimentResult]) -> str:
    n = {s.value: 0 for s in Status}
    for res in results:
        for k, v in res.counts().items():
            n[k] += v
    crashed = sum(1 for r in results if r.error)
    extra = f", {crashed} experiment(s) raised" if crashed else ""
    return (f"{sum(n.values())} rows: {n['pass']} pass, {n['fail']} fail, {n['not-judged']} not judged, "
            f"{n['not-run']} not run{extra}")


def _detail(r: Row) -> dict[str, str]:
    """A row in its experiment's section: why it has its status, with the evidence the
    verdict rests on (a trend's figures, a measured row's error), and its tolerance's reason."""
    if r.evidence:
        why = f"{r.reason}: {r.evidence}"
    elif r.status in (Status.passed, Status.failed) and r.error is not None and math.isfinite(r.error):
        why = f"error {row_cells(r)['error']}: {r.reason}"
    else:
        why = r.reason
    return {"case": r.case, "quantity": r.quantity, "status": r.status.value, "why": why,
            "tolerance_reason": r.tolerance.reason}


def page(results: list[ExperimentResult], *, quick: bool) -> str:
    """One HTML page (the template ``templates/gallery.html``): the summary table of every
    row, then per experiment its citation, its rows with why each has its status and each
    tolerance's reason, and its figures (PNG in the page as base64: the file stands alone)."""
    from ..pages import png_uri, render

    experiments = [{
        "name": res.name, "title": res.title, "citation": res.citation, "error": res.error,
        "mode": "quick" if res.quick else "full", "wall_s": f"{res.wall_s:.0f}",
        "counts": ", ".join(f"{v} {k}" for k, v in res.counts().items() if v),
        "rows": [{"status": r.status.value, "cells": row_cells(r), "tolerance_reason": r.tolerance.reason,
                  "evidence": r.evidence} for r in res.rows],
        "details": [_detail(r) for r in res.rows],
        "notes": res.notes,
        "figures": [{"uri": png_uri(f.png), "alt": f.caption, "caption": f.caption} for f in res.figures],
    } for res in results]
    mode = "quick mode (shortened runs; rows they cannot show are not judged)" if quick else "full mode"
    return render("gallery.html", mode=mode, when=time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
                  summary=summary(results), columns=COLUMNS, experiments=experiments)
