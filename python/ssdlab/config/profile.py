"""Device and host profiles.

A profile is a TOML file. Every parameter is written either as a plain value or as
``key = { value = …, source = "…" }``; built-in profiles use the second form for every
parameter (a test enforces it) so each number says where it came from: a datasheet, a seed
measurement, or ``assumed: why``. Unknown keys are errors that name the key.
"""

from __future__ import annotations

import math
import re
from importlib import resources
from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import (BaseModel, BeforeValidator, ConfigDict, Field, ValidationError, ValidationInfo, field_validator,
                      model_validator)

from ..arguments import InputFileError, NotToml, read_text, toml_loads
from ..units import UnitError, parse_rate, parse_size, parse_time_ns
from .tomlpos import locate, toml_text


class ProfileError(ValueError):
    """A profile could not be loaded; the message names the file and the key."""


def _unit(parser):
    def convert(v: Any) -> Any:
        try:
            return parser(v)
        except UnitError as e:
            raise ValueError(str(e)) from None

    return BeforeValidator(convert)


#: the most the core holds in a size or a time (an unsigned 64-bit number)
U64_MAX = 2**64 - 1
Size = Annotated[int, _unit(parse_size), Field(ge=0, le=U64_MAX)]
TimeNs = Annotated[int, _unit(parse_time_ns), Field(ge=0, le=U64_MAX)]
Rate = Annotated[float, _unit(parse_rate), Field(gt=0)]


class _Section(BaseModel):
    # inf and nan are refused where a profile is read (JSON, the core's input, has neither)
    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)


class Interface(_Section):
    kind: Literal["sata", "pcie"]
    gbit_per_s: float | None = Field(default=None, gt=0, description="SATA line rate")
    gen: int | None = Field(default=None, ge=1, le=6, description="PCIe generation")
    lanes: int | None = Field(default=None, description="PCIe lanes")
    efficiency: float = Field(gt=0, le=1, description="payload share after protocol overhead")

    def to_core(self) -> dict[str, Any]:
        if self.kind == "sata":
            if self.gbit_per_s is None:
                raise ValueError("interface.gbit_per_s is required for SATA")
            return {"kind": "sata", "gbit_per_s": self.gbit_per_s, "efficiency": self.efficiency}
        if self.gen is None or self.lanes is None:
            raise ValueError("interface.gen and interface.lanes are required for PCIe")
        return {"kind": "pcie", "gen": self.gen, "lanes": self.lanes, "efficiency": self.efficiency}


class Controller(_Section):
    cores: int = Field(ge=1)
    read_busy: TimeNs
    write_busy: TimeNs
    trim_busy: TimeNs
    flush_busy: TimeNs
    busy_cv: float = Field(default=0.0, ge=0, description="variation of core time per command")
    latency: TimeNs


_BITS = {"slc": 1, "mlc": 2, "tlc": 3, "qlc": 4}


def _nand_only(v: Any) -> Any:
    if v == "in-place":
        raise ValueError('in-place media is a profile kind of its own: kind = "in-place" with a [media] section')
    return v


class Nand(_Section):
    media: Annotated[Literal["nand"], BeforeValidator(_nand_only)] = "nand"
    cell: Literal["slc", "mlc", "tlc", "qlc"]
    program_pages: int = Field(default=1, ge=1, description="pages per plane per program (one-shot)")
    multi_plane_read: bool = Field(
        default=False, description="reads on different planes of a die at one page address share one sense")
    channels: int = Field(ge=1)
    dies_per_channel: int = Field(ge=1)
    planes_per_die: int = Field(ge=1)
    page_size: Size
    pages_per_block: int = Field(ge=1)
    blocks_per_plane: int = Field(ge=1)
    read_time: TimeNs
    program_time: TimeNs
    erase_time: TimeNs
    channel_rate: Rate


class SlcCache(_Section):
    static: Size
    dynamic_max: Size
    read_time: TimeNs
    program_time: TimeNs
    erase_time: TimeNs
    fold: Literal["idle", "pressure"] = "idle"
    idle_after: TimeNs = Field(default=5_000_000)


class Ftl(_Section):
    indirection_unit: Size
    gc_threshold_blocks: int = Field(ge=2)
    gc_policy: Literal["greedy", "cost-benefit"] = "greedy"
    background_gc_blocks: int = Field(default=0, ge=0)
    wear_leveling_spread: int = Field(default=0, ge=0)


class Endurance(_Section):
    rated_tbw: Size | None = None
    warranty_years: float | None = None
    pe_cycles: int | None = None
    dwpd: float | None = None


class Thermal(_Section):
    """Lumped thermal model and throttle (see docs/model.md, "Temperature and throttling")."""

    idle_power: float = Field(ge=0, description="W with no flash work")
    active_power: float = Field(ge=0, description="W with every die working (sustained write)")
    heat_capacity: float = Field(gt=0, description="J/K of the drive")
    thermal_resistance: float = Field(gt=0, description="K/W from the drive to the air (the cooling)")
    ambient_temperature: float = Field(description="air around the drive, °C")
    start_temperature: float | None = Field(default=None, description="°C at the start (default: idle steady state)")
    throttle_temperature: float = Field(description="°C at which the controller throttles")
    resume_temperature: float = Field(description="°C below which it runs at full speed again")
    throttle_level: float = Field(gt=0, le=1, description="share of full-speed flash work while throttled")
    sample_period: TimeNs = Field(default=1_000_000_000, gt=0, description="how often the sensor is read")

    @model_validator(mode="after")
    def _consistent(self) -> "Thermal":
        if self.active_power < self.idle_power:
            raise ValueError("active_power must be at least idle_power")
        if self.resume_temperature >= self.throttle_temperature:
            raise ValueError("resume_temperature must be below throttle_temperature")
        return self

    def to_core(self) -> dict[str, Any]:
        return {
            "idle_w": self.idle_power,
            "active_w": self.active_power,
            "heat_capacity_j_per_k": self.heat_capacity,
            "thermal_resistance_k_per_w": self.thermal_resistance,
            "ambient_c": self.ambient_temperature,
            "start_c": self.start_temperature,
            "throttle_c": self.throttle_temperature,
            "resume_c": self.resume_temperature,
            "throttle_level": self.throttle_level,
            "sample_ns": self.sample_period,
        }


