"""iostat -x fields from hand-made /proc/diskstats counter sequences."""

import pytest

from ssdlab.iostat import FIELDS, iostat_fields

ZERO = dict.fromkeys(
    ["read_ios", "read_merges", "read_sectors", "read_ticks_ms", "write_ios", "write_merges",
     "write_sectors", "write_ticks_ms", "in_flight", "io_ticks_ms", "time_in_queue_ms",
     "discard_ios", "discard_merges", "discard_sectors", "discard_ticks_ms", "flush_ios",
     "flush_ticks_ms"], 0)


def counters(**kw):
    c = dict(ZERO)
    c.update(kw)
    return c


def test_one_second_of_mixed_io():
    prev = counters(read_ios=100, read_sectors=800, read_ticks_ms=50, write_ios=10,
                    io_ticks_ms=100, time_in_queue_ms=60)
    cur = counters(read_ios=1100, read_sectors=8800, read_ticks_ms=550, read_merges=250,
                   write_ios=510, write_sectors=8010, write_ticks_ms=1000,
                   io_ticks_ms=850, time_in_queue_ms=1610, flush_ios=5, flush_ticks_ms=10)
    row = iostat_fields(prev, cur, 1000.0)
    assert list(row) == FIELDS
    assert row["r/s"] == 1000
    assert row["rkB/s"] == 4000  # 8000 sectors / 2
    assert row["rrqm/s"] == 250
    assert row["%rrqm"] == pytest.approx(100 * 250 / 1250)
    assert row["r_await"] == pytest.approx(0.5)  # 500 ms over 1000 reads
    assert row["rareq-sz"] == pytest.approx(4.0)
    assert row["w/s"] == 500
    assert row["w_await"] == pytest.approx(2.0)
    assert row["wareq-sz"] == pytest.approx(8010 / 2 / 500)
    assert row["f/s"] == 5 and row["f_await"] == 2
    assert row["aqu-sz"] == pytest.approx(1.55)  # 1550 ms of latency in 1000 ms
    assert row["%util"] == pytest.approx(75.0)


def test_idle_interval_has_zero_awaits_and_sizes():
    c = counters(read_ios=5, read_sectors=40, read_ticks_ms=3, io_ticks_ms=4)
    row = iostat_fields(c, c, 2000.0)
    assert all(v == 0 for v in row.values())


def test_util_is_capped_like_iostat():
    row = iostat_fields(None, counters(io_ticks_ms=1004), 1000.0)
    assert row["%util"] == 100.0


def test_interval_must_be_positive():
    with pytest.raises(ValueError):
        iostat_fields(None, counters(), 0)
