"""What bounds a server: its clients (their lines and TCP windows), its NIC, its CPUs or its
storage, from a run's network report, CPU accounting and device counters.

The verdict takes the first that holds, in the order a request meets them from the client's
side: clients that get what their lines and windows allow need nothing more from the server;
else a NIC port full most of the run; else CPUs busy; else storage busy (its %util, as
iostat computes it from io_ticks). Thresholds are ours, stated with each.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

#: clients count as served in full at this share of what their lines and windows allow
#: (each waits a little between calls: a system call, the next read)
CLIENTS_MET = 0.95
#: a NIC port, CPUs or storage count as the bound when busy at least this share of the run
BUSY = 0.9
#: ... and a NIC port when full (its flows' rates at its capacity) at least this share of the run
NIC_FULL = 0.5


@dataclass
class ClassUse:
    name: str
    count: int
    mean_bytes_per_s: float
    #: what one client's connection may take: its line or TCP's window over the round trip
    allowed_bytes_per_s: float
    limit: str

    @property
    def met(self) -> float:
        return self.mean_bytes_per_s / self.allowed_bytes_per_s if self.allowed_bytes_per_s else 0.0


@dataclass
class Bound:
    resource: str
    why: str
    classes: list[ClassUse]
    nic_full: float
    cpu_busy: float
    storage_util: float

    @property
    def demand_bytes_per_s(self) -> float:
        """What the clients could take, all at once: each its line or window."""
        return sum(c.count * c.allowed_bytes_per_s for c in self.classes)


def bound(core: dict[str, Any]) -> Bound | None:
    """What bounded the server of run ``core`` (None: the run had no network)."""
    net = core.get("network")
    if not net:
        return None
    classes = []
    for c in net["classes"]:
        window = c["window_cap_bytes_per_s"]
        limit = "line" if c["line_bytes_per_s"] <= window else "TCP window"
        classes.append(ClassUse(c["name"], c["count"], c["mean_bytes_per_s"], min(c["line_bytes_per_s"], window), limit))
    nic_full = max((p["saturated_share"] for p in net["nic"]), default=0.0)
    cpu = core.get("files", {}).get("cpu") or {"busy": 0.0}
    elapsed_ms = max((core["end_ns"] - core["start_ns"]) / 1e6, 1e-9)
    storage = max((d["disk"]["io_ticks_ms"] / elapsed_ms for d in core["devices"]), default=0.0)
    args = dict(classes=classes, nic_full=nic_full, cpu_busy=cpu["busy"], storage_util=min(storage, 1.0))
    if all(c.met >= CLIENTS_MET for c in classes):
        return Bound("clients", "every class gets what its lines and TCP windows allow", **args)
    if nic_full >= NIC_FULL:
        return Bound("NIC", f"a port was full {100 * nic_full:.0f} % of the run", **args)
    if cpu["busy"] >= BUSY:
        return Bound("CPU", f"the CPUs were busy {100 * cpu['busy']:.0f} % of the run", **args)
    if storage >= BUSY:
        return Bound("storage", f"the storage was busy (%util) {100 * min(storage, 1.0):.0f} % of the run, "
                                f"the threads in iowait {100 * cpu.get('iowait', 0.0):.0f} %", **args)
    return Bound("nothing saturated", "no resource was full most of the run", **args)


def text_lines(core: dict[str, Any]) -> list[str]:
    """The network and its verdict, for the run's text report."""
    net = core.get("network")
    b = bound(core)
    if not net or b is None:
        return []
    out = ["network (server side)",
           f"  sent {net['bytes_sent'] / 1e9:,.2f} GB at {8 * net['bytes_per_s'] / 1e6:,.1f} Mb/s "
           f"({net['calls']:,} send calls, {net['packets']:,} packets, {net['cpu_ns'] / 1e9:,.2f} CPU s)"]
    for p in net["nic"]:
        out.append(f"  {p['name']}: {8 * p['capacity_bytes_per_s'] / 1e6:,.1f} Mb/s of goodput, used "
                   f"{100 * p['utilisation']:.1f} %, full {100 * p['saturated_share']:.1f} % of the run")
    for c, u in zip(net["classes"], b.classes):
        out.append(f"  clients {c['name']} x{c['count']}: {c['mean_bytes_per_s'] / 1e3:,.0f} kB/s each "
                   f"(slowest {c['min_bytes_per_s'] / 1e3:,.0f}, fastest {c['max_bytes_per_s'] / 1e3:,.0f}); "
                   f"their {u.limit} allows {u.allowed_bytes_per_s / 1e3:,.0f} kB/s ({100 * u.met:.0f} % of it)")
    out.append(f"  clients' demand (each its line or window): {8 * b.demand_bytes_per_s / 1e6:,.1f} Mb/s")
    out.append(f"bound by: {b.resource} ({b.why})")
    return out


def as_json(core: dict[str, Any]) -> dict[str, Any] | None:
    b = bound(core)
    if b is None:
        return None
    return {"bound": b.resource, "why": b.why, "demand_bytes_per_s": b.demand_bytes_per_s,
            "nic_full_share": b.nic_full, "cpu_busy": b.cpu_busy, "storage_util": b.storage_util,
            "classes": [{"name": c.name, "mean_bytes_per_s": c.mean_bytes_per_s,
                         "allowed_bytes_per_s": c.allowed_bytes_per_s, "limit": c.limit, "met": c.met}
                        for c in b.classes]}
