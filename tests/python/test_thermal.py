"""Thermal model from Python: profile overrides, reported temperature and throttling, errors."""

from __future__ import annotations

import pytest

import ssdlab
from ssdlab.config import ProfileError, load_profile

JOB = "[w]\ndirect=1\nrw=write\nbs=1M\niodepth=32\nioengine=libaio\ntime_based\nruntime={runtime}\n"


def test_profile_set_overrides_a_key_and_says_so():
    prof, sources = load_profile("samsung-pm1725b-1.6tb", {"thermal.ambient_temperature": "25",
                                                            "ftl.gc_policy": "cost-benefit"})
    assert prof.thermal.ambient_temperature == 25.0
    assert prof.ftl.gc_policy == "cost-benefit"
    assert sources["thermal.ambient_temperature"] == "override: thermal.ambient_temperature=25"


@pytest.mark.parametrize("overrides, message", [
    ({"thermal.ambient": "30"}, "unknown key 'thermal.ambient'"),
    ({"thermal.throttle_level": "1.5"}, "thermal.throttle_level"),
    ({"thermal.resume_temperature": "90"}, "resume_temperature must be below throttle_temperature"),
    ({"thermal": "hot"}, "that is a section"),
    ({"capacity.x": "1"}, "'capacity' is a value, not a section"),
])
def test_bad_overrides_name_the_key(overrides, message):
    with pytest.raises(ProfileError, match="samsung-pm1725b-1.6tb") as e:
        load_profile("samsung-pm1725b-1.6tb", overrides)
    assert message in str(e.value)


def test_a_drive_without_a_thermal_model_needs_all_of_it():
    with pytest.raises(ProfileError, match=r"thermal.ambient_temperature=40: the profile has no \[thermal\] section to "
                                           r"change \(it needs idle_power, active_power"):
        load_profile("samsung-850-pro", {"thermal.ambient_temperature": "40"})


def test_a_hot_drive_throttles_to_its_level_and_reports_it():
    # Start above the throttle point (70 C): the first sensor reading throttles the drive, and
    # with tau = R C = 270 s it stays above the resume point (67 C) for the whole run.
    r = ssdlab.run(JOB.format(runtime=12), profile="samsung-pm1725b-1.6tb", scale=1 / 64, interval="1s",
                   profile_set={"thermal.start_temperature": "75"})
    i = r.internal()
    assert i["throttle_events"] == 1 and 10.5 < i["throttled_s"] < 12.5
    assert 70 < i["temperature_c"] < i["max_temperature_c"] <= 75
    ts = r.timeseries_table()
    slow = ts[ts.throttled_fraction == 1].write_bw_bytes.median()
    cool = ssdlab.run(JOB.format(runtime=4), profile="samsung-pm1725b-1.6tb", scale=1 / 64, interval="1s")
    assert cool.internal()["throttle_events"] == 0
    full = cool.timeseries_table().write_bw_bytes.iloc[1:].median()
    level = load_profile("samsung-pm1725b-1.6tb")[0].thermal.throttle_level
    assert slow / full == pytest.approx(level, rel=0.03)
    assert any("thermal model runs in real time" in w for w in r.warnings)


def test_drives_without_a_model_report_none():
    r = ssdlab.run(JOB.format(runtime=0.05), profile="samsung-850-pro")
    assert r.internal()["temperature_c"] is None


def test_cli_profile_set_reports_temperature_and_rejects_bad_input(cli, tmp_path):
    job = tmp_path / "w.fio"
    job.write_text(JOB.format(runtime=2))
    p = cli("run", str(job), "--profile", "samsung-970-pro-512", "--scale", "0.05",
            "--profile-set", "thermal.start_temperature=85")
    assert p.returncode == 0, p.stderr
    assert "temperature" in p.stdout and "throttled" in p.stdout
    p = cli("run", str(job), "--profile", "samsung-970-pro-512", "--profile-set", "thermal.heat_capacity=-1")
    assert p.returncode == 2 and "thermal.heat_capacity" in p.stderr and len(p.stderr.strip().splitlines()) == 1
    p = cli("run", str(job), "--profile-set", "nothing")
    assert p.returncode == 2 and "SECTION.KEY=VALUE" in p.stderr
