"""Seed 000 — Kim In-sung, "SSD story 7: SSDs and servers" (blog, December 2008;
http://minix.tistory.com/93): host I/O scheduling helps hard disks and hurts SSDs.

Three measurements, each rerun on the simulator and its trends checked:

1. Random 4 KiB reads by 1 … 128 processes (each its own fio job clone, one read at a time)
   on one 7200 rpm disk (Barracuda 7200.11) and on one 2008 SSD (Intel X25-M, filled first so
   that reads reach the flash), under the legacy schedulers of the day: noop, deadline,
   anticipatory, cfq.
2. The same processes on 8 disks vs 8 SSDs striped by md RAID 0, cfq vs noop on the members.
3. Iometer's File Server transfer-size mix, read only as the blog ran it, on the same two
   arrays, from 1 to 256 outstanding I/Os.

The schedulers follow Linux 2.6.28 (December 2008). Why the SSD falls under CFQ, in the
model: CFQ decides from how many requests it has seen in the device at once whether the
device queues (its ``hw_tag``), and idles on a queue between one process's requests unless
the process is seeky *and* the device queues. When many processes start together, their
queues idle until each has shown a few seeks; meanwhile the device never holds more than a
request or two, so CFQ concludes that it does not queue. From then on it idles on every
process, one process at a time: the SSD serves one request at a time, at its queue-depth-1
rate. With few processes too few requests wait for CFQ to sample the device at all, and the
SSD keeps its queue. The disk meets the same rule (it is why its throughput under CFQ does
not keep rising); noop and deadline hand every process's request to NCQ, where the disk
reorders them by position.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from ..api import run
from ..plotting import pyplot, save
from ..reference import IOMETER_FILE_SERVER_BSSPLIT as FILE_SERVER_BSSPLIT, SEED000_HDD_PEAK, SEED000_PROCESSES
from ..system import raid

HDD = "seagate-barracuda-7200.11-1tb"
SSD = "intel-x25-m-80"
SCHEDULERS = ("noop", "deadline", "anticipatory", "cfq")
LOADS = (1, 4, 8, 16, 64, 256)


def _ios(processes: int, total: int) -> int:
    return max(total // processes, 8)


def processes_iops(profile: str, scheduler: str, processes: int, *, total: int, seed: int = 0,
                   drives: int = 1) -> float:
    """Aggregate random-read IOPS of ``processes`` readers, one read outstanding each, on one
    drive (or ``drives`` of them in md RAID 0)."""
    job = (f"[r]\nioengine=libaio\ndirect=1\nrw=randread\nbs=4k\niodepth=1\nnumjobs={processes}\nsize=100%\n"
           f"number_ios={_ios(processes, total)}\ngroup_reporting\n")
    system = raid(profile, 0, drives, chunk="64k") if drives > 1 else None
    pre = "sequential" if profile == SSD else None
    r = run(job, profile=profile, system=system, scheduler=scheduler, precondition=pre, seed=seed)
    return float(r.to_fio_json()["jobs"][0]["read"]["iops"])


def file_server_mbps(profile: str, depth: int, *, ios: int, seed: int = 0, drives: int = 8) -> float:
    """Iometer's File Server mix, reads only, ``depth`` outstanding, on ``drives`` in RAID 0."""
    job = (f"[fs]\nioengine=libaio\ndirect=1\nrw=randread\nbssplit={FILE_SERVER_BSSPLIT}\nblockalign=512\n"
           f"iodepth={depth}\nsize=100%\nnumber_ios={ios}\n")
    pre = "sequential" if profile == SSD else None
    r = run(job, system=raid(profile, 0, drives, chunk="64k"), scheduler="noop", precondition=pre, seed=seed)
    return float(r.to_fio_json()["jobs"][0]["read"]["bw_bytes"]) / 1e6


