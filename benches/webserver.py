#!/usr/bin/env python3
"""A download server's cost to simulate: seed 000's web server scenario (127 clients, 2 × 1 GbE,
``scenarios/seed000-webserver.toml``) on md RAID 0 of 9 disks or 8 SSDs, each run in a fresh
process, at two simulated durations (``--short`` and ``--seconds``). A run's CPU time is the
run alone (built spec to result, the file system's layout included); the two medians give the
fixed part (setup: the layout, the catalogue) and the slope (CPU per simulated second), and
an hour of simulated time is projected as fixed + 3600 × slope (the issue's bar: a few hundred
clients for an hour in under a minute on one core). What the long run served (Mb/s, each class
of clients' mean rate, send calls, events) is printed too, to compare two builds' results.

    PYTHONPATH=python python3 benches/webserver.py [--drive hdd|ssd] [--seconds S] [--short S] [--runs N]
        [--in-service] [--json FILE]

``--in-service`` runs the server as ``seed000_webserver`` does: ext3 over the whole array, 85 %
full of the catalogue (13,267 files of 100 MB to 1 GB on the nine disks), behind its RAID card;
the fixed part is then mostly the layout of those files.

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
drive, seconds, in_service = sys.argv[1], float(sys.argv[2]), sys.argv[3] == "1"
profile, n = {"hdd": ("seagate-barracuda-7200.11-1tb", 9), "ssd": ("intel-x25-m-80", 8)}[drive]
if in_service:
    from ssdlab.experiments import seed000_webserver as m
    system = raid(profile, 0, n, chunk="64k", engine=m.ENGINE)
    w = m.scenario(m.CASES[0], 1, system.arrays[0].capacity)
else:
    system = raid(profile, 0, n, chunk="64k")
    w = load(resources.files("ssdlab") / "scenarios" / "seed000-webserver.toml")
w.run_ns = int(seconds * 1e9)
spec = build(None, system=system, host="server-2008", files=w, scheduler="cfq", seed=0,
             precondition="sequential" if drive == "ssd" else None)
cpu = time.process_time()
core = execute(spec).core
cpu = time.process_time() - cpu
net = core["network"]
print(json.dumps({"cpu_s": cpu, "sim_s": (core["end_ns"] - core["start_ns"]) / 1e9, "calls": net["calls"],
                  "mbps": 8 * net["bytes_per_s"] / 1e6, "events": core["events"],
                  "classes": {k["name"]: k["mean_bytes_per_s"] for k in net["classes"]}}))
"""


def run(drive: str, seconds: float, in_service: bool) -> dict:
    out = subprocess.run([sys.executable, "-c", CHILD, drive, str(seconds), str(int(in_service))], check=True,
                         capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--drive", choices=("hdd", "ssd"), default="hdd")
    ap.add_argument("--seconds", type=float, default=60.0, help="simulated seconds of the long run")
    ap.add_argument("--short", type=float, default=10.0, help="simulated seconds of the short run")
    ap.add_argument("--runs", type=int, default=3, help="runs of each duration (medians are used)")
    ap.add_argument("--in-service", action="store_true",
                    help="the storage of seed000_webserver: ext3 over the whole array, 85 %% full, a RAID card")
    ap.add_argument("--json", help="write the runs here")
    a = ap.parse_args()
    if not 0 < a.short < a.seconds:
        ap.error(f"--short must be positive and below --seconds ({a.seconds:g}), got {a.short:g}")
    runs: dict[float, list[dict]] = {a.short: [], a.seconds: []}
    for _ in range(a.runs):
        # Interleaved, so that a change in the machine's load touches both durations alike.
        for s in runs:
            runs[s].append(run(a.drive, s, a.in_service))
    med = {s: statistics.median(r["cpu_s"] for r in rs) for s, rs in runs.items()}
    sim = {s: rs[0]["sim_s"] for s, rs in runs.items()}
    slope = (med[a.seconds] - med[a.short]) / (sim[a.seconds] - sim[a.short])
    fixed = med[a.short] - slope * sim[a.short]
    r = runs[a.seconds][0]
    print(f"{a.drive}, {r['sim_s']:.0f} s simulated, {r['mbps']:.0f} Mb/s served, {r['calls']:,} send calls, "
          f"{r['events']:,} events")
    print("per client: " + ", ".join(f"{k} {8 * v / 1e3:.1f} kb/s" for k, v in r["classes"].items()))
    for s, rs in runs.items():
        cpu = [x["cpu_s"] for x in rs]
        print(f"{sim[s]:.0f} s simulated: CPU {med[s]:.2f} s (min {min(cpu):.2f}, max {max(cpu):.2f}) over {a.runs} runs"
              + (f", {1e6 * med[s] / r['calls']:.1f} us per send call" if s == a.seconds else ""))
    print(f"fixed {fixed:.2f} s, {slope:.4f} s per simulated second; an hour projected: {fixed + 3600 * slope:.0f} s")
    if a.json:
        with open(a.json, "w") as f:
            json.dump({str(s): rs for s, rs in runs.items()}, f)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
