"""How far the rebuilt drive's projected WAF (ssdlab.waf_projection) is from a full simulation.

A RAID 5 of four small drives and a spare (Samsung 850 PRO flash, shrunk to a few blocks per
plane so that a whole rebuild under load runs in a minute or two) is rebuilt in full under
sequential host writers, and again from a sample with the WAF projected, on a drive of the
same blocks and on a smaller one. Prints the rebuilt drive's WAF of each and the errors.

    python benches/waf_projection.py [--blocks 128] [--sample-share 0.05]
"""

from __future__ import annotations

import argparse
import time

import ssdlab
from ssdlab.rebuild import rebuild
from ssdlab.waf_projection import fewer_blocks

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


def system(blocks: int):
    sets = fewer_blocks("samsung-850-pro", blocks)
    return ssdlab.raid("samsung-850-pro", level=5, drives=4, chunk="64k", spares=1, scale=1.0, profile_set=sets,
                       precondition="sequential", engine_set={"sync_speed_max": "100MB/s"})


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--blocks", type=int, default=128, help="blocks per plane of the drives")
    ap.add_argument("--sample-share", type=float, default=0.05, help="share of the member rebuilt in the sample")
    ap.add_argument("--rate", default="150m", help="each host writer's rate")
    args = ap.parse_args()
    sysd = system(args.blocks)
    job = HOST_JOB.format(rate=args.rate)
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
