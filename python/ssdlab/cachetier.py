"""A site of servers in two tiers — SSD cache servers in front of disk file servers — serving
one population of clients who download files of one catalogue by popularity (Zipf's law).

Each cache server holds the catalogue's most popular files (the same ones on every cache
server, so that one can stand in for another); the file servers (the origin) hold the whole
catalogue, spread evenly over them. A download of a cached file goes to a cache server; of
any other file, to the file server holding it. When the cache servers that are up cannot take
all the popular files' downloads (one failed, the others full), the redirector sends the rest
to the file servers — the failure the site is sized against.

How it is simulated: every server is its own run of the event loop (its drives, array, page
cache, CPUs and NIC, :mod:`ssdlab.api`), with the clients that are downloading from it at a
time. Servers share nothing but the clients, so a site is its servers' runs, coupled through
how many clients each has:

- A client downloads one file after another, so the share of its time it spends on a tier is
  the tier's share of its requests times how long a download there takes. Requests: the
  Zipf law's weight of the cached ranks (the hit ratio), the rest to the origin. Download
  time: a file's size over the rate the client gets there, first its line or TCP window
  (``min(line, window / rtt)``), then, after a first round of runs, the rate each class got —
  a fixed point found by repeating (``rounds``).
- The cache tier's capacity is one cache server's served rate under more demand than its NIC
  carries (a run of its own); its load is the popular downloads' demand over the capacity of
  the servers up. What is over capacity goes to the origin as downloads of popular files.
- Each client is met part-way through its first download (``midway``), as at any moment of a
  site's life; otherwise every client would start a file at its start in step, reading the
  same first pages of the popular files and finding them cached.
- One server of each kind is simulated: all servers of a tier are alike and the clients and
  files are spread evenly over them (a file server holds every F-th rank, whose popularity
  follows the same law), so each gets its share.

Not modelled: the redirector itself (a client goes straight to its server), the clients'
lines shared between servers (a client downloads one file at a time), copying files into the
cache tier.
"""

from __future__ import annotations

import math
import tempfile
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from .filework import FileWork, load

MB = 1_000_000


@dataclass(frozen=True)
class Clients:
    """A class of clients: how many, their line (bytes a second), round trip and TCP window."""

    name: str
    count: int
    line: float
    rtt_s: float
    window: int

    @property
    def demand(self) -> float:
        """What one client can take, bytes a second: its line or its window over its round trip."""
        return min(self.line, self.window / self.rtt_s)


@dataclass(frozen=True)
class Tier:
    """Alike servers: each a RAID 0 of ``drives`` drives of ``profile`` (``engine``: md, or a
    RAID card's engine profile) behind ``nic`` (``PORTSxRATE``, e.g. ``2x1g``; ``toe``: a TCP
    offload engine), on host profile ``host``."""

    servers: int
    profile: str
    drives: int
    nic: str
    toe: bool = False
    scheduler: str = "noop"
    host: str = "server-2008"
    chunk: str = "64k"
    #: servers down
    failed: int = 0
    engine: str = "md"

    @property
    def up(self) -> int:
        return self.servers - self.failed


@dataclass(frozen=True)
class Site:
    #: the catalogue: files, each of a size uniform in [min, max] MiB, asked for by Zipf's law
    files: int
    size_mb: tuple[int, int]
    zipf: float
    #: the most popular files, held by every cache server
    cached: int
    clients: tuple[Clients, ...]
    cache: Tier
    origin: Tier
    run_s: int = 60
    #: rounds of the clients' fixed point (1: spread by the clients' own rates only)
    rounds: int = 2

    def scaled(self, factor: float) -> Site:
        """The same site with ``factor`` times the clients of each class (at least one)."""
        return replace(self, clients=tuple(replace(c, count=max(1, round(c.count * factor))) for c in self.clients))


def hit_ratio(files: int, cached: int, s: float) -> float:
    """The share of requests for the ``cached`` most popular of ``files`` under Zipf's law."""
    w = [r ** -s for r in range(1, files + 1)]
    return sum(w[:cached]) / sum(w)


@dataclass
class ServerRun:
    """One server's run: what it served and what bounded it."""

    mbps: float
    bound: str
    why: str
    cpu_busy: float
    storage_util: float
    #: per class of its clients (class name as the run named it): clients and mean kB/s
    classes: dict[str, tuple[int, float]] = field(default_factory=dict)


def _ops(ranks: tuple[int, int] | None, s: float) -> str:
    window = f", ranks = [{ranks[0]}, {ranks[1]}]" if ranks else ""
    return (f'[ {{ op = "open", set = "catalogue", pick = {{ zipf = {s}{window} }} }}, '
            f'{{ op = "send_whole", io = "64k", midway = true }}, {{ op = "close" }} ]')


