#!/usr/bin/env python3
"""Sweep speed: parallel speed-up and the cost of a run beyond its simulation.

    PYTHONPATH=python python3 benches/sweep.py [--reps 3] [--ios 250000] [--workers 2] [--check]

Writes a grid of 64 short runs (4 KiB random reads, 250 000 a run by default, about 0.15 s
of simulation each, at four queue depths x 16 seeds on a Samsung 850 PRO at 1 % scale) to a
temporary directory and sweeps it from scratch, each time in a new process, with 1 worker and
with ``--workers`` workers, ``--reps`` times each, in two ways:

* ``run_sweep()``: timed around the call in a process that has imported ssdlab — the sweep
  itself: starting the workers, expanding and checking the grid, building and shipping each
  spec, the result rows, the journal, the Parquet file;
* ``ssdlab sweep``: the command's wall time as a user sees it, Python and the command's own
  start included.

As the bound the machine sets, it also times the runs split over 1 and ``--workers``
processes that are already started and loaded, without any sweep.

For each it prints the median wall times and their ratio (target: <= 0.55 with 2 workers),
and the overhead per run: the 1-worker wall time less the time its runs spent simulating
(from the journal), over the runs (target: < 50 ms). For reference it also times the same runs
built and executed one after another in this process, without the sweep machinery.

``--check`` makes the exit status non-zero when the run_sweep() targets are missed. The
targets assume an otherwise idle machine with at least ``--workers`` cores: on a shared one,
run it when quiet.
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


RATIO_TARGET = 0.55
OVERHEAD_TARGET_S = 0.050

JOB = """[global]
ioengine=libaio
direct=1
bs=4k
size=2g
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

# One sweep through the API in a fresh process; prints its wall time.
API = """
import json, sys, time
import ssdlab
from ssdlab.sweep import run_sweep
t, cpu = time.perf_counter(), time.process_time()
run_sweep(sys.argv[1], sys.argv[2], workers=int(sys.argv[3]), progress=False)
print(json.dumps([time.perf_counter() - t, time.process_time() - cpu]))
"""


# The machine's own parallel speed-up: the runs split over N processes that were started,
# imported ssdlab and built their specs beforehand, and begin together.
SPLIT = """
import json, sys, time
from ssdlab import api
from ssdlab.sweep import load_grid
g = load_grid(sys.argv[1])
k, n = int(sys.argv[2]), int(sys.argv[3])
specs = [g.spec(r) for r in g.runs[k::n]]
print("ready", flush=True)
sys.stdin.readline()
t = time.perf_counter()
for spec in specs:
    api.execute(spec)
print(json.dumps(time.perf_counter() - t), flush=True)
"""


def split_once(grid: Path, n: int, env: dict[str, str]) -> float:
    """Wall time of the runs split over ``n`` ready processes, without the sweep."""
    procs = [subprocess.Popen([sys.executable, "-c", SPLIT, str(grid), str(k), str(n)], env=env, text=True,
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE) for k in range(n)]
    for p in procs:
        assert p.stdout.readline().strip() == "ready"
    for p in procs:
        p.stdin.write("go\n")
        p.stdin.flush()
    times = [float(p.stdout.readline()) for p in procs]
    for p in procs:
        p.wait()
    return max(times)


