"""A file workload's time series (``ssdlab.fileseries``): each interval's cache hit ratio and
programs from the core's running totals, delays left out of a program's time; the table in the
run's report; scattered popularity picks; shipped scenarios found by name; and seed 000's
search-index scenario as the gallery runs it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ssdlab import api
from ssdlab.fileseries import intervals
from ssdlab.filework import FileWorkError, bundled, load

READERS = """\
name = "readers"
filesystem = { type = "ext4", size = "2g" }
runtime = "4s"

[[fileset]]
name = "lists"
entries = 4000
size = { min = "4k", max = "64k", align = "4k" }
prealloc = 1.0

[[thread]]
name = "query"
instances = 4
ops = [ { op = "open", set = "lists", pick = { zipf = 0.9, scattered = true } }, { op = "read_whole", io = "64k" },
        { op = "close" }, { op = "delay", time = "20ms" } ]
"""


def write(tmp_path: Path, text: str) -> Path:
    p = tmp_path / "readers.toml"
    p.write_text(text)
    return p


def test_intervals_add_up_to_the_run_and_leave_the_think_time_out(tmp_path: Path) -> None:
    w = load(write(tmp_path, READERS))
    core = api.execute(api.build(None, profile="seagate-barracuda-7200.11-1tb", host="server-2008", files=w, seed=1,
                                 interval="500ms")).core
    rows = intervals(w, core)
    assert len(rows) >= 6
    assert all(r.end_s > r.start_s for r in rows)
    assert all(0.0 <= r.hit_ratio <= 1.0 for r in rows if r.hit_ratio is not None)
    # Programs counted over the intervals: all the run's but those of its last partial one.
    total = sum(j["file_ops"][-1]["ops"] for j in core["jobs"])
    counted = sum(r.threads["query"].programs for r in rows)
    assert 0.8 * total <= counted <= total
    # A program's time is its opens, reads and closes: well under the 20 ms delay it also
    # waits per loop once the hot lists are cached, and never the loop's whole period.
    per = [r.program_ms(["query"]) for r in rows if r.program_ms(["query"]) is not None]
    loop_ms = [(r.end_s - r.start_s) * 1e3 * 4 / r.threads["query"].programs for r in rows if r.threads["query"].programs]
    assert all(p < lp - 19.0 for p, lp in zip(per, loop_ms)), (per, loop_ms)
    # The cache warms: later intervals hit more than the first.
    assert rows[-1].hit_ratio > rows[0].hit_ratio


def test_the_report_prints_the_intervals_and_the_json_carries_them(tmp_path: Path, cli) -> None:
    p = write(tmp_path, READERS)
    r = cli("run", str(p), "--profile", "seagate-barracuda-7200.11-1tb", "--host", "server-2008", "--interval", "1s")
    assert r.returncode == 0, r.stderr
    assert "per interval (programs completed a second" in r.stdout, r.stdout[-2000:]
    j = cli("run", str(p), "--profile", "seagate-barracuda-7200.11-1tb", "--host", "server-2008", "--interval", "1s",
            "--output-format", "json")
    doc = json.loads(j.stdout)
    rows = doc["intervals"]
    assert len(rows) >= 3 and set(rows[0]["threads"]) == {"query"}
    assert rows[0]["threads"]["query"]["programs"] > 0 and 0 < rows[-1]["cache_hit_ratio"] <= 1
    # Without samples there is no table.
    plain = cli("run", str(p), "--profile", "seagate-barracuda-7200.11-1tb", "--host", "server-2008")
    assert "per interval (programs" not in plain.stdout


@pytest.mark.parametrize(("pick", "expected"), [
    ("{ zipf = 0.9, scattered = 1 }", "thread.0.ops.0.pick.scattered: 1: expected true"),
    ("{ zipf = 0.9, spread = true }", "thread.0.ops.0.pick.spread: unknown key"),
    ("{ zipf = 0.9, ranks = [5, 5] }", "thread.0.ops.0.pick.ranks: [5, 5]: expected [FIRST, END]"),
    ("{ zipf = 0.9, ranks = [1] }", "thread.0.ops.0.pick.ranks: [1]: expected [FIRST, END]"),
])
def test_a_bad_scattered_pick_is_one_line(tmp_path: Path, pick: str, expected: str) -> None:
    p = write(tmp_path, READERS.replace("{ zipf = 0.9, scattered = true }", pick))
    with pytest.raises(FileWorkError) as e:
        load(p)
    assert "\n" not in str(e.value) and str(e.value).startswith(f"{p}:14: ") and expected in str(e.value), str(e.value)


def test_a_scattered_pick_reaches_the_core_only_when_asked(tmp_path: Path) -> None:
    ops = load(write(tmp_path, READERS)).jobs()[0].files["program"]["ops"]
    assert ops[0]["pick"] == {"kind": "zipf", "s": 0.9, "scattered": True}
    plain = load(write(tmp_path, READERS.replace(", scattered = true", ""))).jobs()[0].files["program"]["ops"]
    assert plain[0]["pick"] == {"kind": "zipf", "s": 0.9}
    window = load(write(tmp_path, READERS.replace(", scattered = true", ", ranks = [100, 4000]"))).jobs()[0]
    assert window.files["program"]["ops"][0]["pick"] == {"kind": "zipf", "s": 0.9, "ranks": [100, 4000]}


def test_a_rank_window_past_the_set_is_refused_in_one_line(tmp_path: Path) -> None:
    # Refused at the scenario's line, before the core is asked.
    path = write(tmp_path, READERS.replace(", scattered = true", ", ranks = [100, 5000]"))
    with pytest.raises(FileWorkError) as e:
        load(path)
    message = str(e.value)
    assert message.startswith(f"{path}:") and "ranks: [100, 5000]" in message and "4,000 files" in message
    assert "\n" not in message


def test_shipped_scenarios_are_found_by_name(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    found = bundled(Path("seed000-searchindex.toml"))
    assert found.is_file() and found.parent.name == "scenarios"
    # A file of that name where the user is wins; a path with a directory is left alone.
    (tmp_path / "seed000-searchindex.toml").write_text(READERS)
    assert bundled(Path("seed000-searchindex.toml")) == Path("seed000-searchindex.toml")
    assert bundled(Path("x/seed000-webserver.toml")) == Path("x/seed000-webserver.toml")


def test_the_search_index_scenario_swaps_its_index_after_300_s() -> None:
    w = load(bundled(Path("seed000-searchindex.toml")))
    names = [t.name for t in w.threads]
    assert names == ["query-2-a", "query-3-a", "query-2-b", "query-3-b"]
    # 2.4 terms a query on average: 19 threads of two terms, 13 of three.
    terms = {t.name: sum(op["op"] == "read" for op in t.files["program"]["ops"]) for t in w.threads}
    # Each term's posting list is read at its offset in the index file, by popularity.
    assert all(op["zipf"] == {"s": 0.8, "scattered": True}
               for t in w.threads for op in t.files["program"]["ops"] if op["op"] == "read")
    inst = {t.name: t.instances for t in w.threads}
    assert (19 * 2 + 13 * 3) / 32 == pytest.approx(2.4, abs=0.01)
    assert terms == {"query-2-a": 2, "query-3-a": 3, "query-2-b": 2, "query-3-b": 3} and inst["query-2-a"] == 19
    assert all(t.runtime_ns == 300_000_000_000 for t in w.threads)
    assert w.threads[2].after == ["query-2-a", "query-3-a"]
