"""The thermal experiment's lumped-model fit, and the 970 PRO fanless onset it implies."""

from __future__ import annotations

import math

import pytest

import ssdlab
from ssdlab.config import load_profile
from ssdlab.experiments.thermal import TPU_CASE_AIR_C, TPU_ONSET_S, fit_resistance, onset_time

LUMP = dict(c_j_per_k=8.0, idle_w=1.0, load_w=6.0, ambient_c=35.0, throttle_c=80.0)


def test_onset_is_infinite_when_the_drive_settles_below_the_throttle_point():
    assert onset_time(7.0, **LUMP) == math.inf  # 35 + 6 x 7 = 77 C < 80 C
    assert onset_time(8.0, **LUMP) < onset_time(7.6, **LUMP)  # worse cooling, sooner


@pytest.mark.parametrize("target", [60.0, 150.0, 600.0])
def test_fit_inverts_the_onset(target):
    r = fit_resistance(target, **LUMP)
    assert onset_time(r, **LUMP) == pytest.approx(target, rel=1e-6)


def test_fanless_970pro_throttles_when_the_fit_says():
    prof = load_profile("samsung-970-pro-512")[0].thermal
    lump = dict(c_j_per_k=prof.heat_capacity, idle_w=prof.idle_power, load_w=prof.active_power,
                ambient_c=TPU_CASE_AIR_C, throttle_c=prof.throttle_temperature)
    r_fit = fit_resistance(TPU_ONSET_S, **lump)
    job = "[w]\ndirect=1\nrw=write\nbs=1M\niodepth=32\nioengine=libaio\ntime_based\nruntime=175\n"
    r = ssdlab.run(job, profile="samsung-970-pro-512", scale=0.25, interval="1s",
                   profile_set={"thermal.thermal_resistance": str(r_fit),
                                "thermal.ambient_temperature": str(TPU_CASE_AIR_C)})
    ts = r.timeseries_table()
    hot = ts[ts.throttled_fraction > 0]
    assert len(hot), "the fitted cooling must make the drive throttle"
    # The simulated dies are not busy 100 % of the time, so it heats a little slower than the
    # all-dies-busy lump: onset at or a little after the fitted 150 s.
    assert 148 <= hot.t_s.iloc[0] <= 170
    assert r.internal()["max_temperature_c"] < prof.throttle_temperature + 1
