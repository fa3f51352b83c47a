"""Rebuilds onto a spare: the `ssdlab rebuild` command, its extrapolation, the data-loss
exposure formulas, and seed 004's idle rebuilds (md within its calibration, the streaming
engine as a prediction)."""

import json
import math

import pytest
from typer.testing import CliRunner

import ssdlab
from ssdlab.cli import app
from ssdlab.experiments import seed004
from ssdlab.analysis.rebuild import rebuild
from ssdlab.analysis.reliability import exposure, p_ure


def test_rebuild_json_has_the_promised_keys_and_a_waf():
    out = CliRunner().invoke(app, ["rebuild", "--raid", "5", "--drives", "4", "--scale", "0.02",
                                   "--sample", "1GiB", "--json"])
    assert out.exit_code == 0, out.output
    r = json.loads(out.stdout)
    for key in ("rebuild_time_s", "rebuild_rate_bytes", "rebuilt_drive_waf", "exposure", "host_read_bw_bytes"):
        assert key in r
    # md's default sync_speed_max (200,000 KiB/s) holds the idle rebuild of 850 PROs (md
    # sleeps half a second whenever it runs faster, so it stays a little under).
    assert 0.9 * 204.8e6 < r["rebuild_rate_bytes"] <= 1.01 * 204.8e6
    assert r["extrapolated"] and r["simulated_bytes"] == 1 << 30
    assert r["rebuild_time_s"] == pytest.approx(r["member_bytes"] / r["rebuild_rate_bytes"], rel=1e-9)
    assert 0.99 < r["rebuilt_drive_waf"] < 1.05
    # The exposure is that of this rebuild's window, at the documented default MTTF and URE rate.
    assert r["exposure"] == exposure(5, 4, r["member_bytes"], r["rebuild_time_s"] / 3600,
                                     mttf_hours=2e6, ure_bits=1e17).to_dict()
    assert (r["mttf_hours"], r["ure_bits"]) == (2e6, 1e17)


def test_rebuild_needs_a_spare_and_redundancy():
    no_spare = CliRunner().invoke(app, ["rebuild", "--raid", "5", "--drives", "4", "--spares", "0"])
    assert "has no spare to rebuild onto" in no_spare.output and no_spare.exit_code == 2
    r0 = CliRunner().invoke(app, ["rebuild", "--raid", "0", "--drives", "4"])
    assert "raid0 has no redundancy" in r0.output
    bad = CliRunner().invoke(app, ["rebuild", "--raid", "5", "--drives", "4", "--fail", "sdq"])
    assert "--fail sdq: not a member of md0" in bad.output


def test_a_host_job_during_the_rebuild_is_served_and_slows_it():
    sysd = ssdlab.raid("samsung-850-pro", level=5, drives=4, chunk="64k", spares=1, scale=0.02,
                       engine_set={"sync_speed_max": "10GB/s"})
    idle = rebuild(sysd, sample=256 << 20)
    # libaio, so that the 16 are in flight together (fio's default engine, psync, has one).
    job = "[w]\ndirect=1\nrw=randwrite\nbs=64k\nioengine=libaio\niodepth=16\nsize=2g\ntime_based\nruntime=3600\n"
    busy = rebuild(sysd, sample=256 << 20, host_job=job)
    assert busy.host_write_bw_bytes > 10e6
    assert busy.rebuild_time_s > 1.5 * idle.rebuild_time_s


def test_a_short_md_sample_is_extrapolated_at_its_speed_limit():
    """md's first seconds run over sync_speed_max (its speed check adds a second to the time);
    a sample that short extrapolated as it ran was 30 % short of the full rebuild."""
    sysd = ssdlab.raid("samsung-850-pro", level=5, drives=4, spares=1, chunk="512k", scale=0.001,
                       precondition="sequential")
    full = rebuild(sysd)
    short = rebuild(sysd, sample=16 << 20)
    assert short.simulated_bytes == 16 << 20 and full.simulated_bytes > 50 * short.simulated_bytes
    assert short.rebuild_rate_bytes == 204_800_000
    assert short.rebuild_time_s == pytest.approx(full.rebuild_time_s, rel=0.05)
    assert any("over md's sync_speed_max" in w for w in short.warnings)
    job = "[r]\nfilename=/dev/md0\nrw=randread\nbs=64k\niodepth=4\nrate=50m\ntime_based\nruntime=0.5\n"
    loaded = rebuild(sysd, host_job=job, sample=256 << 20)
    assert any("the host job ended 0.5 s into the" in w for w in loaded.warnings), loaded.warnings
    assert not any("the host job started" in w for w in loaded.warnings)
    late = rebuild(sysd, host_job=job.replace("runtime=0.5", "runtime=1\nstartdelay=0.4"), sample=256 << 20)
    assert any("the host job started 0.4 s into the" in w for w in late.warnings), late.warnings
    assert not any("sync_speed_max" in w for w in full.warnings)


