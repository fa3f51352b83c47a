"""The gallery as text (the terminal table) and as one self-contained HTML page."""

from __future__ import annotations

import base64
import html
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


_CSS = """
body{font-family:system-ui,sans-serif;margin:2em;color:#222;background:#fff;max-width:1300px}
table{border-collapse:collapse;font-size:13px;margin:1em 0}
th,td{border:1px solid #ccc;padding:3px 6px;text-align:left;vertical-align:top}
th{background:#eee} td.num{text-align:right;white-space:nowrap}
tr.pass td.status{background:#d9f2d9} tr.fail td.status{background:#f6cccc}
tr.not-judged td.status{background:#fff2c2} tr.not-run td.status{background:#e4e4e4}
img{max-width:100%;border:1px solid #ddd} .cite{color:#555;font-size:13px} .err{color:#a00}
h2{margin-top:2em;border-bottom:1px solid #ccc}
"""


def _esc(s: object) -> str:
    return html.escape(str(s), quote=True)


def _row_html(r: Row) -> str:
    c = row_cells(r)
    tds = []
    for col in COLUMNS:
        cls = "num" if col in ("simulated", "error") else col
        title = ""
        if col == "tolerance":
            title = f' title="{_esc(r.tolerance.reason)}"'
        if col == "quantity" and r.evidence:
            title = f' title="{_esc(r.evidence)}"'
        tds.append(f'<td class="{cls}"{title}>{_esc(c[col])}</td>')
    return f'<tr class="{r.status.value}">' + "".join(tds) + "</tr>"


def page(results: list[ExperimentResult], *, quick: bool) -> str:
    """One HTML page: the summary table of every row, then per experiment its citation, its
    rows with each tolerance's reason and each trend's evidence, and its figures (PNG in the
    page as base64: the file stands alone)."""
    when = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    head = "".join(f"<th>{_esc(c)}</th>" for c in COLUMNS)
    body = []
    for res in results:
        if res.error:
            body.append(f'<tr class="fail"><td>{_esc(res.name)}</td><td></td><td>(experiment)</td>'
                        f'<td></td><td></td><td></td><td></td><td class="status">fail ({_esc(res.error)})</td></tr>')
        body.extend(_row_html(r) for r in res.rows)
    sections = []
    for res in results:
        parts = [f'<h2 id="{_esc(res.name)}">{_esc(res.title)}</h2>',
                 f'<p class="cite">Source: {_esc(res.citation)}</p>',
                 f"<p>{_esc(res.name)}: {'quick' if res.quick else 'full'} mode, {res.wall_s:.0f} s; "
                 f"{_esc(', '.join(f'{v} {k}' for k, v in res.counts().items() if v))}</p>"]
        if res.error:
            parts.append(f'<p class="err">The experiment raised: {_esc(res.error)}</p>')
        detail = [f"<tr><td>{_esc(r.case)}</td><td>{_esc(r.quantity)}</td><td>{_esc(r.status.value)}</td>"
                  f"<td>{_esc(r.reason)}</td><td>{_esc(r.tolerance.reason)}</td><td>{_esc(r.evidence)}</td></tr>"
                  for r in res.rows]
        if detail:
            parts.append("<table><tr><th>case</th><th>quantity</th><th>status</th><th>why</th>"
                         "<th>tolerance reason</th><th>evidence</th></tr>" + "".join(detail) + "</table>")
        parts += [f"<p>{_esc(n)}</p>" for n in res.notes]
        for f in res.figures:
            b64 = base64.b64encode(f.png).decode("ascii")
            parts.append(f'<figure><img alt="{_esc(f.caption)}" src="data:image/png;base64,{b64}">'
                         f"<figcaption>{_esc(f.caption)}</figcaption></figure>")
        sections.append("\n".join(parts))
    mode = "quick mode (shortened runs; rows they cannot show are not judged)" if quick else "full mode"
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>ssdlab reproduction gallery</title>
<style>{_CSS}</style></head><body>
<h1>ssdlab reproduction gallery</h1>
<p>{_esc(mode)}, {_esc(when)}. {_esc(summary(results))}. A row passes only inside its stated tolerance
(hover a tolerance for its reason); "not-judged" and "not-run" rows say why.</p>
<table id="results"><thead><tr>{head}</tr></thead><tbody>
{chr(10).join(body)}
</tbody></table>
{chr(10).join(sections)}
</body></html>
"""