class SsdProfile(_Section):
    """A solid-state drive: what the core simulates, in human units."""

    name: str
    description: str
    kind: Literal["ssd"] = "ssd"
    default_host: str
    capacity: Size
    queue_depth: int = Field(ge=1)
    write_buffer: Size
    #: Capacitors that program the write buffer when power fails: a power cut loses
    #: nothing the drive acknowledged.
    power_loss_protection: bool = False
    interface: Interface
    controller: Controller
    nand: Nand
    ftl: Ftl
    slc_cache: SlcCache | None = None
    endurance: Endurance = Endurance()
    thermal: Thermal | None = None
    # Fidelity knob, not a drive property: simulate this fraction of the flash (smaller
    # blocks, same number of them, same dies, channels, timings and spare). See docs/model.md.
    simulation_scale: float = Field(default=1.0, gt=0, le=1)

    @property
    def dies(self) -> int:
        return self.nand.channels * self.nand.dies_per_channel

    @property
    def raw_bytes(self) -> int:
        n = self.nand
        return self.dies * n.planes_per_die * n.blocks_per_plane * n.pages_per_block * n.page_size

    def scaled_pages_per_block(self, scale: float) -> int:
        """Pages per block of the simulated fraction: blocks shrink, their number stays, so
        the spare ratio and the GC reserve (whole blocks per die) are those of the drive."""
        n = self.nand
        step = math.lcm(n.program_pages, _BITS[n.cell] if self.slc_cache else 1)
        return max(step, round(n.pages_per_block * scale / step) * step)

    def effective_scale(self, scale: float) -> float:
        """The fraction actually simulated (block sizes come in whole program units)."""
        if scale >= 1.0:
            return 1.0
        return self.scaled_pages_per_block(scale) / self.nand.pages_per_block

    def scaled_capacity(self, scale: float) -> int:
        """User capacity of the simulated fraction of the drive (a whole number of IUs)."""
        iu = self.ftl.indirection_unit
        return int(self.capacity * self.effective_scale(scale)) // iu * iu

    def to_core(self, scale: float = 1.0) -> dict[str, Any]:
        """The device description the Rust core deserialises (for `scale` < 1, a fraction of
        the drive)."""
        n = self.nand
        return {
            "kind": "nand-ssd",
            "name": self.name,
            "capacity_bytes": self.scaled_capacity(scale),
            "interface": self.interface.to_core(),
            "queue_depth": self.queue_depth,
            "controller": _controller_core(self.controller),
            "write_buffer_bytes": self.write_buffer,
            "power_loss_protection": self.power_loss_protection,
            "nand": {
                "channels": n.channels,
                "dies_per_channel": n.dies_per_channel,
                "planes_per_die": n.planes_per_die,
                "page_bytes": n.page_size,
                "pages_per_block": self.scaled_pages_per_block(scale) if scale < 1 else n.pages_per_block,
                "blocks_per_plane": n.blocks_per_plane,
                "read_ns": n.read_time,
                "program_ns": n.program_time,
                # A block of 1/k the pages erases in 1/k the time, so erasing costs the same
                # per byte (erase stalls seen by reads get shorter: see docs/model.md).
                "erase_ns": int(n.erase_time * self.effective_scale(scale)),
                "channel_bytes_per_s": int(n.channel_rate),
                "bits_per_cell": _BITS[n.cell],
                "program_pages": n.program_pages,
                "multi_plane_read": n.multi_plane_read,
            },
            "ftl": {
                "iu_bytes": self.ftl.indirection_unit,
                "gc_threshold_blocks": self.ftl.gc_threshold_blocks,
                "gc_policy": self.ftl.gc_policy,
                "background_gc_blocks": self.ftl.background_gc_blocks,
                "wear_leveling_spread": self.ftl.wear_leveling_spread,
            },
            "slc_cache": None if self.slc_cache is None else {
                "static_bytes": int(self.slc_cache.static * self.effective_scale(scale)),
                "dynamic_max_bytes": int(self.slc_cache.dynamic_max * self.effective_scale(scale)),
                "read_ns": self.slc_cache.read_time,
                "program_ns": self.slc_cache.program_time,
                "erase_ns": int(self.slc_cache.erase_time * self.effective_scale(scale)),
                "fold": self.slc_cache.fold,
            },
            "idle_after_ns": self.slc_cache.idle_after if self.slc_cache else 5_000_000,
            "thermal": None if self.thermal is None else self.thermal.to_core(),
        }


def _controller_core(c: Controller) -> dict[str, Any]:
    return {
        "cores": c.cores,
        "read_busy_ns": c.read_busy,
        "write_busy_ns": c.write_busy,
        "trim_busy_ns": c.trim_busy,
        "flush_busy_ns": c.flush_busy,
        "busy_cv": c.busy_cv,
        "latency_ns": c.latency,
    }


class Media(_Section):
    """Media written in place (3D XPoint): dies on channels, one access unit at a time."""

    channels: int = Field(ge=1)
    dies_per_channel: int = Field(ge=1)
    access_unit: Size = Field(description="bytes per media access; addresses stripe over dies in these")
    read_time: TimeNs
    write_time: TimeNs
    channel_rate: Rate


