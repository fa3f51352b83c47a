"""fio's output formats from a simulated run: the normal report's lines, bandwidth and IOPS
samples, latency buckets, terse v3, json+ bins, fio's log files, several job files and
standard input, and iostat -x per interval. (The layout against the real fio binary is in
test_fio_layout_vs_real.py.)"""

from __future__ import annotations

import json
import re

import pytest

import ssdlab
from ssdlab.fioout import FORMATS, format_report
from ssdlab.fioout.normal import format_normal
from ssdlab.fioout.numbers import Stat, num2str
from ssdlab.fioout.terse import format_terse
from ssdlab.fioout.view import build_view, lat_dist

RR = "[rr]\nioengine=libaio\ndirect=1\nrw=randread\nbs=4k\niodepth=8\nruntime=2\ntime_based\n"


@pytest.fixture(scope="module")
def rr():
    return ssdlab.run(RR)


def test_every_output_format_comes_from_fioout(rr, monkeypatch):
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1700000000")  # the reports' wall-clock stamps
    assert FORMATS == ("normal", "json", "json+", "terse")
    assert format_report(rr, "normal") == format_normal(rr)
    assert format_report(rr, "terse") == format_terse(rr)
    for name, plus in (("json", False), ("json+", True)):
        text = format_report(rr, name)
        assert text.endswith("}\n") and json.loads(text) == json.loads(json.dumps(rr.to_fio_json(plus=plus)))
        assert ("bins" in json.loads(text)["jobs"][0]["read"]["clat_ns"]) == plus
    with pytest.raises(ValueError, match="unknown output format 'xml'"):
        format_report(rr, "xml")


def test_num2str_prints_as_fio():
    # values from fio 3.33's own output
    assert num2str(2701000) == "2701k"
    assert num2str(19000) == "19.0k"
    assert num2str(4096, 4, 1, True, "B") == "4096B"
    assert num2str(16384, 4, 1, True, "B") == "16.0KiB"
    assert num2str(22135603200, 4, 1, True, "B") == "20.6GiB"
    assert num2str(8388608, 4, 1, True, "B") == "8192KiB"
    assert num2str(8388608, 4, 1, False, "B") == "8389kB"
    assert num2str(77700000, 4, 1, False, "B/s") == "77.7MB/s"
    # a fraction that rounds up to 1.0 carries into the whole part (fio 3.33: a null-engine
    # job of 93153 bytes printed "(91.0KiB/12msec)", of 93000 "(90.8KiB/...)")
    assert num2str(93153, 4, 1, True, "B") == "91.0KiB"
    assert num2str(93000, 4, 1, True, "B") == "90.8KiB"
    assert num2str(22970) == "23.0k"  # 45,941 I/Os in 2 s
    assert num2str(int(90.97 * 2**20), 4, 1, True, "B/s") == "91.0MiB/s"
    assert num2str(10034000, 6) == "10034k"
    assert num2str(4237000, 6) == "4237.0k"


def test_bandwidth_stats_of_a_group_add_up_as_fio_sums_them():
    a, b = Stat(), Stat()
    for v in (10, 12, 14):
        a.add(v)
    for v in (20, 20):
        b.add(v)
    assert (a.min, a.max, a.mean, a.n) == (10, 14, 12.0, 3)
    assert a.stddev == pytest.approx(2.0)
    # pooled (latencies of a group) and summed (its bandwidth) from the same samples
    pooled = a.merge(b)
    assert (pooled.min, pooled.max, pooled.mean, pooled.n) == (10, 20, 15.2, 5)
    assert pooled.stddev == pytest.approx(4.6043457, rel=1e-6)
    a.add_sum(b)
    assert (a.min, a.max, a.mean, a.n) == (30, 34, 32.0, 5)


def test_latency_buckets_follow_fio_edges():
    # fio: "10=" holds 4..9 ns, "250=" holds 100..249; 1 us and up go to the usec buckets
    n, u, m = lat_dist({9: 1, 10: 1, 249: 1, 250: 1, 1_000: 1, 1_999_999: 1, 2_500_000_000: 4}, 10)
    assert n[2] == n[3] == n[6] == n[7] == 10.0
    assert u[0] == 10.0 and sum(u) == 10.0
    assert m[0] == 10.0 and m[11] == 40.0  # 1 ms bucket "2", and ">=2000"
    # a share below 0.01 % shows as 0.01 %, as fio prints it
    assert lat_dist({500: 1}, 100_000)[0][8] == 0.01  # "750=" holds 500..749


