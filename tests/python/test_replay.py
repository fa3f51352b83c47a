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


def _one_line(p, *parts: str) -> None:
    assert p.returncode == 2, (p.returncode, p.stderr)
    assert p.stderr.count("\n") == 1 and p.stderr.startswith("ssdlab: error: "), p.stderr
    assert "Traceback" not in p.stderr and "internal model error" not in p.stderr, p.stderr
    for part in parts:
        assert part in p.stderr, (part, p.stderr)


@pytest.mark.parametrize("fmt", ["fio", "disksim", "msr", "snia", "blkparse"])
def test_an_empty_trace_is_an_error_in_every_format(cli, tmp_path, fmt):
    t = tmp_path / "empty.trace"
    t.write_text("")
    p = cli("replay", str(t), "--format", fmt)
    _one_line(p, str(t))


def test_a_replay_with_nothing_to_replay_is_an_error(cli, tmp_path):
    import random

    from ssdlab.workload import Replay

    noise = tmp_path / "noise.bin"
    noise.write_bytes(bytes(random.Random(1).randrange(256) for _ in range(4000)))
    _one_line(cli("replay", str(noise), "--format", "blkparse"), f"{noise}: no records to replay", "not blkparse events")
    t = tmp_path / "t.trace"
    _disksim(t, 4)
    _one_line(cli("replay", str(t), "--format", "disksim", "--map", "5=sda"),
              f"{t}: no records of device 5 (its devices: 0 (2 records), 1 (2 records))")
    _one_line(cli("replay", str(t), "--format", "disksim", "--iodepth", "0"), "--iodepth 0: expected at least 1")
    with pytest.raises(ValueError, match="no records to replay"):
        ssdlab.api.build(None, profile=SSD, replay=[(Replay(path=str(noise), format="blkparse"), None, 8)])


def test_a_replay_says_what_it_read_and_skipped(cli, tmp_path):
    t = tmp_path / "blk.txt"
    t.write_text("  8,0 3 1 0.000000000 697 Q WS 3417048 + 8 [kw]\n"
                 "8;0 3 2 0.100000000 697 Q WS 1 + 8 [kw]\n"           # damaged: not an event any more
                 "  8,0 3 3 0.200000000 697 D WS 1 + 8 [kw]\n"
                 "  8,0 3 4 0.300000000 697 Q R 100 + 8 [kw]\n\nCPU0 (8,0):\n")
    p = cli("replay", str(t), "--format", "blkparse", "--timing", "closed:4")
    assert p.returncode == 0, p.stderr
    assert (f"ssdlab: {t}: 2 records read; lines skipped: 1 blank, first on line 5; 2 not blkparse events (its "
            "summaries, or damaged), first on line 2; 1 events of other actions, first on line 3") in p.stderr
    assert f"ssdlab: warning: {t}: line 2, among its records, is one of 2 lines not blkparse events" in p.stderr


@pytest.mark.parametrize("times, timing", [
    (("0", "10000000000000000000"), "recorded"),
    (("0", "18446744073709551615"), "recorded"),
    (("0", "6000000000000000000"), "scaled:0.5"),
])
def test_a_time_past_the_simulated_clock_is_named_with_its_line(cli, tmp_path, times, timing):
    t = tmp_path / "t.disksim"
    t.write_text("".join(f"{s} 0 {8 * i} 8 1\n" for i, s in enumerate(times)))
    _one_line(cli("replay", str(t), "--format", "disksim", "--timing", timing),
              f"{t}:2: timestamp: {times[1]} ns after the first record", "past the end of the simulated clock")


@pytest.mark.parametrize("timing", ["scaled:inf", "scaled:nan", "scaled:0", "scaled:-1"])
def test_a_speed_must_be_positive_and_finite(cli, tmp_path, timing):
    t = tmp_path / "t.trace"
    _disksim(t, 2)
    _one_line(cli("replay", str(t), "--format", "disksim", "--timing", timing),
              f"--timing '{timing}': expected recorded, scaled:X (X a positive, finite factor)")


def test_a_trace_of_several_devices_on_one_target_says_so(cli, tmp_path):
    t = tmp_path / "t.trace"
    _disksim(t, 20)  # devices 0 and 1
    p = cli("replay", str(t), "--format", "disksim", "--profile", SSD)
    assert p.returncode == 0, p.stderr
    assert f"ssdlab: warning: {t}: records of 2 devices (ids 0, 1) all replay on one target; --map ID=TARGET " \
           "replays each on its own" in p.stderr.splitlines()
    p = cli("replay", str(t), "--format", "disksim", "--profile", SSD, "--map", "0=sda")
    assert p.returncode == 0 and "all replay on one target" not in p.stderr


def test_the_header_says_what_the_trace_sends(cli, tmp_path):
    t = tmp_path / "t.trace"
    _disksim(t, 20)  # device 0 reads 4 KiB, device 1 writes 4 KiB
    p = cli("replay", str(t), "--format", "disksim", "--profile", SSD)
    assert p.returncode == 0, p.stderr
    assert p.stdout.splitlines()[0].startswith("replay: (g=0): rw=rw, bs=(R) 4096B-4096B, (W) 4096B-4096B, "
                                               "(T) 4096B-4096B, ioengine=libaio")
    p = cli("replay", str(t), "--format", "disksim", "--profile", SSD, "--map", "1=sda")
    assert p.stdout.splitlines()[0].startswith("replay: (g=0): rw=write, bs=(R) 4096B-4096B, (W) 4096B-4096B")
    t.write_text("1000000 0 0 1 1\n2000000 0 8 16 1\n")  # reads of 512 B and 8 KiB
    p = cli("replay", str(t), "--format", "disksim", "--profile", SSD)
    assert p.stdout.splitlines()[0].startswith("replay: (g=0): rw=read, bs=(R) 512B-8192B, (W) 4096B-4096B")
