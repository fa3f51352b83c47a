"""Result files read back (``report``, ``compare``, ``fit``) are checked against the output
schema (:mod:`ssdlab.fioout.schema`) before use: a file that fails names itself and the field,
in one line, exit status 2, and nothing is written."""

from __future__ import annotations

import json
import shutil
import subprocess

import pytest

import ssdlab
from ssdlab.fioout.schema import FioRun, RunFileError, read_run
from ssdlab.jsonout import dumps


@pytest.fixture(scope="module")
def run_json(tmp_path_factory) -> dict:
    r = ssdlab.run("[j]\nrw=randrw\nbs=4k\nsize=16m\nruntime=0.03\ntime_based\ndirect=1\n", interval="10ms",
                   scale=0.01)
    return json.loads(dumps(r.to_fio_json()))


def _write(tmp_path, name: str, data) -> str:
    path = tmp_path / name
    path.write_text(data if isinstance(data, str) else json.dumps(data))
    return str(path)


def _one_line_error(p, *parts: str) -> None:
    assert p.returncode == 2, (p.returncode, p.stderr)
    assert "Traceback" not in p.stderr and p.stderr.count("\n") == 1, p.stderr
    assert p.stderr.startswith("ssdlab: error: "), p.stderr
    for part in parts:
        assert part in p.stderr, (part, p.stderr)


def test_ssdlabs_own_outputs_pass_the_schema(tmp_path):
    r = ssdlab.run("[j]\nrw=randwrite\nbs=4k\nsize=8m\nruntime=0.02\ntime_based\ndirect=1\n",
                   system=ssdlab.raid("samsung-850-pro", 5, 3, chunk="64k", scale=0.01), interval="5ms")
    for plus in (False, True):
        FioRun.model_validate(json.loads(dumps(r.to_fio_json(plus=plus))))
    h = ssdlab.run("[j]\ndirect=1\nrw=randread\nbs=4k\nsize=8m\nruntime=0.02\ntime_based\n",
                   profile="seagate-barracuda-7200.11-1tb")
    FioRun.model_validate(json.loads(dumps(h.to_fio_json())))


@pytest.mark.skipif(shutil.which("fio") is None, reason="needs fio")
def test_real_fios_json_passes_the_schema(tmp_path):
    out = subprocess.run(["fio", "--name=j", "--ioengine=psync", "--rw=randrw", "--bs=4k", "--size=1m",
                          f"--filename={tmp_path / 'f'}", "--output-format=json"], capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    path = _write(tmp_path, "fio.json", out.stdout)
    assert read_run(path)["jobs"][0]["jobname"] == "j"


def test_deeply_nested_json_is_refused_by_report_and_compare(cli, tmp_path, run_json):
    deep = _write(tmp_path, "deep.json", "[" * 100_000 + "]" * 100_000)
    good = _write(tmp_path, "good.json", run_json)
    _one_line_error(cli("report", deep, "-o", str(tmp_path / "o.html")), "deep.json", "nested too deeply")
    _one_line_error(cli("compare", deep, good), "deep.json", "nested too deeply")
    assert not (tmp_path / "o.html").exists()


def test_a_byte_that_is_not_utf8_is_named_by_compare(cli, tmp_path, run_json):
    bad = tmp_path / "bin.json"
    bad.write_bytes(b'{"jobs": [\xff]}')
    _one_line_error(cli("compare", str(bad), _write(tmp_path, "good.json", run_json)), "bin.json", "not text",
                    "0xff")


@pytest.mark.parametrize("change, field", [
    (lambda d: d["ssdlab"].__setitem__("timeseries", "abc"), "ssdlab.timeseries: expected a list"),
    (lambda d: d["jobs"][0]["read"].__setitem__("iops", "fast"), 'jobs[0].read.iops: expected a number, got "fast"'),
    (lambda d: d["jobs"][0]["read"].__setitem__("iops", float("nan")), "jobs[0].read.iops: expected a finite number"),
    (lambda d: d["jobs"][0]["read"].__setitem__("iops", -1.5), "jobs[0].read.iops: expected a number >= 0"),
    (lambda d: d["jobs"][0].pop("read"), "jobs[0].read: missing"),
    (lambda d: d.__setitem__("jobs", [{}]), "jobs[0].jobname: missing"),
    (lambda d: d["jobs"][0]["write"]["clat_ns"].__setitem__("percentile", {"p99": 5}),
     'jobs[0].write.clat_ns.percentile: key "p99": expected a percentile'),
])
def test_report_and_compare_name_the_file_and_field(cli, tmp_path, run_json, change, field):
    data = json.loads(json.dumps(run_json))
    change(data)
    bad = _write(tmp_path, "bad.json", json.dumps(data))  # NaN as Python's json writes it
    good = _write(tmp_path, "good.json", run_json)
    _one_line_error(cli("report", bad, "-o", str(tmp_path / "o.html")), f"{bad}: {field}")
    assert not (tmp_path / "o.html").exists()
    _one_line_error(cli("compare", good, bad), f"{bad}: {field}")
    with pytest.raises(RunFileError, match="bad.json: "):
        read_run(bad)


def test_fit_names_the_file_and_field(cli, tmp_path, run_json):
    _one_line_error(cli("fit", _write(tmp_path, "empty.json", '{"jobs":[{}]}')), "empty.json: jobs[0].jobname: missing")
    data = json.loads(json.dumps(run_json))
    data["jobs"][0]["job options"] = {"bs": "abc"}
    _one_line_error(cli("fit", _write(tmp_path, "bs.json", data), "--scale", "0.01"),
                    'bs.json: jobs[0]["job options"].bs: option \'bs\': expected a size')
    data["jobs"][0]["job options"] = {"numjobs": "many"}
    _one_line_error(cli("fit", _write(tmp_path, "nj.json", data)),
                    'nj.json: jobs[0]["job options"].numjobs: expected a whole number >= 1')