class InPlaceProfile(_Section):
    """A drive whose media is written in place: no pages, blocks, erase, FTL or write buffer."""

    name: str
    description: str
    kind: Literal["in-place"]
    default_host: str
    capacity: Size
    queue_depth: int = Field(ge=1)
    interface: Interface
    controller: Controller
    media: Media
    endurance: Endurance = Endurance()
    thermal: Thermal | None = None

    @property
    def write_buffer(self) -> int:
        """No DRAM buffer: a write completes when the media has it."""
        return 0

    @property
    def simulation_scale(self) -> float:
        """Always simulated whole: in-place media keeps no per-block state to shrink."""
        return 1.0

    @property
    def dies(self) -> int:
        return self.media.channels * self.media.dies_per_channel

    @property
    def raw_bytes(self) -> int:
        """No spare area is modelled: the media holds the user capacity."""
        return self.capacity

    def effective_scale(self, scale: float) -> float:
        return 1.0  # no per-block state: always simulated whole

    def scaled_capacity(self, scale: float) -> int:
        return self.capacity

    def to_core(self, scale: float = 1.0) -> dict[str, Any]:
        m = self.media
        return {
            "kind": "in-place",
            "name": self.name,
            "capacity_bytes": self.capacity,
            "interface": self.interface.to_core(),
            "queue_depth": self.queue_depth,
            "controller": _controller_core(self.controller),
            "media": {
                "channels": m.channels,
                "dies_per_channel": m.dies_per_channel,
                "unit_bytes": m.access_unit,
                "read_ns": m.read_time,
                "write_ns": m.write_time,
                "channel_bytes_per_s": int(m.channel_rate),
            },
            "thermal": None if self.thermal is None else self.thermal.to_core(),
        }


class Mechanics(_Section):
    """A hard disk's spindle, zones and arm (see docs/hdd.md for the model)."""

    rpm: int = Field(ge=3600, le=20000)
    surfaces: int = Field(ge=1, description="recording surfaces (heads)")
    zones: int = Field(ge=1, description="recording zones of equal cylinder counts, outer to inner")
    sector_size: Literal[512, 4096] = Field(description="the medium's sector (4096 on Advanced Format drives)")
    outer_rate: Rate = Field(description="sustained media rate of the outermost zone")
    inner_rate: Rate = Field(description="sustained media rate of the innermost zone")
    track_to_track_seek: TimeNs
    average_seek: TimeNs = Field(description="mean over all seek distances, as datasheets define it")
    full_stroke_seek: TimeNs
    head_switch: TimeNs
    write_settle: TimeNs = Field(description="extra settling of a seek before a write")

    def revolution_ns(self) -> float:
        return 60e9 / self.rpm

    def sectors_per_track(self, rate: float) -> int:
        """Sectors per track that stream at ``rate`` bytes/s, counting a head switch per track
        and a one-cylinder seek per cylinder (what a sustained-rate figure includes)."""
        s = self.surfaces
        cylinder_ns = s * self.revolution_ns() + (s - 1) * self.head_switch + self.track_to_track_seek
        return max(1, round(rate * cylinder_ns / 1e9 / (s * self.sector_size)))


class DiskCache(_Section):
    size: Size
    segments: int = Field(ge=1, description="read segments the cache is cut into")
    read_ahead: Size = Field(description="how far past a media read the idle head goes on reading")
    write_back: bool = Field(description="write cache on (hdparm -W1) or off")
    destage_window: int = Field(ge=1, description="oldest dirty extents considered for the next destage")


class Ncq(_Section):
    reorder: bool = Field(description="reorder queued commands by positioning time")
    max_wait: TimeNs = Field(description="starvation bound: a command waiting longer goes next")


class HddProfile(_Section):
    """A hard disk: zoned platters, a seek curve, an on-board cache, NCQ."""

    name: str
    description: str
    kind: Literal["hdd"]
    default_host: str
    capacity: Size
    queue_depth: int = Field(ge=1, description="NCQ tags (1: no NCQ)")
    interface: Interface
    controller: Controller
    mechanics: Mechanics
    cache: DiskCache
    ncq: Ncq
    endurance: Endurance = Endurance()

    @property
    def write_buffer(self) -> int:
        return self.cache.size if self.cache.write_back else 0

    @property
    def simulation_scale(self) -> float:
        """Always simulated whole: a disk keeps no per-block state."""
        return 1.0

    @property
    def dies(self) -> int:
        return 1  # one head positioner serves every access

    @property
    def raw_bytes(self) -> int:
        return self.capacity

    def effective_scale(self, scale: float) -> float:
        return 1.0

    def scaled_capacity(self, scale: float) -> int:
        return self.capacity

    def to_core(self, scale: float = 1.0) -> dict[str, Any]:
        m = self.mechanics
        return {
            "kind": "hdd",
            "name": self.name,
            "capacity_bytes": self.capacity,
            "interface": self.interface.to_core(),
            "queue_depth": self.queue_depth,
            "controller": _controller_core(self.controller),
            "mechanics": {
                "rpm": m.rpm,
                "surfaces": m.surfaces,
                "zones": m.zones,
                "sector_bytes": m.sector_size,
                "outer_sectors_per_track": m.sectors_per_track(m.outer_rate),
                "inner_sectors_per_track": m.sectors_per_track(m.inner_rate),
                "track_to_track_ns": m.track_to_track_seek,
                "average_seek_ns": m.average_seek,
                "full_stroke_ns": m.full_stroke_seek,
                "head_switch_ns": m.head_switch,
                "write_settle_ns": m.write_settle,
            },
            "cache": {
                "bytes": self.cache.size,
                "segments": self.cache.segments,
                "read_ahead_bytes": self.cache.read_ahead,
                "write_back": self.cache.write_back,
                "destage_window": self.cache.destage_window,
            },
            "ncq": {"reorder": self.ncq.reorder, "max_wait_ns": self.ncq.max_wait},
        }


DeviceProfile = Annotated[SsdProfile | InPlaceProfile | HddProfile, Field(discriminator="kind")]



class FileCosts(_Section):
    """CPU time of file operations on one of the host's cores (the core's FileCosts)."""

    syscall: TimeNs = Field(description="entering and leaving the kernel for a file call")
    page_copy: TimeNs = Field(description="copying a 4 KiB page to or from the page cache")
    create: TimeNs = Field(description="creating a file (inode, directory entry, journal)")
    unlink: TimeNs = Field(description="deleting a file")
    lookup: TimeNs = Field(description="a stat or open of a cached inode")
    readdir_entry: TimeNs = Field(description="readdir, per entry returned")
    alloc: TimeNs = Field(description="allocating one extent")
    # Read, then said to be ignored (HOST_UNMODELLED): the file layer charges no CPU per bio.
    bio: TimeNs | None = Field(default=None, description="not modelled: building, submitting and completing one bio")

    def to_core(self) -> dict[str, Any]:
        return {"syscall_ns": self.syscall, "page_copy_ns": self.page_copy, "create_ns": self.create,
                "unlink_ns": self.unlink, "lookup_ns": self.lookup, "readdir_entry_ns": self.readdir_entry,
                "alloc_ns": self.alloc}


