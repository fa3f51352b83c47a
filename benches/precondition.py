#!/usr/bin/env python3
"""Preconditioning cost of large drives: CPU seconds and peak memory, medians of N runs.

    PYTHONPATH=python python3 benches/precondition.py [--runs N] [--json FILE] [CASE ...]

Each case is a profile at a scale and a preconditioning (``sequential`` or
``random:PASSES``). The drive's description comes from ``ssdlab.system.single`` (as
``ssdlab.api.build`` resolves it); the Rust example ``precondition`` builds the drive and
preconditions it once per process (``cargo run --release -p ssdlab-core --example
precondition``), so each run's peak resident set is its own. Printed: the median, min and
max CPU seconds of the preconditioning alone, and the median peak RSS. The target (issue 34):
a drive of about 1 TiB preconditioned in under 20 s of CPU, sequentially or at random.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

#: name -> (profile, scale or None for the profile's default, preconditioning)
CASES: dict[str, tuple[str, float | None, str]] = {
    # 1,000 GB user, 1.0 TiB of flash (the 970 EVO Plus 1 TB at full size).
    "970evo-1tb-seq": ("samsung-970-evo-plus-1tb", 1.0, "sequential"),
    "970evo-1tb-random2": ("samsung-970-evo-plus-1tb", 1.0, "random:2"),
    # 3.84 TB at 0.28: 1.07 TB user, 4 KiB IUs, no SLC cache.
    "p5510-1tb-seq": ("intel-d7-p5510-3.84tb", 0.28, "sequential"),
    "p5510-1tb-random2": ("intel-d7-p5510-3.84tb", 0.28, "random:2"),
    # 61.44 TB at full size (16 KiB IUs), filled in order.
    "p5336-61tb-seq": ("solidigm-d5-p5336-61.44tb", 1.0, "sequential"),
    # A small one, for quick A/B checks.
    "970evo-64gb-random2": ("samsung-970-evo-plus-1tb", 0.0625, "random:2"),
}
TARGET_S = 20.0


def drive_json(profile: str, scale: float | None, tmp: Path) -> Path:
    sys.path.insert(0, str(ROOT / "python"))
    from ssdlab.system import single

    core = single(profile, scale=scale).drives[0].core
    path = tmp / f"{profile}-{scale}.json"
    path.write_text(json.dumps(core))
    return path


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=3, help="runs per case (default 3)")
    ap.add_argument("--json", metavar="FILE", help="also write every run's line to FILE")
    ap.add_argument("--binary", metavar="PATH", help="a built precondition example (default: cargo builds it)")
    ap.add_argument("cases", nargs="*", help=f"substrings of case names (default: all): {', '.join(CASES)}")
    args = ap.parse_args()
    chosen = [n for n in CASES if not args.cases or any(c in n for c in args.cases)]
    if not chosen:
        sys.exit(f"cases {args.cases}: none matches {', '.join(CASES)}")
    if args.binary:
        binary = Path(args.binary)
    else:
        subprocess.run(["cargo", "build", "--quiet", "--release", "-p", "ssdlab-core", "--example", "precondition"],
                       cwd=ROOT, check=True)
        binary = ROOT / "target" / "release" / "examples" / "precondition"
    lines = []
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for name in chosen:
            profile, scale, pre = CASES[name]
            path = drive_json(profile, scale, Path(tmp))
            runs = []
            for _ in range(max(1, args.runs)):
                out = subprocess.run([str(binary), str(path), pre], stdout=subprocess.PIPE, text=True, check=True)
                r = json.loads(out.stdout.strip().splitlines()[-1])
                r["case"] = name
                runs.append(r)
                lines.append(r)
            cpu = [r["precondition_cpu_s"] for r in runs]
            rss = statistics.median(r["peak_rss_bytes"] for r in runs)
            rows.append([name, f"{runs[0]['capacity_bytes'] / 1e9:.0f} GB", pre, f"{statistics.median(cpu):.2f}",
                         f"{min(cpu):.2f}", f"{max(cpu):.2f}", f"{rss / 2**20:.0f} MiB",
                         "ok" if statistics.median(cpu) < TARGET_S else "MISSED"])
    header = ["case", "user", "precondition", "median cpu s", "min", "max", "peak RSS", f"< {TARGET_S:g} s"]
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(header)]
    fmt = "  ".join(f"{{:<{w}}}" for w in widths)
    print(fmt.format(*header))
    print(fmt.format(*("-" * w for w in widths)))
    for r in rows:
        print(fmt.format(*r))
    if args.json:
        Path(args.json).write_text("".join(json.dumps(r) + "\n" for r in lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
