"""The file model beside the real kernel: the same work on an ext3 or ext4 image on a loop
device and through ssdlab's file layer, compared by what the tools print.

- **Aging**: the seed000-aging procedure (256 MiB, 1 KiB blocks: fill /a with 4 KB files to
  ENOSPC, delete every other one, fill /b with 7 KB files, delete every other one), with a
  ``sync`` after each step on both sides (without it delayed allocation would place the
  survivors only at the end, side by side, and nothing would age). Compared: files written,
  ``e2freefrag``'s histogram and ``filefrag``'s extents per file left.
- **A buffered fio job**: /proc/diskstats of the loop device around it (reads, writes,
  merges, sectors: the mean request size) against the model's diskstats for the same job
  (``ssdlab run job.fio --fs ext4``).
- **Cold mapping blocks**: a 256 MiB file read after a remount, at random with O_DIRECT or
  whole and buffered: ext3's indirect blocks read as the reads reach them.
- **Cold lookups**: ``stat`` of each of a directory's 4 KiB files after a remount (nothing
  of them in memory), against the model's lookups of a laid-out set: the directory blocks
  and inode-table blocks read (ext4 reads 32 inode-table blocks round a missing one).
- **A small-file copy**: ``cp -a`` of a flat tree of gamma-sized files (mean 27.27 KB, as
  seed000_treecopy draws them) from tmpfs onto the image, then ``sync``, against the model's
  copier of seed000_treecopy.
- **How an fsync sleeps**: a writer that creates, writes 4 KiB and fsyncs file after file on
  ext4: the share of its fsync time spent in ``io_schedule`` (its block-I/O delay, with the
  kernel's task delay accounting on) against the model's iowait on the writer's core over its
  fsync time. Most of an fsync is the wait for its journal commit, a ``wait_event``: D state,
  in the load, not in iowait.
- **A mail queue's writes**: one writer creates a hundred files in a directory, writes each
  in 4 KiB calls, fsyncs and closes it, then lists the directory and deletes them, over and
  over (seed000_mailqueue's queue without its concurrency), on ext3: the requests, KiB and
  journal commits the fsyncs send.
- **ext3's fsync stall**: 64 MiB written to one file and left dirty, then 4 KiB written to
  another and fsynced, on ext3 mounted ``data=ordered`` and ``data=writeback``: what the
  fsync wrote. In ordered mode the commit writes the other file's data first.

The loop device's image lives on tmpfs (/dev/shm), so the backing store adds no latency of
its own; loop has no I/O scheduler here ("none"), so its diskstats count the requests the
file system's bios became after the block layer's plug merging. The model's device is a
fast SSD profile with the scheduler "none", the host ``generic-linux`` (today's kernel).

Needs root, a free loop device, mkfs.ext3/ext4, e2freefrag, filefrag, losetup, mount, and fio
for the fio job; :func:`missing` says what is missing. ``python -m
ssdlab.experiments.kernel_loop`` prints every comparison.
"""

from __future__ import annotations

import argparse
import errno
import os
import re
import shutil
import subprocess
import tempfile
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ..api import build, execute
from ..filework import FileWork, Thread, load

SIZE = 256 << 20
BLOCK = 1024
AGING_FILES = (("a", 4096), ("b", 7168))
#: the model's device: a fast SSD (the loop device's tmpfs backing answers in microseconds)
PROFILE = "samsung-970-pro-512"
HOST = "generic-linux"
SHM = Path("/dev/shm")
READ_AHEAD_KB = 128
#: fio and the tree copy: ext4's default block for a file system of 1 GiB
FIO_SIZE, FIO_BLOCK = 1 << 30, 4096


def missing(*tools: str) -> str | None:
    """Why the kernel side cannot run here, or None."""
    if os.geteuid() != 0:
        return "not root"
    for tool in ("losetup", "mount", "umount", *tools):
        if shutil.which(tool) is None:
            return f"{tool} not found"
    if not Path("/dev/loop-control").exists():
        return "no /dev/loop-control"
    if not SHM.is_dir():
        return "no /dev/shm"
    return None


def _run(cmd: list[str], **kw: Any) -> str:
    return subprocess.run(cmd, check=True, capture_output=True, text=True, **kw).stdout


