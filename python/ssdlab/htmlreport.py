"""``ssdlab report``: one run's JSON (``ssdlab run --output-format json``) as a self-contained
HTML page: fio's summary per job, latency percentiles, disk_util, iostat, each device's
internal report and, when the run was sampled (``--interval``), throughput, IOPS, latency,
die and channel utilisation, WAF, SLC state and temperature over time. The page is the
template ``templates/report.html``; this module turns the JSON into its rows and figures
(PNG in the page)."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from .pages import PAGE_WIDTH_IN, figure_uri, render as render_template
from .plotting import from_zero, pyplot
from .powercut import html_view


class ReportInputError(ValueError):
    """The file cannot be read as a run's result: one line naming the file and what was expected."""


#: what ``ssdlab report`` reads, for messages
EXPECTED = ("expected the JSON of ssdlab run --output-format json (a block-level run's, fio's, or a file "
            "workload's)")


def page(path: Path) -> str:
    """The page of the run in ``path``, chosen by the document's shape: fio's JSON (``jobs``)
    gets this module's page, a file workload run's (``threads``, ``files``) that of
    :mod:`ssdlab.filehtml`; anything else is :class:`ReportInputError`."""
    from . import filehtml, filerun
    from .fioout.schema import RunFileError, load_json

    try:
        value = load_json(path, EXPECTED, skip_to_brace=True)
        if filerun.is_file_run(value):
            return filehtml.render(filerun.check(value, path), source=path.name)
    except RunFileError as e:
        raise ReportInputError(str(e)) from None
    if not isinstance(value, dict) or "jobs" not in value:
        raise ReportInputError(f"{path}: not a run's result (no \"jobs\" list, as fio's has, nor \"threads\" "
                               f"and \"files\", as a file workload's has); {EXPECTED}")
    return render(load_result(path), source=path.name)


def load_result(path: Path) -> dict[str, Any]:
    """The JSON of one run, checked against fio's and ssdlab's output schema
    (:mod:`ssdlab.fioout.schema`)."""
    from .fioout.schema import RunFileError, read_run

    try:
        return read_run(path, "expected the JSON of ssdlab run --output-format json")
    except RunFileError as e:
        raise ReportInputError(str(e)) from None


# ---- numbers as text --------------------------------------------------------------------

def _num(x: Any) -> str:
    if x is None:
        return "n/a"
    if isinstance(x, bool):
        return "yes" if x else "no"
    if not isinstance(x, (int, float)):
        return str(x)
    if isinstance(x, float) and not math.isfinite(x):
        return "n/a"
    a = abs(x)
    if isinstance(x, int) or a >= 1e4:
        return f"{x:,.0f}"
    return f"{x:.4g}" if a >= 1e-3 or a == 0 else f"{x:.3e}"


_BYTES = ("B", "KiB", "MiB", "GiB", "TiB", "PiB")


def _bytes(n: float | None) -> str:
    if n is None:
        return "n/a"
    k = 0
    while abs(n) >= 1024 and k < len(_BYTES) - 1:
        n /= 1024
        k += 1
    return f"{n:.4g} {_BYTES[k]}"


def _pct(fraction: float | None) -> str:
    """A fraction (0.1298) as the page shows every share: 13.0 %."""
    if fraction is None or not math.isfinite(fraction):
        return "n/a"
    return f"{100 * fraction:.1f} %"


# ---- a device's quantities with their names -----------------------------------------------

