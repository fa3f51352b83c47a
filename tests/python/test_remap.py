"""A write-remapping layer in a system file (seed 000's MFT), the power cut, and the seed 000
reproduction's trends."""

import json

import pytest

import ssdlab
from ssdlab import SystemFileError
from ssdlab.api import build, execute
from ssdlab.system import load_system, single, with_remap

SYSTEM = """
host = "server-2008"
[[drive]]
name = "sda"
profile = "intel-x25-m-80"
scale = 0.05
precondition = "sequential"
[[drive]]
name = "sdb"
profile = "intel-x25-m-80"
scale = 0.05
[[remap]]
name = "mft0"
drive = "sda"
buffer = "16m"
"""

WRITES = """
[w]
filename=/dev/mft0
ioengine=libaio
direct=1
rw=randwrite
bs=4k
iodepth=4
size=1g
io_size=32m
"""


@pytest.fixture
def system(tmp_path):
    f = tmp_path / "system.toml"
    f.write_text(SYSTEM)
    return f


def test_the_layer_is_a_target_over_its_drive_and_reports_its_log(system):
    sysd = load_system(system)
    assert sysd.names == ["mft0", "sdb"], "the layer, then drives under nothing"
    r = ssdlab.run(WRITES, system=system, seed=1)
    d = r.core["devices"][0]
    assert (d["name"], d["internal"]["kind"]) == ("mft0", "remap")
    assert [m["name"] for m in d["members"]] == ["sda"]
    remap = d["internal"]["remap"]
    assert remap["host_write_bytes"] == 32 << 20
    assert remap["buffer_bytes"] == 16 << 20
    # The drive sees the log's large writes, not 4 KiB ones.
    sda = d["members"][0]["disk"]
    assert sda["write_sectors"] * 512 / sda["write_ios"] > 256 * 1024
    row = r.to_fio_json()["ssdlab"]["devices"][0]
    assert row["kind"] == "remap" and row["members"] == ["sda"]
    from ssdlab.fioout import format_report

    text = format_report(r, "normal")
    assert "Remapping layer mft0 (over sda; 16.0MiB buffer, 1.0MiB segments)" in text


@pytest.mark.parametrize("change, expected", [
    ('drive = "sdc"', "remap 'mft0': no drive 'sdc' in the system"),
    ('buffer = "16m"\nreserve = 2', "reserve"),
    ('buffer = "16m"\nsegment = "lots"', "segment"),
    ('buffer = "16m"\nsegment = "32m"', "buffer_bytes: must hold at least one segment"),
])
def test_bad_remap_entries_are_one_line_naming_file_line_and_key(tmp_path, change, expected):
    old = 'drive = "sda"' if change.startswith("drive") else 'buffer = "16m"'
    f = tmp_path / "system.toml"
    f.write_text(SYSTEM.replace(old, change))
    with pytest.raises(SystemFileError) as e:
        load_system(f)
    msg = str(e.value)
    assert "\n" not in msg and str(f) in msg and expected in msg, msg
    assert f"{f}:" in msg and msg.split(":")[1].isdigit(), "the line number"


def test_a_drive_under_the_layer_takes_neither_another_layer_nor_a_file_system(tmp_path):
    f = tmp_path / "system.toml"
    f.write_text(SYSTEM + '[[remap]]\nname = "mft1"\ndrive = "sda"\n')
    with pytest.raises(SystemFileError, match="drive 'sda' is already under 'mft0'"):
        load_system(f)
    f.write_text(SYSTEM.replace('scale = 0.05\nprecondition', 'scale = 0.05\nfilesystem = "ext4"\nprecondition', 1))
    with pytest.raises(SystemFileError, match="make the file system on /dev/mft0"):
        load_system(f)


SYNC = """
[s]
ioengine=libaio
direct=1
rw=randwrite
bs=4k
iodepth=1
size=1g
fsync=1
runtime=10
time_based=1
"""


def test_a_power_cut_reports_what_the_layer_promised_and_lost(cli, tmp_path, system):
    job = tmp_path / "sync.fio"
    job.write_text(SYNC.replace("[s]", "[s]\nfilename=/dev/mft0"))
    r = cli("run", str(job), "--system", str(system), "--power-cut", "1s")
    assert r.returncode == 0, r.stderr
    assert "Power cut at 1.000 s" in r.stdout
    after = r.stdout.split("Power cut at 1.000 s")[1]
    line = next(x for x in after.splitlines() if x.strip().startswith("mft0:"))
    assert "fsync's promise broken" in line, line
    r = cli("run", str(job), "--system", str(system), "--power-cut", "1s", "--output-format", "json")
    cut = json.loads(r.stdout)["ssdlab"]["power_cut"]
    assert cut["at_ns"] == 1_000_000_000
    mft = cut["devices"][0]
    assert mft["name"] == "mft0" and mft["promised_bytes"] > 0 and mft["broken_flushes"] > 0
    assert [m["name"] for m in mft["members"]] == ["sda"]
    # The drive alone carries each fsync's flush out: nothing it acknowledged as durable is lost.
    job.write_text(SYNC.replace("[s]", "[s]\nfilename=/dev/sdb"))
    r = cli("run", str(job), "--system", str(system), "--power-cut", "1s", "--output-format", "json")
    sdb = json.loads(r.stdout)["ssdlab"]["power_cut"]["devices"][1]
    assert sdb["name"] == "sdb" and sdb["promised_bytes"] == 0


@pytest.mark.parametrize("value, expected", [("0", "expected a time after the start"), ("soon", "power cut 'soon'")])
def test_a_bad_power_cut_is_one_line(cli, value, expected):
    r = cli("run", "--power-cut", value)
    assert r.returncode != 0
    assert expected in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr


