"""The file model against the real kernel on a loop device (ssdlab.experiments.kernel_loop):
aging on ext3 and ext4, a buffered fio job, a small-file copy. Each skips, saying why,
without root, loop devices or the tools (fio for the fio jobs). The bounds are what the
model achieves on Linux 6.18, each gap explained here and in docs/files.md ("How close the
model is to the kernel").
"""

from __future__ import annotations

import os
import textwrap

import pytest

from ssdlab.experiments import kernel_loop as kl

AGING_TOOLS = ("mkfs.ext3", "mkfs.ext4", "e2freefrag", "filefrag")


def need(*tools: str) -> None:
    why = kl.missing(*tools)
    if why:
        pytest.skip(f"needs root, loop devices and {', '.join(tools)}: {why}")


def multi_mean(hist: dict[int, int]) -> float:
    """The mean extents of the files in more than one."""
    multi = {e: n for e, n in hist.items() if e > 1}
    return sum(e * n for e, n in multi.items()) / sum(multi.values())


def small_share(a: kl.Aged) -> float:
    """The share of free extents of 1-3 KiB (the seed's "most are 1-3 KB")."""
    return sum(e for start, (e, _) in a.freefrag.items() if start < 4096) / a.free_extents


@pytest.mark.parametrize("fs", ["ext3", "ext4"])
def test_aging_free_space_and_extents_per_file_match_the_kernel(fs: str) -> None:
    need(*AGING_TOOLS)
    k, m = kl.age_kernel(fs), kl.age_model(fs)
    # The files each round fits: the same inode and block budget, per-block promises.
    for kw, mw in zip(k.written, m.written):
        assert abs(mw - kw) <= 0.01 * kw, (k.written, m.written)
    # Free blocks left: the same space used; the kernel's count moves by about 1 % between
    # runs (where the directory blocks and the locality group's preallocations land).
    assert abs(m.free_blocks - k.free_blocks) <= 0.025 * k.free_blocks, (k.free_blocks, m.free_blocks)
    # Free extents: 7-8 % fewer in the model (11-12 % before ext4_nonda_switch was modelled);
    # its 7 KB files fill the 4 KiB holes left by the first round more often whole-and-part
    # (4 + 3) than the kernel's mballoc does, which leaves more 1-2 KiB slivers (the 2-4 KiB
    # bin is about 55-60 % of the kernel's).
    assert abs(m.free_extents - k.free_extents) <= 0.15 * k.free_extents, (k.free_extents, m.free_extents)
    # Nothing large is left free: the seed's claim, on both.
    for a in (k, m):
        small_blocks = sum(b for start, (_, b) in a.freefrag.items() if start < 8192)
        assert small_blocks >= 0.98 * a.free_blocks, a.freefrag
    # "most are 1-3 KB": 57-60 % of the kernel's free extents, 45-48 % of the model's.
    assert abs(small_share(m) - small_share(k)) <= 0.20, (k.freefrag, m.freefrag)
    # Extents per file as filefrag counts them: the 4 KB files stay whole on both; the
    # share of files in pieces agrees within 2 points; how many pieces (the mean of those
    # in more than one) within 25 %: the model's is 2 % above the kernel's on ext3 and 15-17 %
    # below on ext4, where the kernel's own moved from 2.95 to 3.00 between two runs.
    ksum, msum = sum(k.extents.values()), sum(m.extents.values())
    assert abs(m.extents[1] - k.extents[1]) <= 0.01 * k.extents[1], (k.extents, m.extents)
    assert abs((msum - m.extents[1]) / msum - (ksum - k.extents[1]) / ksum) <= 0.02, (k.extents, m.extents)
    assert abs(multi_mean(m.extents) - multi_mean(k.extents)) <= 0.25 * multi_mean(k.extents), (k.extents, m.extents)


FIO_WRITE, FIO_READ = kl.FIO_WRITE, kl.FIO_READ


