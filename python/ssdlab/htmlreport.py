"""``ssdlab report``: one run's JSON (``ssdlab run --output-format json``) as a self-contained
HTML page: fio's summary per job, latency percentiles, disk_util, iostat, each device's
internal report and, when the run was sampled (``--interval``), throughput, die and channel
utilisation, WAF, SLC state and temperature over time. Figures are PNG in the page."""

from __future__ import annotations

import base64
import html
import io
import math
from pathlib import Path
from typing import Any

from .plotting import pyplot


class ReportInputError(ValueError):
    """The file cannot be read as a run's result: one line naming the file and what was expected."""


def load_result(path: Path) -> dict[str, Any]:
    """The JSON of one run, checked against fio's and ssdlab's output schema
    (:mod:`ssdlab.fioout.schema`)."""
    from .fioout.schema import RunFileError, read_run

    try:
        return read_run(path, "expected the JSON of ssdlab run --output-format json")
    except RunFileError as e:
        raise ReportInputError(str(e)) from None


# ---- helpers ----------------------------------------------------------------------------

def _e(x: Any) -> str:
    return html.escape(str(x), quote=True)


def _num(x: Any) -> str:
    if x is None:
        return "n/a"
    if isinstance(x, bool) or not isinstance(x, (int, float)):
        return str(x)
    if isinstance(x, float) and not math.isfinite(x):
        return "n/a"
    a = abs(x)
    if isinstance(x, int) or a >= 1e4:
        return f"{x:,.0f}"
    return f"{x:.4g}" if a >= 1e-3 or a == 0 else f"{x:.3e}"


def _table(header: list[str], rows: list[list[Any]], cls: str = "") -> str:
    head = "".join(f"<th>{_e(h)}</th>" for h in header)
    body = "".join("<tr>" + "".join(f"<td>{_e(_num(c))}</td>" for c in r) + "</tr>" for r in rows)
    return f'<table class="{cls}"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>'


def _png(fig) -> str:
    buf = io.BytesIO()
    fig.tight_layout()
    fig.savefig(buf, format="png", dpi=90)
    pyplot().close(fig)
    return f'<img alt="figure" src="data:image/png;base64,{base64.b64encode(buf.getvalue()).decode()}">'


_BYTES = ("B", "KiB", "MiB", "GiB", "TiB", "PiB")


def _bytes(n: float | None) -> str:
    if n is None:
        return "n/a"
    k = 0
    while abs(n) >= 1024 and k < len(_BYTES) - 1:
        n /= 1024
        k += 1
    return f"{n:.4g} {_BYTES[k]}"


# ---- sections ---------------------------------------------------------------------------

DIRS = ("read", "write", "trim")
PCT_SHOWN = ("1.000000", "50.000000", "90.000000", "99.000000", "99.900000", "99.990000")


def _jobs(data: dict) -> str:
    rows, pct_rows = [], []
    for job in data["jobs"]:
        for d in DIRS:
            x = job.get(d) or {}
            if not x.get("total_ios"):
                continue
            lat = x.get("lat_ns") or {}
            rows.append([job["jobname"], d, _bytes(x.get("io_bytes")), _bytes(x.get("bw_bytes")) + "/s",
                         x.get("iops"), x.get("total_ios"), (x.get("runtime") or 0) / 1000,
                         (lat.get("mean") or 0) / 1000, (lat.get("min") or 0) / 1000, (lat.get("max") or 0) / 1000])
            pct = (x.get("clat_ns") or {}).get("percentile") or {}
            if pct:
                keys = [k for k in PCT_SHOWN if k in pct] or list(pct)[:6]
                pct_rows.append((job["jobname"], d, keys, [pct[k] / 1000 for k in keys]))
    out = ["<h2>fio summary per job</h2>"]
    out.append(_table(["job", "dir", "io", "bandwidth", "IOPS", "I/Os", "runtime (s)", "lat mean (us)",
                       "lat min (us)", "lat max (us)"], rows, "fio") if rows else "<p>No job did any I/O.</p>")
    out.append("<h2>Completion latency percentiles (us)</h2>")
    if pct_rows:
        keys = pct_rows[0][2]
        out.append(_table(["job", "dir"] + [f"p{float(k):g}" for k in keys],
                          [[j, d, *v] for j, d, k, v in pct_rows if k == keys], "percentiles"))
    else:
        out.append("<p>No percentiles in this result.</p>")
    return "\n".join(out)


