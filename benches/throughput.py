#!/usr/bin/env python3
"""Simulator throughput: build and run the Rust throughput runner, print a table.

    python3 benches/throughput.py [--runs N] [--check] [--json FILE] [SCENARIO ...]

Runs ``cargo run --release -p ssdlab-core --example throughput -- N [SCENARIO ...]``, which
prepares each scenario (a 64 GiB generic drive, md arrays of eight 8 GiB drives, or a 1 TB
disk, preconditioned outside the timed part) and
simulates it N times, printing one JSON line per scenario. This script reads those lines and
prints the median simulated requests per wall-clock second with min/max, the preconditioning
time and the mapping memory per logical 4 KiB page, next to the project's targets:

* 4 KiB random read, QD32: >= 2 M requests/s on one core
* 4 KiB random write at GC steady state, QD32: >= 1 M requests/s on one core
* md RAID 5 of 8 fresh drives, 4 KiB random write: >= 500 k host writes/s (>= 2 M member I/Os/s)
* md RAID 0 of 8 drives, 4 KiB random read at QD256: >= 2 M requests/s
* a 7200 rpm disk, 4 KiB random read at QD32 with NCQ: >= 1.5 M requests/s
* 128 processes under CFQ on one drive, 4 KiB random reads: >= 1 M requests/s
* trace replay (a DiskSim trace, parsing included), closed loop at QD32: >= 1 M records/s
* mapping memory: <= 8 bytes per mapped 4 KiB page

The single-drive SSD scenarios also show their floors, run by the runner in the same process
beside each timed run: the median rate per CPU second of the scenario's own floor ("floor":
the read floor, a bare event loop of the simulator's shape, or for writes the write floor,
that loop plus the state updates a page-mapped FTL cannot avoid at the run's WAF), the
scenario's ratio to it ("x floor") and, for writes, also to the read floor ("x read floor").
The ratios are per CPU second, so they read the same on a loaded and a quiet machine.

``--check`` makes the exit status non-zero when a target is missed. Only the Python standard
library is used.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# scenario -> minimum median requests per second
RATE_TARGETS = {
    "randread_4k_qd32": 2_000_000,
    "randwrite_4k_qd32_gc_steady": 1_000_000,
    "raid5x8_randwrite_4k_qd64": 500_000,
    "raid0x8_randread_4k_qd256": 2_000_000,
    "hdd_randread_4k_qd32": 1_500_000,
    "cfq_128_processes_randread_4k": 1_000_000,
    "replay_disksim_qd32": 1_000_000,
}
MAP_BYTES_PER_PAGE_TARGET = 8.0


def run_runner(runs: int, scenarios: list[str]) -> list[dict]:
    cmd = [
        "cargo", "run", "--quiet", "--release", "-p", "ssdlab-core",
        "--example", "throughput", "--", str(runs), *scenarios,
    ]
    print("$ " + " ".join(cmd), file=sys.stderr)
    proc = subprocess.run(cmd, cwd=ROOT, stdout=subprocess.PIPE, text=True)
    if proc.returncode != 0:
        sys.exit(f"throughput runner failed with exit status {proc.returncode}")
    rows = []
    for line in proc.stdout.splitlines():
        line = line.strip()
        if line.startswith("{"):
            rows.append(json.loads(line))
    if not rows:
        sys.exit("throughput runner printed no results")
    return rows


def mega(x: float) -> str:
    return f"{x / 1e6:.2f} M"


def table(rows: list[dict]) -> tuple[str, list[str]]:
    header = [
        "scenario", "median req/s", "min", "max", "target", "cpu req/s", "floor", "x floor", "x read floor",
        "precond s", "map B/page", "sim IOPS", "WAF",
    ]
    lines = []
    misses = []
    for r in rows:
        name = r["scenario"]
        target = RATE_TARGETS.get(name)
        mark = ""
        if target is not None:
            ok = r["median_req_per_s"] >= target
            mark = f">= {mega(target)} {'ok' if ok else 'MISSED'}"
            if not ok:
                misses.append(f"{name}: median {mega(r['median_req_per_s'])} req/s < {mega(target)}")
        map_cell = ""
        if "map_bytes_per_page" in r:
            per_page = r["map_bytes_per_page"]
            ok = per_page <= MAP_BYTES_PER_PAGE_TARGET
            map_cell = f"{per_page:.2f} {'ok' if ok else 'MISSED'}"
            if not ok:
                misses.append(f"{name}: {per_page:.2f} map bytes per page > {MAP_BYTES_PER_PAGE_TARGET}")
        lines.append([
            name,
            mega(r["median_req_per_s"]),
            mega(r["min_req_per_s"]),
            mega(r["max_req_per_s"]),
            mark,
            mega(r["median_cpu_req_per_s"]),
            f"{r['floor']} {mega(r['floor_cpu_req_per_s'])}" if "floor" in r else "",
            f"{r['ratio_to_floor']:.2f}x" if "ratio_to_floor" in r else "",
            f"{r['ratio_to_read_floor']:.2f}x" if "ratio_to_read_floor" in r else "",
            f"{r['median_precondition_s']:.2f}" if "median_precondition_s" in r else "",
            map_cell,
            f"{r['simulated_iops']:.0f}" if "simulated_iops" in r else "",
            f"{r['simulated_waf']:.2f}" if r.get("simulated_waf") else "",
        ])
    widths = [max(len(h), *(len(l[i]) for l in lines)) for i, h in enumerate(header)]
    fmt = "  ".join(f"{{:<{w}}}" for w in widths)
    out = [fmt.format(*header), fmt.format(*("-" * w for w in widths))]
    out += [fmt.format(*l) for l in lines]
    return "\n".join(out), misses


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=5, help="timed runs per scenario (default 5)")
    ap.add_argument("--check", action="store_true", help="exit non-zero if a target is missed")
    ap.add_argument("--json", metavar="FILE", help="also write the raw results to FILE")
    ap.add_argument("scenarios", nargs="*", help="substrings of scenario names (default: all)")
    args = ap.parse_args()

    rows = run_runner(max(1, args.runs), args.scenarios)
    text, misses = table(rows)
    print(text)
    if args.json:
        Path(args.json).write_text("".join(json.dumps(r) + "\n" for r in rows))
    if misses:
        print("\ntargets missed:\n  " + "\n  ".join(misses))
        if args.check:
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
