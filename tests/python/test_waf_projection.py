"""The rebuilt drive's WAF projected over a whole rebuild from a sample
(ssdlab.analysis.waf_projection): against a full simulation, and when it is not made."""

import pytest
from typer.testing import CliRunner

import ssdlab
from ssdlab.cli import app
from ssdlab.analysis.rebuild import rebuild
from ssdlab.system import single
from ssdlab.analysis.waf_projection import HostStream, fewer_blocks, projected_drive, run_streams

WRITERS = """[global]
direct=1
ioengine=libaio
iodepth=4
bs=1M
[w]
rw={rw}
numjobs=3
offset_increment=5G
rate=150m
time_based
runtime=100000
"""


def small_array(blocks: int = 32):
    """RAID 5 of four 850 PROs shrunk to ``blocks`` blocks per plane (7.6 GB at 32), md's
    rebuild held at 100 MB/s, so that a whole rebuild under load runs in seconds."""
    return ssdlab.raid("samsung-850-pro", level=5, drives=4, chunk="64k", spares=1, scale=1.0,
                       profile_set=fewer_blocks("samsung-850-pro", blocks), precondition="sequential",
                       engine_set={"sync_speed_max": "100MB/s"})


def test_the_projection_matches_a_full_rebuild_under_sequential_writers():
    sysd = small_array()
    job = WRITERS.format(rw="write")
    full = rebuild(sysd, host_job=job)
    # Host writes share blocks with the rebuild's: overwritten, they leave its data for GC.
    assert full.waf_projection is None and full.rebuilt_drive_waf > 1.1
    # A fifth of the member: md's rebuild runs over its 100 MB/s cap and sleeps half a second
    # at a time, so a shorter sample's rate (and the projection's duration) depends on how
    # many sleeps it happens to hold (a twentieth: 91 MB/s against 98.9 over the whole rebuild).
    sample = sysd.arrays[0].member_bytes // 5 // (64 << 10) * (64 << 10)
    r = rebuild(sysd, host_job=job, sample=sample, projection_blocks=32)
    assert r.sampled_waf < 1.05  # the sample's drive is still mostly empty
    p = r.waf_projection
    assert p is not None and p.writers == 3
    # The projected drive took every write planned: the rebuild's and each writer's share.
    assert p.written_bytes == pytest.approx(p.planned_bytes, rel=0.01)
    assert p.planned_bytes > 1.5 * p.drive_bytes
    assert r.rebuilt_drive_waf == pytest.approx(full.rebuilt_drive_waf, rel=0.05)
    assert r.to_dict()["waf_projection"]["waf"] == r.rebuilt_drive_waf


def test_the_rebuild_stream_keeps_its_unit_beside_small_host_writes():
    """The replacement also takes the host's 4 KiB writes ahead of its rebuild: the rebuild's
    stream is still projected in md's unit (128 KiB: its 32-page window in whole 64 KiB
    chunks), not in the replacement's mean write size."""
    sysd = small_array(16)
    job = "[w]\ndirect=1\nrw=randwrite\nbs=4k\nioengine=libaio\niodepth=16\nrate=20m\ntime_based\nruntime=100000\n"
    r = rebuild(sysd, host_job=job, sample=256 << 20, projection_blocks=16)
    p = r.waf_projection
    assert p is not None and p.rebuild_bs == 128 << 10 and p.host_bs == 4 << 10
    spare = r.run.iostat("sde")
    assert spare["wareq-sz"] < 64, "the replacement's mean write is small: host writes reach it"


def test_no_projection_without_host_writes():
    sysd = small_array()
    idle = rebuild(sysd, sample=256 << 20)
    assert idle.waf_projection is None and idle.rebuilt_drive_waf == idle.sampled_waf
    asked = rebuild(sysd, sample=256 << 20, project_waf=True)
    assert any("not projected: no host writes" in w for w in asked.warnings)


def test_every_writer_reaches_the_replacement_for_the_whole_rebuild():
    """Ahead of the rebuild front as behind it: md writes to a replacement before its rebuild
    gets there, and the rebuild later writes those bytes again."""
    drive = single("samsung-850-pro", scale=1.0).drives[0]
    full = drive.profile.capacity
    fast = HostStream(start=0.0, sequential=True, rate=50e6, end=full)
    slow = HostStream(start=full / 2, sequential=True, rate=50e6, end=full)
    rnd = HostStream(start=full / 4, end=full / 2, rate=40e6, sequential=False)
    p = run_streams(drive, 100e6, [fast, slow, rnd], rebuild_bs=1 << 20, host_bs=128 << 10, blocks_per_plane=16)
    assert (p.writers, p.host_write_rate_bytes) == (3, 140e6)
    duration = p.drive_bytes / 100e6
    assert p.planned_bytes == pytest.approx(p.drive_bytes + 140e6 * duration, rel=0.01)
    assert p.written_bytes == pytest.approx(p.planned_bytes, rel=0.01)


def test_the_projected_drive_keeps_its_blocks_reserve_and_working_spare():
    drive = single("solidigm-d5-p5336-61.44tb").drives[0]
    core, fraction = projected_drive(drive, 64)
    n = core["nand"]
    assert n["pages_per_block"] == 1536 and n["blocks_per_plane"] == 64
    per_block = n["page_bytes"] * n["pages_per_block"] * n["channels"] * n["dies_per_channel"] * n["planes_per_die"]
    reserve = per_block * (core["ftl"]["gc_threshold_blocks"] + 3)

    def working_spare(blocks, capacity):
        return (per_block * blocks - reserve - capacity) / (per_block * blocks)

    assert working_spare(64, core["capacity_bytes"]) == pytest.approx(working_spare(12233, drive.profile.capacity), abs=1e-6)
    assert fraction == pytest.approx(core["capacity_bytes"] / drive.profile.capacity)
    with pytest.raises(ValueError, match="no room for user data"):
        projected_drive(drive, 6)


def test_the_cli_says_the_waf_is_projected(tmp_path):
    job = tmp_path / "w.fio"
    job.write_text(WRITERS.format(rw="write"))
    out = CliRunner().invoke(app, ["rebuild", "--raid", "5", "--drives", "4", "--chunk", "64k", "--scale", "0.02",
                                   "--sample", "64MiB", "--host-job", str(job), "--precondition", "sequential",
                                   "--engine-set", "sync_speed_max=100MB/s", "--projection-blocks", "16"])
    assert out.exit_code == 0, out.output
    assert "projected over the whole rebuild" in out.stdout
    off = CliRunner().invoke(app, ["rebuild", "--raid", "5", "--drives", "4", "--chunk", "64k", "--scale", "0.02",
                                   "--sample", "64MiB", "--host-job", str(job), "--no-project-waf", "--json"])
    assert off.exit_code == 0 and '"waf_projection": null' in off.stdout