def scenario(name: str, entries: int, size_mb: tuple[int, int], s: float, nic: str, toe: bool, run_s: int,
             groups: list[tuple[str, Clients, int, tuple[int, int] | None]]) -> FileWork:
    """One server's scenario: a catalogue of ``entries`` files and, per group (name, class,
    clients, ranks asked for), a class of clients and one download thread each."""
    from .serversize import parse_nic, with_nic

    # The files' bytes and a tenth more for ext3's metadata (sizes in MiB, as the scenario's).
    fs_mib = max(64, math.ceil(entries * (size_mb[0] + size_mb[1]) / 2 * 1.1))
    lines = [f'name = "{name}"', f'filesystem = {{ type = "ext3", size = "{fs_mib}m" }}', f'runtime = "{run_s}s"', "",
             "[[fileset]]", 'name = "catalogue"', 'dir = "/www"', f"entries = {entries}",
             f'size = {{ min = "{size_mb[0]}m", max = "{size_mb[1]}m", align = "1m" }}', "prealloc = 1.0", "",
             "[network]", 'nic = { links = 1, rate = "1g" }', "sendfile = true"]
    if toe:
        lines.append("costs = { per_packet = 0 }")
    groups = [g for g in groups if g[2] > 0]
    for gname, c, n, _ in groups:
        lines += ["", "[[network.clients]]", f'name = "{gname}"', f"count = {n}", f'line = "{int(c.line)}"',
                  f'rtt = "{c.rtt_s * 1e3:g}ms"', f'window = "{c.window}"']
    for gname, c, n, ranks in groups:
        lines += ["", "[[thread]]", f'name = "{gname}"', f"instances = {n}", f'client = "{gname}"',
                  f"ops = {_ops(ranks, s)}"]
    with tempfile.TemporaryDirectory() as d:
        p = Path(d) / f"{name}.toml"
        p.write_text("\n".join(lines) + "\n")
        work = load(p)
    return with_nic(work, parse_nic(nic))


def run_server(tier: Tier, work: FileWork, seed: int) -> ServerRun:
    from .api import build, execute
    from .config.profile import HddProfile, load_profile
    from .serverreport import bound
    from .system import raid

    # Flash drives in service hold data (reads of never-written units cost no flash): filled
    # first, as item 7's server was; disks need no such state.
    flash = not isinstance(load_profile(tier.profile)[0], HddProfile)
    # The scenario is written for the run: the core's errors are not to be placed in its file.
    work = replace(work, places={})
    spec = build(None, system=raid(tier.profile, 0, tier.drives, chunk=tier.chunk, engine=tier.engine),
                 host=tier.host, files=work,
                 scheduler=tier.scheduler, seed=seed, precondition="sequential" if flash else None)
    core = execute(spec).core
    net = core["network"]
    b = bound(core)
    return ServerRun(8 * net["bytes_per_s"] / 1e6, b.resource, b.why, b.cpu_busy, b.storage_util,
                     {c["name"]: (c["count"], c["mean_bytes_per_s"] / 1e3) for c in net["classes"]})


def capacity(site: Site, tier: Tier, entries: int, seed: int = 0) -> ServerRun:
    """One server of ``tier`` under more demand than its NIC carries: the site's client mix
    scaled to 1.5 times the NIC's line rate, asking for the server's files by the law."""
    from .serversize import parse_nic

    line = parse_nic(tier.nic).bits_per_s / 8
    demand = sum(c.count * c.demand for c in site.clients)
    factor = 1.5 * line / demand
    groups = [(c.name, c, max(1, round(c.count * factor)), None) for c in site.clients]
    return run_server(tier, scenario("capacity", entries, site.size_mb, site.zipf, tier.nic, tier.toe, site.run_s, groups),
                      seed)


@dataclass
class SiteRun:
    site: Site
    #: share of requests for cached files (Zipf's law over the catalogue)
    hit_ratio: float
    #: one cache server's capacity (Mb/s) and what bounds it
    cache_capacity: ServerRun
    #: the popular downloads' demand over the capacity of the cache servers up
    cache_load: float
    #: one cache server's run (None when none is up or none has clients) and one file server's
    cache_server: ServerRun | None
    file_server: ServerRun
    #: clients per server: at a cache server, at a file server for its own files, sent to a
    #: file server for cached files (the cache tier full or down)
    clients_cache: dict[str, int]
    clients_origin: dict[str, int]
    clients_overflow: dict[str, int]

    @property
    def served_mbps(self) -> float:
        cache = self.cache_server.mbps * self.site.cache.up if self.cache_server else 0.0
        return cache + self.file_server.mbps * self.site.origin.up

    @property
    def cache_share(self) -> float:
        """The share of the site's bytes the cache tier served."""
        total = self.served_mbps
        return (self.cache_server.mbps * self.site.cache.up / total) if self.cache_server and total else 0.0


