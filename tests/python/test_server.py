"""A download server from a scenario file: the ``[network]`` table and its clients, threads that
serve them (``client``, ``send_whole``, popularity picks), bad input as one line naming file,
line and key, a run through ``ssdlab run`` that says what bounds the server, and the verdict's
rules on their own."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ssdlab import api
from ssdlab.filework import FileWorkError, load
from ssdlab.serverreport import bound

from file_scenarios import SERVER

SCENARIOS = Path(__file__).resolve().parents[2] / "python" / "ssdlab" / "scenarios"



def write(tmp_path: Path, text: str) -> Path:
    p = tmp_path / "server.toml"
    p.write_text(text)
    return p


def test_the_webserver_scenario_loads_with_its_clients() -> None:
    w = load(SCENARIOS / "seed000-webserver.toml")
    assert [c["name"] for c in w.network["clients"]] == ["adsl", "light", "fibre"]
    assert [c["count"] for c in w.network["clients"]] == [70, 30, 27]
    # The scenario's classes are the blog's; its per-class rates over them add up to more than
    # its peak (70 x 182 + 30 x 746 + 27 x 2539 kB/s = 829.4 Mb/s against 571.5).
    from ssdlab.experiments.seed000_webserver import classes_mbps
    from ssdlab.reference import SEED000_WEBSERVER_HDD
    assert {c["name"]: c["count"] for c in w.network["clients"]} == SEED000_WEBSERVER_HDD["clients"]
    assert round(classes_mbps(), 1) == 829.4
    assert w.network["nic"]["mode"] == "802.3ad" and len(w.network["nic"]["links"]) == 2
    jobs = w.jobs()
    assert len(jobs) == 127
    # Each instance serves its own client of its thread's class.
    assert jobs[0].files["client"] == {"class": 0, "index": 0}
    assert jobs[69].files["client"] == {"class": 0, "index": 69}
    assert jobs[70].files["client"] == {"class": 1, "index": 0}
    # Popular files scattered over the disk, each client met part-way through a download.
    assert jobs[0].files["program"]["ops"][0]["pick"] == {"kind": "zipf", "s": 0.8, "scattered": True}
    assert jobs[0].files["program"]["ops"][1] == {"op": "send_whole", "io_bytes": 65536, "midway": True}


def test_the_webserver_experiment_puts_ext3_over_the_array_85_percent_full() -> None:
    # A file locker's server in service: its file system is its array, kept fairly full;
    # the scenario's own 400 GB would crowd every file onto the disks' first tracks.
    from ssdlab.experiments import seed000_webserver as m
    from ssdlab.system import raid
    profile, n = m.DRIVES["hdd"]
    array = raid(profile, 0, n, chunk="64k", engine=m.ENGINE).arrays[0]
    w = m.scenario(m.CASES[0], 60, array.capacity)
    assert w.filesystem["size_bytes"] is None
    cat = next(s for s in w.file_sets if s["name"] == "catalogue")
    mean = (cat["size"]["min"] + cat["size"]["max"]) / 2
    assert abs(cat["entries"] * mean / array.capacity - m.FULL) < 0.001
    assert m.scenario(m.CASES[0], 60).filesystem["size_bytes"] == 400 << 30  # the scenario as written


def test_the_webserver_experiment_takes_its_rates_past_the_cold_start() -> None:
    from ssdlab.experiments import seed000_webserver as m

    s = 1_000_000_000
    # A cold first 10 s (1 MB sent), then 10 MB every 10 s; two classes of 2 and 1 clients.
    sent = [0, 1e6, 11e6, 21e6, 31e6]
    core = {"start_ns": 5 * s, "end_ns": 50 * s,
            "network": {"classes": [{"name": "a", "count": 2}, {"name": "b", "count": 1}]},
            "samples": [{"t_ns": 5 * s + 10 * k * s, "network": {"nic_bytes": [x / 2, x / 2], "class_bytes": [x / 4, 3 * x / 4]}}
                        for k, x in enumerate(sent)]}
    mbps, classes, (lo, hi) = m.warm_rates(core)
    # From the sample at WARM_S (20 s) to the last: 20 MB in 20 s.
    assert m.WARM_S == 20
    assert mbps == pytest.approx(8.0) and lo == hi == pytest.approx(8.0)
    assert classes == {"a": pytest.approx(125.0), "b": pytest.approx(750.0)}
    with pytest.raises(ValueError, match="fewer than two samples past its first 20 s"):
        m.warm_rates({**core, "samples": core["samples"][:3]})


@pytest.mark.parametrize(("change", "line", "expected"), [
    (('client = "fibre"', 'client = "dsl"'), 36, "thread.1.client: 'dsl' names no class of clients (there are: adsl, fibre)"),
    (("instances = 3", "instances = 4"), 35, "thread.1.instances: 4: a thread serving class 'fibre' has one instance a client, 3"),
    (('client = "adsl"\n', ''), 27, "thread.0.client: a thread that sends files (send_whole) needs its clients"),
    (("zipf = 0.8 } }, { op = \"send_whole\", io = \"64k\" }, { op = \"close\" } ]\n\n[[thread]]", "zipf = -1 } }, "
      "{ op = \"send_whole\", io = \"64k\" }, { op = \"close\" } ]\n\n[[thread]]"), 31, "thread.0.ops.0.pick.zipf: -1: expected Zipf's exponent"),
    (('rate = "1g"', 'rate = "2g"'), 12, "network.nic.rate: '2g': expected a port's line rate"),
    (('line = "60m"', 'line = "0"'), 23, "network.clients.1.line: '0': a line's rate"),
    (("links = 2", "links = 1"), 12, "network.nic.links: 802.3ad aggregates two or more ports"),
    (('xmit_hash_policy = "layer3+4" }\n', 'xmit_hash_policy = "layer3+4" }\nsend_buffer_windows = -2\n'), 13,
     "network.send_buffer_windows: -2: expected the socket send buffer in windows"),
])
def test_a_bad_server_is_one_line_naming_file_line_and_key(tmp_path: Path, change, line, expected) -> None:
    p = write(tmp_path, SERVER.replace(*change, 1))
    with pytest.raises(FileWorkError) as e:
        load(p)
    message = str(e.value)
    assert "\n" not in message
    assert message.startswith(f"{p}:{line}: "), message
    assert expected in message, message


def test_a_server_run_conserves_bytes_and_says_what_bounds_it(tmp_path: Path, cli) -> None:
    p = write(tmp_path, SERVER)
    core = api.execute(api.build(None, profile="samsung-850-pro", host="server-2008", files=load(p), seed=1)).core
    net = core["network"]
    sent = sum(j["read"]["bytes"] for j in core["jobs"])
    assert net["bytes_sent"] == pytest.approx(sent)
    assert sum(c["bytes"] for c in net["classes"]) == pytest.approx(sent)
    # Six ADSL clients and three fibre clients behind 64 KiB windows ask for far less than a
    # port, from files an SSD and the page cache serve: the clients bound the server.
    b = bound(core)
    assert b.resource == "clients", b
    assert all(c.met > 0.9 for c in b.classes), b.classes
    r = cli("run", str(p), "--profile", "samsung-850-pro", "--host", "server-2008")
    assert r.returncode == 0, r.stderr
    assert "network (server side)" in r.stdout and "bound by: clients" in r.stdout, r.stdout[-1500:]
    assert "clients fibre x3:" in r.stdout
    j = cli("run", str(p), "--profile", "samsung-850-pro", "--host", "server-2008", "--output-format", "json")
    doc = json.loads(j.stdout)
    assert doc["server"]["bound"] == "clients" and doc["network"]["classes"][1]["name"] == "fibre"


def _core(nic_full: float, met: float, busy: float, util: float) -> dict:
    """A run's result with only what the verdict reads."""
    return {"start_ns": 0, "end_ns": 10_000_000_000,
            "network": {"nic": [{"saturated_share": nic_full}],
                        "classes": [{"name": "a", "count": 2, "line_bytes_per_s": 1e6, "window_cap_bytes_per_s": 2e6,
                                     "mean_bytes_per_s": met * 1e6}]},
            "files": {"cpu": {"busy": busy, "iowait": 0.0}},
            "devices": [{"disk": {"io_ticks_ms": util * 10_000}}]}