def sweep_once(how: str, grid: Path, out: Path, workers: int, env: dict[str, str]) -> tuple[float, float | None]:
    """Wall time of one sweep, and the CPU time of the process running it (API only)."""
    if how == "api":
        cmd = [sys.executable, "-c", API, str(grid), str(out), str(workers)]
        proc = subprocess.run(cmd, env=env, check=True, stdout=subprocess.PIPE, text=True)
        wall, cpu = json.loads(proc.stdout.strip().splitlines()[-1])
        return wall, cpu
    cmd = [sys.executable, "-m", "ssdlab", "sweep", str(grid), "--workers", str(workers), "--out", str(out)]
    t = time.perf_counter()
    subprocess.run(cmd, env=env, check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - t, None


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=3, help="sweeps of each kind (medians are printed)")
    ap.add_argument("--ios", type=int, default=250_000,
                    help="I/Os per run, the runs' length (at most 524288: the job covers 2 GiB)")
    ap.add_argument("--workers", type=int, default=2, help="workers of the parallel sweep")
    ap.add_argument("--check", action="store_true", help="exit 1 if a target is missed")
    args = ap.parse_args()

    import ssdlab
    from ssdlab import api
    from ssdlab.sweep import journal_path, load_grid

    load0 = ", ".join(f"{x:.2f}" for x in os.getloadavg())

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

        # Children import the ssdlab this script imported (installed, or the source tree when
        # run with PYTHONPATH=python), never a tree without its compiled core.
        here = str(Path(ssdlab.__file__).resolve().parents[1])
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [here, os.environ.get("PYTHONPATH")]))}
        walls: dict[tuple[str, int], list[float]] = {}
        sims: dict[str, list[float]] = {"api": [], "cli": []}
        busy: dict[str, list[float]] = {"api": [], "cli": []}
        parent_cpu: list[float] = []
        split: dict[int, list[float]] = {1: [], args.workers: []}
        for rep in range(args.reps):
            for workers in (1, args.workers):
                split[workers].append(split_once(d / "grid.toml", workers, env))
            for how in ("api", "cli"):
                for workers in (1, args.workers):
                    out = d / f"out-{how}-{workers}-{rep}.parquet"
                    wall, cpu = sweep_once(how, d / "grid.toml", out, workers, env)
                    walls.setdefault((how, workers), []).append(wall)
                    if cpu is not None and workers == 1:
                        parent_cpu.append(cpu)
                    records = [json.loads(line) for line in journal_path(out).read_text().splitlines()]
                    assert len(records) == n and not any(r["error"] for r in records), out
                    if workers == 1:
                        sims[how].append(sum(r["sim_s"] for r in records))
                    else:
                        busy[how].append(sum(r["task_s"] for r in records) / (workers * walls[(how, workers)][-1]))

    ref = statistics.median(inproc)
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"{n} runs of {args.ios} I/Os, {args.reps} repetitions (medians); load average now {load} "
          f"on {os.cpu_count()} CPUs (started at {load0})")
    print(f"  in this process, no sweep:   {ref:7.2f} s  ({1000 * ref / n:.1f} ms per run)")
    s1, sn = statistics.median(split[1]), statistics.median(split[args.workers])
    print(f"  the machine: the runs split over {args.workers} ready processes take {sn / s1:.3f} of the time "
          f"in 1 ({sn:.2f} s / {s1:.2f} s; no sweep: the best a sweep can do here)")
    missed = False
    for how, name in (("api", "run_sweep()"), ("cli", "ssdlab sweep")):
        t1 = statistics.median(walls[(how, 1)])
        tn = statistics.median(walls[(how, args.workers)])
        ratio = tn / t1
        overhead = statistics.median((w - s) / n for w, s in zip(walls[(how, 1)], sims[how]))
        print(f"  {name}:")
        print(f"    1 worker:                  {t1:7.2f} s  (simulating {statistics.median(sims[how]):.2f} s of it)")
        print(f"    {args.workers} workers:                 {tn:7.2f} s")
        print(f"    ratio {args.workers} workers / 1 worker: {ratio:7.3f}   (target <= {RATIO_TARGET})")
        print(f"    overhead per run:          {1000 * overhead:7.1f} ms (target < {1000 * OVERHEAD_TARGET_S:.0f} ms)")
        # How much of the parallel sweep its workers spent in tasks: near 1, the sweep kept
        # them busy and only the CPUs the machine could give limit the speed-up.
        print(f"    {args.workers} workers busy:            {statistics.median(busy[how]):7.2f} of the time")
        if how == "api":
            print(f"    of which CPU of the sweep's own process: {1000 * statistics.median(parent_cpu) / n:.1f} ms"
                  " per run (grid, specs, journal, Parquet)")
            missed = (args.workers == 2 and ratio > RATIO_TARGET) or overhead >= OVERHEAD_TARGET_S
    if args.check and missed:
        print("target missed", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
