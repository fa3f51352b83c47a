"""Delayed allocation promises blocks only for pages with no disk block: rewriting a file in
place promises nothing, as ext4 does (ext4_da_map_blocks finds the blocks mapped)."""

from __future__ import annotations

from pathlib import Path

from ssdlab.api import build, execute
from ssdlab.filework import load


def test_rewriting_a_40m_file_on_a_64m_ext4_in_place_does_not_run_out_of_space(tmp_path: Path) -> None:
    p = tmp_path / "rewrite.toml"
    p.write_text("""name = "rewrite"
filesystem = { type = "ext4", size = "64m", era = "today" }
[[fileset]]
name = "a"
dir = "/a"
entries = 1
size = "40m"
prealloc = 1.0
[[thread]]
name = "rewrite"
loops = 2
ops = [ { op = "open", set = "a", pick = "random" }, { op = "write_whole", io = "1m" }, { op = "close" },
        { op = "sync", set = "a" } ]
""")
    r = execute(build(None, profile="samsung-850-pro", host="generic-linux", files=load(p))).core
    f = r["files"]
    assert f["failed_ops"] == 0
    assert r["jobs"][0]["write"]["bytes"] == 2 * 40 << 20
    assert f["written_back_pages"] == 2 * 10240 and f["dirty_pages_at_end"] == 0
