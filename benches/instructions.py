#!/usr/bin/env python3
"""Instructions per simulated request, counted by valgrind's callgrind: repeatable on a busy
or shared machine, where wall-clock rates are not (the same binary and input give the same
count whatever else runs).

    python3 benches/instructions.py [--scale 0.1] [--binary PATH] [SCENARIO ...]

Builds the throughput runner (``cargo build --release -p ssdlab-core --example throughput``)
unless ``--binary`` names one (an older build, to compare), then runs each scenario twice
under ``valgrind --tool=callgrind``, at ``--scale`` and at twice it (``SSDLAB_BENCH_SCALE``
shrinks each scenario's request count: callgrind runs some 50 times slower than the
machine). The difference of the two counts over the difference of their requests is what
one more request costs: building and preconditioning the drive, the same in both runs, drop
out, whatever the compiler inlined. To compare two builds, run it on both binaries with the
same scale. Scenarios whose preconditioning is long (the GC-steady writes) take long under
callgrind. Only the Python standard library is used.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DEFAULT = ["randread_4k_qd32", "raid5x8_randwrite_4k_qd64", "raid0x8_randread_4k_qd256", "hdd_randread_4k_qd32",
           "cfq_128_processes_randread_4k"]


def build() -> Path:
    subprocess.run(["cargo", "build", "--release", "-p", "ssdlab-core", "--example", "throughput"], cwd=ROOT, check=True)
    return ROOT / "target" / "release" / "examples" / "throughput"


def count(binary: Path, scenario: str, scale: float) -> tuple[int, int]:
    """(instructions of the whole run, requests it simulated)."""
    # The floors the runner measures beside each scenario would count as the scenario's.
    env = dict(os.environ, SSDLAB_BENCH_SCALE=str(scale), SSDLAB_BENCH_NO_FLOORS="1")
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "callgrind.out"
        cmd = ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", str(binary), "1", scenario]
        run = subprocess.run(cmd, env=env, capture_output=True, text=True, check=True)
        rows = [json.loads(l) for l in run.stdout.splitlines() if l.startswith("{")]
        requests = next(r["requests_per_run"] for r in rows if r.get("scenario") == scenario)
        summary = next(l for l in out.read_text().splitlines() if l.startswith(("summary:", "totals:")))
        return int(re.findall(r"\d+", summary)[0]), requests


def per_request(binary: Path, scenario: str, scale: float) -> tuple[float, int]:
    """Instructions one more request costs, and the requests of the larger run."""
    ir1, n1 = count(binary, scenario, scale)
    ir2, n2 = count(binary, scenario, 2 * scale)
    return (ir2 - ir1) / (n2 - n1), n2


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("scenarios", nargs="*", default=DEFAULT)
    ap.add_argument("--scale", type=float, default=0.1, help="fraction of each scenario's requests (default 0.1)")
    ap.add_argument("--binary", type=Path, help="a throughput runner already built (default: build this tree's)")
    args = ap.parse_args()
    if shutil.which("valgrind") is None:
        print("instructions.py: valgrind is not installed (Debian's valgrind package)", file=sys.stderr)
        return 2
    binary = args.binary or build()
    print(f"{'scenario':34} {'requests':>10} {'instructions per request':>26}")
    for sc in args.scenarios:
        ir, n = per_request(binary, sc, args.scale)
        print(f"{sc:34} {n:>10} {ir:>26,.0f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
