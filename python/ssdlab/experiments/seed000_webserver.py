"""Seed 000, item 7 — a web download server on disks and on SSDs (Kim In-sung, "SSD story 7:
SSDs and servers", blog, December 2008, http://minix.tistory.com/93).

A "web-hard" (file locker) server serves 127 clients in three classes — 70 on ADSL (~600 KB/s
lines), 30 on "light" lines (~6 MB/s), 27 on fibre (~60 MB/s) — downloading large files. The
blog measured it on 9 × 7200 rpm SATA disks in RAID 0 behind two bonded 1 GbE ports (peak
571.5 Mb/s), then on 8 SSDs in RAID 0: capped by the bond; with four bonded ports 2551.0 Mb/s
under CFQ and 2784.0 under noop; with a 10 GbE TOE NIC and noop, 6942.9 Mb/s.

The workload is the bundled scenario ``seed000-webserver.toml``: the clients' round trips and
TCP windows, the bond's mode and hash, the files' sizes and popularity are assumptions written
there with their reasons. The server is the ``server-2008`` host (8 GB of RAM) with Barracuda
7200.11 disks or X25-M SSDs (filled first, as drives in service are) in RAID 0 of 64 KiB
chunks. Assumed here, as a file locker's server in service was:

- **ext3 over the whole array, 85 % full of the catalogue** (``FULL``): a file locker keeps its
  users' uploads, so its array is its file system and is kept fairly full (ext3 holds 5 % back
  for root; operators add disks before the rest goes). The files are spread over the whole
  disks, the popular ones scattered among them. The scenario alone (600 files on 400 GB) put
  them all on the first 44 GB of each disk.
- **a hardware RAID card** (``ENGINE``): nine SATA disks needed an add-in controller, and in
  2008 the 8- to 12-port SATA cards were RAID cards (3ware, Areca, Adaptec, LSI). The kernel
  then sees one disk and reads ahead its default 128 KiB, not md's two stripes (1,152 KiB on
  nine disks). The Adaptec 6805's engine stands in for the card: its striping and queueing
  are what matter here, not its year.

docs/network.md gives the served rate under each of these choices and md's. Each run starts
with a cold page cache, where the blog's server had been serving for hours: the rates are taken
past the first ``WARM_S`` seconds (from the run's samples of what the network sent), the CPU
ranges past the first minute.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass, field
from importlib import resources
from typing import Any

from ..api import build, execute
from ..fileseries import sent_between
from ..filework import FileWork, load
from ..serverreport import Bound, bound
from ..serversize import parse_nic, with_nic
from ..system import raid

DRIVES = {"hdd": ("seagate-barracuda-7200.11-1tb", 9), "ssd": ("intel-x25-m-80", 8)}
HOST = "server-2008"
#: the RAID card the arrays sit behind (module docstring)
ENGINE = "adaptec-6805"
#: the share of the file system the catalogue fills (module docstring)
FULL = 0.85
#: simulated seconds per run, full and quick; the samples' interval
RUN_S = {"full": 180, "quick": 60}
INTERVAL = "10s"
#: the cold start left out of the served and per-class rates: the first two samples' span.
#: Chosen after seeing the series (seed 0, disks, 180 s): 228 Mb/s in the first 10 s while
#: the page cache is empty, 450-560 Mb/s in every 10 s after.
WARM_S = 20


@dataclass(frozen=True)
class Case:
    name: str
    drive: str
    scheduler: str
    #: the NIC as ``ssdlab server`` takes it: PORTSxRATE
    nic: str
    #: a TCP offload engine: the host pays no per-packet cost
    toe: bool = False


CASES = (
    Case("hdd", "hdd", "cfq", "2x1g"),
    Case("ssd-bond2", "ssd", "noop", "2x1g"),
    Case("ssd-bond4-cfq", "ssd", "cfq", "4x1g"),
    Case("ssd-bond4-noop", "ssd", "noop", "4x1g"),
    Case("ssd-10g-toe", "ssd", "noop", "1x10g", toe=True),
)


@dataclass
class Run:
    case: Case
    #: served and each class's mean client rate past the cold start (``WARM_S``)
    mbps: float
    class_kBps: dict[str, float]
    cpu_pct: tuple[float, float]
    iowait_pct: tuple[float, float]
    #: 100 - %idle: busy and iowait together (how we read the blog's "CPU")
    not_idle_pct: tuple[float, float]
    load: tuple[float, float]
    bound: Bound
    network: dict[str, Any] = field(repr=False, default_factory=dict)
    #: served over the whole run, cold start included
    mbps_whole: float = 0.0
    #: the least and most served in one sample's interval past the cold start
    mbps_range: tuple[float, float] = (0.0, 0.0)


def scenario(case: Case, run_s: int, fs_bytes: int | None = None) -> FileWork:
    """The bundled scenario with the case's NIC and run time; given the bytes of the array,
    ext3 over all of it and the catalogue's files (their mean size) filling ``FULL`` of it."""
    w = with_nic(load(resources.files("ssdlab") / "scenarios" / "seed000-webserver.toml"), parse_nic(case.nic))
    w.run_ns = run_s * 1_000_000_000
    if case.toe:
        w.network["costs"]["per_packet_ns"] = 0
    if fs_bytes is not None:
        w.filesystem["size_bytes"] = None
        cat = next(s for s in w.file_sets if s["name"] == "catalogue")
        mean = (cat["size"]["min"] + cat["size"]["max"]) / 2
        cat["entries"] = int(FULL * fs_bytes / mean)
    return w


