"""ssdlab's report against the real fio's, format by format, on the same jobs.

fio runs each job with ``ioengine=null`` (no device: it completes I/O at once), or on a file
in the test's directory; ssdlab simulates the same job on a drive. Numbers differ by nature;
the layout must not:

* JSON (and json+) parses strictly (no NaN or Infinity), and every key fio writes exists in
  ssdlab's at the same place, walking fio's tree key by key (maps keyed by data, such as a
  histogram's bins or the job's options, are compared as present, not key by key); on a file,
  ssdlab writes no key fio does not (but its own ``ssdlab`` object);
* the normal output has fio's lines in fio's order: section headers and key names, with
  numbers, units and padding set aside; the lines that hold no measured number (job headers,
  version, ``Starting``, ``latency``, section titles) are fio's character for character;
* terse has fio's fields: as many, with the same fixed ones.

ssdlab follows one fio release (``results.FIO_VERSION``, fio 3.33). Skipped when fio is not
installed (``apt-get install fio``); the JSON and normal comparisons also when the installed
fio is another release.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from ssdlab.results import FIO_VERSION

FIO = shutil.which("fio")
pytestmark = pytest.mark.skipif(FIO is None, reason="fio is not installed (apt-get install fio)")
INSTALLED = subprocess.run([FIO, "--version"], capture_output=True, text=True).stdout.strip() if FIO else None
same_release = pytest.mark.skipif(INSTALLED != FIO_VERSION,
                                  reason=f"the installed fio is {INSTALLED}; ssdlab follows {FIO_VERSION}")

JOBS = {
    "randread-qd8": "[global]\nioengine=null\nsize=16m\nbs=4k\n[rr]\nrw=randread\niodepth=8\n",
    "randrw-latency-target": ("[rw]\nioengine=null\nsize=16m\nbs=4k\nrw=randrw\niodepth=4\n"
                              "latency_target=10ms\nlatency_window=1s\n"),
    "group-reporting": ("[global]\nioengine=null\nsize=8m\nbs=64k\n[w]\nrw=write\nnumjobs=2\n"
                        "group_reporting\n"),
    "fsync": "[s]\nioengine=null\nsize=4m\nbs=4k\nrw=write\nfsync=8\n",
    "continue-on-error": "[e]\nioengine=null\nsize=4m\nbs=4k\nrw=randwrite\ncontinue_on_error=all\n",
    "two-groups": ("[global]\nioengine=null\nsize=8m\n[a]\nrw=read\nbs=16k\n[b]\nstonewall\n"
                   "rw=randwrite\nbs=4k\nnumjobs=2\n"),
    # the reporting options: which latencies are recorded, which have percentiles
    "clat-percentiles-off": "[p]\nioengine=null\nsize=4m\nbs=4k\nrw=randrw\niodepth=4\nclat_percentiles=0\n",
    "lat-slat-percentiles": ("[p]\nioengine=null\nsize=4m\nbs=4k\nrw=randrw\niodepth=4\nlat_percentiles=1\n"
                             "slat_percentiles=1\npercentile_list=50:99:99.9\n"),
    "lat-percentiles-alone": ("[p]\nioengine=null\nsize=4m\nbs=4k\nrw=randwrite\niodepth=4\nlat_percentiles=1\n"
                              "clat_percentiles=0\nfsync=8\n"),
    "disable-clat": "[d]\nioengine=null\nsize=4m\nbs=4k\nrw=randrw\niodepth=4\ndisable_clat=1\nfsync=8\n",
    "disable-lat-slat": ("[d]\nioengine=null\nsize=4m\nbs=4k\nrw=randrw\niodepth=4\ndisable_lat=1\n"
                         "disable_slat=1\nlat_percentiles=1\ndisable_bw_measurement=1\n"),
    "gtod-reduce": "[d]\nioengine=null\nsize=4m\nbs=4k\nrw=randread\niodepth=4\ngtod_reduce=1\n",
    # unified_rw_reporting: the directions merged alone, and after the others
    "unified-mixed": ("[global]\nioengine=null\nsize=4m\nbs=4k\nrw=randrw\niodepth=4\nfsync=8\n"
                      "unified_rw_reporting=mixed\n[u]\n"),
    "unified-both": ("[global]\nioengine=null\nsize=4m\nbs=4k\nrw=randrw\niodepth=4\nfsync=8\n"
                     "unified_rw_reporting=both\n[u]\nnumjobs=2\ngroup_reporting\n"),
    "unified-both-percentiles": ("[u]\nioengine=null\nsize=4m\nbs=4k\nrw=randrw\niodepth=4\n"
                                 "unified_rw_reporting=2\nlat_percentiles=1\n"),
}

#: jobs on a file (FILE is the test's file, made beforehand so fio lays nothing out): the real
#: fio runs them on the file system under the test's directory, so they have disk stats. A
#: second of time keeps bw and iops samples in both.
FILE_JOBS = {
    "libaio-randwrite-2jobs": ("[global]\nfilename=FILE\nsize=16m\nioengine=libaio\niodepth=4\nbs=4k\n"
                               "time_based\nruntime=1\n[rw1]\nrw=randwrite\nnumjobs=2\n"),
    "randrw-fsync-group": ("[global]\nfilename=FILE\nsize=16m\nbs=4k\ngroup_reporting\ntime_based\nruntime=1\n"
                           "[mixed]\nrw=randrw\nrwmixread=70\nfsync=16\nnumjobs=2\n"),
    "psync-read": "[seq]\nfilename=FILE\nsize=16m\nbs=128k\nrw=read\ntime_based\nruntime=1\n",
}

#: lines with no measured number in them: fio's, character for character
FIXED = re.compile(r"^(\S+: \(g=\d+\): rw=|fio-|Starting |\.\.\.$|     latency   :|Run status group|"
                   r"Disk stats|  fsync/fdatasync|     errors    :|  mixed: IOPS=0, BW=0 \(0\)\(0B/)")


def _fio(job: Path, fmt: str, cwd: Path) -> str:
    p = subprocess.run([FIO, f"--output-format={fmt}", str(job)], capture_output=True, text=True,
                       timeout=120, cwd=cwd)
    assert p.returncode == 0, p.stderr
    return p.stdout


def _ssdlab(job: Path, fmt: str, cwd: Path) -> str:
    # The installed package, as a user runs it (the source tree has no compiled core).
    p = subprocess.run([sys.executable, "-m", "ssdlab", "run", str(job), "--output-format", fmt],
                       capture_output=True, text=True, timeout=300, cwd=cwd)
    assert p.returncode == 0, p.stderr
    return p.stdout


def _strict(text: str):
    def bad(name):
        raise ValueError(f"non-standard JSON constant {name}")

    return json.loads(text, parse_constant=bad)


DATA_KEYED = {"bins", "job options", "global options"}


def missing_keys(fio, ours, path: str = "") -> list[str]:
    """Keys of ``fio`` not found at the same place in ``ours``."""
    out = []
    if isinstance(fio, dict):
        if not isinstance(ours, dict):
            return [f"{path} (not an object)"]
        for k, v in fio.items():
            if k not in ours:
                out.append(f"{path}/{k}")
            elif k not in DATA_KEYED:
                out += missing_keys(v, ours[k], f"{path}/{k}")
    elif isinstance(fio, list):
        if not isinstance(ours, list):
            return [f"{path} (not an array)"]
        for i, item in enumerate(fio):
            if i >= len(ours):
                out.append(f"{path}[{i}]")
            else:
                out += missing_keys(item, ours[i], f"{path}[{i}]")
    return out


_NUM = re.compile(r"\d[\d.]*[A-Za-z]*")


def shape(line: str) -> str:
    """A line's layout: numbers (with their unit suffix), time units and padding set aside."""
    line = line.rstrip()
    line = re.sub(r"(pid=\d+: ).*$", r"\1DATE", line)
    line = re.sub(r"^(  |    )[\w-]+: ios=", r"\1DISK: ios=", line)  # the test's disk, ssdlab's sda
    if line.startswith("     |"):
        return "PERCENTILES"
    if re.match(r"  lat \((nsec|usec|msec)\)\s+:", line):
        return "LATENCY BUCKETS"
    line = re.sub(r"\((nsec|usec|msec)\)", "(UNIT)", line)
    line = re.sub(r"\(\s*(KiB|MiB|kB)/s\)", "(UNIT/s)", line)
    line = re.sub(r"=\s+", "=", line)
    line = _NUM.sub("#", line)
    line = re.sub(r"#(ns|us|ms|s)\b", "#", line)
    return line


