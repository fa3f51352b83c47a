"""``ssdlab report`` shows a power cut as the text report tells it: the devices' losses as a
table (arrays' members under them), the page cache's dirty bytes, and each file system's
lines (where its losses fell, what journal recovery makes of them). A run without a power
cut has no such section."""

from __future__ import annotations

import html
import json
import re
from pathlib import Path

from ssdlab.experiments.kernel_loop import STALL_WORK
from ssdlab.powercut import html_view
from ssdlab.units import format_bytes

#: ext3 in writeback mode: 16 MiB left dirty, a small file fsynced, and a thread that keeps
#: the run going past the commit (test_data_mode's stall with its sleeper)
STALL = (STALL_WORK.format(mode="writeback", mib=16).replace('size = "1g"', 'size = "1g", era = "2008"')
         + '\n[[thread]]\nname = "sleeper"\nloops = 1\nops = [ { op = "delay", time = "20s" } ]\n')
FIO = "[w]\nrw=randwrite\nbs=4k\nsize=64m\nruntime=2s\ntime_based=1\niodepth=8\nioengine=libaio\ndirect=1\n"


def _json(cli, tmp_path: Path, src: Path, *extra: str) -> Path:
    r = cli("run", str(src), "--output-format", "json", *extra)
    assert r.returncode == 0, r.stderr
    out = src.with_suffix(".json")
    out.write_text(r.stdout)
    return out


def _page(cli, src: Path) -> str:
    out = src.with_suffix(".html")
    r = cli("report", str(src), "-o", str(out))
    assert r.returncode == 0, r.stderr
    return out.read_text()


def _power_cut_rows(page: str) -> list[list[str]]:
    body = re.search(r'<table class="power-cut">.*?<tbody>(.*?)</tbody>', page, re.S)
    assert body, "no power-cut table"
    rows = [re.findall(r"<td>(.*?)</td>", row) for row in re.findall(r"<tr>(.*?)</tr>", body.group(1), re.S)]
    return [[html.unescape(c) for c in r] for r in rows]


def test_a_file_runs_page_shows_its_power_cut_and_the_stale_files(cli, tmp_path) -> None:
    src = tmp_path / "stall.toml"
    src.write_text(STALL)
    doc = json.loads(_json(cli, tmp_path, src, "--profile", "seagate-barracuda-7200.11-1tb", "--host", "server-2008",
                           "--power-cut", "3s").read_text())
    cut = doc["power_cut"]
    page = _page(cli, src.with_suffix(".json"))
    assert '<h2 id="power-cut">Power cut at 3.000 s</h2>' in page
    rows = _power_cut_rows(page)
    assert [r[0] for r in rows] == [d["name"] for d in cut["devices"]]
    assert rows[0][1] == format_bytes(cut["devices"][0]["volatile_bytes"])
    # The file system's lines, the stale file among them (test_data_mode: one file).
    (fs,) = cut["file_systems"]
    assert fs["stale_files"] == 1
    items = [html.unescape(i) for i in re.findall(r"<li>(.*?)</li>", page, re.S)]
    assert any(i.startswith("data=writeback: 1 file(s) recovered mapping") for i in items), items
    assert html_view(cut)["file_systems"][0]["lines"] == items


def test_a_block_runs_page_shows_its_power_cut_and_one_without_none(cli, tmp_path) -> None:
    job = tmp_path / "w.fio"
    job.write_text(FIO)
    doc = json.loads(_json(cli, tmp_path, job, "--profile", "samsung-970-pro-512", "--power-cut", "1s").read_text())
    cut = doc["ssdlab"]["power_cut"]
    page = _page(cli, job.with_suffix(".json"))
    assert '<h2 id="power-cut">Power cut at 1.000 s</h2>' in page
    rows = _power_cut_rows(page)
    assert rows == [[d["name"], format_bytes(d["volatile_bytes"]), format_bytes(d["promised_bytes"]),
                     str(d["broken_flushes"])] for d in cut["devices"]]
    plain = tmp_path / "plain.fio"
    plain.write_text(FIO)
    _json(cli, tmp_path, plain, "--profile", "samsung-970-pro-512")
    assert 'id="power-cut"' not in _page(cli, plain.with_suffix(".json"))


def test_a_bad_power_cut_in_a_runs_json_is_one_line_naming_the_field(cli, tmp_path) -> None:
    src = tmp_path / "stall.toml"
    src.write_text(STALL)
    doc = json.loads(_json(cli, tmp_path, src, "--profile", "seagate-barracuda-7200.11-1tb", "--host", "server-2008",
                           "--power-cut", "3s").read_text())
    del doc["power_cut"]["file_systems"][0]["stale_files"]
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(doc))
    r = cli("report", str(bad), "-o", str(tmp_path / "bad.html"))
    assert r.returncode == 2
    assert r.stderr.strip().splitlines() == [f"ssdlab: error: {bad}: power_cut.file_systems[0].stale_files: missing"]
