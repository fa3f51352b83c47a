"""Resolved workload: what the Rust core needs to generate I/O for one job clone.

The fio parser (``ssdlab.fio``) turns a job file into a list of :class:`JobSpec`, one per
clone (``numjobs`` already expanded). Everything here is resolved: sizes in bytes, times in
nanoseconds, offsets absolute on the simulated device. The core deserialises exactly these
field names (``crates/ssdlab-core/src/workload/spec.rs``), so both sides change together.
"""

from __future__ import annotations

from dataclasses import dataclass

from typing import Any

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_serializer, model_validator

Direction = Literal["read", "write", "trim"]

RwMode = Literal[
    "read", "write", "trim",
    "randread", "randwrite", "randtrim",
    "rw", "randrw",
    "trimwrite", "randtrimwrite",
]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class BlockSizeDist(_Strict):
    """Block sizes of one direction: weighted sizes (``bs``/``bssplit``) or a range (``bsrange``).

    ``split`` holds ``(size_bytes, weight)`` pairs; weights are percentages summing to 100.
    ``range_min``/``range_max`` set: a uniform choice among multiples of ``range_min``.
    """

    split: list[tuple[int, float]] = Field(default_factory=list)
    range_min: int | None = None
    range_max: int | None = None

    @model_validator(mode="after")
    def _one_form(self) -> "BlockSizeDist":
        ranged = self.range_min is not None or self.range_max is not None
        if ranged == bool(self.split):
            raise ValueError("give either split or range_min/range_max")
        if ranged and (self.range_min is None or self.range_max is None):
            raise ValueError("range needs both ends")
        return self

    @property
    def max_size(self) -> int:
        if self.split:
            return max(size for size, _ in self.split)
        assert self.range_max is not None
        return self.range_max

    @property
    def min_size(self) -> int:
        if self.split:
            return min(size for size, _ in self.split)
        assert self.range_min is not None
        return self.range_min


class Zone(_Strict):
    """One zone of ``random_distribution=zoned``: share of accesses to a share of the region."""

    access_pct: float
    size_pct: float


class Distribution(_Strict):
    """Offset distribution of random I/O (fio's ``random_distribution``)."""

    kind: Literal["random", "zipf", "pareto", "normal", "zoned"] = "random"
    # zipf: theta; pareto: h; normal: standard deviation in % of the region.
    param: float = 0.0
    zones: list[Zone] = Field(default_factory=list)


class ReplayTiming(_Strict):
    """When a replayed record is issued: at its trace time, at it divided by ``speed``, or as
    fast as the job's iodepth allows."""

    kind: Literal["recorded", "scaled", "closed"] = "recorded"
    speed: float | None = Field(default=None, gt=0, allow_inf_nan=False)

    @model_validator(mode="after")
    def _speed(self) -> "ReplayTiming":
        if (self.kind == "scaled") != (self.speed is not None):
            raise ValueError("a speed goes with kind 'scaled' only")
        return self

    @classmethod
    def parse(cls, text: str) -> "ReplayTiming":
        """``recorded``, ``scaled:X`` (X times as fast) or ``closed``."""
        kind, _, arg = text.strip().partition(":")
        if kind == "scaled":
            try:
                return cls(kind="scaled", speed=float(arg))
            except (ValueError, ValidationError):
                raise ValueError(f"timing {text!r}: expected scaled:X with X a positive, finite factor") from None
        if kind in ("recorded", "closed") and not arg:
            return cls(kind=kind)
        raise ValueError(f"timing {text!r}: expected recorded, scaled:X or closed")

    def core(self) -> dict:
        return {"kind": self.kind, "speed": self.speed} if self.kind == "scaled" else {"kind": self.kind}


