"""fio's own example job files and the seed jobs as first transcribed (optional test data
outside the repository, see shared_data.py).

Every file either parses or fails with a FioJobError that names the file, the line and the
option; every file INDEX.md tags [core] (or [core+eng]) must parse.
"""

from __future__ import annotations

import re

import pytest

from shared_data import DATA, needs_shared_data

from ssdlab.fio import FioJobError, JobSet, load_job_file

DEVICE = 4 * 2**40  # big enough for cross-stripe-verify's 30 x 124g stripes
ENV = {"FIO_BS": "4k", "FIO_RW": "randread", "FIO_IODEPTH": "8", "NUMJOBS": "4"}
SHORT = {"runtime": "0.2", "size": "1g"}  # 1g: zbd-rand-write-trim-gc trims 256M blocks

needs_shared = needs_shared_data


def _index() -> dict[str, str]:
    if DATA is None:
        return {}
    tags = {}
    for line in (DATA / "fio-examples" / "INDEX.md").read_text().splitlines():
        m = re.match(r"^(\S+?\.fio)\s*(\[[^\]]+\])", line)
        if m:
            tags[m.group(1)] = m.group(2)
    return tags


TAGS = _index()
ALL = sorted(p.name for p in (DATA / "fio-examples").glob("*.fio")) if DATA else []
CORE = [name for name in ALL if "core" in TAGS.get(name, "")]


def load(name: str, **kw) -> JobSet:
    kw.setdefault("env", ENV)
    kw.setdefault("device_size", DEVICE)
    return load_job_file(DATA / "fio-examples" / name, **kw)


@needs_shared
def test_index_lists_every_example_and_has_core_files():
    assert set(TAGS) == set(ALL)
    assert len(CORE) >= 30


@needs_shared
@pytest.mark.parametrize("name", ALL)
def test_every_example_parses_or_names_file_line_and_option(name):
    try:
        js = load(name)
    except FioJobError as e:
        assert "core" not in TAGS.get(name, ""), f"[core] example failed: {e}"
        assert e.path is not None and e.path.endswith(name)
        assert e.line is not None and e.option is not None
        assert str(e).startswith(f"{e.path}:{e.line}: ")
        return
    assert js.jobs and len(js.job_options) == len(js.jobs)
    for warning in js.warnings:
        assert "\n" not in warning
        assert re.match(r"^\S+:\d+: ", warning), warning


@needs_shared
@pytest.mark.parametrize("name", CORE)
def test_core_examples_parse_shortened(name):
    js = load(name, overrides=SHORT)
    assert all(j.runtime_ns in (None, 200_000_000) for j in js.jobs)
    assert all(j.region_size <= DEVICE for j in js.jobs)


@needs_shared
def test_rand_rw_example():
    js = load("fio-rand-RW.fio")
    assert [j.clone for j in js.jobs] == [0, 3, 2, 1]
    j = js.jobs[0]
    assert (j.rw, j.rwmix_read, j.iodepth, j.time_based, j.runtime_ns) == (
        "randrw", 60.0, 16, True, 900 * 10**9)
    assert {x.region_offset for x in js.jobs} == {0} and j.region_size == 10 * 2**30
    assert js.global_options["rwmixwrite"] == "40"


@needs_shared
def test_jesd219_example():
    js = load("jesd219.fio")
    j = js.jobs[0]
    assert len(js.jobs) == 4 and j.rwmix_read == 40.0 and j.iodepth == 256
    assert len(j.block_sizes[0].split) == 12 and j.block_align[0] == 4096
    assert [(z.access_pct, z.size_pct) for z in j.distribution.zones] == [(50, 5), (30, 15), (20, 80)]
    assert not j.random_map
    assert js.group_reporting == {0: True}


@needs_shared
def test_iometer_file_server_example():
    j = load("iometer-file-access-server.fio").jobs[0]
    assert j.block_sizes[0].split[0] == (512, 10.0)
    assert sum(w for _, w in j.block_sizes[0].split) == pytest.approx(100.0)
    assert (j.rwmix_read, j.iodepth) == (80.0, 64)