#: What the report calls each of a device's quantities, and how it shows the value: "%" a
#: fraction as a percentage, "B" bytes, "ratio" three decimals, "" a plain number. A quantity
#: not listed is named from its key (see :func:`quantity`).
LABELS: dict[str, tuple[str, str]] = {
    "internal_utilization": ("dies busy (mean over the dies)", "%"),
    "controller_utilization": ("controller busy", "%"),
    "host_bytes_written": ("written by the host", "B"),
    "host_bytes_read": ("read by the host", "B"),
    "nand_bytes_written": ("written to the medium (flash)", "B"),
    "nand_bytes_read": ("read from the medium (flash)", "B"),
    "waf": ("write amplification (WAF)", "ratio"),
    "erase_count": ("block erases", ""),
    "gc_runs": ("garbage collections", ""),
    "gc_relocated_bytes": ("moved by garbage collection", "B"),
    "rmw_reads": ("read-modify-write reads", ""),
    "buffer_read_hits": ("reads served from the write buffer", ""),
    "free_blocks": ("free blocks", ""),
    "total_blocks": ("blocks", ""),
    "max_block_erases": ("most erases of one block", ""),
    "mean_block_erases": ("mean erases per block", ""),
    "over_provisioning": ("over-provisioning", "%"),
    "slc_used_bytes": ("SLC cache used", "B"),
    "slc_budget_bytes": ("SLC cache budget", "B"),
    "slc_host_bytes": ("host writes into the SLC cache", "B"),
    "folded_bytes": ("folded out of the SLC cache", "B"),
    "wear_level_moves": ("wear-levelling moves", ""),
    "temperature_c": ("temperature (°C)", ""),
    "max_temperature_c": ("highest temperature (°C)", ""),
    "throttled_s": ("throttled (s)", ""),
    "throttle_events": ("times throttled", ""),
    "percentage_used": ("SMART percentage used (%)", ""),
    "media_accesses": ("media accesses", ""),
    "mean_seek_ms": ("mean seek (ms)", ""),
    "mean_rotation_ms": ("mean rotational wait (ms)", ""),
    "mean_transfer_ms": ("mean transfer (ms)", ""),
    "cache_read_hits": ("reads served from the cache", ""),
    "read_ahead_hits": ("read-ahead hits", ""),
    "cached_writes": ("writes into the cache", ""),
    "destaged_bytes": ("destaged from the cache", "B"),
    "dirty_bytes": ("dirty in the cache", "B"),
    "starved_commands": ("starved commands", ""),
    "scheduler": ("I/O scheduler", ""),
    "scale": ("share of the drive simulated (scale)", ""),
    "capacity_bytes": ("capacity", "B"),
    "mean_in_flight": ("mean I/Os in flight", ""),
    "level": ("RAID level", ""),
    "chunk_bytes": ("chunk", "B"),
    "member_bytes_written": ("written to the members", "B"),
    "member_bytes_read": ("read from the members", "B"),
    "raid_write_factor": ("member writes per host write", "ratio"),
    "remap_write_factor": ("drive writes per host write", "ratio"),
    "rmw_stripe_heads": ("read-modify-write stripe heads", ""),
    "rcw_stripe_heads": ("reconstruct-write stripe heads", ""),
    "full_stripe_heads": ("full-stripe stripe heads", ""),
    "parity_bytes": ("parity written", "B"),
    "rebuild_progress": ("rebuild progress", "%"),
    "rebuild_rate_bytes": ("rebuild rate (per second)", "B"),
}

_SUFFIXES = (("_bytes", "", "B"), ("_s", " (s)", ""), ("_ms", " (ms)", ""), ("_c", " (°C)", ""),
             ("_utilization", " busy", "%"), ("_fraction", " share", "%"))


def quantity(key: str, value: Any) -> tuple[str, str]:
    """A device quantity's name and value as the page shows them: ``internal_utilization``,
    0.1298 -> "dies busy (mean over the dies)", "13.0 %"."""
    label, unit = LABELS.get(key, ("", ""))
    if not label:
        label = key
        for suffix, said, u in _SUFFIXES:
            if key.endswith(suffix):
                label, unit = key[: -len(suffix)] + said, u
                break
        label = label.replace("_", " ")
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        return label, _num(value)
    if unit == "%":
        return label, _pct(value)
    if unit == "B":
        return label, _bytes(value)
    if unit == "ratio":
        return label, f"{value:.3f}"
    return label, _num(value)


# ---- sections ---------------------------------------------------------------------------

