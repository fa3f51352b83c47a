"""Trace replay from Python and the command line: fio's read_iolog in job files, and
``ssdlab replay`` over the trace formats; every record once, timing per mode, bad input named."""

import json

import pytest

import ssdlab
from ssdlab.api import SimulationError
from ssdlab.fio import FioJobError

SSD = "samsung-850-pro"


def _disksim(path, n: int, extra: str = "") -> None:
    """n records 1 ms apart (ns times), devices 0 and 1 alternating, reads on device 0."""
    lines = [f"{1_000_000 + i * 1_000_000} {i % 2} {(i * 7919) % 100000 * 8} 8 {1 - i % 2}" for i in range(n)]
    path.write_text("\n".join(lines) + "\n" + extra)


def test_read_iolog_replays_a_fio_log_next_to_the_job(tmp_path):
    (tmp_path / "log").write_text("fio version 2 iolog\n/dev/sdb add\n/dev/sdb open\n"
                                  "/dev/sdb write 0 4096\n/dev/sdb wait 2000\n/dev/sdb read 4096 4096\n"
                                  "/dev/sdb sync 0 0\n/dev/sdb read 0 8192\n/dev/sdb close\n")
    job = tmp_path / "j.fio"
    job.write_text("[r]\nread_iolog=log\nioengine=libaio\niodepth=4\n")
    r = ssdlab.run(job, profile=SSD)
    j = r.to_fio_json()["jobs"][0]
    assert (j["read"]["total_ios"], j["write"]["total_ios"], j["sync"]["total_ios"]) == (2, 1, 1)
    assert j["read"]["io_bytes"] == 12288
    # The log's 2 ms wait is kept; with replay_no_stall it is not.
    assert r.elapsed_ns > 2_000_000
    job.write_text("[r]\nread_iolog=log\nreplay_no_stall=1\nioengine=libaio\niodepth=4\n")
    assert ssdlab.run(job, profile=SSD).elapsed_ns < r.elapsed_ns - 1_500_000
    job.write_text("[r]\nread_iolog=log\nreplay_time_scale=50\nioengine=libaio\niodepth=4\n")
    assert ssdlab.run(job, profile=SSD).elapsed_ns > 4_000_000, "half the rate: twice the time"


def test_read_iolog_errors_name_the_job_file_line(tmp_path):
    job = tmp_path / "j.fio"
    job.write_text("[r]\nioengine=libaio\nread_iolog=missing.log\n")
    with pytest.raises(FioJobError) as e:
        ssdlab.run(job, profile=SSD)
    assert "j.fio:3" in str(e.value) and "missing.log: no such I/O log" in str(e.value)


def test_replay_redirect_picks_the_target(tmp_path):
    (tmp_path / "log").write_text("fio version 2 iolog\n/dev/x add\n/dev/x open\n/dev/x read 0 4096\n/dev/x close\n")
    sysf = tmp_path / "sys.toml"
    sysf.write_text(f'[[drive]]\nname = "sda"\nprofile = "{SSD}"\n[[drive]]\nname = "sdb"\nprofile = "{SSD}"\n')
    job = tmp_path / "j.fio"
    job.write_text("[r]\nread_iolog=log\nreplay_redirect=/dev/sdb\n")
    r = ssdlab.run(job, system=sysf)
    util = {u["name"]: u for u in r.to_fio_json()["disk_util"]}
    assert "sda" not in util and util["sdb"]["read_ios"] == 1, "fio lists only the disks its jobs used"
    assert r.iostat("sda")["r/s"] == 0


def test_replay_command_recorded_closed_and_mapped(cli, tmp_path):
    t = tmp_path / "t.trace"
    _disksim(t, 200)
    p = cli("replay", str(t), "--format", "disksim", "--profile", SSD, "--output-format", "json")
    assert p.returncode == 0, p.stderr
    j = json.loads(p.stdout)["jobs"]
    assert len(j) == 1 and (j[0]["read"]["total_ios"], j[0]["write"]["total_ios"]) == (100, 100)
    assert j[0]["job_runtime"] >= 199, "as recorded: 199 ms from first to last record"
    p = cli("replay", str(t), "--format", "disksim", "--profile", SSD, "--timing", "closed:8",
            "--map", "1=sda", "--output-format", "json")
    j = json.loads(p.stdout)["jobs"]
    assert (j[0]["read"]["total_ios"], j[0]["write"]["total_ios"]) == (0, 100)
    assert j[0]["job_runtime"] < 50


def test_replay_command_names_a_bad_record(cli, tmp_path):
    t = tmp_path / "t.trace"
    _disksim(t, 5, "1 0 8 8 read\n")
    p = cli("replay", str(t), "--format", "disksim", "--profile", SSD)
    assert p.returncode != 0
    assert f"{t}:6: type: expected request flags" in p.stderr and "Traceback" not in p.stderr
    p = cli("replay", str(t), "--format", "vcd", "--profile", SSD)
    assert p.returncode != 0 and "vcd" in p.stderr


def test_records_past_the_end_fail_unless_wrapped(tmp_path):
    from ssdlab.workload import Replay
    t = tmp_path / "t.trace"
    _disksim(t, 3, "9000000 0 9999999999999 8 1\n")
    with pytest.raises(SimulationError, match=r":4: offset: .* past the end"):
        ssdlab.api.execute(ssdlab.api.build(None, profile=SSD, replay=[(Replay(path=str(t), format="disksim"), None, 8)]))
    r = ssdlab.api.execute(ssdlab.api.build(None, profile=SSD,
                                             replay=[(Replay(path=str(t), format="disksim", wrap=True), None, 8)]))
    assert r.to_fio_json()["jobs"][0]["read"]["total_ios"] == 3


def test_replay_to_a_device_the_system_lacks_is_named(cli, tmp_path):
    t = tmp_path / "t.trace"
    _disksim(t, 2)
    sysf = tmp_path / "sys.toml"
    sysf.write_text(f'[[drive]]\nname = "sda"\nprofile = "{SSD}"\n')
    p = cli("replay", str(t), "--format", "disksim", "--system", str(sysf), "--map", "0=sdz")
    assert p.returncode == 2
    assert "replay to /dev/sdz: no such device in the system (it has /dev/sda)" in p.stderr
