"""``ssdlab report`` on a file workload run's JSON (``ssdlab.filerun``, ``ssdlab.filehtml``): a
server's page says what bounds it, with its NIC ports and its clients; a sampled run's page
plots its intervals; a bad file is one line naming file and field; and the page is chosen by
the document's shape (fio's runs keep theirs: tests/python/test_gallery.py)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from ssdlab.filerun import FileRun

from file_scenarios import SERVER as SERVER_5S

# The download server of test_server, cut to 3 s.
SERVER = SERVER_5S.replace('runtime = "5s"', 'runtime = "3s"')

READERS = """\
name = "readers"
filesystem = { type = "ext4", size = "2g" }
runtime = "3s"

[[fileset]]
name = "lists"
entries = 2000
size = { min = "4k", max = "64k", align = "4k" }
prealloc = 1.0

[[thread]]
name = "query"
instances = 4
ops = [ { op = "open", set = "lists", pick = { zipf = 0.9, scattered = true } }, { op = "read_whole", io = "64k" },
        { op = "close" }, { op = "delay", time = "20ms" } ]

[[thread]]
name = "scan"
instances = 1
ops = [ { op = "open", set = "lists" }, { op = "read_whole", io = "64k" }, { op = "close" },
        { op = "delay", time = "50ms" } ]
