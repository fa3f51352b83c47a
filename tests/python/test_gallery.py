"""The reproduction gallery: the pass/fail rule on synthetic rows, the registry, the terminal
table, ``ssdlab reproduce`` (one quick experiment, and a failing one) and ``ssdlab report``."""

import json
import math
from html.parser import HTMLParser

import pytest
from typer.testing import CliRunner

from ssdlab import gallery
from ssdlab.cli import app
from ssdlab.gallery import Row, Status, Tolerance
from ssdlab.gallery.core import Experiment, Figure

TEN = Tolerance.within(10.0, "test")


def row(**kw):
    base = dict(quantity="q", published="1", tolerance=TEN)
    return Row(**{**base, **kw})


# ---- the rule ---------------------------------------------------------------------------

@pytest.mark.parametrize("error, status", [(0.0, Status.passed), (9.99, Status.passed), (10.0, Status.passed),
                                           (-10.0, Status.passed), (10.01, Status.failed), (-30.0, Status.failed),
                                           (None, Status.failed), (math.nan, Status.failed),
                                           (math.inf, Status.failed)])
def test_a_row_passes_only_inside_its_tolerance(error, status):
    assert row(simulated=1.0, error=error).status == status


def test_bounds_are_one_sided():
    low = Tolerance.at_least(15.0, "lower bound")
    assert row(error=500.0, tolerance=low).status == Status.passed
    assert row(error=-15.0, tolerance=low).status == Status.passed
    assert row(error=-16.0, tolerance=low).status == Status.failed
    high = Tolerance.at_most(15.0, "upper bound")
    assert row(error=-99.0, tolerance=high).status == Status.passed
    assert row(error=20.0, tolerance=high).status == Status.failed
    drives = Tolerance.within(1.0, "one drive")
    assert row(error=-1.0, error_unit="drives", tolerance=drives).status == Status.passed
    assert row(error=-2.0, error_unit="drives", tolerance=drives).status == Status.failed


def test_trends_pass_when_they_hold():
    t = Tolerance.holds("trend")
    assert row(tolerance=t, holds=True).status == Status.passed
    assert row(tolerance=t, holds=False).status == Status.failed
    assert row(tolerance=t).status == Status.failed  # no verdict is not a pass


def test_a_row_quick_mode_cannot_judge_says_so_and_never_passes():
    for error in (0.0, 30.0):  # inside or outside: neither is judged
        r = row(simulated=1.3, error=error, skip="not judged in quick mode: the dips need the full run")
        assert r.status == Status.not_judged
        assert r.reason.startswith("not judged in quick mode: ")
    r = row(missing="profile not available", skip="quick")
    assert r.status == Status.not_run and r.reason == "profile not available"


def test_the_status_is_derived_not_given():
    r = Row(quantity="q", published="1", error=50.0, tolerance=TEN, status="pass")
    assert r.status == Status.failed


def test_tolerance_text():
    assert TEN.text() == "±10%"
    assert Tolerance.at_least(15, "x").text() == ">= -15%"
    assert Tolerance.at_most(15, "x").text() == "<= +15%"
    assert Tolerance(low=-20, high=5, reason="x").text() == "-20..+5%"
    assert Tolerance.within(1, "x").text("drives") == "±1 drives"


# ---- registry, results, table -------------------------------------------------------------

def fake_experiment(name, rows, raises=None):
    def run(ctx):
        if raises:
            raise raises
        return [Row(**r) for r in rows], [], [f"quick={ctx.quick}"]
    return Experiment(name=name, title=f"{name} title", citation=f"{name} citation", run=run)


GOOD = [dict(case="c", quantity="rate", published="2", simulated=2.1, unit="GB/s", error=5.0, tolerance=TEN)]
BAD = GOOD + [dict(case="c", quantity="waf", published="1.2", simulated=1.0, error=-16.7, tolerance=TEN)]