def test_buffered_fio_write_sends_the_kernels_bytes_in_requests_of_128_segments() -> None:
    need("mkfs.ext4", "fio")
    k, m = kl.fio_kernel(FIO_WRITE), kl.fio_model(FIO_WRITE)
    # The 64 MiB of data, and the kernel's few dozen KiB of journal and inode (the model's
    # fio file is allocated before the run, so its end_fsync has no metadata to commit).
    assert abs(m["write_kib"] - k["write_kib"]) <= 0.01 * k["write_kib"], (k, m)
    assert m["read_kib"] <= 64 and k["read_kib"] <= 64
    # Requests: the loop device takes at most 128 segments a request, so the kernel's are
    # 480-570 KiB in most runs (4 KiB pages: 512 KiB, with the journal's small ones) and up
    # to 1,010 KiB in others (ext4's large folios: fewer, larger segments; 721 KiB once).
    # The model cuts and merges at 128 pages of 4 KiB: 512 KiB. Before it counted segments
    # it sent 1 MiB, 1.8-2.1 times the kernel's usual.
    ratio = m["write_req_kib"] / k["write_req_kib"]
    assert 0.45 <= ratio <= 1.15, (k, m)


@pytest.mark.parametrize("job", [kl.FIO_READ, kl.FIO_READ_NO_ADVICE, kl.FIO_RANDREAD_NO_ADVICE],
                         ids=["fadvise", "no-fadvise", "random-no-fadvise"])
def test_buffered_fio_read_after_drop_caches_reads_the_file_once_in_the_kernels_requests(job: str) -> None:
    need("mkfs.ext4", "fio")
    k, m = kl.fio_kernel(job), kl.fio_model(job)
    # The whole file once through read-ahead, nothing more.
    assert abs(m["read_kib"] - k["read_kib"]) <= 0.01 * k["read_kib"], (k, m)
    # The requests, with read_ahead_kb = 128 on both. fio advises POSIX_FADV_SEQUENTIAL
    # (fadvise_hint, on by default), which doubles the file's read-ahead (mm/fadvise.c):
    # Linux 6.18 here sends 263 requests of 249.2 KiB (read_ahead_kb = 256 without advice
    # gives the same), the model 260 of 252.1. With fadvise_hint=0: kernel 517 of 126.8 KiB,
    # model 515 of 127.3. No merges on either: each request is one read-ahead window's bio.
    # Random reads without advice: each block once in random order, and a read just after a
    # cached run reads ahead as a stream would (context read-ahead, Linux 2.6.31 on): kernel
    # 11,218 requests of 5.84 KiB, model 11,000 of 5.96; without context read-ahead the model
    # sent 16,310 of 4.0.
    # Within 5 %: a model without the advice (or with merging) is off by a factor of 2.
    assert abs(m["read_req_kib"] - k["read_req_kib"]) <= 0.05 * k["read_req_kib"], (k, m)
    assert m["read_merges"] == k["read_merges"] == 0, (k, m)


@pytest.mark.parametrize("job", [kl.FIO_DEV_READ, kl.FIO_DEV_READ_NO_ADVICE], ids=["fadvise", "no-fadvise"])
def test_buffered_fio_read_of_the_bare_device_goes_through_its_page_cache_as_the_kernels(job: str) -> None:
    need("fio")
    k, m = kl.fio_device_kernel(job), kl.fio_device_model(job)
    # The device's own page cache reads ahead as a file's does, and past the job's 64 MiB
    # (a device has no end of file there): Linux 6.18 264 requests of 249.2 KiB (65,792 KiB),
    # the model 260 of 253.0 (65,776); without fio's advice 518 of 126.8 against 515 of 127.5.
    # Run as direct I/O (before the device's cache was modelled) it sent 16,384 of 4 KiB.
    assert abs(m["read_kib"] - k["read_kib"]) <= 0.01 * k["read_kib"], (k, m)
    assert abs(m["read_req_kib"] - k["read_req_kib"]) <= 0.05 * k["read_req_kib"], (k, m)
    assert m["read_merges"] == k["read_merges"] == 0, (k, m)
    assert m["write_kib"] == k["write_kib"] == 0, (k, m)