def test_the_exposure_formulas():
    # RAID 5 of 9: 1/MTTDL = N(N-1) MTTR / MTTF^2 + N P_URE / MTTF.
    e = exposure(5, 9, 61.44e12, 53.67, mttf_hours=2e6, ure_bits=1e17)
    ure = 1 - math.exp(-8 * 61.44e12 * 8 / 1e17)
    assert e.p_ure == pytest.approx(ure)
    assert e.mttdl_hours == pytest.approx(1 / (9 * 8 * 53.67 / 4e12 + 9 * ure / 2e6))
    assert e.p_second_failure == pytest.approx(1 - math.exp(-8 * 53.67 / 2e6))
    # RAID 6 outlives RAID 5 by orders of magnitude for the same window.
    assert exposure(6, 9, 61.44e12, 53.67).mttdl_hours > 1e3 * e.mttdl_hours
    assert p_ure(0) == 0
    with pytest.raises(ValueError):
        exposure(0, 4, 1e12, 1.0)


@pytest.mark.parametrize("case", ["md-idle", "streaming-idle"])
def test_seed004_idle_rebuild_times_within_15_percent(case):
    table = seed004.reproduce([case], samples={case: 1 << 30})
    t = table[table.quantity == "rebuild_time_h"].iloc[0]
    assert abs(t.error_pct) < 15, t.to_dict()


def test_the_rebuilt_drive_reports_like_any_member():
    sysd = ssdlab.raid("samsung-850-pro", level=1, drives=2, chunk="64k", spares=1, scale=0.02)
    r = rebuild(sysd, sample=64 << 20)
    run = r.run
    assert "sdc" in run.all_device_names
    assert run.internal("sdc")["host_bytes_written"] == 64 << 20
    assert run.iostat("sdc")["w/s"] > 0


def test_bad_exposure_options_are_refused_before_simulating():
    out = CliRunner().invoke(app, ["rebuild", "--raid", "5", "--drives", "4", "--ure-bits", "0"])
    assert out.exit_code == 2 and "--mttf-hours and --ure-bits must be positive" in out.output
    out = CliRunner().invoke(app, ["run", "--chunk", "64k"])
    assert out.exit_code == 2 and "add --raid LEVEL" in out.output


def test_mirrors_count_an_unrecoverable_read_as_raid5_does():
    f, t, b, u = 1e5, 10.0, 1e12, 1e15
    ure = p_ure(b, u)
    # Two copies: the rebuild reads the only other one.
    assert exposure(1, 2, b, t, mttf_hours=f, ure_bits=u).mttdl_hours == pytest.approx(1 / (2 * t / f**2 + 2 * ure / f))
    # RAID 10 of 4 (pairs) and of 5 (md's near layout: two neighbours hold a member's copies).
    e4 = exposure(10, 4, b, t, mttf_hours=f, ure_bits=u)
    assert e4.mttdl_hours == pytest.approx(1 / (4 * t / f**2 + 4 * ure / f))
    assert e4.p_second_failure == pytest.approx(1 - math.exp(-t / f))
    e5 = exposure(10, 5, b, t, mttf_hours=f, ure_bits=u)
    assert e5.mttdl_hours == pytest.approx(1 / (5 * 2 * t / f**2 + 5 * ure / f))
    assert e5.p_second_failure == pytest.approx(1 - math.exp(-2 * t / f))
    # A RAID 10 outlives a RAID 5 of as many drives, by less than a factor of three here.
    r5 = exposure(5, 4, b, t, mttf_hours=f, ure_bits=u).mttdl_hours
    assert r5 < e4.mttdl_hours < 3 * r5


