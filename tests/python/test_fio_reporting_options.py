"""fio's reporting options, as fio 3.33 prints under them, without fio itself: which
latencies are recorded (disable_slat/clat/lat, gtod_reduce), which get percentiles
(clat_percentiles, lat_percentiles, slat_percentiles, percentile_list) and
unified_rw_reporting's merged direction. (Against the real fio 3.33:
test_fio_layout_vs_real.py.)"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

import ssdlab
from ssdlab.fio import FioJobError
from ssdlab.fioout.normal import format_normal
from ssdlab.fioout.schema import RunFileError, read_run
from ssdlab.fioout.terse import format_terse

BASE = "[j]\nioengine=libaio\ndirect=1\nrw=randrw\nbs=4k\niodepth=4\nsize=2m\n"


def run(extra: str = "", base: str = BASE):
    return ssdlab.run(base + extra)


def fio_part(r) -> list[str]:
    lines = format_normal(r).splitlines()
    return lines[:lines.index("Disk stats (read/write):")]


def blocks(lines: list[str]) -> list[str]:
    """The latency and percentile lines' titles, in order."""
    return [line.strip() for line in lines if line.startswith("    ") and "(" in line and "|" not in line]


@pytest.fixture(scope="module")
def plain():
    return run()


def test_defaults_print_slat_clat_lat_and_clats_percentiles(plain):
    titles = blocks(fio_part(plain))
    assert [t.split(" (")[0] for t in titles[:4]] == ["slat", "clat", "lat", "clat percentiles"]
    job = plain.to_fio_json()["jobs"][0]["read"]
    assert "percentile" in job["clat_ns"] and "percentile" not in job["lat_ns"] and "percentile" not in job["slat_ns"]


def test_clat_percentiles_off_drops_the_block_json_and_terse_fields(plain):
    r = run("clat_percentiles=0\n")
    assert not any("percentiles" in t for t in blocks(fio_part(r)))
    assert "percentile" not in r.to_fio_json()["jobs"][0]["read"]["clat_ns"]
    fields = format_terse(r).split(";")
    assert fields.count("0%=0") == 40 and format_terse(plain).split(";").count("0%=0") == 2 * (20 - 17)
    assert not any("clat_percentiles" in w for w in r.warnings)


def test_lat_and_slat_percentiles_come_from_their_own_histograms():
    r = run("lat_percentiles=1\nslat_percentiles=1\n")
    titles = [t.split(" (")[0] for t in blocks(fio_part(r))]
    assert titles[:6] == ["slat", "clat", "lat", "slat percentiles", "clat percentiles", "lat percentiles"]
    read = r.to_fio_json(plus=True)["jobs"][0]["read"]
    for kind in ("slat", "clat", "lat"):
        lat = read[f"{kind}_ns"]
        assert sum(lat["bins"].values()) == lat["N"] == read["total_ios"]
        # each percentile lies within its own latency's range (to a bucket's width, 1/64)
        assert lat["min"] * 0.98 <= lat["percentile"]["50.000000"] <= lat["max"] * 1.02
    # lat = slat + clat per I/O: its median lies above clat's
    assert read["lat_ns"]["percentile"]["50.000000"] > read["clat_ns"]["percentile"]["50.000000"]
    assert read["slat_ns"]["percentile"]["99.000000"] < read["clat_ns"]["percentile"]["1.000000"]
    # terse's percentile fields are lat's then (us)
    pct = [f for f in format_terse(r).split(";") if f.startswith("50.000000%=")]
    assert pct[0] == f"50.000000%={read['lat_ns']['percentile']['50.000000'] // 1000}"


def test_a_synchronous_engines_slat_percentiles_are_none():
    r = run("slat_percentiles=1\n", base=BASE.replace("libaio", "psync"))
    assert not any(t.startswith(("slat", "slat percentiles")) for t in blocks(fio_part(r)))