@needs_shared
def test_stonewalled_phases():
    js = load("tiobench-example.fio")
    assert len(js.jobs) == 16
    assert sorted({j.group_id for j in js.jobs}) == [0, 1, 2, 3]
    assert js.jobs[4].start_after == [0, 1, 2, 3] and js.jobs[15].start_after == [8, 9, 10, 11]
    assert js.jobs[0].runtime_ns == 60 * 10**9  # timeout is runtime's alias


@needs_shared
def test_wait_for_chain():
    js = load("waitfor.fio")
    by_name = {}
    for i, j in enumerate(js.jobs):
        by_name.setdefault(j.name, []).append(i)
    readers = js.jobs[by_name["readers"][0]]
    assert readers.start_after == by_name["writers"]
    assert js.jobs[by_name["writers2"][0]].start_after == by_name["readers"]
    assert {j.region_size for j in js.jobs} == {128 * 2**20}


@needs_shared
def test_cross_stripe_offsets():
    js = load("cross-stripe-verify.fio")
    offsets = sorted(j.region_offset for j in js.jobs)
    assert offsets == [120 * 1024 + c * 124 * 2**30 for c in range(30)]
    assert js.jobs[0].rw_modifier == 112 * 1024 and js.jobs[0].loops == 2
    assert js.jobs[0].io_limit == 120 * 2**30


@needs_shared
def test_percent_offsets_example():
    js = load("uring-cmd-fdp.fio", device_size=10**12)

    def up(n: int) -> int:  # fio rounds % offsets up to the block size
        return -(-n // 4096) * 4096

    assert [j.region_offset for j in js.jobs] == [0, up(300 * 10**9), up(600 * 10**9)]
    assert {j.region_size for j in js.jobs} == {300 * 10**9 // 4096 * 4096}
    assert [j.rwmix_read for j in js.jobs] == [10.0, 70.0, 90.0]


@needs_shared
def test_env_driven_example_needs_its_variables():
    with pytest.raises(FioJobError) as info:
        load("sprandom.fio", env={})
    assert info.value.option in ("bs", "blockalign") and "${FIO_BS}" in str(info.value)
    assert load("sprandom.fio").jobs[0].block_sizes[1].split == [(4096, 100.0)]


@needs_shared
def test_seed_jobs():
    seeds = DATA / "seed-jobs"
    js = load_job_file(seeds / "seed003-iostat.fio", device_size=DEVICE, env={"NUMJOBS": "8"})
    assert len(js.jobs) == 8 and js.jobs[0].rw == "randwrite" and js.jobs[0].iodepth == 1
    js = load_job_file(seeds / "seed004-host-workload.fio", device_size=DEVICE, env={})
    writes = [j for j in js.jobs if j.name == "write"]
    reads = [j for j in js.jobs if j.name == "read"]
    assert len(writes) == 38 and len(reads) == 90
    assert sorted(j.region_offset for j in writes) == [c * 15 * 2**30 for c in range(38)]
    assert writes[0].runtime_ns == 604800 * 10**9  # the inline comment is dropped
    assert js.group_reporting == {0: True}
    with pytest.raises(FioJobError) as info:
        load_job_file(seeds / "seed003-iostat.fio", device_size=DEVICE, env={})
    assert info.value.option == "numjobs" and "${NUMJOBS}" in str(info.value)


@needs_shared
def test_filesize_examples_get_fios_size():
    # No size= and no filename=: fio's job moves nrfiles x filesize, one set of files per clone.
    for name, files, each in (("dircreate-ioengine.fio", 30, 4096), ("dirdelete-ioengine.fio", 200, 4096),
                              ("dirstat-ioengine.fio", 5, 4096)):
        js = load(name)
        assert {(j.region_size, j.io_limit) for j in js.jobs} == {(files * each, files * each)}, name
        assert len({j.region_offset for j in js.jobs}) == len(js.jobs), name  # nothing shared
    # size=999g over 128 GiB files: fio caps the size at the files'.
    js = load("enospc-pressure.fio")
    assert {j.io_limit for j in js.jobs} == {128 * 2**30}
