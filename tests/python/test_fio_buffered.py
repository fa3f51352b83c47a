"""Issue 29: a fio job that asks for files (buffered I/O, fio's default when ``direct`` is not
set; file options; a metadata engine) and names no block device runs through the file layer
on a file system made on the first device, the host profile's by default; a job with
``direct=1`` and no file options runs on the raw device exactly as before."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

import ssdlab
from digests import without
from ssdlab import api
from ssdlab.config import load_host

#: 1 MiB read four times over, 4 KiB at a time
READ = "[r]\nrw=read\nbs=4k\nsize=1m\nloops=4\n"


def _run(job: str, **kw):
    spec = api.build(job, profile="samsung-850-pro", **kw)
    return spec, api.execute(spec).core


def test_direct_unset_reads_through_the_page_cache_and_direct_1_reads_the_device():
    spec, core = _run(READ)
    assert spec.core["jobs"][0]["files"] is not None and spec.core["file_sets"][0]["dir"] == "/r.0"
    assert spec.core["targets"][0]["filesystem"]["type"] == "ext4"
    assert spec.notes == ["job 'r' runs on files through the page cache and ext4 on /dev/sda: 1 file of 1,048,576 "
                          "bytes (1.0MiB) in /r.0"]
    f = core["files"]
    # the first pass misses once and reads ahead; the other three are served from memory
    assert f["cache_hits"] >= 3 * 256 and f["cache_misses"] >= 1
    buffered_sectors = core["devices"][0]["disk"]["read_sectors"]
    assert core["jobs"][0]["read"]["bytes"] == 4 << 20
    raw_spec, raw = _run(READ + "direct=1\n")
    assert raw_spec.core["jobs"][0]["files"] is None and "files" not in raw and raw_spec.core["file_sets"] == []
    assert raw_spec.core["targets"][0]["filesystem"] is None
    assert raw_spec.notes == []  # no file system in the run: raw throughout, as before
    assert raw["devices"][0]["disk"]["read_sectors"] == 4 * 2048
    # the device reads the file once (and some metadata), not four times
    assert buffered_sectors <= 2048 + 64 < raw["devices"][0]["disk"]["read_sectors"]


#: sha256 of the core's result and the warnings of raw jobs (direct=1, no file options, no
#: device named; a trim job with direct unset), taken on the tree before issue 29 (52bddee).
BEFORE = {
    "[global]\ndirect=1\nbs=4k\n[r]\nrw=randread\nnumber_ios=2000\nioengine=libaio\niodepth=4\n[w]\nrw=write\nsize=8m\n":
        "057026e81f13ac25406b1adfab4be4d72ec036cf8a310d750aa007c5b61ebffb",
    "[t]\nrw=trim\nbs=64k\nsize=8m\n": "a484b61d0242bcecbca98d0cc17601194769cef764ee94d0d4b265cb7b70f264",
}


@pytest.mark.parametrize("job", list(BEFORE), ids=["direct", "trim"])
def test_a_raw_job_is_bit_for_bit_what_it_was(job):
    spec, core = _run(job)
    assert spec.core["file_sets"] == [] and all(t["filesystem"] is None for t in spec.core["targets"])
    # The slat and lat histograms behind fio's slat_percentiles and lat_percentiles came since.
    kept = without(core, ("slat_hist", "lat_hist"))
    assert hashlib.sha256(json.dumps({"core": kept}, sort_keys=True).encode()).hexdigest() == BEFORE[job]



def test_the_host_profiles_default_file_system_is_made():
    spec = api.build(READ, profile="intel-x25-m-80", host="server-2008")
    assert spec.core["targets"][0]["filesystem"]["type"] == "ext3"
    assert spec.filesystems == ["/dev/sda: ext3 from the host profile server-2008 (its memory.filesystem)"]
    assert spec.notes[0].startswith("job 'r' runs on files through the page cache and ext3 on /dev/sda")
    assert load_host("generic-linux")[0].default_filesystem() == ("ext4", "its memory.filesystem")
    # --fs wins over the host's
    spec = api.build(READ, profile="intel-x25-m-80", host="server-2008", filesystem="ext4")
    assert spec.core["targets"][0]["filesystem"]["type"] == "ext4"


def _host(tmp_path: Path, memory: bool, filesystem: bool = True, era: str = "today") -> Path:
    text = (Path(ssdlab.__file__).parent / "profiles" / "hosts" / "generic-linux.toml").read_text()
    text = text.replace('name = "generic-linux"', 'name = "mine"').replace(
        'era = { value = "today"', f'era = {{ value = "{era}"')
    if not memory:
        text = text[:text.index("[memory]")]
    if not filesystem:
        text = "\n".join(line for line in text.splitlines() if not line.startswith("filesystem ="))
    path = tmp_path / "mine.toml"
    path.write_text(text)
    return path


def test_a_host_profile_without_its_own_file_system_takes_its_eras(tmp_path):
    for era, kind in (("2008", "ext3"), ("today", "ext4")):
        spec = api.build(READ, profile="intel-x25-m-80", host=str(_host(tmp_path, True, False, era)))
        assert spec.core["targets"][0]["filesystem"]["type"] == kind
        assert spec.filesystems == [f"/dev/sda: {kind} from the host profile mine (the default of its era, {era})"]


def test_a_host_without_memory_refuses_a_buffered_job_in_one_line_and_runs_direct_ones(tmp_path):
    host = str(_host(tmp_path, memory=False))
    with pytest.raises(ValueError) as e:
        api.build(READ, profile="intel-x25-m-80", host=host)
    said = str(e.value)
    assert "\n" not in said and said.startswith("host mine: job 'r' runs on files through the page cache")
    assert "add a [memory] table to the host profile, or set direct=1" in said
    spec = api.build(READ + "direct=1\n", profile="intel-x25-m-80", host=host)
    assert spec.core["jobs"][0]["files"] is None


def test_a_buffered_job_on_a_block_device_reads_through_the_devices_own_page_cache():
    spec, core = _run(READ.replace("[r]\n", "[r]\nfilename=/dev/sda\n"))
    (dev_set,) = spec.core["file_sets"]
    assert dev_set["block_device"] and dev_set["target"] == 0 and dev_set["entries"] == 1
    assert spec.core["targets"][0]["filesystem"] is None  # no file system made
    assert spec.notes == ["job 'r' runs on /dev/sda through its own page cache (buffered, no file system)"]
    assert not [w for w in spec.warnings if "buffered" in w or "direct" in w], spec.warnings
    f = core["files"]
    assert f["cache_hits"] >= 3 * 256 and f["metadata_bios"] == 0, f
    # the first MiB read once, with what read-ahead had under way past it (fio's advice
    # doubles the window to 256 KiB: at most two windows ahead), not four times over
    assert 2048 <= core["devices"][0]["disk"]["read_sectors"] <= 2048 + 1024
    assert core["devices"][0]["disk"]["write_sectors"] == 0


def test_a_buffered_block_device_job_stays_raw_where_the_device_cache_is_not_modelled(tmp_path):
    job = READ.replace("[r]\n", "[r]\nfilename=/dev/sda\n")
    # A host without memory: no page cache at all.
    spec = api.build(job, profile="samsung-850-pro", host=str(_host(tmp_path, memory=False)))
    assert spec.core["file_sets"] == [] and spec.core["jobs"][0]["files"] is None
    assert any("the host profile describes no memory, so the device's page cache is not modelled; "
               "simulated as direct=1" in w for w in spec.warnings), spec.warnings
    # A file system named for the run (--fs): no second cache beside it.
    spec, core = _run(job, filesystem="ext4")
    assert spec.core["jobs"][0]["files"] is None
    assert any("the run mounts a file system" in w for w in spec.warnings), spec.warnings
    assert core["devices"][0]["disk"]["read_sectors"] == 4 * 2048


def test_the_cli_header_names_each_jobs_path(cli, tmp_path):
    job = tmp_path / "two.fio"
    job.write_text("[global]\nbs=4k\nsize=1m\n[buffered]\nrw=read\n[raw]\nrw=read\ndirect=1\nfilename=/dev/sda\n")
    p = cli("run", str(job), "--profile", "samsung-850-pro")
    assert p.returncode == 0, p.stderr
    assert ("ssdlab: job 'buffered' runs on files through the page cache and ext4 on /dev/sda: 1 file of 1,048,576 "
            "bytes (1.0MiB) in /buffered.0") in p.stderr
    assert "ssdlab: job 'raw' runs on the raw device /dev/sda" in p.stderr
    assert "ssdlab: file system on /dev/sda: ext4 from the host profile" in p.stderr


def test_the_hosts_file_system_is_made_on_the_first_device_only(tmp_path):
    # fio's files are on the first device; a job on another stays on its raw device, whose
    # results the file system must not touch.
    system = tmp_path / "two.toml"
    system.write_text('host = "server-2008"\n[[drive]]\nname = "sda"\nprofile = "intel-x25-m-80"\n'
                      '[[drive]]\nname = "sdb"\nprofile = "intel-x25-m-80"\n')
    spec = api.build(READ + "[d]\nfilename=/dev/sdb\ndirect=1\nrw=read\nbs=4k\nsize=1m\n", system=str(system))
    assert [t["filesystem"] and t["filesystem"]["type"] for t in spec.core["targets"]] == ["ext3", None]
    assert spec.filesystems == ["/dev/sda: ext3 from the host profile server-2008 (its memory.filesystem)"]
    assert spec.notes[1] == "job 'd' runs on the raw device /dev/sdb"


def test_files_on_the_first_device_and_a_second_devices_own_cache_in_one_run(tmp_path):
    system = tmp_path / "two.toml"
    system.write_text('[[drive]]\nname = "sda"\nprofile = "samsung-850-pro"\n'
                      '[[drive]]\nname = "sdb"\nprofile = "samsung-850-pro"\n')
    job = ("[global]\nrw=read\nbs=4k\nsize=1m\n[f]\n[b]\nfilename=/dev/sdb\n[a]\nfilename=/dev/sda\n")
    spec = api.build(job, system=str(system))
    files, dev = spec.core["file_sets"]
    assert files["target"] == 0 and not files.get("block_device")
    assert dev["target"] == 1 and dev["block_device"]
    assert spec.core["targets"][0]["filesystem"] is not None and spec.core["targets"][1]["filesystem"] is None
    # sda holds the files' file system: the buffered job on it stays raw, and says why
    assert [j["files"] is not None for j in spec.core["jobs"]] == [True, True, False]
    assert any("the run mounts a file system" in w for w in spec.warnings), spec.warnings
    core = api.execute(spec).core
    assert core["devices"][1]["disk"]["read_sectors"] >= 2048 and core["devices"][1]["disk"]["write_sectors"] == 0