def test_disable_clat_drops_clat_its_buckets_and_the_sync_section():
    r = run("disable_clat=1\nfsync=4\nlat_percentiles=1\n")
    lines = fio_part(r)
    titles = [t.split(" (")[0] for t in blocks(lines)]
    assert "clat" not in titles and "clat percentiles" not in titles and "lat percentiles" in titles
    assert not any(line.startswith("  lat (") for line in lines)
    assert not any(line.startswith("  fsync/fdatasync") for line in lines)
    job = r.to_fio_json()["jobs"][0]
    assert job["read"]["clat_ns"]["N"] == 0 and job["sync"]["lat_ns"]["N"] == 0 and job["sync"]["total_ios"] > 0
    assert sum(job["latency_us"].values()) + sum(job["latency_ms"].values()) == 0
    assert "percentile" in job["read"]["lat_ns"]
    terse = format_terse(r).rstrip("\n").split(";")
    # the latency buckets (10 us, 12 ms) are all 0; the percentiles are lat's
    assert all(v == "0.00%" for v in terse[-9 - 22:-9])
    assert terse[5 + 12].startswith("1.000000%=")


def test_disable_lat_and_slat_drop_those_lines():
    r = run("disable_lat=1\ndisable_slat=1\nlat_percentiles=1\n")
    titles = [t.split(" (")[0] for t in blocks(fio_part(r))]
    # lat's percentiles need lat: fio prints clat's alone
    assert titles[:2] == ["clat", "clat percentiles"] and "lat" not in titles and "slat" not in titles
    read = r.to_fio_json()["jobs"][0]["read"]
    assert read["lat_ns"]["N"] == read["slat_ns"]["N"] == 0 and read["clat_ns"]["N"] > 0
    assert "percentile" not in read["lat_ns"]


def test_gtod_reduce_disables_all_three_and_an_explicit_option_wins():
    lines = fio_part(run("gtod_reduce=1\n"))
    assert blocks(lines) == [] and not any(line.startswith("  lat (") for line in lines)
    titles = [t.split(" (")[0] for t in blocks(fio_part(run("gtod_reduce=1\ndisable_clat=0\n")))]
    assert titles[:2] == ["clat", "clat percentiles"]


def test_percentile_list_sets_every_block():
    r = run("percentile_list=50:99.5\nlat_percentiles=1\n")
    rows = [line for line in fio_part(r) if line.startswith("     |")]
    assert len(rows) == 4 and all(line.count("th=[") == 2 for line in rows)
    assert rows[0].startswith("     | 50.0th=[") and ", 99.5th=[" in rows[0]  # one decimal, as written
    read = r.to_fio_json()["jobs"][0]["read"]
    assert list(read["lat_ns"]["percentile"]) == list(read["clat_ns"]["percentile"]) == ["50.000000", "99.500000"]


def test_bad_values_are_refused_in_one_line_and_good_ones_not_warned():
    for bad, expected in (("disable_lat=2", "expected 0 or 1"), ("lat_percentiles=yes", "expected 0 or 1"),
                          ("unified_rw_reporting=all", "expected one of none, mixed, both")):
        with pytest.raises(FioJobError, match=expected) as e:
            ssdlab.build(BASE + bad + "\n")
        assert "\n" not in str(e.value) and bad.split("=")[0] in str(e.value)
    spec = ssdlab.build(BASE + "disable_lat=1\ndisable_clat=0\ndisable_slat=0\ndisable_bw=1\ngtod_reduce=0\n"
                        "clat_percentiles=1\nlat_percentiles=1\nslat_percentiles=1\nunified_rw_reporting=both\n")
    assert spec.warnings == []


# ---- unified_rw_reporting ------------------------------------------------------------------

UNIFIED = ("[global]\nioengine=libaio\ndirect=1\nrw=randrw\nbs=4k\niodepth=4\nruntime=1\ntime_based\n"
           "fsync=16\n[a]\n")


@pytest.fixture(scope="module")
def apart():
    return ssdlab.run(UNIFIED)


@pytest.fixture(scope="module")
def mixed():
    return ssdlab.run(UNIFIED + "unified_rw_reporting=mixed\n")


@pytest.fixture(scope="module")
def both():
    return ssdlab.run(UNIFIED + "unified_rw_reporting=2\n")