def test_normal_report_reads_like_fio(rr):
    text = format_normal(rr)
    lines = text.splitlines()
    assert lines[0].startswith("rr: (g=0): rw=randread, bs=(R) 4096B-4096B, (W) 4096B-4096B, (T) 4096B-4096B, "
                               "ioengine=libaio, iodepth=8")
    assert lines[1] == "fio-3.33" and lines[2] == "Starting 1 process" and lines[3] == ""
    assert re.match(r"rr: \(groupid=0, jobs=1\): err= 0: pid=\d+: \w{3} \w{3} [ \d]\d \d\d:\d\d:\d\d \d{4}$", lines[4])
    assert re.search(r"^  read: IOPS=[\d.]+k, BW=[\d.]+MiB/s \([\d.]+MB/s\)\([\d.]+MiB/2000msec\)$", text, re.M)
    bw = re.search(r"^   bw \(  KiB/s\): min=\s*(\d+), max=\s*(\d+), per=[\d.]+%, avg=([\d.]+), "
                   r"stdev=\s*[\d.]+, samples=(\d+)$", text, re.M)
    assert bw and int(bw[4]) == 4  # 2 s in 500 ms windows
    assert re.search(r"^   iops        : min=\s*\d+, max=\s*\d+, avg=[\d.]+, stdev=\s*[\d.]+, samples=4$", text, re.M)
    assert re.search(r"^  lat \(usec\)   : (\d+=[\d.]+%(, )?)+$", text, re.M)
    assert re.search(r"^  cpu          : usr=[\d.]+%, sys=[\d.]+%, ctx=\d+, majf=0, minf=\d+$", text, re.M)
    assert "     submit    : 0=0.0%, 4=100.0%, 8=0.0%, 16=0.0%, 32=0.0%, 64=0.0%, >=64=0.0%" in lines
    assert re.search(r"^     issued rwts: total=\d+,0,0,0 short=0,0,0,0 dropped=0,0,0,0$", text, re.M)
    # fio 3.33: the target (ns) and window (us) as plain integers
    assert "     latency   : target=0, window=0, percentile=100.00%, depth=8" in lines
    assert re.search(r"^   READ: bw=\S+ \(\S+\), \S+-\S+ \(\S+-\S+\), io=\S+ \(\S+\), run=2000-2000msec$", text, re.M)
    assert re.search(r"^  sda: ios=\d+/0, merge=0/0, ticks=\d+/0, in_queue=\d+, util=[\d.]+%$",
                     text, re.M)
    # the device's own depth is labelled as ssdlab's, outside fio's lines
    assert "Device-side queue depth (ssdlab;" in text
    assert re.search(r"^  sda: mean in flight [\d.]+, aqu-sz [\d.]+; jobs' iodepth: rr.0 8$", text, re.M)


def test_bandwidth_samples_are_the_jobs_own(rr):
    (fu,), _ = build_view(rr)
    bw, iops = fu.dirs["read"].bw, fu.dirs["read"].iops
    assert bw.n == iops.n == 4
    assert bw.min <= bw.mean <= bw.max
    # one job alone: its samples average to its own bandwidth
    assert bw.mean == pytest.approx(fu.dirs["read"].bw_bytes() / 1024, rel=0.01)
    assert iops.mean == pytest.approx(fu.dirs["read"].iops_float(), rel=0.01)
    # bwavgtime sets the window
    (fu2,), _ = build_view(ssdlab.run(RR + "bwavgtime=100\n"))
    assert fu2.dirs["read"].bw.n == 20 and fu2.dirs["read"].iops.n == 4


def test_stonewalled_jobs_each_get_their_own_samples():
    r = ssdlab.run("[global]\nioengine=libaio\ndirect=1\nbs=4k\niodepth=4\nruntime=1\ntime_based\n"
                   "[a]\nrw=randread\n[b]\nstonewall\nrw=randwrite\n")
    units, groups = build_view(r)
    assert [fu.dirs["read" if fu.name == "a" else "write"].bw.n for fu in units] == [2, 2]
    for fu, d in zip(units, ("read", "write")):
        assert fu.dirs[d].bw.mean == pytest.approx(fu.dirs[d].bw_bytes() / 1024, rel=0.02)
    assert sorted(groups) == [0, 1]


