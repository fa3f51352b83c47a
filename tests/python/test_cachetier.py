"""A site of two tiers (``ssdlab.cachetier``): the hit ratio of Zipf's law, each server's
scenario (its catalogue, its clients, the ranks they ask for), and the routing of clients —
to the cache tier while it has room, to the file servers for the rest and for what a failed
or full cache tier cannot take."""

from __future__ import annotations

import re

import pytest

from ssdlab.cachetier import Clients, ServerRun, Site, Tier, hit_ratio, scenario, simulate

ADSL = Clients("adsl", 6, 600e3, 0.030, 65536)
FIBRE = Clients("fibre", 4, 60e6, 0.010, 65536)


def test_the_hit_ratio_is_the_cached_ranks_share_of_zipfs_law() -> None:
    assert hit_ratio(2, 1, 1.0) == pytest.approx(2 / 3)
    assert hit_ratio(100, 100, 0.8) == pytest.approx(1.0)
    # Exponent 0: every file alike.
    assert hit_ratio(1000, 250, 0.0) == pytest.approx(0.25)
    assert hit_ratio(8000, 900, 0.8) > hit_ratio(8000, 900, 0.5)


def test_a_client_takes_its_line_or_its_window_over_its_round_trip() -> None:
    assert ADSL.demand == 600e3
    assert FIBRE.demand == pytest.approx(65536 / 0.010)


def test_a_servers_scenario_has_its_catalogue_clients_and_rank_windows() -> None:
    w = scenario("origin", 50, (10, 20), 0.8, "2x1g", False, 5,
                 [("adsl-origin", ADSL, 3, (10, 50)), ("adsl-overflow", ADSL, 0, (0, 10)), ("fibre-origin", FIBRE, 2, (10, 50))])
    assert [c["name"] for c in w.network["clients"]] == ["adsl-origin", "fibre-origin"], "an empty group is left out"
    assert [t.instances for t in w.threads] == [3, 2]
    assert w.file_sets[0]["entries"] == 50
    pick = w.threads[0].files["program"]["ops"][0]["pick"]
    assert pick == {"kind": "zipf", "s": 0.8, "ranks": [10, 50]}
    # Watched from some moment: each client part-way through its first download.
    assert w.threads[0].files["program"]["ops"][1] == {"op": "send_whole", "io_bytes": 65536, "midway": True}
    assert len(w.network["nic"]["links"]) == 2 and w.network["nic"]["mode"] == "802.3ad"
    toe = scenario("cache", 10, (10, 20), 0.8, "1x10g", True, 5, [("fibre-cache", FIBRE, 1, None)])
    assert toe.network["costs"]["per_packet_ns"] == 0
    assert "ranks" not in toe.threads[0].files["program"]["ops"][0]["pick"]


def small_site(failed: int = 0, **kw) -> Site:
    tier = Tier(2, "samsung-850-pro", 2, "1x1g", failed=failed, host="server-2008")
    origin = Tier(2, "samsung-850-pro", 2, "1x1g", host="server-2008")
    return Site(files=40, size_mb=(10, 20), zipf=0.8, cached=10, clients=(ADSL, FIBRE), cache=tier, origin=origin,
                run_s=2, rounds=1, **kw)


ROOMY = ServerRun(900.0, "NIC", "", 0.1, 0.1)


def test_with_room_at_the_cache_nothing_overflows_and_both_tiers_serve() -> None:
    r = simulate(small_site(), cache_capacity=ROOMY)
    assert r.hit_ratio == pytest.approx(hit_ratio(40, 10, 0.8))
    assert sum(r.clients_overflow.values()) == 0
    # Clients split by their share of requests: about h of each class at the cache tier.
    for c in (ADSL, FIBRE):
        at_cache = 2 * r.clients_cache[c.name]
        assert abs(at_cache - c.count * r.hit_ratio) <= 2, (c.name, r.clients_cache)
    assert r.cache_server is not None and r.cache_server.mbps > 0 and r.file_server.mbps > 0
    assert r.served_mbps == pytest.approx(2 * r.cache_server.mbps + 2 * r.file_server.mbps)
    assert 0 < r.cache_share < 1


def test_with_the_cache_tier_down_every_popular_download_goes_to_the_file_servers() -> None:
    r = simulate(small_site(failed=2), cache_capacity=ROOMY)
    assert r.cache_server is None and sum(r.clients_cache.values()) == 0
    assert sum(r.clients_overflow.values()) > 0
    assert any(k.endswith("-overflow") for k in r.file_server.classes)
    assert r.cache_share == 0


