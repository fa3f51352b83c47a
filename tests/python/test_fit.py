"""``ssdlab fit``: a profile's free parameters recovered from "measurements" simulated with
values the fit is not told."""

from __future__ import annotations

import json
import re

import pytest

import ssdlab
from ssdlab.analysis.fit import FitError, fit, job_text, search, set_io_overhead

JOB = "[w]\nrw=randwrite\nbs=4k\nioengine=psync\ndirect=1\nsize=16m\n"


def _measurement(tmp_path, name: str, job: str, write_busy: str, host_factor: float) -> str:
    """A run simulated with a changed controller and host, saved as fio's JSON only."""
    spec = ssdlab.build(job, profile="samsung-850-pro", profile_set={"controller.write_busy": write_busy},
                        seed=3, scale=0.01)
    set_io_overhead(spec.core["host"], int(spec.core["host"]["io_overhead_ns"] * host_factor))
    data = ssdlab.execute(spec).to_fio_json()
    data.pop("ssdlab")  # nothing but what fio itself would write
    path = tmp_path / name
    path.write_text(json.dumps(data))
    return str(path)


def test_fit_recovers_controller_and_host_time(tmp_path):
    base_busy, base_host = 20_100, 12_800  # the profile's and its host's values (ns)
    run = _measurement(tmp_path, "m.json", JOB, f"{base_busy * 1.3:.0f}ns", 0.7)
    r = fit("samsung-850-pro", [run], params=["controller.write_busy", "host.io_overhead"], scale=0.01)
    assert r.start == {"controller.write_busy": base_busy, "host.io_overhead": base_host}
    assert r.params["controller.write_busy"] / base_busy == pytest.approx(1.3, rel=0.03)
    assert r.params["host.io_overhead"] / base_host == pytest.approx(0.7, rel=0.03)
    assert r.runs[0].residual < 0.01 < r.start_residuals[0]
    figures = {(f["direction"], f["figure"]) for f in r.runs[0].figures}
    assert figures == {("write", "iops"), ("write", "clat_mean_ns"), ("write", "clat_p99_ns")}
    text = r.format_text()
    assert "controller.write_busy" in text and "residual" in text and "m.json" in text
    assert r.runs[0].job_residuals() == {"w": pytest.approx(r.runs[0].residual)}  # one job: the run's
    assert re.search(r"^    job w: 0\.\d{4}$", text, re.M)


def test_job_is_rebuilt_from_fios_json_with_its_bare_switches():
    data = {"global options": {"filename": "/dev/sdb", "ioengine": "libaio"},
            "jobs": [{"jobname": "a", "job options": {"rw": "read", "runtime": "2", "numjobs": "4"},
                      "job_runtime": 2000},
                     {"jobname": "b", "job options": {"rw": "write", "runtime": "2", "size": "1m"},
                      "job_runtime": 300}]}
    text = job_text(data)
    assert "filename" not in text and "ioengine=libaio" in text
    a, b = text.split("[a]\n")[1].split("[b]\n")
    assert "time_based" in a and "group_reporting" in a  # ran its runtime; 4 clones, 1 entry
    assert "time_based" not in b  # stopped by its size
    assert ssdlab.build(text).core["jobs"][0]["time_based"]


def test_the_search_finds_a_minimum_within_bounds_and_never_ends_worse_than_it_started():
    x, fx, n = search(lambda v: (v[0] - 1.5) ** 2 + 3 * (v[1] + 0.5) ** 2, [(-2, 2), (-2, 2)], max_evals=400)
    assert x[0] == pytest.approx(1.5, abs=1e-2) and x[1] == pytest.approx(-0.5, abs=1e-2) and n <= 401
    x, _, _ = search(lambda v: (v[0] - 5) ** 2, [(-1, 1)], max_evals=100)
    assert x[0] == pytest.approx(1.0)
    # a bound at the start: the first step goes the other way, and nothing crosses it
    tried = []
    x, _, _ = search(lambda v: tried.append(v[0]) or (v[0] - 5) ** 2, [(-1, 0)], max_evals=50)
    assert max(tried) <= 0 and x == [0.0]
    # a rugged function whose best point is the start: the start is returned
    x, fx, _ = search(lambda v: 0.0 if v == [0.0, 0.0] else 1.0 + abs(v[0]), [(-1, 1), (-1, 1)], max_evals=60)
    assert x == [0.0, 0.0] and fx == 0.0


def test_a_spread_is_fitted_within_its_limit(tmp_path):
    # controller.busy_cv may not pass 1 (the core refuses it); a fit from the profile's value
    # must stay inside, whatever the measurement asks.
    run = _measurement(tmp_path, "m.json", JOB, "40000ns", 1.0)
    r = fit("samsung-850-pro", [run], params=["controller.busy_cv"], scale=0.01, max_evals=12)
    assert 0 < r.params["controller.busy_cv"] <= 1.0
    assert r.runs[0].residual <= r.start_residuals[0] + 1e-12


def test_fit_errors_name_the_problem(tmp_path, cli):
    run = _measurement(tmp_path, "m.json", JOB, "20100ns", 1.0)
    with pytest.raises(FitError, match="not a fitted parameter"):
        fit("samsung-850-pro", [run], params=["controller.speed"])
    with pytest.raises(FitError, match="has no such value"):
        fit("samsung-850-pro", [run], params=["slc_cache.static"])
    p = cli("fit", run, "--params", "controller.write_busy", "--scale", "0.01", "--max-evals", "3",
            "--output-format", "json")
    assert p.returncode == 0, p.stderr
    out = json.loads(p.stdout)
    assert set(out["params"]) == {"controller.write_busy"} and out["evaluations"] <= 4
    assert out["runs"][0]["path"] == run and out["params"]["controller.write_busy"]["unit"] == "ns"
    empty = tmp_path / "empty.json"
    empty.write_text('{"jobs": []}')
    p = cli("fit", str(empty))
    assert p.returncode == 2 and f"{empty}: jobs: empty" in p.stderr and len(p.stderr.splitlines()) == 1
