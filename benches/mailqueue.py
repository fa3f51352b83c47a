#!/usr/bin/env python3
"""The million-file mail queue (seed 000, item 5) on one drive: wall time, CPU time, peak memory,
and the file layer's bytes per live file and per cached page.

    PYTHONPATH=python python3 benches/mailqueue.py [--drive hdd|ssd] [--scale N] [--runs N]
                                                   [--json FILE] [--before FILE] [--no-rust]

Each run goes in a fresh Python process: ``scenarios/seed000-mailqueue.toml`` with 1/scale of
its files (default: all 1,000,000) on the Barracuda 7200.11 (``hdd``) or the X25-M (``ssd``),
built and run as ``ssdlab reproduce seed000_mailqueue`` runs it. Printed: the median (min-max
over ``--runs``) wall time, CPU time (user + system of the process) and peak resident set
(``VmHWM``) less a baseline process that only imports ssdlab, and (with a run of 1/20 of the
queue) the peak's slope per file queued.
A full run takes about 25 s of wall time per drive: run it once or twice, not more.

Bytes per live file and per cached page are the core's own measurements with a counting
allocator (``cargo test --release -p ssdlab-core --test fs_memory --test pagecache_memory``:
1,000,000 files with their entries; a 1,048,576-page cache, clean and with 10 and 20 % dirty), read
from their output; the issue's bar is under 32 bytes per cached page. ``--before FILE`` (an
earlier ``--json``) prints each figure before and after. Only the Python standard library and
ssdlab are used.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PAGE_BAR = 32.0
#: the smaller queue the peak's slope is measured against
SLOPE_SCALE = 20

CHILD = """
import json, time
{body}
peak = int(next(l for l in open("/proc/self/status") if l.startswith("VmHWM:")).split()[1]) * 1024
print(json.dumps({{"peak": peak, **out}}))
"""

BASELINE = "import ssdlab, ssdlab.api, ssdlab.experiments.seed000_mailqueue\nout = {}"

RUN = """
from ssdlab.experiments import seed000_mailqueue as m
wall, cpu = time.perf_counter(), time.process_time()
r = m.run({drive!r}, {scale})
out = {{"wall_s": time.perf_counter() - wall, "cpu_s": time.process_time() - cpu, "files": r.files,
        "simulated_s": r.run_s, "dirtied_pages": r.report["dirtied_pages"], "ops": r.report["ops"]}}
"""


def child(body: str) -> dict:
    """``body`` in a fresh interpreter (this script's ssdlab first on the path)."""
    import ssdlab

    here = str(Path(ssdlab.__file__).resolve().parents[1])
    env = dict(os.environ, PYTHONPATH=here + os.pathsep + os.environ.get("PYTHONPATH", ""))
    p = subprocess.run([sys.executable, "-c", CHILD.format(body=body)], env=env, capture_output=True, text=True,
                       check=False)
    if p.returncode != 0:
        raise SystemExit(p.stderr.strip().splitlines()[-1] if p.stderr.strip() else f"exit {p.returncode}")
    return json.loads(p.stdout.strip().splitlines()[-1])


def rust_memory() -> dict:
    """The core's bytes per live file and per cached page, from its counting-allocator tests."""
    cmd = ["cargo", "test", "--quiet", "--release", "-p", "ssdlab-core", "--test", "fs_memory", "--test",
           "pagecache_memory", "--", "--nocapture", "--test-threads=1"]
    print("$ " + " ".join(cmd), file=sys.stderr)
    p = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, check=False)
    if p.returncode != 0:
        raise SystemExit(f"cargo test failed with exit status {p.returncode}")
    text = p.stdout + p.stderr
    files = [float(x) for x in re.findall(r"heap per live file: ([\d.]+) bytes", text)]
    pages = {k.strip(): float(v) for k, v in re.findall(r"^\s+(half full, clean|full, clean|full, \d+ % dirty):\s+"
                                                        r"([\d.]+)", text, re.M)}
    if not files or "full, clean" not in pages:
        raise SystemExit("the memory tests' output did not hold their figures")
    return {"bytes_per_live_file": files, "bytes_per_cached_page": pages}