def test_mixed_merges_the_directions_into_one(apart, mixed):
    lines = fio_part(mixed)
    assert not any(line.startswith(("  read:", "  write:")) for line in lines)
    head = next(line for line in lines if line.startswith("  mixed: IOPS="))
    job, per = mixed.to_fio_json()["jobs"][0], apart.to_fio_json()["jobs"][0]
    m = job["mixed"]
    assert m["io_bytes"] == per["read"]["io_bytes"] + per["write"]["io_bytes"]
    assert m["total_ios"] == per["read"]["total_ios"] + per["write"]["total_ios"]
    assert f"/{m['runtime']}msec)" in head and m["runtime"] == max(per["read"]["runtime"], per["write"]["runtime"])
    assert m["clat_ns"]["N"] == m["total_ios"]
    # bandwidth and IOPS samples summed, as a group's jobs' are
    assert m["bw_samples"] == per["read"]["bw_samples"] + per["write"]["bw_samples"] > 0
    assert m["bw_mean"] == pytest.approx(per["read"]["bw_mean"] + per["write"]["bw_mean"])
    assert [k for k in job if k in ("read", "write", "trim", "sync", "mixed")] == ["mixed"]
    issued = next(line for line in lines if line.startswith("     issued rwts:"))
    assert issued.startswith(f"     issued rwts: total={m['total_ios']},0,0,{per['sync']['total_ios']} ")
    group = [line for line in lines if line.startswith(("   READ:", "  WRITE:", "  MIXED:"))]
    assert len(group) == 1 and group[0].startswith("  MIXED: bw=")
    assert any(line.startswith("  fsync/fdatasync/sync_file_range:") for line in lines)
    terse = format_terse(mixed).rstrip("\n").split(";")
    assert len(terse) == len(format_terse(apart).rstrip("\n").split(";")) - 41
    assert terse[5:9] == [str(m["io_bytes"] >> 10), str(m["bw"]), str(int(m["iops"])), str(m["runtime"])]


def test_both_adds_the_merged_direction_after_the_others(apart, both):
    lines = fio_part(both)
    heads = [line.split(":")[0] for line in lines if line.startswith(("  read:", "  write:", "  mixed:"))]
    assert heads == ["  read", "  write", "  mixed"]
    job = both.to_fio_json()["jobs"][0]
    m = job["mixed"]
    # fio 3.33's text prints the merged direction's first line without its I/O; JSON has it
    assert f"  mixed: IOPS=0, BW=0 (0)(0B/{m['runtime']}msec)" in lines
    assert m["io_bytes"] == job["read"]["io_bytes"] + job["write"]["io_bytes"]
    assert [k for k in job if k in ("read", "write", "trim", "sync", "mixed")] == ["read", "write", "trim", "sync",
                                                                                  "mixed"]
    group = [line for line in lines if line.startswith(("   READ:", "  WRITE:", "  MIXED:"))]
    assert [g[:7] for g in group] == ["   READ", "  WRITE", "  MIXED"]
    run_ms = f"run={min(job['read']['runtime'], job['write']['runtime'])}-{m['runtime']}msec"
    assert group[2].endswith(run_ms)
    assert len(format_terse(both).split(";")) == len(format_terse(apart).split(";")) + 41
    # the same run, reported apart: the per-direction lines are unchanged
    assert [line for line in lines if line.startswith("  read:")] == \
        [line for line in fio_part(apart) if line.startswith("  read:")]


def test_a_mixed_json_is_read_back(mixed, tmp_path):
    path = tmp_path / "m.json"
    path.write_text(json.dumps(mixed.to_fio_json()))
    assert read_run(path)["jobs"][0]["mixed"]["total_ios"] > 0
    p = subprocess.run([sys.executable, "-m", "ssdlab", "compare", str(path), str(path)],
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    assert any(row.split()[:4] == ["job", "a", "mixed", "iops"] for row in p.stdout.splitlines())
    data = mixed.to_fio_json()
    del data["jobs"][0]["mixed"]
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(data))
    with pytest.raises(RunFileError, match=r"jobs\[0\]\.read: missing \(or mixed alone"):
        read_run(bad)


def test_fit_and_the_html_report_read_the_mixed_direction(mixed):
    from ssdlab.analysis.fit import run_figures
    from ssdlab.htmlreport import _jobs

    data = mixed.to_fio_json()
    figures = run_figures(data)
    assert figures[("a#1", "mixed", "iops")] == pytest.approx(data["jobs"][0]["mixed"]["iops"])
    table, _ = _jobs(data)
    assert [row[:2] for row in table["rows"]] == [["a", "mixed"]]
