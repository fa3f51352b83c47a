"""The GC tail-latency experiment: writes on a steady-state drive stretch the read tail from
read time to erase/victim scale while the median stays put; a fresh drive only adds program
time; reads alone are the same either way."""

import re
from importlib import resources
from pathlib import Path

import pytest

from ssdlab.config import load_profile
from ssdlab.experiments.gc_tail import Drive, job_text, plot, profile_text, reproduce, shrunk_blocks_per_plane


@pytest.fixture(scope="module")
def table(tmp_path_factory):
    # 8 GB and 4 s per scenario keep the file fast; two write shares, no policy comparison.
    return reproduce(capacity=8 * 10**9, runtime=4.0, shares=(0.5, 1.0), policy_share=None,
                     workdir=tmp_path_factory.mktemp("gc_tail"))


def row(table, scenario):
    return table.set_index("scenario").loc[scenario]


def test_shrunk_profile_keeps_the_spare_factor_and_sets_the_policy():
    full, _ = load_profile("samsung-850-pro")  # has no gc_policy line: it must be added
    text = profile_text("samsung-850-pro", 16 * 10**9, "cost-benefit")
    assert re.search(r'^gc_policy = \{ value = "cost-benefit"', text, flags=re.MULTILINE)
    blocks = shrunk_blocks_per_plane("samsung-850-pro", 16 * 10**9)
    assert f"blocks_per_plane = {{ value = {blocks}," in text
    kept = full.ftl.gc_threshold_blocks + 1
    bytes_per_block_row = full.raw_bytes / full.nand.blocks_per_plane  # one block in every plane

    def spare_factor(blocks_per_plane, capacity):
        return (blocks_per_plane - kept) * bytes_per_block_row / capacity

    full_spare = spare_factor(full.nand.blocks_per_plane, full.capacity)
    assert spare_factor(blocks, 16e9) == pytest.approx(full_spare, rel=0.02)
    # The 970 PRO names its policy already: replaced, not duplicated.
    text = profile_text("samsung-970-pro-512", 16 * 10**9, "cost-benefit")
    assert len(re.findall(r"^gc_policy", text, flags=re.MULTILINE)) == 1
    original = (resources.files("ssdlab") / "profiles" / "samsung-970-pro-512.toml").read_text()
    assert 'gc_policy = { value = "greedy"' in original


def test_victim_time_grows_with_waf_towards_a_whole_block():
    d = Drive(Path("x"), read_us=50, program_us=500, erase_us=3000, dies=1, gc_threshold=3, block_bytes=0,
              ius_per_block=1024, ius_per_page=4, ius_per_program=16)
    whole = 256 * 50 + 64 * 500 + 3000
    assert d.victim_us(1.5) < d.victim_us(5) < d.victim_us(50) < whole
    assert d.victim_us(1e9) == pytest.approx(whole, rel=1e-6)


def test_job_text_has_both_jobs_and_the_rate():
    text = job_text(2, write_iops=1234.4)
    assert "[reader]" in text and "[writer]" in text and "rate_iops=1234" in text
    assert "[writer]" not in job_text(2)


def test_reads_alone_are_the_same_on_fresh_and_steady_drives(table):
    ref = table.attrs["reference"]
    fresh, steady = row(table, "reads alone, fresh"), row(table, "reads alone, steady")
    assert fresh.gc_erases == 0 and steady.gc_erases == 0
    for r in (fresh, steady):
        assert ref["tR_us"] < r["read_p50_us"] < 2 * ref["tR_us"]
        assert r["read_p99.9_us"] < 4 * ref["tR_us"]  # queueing behind other reads only
    assert steady["read_p99.9_us"] == pytest.approx(fresh["read_p99.9_us"], rel=0.1)


def test_writes_on_a_fresh_drive_add_program_time_but_no_gc(table):
    ref = table.attrs["reference"]
    r = row(table, "writes 50%, fresh")
    assert r.gc_erases == 0 and r.waf == pytest.approx(1.0, abs=0.05)
    # A read can wait behind a program or two on its die, never behind an erase.
    assert 0.5 * ref["tPROG_us"] < r["read_p99.9_us"] < 2 * ref["tPROG_us"]
    assert r["read_max_us"] < ref["tBERS_us"]
    assert r["write_p99.9_us"] < ref["tPROG_us"] / 10  # write-back: the buffer absorbs them


def test_gc_stretches_the_read_tail_not_the_median(table):
    ref = table.attrs["reference"]
    alone, fresh, steady = (row(table, s) for s in ("reads alone, steady", "writes 50%, fresh", "writes 50%, steady"))
    assert steady.gc_erases > 0 and steady.waf > 3
    assert steady["read_p50_us"] == pytest.approx(alone["read_p50_us"], rel=0.2)
    assert steady["read_p99.9_us"] > 10 * alone["read_p99.9_us"]
    assert steady["read_p99.9_us"] > 2 * fresh["read_p99.9_us"]  # relocations and erases too
    # Reads go before the GC a die owes: the worst waits for the erase in progress (plus a
    # program queued ahead), never for a whole victim.
    assert 0.8 * ref["tBERS_us"] < steady["read_max_us"] < ref["tBERS_us"] + 2 * ref["tPROG_us"]
    assert steady["read_max_us"] < ref["victim_us"] / 10
    assert steady.read_iops < 0.8 * alone.read_iops and steady.read_stall_pct < 5


def test_writes_wait_for_gc_at_the_steady_state_rate(table):
    # At the rate the drive sustains alone, the buffer fills while dies collect: writes then
    # wait for programs and erases. On the fresh drive the buffer takes them all.
    ref = table.attrs["reference"]
    steady, fresh = row(table, "writes 100%, steady"), row(table, "writes 100%, fresh")
    assert steady["write_p99.9_us"] > 4 * ref["tPROG_us"]  # several programs, near erase time
    assert steady["write_p50_us"] < ref["tPROG_us"]
    assert fresh["write_max_us"] < ref["tPROG_us"] / 10
    assert row(table, "writes 50%, steady").write_iops == pytest.approx(steady.write_target_iops / 2, rel=0.05)


def test_plot_is_written(table, tmp_path):
    path = tmp_path / "gc_tail.png"
    plot(table, path)
    assert path.stat().st_size > 10_000