class HostMemory(_Section):
    """The host's RAM, CPUs and kernel defaults: what file workloads need (page cache, dirty
    limits, the CPUs' busy, iowait and load average)."""

    era: Literal["2008", "today"] = Field(description="whose kernel defaults: 2.6.2x of 2008, or today's")
    ram: Size = Field(description="RAM")
    reserved: Size = Field(description="RAM the kernel and applications keep (not page cache)")
    cpus: int = Field(ge=1, description="logical CPUs")
    dirty_ratio: int | None = Field(default=None, ge=0, le=100, description="vm.dirty_ratio, %")
    dirty_background_ratio: int | None = Field(default=None, ge=0, le=100, description="vm.dirty_background_ratio, %")
    dirty_expire: TimeNs = Field(default=30_000_000_000, description="vm.dirty_expire_centisecs")
    dirty_writeback: TimeNs = Field(default=5_000_000_000, description="vm.dirty_writeback_centisecs")
    read_ahead_kb: int = Field(default=128, ge=0, description="a block queue's read_ahead_kb")
    filesystem: Literal["ext3", "ext4"] | None = Field(
        default=None, description="the file system made when a run on files names none (default: the era's, "
        "ext3 in 2008, ext4 today), with the era's mke2fs defaults")
    costs: FileCosts

    @model_validator(mode="after")
    def _sane(self) -> "HostMemory":
        if self.ram <= self.reserved + (16 << 20):
            raise ValueError(f"ram {self.ram} leaves no page cache beside the {self.reserved} bytes reserved")
        return self

    def to_core(self) -> dict[str, Any]:
        return {"era": self.era, "ram_bytes": self.ram, "reserved_bytes": self.reserved, "cpus": self.cpus,
                "dirty_ratio": self.dirty_ratio, "dirty_background_ratio": self.dirty_background_ratio,
                "dirty_expire_centisecs": self.dirty_expire // 10_000_000,
                "dirty_writeback_centisecs": self.dirty_writeback // 10_000_000,
                "read_ahead_kb": self.read_ahead_kb, "costs": self.costs.to_core()}


class HostProfile(_Section):
    """The machine running the workload: its per-I/O software time and tick rate, and (for
    file workloads) its memory, CPUs and kernel."""

    name: str
    description: str
    kind: Literal["host"] = "host"
    io_overhead: TimeNs
    io_overhead_cv: float = Field(ge=0)
    # Parts of io_overhead: the submit call (fio's slat) and the way from a completion to its
    # reap (in fio's clat); the rest is between reaps. None: all in the submit call, no reap.
    submit: TimeNs | None = None
    reap: TimeNs | None = None
    hz: int = Field(ge=1)
    memory: HostMemory | None = None

    @model_validator(mode="after")
    def _parts(self) -> "HostProfile":
        submit, reap = self.submit or 0, self.reap or 0
        if submit + reap > self.io_overhead:
            raise ValueError(f"submit ({submit} ns) and reap ({reap} ns) are parts of io_overhead"
                             f" ({self.io_overhead} ns): together at most that")
        return self

    def default_filesystem(self) -> tuple[str, str]:
        """The file system a run on files gets when it names none, and why: the profile's
        ``memory.filesystem``, else its era's (ext3 on a 2008 kernel, ext4 today)."""
        assert self.memory is not None, "only a host with memory runs on files"
        if self.memory.filesystem is not None:
            return self.memory.filesystem, "its memory.filesystem"
        kind = "ext3" if self.memory.era == "2008" else "ext4"
        return kind, f"the default of its era, {self.memory.era}"

    def to_core(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "io_overhead_ns": self.io_overhead,
            "io_overhead_cv": self.io_overhead_cv,
            "submit_ns": self.submit,
            "reap_ns": self.reap,
            "hz": self.hz,
            "memory": None if self.memory is None else self.memory.to_core(),
        }


class MdEngine(_Section):
    """Linux md's RAID 4/5/6 stripe handling: the stripe cache and the threads working it."""

    name: str
    description: str
    kind: Literal["md"] = "md"
    stripe_cache_size: int = Field(ge=17, le=32768, description="stripe heads (4 KiB per member each)")
    stripe_cache_max: int | None = Field(
        default=None, ge=17, le=1 << 20,
        description="most heads the cache grows to when requests starve (md since Linux 4.1); none: no growth")
    group_thread_cnt: int = Field(ge=0, le=1024, description="stripe threads besides raid5d")
    stripe_head_cpu: TimeNs = Field(description="thread time per stripe head, parity aside")
    parity_rate: Rate = Field(description="parity computation over source bytes, one core")
    sync_speed_min: Rate = Field(description="rebuild speed below which md never yields, per member")
    sync_speed_max: Rate = Field(description="rebuild speed cap per member")
    sync_wait_sleep: TimeNs = Field(
        default=0, ge=0, le=1_000_000_000,
        description="the sync thread's sleep after it waited for a stripe head (one jiffy); 0: none")
    bitmap: Literal["auto", "internal", "none"] = Field(
        default="auto", description="write-intent bitmap; auto: internal on members over 100 GiB, as mdadm creates")
    bitmap_chunk: Size = Field(default=64 << 20, gt=0, description="member bytes per bitmap bit")
    bitmap_delay: TimeNs = Field(default=5_000_000_000, gt=0, description="bitmap daemon period")

    @field_validator("stripe_cache_max")
    @classmethod
    def _grows(cls, v: int | None, info: ValidationInfo) -> int | None:
        size = info.data.get("stripe_cache_size")
        if v is not None and size is not None and v < size:
            raise ValueError(f"{v}: expected at least stripe_cache_size ({size}); the cache grows, never below it")
        return v

    @field_validator("bitmap_chunk")
    @classmethod
    def _power_of_two(cls, v: int) -> int:
        if v < 512 or v & (v - 1):
            raise ValueError(f"md takes a power of two of at least 512 bytes, got {v}")
        return v

    def bitmap_chunk_bytes(self, member_bytes: float | None) -> int:
        """The bitmap's chunk for members of ``member_bytes`` (as the real drives are, not as
        scaled), 0 for none. mdadm's Create.c adds an internal bitmap when each member
        offers more than 100 GiB."""
        if self.bitmap == "none" or (self.bitmap == "auto" and (member_bytes or 0) <= 100 << 30):
            return 0
        return self.bitmap_chunk

    def to_core(self, member_bytes: float | None = None) -> dict[str, Any]:
        return {
            "kind": "md",
            "stripe_cache_size": self.stripe_cache_size,
            "stripe_cache_max": self.stripe_cache_max or 0,
            "group_thread_cnt": self.group_thread_cnt,
            "stripe_head_ns": self.stripe_head_cpu,
            "parity_bytes_per_s": self.parity_rate,
            "sync_speed_min_bytes_per_s": self.sync_speed_min,
            "sync_speed_max_bytes_per_s": self.sync_speed_max,
            "sync_wait_sleep_ns": self.sync_wait_sleep,
            "bitmap_chunk_bytes": self.bitmap_chunk_bytes(member_bytes),
            "bitmap_daemon_sleep_ns": self.bitmap_delay,
        }


