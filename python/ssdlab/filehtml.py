"""``ssdlab report`` for a file workload run (``ssdlab run SCENARIO --output-format json``): the
run, each thread's operations (as the text report prints them), the page cache and the
journal, the CPUs as sar shows them, for a server its network and what bounds it and, when
the run was sampled (``--interval``), the cache hit ratio, each thread's mean program time
and the CPUs per interval. The page is the template ``templates/filereport.html``; this
module turns the JSON (checked by :mod:`ssdlab.filerun`) into its rows and figures."""

from __future__ import annotations

import math
from typing import Any

from .htmlreport import _bytes, _num, _pct, _table
from .pages import PAGE_WIDTH_IN, figure_uri, render as render_template
from .plotting import from_zero, pyplot
from .powercut import html_view

MIB = 1 << 20


def _meta(data: dict) -> dict:
    rows = [["scenario", data["name"]], ["host", data["host"]], ["targets", ", ".join(data["targets"])]]
    rows += [["file system", f] for f in data.get("filesystems") or []]
    rows += [["seed", _num(data["seed"])], ["simulated time", f"{data['run_s']:.3f} s"]]
    return _table(["run", ""], rows, "meta")


def _operations(data: dict) -> dict:
    """Each thread's operations, clones summed, as the text report prints them."""
    run_s = data["run_s"]
    rows = []
    for t in data["threads"]:
        name = t["name"] + (f" x{t['instances']}" if t["instances"] > 1 else "")
        for g, op in enumerate(t["ops"]):
            n = op["ops"]
            rows.append([name if g == 0 else "", op["op"] + (f" x{op['repeat']}" if op["repeat"] > 1 else ""),
                         f"{n:,}", f"{op['errors']:,}", f"{n / run_s if run_s else 0:,.1f}",
                         f"{op['bytes'] / MIB / run_s if run_s else 0:.2f}",
                         f"{op['latency_ns'] / n / 1e6 if n else 0:.3f}", f"{op['max_latency_ns'] / 1e6:.3f}"])
    return _table(["thread", "operation", "ops", "errors", "ops/s", "MiB/s", "mean (ms)", "max (ms)"], rows, "ops")


def _cache(f: dict) -> dict:
    lookups = f["cache_hits"] + f["cache_misses"]
    rows = [["file operations", f"{f['ops']:,} ({f['failed_ops']:,} failed)"],
            ["page cache hits", f"{f['cache_hits']:,}"], ["page cache misses", f"{f['cache_misses']:,}"],
            ["hit ratio", _pct(f["cache_hits"] / lookups) if lookups else "n/a"],
            ["pages read ahead", f"{f['readahead_pages']:,}"],
            ["metadata pages read (lookups, file maps)", f"{f['metadata_read_pages']:,}"], ["pages dirtied", f"{f['dirtied_pages']:,}"],
            ["... written back", f"{f['written_back_pages']:,}"],
            ["... deleted before writeback", f"{f['dropped_dirty_pages']:,}"],
            ["... dirty at the end", f"{f['dirty_pages_at_end']:,}"],
            ["writers throttled", f"{f['throttled_ns'] / 1e9:.3f} s"], ["pages evicted", f"{f['evicted_pages']:,}"],
            ["journal commits", f"{f['commits']:,}"], ["journal blocks", f"{f['journal_blocks']:,}"],
            ["blocks checkpointed", f"{f['checkpoint_blocks']:,}"], ["data bios", f"{f['data_bios']:,}"],
            ["metadata bios", f"{f['metadata_bios']:,}"]]
    if f.get("mkfs_bytes"):
        rows.append(["written by mkfs", _bytes(f["mkfs_bytes"])])
    if f.get("nonda_writes"):
        rows.append(["writes that allocated at once (free space short for delayed allocation)",
                     f"{f['nonda_writes']:,}"])
    return _table(["quantity", "value"], rows, "cache")


