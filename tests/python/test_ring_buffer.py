"""Ring-buffer recorder with and without TRIM ahead (seed 002): the job files, the wrap model
and a quick simulation on 1/64 of a 970 PRO (sequential vs fragmented old data, TRIM 10 %)."""

import itertools
import math
from importlib import resources

import numpy as np
import pytest

from ssdlab.experiments import ring_buffer as rb
from ssdlab.experiments.gc_waf import desnoyers_waf
from ssdlab.fio import load_job_file, parse_job_text

JOBS = resources.files("ssdlab") / "data" / "jobs"
DRIVE = "samsung-970-pro-512"
SCALE = 1 / 64


def specs(jobset):
    return [j.model_dump() for j in jobset.jobs]


@pytest.mark.parametrize("device", [2**30, 32006885376, 100020080640])
def test_packaged_jobs_are_the_experiments_jobs(device):
    trim = load_job_file(JOBS / "ring-recorder-trim-ahead.fio", device_size=device)
    assert specs(trim) == specs(parse_job_text(rb.recorder_job(10, 1.25e9), device_size=device))
    plain = load_job_file(JOBS / "ring-recorder-no-trim.fio", device_size=device)
    assert specs(plain) == specs(parse_job_text(rb.recorder_job(0, 1.25e9), device_size=device))