def _disk_util(data: dict) -> str:
    du = data.get("disk_util") or []
    if not du:
        return "<h2>disk_util</h2><p>None in this result.</p>"
    keys = [k for k in du[0] if k != "name"]
    return "<h2>disk_util</h2>" + _table(["name", *keys], [[d.get("name"), *(d.get(k) for k in keys)] for d in du],
                                          "disk-util")


def _iostat(ss: dict) -> str:
    io_ = ss.get("iostat") or []
    if not io_:
        return ""
    keys = [k for k in io_[0] if k != "name"]
    return ("<h2>iostat -x (whole run)</h2>" +
            _table(["Device", *keys], [[d.get("name"), *(d.get(k) for k in keys)] for d in io_], "iostat"))


def _devices(ss: dict) -> str:
    out = ["<h2>Inside each device</h2>"]
    plt = pyplot()
    for dev in ss.get("devices") or []:
        out.append(f"<h3>{_e(dev.get('name'))} ({_e(dev.get('profile'))}, {_e(dev.get('kind'))})</h3>")
        rows = [[k, _bytes(v) if k.endswith("_bytes") and isinstance(v, (int, float)) else v]
                for k, v in dev.items() if v is not None and not isinstance(v, (list, dict))
                and k not in ("name", "profile", "kind")]
        out.append(_table(["quantity", "value"], rows, "internal"))
        ch = dev.get("channel_utilization")
        if ch:
            fig, ax = plt.subplots(figsize=(6, 2.4))
            ax.bar(range(len(ch)), [100 * c for c in ch])
            ax.set(xlabel="channel", ylabel="busy (%)", ylim=(0, 100), title="channel utilisation over the run")
            out.append(_png(fig))
            out.append(f"<p>Dies: {100 * (dev.get('internal_utilization') or 0):.1f} % busy on average over the run.</p>")
    return "\n".join(out)