def test_results_fail_when_a_row_fails_or_the_experiment_raises():
    ok = gallery.run_experiment(fake_experiment("ok", GOOD), quick=True)
    assert not ok.failed and ok.rows[0].experiment == "ok" and ok.notes == ["quick=True"]
    assert gallery.run_experiment(fake_experiment("bad", BAD), quick=True).failed
    crashed = gallery.run_experiment(fake_experiment("boom", [], raises=RuntimeError("no such drive\nmore")),
                                     quick=False)
    assert crashed.failed and crashed.error == "RuntimeError: no such drive" and crashed.rows == []
    text = gallery.text_table([ok, crashed])
    assert "ok" in text and "pass" in text and "fail (RuntimeError: no such drive)" in text


def test_every_registered_experiment_has_a_citation_and_a_quick_note():
    reg = gallery.registered()
    for name in ("seed000", "seed001", "seed002", "seed003", "seed004", "ring_buffer", "thermal"):
        assert name in reg
    for exp in reg.values():
        assert exp.citation and exp.title and exp.quick_note


def test_unknown_names_are_one_line_listing_the_names():
    with pytest.raises(gallery.UnknownExperiment) as e:
        gallery.select(["seed003", "nope"])
    assert "'nope'" in str(e.value) and "seed003" in str(e.value) and "\n" not in str(e.value)
    assert [x.name for x in gallery.select(["seed003", "seed002", "seed003"])] == ["seed003", "seed002"]


class Cells(HTMLParser):
    """The text of every table cell, per table id."""

    def __init__(self):
        super().__init__()
        self.tables, self._id, self._cell = {}, None, None
        self.images = 0

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "table":
            self._id = a.get("id") or a.get("class") or f"table{len(self.tables)}"
            self.tables.setdefault(self._id, [])
        elif tag == "tr" and self._id is not None:
            self.tables[self._id].append([])
        elif tag in ("td", "th"):
            self._cell = ""
        elif tag == "img" and a.get("src", "").startswith("data:image/png;base64,"):
            self.images += 1

    def handle_data(self, data):
        if self._cell is not None:
            self._cell += data

    def handle_endtag(self, tag):
        if tag in ("td", "th") and self._cell is not None and self._id is not None:
            self.tables[self._id][-1].append(self._cell)
            self._cell = None
        elif tag == "table":
            self._id = None


def parse(text):
    p = Cells()
    p.feed(text)
    return p


def test_the_page_holds_the_table_and_the_figures():
    res = gallery.run_experiment(fake_experiment("bad", BAD), quick=True)
    res = res.model_copy(update={"figures": [Figure(caption="f", png=b"\x89PNG fake")]})
    p = parse(gallery.page([res], quick=True))
    rows = p.tables["results"]
    assert rows[0][:3] == ["experiment", "case", "quantity"]
    assert [r[-1] for r in rows[1:]] == ["pass", "fail"]
    assert p.images == 1


@pytest.fixture
def fake_registry(monkeypatch):
    reg = gallery.registered()
    monkeypatch.setitem(reg, "fake-good", fake_experiment("fake-good", GOOD))
    monkeypatch.setitem(reg, "fake-bad", fake_experiment("fake-bad", BAD))


def test_reproduce_exits_1_when_a_row_fails(fake_registry, tmp_path):
    runner = CliRunner()
    r = runner.invoke(app, ["reproduce", "fake-good", "--quick", "--out", str(tmp_path / "g")])
    assert r.exit_code == 0, r.output
    r = runner.invoke(app, ["reproduce", "fake-good", "fake-bad", "--out", str(tmp_path / "g")])
    assert r.exit_code == 1
    rows = parse((tmp_path / "g" / "index.html").read_text()).tables["results"]
    assert [x[0] for x in rows[1:]] == ["fake-good", "fake-bad", "fake-bad"]


