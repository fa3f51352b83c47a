"""fio jobs on a file system (``--fs``): jobs that name no device run on their own files
through the file layer; without ``--fs`` the jobs that ask for files do (issue 29) and the
others run on the raw device as before."""

from __future__ import annotations

import json

import pytest

from ssdlab import api

JOB = """[global]
ioengine=psync
[w]
rw=write
bs=64k
nrfiles=4
filesize=16m
end_fsync=1
file_service_type=sequential
"""


def test_only_a_write_only_job_without_overwrite_has_its_files_laid_out_unwritten():
    for rw, extra, unwritten in [("write", "", True), ("randwrite", "", True), ("randwrite", "overwrite=1\n", False),
                                 ("randrw", "", False), ("read", "", False)]:
        spec = api.build(f"[j]\nrw={rw}\nbs=4k\nsize=1m\n{extra}", profile="samsung-850-pro", filesystem="ext4")
        assert spec.core["file_sets"][0].get("unwritten", False) is unwritten, (rw, extra)


def test_a_job_runs_on_its_files_through_the_page_cache():
    spec = api.build(JOB, profile="samsung-850-pro", filesystem="ext4")
    assert spec.core["file_sets"] == [{"name": "w.0", "target": 0, "dir": "/w.0", "entries": 4,
                                       "size": {"kind": "fixed", "bytes": 16 << 20}, "dir_width": 0,
                                       "prealloc": 1.0, "maps_cached": True,  # laid out just before
                                       "unwritten": True}]  # write-only: fallocated
    files = spec.core["jobs"][0]["files"]
    assert files["direct"] is False and files["end_fsync"] is True and files["service"] == "sequential"
    # the warnings of the raw path about buffered I/O and files are answered
    assert not any("buffered" in w or "nrfiles" in w or "end_fsync" in w for w in spec.warnings), spec.warnings
    assert spec.notes == ["job 'w' runs on files through the page cache and ext4 on /dev/sda: 4 files of 16,777,216 "
                          "bytes (16.0MiB) each in /w.0"]
    r = api.execute(spec)
    f = r.core["files"]
    assert f["dirtied_pages"] == 16384  # 64 MiB, each file to its end in turn
    assert f["written_back_pages"] == 16384 and f["dirty_pages_at_end"] == 0  # end_fsync
    assert r.core["jobs"][0]["write"]["bytes"] == 64 << 20


def test_direct_io_on_files_skips_the_cache():
    spec = api.build(JOB.replace("[w]", "[w]\ndirect=1"), profile="samsung-850-pro", filesystem="ext4")
    assert spec.notes == ["job 'w' runs on files with O_DIRECT and ext4 on /dev/sda: 4 files of 16,777,216 bytes "
                          "(16.0MiB) each in /w.0"]
    f = api.execute(spec).core["files"]
    assert f["dirtied_pages"] == 0 and f["data_bios"] > 0


def test_a_device_job_stays_on_the_device_and_without_fs_nothing_changes():
    raw = "[r]\nfilename=/dev/sda\nrw=randread\nbs=4k\nnumber_ios=1000\ndirect=1\n"
    spec = api.build(raw + JOB.replace("[global]\nioengine=psync\n", ""), profile="samsung-850-pro",
                     filesystem="ext4")
    assert spec.core["jobs"][0]["files"] is None and spec.core["jobs"][1]["files"] is not None
    assert spec.notes[0] == "job 'r' runs on the raw device /dev/sda"
    plain = api.build(raw, profile="samsung-850-pro")
    assert plain.core["file_sets"] == [] and plain.core["jobs"][0]["files"] is None
    assert plain.notes == [] and plain.filesystems == []


def test_an_unmodelled_service_type_says_what_runs():
    spec = api.build(JOB.replace("sequential", "zipf:1.2"), profile="samsung-850-pro", filesystem="ext4")
    assert spec.core["jobs"][0]["files"]["service"] == "random"
    assert any("file_service_type=zipf:1.2: simulated as random" in w for w in spec.warnings)


def test_ssdlab_run_fs_runs_a_fio_job_on_files(tmp_path, cli):
    job = tmp_path / "j.fio"
    job.write_text(JOB)
    r = cli("run", str(job), "--profile", "samsung-850-pro", "--fs", "ext4", "--output-format", "json")
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["jobs"][0]["write"]["io_bytes"] == 64 << 20
    bad = cli("run", str(job), "--profile", "samsung-850-pro", "--fs", "zfs")
    assert bad.returncode == 2 and "--fs zfs: expected ext3 or ext4" in bad.stderr
    assert "ssdlab: job 'w' runs on files" in r.stderr


def _array_read_kib(system, host_set=None) -> float:
    """Mean read request (KiB) at the array of a buffered sequential read of one file (without
    fio's POSIX_FADV_SEQUENTIAL, which would double the window)."""
    spec = api.build("[r]\nioengine=psync\nrw=read\nbs=4k\nsize=64m\nfadvise_hint=0\n", system=system,
                     profile=None if system else "samsung-850-pro", filesystem="ext4", host_set=host_set)
    disk = api.execute(spec).core["devices"][0]["disk"]
    return disk["read_sectors"] / disk["read_ios"] / 2