@pytest.mark.parametrize(("nic_full", "met", "busy", "util", "expected"), [
    (1.0, 0.99, 1.0, 1.0, "clients"),   # clients that get their lines need nothing more
    (0.8, 0.5, 1.0, 1.0, "NIC"),
    (0.1, 0.5, 0.95, 1.0, "CPU"),
    (0.1, 0.5, 0.1, 0.97, "storage"),
    (0.1, 0.5, 0.1, 0.2, "nothing saturated"),
])
def test_the_verdict_takes_the_first_bound_from_the_clients_side(nic_full, met, busy, util, expected) -> None:
    b = bound(_core(nic_full, met, busy, util))
    assert b.resource == expected
    assert b.demand_bytes_per_s == 2e6


def test_ssdlab_server_sizes_drives_and_nics(tmp_path: Path, cli) -> None:
    p = write(tmp_path, SERVER.replace("runtime = \"5s\"", "runtime = \"3s\""))
    r = cli("server", str(p), "--profile", "samsung-850-pro", "--drives", "2,3", "--nic", "2x1g,1x10g",
            "--host", "server-2008", "--workers", "1", "--output-format", "json")
    assert r.returncode == 0, r.stderr
    points = json.loads(r.stdout)
    assert [(q["drives"], q["nic"]) for q in points] == [(2, "2x1g"), (2, "1x10g"), (3, "2x1g"), (3, "1x10g")]
    # Nine clients behind 64 KiB windows need far less than either NIC: their lines and
    # windows bound every configuration, which therefore serves the same.
    assert all(q["bound"] == "clients" and q["error"] is None for q in points), points
    assert max(q["mbps"] for q in points) < 1.05 * min(q["mbps"] for q in points)
    # Each ran behind its own NIC: two 1 GbE ports' goodput, or one 10 GbE port's.
    assert [round(q["nic_goodput_mbps"]) for q in points] == [1883, 9415, 1883, 9415]
    bad = cli("server", str(p), "--profile", "samsung-850-pro", "--nic", "2x3g")
    assert bad.returncode != 0 and "--nic 2x3g: expected PORTSxRATE" in bad.stderr, bad.stderr
    assert len(bad.stderr.strip().splitlines()) == 1, bad.stderr
    bad = cli("server", str(p), "--profile", "samsung-850-pro", "--runtime", "soon")
    assert bad.returncode != 0 and bad.stderr.startswith("ssdlab: error: --runtime soon: expected a time"), bad.stderr