def test_a_full_cache_tier_sends_what_is_over_its_capacity_to_the_file_servers() -> None:
    # Each of two cache servers can take half of the popular downloads' demand: load 100 %.
    h = hit_ratio(40, 10, 0.8)
    hot = h * (ADSL.count * ADSL.demand + FIBRE.count * FIBRE.demand)
    full = ServerRun(8 * hot / 2 / 1e6, "NIC", "", 0.1, 0.1)
    r = simulate(small_site(), cache_capacity=full)
    assert r.cache_load == pytest.approx(1.0, rel=0.05)
    assert sum(r.clients_overflow.values()) == 0
    half = simulate(small_site(failed=1), cache_capacity=ServerRun(2 * full.mbps, "NIC", "", 0.1, 0.1))
    assert half.cache_load == pytest.approx(0.5, rel=0.05) and sum(half.clients_overflow.values()) == 0, \
        "at 50 % the one left takes it all"
    failed = simulate(small_site(failed=1), cache_capacity=full)
    # One of two up at 100 %: half the popular clients overflow, shared by two file servers.
    hot_clients = sum(c.count for c in (ADSL, FIBRE)) * h
    assert sum(failed.clients_overflow.values()) * 2 == pytest.approx(hot_clients / 2, abs=3)


SITE = """\
name = "small"
runtime = "3s"

[catalogue]
files = 400
size = { min = "10m", max = "50m" }
zipf = 0.8

[cache]
servers = 2
holds = 40
profile = "samsung-850-pro"
drives = 2
nic = "1x1g"

[files]
servers = 2
profile = "seagate-barracuda-7200.11-1tb"
drives = 2
nic = "2x1g"
scheduler = "cfq"

[[clients]]
name = "adsl"
count = 60
line = "600k"
rtt = "30ms"

[[clients]]
name = "fibre"
count = 30
line = "60m"
rtt = "10ms"
"""


def test_a_site_file_describes_the_tiers_and_the_clients(tmp_path) -> None:
    from ssdlab.sitefile import load_site

    p = tmp_path / "site.toml"
    p.write_text(SITE)
    name, s = load_site(p)
    assert name == "small" and s.files == 400 and s.size_mb == (10, 50) and s.cached == 40 and s.run_s == 3
    assert (s.cache.servers, s.cache.drives, s.cache.nic, s.origin.scheduler) == (2, 2, "1x1g", "cfq")
    assert [c.name for c in s.clients] == ["adsl", "fibre"] and s.clients[1].rtt_s == pytest.approx(0.010)
    assert (s.cache.engine, s.origin.engine) == ("md", "md")
    # A tier behind a RAID card: the engine's name, as a system file's array takes it.
    p.write_text(SITE.replace('scheduler = "cfq"', 'scheduler = "cfq"\nengine = "adaptec-6805"', 1))
    assert load_site(p)[1].origin.engine == "adaptec-6805"
    # Without [cache]: no cache tier, nothing held.
    p.write_text(SITE.split("[cache]")[0] + "[files]" + SITE.split("[files]")[1])
    _, bare = load_site(p)
    assert bare.cached == 0 and bare.cache.up == 0


@pytest.mark.parametrize(("change", "line", "expected"), [
    (("holds = 40", "holds = 401"), 11, "cache.holds: 401: more than the catalogue's 400 files"),
    (('nic = "1x1g"', 'nic = "1x3g"'), 14, "cache.nic: 1x3g: expected PORTSxRATE"),
    (("servers = 2\nholds", "servers = 2\nfailed = 3\nholds"), 11, "cache.failed: 3: more than the tier's 2 servers"),
    (('size = { min = "10m", max = "50m" }', 'size = { min = "50m", max = "10m" }'), 6, "catalogue.size: min and max"),
    (('rtt = "10ms"', 'rtt = "fast"'), 33, "clients.1.rtt: 'fast': expected a time like 20ms"),
    (('runtime = "3s"', 'runtime = "3x"'), 2, "runtime: '3x': unknown time unit 'x' (use ns, us, ms, s, m, h, d)"),
    (('line = "60m"', 'line = "fast"'), 32, "clients.1.line: 'fast': expected a size like 100m"),
    (('scheduler = "cfq"', 'scheduler = "cfq"\nholds = 3'), 22, "files.holds: unknown key"),
    (('profile = "samsung-850-pro"', 'profile = "no-such-drive"'), 12, "cache.profile: 'no-such-drive': no such drive profile"),
    (('scheduler = "cfq"', 'scheduler = "cfq"\nhost = "nowhere"'), 22, "files.host: 'nowhere': no such host profile"),
    (('scheduler = "cfq"', 'scheduler = "cfq"\nengine = "raid-card"'), 22, "files.engine: unknown engine 'raid-card'"),
    # Once said by the scenario written for the run, at its temporary file's line, or by a
    # command-line option the user did not give (--chunk, --raid 0 --drives).
    (('scheduler = "cfq"', 'scheduler = "bogus"'), 21, "files.scheduler: scheduler 'bogus': expected one of"),
    (('drives = 2\nnic = "1x1g"', 'drives = 100000\nnic = "1x1g"'), 13, "cache.drives: 100000: expected at most 65535"),
    (('nic = "1x1g"', 'nic = "1x1g"\nchunk = "3k"'), 15, "cache.chunk: '3k': expected a positive multiple of 4 KiB"),
    (('runtime = "3s"', 'runtime = "1000000000d"'), 2, "runtime: '1000000000d': expected at least a second and at most"),
    (('rtt = "30ms"', 'rtt = "1000000000d"'), 27, "clients.0.rtt: '1000000000d': a round trip must be positive and"),
    (("count = 60", "count = 100000000"), 25, "clients.0.count: 100000000: expected at most 4,194,304 clients"),
    (('max = "50m"', 'max = "100000000t"'), 6, "catalogue.size.max: '100000000t': 400 files of up to that size"),
    # A MemoryError (the hit ratio's list of every rank), and a name that was not one.
    (("files = 400", "files = 1000000000000"), 5, "catalogue.files: 1000000000000: expected at most 10,000,000"),
    (('name = "small"', "name = 5"), 1, "name: 5: expected a name"),
    (('nic = "1x1g"', 'nic = "100000x1g"'), 14, "cache.nic: 100000x1g: expected at most 64 ports"),
    # Left out, a tier's drives were one, which md refused as '--raid 0 --drives 1'.
    (('drives = 2\nnic = "1x1g"', 'nic = "1x1g"'), 9, "cache: missing: drives = N"),
])
def test_a_bad_site_file_is_one_line_naming_file_line_and_key(tmp_path, change, line, expected) -> None:
    from ssdlab.sitefile import SiteFileError, load_site

    p = tmp_path / "site.toml"
    p.write_text(SITE.replace(*change, 1))
    with pytest.raises(SiteFileError) as e:
        load_site(p)
    message = str(e.value)
    assert "\n" not in message and message.startswith(f"{p}:{line}: ") and expected in message, message
    quoted = re.search(r": ('[^']*'):", expected)
    if quoted:  # a size or a time says what was expected once, and quotes the value once
        assert message.count("expected") <= 1 and message.count(quoted.group(1)) == 1, message


