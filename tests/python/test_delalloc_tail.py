"""Delayed allocation with blocks smaller than a page: a file's last page past its end is
neither promised nor allocated, as ext4 does (ext4_da_get_block_prep,
mpage_prepare_extent_to_map)."""

from __future__ import annotations

from pathlib import Path

from ssdlab.api import build, execute
from ssdlab.filework import load


def free_after(tmp_path: Path, fs: str, files: int, size: str) -> tuple[int, int]:
    """Free blocks (and dirty pages) after `files` files of `size` are written and synced
    on 64 MiB of 1 KiB blocks."""
    p = tmp_path / f"{fs}-{size}.toml"
    p.write_text(f"""name = "tail"
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
""")
    f = execute(build(None, profile="samsung-850-pro", host="generic-linux", files=load(p))).core["files"]
    return sum(b for _, _, b in f["free_extents"][0]), f["dirty_pages_at_end"]


def test_a_7k_file_on_1k_blocks_takes_7_blocks_under_delayed_allocation(tmp_path: Path) -> None:
    for fs in ("ext4", "ext3"):
        seven, dirty = free_after(tmp_path, fs, 300, "7k")
        eight, _ = free_after(tmp_path, fs, 300, "8k")
        assert seven - eight == 300, fs
        assert dirty == 0
