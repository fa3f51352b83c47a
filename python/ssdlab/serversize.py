"""``ssdlab server``: a server scenario over configurations — drives in the array and NICs —
what each serves and what bounds it. Each configuration is one run of the scenario (its
clients, catalogue and threads) on md RAID of that many drives of a profile behind that NIC;
the runs go to local worker processes or a Dask cluster, as a sweep's do
(:mod:`ssdlab.sweep.runner`), each a run spec's JSON in and plain figures out.
"""

from __future__ import annotations

import copy
import re
from dataclasses import dataclass
from typing import Any

from .filework import MAX_LINKS, FileWork

#: a NIC as ``COUNTxRATE``: ports and each port's line rate
_NIC = re.compile(r"^(?P<count>\d+)x(?P<rate>100m|1g|10g|25g|40g|100g)$")
_RATES = {"100m": 100_000_000, "1g": 1_000_000_000, "10g": 10_000_000_000, "25g": 25_000_000_000,
          "40g": 40_000_000_000, "100g": 100_000_000_000}


@dataclass(frozen=True)
class Nic:
    ports: int
    rate: str

    @property
    def name(self) -> str:
        return f"{self.ports}x{self.rate}"

    @property
    def bits_per_s(self) -> int:
        """The ports' line rates together."""
        return self.ports * _RATES[self.rate]


def parse_nic(text: str) -> Nic:
    """``2x1g``: two 1 GbE ports (bonded, 802.3ad); ``1x10g``: one 10 GbE port."""
    m = _NIC.match(text.strip().lower())
    if not m or int(m["count"]) < 1:
        raise ValueError(f"--nic {text}: expected PORTSxRATE, e.g. 2x1g or 1x10g (rates: {', '.join(_RATES)})")
    if int(m["count"]) > MAX_LINKS:
        raise ValueError(f"--nic {text}: expected at most {MAX_LINKS} ports, as a scenario's nic.links")
    return Nic(int(m["count"]), m["rate"])


def with_nic(work: FileWork, nic: Nic) -> FileWork:
    """The scenario behind ``nic``: its ports; a bond keeps the scenario's mode and hash (802.3ad
    and layer3+4 where a single port had none), a single port needs neither."""
    if work.network is None:
        raise ValueError(f"{work.name}: the scenario has no [network]: nothing to serve clients over")
    net = copy.deepcopy(work.network)
    mtu = net["nic"]["links"][0].get("mtu", 1500)
    net["nic"]["links"] = [{"rate_bps": _RATES[nic.rate], "mtu": mtu}] * nic.ports
    if nic.ports == 1:
        net["nic"]["mode"] = "active-backup"
    elif net["nic"]["mode"] == "active-backup":
        net["nic"]["mode"], net["nic"]["xmit_hash_policy"] = "802.3ad", "layer3+4"
    out = copy.copy(work)
    out.network = net
    return out


def serve(spec_json: str) -> dict[str, Any]:
    """A worker's task: one configuration's run; its network, CPUs and verdict (or its error)."""
    from .api import RunSpec, execute
    from .serverreport import as_json

    try:
        core = execute(RunSpec.model_validate_json(spec_json)).core
    except Exception as e:  # one bad configuration must not stop the others
        return {"error": f"{type(e).__name__}: {e}"}
    elapsed_ms = max((core["end_ns"] - core["start_ns"]) / 1e6, 1e-9)
    return {"network": core["network"], "server": as_json(core), "cpu": core["files"]["cpu"],
            "storage_util": max(d["disk"]["io_ticks_ms"] / elapsed_ms for d in core["devices"])}


@dataclass
class Point:
    drives: int
    nic: str
    mbps: float | None
    bound: str
    why: str
    nic_full: float
    cpu_busy: float
    storage_util: float
    #: the NIC's ports' goodput together, Mb/s
    nic_goodput_mbps: float = 0.0
    error: str | None = None


def point(drives: int, nic: Nic, answer: dict[str, Any]) -> Point:
    if "error" in answer:
        return Point(drives, nic.name, None, "error", answer["error"], 0.0, 0.0, 0.0, error=answer["error"])
    s = answer["server"]
    ports = answer["network"]["nic"]
    return Point(drives, nic.name, 8 * answer["network"]["bytes_per_s"] / 1e6, s["bound"], s["why"],
                 s["nic_full_share"], s["cpu_busy"], min(answer["storage_util"], 1.0),
                 8 * sum(p["capacity_bytes_per_s"] for p in ports) / 1e6)


def run_all(specs: list[tuple[int, Nic, str]], workers: int | None = None, scheduler: Any = None) -> list[Point]:
    """Run every configuration (drives, NIC, run spec JSON) on local workers or a Dask cluster."""
    from .sweep.runner import make_pool

    pool = make_pool(workers, scheduler)
    try:
        futures = [pool.submit(serve, spec) for _, _, spec in specs]
        return [point(d, nic, f.result()) for (d, nic, _), f in zip(specs, futures)]
    finally:
        pool.close()


def plot(points: list[Point], path, title: str) -> None:
    """Served Mb/s against the drives, a line per NIC, each point marked with its bound."""
    from pathlib import Path

    from .plotting import pyplot, save

    plt = pyplot()
    fig, ax = plt.subplots(figsize=(8, 4.5))
    marks = {"clients": "o", "NIC": "s", "CPU": "^", "storage": "D", "nothing saturated": "x", "error": "x"}
    for nic in dict.fromkeys(p.nic for p in points):
        ps = [p for p in points if p.nic == nic and p.mbps is not None]
        ax.plot([p.drives for p in ps], [p.mbps for p in ps], label=f"NIC {nic}")
        for p in ps:
            ax.scatter([p.drives], [p.mbps], marker=marks.get(p.bound, "o"), color="black", zorder=3)
    for bound, m in marks.items():
        if any(p.bound == bound for p in points) and bound != "error":
            ax.scatter([], [], marker=m, color="black", label=f"bound: {bound}")
    ax.set_xlabel("drives in the array")
    ax.set_ylabel("served (Mb/s)")
    ax.set_title(title)
    ax.legend(fontsize=8)
    save(fig, Path(path))
