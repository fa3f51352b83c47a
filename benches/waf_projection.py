"""How far the rebuilt drive's projected WAF (ssdlab.analysis.waf_projection) is from a full simulation,
and what the projection gives for seed 004's md under load at the brief's own rates.

A RAID 5 of four small drives and a spare (Samsung 850 PRO flash, shrunk to a few blocks per
plane so that a whole rebuild under load runs in a minute or two) is rebuilt in full under
sequential host writers, and again from a sample with the WAF projected, on a drive of the
same blocks and on a smaller one. Prints the rebuilt drive's WAF of each and the errors.

The second part feeds the projection seed 004's published md figures instead of a simulated
sample: a rebuild at 10.5 MB/s and 45 MB/s of host writes from 38 sequential writers 15 GB
apart. md writes a 1 MB request as two data chunks and parity (1.5 bytes per host byte, as the
simulated md sample shows), spread over nine members. It checks that the projection's
mechanism accounts for the brief's WAF of 1.58 when md's balance is the brief's.

    python benches/waf_projection.py [--blocks 128] [--sample-share 0.05] [--skip-full]
"""

from __future__ import annotations

import argparse
import time

import ssdlab
from ssdlab.analysis.rebuild import rebuild
from ssdlab.reference import SEED004_DRIVE, SEED004_MEMBERS, SEED004_PUBLISHED
from ssdlab.system import single
from ssdlab.analysis.waf_projection import HostStream, fewer_blocks, run_streams

HOST_JOB = """[global]
direct=1
ioengine=libaio
iodepth=4
bs=1M
[w]
rw=write
numjobs=3
offset_increment=5G
rate={rate}
time_based
runtime=100000
"""
#: Random writers, each over 3 GB of the array.
RANDOM_JOB = """[global]
direct=1
ioengine=libaio
iodepth=4
bs=64k
[w]
rw=randwrite
size=3g
numjobs=2
offset_increment=4g
rate={rate}
time_based
runtime=100000
"""


def system(blocks: int):
    sets = fewer_blocks("samsung-850-pro", blocks)
    return ssdlab.raid("samsung-850-pro", level=5, drives=4, chunk="64k", spares=1, scale=1.0, profile_set=sets,
                       precondition="sequential", engine_set={"sync_speed_max": "100MB/s"})


def seed004_md_at_published_rates() -> None:
    pub = SEED004_PUBLISHED["md-load"]
    drive = single(SEED004_DRIVE).drives[0]
    data_members, writers = SEED004_MEMBERS - 1, 38
    member_rate = pub.host_write_bytes * 1.5 / SEED004_MEMBERS
    streams = [HostStream(start=k * (15 << 30) / data_members, sequential=True,
                          rate=member_rate / writers, end=drive.profile.capacity) for k in range(writers)]
    t = time.time()
    p = run_streams(drive, pub.rate_bytes, streams, rebuild_bs=512 << 10, host_bs=128 << 10)
    print(f"seed 004 md under load at the brief's rates: projected WAF {p.waf:.3f} (published {pub.waf}), "
          f"{time.time() - t:.0f} s wall")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--blocks", type=int, default=128, help="blocks per plane of the drives")
    ap.add_argument("--sample-share", type=float, default=0.05, help="share of the member rebuilt in the sample")
    ap.add_argument("--rate", default="150m", help="each host writer's rate")
    ap.add_argument("--skip-full", action="store_true", help="only the seed 004 part")
    ap.add_argument("--random", action="store_true", help="random 64 KiB writers instead of sequential ones")
    args = ap.parse_args()
    seed004_md_at_published_rates()
    if args.skip_full:
        return
    sysd = system(args.blocks)
    job = (RANDOM_JOB if args.random else HOST_JOB).format(rate=args.rate)
    member = sysd.arrays[0].member_bytes
    t = time.time()
    full = rebuild(sysd, host_job=job)
    print(f"full rebuild of {member / 1e9:.1f} GB: WAF {full.rebuilt_drive_waf:.3f}, "
          f"{full.rebuild_time_s:.0f} s simulated, {time.time() - t:.0f} s wall")
    sample = int(member * args.sample_share) // (64 << 10) * (64 << 10)
    for blocks in (args.blocks, args.blocks // 4):
        t = time.time()
        r = rebuild(sysd, host_job=job, sample=sample, project_waf=True, projection_blocks=blocks)
        err = 100 * (r.rebuilt_drive_waf / full.rebuilt_drive_waf - 1)
        print(f"sample {sample / 1e9:.2f} GB, projected on {blocks} blocks per plane: WAF {r.rebuilt_drive_waf:.3f} "
              f"({err:+.1f} %), sampled WAF {r.sampled_waf:.3f}, {time.time() - t:.0f} s wall")


if __name__ == "__main__":
    main()
