"""A system: one host and the devices behind it, described in TOML or by a profile alone.

    host = "xeon-x5650-ubuntu1404"      # optional: a host profile (default: the first
                                        # drive's calibration host)
    [[drive]]
    name = "sda"                        # fio's filename=/dev/sda selects it
    profile = "samsung-850-pro"         # a built-in profile name or a profile TOML path
    # optional per drive: scale = 0.1, precondition = "random:2",
    # profile_set = { "thermal.ambient_temperature" = "40" }, scheduler = "cfq",
    # iosched = { slice_idle = 0 }, queue = { nomerges = 2 }  (sysfs names and units),
    # filesystem = "ext4" or { type = "ext3", mkfs = "-b 4096 -i 65536 -J size=128",
    #                          mount = "commit=5,barrier=0", size = "32g" }  (ssdlab.mkfs)

    [[array]]                           # optional: drives joined into an array
    name = "md0"                        # fio's filename=/dev/md0 selects it
    level = 5                           # 0, 1, 10, 5 or 6
    chunk = "64k"                       # default 512 KiB, as mdadm
    engine = "md"                       # a built-in engine or an engine TOML path
    members = ["sda", "sdb", "sdc", "sdd"]
    # optional: engine_set = { stripe_cache_size = 4096 },
    # fail = [{ member = "sdb", at = "10s" }], filesystem = ... (as a drive's; not on a member)

    [[remap]]                           # optional: a write-remapping layer over one drive
    name = "mft0"                       # (seed 000's MFT; docs/remap.md)
    drive = "sdb"
    # optional: buffer = "64m", segment = "1m", reserve = 0.1, honor_flush = false,
    # copy_rate = "2g" (bytes/s), max_age = "5s", filesystem = ... (as a drive's)

The host's targets are the arrays, then the remapping layers, then the drives in neither; a
job without a ``filename`` uses the first. Profile, host and engine paths (``*.toml``) are relative to the
system file. Every mistake is an error naming the file, the line and the key as written.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from .arguments import InputFileError, read_toml
from .config import ProfileError, load_engine, load_host
from .config.profile import _describe, device_core, engine_place, place, value_key
from .config.tomlpos import toml_text
from .mkfs import MkfsError, TargetFs, request as fs_request
from .iosched import SCHEDULERS, SchedulerError, queue_core, scheduler_core
from .units import UnitError, parse_size, parse_time_ns

DEVICE_NAME = r"^[A-Za-z][A-Za-z0-9_.\-]*$"


class SystemFileError(ValueError):
    """A system description that cannot be used; the message names file:line and key."""


class DriveEntry(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)

    name: str = Field(pattern=DEVICE_NAME, description="device name, as in /dev/NAME")
    profile: str = Field(min_length=1, description="built-in profile name or profile TOML path")
    # strict: true was taken as 1 (the whole drive, without a word)
    scale: float | None = Field(default=None, gt=0, le=1, strict=True, description="fraction of the flash simulated")
    precondition: str | None = Field(default=None, description="none | sequential | random[:PASSES]")
    profile_set: dict[str, str | int | float | bool] = Field(default_factory=dict,
                                                            description="profile keys overridden")
    scheduler: str = Field(default="none", description="none | mq-deadline | kyber | bfq | noop | deadline | anticipatory | cfq")
    iosched: dict[str, int | str | bool] = Field(default_factory=dict,
                                                 description="scheduler tunables, sysfs names and units")
    queue: dict[str, int | str] = Field(default_factory=dict, description="nomerges, max_sectors_kb, max_segments, nr_requests, read_ahead_kb")
    filesystem: Any = Field(default=None, description="ext3 | ext4, or { type, mkfs, mount, size } (ssdlab.mkfs)")

    @field_validator("scheduler")
    @classmethod
    def _known_scheduler(cls, v: str) -> str:
        if v not in SCHEDULERS:
            raise ValueError(f"expected one of {', '.join(SCHEDULERS)}")
        return v


LEVELS = (0, 1, 10, 5, 6)
DEFAULT_CHUNK = 512 * 1024  # mdadm's default chunk


class FailureEntry(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)

    member: str
    at: str | int | float = Field(description="time from the run's start (bare numbers: seconds); required")


class ArrayEntry(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)

    name: str = Field(pattern=DEVICE_NAME, description="device name, as in /dev/NAME")
    level: int = Field(strict=True, description="RAID level: 0, 1, 10, 5 or 6")
    chunk: str | int = Field(default=DEFAULT_CHUNK, description="chunk size")
    engine: str = Field(default="md", min_length=1, description="built-in engine name or engine TOML path")
    members: list[str] = Field(min_length=1)
    spares: list[str] = Field(default_factory=list)
    engine_set: dict[str, str | int | float | bool] = Field(default_factory=dict, description="engine keys overridden")
    fail: list[FailureEntry] = Field(default_factory=list)
    filesystem: Any = Field(default=None, description="ext3 | ext4, or { type, mkfs, mount, size } (ssdlab.mkfs)")
    verify_data: bool = Field(default=False, description="members hold real bytes; every read is checked (small md and streaming arrays)")
    read_ahead_kb: int | None = Field(default=None, ge=0, le=1 << 20, strict=True,
                                      description="the array's own read_ahead_kb (/sys/block/NAME/queue/); unset: "
                                                  "the host's, raised by md to twice the stripe")

    @field_validator("level")
    @classmethod
    def _known_level(cls, level: int) -> int:
        if level not in LEVELS:
            raise ValueError(f"RAID level {level}: expected one of 0, 1, 10, 5, 6")
        return level

    @field_validator("chunk", mode="before")
    @classmethod
    def _chunk_not_bool(cls, chunk: Any) -> Any:
        if isinstance(chunk, bool):  # taken as 1 (then "chunk 1: expected a positive multiple")
            raise ValueError(f"{toml_text(chunk)}: expected a size, as \"64k\"")
        return chunk

    @field_validator("chunk")
    @classmethod
    def _chunk_size(cls, chunk: str | int) -> int:
        try:
            n = parse_size(chunk)
        except UnitError as e:
            raise ValueError(str(e)) from None
        if n <= 0 or n % 4096:
            raise ValueError(f"chunk {toml_text(chunk)}: expected a positive multiple of 4 KiB (md's page)")
        return n


class RemapEntry(BaseModel):
    """A write-remapping layer (seed 000's MFT). The defaults are assumed, as MFT's own were
    not published: each says why in docs/remap.md."""

    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False, validate_default=True)

    name: str = Field(pattern=DEVICE_NAME, description="device name, as in /dev/NAME")
    drive: str = Field(min_length=1, description="the drive underneath")
    buffer: str | int = Field(default="64m", description="RAM buffer writes are acknowledged from")
    segment: str | int = Field(default="1m", description="bytes the log writes at once")
    reserve: float = Field(default=0.1, gt=0, lt=0.9, description="share of the drive kept free for the log")
    honor_flush: bool = Field(default=False, description="pass cache flushes on (MFT did not)")
    copy_rate: str | int = Field(default="2g", description="host memory copy rate, bytes per second")
    max_age: str | int | float = Field(default="5s", description="buffered data older than this is written")
    filesystem: Any = Field(default=None, description="ext3 | ext4, or { type, mkfs, mount, size } (ssdlab.mkfs)")

    @field_validator("buffer", "segment", "copy_rate")
    @classmethod
    def _size(cls, v: str | int) -> int:
        try:
            n = parse_size(v)
        except UnitError as e:
            raise ValueError(str(e)) from None
        if n <= 0:
            raise ValueError(f"{toml_text(v)}: expected a positive size")
        return n

    @field_validator("max_age")
    @classmethod
    def _time(cls, v: str | int | float) -> int:
        try:
            n = parse_time_ns(v if isinstance(v, str) else f"{v}s")
        except UnitError as e:
            raise ValueError(str(e)) from None
        if n <= 0:
            raise ValueError(f"{toml_text(v)}: expected a positive time")
        return n


class SystemFile(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)

    host: str | None = None
    drive: list[DriveEntry] = Field(min_length=1)
    array: list[ArrayEntry] = Field(default_factory=list)
    remap: list[RemapEntry] = Field(default_factory=list)

    @field_validator("drive")
    @classmethod
    def _names_once(cls, drives: list[DriveEntry]) -> list[DriveEntry]:
        seen: set[str] = set()
        for d in drives:
            if d.name in seen:
                raise ValueError(f"device name '{d.name}' is used twice")
            seen.add(d.name)
        return drives


@dataclass(frozen=True)
class IoOverride:
    """A scheduler and settings for every drive of a run (``--scheduler``, ``--host-set``)."""

    scheduler: str | None = None
    iosched: dict[str, Any] = field(default_factory=dict)
    queue: dict[str, Any] = field(default_factory=dict)


@dataclass
class Drive:
    """One drive of a system, resolved: its profile and the description the core runs."""

    name: str
    profile: Any  # an SsdProfile, InPlaceProfile or HddProfile
    sources: dict[str, str]
    core: dict[str, Any]
    scale: float
    precondition: str | dict[str, Any] | None = None
    scheduler: str = "none"
    #: Scheduler tunables and queue settings, by their sysfs names and in sysfs units.
    iosched: dict[str, Any] = field(default_factory=dict)
    queue: dict[str, Any] = field(default_factory=dict)
    #: The file system the system file makes on it (None: none, or the run's).
    filesystem: TargetFs | None = None

    def target_core(self, io: IoOverride | None = None) -> dict[str, Any]:
        """The core's description of this drive as a target or an array member; ``io``
        (the command line's ``--scheduler`` and ``--host-set``) wins over the drive's own."""
        name, iosched, queue = self.scheduler, self.iosched, self.queue
        if io is not None:
            if io.scheduler is not None and io.scheduler != name:
                name, iosched = io.scheduler, {}
            iosched = {**iosched, **io.iosched}
            queue = {**queue, **io.queue}
        return {"name": self.name, "device": self.core, "scheduler": scheduler_core(name, iosched),
                "queue": queue_core(queue), "precondition": parse_precondition(self.precondition)}


@dataclass
class Array:
    """An array of drives, resolved: level, chunk, engine and members as the core runs them."""

    name: str
    level: int
    chunk: int
    engine: Any  # an MdEngine
    engine_sources: dict[str, str]
    members: list[Drive]
    spares: list[Drive] = field(default_factory=list)
    failures: list[tuple[str, int]] = field(default_factory=list)  # (member, ns from the start)
    #: Stop a rebuild after this many bytes of the replacement (a sample to extrapolate).
    rebuild_limit: int | None = None
    #: Members hold real bytes, parity is computed and every read checked (small arrays).
    verify_data: bool = False
    #: The chunk was asked for, not md's default (RAID 1 ignores it: worth a word).
    chunk_given: bool = False
    #: The file system the system file makes on it (None: none, or the run's).
    filesystem: TargetFs | None = None
    #: The array's own read_ahead_kb (None: the kernel's, twice the stripe on md).
    read_ahead_kb: int | None = None

    def core(self, io: IoOverride | None = None) -> dict[str, Any]:
        """The core's description of the array (its members' and spares' inside)."""
        return {
            "kind": "array",
            "level": f"raid{self.level}",
            "chunk_bytes": self.chunk,
            "engine": self.engine.to_core(self.nominal_member_bytes),
            "members": [d.target_core(io) for d in self.members],
            "failures": [{"member": m, "at_ns": at} for m, at in self.failures],
            "spares": [d.target_core(io) for d in self.spares],
            "rebuild_limit_bytes": self.rebuild_limit,
            "verify_data": self.verify_data,
        }

    @property
    def nominal_member_bytes(self) -> float:
        """The smallest member's size as the real drive has it (not as simulated, scaled):
        what mdadm would have seen when it created the array."""
        return min(d.core["capacity_bytes"] / d.scale for d in self.members)

    @property
    def member_bytes(self) -> int:
        """Bytes of each member the array uses: whole chunks, less md's write-intent bitmap's
        pages (one bit per bitmap chunk, kept past the data as the core places them)."""
        smallest = min(d.core["capacity_bytes"] for d in self.members)
        bitmap_chunk = self.core()["engine"].get("bitmap_chunk_bytes", 0) if self.level != 0 else 0
        if bitmap_chunk:
            bits = -(-smallest // bitmap_chunk)
            smallest -= -(-bits // (8 * 4096)) * 4096
        return smallest // self.chunk * self.chunk

    @property
    def capacity(self) -> int:
        from . import _core

        return _core.device_capacity(json.dumps(self.core()))


@dataclass
class Remap:
    """A write-remapping layer over one drive, resolved (``[[remap]]``)."""

    name: str
    drive: Drive
    buffer_bytes: int
    segment_bytes: int
    reserve: float
    honor_flush: bool
    copy_bytes_per_s: float
    max_age_ns: int
    filesystem: TargetFs | None = None

    @property
    def members(self) -> list[Drive]:
        return [self.drive]

    @property
    def spares(self) -> list[Drive]:
        return []

    def core(self, io: IoOverride | None = None) -> dict[str, Any]:
        """The core's description of the layer (its drive's inside)."""
        return {
            "kind": "remap",
            "member": self.drive.target_core(io),
            "buffer_bytes": self.buffer_bytes,
            "segment_bytes": self.segment_bytes,
            "reserve": self.reserve,
            "honor_flush": self.honor_flush,
            "copy_bytes_per_s": float(self.copy_bytes_per_s),
            "max_age_ns": self.max_age_ns,
        }

    @property
    def capacity(self) -> int:
        from . import _core

        return _core.device_capacity(json.dumps(self.core()))


Target = Drive | Array | Remap


@dataclass
class System:
    drives: list[Drive]
    host: str | None = None  # None: the first drive's calibration host
    origin: str = "<system>"
    arrays: list[Array] = field(default_factory=list)
    remaps: list[Remap] = field(default_factory=list)
    #: A /dev name the system lacks is an error (a system file); otherwise every /dev name
    #: means the one target (``--profile`` or ``--raid`` alone, for fio's example job files).
    strict: bool = True

    @property
    def targets(self) -> list[Target]:
        """The devices the host addresses: the arrays, the remapping layers, then the drives
        in neither."""
        joined = {d.name for a in (*self.arrays, *self.remaps) for d in (*a.members, *a.spares)}
        return [*self.arrays, *self.remaps, *(d for d in self.drives if d.name not in joined)]

    @property
    def names(self) -> list[str]:
        return [t.name for t in self.targets]

    @property
    def members(self) -> dict[str, str]:
        """Array member (and spare), or a remapping layer's drive -> its array or layer."""
        return {d.name: a.name for a in (*self.arrays, *self.remaps) for d in (*a.members, *a.spares)}


def default_device_name(core: dict[str, Any]) -> str:
    """The name Linux gives the first drive of its interface: sda (SATA) or nvme0n1."""
    return "sda" if core["interface"]["kind"] == "sata" else "nvme0n1"


def single(profile: str | Path, *, profile_set: dict[str, str] | None = None, scale: float | None = None,
           precondition: str | dict[str, Any] | None = None) -> System:
    """The one-drive system that ``--profile NAME`` stands for."""
    parse_precondition(precondition)
    prof, sources, core, eff = device_core(profile, profile_set or None, scale)
    name = default_device_name(core)
    return System([Drive(name, prof, sources, core, eff, precondition)], origin=f"profile '{profile}'", strict=False)


def load_system(path: str | Path, *, scale: float | None = None, precondition: str | dict[str, Any] | None = None,
                profile_set: dict[str, str] | None = None) -> System:
    """A system file. ``scale``, ``precondition`` and ``profile_set`` given here apply to
    every drive that does not set its own (the command line's options), except that
    ``precondition`` leaves an array's spares new, as a replacement drive is."""
    p = Path(path)
    if p.is_dir():
        raise SystemFileError(f"{p}: is a directory, not a system file")
    if not p.is_file():
        raise SystemFileError(f"{p}: no such system file")
    origin = str(p)
    try:
        text, data = read_toml(p)
    except InputFileError as e:
        raise SystemFileError(str(e)) from None
    try:
        sf = SystemFile.model_validate(data)
    except ValidationError as e:
        raise SystemFileError(_describe(e, origin, text)) from None
    spares = {name for a in sf.array for name in a.spares}
    drives = []
    for i, d in enumerate(sf.drive):
        ref = d.profile
        if ref.endswith(".toml") and not Path(ref).is_absolute():
            ref = str(p.parent / ref)
        sets = {**(profile_set or {}), **{k: str(v) for k, v in d.profile_set.items()}}
        try:
            prof, sources, core, eff = device_core(ref, sets or None, d.scale if d.scale is not None else scale)
        except ProfileError as e:
            where = place(origin, text, ("drive", i, "profile"))
            raise SystemFileError(f"{where}: drive '{d.name}': {e}") from None
        pre = d.precondition if d.precondition is not None else None if d.name in spares else precondition
        try:
            parse_precondition(pre)
        except ValueError as e:
            raise SystemFileError(f"{place(origin, text, ('drive', i, 'precondition'))}: {e}") from None
        drive = Drive(d.name, prof, sources, core, eff, pre, d.scheduler, dict(d.iosched), dict(d.queue))
        try:
            drive.target_core()
        except SchedulerError as e:
            key = "queue" if str(e).startswith("queue.") else "iosched"
            raise SystemFileError(f"{place(origin, text, ('drive', i, key))}: drive '{d.name}': {e}") from None
        drives.append(drive)
    arrays = [_load_array(a, i, drives, sf, origin, text, p.parent) for i, a in enumerate(sf.array)]
    members = {m: a.name for a in sf.array for m in (*a.members, *a.spares)}
    remaps = [_load_remap(r, i, drives, members, sf, origin, text) for i, r in enumerate(sf.remap)]
    members.update({r.drive.name: r.name for r in remaps})
    for i, (d, entry) in enumerate(zip(drives, sf.drive)):
        if entry.filesystem is not None and d.name in members:
            raise SystemFileError(f"{place(origin, text, ('drive', i, 'filesystem'))}: drive '{d.name}' is under "
                                  f"'{members[d.name]}': make the file system on /dev/{members[d.name]}")
        d.filesystem = _target_fs(entry.filesystem, ("drive", i), d.name, d.core["capacity_bytes"], origin, text)
    for i, (a, entry) in enumerate(zip(arrays, sf.array)):
        a.filesystem = _target_fs(entry.filesystem, ("array", i), a.name, a.capacity, origin, text)
    for i, (r, rentry) in enumerate(zip(remaps, sf.remap)):
        r.filesystem = _target_fs(rentry.filesystem, ("remap", i), r.name, r.capacity, origin, text)
    host = sf.host
    if host is not None:
        if host.endswith(".toml") and not Path(host).is_absolute():
            host = str(p.parent / host)
        try:
            load_host(host)
        except ProfileError as e:
            raise SystemFileError(f"{place(origin, text, ('host',))}: {e}") from None
    return System(drives, host=host, origin=origin, arrays=arrays, remaps=remaps)


def with_remap(sysd: System, drive: str | None = None, name: str = "mft0", **options: Any) -> System:
    """``sysd`` with a remapping layer over ``drive`` (default: the first drive); ``options``
    as a system file's ``[[remap]]`` keys (``buffer="64m"``, ``honor_flush=True``, ...)."""
    target = drive or sysd.drives[0].name
    by_name = {d.name: d for d in sysd.drives}
    if target not in by_name:
        raise ValueError(f"remap: no drive '{target}' in the system")
    if target in sysd.members:
        raise ValueError(f"remap: drive '{target}' is already under '{sysd.members[target]}'")
    try:
        e = RemapEntry(name=name, drive=target, **options)
    except ValidationError as err:
        first = err.errors()[0]
        raise ValueError(f"remap: {'.'.join(map(str, first['loc']))}: {first['msg']}") from None
    layer = Remap(e.name, by_name[target], int(e.buffer), int(e.segment), e.reserve, e.honor_flush,
                  float(e.copy_rate), int(e.max_age))
    from . import _core

    problem = _core.check_device(json.dumps(layer.core()))
    if problem is not None:
        raise ValueError(f"remap: {problem[0]}: {problem[1]}")
    return replace(sysd, remaps=[*sysd.remaps, layer])


def _load_remap(r: RemapEntry, i: int, drives: list[Drive], taken: dict[str, str], sf: SystemFile,
                origin: str, text: str) -> Remap:
    """Resolve remapping layer ``r`` (the ``i``-th) against the system's drives."""
    def where(*key: str | int) -> str:
        return place(origin, text, ("remap", i, *key))

    names = {d.name for d in drives} | {a.name for a in sf.array} | {x.name for x in sf.remap[:i]}
    if r.name in names:
        raise SystemFileError(f"{where('name')}: device name '{r.name}' is used twice")
    by_name = {d.name: d for d in drives}
    if r.drive not in by_name:
        raise SystemFileError(f"{where('drive')}: remap '{r.name}': no drive '{r.drive}' in the system")
    earlier = {x.drive: x.name for x in sf.remap[:i]}
    owner = taken.get(r.drive) or earlier.get(r.drive)
    if owner is not None:
        raise SystemFileError(f"{where('drive')}: drive '{r.drive}' is already under '{owner}'")
    layer = Remap(r.name, by_name[r.drive], int(r.buffer), int(r.segment), r.reserve, r.honor_flush,
                  float(r.copy_rate), int(r.max_age))
    from . import _core

    problem = _core.check_device(json.dumps(layer.core()))
    if problem is not None:
        key, message = problem
        raise SystemFileError(f"{where()}: remap '{r.name}': {key}: {message}")
    return layer


def _target_fs(raw: Any, loc: tuple, name: str, capacity: int, origin: str, text: str) -> TargetFs | None:
    """A drive's or array's ``filesystem`` (ssdlab.mkfs), checked now against its device."""
    if raw is None:
        return None
    at = place(origin, text, (*loc, "filesystem"))
    places = {k: place(origin, text, (*loc, "filesystem", k)) if isinstance(raw, dict) and k in raw else at
              for k in ("type", "mkfs", "mount", "size")}
    try:
        req = fs_request(raw)
    except MkfsError as e:
        raise SystemFileError(f"{places.get(e.key, at)}: /dev/{name}: filesystem.{e.key}: {e}") from None
    fs = TargetFs(req, capacity, name, places)
    try:
        fs.parse()
    except ValueError as e:
        raise SystemFileError(str(e)) from None
    return fs


def _load_array(a: ArrayEntry, i: int, drives: list[Drive], sf: SystemFile, origin: str, text: str,
                base: Path) -> Array:
    """Resolve array ``a`` (the ``i``-th) against the system's drives."""
    def where(*key: str | int) -> str:
        return place(origin, text, ("array", i, *key))

    by_name = {d.name: d for d in drives}
    if a.name in by_name:
        raise SystemFileError(f"{where('name')}: device name '{a.name}' is used twice (a drive has it)")
    if a.name in {x.name for x in sf.array[:i]}:
        raise SystemFileError(f"{where('name')}: device name '{a.name}' is used twice")
    taken = {m: x.name for x in sf.array[:i] for m in (*x.members, *x.spares)}
    for key in ("members", "spares"):
        names = getattr(a, key)
        for m in names:
            if m not in by_name:
                raise SystemFileError(f"{where(key)}: '{m}' is not a drive of the system "
                                      f"(drives: {', '.join(by_name)})")
            if m in taken:
                raise SystemFileError(f"{where(key)}: drive '{m}' is already in array '{taken[m]}'")
            if names.count(m) > 1 or (key == "spares" and m in a.members):
                raise SystemFileError(f"{where(key)}: drive '{m}' is named twice")
    ref = a.engine
    if ref.endswith(".toml") and not Path(ref).is_absolute():
        ref = str(base / ref)
    try:
        engine, sources = load_engine(ref, {k: str(v) for k, v in a.engine_set.items()} or None, "engine_set")
    except ProfileError as e:
        # An error about an overridden key names it as set by engine_set: point at that line.
        at = "engine_set" if a.engine_set and "engine_set " in str(e) else "engine"
        raise SystemFileError(f"{where(at)}: array '{a.name}': {e}") from None
    failures = []
    for j, f in enumerate(a.fail):
        if f.member not in a.members:
            raise SystemFileError(f"{where('fail', j, 'member')}: '{f.member}' is not a member of '{a.name}'")
        try:
            at = parse_time_ns(f.at, "s")
        except UnitError as e:
            raise SystemFileError(f"{where('fail', j, 'at')}: {e}") from None
        if not 0 <= at < 1 << 63:
            raise SystemFileError(f"{where('fail', j, 'at')}: at = '{f.at}': expected a time from 0 to "
                                  f"{(1 << 63) // 10**9 // 86400 // 365} years")
        failures.append((f.member, at))
    arr = Array(a.name, a.level, a.chunk, engine, sources, [by_name[m] for m in a.members],
                [by_name[m] for m in a.spares], failures, verify_data=a.verify_data,
                chunk_given="chunk" in a.model_fields_set, read_ahead_kb=a.read_ahead_kb)
    _check_array(arr, where, ref)
    return arr


def _check_array(arr: Array, where, engine_ref: str | Path | None = None, engine_option: str = "") -> None:
    """What the core would refuse, said in the system file's terms (or at the engine file's
    line, for an engine value the core cannot read)."""
    from . import _core

    problem = _core.check_device(json.dumps(arr.core()))
    if problem is None:
        return
    key, message = problem
    engine_key = None if key or engine_ref is None else value_key(arr.engine.to_core(arr.nominal_member_bytes), message)
    if engine_key is not None:
        at, name = engine_place(engine_ref, engine_key)
        head = f"{engine_option} {at}" if engine_option else f"{where('engine')}: array '{arr.name}': {at}"
        raise SystemFileError(f"{head}: key '{name}': {message}")
    head, _, rest = key.partition(".")
    loc = {"members": ("members",), "chunk": ("chunk",), "failures": ("fail",), "engine": ("engine",),
           "verify_data": ("verify_data",)}.get(head, ())
    named = "verify_data: " if head == "verify_data" else ""
    raise SystemFileError(f"{where(*loc)}: array '{arr.name}': {named}{message}")


def raid(profile: str | Path, level: int, drives: int, *, chunk: int | str | None = None, engine: str = "md",
         spares: int = 0, profile_set: dict[str, str] | None = None, scale: float | None = None,
         precondition: str | dict[str, Any] | None = None,
         engine_set: dict[str, str] | None = None, verify_data: bool = False) -> System:
    """The system ``--raid LEVEL --drives N`` stands for: N drives of ``profile`` in array md0,
    named as Linux names that profile's drives (sda, sdb, … or nvme0n1, nvme1n1, …), and
    ``spares`` more. ``precondition`` is the members' state; a spare is a new drive, fresh.
    ``chunk``: mdadm's 512 KiB when not given."""
    if level not in LEVELS:
        raise ValueError(f"--raid {level}: expected one of 0, 1, 10, 5, 6")
    if drives < 1:
        raise ValueError(f"--drives {drives}: expected at least one drive")
    if spares < 0:
        raise ValueError(f"--spares {spares}: expected a count >= 0")
    try:
        chunk_bytes = DEFAULT_CHUNK if chunk is None else ArrayEntry._chunk_size(chunk)
    except ValueError as e:
        raise ValueError(f"--chunk: {e}") from None
    parse_precondition(precondition)
    prof, sources, core, eff = device_core(profile, profile_set or None, scale)
    names = _drive_names(core, drives + spares)
    disks = [Drive(n, prof, sources, core, eff, precondition if i < drives else None) for i, n in enumerate(names)]
    try:
        eng, eng_sources = load_engine(engine, engine_set or None)
    except ProfileError as e:
        said = str(e)
        raise ValueError(f"--engine {said}" if said.startswith(str(engine)) else f"--engine {engine}: {said}") from None
    arr = Array("md0", level, chunk_bytes, eng, eng_sources, disks[:drives], disks[drives:], verify_data=verify_data,
                chunk_given=chunk is not None)

    def where(*_key: str) -> str:
        return f"--raid {level} --drives {drives}"

    try:
        _check_array(arr, where, engine, "--engine")
    except SystemFileError as e:
        raise ValueError(str(e)) from None
    return System(disks, origin=f"profile '{profile}' × {drives}", arrays=[arr], strict=False)


def _drive_names(core: dict[str, Any], n: int) -> list[str]:
    """Linux's names for the first ``n`` drives of an interface."""
    if core["interface"]["kind"] == "sata":
        letters = "abcdefghijklmnopqrstuvwxyz"
        out = []
        for i in range(n):
            name, k = "", i
            while True:
                name = letters[k % 26] + name
                k = k // 26 - 1
                if k < 0:
                    break
            out.append(f"sd{name}")
        return out
    return [f"nvme{i}n1" for i in range(n)]


def parse_precondition(value: str | dict[str, Any] | None) -> dict[str, Any]:
    """``none``, ``sequential`` or ``random[:PASSES]`` (default 2 passes of random overwrite)."""
    if value is None:
        return {"kind": "none"}
    if isinstance(value, dict):
        return dict(value)
    kind, colon, arg = str(value).partition(":")
    kind = kind.strip().lower()
    if kind in ("none", "sequential") and not colon:
        return {"kind": kind}
    if kind == "random":
        if colon and not arg.strip():
            # not "random": its 2 passes were taken without a word
            raise ValueError(f"precondition {toml_text(value)}: expected a number of passes after ':', e.g. random:2")
        try:
            passes = float(arg) if colon else 2.0
        except ValueError:
            passes = -1.0
        if not 0 <= passes < float("inf"):
            raise ValueError(f"precondition random:{arg}: expected a finite number of passes >= 0")
        return {"kind": "random", "passes": passes}
    raise ValueError(f"precondition {toml_text(value)}: expected none, sequential or random[:PASSES]")
