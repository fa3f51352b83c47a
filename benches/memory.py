#!/usr/bin/env python3
"""Memory estimate against measured peak, for runs of different shape.

    PYTHONPATH=python python3 benches/memory.py [--json FILE] [RUN ...]

Each run goes in a fresh Python process: it builds the run with ``ssdlab.api.build`` (which
estimates its memory, :mod:`ssdlab.analysis.memory`), runs it and reports its peak resident set
(``VmHWM``). A process that only imports ssdlab (``ssdlab.api``, the compiled core, json)
gives the baseline, which is subtracted from each peak: the estimate covers the run, not the
interpreter. The table prints the estimate, the measured peak less the baseline and the error
of the estimate relative to it. Runs go one at a time and none needs more than ~2.5 GB.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

#: name -> (what it is, the keyword arguments of ssdlab.api.build, as Python source)
RUNS: dict[str, tuple[str, str]] = {
    "850pro-default": (
        "Samsung 850 PRO, the built-in job (4 x 4 KiB random writers, 5 s)",
        "api.quickstart_job(), profile='samsung-850-pro'"),
    "970evo-10ms": (
        "970 EVO Plus 1 TB, the built-in job, --interval 10ms",
        "api.quickstart_job(), profile='samsung-970-evo-plus-1tb', interval='10ms'"),
    "64jobs-random": (
        "850 PRO at --scale 0.25, 64 jobs of 4 KiB random reads over the whole drive, 2 s",
        "'[j]\\nfilename=/dev/sda\\ndirect=1\\nrw=randread\\nbs=4k\\nnumjobs=64\\nruntime=2\\ntime_based\\n', "
        "profile='samsung-850-pro', scale=0.25"),
    "hdd-1ms": (
        "Exos X18 18 TB, 4 KiB random reads at QD4 for 20 s, --interval 1ms",
        "'[j]\\nfilename=/dev/sda\\ndirect=1\\nrw=randread\\nbs=4k\\niodepth=4\\nruntime=20\\ntime_based\\n', "
        "profile='seagate-exos-x18-18tb', "
        "interval='1ms'"),
    "raid5x4": (
        "md RAID 5 of 4 x 850 PRO at --scale 0.5, 4 KiB random writes at QD16 for 2 s, --interval 10ms",
        "'[j]\\nfilename=/dev/md0\\ndirect=1\\nrw=randwrite\\nbs=4k\\niodepth=16\\nruntime=2\\ntime_based\\n', "
        "system=ssdlab.raid('samsung-850-pro', 5, 4, chunk='64k', scale=0.5), interval='10ms'"),
    "timeseries": (
        "850 PRO at --scale 0.01, random reads for 10 s, --interval 250us (40,001 samples)",
        "'[j]\\nfilename=/dev/sda\\ndirect=1\\nrw=randread\\nbs=4k\\niodepth=4\\nruntime=10\\ntime_based\\n', "
        "profile='samsung-850-pro', "
        "scale=0.01, interval='250us'"),
    "512jobs": (
        "850 PRO at --scale 0.01, 512 jobs of 4 KiB random reads for 0.5 s (the jobs' own state)",
        "'[j]\\nfilename=/dev/sda\\ndirect=1\\nrw=randread\\nbs=4k\\nnumjobs=512\\nruntime=0.5\\ntime_based\\n', "
        "profile='samsung-850-pro', "
        "scale=0.01"),
    "deep-queue": (
        "970 PRO at --scale 0.01, 8 jobs of 4 KiB random reads at iodepth 100,000 (800,000 I/Os queued), 0.1 s",
        "'[j]\\nrw=randread\\nbs=4k\\nioengine=libaio\\ndirect=1\\niodepth=100000\\nnumjobs=8\\nruntime=0.1\\n"
        "time_based\\nnorandommap\\n', profile='samsung-970-pro-512', scale=0.01"),
    "deep-queue-raid5": (
        "md RAID 5 of 4 x 850 PRO at --scale 0.01, 8 jobs of 4 KiB random writes at iodepth 100,000, 0.1 s",
        "'[j]\\nrw=randwrite\\nbs=4k\\nioengine=libaio\\ndirect=1\\niodepth=100000\\nnumjobs=8\\nruntime=0.1\\n"
        "time_based\\nnorandommap\\n', system=ssdlab.raid('samsung-850-pro', 5, 4, chunk='64k', scale=0.01)"),
    "sized-1ms": (
        "970 EVO Plus at --scale 0.05, 8 GiB of 128 KiB sequential writes at QD32, --interval 1ms "
        "(no runtime: the length, so the sample count, estimated from a rough rate)",
        "'[j]\\nfilename=/dev/nvme0n1\\ndirect=1\\nrw=write\\nbs=128k\\niodepth=32\\nsize=8g\\n', "
        "profile='samsung-970-evo-plus-1tb', "
        "scale=0.05, interval='1ms'"),
    "recorder-61tb": (
        "D5-P5336 61.44 TB at full size, filled in order, 30 s of 128 KiB writes in order at QD32 "
        "(a recorder: its maps' pages touched one after another)",
        "'[j]\\nfilename=/dev/nvme0n1\\ndirect=1\\nrw=write\\nbs=128k\\nioengine=libaio\\niodepth=32\\n"
        "runtime=30\\ntime_based\\n', profile='solidigm-d5-p5336-61.44tb', scale=1, precondition='sequential'"),
}

# The peak is the process's VmHWM: a child's ru_maxrss starts from its parent's resident set
# at fork, so it reads high under a large parent (a test runner, say).
CHILD = """
import json, sys
import ssdlab
from ssdlab import api
from ssdlab.analysis import memory
{body}
peak = int(next(l for l in open("/proc/self/status") if l.startswith("VmHWM:")).split()[1]) * 1024
print(json.dumps({{"peak": peak, **out}}))
"""

BASELINE = "out = {}"

RUN = """
spec = api.build({args}, memory_limit='none')
est = memory.estimate(spec.core)
result = api.execute(spec)
out = {{"estimate": est.total, "sim": est.sim_bytes, "result": est.result_bytes,
        "samples": len(result.core["samples"])}}