def sweep(quick: bool = False, seed: int = 0) -> dict[str, pd.DataFrame]:
    counts = (1, 8, 32, 128) if quick else SEED000_PROCESSES
    scale = 4 if quick else 1
    rows = []
    for profile, total in ((HDD, 2_000 // scale), (SSD, 24_000 // scale)):
        for sched in SCHEDULERS:
            for n in counts:
                rows.append({"drive": profile, "scheduler": sched, "processes": n,
                             "iops": processes_iops(profile, sched, n, total=total, seed=seed)})
    arrays = []
    for profile, total in ((HDD, 4_000 // scale), (SSD, 60_000 // scale)):
        for sched in ("cfq", "noop"):
            arrays.append({"drive": profile, "scheduler": sched, "processes": 64,
                           "iops": processes_iops(profile, sched, 64, total=total, seed=seed, drives=8)})
    loads = (1, 16, 256) if quick else LOADS
    fs = [{"drive": p, "outstanding": d, "mbps": file_server_mbps(p, d, ios=max(400, 8 * d) // scale, seed=seed)}
          for p in (HDD, SSD) for d in loads]
    return {"processes": pd.DataFrame(rows), "arrays": pd.DataFrame(arrays), "file_server": pd.DataFrame(fs)}


@dataclass
class Trend:
    claim: str
    holds: bool
    evidence: str


def trends(d: dict[str, pd.DataFrame]) -> list[Trend]:
    p = d["processes"]
    t = p.pivot_table(index="processes", columns=["drive", "scheduler"], values="iops")
    out = []
    # The blog does not say which scheduler its disk ran; its curve is NCQ's: reordering
    # grows with the queue up to the drive's 32 tags, then stops. noop hands NCQ the
    # requests as they come; deadline's sorting of a deeper queue goes on shortening seeks.
    h = t[(HDD, "noop")]
    at_peak_range = h.loc[[n for n in h.index if SEED000_HDD_PEAK[0] <= n <= SEED000_HDD_PEAK[1]]].max()
    after = h.loc[h.index > SEED000_HDD_PEAK[1]]
    # "Roughly flat": nothing beyond 32 processes more than 15 % above or below the 16-32 peak.
    out.append(Trend("HDD (noop): throughput rises with processes to a peak at 16-32, then stays flat",
                     bool(at_peak_range >= 0.85 * h.max() and h.max() > 2 * h.iloc[0]
                          and (after >= 0.85 * at_peak_range).all()),
                     f"{h.iloc[0]:.0f} IOPS at 1 process, {at_peak_range:.0f} at 16-32, {h.iloc[-1]:.0f} at "
                     f"{h.index[-1]}; deadline {t[(HDD, 'deadline')].iloc[-1]:.0f}, cfq {t[(HDD, 'cfq')].iloc[-1]:.0f}"))
    noop, cfq, dl, asched = t[(SSD, "noop")], t[(SSD, "cfq")], t[(SSD, "deadline")], t[(SSD, "anticipatory")]
    few = noop.loc[noop.index <= 8]
    out.append(Trend("SSD (noop): near its maximum with few processes", bool(few.max() >= 0.9 * noop.max()),
                     f"{few.max():.0f} IOPS with <= 8 processes, {noop.max():.0f} at most"))
    out.append(Trend("SSD (cfq): falls as processes increase",
                     bool(cfq.iloc[-1] < 0.7 * cfq.max() and cfq.idxmax() < cfq.index[-1]),
                     f"{cfq.max():.0f} IOPS at {int(cfq.idxmax())} processes, {cfq.iloc[-1]:.0f} at {cfq.index[-1]}"))
    many = noop.index >= 16
    out.append(Trend("SSD: noop gives the best throughput",
                     bool(all((noop[many] >= 0.98 * other[many]).all() for other in (cfq, dl, asched))),
                     f"at {noop.index[-1]} processes: noop {noop.iloc[-1]:.0f}, deadline {dl.iloc[-1]:.0f}, "
                     f"anticipatory {asched.iloc[-1]:.0f}, cfq {cfq.iloc[-1]:.0f} IOPS"))
    a = d["arrays"].set_index(["drive", "scheduler"]).iops
    r_cfq, r_noop = a[(SSD, "cfq")] / a[(HDD, "cfq")], a[(SSD, "noop")] / a[(HDD, "noop")]
    out.append(Trend("8 SSDs vs 8 HDDs (RAID 0): alike under cfq", bool(r_cfq < 2),
                     f"SSD/HDD {r_cfq:.1f}x under cfq ({a[(SSD, 'cfq')]:.0f} vs {a[(HDD, 'cfq')]:.0f} IOPS)"))
    out.append(Trend("8 SSDs vs 8 HDDs (RAID 0): SSDs far ahead under noop", bool(r_noop > 2 * r_cfq and r_noop > 10),
                     f"SSD/HDD {r_noop:.1f}x under noop ({a[(SSD, 'noop')]:.0f} vs {a[(HDD, 'noop')]:.0f} IOPS)"))
    f = d["file_server"].pivot(index="outstanding", columns="drive", values="mbps")
    ratio = f[SSD] / f[HDD]
    out.append(Trend("File Server mix, 8 SSDs vs 8 HDDs: SSDs far ahead at every load", bool((ratio > 5).all()),
                     f"SSD/HDD from {ratio.min():.0f}x to {ratio.max():.0f}x over {f.index.min()}-{f.index.max()} "
                     "outstanding"))
    return out


def plot(d: dict[str, pd.DataFrame], path: Path) -> None:
    plt = pyplot()
    fig, axes = plt.subplots(1, 3, figsize=(15, 4.5))
    p = d["processes"]
    for ax, drive in zip(axes[:2], (HDD, SSD)):
        for sched, g in p[p.drive == drive].groupby("scheduler"):
            ax.plot(g.processes, g.iops, "o-", label=sched)
        ax.set(xscale="log", xlabel="processes", ylabel="IOPS", title=f"random 4 KiB reads, {drive}")
        ax.legend()
    f = d["file_server"]
    for drive, g in f.groupby("drive"):
        axes[2].plot(g.outstanding, g.mbps, "o-", label=f"8 x {drive}")
    axes[2].set(xscale="log", yscale="log", xlabel="outstanding I/Os", ylabel="MB/s",
                title="File Server mix (reads), RAID 0")
    axes[2].legend(fontsize=7)
    fig.suptitle("Seed 000: host I/O scheduling, hard disks and 2008 SSDs (simulated)")
    save(fig, path)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="fewer points and I/Os")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--plot", type=Path, default=Path("seed000_schedulers.png"))
    args = ap.parse_args(argv)
    data = sweep(args.quick, args.seed)
    with pd.option_context("display.width", 160):
        print(data["processes"].pivot_table(index="processes", columns=["drive", "scheduler"], values="iops")
              .round(0).to_string())
        print()
        print(data["arrays"].round(0).to_string(index=False))
        print()
        print(data["file_server"].pivot(index="outstanding", columns="drive", values="mbps").round(1).to_string())
        print()
        table = pd.DataFrame([t.__dict__ for t in trends(data)])
        print(table.to_string(index=False))
    plot(data, args.plot)
    print(f"figures: {args.plot}")
    if not table.holds.all():
        raise SystemExit(1)
