"""ext3/ext4's `data=` mount option: ordered (the default) against writeback. In ordered mode a
commit writes the data of the blocks its transaction allocated first, so one file's fsync
writes every other file's dirty data allocated meanwhile (ext3's fsync stall), and a crash
never recovers a file mapping blocks its data never reached. In writeback mode the commit
writes metadata only: the fsync is quick, and a crash can leave files mapping unwritten
blocks. The kernel's side of the stall is in test_kernel_loop."""

from __future__ import annotations

from pathlib import Path

import pytest

from ssdlab import api
from ssdlab.experiments.kernel_loop import STALL_WORK
from ssdlab.filework import FileWorkError, load
from ssdlab.powercut import power_cut_lines
from ssdlab.mkfs import FsRequest, MkfsError, parse

BIG_MIB = 16
#: the stall scenario, then a thread that keeps the run going past the commit (a power cut
#: comes while the big file's pages are still dirty: 30 s before they expire)
SLEEPER = '\n[[thread]]\nname = "sleeper"\nloops = 1\nops = [ { op = "delay", time = "20s" } ]\n'


def stall(tmp_path: Path, mode: str, era: str = "2008", sleeper: bool = False) -> Path:
    text = STALL_WORK.format(mode=mode, mib=BIG_MIB).replace('size = "1g"', f'size = "1g", era = "{era}"')
    p = tmp_path / f"stall-{mode}.toml"
    p.write_text(text + (SLEEPER if sleeper else ""))
    return p


def run(path: Path, **kw) -> dict:
    spec = api.build(None, profile="seagate-barracuda-7200.11-1tb", host="server-2008", files=load(path), **kw)
    return api.execute(spec).core


@pytest.mark.parametrize("era", ["2008", "today"])
def test_an_fsync_in_ordered_mode_writes_the_other_files_data_and_in_writeback_mode_only_its_own(tmp_path, era):
    big = BIG_MIB * 256
    out = {}
    for mode in ("ordered", "writeback"):
        core = run(stall(tmp_path, mode, era))
        fsync = core["jobs"][1]["file_ops"][2]
        assert fsync["ops"] == 1  # create, append, fsync
        out[mode] = (core["files"]["written_back_pages"], core["files"]["dirty_pages_at_end"], fsync["latency_ns"])
    # Ordered: the commit writes the big file's pages before its commit block.
    assert out["ordered"][0] == big + 1 and out["ordered"][1] == 0, out
    # Writeback: the small file's page alone; the big file's stay dirty.
    assert out["writeback"][0] == 1 and out["writeback"][1] == big, out
    # 16 MiB on a 7200 rpm disk against a page and a commit (with today's barriers, two
    # cache flushes): five times as long at least (2008: 63 ms against 1.6; today 209
    # against 26).
    assert out["ordered"][2] > 5 * out["writeback"][2], out


def test_a_power_cut_in_writeback_mode_recovers_files_mapping_blocks_never_written(tmp_path):
    cuts, text = {}, {}
    for mode in ("ordered", "writeback"):
        core = run(stall(tmp_path, mode, sleeper=True), power_cut="3s")
        (fs,) = core["power_cut"]["file_systems"]
        cuts[mode] = fs
        text[mode] = "\n".join(power_cut_lines(core["power_cut"]))
    # The text report says it in one line, in writeback mode only.
    assert "data=writeback: 1 file(s) recovered mapping 16.0MiB never written" in text["writeback"], text
    assert "data=writeback" not in text["ordered"], text
    # The small file's fsync committed the big file's allocation; its pages are still dirty.
    w = cuts["writeback"]
    assert w["data_writeback"] and w["dirty_files"] == 1 and w["dirty_bytes"] == BIG_MIB << 20, w
    assert (w["stale_files"], w["stale_bytes"]) == (1, BIG_MIB << 20), w
    assert len(w["stale_examples"]) == 1
    # Ordered: the commit wrote the data first; nothing dirty, nothing exposed.
    o = cuts["ordered"]
    assert not o["data_writeback"] and (o["stale_files"], o["stale_bytes"], o["dirty_bytes"]) == (0, 0, 0), o


def test_a_power_cut_before_the_commit_exposes_nothing(tmp_path):
    # Cut before any commit: the allocation itself is not recovered.
    text = stall(tmp_path, "writeback").read_text().replace('{ op = "fsync" }, ', "") + SLEEPER
    p = tmp_path / "nocommit.toml"
    p.write_text(text.replace('name = "fsync-stall"', 'name = "fsync-stall"\n'))
    core = run(p, power_cut="1s")
    (fs,) = core["power_cut"]["file_systems"]
    assert fs["data_writeback"] and fs["stale_files"] == 0 and fs["uncommitted_blocks"] > 0, fs


@pytest.mark.parametrize("value, expected", [
    ('"journal"', r"data: 'journal': expected \"ordered\" or \"writeback\" \(data=journal is not modelled\)"),
    ("1", r"data: 1: expected \"ordered\" or \"writeback\""),
])
def test_a_data_mode_the_model_lacks_is_one_line(tmp_path, value, expected):
    p = tmp_path / "bad.toml"
    p.write_text(stall(tmp_path, "ordered").read_text().replace('data = "ordered"', f"data = {value}"))
    with pytest.raises(FileWorkError, match=r"^\S*bad\.toml:2: filesystem\." + expected):
        load(p)


def test_mount_options_take_data_writeback_and_refuse_data_journal():
    spec = parse(FsRequest(type="ext3", mount="data=writeback,commit=5"), 1 << 30, "sda").spec
    assert spec["data_mode"] == "writeback"
    assert parse(FsRequest(type="ext4"), 1 << 30, "sda").spec["data_mode"] == "ordered"
    with pytest.raises(MkfsError, match="data=journal: expected data=ordered or data=writeback"):
        parse(FsRequest(type="ext4", mount="data=journal"), 1 << 30, "sda")