class LoopFs:
    """A file system on a loop device over an image on tmpfs, mounted (``fs`` None: the bare
    device, nothing made or mounted); ``with`` unmounts, detaches and deletes it."""

    def __init__(self, fs: str | None, size: int = SIZE, block: int = BLOCK, options: str | None = None) -> None:
        #: mount's -o, if any
        self.options = ["-o", options] if options else []
        self.dir = Path(tempfile.mkdtemp(prefix="ssdlab-loop-", dir=SHM))
        self.img = self.dir / "img"
        self.mnt = self.dir / "mnt"
        self.mnt.mkdir()
        with open(self.img, "wb") as f:
            f.truncate(size)
        if fs is not None:
            # inode tables and journal zeroed by mkfs: no ext4lazyinit thread writing during a count
            _run([f"mkfs.{fs}", "-q", "-F", "-b", str(block), "-E",
                  "nodiscard,lazy_itable_init=0,lazy_journal_init=0", str(self.img)])
        self.dev = _run(["losetup", "-f", "--show", str(self.img)]).strip()
        self.mounted = False
        try:
            # loop takes its read-ahead from the backing file (2560 KiB here); a disk's
            # default, and the model's, is 128 KiB (VM_READAHEAD_PAGES)
            Path(f"/sys/block/{Path(self.dev).name}/queue/read_ahead_kb").write_text(f"{READ_AHEAD_KB}\n")
            if fs is not None:
                self.mount()
        except BaseException:
            self.close()
            raise

    def diskstats(self) -> dict[str, int]:
        """The loop device's /proc/diskstats counters (the kernel's Documentation/admin-guide/iostats.rst)."""
        name = Path(self.dev).name
        for line in Path("/proc/diskstats").read_text().splitlines():
            f = line.split()
            if f[2] == name:
                v = list(map(int, f[3:14]))
                return {"read_ios": v[0], "read_merges": v[1], "read_sectors": v[2], "write_ios": v[4],
                        "write_merges": v[5], "write_sectors": v[6]}
        raise RuntimeError(f"{name} not in /proc/diskstats")

    def mount(self) -> None:
        if not self.mounted:
            _run(["mount", *self.options, self.dev, str(self.mnt)])
            self.mounted = True

    def unmount(self) -> None:
        if self.mounted:
            _run(["umount", str(self.mnt)])
            self.mounted = False

    def close(self) -> None:
        try:
            self.unmount()
        finally:
            try:
                _run(["losetup", "-d", self.dev])
            finally:
                shutil.rmtree(self.dir, ignore_errors=True)

    def __enter__(self) -> LoopFs:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def delta(before: dict[str, int], after: dict[str, int]) -> dict[str, int]:
    return {k: after[k] - before[k] for k in before}


def block_io(d: dict[str, int]) -> dict[str, float]:
    """What a diskstats delta says: requests, merges, KiB, and the mean request in KiB."""
    out: dict[str, float] = {}
    for k in ("read", "write"):
        ios, sectors = d[f"{k}_ios"], d[f"{k}_sectors"]
        out[f"{k}_ios"] = ios
        out[f"{k}_merges"] = d[f"{k}_merges"]
        out[f"{k}_kib"] = sectors / 2
        out[f"{k}_req_kib"] = sectors / 2 / ios if ios else 0.0
    return out


# ------------------------------------------------------------------ aging


@dataclass
class Aged:
    written: list[int]
    #: e2freefrag's bins: bin start in bytes -> (free extents, free blocks)
    freefrag: dict[int, tuple[int, int]]
    #: filefrag's extents per file -> files
    extents: dict[int, int]

    @property
    def free_blocks(self) -> int:
        return sum(b for _, b in self.freefrag.values())

    @property
    def free_extents(self) -> int:
        return sum(e for e, _ in self.freefrag.values())


def parse_e2freefrag(text: str) -> dict[int, tuple[int, int]]:
    """e2freefrag's histogram lines ("    1K...    2K-  :   4195   4195   7.19%")."""
    unit = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    out = {}
    for m in re.finditer(r"^\s*(\d+)([KMG])\.\.\.\s*\d+[KMG]-\s*:\s*(\d+)\s+(\d+)", text, re.M):
        out[int(m.group(1)) * unit[m.group(2)]] = (int(m.group(3)), int(m.group(4)))
    return out


def filefrag_counts(paths: list[Path]) -> dict[int, int]:
    """Files by their extents as ``filefrag`` prints them ("NAME: 3 extents found")."""
    n: Counter[int] = Counter()
    for i in range(0, len(paths), 1000):
        out = _run(["filefrag", *map(str, paths[i:i + 1000])])
        for m in re.finditer(r": (\d+) extents? found$", out, re.M):
            n[int(m.group(1))] += 1
    return dict(sorted(n.items()))


def _fill(d: Path, size: int) -> list[Path]:
    data, names = b"\xa5" * size, []
    while True:
        p = d / f"{d.name}{len(names):07d}"
        try:
            with open(p, "wb") as f:
                f.write(data)
        except OSError as e:
            if e.errno not in (errno.ENOSPC, errno.EDQUOT):
                raise
            p.unlink(missing_ok=True)
            return names
        names.append(p)