def test_a_send_buffer_carries_a_connections_calls_on_fewer_flows(tmp_path: Path) -> None:
    # Two windows of socket buffer (Linux's send-buffer autotuning keeps about two congestion
    # windows): a call returns once its bytes fit, so one flow carries a run of calls; the
    # bytes read are those sent plus those still queued at the end, at most a buffer each.
    text = SERVER.replace('xmit_hash_policy = "layer3+4" }\n', 'xmit_hash_policy = "layer3+4" }\nsend_buffer_windows = 2\n', 1)
    w = load(write(tmp_path, text))
    assert w.network["send_buffer_windows"] == 2.0
    core = api.execute(api.build(None, profile="samsung-850-pro", host="server-2008", files=w, seed=1)).core
    net = core["network"]
    assert net["flows"] * 5 < net["calls"], net
    read = sum(j["read"]["bytes"] for j in core["jobs"])
    windows = {c["name"]: c["window_bytes"] for c in w.network["clients"]}
    queued = sum(2 * windows[c["name"]] * c["count"] for c in w.network["clients"])
    assert net["bytes_sent"] <= read + 1 and read - net["bytes_sent"] <= queued


def test_a_sampled_server_run_shows_what_its_network_sent_each_interval(tmp_path: Path, cli) -> None:
    from ssdlab.fileseries import intervals

    p = write(tmp_path, SERVER)
    w = load(p)
    core = api.execute(api.build(None, profile="samsung-850-pro", host="server-2008", files=w, seed=1,
                                 interval="500ms")).core
    rows = intervals(w, core)
    assert len(rows) >= 8
    # The clients bound this server: six ADSL clients take their 600 kB/s lines in every
    # interval, and what the network sent is what the classes received.
    for r in rows:
        assert r.client_bytes_per_s["adsl"] == pytest.approx(600e3, rel=0.05), r
        assert sum(r.client_bytes_per_s[c["name"]] * c["count"] for c in core["network"]["classes"]) == \
            pytest.approx(r.served_bytes_per_s, rel=1e-9)
    # Over the intervals, the run's bytes less those after the last sample.
    sent = sum(r.served_bytes_per_s * (r.end_s - r.start_s) for r in rows)
    assert sent <= core["network"]["bytes_sent"] + 1 and sent > 0.8 * core["network"]["bytes_sent"]
    # The report's table has the column, its JSON the rates.
    r = cli("run", str(p), "--profile", "samsung-850-pro", "--host", "server-2008", "--interval", "1s")
    assert r.returncode == 0, r.stderr
    assert "sent Mb/s" in r.stdout, r.stdout[-2000:]
    j = cli("run", str(p), "--profile", "samsung-850-pro", "--host", "server-2008", "--interval", "1s",
            "--output-format", "json")
    rows_json = json.loads(j.stdout)["intervals"]
    assert rows_json[1]["sent_bytes_per_s"] > 0 and set(rows_json[1]["client_bytes_per_s"]) == {"adsl", "fibre"}