def _range(xs: list[float]) -> tuple[float, float]:
    return (min(xs), max(xs)) if xs else (float("nan"), float("nan"))


def run(case: Case, quick: bool = False, seed: int = 0) -> Run:
    profile, n = DRIVES[case.drive]
    system = raid(profile, 0, n, chunk="64k", engine=ENGINE)
    w = scenario(case, RUN_S["quick" if quick else "full"], system.arrays[0].capacity)
    spec = build(None, system=system, host=HOST, files=w, scheduler=case.scheduler,
                 seed=seed, interval=INTERVAL, precondition="sequential" if case.drive == "ssd" else None)
    core = execute(spec).core
    net = core["network"]
    mbps, class_kBps, mbps_range = warm_rates(core)
    # sar's view, past the first minute (the cache starts empty).
    cpus = [s["cpu"] for s in core["samples"] if s.get("cpu") and s["cpu"]["end_ns"] - core["start_ns"] > 60e9]
    cpus = cpus or [core["files"]["cpu"]]
    return Run(case, mbps, class_kBps,
               _range([100 * c["busy"] for c in cpus]), _range([100 * c["iowait"] for c in cpus]),
               # the load as it settles: each sample's mean count of active tasks (the kernel's
               # 1-minute average starts at 0 and takes minutes to reach it)
               _range([100 * (c["busy"] + c["iowait"]) for c in cpus]), _range([c["active"] for c in cpus]),
               bound(core), net, 8 * net["bytes_per_s"] / 1e6, mbps_range)


def warm_rates(core: dict[str, Any]) -> tuple[float, dict[str, float], tuple[float, float]]:
    """Served Mb/s and each class's mean client kB/s from the first sample at or past
    ``WARM_S`` to the last, and the least and most Mb/s of one interval in that span."""
    start = core["start_ns"] + WARM_S * 1_000_000_000
    samples = [s for s in core["samples"] if s.get("network") and s["t_ns"] >= start]
    if len(samples) < 2:
        raise ValueError(f"a run of {(core['end_ns'] - core['start_ns']) / 1e9:.0f} s has fewer than two samples "
                         f"past its first {WARM_S} s")
    served, clients = sent_between(samples[0], samples[-1], core["network"])
    per = [8 * sent_between(a, b, core["network"])[0] / 1e6 for a, b in zip(samples, samples[1:])]
    return 8 * served / 1e6, {k: v / 1e3 for k, v in clients.items()}, (min(per), max(per))


def reproduce(quick: bool = False, seed: int = 0) -> dict[str, Run]:
    return {c.name: run(c, quick, seed) for c in CASES}


def error_pct(simulated: float, published: float) -> float:
    return 100.0 * (simulated - published) / published


def overlaps(a: tuple[float, float], b: tuple[float, float]) -> bool:
    return a[0] <= b[1] and b[0] <= a[1]