def age_kernel(fs: str) -> Aged:
    """The procedure on the kernel: a file at a time, one process, ``sync`` after each step."""
    with LoopFs(fs) as lf:
        written = []
        for name, size in AGING_FILES:
            d = lf.mnt / name
            d.mkdir()
            names = _fill(d, size)
            os.sync()
            for p in names[0::2]:
                p.unlink()
            os.sync()
            written.append(len(names))
        extents = filefrag_counts([p for name, _ in AGING_FILES for p in sorted((lf.mnt / name).iterdir())])
        lf.unmount()
        ff = parse_e2freefrag(_run(["e2freefrag", str(lf.img)]))
    return Aged(written, ff, extents)


def _aging_scenario(fs: str) -> str:
    sets = "".join(f'[[fileset]]\nname = "{n}"\ndir = "/{n}"\nentries = 300000\nsize = {s}\n\n' for n, s in AGING_FILES)
    threads, prev = [], None
    for n, s in AGING_FILES:
        for step, ops, extra in (
                ("fill", f'{{ op = "create", set = "{n}", pick = "next" }}, {{ op = "write_whole", io = "4k" }}, '
                         '{ op = "close" }', "stop_on_error = true\n"),
                ("sync1", f'{{ op = "sync", set = "{n}" }}', "loops = 1\n"),
                ("thin", f'{{ op = "delete", set = "{n}", pick = {{ every = 2, first = 0 }} }}', ""),
                ("sync2", f'{{ op = "sync", set = "{n}" }}', "loops = 1\n")):
            name = f"{step}-{n}"
            after = f'after = ["{prev}"]\n' if prev else ""
            threads.append(f'[[thread]]\nname = "{name}"\n{after}{extra}ops = [ {ops} ]\n')
            prev = name
    return (f'name = "aging-vs-kernel"\nfilesystem = {{ type = "{fs}", block_size = "1k", size = "256m", '
            f'era = "today" }}\n\n{sets}' + "\n".join(threads))


def aging_work(fs: str) -> FileWork:
    """The seed000-aging procedure with a sync after each step, on today's kernel."""
    with tempfile.TemporaryDirectory() as tmp:
        p = Path(tmp) / "aging.toml"
        p.write_text(_aging_scenario(fs))
        return load(p)


def age_model(fs: str, seed: int = 0) -> Aged:
    w = aging_work(fs)
    core = execute(build(None, profile=PROFILE, host=HOST, files=w, scheduler="none", seed=seed)).core
    names = [t.name for t in w.threads for _ in range(t.instances)]
    written = [core["jobs"][names.index(f"fill-{n}")]["file_ops"][0]["ops"] - 1 for n, _ in AGING_FILES]
    f = core["files"]
    ff = {start: (e, b) for start, e, b in f["free_extents"][0]}
    return Aged(written, ff, {n: c for n, c in f["extents_per_file"][0]})


# ------------------------------------------------------------------ fio

FIO_WRITE = "[w]\nrw=write\nbs=4k\nsize=64m\ndirect=0\nend_fsync=1\n"
FIO_READ = "[r]\nrw=read\nbs=4k\nsize=64m\ndirect=0\n"
#: the same read without fio's posix_fadvise(POSIX_FADV_SEQUENTIAL), which doubles the read-ahead
FIO_READ_NO_ADVICE = FIO_READ + "fadvise_hint=0\n"
#: random reads without fio's POSIX_FADV_RANDOM (which turns read-ahead off): context read-ahead
FIO_RANDREAD_NO_ADVICE = "[r]\nrw=randread\nbs=4k\nsize=64m\ndirect=0\nfadvise_hint=0\n"
#: 512-byte random writes to a file fio lays out unwritten (a write-only job): nothing to read
FIO_PARTIAL = "[w]\nrw=randwrite\nbs=512\nsize=8m\nnumber_ios=4096\nend_fsync=1\ndirect=0\n"


def fio_kernel(job: str, fs: str = "ext4", block: int = FIO_BLOCK, size: int = FIO_SIZE) -> dict[str, float]:
    """fio's job in the image's root; the loop device's diskstats over it. A read job's
    file is laid out and the caches dropped first, outside the count."""
    with LoopFs(fs, size=size, block=block) as lf:
        path = lf.dir / "job.fio"
        path.write_text(job)
        if "rw=read" in job or "rw=randread" in job:
            _run(["fio", "--create_only=1", "--directory", str(lf.mnt), str(path)])
            os.sync()
            # fio drops the file's pages itself (invalidate=1); this drops its metadata too
            Path("/proc/sys/vm/drop_caches").write_text("3\n")
        os.sync()
        before = lf.diskstats()
        _run(["fio", "--directory", str(lf.mnt), str(path)])
        os.sync()
        after = lf.diskstats()
    return block_io(delta(before, after))


def fio_model(job: str, fs: str = "ext4", seed: int = 0) -> dict[str, float]:
    """``ssdlab run job.fio --fs ext4``'s diskstats (its files laid out before the run, uncounted)."""
    with tempfile.TemporaryDirectory() as tmp:
        p = Path(tmp) / "job.fio"
        p.write_text(job)
        spec = build(p, profile=PROFILE, host=HOST, scheduler="none", filesystem=fs, seed=seed)
        core = execute(spec).core
    return block_io(core["devices"][0]["disk"])