def test_a_site_whose_catalogue_does_not_fit_names_the_site_file_not_the_runs_scenario(tmp_path, cli) -> None:
    """The scenario each server runs is written to a temporary file: the core's error about
    its file system is the site file's, not said at that file's line."""
    p = tmp_path / "site.toml"
    p.write_text(SITE.replace('max = "50m"', 'max = "1000000m"'))
    r = cli("site", str(p), "--runtime", "1s")
    assert r.returncode == 2
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"ssdlab: error: {p}: "), r.stderr
    assert "does not fit on a device" in lines[0] and ".toml:" not in lines[0].split(f"{p}: ", 1)[1], r.stderr


def test_a_site_whose_file_servers_get_no_client_is_refused(tmp_path, cli) -> None:
    """Each server's share rounded to none: the scenario written for it had no thread, said at
    its temporary file."""
    p = tmp_path / "site.toml"
    p.write_text(SITE.replace("servers = 2\nprofile = \"seagate", "servers = 1000\nprofile = \"seagate"))
    assert "servers = 1000" in p.read_text()
    r = cli("site", str(p), "--runtime", "1s")
    lines = r.stderr.strip().splitlines()
    assert r.returncode == 2 and len(lines) == 1, r.stderr
    assert lines[0].startswith(f"ssdlab: error: {p}: files: none of the 90 clients reaches a file server (the cache "
                               "tier takes "), r.stderr
    assert lines[0].endswith("shared by 1,000 file servers up rounds to none each): nothing to measure there; fewer "
                             "file servers, or more clients"), r.stderr


def test_ssdlab_site_reports_each_tier_and_what_bounds_it(tmp_path, cli) -> None:
    import json

    p = tmp_path / "site.toml"
    p.write_text(SITE)
    r = cli("site", str(p))
    assert r.returncode == 0, r.stderr
    assert "cache tier: 2 servers (0 down) holding the 40 most popular files" in r.stdout, r.stdout
    assert "one server of each tier" in r.stdout and "served" in r.stdout
    j = cli("site", str(p), "--output-format", "json", "--runtime", "2s")
    assert j.returncode == 0, j.stderr
    doc = json.loads(j.stdout)
    assert doc["name"] == "small" and 0 < doc["hit_ratio"] < 1
    assert doc["file_server"]["bound"] in ("clients", "NIC", "CPU", "storage", "nothing saturated")
    bare = tmp_path / "bare.toml"
    bare.write_text(SITE.split("[cache]")[0] + "[files]" + SITE.split("[files]")[1])
    b = cli("site", str(bare), "--runtime", "2s")
    assert b.returncode == 0 and "cache tier:" not in b.stdout and "0.0 % of it by the cache tier" in b.stdout, b.stderr
    bad = cli("site", str(p), "--runtime", "0.5s")
    assert bad.returncode != 0 and "--runtime 0.5s: expected at least a second" in bad.stderr