def test_latency_target_is_reported():
    r = ssdlab.run(RR + "latency_target=10ms\nlatency_window=1s\nlatency_percentile=99\n")
    assert "     latency   : target=10000000, window=1000000, percentile=99.00%, depth=8" in format_normal(r)
    job = r.to_fio_json()["jobs"][0]
    assert (job["latency_target"], job["latency_window"], job["latency_percentile"], job["latency_depth"]) == (
        10_000_000, 1_000_000, 99.0, 8)


def _plat_idx_to_val(idx: int) -> int:
    """fio's bucket value (its documented layout: 64 buckets per power of two)."""
    if idx < 128:
        return idx
    error_bits = (idx >> 6) - 1
    base = 1 << (error_bits + 6)
    return base + int(((idx % 64) + 0.5) * (1 << error_bits))


def test_json_plus_bins_are_fio_buckets(rr):
    j = json.loads(ssdlab.jsonout.dumps(rr.to_fio_json(plus=True)))["jobs"][0]
    bins = j["read"]["clat_ns"]["bins"]
    fio_values = {str(_plat_idx_to_val(i)) for i in range(29 * 64)}
    assert set(bins) <= fio_values
    assert sum(bins.values()) == j["read"]["total_ios"]
    assert "bins" not in rr.to_fio_json()["jobs"][0]["read"]["clat_ns"]
    # the plain JSON has fio's job keys in fio's order
    keys = list(j)
    assert keys[:5] == ["jobname", "groupid", "error", "eta", "elapsed"]  # fio 3.33 has no job_start
    assert keys.index("iodepth_submit") == keys.index("iodepth_level") + 1
    assert "percentile" not in j["write"]["clat_ns"]  # no writes, no percentiles (as fio)


