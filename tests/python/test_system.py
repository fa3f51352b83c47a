"""A run is a system: one host, several drives named as Linux names them, fio's filename=
choosing among them; a run is built (plain data) apart from being executed."""

import json

import pytest

import ssdlab
from ssdlab import ProfileError, SystemFileError
from ssdlab.fio import FioJobError
from ssdlab.api import RunSpec, build, execute

TWO = """
host = "generic-linux"
[[drive]]
name = "sda"
profile = "samsung-850-pro"
[[drive]]
name = "sdb"
profile = "samsung-850-pro"
"""

JOB = """
[global]
direct=1
rw=randread
bs=4k
iodepth=4
size=64m
number_ios=3000
[a]
filename=/dev/sda
[b]
filename=/dev/sdb
rw=randwrite
number_ios=1000
[c]
"""


@pytest.fixture
def two(tmp_path):
    f = tmp_path / "system.toml"
    f.write_text(TWO)
    return f


def test_two_drives_each_with_its_own_jobs_and_counters(two):
    r = ssdlab.run(JOB, system=two, seed=3)
    fio = r.to_fio_json()
    assert [d["name"] for d in fio["disk_util"]] == ["sda", "sdb"]
    assert [d["name"] for d in fio["ssdlab"]["devices"]] == ["sda", "sdb"]
    assert [d["name"] for d in fio["ssdlab"]["iostat"]] == ["sda", "sdb"]
    sda, sdb = fio["disk_util"]
    # Job a and job c (no filename: the first drive) read sda; job b writes sdb.
    assert (sda["read_ios"], sda["write_ios"]) == (6000, 0)
    assert (sdb["read_ios"], sdb["write_ios"]) == (0, 1000)
    assert r.internal("sdb")["host_bytes_written"] == 1000 * 4096
    assert r.internal("sda")["host_bytes_written"] == 0
    assert list(r.iostat_table().index) == ["sda", "sdb"]
    assert fio["ssdlab"]["host"] == "generic-linux"


def test_cli_system_json(cli, two, tmp_path):
    job = tmp_path / "j.fio"
    job.write_text(JOB)
    p = cli("run", str(job), "--system", str(two), "--output-format", "json")
    assert p.returncode == 0, p.stderr
    d = json.loads(p.stdout)
    assert [x["name"] for x in d["disk_util"]] == ["sda", "sdb"]
    assert [x["name"] for x in d["ssdlab"]["devices"]] == ["sda", "sdb"]


def _one_line(e) -> str:
    text = str(e.value)
    assert "\n" not in text
    return text


@pytest.mark.parametrize("text, line, needle", [
    (TWO.replace('name = "sdb"', 'name = "sdb"\nprofil = "x"'), 8, "unknown key 'drive.1.profil'"),
    (TWO.replace('name = "sdb"', 'name = "sda"'), None, "device name 'sda' is used twice"),
    (TWO.replace('host = "generic-linux"', 'hots = "generic-linux"'), 2, "unknown key 'hots'"),
    (TWO.replace('profile = "samsung-850-pro"\n[[drive]]', 'profile = "no-such-drive"\n[[drive]]'), 5,
     "unknown profile 'no-such-drive'"),
    (TWO.replace('name = "sdb"', 'name = "sdb"\nscale = 2'), 8, "key 'drive.1.scale'"),
    # true was taken as scale 1: the whole drive, without a word
    (TWO.replace('name = "sdb"', 'name = "sdb"\nscale = true'), 8, "key 'drive.1.scale': true: expected a number"),
    (TWO.replace('host = "generic-linux"', 'host = "no-such-host"'), 2, "unknown host 'no-such-host'"),
])
def test_bad_system_files_name_file_line_and_key(tmp_path, text, line, needle):
    f = tmp_path / "bad.toml"
    f.write_text(text)
    with pytest.raises(SystemFileError) as e:
        build(JOB, system=f)
    msg = _one_line(e)
    assert needle in msg
    assert msg.startswith(f"{f}:{line}:" if line else f"{f}")


def test_filename_naming_no_device_is_an_error_at_its_line(two):
    job = "[j]\nrw=read\nsize=1m\nfilename=/dev/sdz\n"
    with pytest.raises(FioJobError) as e:
        build(job, system=two)
    assert _one_line(e).startswith("<job text>:4: option 'filename': /dev/sdz names no device")


def test_profile_alone_is_a_one_drive_system_answering_to_any_dev_name():
    # fio's own examples name /dev/sdb and the like: on one drive they mean that drive.
    r = ssdlab.run("[j]\nrw=read\nsize=1m\nfilename=/dev/sdb\ndirect=1\n", profile="samsung-850-pro")
    assert r.device_names == ["sda"]
    assert r.device["disk"]["read_sectors"] * 512 == 1 << 20
    assert not any("one simulated device" in w for w in r.warnings)  # a single name is no news


def test_mixed_kinds_in_one_system(tmp_path):
    f = tmp_path / "mixed.toml"
    f.write_text('[[drive]]\nname = "nvme0n1"\nprofile = "samsung-970-pro-512"\nscale = 0.05\n'
                 '[[drive]]\nname = "nvme1n1"\nprofile = "intel-optane-905p-480"\n')
    job = ("[global]\nrw=randwrite\nbs=4k\nsize=32m\nnumber_ios=500\ndirect=1\n"
           "[n]\nfilename=/dev/nvme0n1\n[o]\nfilename=/dev/nvme1n1\n")
    r = ssdlab.run(job, system=f)
    kinds = {d["name"]: d["internal"]["kind"] for d in r.devices}
    assert kinds == {"nvme0n1": "nand-ssd", "nvme1n1": "in-place"}
    assert r.internal("nvme1n1")["waf"] == 1.0
    assert r.internal("nvme0n1")["total_blocks"] > 0 and r.internal("nvme1n1")["total_blocks"] == 0


def test_a_run_spec_is_plain_data_that_executes_anywhere():
    spec = build(JOB.replace("filename=/dev/sdb", ""), profile="samsung-850-pro", seed=2)
    text = spec.model_dump_json()
    again = RunSpec.model_validate_json(text)
    a, b = execute(spec), execute(again)
    assert a.core == b.core
    assert a.to_pandas().equals(b.to_pandas())


def test_core_errors_name_the_key_the_user_wrote():
    # A 6 KiB page cannot hold whole 4 KiB indirection units: the core finds it; the message
    # names the profile's keys (not the core's) and the override that caused it.
    with pytest.raises(ProfileError) as e:
        build("[j]\nsize=1m\n", profile="samsung-850-pro", profile_set={"nand.page_size": "6KiB"})
    msg = _one_line(e)
    assert "key 'ftl.indirection_unit'" in msg
    assert "--profile-set nand.page_size=6KiB" in msg
    assert "iu_bytes" not in msg
    # A key the override names directly is reported as that override.
    with pytest.raises(ProfileError) as e:
        build("[j]\nsize=1m\n", profile="samsung-850-pro", profile_set={"nand.read_time": "0us"})
    assert "--profile-set nand.read_time=0us: key 'nand.read_time'" in _one_line(e)
