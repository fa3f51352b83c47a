"""What fio's report takes from the core's observation of each job: its own bandwidth and
IOPS samples, its I/O log (a line per I/O, as fio writes without log_avg_msec), the CPU time
of its thread; and the core's own bounds on what a run keeps."""

from __future__ import annotations

import pytest

import ssdlab
from ssdlab import api
from ssdlab.analysis import memory
from ssdlab.fio import FioJobError
from ssdlab.fioout.logs import write_logs
from ssdlab.fioout.view import build_view
from ssdlab.fioout.normal import format_normal

# Two jobs side by side: one paced evenly, one at random (Poisson) times.
TWO = ("[global]\nioengine=libaio\ndirect=1\nrw=randread\nbs=4k\niodepth=4\nruntime=2\ntime_based\n"
       "[even]\nrate_iops=1000\n[bursty]\nrate_iops=3000\nrate_process=poisson\n")


def test_each_job_has_its_own_bandwidth_and_iops_samples():
    r = ssdlab.run(TWO)
    even, bursty = (j["read"] for j in r.to_fio_json()["jobs"])
    for j, rate in ((even, 1000), (bursty, 3000)):
        assert j["iops_samples"] == 4  # 2 s of 500 ms windows
        assert j["iops_mean"] == pytest.approx(rate, rel=0.05)
        # the samples are the job's own I/O: their windows cover its runtime
        assert j["iops_mean"] * j["iops_samples"] * 0.5 == pytest.approx(j["total_ios"], abs=4)
        assert j["bw_mean"] * j["bw_samples"] * 0.5 == pytest.approx(j["io_kbytes"], abs=16)
    # the evenly paced job's windows are all alike: the other job's randomness is not its own
    assert even["iops_max"] - even["iops_min"] <= 2
    assert bursty["iops_max"] - bursty["iops_min"] > 20
    text = format_normal(r)
    assert f"iops        : min={even['iops_min']:5d}, max={even['iops_max']:5d}" in text


def test_a_lat_log_without_log_avg_msec_has_a_line_per_io(tmp_path):
    job = ("[w]\nioengine=libaio\ndirect=1\nrw=randwrite\nbs=4k\niodepth=4\nsize=400k\n"
           "write_lat_log=x\nwrite_bw_log=x\nwrite_iops_log=x\n")
    r = ssdlab.run(job)
    names = sorted(p.name for p in write_logs(r, tmp_path))
    assert names == ["x_bw.1.log", "x_clat.1.log", "x_iops.1.log", "x_lat.1.log", "x_slat.1.log"]
    rows = {n: [[int(v) for v in line.split(", ")] for line in (tmp_path / n).read_text().splitlines()] for n in names}
    w = r.to_fio_json()["jobs"][0]["write"]
    for n in names:
        assert len(rows[n]) == 100, n  # 400 KiB of 4 KiB I/Os
        # fio's columns: time ms, value, direction, block size, priority
        assert all(len(row) == 5 and row[2] == 1 and row[3] == 4096 and row[4] == 0 for row in rows[n]), n
    assert sum(row[1] for row in rows["x_clat.1.log"]) / 100 == pytest.approx(w["clat_ns"]["mean"], abs=1)
    assert sum(row[1] for row in rows["x_lat.1.log"]) / 100 == pytest.approx(w["lat_ns"]["mean"], abs=1)
    assert [row[1] for row in rows["x_iops.1.log"]] == [1] * 100
    # with a line per bandwidth sample, each I/O is a sample (fio's rule), in its log too
    assert w["bw_samples"] == 100 and w["bw_min"] == min(row[1] for row in rows["x_bw.1.log"])
    # log_offset=1 adds the offset column: each 4 KiB block of the 400 KiB once
    r = ssdlab.run(job + "log_offset=1\n")
    write_logs(r, tmp_path / "off")
    rows = [[int(v) for v in line.split(", ")] for line in (tmp_path / "off" / "x_lat.1.log").read_text().splitlines()]
    assert all(len(row) == 6 for row in rows)
    assert sorted(row[4] for row in rows) == list(range(0, 400 << 10, 4096))


