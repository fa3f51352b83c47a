"""Extents per file as filefrag counts them, in the file report and the aging experiment."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

from ssdlab.api import build, execute
from ssdlab.experiments import seed000_aging as aging
from ssdlab.filework import load


def scenario(tmp_path: Path, fs: str, files: int, size: str) -> Path:
    """`files` files of `size` on a 64 MiB file system of 1 KiB blocks, then a sync."""
    p = tmp_path / f"{fs}-{size}.toml"
    p.write_text(textwrap.dedent(f"""\
        name = "small-files"
        filesystem = {{ type = "{fs}", block_size = "1k", size = "64m", era = "today" }}

        [[fileset]]
        name = "a"
        dir = "/a"
        entries = {files}
        size = "{size}"

        [[thread]]
        name = "fill"
        loops = {files}
        ops = [ {{ op = "create", set = "a", pick = "next" }}, {{ op = "write_whole", io = "4k" }}, {{ op = "close" }} ]

        [[thread]]
        name = "sync"
        after = ["fill"]
        loops = 1
        ops = [ {{ op = "sync", set = "a" }} ]
        """))
    return p


def files_report(path: Path) -> dict:
    core = execute(build(None, profile="samsung-850-pro", host="generic-linux", files=load(path))).core
    return core["files"]


def test_the_report_counts_each_files_extents(tmp_path: Path, cli) -> None:
    p = scenario(tmp_path, "ext4", 300, "7k")
    f = files_report(p)
    assert f["extents_per_file"] == [[[1, 300]]]  # one file system; 300 files of one extent
    r = cli("run", str(p), "--profile", "samsung-850-pro", "--host", "generic-linux")
    assert r.returncode == 0, r.stderr
    assert "extents per file (as filefrag counts them): 300 files, mean 1.00" in r.stdout
    j = cli("run", str(p), "--profile", "samsung-850-pro", "--host", "generic-linux", "--output-format", "json")
    assert json.loads(j.stdout)["files"]["extents_per_file"] == [[[1, 300]]]


def test_aging_leaves_files_in_pieces() -> None:
    r = aging.run("ssd", aged=True, bench=False)
    per_file = dict(r.extents_per_file)
    # the 4 KB files left stay whole; the 7 KB ones went into 1-3 KiB holes, in pieces
    assert per_file[1] > 20_000 and sum(n for e, n in per_file.items() if e > 1) > 5_000