def _series(ss: dict) -> str:
    ts = ss.get("timeseries") or []
    if not ts:
        return ("<h2>Over time</h2><p>No time series: the run was not sampled "
                "(ssdlab run --interval 100ms adds one).</p>")
    plt = pyplot()
    t = [r["t_s"] for r in ts]

    def col(k: str) -> list[float]:
        return [math.nan if r.get(k) is None else float(r[k]) for r in ts]

    def has(k: str) -> bool:
        return any(r.get(k) is not None for r in ts)

    dev = (ss.get("devices") or [{}])[0].get("name", "the first device")
    out = [f"<h2>Over time ({_e(dev)})</h2>"]
    fig, ax = plt.subplots(figsize=(8, 2.6))
    ax.plot(t, [v / 1e6 for v in col("read_bw_bytes")], label="read")
    ax.plot(t, [v / 1e6 for v in col("write_bw_bytes")], label="write")
    ax.set(xlabel="time (s)", ylabel="MB/s", title="host throughput")
    ax.legend()
    out.append(_png(fig))
    channels = sorted((k for k in ts[0] if k.startswith("channel_utilization_")), key=lambda k: int(k.rsplit("_", 1)[1]))
    if has("internal_utilization") or channels:
        fig, ax = plt.subplots(figsize=(8, 3))
        for k in channels:
            ax.plot(t, [100 * v for v in col(k)], lw=0.8, label=f"channel {k.rsplit('_', 1)[1]}")
        if has("internal_utilization"):
            ax.plot(t, [100 * v for v in col("internal_utilization")], "k-", lw=2, label="dies (mean over dies)")
        ax.set(xlabel="time (s)", ylabel="busy (%)", ylim=(0, 105), title="internal utilisation per channel and of the dies")
        ax.legend(fontsize=6, ncol=4)
        out.append(_png(fig))
        out.append("<p>The core records die busy time summed over the dies, so the dies are shown as their mean.</p>")
    if has("waf"):
        fig, ax = plt.subplots(figsize=(8, 2.4))
        ax.plot(t, col("waf"))
        ax.ticklabel_format(axis="y", useOffset=False)
        ax.set(xlabel="time (s)", ylabel="WAF", title="write amplification per interval")
        out.append(_png(fig))
    if has("slc_used_bytes"):
        fig, ax = plt.subplots(figsize=(8, 2.4))
        ax.plot(t, [v / 1e9 for v in col("slc_used_bytes")], label="SLC cache used")
        ax.plot(t, [v / 1e9 for v in col("slc_budget_bytes")], "--", label="SLC budget")
        ax.set(xlabel="time (s)", ylabel="GB", title="SLC cache state")
        ax.legend()
        out.append(_png(fig))
    if has("rebuild_done_bytes"):
        fig, ax = plt.subplots(figsize=(8, 2.4))
        ax.plot(t, [v / 1e9 for v in col("rebuild_done_bytes")], "g-", label="in sync")
        ax.set(xlabel="time (s)", ylabel="GB", title="rebuild: replacement in sync (line), rate per interval (bars)")
        ax2 = ax.twinx()
        ax2.bar(t, [v / 1e6 for v in col("rebuild_rate_bytes")], width=-(t[1] - t[0]) if len(t) > 1 else 0.1,
                align="edge", alpha=0.25)
        ax2.set(ylabel="MB/s")
        out.append(_png(fig))
    if has("temperature_c"):
        fig, ax = plt.subplots(figsize=(8, 2.4))
        ax.plot(t, col("temperature_c"), "r-", label="temperature")
        ax.set(xlabel="time (s)", ylabel="C", title="temperature (shaded: throttled share)")
        ax2 = ax.twinx()
        ax2.fill_between(t, col("throttled_fraction"), step="pre", alpha=0.2)
        ax2.set(ylim=(0, 1), ylabel="throttled")
        out.append(_png(fig))
    keys = [k for k in ("t_s", "write_bw_bytes", "read_bw_bytes", "internal_utilization", "waf", "slc_used_bytes",
                        "temperature_c", "rebuild_done_bytes", "rebuild_rate_bytes", "%util", "aqu-sz") if has(k)]
    step = max(1, len(ts) // 40)
    shown = "all shown" if step == 1 else f"every {step}th shown"
    out.append(f"<details><summary>samples ({len(ts)}, {shown})</summary>"
               + _table(keys, [[r.get(k) for k in keys] for r in ts[::step]], "samples") + "</details>")
    return "\n".join(out)


_CSS = """
body{font-family:system-ui,sans-serif;margin:2em;color:#222;background:#fff;max-width:1200px}
table{border-collapse:collapse;font-size:13px;margin:.6em 0} th,td{border:1px solid #ccc;padding:2px 6px}
th{background:#eee} td{text-align:right} td:first-child{text-align:left}
img{max-width:100%;display:block;margin:.5em 0} .warn{color:#a60}
"""


def render(data: dict[str, Any], source: str = "") -> str:
    ss = data.get("ssdlab") or {}
    meta = [["fio version", data.get("fio version")], ["time", data.get("time")]]
    meta += [[k, ss.get(k)] for k in ("profile", "host", "seed", "scale", "sim_time_s", "events") if k in ss]
    parts = [f"<h1>ssdlab run report{': ' + _e(source) if source else ''}</h1>",
             _table(["run", ""], meta, "meta")]
    if not ss:
        parts.append('<p class="warn">No "ssdlab" section: an fio result without the simulator\'s insides.</p>')
    for w in ss.get("warnings") or []:
        parts.append(f'<p class="warn">warning: {_e(w)}</p>')
    parts += [_jobs(data), _disk_util(data)]
    if ss:
        parts += [_iostat(ss), _devices(ss), _series(ss)]
    return (f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8"><title>ssdlab report {_e(source)}</title>'
            f"<style>{_CSS}</style></head><body>\n" + "\n".join(parts) + "\n</body></html>\n")