def test_reproduce_prints_the_table_literally(monkeypatch, tmp_path):
    reg = gallery.registered()
    markup = [dict(quantity="[bold]x[/bold] :100:", published="1", error=0.0, tolerance=TEN)]
    monkeypatch.setitem(reg, "fake-markup", fake_experiment("fake-markup", markup))
    r = CliRunner().invoke(app, ["reproduce", "fake-markup", "--out", str(tmp_path)])
    assert "[bold]x[/bold] :100:" in r.stdout


def test_reproduce_one_quick_experiment_writes_the_gallery(cli, tmp_path):
    p = cli("reproduce", "seed003", "--quick", "--out", str(tmp_path / "out"))
    assert p.returncode == 0, p.stdout + p.stderr
    assert "seed003" in p.stdout and "pass" in p.stdout and "gallery:" in p.stdout
    page = parse((tmp_path / "out" / "index.html").read_text())
    rows = page.tables["results"][1:]
    assert len(rows) == 12 and all(r[0] == "seed003" and r[-1] == "pass" for r in rows)
    assert page.images == 1
    # The same rows for scripts, with the page's quantities and statuses.
    data = json.loads((tmp_path / "out" / "rows.json").read_text())
    assert len(data) == 12
    assert {d["experiment"] for d in data} == {"seed003"} and {d["status"] for d in data} == {"pass"}
    assert [d["quantity"] for d in data] == [r[2] for r in rows]
    first = data[0]
    assert set(first) >= {"experiment", "quantity", "published", "simulated", "unit", "error", "tolerance", "status",
                          "reason"}
    assert isinstance(first["simulated"], float) and first["tolerance"] == "±10%"


def test_reproduce_unknown_name_and_list(cli, tmp_path):
    p = cli("reproduce", "nope", "--out", str(tmp_path))
    assert p.returncode == 2 and p.stderr.count("\n") == 1 and "seed002" in p.stderr
    p = cli("reproduce", "--list")
    assert p.returncode == 0 and "seed004" in p.stdout and "quick:" in p.stdout


# ---- ssdlab report ------------------------------------------------------------------------

@pytest.fixture(scope="module")
def run_json(tmp_path_factory):
    import ssdlab

    r = ssdlab.run("[w]\ndirect=1\nrw=randrw\nbs=4k\niodepth=8\nruntime=0.3\ntime_based\n",
                   profile="samsung-970-evo-plus-1tb", interval="50ms")
    path = tmp_path_factory.mktemp("report") / "run.json"
    path.write_text(json.dumps(r.to_fio_json()))
    return path


def test_time_series_carry_channels_and_the_slc_cache(run_json):
    ts = json.loads(run_json.read_text())["ssdlab"]["timeseries"]
    assert "channel_utilization_0" in ts[0] and "channel_utilization_7" in ts[0]
    assert all(0 <= r["channel_utilization_0"] <= 1 for r in ts)
    assert ts[-1]["slc_used_bytes"] > 0 and ts[-1]["slc_budget_bytes"] > 0


def test_report_page_holds_the_tables(run_json, tmp_path):
    out = tmp_path / "r.html"
    r = CliRunner().invoke(app, ["report", str(run_json), "-o", str(out)])
    assert r.exit_code == 0, r.output
    p = parse(out.read_text())
    fio = p.tables["fio"]
    assert [x[:2] for x in fio[1:]] == [["w", "read"], ["w", "write"]]
    assert p.tables["percentiles"][0][:4] == ["job", "dir", "p1", "p50"]
    assert [x[0] for x in p.tables["iostat"][1:]] == ["nvme0n1"]
    internal = dict(row for row in p.tables["internal"][1:])
    assert internal["write amplification (WAF)"].count(".") == 1
    assert "disk-util" in p.tables and "samples" in p.tables
    assert p.images >= 7  # channels over the run, throughput, IOPS, latency, utilisation, WAF, SLC