# ------------------------------------------------------------------ fsync and fdatasync

#: random overwrites of a laid-out 4 MiB file, a flush every 8 writes (set the flush's kind)
FIO_FLUSHES = "[w]\nrw=randwrite\noverwrite=1\nbs=4k\nsize=4m\nnumber_ios=256\nioengine=psync\n{flush}=8\n"


def _jbd2_transactions(dev: str) -> int:
    """Transactions jbd2 has committed on ``dev``'s ext4 (/proc/fs/jbd2/DEV-8/info, first line)."""
    info = Path(f"/proc/fs/jbd2/{Path(dev).name}-8/info").read_text()
    return int(info.split()[0])


def flush_commits_kernel(flush: str) -> int:
    """Journal commits during fio's FIO_FLUSHES with ``flush`` (fsync or fdatasync) on ext4:
    the file laid out and written once before (uncounted), the timer's commit waited out."""
    job = FIO_FLUSHES.format(flush=flush)
    with LoopFs("ext4", size=FIO_SIZE, block=FIO_BLOCK) as lf:
        path = lf.dir / "job.fio"
        path.write_text(job)
        _run(["fio", "--directory", str(lf.mnt), str(path)])
        os.sync()
        time.sleep(6)  # past the 5 s commit interval: nothing of the first run left to commit
        before = _jbd2_transactions(lf.dev)
        _run(["fio", "--directory", str(lf.mnt), str(path)])
        return _jbd2_transactions(lf.dev) - before


def flush_commits_model(flush: str, seed: int = 0) -> int:
    """The same job in ``ssdlab run --fs ext4`` (the file laid out before the run): its commits."""
    with tempfile.TemporaryDirectory() as tmp:
        p = Path(tmp) / "job.fio"
        p.write_text(FIO_FLUSHES.format(flush=flush))
        core = execute(build(p, profile=PROFILE, host=HOST, scheduler="none", filesystem="ext4", seed=seed)).core
    return core["files"]["commits"]


# ------------------------------------------------------------------ how an fsync sleeps

FSYNC_FILES = 1000
FSYNC_WARMUP = 20  # files created and fsynced before the count starts


def fsync_work(files: int, fs: str = "ext4", era: str | None = None, writers: int = 1) -> str:
    """A scenario of ``writers`` threads, each creating ``files`` files, writing 4 KiB to each,
    fsyncing and closing it, on a 1 GiB ``fs`` (the host's kernel, or ``era``'s)."""
    era_key = f', era = "{era}"' if era else ""
    return f"""\
name = "fsyncer"
filesystem = {{ type = "{fs}", size = "1g"{era_key} }}

[[fileset]]
name = "f"
entries = {writers * files}
size = "0"

[[thread]]
name = "writer"
instances = {writers}
loops = {files}
ops = [ {{ op = "create", set = "f", pick = "rotor" }}, {{ op = "append", size = "4k", io = "4k" }},
        {{ op = "fsync" }}, {{ op = "close" }} ]
"""


DELAYACCT = Path("/proc/sys/kernel/task_delayacct")


def _blkio_s(pid: int) -> float:
    """``pid``'s block-I/O delay so far, s (/proc/PID/stat field 42, delayacct_blkio_ticks)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return int(fields[42 - 3]) / os.sysconf("SC_CLK_TCK")


def fsync_waits_kernel(files: int = FSYNC_FILES) -> dict[str, float]:
    """This process creates, writes 4 KiB to and fsyncs ``files`` files on ext4: the time in
    its fsyncs, and the part of it in io_schedule (task delay accounting turned on for the
    count, as it was after). Needs root."""
    was = DELAYACCT.read_text() if DELAYACCT.exists() else None
    try:
        if was is not None:
            DELAYACCT.write_text("1\n")
        with LoopFs("ext4", size=FIO_SIZE, block=FIO_BLOCK) as lf:
            in_fsync = io = 0.0
            # The first files warm the bitmaps and the journal up and are not counted; the
            # count brackets each fsync, as creating a file can sleep in io_schedule too
            # (a bitmap read, a buffer its commit is writing) and the claim is about fsync.
            for i in range(-FSYNC_WARMUP, files):
                fd = os.open(lf.mnt / f"f{i}", os.O_CREAT | os.O_WRONLY, 0o644)
                try:
                    os.write(fd, b"m" * 4096)
                    before, t = _blkio_s(os.getpid()), time.monotonic()
                    os.fsync(fd)
                    if i >= 0:
                        in_fsync += time.monotonic() - t
                        io += _blkio_s(os.getpid()) - before
                finally:
                    os.close(fd)
    finally:
        if was is not None:
            DELAYACCT.write_text(was)
    return {"fsync_s": in_fsync, "io_wait_s": io, "io_share": io / in_fsync}


def fsync_waits_model(files: int = FSYNC_FILES, seed: int = 0) -> dict[str, float]:
    """The same writer in the model: its fsyncs' time and its core's iowait (the journal
    thread has a core of its own: fork puts a new thread on the core with the fewest)."""
    with tempfile.TemporaryDirectory() as tmp:
        p = Path(tmp) / "fsyncer.toml"
        p.write_text(fsync_work(files))
        core = execute(build(None, profile=PROFILE, host=HOST, scheduler="none", files=load(p), seed=seed)).core
    fsync_s = core["jobs"][0]["file_ops"][2]["latency_ns"] / 1e9
    run_s = (core["end_ns"] - core["start_ns"]) / 1e9
    io = core["files"]["cpu_cores"][0]["iowait"] * run_s
    return {"fsync_s": fsync_s, "io_wait_s": io, "io_share": io / fsync_s}


# ------------------------------------------------------------------ ext3's fsync stall

STALL_MIB = 64
STALL_WORK = """\
name = "fsync-stall"
filesystem = {{ type = "ext3", size = "1g", data = "{mode}" }}