DIRS = ("read", "write", "trim", "mixed")  # mixed: unified_rw_reporting
PCT_SHOWN = ("1.000000", "50.000000", "90.000000", "99.000000", "99.900000", "99.990000")


def _table(header: list[str], rows: list[list[Any]], cls: str) -> dict[str, Any]:
    return {"header": header, "rows": [[c if isinstance(c, str) else _num(c) for c in r] for r in rows], "cls": cls}


def _jobs(data: dict) -> tuple[dict | None, dict | None]:
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
    summary = _table(["job", "dir", "io", "bandwidth", "IOPS", "I/Os", "runtime (s)", "lat mean (µs)",
                      "lat min (µs)", "lat max (µs)"], rows, "fio") if rows else None
    percentiles = None
    if pct_rows:
        keys = pct_rows[0][2]
        percentiles = _table(["job", "dir"] + [f"p{float(k):g}" for k in keys],
                             [[j, d, *v] for j, d, k, v in pct_rows if k == keys], "percentiles")
    return summary, percentiles


def _listing(items: list[dict], first: str, cls: str) -> dict | None:
    """disk_util's and iostat's rows under their own (fio's, iostat's) column names."""
    if not items:
        return None
    keys = [k for k in items[0] if k != "name"]
    return _table([first, *keys], [[d.get("name"), *(d.get(k) for k in keys)] for d in items], cls)


def _devices(ss: dict) -> list[dict]:
    plt = pyplot()
    out = []
    for dev in ss.get("devices") or []:
        rows = [list(quantity(k, v)) for k, v in dev.items() if v is not None and not isinstance(v, (list, dict))
                and k not in ("name", "profile", "kind")]
        figure = None
        ch = dev.get("channel_utilization")
        if ch:
            fig, ax = plt.subplots(figsize=(PAGE_WIDTH_IN, 3.2))
            ax.bar(range(len(ch)), [100 * c for c in ch])
            ax.set_xticks(range(len(ch)))
            ax.set(xlabel="channel", ylabel="busy (%)", ylim=(0, 100), title="channel utilisation over the run")
            figure = {"uri": figure_uri(fig), "alt": f"{dev.get('name')}: channel utilisation over the run"}
        out.append({"name": dev.get("name"), "profile": dev.get("profile"), "kind": dev.get("kind"),
                    "table": _table(["quantity", "value"], rows, "internal"), "figure": figure,
                    "dies": _pct(dev.get("internal_utilization") or 0) if ch else None})
    return out


#: The sampled quantities shown in the table of samples: key, column, value as text.
SAMPLE_COLUMNS = (
    ("t_s", "time (s)", lambda v: f"{v:.3f}"),
    ("read_bw_bytes", "read (MB/s)", lambda v: f"{v / 1e6:.1f}"),
    ("write_bw_bytes", "write (MB/s)", lambda v: f"{v / 1e6:.1f}"),
    ("read_iops", "read IOPS", lambda v: f"{v:,.0f}"),
    ("write_iops", "write IOPS", lambda v: f"{v:,.0f}"),
    ("r_await", "r_await (ms)", lambda v: f"{v:.3f}"),
    ("w_await", "w_await (ms)", lambda v: f"{v:.3f}"),
    ("internal_utilization", "dies busy", _pct),
    ("waf", "WAF", lambda v: f"{v:.3f}"),
    ("slc_used_bytes", "SLC cache used", _bytes),
    ("temperature_c", "temperature (°C)", lambda v: f"{v:.1f}"),
    ("rebuild_done_bytes", "rebuild in sync", _bytes),
    ("rebuild_rate_bytes", "rebuild rate (MB/s)", lambda v: f"{v / 1e6:.1f}"),
    ("%util", "%util", lambda v: f"{v:.1f}"),
    ("aqu-sz", "aqu-sz", lambda v: f"{v:.2f}"),
)


