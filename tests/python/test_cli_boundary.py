"""The command line's edges: output that cannot be written, options that do not go together,
values fio itself refuses, non-finite numbers, argument errors, signals and temporary files.
Each is one line on stderr, exit status 2 (130/143 for a signal), no traceback, nothing left
behind."""

from __future__ import annotations

import os
import resource
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SHORT = ["--set", "runtime=0.01"]


def _ssdlab(*args: str, **kw) -> subprocess.CompletedProcess:
    kw.setdefault("stdout", subprocess.PIPE)
    return subprocess.run([sys.executable, "-m", "ssdlab", *args], stderr=subprocess.PIPE, text=True, cwd=REPO,
                          timeout=300, **kw)


def one_line(p: subprocess.CompletedProcess, *parts: str, status: int = 2) -> None:
    assert p.returncode == status, (p.returncode, p.stderr)
    assert p.stderr.count("\n") == 1 and p.stderr.startswith("ssdlab: error: "), p.stderr
    assert "Traceback" not in p.stderr
    for part in parts:
        assert part in p.stderr, (part, p.stderr)


# ---- standard output ------------------------------------------------------------------------


@pytest.mark.parametrize("args", [("run", "--output-format", "json", *SHORT), ("profiles", "show", "samsung-850-pro"),
                                  ("profiles",), ("--version",)])
def test_standard_output_that_fails_fails_the_command(tmp_path, args):
    with open("/dev/full", "w") as full:
        one_line(_ssdlab(*args, stdout=full), "ssdlab: error: standard output: No space left on device")
    out = tmp_path / "out.txt"
    with open(out, "w") as f:  # ulimit -f 1: the kernel takes 1 KiB and refuses the rest
        p = _ssdlab(*args, stdout=f, preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_FSIZE, (1024, 1024)))
    if out.stat().st_size < 1024:
        assert p.returncode == 0  # all of it fitted
    else:
        one_line(p, "ssdlab: error: standard output: File too large")


def test_a_reader_that_stops_early_ends_the_command_quietly():
    p = subprocess.Popen([sys.executable, "-m", "ssdlab", "profiles", "show", "samsung-850-pro"], cwd=REPO,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    p.stdout.read(10)
    p.stdout.close()
    assert p.wait(timeout=120) in (0, 141) and b"Traceback" not in p.stderr.read()