class StreamingEngine(_Section):
    """A streaming RAID engine: parity on many cores, no stripe cache, a rebuild of large
    units with a set share of each member's time (bytes dispatched)."""

    name: str
    description: str
    kind: Literal["streaming"] = "streaming"
    cores: int = Field(ge=1, le=4096)
    request_cpu: TimeNs
    parity_rate: Rate
    rebuild_unit: Size = Field(gt=0)
    rebuild_depth: int = Field(ge=1)
    rebuild_share: float = Field(gt=0, le=1)
    # Defaults, so that engine files written before these keys still load.
    rebuild_depth_beside_host: int = Field(default=1, ge=1, description="rebuild commands in a drive the host "
                                           "has no I/O at while it uses the array")
    host_idle_after: TimeNs = Field(default=8_000_000, description="the array is idle once the host has had no "
                                    "I/O in it this long")

    def to_core(self, member_bytes: float | None = None) -> dict[str, Any]:
        return {
            "kind": "streaming",
            "cores": self.cores,
            "request_ns": self.request_cpu,
            "parity_bytes_per_s": self.parity_rate,
            "rebuild_unit_bytes": self.rebuild_unit,
            "rebuild_depth": self.rebuild_depth,
            "rebuild_share": self.rebuild_share,
            "rebuild_depth_beside_host": self.rebuild_depth_beside_host,
            "host_idle_after_ns": self.host_idle_after,
        }


class HwRaidEngine(_Section):
    """A hardware RAID controller: command and data-path ceilings, a battery-backed write-back
    cache destaged a set number of stripes at a time, parity on the controller."""

    name: str
    description: str
    kind: Literal["hwraid"] = "hwraid"
    cache: Size = Field(gt=0)
    command_cpu: TimeNs
    member_command_cpu: TimeNs
    data_rate: Rate
    parity_rate: Rate
    destage_depth: int = Field(ge=1)
    member_queue_depth: int = Field(ge=1)
    # Host commands the array takes at once (its SCSI disk's queue depth); the rest wait in
    # the host's block layer.
    queue_depth: int = Field(ge=1)
    # What a destage rewrites of a partly written strip: its dirty sectors, or the whole strip.
    rmw_unit: Literal["sector", "strip"] = "sector"

    def to_core(self, member_bytes: float | None = None) -> dict[str, Any]:
        return {
            "kind": "hwraid",
            "cache_bytes": self.cache,
            "command_ns": self.command_cpu,
            "member_command_ns": self.member_command_cpu,
            "data_bytes_per_s": int(self.data_rate),
            "parity_bytes_per_s": self.parity_rate,
            "destage_depth": self.destage_depth,
            "member_queue_depth": self.member_queue_depth,
            "queue_depth": self.queue_depth,
            "rmw_unit": self.rmw_unit,
        }


EngineProfile = Annotated[MdEngine | StreamingEngine | HwRaidEngine, Field(discriminator="kind")]


# --- loading -------------------------------------------------------------------------------

def _split_sources(table: dict[str, Any], prefix: str = "") -> tuple[dict[str, Any], dict[str, str]]:
    """Strip ``{value, source}`` wrappers: plain values for the model, sources by dotted key."""
    values: dict[str, Any] = {}
    sources: dict[str, str] = {}
    for key, v in table.items():
        path = f"{prefix}{key}"
        if isinstance(v, dict) and "value" in v and set(v) <= {"value", "source"}:
            values[key] = v["value"]
            if "source" in v:
                sources[path] = str(v["source"])
        elif isinstance(v, dict):
            values[key], sub = _split_sources(v, path + ".")
            sources.update(sub)
        else:
            values[key] = v
    return values, sources


def place(origin: str, text: str | None, loc: tuple, overrides: Mapping[str, str] | None = None,
          set_by: str = "--profile-set") -> str:
    """Where a key is, for an error message: ``file.toml:LINE`` for a file, ``profile 'x'
    (line LINE)`` for a built-in, or the override that set it (``set_by``: the option or
    table that carried it, ``--profile-set`` unless the caller says otherwise)."""
    key = ".".join(str(p) for p in loc)
    if overrides and key in overrides:
        return f"{origin}, {set_by} {key}={overrides[key]}"
    line = locate(text, tuple(loc)) if text else None
    at = origin if line is None else (
        f"{origin}:{line}" if not origin.startswith(("profile '", "host '", "engine '")) else f"{origin} (line {line})")
    # A table's rule broken with one of its keys overridden (``--host-set mem=0`` against the
    # file's memory table): the override is named beside the table's place.
    inside = [k for k in overrides or {} if key and k.startswith(key + ".")]
    if inside:
        return f"{at}, with {set_by} " + ", ".join(f"{k}={overrides[k]}" for k in inside)  # type: ignore[index]
    return at