def test_terse_v3_fields(rr):
    line = format_terse(rr).rstrip("\n")
    f = line.split(";")
    # 5 + 2 directions x 41 + cpu 5 + depths 7 + lat us 10 + lat ms 12 + one disk 9
    assert len(f) == 5 + 82 + 5 + 7 + 10 + 12 + 9
    assert f[:5] == ["3", ssdlab.results.FIO_VERSION, "rr", "0", "0"]
    fd = build_view(rr)[0][0].dirs["read"]
    assert f[5:9] == [str(fd.res.bytes >> 10), str(fd.bw_bytes() // 1024), str(fd.iops_int()), "2000"]
    assert f[17] == "1.000000%=" + f[17].split("=")[1] and f[36] == "0%=0"
    assert f[-9] == "sda" and f[-1].endswith("%")


def test_logs_are_fio_logs(tmp_path):
    from ssdlab.fioout.logs import write_logs

    r = ssdlab.run(RR + "write_bw_log\nwrite_iops_log=io\nwrite_lat_log=lat\nlog_avg_msec=250\nlog_offset=1\n")
    paths = sorted(p.name for p in write_logs(r, tmp_path))
    assert paths == ["io_iops.1.log", "lat_clat.1.log", "lat_lat.1.log", "lat_slat.1.log", "rr_bw.1.log"]
    rows = [[int(x) for x in line.split(", ")] for line in (tmp_path / "rr_bw.1.log").read_text().splitlines()]
    # a line per window, and the last, partial one: the I/O still in flight at the runtime
    assert [row[0] for row in rows[:8]] == list(range(250, 2001, 250)) and len(rows) == 9 and rows[8][0] == 2000
    assert all(len(row) == 6 and row[2] == 0 and row[3:] == [0, 0, 0] for row in rows)
    (fu,), _ = build_view(r)
    assert sum(row[1] for row in rows[:8]) / 8 == pytest.approx(fu.dirs["read"].bw_bytes() / 1024, rel=0.02)
    # the window sets the bandwidth samples too, as in fio
    assert fu.dirs["read"].bw.n == 8
    lat = [[int(x) for x in line.split(", ")] for line in (tmp_path / "lat_lat.1.log").read_text().splitlines()]
    mean = r.core["jobs"][0]["read"]["lat"]["mean"]
    assert sum(row[1] for row in lat) / len(lat) == pytest.approx(mean, rel=0.05)
    # per_job_logs=0: one file for all clones
    r2 = ssdlab.run(RR + "numjobs=2\nwrite_bw_log=all\nper_job_logs=0\nlog_avg_msec=500\n")
    assert [p.name for p in write_logs(r2, tmp_path / "two")] == ["all_bw.log"]


def test_cli_takes_several_job_files_and_stdin(tmp_path):
    import subprocess
    import sys

    a = tmp_path / "a.fio"
    a.write_text("[a]\nrw=read\nbs=64k\nsize=4m\ndirect=1\nwrite_bw_log=a\nlog_avg_msec=5\n")
    p = subprocess.run([sys.executable, "-m", "ssdlab", "run", str(a), "-", "--output-format", "json"],
                       input="[b]\nrw=write\nbs=4k\nsize=1m\ndirect=1\n", capture_output=True, text=True,
                       cwd=tmp_path, timeout=300)
    assert p.returncode == 0, p.stderr
    jobs = json.loads(p.stdout)["jobs"]
    assert [(j["jobname"], j["groupid"]) for j in jobs] == [("a", 0), ("b", 1)]
    assert (tmp_path / "a_bw.1.log").is_file()


def test_interval_adds_an_iostat_table_per_interval():
    r = ssdlab.run(RR, interval="500ms")
    text = format_normal(r)
    heads = re.findall(r"^iostat -x, ([\d.]+)-([\d.]+) s:$", text, re.M)
    assert heads == [("0.000", "0.500"), ("0.500", "1.000"), ("1.000", "1.500"), ("1.500", "2.000")]
    # the asked interval's samples only, though the core sampled for fio's windows too
    assert [s["t_ns"] for s in r.core["samples"]] == [0, 500_000_000, 1_000_000_000, 1_500_000_000, 2_000_000_000]
    assert "iostat -x, " not in format_normal(ssdlab.run(RR))


def test_jobs_are_named_by_their_section_and_writes_report_zone_resets():
    # fio 3.33 on this job file: jobs "file1" and "own" ([global] name= is not inherited; a
    # section's own name= renames it), and "; 0 zone resets" ends the write line only.
    text = format_normal(ssdlab.run("[global]\nname=glob\nioengine=libaio\ndirect=1\nbs=4k\nsize=1m\n"
                                    "[file1]\nrw=randwrite\n[file2]\nname=own\nrw=randread\n"))
    assert re.search(r"^file1: \(g=0\)", text, re.M) and re.search(r"^own: \(g=0\)", text, re.M)
    assert "glob" not in text
    assert re.search(r"^  write: IOPS=.*msec\); 0 zone resets$", text, re.M)
    assert re.search(r"^  read: IOPS=.*msec\)$", text, re.M)


def test_sync_section_is_named_as_fio_3_33_names_it():
    text = format_normal(ssdlab.run("[s]\nioengine=psync\ndirect=1\nrw=write\nbs=4k\nsize=1m\nfsync=8\n"))
    lines = text.splitlines()
    i = lines.index("  fsync/fdatasync/sync_file_range:")  # later fio adds "/syncfs"
    assert lines[i + 1].startswith("    sync (")


def test_version_is_fio_3_33_in_every_format(rr):
    assert ssdlab.results.FIO_VERSION == "fio-3.33"
    assert rr.to_fio_json()["fio version"] == "fio-3.33"
    assert format_terse(rr).split(";")[1] == "fio-3.33"
    # fio 3.33's disk_util has no sectors (later releases add them)
    assert list(rr.to_fio_json()["disk_util"][0]) == ["name", "read_ios", "write_ios", "read_merges", "write_merges",
                                                      "read_ticks", "write_ticks", "in_queue", "util"]


def test_continue_on_error_reports_errors_as_fio_does():
    # fio 3.33 with continue_on_error (not none): an "errors" line after "issued rwts", JSON
    # total_err and first_error after latency_ms, two terse fields after the disks'
    base = "[e]\nioengine=libaio\ndirect=1\nrw=randwrite\nbs=4k\nsize=1m\n"
    on, off = ssdlab.run(base + "continue_on_error=all\n"), ssdlab.run(base + "continue_on_error=none\n")
    lines = format_normal(on).splitlines()
    i = lines.index("     errors    : total=0, first_error=0/<Success>")
    assert lines[i - 1].startswith("     issued rwts:") and lines[i + 1].startswith("     latency   :")
    assert not any(line.startswith("     errors") for line in format_normal(off).splitlines())
    keys = list(on.to_fio_json()["jobs"][0])
    assert keys[keys.index("latency_ms") + 1:keys.index("latency_ms") + 4] == ["total_err", "first_error",
                                                                            "latency_depth"]
    assert "total_err" not in off.to_fio_json()["jobs"][0]
    t_on, t_off = format_terse(on).rstrip("\n").split(";"), format_terse(off).rstrip("\n").split(";")
    assert len(t_on) == len(t_off) + 2 and t_on[-2:] == ["0", "0"]
