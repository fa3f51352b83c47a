"""Seed 000, item 8 — an SSD cache tier in front of disk file servers (Kim In-sung, "SSD story
7: SSDs and servers", blog, December 2008, http://minix.tistory.com/93).

The blog's advice, from its download server (item 7): move the popular files to a few SSD
servers in front of the disk file servers; run two cache servers each under 50 % load (or keep
one as a hot standby), so that losing one does not push the popular files' traffic onto the
file servers; at least 8 SSDs in RAID per cache server, at least 12 for more than 10 Gb/s.

The site (:mod:`ssdlab.cachetier`), everything assumed but the servers, which are item 7's:
- cache servers: 8 X25-M 80 GB in RAID 0 behind a 10 GbE TOE NIC, noop; each holds the
  900 most popular files (about 520 GB of its 640 GB);
- file servers: 9 Barracuda 7200.11 in RAID 0 behind two bonded 1 GbE ports, CFQ; the
  catalogue of 8,000 files of 100 MiB to 1,000 MiB (4.6 TB) spread over them; as many as carry the
  files the cache does not hold at 70 % of their capacity (assumed: the headroom a site keeps);
- clients: item 7's mix (70 on 600 kB/s ADSL, 30 on 6 MB/s, 27 on 60 MB/s lines, 64 KiB
  windows), as many times over as put the two cache servers at the load asked (50 % or 100 %);
  Zipf's law with exponent 0.8 over the catalogue, as item 7's scenario.
The file servers' arrays sit behind item 7's RAID card (``seed000_webserver.ENGINE``; the
kernel reads ahead its default 128 KiB); the cache servers' stay md, so that neither their NIC
nor a controller's limit (the stand-in card's is an assumed 1.2 GB/s) decides how many SSDs
give more than 10 Gb/s. Each server's ext3 holds its files and a tenth more.

What is run: the SSD count per cache server for more than 10 Gb/s (behind two bonded 10 GbE
ports so that the NIC is not what stops it); the site at 50 % and at 100 % cache load, with
both cache servers up and with one failed.
"""

from __future__ import annotations

import argparse
import math
from dataclasses import dataclass, replace

from ..cachetier import Clients, ServerRun, Site, SiteRun, Tier, capacity, hit_ratio, simulate
from .seed000_webserver import ENGINE

MIX = (Clients("adsl", 70, 600e3, 0.030, 65536), Clients("light", 30, 6e6, 0.015, 65536),
       Clients("fibre", 27, 60e6, 0.010, 65536))
CACHE = Tier(2, "intel-x25-m-80", 8, "1x10g", toe=True, scheduler="noop")
ORIGIN = Tier(1, "seagate-barracuda-7200.11-1tb", 9, "2x1g", scheduler="cfq", engine=ENGINE)
FILES, CACHED, ZIPF, SIZE_MB = 8000, 900, 0.8, (100, 1000)
#: the file servers' load with the cache tier up (assumed headroom)
ORIGIN_LOAD = 0.7
LOADS = (0.5, 1.0)
SSDS = (4, 8, 12, 16)
#: simulated seconds a run, full and quick
RUN_S = {"full": 60, "quick": 10}


@dataclass
class Result:
    #: SSDs per cache server -> its run behind 2 x 10 GbE
    ssd_sweep: dict[int, ServerRun]
    cache_capacity: ServerRun
    origin_capacity: ServerRun
    file_servers: int
    #: (cache load, failed cache servers) -> the site's run
    sites: dict[tuple[float, int], SiteRun]


def base_site(run_s: int, rounds: int) -> Site:
    return Site(files=FILES, size_mb=SIZE_MB, zipf=ZIPF, cached=CACHED, clients=MIX, cache=CACHE, origin=ORIGIN,
                run_s=run_s, rounds=rounds)


def reproduce(quick: bool = False, seed: int = 0) -> Result:
    run_s = RUN_S["quick" if quick else "full"]
    site = base_site(run_s, 1 if quick else 2)
    # Fewer SSDs hold fewer of the files: as many as fill 85 % of the array (80 GB each).
    held = {n: min(CACHED, int(n * 80e9 * 0.85 / (sum(SIZE_MB) / 2 * 2**20))) for n in SSDS}
    sweep = {n: capacity(site, replace(CACHE, drives=n, nic="2x10g"), held[n], seed) for n in SSDS}
    cache_cap = capacity(site, CACHE, CACHED, seed)
    origin_cap = capacity(site, ORIGIN, math.ceil(FILES / 8), seed)
    h = hit_ratio(FILES, CACHED, ZIPF)
    base = sum(c.count * c.demand for c in MIX)
    sites = {}
    for load in LOADS:
        # The clients that put the cache servers at this load; the file servers that carry
        # the rest at ORIGIN_LOAD.
        factor = load * CACHE.servers * cache_cap.mbps * 1e6 / 8 / (h * base)
        cold = (1 - h) * base * factor
        servers = max(1, math.ceil(cold / (ORIGIN_LOAD * origin_cap.mbps * 1e6 / 8)))
        for failed in (0, 1):
            s = replace(site.scaled(factor), origin=replace(ORIGIN, servers=servers),
                        cache=replace(CACHE, failed=failed))
            sites[(load, failed)] = simulate(s, seed, cache_capacity=cache_cap)
    return Result(sweep, cache_cap, origin_cap, sites[(LOADS[0], 0)].site.origin.servers, sites)


