"""The fio job-file parser: grammar, values, clones, ordering, device mapping and errors."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fio_booleans import BOOLEAN_VALUES, ON_FILES, not_modelled_booleans

from ssdlab.fio import FioJobError, JobSet, load_job_file, load_job_files, parse_job_text
from ssdlab.fio.options import DEFAULT_PERCENTILES, fio_option_names, split_directions
from ssdlab.units import Percent, ValueProblem, parse_fio_size, parse_fio_time_us

GIB = 2**30
TIB = 2**40
DEV = TIB


def jobs(text: str, **kw) -> JobSet:
    kw.setdefault("device_size", DEV)
    kw.setdefault("env", {})
    return parse_job_text(text, name="jobs/x.fio", **kw)


def one(text: str, **kw):
    js = jobs(text, **kw)
    assert len(js.jobs) == 1
    return js.jobs[0]


def error(text: str, **kw) -> FioJobError:
    with pytest.raises(FioJobError) as info:
        jobs(text, **kw)
    message = str(info.value)
    assert "\n" not in message
    return info.value


def sizes(dist) -> list[tuple[int, float]]:
    return [(s, round(w, 6)) for s, w in dist.split]


# --------------------------------------------------------------------------- grammar


def test_comments_blank_lines_and_trailing_comments():
    job = one(
        "; leading comment\n"
        "# another\n"
        "\n"
        "[j]   ; comment after a header\n"
        "   ; indented comment\n"
        "bs=8k ; trailing\n"
        "size=64m# glued trailing comment\n"
        "rw=randread   # spaced\n"
    )
    assert job.block_sizes[0].split == [(8192, 100.0)]
    assert job.region_size == 64 * 2**20
    assert job.rw == "randread"


def test_bare_key_means_one_and_explicit_zero_turns_off():
    job = one("[j]\nrw=randread\nnorandommap\ntime_based\nruntime=1\n")
    assert job.random_map is False and job.time_based is True
    job = one("[j]\nrw=randread\nnorandommap=0\n")
    assert job.random_map is True


def test_globals_accumulate_and_are_copied_at_each_job_header():
    js = jobs(
        "[global]\nbs=8k\n"
        "[a]\n"
        "[global2]\nbs=16k\niodepth=4\n"
        "[b]\n"
        "[globalx]\nrw=write\n"
        "[c]\nbs=32k\n"
    )
    a, b, c = js.jobs
    assert a.block_sizes[0].split == [(8192, 100.0)] and a.iodepth == 1 and a.rw == "read"
    assert b.block_sizes[0].split == [(16384, 100.0)] and b.iodepth == 1  # psync caps it
    assert c.rw == "write" and c.block_sizes[0].split == [(32768, 100.0)]
    assert js.global_options == {"bs": "16k", "iodepth": "4", "rw": "write"}
    assert js.job_options[2] == {"bs": "32k"}


def test_job_options_use_canonical_names_env_values_and_skip_bare_keys():
    js = jobs("[j]\nblocksize=4k\nreadwrite=randread\ntime_based\nruntime=1\niodepth=${D}\n"
              "kb_base=1000\nfilename=/dev/sda\n", env={"D": "8"})
    assert js.job_options[0] == {"kb_base": "1000", "bs": "4k", "rw": "randread",
                                 "runtime": "1", "iodepth": "8", "filename": "/dev/sda"}
    assert list(js.job_options[0])[0] == "kb_base" and list(js.job_options[0])[-1] == "filename"


def test_kb_base_applies_first_within_a_section_and_is_inherited():
    job = one("[j]\nbs=4k\nkb_base=1000\n")
    assert job.block_sizes[0].split == [(4000, 100.0)]
    js = jobs("[global]\nkb_base=1000\n[a]\nbs=1m\n[b]\nkb_base=1024\nbs=1m\n")
    assert js.jobs[0].block_sizes[0].split == [(10**6, 100.0)]
    assert js.jobs[1].block_sizes[0].split == [(2**20, 100.0)]


def test_env_substitution_and_empty_variable_error():
    job = one("[j]\nbs=${BS}\nname=${NAME}x\n", env={"BS": "16k", "NAME": "n"})
    assert job.block_sizes[0].split == [(16384, 100.0)] and job.name == "nx"
    e = error("[j]\nnumjobs=${NUMJOBS}\n")
    assert (e.path, e.line, e.option) == ("jobs/x.fio", 2, "numjobs")
    assert "${NUMJOBS}" in str(e) and "empty" in str(e)
    e = error("[j]\nbs=${BS}\n", env={"BS": ""})
    assert e.option == "bs" and "${BS}" in str(e)


def test_env_defaults_to_os_environ(monkeypatch):
    monkeypatch.setenv("SSDLAB_TEST_BS", "2k")
    js = parse_job_text("[j]\nbs=${SSDLAB_TEST_BS}\n", device_size=DEV)
    assert js.jobs[0].block_sizes[0].split == [(2048, 100.0)]


def test_keywords_and_bc_style_math():
    job = one("[j]\nbs=$pagesize\nsize=8*$mb_memory*1024*1024\nnumjobs=$ncpus/8\n",
              host={"pagesize": 4096, "mb_memory": 2048, "ncpus": 8})
    assert job.block_sizes[0].split == [(4096, 100.0)]
    assert job.region_size == 16 * GIB
    js = jobs("[j]\nnumjobs=$ncpus/3\n", host={"ncpus": 8})
    assert len(js.jobs) == 2  # bc truncates 8/3
    e = error("[j]\nsize=4k*$ncpus\n")
    assert e.option == "size" and "bc" in str(e)


def test_parenthesised_arithmetic():
    job = one("[j]\nsize=(2*512m)\nbs=(4k+4k)\nruntime=(1s+500ms)\nthinktime=(2*10)\n")
    assert job.region_size == GIB
    assert job.block_sizes[0].split == [(8192, 100.0)]
    assert job.runtime_ns == 1_500_000_000
    assert job.thinktime_ns == 20_000
    e = error("[j]\nsize=5*1024\n")
    assert e.option == "size" and "parentheses" in str(e)


def test_include_nesting_and_relative_paths(tmp_path: Path):
    (tmp_path / "sub").mkdir()
    (tmp_path / "common.fio").write_text("bs=8k\ninclude sub/deep.fio\n")
    (tmp_path / "sub" / "deep.fio").write_text("; deep\niodepth=4\nioengine=libaio\ncpus_allowed=1\n")
    job_file = tmp_path / "main.fio"
    job_file.write_text("[global]\ninclude common.fio\n[j]\nrw=randread\n")
    js = load_job_file(job_file, device_size=DEV, env={})
    assert js.jobs[0].block_sizes[0].split == [(8192, 100.0)]
    assert js.jobs[0].iodepth == 4
    assert any("sub/deep.fio:4: option 'cpus_allowed=1' is accepted but not modelled" in w
               for w in js.warnings)


def test_include_errors(tmp_path: Path):
    (tmp_path / "bad.fio").write_text("bs=4k\n[oops]\n")
    e = error("[j]\ninclude bad.fio\n", base_dir=tmp_path)
    assert e.path.endswith("bad.fio") and e.line == 2 and "section" in str(e)
    e = error("[j]\ninclude missing.fio\n", base_dir=tmp_path)
    assert (e.path, e.line) == ("jobs/x.fio", 2) and "missing.fio" in str(e)
    (tmp_path / "loop.fio").write_text("include loop.fio\n")
    e = error("[j]\ninclude loop.fio\n", base_dir=tmp_path)
    assert "loop" in str(e)
    e = error("include x.fio\n[j]\n", base_dir=tmp_path)
    assert e.line == 1 and "outside" in str(e)


def test_options_outside_a_section_and_bad_headers():
    e = error("bs=4k\n[j]\n")
    assert (e.line, e.option) == (1, None) and "outside of a [section]" in str(e)
    assert error("[j\nbs=4k\n").line == 1
    assert error("[]\n").line == 1
    assert "no job sections" in str(error("[global]\nbs=4k\n"))


def test_several_job_files_get_an_implicit_stonewall_and_fresh_globals(tmp_path: Path):
    a = tmp_path / "a.fio"
    b = tmp_path / "b.fio"
    a.write_text("[global]\nbs=8k\n[a]\nnumjobs=2\n")
    b.write_text("[b]\n[c]\n")
    js = load_job_files([a, b], device_size=DEV, env={})
    assert [j.name for j in js.jobs] == ["a", "a", "b", "c"]
    assert [j.group_id for j in js.jobs] == [0, 0, 1, 1]
    assert js.jobs[2].start_after == [0, 1] and js.jobs[3].start_after == [0, 1]
    assert js.jobs[2].block_sizes[0].split == [(4096, 100.0)]
    assert load_job_file([a, b], device_size=DEV, env={}).jobs == js.jobs


def test_spaces_around_equals_are_stripped_with_a_warning():
    js = jobs("[j]\nsize = 64m\n")
    assert js.jobs[0].region_size == 64 * 2**20
    assert any("jobs/x.fio:2:" in w and "4 bytes" in w for w in js.warnings)


# --------------------------------------------------------------------------- sizes and times

SIZE_TABLE = [
    ("4096", 1024, 4096), ("4k", 1024, 4096), ("4K", 1024, 4096), ("4kb", 1024, 4096),
    ("4KB", 1024, 4096), ("4KiB", 1024, 4000), ("4kib", 1024, 4000), ("1m", 1024, 2**20),
    ("1MiB", 1024, 10**6), ("2g", 1024, 2 * 2**30), ("1t", 1024, 2**40), ("1p", 1024, 2**50),
    ("1pib", 1024, 10**15), ("512b", 1024, 512), ("512B", 1024, 512), ("0x1000", 1024, 4096),
    ("0X10", 1024, 16), ("4k", 1000, 4000), ("4KB", 1000, 4000), ("4KiB", 1000, 4096),
    ("1MiB", 1000, 2**20), ("1m", 1000, 10**6), ("1g", 1000, 10**9), ("1GiB", 1000, 2**30),
    ("(2*4k)", 1024, 8192), ("(1m/2)", 1024, 2**19),
]


@pytest.mark.parametrize(("text", "kb_base", "expected"), SIZE_TABLE)
def test_size_table(text, kb_base, expected):
    assert parse_fio_size(text, kb_base) == expected


def test_ki_without_b_is_read_like_fio_with_a_note():
    notes: list[str] = []
    assert parse_fio_size("4ki", 1000, notes=notes) == 4000
    assert notes and "4ki" in notes[0]


def test_percent_and_zone_sizes():
    assert parse_fio_size("30%", percent=True) == Percent(30)
    job = one("[j]\nsize=25%\noffset=50%\n", device_size=4 * GIB)
    assert (job.region_offset, job.region_size) == (2 * GIB, GIB)
    job = one("[j]\nzonesize=256m\noffset=2z\nsize=4z\n", device_size=4 * GIB)
    assert (job.region_offset, job.region_size) == (512 * 2**20, GIB)


def test_percent_offset_rounds_up_to_the_block_size():
    job = one("[j]\nbs=64k\noffset=1%\nsize=1m\n", device_size=10**9)
    assert job.region_offset == 10**7 // 65536 * 65536 + 65536


TIME_TABLE = [
    ("runtime=10", 10 * 10**9), ("runtime=10s", 10 * 10**9), ("runtime=2m", 120 * 10**9),
    ("runtime=1h", 3600 * 10**9), ("runtime=1d", 86400 * 10**9), ("runtime=250ms", 250 * 10**6),
    ("runtime=250msec", 250 * 10**6), ("runtime=30us", 30_000), ("runtime=30usec", 30_000),
    ("runtime=0.2", 200 * 10**6), ("ramp_time=5", 5 * 10**9), ("ramp_time=5ms", 5 * 10**6),
    ("startdelay=3", 3 * 10**9), ("thinktime=2000", 2 * 10**6), ("thinktime=2ms", 2 * 10**6),
    ("thinktime=1s", 10**9), ("timeout=7", 7 * 10**9),
]


@pytest.mark.parametrize(("line", "ns"), TIME_TABLE)
def test_time_table_and_default_units(line, ns):
    job = one(f"[j]\n{line}\n")
    got = {"runtime": job.runtime_ns, "timeout": job.runtime_ns, "ramp_time": job.ramp_time_ns,
           "startdelay": job.start_delay_ns, "thinktime": job.thinktime_ns}[line.split("=")[0]]
    assert got == ns


def test_sec_and_min_quirk_is_reproduced_with_a_warning():
    js = jobs("[j]\nruntime=10sec\n")
    assert js.jobs[0].runtime_ns == 10_000  # 10 us, as fio reads it
    assert any("jobs/x.fio:2:" in w and "'10sec'" in w for w in js.warnings)
    js = jobs("[j]\nruntime=10min\n")
    assert js.jobs[0].runtime_ns == 10_000


def test_fractional_times_are_honoured_and_flagged_in_files_only():
    js = jobs("[j]\nruntime=1.5\n")
    assert js.jobs[0].runtime_ns == 1_500_000_000
    assert any("1.5" in w and "truncates" not in w for w in js.warnings)
    js = jobs("[j]\nruntime=100\ndirect=1\n", overrides={"runtime": "0.2"})
    assert js.jobs[0].runtime_ns == 200_000_000 and js.warnings == []


def test_time_range_quirk_of_fio_is_reproduced():
    notes: list[str] = []
    assert parse_fio_time_us("1s", seconds_default=True, before_range_separator=True, notes=notes) == 1
    assert notes


# --------------------------------------------------------------------------- per direction


def test_per_direction_block_sizes():
    job = one("[j]\nbs=8k,32k\n")
    assert [d.split[0][0] for d in job.block_sizes] == [8192, 32768, 32768]
    job = one("[j]\nbs=,8k\n")
    assert [d.split[0][0] for d in job.block_sizes] == [4096, 8192, 8192]
    job = one("[j]\nbs=1k,2k,3k\n")
    assert [d.split[0][0] for d in job.block_sizes] == [1024, 2048, 3072]
    job = one("[j]\nbs=4k,,16k\n")
    assert [d.split[0][0] for d in job.block_sizes] == [4096, 4096, 16384]
    job = one("[j]\nbs=8k,\n")
    assert [d.split[0][0] for d in job.block_sizes] == [8192, 4096, 4096]
    job = one("[j]\nblocksize=512,512,16384\n")
    assert [d.split[0][0] for d in job.block_sizes] == [512, 512, 16384]


def test_blank_direction_keeps_the_inherited_value():
    job = one("[global]\nbs=8k\n[j]\nbs=,64k\n")
    assert [d.split[0][0] for d in job.block_sizes] == [8192, 65536, 65536]


def test_per_direction_rates_and_split_helper():
    job = one("[j]\nrate=1m,2m\nrw=randrw\n")
    assert job.rate_bytes == (2**20, 2 * 2**20, 2 * 2**20)
    job = one("[j]\nrate_iops=100,,50\n")
    assert job.rate_iops == (100, 0, 50)
    assert split_directions("4k:8k") == [("4k", True), ("8k", False)]
    with pytest.raises(ValueProblem):
        split_directions("1,2,3,4")


def test_bsrange_and_precedence():
    job = one("[j]\nbsrange=4k-64k\n")
    assert (job.block_sizes[0].range_min, job.block_sizes[0].range_max) == (4096, 65536)
    job = one("[j]\nblocksize_range=64k:4k,1k-1k\n")
    assert job.block_sizes[0].range_min == 4096 and job.block_sizes[1].split == [(1024, 100.0)]
    job = one("[j]\nbsrange=4k-4k\n")
    assert job.block_sizes[2].split == [(4096, 100.0)]
    job = one("[j]\nbssplit=4k/50:8k/50\nbsrange=1k-2k\nbs=512\n")
    assert sizes(job.block_sizes[0]) == [(4096, 50.0), (8192, 50.0)]


def test_bssplit_blank_shares_and_directions():
    job = one("[j]\nbssplit=4k/10:64k/50:32k/40\n")
    assert sizes(job.block_sizes[1]) == [(4096, 10.0), (65536, 50.0), (32768, 40.0)]
    job = one("[j]\nbssplit=4k/50:8k:16k\n")
    assert sizes(job.block_sizes[0]) == [(4096, 50.0), (8192, 25.0), (16384, 25.0)]
    job = one("[j]\nbssplit=4k:8k:16k\n")
    assert sum(w for _, w in job.block_sizes[0].split) == pytest.approx(100.0)
    job = one("[j]\nrw=randrw\nbssplit=64k/40:1024k/60,1024k/100\n")
    assert sizes(job.block_sizes[0]) == [(65536, 40.0), (2**20, 60.0)]
    assert sizes(job.block_sizes[1]) == sizes(job.block_sizes[2]) == [(2**20, 100.0)]
    job = one("[j]\nbssplit=,8k/100\n")
    assert sizes(job.block_sizes[0]) == [(4096, 100.0)] and sizes(job.block_sizes[1]) == [(8192, 100.0)]


def test_bssplit_short_total_goes_to_the_most_frequent_size_with_a_warning():
    js = jobs("[j]\nbssplit=4k/20:8k/70\n")
    assert sizes(js.jobs[0].block_sizes[0]) == [(4096, 20.0), (8192, 80.0)]
    assert any("bssplit" in w and "10%" in w for w in js.warnings)


def test_block_align_defaults_and_random_map():
    job = one("[j]\nrw=randread\nbs=8k\n")
    assert job.block_align == (8192, 8192, 8192) and job.random_map
    job = one("[j]\nrw=randread\nbs=8k\nblockalign=4k\n")
    assert job.block_align == (4096, 4096, 4096) and not job.random_map
    job = one("[j]\nrw=read\nbs=8k\nba=4k\n")
    assert job.block_align == (8192, 8192, 8192)  # fio ignores ba for sequential I/O


# --------------------------------------------------------------------------- rw and mixes


@pytest.mark.parametrize("mode", ["read", "write", "trim", "randread", "randwrite", "randtrim",
                                  "rw", "randrw", "trimwrite", "randtrimwrite"])
def test_all_rw_modes(mode):
    assert one(f"[j]\nrw={mode}\n").rw == mode


def test_rw_aliases_and_modifiers():
    assert one("[j]\nreadwrite=readwrite\n").rw == "rw"
    job = one("[j]\nrw=randread:8\n")
    assert (job.rw, job.rw_modifier) == ("randread", 8)
    job = one("[j]\nrw=read:-8k\n")
    assert job.rw_modifier == -8192
    job = one("[j]\nrw=write:112k\n")
    assert job.rw_modifier == 112 * 1024
    assert error("[j]\nrw=randread:0\n").option == "rw"


def test_rwmix():
    assert one("[j]\nrw=randrw\nrwmixread=70\n").rwmix_read == 70.0
    assert one("[j]\nrw=randrw\nrwmixwrite=90\n").rwmix_read == 10.0
    assert one("[j]\nrw=randrw\nrwmixread=60\nrwmixwrite=30\n").rwmix_read == 70.0
    e = error("[j]\nrw=randrw\nrwmixread=101\n")
    assert (e.line, e.option) == (3, "rwmixread")


# --------------------------------------------------------------------------- distributions


def test_random_distributions():
    d = one("[j]\nrw=randread\nrandom_distribution=zipf:0.8\n").distribution
    assert (d.kind, d.param) == ("zipf", 0.8)
    d = one("[j]\nrw=randread\nrandom_distribution=zipf\n").distribution
    assert (d.kind, d.param) == ("zipf", 1.1)
    d = one("[j]\nrw=randread\nrandom_distribution=pareto:0.3\n").distribution
    assert (d.kind, d.param) == ("pareto", 0.3)
    d = one("[j]\nrw=randread\nrandom_distribution=normal:5\n").distribution
    assert (d.kind, d.param) == ("normal", 5.0)
    job = one("[j]\nrw=randread\nrandom_distribution=zipf:1.2\n")
    assert job.random_map is False  # non-uniform distributions turn off the random map
    assert error("[j]\nrandom_distribution=zipf:1\n").option == "random_distribution"
    assert error("[j]\nrandom_distribution=pareto:2\n").option == "random_distribution"
    assert error("[j]\nrandom_distribution=banana\n").line == 2


def test_zoned_blank_last_size_takes_the_rest():
    d = one("[j]\nrw=randread\nrandom_distribution=zoned:50/5:30/15:20/\n").distribution
    assert [(z.access_pct, z.size_pct) for z in d.zones] == [(50, 5), (30, 15), (20, 80)]
    d = one("[j]\nrw=randread\nrandom_distribution=zoned:60/10:30/20:10/70\n").distribution
    assert d.kind == "zoned" and len(d.zones) == 3
    e = error("[j]\nrandom_distribution=zoned:50/10:40/20\n")
    assert e.option == "random_distribution" and "100" in str(e)


def test_zoned_abs_becomes_percentages_of_the_region():
    d = one("[j]\nrw=randread\nsize=100m\n"
            "random_distribution=zoned_abs:60/10m:30/20m:10/70m\n").distribution
    assert [(z.access_pct, round(z.size_pct, 6)) for z in d.zones] == [(60, 10), (30, 20), (10, 70)]
    e = error("[j]\nsize=10m\nrandom_distribution=zoned_abs:60/10m:40/20m\n")
    assert e.option == "random_distribution"


def test_per_direction_zones_use_the_main_direction_with_a_warning():
    js = jobs("[j]\nrw=randwrite\nrandom_distribution=zoned:100/10,50/50:50/50\n")
    assert [(z.access_pct, z.size_pct) for z in js.jobs[0].distribution.zones] == [(50, 50), (50, 50)]
    assert not any("per-direction zones" in w for w in js.warnings)  # only writes matter
    js = jobs("[j]\nrw=randrw\nrandom_distribution=zoned:100/10,50/50:50/50\n")
    assert [(z.access_pct, z.size_pct) for z in js.jobs[0].distribution.zones] == [(100, 10)]
    assert any("per-direction zones" in w for w in js.warnings)


# --------------------------------------------------------------------------- clones, offsets


def test_numjobs_clones_come_in_fios_order_with_offsets():
    js = jobs("[j]\nnumjobs=4\nsize=1g\noffset=1m\noffset_increment=10g\n")
    assert [j.clone for j in js.jobs] == [0, 3, 2, 1]
    assert [j.region_offset for j in js.jobs] == [2**20 + c * 10 * GIB for c in (0, 3, 2, 1)]
    assert len({j.seed for j in js.jobs}) == 4
    assert js.job_options == [js.job_options[0]] * 4


def test_raw_device_default_size_and_device_files():
    job = one("[j]\noffset=1g\n", device_size=4 * GIB)
    assert (job.region_offset, job.region_size) == (GIB, 3 * GIB)
    job = one("[j]\nfilename=/dev/nvme0n1\n", device_size=4 * GIB)
    assert (job.region_offset, job.region_size) == (0, 4 * GIB)


def test_files_are_laid_out_in_order_and_shared():
    js = jobs("[a]\nfilename=f1\nsize=1g\n[b]\nfilename=f2\nsize=2g\n[c]\nfilename=f1\nsize=1g\n"
              "[d]\nfilename=f2\nsize=3g\n[e]\nfilename=/dev/sdb\nsize=1g\n")
    offsets = [(j.name, j.region_offset, j.region_size) for j in js.jobs]
    assert offsets == [("a", 0, GIB), ("b", GIB, 2 * GIB), ("c", 0, GIB), ("d", GIB, 3 * GIB),
                       ("e", 0, GIB)]


def test_filesize_and_escaped_colons():
    js = jobs("[a]\nfilename=x\\:y\nfilesize=128m\nsize=1g\n[b]\nfilename=x\\:y\nrw=write\n")
    a, b = js.jobs
    # fio caps the job's size at its files' (real fio: filesize=1M size=2M moves 1 MiB).
    assert (a.region_offset, a.region_size, a.io_limit) == (0, 128 * 2**20, 128 * 2**20)
    assert (b.region_offset, b.region_size) == (0, 128 * 2**20)
    js = jobs("[a]\nfilename=f\nfilesize=1m-4m\n")
    assert js.jobs[0].region_size == 2**20 and any("random file sizes" in w for w in js.warnings)
    js = jobs("[a]\nfilename=f1:f2\nsize=2g\n")
    assert js.jobs[0].region_size == 2 * GIB
    assert any("contiguous" in w for w in js.warnings)


# (job options, io bytes of each clone): what real fio 3.33 moves with ioengine=null, rw=write,
# bs=4k (tests/python/test_fio_vs_real.py checks these against fio when it is installed).
FILESIZE_CASES = [
    ("filesize=1M", [2**20]),
    ("filesize=1M size=512k", [2**19]),
    ("filesize=1M size=2M", [2**20]),
    ("filesize=1M size=50%", [2**19]),
    ("filesize=1M numjobs=2", [2**20, 2**20]),
    ("filesize=1M nrfiles=2 offset=256k", [3 * 2**19]),
    ("filesize=1M io_size=3M", [3 * 2**20]),
    ("filesize=1M filename=foo size=2M", [2**20]),
    ("filesize=1M filename=foo:bar size=3M", [2**21]),
]


@pytest.mark.parametrize("options,io_bytes", FILESIZE_CASES)
def test_filesize_sets_the_job_size_as_in_fio(options, io_bytes):
    js = jobs("[x]\nrw=write\nbs=4k\n" + "\n".join(options.split()) + "\n")
    assert [j.io_limit for j in js.jobs] == io_bytes
    assert all(j.region_size <= 2**21 for j in js.jobs)


def test_filesize_without_filename_gives_each_clone_its_own_files():
    # fio's default files are $jobname.$jobnum.$filenum: clones do not share them.
    js = jobs("[x]\nrw=randwrite\nfilesize=1M\nnumjobs=3\n[y]\nrw=read\nfilesize=2M\n[z]\nrw=read\nsize=4M\n")
    regions = [(j.name, j.region_offset, j.region_size) for j in js.jobs]
    assert sorted(regions) == [("x", 0, 2**20), ("x", 2**20, 2**20), ("x", 2 * 2**20, 2**20),
                               ("y", 3 * 2**20, 2**21), ("z", 0, 4 * 2**20)]
    js = jobs("[x]\nrw=write\nfilesize=1M\nnrfiles=4\n")
    assert js.jobs[0].io_limit == 4 * 2**20
    # the job asks for files: the file layer answers nrfiles (issue 29), no raw-path warning
    assert js.on_files == [True] and not any("nrfiles" in w for w in js.warnings)


def test_io_size_limits_and_percent_of_size():
    job = one("[j]\nsize=1g\nio_size=256m\n")
    assert (job.region_size, job.io_limit) == (GIB, 256 * 2**20)
    job = one("[j]\nsize=1g\nio_limit=50%\n")
    assert job.io_limit == GIB // 2
    job = one("[j]\nsize=1g\nio_size=4g\nloops=2\nnumber_ios=100\n")
    assert (job.io_limit, job.loops, job.number_ios) == (4 * GIB, 2, 100)


def test_startdelay_range_is_per_clone_and_deterministic():
    text = "[j]\nnumjobs=8\nstartdelay=1-5\nsize=1m\n"
    a, b = jobs(text, seed=1), jobs(text, seed=1)
    delays = [j.start_delay_ns for j in a.jobs]
    assert delays == [j.start_delay_ns for j in b.jobs]
    assert all(10**9 <= d <= 5 * 10**9 for d in delays) and len(set(delays)) > 1
    assert [j.start_delay_ns for j in jobs(text, seed=2).jobs] != delays


def test_seeds_follow_run_seed_unless_randseed():
    text = "[j]\nnumjobs=2\nsize=1m\n"
    assert [j.seed for j in jobs(text, seed=1).jobs] == [j.seed for j in jobs(text, seed=1).jobs]
    assert [j.seed for j in jobs(text, seed=1).jobs] != [j.seed for j in jobs(text, seed=2).jobs]
    fixed = "[j]\nnumjobs=2\nsize=1m\nrandseed=1234\n"
    assert [j.seed for j in jobs(fixed, seed=1).jobs] == [j.seed for j in jobs(fixed, seed=2).jobs]
    norepeat = "[j]\nnumjobs=2\nsize=1m\nrandrepeat=0\n"
    assert [j.seed for j in jobs(norepeat, seed=1).jobs] != [j.seed for j in jobs(text, seed=1).jobs]
    assert all(0 <= j.seed < 2**63 for j in jobs(text).jobs)


def test_rates_thinktime_and_flushes():
    job = one("[j]\nrw=randwrite\nrate=10m\nrate_process=poisson\nthinktime=50\n"
              "thinktime_blocks=4\nfsync=32\n")
    assert job.rate_bytes == (10 * 2**20,) * 3 and job.rate_process == "poisson"
    assert (job.thinktime_ns, job.thinktime_blocks, job.fsync_every) == (50_000, 4, 32)
    assert one("[j]\nrw=write\nfdatasync=8\n").fsync_every == 8
    assert one("[j]\nrw=write\nfsync=8\nfdatasync=4\n").fsync_every == 4
    assert error("[j]\nrate_process=burst\n").option == "rate_process"


def test_time_based_needs_a_runtime():
    js = jobs("[j]\ntime_based\n")
    assert js.jobs[0].time_based is False
    assert any("time_based" in w for w in js.warnings)


def test_sync_engines_cap_iodepth_like_fio():
    js = jobs("[j]\niodepth=32\n")
    assert js.jobs[0].iodepth == 1 and any("psync" in w for w in js.warnings)
    assert one("[j]\nioengine=libaio\niodepth=32\n").iodepth == 32
    assert one("[j]\nioengine=io_uring\niodepth=16\n").iodepth == 16


# --------------------------------------------------------------------------- ordering, groups


def test_stonewall_new_group_and_wait_for():
    js = jobs(
        "[global]\nsize=1m\nioengine=libaio\n"
        "[a]\nnumjobs=2\n"
        "[b]\n"
        "[c]\nstonewall\n"
        "[d]\nnew_group\n"
        "[e]\nwait_for=b\ngroup_reporting\n"
        "[f]\nwait_for_previous\n"
    )
    names = [j.name for j in js.jobs]
    assert names == ["a", "a", "b", "c", "d", "e", "f"]
    assert [j.group_id for j in js.jobs] == [0, 0, 0, 1, 2, 2, 3]
    after = {j.name: j.start_after for j in js.jobs}
    assert after["a"] == [] and after["b"] == []
    assert after["c"] == [0, 1, 2] and after["d"] == [0, 1, 2]
    assert after["e"] == [0, 1, 2]
    assert after["f"] == [3, 4, 5]
    assert js.group_reporting == {0: False, 1: False, 2: True, 3: False}


def test_wait_for_name_option_and_errors():
    js = jobs("[w]\nname=writer\nsize=1m\n[r]\nwait_for=writer\nsize=1m\n")
    assert js.jobs[0].name == "writer" and js.jobs[1].start_after == [0]
    e = error("[a]\nsize=1m\nwait_for=zzz\n")
    assert (e.line, e.option) == (3, "wait_for") and "zzz" in str(e)
    assert "itself" in str(error("[a]\nwait_for=a\n"))
    e = error("[a]\nwait_for=b\n[b]\n")  # a waitee must come first, as in fio
    assert e.option == "wait_for"


def test_percentile_list_and_default():
    assert jobs("[j]\n").percentiles == DEFAULT_PERCENTILES
    assert len(DEFAULT_PERCENTILES) == 17
    assert jobs("[j]\npercentile_list=50:99:99.9\n").percentiles == [50.0, 99.0, 99.9]
    assert error("[j]\npercentile_list=50:101\n").option == "percentile_list"


# --------------------------------------------------------------------------- warnings


def test_unmodelled_options_warn_once_per_file_and_never_vanish():
    js = jobs("[global]\nioengine=libaio\ndirect=1\n[a]\ndirect=1\nflow=2\n[b]\nzonemode=strided\n"
              "zonesize=64m\nrate_min=1m\nverify=crc32c\nrw=write\ncpus_allowed=0-3\n[c]\ncpus_allowed=0-3\n"
              "write_bw_log=bw\n")
    w = "\n".join(js.warnings)
    assert "jobs/x.fio:13: option 'cpus_allowed=0-3' is accepted but not modelled" in w
    assert w.count("cpus_allowed") == 1
    assert "write_bw_log" not in w  # written as fio writes it (ssdlab.fioout.logs)
    assert "ioengine" not in w and "direct" not in w  # both modelled
    assert re.search(r"jobs/x\.fio:6: option 'flow=2' .*ignores it", w)
    assert re.search(r"jobs/x\.fio:8: option 'zonemode=strided' .*ignores it", w)
    assert re.search(r"jobs/x\.fio:10: option 'rate_min=1m' .*ignores it", w)
    assert re.search(r"jobs/x\.fio:11: option 'verify=crc32c' .*ignores it", w)
    assert all("\n" not in line for line in js.warnings)


def test_modelled_engine_and_direct_io_do_not_warn():
    # A realistic job: libaio at depth 32 with direct I/O is exactly what is simulated.
    for text in ("[global]\nioengine=libaio\ndirect=1\niodepth=32\n[a]\nrw=randread\n[b]\nrw=write\n",
                 "[j]\nioengine=io_uring\nbuffered=0\niodepth=8\n",
                 "[j]\nioengine=psync\ndirect=1\n",
                 "[j]\nioengine=sg\n"):  # sg bypasses the page cache whatever direct says
        w = jobs(text).warnings
        assert not [x for x in w if "ioengine" in x or "direct" in x or "buffered" in x], (text, w)


def test_buffered_io_on_a_block_device_warns_once_saying_what_is_simulated():
    js = jobs("[global]\nioengine=libaio\nfilename=/dev/sda\n[a]\nrw=randread\n[b]\nrw=write\n")
    w = [x for x in js.warnings if "direct" in x]
    assert w == ["jobs/x.fio:4: job 'a': direct=0 (buffered I/O, fio's default): the host profile "
                 "describes no memory, so the device's page cache is not modelled; simulated as direct=1"]
    assert js.on_files == [False, False]
    w = [x for x in jobs("[j]\nfilename=/dev/sda\ndirect=0\n").warnings if "direct" in x]
    assert w == ["jobs/x.fio:3: option 'direct=0' (buffered I/O): the host profile describes no memory, so the "
                 "device's page cache is not modelled; simulated as direct=1"]
    assert [x for x in jobs("[j]\nfilename=/dev/sda\nbuffered=1\n").warnings if "buffered" in x] == [
        "jobs/x.fio:3: option 'buffered=1' (buffered I/O): the host profile describes no memory, so the "
        "device's page cache is not modelled; simulated as direct=1"]
    # A later job file's direct=1 does not hide an earlier job's buffered I/O, and the other
    # way round: one warning for the run.
    w = [x for x in jobs("[global]\nfilename=/dev/sda\n[a]\ndirect=1\n[b]\n[c]\n").warnings if "direct" in x]
    assert len(w) == 1 and w[0].startswith("jobs/x.fio:5: job 'b': ")


def test_buffered_io_on_a_block_device_goes_through_its_cache_when_the_host_has_one():
    text = "[global]\nioengine=libaio\nfilename=/dev/sda\nend_fsync=1\nfadvise_hint=0\n[a]\nrw=randread\n[b]\nrw=write\n"
    js = jobs(text, page_cache=True)
    assert js.on_device_cache == [True, True] and js.on_files == [False, False]
    # end_fsync and fadvise_hint are honoured there: nothing said of them, nor of buffered I/O
    assert not [x for x in js.warnings if "direct" in x or "end_fsync" in x or "fadvise" in x], js.warnings
    # direct=1 and trims address the device itself
    assert jobs("[j]\nfilename=/dev/sda\ndirect=1\n", page_cache=True).on_device_cache == [False]
    assert jobs("[j]\nfilename=/dev/sda\nrw=trim\n", page_cache=True).on_device_cache == [False]
    # with a file system named for the run, it stays raw and says why
    js = jobs("[j]\nfilename=/dev/sda\n", page_cache=True, mounted=True)
    assert js.on_device_cache == [False]
    assert [x for x in js.warnings if "direct" in x] == [
        "jobs/x.fio:1: job 'j': direct=0 (buffered I/O, fio's default): the run mounts a file system, and a "
        "block device's page cache beside it is not modelled; simulated as direct=1"]
    # a trim job says its trims go to the device
    js = jobs("[j]\nfilename=/dev/sda\nrw=trimwrite\n", page_cache=True)
    assert [x for x in js.warnings if "direct" in x] == [
        "jobs/x.fio:1: job 'j': direct=0 (buffered I/O, fio's default): its trims (or replayed log) address "
        "the device itself; simulated as direct=1"]


def test_a_job_that_asks_for_files_runs_on_them_and_says_nothing_of_buffered_io():
    # Issue 29: buffered I/O (direct unset: fio's default; buffered=1), file options and the
    # metadata engines ask for files; direct=1, trims and a block device do not.
    cases = {"[j]\n": True, "[j]\ndirect=0\n": True, "[j]\nbuffered=1\n": True, "[j]\ndirect=1\n": False,
             "[j]\nbuffered=0\n": False, "[j]\ndirect=1\nnrfiles=2\n": True, "[j]\ndirect=1\nfilesize=1m\n": True,
             "[j]\ndirect=1\nend_fsync=1\n": True, "[j]\ndirect=1\ndirectory=/mnt\n": True,
             "[j]\ndirect=1\nioengine=filestat\n": True, "[j]\nrw=trim\n": False, "[j]\nioengine=null\n": False,
             "[j]\nfilename=/dev/sda\n": False, "[j]\nfilename=/dev/sda\nnrfiles=2\n": False}
    for text, want in cases.items():
        js = jobs(text)
        assert js.on_files == [want], text
        if want:
            assert not [x for x in js.warnings if "buffered" in x or "direct" in x], (text, js.warnings)


def test_engines_say_what_is_done_instead():
    # The null engine is modelled (each I/O done once submitted): nothing to say.
    js = jobs("[j]\nioengine=null\ndirect=1\n")
    assert not [x for x in js.warnings if "ioengine" in x] and js.jobs[0].null_engine
    w = jobs("[j]\nioengine=cpuio\ndirect=1\n").warnings
    assert any("ioengine=cpuio' is not modelled" in x for x in w)
    w = jobs("[j]\nioengine=rbd\ndirect=1\niodepth=4\n").warnings
    assert [x for x in w if "ioengine" in x] == [
        "jobs/x.fio:2: option 'ioengine=rbd': simulated as block I/O to the device with up to iodepth=4"
        " requests in flight; what the rbd engine itself does is not modelled"]


def test_verify_without_a_write_phase_is_harmless():
    js = jobs("[j]\nrw=read\nverify=crc32c\n")
    assert any("verify=crc32c' is accepted but not modelled" in w for w in js.warnings)


def test_option_names_file_covers_fio_options_and_aliases():
    names = fio_option_names()
    for n in ("bs", "blocksize", "readwrite", "timeout", "ioengine", "sqthread_poll", "threads",
              "hipri", "cmdprio_percentage", "sprandom", "io_limit"):
        assert n in names
    assert names["blocksize"] == "bs" and names["timeout"] == "runtime"


# --------------------------------------------------------------------------- errors

ERROR_CASES = [
    ("[j]\nfoo=1\n", 2, "foo", "unknown option 'foo'"),
    ("[j]\nbs=abc\n", 2, "bs", "expected a size like 4k, got 'abc'"),
    ("[j]\nsize=4g\noffset=1g\n", 2, "size", "device has"),
    ("[j]\noffset=5g\n", 2, "offset", "past the end"),
    ("[j]\nsize=1g\noffset=900g\n", 3, "offset", "past the end of the"),
    ("[j]\nnumjobs=9\nsize=1g\noffset_increment=1g\n", 4, "offset_increment", "past the end of the"),
    ("[j]\nnumjobs=4\nsize=2g\noffset_increment=1g\n", 4, "offset_increment", "device has"),
    ("[j]\nsize=0\n", 2, "size", "positive"),
    ("[j]\nsize=-1g\n", 2, "size", "negative"),
    ("[j]\nsize=4k\nbs=8k\n", 3, "bs", "larger than"),
    ("[j]\nbs=0\n", 2, "bs", "positive"),
    ("[j]\nrw=randread\nba=0\n", 3, "ba", "positive"),
    ("[j]\nrw=randrw\nrwmixwrite=-5\n", 3, "rwmixwrite", "negative"),
    ("[j]\niodepth=0\n", 2, "iodepth", "at least 1"),
    ("[j]\nrw=randread\npercentage_random=200\n", 3, "percentage_random", "between 0 and 100, got 200"),
    ("[j]\npercentage_random=50,101\n", 2, "percentage_random", "between 0 and 100, got 101"),
    ("[j]\ntrim_percentage=1,2\n", 2, "trim_percentage", "at most 1 value"),
    ("[j]\nnumjobs=0\n", 2, "numjobs", "at least 1"),
    ("[j]\nruntime=abc\n", 2, "runtime", "expected a time like 10s"),
    # fio's integer options that are not modelled: what fio 3.33 refuses ("failed parsing nice=abc",
    # "max value out of range: 1024 (19 max)", "min value out of range: 10 (80 min)")
    ("[j]\nnice=abc\n", 2, "nice", "expected a whole number, got 'abc'"),
    ("[j]\nnice=1k\n", 2, "nice", "expected at most 19, got '1k'"),
    ("[j]\nprio=8\n", 2, "prio", "expected at most 7, got '8'"),
    ("[j]\nverify_interval=10\n", 2, "verify_interval", "expected at least 80, got '10'"),
    ("[j]\ncgroup_weight=50\n", 2, "cgroup_weight", "expected at least 100, got '50'"),
    # fio's options read as numbers (times, per direction, lists, switches) that are not
    # modelled: what fio 3.33 refuses ("failed parsing max_latency=abc", "replay_align: must be
    # a power-of-2", "not a floating point value", "value out of range")
    ("[j]\nmax_latency=abc\n", 2, "max_latency", "expected a time like 10s, got 'abc'"),
    ("[j]\nthinktime_spin=\n", 2, "thinktime_spin", "expected a time like 10s, got an empty value"),
    ("[j]\nthinktime_iotime\n", 2, "thinktime_iotime", "needs a value"),
    ("[j]\nrate_min=,\n", 2, "rate_min", "expected a size like 4k, got ','"),
    ("[j]\nrate_iops_min=k\n", 2, "rate_iops_min", "expected a whole number, got 'k'"),
    ("[j]\nratecycle=99999999999999999999\n", 2, "ratecycle", "expected a whole number"),
    ("[j]\nflow_sleep=a10\n", 2, "flow_sleep", "expected a whole number, got 'a10'"),
    ("[j]\nreplay_align=10\n", 2, "replay_align", "expected a power of 2, got '10'"),
    ("[j]\nreplay_align=0\n", 2, "replay_align", "expected a power of 2, got '0'"),
    ("[j]\nexitall=abc\n", 2, "exitall", "expected 0 or 1, got 'abc'"),
    ("[j]\nsoftrandommap=2\n", 2, "softrandommap", "expected 0 or 1, got '2'"),
    ("[j]\nzone_reset_threshold=1.5\n", 2, "zone_reset_threshold", "expected a number from 0 to 1, got '1.5'"),
    ("[j]\nmerge_blktrace_iters=abc\n", 2, "merge_blktrace_iters", "numbers separated by :, got 'abc'"),
    ("[j]\nsync_file_range=10\n", 2, "sync_file_range", "expected one of wait_before, write, wait_after"),
    # read by the report, which took an empty value as the default and a word as off; fio 3.33
    # refuses them ("failed parsing bwavgtime=", "failed parsing per_job_logs=abc")
    ("[j]\nbwavgtime=\n", 2, "bwavgtime", "expected a whole number, got an empty value"),
    ("[j]\nlatency_target=\n", 2, "latency_target", "expected a time like 10s, got an empty value"),
    ("[j]\nsteadystate_duration=\n", 2, "steadystate_duration", "expected a time like 10s, got an empty value"),
    ("[j]\nper_job_logs=abc\n", 2, "per_job_logs", "expected 0 or 1, got 'abc'"),
    ("[j]\nlog_offset=2\n", 2, "log_offset", "expected 0 or 1, got '2'"),
    ("[j]\nthread=abc\n", 2, "thread", "expected 0 or 1, got 'abc'"),
    ("[j]\ndescription=\n", 2, "description", "expected a text, got an empty value"),
    ("[j]\nruntime=-1\n", 2, "runtime", "negative"),
    ("[j]\nthinktime=1x\n", 2, "thinktime", "expected a time"),
    ("[j]\nsize=1.5g\n", 2, "size", "fractional"),
    ("[j]\nsize=8z\n", 2, "size", "zonesize"),
    ("[j]\nrw=sideways\n", 2, "rw", "expected one of"),
    ("[j]\nrate=1m\nrate_iops=5\n", 3, "rate_iops", "mutually exclusive"),
    ("[j]\nbssplit=4k/60:8k/50\n", 2, "bssplit", "more than 100%"),
    ("[j]\nkb_base=1001\n", 2, "kb_base", "1024 or 1000"),
    ("[j]\niodepth=4,8\n", 2, "iodepth", "single value"),
    ("[j]\nnumjobs=5000\n", None, None, "4096"),
    ("[j]\nbs=\n", 2, "bs", "empty"),
    ("[j]\nsize\n", 2, "size", "needs a value"),
    # fio's FIO_OPT_BOOL options are 0 or 1 (parse.c's option_init): direct=2 ran as direct=1.
    ("[j]\ndirect=2\n", 2, "direct", "expected 0 or 1, got '2'"),
    ("[j]\nbuffered=-1\n", 2, "buffered", "expected 0 or 1, got '-1'"),
    ("[j]\nrandrepeat=5\n", 2, "randrepeat", "expected 0 or 1, got '5'"),
    ("[j]\nrw=write\nfill_device=3\n", 3, "fill_device", "expected 0 or 1, got '3'"),
]


@pytest.mark.parametrize(("text", "line", "option", "fragment"), ERROR_CASES)
def test_bad_input_names_file_line_and_option(text, line, option, fragment):
    e = error(text, device_size=4 * GIB)
    assert (e.path, e.line, e.option) == ("jobs/x.fio", line, option)
    assert fragment in str(e)
    if line is not None:
        # A known option is named before the message; an unknown one by the message itself.
        named = f"option '{option}': " if option and not fragment.startswith("unknown option") else ""
        assert str(e).startswith(f"jobs/x.fio:{line}: {named}")


@pytest.mark.parametrize("setting", ["nice=-5", "prio=-1", "flow=-5", "cpumask=0xff", "iodepth_low=4k",
                                     "verify_interval=512"])
def test_integer_options_fio_accepts_are_accepted_and_said_not_modelled(setting):
    # fio 3.33 takes each (a minimum of 0 is not checked; sizes and hex as its size parser reads them)
    js = jobs(f"[j]\n{setting}\n")
    assert any(f"option '{setting}'" in w and "not modelled" in w for w in js.warnings), js.warnings


@pytest.mark.parametrize("setting", [
    "max_latency=10x", "max_latency=-1", "max_latency=10,abc", "thinktime_spin=1.5", "thinktime_iotime=1m",
    "rate_min=abc,1m", "rate_min=1m,2m,3m", "rate_iops_min=10:20", "ratecycle=9223372036854775807",
    "replay_align=4k", "replay_align=abc,512", "replay_align=-4", "exitall", "exitall=7", "bs_unaligned=0x",
    "softrandommap=-1", "softrandommap=1k", "zone_reset_threshold=0.5:7", "zone_reset_frequency=nan",
    "merge_blktrace_scalars=abc:50", "sync_file_range=write:abc",
])
def test_number_options_fio_accepts_are_accepted_and_said_not_modelled(setting):
    # fio 3.33 takes each: it reads a value in parts (at ',', else ':', else '-') and refuses
    # it only when no part holds a number (parse.c's handle_option)
    js = jobs(f"[j]\n{setting}\n")
    assert any(f"option '{setting}'" in w and "not modelled" in w for w in js.warnings), js.warnings


@pytest.mark.parametrize("value", list(BOOLEAN_VALUES), ids=repr)
def test_not_modelled_booleans_take_what_fio_takes(value):
    names = not_modelled_booleans()
    assert len(names) > 40 and "stats" in names and "log_unix_epoch" in names
    for name in names:
        setting = name if value is None else f"{name}={value}"
        if BOOLEAN_VALUES[value]:
            js = jobs(f"[j]\n{setting}\n")
            assert name in ON_FILES or any(f"option '{setting}'" in w and "not modelled" in w
                                          for w in js.warnings), js.warnings
        else:
            e = error(f"[j]\n{setting}\n")
            got = "an empty value" if value == "" else f"'{value}'"
            expected = "needs a value" if value is None else f"expected 0 or 1, got {got}"
            assert (e.line, e.option) == (2, name) and expected in str(e), str(e)


# fio 3.33 reads latency_target and latency_window with str_to_decimal (fio --parse-only
# --debug=parse): a number at the start, then a unit looked up from the character after it
@pytest.mark.parametrize(("value", "us", "why"), [
    ("10ms", 10_000, None), ("1s", 1_000_000, None), ("10", 10, None), ("1MS", 1000, None),
    ("1k", 1, "'k' is not a unit of time"), ("1.5ms", 1, "it stops at '.'"), ("0.5", 0, "it stops at '.'"),
    ("2m5", 2, "'m5' is not a unit of time"), ("1,2", 1, "it stops at ','"),
    ("abc,5", 5, "the first part that holds a number is '5'"),
])
def test_latency_target_is_reported_as_fio_reads_it(value, us, why):
    js = jobs(f"[j]\nlatency_target={value}\nlatency_window={value}\n")
    assert (js.reports[0].latency_target_ns, js.reports[0].latency_window_us) == (us * 1000, us)
    notes = [w for w in js.warnings if "ssdlab reports the same" in w]
    if why is None:
        assert notes == []
    else:
        assert f"jobs/x.fio:2: option 'latency_target': fio reads '{value}' as {us} us ({why}); ssdlab reports the" \
            " same" in notes


@pytest.mark.parametrize(("value", "message"), [
    ("abc", "expected a time like 10s, got 'abc'"), ("", "expected a time like 10s, got an empty value"),
    ("-1", "expected a time of 0 or more, got '-1' (fio stores it wrapped around)"),
    ("99999999999999999", "time too large, got '99999999999999999'"),
    ("(2*3)", "expected a time like 10s, got '(2*3)'"),
])
def test_latency_target_fio_refuses_or_that_cannot_be_reported_is_one_line(value, message):
    assert str(error(f"[j]\nlatency_target={value}\n")) == f"jobs/x.fio:2: option 'latency_target': {message}"


# fio 3.33 reads a count with a fraction up to the '.', dropping a unit after it (fio
# --parse-only --debug=parse: thinktime_blocks=0.5 is 0, 2.5 is 2, 1.5k is 1; iodepth=1.5 is 1)
@pytest.mark.parametrize(("setting", "attr", "value", "note"), [
    ("thinktime_blocks=0.5", "thinktime_blocks", 1, "fio reads '0.5' as 0 (it stops at the '.'), and 0 means 1"),
    ("thinktime_blocks=2.5", "thinktime_blocks", 2, "fio reads '2.5' as 2 (it stops at the '.')"),
    ("thinktime_blocks=1.5k", "thinktime_blocks", 1, "fio reads '1.5k' as 1 (it stops at the '.')"),
    ("iodepth=1.5", "iodepth", 1, "fio reads '1.5' as 1 (it stops at the '.')"),
])
def test_a_count_with_a_fraction_is_read_as_fio_reads_it(setting, attr, value, note):
    js = jobs(f"[j]\nrw=randread\nthinktime=10\n{setting}\n")
    assert getattr(js.jobs[0], attr) == value
    name = setting.split("=")[0]
    assert f"jobs/x.fio:4: option '{name}': {note}; ssdlab does the same" in js.warnings, js.warnings


def test_a_count_with_a_fraction_below_its_minimum_names_fios_reading():
    assert str(error("[j]\nnumjobs=0.5\n")) == "jobs/x.fio:2: option 'numjobs': must be at least 1, got '0.5' (fio" \
        " reads it as 0)"


@pytest.mark.parametrize(("setting", "modelled"), [
    ("ramp_size=1m", False), ("thinkcycles=10", False), ("sprandom=1", False), ("ss_interval=1s", True),
])
def test_options_of_a_newer_fio_are_taken_and_said_to_be_refused_by_fio_333(setting, modelled):
    # valid fio options (upstream fio-3.42), as every name fio_option_names.txt lists; fio 3.33
    # refuses them ("Bad option <ramp_size=1m>"), which a job file written for it should hear
    js = jobs(f"[j]\n{setting}\n")
    key = setting.split("=")[0]
    assert f"jobs/x.fio:2: option '{key}' is not in fio 3.33, which refuses it (\"Bad option\"): it belongs to a" \
        " newer fio or to an ioengine Debian's fio 3.33 lacks" in js.warnings
    assert modelled or any(f"option '{setting}'" in w and "not modelled" in w for w in js.warnings), js.warnings
    assert not any("not in fio 3.33" in w for w in jobs("[j]\nstats=1\nsoftrandommap=1\n").warnings)


def test_control_characters_are_escaped_and_nul_bytes_refused():
    """A damaged file's escapes were printed as they were (``\\x1b[31m`` turned the terminal
    red); a file with NUL bytes (a binary) was read as options."""
    e = error("[j]\n\x1b[31mred=1\n")
    assert str(e) == "jobs/x.fio:2: unknown option '\\x1b[31mred'"
    e = error("[j]\nrw=\x07read\n")
    assert str(e).endswith("got '\\x07read'") and e.option == "rw"
    assert str(error("[j]\nsize=1m\n\x00\n")) == "jobs/x.fio: not a job file (it holds NUL bytes)"


def test_unknown_option_message_and_attributes():
    e = error("[j]\nbsx=4k\n")
    assert str(e).startswith("jobs/x.fio:2: unknown option 'bsx'")
    assert e.option == "bsx"


def test_unknown_override_is_an_error():
    e = error("[j]\n", overrides={"nope": "1"})
    assert e.path == "<overrides>" and "nope" in str(e)


def test_overrides_apply_to_every_job_after_parsing():
    js = jobs("[global]\nruntime=900\nsize=10g\n[a]\nsize=20g\n[b]\n",
              overrides={"runtime": "0.2", "size": "64m"})
    assert all(j.runtime_ns == 200_000_000 and j.region_size == 64 * 2**20 for j in js.jobs)
    assert js.job_options[0]["size"] == "64m"


# --------------------------------------------------------------------------- properties

_SUFFIXES = ["", "b", "k", "kb", "kib", "m", "mb", "mib", "g", "gb", "gib", "t", "tib"]


def _reference_size(number: int, suffix: str, kb_base: int) -> int:
    """fio's documented meaning, written independently of the parser."""
    s = suffix.lower()
    if s in ("", "b"):
        return number
    power = "kmgtp".index(s[0]) + 1
    if s.endswith("ib"):
        base = 1000 if kb_base == 1024 else 1024
    else:
        base = kb_base
    return number * base**power