def test_report_shows_iops_and_latency_over_time(run_json, tmp_path):
    """The sampled run's IOPS and latency per interval are figures of their own, from the
    timeseries' read/write IOPS and iostat's r_await/w_await."""
    from ssdlab.htmlreport import render

    data = json.loads(run_json.read_text())
    text = render(data)
    for name, title in (("iops", "host IOPS"), ("latency", "mean latency per interval")):
        at = text.index(f'<figure id="over-time-{name}"><img alt="{title}')
        assert text[at:].split(">", 2)[1].count("data:image/png;base64,") == 1
    # Without the IOPS and await columns, neither figure is drawn.
    ts = data["ssdlab"]["timeseries"]
    data["ssdlab"]["timeseries"] = [{k: v for k, v in r.items() if not k.endswith(("_iops", "_await"))} for r in ts]
    bare = render(data)
    assert 'id="over-time-iops"' not in bare and 'id="over-time-latency"' not in bare


def test_report_shows_device_quantities_by_name_and_shares_as_percentages(run_json):
    from ssdlab.htmlreport import quantity, render

    assert quantity("internal_utilization", 0.1298) == ("dies busy (mean over the dies)", "13.0 %")
    assert quantity("over_provisioning", 0.07349) == ("over-provisioning", "7.3 %")
    assert quantity("waf", 1.0) == ("write amplification (WAF)", "1.000")
    assert quantity("gc_relocated_bytes", 3 * 2**20) == ("moved by garbage collection", "3 MiB")
    # A quantity the report has no name for is named from its key, by its unit.
    assert quantity("stripe_waits", 12) == ("stripe waits", "12")
    assert quantity("rebuild_started_s", 1.5) == ("rebuild started (s)", "1.5")
    assert quantity("cache_dirty_bytes", 1024) == ("cache dirty", "1 KiB")
    p = parse(render(json.loads(run_json.read_text())))
    names = [row[0] for row in p.tables["internal"][1:]]
    assert not [n for n in names if "_" in n], names
    values = [row[1] for row in p.tables["internal"][1:]]
    # No share is printed as a bare fraction: the dies' and the controller's are percentages.
    assert dict(zip(names, values))["controller busy"].endswith(" %")
    assert p.tables["samples"][0][:3] == ["time (s)", "read (MB/s)", "write (MB/s)"]


@pytest.mark.parametrize("n, text", [(1, "1st"), (2, "2nd"), (3, "3rd"), (4, "4th"), (11, "11th"), (12, "12th"),
                                     (13, "13th"), (21, "21st"), (22, "22nd"), (23, "23rd"), (101, "101st"),
                                     (111, "111th"), (112, "112th")])
def test_ordinals(n, text):
    from ssdlab.pages import ordinal

    assert ordinal(n) == text