def test_an_enterprise_drive_loses_nothing_it_acknowledged_at_a_power_cut():
    job = "[w]\ndirect=1\nrw=randwrite\nbs=4k\niodepth=8\nsize=1g\nruntime=5\ntime_based=1\n"
    for profile, plp in (("samsung-850-pro", False), ("intel-d7-p5510-3.84tb", True)):
        sysd = single(profile, scale=0.01)
        core = execute(build(job, system=sysd, power_cut="0.5s")).core
        lost = core["power_cut"]["devices"][0]["volatile_bytes"]
        assert (lost == 0) == plp, (profile, lost)


def test_with_remap_refuses_bad_options_in_one_line():
    sysd = single("intel-x25-m-80", scale=0.05)
    with pytest.raises(ValueError, match=r"^remap: buffer"):
        with_remap(sysd, buffer="lots")
    with pytest.raises(ValueError, match="no drive 'sdz'"):
        with_remap(sysd, drive="sdz")


def test_seed000_mft_trends_on_short_runs():
    """The reproduction's trends that a 1-second run can show: writes faster through the layer on
    the SSD, and fsync'd data lost at a power cut through it only."""
    from ssdlab.experiments import seed000_mft as m

    alone = m.iops("ssd", False, "randwrite", "4k", 1.0, 0)
    layered = m.iops("ssd", True, "randwrite", "4k", 1.0, 0)
    assert layered.write >= m.WRITE_GAIN * alone.write, (alone, layered)
    cuts = {c: m.power_cut(c, 0) for c in m.CASES}
    assert cuts["mft"].promised_bytes > 0 and cuts["mft"].broken_fsyncs > 0
    assert cuts["ssd alone"].promised_bytes == 0 == cuts["mft honouring flushes"].promised_bytes


def test_seed000_mft_on_the_disk_sustained_is_not_its_burst():
    """A short 4:1 mix on the disk puts its writes in the disk's write cache, which holds them
    for the whole run; after the ramp the cache is full and the writes cost the disk time, so
    the disk alone serves fewer I/Os and the layer gains on it."""
    from ssdlab.experiments import seed000_mft as m

    burst = {layer: m.iops("hdd", layer, "randrw", "4k", 3.0, 0) for layer in (False, True)}
    sustained = {layer: m.iops("hdd", layer, "randrw", "4k", 3.0, 0, m.SUSTAIN_RAMP_S) for layer in (False, True)}
    assert burst[True].total == pytest.approx(burst[False].total, rel=0.02), burst
    assert sustained[False].total < 0.95 * burst[False].total, (burst, sustained)
    assert sustained[True].total > 1.05 * sustained[False].total, sustained
    note = m.sustained_note({"sustained": {("hdd", "randrw", "4k"): sustained}}, [("hdd", "randrw", "4k")])
    assert note.startswith("; not judged, sustained (after a 120 s ramp): hdd randrw 4k:"), note


def test_a_power_cut_during_a_file_workload_counts_the_page_cache_too(cli, tmp_path):
    scenario = tmp_path / "w.toml"
    scenario.write_text("""
name = "writer"
filesystem = { type = "ext4" }
[[fileset]]
name = "f"
dir = "/f"
entries = 200
size = "0"
[[thread]]
name = "w"
loops = 200
ops = [ { op = "create", set = "f", pick = "rotor" }, { op = "append", size = "64k", io = "4k" }, { op = "close" } ]
""")

    r = cli("run", str(scenario), "--profile", "intel-x25-m-80", "--host", "server-2008", "--power-cut", "0.2s",
            "--output-format", "json")
    assert r.returncode == 0, r.stderr
    cut = json.loads(r.stdout)["power_cut"]
    assert cut["at_ns"] == 200_000_000
    # Nothing fsyncs and the 5 s commit has not come: the files' pages are dirty in RAM.
    assert cut["page_cache_dirty_bytes"] > 1 << 20, cut


MAIL = """
[m]
nrfiles=500
filesize=16k
bs=4k
rw=write
fsync=1
numjobs=2
time_based=1
runtime=10
"""


def test_a_power_cut_on_files_names_the_fsynced_files_lost(cli, tmp_path, system):
    job = tmp_path / "mail.fio"
    job.write_text(MAIL)
    r = cli("run", str(job), "--system", str(system), "--fs", "ext4", "--power-cut", "1s", "--output-format", "json")
    assert r.returncode == 0, r.stderr
    fs = json.loads(r.stdout)["ssdlab"]["power_cut"]["file_systems"][0]
    assert fs["target"] == "mft0" and fs["located"]
    # fio rewrites files laid out before the run: data, and no metadata to commit.
    assert fs["promised_files"] > 0 and fs["promised_bytes"] <= fs["data_bytes"], fs
    r = cli("run", str(job), "--system", str(system), "--fs", "ext4", "--power-cut", "1s")
    text = r.stdout.split("file system on mft0:")[1]
    assert f"{fs['promised_files']} of them had returned from fsync" in text, text
    # The drive alone carries every flush out: the file system loses nothing fsync promised.
    r = cli("run", str(job), "--profile", "intel-x25-m-80", "--scale", "0.05", "--fs", "ext4", "--power-cut", "1s",
            "--output-format", "json")
    fs = json.loads(r.stdout)["ssdlab"]["power_cut"]["file_systems"][0]
    assert (fs["promised_files"], fs["transactions_not_replayed"], fs["fsck_needed"]) == (0, 0, False), fs
