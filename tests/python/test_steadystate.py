"""fio's steady-state options in simulation: parsed, judged as fio judges them, the job
stopped where steady state is attained, and fio's ``steadystate`` JSON object written."""

from __future__ import annotations

import json
import shutil
import subprocess

import pytest

import ssdlab
from ssdlab.fio import FioJobError
from ssdlab.analysis.steadystate import _criterion

FIO = shutil.which("fio")

JOB = """
[ss]
ioengine=libaio
direct=1
rw=randwrite
bs=4k
iodepth=4
size=64m
time_based
runtime=20
ss={ss}
ss_dur=3s
ss_ramp=1s
"""


def _job(ss: str) -> dict:
    r = ssdlab.run(JOB.format(ss=ss), profile="samsung-850-pro", seed=1)
    return r.to_fio_json()["jobs"][0]


def test_attained_steady_state_stops_the_job_early():
    j = _job("iops:20%")
    ss = j["steadystate"]
    assert ss["attained"] == 1
    # ramp 1 s, then three 1 s samples fill the window: attained at 4 s, not 20 s
    assert j["job_runtime"] == 4000
    assert j["write"]["runtime"] == 4000
    assert len(ss["data"]["iops"]) == 3 and len(ss["data"]["bw"]) == 3
    iops = ss["data"]["iops"]
    mean = sum(iops) / 3
    assert ss["data"]["iops_mean"] == sum(iops) // 3
    assert ss["max_deviation"] == pytest.approx(max(abs(v - mean) for v in iops))
    assert float(ss["criterion"].rstrip("%")) < 20
    # the samples are the job's rate: about its IOPS over the run
    assert ss["data"]["iops_mean"] == pytest.approx(j["write"]["iops"], rel=0.1)


def test_unreachable_limit_runs_the_whole_runtime():
    j = _job("iops_slope:0")
    ss = j["steadystate"]
    assert ss["attained"] == 0
    assert j["job_runtime"] == 20000
    assert ss["ss"] == "iops_slope:0.000000"
    assert ss["max_deviation"] == 0.0
    assert len(ss["data"]["iops"]) == 3  # the last window


def test_criteria_as_fio_computes_them():
    # deviation: largest distance from the mean, as a share of it
    crit, dev, slope = _criterion([90, 100, 110], slope_mode=False, percent=True)
    assert (crit, dev, slope) == (pytest.approx(10.0), 10.0, 0.0)
    # slope: least squares over the sample index
    crit, dev, slope = _criterion([100, 110, 120, 130], slope_mode=True, percent=False)
    assert slope == pytest.approx(10.0) and crit == pytest.approx(10.0) and dev == 0.0
    crit, _, _ = _criterion([100, 110, 120, 130], slope_mode=True, percent=True)
    assert crit == pytest.approx(100 * 10 / 115)


@pytest.mark.parametrize("bad, where", [
    ("ss=iops", "steadystate"),
    ("ss=latency:1%", "steadystate"),
    ("ss=iops:x%", "steadystate"),
    ("ss_interval=500ms", "steadystate_check_interval"),
    ("ss_dur=x", "steadystate_duration"),
])
def test_bad_steady_state_options_name_the_option(bad, where):
    text = f"[j]\nrw=read\nsize=1m\nss_dur=2\n{bad}\n"
    with pytest.raises(FioJobError) as e:
        ssdlab.build(text)
    assert str(e.value).startswith(f"<job text>:5: option '{where}': ")


def test_steady_state_options_are_not_reported_as_ignored():
    spec = ssdlab.build(JOB.format(ss="bw_slope:1%"))
    assert not [w for w in spec.warnings if "ss" in w and "not modelled" in w]
    assert spec.job_reports[0].ss_criterion == "bw_slope"
    assert spec.job_reports[0].ss_dur_s == 3 and spec.job_reports[0].ss_ramp_us == 1_000_000


@pytest.mark.skipif(FIO is None, reason="fio is not installed")
def test_steadystate_object_has_real_fios_shape(tmp_path):
    job = tmp_path / "ss.fio"
    job.write_text("[ss]\nioengine=null\nrw=write\nbs=4k\nsize=1g\ntime_based\nruntime=8\n"
                   "ss=iops:50%\nss_dur=2s\nss_ramp=1s\n")
    p = subprocess.run([FIO, "--output-format=json", str(job)], capture_output=True, text=True,
                       cwd=tmp_path, timeout=60)
    assert p.returncode == 0, p.stderr
    real = json.loads(p.stdout[p.stdout.index("{"):])["jobs"][0]["steadystate"]
    ours = ssdlab.run(job, profile="samsung-850-pro").to_fio_json()["jobs"][0]["steadystate"]

    def shape(v):
        if isinstance(v, dict):
            return {k: shape(x) for k, x in v.items()}
        if isinstance(v, list):
            return [shape(v[0])] if v else []
        return type(v).__name__ if not isinstance(v, (int, float)) or isinstance(v, bool) else "number"

    assert list(ours) == list(real)
    assert shape(ours) == shape(real)
    assert ours["ss"] == real["ss"] and ours["duration"] == real["duration"]


def test_latency_criterion_is_said_not_modelled():
    spec = ssdlab.build("[j]\nrw=randread\nsize=1m\nss=lat:5%\nss_dur=2\n")
    assert any("steadystate" in w and "not modelled" in w for w in spec.warnings)
    assert spec.job_reports[0].ss_dur_s == 0


def test_group_is_judged_on_its_sum_and_stops_together():
    text = JOB.format(ss="iops:20%") + "numjobs=2\ngroup_reporting\n"
    r = ssdlab.run(text, profile="samsung-850-pro", seed=1)
    # both clones stop at 4 s (the I/O in flight then completes)
    assert [round((j["end_ns"] - j["measure_start_ns"]) / 1e6) for j in r.core["jobs"]] == [4000, 4000]
    (job,) = r.to_fio_json()["jobs"]
    ss = job["steadystate"]
    assert ss["attained"] == 1
    # the samples are the group's: about the two clones' IOPS together
    assert ss["data"]["iops_mean"] == pytest.approx(job["write"]["iops"], rel=0.1)


SS_LINE = (r"^  steadystate  : attained=(yes|no), bw=[\d.]+[KMG]?iB/s \([\d.]+[kMG]?B/s\), iops=[\d.]+[kM]?, "
           r"(iops|bw) (mean dev|slope)=-?\d+\.\d{3}%?$")


def test_normal_report_has_fios_steadystate_line():
    import re

    from ssdlab.fioout.normal import format_normal

    text = format_normal(ssdlab.run(JOB.format(ss="bw_slope:5%"), profile="samsung-850-pro", seed=1))
    lines = [ln for ln in text.splitlines() if "steadystate" in ln]
    assert len(lines) == 1 and re.match(SS_LINE, lines[0]), lines
    assert "bw slope=" in lines[0]


@pytest.mark.skipif(FIO is None, reason="fio is not installed")
def test_real_fios_steadystate_line_has_that_shape(tmp_path):
    import re

    job = tmp_path / "ss.fio"
    job.write_text("[ss]\nioengine=null\nrw=write\nbs=4k\nsize=1g\ntime_based\nruntime=4\n"
                   "ss=iops:50%\nss_dur=2s\nss_ramp=1s\n")
    p = subprocess.run([FIO, str(job)], capture_output=True, text=True, cwd=tmp_path, timeout=60)
    lines = [ln for ln in p.stdout.splitlines() if "steadystate" in ln]
    assert len(lines) == 1 and re.match(SS_LINE, lines[0]), lines
