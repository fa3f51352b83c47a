"""``ssdlab measure`` (the real fio on a small file, /proc/diskstats sampled beside it) and
``ssdlab compare`` (a simulation beside the measurement)."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

import ssdlab
from ssdlab.analysis.compare import compare, load_run, CompareError
from ssdlab.analysis.measure import (DISKSTATS_FIELDS, BlockDevice, block_device, disk_of, job_for_target,
                            read_diskstats)

FIO = shutil.which("fio")
needs_fio = pytest.mark.skipif(FIO is None, reason="fio is not installed")

JOB = "[j]\nrw=randrw\nbs=4k\nsize=4m\nioengine=psync\ntime_based\nruntime=600ms\nfilename=/elsewhere/x\n"


def test_partition_is_measured_on_its_disk(tmp_path):
    disk = tmp_path / "devices" / "pci0" / "block" / "sdb"
    (disk / "sdb2").mkdir(parents=True)
    (disk / "sdb2" / "partition").write_text("2\n")
    links = tmp_path / "dev" / "block"
    links.mkdir(parents=True)
    (links / "8:18").symlink_to(disk / "sdb2")
    (links / "8:16").symlink_to(disk)
    assert disk_of(8, 18, str(tmp_path)) == BlockDevice("sdb", "sdb2")
    assert disk_of(8, 16, str(tmp_path)) == BlockDevice("sdb")
    assert disk_of(0, 45, str(tmp_path)) is None  # tmpfs, overlay: no block device


def test_diskstats_columns_old_and_new_kernels(tmp_path):
    proc = tmp_path / "diskstats"
    proc.write_text("   8       0 sda 10 1 80 5 20 2 160 7 0 9 12\n"
                    " 259       0 nvme0n1 " + " ".join(str(i) for i in range(1, 18)) + "\n")
    old = read_diskstats("sda", str(proc))
    assert (old["read_ios"], old["write_sectors"], old["time_in_queue_ms"]) == (10, 160, 12)
    assert old["discard_ios"] == 0 and old["flush_ios"] == 0  # absent before 4.18 / 5.5
    new = read_diskstats("nvme0n1", str(proc))
    assert [new[k] for k in DISKSTATS_FIELDS] == list(range(1, 18))
    with pytest.raises(ValueError, match="no line for device sdz"):
        read_diskstats("sdz", str(proc))


def test_job_is_sent_to_the_target():
    text = job_for_target("[global]\ndirectory=/a\n[x]\nfilename = /dev/sdb\nrw=read\n", "/tmp/f")
    assert text.startswith("[global]\nfilename=/tmp/f\n")
    assert "/dev/sdb" not in text and "directory" not in text and "rw=read" in text


@needs_fio
def test_measure_samples_diskstats_and_lines_up_with_a_simulation(tmp_path):
    job = tmp_path / "j.fio"
    job.write_text(JOB)
    target = tmp_path / "data"
    measured = ssdlab.measure(job, target, interval="200ms")
    assert target.stat().st_size == 4 << 20  # fio laid the file out on the target
    got = measured.to_fio_json()
    simulated = ssdlab.run(job, profile="samsung-850-pro").to_fio_json()
    assert set(simulated) <= set(got) | {"global options"}
    for key in ("jobname", "read", "write", "job options", "latency_us"):
        assert key in got["jobs"][0]
    assert got["ssdlab"]["measured"] is True and got["ssdlab"]["devices"] == []
    dev = block_device(tmp_path)
    if dev is None:  # tmpfs or overlay: no diskstats, and said so
        assert any("no block device" in w for w in measured.warnings)
        assert got["ssdlab"]["iostat"] == []
    else:
        assert got["ssdlab"]["device"] == dev.name
        times = [t for t, _ in measured.samples]
        assert len(times) >= 4 and times == sorted(times)  # before, every 200 ms, after
        for k in ("read_ios", "write_ios", "io_ticks_ms", "time_in_queue_ms"):
            values = [s[k] for _, s in measured.samples]
            assert values == sorted(values), k  # counters only grow
        io = got["ssdlab"]["iostat"][0]
        assert io["name"] == dev.name and 0 <= io["%util"] <= 100 and io["r/s"] >= 0
        assert len(got["ssdlab"]["timeseries"]) == len(times) - 1
        assert list(measured.iostat_table().columns) == list(ssdlab.run(job).iostat_table().columns)
    # the same pandas table as a simulation's
    table = measured.to_pandas()
    assert list(table.columns) == list(ssdlab.run(job).to_pandas().columns)
    assert set(table["direction"]) == {"read", "write"} and (table["iops"] > 0).all()
    with pytest.raises(ValueError, match="absent"):
        measured.internal()
    # compare: every figure of both directions lines up, with finite values on both sides
    c = compare(simulated, got)
    job_rows = [r for r in c.rows if r.section == "job"]
    assert {(r.direction, r.figure) for r in job_rows} >= {(d, f) for d in ("read", "write")
                                                          for f in ("iops", "bw_bytes", "clat_mean_us", "clat_p99_us")}
    for r in job_rows:
        assert r.a is not None and r.b is not None and r.a >= 0 and r.b >= 0, r
    assert all(r.b > 0 for r in job_rows if r.figure == "iops")
    if dev is not None:
        assert any(r.section == "iostat" and r.figure == "%util" for r in c.rows)
        assert any("paired" in n for n in c.notes) or any(r.subject == dev.name for r in c.rows)


@needs_fio
def test_measure_cli_json_and_normal(tmp_path, cli):
    job = tmp_path / "j.fio"
    job.write_text(JOB)
    p = cli("measure", str(job), "--target", str(tmp_path / "data"), "--output-format", "json")
    assert p.returncode == 0, p.stderr
    data = json.loads(p.stdout)
    assert data["jobs"][0]["jobname"] == "j" and "bins" not in json.dumps(data)
    p = cli("measure", str(job), "--target", str(tmp_path / "data"))
    assert p.returncode == 0, p.stderr
    assert "Run status group 0" in p.stdout and "Device internals:" in p.stdout


def test_measure_errors_are_one_line(tmp_path, cli):
    job = tmp_path / "j.fio"
    job.write_text(JOB)
    empty = tmp_path / "bin"
    empty.mkdir()
    # the user's mistake is named first, with or without fio on PATH
    for env in (None, {"PATH": str(empty)}):
        p = cli("measure", str(job), "--target", str(tmp_path / "no" / "such" / "f"), env=env)
        assert p.returncode == 2 and "no such directory" in p.stderr and len(p.stderr.splitlines()) == 1
    p = cli("measure", str(job), "--target", str(tmp_path / "f"), env={"PATH": str(empty)})
    assert p.returncode == 2 and "fio: not found" in p.stderr and len(p.stderr.splitlines()) == 1
    if FIO is not None:
        bad = tmp_path / "bad.fio"
        bad.write_text("[j]\nrw=sideways\nsize=1m\n")
        p = cli("measure", str(bad), "--target", str(tmp_path / "f"))
        assert p.returncode == 2 and "fio failed" in p.stderr and len(p.stderr.splitlines()) == 1


def _run_json(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(json.dumps(ssdlab.run(text, profile="samsung-850-pro").to_fio_json()))
    return path


def test_compare_says_what_only_one_side_has(tmp_path, cli):
    a = _run_json(tmp_path, "a.json", "[x]\nrw=randread\nsize=1m\n[y]\nrw=write\nsize=1m\n")
    b = _run_json(tmp_path, "b.json", "[x]\nrw=randrw\nsize=1m\n[z]\nrw=read\nsize=1m\n")
    c = compare(load_run(a), load_run(b))
    assert "job 'y' is only in A" in c.notes and "job 'z' is only in B" in c.notes
    assert "job 'x' write: only B did write I/O" in c.notes
    write = [r for r in c.rows if r.subject == "x" and r.direction == "write"]
    assert write and all(r.error is None for r in write if r.a is None or r.b is None)
    read_iops = next(r for r in c.rows if (r.subject, r.direction, r.figure) == ("x", "read", "iops"))
    assert read_iops.error == pytest.approx((read_iops.a - read_iops.b) / read_iops.b)
    p = cli("compare", str(a), str(b), "--output-format", "json")
    assert p.returncode == 0, p.stderr
    out = json.loads(p.stdout)
    assert out["notes"] == c.notes and len(out["rows"]) == len(c.rows)
    p = cli("compare", str(a), str(b))
    assert p.returncode == 0 and "error = (A - B) / |B|" in p.stdout and "only in B" in p.stdout
    bad = tmp_path / "bad.json"
    bad.write_text("[1, 2]")
    p = cli("compare", str(a), str(bad))
    assert p.returncode == 2 and "expected fio's JSON output" in p.stderr
    with pytest.raises(CompareError):
        load_run(tmp_path / "missing.json")


def test_compare_says_which_side_lacks_iostat_or_disk_util(tmp_path):
    a = _run_json(tmp_path, "a.json", "[x]\nrw=randread\nsize=1m\n")
    data = json.loads(a.read_text())
    data["ssdlab"]["iostat"], data["disk_util"] = [], []
    b = tmp_path / "b.json"
    b.write_text(json.dumps(data))
    notes = compare(load_run(a), load_run(b)).notes
    assert "iostat: only A has it (a run without diskstats, or fio's own JSON)" in notes
    assert "disk_util: only A has it" in notes
    assert "disk_util: only B has it" in compare(load_run(b), load_run(a)).notes
    both = compare(load_run(a), load_run(a))
    assert {r.section for r in both.rows} >= {"iostat", "disk_util"} and not any("only" in n for n in both.notes)