def test_trim_ahead_layout():
    device = 32006885376
    jobs = {j.name: j for j in load_job_file(JOBS / "ring-recorder-trim-ahead.fio", device_size=device).jobs}
    window, writer, ahead, wrap = jobs["window"], jobs["recorder"], jobs["trim-ahead"], jobs["trim-wrap"]
    trim_bs = 16 * 2**20
    # The window is trimmed first; the writer and the trimmer start together after it.
    assert writer.start_after == [0] and ahead.start_after == [0] and window.start_after == []
    assert writer.region_offset == 0 and device - writer.region_size < 128 * 1024
    # [0, W) first, then [W, end) and [0, W) again: every byte of the drive once, plus W, but
    # for at most one trim block where the percentages round (size down, offset up, as fio).
    assert window.region_offset == 0 and wrap.region_offset == 0 and wrap.region_size == window.region_size
    assert abs(window.region_size - device // 10) < trim_bs
    assert 0 <= ahead.region_offset - window.region_size <= trim_bs
    assert 0 <= device - (ahead.region_offset + ahead.region_size) < trim_bs
    assert wrap.start_after == [0, 2]  # after trim-ahead (and the window's group)
    # Writer and trimmers at one byte rate: the window keeps its width while the drive keeps up.
    assert writer.rate_bytes[1] == ahead.rate_bytes[2] == wrap.rate_bytes[2] == 1_250_000_000
    assert window.rate_bytes == (0, 0, 0)


def test_job_arguments():
    with pytest.raises(ValueError, match="needs a rate"):
        rb.recorder_job(10, None)
    with pytest.raises(ValueError, match="whole percentage"):
        rb.recorder_job(2.5, 1e9)
    assert "rate" not in rb.recorder_job(0, None) and "trim" not in rb.recorder_job(0, None)


# ---- the model ----------------------------------------------------------------------------

@pytest.fixture(scope="module")
def flash():
    return rb.Flash.from_profile(DRIVE, SCALE)


def test_model_sequential_old_data_is_free(flash):
    m = rb.wrap_model(flash, 0, fragmented=False)
    assert np.allclose(m.waf, 1.0)
    assert np.allclose(m.rate, float(flash.write_rate(0.0)))
    # The 970 PRO's clean rate is its MLC program bandwidth, 16 dies x 2 planes x 2 x 16 KiB /
    # 477 us, less one erase (218.75 us at 1/64) per block of 32 x 2 x 4 IUs of 29.8 us each.
    nand = 16 * 2 * 2 * 16384 / 477e-6
    erase_share = 218.75 / (256 * 477 / 16)
    assert float(flash.write_rate(0.0)) == pytest.approx(nand / (1 + erase_share), rel=0.001)


def test_model_fragmented_wrap_starts_at_greedy_steady_state_and_ends_clean(flash):
    m = rb.wrap_model(flash, 0, fragmented=True, points=2000)
    assert m.waf.iloc[0] == pytest.approx(desnoyers_waf(flash.alpha), rel=0.01)
    assert m.waf.iloc[-1] < 1.01
    assert (np.diff(m.waf) <= 1e-9).all()  # the old data only dies
    assert (np.diff(m.rate) >= -1e-3).all()


def test_model_more_trim_less_waf(flash):
    target = rb.recorder_rate(DRIVE)
    for paced in (True, False):
        wafs = [rb.predict(flash, w, True, target, paced=paced)["waf"] for w in (0, 5, 10, 25, 50)]
        assert all(a > b for a, b in itertools.pairwise(wafs)), (paced, wafs)
    # Held at W, the window stays W; paced by time it widens when the writer falls behind.
    held = rb.wrap_model(flash, 10, True, target, paced=False)
    assert held.window.max() == pytest.approx(0.10)
    assert rb.predict(flash, 10, True, target)["max_window_pct"] > 20


def test_window_to_keep_up(flash):
    target = rb.recorder_rate(DRIVE)
    w = rb.window_to_keep_up(flash, target)
    assert 0 < w < 90
    at = rb.predict(flash, math.ceil(w), True, target, paced=False)
    below = rb.predict(flash, max(0, math.floor(w) - 2), True, target, paced=False)
    assert at["rate_min"] >= target * 0.999 > below["rate_min"]


# ---- simulated --------------------------------------------------------------------------

@pytest.fixture(scope="module")
def runs():
    return {r.scenario.key: r for r in rb.simulate([DRIVE], ["A", "B", "C10"], modes=("recorder",),
                                                   scale=SCALE, workers=2)}


def test_sequential_old_data_keeps_up(runs):
    a = runs["A"]
    assert a.error is None
    assert abs(a.metrics["short_pct"]) < 1.0
    assert a.metrics["waf"] == pytest.approx(1.0, abs=0.02)
    assert a.metrics["gc_copies"] < 0.001
    assert a.metrics["p99_ms"] < 1.0  # never queues: writes land in the buffer
    assert math.isnan(a.metrics["max_window_pct"])


def test_fragmented_old_data_without_trim_falls_behind(runs):
    b = runs["B"]
    assert b.error is None
    assert b.metrics["waf"] > 2.5 and b.metrics["gc_copies"] > 1.5
    assert b.metrics["short_pct"] > 50
    assert b.metrics["p99_ms"] > 5  # the queue is full
    # The model: greedy GC's steady state along the wrap (1/64 of the flash finds somewhat
    # emptier victims, docs/model.md, so the simulation sits a little below).
    assert b.metrics["waf"] == pytest.approx(b.prediction["waf"], rel=0.15)
    assert b.metrics["rate"] == pytest.approx(b.prediction["rate"], rel=0.20)


def test_trim_ahead_cuts_gc(runs):
    b, c = runs["B"], runs["C10"]
    assert c.error is None
    assert c.metrics["waf"] < b.metrics["waf"] / 2
    assert c.metrics["gc_copies"] < b.metrics["gc_copies"] / 5
    assert c.metrics["rate"] > 3 * b.metrics["rate"]
    assert c.metrics["waf"] == pytest.approx(c.prediction["waf"], rel=0.10)
    assert c.metrics["rate"] == pytest.approx(c.prediction["rate"], rel=0.10)
    # TRIM never overtakes the writer: after the window is cut, the lead is at least W.
    lead = c.timeseries.lead[c.timeseries.position > 0.01]
    assert lead.min() >= 0.10 - 16 * 2**20 / rb.Flash.from_profile(DRIVE, SCALE).capacity
    assert c.metrics["max_window_pct"] == pytest.approx(c.prediction["max_window_pct"], abs=8)
    assert abs(c.metrics["pad_pct"]) < 0.5


def test_table_and_plot(runs, tmp_path):
    table = rb.reproduce(runs=list(runs.values()))
    assert list(table.scenario) == ["A", "B", "C10"] and (table.status == "ok").all()
    assert (table.scale == SCALE).all() and table.wall_s.gt(0).all()
    b = table.set_index("scenario").loc["B"]
    assert b.waf_err_pct == pytest.approx(100 * (b.waf / b.waf_model - 1))
    path = tmp_path / "ring.png"
    rb.plot(list(runs.values()), path)
    assert path.stat().st_size > 10_000


def test_failures_are_reported_not_raised():
    r = rb.run_one("no-such-drive", rb.SCENARIOS["A"], "unthrottled", scale=SCALE)
    assert r.error.startswith("profile not available") and not r.metrics
    r = rb.run_one("no-such-drive", rb.SCENARIOS["A"], "recorder", scale=SCALE)
    assert r.error.startswith("no seed 002 recorder rate")
    assert rb.reproduce(runs=[r]).status.iloc[0] == r.error