def test_buffered_fio_write_to_the_bare_device_writes_each_byte_once() -> None:
    need("fio")
    k, m = kl.fio_device_kernel(kl.FIO_DEV_WRITE), kl.fio_device_model(kl.FIO_DEV_WRITE)
    # 64 MiB written back, nothing read: the same bytes on both. The kernel's writeback of a
    # block device sends a bio a page, merged under its plug into requests of 508 KiB (the
    # loop device's 128 segments; 16,256 merges); the model sends runs cut at 128 pages,
    # 512 KiB, unmerged. Before it counted segments: 1 MiB.
    assert m["write_kib"] == k["write_kib"] == 64 * 1024, (k, m)
    assert m["read_kib"] == k["read_kib"] == 0, (k, m)
    assert abs(m["write_req_kib"] / k["write_req_kib"] - 1) <= 0.05, (k, m)


def test_partial_block_writes_read_the_blocks_they_do_not_cover_whole() -> None:
    need("mkfs.ext4", "fio")
    # 4,096 random 512-byte writes over 8 MiB. On the bare device each 4 KiB block they touch
    # is read first, once (block_write_begin): Linux 6.18 1,762 reads of 4 KiB, the model
    # 1,772 (it read none before). On a file of a write-only job, which fio lays out with
    # fallocate (unwritten extents), there is nothing to read: the kernel's 20 KiB are
    # metadata, the model reads none.
    k, m = kl.fio_device_kernel(kl.FIO_DEV_PARTIAL), kl.fio_device_model(kl.FIO_DEV_PARTIAL)
    assert abs(m["read_ios"] - k["read_ios"]) <= 0.03 * k["read_ios"], (k, m)
    assert m["read_req_kib"] == k["read_req_kib"] == 4, (k, m)
    assert abs(m["write_kib"] - k["write_kib"]) <= 0.03 * k["write_kib"], (k, m)
    k, m = kl.fio_kernel(kl.FIO_PARTIAL), kl.fio_model(kl.FIO_PARTIAL)
    assert m["read_kib"] <= 64 and k["read_kib"] <= 64, (k, m)


@pytest.mark.parametrize("fs", ["ext3", "ext4"])
def test_small_file_copy_writes_the_kernels_bytes_and_merges_across_files(fs: str) -> None:
    need(f"mkfs.{fs}", "filefrag", "cp")
    files = kl.TREE_FILES
    k, m = kl.treecopy_kernel(fs, files), kl.treecopy_model(fs, files)
    # The data (about 56 MiB), directory, inode tables and journal: within 3 %.
    assert abs(m["write_kib"] - k["write_kib"]) <= 0.03 * k["write_kib"], (k, m)
    # Extents per file: ext4 one each on both; ext3's files past 12 blocks have an indirect
    # block between their 12th and 13th data blocks, two extents: 7-9 % of the files.
    kx, mx = k["extents_per_file"], m["extents_per_file"]
    assert abs(mx.get(1, 0) - kx.get(1, 0)) <= 0.03 * files, (kx, mx)
    # Requests: writeback plugs across files on both sides, so adjacent small files merge
    # into one request. Here (Linux 6.18, 2026-11-29): ext4 kernel 442 requests and 1,851
    # merges, model 389 and 1,613; ext3 kernel 316 and 2,752, model 557 and 1,624 (each
    # model ext3 file with its indirect block between its data blocks breaks a run there).
    # The kernel merges less on a loaded machine (681 requests on ext4 once, with a build
    # beside it), hence the low ends.
    assert k["write_merges"] >= files / 2 and m["write_merges"] >= files / 2, (k, m)
    lo, hi = (0.5, 1.5) if fs == "ext4" else (0.8, 2.5)
    assert lo <= m["write_ios"] / k["write_ios"] <= hi, (k, m)


def test_e2freefrag_and_filefrag_output_parsed() -> None:
    text = textwrap.dedent("""\
        HISTOGRAM OF FREE EXTENT SIZES:
        Extent Size Range :  Free extents   Free Blocks  Percent
            1K...    2K-  :          4195          4195    7.19%
            2K...    4K-  :          8330         20822   35.70%
          256K...  512K-  :             1           510    0.87%
        """)
    assert kl.parse_e2freefrag(text) == {1024: (4195, 4195), 2048: (8330, 20822), 262144: (1, 510)}


@pytest.mark.skipif(os.geteuid() == 0, reason="checks the reason given without root")
def test_without_root_the_kernel_side_says_why() -> None:
    assert kl.missing() == "not root"