def shapes(text: str, stop: str | None = None) -> list[str]:
    out: list[str] = []
    for line in text.splitlines():
        if stop is not None and line.startswith(stop):
            break
        s = shape(line)
        if out and s == out[-1] and s in ("PERCENTILES", "LATENCY BUCKETS"):
            continue
        out.append(s)
    while out and out[-1] == "":
        out.pop()
    return out


@pytest.fixture(params=sorted(JOBS))
def job(request, tmp_path):
    path = tmp_path / f"{request.param}.fio"
    path.write_text(JOBS[request.param])
    return path


@same_release
@pytest.mark.parametrize("fmt", ["json", "json+"])
def test_json_has_every_key_fio_writes(job, fmt, tmp_path):
    fio = _strict(_fio(job, fmt, tmp_path))
    ours = _strict(_ssdlab(job, fmt, tmp_path))
    assert missing_keys(fio, ours) == []
    assert "disk_util" not in ours and "disk_util" not in fio  # the null engine opens no disk
    assert extra_keys(ours, fio) == []
    assert len(ours["jobs"]) == len(fio["jobs"])
    for f, o in zip(fio["jobs"], ours["jobs"]):
        assert (o["jobname"], o["groupid"]) == (f["jobname"], f["groupid"])
        for d in ("read", "write", "trim", "mixed"):
            if d not in f:
                continue
            assert (o[d]["total_ios"] > 0) == (f[d]["total_ios"] > 0), d
            for kind in ("slat_ns", "clat_ns", "lat_ns"):  # recorded in both or neither
                assert (o[d][kind]["N"] > 0) == (f[d][kind]["N"] > 0), (d, kind)
                if fmt == "json+" and f[d][kind]["N"] and "bins" in f[d][kind]:
                    assert sum(o[d][kind]["bins"].values()) == o[d][kind]["N"]