def smallest_over(sweep: dict[int, ServerRun], mbps: float) -> int | None:
    return next((n for n in sorted(sweep) if sweep[n].mbps > mbps), None)


def cold_rate(r: SiteRun) -> float:
    """The mean kB/s of a client downloading a file server's own files."""
    rows = [v for k, v in r.file_server.classes.items() if k.endswith("-origin")]
    n = sum(c for c, _ in rows)
    return sum(c * kbps for c, kbps in rows) / n if n else float("nan")


def lines(res: Result) -> list[str]:
    out = ["SSDs per cache server, behind 2 x 10 GbE (TOE), under more demand than its NIC carries:"]
    for n, r in res.ssd_sweep.items():
        out.append(f"  {n:2d} SSDs: {r.mbps:8.0f} Mb/s, bound by {r.bound} (storage %util {100 * r.storage_util:.0f}, "
                   f"CPU busy {100 * r.cpu_busy:.0f} %)")
    out.append(f"cache server (8 SSDs, 10 GbE TOE): {res.cache_capacity.mbps:.0f} Mb/s, bound by {res.cache_capacity.bound}; "
               f"file server (9 disks, 2 x 1 GbE): {res.origin_capacity.mbps:.0f} Mb/s, bound by {res.origin_capacity.bound}")
    first = next(iter(res.sites.values()))
    out.append(f"hit ratio (requests for the {CACHED} cached files of {FILES}): {100 * first.hit_ratio:.1f} %; "
               f"file servers: {res.file_servers} at 50 % cache load")
    out.append(f"{'cache load':>10} {'failed':>6} {'clients':>8} {'served Mb/s':>12} {'cache share':>11} "
               f"{'file server Mb/s':>16} {'bound':>10} {'util %':>7} {'cold client kB/s':>16}")
    for (load, failed), r in res.sites.items():
        clients = sum(c.count for c in r.site.clients)
        f = r.file_server
        out.append(f"{100 * load:9.0f}% {failed:6d} {clients:8d} {r.served_mbps:12.0f} {100 * r.cache_share:10.1f}% "
                   f"{f.mbps:16.0f} {f.bound:>10} {100 * f.storage_util:7.0f} {cold_rate(r):16.0f}")
    return out


def plot(res: Result, path) -> None:
    """Left: a cache server's Mb/s against its SSDs; right: a file server's Mb/s and its own
    clients' rate, both cache servers up and one failed, at 50 % and 100 % cache load."""
    from pathlib import Path

    from ..plotting import pyplot, save

    plt = pyplot()
    fig, (a, b) = plt.subplots(1, 2, figsize=(10, 4.2))
    ns = sorted(res.ssd_sweep)
    a.plot(ns, [res.ssd_sweep[n].mbps for n in ns], marker="o", label="simulated, 2 x 10 GbE")
    a.axhline(10_000, color="#999999", ls="--", lw=1, label="10 Gb/s")
    a.axvline(12, color="#cc8844", ls=":", lw=1, label="the blog: >= 12 SSDs for > 10 Gb/s")
    a.set_xlabel("SSDs per cache server")
    a.set_ylabel("served (Mb/s)")
    a.legend(fontsize=8)
    labels, served, rate = [], [], []
    for (load, failed), r in res.sites.items():
        labels.append(f"{100 * load:.0f} %\n{'one failed' if failed else 'both up'}")
        served.append(r.file_server.mbps)
        rate.append(cold_rate(r))
    x = range(len(labels))
    b.bar(list(x), served, color="#4878a8", label="a file server (Mb/s)")
    b.set_xticks(list(x), labels, fontsize=8)
    b.set_ylabel("a file server's Mb/s")
    b2 = b.twinx()
    b2.plot(list(x), rate, color="#cc4444", marker="o", label="its own clients (kB/s each)")
    b2.set_ylabel("kB/s a client")
    b2.set_ylim(bottom=0)
    b.set_title("cache load, cache servers up")
    fig.suptitle("Seed 000 item 8: an SSD cache tier in front of disk file servers")
    save(fig, Path(path))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help=f"{RUN_S['quick']} s runs instead of {RUN_S['full']} s")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--plot", default="seed000_cachetier.png")
    a = ap.parse_args(argv)
    res = reproduce(a.quick, a.seed)
    print("\n".join(lines(res)))
    from ..reference import SEED000_CACHETIER as P

    n = smallest_over(res.ssd_sweep, P["over_mbps"])
    published = P["ssds_over_10g"]
    err = f"{100 * (n - published) / published:+.0f} %" if n else "n/a"
    print(f"SSDs for more than 10 Gb/s: published at least {published}, simulated "
          f"{n if n else 'more than ' + str(SSDS[-1])}, error {err}")
    plot(res, a.plot)
    print(f"figure: {a.plot}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