@pytest.mark.parametrize("fs", ["ext3", "ext4"])
def test_cold_lookups_read_the_kernels_directory_and_inode_table_blocks(fs: str) -> None:
    need("mkfs.ext3", "mkfs.ext4")
    k, m = kl.lookups_kernel(fs), kl.lookups_model(fs)
    # What is read: the directory's blocks and the inode-table blocks of 4,000 inodes, 32
    # at a time round a missing one (ext4's driver mounts ext3 too today). Linux 6.18:
    # 1,008 KiB on ext4, 1,160 on ext3; the model 996 and 1,144 (its directory is a few
    # blocks larger or smaller than the kernel's, its htree splits being its own).
    assert abs(m["read_kib"] - k["read_kib"]) <= 0.05 * k["read_kib"], (k, m)
    assert m["metadata_read_pages"] * 4 == m["read_kib"]
    # Requests: the kernel's 50-51 against the model's 37-38. The kernel sends the wanted
    # inode block last in its plug, after the read-ahead round it, so a window whose block
    # is not its first goes down as two requests; the model reads each window as one.
    assert 0.6 * k["read_ios"] <= m["read_ios"] <= k["read_ios"], (k, m)
    assert k["write_kib"] == 0 and m["write_kib"] == 0


@pytest.mark.parametrize("fs", ["ext3", "ext4"])
def test_cold_random_reads_of_a_large_file_read_its_mapping_blocks_as_the_kernel_does(fs: str) -> None:
    need("mkfs.ext3", "mkfs.ext4", "fio")
    k, m = kl.mapping_kernel(fs, direct=True), kl.mapping_model(fs, direct=True)
    # 2,000 random 4 KiB O_DIRECT reads of a 256 MiB file after a remount. Linux 6.18: ext3
    # 2,069 requests, 8,400 KiB (the open's lookup, then each of the file's 65 indirect
    # blocks when a read first needs it); ext4 2,002, 8,008 (two extents, in the inode).
    # The model: 2,067 / 8,392 and 2,001 / 8,004.
    assert abs(m["read_ios"] - k["read_ios"]) <= 0.01 * k["read_ios"], (k, m)
    assert abs(m["read_kib"] - k["read_kib"]) <= 0.01 * k["read_kib"], (k, m)
    if fs == "ext3":
        assert m["metadata_read_pages"] > 65, m


def test_a_cold_sequential_read_reads_ext3s_indirect_blocks_as_the_kernel_does() -> None:
    need("mkfs.ext3", "mkfs.ext4", "fio")
    # The same file read whole, buffered, in order: what ext3 reads beyond ext4 is its
    # indirect blocks. Linux 6.18: 392 KiB more in 69 more requests; the model 388 in 68.
    # (With the machine busy with other tests the kernel once read 424 KiB more in 78: the
    # bounds are 10 and 15 %.)
    # (The requests themselves differ: the kernel's loop device takes up to about 1 MiB a
    # request where the model's generic queue stops at 512 KiB: 327 / 258 against 583 / 515.)
    k = {fs: kl.mapping_kernel(fs, direct=False) for fs in ("ext3", "ext4")}
    m = {fs: kl.mapping_model(fs, direct=False) for fs in ("ext3", "ext4")}
    more = {side: (s["ext3"]["read_kib"] - s["ext4"]["read_kib"], s["ext3"]["read_ios"] - s["ext4"]["read_ios"])
            for side, s in (("kernel", k), ("model", m))}
    assert abs(more["model"][0] - more["kernel"][0]) <= 0.1 * more["kernel"][0], more
    assert abs(more["model"][1] - more["kernel"][1]) <= 0.15 * more["kernel"][1], more
    assert abs(m["ext3"]["read_kib"] - k["ext3"]["read_kib"]) <= 0.001 * k["ext3"]["read_kib"], (k, m)