@settings(max_examples=300, deadline=None)
@given(
    number=st.integers(min_value=0, max_value=10**6),
    suffix=st.sampled_from(_SUFFIXES),
    upper=st.booleans(),
    kb_base=st.sampled_from([1024, 1000]),
)
def test_valid_size_strings_round_trip_to_fio_semantics(number, suffix, upper, kb_base):
    text = f"{number}{suffix.upper() if upper else suffix}"
    assert parse_fio_size(text, kb_base) == _reference_size(number, suffix, kb_base)


@settings(max_examples=300, deadline=None)
@given(number=st.integers(min_value=0, max_value=2**40), kb_base=st.sampled_from([1024, 1000]))
def test_hex_and_plain_numbers(number, kb_base):
    assert parse_fio_size(str(number), kb_base) == number
    assert parse_fio_size(hex(number), kb_base) == number


_FRAGMENTS = st.sampled_from([
    "[global]", "[job]", "[j2]", "bs=4k", "bs=,8k", "size=1m", "rw=randrw", "numjobs=3",
    "include x.fio", "runtime=1", "${X}", "=", "[", "]", ";", "#", "wait_for=job",
    "stonewall", "offset=50%", "bssplit=4k/50:8k", "random_distribution=zoned:50/50:50/",
    "size=$mb_memory*2", "(", "(1+", "rate=1k,2k,3k,4k", "filename=a:b", "bsrange=1k-4k",
    "startdelay=1-2", "size=99999999999999999999999", "zonesize=1m", "offset=2z",
])


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.one_of(_FRAGMENTS, st.text(max_size=20)), max_size=12))
def test_parser_raises_only_fio_job_errors(parts):
    text = "\n".join(parts)
    try:
        parse_job_text(text, device_size=GIB, env={"X": "4k"}, base_dir="/nonexistent")
    except FioJobError as e:
        assert "\n" not in str(e)


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=200))
def test_parser_raises_only_fio_job_errors_on_any_text(text):
    try:
        parse_job_text(text, device_size=GIB, env={}, base_dir="/nonexistent")
    except FioJobError:
        pass