def test_report_says_which_samples_it_lists_in_english(run_json):
    from ssdlab.htmlreport import render

    data = json.loads(run_json.read_text())
    ts = data["ssdlab"]["timeseries"]
    data["ssdlab"]["timeseries"] = (ts * (90 // len(ts) + 1))[:90]  # 90 samples: every 2nd of them listed
    assert "samples (90, every 2nd shown)" in render(data)


def test_user_text_is_escaped_on_the_report_and_the_gallery(run_json):
    from ssdlab.htmlreport import render

    evil = "<script>alert(1)</script>"
    data = json.loads(run_json.read_text())
    data["jobs"][0]["jobname"] = evil
    data["ssdlab"]["warnings"] = [f"a warning with {evil}"]
    text = render(data, source=f"{evil}.json")
    assert "<script>" not in text and "&lt;script&gt;alert(1)&lt;/script&gt;" in text
    assert parse(text).tables["fio"][1][0] == evil  # the browser shows the text as written
    res = gallery.run_experiment(fake_experiment(evil, [dict(GOOD[0], quantity=evil, evidence=f'"{evil}"')]),
                                 quick=True)
    res = res.model_copy(update={"notes": [evil], "figures": [Figure(caption=evil, png=b"\x89PNG fake")]})
    page = gallery.page([res], quick=True)
    assert "<script>" not in page and "&lt;script&gt;" in page
    assert 'title="&#34;&lt;script&gt;' in page  # an attribute's quotes are escaped too


def test_a_rebuilding_arrays_report_plots_and_lists_the_rebuild(tmp_path):
    import ssdlab

    drives = "".join(f'[[drive]]\nname = "sd{c}"\nprofile = "samsung-850-pro"\nscale = 0.02\n' for c in "abcd")
    system = tmp_path / "s.toml"
    system.write_text(drives + '[[array]]\nname = "md0"\nlevel = 5\nchunk = "64k"\nmembers = ["sda", "sdb", "sdc"]\n'
                      'spares = ["sdd"]\nfail = [{ member = "sda", at = 0 }]\n')
    r = ssdlab.run("[w]\nfilename=/dev/md0\ndirect=1\nrw=randread\nbs=64k\niodepth=4\nruntime=0.4\ntime_based\n",
                   system=system, interval="100ms")
    path, out = tmp_path / "run.json", tmp_path / "r.html"
    path.write_text(json.dumps(r.to_fio_json()))
    res = CliRunner().invoke(app, ["report", str(path), "-o", str(out)])
    assert res.exit_code == 0, res.output
    p = parse(out.read_text())
    header = p.tables["samples"][0]
    assert "rebuild in sync" in header and "rebuild rate (MB/s)" in header
    # One figure more than the same series without the rebuild's columns: its progress.
    from ssdlab.htmlreport import _series

    ss = json.loads(path.read_text())["ssdlab"]
    bare = {**ss, "timeseries": [{k: v for k, v in row.items() if not k.startswith("rebuild_")}
                                 for row in ss["timeseries"]]}
    ids = [f["id"] for f in _series(ss)["figures"]]
    assert sorted(ids) == sorted([f["id"] for f in _series(bare)["figures"]] + ["over-time-rebuild"])


@pytest.mark.parametrize("content, expect", [
    (None, "no such file"),
    ("{", "not valid JSON"),
    ('{"a": 1}', 'no "jobs" list'),
    ('{"jobs": [1]}', 'jobs[0]: expected an object, got 1'),
])
def test_report_input_errors_are_one_line(cli, tmp_path, content, expect):
    path = tmp_path / "in.json"
    if content is not None:
        path.write_text(content)
    p = cli("report", str(path), "-o", str(tmp_path / "o.html"))
    assert p.returncode == 2 and expect in p.stderr and p.stderr.count("\n") == 1, p.stderr
    assert "Traceback" not in p.stderr


def test_seed004_judges_the_waf_under_load_above_idle_per_engine():
    import pandas as pd

    from ssdlab.experiments.catalog import _seed004_waf_trends

    def waf(case, published, simulated):
        return {"case": case, "quantity": "rebuilt_drive_waf", "published": published, "simulated": simulated}

    table = pd.DataFrame([waf("md-idle", 1.2, 1.00), waf("md-load", 1.58, 1.13),
                          waf("streaming-idle", 1.02, 1.00), waf("streaming-load", 1.21, 0.99),
                          {"case": "md-load", "quantity": "rebuild_rate", "published": 10.5, "simulated": 2.6}])
    rows = {r.case: r for r in _seed004_waf_trends(table)}
    assert rows["md"].status == Status.passed and "1.130 under load vs 1.000 idle" in rows["md"].evidence
    assert rows["streaming"].status == Status.failed and rows["streaming"].published == "trend (1.21 > 1.02)"
    assert _seed004_waf_trends(table[table["case"] != "md-idle"])[0].case == "streaming"


# ---- what the gallery's figures and sections say ----------------------------------------------

def test_a_one_sided_bound_says_so_on_its_bar_and_bars_are_coloured_by_their_bound():
    from matplotlib.colors import to_hex

    from ssdlab.experiments.catalog import INSIDE, OUTSIDE, UNJUDGED, error_bars_figure

    rows = [row(case="md-load", quantity="rebuild time", published=">= 1608", unit="h", error=309.5,
                tolerance=Tolerance.at_least(15.0, "lower bound")),
            row(case="md-load", quantity="host write rate", published="<= 0.045", unit="GB/s", error=1572.7,
                tolerance=Tolerance.at_most(15.0, "upper bound")),
            row(case="md-idle", quantity="WAF", published="1.2", error=-16.7, tolerance=Tolerance.within(15.0, "x")),
            row(case="quick", quantity="rate", published="5", error=3.0, tolerance=TEN, skip="not judged: x")]
    fig = error_bars_figure(rows)
    ax = fig.axes[0]
    texts = [t.get_text() for t in ax.texts]
    assert "+309.5 %  passes: one-sided bound: ≥ 1608 h (error ≥ -15 %)" in texts
    assert "+1572.7 %  fails: one-sided bound: ≤ 0.045 GB/s (error ≤ +15 %)" in texts
    assert "-16.7 %  fails: within ±15%" in texts
    assert "+3.0 %  not-judged: within ±10%" in texts
    # The bars (drawn over each row's grey tolerance band), in row order.
    bars = [to_hex(p.get_facecolor()) for p in ax.patches if to_hex(p.get_facecolor()) != "#e8e8e8"]
    assert bars == [INSIDE, OUTSIDE, OUTSIDE, UNJUDGED]
    # The errors beyond the axis are drawn at its edge.
    assert max(abs(p.get_width()) for p in ax.patches if to_hex(p.get_facecolor()) == OUTSIDE) == 200
    from ssdlab.plotting import pyplot

    pyplot().close(fig)


def test_the_gallery_sections_say_why_with_the_evidence():
    rows = [dict(case="figure 2", quantity="rises", published="trend", tolerance=Tolerance.holds("t"), holds=True,
                 evidence="121 -> 1200 MB/s"),
            dict(GOOD[0]), dict(case="q", quantity="dips", published="1", error=3.0, tolerance=TEN, skip="no dips")]
    res = gallery.run_experiment(fake_experiment("x", rows), quick=True)
    details = parse(gallery.page([res], quick=True)).tables["details"]
    assert details[0] == ["case", "quantity", "status", "why", "tolerance reason"]
    why = [d[3] for d in details[1:]]
    assert why == ["trend holds: 121 -> 1200 MB/s", "error +5.0 %: inside ±10%", "no dips"]


def test_log_axes_read_as_plain_numbers():
    from ssdlab.plotting import finish, pyplot

    plt = pyplot()
    fig, (a, b) = plt.subplots(1, 2)
    a.plot([1.5, 5], [1, 2])  # less than a decade: matplotlib labels its ticks 2×10^0, 3×10^0 ...
    a.set_xscale("log")
    b.plot([1, 2], [16, 1024])
    b.set_yscale("log")
    finish(fig)
    fig.canvas.draw()
    labels = [t.get_text() for ax, get in ((a, a.get_xticklabels), (b, b.get_yticklabels))
              for minor in (False, True) for t in get(minor=minor)]
    plt.close(fig)
    shown = [x for x in labels if x]
    assert shown and not [x for x in shown if "times" in x or "^" in x or "$" in x], shown
    assert {"2", "3", "100", "1,000"} <= set(shown)


def test_from_zero_leaves_room_above_the_highest_line():
    from ssdlab.plotting import from_zero, pyplot

    plt = pyplot()
    fig, ax = plt.subplots()
    ax.plot([1, 2, 3], [1180, 1200, 1200])
    from_zero(ax, headroom=0.1)
    assert ax.get_ylim() == pytest.approx((0, 1320))
    plt.close(fig)


def test_the_pages_templates_ship_in_the_wheel():
    """Every template is package data the wheel declares (maturin packs the files under
    python/ssdlab today anyway; the declaration keeps them if that changes), and jinja2 a
    declared dependency. Checked by hand as well: ``pip wheel .`` holds
    ssdlab/templates/*.html, and a report renders from the wheel installed in a fresh venv."""
    import fnmatch
    import tomllib
    from pathlib import Path

    import ssdlab

    root = Path(__file__).resolve().parents[2]
    project = tomllib.loads((root / "pyproject.toml").read_text())
    assert any(d.lower().startswith("jinja2") for d in project["project"]["dependencies"])
    patterns = [i["path"] for i in project["tool"]["maturin"]["include"] if i.get("format") == "wheel"]
    # The sources' templates are declared; the installed package (a wheel, when installed as
    # the README does, not editable) holds every one of them.
    templates = sorted((root / "python" / "ssdlab" / "templates").glob("*"))
    assert {t.name for t in templates} >= {"base.html", "macros.html", "report.html", "filereport.html", "gallery.html"}
    for t in templates:
        rel = t.relative_to(root).as_posix()
        assert any(fnmatch.fnmatch(rel, p) for p in patterns), f"{rel} is not in [tool.maturin] include"
    installed = {t.name for t in (Path(ssdlab.__file__).parent / "templates").glob("*")}
    assert installed >= {t.name for t in templates}, f"the installed package lacks {set(t.name for t in templates) - installed}"


def test_seed001s_figures_keep_equal_lines_apart_and_off_the_frame():
    """Figure 2's SSD counts and figure 3's queue depths give the same rates: each series has
    a look of its own (the first wide and hollow under the others), the axes leave room above
    the highest line, and the x axes are ticked at the points measured, as plain numbers."""
    import pandas as pd

    from ssdlab.experiments.seed001 import figure
    from ssdlab.plotting import finish, pyplot

    def frame(x, xs, series, values, rate):
        return pd.DataFrame([{x: v, series: s, "mbps": rate} for s in values for v in xs])

    d = {"read": frame("ncq", [1, 4, 16, 64], "request_kib", [8, 128], 1200.0),
         "read_stripe": frame("stripe_kib", [16, 64, 256, 1024], "ssds", [3, 6], 1200.0),
         "write": frame("request_kib", [8, 32, 256], "ncq", [1, 16], 273.0),
         "write_stripe": frame("stripe_kib", [16, 1024], "ssds", [3, 6], 460.0)}
    fig = figure(d)
    finish(fig)
    fig.canvas.draw()
    for ax in fig.axes:
        looks = [(ln.get_linestyle(), ln.get_marker(), ln.get_linewidth()) for ln in ax.lines]
        assert len(set(looks)) == len(looks) == 2, looks
        top = max(max(ln.get_ydata()) for ln in ax.lines)
        assert ax.get_ylim()[0] == 0 and ax.get_ylim()[1] >= 1.1 * top
        xs = sorted({x for ln in ax.lines for x in ln.get_xdata()})
        assert [t.get_text() for t in ax.get_xticklabels()] == [f"{x:,}" for x in xs]
    pyplot().close(fig)


def test_seed004_simulates_the_drives_at_the_scale_asked(monkeypatch) -> None:
    from ssdlab.experiments import seed004

    seen = {}
    monkeypatch.setattr(seed004, "rebuild", lambda sysd, **kw: seen.setdefault("system", sysd))
    seed004.simulate_case("md-idle")
    default = seen.pop("system")
    seed004.simulate_case("md-idle", scale=1.0)
    full = seen.pop("system")
    # The profile's own 1/64 by default; the drives at full size when asked.
    scales = lambda s: [d.scale for d in s.drives]  # noqa: E731
    assert scales(default) == [1 / 64] * 10 and scales(full) == [1.0] * 10
    assert full.drives[0].core["capacity_bytes"] >= 63 * default.drives[0].core["capacity_bytes"]


def test_seed004_refuses_a_scale_outside_its_range_in_one_line(capsys) -> None:
    from ssdlab.experiments import seed004

    with pytest.raises(SystemExit) as e:
        seed004.main(["--scale", "2"])
    err = capsys.readouterr().err.strip().splitlines()
    assert e.value.code == 2 and err[-1].endswith("error: --scale 2: expected a share of the flash above 0 and at most 1")