def spread(xs: list[float]) -> str:
    return f"{statistics.median(xs):.2f} ({min(xs):.2f}-{max(xs):.2f})" if len(xs) > 1 else f"{xs[0]:.2f}"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--drive", choices=("hdd", "ssd"), default="hdd")
    ap.add_argument("--scale", type=int, default=1, help="queue 1/SCALE of the million files (default 1: all)")
    ap.add_argument("--runs", type=int, default=1, help="runs to take the median of (a full run is ~25 s)")
    ap.add_argument("--json", type=Path, help="write the figures as JSON")
    ap.add_argument("--before", type=Path, help="an earlier --json, printed beside these figures")
    ap.add_argument("--no-rust", action="store_true", help="leave out the core's memory tests")
    a = ap.parse_args(argv)
    if a.scale < 1 or a.runs < 1:
        ap.error("--scale and --runs take whole numbers of at least 1")
    base = child(BASELINE)["peak"]
    runs = [child(RUN.format(drive=a.drive, scale=a.scale)) for _ in range(a.runs)]
    files = runs[0]["files"]
    row = {"drive": a.drive, "scale": a.scale, "files": files, "runs": len(runs), "baseline_bytes": base,
           "wall_s": [r["wall_s"] for r in runs], "cpu_s": [r["cpu_s"] for r in runs],
           "peak_bytes": [r["peak"] - base for r in runs], "simulated_s": runs[0]["simulated_s"],
           "ops": runs[0]["ops"], "dirtied_pages": runs[0]["dirtied_pages"]}
    if not a.no_rust:
        row.update(rust_memory())
    before = json.loads(a.before.read_text()) if a.before else None
    med = statistics.median

    def line(name: str, key: str, scale: float, unit: str) -> None:
        was = f"   before: {spread([x * scale for x in before[key]])}{unit}" if before and key in before else ""
        print(f"{name:32} {spread([x * scale for x in row[key]])}{unit}{was}")

    print(f"mail queue, {files:,} files on the {a.drive}, {row['simulated_s']:,.1f} s simulated, {row['ops']:,} "
          f"file operations; baseline (python + ssdlab) {base / 2**20:.1f} MiB, subtracted")
    line("wall time", "wall_s", 1.0, " s")
    line("CPU time (user + system)", "cpu_s", 1.0, " s")
    line("peak resident, less baseline", "peak_bytes", 2.0**-20, " MiB")
    # Most of the peak does not grow with the queue (the file system's bitmaps and index on a
    # whole drive, the page cache's table): the slope against a 1/20 queue is what a file adds.
    if a.scale < SLOPE_SCALE:
        small = child(RUN.format(drive=a.drive, scale=SLOPE_SCALE))
        slope = (med(row["peak_bytes"]) - (small["peak"] - base)) / (files - small["files"])
        row.update(slope_files=small["files"], slope_peak_bytes=small["peak"] - base, peak_bytes_per_file_queued=slope)
        print(f"{'peak with ' + format(small['files'], ',') + ' files':32} {(small['peak'] - base) / 2**20:.1f} MiB")
        print(f"{'slope: peak per file queued':32} {slope:.1f} bytes")
    if "bytes_per_live_file" in row:
        f = row["bytes_per_live_file"]
        print(f"{'heap per live file (core)':32} {', '.join(f'{x:.1f}' for x in f)} bytes (1,000,000 one-extent files)")
        for k, v in row["bytes_per_cached_page"].items():
            was = (f"   before: {before['bytes_per_cached_page'][k]:.1f}"
                   if before and k in before.get("bytes_per_cached_page", {}) else "")
            print(f"{'per cached page, ' + k:32} {v:.1f} bytes{'' if v < PAGE_BAR else '  OVER THE BAR'}{was}")
    if a.json:
        a.json.write_text(json.dumps(row, indent=2) + "\n")
    worst = max(row.get("bytes_per_cached_page", {"": 0.0}).values())
    return 0 if worst < PAGE_BAR else 1


if __name__ == "__main__":
    raise SystemExit(main())