[[fileset]]
name = "big"
dir = "/big"
entries = 1
size = "0"

[[fileset]]
name = "small"
dir = "/small"
entries = 1
size = "0"

[[thread]]
name = "big-writer"
loops = 1
ops = [ {{ op = "create", set = "big", pick = "next" }}, {{ op = "append", size = "{mib}m", io = "1m" }},
        {{ op = "close" }} ]

[[thread]]
name = "fsyncer"
after = ["big-writer"]
loops = 1
ops = [ {{ op = "create", set = "small", pick = "next" }}, {{ op = "append", size = "4k", io = "4k" }},
        {{ op = "fsync" }}, {{ op = "close" }} ]
"""


def fsync_stall_kernel(mode: str, mib: int = STALL_MIB) -> dict[str, float]:
    """ext3 (block-mapped, allocating at write) mounted ``data=mode``: ``mib`` MiB written
    buffered to one file and left dirty, then 4 KiB written to another and fsynced. What the
    fsync wrote (the loop device's diskstats around it)."""
    with LoopFs("ext3", size=FIO_SIZE, block=FIO_BLOCK, options=f"data={mode}") as lf:
        with open(lf.mnt / "big", "wb") as f:
            for _ in range(mib):
                f.write(b"b" * (1 << 20))
        before = lf.diskstats()
        fd = os.open(lf.mnt / "small", os.O_CREAT | os.O_WRONLY, 0o644)
        try:
            os.write(fd, b"s" * 4096)
            os.fsync(fd)
        finally:
            os.close(fd)
        io = block_io(delta(before, lf.diskstats()))
    return {"fsync_written_mib": io["write_kib"] / 1024}


def fsync_stall_model(mode: str, mib: int = STALL_MIB, seed: int = 0) -> dict[str, float]:
    """The same through the file layer (today's kernel: ext3 is ext4's driver on a
    block-mapped file system); the run ends with the fsync, so its device writes are the
    fsync's."""
    with tempfile.TemporaryDirectory() as tmp:
        p = Path(tmp) / "stall.toml"
        p.write_text(STALL_WORK.format(mode=mode, mib=mib))
        core = execute(build(None, profile=PROFILE, host=HOST, scheduler="none", files=load(p), seed=seed)).core
    return {"fsync_written_mib": block_io(core["devices"][0]["disk"])["write_kib"] / 1024}


# ------------------------------------------------------------------ cold lookups

LOOKUP_FILES = 4000


def lookup_name(i: int) -> str:
    """The model's name of set entry ``i`` (``SetState::name``): both directories hold the
    same names, so their blocks are alike."""
    return f"f{i:08d}"


def lookups_kernel(fs: str, files: int = LOOKUP_FILES) -> dict[str, float]:
    """``stat`` of ``files`` 4 KiB files in one directory, in name order, after a remount: the
    loop device's diskstats around the stats (the mount's own reads left out)."""
    with LoopFs(fs, size=FIO_SIZE, block=FIO_BLOCK) as lf:
        d = lf.mnt / "set"
        d.mkdir()
        for i in range(files):
            (d / lookup_name(i)).write_bytes(b"\x5a" * 4096)
        lf.unmount()
        lf.mount()
        before = lf.diskstats()
        for i in range(files):
            os.stat(d / lookup_name(i))
        return block_io(delta(before, lf.diskstats()))


def lookups_model(fs: str, files: int = LOOKUP_FILES, seed: int = 0) -> dict[str, float]:
    """The same stats of a laid-out set through the file layer (the mount's reads come before
    the run, as on the kernel side)."""
    stat = {"ops": [{"op": "stat", "set": 0, "pick": {"kind": "next"}}], "loops": files, "stop_on_error": False}
    w = FileWork(name="cold-lookups",
                 file_sets=[{"name": "set", "target": 0, "dir": "/set", "entries": files, "size": {"kind": "fixed", "bytes": 4096},
                             "dir_width": 0, "prealloc": 1.0}],
                 threads=[Thread("stat", 1, {"set": 0, "direct": False, "service": "roundrobin", "end_fsync": False,
                                             "unlink": False, "program": stat})],
                 filesystem={"type": fs, "block_size": "4k", "size": "1g", "era": "today"})
    core = execute(build(None, profile=PROFILE, host=HOST, files=w, scheduler="none", seed=seed)).core
    out = block_io(core["devices"][0]["disk"])
    out["metadata_read_pages"] = core["files"]["metadata_read_pages"]
    return out


# ------------------------------------------------------------------ cold mapping blocks

#: a file large enough for ext3's double-indirect tree (65 mapping blocks at 4 KiB) and, on
#: ext4, in two extents held in its inode (no tree blocks)
MAP_FILE_MIB = 256
MAP_READS = 2000


def _mapping_fio(path: Path, direct: bool) -> str:
    if direct:
        return (f"[r]\nfilename={path}\nrw=randread\nbs=4k\ndirect=1\nnumber_ios={MAP_READS}\n"
                f"size={MAP_FILE_MIB}m\ninvalidate=0\n")
    return f"[r]\nfilename={path}\nrw=read\nbs=1m\nsize={MAP_FILE_MIB}m\ninvalidate=0\nfadvise_hint=0\n"


def mapping_kernel(fs: str, direct: bool) -> dict[str, float]:
    """A file written, the file system remounted (nothing of it in memory), then read: 4 KiB
    O_DIRECT reads at random offsets, or the whole file buffered in order. The loop device's
    diskstats around the reads (the open's lookup included)."""
    with LoopFs(fs, size=FIO_SIZE, block=FIO_BLOCK) as lf:
        d = lf.mnt / "d"
        d.mkdir()
        p = d / "big"
        with open(p, "wb") as f:
            for _ in range(MAP_FILE_MIB):
                f.write(b"\x5a" * (1 << 20))
        os.sync()
        lf.unmount()
        lf.mount()
        job = lf.dir / "job.fio"
        job.write_text(_mapping_fio(p, direct))
        before = lf.diskstats()
        _run(["fio", str(job)])
        return block_io(delta(before, lf.diskstats()))


def mapping_model(fs: str, direct: bool, seed: int = 0) -> dict[str, float]:
    """The same on a laid-out file whose metadata is cold (a scenario's prealloc)."""
    read = (f'{{ op = "read", io = "4k", random = true, repeat = {MAP_READS} }}' if direct
            else '{ op = "read_whole", io = "1m" }')
    text = (f'name = "cold-mapping"\nfilesystem = {{ type = "{fs}", block_size = "4k", size = "1g", era = "today" }}\n'
            f'[[fileset]]\nname = "big"\ndir = "/d"\nentries = 1\nsize = "{MAP_FILE_MIB}m"\nprealloc = 1.0\n'
            f'[[thread]]\nname = "r"\nloops = 1\ndirect = {str(direct).lower()}\n'
            f'ops = [ {{ op = "open", set = "big", pick = "next" }}, {read}, {{ op = "close" }} ]\n')
    with tempfile.TemporaryDirectory() as tmp:
        p = Path(tmp) / "mapping.toml"
        p.write_text(text)
        w = load(p)
    core = execute(build(None, profile=PROFILE, host=HOST, files=w, scheduler="none", seed=seed)).core
    out = block_io(core["devices"][0]["disk"])
    out["metadata_read_pages"] = core["files"]["metadata_read_pages"]
    return out


# ------------------------------------------------------------------ fio on the bare device

#: buffered I/O to the block device itself (fio's default direct=0): its own page cache
FIO_DEV_READ = "[r]\nfilename={dev}\nrw=read\nbs=4k\nsize=64m\n"
FIO_DEV_READ_NO_ADVICE = FIO_DEV_READ + "fadvise_hint=0\n"
FIO_DEV_WRITE = "[w]\nfilename={dev}\nrw=write\nbs=4k\nsize=64m\nend_fsync=1\n"
#: 512-byte random writes: each 4 KiB block they touch is read first (block_write_begin)
FIO_DEV_PARTIAL = "[w]\nfilename={dev}\nrw=randwrite\nbs=512\nsize=8m\nnumber_ios=4096\nend_fsync=1\n"


def fio_device_kernel(job: str, size: int = FIO_SIZE) -> dict[str, float]:
    """fio's ``job`` (``{dev}`` its device) on a bare loop device, the caches dropped first;
    the device's diskstats over it."""
    with LoopFs(None, size=size) as lf:
        path = lf.dir / "job.fio"
        path.write_text(job.format(dev=lf.dev))
        os.sync()
        Path("/proc/sys/vm/drop_caches").write_text("3\n")
        before = lf.diskstats()
        _run(["fio", str(path)])
        os.sync()
        after = lf.diskstats()
    return block_io(delta(before, after))


def fio_device_model(job: str, seed: int = 0) -> dict[str, float]:
    """``ssdlab run job.fio`` with ``{dev}`` as /dev/sda, no file system: the device's diskstats."""
    with tempfile.TemporaryDirectory() as tmp:
        p = Path(tmp) / "job.fio"
        p.write_text(job.format(dev="/dev/sda"))
        spec = build(p, profile=PROFILE, host=HOST, scheduler="none", seed=seed)
        core = execute(spec).core
    return block_io(core["devices"][0]["disk"])


# ------------------------------------------------------------------ tree copy


MEAN_FILE_BYTES = 27_925  # seed000_treecopy's 27.27 KB
TREE_FILES = 2000
SHAPE = 1.5


def tree_sizes(files: int, seed: int = 0) -> list[int]:
    """Gamma-distributed sizes as seed000_treecopy draws them (shape 1.5, capped at 11 means)."""
    rng = np.random.default_rng(seed)
    return [int(min(x, 11 * MEAN_FILE_BYTES)) for x in rng.gamma(SHAPE, MEAN_FILE_BYTES / SHAPE, files)]


def treecopy_kernel(fs: str, files: int, seed: int = 0) -> dict[str, float]:
    """``cp -a`` of a flat tree on tmpfs onto the image, then ``sync``."""
    src = Path(tempfile.mkdtemp(prefix="ssdlab-tree-", dir=SHM))
    try:
        tree = src / "usr0"
        tree.mkdir()
        for i, n in enumerate(tree_sizes(files, seed)):
            (tree / f"f{i:06d}").write_bytes(b"\x5a" * n)
        with LoopFs(fs, size=FIO_SIZE, block=FIO_BLOCK) as lf:
            os.sync()
            before = lf.diskstats()
            _run(["cp", "-a", str(tree), str(lf.mnt / "usr0")])
            os.sync()
            after = lf.diskstats()
            out = block_io(delta(before, after))
            out["extents_per_file"] = filefrag_counts(sorted((lf.mnt / "usr0").iterdir()))  # type: ignore[assignment]
    finally:
        shutil.rmtree(src, ignore_errors=True)
    return out


def treecopy_model(fs: str, files: int, seed: int = 0) -> dict[str, float]:
    from . import seed000_treecopy as tc

    w = tc.work(1, files)
    w.filesystem = {"type": fs, "block_size": "4k", "size": "1g", "era": "today"}
    core = execute(build(None, profile=PROFILE, host=HOST, files=w, scheduler="none", seed=seed)).core
    out = block_io(core["devices"][0]["disk"])
    out["extents_per_file"] = dict(core["files"]["extents_per_file"][0])  # type: ignore[assignment]
    return out


# ------------------------------------------------------------------ a mail queue's writes

QUEUE_BATCH = 100


def mailqueue_io_kernel(batches: int, size: int, fs: str = "ext3") -> dict[str, float]:
    """seed000_mailqueue's files one writer at a time: ``QUEUE_BATCH`` files created in one
    directory, each written in 4 KiB calls, fsynced and closed, then the directory listed and
    every file deleted; ``batches`` times. The loop device's diskstats over it and the
    journal's transactions."""
    with LoopFs(fs, size=FIO_SIZE, block=FIO_BLOCK) as lf:
        queue = lf.mnt / "queue"
        queue.mkdir()
        os.sync()
        before, transactions = lf.diskstats(), _jbd2_transactions(lf.dev)
        n = 0
        for _ in range(batches):
            for _ in range(QUEUE_BATCH):
                fd = os.open(queue / f"m{n:08d}", os.O_CREAT | os.O_WRONLY, 0o644)
                try:
                    for at in range(0, size, 4096):
                        os.write(fd, b"q" * min(4096, size - at))
                    os.fsync(fd)
                finally:
                    os.close(fd)
                n += 1
            for name in sorted(os.listdir(queue)):
                os.unlink(queue / name)
        out = block_io(delta(before, lf.diskstats()))
        out["commits"] = _jbd2_transactions(lf.dev) - transactions
    return out


MAILQUEUE_WORK = """\
name = "mailqueue-io"
filesystem = {{ type = "{fs}", size = "1g", block_size = "4k", era = "today" }}

[[fileset]]
name = "queue"
dir = "/queue"
entries = {entries}
size = "0"

[[thread]]
name = "writer"
loops = {batches}
ops = [ {ops} ]
"""


def mailqueue_io_model(batches: int, size: int, fs: str = "ext3", seed: int = 0) -> dict[str, float]:
    """The same writer through the file layer (today's kernel)."""
    one = (f'{{ op = "create", set = "queue", pick = "rotor" }}, {{ op = "append", size = "{size}", io = "4k" }}, '
           '{ op = "fsync" }, { op = "close" }')
    ops = ", ".join([one] * QUEUE_BATCH + ['{ op = "list_dir", set = "queue" }',
                                           f'{{ op = "delete", set = "queue", pick = "rotor", repeat = {QUEUE_BATCH} }}'])
    with tempfile.TemporaryDirectory() as tmp:
        p = Path(tmp) / "mailqueue.toml"
        p.write_text(MAILQUEUE_WORK.format(fs=fs, entries=batches * QUEUE_BATCH, batches=batches, ops=ops))
        core = execute(build(None, profile=PROFILE, host=HOST, scheduler="none", files=load(p), seed=seed)).core
    out = block_io(core["devices"][0]["disk"])
    out["commits"] = core["files"]["commits"]
    return out


# ------------------------------------------------------------------ report


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.parse_args(argv)
    why = missing("mkfs.ext3", "mkfs.ext4", "e2freefrag", "filefrag")
    for fs in ("ext3", "ext4"):
        m = age_model(fs)
        k = None if why else age_kernel(fs)
        print(f"aging {fs}: files written  model {m.written}  kernel {k and k.written}")
        print(f"  free blocks {m.free_blocks} / {k and k.free_blocks}, free extents {m.free_extents} / "
              f"{k and k.free_extents}")
        for start in sorted(set(m.freefrag) | set(k.freefrag if k else {})):
            print(f"  {start // 1024:5d}K-: model {m.freefrag.get(start, (0, 0))}  kernel "
                  f"{k and k.freefrag.get(start, (0, 0))}")
        print(f"  extents per file: model {m.extents}  kernel {k and k.extents}")
    fio_why = missing("mkfs.ext4", "fio")
    for name, job in (("fio write", FIO_WRITE), ("fio read", FIO_READ), ("fio read, fadvise_hint=0", FIO_READ_NO_ADVICE),
                      ("fio randread, fadvise_hint=0", FIO_RANDREAD_NO_ADVICE)):
        _side_by_side(name, None if fio_why else fio_kernel(job), fio_model(job))
    for fs in ("ext3", "ext4"):
        _side_by_side(f"stat of {LOOKUP_FILES:,} files after a remount, {fs}", None if why else lookups_kernel(fs),
                      lookups_model(fs))
    map_why = missing("mkfs.ext3", "mkfs.ext4", "fio")
    for fs in ("ext3", "ext4"):
        for direct, what in ((True, f"{MAP_READS:,} random 4 KiB O_DIRECT reads"), (False, "a whole buffered read")):
            _side_by_side(f"{what} of a cold {MAP_FILE_MIB} MiB file, {fs}",
                          None if map_why else mapping_kernel(fs, direct), mapping_model(fs, direct))
    for fs in ("ext3", "ext4"):
        _side_by_side(f"cp -a of {TREE_FILES:,} files, {fs}", None if why else treecopy_kernel(fs, TREE_FILES),
                      treecopy_model(fs, TREE_FILES))
    flushes = ("fsync", "fdatasync")
    _side_by_side("journal commits of 256 random 4 KiB overwrites, a flush every 8 (fio on ext4)",
                  None if fio_why else {f: flush_commits_kernel(f) for f in flushes},
                  {f: flush_commits_model(f) for f in flushes})
    _side_by_side(f"a writer fsyncing {FSYNC_FILES:,} new 4 KiB files (ext4): its wait for I/O",
                  None if why else fsync_waits_kernel(), fsync_waits_model())
    for size in (10240, 102400):
        _side_by_side(f"a mail queue's writer: 1,000 files of {size // 1024} KiB created, fsynced, deleted by "
                      f"the hundred (ext3)", None if why else mailqueue_io_kernel(10, size),
                      mailqueue_io_model(10, size))
    for mode in ("ordered", "writeback"):
        _side_by_side(f"{STALL_MIB} MiB left dirty, then 4 KiB fsynced: ext3, data={mode}",
                      None if why else fsync_stall_kernel(mode), fsync_stall_model(mode))
    for w in {why, fio_why, map_why} - {None}:
        print(f"kernel side skipped: {w}")
    return 0


def _side_by_side(what: str, k: dict[str, Any] | None, m: dict[str, Any]) -> None:
    def fmt(v: Any) -> str:
        return f"{v:,.1f}" if isinstance(v, float) else str(v)

    print(what)
    for key in m:
        kv = None if k is None else k.get(key)  # the model reports some counts the kernel has not
        err = f"{100 * (m[key] - kv) / kv:+7.1f} %" if isinstance(kv, (int, float)) and kv else ""
        print(f"  {key:19} model {fmt(m[key]):>12}  kernel {'-' if kv is None else fmt(kv):>12}  {err}")


if __name__ == "__main__":
    raise SystemExit(main())