def _intervals_cpu(samples: list[dict]) -> list[dict]:
    """The CPU samples that cover an interval (the first sample, at the run's start, covers none)."""
    return [s for s in samples if s["end_ns"] > s["start_ns"]]


def _cpus(data: dict) -> dict:
    c = data["files"]["cpu"]
    rows = [["whole run", _pct(c["busy"]), _pct(c["iowait"]), _pct(c["idle"]),
             ", ".join(f"{x:.2f}" for x in c["load"])]]
    per = _intervals_cpu(data.get("samples") or [])
    if len(per) >= 2:
        def rng(key: str) -> str:
            xs = [s[key] for s in per]
            return f"{_pct(min(xs))} - {_pct(max(xs))}"

        loads = [s["load"][0] for s in per]
        rows.append([f"per interval ({len(per)})", rng("busy"), rng("iowait"), rng("idle"),
                     f"{min(loads):.2f} - {max(loads):.2f} (1 min)"])
    cores = data["files"].get("cpu_cores", [])
    if len(cores) >= 2:
        rows += [[f"core {n}", _pct(k["busy"]), _pct(k["iowait"]), _pct(k["idle"]), ""] for n, k in enumerate(cores)]
    return _table(["", "busy", "iowait", "idle", "load average (1, 5, 15 min)"], rows, "cpu")


def _server(data: dict) -> dict | None:
    net = data.get("network")
    if not net:
        return None
    srv = data.get("server")
    ports = _table(["port", "goodput (Mb/s)", "sent", "used", "full (share of the run)"],
                   [[p["name"], f"{8 * p['capacity_bytes_per_s'] / 1e6:,.1f}", _bytes(p["bytes"]),
                     _pct(p["utilisation"]), _pct(p["saturated_share"])] for p in net["nic"]], "ports")
    use = {c["name"]: c for c in (srv or {}).get("classes", [])}
    rows = []
    for c in net["classes"]:
        u = use.get(c["name"])
        rows.append([c["name"], f"{c['count']:,}", f"{c['mean_bytes_per_s'] / 1e3:,.0f}",
                     f"{c['min_bytes_per_s'] / 1e3:,.0f}", f"{c['max_bytes_per_s'] / 1e3:,.0f}",
                     f"{c['line_bytes_per_s'] / 1e3:,.0f}", f"{c['window_cap_bytes_per_s'] / 1e3:,.0f}",
                     u["limit"] if u else "n/a", _pct(u["met"]) if u else "n/a"])
    classes = _table(["clients", "count", "each (kB/s)", "slowest (kB/s)", "fastest (kB/s)", "line (kB/s)",
                      "window / RTT (kB/s)", "bound by", "share of it got"], rows, "classes")
    totals = _table(["network (server side)", ""],
                    [["sent", f"{net['bytes_sent'] / 1e9:,.3f} GB"],
                     ["rate", f"{8 * net['bytes_per_s'] / 1e6:,.1f} Mb/s"], ["send calls", f"{net['calls']:,}"],
                     ["packets", f"{net['packets']:,}"], ["CPU time sending", f"{net['cpu_ns'] / 1e9:,.3f} s"]],
                    "network")
    figures = None
    if srv:
        figures = _table(["what the verdict weighed", ""],
                         [["clients' demand (each its line or window)",
                           f"{8 * srv['demand_bytes_per_s'] / 1e6:,.1f} Mb/s"],
                          ["fullest NIC port full", _pct(srv["nic_full_share"])],
                          ["CPUs busy", _pct(srv["cpu_busy"])], ["storage busy (%util)", _pct(srv["storage_util"])]],
                         "verdict")
    return {"bound": srv["bound"] if srv else None, "why": srv["why"] if srv else None, "weighed": figures,
            "totals": totals, "ports": ports, "classes": classes}