def test_md_reads_ahead_twice_its_stripe(tmp_path):
    """md raises an array's read-ahead to two stripes of data (raid0_run / blk_apply_bdi_limits);
    a mirror has no stripe; the array's own read_ahead_kb wins."""
    from ssdlab.system import raid

    # 4 x 64 KiB of data a stripe: 512 KiB windows (the first, sized from the first read, smaller)
    assert 480 < _array_read_kib(raid("samsung-850-pro", 0, 4, chunk="64k")) <= 512
    assert 480 < _array_read_kib(raid("samsung-850-pro", 5, 5, chunk="64k")) <= 512  # 4 data members
    assert 240 < _array_read_kib(raid("samsung-850-pro", 10, 4, chunk="64k")) <= 256  # 2 copies each
    assert 120 < _array_read_kib(raid("samsung-850-pro", 1, 2)) <= 128  # the host's 128 KiB
    # on a drive, its queue's read_ahead_kb is the file system's
    assert 240 < _array_read_kib(None, {"queue.read_ahead_kb": "256"}) <= 256
    # the drives' queue settings are the members', not the array's
    assert 480 < _array_read_kib(raid("samsung-850-pro", 0, 4, chunk="64k"), {"queue.read_ahead_kb": "16"}) <= 512
    drives = "".join(f'[[drive]]\nname = "sd{c}"\nprofile = "samsung-850-pro"\n' for c in "abcd")
    path = tmp_path / "md.toml"
    path.write_text(drives + '[[array]]\nname = "md0"\nlevel = 0\nchunk = "64k"\nmembers = ["sda", "sdb", "sdc", "sdd"]\n'
                    "read_ahead_kb = 128\n")
    assert 120 < _array_read_kib(str(path)) <= 128
    path.write_text(path.read_text().replace("read_ahead_kb = 128", "read_ahead_kb = -1"))
    with pytest.raises(ValueError, match=r"md.toml:\d+: key 'array.0.read_ahead_kb'"):
        api.build("[r]\nrw=read\nsize=1m\n", system=str(path), filesystem="ext4")


@pytest.mark.parametrize("hint, rw, advice", [
    (None, "read", "sequential"), (None, "randread", "random"), ("1", "rw", "sequential"),
    ("0", "read", None), ("random", "read", "random"), ("sequential", "randread", "sequential")])
def test_fadvise_hint_gives_fios_advice(hint, rw, advice):
    opt = f"fadvise_hint={hint}\n" if hint is not None else ""
    spec = api.build(f"[r]\nrw={rw}\nbs=4k\nsize=4m\n{opt}", profile="samsung-850-pro", filesystem="ext4")
    assert spec.core["jobs"][0]["files"].get("fadvise") == advice


def test_fios_sequential_advice_doubles_the_read_ahead_window():
    # fio advises POSIX_FADV_SEQUENTIAL unless fadvise_hint=0; the kernel then reads ahead twice
    # read_ahead_kb (mm/fadvise.c): 4 KiB reads of a 4 MiB file go out in 256 KiB requests
    # after the ramp, 128 KiB ones without the advice.
    def mean_request_kib(extra: str) -> float:
        d = api.execute(api.build(f"[r]\nrw=read\nbs=4k\nsize=4m\n{extra}", profile="samsung-850-pro",
                                  filesystem="ext4")).core["devices"][0]["disk"]
        return d["read_sectors"] / 2 / d["read_ios"]

    assert mean_request_kib("") == 4096 / (4 + (1024 - 60) // 64 + 1)
    assert mean_request_kib("fadvise_hint=0\n") == 4096 / (3 + (1024 - 28 + 31) // 32)


def test_fadvise_hint_is_modelled_on_files_and_said_unmodelled_on_a_device():
    on_files = api.build("[r]\nrw=read\nsize=1m\nfadvise_hint=0\n", profile="samsung-850-pro", filesystem="ext4")
    assert not any("fadvise_hint" in w for w in on_files.warnings), on_files.warnings
    raw = api.build("[r]\nfilename=/dev/sda\nrw=read\nsize=1m\ndirect=1\nfadvise_hint=0\n", profile="samsung-850-pro")
    assert raw.core["jobs"][0]["files"] is None  # the hint alone does not put a job on files
    said = [w for w in raw.warnings if "fadvise_hint" in w]
    assert len(said) == 1 and said[0].endswith(":6: option 'fadvise_hint=0' is accepted but not modelled"), said


def test_fdatasync_on_files_commits_for_new_blocks_only_where_fsync_commits_for_new_times():
    # Random overwrites of a laid-out file, a flush after every 8: fsync=8 logs the file's
    # new times (a journal commit) at each; fdatasync=8 has only data to write, so commits
    # nothing (ext4_sync_file waits for i_datasync_tid, which only a new size or new blocks
    # move).
    def run(flush: str) -> dict:
        job = f"[w]\nrw=randwrite\noverwrite=1\nbs=4k\nsize=4m\nnumber_ios=256\n{flush}=8\n"
        spec = api.build(job, profile="samsung-850-pro", filesystem="ext4")
        assert spec.core["jobs"][0]["files"]["datasync"] is (flush == "fdatasync")
        return api.execute(spec).core

    fsync, fdatasync = run("fsync"), run("fdatasync")
    flushes = fsync["jobs"][0]["sync"]["ios"]
    assert flushes >= 31 and fdatasync["jobs"][0]["sync"]["ios"] == flushes
    assert fsync["files"]["commits"] >= flushes // 2, fsync["files"]
    assert fdatasync["files"]["commits"] == 0, fdatasync["files"]