def _describe(err: ValidationError, origin: str, text: str | None = None,
              overrides: Mapping[str, str] | None = None, set_by: str = "--profile-set") -> str:
    errors = err.errors()
    # A misspelt key is both unknown and missing: name the one written, and the one meant.
    e = next((x for x in errors if x["type"] == "extra_forbidden"), errors[0])
    loc = tuple(p for p in e["loc"] if not (isinstance(p, str) and p.startswith("function-")))
    key = ".".join(str(p) for p in loc)
    where = place(origin, text, loc, overrides, set_by)
    if e["type"] == "extra_forbidden":
        meant = [x["loc"][-1] for x in errors if x["type"] == "missing" and x["loc"][:-1] == e["loc"][:-1]]
        hint = f" (expected '{meant[0]}')" if meant else ""
        return f"{where}: unknown key '{key}'{hint}"
    if e["type"] == "missing":
        return f"{where}: missing key '{key}'"
    msg = e["msg"].removeprefix("Value error, ")
    if e["type"] == "finite_number":
        msg = f"expected a finite number, got {toml_text(e['input'])}"
    elif e["type"] == "less_than_equal" and e["ctx"]["le"] == U64_MAX:
        msg = f"{e['input']:g} is more than the core holds (at most {U64_MAX}, 2^64 - 1)"
    elif e["type"] in _BOUND:
        # pydantic's "Input should be less than or equal to 100"
        word, bound = _BOUND[e["type"]]
        msg = f"{toml_text(e['input'])}: expected {word} {e['ctx'][bound]}"
    elif e["type"] in _EXPECTED_TYPE:
        # pydantic's "Input should be a valid integer": the value and what was expected
        msg = f"{toml_text(e['input'])}: expected {_EXPECTED_TYPE[e['type']]}"
    return f"{where}: key '{key}': {msg}" if key else f"{where}: {msg}"


_BOUND = {"less_than_equal": ("at most", "le"), "less_than": ("less than", "lt"),
          "greater_than_equal": ("at least", "ge"), "greater_than": ("more than", "gt")}

_EXPECTED_TYPE = {
    "string_type": "a text in quotes", "int_type": "a whole number", "int_parsing": "a whole number",
    "int_from_float": "a whole number", "float_type": "a number", "float_parsing": "a number",
    "bool_type": "true or false", "bool_parsing": "true or false", "list_type": "a list, as [...]",
    "dict_type": "a table", "model_type": "a table",
}


def _builtin_dir(sub: str = "") -> resources.abc.Traversable:
    base = resources.files("ssdlab") / "profiles"
    return base / sub if sub else base


def profile_names() -> list[str]:
    return sorted(p.name[:-5] for p in _builtin_dir().iterdir() if p.name.endswith(".toml"))


def engine_names() -> list[str]:
    return sorted(p.name[:-5] for p in _builtin_dir("engines").iterdir() if p.name.endswith(".toml"))


# Generic engine names that stand for a built-in profile: `hwraid` is the hardware controller
# ssdlab ships (`--engine md|streaming|hwraid`, as md and streaming name theirs).
ENGINE_ALIASES = {"hwraid": "adaptec-6805"}


def _read_engine(name_or_path: str | Path) -> tuple[str, str]:
    name = ENGINE_ALIASES.get(str(name_or_path), name_or_path)
    names = engine_names() + [f"{a} (= {b})" for a, b in ENGINE_ALIASES.items()]
    return _read(name, _builtin_dir("engines"), names, "engine")


def host_names() -> list[str]:
    return sorted(p.name[:-5] for p in _builtin_dir("hosts").iterdir() if p.name.endswith(".toml"))


def _read(name_or_path: str | Path, builtin: resources.abc.Traversable, names: list[str], what: str):
    p = Path(name_or_path)
    if p.suffix == ".toml" or p.exists():
        if p.is_dir():
            raise ProfileError(f"{p}: is a directory, not {'an' if what[0] in 'aeiou' else 'a'} {what} file")
        if not p.is_file():
            raise ProfileError(f"{p}: no such {what} file")
        try:
            return str(p), read_text(p)
        except InputFileError as e:
            raise ProfileError(str(e)) from None
    f = builtin / f"{name_or_path}.toml"
    if not f.is_file():
        raise ProfileError(f"unknown {what} '{name_or_path}' (built-in: {', '.join(names)})")
    return f"{what} '{name_or_path}'", f.read_text()


def _override_value(text: str) -> Any:
    """A command-line value as TOML would read it (numbers, booleans, quoted strings);
    anything else is a plain string (``cost-benefit``, ``16KiB``)."""
    try:
        return toml_loads(f"v = {text}")["v"]
    except NotToml:
        return text


def _apply_overrides(origin: str, values: dict[str, Any], sources: dict[str, str],
                     overrides: Mapping[str, str]) -> None:
    """Set dotted keys (``thermal.ambient_temperature``) over the file's values."""
    for key, text in overrides.items():
        *parents, leaf = key.split(".")
        table = values
        for i, part in enumerate(parents):
            nxt = table.setdefault(part, {})
            if not isinstance(nxt, dict):
                raise ProfileError(f"{origin}: override '{key}': '{'.'.join(parents[:i + 1])}' is a value, not a section")
            table = nxt
        if isinstance(table.get(leaf), dict):
            raise ProfileError(f"{origin}: override '{key}': that is a section; name one of its keys")
        table[leaf] = _override_value(text)
        sources[key] = f"override: {key}={text}"


def _device_model(values: dict[str, Any]) -> type[BaseModel]:
    """The profile model a device profile's ``kind`` names (a NAND SSD unless it says otherwise)."""
    return {"in-place": InPlaceProfile, "hdd": HddProfile}.get(values.get("kind"), SsdProfile)