@pytest.mark.parametrize("mode", ["active-backup", "balance-rr"])
def test_a_hash_a_bonds_mode_does_not_use_is_said_once_to_be_ignored(tmp_path: Path, mode) -> None:
    # Linux's bonding hashes for balance-xor and 802.3ad only (its bonding documentation's
    # xmit_hash_policy); the others take the policy and never use it, and so does the model.
    text = SERVER.replace('mode = "802.3ad", xmit_hash_policy = "layer3+4" }',
                          f'mode = "{mode}", xmit_hash_policy = "layer3+4", hash_formula = "linux-2.6" }}', 1)
    w = load(write(tmp_path, text))
    assert w.warnings == [f"{tmp_path / 'server.toml'}:12: network.nic.xmit_hash_policy: {mode} sends without "
                          "hashing (the policy is balance-xor's and 802.3ad's); xmit_hash_policy and hash_formula "
                          "are ignored"], w.warnings
    assert load(write(tmp_path, SERVER)).warnings == []


def test_a_2008_servers_iowait_gathers_on_the_cores_its_interrupts_wake_threads_on(tmp_path: Path) -> None:
    # 27 readers on one disk: on a 2008 kernel a thread woken by an interrupt (its read done on
    # the disk's core, its socket drained on its NIC port's) moves to that core when it is
    # idle (SD_WAKE_AFFINE), so the threads asleep for I/O gather on a few cores and the rest
    # idle plainly; today's kernel leaves each on its own core, spread by fork over all eight.
    text = SERVER.replace("count = 3\n", "count = 24\n").replace("instances = 3\n", "instances = 24\n")
    p = write(tmp_path, text.replace('size = "32m"', 'size = "128m"'))

    def shares(host: str) -> tuple[float, float]:
        core = api.execute(api.build(None, profile="seagate-barracuda-7200.11-1tb", host=host, files=load(p),
                                     seed=0)).core
        iowait = sorted((c["iowait"] for c in core["files"]["cpu_cores"]), reverse=True)
        assert len(iowait) == 8
        return sum(iowait[:3]) / sum(iowait), core["files"]["cpu"]["iowait"]

    top3_2008, whole_2008 = shares("server-2008")
    top3_today, whole_today = shares("generic-linux")
    assert top3_2008 > 0.7, top3_2008      # 0.80 (1 Dec 2026)
    assert top3_today < 0.55, top3_today   # 0.44
    assert whole_2008 < 0.6 * whole_today, (whole_2008, whole_today)  # 0.375 against 0.76