def _side_by_side(fio: list[str], ours: list[str]) -> str:
    return "\n".join(f"{a!r:90} {b!r}" for a, b in zip(fio, ours))


def fixed_lines(text: str, stop: str | None = None) -> list[str]:
    out = []
    for line in text.splitlines():
        if stop is not None and line.startswith(stop):
            break
        if FIXED.match(line):
            # with a latency target, fio's depth is the one its search found (not simulated)
            line = re.sub(r"(target=[1-9]\d*, .*depth=)\d+$", r"\1#", line)
            out.append(re.sub(r"(0B/)\d+(msec\))$", r"\1#\2", line))  # the runtime of both's merged line
    return out


@same_release
def test_normal_output_has_fio_lines_in_fio_order(job, tmp_path):
    fio_text, our_text = _fio(job, "normal", tmp_path), _ssdlab(job, "normal", tmp_path)
    fio = shapes(fio_text)
    # The null engine has no disk: neither fio nor ssdlab prints disk stats; what follows is
    # ssdlab's own (the device-side depth, the drive's internals).
    ours = shapes(our_text, stop="Device-side queue depth")
    assert "Disk stats (read/write):" not in ours
    assert ours == fio, _side_by_side(fio, ours)
    assert fixed_lines(our_text, stop="Device-side queue depth") == fixed_lines(fio_text)


@pytest.fixture(params=sorted(FILE_JOBS))
def file_job(request, tmp_path):
    data = tmp_path / "data.bin"
    with open(data, "wb") as f:
        f.truncate(16 << 20)
    path = tmp_path / f"{request.param}.fio"
    path.write_text(FILE_JOBS[request.param].replace("FILE", str(data)))
    return path


@same_release
def test_normal_output_on_a_file_is_fios_line_for_line(file_job, tmp_path):
    """The whole of fio's part, disk stats included, on jobs that do real I/O: a write line
    with its zone resets, slat, a sync section, group reporting, two jobs in a group."""
    fio_text, our_text = _fio(file_job, "normal", tmp_path), _ssdlab(file_job, "normal", tmp_path)
    fio = shapes(fio_text)
    ours = shapes(our_text, stop="Device-side queue depth")
    if "Disk stats (read/write):" not in fio:  # a directory on tmpfs has no disk
        ours = ours[:ours.index("Disk stats (read/write):")]
        while ours and ours[-1] == "":
            ours.pop()
    assert ours == fio, _side_by_side(fio, ours)
    assert fixed_lines(our_text, stop="Device-side queue depth") == fixed_lines(fio_text)