def _figure(plt, height: float = 3.2):
    # The same margins in inches on every figure, so that their time axes line up down the page.
    fig, ax = plt.subplots(figsize=(PAGE_WIDTH_IN, height))
    fig.subplots_adjust(left=0.8 / PAGE_WIDTH_IN, right=1 - 2.6 / PAGE_WIDTH_IN, bottom=0.6 / height,
                        top=1 - 0.4 / height)
    ax.grid(True, alpha=0.3)
    return fig, ax


def _nan(x: float | None) -> float:
    return math.nan if x is None else float(x)


def _series(data: dict) -> dict | None:
    """The figures per interval and the table of intervals (None when the run was not sampled)."""
    iv = data.get("intervals") or []
    cpu = _intervals_cpu(data.get("samples") or [])
    if not iv and not cpu:
        return None
    plt = pyplot()
    figures = []
    if iv:
        t = [r["end_s"] for r in iv]
        names = list(dict.fromkeys(n for r in iv for n in r["threads"]))
        fig, ax = _figure(plt)
        ax.plot(t, [100 * _nan(r["cache_hit_ratio"]) for r in iv], "C0.-")
        ax.set(xlabel="time (s)", ylabel="hits (%)", ylim=(0, 105), title="page cache hit ratio per interval")
        figures.append(("hit-ratio", fig))
        fig, ax = _figure(plt)
        for k, n in enumerate(names):
            ax.plot(t, [_nan((r["threads"].get(n) or {}).get("mean_program_ms")) for r in iv], f"C{k % 10}.-", label=n)
        ax.set(xlabel="time (s)", ylabel="ms", title="mean program time per interval, delays left out")
        ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0))
        from_zero(ax)
        figures.append(("program-time", fig))
        if any("sent_bytes_per_s" in r for r in iv):
            fig, ax = _figure(plt)
            ax.plot(t, [8 * r.get("sent_bytes_per_s", math.nan) / 1e6 for r in iv], "C2.-")
            ax.set(xlabel="time (s)", ylabel="Mb/s", title="what the network sent per interval")
            from_zero(ax)
            figures.append(("sent", fig))
    if cpu:
        t0 = min(s["start_ns"] for s in cpu)
        t = [(s["end_ns"] - t0) / 1e9 for s in cpu]
        fig, ax = _figure(plt)
        ax.plot(t, [100 * s["busy"] for s in cpu], "C3.-", label="busy")
        ax.plot(t, [100 * s["iowait"] for s in cpu], "C0.--", label="iowait")
        ax.set(xlabel="time (s)", ylabel="share of the CPUs (%)", title="CPUs per interval (sar -u)")
        ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0))
        from_zero(ax)
        figures.append(("cpu", fig))
    shown = []
    for name, fig in figures:
        alt = fig.axes[0].get_title()  # before figure_uri closes the figure
        shown.append({"id": f"per-interval-{name}", "uri": figure_uri(fig, layout=False), "alt": alt})
    table = None
    if iv:
        names = list(dict.fromkeys(n for r in iv for n in r["threads"]))
        rows = []
        for r in iv:
            row = [f"{r['start_s']:.1f}", f"{r['end_s']:.1f}",
                   _pct(r["cache_hit_ratio"]) if r["cache_hit_ratio"] is not None else "-"]
            for n in names:
                x = r["threads"].get(n) or {}
                ms = x.get("mean_program_ms")
                row += [f"{x.get('programs_per_s', 0):,.1f}", f"{ms:.2f}" if ms is not None else "-"]
            rows.append(row)
        table = _table(["from (s)", "to (s)", "hits"] + [h for n in names for h in (f"{n}: programs/s", f"{n}: ms")],
                       rows, "intervals")
    return {"figures": shown, "table": table, "count": len(iv)}


def render(data: dict[str, Any], source: str = "") -> str:
    return render_template("filereport.html", source=source, name=data["name"], meta=_meta(data),
                           operations=_operations(data), cache=_cache(data["files"]), cpus=_cpus(data),
                           server=_server(data), series=_series(data),
                           power_cut=html_view(data["power_cut"]) if "power_cut" in data else None)
