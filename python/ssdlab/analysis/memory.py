"""How much memory a run will take, estimated from its core input before anything is built,
and the limit it has to fit in.

A run's memory is held in two phases, and its peak is the larger of the two:

* **while simulating** (in the Rust core): the SSDs' flash translation layers, the jobs'
  random maps and statistics, and the time series as the core keeps it;
* **after**: the result as Python objects (the time series above all) next to its JSON text.
  The core's devices are freed before its result is serialised.

Terms, and where each per-unit cost comes from (``crates/ssdlab-core/src``):

``flash map`` (``device/ssd/ftl.rs``, ``engine/memory.rs``)
    Per NAND SSD: the logical-to-physical map (one entry per logical IU, packed to
    ``bit_length(slots + 1)`` bits) and the physical-to-logical map (one entry per slot, i.e.
    per IU-sized place in the raw flash, packed to ``bit_length(logical IUs + 1)`` bits), as
    ``PackedArray`` words of 8 bytes (``ftl/map.rs``). A map of ``SPARSE_MIN`` bytes or more
    is mapped zeroed and commits 4 KiB pages only where an entry differs from what a
    sequential fill predicts: nothing on a fresh drive or one filled in order (without an
    SLC cache), all of it after random preconditioning, and during the run, for random
    writes, a page of the L2P per write (its entries lie side by side) and two of the P2L (the
    slots it leaves and takes) per IU written, as ``pages x (1 - exp(-touches / pages))`` per
    map, and for writes in order the pages their entries fill one after another (``_map_bytes``;
    an array's spare is written in order by its rebuild, as far as the rebuild goes);
    smaller maps are resident whole; per multi-plane block, 24 bytes of ``Block`` state, 4 of
    its programmed count, 4 of free-list entry and 16 of the min tree that finds a die's
    least-worn free block (``ftl/free_blocks.rs``); per die, the min trees over its blocks that
    pick GC victims (``ftl/victims.rs``: two trees of 4-byte keys, and on a drive with an SLC
    cache one of 8-byte keys, each of twice the die's block count rounded up to a power of
    two); the write buffer's index (about 48 bytes per buffered IU). With whole maps this is
    exactly the core's ``map_bytes`` plus the free lists and the trees. It scales with ``--scale`` (the number of blocks stays, each gets smaller).
``device`` (``device/``, ``block/``, ``array/``)
    Per device, drive or array, its servers, queues, counters and caches: a constant
    ``DEVICE_BYTES`` (a hard disk or an array keeps no per-sector or per-stripe state; an
    HDD's cache holds extents, not data). An array with ``verify_data`` holds real bytes:
    its whole capacity once as the reference image and once more spread over its members.
``random map`` (``workload/generator.rs``)
    Per job clone with a random pattern, uniform offsets and no ``norandommap``: a bit per
    block of its region (the block is the smallest ``blockalign``), kept in chunks of
    32,768 blocks (4 KiB) allocated when first touched, plus a 16-byte slot per chunk. A
    job touches about ``chunks * (1 - exp(-ios / chunks))`` of them after ``ios`` I/Os: its
    count when ``size=`` or ``number_ios=`` bound it, else (time-based) twice its runtime at
    its share of :func:`rate_estimate`; a trace replay has no map.
``jobs`` (``host/job.rs``, ``metrics/``)
    Per job clone: four latency histograms of 1856 buckets of 8 bytes (59 KiB) and the
    job's state, its spec and statistics as Python objects: ``CLONE_BYTES``.
``queue`` (``host/``, ``block/``, ``array/``)
    Per I/O a job may have outstanding (its ``iodepth``; a device takes a few hundred, the
    rest wait in the host and the block layer): the host's request, the block layer's request
    and bio, their tags and the event that completes them, ``QUEUED_BYTES``; through an md
    array, its own request and the members' bios, ``ARRAY_QUEUED_BYTES`` more; a write to
    RAID 5 or 6, its stripe head, ``PARITY_WRITE_BYTES`` more (by the job's share of writes).
    Measured with queues of 160,000 to 6.4 million I/Os (``benches/memory.py``: ``deep-queue``,
    ``deep-queue-raid5``); the most measured per I/O, as the containers that hold them grow by
    doubling, so that the queue's share is an upper bound.
``time series`` (``host/mod.rs`` ``Sample``, ``sim.rs`` ``DeviceResult``)
    Samples x device records x what one record holds. A sample holds, per target device,
    its block-layer counters and internal report, and an array's sample holds a full result
    of every member too, so a record per device and per member. The core keeps about
    ``SAMPLE_RUST_BYTES`` per record; the result keeps the record as JSON text and as
    Python dicts: ``RECORD_BYTES`` by kind (a NAND SSD's grows with its channels and its
    thermal report). The count is the run's length over the core's sampling interval
    (``core["interval_ns"]``, the ``--interval``), plus one: exact when every job has a runtime, else the length is estimated
    from the bytes the jobs move and a rough rate of their devices (:func:`rate_estimate`,
    which can be off ten times either way). An ``--interval`` is refused when the count
    passes :data:`MAX_SAMPLES`; for a run of estimated length, only when it does at the
    devices' fastest rates (link and media bandwidth), so that a guess never refuses a run.
``I/O log`` (``metrics/jobstats.rs`` ``IoLogRecord``)
    Per job clone that writes a fio log file: a record per I/O (no ``log_avg_msec``; its I/O
    count as for random maps) or per direction and ``log_avg_msec`` window;
    ``LOG_RECORD_RUST_BYTES`` each in the core, ``LOG_RECORD_BYTES`` as JSON text and Python
    lists after. More than :data:`MAX_LOG_RECORDS` in a run is refused here when the count
    is known, and by the core (which is given the limit) when the run passes it.
``replay`` (``workload/replay.rs``, ``workload/trace/mod.rs``)
    Per replaying job, a 256 KiB read buffer; the trace is read as the job goes.
``page cache`` (``pagecache/table.rs``, ``pagecache/mod.rs``)
    When jobs work on files: the cache the host's RAM gives (less its reserve), or a page per
    file-system block if that is less (cached pages are file data, a block at least each),
    full: a 20-byte record and 6.7 bytes of index per page (more while they grow: by eighths
    and by doubling), and about 20 bytes per dirty page up to the hard dirty limit. The core computes it
    (``file_memory``), as it would size the cache.
``file system`` (``fs/space.rs``, ``fs/inode.rs``)
    Per target with a file system: what mkfs leaves, computed by the core from the same
    mkfs parameters the run will use: two bits and the free-space index per block (about
    0.7 bytes per 4 KiB block), the inode bitmap and per-group tables. Files the run
    creates add about 93 bytes each while they live (``tests/fs_memory.rs``), not counted.
``file set`` (``file/sets.rs`` ``SetState``)
    Per entry of a file set, whether its file exists or not: ``FILE_ENTRY_BYTES`` (its inode
    number and size, its place in the sets' bags of existing and absent entries, whether its
    name is in memory); a fio job on
    the set adds ``FILE_JOB_ENTRY_BYTES`` per file, and ``FILE_MAP_ENTRY_BYTES`` more when it
    keeps a random map. Upper bounds: zeroed vectors' untouched pages are never resident. A file
    workload's threads are checked before their jobs are made (:func:`check_threads`), at
    ``CLONE_BYTES`` each.

The per-record and per-clone constants were measured with CPython 3.11 on x86-64 Linux
(``benches/memory.py`` compares the estimate with measured peaks). The estimate excludes the
Python interpreter and ssdlab's imports (about 40 MB; the command line with its report adds
more).

The limit is :data:`DEFAULT_SHARE` of ``MemAvailable`` in ``/proc/meminfo`` when the run is
built (memory the kernel can give without swapping, so other programs' use counts), or what
``memory_limit=`` / ``--memory-limit`` / the ``SSDLAB_MEMORY_LIMIT`` environment variable
says: a size (``12GiB``, ``16GB``), a share of MemAvailable (``90%``) or ``none``.
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..units import UnitError, format_bytes, format_time, parse_size

__all__ = ["DEFAULT_SHARE", "ENV_VAR", "MAX_LOG_RECORDS", "MAX_SAMPLES", "Estimate", "MemoryLimitError", "Term", "check",
           "estimate", "memory_limit", "rate_estimate"]

#: the default limit, as a share of MemAvailable
DEFAULT_SHARE = 0.75
#: the environment variable that sets the limit (as ``memory_limit=`` does)
ENV_VAR = "SSDLAB_MEMORY_LIMIT"
#: at most this many time-series samples for an asked ``--interval`` (the core is given it)
MAX_SAMPLES = 100_000
#: at most this many I/O log records in a run (the core is given it)
MAX_LOG_RECORDS = 2_000_000
#: estimates above this get a warning with the run's result, so that no large run is silent
WARN_BYTES = 2 << 30

# ---- per-unit costs (see the module's doc) -------------------------------------------------
BLOCK_BYTES = 24 + 4 + 4 + 16  # ftl.rs Block (3 x u32, u64, state, slc), its programmed count, free-list entry, free-block tree (2 x u64)
SPARSE_MIN = 1 << 30          # memory.rs SPARSE_MIN: a map this large commits only written pages
MAP_PAGE = 4096               # memory.rs PAGE: the unit a sparse map commits
BUFFERED_IU_BYTES = 48        # ssd/mod.rs BufferedIu in a VecDeque + HashMap<u32, u32> entry
DEVICE_BYTES = 256 << 10      # servers, queues, counters, caches of one device
VICTIM_TREE_BYTES = 4 + 4        # victims.rs: per tree node, the valid-count and erase-count trees (u32 keys)
SLC_VICTIM_TREE_BYTES = 8        # victims.rs: per tree node, the SLC stamp tree (u64 keys), with an SLC cache
MAP_CHUNK_BLOCKS = 32_768     # generator.rs MAP_CHUNK_WORDS x 64
MAP_CHUNK_BYTES = 4096 + 16   # one chunk of bits and its allocation header
MAP_SLOT_BYTES = 16           # Option<Box<[u64]>> per chunk, allocated up front
CLONE_BYTES = 80 << 10        # 4 x 1856 x 8 B histograms, job state, spec and stats in Python
# A queued I/O's cost varies with where the containers that hold it stand in their doubling:
# these are the most measured per I/O (queues of 160,000 to 6.4 million), so the queue is not
# under-estimated (and may be over-estimated by up to ~40 %).
QUEUED_BYTES = 248            # per queued I/O: host and block-layer requests, bio, tags, its event (197-247 B)
ARRAY_QUEUED_BYTES = 176      # through an md array: its request and the members' bios (a read: 350-423 B in all)
PARITY_WRITE_BYTES = 488      # a write to RAID 5/6: its stripe head (655-910 B in all)
#: per entry of a file set: file/sets.rs SetState's inode (u32) and size (u64), the existing and
#: absent bags' positions (u32 each), the absent bag's item (u32) and whether its name is in
#: the dentry cache (bool)
FILE_ENTRY_BYTES = 4 + 8 + 4 + 4 + 4 + 1
#: per file of a fio job on files: host/files.rs's offsets per direction (3 x u64), and for a job
#: that keeps a random map, each file's own (workload/generator.rs FileRandomMap: a Vec and
#: three words), allocated at its first I/O
FILE_JOB_ENTRY_BYTES = 3 * 8
FILE_MAP_ENTRY_BYTES = 24 + 3 * 8
REPLAY_BYTES = 256 << 10      # trace/mod.rs BufReader::with_capacity(1 << 18)
SAMPLE_RUST_BYTES = 1250      # host/mod.rs DeviceSample (counters, report, channel Vec)
SAMPLE_BYTES = 400            # a sample's own fields (time, host totals), JSON and Python
#: one device record of a sample, as JSON text and Python objects together, by kind
RECORD_BYTES = {"nand-ssd": 4300, "in-place": 3300, "hdd": 3800, "array": 3700}
CHANNEL_BYTES = 60            # one more entry of channel_busy_ns
THERMAL_BYTES = 300           # a thermal report in a record
LOG_RECORD_RUST_BYTES = 72    # IoLogRecord (48 B) in a Vec that grows by doubling
LOG_RECORD_BYTES = 330        # a record as JSON text and a Python list of 7 ints


class MemoryLimitError(ValueError):
    """The run would need more memory than the limit allows (or more samples than allowed)."""


@dataclass(frozen=True)
class Term:
    """One part of the estimate: bytes held while simulating and after."""

    kind: str  # "flash map", "device", "random map", "jobs", "queue", "time series", "I/O log", "replay", "verify", "page cache", "file system", "file set"
    what: str
    sim_bytes: int
    result_bytes: int = 0
    remedy: str = ""
    #: the device it belongs to (/dev name), for terms counted per device
    device: str = ""

    @property
    def bytes(self) -> int:
        return max(self.sim_bytes, self.result_bytes)


@dataclass(frozen=True)
class Estimate:
    terms: tuple[Term, ...]
    #: time-series samples the core will take (None without sampling), and whether the count
    #: is exact (every job has a runtime) or estimated from a rough rate
    samples: int | None = None
    samples_exact: bool = True
    #: the fewest samples the run can take (at the fastest rates; = ``samples`` when exact)
    min_samples: int | None = None
    #: the run's length in ns (None when unknown), and the core's sampling interval
    length_ns: int | None = None
    interval_ns: int | None = None
    records_per_sample: int = 0
    #: I/O log records the jobs keep (None when not known), and the job with the most
    log_records: int | None = None
    log_job: str = ""

    @property
    def sim_bytes(self) -> int:
        return sum(t.sim_bytes for t in self.terms)

    @property
    def result_bytes(self) -> int:
        return sum(t.result_bytes for t in self.terms)

    @property
    def total(self) -> int:
        """The peak: the larger of the two phases."""
        return max(self.sim_bytes, self.result_bytes)

    def by_kind(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for t in self.terms:
            out[t.kind] = out.get(t.kind, 0) + t.bytes
        return out

    def largest(self) -> Term:
        """The kind of term that weighs most in the phase that makes the peak, as one term
        (the flash maps of an array's drives together, say)."""
        sim = self.sim_bytes >= self.result_bytes
        groups: dict[str, list[Term]] = {}
        for t in self.terms:
            groups.setdefault(t.kind, []).append(t)
        kind = max(groups, key=lambda k: sum(t.sim_bytes if sim else t.result_bytes for t in groups[k]))
        parts = groups[kind]
        if len(parts) == 1:
            return parts[0]
        names = ", ".join(f"/dev/{t.device}" for t in parts if t.device)
        plural = {"flash map": f"the flash maps of {len(parts)} SSDs", "device": f"{len(parts)} devices",
                  "verify": f"the data of {len(parts)} arrays"}.get(kind, f"{len(parts)} {kind} terms")
        return Term(kind, f"{plural} ({names})" if names else plural, sum(t.sim_bytes for t in parts),
                    sum(t.result_bytes for t in parts), parts[0].remedy)

    def table(self) -> str:
        """One line per term, for people."""
        lines = [f"{'term':<12} {'while simulating':>16} {'after':>10}  what"]
        for t in self.terms:
            lines.append(f"{t.kind:<12} {gb(t.sim_bytes):>16} {gb(t.result_bytes):>10}  {t.what}")
        lines.append(f"{'total':<12} {gb(self.sim_bytes):>16} {gb(self.result_bytes):>10}  "
                     f"peak {gb(self.total)}")
        return "\n".join(lines)


def gb(n: float) -> str:
    return format_bytes(n) if n else "0"


# ---- the estimate ----------------------------------------------------------------------------

def ftl_bytes(device: Mapping[str, Any], precondition: Mapping[str, Any] | None = None,
              written: Sequence[Written] | None = None) -> int:
    """Bytes of a NAND SSD's flash translation layer, as ``Ftl::new`` allocates them; of a
    sparse map, the pages it commits after ``precondition`` (None: all of them) and
    ``written`` host writes (None: unknown, all of them)."""
    n, f = device["nand"], device["ftl"]
    iu = f["iu_bytes"]
    dies = n["channels"] * n["dies_per_channel"]
    blocks = dies * n["blocks_per_plane"]
    ius_per_block = n["page_bytes"] // iu * n["planes_per_die"] * n["pages_per_block"]
    slots = blocks * ius_per_block
    logical = device["capacity_bytes"] // iu
    # An IU written stores its own L2P entry and two P2L entries: the slot left, the slot taken.
    l2p = _map_bytes(logical, (slots + 1).bit_length(), precondition, device, written, iu, 1)
    p2l = _map_bytes(slots, (logical + 1).bit_length(), precondition, device, written, iu, 2, slot_map=True)
    buffer = device.get("write_buffer_bytes", 0) // iu * BUFFERED_IU_BYTES
    return l2p + p2l + blocks * BLOCK_BYTES + dies * victim_tree_bytes(device) + buffer


def _map_bytes(entries: int, bits: int, precondition: Mapping[str, Any] | None, device: Mapping[str, Any],
               written: Sequence[Written] | None, iu: int, per_iu: int, slot_map: bool = False) -> int:
    """One packed map: whole, or (at ``SPARSE_MIN`` or more) the pages it commits.

    Random writes touch pages anywhere: ``pages x (1 - exp(-touches / pages))``, a touch per
    IU in the P2L (``slot_map``: the slots a write takes and leaves lie on different dies) and
    in the L2P a touch per write of up to a page of entries (its IUs' entries lie side by
    side). A sequential writer's entries lie side by side too: a page holds ``MAP_PAGE x 8 /
    bits`` of them, so it touches that many times fewer pages, one more at each end; in the
    L2P only its region's (a writer that wraps rewrites the same entries), in the P2L every
    slot it takes and leaves, since each write takes a new one."""
    whole = (-(-entries * bits // 64) + 1) * 8
    kind = (precondition or {}).get("kind", "random")
    seq = kind == "none" or (kind == "sequential" and not device.get("slc_cache"))
    if whole < SPARSE_MIN or not seq or written is None:
        return whole
    pages = -(-whole // MAP_PAGE)
    per_page = MAP_PAGE * 8 // bits
    touches = 0.0
    runs = 0.0
    for w in written:
        each = -(-max(w.size, 1) // iu)
        ius = w.ios * each
        if not w.sequential:
            # The L2P: a write's entries start anywhere on a page and run on for its IUs.
            touches += per_iu * (ius if slot_map else w.ios * (1 + (each - 1) / per_page))
            continue
        if not slot_map:
            ius = min(ius, -(-max(w.region, 1) // iu))
        runs += per_iu * (ius / per_page + 2)
    scattered = pages * -math.expm1(-touches / pages)
    return int(min(pages, scattered + math.ceil(runs))) * MAP_PAGE


def victim_tree_bytes(device: Mapping[str, Any]) -> int:
    """Bytes of one die's GC-candidate trees (``ftl/victims.rs``, ``Victims::build``)."""
    n, iu = device["nand"], device["ftl"]["iu_bytes"]
    nodes = 2 * (1 << max(n["blocks_per_plane"] - 1, 0).bit_length())
    slc = device.get("slc_cache")
    has_slc = bool(slc) and (slc["static_bytes"] // iu + slc["dynamic_max_bytes"] // iu) > 0
    return nodes * (VICTIM_TREE_BYTES + (SLC_VICTIM_TREE_BYTES if has_slc else 0))


def _members(device: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """An array's member and spare targets (each ``{"name", "device", ...}``)."""
    return [*device.get("members", []), *device.get("spares", [])]


def _record_bytes(device: Mapping[str, Any]) -> int:
    kind = device["kind"]
    base = RECORD_BYTES.get(kind, RECORD_BYTES["nand-ssd"])
    channels = (device.get("nand") or device.get("media") or {}).get("channels", 0)
    extra = max(channels - 8, 0) * CHANNEL_BYTES if kind == "nand-ssd" else channels * CHANNEL_BYTES
    if device.get("thermal"):
        extra += THERMAL_BYTES
    return base + extra


def _device_terms(name: str, device: Mapping[str, Any], labels: Mapping[str, str],
                  precondition: Mapping[str, Any] | None = None,
                  written: Sequence[Written] | None = None) -> list[Term]:
    label = labels.get(name, device.get("name", device["kind"]))
    terms = [Term("device", f"/dev/{name} ({label})", DEVICE_BYTES, 0, device=name)]
    if device["kind"] == "nand-ssd":
        b = ftl_bytes(device, precondition, written)
        terms.append(Term("flash map", f"the flash map of /dev/{name} ({label}, "
                                       f"{format_bytes(device['capacity_bytes'], binary=False)} simulated)", b, 0,
                          "simulate a fraction of the flash with --scale", device=name))
    elif device["kind"] == "array":
        if device.get("verify_data"):
            cap = _array_capacity(device)
            terms.append(Term("verify", f"the data /dev/{name} verifies (verify_data)", 2 * cap, 0,
                              "turn verify_data off", device=name))
        # A random writer's writes may all land on one member (an upper bound); a writer in
        # order spreads its over the members; a spare that a failure brings in is written by
        # the rebuild too, in order, as far as the rebuild goes.
        each = None if written is None else [_member_share(w, device) for w in written]
        rebuild = _rebuild_writes(device)
        for m in device.get("members", []):
            terms += _device_terms(m["name"], m["device"], labels, m.get("precondition", precondition), each)
        for m in device.get("spares", []):
            spare = None if each is None else [*each, *rebuild]
            terms += _device_terms(m["name"], m["device"], labels, m.get("precondition", precondition), spare)
    return terms


def _data_members(level: str | None, n: int) -> int:
    """Members' worth of data in an array of ``n`` at ``level``: its capacity in members, and
    a writer in order's bytes over what one member takes of them, parity included (RAID 5
    writes a parity chunk per n - 1 data chunks, spread over the n)."""
    return {"raid0": n, "raid1": 1, "raid10": max(n // 2, 1), "raid5": n - 1, "raid6": n - 2}.get(level or "", n)


def _member_share(w: Written, device: Mapping[str, Any]) -> Written:
    """What one member of array ``device`` takes of a job clone's writes ``w``: all of a
    random writer's (an upper bound), a writer in order's bytes over the members that share
    them, plus a chunk at each end of its run (its stripe may start and end on any member)."""
    k = max(_data_members(device.get("level"), len(device.get("members", []))), 1)
    if not w.sequential or k == 1:
        return w
    chunk = int(device.get("chunk_bytes") or 0)
    total = w.ios * w.size
    return Written(1, int(total / k) + 2 * chunk, True, int(w.region / k) + 2 * chunk)


def _rebuild_writes(device: Mapping[str, Any]) -> list[Written]:
    """What an array's rebuild writes to the spare it brings in: the failed member's size, or
    the rebuild's limit, in order (none without a failure)."""
    members = device.get("members", [])
    if not device.get("failures") or not members:
        return []
    size = min(m["device"]["capacity_bytes"] for m in members)
    size = min(size, device.get("rebuild_limit_bytes") or size)
    return [Written(1, size, True, size)]


def _array_capacity(device: Mapping[str, Any]) -> int:
    members = device.get("members", [])
    if not members:
        return 0
    smallest = min(m["device"]["capacity_bytes"] for m in members)
    return smallest * _data_members(device.get("level"), len(members))


def _records(device: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """The device records one sample holds for a target: itself, and an array's members."""
    if device["kind"] != "array":
        return [device]
    return [device, *(d for m in _members(device) for d in _records(m["device"]))]


def _mean_size(dist: Mapping[str, Any]) -> float:
    if dist.get("range_min") is not None and dist.get("range_max") is not None:
        return (dist["range_min"] + dist["range_max"]) / 2
    split = [(s, w) for s, w in dist.get("split", []) if w > 0]
    total = sum(w for _, w in split)
    return sum(s * w for s, w in split) / total if total else 4096.0


def _job_sizes(job: Mapping[str, Any]) -> float:
    """Mean bytes per I/O of a job (reads and writes as its mix has them)."""
    rw = job["rw"]
    read, write = _mean_size(job["block_sizes"][0]), _mean_size(job["block_sizes"][1])
    if rw in ("read", "randread"):
        return read
    if rw in ("rw", "randrw"):
        f = job.get("rwmix_read", 50.0) / 100
        return f * read + (1 - f) * write
    return write


def _job_ios(job: Mapping[str, Any]) -> float | None:
    """I/Os a job issues, when its size bounds it (None for a time-based job)."""
    if job.get("time_based") or job.get("replay") is not None:
        return None
    total = job["io_limit"] * max(job.get("loops", 1), 1) / max(_job_sizes(job), 1)
    if job.get("number_ios"):
        total = min(total, job["number_ios"])
    return total


def _write_share(job: Mapping[str, Any]) -> float:
    rw = job["rw"]
    if rw in ("rw", "randrw"):
        return 1 - job.get("rwmix_read", 50.0) / 100
    return 1.0 if "write" in rw else 0.0


def _queued_bytes(job: Mapping[str, Any], device: Mapping[str, Any]) -> float:
    """What one I/O the job has outstanding holds while it waits (see the module's ``queue``)."""
    per = QUEUED_BYTES
    if device["kind"] == "array":
        per += ARRAY_QUEUED_BYTES
        if device.get("level") in ("raid5", "raid6"):
            per += PARITY_WRITE_BYTES * _write_share(job)
    return per


def _random_map_bytes(job: Mapping[str, Any], ios: float | None) -> int:
    """A job clone's random map after ``ios`` uniformly random I/Os (None: all of it)."""
    if not (job["rw"].startswith("rand") and job.get("random_map", True)
            and job.get("distribution", {}).get("kind", "random") == "random"):
        return 0
    unit = min(job["block_align"]) or 4096
    blocks = max(job["region_size"] // unit, 1)
    chunks = -(-blocks // MAP_CHUNK_BLOCKS)
    touched = chunks if ios is None else chunks * (1 - math.exp(-ios / chunks))
    return int(chunks * MAP_SLOT_BYTES + math.ceil(touched) * MAP_CHUNK_BYTES)


#: a time-based job's I/O count is guessed as this many times its runtime at its share of
#: :func:`rate_estimate` (a margin: the rate is rough)
IOS_MARGIN = 2.0


@dataclass(frozen=True)
class Written:
    """What one job clone writes (or trims) to a target: its I/Os and bytes each, whether in
    order (fio's ``write``, ``rw``, ``trim``, ``trimwrite``) and over how many bytes."""

    ios: float
    size: int
    sequential: bool = False
    region: int = 0


#: the patterns whose writes follow one another through the job's region
SEQUENTIAL_WRITES = ("write", "rw", "trim", "trimwrite")


def _written_bytes(core: Mapping[str, Any], writes: bool = True) -> list[list[Written] | None]:
    """What the jobs write (or trim) to each target, per job clone; None where unknown (a
    trace, files). ``writes`` False: nothing (the jobs' writes left out)."""
    out: list[list[Written] | None] = [[] for _ in core["targets"]]
    if not writes:
        return out
    for j, n in zip(core["jobs"], _clone_ios(core)):
        t = j["target"]
        if j["rw"] in ("read", "randread"):
            continue
        if n is None or j.get("files") or out[t] is None:
            out[t] = None
        else:
            # A pattern that skips ahead (fio's rw=write:N) may put each write on a page of its own.
            in_order = j["rw"] in SEQUENTIAL_WRITES and not j.get("rw_modifier")
            out[t].append(Written(n, int(_job_sizes(j)), in_order, int(j.get("region_size") or 0)))  # type: ignore[union-attr]
    return out


def _clone_ios(core: Mapping[str, Any]) -> list[float | None]:
    """I/Os each job clone issues: from its size, else from its runtime and a rough rate."""
    jobs = core["jobs"]
    out: list[float | None] = []
    rates: dict[int, float] = {}
    for j in jobs:
        n = _job_ios(j)
        if n is None and j.get("runtime_ns") and j.get("replay") is None:
            t = j["target"]
            mine = [x for x in jobs if x["target"] == t]
            if t not in rates:
                rates[t] = rate_estimate(core["targets"][t]["device"], mine, core.get("host", {}))
            per_s = rates[t] / len(mine) / max(_job_sizes(j), 1)
            n = IOS_MARGIN * per_s * (j["runtime_ns"] + j.get("ramp_time_ns", 0)) / 1e9
        out.append(n)
    return out


_PCIE_LANE = {1: 250e6, 2: 500e6, 3: 985e6, 4: 1969e6, 5: 3938e6, 6: 7877e6}


def rate_estimate(device: Mapping[str, Any], jobs: Sequence[Mapping[str, Any]], host: Mapping[str, Any],
                  fastest: bool = False) -> float:
    """A rough rate (B/s) at which ``jobs`` move data on ``device``: the least of its link,
    its media's parallel bandwidth and what the jobs' queue depths allow at a per-I/O latency
    of host overhead, controller and one media operation (a disk: a seek and half a turn; a
    RAID 5/6 small random write: a read-modify-write). Only used to guess how long a run that
    no runtime bounds lasts; it can be off ten times either way (caches, GC, md's stripe
    handling). ``fastest``: link and media bandwidth alone, an upper bound on the rate."""
    size = sum(_job_sizes(j) for j in jobs) / max(len(jobs), 1)
    qd = sum(max(j.get("iodepth", 1), 1) for j in jobs)
    reads = sum(1 for j in jobs if "read" in j["rw"] or j["rw"] in ("rw", "randrw")) >= len(jobs) / 2
    random = sum(1 for j in jobs if j["rw"].startswith("rand")) >= len(jobs) / 2
    kind = device["kind"]
    if kind == "array":
        members = [m["device"] for m in device.get("members", [])]
        if not members:
            return 1e9
        each = rate_estimate(members[0], jobs, host, fastest)
        level = device.get("level")
        parity = {"raid5": 1, "raid6": 2}.get(level, 0)
        rate = each * max(len(members) - parity - (len(members) // 2 if level == "raid10" else 0), 1)
        if parity and not reads and random and not fastest:
            rate /= 2 + 2 * parity  # read old data and parity, write both back
        return rate
    limits = []
    itf = device.get("interface", {})
    if itf.get("kind") == "sata":
        limits.append(itf.get("gbit_per_s", 6.0) * 1e8 * itf.get("efficiency", 1.0))
    elif itf.get("kind") == "pcie":
        limits.append(_PCIE_LANE.get(itf.get("gen", 3), 985e6) * itf.get("lanes", 4) * itf.get("efficiency", 1.0))
    ctl = device.get("controller", {})
    latency = host.get("io_overhead_ns", 10_000) + ctl.get("latency_ns", 10_000) \
        + ctl.get("read_busy_ns" if reads else "write_busy_ns", 10_000)
    if kind == "nand-ssd":
        n = device["nand"]
        dies = n["channels"] * n["dies_per_channel"]
        limits.append(n["channels"] * n["channel_bytes_per_s"])
        if reads:
            limits.append(dies * n["planes_per_die"] * n["page_bytes"] / (n["read_ns"] / 1e9))
            latency += n["read_ns"]
        elif not fastest:  # a write buffer and an SLC cache take bursts faster
            program = dies * n["planes_per_die"] * n["page_bytes"] * n.get("program_pages", 1) / (n["program_ns"] / 1e9)
            # A write smaller than the indirection unit programs its whole unit (a
            # read-modify-write): host bytes go at size/IU of the program bandwidth.
            iu = device.get("ftl", {}).get("iu_bytes", size)
            limits.append(program * min(1.0, size / max(iu, 1)))
    elif kind == "in-place":
        m = device["media"]
        dies = m["channels"] * m["dies_per_channel"]
        op = m["read_ns"] if reads else m["write_ns"]
        limits.append(m["channels"] * m["channel_bytes_per_s"])
        limits.append(dies * m["unit_bytes"] / (op / 1e9))
        latency += op
    elif kind == "hdd":
        mech = device["mechanics"]
        turn_ns = 60e9 / mech["rpm"]
        if not fastest:  # the disk's cache answers faster than the platters
            limits.append(mech["outer_sectors_per_track"] * mech["sector_bytes"] / (turn_ns / 1e9))
        if random:
            latency += mech["average_seek_ns"] + turn_ns / 2
            qd = min(qd, 4)  # NCQ shortens seeks, but one head serves them
    if not fastest:
        limits.append(qd * size / (latency / 1e9))
    return max(min(limits), 1e5)


def run_length(core: Mapping[str, Any], fastest: bool = False) -> tuple[int | None, bool]:
    """The run's length in ns and whether it is exact (every job bounded by its runtime: an
    upper bound, the end of the last job along its start_after chain), else an estimate
    (``fastest``: at the fastest rates, a lower bound; a rebuild is guessed at its
    engine's maximum speed either way)."""
    jobs = core["jobs"]
    ends: list[int | None] = [None] * len(jobs)

    def end(i: int, seen: frozenset[int] = frozenset()) -> int | None:
        if ends[i] is not None:
            return ends[i]
        j = jobs[i]
        if j.get("runtime_ns") is None or i in seen:
            return None
        start = 0
        for d in j.get("start_after", []):
            e = end(d, seen | {i})
            if e is None:
                return None
            start = max(start, e)
        ends[i] = start + j.get("start_delay_ns", 0) + j.get("ramp_time_ns", 0) + j["runtime_ns"]
        return ends[i]

    bounded = [end(i) for i in range(len(jobs))]
    if core.get("until", "jobs-done") == "jobs-done" and jobs and all(e is not None for e in bounded):
        return max(bounded), True  # type: ignore[type-var]
    # Some job ends when its bytes are moved (or the run when a rebuild is done): a guess.
    guess = max((e for e in bounded if e is not None), default=0)
    host = core.get("host", {})
    for t, target in enumerate(core["targets"]):
        mine = [j for j in jobs if j["target"] == t and j.get("runtime_ns") is None]
        # A file job's length depends on its program and the file system: unknown here.
        ios = [None if j.get("files") else _job_ios(j) for j in mine]
        if mine and all(n is not None for n in ios):
            moved = sum(n * _job_sizes(j) for n, j in zip(ios, mine))  # type: ignore[operator]
            guess = max(guess, int(moved / rate_estimate(target["device"], mine, host, fastest) * 1e9))
        elif mine:
            return None, False  # a trace's or a file program's length: unknown here
        dev = target["device"]
        if core.get("until") == "rebuild-done" and dev["kind"] == "array" and dev.get("failures"):
            member = min(m["device"]["capacity_bytes"] for m in dev["members"])
            member = min(member, dev.get("rebuild_limit_bytes") or member)
            speed = dev.get("engine", {}).get("sync_speed_max_bytes_per_s") or 200e6
            guess = max(guess, int(member / speed * 1e9))
    return guess, False


def estimate(core: Mapping[str, Any], labels: Mapping[str, str] | None = None, *, writes: bool = True) -> Estimate:
    """The memory a run of ``core`` (a RunSpec's ``core``) will need. ``labels`` names each
    device (by its /dev name) for messages, e.g. its profile and scale, and may say where
    each file set was written (by ``file_sets.NAME``, e.g. ``queue.toml:12``).
    ``writes`` False: without what the jobs' writes add to the flash maps (what a run that
    ends with its rebuild holds before them; :func:`guard_needed` has those watched as they
    come instead)."""
    labels = labels or {}
    terms: list[Term] = []
    records: list[Mapping[str, Any]] = []
    written = _written_bytes(core, writes)
    for i, t in enumerate(core["targets"]):
        terms += _device_terms(t["name"], t["device"], labels, t.get("precondition"), written[i])
        records += _records(t["device"])
    jobs = core["jobs"]
    maps = [_random_map_bytes(j, n) for j, n in zip(jobs, _clone_ios(core))]
    if any(maps):
        n = sum(1 for m in maps if m)
        terms.append(Term("random map", f"the random maps of {n} job clone{'s' * (n != 1)} "
                                        f"({gb(max(maps))} each at most)", sum(maps), 0,
                          "add norandommap to the job (fio keeps a bit per block of the region for "
                          "each job clone), or use fewer jobs or a smaller size="))
    clones = len(jobs)
    clone = clones * CLONE_BYTES
    terms.append(Term("jobs", f"{clones} job clone{'s' * (clones != 1)}", clone, clone, "use fewer jobs (numjobs=)"))
    queued = sum(max(j.get("iodepth", 1), 1) for j in jobs)
    queue = sum(max(j.get("iodepth", 1), 1) * _queued_bytes(j, core["targets"][j.get("target", 0)]["device"])
                for j in jobs)
    terms.append(Term("queue", f"{queued:,} I/Os the jobs may have queued (iodepth x job clones)", queue, 0,
                      "use a smaller iodepth= (a device takes a few hundred I/Os; the rest wait in the host)"))
    terms += _file_terms(core, labels)
    replays = sum(1 for j in jobs if j.get("replay") is not None)
    if replays:
        terms.append(Term("replay", f"read buffers of {replays} trace replay{'s' * (replays != 1)}",
                          replays * REPLAY_BYTES, 0))
    logs = _log_records(core)
    if logs:
        n = sum(c for c in logs.values() if c is not None)
        if n:
            terms.append(Term("I/O log", f"{n:,} I/O log records of {len(logs)} job clone{'s' * (len(logs) != 1)}",
                              n * LOG_RECORD_RUST_BYTES, n * LOG_RECORD_BYTES,
                              "average the job's log over windows (log_avg_msec=)"))
    interval = core.get("interval_ns")
    length, exact = run_length(core)
    samples = fewest = None
    if interval:
        samples = (length // interval + 1) if length is not None else None
        fewest = samples
        if not exact:
            shortest, _ = run_length(core, fastest=True)
            fewest = shortest // interval + 1 if shortest is not None else None
        if samples is not None:
            per = SAMPLE_BYTES + sum(_record_bytes(d) for d in records)
            what = (f"{samples:,} time-series samples{'' if exact else ' (estimated)'} x {len(records)} device "
                    f"record{'s' * (len(records) != 1)}, one every {format_time(interval)}")
            terms.append(Term("time series", what, samples * len(records) * SAMPLE_RUST_BYTES, samples * per,
                              "use a longer --interval"))
    known = [c for c in logs.values() if c is not None]
    top = max(logs, key=lambda k: logs[k] or 0) if logs else ""
    return Estimate(tuple(terms), samples=samples, samples_exact=exact, min_samples=fewest, length_ns=length,
                    interval_ns=interval, records_per_sample=len(records),
                    log_records=sum(known) if known else None, log_job=top)


def _file_terms(core: Mapping[str, Any], labels: Mapping[str, str]) -> list[Term]:
    """The page cache and the file systems, when jobs work on files: sized by the core from
    the run's own host and mkfs parameters (None from it: no job works on files); and each
    file set's entries, which the core keeps whether the files exist or not."""
    file_sets = core.get("file_sets") or []
    per_entry = [FILE_ENTRY_BYTES] * len(file_sets)
    for j in core["jobs"]:
        f = j.get("files")
        if f and f.get("program") is None and 0 <= f.get("set", -1) < len(file_sets):
            per_entry[f["set"]] += FILE_JOB_ENTRY_BYTES + (FILE_MAP_ENTRY_BYTES if _random_map_bytes(j, 0) else 0)
    def name(i: int, s: Mapping[str, Any]) -> str:
        where = labels.get(f"file_sets.{s.get('name', i)}")
        return f"file set '{s.get('name', i)}' ({where + ', ' if where else ''}{s['entries']:,} entries)"

    sets = [Term("file set", name(i, s), s["entries"] * each, 0, "give the set fewer entries (entries=, nrfiles=)")
            for i, (s, each) in enumerate(zip(file_sets, per_entry)) if isinstance(s.get("entries"), int)]
    return sets + _cache_terms(core)


def _cache_terms(core: Mapping[str, Any]) -> list[Term]:
    """The page cache and each file system, as the core sizes them."""
    import json

    from .. import _core

    try:
        raw = _core.file_memory(json.dumps(core))
    except ValueError:
        return []  # the run itself reports what is wrong with its file systems, in context
    m = json.loads(raw)
    if m is None:
        return []
    pages, budget = m["page_cache_pages"], m["page_cache_budget_pages"]
    bound = "" if pages == budget else f" (a page per file-system block; the RAM gives {gb(budget * 4096)})"
    terms = [Term("page cache", f"a page cache holding {gb(pages * 4096)} ({pages:,} pages){bound}, dirty pages "
                                "up to the limit", m["page_cache_bytes"], 0,
                  "give the host less memory (--host-set mem=SIZE): the cache is sized from its RAM")]
    for t, b in zip(core["targets"], m["filesystem_bytes"]):
        if b is not None:
            fs = t.get("filesystem") or {}
            terms.append(Term("file system", f"{fs.get('type', 'a file system')} on {t['name']} as mkfs leaves it "
                                             "(bitmaps and their index)", b, 0,
                              "make the file system smaller (filesystem size=) or its blocks larger",
                              device=t["name"]))
    return terms


def _log_records(core: Mapping[str, Any]) -> dict[str, int | None]:
    """I/O log records per logging job clone (by name): its I/Os for a per-I/O log, else
    three directions' lines per window of its run; None when not known (a job logged per
    I/O that a runtime may end, whose count is only guessed: the core bounds it)."""
    out: dict[str, int | None] = {}
    for j, ios in zip(core["jobs"], _clone_ios(core)):
        window = j.get("log_window_ns")
        if window is None:
            continue
        name = f"{j['name']}" + (f" (clone {j['clone']})" if j.get("clone") else "")
        if window == 0:
            # a runtime may end the job before its size does: then its count is only a bound
            exact = not j.get("time_based") and not j.get("runtime_ns") and j.get("replay") is None
            out[name] = int(ios) if ios is not None and exact else None
        elif j.get("runtime_ns"):
            out[name] = 3 * (j["runtime_ns"] // window + 1)
        else:
            out[name] = None
    return out


# ---- the limit -------------------------------------------------------------------------------

def mem_available() -> int | None:
    """MemAvailable from /proc/meminfo, bytes (None where there is none)."""
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return None


def memory_limit(value: str | int | float | None = None) -> tuple[int | None, str]:
    """The limit in bytes (None: no limit) and where it comes from, for messages. ``value``
    (``memory_limit=``, ``--memory-limit``) wins over ``$SSDLAB_MEMORY_LIMIT``, which wins over
    the default, :data:`DEFAULT_SHARE` of MemAvailable."""
    origin = "--memory-limit"
    if value is None:
        value = os.environ.get(ENV_VAR) or None
        origin = ENV_VAR
    if value is None:
        avail = mem_available()
        if avail is None:
            return None, "no limit (the machine's available memory is unknown)"
        return int(avail * DEFAULT_SHARE), f"{DEFAULT_SHARE:.0%} of the {gb(avail)} available"
    if isinstance(value, bool):
        raise UnitError(f"{origin} {value!r}: expected a memory limit: a size like 16GiB, a share like 90% or none")
    text = str(value).strip()
    if text.lower() in ("none", "off", "unlimited"):
        return None, f"no limit ({origin})"
    if text.endswith("%"):
        try:
            share = float(text[:-1]) / 100
        except ValueError:
            share = -1.0
        # a share of the memory available now: more than all of it is no limit at all (the
        # run would swap, or meet the OOM killer, before the watch stopped it)
        if not 0 < share <= 1:
            raise UnitError(f"{origin} {text!r}: expected a share of the available memory above 0% and at most"
                            " 100%, like 90%")
        avail = mem_available()
        if avail is None:
            return None, "no limit (the machine's available memory is unknown)"
        return int(avail * share), f"{text} of the {gb(avail)} available ({origin})"
    try:
        n = parse_size(value if isinstance(value, (int, float)) else text)
    except UnitError:
        raise UnitError(f"{origin} {text!r}: expected a memory limit: a size like 16GiB, a share like 90% or none"
                        ) from None
    if n <= 0:
        raise UnitError(f"{origin} {text!r}: expected a memory limit above 0 (or none)")
    return n, origin


def _nice_interval(ns: float) -> int:
    """The smallest of 1, 2, 5 x a power of ten (ns) at or above ``ns``."""
    p = 10 ** max(math.floor(math.log10(max(ns, 1))), 0)
    for m in (1, 2, 5, 10):
        if m * p >= ns:
            return int(m * p)
    return int(10 * p)


def _nice_scale(scale: float) -> float:
    """``scale`` rounded down to a power of two (1/2, 1/4, ...), at least 1/4096."""
    if scale >= 1:
        return 1.0
    return max(2.0 ** math.floor(math.log2(scale)), 1 / 4096)


def check(est: Estimate, limit: int | None, origin: str = "", *, asked_interval_ns: int | None = None,
          scales: Mapping[str, float] | None = None) -> None:
    """Raise :class:`MemoryLimitError` with a one-line message naming the cause and its remedy
    if the run takes more than :data:`MAX_SAMPLES` samples at an asked interval, or more
    memory than ``limit``. ``scales`` (device name -> simulated fraction) sharpens the
    suggested ``--scale``."""
    fewest = est.min_samples
    if asked_interval_ns and fewest is not None and fewest > MAX_SAMPLES and est.interval_ns:
        # A run whose length is a guess is refused only if it is too long at its fastest.
        length = (fewest - 1) * est.interval_ns
        smallest = _nice_interval(length / (MAX_SAMPLES - 1))
        run = f"a {format_time(length)} run" if est.samples_exact else f"a run of at least {format_time(length)} (at the devices' fastest)"
        some = "" if est.samples_exact else "at least "
        raise MemoryLimitError(
            f"--interval {format_time(asked_interval_ns)}: {run} would take {some}{fewest:,} time-series samples, "
            f"more than {MAX_SAMPLES:,}; use --interval {format_time(smallest)} or longer")
    if est.log_records is not None and est.log_records > MAX_LOG_RECORDS:
        raise MemoryLimitError(
            f"the jobs' I/O logs would take {est.log_records:,} records (most of them job '{est.log_job}'), "
            f"more than {MAX_LOG_RECORDS:,}: average the logs over windows (log_avg_msec=), or log a smaller run")
    if limit is None or est.total <= limit:
        return
    big = est.largest()
    remedy = _remedy(est, big, limit, scales, asked_interval_ns)
    phase = "while simulating" if est.sim_bytes >= est.result_bytes else "for its result"
    raise MemoryLimitError(
        f"this run needs about {gb(est.total)} of memory {phase}, more than the limit of {gb(limit)}"
        f" ({origin}); most of it is {big.what}, {gb(big.bytes)}: {remedy}"
        f"{'; or' if remedy else ';'} raise the limit with --memory-limit SIZE (or {ENV_VAR}, or memory_limit=)")


def guard_needed(core: Mapping[str, Any], est: Estimate, limit: int | None,
                 labels: Mapping[str, str] | None = None) -> Estimate | None:
    """Whether a run that ``est`` puts over ``limit`` may run under a watch of its resident
    memory instead of being refused: it ends when its rebuild is done, which stops its jobs
    at a time not known before it runs (the estimate counts their writes to the end of their
    size or runtime: for seed 004's writers, the array's end or a week), and without those
    writes it fits. The watch (``ssdlab.api.execute``) stops it if it passes the limit.
    Returns the estimate without the writes when so, else None."""
    if limit is None or est.total <= limit or core.get("until") != "rebuild-done":
        return None
    before = estimate(core, labels, writes=False)
    return before if before.total <= limit else None


def resident_bytes() -> int | None:
    """This process's resident set, bytes (None where the system does not say)."""
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return None


def check_threads(count: int, limit: int | None, origin: str = "") -> None:
    """Raise :class:`MemoryLimitError` if ``count`` job clones (a file workload's thread
    instances) alone take more than ``limit``: checked before they are made."""
    need = count * CLONE_BYTES
    if limit is not None and need > limit:
        raise MemoryLimitError(
            f"{count:,} threads need about {gb(need)} of memory ({gb(CLONE_BYTES)} each), more than the limit of "
            f"{gb(limit)} ({origin}): run fewer instances; or raise the limit with --memory-limit SIZE "
            f"(or {ENV_VAR}, or memory_limit=)")


def _remedy(est: Estimate, big: Term, limit: int, scales: Mapping[str, float] | None,
            asked_interval_ns: int | None = None) -> str:
    """What to change so that ``est`` fits ``limit``, with a number where one can be given."""
    remedy = big.remedy
    if big.kind == "flash map":
        ftl = sum(t.sim_bytes for t in est.terms if t.kind == "flash map")
        rest = est.sim_bytes - ftl
        current = min((scales or {}).values(), default=1.0)
        if limit > rest and ftl:
            s = _nice_scale(current * (limit - rest) / ftl * 0.9)
            need = rest + ftl * s / current
            remedy = f"simulate a fraction of the flash with --scale {s:g} (about {gb(need)})"
    elif big.kind == "time series" and not asked_interval_ns:
        remedy = "make the run shorter (runtime=, size=)"
    elif big.kind == "time series" and est.samples and est.interval_ns and est.length_ns:
        other = est.result_bytes - big.result_bytes
        room = max(limit - other, 1)
        per_sample = big.result_bytes / est.samples
        fits = max(int(room / per_sample) - 1, 1)
        remedy = f"use --interval {format_time(_nice_interval(est.length_ns / fits))} or longer"
    return remedy


def warning(est: Estimate, scales: Mapping[str, float] | None = None) -> str | None:
    """A word for a run that is allowed but large (over :data:`WARN_BYTES`)."""
    if est.total < WARN_BYTES:
        return None
    big = est.largest()
    remedy = _remedy(est, big, WARN_BYTES, scales)
    return (f"this run needs about {gb(est.total)} of memory, most of it {big.what} ({gb(big.bytes)})"
            + (f"; to need less, {remedy}" if remedy else ""))
