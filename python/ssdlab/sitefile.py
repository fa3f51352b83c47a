"""A site file: several servers in two tiers and the clients they serve, as
:mod:`ssdlab.cachetier` simulates them (``ssdlab site SITE.toml``)::

    name = "downloads"
    runtime = "60s"

    [catalogue]                 # what the clients download
    files = 8000
    size = { min = "100m", max = "1000m" }
    zipf = 0.8

    [cache]                     # optional: servers holding the most popular files
    servers = 2
    failed = 0                  # servers down
    holds = 900                 # the most popular files, on every cache server
    profile = "intel-x25-m-80"  # RAID 0 of `drives` drives of this profile
    drives = 8
    chunk = "64k"
    engine = "md"               # or a RAID card's engine (adaptec-6805), or an engine TOML
    nic = "1x10g"               # PORTSxRATE
    toe = true                  # a TCP offload engine
    scheduler = "noop"
    host = "server-2008"

    [files]                     # the file servers: the whole catalogue, spread over them
    servers = 15
    profile = "seagate-barracuda-7200.11-1tb"
    drives = 9
    nic = "2x1g"
    scheduler = "cfq"

    [[clients]]                 # as a scenario's [[network.clients]]
    name = "adsl"
    count = 70
    line = "600k"
    rtt = "30ms"
    window = "64k"

Every error is one line naming the file, the line and the key (:class:`SiteFileError`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .arguments import InputFileError, read_toml
from .cachetier import Clients, Site, Tier
from .config.tomlpos import locate, toml_text
from .filework import MAX_NS, MAX_THREADS
from .iosched import check_name
from .units import UnitError, parse_size, parse_time_ns, unit_reason

MIB = 1 << 20
#: the most files a catalogue holds here: the hit ratio sums Zipf's law over every rank in
#: Python (1.3 s and 430 MB at ten million, measured; seed 000's site has 8,000)
MAX_FILES = 10_000_000
#: md's limit on an array's members (the array's own check)
MAX_DRIVES = 65535


class SiteFileError(ValueError):
    """A site file is wrong: one line naming the file, the line and the key."""


_TIER_KEYS = {"servers", "failed", "holds", "profile", "drives", "chunk", "engine", "nic", "toe", "scheduler", "host"}


def load_site(path: Path) -> tuple[str, Site]:
    """The site's name and the :class:`~ssdlab.cachetier.Site` a site file describes."""
    try:
        text, doc = read_toml(path)
    except InputFileError as e:
        raise SiteFileError(str(e)) from None

    def fail(keys: tuple, message: str) -> SiteFileError:
        line = locate(text, keys)
        return SiteFileError(f"{path}:{line}: {'.'.join(map(str, keys))}: {message}" if line else
                             f"{path}: {'.'.join(map(str, keys))}: {message}")

    def whole(v: Any, keys: tuple, least: int) -> int:
        if isinstance(v, bool) or not isinstance(v, int) or v < least:
            raise fail(keys, f"{toml_text(v)}: expected a whole number, at least {least}")
        return v

    def size(v: Any, keys: tuple) -> int:
        try:
            return parse_size(v)
        except (UnitError, TypeError, ValueError) as e:
            raise fail(keys, f"{toml_text(v)}: {unit_reason(e, 'expected a size like 100m')}") from None

    def text_of(v: Any, keys: tuple) -> str:
        if not isinstance(v, str) or not v:
            raise fail(keys, f"{toml_text(v)}: expected a name")
        return v

    for k in doc:
        if k not in {"name", "runtime", "catalogue", "cache", "files", "clients"}:
            raise fail((k,), "unknown key (expected name, runtime, catalogue, cache, files, clients)")
    if "name" in doc:
        text_of(doc["name"], ("name",))
    for k in ("catalogue", "files", "clients"):
        if k not in doc:
            raise fail((k,), f"missing: a site needs its {k}")
    cat = doc["catalogue"]
    if not isinstance(cat, dict):
        raise fail(("catalogue",), "expected a table: [catalogue]")
    for k in cat:
        if k not in {"files", "size", "zipf"}:
            raise fail(("catalogue", k), "unknown key (expected files, size, zipf)")
    files = whole(cat.get("files"), ("catalogue", "files"), 1)
    if files > MAX_FILES:
        raise fail(("catalogue", "files"), f"{files}: expected at most {MAX_FILES:,} files")
    sz = cat.get("size")
    if not isinstance(sz, dict) or set(sz) != {"min", "max"}:
        raise fail(("catalogue", "size"), "expected { min = \"100m\", max = \"1000m\" }")
    lo, hi = size(sz["min"], ("catalogue", "size", "min")), size(sz["max"], ("catalogue", "size", "max"))
    if lo % MIB or hi % MIB or not 0 < lo <= hi:
        raise fail(("catalogue", "size"), "min and max must be whole MiB, min above 0 and at most max")
    if files * hi >= 1 << 63:
        raise fail(("catalogue", "size", "max"), f"{toml_text(sz['max'])}: {files:,} files of up to that size pass the 8 EiB "
                   "a file system's size is counted in")
    zipf = cat.get("zipf", 0.8)
    if isinstance(zipf, bool) or not isinstance(zipf, (int, float)) or not 0 < zipf < 100:
        raise fail(("catalogue", "zipf"), f"{toml_text(zipf)}: expected Zipf's exponent, a number above 0")

    def tier(name: str) -> tuple[Tier, int]:
        t = doc[name]
        if not isinstance(t, dict):
            raise fail((name,), f"expected a table: [{name}]")
        for k in t:
            if k not in _TIER_KEYS or (name == "files" and k == "holds"):
                allowed = sorted(_TIER_KEYS - ({"holds"} if name == "files" else set()))
                raise fail((name, k), f"unknown key (expected one of {', '.join(allowed)})")
        servers = whole(t.get("servers", 1), (name, "servers"), 1)
        failed = whole(t.get("failed", 0), (name, "failed"), 0)
        if failed > servers or (name == "files" and failed == servers):
            raise fail((name, "failed"), f"{failed}: more than the tier's {servers} servers"
                       if failed > servers else "every file server down: nothing serves the catalogue")
        nic = t.get("nic", "2x1g")
        from .serversize import parse_nic

        try:
            parse_nic(str(nic))
        except ValueError as e:
            raise fail((name, "nic"), str(e).replace("--nic ", "")) from None
        toe = t.get("toe", False)
        if not isinstance(toe, bool):
            raise fail((name, "toe"), f"{toml_text(toe)}: expected true or false")
        chunk = t.get("chunk", "64k")
        if size(chunk, (name, "chunk")) <= 0 or size(chunk, (name, "chunk")) % 4096:
            raise fail((name, "chunk"), f"{toml_text(chunk)}: expected a positive multiple of 4 KiB (md's page)")
        scheduler = text_of(t.get("scheduler", "noop"), (name, "scheduler"))
        try:
            check_name(scheduler)
        except ValueError as e:
            raise fail((name, "scheduler"), str(e)) from None
        from .config.profile import host_names, profile_names

        profile = text_of(t.get("profile"), (name, "profile"))
        # A built-in name, or a profile file beside the site file.
        if profile not in profile_names():
            if not (path.parent / profile).is_file():
                raise fail((name, "profile"), f"{toml_text(profile)}: no such drive profile (built-in: {', '.join(profile_names())})")
            profile = str(path.parent / profile)
        host = text_of(t.get("host", "server-2008"), (name, "host"))
        if host not in host_names():
            if not (path.parent / host).is_file():
                raise fail((name, "host"), f"{toml_text(host)}: no such host profile (built-in: {', '.join(host_names())})")
            host = str(path.parent / host)
        engine = text_of(t.get("engine", "md"), (name, "engine"))
        from .config import ProfileError, load_engine

        if (path.parent / engine).is_file():
            engine = str(path.parent / engine)
        try:
            load_engine(engine)
        except ProfileError as e:
            raise fail((name, "engine"), str(e).splitlines()[0]) from None
        # RAID 0 of the drives: two at least (md's raid0 refuses one).
        if "drives" not in t:
            raise fail((name,), "missing: drives = N, the drives of each server's RAID 0 (at least 2)")
        drives = whole(t["drives"], (name, "drives"), 2)
        if drives > MAX_DRIVES:
            raise fail((name, "drives"), f"{drives}: expected at most {MAX_DRIVES} (md's limit on an array's members)")
        tier_ = Tier(servers=servers, profile=profile, engine=engine, drives=drives, nic=str(nic), toe=toe,
                     scheduler=scheduler, host=host, chunk=str(chunk), failed=failed)
        holds = whole(t.get("holds"), (name, "holds"), 1) if name == "cache" else 0
        if holds > files:
            raise fail((name, "holds"), f"{holds}: more than the catalogue's {files} files")
        return tier_, holds

    origin, _ = tier("files")
    if "cache" in doc:
        cache, cached = tier("cache")
    else:
        # No cache tier: none up, nothing held.
        cache, cached = Tier(1, origin.profile, 1, origin.nic, failed=1), 0
    clients = []
    raw = doc["clients"]
    if not isinstance(raw, list) or not raw:
        raise fail(("clients",), "expected at least one [[clients]] table")
    for i, c in enumerate(raw):
        keys = ("clients", i)
        for k in c:
            if k not in {"name", "count", "line", "rtt", "window"}:
                raise fail(keys + (k,), "unknown key (expected name, count, line, rtt, window)")
        name = text_of(c.get("name"), keys + ("name",))
        if any(o.name == name for o in clients):
            raise fail(keys + ("name",), f"'{name}' is defined twice")
        line = size(c.get("line"), keys + ("line",))
        if line <= 0:
            raise fail(keys + ("line",), f"{toml_text(c.get('line'))}: a line's rate (bytes a second) must be positive")
        try:
            rtt = parse_time_ns(c.get("rtt"), "s")
        except (UnitError, TypeError, ValueError) as e:
            raise fail(keys + ("rtt",), f"{toml_text(c.get('rtt'))}: {unit_reason(e, 'expected a time like 20ms')}") from None
        if not 0 < rtt <= MAX_NS:
            raise fail(keys + ("rtt",), f"{toml_text(c.get('rtt'))}: a round trip must be positive and at most "
                       f"{MAX_NS // 10**9 // 86400:,} days")
        window = size(c.get("window", "64k"), keys + ("window",))
        if window <= 0:
            raise fail(keys + ("window",), "a TCP window must be positive")
        count = whole(c.get("count"), keys + ("count",), 1)
        if count > MAX_THREADS - sum(o.count for o in clients):
            raise fail(keys + ("count",), f"{count}: expected at most {MAX_THREADS:,} clients in all (a thread each, "
                       "and Linux's PID_MAX_LIMIT)")
        clients.append(Clients(name, count, float(line), rtt / 1e9, window))
    run = doc.get("runtime", "60s")
    try:
        run_s = parse_time_ns(run, "s") / 1e9
    except (UnitError, TypeError, ValueError) as e:
        raise fail(("runtime",), f"{toml_text(run)}: {unit_reason(e, 'expected a time like 60s')}") from None
    if not 1 <= run_s <= MAX_NS / 1e9:
        raise fail(("runtime",), f"{toml_text(run)}: expected at least a second and at most {MAX_NS // 10**9 // 86400:,} days")
    site = Site(files=files, size_mb=(lo // MIB, hi // MIB), zipf=float(zipf), cached=cached, clients=tuple(clients),
                cache=cache, origin=origin, run_s=int(run_s))
    return str(doc.get("name", path.stem)), site
