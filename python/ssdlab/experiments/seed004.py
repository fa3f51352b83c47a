"""Seed 004 — RAID rebuild of high-density QLC SSDs: Mehta & Landau, "Accelerating RAID
Rebuild and Reducing Write Amplification on High Density Solidigm QLC Drives with xiRAID"
(Solidigm/Xinnor solution brief, 2025).

RAID 5 of 9 Solidigm D5-P5336 61.44 TB, one member replaced by a tenth drive and rebuilt,
with Linux md and with xiRAID (the ``streaming`` engine), idle and under the brief's host job.

What is set, and why:

* md: the brief raised md's rebuild limits without giving values; its idle rebuild ran at
  322 MB/s, above md's default ``sync_speed_max`` of 200 MB/s. Here ``sync_speed_max`` is set
  out of the way (100 GB/s) and ``sync_speed_min`` keeps md's default, so idle md is bound by
  its own stripe handling on raid5d. That per-stripe cost is the md engine profile's one
  calibrated number, taken from the idle figure; the other three figures follow from the model.
* streaming: its ``rebuild_share`` (xiRAID's reconstruction priority, a setting the brief does
  not give) is the engine profile's one calibrated number, taken from the loaded rebuild time;
  the host bandwidths under load and both idle figures follow from the model.
* md keeps mdadm's default write-intent bitmap for members this large (internal, 64 MiB
  chunks); the brief built the array with default parameters.
* chunk: md's default 512 KiB; for xiRAID 16 KiB, the drive's indirection unit (the brief
  says xiRAID's chunk can be matched to it; its value is not given).
* the nine members hold data (filled once in order), as an array in service does; the brief
  does not say how full it was. It matters: a drive answers a read of a never-written block
  without its flash, so on fresh members the host's reads under load cost the flash nothing.
  The replacement is a new drive, fresh.
* drives simulated at the profile's scale (1/64 of the flash; ``--scale 1`` runs them at full
  size and gives the same figures, docs/arrays.md); the rebuild of ``SAMPLE`` bytes
  of the replacement is simulated and extrapolated linearly to the whole 61.44 TB (measured
  error of that in docs/arrays.md).
* under load, the rebuilt drive's WAF is projected over the whole rebuild
  (:mod:`ssdlab.analysis.waf_projection`, ``ssdlab rebuild``'s default for a sample under a host job):
  the sample's drive is nearly empty, and the WAF comes from what happens as it fills, when the
  host's writes to the rebuilt part share flash blocks with the rebuild's.
"""

from __future__ import annotations

import argparse
from importlib import resources
from pathlib import Path

import pandas as pd

from ..reference import SEED004_DRIVE, SEED004_MEMBERS, SEED004_PUBLISHED as PUBLISHED
from ..analysis.rebuild import rebuild
from ..system import raid

#: Bytes of the replacement rebuilt per case before extrapolating (idle, under load).
SAMPLE_IDLE = 8 << 30
SAMPLE_LOAD = {"md": 256 << 20, "streaming": 1 << 30}
CHUNK = {"md": "512k", "streaming": "16k"}
ENGINE_SET = {"md": {"sync_speed_max": "100GB/s"}, "streaming": {}}
#: The members' state: holding data, as in service.
PRECONDITION = "sequential"


def host_job() -> Path:
    return Path(str(resources.files("ssdlab") / "data" / "jobs" / "seed004-host-workload.fio"))


def simulate_case(case: str, *, sample: int | None = None, seed: int = 0, scale: float | None = None):
    """Case ``case`` simulated; ``scale`` is the share of each drive's flash simulated (None:
    the profile's own, 1/64; 1: the drives at full size, which needs some GiB of memory)."""
    pub = PUBLISHED[case]
    sysd = raid(SEED004_DRIVE, level=5, drives=SEED004_MEMBERS, chunk=CHUNK[pub.engine], engine=pub.engine,
                spares=1, engine_set=ENGINE_SET[pub.engine], precondition=PRECONDITION, scale=scale)
    size = sample or (SAMPLE_LOAD[pub.engine] if pub.under_load else SAMPLE_IDLE)
    return rebuild(sysd, host_job=host_job() if pub.under_load else None, sample=size, seed=seed)


def reproduce(cases: list[str] | None = None, *, seed: int = 0, samples: dict[str, int] | None = None,
              scale: float | None = None) -> pd.DataFrame:
    """Published vs simulated for each case: rebuild time, rate, the rebuilt drive's WAF and
    the host's bandwidth during the rebuild, with errors in %."""
    rows = []
    for case in cases or list(PUBLISHED):
        pub = PUBLISHED[case]
        r = simulate_case(case, sample=(samples or {}).get(case), seed=seed, scale=scale)

        def row(quantity, published, simulated, unit, note=""):
            err = 100.0 * (simulated / published - 1.0) if published else float("nan")
            rows.append({"case": case, "quantity": quantity, "published": published, "simulated": simulated,
                         "unit": unit, "error_pct": err, "note": note})

        row("rebuild_time_h", pub.rebuild_time_s / 3600, r.rebuild_time_s / 3600, "h",
            "published is a lower bound" if pub.time_at_least else "")
        row("rebuild_rate", pub.rate_bytes / 1e6, r.rebuild_rate_bytes / 1e6, "MB/s")
        projected = f"projected over the whole rebuild (sample: {r.sampled_waf:.3f})" if r.waf_projection else ""
        row("rebuilt_drive_waf", pub.waf, r.rebuilt_drive_waf or float("nan"), "", projected)
        if pub.under_load:
            bound = "published is an upper bound" if pub.host_bounds_are_limits else ""
            row("host_read", pub.host_read_bytes / 1e9, r.host_read_bw_bytes / 1e9, "GB/s", bound)
            row("host_write", pub.host_write_bytes / 1e9, r.host_write_bw_bytes / 1e9, "GB/s", bound)
    return pd.DataFrame(rows)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cases", nargs="*", default=list(PUBLISHED), choices=list(PUBLISHED))
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--scale", type=float, help="share of each drive's flash simulated (default: the profile's "
                    "1/64; 1 runs the drives at full size)")
    ap.add_argument("--csv", type=Path, help="write the table here too")
    args = ap.parse_args(argv)
    if args.scale is not None and not 0 < args.scale <= 1:
        ap.error(f"--scale {args.scale:g}: expected a share of the flash above 0 and at most 1")
    table = reproduce(args.cases, seed=args.seed, scale=args.scale)
    with pd.option_context("display.width", 160, "display.max_columns", 20):
        print(table.to_string(index=False, float_format=lambda x: f"{x:.3g}"))
    if args.csv:
        table.to_csv(args.csv, index=False)
