"""Multi-plane reads as a profile turns them on: the 970 PRO reads the two planes of a program
unit in one sense, and the datasheet cross-check runs."""

import ssdlab
from ssdlab.experiments import datasheet_reads

# 32 KiB aligned reads on the 970 PRO (16 KiB pages, 2 planes, 2 pages per program): each is one
# page address on both planes of one die, after a sequential fill.
JOB = "[r]\nioengine=libaio\ndirect=1\nrw=randread\nbs=32k\niodepth=1\nsize=100%\nruntime=0.05\ntime_based\n"
READ_NS = 50_000
TRANSFER_NS = 16_384  # one 16 KiB page at 1,000 MB/s


def _clat(multi_plane: str) -> dict:
    r = ssdlab.run(JOB, profile="samsung-970-pro-512", precondition="sequential", scale=0.05, seed=1,
                   profile_set={"nand.multi_plane_read": multi_plane}).to_fio_json()
    return r["jobs"][0]["read"]["clat_ns"]


def test_two_planes_at_one_page_address_are_sensed_once():
    """Off: sense, sense, transfer (2 tR + x). On: one sense, two transfers (tR + 2x). Every
    read is shorter by exactly tR - x."""
    off, on = _clat("false"), _clat("true")
    assert off["min"] - on["min"] == READ_NS - TRANSFER_NS
    assert off["max"] - on["max"] == READ_NS - TRANSFER_NS


def test_datasheet_cross_check_reports_each_rated_drive():
    points = datasheet_reads.reproduce(["samsung-850-pro", "samsung-970-evo-plus-1tb"], scale=0.05, runtime_s=0.2)
    assert [p.profile for p in points] == ["samsung-850-pro", "samsung-970-evo-plus-1tb"]
    for p in points:
        assert abs(p.error_pct) <= 15, (p.profile, p.simulated, p.published)
