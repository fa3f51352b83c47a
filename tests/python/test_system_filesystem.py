"""A system file names a file system per drive or array (mke2fs's and mount's options as
those commands take them); --fs on the command line replaces its type; a mistake is one line
naming the file, the line and the key."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ssdlab import SystemFileError
from ssdlab.api import build, execute

EXAMPLE = Path(__file__).resolve().parents[2] / "python" / "ssdlab" / "data" / "systems" / "raid0-ext3-2008.toml"

ONE = """\
host = "server-2008"
[[drive]]
name = "sda"
profile = "intel-x25-m-80"
filesystem = {fs}
"""

# 300 small files made one after the other: enough to run out of a 64-inode file system.
MAKE = """\
name = "make"
[[fileset]]
name = "f"
entries = 300
size = "4k"
[[thread]]
name = "maker"
loops = 300
ops = [ { op = "create", set = "f", pick = "next" }, { op = "write_whole", io = "4k" }, { op = "close" } ]
"""

JOB = "[j]\nrw=randread\nbs=4k\nsize=8m\nnumber_ios=200\n"


def system(tmp_path: Path, fs: str) -> Path:
    f = tmp_path / "system.toml"
    f.write_text(ONE.format(fs=fs))
    return f


def spec_of(tmp_path: Path, fs: str, **kw) -> dict:
    return build(JOB, system=system(tmp_path, fs), **kw).core["targets"][0]["filesystem"]


@pytest.mark.parametrize("fs, key, value", [
    ('"ext3"', "type", "ext3"),
    ('{ type = "ext4", mkfs = "-b 1024" }', "block_size", 1024),
    ('{ type = "ext4", mkfs = "-b 2048 -N 5000" }', "inode_count", 5000),
    ('{ type = "ext4", mkfs = "-i 16384" }', "inode_ratio", 16384),
    ('{ type = "ext4", mkfs = "-I 128" }', "inode_size", 128),
    # -J size= is MiB: 16 MiB of 4 KiB blocks.
    ('{ type = "ext4", mkfs = "-b 4096 -J size=16" }', "journal_blocks", 4096),
    ('{ type = "ext4", mkfs = "-E lazy_itable_init=0" }', "lazy_itable_init", False),
    ('{ type = "ext4", mkfs = "-t ext4 -O has_journal,flex_bg,^unknown_feature -G 16 -m 5" }', "type", "ext4"),
    ('{ type = "ext3", mkfs = "-j -O ^flex_bg" }', "type", "ext3"),
    ('{ type = "ext3", mount = "commit=15" }', "commit_interval_ns", 15 * 10**9),
    ('{ type = "ext3", mount = "commit=0" }', "commit_interval_ns", 5 * 10**9),
    ('{ type = "ext3", mount = "barrier=1,data=ordered" }', "barriers", True),
    ('{ type = "ext3", mount = "data=ordered" }', "data_mode", "ordered"),
    ('{ type = "ext3", mount = "data=writeback" }', "data_mode", "writeback"),
    ('{ type = "ext4", mount = "barrier=0" }', "barriers", False),
    ('{ type = "ext4", mount = "nobarrier" }', "barriers", False),
    ('{ type = "ext4", mount = "barrier" }', "barriers", True),
    ('{ type = "ext4", size = "8g" }', "size_bytes", 8 << 30),
])
def test_each_option_reaches_the_core(tmp_path, fs, key, value):
    assert spec_of(tmp_path, fs)[key] == value


@pytest.mark.parametrize("fs, key, needle", [
    ('"xfs"', "type", "expected \"ext3\" or \"ext4\""),
    ('{ type = "ext4", mkfs = "-O ^has_journal" }', "mkfs", "-O ^has_journal: the model's ext4 always has has_journal"),
    ('{ type = "ext4", mkfs = "-O ^flex_bg" }', "mkfs", "always has flex_bg"),
    ('{ type = "ext3", mkfs = "-O flex_bg" }', "mkfs", "never has flex_bg"),
    ('{ type = "ext3", mkfs = "-G 32" }', "mkfs", "-G 32"),
    ('{ type = "ext3", mkfs = "-T news" }', "mkfs", "-T: not modelled"),
    ('{ type = "ext3", mkfs = "-b 8192" }', "mkfs", "-b 8192: expected 1024, 2048 or 4096"),
    ('{ type = "ext3", mkfs = "-I 100" }', "mkfs", "-I 100: expected a power of two"),
    ('{ type = "ext3", mkfs = "-b 1024 -I 2048" }', "mkfs", "larger than the block size"),
    ('{ type = "ext3", mkfs = "-J device=/dev/sdb" }', "mkfs", "external journal"),
    ('{ type = "ext3", mkfs = "-J size=1" }', "mkfs", "mke2fs takes 1,024 blocks"),
    ('{ type = "ext3", mkfs = "-m 1" }', "mkfs", "-m 1"),
    ('{ type = "ext3", mkfs = "-b 4096 -b 1024" }', "mkfs", "-b given twice"),
    ('{ type = "ext3", mkfs = "/dev/sda 1000" }', "mkfs", "size key"),
    ('{ type = "ext3", mkfs = "-t ext4" }', "mkfs", "the table's type is ext3"),
    ('{ type = "ext3", mount = "data=journal" }', "mount", "data=journal: expected data=ordered or data=writeback"),
    ('{ type = "ext3", mount = "commit=abc" }', "mount", "commit=SECONDS"),
    ('{ type = "ext3", mount = "barrier=2" }', "mount", "barrier=0 or barrier=1"),
    ('{ type = "ext4", mount = "nodelalloc" }', "mount", "delayed allocation"),
    ('{ type = "ext3", mount = "journal_async_commit" }', "mount", "not modelled"),
    ('{ type = "ext3", size = "100g" }', "size", "is larger than /dev/sda (80,026,361,856 bytes)"),
    ('{ type = "ext3", size = "lots" }', "size", "'lots'"),
    ('{ type = "ext3", blocksize = 4096 }', "blocksize", "unknown key"),
    ('{ mkfs = "-b 4096" }', "type", "missing"),
])
def test_what_the_model_lacks_is_one_line_naming_file_line_and_key(tmp_path, fs, key, needle):
    f = system(tmp_path, fs)
    with pytest.raises(SystemFileError) as e:
        build(JOB, system=f)
    msg = str(e.value)
    assert "\n" not in msg
    assert msg.startswith(f"{f}:5: /dev/sda: filesystem.{key}: "), msg
    assert needle in msg, msg


def test_harmless_options_warn_once_each(tmp_path):
    fs = '{ type = "ext3", mkfs = "-q -L mail -E stride=16", mount = "noatime,data=ordered" }'
    w = build(JOB, system=system(tmp_path, fs)).warnings
    for said in ("mkfs -q", "mkfs -L mail", "mkfs -E stride=16", "mount noatime"):
        assert sum(said in x for x in w) == 1, w


def test_the_inode_count_is_what_the_file_system_has(tmp_path):
    # -N 64: 64 inodes (less the 11 reserved), so most of the 300 creates fail with ENOSPC;
    # the default inode count takes them all.
    work = tmp_path / "make.toml"
    work.write_text(MAKE)
    small = execute(build(None, system=system(tmp_path, '{ type = "ext3", mkfs = "-N 64", size = "64m" }'),
                          files=str(work))).core["files"]
    plain = execute(build(None, system=system(tmp_path, '{ type = "ext3", size = "64m" }'),
                          files=str(work))).core["files"]
    assert plain["failed_ops"] == 0
    assert small["failed_ops"] > 200


def test_an_array_member_has_no_file_system_of_its_own(tmp_path):
    f = tmp_path / "s.toml"
    f.write_text('host = "server-2008"\n[[drive]]\nname = "sda"\nprofile = "intel-x25-m-80"\nfilesystem = "ext3"\n'
                 '[[drive]]\nname = "sdb"\nprofile = "intel-x25-m-80"\n'
                 '[[array]]\nname = "md0"\nlevel = 0\nmembers = ["sda", "sdb"]\n')
    with pytest.raises(SystemFileError, match=rf"^{f}:5: drive 'sda' is under 'md0': make the file system on /dev/md0"):
        build(JOB, system=f)


def test_a_fio_job_runs_on_files_of_the_system_files_file_system(tmp_path):
    spec = build(JOB, system=system(tmp_path, '"ext3"'))
    assert spec.core["jobs"][0]["files"] is not None
    assert spec.filesystems == [f"/dev/sda: ext3 from {tmp_path / 'system.toml'}:5"]
    # Without one, a job with direct=1 addresses the device, as before; a buffered one runs
    # on files of the host's default file system (issue 29).
    plain = tmp_path / "plain.toml"
    plain.write_text(ONE.replace("filesystem = {fs}\n", ""))
    spec = build(JOB + "direct=1\n", system=plain)
    assert spec.core["jobs"][0]["files"] is None and spec.core["targets"][0]["filesystem"] is None
    assert spec.filesystems == []
    spec = build(JOB, system=plain)
    assert spec.core["jobs"][0]["files"] is not None and spec.core["targets"][0]["filesystem"]["type"] == "ext3"
    assert spec.filesystems == ["/dev/sda: ext3 from the host profile server-2008 (its memory.filesystem)"]


def test_fs_on_the_command_line_replaces_the_type_and_keeps_the_options(cli, tmp_path):
    f = system(tmp_path, '{ type = "ext3", mkfs = "-b 1024 -N 64", size = "64m" }')
    work = tmp_path / "make.toml"
    work.write_text(MAKE.replace('name = "make"', 'name = "make"\nfilesystem = { type = "ext4", block_size = "4k" }'))
    p = cli("run", str(work), "--system", str(f), "--fs", "ext4")
    assert p.returncode == 0, p.stderr
    assert f"file system on /dev/sda: ext4 from --fs (over ext3), mkfs and mount options from {f}:5" in p.stdout
    spec = build(None, system=f, files=str(work), filesystem="ext4").core["targets"][0]["filesystem"]
    assert (spec["type"], spec["block_size"], spec["inode_count"]) == ("ext4", 1024, 64)
    # Unsaid on the command line, the system file's file system wins over the scenario's,
    # and says so.
    p = cli("run", str(work), "--system", str(f), "--output-format", "json")
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout)["filesystems"] == [f"/dev/sda: ext3 from {f}:5"]
    assert "replaces the scenario's" in p.stderr
    # An option --fs's type cannot take is refused at the system file's line.
    g = system(tmp_path, '{ type = "ext4", mkfs = "-G 16" }')
    p = cli("run", str(work), "--system", str(g), "--fs", "ext3")
    assert p.returncode != 0
    assert f"{g}:5: /dev/sda: filesystem.mkfs: -G 16" in p.stderr and "(with --fs ext3)" in p.stderr


def test_the_example_system_file_loads_and_names_each_target(tmp_path):
    spec = build(JOB, system=EXAMPLE)
    by_name = {t["name"]: t["filesystem"] for t in spec.core["targets"]}
    assert by_name["md0"]["type"] == "ext3" and by_name["md0"]["inode_ratio"] == 65536
    assert by_name["sdi"]["size_bytes"] == 32 * 10**9 or by_name["sdi"]["size_bytes"] == 32 << 30
    assert [f.split(":")[0] for f in spec.filesystems] == ["/dev/md0", "/dev/sdi"]


def test_a_trace_replay_mounts_nothing_and_says_so(tmp_path):
    from ssdlab.workload import Replay, ReplayTiming

    trace = tmp_path / "t.disksim"
    trace.write_text("".join(f"{1_000_000 * (i + 1)} 0 {i * 8} 8 1\n" for i in range(20)))
    rep = Replay(path=str(trace), format="disksim", timing=ReplayTiming.parse("recorded"))
    spec = build(None, system=system(tmp_path, '"ext3"'), replay=[(rep, None, 4)])
    assert spec.core["targets"][0]["filesystem"] is None and spec.filesystems == []
    assert any("not made for a trace replay" in w and "/dev/sda" in w for w in spec.warnings)


def test_what_mkfs_itself_refuses_is_named_at_the_system_files_line(tmp_path):
    from ssdlab.api import SimulationError

    f = system(tmp_path, '{ type = "ext3", mkfs = "-N 4000000000", size = "1g" }')
    with pytest.raises(SimulationError) as e:
        execute(build(JOB, system=f))
    assert str(e.value) == f"{f}:5: key 'filesystem of /dev/sda': mkfs: too many inodes"
