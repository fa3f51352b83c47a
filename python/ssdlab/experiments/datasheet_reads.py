"""Datasheet cross-check of 4 KiB random reads: each profile with a rated QD32 random-read figure
(``reference.DATASHEET_RANDOM_READ_IOPS``) is run as such ratings are measured — fio, 4 KiB
random reads, 4 jobs × iodepth 32 (Samsung's footnotes give QD32 with 4 threads; assumed for
each model), on a drive filled sequentially so that every read reaches flash — and compared.

    python -m ssdlab.experiments.datasheet_reads [--scale 1] [--set nand.multi_plane_read=true]
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass

from .. import reference as ref

JOB = ("[global]\nioengine=libaio\ndirect=1\nrw=randread\nbs=4k\niodepth=32\nnumjobs=4\n"
       "group_reporting\nsize=100%\nruntime={runtime}\ntime_based\n[randread]\n")


@dataclass(frozen=True)
class Point:
    profile: str
    published: float
    source: str
    simulated: float

    @property
    def error_pct(self) -> float:
        return 100.0 * (self.simulated / self.published - 1.0)


def reproduce(profiles: list[str] | None = None, *, scale: float = 1.0, runtime_s: float = 0.5, seed: int = 1,
              profile_set: dict[str, str] | None = None) -> list[Point]:
    """Simulated 4 KiB random-read IOPS of each rated profile (all of them by default)."""
    import ssdlab

    out = []
    for name in profiles or list(ref.DATASHEET_RANDOM_READ_IOPS):
        published, source = ref.DATASHEET_RANDOM_READ_IOPS[name]
        r = ssdlab.run(JOB.format(runtime=runtime_s), profile=name, precondition="sequential", scale=scale,
                       seed=seed, profile_set=profile_set or None).to_fio_json()
        out.append(Point(name, published, source, sum(j["read"]["iops"] for j in r["jobs"])))
    return out


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--scale", type=float, default=1.0, help="fraction of each drive's flash simulated")
    p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="a profile override")
    p.add_argument("profiles", nargs="*", help="profiles to run (default: every rated one)")
    a = p.parse_args(argv)
    sets = dict(s.split("=", 1) for s in a.set)
    print(f"{'profile':28} {'published':>10} {'simulated':>10} {'error':>8}")
    for pt in reproduce(a.profiles or None, scale=a.scale, profile_set=sets):
        print(f"{pt.profile:28} {pt.published:10,.0f} {pt.simulated:10,.0f} {pt.error_pct:+7.1f} %")


if __name__ == "__main__":
    main()