def test_fsync_commits_the_journal_for_new_times_and_fdatasync_does_not_as_the_kernel() -> None:
    # Random overwrites of a laid-out file with a flush every 8 writes (32 flushes): ext4's
    # fsync commits the inode's new times whenever a jiffy has passed since the last,
    # fdatasync commits nothing (only data changed). How many fsyncs commit depends on the
    # device's speed against the jiffy: Linux 6.18 here committed once with the image on
    # tmpfs (the whole job inside a jiffy) and 22 times with it on a disk-backed /tmp; the
    # model on its 970 PRO (generic-linux, HZ 1000) 31 times (30 Nov 2026).
    need("fio")
    kernel = {f: kl.flush_commits_kernel(f) for f in ("fsync", "fdatasync")}
    model = {f: kl.flush_commits_model(f) for f in ("fsync", "fdatasync")}
    assert kernel["fdatasync"] == model["fdatasync"] == 0, (kernel, model)
    assert kernel["fsync"] >= 1 and model["fsync"] >= 1, (kernel, model)


def test_an_fsync_waits_for_its_commit_outside_iowait_as_the_kernel() -> None:
    # A writer fsyncing new 4 KiB files on ext4 spends part of each fsync waiting for the
    # journal commit (jbd2_log_wait_commit: wait_event), not in io_schedule. Linux 6.18 here
    # put 1-20 % of its fsync time in io_schedule with the image on tmpfs (the count is in
    # 10 ms ticks), 1-4 % on a disk-backed file; the model 1 % (its 970 PRO's commit is mostly
    # the cache flush). Before the model told the two waits apart it counted all of it
    # (1 Dec 2026). On tmpfs the kernel's split is set by how soon the loop worker (the data
    # write, waited in io_schedule) and jbd2 (the commit) get a core, so it moves with load:
    # the CI machine put 59 % in io_schedule (0.18 s of 0.31 s). The kernel's bound is that a
    # fifth or more is outside it, which a commit waited in io_schedule would not give; the
    # model's, with no such noise, is under half. The count brackets each fsync: a CI run that
    # counted the whole loop saw 0.30 s of io_schedule against 0.22 s of fsync.
    need("mkfs.ext4")
    kernel, model = kl.fsync_waits_kernel(), kl.fsync_waits_model()
    assert kernel["fsync_s"] > 0 and model["fsync_s"] > 0, (kernel, model)
    assert kernel["io_share"] < 0.8 and model["io_share"] < 0.5, (kernel, model)


@pytest.mark.parametrize("size", [10240, 102400])
def test_a_mail_queue_writer_sends_the_kernels_writes_and_commits(size: int) -> None:
    # seed000_mailqueue's writers one at a time on ext3: a hundred files created, written in
    # 4 KiB calls, fsynced, then listed and deleted, ten times. Linux 6.18 here, 10 KiB
    # files: 3,006 write requests, 43,664 KiB, 1,001 commits; the model 3,011, 43,660, 1,000.
    # 100 KiB files: 2,004, 69,836 KiB, 501; the model 1,990, 69,736, 500 (1 Dec 2026). Each
    # fsync is a commit with the file's data ahead of it, as the kernel's; the bounds: 3 %
    # for requests and KiB, 1 % for commits.
    need("mkfs.ext3")
    kernel, model = kl.mailqueue_io_kernel(10, size), kl.mailqueue_io_model(10, size)
    for key, tol in (("write_ios", 0.03), ("write_kib", 0.03), ("commits", 0.01)):
        assert abs(model[key] - kernel[key]) <= tol * kernel[key], (key, kernel, model)


def test_an_fsync_writes_other_files_dirty_data_in_ordered_mode_and_not_in_writeback_as_the_kernel() -> None:
    need("mkfs.ext3")
    # 64 MiB left dirty in one file, then 4 KiB written to another and fsynced, on ext3 (the
    # ext4 driver, which refuses delayed allocation on ext3 and so allocates at write):
    # in ordered mode the commit writes the big file's data first. Linux 6.18 wrote 64.1 MiB
    # in ordered mode and 0.105 MiB in writeback mode; the model 64.1 and 0.117. Before
    # 1 Dec 2026 the model's today-era ext3 delayed its allocation and wrote 0.04 MiB in
    # both.
    mib = kl.STALL_MIB
    for mode in ("ordered", "writeback"):
        k, m = kl.fsync_stall_kernel(mode), kl.fsync_stall_model(mode)
        if mode == "ordered":
            assert mib <= k["fsync_written_mib"] <= 1.05 * mib and mib <= m["fsync_written_mib"] <= 1.05 * mib, (k, m)
        else:
            assert k["fsync_written_mib"] < 1 and m["fsync_written_mib"] < 1, (k, m)
