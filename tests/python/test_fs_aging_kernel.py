"""The seed's file-system aging redone on the real kernel, beside the model.

Runs experiments/fs_aging_vs_kernel.py for ext4 with 4 KiB blocks (a 256 MiB loop-mounted
image: fill with 4 KB files, delete every other one, fill with 7 KB files, delete every
other one) and checks the model against what the kernel did, within the tolerances
docs/fs.md gives. Needs root, loop devices, mkfs.ext4 and e2freefrag; skips, saying why,
without them. The same comparison without root: crates/ssdlab-core/tests/fs_aging.rs.
"""

import json
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "experiments"))

import fs_aging_vs_kernel as exp  # noqa: E402


def test_ext4_4k_aging_model_matches_the_kernel(tmp_path):
    why = exp.kernel_missing()
    if why:
        pytest.skip(f"kernel side needs root and loop devices: {why}")
    out = tmp_path / "aging.json"
    subprocess.run([sys.executable, str(REPO / "experiments" / "fs_aging_vs_kernel.py"), "--case", "ext4-4k", "--json", str(out)], check=True, cwd=REPO, timeout=1800, capture_output=True)
    case = json.loads(out.read_text())["cases"]["ext4-4k"]
    kernel, model = case["kernel"], case["model"]["block"]
    for k, m in zip(kernel["phases"], model["phases"]):
        assert abs(m["written"] - k["written"]) <= 0.005 * k["written"], (k, m)
    kf, mf = kernel["freefrag"], model["freefrag"]
    assert abs(mf["free_blocks"] - kf["free_blocks"]) <= 0.005 * kf["free_blocks"]
    # The kernel's own count moved by 2% in one run of four (writeback timing).
    assert abs(mf["free_extents"] - kf["free_extents"]) <= 0.03 * kf["free_extents"]
    # No large free extent is left in the model. The kernel's largest varies from run to run
    # with writeback's timing (16 KiB or less in most runs, 20 KiB in one, 1,624 KiB in one
    # on a loaded machine, all on 2026-11-28): bounded instead is the share of its free
    # blocks in extents of 64 KiB or more, which one such extent leaves small.
    assert mf["max_kb"] <= 16
    large = sum(b["blocks"] for b in kf["buckets"] if b["start_bytes"] >= 64 << 10)
    assert large <= 0.05 * kf["free_blocks"], kf
    # Files left of the 7 KB round: one or two extents, in the same proportion.
    k2 = kernel["extents_per_file"].get("2", 0) / sum(kernel["extents_per_file"].values())
    m2 = model["extents_per_file"].get("2", 0) / sum(model["extents_per_file"].values())
    assert abs(k2 - m2) < 0.03
