#!/usr/bin/env python3
"""Sweep speed: parallel speed-up and the cost of a run beyond its simulation.

    python3 benches/sweep.py [--reps 3] [--ios 150000] [--workers 2] [--check]

Writes a grid of 64 short runs (150 000 4 KiB random reads each, about 0.1 s of
simulation, at four queue depths x 16 seeds on a Samsung 850 PRO at 1 % scale) to a
temporary directory and runs ``ssdlab sweep`` on it as a user does — a new process each time,
from scratch — with 1 worker and with ``--workers`` workers, ``--reps`` times each. Prints the
median wall times, their ratio (target: <= 0.55 with 2 workers) and the overhead per run:
the 1-worker sweep's wall time less the time its runs spent simulating (from the journal),
over the runs. That is everything else, whole: Python and the command starting, the worker
starting, the grid's expansion and checks, building and shipping each spec, the result rows,
the journal and the Parquet file (target: < 50 ms). For reference it also times the same
runs built and executed one after another in this process, without the sweep machinery.

``--check`` makes the exit status non-zero when a target is missed. Both targets assume an
otherwise idle machine with at least ``--workers`` cores: on a shared one, run it when quiet.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "python"))

RATIO_TARGET = 0.55
OVERHEAD_TARGET_S = 0.050

JOB = """[global]
ioengine=libaio
direct=1
bs=4k
size=1g
rw=randread
number_ios={ios}
[reader]
"""

GRID = """job = "job.fio"
profile = "samsung-850-pro"
scale = 0.01
[grid]
"job.iodepth" = [1, 4, 16, 32]
seed = [{seeds}]
"""


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=3, help="sweeps of each kind (medians are printed)")
    ap.add_argument("--ios", type=int, default=150_000,
                    help="I/Os per run, the runs' length (at most 262144: the job covers 1 GiB)")
    ap.add_argument("--workers", type=int, default=2, help="workers of the parallel sweep")
    ap.add_argument("--check", action="store_true", help="exit 1 if a target is missed")
    args = ap.parse_args()

    from ssdlab import api
    from ssdlab.sweep import journal_path, load_grid

    with tempfile.TemporaryDirectory(prefix="ssdlab-sweep-bench-") as tmp:
        d = Path(tmp)
        (d / "job.fio").write_text(JOB.format(ios=args.ios))
        (d / "grid.toml").write_text(GRID.format(seeds=", ".join(str(s) for s in range(1, 17))))
        grid = load_grid(d / "grid.toml")
        n = len(grid.runs)

        # Reference: the same runs, one after another in this process.
        inproc = []
        for _ in range(args.reps):
            t = time.perf_counter()
            for run in grid.runs:
                api.execute(grid.spec(run))
            inproc.append(time.perf_counter() - t)

        walls: dict[int, list[float]] = {1: [], args.workers: []}
        sims: list[float] = []
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT / "python"),
                                                                         os.environ.get("PYTHONPATH")]))}
        for rep in range(args.reps):
            for workers in (1, args.workers):
                out = d / f"out-{workers}-{rep}.parquet"
                cmd = [sys.executable, "-m", "ssdlab", "sweep", str(d / "grid.toml"), "--workers", str(workers),
                       "--out", str(out)]
                t = time.perf_counter()
                subprocess.run(cmd, env=env, check=True, stdout=subprocess.DEVNULL)
                walls[workers].append(time.perf_counter() - t)
                records = [json.loads(line) for line in journal_path(out).read_text().splitlines()]
                assert len(records) == n and not any(r["error"] for r in records), out
                if workers == 1:
                    sims.append(sum(r["sim_s"] for r in records))

    t1 = statistics.median(walls[1])
    tn = statistics.median(walls[args.workers])
    ratio = tn / t1
    overheads = [(w - s) / n for w, s in zip(walls[1], sims)]
    overhead = statistics.median(overheads)
    ref = statistics.median(inproc)
    print(f"{n} runs of {args.ios} I/Os, {args.reps} repetitions (medians)")
    print(f"  in this process, no sweep:   {ref:7.2f} s  ({1000 * ref / n:.1f} ms per run)")
    print(f"  ssdlab sweep, 1 worker:      {t1:7.2f} s  (simulating {statistics.median(sims):.2f} s of it)")
    print(f"  ssdlab sweep, {args.workers} workers:     {tn:7.2f} s")
    print(f"  ratio {args.workers} workers / 1 worker:   {ratio:7.3f}   (target <= {RATIO_TARGET})")
    print(f"  overhead per run:            {1000 * overhead:7.1f} ms (target < {1000 * OVERHEAD_TARGET_S:.0f} ms;"
          f" 1-worker wall time less simulation, per run)")
    print(f"  vs in-process, per run:      {1000 * (t1 - ref) / n:7.1f} ms")
    missed = (args.workers == 2 and ratio > RATIO_TARGET) or overhead >= OVERHEAD_TARGET_S
    if args.check and missed:
        print("target missed", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
