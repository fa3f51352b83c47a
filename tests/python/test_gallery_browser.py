"""The gallery and a run report as a browser shows them: headless Chromium renders each page
to a screenshot (not blank) and dumps its DOM (the tables are there). Skips without Chromium,
except under CI (CI=true), where Chromium is installed by .ci/run and its absence fails."""

import json
import os
import shutil
import subprocess

import pytest

from ssdlab import gallery

BROWSERS = ("chromium", "chromium-browser", "google-chrome")


def browser() -> str:
    for name in BROWSERS:
        path = shutil.which(name)
        if path:
            return path
    if os.environ.get("CI") == "true":
        pytest.fail("CI=true but no headless Chromium found (.ci/run installs Debian's chromium)")
    pytest.skip("Chromium is not installed (apt-get install chromium): browser rendering not checked")


def headless(exe: str, *args: str) -> subprocess.CompletedProcess:
    # --no-sandbox: CI runs as root, where Chromium's sandbox refuses to start.
    return subprocess.run([exe, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                           "--window-size=1280,1600", *args], capture_output=True, text=True, timeout=180)


def screenshot(exe, page, tmp_path):
    shot = tmp_path / "shot.png"
    p = headless(exe, f"--screenshot={shot}", page.as_uri())
    assert p.returncode == 0 and shot.is_file(), p.stderr[-2000:]
    return shot


def inked(png) -> float:
    """Share of the pixels that differ from the top-left one (0: one colour, blank)."""
    from matplotlib.image import imread

    pixels = imread(png)
    assert pixels.shape[0] > 100 and pixels.shape[1] > 100
    flat = pixels.reshape(-1, pixels.shape[-1])
    return float((flat != flat[0]).any(axis=1).mean())


def render(page, tmp_path):
    exe = browser()
    assert inked(screenshot(exe, page, tmp_path)) > 0.01, "the screenshot is (nearly) one colour"
    dom = headless(exe, "--dump-dom", page.as_uri())
    assert dom.returncode == 0, dom.stderr[-2000:]
    return dom.stdout


def test_the_gallery_renders_with_its_table(tmp_path):
    from test_gallery import BAD, GOOD, fake_experiment

    from ssdlab.gallery.core import Figure
    from ssdlab.plotting import pyplot

    plt = pyplot()
    fig, ax = plt.subplots()
    ax.plot([0, 1], [0, 1])
    png = gallery.core.figure_png(fig)
    results = [gallery.run_experiment(fake_experiment("good", GOOD), quick=True),
               gallery.run_experiment(fake_experiment("bad", BAD), quick=True).model_copy(
                   update={"figures": [Figure(caption="line", png=png)]})]
    page = tmp_path / "index.html"
    page.write_text(gallery.page(results, quick=True))
    dom = render(page, tmp_path)
    assert '<table id="results">' in dom
    assert dom.count('<tr class="pass">') == 2 and dom.count('<tr class="fail">') == 1
    assert "data:image/png;base64," in dom


def test_a_run_report_renders_with_its_tables(tmp_path):
    import ssdlab
    from ssdlab.htmlreport import render as report

    r = ssdlab.run("[w]\ndirect=1\nrw=randwrite\nbs=4k\niodepth=4\nruntime=0.2\ntime_based\n", interval="50ms")
    page = tmp_path / "report.html"
    page.write_text(report(json.loads(json.dumps(r.to_fio_json())), source="run.json"))
    dom = render(page, tmp_path)
    for cls in ("fio", "percentiles", "iostat", "internal", "samples"):
        assert f'<table class="{cls}">' in dom, cls
    assert dom.count("<img") >= 6
    for name in ("throughput", "iops", "latency", "utilisation"):
        assert f'<figure id="over-time-{name}">' in dom, name


def test_a_blank_page_is_seen_as_blank(tmp_path):
    """The blank check can fail: an empty page's screenshot is one colour."""
    exe = browser()
    page = tmp_path / "blank.html"
    page.write_text("<!DOCTYPE html><html><body></body></html>")
    assert inked(screenshot(exe, page, tmp_path)) == 0.0