def table(runs: dict[str, Run]) -> list[tuple[str, str, float, float, float]]:
    """(case, quantity, published, simulated, error %) for every figure the blog gives."""
    from ..reference import SEED000_WEBSERVER_HDD as H, SEED000_WEBSERVER_SSD as S

    hdd = runs["hdd"]
    rows = [("hdd", "served (Mb/s)", H["mbps"], hdd.mbps, error_pct(hdd.mbps, H["mbps"]))]
    for k, pub in H["class_kBps"].items():
        rows.append(("hdd", f"{k} client (kB/s)", pub, hdd.class_kBps[k], error_pct(hdd.class_kBps[k], pub)))
    for case, key in (("ssd-bond4-cfq", "bond4_cfq_mbps"), ("ssd-bond4-noop", "bond4_noop_mbps"),
                      ("ssd-10g-toe", "tengig_toe_noop_mbps")):
        rows.append((case, "served (Mb/s)", S[key], runs[case].mbps, error_pct(runs[case].mbps, S[key])))
    for case, key in (("ssd-bond4-noop", "x_at_4g"), ("ssd-10g-toe", "x_at_10g")):
        x = runs[case].mbps / hdd.mbps
        rows.append((f"{case} / hdd", "served, times the disks'", S[key], x, error_pct(x, S[key])))
    return rows


def classes_mbps() -> float:
    """What the blog's per-class download rates add up to over its 127 clients, Mb/s: were
    they all downloading at those rates at once, the server would have served this."""
    from ..reference import SEED000_WEBSERVER_HDD as H

    return sum(H["clients"][k] * rate for k, rate in H["class_kBps"].items()) * 8 / 1e3


def plot(runs: dict[str, Run], path) -> None:
    """Served Mb/s per case, published and simulated, with what bounded each run."""
    from pathlib import Path

    from ..plotting import pyplot, save
    from ..reference import SEED000_WEBSERVER_HDD as H, SEED000_WEBSERVER_SSD as S

    published = {"hdd": H["mbps"], "ssd-bond4-cfq": S["bond4_cfq_mbps"], "ssd-bond4-noop": S["bond4_noop_mbps"],
                 "ssd-10g-toe": S["tengig_toe_noop_mbps"]}
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(8, 4.5))
    names = list(runs)
    x = range(len(names))
    ax.bar([i - 0.2 for i in x], [published.get(n, 0) for n in names], 0.4, label="published", color="#999999")
    ax.bar([i + 0.2 for i in x], [runs[n].mbps for n in names], 0.4, label="simulated", color="#4878a8")
    for i, n in enumerate(names):
        ax.annotate(f"bound: {runs[n].bound.resource}", (i + 0.2, runs[n].mbps), ha="center", va="bottom", fontsize=8)
    ax.set_xticks(list(x), names, fontsize=8)
    ax.set_ylabel("served (Mb/s)")
    ax.set_title("Seed 000 item 7: a download server on disks and SSDs")
    ax.legend()
    save(fig, Path(path))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help=f"{RUN_S['quick']} s runs instead of {RUN_S['full']} s")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--plot", default="seed000_webserver.png")
    a = ap.parse_args(argv)
    runs = reproduce(a.quick, a.seed)
    print(f"{'case':22} {'quantity':26} {'published':>10} {'simulated':>10} {'error':>8}")
    for c, q, pub, sim, err in table(runs):
        print(f"{c:22} {q:26} {pub:10.1f} {sim:10.1f} {err:+7.1f}%")
    for n, r in runs.items():
        print(f"{n}: served {r.mbps:.1f} Mb/s past the first {WARM_S} s (each {INTERVAL} from "
              f"{r.mbps_range[0]:.0f} to {r.mbps_range[1]:.0f}), {r.mbps_whole:.1f} over the whole run")
        print(f"{n}: bound by {r.bound.resource} ({r.bound.why}); clients' demand "
              f"{8 * r.bound.demand_bytes_per_s / 1e6:.0f} Mb/s; CPU busy {r.cpu_pct[0]:.1f}-{r.cpu_pct[1]:.1f} %, "
              f"iowait {r.iowait_pct[0]:.1f}-{r.iowait_pct[1]:.1f} %, load {r.load[0]:.1f}-{r.load[1]:.1f}")
    from ..reference import SEED000_WEBSERVER_HDD as H

    print(f"the blog's per-class rates times its client counts: {classes_mbps():.1f} Mb/s, "
          f"{classes_mbps() / H['mbps']:.2f} times its own peak of {H['mbps']} Mb/s: the rates and "
          "the peak cannot both hold with all 127 clients downloading at once")
    plot(runs, a.plot)
    print(f"figure: {a.plot}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