"""


def measure(body: str) -> dict:
    """Run ``body`` in a fresh interpreter; its output and peak resident bytes."""
    # The ssdlab this script imported, installed or from the source tree.
    import ssdlab

    here = str(Path(ssdlab.__file__).resolve().parents[1])
    env = dict(os.environ, PYTHONPATH=here + os.pathsep + os.environ.get("PYTHONPATH", ""))
    p = subprocess.run([sys.executable, "-c", CHILD.format(body=body)], env=env, capture_output=True, text=True,
                       check=False)
    if p.returncode != 0:
        raise RuntimeError(p.stderr.strip().splitlines()[-1] if p.stderr.strip() else f"exit {p.returncode}")
    return json.loads(p.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("runs", nargs="*", metavar="RUN", help=f"runs to measure (default all): {', '.join(RUNS)}")
    ap.add_argument("--json", type=Path, help="also write the rows as JSON")
    args = ap.parse_args(argv)
    names = args.runs or list(RUNS)
    unknown = [n for n in names if n not in RUNS]
    if unknown:
        ap.error(f"unknown run {unknown[0]!r} (runs: {', '.join(RUNS)})")
    base = measure(BASELINE)["peak"]
    print(f"baseline (python + ssdlab imports): {base / 2**20:.1f} MiB, subtracted from each peak")
    print(f"{'run':<16} {'estimate':>10} {'measured':>10} {'error':>7}  what")
    rows = []
    worst = 0.0
    for name in names:
        what, args_src = RUNS[name]
        r = measure(RUN.format(args=args_src))
        measured = r["peak"] - base
        err = (r["estimate"] - measured) / measured
        worst = max(worst, abs(err))
        rows.append({"run": name, "what": what, "estimate_bytes": r["estimate"], "measured_bytes": measured,
                     "peak_bytes": r["peak"], "baseline_bytes": base, "error": err, "samples": r["samples"]})
        print(f"{name:<16} {r['estimate'] / 2**20:>7.1f}MiB {measured / 2**20:>7.1f}MiB {100 * err:>+6.1f}%  {what}",
              flush=True)
    print(f"largest error: {100 * worst:.1f} %")
    if args.json:
        args.json.write_text(json.dumps(rows, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