def extra_keys(ours, fio, path: str = "") -> list[str]:
    """Keys of ``ours`` that ``fio`` does not have at the same place (ssdlab's own aside)."""
    out = []
    if isinstance(ours, dict) and isinstance(fio, dict):
        for k, v in ours.items():
            if path == "" and k == "ssdlab":
                continue
            if k not in fio:
                out.append(f"{path}/{k}")
            elif k not in DATA_KEYED:
                out += extra_keys(v, fio[k], f"{path}/{k}")
    elif isinstance(ours, list) and isinstance(fio, list):
        for i, item in enumerate(ours[:len(fio)]):
            out += extra_keys(item, fio[i], f"{path}[{i}]")
    return out


@same_release
def test_json_on_a_file_has_fios_keys_and_no_others(file_job, tmp_path):
    fio = _strict(_fio(file_job, "json+", tmp_path))
    ours = _strict(_ssdlab(file_job, "json+", tmp_path))
    assert ours["fio version"] == fio["fio version"] == FIO_VERSION
    assert missing_keys(fio, ours) == []
    if not fio.get("disk_util"):  # a directory on tmpfs has no disk
        ours.pop("disk_util")
    assert extra_keys(ours, fio) == []


def test_terse_has_fio_fields(job, tmp_path):
    fio = [line.split(";") for line in _fio(job, "terse", tmp_path).splitlines()]
    ours = [line.split(";") for line in _ssdlab(job, "terse", tmp_path).splitlines()]
    assert len(ours) == len(fio)
    for f, o in zip(fio, ours):
        assert len(o) == len(f)  # the null engine opens no disk: no disk fields in either
        assert o[0] == f[0] == "3" and o[2:4] == f[2:4]
        # percentiles are P%=value in the same places
        for i, (a, b) in enumerate(zip(f, o)):
            assert ("%=" in a) == ("%=" in b), i
            assert a.endswith("%") == b.endswith("%"), i
            # a percentile's label, or 0%=0 past the list (or without percentiles)
            assert a.split("=")[0] == b.split("=")[0] if "%=" in a else True, i


@pytest.mark.skipif(shutil.which("fio_jsonplus_clat2csv") is None, reason="fio's fio_jsonplus_clat2csv is not installed")
def test_fios_json_plus_tool_reads_ours(tmp_path):
    job = tmp_path / "rr.fio"
    job.write_text("[rr]\nioengine=libaio\ndirect=1\nrw=randrw\nbs=4k\niodepth=4\nsize=4m\n")
    (tmp_path / "out.json").write_text(_ssdlab(job, "json+", tmp_path))
    p = subprocess.run([sys.executable, shutil.which("fio_jsonplus_clat2csv"), "out.json", "out.csv"],
                       capture_output=True, text=True, cwd=tmp_path, timeout=120)
    assert p.returncode == 0, p.stderr
    rows = (tmp_path / "out_job0.csv").read_text().splitlines()
    header = [c.strip() for c in rows[0].split(",")]
    last = [c.strip() for c in rows[-1].split(",")]
    # the cumulative clat percentile of the last bin reaches 1 in both directions
    for d in ("read", "write"):
        assert float(last[header.index(f"{d}_clat_ns_percentile")] or 1.0) == pytest.approx(1.0)


@pytest.mark.skipif(shutil.which("fio2gnuplot") is None, reason="fio's fio2gnuplot is not installed")
def test_fios_log_tool_reads_our_logs(tmp_path):
    job = tmp_path / "w.fio"
    job.write_text("[w]\nioengine=psync\ndirect=1\nrw=write\nbs=64k\nsize=32m\nwrite_bw_log\nlog_avg_msec=20\n")
    _ssdlab(job, "terse", tmp_path)
    assert (tmp_path / "w_bw.1.log").is_file()
    # with this interpreter (its shebang's python3 may be another), which has six (the test extras)
    p = subprocess.run([sys.executable, shutil.which("fio2gnuplot"), "-b"], capture_output=True, text=True,
                       cwd=tmp_path, timeout=120)
    assert p.returncode == 0, p.stderr
    assert "w_bw.1.log" in p.stdout
    average = (tmp_path / "result.average").read_text().split()
    assert len(average) >= 2 and float(average[-1]) > 0
