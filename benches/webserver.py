#!/usr/bin/env python3
"""A download server's cost to simulate: seed 000's web server scenario (127 clients, 2 × 1 GbE,
``scenarios/seed000-webserver.toml``) on md RAID 0 of 9 disks or 8 SSDs, for a given simulated
time, each run in a fresh process. Printed: the median (min-max over ``--runs``) CPU seconds of
the run alone (built spec to result, the file system's layout included), per simulated second,
per send call, and an hour of simulated time projected from the rate (the issue's bar: a few
hundred clients for an hour in under a minute on one core).

    PYTHONPATH=python python3 benches/webserver.py [--drive hdd|ssd] [--seconds S] [--runs N] [--json FILE]

Only the Python standard library and ssdlab are used.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys

CHILD = """
import json, resource, sys, time
from importlib import resources
from ssdlab.api import build, execute
from ssdlab.filework import load
from ssdlab.system import raid
drive, seconds = sys.argv[1], float(sys.argv[2])
profile, n = {"hdd": ("seagate-barracuda-7200.11-1tb", 9), "ssd": ("intel-x25-m-80", 8)}[drive]
w = load(resources.files("ssdlab") / "scenarios" / "seed000-webserver.toml")
w.run_ns = int(seconds * 1e9)
spec = build(None, system=raid(profile, 0, n, chunk="64k"), host="server-2008", files=w, scheduler="cfq", seed=0,
             precondition="sequential" if drive == "ssd" else None)
cpu = time.process_time()
core = execute(spec).core
cpu = time.process_time() - cpu
net = core["network"]
print(json.dumps({"cpu_s": cpu, "sim_s": (core["end_ns"] - core["start_ns"]) / 1e9, "calls": net["calls"],
                  "mbps": 8 * net["bytes_per_s"] / 1e6, "events": core["events"]}))
"""


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--drive", choices=("hdd", "ssd"), default="hdd")
    ap.add_argument("--seconds", type=float, default=60.0, help="simulated seconds a run")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--json", help="write the runs here")
    a = ap.parse_args()
    runs = []
    for _ in range(a.runs):
        out = subprocess.run([sys.executable, "-c", CHILD, a.drive, str(a.seconds)], check=True, capture_output=True,
                             text=True).stdout
        runs.append(json.loads(out.strip().splitlines()[-1]))
    cpu = [r["cpu_s"] for r in runs]
    med = statistics.median(cpu)
    r = runs[0]
    print(f"{a.drive}, {r['sim_s']:.0f} s simulated, {r['mbps']:.0f} Mb/s served, {r['calls']:,} send calls, "
          f"{r['events']:,} events")
    print(f"CPU {med:.2f} s (min {min(cpu):.2f}, max {max(cpu):.2f}) over {a.runs} runs: "
          f"{med / r['sim_s']:.3f} s per simulated second, {1e6 * med / r['calls']:.1f} us per send call; "
          f"an hour projected: {3600 * med / r['sim_s']:.0f} s")
    if a.json:
        with open(a.json, "w") as f:
            json.dump(runs, f)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