class Replay(_Strict):
    """A job's I/O from a block trace (fio's read_iolog, ``ssdlab replay``)."""

    path: str
    format: Literal["fio", "disksim", "msr", "snia", "blkparse"]
    timing: ReplayTiming = Field(default_factory=ReplayTiming)
    device: int | None = Field(default=None, ge=0, description="only this device id of the trace")
    wrap: bool = False
    disksim_time_unit: Literal["ns", "ms"] = "ns"

    @field_serializer("timing")
    def _timing(self, t: ReplayTiming) -> dict:
        return t.core()


#: the latest time a replayed record may be due, ns (``workload/replay.rs`` ``MAX_DUE_NS``)
MAX_DUE_NS = 1 << 63
#: skipped lines worth a word: the others (blank lines, comments, headers, file actions,
#: events of other actions or without data) are what the formats hold besides records
_DAMAGE = ("not-an-event",)


@dataclass(frozen=True)
class TraceMix:
    """What a replay sends, as fio's job header says it: ``rw`` (read, write or trim, or fio's
    ``rw`` for a mix) and each direction's (smallest, largest) length in bytes (0, 0 for a
    direction it does not send)."""

    rw: str
    lengths: tuple[tuple[int, int], tuple[int, int], tuple[int, int]]


def _mix(ops: dict[int, list[tuple[int, int, int]]], device: int | None) -> TraceMix:
    """The mix of ``device``'s records (None: all devices')."""
    per = [(0, 0, 0)] * 3
    for dev, dirs in ops.items():
        if device is not None and dev != device:
            continue
        per = [(a[0] + b[0], min(a[1], b[1]) if a[0] and b[0] else (a[1] if a[0] else b[1]), max(a[2], b[2]))
               for a, b in zip(per, dirs)]
    sent = [name for name, (n, _, _) in zip(("read", "write", "trim"), per) if n]
    rw = sent[0] if len(sent) == 1 else "rw" if sent else "read"
    lengths = tuple((lo, hi) for _, lo, hi in per)
    return TraceMix(rw, lengths)  # type: ignore[arg-type]


def survey(replay: Replay) -> tuple[dict[int | None, int], str, list[str], TraceMix]:
    """Read the trace ``replay`` names to its end, before it is replayed: its records per
    device (``None``: all of them), a line saying what was read and skipped, warnings (lines
    that look damaged) and what it sends (of ``replay.device``, or of all). A trace with no record to replay (empty, none of the format,
    none of ``replay.device``), a bad record or a time past the simulated clock raises
    ValueError naming the file (and the line)."""
    from . import _core

    s = _core.trace_summary(replay.path, replay.format, replay.disksim_time_unit)
    if s["error"] is not None:
        raise ValueError(s["error"])
    path = replay.path
    skipped = [(kind, what, n, first) for kind, what, n, first in s["skipped"]]
    said = "; ".join(f"{n:,} {what}, first on line {first}" for _, what, n, first in skipped)
    if not s["records"]:
        why = "an empty file" if not s["lines"] else f"{s['lines']:,} lines: {said}"
        raise ValueError(f"{path}: no records to replay ({why}); expected a trace in {replay.format} format")
    devices: dict[int | None, int] = {None: s["records"], **s["devices"]}
    if replay.device is not None and not s["devices"].get(replay.device):
        have = ", ".join(f"{d} ({n:,} record{'s' * (n != 1)})" for d, n in s["devices"].items())
        raise ValueError(f"{path}: no records of device {replay.device} (its devices: {have})")
    t = s["last_time_ns"]
    due = t / replay.timing.speed if replay.timing.kind == "scaled" else t if replay.timing.kind == "recorded" else 0
    if due >= MAX_DUE_NS:
        at = f", at scaled:{replay.timing.speed:g} {due:.4e} ns," if replay.timing.kind == "scaled" else ""
        raise ValueError(f"{path}:{s['last_time_line']}: timestamp: {t} ns after the first record{at} is past the "
                         f"end of the simulated clock ({MAX_DUE_NS} ns, about 292 years); the trace's times may be "
                         "in another unit (--disksim-unit), or use --timing closed:QD to ignore them")
    line = f"{path}: {s['records']:,} records read"
    if replay.device is not None:
        line += f", {s['devices'][replay.device]:,} of them of device {replay.device}"
    if skipped:
        line += f"; lines skipped: {said}"
    warnings = [f"{path}: line {first}, among its records, is one of {n:,} lines {what}: skipped"
                for kind, what, n, first in skipped if kind in _DAMAGE and first < s["last_record_line"]]
    if replay.device is None and len(s["devices"]) > 1:
        ids = sorted(s["devices"])
        shown = ", ".join(map(str, ids[:8])) + (", …" if len(ids) > 8 else "")
        warnings.append(f"{path}: records of {len(ids)} devices (ids {shown}) all replay on one target; "
                        "--map ID=TARGET replays each on its own")
    return devices, line, warnings, _mix(s.get("ops", {}), replay.device)