def _series(ss: dict) -> dict | None:
    """The figures over time and the table of samples (None when the run was not sampled)."""
    ts = ss.get("timeseries") or []
    if not ts:
        return None
    plt = pyplot()
    t = [r["t_s"] for r in ts]

    def col(k: str) -> list[float]:
        return [math.nan if r.get(k) is None else float(r[k]) for r in ts]

    def has(k: str) -> bool:
        return any(r.get(k) is not None for r in ts)

    def figure(height: float = 3.4):
        # The same margins in inches on every figure, so that their time axes line up down
        # the page, with room on the right for the legends.
        fig, ax = plt.subplots(figsize=(PAGE_WIDTH_IN, height))
        fig.subplots_adjust(left=0.8 / PAGE_WIDTH_IN, right=1 - 2.6 / PAGE_WIDTH_IN, bottom=0.6 / height,
                            top=1 - 0.4 / height)
        ax.grid(True, alpha=0.3)
        return fig, ax

    def lines(ax, series: list[tuple[str, str, list[float]]]) -> None:
        """Read and write on one axis, told apart by colour and line style."""
        for label, style, ys in series:
            ax.plot(t, ys, style, label=label)
        ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0))
        from_zero(ax)

    figures, notes = [], {}
    directions = [d for d in ("read", "write") if any(v for v in col(f"{d}_iops") if math.isfinite(v))] \
        or ["read", "write"]
    style = {"read": "C0-", "write": "C1--"}

    fig, ax = figure()
    lines(ax, [(d, style[d], [v / 1e6 for v in col(f"{d}_bw_bytes")]) for d in directions])
    ax.set(xlabel="time (s)", ylabel="MB/s", title="host throughput")
    figures.append(("throughput", fig))

    if has("read_iops") or has("write_iops"):
        fig, ax = figure()
        lines(ax, [(d, style[d], col(f"{d}_iops")) for d in directions if has(f"{d}_iops")])
        ax.set(xlabel="time (s)", ylabel="IOPS", title="host IOPS")
        figures.append(("iops", fig))

    awaits = [(d, style[d], col(f"{d[0]}_await")) for d in directions if has(f"{d[0]}_await")]
    if awaits:
        fig, ax = figure()
        lines(ax, awaits)
        ax.set(xlabel="time (s)", ylabel="ms", title="mean latency per interval at the device (iostat r_await, w_await)")
        figures.append(("latency", fig))
        notes["latency"] = ("Latency over time is iostat's await of the device: from the request's arrival "
                            "at the block layer to its completion, queueing included, averaged per "
                            "interval; fio's per-job latency is in the tables above.")

    channels = sorted((k for k in ts[0] if k.startswith("channel_utilization_")), key=lambda k: int(k.rsplit("_", 1)[1]))
    if has("internal_utilization") or channels:
        fig, ax = figure(3.6)
        if channels:
            per = [[100 * v for v in col(k)] for k in channels]
            lo = [min(vs) for vs in zip(*per)]
            hi = [max(vs) for vs in zip(*per)]
            mean = [sum(vs) / len(vs) for vs in zip(*per)]
            ax.fill_between(t, lo, hi, color="C0", alpha=0.25, lw=0, label=f"{len(channels)} channels: range")
            ax.plot(t, mean, "C0-", lw=1.2, label="channels: mean")
        if has("internal_utilization"):
            ax.plot(t, [100 * v for v in col("internal_utilization")], "k-", lw=2, label="dies: mean")
        ax.set(xlabel="time (s)", ylabel="busy (%)", ylim=(0, 105), title="internal utilisation of the channels and the dies")
        ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0))
        figures.append(("utilisation", fig))
        notes["utilisation"] = ("The core records die busy time summed over the dies, so the dies are shown as "
                                "their mean; each channel's own share over the whole run is in the device's section.")
    if has("waf"):
        fig, ax = figure(3.0)
        ax.plot(t, col("waf"), "C2-")
        ax.ticklabel_format(axis="y", useOffset=False)
        ax.set(xlabel="time (s)", ylabel="WAF", title="write amplification per interval")
        figures.append(("waf", fig))
    if has("slc_used_bytes"):
        fig, ax = figure(3.0)
        ax.plot(t, [v / 1e9 for v in col("slc_used_bytes")], "C0-", label="SLC cache used")
        ax.plot(t, [v / 1e9 for v in col("slc_budget_bytes")], "C3--", label="SLC budget")
        ax.set(xlabel="time (s)", ylabel="GB", title="SLC cache state")
        from_zero(ax)  # a full cache's line on its budget's, both off the frame
        ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0))
        figures.append(("slc", fig))
    if has("rebuild_done_bytes"):
        fig, ax = figure(3.0)
        ax.plot(t, [v / 1e9 for v in col("rebuild_done_bytes")], "g-", label="in sync")
        ax.set(xlabel="time (s)", ylabel="GB", title="rebuild: replacement in sync (line), rate per interval (bars)")
        from_zero(ax)
        ax2 = ax.twinx()
        ax2.bar(t, [v / 1e6 for v in col("rebuild_rate_bytes")], width=-(t[1] - t[0]) if len(t) > 1 else 0.1,
                align="edge", alpha=0.25)
        ax2.set(ylabel="MB/s")
        ax.legend(loc="upper left", bbox_to_anchor=(1.08, 1.0))
        figures.append(("rebuild", fig))
    if has("temperature_c"):
        fig, ax = figure(3.0)
        ax.plot(t, col("temperature_c"), "r-", label="temperature")
        ax.set(xlabel="time (s)", ylabel="°C", title="temperature (shaded: share of the interval throttled)")
        ax2 = ax.twinx()
        ax2.fill_between(t, [100 * v for v in col("throttled_fraction")], step="pre", alpha=0.2)
        ax2.set(ylim=(0, 100), ylabel="throttled (%)")
        ax.legend(loc="upper left", bbox_to_anchor=(1.08, 1.0))
        figures.append(("temperature", fig))

    shown = [(k, name, fmt) for k, name, fmt in SAMPLE_COLUMNS if has(k)]
    step = max(1, len(ts) // 40)
    rows = [[fmt(r[k]) if isinstance(r.get(k), (int, float)) and math.isfinite(r[k]) else "n/a"
             for k, _, fmt in shown] for r in ts[::step]]
    dev = (ss.get("devices") or [{}])[0].get("name", "the first device")
    shown_figures = []
    for name, fig in figures:
        alt = f"{fig.axes[0].get_title()} over time"  # before figure_uri closes the figure
        shown_figures.append({"id": f"over-time-{name}", "uri": figure_uri(fig, layout=False), "alt": alt,
                              "note": notes.get(name)})
    return {"device": dev, "figures": shown_figures,
            "samples": {"count": len(ts), "step": step, "table": _table([n for _, n, _ in shown], rows, "samples")}}


def _meta(data: dict, ss: dict) -> dict:
    rows = [["fio version", data.get("fio version")], ["time", data.get("time")]]
    for k in ("profile", "host", "seed", "scale", "sim_time_s", "events"):
        if k in ss:
            rows.append(["simulated time", f"{_num(ss[k])} s"] if k == "sim_time_s" else [k, ss[k]])
    return _table(["run", ""], rows, "meta")


def render(data: dict[str, Any], source: str = "") -> str:
    ss = data.get("ssdlab") or {}
    summary, percentiles = _jobs(data)
    return render_template(
        "report.html", source=source, meta=_meta(data, ss), has_ssdlab=bool(ss), warnings=ss.get("warnings") or [],
        summary=summary, percentiles=percentiles, disk_util=_listing(data.get("disk_util") or [], "name", "disk-util"),
        iostat=_listing(ss.get("iostat") or [], "Device", "iostat") if ss else None,
        devices=_devices(ss) if ss else None, series=_series(ss) if ss else None,
        power_cut=html_view(ss["power_cut"]) if "power_cut" in ss else None)