"""


def _run(cli, tmp_path: Path, name: str, scenario: str, profile: str, *extra: str) -> Path:
    toml = tmp_path / f"{name}.toml"
    toml.write_text(scenario)
    r = cli("run", str(toml), "--profile", profile, "--host", "server-2008", "--output-format", "json", *extra)
    assert r.returncode == 0, r.stderr
    out = tmp_path / f"{name}.json"
    out.write_text(r.stdout)
    return out


@pytest.fixture(scope="module")
def server_json(tmp_path_factory) -> Path:
    from conftest import run_cli

    return _run(run_cli, tmp_path_factory.mktemp("server"), "server", SERVER, "samsung-850-pro")


@pytest.fixture(scope="module")
def readers_json(tmp_path_factory) -> Path:
    from conftest import run_cli

    return _run(run_cli, tmp_path_factory.mktemp("readers"), "readers", READERS, "seagate-barracuda-7200.11-1tb",
                "--interval", "500ms")


def _report(cli, src: Path, tmp_path: Path) -> str:
    out = tmp_path / "page.html"
    r = cli("report", str(src), "-o", str(out))
    assert r.returncode == 0, r.stderr
    return out.read_text()


def _rows(page: str, cls: str) -> list[list[str]]:
    """The body rows of the table of class ``cls``, cells as text."""
    body = re.search(rf'<table class="{cls}">.*?<tbody>(.*?)</tbody>', page, re.S)
    assert body, f"no table {cls}"
    return [re.findall(r"<td>(.*?)</td>", row) for row in re.findall(r"<tr>(.*?)</tr>", body.group(1), re.S)]


def test_a_servers_page_says_what_bounds_it_with_its_ports_and_clients(cli, server_json, tmp_path) -> None:
    doc = json.loads(server_json.read_text())
    page = _report(cli, server_json, tmp_path)
    assert "ssdlab file workload report" in page and "fio summary" not in page
    # The verdict and why, as the JSON says them.
    assert doc["server"]["bound"] == "clients"
    assert f"Bound by: <strong>clients</strong> ({doc['server']['why']})" in page
    # Each NIC port, its utilisation and full share.
    ports = _rows(page, "ports")
    assert [p[0] for p in ports] == [p["name"] for p in doc["network"]["nic"]] == ["nic slave 0", "nic slave 1"]
    for row, p in zip(ports, doc["network"]["nic"]):
        assert row[3] == f"{100 * p['utilisation']:.1f} %" and row[4] == f"{100 * p['saturated_share']:.1f} %"
    # Each class of clients: its rate, its line and window, which bounds it and the share it got.
    classes = {r[0]: r for r in _rows(page, "classes")}
    assert set(classes) == {"adsl", "fibre"}
    assert classes["adsl"][7] == "line" and classes["fibre"][7] == "TCP window"
    fibre = doc["network"]["classes"][1]
    assert classes["fibre"][2] == f"{fibre['mean_bytes_per_s'] / 1e3:,.0f}"
    assert classes["fibre"][8] == f"{100 * doc['server']['classes'][1]['met']:.1f} %"
    # The threads' operations, as the text report counts them.
    ops = _rows(page, "ops")
    assert ops[0][:3] == ["adsl x6", "open", f"{doc['threads'][0]['ops'][0]['ops']:,}"]
    assert ops[3][0] == "fibre x3"
    # Not sampled: no figures, and the page says so.
    assert "<img" not in page and "the run was not sampled" in page


def test_a_sampled_runs_page_plots_its_intervals(cli, readers_json, tmp_path) -> None:
    doc = json.loads(readers_json.read_text())
    assert len(doc["intervals"]) >= 5 and "network" not in doc
    page = _report(cli, readers_json, tmp_path)
    for fig in ("per-interval-hit-ratio", "per-interval-program-time", "per-interval-cpu"):
        assert re.search(rf'<figure id="{fig}"><img alt="[^"]+" src="data:image/png;base64,', page), fig
    assert "Network and what bounds the server" not in page
    # The CPUs' table: the whole run, the intervals' ranges, then a row per core.
    cores = [r for r in _rows(page, "cpu") if r[0].startswith("core ")]
    assert [r[0] for r in cores] == [f"core {n}" for n in range(len(doc["files"]["cpu_cores"]))]
    assert cores[0][2] == f"{100 * doc['files']['cpu_cores'][0]['iowait']:.1f} %"
    rows = _rows(page, "intervals")
    assert len(rows) == len(doc["intervals"])
    assert rows[-1][2] == f"{100 * doc['intervals'][-1]['cache_hit_ratio']:.1f} %"
    header = re.search(r'<table class="intervals"><thead><tr>(.*?)</tr>', page).group(1)
    assert "query: ms" in header and "scan: ms" in header


def test_the_program_time_figure_has_one_line_per_thread(readers_json, monkeypatch) -> None:
    from ssdlab import filehtml

    drawn: dict[str, list[str]] = {}
    real = filehtml.figure_uri

    def record(fig, layout=True):
        ax = fig.axes[0]
        drawn[ax.get_title()] = [ln.get_label() for ln in ax.get_lines()]
        return real(fig, layout)

    monkeypatch.setattr(filehtml, "figure_uri", record)
    filehtml.render(json.loads(readers_json.read_text()))
    assert drawn["mean program time per interval, delays left out"] == ["query", "scan"]
    assert drawn["CPUs per interval (sar -u)"] == ["busy", "iowait"]


@pytest.mark.parametrize("change, field", [
    (lambda d: d["server"].pop("bound"), "server.bound: missing"),
    (lambda d: d["network"]["nic"][1].__setitem__("utilisation", "high"),
     'network.nic[1].utilisation: expected a number, got "high"'),
    (lambda d: d["threads"][0]["ops"][0].__setitem__("ops", -3), "threads[0].ops[0].ops: expected a number >= 0"),
    (lambda d: d["files"].pop("cache_hits"), "files.cache_hits: missing"),
    (lambda d: d["files"]["cpu"].__setitem__("load", [1.0]), "files.cpu.load: expected three numbers"),
    (lambda d: d["files"]["cpu_cores"][2].__setitem__("iowait", -0.5), "files.cpu_cores[2].iowait: expected a number >= 0"),
    (lambda d: d["files"]["cpu_cores"][1].update(busy=3.0, iowait=2.0, idle=0.0),
     "files.cpu_cores[1]: busy + iowait + idle: expected shares that sum to 1, got 5"),
    (lambda d: d.__setitem__("run_s", "3s"), 'run_s: expected a number, got "3s"'),
])
def test_a_bad_file_run_is_one_line_naming_file_and_field(cli, server_json, tmp_path, change, field) -> None:
    data = json.loads(server_json.read_text())
    change(data)
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(data))
    out = tmp_path / "o.html"
    p = cli("report", str(bad), "-o", str(out))
    assert p.returncode == 2, (p.returncode, p.stderr)
    assert "Traceback" not in p.stderr and p.stderr.count("\n") == 1, p.stderr
    assert p.stderr.startswith(f"ssdlab: error: {bad}: {field}"), p.stderr
    assert not out.exists()


def test_a_document_of_neither_shape_is_one_line(cli, tmp_path) -> None:
    bad = tmp_path / "other.json"
    bad.write_text('{"threads": []}')
    p = cli("report", str(bad), "-o", str(tmp_path / "o.html"))
    assert p.returncode == 2 and p.stderr.count("\n") == 1, p.stderr
    assert f"{bad}: not a run's result" in p.stderr and '"threads" and "files"' in p.stderr


def test_the_file_runs_json_passes_its_model(server_json, readers_json) -> None:
    for path in (server_json, readers_json):
        FileRun.model_validate(json.loads(path.read_text()))


def test_a_sampled_servers_page_plots_what_its_network_sent(tmp_path) -> None:
    from conftest import run_cli

    src = _run(run_cli, tmp_path, "server", SERVER, "samsung-850-pro", "--interval", "1s")
    doc = json.loads(src.read_text())
    assert all(r["sent_bytes_per_s"] > 0 for r in doc["intervals"])
    out = tmp_path / "page.html"
    r = run_cli("report", str(src), "-o", str(out))
    assert r.returncode == 0, r.stderr
    assert re.search(r'<figure id="per-interval-sent"><img alt="what the network sent per interval" src="data:image/png',
                     out.read_text())
