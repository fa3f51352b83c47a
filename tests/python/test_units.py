import pytest
from hypothesis import given, strategies as st

from ssdlab.units import UnitError, parse_rate, parse_size, parse_time_ns


@pytest.mark.parametrize("text,expected", [
    ("4096", 4096), ("16KiB", 16384), ("256GB", 256 * 10**9), ("4k", 4096), ("1.5MiB", 1572864),
    ("150TB", 150 * 10**12), (512, 512),
])
def test_sizes(text, expected):
    assert parse_size(text) == expected


@pytest.mark.parametrize("text,default,expected", [
    ("45us", "ns", 45_000), ("3.5ms", "ns", 3_500_000), ("8h", "ns", 8 * 3600 * 10**9),
    (300, "s", 300 * 10**9), ("1m", "ns", 60 * 10**9),
])
def test_times(text, default, expected):
    assert parse_time_ns(text, default) == expected


@pytest.mark.parametrize("text,expected", [
    ("550MB/s", 550e6), ("100Gb/s", 12.5e9), ("12.5GB/s", 12.5e9), ("400MiB/s", 400 * 2**20),
])
def test_rates(text, expected):
    assert parse_rate(text) == pytest.approx(expected)


@pytest.mark.parametrize("bad", ["", "abc", "4XB", "-1", "1.2.3k"])
def test_bad_sizes_name_the_form(bad):
    with pytest.raises(UnitError, match="expected a size"):
        parse_size(bad)


@given(st.integers(min_value=0, max_value=2**50), st.sampled_from(["", "k", "KiB", "KB", "m", "MiB", "MB", "g", "GB"]))
def test_size_suffixes_scale_exactly(n, unit):
    scale = {"": 1, "k": 1024, "KiB": 1024, "KB": 1000, "m": 2**20, "MiB": 2**20, "MB": 10**6,
             "g": 2**30, "GB": 10**9}[unit]
    assert parse_size(f"{n}{unit}") == n * scale


@pytest.mark.parametrize("text,ours,fio_1024,fio_1000", [
    # the table in ssdlab.units' docstring: one module, two sets of rules
    ("4k", 4096, 4096, 4000), ("4K", 4096, 4096, 4000),
    ("4KB", 4000, 4096, 4000), ("4kB", 4000, 4096, 4000), ("4kb", None, 4096, 4000),
    ("4KiB", 4096, 4000, 4096), ("4ki", None, 4096, 4000),
    ("1.5MiB", 1572864, None, None), ("0x1000", None, 4096, 4096), ("(2*4k)", None, 8192, 8000),
])
def test_ssdlab_and_fio_size_rules(text, ours, fio_1024, fio_1000):
    from ssdlab.units import ValueProblem, parse_fio_size

    if ours is None:
        with pytest.raises(UnitError):
            parse_size(text)
    else:
        assert parse_size(text) == ours
    for kb_base, expected in ((1024, fio_1024), (1000, fio_1000)):
        if expected is None:
            with pytest.raises(ValueProblem):
                parse_fio_size(text, kb_base)
        else:
            assert parse_fio_size(text, kb_base, notes=[]) == expected


def test_ssdlab_and_fio_time_rules():
    from ssdlab.units import parse_fio_time_us

    notes: list[str] = []
    assert parse_time_ns("10sec", "s") == 10 * 10**9 and parse_fio_time_us("10sec", seconds_default=True, notes=notes) == 10
    assert notes and "10 us" in notes[0]
    assert parse_time_ns("10", "s") == 10 * 10**9 and parse_fio_time_us("10", seconds_default=True) == 10 * 10**6
    assert parse_fio_time_us("10", seconds_default=False) == 10
    assert parse_time_ns("1m") == 60 * 10**9 and parse_fio_time_us("1m", seconds_default=True) == 60 * 10**6


def test_format_time_writes_the_largest_unit_a_time_fills_as_options_take_it():
    from ssdlab.units import format_time, parse_time_ns

    for ns, said in ((1.5e9, "1.5s"), (250_000, "250us"), (2_000_000, "2ms"), (40, "40ns")):
        assert format_time(ns) == said and parse_time_ns(said, "s") == ns