def _parse(origin: str, text: str, model, overrides: Mapping[str, str] | None = None,
           set_by: str = "--profile-set"):
    try:
        data = toml_loads(text)
    except NotToml as e:
        raise ProfileError(f"{origin}: {e}") from None
    values, sources = _split_sources(data)
    sections = {k for k, v in values.items() if isinstance(v, dict)}
    if overrides:
        _apply_overrides(origin, values, sources, overrides)
    if not isinstance(model, type):
        model = model(values)
    try:
        return model.model_validate(values), sources
    except ValidationError as e:
        made = _made_section(e, sections, overrides or {})
        if made is not None:
            key, section, missing = made
            raise ProfileError(f"{origin}, {set_by} {key}={overrides[key]}: the profile has no [{section}] section "
                               f"to change (it needs {', '.join(missing)} too); use a profile that has one, or "
                               f"write the whole section in a profile file") from None
        raise ProfileError(_describe(e, origin, text, overrides, set_by)) from None


def _made_section(err: ValidationError, sections: set[str],
                  overrides: Mapping[str, str]) -> tuple[str, str, list[str]] | None:
    """An override of a key in a section the profile does not have (a thermal key on a drive
    without a thermal model), which leaves the section's other keys missing: (the override,
    the section, the keys missing), else None."""
    missing = [tuple(x["loc"]) for x in err.errors() if x["type"] == "missing" and len(x["loc"]) > 1]
    for key in overrides:
        section = key.split(".", 1)[0]
        if "." in key and section not in sections:
            keys = [".".join(map(str, loc[1:])) for loc in missing if loc[0] == section]
            if keys:
                return key, section, keys
    return None


def load_profile(name_or_path: str | Path,
                 overrides: Mapping[str, str] | None = None) -> tuple[SsdProfile | InPlaceProfile | HddProfile, dict[str, str]]:
    """A device profile (built-in name or TOML path) and the source of each parameter.

    ``overrides`` sets dotted keys over the file, e.g. ``{"thermal.ambient_temperature": "40"}``
    (the cooling of the machine at hand); their source says they were overridden."""
    origin, text = _read(name_or_path, _builtin_dir(), profile_names(), "profile")
    return _parse(origin, text, _device_model, overrides)


def load_host(name_or_path: str | Path, overrides: Mapping[str, str] | None = None,
              set_by: str = "--host-set") -> tuple[HostProfile, dict[str, str]]:
    """A host profile (built-in name or TOML path) and the source of each parameter;
    ``overrides`` set its dotted keys (``{"memory.ram": "8GiB"}``), errors naming them as set
    by ``set_by``."""
    origin, text = _read(name_or_path, _builtin_dir("hosts"), host_names(), "host")
    return _parse(origin, text, HostProfile, overrides, set_by)


#: host profile keys read but not modelled -> what is not: said once a run, at the key's place
HOST_UNMODELLED = {("memory", "costs", "bio"): "the file layer charges no CPU per bio"}


def host_unmodelled(name_or_path: str | Path, host: HostProfile, overrides: Mapping[str, str] | None = None,
                    set_by: str = "--host-set") -> list[str]:
    """A warning for each key of ``host`` (loaded from ``name_or_path`` with ``overrides``)
    that is read but changes nothing: ``FILE:LINE: KEY is parsed but not modelled: WHY``."""
    out = []
    for loc, why in HOST_UNMODELLED.items():
        v: Any = host
        for k in loc:
            v = getattr(v, k, None)
        if v is not None:
            origin, text = _read(name_or_path, _builtin_dir("hosts"), host_names(), "host")
            key = ".".join(loc)
            out.append(f"{place(origin, text, loc, overrides, set_by)}: {key} is parsed but not modelled: {why}; ignored")
    return out


# The core's host keys -> the host profile's own.
_HOST_CORE_KEYS = {"name": "name", "io_overhead_ns": "io_overhead", "io_overhead_cv": "io_overhead_cv", "hz": "hz",
                   "submit_ns": "submit", "reap_ns": "reap",
                   "memory.ram_bytes": "memory.ram", "memory.reserved_bytes": "memory.reserved", "memory.cpus": "memory.cpus"}


def host_places(name_or_path: str | Path) -> dict[str, list[str]]:
    """For each key of the core's host description (``host.hz``): where the host profile sets
    it (``file.toml:LINE``) and its name there, so that an error the core finds in the host
    names the file."""
    origin, text = _read(name_or_path, _builtin_dir("hosts"), host_names(), "host")
    return {f"host.{core}": [place(origin, text, tuple(key.split("."))), key] for core, key in _HOST_CORE_KEYS.items()}


def load_engine(name_or_path: str | Path, overrides: Mapping[str, str] | None = None,
                set_by: str = "--engine-set") -> tuple[EngineProfile, dict[str, str]]:
    """An array engine profile (built-in name such as ``md``, or a TOML path) and its sources;
    ``overrides`` set its keys, e.g. ``{"stripe_cache_size": "4096"}``; errors name them as set
    by ``set_by`` (the CLI's ``--engine-set``, or a system file's ``engine_set``)."""
    origin, text = _read_engine(name_or_path)
    return _parse(origin, text, lambda values: _ENGINES.get(values.get("kind"), MdEngine), overrides, set_by)


_ENGINES = {"md": MdEngine, "streaming": StreamingEngine, "hwraid": HwRaidEngine}


def profile_text(name_or_path: str | Path) -> str:
    """The profile's TOML as written (for ``ssdlab profiles show``)."""
    return _read(name_or_path, _builtin_dir(), profile_names(), "profile")[1]


def builtin_text(name_or_path: str | Path) -> str:
    """A device profile's TOML, or a built-in host's or RAID engine's of that name."""
    try:
        return profile_text(name_or_path)
    except ProfileError:
        if str(name_or_path) in ENGINE_ALIASES:
            return _read_engine(name_or_path)[1]
        for sub, names, what in (("hosts", host_names(), "host"), ("engines", engine_names(), "engine")):
            if str(name_or_path) in names:
                return _read(name_or_path, _builtin_dir(sub), names, what)[1]
        raise


# --- the core's view of a profile -----------------------------------------------------------