class JobSpec(_Strict):
    """One job clone, fully resolved. Times in ns, sizes in bytes."""

    name: str
    target: int = 0  # the system's device this clone addresses (index; filename=/dev/NAME)
    clone: int = 0  # subjob index within numjobs
    group_id: int = 0  # reporting group (new_group / stonewall start a new one)
    seed: int = 0  # per-clone RNG seed (randrepeat/randseed already applied)
    # Ordering: indices (into the job list) of jobs that must finish before this one starts.
    start_after: list[int] = Field(default_factory=list)
    start_delay_ns: int = 0

    rw: RwMode = "read"
    rw_modifier: int = 0  # rw=X:N; random: new offset every N I/Os; sequential: add N bytes
    rwmix_read: float = 50.0  # percent of reads in mixed modes
    block_sizes: tuple[BlockSizeDist, BlockSizeDist, BlockSizeDist]  # read, write, trim
    block_align: tuple[int, int, int]  # ba per direction (bytes)
    iodepth: int = 1
    # I/Os submitted at once (fio's iodepth_batch_submit; 0: iodepth); a batch of more than
    # two enters the block layer under one plug, where contiguous bios merge.
    iodepth_batch_submit: int = 1
    # fio's engine completes each I/O in its submit call (psync, null at depth 1): fio times
    # the call as clat and keeps no slat.
    sync_engine: bool = False
    null_engine: bool = False  # fio's null engine: each I/O done once submitted, no device

    region_offset: int = 0  # absolute byte offset of this clone's region on the device
    region_size: int  # bytes addressed by this clone
    io_limit: int  # bytes to transfer per loop (io_size, default region_size)
    loops: int = 1
    number_ios: int | None = None
    runtime_ns: int | None = None
    time_based: bool = False
    ramp_time_ns: int = 0

    thinktime_ns: int = 0
    thinktime_blocks: int = 1
    rate_bytes: tuple[int, int, int] = (0, 0, 0)  # per direction, 0 = unlimited
    rate_iops: tuple[int, int, int] = (0, 0, 0)
    rate_process: Literal["linear", "poisson"] = "linear"
    fsync_every: int = 0  # issue a flush after every N writes (fsync or fdatasync)

    random_map: bool = True  # False with norandommap
    distribution: Distribution = Field(default_factory=Distribution)
    replay: Replay | None = None  # I/O from a trace instead of the generator
    # What the core observes for fio's report (nothing here changes the simulation): the
    # bandwidth and IOPS sampling windows (0: a sample per I/O), and an I/O log kept per I/O
    # (0) or per window of this many ns (None: no log).
    bw_window_ns: int = 500_000_000
    iops_window_ns: int = 500_000_000
    log_window_ns: int | None = None
    # File work: the core's FileAccess (its file set, direct or through the page cache, fio's
    # file service or a program of file operations); None: the job addresses its device.
    files: dict[str, Any] | None = None

    @model_validator(mode="after")
    def _sane(self) -> "JobSpec":
        if self.region_size <= 0:
            raise ValueError("region_size must be positive")
        if self.iodepth < 1:
            raise ValueError("iodepth must be >= 1")
        return self