def test_log_window_value_logs_each_windows_largest_latency_or_both(tmp_path):
    job = ("[w]\nioengine=libaio\ndirect=1\nrw=randread\nbs=4k\niodepth=8\nsize=8m\n"
           "write_lat_log=x\nlog_offset=0\n")

    def rows(extra: str, sub: str) -> list[list[int]]:
        write_logs(ssdlab.run(job + extra, seed=3), tmp_path / sub)
        return [[int(v) for v in line.split(", ")] for line in (tmp_path / sub / "x_clat.1.log").read_text().splitlines()]

    # The same I/Os a line each: the largest completion latency of each 2 ms window.
    per_io = rows("", "per_io")
    largest: dict[int, int] = {}
    for t, clat, *_ in per_io:
        end = -(-t // 2) * 2 if t % 2 else t + 2  # a completion on a window's end counts in the next
        largest[end] = max(largest.get(end, 0), clat)
    mean = rows("log_avg_msec=2\n", "mean")
    top = rows("log_avg_msec=2\nlog_window_value=max\n", "max")
    both = rows("log_avg_msec=2\nlog_max_value=both\n", "both")
    assert [r[0] for r in top] == [r[0] for r in mean] and len(top) > 8
    assert all(t[1] > m[1] for t, m in zip(top, mean))
    assert [t[1] for t in top[:-1]] == [largest[t[0]] for t in top[:-1]]
    # both: the mean, then the maximum, then fio's other columns
    assert [(b[0], b[1], b[2]) for b in both] == [(m[0], m[1], t[1]) for m, t in zip(mean, top)]
    assert all(len(b) == len(m) + 1 for b, m in zip(both, mean))
    with pytest.raises(FioJobError, match="log_window_value.*expected avg, max or both"):
        ssdlab.run(job + "log_avg_msec=2\nlog_window_value=median\n")


def test_a_sync_engine_writes_an_empty_slat_log_as_fio_does(tmp_path):
    r = ssdlab.run("[s]\nioengine=psync\ndirect=1\nrw=read\nbs=4k\nsize=40k\nwrite_lat_log=s\n")
    write_logs(r, tmp_path)
    assert (tmp_path / "s_slat.1.log").read_text() == ""
    assert len((tmp_path / "s_clat.1.log").read_text().splitlines()) == 10


def _cpu(r):
    j = r.to_fio_json()["jobs"][0]
    return j["usr_cpu"], j["sys_cpu"], j["job_runtime"]


def test_the_cpu_line_is_the_threads_simulated_busy_time():
    job = "[r]\nioengine=libaio\ndirect=1\nrw=randread\nbs=4k\niodepth=1\nruntime=1\ntime_based\n"
    r = ssdlab.run(job)
    usr, sys_, run_ms = _cpu(r)
    st = r.core["jobs"][0]
    assert (usr + sys_) * run_ms / 100 == pytest.approx((st["cpu_ns"] + st["sched_cpu_ns"]) / 1e6, rel=1e-9)
    # the I/O scheduler's code runs on the submitting thread: system time
    rb = ssdlab.run(job, scheduler="bfq")
    assert rb.core["jobs"][0]["sched_cpu_ns"] > 0 == st["sched_cpu_ns"]
    usr_b, sys_b, run_b = _cpu(rb)
    per_io = sys_ * run_ms / st["issued"]
    per_io_b = sys_b * run_b / rb.core["jobs"][0]["issued"]
    assert per_io_b > per_io * 1.05
    # a host that takes more CPU per I/O shows more
    other = ssdlab.run(job, host="generic-linux")
    assert other.spec.core["host"]["io_overhead_ns"] != r.spec.core["host"]["io_overhead_ns"]
    assert _cpu(other)[:2] != (usr, sys_)


def test_the_core_refuses_a_time_series_past_its_limit():
    # a run of guessed length (its size bounds it) that the Python estimate lets through
    spec = api.build("[r]\ndirect=1\nrw=randread\nbs=4k\nsize=16m\n", interval="50us", memory_limit="none")
    spec.core["limits"]["max_samples"] = 200
    with pytest.raises(api.RunLimitError, match=r"--interval 50us: the time series passed 200 samples"):
        api.execute(spec)
    # a run of known length is refused before it runs
    spec = api.build("[r]\ndirect=1\nrw=randread\nruntime=1\ntime_based\n", interval="1ms", memory_limit="none")
    spec.core["limits"]["max_samples"] = 500
    with pytest.raises(api.RunLimitError, match=r"1,001 time-series samples"):
        api.execute(spec)


def test_per_io_logs_are_bounded():
    job = "[w]\nrw=randwrite\ndirect=1\nbs=4k\nsize=64m\nwrite_lat_log=x\n"
    with pytest.raises(memory.MemoryLimitError, match=r"16,384 records .*log_avg_msec"):
        old = memory.MAX_LOG_RECORDS
        memory.MAX_LOG_RECORDS = 10_000
        try:
            api.build(job, memory_limit="none")
        finally:
            memory.MAX_LOG_RECORDS = old
    spec = api.build(job, memory_limit="none")
    assert spec.core["limits"]["max_log_records"] == memory.MAX_LOG_RECORDS
    spec.core["limits"]["max_log_records"] = 1000
    with pytest.raises(api.SimulationError, match=r"job 'w': its I/O logs passed 1,000 records"):
        api.execute(spec)
    # averaged over windows, the same job logs a few lines
    r = ssdlab.run(job + "log_avg_msec=100\n")
    assert 0 < len(r.core["jobs"][0]["log"]) < 100
