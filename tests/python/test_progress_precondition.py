"""The line that tells, before a run, what preconditioning its drives will cost (on a
terminal only: never in fio's formats)."""

from __future__ import annotations

import io
import subprocess
import sys

from rich.console import Console

import ssdlab
from ssdlab import progress
from ssdlab.progress import TerminalProgress, precondition_estimate

JOB = "[j]\nrw=read\nbs=4k\nsize=64k\n"


def test_no_line_without_preconditioning():
    assert precondition_estimate(ssdlab.build(JOB, profile="samsung-850-pro")) is None
    assert precondition_estimate(ssdlab.build(JOB, profile="samsung-850-pro", precondition="none")) is None


def test_the_estimate_is_the_drives_size_times_the_measured_rates(monkeypatch):
    monkeypatch.setattr(progress, "FILL_S_PER_GIB", 1.0)
    monkeypatch.setattr(progress, "RANDOM_PASS_S_PER_GIB", 10.0)
    monkeypatch.setattr(progress, "GC_SCAN_S_PER_GIB", 0.0)
    spec = ssdlab.build(JOB, profile="samsung-850-pro", precondition="random:2", scale=0.05)
    gib = spec.core["targets"][0]["device"]["capacity_bytes"] / 2**30
    line = precondition_estimate(spec)
    assert line == (f"preconditioning sda ({gib:.1f} GiB, random:2): about {gib * 21 / 60:.0f} min of CPU time "
                    "before the jobs start")
    seq = precondition_estimate(ssdlab.build(JOB, profile="samsung-850-pro", precondition="sequential", scale=0.05))
    assert seq.endswith("sequential): under 1 s of CPU time before the jobs start"), "filled a block at a time"
    # A drive with an SLC cache is filled unit by unit.
    slc = ssdlab.build(JOB, profile="samsung-970-evo-plus-1tb", precondition="sequential", scale=0.05)
    gib = slc.core["targets"][0]["device"]["capacity_bytes"] / 2**30
    assert precondition_estimate(slc).endswith(f"sequential): about {gib:.0f} s of CPU time before the jobs start")


def test_an_arrays_drives_are_counted_together():
    spec = ssdlab.build(JOB, system=ssdlab.raid("samsung-850-pro", 5, 3, chunk="64k", scale=0.01, precondition="random:1"))
    gib = 3 * spec.core["targets"][0]["device"]["members"][0]["device"]["capacity_bytes"] / 2**30
    assert precondition_estimate(spec).startswith(f"preconditioning 3 drives ({gib:.1f} GiB, random:1): ")


def test_the_line_goes_to_the_progress_display_and_not_to_a_redirected_run(tmp_path):
    out = io.StringIO()
    display = TerminalProgress(Console(file=out, width=200))
    display.announce(ssdlab.build(JOB, profile="samsung-850-pro", precondition="random:1", scale=0.01))
    assert out.getvalue().startswith("ssdlab: preconditioning sda (")
    job = tmp_path / "j.fio"
    job.write_text(JOB)
    p = subprocess.run([sys.executable, "-m", "ssdlab", "run", str(job), "--precondition", "random:1", "--scale", "0.01"],
                       capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr
    assert "preconditioning" not in p.stdout + p.stderr


def test_a_pass_costs_more_where_gc_searches_more_blocks_per_block_freed():
    # measured: 0.81 s per GiB and pass on intel-x25-m-80 at --scale 0.5 (16384 blocks per
    # plane, 64 IUs a block), 0.127 on samsung-850-pro at 0.05 (1024 blocks, 52 IUs)
    def rate(profile, scale):
        spec = ssdlab.build(JOB, profile=profile, precondition="random:1", scale=scale)
        return progress._pass_s_per_gib(spec.core["targets"][0]["device"])

    x25m, pro = rate("intel-x25-m-80", 0.5), rate("samsung-850-pro", 0.05)
    assert 0.81 * 0.75 < x25m < 0.81 * 1.25 and 0.127 * 0.75 < pro < 0.127 * 1.25