def test_raid1_exposure_with_three_copies():
    e = exposure(1, 3, 1e12, 10.0, mttf_hours=1e5, ure_bits=1e15)
    assert e.mttdl_hours == pytest.approx(1e15 / (6 * 100))
    assert e.p_ure == pytest.approx(p_ure(1e12, 1e15)), "a mirror rebuild reads one copy"


def test_a_long_rebuild_is_sampled_by_default_after_a_timed_pilot(monkeypatch):
    from ssdlab.analysis import rebuild as rebuild_module
    from ssdlab.analysis.rebuild import SAMPLE_TARGET_S, plan_sample

    sysd = ssdlab.raid("samsung-850-pro", level=5, drives=4, chunk="512k", spares=1, scale=0.1)
    whole = min(m.core["capacity_bytes"] for m in sysd.arrays[0].members) // (512 << 10) * (512 << 10)
    asked = []

    def pilot(limit):
        asked.append(limit)
        return "pilot result"

    def clock_taking(seconds):
        ticks = iter([100.0, 100.0 + seconds])
        return lambda: next(ticks)

    # A pilot of 1/200 that took 2 s: 400 s for the whole, past the budget: a sample of about
    # a minute's worth, whole chunks.
    plan = plan_sample(sysd, pilot, clock=clock_taking(2.0))
    assert asked == [plan.pilot_bytes] and plan.pilot_bytes == max(256 << 20, whole // 200) // (512 << 10) * (512 << 10)
    assert plan.estimate_s == pytest.approx(2.0 * whole / plan.pilot_bytes)
    assert plan.sample == int(plan.pilot_bytes * SAMPLE_TARGET_S / 2.0) // (512 << 10) * (512 << 10)
    assert plan.done is None
    # A quick pilot: the whole rebuild is run.
    plan = plan_sample(sysd, pilot, clock=clock_taking(0.1))
    assert plan.sample is None and plan.done is None and plan.estimate_s < 120
    # A pilot slower than the sample's aim: the pilot is the sample, not simulated again.
    plan = plan_sample(sysd, pilot, clock=clock_taking(2 * SAMPLE_TARGET_S))
    assert plan.sample == plan.pilot_bytes and plan.done == "pilot result"
    # A replacement no larger than the pilot: the pilot was the rebuild.
    monkeypatch.setattr(rebuild_module, "PILOT_MIN_BYTES", 2 * whole)
    plan = plan_sample(sysd, pilot, clock=clock_taking(300.0))
    assert asked[-1] == whole
    assert plan.sample is None and plan.done == "pilot result"


def test_rebuild_sample_all_and_the_default_on_a_small_array(monkeypatch):
    sysd = ssdlab.raid("samsung-850-pro", level=5, drives=4, spares=1, scale=0.0005)
    whole = min(m.core["capacity_bytes"] for m in sysd.arrays[0].members) // (512 << 10) * (512 << 10)
    for extra in (["--sample", "all"], []):
        out = CliRunner().invoke(app, ["rebuild", "--raid", "5", "--drives", "4", "--scale", "0.0005", "--json",
                                       *extra])
        assert out.exit_code == 0, out.output
        r = json.loads(out.stdout)
        # all of the simulated replacement rebuilt (extrapolated only to the drive's full size)
        assert r["simulated_bytes"] == whole and "would take about" not in out.output
    # Were it long (here: any rebuild is), the default rebuilds a sample and says so.
    from ssdlab.analysis import rebuild as rebuild_module

    monkeypatch.setattr(rebuild_module, "WHOLE_REBUILD_BUDGET_S", 0.0)
    monkeypatch.setattr(rebuild_module, "SAMPLE_TARGET_S", 1e-9)
    out = CliRunner().invoke(app, ["rebuild", "--raid", "5", "--drives", "4", "--scale", "0.0005"])
    assert out.exit_code == 0, out.output
    assert "would take about" in out.output and "--sample all rebuilds it whole" in out.output
    assert "(extrapolated from 256.0MiB simulated)" in out.output  # the pilot's size: the least sample