# Keys of the core's device description (resolved units) -> the profile's own keys, so that an
# error the core finds names the key as the profile file writes it.
_CORE_KEYS = {
    "capacity_bytes": "capacity",
    "write_buffer_bytes": "write_buffer",
    "controller.read_busy_ns": "controller.read_busy",
    "controller.write_busy_ns": "controller.write_busy",
    "controller.trim_busy_ns": "controller.trim_busy",
    "controller.flush_busy_ns": "controller.flush_busy",
    "controller.latency_ns": "controller.latency",
    "nand.page_bytes": "nand.page_size",
    "nand.read_ns": "nand.read_time",
    "nand.program_ns": "nand.program_time",
    "nand.erase_ns": "nand.erase_time",
    "nand.channel_bytes_per_s": "nand.channel_rate",
    "nand.bits_per_cell": "nand.cell",
    "ftl.iu_bytes": "ftl.indirection_unit",
    "slc_cache.static_bytes": "slc_cache.static",
    "slc_cache.dynamic_max_bytes": "slc_cache.dynamic_max",
    "slc_cache.read_ns": "slc_cache.read_time",
    "slc_cache.program_ns": "slc_cache.program_time",
    "slc_cache.erase_ns": "slc_cache.erase_time",
    "idle_after_ns": "slc_cache.idle_after",
    "media.unit_bytes": "media.access_unit",
    "media.read_ns": "media.read_time",
    "media.write_ns": "media.write_time",
    "media.channel_bytes_per_s": "media.channel_rate",
    "mechanics.sector_bytes": "mechanics.sector_size",
    "mechanics.outer_sectors_per_track": "mechanics.outer_rate",
    "mechanics.inner_sectors_per_track": "mechanics.inner_rate",
    "mechanics.track_to_track_ns": "mechanics.track_to_track_seek",
    "mechanics.average_seek_ns": "mechanics.average_seek",
    "mechanics.full_stroke_ns": "mechanics.full_stroke_seek",
    "mechanics.head_switch_ns": "mechanics.head_switch",
    "mechanics.write_settle_ns": "mechanics.write_settle",
    "cache.bytes": "cache.size",
    "cache.read_ahead_bytes": "cache.read_ahead",
    "ncq.max_wait_ns": "ncq.max_wait",
    "thermal.idle_w": "thermal.idle_power",
    "thermal.active_w": "thermal.active_power",
    "thermal.heat_capacity_j_per_k": "thermal.heat_capacity",
    "thermal.thermal_resistance_k_per_w": "thermal.thermal_resistance",
    "thermal.ambient_c": "thermal.ambient_temperature",
    "thermal.start_c": "thermal.start_temperature",
    "thermal.throttle_c": "thermal.throttle_temperature",
    "thermal.resume_c": "thermal.resume_temperature",
    "thermal.sample_ns": "thermal.sample_period",
}


# The same for RAID engines (all kinds).
_ENGINE_CORE_KEYS = {
    "stripe_head_ns": "stripe_head_cpu",
    "parity_bytes_per_s": "parity_rate",
    "sync_speed_min_bytes_per_s": "sync_speed_min",
    "sync_speed_max_bytes_per_s": "sync_speed_max",
    "request_ns": "request_cpu",
    "rebuild_unit_bytes": "rebuild_unit",
    "cache_bytes": "cache",
    "command_ns": "command_cpu",
    "member_command_ns": "member_command_cpu",
    "data_bytes_per_s": "data_rate",
}


def value_key(core: Mapping[str, Any], message: str) -> str | None:
    """The dotted key of ``core`` holding the value a core error quotes (``integer
    `5000000000`, expected u32``), when exactly one key holds it: the core names no key for a
    value it cannot read at all."""
    m = re.search(r"`([^`]+)`", message)
    if m is None:
        return None
    try:
        quoted = float(m.group(1))  # a whole number past u64 reaches the core as a float
    except ValueError:
        return None
    hits = []

    def walk(v: Any, path: str) -> None:
        if isinstance(v, Mapping):
            for k, item in v.items():
                walk(item, f"{path}.{k}" if path else str(k))
        elif isinstance(v, (int, float)) and not isinstance(v, bool) and float(v) == quoted:
            hits.append(path)

    walk(core, "")
    return hits[0] if len(hits) == 1 else None


def engine_place(name_or_path: str | Path, core_key: str) -> tuple[str, str]:
    """Where an engine profile sets the value behind a key of its core description, and the
    profile's name for that key."""
    origin, text = _read_engine(name_or_path)
    key = _ENGINE_CORE_KEYS.get(core_key, core_key)
    return place(origin, text, (key,)), key


def profile_key(core_key: str) -> str:
    """The profile key behind a key of the core's device description."""
    return _CORE_KEYS.get(core_key, core_key)


def device_core(name_or_path: str | Path, overrides: Mapping[str, str] | None = None,
                scale: float | None = None) -> tuple[SsdProfile | InPlaceProfile | HddProfile, dict[str, str], dict[str, Any], float]:
    """A profile, its sources, the device description the core runs (checked by the core,
    whose errors name the profile's key, its line and the overrides that led to it), and the
    fraction of the drive simulated (``scale`` defaults to the profile's own)."""
    import json

    from .. import _core

    origin, text = _read(name_or_path, _builtin_dir(), profile_names(), "profile")
    prof, sources = _parse(origin, text, _device_model, overrides)
    scale = prof.simulation_scale if scale is None else scale
    if not 0 < scale <= 1:
        raise ProfileError(f"{origin}: scale {scale}: expected a fraction in (0, 1]")
    core = prof.to_core(scale)
    problem = _core.check_device(json.dumps(core))
    if problem is not None:
        core_key, message = problem
        key = profile_key(core_key or value_key(core, message) or "")
        where = place(origin, text, tuple(key.split(".")), overrides) if key else origin
        after = ""
        if overrides and key not in overrides:
            after = " (with --profile-set " + ", ".join(f"{k}={v}" for k, v in overrides.items()) + ")"
        named = f"key '{key}': " if key else ""  # a value the core could not even read names no key
        raise ProfileError(f"{where}: {named}{message}{after}")
    return prof, sources, core, prof.effective_scale(scale)