def _rate(run: ServerRun | None, group: str, fallback: float) -> float:
    if run is None or group not in run.classes or run.classes[group][1] <= 0:
        return fallback
    return run.classes[group][1] * 1e3


def simulate(site: Site, seed: int = 0, cache_capacity: ServerRun | None = None) -> SiteRun:
    """The site's servers run with their share of the clients (see the module's docstring)."""
    h = hit_ratio(site.files, site.cached, site.zipf)
    per_origin = math.ceil(site.files / site.origin.servers)
    hot_local = math.ceil(site.cached / site.origin.servers)
    if cache_capacity is not None:
        cap = cache_capacity
    elif site.cached > 0:
        cap = capacity(site, site.cache, site.cached, seed)
    else:
        cap = ServerRun(0.0, "none", "the site has no cache tier", 0.0, 0.0)
    up = site.cache.up
    cache_run: ServerRun | None = None
    origin_run: ServerRun | None = None
    for _ in range(max(1, site.rounds)):
        hot: dict[str, float] = {}
        for c in site.clients:
            # The share of a client's time on the cache tier: requests there over the rate got there.
            r_hot = _rate(cache_run, f"{c.name}-cache", c.demand)
            r_cold = _rate(origin_run, f"{c.name}-origin", c.demand)
            t_hot, t_cold = h / r_hot, (1 - h) / r_cold
            hot[c.name] = c.count * t_hot / (t_hot + t_cold)
        hot_demand = sum(hot[c.name] * c.demand for c in site.clients)
        room = up * cap.mbps * 1e6 / 8
        over = max(0.0, 1.0 - room / hot_demand) if hot_demand > 0 else 0.0
        load = hot_demand / (site.cache.servers * cap.mbps * 1e6 / 8) if cap.mbps > 0 and hot_demand > 0 else 0.0
        at_cache = {c.name: round(hot[c.name] * (1 - over) / up) if up else 0 for c in site.clients}
        overflow = {c.name: round(hot[c.name] * over / site.origin.up) for c in site.clients}
        own = {c.name: round((c.count - hot[c.name]) / site.origin.up) for c in site.clients}
        if up and any(at_cache.values()):
            groups = [(f"{c.name}-cache", c, at_cache[c.name], None) for c in site.clients]
            cache_run = run_server(site.cache, scenario("cache", site.cached, site.size_mb, site.zipf, site.cache.nic,
                                                        site.cache.toe, site.run_s, groups), seed)
        groups = [(f"{c.name}-origin", c, own[c.name], (hot_local, per_origin)) for c in site.clients]
        groups += [(f"{c.name}-overflow", c, overflow[c.name], (0, hot_local)) for c in site.clients]
        if not any(n for _, _, n, _ in groups):
            # Each server's share rounds to no client: nothing would be served to measure.
            raise ValueError(f"files: none of the {sum(c.count for c in site.clients):,} clients reaches a file server "
                             f"(the cache tier takes {sum(hot.values()):,.1f} of them, and the rest shared by "
                             f"{site.origin.up:,} file servers up rounds to none each): nothing to measure there; "
                             "fewer file servers, or more clients")
        origin_run = run_server(site.origin, scenario("origin", per_origin, site.size_mb, site.zipf, site.origin.nic,
                                                      site.origin.toe, site.run_s, groups), seed)
    assert origin_run is not None
    return SiteRun(site, h, cap, load, cache_run if up else None, origin_run, at_cache, own, overflow)


def summary(r: SiteRun) -> dict[str, Any]:
    """A site run as plain figures (for JSON and tables)."""
    def server(s: ServerRun | None) -> dict[str, Any] | None:
        return None if s is None else {"mbps": s.mbps, "bound": s.bound, "cpu_busy": s.cpu_busy,
                                       "storage_util": s.storage_util, "classes": s.classes}

    return {"hit_ratio": r.hit_ratio, "cache_share_of_bytes": r.cache_share, "served_mbps": r.served_mbps,
            "cache_capacity_mbps": r.cache_capacity.mbps, "cache_capacity_bound": r.cache_capacity.bound,
            "cache_load": r.cache_load, "cache_server": server(r.cache_server), "file_server": server(r.file_server),
            "clients_per_cache_server": r.clients_cache, "clients_per_file_server": r.clients_origin,
            "overflow_clients_per_file_server": r.clients_overflow}
